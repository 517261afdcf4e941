/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The layout reader against tests/data/l2l3_w64.layout.json and policer_w64.layout.json,
 * copies of the generator's build/rtl/w64/layout.json and layout-policer.json: committed so
 * that the C tests run without the JVM build; layout_copy_current checks them against
 * generated ones whenever there are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "fake_dev.h"

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc((size_t)n + 1);
	*len = fread(text, 1, (size_t)n, f);
	text[*len] = '\0';
	fclose(f);
	return text;
}

/* The text of layout `path` with the first `from` replaced by `to` (which must occur). */
char *test_layout_edited(const char *path, const char *from, const char *to, size_t *len)
{
	size_t n;
	char *text = read_text(path, &n);
	char *at = text ? strstr(text, from) : NULL;
	if (!at) {
		free(text);
		return NULL;
	}
	char *out = malloc(n + strlen(to) + 1);
	size_t head = (size_t)(at - text);
	memcpy(out, text, head);
	strcpy(out + head, to);
	strcat(out, at + strlen(from));
	*len = strlen(out);
	free(text);
	return out;
}

/* Loading text (or layout `path` edited from -> to) on `cfg` fails with `want` and
 * `needle`; the text is called `name` in messages. */
static bool load_fails_path(const struct fake_cfg *cfg, const char *path, const char *name,
			    const char *text, const char *from, const char *to, int want,
			    const char *needle)
{
	struct fake_dev *fd = fake_new(cfg);
	matcha_dev *dev = fake_open(fd);
	size_t len = text ? strlen(text) : 0;
	char *owned = text ? NULL : test_layout_edited(path, from, to, &len);
	bool ok = false;
	if (dev && (text || owned)) {
		int rc = matcha_layout_load_text(dev, text ? text : owned, len, name);
		ok = rc == want && strstr(matcha_last_error(dev), needle) &&
		     !matcha_layout_program(dev);
		if (!ok)
			check_fail(__FILE__, __LINE__, "returned %d, \"%s\"; expected %d and \"%s\"", rc,
				   matcha_last_error(dev), want, needle);
	} else
		check_fail(__FILE__, __LINE__, "no device, or \"%s\" is not in the layout", from);
	free(owned);
	matcha_close(dev);
	fake_free(fd);
	return ok;
}

static bool load_fails(const struct fake_cfg *cfg, const char *text, const char *from,
		       const char *to, int want, const char *needle)
{
	return load_fails_path(cfg, MATCHA_LAYOUT, "l2l3.json", text, from, to, want, needle);
}

/* The policer layout edited from -> to fails on `cfg` with MATCHA_ELAYOUT and `needle`. */
static bool policer_fails(const struct fake_cfg *cfg, const char *from, const char *to,
			  const char *needle)
{
	return load_fails_path(cfg, MATCHA_POLICER_LAYOUT, "policer.json", NULL, from, to,
			       MATCHA_ELAYOUT, needle);
}

void test_layout_good(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK(matcha_layout_table(dev, 0) == NULL && matcha_layout_program(dev) == NULL);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_LAYOUT));
	CHECK(!strcmp(matcha_layout_program(dev), "l2l3"));

	/* docs/pipeline.md, "The built-in program". */
	const struct matcha_table_layout *l2 = matcha_layout_table(dev, 0);
	CHECK(l2 && !strcmp(l2->name, "l2_fwd") && l2->kind == MATCHA_KIND_EXACT &&
	      l2->key_bits == 48 && l2->nfields == 1 && !strcmp(l2->fields[0].name, "hdr.eth.dst") &&
	      l2->fields[0].offset == 0 && l2->nactions == 3);
	CHECK(!strcmp(l2->actions[1].name, "forward") && l2->actions[1].id == 1 &&
	      l2->actions[1].nparams == 1 && !strcmp(l2->actions[1].params[0].name, "port") &&
	      l2->actions[1].params[0].width == 4 && l2->actions[1].params[0].offset == 0);
	CHECK(!strcmp(l2->default_action->name, "no_op"));

	const struct matcha_table_layout *lpm = matcha_layout_table(dev, 1);
	CHECK(lpm && !strcmp(lpm->name, "ipv4_lpm") && lpm->kind == MATCHA_KIND_LPM &&
	      lpm->data_bits == 100 && !strcmp(lpm->default_action->name, "no_route"));
	const struct matcha_action_info *route = matcha_action_by_name(lpm, "route");
	CHECK(route && route->id == 0 && route->nparams == 3);
	CHECK(!strcmp(route->params[0].name, "port") && route->params[0].offset == 96 &&
	      !strcmp(route->params[1].name, "dmac") && route->params[1].offset == 48 &&
	      route->params[1].width == 48 && !strcmp(route->params[2].name, "smac") &&
	      route->params[2].offset == 0);
	CHECK(matcha_action_by_name(lpm, "forward") == NULL);

	const struct matcha_table_layout *acl = matcha_layout_table(dev, 2);
	unsigned offsets[] = { 72, 40, 32, 16, 0 };
	CHECK(acl && acl->kind == MATCHA_KIND_TERNARY && acl->nfields == 5);
	for (unsigned f = 0; f < 5; f++)
		CHECK(acl->fields[f].offset == offsets[f]);
	CHECK(!strcmp(acl->fields[3].name, "hdr.tcp.srcPort|hdr.udp.srcPort") &&
	      acl->fields[3].width == 16);
	CHECK(matcha_layout_table(dev, 3) == NULL);

	unsigned t;
	CHECK_OK(dev, matcha_table_by_name(dev, "acl", &t));
	CHECK(t == 2);
	CHECK_RC(dev, matcha_table_by_name(dev, "ACL", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown table \"ACL\" (tables: l2_fwd, ipv4_lpm, "
		      "acl)"));
	matcha_close(dev);
	fake_free(fd);
}

void test_layout_build_id_mismatch(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	cfg.build_id = 0x0BADF00D;
	CHECK(load_fails(&cfg, NULL, "\"buildId\"", "\"buildId\"", MATCHA_ELAYOUT,
			 "layout l2l3.json: buildId is 314763857 (0x12c2ea51), the hardware's "
			 "BUILD_ID is 195948557 (0x0badf00d): the layout belongs to another "
			 "bitstream"));
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_RC(dev, matcha_layout_load(dev, MATCHA_LAYOUT), MATCHA_ELAYOUT);
	CHECK(strstr(matcha_last_error(dev), "l2l3_w64.layout.json: buildId is 314763857"));
	CHECK_RC(dev, matcha_layout_load(dev, "/nonexistent/layout.json"), MATCHA_ELAYOUT);
	CHECK(!strcmp(matcha_last_error(dev), "cannot open layout /nonexistent/layout.json: No "
		      "such file or directory"));
	matcha_close(dev);
	fake_free(fd);
}

void test_layout_disagrees_with_hardware(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	cfg.table[0].size = 128;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 0 (l2_fwd) has size 64, the hardware 128: the layout does not "
			 "describe this bitstream"));
	cfg = fake_l2l3_cfg();
	cfg.table[1].data_bits = 96;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 1 (ipv4_lpm) has dataWidth 100, the hardware 96"));
	cfg = fake_l2l3_cfg();
	fake_lpm_geometry(&cfg.table[1]);
	cfg.table[1].level_nodes[2] = 32;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 1 (ipv4_lpm) has lpm.nodes[2] 26, the hardware 32"));
	cfg = fake_l2l3_cfg();
	cfg.table[1].extra = 9;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 1 (ipv4_lpm) has lpm.fanout 10, the hardware 9"));
	cfg = fake_l2l3_cfg();
	cfg.table[2].counters = false;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 2 (acl) has counters 1, the hardware 0"));
	cfg = fake_l2l3_cfg();
	cfg.table[0].default_action = false;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 0 (l2_fwd) has a default action (1 yes, 0 no) 1, the hardware 0"));
	cfg = fake_l2l3_cfg();
	cfg.table[2].kind = MATCHA_KIND_EXACT;
	cfg.table[2].key_bits = 48;
	cfg.table[2].ways_or_levels = 4;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 2 (acl) is ternary in the layout, exact in the hardware"));
	cfg = fake_l2l3_cfg();
	cfg.ntables = 2;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "the program has 3 tables, the hardware 2"));
	cfg = fake_l2l3_cfg();
	cfg.table[0].latency = 4;
	CHECK(load_fails(&cfg, NULL, "x", "x", MATCHA_ELAYOUT,
			 "table 0 (l2_fwd) has latency 3, the hardware 4"));
	cfg = fake_l2l3_cfg();
	CHECK(load_fails(&cfg, NULL, "\"ways\": 4", "\"ways\": 2", MATCHA_ELAYOUT,
			 "table 0 (l2_fwd) has ways 2, the hardware 4"));
}

void test_layout_malformed_json(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	/* jansson's messages, with where it stopped; the driver's flags refuse duplicate
	 * members and take any top level (to name what it is). */
	static const struct {
		const char *text, *message;
	} cases[] = {
		{ "", "layout l2l3.json is not valid JSON: line 1, column 0: unexpected token near "
		      "end of file" },
		{ "{\n  \"buildId\": 1,\n}", "is not valid JSON: line 3, column 1: string or '}' "
					     "expected near '}'" },
		{ "{\"a\": 1} x", "line 1, column 10: end of file expected near 'x'" },
		{ "{\"a\": 1, \"a\": 2}", "line 1, column 12: duplicate object key near '\"a\"'" },
		{ "{\"a\": \"\\u0000\"}", "\\u0000 is not allowed" },
		{ "{\"a\": \"\xff\"}", "unable to decode byte 0xff" },
		{ "{\"a\": 99999999999999999999}", "too big integer" },
		/* valid JSON, not a layout */
		{ "[]", "layout l2l3.json: the top level is an array, not an object" },
		{ "1", "layout l2l3.json: the top level is a number, not an object" },
		{ "{}", "the layout has no \"buildId\"" },
		{ "{\"buildId\": \"1\"}", "\"buildId\" of the layout is a string, not a number" },
		{ "{\"buildId\": true}", "\"buildId\" of the layout is a boolean, not a number" },
		{ "{\"buildId\": 4294967296}", "buildId 4294967296 is not a 32-bit number" },
		{ "{\"buildId\": 1.5}", "buildId 1.5 is not a 32-bit number" },
		{ "{\"buildId\": 314763857}", "the layout has no \"program\"" },
		{ "{\"buildId\": 314763857, \"program\": {\"name\": \"x\", \"tables\": {}}}",
		  "\"tables\" of the program is an object, not an array" },
		{ "{\"buildId\": 314763857, \"program\": {\"name\": \"x\", \"tables\": [7, 8, 9]}}",
		  "table #0 is a number, not an object" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_MSG(load_fails(&cfg, cases[i].text, NULL, NULL, MATCHA_ELAYOUT,
				     cases[i].message), "case %zu", i);
	/* jansson's nesting limit (the README gives it): that deep parses (and is no layout),
	 * one more is refused. */
	char *deep = malloc(2 * (JSON_PARSER_MAX_DEPTH + 1) + 1);
	for (unsigned depth = JSON_PARSER_MAX_DEPTH; depth <= JSON_PARSER_MAX_DEPTH + 1; depth++) {
		memset(deep, '[', depth);
		memset(deep + depth, ']', depth);
		deep[2 * depth] = '\0';
		CHECK_MSG(load_fails(&cfg, deep, NULL, NULL, MATCHA_ELAYOUT,
				     depth == JSON_PARSER_MAX_DEPTH ? "the top level is an array" :
				     "maximum parsing depth reached"), "%u nested arrays", depth);
	}
	free(deep);
}

void test_layout_schema_errors(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	static const struct {
		const char *from, *to, *message;
	} cases[] = {
		{ "\"kind\": \"exact\"", "\"kind\": \"hash\"",
		  "table 0 (l2_fwd) has kind \"hash\" (a table's kind is one of exact, lpm, ternary, "
		  "direct, mem_exact)" },
		{ "\"index\": 1", "\"index\": 0", "two tables have index 0" },
		{ "\"index\": 2", "\"index\": 7", "table #2 has index 7, the hardware has 3 tables" },
		{ "\"name\": \"acl\"", "\"name\": \"l2_fwd\"", "tables 0 and 2 are both called l2_fwd" },
		{ "\"width\": 48}]", "\"width\": 40}]",
		  "the key fields of table 0 (l2_fwd) add up to 40 bits, its keyWidth is 48" },
		{ "\"offset\": 96", "\"offset\": 97",
		  "parameter port of action route (table 1 (ipv4_lpm)) takes bits 97..100, outside "
		  "the 100-bit action data" },
		{ "\"action\": \"no_route\"", "\"action\": \"route_all\"",
		  "the default action route_all of table 1 (ipv4_lpm) is not one of its actions" },
		{ "\"name\": \"drop\", \"id\": 2", "\"name\": \"drop\", \"id\": 1",
		  "actions forward and drop of table 0 (l2_fwd) share id 1" },
		{ "\"name\": \"deny\"", "\"name\": \"permit\"",
		  "table 2 (acl) has two actions called permit" },
		{ "\"counters\": true", "\"counters\": 1",
		  "\"counters\" of table 0 (l2_fwd) is a number, not a boolean" },
		{ "\"keyWidth\": 48", "\"keyWidth\": -48",
		  "\"keyWidth\" of table 0 (l2_fwd) is -48, not an integer in 0..512" },
		{ "\"program\": {", "\"programme\": {", "the layout has no \"program\"" },
		{ "\"keyWidth\": 48", "\"keyWidth\": 48.0",
		  "\"keyWidth\" of table 0 (l2_fwd) is 48.0, not an integer in 0..512" },
		/* What is wrong inside a table: the message names the place in it. */
		{ "\"fields\": [\"hdr.eth.dst\"]", "\"fields\": [\"hdr.eth.dst\", 3]",
		  "name #1 of key field #0 of table 0 (l2_fwd) is not a non-empty string" },
		{ "\"key\": [{\"fields\": [\"hdr.eth.dst\"]", "\"key\": [\"hdr.eth.dst\", {\"x\": []",
		  "key field #0 of table 0 (l2_fwd) is a string, not an object" },
		{ "{\"name\": \"port\", \"width\": 4, \"offset\": 0}", "{\"name\": \"port\", \"width\": 4}",
		  "parameter port of action forward of table 0 (l2_fwd) has no \"offset\"" },
		{ "{\"name\": \"drop\", \"id\": 2", "{\"name\": \"\", \"id\": 2",
		  "\"name\" of action #2 of table 0 (l2_fwd) is empty" },
		{ "\"default\": {\"action\": \"no_op\", \"data\": 0}", "\"default\": \"no_op\"",
		  "the default of table 0 (l2_fwd) is a string, not an object" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_MSG(load_fails(&cfg, NULL, cases[i].from, cases[i].to, MATCHA_ELAYOUT,
				     cases[i].message), "case %zu", i);
}

/* The program of the committed copy `copy` is that of the generated `built`, if there is one. */
static void copy_current(const char *copy_path, const char *built_path)
{
	FILE *f = fopen(built_path, "rb");
	if (!f) {
		printf("  no %s (make rtl): the committed copy is not compared\n", built_path);
		return;
	}
	fclose(f);
	json_t *a = json_load_file(built_path, 0, NULL), *b = json_load_file(copy_path, 0, NULL);
	/* json_equal: members in any order, numbers by value. */
	bool same = a && b && json_equal(json_object_get(a, "program"),
					 json_object_get(b, "program"));
	json_decref(a);
	json_decref(b);
	CHECK_MSG(same, "the program in %s differs from the generated one: cp %s %s",
		  copy_path, built_path, copy_path);
}

void test_layout_copy_current(void)
{
	copy_current(MATCHA_LAYOUT, MATCHA_BUILT_LAYOUT);
	copy_current(MATCHA_POLICER_LAYOUT, MATCHA_BUILT_POLICER_LAYOUT);
	copy_current(MATCHA_CONNTRACK_LAYOUT, MATCHA_BUILT_CONNTRACK_LAYOUT);
}

/* The conntrack layout edited from -> to fails on `cfg` with MATCHA_ELAYOUT and `needle`. */
static bool conntrack_fails(const struct fake_cfg *cfg, const char *from, const char *to,
			    const char *needle)
{
	return load_fails_path(cfg, MATCHA_CONNTRACK_LAYOUT, "conntrack.json", NULL, from, to,
			       MATCHA_ELAYOUT, needle);
}

void test_layout_conntrack_sessions(void)
{
	struct fake_cfg cfg = fake_conntrack_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	unsigned t;
	CHECK_RC(dev, matcha_session_by_name(dev, "sessions", &t), MATCHA_ELAYOUT);
	CHECK(matcha_layout_session(dev, 2) == NULL);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_CONNTRACK_LAYOUT));
	CHECK(!strcmp(matcha_layout_program(dev), "conntrack"));

	/* docs/pipeline.md, "The conntrack program": acl, by_session, then session table
	 * sessions after acl. */
	const struct matcha_table_layout *acl = matcha_layout_table(dev, 0);
	CHECK(acl && !strcmp(acl->name, "acl") && acl->kind == MATCHA_KIND_TERNARY);
	const struct matcha_table_layout *by_session = matcha_layout_table(dev, 1);
	CHECK(by_session && !strcmp(by_session->name, "by_session") && by_session->nfields == 3);
	CHECK(matcha_layout_table(dev, 2) == NULL && matcha_layout_meter(dev, 2) == NULL);
	const struct matcha_session_layout *s = matcha_layout_session(dev, 2);
	CHECK(s && !strcmp(s->name, "sessions") && s->table == 2 && s->size == 64 &&
	      s->ways == 4 && !strcmp(s->after, "acl"));
	CHECK(matcha_layout_session(dev, 0) == NULL && matcha_layout_session(dev, 3) == NULL);

	CHECK_OK(dev, matcha_session_by_name(dev, "sessions", &t));
	CHECK(t == 2);
	CHECK_RC(dev, matcha_session_by_name(dev, "acl", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown session table \"acl\" (session tables: "
		      "sessions)"));
	CHECK_RC(dev, matcha_table_by_name(dev, "sessions", &t), MATCHA_ENOTABLE);
	/* Adoption leaves the session table's slot of the layout alone. */
	CHECK_OK(dev, matcha_tables_adopt(dev));
	CHECK(matcha_layout_session(dev, 2) && matcha_layout_table(dev, 2) == NULL);
	matcha_close(dev);
	fake_free(fd);

	/* The policer layout has no session tables. */
	cfg = fake_policer_cfg();
	fd = fake_new(&cfg);
	dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_POLICER_LAYOUT));
	CHECK_RC(dev, matcha_session_by_name(dev, "sessions", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown session table \"sessions\" (session "
		      "tables: none)"));
	matcha_close(dev);
	fake_free(fd);
}

void test_layout_session_disagrees_with_hardware(void)
{
	struct fake_cfg cfg = fake_conntrack_cfg();
	cfg.table[2].size = 128;
	CHECK(conntrack_fails(&cfg, "x", "x", "layout conntrack.json: session table 2 (sessions) "
			      "has size 64, the hardware 128: the layout does not describe this "
			      "bitstream"));
	cfg = fake_conntrack_cfg();
	cfg.table[2].ways_or_levels = 2;
	CHECK(conntrack_fails(&cfg, "x", "x", "session table 2 (sessions) has ways 4, the "
			      "hardware 2"));
	cfg = fake_conntrack_cfg();
	cfg.table[2].latency = 5;
	CHECK(conntrack_fails(&cfg, "x", "x", "session table 2 (sessions) has latency 4, the "
			      "hardware 5"));
	cfg = fake_conntrack_cfg();
	cfg.table[2] = cfg.table[1];
	CHECK(conntrack_fails(&cfg, "x", "x", "session table 2 (sessions) is a session table in "
			      "the layout, exact in the hardware"));
	/* A session table where the layout has a table, a name clash, an unknown table to
	 * follow, and descriptor counts that disagree. */
	cfg = fake_conntrack_cfg();
	CHECK(conntrack_fails(&cfg, "\"name\": \"sessions\", \"index\": 2",
			      "\"name\": \"sessions\", \"index\": 1",
			      "session table #0 and table 1 (by_session) both have index 1"));
	CHECK(conntrack_fails(&cfg, "\"name\": \"sessions\"", "\"name\": \"acl\"",
			      "table 0 and session table 2 are both called acl"));
	CHECK(conntrack_fails(&cfg, "\"after\": \"acl\"", "\"after\": \"nat\"",
			      "session table 2 (sessions) follows table nat, which the program "
			      "does not have"));
	CHECK(conntrack_fails(&cfg, "\"sessions\": [", "\"sessions\": [], \"x\": [",
			      "the program has 2 tables, the hardware 3"));
	cfg.ntables = 2;
	CHECK(conntrack_fails(&cfg, "x", "x", "the program has 2 tables, 0 meter arrays and 1 "
			      "session tables, the hardware 2 descriptors"));
}

void test_layout_policer_meters(void)
{
	struct fake_cfg cfg = fake_policer_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	unsigned t;
	CHECK_RC(dev, matcha_meter_by_name(dev, "policers", &t), MATCHA_ELAYOUT);
	CHECK(matcha_layout_meter(dev, 2) == NULL);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_POLICER_LAYOUT));
	CHECK(!strcmp(matcha_layout_program(dev), "policer"));

	/* docs/pipeline.md, "The policer program": two tables, then meter array policers. */
	const struct matcha_table_layout *police = matcha_layout_table(dev, 0);
	CHECK(police && !strcmp(police->name, "police") && police->kind == MATCHA_KIND_EXACT);
	const struct matcha_action_info *pa = police ? matcha_action_by_name(police, "police") :
						       NULL;
	CHECK(pa && pa->nparams == 1 && !strcmp(pa->params[0].name, "meter") &&
	      pa->params[0].width == 6);
	const struct matcha_table_layout *by_colour = matcha_layout_table(dev, 1);
	CHECK(by_colour && !strcmp(by_colour->name, "by_colour") && by_colour->key_bits == 2);
	CHECK(matcha_layout_table(dev, 2) == NULL);
	const struct matcha_meter_layout *m = matcha_layout_meter(dev, 2);
	CHECK(m && !strcmp(m->name, "policers") && m->table == 2 && m->size == 64);
	CHECK(matcha_layout_meter(dev, 0) == NULL && matcha_layout_meter(dev, 3) == NULL);

	CHECK_OK(dev, matcha_meter_by_name(dev, "policers", &t));
	CHECK(t == 2);
	CHECK_RC(dev, matcha_meter_by_name(dev, "police", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown meter array \"police\" (meter arrays: "
		      "policers)"));
	CHECK_RC(dev, matcha_table_by_name(dev, "policers", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown table \"policers\" (tables: police, "
		      "by_colour)"));
	/* Adoption and a clear leave the meter array's slot of the layout alone. */
	CHECK_OK(dev, matcha_tables_adopt(dev));
	CHECK_OK(dev, matcha_table_clear(dev, 2));
	CHECK(matcha_layout_meter(dev, 2) && matcha_layout_table(dev, 2) == NULL);
	matcha_close(dev);
	fake_free(fd);

	/* The l2l3 layout has no meter arrays: no meter has a name. */
	cfg = fake_l2l3_cfg();
	fd = fake_new(&cfg);
	dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_LAYOUT));
	CHECK_RC(dev, matcha_meter_by_name(dev, "policers", &t), MATCHA_ENOTABLE);
	CHECK(!strcmp(matcha_last_error(dev), "unknown meter array \"policers\" (meter arrays: "
		      "none)"));
	matcha_close(dev);
	fake_free(fd);
}

void test_layout_meter_disagrees_with_hardware(void)
{
	struct fake_cfg cfg = fake_policer_cfg();
	cfg.table[2].size = 128;
	cfg.table[2].key_bits = 7;
	CHECK(policer_fails(&cfg, "x", "x", "layout policer.json: meter array 2 (policers) has "
			    "size 64, the hardware 128: the layout does not describe this "
			    "bitstream"));
	cfg = fake_policer_cfg();
	cfg.table[2].latency = 7;
	CHECK(policer_fails(&cfg, "x", "x", "meter array 2 (policers) has latency 6, the "
			    "hardware 7"));
	/* Descriptor 2 an exact table, the layout's meter array there. */
	cfg = fake_policer_cfg();
	cfg.table[2] = cfg.table[0];
	CHECK(policer_fails(&cfg, "x", "x", "meter array 2 (policers) is a meter array in the "
			    "layout, exact in the hardware"));
	/* A meter array where the hardware has a table, and the reverse. */
	cfg = fake_policer_cfg();
	CHECK(policer_fails(&cfg, "\"name\": \"policers\", \"index\": 2",
			    "\"name\": \"policers\", \"index\": 1",
			    "meter array #0 and table 1 (by_colour) both have index 1"));
	CHECK(policer_fails(&cfg, "\"name\": \"by_colour\", \"index\": 1",
			    "\"name\": \"by_colour\", \"index\": 2",
			    "table 2 (by_colour) is exact in the layout, meter in the hardware"));
}

void test_layout_meter_descriptors_covered_once(void)
{
	struct fake_cfg cfg = fake_policer_cfg();
	/* Described twice: a second meter array on descriptor 2 (and one too many entries). */
	CHECK(policer_fails(&cfg, "\"meters\": [",
			    "\"meters\": [{\"name\": \"extra\", \"index\": 2, \"size\": 64, "
			    "\"latency\": 6}, ",
			    "the program has 2 tables and 2 meter arrays, the hardware 3 descriptors"));
	/* Described twice with the counts right: descriptor 1 is then described by nothing. */
	CHECK(policer_fails(&cfg, "\"name\": \"by_colour\", \"index\": 1",
			    "\"name\": \"by_colour\", \"index\": 0",
			    "two tables have index 0"));
	/* Not described: the meters list left out, or empty. */
	CHECK(policer_fails(&cfg, "\"meters\": [", "\"no_meters\": [",
			    "the program has 2 tables, the hardware 3"));
	cfg.ntables = 2;
	CHECK(policer_fails(&cfg, "x", "x", "the program has 2 tables and 1 meter arrays, the "
			    "hardware 2 descriptors"));
	/* A second meter array in the hardware: the layout's two on one descriptor, or with
	 * one name. */
	cfg = fake_policer_cfg();
	cfg.ntables = 4;
	cfg.table[3] = cfg.table[2];
	CHECK(policer_fails(&cfg, "\"meters\": [",
			    "\"meters\": [{\"name\": \"extra\", \"index\": 2, \"size\": 64, "
			    "\"latency\": 6}, ", "two meter arrays have index 2"));
	CHECK(policer_fails(&cfg, "\"meters\": [",
			    "\"meters\": [{\"name\": \"policers\", \"index\": 3, \"size\": 64, "
			    "\"latency\": 6}, ", "meter arrays 3 and 2 are both called policers"));
	cfg = fake_policer_cfg();
	CHECK(policer_fails(&cfg, "\"index\": 2, \"size\"", "\"index\": 3, \"size\"",
			    "meter array #0 has index 3, the hardware has 3 descriptors"));
	CHECK(policer_fails(&cfg, "\"meters\": [", "\"meters\": 7, \"was\": [",
			    "\"meters\" of the program is a number, not an array"));
}
