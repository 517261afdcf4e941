/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ternary tables: entries packed at indices 0..n-1 in priority order, higher priority at
 * lower indices (the lowest matching index wins in hardware), equal priorities in
 * insertion order. Inserting or deleting shifts the entries after the position by one,
 * each shift copying an entry before its old index is overwritten, so a lookup during the
 * update sees every rule in its order (one of them twice at worst) and answers as before
 * or as after.
 *
 * With per-entry counters, each shift is a move of its own: ZERO the destination, copy,
 * invalidate the old index (the copy is at the adjacent index, so no rule goes missing),
 * then read the old index's final count and carry it along (counters.c).
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

struct ternary_shadow {
	unsigned used;
	uint32_t *value; /* size * key_words, little-endian word order as in hardware */
	uint32_t *mask;
	uint32_t *data;  /* size * data_words */
	uint32_t *priority;
	uint8_t *action;
};

static struct ternary_shadow *shadow(const struct matcha_table *t) { return t->state; }

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	(void)w; /* a ternary descriptor has nothing beyond the common words */
	struct ternary_shadow *s = calloc(1, sizeof *s);
	if (!s)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for ternary table %u", t->index);
	t->state = s;
	size_t n = t->info.size;
	s->value = calloc(n * t->key_words, sizeof *s->value);
	s->mask = calloc(n * t->key_words, sizeof *s->mask);
	s->data = calloc(n * (t->data_words ? t->data_words : 1), sizeof *s->data);
	s->priority = calloc(n, sizeof *s->priority);
	s->action = calloc(n, 1);
	if (!s->value || !s->mask || !s->data || !s->priority || !s->action)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the shadow of ternary table %u "
				   "(%u entries)", t->index, t->info.size);
	return 0;
}

static void reset(struct matcha_table *t)
{
	shadow(t)->used = 0;
}

static void release(struct matcha_table *t)
{
	struct ternary_shadow *s = shadow(t);
	if (!s)
		return;
	free(s->value);
	free(s->mask);
	free(s->data);
	free(s->priority);
	free(s->action);
	free(s);
	t->state = NULL;
}

static uint32_t *value_at(const struct matcha_table *t, uint32_t i)
{
	return shadow(t)->value + (size_t)i * t->key_words;
}

static uint32_t *mask_at(const struct matcha_table *t, uint32_t i)
{
	return shadow(t)->mask + (size_t)i * t->key_words;
}

static uint32_t *data_at(const struct matcha_table *t, uint32_t i)
{
	return shadow(t)->data + (size_t)i * t->data_words;
}

/* Writes entry `i` of the hardware from the given fields, then the shadow. */
static int write_index(matcha_dev *dev, struct matcha_table *t, uint32_t i,
		       const uint32_t *value, const uint32_t *mask, uint32_t priority,
		       uint8_t action_id, const uint32_t *data)
{
	struct ternary_shadow *s = shadow(t);
	struct staged_entry e = {
		.flags = MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id),
		.key = value,
		.mask = mask,
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
		.has_priority = true,
		.priority = priority,
	};
	int rc = matcha_window_write(dev, t, i, &e);
	if (rc)
		return rc;
	memmove(value_at(t, i), value, t->key_words * sizeof *value);
	memmove(mask_at(t, i), mask, t->key_words * sizeof *mask);
	memmove(data_at(t, i), data, t->data_words * sizeof *data);
	s->priority[i] = priority;
	s->action[i] = action_id;
	return 0;
}

static int invalidate_index(matcha_dev *dev, struct matcha_table *t, uint32_t i)
{
	struct staged_entry e = { .flags = 0 };
	return matcha_window_write(dev, t, i, &e);
}

/*
 * Moves entry `from` to the adjacent index `to`. Without counters, the copy alone (the
 * old index is overwritten by the next step). With counters `to` is free: ZERO it, copy,
 * invalidate `from`, carry the final count of `from` along.
 */
static int move_index(matcha_dev *dev, struct matcha_table *t, uint32_t from, uint32_t to)
{
	struct ternary_shadow *s = shadow(t);
	int rc;
	if ((rc = matcha_counter_zero(dev, t, to)) ||
	    (rc = write_index(dev, t, to, value_at(t, from), mask_at(t, from), s->priority[from],
			      s->action[from], data_at(t, from))))
		return rc;
	if (!t->carried)
		return 0;
	if ((rc = invalidate_index(dev, t, from)))
		return rc;
	return matcha_counter_carry(dev, t, from, to);
}

/* Checks value and mask and converts them to word order. */
static int value_and_mask(matcha_dev *dev, struct matcha_table *t, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t *value_words,
			  uint32_t *mask_words)
{
	int rc;
	if ((rc = matcha_value_to_words(dev, t, "value", value, key_bits, t->info.key_bits,
					value_words)) ||
	    (rc = matcha_value_to_words(dev, t, "mask", mask, key_bits, t->info.key_bits,
					mask_words)))
		return rc;
	for (unsigned w = 0; w < t->key_words; w++)
		if (value_words[w] & ~mask_words[w])
			return matcha_fail(dev, MATCHA_EINVAL, "value has bits set outside the "
					   "mask (word %u: value 0x%08x, mask 0x%08x)", w,
					   (unsigned)value_words[w], (unsigned)mask_words[w]);
	return 0;
}

static int64_t find(const struct matcha_table *t, const uint32_t *value, const uint32_t *mask,
		    uint32_t priority)
{
	size_t bytes = t->key_words * sizeof *value;
	for (uint32_t i = 0; i < shadow(t)->used; i++)
		if (shadow(t)->priority[i] == priority && !memcmp(value_at(t, i), value, bytes) &&
		    !memcmp(mask_at(t, i), mask, bytes))
			return i;
	return -1;
}

/* The index of a rule the call needs in the table; `op` names the call. */
static int present_index(matcha_dev *dev, struct matcha_table *t, const char *op,
			 const uint8_t *value, const uint8_t *mask, unsigned key_bits,
			 uint32_t priority, uint32_t *index)
{
	uint32_t value_words[MATCHA_HW_WIN_STAGING_WORDS], mask_words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc = value_and_mask(dev, t, value, mask, key_bits, value_words, mask_words);
	if (rc)
		return rc;
	int64_t at = find(t, value_words, mask_words, priority);
	if (at < 0)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: no such entry in table %u (priority "
				   "%u)", op, t->index, (unsigned)priority);
	*index = (uint32_t)at;
	return 0;
}

static int add(matcha_dev *dev, struct matcha_table *t, const uint8_t *value,
	       const uint8_t *mask, unsigned key_bits, uint32_t priority, uint8_t action_id,
	       const uint8_t *data, unsigned data_bits)
{
	uint32_t value_words[MATCHA_HW_WIN_STAGING_WORDS], mask_words[MATCHA_HW_WIN_STAGING_WORDS];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	unsigned table = t->index;
	int rc;

	if ((rc = value_and_mask(dev, t, value, mask, key_bits, value_words, mask_words)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)))
		return rc;
	struct ternary_shadow *s = shadow(t);
	int64_t at = find(t, value_words, mask_words, priority);
	if (at >= 0)
		return matcha_fail(dev, MATCHA_EEXIST, "ternary_add: the entry is already in table "
				   "%u (index %u)", table, (unsigned)at);
	if (s->used == t->info.size)
		return matcha_fail(dev, MATCHA_ENOSPC, "ternary_add: table %u is full (%u entries)",
				   table, t->info.size);

	uint32_t pos = 0;
	while (pos < s->used && s->priority[pos] >= priority)
		pos++;
	for (uint32_t i = s->used; i > pos; i--)
		if ((rc = move_index(dev, t, i - 1, i)))
			return rc;
	if ((rc = matcha_counter_zero(dev, t, pos)) ||
	    (rc = write_index(dev, t, pos, value_words, mask_words, priority, action_id,
			      data_words)))
		return rc;
	s->used++;
	return 0;
}

static int delete(matcha_dev *dev, struct matcha_table *t, const uint8_t *value,
		  const uint8_t *mask, unsigned key_bits, uint32_t priority)
{
	uint32_t at;
	int rc;

	if ((rc = present_index(dev, t, "ternary_delete", value, mask, key_bits, priority, &at)))
		return rc;
	struct ternary_shadow *s = shadow(t);
	/* With counters the entry goes first, so that its index is free for the next one;
	 * the last move then leaves the last index invalid. */
	if (t->carried && (rc = invalidate_index(dev, t, at)))
		return rc;
	for (uint32_t i = at; i + 1 < s->used; i++)
		if ((rc = move_index(dev, t, i + 1, i)))
			return rc;
	if (!t->carried && (rc = invalidate_index(dev, t, s->used - 1)))
		return rc;
	s->used--;
	return 0;
}

static int modify(matcha_dev *dev, struct matcha_table *t, const uint8_t *value,
		  const uint8_t *mask, unsigned key_bits, uint32_t priority, uint8_t action_id,
		  const uint8_t *data, unsigned data_bits)
{
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], at;
	int rc;

	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present_index(dev, t, "ternary_modify", value, mask, key_bits, priority, &at)))
		return rc;
	/* One WRITE of the same rule at its index: no shift, the counts stay. */
	return write_index(dev, t, at, value_at(t, at), mask_at(t, at), priority, action_id,
			   data_words);
}

int matcha_ternary_add(matcha_dev *dev, unsigned table, const uint8_t *value,
		       const uint8_t *mask, unsigned key_bits, uint32_t priority,
		       uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_add", &t);
	return rc ? rc : add(dev, t, value, mask, key_bits, priority, action_id, data, data_bits);
}

int matcha_ternary_delete(matcha_dev *dev, unsigned table, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t priority)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_delete", &t);
	return rc ? rc : delete(dev, t, value, mask, key_bits, priority);
}

int matcha_ternary_modify(matcha_dev *dev, unsigned table, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t priority,
			  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_modify", &t);
	return rc ? rc : modify(dev, t, value, mask, key_bits, priority, action_id, data,
				data_bits);
}

int matcha_ternary_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *value,
			     const uint8_t *mask, unsigned key_bits, uint32_t priority,
			     uint32_t *index)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_lookup_sw", &t);
	return rc ? rc : present_index(dev, t, "ternary_lookup_sw", value, mask, key_bits,
				       priority, index);
}

int matcha_ternary_counters(matcha_dev *dev, unsigned table, const uint8_t *value,
			    const uint8_t *mask, unsigned key_bits, uint32_t priority,
			    uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_table *t;
	uint32_t at;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_counters", &t)) ||
	    (rc = matcha_counters_check(dev, t, "ternary_counters")) ||
	    (rc = present_index(dev, t, "ternary_counters", value, mask, key_bits, priority,
				&at)))
		return rc;
	return matcha_counter_entry(dev, t, at, packets, bytes, flags);
}

int matcha_ternary_read(matcha_dev *dev, unsigned table, uint32_t index,
			struct matcha_entry *entry)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_TERNARY, "ternary_read", &t);
	if (rc)
		return rc;
	if (index >= t->info.size)
		return matcha_fail(dev, MATCHA_EINVAL, "ternary_read: index %u is out of range "
				   "(table %u has %u entries)", (unsigned)index, table,
				   t->info.size);
	return matcha_window_read(dev, t, index, entry);
}

/*
 * Adoption: READ every index. The valid entries must be packed at 0..n-1 with priorities
 * that never increase (equal priorities keep their order: it is their insertion order),
 * values inside their masks, and no rule twice.
 */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct ternary_shadow *s = shadow(t);
	struct matcha_entry e;
	uint32_t value[MATCHA_HW_WIN_STAGING_WORDS], mask[MATCHA_HW_WIN_STAGING_WORDS], data[MATCHA_HW_WIN_STAGING_WORDS];
	for (uint32_t i = 0; i < t->info.size; i++) {
		int rc = matcha_window_read(dev, t, i, &e);
		if (rc)
			return rc;
		if (!e.valid)
			continue;
		if (i != s->used)
			return matcha_fail(dev, MATCHA_EHW, "ternary table %u: entry %u is valid but "
					   "entry %u before it is not (entries are packed from 0)",
					   t->index, (unsigned)i, (unsigned)s->used);
		if (i > 0 && e.priority > s->priority[i - 1])
			return matcha_fail(dev, MATCHA_EHW, "ternary table %u: entry %u has priority "
					   "%u, above the %u of entry %u before it", t->index,
					   (unsigned)i, (unsigned)e.priority,
					   (unsigned)s->priority[i - 1], (unsigned)i - 1);
		matcha_be_to_words(e.key, t->key_bytes, value, t->key_words);
		matcha_be_to_words(e.mask, t->key_bytes, mask, t->key_words);
		matcha_be_to_words(e.data, t->data_bytes, data, t->data_words);
		for (unsigned w = 0; w < t->key_words; w++)
			if (value[w] & ~mask[w])
				return matcha_fail(dev, MATCHA_EHW, "ternary table %u: entry %u has "
						   "value bits outside its mask (word %u: value "
						   "0x%08x, mask 0x%08x)", t->index, (unsigned)i, w,
						   (unsigned)value[w], (unsigned)mask[w]);
		int64_t other = find(t, value, mask, e.priority);
		if (other >= 0)
			return matcha_fail(dev, MATCHA_EHW, "ternary table %u: entries %u and %u hold "
					   "the same value, mask and priority", t->index,
					   (unsigned)other, (unsigned)i);
		memcpy(value_at(t, i), value, t->key_words * sizeof *value);
		memcpy(mask_at(t, i), mask, t->key_words * sizeof *mask);
		memcpy(data_at(t, i), data, t->data_words * sizeof *data);
		s->priority[i] = e.priority;
		s->action[i] = e.action_id;
		s->used++;
	}
	return 0;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	if (i >= shadow(t)->used)
		return false;
	memset(k, 0, sizeof *k);
	matcha_words_to_be(value_at(t, i), t->key_words, k->value, t->key_bytes);
	matcha_words_to_be(mask_at(t, i), t->key_words, k->mask, t->key_bytes);
	k->priority = shadow(t)->priority[i];
	return true;
}

/* ------------------------------------------------------------- the kind's operations */

static int op_add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return add(dev, t, k->value, k->mask, t->info.key_bits, k->priority, action_id, data,
		   data_bits);
}

static int op_modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return modify(dev, t, k->value, k->mask, t->info.key_bits, k->priority, action_id, data,
		      data_bits);
}

static int op_remove(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	return delete(dev, t, k->value, k->mask, t->info.key_bits, k->priority);
}

static int op_find(matcha_dev *dev, struct matcha_table *t, const char *op,
		   const struct matcha_key *k, uint32_t *index)
{
	return present_index(dev, t, op, k->value, k->mask, t->info.key_bits, k->priority,
			     index);
}

const struct matcha_kind_ops matcha_ternary_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT | 1u << MATCHA_MATCH_LPM |
		       1u << MATCHA_MATCH_TERNARY | 1u << MATCHA_MATCH_RANGE,
	.masked = true,
	.init = init,
	.release = release,
	.reset = reset,
	.adopt = adopt,
	.add = op_add,
	.modify = op_modify,
	.remove = op_remove,
	.find = op_find,
	.shadow_key = shadow_key,
};
