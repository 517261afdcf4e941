/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entries by name on the built-in program (fake_l2l3_cfg and its layout). Expected keys and
 * action data are written out here from docs/pipeline.md's packing rule (first parameter
 * in the most significant bits) and checked through the index-based read-back calls.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"
#include "util.h"

static matcha_dev *open_l2l3(struct fake_dev **fd)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	*fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(*fd);
	if (dev && matcha_layout_load(dev, MATCHA_LAYOUT)) {
		check_fail(__FILE__, __LINE__, "layout: %s", matcha_last_error(dev));
		matcha_close(dev);
		return NULL;
	}
	return dev;
}

static struct matcha_match exact(struct matcha_value v)
{
	return (struct matcha_match){ .kind = MATCHA_MATCH_EXACT, .value = v };
}

static struct matcha_match lpm(uint32_t v, unsigned len)
{
	return (struct matcha_match){ .kind = MATCHA_MATCH_LPM, .value = val_u64(v),
				      .prefix_len = len };
}

static struct matcha_match ternary(uint64_t v, uint64_t m)
{
	return (struct matcha_match){ .kind = MATCHA_MATCH_TERNARY, .value = val_u64(v),
				      .mask = val_u64(m) };
}

static struct matcha_match range(uint32_t lo, uint32_t hi)
{
	return (struct matcha_match){ .kind = MATCHA_MATCH_RANGE, .value = val_u64(lo),
				      .high = val_u64(hi) };
}

#define EXPECT_ERROR(dev, expr, code, text)                                                 \
	do {                                                                               \
		CHECK_RC(dev, expr, code);                                                 \
		CHECK_MSG(strstr(matcha_last_error(dev), text), "message \"%s\", expected \"%s\"", \
			  matcha_last_error(dev), text);                                   \
	} while (0)

void test_entries_exact(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_l2l3(&fd);
	CHECK(dev);
	const uint8_t mac[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct matcha_match m = exact(val_bytes(mac, 6));
	struct matcha_value port = val_u64(9);
	uint32_t h, index, next;
	struct matcha_entry e;
	CHECK_OK(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "forward", &port, 1,
				       MATCHA_NO_PRIORITY, &h));
	CHECK(h == 0);
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, 0, mac, 48, &index));
	CHECK_OK(dev, matcha_exact_read(dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 1 && !memcmp(e.key, mac, 6) && e.data[0] == 9);

	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_entry_read(dev, "l2_fwd", h, &v));
	CHECK(!strcmp(v.action->name, "forward") && v.nparams == 1 &&
	      !memcmp(&v.params[0], &port, sizeof port) && v.index == index && !v.has_priority &&
	      v.hw_entries == 1 && v.nmatch == 1 && !memcmp(&v.match[0], &m, sizeof m));

	fake_hit(fd, 0, index, 64);
	CHECK_OK(dev, matcha_entry_modify(dev, "l2_fwd", h, "drop", NULL, 0));
	CHECK_OK(dev, matcha_exact_read(dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 2 && e.data[0] == 0 && !memcmp(e.key, mac, 6));
	uint64_t packets, bytes; /* the same entry: its count goes on */
	CHECK_OK(dev, matcha_entry_counters(dev, "l2_fwd", h, &packets, &bytes, 0));
	CHECK(packets == 1 && bytes == 64 && fd->table[0].stale_writes == 0);

	/* Errors, each with what is wrong in the message. */
	struct matcha_value big = val_u64(16);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2", &m, 1, "forward", &port, 1, -1, &h),
		     MATCHA_ENOTABLE, "unknown table \"l2\" (tables: l2_fwd, ipv4_lpm, acl)");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "fwd", &port, 1, -1, &h),
		     MATCHA_EINVAL, "table l2_fwd has no action \"fwd\" (actions: no_op, "
		     "forward, drop)");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "forward", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "action forward of table l2_fwd takes 1 parameter (port), 0 "
		     "given");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "drop", &port, 1, -1, &h),
		     MATCHA_EINVAL, "action drop of table l2_fwd takes 0 parameters, 1 given");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "forward", &big, 1, -1, &h),
		     MATCHA_E2BIG, "parameter port of action forward takes 0..15 (4 bits): 16 "
		     "(0x10) is out of range");
	struct matcha_match wide = exact(val_u64(0x1000000000000ull));
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &wide, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_E2BIG, "key field hdr.eth.dst is 48 bits: 0x1000000000000 does not fit");
	struct matcha_match masked = ternary(0x001122334455ull, 0xFFFFFFFFFFFFull);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &masked, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "table l2_fwd (kind exact): key field hdr.eth.dst takes a "
		     "plain value, not a ternary mask (value&&&mask)");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "drop", NULL, 0, 5, &h),
		     MATCHA_EINVAL, "table l2_fwd (kind exact): its entries have no priority");
	struct matcha_match two[2] = { m, m };
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", two, 2, "drop", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "table l2_fwd takes 1 key field (hdr.eth.dst), 2 given");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "no_op", NULL, 0, -1, &h),
		     MATCHA_EEXIST, "table l2_fwd: duplicate entry: handle 0 has the same key");
	EXPECT_ERROR(dev, matcha_entry_modify(dev, "l2_fwd", 7, "drop", NULL, 0), MATCHA_ENOENT,
		     "table l2_fwd has no entry with handle 7");
	EXPECT_ERROR(dev, matcha_entry_delete(dev, "l2_fwd", 1), MATCHA_ENOENT,
		     "table l2_fwd has no entry with handle 1");

	/* Fill the table: table full comes with the driver's reason. */
	unsigned added = 1;
	int rc = 0;
	for (uint64_t k = 1; rc == 0 && k < 200; k++) {
		struct matcha_match mk = exact(val_u64(0x020000000000ull + k));
		rc = matcha_entry_add(dev, "l2_fwd", &mk, 1, "no_op", NULL, 0, -1, &h);
		added += rc == 0;
	}
	CHECK_RC(dev, rc, MATCHA_ENOSPC);
	CHECK(strstr(matcha_last_error(dev), "table l2_fwd: exact_add: table 0 has no room for "
		     "the key"));
	CHECK(added > 48 && added <= 64);

	/* Handles walk in order; delete takes the entry out of the hardware. */
	CHECK_OK(dev, matcha_entry_next(dev, "l2_fwd", 0, &next));
	CHECK(next == 0);
	CHECK_OK(dev, matcha_entry_read(dev, "l2_fwd", 0, &v)); /* cuckoo moves may have moved it */
	CHECK_OK(dev, matcha_entry_delete(dev, "l2_fwd", 0));
	CHECK_RC(dev, matcha_exact_lookup_sw(dev, 0, mac, 48, &index), MATCHA_ENOENT);
	CHECK_OK(dev, matcha_exact_read(dev, 0, v.index, &e));
	CHECK(!e.valid);
	CHECK_OK(dev, matcha_entry_next(dev, "l2_fwd", 0, &next));
	CHECK(next == 1);
	CHECK_RC(dev, matcha_entry_next(dev, "l2_fwd", added, &next), MATCHA_ENOENT);

	/* CLEAR forgets the handles; they count from 0 again. */
	CHECK_OK(dev, matcha_table_clear(dev, 0));
	CHECK_RC(dev, matcha_entry_next(dev, "l2_fwd", 0, &next), MATCHA_ENOENT);
	CHECK_OK(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "no_op", NULL, 0, -1, &h));
	CHECK(h == 0);
	matcha_close(dev);
	fake_free(fd);
}

void test_entries_lpm(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_l2l3(&fd);
	CHECK(dev);
	const uint8_t dmac[6] = { 0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE };
	const uint8_t smac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct matcha_value params[3] = { val_u64(3), val_bytes(dmac, 6), val_bytes(smac, 6) };
	struct matcha_match m = lpm(0x0A000000, 8);
	uint32_t h, result, index_after;
	struct matcha_entry e;
	CHECK_OK(dev, matcha_entry_add(dev, "ipv4_lpm", &m, 1, "route", params, 3, -1, &h));

	/* 100-bit action data, 13 bytes: port in bits 99..96, dmac 95..48, smac 47..0. */
	uint8_t want[13] = { 0x03 }, prefix[4] = { 10, 0, 0, 0 };
	memcpy(want + 1, dmac, 6);
	memcpy(want + 7, smac, 6);
	CHECK_OK(dev, matcha_lpm_read(dev, 1, prefix, 8, &result, &e));
	CHECK(e.valid && e.action_id == 0 && !memcmp(e.data, want, 13));
	uint32_t hit;
	uint8_t key[4] = { 10, 9, 8, 7 };
	CHECK_OK(dev, matcha_lpm_lookup_sw(dev, 1, key, &hit));
	CHECK(hit == result);

	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_entry_read(dev, "ipv4_lpm", h, &v));
	CHECK(!strcmp(v.action->name, "route") && v.nparams == 3 && v.index == result);
	for (unsigned p = 0; p < 3; p++)
		CHECK(!memcmp(&v.params[p], &params[p], sizeof params[p]));

	/* A plain value is a /32. */
	struct matcha_match host = exact(val_u64(0x0A000001));
	CHECK_OK(dev, matcha_entry_add(dev, "ipv4_lpm", &host, 1, "drop", NULL, 0, -1, &h));
	uint8_t host_key[4] = { 10, 0, 0, 1 };
	CHECK_OK(dev, matcha_lpm_read(dev, 1, host_key, 32, NULL, &e));
	CHECK(e.valid && e.action_id == 1);

	struct matcha_match bad = lpm(0x0A000000, 33);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "ipv4_lpm", &bad, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_E2BIG, "key field hdr.ipv4.dst is 32 bits: a /33 prefix is longer");
	bad = lpm(0x0A010000, 8);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "ipv4_lpm", &bad, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "key field hdr.ipv4.dst: 0xa010000 has bits set beyond its /8 "
		     "prefix");
	bad = ternary(0x0A000000, 0xFF000000);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "ipv4_lpm", &bad, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "table ipv4_lpm (kind lpm): key field hdr.ipv4.dst takes a "
		     "plain value or a prefix (value/length), not a ternary mask");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "ipv4_lpm", &m, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_EEXIST, "duplicate entry: handle 0 has the same key");
	struct matcha_value toobig = val_u64(1ull << 48);
	struct matcha_value p2[3] = { params[0], toobig, params[2] };
	EXPECT_ERROR(dev, matcha_entry_modify(dev, "ipv4_lpm", 0, "route", p2, 3), MATCHA_E2BIG,
		     "parameter dmac of action route takes 0..281474976710655 (48 bits): "
		     "281474976710656 (0x1000000000000) is out of range");

	/* A modify rewrites the result in place: the trie still leads to it, counts go on. */
	fake_hit(fd, 1, result, 1500);
	CHECK_OK(dev, matcha_entry_modify(dev, "ipv4_lpm", 0, "no_route", NULL, 0));
	CHECK_OK(dev, matcha_lpm_read(dev, 1, prefix, 8, &index_after, &e));
	CHECK(e.valid && e.action_id == 2 && index_after == result);
	CHECK_OK(dev, matcha_lpm_lookup_sw(dev, 1, key, &hit));
	CHECK(hit == result);
	uint64_t packets, bytes;
	CHECK_OK(dev, matcha_entry_counters(dev, "ipv4_lpm", 0, &packets, &bytes, 0));
	CHECK(packets == 1 && bytes == 1500 && fd->table[1].stale_writes == 0);

	/* The default action by name, read back raw. */
	uint8_t id, data[13];
	CHECK_OK(dev, matcha_default_set(dev, "ipv4_lpm", "route", params, 3));
	CHECK_OK(dev, matcha_table_get_default(dev, 1, &id, data, 100));
	CHECK(id == 0 && !memcmp(data, want, 13));
	const struct matcha_action_info *ac;
	struct matcha_value got[MATCHA_MAX_PARAMS];
	CHECK_OK(dev, matcha_default_get(dev, "ipv4_lpm", &ac, got));
	CHECK(!strcmp(ac->name, "route") && !memcmp(&got[1], &params[1], sizeof got[1]));
	CHECK_OK(dev, matcha_default_set(dev, "ipv4_lpm", "no_route", NULL, 0));
	CHECK_OK(dev, matcha_table_get_default(dev, 1, &id, data, 100));
	CHECK(id == 2);
	matcha_close(dev);
	fake_free(fd);
}

void test_entries_ternary_ranges(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_l2l3(&fd);
	CHECK(dev);
	/* src 10.0.0.0/8, dst 192.168.1.1, protocol 6, any source port, ports 80..90 */
	struct matcha_match m[5] = { lpm(0x0A000000, 8), exact(val_u64(0xC0A80101)),
				     exact(val_u64(6)), ternary(0, 0), range(80, 90) };
	uint32_t h;
	CHECK_OK(dev, matcha_entry_add(dev, "acl", m, 5, "deny", NULL, 0, 10, &h));
	/* 80..90 is 80/13 bits (80..87), 88/15 (88, 89), 90/16: three entries. */
	const uint16_t values[3] = { 80, 88, 90 }, masks[3] = { 0xFFF8, 0xFFFE, 0xFFFF };
	for (unsigned i = 0; i < 3; i++) {
		struct matcha_entry e;
		uint8_t key[13] = { 10, 0, 0, 0, 192, 168, 1, 1, 6, 0, 0,
				    (uint8_t)(values[i] >> 8), (uint8_t)values[i] };
		uint8_t mask[13] = { 0xFF, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0,
				     (uint8_t)(masks[i] >> 8), (uint8_t)masks[i] };
		CHECK_OK(dev, matcha_ternary_read(dev, 2, i, &e));
		CHECK_MSG(e.valid && e.action_id == 1 && e.priority == 10 && !memcmp(e.key, key, 13) &&
			  !memcmp(e.mask, mask, 13), "entry %u", i);
	}
	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_entry_read(dev, "acl", h, &v));
	CHECK(v.hw_entries == 3 && v.has_priority && v.priority == 10 &&
	      !strcmp(v.action->name, "deny"));

	/* Counts add up over the expansions. */
	fake_hit(fd, 2, 0, 100);
	fake_hit(fd, 2, 2, 60);
	fake_hit(fd, 2, 2, 64);
	uint64_t packets, bytes;
	CHECK_OK(dev, matcha_entry_counters(dev, "acl", h, &packets, &bytes, MATCHA_COUNTERS_RESET));
	CHECK(packets == 3 && bytes == 224);
	CHECK_OK(dev, matcha_entry_counters(dev, "acl", h, &packets, &bytes, 0));
	CHECK(packets == 0 && bytes == 0);

	/* A modify rewrites every expansion. */
	CHECK_OK(dev, matcha_entry_modify(dev, "acl", h, "to_host", NULL, 0));
	for (unsigned i = 0; i < 3; i++) {
		struct matcha_entry e;
		CHECK_OK(dev, matcha_ternary_read(dev, 2, i, &e));
		CHECK(e.valid && e.action_id == 2);
	}

	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", m, 5, "deny", NULL, 0, -1, &h),
		     MATCHA_EINVAL, "table acl is a ternary table: an entry needs a priority");
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", m, 5, "deny", NULL, 0, 10, &h),
		     MATCHA_EEXIST, "table acl: duplicate entry: handle 0 has the same match and "
		     "priority");
	/* 80&&&0xfff8 is the first of 80->90's prefixes. */
	struct matcha_match part[5] = { m[0], m[1], m[2], m[3], ternary(80, 0xFFF8) };
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", part, 5, "deny", NULL, 0, 10, &h),
		     MATCHA_EEXIST, "table acl: duplicate entry: handle 0 has the same value, mask "
		     "and priority in one of its entries");
	struct matcha_match bad[5] = { ternary(0x0A000001, 0xFF000000), m[1], m[2], m[3], m[4] };
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", bad, 5, "deny", NULL, 0, 1, &h),
		     MATCHA_EINVAL, "key field hdr.ipv4.src: value 0xa000001 has bits set outside "
		     "mask 0xff000000");
	bad[0] = m[0];
	bad[4] = range(90, 80);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", bad, 5, "deny", NULL, 0, 1, &h),
		     MATCHA_EINVAL, "key field hdr.tcp.dstPort|hdr.udp.dstPort: range 90->80 is "
		     "empty");
	bad[4] = range(1, 0x10000);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", bad, 5, "deny", NULL, 0, 1, &h),
		     MATCHA_E2BIG, "is 16 bits: range end 0x10000 does not fit");
	/* Two ranges of 30 prefixes each: 900 entries for a 64-entry table. */
	bad[3] = range(1, 65534);
	bad[4] = range(1, 65534);
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", bad, 5, "deny", NULL, 0, 1, &h),
		     MATCHA_ENOSPC, "table acl: the ranges expand to more entries than the table's "
		     "64");

	/* All or nothing: 62 of 64 used, an add of 3 expansions fails and leaves 62. */
	for (unsigned i = 0; i < 59; i++) {
		struct matcha_match r[5] = { exact(val_u64(i)), m[1], m[2], m[3], m[3] };
		CHECK_OK(dev, matcha_entry_add(dev, "acl", r, 5, "permit", NULL, 0, 1, &h));
	}
	struct matcha_match again[5] = { m[0], m[1], m[2], m[3], range(80, 90) };
	EXPECT_ERROR(dev, matcha_entry_add(dev, "acl", again, 5, "deny", NULL, 0, 99, &h),
		     MATCHA_ENOSPC, "table acl: ternary_add: table 2 is full (64 entries)");
	struct matcha_entry e;
	CHECK_OK(dev, matcha_ternary_read(dev, 2, 62, &e));
	CHECK(!e.valid);
	CHECK_OK(dev, matcha_ternary_read(dev, 2, 0, &e));
	CHECK(e.valid && e.priority == 10); /* the priority-99 copies went again */
	matcha_close(dev);
	fake_free(fd);
}

void test_entries_without_layout(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_match m = exact(val_u64(1));
	uint32_t h;
	unsigned t;
	EXPECT_ERROR(dev, matcha_entry_add(dev, "l2_fwd", &m, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_ELAYOUT, "entry_add: no layout loaded");
	EXPECT_ERROR(dev, matcha_table_by_name(dev, "l2_fwd", &t), MATCHA_ELAYOUT,
		     "tables have names only with a layout file");
	matcha_close(dev);
	fake_free(fd);
}

/* MAC 00:00:00:00:01:xx as a big-endian key, and the fake's entry holding it (-1 if none). */
static void mac_of(uint8_t low, uint8_t mac[6])
{
	const uint8_t m[6] = { 0, 0, 0, 0, 1, low };
	memcpy(mac, m, 6);
}

/* Whether the fake's hardware holds mac -> (action id, port) in table 0 (l2_fwd). */
static bool l2_holds(struct fake_dev *fd, uint8_t low, unsigned action_id, unsigned port)
{
	uint8_t mac[6];
	mac_of(low, mac);
	long i = fake_exact_find(fd, 0, mac, 48);
	if (i < 0)
		return false;
	const struct fake_entry *e = &fd->table[0].entries[i];
	return (e->flags & MATCHA_HW_FLAGS_VALID) &&
	       e->flags >> MATCHA_HW_FLAGS_ACTION_SHIFT == action_id && e->data[0] == port;
}

/* The entry calls through a table handle reach the table the handle names, as the
 * fake's memory shows; a handle needs an existing table, and a layout for its entries. */
void test_entries_table_handle(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_l2l3(&fd);
	CHECK(dev);
	matcha_table *t, *acl, *none = (matcha_table *)dev; /* must be overwritten with NULL */
	uint8_t mac[6];
	mac_of(7, mac);
	struct matcha_match m = exact(val_bytes(mac, 6));
	struct matcha_value port = val_u64(5);
	uint32_t h, next;

	CHECK_OK(dev, matcha_table_get(dev, "acl", &acl));
	CHECK(matcha_table_index(acl) == 2);
	EXPECT_ERROR(dev, matcha_table_get(dev, "l3", &none), MATCHA_ENOTABLE,
		     "unknown table \"l3\"");
	CHECK(none == NULL);
	EXPECT_ERROR(dev, matcha_table_at(dev, 3, &t), MATCHA_ENOTABLE,
		     "table_at: table 3 does not exist (3 tables)");

	CHECK_OK(dev, matcha_table_at(dev, 0, &t));
	CHECK_OK(dev, matcha_table_entry_add(t, &m, 1, "forward", &port, 1, MATCHA_NO_PRIORITY,
					     &h));
	CHECK(l2_holds(fd, 7, 1, 5));
	struct matcha_entry_view v;
	CHECK_OK(dev, matcha_table_entry_read(t, h, &v));
	CHECK(!strcmp(v.action->name, "forward") && v.params[0].be[MATCHA_VALUE_BYTES - 1] == 5);
	CHECK_OK(dev, matcha_table_entry_modify(t, h, "drop", NULL, 0));
	CHECK(l2_holds(fd, 7, 2, 0));
	fake_hit(fd, 0, (uint32_t)fake_exact_find(fd, 0, mac, 48), 100);
	uint64_t packets, bytes;
	CHECK_OK(dev, matcha_table_entry_counters(t, h, &packets, &bytes, 0));
	CHECK(packets == 1 && bytes == 100);
	CHECK_OK(dev, matcha_table_entry_next(t, 0, &next));
	CHECK(next == h);
	/* The handle's table, not another: acl has no entry h, and its match is ternary. */
	EXPECT_ERROR(dev, matcha_table_entry_delete(acl, h), MATCHA_ENOENT,
		     "table acl has no entry with handle 0");
	CHECK_OK(dev, matcha_table_entry_delete(t, h));
	CHECK(fake_exact_find(fd, 0, mac, 48) < 0);
	CHECK_RC(dev, matcha_table_entry_next(t, 0, &next), MATCHA_ENOENT);
	matcha_close(dev);
	fake_free(fd);

	/* Without a layout a handle by index exists, but its entries have no names. */
	struct fake_cfg cfg = fake_l2l3_cfg();
	fd = fake_new(&cfg);
	dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_table_at(dev, 0, &t));
	EXPECT_ERROR(dev, matcha_table_entry_add(t, &m, 1, "drop", NULL, 0, -1, &h),
		     MATCHA_ELAYOUT, "entry_add: no layout loaded");
	matcha_close(dev);
	fake_free(fd);
}

/*
 * A bulk add stops at the first entry that fails: the ones before it are in the fake's
 * memory with their handles, the failed one and those after it are not, and the message
 * names the failed entry's position and reason. The rest then goes in with a second call.
 */
void test_entries_bulk_add(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_l2l3(&fd);
	CHECK(dev);
	matcha_table *t;
	CHECK_OK(dev, matcha_table_get(dev, "l2_fwd", &t));
	enum { N = 6 };
	struct matcha_match match[N];
	struct matcha_value port[N];
	struct matcha_entry_spec spec[N];
	uint32_t handles[N];
	size_t added = N + 1;
	for (unsigned i = 0; i < N; i++) {
		uint8_t mac[6];
		/* Entry 3 repeats entry 1's key: the hardware refuses it as a duplicate. */
		mac_of(i == 3 ? 1 : (uint8_t)i, mac);
		match[i] = exact(val_bytes(mac, 6));
		port[i] = val_u64(i + 1);
		spec[i] = (struct matcha_entry_spec){ &match[i], 1, "forward", &port[i], 1,
						      MATCHA_NO_PRIORITY };
	}
	EXPECT_ERROR(dev, matcha_table_entries_add(t, spec, N, handles, &added), MATCHA_EEXIST,
		     "entry 3 of 6: table l2_fwd: duplicate entry: handle 1 has the same key");
	CHECK(added == 3);
	for (unsigned i = 0; i < 3; i++)
		CHECK_MSG(handles[i] == i && l2_holds(fd, (uint8_t)i, 1, i + 1),
			  "entry %u: handle %u", i, (unsigned)handles[i]);
	CHECK(l2_holds(fd, 1, 1, 2)); /* entry 1 as it was, not entry 3's port */
	CHECK(!l2_holds(fd, 4, 1, 5) && !l2_holds(fd, 5, 1, 6));
	uint32_t next;
	CHECK_RC(dev, matcha_table_entry_next(t, 3, &next), MATCHA_ENOENT);

	/* The rest, with entry 3 given a key of its own, goes in from where it stopped. */
	uint8_t mac[6];
	mac_of(3, mac);
	match[3] = exact(val_bytes(mac, 6));
	CHECK_OK(dev, matcha_table_entries_add(t, spec + added, N - added, handles + added,
					       &added));
	CHECK(added == N - 3);
	for (unsigned i = 3; i < N; i++)
		CHECK_MSG(handles[i] == i && l2_holds(fd, (uint8_t)i, 1, i + 1),
			  "entry %u: handle %u", i, (unsigned)handles[i]);
	/* A failure in the first entry adds nothing; its reason is the single add's. */
	struct matcha_value wide = val_u64(16);
	spec[0].params = &wide;
	mac_of(9, mac);
	match[0] = exact(val_bytes(mac, 6));
	EXPECT_ERROR(dev, matcha_table_entries_add(t, spec, 1, handles, &added), MATCHA_E2BIG,
		     "entry 0 of 1: parameter port of action forward takes 0..15");
	CHECK(added == 0 && fake_exact_find(fd, 0, mac, 48) < 0);
	matcha_close(dev);
	fake_free(fd);
}

/*
 * A second handle names the first one's entries whether its layout comes before the
 * adoption or after it; an entry whose action id the layout does not name is refused
 * either way.
 */
void test_entries_adopted(void)
{
	struct fake_dev *fd;
	matcha_dev *first = open_l2l3(&fd), *second;
	CHECK(first);
	const uint8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x07 };
	struct matcha_match m = exact(val_bytes(mac, 6));
	struct matcha_value port = val_u64(7);
	struct matcha_entry_view v;
	uint32_t h;
	CHECK_OK(first, matcha_entry_add(first, "l2_fwd", &m, 1, "forward", &port, 1,
					 MATCHA_NO_PRIORITY, &h));

	/* The layout after the adoption: the entry gets its handle when the layout comes. */
	second = fake_open(fd);
	CHECK(second);
	CHECK_OK(second, matcha_tables_adopt(second));
	CHECK_OK(second, matcha_layout_load(second, MATCHA_LAYOUT));
	CHECK_OK(second, matcha_entry_read(second, "l2_fwd", 0, &v));
	CHECK(!strcmp(v.action->name, "forward") && v.nparams == 1 &&
	      !memcmp(&v.params[0], &port, sizeof port) && v.nmatch == 1 &&
	      !memcmp(&v.match[0], &m, sizeof m));
	matcha_close(second);

	/* Action id 9, where l2_fwd's actions are 0..2 (docs/pipeline.md): with the layout
	 * first, the table is refused; with the layout after, the layout is. */
	CHECK_OK(first, matcha_exact_modify(first, 0, mac, 48, 9, NULL, 0));
	const char *want = "table l2_fwd holds action id 9, which the layout does not name "
			   "(adopting entry ";
	second = fake_open(fd);
	CHECK(second);
	CHECK_OK(second, matcha_layout_load(second, MATCHA_LAYOUT));
	EXPECT_ERROR(second, matcha_tables_adopt(second), MATCHA_EHW, want);
	EXPECT_ERROR(second, matcha_entry_read(second, "l2_fwd", 0, &v), MATCHA_EHW, want);
	matcha_close(second);
	second = fake_open(fd);
	CHECK(second);
	CHECK_OK(second, matcha_tables_adopt(second));
	EXPECT_ERROR(second, matcha_layout_load(second, MATCHA_LAYOUT), MATCHA_EHW, want);
	CHECK(!matcha_layout_program(second));
	matcha_close(second);
	matcha_close(first);
	fake_free(fd);
}
