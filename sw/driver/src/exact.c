/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exact tables: a 2- to 4-way cuckoo hash whose placement is the driver's (docs/tables.md).
 * The shadow, placement (moves make-before-break, counters carried along) and adoption are
 * cuckoo.c's, which the stash of a memory-backed exact table shares; this file is the
 * kind's checks, messages and calls. A slot is its counter index and its window INDEX.
 */
#include <stdlib.h>
#include <string.h>

#include "cuckoo.h"
#include "kind.h"

static struct matcha_cuckoo *shadow(const struct matcha_table *t) { return t->state; }

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	t->info.ways = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	if (in->ways < 2 || in->ways > 4)
		return matcha_fail(dev, MATCHA_ENODEV, "exact table %u: %u ways, the hash takes 2..4",
				   t->index, in->ways);
	struct matcha_cuckoo *c = calloc(1, sizeof *c);
	if (!c)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for exact table %u", t->index);
	t->state = c;
	return matcha_cuckoo_init(dev, t, c, in->ways, in->size, 0, 0, "exact table %u",
				  t->index);
}

static void reset(struct matcha_table *t)
{
	matcha_cuckoo_reset(shadow(t));
}

static void release(struct matcha_table *t)
{
	struct matcha_cuckoo *c = shadow(t);
	if (!c)
		return;
	matcha_cuckoo_free(c);
	free(c);
	t->state = NULL;
}

/* The slot of a key the call needs in the table; `op` names the call. */
static int present_slot(matcha_dev *dev, struct matcha_table *t, const char *op,
			const uint8_t *key, unsigned key_bits, uint32_t *slot)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	int rc = matcha_key_canonical(dev, t, key, key_bits, canon);
	if (rc)
		return rc;
	int64_t at = matcha_cuckoo_find(t, shadow(t), canon, matcha_crc64_xz(canon, t->key_bytes));
	if (at < 0)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: the key is not in table %u", op,
				   t->index);
	*slot = (uint32_t)at;
	return 0;
}

static int add(matcha_dev *dev, struct matcha_table *t, const uint8_t *key, unsigned key_bits,
	       uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	unsigned table = t->index;
	int rc;

	if ((rc = matcha_key_canonical(dev, t, key, key_bits, canon)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)))
		return rc;

	struct matcha_cuckoo *c = shadow(t);
	uint64_t hash = matcha_crc64_xz(canon, t->key_bytes);
	int64_t at = matcha_cuckoo_find(t, c, canon, hash);
	if (at >= 0)
		return matcha_fail(dev, MATCHA_EEXIST, "exact_add: the key is already in table %u "
				   "(index %u)", table, (unsigned)at);
	rc = matcha_cuckoo_add(dev, t, c, canon, hash, action_id, data_words);
	if (rc == MATCHA_ENOSPC)
		return matcha_fail(dev, MATCHA_ENOSPC,
				   "exact_add: table %u has no room for the key: its %u candidate "
				   "slots are taken and no chain of at most %d moves frees one "
				   "(%u of %u entries used)", table, t->info.ways,
				   MATCHA_CUCKOO_MAX_MOVES, c->used, t->info.size);
	return rc;
}

static int modify(matcha_dev *dev, struct matcha_table *t, const uint8_t *key,
		  unsigned key_bits, uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], slot;
	int rc;

	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present_slot(dev, t, "exact_modify", key, key_bits, &slot)))
		return rc;
	/* One WRITE of the same key in the same slot: its counts stay with it. */
	return matcha_cuckoo_modify(dev, t, shadow(t), slot, action_id, data_words);
}

static int delete(matcha_dev *dev, struct matcha_table *t, const uint8_t *key,
		  unsigned key_bits)
{
	uint32_t slot = 0; /* GCC cannot see that matcha_fail() never returns 0 */
	int rc = present_slot(dev, t, "exact_delete", key, key_bits, &slot);
	return rc ? rc : matcha_cuckoo_delete(dev, t, shadow(t), slot);
}

int matcha_exact_add(matcha_dev *dev, unsigned table, const uint8_t *key, unsigned key_bits,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_add", &t);
	return rc ? rc : add(dev, t, key, key_bits, action_id, data, data_bits);
}

int matcha_exact_modify(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits, uint8_t action_id, const uint8_t *data,
			unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_modify", &t);
	return rc ? rc : modify(dev, t, key, key_bits, action_id, data, data_bits);
}

int matcha_exact_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_delete", &t);
	return rc ? rc : delete(dev, t, key, key_bits);
}

int matcha_exact_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			   unsigned key_bits, uint32_t *index)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_lookup_sw", &t);
	return rc ? rc : present_slot(dev, t, "exact_lookup_sw", key, key_bits, index);
}

int matcha_exact_counters(matcha_dev *dev, unsigned table, const uint8_t *key,
			  unsigned key_bits, uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_table *t;
	uint32_t slot;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_counters", &t)) ||
	    (rc = matcha_counters_check(dev, t, "exact_counters")) ||
	    (rc = present_slot(dev, t, "exact_counters", key, key_bits, &slot)))
		return rc;
	return matcha_counter_entry(dev, t, slot, packets, bytes, flags);
}

int matcha_exact_read(matcha_dev *dev, unsigned table, uint32_t index,
		      struct matcha_entry *entry)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_EXACT, "exact_read", &t);
	if (rc)
		return rc;
	if (index >= t->info.size)
		return matcha_fail(dev, MATCHA_EINVAL, "exact_read: index %u is out of range "
				   "(table %u has %u entries)", (unsigned)index, table,
				   t->info.size);
	return matcha_window_read(dev, t, index, entry);
}

/* Adoption: READ every slot (cuckoo.c). */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	return matcha_cuckoo_adopt(dev, t, shadow(t));
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	if (i >= t->info.size || !shadow(t)->valid[i])
		return false;
	memset(k, 0, sizeof *k);
	memcpy(k->value, matcha_cuckoo_key(t, shadow(t), i), t->key_bytes);
	return true;
}

/* ------------------------------------------------------------- the kind's operations */

static int op_add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return add(dev, t, k->value, t->info.key_bits, action_id, data, data_bits);
}

static int op_modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return modify(dev, t, k->value, t->info.key_bits, action_id, data, data_bits);
}

static int op_remove(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	return delete(dev, t, k->value, t->info.key_bits);
}

static int op_find(matcha_dev *dev, struct matcha_table *t, const char *op,
		   const struct matcha_key *k, uint32_t *index)
{
	return present_slot(dev, t, op, k->value, t->info.key_bits, index);
}

const struct matcha_kind_ops matcha_exact_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT,
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
