/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cuckoo hash of exact tables and of a memory-backed exact table's stash (cuckoo.h).
 *
 * With per-entry counters, a slot is zeroed before an entry is written into it, and a moved
 * entry's old slot is invalidated on its own (not by the write that reuses it) so that its
 * final count can be read and carried to the new slot (counters.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo.h"

/* A breadth-first search tree over occupied slots: whose occupant moves, and to where. */
struct cuckoo_node {
	uint32_t slot;
	int parent; /* index in the search array, -1 for the new key's candidate slots */
	unsigned depth;
};
/* Nodes at depth d (0-based) number ways * (ways-1)^d; only depths < MAX_MOVES are kept. */
#define CUCKOO_MAX_NODES (4 + 4 * 3 + 4 * 9 + 4 * 27)

int matcha_cuckoo_init(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		       unsigned ways, unsigned entries, uint32_t first, uint32_t window,
		       const char *name, ...)
{
	va_list ap;
	va_start(ap, name);
	vsnprintf(c->name, sizeof c->name, name, ap);
	va_end(ap);
	unsigned slots = entries / ways;
	if (entries % ways || slots == 0 || slots > 65536 || (slots & (slots - 1)))
		return matcha_fail(dev, MATCHA_ENODEV, "%s: %u entries in %u ways is not a "
				   "power-of-two number of slots (at most 65536) per way", c->name,
				   entries, ways);
	c->ways = ways;
	c->slots = slots;
	c->first = first;
	c->window = window;
	c->used = 0;
	c->valid = calloc(entries, 1);
	c->action = calloc(entries, 1);
	c->hash = calloc(entries, sizeof *c->hash);
	c->keys = calloc(entries, t->key_bytes);
	c->data = calloc(entries, (t->data_words ? t->data_words : 1) * sizeof *c->data);
	if (!c->valid || !c->action || !c->hash || !c->keys || !c->data)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the shadow of %s (%u "
				   "entries)", c->name, entries);
	return 0;
}

void matcha_cuckoo_free(struct matcha_cuckoo *c)
{
	free(c->valid);
	free(c->action);
	free(c->hash);
	free(c->keys);
	free(c->data);
	c->valid = c->action = c->keys = NULL;
	c->hash = NULL;
	c->data = NULL;
}

void matcha_cuckoo_reset(struct matcha_cuckoo *c)
{
	if (c->valid)
		memset(c->valid, 0, (size_t)c->ways * c->slots);
	c->used = 0;
}

static uint32_t slot_of(const struct matcha_cuckoo *c, uint64_t hash, unsigned way)
{
	return way * c->slots + ((uint32_t)(hash >> (16 * way)) & (c->slots - 1));
}

const uint8_t *matcha_cuckoo_key(const struct matcha_table *t, const struct matcha_cuckoo *c,
				 uint32_t slot)
{
	return c->keys + (size_t)slot * t->key_bytes;
}

static uint32_t *data_at(const struct matcha_table *t, const struct matcha_cuckoo *c,
			 uint32_t slot)
{
	return c->data + (size_t)slot * t->data_words;
}

/* The hardware lets the lowest way win; so does this. */
int64_t matcha_cuckoo_find(const struct matcha_table *t, const struct matcha_cuckoo *c,
			   const uint8_t *canon, uint64_t hash)
{
	for (unsigned w = 0; w < c->ways; w++) {
		uint32_t slot = slot_of(c, hash, w);
		if (c->valid[slot] && !memcmp(matcha_cuckoo_key(t, c, slot), canon, t->key_bytes))
			return slot;
	}
	return -1;
}

/* Writes an entry into `slot` of the hardware, then records it in the shadow. */
static int write_slot(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		      uint32_t slot, const uint8_t *canon, uint64_t hash, uint8_t action_id,
		      const uint32_t *data)
{
	uint32_t key_words[MATCHA_HW_WIN_STAGING_WORDS];
	struct staged_entry e = matcha_staged_key(t, canon, action_id, data, key_words);
	int rc = matcha_window_write(dev, t, c->window + slot, &e);
	if (rc)
		return rc;
	if (!c->valid[slot])
		c->used++;
	c->valid[slot] = 1;
	c->action[slot] = action_id;
	c->hash[slot] = hash;
	/* memmove: a cuckoo move copies one shadow slot onto another */
	memmove(c->keys + (size_t)slot * t->key_bytes, canon, t->key_bytes);
	memmove(data_at(t, c, slot), data, t->data_words * sizeof *data);
	return 0;
}

int matcha_cuckoo_delete(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
			 uint32_t slot)
{
	struct staged_entry e = { .flags = 0 };
	int rc = matcha_window_write(dev, t, c->window + slot, &e);
	if (rc)
		return rc;
	c->valid[slot] = 0;
	c->used--;
	return 0;
}

int matcha_cuckoo_modify(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
			 uint32_t slot, uint8_t action_id, const uint32_t *data)
{
	return write_slot(dev, t, c, slot, matcha_cuckoo_key(t, c, slot), c->hash[slot],
			  action_id, data);
}

/*
 * Moves the entry of slot `from` to slot `to`. Without counters this is the copy alone:
 * `to` is free or its occupant already has its copy further on, and `from` stays valid
 * until the write that reuses it. With counters `to` is free: ZERO it, copy, invalidate
 * `from`, and carry the final count of `from` along.
 */
static int move_slot(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		     uint32_t from, uint32_t to)
{
	int rc;
	if ((rc = matcha_counter_zero(dev, t, c->first + to)) ||
	    (rc = write_slot(dev, t, c, to, matcha_cuckoo_key(t, c, from), c->hash[from],
			     c->action[from], data_at(t, c, from))))
		return rc;
	if (!t->carried)
		return 0;
	if ((rc = matcha_cuckoo_delete(dev, t, c, from)))
		return rc;
	return matcha_counter_carry(dev, t, c->first + from, c->first + to);
}

/* Writes a new entry into a free slot, its counters zeroed first. */
static int add_slot(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		    uint32_t slot, const uint8_t *canon, uint64_t hash, uint8_t action_id,
		    const uint32_t *data)
{
	int rc = matcha_counter_zero(dev, t, c->first + slot);
	return rc ? rc : write_slot(dev, t, c, slot, canon, hash, action_id, data);
}

/*
 * Breadth-first search for the shortest chain of moves that frees one of the new key's
 * candidate slots. On success, path[0..*moves-1] are the slots whose occupants move (path[0]
 * a candidate slot of the new key, each next one the slot the previous occupant moves to)
 * and *free_slot is where the last occupant goes.
 */
static bool cuckoo_search(const struct matcha_cuckoo *c, uint64_t hash, uint32_t *path,
			  unsigned *moves, uint32_t *free_slot)
{
	struct cuckoo_node nodes[CUCKOO_MAX_NODES];
	unsigned n = 0, ways = c->ways;

	for (unsigned w = 0; w < ways; w++)
		nodes[n++] = (struct cuckoo_node){ slot_of(c, hash, w), -1, 0 };

	for (unsigned head = 0; head < n; head++) {
		uint32_t slot = nodes[head].slot;
		unsigned way = slot / c->slots;
		for (unsigned w = 0; w < ways; w++) {
			if (w == way)
				continue;
			uint32_t to = slot_of(c, c->hash[slot], w);
			if (!c->valid[to]) {
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

int matcha_cuckoo_add(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		      const uint8_t *canon, uint64_t hash, uint8_t action_id,
		      const uint32_t *data)
{
	for (unsigned w = 0; w < c->ways; w++) {
		uint32_t slot = slot_of(c, hash, w);
		if (!c->valid[slot])
			return add_slot(dev, t, c, slot, canon, hash, action_id, data);
	}

	uint32_t path[MATCHA_CUCKOO_MAX_MOVES], free_slot;
	unsigned moves;
	int rc;
	if (!cuckoo_search(c, hash, path, &moves, &free_slot))
		return MATCHA_ENOSPC;
	/*
	 * Moves run from the end of the chain. Each write puts an entry into a slot that is
	 * free or whose occupant already has its copy further down the chain, so every
	 * present key stays findable after every write (make-before-break); the old copy's
	 * invalidation is the write that reuses its slot (with counters, a write of its own).
	 */
	if ((rc = move_slot(dev, t, c, path[moves - 1], free_slot)))
		return rc;
	for (unsigned i = moves - 1; i > 0; i--)
		if ((rc = move_slot(dev, t, c, path[i - 1], path[i])))
			return rc;
	return add_slot(dev, t, c, path[0], canon, hash, action_id, data);
}

int matcha_cuckoo_adopt(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c)
{
	struct matcha_entry e;
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	for (uint32_t slot = 0; slot < c->ways * c->slots; slot++) {
		int rc = matcha_window_read(dev, t, c->window + slot, &e);
		if (rc)
			return rc;
		if (!e.valid)
			continue;
		unsigned way = slot / c->slots;
		uint64_t hash = matcha_crc64_xz(e.key, t->key_bytes);
		if (slot_of(c, hash, way) != slot)
			return matcha_fail(dev, MATCHA_EHW, "%s: slot %u (way %u) holds a key "
					   "whose hash puts it in slot %u of that way", c->name,
					   (unsigned)slot, way, (unsigned)slot_of(c, hash, way));
		int64_t other = matcha_cuckoo_find(t, c, e.key, hash);
		if (other >= 0)
			return matcha_fail(dev, MATCHA_EHW, "%s: slots %u and %u hold the same key",
					   c->name, (unsigned)other, (unsigned)slot);
		matcha_be_to_words(e.data, t->data_bytes, data_words, t->data_words);
		c->valid[slot] = 1;
		c->used++;
		c->action[slot] = e.action_id;
		c->hash[slot] = hash;
		memcpy(c->keys + (size_t)slot * t->key_bytes, e.key, t->key_bytes);
		memcpy(data_at(t, c, slot), data_words, t->data_words * sizeof *data_words);
	}
	return 0;
}
