/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Ternary range fields (docs/tables.md, "Range fields"): the conntrack program's acl with
 * both ports made range fields (its layout with "range": true on them, the fake with a
 * classifier of SLOTS boundary slots per port). The fake looks keys up through the slots
 * and interval rows as the hardware does (fake_ternary_lookup); the oracle is a brute-force
 * first match of lo <= port <= hi over the rules the test added.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctl.h"
#include "fake_dev.h"
#include "util.h"

#define ACL 0 /* the conntrack program's acl: src, dst, protocol, source port, destination port */
#define KEY_BITS 104
#define KEY_BYTES 13
#define KEY_WORDS 4
#define MISS (-1L)
#define DPORT 0 /* range field 0: key bits 0..15 */
#define SPORT 1 /* range field 1: key bits 16..31 */

/* The two port fields of the layout's acl, marked as range fields. */
static const char PORTS[] = "{\"fields\": [\"hdr.tcp.srcPort\", \"hdr.udp.srcPort\"], \"width\": 16}, "
			    "{\"fields\": [\"hdr.tcp.dstPort\", \"hdr.udp.dstPort\"], \"width\": 16}]";
static const char RANGE_PORTS[] =
	"{\"fields\": [\"hdr.tcp.srcPort\", \"hdr.udp.srcPort\"], \"width\": 16, \"range\": true}, "
	"{\"fields\": [\"hdr.tcp.dstPort\", \"hdr.udp.dstPort\"], \"width\": 16, \"range\": true}]";

struct port_rule {
	uint32_t lo[2], hi[2]; /* by range field */
	int protocol;          /* -1: any */
	uint32_t priority;     /* unique: it names the rule in the answers */
	bool present;
};

static struct fake_cfg range_cfg(unsigned slots)
{
	struct fake_cfg c = fake_conntrack_cfg();
	struct fake_table_cfg *t = &c.table[ACL];
	t->ways_or_levels = 2;
	t->extra = slots;
	t->range_offset[DPORT] = 0;
	t->range_width[DPORT] = 16;
	t->range_offset[SPORT] = 16;
	t->range_width[SPORT] = 16;
	return c;
}

/* A device on `fd` with the range layout loaded (NULL after a failed check). */
static matcha_dev *range_open(struct fake_dev *fd)
{
	matcha_dev *dev = fake_open(fd);
	size_t len;
	char *text = test_layout_edited(MATCHA_CONNTRACK_LAYOUT, PORTS, RANGE_PORTS, &len);
	if (dev && (!text || matcha_layout_load_text(dev, text, len, "conntrack-ranges"))) {
		check_fail(__FILE__, __LINE__, "layout: %s", text ? matcha_last_error(dev) :
			   "the port fields are not in the conntrack layout");
		matcha_close(dev);
		dev = NULL;
	}
	free(text);
	return dev;
}

/* The rule's value (protocol, lo of each port) and mask (protocol mask, hi of each port). */
static void rule_key(const struct port_rule *r, uint8_t *value, uint8_t *mask)
{
	memset(value, 0, KEY_BYTES);
	memset(mask, 0, KEY_BYTES);
	value[8] = r->protocol < 0 ? 0 : (uint8_t)r->protocol;
	mask[8] = r->protocol < 0 ? 0 : 0xFF;
	value[9] = (uint8_t)(r->lo[SPORT] >> 8), value[10] = (uint8_t)r->lo[SPORT];
	value[11] = (uint8_t)(r->lo[DPORT] >> 8), value[12] = (uint8_t)r->lo[DPORT];
	mask[9] = (uint8_t)(r->hi[SPORT] >> 8), mask[10] = (uint8_t)r->hi[SPORT];
	mask[11] = (uint8_t)(r->hi[DPORT] >> 8), mask[12] = (uint8_t)r->hi[DPORT];
}

static int rule_add(matcha_dev *dev, const struct port_rule *r)
{
	uint8_t value[KEY_BYTES], mask[KEY_BYTES], data = 1;
	rule_key(r, value, mask);
	return matcha_ternary_add(dev, ACL, value, mask, KEY_BITS, r->priority, 1, &data, 1);
}

static int rule_delete(matcha_dev *dev, const struct port_rule *r)
{
	uint8_t value[KEY_BYTES], mask[KEY_BYTES];
	rule_key(r, value, mask);
	return matcha_ternary_delete(dev, ACL, value, mask, KEY_BITS, r->priority);
}

struct probe {
	int protocol;
	uint32_t port[2];
};

/* The fake's answer: the priority of the entry the lookup hits, or MISS. */
static long hw_answer(struct fake_dev *fd, const struct probe *p)
{
	uint32_t key[KEY_WORDS] = { p->port[SPORT] << 16 | p->port[DPORT], (uint32_t)p->protocol };
	long at = fake_ternary_lookup(fd, ACL, key);
	return at < 0 ? MISS : (long)fd->table[ACL].entries[at].priority;
}

/* Brute force: the present rule of highest priority that holds the probe. */
static long ref_answer(const struct port_rule *rules, unsigned n, const struct probe *p)
{
	long best = MISS;
	for (unsigned i = 0; i < n; i++) {
		const struct port_rule *r = &rules[i];
		bool match = r->present && (r->protocol < 0 || r->protocol == p->protocol);
		for (unsigned f = 0; f < 2 && match; f++)
			match = r->lo[f] <= p->port[f] && p->port[f] <= r->hi[f];
		if (match && (long)r->priority > best)
			best = r->priority;
	}
	return best;
}

/* Valid slots of range field f: they must be slots 0..n-1 with lo rising from 0. */
static unsigned valid_slots(struct fake_dev *fd, unsigned f)
{
	const struct fake_range *r = &fd->table[ACL].range[f];
	unsigned n = 0;
	while (n < fd->table[ACL].cfg.extra && r->valid[n])
		n++;
	for (unsigned s = n; s < fd->table[ACL].cfg.extra; s++)
		if (r->valid[s])
			check_fail(__FILE__, __LINE__, "field %u: slot %u is valid above invalid slot "
				   "%u", f, s, n);
	if (r->lo[0] != 0)
		check_fail(__FILE__, __LINE__, "field %u: slot 0 has lo %u", f, (unsigned)r->lo[0]);
	for (unsigned s = 1; s < n; s++)
		if (r->lo[s] <= r->lo[s - 1])
			check_fail(__FILE__, __LINE__, "field %u: slot %u (lo %u) is not above slot %u "
				   "(lo %u)", f, s, (unsigned)r->lo[s], s - 1, (unsigned)r->lo[s - 1]);
	return n;
}

/* The boundaries the present rules use in field f, 0 included: the slots there must be. */
static unsigned boundaries(const struct port_rule *rules, unsigned n, unsigned f)
{
	static bool used[65537];
	memset(used, 0, sizeof used);
	used[0] = true;
	for (unsigned i = 0; i < n; i++)
		if (rules[i].present) {
			used[rules[i].lo[f]] = true;
			used[rules[i].hi[f] + 1] = true;
		}
	unsigned count = 0;
	for (unsigned b = 0; b < 65536; b++)
		count += used[b];
	return count;
}

/* Checks, after every command, that each probe answers as before or as after. */
struct old_or_new {
	const struct probe *probe;
	const long *before, *after;
	unsigned n;
	unsigned long last_commands, checks;
};

static void check_old_or_new(struct fake_dev *fd, void *arg)
{
	struct old_or_new *m = arg;
	if (fd->commands == m->last_commands)
		return;
	m->last_commands = fd->commands;
	m->checks++;
	for (unsigned i = 0; i < m->n; i++) {
		long got = hw_answer(fd, &m->probe[i]);
		if (got != m->before[i] && got != m->after[i])
			check_fail(__FILE__, __LINE__, "after command %lu, probe %u (ports %u, %u) "
				   "answers %ld, neither %ld (before) nor %ld (after)", fd->commands,
				   i, (unsigned)m->probe[i].port[SPORT],
				   (unsigned)m->probe[i].port[DPORT], got, m->before[i], m->after[i]);
	}
}

/* A port range from the pool: equal ends (an exact port), the whole field, or two picks. */
static void random_range(struct rng *rng, const uint32_t *pool, unsigned npool, uint32_t *lo,
			 uint32_t *hi)
{
	uint32_t a = pool[rng_below(rng, npool)], b = pool[rng_below(rng, npool)];
	switch (rng_below(rng, 4)) {
	case 0: *lo = *hi = a; break;
	case 1: *lo = 0, *hi = 65535; break;
	default: *lo = a < b ? a : b, *hi = a < b ? b : a;
	}
}

/*
 * Random adds and deletes of overlapping port ranges from a small pool of ends, so that
 * boundaries are shared and come and go. After every command each probe answers as before
 * the operation or after it; after each operation as the brute force says, and each field
 * holds exactly the slots its present rules' boundaries need. An add the classifier has no
 * room for issues no command.
 */
void test_ternary_range_random_make_before_break(void)
{
	enum { SLOTS = 16, RULES = 48, OPS = 260 };
	struct fake_cfg cfg = range_cfg(SLOTS);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = range_open(fd);
	CHECK(dev);
	struct rng rng = rng_for_test();
	static const uint32_t pool[] = { 0, 1, 22, 23, 53, 79, 80, 81, 443, 1023, 1024, 8080,
					 49151, 65534, 65535 };
	const unsigned npool = sizeof pool / sizeof pool[0];
	struct port_rule rules[RULES] = { 0 };
	struct probe probes[2 * npool + 8];
	unsigned nprobes = 0;
	for (unsigned i = 0; i < npool; i++)
		for (int d = -1; d <= 1; d += 2) {
			uint32_t port = (uint32_t)((int)pool[i] + d) & 0xFFFF;
			probes[nprobes++] = (struct probe){ i % 2 ? 6 : 17,
							    { port, pool[(i + 3) % npool] } };
		}
	for (unsigned i = 0; i < 8; i++)
		probes[nprobes++] = (struct probe){ 6, { rng_below(&rng, 65536), rng_below(&rng, 65536) } };
	long before[sizeof probes / sizeof probes[0]], after[sizeof probes / sizeof probes[0]];
	struct old_or_new m = { probes, before, after, nprobes, 0, 0 };
	unsigned added = 0, deleted = 0;

	for (unsigned op = 0; op < OPS && !check_failures(); op++) {
		unsigned pick = rng_below(&rng, RULES);
		struct port_rule *r = &rules[pick];
		for (unsigned i = 0; i < nprobes; i++)
			before[i] = ref_answer(rules, RULES, &probes[i]);
		bool adding = !r->present;
		if (adding) {
			random_range(&rng, pool, npool, &r->lo[DPORT], &r->hi[DPORT]);
			random_range(&rng, pool, npool, &r->lo[SPORT], &r->hi[SPORT]);
			r->protocol = rng_below(&rng, 3) ? (rng_below(&rng, 2) ? 6 : 17) : -1;
			r->priority = 1000 * op + pick; /* unique */
		}
		r->present = adding;
		for (unsigned i = 0; i < nprobes; i++)
			after[i] = ref_answer(rules, RULES, &probes[i]);
		unsigned long commands = fd->commands;
		fd->after_write = check_old_or_new;
		fd->after_write_arg = &m;
		int rc = adding ? rule_add(dev, r) : rule_delete(dev, r);
		fd->after_write = NULL;
		if (adding && rc == MATCHA_ENOSPC && strstr(matcha_last_error(dev), "range field")) {
			CHECK(fd->commands == commands);
			r->present = false;
		} else {
			CHECK_OK(dev, rc);
			added += adding;
			deleted += !adding;
		}
		for (unsigned i = 0; i < nprobes; i++) {
			long want = ref_answer(rules, RULES, &probes[i]), got = hw_answer(fd, &probes[i]);
			if (got != want)
				check_fail(__FILE__, __LINE__, "op %u: probe %u answers %ld, the rules say "
					   "%ld", op, i, got, want);
		}
		for (unsigned f = 0; f < 2; f++) {
			unsigned have = valid_slots(fd, f), want = boundaries(rules, RULES, f);
			if (have != want)
				check_fail(__FILE__, __LINE__, "op %u: field %u has %u valid slots, its "
					   "rules use %u boundaries (0 included)", op, f, have, want);
		}
	}
	/* Every rule deleted: each field is back to the one interval CLEAR leaves. */
	for (unsigned i = 0; i < RULES; i++)
		if (rules[i].present) {
			CHECK_OK(dev, rule_delete(dev, &rules[i]));
			rules[i].present = false;
		}
	CHECK(valid_slots(fd, DPORT) == 1 && valid_slots(fd, SPORT) == 1);
	CHECK(added > 30 && deleted > 30 && m.checks > 1000);
	matcha_close(dev);
	fake_free(fd);
}

/* Every destination port 0..300 and a few beyond answers as the brute force says. */
static void check_dports(struct fake_dev *fd, const struct port_rule *rules, unsigned n,
			 const char *when)
{
	for (uint32_t port = 0; port < 320; port++) {
		struct probe p = { 6, { port, 1234 } };
		long got = hw_answer(fd, &p), want = ref_answer(rules, n, &p);
		if (got != want) {
			check_fail(__FILE__, __LINE__, "%s: port %u answers %ld, the rules say %ld",
				   when, (unsigned)port, got, want);
			return;
		}
	}
}

/*
 * Boundaries shared between rules stay while any rule uses them: [80, 80] and [80, 90]
 * share 80, [91, 100] takes 91 (the hi + 1 of the second) as its lo. Deleting a rule
 * merges only the boundaries no other rule uses.
 */
void test_ternary_range_shared_boundaries(void)
{
	struct fake_cfg cfg = range_cfg(8);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = range_open(fd);
	CHECK(dev);
	struct port_rule r[4] = {
		{ .lo = { 80, 0 }, .hi = { 80, 65535 }, .protocol = 6, .priority = 30, .present = true },
		{ .lo = { 80, 0 }, .hi = { 90, 65535 }, .protocol = -1, .priority = 20, .present = true },
		{ .lo = { 91, 0 }, .hi = { 100, 65535 }, .protocol = -1, .priority = 10, .present = true },
		/* The whole field needs no boundary but 0. */
		{ .lo = { 0, 0 }, .hi = { 65535, 65535 }, .protocol = 17, .priority = 5, .present = true },
	};
	/* Slots after each add: {0, 80, 81}, + 91, + 101, the same. */
	const unsigned slots_after_add[4] = { 3, 4, 5, 5 };
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(dev, rule_add(dev, &r[i]));
		CHECK(valid_slots(fd, DPORT) == slots_after_add[i]);
		CHECK(valid_slots(fd, SPORT) == 1);
		check_dports(fd, r, i + 1, "adding");
	}
	unsigned long range_commands = fd->table[ACL].range_commands;
	CHECK_OK(dev, rule_delete(dev, &r[1]));
	r[1].present = false;
	/* 80 is [80, 80]'s, 91 [91, 100]'s: nothing merges. */
	CHECK(valid_slots(fd, DPORT) == 5 && fd->table[ACL].range_commands == range_commands);
	check_dports(fd, r, 4, "after deleting [80, 90]");
	CHECK_OK(dev, rule_delete(dev, &r[0]));
	r[0].present = false;
	CHECK(valid_slots(fd, DPORT) == 3); /* {0, 91, 101} */
	check_dports(fd, r, 4, "after deleting [80, 80]");
	/* The freed boundary comes back as a new one. */
	CHECK_OK(dev, rule_add(dev, &r[1]));
	r[1].present = true;
	CHECK(valid_slots(fd, DPORT) == 4); /* {0, 80, 91, 101} */
	check_dports(fd, r, 4, "after adding [80, 90] again");
	/* An empty range (lo above hi) is refused before anything is written. */
	struct port_rule bad = { .lo = { 9, 0 }, .hi = { 8, 65535 }, .protocol = -1, .priority = 1 };
	unsigned long commands = fd->commands;
	CHECK_RC(dev, rule_add(dev, &bad), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "range 9..8 is empty") && fd->commands == commands);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * With 8 slots a field holds 7 boundaries beyond 0: three exact ports take 6, a fourth
 * needs 2 and is refused with a message naming the table, the field and the slots, before
 * any command; a range that reuses one end still fits.
 */
void test_ternary_range_field_full(void)
{
	struct fake_cfg cfg = range_cfg(8);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = range_open(fd);
	CHECK(dev);
	struct port_rule r[5];
	for (unsigned i = 0; i < 4; i++)
		r[i] = (struct port_rule){ .lo = { 10 * (i + 1), 0 }, .hi = { 10 * (i + 1), 65535 },
					   .protocol = -1, .priority = 100 - i, .present = true };
	for (unsigned i = 0; i < 3; i++)
		CHECK_OK(dev, rule_add(dev, &r[i]));
	unsigned long commands = fd->commands;
	CHECK_RC(dev, rule_add(dev, &r[3]), MATCHA_ENOSPC);
	const char *msg = matcha_last_error(dev);
	CHECK(strstr(msg, "table 0") && strstr(msg, "range field 0") &&
	      strstr(msg, "field's 8 slots") && strstr(msg, "needs 2 new boundaries"));
	CHECK(fd->commands == commands);
	r[3].present = false;
	check_dports(fd, r, 4, "after the refused add");
	/* [31, 40]: 31 is there, 41 is the seventh boundary. */
	r[4] = (struct port_rule){ .lo = { 31, 0 }, .hi = { 40, 65535 }, .protocol = -1,
				   .priority = 1, .present = true };
	CHECK_OK(dev, rule_add(dev, &r[4]));
	CHECK(valid_slots(fd, DPORT) == 8);
	check_dports(fd, r, 5, "with every slot in use");

	/* By name the message names the table too. */
	matcha_table *acl;
	CHECK_OK(dev, matcha_table_get(dev, "acl", &acl));
	struct matcha_match m[5] = {
		{ .kind = MATCHA_MATCH_TERNARY }, { .kind = MATCHA_MATCH_TERNARY },
		{ .kind = MATCHA_MATCH_TERNARY }, { .kind = MATCHA_MATCH_TERNARY },
		{ .kind = MATCHA_MATCH_EXACT },
	};
	m[4].value.be[MATCHA_VALUE_BYTES - 1] = 200;
	uint32_t handle;
	CHECK_RC(dev, matcha_table_entry_add(acl, m, 5, "deny", NULL, 0, 7, &handle), MATCHA_ENOSPC);
	CHECK(strstr(matcha_last_error(dev), "table acl") &&
	      strstr(matcha_last_error(dev), "range field 0"));
	matcha_close(dev);
	fake_free(fd);
}

static void put_u16(struct matcha_value *v, uint32_t x)
{
	memset(v, 0, sizeof *v);
	v->be[MATCHA_VALUE_BYTES - 2] = (uint8_t)(x >> 8);
	v->be[MATCHA_VALUE_BYTES - 1] = (uint8_t)x;
}

/* The port fields of hardware entry `index`: lo in the value, hi in the mask. */
static void entry_ports(matcha_dev *dev, uint32_t index, uint32_t lo[2], uint32_t hi[2])
{
	struct matcha_entry e;
	CHECK_OK(dev, matcha_ternary_read(dev, ACL, index, &e));
	lo[SPORT] = (uint32_t)e.key[9] << 8 | e.key[10];
	lo[DPORT] = (uint32_t)e.key[11] << 8 | e.key[12];
	hi[SPORT] = (uint32_t)e.mask[9] << 8 | e.mask[10];
	hi[DPORT] = (uint32_t)e.mask[11] << 8 | e.mask[12];
}

/*
 * By name, a range on a range field is one hardware entry; an exact port is lo = hi, a
 * wildcard (0&&&0) the whole field, a prefix mask its block; any other mask is refused.
 * matcha-ctl's "->" on a range field is the same one entry.
 */
void test_ternary_range_by_name(void)
{
	struct fake_cfg cfg = range_cfg(16);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = range_open(fd);
	CHECK(dev);
	matcha_table *acl;
	CHECK_OK(dev, matcha_table_get(dev, "acl", &acl));
	struct matcha_match m[5] = {
		{ .kind = MATCHA_MATCH_TERNARY }, { .kind = MATCHA_MATCH_TERNARY },
		{ .kind = MATCHA_MATCH_TERNARY }, { .kind = MATCHA_MATCH_RANGE },
		{ .kind = MATCHA_MATCH_RANGE },
	};
	put_u16(&m[3].value, 1000);
	put_u16(&m[3].high, 2000);
	put_u16(&m[4].value, 1);
	put_u16(&m[4].high, 65534);
	uint32_t handle, lo[2], hi[2];
	struct matcha_entry_view view;
	CHECK_OK(dev, matcha_table_entry_add(acl, m, 5, "permit", NULL, 0, 50, &handle));
	CHECK_OK(dev, matcha_table_entry_read(acl, handle, &view));
	CHECK(view.hw_entries == 1);
	entry_ports(dev, view.index, lo, hi);
	CHECK(lo[SPORT] == 1000 && hi[SPORT] == 2000 && lo[DPORT] == 1 && hi[DPORT] == 65534);

	/* exact 80 and 0&&&0 */
	m[3] = (struct matcha_match){ .kind = MATCHA_MATCH_EXACT };
	put_u16(&m[3].value, 80);
	m[4] = (struct matcha_match){ .kind = MATCHA_MATCH_TERNARY };
	CHECK_OK(dev, matcha_table_entry_add(acl, m, 5, "deny", NULL, 0, 40, &handle));
	CHECK_OK(dev, matcha_table_entry_read(acl, handle, &view));
	entry_ports(dev, view.index, lo, hi);
	CHECK(lo[SPORT] == 80 && hi[SPORT] == 80 && lo[DPORT] == 0 && hi[DPORT] == 65535);

	/* 0x1200&&&0xff00 is 0x1200..0x12ff; 0x0012&&&0x00ff no range. */
	m[4].kind = MATCHA_MATCH_TERNARY;
	put_u16(&m[4].value, 0x1200);
	put_u16(&m[4].mask, 0xFF00);
	CHECK_OK(dev, matcha_table_entry_add(acl, m, 5, "deny", NULL, 0, 30, &handle));
	CHECK_OK(dev, matcha_table_entry_read(acl, handle, &view));
	entry_ports(dev, view.index, lo, hi);
	CHECK(lo[DPORT] == 0x1200 && hi[DPORT] == 0x12FF);
	put_u16(&m[4].value, 0x0012);
	put_u16(&m[4].mask, 0x00FF);
	CHECK_RC(dev, matcha_table_entry_add(acl, m, 5, "deny", NULL, 0, 20, &handle),
		 MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "is a range field"));

	/* matcha-ctl: one entry for 100->200, lo = hi for 443. */
	struct ctl c;
	FILE *out = tmpfile();
	ctl_init(&c, dev, out);
	CHECK(ctl_execute(&c, "table_add acl permit 0&&&0 0&&&0 6 443 100->200 => 10") == 0);
	uint32_t next;
	CHECK_OK(dev, matcha_table_entry_next(acl, handle + 1, &next));
	CHECK_OK(dev, matcha_table_entry_read(acl, next, &view));
	CHECK(view.hw_entries == 1);
	entry_ports(dev, view.index, lo, hi);
	CHECK(lo[SPORT] == 443 && hi[SPORT] == 443 && lo[DPORT] == 100 && hi[DPORT] == 200);
	fclose(out);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * Adoption: slots and spans cannot be read back, so a range table holding entries is
 * refused with a message saying so; an empty one gets the classifier CLEAR leaves
 * (whatever a crashed process left in the slots) and takes rules again.
 */
void test_ternary_range_adopt(void)
{
	struct fake_cfg cfg = range_cfg(8);
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = range_open(fd);
	CHECK(dev);
	struct port_rule r = { .lo = { 80, 0 }, .hi = { 90, 65535 }, .protocol = 6, .priority = 9,
			       .present = true };
	CHECK_OK(dev, rule_add(dev, &r));
	matcha_dev *second = range_open(fd);
	CHECK(second);
	CHECK_RC(second, matcha_tables_adopt(second), MATCHA_EHW);
	CHECK(strstr(matcha_last_error(second), "range fields") &&
	      strstr(matcha_last_error(second), "cannot be read back"));
	matcha_close(second);
	CHECK_OK(dev, rule_delete(dev, &r));
	matcha_close(dev);

	/* Stray slots and a narrowed id 0, as an interrupted update could leave them. */
	struct fake_range *fr = &fd->table[ACL].range[DPORT];
	fr->valid[1] = true, fr->lo[1] = 500, fr->id[1] = 3;
	fr->end[0] = 499;
	dev = range_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_tables_adopt(dev));
	CHECK(valid_slots(fd, DPORT) == 1 && fr->id[0] == 0 && fr->start[0] == 0 &&
	      fr->end[0] == 65535);
	struct port_rule rules[2] = {
		{ .lo = { 400, 0 }, .hi = { 600, 65535 }, .protocol = -1, .priority = 2, .present = true },
		{ .lo = { 0, 0 }, .hi = { 450, 65535 }, .protocol = -1, .priority = 1, .present = true },
	};
	CHECK_OK(dev, rule_add(dev, &rules[0]));
	CHECK_OK(dev, rule_add(dev, &rules[1]));
	for (uint32_t port = 0; port < 1000; port += 7) {
		struct probe p = { 6, { port, 1 } };
		CHECK(hw_answer(fd, &p) == ref_answer(rules, 2, &p));
	}
	matcha_close(dev);
	fake_free(fd);
}
