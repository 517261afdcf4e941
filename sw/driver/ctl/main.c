/*
 * matcha-ctl URI [--layout FILE] [--clock-hz HZ] [-f BATCH]: the table loader.
 *
 * With -f (a file, or - for standard input) it runs the batch and exits: 0 if every line
 * ran, 1 at the first error (reported with its line number). Without -f it reads commands
 * from standard input: with a prompt on a terminal, as a batch otherwise.
 */
#define _POSIX_C_SOURCE 200809L /* fileno, getline */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: matcha-ctl URI [--layout FILE] [--clock-hz HZ] [-f BATCH]\n"
		   "  URI     mqnic:/dev/mqnic0, pci:0000:01:00.0, sim:PATH or serial:/dev/ttyUSB1[@BAUD]\n"
		   "  --layout the generator's layout.json (names of tables, meters, actions, "
		   "fields)\n"
		   "  --clock-hz the pipeline's clock in Hz (e.g. 250000000), for the meter "
		   "commands\n"
		   "  -f      run the commands of BATCH (- for standard input) and exit\n"
		   "Without -f, commands come from standard input; 'help' lists them.\n");
}

static int interactive(struct ctl *c)
{
	char *line = NULL;
	size_t cap = 0;
	for (;;) {
		fputs("matcha> ", stdout);
		fflush(stdout);
		if (getline(&line, &cap, stdin) < 0)
			break;
		if (ctl_execute(c, line))
			fprintf(stderr, "error: %s\n", c->error);
		if (c->quit)
			break;
	}
	free(line);
	fputc('\n', stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *uri = NULL, *layout = NULL, *batch = NULL, *clock_hz = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--layout") && i + 1 < argc)
			layout = argv[++i];
		else if (!strcmp(argv[i], "--clock-hz") && i + 1 < argc)
			clock_hz = argv[++i];
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			batch = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' || uri) {
			fprintf(stderr, "matcha-ctl: unexpected argument \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		} else
			uri = argv[i];
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
	/* The tables are the hardware's: continue from what earlier runs left there. */
	int adopted = matcha_tables_adopt(dev);
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
