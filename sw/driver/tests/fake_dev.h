/*
 * A Matcha control window in memory, for the unit tests: the self-describing block and a
 * window per table with staging registers and WRITE/READ/CLEAR commands acting on entry
 * arrays laid out as docs/tables.md says. Unmapped addresses fail like SLVERR. A hook
 * can run after every register write, to inspect the table memory between writes.
 */
#ifndef FAKE_DEV_H
#define FAKE_DEV_H

#include <stdint.h>

#include "matcha.h"

#define FAKE_MAX_TABLES 8
#define FAKE_MAX_LEVELS 64

struct fake_table_cfg {
	unsigned kind, key_bits, size, data_bits;
	unsigned ways_or_levels; /* descriptor word 5 */
	unsigned latency;
	unsigned level_nodes[FAKE_MAX_LEVELS]; /* LPM: nodes of each level */
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
	uint32_t *level[FAKE_MAX_LEVELS]; /* LPM trie levels */
	unsigned level_entries[FAKE_MAX_LEVELS];
	unsigned strides[FAKE_MAX_LEVELS];
	uint64_t hits, misses;
	uint32_t hits_hi_latch, misses_hi_latch;
};

struct fake_dev {
	struct fake_cfg cfg;
	struct fake_table table[FAKE_MAX_TABLES];
	unsigned long reads, writes, commands;
	long fail_read_addr; /* -1, or an address whose reads fail */
	void (*after_write)(struct fake_dev *fd, void *arg);
	void *after_write_arg;
};

/* The standard device: 0 exact (44-bit keys, 1024 entries, 4 ways, 40-bit data),
 * 1 LPM 32-bit (4 levels), 2 LPM 128-bit (16 levels), 3 ternary (104-bit keys). */
struct fake_cfg fake_standard_cfg(void);

struct fake_dev *fake_new(const struct fake_cfg *cfg);
void fake_free(struct fake_dev *fd);
extern const struct matcha_regs_ops fake_ops;

/* Opens the driver on a fake device; fails the calling test on error. */
matcha_dev *fake_open(struct fake_dev *fd);

/* The LPM trie of a table as a walkable image (pointing into the fake's memory). */
struct fake_lpm_view {
	struct matcha_lpm_image img;
	const uint32_t *words[FAKE_MAX_LEVELS];
	size_t entries[FAKE_MAX_LEVELS];
};
void fake_lpm_view(struct fake_dev *fd, unsigned table, struct fake_lpm_view *view);

#endif
