/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha.h - C driver for the Matcha match-action pipeline.
 *
 * The driver discovers the tables of a bitstream from its self-describing block, keeps a
 * shadow copy of every table, places entries itself (cuckoo moves in exact tables, the
 * bucket's first free entry or else the on-chip stash in memory-backed exact tables, the
 * B+tree of LPM tables,
 * priority order in ternary tables) and writes them through each table's control window
 * so that a lookup running at the same time never sees a wrong answer. It keeps per-entry
 * counts with their entry when it moves one, and sets each table's miss action.
 * docs/tables.md is the register and format contract.
 *
 * Conventions:
 *  - Every function that can fail returns 0 (or a non-negative count) on success and a
 *    negative enum matcha_error value on failure; matcha_last_error() then says what was
 *    wrong in words. Nothing is global: all state lives in the matcha_dev handle, and
 *    one handle must not be used by two threads at once.
 *  - Keys, prefixes, masks and action data are passed as big-endian byte strings (most
 *    significant byte first) of ceil(bits/8) bytes; a value narrower than its field is
 *    zero-extended at the most significant end, and bits above the stated width must be
 *    zero.
 *  - The tables are the hardware's: matcha_tables_adopt() rebuilds every shadow from what
 *    the hardware holds, so that a handle continues the work of the handles before it
 *    (matcha-ctl calls it after opening). Without it the shadow copies start empty, as
 *    the tables are after reset or matcha_table_clear(). Two handles must not write one
 *    device's tables at the same time.
 */
#ifndef MATCHA_H
#define MATCHA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The hardware's contract, generated with it (build/rtl/contract/). */
#include "matcha_contract.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Register map major version this driver speaks; any minor version is accepted. */
#define MATCHA_VERSION_MAJOR 1

/* Staging registers hold 16 words: the widest key, mask and action data. */
#define MATCHA_MAX_KEY_BITS 512
#define MATCHA_MAX_DATA_BITS 512
#define MATCHA_MAX_KEY_BYTES (MATCHA_MAX_KEY_BITS / 8)
#define MATCHA_MAX_DATA_BYTES (MATCHA_MAX_DATA_BITS / 8)

/* Cuckoo paths in exact tables are at most this many moves long. */
#define MATCHA_CUCKOO_MAX_MOVES 4

enum matcha_error {
	MATCHA_OK = 0,
	MATCHA_EIO = -1,        /* a register access failed (bus error) */
	MATCHA_ENODEV = -2,     /* no Matcha block there, or its descriptors make no sense */
	MATCHA_EVERSION = -3,   /* register map version this driver does not speak */
	MATCHA_EINVAL = -4,     /* invalid argument */
	MATCHA_ENOTABLE = -5,   /* no table with that index */
	MATCHA_EKIND = -6,      /* the table is of another kind than the call needs */
	MATCHA_E2BIG = -7,      /* key, mask or action data wider than the table takes */
	MATCHA_EEXIST = -8,     /* the entry is already in the table */
	MATCHA_ENOENT = -9,     /* no such entry */
	MATCHA_ENOSPC = -10,    /* table full (exact: no free slot within the cuckoo depth) */
	MATCHA_ENOMEM = -11,    /* host memory allocation failed */
	MATCHA_ETIMEDOUT = -12, /* a table command stayed busy */
	MATCHA_EHW = -13,       /* a table command reported an error in STATUS */
	MATCHA_ENOTSUP = -14,   /* the table (or app block) was built without what the call
				   needs (per-entry counters, a default action, a CONTROL bit) */
	MATCHA_ELAYOUT = -15,   /* the layout file is malformed or belongs to another bitstream,
				   or a by-name call was made without one */
};

/* A fixed description of an error code ("table full", ...); never NULL. */
const char *matcha_strerror(int err);

/*
 * Register access. Addresses are byte offsets into the control window (32-bit aligned);
 * a callback returns 0 on success and anything else on a bus error (SLVERR/DECERR).
 * Backends (Corundum app region, PCI resource file, UIO, simulator) provide these.
 */
struct matcha_regs_ops {
	int (*read32)(void *ctx, uint32_t addr, uint32_t *val);
	int (*write32)(void *ctx, uint32_t addr, uint32_t val);
};

typedef struct matcha_dev matcha_dev;
/* A table of a device (matcha_table_get, matcha_table_at); valid until matcha_close(). */
typedef struct matcha_table matcha_table;

/*
 * Opens a device: reads the self-describing block (magic, version, descriptors) and sets
 * up an empty shadow of every table. Refuses a wrong magic, an unknown major version and
 * descriptors the driver cannot use. `ops` is copied; `ctx` is passed to every callback.
 *
 * As with sqlite3_open(), *devp receives a handle even when opening fails (except on
 * MATCHA_ENOMEM, where it is NULL), so that matcha_last_error() can say why; such a handle
 * has no tables. Close it with matcha_close() in every case.
 */
int matcha_open_ops(const struct matcha_regs_ops *ops, void *ctx, matcha_dev **devp);

/*
 * Opens a device by URI, with one of the built-in backends, then as matcha_open_ops():
 *
 *   mqnic:/dev/mqnic0   a Corundum NIC's character device: the application region
 *                       (region 1, found with the region-info ioctl, mapped at its mmap
 *                       offset 1 << 40, of the size the ioctl reports)
 *   pci:0000:01:00.0    the PCI device's BAR 2, /sys/bus/pci/devices/<BDF>/resource2, mapped
 *                       at offset 0 (BB:DD.F means domain 0000); pci:/path/resourceN maps
 *                       that file instead
 *   sim:PATH            a running simulator's control socket (docs/sim-socket.md); a
 *                       response other than OKAY fails with MATCHA_EIO naming the address
 *                       and the response
 *   serial:/dev/ttyUSB1 the same messages over a serial line (8N1, no flow control) to a
 *                       board's UART bridge, e.g. the Versa board's (README "The Versa
 *                       ECP5 board"); serial:/dev/ttyUSB1@921600 sets the baud rate
 *                       (default 115200)
 *
 * Mapped windows are bounds-checked: an access beyond the mapping fails with MATCHA_EIO,
 * and a table window beyond it fails the open. An unknown scheme or a malformed argument
 * is MATCHA_EINVAL, a device that cannot be opened or mapped MATCHA_ENODEV. As with
 * matcha_open_ops(), *devp receives a handle in every case but MATCHA_ENOMEM; matcha_close()
 * releases the backend too.
 */
int matcha_open(const char *uri, matcha_dev **devp);
void matcha_close(matcha_dev *dev);

/* What went wrong in the last failing call on this handle ("" if nothing failed yet). */
const char *matcha_last_error(const matcha_dev *dev);

uint32_t matcha_version(const matcha_dev *dev);  /* major << 16 | minor */
uint32_t matcha_build_id(const matcha_dev *dev); /* the id in the generator's layout.json */

/* ------------------------------------------------------------------------- tables */

enum matcha_table_kind {
	MATCHA_KIND_EXACT = MATCHA_HW_KIND_EXACT,
	MATCHA_KIND_LPM = MATCHA_HW_KIND_LPM,
	MATCHA_KIND_TERNARY = MATCHA_HW_KIND_TERNARY,
	MATCHA_KIND_METER = MATCHA_HW_KIND_METER,     /* an array of meters (matcha_meter_set) */
	MATCHA_KIND_SESSION = MATCHA_HW_KIND_SESSION, /* a session table (matcha_session_*) */
	MATCHA_KIND_DIRECT = MATCHA_HW_KIND_DIRECT,   /* the key is the entry's index */
	/* exact match in buckets in memory behind an AXI4 port (matcha_mem_exact_*) */
	MATCHA_KIND_MEM_EXACT = MATCHA_HW_KIND_MEM_EXACT,
	/* sessions in buckets in memory behind an AXI4 port (matcha_session_*) */
	MATCHA_KIND_MEM_SESSION = MATCHA_HW_KIND_MEM_SESSION,
};

struct matcha_table_info {
	unsigned kind;      /* enum matcha_table_kind */
	unsigned key_bits;  /* key width */
	unsigned size;      /* exact/ternary/direct/mem_exact: entries; LPM: results (prefixes) */
	unsigned data_bits; /* action data width */
	uint32_t base;      /* byte offset of the table's control window */
	unsigned ways;      /* exact, session: hash ways (2..4), else 0 */
	unsigned levels;    /* LPM: B+tree levels, else 0 */
	unsigned bucket_entries; /* mem_exact, mem_session: entries per bucket
				    (1..MATCHA_HW_MEMX_MAX_SLOTS); size / bucket_entries buckets;
				    else 0 */
	unsigned latency;   /* lookup latency in clocks */
	bool counters;       /* per-entry packet and byte counters (descriptor kind bit 8) */
	bool default_action; /* a settable miss action (descriptor kind bit 9) */
	bool prefix_store;   /* LPM: each result's prefix is kept for read-back (bit 10) */
};

/* Number of descriptors; tables are numbered 0 .. count-1 in descriptor order. */
unsigned matcha_table_count(const matcha_dev *dev);
int matcha_table_info(matcha_dev *dev, unsigned table, struct matcha_table_info *info);

/* Removes every entry and zeroes every per-entry count (hardware CLEAR, then the shadow;
 * a session table's counts start at each session's learning packet instead:
 * matcha_session_flush); the default action stays. Lookups miss while it runs. */
int matcha_table_clear(matcha_dev *dev, unsigned table);

/*
 * Rebuilds the shadow of every table from the hardware with READ commands, so that later
 * adds, modifies, deletes and dumps behave as if this handle had made every change the
 * tables hold: exact tables slot by slot (each key must sit in one of its hash slots, and
 * only once); memory-backed exact tables entry by entry (each key in its own bucket, and
 * only once), their stash slot by slot as an exact table (and no key in its bucket as well);
 * ternary tables entry by entry (valid entries packed from index 0, their
 * priorities read back from PRIORITY and never increasing); LPM tables from the prefix
 * store (each valid result's prefix and length), with the tree read from the root and
 * checked against the boundaries and answers the prefixes give, slot by slot. With a layout loaded, every
 * adopted hardware entry gets a handle (in index order; a ranged rule comes back as one
 * handle per hardware entry). The hardware counts of an index become its entry's counts.
 *
 * A table whose content is inconsistent (or an LPM table with prefixes but no prefix
 * store) is left with an empty shadow and refused: every later call on it but
 * matcha_table_clear() and matcha_table_info() fails with MATCHA_EHW and the reason, which
 * names the table and the entry. The other tables are adopted all the same; the return
 * value is the first failure.
 */
int matcha_tables_adopt(matcha_dev *dev);

/* Hit and miss counts of a table's lookups (64-bit, read through the snapshot latch). */
int matcha_table_counters(matcha_dev *dev, unsigned table, uint64_t *hits, uint64_t *misses);

/*
 * The miss action: what a lookup that matches no entry applies. Tables without one
 * (matcha_table_info().default_action false) fail with MATCHA_ENOTSUP.
 *
 * set_default replaces it atomically; data is data_bits wide (at most the table's action
 * data width, zero-extended). get_default reads it back from the hardware into *action_id
 * and, unless data is NULL, into data as ceil(data_bits/8) big-endian bytes, zero-extended;
 * data_bits must then be at least the table's action data width.
 */
int matcha_table_set_default(matcha_dev *dev, unsigned table, uint8_t action_id,
			     const uint8_t *data, unsigned data_bits);
int matcha_table_get_default(matcha_dev *dev, unsigned table, uint8_t *action_id,
			     uint8_t *data, unsigned data_bits);

/* ------------------------------------------------------------ per-entry counters */

/*
 * Tables built with counters (matcha_table_info().counters) count, for every lookup that
 * hits, one packet and the frame's bytes against the hit's entry index: exact
 * way * (size/ways) + slot, LPM the result index (one per prefix), ternary the entry index.
 * Every call here fails with MATCHA_ENOTSUP on a table without counters.
 *
 * Counts belong to indexes in hardware; the driver keeps them with their entry. An add
 * zeroes the index before the entry is written there; an entry that moves (cuckoo moves,
 * ternary shifts) takes its count with it; a delete drops it. The by-key calls
 * (matcha_exact_counters, matcha_lpm_counters, matcha_ternary_counters) report the count
 * of an entry since it was added or last reset, wherever it sat.
 */

/* Flag of the by-key calls: reset the entry's count to 0 after reading it. No hit is lost
 * between the read and the reset: the next read covers exactly the hits after this one. */
#define MATCHA_COUNTERS_RESET 0x1u

/*
 * Raw counts of one index (0 .. size-1, the entry index a lookup reports), read with one
 * READ command so that the two values are a consistent snapshot. Either pointer may be
 * NULL. For an index that an entry moved away from, this is what was left there, not the
 * entry's count.
 */
int matcha_counters_read(matcha_dev *dev, unsigned table, uint32_t index, uint64_t *packets,
			 uint64_t *bytes);
/* Sets the counts of one index to 0 (ZERO command); the entry there, if any, restarts from
 * 0 in the by-key calls too. */
int matcha_counters_zero(matcha_dev *dev, unsigned table, uint32_t index);

/*
 * The packet and byte counts of one entry, named as in its add call; `flags` is 0 or
 * MATCHA_COUNTERS_RESET. MATCHA_ENOENT if the entry is not in the table. Either pointer may
 * be NULL.
 */
int matcha_exact_counters(matcha_dev *dev, unsigned table, const uint8_t *key,
			  unsigned key_bits, uint64_t *packets, uint64_t *bytes, unsigned flags);
int matcha_lpm_counters(matcha_dev *dev, unsigned table, const uint8_t *prefix,
			unsigned prefix_len, uint64_t *packets, uint64_t *bytes, unsigned flags);
int matcha_ternary_counters(matcha_dev *dev, unsigned table, const uint8_t *value,
			    const uint8_t *mask, unsigned key_bits, uint32_t priority,
			    uint64_t *packets, uint64_t *bytes, unsigned flags);

/* One entry as read back from the hardware (matcha_exact_read, matcha_ternary_read). */
struct matcha_entry {
	bool valid;
	uint8_t action_id;
	uint32_t priority;                   /* ternary only */
	unsigned key_bits;                   /* the table's key width */
	uint8_t key[MATCHA_MAX_KEY_BYTES];   /* big-endian, ceil(key_bits/8) bytes */
	uint8_t mask[MATCHA_MAX_KEY_BYTES];  /* ternary only, same layout as key */
	unsigned data_bits;                  /* the table's action data width */
	uint8_t data[MATCHA_MAX_DATA_BYTES]; /* big-endian, ceil(data_bits/8) bytes */
};

/* ------------------------------------------------------- exact match and session hash */

/* CRC-64/XZ (ECMA-182 polynomial, reflected, init and final XOR all ones). */
uint64_t matcha_crc64_xz(const uint8_t *p, size_t n);

/*
 * Slot of a key in way `way` of an exact table with `slots` slots per way (a power of two,
 * at most 65536): (crc64_xz(key) >> 16*way) & (slots - 1). The key is ceil(key_bits/8)
 * big-endian bytes; bits above key_bits are ignored. Way 0 with slots = buckets (a power
 * of two) is also a key's bucket in a memory-backed exact table.
 */
uint32_t matcha_exact_index(const uint8_t *key_be, unsigned key_bits, unsigned way,
			    unsigned slots);

/*
 * The session table's hash (docs/sessions.md, "Slots"): h through one round of PRESENT's
 * S-box on each nibble and its bit permutation (bit i to 16*i mod 63, bit 63 stays).
 */
uint64_t matcha_session_mix(uint64_t h);

/* Slot of a session key in way `way` of a session table with `slots` slots per way:
 * (matcha_session_mix(crc64_xz(key)) >> 16*way) & (slots - 1); the key as for
 * matcha_exact_index. */
uint32_t matcha_session_index(const uint8_t *key_be, unsigned key_bits, unsigned way,
			      unsigned slots);

/* --------------------------------------------------------------------- exact tables */

/*
 * Adds key -> (action_id, data). The key is key_bits wide (at most the table's key width;
 * narrower keys are zero-extended), the data data_bits wide (at most the table's). Takes a
 * free candidate slot in way order, else moves entries along the shortest cuckoo path of
 * at most MATCHA_CUCKOO_MAX_MOVES moves, copying each moved entry before its old slot is
 * reused. MATCHA_EEXIST if the key is present, MATCHA_ENOSPC if no path exists.
 */
int matcha_exact_add(matcha_dev *dev, unsigned table, const uint8_t *key, unsigned key_bits,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits);
int matcha_exact_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits);
/* Gives a present key a new action and data: one WRITE of its slot, counts kept. */
int matcha_exact_modify(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits, uint8_t action_id, const uint8_t *data,
			unsigned data_bits);

/* Where the key sits, from the shadow: *index = way * (size/ways) + slot. */
int matcha_exact_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			   unsigned key_bits, uint32_t *index);

/* Reads entry `index` back from the hardware (READ command). */
int matcha_exact_read(matcha_dev *dev, unsigned table, uint32_t index,
		      struct matcha_entry *entry);

/* ------------------------------------------------------ memory-backed exact tables */

/*
 * Memory-backed exact tables (MATCHA_KIND_MEM_EXACT, docs/tables.md "Memory-backed exact
 * tables") keep their entries in DRAM or HBM, in size / bucket_entries buckets of
 * bucket_entries entries. A key's bucket is matcha_exact_index(key, key_bits, 0, buckets):
 * the CRC-64/XZ of the key masked with buckets - 1 (one choice: nothing in memory moves).
 * A key whose bucket is full goes to the table's on-chip stash, when the unit has one: a
 * 4-way cuckoo table as exact tables are (placed and moved by the same rules), looked up
 * beside the bucket. A key is in its bucket or in the stash, never both. An entry is named
 * by its window INDEX, which is also the entryIndex of a lookup's result: bucket <<
 * MATCHA_HW_MEMX_INDEX_SLOT_BITS | slot, and for the stash's entries the INDEXes after the
 * last bucket's: (buckets << MATCHA_HW_MEMX_INDEX_SLOT_BITS) + way * (stash / 4) + slot.
 *
 * Keys and data are as for exact tables. The driver places entries from its shadow of
 * every entry's key, so an add or a lookup in software reads no memory; every add, modify
 * and delete is one WRITE of one entry, which the unit writes into its bucket touching that
 * entry's bytes alone, so a lookup sees the entry as before or as after. A WRITE that ends
 * with an error in STATUS (the memory refused the write) is MATCHA_EHW naming the entry
 * and the error; the driver's shadow is then as before the call, and a retry writes the
 * same entry again (the memory may hold the old entry or the new one meanwhile).
 *
 * add: the key goes into the first free entry of its bucket, else into the stash (a free
 * candidate slot, else the shortest chain of at most MATCHA_CUCKOO_MAX_MOVES moves, each
 * moved entry copied before its old slot is reused: one WRITE each); MATCHA_EEXIST if it is
 * present (in the bucket or the stash), MATCHA_ENOSPC naming the bucket if every entry of it
 * holds another key and the stash has no room (or the table has none).
 */
int matcha_mem_exact_add(matcha_dev *dev, unsigned table, const uint8_t *key,
			 unsigned key_bits, uint8_t action_id, const uint8_t *data,
			 unsigned data_bits);
/* Gives a present key a new action and data: one WRITE of the entry where it sits (bucket
 * or stash). */
int matcha_mem_exact_modify(matcha_dev *dev, unsigned table, const uint8_t *key,
			    unsigned key_bits, uint8_t action_id, const uint8_t *data,
			    unsigned data_bits);
/* Removes a present key: one WRITE of its entry, invalid; the entry is free again. */
int matcha_mem_exact_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			    unsigned key_bits);
/* Where the key sits, from the shadow: *index = bucket << MATCHA_HW_MEMX_INDEX_SLOT_BITS |
 * slot, or its stash entry's INDEX. MATCHA_ENOENT if it is not in the table. */
int matcha_mem_exact_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			       unsigned key_bits, uint32_t *index);
/* Reads entry `index` (bucket << MATCHA_HW_MEMX_INDEX_SLOT_BITS | slot, or a stash entry's
 * INDEX) back from the memory or the stash (READ command); MATCHA_EINVAL for an INDEX the
 * table does not have. */
int matcha_mem_exact_read(matcha_dev *dev, unsigned table, uint32_t index,
			  struct matcha_entry *entry);

/* ----------------------------------------------------------------------- LPM tables */

/*
 * Adds prefix/prefix_len -> (action_id, data). `prefix` is ceil(key_bits/8) big-endian
 * bytes of the table's key width; bits beyond prefix_len must be zero. The result is
 * written first, then the prefix's boundaries enter the tree (each keeping every answer),
 * then the leaves over its range take it, so a lookup answers as before or as after the
 * add. MATCHA_EEXIST if the prefix is present, MATCHA_ENOSPC only when the table already
 * holds `size` prefixes (any `size` prefixes fit).
 */
int matcha_lpm_add(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		   unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		   unsigned data_bits);
/* Removes a prefix: its intervals fall back to the longest shorter prefix, then the
 * boundaries no prefix needs any more leave the tree, then the result is freed. */
int matcha_lpm_delete(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len);

/* Gives a present prefix a new action and data: one WRITE of its result, counts kept. */
int matcha_lpm_modify(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		      unsigned data_bits);
/* Reads a prefix's result back from the hardware (READ command): valid bit, action id and
 * data; entry->key is the prefix (a result holds no key). *result (unless NULL) is its
 * result index. MATCHA_ENOENT if the prefix is not in the table. */
int matcha_lpm_read(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		    unsigned prefix_len, uint32_t *result, struct matcha_entry *entry);

/*
 * Loading an empty table at once (docs/tables.md, "Loading an LPM table at once"). After
 * matcha_lpm_load_begin, adds (matcha_lpm_add, and by name) check each prefix as always
 * (MATCHA_EEXIST, MATCHA_ENOSPC) and keep it in the driver only; the table's other calls on
 * a prefix fail with MATCHA_EINVAL until matcha_lpm_load_end. That builds the tree of every
 * prefix added, its nodes as full as an even share allows, writes the results, then the
 * nodes from the leaves up where no lookup reaches them, then the root: a lookup answers
 * from the empty table until that one WRITE and from the whole table after it. A tree node
 * is written once, not several times a prefix. MATCHA_EEXIST from load_begin if the table
 * holds prefixes (add them one by one then), MATCHA_EINVAL if a load is under way;
 * matcha_table_clear ends a load with nothing written. If load_end fails before its first
 * write (MATCHA_ENOMEM) the load goes on; if a write fails, the table is refused (every call
 * but clear and info fails with that error) until matcha_table_clear.
 */
int matcha_lpm_load_begin(matcha_dev *dev, unsigned table);
int matcha_lpm_load_end(matcha_dev *dev, unsigned table);

/* One level of the table's B+tree (docs/tables.md, "LPM"), level 0 the root's. */
struct matcha_lpm_level {
	unsigned fanout; /* slots a node */
	unsigned nodes;  /* nodes the level has */
	unsigned used;   /* nodes in the tree now */
	unsigned slots;  /* slots in use over those nodes */
	bool real;       /* at or below the root (levels above it are single-slot nodes) */
	bool in_memory;  /* one of the lowest levels, kept in the card's memory */
	unsigned pointer_bits; /* of a slot's child or result pointer, the table's */
};
int matcha_lpm_level(matcha_dev *dev, unsigned table, unsigned level,
		     struct matcha_lpm_level *out);

/*
 * Node memories in the hardware format of docs/tables.md: words[i] holds level i's
 * nodes[i] nodes of node_words DATA words each (slot j at bit j * (LPM_POINTER_SHIFT +
 * pointer_bits + key_bits)); a lookup's answer is a result index.
 */
struct matcha_lpm_nodes {
	unsigned key_bits;
	unsigned pointer_bits;
	unsigned fanout;
	unsigned levels;
	unsigned node_words;
	const uint32_t *const *words;
	const unsigned *nodes;
};

/*
 * Walks node memories as the hardware does: at each level the last valid slot whose key
 * is not above the key (slot 0 whatever its key). Returns 0 with *result set on a hit,
 * MATCHA_ENOENT on a miss, MATCHA_EINVAL if a pointer leaves its level.
 */
int matcha_lpm_walk_nodes(const struct matcha_lpm_nodes *img, const uint8_t *key,
			  uint32_t *result);

/* Longest-prefix match over the shadow: *result is the result index the hardware gives. */
int matcha_lpm_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			 uint32_t *result);

/* ------------------------------------------------------------------- ternary tables */

/*
 * Adds value/mask -> (action_id, data). A key matches where (key & mask) == value; value
 * bits outside the mask must be zero. Entries are kept in index order by priority, higher
 * first (the lowest matching index wins in hardware); equal priorities keep insertion
 * order. Entries are shifted with copies made before their old index is reused.
 * MATCHA_EEXIST if the same value, mask and priority are present.
 */
int matcha_ternary_add(matcha_dev *dev, unsigned table, const uint8_t *value,
		       const uint8_t *mask, unsigned key_bits, uint32_t priority,
		       uint8_t action_id, const uint8_t *data, unsigned data_bits);
int matcha_ternary_delete(matcha_dev *dev, unsigned table, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t priority);

/* Gives a present rule a new action and data: one WRITE at its index, counts kept. */
int matcha_ternary_modify(matcha_dev *dev, unsigned table, const uint8_t *value,
			  const uint8_t *mask, unsigned key_bits, uint32_t priority,
			  uint8_t action_id, const uint8_t *data, unsigned data_bits);
/* Where a rule sits, from the shadow (its entry index). */
int matcha_ternary_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *value,
			     const uint8_t *mask, unsigned key_bits, uint32_t priority,
			     uint32_t *index);

/* Reads entry `index` back from the hardware (READ command). */
int matcha_ternary_read(matcha_dev *dev, unsigned table, uint32_t index,
			struct matcha_entry *entry);

/*
 * Ranges of a ternary key field (port ranges): the inclusive range [lo, hi] of a field of
 * `bits` bits (1..32) as the fewest value/mask pairs whose matches together are exactly
 * the range and never overlap, in ascending order. Add one ternary entry per pair (same
 * priority and action) with the pair shifted to the field's position in the key; a key
 * made of several ranged fields takes the cross product. Mask bits are set where the value
 * must match; value bits outside the mask are 0.
 *
 * At most 2*bits - 2 pairs for bits >= 2 (1 for bits = 1): MATCHA_RANGE_MAX_PREFIXES always
 * suffices. Returns the number of pairs written to out, MATCHA_EINVAL if bits is not in
 * 1..32 or not lo <= hi < 2^bits, MATCHA_ENOSPC (out untouched) if more than `max` are
 * needed.
 */
#define MATCHA_RANGE_MAX_PREFIXES 62
struct matcha_prefix {
	uint32_t value;
	uint32_t mask;
};
int matcha_range_to_prefixes(uint32_t lo, uint32_t hi, unsigned bits,
			     struct matcha_prefix *out, unsigned max);

/* ------------------------------------------------------------------- session tables */

/*
 * The stateful session table (docs/sessions.md) learns sessions in the data path; the host
 * reads, deletes and flushes them, sets the timeouts, the tick and the full-table policy,
 * and reads the statistics. A session's key is canonical: zone, protocol, then the lower
 * (address, port) pair and the higher one, so both directions of a flow share it. The
 * functions serve both kinds: MATCHA_KIND_SESSION (on chip, `ways` ways) and
 * MATCHA_KIND_MEM_SESSION (in memory, buckets of `bucket_entries`; docs/sessions.md,
 * "Sessions in memory"), which keeps no per-session counts.
 */

/* TCP and UDP session states (FLAGS bits 15..8 of a READ); 0 is no session. */
enum matcha_session_state {
	/* learned from a SYN */
	MATCHA_SESSION_SYN_SENT = MATCHA_HW_SESSION_STATE_SYN_SENT,
	/* the SYN-ACK came back */
	MATCHA_SESSION_SYN_ACK = MATCHA_HW_SESSION_STATE_SYN_ACK,
	/* the initiator acknowledged it */
	MATCHA_SESSION_ESTABLISHED = MATCHA_HW_SESSION_STATE_ESTABLISHED,
	/* a FIN in either direction */
	MATCHA_SESSION_CLOSING = MATCHA_HW_SESSION_STATE_CLOSING,
	/* an RST in either direction */
	MATCHA_SESSION_RESET = MATCHA_HW_SESSION_STATE_RESET,
	/* learned from a UDP packet */
	MATCHA_SESSION_UDP = MATCHA_HW_SESSION_STATE_UDP,
};
#define MATCHA_SESSION_STATES (MATCHA_HW_SESSION_STATE_UDP + 1) /* state codes are below this */

/* Address bits of IPv4 session keys and their zone width: a 128-bit key. */
#define MATCHA_SESSION_IPV4_KEY_BITS 128

/* A session as read back from the hardware. */
struct matcha_session {
	bool valid;
	unsigned state;   /* enum matcha_session_state */
	bool initiator_high; /* the first packet came from the higher (address, port) pair */
	uint32_t age;     /* ticks since the session's last packet */
	unsigned key_bits;
	uint8_t key[MATCHA_MAX_KEY_BYTES]; /* canonical key, big-endian */
	uint64_t packets, bytes; /* since the session was learned; 0 without a session */
};

/* Table-wide statistics; every count is 64-bit, read through the snapshot latch. */
struct matcha_session_stats {
	uint32_t occupancy;     /* sessions in the table */
	uint64_t learned;       /* sessions the data path created */
	uint64_t insert_failed; /* packets allowed to learn whose key had no free way */
	uint64_t aged;          /* sessions the scanner removed */
	uint64_t hits, misses;  /* packets that found / did not find a session */
	uint64_t late;          /* mem_session: packets whose bucket was not back in time */
	uint64_t busy;          /* mem_session: packets whose change found no room to be written */
};

/* What happens to a packet that could learn but finds no free way (CONTROL bit 0). */
enum matcha_session_policy {
	MATCHA_SESSION_PUNT = 0,
	MATCHA_SESSION_DROP = 1,
};

/*
 * The canonical 128-bit key of an IPv4 packet in `zone` (24 bits: a VNI or a VRF) into
 * key[16], and whether the packet runs from the higher pair to the lower (*reversed, may
 * be NULL). Addresses and ports are host-order numbers. MATCHA_EINVAL if zone needs more
 * than 24 bits.
 */
int matcha_session_key_ipv4(uint32_t zone, uint8_t protocol, uint32_t src_addr,
			    uint16_t src_port, uint32_t dst_addr, uint16_t dst_port,
			    uint8_t key[16], bool *reversed);

/* Entry `index` (on chip: way * (size/ways) + slot; in memory: bucket <<
 * MATCHA_HW_MEMX_INDEX_SLOT_BITS | slot): key, state, age and counts, one READ. */
int matcha_session_read(matcha_dev *dev, unsigned table, uint32_t index,
			struct matcha_session *session);
/* Where the session with this canonical key is: reads its candidate slots.
 * MATCHA_ENOENT if it is in none. */
int matcha_session_find(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits, uint32_t *index);
/* Removes the session with this key. The hardware removes entry `index` only if it still
 * holds the key, so a session learned into the slot in the meantime stays. MATCHA_ENOENT
 * if the key is in no candidate slot. */
int matcha_session_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			  unsigned key_bits);
/* Removes every session (CLEAR). Sessions learned while the flush runs may stay, their
 * counts from their learning packet; the entries emptied read no counts. */
int matcha_session_flush(matcha_dev *dev, unsigned table);
int matcha_session_stats(matcha_dev *dev, unsigned table, struct matcha_session_stats *stats);

/* Idle timeout of a state in ticks (1..65534; 65535: never). */
int matcha_session_set_timeout(matcha_dev *dev, unsigned table, unsigned state, uint32_t ticks);
int matcha_session_get_timeout(matcha_dev *dev, unsigned table, unsigned state, uint32_t *ticks);
/* Length of a tick in clocks (at least 1), and the current tick (16 bits, wrapping). */
int matcha_session_set_tick(matcha_dev *dev, unsigned table, uint32_t clocks);
int matcha_session_now(matcha_dev *dev, unsigned table, uint32_t *tick);
/* mem_session only: the memory's answers between two buckets' reads by the aging scanner,
 * which reads in clocks without a packet (0 stops it; docs/sessions.md, "Aging, CLEAR and
 * reset"): clocks on a memory that answers a read a clock, more on one the table's lookups
 * have found slower, so that under traffic the scanner takes about 1/clocks of the reads the
 * memory serves. A sweep of the table takes buckets * clocks at the least; MATCHA_EKIND for
 * an on-chip session table. */
int matcha_session_set_scan_interval(matcha_dev *dev, unsigned table, uint32_t clocks);
int matcha_session_get_scan_interval(matcha_dev *dev, unsigned table, uint32_t *clocks);
int matcha_session_set_policy(matcha_dev *dev, unsigned table, enum matcha_session_policy p);
int matcha_session_get_policy(matcha_dev *dev, unsigned table, enum matcha_session_policy *p);
/* ------------------------------------------------------------------ the layout file */

/*
 * The generator's layout.json names what the self-describing block only numbers: tables,
 * key fields, actions and action parameters (docs/pipeline.md, "layout.json program").
 * matcha_layout_load() reads it and refuses it, with MATCHA_ELAYOUT and a message saying
 * what differs, when its buildId is not the hardware's BUILD_ID or when its tables
 * disagree with the descriptors (count, kind, widths, size, ways, levels and nodes,
 * latency, counters, default action). A handle has at most one layout; loading another
 * replaces it (and forgets the entry handles below).
 */

/* Limits of a layout the driver takes. */
#define MATCHA_MAX_FIELDS 16 /* key fields of a table */
#define MATCHA_MAX_PARAMS 32 /* parameters of an action */

struct matcha_param_info {
	const char *name;
	unsigned width;
	unsigned offset; /* lowest bit in the action data */
};

struct matcha_action_info {
	const char *name;
	uint8_t id;
	unsigned nparams;
	const struct matcha_param_info *params; /* first parameter in the most significant bits */
};

struct matcha_field_info {
	const char *name; /* the PHV field; a firstValid list as "hdr.tcp.srcPort|hdr.udp.srcPort" */
	unsigned width;
	unsigned offset;  /* lowest bit in the key */
	bool range;       /* a ternary range field: an entry gives it lo..hi (docs/tables.md) */
};

struct matcha_table_layout {
	const char *name;
	unsigned table; /* descriptor index */
	unsigned kind;  /* enum matcha_table_kind */
	unsigned key_bits, data_bits, size;
	unsigned nfields;
	const struct matcha_field_info *fields; /* first field in the most significant bits */
	unsigned nactions;
	const struct matcha_action_info *actions;
	const struct matcha_action_info *default_action; /* the reset miss action, or NULL */
};

int matcha_layout_load(matcha_dev *dev, const char *path);
/* The same from text in memory; `name` stands for the file in messages. */
int matcha_layout_load_text(matcha_dev *dev, const char *text, size_t len, const char *name);

/* The program's name, or NULL without a layout. */
const char *matcha_layout_program(const matcha_dev *dev);
/* A table's names, or NULL without a layout or for a descriptor that is no table of it
 * (meter arrays: matcha_layout_meter). Valid until the layout is replaced or the handle
 * closed. */
const struct matcha_table_layout *matcha_layout_table(const matcha_dev *dev, unsigned table);
/* The descriptor index of the table called `name` (MATCHA_ENOTABLE if none). */
int matcha_table_by_name(matcha_dev *dev, const char *name, unsigned *table);
/*
 * Meter arrays: the program's "meters" list names them (docs/pipeline.md). Every descriptor
 * is described exactly once, by a table, a meter array or a session table; a meter array is checked
 * against its descriptor (kind meter, size, latency). A layout without "meters" describes
 * a bitstream without meter arrays.
 */
struct matcha_meter_layout {
	const char *name;
	unsigned table; /* descriptor index */
	unsigned size;  /* meters */
};
/* A meter array's names, or NULL without a layout or for a descriptor that is no meter
 * array of it. Valid until the layout is replaced or the handle closed. */
const struct matcha_meter_layout *matcha_layout_meter(const matcha_dev *dev, unsigned table);
/* The descriptor index of the meter array called `name` (MATCHA_ENOTABLE if none). */
int matcha_meter_by_name(matcha_dev *dev, const char *name, unsigned *table);
/*
 * Session tables: the program's "sessions" list names them (docs/pipeline.md, "The session
 * stage"); each is checked against its descriptor (kind session, key width, size, ways,
 * latency). A layout without "sessions" describes a bitstream without session tables.
 */
struct matcha_session_layout {
	const char *name;
	unsigned table; /* descriptor index */
	unsigned size;  /* sessions */
	unsigned ways;
	const char *after; /* the table whose stage the session stage follows */
};
/* A session table's names, or NULL without a layout or for a descriptor that is no
 * session table of it. Valid until the layout is replaced or the handle closed. */
const struct matcha_session_layout *matcha_layout_session(const matcha_dev *dev, unsigned table);
/* The descriptor index of the session table called `name` (MATCHA_ENOTABLE if none). */
int matcha_session_by_name(matcha_dev *dev, const char *name, unsigned *table);
/* The action of a table called `name`, or NULL. */
const struct matcha_action_info *matcha_action_by_name(const struct matcha_table_layout *tl,
						       const char *name);

/* ------------------------------------------------------------- entries by name */

/*
 * Entries named as in the layout and as simple_switch_CLI writes them: a match per key
 * field, an action by name and a value per action parameter, which the driver packs into
 * the action data by the parameters' offsets. Each added entry gets a handle (per table,
 * counting from 0, not reused until the table is cleared); the handle is what modify,
 * delete, read and the counters take.
 *
 * Values are unsigned numbers of up to 512 bits (struct matcha_value, big-endian); a value
 * that does not fit its field or parameter fails with MATCHA_E2BIG, naming both.
 *
 * Match kinds by table kind:
 *  - exact tables: EXACT on every field;
 *  - LPM tables: EXACT or LPM (value/prefix_len) fields that together form one prefix of
 *    the key: the fields after a partial prefix must be /0;
 *  - direct tables: EXACT on every field; the key they form is the entry's index, so a key
 *    from the table's size up is refused (MATCHA_EINVAL);
 *  - memory-backed exact tables: EXACT on every field, placed as matcha_mem_exact_add();
 *  - ternary tables: EXACT, LPM, TERNARY (value, mask; value bits outside the mask must be
 *    0) and RANGE (value..high inclusive, fields of at most 32 bits), and a priority
 *    (higher wins). A RANGE is expanded to prefixes by matcha_range_to_prefixes(), several
 *    ranged fields to the cross product: one handle, several hardware entries (added all
 *    or none; a modify rewrites each with one WRITE). On a range field (the layout's
 *    "range": true, docs/tables.md "Range fields") a RANGE is one hardware entry, EXACT v
 *    the range v..v, and an LPM or TERNARY match whose mask is a prefix of the field the
 *    range it covers (0&&&0: the whole field); another mask fails with MATCHA_EINVAL. A
 *    field whose boundary slots run out fails with MATCHA_ENOSPC before anything is
 *    written. matcha_ternary_add() takes a range field's lo in the value and hi in the mask.
 * Entries written through the index-based calls above have no handle.
 */
#define MATCHA_VALUE_BYTES 64
struct matcha_value {
	uint8_t be[MATCHA_VALUE_BYTES]; /* big-endian: be[63] holds bits 7..0 */
};

enum matcha_match_kind {
	MATCHA_MATCH_EXACT = 1,
	MATCHA_MATCH_LPM,
	MATCHA_MATCH_TERNARY,
	MATCHA_MATCH_RANGE,
};

struct matcha_match {
	unsigned kind;            /* enum matcha_match_kind */
	struct matcha_value value; /* RANGE: the low end */
	struct matcha_value mask;  /* TERNARY */
	struct matcha_value high;  /* RANGE: the high end */
	unsigned prefix_len;      /* LPM */
};

/* No priority (exact and LPM tables). */
#define MATCHA_NO_PRIORITY (-1)

int matcha_entry_add(matcha_dev *dev, const char *table, const struct matcha_match *match,
		     unsigned nmatch, const char *action, const struct matcha_value *params,
		     unsigned nparams, int64_t priority, uint32_t *handle);
/* A new action and parameters for an entry; its match, priority and counts stay. */
int matcha_entry_modify(matcha_dev *dev, const char *table, uint32_t handle,
			const char *action, const struct matcha_value *params, unsigned nparams);
int matcha_entry_delete(matcha_dev *dev, const char *table, uint32_t handle);

/* An entry as read back from the hardware (matcha_entry_read). */
struct matcha_entry_view {
	uint32_t handle;
	unsigned nmatch;
	const struct matcha_match *match; /* as added; valid until the entry changes */
	const struct matcha_action_info *action;
	unsigned nparams;
	struct matcha_value params[MATCHA_MAX_PARAMS];
	bool has_priority;
	uint32_t priority;
	unsigned hw_entries; /* hardware entries it takes (ternary ranges: more than 1) */
	uint32_t index;      /* exact: slot; LPM: result; ternary: the first entry's index;
				direct: the key; mem_exact: bucket * bucket_entries + slot,
				a stash entry size + way * (stash / 4) + slot */
};

/*
 * Reads an entry back with READ commands and decodes its action and parameters from what
 * the hardware holds; MATCHA_EHW if the hardware does not hold what was written (key,
 * mask, priority or valid bit), or an action id the layout does not name.
 */
int matcha_entry_read(matcha_dev *dev, const char *table, uint32_t handle,
		      struct matcha_entry_view *view);
/* The lowest handle >= from in use, for walking a table; MATCHA_ENOENT past the last. */
int matcha_entry_next(matcha_dev *dev, const char *table, uint32_t from, uint32_t *handle);
/* An entry's packet and byte counts, summed over its hardware entries; flags as in
 * matcha_exact_counters. */
int matcha_entry_counters(matcha_dev *dev, const char *table, uint32_t handle,
			  uint64_t *packets, uint64_t *bytes, unsigned flags);

/*
 * Table handles: the entry calls above without the table's name on every call. A handle
 * comes from matcha_table_get (a table of the layout, by name) or matcha_table_at (any
 * descriptor, by index: the entry calls then need the layout to name it as a table) and
 * stays valid until matcha_close(); a failing call leaves its message in the device's
 * matcha_last_error(). matcha_table_entry_X(table, ...) is matcha_entry_X(dev, name, ...).
 */
/* *table is NULL on failure. */
int matcha_table_get(matcha_dev *dev, const char *name, matcha_table **table);
int matcha_table_at(matcha_dev *dev, unsigned index, matcha_table **table);
unsigned matcha_table_index(const matcha_table *table); /* its descriptor index */

int matcha_table_entry_add(matcha_table *table, const struct matcha_match *match,
			   unsigned nmatch, const char *action, const struct matcha_value *params,
			   unsigned nparams, int64_t priority, uint32_t *handle);
int matcha_table_entry_modify(matcha_table *table, uint32_t handle, const char *action,
			      const struct matcha_value *params, unsigned nparams);
int matcha_table_entry_delete(matcha_table *table, uint32_t handle);
int matcha_table_entry_read(matcha_table *table, uint32_t handle,
			    struct matcha_entry_view *view);
int matcha_table_entry_next(matcha_table *table, uint32_t from, uint32_t *handle);
int matcha_table_entry_counters(matcha_table *table, uint32_t handle, uint64_t *packets,
				uint64_t *bytes, unsigned flags);

/* One entry of a bulk add: the arguments of matcha_table_entry_add. */
struct matcha_entry_spec {
	const struct matcha_match *match;
	unsigned nmatch;
	const char *action;
	const struct matcha_value *params;
	unsigned nparams;
	int64_t priority; /* MATCHA_NO_PRIORITY on exact and LPM tables */
};

/*
 * Adds entries[0..n-1] in order, handles[i] receiving entry i's handle. Not all or
 * nothing: it stops at the first entry that fails, with every entry before it added and
 * none after it tried. *added is then the failed entry's position (n when all were
 * added), and matcha_last_error() says "entry I of N: " and why that entry failed (the
 * entry itself is all or nothing, as with matcha_table_entry_add).
 */
int matcha_table_entries_add(matcha_table *table, const struct matcha_entry_spec *entries,
			     size_t n, uint32_t *handles, size_t *added);

/* The miss action by name (matcha_table_set_default, matcha_table_get_default). */
int matcha_default_set(matcha_dev *dev, const char *table, const char *action,
		       const struct matcha_value *params, unsigned nparams);
int matcha_default_get(matcha_dev *dev, const char *table,
		       const struct matcha_action_info **action, struct matcha_value *params);

/* --------------------------------------------------------------------------- meters */

/*
 * Meter arrays (MATCHA_KIND_METER): `size` meters, each an RFC 2697 single-rate or RFC 2698
 * two-rate three-colour marker, set in P4Runtime MeterConfig terms. The hardware counts
 * tokens per clock tick; the driver converts rates with the clock frequency of the
 * pipeline, which the handle must be told first (matcha_set_clock_hz). docs/tables.md
 * ("Meters") has the hardware's units and resolution.
 */

/* The pipeline's clock in Hz (e.g. 250000000), needed by the meter calls; 0 is refused. */
int matcha_set_clock_hz(matcha_dev *dev, uint64_t hz);

#define MATCHA_METER_TWO_RATE 0x1u    /* RFC 2698 trTCM; without it RFC 2697 srTCM */
#define MATCHA_METER_COLOR_AWARE 0x2u /* honour the packet's colour so far */
#define MATCHA_METER_PACKETS 0x4u     /* rates and bursts count packets, not bytes */

struct matcha_meter_config {
	unsigned flags;  /* MATCHA_METER_* */
	uint64_t cir;    /* committed rate, bytes (or packets) per second */
	uint64_t cburst; /* CBS, bytes (or packets) */
	uint64_t pir;    /* two-rate: PIR, at least cir; single-rate: must be 0 */
	uint64_t pburst; /* two-rate: PBS; single-rate: EBS */
};

/*
 * Sets meter `index` (0 .. size-1) and fills both its buckets; cfg NULL unconfigures it
 * (an unconfigured meter, as after reset or matcha_table_clear, marks every packet green).
 * The RFCs' rules are enforced: two-rate needs pir >= cir and both bursts > 0, single-rate
 * pir == 0 and cburst + pburst > 0 (MATCHA_EINVAL otherwise). MATCHA_E2BIG if a burst or rate
 * is beyond what the hardware holds. Rates are rounded up to the hardware's units, so the
 * buckets never fill slower than configured; MATCHA_EINVAL if a non-zero rate cannot be
 * represented within 0.1 % (rates far below the burst: the bucket would take longer to fill
 * than the hardware's resolution allows). matcha_last_error() says which value and the
 * limit.
 */
int matcha_meter_set(matcha_dev *dev, unsigned table, uint32_t index,
		     const struct matcha_meter_config *cfg);

/*
 * Reads meter `index` back: its configuration (rates as the hardware holds them, rounded
 * to the nearest unit per second) and, unless NULL, the tokens now in its two buckets
 * (committed; peak or excess), rounded down to whole bytes or packets. MATCHA_ENOENT for an
 * unconfigured meter (cfg and tokens are then zeroed).
 */
int matcha_meter_get(matcha_dev *dev, unsigned table, uint32_t index,
		     struct matcha_meter_config *cfg, uint64_t *committed_tokens,
		     uint64_t *peak_tokens);

/* ------------------------------------------------------ the Corundum application block */

/*
 * Matcha's Corundum application block (ip/corundum/README.md, "Control: the app BAR") has
 * registers of its own at MATCHA_HW_APP_BASE of the app BAR, after the pipeline's window.
 * The calls below first check that APP_ID there reads MATCHA_HW_APP_ID_VALUE; a device
 * without the block (the simulator, a board, a window that ends before it) is
 * MATCHA_ENODEV, with the device and what its APP_ID read (or why it could not be read).
 */

/* The bits CONTROL defines: host frames through the pipeline; the CPU port ("The CPU port
 * on a card": punted frames to the host and packet-outs from it behind the CPU header). */
#define MATCHA_APP_CONTROL_BITS (MATCHA_HW_APP_CONTROL_TX_PIPELINE | MATCHA_HW_APP_CONTROL_CPU_PORT)

/*
 * Reads CONTROL, clears the bits of `clear` and sets those of `set` (one write, made only
 * when that changes something; every other bit is written back as it was read), and gives
 * CONTROL as read back afterwards in *now unless now is NULL: set = clear = 0 only reads.
 * A bit outside MATCHA_APP_CONTROL_BITS, or in both set and clear, is MATCHA_EINVAL before
 * any register access; a bit of `set` that does not read back set (a block older than the
 * bit) is MATCHA_ENOTSUP.
 */
int matcha_app_control(matcha_dev *dev, uint32_t set, uint32_t clear, uint32_t *now);

/* The block's packet-out counters (32 bits, wrapping; ip/corundum/README.md). */
struct matcha_app_packet_outs {
	uint32_t taken;      /* PACKET_OUTS: into the pipeline (type 2) or to the MAC (type 3) */
	uint32_t wrong_port; /* PACKET_OUT_WRONG_PORT: refused for their port */
	uint32_t malformed;  /* PACKET_OUT_MALFORMED: no frame behind the header, unknown type */
};
int matcha_app_packet_outs(matcha_dev *dev, struct matcha_app_packet_outs *counts);

#ifdef __cplusplus
}
#endif

#endif /* MATCHA_H */
