/* SPDX-License-Identifier: Apache-2.0 */
/* Exact tables: placement, cuckoo moves, errors, and make-before-break under every write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"
#include "util.h"

#define EXACT 0 /* the standard device's exact table: 44-bit keys, 4 x 256, 40-bit data */
#define KEY_BITS 44
#define KEY_BYTES 6
#define DATA_BITS 40
#define DATA_BYTES 5

struct key_entry {
	uint8_t key[KEY_BYTES];
	uint8_t action;
	uint8_t data[DATA_BYTES];
	bool present;
};

/* Whether the hardware would answer the key with its action and data. */
static bool hw_answers(struct fake_dev *fd, const struct key_entry *e)
{
	long i = fake_exact_find(fd, EXACT, e->key, KEY_BITS);
	if (i < 0)
		return false;
	uint32_t data[2];
	test_be_to_words(e->data, DATA_BYTES, data, 2);
	const struct fake_entry *fe = &fd->table[EXACT].entries[i];
	return FAKE_FLAGS_ACTION_OF(fe->flags) == e->action && !memcmp(fe->data, data, sizeof data);
}

static void random_entry(struct rng *r, struct key_entry *e)
{
	random_value(r, e->key, KEY_BITS);
	e->action = (uint8_t)rng_next(r);
	random_value(r, e->data, DATA_BITS);
	e->present = false;
}

static int add(matcha_dev *dev, struct key_entry *e)
{
	int rc = matcha_exact_add(dev, EXACT, e->key, KEY_BITS, e->action, e->data, DATA_BITS);
	if (rc == 0)
		e->present = true;
	return rc;
}

void test_exact_add_read_delete(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	enum { N = 300 };
	struct key_entry e[N];
	for (unsigned i = 0; i < N; i++) {
		random_entry(&r, &e[i]);
		CHECK_OK(dev, add(dev, &e[i]));
	}
	for (unsigned i = 0; i < N; i++) {
		uint32_t index;
		struct matcha_entry got;
		CHECK_OK(dev, matcha_exact_lookup_sw(dev, EXACT, e[i].key, KEY_BITS, &index));
		CHECK(fake_exact_find(fd, EXACT, e[i].key, KEY_BITS) == (long)index);
		CHECK(hw_answers(fd, &e[i]));
		CHECK_OK(dev, matcha_exact_read(dev, EXACT, index, &got));
		CHECK(got.valid && got.action_id == e[i].action && got.key_bits == KEY_BITS &&
		      got.data_bits == DATA_BITS);
		CHECK(!memcmp(got.key, e[i].key, KEY_BYTES) && !memcmp(got.data, e[i].data, DATA_BYTES));
	}
	for (unsigned i = 0; i < N; i += 2) {
		uint32_t index;
		struct matcha_entry got;
		CHECK_OK(dev, matcha_exact_lookup_sw(dev, EXACT, e[i].key, KEY_BITS, &index));
		CHECK_OK(dev, matcha_exact_delete(dev, EXACT, e[i].key, KEY_BITS));
		CHECK_OK(dev, matcha_exact_read(dev, EXACT, index, &got));
		CHECK(!got.valid);
		CHECK_RC(dev, matcha_exact_lookup_sw(dev, EXACT, e[i].key, KEY_BITS, &index),
			 MATCHA_ENOENT);
		CHECK_RC(dev, matcha_exact_delete(dev, EXACT, e[i].key, KEY_BITS), MATCHA_ENOENT);
		CHECK(strstr(matcha_last_error(dev), "not in table 0"));
	}
	for (unsigned i = 0; i < N; i++)
		CHECK_MSG((fake_exact_find(fd, EXACT, e[i].key, KEY_BITS) >= 0) == (i % 2 == 1), "key %u", i);
	/* A key narrower than the table is zero-extended: the same entry as its full width. */
	uint8_t narrow[2] = { 0x0A, 0xBC }, wide[KEY_BYTES] = { 0, 0, 0, 0, 0x0A, 0xBC };
	uint32_t a, b;
	CHECK_OK(dev, matcha_exact_add(dev, EXACT, narrow, 12, 7, NULL, 0));
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, EXACT, wide, KEY_BITS, &a));
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, EXACT, narrow, 12, &b));
	CHECK(a == b && fake_exact_find(fd, EXACT, wide, KEY_BITS) == (long)a);
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, wide, KEY_BITS, 7, NULL, 0), MATCHA_EEXIST);
	CHECK(strstr(matcha_last_error(dev), "already in table 0"));
	matcha_close(dev);
	fake_free(fd);
}

void test_exact_argument_errors(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t key[8] = { 0 }, data[8] = { 0 };
	unsigned long writes = fd->writes;
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, key, 45, 1, data, 8), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "key is 45 bits, table 0 takes 44"));
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, key, 44, 1, data, 41), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "action data is 41 bits, table 0 takes 40"));
	key[0] = 0x10; /* bit 44 of a 6-byte key */
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, key, 44, 1, data, 8), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "bits set above bit 43"));
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, key, 0, 1, data, 8), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_exact_add(dev, EXACT, NULL, 44, 1, data, 8), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_exact_delete(dev, EXACT, key, 45), MATCHA_E2BIG);
	struct matcha_entry got;
	CHECK_RC(dev, matcha_exact_read(dev, EXACT, 1024, &got), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "index 1024 is out of range"));
	CHECK(fd->writes == writes);
	matcha_close(dev);
	fake_free(fd);
}

void test_exact_fill_until_full(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	enum { SIZE = 1024 };
	struct key_entry *e = calloc(SIZE + 1, sizeof *e);
	unsigned n = 0, moved = 0;
	int rc;
	for (;;) {
		random_entry(&r, &e[n]);
		unsigned long commands = fd->commands;
		rc = add(dev, &e[n]);
		if (rc)
			break;
		moved += fd->commands - commands - 1; /* one WRITE per move, one for the key */
		n++;
	}
	if (rc != MATCHA_ENOSPC || !strstr(matcha_last_error(dev), "no room"))
		check_fail(__FILE__, __LINE__, "fill stopped with %d: %s", rc, matcha_last_error(dev));
	/* Four ways and four moves: occupancy well over 90 %. */
	if (n < SIZE * 9 / 10)
		check_fail(__FILE__, __LINE__, "full at %u of %u entries", n, SIZE);
	printf("  full at %u of %u entries, %u moves\n", n, SIZE, moved);
	if (moved == 0)
		check_fail(__FILE__, __LINE__, "no entry was ever moved");
	for (unsigned i = 0; i < n; i++)
		if (!hw_answers(fd, &e[i]))
			check_fail(__FILE__, __LINE__, "key %u of %u lost", i, n);
	/* A failed add writes nothing. */
	unsigned long writes = fd->writes;
	CHECK_RC(dev, add(dev, &e[n]), MATCHA_ENOSPC);
	CHECK(fd->writes == writes);
	free(e);
	matcha_close(dev);
	fake_free(fd);
}

/* A device with one small exact table: 2 ways of 16 slots, 16-bit keys, no data. */
static struct fake_cfg small_exact_cfg(unsigned ways, unsigned size)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 1;
	cfg.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 16, .size = size,
						.data_bits = 0, .ways_or_levels = ways };
	return cfg;
}

void test_exact_collisions_in_all_ways(void)
{
	struct fake_cfg cfg = small_exact_cfg(2, 32);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	/* Keys whose slots agree in both ways: only two of them fit, whatever is moved. */
	uint8_t keys[3][2], first[2] = { 0, 0 };
	unsigned found = 0;
	uint32_t i0 = matcha_exact_index(first, 16, 0, 16), i1 = matcha_exact_index(first, 16, 1, 16);
	for (uint32_t k = 0; k < 65536 && found < 3; k++) {
		uint8_t key[2] = { (uint8_t)(k >> 8), (uint8_t)k };
		if (matcha_exact_index(key, 16, 0, 16) == i0 && matcha_exact_index(key, 16, 1, 16) == i1)
			memcpy(keys[found++], key, 2);
	}
	CHECK(found == 3);
	CHECK_OK(dev, matcha_exact_add(dev, 0, keys[0], 16, 1, NULL, 0));
	CHECK_OK(dev, matcha_exact_add(dev, 0, keys[1], 16, 2, NULL, 0));
	CHECK_RC(dev, matcha_exact_add(dev, 0, keys[2], 16, 3, NULL, 0), MATCHA_ENOSPC);
	CHECK(strstr(matcha_last_error(dev), "its 2 candidate slots are taken"));
	CHECK(fake_exact_find(fd, 0, keys[0], 16) == (long)i0);
	CHECK(fake_exact_find(fd, 0, keys[1], 16) == (long)(16 + i1));
	CHECK(fake_exact_find(fd, 0, keys[2], 16) == -1);
	/* Deleting one makes room again. */
	CHECK_OK(dev, matcha_exact_delete(dev, 0, keys[0], 16));
	CHECK_OK(dev, matcha_exact_add(dev, 0, keys[2], 16, 3, NULL, 0));
	CHECK(fake_exact_find(fd, 0, keys[2], 16) == (long)i0);
	matcha_close(dev);
	fake_free(fd);
}

void test_exact_collisions_in_way0(void)
{
	struct fake_cfg cfg = small_exact_cfg(4, 64);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	/* Twelve keys for one way-0 slot: one sits there, the rest go to other ways or move. */
	enum { N = 12 };
	uint8_t keys[N][2];
	unsigned found = 0;
	for (uint32_t k = 0; k < 65536 && found < N; k++) {
		uint8_t key[2] = { (uint8_t)(k >> 8), (uint8_t)k };
		if (matcha_exact_index(key, 16, 0, 16) == 5)
			memcpy(keys[found++], key, 2);
	}
	CHECK(found == N);
	unsigned in_way0 = 0;
	for (unsigned i = 0; i < N; i++)
		CHECK_OK(dev, matcha_exact_add(dev, 0, keys[i], 16, (uint8_t)i, NULL, 0));
	for (unsigned i = 0; i < N; i++) {
		long at = fake_exact_find(fd, 0, keys[i], 16);
		CHECK_MSG(at >= 0, "key %u lost", i);
		CHECK((fd->table[0].entries[at].flags >> 8) == i);
		in_way0 += at == 5;
	}
	CHECK(in_way0 == 1);
	matcha_close(dev);
	fake_free(fd);
}

/* Packet and byte counts a test expects of an entry. */
struct counts {
	uint64_t packets, bytes;
};

/*
 * After every command (table memory changes only on one): every key that is present
 * before and after the operation answers with its own action and data. With `hits`, each
 * key the table holds (the one being added or deleted too) is also looked up once, as the
 * hardware would, and counted where it hits; hits[i] is what key i should have counted.
 */
struct mbb_check {
	struct key_entry *e;
	unsigned n;
	long skip; /* the key being added or deleted */
	unsigned long checks;
	struct counts *hits;
	unsigned long last_commands, lookups;
};

static void count_hits(struct fake_dev *fd, struct mbb_check *c)
{
	if (!c->hits)
		return;
	for (unsigned i = 0; i < c->n; i++) {
		if (!c->e[i].present && (long)i != c->skip)
			continue;
		long at = fake_exact_find(fd, EXACT, c->e[i].key, KEY_BITS);
		if (at < 0)
			continue;
		unsigned len = 60 + (unsigned)((i * 7 + fd->commands) % 1459);
		fake_hit(fd, EXACT, (uint32_t)at, len);
		c->hits[i].packets++;
		c->hits[i].bytes += len;
		c->lookups++;
	}
}

static void check_all_present(struct fake_dev *fd, void *arg)
{
	struct mbb_check *c = arg;
	if (fd->commands == c->last_commands)
		return;
	c->last_commands = fd->commands;
	c->checks++;
	for (unsigned i = 0; i < c->n; i++)
		if (c->e[i].present && (long)i != c->skip && !hw_answers(fd, &c->e[i]))
			check_fail(__FILE__, __LINE__, "after write %lu: key %u not found", fd->writes, i);
	count_hits(fd, c);
}

/* The driver's count of key i is what the test counted for it. */
static bool counts_agree(matcha_dev *dev, const struct mbb_check *c, unsigned i)
{
	uint64_t p, b;
	int rc = matcha_exact_counters(dev, EXACT, c->e[i].key, KEY_BITS, &p, &b, 0);
	if (rc || p != c->hits[i].packets || b != c->hits[i].bytes) {
		check_fail(__FILE__, __LINE__, "key %u: rc %d, %llu packets %llu bytes, counted "
			   "%llu and %llu: %s", i, rc, (unsigned long long)p, (unsigned long long)b,
			   (unsigned long long)c->hits[i].packets,
			   (unsigned long long)c->hits[i].bytes, matcha_last_error(dev));
		return false;
	}
	return true;
}

/*
 * Random adds and deletes from 85 % full until the table is full, checked after every
 * write. With counters, keys are counted after every command (moves included) and their
 * counts checked after every operation; some are read with a reset.
 */
static void exact_mbb(bool counters)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[EXACT].counters = counters;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	enum { SIZE = 1024, OPS = 1500 };
	struct key_entry *e = calloc(OPS, sizeof *e);
	struct counts *hits = calloc(OPS, sizeof *hits);
	struct mbb_check c = { e, 0, -1, 0, counters ? hits : NULL, 0, 0 };
	unsigned n = 0, moves = 0, resets = 0;
	/* Fill to 85 % without the check, then add and delete with it until full. */
	for (; n < SIZE * 85 / 100; n++) {
		random_entry(&r, &e[n]);
		CHECK_OK(dev, add(dev, &e[n]));
	}
	c.last_commands = fd->commands;
	fd->after_write = check_all_present;
	fd->after_write_arg = &c;
	int full = 0;
	/* With counters every move is four commands, each followed by a round of lookups. */
	for (; n < OPS && full < (counters ? 20 : 50) && check_failures() == 0; n++) {
		c.n = n + 1;
		if (rng_below(&r, 4) == 0) { /* delete a random present key */
			unsigned victim = rng_below(&r, n);
			if (e[victim].present) {
				c.skip = victim;
				CHECK_OK(dev, matcha_exact_delete(dev, EXACT, e[victim].key, KEY_BITS));
				e[victim].present = false;
			}
		}
		random_entry(&r, &e[n]);
		c.skip = n;
		unsigned long commands = fd->commands, zeros = fd->table[EXACT].zeros;
		int rc = add(dev, &e[n]);
		if (rc == MATCHA_ENOSPC)
			full++;
		else
			CHECK_OK(dev, rc);
		/* One WRITE per move without counters; one ZERO per move with them. */
		moves += counters ? fd->table[EXACT].zeros - zeros - (rc == 0)
				  : fd->commands - commands - (rc == 0);
		if (!counters)
			continue;
		fd->after_write = NULL;
		for (unsigned k = 0; k < 8; k++) {
			unsigned i = rng_below(&r, n + 1);
			if (e[i].present && !counts_agree(dev, &c, i))
				break;
			if (e[i].present && rng_below(&r, 4) == 0) {
				CHECK_OK(dev, matcha_exact_counters(dev, EXACT, e[i].key, KEY_BITS, NULL,
								    NULL, MATCHA_COUNTERS_RESET));
				hits[i] = (struct counts){ 0, 0 };
				resets++;
			}
		}
		fd->after_write = check_all_present;
	}
	fd->after_write = NULL;
	CHECK_MSG(moves >= 20, "only %u cuckoo moves were exercised", moves);
	CHECK(c.checks > 100);
	if (counters) {
		for (unsigned i = 0; i < n; i++)
			if (e[i].present && !counts_agree(dev, &c, i))
				break;
		CHECK_MSG(fd->table[EXACT].stale_writes == 0, "%lu entries written onto old counts",
			  fd->table[EXACT].stale_writes);
		printf("  %u moves, %lu hits counted, %u resets\n", moves, c.lookups, resets);
	}
	free(e);
	free(hits);
	matcha_close(dev);
	fake_free(fd);
}

void test_exact_make_before_break(void)
{
	exact_mbb(false);
}

void test_exact_make_before_break_counters(void)
{
	exact_mbb(true);
}

/*
 * A small table with counters filled until no key fits: after each add every key is
 * counted (key k: k+1 packets of 100 bytes), and every key keeps its whole count through
 * the moves the later adds make.
 */
void test_exact_counters_follow_moves(void)
{
	struct fake_cfg cfg = small_exact_cfg(2, 32);
	cfg.table[0].counters = true;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	enum { MAX = 32 };
	uint8_t keys[MAX][2];
	long first_at[MAX];
	uint64_t want[MAX] = { 0 };
	unsigned n = 0, moved = 0;
	for (; n < MAX; n++) {
		keys[n][0] = (uint8_t)(n * 37 >> 8);
		keys[n][1] = (uint8_t)(n * 37);
		int rc = matcha_exact_add(dev, 0, keys[n], 16, (uint8_t)n, NULL, 0);
		if (rc == MATCHA_ENOSPC)
			break;
		CHECK_OK(dev, rc);
		first_at[n] = fake_exact_find(fd, 0, keys[n], 16);
		for (unsigned j = 0; j <= n; j++) {
			long at = fake_exact_find(fd, 0, keys[j], 16);
			CHECK(at >= 0);
			for (unsigned h = 0; h <= j; h++)
				fake_hit(fd, 0, (uint32_t)at, 100);
			want[j] += j + 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t p, b, raw;
		long at = fake_exact_find(fd, 0, keys[i], 16);
		moved += at != first_at[i];
		CHECK_OK(dev, matcha_exact_counters(dev, 0, keys[i], 16, &p, &b, 0));
		CHECK_MSG(p == want[i] && b == 100 * want[i], "key %u: %llu packets, want %llu", i,
			  (unsigned long long)p, (unsigned long long)want[i]);
		/* The raw count of its index is only what it counted there. */
		CHECK_OK(dev, matcha_counters_read(dev, 0, (uint32_t)at, &raw, NULL));
		CHECK(raw <= p && (at != first_at[i] || raw == p));
	}
	printf("  %u keys, %u of them moved\n", n, moved);
	CHECK_MSG(moved >= 3, "only %u keys moved", moved);
	CHECK(fd->table[0].stale_writes == 0);
	matcha_close(dev);
	fake_free(fd);
}

/* Adds zero the slot first; reset reads; ZERO by index; a delete drops the count. */
void test_exact_counters_reset_and_reuse(void)
{
	struct fake_cfg cfg = small_exact_cfg(2, 32);
	cfg.table[0].counters = true;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct fake_table *t = &fd->table[0];
	uint8_t key[2] = { 0x12, 0x34 };
	uint32_t at = matcha_exact_index(key, 16, 0, 16);
	uint64_t p, b;
	/* Leftovers on the slot (a previous owner of the device) are zeroed before the add. */
	fake_hit(fd, 0, at, 1000);
	unsigned long zeros = t->zeros;
	CHECK_OK(dev, matcha_exact_add(dev, 0, key, 16, 1, NULL, 0));
	CHECK(t->zeros == zeros + 1 && t->stale_writes == 0);
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 0 && b == 0);
	fake_hit(fd, 0, at, 64);
	fake_hit(fd, 0, at, 128);
	/* Read and reset: the next read has only what came after. */
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, MATCHA_COUNTERS_RESET));
	CHECK(p == 2 && b == 192);
	CHECK(t->packets[at] == 2); /* a reset is the driver's: no hit can fall in between */
	fake_hit(fd, 0, at, 70);
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 1 && b == 70);
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, MATCHA_COUNTERS_RESET));
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 0 && b == 0);
	/* ZERO of its index restarts the entry's count too. */
	fake_hit(fd, 0, at, 70);
	CHECK_OK(dev, matcha_counters_zero(dev, 0, at));
	fake_hit(fd, 0, at, 80);
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 1 && b == 80);
	/* Delete and add again: a new entry, a new count. */
	CHECK_OK(dev, matcha_exact_delete(dev, 0, key, 16));
	CHECK_RC(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0), MATCHA_ENOENT);
	CHECK_OK(dev, matcha_exact_add(dev, 0, key, 16, 2, NULL, 0));
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 0 && b == 0);
	/* CLEAR drops everything. */
	fake_hit(fd, 0, at, 80);
	CHECK_OK(dev, matcha_table_clear(dev, 0));
	CHECK_OK(dev, matcha_exact_add(dev, 0, key, 16, 2, NULL, 0));
	CHECK_OK(dev, matcha_exact_counters(dev, 0, key, 16, &p, &b, 0));
	CHECK(p == 0 && b == 0 && t->stale_writes == 0);
	matcha_close(dev);
	fake_free(fd);
}

void test_exact_clear(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct key_entry e[20];
	for (unsigned i = 0; i < 20; i++) {
		random_entry(&r, &e[i]);
		CHECK_OK(dev, add(dev, &e[i]));
	}
	CHECK_OK(dev, matcha_table_clear(dev, EXACT));
	uint32_t index;
	for (unsigned i = 0; i < 20; i++) {
		CHECK(fake_exact_find(fd, EXACT, e[i].key, KEY_BITS) < 0);
		CHECK_RC(dev, matcha_exact_lookup_sw(dev, EXACT, e[i].key, KEY_BITS, &index),
			 MATCHA_ENOENT);
	}
	CHECK_OK(dev, add(dev, &e[0]));
	CHECK(hw_answers(fd, &e[0]));
	matcha_close(dev);
	fake_free(fd);
}
