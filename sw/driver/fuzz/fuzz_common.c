/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct fuzz_program fuzz_programs[FUZZ_PROGRAMS] = {
	{ "l2l3", fake_l2l3_cfg, MATCHA_LAYOUT, NULL, 0 },
	{ "policer", fake_policer_cfg, MATCHA_POLICER_LAYOUT, NULL, 0 },
	{ "conntrack", fake_conntrack_cfg, MATCHA_CONNTRACK_LAYOUT, NULL, 0 },
};

FILE *fuzz_null_out;

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* libFuzzer calls it once before the first input: every program's layout read, the sink
 * opened; the process exits if either fails. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (unsigned i = 0; i < FUZZ_PROGRAMS; i++) {
		struct fuzz_program *p = &fuzz_programs[i];
		FILE *f = fopen(p->layout_path, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (p->layout_len = (size_t)ftell(f)) == 0 ||
		    fseek(f, 0, SEEK_SET) || !(p->layout = malloc(p->layout_len)) ||
		    fread(p->layout, 1, p->layout_len, f) != p->layout_len) {
			fprintf(stderr, "fuzz: cannot read %s\n", p->layout_path);
			exit(2);
		}
		fclose(f);
	}
	fuzz_null_out = fopen("/dev/null", "w");
	if (!fuzz_null_out)
		fuzz_fail("cannot open /dev/null");
	return 0;
}

matcha_dev *fuzz_device_open(const struct fuzz_program *p, struct fake_dev **fd)
{
	struct fake_cfg cfg = p->cfg();
	*fd = fake_new(&cfg);
	return fake_open(*fd);
}

void fuzz_device_close(matcha_dev *dev, struct fake_dev *fd)
{
	matcha_close(dev);
	fake_free(fd);
}

/* Prints "fuzz: " `where` and the message, then aborts: libFuzzer keeps the input. */
static __attribute__((noreturn)) void vabort(const char *where, const char *fmt, va_list ap)
{
	fprintf(stderr, "fuzz: %s", where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	abort();
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vabort("", fmt, ap);
}

/* The fake device reports a driver access it does not allow (tests/check.h) as a test
 * failure; here it is a finding. */
void check_fail(const char *file, int line, const char *fmt, ...)
{
	char where[256];
	snprintf(where, sizeof where, "%s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	vabort(where, fmt, ap);
}
