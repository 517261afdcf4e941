/* SPDX-License-Identifier: Apache-2.0 */
/*
 * LPM tables: the pipelined multibit trie of docs/tables.md, built and updated
 * incrementally by controlled prefix expansion.
 *
 * The shadow holds every level's entry words as the hardware has them, each node's count
 * of non-empty entries (a node is freed when it empties), free lists of nodes and results,
 * and the prefix set: result r belongs to the prefix stored at r, so result indices double
 * as prefix ids. Prefixes are kept in canonical form (the table's key width, big-endian)
 * with the bits beyond their length zero.
 *
 * Per-entry counters count per result: a result never moves, so an add zeroes it before
 * writing it and a delete drops its count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

#define NO_RESULT UINT32_MAX
#define MAX_LEVEL_ENTRIES (MATCHA_HW_LPM_ADDRESS_MASK + 1u)
#define MAX_NODES (MATCHA_HW_LPM_FIELD_MASK + 1u)   /* child pointers are 15 bits */
#define MAX_RESULTS (MATCHA_HW_LPM_FIELD_MASK + 1u) /* result indices are 15 bits */
#define MAX_STRIDE 16

struct lpm_level {
	unsigned stride;
	unsigned shift;       /* key bits consumed by the levels above */
	unsigned nodes;
	uint32_t *words;      /* nodes << stride entry words */
	uint32_t *used;       /* per node: entries that are not 0 */
	uint32_t *free_nodes; /* stack of free node ids, lowest on top */
	unsigned nfree;
};

struct lpm_trie {
	unsigned levels;
	struct lpm_level *level;
	unsigned results;
	uint8_t *prefix;         /* results * key_bytes */
	uint16_t *len;           /* prefix length of each allocated result */
	uint32_t *free_results;  /* stack, lowest on top */
	unsigned nfree_results;
	uint32_t *buckets;       /* prefix set: open addressing over result ids */
	unsigned nbuckets;       /* power of two, at least twice the results */
	/* matcha_lpm_image() views of the levels */
	unsigned *strides;
	const uint32_t **words;
	size_t *entries;
};

static struct lpm_trie *shadow(const struct matcha_table *t) { return t->state; }

/* ------------------------------------------------------------------------ key bits */

/* `count` (<= 16) key bits starting `from` bits below the key's most significant bit. */
static uint32_t key_chunk(const uint8_t *key, unsigned key_bytes, unsigned key_bits,
			  unsigned from, unsigned count)
{
	unsigned start = key_bytes * 8 - key_bits + from, byte = start / 8;
	uint32_t window = 0;
	for (unsigned k = 0; k < 3; k++)
		window = window << 8 | (byte + k < key_bytes ? key[byte + k] : 0);
	return window >> (24 - start % 8 - count) & ((1u << count) - 1);
}

/* Clears every bit of a canonical key from `len` bits below its top on. */
static void truncate_prefix(uint8_t *p, unsigned key_bytes, unsigned key_bits, unsigned len)
{
	unsigned bit = key_bytes * 8 - key_bits + len;
	if (bit % 8)
		p[bit / 8] &= (uint8_t)(0xFF00u >> (bit % 8));
	for (unsigned i = div_ceil(bit, 8); i < key_bytes; i++)
		p[i] = 0;
}

/* ---------------------------------------------------------------------- prefix set */

static uint32_t bucket_home(const struct matcha_table *t, const uint8_t *p, unsigned len)
{
	uint64_t h = matcha_crc64_xz(p, t->key_bytes) ^ (uint64_t)len * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h ^ h >> 32) & (shadow(t)->nbuckets - 1);
}

static const uint8_t *prefix_at(const struct matcha_table *t, uint32_t r)
{
	return shadow(t)->prefix + (size_t)r * t->key_bytes;
}

static uint32_t prefix_find(const struct matcha_table *t, const uint8_t *p, unsigned len)
{
	const struct lpm_trie *trie = shadow(t);
	for (uint32_t i = bucket_home(t, p, len);; i = (i + 1) & (trie->nbuckets - 1)) {
		uint32_t r = trie->buckets[i];
		if (r == NO_RESULT)
			return NO_RESULT;
		if (trie->len[r] == len && !memcmp(prefix_at(t, r), p, t->key_bytes))
			return r;
	}
}

static void prefix_insert(struct matcha_table *t, uint32_t r)
{
	struct lpm_trie *trie = shadow(t);
	uint32_t i = bucket_home(t, prefix_at(t, r), trie->len[r]);
	while (trie->buckets[i] != NO_RESULT)
		i = (i + 1) & (trie->nbuckets - 1);
	trie->buckets[i] = r;
}

/* Linear-probing removal by backward shift: no tombstones to accumulate. */
static void prefix_remove(struct matcha_table *t, uint32_t r)
{
	struct lpm_trie *trie = shadow(t);
	uint32_t mask = trie->nbuckets - 1;
	uint32_t i = bucket_home(t, prefix_at(t, r), trie->len[r]);
	while (trie->buckets[i] != r)
		i = (i + 1) & mask;
	trie->buckets[i] = NO_RESULT;
	for (uint32_t j = (i + 1) & mask; trie->buckets[j] != NO_RESULT; j = (j + 1) & mask) {
		uint32_t q = trie->buckets[j];
		uint32_t home = bucket_home(t, prefix_at(t, q), trie->len[q]);
		/* q may fill the hole at i unless its home lies cyclically in (i, j]. */
		bool stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			trie->buckets[i] = q;
			trie->buckets[j] = NO_RESULT;
			i = j;
		}
	}
}

/* ------------------------------------------------------------------ setup, teardown */

/* Whether a READ of `index` is in range: how the node capacity of a level is found. */
static int index_exists(matcha_dev *dev, struct matcha_table *t, uint32_t index, bool *exists)
{
	int rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, index);
	*exists = rc == 0;
	return rc == MATCHA_EHW ? 0 : rc;
}

/* Entries of a level: the end of its index range (a binary search with READ). */
static int probe_level_entries(matcha_dev *dev, struct matcha_table *t, unsigned level,
			       uint32_t *entries)
{
	uint32_t lo = 0, hi = MAX_LEVEL_ENTRIES; /* index lo-1 exists, index hi does not */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		bool exists;
		int rc = index_exists(dev, t, (uint32_t)level << MATCHA_HW_LPM_LEVEL_SHIFT | mid, &exists);
		if (rc)
			return rc;
		if (exists)
			lo = mid + 1;
		else
			hi = mid;
	}
	*entries = lo;
	return 0;
}

static void reset_trie(struct matcha_table *t)
{
	struct lpm_trie *trie = shadow(t);
	for (unsigned i = 0; i < trie->levels; i++) {
		struct lpm_level *lv = &trie->level[i];
		memset(lv->words, 0, ((size_t)lv->nodes << lv->stride) * sizeof *lv->words);
		memset(lv->used, 0, lv->nodes * sizeof *lv->used);
		/* level 0 has its one node for good */
		lv->nfree = 0;
		for (unsigned n = lv->nodes; n-- > (i == 0 ? 1u : 0u);)
			lv->free_nodes[lv->nfree++] = n;
	}
	trie->nfree_results = 0;
	for (unsigned r = trie->results; r-- > 0;)
		trie->free_results[trie->nfree_results++] = r;
	for (unsigned b = 0; b < trie->nbuckets; b++)
		trie->buckets[b] = NO_RESULT;
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	t->info.levels = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	t->info.prefix_store = w[MATCHA_HW_DESC_KIND_WORD] & MATCHA_HW_KIND_PREFIX_STORE;
	unsigned levels = in->levels;
	int rc;

	if (levels == 0 || in->key_bits % levels || in->key_bits / levels > MAX_STRIDE)
		return matcha_fail(dev, MATCHA_ENODEV,
				   "LPM table %u: %u-bit keys in %u levels is not equal strides of "
				   "at most %d bits", t->index, in->key_bits, levels, MAX_STRIDE);
	if (in->size > MAX_RESULTS)
		return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: %u results, result indices "
				   "reach %u", t->index, in->size, MAX_RESULTS);

	struct lpm_trie *trie = calloc(1, sizeof *trie);
	if (!trie)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for LPM table %u", t->index);
	t->state = trie;
	trie->levels = levels;
	trie->results = in->size;
	for (trie->nbuckets = 2; trie->nbuckets < 2 * trie->results;)
		trie->nbuckets *= 2;
	trie->level = calloc(levels, sizeof *trie->level);
	trie->strides = calloc(levels, sizeof *trie->strides);
	trie->words = calloc(levels, sizeof *trie->words);
	trie->entries = calloc(levels, sizeof *trie->entries);
	trie->prefix = calloc(trie->results, t->key_bytes);
	trie->len = calloc(trie->results, sizeof *trie->len);
	trie->free_results = calloc(trie->results, sizeof *trie->free_results);
	trie->buckets = calloc(trie->nbuckets, sizeof *trie->buckets);
	if (!trie->level || !trie->strides || !trie->words || !trie->entries || !trie->prefix ||
	    !trie->len || !trie->free_results || !trie->buckets)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for LPM table %u", t->index);

	unsigned stride = in->key_bits / levels;
	for (unsigned i = 0; i < levels; i++) {
		struct lpm_level *lv = &trie->level[i];
		uint32_t entries;
		if ((rc = probe_level_entries(dev, t, i, &entries)))
			return rc;
		lv->stride = stride;
		lv->shift = i * stride;
		lv->nodes = entries >> stride;
		if (lv->nodes > MAX_NODES)
			lv->nodes = MAX_NODES; /* child pointers reach no further */
		if (i == 0 && lv->nodes != 1)
			return matcha_fail(dev, MATCHA_ENODEV, "LPM table %u: level 0 has %u entries, "
					   "one node of a %u-bit stride has %u", t->index,
					   (unsigned)entries, stride, 1u << stride);
		size_t nwords = (size_t)lv->nodes << stride;
		lv->words = calloc(nwords ? nwords : 1, sizeof *lv->words);
		lv->used = calloc(lv->nodes ? lv->nodes : 1, sizeof *lv->used);
		lv->free_nodes = calloc(lv->nodes ? lv->nodes : 1, sizeof *lv->free_nodes);
		if (!lv->words || !lv->used || !lv->free_nodes)
			return matcha_fail(dev, MATCHA_ENOMEM, "no memory for level %u of LPM table "
					   "%u (%u nodes)", i, t->index, lv->nodes);
		trie->strides[i] = stride;
		trie->words[i] = lv->words;
		trie->entries[i] = nwords;
	}
	reset_trie(t);
	return 0;
}

static void release(struct matcha_table *t)
{
	struct lpm_trie *trie = shadow(t);
	if (!trie)
		return;
	for (unsigned i = 0; trie->level && i < trie->levels; i++) {
		free(trie->level[i].words);
		free(trie->level[i].used);
		free(trie->level[i].free_nodes);
	}
	free(trie->level);
	free(trie->strides);
	free(trie->words);
	free(trie->entries);
	free(trie->prefix);
	free(trie->len);
	free(trie->free_results);
	free(trie->buckets);
	free(trie);
	t->state = NULL;
}

/* -------------------------------------------------------------------------- writes */

static uint32_t lpm_index(unsigned level, uint32_t address)
{
	return (uint32_t)level << MATCHA_HW_LPM_LEVEL_SHIFT | address;
}

/* Writes one trie entry word (atomic in hardware) and mirrors it in the shadow. */
static int write_entry(matcha_dev *dev, struct matcha_table *t, unsigned level,
		       uint32_t address, uint32_t word)
{
	struct lpm_level *lv = &shadow(t)->level[level];
	struct staged_entry e = { .data = &word, .data_words = 1, .no_flags = true };
	int rc = matcha_window_write(dev, t, lpm_index(level, address), &e);
	if (rc)
		return rc;
	uint32_t old = lv->words[address];
	uint32_t node = address >> lv->stride;
	lv->used[node] += (old == 0 && word != 0);
	lv->used[node] -= (old != 0 && word == 0);
	lv->words[address] = word;
	return 0;
}

/*
 * Writes result r. On hardware with a prefix store the WRITE also keeps the staged KEY and
 * PRIORITY as the result's prefix and length, so the prefix is staged with every valid
 * result (adds and modifies); an invalidated result's prefix is never read.
 */
static int write_result(matcha_dev *dev, struct matcha_table *t, uint32_t r, uint32_t flags,
			const uint32_t *data)
{
	uint32_t prefix[MATCHA_HW_WIN_STAGING_WORDS];
	bool store = t->info.prefix_store && (flags & MATCHA_HW_FLAGS_VALID);
	if (store)
		matcha_be_to_words(prefix_at(t, r), t->key_bytes, prefix, t->key_words);
	struct staged_entry e = {
		.flags = flags,
		.key = store ? prefix : NULL,
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
		.has_priority = store,
		.priority = store ? shadow(t)->len[r] : 0,
	};
	return matcha_window_write(dev, t, lpm_index(shadow(t)->levels, r), &e);
}

static uint32_t with_result(uint32_t word, uint32_t r)
{
	word &= ~(MATCHA_HW_LPM_HAS_RESULT | MATCHA_HW_LPM_FIELD_MASK);
	return r == NO_RESULT ? word : word | MATCHA_HW_LPM_HAS_RESULT | r;
}

static uint32_t with_child(uint32_t word, uint32_t child)
{
	return (word & ~(MATCHA_HW_LPM_HAS_CHILD | MATCHA_HW_LPM_FIELD_MASK << MATCHA_HW_LPM_CHILD_SHIFT)) | MATCHA_HW_LPM_HAS_CHILD |
	       child << MATCHA_HW_LPM_CHILD_SHIFT;
}

/* ------------------------------------------------------------------- add, delete */

/* The level whose bit range holds prefixes of length len. */
static unsigned level_of(const struct lpm_trie *trie, unsigned len)
{
	unsigned k = 0;
	while (len > trie->level[k].shift + trie->level[k].stride)
		k++;
	return k;
}

/* Where a key's walk reads level `i` of node `node`. */
static uint32_t entry_address(const struct matcha_table *t, unsigned i, uint32_t node,
			      const uint8_t *key)
{
	const struct lpm_level *lv = &shadow(t)->level[i];
	return node << lv->stride |
	       key_chunk(key, t->key_bytes, t->info.key_bits, lv->shift, lv->stride);
}

/*
 * Follows the prefix's path from the root. node[i] is its node at level i for i < *depth:
 * *depth is the first level (<= k) with no node on the path, or k+1 if all exist.
 */
static void follow_path(const struct matcha_table *t, const uint8_t *p, unsigned k,
			uint32_t *node, unsigned *depth)
{
	const struct lpm_trie *trie = shadow(t);
	node[0] = 0;
	unsigned i = 0;
	for (; i < k; i++) {
		uint32_t word = trie->level[i].words[entry_address(t, i, node[i], p)];
		if (!(word & MATCHA_HW_LPM_HAS_CHILD))
			break;
		node[i + 1] = word >> MATCHA_HW_LPM_CHILD_SHIFT & MATCHA_HW_LPM_FIELD_MASK;
	}
	*depth = i + 1;
}

/* Checks a caller's prefix and copies it into canonical form. */
static int canonical_prefix(matcha_dev *dev, struct matcha_table *t, const char *op,
			    const uint8_t *prefix, unsigned len, uint8_t *canon)
{
	if (len > t->info.key_bits)
		return matcha_fail(dev, MATCHA_E2BIG, "%s: prefix length %u, table %u has %u-bit "
				   "keys", op, len, t->index, t->info.key_bits);
	if (!prefix)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: prefix pointer is NULL", op);
	memcpy(canon, prefix, t->key_bytes);
	truncate_prefix(canon, t->key_bytes, t->info.key_bits, len);
	/* Reject rather than mask, as `ip route` and P4Runtime do: a set bit there is a typo. */
	if (memcmp(canon, prefix, t->key_bytes))
		return matcha_fail(dev, MATCHA_EINVAL, "%s: prefix has bits set beyond its length "
				   "%u (or above the %u-bit key)", op, len, t->info.key_bits);
	return 0;
}

/* The result of a prefix the call needs in the table, the prefix in canonical form in
 * `canon`; `op` names the call. */
static int present_result(matcha_dev *dev, struct matcha_table *t, const char *op,
			  const uint8_t *prefix, unsigned len, uint8_t *canon, uint32_t *r)
{
	int rc = canonical_prefix(dev, t, op, prefix, len, canon);
	if (rc)
		return rc;
	*r = prefix_find(t, canon, len);
	if (*r == NO_RESULT)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: the /%u prefix is not in table %u", op,
				   len, t->index);
	return 0;
}

static int add(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
	       unsigned prefix_len, uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	unsigned table = t->index;
	int rc;

	if ((rc = canonical_prefix(dev, t, "lpm_add", prefix, prefix_len, canon)) ||
	    (rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)))
		return rc;

	struct lpm_trie *trie = shadow(t);
	if (prefix_find(t, canon, prefix_len) != NO_RESULT)
		return matcha_fail(dev, MATCHA_EEXIST, "lpm_add: the /%u prefix is already in "
				   "table %u", prefix_len, table);
	if (trie->nfree_results == 0)
		return matcha_fail(dev, MATCHA_ENOSPC, "lpm_add: table %u holds %u prefixes, "
				   "all its results are used", table, trie->results);

	unsigned k = level_of(trie, prefix_len), depth;
	uint32_t node[MATCHA_MAX_KEY_BITS];
	follow_path(t, canon, k, node, &depth);
	for (unsigned i = depth; i <= k; i++)
		if (trie->level[i].nfree == 0)
			return matcha_fail(dev, MATCHA_ENOSPC, "lpm_add: table %u has no free node "
					   "at level %u (%u nodes) for this /%u prefix", table,
					   i, trie->level[i].nodes, prefix_len);

	uint32_t r = trie->free_results[--trie->nfree_results];
	memcpy(trie->prefix + (size_t)r * t->key_bytes, canon, t->key_bytes);
	trie->len[r] = (uint16_t)prefix_len;
	prefix_insert(t, r);
	/* The result (its counters zeroed first) before anything that points at it. */
	if ((rc = matcha_counter_zero(dev, t, r)) ||
	    (rc = write_result(dev, t, r, MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id), data_words)))
		return rc;

	/* New nodes for levels depth..k; unreachable until their parent entry is written. */
	for (unsigned i = depth; i <= k; i++)
		node[i] = trie->level[i].free_nodes[--trie->level[i].nfree];

	/* Expand the prefix over its entries in its level's node. */
	struct lpm_level *lv = &trie->level[k];
	uint32_t first = entry_address(t, k, node[k], canon);
	uint32_t count = 1u << (lv->shift + lv->stride - prefix_len);
	for (uint32_t a = first; a < first + count; a++) {
		uint32_t word = lv->words[a];
		/* Entries holding a longer prefix of this level keep it. */
		if ((word & MATCHA_HW_LPM_HAS_RESULT) && trie->len[word & MATCHA_HW_LPM_FIELD_MASK] > prefix_len)
			continue;
		if ((rc = write_entry(dev, t, k, a, with_result(word, r))))
			return rc;
	}

	/* Link new nodes bottom-up; the last write (into an existing node) makes them live. */
	for (unsigned i = k; i-- > 0 && i + 1 >= depth;) {
		uint32_t a = entry_address(t, i, node[i], canon);
		if ((rc = write_entry(dev, t, i, a, with_child(trie->level[i].words[a],
								node[i + 1]))))
			return rc;
	}
	return 0;
}

static int delete(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
		  unsigned prefix_len)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES], shorter[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = present_result(dev, t, "lpm_delete", prefix, prefix_len, canon, &r)))
		return rc;
	struct lpm_trie *trie = shadow(t);

	unsigned k = level_of(trie, prefix_len), depth;
	uint32_t node[MATCHA_MAX_KEY_BITS];
	follow_path(t, canon, k, node, &depth);

	/*
	 * Entries holding r fall back to the longest shorter prefix of the same level that
	 * covers them: every such prefix covers the whole of this prefix, so it is one
	 * prefix for all of them.
	 */
	struct lpm_level *lv = &trie->level[k];
	uint32_t fallback = NO_RESULT;
	unsigned lowest = k == 0 ? 0 : lv->shift + 1;
	for (unsigned len = prefix_len; len-- > lowest && fallback == NO_RESULT;) {
		memcpy(shorter, canon, t->key_bytes);
		truncate_prefix(shorter, t->key_bytes, t->info.key_bits, len);
		fallback = prefix_find(t, shorter, len);
	}
	uint32_t first = entry_address(t, k, node[k], canon);
	uint32_t count = 1u << (lv->shift + lv->stride - prefix_len);
	for (uint32_t a = first; a < first + count; a++) {
		uint32_t word = lv->words[a];
		if ((word & MATCHA_HW_LPM_HAS_RESULT) && (word & MATCHA_HW_LPM_FIELD_MASK) == r &&
		    (rc = write_entry(dev, t, k, a, with_result(word, fallback))))
			return rc;
	}

	/* Unlink emptied nodes bottom-up; an empty node answers as its parent entry does. */
	for (unsigned i = k; i > 0 && trie->level[i].used[node[i]] == 0; i--) {
		uint32_t a = entry_address(t, i - 1, node[i - 1], canon);
		uint32_t word = trie->level[i - 1].words[a];
		word &= ~(MATCHA_HW_LPM_HAS_CHILD | MATCHA_HW_LPM_FIELD_MASK << MATCHA_HW_LPM_CHILD_SHIFT);
		if ((rc = write_entry(dev, t, i - 1, a, word)))
			return rc;
		trie->level[i].free_nodes[trie->level[i].nfree++] = node[i];
	}

	/* The result last, once nothing points at it. */
	if ((rc = write_result(dev, t, r, 0, NULL)))
		return rc;
	prefix_remove(t, r);
	trie->free_results[trie->nfree_results++] = r;
	return 0;
}

int matcha_lpm_counters(matcha_dev *dev, unsigned table, const uint8_t *prefix,
			unsigned prefix_len, uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_table *t;
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_counters", &t)) ||
	    (rc = matcha_counters_check(dev, t, "lpm_counters")) ||
	    (rc = present_result(dev, t, "lpm_counters", prefix, prefix_len, canon, &r)))
		return rc;
	return matcha_counter_entry(dev, t, r, packets, bytes, flags);
}

static int modify(matcha_dev *dev, struct matcha_table *t, const uint8_t *prefix,
		  unsigned prefix_len, uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS], r;
	int rc;

	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present_result(dev, t, "lpm_modify", prefix, prefix_len, canon, &r)))
		return rc;
	/* One WRITE of the result: the trie entries pointing at it stay as they are. */
	return write_result(dev, t, r, MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id), data_words);
}

int matcha_lpm_add(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		   unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		   unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_add", &t);
	return rc ? rc : add(dev, t, prefix, prefix_len, action_id, data, data_bits);
}

int matcha_lpm_delete(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_delete", &t);
	return rc ? rc : delete(dev, t, prefix, prefix_len);
}

int matcha_lpm_modify(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		      unsigned prefix_len, uint8_t action_id, const uint8_t *data,
		      unsigned data_bits)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_modify", &t);
	return rc ? rc : modify(dev, t, prefix, prefix_len, action_id, data, data_bits);
}

int matcha_lpm_read(matcha_dev *dev, unsigned table, const uint8_t *prefix,
		    unsigned prefix_len, uint32_t *result, struct matcha_entry *entry)
{
	struct matcha_table *t;
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	uint32_t r;
	int rc;

	if ((rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_read", &t)) ||
	    (rc = present_result(dev, t, "lpm_read", prefix, prefix_len, canon, &r)))
		return rc;
	if (result)
		*result = r;
	if ((rc = matcha_window_read(dev, t, matcha_window_index(t, r), entry)))
		return rc;
	/* A result holds no key: the prefix is the shadow's. */
	memcpy(entry->key, canon, t->key_bytes);
	return 0;
}

/* ------------------------------------------------------------------ walks, queries */

int matcha_lpm_walk_image(const struct matcha_lpm_image *img, const uint8_t *key,
			  uint32_t *result)
{
	unsigned key_bytes = div_ceil(img->key_bits, 8), shift = 0;
	uint32_t node = 0, best = NO_RESULT;
	for (unsigned i = 0; i < img->levels; i++) {
		unsigned s = img->strides[i];
		size_t a = (size_t)node << s | key_chunk(key, key_bytes, img->key_bits, shift, s);
		if (a >= img->entries[i])
			return MATCHA_EINVAL;
		uint32_t word = img->words[i][a];
		if (word & MATCHA_HW_LPM_HAS_RESULT)
			best = word & MATCHA_HW_LPM_FIELD_MASK;
		if (!(word & MATCHA_HW_LPM_HAS_CHILD))
			break;
		node = word >> MATCHA_HW_LPM_CHILD_SHIFT & MATCHA_HW_LPM_FIELD_MASK;
		shift += s;
	}
	if (best == NO_RESULT)
		return MATCHA_ENOENT;
	*result = best;
	return 0;
}

int matcha_lpm_image(matcha_dev *dev, unsigned table, struct matcha_lpm_image *img)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_image", &t);
	if (rc)
		return rc;
	*img = (struct matcha_lpm_image){
		.key_bits = t->info.key_bits,
		.levels = shadow(t)->levels,
		.strides = shadow(t)->strides,
		.words = shadow(t)->words,
		.entries = shadow(t)->entries,
	};
	return 0;
}

int matcha_lpm_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			 uint32_t *result)
{
	struct matcha_lpm_image img;
	int rc = matcha_lpm_image(dev, table, &img);
	if (rc)
		return rc;
	rc = matcha_lpm_walk_image(&img, key, result);
	if (rc == MATCHA_ENOENT)
		return matcha_fail(dev, rc, "lpm_lookup_sw: no prefix of table %u matches", table);
	return rc;
}

int matcha_lpm_level(matcha_dev *dev, unsigned table, unsigned level, unsigned *stride_bits,
		     unsigned *nodes)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_LPM, "lpm_level", &t);
	if (rc)
		return rc;
	if (level >= shadow(t)->levels)
		return matcha_fail(dev, MATCHA_EINVAL, "lpm_level: table %u has %u levels, not %u",
				   table, shadow(t)->levels, level + 1);
	*stride_bits = shadow(t)->level[level].stride;
	*nodes = shadow(t)->level[level].nodes;
	return 0;
}

/* ---------------------------------------------------------------------- adoption */

/* Sets `count` key bits starting `from` bits below the key's top to `chunk`. */
static void set_chunk(uint8_t *key, unsigned key_bytes, unsigned key_bits, unsigned from,
		      unsigned count, uint32_t chunk)
{
	unsigned start = key_bytes * 8 - key_bits + from;
	for (unsigned b = 0; b < count; b++) {
		unsigned bit = start + b;
		uint8_t m = (uint8_t)(0x80u >> bit % 8);
		if (chunk >> (count - 1 - b) & 1)
			key[bit / 8] |= m;
		else
			key[bit / 8] &= (uint8_t)~m;
	}
}

/* Whether the first `len` bits of canonical keys a and b agree. */
static bool same_top(const struct matcha_table *t, const uint8_t *a, const uint8_t *b,
		     unsigned len)
{
	uint8_t x[MATCHA_MAX_KEY_BYTES], y[MATCHA_MAX_KEY_BYTES];
	memcpy(x, a, t->key_bytes);
	memcpy(y, b, t->key_bytes);
	truncate_prefix(x, t->key_bytes, t->info.key_bits, len);
	truncate_prefix(y, t->key_bytes, t->info.key_bits, len);
	return !memcmp(x, y, t->key_bytes);
}

/* What adoption reads: the valid results (their prefixes are in the shadow). */
struct adoption {
	uint32_t *held; /* the valid results */
	unsigned nheld;
	uint8_t *seen;  /* per level, per node: reached from the root */
};

/*
 * The word the driver would have written at the level-i entry whose first `end` key bits
 * are `bits` (end = the level's last bit): as its result, the longest prefix of this level
 * that covers it; a child when a longer prefix runs through it. The child pointer is the
 * hardware's own (node numbers depend on the order of past adds and deletes).
 */
static uint32_t expected_word(const struct matcha_table *t, const struct adoption *ad,
			      unsigned i, const uint8_t *bits, uint32_t hw_word)
{
	const struct lpm_trie *trie = shadow(t);
	unsigned end = trie->level[i].shift + trie->level[i].stride;
	uint32_t best = NO_RESULT, word = 0;
	bool child = false;
	for (unsigned k = 0; k < ad->nheld; k++) {
		uint32_t r = ad->held[k];
		unsigned len = trie->len[r];
		if (len > end) {
			child = child || same_top(t, prefix_at(t, r), bits, end);
			continue;
		}
		if (level_of(trie, len) != i || !same_top(t, prefix_at(t, r), bits, len))
			continue;
		if (best == NO_RESULT || len > trie->len[best])
			best = r;
	}
	if (child)
		word = with_child(0, hw_word >> MATCHA_HW_LPM_CHILD_SHIFT & MATCHA_HW_LPM_FIELD_MASK);
	return with_result(word, best);
}

/* The key bits an entry covers, in hex with their length ("0x0a010000/16"). */
static void describe_entry(const struct matcha_table *t, const uint8_t *bits, unsigned end,
			   char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "0x");
	for (unsigned b = 0; b < t->key_bytes && o + 3 < len; b++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", bits[b]);
	snprintf(buf + o, len - o, "/%u", end);
}

/*
 * Reads node `node` of level i (its key bits above the level in `bits`), checks every entry
 * against the prefix set and goes down into its children.
 */
static int adopt_node(matcha_dev *dev, struct matcha_table *t, struct adoption *ad, unsigned i,
		      uint32_t node, uint8_t *bits)
{
	struct lpm_trie *trie = shadow(t);
	struct lpm_level *lv = &trie->level[i];
	unsigned end = lv->shift + lv->stride;
	char where[160];
	for (uint32_t c = 0; c < 1u << lv->stride; c++) {
		uint32_t a = node << lv->stride | c, word;
		int rc;
		if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, lpm_index(i, a))) ||
		    (rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_DATA, &word)))
			return rc;
		set_chunk(bits, t->key_bytes, t->info.key_bits, lv->shift, lv->stride, c);
		uint32_t want = expected_word(t, ad, i, bits, word);
		if (word != want) {
			describe_entry(t, bits, end, where, sizeof where);
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: level %u entry 0x%x (keys "
					   "%s) holds 0x%08x, the prefix store gives 0x%08x: the "
					   "trie does not match its prefixes", t->index, i,
					   (unsigned)a, where, (unsigned)word, (unsigned)want);
		}
		lv->words[a] = word;
		lv->used[node] += word != 0;
		if (!(word & MATCHA_HW_LPM_HAS_CHILD))
			continue;
		/* The word is the expected one, and no prefix is longer than the key: an entry of
		 * the last level has no child. */
		uint32_t child = word >> MATCHA_HW_LPM_CHILD_SHIFT & MATCHA_HW_LPM_FIELD_MASK;
		if (child >= trie->level[i + 1].nodes) {
			describe_entry(t, bits, end, where, sizeof where);
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: level %u entry 0x%x (keys "
					   "%s) points at node %u of level %u, which is beyond the "
					   "level's nodes", t->index, i, (unsigned)a, where,
					   (unsigned)child, i + 1);
		}
		uint8_t *seen = &ad->seen[(size_t)(i + 1) * MAX_NODES + child];
		if (*seen)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: node %u of level %u is "
					   "reached twice (again from level %u entry 0x%x)", t->index,
					   (unsigned)child, i + 1, i, (unsigned)a);
		*seen = 1;
		uint8_t below[MATCHA_MAX_KEY_BYTES];
		memcpy(below, bits, t->key_bytes);
		if ((rc = adopt_node(dev, t, ad, i + 1, child, below)))
			return rc;
	}
	return 0;
}

/* Reads the valid results and their prefixes (KEY, PRIORITY) into the shadow's prefix set. */
static int adopt_results(matcha_dev *dev, struct matcha_table *t, struct adoption *ad)
{
	struct lpm_trie *trie = shadow(t);
	uint32_t base = t->info.base, flags, words[MATCHA_HW_WIN_STAGING_WORDS], len;
	uint8_t prefix[MATCHA_MAX_KEY_BYTES], canon[MATCHA_MAX_KEY_BYTES];
	trie->nfree_results = 0;
	for (uint32_t r = trie->results; r-- > 0;) {
		int rc;
		if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, lpm_index(trie->levels, r))) ||
		    (rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_FLAGS, &flags)))
			return rc;
		if (!(flags & MATCHA_HW_FLAGS_VALID)) {
			trie->free_results[trie->nfree_results++] = r; /* lowest ends on top */
			continue;
		}
		if (!t->info.prefix_store)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: result %u is in use but the "
					   "hardware keeps no prefix store (descriptor kind bit 10), "
					   "so its prefixes cannot be read back", t->index,
					   (unsigned)r);
		for (unsigned w = 0; w < t->key_words; w++)
			if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_KEY + 4 * w, &words[w])))
				return rc;
		if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_PRIORITY, &len)))
			return rc;
		matcha_words_to_be(words, t->key_words, prefix, t->key_bytes);
		memcpy(canon, prefix, t->key_bytes);
		if (len <= t->info.key_bits)
			truncate_prefix(canon, t->key_bytes, t->info.key_bits, len);
		if (len > t->info.key_bits || memcmp(canon, prefix, t->key_bytes))
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: result %u has the prefix "
					   "length %u, %s", t->index, (unsigned)r, (unsigned)len,
					   len > t->info.key_bits ? "longer than the key" :
					   "but bits set beyond it");
		uint32_t other = prefix_find(t, canon, len);
		if (other != NO_RESULT)
			return matcha_fail(dev, MATCHA_EHW, "LPM table %u: results %u and %u hold the "
					   "same /%u prefix", t->index, (unsigned)r, (unsigned)other,
					   (unsigned)len);
		memcpy(trie->prefix + (size_t)r * t->key_bytes, canon, t->key_bytes);
		trie->len[r] = (uint16_t)len;
		prefix_insert(t, r);
		ad->held[ad->nheld++] = r;
	}
	return 0;
}

/*
 * Adoption: the prefix set from the results and the prefix store, then the trie from the
 * root, each reachable entry checked against what the prefix set gives. Nodes no entry
 * points at are free, and taken to be zero as CLEAR and the driver's deletes leave them.
 */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct lpm_trie *trie = shadow(t);
	struct adoption ad = {
		.held = calloc(trie->results ? trie->results : 1, sizeof *ad.held),
		.seen = calloc((size_t)trie->levels * MAX_NODES, 1),
	};
	uint8_t bits[MATCHA_MAX_KEY_BYTES] = { 0 };
	int rc;
	if (!ad.held || !ad.seen)
		rc = matcha_fail(dev, MATCHA_ENOMEM, "no memory to adopt LPM table %u", t->index);
	else if (!(rc = adopt_results(dev, t, &ad)))
		rc = adopt_node(dev, t, &ad, 0, 0, bits);
	for (unsigned i = 1; !rc && i < trie->levels; i++) {
		struct lpm_level *lv = &trie->level[i];
		lv->nfree = 0;
		for (unsigned n = lv->nodes; n-- > 0;)
			if (!ad.seen[(size_t)i * MAX_NODES + n])
				lv->free_nodes[lv->nfree++] = n;
	}
	free(ad.held);
	free(ad.seen);
	return rc;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	const struct lpm_trie *trie = shadow(t);
	if (i >= trie->results || prefix_find(t, prefix_at(t, i), trie->len[i]) != i)
		return false;
	memset(k, 0, sizeof *k);
	memcpy(k->value, prefix_at(t, i), t->key_bytes);
	k->prefix_len = trie->len[i];
	return true;
}

/* ------------------------------------------------------------- the kind's operations */

static int op_add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return add(dev, t, k->value, k->prefix_len, action_id, data, data_bits);
}

static int op_modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		     uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	return modify(dev, t, k->value, k->prefix_len, action_id, data, data_bits);
}

static int op_remove(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	return delete(dev, t, k->value, k->prefix_len);
}

static int op_find(matcha_dev *dev, struct matcha_table *t, const char *op,
		   const struct matcha_key *k, uint32_t *index)
{
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	return present_result(dev, t, op, k->value, k->prefix_len, canon, index);
}

/* Results sit behind the trie levels in the window's INDEX space. */
static uint32_t window_index(const struct matcha_table *t, uint32_t r)
{
	return lpm_index(t->info.levels, r);
}

const struct matcha_kind_ops matcha_lpm_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT | 1u << MATCHA_MATCH_LPM,
	.prefix = true,
	.init = init,
	.release = release,
	.reset = reset_trie,
	.adopt = adopt,
	.add = op_add,
	.modify = op_modify,
	.remove = op_remove,
	.find = op_find,
	.shadow_key = shadow_key,
	.window_index = window_index,
};
