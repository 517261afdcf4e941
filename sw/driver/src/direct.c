/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Direct tables: the key is the entry's index (docs/tables.md, "Direct"). Keys from `size`
 * up address no entry: the hardware misses them, and the driver refuses them. An entry
 * never moves, so an add, a modify and a delete are each one WRITE of the key's index, and
 * a lookup sees the entry as it was before the WRITE or as it is after it.
 *
 * The shadow is one valid byte per index: placement needs no more, and modify rewrites
 * the whole entry.
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

static uint8_t *valid(const struct matcha_table *t) { return t->state; }

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	(void)w; /* a direct descriptor has nothing beyond the common words */
	const struct matcha_table_info *in = &t->info;
	/* The key is written to the 32-bit INDEX, and every index must be a key. */
	if (in->key_bits > 32)
		return matcha_fail(dev, MATCHA_ENODEV, "direct table %u: %u-bit keys, but a key is "
				   "an index of at most 32 bits", t->index, in->key_bits);
	if (in->key_bits < 32 && in->size > 1u << in->key_bits)
		return matcha_fail(dev, MATCHA_ENODEV, "direct table %u: %u entries, but %u-bit "
				   "keys reach only %u of them", t->index, in->size, in->key_bits,
				   1u << in->key_bits);
	if (!(t->state = calloc(in->size, 1)))
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the shadow of direct table %u "
				   "(%u entries)", t->index, in->size);
	return 0;
}

static void release(struct matcha_table *t)
{
	free(t->state);
	t->state = NULL;
}

static void reset(struct matcha_table *t)
{
	memset(valid(t), 0, t->info.size);
}

/* The index a key names; a key beyond the last entry is refused. `op` names the call. */
static int key_index(matcha_dev *dev, struct matcha_table *t, const char *op,
		     const struct matcha_key *k, uint32_t *index)
{
	uint32_t words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc = matcha_value_to_words(dev, t, "key", k->value, t->info.key_bits,
				       t->info.key_bits, words);
	if (rc)
		return rc;
	*index = words[0];
	if (*index >= t->info.size)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: key %u is beyond the last entry of "
				   "direct table %u (keys 0..%u: the key is the entry's index)", op,
				   (unsigned)*index, t->index, t->info.size - 1);
	return 0;
}

/* The index of a key the call needs in the table. */
static int present_index(matcha_dev *dev, struct matcha_table *t, const char *op,
			 const struct matcha_key *k, uint32_t *index)
{
	int rc = key_index(dev, t, op, k, index);
	if (rc)
		return rc;
	if (!valid(t)[*index])
		return matcha_fail(dev, MATCHA_ENOENT, "%s: key %u is not in direct table %u", op,
				   (unsigned)*index, t->index);
	return 0;
}

/* One WRITE of entry `index`, valid with this action and data. The key is not staged: the
 * table keeps none. */
static int write_entry(matcha_dev *dev, struct matcha_table *t, uint32_t index,
		       uint8_t action_id, const uint32_t *data)
{
	struct staged_entry e = {
		.flags = MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id),
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
	};
	int rc = matcha_window_write(dev, t, index, &e);
	if (!rc)
		valid(t)[index] = 1;
	return rc;
}

static int add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
	       uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], index;
	int rc;

	if ((rc = key_index(dev, t, "direct_add", k, &index)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)))
		return rc;
	if (valid(t)[index])
		return matcha_fail(dev, MATCHA_EEXIST, "direct_add: key %u is already in direct "
				   "table %u", (unsigned)index, t->index);
	if ((rc = matcha_counter_zero(dev, t, index)))
		return rc;
	return write_entry(dev, t, index, action_id, data_words);
}

static int modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], index;
	int rc;

	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present_index(dev, t, "direct_modify", k, &index)))
		return rc;
	/* The entry stays at its index: its counts stay with it. */
	return write_entry(dev, t, index, action_id, data_words);
}

static int remove_entry(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	struct staged_entry e = { .flags = 0 };
	uint32_t index;
	int rc;

	if ((rc = present_index(dev, t, "direct_delete", k, &index)) ||
	    (rc = matcha_window_write(dev, t, index, &e)))
		return rc;
	valid(t)[index] = 0;
	return 0;
}

/* Adoption: READ every index. Any set of valid entries is one the driver could have
 * written, so there is nothing to refuse. */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct matcha_entry e;
	for (uint32_t i = 0; i < t->info.size; i++) {
		int rc = matcha_window_read(dev, t, i, &e);
		if (rc)
			return rc;
		valid(t)[i] = e.valid;
	}
	return 0;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	if (i >= t->info.size || !valid(t)[i])
		return false;
	memset(k, 0, sizeof *k);
	matcha_words_to_be(&i, 1, k->value, t->key_bytes);
	return true;
}

const struct matcha_kind_ops matcha_direct_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT,
	.key_is_index = true,
	.init = init,
	.release = release,
	.reset = reset,
	.adopt = adopt,
	.add = add,
	.modify = modify,
	.remove = remove_entry,
	.find = present_index,
	.shadow_key = shadow_key,
};
