/* SPDX-License-Identifier: Apache-2.0 */
/* The loaded layout and the by-name entries (layout.c, entries.c); not installed. */
#ifndef MATCHA_LAYOUT_H
#define MATCHA_LAYOUT_H

#include "kind.h"

struct named_entry {
	unsigned nmatch;
	struct matcha_match *match;
	bool has_priority;
	uint32_t priority;
	unsigned nhw;
	struct matcha_key *hw; /* its hardware entries, each with the entry's priority */
};

struct layout_table {
	struct matcha_table_layout pub;
	struct matcha_field_info *fields;
	struct matcha_action_info *actions;
	struct named_entry **entries; /* by handle; NULL where deleted */
	uint32_t nhandles;            /* handles given out since the last clear */
	uint32_t cap;
};

struct matcha_layout {
	char *program;
	unsigned ntables;
	struct layout_table *tables; /* by descriptor index; name NULL where no table is */
	struct matcha_meter_layout *meters; /* by descriptor index; name NULL where none is */
	struct matcha_session_layout *sessions; /* by descriptor index; name NULL where none is */
};

void matcha_named_entry_free(struct named_entry *e);

#endif
