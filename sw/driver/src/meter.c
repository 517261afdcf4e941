/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Meters (docs/tables.md, "Meters"): P4Runtime MeterConfig values to the hardware's units
 * and back.
 *
 * The hardware counts units: a byte (or a packet) costs 2^shift units, rates are units per
 * tick (a tick is tick_clocks clocks) and bursts are units. The driver picks, per meter, the
 * largest shift for which both bursts and both rates still fit their registers, so a rate
 * gets as many significant bits as the bursts leave room for. Scaling every quantity by
 * 2^shift changes nothing in the RFCs' rules, only the precision of the rates.
 */
#include <stdlib.h>
#include <string.h>

#include "kind.h"

typedef unsigned __int128 u128;

/* A non-zero rate must come out within 1/PRECISION of what was asked. */
#define PRECISION 1000

static unsigned bit_length(u128 v)
{
	unsigned n = 0;
	for (; v; v >>= 1)
		n++;
	return n;
}

/*
 * ceil(per_s * tick_clocks * 2^shift / hz), or UINT64_MAX if that exceeds 64 bits. Rounded
 * up, so that the buckets fill at least at the configured rate: traffic that conforms to
 * the configuration is never marked down for the conversion's sake.
 */
static uint64_t units_per_tick(uint64_t per_s, unsigned shift, uint64_t tick, uint64_t hz)
{
	u128 q = (u128)per_s * tick;
	if (q && bit_length(q) + shift > 126)
		return UINT64_MAX;
	u128 r = ((q << shift) + hz - 1) / hz;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* round(units * hz / (tick_clocks * 2^shift)): a rate register back in units per second. */
static uint64_t per_second(uint64_t units, unsigned shift, uint64_t tick, uint64_t hz)
{
	u128 den = (u128)tick << shift;
	u128 r = ((u128)units * hz + den / 2) / den;
	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

/* Whether `units` per tick is within 1/PRECISION of per_s at `shift`. */
static bool precise(uint64_t per_s, uint64_t units, unsigned shift, uint64_t tick, uint64_t hz)
{
	u128 want = ((u128)per_s * tick) << shift; /* units * hz, ideally */
	u128 got = (u128)units * hz;
	u128 diff = got > want ? got - want : want - got;
	return diff * PRECISION <= want;
}

int matcha_set_clock_hz(matcha_dev *dev, uint64_t hz)
{
	if (!hz)
		return matcha_fail(dev, MATCHA_EINVAL, "set_clock_hz: the clock frequency is 0");
	dev->clock_hz = hz;
	return 0;
}

/* A meter array's register widths (descriptor word 5) and tick (word 7). */
struct meter_geometry {
	unsigned rate_bits, level_bits, time_bits, tick_clocks;
};

static const struct meter_geometry *geometry_of(const struct matcha_table *t)
{
	return t->state;
}

static int init(matcha_dev *dev, struct matcha_table *t, const uint32_t *w)
{
	uint32_t geometry = w[MATCHA_HW_DESC_GEOMETRY_WORD], tick_clocks = w[MATCHA_HW_DESC_EXTRA_WORD];
	struct meter_geometry *g = calloc(1, sizeof *g);
	if (!g)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for meter array %u", t->index);
	t->state = g;
	g->rate_bits = METER_GEOMETRY(geometry, RATE);
	g->level_bits = METER_GEOMETRY(geometry, LEVEL);
	g->time_bits = METER_GEOMETRY(geometry, TIME);
	g->tick_clocks = tick_clocks;
	if (g->rate_bits < 1 || g->rate_bits > 32 || g->level_bits < 8 || g->level_bits > 60 ||
	    g->time_bits < 1 || g->time_bits > 32)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: meter geometry 0x%08x (rate %u, "
				   "level %u, time %u bits) is not usable", t->index,
				   (unsigned)geometry, g->rate_bits, g->level_bits, g->time_bits);
	if (tick_clocks < 1 || tick_clocks > 65536)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: meter tick of %u clocks is not "
				   "in 1..65536", t->index, (unsigned)tick_clocks);
	if (t->info.data_bits < 32 * MATCHA_HW_METER_WORDS)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: meter data is %u bits, less than "
				   "the %d the registers need", t->index, t->info.data_bits,
				   32 * MATCHA_HW_METER_WORDS);
	return 0;
}

/* The meter table `table` if meter `index` is in it; `need_clock`: the clock must be set. */
static int meter_table(matcha_dev *dev, unsigned table, uint32_t index, const char *op,
		       bool need_clock, struct matcha_table **t)
{
	int rc = matcha_table_for(dev, table, MATCHA_KIND_METER, op, t);
	if (rc)
		return rc;
	if (index >= (*t)->info.size)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: meter %u is out of range (table %u has "
				   "%u meters)", op, (unsigned)index, table, (*t)->info.size);
	if (!need_clock)
		return 0;
	if (!dev->clock_hz)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: the clock frequency is not known: call "
				   "matcha_set_clock_hz first", op);
	return 0;
}

/* The RFCs' own rules on a configuration. */
static int check_config(matcha_dev *dev, const struct matcha_meter_config *cfg)
{
	unsigned known = MATCHA_METER_TWO_RATE | MATCHA_METER_COLOR_AWARE | MATCHA_METER_PACKETS;
	if (cfg->flags & ~known)
		return matcha_fail(dev, MATCHA_EINVAL, "meter_set: unknown flags 0x%x",
				   cfg->flags & ~known);
	if (cfg->flags & MATCHA_METER_TWO_RATE) {
		if (cfg->pir < cfg->cir)
			return matcha_fail(dev, MATCHA_EINVAL, "meter_set: PIR %llu is below CIR "
					   "%llu (RFC 2698: PIR >= CIR)",
					   (unsigned long long)cfg->pir,
					   (unsigned long long)cfg->cir);
		if (!cfg->cburst || !cfg->pburst)
			return matcha_fail(dev, MATCHA_EINVAL, "meter_set: a two-rate meter needs CBS "
					   "and PBS above 0 (RFC 2698), got %llu and %llu",
					   (unsigned long long)cfg->cburst,
					   (unsigned long long)cfg->pburst);
	} else {
		if (cfg->pir)
			return matcha_fail(dev, MATCHA_EINVAL, "meter_set: a single-rate meter has no "
					   "PIR (its excess bucket fills at CIR): pir must be 0, "
					   "got %llu", (unsigned long long)cfg->pir);
		if (!cfg->cburst && !cfg->pburst)
			return matcha_fail(dev, MATCHA_EINVAL, "meter_set: a single-rate meter needs "
					   "CBS or EBS above 0 (RFC 2697)");
	}
	return 0;
}

int matcha_meter_set(matcha_dev *dev, unsigned table, uint32_t index,
		     const struct matcha_meter_config *cfg)
{
	struct matcha_table *t;
	uint32_t words[MATCHA_HW_METER_WRITE_WORDS] = { 0 };
	int rc = meter_table(dev, table, index, "meter_set", cfg != NULL, &t);
	if (rc)
		return rc;
	if (!cfg) {
		struct staged_entry off = { .flags = 0, .data = words,
					    .data_words = MATCHA_HW_METER_WRITE_WORDS };
		return matcha_window_write(dev, t, index, &off);
	}
	if ((rc = check_config(dev, cfg)))
		return rc;

	const char *unit = cfg->flags & MATCHA_METER_PACKETS ? "packets" : "bytes";
	uint64_t hz = dev->clock_hz, tick = geometry_of(t)->tick_clocks;
	uint64_t max_level = (1ull << geometry_of(t)->level_bits) - 1;
	uint64_t max_rate = (1ull << geometry_of(t)->rate_bits) - 1;
	uint64_t cir = 0, pir = 0;
	int shift;
	for (shift = (int)METER_SHIFT_MAX; shift >= 0; shift--) {
		if (cfg->cburst > max_level >> shift || cfg->pburst > max_level >> shift)
			continue;
		cir = units_per_tick(cfg->cir, shift, tick, hz);
		pir = units_per_tick(cfg->pir, shift, tick, hz);
		if (cir <= max_rate && pir <= max_rate)
			break;
	}
	if (shift < 0) {
		if (cfg->cburst > max_level || cfg->pburst > max_level)
			return matcha_fail(dev, MATCHA_E2BIG, "meter_set: burst %llu %s exceeds the "
					   "largest the meter holds, %llu",
					   (unsigned long long)(cfg->cburst > max_level ? cfg->cburst
											 : cfg->pburst),
					   unit, (unsigned long long)max_level);
		/* The largest rate taken: the full rate register at shift 0, rounded down. */
		u128 largest = (u128)max_rate * hz / tick;
		return matcha_fail(dev, MATCHA_E2BIG, "meter_set: rate %llu %s/s exceeds the "
				   "largest the meter holds at %llu Hz, %llu %s/s",
				   (unsigned long long)(units_per_tick(cfg->cir, 0, tick, hz) >
							max_rate ? cfg->cir : cfg->pir),
				   unit, (unsigned long long)hz,
				   (unsigned long long)(largest > UINT64_MAX ? UINT64_MAX : largest),
				   unit);
	}
	const uint64_t rates[2] = { cfg->cir, cfg->pir };
	const uint64_t units[2] = { cir, pir };
	for (unsigned i = 0; i < 2; i++) {
		if (rates[i] && !precise(rates[i], units[i], (unsigned)shift, tick, hz))
			return matcha_fail(dev, MATCHA_EINVAL, "meter_set: %s %llu %s/s with bursts "
					   "of %llu and %llu %s cannot be held within 0.1 %% (it "
					   "would be %llu %s/s): the buckets would take too long to "
					   "fill; raise the rate or lower the bursts", i ? "PIR" : "CIR",
					   (unsigned long long)rates[i], unit,
					   (unsigned long long)cfg->cburst,
					   (unsigned long long)cfg->pburst, unit,
					   (unsigned long long)per_second(units[i], (unsigned)shift,
									  tick, hz),
					   unit);
	}

	uint64_t cbs = cfg->cburst << shift, pbs = cfg->pburst << shift;
	words[MATCHA_HW_METER_MODE_WORD] =
		(cfg->flags & MATCHA_METER_TWO_RATE ? MATCHA_HW_METER_MODE_TWO_RATE : 0) |
		(cfg->flags & MATCHA_METER_COLOR_AWARE ? MATCHA_HW_METER_MODE_AWARE : 0) |
		(cfg->flags & MATCHA_METER_PACKETS ? MATCHA_HW_METER_MODE_PACKETS : 0) |
		(uint32_t)shift << MATCHA_HW_METER_MODE_SHIFT_LSB;
	words[MATCHA_HW_METER_CIR_WORD] = (uint32_t)cir;
	words[MATCHA_HW_METER_PIR_WORD] = (uint32_t)pir;
	words[MATCHA_HW_METER_CBS_WORD] = (uint32_t)cbs;
	words[MATCHA_HW_METER_CBS_WORD + 1] = (uint32_t)(cbs >> 32);
	words[MATCHA_HW_METER_PBS_WORD] = (uint32_t)pbs;
	words[MATCHA_HW_METER_PBS_WORD + 1] = (uint32_t)(pbs >> 32);
	struct staged_entry e = { .flags = MATCHA_HW_FLAGS_VALID, .data = words,
				  .data_words = MATCHA_HW_METER_WRITE_WORDS };
	return matcha_window_write(dev, t, index, &e);
}

int matcha_meter_get(matcha_dev *dev, unsigned table, uint32_t index,
		     struct matcha_meter_config *cfg, uint64_t *committed_tokens,
		     uint64_t *peak_tokens)
{
	struct matcha_table *t;
	uint32_t flags, w[MATCHA_HW_METER_WORDS];
	struct matcha_meter_config got = { 0 };
	uint64_t tokens[2] = { 0, 0 };
	int rc = meter_table(dev, table, index, "meter_get", true, &t);
	if (rc || (rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, index)) ||
	    (rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_FLAGS, &flags)))
		return rc;
	for (unsigned i = 0; i < MATCHA_HW_METER_WORDS; i++)
		if ((rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_DATA + 4 * i, &w[i])))
			return rc;
	bool valid = flags & MATCHA_HW_FLAGS_VALID;
	if (valid) {
		uint32_t mode = w[MATCHA_HW_METER_MODE_WORD];
		unsigned shift = METER_MODE_SHIFT(mode);
		uint64_t hz = dev->clock_hz, tick = geometry_of(t)->tick_clocks;
		got.flags = (mode & MATCHA_HW_METER_MODE_TWO_RATE ? MATCHA_METER_TWO_RATE : 0) |
			    (mode & MATCHA_HW_METER_MODE_AWARE ? MATCHA_METER_COLOR_AWARE : 0) |
			    (mode & MATCHA_HW_METER_MODE_PACKETS ? MATCHA_METER_PACKETS : 0);
		got.cir = per_second(w[MATCHA_HW_METER_CIR_WORD], shift, tick, hz);
		got.pir = got.flags & MATCHA_METER_TWO_RATE ?
				  per_second(w[MATCHA_HW_METER_PIR_WORD], shift, tick, hz) : 0;
		got.cburst = WORDS64(w, MATCHA_HW_METER_CBS_WORD) >> shift;
		got.pburst = WORDS64(w, MATCHA_HW_METER_PBS_WORD) >> shift;
		tokens[0] = WORDS64(w, MATCHA_HW_METER_CLEVEL_WORD) >> shift;
		tokens[1] = WORDS64(w, MATCHA_HW_METER_PLEVEL_WORD) >> shift;
	}
	if (cfg)
		*cfg = got;
	if (committed_tokens)
		*committed_tokens = tokens[0];
	if (peak_tokens)
		*peak_tokens = tokens[1];
	if (!valid)
		return matcha_fail(dev, MATCHA_ENOENT, "meter_get: meter %u of table %u is not "
				   "configured", (unsigned)index, table);
	return 0;
}

static void release(struct matcha_table *t)
{
	free(t->state);
	t->state = NULL;
}

/* No shadow and no entries: matcha_meter_set and matcha_meter_get use the window directly,
 * and adoption leaves the meters as they are. */
const struct matcha_kind_ops matcha_meter_ops = {
	.init = init,
	.release = release,
};
