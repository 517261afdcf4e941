/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha-ctl commands. The command table below is the whole language: each entry names a
 * command, its arguments, a line of help and the function that runs it; a new command is
 * one more entry and one more function.
 */
#define _DEFAULT_SOURCE /* getline; ether_aton_r */
#include "ctl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/ether.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* strcasecmp */

struct words {
	int n;
	char *w[CTL_MAX_WORDS];
};

struct ctl_command;
typedef int (*ctl_fn)(struct ctl *c, const struct ctl_command *command, const struct words *a);

struct ctl_command {
	const char *name;
	const char *args;
	const char *help;
	ctl_fn run;
};

static int cmd_table_add(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_delete(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_modify(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_dump(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_clear(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_set_default(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_counter_read(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_counter_reset(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_table_info(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_meter_set_rates(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_meter_get_rates(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_meter_reset(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_set_clock_hz(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_dump(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_delete(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_flush(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_stats(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_set_timeout(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_get_timeout(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_set_tick(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_set_scan_interval(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_set_policy(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_session_get_policy(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_app_control(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_help(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);
static int cmd_quit(struct ctl *c, const struct ctl_command *command,
			 const struct words *a);

static const struct ctl_command commands[] = {
	{ "table_add", "<table> <action> <match fields> => <action params> [priority]",
	  "add an entry; prints its handle (ternary tables need a priority, higher wins)",
	  cmd_table_add },
	{ "table_delete", "<table> <handle>", "delete an entry", cmd_table_delete },
	{ "table_modify", "<table> <action> <handle> => <action params>",
	  "give an entry a new action and parameters", cmd_table_modify },
	{ "table_dump", "<table>", "list a table's entries as the hardware holds them",
	  cmd_table_dump },
	{ "table_clear", "<table>", "delete every entry and zero the counters", cmd_table_clear },
	{ "table_set_default", "<table> <action> [=>] <action params>",
	  "set the action of lookups that miss", cmd_table_set_default },
	{ "counter_read", "<table> <handle>", "an entry's packet and byte counts",
	  cmd_counter_read },
	{ "counter_reset", "<table> <handle>", "read an entry's counts and restart them from 0",
	  cmd_counter_reset },
	{ "table_info", "[<table>]", "tables, key fields, actions and parameters",
	  cmd_table_info },
	{ "meter_set_rates",
	  "<meter> <index> <cir>:<cburst> [<pir>:<pburst>] [srtcm|trtcm] [color-aware] [packets]",
	  "configure a meter: rates in bytes (packets) per second, bursts in bytes (packets)",
	  cmd_meter_set_rates },
	{ "meter_get_rates", "<meter> <index>", "a meter's configuration and bucket levels",
	  cmd_meter_get_rates },
	{ "meter_reset", "<meter> <index>",
	  "unconfigure a meter (it marks every packet green)", cmd_meter_reset },
	{ "set_clock_hz", "<hz>", "the pipeline's clock frequency, which the meter rates need",
	  cmd_set_clock_hz },
	{ "session_dump", "<table>",
	  "every session: zone, protocol, initiator -> responder, state, age, packets, bytes",
	  cmd_session_dump },
	{ "session_delete", "<table> <zone> <protocol> <src> <sport> <dst> <dport>",
	  "delete a session, given in either direction", cmd_session_delete },
	{ "session_flush", "<table>", "delete every session and zero the counts",
	  cmd_session_flush },
	{ "session_stats", "<table>",
	  "occupancy, sessions learned and aged, packets refused, hits and misses",
	  cmd_session_stats },
	{ "session_set_timeout", "<table> <state> <ticks>",
	  "idle timeout of a state (1..65534 ticks; 65535: never)", cmd_session_set_timeout },
	{ "session_get_timeout", "<table> [<state>]", "the idle timeout of a state, or of all",
	  cmd_session_get_timeout },
	{ "session_set_tick", "<table> <clocks>", "the length of a tick in clocks",
	  cmd_session_set_tick },
	{ "session_set_scan_interval", "<table> <clocks>",
	  "a table in memory: the memory's answers between the aging scanner's reads, clocks on a memory that keeps up (0: none)",
	  cmd_session_set_scan_interval },
	{ "session_set_policy", "<table> punt|drop",
	  "what happens to a packet that may learn but finds no free way", cmd_session_set_policy },
	{ "session_get_policy", "<table>", "the full-table policy", cmd_session_get_policy },
	{ "app_control", "[tx_pipeline|cpu_port on|off]",
	  "a Corundum card's CONTROL bits: host frames through the pipeline, the CPU port",
	  cmd_app_control },
	{ "help", "[<command>]", "the commands, or one command in detail", cmd_help },
	{ "quit", "", "leave (end of input does the same)", cmd_quit },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char match_help[] =
	"match fields, one per key field in key order:\n"
	"  exact     00:11:22:33:44:55   10.0.0.1   6   0x0800\n"
	"  prefix    10.0.0.0/8          (LPM tables; ternary tables as a mask)\n"
	"  ternary   0x0a000001&&&0xff000000   10.0.0.0&&&255.0.0.0\n"
	"  range     80->90              (ternary tables: one entry on a range field,\n"
	"                                 prefixes on any other field)\n"
	"on a range field an exact value is lo = hi, 0&&&0 the whole field\n"
	"values: decimal, 0x hex, a.b.c.d, aa:bb:cc:dd:ee:ff, IPv6 (2001:db8::1, ::ffff:10.0.0.1)\n";

/* BMv2's simple_switch_CLI takes rates per microsecond; these are P4Runtime MeterConfig's
 * units, those of matcha_meter_set. */
static const char meter_help[] =
	"units (P4Runtime MeterConfig, as the driver's matcha_meter_set): rates in bytes per\n"
	"second, bursts in bytes; with 'packets', packets per second and packets.\n"
	"  trtcm (RFC 2698, the default with two pairs): <cir>:<cbs> <pir>:<pbs>, PIR >= CIR\n"
	"  srtcm (RFC 2697, the default with one pair):  <cir>:<cbs> [0:<ebs>], the excess\n"
	"        bucket fills at CIR, so its rate is 0\n"
	"  color-aware  honour the colour the packet already has (default: colour-blind)\n"
	"the rates are converted with the pipeline's clock: matcha-ctl --clock-hz HZ or\n"
	"set_clock_hz HZ first. Example: meter_set_rates policers 3 125000:10000 250000:20000\n";

static const char session_help[] =
	"session tables (docs/sessions.md): <table> is the index table_info lists (or a name\n"
	"from the layout); <protocol> tcp, udp or a number; addresses a.b.c.d; <zone> 0..2^24-1\n"
	"(a VNI or a VRF). States: SYN_SENT SYN_ACK ESTABLISHED CLOSING RESET UDP. Ages and\n"
	"timeouts are in ticks, session_set_tick sets the clocks per tick.\n"
	"Example: session_delete 4 7 tcp 10.0.0.1 40000 192.168.0.1 443\n";

void ctl_init(struct ctl *c, matcha_dev *dev, FILE *out)
{
	memset(c, 0, sizeof *c);
	c->dev = dev;
	c->out = out;
}

static int fail(struct ctl *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ctl *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof c->error, fmt, ap);
	va_end(ap);
	return rc;
}

/* A failed library call: its message, after the command's name unless it starts with it
 * (the library names its calls, and session_set_tick is also a command). */
static int lib_fail(struct ctl *c, const char *cmd, int rc)
{
	const char *msg = matcha_last_error(c->dev);
	size_t n = strlen(cmd);
	if (!strncmp(msg, cmd, n) && msg[n] == ':')
		return fail(c, rc, "%s", msg);
	return fail(c, rc, "%s: %s", cmd, msg);
}

/* ----------------------------------------------------------------------- values */

static int perr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return MATCHA_EINVAL;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = (char)tolower((unsigned char)ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* v = v * mul + add; false if it no longer fits in 512 bits. */
static bool mul_add(struct matcha_value *v, unsigned mul, unsigned add)
{
	unsigned carry = add;
	for (int i = MATCHA_VALUE_BYTES - 1; i >= 0; i--) {
		unsigned x = v->be[i] * mul + carry;
		v->be[i] = (uint8_t)x;
		carry = x >> 8;
	}
	return carry == 0;
}

/*
 * aa:bb:cc:dd:ee:ff, one or two hex digits a byte, as ether_aton_r reads it. ether_aton_r
 * stops after the sixth byte without looking at what follows ("00:11:22:33:44:555" and
 * "00:11:22:33:44:55:66" read as 00:11:22:33:44:55), so the whole text is held to the form
 * here: five colons and a last byte of one or two hex digits that ends it.
 */
static bool parse_mac(const char *text, struct matcha_value *v)
{
	static const char hex[] = "0123456789abcdefABCDEF";
	const char *last = strrchr(text, ':');
	struct ether_addr mac;
	unsigned colons = 0;
	for (const char *p = text; *p; p++)
		colons += *p == ':';
	size_t tail = last ? strlen(last + 1) : 0;
	if (colons != 5 || tail < 1 || tail > 2 || strspn(last + 1, hex) != tail ||
	    !ether_aton_r(text, &mac))
		return false;
	memcpy(v->be + MATCHA_VALUE_BYTES - 6, mac.ether_addr_octet, 6);
	return true;
}

/* A decimal number of at most `max`, all of text. */
static bool small_decimal(const char *text, unsigned long max, unsigned long *out)
{
	if (!isdigit((unsigned char)text[0]) || strlen(text) > 10)
		return false;
	char *end;
	errno = 0;
	unsigned long x = strtoul(text, &end, 10);
	if (*end || errno || x > max)
		return false;
	*out = x;
	return true;
}

int ctl_parse_value(const char *text, struct matcha_value *v, char *err, size_t errlen)
{
	memset(v, 0, sizeof *v);
	if (!*text)
		return perr(err, errlen, "empty value");
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		if (!text[2])
			return perr(err, errlen, "\"%s\": no hex digits after 0x", text);
		for (const char *p = text + 2; *p; p++) {
			int d = hex_digit(*p);
			if (d < 0)
				return perr(err, errlen, "\"%s\" is not a hex number", text);
			if (!mul_add(v, 16, (unsigned)d))
				return perr(err, errlen, "\"%s\" is wider than 512 bits", text);
		}
		return 0;
	}
	if (strchr(text, ':')) {
		/* IPv6 text forms (RFC 4291 2.2), the IPv4-mapped ::ffff:a.b.c.d included. */
		if (parse_mac(text, v) ||
		    inet_pton(AF_INET6, text, v->be + MATCHA_VALUE_BYTES - 16) == 1)
			return 0;
		return perr(err, errlen, "\"%s\" is not a MAC address (six hex bytes separated by "
			    "':') nor an IPv6 address", text);
	}
	if (strchr(text, '.')) {
		if (inet_pton(AF_INET, text, v->be + MATCHA_VALUE_BYTES - 4) != 1)
			return perr(err, errlen, "\"%s\" is not an IPv4 address (four numbers 0..255 "
				    "separated by '.', no leading zeros)", text);
		return 0;
	}
	for (const char *p = text; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return perr(err, errlen, "\"%s\" is not a number (decimal, 0x hex, an IPv4 "
				    "or a MAC address)", text);
		if (!mul_add(v, 10, (unsigned)(*p - '0')))
			return perr(err, errlen, "\"%s\" is wider than 512 bits", text);
	}
	return 0;
}

/* text split at the first `sep` into two values; false if sep is not in it. */
static bool split(const char *text, const char *sep, char *left, char *right, size_t len)
{
	const char *at = strstr(text, sep);
	if (!at || (size_t)(at - text) >= len || strlen(at + strlen(sep)) >= len)
		return false;
	memcpy(left, text, (size_t)(at - text));
	left[at - text] = '\0';
	strcpy(right, at + strlen(sep));
	return true;
}

/* The bits of ::ffff:0:0/96 in front of an IPv4-mapped address (RFC 4291 2.5.5.2). */
#define IPV4_MAPPED_PREFIX 96

/* A value for a key field `width` bits wide (0: any width). An IPv4-mapped IPv6 address
 * names an IPv4 address, so on a field of at most 32 bits it is that address: *mapped
 * says it was taken so. */
static int parse_field_value(const char *text, unsigned width, struct matcha_value *v,
			     bool *mapped, char *err, size_t errlen)
{
	int rc = ctl_parse_value(text, v, err, errlen);
	struct in6_addr a;
	if (rc || !width || width > 32 || !strchr(text, ':') ||
	    inet_pton(AF_INET6, text, &a) != 1 || !IN6_IS_ADDR_V4MAPPED(&a))
		return rc;
	memset(v->be, 0, MATCHA_VALUE_BYTES - 4);
	*mapped = true;
	return 0;
}

int ctl_parse_field_match(const char *text, unsigned width, struct matcha_match *m, char *err,
			  size_t errlen)
{
	char left[CTL_MAX_LINE], right[CTL_MAX_LINE];
	bool mapped = false;
	int rc;
	memset(m, 0, sizeof *m);
	if (split(text, "&&&", left, right, sizeof left)) {
		m->kind = MATCHA_MATCH_TERNARY;
		if ((rc = parse_field_value(left, width, &m->value, &mapped, err, errlen)) ||
		    (rc = parse_field_value(right, width, &m->mask, &mapped, err, errlen)))
			return rc;
		return 0;
	}
	if (split(text, "->", left, right, sizeof left)) {
		m->kind = MATCHA_MATCH_RANGE;
		if ((rc = parse_field_value(left, width, &m->value, &mapped, err, errlen)) ||
		    (rc = parse_field_value(right, width, &m->high, &mapped, err, errlen)))
			return rc;
		return 0;
	}
	if (split(text, "/", left, right, sizeof left)) {
		unsigned long len;
		m->kind = MATCHA_MATCH_LPM;
		if ((rc = parse_field_value(left, width, &m->value, &mapped, err, errlen)))
			return rc;
		if (!small_decimal(right, 512, &len))
			return perr(err, errlen, "\"%s\": the prefix length after '/' must be a "
				    "number 0..512", text);
		if (mapped && len < IPV4_MAPPED_PREFIX)
			return perr(err, errlen, "\"%s\": an IPv4-mapped prefix on a %u-bit field "
				    "must be at least /%d", text, width, IPV4_MAPPED_PREFIX);
		m->prefix_len = (unsigned)len - (mapped ? IPV4_MAPPED_PREFIX : 0);
		return 0;
	}
	m->kind = MATCHA_MATCH_EXACT;
	return parse_field_value(text, width, &m->value, &mapped, err, errlen);
}

int ctl_parse_match(const char *text, struct matcha_match *m, char *err, size_t errlen)
{
	return ctl_parse_field_match(text, 0, m, err, errlen);
}

/* ---------------------------------------------------------------- printing values */

/* A kind's name as layout.json spells it: the generated names, indexed by kind code. */
static const char *kind_name(unsigned kind)
{
	static const char *const names[] = MATCHA_HW_KIND_NAMES;
	return kind < sizeof names / sizeof *names && names[kind][0] ? names[kind] : "unknown kind";
}

static uint64_t low64(const struct matcha_value *v)
{
	uint64_t x = 0;
	for (unsigned i = MATCHA_VALUE_BYTES - 8; i < MATCHA_VALUE_BYTES; i++)
		x = x << 8 | v->be[i];
	return x;
}

static bool high_zero(const struct matcha_value *v, unsigned bytes)
{
	for (unsigned i = 0; i < MATCHA_VALUE_BYTES - bytes; i++)
		if (v->be[i])
			return false;
	return true;
}

/* A value as people write it for a field of `width` bits called `name`. */
static void format_value(const struct matcha_value *v, unsigned width, const char *name,
			 char *buf, size_t len)
{
	const uint8_t *b = v->be + MATCHA_VALUE_BYTES;
	char v6[INET6_ADDRSTRLEN];
	/* inet_ntop writes RFC 5952's form (lower case, the longest zero run as "::"), with an
	 * IPv4 tail for mapped (::ffff:a.b.c.d) and compatible (::a.b.c.d) addresses. */
	if (width == 128 && strstr(name, "ipv6") && inet_ntop(AF_INET6, b - 16, v6, sizeof v6)) {
		snprintf(buf, len, "%s", v6);
		return;
	}
	if (width == 48 && high_zero(v, 6))
		snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", b[-6], b[-5], b[-4], b[-3],
			 b[-2], b[-1]);
	else if (width == 32 && high_zero(v, 4) && (strstr(name, "ipv4") || strstr(name, "ip")))
		snprintf(buf, len, "%u.%u.%u.%u", b[-4], b[-3], b[-2], b[-1]);
	else if (high_zero(v, 8) && width <= 64)
		snprintf(buf, len, "%llu", (unsigned long long)low64(v));
	else {
		size_t o = (size_t)snprintf(buf, len, "0x");
		unsigned i = 0;
		while (i < MATCHA_VALUE_BYTES - 1 && !v->be[i])
			i++;
		for (; i < MATCHA_VALUE_BYTES && o + 3 < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%02x", v->be[i]);
	}
}

static void format_match(const struct matcha_match *m, const struct matcha_field_info *f,
			 char *buf, size_t len)
{
	char a[140], b[140];
	format_value(&m->value, f->width, f->name, a, sizeof a);
	switch (m->kind) {
	case MATCHA_MATCH_LPM: snprintf(buf, len, "%s/%u", a, m->prefix_len); break;
	case MATCHA_MATCH_TERNARY:
		format_value(&m->mask, f->width, f->name, b, sizeof b);
		snprintf(buf, len, "%s&&&%s", a, b);
		break;
	case MATCHA_MATCH_RANGE:
		format_value(&m->high, f->width, f->name, b, sizeof b);
		snprintf(buf, len, "%s->%s", a, b);
		break;
	default: snprintf(buf, len, "%s", a);
	}
}

static void print_action(struct ctl *c, const struct matcha_action_info *ac,
			 const struct matcha_value *params)
{
	char text[200];
	fprintf(c->out, "%s(", ac->name);
	for (unsigned p = 0; p < ac->nparams; p++) {
		format_value(&params[p], ac->params[p].width, ac->params[p].name, text, sizeof text);
		fprintf(c->out, "%s%s=%s", p ? ", " : "", ac->params[p].name, text);
	}
	fprintf(c->out, ")");
}

/* ---------------------------------------------------------------------- arguments */

static int usage(struct ctl *c, const struct ctl_command *command)
{
	return fail(c, MATCHA_EINVAL, "%s: usage: %s %s", command->name, command->name,
		    command->args);
}

static int parse_u32(struct ctl *c, const char *cmd, const char *what, const char *text,
		     uint32_t *out)
{
	unsigned long x;
	if (!small_decimal(text, UINT32_MAX, &x))
		return fail(c, MATCHA_EINVAL, "%s: %s \"%s\" is not a number 0..%u", cmd, what, text,
			    UINT32_MAX);
	*out = (uint32_t)x;
	return 0;
}

/* The table's layout by name, or a failure saying why there is none. */
static int need_table(struct ctl *c, const char *cmd, const char *name,
		      const struct matcha_table_layout **tl)
{
	unsigned t;
	int rc = matcha_table_by_name(c->dev, name, &t);
	if (rc == MATCHA_ELAYOUT)
		return fail(c, rc, "%s: tables have names only with a layout: start matcha-ctl with "
			    "--layout FILE (the generator's layout.json)", cmd);
	if (rc)
		return lib_fail(c, cmd, rc);
	*tl = matcha_layout_table(c->dev, t);
	return 0;
}

/* Parses action parameters a->w[from .. from+n). */
static int parse_params(struct ctl *c, const char *cmd, const struct matcha_action_info *ac,
			const struct words *a, int from, int n, struct matcha_value *params)
{
	char err[300];
	if (n > MATCHA_MAX_PARAMS)
		return fail(c, MATCHA_EINVAL, "%s: %d action parameters, at most %d", cmd, n,
			    MATCHA_MAX_PARAMS);
	for (int p = 0; p < n; p++)
		if (ctl_parse_value(a->w[from + p], &params[p], err, sizeof err))
			return fail(c, MATCHA_EINVAL, "%s: parameter %s: %s", cmd,
				    p < (int)ac->nparams ? ac->params[p].name : "(extra)", err);
	return 0;
}

/* The position of "=>" at or after `from`, or -1. */
static int arrow(const struct words *a, int from)
{
	for (int i = from; i < a->n; i++)
		if (!strcmp(a->w[i], "=>"))
			return i;
	return -1;
}

/* The meter array's descriptor by name, or a failure saying why there is none. */
static int need_meter(struct ctl *c, const char *cmd, const char *name, unsigned *table)
{
	int rc = matcha_meter_by_name(c->dev, name, table);
	if (rc == MATCHA_ELAYOUT)
		return fail(c, rc, "%s: meter arrays have names only with a layout: start "
			    "matcha-ctl with --layout FILE (the generator's layout.json)", cmd);
	return rc ? lib_fail(c, cmd, rc) : 0;
}

/* The meter commands' <meter> <index>, and the clock the rates need when `need_clock`. */
static int meter_args(struct ctl *c, const char *cmd, const struct words *a, bool need_clock,
		      unsigned *table, uint32_t *index)
{
	int rc;
	if ((rc = need_meter(c, cmd, a->w[1], table)) ||
	    (rc = parse_u32(c, cmd, "meter index", a->w[2], index)))
		return rc;
	if (need_clock && !c->clock_hz)
		return fail(c, MATCHA_EINVAL, "%s: the pipeline's clock frequency is not known: "
			    "start matcha-ctl with --clock-hz HZ or run set_clock_hz HZ first", cmd);
	return 0;
}

/* A 64-bit count (decimal or 0x hex). */
static int parse_u64(struct ctl *c, const char *cmd, const char *what, const char *text,
		     uint64_t *out)
{
	struct matcha_value v;
	char err[300];
	if (strpbrk(text, ".:") || ctl_parse_value(text, &v, err, sizeof err))
		return fail(c, MATCHA_EINVAL, "%s: %s \"%s\" is not a number (decimal or 0x hex)",
			    cmd, what, text);
	if (!high_zero(&v, 8))
		return fail(c, MATCHA_EINVAL, "%s: %s \"%s\" is wider than 64 bits", cmd, what,
			    text);
	*out = low64(&v);
	return 0;
}

/* <rate>:<burst>, the pair `which` ("committed", "peak"). */
static int parse_rate_pair(struct ctl *c, const char *cmd, const char *which, const char *text,
			   uint64_t *rate, uint64_t *burst)
{
	char left[CTL_MAX_LINE], right[CTL_MAX_LINE], what[40];
	int rc;
	if (!split(text, ":", left, right, sizeof left))
		return fail(c, MATCHA_EINVAL, "%s: the %s pair \"%s\" is not <rate>:<burst>", cmd,
			    which, text);
	snprintf(what, sizeof what, "%s rate", which);
	if ((rc = parse_u64(c, cmd, what, left, rate)))
		return rc;
	snprintf(what, sizeof what, "%s burst", which);
	return parse_u64(c, cmd, what, right, burst);
}

/* The table named by a->w[1] and its action named by a->w[2], or a failure saying why. */
static int need_table_action(struct ctl *c, const char *cmd, const struct words *a,
			     const struct matcha_table_layout **tl,
			     const struct matcha_action_info **ac)
{
	int rc = need_table(c, cmd, a->w[1], tl);
	if (rc)
		return rc;
	if ((*ac = matcha_action_by_name(*tl, a->w[2])))
		return 0;
	char names[300] = "";
	for (unsigned i = 0; i < (*tl)->nactions; i++) {
		size_t at = strlen(names);
		snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
			 (*tl)->actions[i].name);
	}
	return fail(c, MATCHA_EINVAL, "%s: table %s has no action \"%s\" (actions: %s)", cmd,
		    (*tl)->name, a->w[2], names);
}

/* ----------------------------------------------------------------------- commands */

static int cmd_table_add(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	const struct matcha_action_info *ac;
	struct matcha_match match[MATCHA_MAX_FIELDS];
	struct matcha_value params[MATCHA_MAX_PARAMS];
	char err[300];
	int rc, to = arrow(a, 3);
	if (a->n < 3 || to < 0)
		return usage(c, command);
	if ((rc = need_table_action(c, cmd, a, &tl, &ac)))
		return rc;
	if (c->batch && tl->kind == MATCHA_KIND_LPM && c->loading != tl) {
		rc = matcha_lpm_load_begin(c->dev, tl->table);
		if (rc == 0) {
			c->loading = tl;
			c->load_base = c->loaded;
		} else if (rc != MATCHA_EEXIST) /* a table holding prefixes takes them one by one */
			return lib_fail(c, cmd, rc);
	}
	int nmatch = to - 3, nafter = a->n - to - 1;
	if (nmatch != (int)tl->nfields) {
		char names[400] = "";
		for (unsigned f = 0; f < tl->nfields; f++) {
			size_t at = strlen(names);
			snprintf(names + at, sizeof names - at, "%s%s", f ? " " : "",
				 tl->fields[f].name);
		}
		return fail(c, MATCHA_EINVAL, "%s: table %s takes %u match field%s (%s), %d given",
			    cmd, tl->name, tl->nfields, tl->nfields == 1 ? "" : "s", names, nmatch);
	}
	for (int f = 0; f < nmatch; f++)
		if (ctl_parse_field_match(a->w[3 + f], tl->fields[f].width, &match[f], err,
					  sizeof err))
			return fail(c, MATCHA_EINVAL, "%s: match field %s: %s", cmd,
				    tl->fields[f].name, err);
	/* One word more than the action's parameters is the priority. */
	int64_t priority = MATCHA_NO_PRIORITY;
	int nparams = nafter;
	if (nafter == (int)ac->nparams + 1) {
		uint32_t p = 0;
		if ((rc = parse_u32(c, cmd, "priority", a->w[a->n - 1], &p)))
			return rc;
		priority = p;
		nparams--;
	}
	if ((rc = parse_params(c, cmd, ac, a, to + 1, nparams, params)))
		return rc;
	uint32_t handle = 0;
	if ((rc = matcha_entry_add(c->dev, tl->name, match, (unsigned)nmatch, ac->name, params,
				   (unsigned)nparams, priority, &handle)))
		return lib_fail(c, cmd, rc);
	c->loaded++;
	fprintf(c->out, "Entry added to %s with handle %u\n", tl->name, (unsigned)handle);
	return 0;
}

static int cmd_table_delete(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	uint32_t handle = 0;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = need_table(c, cmd, a->w[1], &tl)) ||
	    (rc = parse_u32(c, cmd, "handle", a->w[2], &handle)))
		return rc;
	if ((rc = matcha_entry_delete(c->dev, tl->name, handle)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Entry %u deleted from %s\n", (unsigned)handle, tl->name);
	return 0;
}

static int cmd_table_modify(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	const struct matcha_action_info *ac;
	struct matcha_value params[MATCHA_MAX_PARAMS];
	uint32_t handle = 0;
	int rc;
	if (a->n < 5 || strcmp(a->w[4], "=>"))
		return usage(c, command);
	if ((rc = need_table_action(c, cmd, a, &tl, &ac)) ||
	    (rc = parse_u32(c, cmd, "handle", a->w[3], &handle)) ||
	    (rc = parse_params(c, cmd, ac, a, 5, a->n - 5, params)))
		return rc;
	if ((rc = matcha_entry_modify(c->dev, tl->name, handle, ac->name, params,
				      (unsigned)(a->n - 5))))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Entry %u of %s modified\n", (unsigned)handle, tl->name);
	return 0;
}

static int cmd_table_set_default(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	const struct matcha_action_info *ac;
	struct matcha_value params[MATCHA_MAX_PARAMS];
	int rc;
	if (a->n < 3)
		return usage(c, command);
	if ((rc = need_table_action(c, cmd, a, &tl, &ac)))
		return rc;
	int from = a->n > 3 && !strcmp(a->w[3], "=>") ? 4 : 3;
	if ((rc = parse_params(c, cmd, ac, a, from, a->n - from, params)))
		return rc;
	if ((rc = matcha_default_set(c->dev, tl->name, ac->name, params,
				     (unsigned)(a->n - from))))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Default action of %s set to %s\n", tl->name, ac->name);
	return 0;
}

static int cmd_table_dump(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	struct matcha_table_info in;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_table(c, cmd, a->w[1], &tl)))
		return rc;
	if ((rc = matcha_table_info(c->dev, tl->table, &in)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "table %s (%s, %u %s)\n  handle", tl->name, kind_name(tl->kind),
		in.size, tl->kind == MATCHA_KIND_LPM ? "prefixes" : "entries");
	for (unsigned f = 0; f < tl->nfields; f++)
		fprintf(c->out, " %s", tl->fields[f].name);
	fprintf(c->out, " => action\n");
	unsigned count = 0;
	uint32_t h = 0;
	for (; (rc = matcha_entry_next(c->dev, tl->name, h, &h)) == 0; h++) {
		struct matcha_entry_view v;
		char text[400];
		if ((rc = matcha_entry_read(c->dev, tl->name, h, &v)))
			return lib_fail(c, cmd, rc);
		fprintf(c->out, "  %-4u", (unsigned)h);
		for (unsigned f = 0; f < v.nmatch; f++) {
			format_match(&v.match[f], &tl->fields[f], text, sizeof text);
			fprintf(c->out, " %s", text);
		}
		fprintf(c->out, " => ");
		print_action(c, v.action, v.params);
		if (v.has_priority)
			fprintf(c->out, " priority %u", (unsigned)v.priority);
		if (v.hw_entries > 1)
			fprintf(c->out, " [%u hardware entries]", v.hw_entries);
		fprintf(c->out, "\n");
		count++;
	}
	if (rc != MATCHA_ENOENT)
		return lib_fail(c, cmd, rc);
	if (in.default_action) {
		const struct matcha_action_info *ac;
		struct matcha_value params[MATCHA_MAX_PARAMS];
		rc = matcha_default_get(c->dev, tl->name, &ac, params);
		/* An action id the layout does not name is shown, not fatal to the listing. */
		if (rc && rc != MATCHA_EHW)
			return lib_fail(c, cmd, rc);
		fprintf(c->out, "  default => ");
		if (rc)
			fprintf(c->out, "? (%s)", matcha_last_error(c->dev));
		else
			print_action(c, ac, params);
		fprintf(c->out, "\n");
	}
	fprintf(c->out, "%u entr%s\n", count, count == 1 ? "y" : "ies");
	return 0;
}

static int cmd_table_clear(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_table(c, cmd, a->w[1], &tl)))
		return rc;
	if ((rc = matcha_table_clear(c->dev, tl->table)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Table %s cleared\n", tl->name);
	return 0;
}

static int counters(struct ctl *c, const struct ctl_command *command, const struct words *a,
		    unsigned flags)
{
	const char *cmd = command->name;
	const struct matcha_table_layout *tl;
	uint32_t handle = 0;
	uint64_t packets, bytes;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = need_table(c, cmd, a->w[1], &tl)) ||
	    (rc = parse_u32(c, cmd, "handle", a->w[2], &handle)))
		return rc;
	if ((rc = matcha_entry_counters(c->dev, tl->name, handle, &packets, &bytes, flags)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "%s[%u]: packets=%llu bytes=%llu%s\n", tl->name, (unsigned)handle,
		(unsigned long long)packets, (unsigned long long)bytes,
		flags & MATCHA_COUNTERS_RESET ? " (now reset)" : "");
	return 0;
}

static int cmd_counter_read(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	return counters(c, command, a, 0);
}

static int cmd_counter_reset(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	return counters(c, command, a, MATCHA_COUNTERS_RESET);
}

static void info_table(struct ctl *c, unsigned t)
{
	struct matcha_table_info in;
	const struct matcha_table_layout *tl = matcha_layout_table(c->dev, t);
	if (matcha_table_info(c->dev, t, &in))
		return;
	if (in.kind == MATCHA_KIND_METER) {
		const struct matcha_meter_layout *ml = matcha_layout_meter(c->dev, t);
		fprintf(c->out, "%u %s: meter array, %u meters\n", t, ml ? ml->name : "(no layout)",
			in.size);
		return;
	}
	const struct matcha_session_layout *sl = matcha_layout_session(c->dev, t);
	fprintf(c->out, "%u %s: %s, %u %s, %u-bit key, %u-bit action data%s%s\n", t,
		tl ? tl->name : sl ? sl->name : "(no layout)", kind_name(in.kind), in.size,
		in.kind == MATCHA_KIND_LPM ? "prefixes" : "entries", in.key_bits, in.data_bits,
		in.counters ? ", counters" : "", in.default_action ? ", default action" : "");
	if (sl)
		fprintf(c->out, "  %u ways, the stage after %s\n", in.ways, sl->after);
	if (!tl)
		return;
	fprintf(c->out, "  key:");
	for (unsigned f = 0; f < tl->nfields; f++)
		fprintf(c->out, " %s[%u]", tl->fields[f].name, tl->fields[f].width);
	fprintf(c->out, "\n");
	for (unsigned i = 0; i < tl->nactions; i++) {
		const struct matcha_action_info *ac = &tl->actions[i];
		fprintf(c->out, "  action %s(", ac->name);
		for (unsigned p = 0; p < ac->nparams; p++)
			fprintf(c->out, "%s%s[%u]", p ? ", " : "", ac->params[p].name,
				ac->params[p].width);
		fprintf(c->out, ")%s\n", tl->default_action == ac ? " (initial default)" : "");
	}
}

static int cmd_table_info(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	if (a->n > 2)
		return usage(c, command);
	if (a->n == 2) {
		const struct matcha_table_layout *tl;
		int rc = need_table(c, cmd, a->w[1], &tl);
		if (rc)
			return rc;
		info_table(c, tl->table);
		return 0;
	}
	const char *program = matcha_layout_program(c->dev);
	unsigned n = matcha_table_count(c->dev);
	fprintf(c->out, "build id 0x%08x, %u table%s%s%s\n", (unsigned)matcha_build_id(c->dev), n,
		n == 1 ? "" : "s", program ? ", program " : " (no layout)", program ? program : "");
	for (unsigned t = 0; t < matcha_table_count(c->dev); t++)
		info_table(c, t);
	return 0;
}

static int cmd_meter_set_rates(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_meter_config cfg = { 0 };
	unsigned table;
	uint32_t index;
	int rc, model = 0; /* 1 srtcm, 2 trtcm, 0 by the number of pairs */
	if (a->n < 4)
		return usage(c, command);
	if ((rc = meter_args(c, cmd, a, true, &table, &index)) ||
	    (rc = parse_rate_pair(c, cmd, "committed", a->w[3], &cfg.cir, &cfg.cburst)))
		return rc;
	int next = 4;
	bool second = next < a->n && strchr(a->w[next], ':');
	if (second && (rc = parse_rate_pair(c, cmd, "peak", a->w[next++], &cfg.pir,
					    &cfg.pburst)))
		return rc;
	for (; next < a->n; next++) {
		const char *o = a->w[next];
		unsigned flag = 0;
		if (!strcmp(o, "srtcm") || !strcmp(o, "trtcm")) {
			int m = !strcmp(o, "trtcm") ? 2 : 1;
			if (model)
				return fail(c, MATCHA_EINVAL, "%s: srtcm and trtcm: a meter is one or "
					    "the other (given: %s, then %s)", cmd,
					    model == 2 ? "trtcm" : "srtcm", o);
			model = m;
			continue;
		}
		if (!strcmp(o, "color-aware"))
			flag = MATCHA_METER_COLOR_AWARE;
		else if (!strcmp(o, "packets"))
			flag = MATCHA_METER_PACKETS;
		else
			return fail(c, MATCHA_EINVAL, "%s: unknown option \"%s\" (srtcm, trtcm, "
				    "color-aware, packets)", cmd, o);
		if (cfg.flags & flag)
			return fail(c, MATCHA_EINVAL, "%s: option %s given twice", cmd, o);
		cfg.flags |= flag;
	}
	if (model == 2 || (model == 0 && second))
		cfg.flags |= MATCHA_METER_TWO_RATE;
	/* The RFCs' rules and the hardware's ranges are the library's to check. */
	if ((rc = matcha_meter_set(c->dev, table, index, &cfg)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Meter %s[%u] set\n", a->w[1], (unsigned)index);
	return 0;
}

static int cmd_meter_get_rates(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_meter_config cfg;
	uint64_t committed, peak;
	unsigned table;
	uint32_t index;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = meter_args(c, cmd, a, true, &table, &index)))
		return rc;
	rc = matcha_meter_get(c->dev, table, index, &cfg, &committed, &peak);
	if (rc == MATCHA_ENOENT) {
		fprintf(c->out, "%s[%u]: not configured (marks every packet green)\n", a->w[1],
			(unsigned)index);
		return 0;
	}
	if (rc)
		return lib_fail(c, cmd, rc);
	bool two = cfg.flags & MATCHA_METER_TWO_RATE;
	const char *unit = cfg.flags & MATCHA_METER_PACKETS ? "packets" : "bytes";
	fprintf(c->out, "%s[%u]: %s, %s, %s\n", a->w[1], (unsigned)index,
		two ? "trtcm (RFC 2698)" : "srtcm (RFC 2697)",
		cfg.flags & MATCHA_METER_COLOR_AWARE ? "color-aware" : "color-blind", unit);
	fprintf(c->out, "  committed: rate %llu %s/s, burst %llu %s, %llu tokens\n",
		(unsigned long long)cfg.cir, unit, (unsigned long long)cfg.cburst, unit,
		(unsigned long long)committed);
	if (two)
		fprintf(c->out, "  peak:      rate %llu %s/s, burst %llu %s, %llu tokens\n",
			(unsigned long long)cfg.pir, unit, (unsigned long long)cfg.pburst, unit,
			(unsigned long long)peak);
	else
		fprintf(c->out, "  excess:    burst %llu %s (fills at the committed rate), %llu "
			"tokens\n", (unsigned long long)cfg.pburst, unit, (unsigned long long)peak);
	return 0;
}

static int cmd_meter_reset(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	unsigned table;
	uint32_t index;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = meter_args(c, cmd, a, false, &table, &index)))
		return rc;
	if ((rc = matcha_meter_set(c->dev, table, index, NULL)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Meter %s[%u] reset\n", a->w[1], (unsigned)index);
	return 0;
}

int ctl_set_clock_hz(struct ctl *c, const char *hz)
{
	const char *cmd = "set_clock_hz";
	uint64_t x;
	int rc;
	if ((rc = parse_u64(c, cmd, "clock frequency", hz, &x)))
		return rc;
	/* The library's message names set_clock_hz already. */
	if ((rc = matcha_set_clock_hz(c->dev, x)))
		return fail(c, rc, "%s", matcha_last_error(c->dev));
	c->clock_hz = x;
	return 0;
}

static int cmd_set_clock_hz(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = ctl_set_clock_hz(c, a->w[1])))
		return rc;
	fprintf(c->out, "Clock set to %llu Hz\n", (unsigned long long)c->clock_hz);
	return 0;
}

/* ------------------------------------------------------------------ session tables */

/* docs/sessions.md's names of the state codes; 0 is no session. */
static const char *const session_states[MATCHA_SESSION_STATES] = {
	[MATCHA_SESSION_SYN_SENT] = "SYN_SENT",	      [MATCHA_SESSION_SYN_ACK] = "SYN_ACK",
	[MATCHA_SESSION_ESTABLISHED] = "ESTABLISHED", [MATCHA_SESSION_CLOSING] = "CLOSING",
	[MATCHA_SESSION_RESET] = "RESET",	      [MATCHA_SESSION_UDP] = "UDP",
};

#define SESSION_ZONE_MAX 0xFFFFFFu
#define PROTO_TCP 6
#define PROTO_UDP 17

/* Whether the layout has a table (not a meter array or session table) called `name`. */
static bool layout_table_named(const matcha_dev *dev, const char *name, unsigned *table)
{
	for (unsigned t = 0; t < matcha_table_count(dev); t++) {
		const struct matcha_table_layout *tl = matcha_layout_table(dev, t);
		if (tl && !strcmp(tl->name, name)) {
			*table = t;
			return true;
		}
	}
	return false;
}

/* The session table a command names: an index, or a name the layout gives it. */
static bool is_session_kind(unsigned kind)
{
	return kind == MATCHA_KIND_SESSION || kind == MATCHA_KIND_MEM_SESSION;
}

static int need_session(struct ctl *c, const char *cmd, const char *text, unsigned *table,
			struct matcha_table_info *in)
{
	unsigned n = matcha_table_count(c->dev);
	unsigned long x;
	int rc;
	if (small_decimal(text, UINT32_MAX, &x)) {
		if (x >= n)
			return fail(c, MATCHA_ENOTABLE, "%s: table %lu does not exist (%u tables)", cmd,
				    x, n);
		*table = (unsigned)x;
	} else if ((rc = matcha_session_by_name(c->dev, text, table)) == MATCHA_ELAYOUT)
		return fail(c, rc, "%s: table \"%s\" is not an index 0..%u, and tables have names "
			    "only with a layout (--layout FILE)", cmd, text, n ? n - 1 : 0);
	else if (rc == MATCHA_ENOTABLE && layout_table_named(c->dev, text, table))
		; /* a table of another kind: refused below, with the session tables listed */
	else if (rc)
		return lib_fail(c, cmd, rc);
	if ((rc = matcha_table_info(c->dev, *table, in)))
		return lib_fail(c, cmd, rc);
	if (is_session_kind(in->kind))
		return 0;
	char list[200] = "";
	for (unsigned t = 0; t < n; t++) {
		struct matcha_table_info other;
		size_t at = strlen(list);
		if (!matcha_table_info(c->dev, t, &other) && is_session_kind(other.kind))
			snprintf(list + at, sizeof list - at, "%s%u", at ? ", " : "", t);
	}
	return fail(c, MATCHA_EKIND, "%s: table %s (%s) is not a session table (session tables: "
		    "%s)", cmd, text, kind_name(in->kind), list[0] ? list : "none");
}

/* The commands that read or write addresses know IPv4 sessions (128-bit keys) only. */
static int need_ipv4_keys(struct ctl *c, const char *cmd, unsigned table,
			  const struct matcha_table_info *in)
{
	if (in->key_bits == MATCHA_SESSION_IPV4_KEY_BITS)
		return 0;
	return fail(c, MATCHA_ENOTSUP, "%s: session table %u has %u-bit keys; matcha-ctl reads "
		    "and writes IPv4 sessions (%u-bit keys) only", cmd, table, in->key_bits,
		    MATCHA_SESSION_IPV4_KEY_BITS);
}

/* A state by its name (any case). */
static int parse_state(struct ctl *c, const char *cmd, const char *text, unsigned *state)
{
	for (unsigned s = MATCHA_SESSION_SYN_SENT; s < MATCHA_SESSION_STATES; s++)
		if (!strcasecmp(text, session_states[s])) {
			*state = s;
			return 0;
		}
	return fail(c, MATCHA_EINVAL, "%s: \"%s\" is not a session state (SYN_SENT, SYN_ACK, "
		    "ESTABLISHED, CLOSING, RESET, UDP)", cmd, text);
}

static const char *protocol_name(unsigned protocol, char *buf, size_t len)
{
	if (protocol == PROTO_TCP)
		return "tcp";
	if (protocol == PROTO_UDP)
		return "udp";
	snprintf(buf, len, "%u", protocol);
	return buf;
}

static int parse_protocol(struct ctl *c, const char *cmd, const char *text, uint8_t *protocol)
{
	unsigned long x;
	if (!strcasecmp(text, "tcp"))
		x = PROTO_TCP;
	else if (!strcasecmp(text, "udp"))
		x = PROTO_UDP;
	else if (!small_decimal(text, 255, &x))
		return fail(c, MATCHA_EINVAL, "%s: protocol \"%s\" is not tcp, udp or a number "
			    "0..255", cmd, text);
	*protocol = (uint8_t)x;
	return 0;
}

/* a.b.c.d, as a host-order number. */
static int parse_ipv4(struct ctl *c, const char *cmd, const char *what, const char *text,
		      uint32_t *addr)
{
	struct in_addr a;
	if (inet_pton(AF_INET, text, &a) != 1)
		return fail(c, MATCHA_EINVAL, "%s: %s \"%s\" is not an IPv4 address (a.b.c.d)", cmd,
			    what, text);
	*addr = ntohl(a.s_addr);
	return 0;
}

static int parse_port(struct ctl *c, const char *cmd, const char *what, const char *text,
		      uint16_t *port)
{
	unsigned long x;
	if (!small_decimal(text, 65535, &x))
		return fail(c, MATCHA_EINVAL, "%s: %s \"%s\" is not a number 0..65535", cmd, what,
			    text);
	*port = (uint16_t)x;
	return 0;
}

/* Bytes 0..5 of `p`, an address and a port, as a.b.c.d:port. */
static void format_endpoint(const uint8_t *p, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u.%u:%u", p[0], p[1], p[2], p[3], (unsigned)p[4] << 8 | p[5]);
}

static int cmd_session_dump(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table, count = 0;
	uint32_t now;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)) ||
	    (rc = need_ipv4_keys(c, cmd, table, &in)))
		return rc;
	if ((rc = matcha_session_now(c->dev, table, &now)))
		return lib_fail(c, cmd, rc);
	/* In memory, entry n is slot n % bucket_entries of bucket n / bucket_entries. */
	bool mem = in.kind == MATCHA_KIND_MEM_SESSION;
	fprintf(c->out, "session table %u (%u entries, %u %s), tick now %u\n"
		"  index zone protocol initiator -> responder state age(ticks) packets bytes\n",
		table, in.size, mem ? in.bucket_entries : in.ways,
		mem ? "a bucket" : "ways", (unsigned)now);
	for (uint32_t n = 0; n < in.size; n++) {
		uint32_t i = mem ? (n / in.bucket_entries) << MATCHA_HW_MEMX_INDEX_SLOT_BITS |
					   n % in.bucket_entries
				 : n;
		struct matcha_session s;
		char zone_proto[40], proto[8], low[32], high[32];
		if ((rc = matcha_session_read(c->dev, table, i, &s)))
			return lib_fail(c, cmd, rc);
		if (!s.valid)
			continue;
		/* key: zone (3 bytes), protocol, the lower (address, port), the higher one */
		snprintf(zone_proto, sizeof zone_proto, "zone %u %s",
			 (unsigned)s.key[0] << 16 | (unsigned)s.key[1] << 8 | s.key[2],
			 protocol_name(s.key[3], proto, sizeof proto));
		format_endpoint(s.key + 4, low, sizeof low);
		format_endpoint(s.key + 10, high, sizeof high);
		fprintf(c->out, "  %-5u %s %s -> %s %s age %u packets %llu bytes %llu\n",
			(unsigned)i, zone_proto, s.initiator_high ? high : low,
			s.initiator_high ? low : high,
			s.state < MATCHA_SESSION_STATES && session_states[s.state] ?
				session_states[s.state] : "(unknown state)",
			(unsigned)s.age, (unsigned long long)s.packets,
			(unsigned long long)s.bytes);
		count++;
	}
	fprintf(c->out, "%u session%s\n", count, count == 1 ? "" : "s");
	return 0;
}

static int cmd_session_delete(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table;
	uint64_t zone = 0;
	uint8_t protocol = 0, key[16];
	uint32_t src = 0, dst = 0;
	uint16_t sport = 0, dport = 0;
	int rc;
	if (a->n != 8)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)) ||
	    (rc = need_ipv4_keys(c, cmd, table, &in)) ||
	    (rc = parse_u64(c, cmd, "zone", a->w[2], &zone)))
		return rc;
	if (zone > SESSION_ZONE_MAX)
		return fail(c, MATCHA_EINVAL, "%s: zone %s is wider than 24 bits (0..%u)", cmd,
			    a->w[2], SESSION_ZONE_MAX);
	if ((rc = parse_protocol(c, cmd, a->w[3], &protocol)) ||
	    (rc = parse_ipv4(c, cmd, "source address", a->w[4], &src)) ||
	    (rc = parse_port(c, cmd, "source port", a->w[5], &sport)) ||
	    (rc = parse_ipv4(c, cmd, "destination address", a->w[6], &dst)) ||
	    (rc = parse_port(c, cmd, "destination port", a->w[7], &dport)))
		return rc;
	matcha_session_key_ipv4((uint32_t)zone, protocol, src, sport, dst, dport, key, NULL);
	char proto[8], from[32], to[32], flow[120];
	format_endpoint(key + 4, from, sizeof from);
	format_endpoint(key + 10, to, sizeof to);
	snprintf(flow, sizeof flow, "zone %u %s %s <-> %s", (unsigned)zone,
		 protocol_name(protocol, proto, sizeof proto), from, to);
	rc = matcha_session_delete(c->dev, table, key, MATCHA_SESSION_IPV4_KEY_BITS);
	if (rc == MATCHA_ENOENT)
		return fail(c, rc, "%s: table %u has no session %s (in either direction)", cmd,
			    table, flow);
	if (rc)
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Session %s deleted from table %u\n", flow, table);
	return 0;
}

static int cmd_session_flush(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)))
		return rc;
	if ((rc = matcha_session_flush(c->dev, table)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Session table %u flushed\n", table);
	return 0;
}

static int cmd_session_stats(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	struct matcha_session_stats st;
	unsigned table;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)))
		return rc;
	if ((rc = matcha_session_stats(c->dev, table, &st)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "session table %u\n"
		"  occupancy %u of %u entries\n"
		"  learned   %llu\n"
		"  aged      %llu\n"
		"  refused   %llu (could learn, found no free way)\n"
		"  hits      %llu\n"
		"  misses    %llu\n",
		table, (unsigned)st.occupancy, in.size, (unsigned long long)st.learned,
		(unsigned long long)st.aged, (unsigned long long)st.insert_failed,
		(unsigned long long)st.hits, (unsigned long long)st.misses);
	if (in.kind == MATCHA_KIND_MEM_SESSION)
		fprintf(c->out, "  late      %llu (bucket not back from memory in time)\n"
			"  busy      %llu (change found no room to be written)\n",
			(unsigned long long)st.late, (unsigned long long)st.busy);
	return 0;
}

static int cmd_session_set_timeout(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table, state = 0;
	uint32_t ticks = 0;
	int rc;
	if (a->n != 4)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)) ||
	    (rc = parse_state(c, cmd, a->w[2], &state)) ||
	    (rc = parse_u32(c, cmd, "timeout", a->w[3], &ticks)))
		return rc;
	if ((rc = matcha_session_set_timeout(c->dev, table, state, ticks)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Timeout of %s in table %u set to %u ticks\n", session_states[state],
		table, (unsigned)ticks);
	return 0;
}

static int cmd_session_get_timeout(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table, state = 0;
	int rc;
	if (a->n != 2 && a->n != 3)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)) ||
	    (a->n == 3 && (rc = parse_state(c, cmd, a->w[2], &state))))
		return rc;
	for (unsigned s = MATCHA_SESSION_SYN_SENT; s < MATCHA_SESSION_STATES; s++) {
		uint32_t ticks;
		if (state && s != state)
			continue;
		if ((rc = matcha_session_get_timeout(c->dev, table, s, &ticks)))
			return lib_fail(c, cmd, rc);
		/* An age never exceeds AGE_MAX ticks, so that timeout never expires. */
		if (ticks >= MATCHA_HW_SESSION_AGE_MAX)
			fprintf(c->out, "%-12s never\n", session_states[s]);
		else
			fprintf(c->out, "%-12s %u ticks\n", session_states[s], (unsigned)ticks);
	}
	return 0;
}

/* `<command> <table> <clocks>`: sets a session table's `what` (a length in clocks) with
 * `set`, then says so, `what` capitalised. */
static int session_set_clocks(struct ctl *c, const struct ctl_command *command,
			      const struct words *a, const char *what,
			      int (*set)(matcha_dev *, unsigned, uint32_t))
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	unsigned table;
	uint32_t clocks = 0;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)) ||
	    (rc = parse_u32(c, cmd, what, a->w[2], &clocks)))
		return rc;
	if ((rc = set(c->dev, table, clocks)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "%c%s of table %u set to %u clocks\n", toupper((unsigned char)what[0]), what + 1,
		table, (unsigned)clocks);
	return 0;
}

static int cmd_session_set_tick(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	return session_set_clocks(c, command, a, "tick", matcha_session_set_tick);
}

static int cmd_session_set_scan_interval(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	return session_set_clocks(c, command, a, "scan interval", matcha_session_set_scan_interval);
}

static int cmd_session_set_policy(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	enum matcha_session_policy p;
	unsigned table;
	int rc;
	if (a->n != 3)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)))
		return rc;
	if (!strcmp(a->w[2], "punt"))
		p = MATCHA_SESSION_PUNT;
	else if (!strcmp(a->w[2], "drop"))
		p = MATCHA_SESSION_DROP;
	else
		return fail(c, MATCHA_EINVAL, "%s: policy \"%s\" is neither punt nor drop", cmd,
			    a->w[2]);
	if ((rc = matcha_session_set_policy(c->dev, table, p)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "Full policy of table %u set to %s\n", table, a->w[2]);
	return 0;
}

static int cmd_session_get_policy(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	struct matcha_table_info in;
	enum matcha_session_policy p;
	unsigned table;
	int rc;
	if (a->n != 2)
		return usage(c, command);
	if ((rc = need_session(c, cmd, a->w[1], &table, &in)))
		return rc;
	if ((rc = matcha_session_get_policy(c->dev, table, &p)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "table %u: %s (a packet that may learn but finds no free way %s)\n",
		table, p == MATCHA_SESSION_DROP ? "drop" : "punt",
		p == MATCHA_SESSION_DROP ? "is dropped" : "goes to the host");
	return 0;
}

/* ------------------------------------------------------------ the Corundum app block */

/* The CONTROL bits by the names app_control takes. */
static const struct {
	const char *name;
	uint32_t bit;
	const char *meaning;
} control_bits[] = {
	{ "tx_pipeline", MATCHA_HW_APP_CONTROL_TX_PIPELINE, "host frames through the pipeline" },
	{ "cpu_port", MATCHA_HW_APP_CONTROL_CPU_PORT,
	  "punted frames to the host and packet-outs from it behind the CPU header" },
};
#define NCONTROL_BITS (sizeof control_bits / sizeof control_bits[0])

static int cmd_app_control(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	const char *cmd = command->name;
	uint32_t set = 0, clear = 0, now;
	int rc;
	if (a->n != 1 && a->n != 3)
		return usage(c, command);
	if (a->n == 3) {
		size_t i = 0;
		while (i < NCONTROL_BITS && strcmp(a->w[1], control_bits[i].name))
			i++;
		if (i == NCONTROL_BITS)
			return fail(c, MATCHA_EINVAL, "%s: \"%s\" is no CONTROL bit (tx_pipeline, "
				    "cpu_port)", cmd, a->w[1]);
		if (!strcmp(a->w[2], "on"))
			set = control_bits[i].bit;
		else if (!strcmp(a->w[2], "off"))
			clear = control_bits[i].bit;
		else
			return fail(c, MATCHA_EINVAL, "%s: \"%s\" is neither on nor off", cmd,
				    a->w[2]);
	}
	if ((rc = matcha_app_control(c->dev, set, clear, &now)))
		return lib_fail(c, cmd, rc);
	fprintf(c->out, "CONTROL 0x%08x\n", (unsigned)now);
	for (size_t i = 0; i < NCONTROL_BITS; i++)
		fprintf(c->out, "  %-12s %-3s %s\n", control_bits[i].name,
			now & control_bits[i].bit ? "on" : "off", control_bits[i].meaning);
	return 0;
}

static int cmd_help(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	if (a->n > 2)
		return usage(c, command);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (a->n == 2 && strcmp(a->w[1], commands[i].name))
			continue;
		fprintf(c->out, "%-18s %s\n%-18s   %s\n", commands[i].name, commands[i].args, "",
			commands[i].help);
		if (a->n == 2) {
			if (!strcmp(commands[i].name, "table_add"))
				fputs(match_help, c->out);
			if (!strcmp(commands[i].name, "meter_set_rates"))
				fputs(meter_help, c->out);
			if (!strncmp(commands[i].name, "session_", 8))
				fputs(session_help, c->out);
			return 0;
		}
	}
	if (a->n == 2)
		return fail(c, MATCHA_EINVAL, "help: no command \"%s\"", a->w[1]);
	fputs(match_help, c->out);
	fputs(meter_help, c->out);
	fputs(session_help, c->out);
	return 0;
}

static int cmd_quit(struct ctl *c, const struct ctl_command *command,
			 const struct words *a)
{
	if (a->n != 1)
		return usage(c, command);
	c->quit = true;
	return 0;
}

/* ------------------------------------------------------------------- lines, batches */

/* Splits a line into words at white space; "=>" is a word of its own even when glued. */
static int split_words(struct ctl *c, char *buf, struct words *a)
{
	a->n = 0;
	for (char *p = buf;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			return 0;
		if (a->n == CTL_MAX_WORDS)
			return fail(c, MATCHA_EINVAL, "more than %d words on one line", CTL_MAX_WORDS);
		a->w[a->n++] = p;
		char *arrow_at = strstr(p, "=>");
		char *end = p;
		while (*end && !isspace((unsigned char)*end))
			end++;
		if (arrow_at && arrow_at < end) {
			if (arrow_at == p)
				end = p + 2; /* "=>" itself */
			else
				end = arrow_at; /* a word glued to the arrow ends there */
		}
		if (!*end)
			return 0;
		if (isspace((unsigned char)*end)) {
			*end = '\0';
			p = end + 1;
		} else {
			/* Glued: make room for the terminator by moving the rest right by one. */
			memmove(end + 1, end, strlen(end) + 1);
			*end = '\0';
			p = end + 1;
		}
	}
}

/* Ends the batch's load of an LPM table, if one runs: the table takes its entries (or,
 * failing, none of them: `loaded` goes back to before the load). */
static int end_load(struct ctl *c)
{
	const struct matcha_table_layout *tl = c->loading;
	c->loading = NULL;
	int rc = tl ? matcha_lpm_load_end(c->dev, tl->table) : 0;
	if (!rc)
		return 0;
	fail(c, rc, "loading table %s: %s", tl->name, matcha_last_error(c->dev));
	c->loaded = c->load_base;
	/* The table was empty when the load began: a clear ends the load whatever it wrote
	 * (a load that wrote nothing is still under way, one that stopped half written is
	 * refused). */
	matcha_table_clear(c->dev, tl->table);
	return rc;
}

int ctl_execute(struct ctl *c, const char *line)
{
	char buf[2 * CTL_MAX_LINE + 2];
	struct words a;
	size_t len = strlen(line);
	c->error[0] = '\0';
	if (len > CTL_MAX_LINE)
		return fail(c, MATCHA_EINVAL, "line longer than %d characters", CTL_MAX_LINE);
	for (size_t i = 0; i < len; i++)
		if (line[i] != '\t' && line[i] != '\r' && line[i] != '\n' &&
		    (unsigned char)line[i] < 0x20)
			return fail(c, MATCHA_EINVAL, "control character 0x%02x in the line",
				    (unsigned char)line[i]);
	/* Each glued "=>" can add one byte: buf has room for all of them. */
	memcpy(buf, line, len + 1);
	int rc = split_words(c, buf, &a);
	if (rc)
		return rc;
	if (a.n == 0 || a.w[0][0] == '#')
		return 0;
	/* A load ends before any line but the next table_add into its table. */
	if (c->loading && (strcmp(a.w[0], "table_add") || a.n < 2 || strcmp(a.w[1], c->loading->name)) &&
	    (rc = end_load(c)))
		return rc;
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, a.w[0]))
			return commands[i].run(c, &commands[i], &a);
	return fail(c, MATCHA_EINVAL, "unknown command \"%s\" (help lists the commands)", a.w[0]);
}

int ctl_batch(struct ctl *c, FILE *in, const char *name)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	int rc = 0;
	c->loaded = 0;
	c->batch = true;
	while (!c->quit && (len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		if ((size_t)len != strlen(line))
			rc = fail(c, MATCHA_EINVAL, "NUL byte in the line");
		else
			rc = ctl_execute(c, line);
		if (rc)
			break;
	}
	if (rc) {
		char msg[sizeof c->error], load_msg[sizeof c->error] = "";
		memcpy(msg, c->error, sizeof msg);
		/* What a load took before the failing line goes in now. */
		if (end_load(c))
			memcpy(load_msg, c->error, sizeof load_msg);
		fail(c, rc, "%s:%lu: %s%s%s (%lu entr%s loaded before it)", name, lineno, msg,
		     *load_msg ? "; " : "", load_msg, c->loaded, c->loaded == 1 ? "y" : "ies");
	} else if ((rc = end_load(c))) {
		char msg[sizeof c->error];
		memcpy(msg, c->error, sizeof msg);
		fail(c, rc, "%s: %s (%lu entr%s loaded before it)", name, msg, c->loaded,
		     c->loaded == 1 ? "y" : "ies");
	}
	c->batch = false;
	free(line);
	if (!rc)
		fprintf(c->out, "%s: %lu entr%s loaded\n", name, c->loaded,
			c->loaded == 1 ? "y" : "ies");
	return rc;
}

/* ----------------------------------------------------------------------- completion */

/* Whether `name` starts with `prefix` and is the candidate asked for: *n counts down the
 * candidates before it. */
static bool nth_match(const char *name, const char *prefix, unsigned *n)
{
	return name && !strncmp(name, prefix, strlen(prefix)) && (*n)-- == 0;
}

/* Word `k` of a command's synopsis without the brackets of an optional one ("[<table>]" is
 * "<table>"); empty past the end. */
static void synopsis_word(const char *args, int k, char *out, size_t len)
{
	out[0] = '\0';
	for (int i = 0; *args; i++) {
		size_t n = strcspn(args, " ");
		if (i == k) {
			size_t skip = args[0] == '[', drop = n > skip && args[n - 1] == ']';
			snprintf(out, len, "%.*s", (int)(n - skip - drop), args + skip);
			return;
		}
		args += n + strspn(args + n, " ");
	}
}

/* The layout's name of descriptor t among those `arg` of command `cmd` takes: meter arrays
 * for <meter>, session tables for a session command's <table>, tables otherwise. */
static const char *name_for(const struct ctl *c, const char *cmd, const char *arg, unsigned t)
{
	if (!strcmp(arg, "<meter>")) {
		const struct matcha_meter_layout *m = matcha_layout_meter(c->dev, t);
		return m ? m->name : NULL;
	}
	if (!strncmp(cmd, "session_", 8)) {
		const struct matcha_session_layout *s = matcha_layout_session(c->dev, t);
		return s ? s->name : NULL;
	}
	const struct matcha_table_layout *tl = matcha_layout_table(c->dev, t);
	return tl ? tl->name : NULL;
}

const char *ctl_complete(const struct ctl *c, const char *line, size_t start,
			 const char *prefix, unsigned n)
{
	/* The words before the one completed: the command and, for <action>, its table. */
	char buf[CTL_MAX_LINE + 1], *save, *w[2] = { NULL, NULL };
	int nw = 0;
	size_t len = start < CTL_MAX_LINE ? start : CTL_MAX_LINE;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (nw++ < 2)
			w[nw - 1] = t;
	const struct ctl_command *command = NULL;
	for (size_t i = 0; i < NCOMMANDS && nw; i++)
		if (!strcmp(commands[i].name, w[0]))
			command = &commands[i];
	char arg[40];
	if (nw == 0)
		strcpy(arg, "<command>");
	else if (command)
		synopsis_word(command->args, nw - 1, arg, sizeof arg);
	else
		return NULL;
	if (!strcmp(arg, "<command>")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (nth_match(commands[i].name, prefix, &n))
				return commands[i].name;
		return NULL;
	}
	if (!strcmp(arg, "<table>") || !strcmp(arg, "<meter>")) {
		for (unsigned t = 0; t < matcha_table_count(c->dev); t++) {
			const char *name = name_for(c, command->name, arg, t);
			if (nth_match(name, prefix, &n))
				return name;
		}
		return NULL;
	}
	unsigned table;
	const struct matcha_table_layout *tl;
	if (!strcmp(arg, "<action>") && layout_table_named(c->dev, w[1], &table) &&
	    (tl = matcha_layout_table(c->dev, table)))
		for (unsigned a = 0; a < tl->nactions; a++)
			if (nth_match(tl->actions[a].name, prefix, &n))
				return tl->actions[a].name;
	return NULL;
}
