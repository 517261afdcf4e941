/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Table kinds: what each kind of table does, as one const table of operations per kind
 * (in the manner of DPDK's rte_table_ops), found by the descriptor's kind code in the
 * registry of kinds.c. The device and entry layers (dev.c, counters.c, entries.c) call
 * through t->ops and name no kind; a kind's file uses only internal.h (register access,
 * the window protocol, per-entry counters, failure messages) and the shared cuckoo hash of
 * cuckoo.h (exact tables, a memory-backed exact table's stash), never another kind.
 *
 * An entry's counter index runs from 0 to t->indexes - 1: info.size, which a kind may raise
 * in `init` for entries besides the descriptor's (a mem_exact table's stash, numbered after
 * its entries in memory). The generic layers walk them all (adoption by name, counters).
 *
 * A new kind is one file defining `const struct matcha_kind_ops matcha_<kind>_ops` and one
 * line in kinds.c; its name is the generated MATCHA_HW_KIND_NAMES entry for its code.
 */
#ifndef MATCHA_KIND_H
#define MATCHA_KIND_H

#include "internal.h"

/*
 * One entry of a table named by its match, in the table's key width, big-endian: exact
 * and direct tables the key; LPM tables the prefix (bits beyond its length zero) and its length;
 * ternary tables value, mask and priority. What a kind does not use is zero.
 */
struct matcha_key {
	uint8_t value[MATCHA_MAX_KEY_BYTES];
	uint8_t mask[MATCHA_MAX_KEY_BYTES];
	unsigned prefix_len;
	uint32_t priority;
};

struct matcha_kind_ops {
	/*
	 * What the kind's entries are, for the by-name layer (entries.c): the match kinds its
	 * key fields take (a bit 1u << enum matcha_match_kind each; 0 for a kind without
	 * entries), whether the key fields together form one prefix (fields after a partial
	 * prefix are /0; counter indexes are then results), and whether an entry has a mask and
	 * a priority, which the window then stages and reads back.
	 */
	unsigned match_kinds;
	bool prefix;
	bool masked;
	/* The key is the entry's index (direct tables): the table keeps no key, and a READ
	 * gives none back to compare with what was added. */
	bool key_is_index;

	/*
	 * Takes the kind's descriptor fields from words w[0..7] (ways, levels, prefix store),
	 * and any register of its window that describes it, checks them (MATCHA_ENODEV saying
	 * what is unusable), sets up t->state and, for entries beyond info.size, t->indexes.
	 * Never NULL. On failure what it allocated is left in t->state for `release`.
	 */
	int (*init)(matcha_dev *dev, struct matcha_table *t, const uint32_t *w);
	/* Frees t->state; NULL for a kind that keeps none. */
	void (*release)(struct matcha_table *t);
	/* Empties the shadow, as CLEAR leaves the table; NULL for a kind without one. */
	void (*reset)(struct matcha_table *t);
	/* Rebuilds the (empty) shadow from the hardware, MATCHA_EHW naming the entry when it
	 * holds what the driver could not have written; NULL: the table is left as it is. */
	int (*adopt)(matcha_dev *dev, struct matcha_table *t);

	/*
	 * Entries by match; NULL for a kind without entries (meter arrays, session tables).
	 * add: MATCHA_EEXIST if present, MATCHA_ENOSPC if there is no room. modify: a new
	 * action and data where the entry sits. find: its counter index (exact slot, LPM
	 * result, ternary index, direct key, mem_exact bucket * entries per bucket + slot or
	 * size + stash slot) from the shadow, MATCHA_ENOENT with `op` in the message if it is
	 * absent. shadow_key: whether counter index i (below t->indexes) holds an entry, and
	 * its match.
	 */
	int (*add)(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		   uint8_t action_id, const uint8_t *data, unsigned data_bits);
	int (*modify)(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		      uint8_t action_id, const uint8_t *data, unsigned data_bits);
	int (*remove)(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k);
	int (*find)(matcha_dev *dev, struct matcha_table *t, const char *op,
		    const struct matcha_key *k, uint32_t *index);
	bool (*shadow_key)(const struct matcha_table *t, uint32_t i, struct matcha_key *k);
	/* The layout's range fields of the table (key bit offsets and widths; n may be 0):
	 * checked against the descriptor (MATCHA_ELAYOUT saying how they differ), and with
	 * `apply` taken into the shadow. NULL for a kind without range fields. */
	int (*range_fields)(matcha_dev *dev, struct matcha_table *t, const unsigned *offset,
			    const unsigned *width, unsigned n, bool apply);
	/* The window INDEX of counter index i; NULL where they are the same. */
	uint32_t (*window_index)(const struct matcha_table *t, uint32_t i);
};

extern const struct matcha_kind_ops matcha_exact_ops;
extern const struct matcha_kind_ops matcha_lpm_ops;
extern const struct matcha_kind_ops matcha_ternary_ops;
extern const struct matcha_kind_ops matcha_meter_ops;
extern const struct matcha_kind_ops matcha_session_ops;
extern const struct matcha_kind_ops matcha_direct_ops;
extern const struct matcha_kind_ops matcha_mem_exact_ops;
extern const struct matcha_kind_ops matcha_mem_session_ops;

/* Kind codes are below this: the generated names, indexed by code. */
#define MATCHA_KIND_CODES (sizeof (const char *[])MATCHA_HW_KIND_NAMES / sizeof(const char *))

/* The operations of kind code `kind`, NULL for a code no kind of this driver has. */
const struct matcha_kind_ops *matcha_kind(unsigned kind);
/* The code of the kind called `name` that has entries (ops->add), or 0. */
unsigned matcha_entry_kind_code(const char *name);

/* The window INDEX of a table's counter index `i` (ops->window_index, or i itself). */
uint32_t matcha_window_index(const struct matcha_table *t, uint32_t i);

#endif
