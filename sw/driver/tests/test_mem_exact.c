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

/* The fake's window answers as the unit's (docs/tables.md, "Control path"). */
void test_mem_exact_fake_window(void)
{
	struct fake_cfg cfg = memx_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct fake_table *t = &fd->table[MEMX];
	uint32_t base = t->base;
	const uint32_t range = MATCHA_HW_STATUS_ERROR_INDEX_RANGE;
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS,
			 MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9));
	fake_ops.write32(fd, base + MATCHA_HW_WIN_KEY, 0x11223344);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_DATA, 0xAABBCCDD);
	static const uint32_t outside[] = { 4, 15, 1024u << 4, 1025u << 4 | 1, UINT32_MAX };
	for (unsigned i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_WRITE, outside[i]) == range);
		CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_READ, outside[i]) == range);
	}
	for (unsigned i = 0; i < 1024 * BEAT; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u written by a refused WRITE", i);
	/* The last entry of the last bucket: bytes 24..31 of its beat, the data's high
	 * byte dropped (16 bits). */
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_WRITE, 1023u << 4 | 3) == 0);
	static const uint8_t entry[8] = { 0x01, 0x09, 0x44, 0x33, 0x22, 0x11, 0xDD, 0xCC };
	CHECK(!memcmp(t->memory + 1023 * BEAT + 24, entry, 8));
	for (unsigned i = 0; i < 1023 * BEAT + 24; i++)
		CHECK_MSG(t->memory[i] == 0, "byte %u written", i);
	fake_ops.write32(fd, base + MATCHA_HW_WIN_FLAGS, 0);
	CHECK(raw_command(fd, MEMX, MATCHA_HW_CMD_READ, 1023u << 4 | 3) == 0);
	uint32_t flags, key, data;
	fake_ops.read32(fd, base + MATCHA_HW_WIN_FLAGS, &flags);
	fake_ops.read32(fd, base + MATCHA_HW_WIN_KEY, &key);
	fake_ops.read32(fd, base + MATCHA_HW_WIN_DATA, &data);
	CHECK(flags == (MATCHA_HW_FLAGS_VALID | FAKE_FLAGS_ACTION(9)) && key == 0x11223344 &&
	      data == 0xCCDD);
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

/*
 * CA→PA mappings at scale, shaped as the overlay's (docs/overlay.md, "Mappings in memory"):
 * a 42-bit key (VNET and inner IPv4), 80 bits of data (underlay IPv4 and overlay MAC),
 * six 18-byte entries a 128-byte bucket, three in each 64-byte beat, as many buckets as
 * mappings (a sixth of the entries used, docs/tables.md "Capacity at DPU scale"). MATCHA_MAPPINGS distinct random
 * keys (default 2^16; bench/scale/mapping_load.py runs 2^20) added in a random order, each
 * placed or refused for a full bucket; then every key against the fake unit's lookup and
 * its memory: a placed key's entry holds its action and data, a refused key's bucket is
 * full; a random tenth of the placed keys deleted (gone, the rest still there) and added
 * again with new data (every key checked again). The oracle is the test's own list of keys
 * and data and the entry layout of docs/tables.md; the driver's shadow is never consulted.
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

/* The mapping's entry as the fake unit finds it, or a message why it is not right. */
static bool mapping_in_memory(struct fake_dev *fd, unsigned table, const struct mapping *m,
			      char *why, size_t len)
{
	long at = fake_mem_exact_lookup(fd, table, m->key);
	const struct fake_table *t = &fd->table[table];
	if (!m->placed) {
		uint32_t b = (uint32_t)matcha_crc64_xz(m->key, MAP_KEY_BYTES) &
			     (t->cfg.size / MAP_SLOTS - 1);
		const uint8_t *bucket = t->memory + (size_t)b * MAP_BUCKET;
		unsigned used = 0;
		for (unsigned s = 0; s < MAP_SLOTS; s++)
			used += bucket[map_offset(s) + MATCHA_HW_MEMX_ENTRY_FLAGS_BYTE] &
				MATCHA_HW_MEMX_ENTRY_VALID;
		if (at < 0 && used == MAP_SLOTS)
			return true;
		snprintf(why, len, "a refused key is at %ld, its bucket %u has %u entries used",
			 at, (unsigned)b, used);
		return false;
	}
	if (at < 0) {
		snprintf(why, len, "a placed key is not in its bucket");
		return false;
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

/* Every mapping as mapping_in_memory() wants it: a failure names the first that is not. */
static void mappings_in_memory(struct fake_dev *fd, unsigned table, const struct mapping *maps,
			       unsigned n, const char *when)
{
	char why[160];
	for (unsigned i = 0; i < n; i++)
		CHECK_MSG(mapping_in_memory(fd, table, &maps[i], why, sizeof why), "%s: mapping %u: %s",
			  when, i, why);
}

void test_mem_exact_mappings_at_scale(void)
{
	const char *env = getenv("MATCHA_MAPPINGS");
	unsigned n = env ? (unsigned)strtoul(env, NULL, 0) : 1u << 16, buckets = 1;
	CHECK_MSG(n >= 16 && n <= 1u << 24, "MATCHA_MAPPINGS=%s: 16 to 2^24", env);
	while (buckets < n)
		buckets <<= 1;
	struct fake_cfg cfg = memx_cfg();
	cfg.ntables = 1;
	cfg.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_MEM_EXACT,
						.key_bits = MAP_KEY_BITS, .size = buckets * MAP_SLOTS,
						.data_bits = MAP_DATA_BITS,
						.ways_or_levels = MAP_SLOTS, .latency = 512,
						.extra = MAP_ENTRY_BYTES, .bucket_bytes = MAP_BUCKET,
						.beat_bytes = MAP_BEAT };
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
	mappings_in_memory(fd, 0, maps, n, "all added");
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
	mappings_in_memory(fd, 0, maps, n, "a tenth deleted and added again");
	printf("  %u mappings in %u buckets added in %.1f s with %lu register reads, %lu writes, "
	       "%lu commands; %u refused for a full bucket; %u deleted and added again\n", n,
	       buckets, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, reads,
	       writes, commands, refused, nout);
	CHECK(refused < n / 20 && nout > 0);
	free(out);
	free(maps);
	matcha_close(dev);
	fake_free(fd);
}
