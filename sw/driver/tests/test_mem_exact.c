/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory-backed exact tables (kind 7): placement in buckets, read-back, errors, adoption,
 * and the entries by name and matcha-ctl. The oracle is a model the tests keep: per
 * bucket, its entries as (valid, key, action, data), with the bucket of a key from the
 * CRC-64/XZ of its bytes (docs/tables.md, "The hash, bit-exactly") and the placement rule
 * of "Control path": a key in the first free entry of its bucket, refused when there is
 * none. After every call the fake's memory is compared with the model byte by byte, laid
 * out as "Layout and hash" says; the driver's shadow is never consulted.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ctl.h"
#include "fake_dev.h"
#include "util.h"

#define MEMX 0    /* the tested unit: 32-bit keys, 16-bit data, 1024 buckets of 4 entries */
#define ODD 1     /* 20-bit keys, 12-bit data: 2 + 3 + 2 = 7-byte entries, 4 bytes unused */
#define EXACT 2   /* an on-chip exact table, of another kind */
#define BEAT 32   /* bytes of a bucket: a beat of Corundum's 256-bit memory port */
#define SLOTS 4
#define CANARY 0xA5 /* what the unused bytes of the ODD table's buckets hold */
#define BUILD_ID 0x3E3EC7u

static struct fake_cfg memx_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = BUILD_ID,
		.ntables = 3,
	};
	c.table[MEMX] = (struct fake_table_cfg){ .kind = MATCHA_KIND_MEM_EXACT, .key_bits = 32,
						 .size = 1024 * SLOTS, .data_bits = 16,
						 .ways_or_levels = SLOTS, .latency = 512,
						 .extra = 8, .bucket_bytes = BEAT };
	c.table[ODD] = (struct fake_table_cfg){ .kind = MATCHA_KIND_MEM_EXACT, .key_bits = 20,
						.size = 64 * SLOTS, .data_bits = 12,
						.ways_or_levels = SLOTS, .latency = 512, .extra = 7,
						.bucket_bytes = BEAT };
	c.table[EXACT] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 16,
						  .size = 32, .data_bits = 8, .ways_or_levels = 2,
						  .latency = 3 };
	return c;
}

/* ------------------------------------------------------------------------ the model */

struct model_entry {
	bool valid;
	uint32_t key;
	uint8_t action;
	uint32_t data;
};

struct model {
	unsigned table, buckets, key_bits, data_bits, entry_bytes;
	struct model_entry *e; /* buckets * SLOTS, bucket b's entries from b * SLOTS */
};

static struct model model_new(const struct fake_cfg *c, unsigned table)
{
	const struct fake_table_cfg *t = &c->table[table];
	return (struct model){ .table = table, .buckets = t->size / SLOTS, .key_bits = t->key_bits,
			       .data_bits = t->data_bits, .entry_bytes = t->extra,
			       .e = calloc(t->size, sizeof(struct model_entry)) };
}

static unsigned key_bytes(const struct model *m) { return (m->key_bits + 7) / 8; }
static unsigned data_bytes(const struct model *m) { return (m->data_bits + 7) / 8; }

/* x as n big-endian bytes (the API's order) or little-endian ones (the memory's). */
static void be_bytes(uint32_t x, unsigned n, uint8_t *out)
{
	for (unsigned i = 0; i < n; i++)
		out[n - 1 - i] = (uint8_t)(x >> 8 * i);
}

static void le_bytes(uint32_t x, unsigned n, uint8_t *out)
{
	for (unsigned i = 0; i < n; i++)
		out[i] = (uint8_t)(x >> 8 * i);
}

static uint32_t bucket_of(const struct model *m, uint32_t key)
{
	uint8_t b[4];
	be_bytes(key, key_bytes(m), b);
	return (uint32_t)matcha_crc64_xz(b, key_bytes(m)) & (m->buckets - 1);
}

/* The INDEX of entry `slot` of bucket `b`. */
static uint32_t index_of(uint32_t b, unsigned slot)
{
	return b << MATCHA_HW_MEMX_INDEX_SLOT_BITS | slot;
}

/* The INDEX of the model's entry m->e[at]. */
static uint32_t index_at(uint32_t at)
{
	return index_of(at / SLOTS, at % SLOTS);
}

/* Where the model holds the key (an index into m->e), or -1. */
static long model_find(const struct model *m, uint32_t key)
{
	uint32_t b = bucket_of(m, key);
	for (unsigned s = 0; s < SLOTS; s++)
		if (m->e[b * SLOTS + s].valid && m->e[b * SLOTS + s].key == key)
			return (long)(b * SLOTS + s);
	return -1;
}

/* What an add must return, and where the key then is (*index, unless NULL). */
static int model_add(struct model *m, uint32_t key, uint8_t action, uint32_t data,
		     uint32_t *index)
{
	uint32_t b = bucket_of(m, key);
	if (model_find(m, key) >= 0)
		return MATCHA_EEXIST;
	for (unsigned s = 0; s < SLOTS; s++)
		if (!m->e[b * SLOTS + s].valid) {
			m->e[b * SLOTS + s] = (struct model_entry){ true, key, action, data };
			if (index)
				*index = index_of(b, s);
			return 0;
		}
	return MATCHA_ENOSPC;
}

static int model_modify(struct model *m, uint32_t key, uint8_t action, uint32_t data)
{
	long at = model_find(m, key);
	if (at < 0)
		return MATCHA_ENOENT;
	m->e[at].action = action;
	m->e[at].data = data;
	return 0;
}

static int model_delete(struct model *m, uint32_t key)
{
	long at = model_find(m, key);
	if (at < 0)
		return MATCHA_ENOENT;
	m->e[at].valid = false;
	return 0;
}

/* ------------------------------------------------------------------- the driver */

static int drv_add(matcha_dev *dev, const struct model *m, uint32_t key, uint8_t action,
		   uint32_t data)
{
	uint8_t k[4], d[4];
	be_bytes(key, key_bytes(m), k);
	be_bytes(data, data_bytes(m), d);
	return matcha_mem_exact_add(dev, m->table, k, m->key_bits, action, d, m->data_bits);
}

static int drv_modify(matcha_dev *dev, const struct model *m, uint32_t key, uint8_t action,
		      uint32_t data)
{
	uint8_t k[4], d[4];
	be_bytes(key, key_bytes(m), k);
	be_bytes(data, data_bytes(m), d);
	return matcha_mem_exact_modify(dev, m->table, k, m->key_bits, action, d, m->data_bits);
}

static int drv_delete(matcha_dev *dev, const struct model *m, uint32_t key)
{
	uint8_t k[4];
	be_bytes(key, key_bytes(m), k);
	return matcha_mem_exact_delete(dev, m->table, k, m->key_bits);
}

static int drv_lookup(matcha_dev *dev, const struct model *m, uint32_t key, uint32_t *index)
{
	uint8_t k[4];
	be_bytes(key, key_bytes(m), k);
	return matcha_mem_exact_lookup_sw(dev, m->table, k, m->key_bits, index);
}

/* The unit's answer to a key: the INDEX of its entry, or -1. */
static long hw_lookup(struct fake_dev *fd, const struct model *m, uint32_t key)
{
	uint8_t k[4];
	be_bytes(key, key_bytes(m), k);
	return fake_mem_exact_lookup(fd, m->table, k);
}

/* Writes `byte` into the bytes of every bucket that hold no entry. */
static void fill_tails(struct fake_dev *fd, const struct model *m, uint8_t byte)
{
	for (unsigned b = 0; b < m->buckets; b++)
		memset(fd->table[m->table].memory + b * BEAT + SLOTS * m->entry_bytes, byte,
		       BEAT - SLOTS * m->entry_bytes);
}

/*
 * Whether the fake's memory is the model's, as docs/tables.md lays entries out: byte 0
 * the flags (bit 0 valid), byte 1 the action id, then the key and the action data, each
 * little-endian in whole bytes. A free entry needs only its valid bit clear (a delete
 * writes the flags alone as they matter); the bytes after the entries must hold `tail`.
 */
static bool memory_is_model(const struct fake_dev *fd, const struct model *m, uint8_t tail,
			    char *why, size_t len)
{
	const uint8_t *mem = fd->table[m->table].memory;
	for (uint32_t b = 0; b < m->buckets; b++) {
		for (unsigned s = 0; s < SLOTS; s++) {
			const struct model_entry *me = &m->e[b * SLOTS + s];
			const uint8_t *got = mem + b * BEAT + s * m->entry_bytes;
			uint8_t want[16] = { 1, me->action };
			if (!me->valid) {
				if (!(got[0] & 1))
					continue;
				snprintf(why, len, "bucket %u entry %u is valid, the model's is "
					 "free", (unsigned)b, s);
				return false;
			}
			le_bytes(me->key, key_bytes(m), want + 2);
			le_bytes(me->data, data_bytes(m), want + 2 + key_bytes(m));
			for (unsigned i = 0; i < m->entry_bytes; i++)
				if (got[i] != want[i]) {
					snprintf(why, len, "bucket %u entry %u byte %u is 0x%02x, "
						 "the model's 0x%02x (key 0x%x)", (unsigned)b, s, i,
						 got[i], want[i], (unsigned)me->key);
					return false;
				}
		}
		for (unsigned i = SLOTS * m->entry_bytes; i < BEAT; i++)
			if (mem[b * BEAT + i] != tail) {
				snprintf(why, len, "bucket %u unused byte %u is 0x%02x, not 0x%02x",
					 (unsigned)b, i, mem[b * BEAT + i], tail);
				return false;
			}
	}
	return true;
}

#define CHECK_MEMORY(fd, m, tail)                                                          \
	do {                                                                               \
		char why_[200];                                                            \
		CHECK_MSG(memory_is_model(fd, m, tail, why_, sizeof why_), "%s", why_);    \
	} while (0)

/* The first n keys from `from` up whose bucket is b, found by trying each in turn. */
static unsigned colliding(const struct model *m, uint32_t b, uint32_t from, uint32_t *keys,
			  unsigned n)
{
	unsigned found = 0;
	for (uint64_t k = from; found < n && k < 1ull << m->key_bits; k++)
		if (bucket_of(m, (uint32_t)k) == b)
			keys[found++] = (uint32_t)k;
	return found;
}

/* ------------------------------------------------------------------------- tests */

void test_mem_exact_discovery(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_table_info in;
	CHECK_OK(dev, matcha_table_info(dev, MEMX, &in));
	CHECK(in.kind == MATCHA_KIND_MEM_EXACT && in.size == 4096 && in.bucket_entries == SLOTS &&
	      in.key_bits == 32 && in.data_bits == 16 && in.latency == 512 && in.ways == 0 &&
	      !in.counters && !in.default_action);
	CHECK_OK(dev, matcha_table_info(dev, EXACT, &in));
	CHECK(in.bucket_entries == 0);
	matcha_close(dev);
	fake_free(fd);

	/* Geometry the hardware cannot have, or an entry encoded otherwise than the docs. */
	static const struct {
		unsigned slots, size, key_bits, data_bits, entry_bytes;
		const char *says;
	} bad[] = {
		{ 0, 4096, 32, 16, 8, "mem_exact table 0: 0 entries per bucket, a bucket holds "
				      "1..16" },
		{ 17, 17 * 4, 8, 0, 3, "17 entries per bucket, a bucket holds 1..16" },
		{ 4, 4 * 1000, 32, 16, 8, "4000 entries in buckets of 4 is not a power-of-two "
					  "number of buckets" },
		{ 4, 4097, 32, 16, 8, "4097 entries in buckets of 4" },
		{ 4, 4096, 32, 16, 9, "9-byte entries, but a 32-bit key and 16-bit action data "
				      "make 8" },
	};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cfg = memx_cfg();
		cfg.ntables = 1;
		struct fake_table_cfg *t = &cfg.table[MEMX];
		t->ways_or_levels = bad[i].slots;
		t->size = bad[i].size;
		t->key_bits = bad[i].key_bits;
		t->data_bits = bad[i].data_bits;
		t->extra = bad[i].entry_bytes;
		t->bucket_bytes = 64;
		fd = fake_new(&cfg);
		CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
		CHECK_MSG(strstr(matcha_last_error(dev), bad[i].says), "%s",
			  matcha_last_error(dev));
		matcha_close(dev);
		fake_free(fd);
	}
}

void test_mem_exact_first_free_entry_of_bucket(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 0x0A000001), keys[SLOTS], want, got;
	CHECK(colliding(&m, b, 0x0A000000, keys, SLOTS) == SLOTS);
	for (unsigned s = 0; s < SLOTS; s++) {
		unsigned long commands = fd->commands;
		CHECK_OK(dev, drv_add(dev, &m, keys[s], (uint8_t)(0x80 + s), 0xBEE0 + s));
		CHECK(model_add(&m, keys[s], (uint8_t)(0x80 + s), 0xBEE0 + s, &want) == 0);
		CHECK_MSG(want == index_of(b, s), "key %u went to 0x%x", s, (unsigned)want);
		/* One WRITE and no READ: the shadow places the key. */
		CHECK_MSG(fd->commands - commands == 1, "an add issued %lu commands",
			  fd->commands - commands);
		unsigned long reads = fd->reads, writes = fd->writes;
		CHECK_OK(dev, drv_lookup(dev, &m, keys[s], &got));
		CHECK(got == want && fd->reads == reads && fd->writes == writes);
		CHECK(hw_lookup(fd, &m, keys[s]) == (long)want);
		CHECK_MEMORY(fd, &m, 0);
	}
	for (unsigned s = 0; s < SLOTS; s++) {
		struct matcha_entry e;
		uint8_t k[4], d[2];
		be_bytes(keys[s], 4, k);
		be_bytes(0xBEE0 + s, 2, d);
		CHECK_OK(dev, matcha_mem_exact_read(dev, MEMX, index_of(b, s), &e));
		CHECK(e.valid && e.action_id == 0x80 + s && e.key_bits == 32 && e.data_bits == 16 &&
		      !memcmp(e.key, k, 4) && !memcmp(e.data, d, 2));
	}
	struct matcha_entry e;
	CHECK_OK(dev, matcha_mem_exact_read(dev, MEMX, index_of(b ^ 1, 0), &e));
	CHECK(!e.valid);

	/* A key narrower than the table is zero-extended: the same entry as its full width. */
	uint8_t narrow[2] = { 0x12, 0x34 };
	CHECK_OK(dev, matcha_mem_exact_add(dev, MEMX, narrow, 16, 5, NULL, 0));
	CHECK(model_add(&m, 0x1234, 5, 0, &want) == 0);
	CHECK_OK(dev, drv_lookup(dev, &m, 0x1234, &got));
	CHECK(got == want && want == index_of(bucket_of(&m, 0x1234), 0));
	CHECK_MEMORY(fd, &m, 0);
	CHECK_RC(dev, drv_add(dev, &m, 0x1234, 5, 0), MATCHA_EEXIST);
	char says[120];
	snprintf(says, sizeof says, "the key is already in table 0 (entry 0 of bucket %u)",
		 (unsigned)bucket_of(&m, 0x1234));
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_full_bucket_refuses_key(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 77), keys[SLOTS + 1], index;
	CHECK(colliding(&m, b, 0, keys, SLOTS + 1) == SLOTS + 1);
	for (unsigned s = 0; s < SLOTS; s++) {
		CHECK_OK(dev, drv_add(dev, &m, keys[s], 1, s));
		CHECK(model_add(&m, keys[s], 1, s, NULL) == 0);
	}
	unsigned long writes = fd->writes;
	CHECK_RC(dev, drv_add(dev, &m, keys[SLOTS], 2, 2), MATCHA_ENOSPC);
	CHECK(model_add(&m, keys[SLOTS], 2, 2, NULL) == MATCHA_ENOSPC);
	char says[120];
	snprintf(says, sizeof says, "mem_exact_add: bucket %u of table 0 is full: its 4 entries "
		 "hold other keys", (unsigned)b);
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	CHECK_MSG(fd->writes == writes, "a refused add wrote %lu registers", fd->writes - writes);
	CHECK(hw_lookup(fd, &m, keys[SLOTS]) == -1);
	CHECK_RC(dev, drv_lookup(dev, &m, keys[SLOTS], &index), MATCHA_ENOENT);
	snprintf(says, sizeof says, "the key is not in table 0 (bucket %u)", (unsigned)b);
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	CHECK_MEMORY(fd, &m, 0);

	/* Another bucket takes keys all the same, from its first entry. */
	uint32_t other = keys[SLOTS] + 1;
	while (bucket_of(&m, other) == b)
		other++;
	CHECK_OK(dev, drv_add(dev, &m, other, 3, 3));
	CHECK(model_add(&m, other, 3, 3, NULL) == 0);
	CHECK_OK(dev, drv_lookup(dev, &m, other, &index));
	CHECK(index == index_of(bucket_of(&m, other), 0));
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_delete_then_add_reuses_entry(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 0xC0A80001), keys[SLOTS + 2], index;
	CHECK(colliding(&m, b, 0xC0A80000, keys, SLOTS + 2) == SLOTS + 2);
	for (unsigned s = 0; s < SLOTS; s++) {
		CHECK_OK(dev, drv_add(dev, &m, keys[s], 1, s));
		CHECK(model_add(&m, keys[s], 1, s, NULL) == 0);
	}
	unsigned long commands = fd->commands;
	CHECK_OK(dev, drv_delete(dev, &m, keys[1]));
	CHECK(model_delete(&m, keys[1]) == 0 && fd->commands - commands == 1);
	CHECK_MEMORY(fd, &m, 0);
	CHECK(hw_lookup(fd, &m, keys[1]) == -1);
	for (unsigned s = 0; s < SLOTS; s++)
		CHECK(s == 1 || hw_lookup(fd, &m, keys[s]) == (long)index_of(b, s));
	CHECK_RC(dev, drv_lookup(dev, &m, keys[1], &index), MATCHA_ENOENT);
	CHECK_RC(dev, drv_delete(dev, &m, keys[1]), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(dev), "mem_exact_delete: the key is not in table 0"));

	/* The freed entry takes the next key of the bucket, which the full bucket refused. */
	CHECK_OK(dev, drv_add(dev, &m, keys[SLOTS], 2, 0x44));
	CHECK(model_add(&m, keys[SLOTS], 2, 0x44, NULL) == 0);
	CHECK_OK(dev, drv_lookup(dev, &m, keys[SLOTS], &index));
	CHECK_MSG(index == index_of(b, 1), "the key went to 0x%x", (unsigned)index);
	CHECK_MEMORY(fd, &m, 0);
	/* Deleted and added again, a key takes the same entry. */
	CHECK_OK(dev, drv_delete(dev, &m, keys[SLOTS]));
	CHECK(model_delete(&m, keys[SLOTS]) == 0);
	CHECK_OK(dev, drv_add(dev, &m, keys[1], 3, 0x55));
	CHECK(model_add(&m, keys[1], 3, 0x55, NULL) == 0);
	CHECK_OK(dev, drv_lookup(dev, &m, keys[1], &index));
	CHECK(index == index_of(b, 1));
	CHECK_MEMORY(fd, &m, 0);
	/* With two entries free, the first of them. */
	CHECK_OK(dev, drv_delete(dev, &m, keys[2]));
	CHECK_OK(dev, drv_delete(dev, &m, keys[0]));
	CHECK(model_delete(&m, keys[2]) == 0 && model_delete(&m, keys[0]) == 0);
	CHECK_OK(dev, drv_add(dev, &m, keys[SLOTS], 4, 4));
	CHECK_OK(dev, drv_add(dev, &m, keys[SLOTS + 1], 5, 5));
	CHECK(model_add(&m, keys[SLOTS], 4, 4, NULL) == 0 &&
	      model_add(&m, keys[SLOTS + 1], 5, 5, NULL) == 0);
	CHECK(hw_lookup(fd, &m, keys[SLOTS]) == (long)index_of(b, 0) &&
	      hw_lookup(fd, &m, keys[SLOTS + 1]) == (long)index_of(b, 2));
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_modify_keeps_entry(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 4242), keys[SLOTS + 1], index;
	CHECK(colliding(&m, b, 4000, keys, SLOTS + 1) == SLOTS + 1);
	for (unsigned s = 0; s < SLOTS; s++) {
		CHECK_OK(dev, drv_add(dev, &m, keys[s], 1, 0x1000 + s));
		CHECK(model_add(&m, keys[s], 1, 0x1000 + s, NULL) == 0);
	}
	const uint8_t *bucket = fd->table[MEMX].memory + b * BEAT;
	uint8_t before[BEAT];
	memcpy(before, bucket, BEAT);
	unsigned long commands = fd->commands;
	CHECK_OK(dev, drv_modify(dev, &m, keys[2], 0x7E, 0xFACE));
	CHECK(model_modify(&m, keys[2], 0x7E, 0xFACE) == 0);
	CHECK(fd->commands - commands == 1);
	CHECK_OK(dev, drv_lookup(dev, &m, keys[2], &index));
	CHECK(index == index_of(b, 2) && hw_lookup(fd, &m, keys[2]) == (long)index);
	CHECK_MEMORY(fd, &m, 0);
	/* Only the action and data bytes of entry 2 changed: bytes 1 and 6..7 of it. */
	for (unsigned i = 0; i < BEAT; i++) {
		bool changes = i == 2 * 8 + 1 || i == 2 * 8 + 6 || i == 2 * 8 + 7;
		CHECK_MSG((bucket[i] != before[i]) == changes, "byte %u of the bucket: 0x%02x, was "
			  "0x%02x", i, bucket[i], before[i]);
	}
	struct matcha_entry e;
	CHECK_OK(dev, matcha_mem_exact_read(dev, MEMX, index, &e));
	CHECK(e.valid && e.action_id == 0x7E && e.data[0] == 0xFA && e.data[1] == 0xCE);

	unsigned long writes = fd->writes;
	CHECK_RC(dev, drv_modify(dev, &m, keys[SLOTS], 1, 1), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(dev), "mem_exact_modify: the key is not in table 0"));
	uint8_t k[4], wide[3] = { 1, 0, 0 };
	be_bytes(keys[0], 4, k);
	CHECK_RC(dev, matcha_mem_exact_modify(dev, MEMX, k, 32, 1, wide, 17), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "action data is 17 bits, table 0 takes 16"));
	CHECK(fd->writes == writes);
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_write_touches_entry_bytes_only(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, ODD);
	/* All 20 key bits and 12 data bits set: the top byte of each is padded with zeros. */
	uint32_t b = bucket_of(&m, 0xFFFFF), keys[SLOTS];
	keys[0] = 0xFFFFF;
	CHECK(colliding(&m, b, 1, keys + 1, SLOTS - 1) == SLOTS - 1);
	/* The bucket's free entries hold a pattern whose valid bit is clear, its unused bytes
	 * (4 after 4 entries of 7 bytes) the canary: neither may change but by the entry. */
	fill_tails(fd, &m, CANARY);
	uint8_t *bucket = fd->table[ODD].memory + b * BEAT;
	memset(bucket, 0xA4, SLOTS * 7);
	for (unsigned s = 0; s < SLOTS; s++) {
		CHECK_OK(dev, drv_add(dev, &m, keys[s], 0xFF, 0xFFF));
		CHECK(model_add(&m, keys[s], 0xFF, 0xFFF, NULL) == 0);
		CHECK_MEMORY(fd, &m, CANARY);
		for (unsigned i = (s + 1) * 7; i < SLOTS * 7; i++)
			CHECK_MSG(bucket[i] == 0xA4, "entry %u: byte %u of the bucket is 0x%02x", s,
				  i, bucket[i]);
	}
	static const uint8_t first[7] = { 0x01, 0xFF, 0xFF, 0xFF, 0x0F, 0xFF, 0x0F };
	CHECK(!memcmp(bucket, first, 7));

	/* CLEAR writes every bucket zero, unused bytes included; the table starts over. */
	CHECK_OK(dev, matcha_table_clear(dev, ODD));
	for (unsigned i = 0; i < m.buckets * BEAT; i++)
		CHECK_MSG(fd->table[ODD].memory[i] == 0, "byte %u after CLEAR: 0x%02x", i,
			  fd->table[ODD].memory[i]);
	memset(m.e, 0, m.buckets * SLOTS * sizeof *m.e);
	uint32_t index;
	CHECK_RC(dev, drv_lookup(dev, &m, keys[0], &index), MATCHA_ENOENT);
	CHECK_OK(dev, drv_add(dev, &m, keys[3], 1, 1));
	CHECK(model_add(&m, keys[3], 1, 1, &index) == 0 && index == index_of(b, 0));
	CHECK(hw_lookup(fd, &m, keys[3]) == (long)index);
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_argument_errors(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t key[8] = { 0 }, data[4] = { 0 };
	struct matcha_entry e;
	unsigned long writes = fd->writes, reads = fd->reads;

	/* A key wider than the table's, data wider than its action data. */
	CHECK_RC(dev, matcha_mem_exact_add(dev, MEMX, key, 33, 1, data, 16), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "key is 33 bits, table 0 takes 32"));
	CHECK_RC(dev, matcha_mem_exact_add(dev, ODD, key, 21, 1, data, 12), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "key is 21 bits, table 1 takes 20"));
	CHECK_RC(dev, matcha_mem_exact_add(dev, MEMX, key, 32, 1, data, 17), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "action data is 17 bits, table 0 takes 16"));
	key[0] = 0x10; /* bit 20 of a 3-byte key */
	CHECK_RC(dev, matcha_mem_exact_add(dev, ODD, key, 20, 1, data, 12), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "bits set above bit 19"));
	CHECK_RC(dev, matcha_mem_exact_add(dev, MEMX, key, 0, 1, data, 16), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "key of table 0 is 0 bits"));
	CHECK_RC(dev, matcha_mem_exact_add(dev, MEMX, NULL, 32, 1, data, 16), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_mem_exact_delete(dev, MEMX, key, 40), MATCHA_E2BIG);
	CHECK_RC(dev, matcha_mem_exact_lookup_sw(dev, MEMX, key, 40, (uint32_t[1]){ 0 }),
		 MATCHA_E2BIG);

	/* An INDEX past the buckets, or past a bucket's entries. */
	CHECK_RC(dev, matcha_mem_exact_read(dev, MEMX, index_of(1024, 0), &e), MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(dev), "mem_exact_read: index 0x4000 (bucket 1024, slot "
			 "0) is out of range: table 0 has 1024 buckets of 4 entries"), "%s",
		  matcha_last_error(dev));
	CHECK_RC(dev, matcha_mem_exact_read(dev, MEMX, index_of(3, SLOTS), &e), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "index 0x34 (bucket 3, slot 4) is out of range"));
	CHECK_RC(dev, matcha_mem_exact_read(dev, ODD, index_of(64, 0), &e), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_mem_exact_read(dev, MEMX, UINT32_MAX, &e), MATCHA_EINVAL);

	/* The other kind's calls, and this kind's on another. */
	CHECK_RC(dev, matcha_mem_exact_add(dev, EXACT, key, 16, 1, data, 8), MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "mem_exact_add: table 2 is of kind exact, not "
		     "mem_exact"));
	CHECK_RC(dev, matcha_mem_exact_read(dev, EXACT, 0, &e), MATCHA_EKIND);
	CHECK_RC(dev, matcha_mem_exact_lookup_sw(dev, EXACT, key, 16, (uint32_t[1]){ 0 }),
		 MATCHA_EKIND);
	CHECK_RC(dev, matcha_exact_add(dev, MEMX, key, 32, 1, data, 16), MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "exact_add: table 0 is of kind mem_exact, not exact"));
	CHECK_RC(dev, matcha_exact_read(dev, ODD, 0, &e), MATCHA_EKIND);
	CHECK_RC(dev, matcha_mem_exact_modify(dev, 3, key, 32, 1, data, 16), MATCHA_ENOTABLE);
	CHECK(strstr(matcha_last_error(dev), "mem_exact_modify: table 3 does not exist"));
	/* The unit has neither per-entry counters nor a default action. */
	CHECK_RC(dev, matcha_counters_read(dev, MEMX, 0, NULL, NULL), MATCHA_ENOTSUP);
	CHECK_RC(dev, matcha_table_set_default(dev, MEMX, 1, NULL, 0), MATCHA_ENOTSUP);
	CHECK_MSG(fd->writes == writes && fd->reads == reads, "refused calls made %lu writes and "
		  "%lu reads", fd->writes - writes, fd->reads - reads);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_memory_write_error(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct fake_table *t = &fd->table[MEMX];
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 99), keys[2], index;
	CHECK(colliding(&m, b, 0, keys, 2) == 2);
	/* The contract names no error code for a refused memory write yet (docs/tables.md,
	 * "What is left"): the driver must report whatever STATUS says. The write lands, the
	 * worst case for a shadow: the memory holds the entry, the driver does not. */
	const uint32_t refused = MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD + 1;
	char says[200];
	t->write_error = refused;
	CHECK_RC(dev, drv_add(dev, &m, keys[0], 1, 0x11), MATCHA_EHW);
	snprintf(says, sizeof says, "mem_exact_add: the write of entry 0 of bucket %u of table 0 "
		 "failed (table 0: command %u on index 0x%x failed with error %u)", (unsigned)b,
		 MATCHA_HW_CMD_WRITE, (unsigned)index_of(b, 0), (unsigned)refused);
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	CHECK(hw_lookup(fd, &m, keys[0]) == (long)index_of(b, 0));
	CHECK_RC(dev, drv_lookup(dev, &m, keys[0], &index), MATCHA_ENOENT);
	/* The retry writes the same entry: no second copy of the key. */
	CHECK_OK(dev, drv_add(dev, &m, keys[0], 1, 0x11));
	CHECK(model_add(&m, keys[0], 1, 0x11, &index) == 0 && index == index_of(b, 0));
	CHECK_MEMORY(fd, &m, 0);

	t->write_error = refused;
	CHECK_RC(dev, drv_modify(dev, &m, keys[0], 2, 0x22), MATCHA_EHW);
	CHECK_MSG(strstr(matcha_last_error(dev), "mem_exact_modify: the write of entry 0 of "
			 "bucket"), "%s", matcha_last_error(dev));
	CHECK_OK(dev, drv_modify(dev, &m, keys[0], 2, 0x22));
	CHECK(model_modify(&m, keys[0], 2, 0x22) == 0);
	CHECK_MEMORY(fd, &m, 0);

	/* A refused delete leaves the key in the shadow: its entry is not given to another
	 * key of the bucket until a delete succeeds. */
	t->write_error = refused;
	CHECK_RC(dev, drv_delete(dev, &m, keys[0]), MATCHA_EHW);
	CHECK_MSG(strstr(matcha_last_error(dev), "mem_exact_delete: the write of entry 0 of "
			 "bucket"), "%s", matcha_last_error(dev));
	CHECK_OK(dev, drv_lookup(dev, &m, keys[0], &index));
	CHECK(index == index_of(b, 0));
	CHECK_OK(dev, drv_add(dev, &m, keys[1], 3, 0x33));
	CHECK(model_add(&m, keys[1], 3, 0x33, &index) == 0 && index == index_of(b, 1));
	CHECK_OK(dev, drv_delete(dev, &m, keys[0]));
	CHECK(model_delete(&m, keys[0]) == 0);
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

void test_mem_exact_random_against_model(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct model m = model_new(&cfg, ODD);
	/* 384 keys for 64 buckets of 4: six a bucket on average, so buckets fill and refuse. */
	enum { KEYS = 384, OPS = 4000 };
	uint32_t universe[KEYS];
	for (unsigned i = 0; i < KEYS; i++) {
		bool seen;
		do {
			universe[i] = rng_below(&r, 1u << 20);
			seen = false;
			for (unsigned j = 0; j < i; j++)
				seen = seen || universe[j] == universe[i];
		} while (seen);
	}
	fill_tails(fd, &m, CANARY);
	unsigned done[5] = { 0 }, full = 0;
	for (unsigned op = 0; op < OPS; op++) {
		uint32_t key = universe[rng_below(&r, KEYS)], data = rng_below(&r, 1u << 12);
		uint8_t action = (uint8_t)rng_next(&r);
		unsigned what = rng_below(&r, 5);
		uint32_t index, want_index = 0;
		int rc, want;
		switch (what) {
		case 0:
		case 1:
			want = model_add(&m, key, action, data, &want_index);
			rc = drv_add(dev, &m, key, action, data);
			full += want == MATCHA_ENOSPC;
			break;
		case 2:
			want = model_modify(&m, key, action, data);
			rc = drv_modify(dev, &m, key, action, data);
			break;
		case 3:
			want = model_delete(&m, key);
			rc = drv_delete(dev, &m, key);
			break;
		default: {
			long at = model_find(&m, key);
			want = at < 0 ? MATCHA_ENOENT : 0;
			want_index = at < 0 ? 0 : index_at((uint32_t)at);
			rc = drv_lookup(dev, &m, key, &index);
			break;
		}
		}
		CHECK_MSG(rc == want, "op %u (%u) on key 0x%05x returned %d, the model %d: %s", op,
			  what, (unsigned)key, rc, want, matcha_last_error(dev));
		if (!rc && (what < 2 || what == 4)) {
			if (what < 2)
				CHECK_OK(dev, drv_lookup(dev, &m, key, &index));
			CHECK_MSG(index == want_index, "op %u: key 0x%05x at 0x%x, the model's "
				  "0x%x", op, (unsigned)key, (unsigned)index, (unsigned)want_index);
		}
		done[what] += !rc;
		CHECK_MEMORY(fd, &m, CANARY);

		/* A READ of any entry gives the model's. */
		uint32_t at = rng_below(&r, m.buckets * SLOTS);
		const struct model_entry *me = &m.e[at];
		struct matcha_entry e;
		uint8_t k[3], d[2];
		be_bytes(me->key, 3, k);
		be_bytes(me->data, 2, d);
		CHECK_OK(dev, matcha_mem_exact_read(dev, ODD, index_at(at), &e));
		CHECK_MSG(e.valid == me->valid && (!me->valid || (e.action_id == me->action &&
			  !memcmp(e.key, k, 3) && !memcmp(e.data, d, 2))), "op %u: entry %u reads "
			  "back otherwise than the model's", op, (unsigned)at);
	}
	for (unsigned i = 0; i < KEYS; i++) {
		long at = model_find(&m, universe[i]);
		long want = at < 0 ? -1 : (long)index_at((uint32_t)at);
		long got = hw_lookup(fd, &m, universe[i]);
		CHECK_MSG(got == want, "key 0x%05x: the unit answers %ld, the model %ld",
			  (unsigned)universe[i], got, want);
	}
	printf("  %u adds, %u refused for a full bucket, %u modifies, %u deletes, %u lookups\n",
	       done[0] + done[1], full, done[2], done[3], done[4]);
	CHECK(full > 0 && done[0] + done[1] > 0 && done[3] > 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

/* A command straight to the fake's window: the STATUS error it ends with. */
static uint32_t raw_command(struct fake_dev *fd, unsigned table, uint32_t cmd, uint32_t index)
{
	uint32_t base = fd->table[table].base, status;
	fake_ops.write32(fd, base + MATCHA_HW_WIN_INDEX, index);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_CMD, cmd);
	do
		fake_ops.read32(fd, base + MATCHA_HW_WIN_STATUS, &status);
	while (status & MATCHA_HW_STATUS_BUSY);
	return status >> MATCHA_HW_STATUS_ERROR_SHIFT & MATCHA_HW_STATUS_ERROR_MASK;
}

/* Whether a WRITE and a READ straight to the fake's window at each of the n INDEXes end
 * with the INDEX range error. */
static bool raw_out_of_range(struct fake_dev *fd, unsigned table, const uint32_t *index,
			     unsigned n)
{
	const uint32_t range = MATCHA_HW_STATUS_ERROR_INDEX_RANGE;
	for (unsigned i = 0; i < n; i++)
		if (raw_command(fd, table, MATCHA_HW_CMD_WRITE, index[i]) != range ||
		    raw_command(fd, table, MATCHA_HW_CMD_READ, index[i]) != range)
			return false;
	return true;
}

/* Whether a READ straight to the fake's window at INDEX `index` (FLAGS cleared before it)
 * leaves FLAGS, KEY and DATA (their first words) as given. */
static bool raw_reads_back(struct fake_dev *fd, unsigned table, uint32_t index, uint32_t flags,
			   uint32_t key, uint32_t data)
{
	uint32_t base = fd->table[table].base, got[3];
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS, 0);
	if (raw_command(fd, table, MATCHA_HW_CMD_READ, index))
		return false;
	fake_ops.read32(fd, base + MATCHA_HW_WIN_FLAGS, &got[0]);
	fake_ops.read32(fd, base + MATCHA_HW_WIN_KEY, &got[1]);
	fake_ops.read32(fd, base + MATCHA_HW_WIN_DATA, &got[2]);
	return got[0] == flags && got[1] == key && got[2] == data;
}

/* The fake's window answers as the unit's (docs/tables.md, "Control path"). */
void test_mem_exact_fake_window(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct fake_table *t = &fd->table[MEMX];
	uint32_t base = t->base;
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS,
			 MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9));
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY, 0x11223344);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_DATA, 0xAABBCCDD);
	static const uint32_t outside[] = { 4, 15, 1024u << 4, 1025u << 4 | 1, UINT32_MAX };
	CHECK(raw_out_of_range(fd, MEMX, outside, sizeof outside / sizeof outside[0]));
	for (unsigned i = 0; i < 1024 * BEAT; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u written by a refused WRITE", i);
	/* The last entry of the last bucket: bytes 24..31 of its beat, the data's high
	 * byte dropped (16 bits). */
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_WRITE, 1023u << 4 | 3) == 0);
	static const uint8_t entry[8] = { 0x01, 0x09, 0x44, 0x33, 0x22, 0x11, 0xDD, 0xCC };
	CHECK(!memcmp(t->memory + 1023 * BEAT + 24, entry, 8));
	for (unsigned i = 0; i < 1023 * BEAT + 24; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u written", i);
	CHECK(raw_reads_back(fd, MEMX, 1023u << 4 | 3, MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9),
			     0x11223344, 0xCCDD));
	/* Neither counters nor a default action; CLEAR zeroes the memory. */
	static const uint32_t absent[] = { MATCHA_HW_CMD_ZERO, MATCHA_HW_CMD_DEFAULT,
					   MATCHA_HW_CMD_READ_DEFAULT };
	for (unsigned i = 0; i < 3; i++)
		CHECK(raw_command(fd, MEMX, absent[i], 0) == MATCHA_HW_STATUS_ERROR_UNKNOWN_CMD);
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_CLEAR, UINT32_MAX) == 0);
	for (unsigned i = 0; i < 1024 * BEAT; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u after CLEAR", i);

	/* Staged bits beyond a 20-bit key and 12-bit data leave the padding zero. */
	base = fd->table[ODD].base;
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS,
			 MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(3));
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY, UINT32_MAX);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_DATA, UINT32_MAX);
	CHECK(raw_command(fd, ODD, MATCHA_HW_CMD_WRITE, 5u << 4 | 1) == 0);
	static const uint8_t padded[7] = { 0x01, 0x03, 0xFF, 0xFF, 0x0F, 0xFF, 0x0F };
	CHECK(!memcmp(fd->table[ODD].memory + 5 * BEAT + 7, padded, 7));
	fake_free(fd);
}

void test_mem_exact_adopt(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 5), keys[SLOTS + 2], index;
	CHECK(colliding(&m, b, 0, keys, SLOTS + 2) == SLOTS + 2);
	/* What an earlier handle left: a bucket with its second entry freed, and others. */
	for (unsigned s = 0; s < SLOTS; s++) {
		CHECK_OK(dev, drv_add(dev, &m, keys[s], (uint8_t)s, s));
		CHECK(model_add(&m, keys[s], (uint8_t)s, s, NULL) == 0);
	}
	CHECK_OK(dev, drv_delete(dev, &m, keys[1]));
	CHECK(model_delete(&m, keys[1]) == 0);
	for (unsigned i = 0; i < 40; i++) {
		/* Not in bucket b: its free entry is kept for the adopting handle's add. */
		uint32_t key = (uint32_t)rng_next(&r);
		if (bucket_of(&m, key) != b && model_add(&m, key, 7, i, NULL) == 0)
			CHECK_OK(dev, drv_add(dev, &m, key, 7, i));
	}
	matcha_close(dev);

	dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_tables_adopt(dev));
	for (uint32_t i = 0; i < m.buckets * SLOTS; i++) {
		if (!m.e[i].valid)
			continue;
		CHECK_OK(dev, drv_lookup(dev, &m, m.e[i].key, &index));
		CHECK(index == index_at(i));
		CHECK_RC(dev, drv_add(dev, &m, m.e[i].key, 1, 1), MATCHA_EEXIST);
	}
	/* The freed entry takes the next key of the bucket; then the bucket is full. */
	CHECK_OK(dev, drv_add(dev, &m, keys[SLOTS], 9, 9));
	CHECK(model_add(&m, keys[SLOTS], 9, 9, &index) == 0 && index == index_of(b, 1));
	CHECK(hw_lookup(fd, &m, keys[SLOTS]) == (long)index);
	CHECK_RC(dev, drv_add(dev, &m, keys[SLOTS + 1], 9, 9), MATCHA_ENOSPC);
	CHECK_MEMORY(fd, &m, 0);
	matcha_close(dev);

	/* A key twice in its bucket: refused, naming both entries; clear starts over. */
	uint8_t *bucket = fd->table[MEMX].memory + b * BEAT;
	memcpy(bucket + 2 * 8, bucket, 8);
	dev = fake_open(fd);
	CHECK(dev);
	CHECK_RC(dev, matcha_tables_adopt(dev), MATCHA_EHW);
	char says[120];
	snprintf(says, sizeof says, "mem_exact table 0: entries 0 and 2 of bucket %u hold the "
		 "same key", (unsigned)b);
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	CHECK_RC(dev, drv_add(dev, &m, keys[SLOTS + 1], 1, 1), MATCHA_EHW);
	CHECK(strstr(matcha_last_error(dev), says));
	uint8_t k[2] = { 0, 1 };
	CHECK_OK(dev, matcha_exact_add(dev, EXACT, k, 16, 1, NULL, 0));
	CHECK_OK(dev, matcha_table_clear(dev, MEMX));
	CHECK_OK(dev, drv_add(dev, &m, keys[SLOTS + 1], 1, 1));
	CHECK(hw_lookup(fd, &m, keys[SLOTS + 1]) == (long)index_of(b, 0));
	matcha_close(dev);

	/* A key outside its own bucket: no lookup finds it there. */
	uint32_t away = b ^ 1;
	memcpy(fd->table[MEMX].memory + away * BEAT + 3 * 8, bucket, 8);
	dev = fake_open(fd);
	CHECK(dev);
	CHECK_RC(dev, matcha_tables_adopt(dev), MATCHA_EHW);
	snprintf(says, sizeof says, "mem_exact table 0: entry 3 of bucket %u holds a key whose "
		 "hash puts it in bucket %u", (unsigned)away, (unsigned)b);
	CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

/* The device's three tables by name: ca_pa (MEMX), vni (ODD), ports (EXACT). */
static const char layout[] =
	"{\"buildId\": 4079303, \"program\": {\"name\": \"dash\", \"tables\": [\n"
	"{\"name\": \"ca_pa\", \"index\": 0, \"kind\": \"mem_exact\", \"size\": 4096,\n"
	" \"keyWidth\": 32, \"dataWidth\": 16, \"latency\": 512, \"counters\": false,\n"
	" \"key\": [{\"fields\": [\"meta.dst_ip\"], \"width\": 32}],\n"
	" \"actions\": [{\"name\": \"set_pa\", \"id\": 1, \"params\": [\n"
	"   {\"name\": \"tunnel\", \"width\": 16, \"offset\": 0}], \"ops\": []},\n"
	"  {\"name\": \"drop\", \"id\": 2, \"params\": [], \"ops\": []}]},\n"
	"{\"name\": \"vni\", \"index\": 1, \"kind\": \"mem_exact\", \"size\": 256,\n"
	" \"keyWidth\": 20, \"dataWidth\": 12, \"latency\": 512, \"counters\": false,\n"
	" \"key\": [{\"fields\": [\"meta.vni\"], \"width\": 20}],\n"
	" \"actions\": [{\"name\": \"fwd\", \"id\": 1, \"params\": [\n"
	"   {\"name\": \"port\", \"width\": 12, \"offset\": 0}], \"ops\": []}]},\n"
	"{\"name\": \"ports\", \"index\": 2, \"kind\": \"exact\", \"size\": 32, \"ways\": 2,\n"
	" \"keyWidth\": 16, \"dataWidth\": 8, \"latency\": 3, \"counters\": false,\n"
	" \"key\": [{\"fields\": [\"meta.port\"], \"width\": 16}],\n"
	" \"actions\": [{\"name\": \"set\", \"id\": 1, \"params\": [\n"
	"   {\"name\": \"v\", \"width\": 8, \"offset\": 0}], \"ops\": []}]}\n"
	"]}}\n";

static matcha_dev *open_named(struct fake_dev *fd)
{
	return fake_open_layout(fd, layout, "dash.json");
}

/* Runs matcha-ctl's lines on a device; what they printed (malloc'd), or NULL when one
 * failed (its message in *error). */
static char *ctl_run(matcha_dev *dev, const char *const *lines, size_t n, char *error,
		     size_t errlen)
{
	char *out = NULL;
	size_t outlen = 0;
	FILE *stream = open_memstream(&out, &outlen);
	struct ctl c;
	ctl_init(&c, dev, stream);
	for (size_t i = 0; i < n; i++)
		if (ctl_execute(&c, lines[i])) {
			snprintf(error, errlen, "%s: %s", lines[i], c.error);
			fclose(stream);
			free(out);
			return NULL;
		}
	fclose(stream);
	return out;
}

void test_mem_exact_by_name_and_ctl(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = open_named(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	char error[700];
	static const char *const lines[] = {
		"table_add ca_pa set_pa 10.0.0.1 => 7",
		"table_add ca_pa drop 10.0.0.2 =>",
		"table_modify ca_pa set_pa 1 => 0xBEEF",
		"table_dump ca_pa",
		"table_delete ca_pa 0",
		"table_dump ca_pa",
	};
	char *out = ctl_run(dev, lines, sizeof lines / sizeof lines[0], error, sizeof error);
	CHECK_MSG(out, "%s", error);
	CHECK_MSG(strstr(out, "table ca_pa (mem_exact, 4096 entries)\n  handle meta.dst_ip => "
			 "action\n  0    10.0.0.1 => set_pa(tunnel=7)\n  1    10.0.0.2 => "
			 "set_pa(tunnel=48879)\n2 entries\n"), "%s", out);
	CHECK_MSG(strstr(out, "  1    10.0.0.2 => set_pa(tunnel=48879)\n1 entry\n"), "%s", out);
	free(out);
	CHECK(model_add(&m, 0x0A000002, 1, 0xBEEF, NULL) == 0);
	CHECK_MEMORY(fd, &m, 0);
	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_entry_read(dev, "ca_pa", 1, &v));
	uint32_t b = bucket_of(&m, 0x0A000002);
	CHECK(v.index == b * SLOTS && !strcmp(v.action->name, "set_pa"));

	/* The bucket of 10.0.0.2 filled by name; its next key is refused naming it. */
	uint32_t keys[SLOTS];
	CHECK(colliding(&m, b, 0x0A000003, keys, SLOTS) == SLOTS);
	for (unsigned i = 0; i < SLOTS; i++) {
		char line[80];
		snprintf(line, sizeof line, "table_add ca_pa drop %u.%u.%u.%u =>", keys[i] >> 24,
			 keys[i] >> 16 & 0xFF, keys[i] >> 8 & 0xFF, keys[i] & 0xFF);
		const char *one[] = { line };
		out = ctl_run(dev, one, 1, error, sizeof error);
		if (i < SLOTS - 1) {
			CHECK_MSG(out, "%s", error);
			CHECK(model_add(&m, keys[i], 2, 0, NULL) == 0);
		} else {
			char says[120];
			snprintf(says, sizeof says, "table ca_pa: mem_exact_add: bucket %u of "
				 "table 0 is full", (unsigned)b);
			CHECK_MSG(!out && strstr(error, says), "%s", out ? out : error);
		}
		free(out);
	}
	CHECK_MEMORY(fd, &m, 0);
	matcha_close(dev);

	/* A second run adopts the first one's entries, handles in entry order. */
	dev = open_named(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_tables_adopt(dev));
	static const char *const dump[] = { "table_dump ca_pa", "table_delete ca_pa 0" };
	out = ctl_run(dev, dump, 2, error, sizeof error);
	CHECK_MSG(out, "%s", error);
	char want[300];
	snprintf(want, sizeof want, "  0    10.0.0.2 => set_pa(tunnel=48879)\n"
		 "  1    %u.%u.%u.%u => drop()\n", keys[0] >> 24, keys[0] >> 16 & 0xFF,
		 keys[0] >> 8 & 0xFF, keys[0] & 0xFF);
	CHECK_MSG(strstr(out, want) && strstr(out, "\n4 entries\n"), "%s", out);
	free(out);
	CHECK(model_delete(&m, 0x0A000002) == 0);
	CHECK_MEMORY(fd, &m, 0);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

/* ------------------------------------------------------------------- the stash */

/*
 * MEMX with an on-chip stash of 16 entries, 4 ways of 4 slots (docs/tables.md, "The
 * stash"): INDEX 0x4000 + way * 4 + slot, the one after the last bucket's. The oracle is
 * the test's dict of the keys it added (action, data) and the fake unit's lookup, bucket
 * first and then the stash, the lowest way winning; where a key must go in the stash is
 * worked out here from the CRC-64/XZ as docs/tables.md says for exact tables. The model of
 * the buckets (above) keeps the keys that fit their bucket: a stash key leaves the memory
 * as it was, and CHECK_MEMORY says so.
 */
#define STASH 16
#define STASH_SLOTS (STASH / MATCHA_HW_MEMX_STASH_WAYS)
#define STASH_BASE (1024u << MATCHA_HW_MEMX_INDEX_SLOT_BITS)

/* The stash slot of `key` in way `way` (way * slots per way + slot). */
static uint32_t stash_slot(const struct model *m, uint32_t key, unsigned way)
{
	uint8_t b[4];
	be_bytes(key, key_bytes(m), b);
	uint64_t crc = matcha_crc64_xz(b, key_bytes(m));
	return way * STASH_SLOTS + ((uint32_t)(crc >> 16 * way) & (STASH_SLOTS - 1));
}

/* What the fake holds at INDEX `index` (in a bucket or in the stash), decoded. */
static struct model_entry fake_entry_of(const struct fake_dev *fd, const struct model *m,
					uint32_t index)
{
	const struct fake_table *t = &fd->table[m->table];
	if (index >= STASH_BASE) {
		const struct fake_entry *e = &t->stash[index - STASH_BASE];
		return (struct model_entry){ e->flags & MATCHA_HW_FLAGS_VALID, e->key[0],
					     (uint8_t)FAKE_FLAGS_ACTION_OF(e->flags), e->data[0] };
	}
	const uint8_t *p = t->memory + (index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS) * BEAT +
			   (index & 15) * m->entry_bytes;
	struct model_entry me = { p[0] & 1, 0, p[1], 0 };
	for (unsigned i = 0; i < key_bytes(m); i++)
		me.key |= (uint32_t)p[2 + i] << 8 * i;
	for (unsigned i = 0; i < data_bytes(m); i++)
		me.data |= (uint32_t)p[2 + key_bytes(m) + i] << 8 * i;
	return me;
}

/* The copies of `key` the fake holds: valid entries of its bucket and of the whole stash. */
static unsigned copies(const struct fake_dev *fd, const struct model *m, uint32_t key)
{
	unsigned n = 0;
	for (unsigned s = 0; s < SLOTS; s++) {
		struct model_entry e = fake_entry_of(fd, m, index_of(bucket_of(m, key), s));
		n += e.valid && e.key == key;
	}
	for (unsigned i = 0; i < STASH; i++) {
		struct model_entry e = fake_entry_of(fd, m, STASH_BASE + i);
		n += e.valid && e.key == key;
	}
	return n;
}

/* The test's dict: every key it added, with its action and data while present. */
struct kept {
	uint32_t key;
	uint8_t action;
	uint32_t data;
	bool present;
};

struct dict {
	const struct model *m;
	struct kept *k;
	unsigned n;
	unsigned long last_commands, checks;
};

/* Whether the unit's lookup finds every present key with its action and data (and, with
 * `absent`, no absent one); else why not. */
static bool dict_found(struct fake_dev *fd, const struct dict *d, bool absent, char *why,
		       size_t len)
{
	for (unsigned i = 0; i < d->n; i++) {
		const struct kept *k = &d->k[i];
		long at = hw_lookup(fd, d->m, k->key);
		if (!k->present) {
			if (at < 0 || !absent)
				continue;
			snprintf(why, len, "absent key 0x%x is found at 0x%lx", (unsigned)k->key,
				 at);
			return false;
		}
		struct model_entry e = at < 0 ? (struct model_entry){ 0 } :
						fake_entry_of(fd, d->m, (uint32_t)at);
		if (at < 0 || e.action != k->action || e.data != k->data) {
			snprintf(why, len, "key 0x%x: the unit answers 0x%lx, action %u data "
				 "0x%x, not %u and 0x%x", (unsigned)k->key, at, e.action,
				 (unsigned)e.data, k->action, (unsigned)k->data);
			return false;
		}
	}
	return true;
}

/* After every command: every key the dict holds is found, with its action and data. (A
 * key being added is in the dict only once its add returns: it may be found before.) */
static void dict_after_write(struct fake_dev *fd, void *arg)
{
	struct dict *d = arg;
	char why[160];
	if (fd->commands == d->last_commands)
		return;
	d->last_commands = fd->commands;
	d->checks++;
	if (!dict_found(fd, d, false, why, sizeof why))
		check_fail(__FILE__, __LINE__, "after command %lu: %s", fd->commands, why);
}

/* Between calls: each present key held exactly once (bucket or stash), an absent one not. */
static bool each_once(const struct fake_dev *fd, const struct dict *d, char *why, size_t len)
{
	for (unsigned i = 0; i < d->n; i++) {
		unsigned n = copies(fd, d->m, d->k[i].key);
		if (n != d->k[i].present) {
			snprintf(why, len, "key 0x%x is held %u times, and it is %s",
				 (unsigned)d->k[i].key, n, d->k[i].present ? "present" : "absent");
			return false;
		}
	}
	return true;
}

#define CHECK_DICT(fd, d)                                                                  \
	do {                                                                               \
		char why_[200];                                                            \
		CHECK_MSG(dict_found(fd, d, true, why_, sizeof why_) &&                    \
			  each_once(fd, d, why_, sizeof why_), "%s", why_);                \
	} while (0)

static struct kept *dict_add(struct dict *d, uint32_t key, uint8_t action, uint32_t data)
{
	d->k[d->n] = (struct kept){ key, action, data, true };
	return &d->k[d->n++];
}

/*
 * A device whose MEMX has the stash, FULL of its buckets full (SLOTS keys each, in the
 * model and the dict) and MORE keys of each of those buckets to come (over[], a bucket's
 * after another's in turn), the dict checked after every command.
 */
enum { FULL = 8, MORE = 6 };

struct stash_run {
	struct fake_cfg cfg;
	struct fake_dev *fd;
	matcha_dev *dev;
	struct rng r;
	struct model m;
	struct dict d;
	uint32_t buckets[FULL], over[FULL * MORE];
};

static void stash_run_free(struct stash_run *s)
{
	s->fd->after_write = NULL;
	free(s->d.k);
	free(s->m.e);
	matcha_close(s->dev);
	fake_free(s->fd);
}

static bool stash_run_new(struct stash_run *s)
{
	s->cfg = memx_cfg();
	s->cfg.table[MEMX].stash = STASH;
	s->fd = fake_new(&s->cfg);
	s->dev = fake_open(s->fd);
	s->r = rng_for_test();
	s->m = model_new(&s->cfg, MEMX);
	s->d = (struct dict){ .m = &s->m,
			      .k = calloc(FULL * (SLOTS + MORE) + 8, sizeof(struct kept)) };
	if (!s->dev)
		return false;
	uint32_t keys[SLOTS + MORE];
	for (unsigned b = 0; b < FULL; b++) {
		bool seen;
		do {
			s->buckets[b] = bucket_of(&s->m, (uint32_t)rng_next(&s->r));
			seen = false;
			for (unsigned j = 0; j < b; j++)
				seen = seen || s->buckets[j] == s->buckets[b];
		} while (seen);
		colliding(&s->m, s->buckets[b], rng_below(&s->r, 1u << 30), keys, SLOTS + MORE);
		for (unsigned i = 0; i < SLOTS; i++) {
			uint8_t action = (uint8_t)rng_next(&s->r);
			uint32_t data = rng_below(&s->r, 1u << 16);
			int rc = drv_add(s->dev, &s->m, keys[i], action, data);
			if (rc || model_add(&s->m, keys[i], action, data, NULL)) {
				check_fail(__FILE__, __LINE__, "filling bucket %u: %s",
					   (unsigned)s->buckets[b], matcha_last_error(s->dev));
				return false;
			}
			dict_add(&s->d, keys[i], action, data);
		}
		for (unsigned i = 0; i < MORE; i++)
			s->over[i * FULL + b] = keys[SLOTS + i];
	}
	s->d.last_commands = s->fd->commands;
	s->fd->after_write = dict_after_write;
	s->fd->after_write_arg = &s->d;
	return true;
}

/* Runs a test's body on a new stash_run, which is freed after it however the body ends. */
static void stash_test(void (*body)(struct stash_run *s))
{
	struct stash_run s;
	if (stash_run_new(&s))
		body(&s);
	stash_run_free(&s);
}

/* Whether each of the key's 4 candidate slots in the fake's stash holds an entry. */
static bool candidates_taken(const struct stash_run *s, uint32_t key)
{
	for (unsigned w = 0; w < MATCHA_HW_MEMX_STASH_WAYS; w++)
		if (!fake_entry_of(s->fd, &s->m, STASH_BASE + stash_slot(&s->m, key, w)).valid)
			return false;
	return true;
}

/*
 * Adds over[from..] until the stash refuses one: each placed key is in the stash where the
 * unit finds it and the driver says, nothing in memory changes, every key is found after
 * every command. *refused is the refused key's position in over[] (FULL * MORE if none).
 */
static void fill_stash(struct stash_run *s, unsigned from, unsigned *placed, unsigned *moves,
		       unsigned *refused)
{
	*refused = FULL * MORE;
	for (unsigned i = from; i < FULL * MORE && check_failures() == 0; i++) {
		uint32_t key = s->over[i], index;
		uint8_t action = (uint8_t)(0x80 + i);
		unsigned long commands = s->fd->commands;
		int rc = drv_add(s->dev, &s->m, key, action, 0x1000 + i);
		CHECK(model_add(&s->m, key, action, 0x1000 + i, NULL) == MATCHA_ENOSPC);
		if (rc == MATCHA_ENOSPC) {
			*refused = i;
			return;
		}
		CHECK_OK(s->dev, rc);
		dict_add(&s->d, key, action, 0x1000 + i);
		(*placed)++;
		*moves += s->fd->commands - commands - 1;
		long at = hw_lookup(s->fd, &s->m, key);
		CHECK_OK(s->dev, drv_lookup(s->dev, &s->m, key, &index));
		CHECK_MSG(at >= STASH_BASE && index == (uint32_t)at, "key 0x%x: the unit finds it "
			  "at 0x%lx, the driver says 0x%x", (unsigned)key, at, (unsigned)index);
		CHECK_MEMORY(s->fd, &s->m, 0);
		CHECK_DICT(s->fd, &s->d);
	}
}

static void stash_takes_full_buckets_keys(struct stash_run *s)
{
	CHECK_MEMORY(s->fd, &s->m, 0);
	/* A full bucket's first key: way 0 of the empty stash, where its hash puts it, one
	 * WRITE and no READ. */
	uint32_t key = s->over[0], index;
	unsigned long commands = s->fd->commands, reads = s->fd->reads;
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, key, 0x42, 0x4242));
	CHECK(model_add(&s->m, key, 0x42, 0x4242, NULL) == MATCHA_ENOSPC);
	dict_add(&s->d, key, 0x42, 0x4242);
	CHECK(s->fd->commands - commands == 1 && s->fd->reads - reads == 1);
	CHECK_MSG(hw_lookup(s->fd, &s->m, key) == (long)(STASH_BASE + stash_slot(&s->m, key, 0)),
		  "the key went to 0x%lx, not 0x%x", hw_lookup(s->fd, &s->m, key),
		  (unsigned)(STASH_BASE + stash_slot(&s->m, key, 0)));
	CHECK_OK(s->dev, drv_lookup(s->dev, &s->m, key, &index));
	CHECK(index == STASH_BASE + stash_slot(&s->m, key, 0));
	CHECK_RC(s->dev, drv_add(s->dev, &s->m, key, 1, 1), MATCHA_EEXIST);
	char says[120];
	snprintf(says, sizeof says, "the key is already in table 0 (slot %u of the stash)",
		 (unsigned)stash_slot(&s->m, key, 0));
	CHECK_MSG(strstr(matcha_last_error(s->dev), says), "%s", matcha_last_error(s->dev));
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);

	/* The others of full buckets until the stash has no room for one. */
	unsigned placed = 1, moves = 0, refused;
	fill_stash(s, 1, &placed, &moves, &refused);
	printf("  %u keys of full buckets placed in the stash of %u with %u moves, then one "
	       "refused; %lu lookups of every key\n", placed, STASH, moves, s->d.checks);
	CHECK_MSG(refused < FULL * MORE && placed <= STASH && placed >= STASH / 2, "%u placed, "
		  "refused the %uth", placed, refused);
	CHECK(s->d.checks >= placed + moves);
}

void test_mem_exact_stash_takes_full_buckets_keys(void)
{
	stash_test(stash_takes_full_buckets_keys);
}

static void stash_full_refuses_key(struct stash_run *s)
{
	unsigned placed = 0, moves = 0, refused;
	fill_stash(s, 0, &placed, &moves, &refused);
	CHECK(refused < FULL * MORE);
	/* Refused as the unit's stash is: its 4 slots taken (and no chain freed one). */
	uint32_t key = s->over[refused], b = bucket_of(&s->m, key), index;
	CHECK(candidates_taken(s, key));
	char says[300];
	snprintf(says, sizeof says, "mem_exact_add: bucket %u of table 0 is full: its 4 entries "
		 "hold other keys, and the stash has no room for the key: its 4 candidate slots "
		 "are taken and no chain of at most %d moves frees one (%u of the stash's 16 "
		 "entries used;", (unsigned)b, MATCHA_CUCKOO_MAX_MOVES, placed);
	CHECK_MSG(strstr(matcha_last_error(s->dev), says), "%s\nwanted %s",
		  matcha_last_error(s->dev), says);
	/* Nothing written: the refusal came from the shadow, and the stash is as it was. */
	struct fake_entry before[STASH];
	memcpy(before, s->fd->table[MEMX].stash, sizeof before);
	unsigned long writes = s->fd->writes, reads = s->fd->reads;
	CHECK_RC(s->dev, drv_add(s->dev, &s->m, key, 7, 7), MATCHA_ENOSPC);
	CHECK(strstr(matcha_last_error(s->dev), says));
	CHECK_MSG(s->fd->writes == writes && s->fd->reads == reads, "a refused add made %lu "
		  "writes and %lu reads", s->fd->writes - writes, s->fd->reads - reads);
	CHECK(!memcmp(before, s->fd->table[MEMX].stash, sizeof before));
	CHECK(hw_lookup(s->fd, &s->m, key) == -1);
	CHECK_RC(s->dev, drv_lookup(s->dev, &s->m, key, &index), MATCHA_ENOENT);
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);
	/* A key whose bucket has room still goes there. */
	uint32_t other = key + 1;
	while (bucket_of(&s->m, other) == b || model_find(&s->m, other) >= 0 ||
	       s->m.e[bucket_of(&s->m, other) * SLOTS].valid)
		other++;
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, other, 3, 3));
	CHECK(model_add(&s->m, other, 3, 3, &index) == 0);
	CHECK(hw_lookup(s->fd, &s->m, other) == (long)index);
	dict_add(&s->d, other, 3, 3);
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);
}

void test_mem_exact_stash_full_refuses_key(void)
{
	stash_test(stash_full_refuses_key);
}

/* The dict entry of a key. */
static struct kept *kept_of(struct dict *d, uint32_t key)
{
	for (unsigned i = 0; i < d->n; i++)
		if (d->k[i].key == key)
			return &d->k[i];
	return NULL;
}

/*
 * Random adds, modifies and deletes of keys of full buckets, the stash kept near full, so
 * that most adds move entries: every key is found with its action and data after every
 * command (make-before-break: a moved entry is copied before its slot is reused), and
 * held once between calls. A refusal is only ever for a key whose 4 slots are taken.
 */
static void stash_make_before_break(struct stash_run *s)
{
	enum { OPS = 400 };
	unsigned moves = 0, refused = 0, done[3] = { 0 };
	for (unsigned op = 0; op < OPS && check_failures() == 0; op++) {
		uint32_t key = s->over[rng_below(&s->r, FULL * MORE)];
		struct kept *k = kept_of(&s->d, key);
		uint8_t action = (uint8_t)rng_next(&s->r);
		uint32_t data = rng_below(&s->r, 1u << 16), index;
		if (!k || !k->present) {
			unsigned long commands = s->fd->commands;
			int rc = drv_add(s->dev, &s->m, key, action, data);
			if (rc == MATCHA_ENOSPC) {
				CHECK_MSG(candidates_taken(s, key), "op %u: key 0x%x refused with "
					  "a free slot", op, (unsigned)key);
				refused++;
				continue;
			}
			CHECK_OK(s->dev, rc);
			if (!k)
				k = dict_add(&s->d, key, action, data);
			*k = (struct kept){ key, action, data, true };
			moves += s->fd->commands - commands - 1;
			done[0]++;
		} else if (rng_below(&s->r, 3) == 0) {
			/* The dict first: the one WRITE shows the new action and data. */
			k->action = action;
			k->data = data;
			unsigned long commands = s->fd->commands;
			CHECK_OK(s->dev, drv_modify(s->dev, &s->m, key, action, data));
			CHECK(s->fd->commands - commands == 1);
			done[1]++;
		} else {
			k->present = false;
			unsigned long commands = s->fd->commands;
			CHECK_OK(s->dev, drv_delete(s->dev, &s->m, key));
			CHECK(s->fd->commands - commands == 1);
			done[2]++;
		}
		if (k->present) {
			CHECK_OK(s->dev, drv_lookup(s->dev, &s->m, key, &index));
			CHECK(index >= STASH_BASE && hw_lookup(s->fd, &s->m, key) == (long)index);
		}
		CHECK_MEMORY(s->fd, &s->m, 0);
		CHECK_DICT(s->fd, &s->d);
	}
	printf("  %u adds to the stash with %u moves, %u refused, %u modifies, %u deletes; "
	       "every key looked up after each of %lu commands\n", done[0], moves, refused,
	       done[1], done[2], s->d.checks);
	CHECK_MSG(moves >= 10 && refused > 0 && done[2] > 0, "%u moves, %u refused", moves,
		  refused);
}

void test_mem_exact_stash_make_before_break(void)
{
	stash_test(stash_make_before_break);
}

static void stash_modify_delete(struct stash_run *s)
{
	uint32_t keys[3] = { s->over[0], s->over[1], s->over[2] }, index;
	for (unsigned i = 0; i < 3; i++) {
		CHECK_OK(s->dev, drv_add(s->dev, &s->m, keys[i], (uint8_t)(i + 1), 0x100 + i));
		dict_add(&s->d, keys[i], (uint8_t)(i + 1), 0x100 + i);
	}
	CHECK_DICT(s->fd, &s->d);
	/* Modify: one WRITE of the key's stash entry, nothing else of the stash changes. */
	long at = hw_lookup(s->fd, &s->m, keys[1]);
	CHECK(at >= STASH_BASE);
	struct fake_entry before[STASH];
	memcpy(before, s->fd->table[MEMX].stash, sizeof before);
	struct kept *k = kept_of(&s->d, keys[1]);
	k->action = 0x7E;
	k->data = 0xFACE;
	unsigned long commands = s->fd->commands;
	CHECK_OK(s->dev, drv_modify(s->dev, &s->m, keys[1], 0x7E, 0xFACE));
	CHECK(s->fd->commands - commands == 1);
	for (unsigned i = 0; i < STASH; i++)
		CHECK_MSG(i == at - STASH_BASE ||
			  !memcmp(&before[i], &s->fd->table[MEMX].stash[i], sizeof before[i]),
			  "stash entry %u changed", i);
	CHECK_OK(s->dev, drv_lookup(s->dev, &s->m, keys[1], &index));
	CHECK(index == (uint32_t)at && hw_lookup(s->fd, &s->m, keys[1]) == at);
	struct matcha_entry e;
	CHECK_OK(s->dev, matcha_mem_exact_read(s->dev, MEMX, index, &e));
	CHECK(e.valid && e.action_id == 0x7E && e.data[0] == 0xFA && e.data[1] == 0xCE);
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);

	/* Delete: one WRITE, the key gone from the stash, the others found. */
	kept_of(&s->d, keys[0])->present = false;
	commands = s->fd->commands;
	CHECK_OK(s->dev, drv_delete(s->dev, &s->m, keys[0]));
	CHECK(s->fd->commands - commands == 1);
	CHECK(hw_lookup(s->fd, &s->m, keys[0]) == -1);
	CHECK_RC(s->dev, drv_lookup(s->dev, &s->m, keys[0], &index), MATCHA_ENOENT);
	CHECK_RC(s->dev, drv_delete(s->dev, &s->m, keys[0]), MATCHA_ENOENT);
	CHECK_RC(s->dev, drv_modify(s->dev, &s->m, keys[0], 1, 1), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(s->dev), "mem_exact_modify: the key is not in table 0"));
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);
	/* Added again (its bucket still full): back in the stash. */
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, keys[0], 9, 9));
	*kept_of(&s->d, keys[0]) = (struct kept){ keys[0], 9, 9, true };
	CHECK(hw_lookup(s->fd, &s->m, keys[0]) >= STASH_BASE);
	CHECK_DICT(s->fd, &s->d);

	/* CLEAR empties the stash with the buckets; its keys can be added anew. */
	s->fd->after_write = NULL;
	CHECK_OK(s->dev, matcha_table_clear(s->dev, MEMX));
	for (unsigned i = 0; i < s->d.n; i++)
		s->d.k[i].present = false;
	memset(s->m.e, 0, s->m.buckets * SLOTS * sizeof *s->m.e);
	CHECK_DICT(s->fd, &s->d);
	for (unsigned i = 0; i < 3; i++) {
		CHECK_RC(s->dev, drv_lookup(s->dev, &s->m, keys[i], &index), MATCHA_ENOENT);
		CHECK_OK(s->dev, drv_add(s->dev, &s->m, keys[i], 5, 5));
		CHECK(model_add(&s->m, keys[i], 5, 5, &index) == 0);
		*kept_of(&s->d, keys[i]) = (struct kept){ keys[i], 5, 5, true };
		CHECK(hw_lookup(s->fd, &s->m, keys[i]) == (long)index);
	}
	CHECK_DICT(s->fd, &s->d);
}

void test_mem_exact_stash_modify_delete(void)
{
	stash_test(stash_modify_delete);
}

/* A key of a full bucket in the stash: once its bucket has room, an add of it again is
 * refused as present (no second copy in the bucket), and once deleted it goes to the
 * bucket; the bucket's other keys take the bucket's room before the stash. */
static void stash_key_back_to_bucket(struct stash_run *s)
{
	uint32_t b = s->buckets[0], x = s->over[0], y = s->over[FULL], z = s->over[2 * FULL], index;
	CHECK(bucket_of(&s->m, x) == b && bucket_of(&s->m, y) == b && bucket_of(&s->m, z) == b);
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, x, 1, 0x11));
	struct kept *kx = dict_add(&s->d, x, 1, 0x11);
	CHECK(hw_lookup(s->fd, &s->m, x) >= STASH_BASE);
	/* Entry 2 of the bucket freed: x stays in the stash, and cannot be added twice. */
	uint32_t gone = s->m.e[b * SLOTS + 2].key;
	kept_of(&s->d, gone)->present = false;
	CHECK_OK(s->dev, drv_delete(s->dev, &s->m, gone));
	CHECK(model_delete(&s->m, gone) == 0);
	unsigned long writes = s->fd->writes;
	CHECK_RC(s->dev, drv_add(s->dev, &s->m, x, 1, 0x11), MATCHA_EEXIST);
	CHECK(s->fd->writes == writes && copies(s->fd, &s->m, x) == 1);
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);
	/* Another key of the bucket takes the freed entry, not the stash. */
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, y, 2, 0x22));
	CHECK(model_add(&s->m, y, 2, 0x22, &index) == 0 && index == index_of(b, 2));
	dict_add(&s->d, y, 2, 0x22);
	CHECK(hw_lookup(s->fd, &s->m, y) == (long)index);
	CHECK_DICT(s->fd, &s->d);
	/* The bucket full again, x deleted from the stash and a bucket entry freed: x added
	 * again goes to its bucket, and the stash holds it no more. */
	kx->present = false;
	CHECK_OK(s->dev, drv_delete(s->dev, &s->m, x));
	gone = s->m.e[b * SLOTS].key;
	kept_of(&s->d, gone)->present = false;
	CHECK_OK(s->dev, drv_delete(s->dev, &s->m, gone));
	CHECK(model_delete(&s->m, gone) == 0);
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, x, 3, 0x33));
	CHECK(model_add(&s->m, x, 3, 0x33, &index) == 0 && index == index_of(b, 0));
	*kx = (struct kept){ x, 3, 0x33, true };
	CHECK(hw_lookup(s->fd, &s->m, x) == (long)index);
	CHECK_OK(s->dev, drv_lookup(s->dev, &s->m, x, &index));
	CHECK(index == index_of(b, 0));
	CHECK_MEMORY(s->fd, &s->m, 0);
	CHECK_DICT(s->fd, &s->d);
	/* The next key of the full bucket goes to the stash again. */
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, z, 4, 0x44));
	CHECK(model_add(&s->m, z, 4, 0x44, NULL) == MATCHA_ENOSPC);
	dict_add(&s->d, z, 4, 0x44);
	CHECK(hw_lookup(s->fd, &s->m, z) >= STASH_BASE);
	CHECK_DICT(s->fd, &s->d);
}

void test_mem_exact_stash_key_back_to_bucket(void)
{
	stash_test(stash_key_back_to_bucket);
}

/* Every present key of the dict as the driver has it: where the unit finds it, present. */
static bool driver_has_dict(matcha_dev *dev, struct fake_dev *fd, const struct dict *d,
			    char *why, size_t len)
{
	for (unsigned i = 0; i < d->n; i++) {
		uint32_t index;
		int rc = drv_lookup(dev, d->m, d->k[i].key, &index);
		long at = hw_lookup(fd, d->m, d->k[i].key);
		if (d->k[i].present ? rc || (long)index != at : rc != MATCHA_ENOENT) {
			snprintf(why, len, "key 0x%x: the driver says %d at 0x%x, the unit 0x%lx",
				 (unsigned)d->k[i].key, rc, (unsigned)index, at);
			return false;
		}
	}
	return true;
}

/* The stash slot of the first present dict key the unit finds in the stash (at or after
 * dict entry `from`), or -1. */
static long stash_key(const struct stash_run *s, unsigned from, unsigned *which)
{
	for (unsigned i = from; i < s->d.n; i++) {
		long at = hw_lookup(s->fd, &s->m, s->d.k[i].key);
		if (s->d.k[i].present && at >= STASH_BASE) {
			*which = i;
			return at - STASH_BASE;
		}
	}
	return -1;
}

/* Opens the device again and adopts: MATCHA_EHW with `says` in the message, the table
 * refused, a clear starting it over. Restores the stash as it was. */
static void adopt_refused(struct stash_run *s, const struct fake_entry *saved, const char *says)
{
	matcha_close(s->dev);
	s->dev = fake_open(s->fd);
	CHECK(s->dev);
	CHECK_RC(s->dev, matcha_tables_adopt(s->dev), MATCHA_EHW);
	CHECK_MSG(strstr(matcha_last_error(s->dev), says), "%s\nwanted %s",
		  matcha_last_error(s->dev), says);
	CHECK_RC(s->dev, drv_add(s->dev, &s->m, s->over[FULL * MORE - 1], 1, 1), MATCHA_EHW);
	memcpy(s->fd->table[MEMX].stash, saved, STASH * sizeof *saved);
	matcha_close(s->dev);
	s->dev = fake_open(s->fd);
	CHECK(s->dev);
	CHECK_OK(s->dev, matcha_tables_adopt(s->dev));
}

static void stash_adopt(struct stash_run *s)
{
	/* What an earlier handle left: the stash filled (moves among its adds), one of its
	 * keys deleted, one modified. */
	unsigned placed = 0, moves = 0, refused, which;
	fill_stash(s, 0, &placed, &moves, &refused);
	CHECK(refused < FULL * MORE && placed >= 2);
	long slot = stash_key(s, 0, &which);
	CHECK(slot >= 0);
	s->d.k[which].present = false;
	CHECK_OK(s->dev, drv_delete(s->dev, &s->m, s->d.k[which].key));
	slot = stash_key(s, 0, &which);
	CHECK(slot >= 0);
	s->d.k[which].action = 0x5A;
	s->d.k[which].data = 0x5A5A;
	CHECK_OK(s->dev, drv_modify(s->dev, &s->m, s->d.k[which].key, 0x5A, 0x5A5A));
	s->fd->after_write = NULL;
	matcha_close(s->dev);

	/* Adopted: the driver finds every key where the unit does, and knows each present. */
	s->dev = fake_open(s->fd);
	CHECK(s->dev);
	unsigned long commands = s->fd->commands;
	CHECK_OK(s->dev, matcha_tables_adopt(s->dev));
	CHECK_MSG(s->fd->commands - commands >= 4096 + STASH, "adoption issued %lu commands",
		  s->fd->commands - commands);
	char why[200];
	CHECK_MSG(driver_has_dict(s->dev, s->fd, &s->d, why, sizeof why), "%s", why);
	for (unsigned i = 0; i < s->d.n; i++) {
		const struct kept *k = &s->d.k[i];
		if (k->present)
			CHECK_RC(s->dev, drv_add(s->dev, &s->m, k->key, 1, 1), MATCHA_EEXIST);
	}
	/* The stash's actions and data came back too: more adds move adopted entries, which
	 * must keep theirs; the deleted key's slot is free again. */
	s->d.last_commands = s->fd->commands;
	s->fd->after_write = dict_after_write;
	s->fd->after_write_arg = &s->d;
	unsigned before = placed - 1;
	placed = moves = 0;
	fill_stash(s, refused + 1, &placed, &moves, &refused);
	CHECK_DICT(s->fd, &s->d);
	CHECK_MSG(before + placed <= STASH, "%u + %u keys in a stash of %u", before, placed,
		  STASH);
	s->fd->after_write = NULL;

	/* Each way the unit's content can be one the driver could not have written. */
	struct fake_entry saved[STASH], *st = s->fd->table[MEMX].stash;
	memcpy(saved, st, sizeof saved);
	slot = stash_key(s, 0, &which);
	CHECK(slot >= 0);
	uint32_t key = s->d.k[which].key;
	char says[200];
	/* Not where its hash puts it: into the next slot of its way. */
	unsigned way = (unsigned)slot / STASH_SLOTS;
	uint32_t wrong = way * STASH_SLOTS + ((unsigned)slot + 1) % STASH_SLOTS;
	st[wrong] = st[slot];
	st[slot].flags = 0;
	snprintf(says, sizeof says, "mem_exact table 0's stash: slot %u (way %u) holds a key "
		 "whose hash puts it in slot %u of that way", (unsigned)wrong, way,
		 (unsigned)slot);
	adopt_refused(s, saved, says);
	/* Twice in the stash: in its own slot of another way as well. */
	unsigned other = (way + 1) % MATCHA_HW_MEMX_STASH_WAYS;
	uint32_t twin = stash_slot(&s->m, key, other);
	st[twin] = st[slot];
	snprintf(says, sizeof says, "mem_exact table 0's stash: slots %u and %u hold the same "
		 "key", (unsigned)(slot < twin ? slot : twin),
		 (unsigned)(slot < twin ? twin : slot));
	adopt_refused(s, saved, says);
	/* In its bucket and in the stash: a bucket key copied to its way-0 stash slot. */
	uint32_t b = s->buckets[1], bkey = s->m.e[b * SLOTS + 3].key;
	uint32_t at = stash_slot(&s->m, bkey, 0);
	CHECK(s->m.e[b * SLOTS + 3].valid);
	st[at] = (struct fake_entry){ .flags = MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(1) };
	st[at].key[0] = bkey;
	snprintf(says, sizeof says, "mem_exact table 0: slot %u of the stash holds the key of "
		 "entry 3 of bucket %u: a key is in its bucket or in the stash, never in both",
		 (unsigned)at, (unsigned)b);
	adopt_refused(s, saved, says);
	CHECK_MSG(driver_has_dict(s->dev, s->fd, &s->d, why, sizeof why), "%s", why);
}

void test_mem_exact_stash_adopt(void)
{
	stash_test(stash_adopt);
}

/* Stash sizes the unit cannot have: 4 ways of a power of two slots, at most 65536. */
void test_mem_exact_stash_bad_size(void)
{
	static const unsigned bad[] = { 12, 10, 2, 4 * 3 * 1024, 4 * 131072 };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct fake_cfg cfg = memx_cfg();
		cfg.table[ODD].stash = bad[i];
		struct fake_dev *fd = fake_new(&cfg);
		matcha_dev *dev;
		CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
		char says[160];
		snprintf(says, sizeof says, "mem_exact table 1's stash: %u entries in 4 ways is "
			 "not a power-of-two number of slots (at most 65536) per way", bad[i]);
		CHECK_MSG(strstr(matcha_last_error(dev), says), "%s", matcha_last_error(dev));
		matcha_close(dev);
		fake_free(fd);
	}
	/* The largest the unit has, and the smallest. */
	static const unsigned good[] = { 4, 4 * 65536 };
	for (unsigned i = 0; i < 2; i++) {
		struct fake_cfg cfg = memx_cfg();
		cfg.table[ODD].stash = good[i];
		struct fake_dev *fd = fake_new(&cfg);
		matcha_dev *dev = fake_open(fd);
		CHECK(dev);
		struct matcha_entry e;
		uint32_t last = index_of(64, 0) + good[i] - 1;
		CHECK_OK(dev, matcha_mem_exact_read(dev, ODD, last, &e));
		CHECK_RC(dev, matcha_mem_exact_read(dev, ODD, last + 1, &e), MATCHA_EINVAL);
		matcha_close(dev);
		fake_free(fd);
	}
}

/* A block of register map 1.0 has no MEMX_WIN_STASH: whatever that offset answers, its
 * table has no stash, and a stash INDEX is out of range. */
void test_mem_exact_stash_not_in_map_1_0(void)
{
	struct fake_cfg cfg = memx_cfg();
	cfg.version = 1u << MATCHA_HW_INFO_VERSION_MAJOR_SHIFT;
	cfg.table[ODD].stash = 16;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_entry e;
	CHECK_RC(dev, matcha_mem_exact_read(dev, ODD, index_of(64, 0), &e), MATCHA_EINVAL);
	matcha_close(dev);
	fake_free(fd);
}

static void stash_read_indexes(struct stash_run *s)
{
	uint32_t key = s->over[0];
	CHECK_OK(s->dev, drv_add(s->dev, &s->m, key, 0x33, 0xBEEF));
	dict_add(&s->d, key, 0x33, 0xBEEF);
	uint32_t at = STASH_BASE + stash_slot(&s->m, key, 0);
	struct matcha_entry e;
	uint8_t k[4];
	be_bytes(key, 4, k);
	CHECK_OK(s->dev, matcha_mem_exact_read(s->dev, MEMX, at, &e));
	CHECK(e.valid && e.action_id == 0x33 && !memcmp(e.key, k, 4) && e.data[0] == 0xBE &&
	      e.data[1] == 0xEF && e.key_bits == 32 && e.data_bits == 16);
	/* Every other stash entry reads back empty, the first and the last included. */
	for (uint32_t i = STASH_BASE; i < STASH_BASE + STASH; i++) {
		CHECK_OK(s->dev, matcha_mem_exact_read(s->dev, MEMX, i, &e));
		CHECK_MSG(e.valid == (i == at), "stash INDEX 0x%x", (unsigned)i);
	}
	/* Past the stash, between a bucket's entries, and far out: refused before any
	 * register access, naming the stash's INDEXes. */
	const uint32_t out_of_range[] = { STASH_BASE + STASH, STASH_BASE + 0x100,
						 index_of(5, SLOTS), UINT32_MAX };
	unsigned long reads = s->fd->reads, writes = s->fd->writes;
	for (unsigned i = 0; i < 4; i++) {
		CHECK_RC(s->dev, matcha_mem_exact_read(s->dev, MEMX, out_of_range[i], &e),
			 MATCHA_EINVAL);
		CHECK_MSG(strstr(matcha_last_error(s->dev), "is out of range: table 0 has 1024 "
				 "buckets of 4 entries, and a stash of 16 at INDEX "
				 "0x4000..0x400f"), "%s", matcha_last_error(s->dev));
	}
	char says[100];
	snprintf(says, sizeof says, "mem_exact_read: index 0x%x (bucket 1025, slot 0)",
		 (unsigned)(STASH_BASE + STASH));
	CHECK_RC(s->dev, matcha_mem_exact_read(s->dev, MEMX, STASH_BASE + STASH, &e),
		 MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(s->dev), says), "%s", matcha_last_error(s->dev));
	CHECK(s->fd->reads == reads && s->fd->writes == writes);
}

void test_mem_exact_stash_read_indexes(void)
{
	stash_test(stash_read_indexes);
}

/* The fake's stash answers as the unit's window does. */
void test_mem_exact_fake_stash_window(void)
{
	struct fake_cfg cfg = memx_cfg();
	cfg.table[MEMX].stash = STASH;
	struct fake_dev *fd = fake_new(&cfg);
	struct fake_table *t = &fd->table[MEMX];
	uint32_t base = t->base, v;
	CHECK(fake_ops.read32(fd, base + MATCHA_HW_MEMX_WIN_STASH, &v) == 0 && v == STASH);
	CHECK(fake_ops.read32(fd, fd->table[ODD].base + MATCHA_HW_MEMX_WIN_STASH, &v) == 0 &&
	      v == 0);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS,
			 MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9) | 0x2);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY, 0x11223344);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY + 4, 0x55);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_DATA, 0xAABBCCDD);
	/* Past the stash: error 1, nothing written. */
	const uint32_t outside[] = { STASH_BASE + STASH, STASH_BASE + 0x1000, UINT32_MAX };
	CHECK(raw_out_of_range(fd, MEMX, outside, 3));
	/* The stash's last entry: the key and data bits the table has, valid and action. */
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_WRITE, STASH_BASE + STASH - 1) == 0);
	const struct fake_entry *e = &t->stash[STASH - 1];
	CHECK(e->flags == (MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9)) &&
	      e->key[0] == 0x11223344 && e->key[1] == 0 && e->data[0] == 0xCCDD);
	for (unsigned i = 0; i < STASH - 1; i++)
		CHECK(t->stash[i].flags == 0);
	for (unsigned i = 0; i < 1024 * BEAT; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u written by a stash WRITE", i);
	CHECK(raw_reads_back(fd, MEMX, STASH_BASE + STASH - 1,
			     MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9), 0x11223344, 0xCCDD));
	/* A lookup: the bucket first, then the stash, the lowest way winning. */
	struct model m = model_new(&cfg, MEMX);
	uint32_t probe = 0x0BADF00D, s0 = stash_slot(&m, probe, 0), s2 = stash_slot(&m, probe, 2);
	uint8_t k[4];
	be_bytes(probe, 4, k);
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == -1);
	t->stash[s2] = (struct fake_entry){ .flags = MATCHA_HW_FLAGS_VALID, .key = { probe } };
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == (long)(STASH_BASE + s2));
	t->stash[s0] = t->stash[s2];
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == (long)(STASH_BASE + s0));
	t->stash[(s0 + 1) % STASH_SLOTS] = t->stash[s2]; /* way 0, but not its slot */
	t->stash[s0].flags = 0;
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == (long)(STASH_BASE + s2));
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS, MATCHA_HW_FLAGS_VALID);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY, probe);
	uint32_t b = bucket_of(&m, probe);
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_WRITE, index_of(b, 3)) == 0);
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == (long)index_of(b, 3));
	/* CLEAR empties both. */
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_CLEAR, 0) == 0);
	for (unsigned i = 0; i < STASH; i++)
		CHECK(!(t->stash[i].flags & MATCHA_HW_FLAGS_VALID));
	CHECK(fake_mem_exact_lookup(fd, MEMX, k) == -1);
	/* A stash the unit cannot have: read as it is, no entries. */
	struct fake_cfg odd = memx_cfg();
	odd.table[MEMX].stash = 12;
	struct fake_dev *fd2 = fake_new(&odd);
	CHECK(fake_ops.read32(fd2, fd2->table[MEMX].base + MATCHA_HW_MEMX_WIN_STASH, &v) == 0 &&
	      v == 12);
	CHECK(raw_command(fd2, MEMX, MATCHA_HW_CMD_READ, STASH_BASE) ==
	      MATCHA_HW_STATUS_ERROR_INDEX_RANGE);
	fake_free(fd2);
	free(m.e);
	fake_free(fd);
}

/* Entries by name: a stash entry gets a handle, reads back by it, and a second handle's
 * adoption (the walk of every counter index, the stash's after the memory's) finds it. */
void test_mem_exact_stash_by_name(void)
{
	struct fake_cfg cfg = memx_cfg();
	cfg.table[MEMX].stash = STASH;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = open_named(fd);
	CHECK(dev);
	struct model m = model_new(&cfg, MEMX);
	uint32_t b = bucket_of(&m, 0x0A000001), keys[SLOTS + 1], handle;
	CHECK(colliding(&m, b, 0x0A000000, keys, SLOTS + 1) == SLOTS + 1);
	for (unsigned i = 0; i <= SLOTS; i++) {
		struct matcha_match match = { .kind = MATCHA_MATCH_EXACT,
					      .value = val_u64(keys[i]) };
		struct matcha_value tunnel = val_u64(0x100 + i);
		CHECK_OK(dev, matcha_entry_add(dev, "ca_pa", &match, 1, "set_pa", &tunnel, 1,
					       MATCHA_NO_PRIORITY, &handle));
		CHECK(handle == i);
	}
	long at = hw_lookup(fd, &m, keys[SLOTS]);
	CHECK(at >= STASH_BASE);
	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_entry_read(dev, "ca_pa", SLOTS, &v));
	CHECK_MSG(v.index == 4096 + (uint32_t)(at - STASH_BASE), "index %u", (unsigned)v.index);
	CHECK(!strcmp(v.action->name, "set_pa") && v.params[0].be[63] == 0x04 &&
	      v.params[0].be[62] == 0x01);
	CHECK_OK(dev, matcha_entry_modify(dev, "ca_pa", SLOTS, "drop", NULL, 0));
	CHECK_OK(dev, matcha_entry_read(dev, "ca_pa", SLOTS, &v));
	CHECK(!strcmp(v.action->name, "drop"));
	matcha_close(dev);

	/* Adopted by name: the stash entry's handle comes last, after the memory's. */
	dev = open_named(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_tables_adopt(dev));
	char error[700];
	static const char *const dump[] = { "table_dump ca_pa" };
	char *out = ctl_run(dev, dump, 1, error, sizeof error);
	CHECK_MSG(out, "%s", error);
	char want[80];
	snprintf(want, sizeof want, "  4    %u.%u.%u.%u => drop()\n5 entries\n", keys[SLOTS] >> 24,
		 keys[SLOTS] >> 16 & 0xFF, keys[SLOTS] >> 8 & 0xFF, keys[SLOTS] & 0xFF);
	CHECK_MSG(strstr(out, want), "%s", out);
	free(out);
	CHECK_OK(dev, matcha_entry_read(dev, "ca_pa", SLOTS, &v));
	CHECK(v.index == 4096 + (uint32_t)(at - STASH_BASE) && !strcmp(v.action->name, "drop"));
	CHECK_OK(dev, matcha_entry_delete(dev, "ca_pa", SLOTS));
	CHECK(hw_lookup(fd, &m, keys[SLOTS]) == -1);
	free(m.e);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * CA→PA mappings at scale, shaped as the overlay's (docs/overlay.md, "Mappings in memory"):
 * a 42-bit key (VNET and inner IPv4), 80 bits of data (underlay IPv4 and overlay MAC),
 * six 18-byte entries a 128-byte bucket, three in each 64-byte beat, as many buckets as
 * mappings (a sixth of the entries used, docs/tables.md "Capacity at DPU scale"), and the
 * stash the generator gives such a table: 4 * max(4, buckets >> 14) entries
 * (Overlay.mappingStash: 256 for 2^20 mappings, 2048 for 2^23). MATCHA_MAPPINGS distinct
 * random keys (default 2^16; bench/scale/mapping_load.py runs 2^20 and 2^23) added in a
 * random order, each placed (in its bucket or, that full, in the stash) or refused; then
 * every key against the fake unit's lookup and its memory and stash: a placed key's entry
 * holds its action and data, a refused key's bucket is full and its 4 stash slots taken; a
 * random tenth of the placed keys deleted (gone, the rest still there) and added again with
 * new data (every key checked again). The oracle is the test's own list of keys and data
 * and the entry layout of docs/tables.md; the driver's shadow is never consulted.
 */
#define MAP_KEY_BITS 42
#define MAP_KEY_BYTES 6
#define MAP_DATA_BITS 80
#define MAP_DATA_BYTES 10
#define MAP_SLOTS 6
#define MAP_ENTRY_BYTES (2 + MAP_KEY_BYTES + MAP_DATA_BYTES)
#define MAP_BUCKET 128
#define MAP_BEAT 64
#define MAP_ACTION 1

struct mapping {
	uint8_t key[MAP_KEY_BYTES], data[MAP_DATA_BYTES];
	bool placed;
};

/* The first byte of entry `slot` of a bucket: three whole entries in each beat. */
static unsigned map_offset(unsigned slot)
{
	unsigned per_beat = MAP_BEAT / MAP_ENTRY_BYTES;
	return slot / per_beat * MAP_BEAT + slot % per_beat * MAP_ENTRY_BYTES;
}

/* The stash's entry of a mapping, as the unit keeps an exact table's: its key and data in
 * word order, valid and action in FLAGS; or why it is not. */
static bool mapping_in_stash(const struct fake_table *t, const struct mapping *m, long at,
			     char *why, size_t len)
{
	long first = (long)t->cfg.size / MAP_SLOTS << MATCHA_HW_MEMX_INDEX_SLOT_BITS;
	const struct fake_entry *e = &t->stash[at - first];
	uint32_t key[MATCHA_HW_WIN_STAGING_WORDS] = { 0 };
	uint32_t data[MATCHA_HW_WIN_STAGING_WORDS] = { 0 };
	test_be_to_words(m->key, MAP_KEY_BYTES, key, 2);
	test_be_to_words(m->data, MAP_DATA_BYTES, data, 3);
	if (e->flags == (MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(MAP_ACTION)) &&
	    !memcmp(e->key, key, sizeof key) && !memcmp(e->data, data, sizeof data))
		return true;
	snprintf(why, len, "stash entry 0x%lx holds flags 0x%x, key 0x%x%08x, other data than "
		 "the mapping's or not", at, (unsigned)e->flags, (unsigned)e->key[1],
		 (unsigned)e->key[0]);
	return false;
}

/* Whether each of the mapping's 4 slots in the stash is taken, as a refusal needs. */
static bool stash_slots_taken(const struct fake_table *t, const struct mapping *m)
{
	unsigned slots = t->cfg.stash / MATCHA_HW_MEMX_STASH_WAYS;
	uint64_t crc = matcha_crc64_xz(m->key, MAP_KEY_BYTES);
	for (unsigned w = 0; w < MATCHA_HW_MEMX_STASH_WAYS; w++)
		if (!(t->stash[w * slots + ((crc >> 16 * w) & (slots - 1))].flags &
		      MATCHA_HW_FLAGS_VALID))
			return false;
	return true;
}

/* The mapping's entry as the fake unit finds it, or a message why it is not right;
 * *stashed counts it when the stash holds it. */
static bool mapping_in_memory(struct fake_dev *fd, unsigned table, const struct mapping *m,
			      unsigned *stashed, char *why, size_t len)
{
	long at = fake_mem_exact_lookup(fd, table, m->key);
	const struct fake_table *t = &fd->table[table];
	uint32_t buckets = t->cfg.size / MAP_SLOTS;
	if (!m->placed) {
		uint32_t b = (uint32_t)matcha_crc64_xz(m->key, MAP_KEY_BYTES) & (buckets - 1);
		const uint8_t *bucket = t->memory + (size_t)b * MAP_BUCKET;
		unsigned used = 0;
		for (unsigned s = 0; s < MAP_SLOTS; s++)
			used += bucket[map_offset(s) + MATCHA_HW_MEMX_ENTRY_FLAGS_BYTE] &
				MATCHA_HW_MEMX_ENTRY_VALID;
		bool taken = !t->stash || stash_slots_taken(t, m);
		if (at < 0 && used == MAP_SLOTS && taken)
			return true;
		snprintf(why, len, "a refused key is at %ld, its bucket %u has %u entries used, "
			 "its stash slots %s", at, (unsigned)b, used,
			 taken ? "taken" : "not all taken");
		return false;
	}
	if (at < 0) {
		snprintf(why, len, "a placed key is neither in its bucket nor in the stash");
		return false;
	}
	if ((uint64_t)at >= (uint64_t)buckets << MATCHA_HW_MEMX_INDEX_SLOT_BITS) {
		(*stashed)++;
		return mapping_in_stash(t, m, at, why, len);
	}
	const uint8_t *e = t->memory + (size_t)(at >> MATCHA_HW_MEMX_INDEX_SLOT_BITS) * MAP_BUCKET +
			   map_offset(at & ((1 << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1));
	uint8_t want[MAP_ENTRY_BYTES] = { MATCHA_HW_MEMX_ENTRY_VALID, MAP_ACTION };
	for (unsigned i = 0; i < MAP_KEY_BYTES; i++)
		want[2 + i] = m->key[MAP_KEY_BYTES - 1 - i];
	for (unsigned i = 0; i < MAP_DATA_BYTES; i++)
		want[2 + MAP_KEY_BYTES + i] = m->data[MAP_DATA_BYTES - 1 - i];
	for (unsigned i = 0; i < MAP_ENTRY_BYTES; i++)
		if (e[i] != want[i]) {
			snprintf(why, len, "entry 0x%lx byte %u is 0x%02x, not 0x%02x", at, i, e[i],
				 want[i]);
			return false;
		}
	return true;
}

/* Every mapping as mapping_in_memory() wants it: a failure names the first that is not.
 * Returns how many the stash holds. */
static unsigned mappings_in_memory(struct fake_dev *fd, unsigned table,
				   const struct mapping *maps, unsigned n, const char *when)
{
	char why[200];
	unsigned stashed = 0;
	for (unsigned i = 0; i < n; i++)
		if (!mapping_in_memory(fd, table, &maps[i], &stashed, why, sizeof why)) {
			check_fail(__FILE__, __LINE__, "%s: mapping %u: %s", when, i, why);
			break;
		}
	return stashed;
}

void test_mem_exact_mappings_at_scale(void)
{
	const char *env = getenv("MATCHA_MAPPINGS");
	unsigned n = env ? (unsigned)strtoul(env, NULL, 0) : 1u << 16, buckets = 1;
	CHECK_MSG(n >= 16 && n <= 1u << 24, "MATCHA_MAPPINGS=%s: 16 to 2^24", env);
	while (buckets < n)
		buckets <<= 1;
	unsigned stash = 4 * (buckets >> 14 > 4 ? buckets >> 14 : 4);
	struct fake_cfg cfg = memx_cfg();
	cfg.ntables = 1;
	cfg.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_MEM_EXACT,
						.key_bits = MAP_KEY_BITS, .size = buckets * MAP_SLOTS,
						.data_bits = MAP_DATA_BITS,
						.ways_or_levels = MAP_SLOTS, .latency = 512,
						.extra = MAP_ENTRY_BYTES, .bucket_bytes = MAP_BUCKET,
						.beat_bytes = MAP_BEAT, .stash = stash };
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct mapping *maps = calloc(n, sizeof *maps);
	/* Distinct keys: open addressing over their 42 bits. */
	unsigned mask = 4 * buckets - 1;
	uint64_t *seen = calloc(mask + 1ull, sizeof *seen);
	for (unsigned i = 0; i < n;) {
		uint64_t k = rng_next(&r) & ((1ull << MAP_KEY_BITS) - 1), h;
		for (h = (k + 1) * 0x9E3779B97F4A7C15ull >> 40;
		     seen[h & mask] && seen[h & mask] != k + 1; h++)
			;
		if (seen[h & mask])
			continue;
		seen[h & mask] = k + 1;
		for (unsigned b = 0; b < MAP_KEY_BYTES; b++)
			maps[i].key[b] = (uint8_t)(k >> 8 * (MAP_KEY_BYTES - 1 - b));
		rng_bytes(&r, maps[i].data, MAP_DATA_BYTES);
		i++;
	}
	free(seen);
	unsigned refused = 0;
	struct timespec t0, t1;
	unsigned long reads = fd->reads, writes = fd->writes, commands = fd->commands;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < n && check_failures() == 0; i++) {
		int rc = matcha_mem_exact_add(dev, 0, maps[i].key, MAP_KEY_BITS, MAP_ACTION,
					      maps[i].data, MAP_DATA_BITS);
		CHECK_MSG(rc == 0 || rc == MATCHA_ENOSPC, "mapping %u: %s", i, matcha_last_error(dev));
		maps[i].placed = rc == 0;
		refused += rc == MATCHA_ENOSPC;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	reads = fd->reads - reads, writes = fd->writes - writes, commands = fd->commands - commands;
	unsigned stashed = mappings_in_memory(fd, 0, maps, n, "all added");
	/* A random tenth of the placed ones out, then in again with new data. */
	unsigned *out = calloc(n, sizeof *out), nout = 0;
	for (unsigned i = 0; i < n; i++)
		if (maps[i].placed && rng_below(&r, 10) == 0)
			out[nout++] = i;
	for (unsigned k = 0; k < nout && check_failures() == 0; k++) {
		CHECK_OK(dev, matcha_mem_exact_delete(dev, 0, maps[out[k]].key, MAP_KEY_BITS));
		maps[out[k]].placed = false;
	}
	for (unsigned k = 0; k < nout && check_failures() == 0; k++)
		CHECK_MSG(fake_mem_exact_lookup(fd, 0, maps[out[k]].key) < 0, "deleted mapping %u "
			  "is still found", out[k]);
	for (unsigned k = 0; k < nout && check_failures() == 0; k++) {
		struct mapping *m = &maps[out[k]];
		rng_bytes(&r, m->data, MAP_DATA_BYTES);
		CHECK_OK(dev, matcha_mem_exact_add(dev, 0, m->key, MAP_KEY_BITS, MAP_ACTION, m->data,
						   MAP_DATA_BITS));
		m->placed = true;
	}
	unsigned again = mappings_in_memory(fd, 0, maps, n, "a tenth deleted and added again");
	printf("  %u mappings in %u buckets added in %.1f s with %lu register reads, %lu writes, "
	       "%lu commands; %u placed in the stash of %u entries, %u refused; %u deleted and "
	       "added again (then %u in the stash)\n", n, buckets,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, reads, writes,
	       commands, stashed, stash, refused, nout, again);
	/* The stash is sized to stay under half full (Overlay.mappingStash): a refusal is the
	 * stash failing. Only the default run's stash of 16 may fill by chance. */
	CHECK_MSG(refused == 0 || (stash == 16 && refused < 4), "%u refused", refused);
	CHECK(stashed > 0 && nout > 0);
	free(out);
	free(maps);
	matcha_close(dev);
	fake_free(fd);
}
