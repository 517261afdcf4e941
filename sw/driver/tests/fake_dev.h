/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Matcha control window in memory, for the unit tests: the self-describing block and a
 * window per table with staging registers and WRITE/READ/CLEAR commands acting on entry
 * arrays laid out as docs/tables.md says; for tables with per-entry counters, the counter
 * memory, ZERO and the PACKETS/BYTES registers that READ latches; for tables with a default
 * action, DEFAULT and READ_DEFAULT; for LPM tables with a prefix store, the prefix (KEY) and
 * length (PRIORITY) written with each result. Unmapped addresses fail like SLVERR, and so do the
 * counter registers of a table without counters. A hook can run after every register
 * write, to inspect the table memory between writes (and to count hits with fake_hit).
 * A meter (kind 4) WRITE fills the levels (DATA words 7..10) from the bursts, as the
 * hardware fills both buckets; a test may change them in `entries` before a READ. A direct
 * table's (kind 6) WRITE keeps FLAGS and DATA only, so its READ gives KEY, MASK and
 * PRIORITY back as 0. A memory-backed exact table (kind 7) keeps its entries as bytes in a
 * memory of buckets, as docs/tables.md lays them out ("Memory-backed exact tables"), and
 * beside them the entries of its on-chip stash when it has one (cfg.stash).
 */
#include <stdbool.h>
#ifndef FAKE_DEV_H
#define FAKE_DEV_H

#include <stdint.h>

#include "matcha.h"

#define FAKE_MAX_TABLES 8
#define FAKE_MAX_LEVELS 64
/* Words of one LPM node in the fake's memory: all of DATA. */
#define FAKE_NODE_WORDS MATCHA_HW_WIN_STAGING_WORDS
#define FAKE_MAX_RANGES 4
#define FAKE_MAX_SLOTS 64

/* FLAGS with action id `a` (or a session's state), valid bit clear. */
#define FAKE_FLAGS_ACTION(a) ((uint32_t)(a) << MATCHA_HW_FLAGS_ACTION_SHIFT)
/* FLAGS' action id (or a session's state). */
#define FAKE_FLAGS_ACTION_OF(f) (((f) >> MATCHA_HW_FLAGS_ACTION_SHIFT) & MATCHA_HW_FLAGS_ACTION_MASK)
/* A meter array's geometry word from its rate, level and time base widths. */
#define FAKE_METER_GEOMETRY(rate, level, time)                                                 \
	((uint32_t)(rate) << MATCHA_HW_METER_GEOMETRY_RATE_LSB |                              \
	 (uint32_t)(level) << MATCHA_HW_METER_GEOMETRY_LEVEL_LSB |                            \
	 (uint32_t)(time) << MATCHA_HW_METER_GEOMETRY_TIME_LSB)

struct fake_table_cfg {
	unsigned kind, key_bits, size, data_bits;
	unsigned ways_or_levels; /* descriptor word DESC_GEOMETRY_WORD */
	unsigned latency;
	unsigned level_nodes[FAKE_MAX_LEVELS]; /* LPM: nodes of each level (0: as generated) */
	bool counters, default_action;         /* KIND_COUNTERS and KIND_DEFAULT_ACTION */
	uint32_t extra;                        /* descriptor word DESC_EXTRA_WORD (meters: tick clocks, LPM: fanout) */
	/* LPM: descriptor EXTRA's pointer bits (0: as generated) and levels in memory. */
	unsigned pointer_bits, memory_levels;
	bool prefix_store; /* LPM, kind bit 10: a result's WRITE keeps KEY and PRIORITY */
	uint32_t kind_extra;                   /* other bits of descriptor word DESC_KIND_WORD */
	/* Ternary range fields (ways_or_levels of them, extra slots each): where each is in
	 * the key, field 0 the least significant. */
	unsigned range_offset[FAKE_MAX_RANGES], range_width[FAKE_MAX_RANGES];
	/* Memory-backed exact tables (ways_or_levels entries per bucket, extra bytes per
	 * entry): the bytes of a bucket, a beat of the memory port or more (32 for one beat
	 * of 256 bits, 128 for two of 512), and of a beat (0: the bucket is one), each beat
	 * holding whole entries from its first byte (docs/tables.md, "Layout and hash"). */
	unsigned bucket_bytes, beat_bytes;
	/* And the entries of its on-chip stash, which MEMX_WIN_STASH reads (0: none): 4 ways
	 * of a power of two slots (at most 65536) as the unit has it; another number is read
	 * all the same, for the driver to refuse, but the stash then has no entries. */
	unsigned stash;
};

struct fake_cfg {
	uint32_t magic, version, build_id;
	unsigned ntables;
	struct fake_table_cfg table[FAKE_MAX_TABLES];
};

struct fake_entry {
	uint32_t flags, priority;
	uint32_t key[16], mask[16], data[16];
};

struct fake_table {
	struct fake_table_cfg cfg;
	uint32_t base;
	uint32_t index, status;
	unsigned busy_reads; /* STATUS reads that still report busy */
	struct fake_entry staging;
	struct fake_entry *entries; /* exact, ternary: size; LPM: the results */
	unsigned nentries;
	uint32_t *level[FAKE_MAX_LEVELS]; /* LPM tree levels: FAKE_NODE_WORDS words a node */
	unsigned node_bits;               /* LPM: fanout * (LPM_POINTER_SHIFT + pointer bits + key bits) */
	uint64_t hits, misses;
	uint32_t hits_hi_latch, misses_hi_latch;
	/* Per-entry counters (cfg.counters): one pair per entry (exact, ternary) or result. */
	uint64_t *packets, *bytes;
	uint64_t packets_latch, bytes_latch; /* PACKETS, BYTES as the last READ latched them */
	unsigned long zeros;                 /* ZERO commands */
	/* WRITEs that made a new entry valid (the index was invalid, or held another key)
	 * on counts that were not zero: the driver did not ZERO before reusing the index. */
	unsigned long stale_writes;
	struct fake_entry default_entry; /* the miss action (cfg.default_action) */
	/* Session tables (kind 5): the registers beyond the common window
	 * (docs/sessions.md); WRITE removes entry INDEX if it holds the staged key. */
	uint32_t control, tick, now, timeout[8];
	uint64_t learned, insert_failed, aged;
	uint32_t session_hi_latch[3];
	uint64_t late, busy; /* a session table in memory: MEMS_WIN_LATE and MEMS_WIN_BUSY */
	uint32_t scan_interval; /* and MEMS_WIN_SCAN_INTERVAL */
	uint32_t mems_hi_latch[2];
	unsigned long deletes; /* WRITEs that removed a session */
	/* Ternary range fields as docs/tables.md has them: the boundary slots, each id's span
	 * and interval rows (row[f][id * size + entry]), written by WRITE (the entry's group of
	 * 4 from the spans then), RANGE_REBUILD (one id, every entry) and CLEAR. */
	struct fake_range {
		uint32_t lo[FAKE_MAX_SLOTS], id[FAKE_MAX_SLOTS];
		bool valid[FAKE_MAX_SLOTS];
		uint32_t start[FAKE_MAX_SLOTS], end[FAKE_MAX_SLOTS];
		uint8_t *row;
	} range[FAKE_MAX_RANGES];
	unsigned long range_commands; /* RANGE_SLOT, RANGE_SPAN and RANGE_REBUILD */
	/* Memory-backed exact tables: the memory, bucket b at b * bucket_bytes. WRITE is one
	 * beat to INDEX's bucket with a strobe on the entry's bytes alone (the rest of the
	 * bucket is not written), READ decodes the entry into the staging registers, CLEAR
	 * writes every bucket zero; an INDEX past the buckets or a bucket's entries is error 1,
	 * ZERO, DEFAULT and READ_DEFAULT error 2 (the unit has neither counters nor a default
	 * action). `write_error`, when not 0, is the STATUS error the next WRITE ends with
	 * after its beat is written, as the unit would report a BRESP other than OKAY. */
	uint8_t *memory;
	uint32_t write_error;
	/* Its stash (cfg.stash entries), INDEX (buckets << MEMX_INDEX_SLOT_BITS) + way *
	 * (cfg.stash / 4) + slot: WRITE keeps the staged valid bit, action id and the key and
	 * data bits the table has (no write_error: it is on chip), READ gives them back, CLEAR
	 * empties it with the memory; an INDEX past it is error 1. */
	struct fake_entry *stash;
};

struct fake_dev {
	struct fake_cfg cfg;
	struct fake_table table[FAKE_MAX_TABLES];
	unsigned long reads, writes, commands;
	long fail_read_addr; /* -1, or an address whose reads fail */
	/* Matcha's Corundum application block at MATCHA_HW_APP_BASE when `present` (the
	 * simulator has none: its addresses fail as the others beyond the tables do). CONTROL
	 * keeps the bits of control_bits, those the block's register map defines. */
	struct fake_app {
		bool present;
		uint32_t id, version, control, control_bits;
		uint32_t packet_outs, wrong_port, malformed;
		unsigned long control_writes;
	} app;
	void (*after_write)(struct fake_dev *fd, void *arg);
	void *after_write_arg;
};

/* The standard device: 0 exact (44-bit keys, 1024 entries, 4 ways, 40-bit data, a default
 * action), 1 LPM 32-bit (2048 prefixes, 4-slot nodes, counters and a default action), 2 LPM
 * 128-bit (1024 prefixes, 3-slot nodes), 3 ternary (104-bit keys). */
struct fake_cfg fake_standard_cfg(void);

/* The standard device with a session table added as table 4 (FAKE_SESSION_TABLE): IPv4
 * keys (128 bits), 256 entries in 4 ways, counters, the unit's 17-bit data and latency 4. */
#define FAKE_SESSION_TABLE 4
#define FAKE_SESSION_SIZE 256
#define FAKE_SESSION_WAYS 4
struct fake_cfg fake_session_cfg(void);
/* The same with the session table in memory (docs/sessions.md, "Sessions in memory"):
 * FAKE_MEM_SESSION_BUCKETS buckets of three 19-byte sessions on a 512-bit port, no
 * counters; INDEX = bucket << MEMX_INDEX_SLOT_BITS | slot. */
#define FAKE_MEM_SESSION_BUCKETS 64
struct fake_cfg fake_mem_session_cfg(void);

/* The built-in L2/L3 program of docs/pipeline.md as the w64 build has it: 0 l2_fwd (exact,
 * 48-bit keys, 64 entries, 4 ways, 4-bit data), 1 ipv4_lpm (LPM 32-bit, 10-slot nodes,
 * 64 prefixes, 100-bit data), 2 acl (ternary, 104-bit keys, 64 entries, 1-bit
 * data); all with counters and a default action. BUILD_ID is that of
 * tests/data/l2l3_w64.layout.json. */
#define L2L3_BUILD_ID 314763857u
struct fake_cfg fake_l2l3_cfg(void);

/* The policer program (matcha_policer, docs/pipeline.md) as the w64 build has it: 0 police
 * (exact, 48-bit keys, 64 entries, 4 ways, 6-bit data), 1 by_colour (exact, 2-bit keys, 8
 * entries, 2 ways, 6-bit data), both with counters and a default action; 2 policers, 64
 * meters with the generated geometry (32-bit rates, 40-bit levels, 32-bit time, one clock
 * per tick). BUILD_ID is that of tests/data/policer_w64.layout.json. */
#define POLICER_BUILD_ID 414401209u
struct fake_cfg fake_policer_cfg(void);

/* The conntrack program (matcha_conntrack, docs/pipeline.md) as the w64 build has it: 0 acl
 * (ternary, 104-bit keys, 64 entries, 1-bit data), 1 by_session (exact, 6-bit keys, 16
 * entries, 4 ways, 1-bit data), both with counters and a default action; 2 sessions, a
 * session table of 64 entries in 4 ways. BUILD_ID is that of
 * tests/data/conntrack_w64.layout.json. */
#define CONNTRACK_BUILD_ID 3233017892u
struct fake_cfg fake_conntrack_cfg(void);

struct fake_dev *fake_new(const struct fake_cfg *cfg);
/* Adds the Corundum application block of the contract's register map to a fake device: its
 * APP_ID and VERSION, CONTROL clear and keeping the bits the map defines. */
void fake_add_app_block(struct fake_dev *fd);
void fake_free(struct fake_dev *fd);
extern const struct matcha_regs_ops fake_ops;

/* Opens the driver on a fake device; fails the calling test on error. */
matcha_dev *fake_open(struct fake_dev *fd);
/* The same, then loads the layout `text` (`name` stands for its file in messages). */
matcha_dev *fake_open_layout(struct fake_dev *fd, const char *text, const char *name);

/* A lookup that hit counter `index` (entry or LPM result) with a frame of `bytes` bytes. */
void fake_hit(struct fake_dev *fd, unsigned table, uint32_t index, unsigned bytes);

/* Puts a session at `index` of session table `table`, as the data path would learn it:
 * canonical key (big-endian, 16 bytes), state, initiator bit, age in ticks and counts. */
void fake_session_put(struct fake_dev *fd, unsigned table, uint32_t index,
		      const uint8_t key[16], unsigned state, bool initiator_high, unsigned age,
		      uint64_t packets, uint64_t bytes);

/*
 * Finds a key in an exact table of the fake's memory as the hardware does: its slot in
 * every way, the lowest valid match wins. Returns the entry index or -1.
 */
long fake_exact_find(struct fake_dev *fd, unsigned table, const uint8_t *key, unsigned key_bits);

/*
 * Looks a key (word order) up in a ternary table of the fake's memory as the hardware does:
 * value/mask on every bit outside the range fields; on a range field the interval of the
 * last valid slot with lo <= x, whose row says which entries take it. The lowest valid
 * matching index wins; -1 for none.
 */
long fake_ternary_lookup(struct fake_dev *fd, unsigned table, const uint32_t *key);

/*
 * Looks a key (ceil(key bits / 8) big-endian bytes) up in a memory-backed exact table as
 * the unit does: the CRC-64/XZ of those bytes masked to the buckets, then the lowest valid
 * entry of that bucket holding the key; if none holds it, the stash's slot of each way
 * ((crc >> 16 * way) & (slots per way - 1)), the lowest way holding the key winning.
 * Returns the INDEX of the entry (bucket << MEMX_INDEX_SLOT_BITS | slot, or the stash's
 * (buckets << MEMX_INDEX_SLOT_BITS) + way * slots per way + slot) or -1.
 */
long fake_mem_exact_lookup(struct fake_dev *fd, unsigned table, const uint8_t *key);

/* The LPM trie of a table as a walkable image (pointing into the fake's memory). */
struct fake_lpm_view {
	struct matcha_lpm_nodes img;
	const uint32_t *words[FAKE_MAX_LEVELS];
};
/* The levels and node counts the generator gives an LPM table of c->size prefixes in
 * c->extra-slot nodes: sets level_nodes, ways_or_levels, latency and pointer_bits. */
void fake_lpm_geometry(struct fake_table_cfg *c);
void fake_lpm_view(struct fake_dev *fd, unsigned table, struct fake_lpm_view *view);

#endif
