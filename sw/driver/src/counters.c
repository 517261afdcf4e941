/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-entry counters and the default action (docs/tables.md, "Per-entry counters",
 * "Default action").
 *
 * Counts belong to indexes in hardware. The driver keeps, per index, what the entry there
 * counted at indexes it left (`carried`); an entry's count is that plus its index's own.
 * A move zeroes the destination before the copy (matcha_counter_zero) and, once the old
 * index is invalidated, adds the old index's final count (matcha_counter_carry): READ acts
 * only after every lookup in flight has been counted, so nothing is lost or counted twice.
 * A reset does not ZERO: it sets `carried` to minus the count just read (mod 2^64), so no
 * hit between the read and the reset goes missing.
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

int matcha_counters_init(matcha_dev *dev, struct matcha_table *t)
{
	if (!t->info.counters)
		return 0;
	t->carried = calloc(t->indexes, sizeof *t->carried);
	if (!t->carried)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the counters of table %u "
				   "(%u entries)", t->index, t->indexes);
	return 0;
}

void matcha_counters_reset(struct matcha_table *t)
{
	if (t->carried)
		memset(t->carried, 0, t->indexes * sizeof *t->carried);
}

void matcha_counters_free(struct matcha_table *t)
{
	free(t->carried);
	t->carried = NULL;
}

int matcha_counters_check(matcha_dev *dev, struct matcha_table *t, const char *op)
{
	if (!t->info.counters)
		return matcha_fail(dev, MATCHA_ENOTSUP, "%s: table %u has no per-entry counters",
				   op, t->index);
	return 0;
}

/* READ of counter `index`: both counts as the command latched them, in one snapshot. */
static int fetch(matcha_dev *dev, struct matcha_table *t, uint32_t index,
		 struct matcha_counts *c)
{
	int rc;
	if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, matcha_window_index(t, index))) ||
	    (rc = matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_PACKETS, &c->packets)))
		return rc;
	return matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_BYTES, &c->bytes);
}

int matcha_counter_zero(matcha_dev *dev, struct matcha_table *t, uint32_t index)
{
	if (!t->carried)
		return 0;
	int rc = matcha_window_command(dev, t, MATCHA_HW_CMD_ZERO, matcha_window_index(t, index));
	if (rc)
		return rc;
	t->carried[index] = (struct matcha_counts){ 0, 0 };
	return 0;
}

int matcha_counter_carry(matcha_dev *dev, struct matcha_table *t, uint32_t from, uint32_t to)
{
	struct matcha_counts c;
	if (!t->carried)
		return 0;
	int rc = fetch(dev, t, from, &c);
	if (rc)
		return rc;
	t->carried[to].packets = t->carried[from].packets + c.packets;
	t->carried[to].bytes = t->carried[from].bytes + c.bytes;
	return 0;
}

int matcha_counter_entry(matcha_dev *dev, struct matcha_table *t, uint32_t index,
			 uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_counts c;
	if (flags & ~MATCHA_COUNTERS_RESET)
		return matcha_fail(dev, MATCHA_EINVAL, "counters: unknown flags 0x%x", flags);
	int rc = fetch(dev, t, index, &c);
	if (rc)
		return rc;
	struct matcha_counts *k = &t->carried[index];
	if (packets)
		*packets = k->packets + c.packets;
	if (bytes)
		*bytes = k->bytes + c.bytes;
	if (flags & MATCHA_COUNTERS_RESET)
		*k = (struct matcha_counts){ 0 - c.packets, 0 - c.bytes };
	return 0;
}

/* The table, checked to have counters and an index below its size. */
static int counter_table(matcha_dev *dev, unsigned table, uint32_t index, const char *op,
			 struct matcha_table **t)
{
	int rc;
	if ((rc = matcha_table_for(dev, table, 0, op, t)) ||
	    (rc = matcha_counters_check(dev, *t, op)))
		return rc;
	if (index >= (*t)->indexes)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: index %u is out of range (table %u "
				   "counts %u %s)", op, (unsigned)index, table, (*t)->indexes,
				   (*t)->ops->prefix ? "results" : "entries");
	return 0;
}

int matcha_counters_read(matcha_dev *dev, unsigned table, uint32_t index, uint64_t *packets,
			 uint64_t *bytes)
{
	struct matcha_table *t;
	struct matcha_counts c;
	int rc;
	if ((rc = counter_table(dev, table, index, "counters_read", &t)) ||
	    (rc = fetch(dev, t, index, &c)))
		return rc;
	if (packets)
		*packets = c.packets;
	if (bytes)
		*bytes = c.bytes;
	return 0;
}

int matcha_counters_zero(matcha_dev *dev, unsigned table, uint32_t index)
{
	struct matcha_table *t;
	int rc = counter_table(dev, table, index, "counters_zero", &t);
	return rc ? rc : matcha_counter_zero(dev, t, index);
}

/* ------------------------------------------------------------------ default action */

static int default_table(matcha_dev *dev, unsigned table, const char *op,
			 struct matcha_table **t)
{
	int rc = matcha_table_for(dev, table, 0, op, t);
	if (rc)
		return rc;
	if (!(*t)->info.default_action)
		return matcha_fail(dev, MATCHA_ENOTSUP, "%s: table %u has no default action", op,
				   table);
	return 0;
}

int matcha_table_set_default(matcha_dev *dev, unsigned table, uint8_t action_id,
			     const uint8_t *data, unsigned data_bits)
{
	struct matcha_table *t;
	uint32_t words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;
	if ((rc = default_table(dev, table, "table_set_default", &t)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, words)))
		return rc;
	struct staged_entry e = {
		.flags = MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id),
		.data = t->data_words ? words : NULL,
		.data_words = t->data_words,
	};
	if ((rc = matcha_window_stage(dev, t, &e)))
		return rc;
	return matcha_window_command(dev, t, MATCHA_HW_CMD_DEFAULT, 0);
}

int matcha_table_get_default(matcha_dev *dev, unsigned table, uint8_t *action_id,
			     uint8_t *data, unsigned data_bits)
{
	struct matcha_table *t;
	uint32_t flags, words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;
	if ((rc = default_table(dev, table, "table_get_default", &t)))
		return rc;
	if (data && data_bits < t->info.data_bits)
		return matcha_fail(dev, MATCHA_EINVAL, "table_get_default: a %u-bit buffer for the "
				   "%u-bit action data of table %u", data_bits, t->info.data_bits,
				   table);
	if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ_DEFAULT, 0)) ||
	    (rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_FLAGS, &flags)))
		return rc;
	if (action_id)
		*action_id = FLAGS_ACTION_OF(flags);
	if (!data)
		return 0;
	for (unsigned i = 0; i < t->data_words; i++)
		if ((rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_DATA + 4 * i, &words[i])))
			return rc;
	matcha_words_to_be(words, t->data_words, data, div_ceil(data_bits, 8));
	return 0;
}
