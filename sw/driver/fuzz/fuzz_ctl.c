/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: matcha-ctl's input. An input is a batch file (matcha-ctl -f FILE), run
 * by ctl_batch on a fresh fake device of each program (l2l3, policer, conntrack) with its
 * layout loaded, as matcha-ctl runs it. It fails (aborts) when a line fails without saying
 * which line and why, when an entry the driver reports is not in the hardware as written,
 * when a session table holds a number of sessions other than its occupancy, when a
 * configured meter does not read back, and on anything the sanitizers catch. Tab completion
 * runs on every word of the first line.
 */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every candidate completion of every word of the input's first line. */
static void complete_first_line(const struct ctl *c, const uint8_t *data, size_t size)
{
	char line[CTL_MAX_LINE];
	size_t len = 0;
	while (len < size && len + 1 < sizeof line && data[len] != '\n' && data[len] != '\0') {
		line[len] = (char)data[len];
		len++;
	}
	line[len] = '\0';
	for (size_t start = 0; start <= len; start++) {
		if (start && line[start - 1] != ' ')
			continue;
		char prefix[CTL_MAX_LINE];
		size_t n = strcspn(line + start, " ");
		memcpy(prefix, line + start, n);
		prefix[n] = '\0';
		for (unsigned k = 0; ctl_complete(c, line, start, prefix, k); k++)
			if (k > 10000)
				fuzz_fail("completion of \"%s\" at %zu never ends", prefix, start);
	}
}

/* What the batch left is what the driver says it is. */
static void check_device(struct ctl *c, const char *program)
{
	matcha_dev *dev = c->dev;
	for (unsigned t = 0; t < matcha_table_count(dev); t++) {
		struct matcha_table_info in;
		if (matcha_table_info(dev, t, &in))
			fuzz_fail("%s: table_info %u: %s", program, t, matcha_last_error(dev));
		const struct matcha_table_layout *tl = matcha_layout_table(dev, t);
		if (tl) {
			/* Every handle reads back valid, with its key and an action the layout names. */
			uint32_t h = 0;
			for (; matcha_entry_next(dev, tl->name, h, &h) == 0; h++) {
				struct matcha_entry_view v;
				if (matcha_entry_read(dev, tl->name, h, &v))
					fuzz_fail("%s: entry %u of %s: %s", program, (unsigned)h, tl->name,
						  matcha_last_error(dev));
			}
		}
		if (in.kind == MATCHA_KIND_METER && c->clock_hz)
			for (uint32_t i = 0; i < in.size; i++) {
				int rc = matcha_meter_get(dev, t, i, NULL, NULL, NULL);
				if (rc && rc != MATCHA_ENOENT)
					fuzz_fail("%s: meter %u of %u: %s", program, (unsigned)i, t,
						  matcha_last_error(dev));
			}
		if (in.kind == MATCHA_KIND_SESSION) {
			unsigned valid = 0;
			for (uint32_t i = 0; i < in.size; i++) {
				struct matcha_session one;
				if (matcha_session_read(dev, t, i, &one))
					fuzz_fail("%s: session %u of %u: %s", program, (unsigned)i, t,
						  matcha_last_error(dev));
				valid += one.valid;
			}
			struct matcha_session_stats st;
			if (matcha_session_stats(dev, t, &st) || st.occupancy != valid)
				fuzz_fail("%s: session table %u: occupancy %u, %u sessions", program, t,
					  (unsigned)st.occupancy, valid);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (unsigned i = 0; i < FUZZ_PROGRAMS; i++) {
		const struct fuzz_program *p = &fuzz_programs[i];
		struct fake_dev *fd;
		matcha_dev *dev = fuzz_device_open(p, &fd);
		if (matcha_layout_load_text(dev, p->layout, p->layout_len, p->layout_path))
			fuzz_fail("%s: %s", p->name, matcha_last_error(dev));
		struct ctl c;
		ctl_init(&c, dev, fuzz_null_out);
		/* fmemopen refuses an empty buffer: an empty batch is one empty line. */
		FILE *in = fmemopen((void *)(size ? data : (const uint8_t *)"\n"), size ? size : 1, "r");
		if (!in)
			fuzz_fail("fmemopen failed");
		int rc = ctl_batch(&c, in, "batch");
		fclose(in);
		if (rc > 0 || (rc && strncmp(c.error, "batch:", 6)))
			fuzz_fail("%s: the batch returned %d with \"%s\", not \"batch:LINE: ...\"",
				  p->name, rc, c.error);
		check_device(&c, p->name);
		complete_first_line(&c, data, size);
		fuzz_device_close(dev, fd);
	}
	return 0;
}
