/* SPDX-License-Identifier: Apache-2.0 */
/* Session tables (docs/sessions.md) on the fake device: keys, dump, find, delete, flush,
 * statistics, settings, and adoption by a second handle. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"

#define SESSION FAKE_SESSION_TABLE
#define SESSION_SIZE FAKE_SESSION_SIZE
#define SESSION_WAYS FAKE_SESSION_WAYS

void test_session_key_ipv4(void)
{
	uint8_t fwd[16], rev[16];
	bool reversed;
	/* 10.0.0.1:1234 -> 10.0.0.2:80 in zone 0x123456, TCP: the lower pair is the source. */
	const uint8_t want[16] = { 0x12, 0x34, 0x56, 6, 10, 0, 0, 1, 0x04, 0xD2,
				   10, 0, 0, 2, 0x00, 0x50 };
	CHECK(matcha_session_key_ipv4(0x123456, 6, 0x0A000001, 1234, 0x0A000002, 80, fwd,
				      &reversed) == 0);
	CHECK(!reversed && !memcmp(fwd, want, 16));
	CHECK(matcha_session_key_ipv4(0x123456, 6, 0x0A000002, 80, 0x0A000001, 1234, rev,
				      &reversed) == 0);
	CHECK(reversed && !memcmp(rev, want, 16));
	/* Same address: the port decides. */
	CHECK(matcha_session_key_ipv4(1, 17, 0x0A000001, 9, 0x0A000001, 8, fwd, &reversed) == 0);
	CHECK(reversed && fwd[9] == 8 && fwd[15] == 9);
	CHECK(matcha_session_key_ipv4(1u << 24, 17, 1, 1, 2, 2, fwd, NULL) == MATCHA_EINVAL);
}

void test_session_discovery(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	struct matcha_table_info in;
	if (!dev)
		return;
	CHECK_OK(dev, matcha_table_info(dev, SESSION, &in));
	CHECK(in.kind == MATCHA_KIND_SESSION && in.ways == SESSION_WAYS && in.counters &&
	      in.size == SESSION_SIZE && in.levels == 0);
	/* Session calls on another kind of table. */
	struct matcha_session_stats st;
	CHECK(matcha_session_stats(dev, 0, &st) == MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "not session"));
	matcha_close(dev);
	fake_free(fd);

	/* A session table without counters, or with ways the hash cannot take, is unusable. */
	for (int bad = 0; bad < 2; bad++) {
		cfg = fake_session_cfg();
		if (bad)
			cfg.table[SESSION].ways_or_levels = 3;
		else
			cfg.table[SESSION].counters = false;
		fd = fake_new(&cfg);
		CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
		CHECK(strstr(matcha_last_error(dev), "session table 4"));
		matcha_close(dev);
		fake_free(fd);
	}
}

void test_mem_session_discovery(void)
{
	struct fake_cfg cfg = fake_mem_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	struct matcha_table_info in;
	struct matcha_session s;
	if (!dev)
		return;
	CHECK_OK(dev, matcha_table_info(dev, SESSION, &in));
	CHECK(in.kind == MATCHA_KIND_MEM_SESSION && in.bucket_entries == 3 && in.size == 192 &&
	      !in.counters);
	/* INDEX is bucket << 4 | slot: slot 3 of a bucket of three, and bucket 64, are none. */
	CHECK(matcha_session_read(dev, SESSION, 3, &s) == MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "session_read: index 3"));
	CHECK(matcha_session_read(dev, SESSION, 64u << MATCHA_HW_MEMX_INDEX_SLOT_BITS, &s) ==
	      MATCHA_EINVAL);
	CHECK(matcha_session_stats(dev, 0, NULL) == MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "not session or mem_session"));
	matcha_close(dev);
	fake_free(fd);

	/* Buckets of no session or of more than a bucket holds, a size that is not a power of
	 * two of buckets, and entries of another size than docs/sessions.md's are refused. */
	for (int bad = 0; bad < 4; bad++) {
		cfg = fake_mem_session_cfg();
		if (bad == 0)
			cfg.table[SESSION].ways_or_levels = 0;
		else if (bad == 1)
			cfg.table[SESSION].ways_or_levels = MATCHA_HW_MEMX_MAX_SLOTS + 1;
		else if (bad == 2)
			cfg.table[SESSION].size = 48 * 3;
		else
			cfg.table[SESSION].extra = 20;
		fd = fake_new(&cfg);
		CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
		CHECK(strstr(matcha_last_error(dev), "mem_session table 4"));
		matcha_close(dev);
		fake_free(fd);
	}
}

/* The index of `key` in way `way` of the session table. */
static uint32_t slot_of(const uint8_t key[16], unsigned way)
{
	unsigned slots = SESSION_SIZE / SESSION_WAYS;
	return way * slots + matcha_session_index(key, 128, way, slots);
}

void test_session_read_find_delete(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	struct rng r = rng_for_test();
	uint8_t keys[40][16];
	uint32_t at[40];
	if (!dev)
		return;
	for (unsigned n = 0; n < 40; n++) {
		CHECK(matcha_session_key_ipv4(n % 3, n % 2 ? 6 : 17, 0x0A000000 + n,
					      (uint16_t)(1000 + n), 0xC0A80001, 443, keys[n],
					      NULL) == 0);
		/* Any candidate way, as the hardware's first free way would be. */
		at[n] = slot_of(keys[n], rng_below(&r, SESSION_WAYS));
		bool taken = false;
		for (unsigned m = 0; m < n; m++)
			taken |= at[m] == at[n];
		if (taken) {
			at[n] = UINT32_MAX;
			continue;
		}
		fake_session_put(fd, SESSION, at[n], keys[n], 1 + n % 6, n % 2, n * 3,
				 n + 1, (uint64_t)(n + 1) << 33);
	}
	for (unsigned n = 0; n < 40; n++) {
		uint32_t index;
		struct matcha_session s;
		if (at[n] == UINT32_MAX) {
			CHECK(matcha_session_find(dev, SESSION, keys[n], 128, &index) ==
			      MATCHA_ENOENT);
			continue;
		}
		CHECK_OK(dev, matcha_session_find(dev, SESSION, keys[n], 128, &index));
		CHECK(index == at[n]);
		CHECK_OK(dev, matcha_session_read(dev, SESSION, index, &s));
		CHECK_MSG(s.valid && s.state == 1 + n % 6 && s.initiator_high == (n % 2) &&
			  s.age == n * 3 && s.key_bits == 128 && !memcmp(s.key, keys[n], 16) &&
			  s.packets == n + 1 && s.bytes == (uint64_t)(n + 1) << 33,
			  "session %u at %u: state %u age %u packets %llu", n, (unsigned)index,
			  s.state, (unsigned)s.age, (unsigned long long)s.packets);
	}
	struct matcha_session_stats st;
	CHECK_OK(dev, matcha_session_stats(dev, SESSION, &st));
	unsigned present = 0;
	for (unsigned n = 0; n < 40; n++)
		present += at[n] != UINT32_MAX;
	CHECK(st.occupancy == present && st.learned == present);

	/* Delete every other session; the rest stay. */
	for (unsigned n = 0; n < 40; n += 2)
		if (at[n] != UINT32_MAX)
			CHECK_OK(dev, matcha_session_delete(dev, SESSION, keys[n], 128));
	for (unsigned n = 0; n < 40; n++) {
		uint32_t index;
		int rc = matcha_session_find(dev, SESSION, keys[n], 128, &index);
		CHECK(rc == (n % 2 == 0 || at[n] == UINT32_MAX ? MATCHA_ENOENT : 0));
	}
	CHECK(matcha_session_delete(dev, SESSION, keys[0], 128) == MATCHA_ENOENT);
	struct matcha_session s;
	CHECK(matcha_session_read(dev, SESSION, SESSION_SIZE, &s) == MATCHA_EINVAL);
	uint8_t wide[17] = { 1 };
	CHECK(matcha_session_find(dev, SESSION, wide, 136, &at[0]) == MATCHA_E2BIG);
	matcha_close(dev);
	fake_free(fd);
}

/* Between the driver's search and its WRITE, the session ages out and another one is
 * learned into its slot: the compare-and-delete leaves the newcomer alone. */
struct swap_ctx {
	uint32_t index;
	const uint8_t *newcomer;
	bool done;
};

static void swap_before_delete(struct fake_dev *fd, void *arg)
{
	struct swap_ctx *c = arg;
	struct fake_table *t = &fd->table[SESSION];
	/* The staged key is written just before the command: swap then. */
	if (!c->done && t->index == c->index && (t->staging.key[0] || t->staging.key[3])) {
		fake_session_put(fd, SESSION, c->index, c->newcomer, MATCHA_SESSION_UDP, false, 0,
				 1, 64);
		c->done = true;
	}
}

void test_session_delete_is_compare_and_delete(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	uint8_t old[16], newcomer[16];
	if (!dev)
		return;
	CHECK(matcha_session_key_ipv4(5, 17, 0x0A000001, 53, 0x0A000002, 5353, old, NULL) == 0);
	memcpy(newcomer, old, 16);
	newcomer[15] ^= 1;
	uint32_t index = slot_of(old, 2);
	fake_session_put(fd, SESSION, index, old, MATCHA_SESSION_UDP, false, 7, 3, 300);
	struct swap_ctx ctx = { .index = index, .newcomer = newcomer };
	fd->after_write = swap_before_delete;
	fd->after_write_arg = &ctx;
	CHECK_OK(dev, matcha_session_delete(dev, SESSION, old, 128));
	fd->after_write = NULL;
	CHECK(ctx.done && fd->table[SESSION].deletes == 0);
	struct matcha_session s;
	CHECK_OK(dev, matcha_session_read(dev, SESSION, index, &s));
	CHECK(s.valid && !memcmp(s.key, newcomer, 16));
	matcha_close(dev);
	fake_free(fd);
}

void test_session_settings_and_stats(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	if (!dev)
		return;
	for (unsigned s = MATCHA_SESSION_SYN_SENT; s < MATCHA_SESSION_STATES; s++)
		CHECK_OK(dev, matcha_session_set_timeout(dev, SESSION, s, 100 * s));
	for (unsigned s = MATCHA_SESSION_SYN_SENT; s < MATCHA_SESSION_STATES; s++) {
		uint32_t v;
		CHECK_OK(dev, matcha_session_get_timeout(dev, SESSION, s, &v));
		CHECK(v == 100 * s && fd->table[SESSION].timeout[s] == 100 * s);
	}
	CHECK(matcha_session_set_timeout(dev, SESSION, 0, 5) == MATCHA_EINVAL);
	CHECK(matcha_session_set_timeout(dev, SESSION, MATCHA_SESSION_STATES, 5) == MATCHA_EINVAL);
	CHECK(matcha_session_set_timeout(dev, SESSION, MATCHA_SESSION_UDP, 0) == MATCHA_EINVAL);
	CHECK(matcha_session_set_timeout(dev, SESSION, MATCHA_SESSION_UDP, 0x10000) ==
	      MATCHA_EINVAL);
	CHECK_OK(dev, matcha_session_set_tick(dev, SESSION, 250000));
	CHECK(fd->table[SESSION].tick == 250000);
	CHECK(matcha_session_set_tick(dev, SESSION, 0) == MATCHA_EINVAL);
	fd->table[SESSION].now = 0xBEEF;
	uint32_t now;
	CHECK_OK(dev, matcha_session_now(dev, SESSION, &now));
	CHECK(now == 0xBEEF);

	enum matcha_session_policy p;
	CHECK_OK(dev, matcha_session_get_policy(dev, SESSION, &p));
	CHECK(p == MATCHA_SESSION_PUNT);
	CHECK_OK(dev, matcha_session_set_policy(dev, SESSION, MATCHA_SESSION_DROP));
	CHECK_OK(dev, matcha_session_get_policy(dev, SESSION, &p));
	CHECK(p == MATCHA_SESSION_DROP && fd->table[SESSION].control == 1);
	CHECK(matcha_session_set_policy(dev, SESSION, (enum matcha_session_policy)2) ==
	      MATCHA_EINVAL);

	/* 64-bit statistics, each read low word first. */
	struct fake_table *t = &fd->table[SESSION];
	t->learned = 0x123456789ull;
	t->insert_failed = 0xA00000001ull;
	t->aged = 0xFFFFFFFFull;
	t->hits = 5;
	t->misses = 1ull << 40;
	struct matcha_session_stats st;
	CHECK_OK(dev, matcha_session_stats(dev, SESSION, &st));
	CHECK(st.learned == 0x123456789ull && st.insert_failed == 0xA00000001ull &&
	      st.aged == 0xFFFFFFFFull && st.hits == 5 && st.misses == 1ull << 40 &&
	      st.occupancy == 0);
	matcha_close(dev);
	fake_free(fd);
}

void test_session_flush(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	uint8_t key[16];
	if (!dev)
		return;
	for (unsigned n = 0; n < 10; n++) {
		CHECK(matcha_session_key_ipv4(0, 6, n, 1, 0xFFFFFFFF, 2, key, NULL) == 0);
		fake_session_put(fd, SESSION, slot_of(key, n % 4), key, MATCHA_SESSION_ESTABLISHED,
				 false, 0, 9, 900);
	}
	struct matcha_session_stats st;
	CHECK_OK(dev, matcha_session_stats(dev, SESSION, &st));
	CHECK(st.occupancy == 10);
	CHECK_OK(dev, matcha_session_flush(dev, SESSION));
	CHECK_OK(dev, matcha_session_stats(dev, SESSION, &st));
	CHECK(st.occupancy == 0);
	struct matcha_session s;
	CHECK_OK(dev, matcha_session_read(dev, SESSION, slot_of(key, 1), &s));
	CHECK(!s.valid && s.packets == 0);
	CHECK(matcha_session_flush(dev, 1) == MATCHA_EKIND);
	matcha_close(dev);
	fake_free(fd);
}

void test_session_adopted(void)
{
	/* A second handle adopts a device whose session table holds sessions and settings:
	 * adoption leaves the table, its counts and its registers exactly as they were, and the
	 * new handle reads them back. */
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd), *second;
	uint8_t keys[8][16];
	if (!first)
		return;
	for (unsigned n = 0; n < 8; n++) {
		CHECK(matcha_session_key_ipv4(7, 6, 0x0A000000 + n, 40000, 0xC0A80001, 443, keys[n],
					      NULL) == 0);
		fake_session_put(fd, SESSION, slot_of(keys[n], n % SESSION_WAYS), keys[n],
				 MATCHA_SESSION_ESTABLISHED, n % 2, n, 10 + n, 1000 * n);
	}
	CHECK_OK(first, matcha_session_set_timeout(first, SESSION, MATCHA_SESSION_UDP, 77));
	CHECK_OK(first, matcha_session_set_tick(first, SESSION, 1000));
	CHECK_OK(first, matcha_session_set_policy(first, SESSION, MATCHA_SESSION_DROP));
	const struct fake_table *t = &fd->table[SESSION];
	size_t nentries = t->nentries;
	struct fake_entry *entries = malloc(nentries * sizeof *entries);
	uint64_t *packets = malloc(nentries * sizeof *packets);
	CHECK(entries && packets);
	if (!entries || !packets) {
		free(entries);
		free(packets);
		return;
	}
	memcpy(entries, t->entries, nentries * sizeof *entries);
	memcpy(packets, t->packets, nentries * sizeof *packets);
	unsigned long commands = fd->commands;

	second = fake_open(fd);
	CHECK(second);
	CHECK_OK(second, matcha_tables_adopt(second));
	CHECK(!memcmp(entries, t->entries, nentries * sizeof *entries) &&
	      !memcmp(packets, t->packets, nentries * sizeof *packets) && t->deletes == 0);
	CHECK(t->control == 1 && t->tick == 1000 && t->timeout[MATCHA_SESSION_UDP] == 77);
	CHECK_MSG(fd->commands - commands > 0, "the other tables were not read");
	for (unsigned n = 0; n < 8; n++) {
		uint32_t index;
		struct matcha_session s;
		CHECK_OK(second, matcha_session_find(second, SESSION, keys[n], 128, &index));
		CHECK_OK(second, matcha_session_read(second, SESSION, index, &s));
		CHECK(s.valid && s.state == MATCHA_SESSION_ESTABLISHED && s.age == n &&
		      s.initiator_high == (n % 2) && s.packets == 10 + n && s.bytes == 1000 * n);
	}
	struct matcha_session_stats st;
	CHECK_OK(second, matcha_session_stats(second, SESSION, &st));
	CHECK(st.occupancy == 8);
	free(entries);
	free(packets);
	matcha_close(second);
	matcha_close(first);
	fake_free(fd);
}
