/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Exact tables: a 4-way cuckoo hash whose placement is the driver's (docs/tables.md).
 *
 * The shadow mirrors every slot of the hardware, so placement decisions need no reads.
 * Keys are kept in canonical form: the table's key width, big-endian, zero-extended.
 *
 * With per-entry counters, a slot is zeroed before an entry is written into it, and a moved
 * entry's old slot is invalidated on its own (not by the write that reuses it) so that its
 * final count can be read and carried to the new slot (counters.c).
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

struct exact_shadow {
	unsigned slots; /* per way */
	unsigned used;
	uint8_t *valid;
	uint8_t *action;
	uint64_t *hash; /* CRC-64/XZ of the key: every way's index without rehashing */
	uint8_t *keys;  /* size * key_bytes */
	uint32_t *data; /* size * data_words */
};

/* A breadth-first search tree over occupied slots: whose occupant moves, and to where. */
struct cuckoo_node {
	uint32_t slot;
	int parent; /* index in the search array, -1 for the new key's candidate slots */
	unsigned depth;
};
/* Nodes at depth d (0-based) number ways * (ways-1)^d; only depths < MAX_MOVES are kept. */
#define CUCKOO_MAX_NODES (4 + 4 * 3 + 4 * 9 + 4 * 27)

static struct exact_shadow *shadow(const struct matcha_table *t) { return t->state; }

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	t->info.ways = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	if (in->ways < 2 || in->ways > 4)
		return matcha_fail(dev, MATCHA_ENODEV, "exact table %u: %u ways, the hash takes 2..4",
				   t->index, in->ways);
	unsigned slots = in->size / in->ways;
	if (in->size % in->ways || slots > 65536 || (slots & (slots - 1)))
		return matcha_fail(dev, MATCHA_ENODEV,
				   "exact table %u: %u entries in %u ways is not a power-of-two "
				   "number of slots (at most 65536) per way", t->index, in->size,
				   in->ways);

	struct exact_shadow *s = calloc(1, sizeof *s);
	if (!s)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for exact table %u", t->index);
	t->state = s;
	s->slots = slots;
	s->valid = calloc(in->size, 1);
	s->action = calloc(in->size, 1);
	s->hash = calloc(in->size, sizeof *s->hash);
	s->keys = calloc(in->size, t->key_bytes);
	s->data = calloc(in->size, (t->data_words ? t->data_words : 1) * sizeof *s->data);
	if (!s->valid || !s->action || !s->hash || !s->keys || !s->data)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the shadow of exact table %u "
				   "(%u entries)", t->index, in->size);
	return 0;
}

static void reset(struct matcha_table *t)
{
	struct exact_shadow *s = shadow(t);
	memset(s->valid, 0, t->info.size);
	s->used = 0;
}

static void release(struct matcha_table *t)
{
	struct exact_shadow *s = shadow(t);
	if (!s)
		return;
	free(s->valid);
	free(s->action);
	free(s->hash);
	free(s->keys);
	free(s->data);
	free(s);
	t->state = NULL;
}

static uint32_t slot_of(const struct exact_shadow *s, uint64_t hash, unsigned way)
{
	return way * s->slots + ((uint32_t)(hash >> (16 * way)) & (s->slots - 1));
}

static const uint8_t *key_at(const struct matcha_table *t, uint32_t slot)
{
	return shadow(t)->keys + (size_t)slot * t->key_bytes;
}

static uint32_t *data_at(const struct matcha_table *t, uint32_t slot)
{
	return shadow(t)->data + (size_t)slot * t->data_words;
}

/* The slot holding the key, or -1. The hardware lets the lowest way win; so does this. */
static int64_t find(const struct matcha_table *t, const uint8_t *canon, uint64_t hash)
{
	const struct exact_shadow *s = shadow(t);
	for (unsigned w = 0; w < t->info.ways; w++) {
		uint32_t slot = slot_of(s, hash, w);
		if (s->valid[slot] && !memcmp(key_at(t, slot), canon, t->key_bytes))
			return slot;
	}
	return -1;
}

/* The slot of a key the call needs in the table; `op` names the call. */
static int present_slot(matcha_dev *dev, struct matcha_table *t, const char *op,
			const uint8_t *key, unsigned key_bits, uint32_t *slot)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	int rc = matcha_key_canonical(dev, t, key, key_bits, canon);
	if (rc)
		return rc;
	int64_t at = find(t, canon, matcha_crc64_xz(canon, t->key_bytes));
	if (at < 0)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: the key is not in table %u", op,
				   t->index);
	*slot = (uint32_t)at;
	return 0;
}

/* Writes an entry into `slot` of the hardware, then records it in the shadow. */
static int write_slot(matcha_dev *dev, struct matcha_table *t, uint32_t slot,
		      const uint8_t *canon, uint64_t hash, uint8_t action_id,
		      const uint32_t *data)
{
	struct exact_shadow *s = shadow(t);
	uint32_t key_words[MATCHA_HW_WIN_STAGING_WORDS];
	matcha_be_to_words(canon, t->key_bytes, key_words, t->key_words);
	struct staged_entry e = {
		.flags = MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id),
		.key = key_words,
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
	};
	int rc = matcha_window_write(dev, t, slot, &e);
	if (rc)
		return rc;
	if (!s->valid[slot])
		s->used++;
	s->valid[slot] = 1;
	s->action[slot] = action_id;
	s->hash[slot] = hash;
	/* memmove: a cuckoo move copies one shadow slot onto another */
	memmove(s->keys + (size_t)slot * t->key_bytes, canon, t->key_bytes);
	memmove(data_at(t, slot), data, t->data_words * sizeof *data);
	return 0;
}

static int invalidate_slot(matcha_dev *dev, struct matcha_table *t, uint32_t slot)
{
	struct staged_entry e = { .flags = 0 };
	int rc = matcha_window_write(dev, t, slot, &e);
	if (rc)
		return rc;
	shadow(t)->valid[slot] = 0;
	shadow(t)->used--;
	return 0;
}

/*
 * Moves the entry of slot `from` to slot `to`. Without counters this is the copy alone:
 * `to` is free or its occupant already has its copy further on, and `from` stays valid
 * until the write that reuses it. With counters `to` is free: ZERO it, copy, invalidate
 * `from`, and carry the final count of `from` along.
 */
static int move_slot(matcha_dev *dev, struct matcha_table *t, uint32_t from, uint32_t to)
{
	struct exact_shadow *s = shadow(t);
	int rc;
	if ((rc = matcha_counter_zero(dev, t, to)) ||
	    (rc = write_slot(dev, t, to, key_at(t, from), s->hash[from], s->action[from],
			     data_at(t, from))))
		return rc;
	if (!t->carried)
		return 0;
	if ((rc = invalidate_slot(dev, t, from)))
		return rc;
	return matcha_counter_carry(dev, t, from, to);
}

/* Writes a new entry into a free slot, its counters zeroed first. */
static int add_slot(matcha_dev *dev, struct matcha_table *t, uint32_t slot,
		    const uint8_t *canon, uint64_t hash, uint8_t action_id, const uint32_t *data)
{
	int rc = matcha_counter_zero(dev, t, slot);
	return rc ? rc : write_slot(dev, t, slot, canon, hash, action_id, data);
}

/*
 * Breadth-first search for the shortest chain of moves that frees one of the new key's
 * candidate slots. On success, path[0..*moves-1] are the slots whose occupants move (path[0]
 * a candidate slot of the new key, each next one the slot the previous occupant moves to)
 * and *free_slot is where the last occupant goes.
 */
static bool cuckoo_search(const struct matcha_table *t, uint64_t hash, uint32_t *path,
			  unsigned *moves, uint32_t *free_slot)
{
	const struct exact_shadow *s = shadow(t);
	struct cuckoo_node nodes[CUCKOO_MAX_NODES];
	unsigned n = 0, ways = t->info.ways;

	for (unsigned w = 0; w < ways; w++)
		nodes[n++] = (struct cuckoo_node){ slot_of(s, hash, w), -1, 0 };

	for (unsigned head = 0; head < n; head++) {
		uint32_t slot = nodes[head].slot;
		unsigned way = slot / s->slots;
		for (unsigned w = 0; w < ways; w++) {
			if (w == way)
				continue;
			uint32_t to = slot_of(s, s->hash[slot], w);
			if (!s->valid[to]) {
				unsigned d = nodes[head].depth + 1;
				*moves = d;
				*free_slot = to;
				for (int i = (int)head; i >= 0; i = nodes[i].parent)
					path[--d] = nodes[i].slot;
				return true;
			}
			if (nodes[head].depth + 1 >= MATCHA_CUCKOO_MAX_MOVES)
				continue;
			bool seen = false;
			for (unsigned i = 0; i < n && !seen; i++)
				seen = nodes[i].slot == to;
			if (!seen)
				nodes[n++] = (struct cuckoo_node){ to, (int)head,
								   nodes[head].depth + 1 };
		}
	}
	return false;
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

	struct exact_shadow *s = shadow(t);
	uint64_t hash = matcha_crc64_xz(canon, t->key_bytes);
	int64_t at = find(t, canon, hash);
	if (at >= 0)
		return matcha_fail(dev, MATCHA_EEXIST, "exact_add: the key is already in table %u "
				   "(index %u)", table, (unsigned)at);

	for (unsigned w = 0; w < t->info.ways; w++) {
		uint32_t slot = slot_of(s, hash, w);
		if (!s->valid[slot])
			return add_slot(dev, t, slot, canon, hash, action_id, data_words);
	}

	uint32_t path[MATCHA_CUCKOO_MAX_MOVES], free_slot;
	unsigned moves;
	if (!cuckoo_search(t, hash, path, &moves, &free_slot))
		return matcha_fail(dev, MATCHA_ENOSPC,
				   "exact_add: table %u has no room for the key: its %u candidate "
				   "slots are taken and no chain of at most %d moves frees one "
				   "(%u of %u entries used)", table, t->info.ways,
				   MATCHA_CUCKOO_MAX_MOVES, s->used, t->info.size);
	/*
	 * Moves run from the end of the chain. Each write puts an entry into a slot that is
	 * free or whose occupant already has its copy further down the chain, so every
	 * present key stays findable after every write (make-before-break); the old copy's
	 * invalidation is the write that reuses its slot (with counters, a write of its own).
	 */
	if ((rc = move_slot(dev, t, path[moves - 1], free_slot)))
		return rc;
	for (unsigned i = moves - 1; i > 0; i--)
		if ((rc = move_slot(dev, t, path[i - 1], path[i])))
			return rc;
	return add_slot(dev, t, path[0], canon, hash, action_id, data_words);
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
	return write_slot(dev, t, slot, key_at(t, slot), shadow(t)->hash[slot], action_id,
			  data_words);
}

static int delete(matcha_dev *dev, struct matcha_table *t, const uint8_t *key,
		  unsigned key_bits)
{
	uint32_t slot;
	int rc = present_slot(dev, t, "exact_delete", key, key_bits, &slot);
	return rc ? rc : invalidate_slot(dev, t, slot);
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

/*
 * Adoption: READ every slot. A valid key must sit in one of its own hash slots (way w,
 * slot index_w(key)) and only once: a key in two slots is what a move leaves only until its
 * next write, and a lookup could not tell which copy a later modify should change.
 */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct exact_shadow *s = shadow(t);
	struct matcha_entry e;
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	for (uint32_t slot = 0; slot < t->info.size; slot++) {
		int rc = matcha_window_read(dev, t, slot, &e);
		if (rc)
			return rc;
		if (!e.valid)
			continue;
		unsigned way = slot / s->slots;
		uint64_t hash = matcha_crc64_xz(e.key, t->key_bytes);
		if (slot_of(s, hash, way) != slot)
			return matcha_fail(dev, MATCHA_EHW, "exact table %u: slot %u (way %u) holds a "
					   "key whose hash puts it in slot %u of that way", t->index,
					   (unsigned)slot, way, (unsigned)slot_of(s, hash, way));
		int64_t other = find(t, e.key, hash);
		if (other >= 0)
			return matcha_fail(dev, MATCHA_EHW, "exact table %u: slots %u and %u hold the "
					   "same key", t->index, (unsigned)other, (unsigned)slot);
		matcha_be_to_words(e.data, t->data_bytes, data_words, t->data_words);
		s->valid[slot] = 1;
		s->used++;
		s->action[slot] = e.action_id;
		s->hash[slot] = hash;
		memcpy(s->keys + (size_t)slot * t->key_bytes, e.key, t->key_bytes);
		memcpy(data_at(t, slot), data_words, t->data_words * sizeof *data_words);
	}
	return 0;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	if (i >= t->info.size || !shadow(t)->valid[i])
		return false;
	memset(k, 0, sizeof *k);
	memcpy(k->value, key_at(t, i), t->key_bytes);
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
