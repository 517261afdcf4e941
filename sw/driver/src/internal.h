/* SPDX-License-Identifier: Apache-2.0 */
/* Driver internals shared by the source files; not installed. */
#ifndef MATCHA_INTERNAL_H
#define MATCHA_INTERNAL_H

#include "matcha.h"

/* The register map, command, status and kind codes: generated with the hardware
 * (MATCHA_HW_*). Below, the field accessors the driver spells often. */
#include "matcha_contract.h"

#define KIND_CODE(w) ((w) & MATCHA_HW_KIND_CODE_MASK)
#define STATUS_ERROR(s) (((s) >> MATCHA_HW_STATUS_ERROR_SHIFT) & MATCHA_HW_STATUS_ERROR_MASK)
#define FLAGS_ACTION(a) ((uint32_t)(a) << MATCHA_HW_FLAGS_ACTION_SHIFT)
#define FLAGS_ACTION_OF(f) ((uint8_t)((f) >> MATCHA_HW_FLAGS_ACTION_SHIFT))
#define SESSION_TIMEOUT(s) (MATCHA_HW_SESSION_TIMEOUT + 4 * (s))
#define METER_SHIFT_MAX ((1u << MATCHA_HW_METER_MODE_SHIFT_BITS) - 1)
#define METER_MODE_SHIFT(m) (((m) >> MATCHA_HW_METER_MODE_SHIFT_LSB) & METER_SHIFT_MAX)
#define METER_GEOMETRY(g, field) (((g) >> MATCHA_HW_METER_GEOMETRY_##field##_LSB) & MATCHA_HW_METER_GEOMETRY_FIELD_MASK)
/* A register of Matcha's Corundum application block (ip/corundum/README.md). */
#define APP_REG(off) (MATCHA_HW_APP_BASE + (off))
#define VERSION_MAJOR(v) ((v) >> MATCHA_HW_INFO_VERSION_MAJOR_SHIFT)
#define VERSION_MINOR(v) ((v) & MATCHA_HW_INFO_VERSION_MINOR_MASK)
/* A 64-bit value in two DATA words from `at`, low word first. */
#define WORDS64(w, at) ((uint64_t)(w)[(at) + 1] << 32 | (w)[at])

struct matcha_kind_ops;

/* Counts an entry took along from indexes it left (added to its index's own counts). */
struct matcha_counts {
	uint64_t packets, bytes;
};

/* A table: the public matcha_table handle is a pointer to one of dev->tables. */
struct matcha_table {
	matcha_dev *dev; /* the handle the table belongs to, where its calls leave messages */
	unsigned index;
	struct matcha_table_info info;
	const struct matcha_kind_ops *ops; /* its kind's (kind.h) */
	void *state;                       /* its kind's shadow or settings, or NULL */
	unsigned key_bytes;  /* ceil(key_bits / 8) */
	unsigned key_words;  /* ceil(key_bits / 32) */
	unsigned data_bytes; /* ceil(data_bits / 8) */
	unsigned data_words; /* ceil(data_bits / 32) */
	/* Counter indexes 0 .. indexes-1, those the generic layers walk (kind.h): info.size,
	 * and after those a memory-backed exact table's stash (mem_exact.c). */
	unsigned indexes;
	/*
	 * Tables with counters: per counter index, what the entry there has counted elsewhere
	 * (or, after a reset, minus what its index had counted then; arithmetic is mod 2^64).
	 * Its count is carried[i] + the hardware count of i.
	 */
	struct matcha_counts *carried;
	/* Why the driver refuses the hardware's content (malloc'd: matcha_tables_adopt() found
	 * what it could not have written, or an LPM load stopped half written), or NULL: every
	 * call but clear and info fails with it until matcha_table_clear(). */
	char *refused;
};

/* What matcha_open() adds to a register backend it set up itself. */
struct matcha_backend {
	void (*release)(void *ctx); /* frees ctx (unmaps, closes) in matcha_close() */
	/* Says in words why an access failed, from the callback's return code; may be NULL. */
	const char *(*describe)(void *ctx, int rc);
	uint64_t window_bytes;      /* bytes the backend can address, 0 if unknown */
};

struct matcha_layout;

struct matcha_dev {
	struct matcha_regs_ops ops;
	void *ctx;
	char *uri; /* matcha_open()'s URI (malloc'd) for messages, NULL with matcha_open_ops() */
	struct matcha_backend backend;
	struct matcha_layout *layout; /* matcha_layout_load(), or NULL */
	uint32_t version;
	uint32_t build_id;
	unsigned ntables;
	struct matcha_table *tables;
	uint64_t clock_hz; /* matcha_set_clock_hz, 0 until set */
	char error[512];
};

/* A handle with no backend and no tables (NULL when out of memory). */
matcha_dev *matcha_dev_new(void);
/* Reads the self-describing block through `ops` (the second half of matcha_open_ops). */
int matcha_dev_attach(matcha_dev *dev, const struct matcha_regs_ops *ops, void *ctx);

/* The sim: backend (sim.c): connects to a simulator's control socket and sets dev->ops,
 * dev->ctx and dev->backend. */
int matcha_sim_connect(matcha_dev *dev, const char *path);
/* The serial: backend (sim.c): the same messages over a serial line, `arg` DEVICE[@BAUD]. */
int matcha_serial_open(matcha_dev *dev, const char *arg);

/* Records the message of a failure and returns `err`. */
int matcha_fail(matcha_dev *dev, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Refuses table t's hardware content with the device's last error (matcha_table.refused);
 * returns `rc`, or MATCHA_ENOMEM if the message cannot be kept. */
int matcha_table_refuse(matcha_dev *dev, struct matcha_table *t, int rc);

/* A kind code's name as layout.json spells it (MATCHA_HW_KIND_NAMES: "exact", "lpm", ...),
 * "unknown" for a code without one. */
const char *matcha_kind_name(unsigned kind);

int matcha_reg_read(matcha_dev *dev, uint32_t addr, uint32_t *val);
int matcha_reg_write(matcha_dev *dev, uint32_t addr, uint32_t val);

/* The table `table` if it exists and is of `kind` (0: any); `op` names the call. */
int matcha_table_for(matcha_dev *dev, unsigned table, unsigned kind, const char *op,
		     struct matcha_table **t);

/* Issues a window command for entry `index` and waits for it; STATUS errors fail. */
int matcha_window_command(matcha_dev *dev, struct matcha_table *t, uint32_t cmd,
			  uint32_t index);

/* One staged entry write; NULL word arrays and the priority are skipped when absent. */
struct staged_entry {
	bool no_flags; /* LPM tree nodes: FLAGS is unused, save the write */
	uint32_t flags;
	const uint32_t *key;  /* t->key_words words, or NULL */
	const uint32_t *mask; /* t->key_words words, or NULL */
	const uint32_t *data; /* t->data_words words, or NULL */
	unsigned data_words;  /* words of data to write (LPM tree nodes: all of DATA) */
	bool has_priority;
	uint32_t priority;
};
int matcha_window_write(matcha_dev *dev, struct matcha_table *t, uint32_t index,
			const struct staged_entry *e);
/* The entry of an exact match, valid: canonical key `canon` -> action and data words (the
 * table's); `key_words` (MATCHA_HW_WIN_STAGING_WORDS of them) keeps the key's words. */
struct staged_entry matcha_staged_key(const struct matcha_table *t, const uint8_t *canon,
				      uint8_t action_id, const uint32_t *data,
				      uint32_t *key_words);
/* Only the staging register writes of matcha_window_write. */
int matcha_window_stage(matcha_dev *dev, struct matcha_table *t, const struct staged_entry *e);

/* READ command, then the staging registers into `entry` (big-endian). */
int matcha_window_read(matcha_dev *dev, struct matcha_table *t, uint32_t index,
		       struct matcha_entry *entry);

/*
 * Checks a caller's value of `bits` bits against a field of `field_bits` and converts it
 * to the field's little-endian word order (`words` has ceil(field_bits/32) words).
 * `what` names the value in messages ("key", "action data", ...).
 */
int matcha_value_to_words(matcha_dev *dev, struct matcha_table *t, const char *what,
			  const uint8_t *be, unsigned bits, unsigned field_bits,
			  uint32_t *words);

/* A caller's key of key_bits (1 .. the table's width) in canonical form: the table's key
 * width, big-endian, zero-extended (t->key_bytes bytes), as the hashed tables keep keys. */
int matcha_key_canonical(matcha_dev *dev, struct matcha_table *t, const uint8_t *key,
			 unsigned key_bits, uint8_t *canon);

/* Big-endian bytes (nbytes) <-> little-endian word order (nwords words), zero-extended. */
void matcha_be_to_words(const uint8_t *be, unsigned nbytes, uint32_t *words, unsigned nwords);
void matcha_words_to_be(const uint32_t *words, unsigned nwords, uint8_t *be, unsigned nbytes);

/*
 * Per-entry counters (counters.c); `index` is a counter index (exact slot, LPM result,
 * ternary entry), mapped to the window INDEX here. counter_zero and counter_carry are
 * no-ops returning 0 on tables without counters.
 *
 * counter_zero: ZERO the index before an entry is written there; the entry starts at 0.
 * counter_carry: once an entry copied from `from` to `to` has been invalidated at `from`,
 * READ the final count of `from` and add it to the entry's total at `to`.
 */
int matcha_counter_zero(matcha_dev *dev, struct matcha_table *t, uint32_t index);
int matcha_counter_carry(matcha_dev *dev, struct matcha_table *t, uint32_t from, uint32_t to);
/* The count of the entry at `index`, for the by-key calls (after matcha_counters_check). */
int matcha_counter_entry(matcha_dev *dev, struct matcha_table *t, uint32_t index,
			 uint64_t *packets, uint64_t *bytes, unsigned flags);
/* MATCHA_ENOTSUP unless the table has counters. */
int matcha_counters_check(matcha_dev *dev, struct matcha_table *t, const char *op);
int matcha_counters_init(matcha_dev *dev, struct matcha_table *t);
void matcha_counters_reset(struct matcha_table *t);
void matcha_counters_free(struct matcha_table *t);

/* The layout's entry handles of a table are gone after CLEAR (layout.c). */
void matcha_layout_table_cleared(matcha_dev *dev, unsigned table);
void matcha_layout_free(matcha_dev *dev);

/* A 64-bit register pair: the low word first, which latches the high word. */
int matcha_read_u64(matcha_dev *dev, uint32_t addr, uint64_t *val);

/* With a layout loaded: a handle for every entry of the table's shadow (after adoption). */
int matcha_layout_table_adopted(matcha_dev *dev, unsigned table);

static inline unsigned div_ceil(unsigned a, unsigned b) { return (a + b - 1) / b; }

#endif
