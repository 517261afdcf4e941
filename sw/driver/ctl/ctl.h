/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha-ctl's command interpreter: simple_switch_CLI-style commands on a matcha_dev with
 * a layout, one line at a time, interactively or as a batch. main.c is only the program
 * around it; the tests drive these functions directly.
 */
#ifndef MATCHA_CTL_H
#define MATCHA_CTL_H

#include <stdio.h>

#include "matcha.h"

/* The longest command line, and the most words in one. */
#define CTL_MAX_LINE 4096
#define CTL_MAX_WORDS 160

struct ctl {
	matcha_dev *dev;
	FILE *out;            /* what commands print */
	char error[600];      /* the last failure: "command: what is wrong" */
	unsigned long loaded; /* entries added by table_add since the batch began */
	uint64_t clock_hz;    /* the pipeline's clock for the meter commands; 0 until set */
	bool quit;            /* a quit command was read */
	bool batch;           /* ctl_batch runs: table_add lines may load an LPM table */
	const struct matcha_table_layout *loading; /* the LPM table being loaded, or NULL */
	unsigned long load_base; /* `loaded` when that load began */
};

void ctl_init(struct ctl *c, matcha_dev *dev, FILE *out);

/*
 * Runs one command line (blank lines and lines starting with '#' do nothing). Returns 0,
 * or a negative MATCHA_E* code (MATCHA_EINVAL for a line that does not parse) with the
 * message in c->error.
 */
int ctl_execute(struct ctl *c, const char *line);

/*
 * Runs every line of `in`, stopping at the first error, which c->error reports as
 * "NAME:LINE: message (N entries loaded before it)". On success prints
 * "NAME: N entries loaded" to c->out (N counts table_add). Returns 0 or the error code.
 * A run of table_add lines into an LPM table that is empty when the run starts is loaded
 * at once (matcha_lpm_load_begin/end): each line is checked and answered as it is read,
 * and the table takes them all with the line after the run (or the end, or an error).
 */
int ctl_batch(struct ctl *c, FILE *in, const char *name);

/* Tells the handle the pipeline's clock (decimal or 0x hex Hz), as set_clock_hz does. Returns 0
 * or MATCHA_EINVAL with the message in c->error. */
int ctl_set_clock_hz(struct ctl *c, const char *hz);

/* Value forms: decimal, 0x hex, a.b.c.d (32 bits, inet_pton), aa:bb:cc:dd:ee:ff (48 bits,
 * ether_aton_r), IPv6 text as inet_pton reads it, ::ffff:a.b.c.d included (128 bits). */
int ctl_parse_value(const char *text, struct matcha_value *v, char *err, size_t errlen);
/* Match forms: a value; value/length; value&&&mask; low->high. */
int ctl_parse_match(const char *text, struct matcha_match *m, char *err, size_t errlen);
/* The same for a key field `width` bits wide: on a field of at most 32 bits an IPv4-mapped
 * address (::ffff:10.0.0.1) is its IPv4 address, and its prefix length counts from the
 * IPv4 address (::ffff:10.0.0.0/104 is 10.0.0.0/8). */
int ctl_parse_field_match(const char *text, unsigned width, struct matcha_match *m, char *err,
			  size_t errlen);

/*
 * Candidate `n` (from 0) for completing the word `prefix` that starts at byte `start` of
 * `line`: a command name as the first word; then, by the command's synopsis, a table,
 * meter array or session table name from the layout, an action of the table named before
 * it, or a command name after help. NULL past the last candidate. Names stay valid while
 * the layout is loaded.
 */
const char *ctl_complete(const struct ctl *c, const char *line, size_t start,
			 const char *prefix, unsigned n);

#endif
