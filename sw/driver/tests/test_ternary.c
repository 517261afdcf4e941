/* SPDX-License-Identifier: Apache-2.0 */
/* Ternary tables: priority order in index order, shifts that never change an answer early. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"
#include "util.h"

#define TERNARY 3 /* the standard device's ternary table: 104-bit keys, 256 entries */
#define KEY_BITS 104
#define KEY_BYTES 13
#define KEY_WORDS 4
#define MISS (-1L)

struct rule {
	uint8_t value[KEY_BYTES], mask[KEY_BYTES];
	uint32_t priority, id, seq;
	bool present;
};

/* The lowest valid matching index wins (*index); the answer is the rule id in DATA[0]. */
static long hw_lookup_at(struct fake_dev *fd, const uint8_t *key, uint32_t *index)
{
	uint32_t k[KEY_WORDS];
	test_be_to_words(key, KEY_BYTES, k, KEY_WORDS);
	const struct fake_table *t = &fd->table[TERNARY];
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct fake_entry *e = &t->entries[i];
		bool match = e->flags & 1;
		for (unsigned w = 0; w < KEY_WORDS && match; w++)
			match = (k[w] & e->mask[w]) == e->key[w];
		if (match) {
			*index = i;
			return e->data[0];
		}
	}
	return MISS;
}

static long hw_lookup(struct fake_dev *fd, const uint8_t *key)
{
	uint32_t index;
	return hw_lookup_at(fd, key, &index);
}

/* Highest priority wins, then the earliest added. */
static long ref_lookup(const struct rule *rules, unsigned n, const uint8_t *key)
{
	const struct rule *best = NULL;
	for (unsigned i = 0; i < n; i++) {
		const struct rule *r = &rules[i];
		bool match = r->present;
		for (unsigned b = 0; b < KEY_BYTES && match; b++)
			match = (key[b] & r->mask[b]) == r->value[b];
		if (match && (!best || r->priority > best->priority ||
			      (r->priority == best->priority && r->seq < best->seq)))
			best = r;
	}
	return best ? (long)best->id : MISS;
}

static int add_rule(matcha_dev *dev, const struct rule *r)
{
	uint8_t data[4] = { (uint8_t)(r->id >> 24), (uint8_t)(r->id >> 16), (uint8_t)(r->id >> 8),
			    (uint8_t)r->id };
	return matcha_ternary_add(dev, TERNARY, r->value, r->mask, KEY_BITS, r->priority,
				  (uint8_t)r->id, data, 32);
}

void test_ternary_priority_order(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[TERNARY].size = 4;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rule r[5] = { 0 };
	const uint32_t prio[5] = { 10, 30, 20, 30, 5 };
	for (unsigned i = 0; i < 5; i++) {
		r[i].value[0] = (uint8_t)(i + 1);
		r[i].mask[0] = 0xFF;
		r[i].priority = prio[i];
		r[i].id = i + 1;
	}
	for (unsigned i = 0; i < 4; i++)
		CHECK_OK(dev, add_rule(dev, &r[i]));
	CHECK_RC(dev, add_rule(dev, &r[4]), MATCHA_ENOSPC);
	CHECK_RC(dev, add_rule(dev, &r[3]), MATCHA_EEXIST);
	/* 30 (first added), 30, 20, 10 */
	const uint32_t order[4] = { 2, 4, 3, 1 };
	struct matcha_entry e;
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(dev, matcha_ternary_read(dev, TERNARY, i, &e));
		CHECK(e.valid && e.action_id == order[i] && e.priority == prio[order[i] - 1]);
		CHECK(e.key[0] == order[i] && e.mask[0] == 0xFF && e.data[3] == order[i]);
	}
	CHECK_OK(dev, matcha_ternary_delete(dev, TERNARY, r[1].value, r[1].mask, KEY_BITS, 30));
	CHECK_OK(dev, matcha_ternary_read(dev, TERNARY, 0, &e));
	CHECK(e.valid && e.action_id == 4);
	CHECK_OK(dev, matcha_ternary_read(dev, TERNARY, 3, &e));
	CHECK(!e.valid);
	CHECK_RC(dev, matcha_ternary_delete(dev, TERNARY, r[1].value, r[1].mask, KEY_BITS, 30),
		 MATCHA_ENOENT);
	/* The same value and mask at another priority is another entry. */
	CHECK_OK(dev, matcha_ternary_delete(dev, TERNARY, r[0].value, r[0].mask, KEY_BITS, 10));
	r[0].priority = 40;
	CHECK_OK(dev, add_rule(dev, &r[0]));
	CHECK_OK(dev, matcha_ternary_read(dev, TERNARY, 0, &e));
	CHECK(e.valid && e.action_id == 1 && e.priority == 40);
	uint8_t value[KEY_BYTES] = { 0x0F }, mask[KEY_BYTES] = { 0xF0 };
	CHECK_RC(dev, matcha_ternary_add(dev, TERNARY, value, mask, KEY_BITS, 1, 1, NULL, 0),
		 MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "outside the mask"));
	CHECK_RC(dev, matcha_ternary_read(dev, TERNARY, 4, &e), MATCHA_EINVAL);
	matcha_close(dev);
	fake_free(fd);
}

/* Per rule id: the packets and bytes counted for it (with counters). */
struct counts {
	uint64_t packets, bytes;
};

struct mbb {
	uint8_t (*probe)[KEY_BYTES];
	long *before, *after;
	unsigned n;
	unsigned long last_commands, checks;
	struct counts *hits; /* with counters: every probe is counted where it hits */
	unsigned long lookups;
};

static void check_old_or_new(struct fake_dev *fd, void *arg)
{
	struct mbb *m = arg;
	if (fd->commands == m->last_commands)
		return; /* table memory changes only on a command */
	m->last_commands = fd->commands;
	m->checks++;
	for (unsigned i = 0; i < m->n; i++) {
		uint32_t index;
		long got = hw_lookup_at(fd, m->probe[i], &index);
		if (got != m->before[i] && got != m->after[i])
			check_fail(__FILE__, __LINE__, "after write %lu, probe %u answers %ld, "
				   "neither %ld (before) nor %ld (after)", fd->writes, i, got,
				   m->before[i], m->after[i]);
		if (m->hits && got != MISS) {
			unsigned len = 64 + (unsigned)((i + fd->commands) % 1000);
			fake_hit(fd, TERNARY, index, len);
			m->hits[got].packets++;
			m->hits[got].bytes += len;
			m->lookups++;
		}
	}
}

/* The driver's count of a rule is what the test counted for it. */
static bool counts_agree(matcha_dev *dev, const struct rule *r, const struct counts *want)
{
	uint64_t p = 0, b = 0;
	int rc = matcha_ternary_counters(dev, TERNARY, r->value, r->mask, KEY_BITS, r->priority,
					 &p, &b, 0);
	if (rc || p != want->packets || b != want->bytes) {
		check_fail(__FILE__, __LINE__, "rule %u: rc %d, %llu packets %llu bytes, counted "
			   "%llu and %llu: %s", (unsigned)r->id, rc, (unsigned long long)p,
			   (unsigned long long)b, (unsigned long long)want->packets,
			   (unsigned long long)want->bytes, matcha_last_error(dev));
		return false;
	}
	return true;
}

/* A key the rule matches: its value with random bits where the mask is clear. */
static void key_for(struct rng *rng, const struct rule *r, uint8_t *key)
{
	rng_bytes(rng, key, KEY_BYTES);
	for (unsigned b = 0; b < KEY_BYTES; b++)
		key[b] = (uint8_t)((key[b] & ~r->mask[b]) | r->value[b]);
}

/*
 * Random adds and deletes of overlapping rules; after every command each probe answers as
 * before the operation or as after it. With counters, each probe is also counted where it
 * hits after every command, and every rule's count is checked after every operation.
 */
static void ternary_mbb(bool counters)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[TERNARY].counters = counters;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng rng = rng_for_test();
	enum { OPS = 400, PROBES = 64 };
	/* With counters every shift is four commands, each followed by a round of lookups. */
	unsigned ops = counters ? 220 : OPS;
	struct rule *rules = calloc(OPS, sizeof *rules);
	uint8_t (*probe)[KEY_BYTES] = calloc(PROBES, KEY_BYTES);
	long before[PROBES], after[PROBES];
	struct counts *hits = calloc(OPS + 1, sizeof *hits);
	struct mbb m = { probe, before, after, PROBES, 0, 0, counters ? hits : NULL, 0 };
	unsigned n = 0, present = 0;
	for (unsigned op = 0; op < ops && check_failures() == 0; op++) {
		struct rule *target;
		bool deleting = present > 0 && rng_below(&rng, 3) == 0;
		if (deleting) {
			do
				target = &rules[rng_below(&rng, n)];
			while (!target->present);
		} else {
			/* Masks on the first two bytes only: rules overlap a lot. */
			target = &rules[n];
			target->seq = target->id = n + 1;
			n++;
			rng_bytes(&rng, target->mask, 2);
			rng_bytes(&rng, target->value, 2);
			for (unsigned b = 0; b < 2; b++)
				target->value[b] &= target->mask[b];
			target->priority = rng_below(&rng, 8);
		}
		for (unsigned i = 0; i < PROBES; i++) {
			if (i % 2 == 0 && n)
				key_for(&rng, &rules[rng_below(&rng, n)], probe[i]);
			else
				rng_bytes(&rng, probe[i], KEY_BYTES);
			before[i] = ref_lookup(rules, n, probe[i]);
		}
		target->present = !deleting;
		for (unsigned i = 0; i < PROBES; i++)
			after[i] = ref_lookup(rules, n, probe[i]);
		m.last_commands = fd->commands;
		fd->after_write = check_old_or_new;
		fd->after_write_arg = &m;
		int rc = deleting ? matcha_ternary_delete(dev, TERNARY, target->value, target->mask,
							  KEY_BITS, target->priority)
				  : add_rule(dev, target);
		fd->after_write = NULL;
		if (rc == MATCHA_EEXIST && !deleting) { /* the same value, mask and priority */
			target->present = false;
			continue;
		}
		CHECK_OK(dev, rc);
		present += deleting ? -1u : 1u;
		for (unsigned i = 0; i < PROBES; i++)
			CHECK_MSG(hw_lookup(fd, probe[i]) == after[i], "op %u probe %u", op, i);
		for (unsigned i = 0; i < n && counters; i++)
			if (rules[i].present && !counts_agree(dev, &rules[i], &hits[rules[i].id]))
				break;
	}
	printf("  %u rules added, %u present at the end, %lu checked states", n, present,
	       m.checks);
	if (counters)
		printf(", %lu hits counted", m.lookups);
	printf("\n");
	CHECK_MSG(fd->table[TERNARY].stale_writes == 0, "%lu entries written onto old counts",
		  fd->table[TERNARY].stale_writes);
	free(rules);
	free(probe);
	free(hits);
	matcha_close(dev);
	fake_free(fd);
}

void test_ternary_random_make_before_break(void)
{
	ternary_mbb(false);
}

void test_ternary_make_before_break_counters(void)
{
	ternary_mbb(true);
}

/* Rules keep their counts while inserts and deletes shift them by one index. */
void test_ternary_counters_follow_shifts(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[TERNARY].size = 8;
	cfg.table[TERNARY].counters = true;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct fake_table *t = &fd->table[TERNARY];
	enum { N = 7 };
	struct rule r[N] = { 0 };
	struct counts want[N + 1] = { 0 };
	const uint32_t prio[N] = { 50, 40, 30, 20, 10, 60, 35 };
	for (unsigned i = 0; i < N; i++) {
		r[i].value[0] = (uint8_t)(i + 1);
		r[i].mask[0] = 0xFF;
		r[i].priority = prio[i];
		r[i].id = i + 1;
	}
	/* Hits on every present rule (i+1 packets of 10*(i+1) bytes each) after each change. */
	unsigned present = 0;
	for (unsigned i = 0; i < N; i++) {
		CHECK_OK(dev, add_rule(dev, &r[i]));
		present++;
		for (uint32_t index = 0; index < present; index++) {
			uint32_t id = t->entries[index].data[0];
			for (unsigned h = 0; h < id; h++)
				fake_hit(fd, TERNARY, index, 10 * id);
			want[id].packets += id;
			want[id].bytes += 10 * id * id;
		}
	}
	/* 60 went in at the front and 35 in the middle: most rules moved, some twice. */
	CHECK(t->entries[0].data[0] == 6 && t->entries[3].data[0] == 7);
	for (unsigned i = 0; i < N; i++)
		CHECK(counts_agree(dev, &r[i], &want[r[i].id]));
	/* Deleting the front shifts everything up; the deleted rule's count goes with it. */
	CHECK_OK(dev, matcha_ternary_delete(dev, TERNARY, r[5].value, r[5].mask, KEY_BITS, 60));
	CHECK_RC(dev, matcha_ternary_counters(dev, TERNARY, r[5].value, r[5].mask, KEY_BITS, 60,
					      NULL, NULL, 0), MATCHA_ENOENT);
	CHECK(t->entries[0].data[0] == 1 && !(t->entries[6].flags & 1));
	for (unsigned i = 0; i < N; i++)
		if (i != 5)
			CHECK(counts_agree(dev, &r[i], &want[r[i].id]));
	/* Back in at the front: it starts from 0. */
	CHECK_OK(dev, add_rule(dev, &r[5]));
	want[6] = (struct counts){ 0, 0 };
	for (unsigned i = 0; i < N; i++)
		CHECK(counts_agree(dev, &r[i], &want[r[i].id]));
	CHECK(t->stale_writes == 0);
	matcha_close(dev);
	fake_free(fd);
}

/* A port range of a 16-bit key as prefix entries: exactly the ports in the range hit. */
void test_ternary_port_range(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[TERNARY].key_bits = 16;
	cfg.table[TERNARY].size = 64;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_prefix p[MATCHA_RANGE_MAX_PREFIXES];
	/* 1000-2999 at priority 2 over 1-65534 at priority 1. */
	int n1 = matcha_range_to_prefixes(1000, 2999, 16, p, MATCHA_RANGE_MAX_PREFIXES);
	CHECK(n1 > 0);
	for (int i = 0; i < n1; i++) {
		uint8_t v[2] = { (uint8_t)(p[i].value >> 8), (uint8_t)p[i].value };
		uint8_t m[2] = { (uint8_t)(p[i].mask >> 8), (uint8_t)p[i].mask };
		CHECK_OK(dev, matcha_ternary_add(dev, TERNARY, v, m, 16, 2, 2, NULL, 0));
	}
	int n2 = matcha_range_to_prefixes(1, 65534, 16, p, MATCHA_RANGE_MAX_PREFIXES);
	CHECK(n2 == 30);
	for (int i = 0; i < n2; i++) {
		uint8_t v[2] = { (uint8_t)(p[i].value >> 8), (uint8_t)p[i].value };
		uint8_t m[2] = { (uint8_t)(p[i].mask >> 8), (uint8_t)p[i].mask };
		CHECK_OK(dev, matcha_ternary_add(dev, TERNARY, v, m, 16, 1, 1, NULL, 0));
	}
	const struct fake_table *t = &fd->table[TERNARY];
	for (uint32_t port = 0; port < 65536; port++) {
		unsigned action = 0;
		for (unsigned i = 0; i < t->nentries; i++)
			if ((t->entries[i].flags & 1) && (port & t->entries[i].mask[0]) == t->entries[i].key[0]) {
				action = t->entries[i].flags >> 8;
				break;
			}
		unsigned want = port >= 1000 && port <= 2999 ? 2 : port >= 1 && port <= 65534 ? 1 : 0;
		CHECK_MSG(action == want, "port %u: action %u, want %u", port, action, want);
	}
	printf("  %d + %d entries\n", n1, n2);
	matcha_close(dev);
	fake_free(fd);
}
