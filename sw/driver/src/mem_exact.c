/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory-backed exact tables (docs/tables.md, "Memory-backed exact tables"): buckets of
 * entries in DRAM or HBM behind the unit's AXI4 port. A key's bucket is way 0's index of
 * the exact-match hash, with the buckets for slots; the key takes the first free entry
 * there (no entry in memory ever moves). Every add, modify and delete of an entry in memory
 * is one WRITE of one entry, which the unit makes one write of the bucket with WSTRB on that
 * entry's bytes alone, all in one beat, so a lookup sees the entry as before or as after.
 *
 * A full bucket's key goes to the table's on-chip stash when it has one (MEMX_WIN_STASH
 * entries, 0 for none): a 4-way cuckoo table, the same hardware as an exact table, looked
 * up beside the bucket; placed, moved make-before-break and adopted by cuckoo.c as exact
 * tables are. Only when the stash has no room either is the key refused. A key is in its
 * bucket or in the stash, never in both: an add looks in both before it writes, and nothing
 * moves between them.
 *
 * The shadow is every entry's valid bit and key (the stash's also its action and data, for
 * its moves): placement needs no more, so neither an add nor a lookup in software reads the
 * memory, and a modify rewrites the whole entry. Entries are numbered densely here (the
 * counter index of kind.h, which the generic layers walk up to t->indexes): bucket * entries
 * per bucket + slot, then the stash's slots from `size` on. The window INDEX, and a lookup's
 * entryIndex, is bucket << MEMX_INDEX_SLOT_BITS | slot, the stash's after the last bucket's:
 * (buckets << MEMX_INDEX_SLOT_BITS) + stash slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuckoo.h"
#include "kind.h"

#define SLOT_MASK ((1u << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1)
/* The window INDEX is 32 bits, its low MEMX_INDEX_SLOT_BITS the slot. */
#define MAX_BUCKETS (1ull << (32 - MATCHA_HW_MEMX_INDEX_SLOT_BITS))

struct memx_shadow {
	unsigned slots; /* entries per bucket */
	unsigned buckets;
	unsigned used;
	uint8_t *valid; /* size */
	uint8_t *keys;  /* size * key_bytes, canonical */
	/* The on-chip stash, stash.ways 0 when there is none: counter index size + slot,
	 * window INDEX stash.window + slot. */
	struct matcha_cuckoo stash;
};

static struct memx_shadow *shadow(const struct matcha_table *t) { return t->state; }

static unsigned stash_entries(const struct memx_shadow *s)
{
	return s->stash.ways * s->stash.slots;
}

/* The stash's size from its window register: 0, or MEMX_STASH_WAYS ways of a power of two
 * slots whose INDEXes fit the window's 32 bits after the buckets'. A block of register map
 * 1.0 has no such register, and no stash. */
static int init_stash(matcha_dev *dev, struct matcha_table *t, struct memx_shadow *s)
{
	uint32_t entries = 0;
	int rc = VERSION_MINOR(dev->version) < 1 ? 0 :
		 matcha_reg_read(dev, t->info.base + MATCHA_HW_MEMX_WIN_STASH, &entries);
	if (rc || !entries)
		return rc;
	uint64_t first = (uint64_t)s->buckets << MATCHA_HW_MEMX_INDEX_SLOT_BITS;
	if (first + entries > 1ull << 32)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_exact table %u: a stash of %u entries "
				   "after %u buckets goes past the 32 bits of INDEX", t->index,
				   (unsigned)entries, s->buckets);
	if ((rc = matcha_cuckoo_init(dev, t, &s->stash, MATCHA_HW_MEMX_STASH_WAYS, entries,
				     t->info.size, (uint32_t)first, "mem_exact table %u's stash",
				     t->index)))
		return rc;
	t->indexes = t->info.size + entries;
	return 0;
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	unsigned slots = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	unsigned entry_bytes = w[MATCHA_HW_DESC_EXTRA_WORD];
	unsigned encoded = MATCHA_HW_MEMX_ENTRY_KEY_BYTE + t->key_bytes + t->data_bytes;
	t->info.bucket_entries = slots;
	if (slots < 1 || slots > MATCHA_HW_MEMX_MAX_SLOTS)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_exact table %u: %u entries per "
				   "bucket, a bucket holds 1..%u", t->index, slots,
				   MATCHA_HW_MEMX_MAX_SLOTS);
	unsigned buckets = in->size / slots;
	if (in->size % slots || (buckets & (buckets - 1)) || buckets > MAX_BUCKETS)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_exact table %u: %u entries in buckets "
				   "of %u is not a power-of-two number of buckets (at most 2^%u, "
				   "the bucket bits of INDEX)", t->index, in->size, slots,
				   32 - MATCHA_HW_MEMX_INDEX_SLOT_BITS);
	/* The driver writes entries through the window alone; another entry size means the
	 * unit encodes entries otherwise than docs/tables.md, and its READs would mislead. */
	if (entry_bytes != encoded)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_exact table %u: %u-byte entries, but a "
				   "%u-bit key and %u-bit action data make %u (docs/tables.md, "
				   "\"Layout and hash\")", t->index, entry_bytes, in->key_bits,
				   in->data_bits, encoded);

	struct memx_shadow *s = calloc(1, sizeof *s);
	if (!s)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for mem_exact table %u",
				   t->index);
	t->state = s;
	s->slots = slots;
	s->buckets = buckets;
	s->valid = calloc(in->size, 1);
	s->keys = calloc(in->size, t->key_bytes);
	if (!s->valid || !s->keys)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the shadow of mem_exact "
				   "table %u (%u entries)", t->index, in->size);
	return init_stash(dev, t, s);
}

static void release(struct matcha_table *t)
{
	struct memx_shadow *s = shadow(t);
	if (!s)
		return;
	free(s->valid);
	free(s->keys);
	matcha_cuckoo_free(&s->stash);
	free(s);
	t->state = NULL;
}

static void reset(struct matcha_table *t)
{
	memset(shadow(t)->valid, 0, t->info.size);
	shadow(t)->used = 0;
	matcha_cuckoo_reset(&shadow(t)->stash);
}

static uint32_t window_index(const struct matcha_table *t, uint32_t i)
{
	const struct memx_shadow *s = shadow(t);
	if (i >= t->info.size)
		return s->stash.window + (i - t->info.size);
	return (i / s->slots) << MATCHA_HW_MEMX_INDEX_SLOT_BITS | i % s->slots;
}

static uint8_t *key_at(const struct matcha_table *t, uint32_t i)
{
	return shadow(t)->keys + (size_t)i * t->key_bytes;
}

/* The CRC-64/XZ of a canonical key (nothing above key_bits): its bucket is the low bits,
 * as matcha_exact_index() of way 0 gives it, and the stash takes its ways' slots from it. */
static uint64_t key_hash(const struct matcha_table *t, const uint8_t *canon)
{
	return matcha_crc64_xz(canon, t->key_bytes);
}

static uint32_t bucket_of(const struct matcha_table *t, uint64_t hash)
{
	return (uint32_t)hash & (shadow(t)->buckets - 1);
}

/* The entry of the bucket that holds the key, or -1. The unit lets the lowest slot win. */
static int64_t find_in_bucket(const struct matcha_table *t, const uint8_t *canon,
			      uint32_t bucket)
{
	const struct memx_shadow *s = shadow(t);
	for (uint32_t i = bucket * s->slots; i < (bucket + 1) * s->slots; i++)
		if (s->valid[i] && !memcmp(key_at(t, i), canon, t->key_bytes))
			return i;
	return -1;
}

/* The counter index of the key, in its bucket or else in the stash (as the unit looks it
 * up), or -1. */
static int64_t find(const struct matcha_table *t, const uint8_t *canon, uint64_t hash)
{
	const struct memx_shadow *s = shadow(t);
	int64_t at = find_in_bucket(t, canon, bucket_of(t, hash));
	if (at >= 0 || !s->stash.used)
		return at;
	at = matcha_cuckoo_find(t, &s->stash, canon, hash);
	return at < 0 ? -1 : t->info.size + at;
}

/* The entry of a key the call needs in the table; `op` names the call. */
static int present(matcha_dev *dev, struct matcha_table *t, const char *op,
		   const struct matcha_key *k, uint32_t *i)
{
	uint64_t hash = key_hash(t, k->value);
	int64_t at = find(t, k->value, hash);
	if (at < 0)
		return matcha_fail(dev, MATCHA_ENOENT, "%s: the key is not in table %u "
				   "(bucket %u)", op, t->index, (unsigned)bucket_of(t, hash));
	*i = (uint32_t)at;
	return 0;
}

/* One WRITE of entry i in memory. A STATUS error is the memory refusing the write: the
 * shadow is left as it was, since placement depends on it alone and a retry then writes the
 * same entry. */
static int write_entry(matcha_dev *dev, struct matcha_table *t, const char *op, uint32_t i,
		       const struct staged_entry *e)
{
	int rc = matcha_window_write(dev, t, window_index(t, i), e);
	if (rc != MATCHA_EHW)
		return rc;
	char msg[sizeof dev->error];
	memcpy(msg, dev->error, sizeof msg);
	unsigned slots = shadow(t)->slots;
	return matcha_fail(dev, rc, "%s: the write of entry %u of bucket %u of table %u failed "
			   "(%s): the memory holds that entry as before or as written, and a "
			   "retry writes it again", op, (unsigned)(i % slots),
			   (unsigned)(i / slots), t->index, msg);
}

/* Writes key -> (action, data words) into entry i in memory, valid. */
static int write_valid(matcha_dev *dev, struct matcha_table *t, const char *op, uint32_t i,
		       const uint8_t *canon, uint8_t action_id, const uint32_t *data)
{
	uint32_t key_words[MATCHA_HW_WIN_STAGING_WORDS];
	struct staged_entry e = matcha_staged_key(t, canon, action_id, data, key_words);
	return write_entry(dev, t, op, i, &e);
}

/* Where a key the table holds is, for messages. */
static void describe(const struct matcha_table *t, uint32_t i, char *buf, size_t len)
{
	unsigned slots = shadow(t)->slots;
	if (i >= t->info.size)
		snprintf(buf, len, "slot %u of the stash", (unsigned)(i - t->info.size));
	else
		snprintf(buf, len, "entry %u of bucket %u", i % slots, i / slots);
}

static int add(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
	       uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	struct memx_shadow *s = shadow(t);
	uint32_t data_words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc = matcha_value_to_words(dev, t, "action data", data, data_bits, t->info.data_bits,
				       data_words);
	if (rc)
		return rc;
	/* The stash too: a key it holds must not get a second copy in a bucket freed since. */
	uint64_t hash = key_hash(t, k->value);
	uint32_t bucket = bucket_of(t, hash);
	int64_t at = find(t, k->value, hash);
	if (at >= 0) {
		char where[48];
		describe(t, (uint32_t)at, where, sizeof where);
		return matcha_fail(dev, MATCHA_EEXIST, "mem_exact_add: the key is already in "
				   "table %u (%s)", t->index, where);
	}
	for (uint32_t i = bucket * s->slots; i < (bucket + 1) * s->slots; i++) {
		if (s->valid[i])
			continue;
		if ((rc = write_valid(dev, t, "mem_exact_add", i, k->value, action_id, data_words)))
			return rc;
		s->valid[i] = 1;
		s->used++;
		memcpy(key_at(t, i), k->value, t->key_bytes);
		return 0;
	}
	if (!stash_entries(s))
		return matcha_fail(dev, MATCHA_ENOSPC, "mem_exact_add: bucket %u of table %u is "
				   "full: its %u entries hold other keys, and a key can only be in "
				   "its own bucket (%u of %u entries used)", (unsigned)bucket,
				   t->index, s->slots, s->used, t->info.size);
	rc = matcha_cuckoo_add(dev, t, &s->stash, k->value, hash, action_id, data_words);
	if (rc != MATCHA_ENOSPC)
		return rc;
	return matcha_fail(dev, MATCHA_ENOSPC, "mem_exact_add: bucket %u of table %u is full: "
			   "its %u entries hold other keys, and the stash has no room for the "
			   "key: its %u candidate slots are taken and no chain of at most %d moves "
			   "frees one (%u of the stash's %u entries used; %u of %u entries in "
			   "memory)",
			   (unsigned)bucket, t->index, s->slots, s->stash.ways,
			   MATCHA_CUCKOO_MAX_MOVES, s->stash.used, stash_entries(s), s->used,
			   t->info.size);
}

static int modify(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k,
		  uint8_t action_id, const uint8_t *data, unsigned data_bits)
{
	uint32_t i, data_words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;
	if ((rc = matcha_value_to_words(dev, t, "action data", data, data_bits,
					t->info.data_bits, data_words)) ||
	    (rc = present(dev, t, "mem_exact_modify", k, &i)))
		return rc;
	/* The same key in the same entry: the rest of the bucket (or stash) is not touched. */
	if (i >= t->info.size)
		return matcha_cuckoo_modify(dev, t, &shadow(t)->stash, i - t->info.size,
					    action_id, data_words);
	return write_valid(dev, t, "mem_exact_modify", i, k->value, action_id, data_words);
}

static int remove_entry(matcha_dev *dev, struct matcha_table *t, const struct matcha_key *k)
{
	struct staged_entry e = { .flags = 0 };
	uint32_t i;
	int rc;
	if ((rc = present(dev, t, "mem_exact_delete", k, &i)))
		return rc;
	if (i >= t->info.size)
		return matcha_cuckoo_delete(dev, t, &shadow(t)->stash, i - t->info.size);
	if ((rc = write_entry(dev, t, "mem_exact_delete", i, &e)))
		return rc;
	shadow(t)->valid[i] = 0;
	shadow(t)->used--;
	return 0;
}

/*
 * Adoption: READ every entry in memory, then every slot of the stash. A valid key must sit
 * in its own bucket, and only once there: a second copy would answer no lookup (the lowest
 * slot wins), and a modify could not tell which of them to change. The stash is adopted as
 * an exact table is (cuckoo.c: each key in its own slot of its way, once), and a key in the
 * stash must not be in its bucket too: the bucket's copy would answer every lookup, and a
 * modify or delete would change that one alone.
 */
static int adopt(matcha_dev *dev, struct matcha_table *t)
{
	struct memx_shadow *s = shadow(t);
	struct matcha_entry e;
	for (uint32_t i = 0; i < t->info.size; i++) {
		int rc = matcha_window_read(dev, t, window_index(t, i), &e);
		if (rc)
			return rc;
		if (!e.valid)
			continue;
		uint32_t bucket = i / s->slots, own = bucket_of(t, key_hash(t, e.key));
		if (own != bucket)
			return matcha_fail(dev, MATCHA_EHW, "mem_exact table %u: entry %u of "
					   "bucket %u holds a key whose hash puts it in bucket %u",
					   t->index, (unsigned)(i % s->slots), (unsigned)bucket,
					   (unsigned)own);
		int64_t other = find_in_bucket(t, e.key, bucket);
		if (other >= 0)
			return matcha_fail(dev, MATCHA_EHW, "mem_exact table %u: entries %u and %u "
					   "of bucket %u hold the same key", t->index,
					   (unsigned)(other % s->slots), (unsigned)(i % s->slots),
					   (unsigned)bucket);
		s->valid[i] = 1;
		s->used++;
		memcpy(key_at(t, i), e.key, t->key_bytes);
	}
	if (!stash_entries(s))
		return 0;
	int rc = matcha_cuckoo_adopt(dev, t, &s->stash);
	if (rc)
		return rc;
	for (uint32_t slot = 0; slot < stash_entries(s); slot++) {
		if (!s->stash.valid[slot])
			continue;
		uint32_t bucket = bucket_of(t, s->stash.hash[slot]);
		int64_t at = find_in_bucket(t, matcha_cuckoo_key(t, &s->stash, slot), bucket);
		if (at < 0)
			continue;
		return matcha_fail(dev, MATCHA_EHW, "mem_exact table %u: slot %u of the stash "
				   "holds the key of entry %u of bucket %u: a key is in its bucket "
				   "or in the stash, never in both", t->index, (unsigned)slot,
				   (unsigned)(at % s->slots), (unsigned)bucket);
	}
	return 0;
}

static bool shadow_key(const struct matcha_table *t, uint32_t i, struct matcha_key *k)
{
	const struct memx_shadow *s = shadow(t);
	const uint8_t *key;
	if (i < t->info.size && s->valid[i])
		key = key_at(t, i);
	else if (i >= t->info.size && i < t->indexes && s->stash.valid[i - t->info.size])
		key = matcha_cuckoo_key(t, &s->stash, i - t->info.size);
	else
		return false;
	memset(k, 0, sizeof *k);
	memcpy(k->value, key, t->key_bytes);
	return true;
}

const struct matcha_kind_ops matcha_mem_exact_ops = {
	.match_kinds = 1u << MATCHA_MATCH_EXACT,
	.init = init,
	.release = release,
	.reset = reset,
	.adopt = adopt,
	.add = add,
	.modify = modify,
	.remove = remove_entry,
	.find = present,
	.shadow_key = shadow_key,
	.window_index = window_index,
};

/* ------------------------------------------------------------------ the public calls */

/* The table, of this kind, and the caller's key in canonical form. */
static int table_key(matcha_dev *dev, unsigned table, const char *op, const uint8_t *key,
		     unsigned key_bits, struct matcha_table **t, struct matcha_key *k)
{
	memset(k, 0, sizeof *k);
	int rc = matcha_table_for(dev, table, MATCHA_KIND_MEM_EXACT, op, t);
	return rc ? rc : matcha_key_canonical(dev, *t, key, key_bits, k->value);
}

int matcha_mem_exact_add(matcha_dev *dev, unsigned table, const uint8_t *key,
			 unsigned key_bits, uint8_t action_id, const uint8_t *data,
			 unsigned data_bits)
{
	struct matcha_table *t;
	struct matcha_key k;
	int rc = table_key(dev, table, "mem_exact_add", key, key_bits, &t, &k);
	return rc ? rc : add(dev, t, &k, action_id, data, data_bits);
}

int matcha_mem_exact_modify(matcha_dev *dev, unsigned table, const uint8_t *key,
			    unsigned key_bits, uint8_t action_id, const uint8_t *data,
			    unsigned data_bits)
{
	struct matcha_table *t;
	struct matcha_key k;
	int rc = table_key(dev, table, "mem_exact_modify", key, key_bits, &t, &k);
	return rc ? rc : modify(dev, t, &k, action_id, data, data_bits);
}

int matcha_mem_exact_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			    unsigned key_bits)
{
	struct matcha_table *t;
	struct matcha_key k;
	int rc = table_key(dev, table, "mem_exact_delete", key, key_bits, &t, &k);
	return rc ? rc : remove_entry(dev, t, &k);
}

int matcha_mem_exact_lookup_sw(matcha_dev *dev, unsigned table, const uint8_t *key,
			       unsigned key_bits, uint32_t *index)
{
	struct matcha_table *t;
	struct matcha_key k;
	uint32_t i;
	int rc;
	if ((rc = table_key(dev, table, "mem_exact_lookup_sw", key, key_bits, &t, &k)) ||
	    (rc = present(dev, t, "mem_exact_lookup_sw", &k, &i)))
		return rc;
	*index = window_index(t, i);
	return 0;
}

int matcha_mem_exact_read(matcha_dev *dev, unsigned table, uint32_t index,
			  struct matcha_entry *entry)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, MATCHA_KIND_MEM_EXACT, "mem_exact_read", &t);
	if (rc)
		return rc;
	const struct memx_shadow *s = shadow(t);
	unsigned stash = stash_entries(s);
	if (stash && index >= s->stash.window && index - s->stash.window < stash)
		return matcha_window_read(dev, t, index, entry);
	uint32_t bucket = index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS, slot = index & SLOT_MASK;
	if (bucket < s->buckets && slot < s->slots)
		return matcha_window_read(dev, t, index, entry);
	char after[80] = "";
	if (stash)
		snprintf(after, sizeof after, ", and a stash of %u at INDEX 0x%x..0x%x", stash,
			 (unsigned)s->stash.window, (unsigned)(s->stash.window + stash - 1));
	return matcha_fail(dev, MATCHA_EINVAL, "mem_exact_read: index 0x%x (bucket %u, slot %u) "
			   "is out of range: table %u has %u buckets of %u entries%s",
			   (unsigned)index, (unsigned)bucket, (unsigned)slot, table, s->buckets,
			   s->slots, after);
}
