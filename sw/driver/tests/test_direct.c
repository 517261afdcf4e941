/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Direct tables (kind 6) through the generic entry layer and matcha-ctl: the key is the
 * entry's index. The oracle is the fake's memory, read at the index the key names (docs/
 * tables.md, "Direct"), and action data packed by hand from the layout's parameter
 * offsets; the driver's shadow is never consulted.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctl.h"
#include "fake_dev.h"
#include "util.h"

#define DIRECT 0
#define SIZE 1000 /* not a power of two, as the generated unit */
#define BUILD_ID 0xD12EC7u

/* One table like matcha_direct_table (10-bit keys, 1000 entries, 40-bit data), with
 * per-entry counters as a table in a pipeline may have. */
static struct fake_cfg direct_cfg(void)
{
	struct fake_cfg c = {
		.magic = MATCHA_HW_INFO_MAGIC_VALUE,
		.version = MATCHA_HW_INFO_VERSION_VALUE,
		.build_id = BUILD_ID,
		.ntables = 1,
	};
	c.table[DIRECT] = (struct fake_table_cfg){ .kind = MATCHA_KIND_DIRECT, .key_bits = 10,
						   .size = SIZE, .data_bits = 40, .latency = 2,
						   .counters = true };
	return c;
}

/* "set" puts vni (24 bits) above mode (16 bits) in the action data. */
static const char layout[] =
	"{\"buildId\": 13708999, \"program\": {\"name\": \"eni\", \"tables\": [\n"
	"{\"name\": \"eni\", \"index\": 0, \"kind\": \"direct\", \"size\": 1000, \"keyWidth\": 10,\n"
	" \"dataWidth\": 40, \"latency\": 2, \"counters\": true,\n"
	" \"key\": [{\"fields\": [\"meta.eni\"], \"width\": 10}],\n"
	" \"actions\": [{\"name\": \"set\", \"id\": 1, \"params\": [\n"
	"   {\"name\": \"vni\", \"width\": 24, \"offset\": 16},\n"
	"   {\"name\": \"mode\", \"width\": 16, \"offset\": 0}], \"ops\": []},\n"
	"  {\"name\": \"drop\", \"id\": 2, \"params\": [], \"ops\": []}]}\n"
	"]}}\n";

static matcha_dev *open_direct(struct fake_dev *fd)
{
	return fake_open_layout(fd, layout, "eni.json");
}

static struct matcha_match key(uint64_t k)
{
	return (struct matcha_match){ .kind = MATCHA_MATCH_EXACT, .value = val_u64(k) };
}

/* Whether the fake holds entry `index` valid with this action, its data `vni << 16 | mode`
 * and no key. */
static bool holds(const struct fake_dev *fd, uint32_t index, unsigned action, uint32_t vni,
		  uint32_t mode)
{
	const struct fake_entry *e = &fd->table[DIRECT].entries[index];
	uint64_t data = (uint64_t)vni << 16 | mode;
	return e->flags == (FAKE_FLAGS_ACTION(action) | MATCHA_HW_FLAGS_VALID) && e->data[0] == (uint32_t)data &&
	       e->data[1] == (uint32_t)(data >> 32) && e->key[0] == 0;
}

static bool value_is(const struct matcha_value *v, uint64_t x)
{
	struct matcha_value want = val_u64(x);
	return !memcmp(v, &want, sizeof want);
}

static int add_set(matcha_dev *dev, uint64_t k, uint32_t vni, uint32_t mode, uint32_t *h)
{
	struct matcha_match m = key(k);
	struct matcha_value p[2] = { val_u64(vni), val_u64(mode) };
	return matcha_entry_add(dev, "eni", &m, 1, "set", p, 2, MATCHA_NO_PRIORITY, h);
}

void test_direct_add_modify_delete_read(void)
{
	struct fake_cfg cfg = direct_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = open_direct(fd);
	CHECK(dev);
	struct fake_table *t = &fd->table[DIRECT];
	uint32_t h, last, other;
	struct matcha_entry_view v;

	/* An add is a ZERO of the key's index and one WRITE of it. */
	unsigned long commands = fd->commands;
	CHECK_OK(dev, add_set(dev, 5, 0xABCDEF, 0x1234, &h));
	CHECK(fd->commands - commands == 2 && t->zeros == 1);
	CHECK(holds(fd, 5, 1, 0xABCDEF, 0x1234));
	for (unsigned i = 0; i < SIZE; i++)
		CHECK_MSG(i == 5 || !(t->entries[i].flags & 1), "entry %u valid", i);
	CHECK_OK(dev, add_set(dev, 0, 1, 2, &other));
	CHECK_OK(dev, add_set(dev, SIZE - 1, 3, 4, &last));
	CHECK(holds(fd, 0, 1, 1, 2) && holds(fd, SIZE - 1, 1, 3, 4));

	CHECK_OK(dev, matcha_entry_read(dev, "eni", h, &v));
	struct matcha_match m5 = key(5);
	CHECK(v.index == 5 && !strcmp(v.action->name, "set") && v.nparams == 2 &&
	      value_is(&v.params[0], 0xABCDEF) && value_is(&v.params[1], 0x1234) &&
	      v.nmatch == 1 && !memcmp(&v.match[0], &m5, sizeof m5) && !v.has_priority &&
	      v.hw_entries == 1);
	CHECK_OK(dev, matcha_entry_read(dev, "eni", last, &v));
	CHECK(v.index == SIZE - 1);

	/* Counts belong to the key's index; a modify keeps them, a re-add starts from 0. */
	fake_hit(fd, DIRECT, 5, 64);
	uint64_t packets, bytes;
	commands = fd->commands;
	CHECK_OK(dev, matcha_entry_modify(dev, "eni", h, "drop", NULL, 0));
	CHECK(fd->commands - commands == 1 && (t->entries[5].flags == (FAKE_FLAGS_ACTION(2) | MATCHA_HW_FLAGS_VALID)));
	CHECK_OK(dev, matcha_entry_counters(dev, "eni", h, &packets, &bytes, 0));
	CHECK(packets == 1 && bytes == 64);
	CHECK_OK(dev, matcha_entry_read(dev, "eni", h, &v));
	CHECK(!strcmp(v.action->name, "drop") && v.nparams == 0);

	commands = fd->commands;
	CHECK_OK(dev, matcha_entry_delete(dev, "eni", h));
	CHECK(fd->commands - commands == 1 && !(t->entries[5].flags & 1));
	CHECK(holds(fd, 0, 1, 1, 2) && holds(fd, SIZE - 1, 1, 3, 4));
	CHECK_RC(dev, matcha_entry_read(dev, "eni", h, &v), MATCHA_ENOENT);
	CHECK_OK(dev, add_set(dev, 5, 7, 8, &h));
	CHECK(holds(fd, 5, 1, 7, 8) && t->stale_writes == 0);
	CHECK_OK(dev, matcha_entry_counters(dev, "eni", h, &packets, &bytes, 0));
	CHECK(packets == 0 && bytes == 0);

	/* The hardware dropping an entry behind the driver's back is seen on read-back. */
	t->entries[SIZE - 1].flags = 0;
	CHECK_RC(dev, matcha_entry_read(dev, "eni", last, &v), MATCHA_EHW);
	CHECK(strstr(matcha_last_error(dev), "entry 999 reads back invalid"));
	matcha_close(dev);
	fake_free(fd);
}

void test_direct_key_errors(void)
{
	struct fake_cfg cfg = direct_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = open_direct(fd);
	CHECK(dev);
	uint32_t h;
	CHECK_OK(dev, add_set(dev, 17, 1, 1, &h));
	unsigned long writes = fd->writes;

	/* A key the 10-bit field holds but no entry has: 1000..1023. */
	CHECK_RC(dev, add_set(dev, SIZE, 1, 1, &h), MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(dev), "table eni: direct_add: key 1000 is beyond the "
			 "last entry of direct table 0 (keys 0..999"), "%s", matcha_last_error(dev));
	CHECK_RC(dev, add_set(dev, 1023, 1, 1, &h), MATCHA_EINVAL);
	/* Beyond the field: the entry layer refuses it before the table sees it. */
	CHECK_RC(dev, add_set(dev, 1024, 1, 1, &h), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "key field meta.eni is 10 bits"));
	/* The same key twice. */
	CHECK_RC(dev, add_set(dev, 17, 2, 2, &h), MATCHA_EEXIST);
	CHECK_MSG(strstr(matcha_last_error(dev), "duplicate entry: handle 0 has the same key"),
		  "%s", matcha_last_error(dev));
	/* A key is a plain value. */
	struct matcha_match prefix = { .kind = MATCHA_MATCH_LPM, .value = val_u64(16),
				       .prefix_len = 6 };
	CHECK_RC(dev, matcha_entry_add(dev, "eni", &prefix, 1, "drop", NULL, 0,
				       MATCHA_NO_PRIORITY, &h), MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(dev), "takes a plain value, not a prefix"), "%s",
		  matcha_last_error(dev));
	struct matcha_match k = key(3);
	CHECK_RC(dev, matcha_entry_add(dev, "eni", &k, 1, "drop", NULL, 0, 4, &h), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "its entries have no priority"));
	CHECK_MSG(fd->writes == writes, "refused calls wrote %lu registers", fd->writes - writes);
	CHECK(holds(fd, 17, 1, 1, 1));
	matcha_close(dev);
	fake_free(fd);
}

void test_direct_adopt(void)
{
	struct fake_cfg cfg = direct_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct fake_table *t = &fd->table[DIRECT];
	/* What an earlier handle left: entries at the first, a middle and the last index. */
	static const uint32_t at[] = { 0, 417, SIZE - 1 };
	for (unsigned i = 0; i < 3; i++) {
		t->entries[at[i]].flags = FAKE_FLAGS_ACTION(i == 1 ? 2 : 1) | MATCHA_HW_FLAGS_VALID;
		t->entries[at[i]].data[0] = (uint32_t)(at[i] << 16 | i);
	}
	matcha_dev *dev = open_direct(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_tables_adopt(dev));

	/* One handle per valid entry, in index order, with its key and parameters. */
	struct matcha_entry_view v;
	for (uint32_t h = 0; h < 3; h++) {
		CHECK_OK(dev, matcha_entry_read(dev, "eni", h, &v));
		struct matcha_match m = key(at[h]);
		CHECK_MSG(v.index == at[h] && !memcmp(&v.match[0], &m, sizeof m) &&
			  !strcmp(v.action->name, h == 1 ? "drop" : "set"),
			  "handle %u: index %u, action %s", (unsigned)h, (unsigned)v.index,
			  v.action->name);
		if (h != 1)
			CHECK(value_is(&v.params[0], at[h]) && value_is(&v.params[1], h));
	}
	uint32_t h;
	CHECK_RC(dev, matcha_entry_next(dev, "eni", 3, &h), MATCHA_ENOENT);

	/* The adopted entries are the driver's own: present to an add, gone on delete. */
	CHECK_RC(dev, add_set(dev, 417, 1, 1, &h), MATCHA_EEXIST);
	CHECK_OK(dev, matcha_entry_modify(dev, "eni", 1, "set",
					  (struct matcha_value[]){ val_u64(9), val_u64(10) }, 2));
	CHECK(holds(fd, 417, 1, 9, 10));
	CHECK_OK(dev, matcha_entry_delete(dev, "eni", 2));
	CHECK(!(t->entries[SIZE - 1].flags & 1));
	CHECK_OK(dev, add_set(dev, 1, 5, 6, &h));
	CHECK(h == 3 && holds(fd, 1, 1, 5, 6));
	matcha_close(dev);

	/* An action id the layout does not name is refused, naming the entry. */
	t->entries[600].flags = FAKE_FLAGS_ACTION(7) | MATCHA_HW_FLAGS_VALID;
	dev = open_direct(fd);
	CHECK(dev);
	CHECK_RC(dev, matcha_tables_adopt(dev), MATCHA_EHW);
	CHECK_MSG(strstr(matcha_last_error(dev), "holds action id 7, which the layout does not "
			 "name (adopting entry 600)"), "%s", matcha_last_error(dev));
	matcha_close(dev);
	fake_free(fd);
}

void test_direct_ctl(void)
{
	struct fake_cfg cfg = direct_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = open_direct(fd);
	CHECK(dev);
	char *out = NULL;
	size_t outlen = 0;
	FILE *stream = open_memstream(&out, &outlen);
	struct ctl c;
	ctl_init(&c, dev, stream);
	static const char *const lines[] = {
		"table_add eni set 7 => 0xABCDEF 9",
		"table_add eni drop 999 =>",
		"table_modify eni set 1 => 5 6",
		"table_dump eni",
		"table_delete eni 0",
		"table_dump eni",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		CHECK_MSG(ctl_execute(&c, lines[i]) == 0, "%s: %s", lines[i], c.error);
	CHECK(ctl_execute(&c, "table_add eni set 1000 => 1 2") != 0);
	CHECK_MSG(strstr(c.error, "key 1000 is beyond the last entry"), "%s", c.error);
	fclose(stream);
	CHECK_MSG(strstr(out, "table eni (direct, 1000 entries)\n  handle meta.eni => action\n"
			 "  0    7 => set(vni=11259375, mode=9)\n  1    999 => set(vni=5, mode=6)\n"
			 "2 entries\n"), "%s", out);
	CHECK_MSG(strstr(out, "  1    999 => set(vni=5, mode=6)\n1 entry\n"), "%s", out);
	CHECK(!(fd->table[DIRECT].entries[7].flags & 1) && holds(fd, 999, 1, 5, 6));
	free(out);
	matcha_close(dev);
	fake_free(fd);
}

void test_direct_discovery(void)
{
	struct fake_cfg cfg = direct_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_table_info in;
	CHECK_OK(dev, matcha_table_info(dev, DIRECT, &in));
	CHECK(in.kind == MATCHA_KIND_DIRECT && in.size == SIZE && in.key_bits == 10 &&
	      in.latency == 2);
	matcha_close(dev);
	fake_free(fd);

	/* Entries no key reaches, and keys wider than INDEX, are descriptors to refuse. */
	static const struct { unsigned key_bits, size; const char *says; } bad[] = {
		{ 10, 1025, "1025 entries, but 10-bit keys reach only 1024 of them" },
		{ 40, 16, "40-bit keys, but a key is an index of at most 32 bits" },
	};
	for (unsigned i = 0; i < 2; i++) {
		cfg = direct_cfg();
		cfg.table[DIRECT].key_bits = bad[i].key_bits;
		cfg.table[DIRECT].size = bad[i].size;
		fd = fake_new(&cfg);
		CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
		CHECK_MSG(strstr(matcha_last_error(dev), bad[i].says), "%s", matcha_last_error(dev));
		matcha_close(dev);
		fake_free(fd);
	}
}
