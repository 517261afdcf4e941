/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the driver's layout.json reader (src/layout.c). An input is a layout
 * file, loaded on a fresh fake device of each program (l2l3, policer, conntrack), whose
 * committed layouts are the seeds. It fails (aborts) when a refusal is not MATCHA_ELAYOUT
 * with a message, when an accepted layout names a table, action, meter or session table
 * that the lookups by name do not find again, and on anything the sanitizers catch. An
 * accepted layout then goes through matcha-ctl's table_info and completion, which print
 * and list its names.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every name of an accepted layout finds what it names. */
static void check_names(matcha_dev *dev, const char *program)
{
	for (unsigned t = 0; t < matcha_table_count(dev); t++) {
		unsigned found;
		const struct matcha_table_layout *tl = matcha_layout_table(dev, t);
		const struct matcha_meter_layout *ml = matcha_layout_meter(dev, t);
		const struct matcha_session_layout *sl = matcha_layout_session(dev, t);
		if (!!tl + !!ml + !!sl != 1)
			fuzz_fail("%s: descriptor %u is described %d times", program, t,
				  !!tl + !!ml + !!sl);
		if (tl) {
			if (matcha_table_by_name(dev, tl->name, &found) || found != t)
				fuzz_fail("%s: table \"%s\" (%u) not found by its name", program,
					  tl->name, t);
			for (unsigned a = 0; a < tl->nactions; a++) {
				const struct matcha_action_info *ac = &tl->actions[a];
				if (matcha_action_by_name(tl, ac->name) != ac)
					fuzz_fail("%s: action \"%s\" of %s not found by its name",
						  program, ac->name, tl->name);
				for (unsigned k = 0; k < ac->nparams; k++)
					if (ac->params[k].offset + ac->params[k].width > tl->data_bits)
						fuzz_fail("%s: parameter %s of %s beyond the %u data bits",
							  program, ac->params[k].name, ac->name,
							  tl->data_bits);
			}
			for (unsigned f = 0; f < tl->nfields; f++)
				if (tl->fields[f].offset + tl->fields[f].width > tl->key_bits)
					fuzz_fail("%s: field %s of %s beyond the %u key bits", program,
						  tl->fields[f].name, tl->name, tl->key_bits);
		}
		if (ml && (matcha_meter_by_name(dev, ml->name, &found) || found != t))
			fuzz_fail("%s: meter array \"%s\" not found by its name", program, ml->name);
		if (sl && (matcha_session_by_name(dev, sl->name, &found) || found != t))
			fuzz_fail("%s: session table \"%s\" not found by its name", program, sl->name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (unsigned i = 0; i < FUZZ_PROGRAMS; i++) {
		const struct fuzz_program *p = &fuzz_programs[i];
		struct fake_dev *fd;
		matcha_dev *dev = fuzz_device_open(p, &fd);
		int rc = matcha_layout_load_text(dev, (const char *)data, size, "fuzz.json");
		if (rc && (rc != MATCHA_ELAYOUT || !matcha_last_error(dev)[0]))
			fuzz_fail("%s: refused with %d and \"%s\"", p->name, rc,
				  matcha_last_error(dev));
		if (rc == 0) {
			check_names(dev, p->name);
			struct ctl c;
			ctl_init(&c, dev, fuzz_null_out);
			if (ctl_execute(&c, "table_info"))
				fuzz_fail("%s: table_info: %s", p->name, c.error);
			static const char *const lines[] = { "table_add ", "meter_get_rates ",
							     "session_dump " };
			for (unsigned l = 0; l < sizeof lines / sizeof lines[0]; l++)
				for (unsigned k = 0; ctl_complete(&c, lines[l], strlen(lines[l]), "", k); k++)
					;
		}
		fuzz_device_close(dev, fd);
	}
	return 0;
}
