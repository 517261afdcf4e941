/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_dev.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util.h"

#define WINDOW MATCHA_HW_INFO_WINDOW_BYTES
#define STATUS_ERROR_IS(e) ((uint32_t)(e) << MATCHA_HW_STATUS_ERROR_SHIFT)
/* The largest bucket the fake keeps: two beats of a 1024-bit memory port. */
#define FAKE_MAX_BUCKET 256

struct fake_cfg fake_standard_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = 0xC0FFEE01,
		.ntables = 4,
	};
	c.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 44, .size = 1024,
					      .data_bits = 40, .ways_or_levels = 4, .latency = 3,
					      .default_action = true };
	c.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32, .size = 2048,
					      .data_bits = 32, .extra = 4, .counters = true,
					      .default_action = true, .prefix_store = true };
	c.table[2] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 128, .size = 1024,
					      .data_bits = 48, .extra = 3, .prefix_store = true };
	c.table[3] = (struct fake_table_cfg){ .kind = MATCHA_KIND_TERNARY, .key_bits = 104, .size = 256,
					      .data_bits = 32, .latency = 2 };
	return c;
}

struct fake_cfg fake_session_cfg(void)
{
	struct fake_cfg c = fake_standard_cfg();
	c.table[FAKE_SESSION_TABLE] = (struct fake_table_cfg){
		.kind = MATCHA_KIND_SESSION, .key_bits = 128, .size = FAKE_SESSION_SIZE,
		.data_bits = 17, .ways_or_levels = FAKE_SESSION_WAYS, .latency = 4,
		.counters = true };
	c.ntables = FAKE_SESSION_TABLE + 1;
	return c;
}

struct fake_cfg fake_mem_session_cfg(void)
{
	struct fake_cfg c = fake_session_cfg();
	c.table[FAKE_SESSION_TABLE] = (struct fake_table_cfg){
		.kind = MATCHA_KIND_MEM_SESSION, .key_bits = 128, .size = FAKE_MEM_SESSION_BUCKETS * 3,
		.data_bits = 17, .ways_or_levels = 3, .latency = 512,
		.extra = MATCHA_HW_MEMS_ENTRY_KEY_BYTE + 16 };
	return c;
}

struct fake_cfg fake_l2l3_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = L2L3_BUILD_ID,
		.ntables = 3,
	};
	c.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 48, .size = 64,
					      .data_bits = 4, .ways_or_levels = 4, .latency = 3,
					      .counters = true, .default_action = true };
	c.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32, .size = 64,
					      .data_bits = 100, .extra = 10, .counters = true,
					      .default_action = true, .prefix_store = true };
	c.table[2] = (struct fake_table_cfg){ .kind = MATCHA_KIND_TERNARY, .key_bits = 104, .size = 64,
					      .data_bits = 1, .latency = 7, .counters = true,
					      .default_action = true };
	return c;
}

struct fake_cfg fake_policer_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = POLICER_BUILD_ID,
		.ntables = 3,
	};
	c.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 48,
					      .size = 64, .data_bits = 6, .ways_or_levels = 4,
					      .latency = 3, .counters = true,
					      .default_action = true };
	c.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 2, .size = 8,
					      .data_bits = 6, .ways_or_levels = 2, .latency = 3,
					      .counters = true, .default_action = true };
	/* The geometry word: 32-bit rates, 40-bit levels, a 32-bit time base. */
	c.table[2] = (struct fake_table_cfg){ .kind = MATCHA_KIND_METER, .key_bits = 6,
					      .size = 64, .data_bits = 384,
					      .ways_or_levels = FAKE_METER_GEOMETRY(32, 40, 32),
					      .latency = 6, .extra = 1 };
	return c;
}

struct fake_cfg fake_conntrack_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = CONNTRACK_BUILD_ID,
		.ntables = 3,
	};
	c.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_TERNARY, .key_bits = 104,
					      .size = 64, .data_bits = 1, .latency = 7,
					      .counters = true, .default_action = true };
	c.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 6, .size = 16,
					      .data_bits = 1, .ways_or_levels = 4, .latency = 3,
					      .counters = true, .default_action = true };
	c.table[2] = (struct fake_table_cfg){ .kind = MATCHA_KIND_SESSION, .key_bits = 128,
					      .size = 64, .data_bits = 17, .ways_or_levels = 4,
					      .latency = 4, .counters = true };
	return c;
}

/* ------------------------------------------------------------ ternary range fields */

static uint32_t range_max(const struct fake_table *t, unsigned f)
{
	unsigned w = t->cfg.range_width[f];
	return w >= 32 ? UINT32_MAX : (uint32_t)((1ull << w) - 1);
}

static uint32_t range_bits(const struct fake_table *t, unsigned f, const uint32_t *words)
{
	unsigned at = t->cfg.range_offset[f];
	uint64_t v = words[at / 32] | (at % 32 ? (uint64_t)words[at / 32 + 1] << 32 : 0);
	return (uint32_t)(v >> at % 32) & range_max(t, f);
}

/* CLEAR: slot 0 (lo 0, id 0) alone, id 0 spanning the field. */
static void range_clear(struct fake_table *t, unsigned f)
{
	struct fake_range *r = &t->range[f];
	memset(r->lo, 0, sizeof r->lo);
	memset(r->id, 0, sizeof r->id);
	memset(r->valid, 0, sizeof r->valid);
	r->valid[0] = true;
	r->start[0] = 0;
	r->end[0] = range_max(t, f);
}

/* Entry e's bit in id's row: its range holds the id's whole span. */
static void range_row(struct fake_table *t, unsigned f, uint32_t id, uint32_t e)
{
	struct fake_range *r = &t->range[f];
	const struct fake_entry *en = &t->entries[e];
	r->row[(size_t)id * t->nentries + e] = range_bits(t, f, en->key) <= r->start[id] &&
					      r->end[id] <= range_bits(t, f, en->mask);
}

/* A WRITE rewrites every interval row of the entry's group of 4. */
static void range_write(struct fake_table *t, uint32_t index)
{
	for (unsigned f = 0; f < t->cfg.ways_or_levels; f++)
		for (uint32_t id = 0; id < t->cfg.extra; id++)
			for (uint32_t e = index & ~3u; e < (index | 3u) + 1 && e < t->nentries; e++)
				range_row(t, f, id, e);
}

static void range_command(struct fake_table *t, uint32_t cmd)
{
	unsigned f = t->index >> MATCHA_HW_RANGE_FIELD_SHIFT;
	uint32_t i = t->index & MATCHA_HW_RANGE_SLOT_MASK;
	if (t->cfg.kind != MATCHA_KIND_TERNARY || !t->cfg.ways_or_levels) {
		t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
		return;
	}
	if (f >= t->cfg.ways_or_levels || i >= t->cfg.extra) {
		t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
		return;
	}
	struct fake_range *r = &t->range[f];
	t->range_commands++;
	if (cmd == MATCHA_HW_CMD_RANGE_SLOT) {
		r->lo[i] = t->staging.key[0] & range_max(t, f);
		r->id[i] = t->staging.mask[0] & MATCHA_HW_RANGE_SLOT_MASK;
		r->valid[i] = t->staging.flags & MATCHA_HW_FLAGS_VALID;
	} else if (cmd == MATCHA_HW_CMD_RANGE_SPAN) {
		r->start[i] = t->staging.key[0] & range_max(t, f);
		r->end[i] = t->staging.mask[0] & range_max(t, f);
	} else {
		for (uint32_t e = 0; e < t->nentries; e++)
			range_row(t, f, i, e);
		t->busy_reads = 2;
	}
}

long fake_ternary_lookup(struct fake_dev *fd, unsigned table, const uint32_t *key)
{
	struct fake_table *t = &fd->table[table];
	unsigned words = (t->cfg.key_bits + 31) / 32;
	uint32_t plain[16];
	for (unsigned w = 0; w < words; w++)
		plain[w] = UINT32_MAX;
	uint32_t id[FAKE_MAX_RANGES];
	for (unsigned f = 0; f < t->cfg.ways_or_levels; f++) {
		for (unsigned b = 0; b < t->cfg.range_width[f]; b++) {
			unsigned bit = t->cfg.range_offset[f] + b;
			plain[bit / 32] &= ~(1u << bit % 32);
		}
		const struct fake_range *r = &t->range[f];
		uint32_t x = range_bits(t, f, key);
		for (unsigned s = 0; s < t->cfg.extra; s++)
			if (r->valid[s] && r->lo[s] <= x)
				id[f] = r->id[s];
	}
	for (uint32_t e = 0; e < t->nentries; e++) {
		const struct fake_entry *en = &t->entries[e];
		bool match = en->flags & 1;
		for (unsigned w = 0; w < words && match; w++)
			match = ((key[w] ^ en->key[w]) & en->mask[w] & plain[w]) == 0;
		for (unsigned f = 0; f < t->cfg.ways_or_levels && match; f++)
			match = t->range[f].row[(size_t)id[f] * t->nentries + e];
		if (match)
			return (long)e;
	}
	return -1;
}

/* ------------------------------------------------------- memory-backed exact tables */

static unsigned memx_buckets(const struct fake_table *t)
{
	return t->cfg.size / t->cfg.ways_or_levels;
}

/* The bucket an INDEX names, and its slot there; NULL when it names no entry. */
static uint8_t *memx_bucket(const struct fake_table *t, uint32_t index, unsigned *slot)
{
	uint32_t b = index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS;
	*slot = index & ((1u << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1);
	if (!t->memory || b >= memx_buckets(t) || *slot >= t->cfg.ways_or_levels)
		return NULL;
	return t->memory + (size_t)b * t->cfg.bucket_bytes;
}

/* The unit's stash: 4 ways of a power of two slots, at most 65536 (MemExactTableConfig). */
static bool memx_stash_fits(const struct fake_table_cfg *c)
{
	unsigned ways = MATCHA_HW_MEMX_STASH_WAYS, slots = c->stash / ways;
	return c->stash && c->stash % ways == 0 && slots <= 65536 && !(slots & (slots - 1));
}

/* The INDEX of the stash's first entry: the one after the last bucket's. */
static uint64_t memx_stash_base(const struct fake_table *t)
{
	return (uint64_t)memx_buckets(t) << MATCHA_HW_MEMX_INDEX_SLOT_BITS;
}

/* The stash entry an INDEX names, or NULL. */
static struct fake_entry *memx_stash_entry(const struct fake_table *t, uint32_t index)
{
	uint64_t base = memx_stash_base(t);
	if (!t->stash || index < base || index - base >= t->cfg.stash)
		return NULL;
	return &t->stash[index - base];
}

/* The low `bits` of a value in word order; the words above them zero. */
static void keep_bits(uint32_t *words, unsigned bits)
{
	for (unsigned w = 0; w < MATCHA_HW_WIN_STAGING_WORDS; w++)
		words[w] = 32 * w >= bits ? 0 : bits - 32 * w >= 32 ? words[w] :
			   words[w] & ((1u << (bits - 32 * w)) - 1);
}

/* The first byte of entry `slot` in its bucket: whole entries in each beat. */
static unsigned memx_offset(const struct fake_table *t, unsigned slot)
{
	unsigned beat = t->cfg.beat_bytes ? t->cfg.beat_bytes : t->cfg.bucket_bytes;
	unsigned per_beat = beat / t->cfg.extra;
	return slot / per_beat * beat + slot % per_beat * t->cfg.extra;
}

/* The low `bits` of a value in word order as little-endian bytes, the last one
 * zero-padded: a field of an entry in memory. */
static void memx_put(uint8_t *p, const uint32_t *words, unsigned bits)
{
	for (unsigned i = 0; 8 * i < bits; i++) {
		unsigned keep = bits - 8 * i < 8 ? bits - 8 * i : 8;
		p[i] = (uint8_t)(words[i / 4] >> 8 * (i % 4) & ((1u << keep) - 1));
	}
}

/* The field back: `bits` bits from little-endian bytes into words (the 16 of a staging
 * register), the padding above them ignored as the unit's decoder does. */
static void memx_get(const uint8_t *p, uint32_t *words, unsigned bits)
{
	memset(words, 0, MATCHA_HW_WIN_STAGING_WORDS * sizeof *words);
	for (unsigned i = 0; 8 * i < bits; i++) {
		unsigned keep = bits - 8 * i < 8 ? bits - 8 * i : 8;
		words[i / 4] |= (uint32_t)(p[i] & ((1u << keep) - 1)) << 8 * (i % 4);
	}
}

static void memx_command(struct fake_table *t, uint32_t cmd)
{
	unsigned slot, eb = t->cfg.extra, key_bytes = (t->cfg.key_bits + 7) / 8;
	uint8_t *bucket = memx_bucket(t, t->index, &slot);
	struct fake_entry *stashed = memx_stash_entry(t, t->index);
	bool indexed = cmd == MATCHA_HW_CMD_WRITE || cmd == MATCHA_HW_CMD_READ;
	if (indexed && !bucket && !stashed) {
		t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
		return;
	}
	if (indexed && stashed) {
		/* An exact table's entry: what its memories keep of the staged one. */
		const uint32_t kept = MATCHA_HW_FLAGS_VALID |
				      FAKE_FLAGS_ACTION(MATCHA_HW_FLAGS_ACTION_MASK);
		if (cmd == MATCHA_HW_CMD_WRITE) {
			*stashed = (struct fake_entry){ .flags = t->staging.flags & kept };
			memcpy(stashed->key, t->staging.key, sizeof stashed->key);
			memcpy(stashed->data, t->staging.data, sizeof stashed->data);
			keep_bits(stashed->key, t->cfg.key_bits);
			keep_bits(stashed->data, t->cfg.data_bits);
		} else
			t->staging = *stashed;
		return;
	}
	if (cmd == MATCHA_HW_CMD_WRITE) {
		/* The beat the unit sends: the entry at its place, the strobe on its bytes. */
		uint8_t beat[FAKE_MAX_BUCKET] = { 0 }, *e = beat + memx_offset(t, slot);
		bool strobe[FAKE_MAX_BUCKET] = { false };
		e[MATCHA_HW_MEMX_ENTRY_FLAGS_BYTE] =
			t->staging.flags & MATCHA_HW_FLAGS_VALID ? MATCHA_HW_MEMX_ENTRY_VALID : 0;
		e[MATCHA_HW_MEMX_ENTRY_ACTION_BYTE] = (uint8_t)FAKE_FLAGS_ACTION_OF(t->staging.flags);
		memx_put(e + MATCHA_HW_MEMX_ENTRY_KEY_BYTE, t->staging.key, t->cfg.key_bits);
		memx_put(e + MATCHA_HW_MEMX_ENTRY_KEY_BYTE + key_bytes, t->staging.data,
			 t->cfg.data_bits);
		for (unsigned b = memx_offset(t, slot); b < memx_offset(t, slot) + eb; b++)
			strobe[b] = true;
		for (unsigned b = 0; b < t->cfg.bucket_bytes; b++)
			if (strobe[b])
				bucket[b] = beat[b];
		t->status = STATUS_ERROR_IS(t->write_error);
		t->write_error = 0;
	} else if (cmd == MATCHA_HW_CMD_READ) {
		const uint8_t *e = bucket + memx_offset(t, slot);
		t->staging.flags = FAKE_FLAGS_ACTION(e[MATCHA_HW_MEMX_ENTRY_ACTION_BYTE]) |
				   (e[MATCHA_HW_MEMX_ENTRY_FLAGS_BYTE] & MATCHA_HW_MEMX_ENTRY_VALID ?
				    MATCHA_HW_FLAGS_VALID : 0);
		memx_get(e + MATCHA_HW_MEMX_ENTRY_KEY_BYTE, t->staging.key, t->cfg.key_bits);
		memx_get(e + MATCHA_HW_MEMX_ENTRY_KEY_BYTE + key_bytes, t->staging.data,
			 t->cfg.data_bits);
		memset(t->staging.mask, 0, sizeof t->staging.mask);
		t->staging.priority = 0;
	} else if (cmd == MATCHA_HW_CMD_CLEAR) {
		memset(t->memory, 0, (size_t)memx_buckets(t) * t->cfg.bucket_bytes);
		if (t->stash)
			memset(t->stash, 0, t->cfg.stash * sizeof *t->stash);
		t->busy_reads = 3;
	} else
		t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
}

long fake_mem_exact_lookup(struct fake_dev *fd, unsigned table, const uint8_t *key)
{
	const struct fake_table *t = &fd->table[table];
	unsigned key_bytes = (t->cfg.key_bits + 7) / 8, key_words = (t->cfg.key_bits + 31) / 32;
	uint32_t b = (uint32_t)matcha_crc64_xz(key, key_bytes) & (memx_buckets(t) - 1);
	uint32_t want[MATCHA_HW_WIN_STAGING_WORDS], got[MATCHA_HW_WIN_STAGING_WORDS];
	test_be_to_words(key, key_bytes, want, key_words);
	for (unsigned slot = 0; slot < t->cfg.ways_or_levels; slot++) {
		const uint8_t *e = t->memory + (size_t)b * t->cfg.bucket_bytes + memx_offset(t, slot);
		memx_get(e + MATCHA_HW_MEMX_ENTRY_KEY_BYTE, got, t->cfg.key_bits);
		if ((e[MATCHA_HW_MEMX_ENTRY_FLAGS_BYTE] & MATCHA_HW_MEMX_ENTRY_VALID) &&
		    !memcmp(got, want, key_words * sizeof *want))
			return (long)(b << MATCHA_HW_MEMX_INDEX_SLOT_BITS | slot);
	}
	if (!t->stash)
		return -1;
	/* The stash is an exact table of 4 ways: way w's slot from bits 16w up of the CRC. */
	uint64_t crc = matcha_crc64_xz(key, key_bytes);
	unsigned slots = t->cfg.stash / MATCHA_HW_MEMX_STASH_WAYS;
	for (unsigned w = 0; w < MATCHA_HW_MEMX_STASH_WAYS; w++) {
		uint32_t i = w * slots + ((uint32_t)(crc >> 16 * w) & (slots - 1));
		if ((t->stash[i].flags & MATCHA_HW_FLAGS_VALID) &&
		    !memcmp(t->stash[i].key, want, key_words * sizeof *want))
			return (long)(memx_stash_base(t) + i);
	}
	return -1;
}

static void fake_lpm_pointer_bits(struct fake_table_cfg *c);

struct fake_dev *fake_new(const struct fake_cfg *cfg)
{
	struct fake_dev *fd = calloc(1, sizeof *fd);
	fd->cfg = *cfg;
	fd->fail_read_addr = -1;
	for (unsigned i = 0; i < cfg->ntables; i++) {
		struct fake_table *t = &fd->table[i];
		if (fd->cfg.table[i].kind == MATCHA_KIND_LPM && !fd->cfg.table[i].level_nodes[0])
			fake_lpm_geometry(&fd->cfg.table[i]);
		if (fd->cfg.table[i].kind == MATCHA_KIND_LPM && !fd->cfg.table[i].pointer_bits)
			fake_lpm_pointer_bits(&fd->cfg.table[i]);
		t->cfg = fd->cfg.table[i];
		t->base = WINDOW * (i + 1);
		t->nentries = t->cfg.size;
		t->entries = calloc(t->nentries ? t->nentries : 1, sizeof *t->entries);
		t->packets = calloc(t->nentries ? t->nentries : 1, sizeof *t->packets);
		t->bytes = calloc(t->nentries ? t->nentries : 1, sizeof *t->bytes);
		t->default_entry.flags = 1;
		if (t->cfg.kind == MATCHA_KIND_TERNARY)
			for (unsigned f = 0; f < t->cfg.ways_or_levels; f++) {
				t->range[f].row = calloc((size_t)t->cfg.extra * t->nentries, 1);
				range_clear(t, f);
			}
		/* A descriptor without entries per bucket is one for the driver to refuse: it
		 * gets no memory, and every INDEX is out of range. */
		if (t->cfg.kind == MATCHA_KIND_MEM_EXACT && t->cfg.ways_or_levels) {
			if (t->cfg.bucket_bytes <= FAKE_MAX_BUCKET &&
			    memx_offset(t, t->cfg.ways_or_levels - 1) + t->cfg.extra <= t->cfg.bucket_bytes)
				t->memory = calloc((size_t)memx_buckets(t) * t->cfg.bucket_bytes, 1);
			else
				check_fail(__FILE__, __LINE__, "fake: table %u: %u entries of %u bytes "
					   "in a %u-byte bucket", i, t->cfg.ways_or_levels,
					   (unsigned)t->cfg.extra, t->cfg.bucket_bytes);
			/* A stash the unit could not have is the driver's to refuse: no entries. */
			if (t->memory && memx_stash_fits(&t->cfg))
				t->stash = calloc(t->cfg.stash, sizeof *t->stash);
		}
		if (t->cfg.kind != MATCHA_KIND_LPM)
			continue;
		t->node_bits = t->cfg.extra * (MATCHA_HW_LPM_POINTER_SHIFT + t->cfg.pointer_bits + t->cfg.key_bits);
		for (unsigned l = 0; l < t->cfg.ways_or_levels; l++)
			t->level[l] = calloc((size_t)t->cfg.level_nodes[l] * FAKE_NODE_WORDS,
					     sizeof *t->level[l]);
	}
	return fd;
}

/* As the generator sizes them (LpmGeometry.pointerBits): enough for every level's nodes
 * and every result, never fewer than LPM_MIN_POINTER_BITS. */
static void fake_lpm_pointer_bits(struct fake_table_cfg *c)
{
	unsigned most = c->size;
	for (unsigned l = 0; l < c->ways_or_levels; l++)
		most = c->level_nodes[l] > most ? c->level_nodes[l] : most;
	unsigned bits = MATCHA_HW_LPM_MIN_POINTER_BITS;
	while (1ull << bits < most)
		bits++;
	c->pointer_bits = bits;
}

void fake_lpm_geometry(struct fake_table_cfg *c)
{
	/* As the generator sizes it (LpmGeometry): the fewest levels with
	 * F * ceil(F/2)^(levels-1) >= 2N+1, each level at most ceil(below / ceil(F/2)) nodes. */
	unsigned f = c->extra, half = (f + 1) / 2, boundaries = 2 * c->size + 1, levels = 1;
	for (unsigned long long reach = f; reach < boundaries && half > 1; reach *= half)
		levels++;
	unsigned n = (boundaries + half - 1) / half;
	for (unsigned l = levels; l-- > 1;) {
		c->level_nodes[l] = n;
		n = (n + half - 1) / half;
	}
	c->level_nodes[0] = 1;
	c->ways_or_levels = levels;
	c->latency = levels + 2;
}

void fake_free(struct fake_dev *fd)
{
	for (unsigned i = 0; i < fd->cfg.ntables; i++) {
		free(fd->table[i].entries);
		free(fd->table[i].packets);
		free(fd->table[i].bytes);
		free(fd->table[i].memory);
		free(fd->table[i].stash);
		for (unsigned l = 0; l < FAKE_MAX_LEVELS; l++)
			free(fd->table[i].level[l]);
		for (unsigned f = 0; f < FAKE_MAX_RANGES; f++)
			free(fd->table[i].range[f].row);
	}
	free(fd);
}

matcha_dev *fake_open(struct fake_dev *fd)
{
	matcha_dev *dev;
	int rc = matcha_open_ops(&fake_ops, fd, &dev);
	if (rc) {
		check_fail(__FILE__, __LINE__, "matcha_open_ops: %s", matcha_last_error(dev));
		matcha_close(dev);
		return NULL;
	}
	return dev;
}

matcha_dev *fake_open_layout(struct fake_dev *fd, const char *text, const char *name)
{
	matcha_dev *dev = fake_open(fd);
	if (dev && matcha_layout_load_text(dev, text, strlen(text), name)) {
		check_fail(__FILE__, __LINE__, "layout %s: %s", name, matcha_last_error(dev));
		matcha_close(dev);
		return NULL;
	}
	return dev;
}

/* A session table, on chip or in memory: the hardware learns; a WRITE only deletes. */
static bool session_kind(const struct fake_table *t)
{
	return t->cfg.kind == MATCHA_KIND_SESSION || t->cfg.kind == MATCHA_KIND_MEM_SESSION;
}

/* The entry an INDEX names, or NULL when out of range; *word for LPM tree nodes. */
static struct fake_entry *entry_at(struct fake_table *t, uint32_t index, uint32_t **word)
{
	*word = NULL;
	if (t->cfg.kind == MATCHA_KIND_MEM_SESSION) {
		/* INDEX = bucket << MEMX_INDEX_SLOT_BITS | slot; entries bucket by bucket. */
		uint32_t slots = t->cfg.ways_or_levels, bucket = index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS;
		uint32_t slot = index & ((1u << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1);
		return slots && slot < slots && bucket < t->nentries / slots ?
			       &t->entries[bucket * slots + slot] : NULL;
	}
	if (t->cfg.kind != MATCHA_KIND_LPM)
		return index < t->nentries ? &t->entries[index] : NULL;
	uint32_t level = index >> MATCHA_HW_LPM_LEVEL_SHIFT, addr = index & MATCHA_HW_LPM_ADDRESS_MASK;
	if (level < t->cfg.ways_or_levels) {
		if (addr >= t->cfg.level_nodes[level])
			return NULL;
		*word = &t->level[level][(size_t)addr * FAKE_NODE_WORDS];
		return &t->staging; /* non-NULL: in range */
	}
	if (level == t->cfg.ways_or_levels && addr < t->nentries)
		return &t->entries[addr];
	return NULL;
}

/* The counter an INDEX names (an entry, or an LPM result), or -1. */
static long counter_at(const struct fake_table *t, uint32_t index)
{
	if (t->cfg.kind != MATCHA_KIND_LPM)
		return index < t->nentries ? (long)index : -1;
	uint32_t level = index >> MATCHA_HW_LPM_LEVEL_SHIFT, addr = index & MATCHA_HW_LPM_ADDRESS_MASK;
	return level == t->cfg.ways_or_levels && addr < t->nentries ? (long)addr : -1;
}

/* A WRITE of `e` over `old` at counter `c`: a new entry must find its counts zeroed. */
static void check_fresh_counts(struct fake_table *t, long c, const struct fake_entry *old,
			       const struct fake_entry *e)
{
	if (!t->cfg.counters || c < 0 || !(e->flags & 1))
		return;
	bool same = (old->flags & 1) && !memcmp(old->key, e->key, sizeof e->key) &&
		    !memcmp(old->mask, e->mask, sizeof e->mask);
	if (!same && (t->packets[c] || t->bytes[c]))
		t->stale_writes++;
}

static void command(struct fake_table *t, uint32_t cmd)
{
	uint32_t *word;
	struct fake_entry *e;
	long c = counter_at(t, t->index);
	t->status = 0;
	if (t->cfg.kind == MATCHA_KIND_MEM_EXACT) {
		memx_command(t, cmd);
		return;
	}
	switch (cmd) {
	case MATCHA_HW_CMD_WRITE:
		if (!(e = entry_at(t, t->index, &word)))
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
		else if (session_kind(t)) {
			if ((e->flags & 1) && !memcmp(e->key, t->staging.key, sizeof e->key)) {
				e->flags = 0;
				t->deletes++;
			}
		}
		else if (word) {
			/* A node is DATA's low fanout * slot bits. */
			for (unsigned w = 0; w < FAKE_NODE_WORDS; w++) {
				unsigned low = 32 * w;
				word[w] = low >= t->node_bits ? 0 : t->node_bits - low >= 32 ?
					  t->staging.data[w] :
					  t->staging.data[w] & ((1u << (t->node_bits - low)) - 1);
			}
		} else {
			check_fresh_counts(t, c, e, &t->staging);
			*e = t->staging;
			if (t->cfg.kind == MATCHA_KIND_TERNARY)
				range_write(t, t->index);
			if (t->cfg.kind == MATCHA_KIND_METER) {
				bool on = e->flags & 1;
				for (unsigned w = 0; w < 4; w++)
					e->data[7 + w] = on ? e->data[3 + w] : 0;
				e->data[11] = 0;
			} else if (t->cfg.kind == MATCHA_KIND_DIRECT) {
				/* An entry keeps FLAGS and DATA: its index is its key. */
				memset(e->key, 0, sizeof e->key);
				memset(e->mask, 0, sizeof e->mask);
				e->priority = 0;
			} else if (t->cfg.kind == MATCHA_KIND_LPM) {
				/* A result keeps FLAGS and DATA, and with a prefix store KEY and PRIORITY. */
				memset(e->mask, 0, sizeof e->mask);
				if (!t->cfg.prefix_store) {
					memset(e->key, 0, sizeof e->key);
					e->priority = 0;
				}
			}
		}
		break;
	case MATCHA_HW_CMD_READ:
		if (!(e = entry_at(t, t->index, &word)))
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
		else if (word)
			memcpy(t->staging.data, word, FAKE_NODE_WORDS * sizeof *word);
		else
			t->staging = *e;
		if (e && t->cfg.counters) {
			t->packets_latch = c >= 0 ? t->packets[c] : 0;
			t->bytes_latch = c >= 0 ? t->bytes[c] : 0;
		}
		break;
	case MATCHA_HW_CMD_CLEAR:
		memset(t->entries, 0, t->nentries * sizeof *t->entries);
		for (unsigned l = 0; l < t->cfg.ways_or_levels && t->level[l]; l++)
			memset(t->level[l], 0, (size_t)t->cfg.level_nodes[l] * FAKE_NODE_WORDS *
						       sizeof *t->level[l]);
		/* A session table's counts restart at each learn; its CLEAR leaves them. */
		if (t->cfg.kind != MATCHA_KIND_SESSION) {
			memset(t->packets, 0, t->nentries * sizeof *t->packets);
			memset(t->bytes, 0, t->nentries * sizeof *t->bytes);
		}
		for (unsigned f = 0; t->cfg.kind == MATCHA_KIND_TERNARY && f < t->cfg.ways_or_levels; f++)
			range_clear(t, f);
		t->busy_reads = 3;
		break;
	case MATCHA_HW_CMD_RANGE_SLOT:
	case MATCHA_HW_CMD_RANGE_SPAN:
	case MATCHA_HW_CMD_RANGE_REBUILD:
		range_command(t, cmd);
		break;
	case MATCHA_HW_CMD_ZERO:
		if (!t->cfg.counters)
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
		else if (c < 0)
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
		else {
			t->packets[c] = t->bytes[c] = 0;
			t->zeros++;
			t->busy_reads = 2;
		}
		break;
	case MATCHA_HW_CMD_DEFAULT:
		if (!t->cfg.default_action)
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
		else {
			t->default_entry.flags = (t->staging.flags & FAKE_FLAGS_ACTION(0xFFu)) |
						 MATCHA_HW_FLAGS_VALID;
			memcpy(t->default_entry.data, t->staging.data, sizeof t->staging.data);
		}
		break;
	case MATCHA_HW_CMD_READ_DEFAULT:
		if (!t->cfg.default_action)
			t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
		else {
			t->staging.flags = t->default_entry.flags;
			memcpy(t->staging.data, t->default_entry.data, sizeof t->staging.data);
		}
		break;
	default:
		t->status = STATUS_ERROR_IS(MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
	}
}

void fake_hit(struct fake_dev *fd, unsigned table, uint32_t index, unsigned bytes)
{
	struct fake_table *t = &fd->table[table];
	if (!t->cfg.counters || index >= t->nentries) {
		check_fail(__FILE__, __LINE__, "fake_hit: table %u has no counter %u", table,
			   (unsigned)index);
		return;
	}
	t->packets[index]++;
	t->bytes[index] += bytes;
}

void fake_session_put(struct fake_dev *fd, unsigned table, uint32_t index,
		      const uint8_t key[16], unsigned state, bool initiator_high, unsigned age,
		      uint64_t packets, uint64_t bytes)
{
	struct fake_table *t = &fd->table[table];
	uint32_t *word;
	struct fake_entry *e = entry_at(t, index, &word);
	if (!e) {
		check_fail(__FILE__, __LINE__, "fake_session_put: table %u has no entry %u", table,
			   (unsigned)index);
		return;
	}
	memset(e, 0, sizeof *e);
	e->flags = FAKE_FLAGS_ACTION(state) | MATCHA_HW_FLAGS_VALID;
	for (unsigned i = 0; i < 16; i++)
		e->key[(15 - i) / 4] |= (uint32_t)key[i] << (8 * ((15 - i) % 4));
	e->data[0] = (initiator_high ? MATCHA_HW_SESSION_INITIATOR_HIGH : 0) |
		     (age & (MATCHA_HW_SESSION_INITIATOR_HIGH - 1));
	if (t->cfg.counters) {
		t->packets[index] = packets;
		t->bytes[index] = bytes;
	}
	t->learned++;
}

/* Session registers (docs/sessions.md): timeouts of states 1..6. */
static uint32_t *session_reg(struct fake_table *t, uint32_t off)
{
	if (!session_kind(t))
		return NULL;
	if (off == MATCHA_HW_SESSION_CONTROL) return &t->control;
	if (off == MATCHA_HW_SESSION_TICK) return &t->tick;
	if (t->cfg.kind == MATCHA_KIND_MEM_SESSION && off == MATCHA_HW_MEMS_WIN_SCAN_INTERVAL)
		return &t->scan_interval;
	if (off >= MATCHA_HW_SESSION_TIMEOUT + 4 && off < MATCHA_HW_SESSION_TIMEOUT + 4 * 7)
		return &t->timeout[(off - MATCHA_HW_SESSION_TIMEOUT) / 4];
	return NULL;
}

static int session_read(struct fake_table *t, uint32_t off, uint32_t *val)
{
	uint32_t *reg;
	if (!session_kind(t))
		return 1;
	if ((reg = session_reg(t, off))) {
		*val = *reg;
		return 0;
	}
	if (off == MATCHA_HW_SESSION_OCCUPANCY) {
		*val = 0;
		for (unsigned i = 0; i < t->nentries; i++)
			*val += t->entries[i].flags & 1;
		return 0;
	}
	if (off == MATCHA_HW_SESSION_NOW) {
		*val = t->now;
		return 0;
	}
	if (off >= MATCHA_HW_SESSION_LEARNED && off < MATCHA_HW_SESSION_AGED + 8) {
		uint64_t v = off < MATCHA_HW_SESSION_INSERT_FAILED ? t->learned
			     : off < MATCHA_HW_SESSION_AGED	 ? t->insert_failed
							 : t->aged;
		unsigned n = (off - MATCHA_HW_SESSION_LEARNED) / 8;
		if (off % 8 == 0) {
			t->session_hi_latch[n] = (uint32_t)(v >> 32);
			*val = (uint32_t)v;
		} else
			*val = t->session_hi_latch[n];
		return 0;
	}
	if (t->cfg.kind == MATCHA_KIND_MEM_SESSION && off >= MATCHA_HW_MEMS_WIN_LATE &&
	    off < MATCHA_HW_MEMS_WIN_BUSY + 8) {
		unsigned n = (off - MATCHA_HW_MEMS_WIN_LATE) / 8;
		uint64_t v = n ? t->busy : t->late;
		if (off % 8 == 0) {
			t->mems_hi_latch[n] = (uint32_t)(v >> 32);
			*val = (uint32_t)v;
		} else
			*val = t->mems_hi_latch[n];
		return 0;
	}
	return 1;
}

static uint32_t *staging_reg(struct fake_table *t, uint32_t off)
{
	const uint32_t words = 4 * MATCHA_HW_WIN_STAGING_WORDS;
	if (off == MATCHA_HW_WIN_INDEX) return &t->index;
	if (off == MATCHA_HW_WIN_FLAGS) return &t->staging.flags;
	if (off == MATCHA_HW_WIN_PRIORITY) return &t->staging.priority;
	if (off >= MATCHA_HW_WIN_KEY && off < MATCHA_HW_WIN_KEY + words)
		return &t->staging.key[(off - MATCHA_HW_WIN_KEY) / 4];
	if (off >= MATCHA_HW_WIN_MASK && off < MATCHA_HW_WIN_MASK + words)
		return &t->staging.mask[(off - MATCHA_HW_WIN_MASK) / 4];
	if (off >= MATCHA_HW_WIN_DATA && off < MATCHA_HW_WIN_DATA + words)
		return &t->staging.data[(off - MATCHA_HW_WIN_DATA) / 4];
	return NULL;
}

static struct fake_table *table_at(struct fake_dev *fd, uint32_t addr)
{
	uint32_t i = addr / WINDOW;
	return i >= 1 && i <= fd->cfg.ntables ? &fd->table[i - 1] : NULL;
}

void fake_add_app_block(struct fake_dev *fd)
{
	fd->app = (struct fake_app){
		.present = true,
		.id = MATCHA_HW_APP_ID_VALUE,
		.version = MATCHA_HW_APP_VERSION_VALUE,
		.control_bits = MATCHA_HW_APP_CONTROL_TX_PIPELINE | MATCHA_HW_APP_CONTROL_CPU_PORT,
	};
}

/* The app block's register at `addr`, or NULL (no block, or no register there). */
static uint32_t *app_reg(struct fake_dev *fd, uint32_t addr)
{
	struct fake_app *a = &fd->app;
	if (!a->present || addr < MATCHA_HW_APP_BASE)
		return NULL;
	switch (addr - MATCHA_HW_APP_BASE) {
	case MATCHA_HW_APP_ID: return &a->id;
	case MATCHA_HW_APP_VERSION: return &a->version;
	case MATCHA_HW_APP_CONTROL: return &a->control;
	case MATCHA_HW_APP_PACKET_OUTS: return &a->packet_outs;
	case MATCHA_HW_APP_PACKET_OUT_WRONG_PORT: return &a->wrong_port;
	case MATCHA_HW_APP_PACKET_OUT_MALFORMED: return &a->malformed;
	default: return NULL;
	}
}

static int fake_read32(void *ctx, uint32_t addr, uint32_t *val)
{
	struct fake_dev *fd = ctx;
	uint32_t *app;
	fd->reads++;
	if (addr % 4 || (long)addr == fd->fail_read_addr)
		return 1;
	if ((app = app_reg(fd, addr))) {
		*val = *app;
		return 0;
	}
	if (addr < WINDOW) {
		const struct fake_cfg *c = &fd->cfg;
		const uint32_t first = MATCHA_HW_INFO_DESCRIPTORS, bytes = MATCHA_HW_INFO_DESCRIPTOR_BYTES;
		if (addr == MATCHA_HW_INFO_MAGIC) *val = c->magic;
		else if (addr == MATCHA_HW_INFO_VERSION) *val = c->version;
		else if (addr == MATCHA_HW_INFO_BUILD_ID) *val = c->build_id;
		else if (addr == MATCHA_HW_INFO_OBJECTS) *val = c->ntables;
		else if (addr >= first && addr < first + bytes * c->ntables) {
			const struct fake_table_cfg *tc = &c->table[(addr - first) / bytes];
			uint32_t kind = tc->kind | (tc->counters ? MATCHA_HW_KIND_COUNTERS : 0) |
					(tc->default_action ? MATCHA_HW_KIND_DEFAULT_ACTION : 0) |
					(tc->prefix_store ? MATCHA_HW_KIND_PREFIX_STORE : 0) | tc->kind_extra;
			uint32_t w[MATCHA_HW_DESC_WORDS] = {
				[MATCHA_HW_DESC_KIND_WORD] = kind,
				[MATCHA_HW_DESC_KEY_BITS_WORD] = tc->key_bits,
				[MATCHA_HW_DESC_SIZE_WORD] = tc->size,
				[MATCHA_HW_DESC_DATA_BITS_WORD] = tc->data_bits,
				[MATCHA_HW_DESC_BASE_WORD] = WINDOW * ((addr - first) / bytes + 1),
				[MATCHA_HW_DESC_GEOMETRY_WORD] = tc->ways_or_levels,
				[MATCHA_HW_DESC_LATENCY_WORD] = tc->latency,
				[MATCHA_HW_DESC_EXTRA_WORD] = tc->kind != MATCHA_KIND_LPM ? tc->extra :
					tc->extra | tc->pointer_bits << MATCHA_HW_LPM_EXTRA_POINTER_SHIFT |
					tc->memory_levels << MATCHA_HW_LPM_EXTRA_MEMORY_SHIFT,
			};
			*val = w[(addr - first) % bytes / 4];
		} else
			return 1;
		return 0;
	}
	struct fake_table *t = table_at(fd, addr);
	if (!t)
		return 1;
	uint32_t off = addr % WINDOW, *reg;
	if (off == MATCHA_HW_WIN_STATUS) {
		*val = t->status | (t->busy_reads ? MATCHA_HW_STATUS_BUSY : 0u);
		if (t->busy_reads)
			t->busy_reads--;
	} else if ((reg = staging_reg(t, off)))
		*val = *reg;
	else if (off == MATCHA_HW_WIN_HITS) {
		*val = (uint32_t)t->hits;
		t->hits_hi_latch = (uint32_t)(t->hits >> 32);
	} else if (off == MATCHA_HW_WIN_HITS + 4)
		*val = t->hits_hi_latch;
	else if (off == MATCHA_HW_WIN_MISSES) {
		*val = (uint32_t)t->misses;
		t->misses_hi_latch = (uint32_t)(t->misses >> 32);
	} else if (off == MATCHA_HW_WIN_MISSES + 4)
		*val = t->misses_hi_latch;
	else if (t->cfg.kind == MATCHA_KIND_MEM_EXACT && off == MATCHA_HW_MEMX_WIN_STASH)
		*val = t->cfg.stash;
	else if (t->cfg.counters && off >= MATCHA_HW_WIN_PACKETS && off < MATCHA_HW_WIN_BYTES + 8) {
		uint64_t v = off < MATCHA_HW_WIN_BYTES ? t->packets_latch : t->bytes_latch;
		*val = (uint32_t)(off % 8 ? v >> 32 : v);
	} else
		return session_read(t, off, val);
	return 0;
}

static int fake_write32(void *ctx, uint32_t addr, uint32_t val)
{
	struct fake_dev *fd = ctx;
	struct fake_table *t = table_at(fd, addr);
	uint32_t off = addr % WINDOW, *reg;
	if (addr == MATCHA_HW_APP_BASE + MATCHA_HW_APP_CONTROL && fd->app.present) {
		fd->app.control = val & fd->app.control_bits;
		fd->app.control_writes++;
		return 0;
	}
	if (addr % 4 || !t)
		return 1;
	if (off == MATCHA_HW_WIN_CMD) {
		command(t, val);
		fd->commands++;
	} else if ((reg = staging_reg(t, off)) || (reg = session_reg(t, off)))
		*reg = val;
	else
		return 1;
	fd->writes++;
	if (fd->after_write)
		fd->after_write(fd, fd->after_write_arg);
	return 0;
}

const struct matcha_regs_ops fake_ops = { fake_read32, fake_write32 };

void fake_lpm_view(struct fake_dev *fd, unsigned table, struct fake_lpm_view *v)
{
	struct fake_table *t = &fd->table[table];
	for (unsigned l = 0; l < t->cfg.ways_or_levels; l++)
		v->words[l] = t->level[l];
	v->img = (struct matcha_lpm_nodes){
		.key_bits = t->cfg.key_bits,
		.pointer_bits = t->cfg.pointer_bits,
		.fanout = t->cfg.extra,
		.levels = t->cfg.ways_or_levels,
		.node_words = FAKE_NODE_WORDS,
		.words = v->words,
		.nodes = t->cfg.level_nodes,
	};
}

long fake_exact_find(struct fake_dev *fd, unsigned table, const uint8_t *key, unsigned key_bits)
{
	const struct fake_table *t = &fd->table[table];
	unsigned ways = t->cfg.ways_or_levels, slots = t->cfg.size / ways;
	uint32_t words[16];
	unsigned nwords = (t->cfg.key_bits + 31) / 32;
	test_be_to_words(key, (key_bits + 7) / 8, words, nwords);
	for (unsigned w = 0; w < ways; w++) {
		uint32_t i = w * slots + matcha_exact_index(key, key_bits, w, slots);
		if ((t->entries[i].flags & 1) &&
		    !memcmp(t->entries[i].key, words, nwords * sizeof *words))
			return (long)i;
	}
	return -1;
}
