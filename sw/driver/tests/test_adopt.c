/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha_tables_adopt(): a second handle on a device continues the first one's tables. The
 * oracle is the fake's memory read as the hardware would (slots by hash, the tree walked,
 * the lowest ternary index) and the prefix semantics written out by hand; the first
 * handle's shadow is never consulted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"
#include "util.h"

#define EXACT 0
#define LPM32 1
#define TERNARY 3
#define EXACT_KEY_BITS 44
#define EXACT_DATA_BITS 40
#define TERNARY_KEY_BITS 104
#define TERNARY_KEY_BYTES 13

static matcha_dev *adopted_open(struct fake_dev *fd)
{
	matcha_dev *dev = fake_open(fd);
	if (dev && matcha_tables_adopt(dev)) {
		check_fail(__FILE__, __LINE__, "matcha_tables_adopt: %s", matcha_last_error(dev));
		matcha_close(dev);
		return NULL;
	}
	return dev;
}

/* ------------------------------------------------------------------------- exact */

struct exact_key {
	uint8_t key[6], data[5];
	bool present;
};

void test_adopt_exact_moved_entries(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd);
	CHECK(first);
	struct rng r = rng_for_test();
	enum { SIZE = 1024, FILL = 900, MORE = 60 };
	struct exact_key *k = calloc(FILL + MORE, sizeof *k);
	unsigned long writes = 0;
	for (unsigned i = 0; i < FILL; i++) {
		random_value(&r, k[i].key, EXACT_KEY_BITS);
		random_value(&r, k[i].data, EXACT_DATA_BITS);
		unsigned long before = fd->commands;
		int rc = matcha_exact_add(first, EXACT, k[i].key, EXACT_KEY_BITS, 1, k[i].data,
					  EXACT_DATA_BITS);
		CHECK_MSG(rc == 0 || rc == MATCHA_EEXIST, "add %u: %s", i, matcha_last_error(first));
		k[i].present = rc == 0;
		writes += fd->commands - before;
	}
	unsigned present = 0;
	for (unsigned i = 0; i < FILL; i++)
		present += k[i].present;
	CHECK_MSG(writes > present, "no cuckoo move in %u adds: the test needs moved entries",
		  present);

	/* The second handle finds every key where the hardware has it. */
	matcha_dev *second = adopted_open(fd);
	CHECK(second);
	for (unsigned i = 0; i < FILL; i++) {
		if (!k[i].present)
			continue;
		uint32_t at;
		CHECK_OK(second, matcha_exact_lookup_sw(second, EXACT, k[i].key, EXACT_KEY_BITS, &at));
		CHECK_MSG(fake_exact_find(fd, EXACT, k[i].key, EXACT_KEY_BITS) == (long)at,
			  "key %u: adopted at %u", i, (unsigned)at);
		CHECK_RC(second, matcha_exact_add(second, EXACT, k[i].key, EXACT_KEY_BITS, 2,
						  k[i].data, EXACT_DATA_BITS), MATCHA_EEXIST);
	}
	/* It deletes some of the first handle's keys and adds new ones (moving the others). */
	for (unsigned i = 0; i < FILL; i += 3)
		if (k[i].present) {
			CHECK_OK(second, matcha_exact_delete(second, EXACT, k[i].key, EXACT_KEY_BITS));
			k[i].present = false;
		}
	for (unsigned i = FILL; i < FILL + MORE; i++) {
		random_value(&r, k[i].key, EXACT_KEY_BITS);
		random_value(&r, k[i].data, EXACT_DATA_BITS);
		int rc = matcha_exact_add(second, EXACT, k[i].key, EXACT_KEY_BITS, 3, k[i].data,
					  EXACT_DATA_BITS);
		CHECK_MSG(rc == 0 || rc == MATCHA_EEXIST, "add %u: %s", i, matcha_last_error(second));
		k[i].present = rc == 0;
	}
	unsigned valid = 0;
	for (unsigned i = 0; i < SIZE; i++)
		valid += fd->table[EXACT].entries[i].flags & 1;
	present = 0;
	for (unsigned i = 0; i < FILL + MORE; i++) {
		long at = fake_exact_find(fd, EXACT, k[i].key, EXACT_KEY_BITS);
		CHECK_MSG((at >= 0) == k[i].present, "key %u: %s in hardware", i,
			  at >= 0 ? "still" : "not");
		present += k[i].present;
		if (at < 0)
			continue;
		uint32_t data[2];
		test_be_to_words(k[i].data, 5, data, 2);
		CHECK_MSG(!memcmp(fd->table[EXACT].entries[at].data, data, sizeof data),
			  "key %u: other data", i);
	}
	CHECK_MSG(valid == present, "%u valid slots for %u keys", valid, present);
	free(k);
	matcha_close(first);
	matcha_close(second);
	fake_free(fd);
}

/* --------------------------------------------------------------------------- LPM */

/* The action data of the hardware's answer to a key (the fake's tree walked), or -1. */
static long lpm_answer(struct fake_dev *fd, unsigned a, unsigned b, unsigned c, unsigned d)
{
	struct fake_lpm_view v;
	uint8_t key[4];
	uint32_t result;
	fake_lpm_view(fd, LPM32, &v);
	if (matcha_lpm_walk_nodes(&v.img, ipv4(key, a, b, c, d), &result))
		return -1;
	const struct fake_entry *e = &fd->table[LPM32].entries[result];
	return e->flags & 1 ? (long)e->data[0] : -1;
}

/* Whether a handle's shadow answers as the fake's memory, result index for result index,
 * at every key whose top 16 bits are a.b for a in 0..255 and a few b, and their ends. */
static bool same_image(matcha_dev *dev, struct fake_dev *fd)
{
	struct fake_lpm_view v;
	fake_lpm_view(fd, LPM32, &v);
	static const unsigned bs[] = { 0, 1, 2, 16, 17, 168 };
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < sizeof bs / sizeof *bs; b++)
			for (unsigned c = 0; c < 256; c += 85) {
				uint8_t key[4];
				uint32_t hw = UINT32_MAX, sw = UINT32_MAX;
				ipv4(key, a, bs[b], c, c);
				int hw_rc = matcha_lpm_walk_nodes(&v.img, key, &hw);
				int sw_rc = matcha_lpm_lookup_sw(dev, LPM32, key, &sw);
				if ((hw_rc == 0) != (sw_rc == 0) || hw != sw)
					return false;
			}
	return true;
}

/* Bits [at, at + n) (n <= 32) of a node's words. */
static uint32_t node_field(const uint32_t *w, unsigned at, unsigned n)
{
	uint32_t v = 0;
	for (unsigned b = 0; b < n; b++)
		v |= (w[(at + b) / 32] >> (at + b) % 32 & 1) << b;
	return v;
}

static void set_node_field(uint32_t *w, unsigned at, unsigned n, uint32_t v)
{
	for (unsigned b = 0; b < n; b++) {
		uint32_t m = 1u << (at + b) % 32;
		w[(at + b) / 32] = (v >> b & 1) ? w[(at + b) / 32] | m : w[(at + b) / 32] & ~m;
	}
}

/* Where the walk for a 32-bit key takes its slot at `level` of LPM32 in the fake's memory:
 * the node's words in *words, the slot's first bit returned. */
static unsigned walk_slot(struct fake_dev *fd, uint32_t key, unsigned level, uint32_t **words)
{
	struct fake_table *t = &fd->table[LPM32];
	unsigned shift = MATCHA_HW_LPM_POINTER_SHIFT + t->cfg.pointer_bits, sb = shift + 32, at = 0;
	uint32_t node = 0;
	for (unsigned l = 0; l <= level; l++) {
		*words = t->level[l] + (size_t)node * FAKE_NODE_WORDS;
		at = 0;
		for (unsigned j = 1; j < t->cfg.extra; j++)
			if ((node_field(*words, j * sb, 1) & MATCHA_HW_LPM_SLOT_VALID) &&
			    node_field(*words, j * sb + shift, 32) <= key)
				at = j * sb;
		node = node_field(*words, at + MATCHA_HW_LPM_POINTER_SHIFT, t->cfg.pointer_bits);
	}
	return at;
}

void test_adopt_lpm_hidden_prefixes(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd);
	CHECK(first);
	/* 10.0.0.0/7 is hidden: 10/8 and 11/8 cover all of it. */
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 0, 0, 0, 7, 1));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 0, 0, 0, 8, 2));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 11, 0, 0, 0, 8, 3));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 1, 0, 0, 16, 4));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 1, 2, 0, 24, 5));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 1, 2, 128, 25, 6));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 0, 0, 0, 0, 0, 7));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 192, 168, 1, 7, 32, 8));
	/* A delete before the second handle comes: node numbers are no longer in add order. */
	CHECK_OK(first, ipv4_route_add(first, LPM32, 172, 16, 0, 0, 12, 9));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 172, 16, 5, 0, 24, 10));
	CHECK_OK(first, ipv4_route_delete(first, LPM32, 10, 1, 0, 0, 16));
	CHECK(lpm_answer(fd, 10, 9, 9, 9) == 2 && lpm_answer(fd, 11, 9, 9, 9) == 3);

	matcha_dev *second = adopted_open(fd);
	CHECK(second);
	CHECK(same_image(second, fd));
	uint8_t p[4];
	struct matcha_entry e;
	uint32_t result;
	CHECK_OK(second, matcha_lpm_read(second, LPM32, ipv4(p, 10, 0, 0, 0), 7, &result, &e));
	CHECK(e.valid && e.data[3] == 1);
	CHECK_RC(second, ipv4_route_add(second, LPM32, 10, 0, 0, 0, 7, 11), MATCHA_EEXIST);
	CHECK_RC(second, ipv4_route_add(second, LPM32, 10, 1, 0, 0, 16, 11), 0);
	CHECK(lpm_answer(fd, 10, 1, 9, 9) == 11 && lpm_answer(fd, 10, 1, 2, 3) == 5);

	/* The hidden prefix comes back when the second handle deletes what covered it. */
	CHECK_OK(second, ipv4_route_delete(second, LPM32, 10, 0, 0, 0, 8));
	CHECK_OK(second, ipv4_route_delete(second, LPM32, 11, 0, 0, 0, 8));
	CHECK(lpm_answer(fd, 10, 9, 9, 9) == 1 && lpm_answer(fd, 11, 9, 9, 9) == 1);
	CHECK(lpm_answer(fd, 10, 1, 2, 200) == 6 && lpm_answer(fd, 12, 0, 0, 1) == 7);
	CHECK(lpm_answer(fd, 172, 16, 5, 1) == 10 && lpm_answer(fd, 172, 17, 0, 1) == 9);
	CHECK(lpm_answer(fd, 192, 168, 1, 7) == 8 && lpm_answer(fd, 192, 168, 1, 8) == 7);
	CHECK_OK(second, ipv4_route_delete(second, LPM32, 10, 0, 0, 0, 7));
	CHECK(lpm_answer(fd, 10, 9, 9, 9) == 7);
	CHECK_OK(second, ipv4_route_delete(second, LPM32, 172, 16, 5, 0, 24));
	CHECK(lpm_answer(fd, 172, 16, 5, 1) == 9);
	/* Deletes freed what the first handle's nodes held: the image is its own again. */
	CHECK(same_image(second, fd));
	matcha_dev *third = adopted_open(fd);
	CHECK(third);
	CHECK(same_image(third, fd));
	matcha_close(first);
	matcha_close(second);
	matcha_close(third);
	fake_free(fd);
}

/* ----------------------------------------------------------------------- ternary */

/* A rule on the last key byte: value v, mask 0xFF, so each rule is told apart. */
static int rule(matcha_dev *dev, bool add, uint8_t v, uint32_t priority)
{
	uint8_t value[TERNARY_KEY_BYTES] = { 0 }, mask[TERNARY_KEY_BYTES] = { 0 };
	uint8_t data[4] = { 0, 0, 0, v };
	value[TERNARY_KEY_BYTES - 1] = v;
	mask[TERNARY_KEY_BYTES - 1] = 0xFF;
	if (!add)
		return matcha_ternary_delete(dev, TERNARY, value, mask, TERNARY_KEY_BITS, priority);
	return matcha_ternary_add(dev, TERNARY, value, mask, TERNARY_KEY_BITS, priority, 1, data,
				  32);
}

/* Whether the fake holds exactly these rules (value byte, priority) from index 0 on. */
static bool ternary_order(struct fake_dev *fd, const uint8_t *v, const uint32_t *prio,
			  unsigned n)
{
	const struct fake_table *t = &fd->table[TERNARY];
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct fake_entry *e = &t->entries[i];
		if ((e->flags & 1) != (i < n))
			return false;
		if (i < n && (e->key[0] != v[i] || e->mask[0] != 0xFF || e->priority != prio[i] ||
			      e->data[0] != v[i]))
			return false;
	}
	return true;
}

void test_adopt_ternary_priorities_and_ties(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd);
	CHECK(first);
	CHECK_OK(first, rule(first, true, 0xA, 5));
	CHECK_OK(first, rule(first, true, 0xB, 10));
	CHECK_OK(first, rule(first, true, 0xC, 5)); /* ties with A, added after it */
	CHECK_OK(first, rule(first, true, 0xD, 7));
	static const uint8_t v1[] = { 0xB, 0xD, 0xA, 0xC };
	static const uint32_t p1[] = { 10, 7, 5, 5 };
	CHECK(ternary_order(fd, v1, p1, 4));

	matcha_dev *second = adopted_open(fd);
	CHECK(second);
	for (unsigned i = 0; i < 4; i++) {
		uint8_t value[TERNARY_KEY_BYTES] = { 0 }, mask[TERNARY_KEY_BYTES] = { 0 };
		uint32_t at;
		value[TERNARY_KEY_BYTES - 1] = v1[i];
		mask[TERNARY_KEY_BYTES - 1] = 0xFF;
		CHECK_OK(second, matcha_ternary_lookup_sw(second, TERNARY, value, mask,
							  TERNARY_KEY_BITS, p1[i], &at));
		CHECK(at == i);
	}
	CHECK_RC(second, rule(second, true, 0xA, 5), MATCHA_EEXIST);
	/* A new tie goes after the old ones; a priority between goes between. */
	CHECK_OK(second, rule(second, true, 0xE, 5));
	CHECK_OK(second, rule(second, true, 0xF, 6));
	static const uint8_t v2[] = { 0xB, 0xD, 0xF, 0xA, 0xC, 0xE };
	static const uint32_t p2[] = { 10, 7, 6, 5, 5, 5 };
	CHECK(ternary_order(fd, v2, p2, 6));
	CHECK_OK(second, rule(second, false, 0xB, 10));
	CHECK_OK(second, rule(second, false, 0xA, 5));
	static const uint8_t v3[] = { 0xD, 0xF, 0xC, 0xE };
	static const uint32_t p3[] = { 7, 6, 5, 5 };
	CHECK(ternary_order(fd, v3, p3, 4));
	CHECK_RC(second, rule(second, false, 0xA, 5), MATCHA_ENOENT);
	matcha_close(first);
	matcha_close(second);
	fake_free(fd);
}

/* ------------------------------------------------------------- refused content */

/* Adoption must refuse with `rc` and a message containing `want`; the table's calls fail
 * until a clear, the other tables are adopted. */
static bool refused(matcha_dev *dev, int rc, const char *want)
{
	const char *msg = matcha_last_error(dev);
	if (rc == MATCHA_EHW && strstr(msg, want))
		return true;
	check_fail(__FILE__, __LINE__, "adopt returned %d: \"%s\", want MATCHA_EHW and \"%s\"",
		   rc, msg, want);
	return false;
}

/* Adoption of `fd` on a new handle must be refused (see refused()). */
static void expect_refused(struct fake_dev *fd, const char *want)
{
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	refused(dev, matcha_tables_adopt(dev), want);
	matcha_close(dev);
}

void test_adopt_refuses_inconsistent_tables(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd);
	CHECK(first);
	uint8_t key[6] = { 0, 0, 0, 0, 0x12, 0x34 }, data[5] = { 0 };
	CHECK_OK(first, matcha_exact_add(first, EXACT, key, EXACT_KEY_BITS, 1, data,
					 EXACT_DATA_BITS));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 0, 0, 0, 8, 1));
	CHECK_OK(first, rule(first, true, 1, 3));

	/* The key copied into its slot of another way: a duplicate. */
	long at = fake_exact_find(fd, EXACT, key, EXACT_KEY_BITS);
	CHECK(at >= 0 && at < 256);
	uint32_t dup = 256 + matcha_exact_index(key, EXACT_KEY_BITS, 1, 256);
	fd->table[EXACT].entries[dup] = fd->table[EXACT].entries[at];
	matcha_dev *second = fake_open(fd);
	CHECK(second);
	CHECK(refused(second, matcha_tables_adopt(second), "exact table 0: slots"));
	CHECK(strstr(matcha_last_error(second), "hold the same key"));
	CHECK_RC(second, matcha_exact_add(second, EXACT, key, EXACT_KEY_BITS, 1, data,
					  EXACT_DATA_BITS), MATCHA_EHW);
	CHECK(strstr(matcha_last_error(second), "matcha_table_clear() starts it over"));
	uint8_t p[4];
	struct matcha_entry e;
	CHECK_OK(second, matcha_lpm_read(second, LPM32, ipv4(p, 10, 0, 0, 0), 8, NULL, &e));
	CHECK_OK(second, matcha_table_clear(second, EXACT));
	CHECK_OK(second, matcha_exact_add(second, EXACT, key, EXACT_KEY_BITS, 1, data,
					  EXACT_DATA_BITS));
	matcha_close(second);

	/* A key in a slot its hash does not name. */
	at = fake_exact_find(fd, EXACT, key, EXACT_KEY_BITS);
	CHECK(at >= 0);
	uint32_t wrong = ((uint32_t)at + 1) % 256;
	fd->table[EXACT].entries[wrong] = fd->table[EXACT].entries[at];
	memset(&fd->table[EXACT].entries[at], 0, sizeof fd->table[EXACT].entries[at]);
	expect_refused(fd, "whose hash puts it in slot");
	memset(&fd->table[EXACT].entries[wrong], 0, sizeof fd->table[EXACT].entries[wrong]);

	/* A ternary gap, then a priority that rises. */
	fd->table[TERNARY].entries[2] = fd->table[TERNARY].entries[0];
	fd->table[TERNARY].entries[2].key[0] = 2;
	expect_refused(fd, "ternary table 3: entry 2 is valid but entry 1 before it is not");
	fd->table[TERNARY].entries[1] = fd->table[TERNARY].entries[2];
	fd->table[TERNARY].entries[1].priority = 4;
	memset(&fd->table[TERNARY].entries[2], 0, sizeof fd->table[TERNARY].entries[2]);
	expect_refused(fd, "ternary table 3: entry 1 has priority 4, above the 3 of entry 0");
	memset(&fd->table[TERNARY].entries[1], 0, sizeof fd->table[TERNARY].entries[1]);

	/* A tree that does not match its prefix store: 10/8's slot in the root (a leaf: the
	 * tree is three boundaries) lost its result. Slot 1 starts at bit 17 + 32 = 49. */
	const struct fake_table *lpm = &fd->table[LPM32];
	uint32_t *word = &fd->table[LPM32].level[lpm->cfg.ways_or_levels - 1][1];
	uint32_t saved = *word;
	*word &= ~((uint32_t)MATCHA_HW_LPM_SLOT_HAS_RESULT << (49 - 32));
	second = fake_open(fd);
	CHECK(second);
	CHECK(refused(second, matcha_tables_adopt(second), "LPM table 1: the interval from "
		      "0x0a000000 answers result -1, the prefix store gives"));
	CHECK_RC(second, matcha_lpm_read(second, LPM32, ipv4(p, 10, 0, 0, 0), 8, NULL, &e),
		 MATCHA_EHW);
	matcha_close(second);
	*word = saved;
	/* A stored prefix the tree does not hold: 11/8 where the tree has 10/8's boundaries. */
	for (unsigned r = 0; r < fd->table[LPM32].nentries; r++)
		if (fd->table[LPM32].entries[r].flags & 1)
			fd->table[LPM32].entries[r].key[0] = 0x0B000000;
	expect_refused(fd, "LPM table 1: the tree has the boundary 0x0a000000, where no prefix of "
		       "the prefix store starts or ends");
	matcha_close(first);
	fake_free(fd);

	/* Hardware without a prefix store: prefixes in use cannot be adopted. */
	cfg.table[LPM32].prefix_store = false;
	fd = fake_new(&cfg);
	first = fake_open(fd);
	CHECK(first);
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 0, 0, 0, 8, 1));
	expect_refused(fd, "LPM table 1: result 0 is in use but the hardware keeps no prefix "
		       "store");
	CHECK_OK(first, ipv4_route_delete(first, LPM32, 10, 0, 0, 0, 8));
	second = adopted_open(fd);
	CHECK(second);
	matcha_close(second);
	matcha_close(first);
	fake_free(fd);
}

/* The result of an IPv4 prefix in a handle's table, in *r. */
static bool result_of(matcha_dev *dev, unsigned a, unsigned b, unsigned len, uint32_t *r)
{
	uint8_t p[4];
	struct matcha_entry e;
	if (!matcha_lpm_read(dev, LPM32, ipv4(p, a, b, 0, 0), len, r, &e))
		return true;
	check_fail(__FILE__, __LINE__, "lpm_read %u.%u/%u: %s", a, b, len, matcha_last_error(dev));
	return false;
}

void test_adopt_refuses_corrupt_trees_and_rules(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd);
	CHECK(first);
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 0, 0, 0, 8, 1));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 10, 1, 0, 0, 16, 2));
	CHECK_OK(first, ipv4_route_add(first, LPM32, 11, 1, 0, 0, 16, 3));
	CHECK_OK(first, rule(first, true, 1, 3));
	CHECK_OK(first, rule(first, true, 2, 3));
	uint32_t r8, r10_16, r11_16;
	CHECK(result_of(first, 10, 0, 8, &r8) && result_of(first, 10, 1, 16, &r10_16) &&
	      result_of(first, 11, 1, 16, &r11_16));
	struct fake_table *lpm = &fd->table[LPM32], *ternary = &fd->table[TERNARY];
	unsigned leaf = lpm->cfg.ways_or_levels - 1, pb = lpm->cfg.pointer_bits;
	unsigned shift = MATCHA_HW_LPM_POINTER_SHIFT + pb, sb = shift + 32;
	char want[200];
	uint32_t *w, saved;

	/* The leaf slot of 10.1.0.0 answering 10/8's result instead of 10.1/16's. */
	unsigned at = walk_slot(fd, 0x0a010000, leaf, &w);
	saved = node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb);
	set_node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb, r8);
	snprintf(want, sizeof want, "LPM table 1: the interval from 0x0a010000 answers result %u, "
		 "the prefix store gives %u", (unsigned)r8, (unsigned)r10_16);
	expect_refused(fd, want);
	set_node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb, saved);
	/* A boundary no prefix starts or ends at (10.1.0.0 moved to 10.1.0.1). */
	set_node_field(w, at + shift, 32, 0x0a010001);
	expect_refused(fd, "LPM table 1: the tree has the boundary 0x0a010001, where no prefix of "
		       "the prefix store starts or ends");
	set_node_field(w, at + shift, 32, 0x0a010000);
	/* A key out of order in its node: the next slot's key below this one. */
	if (node_field(w, at + sb, 1) & MATCHA_HW_LPM_SLOT_VALID) {
		saved = node_field(w, at + sb + shift, 32);
		set_node_field(w, at + sb + shift, 32, 0x0a000000);
		expect_refused(fd, "has the key 0x0a000000, out of order");
		set_node_field(w, at + sb + shift, 32, saved);
	}
	/* The level above: a child pointer past the level's nodes. */
	at = walk_slot(fd, 0x0a010000, leaf - 1, &w);
	saved = node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb);
	set_node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb, 30000);
	snprintf(want, sizeof want, "points at node 30000 of level %u, beyond its %u nodes", leaf,
		 lpm->cfg.level_nodes[leaf]);
	expect_refused(fd, want);
	set_node_field(w, at + MATCHA_HW_LPM_POINTER_SHIFT, pb, saved);

	/* Prefix store entries no add writes: too long, bits past the length, one prefix twice. */
	lpm->entries[r8].priority = 33;
	snprintf(want, sizeof want, "LPM table 1: result %u has the prefix length 33, longer than "
		 "the key", (unsigned)r8);
	expect_refused(fd, want);
	lpm->entries[r8].priority = 8;
	lpm->entries[r8].key[0] |= 1;
	snprintf(want, sizeof want, "LPM table 1: result %u has the prefix length 8, but bits set "
		 "beyond it", (unsigned)r8);
	expect_refused(fd, want);
	lpm->entries[r8].key[0] &= ~1u;
	uint32_t saved_key = lpm->entries[r11_16].key[0];
	lpm->entries[r11_16].key[0] = lpm->entries[r10_16].key[0];
	snprintf(want, sizeof want, "LPM table 1: results %u and %u hold the same /16 prefix",
		 (unsigned)(r10_16 < r11_16 ? r10_16 : r11_16),
		 (unsigned)(r10_16 < r11_16 ? r11_16 : r10_16));
	expect_refused(fd, want);
	lpm->entries[r11_16].key[0] = saved_key;

	/* A ternary value bit where its mask is 0, then one rule at two indexes. */
	ternary->entries[0].key[1] = 1;
	expect_refused(fd, "ternary table 3: entry 0 has value bits outside its mask (word 1: "
		       "value 0x00000001, mask 0x00000000)");
	ternary->entries[0].key[1] = 0;
	struct fake_entry saved_rule = ternary->entries[1];
	ternary->entries[1] = ternary->entries[0];
	expect_refused(fd, "ternary table 3: entries 0 and 1 hold the same value, mask and "
		       "priority");
	ternary->entries[1] = saved_rule;

	/* Restored, the same memory is adopted. */
	matcha_dev *second = adopted_open(fd);
	CHECK(second && same_image(second, fd));
	matcha_close(second);
	matcha_close(first);
	fake_free(fd);
}
