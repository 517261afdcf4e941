/* SPDX-License-Identifier: Apache-2.0 */
/* The registry of table kinds (kind.h): the operations of each kind code. */
#include <string.h>

#include "kind.h"

/* The generated names, indexed by kind code: the one spelling the generator, layout.json
 * and the driver share. */
static const char *const names[MATCHA_KIND_CODES] = MATCHA_HW_KIND_NAMES;
#define NKINDS MATCHA_KIND_CODES

/* One line per kind; a code the hardware names but no line has is refused at open. */
static const struct matcha_kind_ops *const kinds[NKINDS] = {
	[MATCHA_HW_KIND_EXACT] = &matcha_exact_ops,
	[MATCHA_HW_KIND_LPM] = &matcha_lpm_ops,
	[MATCHA_HW_KIND_TERNARY] = &matcha_ternary_ops,
	[MATCHA_HW_KIND_METER] = &matcha_meter_ops,
	[MATCHA_HW_KIND_SESSION] = &matcha_session_ops,
	[MATCHA_HW_KIND_DIRECT] = &matcha_direct_ops,
	[MATCHA_HW_KIND_MEM_EXACT] = &matcha_mem_exact_ops,
	[MATCHA_HW_KIND_MEM_SESSION] = &matcha_mem_session_ops,
};

const struct matcha_kind_ops *matcha_kind(unsigned kind)
{
	return kind < NKINDS ? kinds[kind] : NULL;
}

const char *matcha_kind_name(unsigned kind)
{
	return kind < NKINDS && names[kind][0] ? names[kind] : "unknown";
}

unsigned matcha_entry_kind_code(const char *name)
{
	for (unsigned k = 1; k < NKINDS; k++)
		if (kinds[k] && kinds[k]->add && !strcmp(names[k], name))
			return k;
	return 0;
}
