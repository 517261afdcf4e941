/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stateful session table (docs/sessions.md): the hardware learns, updates and ages the
 * sessions; the driver keeps no shadow and reads what it needs from the table itself.
 */
#include <string.h>

#include "kind.h"

#define SESSION_ZONE_BITS 24

/* The window INDEX of a session in memory is bucket << MEMX_INDEX_SLOT_BITS | slot. */
#define SLOT_MASK ((1u << MATCHA_HW_MEMX_INDEX_SLOT_BITS) - 1)
#define MAX_BUCKETS (1ull << (32 - MATCHA_HW_MEMX_INDEX_SLOT_BITS))

static bool in_memory(const struct matcha_table *t)
{
	return t->info.kind == MATCHA_KIND_MEM_SESSION;
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	t->info.ways = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	if (in->ways < 2 || in->ways > 4)
		return matcha_fail(dev, MATCHA_ENODEV, "session table %u: %u ways, the hash takes "
				   "2..4", t->index, in->ways);
	unsigned slots = in->size / in->ways;
	if (in->size % in->ways || slots > 65536 || (slots & (slots - 1)))
		return matcha_fail(dev, MATCHA_ENODEV,
				   "session table %u: %u entries in %u ways is not a power-of-two "
				   "number of slots (at most 65536) per way", t->index, in->size,
				   in->ways);
	if (!in->counters || in->data_bits < MATCHA_HW_SESSION_AGE_BITS + 1)
		return matcha_fail(dev, MATCHA_ENODEV, "session table %u: no per-entry counters or "
				   "no age in its %u data bits", t->index, in->data_bits);
	return 0;
}

static int mem_init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	const struct matcha_table_info *in = &t->info;
	unsigned slots = w[MATCHA_HW_DESC_GEOMETRY_WORD];
	unsigned entry_bytes = w[MATCHA_HW_DESC_EXTRA_WORD];
	t->info.bucket_entries = slots;
	if (slots < 1 || slots > MATCHA_HW_MEMX_MAX_SLOTS)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_session table %u: %u sessions per "
				   "bucket, a bucket holds 1..%u", t->index, slots,
				   MATCHA_HW_MEMX_MAX_SLOTS);
	unsigned buckets = in->size / slots;
	if (in->size % slots || (buckets & (buckets - 1)) || buckets > MAX_BUCKETS)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_session table %u: %u sessions in "
				   "buckets of %u is not a power-of-two number of buckets (at most "
				   "2^%u)", t->index, in->size, slots,
				   32 - MATCHA_HW_MEMX_INDEX_SLOT_BITS);
	if (entry_bytes != MATCHA_HW_MEMS_ENTRY_KEY_BYTE + t->key_bytes ||
	    in->data_bits < MATCHA_HW_SESSION_AGE_BITS + 1)
		return matcha_fail(dev, MATCHA_ENODEV, "mem_session table %u: %u-byte sessions "
				   "with %u-bit keys and %u data bits is not the layout of "
				   "docs/sessions.md", t->index, entry_bytes, in->key_bits,
				   in->data_bits);
	return 0;
}

static int session_table(matcha_dev *dev, unsigned table, const char *op,
			 struct matcha_table **t)
{
	int rc = matcha_table_for(dev, table, 0, op, t);
	if (rc || (*t)->info.kind == MATCHA_KIND_SESSION || in_memory(*t))
		return rc;
	return matcha_fail(dev, MATCHA_EKIND, "%s: table %u is of kind %s, not session or "
			   "mem_session", op, table, matcha_kind_name((*t)->info.kind));
}

static bool index_valid(const struct matcha_table *t, uint32_t index)
{
	if (!in_memory(t))
		return index < t->info.size;
	return (index >> MATCHA_HW_MEMX_INDEX_SLOT_BITS) < t->info.size / t->info.bucket_entries &&
	       (index & SLOT_MASK) < t->info.bucket_entries;
}

static void put_be(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

int matcha_session_key_ipv4(uint32_t zone, uint8_t protocol, uint32_t src_addr,
			    uint16_t src_port, uint32_t dst_addr, uint16_t dst_port,
			    uint8_t key[16], bool *reversed)
{
	if (zone >> SESSION_ZONE_BITS)
		return MATCHA_EINVAL;
	uint64_t src = (uint64_t)src_addr << 16 | src_port;
	uint64_t dst = (uint64_t)dst_addr << 16 | dst_port;
	bool swap = src > dst;
	put_be(key, zone, 3);
	key[3] = protocol;
	put_be(key + 4, swap ? dst : src, 6);
	put_be(key + 10, swap ? src : dst, 6);
	if (reversed)
		*reversed = swap;
	return 0;
}

int matcha_session_read(matcha_dev *dev, unsigned table, uint32_t index,
			struct matcha_session *session)
{
	struct matcha_table *t;
	struct matcha_entry e;
	int rc;
	if ((rc = session_table(dev, table, "session_read", &t)))
		return rc;
	if (!index_valid(t, index))
		return matcha_fail(dev, MATCHA_EINVAL, "session_read: index %u is not an entry of "
				   "the table's %u", (unsigned)index, t->info.size);
	/* One READ latches the entry and its counts together. */
	if ((rc = matcha_window_read(dev, t, index, &e)))
		return rc;
	memset(session, 0, sizeof *session);
	uint32_t data = 0;
	for (unsigned i = 0; i < t->data_bytes && i < 4; i++)
		data |= (uint32_t)e.data[t->data_bytes - 1 - i] << (8 * i);
	session->valid = e.valid;
	session->state = e.action_id;
	session->initiator_high = data & MATCHA_HW_SESSION_INITIATOR_HIGH;
	session->age = data & ((1u << MATCHA_HW_SESSION_AGE_BITS) - 1);
	session->key_bits = e.key_bits;
	memcpy(session->key, e.key, t->key_bytes);
	/* The counter memory keeps what an index's last session left there (CLEAR does not
	 * zero it: docs/sessions.md, "Counters"); an entry without a session has no counts,
	 * and a table in memory keeps none. */
	if (!e.valid || in_memory(t))
		return 0;
	if ((rc = matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_PACKETS, &session->packets)))
		return rc;
	return matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_BYTES, &session->bytes);
}

int matcha_session_find(matcha_dev *dev, unsigned table, const uint8_t *key,
			unsigned key_bits, uint32_t *index)
{
	struct matcha_table *t;
	uint8_t canon[MATCHA_MAX_KEY_BYTES];
	struct matcha_entry e;
	int rc;
	if ((rc = session_table(dev, table, "session_find", &t)) ||
	    (rc = matcha_key_canonical(dev, t, key, key_bits, canon)))
		return rc;
	/* On chip: one slot in each way; in memory: every slot of the key's bucket. */
	bool mem = in_memory(t);
	unsigned n = mem ? t->info.bucket_entries : t->info.ways;
	unsigned slots = mem ? t->info.size / n : t->info.size / t->info.ways;
	uint32_t bucket = mem ? matcha_session_index(canon, t->info.key_bits, 0, slots) : 0;
	for (unsigned w = 0; w < n; w++) {
		uint32_t i = mem ? bucket << MATCHA_HW_MEMX_INDEX_SLOT_BITS | w
				 : w * slots + matcha_session_index(canon, t->info.key_bits, w, slots);
		if ((rc = matcha_window_read(dev, t, i, &e)))
			return rc;
		if (e.valid && !memcmp(e.key, canon, t->key_bytes)) {
			*index = i;
			return 0;
		}
	}
	return matcha_fail(dev, MATCHA_ENOENT, "session_find: table %u has no such session",
			   table);
}

int matcha_session_delete(matcha_dev *dev, unsigned table, const uint8_t *key,
			  unsigned key_bits)
{
	struct matcha_table *t;
	uint32_t index, words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;
	if ((rc = session_table(dev, table, "session_delete", &t)) ||
	    (rc = matcha_session_find(dev, table, key, key_bits, &index)) ||
	    (rc = matcha_value_to_words(dev, t, "key", key, key_bits, t->info.key_bits, words)))
		return rc;
	/* WRITE is compare-and-delete: the entry goes only if it still holds this key. */
	struct staged_entry staged = { .flags = 0, .key = words };
	return matcha_window_write(dev, t, index, &staged);
}

int matcha_session_flush(matcha_dev *dev, unsigned table)
{
	struct matcha_table *t;
	int rc = session_table(dev, table, "session_flush", &t);
	return rc ? rc : matcha_table_clear(dev, table);
}

int matcha_session_stats(matcha_dev *dev, unsigned table, struct matcha_session_stats *stats)
{
	struct matcha_table *t;
	uint32_t base;
	int rc;
	if ((rc = session_table(dev, table, "session_stats", &t)))
		return rc;
	base = t->info.base;
	if ((rc = matcha_reg_read(dev, base + MATCHA_HW_SESSION_OCCUPANCY, &stats->occupancy)) ||
	    (rc = matcha_read_u64(dev, base + MATCHA_HW_SESSION_LEARNED, &stats->learned)) ||
	    (rc = matcha_read_u64(dev, base + MATCHA_HW_SESSION_INSERT_FAILED, &stats->insert_failed)) ||
	    (rc = matcha_read_u64(dev, base + MATCHA_HW_SESSION_AGED, &stats->aged)))
		return rc;
	stats->late = stats->busy = 0;
	if (in_memory(t) &&
	    ((rc = matcha_read_u64(dev, base + MATCHA_HW_MEMS_WIN_LATE, &stats->late)) ||
	     (rc = matcha_read_u64(dev, base + MATCHA_HW_MEMS_WIN_BUSY, &stats->busy))))
		return rc;
	return matcha_table_counters(dev, table, &stats->hits, &stats->misses);
}

static int check_state(matcha_dev *dev, const char *op, unsigned state)
{
	if (state < MATCHA_SESSION_SYN_SENT || state >= MATCHA_SESSION_STATES)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: %u is not a session state (%d..%d)", op,
				   state, MATCHA_SESSION_SYN_SENT, MATCHA_SESSION_STATES - 1);
	return 0;
}

int matcha_session_set_timeout(matcha_dev *dev, unsigned table, unsigned state, uint32_t ticks)
{
	struct matcha_table *t;
	int rc;
	if ((rc = session_table(dev, table, "session_set_timeout", &t)) ||
	    (rc = check_state(dev, "session_set_timeout", state)))
		return rc;
	if (ticks < 1 || ticks > MATCHA_HW_SESSION_AGE_MAX)
		return matcha_fail(dev, MATCHA_EINVAL, "session_set_timeout: %u ticks is not in "
				   "1..%u", (unsigned)ticks, MATCHA_HW_SESSION_AGE_MAX);
	return matcha_reg_write(dev, t->info.base + SESSION_TIMEOUT(state), ticks);
}

int matcha_session_get_timeout(matcha_dev *dev, unsigned table, unsigned state, uint32_t *ticks)
{
	struct matcha_table *t;
	int rc;
	if ((rc = session_table(dev, table, "session_get_timeout", &t)) ||
	    (rc = check_state(dev, "session_get_timeout", state)))
		return rc;
	return matcha_reg_read(dev, t->info.base + SESSION_TIMEOUT(state), ticks);
}

int matcha_session_set_tick(matcha_dev *dev, unsigned table, uint32_t clocks)
{
	struct matcha_table *t;
	int rc;
	if ((rc = session_table(dev, table, "session_set_tick", &t)))
		return rc;
	if (clocks < 1)
		return matcha_fail(dev, MATCHA_EINVAL, "session_set_tick: a tick is at least 1 clock");
	return matcha_reg_write(dev, t->info.base + MATCHA_HW_SESSION_TICK, clocks);
}

/* The scanner of a table in memory reads a bucket every SCAN_INTERVAL clocks without a
 * packet; an on-chip table's has no such register (it scans a slot in every such clock). */
static int mem_session_table(matcha_dev *dev, unsigned table, const char *op,
			     struct matcha_table **t)
{
	int rc = session_table(dev, table, op, t);
	if (rc || in_memory(*t))
		return rc;
	return matcha_fail(dev, MATCHA_EKIND, "%s: table %u is of kind session, on chip: only a "
			   "mem_session table has a scan interval", op, table);
}

int matcha_session_set_scan_interval(matcha_dev *dev, unsigned table, uint32_t clocks)
{
	struct matcha_table *t;
	int rc;
	if ((rc = mem_session_table(dev, table, "session_set_scan_interval", &t)))
		return rc;
	if (clocks > MATCHA_HW_MEMS_SCAN_INTERVAL_MAX)
		return matcha_fail(dev, MATCHA_EINVAL, "session_set_scan_interval: %u clocks is more "
				   "than the register's %u", clocks, MATCHA_HW_MEMS_SCAN_INTERVAL_MAX);
	return matcha_reg_write(dev, t->info.base + MATCHA_HW_MEMS_WIN_SCAN_INTERVAL, clocks);
}

int matcha_session_get_scan_interval(matcha_dev *dev, unsigned table, uint32_t *clocks)
{
	struct matcha_table *t;
	int rc = mem_session_table(dev, table, "session_get_scan_interval", &t);
	return rc ? rc : matcha_reg_read(dev, t->info.base + MATCHA_HW_MEMS_WIN_SCAN_INTERVAL, clocks);
}

int matcha_session_now(matcha_dev *dev, unsigned table, uint32_t *tick)
{
	struct matcha_table *t;
	int rc = session_table(dev, table, "session_now", &t);
	return rc ? rc : matcha_reg_read(dev, t->info.base + MATCHA_HW_SESSION_NOW, tick);
}

int matcha_session_set_policy(matcha_dev *dev, unsigned table, enum matcha_session_policy p)
{
	struct matcha_table *t;
	int rc;
	if ((rc = session_table(dev, table, "session_set_policy", &t)))
		return rc;
	if (p != MATCHA_SESSION_PUNT && p != MATCHA_SESSION_DROP)
		return matcha_fail(dev, MATCHA_EINVAL, "session_set_policy: %d is neither punt nor "
				   "drop", (int)p);
	return matcha_reg_write(dev, t->info.base + MATCHA_HW_SESSION_CONTROL, (uint32_t)p);
}

int matcha_session_get_policy(matcha_dev *dev, unsigned table, enum matcha_session_policy *p)
{
	struct matcha_table *t;
	uint32_t v;
	int rc;
	if ((rc = session_table(dev, table, "session_get_policy", &t)) ||
	    (rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_SESSION_CONTROL, &v)))
		return rc;
	*p = v & 1 ? MATCHA_SESSION_DROP : MATCHA_SESSION_PUNT;
	return 0;
}

/* No shadow and no entries of the driver's: a session table's contents belong to the data
 * path, which learns, updates and ages them, so adoption leaves them as they are. */
const struct matcha_kind_ops matcha_session_ops = {
	.init = init,
};

const struct matcha_kind_ops matcha_mem_session_ops = {
	.init = mem_init,
};
