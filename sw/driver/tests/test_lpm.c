/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LPM tables against a brute-force longest-prefix match over the same prefix set, on the
 * B+tree in the fake device's memory as the hardware would walk it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>

#include "check.h"
#include "fake_dev.h"
#include "util.h"

#define LPM32 1
#define LPM128 2
#define MAX_BYTES 16
#define MISS (-1L)
#define BAD_IMAGE (-2L)
#define INVALID_RESULT (-3L)

struct route {
	uint8_t prefix[MAX_BYTES];
	unsigned len;
	uint32_t id; /* the action data: unique per add, so answers name their route */
	bool present;
};

struct ref {
	unsigned key_bits, key_bytes, data_bits;
	struct route *r;
	unsigned n, cap;
	uint32_t next_id;
};

static void ref_init(struct ref *ref, const struct fake_cfg *cfg, unsigned table)
{
	memset(ref, 0, sizeof *ref);
	ref->key_bits = cfg->table[table].key_bits;
	ref->key_bytes = (ref->key_bits + 7) / 8;
	ref->data_bits = cfg->table[table].data_bits;
	ref->cap = 4096;
	ref->r = calloc(ref->cap, sizeof *ref->r);
	ref->next_id = 1;
}

/* Bit i (0 = most significant) of a key of the reference's width. */
static unsigned key_bit(const struct ref *ref, const uint8_t *k, unsigned i)
{
	unsigned b = ref->key_bytes * 8 - ref->key_bits + i;
	return k[b / 8] >> (7 - b % 8) & 1;
}

static bool covers(const struct ref *ref, const struct route *rt, const uint8_t *key)
{
	for (unsigned i = 0; i < rt->len; i++)
		if (key_bit(ref, rt->prefix, i) != key_bit(ref, key, i))
			return false;
	return true;
}

/* The id of the longest present prefix covering the key, or MISS. */
static long ref_lookup(const struct ref *ref, const uint8_t *key)
{
	long best = MISS;
	unsigned best_len = 0;
	for (unsigned i = 0; i < ref->n; i++) {
		const struct route *rt = &ref->r[i];
		if (rt->present && (best == MISS || rt->len > best_len) && covers(ref, rt, key)) {
			best = rt->id;
			best_len = rt->len;
		}
	}
	return best;
}

/* The hardware's answer from the fake's memory: the id in the result's data (the result
 * index in *result), or MISS. */
static long hw_lookup_at(struct fake_dev *fd, unsigned table, const uint8_t *key,
			 uint32_t *result)
{
	struct fake_lpm_view v;
	fake_lpm_view(fd, table, &v);
	int rc = matcha_lpm_walk_nodes(&v.img, key, result);
	if (rc == MATCHA_ENOENT)
		return MISS;
	if (rc)
		return BAD_IMAGE;
	const struct fake_entry *e = &fd->table[table].entries[*result];
	return e->flags & 1 ? (long)e->data[0] : INVALID_RESULT;
}

static long hw_lookup(struct fake_dev *fd, unsigned table, const uint8_t *key)
{
	uint32_t r;
	return hw_lookup_at(fd, table, key, &r);
}

static void data_of(const struct ref *ref, uint32_t id, uint8_t *data)
{
	unsigned n = (ref->data_bits + 7) / 8;
	memset(data, 0, n);
	for (unsigned i = 0; i < 4 && i < n; i++)
		data[n - 1 - i] = (uint8_t)(id >> 8 * i);
}

static int drv_add(matcha_dev *dev, unsigned table, struct ref *ref, struct route *rt)
{
	uint8_t data[MATCHA_MAX_DATA_BYTES];
	data_of(ref, rt->id, data);
	return matcha_lpm_add(dev, table, rt->prefix, rt->len, (uint8_t)rt->id, data,
			      ref->data_bits);
}

/* Sets all key bits from `len` on to `ones`. */
static void fill_after(const struct ref *ref, uint8_t *k, unsigned len, bool ones)
{
	for (unsigned i = len; i < ref->key_bits; i++) {
		unsigned b = ref->key_bytes * 8 - ref->key_bits + i;
		if (ones)
			k[b / 8] |= (uint8_t)(0x80 >> b % 8);
		else
			k[b / 8] &= (uint8_t)~(0x80 >> b % 8);
	}
}

static void randomize_after(struct rng *r, const struct ref *ref, uint8_t *k, unsigned len)
{
	for (unsigned i = len; i < ref->key_bits; i++) {
		unsigned b = ref->key_bytes * 8 - ref->key_bits + i;
		if (rng_next(r) & 1)
			k[b / 8] ^= (uint8_t)(0x80 >> b % 8);
	}
}

/* k += delta (+1 or -1) modulo 2^key_bits. */
static void step_key(const struct ref *ref, uint8_t *k, int delta)
{
	for (unsigned i = ref->key_bits; i-- > 0;) {
		unsigned b = ref->key_bytes * 8 - ref->key_bits + i;
		uint8_t m = (uint8_t)(0x80 >> b % 8);
		bool was = k[b / 8] & m;
		k[b / 8] ^= m;
		if (delta > 0 ? !was : was)
			break;
	}
}

/* Keys at and around a prefix's range: its ends, inside, and just outside. */
static unsigned probes_around(struct rng *r, const struct ref *ref, const struct route *rt,
			      uint8_t (*out)[MAX_BYTES])
{
	unsigned n = 0;
	memcpy(out[n], rt->prefix, MAX_BYTES);
	fill_after(ref, out[n], rt->len, false);
	memcpy(out[n + 1], out[n], MAX_BYTES);
	step_key(ref, out[n + 1], -1);
	n += 2;
	memcpy(out[n], rt->prefix, MAX_BYTES);
	fill_after(ref, out[n], rt->len, true);
	memcpy(out[n + 1], out[n], MAX_BYTES);
	step_key(ref, out[n + 1], +1);
	n += 2;
	for (unsigned i = 0; i < 3; i++, n++) {
		memcpy(out[n], rt->prefix, MAX_BYTES);
		randomize_after(r, ref, out[n], rt->len);
	}
	return n;
}

#define MAX_PROBES 512

/* Probe keys for an operation on `changed`: around it, around other routes, random. */
static unsigned make_probes(struct rng *r, const struct ref *ref, const struct route *changed,
			    uint8_t (*out)[MAX_BYTES])
{
	unsigned n = probes_around(r, ref, changed, out);
	for (unsigned i = 0; i < 40 && ref->n; i++) {
		const struct route *rt = &ref->r[rng_below(r, ref->n)];
		if (rt->present)
			n += probes_around(r, ref, rt, out + n);
	}
	for (unsigned i = 0; i < 24; i++, n++) {
		memset(out[n], 0, MAX_BYTES);
		random_value(r, out[n], ref->key_bits);
	}
	return n;
}

/* A random new prefix: half of them inside an existing one (nesting and overlap). */
static void random_route(struct rng *r, struct ref *ref, struct route *rt)
{
	memset(rt, 0, sizeof *rt);
	unsigned pick = ref->n ? rng_below(r, ref->n) : 0;
	unsigned w = ref->key_bits;
	if (ref->n && ref->r[pick].present && rng_below(r, 2)) {
		const struct route *parent = &ref->r[pick];
		memcpy(rt->prefix, parent->prefix, MAX_BYTES);
		rt->len = parent->len + rng_below(r, w - parent->len + 1);
		randomize_after(r, ref, rt->prefix, parent->len);
	} else {
		random_value(r, rt->prefix, w);
		unsigned pick_len = rng_below(r, 10);
		rt->len = pick_len == 0 ? 0 : pick_len == 1 ? w : rng_below(r, w + 1);
	}
	fill_after(ref, rt->prefix, rt->len, false);
	rt->id = ref->next_id++;
	rt->present = false;
}

static struct route *ref_find(struct ref *ref, const struct route *rt)
{
	for (unsigned i = 0; i < ref->n; i++)
		if (ref->r[i].present && ref->r[i].len == rt->len &&
		    !memcmp(ref->r[i].prefix, rt->prefix, MAX_BYTES))
			return &ref->r[i];
	return NULL;
}

/* Per route id: the packets and bytes counted for it (tables with counters). */
struct counts {
	uint64_t packets, bytes;
};

/*
 * The after-every-write check: each probe answers as before the operation or as after.
 * With `hits`, each probe is also counted where it hits, after every command.
 */
struct mbb {
	unsigned table, n;
	uint8_t (*probe)[MAX_BYTES];
	long *before, *after;
	unsigned long last_commands, checks;
	struct counts *hits;
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
		uint32_t r;
		long got = hw_lookup_at(fd, m->table, m->probe[i], &r);
		if (got != m->before[i] && got != m->after[i])
			check_fail(__FILE__, __LINE__, "after write %lu, probe %u answers %ld, "
				   "neither %ld (before) nor %ld (after)", fd->writes, i, got,
				   m->before[i], m->after[i]);
		if (m->hits && got >= 0) {
			unsigned len = 64 + (unsigned)((i + fd->commands) % 1000);
			fake_hit(fd, m->table, r, len);
			m->hits[got].packets++;
			m->hits[got].bytes += len;
			m->lookups++;
		}
	}
}

/* The driver's count of a route is what the test counted for it. */
static bool counts_agree(matcha_dev *dev, unsigned table, const struct route *rt,
			 const struct counts *want)
{
	uint64_t p = 0, b = 0;
	int rc = matcha_lpm_counters(dev, table, rt->prefix, rt->len, &p, &b, 0);
	if (rc || p != want->packets || b != want->bytes) {
		check_fail(__FILE__, __LINE__, "/%u route %u: rc %d, %llu packets %llu bytes, "
			   "counted %llu and %llu: %s", rt->len, (unsigned)rt->id, rc,
			   (unsigned long long)p, (unsigned long long)b,
			   (unsigned long long)want->packets, (unsigned long long)want->bytes,
			   matcha_last_error(dev));
		return false;
	}
	return true;
}

/* Slots of a node in the fake's memory: slot 0, and the valid ones after it. */
static unsigned node_slots(const struct fake_table *t, unsigned level, uint32_t node)
{
	const uint32_t *w = t->level[level] + (size_t)node * FAKE_NODE_WORDS;
	unsigned sb = MATCHA_HW_LPM_POINTER_SHIFT + t->cfg.pointer_bits + t->cfg.key_bits, n = 1;
	while (n < t->cfg.extra && (w[n * sb / 32] >> (n * sb % 32) & MATCHA_HW_LPM_SLOT_VALID))
		n++;
	return n;
}

static uint32_t slot_pointer(const struct fake_table *t, unsigned level, uint32_t node, unsigned j)
{
	const uint32_t *w = t->level[level] + (size_t)node * FAKE_NODE_WORDS;
	unsigned at = j * (MATCHA_HW_LPM_POINTER_SHIFT + t->cfg.pointer_bits + t->cfg.key_bits) +
		      MATCHA_HW_LPM_POINTER_SHIFT;
	uint32_t v = 0;
	for (unsigned b = 0; b < t->cfg.pointer_bits; b++)
		v |= (w[(at + b) / 32] >> (at + b) % 32 & 1) << b;
	return v;
}

/*
 * The B+tree shape in the fake's memory: above the root single-slot nodes, every node
 * below it at least ceil(F/2) full, and as many nodes reached at each level as the driver
 * says it uses. `level_of_root` is the first level the driver calls real.
 */
static bool shape_ok(matcha_dev *dev, struct fake_dev *fd, unsigned table)
{
	const struct fake_table *t = &fd->table[table];
	unsigned levels = t->cfg.ways_or_levels, half = (t->cfg.extra + 1) / 2, root = levels;
	uint32_t *frontier = calloc(t->cfg.level_nodes[levels - 1] + 1, sizeof *frontier), *next =
		calloc(t->cfg.level_nodes[levels - 1] + 1, sizeof *next);
	unsigned nfront = 1;
	bool ok = true;
	for (unsigned l = 0; l < levels && ok; l++) {
		struct matcha_lpm_level lv;
		if (matcha_lpm_level(dev, table, l, &lv))
			return false;
		if (lv.real && root == levels)
			root = l;
		unsigned nnext = 0;
		for (unsigned k = 0; k < nfront && ok; k++) {
			unsigned n = node_slots(t, l, frontier[k]);
			if (l < root ? n != 1 : l > root && n < half) {
				check_fail(__FILE__, __LINE__, "level %u (root %u) node %u has %u slots",
					   l, root, (unsigned)frontier[k], n);
				ok = false;
			}
			for (unsigned j = 0; j < n && l + 1 < levels; j++)
				next[nnext++] = slot_pointer(t, l, frontier[k], j);
		}
		if (ok && nfront != lv.used) {
			check_fail(__FILE__, __LINE__, "level %u: %u nodes reached, the driver uses %u",
				   l, nfront, lv.used);
			ok = false;
		}
		uint32_t *swap = frontier;
		frontier = next;
		next = swap;
		nfront = nnext;
	}
	free(frontier);
	free(next);
	return ok;
}

/* Nothing left: every result invalid, one node of one slot a level. */
static bool tree_empty(matcha_dev *dev, struct fake_dev *fd, unsigned table)
{
	const struct fake_table *t = &fd->table[table];
	for (unsigned l = 0; l < t->cfg.ways_or_levels; l++) {
		struct matcha_lpm_level lv;
		if (matcha_lpm_level(dev, table, l, &lv) || lv.used != 1 || lv.slots != 1)
			return false;
	}
	for (unsigned r = 0; r < t->nentries; r++)
		if (t->entries[r].flags & 1)
			return false;
	return true;
}

/*
 * Loads `n` random prefixes (random_route: nested and overlapping) at once: every add
 * accepted (a duplicate refused) with nothing written to the device; then, after each
 * write of the load's end, every probe (around a sample of the prefixes, and random keys)
 * answers as the empty table or as the reference with all of them, and after it as the
 * reference, in the memory and the shadow; the tree has its shape, and each of its nodes
 * and each result was written once (one WRITE each, and a ZERO per result with counters).
 */
static void load_random(struct fake_dev *fd, matcha_dev *dev, struct rng *r, struct ref *ref,
			unsigned table, unsigned n, struct mbb *m)
{
	struct fake_table *ft = &fd->table[table];
	unsigned long writes = fd->writes, duplicates = 0;
	CHECK_OK(dev, matcha_lpm_load_begin(dev, table));
	while (ref->n < n && check_failures() == 0) {
		struct route cand;
		random_route(r, ref, &cand);
		if (ref_find(ref, &cand)) {
			CHECK_RC(dev, drv_add(dev, table, ref, &cand), MATCHA_EEXIST);
			ref->next_id = cand.id; /* ids stay below n + 1 (random_ops counts hits by id) */
			duplicates++;
			continue;
		}
		cand.present = true;
		ref->r[ref->n] = cand;
		CHECK_MSG(drv_add(dev, table, ref, &ref->r[ref->n]) == 0, "prefix %u of %u: %s",
			  ref->n, n, matcha_last_error(dev));
		ref->n++;
	}
	CHECK_MSG(fd->writes == writes, "%lu register writes before the load's end",
		  fd->writes - writes);
	m->n = 0;
	for (unsigned i = 0; i < 60 && m->n + 7 + 24 <= MAX_PROBES; i++)
		m->n += probes_around(r, ref, &ref->r[rng_below(r, ref->n)], m->probe + m->n);
	for (unsigned i = 0; i < 24; i++, m->n++) {
		memset(m->probe[m->n], 0, MAX_BYTES);
		random_value(r, m->probe[m->n], ref->key_bits);
	}
	for (unsigned i = 0; i < m->n; i++) {
		m->before[i] = MISS;
		m->after[i] = ref_lookup(ref, m->probe[i]);
	}
	/* Every node off the empty tree's path (node 0 of each level, the device fresh) holds
	 * all ones, a walk into it an error: a lookup reaching a node before it is written
	 * fails the check, as zeros (pointing back at the path) would not. */
	for (unsigned l = 0; l < ft->cfg.ways_or_levels; l++)
		memset(ft->level[l] + FAKE_NODE_WORDS, 0xFF,
		       (size_t)(ft->cfg.level_nodes[l] - 1) * FAKE_NODE_WORDS * sizeof(uint32_t));
	unsigned long commands = fd->commands, zeros = ft->zeros, checks = m->checks;
	m->last_commands = fd->commands;
	fd->after_write = check_old_or_new;
	fd->after_write_arg = m;
	CHECK_OK(dev, matcha_lpm_load_end(dev, table));
	fd->after_write = NULL;
	for (unsigned i = 0; i < m->n; i++) {
		uint32_t hw = UINT32_MAX, sw = UINT32_MAX;
		long got = hw_lookup_at(fd, table, m->probe[i], &hw);
		int sw_rc = matcha_lpm_lookup_sw(dev, table, m->probe[i], &sw);
		CHECK_MSG(got == m->after[i], "loaded, probe %u: answer %ld, reference %ld", i, got,
			  m->after[i]);
		CHECK_MSG((sw_rc == 0) == (got != MISS) && (got == MISS || sw == hw),
			  "loaded, probe %u: the shadow's walk disagrees with the memory's", i);
	}
	CHECK_MSG(shape_ok(dev, fd, table), "the loaded tree lost its shape");
	unsigned long nodes = 0;
	for (unsigned l = 0; l < ft->cfg.ways_or_levels; l++) {
		struct matcha_lpm_level lv;
		CHECK_OK(dev, matcha_lpm_level(dev, table, l, &lv));
		nodes += lv.used;
	}
	zeros = ft->zeros - zeros;
	CHECK_MSG(fd->commands - commands == ref->n + nodes + zeros &&
		  zeros == (ft->cfg.counters ? ref->n : 0),
		  "the load took %lu commands (%lu ZERO) for %u results and %lu nodes",
		  fd->commands - commands, zeros, ref->n, nodes);
	printf("  loaded %u prefixes (%lu duplicates refused) in %lu nodes, %lu states checked\n",
	       ref->n, duplicates, nodes, m->checks - checks);
}

/*
 * Random adds, deletes and re-adds. After each operation every probe answers as the
 * reference does (in the fake's memory and the driver's shadow, with the same result) and
 * the tree keeps its shape; with `every_write`, every probe also
 * answers as before or as after the operation after every single register write (and,
 * if the table has counters, is counted where it hits; every route's count is checked).
 * `table full` comes only with `size` prefixes present. In the end everything is deleted
 * and the tree must be one slot a level again (no leaked nodes). With `preload`, the
 * operations start on a table loaded at once with that many random prefixes (load_random).
 */
static void random_ops(const struct fake_cfg *cfg, unsigned table, unsigned ops,
		       bool every_write, unsigned preload)
{
	struct fake_dev *fd = fake_new(cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct ref ref;
	ref_init(&ref, cfg, table);
	uint8_t (*probe)[MAX_BYTES] = calloc(MAX_PROBES, MAX_BYTES);
	long *before = calloc(MAX_PROBES, sizeof *before), *after = calloc(MAX_PROBES, sizeof *after);
	/* Route ids: one new per operation and per preloaded prefix at most. */
	struct counts *hits = calloc(ops + preload + 2, sizeof *hits);
	bool counting = every_write && cfg->table[table].counters;
	struct mbb m = { table, 0, probe, before, after, 0, 0, counting ? hits : NULL, 0 };
	unsigned adds = 0, deletes = 0, readds = 0, full = 0;
	if (preload)
		load_random(fd, dev, &r, &ref, table, preload, &m);

	for (unsigned op = 0; op < ops && check_failures() == 0 && ref.n < ref.cap; op++) {
		unsigned kind = rng_below(&r, 10), idx = ref.n ? rng_below(&r, ref.n) : 0;
		struct route cand, *target;
		bool deleting = kind < 3 && ref.n && ref.r[idx].present;
		if (deleting) {
			target = &ref.r[idx];
		} else if (kind < 4 && ref.n && !ref.r[idx].present && !ref_find(&ref, &ref.r[idx])) {
			target = &ref.r[idx]; /* re-add a deleted prefix, with a new id */
			target->id = ref.next_id++;
			readds++;
		} else {
			random_route(&r, &ref, &cand);
			struct route *dup = ref_find(&ref, &cand);
			if (dup) {
				CHECK_RC(dev, drv_add(dev, table, &ref, &cand), MATCHA_EEXIST);
				continue;
			}
			ref.r[ref.n] = cand;
			target = &ref.r[ref.n++];
		}
		m.n = make_probes(&r, &ref, target, probe);
		for (unsigned i = 0; i < m.n; i++)
			before[i] = ref_lookup(&ref, probe[i]);
		target->present = !deleting;
		for (unsigned i = 0; i < m.n; i++)
			after[i] = ref_lookup(&ref, probe[i]);

		unsigned long writes = fd->writes;
		m.last_commands = fd->commands;
		fd->after_write = every_write ? check_old_or_new : NULL;
		fd->after_write_arg = &m;
		int rc = deleting ? matcha_lpm_delete(dev, table, target->prefix, target->len)
				  : drv_add(dev, table, &ref, target);
		fd->after_write = NULL;
		if (rc == MATCHA_ENOSPC && !deleting) {
			target->present = false;
			full++;
			unsigned held = 0;
			for (unsigned i = 0; i < ref.n; i++)
				held += ref.r[i].present;
			CHECK_MSG(held == cfg->table[table].size, "table full with %u of %u prefixes: %s",
				  held, cfg->table[table].size, matcha_last_error(dev));
			CHECK_MSG(fd->writes == writes, "a failed add wrote to the device");
			memcpy(after, before, m.n * sizeof *after);
		} else {
			CHECK_MSG(rc == 0, "op %u (%s /%u): %s", op, deleting ? "delete" : "add",
				  target->len, matcha_last_error(dev));
			deletes += deleting;
			adds += !deleting;
		}
		for (unsigned i = 0; i < m.n; i++) {
			uint32_t hw = UINT32_MAX, sw = UINT32_MAX;
			long got = hw_lookup_at(fd, table, probe[i], &hw);
			int sw_rc = matcha_lpm_lookup_sw(dev, table, probe[i], &sw);
			CHECK_MSG(got == after[i], "op %u (%s /%u), probe %u: answer %ld, reference %ld",
				  op, deleting ? "delete" : "add", target->len, i, got, after[i]);
			CHECK_MSG((sw_rc == 0) == (got != MISS) && (got == MISS || sw == hw),
				  "probe %u: the shadow's walk disagrees with the memory's", i);
		}
		CHECK_MSG(shape_ok(dev, fd, table), "op %u: the tree lost its shape", op);
		for (unsigned i = 0; i < ref.n && counting && (op % 8 == 0 || &ref.r[i] == target); i++)
			if (ref.r[i].present && !counts_agree(dev, table, &ref.r[i], &hits[ref.r[i].id]))
				break;
	}
	for (unsigned i = 0; i < ref.n && counting; i++)
		if (ref.r[i].present && !counts_agree(dev, table, &ref.r[i], &hits[ref.r[i].id]))
			break;
	CHECK_MSG(fd->table[table].stale_writes == 0, "%lu results written onto old counts",
		  fd->table[table].stale_writes);
	/* Delete the rest in random order. */
	for (unsigned left = ref.n; left > 0 && check_failures() == 0; left--) {
		unsigned i = rng_below(&r, left);
		struct route tmp = ref.r[i];
		ref.r[i] = ref.r[left - 1];
		ref.r[left - 1] = tmp;
		if (tmp.present)
			CHECK_OK(dev, matcha_lpm_delete(dev, table, tmp.prefix, tmp.len));
	}
	CHECK_MSG(tree_empty(dev, fd, table), "the tree is not empty after deleting everything");
	printf("  %u adds, %u deletes, %u re-adds, %u full, %lu checked states", adds, deletes,
	       readds, full, m.checks);
	if (counting)
		printf(", %lu hits counted", m.lookups);
	printf("\n");
	free(hits);
	free(probe);
	free(before);
	free(after);
	free(ref.r);
	matcha_close(dev);
	fake_free(fd);
}

void test_lpm_random_32(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM32, 600, false, 0);
}

void test_lpm_random_128(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM128, 300, false, 0);
}

/* Table 0: the smallest node (3 slots: every insert past two splits) on 20-bit keys, 96
 * prefixes; table 1: the widest node 32-bit keys allow (10 slots), 512 prefixes. */
static struct fake_cfg fanout_3_and_10_cfg(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 2;
	cfg.table[0] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 20, .size = 96,
						.data_bits = 24, .extra = 3 };
	cfg.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32, .size = 512,
						.data_bits = 32, .extra = 10 };
	return cfg;
}

/* Every write checked at 3 slots. */
void test_lpm_random_fanout_3_and_10(void)
{
	struct fake_cfg cfg = fanout_3_and_10_cfg();
	random_ops(&cfg, 0, 400, true, 0);
	random_ops(&cfg, 1, 600, false, 0);
}

void test_lpm_make_before_break_32(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM32, 300, true, 0);
}

void test_lpm_make_before_break_128(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM128, 150, true, 0);
}

/* Loaded at once (load_random), then random operations, every write checked. */
void test_lpm_load_random_32(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM32, 100, true, 1000);
}

void test_lpm_load_random_128(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	random_ops(&cfg, LPM128, 60, true, 400);
}

/* Both loaded to their size. */
void test_lpm_load_full_fanout_3_and_10(void)
{
	struct fake_cfg cfg = fanout_3_and_10_cfg();
	random_ops(&cfg, 0, 150, true, 96);
	random_ops(&cfg, 1, 150, true, 512);
}

/*
 * What a load refuses: a table holding prefixes, a second begin, an end without a begin,
 * duplicates and a prefix past the table's size while loading, and every call on a loaded
 * prefix before the end; none of it writes the device. A clear ends a load with nothing
 * written, and an empty load leaves the table empty. A load whose end fails half written
 * leaves the table refused until a clear.
 */
void test_lpm_load_refusals(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[LPM32].size = 4;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t k[4];
	struct matcha_entry e;
	uint64_t packets, bytes;

	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 0, 0, 0, 8, 1));
	CHECK_RC(dev, matcha_lpm_load_begin(dev, LPM32), MATCHA_EEXIST);
	CHECK_MSG(strstr(matcha_last_error(dev), "holds 1 prefixes"), "%s", matcha_last_error(dev));
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 0, 0, 0, 8));
	CHECK_RC(dev, matcha_lpm_load_end(dev, LPM32), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_lpm_load_begin(dev, 0), MATCHA_EKIND);

	unsigned long writes = fd->writes;
	CHECK_OK(dev, matcha_lpm_load_begin(dev, LPM32));
	CHECK_RC(dev, matcha_lpm_load_begin(dev, LPM32), MATCHA_EINVAL);
	for (unsigned i = 0; i < 4; i++)
		CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, i, 0, 0, 16, i + 1));
	CHECK_RC(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 9), MATCHA_EEXIST);
	CHECK_RC(dev, ipv4_route_add(dev, LPM32, 10, 9, 0, 0, 16, 9), MATCHA_ENOSPC);
	CHECK_RC(dev, ipv4_route_delete(dev, LPM32, 10, 1, 0, 0, 16), MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(dev), "being loaded"), "%s", matcha_last_error(dev));
	CHECK_RC(dev, matcha_lpm_modify(dev, LPM32, ipv4(k, 10, 1, 0, 0), 16, 1, k, 32), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_lpm_read(dev, LPM32, ipv4(k, 10, 1, 0, 0), 16, NULL, &e), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_lpm_counters(dev, LPM32, ipv4(k, 10, 1, 0, 0), 16, &packets, &bytes, 0),
		 MATCHA_EINVAL);
	CHECK_MSG(fd->writes == writes, "%lu register writes while loading", fd->writes - writes);
	CHECK_MSG(hw_lookup(fd, LPM32, ipv4(k, 10, 1, 2, 3)) == MISS, "a loading prefix answers");

	/* A clear drops the load: the table is empty, and a new load can begin. */
	CHECK_OK(dev, matcha_table_clear(dev, LPM32));
	CHECK_RC(dev, matcha_lpm_load_end(dev, LPM32), MATCHA_EINVAL);
	CHECK(tree_empty(dev, fd, LPM32));
	CHECK_OK(dev, matcha_lpm_load_begin(dev, LPM32));
	CHECK_OK(dev, matcha_lpm_load_end(dev, LPM32));
	CHECK(tree_empty(dev, fd, LPM32));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 5));
	CHECK(hw_lookup(fd, LPM32, ipv4(k, 10, 1, 2, 3)) == 5);

	/* A bus error in the middle of the end: the table is refused until a clear. */
	struct matcha_table_info info;
	CHECK_OK(dev, matcha_table_info(dev, LPM32, &info));
	CHECK_OK(dev, matcha_table_clear(dev, LPM32));
	CHECK_OK(dev, matcha_lpm_load_begin(dev, LPM32));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 5));
	fd->fail_read_addr = info.base + MATCHA_HW_WIN_STATUS;
	CHECK_RC(dev, matcha_lpm_load_end(dev, LPM32), MATCHA_EIO);
	fd->fail_read_addr = -1;
	CHECK_RC(dev, ipv4_route_add(dev, LPM32, 10, 2, 0, 0, 16, 6), MATCHA_EHW);
	CHECK_RC(dev, matcha_lpm_load_begin(dev, LPM32), MATCHA_EHW);
	CHECK_OK(dev, matcha_table_clear(dev, LPM32));
	CHECK(tree_empty(dev, fd, LPM32));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 2, 0, 0, 16, 6));
	CHECK(hw_lookup(fd, LPM32, ipv4(k, 10, 2, 0, 1)) == 6);
	matcha_close(dev);
	fake_free(fd);
}

/* ---------------------------------------------------------------- named cases */

static long answer4(struct fake_dev *fd, unsigned a, unsigned b, unsigned c, unsigned d)
{
	uint8_t k[4];
	ipv4(k, a, b, c, d);
	return hw_lookup(fd, LPM32, k);
}

void test_lpm_levels_probed(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_lpm_level lv;
	/* 2048 prefixes in 4-slot nodes: 4 * 2^11 >= 4097 boundaries, 2049 leaves. */
	const unsigned want32[12] = { 1, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 2049 };
	for (unsigned l = 0; l < 12; l++) {
		CHECK_OK(dev, matcha_lpm_level(dev, LPM32, l, &lv));
		CHECK_MSG(lv.fanout == 4 && lv.nodes == want32[l] && lv.used == 1 && lv.slots == 1 &&
			  lv.real == (l == 11), "level %u: %u nodes", l, lv.nodes);
	}
	CHECK_RC(dev, matcha_lpm_level(dev, LPM32, 12, &lv), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "table 1 has 12 levels, not 13"));
	/* 1024 prefixes in 3-slot nodes: 3 * 2^10 >= 2049. */
	CHECK_OK(dev, matcha_lpm_level(dev, LPM128, 10, &lv));
	CHECK(lv.fanout == 3 && lv.nodes == 1025);
	CHECK_RC(dev, matcha_lpm_level(dev, LPM128, 11, &lv), MATCHA_EINVAL);
	matcha_close(dev);
	fake_free(fd);
}

void test_lpm_nested_ipv4(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 0, 0, 0, 8, 8));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 16));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 2, 0, 24, 24));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 2, 3, 32, 32));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 2, 128, 25, 25));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 20, 20)); /* 10.1.0.0 - 10.1.15.255 */
	CHECK(answer4(fd, 9, 255, 255, 255) == MISS);
	CHECK(answer4(fd, 10, 0, 0, 0) == 8);
	CHECK(answer4(fd, 10, 1, 16, 0) == 16);
	CHECK(answer4(fd, 10, 1, 15, 255) == 20);
	CHECK(answer4(fd, 10, 1, 2, 2) == 24);
	CHECK(answer4(fd, 10, 1, 2, 3) == 32);
	CHECK(answer4(fd, 10, 1, 2, 4) == 24);
	CHECK(answer4(fd, 10, 1, 2, 128) == 25);
	CHECK(answer4(fd, 10, 1, 2, 255) == 25);
	CHECK(answer4(fd, 11, 0, 0, 0) == MISS);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 0, 0, 20));
	CHECK(answer4(fd, 10, 1, 15, 255) == 16);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 2, 0, 24));
	CHECK(answer4(fd, 10, 1, 2, 2) == 16);
	CHECK(answer4(fd, 10, 1, 2, 3) == 32);
	CHECK(answer4(fd, 10, 1, 2, 200) == 25);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 0, 0, 16));
	CHECK(answer4(fd, 10, 1, 2, 2) == 8);
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 2, 0, 24, 124));
	CHECK(answer4(fd, 10, 1, 2, 2) == 124);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 0, 0, 0, 8));
	CHECK(answer4(fd, 10, 1, 3, 0) == MISS);
	CHECK(answer4(fd, 10, 1, 2, 0) == 124);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 2, 0, 24));
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 2, 3, 32));
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 2, 128, 25));
	CHECK(tree_empty(dev, fd, LPM32));
	matcha_close(dev);
	fake_free(fd);
}

void test_lpm_default_and_host_routes(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 0, 0, 0, 0, 0, 1));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 255, 255, 255, 255, 32, 2));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 0, 0, 0, 0, 32, 3));
	CHECK(answer4(fd, 0, 0, 0, 0) == 3);
	CHECK(answer4(fd, 0, 0, 0, 1) == 1);
	CHECK(answer4(fd, 255, 255, 255, 254) == 1);
	CHECK(answer4(fd, 255, 255, 255, 255) == 2);
	CHECK(answer4(fd, 128, 0, 0, 0) == 1);
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 0, 0, 0, 0, 0));
	CHECK(answer4(fd, 128, 0, 0, 0) == MISS);
	CHECK(answer4(fd, 0, 0, 0, 0) == 3);

	/* IPv6: ::/0, a /128 and its neighbours, a /127 and a /1. */
	uint8_t k[16] = { 0 }, data[6] = { 0 };
	uint32_t r;
	data[5] = 1;
	CHECK_OK(dev, matcha_lpm_add(dev, LPM128, k, 0, 1, data, 48));
	memset(k, 0xFF, 16);
	data[5] = 2;
	CHECK_OK(dev, matcha_lpm_add(dev, LPM128, k, 128, 2, data, 48));
	k[15] = 0xFE;
	data[5] = 3;
	CHECK_OK(dev, matcha_lpm_add(dev, LPM128, k, 127, 3, data, 48));
	memset(k, 0, 16);
	k[0] = 0x80;
	data[5] = 4;
	CHECK_OK(dev, matcha_lpm_add(dev, LPM128, k, 1, 4, data, 48));
	memset(k, 0xFF, 16);
	CHECK(hw_lookup(fd, LPM128, k) == 2);
	k[15] = 0xFE;
	CHECK(hw_lookup(fd, LPM128, k) == 3);
	k[15] = 0xFD;
	CHECK(hw_lookup(fd, LPM128, k) == 4);
	k[0] = 0x7F;
	CHECK(hw_lookup(fd, LPM128, k) == 1);
	CHECK_OK(dev, matcha_lpm_lookup_sw(dev, LPM128, k, &r));
	CHECK(fd->table[LPM128].entries[r].data[0] == 1);
	matcha_close(dev);
	fake_free(fd);
}

void test_lpm_argument_errors(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t k[4] = { 10, 1, 0, 0 }, data[8] = { 0 };
	CHECK_RC(dev, matcha_lpm_add(dev, LPM32, k, 8, 1, data, 32), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "bits set beyond its length 8"));
	CHECK_RC(dev, matcha_lpm_add(dev, LPM32, k, 33, 1, data, 32), MATCHA_E2BIG);
	CHECK_RC(dev, matcha_lpm_add(dev, LPM32, k, 16, 1, data, 33), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "action data is 33 bits, table 1 takes 32"));
	CHECK_OK(dev, matcha_lpm_add(dev, LPM32, k, 16, 1, data, 32));
	CHECK_RC(dev, matcha_lpm_add(dev, LPM32, k, 16, 2, data, 32), MATCHA_EEXIST);
	CHECK_RC(dev, matcha_lpm_delete(dev, LPM32, k, 24), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(dev), "/24 prefix is not in table 1"));
	uint32_t r;
	k[0] = 11;
	CHECK_RC(dev, matcha_lpm_lookup_sw(dev, LPM32, k, &r), MATCHA_ENOENT);
	matcha_close(dev);
	fake_free(fd);
}

/* One lookup of a.b.c.d counted with `len` bytes where it hits; the answer's id. */
static long hit4(struct fake_dev *fd, unsigned a, unsigned b, unsigned c, unsigned d,
		 unsigned len)
{
	uint8_t k[4];
	uint32_t r;
	ipv4(k, a, b, c, d);
	long id = hw_lookup_at(fd, LPM32, k, &r);
	if (id >= 0)
		fake_hit(fd, LPM32, r, len);
	return id;
}

static void expect_counts(matcha_dev *dev, unsigned a, unsigned b, unsigned c, unsigned d,
			  unsigned len, uint64_t packets, uint64_t bytes, unsigned flags)
{
	uint8_t k[4];
	uint64_t p, by;
	ipv4(k, a, b, c, d);
	CHECK_OK(dev, matcha_lpm_counters(dev, LPM32, k, len, &p, &by, flags));
	CHECK_MSG(p == packets && by == bytes, "/%u: %llu packets %llu bytes, want %llu and %llu",
		  len, (unsigned long long)p, (unsigned long long)by, (unsigned long long)packets,
		  (unsigned long long)bytes);
}

void test_lpm_counters(void)
{
	struct fake_cfg cfg = fake_standard_cfg(); /* LPM32 counts per result */
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 0, 0, 0, 8, 8));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 16));
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 2, 3, 32, 32));
	CHECK(fd->table[LPM32].zeros == 3);
	CHECK(hit4(fd, 10, 9, 9, 9, 100) == 8);
	CHECK(hit4(fd, 10, 1, 9, 9, 200) == 16);
	CHECK(hit4(fd, 10, 1, 2, 4, 300) == 16);
	CHECK(hit4(fd, 10, 1, 2, 3, 400) == 32);
	CHECK(hit4(fd, 11, 0, 0, 0, 500) == MISS);
	expect_counts(dev, 10, 0, 0, 0, 8, 1, 100, 0);
	expect_counts(dev, 10, 1, 0, 0, 16, 2, 500, 0);
	expect_counts(dev, 10, 1, 2, 3, 32, 1, 400, 0);
	/* The raw count of the result index is the same: results never move. */
	uint8_t k[4];
	uint32_t r16;
	uint64_t p, b;
	ipv4(k, 10, 1, 9, 9);
	CHECK_OK(dev, matcha_lpm_lookup_sw(dev, LPM32, k, &r16));
	CHECK_OK(dev, matcha_counters_read(dev, LPM32, r16, &p, &b));
	CHECK(p == 2 && b == 500);
	/* Delete the /16: its keys fall back to the /8 and count there. */
	CHECK_OK(dev, ipv4_route_delete(dev, LPM32, 10, 1, 0, 0, 16));
	CHECK(hit4(fd, 10, 1, 9, 9, 50) == 8);
	expect_counts(dev, 10, 0, 0, 0, 8, 2, 150, MATCHA_COUNTERS_RESET);
	expect_counts(dev, 10, 0, 0, 0, 8, 0, 0, 0);
	/* Added again, it takes the freed result, zeroed before it is written. */
	CHECK_OK(dev, ipv4_route_add(dev, LPM32, 10, 1, 0, 0, 16, 116));
	uint32_t again;
	CHECK_OK(dev, matcha_lpm_lookup_sw(dev, LPM32, k, &again));
	CHECK(again == r16);
	expect_counts(dev, 10, 1, 0, 0, 16, 0, 0, 0);
	CHECK(hit4(fd, 10, 1, 9, 9, 60) == 116);
	expect_counts(dev, 10, 1, 0, 0, 16, 1, 60, 0);
	expect_counts(dev, 10, 1, 2, 3, 32, 1, 400, 0);
	CHECK(fd->table[LPM32].stale_writes == 0);
	matcha_close(dev);
	fake_free(fd);
}

/* Adds n prefixes given by `make` (0..n-1) to a fresh LPM32 of size n with `fanout`-slot
 * nodes, checks every answer and the shape, then that prefix n+1 is refused. */
static void fill_exactly(unsigned n, unsigned fanout,
			 void (*make)(unsigned i, uint8_t *k, unsigned *len))
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[1].size = n;
	cfg.table[1].extra = fanout;
	cfg.table[1].counters = false;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct ref ref;
	ref_init(&ref, &cfg, LPM32);
	for (unsigned i = 0; i < n && check_failures() == 0; i++) {
		struct route *rt = &ref.r[ref.n++];
		make(i, rt->prefix, &rt->len);
		rt->id = ref.next_id++;
		rt->present = true;
		CHECK_MSG(drv_add(dev, LPM32, &ref, rt) == 0, "prefix %u of %u: %s", i, n,
			  matcha_last_error(dev));
	}
	CHECK(shape_ok(dev, fd, LPM32));
	/* Every answer, at both ends of every prefix and next to them. */
	for (unsigned i = 0; i < ref.n && check_failures() == 0; i++) {
		uint8_t probe[8][MAX_BYTES];
		struct rng r = { 1 };
		unsigned np = probes_around(&r, &ref, &ref.r[i], probe);
		for (unsigned p = 0; p < np; p++)
			CHECK_MSG(hw_lookup(fd, LPM32, probe[p]) == ref_lookup(&ref, probe[p]),
				  "prefix %u probe %u", i, p);
	}
	uint8_t k[4] = { 0, 0, 0, 1 }, data[4] = { 0 }; /* in none of the sets */
	unsigned long writes = fd->writes;
	CHECK_RC(dev, matcha_lpm_add(dev, LPM32, k, 32, 1, data, 32), MATCHA_ENOSPC);
	char want[64];
	snprintf(want, sizeof want, "table 1 is full, it holds its %u prefixes", n);
	CHECK_MSG(strstr(matcha_last_error(dev), want), "%s", matcha_last_error(dev));
	CHECK(fd->writes == writes);
	/* Emptied again, every node merges back. */
	for (unsigned i = 0; i < ref.n; i++)
		CHECK_OK(dev, matcha_lpm_delete(dev, LPM32, ref.r[i].prefix, ref.r[i].len));
	CHECK(tree_empty(dev, fd, LPM32));
	free(ref.r);
	matcha_close(dev);
	fake_free(fd);
}

/* Host routes two apart: every start and end distinct, 2N+1 boundaries. */
static void spaced_hosts(unsigned i, uint8_t *k, unsigned *len)
{
	memset(k, 0, MAX_BYTES);
	ipv4(k, 10, 0, (2 * i + 1) >> 8 & 0xFF, (2 * i + 1) & 0xFF);
	*len = 32;
}

/* What filled one level of a multibit trie: long prefixes under many distinct short ones
 * (a /8 each, with /24s and /32s below it), so every short prefix needs its own nodes. */
static void long_under_short(unsigned i, uint8_t *k, unsigned *len)
{
	memset(k, 0, MAX_BYTES);
	unsigned group = i / 3;
	switch (i % 3) {
	case 0: ipv4(k, (uint8_t)(group + 1), 0, 0, 0); *len = 8; break;
	case 1: ipv4(k, (uint8_t)(group + 1), 77, 3, 0); *len = 24; break;
	default: ipv4(k, (uint8_t)(group + 1), 200, 9, 7); *len = 32; break;
	}
}

/* Nested all the way down: /0, /1, ... each inside the one before. */
static void nested_chain(unsigned i, uint8_t *k, unsigned *len)
{
	memset(k, 0, MAX_BYTES);
	ipv4(k, 0xFF, 0xFF, 0xFF, 0xFF);
	*len = i;
	for (unsigned b = i; b < 32; b++)
		k[b / 8] &= (uint8_t)~(0x80 >> b % 8);
}

void test_lpm_full_at_size_distinct_boundaries(void) { fill_exactly(200, 4, spaced_hosts); }
void test_lpm_full_at_size_distinct_boundaries_fanout_3(void) { fill_exactly(150, 3, spaced_hosts); }
void test_lpm_full_at_size_long_under_short(void) { fill_exactly(240, 4, long_under_short); }
void test_lpm_full_at_size_nested_chain(void) { fill_exactly(33, 3, nested_chain); }

/* ------------------------------------------------------ a real Internet routing table */

/*
 * The first 32,768 IPv4 prefixes, in address order, of a full Internet table
 * (tests/data/README.md): real nesting and a real prefix-length distribution, not uniform
 * random prefixes. The oracle is independent of the tree: for each length from 32 down,
 * a binary search of that length's prefixes for the key's own.
 */
#define BGP_PREFIXES 32768

struct bgp_route {
	uint32_t addr;
	unsigned len;
	uint32_t id;
	bool present;
};

struct bgp_oracle {
	const struct bgp_route *routes;
	unsigned *by_len[33], count[33]; /* route indices of each length, by address */
};

static const struct bgp_route *bgp_sorted_base;

static int bgp_by_addr(const void *a, const void *b)
{
	uint32_t x = bgp_sorted_base[*(const unsigned *)a].addr;
	uint32_t y = bgp_sorted_base[*(const unsigned *)b].addr;
	return x < y ? -1 : x > y;
}

static void bgp_oracle_init(struct bgp_oracle *o, const struct bgp_route *routes, unsigned n)
{
	memset(o, 0, sizeof *o);
	o->routes = routes;
	for (unsigned len = 0; len <= 32; len++)
		o->by_len[len] = calloc(n, sizeof(unsigned));
	for (unsigned i = 0; i < n; i++)
		o->by_len[routes[i].len][o->count[routes[i].len]++] = i;
	bgp_sorted_base = routes;
	for (unsigned len = 0; len <= 32; len++)
		qsort(o->by_len[len], o->count[len], sizeof(unsigned), bgp_by_addr);
}

static void bgp_oracle_free(struct bgp_oracle *o)
{
	for (unsigned len = 0; len <= 32; len++)
		free(o->by_len[len]);
}

static uint32_t bgp_mask(unsigned len)
{
	return len ? ~0u << (32 - len) : 0;
}

/* The id of the longest present route covering `key`, or MISS. */
static long bgp_oracle_lookup(const struct bgp_oracle *o, uint32_t key)
{
	for (unsigned len = 33; len-- > 0;) {
		uint32_t want = key & bgp_mask(len);
		unsigned lo = 0, hi = o->count[len];
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (o->routes[o->by_len[len][mid]].addr < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->count[len]) {
			const struct bgp_route *rt = &o->routes[o->by_len[len][lo]];
			if (rt->addr == want && rt->present)
				return rt->id;
		}
	}
	return MISS;
}

static unsigned bgp_read(const char *path, struct bgp_route *routes, unsigned max)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		check_fail(__FILE__, __LINE__, "%s: cannot open", path);
		return 0;
	}
	unsigned n = 0, a, b, c, d, len;
	while (n < max && fscanf(f, "%u.%u.%u.%u/%u", &a, &b, &c, &d, &len) == 5) {
		routes[n].addr = a << 24 | b << 16 | c << 8 | d;
		routes[n].len = len;
		n++;
	}
	fclose(f);
	return n;
}

static int bgp_add(matcha_dev *dev, unsigned table, const struct bgp_route *rt)
{
	uint32_t a = rt->addr;
	return ipv4_route_add(dev, table, a >> 24, a >> 16 & 0xFF, a >> 8 & 0xFF, a & 0xFF, rt->len,
			      rt->id);
}

static int bgp_delete(matcha_dev *dev, unsigned table, const struct bgp_route *rt)
{
	uint32_t a = rt->addr;
	return ipv4_route_delete(dev, table, a >> 24, a >> 16 & 0xFF, a >> 8 & 0xFF, a & 0xFF,
				 rt->len);
}

static long bgp_hw_lookup(struct fake_dev *fd, unsigned table, uint32_t key)
{
	uint8_t k[4];
	return hw_lookup(fd, table, ipv4(k, key >> 24, key >> 16 & 0xFF, key >> 8 & 0xFF,
					 key & 0xFF));
}

/* 0 .. n-1 in a random order. */
static unsigned *bgp_shuffled(unsigned n, struct rng *r)
{
	unsigned *order = calloc(n, sizeof *order);
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	for (unsigned i = n; i > 1; i--) {
		unsigned j = rng_below(r, i), t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
	return order;
}

/* Adds routes order[0 .. count-1], each with a new result id. */
static void bgp_add_some(matcha_dev *dev, struct bgp_route *routes, const unsigned *order,
			 unsigned count, uint32_t *next_id)
{
	for (unsigned k = 0; k < count && check_failures() == 0; k++) {
		struct bgp_route *rt = &routes[order[k]];
		rt->id = (*next_id)++;
		rt->present = true;
		CHECK_MSG(bgp_add(dev, LPM32, rt) == 0, "prefix %u of %u: %s", k, count,
			  matcha_last_error(dev));
	}
}

/* Deletes routes order[0 .. count-1]. */
static void bgp_delete_some(matcha_dev *dev, struct bgp_route *routes, const unsigned *order,
			    unsigned count)
{
	for (unsigned k = 0; k < count && check_failures() == 0; k++) {
		routes[order[k]].present = false;
		CHECK_OK(dev, bgp_delete(dev, LPM32, &routes[order[k]]));
	}
}

/* Route rt's first and last address, the addresses next to them and a random one: the
 * tree's answer is the oracle's. Returns the probes made. */
static unsigned bgp_probe_route(struct fake_dev *fd, unsigned table, const struct bgp_oracle *o,
				const struct bgp_route *rt, struct rng *r, const char *when)
{
	uint32_t last = rt->addr | ~bgp_mask(rt->len);
	uint32_t keys[5] = { rt->addr, rt->addr - 1, last, last + 1, (uint32_t)rng_next(r) };
	for (unsigned p = 0; p < 5; p++) {
		long want = bgp_oracle_lookup(o, keys[p]), got = bgp_hw_lookup(fd, table, keys[p]);
		if (got != want)
			check_fail(__FILE__, __LINE__, "%s: %u.%u.%u.%u answers %ld, the oracle %ld",
				   when, keys[p] >> 24, keys[p] >> 16 & 0xFF, keys[p] >> 8 & 0xFF,
				   keys[p] & 0xFF, got, want);
	}
	return 5;
}

/* Every route probed (bgp_probe_route). Returns the probes made. */
static unsigned long bgp_probe_all(struct fake_dev *fd, unsigned table,
				   const struct bgp_oracle *o, unsigned n, struct rng *r,
				   const char *when)
{
	unsigned long probes = 0;
	for (unsigned i = 0; i < n && check_failures() == 0; i++)
		probes += bgp_probe_route(fd, table, o, &o->routes[i], r, when);
	return probes;
}

/*
 * The real table fills a table of its size exactly: all 32,768 prefixes added in a random
 * order, the next one refused as "table full"; every answer the oracle's; then a random
 * half deleted and added again with new results, every answer the oracle's after each
 * step; then everything deleted, and the tree one slot a level again.
 */
void test_lpm_bgp_table_fills_its_size(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 2;
	cfg.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32,
						.size = BGP_PREFIXES, .data_bits = 32, .extra = 10,
						.prefix_store = true };
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct bgp_route *routes = calloc(BGP_PREFIXES + 1, sizeof *routes);
	unsigned n = bgp_read(MATCHA_BGP_TABLE, routes, BGP_PREFIXES + 1);
	CHECK_MSG(n == BGP_PREFIXES + 1, "%s: %u prefixes, not %u", MATCHA_BGP_TABLE, n,
		  BGP_PREFIXES + 1);
	struct bgp_route extra = routes[BGP_PREFIXES];
	n = BGP_PREFIXES;
	struct bgp_oracle o;
	bgp_oracle_init(&o, routes, n);
	unsigned *order = bgp_shuffled(n, &r);
	uint32_t next_id = 1;
	bgp_add_some(dev, routes, order, n, &next_id);
	CHECK(shape_ok(dev, fd, LPM32));
	extra.id = next_id++;
	CHECK_RC(dev, bgp_add(dev, LPM32, &extra), MATCHA_ENOSPC);
	unsigned long probes = bgp_probe_all(fd, LPM32, &o, n, &r, "full");
	/* A random half out, then in again with new results. */
	bgp_delete_some(dev, routes, order, n / 2);
	CHECK(shape_ok(dev, fd, LPM32));
	probes += bgp_probe_all(fd, LPM32, &o, n, &r, "half deleted");
	bgp_add_some(dev, routes, order, n / 2, &next_id);
	probes += bgp_probe_all(fd, LPM32, &o, n, &r, "added again");
	for (unsigned k = 0; k < n && check_failures() == 0; k++)
		CHECK_OK(dev, bgp_delete(dev, LPM32, &routes[k]));
	CHECK(tree_empty(dev, fd, LPM32));
	printf("  %u prefixes, %lu probes\n", n, probes);
	bgp_oracle_free(&o);
	free(order);
	free(routes);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * The real table loaded at once into a table emptied by deletes: all 32,768 prefixes added
 * in a random order between matcha_lpm_load_begin and matcha_lpm_load_end; after every
 * write of the end, the ends of
 * 4 sampled prefixes and the keys next to them answer as the empty table or as the
 * oracle; then every answer the oracle's and the tree in shape; then everything deleted
 * one by one, and the tree one slot a level again. (Loads followed by adds and deletes:
 * test_lpm_load_random_*.)
 */
void test_lpm_bgp_table_loads_at_once(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 2;
	cfg.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32,
						.size = BGP_PREFIXES, .data_bits = 32, .extra = 10,
						.prefix_store = true };
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct bgp_route *routes = calloc(BGP_PREFIXES, sizeof *routes);
	unsigned n = bgp_read(MATCHA_BGP_TABLE, routes, BGP_PREFIXES);
	CHECK_MSG(n == BGP_PREFIXES, "%s: %u prefixes, not %u", MATCHA_BGP_TABLE, n, BGP_PREFIXES);
	struct bgp_oracle o;
	bgp_oracle_init(&o, routes, n);
	unsigned *order = bgp_shuffled(n, &r);
	uint32_t next_id = 1;
	/* A table emptied by deletes: its free nodes hold old words, its path is what the
	 * merges left. */
	bgp_add_some(dev, routes, order, n / 8, &next_id);
	bgp_delete_some(dev, routes, order, n / 8);
	CHECK(tree_empty(dev, fd, LPM32));
	CHECK_OK(dev, matcha_lpm_load_begin(dev, LPM32));
	bgp_add_some(dev, routes, order, n, &next_id);

	uint8_t (*probe)[MAX_BYTES] = calloc(4 * 4, MAX_BYTES);
	long *before = calloc(4 * 4, sizeof *before), *after = calloc(4 * 4, sizeof *after);
	struct mbb m = { LPM32, 0, probe, before, after, fd->commands, 0, NULL, 0 };
	for (unsigned s = 0; s < 4; s++) {
		const struct bgp_route *rt = &routes[rng_below(&r, n)];
		uint32_t last = rt->addr | ~bgp_mask(rt->len);
		uint32_t keys[4] = { rt->addr, rt->addr - 1, last, last + 1 };
		for (unsigned p = 0; p < 4; p++, m.n++) {
			ipv4(probe[m.n], keys[p] >> 24, keys[p] >> 16 & 0xFF, keys[p] >> 8 & 0xFF,
			     keys[p] & 0xFF);
			before[m.n] = MISS;
			after[m.n] = bgp_oracle_lookup(&o, keys[p]);
		}
	}
	fd->after_write = check_old_or_new;
	fd->after_write_arg = &m;
	CHECK_OK(dev, matcha_lpm_load_end(dev, LPM32));
	fd->after_write = NULL;
	CHECK(shape_ok(dev, fd, LPM32));
	unsigned long probes = bgp_probe_all(fd, LPM32, &o, n, &r, "loaded");
	for (unsigned k = 0; k < n && check_failures() == 0; k++)
		CHECK_OK(dev, bgp_delete(dev, LPM32, &routes[k]));
	CHECK(tree_empty(dev, fd, LPM32));
	printf("  %u prefixes loaded, %lu states checked during the load, %lu probes\n", n,
	       m.checks, probes);
	free(probe);
	free(before);
	free(after);
	bgp_oracle_free(&o);
	free(order);
	free(routes);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * A full Internet table in a table of 2^20 prefixes with 20-bit pointers and its two
 * lowest levels in memory (docs/tables.md, "LPM levels in memory"): the real table's
 * 901,899 prefixes and as many more, drawn with the real table's lengths at random
 * addresses, as fill it, loaded at once (added in a random order; the next one refused as
 * "table full"); the tree in shape, the answers around a sample of the prefixes and at
 * random keys the oracle's; a random tenth deleted and added again one by one with new
 * results, the sample's answers the oracle's again.
 */
#define FULL_PREFIXES (1u << 20)
#define FULL_SAMPLE 16384

/* Open addressing over (address, length): whether a prefix is drawn already. */
static bool prefix_seen(uint64_t *set, unsigned mask, uint32_t addr, unsigned len)
{
	uint64_t k = (uint64_t)addr << 8 | len | 1ull << 40;
	for (uint64_t h = k * 0x9E3779B97F4A7C15ull >> 40;; h++) {
		uint64_t *slot = &set[h & mask];
		if (*slot == k)
			return true;
		if (!*slot) {
			*slot = k;
			return false;
		}
	}
}

/* FULL_SAMPLE routes drawn at random probed (bgp_probe_route). Returns the probes made. */
static unsigned long full_probe_sample(struct fake_dev *fd, const struct bgp_oracle *o,
				       unsigned n, struct rng *r, const char *when)
{
	unsigned long probes = 0;
	for (unsigned s = 0; s < FULL_SAMPLE && check_failures() == 0; s++)
		probes += bgp_probe_route(fd, LPM32, o, &o->routes[rng_below(r, n)], r, when);
	return probes;
}

void test_lpm_full_table_fills_a_million(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 2;
	cfg.table[1] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 32,
						.size = FULL_PREFIXES, .data_bits = 32, .extra = 9,
						.memory_levels = 2, .prefix_store = true };
	struct fake_dev *fd = fake_new(&cfg);
	CHECK_MSG(fd->table[LPM32].cfg.pointer_bits == 20, "%u-bit pointers",
		  fd->table[LPM32].cfg.pointer_bits);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct bgp_route *routes = calloc(FULL_PREFIXES + 1, sizeof *routes);
	unsigned real = bgp_read(MATCHA_BGP_TABLE, routes, FULL_PREFIXES + 1);
	CHECK_MSG(real == 901899, "%s: %u prefixes, not 901,899", MATCHA_BGP_TABLE, real);
	unsigned mask = 4 * FULL_PREFIXES - 1;
	uint64_t *seen = calloc(mask + 1ull, sizeof *seen);
	for (unsigned i = 0; i < real; i++)
		prefix_seen(seen, mask, routes[i].addr, routes[i].len);
	for (unsigned n = real; n <= FULL_PREFIXES;) {
		unsigned len = routes[rng_below(&r, real)].len;
		uint32_t addr = (uint32_t)rng_next(&r) & bgp_mask(len);
		if (!prefix_seen(seen, mask, addr, len))
			routes[n++] = (struct bgp_route){ .addr = addr, .len = len };
	}
	free(seen);
	struct bgp_route extra = routes[FULL_PREFIXES];
	unsigned n = FULL_PREFIXES;
	struct bgp_oracle o;
	bgp_oracle_init(&o, routes, n);
	unsigned *order = bgp_shuffled(n, &r);
	struct timespec t0, t1;
	unsigned long reads = fd->reads, writes = fd->writes, commands = fd->commands;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint32_t next_id = 1;
	CHECK_OK(dev, matcha_lpm_load_begin(dev, LPM32));
	bgp_add_some(dev, routes, order, n, &next_id);
	extra.id = next_id++;
	CHECK_RC(dev, bgp_add(dev, LPM32, &extra), MATCHA_ENOSPC);
	CHECK_OK(dev, matcha_lpm_load_end(dev, LPM32));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	reads = fd->reads - reads, writes = fd->writes - writes, commands = fd->commands - commands;
	CHECK(shape_ok(dev, fd, LPM32));
	unsigned long probes = full_probe_sample(fd, &o, n, &r, "full");
	bgp_delete_some(dev, routes, order, n / 10);
	probes += full_probe_sample(fd, &o, n, &r, "a tenth deleted");
	bgp_add_some(dev, routes, order, n / 10, &next_id);
	CHECK(shape_ok(dev, fd, LPM32));
	probes += full_probe_sample(fd, &o, n, &r, "added again");
	printf("  %u prefixes (%u real) loaded in %.1f s with %lu register reads, %lu writes, "
	       "%lu commands; %lu probes\n", n, real,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, reads, writes,
	       commands, probes);
	bgp_oracle_free(&o);
	free(order);
	free(routes);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * A full Internet IPv6 table (160,147 prefixes, tests/data/README.md) in a 128-bit table of
 * 2^18 prefixes, 3-slot nodes, its two lowest levels in memory: every prefix added in a
 * random order; the answers at both ends of 16,384 sampled prefixes, just past them and at
 * random keys the oracle's; a random tenth deleted, the answers the oracle's again. The
 * oracle: for each length from 128 down, a binary search of that length's prefixes.
 */
#define V6_SIZE (1u << 18)

struct v6_route {
	uint8_t addr[16];
	unsigned len;
	uint32_t id;
	bool present;
};

struct v6_oracle {
	const struct v6_route *routes;
	unsigned *by_len[129], count[129];
};

static const struct v6_route *v6_sorted_base;

static int v6_by_addr(const void *a, const void *b)
{
	return memcmp(v6_sorted_base[*(const unsigned *)a].addr,
		      v6_sorted_base[*(const unsigned *)b].addr, 16);
}

/* Clears the bits of a 128-bit big-endian key from bit `len` (from the top) on. */
static void v6_truncate(uint8_t *k, unsigned len)
{
	for (unsigned bit = len; bit < 128; bit++)
		k[bit / 8] &= (uint8_t)~(0x80u >> bit % 8);
}

/* Sets the bits from `len` on: the last key of the prefix. */
static void v6_fill(uint8_t *k, unsigned len)
{
	for (unsigned bit = len; bit < 128; bit++)
		k[bit / 8] |= (uint8_t)(0x80u >> bit % 8);
}

/* Adds 1 (or, with `down`, subtracts 1) modulo 2^128. */
static void v6_step(uint8_t *k, bool down)
{
	for (unsigned i = 16; i-- > 0;) {
		k[i] = (uint8_t)(down ? k[i] - 1 : k[i] + 1);
		if (k[i] != (down ? 0xFF : 0))
			break;
	}
}

static void v6_oracle_init(struct v6_oracle *o, const struct v6_route *routes, unsigned n)
{
	memset(o, 0, sizeof *o);
	o->routes = routes;
	for (unsigned len = 0; len <= 128; len++)
		o->by_len[len] = calloc(n ? n : 1, sizeof(unsigned));
	for (unsigned i = 0; i < n; i++)
		o->by_len[routes[i].len][o->count[routes[i].len]++] = i;
	v6_sorted_base = routes;
	for (unsigned len = 0; len <= 128; len++)
		qsort(o->by_len[len], o->count[len], sizeof(unsigned), v6_by_addr);
}

static void v6_oracle_free(struct v6_oracle *o)
{
	for (unsigned len = 0; len <= 128; len++)
		free(o->by_len[len]);
}

static long v6_oracle_lookup(const struct v6_oracle *o, const uint8_t *key)
{
	for (unsigned len = 129; len-- > 0;) {
		uint8_t want[16];
		memcpy(want, key, 16);
		v6_truncate(want, len);
		unsigned lo = 0, hi = o->count[len];
		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;
			if (memcmp(o->routes[o->by_len[len][mid]].addr, want, 16) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < o->count[len]) {
			const struct v6_route *rt = &o->routes[o->by_len[len][lo]];
			if (!memcmp(rt->addr, want, 16) && rt->present)
				return rt->id;
		}
	}
	return MISS;
}

static unsigned v6_read(const char *path, struct v6_route *routes, unsigned max)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		check_fail(__FILE__, __LINE__, "%s: cannot open", path);
		return 0;
	}
	char line[64];
	unsigned n = 0;
	while (n < max && fgets(line, sizeof line, f)) {
		char *slash = strchr(line, '/');
		if (!slash)
			continue;
		*slash = 0;
		if (inet_pton(AF_INET6, line, routes[n].addr) != 1) {
			check_fail(__FILE__, __LINE__, "%s: %s is not an IPv6 address", path, line);
			break;
		}
		routes[n].len = (unsigned)strtoul(slash + 1, NULL, 10);
		n++;
	}
	fclose(f);
	return n;
}

static int v6_add(matcha_dev *dev, const struct v6_route *rt)
{
	uint8_t data[4] = { (uint8_t)(rt->id >> 24), (uint8_t)(rt->id >> 16), (uint8_t)(rt->id >> 8),
			    (uint8_t)rt->id };
	return matcha_lpm_add(dev, LPM128, rt->addr, rt->len, (uint8_t)rt->id, data, 32);
}

static unsigned long v6_probe_sample(struct fake_dev *fd, const struct v6_oracle *o, unsigned n,
				     struct rng *r, const char *when)
{
	unsigned long probes = 0;
	for (unsigned s = 0; s < FULL_SAMPLE && check_failures() == 0; s++) {
		const struct v6_route *rt = &o->routes[rng_below(r, n)];
		uint8_t keys[5][16];
		memcpy(keys[0], rt->addr, 16);
		memcpy(keys[1], rt->addr, 16);
		v6_step(keys[1], true);
		memcpy(keys[2], rt->addr, 16);
		v6_fill(keys[2], rt->len);
		memcpy(keys[3], keys[2], 16);
		v6_step(keys[3], false);
		rng_bytes(r, keys[4], 16);
		for (unsigned p = 0; p < 5; p++, probes++) {
			long want = v6_oracle_lookup(o, keys[p]), got = hw_lookup(fd, LPM128, keys[p]);
			if (got != want) {
				char text[INET6_ADDRSTRLEN];
				inet_ntop(AF_INET6, keys[p], text, sizeof text);
				check_fail(__FILE__, __LINE__, "%s: %s answers %ld, the oracle %ld", when,
					   text, got, want);
			}
		}
	}
	return probes;
}

void test_lpm_full_ipv6_table(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[LPM128] = (struct fake_table_cfg){ .kind = MATCHA_KIND_LPM, .key_bits = 128,
						     .size = V6_SIZE, .data_bits = 32, .extra = 3,
						     .memory_levels = 2, .prefix_store = true };
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	struct v6_route *routes = calloc(V6_SIZE, sizeof *routes);
	unsigned n = v6_read(MATCHA_BGP6_TABLE, routes, V6_SIZE);
	CHECK_MSG(n == 160147, "%s: %u prefixes, not 160,147", MATCHA_BGP6_TABLE, n);
	struct v6_oracle o;
	v6_oracle_init(&o, routes, n);
	unsigned *order = bgp_shuffled(n, &r);
	for (unsigned k = 0; k < n && check_failures() == 0; k++) {
		struct v6_route *rt = &routes[order[k]];
		rt->id = k + 1;
		rt->present = true;
		CHECK_MSG(v6_add(dev, rt) == 0, "prefix %u of %u: %s", k, n, matcha_last_error(dev));
	}
	CHECK(shape_ok(dev, fd, LPM128));
	unsigned long probes = v6_probe_sample(fd, &o, n, &r, "full");
	for (unsigned k = 0; k < n / 10 && check_failures() == 0; k++) {
		routes[order[k]].present = false;
		CHECK_OK(dev, matcha_lpm_delete(dev, LPM128, routes[order[k]].addr, routes[order[k]].len));
	}
	CHECK(shape_ok(dev, fd, LPM128));
	probes += v6_probe_sample(fd, &o, n, &r, "a tenth deleted");
	printf("  %u IPv6 prefixes in %u-bit pointers, %lu probes\n", n,
	       fd->table[LPM128].cfg.pointer_bits, probes);
	v6_oracle_free(&o);
	free(order);
	free(routes);
	matcha_close(dev);
	fake_free(fd);
}
