/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha-ctl's interpreter (ctl/ctl.c) on the fake device with the built-in program's
 * layout: value and match syntax, every command and its errors, batches checked entry by
 * entry through the library's read-back, and a time-bounded fuzz of lines and batches.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream, fmemopen */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ctl.h"
#include "fake_dev.h"
#include "sim_server.h"
#include "util.h"

struct session {
	struct fake_dev *fd;
	matcha_dev *dev;
	struct ctl c;
	char *out;
	size_t outlen;
	FILE *stream;
};

/* A session on `cfg` with `layout` loaded (none if NULL). */
static bool session_open_on(struct session *s, const struct fake_cfg *cfg, const char *layout)
{
	memset(s, 0, sizeof *s);
	s->fd = fake_new(cfg);
	s->dev = fake_open(s->fd);
	if (!s->dev || (layout && matcha_layout_load(s->dev, layout)))
		return false;
	s->stream = open_memstream(&s->out, &s->outlen);
	ctl_init(&s->c, s->dev, s->stream);
	return true;
}

/* The l2l3 program (most commands). */
static bool session_open(struct session *s)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	return session_open_on(s, &cfg, MATCHA_LAYOUT);
}

/* The policer program: tables police and by_colour, meter array policers. */
static bool policer_session_open(struct session *s)
{
	struct fake_cfg cfg = fake_policer_cfg();
	return session_open_on(s, &cfg, MATCHA_POLICER_LAYOUT);
}

static void session_close(struct session *s)
{
	if (s->stream)
		fclose(s->stream);
	free(s->out);
	matcha_close(s->dev);
	fake_free(s->fd);
}

/* Runs a line; returns what it printed (valid until the next run). */
static const char *run(struct session *s, const char *line, int *rc)
{
	fflush(s->stream);
	size_t start = s->outlen;
	*rc = ctl_execute(&s->c, line);
	fflush(s->stream);
	return s->out ? s->out + start : "";
}

#define RUN_OK(s, line, expect)                                                              \
	do {                                                                                 \
		int rc_;                                                                     \
		const char *out_ = run(s, line, &rc_);                                       \
		CHECK_MSG(rc_ == 0, "\"%s\" failed: %s", line, (s)->c.error);               \
		CHECK_MSG(strstr(out_, expect), "\"%s\" printed \"%s\", expected \"%s\"", line, \
			  out_, expect);                                                     \
	} while (0)

/* A line that runs and prints nothing. */
#define RUN_SILENT(s, line)                                                                  \
	do {                                                                                 \
		int rc_;                                                                     \
		const char *out_ = run(s, line, &rc_);                                       \
		CHECK_MSG(rc_ == 0 && !*out_, "\"%s\": %d, %s", line, rc_, (s)->c.error);    \
	} while (0)

#define RUN_FAILS(s, line, code, message)                                                    \
	do {                                                                                 \
		int rc_;                                                                     \
		run(s, line, &rc_);                                                          \
		CHECK_MSG(rc_ == (code), "\"%s\" returned %d, expected %d (%s)", line, rc_,  \
			  (int)(code), (s)->c.error);                                        \
		CHECK_MSG(strstr((s)->c.error, message), "\"%s\": message \"%s\", expected \"%s\"", \
			  line, (s)->c.error, message);                                      \
	} while (0)

/* On `cfg` with no layout loaded, `line` fails with MATCHA_ELAYOUT and `message`;
 * table_info, which needs no names, still shows the hardware. */
static void fails_without_layout(const struct fake_cfg *cfg, const char *line,
				 const char *message)
{
	struct fake_dev *fd = fake_new(cfg);
	matcha_dev *dev = fake_open(fd);
	struct ctl c;
	FILE *null = fopen("/dev/null", "w");
	ctl_init(&c, dev, null);
	CHECK_MSG(ctl_execute(&c, line) == MATCHA_ELAYOUT && strstr(c.error, message),
		  "\"%s\": message \"%s\", expected \"%s\"", line, c.error, message);
	CHECK(ctl_execute(&c, "table_info") == 0);
	fclose(null);
	matcha_close(dev);
	fake_free(fd);
}

/* Every candidate ctl_complete gives for the last word of `line`, joined by spaces. */
static const char *completions(const struct ctl *c, const char *line)
{
	static char all[1024];
	const char *space = strrchr(line, ' ');
	size_t start = space ? (size_t)(space - line) + 1 : 0, len = 0;
	const char *name;
	all[0] = '\0';
	for (unsigned n = 0; (name = ctl_complete(c, line, start, line + start, n)); n++)
		len += (size_t)snprintf(all + len, sizeof all - len, "%s%s", n ? " " : "", name);
	return all;
}

/* Tab completion: commands as ctl.c's table lists them; names from docs/pipeline.md's
 * l2l3 and policer programs (tables l2_fwd, ipv4_lpm, acl; ipv4_lpm's actions route,
 * drop, no_route; meter array policers). */
void test_ctl_completion(void)
{
	static const struct {
		const char *line, *want;
	} l2l3[] = {
		{ "", "table_add table_delete table_modify table_dump table_clear table_set_default "
		      "counter_read counter_reset table_info meter_set_rates meter_get_rates "
		      "meter_reset set_clock_hz session_dump session_delete session_flush "
		      "session_stats session_set_timeout session_get_timeout session_set_tick "
		      "session_set_scan_interval session_set_policy session_get_policy app_control help quit" },
		{ "table_", "table_add table_delete table_modify table_dump table_clear "
			    "table_set_default table_info" },
		{ "table_s", "table_set_default" },
		{ "x", "" },
		{ "table_add ", "l2_fwd ipv4_lpm acl" },
		{ "table_add  i", "ipv4_lpm" },
		{ "table_dump a", "acl" },
		{ "table_info ", "l2_fwd ipv4_lpm acl" },
		{ "table_add ipv4_lpm ", "route drop no_route" },
		{ "table_modify ipv4_lpm no", "no_route" },
		{ "table_set_default l2_fwd ", "no_op forward drop" },
		{ "table_add nosuch ", "" },
		{ "table_add l2_fwd forward ", "" },
		{ "table_delete l2_fwd ", "" },
		{ "help t", "table_add table_delete table_modify table_dump table_clear "
			    "table_set_default table_info" },
		{ "nosuch ", "" },
		/* no meter arrays or session tables in l2l3 */
		{ "meter_reset ", "" },
		{ "session_dump ", "" },
	};
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	struct ctl c;
	CHECK(dev);
	ctl_init(&c, dev, stdout);
	/* No layout, no names. */
	CHECK_MSG(!strcmp(completions(&c, "table_add "), ""), "%s", completions(&c, "table_add "));
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_LAYOUT));
	for (size_t i = 0; i < sizeof l2l3 / sizeof l2l3[0]; i++)
		CHECK_MSG(!strcmp(completions(&c, l2l3[i].line), l2l3[i].want),
			  "\"%s\": \"%s\", expected \"%s\"", l2l3[i].line,
			  completions(&c, l2l3[i].line), l2l3[i].want);
	matcha_close(dev);
	fake_free(fd);

	cfg = fake_policer_cfg();
	fd = fake_new(&cfg);
	dev = fake_open(fd);
	CHECK(dev);
	ctl_init(&c, dev, stdout);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_POLICER_LAYOUT));
	CHECK(!strcmp(completions(&c, "meter_set_rates "), "policers"));
	CHECK(!strcmp(completions(&c, "meter_get_rates po"), "policers"));
	CHECK(!strcmp(completions(&c, "table_add "), "police by_colour"));
	matcha_close(dev);
	fake_free(fd);

	cfg = fake_conntrack_cfg();
	fd = fake_new(&cfg);
	dev = fake_open(fd);
	CHECK(dev);
	ctl_init(&c, dev, stdout);
	CHECK_OK(dev, matcha_layout_load(dev, MATCHA_CONNTRACK_LAYOUT));
	CHECK(!strcmp(completions(&c, "session_stats "), "sessions"));
	CHECK(!strcmp(completions(&c, "table_clear "), "acl by_session"));
	matcha_close(dev);
	fake_free(fd);
}

void test_ctl_values(void)
{
	static const struct {
		const char *text;
		uint64_t want;
	} good[] = {
		{ "0", 0 }, { "4294967296", 1ull << 32 }, { "0x0A000001", 0x0A000001 },
		{ "0X1f", 0x1F }, { "10.0.0.1", 0x0A000001 }, { "255.255.255.255", 0xFFFFFFFF },
		{ "00:11:22:33:44:55", 0x001122334455ull }, { "0:1:2:3:4:5", 0x000102030405ull },
		{ "aa:BB:cc:DD:ee:FF", 0xAABBCCDDEEFFull },
		{ "18446744073709551615", UINT64_MAX },
	};
	char err[300];
	struct matcha_value v;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct matcha_value want = val_u64(good[i].want);
		CHECK_MSG(ctl_parse_value(good[i].text, &v, err, sizeof err) == 0, "%s: %s",
			  good[i].text, err);
		CHECK_MSG(!memcmp(&v, &want, sizeof v), "%s", good[i].text);
	}
	/* IPv6, RFC 4291 section 2.2 forms */
	static const struct {
		const char *text;
		uint8_t want[16];
	} v6[] = {
		{ "2001:db8::1", { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } },
		{ "::", { 0 } },
		{ "::1", { [15] = 1 } },
		{ "fe80::", { 0xfe, 0x80 } },
		{ "1:2:3:4:5:6:7:8", { 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8 } },
		{ "00::22:33:44:55", { [8] = 0, 0x22, 0, 0x33, 0, 0x44, 0, 0x55 } },
		/* IPv4-mapped (RFC 4291 2.5.5.2): the IPv4 address in the last 32 bits */
		{ "::ffff:10.0.0.1", { [10] = 0xff, 0xff, 10, 0, 0, 1 } },
		{ "64:ff9b::192.0.2.33", { 0, 0x64, 0xff, 0x9b, [12] = 192, 0, 2, 33 } },
	};
	for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
		CHECK_MSG(ctl_parse_value(v6[i].text, &v, err, sizeof err) == 0, "%s: %s", v6[i].text,
			  err);
		CHECK_MSG(!memcmp(v.be + MATCHA_VALUE_BYTES - 16, v6[i].want, 16) && v.be[47] == 0,
			  "%s", v6[i].text);
	}
	/* 2^64 and a 512-bit maximum */
	CHECK(ctl_parse_value("18446744073709551616", &v, err, sizeof err) == 0);
	CHECK(v.be[MATCHA_VALUE_BYTES - 9] == 1 && v.be[MATCHA_VALUE_BYTES - 1] == 0);
	char hex[140] = "0x";
	memset(hex + 2, 'f', 128);
	hex[130] = '\0';
	CHECK(ctl_parse_value(hex, &v, err, sizeof err) == 0 && v.be[0] == 0xFF);
	strcat(hex, "f");

	const struct {
		const char *text, *message;
	} bad[] = {
		{ "", "empty value" },
		{ "0x", "\"0x\": no hex digits after 0x" },
		{ "0xfg", "\"0xfg\" is not a hex number" },
		{ "12a", "\"12a\" is not a number (decimal, 0x hex, an IPv4 or a MAC address)" },
		{ "-1", "is not a number" },
		{ "1.2.3", "\"1.2.3\" is not an IPv4 address (four numbers 0..255 separated by '.', "
			   "no leading zeros)" },
		{ "256.1.1.1", "is not an IPv4 address" },
		{ "1.2.3.4.5", "is not an IPv4 address" },
		{ "1..2.3", "is not an IPv4 address" },
		{ "0001.2.3.4", "is not an IPv4 address" },
		{ "010.0.0.1", "is not an IPv4 address" },
		{ "1.2.3.4:5", "is not a MAC address" },
		{ "00:11:22:33:44", "\"00:11:22:33:44\" is not a MAC address (six hex bytes "
				    "separated by ':')" },
		{ "00:11:22:33:44:55:66", "is not a MAC address" },
		{ "00:11:22:33:44:555", "is not a MAC address" },
		{ "00:11:22:33:44:5g", "is not a MAC address" },
		{ "00:11:22:33:44:5 ", "is not a MAC address" }, /* ether_aton_r takes it */
		{ "000:11:22:33:44:55", "is not a MAC address" },
		{ "00:11:22:33:44:55:66:77:88", "nor an IPv6 address" },
		{ "1::2::3", "is not a MAC address (six hex bytes separated by ':') nor an IPv6 "
			     "address" },
		{ "12345::", "nor an IPv6 address" },
		{ ":1", "nor an IPv6 address" },
		{ "1:", "nor an IPv6 address" },
		{ "1:2:3:4:5:6:7", "nor an IPv6 address" },
		{ "1:2:3:4::5:6:7:8", "nor an IPv6 address" },
		{ hex, "is wider than 512 bits" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_MSG(ctl_parse_value(bad[i].text, &v, err, sizeof err) == MATCHA_EINVAL, "%s",
			  bad[i].text);
		CHECK_MSG(strstr(err, bad[i].message), "%s: \"%s\"", bad[i].text, err);
	}
	char dec[200];
	memset(dec, '9', 160); /* 10^160 > 2^512 */
	dec[160] = '\0';
	CHECK(ctl_parse_value(dec, &v, err, sizeof err) == MATCHA_EINVAL &&
	      strstr(err, "is wider than 512 bits"));
}

void test_ctl_matches(void)
{
	char err[300];
	struct matcha_match m;
	struct matcha_value a = val_u64(0x0A000000), b = val_u64(0xFF000000);
	CHECK(ctl_parse_match("10.0.0.0/8", &m, err, sizeof err) == 0);
	CHECK(m.kind == MATCHA_MATCH_LPM && m.prefix_len == 8 && !memcmp(&m.value, &a, sizeof a));
	CHECK(ctl_parse_match("0x0a000000&&&255.0.0.0", &m, err, sizeof err) == 0);
	CHECK(m.kind == MATCHA_MATCH_TERNARY && !memcmp(&m.value, &a, sizeof a) &&
	      !memcmp(&m.mask, &b, sizeof b));
	CHECK(ctl_parse_match("80->90", &m, err, sizeof err) == 0);
	a = val_u64(80);
	b = val_u64(90);
	CHECK(m.kind == MATCHA_MATCH_RANGE && !memcmp(&m.value, &a, sizeof a) &&
	      !memcmp(&m.high, &b, sizeof b));
	CHECK(ctl_parse_match("00:11:22:33:44:55", &m, err, sizeof err) == 0);
	a = val_u64(0x001122334455ull);
	CHECK(m.kind == MATCHA_MATCH_EXACT && !memcmp(&m.value, &a, sizeof a));

	static const struct {
		const char *text, *message;
	} bad[] = {
		{ "10.0.0.0/", "\"10.0.0.0/\": the prefix length after '/' must be a number "
			       "0..512" },
		{ "10.0.0.0/513", "must be a number 0..512" },
		{ "10.0.0.0/8/8", "must be a number" },
		{ "10.0.0.0/x", "must be a number" },
		{ "/8", "empty value" },
		{ "1&&&", "empty value" },
		{ "&&&1", "empty value" },
		{ "1&&&2&&&3", "is not a number" },
		{ "->5", "empty value" },
		{ "5->", "empty value" },
		{ "1->2->3", "is not a number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_MSG(ctl_parse_match(bad[i].text, &m, err, sizeof err) == MATCHA_EINVAL, "%s",
			  bad[i].text);
		CHECK_MSG(strstr(err, bad[i].message), "%s: \"%s\"", bad[i].text, err);
	}
}

void test_ctl_commands(void)
{
	struct session s;
	CHECK(session_open(&s));
	const uint8_t mac[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
	struct matcha_entry e;
	uint32_t index;

	RUN_OK(&s, "table_add l2_fwd forward 00:11:22:33:44:55 => 5",
	       "Entry added to l2_fwd with handle 0\n");
	CHECK_OK(s.dev, matcha_exact_lookup_sw(s.dev, 0, mac, 48, &index));
	CHECK_OK(s.dev, matcha_exact_read(s.dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 1 && e.data[0] == 5);
	RUN_OK(&s, "table_modify l2_fwd drop 0 =>", "Entry 0 of l2_fwd modified");
	CHECK_OK(s.dev, matcha_exact_read(s.dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 2);
	RUN_OK(&s, "  table_add   ipv4_lpm route 10.0.0.0/8=>1 02:00:00:00:00:01 0x020000000002",
	       "Entry added to ipv4_lpm with handle 0");
	uint8_t prefix[4] = { 10, 0, 0, 0 }, want[13] = { 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	CHECK_OK(s.dev, matcha_lpm_read(s.dev, 1, prefix, 8, NULL, &e));
	CHECK(e.valid && e.action_id == 0 && !memcmp(e.data, want, 13));
	RUN_OK(&s, "table_add acl deny 10.0.0.0&&&255.0.0.0 0&&&0 6 0&&&0 80->90 => 10",
	       "Entry added to acl with handle 0");
	RUN_OK(&s, "table_add acl to_host 0&&&0 192.168.0.0/16 17 53 0&&&0 => 20",
	       "with handle 1");
	CHECK_OK(s.dev, matcha_ternary_read(s.dev, 2, 0, &e));
	CHECK(e.valid && e.priority == 20 && e.action_id == 2); /* the higher priority first */

	RUN_OK(&s, "table_dump acl",
	       "table acl (ternary, 64 entries)\n"
	       "  handle hdr.ipv4.src hdr.ipv4.dst hdr.ipv4.protocol hdr.tcp.srcPort|hdr.udp.srcPort "
	       "hdr.tcp.dstPort|hdr.udp.dstPort => action\n"
	       "  0    10.0.0.0&&&255.0.0.0 0.0.0.0&&&0.0.0.0 6 0&&&0 80->90 => deny() priority 10 "
	       "[3 hardware entries]\n"
	       "  1    0.0.0.0&&&0.0.0.0 192.168.0.0/16 17 53 0&&&0 => to_host() priority 20\n"
	       "  default => permit()\n"
	       "2 entries\n");
	RUN_OK(&s, "table_set_default ipv4_lpm no_route", "set to no_route");
	RUN_OK(&s, "table_dump ipv4_lpm",
	       "  0    10.0.0.0/8 => route(port=1, dmac=02:00:00:00:00:01, smac=02:00:00:00:00:02)\n"
	       "  default => no_route()\n1 entry\n");
	RUN_OK(&s, "table_set_default l2_fwd forward => 3", "Default action of l2_fwd set to forward");
	uint8_t id, data[1];
	CHECK_OK(s.dev, matcha_table_get_default(s.dev, 0, &id, data, 4));
	CHECK(id == 1 && data[0] == 3);
	RUN_OK(&s, "table_set_default l2_fwd no_op", "set to no_op");
	RUN_OK(&s, "table_dump l2_fwd", "  0    00:11:22:33:44:55 => drop()\n  default => no_op()\n");

	fake_hit(s.fd, 2, 0, 100); /* to_host (handle 1) sits first, priority 20 */
	fake_hit(s.fd, 2, 2, 60);  /* deny's second expansion */
	RUN_OK(&s, "counter_read acl 0", "acl[0]: packets=1 bytes=60\n");
	RUN_OK(&s, "counter_reset acl 1", "acl[1]: packets=1 bytes=100 (now reset)\n");
	RUN_OK(&s, "counter_read acl 1", "acl[1]: packets=0 bytes=0\n");
	RUN_OK(&s, "table_delete acl 0", "Entry 0 deleted from acl");
	CHECK_OK(s.dev, matcha_ternary_read(s.dev, 2, 1, &e));
	CHECK(!e.valid);
	RUN_OK(&s, "table_clear l2_fwd", "Table l2_fwd cleared");
	CHECK_RC(s.dev, matcha_exact_lookup_sw(s.dev, 0, mac, 48, &index), MATCHA_ENOENT);
	RUN_OK(&s, "table_info", "build id 0x12c2ea51, 3 tables, program l2l3\n"
	       "0 l2_fwd: exact, 64 entries, 48-bit key, 4-bit action data, counters, default "
	       "action\n  key: hdr.eth.dst[48]\n  action no_op() (initial default)\n"
	       "  action forward(port[4])\n");
	RUN_OK(&s, "table_info ipv4_lpm", "  action route(port[4], dmac[48], smac[48])\n");
	RUN_OK(&s, "help", "table_add          <table> <action> <match fields> => <action params> "
	       "[priority]\n");
	RUN_OK(&s, "help table_add", "  range     80->90");
	RUN_SILENT(&s, "# a comment");
	RUN_SILENT(&s, "   ");
	CHECK(!s.c.quit);
	RUN_SILENT(&s, "quit");
	CHECK(s.c.quit);
	session_close(&s);
}

/* On a 32-bit key field ::ffff:a.b.c.d is a.b.c.d, its prefix counted from the IPv4
 * address; on a wider field it stays the 128-bit address. */
void test_ctl_ipv4_mapped_on_ipv4_keys(void)
{
	struct session s;
	CHECK(session_open(&s));
	struct matcha_entry e;
	RUN_OK(&s, "table_add ipv4_lpm route ::ffff:10.0.0.0/104 => 1 02:00:00:00:00:01 "
		   "0x020000000002", "Entry added to ipv4_lpm with handle 0");
	uint8_t prefix[4] = { 10, 0, 0, 0 };
	CHECK_OK(s.dev, matcha_lpm_read(s.dev, 1, prefix, 8, NULL, &e));
	CHECK(e.valid && e.action_id == 0);
	RUN_FAILS(&s, "table_add ipv4_lpm drop 10.0.0.0/8 =>", MATCHA_EEXIST, "duplicate entry");
	RUN_FAILS(&s, "table_add ipv4_lpm drop ::ffff:10.0.0.0/64 =>", MATCHA_EINVAL,
		  "an IPv4-mapped prefix on a 32-bit field must be at least /96");
	RUN_OK(&s, "table_add acl deny ::ffff:10.0.0.1 0&&&0 6 0&&&0 ::ffff:0.0.0.80->90 => 10",
	       "Entry added to acl with handle 0");
	CHECK_OK(s.dev, matcha_ternary_read(s.dev, 2, 0, &e));
	CHECK(e.valid && e.key[0] == 10 && e.key[3] == 1 && e.mask[0] == 0xFF && e.mask[3] == 0xFF);
	/* Not IPv4-mapped, or a field wider than 32 bits: the whole address. */
	RUN_FAILS(&s, "table_add ipv4_lpm drop ::10.0.0.0/104 =>", MATCHA_E2BIG,
		  "key field hdr.ipv4.dst is 32 bits: a /104 prefix is longer");
	RUN_OK(&s, "table_add l2_fwd forward ::ffff:10.0.0.1 => 5", "Entry added to l2_fwd");
	const uint8_t wide[6] = { 0xFF, 0xFF, 10, 0, 0, 1 };
	uint32_t index;
	CHECK_OK(s.dev, matcha_exact_lookup_sw(s.dev, 0, wide, 48, &index));
	session_close(&s);
}

void test_ctl_command_errors(void)
{
	struct session s;
	CHECK(session_open(&s));
	RUN_OK(&s, "table_add l2_fwd forward 00:11:22:33:44:55 => 5", "handle 0");
	RUN_OK(&s, "table_add acl deny 1 2 3 4 5 => 1", "handle 0");
	static const struct {
		const char *line;
		int code;
		const char *message;
	} cases[] = {
		{ "table_ad l2_fwd", MATCHA_EINVAL, "unknown command \"table_ad\" (help lists the "
						    "commands)" },
		{ "table_add l2_fwd forward 00:11:22:33:44:66 5", MATCHA_EINVAL,
		  "table_add: usage: table_add <table> <action> <match fields> => <action params> "
		  "[priority]" },
		{ "table_add l3 forward 1 => 5", MATCHA_ENOTABLE,
		  "table_add: unknown table \"l3\" (tables: l2_fwd, ipv4_lpm, acl)" },
		{ "table_add l2_fwd fwd 1 => 5", MATCHA_EINVAL,
		  "table_add: table l2_fwd has no action \"fwd\" (actions: no_op, forward, drop)" },
		{ "table_add l2_fwd forward 1 2 => 5", MATCHA_EINVAL,
		  "table_add: table l2_fwd takes 1 match field (hdr.eth.dst), 2 given" },
		{ "table_add acl deny 1 2 3 4 => 1", MATCHA_EINVAL,
		  "takes 5 match fields (hdr.ipv4.src hdr.ipv4.dst hdr.ipv4.protocol "
		  "hdr.tcp.srcPort|hdr.udp.srcPort hdr.tcp.dstPort|hdr.udp.dstPort), 4 given" },
		{ "table_add l2_fwd forward 00:11:22:33:44:5g => 5", MATCHA_EINVAL,
		  "table_add: match field hdr.eth.dst: \"00:11:22:33:44:5g\" is not a MAC address" },
		{ "table_add l2_fwd forward 1&&&1 => 5", MATCHA_EINVAL,
		  "table_add: table l2_fwd (kind exact): key field hdr.eth.dst takes a plain "
		  "value, not a ternary mask (value&&&mask)" },
		{ "table_add l2_fwd forward 1/48 => 5", MATCHA_EINVAL, "not a prefix (value/length)" },
		{ "table_add l2_fwd forward 1->5 => 5", MATCHA_EINVAL, "not a range (low->high)" },
		{ "table_add l2_fwd forward 0x1000000000000 => 5", MATCHA_E2BIG,
		  "table_add: key field hdr.eth.dst is 48 bits: 0x1000000000000 does not fit" },
		{ "table_add l2_fwd forward 00:11:22:33:44:55 => 6", MATCHA_EEXIST,
		  "table_add: table l2_fwd: duplicate entry: handle 0 has the same key" },
		{ "table_add l2_fwd forward 1 => 16", MATCHA_E2BIG,
		  "table_add: parameter port of action forward takes 0..15 (4 bits): 16 (0x10) is out of range" },
		{ "table_add l2_fwd forward 1 => 0x1z", MATCHA_EINVAL,
		  "table_add: parameter port: \"0x1z\" is not a hex number" },
		{ "table_add l2_fwd forward 1 =>", MATCHA_EINVAL,
		  "table_add: action forward of table l2_fwd takes 1 parameter (port), 0 given" },
		{ "table_add l2_fwd forward 1 => 1 2 3", MATCHA_EINVAL,
		  "action forward of table l2_fwd takes 1 parameter (port), 3 given" },
		{ "table_add l2_fwd forward 1 => 1 7", MATCHA_EINVAL,
		  "table l2_fwd (kind exact): its entries have no priority" },
		{ "table_add acl deny 1 2 3 4 5 =>", MATCHA_EINVAL,
		  "table_add: table acl is a ternary table: an entry needs a priority in "
		  "0..4294967295 (higher wins)" },
		{ "table_add acl deny 1 2 3 4 5 => 4294967296", MATCHA_EINVAL,
		  "table_add: priority \"4294967296\" is not a number 0..4294967295" },
		{ "table_add acl deny 1 2 3 4 5 => 1", MATCHA_EEXIST,
		  "duplicate entry: handle 0 has the same match and priority" },
		{ "table_add acl deny 1&&&0 2 3 4 5 => 1", MATCHA_EINVAL,
		  "key field hdr.ipv4.src: value 0x1 has bits set outside mask 0x0" },
		{ "table_add acl deny 1 2 300 4 5 => 1", MATCHA_E2BIG,
		  "key field hdr.ipv4.protocol is 8 bits: 0x12c does not fit" },
		{ "table_add acl deny 1 2 3 4 90->80 => 1", MATCHA_EINVAL, "range 90->80 is empty" },
		{ "table_add ipv4_lpm drop 10.0.0.0/33 =>", MATCHA_E2BIG,
		  "key field hdr.ipv4.dst is 32 bits: a /33 prefix is longer" },
		{ "table_add ipv4_lpm drop 10.0.0.1/8 =>", MATCHA_EINVAL,
		  "0xa000001 has bits set beyond its /8 prefix" },
		{ "table_add ipv4_lpm drop 10.0.0.0&&&255.0.0.0 =>", MATCHA_EINVAL,
		  "table ipv4_lpm (kind lpm): key field hdr.ipv4.dst takes a plain value or a prefix" },
		{ "table_delete l2_fwd", MATCHA_EINVAL, "table_delete: usage: table_delete <table> "
							"<handle>" },
		{ "table_delete l2_fwd x", MATCHA_EINVAL,
		  "table_delete: handle \"x\" is not a number 0..4294967295" },
		{ "table_delete l2_fwd 9", MATCHA_ENOENT,
		  "table_delete: table l2_fwd has no entry with handle 9" },
		{ "table_delete l2 0", MATCHA_ENOTABLE, "table_delete: unknown table \"l2\"" },
		{ "table_modify l2_fwd drop 0", MATCHA_EINVAL, "table_modify: usage" },
		{ "table_modify l2_fwd drop 3 =>", MATCHA_ENOENT, "no entry with handle 3" },
		{ "table_modify l2_fwd dropp 0 =>", MATCHA_EINVAL, "has no action \"dropp\"" },
		{ "table_modify l2_fwd forward 0 => 99", MATCHA_E2BIG,
		  "takes 0..15 (4 bits): 99 (0x63) is out of range" },
		{ "table_dump", MATCHA_EINVAL, "table_dump: usage: table_dump <table>" },
		{ "table_dump x", MATCHA_ENOTABLE, "table_dump: unknown table \"x\"" },
		{ "table_clear", MATCHA_EINVAL, "table_clear: usage" },
		{ "table_set_default l2_fwd", MATCHA_EINVAL, "table_set_default: usage" },
		{ "table_set_default l2_fwd forward", MATCHA_EINVAL,
		  "action forward of table l2_fwd takes 1 parameter (port), 0 given" },
		{ "table_set_default l2_fwd route => 1", MATCHA_EINVAL, "has no action \"route\"" },
		{ "counter_read l2_fwd", MATCHA_EINVAL, "counter_read: usage" },
		{ "counter_read l2_fwd 5", MATCHA_ENOENT,
		  "counter_read: table l2_fwd has no entry with handle 5" },
		{ "counter_reset acl -1", MATCHA_EINVAL, "handle \"-1\" is not a number" },
		{ "table_info a b", MATCHA_EINVAL, "table_info: usage" },
		{ "table_info x", MATCHA_ENOTABLE, "table_info: unknown table \"x\"" },
		{ "help table_ad", MATCHA_EINVAL, "help: no command \"table_ad\"" },
		{ "help a b", MATCHA_EINVAL, "help: usage" },
		{ "quit now", MATCHA_EINVAL, "quit: usage" },
		{ "table_add l2_fwd\x01 x", MATCHA_EINVAL, "control character 0x01 in the line" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		RUN_FAILS(&s, cases[i].line, cases[i].code, cases[i].message);

	/* Table full, with the driver's reason. */
	char line[200];
	int rc = 0;
	for (unsigned i = 1; rc == 0 && i < 100; i++) {
		snprintf(line, sizeof line, "table_add acl permit %u 0 0 0 0 => 1", i);
		run(&s, line, &rc);
	}
	CHECK(rc == MATCHA_ENOSPC && strstr(s.c.error, "table_add: table acl: ternary_add: table "
					    "2 is full (64 entries)"));
	char words[2 * CTL_MAX_WORDS + 10] = "";
	for (unsigned i = 0; i <= CTL_MAX_WORDS; i++)
		strcat(words, "x ");
	RUN_FAILS(&s, words, MATCHA_EINVAL, "more than 160 words on one line");
	char *longline = malloc(CTL_MAX_LINE + 2);
	memset(longline, 'a', CTL_MAX_LINE + 1);
	longline[CTL_MAX_LINE + 1] = '\0';
	RUN_FAILS(&s, longline, MATCHA_EINVAL, "line longer than 4096 characters");
	free(longline);
	session_close(&s);

	/* Without a layout, names mean nothing. */
	struct fake_cfg cfg = fake_l2l3_cfg();
	fails_without_layout(&cfg, "table_dump l2_fwd", "table_dump: tables have names only "
			     "with a layout: start matcha-ctl with --layout FILE");
}

/* ------------------------------------------------------------------------- meters */

/* The policer array's descriptor in the policer program. */
#define POLICERS 2

/* Meter `index` reads back through matcha_meter_get as `want`: flags and bursts exactly,
 * rates within the 0.1 % matcha_meter_set promises. */
static bool meter_reads_back(struct session *s, uint32_t index,
			     const struct matcha_meter_config *want)
{
	struct matcha_meter_config got;
	uint64_t committed, peak;
	int rc = matcha_meter_get(s->dev, POLICERS, index, &got, &committed, &peak);
	bool ok = rc == 0 && got.flags == want->flags && got.cburst == want->cburst &&
		  got.pburst == want->pburst && got.cir * 1000 >= want->cir * 999 &&
		  got.cir * 1000 <= want->cir * 1001 && got.pir * 1000 >= want->pir * 999 &&
		  got.pir * 1000 <= want->pir * 1001;
	if (!ok)
		check_fail(__FILE__, __LINE__, "meter %u: rc %d, flags 0x%x cir %llu cbs %llu pir "
			   "%llu pbs %llu; expected flags 0x%x cir %llu cbs %llu pir %llu pbs %llu",
			   (unsigned)index, rc, got.flags, (unsigned long long)got.cir,
			   (unsigned long long)got.cburst, (unsigned long long)got.pir,
			   (unsigned long long)got.pburst, want->flags,
			   (unsigned long long)want->cir, (unsigned long long)want->cburst,
			   (unsigned long long)want->pir, (unsigned long long)want->pburst);
	return ok;
}

void test_ctl_meter_commands(void)
{
	struct session s;
	CHECK(policer_session_open(&s));
	char expect[400];

	/* meter_reset needs no clock; the rate commands do. */
	RUN_OK(&s, "meter_reset policers 3", "Meter policers[3] reset");
	RUN_FAILS(&s, "meter_set_rates policers 3 125000:10000", MATCHA_EINVAL,
		  "meter_set_rates: the pipeline's clock frequency is not known: start matcha-ctl "
		  "with --clock-hz HZ or run set_clock_hz HZ first");
	RUN_FAILS(&s, "meter_get_rates policers 3", MATCHA_EINVAL,
		  "meter_get_rates: the pipeline's clock frequency is not known");
	RUN_OK(&s, "set_clock_hz 250000000", "Clock set to 250000000 Hz");

	/* Two pairs: trTCM by default. */
	RUN_OK(&s, "meter_set_rates policers 3 125000:10000 250000:20000",
	       "Meter policers[3] set");
	struct matcha_meter_config m = { .flags = MATCHA_METER_TWO_RATE, .cir = 125000,
					 .cburst = 10000, .pir = 250000, .pburst = 20000 };
	CHECK(meter_reads_back(&s, 3, &m));
	/* What meter_get_rates prints is what matcha_meter_get reads. */
	struct matcha_meter_config got;
	uint64_t committed, peak;
	CHECK_OK(s.dev, matcha_meter_get(s.dev, POLICERS, 3, &got, &committed, &peak));
	CHECK(committed == 10000 && peak == 20000); /* a write fills both buckets */
	snprintf(expect, sizeof expect, "policers[3]: trtcm (RFC 2698), color-blind, bytes\n"
		 "  committed: rate %llu bytes/s, burst 10000 bytes, 10000 tokens\n"
		 "  peak:      rate %llu bytes/s, burst 20000 bytes, 20000 tokens\n",
		 (unsigned long long)got.cir, (unsigned long long)got.pir);
	RUN_OK(&s, "meter_get_rates policers 3", expect);

	/* One pair: srTCM with no excess bucket. */
	RUN_OK(&s, "meter_set_rates policers 0 1000000:65536", "Meter policers[0] set");
	m = (struct matcha_meter_config){ .cir = 1000000, .cburst = 65536 };
	CHECK(meter_reads_back(&s, 0, &m));
	CHECK_OK(s.dev, matcha_meter_get(s.dev, POLICERS, 0, &got, NULL, NULL));
	snprintf(expect, sizeof expect, "policers[0]: srtcm (RFC 2697), color-blind, bytes\n"
		 "  committed: rate %llu bytes/s, burst 65536 bytes, 65536 tokens\n"
		 "  excess:    burst 0 bytes (fills at the committed rate), 0 tokens\n",
		 (unsigned long long)got.cir);
	RUN_OK(&s, "meter_get_rates policers 0", expect);

	/* srTCM with an excess bucket, colour-aware, counting packets; options in any order. */
	RUN_OK(&s, "meter_set_rates policers 63 1000:10 0:30 packets srtcm color-aware",
	       "Meter policers[63] set");
	m = (struct matcha_meter_config){ .flags = MATCHA_METER_COLOR_AWARE | MATCHA_METER_PACKETS,
					  .cir = 1000, .cburst = 10, .pburst = 30 };
	CHECK(meter_reads_back(&s, 63, &m));
	RUN_OK(&s, "meter_get_rates policers 63", "policers[63]: srtcm (RFC 2697), color-aware, "
	       "packets\n  committed: rate 1000 packets/s, burst 10 packets, 10 tokens\n"
	       "  excess:    burst 30 packets (fills at the committed rate), 30 tokens\n");

	/* trtcm named explicitly, 0x hex accepted; a later set replaces the configuration. */
	RUN_OK(&s, "meter_set_rates policers 3 0x1e848:0x400 0x3d090:0x800 trtcm color-aware",
	       "Meter policers[3] set");
	m = (struct matcha_meter_config){ .flags = MATCHA_METER_TWO_RATE |
						   MATCHA_METER_COLOR_AWARE,
					  .cir = 125000, .cburst = 1024, .pir = 250000,
					  .pburst = 2048 };
	CHECK(meter_reads_back(&s, 3, &m));

	/* meter_reset unconfigures. */
	RUN_OK(&s, "meter_reset policers 3", "Meter policers[3] reset");
	CHECK(matcha_meter_get(s.dev, POLICERS, 3, &got, NULL, NULL) == MATCHA_ENOENT);
	RUN_OK(&s, "meter_get_rates policers 3",
	       "policers[3]: not configured (marks every packet green)\n");

	/* Help and table_info know the meters. */
	RUN_OK(&s, "help meter_set_rates", "rates in bytes per\nsecond, bursts in bytes");
	RUN_OK(&s, "table_info", "2 policers: meter array, 64 meters\n");
	session_close(&s);
}

void test_ctl_meter_command_errors(void)
{
	struct session s;
	CHECK(policer_session_open(&s));
	RUN_FAILS(&s, "meter_set_rates policers 1 1000:10", MATCHA_EINVAL,
		  "clock frequency is not known");
	RUN_OK(&s, "set_clock_hz 0xee6b280", "Clock set to 250000000 Hz");
	RUN_OK(&s, "meter_set_rates policers 5 125000:10000 250000:20000 trtcm", "set");
	static const struct {
		const char *line;
		int code;
		const char *message;
	} cases[] = {
		/* usage, from the command table */
		{ "meter_set_rates policers 5", MATCHA_EINVAL,
		  "meter_set_rates: usage: meter_set_rates <meter> <index> <cir>:<cburst> "
		  "[<pir>:<pburst>] [srtcm|trtcm] [color-aware] [packets]" },
		{ "meter_get_rates policers", MATCHA_EINVAL,
		  "meter_get_rates: usage: meter_get_rates <meter> <index>" },
		{ "meter_get_rates policers 1 2", MATCHA_EINVAL, "meter_get_rates: usage:" },
		{ "meter_reset policers", MATCHA_EINVAL,
		  "meter_reset: usage: meter_reset <meter> <index>" },
		{ "set_clock_hz", MATCHA_EINVAL, "set_clock_hz: usage: set_clock_hz <hz>" },
		{ "set_clock_hz 1 2", MATCHA_EINVAL, "set_clock_hz: usage:" },
		/* names and indexes */
		{ "meter_set_rates police 0 1:1", MATCHA_ENOTABLE,
		  "meter_set_rates: unknown meter array \"police\" (meter arrays: policers)" },
		{ "meter_get_rates meters 0", MATCHA_ENOTABLE,
		  "meter_get_rates: unknown meter array \"meters\"" },
		{ "meter_reset by_colour 0", MATCHA_ENOTABLE,
		  "meter_reset: unknown meter array \"by_colour\"" },
		{ "meter_set_rates policers x 1:1", MATCHA_EINVAL,
		  "meter_set_rates: meter index \"x\" is not a number 0..4294967295" },
		{ "meter_set_rates policers 64 1000:100", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: meter 64 is out of range (table 2 has 64 meters)" },
		{ "meter_get_rates policers 64", MATCHA_EINVAL,
		  "meter_get_rates: meter_get: meter 64 is out of range" },
		{ "meter_reset policers 4294967295", MATCHA_EINVAL,
		  "meter_reset: meter_set: meter 4294967295 is out of range" },
		/* pairs and numbers */
		{ "meter_set_rates policers 1 1000", MATCHA_EINVAL,
		  "meter_set_rates: the committed pair \"1000\" is not <rate>:<burst>" },
		{ "meter_set_rates policers 1 abc:10", MATCHA_EINVAL,
		  "meter_set_rates: committed rate \"abc\" is not a number (decimal or 0x hex)" },
		{ "meter_set_rates policers 1 1000:", MATCHA_EINVAL,
		  "meter_set_rates: committed burst \"\" is not a number" },
		{ "meter_set_rates policers 1 1000:10 2000:1:2", MATCHA_EINVAL,
		  "meter_set_rates: peak burst \"1:2\" is not a number" },
		{ "meter_set_rates policers 1 1.2.3.4:10", MATCHA_EINVAL,
		  "committed rate \"1.2.3.4\" is not a number" },
		{ "meter_set_rates policers 1 18446744073709551616:10", MATCHA_EINVAL,
		  "meter_set_rates: committed rate \"18446744073709551616\" is wider than 64 bits" },
		/* options */
		{ "meter_set_rates policers 1 1000:10 blind", MATCHA_EINVAL,
		  "meter_set_rates: unknown option \"blind\" (srtcm, trtcm, color-aware, packets)" },
		{ "meter_set_rates policers 1 1000:10 2000:20 3000:30", MATCHA_EINVAL,
		  "meter_set_rates: unknown option \"3000:30\"" },
		{ "meter_set_rates policers 1 1000:10 packets packets", MATCHA_EINVAL,
		  "meter_set_rates: option packets given twice" },
		{ "meter_set_rates policers 1 1000:10 2000:20 trtcm srtcm", MATCHA_EINVAL,
		  "meter_set_rates: srtcm and trtcm: a meter is one or the other (given: trtcm, "
		  "then srtcm)" },
		/* the RFCs' rules and the hardware's ranges, from the library */
		{ "meter_set_rates policers 1 2000:10 1000:20", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: PIR 1000 is below CIR 2000 (RFC 2698: PIR >= CIR)" },
		{ "meter_set_rates policers 1 1000:10 trtcm", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: PIR 0 is below CIR 1000" },
		{ "meter_set_rates policers 1 1000:0 2000:20", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: a two-rate meter needs CBS and PBS above 0" },
		{ "meter_set_rates policers 1 1000:10 2000:20 srtcm", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: a single-rate meter has no PIR (its excess bucket "
		  "fills at CIR): pir must be 0, got 2000" },
		{ "meter_set_rates policers 1 1000:0", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: a single-rate meter needs CBS or EBS above 0" },
		{ "meter_set_rates policers 1 1000:1099511627776", MATCHA_E2BIG,
		  "meter_set_rates: meter_set: burst 1099511627776 bytes exceeds the largest the "
		  "meter holds, 1099511627775" },
		{ "meter_set_rates policers 1 1:1000000000", MATCHA_EINVAL,
		  "meter_set_rates: meter_set: CIR 1 bytes/s with bursts of 1000000000 and 0 bytes "
		  "cannot be held within 0.1 %" },
		{ "set_clock_hz 0", MATCHA_EINVAL, "set_clock_hz: the clock frequency is 0" },
		{ "set_clock_hz 250MHz", MATCHA_EINVAL,
		  "set_clock_hz: clock frequency \"250MHz\" is not a number" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		RUN_FAILS(&s, cases[i].line, cases[i].code, cases[i].message);
	/* None of the failures touched a meter (nor the clock: meter 5 reads back the same). */
	struct matcha_meter_config m = { .flags = MATCHA_METER_TWO_RATE, .cir = 125000,
					 .cburst = 10000, .pir = 250000, .pburst = 20000 };
	CHECK(meter_reads_back(&s, 5, &m));
	struct matcha_meter_config got;
	CHECK(matcha_meter_get(s.dev, POLICERS, 1, &got, NULL, NULL) == MATCHA_ENOENT);
	session_close(&s);

	/* Without a layout, meter arrays have no names. */
	struct fake_cfg cfg = fake_policer_cfg();
	fails_without_layout(&cfg, "meter_reset policers 0", "meter_reset: meter arrays have "
			     "names only with a layout: start matcha-ctl with --layout FILE");
}

/* ---------------------------------------------------------------- session tables */

#define SESSIONS FAKE_SESSION_TABLE

/* The session device (fake_session_cfg), without a layout: session tables are named by
 * index. */
static bool sessions_open(struct session *s)
{
	struct fake_cfg cfg = fake_session_cfg();
	return session_open_on(s, &cfg, NULL);
}

/* Entry `way` of the candidate slots of canonical key `key`, where the data path could
 * have learned it. */
static uint32_t session_slot(const uint8_t key[16], unsigned way)
{
	unsigned slots = FAKE_SESSION_SIZE / FAKE_SESSION_WAYS;
	return way * slots + matcha_session_index(key, 128, way, slots);
}

/* Canonical keys written out from docs/sessions.md ("Key"): zone (24), protocol, the lower
 * (address, port), the higher one. */
static const uint8_t web_key[16] = { 0, 0, 7, 6, 10, 0, 0, 2, 0x01, 0xBB,
				     192, 168, 0, 1, 0x9C, 0x40 }; /* 443, 40000 */
static const uint8_t dns_key[16] = { 0x12, 0x34, 0x56, 17, 10, 0, 0, 1, 0x13, 0x88,
				     10, 0, 0, 1, 0x13, 0x89 }; /* 5000, 5001 */

void test_ctl_session_commands(void)
{
	struct session s;
	CHECK(sessions_open(&s));
	struct fake_table *t = &s.fd->table[SESSIONS];
	/* 192.168.0.1:40000 opened a TCP session to 10.0.0.2:443: the initiator is the higher
	 * pair. 10.0.0.1:5000 sent UDP to 10.0.0.1:5001: the lower pair. */
	uint32_t web = session_slot(web_key, 2), dns = session_slot(dns_key, 0);
	CHECK(web != dns);
	fake_session_put(s.fd, SESSIONS, web, web_key, MATCHA_SESSION_ESTABLISHED, true, 12, 5,
			 700);
	fake_session_put(s.fd, SESSIONS, dns, dns_key, MATCHA_SESSION_UDP, false, 65535,
			 1ull << 40, 3ull << 40);
	t->now = 4321;
	char web_line[200], dns_line[200], want[600];
	snprintf(web_line, sizeof web_line, "  %-5u zone 7 tcp 192.168.0.1:40000 -> 10.0.0.2:443 "
		 "ESTABLISHED age 12 packets 5 bytes 700\n", (unsigned)web);
	snprintf(dns_line, sizeof dns_line, "  %-5u zone 1193046 udp 10.0.0.1:5000 -> "
		 "10.0.0.1:5001 UDP age 65535 packets 1099511627776 bytes 3298534883328\n",
		 (unsigned)dns);
	/* The dump goes by index. */
	snprintf(want, sizeof want,
		 "session table 4 (256 entries, 4 ways), tick now 4321\n"
		 "  index zone protocol initiator -> responder state age(ticks) packets bytes\n"
		 "%s%s2 sessions\n", web < dns ? web_line : dns_line, web < dns ? dns_line : web_line);
	RUN_OK(&s, "session_dump 4", want);

	/* Statistics: the occupancy is what the table holds, the counts the registers'. */
	t->learned = 9;
	t->aged = 6;
	t->insert_failed = 0x100000003ull;
	t->hits = 1000;
	t->misses = 77;
	RUN_OK(&s, "session_stats 4",
	       "session table 4\n"
	       "  occupancy 2 of 256 entries\n"
	       "  learned   9\n"
	       "  aged      6\n"
	       "  refused   4294967299 (could learn, found no free way)\n"
	       "  hits      1000\n"
	       "  misses    77\n");

	/* Delete by the reply's direction; then it is gone in both. */
	RUN_OK(&s, "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000",
	       "Session zone 7 tcp 10.0.0.2:443 <-> 192.168.0.1:40000 deleted from table 4\n");
	CHECK(!(t->entries[web].flags & 1) && t->deletes == 1 && (t->entries[dns].flags & 1));
	RUN_FAILS(&s, "session_delete 4 7 TCP 192.168.0.1 40000 10.0.0.2 443", MATCHA_ENOENT,
		  "session_delete: table 4 has no session zone 7 tcp 10.0.0.2:443 <-> "
		  "192.168.0.1:40000 (in either direction)");
	/* The initiator's direction, the zone in hex, the protocol by number. */
	RUN_OK(&s, "session_delete 4 0x123456 17 10.0.0.1 5000 10.0.0.1 5001",
	       "Session zone 1193046 udp 10.0.0.1:5000 <-> 10.0.0.1:5001 deleted from table 4\n");
	CHECK(!(t->entries[dns].flags & 1) && t->deletes == 2);
	RUN_OK(&s, "session_dump 4", "  index zone protocol initiator -> responder state "
	       "age(ticks) packets bytes\n0 sessions\n");

	/* Flush: every entry goes (the counter memory keeps the old counts, read as none). */
	fake_session_put(s.fd, SESSIONS, web, web_key, MATCHA_SESSION_SYN_SENT, true, 0, 1, 60);
	fake_session_put(s.fd, SESSIONS, dns, dns_key, MATCHA_SESSION_UDP, false, 0, 1, 60);
	RUN_OK(&s, "session_flush 4", "Session table 4 flushed\n");
	for (unsigned i = 0; i < FAKE_SESSION_SIZE; i++)
		CHECK(!(t->entries[i].flags & 1));
	RUN_OK(&s, "session_stats 4", "  occupancy 0 of 256 entries\n");

	/* Timeouts: state names as docs/sessions.md writes them, in any case. */
	RUN_OK(&s, "session_set_timeout 4 ESTABLISHED 3600",
	       "Timeout of ESTABLISHED in table 4 set to 3600 ticks\n");
	RUN_OK(&s, "session_set_timeout 4 syn_ack 30", "Timeout of SYN_ACK in table 4 set to 30");
	RUN_OK(&s, "session_set_timeout 4 Udp 65535", "Timeout of UDP in table 4 set to 65535");
	CHECK(t->timeout[MATCHA_SESSION_ESTABLISHED] == 3600 &&
	      t->timeout[MATCHA_SESSION_SYN_ACK] == 30 && t->timeout[MATCHA_SESSION_UDP] == 65535);
	t->timeout[MATCHA_SESSION_SYN_SENT] = 1;
	t->timeout[MATCHA_SESSION_CLOSING] = 31;
	t->timeout[MATCHA_SESSION_RESET] = 5;
	RUN_OK(&s, "session_get_timeout 4 established", "ESTABLISHED  3600 ticks\n");
	RUN_OK(&s, "session_get_timeout 4",
	       "SYN_SENT     1 ticks\nSYN_ACK      30 ticks\nESTABLISHED  3600 ticks\n"
	       "CLOSING      31 ticks\nRESET        5 ticks\nUDP          never\n");

	RUN_OK(&s, "session_set_tick 4 250000", "Tick of table 4 set to 250000 clocks\n");
	CHECK(t->tick == 250000);
	RUN_FAILS(&s, "session_set_scan_interval 4 3", MATCHA_EKIND,
		  "session_set_scan_interval: table 4 is of kind session, on chip: only a "
		  "mem_session table has a scan interval");

	RUN_OK(&s, "session_get_policy 4",
	       "table 4: punt (a packet that may learn but finds no free way goes to the host)\n");
	RUN_OK(&s, "session_set_policy 4 drop", "Full policy of table 4 set to drop\n");
	CHECK(t->control == 1);
	RUN_OK(&s, "session_get_policy 4", "table 4: drop (a packet that may learn but finds no "
	       "free way is dropped)\n");
	RUN_OK(&s, "session_set_policy 4 punt", "set to punt");
	CHECK(t->control == 0);

	RUN_OK(&s, "table_info", "4 (no layout): session, 256 entries, 128-bit key, 17-bit "
	       "action data, counters\n");
	static const char *const listed[] = {
		"session_dump       <table>\n",
		"session_delete     <table> <zone> <protocol> <src> <sport> <dst> <dport>\n",
		"session_flush      <table>\n", "session_stats      <table>\n",
		"session_set_timeout <table> <state> <ticks>\n",
		"session_get_timeout <table> [<state>]\n", "session_set_tick   <table> <clocks>\n",
		"session_set_scan_interval <table> <clocks>\n",
		"session_set_policy <table> punt|drop\n", "session_get_policy <table>\n",
		"States: SYN_SENT SYN_ACK ESTABLISHED CLOSING RESET UDP",
	};
	for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++)
		RUN_OK(&s, "help", listed[i]);
	RUN_OK(&s, "help session_delete",
	       "Example: session_delete 4 7 tcp 10.0.0.1 40000 192.168.0.1 443\n");
	session_close(&s);
}

/* The fake's entry of INDEX bucket << MEMX_INDEX_SLOT_BITS | slot of a table in memory. */
static const struct fake_entry *mem_session_entry(const struct fake_table *t, uint32_t index)
{
	return &t->entries[(index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS) * t->cfg.ways_or_levels +
			   (index & ((1u << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1))];
}

/*
 * The same commands on a session table in memory (fake_mem_session_cfg): the dump walks
 * every bucket's slots and names each session by its INDEX (bucket << 4 | slot), without
 * counts; a delete finds the session in its bucket from either direction; the statistics
 * add the late and busy counts.
 */
void test_ctl_mem_session_commands(void)
{
	struct session s;
	struct fake_cfg cfg = fake_mem_session_cfg();
	CHECK(session_open_on(&s, &cfg, NULL));
	struct fake_table *t = &s.fd->table[SESSIONS];
	/* The sessions sit in their keys' buckets (way 0 of the session hash): web in slot 2,
	 * dns in slot 0. */
	uint32_t web = matcha_session_index(web_key, 128, 0, FAKE_MEM_SESSION_BUCKETS)
			       << MATCHA_HW_MEMX_INDEX_SLOT_BITS | 2;
	uint32_t dns = matcha_session_index(dns_key, 128, 0, FAKE_MEM_SESSION_BUCKETS)
			       << MATCHA_HW_MEMX_INDEX_SLOT_BITS;
	fake_session_put(s.fd, SESSIONS, web, web_key, MATCHA_SESSION_ESTABLISHED, true, 12, 0, 0);
	fake_session_put(s.fd, SESSIONS, dns, dns_key, MATCHA_SESSION_UDP, false, 65535, 0, 0);
	t->now = 99;
	char web_line[200], dns_line[200], want[600];
	snprintf(web_line, sizeof web_line, "  %-5u zone 7 tcp 192.168.0.1:40000 -> 10.0.0.2:443 "
		 "ESTABLISHED age 12 packets 0 bytes 0\n", (unsigned)web);
	snprintf(dns_line, sizeof dns_line, "  %-5u zone 1193046 udp 10.0.0.1:5000 -> "
		 "10.0.0.1:5001 UDP age 65535 packets 0 bytes 0\n", (unsigned)dns);
	snprintf(want, sizeof want,
		 "session table 4 (192 entries, 3 a bucket), tick now 99\n"
		 "  index zone protocol initiator -> responder state age(ticks) packets bytes\n"
		 "%s%s2 sessions\n", web < dns ? web_line : dns_line, web < dns ? dns_line : web_line);
	RUN_OK(&s, "session_dump 4", want);

	/* The scanner's interval: a 16-bit register; an on-chip table has none. */
	RUN_OK(&s, "session_set_scan_interval 4 3", "Scan interval of table 4 set to 3 clocks\n");
	CHECK(t->scan_interval == 3);
	uint32_t interval = 0;
	CHECK_OK(s.dev, matcha_session_get_scan_interval(s.dev, SESSIONS, &interval));
	CHECK(interval == 3);
	RUN_OK(&s, "session_set_scan_interval 4 0", "set to 0 clocks");
	CHECK(t->scan_interval == 0);
	RUN_FAILS(&s, "session_set_scan_interval 4 65536", MATCHA_EINVAL,
		  "session_set_scan_interval: 65536 clocks is more than the register's 65535");
	RUN_FAILS(&s, "session_set_scan_interval 4", MATCHA_EINVAL,
		  "session_set_scan_interval: usage: session_set_scan_interval <table> <clocks>");
	CHECK(t->scan_interval == 0);

	t->late = 5;
	t->busy = 0x100000002ull;
	RUN_OK(&s, "session_stats 4",
	       "  occupancy 2 of 192 entries\n"
	       "  learned   2\n");
	RUN_OK(&s, "session_stats 4",
	       "  late      5 (bucket not back from memory in time)\n"
	       "  busy      4294967298 (change found no room to be written)\n");

	RUN_OK(&s, "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000",
	       "Session zone 7 tcp 10.0.0.2:443 <-> 192.168.0.1:40000 deleted from table 4\n");
	CHECK(t->deletes == 1 && !(mem_session_entry(t, web)->flags & 1) &&
	      (mem_session_entry(t, dns)->flags & 1));
	RUN_FAILS(&s, "session_delete 4 7 tcp 192.168.0.1 40000 10.0.0.2 443", MATCHA_ENOENT,
		  "session_delete: table 4 has no session zone 7 tcp 10.0.0.2:443 <-> "
		  "192.168.0.1:40000 (in either direction)");
	RUN_OK(&s, "session_delete 4 0x123456 udp 10.0.0.1 5001 10.0.0.1 5000",
	       "Session zone 1193046 udp 10.0.0.1:5000 <-> 10.0.0.1:5001 deleted from table 4\n");
	RUN_OK(&s, "session_dump 4", "  index zone protocol initiator -> responder state "
	       "age(ticks) packets bytes\n0 sessions\n");
	session_close(&s);
}

/* On the conntrack program the session table is named by the layout's "sessions" list. */
void test_ctl_conntrack_session_by_name(void)
{
	struct session s;
	struct fake_cfg cfg = fake_conntrack_cfg();
	CHECK(session_open_on(&s, &cfg, MATCHA_CONNTRACK_LAYOUT));
	s.fd->table[2].learned = 3;
	RUN_OK(&s, "session_stats sessions", "session table 2\n  occupancy 0 of 64 entries\n"
	       "  learned   3\n");
	RUN_OK(&s, "session_set_policy sessions drop", "Full policy of table 2 set to drop\n");
	CHECK(s.fd->table[2].control == 1);
	RUN_OK(&s, "session_stats 2", "session table 2\n");
	RUN_OK(&s, "table_info", "1 by_session: exact, 16 entries, 6-bit key, 1-bit action data, "
	       "counters, default action\n  key: meta.ingressPort[4] meta.sessionHit[1] "
	       "meta.sessionLearned[1]\n  action pass() (initial default)\n  action drop()\n"
	       "  action to_host()\n2 sessions: session, 64 entries, 128-bit key, 17-bit action "
	       "data, counters\n  4 ways, the stage after acl\n");
	RUN_FAILS(&s, "session_stats acl", MATCHA_EKIND, "session_stats: table acl (ternary) is "
		  "not a session table (session tables: 2)");
	RUN_FAILS(&s, "session_flush nat", MATCHA_ENOTABLE, "unknown session table \"nat\" "
		  "(session tables: sessions)");
	session_close(&s);
}

void test_ctl_session_command_errors(void)
{
	struct session s;
	CHECK(sessions_open(&s));
	static const struct {
		const char *line;
		int code;
		const char *message;
	} cases[] = {
		/* usage, from the command table */
		{ "session_dump", MATCHA_EINVAL, "session_dump: usage: session_dump <table>" },
		{ "session_dump 4 4", MATCHA_EINVAL, "session_dump: usage:" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1", MATCHA_EINVAL,
		  "session_delete: usage: session_delete <table> <zone> <protocol> <src> <sport> "
		  "<dst> <dport>" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000 1", MATCHA_EINVAL,
		  "session_delete: usage:" },
		{ "session_flush", MATCHA_EINVAL, "session_flush: usage: session_flush <table>" },
		{ "session_stats 4 x", MATCHA_EINVAL, "session_stats: usage: session_stats <table>" },
		{ "session_set_timeout 4 UDP", MATCHA_EINVAL,
		  "session_set_timeout: usage: session_set_timeout <table> <state> <ticks>" },
		{ "session_get_timeout", MATCHA_EINVAL,
		  "session_get_timeout: usage: session_get_timeout <table> [<state>]" },
		{ "session_get_timeout 4 UDP 1", MATCHA_EINVAL, "session_get_timeout: usage:" },
		{ "session_set_tick 4", MATCHA_EINVAL,
		  "session_set_tick: usage: session_set_tick <table> <clocks>" },
		{ "session_set_policy 4", MATCHA_EINVAL,
		  "session_set_policy: usage: session_set_policy <table> punt|drop" },
		{ "session_get_policy", MATCHA_EINVAL,
		  "session_get_policy: usage: session_get_policy <table>" },
		/* the table */
		{ "session_dump 5", MATCHA_ENOTABLE, "session_dump: table 5 does not exist (5 "
						     "tables)" },
		{ "session_stats 99999999999", MATCHA_ELAYOUT,
		  "session_stats: table \"99999999999\" is not an index 0..4, and tables have names "
		  "only with a layout (--layout FILE)" },
		{ "session_flush 0", MATCHA_EKIND,
		  "session_flush: table 0 (exact) is not a session table (session tables: 4)" },
		{ "session_set_tick 3 10", MATCHA_EKIND,
		  "session_set_tick: table 3 (ternary) is not a session table (session tables: 4)" },
		{ "session_get_policy sessions", MATCHA_ELAYOUT,
		  "session_get_policy: table \"sessions\" is not an index 0..4, and tables have "
		  "names only with a layout" },
		/* the flow */
		{ "session_delete 4 16777216 tcp 10.0.0.2 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "session_delete: zone 16777216 is wider than 24 bits (0..16777215)" },
		{ "session_delete 4 vni7 tcp 10.0.0.2 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "session_delete: zone \"vni7\" is not a number (decimal or 0x hex)" },
		{ "session_delete 4 7 icmp 10.0.0.2 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "session_delete: protocol \"icmp\" is not tcp, udp or a number 0..255" },
		{ "session_delete 4 7 256 10.0.0.2 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "protocol \"256\" is not tcp, udp or a number 0..255" },
		{ "session_delete 4 7 tcp 10.0.0 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "session_delete: source address \"10.0.0\" is not an IPv4 address (a.b.c.d)" },
		{ "session_delete 4 7 tcp 167772162 443 192.168.0.1 40000", MATCHA_EINVAL,
		  "source address \"167772162\" is not an IPv4 address" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.256 40000", MATCHA_EINVAL,
		  "destination address \"192.168.0.256\" is not an IPv4 address (a.b.c.d)" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 ::ffff:10.0.0.1 40000", MATCHA_EINVAL,
		  "destination address \"::ffff:10.0.0.1\" is not an IPv4 address" },
		{ "session_delete 4 7 tcp 10.0.0.2 https 192.168.0.1 40000", MATCHA_EINVAL,
		  "session_delete: source port \"https\" is not a number 0..65535" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 65536", MATCHA_EINVAL,
		  "session_delete: destination port \"65536\" is not a number 0..65535" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 -1", MATCHA_EINVAL,
		  "destination port \"-1\" is not a number 0..65535" },
		{ "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000", MATCHA_ENOENT,
		  "session_delete: table 4 has no session zone 7 tcp 10.0.0.2:443 <-> "
		  "192.168.0.1:40000 (in either direction)" },
		/* states, timeouts, tick, policy */
		{ "session_set_timeout 4 OPEN 30", MATCHA_EINVAL,
		  "session_set_timeout: \"OPEN\" is not a session state (SYN_SENT, SYN_ACK, "
		  "ESTABLISHED, CLOSING, RESET, UDP)" },
		{ "session_set_timeout 4 3 30", MATCHA_EINVAL, "\"3\" is not a session state" },
		{ "session_set_timeout 4 UDP 0", MATCHA_EINVAL,
		  "session_set_timeout: 0 ticks is not in 1..65535" },
		{ "session_set_timeout 4 UDP 65536", MATCHA_EINVAL,
		  "session_set_timeout: 65536 ticks is not in 1..65535" },
		{ "session_set_timeout 4 UDP 1m", MATCHA_EINVAL,
		  "session_set_timeout: timeout \"1m\" is not a number 0..4294967295" },
		{ "session_get_timeout 4 CLOSED", MATCHA_EINVAL,
		  "session_get_timeout: \"CLOSED\" is not a session state" },
		{ "session_set_tick 4 0", MATCHA_EINVAL,
		  "session_set_tick: a tick is at least 1 clock" },
		{ "session_set_tick 4 4294967296", MATCHA_EINVAL,
		  "session_set_tick: tick \"4294967296\" is not a number 0..4294967295" },
		{ "session_set_policy 4 reject", MATCHA_EINVAL,
		  "session_set_policy: policy \"reject\" is neither punt nor drop" },
		{ "help session_dumps", MATCHA_EINVAL, "help: no command \"session_dumps\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char twice[80];
		const char *cmd = cases[i].line;
		size_t n = strcspn(cmd, " ");
		RUN_FAILS(&s, cases[i].line, cases[i].code, cases[i].message);
		/* The library names its calls; the command's name comes once all the same. */
		snprintf(twice, sizeof twice, "%.*s: %.*s:", (int)n, cmd, (int)n, cmd);
		CHECK_MSG(!strstr(s.c.error, twice), "\"%s\": %s", cmd, s.c.error);
	}
	/* Nothing was changed by a refused line. */
	struct fake_table *t = &s.fd->table[SESSIONS];
	CHECK(t->deletes == 0 && t->tick == 0 && t->control == 0 &&
	      t->timeout[MATCHA_SESSION_UDP] == 0);
	session_close(&s);

	/* With a layout, a session table's name is taken from its "sessions" list (a table's
	 * name is refused as not a session table); the l2l3 program has no session table. */
	CHECK(session_open(&s));
	RUN_FAILS(&s, "session_stats acl", MATCHA_EKIND,
		  "session_stats: table acl (ternary) is not a session table (session tables: "
		  "none)");
	RUN_FAILS(&s, "session_dump sessions", MATCHA_ENOTABLE,
		  "session_dump: unknown session table \"sessions\" (session tables: none)");
	session_close(&s);

	/* The address commands know IPv4 sessions only; the others take any key. */
	struct fake_cfg cfg = fake_session_cfg();
	cfg.table[SESSIONS].key_bits = 320; /* zone, protocol, two IPv6 addresses and ports */
	CHECK(session_open_on(&s, &cfg, NULL));
	RUN_FAILS(&s, "session_dump 4", MATCHA_ENOTSUP,
		  "session_dump: session table 4 has 320-bit keys; matcha-ctl reads and writes "
		  "IPv4 sessions (128-bit keys) only");
	RUN_FAILS(&s, "session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000", MATCHA_ENOTSUP,
		  "session_delete: session table 4 has 320-bit keys");
	RUN_OK(&s, "session_stats 4", "  occupancy 0 of 256 entries\n");
	RUN_OK(&s, "session_flush 4", "flushed");
	session_close(&s);
}

/* ------------------------------------------------------------------------- batches */

struct batch_route {
	uint8_t prefix[4];
	unsigned len, port;
};

static int run_batch(struct session *s, const char *text, const char *name)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	int rc = ctl_batch(&s->c, in, name);
	fclose(in);
	fflush(s->stream);
	return rc;
}

void test_ctl_batch_checked_by_readback(void)
{
	struct session s;
	CHECK(session_open(&s));
	struct rng r = rng_for_test();
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	uint8_t macs[40][6];
	unsigned ports[40];
	struct batch_route routes[30];
	text[0] = '\0';
#define EMIT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
	EMIT("# the built-in program's tables\n\n");
	for (unsigned i = 0; i < 40; i++) {
		rng_bytes(&r, macs[i], 6);
		macs[i][0] = (uint8_t)(i << 1); /* distinct */
		ports[i] = rng_below(&r, 16);
		EMIT("table_add l2_fwd forward %02x:%02x:%02x:%02x:%02x:%02x => %u\n", macs[i][0],
		     macs[i][1], macs[i][2], macs[i][3], macs[i][4], macs[i][5], ports[i]);
	}
	for (unsigned i = 0; i < 30; i++) {
		struct batch_route *rt = &routes[i];
		/* /13 to /16 in four /8s (four trie nodes of the 16 at level 1); the top five
		 * bits of the second octet keep them apart */
		rt->len = 13 + i % 4;
		uint32_t a = (10u + i % 4) << 24 | (i * 8) << 16 | rng_below(&r, 1u << 19);
		a &= ~0u << (32 - rt->len);
		for (unsigned b = 0; b < 4; b++)
			rt->prefix[b] = (uint8_t)(a >> (24 - 8 * b));
		rt->port = rng_below(&r, 16);
		EMIT("table_add ipv4_lpm route %u.%u.%u.%u/%u => %u 0x02%010x %02x:00:00:00:00:%02x\n",
		     rt->prefix[0], rt->prefix[1], rt->prefix[2], rt->prefix[3], rt->len, rt->port,
		     i, 2, i);
	}
	EMIT("table_add acl deny 10.0.0.0&&&255.0.0.0 0&&&0 6 0&&&0 1000->1999 => 5\n");
	EMIT("table_add acl to_host 0&&&0 192.168.7.0/24 17 0&&&0 53 => 9\n");
	EMIT("table_set_default ipv4_lpm drop\n");
#undef EMIT
	int rc = run_batch(&s, text, "load.txt");
	CHECK_MSG(rc == 0, "%s", s.c.error);
	CHECK(strstr(s.out, "load.txt: 72 entries loaded\n"));

	/* Every entry, through the library's read-back, against what the batch said. */
	struct matcha_entry e;
	uint32_t index;
	for (unsigned i = 0; i < 40; i++) {
		CHECK_OK(s.dev, matcha_exact_lookup_sw(s.dev, 0, macs[i], 48, &index));
		CHECK_OK(s.dev, matcha_exact_read(s.dev, 0, index, &e));
		CHECK_MSG(e.valid && e.action_id == 1 && !memcmp(e.key, macs[i], 6) &&
			  e.data[0] == ports[i], "MAC %u", i);
	}
	for (unsigned i = 0; i < 30; i++) {
		uint8_t want[13] = { (uint8_t)routes[i].port, 0x02, 0, 0, 0, 0, (uint8_t)i, 2,
				     0, 0, 0, 0, (uint8_t)i };
		CHECK_OK(s.dev, matcha_lpm_read(s.dev, 1, routes[i].prefix, routes[i].len, NULL, &e));
		CHECK_MSG(e.valid && e.action_id == 0 && !memcmp(e.data, want, 13), "route %u", i);
	}
	/* 1000..1999: 1000/3 bits ... as matcha_range_to_prefixes gives them. */
	struct matcha_prefix p[MATCHA_RANGE_MAX_PREFIXES];
	int n = matcha_range_to_prefixes(1000, 1999, 16, p, MATCHA_RANGE_MAX_PREFIXES);
	CHECK(n > 1);
	for (int i = 0; i < n; i++) {
		uint8_t v[13] = { 10, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, (uint8_t)(p[i].value >> 8),
				  (uint8_t)p[i].value };
		uint8_t m[13] = { 0xFF, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0, 0, (uint8_t)(p[i].mask >> 8),
				  (uint8_t)p[i].mask };
		CHECK_OK(s.dev, matcha_ternary_lookup_sw(s.dev, 2, v, m, 104, 5, &index));
		CHECK_OK(s.dev, matcha_ternary_read(s.dev, 2, index, &e));
		CHECK(e.valid && e.action_id == 1 && !memcmp(e.key, v, 13) && !memcmp(e.mask, m, 13));
	}
	uint8_t v[13] = { 0, 0, 0, 0, 192, 168, 7, 0, 17, 0, 0, 0, 53 };
	uint8_t m[13] = { 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0, 0xFF, 0, 0, 0xFF, 0xFF };
	CHECK_OK(s.dev, matcha_ternary_lookup_sw(s.dev, 2, v, m, 104, 9, &index));
	CHECK(index == 0); /* priority 9 above 5 */
	CHECK_OK(s.dev, matcha_ternary_read(s.dev, 2, index, &e));
	CHECK(e.valid && e.action_id == 2);
	uint8_t id;
	CHECK_OK(s.dev, matcha_table_get_default(s.dev, 1, &id, NULL, 0));
	CHECK(id == 1);
	free(text);
	session_close(&s);
}

/* Routes 10.<i>.0.0/16 to port i % 16, from `from` to `to` - 1, as table_add lines. */
static size_t emit_routes(char *text, size_t cap, unsigned from, unsigned to)
{
	size_t len = 0;
	for (unsigned i = from; i < to; i++)
		len += (size_t)snprintf(text + len, cap - len, "table_add ipv4_lpm route 10.%u.0.0/16 "
					"=> %u 02:00:00:00:00:01 02:00:00:00:00:02\n", i, i % 16);
	return len;
}

/* The route lines [from, to) are in ipv4_lpm, each to its own port. */
static bool routes_read_back(struct session *s, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		uint8_t prefix[4] = { 10, (uint8_t)i, 0, 0 };
		struct matcha_entry e;
		if (matcha_lpm_read(s->dev, 1, prefix, 16, NULL, &e) || !e.valid || e.data[0] != i % 16) {
			check_fail(__FILE__, __LINE__, "route 10.%u.0.0/16: %s", i, matcha_last_error(s->dev));
			return false;
		}
	}
	return true;
}

/*
 * A batch's run of table_add lines into an empty LPM table is loaded at once: the table
 * takes 60 routes (of its 64) with a WRITE per result and per tree node (and a ZERO per
 * result, the table counting), where one by one takes several a route. Any other line
 * ends a run, and the next run into the now non-empty table adds one by one. A failing
 * line ends the batch with the run's lines before it loaded; a failing end of the load
 * counts none of them.
 */
void test_ctl_batch_loads_an_lpm_table_at_once(void)
{
	struct session s;
	CHECK(session_open(&s));
	char *text = malloc(1 << 16);
	size_t len = emit_routes(text, 1 << 16, 0, 60);
	unsigned long commands = s.fd->commands;
	CHECK_MSG(run_batch(&s, text, "routes.txt") == 0, "%s", s.c.error);
	CHECK(strstr(s.out, "routes.txt: 60 entries loaded\n"));
	unsigned long nodes = 0;
	for (unsigned l = 0; l < s.fd->table[1].cfg.ways_or_levels; l++) {
		struct matcha_lpm_level lv;
		CHECK_OK(s.dev, matcha_lpm_level(s.dev, 1, l, &lv));
		nodes += lv.used;
	}
	CHECK_MSG(s.fd->commands - commands == 2 * 60 + nodes, "%lu commands for 60 routes "
		  "and %lu nodes", s.fd->commands - commands, nodes);
	CHECK(routes_read_back(&s, 0, 60));

	/* Another line ends a run (the delete finds its route in the table), and the next
	 * run goes into a table holding routes: one by one. */
	CHECK_OK(s.dev, matcha_table_clear(s.dev, 1));
	len = emit_routes(text, 1 << 16, 0, 10);
	len += (size_t)snprintf(text + len, (1 << 16) - len, "table_delete ipv4_lpm 0\n");
	emit_routes(text + len, (1 << 16) - len, 10, 20);
	CHECK_MSG(run_batch(&s, text, "cut.txt") == 0, "%s", s.c.error);
	CHECK(routes_read_back(&s, 1, 20));
	uint8_t first[4] = { 10, 0, 0, 0 };
	struct matcha_entry e;
	CHECK_RC(s.dev, matcha_lpm_read(s.dev, 1, first, 16, NULL, &e), MATCHA_ENOENT);

	/* A duplicate on the 4th line of a run: the three before it are in. */
	CHECK_OK(s.dev, matcha_table_clear(s.dev, 1));
	len = emit_routes(text, 1 << 16, 0, 3);
	emit_routes(text + len, (1 << 16) - len, 1, 2);
	CHECK(run_batch(&s, text, "dup.txt") == MATCHA_EEXIST);
	CHECK_MSG(strstr(s.c.error, "dup.txt:4: ") && strstr(s.c.error, "(3 entries loaded before it)"),
		  "%s", s.c.error);
	CHECK(routes_read_back(&s, 0, 3));

	/* The load's end failing (a bus error): none of the run is counted as loaded. */
	struct matcha_table_info info;
	CHECK_OK(s.dev, matcha_table_info(s.dev, 1, &info));
	CHECK_OK(s.dev, matcha_table_clear(s.dev, 1));
	len = (size_t)snprintf(text, 1 << 16, "table_add l2_fwd forward 00:00:00:00:00:09 => 1\n");
	emit_routes(text + len, (1 << 16) - len, 0, 3);
	s.fd->fail_read_addr = info.base + MATCHA_HW_WIN_STATUS;
	CHECK(run_batch(&s, text, "bus.txt") == MATCHA_EIO);
	s.fd->fail_read_addr = -1;
	CHECK_MSG(strstr(s.c.error, "bus.txt: loading table ipv4_lpm: ") &&
		  strstr(s.c.error, "(1 entry loaded before it)"), "%s", s.c.error);
	free(text);
	session_close(&s);
}

void test_ctl_batch_stops_at_first_error(void)
{
	struct session s;
	CHECK(session_open(&s));
	const char *text = "table_add l2_fwd forward 00:00:00:00:00:01 => 1\n"
			   "\n"
			   "table_add l2_fwd forward 00:00:00:00:00:02 => 2\n"
			   "table_add l2_fwd forward 00:00:00:00:00:03 => 17\n"
			   "table_add l2_fwd forward 00:00:00:00:00:04 => 4\n";
	CHECK(run_batch(&s, text, "bad.txt") == MATCHA_E2BIG);
	CHECK_MSG(!strcmp(s.c.error, "bad.txt:4: table_add: parameter port of action forward "
			  "takes 0..15 (4 bits): 17 (0x11) is out of range (2 entries loaded "
			  "before it)"), "%s", s.c.error);
	uint8_t k3[6] = { 0, 0, 0, 0, 0, 3 }, k4[6] = { 0, 0, 0, 0, 0, 4 }, k2[6] = { 0, 0, 0, 0, 0, 2 };
	uint32_t index;
	CHECK_OK(s.dev, matcha_exact_lookup_sw(s.dev, 0, k2, 48, &index));
	CHECK_RC(s.dev, matcha_exact_lookup_sw(s.dev, 0, k3, 48, &index), MATCHA_ENOENT);
	CHECK_RC(s.dev, matcha_exact_lookup_sw(s.dev, 0, k4, 48, &index), MATCHA_ENOENT);

	static const char nul[] = "table_info\ntable_\0info\n";
	FILE *in = fmemopen((void *)nul, sizeof nul - 1, "r");
	CHECK(ctl_batch(&s.c, in, "nul.txt") == MATCHA_EINVAL);
	fclose(in);
	CHECK(strstr(s.c.error, "nul.txt:2: NUL byte in the line"));
	/* quit ends a batch early, successfully */
	CHECK(run_batch(&s, "quit\ntable_add nonsense\n", "q.txt") == 0);
	session_close(&s);
}

/* ---------------------------------------------------------------------------- fuzz */

#define FUZZ_SECONDS 1.5

static const char *const vocabulary[] = {
	"table_add", "table_delete", "table_modify", "table_dump", "table_clear",
	"table_set_default", "counter_read", "counter_reset", "table_info", "help", "=>",
	"l2_fwd", "ipv4_lpm", "acl", "forward", "drop", "route", "deny", "permit", "to_host",
	"no_op", "no_route", "0", "1", "5", "15", "16", "255", "65535", "4294967295",
	"4294967296", "0x", "0xffffffffffff", "00:11:22:33:44:55", "10.0.0.0/8", "10.0.0.1",
	"1.2.3.4/33", "0&&&0", "1&&&3", "80->90", "90->80", "->", "&&&", "/", "/0", "#", "x",
	"18446744073709551616", "::::::", "1.2.3.4.5", "0/0", "\t", "=>=>", "a=>b",
	"meter_set_rates", "meter_get_rates", "meter_reset", "set_clock_hz", "policers", "police",
	"by_colour", "mark", "srtcm", "trtcm", "color-aware", "packets", "1000:10", "0:0",
	"125000:10000", "250000:20000", "1:1099511627776", "63", "64", "250000000", ":", "1:",
	"session_dump", "session_delete", "session_flush", "session_stats", "session_set_timeout",
	"session_get_timeout", "session_set_tick", "session_set_policy", "session_get_policy",
	"4", "tcp", "udp", "SYN_SENT", "established", "UDP", "punt", "drop", "10.0.0.2",
	"192.168.0.1", "443", "40000", "65536", "16777215", "16777216", "0x123456",
	"app_control", "tx_pipeline", "cpu_port", "on", "off",
};
#define NVOCAB (sizeof vocabulary / sizeof vocabulary[0])

/* Lines that run, for the fuzz to start from. */
static const char *const valid_lines[] = {
	"table_add l2_fwd forward 00:11:22:33:44:55 => 5",
	"table_add ipv4_lpm route 10.0.0.0/8 => 1 02:00:00:00:00:01 0x020000000002",
	"table_add acl deny 10.0.0.0&&&255.0.0.0 0&&&0 6 0&&&0 80->90 => 10",
	"table_add acl to_host 0&&&0 192.168.0.0/16 17 53 0&&&0 => 20",
	"table_modify l2_fwd drop 0 =>",
	"table_set_default l2_fwd forward => 3",
	"table_delete acl 0",
	"counter_read acl 1",
	"counter_reset ipv4_lpm 0",
	"table_dump acl",
	"table_clear ipv4_lpm",
	"table_add police police 00:11:22:33:44:55 => 7",
	"table_add by_colour mark 1 => 10",
	"set_clock_hz 250000000",
	"meter_set_rates policers 7 125000:10000 250000:20000",
	"meter_set_rates policers 63 1000:10 0:30 srtcm color-aware packets",
	"meter_get_rates policers 7",
	"meter_reset policers 63",
	"session_dump 4",
	"session_delete 4 7 tcp 10.0.0.2 443 192.168.0.1 40000",
	"session_delete 4 0x123456 udp 10.0.0.1 5001 10.0.0.1 5000",
	"session_flush 4",
	"session_stats 4",
	"session_set_timeout 4 ESTABLISHED 3600",
	"session_get_timeout 4 UDP",
	"session_set_tick 4 250000",
	"session_set_policy 4 drop",
	"session_get_policy 4",
};
#define NVALID (sizeof valid_lines / sizeof valid_lines[0])

/*
 * A valid line with words replaced, dropped or repeated, or a line of vocabulary words;
 * then maybe a few random bytes changed.
 */
static void random_line(struct rng *r, char *line, size_t cap)
{
	size_t len = 0;
	line[0] = '\0';
	if (rng_below(r, 2)) {
		char base[200], *save, *w[32];
		unsigned n = 0;
		snprintf(base, sizeof base, "%s", valid_lines[rng_below(r, NVALID)]);
		for (char *t = strtok_r(base, " ", &save); t && n < 32; t = strtok_r(NULL, " ", &save))
			w[n++] = t;
		for (unsigned i = 0; i < n && len + 64 < cap; i++) {
			unsigned what = rng_below(r, 10);
			const char *word = what == 0 ? vocabulary[rng_below(r, NVOCAB)] : w[i];
			if (what == 1)
				continue; /* dropped */
			len += (size_t)snprintf(line + len, cap - len, "%s%s", i ? " " : "", word);
			if (what == 2)
				len += (size_t)snprintf(line + len, cap - len, " %s", word);
		}
	} else {
		unsigned words = rng_below(r, 12);
		for (unsigned i = 0; i < words && len + 64 < cap; i++)
			len += (size_t)snprintf(line + len, cap - len, "%s%s", i ? " " : "",
						vocabulary[rng_below(r, NVOCAB)]);
	}
	unsigned flips = rng_below(r, 3) ? 0 : 1 + rng_below(r, 3);
	for (unsigned i = 0; i < flips && len; i++)
		line[rng_below(r, (uint32_t)len)] = (char)(1 + rng_below(r, 255));
}

/* Random lines and batches on a session for `seconds`; then every table of `tables` holds
 * what the driver says it does, every meter of `meters` reads back, and every session table
 * holds as many sessions as its occupancy says. */
static void fuzz(struct session *s, double seconds, const char *const *tables,
		 unsigned ntables, const char *meters)
{
	FILE *null = fopen("/dev/null", "w");
	ctl_init(&s->c, s->dev, null);
	struct rng r = rng_for_test();
	char line[600];
	unsigned long lines = 0, ok = 0, batches = 0;
	clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
	while (clock() < end) {
		random_line(&r, line, sizeof line);
		int rc = ctl_execute(&s->c, line);
		lines++;
		ok += rc == 0;
		CHECK_MSG(rc <= 0, "\"%s\" returned %d", line, rc);
		CHECK_MSG(rc == 0 || s->c.error[0], "\"%s\" failed without a message", line);
		s->c.quit = false;
		if (lines % 64)
			continue;
		/* A batch of random lines with NULs and CRs, through ctl_batch. */
		char text[4096];
		size_t len = 0;
		for (unsigned i = rng_below(&r, 8); i-- > 0 && len + 700 < sizeof text;) {
			random_line(&r, line, sizeof line);
			len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", line,
						rng_below(&r, 4) ? "\n" : "\r\n");
		}
		if (len && rng_below(&r, 4) == 0)
			text[rng_below(&r, (uint32_t)len)] = '\0';
		FILE *in = fmemopen(text, len ? len : 1, "r");
		rc = ctl_batch(&s->c, in, "fuzz");
		fclose(in);
		batches++;
		CHECK_MSG(rc == 0 || strstr(s->c.error, "fuzz:"), "batch error without its line: %s",
			  s->c.error);
		s->c.quit = false;
	}
	/* Every entry added is in the hardware: matcha_entry_read finds it valid, with the key
	 * it was written with and an action the layout names. */
	unsigned long entries = 0, configured = 0;
	for (unsigned t = 0; t < ntables; t++) {
		uint32_t h = 0;
		for (; matcha_entry_next(s->dev, tables[t], h, &h) == 0; h++, entries++) {
			struct matcha_entry_view v;
			CHECK_OK(s->dev, matcha_entry_read(s->dev, tables[t], h, &v));
		}
	}
	/* A meter is configured or not; a configured one reads back (with any clock set). */
	unsigned array;
	struct matcha_table_info in;
	if (meters && matcha_meter_by_name(s->dev, meters, &array) == 0 && s->c.clock_hz &&
	    matcha_table_info(s->dev, array, &in) == 0)
		for (uint32_t i = 0; i < in.size; i++) {
			int rc = matcha_meter_get(s->dev, array, i, NULL, NULL, NULL);
			CHECK_MSG(rc == 0 || rc == MATCHA_ENOENT, "meter %u: %s", (unsigned)i,
				  matcha_last_error(s->dev));
			configured += rc == 0;
		}
	unsigned long sessions = 0;
	for (unsigned t = 0; t < matcha_table_count(s->dev); t++) {
		struct matcha_session_stats st;
		if (matcha_table_info(s->dev, t, &in) || in.kind != MATCHA_KIND_SESSION)
			continue;
		unsigned valid = 0;
		for (uint32_t i = 0; i < in.size; i++) {
			struct matcha_session one;
			CHECK_OK(s->dev, matcha_session_read(s->dev, t, i, &one));
			valid += one.valid;
		}
		CHECK_OK(s->dev, matcha_session_stats(s->dev, t, &st));
		CHECK_MSG(st.occupancy == valid, "session table %u: occupancy %u, %u sessions", t,
			  (unsigned)st.occupancy, valid);
		sessions += valid;
	}
	printf("  %lu lines (%lu ran), %lu batches, %lu entries, %lu meters and %lu sessions at "
	       "the end\n", lines, ok, batches, entries, configured, sessions);
	fclose(null);
	s->c.out = s->stream;
}

void test_ctl_fuzz_lines_and_batches(void)
{
	static const char *const l2l3[] = { "l2_fwd", "ipv4_lpm", "acl" };
	static const char *const policer[] = { "police", "by_colour" };
	struct session s;
	CHECK(session_open(&s));
	fuzz(&s, FUZZ_SECONDS / 3, l2l3, 3, NULL);
	session_close(&s);
	CHECK(policer_session_open(&s));
	fuzz(&s, FUZZ_SECONDS / 3, policer, 2, "policers");
	session_close(&s);
	/* The session device has no layout: its tables go by index. Sessions to delete: the
	 * two of the valid lines and more in every way. */
	CHECK(sessions_open(&s));
	fake_session_put(s.fd, SESSIONS, session_slot(web_key, 1), web_key,
			 MATCHA_SESSION_ESTABLISHED, true, 1, 2, 3);
	fake_session_put(s.fd, SESSIONS, session_slot(dns_key, 3), dns_key, MATCHA_SESSION_UDP,
			 false, 1, 2, 3);
	struct rng r = rng_for_test();
	for (unsigned n = 0; n < 64; n++) {
		uint8_t key[16];
		rng_bytes(&r, key, sizeof key);
		fake_session_put(s.fd, SESSIONS, session_slot(key, rng_below(&r, FAKE_SESSION_WAYS)),
				 key, 1 + rng_below(&r, 6), rng_below(&r, 2), rng_below(&r, 65536),
				 n, 64 * n);
	}
	fuzz(&s, FUZZ_SECONDS / 3, NULL, 0, NULL);
	session_close(&s);
}

/* Mutations of layout `path` loaded on `cfg` for `seconds`: accepted or refused with a message. */
static void fuzz_layout(const struct fake_cfg *cfg, const char *path, double seconds)
{
	struct fake_dev *fd = fake_new(cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	FILE *f = fopen(path, "rb");
	CHECK(f);
	static char text[1 << 16], copy[1 << 16];
	size_t len = fread(text, 1, sizeof text, f);
	fclose(f);
	struct rng r = rng_for_test();
	unsigned long runs = 0, loaded = 0;
	static const char specials[] = "{}[]\":,\\0123456789-+.eE \ntfn";
	clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
	while (clock() < end) {
		size_t n = len;
		memcpy(copy, text, len);
		unsigned edits = 1 + rng_below(&r, 4);
		for (unsigned i = 0; i < edits; i++) {
			size_t at = rng_below(&r, (uint32_t)n);
			switch (rng_below(&r, 3)) {
			case 0: copy[at] = specials[rng_below(&r, sizeof specials - 1)]; break;
			case 1: copy[at] = (char)rng_below(&r, 256); break;
			default: n = at; /* truncated */
			}
			if (n == 0)
				break;
		}
		int rc = matcha_layout_load_text(dev, copy, n, "fuzz.json");
		runs++;
		loaded += rc == 0;
		CHECK_MSG(rc == 0 || (rc == MATCHA_ELAYOUT && matcha_last_error(dev)[0]),
			  "returned %d: %s", rc, matcha_last_error(dev));
	}
	printf("  %lu mutated layouts of %s, %lu still accepted\n", runs, strrchr(path, '/') + 1,
	       loaded);
	matcha_close(dev);
	fake_free(fd);
}

void test_layout_fuzz(void)
{
	struct fake_cfg l2l3 = fake_l2l3_cfg(), policer = fake_policer_cfg();
	struct fake_cfg conntrack = fake_conntrack_cfg();
	fuzz_layout(&l2l3, MATCHA_LAYOUT, FUZZ_SECONDS / 4);
	fuzz_layout(&policer, MATCHA_POLICER_LAYOUT, FUZZ_SECONDS / 4);
	fuzz_layout(&conntrack, MATCHA_CONNTRACK_LAYOUT, FUZZ_SECONDS / 4);
}

/* ------------------------------------------------------------- the program itself */

/* Runs the shell command `cmd` with its standard output and error into `out`; its exit
 * status. */
static int run_shell(const char *cmd, char *out, size_t cap)
{
	char out_path[64], line[1200];
	snprintf(out_path, sizeof out_path, "/tmp/matcha-ctl-%d.out", (int)getpid());
	snprintf(line, sizeof line, "%s > %s 2>&1", cmd, out_path);
	int status = system(line);
	FILE *f = fopen(out_path, "r");
	size_t n = f ? fread(out, 1, cap - 1, f) : 0;
	out[n] = '\0';
	if (f)
		fclose(f);
	unlink(out_path);
	return status;
}

/* Writes `batch` to a file named after the process, into `path`. */
static void write_batch(const char *batch, char *path, size_t len)
{
	snprintf(path, len, "/tmp/matcha-ctl-%d.batch", (int)getpid());
	FILE *f = fopen(path, "w");
	fputs(batch, f);
	fclose(f);
}

/* Runs matcha-ctl on the device `uri` with the options `args` (NULL-terminated) and `batch`
 * as its -f file; its exit status, its output in *out. */
static int run_program_at(const char *uri, const char *const *args, const char *batch,
			  char *out, size_t cap)
{
	char batch_path[64], cmd[1024];
	write_batch(batch, batch_path, sizeof batch_path);
	size_t len = (size_t)snprintf(cmd, sizeof cmd, "%s '%s'", MATCHA_CTL_BIN, uri);
	for (const char *const *a = args; *a; a++)
		len += (size_t)snprintf(cmd + len, sizeof cmd - len, " '%s'", *a);
	snprintf(cmd + len, sizeof cmd - len, " -f %s", batch_path);
	int status = run_shell(cmd, out, cap);
	unlink(batch_path);
	return status;
}

/* run_program_at on `fd`, served on a fresh socket for the one run. */
static int run_program(struct fake_dev *fd, const char *const *args, const char *batch,
		       char *out, size_t cap)
{
	struct sim_server s;
	char uri[128];
	if (sim_server_start(&s, fd))
		return -1;
	snprintf(uri, sizeof uri, "sim:%s", s.path);
	int status = run_program_at(uri, args, batch, out, cap);
	sim_server_stop(&s);
	return status;
}

void test_ctl_program_over_sim_socket(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	char out[4096];
	const char *args[] = { "--layout", MATCHA_LAYOUT, NULL };
	int status = run_program(fd, args, "table_add l2_fwd forward 02:00:00:00:00:07 => 7\n"
					    "table_add acl deny 0&&&0 0&&&0 17 0&&&0 5000->5001 => 3\n",
				 out, sizeof out);
	CHECK_MSG(status == 0 && strstr(out, "Entry added to l2_fwd with handle 0\n") &&
		  strstr(out, ": 2 entries loaded\n"), "status %d, output: %s", status, out);
	/* The server's fake holds the entry. */
	unsigned found = 0;
	for (unsigned i = 0; i < 64; i++) {
		const struct fake_entry *e = &fd->table[0].entries[i];
		found += e->flags == (1u | 1u << 8) && e->key[0] == 0x00000007 &&
			 e->key[1] == 0x0200 && e->data[0] == 7;
	}
	CHECK(found == 1);
	CHECK(fd->table[2].entries[0].flags == (1u | 1u << 8) &&
	      fd->table[2].entries[0].key[0] == 5000 && fd->table[2].entries[0].mask[0] == 0xFFFE);

	/* A bad line: exit status 1, the line and the reason on standard error. */
	status = run_program(fd, args, "table_info\ntable_add l2_fwd forward 1 => 99\n", out,
			     sizeof out);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
		  strstr(out, "matcha-ctl: ") && strstr(out, ".batch:2: table_add: parameter port "
		  "of action forward takes 0..15 (4 bits): 99 (0x63) is out of range (0 entries "
		  "loaded before it)"),
		  "status %d, output: %s", status, out);

	/* A layout of another bitstream is refused before any command runs. */
	cfg.build_id = 1;
	struct fake_dev *other = fake_new(&cfg);
	status = run_program(other, args, "table_info\n", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 1 && strstr(out, "the hardware's BUILD_ID is 1 "
		  "(0x00000001): the layout belongs to another bitstream"), "%s", out);
	fake_free(other);
	const char *no_options[] = { NULL };
	status = run_program_at("sim:/nonexistent/sock", no_options, "", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 1 && strstr(out, "matcha-ctl: sim:/nonexistent/sock: "
		  "sim:/nonexistent/sock: cannot connect"), "%s", out);
	fake_free(fd);
}

/* The options as getopt_long reads them, and commands from standard input without -f. */
void test_ctl_program_options(void)
{
	char out[4096], cmd[1024];
	int status = run_shell(MATCHA_CTL_BIN " --help", out, sizeof out);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		  strstr(out, "  --layout FILE ") && strstr(out, "  --clock-hz HZ ") &&
		  strstr(out, "  -f BATCH ") && strstr(out, "  -h, --help "), "%s", out);
	status = run_shell(MATCHA_CTL_BIN " sim:/x --layuot f", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 2 && strstr(out, "unrecognized option '--layuot'") &&
		  strstr(out, "usage: matcha-ctl URI"), "%s", out);
	status = run_shell(MATCHA_CTL_BIN " sim:/x --layout", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 2 && strstr(out, "option '--layout' requires an "
		  "argument"), "%s", out);
	status = run_shell(MATCHA_CTL_BIN " sim:/x sim:/y", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 2 && strstr(out, "matcha-ctl: unexpected argument "
		  "\"sim:/y\""), "%s", out);
	status = run_shell(MATCHA_CTL_BIN " --layout f", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 2 && strstr(out, "usage: matcha-ctl URI"), "%s", out);

	/* --layout=FILE, options before the URI, and the commands on a standard input that
	 * is not a terminal: read line by line as a batch. */
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct sim_server srv;
	char batch_path[64];
	CHECK(sim_server_start(&srv, fd) == 0);
	write_batch("table_add l2_fwd forward 02:00:00:00:00:07 => 7\ntable_dump l2_fwd\n",
		    batch_path, sizeof batch_path);
	snprintf(cmd, sizeof cmd, "%s --layout=%s sim:%s < %s", MATCHA_CTL_BIN, MATCHA_LAYOUT,
		 srv.path, batch_path);
	status = run_shell(cmd, out, sizeof out);
	sim_server_stop(&srv);
	unlink(batch_path);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		  strstr(out, "Entry added to l2_fwd with handle 0\n") &&
		  strstr(out, "  0    02:00:00:00:00:07 => forward(port=7)\n") &&
		  strstr(out, "<stdin>: 1 entry loaded\n"), "status %d, output: %s", status, out);
	fake_free(fd);
}

/* The program's --clock-hz on the policer program; a second run reads the meter back. */
void test_ctl_program_meters(void)
{
	struct fake_cfg cfg = fake_policer_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	char out[4096];
	const char *args[] = { "--layout", MATCHA_POLICER_LAYOUT, "--clock-hz", "250000000", NULL };
	int status = run_program(fd, args, "meter_set_rates policers 9 125000:10000 "
					    "250000:20000\n"
					    "table_add police police 02:00:00:00:00:09 => 9\n",
				 out, sizeof out);
	CHECK_MSG(status == 0 && strstr(out, "Meter policers[9] set\n") &&
		  strstr(out, ": 1 entry loaded\n"), "status %d, output: %s", status, out);
	CHECK(fd->table[2].entries[9].flags == 1);

	status = run_program(fd, args, "meter_get_rates policers 9\n", out, sizeof out);
	/* The rate as the hardware holds it, within matcha_meter_set's 0.1 %. */
	const char *at = strstr(out, "policers[9]: trtcm (RFC 2698), color-blind, bytes\n"
				"  committed: rate ");
	unsigned long long rate = 0, burst = 0, tokens = 0;
	CHECK_MSG(status == 0 && at && sscanf(strchr(at, '\n') + 1, "  committed: rate %llu "
		  "bytes/s, burst %llu bytes, %llu tokens", &rate, &burst, &tokens) == 3 &&
		  rate >= 124875 && rate <= 125125 && burst == 10000 && tokens == 10000,
		  "status %d, output: %s", status, out);

	/* Without --clock-hz the rate commands say what is missing; a bad value stops the
	 * program before any command runs. */
	const char *no_clock[] = { "--layout", MATCHA_POLICER_LAYOUT, NULL };
	status = run_program(fd, no_clock, "meter_get_rates policers 9\n", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 1 && strstr(out, ".batch:1: meter_get_rates: the "
		  "pipeline's clock frequency is not known: start matcha-ctl with --clock-hz HZ"),
		  "status %d, output: %s", status, out);
	const char *bad_clock[] = { "--layout", MATCHA_POLICER_LAYOUT, "--clock-hz", "0", NULL };
	status = run_program(fd, bad_clock, "meter_reset policers 9\n", out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 2 && strstr(out, "matcha-ctl: --clock-hz: set_clock_hz: "
		  "the clock frequency is 0") && fd->table[2].entries[9].flags == 1,
		  "status %d, output: %s", status, out);
	fake_free(fd);
}

/* The program without a layout on a device with a session table: it adopts the other
 * tables, leaves the sessions to the data path, and its session commands take the index. */
void test_ctl_program_sessions(void)
{
	struct fake_cfg cfg = fake_session_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct fake_table *t = &fd->table[SESSIONS];
	char out[4096];
	uint32_t web = session_slot(web_key, 0), dns = session_slot(dns_key, 1);
	fake_session_put(fd, SESSIONS, web, web_key, MATCHA_SESSION_SYN_ACK, true, 3, 2, 120);
	fake_session_put(fd, SESSIONS, dns, dns_key, MATCHA_SESSION_UDP, false, 9, 4, 400);
	const char *args[] = { NULL };
	int status = run_program(fd, args, "session_dump 4\n"
					    "session_delete 4 0x123456 udp 10.0.0.1 5001 10.0.0.1 5000\n"
					    "session_set_timeout 4 SYN_ACK 40\n"
					    "session_stats 4\n",
				 out, sizeof out);
	CHECK_MSG(status == 0 && strstr(out, " zone 7 tcp 192.168.0.1:40000 -> 10.0.0.2:443 "
		  "SYN_ACK age 3 packets 2 bytes 120\n") &&
		  strstr(out, " zone 1193046 udp 10.0.0.1:5000 -> 10.0.0.1:5001 UDP age 9 packets 4 "
		  "bytes 400\n2 sessions\n") &&
		  strstr(out, "Session zone 1193046 udp 10.0.0.1:5000 <-> 10.0.0.1:5001 deleted "
		  "from table 4\n") && strstr(out, "  occupancy 1 of 256 entries\n") &&
		  strstr(out, ": 0 entries loaded\n"), "status %d, output: %s", status, out);
	CHECK((t->entries[web].flags & 1) && !(t->entries[dns].flags & 1) && t->deletes == 1 &&
	      t->packets[web] == 2 && t->timeout[MATCHA_SESSION_SYN_ACK] == 40);
	fake_free(fd);
}

/*
 * Two runs of matcha-ctl against one device: the second continues the first's tables, as
 * simple_switch_CLI sessions share a switch's. It lists them (a prefix hidden under two
 * longer ones included, ternary priorities included), deletes one and adds after them.
 */
void test_ctl_second_run_adopts_the_first(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	char out[8192];
	const char *args[] = { "--layout", MATCHA_LAYOUT, NULL };
	int status = run_program(fd, args,
		"table_add l2_fwd forward 02:00:00:00:00:07 => 7\n"
		"table_add ipv4_lpm route 10.0.0.0/8 => 1 02:00:00:00:00:01 02:00:00:00:00:02\n"
		"table_add ipv4_lpm route 11.0.0.0/8 => 2 02:00:00:00:00:01 02:00:00:00:00:02\n"
		"table_add ipv4_lpm route 10.0.0.0/7 => 3 02:00:00:00:00:01 02:00:00:00:00:02\n"
		"table_add acl deny 10.0.0.0&&&255.0.0.0 0&&&0 6 0&&&0 0&&&0 => 10\n"
		"table_add acl to_host 0&&&0 192.168.0.0/16 17 53 0&&&0 => 20\n"
		"table_add acl deny 0&&&0 0&&&0 17 0&&&0 0&&&0 => 10\n", out, sizeof out);
	CHECK_MSG(status == 0 && strstr(out, ": 7 entries loaded\n"), "first run: %s", out);

	status = run_program(fd, args,
		"table_dump l2_fwd\ntable_dump ipv4_lpm\ntable_dump acl\n"
		"table_delete ipv4_lpm 0\ntable_delete ipv4_lpm 1\n"
		"table_add ipv4_lpm route 10.1.0.0/16 => 4 02:00:00:00:00:01 02:00:00:00:00:02\n"
		"table_add acl deny 0&&&0 0&&&0 6 0&&&0 0&&&0 => 10\n"
		"table_add l2_fwd forward 02:00:00:00:00:07 => 8\n", out, sizeof out);
	/* Handles follow the hardware's order: l2_fwd by slot, LPM by result (given out lowest
	 * first), the ACL by index (priority order, ties in the order they were added). */
	CHECK_MSG(strstr(out, "  0    02:00:00:00:00:07 => forward(port=7)\n"), "%s", out);
	CHECK_MSG(strstr(out,
		"  0    10.0.0.0/8 => route(port=1, dmac=02:00:00:00:00:01, smac=02:00:00:00:00:02)\n"
		"  1    11.0.0.0/8 => route(port=2, dmac=02:00:00:00:00:01, smac=02:00:00:00:00:02)\n"
		"  2    10.0.0.0/7 => route(port=3, dmac=02:00:00:00:00:01, smac=02:00:00:00:00:02)\n"),
		"%s", out);
	CHECK_MSG(strstr(out,
		"  0    0.0.0.0&&&0.0.0.0 192.168.0.0&&&255.255.0.0 17 53 0&&&0 => to_host() "
		"priority 20\n"
		"  1    10.0.0.0&&&255.0.0.0 0.0.0.0&&&0.0.0.0 6 0&&&0 0&&&0 => deny() priority 10\n"
		"  2    0.0.0.0&&&0.0.0.0 0.0.0.0&&&0.0.0.0 17 0&&&0 0&&&0 => deny() priority 10\n"
		"  default => permit()\n3 entries\n"), "%s", out);
	CHECK_MSG(WEXITSTATUS(status) == 1 && strstr(out, ".batch:8: table_add: table l2_fwd: "
		  "duplicate entry: handle 0 has the same key (2 entries loaded before it)"),
		  "status %d: %s", status, out);
	/* The hidden /7 answers for 10/8 and 11/8 now, 10.1/16 is below it (port, the first
	 * parameter, is bits 99..96 of the action data: word 3), the new ACL tie
	 * went after the old ones. */
	struct fake_lpm_view v;
	uint32_t result;
	fake_lpm_view(fd, 1, &v);
	static const uint8_t k10[4] = { 10, 9, 9, 9 }, k11[4] = { 11, 9, 9, 9 };
	static const uint8_t k101[4] = { 10, 1, 9, 9 };
	CHECK(matcha_lpm_walk_nodes(&v.img, k10, &result) == 0 &&
	      fd->table[1].entries[result].data[3] == 3);
	CHECK(matcha_lpm_walk_nodes(&v.img, k11, &result) == 0 &&
	      fd->table[1].entries[result].data[3] == 3);
	CHECK(matcha_lpm_walk_nodes(&v.img, k101, &result) == 0 &&
	      fd->table[1].entries[result].data[3] == 4);
	CHECK(fd->table[2].entries[3].priority == 10 && (fd->table[2].entries[3].flags & 1) &&
	      fd->table[2].entries[3].key[1] == 6 && !(fd->table[2].entries[4].flags & 1));
	fake_free(fd);
}

/*
 * A table whose content the driver could not have written (one key in two ways of l2_fwd):
 * matcha-ctl warns, the other tables work, the refused one answers with the refusal until
 * table_clear starts it over.
 */
void test_ctl_refused_table_cleared(void)
{
	struct fake_cfg cfg = fake_l2l3_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	char out[8192];
	const char *args[] = { "--layout", MATCHA_LAYOUT, NULL };
	int status = run_program(fd, args, "table_add l2_fwd forward 02:00:00:00:00:07 => 7\n",
				 out, sizeof out);
	CHECK_MSG(status == 0, "status %d: %s", status, out);
	/* l2_fwd: 4 ways of 16 slots (docs/pipeline.md); the copy goes to its slot in way 1. */
	const uint8_t key[6] = { 0x02, 0, 0, 0, 0, 0x07 };
	long at = fake_exact_find(fd, 0, key, 48);
	uint32_t dup = 16 + matcha_exact_index(key, 48, 1, 16);
	CHECK(at >= 0 && at < 16);
	fd->table[0].entries[dup] = fd->table[0].entries[at];

	status = run_program(fd, args, "table_add ipv4_lpm route 10.0.0.0/8 => 1 "
					"02:00:00:00:00:01 02:00:00:00:00:02\ntable_dump l2_fwd\n",
			     out, sizeof out);
	CHECK_MSG(WEXITSTATUS(status) == 1 && strstr(out, "matcha-ctl: warning: ") &&
		  strstr(out, "hold the same key; table_clear starts that table over") &&
		  strstr(out, "Entry added to ipv4_lpm with handle 0") &&
		  strstr(out, ".batch:2: table_dump: entry_next: ") &&
		  strstr(out, "matcha_table_clear() starts it over (1 entry loaded before it)"),
		  "status %d: %s", status, out);

	status = run_program(fd, args, "table_clear l2_fwd\n"
					"table_add l2_fwd forward 02:00:00:00:00:07 => 8\n"
					"table_dump l2_fwd\n", out, sizeof out);
	CHECK_MSG(status == 0 && strstr(out, "Table l2_fwd cleared") &&
		  strstr(out, "  0    02:00:00:00:00:07 => forward(port=8)\n"),
		  "status %d: %s", status, out);
	/* One valid copy of the key is left, the new one. */
	unsigned valid = 0;
	for (unsigned i = 0; i < 64; i++)
		valid += fd->table[0].entries[i].flags & 1;
	CHECK(valid == 1 && fd->table[0].entries[fake_exact_find(fd, 0, key, 48)].data[0] == 8);
	fake_free(fd);
}

/* A second program on fake_standard_cfg's tables: an IPv6 route table among them. */
static const char standard_layout[] =
	"{\"buildId\": 3237998081, \"program\": {\"name\": \"std\", \"tables\": [\n"
	"{\"name\": \"tunnel\", \"index\": 0, \"kind\": \"exact\", \"size\": 1024, \"keyWidth\": 44,\n"
	" \"dataWidth\": 40, \"latency\": 3, \"counters\": false, \"ways\": 4,\n"
	" \"key\": [{\"fields\": [\"meta.vni\"], \"width\": 24},\n"
	"          {\"fields\": [\"meta.x\"], \"width\": 20}],\n"
	" \"actions\": [{\"name\": \"set\", \"id\": 3, \"params\": [{\"name\": \"v\", \"width\": 40,\n"
	"   \"offset\": 0}], \"ops\": []}], \"default\": {\"action\": \"set\", \"data\": 0}},\n"
	"{\"name\": \"v4\", \"index\": 1, \"kind\": \"lpm\", \"size\": 2048, \"keyWidth\": 32,\n"
	" \"dataWidth\": 32, \"latency\": 14, \"counters\": true,\n"
	" \"lpm\": {\"fanout\": 4, \"levels\": 12,\n"
	"  \"nodes\": [1, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 2049],\n"
	"  \"pointerBits\": 15, \"memoryLevels\": 0},\n"
	" \"key\": [{\"fields\": [\"hdr.ipv4.dst\"], \"width\": 32}],\n"
	" \"actions\": [{\"name\": \"nh\", \"id\": 0, \"params\": [{\"name\": \"ip\", \"width\": 32,\n"
	"   \"offset\": 0}], \"ops\": []}], \"default\": {\"action\": \"nh\", \"data\": 0}},\n"
	"{\"name\": \"v6\", \"index\": 2, \"kind\": \"lpm\", \"size\": 1024, \"keyWidth\": 128,\n"
	" \"dataWidth\": 48, \"latency\": 13, \"counters\": false,\n"
	" \"lpm\": {\"fanout\": 3, \"levels\": 11,\n"
	"  \"nodes\": [1, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025],\n"
	"  \"pointerBits\": 15, \"memoryLevels\": 0},\n"
	" \"key\": [{\"fields\": [\"hdr.ipv6.dst\"], \"width\": 128}], \"default\": null,\n"
	" \"actions\": [{\"name\": \"via\", \"id\": 1, \"params\": [{\"name\": \"smac\", \"width\": 48,\n"
	"   \"offset\": 0}], \"ops\": []}]},\n"
	"{\"name\": \"t\", \"index\": 3, \"kind\": \"ternary\", \"size\": 256, \"keyWidth\": 104,\n"
	" \"dataWidth\": 32, \"latency\": 2, \"counters\": false,\n"
	" \"key\": [{\"fields\": [\"k\"], \"width\": 104}],\n"
	" \"actions\": [{\"name\": \"a\", \"id\": 0, \"params\": [], \"ops\": []}]}\n"
	"]}}\n";

void test_ctl_second_program(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_layout_load_text(dev, standard_layout, sizeof standard_layout - 1,
					      "std.json"));
	char *out = NULL;
	size_t outlen = 0;
	FILE *stream = open_memstream(&out, &outlen);
	struct ctl c;
	ctl_init(&c, dev, stream);
	static const char *const lines[] = {
		"table_add v6 via 2001:db8::/32 => 02:00:00:00:00:01",
		"table_add v6 via 2001:db8:0:1::/64 => 02:00:00:00:00:02",
		"table_add v6 via ::/0 => 02:00:00:00:00:03",
		"table_add v6 via ::ffff:10.0.0.0/104 => 02:00:00:00:00:04",
		"table_add tunnel set 0xABCDEF 5 => 1099511627775",
		"table_add v4 nh 10.1.0.0/16 => 192.168.1.1",
		"table_dump v6",
		"table_dump tunnel",
		"table_dump v4",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		CHECK_MSG(ctl_execute(&c, lines[i]) == 0, "%s: %s", lines[i], c.error);
	fclose(stream);
	CHECK_MSG(strstr(out, "  0    2001:db8::/32 => via(smac=02:00:00:00:00:01)\n"
			 "  1    2001:db8:0:1::/64 => via(smac=02:00:00:00:00:02)\n"
			 "  2    ::/0 => via(smac=02:00:00:00:00:03)\n"
			 "  3    ::ffff:10.0.0.0/104 => via(smac=02:00:00:00:00:04)\n4 entries\n"),
		  "%s", out);
	CHECK_MSG(strstr(out, "  handle meta.vni meta.x => action\n"
			 "  0    11259375 5 => set(v=1099511627775)\n"
			 "  default => ? (table tunnel holds action id 0, which the layout does not "
			 "name)\n"), "%s", out);
	CHECK_MSG(strstr(out, "  0    10.1.0.0/16 => nh(ip=192.168.1.1)\n"), "%s", out);
	free(out);

	/* Both key fields go into the 44-bit key: 0xABCDEF << 20 | 5. */
	uint8_t key[6] = { 0x0A, 0xBC, 0xDE, 0xF0, 0x00, 0x05 };
	uint32_t index;
	struct matcha_entry e;
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, 0, key, 44, &index));
	CHECK_OK(dev, matcha_exact_read(dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 3 && e.data[0] == 0xFF && e.data[4] == 0xFF);
	/* A /64 IPv6 route reads back from the 128-bit trie. */
	uint8_t prefix[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1 };
	CHECK_OK(dev, matcha_lpm_read(dev, 2, prefix, 64, NULL, &e));
	CHECK(e.valid && e.action_id == 1 && e.data[5] == 2);
	/* An IPv4-mapped route: 10/8 behind ::ffff:0:0/96. */
	uint8_t mapped[16] = { [10] = 0xff, 0xff, 10 };
	CHECK_OK(dev, matcha_lpm_read(dev, 2, mapped, 104, NULL, &e));
	CHECK(e.valid && e.action_id == 1 && e.data[5] == 4);
	matcha_close(dev);
	fake_free(fd);
}

/* app_control shows and sets the Corundum app block's CONTROL bits, as the fake holds them. */
void test_ctl_app_control(void)
{
	struct session s;
	struct fake_cfg cfg = fake_standard_cfg();
	CHECK(session_open_on(&s, &cfg, NULL));
	RUN_FAILS(&s, "app_control", MATCHA_ENODEV, "app_control: the device is no Corundum "
		  "Matcha application block: its APP_ID could not be read");
	fake_add_app_block(s.fd);
	RUN_OK(&s, "app_control", "CONTROL 0x00000000\n  tx_pipeline  off");
	RUN_OK(&s, "app_control cpu_port on", "CONTROL 0x00000002\n  tx_pipeline  off host frames "
	       "through the pipeline\n  cpu_port     on  punted frames");
	CHECK(s.fd->app.control == MATCHA_HW_APP_CONTROL_CPU_PORT);
	RUN_OK(&s, "app_control tx_pipeline on", "CONTROL 0x00000003");
	CHECK(s.fd->app.control == (MATCHA_HW_APP_CONTROL_CPU_PORT | MATCHA_HW_APP_CONTROL_TX_PIPELINE));
	RUN_OK(&s, "app_control cpu_port off", "CONTROL 0x00000001\n  tx_pipeline  on ");
	CHECK(s.fd->app.control == MATCHA_HW_APP_CONTROL_TX_PIPELINE);
	RUN_OK(&s, "app_control tx_pipeline off", "CONTROL 0x00000000");
	CHECK(s.fd->app.control == 0);

	unsigned long writes = s.fd->app.control_writes;
	RUN_FAILS(&s, "app_control cpu_port yes", MATCHA_EINVAL,
		  "app_control: \"yes\" is neither on nor off");
	RUN_FAILS(&s, "app_control tx on", MATCHA_EINVAL,
		  "app_control: \"tx\" is no CONTROL bit (tx_pipeline, cpu_port)");
	RUN_FAILS(&s, "app_control cpu_port", MATCHA_EINVAL, "usage: app_control");
	CHECK(s.fd->app.control_writes == writes);
	session_close(&s);
}
