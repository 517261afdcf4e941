/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha-ctl URI [--layout FILE] [--clock-hz HZ] [--cleared] [-f BATCH]: the table loader.
 *
 * With -f (a file, or - for standard input) it runs the batch and exits: 0 if every line
 * ran, 1 at the first error (reported with its line number). Without -f it reads commands
 * from standard input: with libedit's line editing, history and completion on a terminal,
 * as a batch otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <editline/readline.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

/* Lines kept in the history file. */
#define HISTORY_LINES 1000

static void usage(FILE *f)
{
	fprintf(f, "usage: matcha-ctl URI [--layout FILE] [--clock-hz HZ] [--cleared] [-f BATCH]\n"
		   "  URI     mqnic:/dev/mqnic0, pci:0000:01:00.0, sim:PATH or serial:/dev/ttyUSB1[@BAUD]\n"
		   "  --layout FILE  the generator's layout.json (names of tables, meters, actions, "
		   "fields)\n"
		   "  --clock-hz HZ  the pipeline's clock in Hz (e.g. 250000000), for the meter "
		   "commands\n"
		   "  --cleared      the tables hold nothing (the pipeline clears them after reset):\n"
		   "                 start from empty tables instead of reading every entry back\n"
		   "  -f BATCH       run the commands of BATCH (- for standard input) and exit;\n"
		   "                 table_add lines into an empty LPM table load it at once\n"
		   "  -h, --help     this text\n"
		   "Without -f, commands come from standard input; 'help' lists them. On a terminal\n"
		   "the line can be edited, Tab completes commands, tables and actions, and the\n"
		   "history is kept in $MATCHA_CTL_HISTORY (default ~/.matcha_ctl_history).\n");
}

/* The interpreter whose layout the completion reads (readline's callbacks take no
 * argument). */
static const struct ctl *completing;
/* Where the word being completed starts in rl_line_buffer. */
static size_t completing_start;

static char *next_candidate(const char *text, int state)
{
	static unsigned n;
	if (!state)
		n = 0;
	const char *name = ctl_complete(completing, rl_line_buffer, completing_start, text, n++);
	return name ? strdup(name) : NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	completing_start = (size_t)start;
	/* No file names when nothing matches: every argument is a name, a value or a number. */
	rl_attempted_completion_over = 1;
	return rl_completion_matches(text, next_candidate);
}

/* $MATCHA_CTL_HISTORY, else ~/.matcha_ctl_history; NULL without either (no history kept). */
static const char *history_file(char *buf, size_t len)
{
	const char *path = getenv("MATCHA_CTL_HISTORY"), *home = getenv("HOME");
	if (path && *path)
		return path;
	if (!home || !*home)
		return NULL;
	snprintf(buf, len, "%s/.matcha_ctl_history", home);
	return buf;
}

static int interactive(struct ctl *c)
{
	char buf[4096];
	const char *history = history_file(buf, sizeof buf);
	completing = c;
	rl_readline_name = "matcha-ctl";
	rl_attempted_completion_function = complete;
	using_history();
	stifle_history(HISTORY_LINES);
	/* A missing file is the first session's history. */
	if (history)
		read_history(history);
	char *line;
	while ((line = readline("matcha> "))) {
		if (line[strspn(line, " \t")])
			add_history(line);
		if (ctl_execute(c, line))
			fprintf(stderr, "error: %s\n", c->error);
		free(line);
		if (c->quit)
			break;
	}
	if (!line)
		fputc('\n', stdout);
	if (history && write_history(history))
		fprintf(stderr, "matcha-ctl: warning: cannot save the history in %s: %s\n",
			history, strerror(errno));
	return 0;
}

int main(int argc, char **argv)
{
	const char *uri = NULL, *layout = NULL, *batch = NULL, *clock_hz = NULL;
	bool cleared = false;
	enum { OPT_LAYOUT = 256, OPT_CLOCK_HZ, OPT_CLEARED };
	static const struct option options[] = {
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "clock-hz", required_argument, NULL, OPT_CLOCK_HZ },
		{ "cleared", no_argument, NULL, OPT_CLEARED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "f:h", options, NULL)) != -1) {
		switch (opt) {
		case OPT_LAYOUT: layout = optarg; break;
		case OPT_CLOCK_HZ: clock_hz = optarg; break;
		case OPT_CLEARED: cleared = true; break;
		case 'f': batch = optarg; break;
		case 'h': usage(stdout); return 0;
		default: /* getopt_long said what is wrong */ usage(stderr); return 2;
		}
	}
	if (optind < argc)
		uri = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "matcha-ctl: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!uri) {
		usage(stderr);
		return 2;
	}
	matcha_dev *dev;
	if (matcha_open(uri, &dev)) {
		fprintf(stderr, "matcha-ctl: %s: %s\n", uri, matcha_last_error(dev));
		matcha_close(dev);
		return 1;
	}
	if (layout && matcha_layout_load(dev, layout)) {
		fprintf(stderr, "matcha-ctl: %s\n", matcha_last_error(dev));
		matcha_close(dev);
		return 1;
	}
	/* The tables are the hardware's: continue from what earlier runs left there, unless
	 * the user says there is nothing (reading a memory-backed table of millions of
	 * entries back takes a bus transaction pair per entry). */
	int adopted = cleared ? 0 : matcha_tables_adopt(dev);
	if (adopted == MATCHA_EHW || adopted == MATCHA_ELAYOUT)
		fprintf(stderr, "matcha-ctl: warning: %s; table_clear starts that table over\n",
			matcha_last_error(dev));
	else if (adopted) {
		fprintf(stderr, "matcha-ctl: %s: %s\n", uri, matcha_last_error(dev));
		matcha_close(dev);
		return 1;
	}
	struct ctl c;
	ctl_init(&c, dev, stdout);
	if (clock_hz && ctl_set_clock_hz(&c, clock_hz)) {
		fprintf(stderr, "matcha-ctl: --clock-hz: %s\n", c.error);
		matcha_close(dev);
		return 2;
	}
	int rc = 0;
	if (!batch && isatty(fileno(stdin)))
		rc = interactive(&c);
	else {
		FILE *in = !batch || !strcmp(batch, "-") ? stdin : fopen(batch, "r");
		const char *name = !batch || !strcmp(batch, "-") ? "<stdin>" : batch;
		if (!in) {
			fprintf(stderr, "matcha-ctl: cannot open %s\n", batch);
			rc = 1;
		} else {
			if ((rc = ctl_batch(&c, in, name)))
				fprintf(stderr, "matcha-ctl: %s\n", c.error);
			if (in != stdin)
				fclose(in);
		}
	}
	matcha_close(dev);
	return rc ? 1 : 0;
}
