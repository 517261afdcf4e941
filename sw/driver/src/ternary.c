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
 *
 * Range fields (docs/tables.md, "Range fields"): an entry holds lo in KEY's bits of the
 * field and hi in MASK's. The shadow keeps, per range field, the boundary slots in slot
 * order (sorted by lo, slot 0 at lo 0), each with its interval id and the number of entries
 * whose lo or hi + 1 it is, and each id's span. An add whose boundaries are new splits their
 * intervals first, a delete merges the boundaries it leaves unused, both in the documented
 * order, so that no lookup answers other than before or after the call. The positions of
 * the range fields come from the layout (ops->range_fields); the descriptor gives only how
 * many there are (geometry) and the slots per field (extra).
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

/* One range field's classifier as the driver wrote it. */
struct range_field {
	unsigned offset, width;   /* in the key */
	unsigned nslots;          /* valid slots, 0..nslots-1 */
	uint32_t *lo;             /* by slot */
	uint32_t *id;             /* by slot */
	uint32_t *refs;           /* by slot: entries whose lo or hi + 1 the boundary is */
	uint32_t *start, *end;    /* by id: its span */
	bool *id_used;            /* by id */
};

struct ternary_shadow {
	unsigned used;
	unsigned nranges;         /* range fields (descriptor geometry), 0 for none */
	unsigned slots;           /* boundary slots (and ids) per range field (descriptor extra) */
	bool ranges_known;        /* a layout gave their positions */
	struct range_field *range; /* nranges, field 0 the least significant */
	uint32_t *value; /* size * key_words, little-endian word order as in hardware */
	uint32_t *mask;
	uint32_t *data;  /* size * data_words */
	uint32_t *priority;
	uint8_t *action;
};

static struct ternary_shadow *shadow(const struct matcha_table *t) { return t->state; }

static uint32_t field_max(const struct range_field *r)
{
	return r->width >= 32 ? UINT32_MAX : (uint32_t)((1ull << r->width) - 1);
}

/* The classifier as CLEAR leaves it: slot 0 (lo 0, id 0) and id 0 spanning the field. */
static void ranges_reset(struct ternary_shadow *s)
{
	for (unsigned f = 0; f < s->nranges; f++) {
		struct range_field *r = &s->range[f];
		r->nslots = 1;
		r->lo[0] = 0;
		r->id[0] = 0;
		r->refs[0] = 0;
		memset(r->id_used, 0, s->slots * sizeof *r->id_used);
		r->id_used[0] = true;
		r->start[0] = 0;
		r->end[0] = field_max(r);
	}
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	struct ternary_shadow *s = calloc(1, sizeof *s);
	if (!s)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for ternary table %u", t->index);
	t->state = s;
	s->nranges = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	s->slots = w[MATCHA_HW_DESC_EXTRA_WORD];
	if (s->nranges > MATCHA_MAX_FIELDS || (s->nranges && (s->slots < 2 ||
	    s->slots > MATCHA_HW_RANGE_SLOT_MASK + 1)))
		return matcha_fail(dev, MATCHA_ENODEV, "ternary table %u: %u range fields of %u "
				   "slots each is not a classifier this driver knows (at most %d "
				   "fields, 2..%u slots)", t->index, s->nranges, s->slots,
				   MATCHA_MAX_FIELDS, (unsigned)MATCHA_HW_RANGE_SLOT_MASK + 1);
	if (s->nranges && !(s->range = calloc(s->nranges, sizeof *s->range)))
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for ternary table %u", t->index);
	for (unsigned f = 0; f < s->nranges; f++) {
		struct range_field *r = &s->range[f];
		r->width = 32; /* until the layout says */
		r->lo = calloc(s->slots, sizeof *r->lo);
		r->id = calloc(s->slots, sizeof *r->id);
		r->refs = calloc(s->slots, sizeof *r->refs);
		r->start = calloc(s->slots, sizeof *r->start);
		r->end = calloc(s->slots, sizeof *r->end);
		r->id_used = calloc(s->slots, sizeof *r->id_used);
		if (!r->lo || !r->id || !r->refs || !r->start || !r->end || !r->id_used)
			return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the range fields of "
					   "ternary table %u", t->index);
	}
	ranges_reset(s);
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
	ranges_reset(shadow(t));
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
	for (unsigned f = 0; s->range && f < s->nranges; f++) {
		struct range_field *r = &s->range[f];
		free(r->lo);
		free(r->id);
		free(r->refs);
		free(r->start);
		free(r->end);
		free(r->id_used);
	}
	free(s->range);
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

/* Bits offset..offset+width-1 (width <= 32) of a key in word order. */
static uint32_t get_bits(const uint32_t *words, unsigned offset, unsigned width)
{
	uint64_t v = words[offset / 32];
	if (offset % 32 + width > 32)
		v |= (uint64_t)words[offset / 32 + 1] << 32;
	v >>= offset % 32;
	return (uint32_t)(width >= 32 ? v : v & ((1ull << width) - 1));
}

/* Every key bit that is no range field's, in word order. */
static void ternary_bits(const struct matcha_table *t, uint32_t *words)
{
	const struct ternary_shadow *s = shadow(t);
	for (unsigned w = 0; w < t->key_words; w++)
		words[w] = UINT32_MAX;
	for (unsigned f = 0; f < s->nranges; f++)
		for (unsigned b = 0; b < s->range[f].width; b++) {
			unsigned bit = s->range[f].offset + b;
			words[bit / 32] &= ~(1u << bit % 32);
		}
}

/* A table with range fields takes entries once a layout has said where they are. */
static int ranges_placed(matcha_dev *dev, const struct matcha_table *t, const char *op)
{
	const struct ternary_shadow *s = shadow(t);
	if (!s->nranges || s->ranges_known)
		return 0;
	return matcha_fail(dev, MATCHA_ELAYOUT, "%s: ternary table %u has %u range field%s and "
			   "only its layout says where they are in the key: load the layout first",
			   op, t->index, s->nranges, s->nranges == 1 ? "" : "s");
}

/* Checks value and mask (on a range field lo and hi) and converts them to word order. */
static int value_and_mask(matcha_dev *dev, struct matcha_table *t, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t *value_words,
			  uint32_t *mask_words)
{
	const struct ternary_shadow *s = shadow(t);
	uint32_t masked[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;
	if ((rc = ranges_placed(dev, t, "ternary")) ||
	    (rc = matcha_value_to_words(dev, t, "value", value, key_bits, t->info.key_bits,
					value_words)) ||
	    (rc = matcha_value_to_words(dev, t, "mask", mask, key_bits, t->info.key_bits,
					mask_words)))
		return rc;
	ternary_bits(t, masked);
	for (unsigned w = 0; w < t->key_words; w++)
		if (value_words[w] & ~mask_words[w] & masked[w])
			return matcha_fail(dev, MATCHA_EINVAL, "value has bits set outside the "
					   "mask (word %u: value 0x%08x, mask 0x%08x)", w,
					   (unsigned)(value_words[w] & masked[w]),
					   (unsigned)(mask_words[w] & masked[w]));
	for (unsigned f = 0; f < s->nranges; f++) {
		const struct range_field *r = &s->range[f];
		uint32_t lo = get_bits(value_words, r->offset, r->width);
		uint32_t hi = get_bits(mask_words, r->offset, r->width);
		if (lo > hi)
			return matcha_fail(dev, MATCHA_EINVAL, "range field %u (key bits %u..%u): "
					   "range %u..%u is empty (lo in the value, hi in the mask)",
					   f, r->offset, r->offset + r->width - 1, (unsigned)lo,
					   (unsigned)hi);
	}
	return 0;
}

/* ------------------------------------------------------------------- range fields */

/* Field f's command INDEX for slot or id `i`. */
static uint32_t range_index(unsigned f, uint32_t i)
{
	return (uint32_t)f << MATCHA_HW_RANGE_FIELD_SHIFT | i;
}

/* A RANGE_SLOT or RANGE_SPAN: KEY word 0 `key`, MASK word 0 `mask`, FLAGS `flags`. */
static int range_command(matcha_dev *dev, struct matcha_table *t, uint32_t cmd, uint32_t index,
			 uint32_t key, uint32_t mask, uint32_t flags)
{
	uint32_t k[MATCHA_HW_WIN_STAGING_WORDS] = { key }, m[MATCHA_HW_WIN_STAGING_WORDS] = { mask };
	struct staged_entry e = { .flags = flags, .key = k, .mask = m };
	int rc = matcha_window_stage(dev, t, &e);
	return rc ? rc : matcha_window_command(dev, t, cmd, index);
}

static int write_slot(matcha_dev *dev, struct matcha_table *t, unsigned f, unsigned slot,
		      uint32_t lo, uint32_t id, bool valid)
{
	return range_command(dev, t, MATCHA_HW_CMD_RANGE_SLOT, range_index(f, slot), lo, id,
			     valid ? MATCHA_HW_FLAGS_VALID : 0);
}

static int write_span(matcha_dev *dev, struct matcha_table *t, unsigned f, uint32_t id,
		      uint32_t start, uint32_t end)
{
	struct range_field *r = &shadow(t)->range[f];
	int rc = range_command(dev, t, MATCHA_HW_CMD_RANGE_SPAN, range_index(f, id), start, end, 0);
	if (!rc) {
		r->start[id] = start;
		r->end[id] = end;
	}
	return rc;
}

/* The slot whose interval holds x: the last one with lo <= x. */
static unsigned slot_of(const struct range_field *r, uint32_t x)
{
	unsigned s = 0;
	while (s + 1 < r->nslots && r->lo[s + 1] <= x)
		s++;
	return s;
}

/* Whether boundary b (a lo, or a hi + 1 within the field) needs a slot of its own. */
static bool new_boundary(const struct range_field *r, uint64_t b)
{
	return b <= field_max(r) && r->lo[slot_of(r, (uint32_t)b)] != b;
}

/* The boundaries an entry uses in field f: lo, and hi + 1 unless hi is the field's top. */
static unsigned entry_boundaries(const struct range_field *r, const uint32_t *value,
				 const uint32_t *mask, uint32_t b[2])
{
	unsigned n = 0;
	b[n++] = get_bits(value, r->offset, r->width);
	uint64_t above = (uint64_t)get_bits(mask, r->offset, r->width) + 1;
	if (above <= field_max(r))
		b[n++] = (uint32_t)above;
	return n;
}

/*
 * Splits the interval that holds the new boundary b (docs/tables.md, "Update order"):
 * free id k gets the span [b, c] and its row is rebuilt, equal to the old id's for every
 * entry; the slots above shift up from the top, slot s+1 becomes (b, k); the old id then
 * spans [a, b-1].
 */
static int split(matcha_dev *dev, struct matcha_table *t, unsigned f, uint32_t b)
{
	struct ternary_shadow *s = shadow(t);
	struct range_field *r = &s->range[f];
	unsigned at = slot_of(r, b), k = 0;
	while (r->id_used[k])
		k++;
	uint32_t j = r->id[at], c = r->end[j];
	int rc;
	if ((rc = write_span(dev, t, f, k, b, c)) ||
	    (rc = matcha_window_command(dev, t, MATCHA_HW_CMD_RANGE_REBUILD, range_index(f, k))))
		return rc;
	r->id_used[k] = true;
	for (unsigned i = r->nslots; i-- > at + 1;)
		if ((rc = write_slot(dev, t, f, i + 1, r->lo[i], r->id[i], true)))
			return rc;
	if ((rc = write_slot(dev, t, f, at + 1, b, k, true)))
		return rc;
	memmove(&r->lo[at + 2], &r->lo[at + 1], (r->nslots - at - 1) * sizeof *r->lo);
	memmove(&r->id[at + 2], &r->id[at + 1], (r->nslots - at - 1) * sizeof *r->id);
	memmove(&r->refs[at + 2], &r->refs[at + 1], (r->nslots - at - 1) * sizeof *r->refs);
	r->lo[at + 1] = b;
	r->id[at + 1] = k;
	r->refs[at + 1] = 0;
	r->nslots++;
	return write_span(dev, t, f, j, r->start[j], b - 1);
}

/*
 * Merges the unused boundary of slot `at` (>= 1) into the interval below: its id widens
 * over both (its row already equals the merged id's for every entry), the slots above
 * shift down over it, the top one is invalidated, and the merged id is free.
 */
static int merge(matcha_dev *dev, struct matcha_table *t, unsigned f, unsigned at)
{
	struct range_field *r = &shadow(t)->range[f];
	uint32_t j = r->id[at - 1], k = r->id[at];
	int rc;
	if ((rc = write_span(dev, t, f, j, r->start[j], r->end[k])))
		return rc;
	for (unsigned i = at; i + 1 < r->nslots; i++)
		if ((rc = write_slot(dev, t, f, i, r->lo[i + 1], r->id[i + 1], true)))
			return rc;
	if ((rc = write_slot(dev, t, f, r->nslots - 1, 0, 0, false)))
		return rc;
	memmove(&r->lo[at], &r->lo[at + 1], (r->nslots - at - 1) * sizeof *r->lo);
	memmove(&r->id[at], &r->id[at + 1], (r->nslots - at - 1) * sizeof *r->id);
	memmove(&r->refs[at], &r->refs[at + 1], (r->nslots - at - 1) * sizeof *r->refs);
	r->nslots--;
	r->id_used[k] = false;
	return 0;
}

/* Checks that every range field has slots for the entry's new boundaries, before anything
 * is written. */
static int ranges_room(matcha_dev *dev, const struct matcha_table *t, const uint32_t *value,
		       const uint32_t *mask)
{
	const struct ternary_shadow *s = shadow(t);
	for (unsigned f = 0; f < s->nranges; f++) {
		const struct range_field *r = &s->range[f];
		uint32_t b[2];
		unsigned n = entry_boundaries(r, value, mask, b), fresh = 0;
		for (unsigned i = 0; i < n; i++)
			fresh += new_boundary(r, b[i]);
		if (r->nslots + fresh > s->slots)
			return matcha_fail(dev, MATCHA_ENOSPC, "ternary_add: table %u, range field %u "
					   "(key bits %u..%u): the entry needs %u new boundar%s and "
					   "%u of the field's %u slots are in use (at most %u "
					   "boundaries besides 0)", t->index, f, r->offset,
					   r->offset + r->width - 1, fresh, fresh == 1 ? "y" : "ies",
					   r->nslots, s->slots, s->slots - 1);
	}
	return 0;
}

/* Gives the entry's boundaries slots (splitting intervals) and counts it on them. */
static int ranges_take(matcha_dev *dev, struct matcha_table *t, const uint32_t *value,
		       const uint32_t *mask)
{
	struct ternary_shadow *s = shadow(t);
	for (unsigned f = 0; f < s->nranges; f++) {
		struct range_field *r = &s->range[f];
		uint32_t b[2];
		unsigned n = entry_boundaries(r, value, mask, b);
		for (unsigned i = 0; i < n; i++) {
			int rc;
			if (new_boundary(r, b[i]) && (rc = split(dev, t, f, b[i])))
				return rc;
			r->refs[slot_of(r, b[i])]++;
		}
	}
	return 0;
}

/* Uncounts a deleted entry on its boundaries and merges those no entry uses any more. */
static int ranges_release(matcha_dev *dev, struct matcha_table *t, const uint32_t *value,
			  const uint32_t *mask)
{
	struct ternary_shadow *s = shadow(t);
	for (unsigned f = 0; f < s->nranges; f++) {
		struct range_field *r = &s->range[f];
		uint32_t b[2];
		unsigned n = entry_boundaries(r, value, mask, b);
		for (unsigned i = 0; i < n; i++) {
			unsigned at = slot_of(r, b[i]);
			int rc;
			if (--r->refs[at] == 0 && at > 0 && (rc = merge(dev, t, f, at)))
				return rc;
		}
	}
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
	if ((rc = ranges_room(dev, t, value_words, mask_words)) ||
	    (rc = ranges_take(dev, t, value_words, mask_words)))
		return rc;

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
	uint32_t value_words[MATCHA_HW_WIN_STAGING_WORDS], mask_words[MATCHA_HW_WIN_STAGING_WORDS];
	memcpy(value_words, value_at(t, at), t->key_words * sizeof *value_words);
	memcpy(mask_words, mask_at(t, at), t->key_words * sizeof *mask_words);
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
	return ranges_release(dev, t, value_words, mask_words);
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
/*
 * Range fields: the window cannot READ slots or spans back, and which ids the slots hold
 * depends on the order rules came and went. An empty table's classifier is rewritten to
 * the state CLEAR leaves (no lookup can tell: no entry matches); a table with entries is
 * refused.
 */
static int adopt_ranges(matcha_dev *dev, struct matcha_table *t)
{
	struct ternary_shadow *s = shadow(t);
	int rc;
	for (unsigned f = 0; f < s->nranges; f++) {
		for (unsigned slot = s->slots; slot-- > 0;)
			if ((rc = write_slot(dev, t, f, slot, 0, 0, slot == 0)))
				return rc;
		if ((rc = write_span(dev, t, f, 0, 0, field_max(&s->range[f]))))
			return rc;
	}
	return 0;
}

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
		if (s->nranges)
			return matcha_fail(dev, MATCHA_EHW, "ternary table %u has range fields and "
					   "holds entries (entry %u is valid): their boundary slots "
					   "cannot be read back, so the driver cannot continue from "
					   "them", t->index, (unsigned)i);
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
	return adopt_ranges(dev, t);
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

/* The layout's range fields (offset, width; any order) against the descriptor's count;
 * `apply`: into the shadow. */
static int range_fields(matcha_dev *dev, struct matcha_table *t, const unsigned *offset,
			const unsigned *width, unsigned n, bool apply)
{
	struct ternary_shadow *s = shadow(t);
	if (n != s->nranges)
		return matcha_fail(dev, MATCHA_ELAYOUT, "ternary table %u: the layout has %u range "
				   "field%s, the hardware %u", t->index, n, n == 1 ? "" : "s",
				   s->nranges);
	for (unsigned i = 0; i < n; i++)
		if (width[i] > 32)
			return matcha_fail(dev, MATCHA_ELAYOUT, "ternary table %u: a range field is "
					   "%u bits, the classifier takes at most 32", t->index,
					   width[i]);
	if (!apply)
		return 0;
	/* Field 0 is the least significant (RANGE_FIELD_SHIFT numbers them so). */
	for (unsigned f = 0; f < n; f++) {
		unsigned pick = 0;
		for (unsigned i = 0; i < n; i++) {
			unsigned below = 0;
			for (unsigned o = 0; o < n; o++)
				below += offset[o] < offset[i];
			if (below == f)
				pick = i;
		}
		s->range[f].offset = offset[pick];
		s->range[f].width = width[pick];
	}
	s->ranges_known = true;
	if (!s->used)
		ranges_reset(s);
	return 0;
}

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
	.range_fields = range_fields,
};
