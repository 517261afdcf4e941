/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A cuckoo hash placed by the driver (docs/tables.md, "Exact"): `ways` ways of `slots`
 * slots each, a key's slot in way w (crc64_xz(key) >> 16*w) & (slots - 1), its index
 * w * slots + slot, the lowest way winning where several hold the key. The on-chip exact
 * tables are one (exact.c), and so is the on-chip stash beside a memory-backed exact table
 * (mem_exact.c), which is the same hardware: this file is their common shadow and
 * placement, so that both place and adopt entries alike. Not a kind of its own.
 *
 * The shadow mirrors every slot (key, action, data), so placement needs no reads and a
 * move copies an entry without reading it. Keys are kept in canonical form (internal.h).
 * Slot s is counter index `first + s` and window INDEX `window + s` of its table.
 */
#ifndef MATCHA_CUCKOO_H
#define MATCHA_CUCKOO_H

#include "internal.h"

struct matcha_cuckoo {
	char name[48];       /* for messages: "exact table 3", "mem_exact table 0's stash" */
	unsigned ways;
	unsigned slots;      /* per way */
	uint32_t first;      /* the counter index of slot 0 */
	uint32_t window;     /* the window INDEX of slot 0 */
	unsigned used;
	uint8_t *valid;
	uint8_t *action;
	uint64_t *hash;      /* CRC-64/XZ of the key: every way's slot without rehashing */
	uint8_t *keys;       /* ways * slots * t->key_bytes */
	uint32_t *data;      /* ways * slots * t->data_words */
};

/* Checks that `entries` are `ways` ways of a power-of-two number of slots, at most 65536
 * (MATCHA_ENODEV naming c->name otherwise), and allocates the empty shadow; `name` is
 * printf'd with the arguments after it. On failure matcha_cuckoo_free() frees what was
 * allocated. */
int matcha_cuckoo_init(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		       unsigned ways, unsigned entries, uint32_t first, uint32_t window,
		       const char *name, ...) __attribute__((format(printf, 8, 9)));
void matcha_cuckoo_free(struct matcha_cuckoo *c);
/* Empties the shadow, as CLEAR leaves the hardware. */
void matcha_cuckoo_reset(struct matcha_cuckoo *c);

/* The key's slot (canonical key, its CRC-64/XZ), or -1. */
int64_t matcha_cuckoo_find(const struct matcha_table *t, const struct matcha_cuckoo *c,
			   const uint8_t *canon, uint64_t hash);
/* The canonical key of slot `slot` (valid or not). */
const uint8_t *matcha_cuckoo_key(const struct matcha_table *t, const struct matcha_cuckoo *c,
				 uint32_t slot);

/*
 * Places a key that is not in the cuckoo: a free candidate slot in way order, else the
 * shortest chain of at most MATCHA_CUCKOO_MAX_MOVES moves, written make-before-break.
 * MATCHA_ENOSPC with no message when no chain frees a slot (nothing is written): the
 * caller says what was full.
 */
int matcha_cuckoo_add(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
		      const uint8_t *canon, uint64_t hash, uint8_t action_id,
		      const uint32_t *data);
/* A new action and data for the entry of `slot`: one WRITE, the same key (counts stay). */
int matcha_cuckoo_modify(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
			 uint32_t slot, uint8_t action_id, const uint32_t *data);
/* Removes the entry of `slot`: one WRITE of it, invalid. */
int matcha_cuckoo_delete(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c,
			 uint32_t slot);

/*
 * Rebuilds the (empty) shadow with a READ of every slot. A valid key must sit in its own
 * slot of its way, and only once: a key in two slots is what a move leaves only until its
 * next write, and a later modify could not tell which copy to change. MATCHA_EHW naming
 * c->name and the slots otherwise.
 */
int matcha_cuckoo_adopt(matcha_dev *dev, struct matcha_table *t, struct matcha_cuckoo *c);

#endif
