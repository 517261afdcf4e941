/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Meters: P4Runtime MeterConfig values to the hardware's units (docs/tables.md, "Meters")
 * and back, the RFCs' rules on a configuration, the range of representable rates, errors.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"

#define METER 4     /* 256 meters, one tick per clock */
#define METER4 5    /* 64 meters, one tick every 4 clocks, 24-bit rates */
#define EXACT 0
#define HZ 250000000ull
#define GEOMETRY FAKE_METER_GEOMETRY
/* The meter's DATA words by name. */
#define MODE MATCHA_HW_METER_MODE_WORD
#define CIR MATCHA_HW_METER_CIR_WORD
#define PIR MATCHA_HW_METER_PIR_WORD
#define CBS MATCHA_HW_METER_CBS_WORD
#define PBS MATCHA_HW_METER_PBS_WORD
#define CLEVEL MATCHA_HW_METER_CLEVEL_WORD
#define PLEVEL MATCHA_HW_METER_PLEVEL_WORD
#define SHIFT(s) ((uint32_t)(s) << MATCHA_HW_METER_MODE_SHIFT_LSB)

static struct fake_cfg meter_cfg(void)
{
	struct fake_cfg c = fake_standard_cfg();
	c.ntables = 6;
	c.table[METER] = (struct fake_table_cfg){ .kind = MATCHA_KIND_METER, .key_bits = 8,
						  .size = 256, .data_bits = 384,
						  .ways_or_levels = GEOMETRY(32, 40, 32),
						  .latency = 6, .extra = 1 };
	c.table[METER4] = (struct fake_table_cfg){ .kind = MATCHA_KIND_METER, .key_bits = 6,
						   .size = 64, .data_bits = 384,
						   .ways_or_levels = GEOMETRY(24, 40, 16),
						   .latency = 6, .extra = 4 };
	return c;
}

static uint64_t word_pair(const uint32_t *w) { return (uint64_t)w[1] << 32 | w[0]; }

void test_meter_discovery(void)
{
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_table_info in;
	CHECK_OK(dev, matcha_table_info(dev, METER, &in));
	CHECK(in.kind == MATCHA_KIND_METER && in.size == 256 && in.key_bits == 8 &&
	      in.data_bits == 384 && in.latency == 6 && in.ways == 0 && in.levels == 0);
	/* The meter calls want a meter table, and the table calls take one. */
	struct matcha_meter_config m = { .cir = 1000, .cburst = 1500, .pburst = 1500 };
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));
	CHECK_RC(dev, matcha_meter_set(dev, EXACT, 0, &m), MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "table 0 is of kind exact, not meter"));
	uint8_t key[6] = { 0 };
	CHECK_RC(dev, matcha_exact_add(dev, METER, key, 8, 0, NULL, 0), MATCHA_EKIND);
	uint64_t hits, misses;
	CHECK_OK(dev, matcha_table_counters(dev, METER, &hits, &misses));
	matcha_close(dev);
	fake_free(fd);

	/* Geometry the driver cannot use. */
	const uint32_t bad[] = { GEOMETRY(0, 40, 32), GEOMETRY(33, 40, 32), GEOMETRY(32, 7, 32),
				 GEOMETRY(32, 61, 32), GEOMETRY(32, 40, 0), GEOMETRY(32, 40, 33) };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cfg = meter_cfg();
		cfg.table[METER].ways_or_levels = bad[i];
		fd = fake_new(&cfg);
		CHECK_MSG(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV, "geometry 0x%x",
			  (unsigned)bad[i]);
		CHECK(strstr(matcha_last_error(dev), "table 4: meter geometry"));
		matcha_close(dev);
		fake_free(fd);
	}
	cfg = meter_cfg();
	cfg.table[METER].extra = 0;
	fd = fake_new(&cfg);
	CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
	CHECK(strstr(matcha_last_error(dev), "meter tick of 0 clocks"));
	matcha_close(dev);
	fake_free(fd);
	cfg = meter_cfg();
	cfg.table[METER].data_bits = 352;
	fd = fake_new(&cfg);
	CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
	matcha_close(dev);
	fake_free(fd);
}

void test_meter_units(void)
{
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));

	/* 1 Gb/s is 0.5 byte per 4 ns tick. EBS 20000 bytes < 2^15 leaves 25 bits of shift in
	 * 40-bit levels: 20000 << 25 < 2^40 <= 20000 << 26. CIR: 0.5 << 25 = 2^24 units/tick. */
	struct matcha_meter_config m = { .cir = 125000000, .cburst = 10000, .pburst = 20000 };
	CHECK_OK(dev, matcha_meter_set(dev, METER, 17, &m));
	const struct fake_entry *e = &fd->table[METER].entries[17];
	CHECK(e->flags == 1);
	CHECK_MSG(e->data[MODE] == SHIFT(25), "mode word 0x%x", (unsigned)e->data[MODE]);
	CHECK(e->data[CIR] == 1u << 24 && e->data[PIR] == 0);
	CHECK(word_pair(&e->data[CBS]) == 10000ull << 25 && word_pair(&e->data[PBS]) == 20000ull << 25);

	/* Two-rate, colour-aware, in packets: 1000 and 3000 packets/s, bursts 10 and 30. With
	 * 4-clock ticks a packet/s is 1.6e-5 per tick; 30 << 35 < 2^40, and 3000/s << 35 ticks
	 * is 1649267 units, within 24 bits. */
	m = (struct matcha_meter_config){ .flags = MATCHA_METER_TWO_RATE | MATCHA_METER_COLOR_AWARE |
					  MATCHA_METER_PACKETS,
					  .cir = 1000, .cburst = 10, .pir = 3000, .pburst = 30 };
	CHECK_OK(dev, matcha_meter_set(dev, METER4, 63, &m));
	e = &fd->table[METER4].entries[63];
	CHECK_MSG(e->data[MODE] == (MATCHA_HW_METER_MODE_TWO_RATE | MATCHA_HW_METER_MODE_AWARE |
				    MATCHA_HW_METER_MODE_PACKETS | SHIFT(35)),
		  "mode word 0x%x", (unsigned)e->data[MODE]);
	/* 1000 * 4 * 2^35 / 250e6 = 549755.8 and 3 times that, 1649267.4, rounded up. */
	CHECK_MSG(e->data[CIR] == 549756 && e->data[PIR] == 1649268, "rates %u %u",
		  (unsigned)e->data[CIR], (unsigned)e->data[PIR]);
	CHECK(word_pair(&e->data[CBS]) == 10ull << 35 && word_pair(&e->data[PBS]) == 30ull << 35);

	/* The worked example of docs/tables.md ("Rate conversion and how it differs from
	 * BMv2") and of tb/model/test_meter.py: PBS 1500 < 2^11 leaves shift 29; CIR 0.002 and
	 * PIR 0.006 bytes per tick, 1073741.824 and 3221225.472 units, rounded up. */
	m = (struct matcha_meter_config){ .flags = MATCHA_METER_TWO_RATE, .cir = 500000,
					  .cburst = 1000, .pir = 1500000, .pburst = 1500 };
	CHECK_OK(dev, matcha_meter_set(dev, METER, 18, &m));
	e = &fd->table[METER].entries[18];
	CHECK_MSG(e->data[MODE] == (MATCHA_HW_METER_MODE_TWO_RATE | SHIFT(29)) &&
			  e->data[CIR] == 1073742 && e->data[PIR] == 3221226,
		  "mode 0x%x, rates %u %u", (unsigned)e->data[MODE], (unsigned)e->data[CIR],
		  (unsigned)e->data[PIR]);

	/* Unconfigure: FLAGS.valid clear. */
	unsigned long writes = fd->writes;
	CHECK_OK(dev, matcha_meter_set(dev, METER, 17, NULL));
	CHECK(fd->table[METER].entries[17].flags == 0 && fd->writes > writes);
	matcha_close(dev);
	fake_free(fd);
}

void test_meter_get(void)
{
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));
	struct matcha_meter_config m = { .flags = MATCHA_METER_TWO_RATE, .cir = 125000000,
					 .cburst = 10000, .pir = 250000000, .pburst = 20000 }, got;
	uint64_t c, p;
	CHECK_OK(dev, matcha_meter_set(dev, METER, 3, &m));
	CHECK_OK(dev, matcha_meter_get(dev, METER, 3, &got, &c, &p));
	CHECK(got.flags == m.flags && got.cir == m.cir && got.cburst == m.cburst &&
	      got.pir == m.pir && got.pburst == m.pburst);
	CHECK(c == 10000 && p == 20000); /* a WRITE fills both buckets */
	/* Levels come back in whole bytes, rounded down: 1234.99 bytes and 0.5 byte. */
	struct fake_entry *e = &fd->table[METER].entries[3];
	unsigned shift = (e->data[MODE] >> MATCHA_HW_METER_MODE_SHIFT_LSB) &
			 ((1u << MATCHA_HW_METER_MODE_SHIFT_BITS) - 1);
	uint64_t lc = (1235ull << shift) - 1, lp = 1ull << (shift - 1);
	e->data[CLEVEL] = (uint32_t)lc, e->data[CLEVEL + 1] = (uint32_t)(lc >> 32);
	e->data[PLEVEL] = (uint32_t)lp, e->data[PLEVEL + 1] = (uint32_t)(lp >> 32);
	CHECK_OK(dev, matcha_meter_get(dev, METER, 3, NULL, &c, &p));
	CHECK_MSG(c == 1234 && p == 0, "tokens %llu %llu", (unsigned long long)c,
		  (unsigned long long)p);
	/* A rate that is not a whole number of units comes back as the hardware holds it. */
	m = (struct matcha_meter_config){ .cir = 1000003, .cburst = 3000, .pburst = 0 };
	CHECK_OK(dev, matcha_meter_set(dev, METER, 4, &m));
	CHECK_OK(dev, matcha_meter_get(dev, METER, 4, &got, NULL, NULL));
	CHECK(got.cburst == 3000 && got.pburst == 0 && got.pir == 0 && got.flags == 0);
	CHECK_MSG(got.cir >= 1000003 - 1 && got.cir <= 1000003 + 1, "cir %llu",
		  (unsigned long long)got.cir);

	/* Unconfigured: ENOENT, everything zeroed. */
	CHECK_OK(dev, matcha_meter_set(dev, METER, 3, NULL));
	got.cir = c = p = 99;
	CHECK_RC(dev, matcha_meter_get(dev, METER, 3, &got, &c, &p), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(dev), "meter 3 of table 4 is not configured"));
	CHECK(got.cir == 0 && got.flags == 0 && c == 0 && p == 0);
	CHECK_RC(dev, matcha_meter_get(dev, METER, 200, &got, &c, &p), MATCHA_ENOENT);
	/* CLEAR unconfigures every meter. */
	CHECK_OK(dev, matcha_table_clear(dev, METER));
	CHECK_RC(dev, matcha_meter_get(dev, METER, 4, &got, &c, &p), MATCHA_ENOENT);
	matcha_close(dev);
	fake_free(fd);
}

/* From 1 Mb/s to 100 Gb/s at 250 MHz, and 1 to 150M packets/s, with bursts from one packet
 * to 100 ms of the rate: set, read back within 0.1 %. */
void test_meter_range(void)
{
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));
	struct rng r = rng_for_test();
	const uint64_t bps[] = { 1000000, 1500000, 10000000, 64000000, 100000000, 1000000000,
				 2500000000ull, 10000000000ull, 25000000000ull, 40000000000ull,
				 100000000000ull };
	for (unsigned table = METER; table <= METER4; table++) {
		for (unsigned i = 0; i < sizeof bps / sizeof bps[0]; i++) {
			for (unsigned k = 0; k < 4; k++) {
				uint64_t cir = bps[i] / 8, pir = cir + cir / (1 + k);
				/* bursts: 1500 bytes, 1 ms, 10 ms, 100 ms of the rate */
				uint64_t burst = k == 0 ? 1500 : cir / (k == 1 ? 1000 : k == 2 ? 100 : 10);
				struct matcha_meter_config m = {
					.flags = (k & 1) ? MATCHA_METER_TWO_RATE : 0, .cir = cir,
					.cburst = burst, .pir = (k & 1) ? pir : 0,
					.pburst = burst + rng_below(&r, 9000) };
				struct matcha_meter_config got;
				uint32_t index = rng_below(&r, 64);
				CHECK_RC(dev, matcha_meter_set(dev, table, index, &m), 0);
				CHECK_OK(dev, matcha_meter_get(dev, table, index, &got, NULL, NULL));
				CHECK_MSG(got.cburst == m.cburst && got.pburst == m.pburst &&
					  got.flags == m.flags, "bursts %llu %llu",
					  (unsigned long long)got.cburst,
					  (unsigned long long)got.pburst);
				double ec = (double)got.cir / (double)cir - 1;
				double ep = m.pir ? (double)got.pir / (double)m.pir - 1 : 0;
				CHECK_MSG(ec < 1e-3 && ec > -1e-3 && ep < 1e-3 && ep > -1e-3,
					  "%llu B/s (burst %llu): got %llu, %llu", (unsigned long long)cir,
					  (unsigned long long)burst, (unsigned long long)got.cir,
					  (unsigned long long)got.pir);
			}
		}
		const uint64_t pps[] = { 1, 10, 100, 10000, 1000000, 14880952, 148809523 };
		for (unsigned i = 0; i < sizeof pps / sizeof pps[0]; i++) {
			struct matcha_meter_config m = { .flags = MATCHA_METER_PACKETS, .cir = pps[i],
							 .cburst = 1 + pps[i] / 100, .pburst = 1 };
			struct matcha_meter_config got;
			CHECK_OK(dev, matcha_meter_set(dev, table, 1, &m));
			CHECK_OK(dev, matcha_meter_get(dev, table, 1, &got, NULL, NULL));
			double e = (double)got.cir / (double)pps[i] - 1;
			CHECK_MSG(e < 1e-3 && e > -1e-3, "%llu packets/s: got %llu",
				  (unsigned long long)pps[i], (unsigned long long)got.cir);
		}
	}
	matcha_close(dev);
	fake_free(fd);
}

void test_meter_errors(void)
{
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_meter_config m = { .cir = 125000, .cburst = 1500, .pburst = 1500 }, got;
	unsigned long writes = fd->writes;
	CHECK_RC(dev, matcha_meter_set(dev, METER, 0, &m), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "call matcha_set_clock_hz first"));
	CHECK_RC(dev, matcha_meter_get(dev, METER, 0, &got, NULL, NULL), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_set_clock_hz(dev, 0), MATCHA_EINVAL);
	CHECK_OK(dev, matcha_meter_set(dev, METER, 0, NULL)); /* unconfiguring needs no clock */
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));
	writes = fd->writes;

	struct {
		struct matcha_meter_config m;
		uint32_t index;
		int rc;
		const char *msg;
	} bad[] = {
		{ { .flags = 0x8, .cir = 1, .cburst = 1 }, 0, MATCHA_EINVAL, "unknown flags 0x8" },
		{ { .cir = 1, .cburst = 1 }, 256, MATCHA_EINVAL, "meter 256 is out of range (table 4 "
		  "has 256 meters)" },
		{ { .flags = MATCHA_METER_TWO_RATE, .cir = 2000, .cburst = 1, .pir = 1999,
		    .pburst = 1 }, 0, MATCHA_EINVAL, "PIR 1999 is below CIR 2000" },
		{ { .flags = MATCHA_METER_TWO_RATE, .cir = 2000, .cburst = 0, .pir = 3000,
		    .pburst = 1 }, 0, MATCHA_EINVAL, "needs CBS and PBS above 0" },
		{ { .flags = MATCHA_METER_TWO_RATE, .cir = 2000, .cburst = 1, .pir = 3000,
		    .pburst = 0 }, 0, MATCHA_EINVAL, "needs CBS and PBS above 0" },
		{ { .cir = 2000, .cburst = 1, .pir = 3000, .pburst = 1 }, 0, MATCHA_EINVAL,
		  "pir must be 0, got 3000" },
		{ { .cir = 2000, .cburst = 0, .pburst = 0 }, 0, MATCHA_EINVAL, "CBS or EBS above 0" },
		/* 2^40 bytes: one more than 40-bit levels hold. */
		{ { .cir = 2000, .cburst = 1ull << 40, .pburst = 0 }, 0, MATCHA_E2BIG,
		  "burst 1099511627776 bytes exceeds the largest the meter holds, 1099511627775" },
		{ { .flags = MATCHA_METER_PACKETS, .cir = 2000, .cburst = 1, .pburst = 1ull << 41 },
		  0, MATCHA_E2BIG, "burst 2199023255552 packets exceeds" },
		/* (2^32 - 1) units per 4 ns tick at shift 0 is about 1.07e18 bytes/s. */
		{ { .cir = 1ull << 62, .cburst = 1, .pburst = 0 }, 0, MATCHA_E2BIG,
		  "rate 4611686018427387904 bytes/s exceeds the largest the meter holds at 250000000 "
		  "Hz, 1073741823750000000 bytes/s" },
		{ { .flags = MATCHA_METER_TWO_RATE, .cir = 1, .cburst = 1, .pir = UINT64_MAX,
		    .pburst = 1 }, 0, MATCHA_E2BIG, "rate 18446744073709551615 bytes/s exceeds" },
		/* 1 byte/s with a 2^39-byte bucket: shift 0, 4e-9 units per tick, rounded up to
		 * one unit, 250e6 bytes/s. */
		{ { .cir = 1, .cburst = 1ull << 39, .pburst = 0 }, 0, MATCHA_EINVAL,
		  "CIR 1 bytes/s with bursts of 549755813888 and 0 bytes cannot be held within "
		  "0.1 % (it would be 250000000 bytes/s)" },
		{ { .flags = MATCHA_METER_TWO_RATE, .cir = 1000000, .cburst = 1ull << 30,
		    .pir = 1000001, .pburst = 1ull << 30 }, 0, MATCHA_EINVAL, "CIR 1000000 bytes/s" },
	};
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_RC(dev, matcha_meter_set(dev, METER, bad[i].index, &bad[i].m), bad[i].rc);
		CHECK_MSG(strstr(matcha_last_error(dev), bad[i].msg), "case %u: \"%s\"", i,
			  matcha_last_error(dev));
	}
	CHECK_MSG(fd->writes == writes, "a refused configuration wrote %lu registers",
		  fd->writes - writes);
	CHECK_RC(dev, matcha_meter_get(dev, METER, 256, &got, NULL, NULL), MATCHA_EINVAL);
	CHECK_RC(dev, matcha_meter_set(dev, 6, 0, &m), MATCHA_ENOTABLE);
	/* The widest values that fit are taken: 2^40 - 1 bytes, and the largest rate. */
	m = (struct matcha_meter_config){ .cir = 1073741823750000000ull, .cburst = (1ull << 40) - 1 };
	CHECK_OK(dev, matcha_meter_set(dev, METER, 255, &m));
	CHECK(fd->table[METER].entries[255].data[CIR] == 0xFFFFFFFFu &&
	      fd->table[METER].entries[255].data[MODE] == 0);
	matcha_close(dev);
	fake_free(fd);
}

void test_meter_adopted(void)
{
	/* A second handle adopts a device whose meters are configured: the meters are left
	 * as they are and read back through the new handle. */
	struct fake_cfg cfg = meter_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *first = fake_open(fd), *second;
	CHECK(first);
	CHECK_OK(first, matcha_set_clock_hz(first, HZ));
	struct matcha_meter_config m = { .flags = MATCHA_METER_TWO_RATE, .cir = 125000000,
					 .cburst = 10000, .pir = 250000000, .pburst = 20000 }, got;
	CHECK_OK(first, matcha_meter_set(first, METER, 5, &m));
	second = fake_open(fd);
	CHECK(second);
	CHECK_OK(second, matcha_tables_adopt(second));
	CHECK_OK(second, matcha_set_clock_hz(second, HZ));
	CHECK_OK(second, matcha_meter_get(second, METER, 5, &got, NULL, NULL));
	CHECK(got.flags == m.flags && got.cir == m.cir && got.cburst == m.cburst &&
	      got.pir == m.pir && got.pburst == m.pburst);
	matcha_close(second);
	matcha_close(first);
	fake_free(fd);
}

/* ------------------------------------------------------------ rate conversion, exactly */

/*
 * The conversion's contract (docs/tables.md, "Rate conversion"), worked out here without
 * the driver's code: at shift s a rate of R per second is R * tick * 2^s / hz units per
 * tick, a rational; the hardware holds the smallest whole number of units at or above it,
 * at the largest s at which both bursts (B * 2^s < 2^level_bits) and both rates
 * (units < 2^rate_bits) fit, and a non-zero rate more than 1/1000 above what was asked is
 * refused. All of it in integers: the rational X / hz is compared through products.
 */
typedef unsigned __int128 u128;

#define NARROW 6 /* 1-bit rates, 8-bit levels, one tick every 3 clocks */
#define SLOW 7   /* 32-bit rates, 60-bit levels, one tick every 65536 clocks */

static struct fake_cfg conversion_cfg(void)
{
	struct fake_cfg c = meter_cfg();
	c.ntables = 8;
	c.table[NARROW] = (struct fake_table_cfg){ .kind = MATCHA_KIND_METER, .key_bits = 2,
						   .size = 4, .data_bits = 384,
						   .ways_or_levels = GEOMETRY(1, 8, 1),
						   .latency = 6, .extra = 3 };
	c.table[SLOW] = (struct fake_table_cfg){ .kind = MATCHA_KIND_METER, .key_bits = 2,
						 .size = 4, .data_bits = 384,
						 .ways_or_levels = GEOMETRY(32, 60, 32),
						 .latency = 6, .extra = 65536 };
	return c;
}

struct geometry {
	unsigned table, rate_bits, level_bits;
	uint64_t tick;
};

static const struct geometry geometries[] = {
	{ METER, 32, 40, 1 }, { METER4, 24, 40, 4 }, { NARROW, 1, 8, 3 }, { SLOW, 32, 60, 65536 },
};

static unsigned bits_of(u128 v)
{
	unsigned n = 0;
	while (v >> n)
		n++;
	return n;
}

/* B * 2^s < 2^level_bits: a burst of B fits the levels at shift s. */
static bool burst_fits(uint64_t b, unsigned s, unsigned level_bits)
{
	return b == 0 || bits_of(b) + s <= level_bits;
}

/* The whole units per tick at or above R * tick * 2^s / hz, if below 2^rate_bits. */
static bool units_fit(uint64_t r, unsigned s, const struct geometry *g, uint64_t hz,
		      uint64_t *units)
{
	u128 rt = (u128)r * g->tick;
	/* At or past 2^127 the quotient is at least 2^63 whatever hz: no rate register. */
	if (rt && bits_of(rt) + s >= 127)
		return false;
	u128 x = rt << s, q = x / hz;
	if (q * hz != x)
		q++;
	*units = (uint64_t)q;
	return q >> g->rate_bits == 0;
}

struct outcome {
	int rc;
	unsigned shift;
	uint64_t cir, pir;
};

static struct outcome expected_outcome(const struct matcha_meter_config *m,
				       const struct geometry *g, uint64_t hz)
{
	for (int s = (1 << MATCHA_HW_METER_MODE_SHIFT_BITS) - 1; s >= 0; s--) {
		struct outcome o = { 0, (unsigned)s, 0, 0 };
		if (!burst_fits(m->cburst, o.shift, g->level_bits) ||
		    !burst_fits(m->pburst, o.shift, g->level_bits) ||
		    !units_fit(m->cir, o.shift, g, hz, &o.cir) ||
		    !units_fit(m->pir, o.shift, g, hz, &o.pir))
			continue;
		const uint64_t rates[2] = { m->cir, m->pir }, units[2] = { o.cir, o.pir };
		for (unsigned i = 0; i < 2; i++) {
			u128 x = ((u128)rates[i] * g->tick) << o.shift;
			if (((u128)units[i] * hz - x) * 1000 > x)
				o.rc = MATCHA_EINVAL;
		}
		return o;
	}
	return (struct outcome){ MATCHA_E2BIG, 0, 0, 0 };
}

/*
 * Sets `m` on meter 1 of g's table at `hz` and checks the outcome against
 * expected_outcome: the error code, nothing written when refused, else the shift and both
 * rate registers; and an accepted rate against the bound docs/tables.md states: held at or
 * above the rate asked, by less than one unit per tick (hz / (tick * 2^shift) per second)
 * and by at most 1/1000 of it.
 */
static void check_conversion(struct fake_dev *fd, matcha_dev *dev, const struct geometry *g,
			     uint64_t hz, const struct matcha_meter_config *m)
{
	struct outcome want = expected_outcome(m, g, hz);
	unsigned long writes = fd->writes;
	int rc = matcha_meter_set(dev, g->table, 1, m);
	CHECK_MSG(rc == want.rc, "table %u at %llu Hz, flags %u CIR %llu PIR %llu CBS %llu "
		  "PBS %llu: %d, expected %d (%s)", g->table, (unsigned long long)hz, m->flags,
		  (unsigned long long)m->cir, (unsigned long long)m->pir,
		  (unsigned long long)m->cburst, (unsigned long long)m->pburst, rc, want.rc,
		  matcha_last_error(dev));
	if (rc) {
		CHECK_MSG(fd->writes == writes, "a refused configuration wrote %lu registers",
			  fd->writes - writes);
		return;
	}
	const uint32_t *w = fd->table[g->table].entries[1].data;
	unsigned shift = (w[MODE] >> MATCHA_HW_METER_MODE_SHIFT_LSB) &
			 ((1u << MATCHA_HW_METER_MODE_SHIFT_BITS) - 1);
	CHECK_MSG(shift == want.shift && w[CIR] == want.cir && w[PIR] == want.pir,
		  "table %u at %llu Hz, CIR %llu PIR %llu CBS %llu PBS %llu: shift %u, units "
		  "%u and %u; expected shift %u, units %llu and %llu", g->table,
		  (unsigned long long)hz, (unsigned long long)m->cir, (unsigned long long)m->pir,
		  (unsigned long long)m->cburst, (unsigned long long)m->pburst, shift,
		  (unsigned)w[CIR], (unsigned)w[PIR], want.shift, (unsigned long long)want.cir,
		  (unsigned long long)want.pir);
	const uint64_t rates[2] = { m->cir, m->pir }, units[2] = { w[CIR], w[PIR] };
	for (unsigned i = 0; i < 2; i++) {
		u128 asked = ((u128)rates[i] * g->tick) << shift, held = (u128)units[i] * hz;
		CHECK_MSG(held >= asked && held - asked < hz && (held - asked) * 1000 <= asked,
			  "table %u at %llu Hz: rate %llu held as %llu units at shift %u",
			  g->table, (unsigned long long)hz, (unsigned long long)rates[i],
			  (unsigned long long)units[i], shift);
	}
}

/* A number of 0 to 64 bits, each length about as likely. */
static uint64_t any_magnitude(struct rng *r)
{
	unsigned bits = rng_below(r, 65);
	return bits ? rng_next(r) >> (64 - bits) : 0;
}

static const uint64_t clocks[] = { 1, 3, 1000, 999983, 33333333, 100000000, 156250000,
				   250000000, 322265625, 390625000, 1000000007,
				   18446744073709551557ull };

/* Random configurations at every geometry and clock, over the whole range of rates and
 * bursts, and rates near whole units and near the 0.1 % limit at a shift the bursts pin. */
void test_meter_conversion_exact(void)
{
	struct fake_cfg cfg = conversion_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct rng r = rng_for_test();
	unsigned accepted = 0, refused = 0;
	for (unsigned gi = 0; gi < sizeof geometries / sizeof geometries[0]; gi++) {
		const struct geometry *g = &geometries[gi];
		for (unsigned ci = 0; ci < sizeof clocks / sizeof clocks[0]; ci++) {
			uint64_t hz = clocks[ci];
			CHECK_OK(dev, matcha_set_clock_hz(dev, hz));
			for (unsigned n = 0; n < 1500; n++) {
				struct matcha_meter_config m = { .flags = rng_below(&r, 2) ?
									  MATCHA_METER_PACKETS : 0 };
				m.cburst = 1 + any_magnitude(&r) % ((1ull << g->level_bits) - 1);
				if (n % 3) {
					/* At the shift s that a burst of 2^(level_bits - 1 - s)
					 * leaves, where a unit per tick is hz / den per second: near
					 * k whole units, or near the least rate that k units hold
					 * within 0.1 %, 1000 k hz / (1001 den). */
					unsigned s = rng_below(&r, g->level_bits);
					m.cburst = 1ull << (g->level_bits - 1 - s);
					u128 k = rng_below(&r, 4) ? 1 + rng_below(&r, 1000)
								  : any_magnitude(&r) >> 30;
					u128 den = (u128)g->tick << s;
					u128 per_s = n % 3 == 1 ? k * hz / den
								: (1000 * k * hz + 1001 * den - 1) / (1001 * den);
					per_s += rng_below(&r, 5);
					per_s -= per_s >= 2 ? 2 : per_s;
					m.cir = per_s > UINT64_MAX ? UINT64_MAX : (uint64_t)per_s;
				} else {
					m.cir = any_magnitude(&r);
				}
				if (rng_below(&r, 2)) {
					m.flags |= MATCHA_METER_TWO_RATE;
					m.pir = m.cir + (rng_below(&r, 2) ? any_magnitude(&r) >> 8 : 0);
					m.pir = m.pir < m.cir ? UINT64_MAX : m.pir;
					m.pburst = 1 + any_magnitude(&r) % ((1ull << g->level_bits) - 1);
				} else {
					m.pburst = rng_below(&r, 2) ? any_magnitude(&r) >> 4 : 0;
				}
				check_conversion(fd, dev, g, hz, &m);
				if (check_failures())
					goto done;
				if (expected_outcome(&m, g, hz).rc)
					refused++;
				else
					accepted++;
			}
		}
	}
done:
	printf("     %u configurations held, %u refused\n", accepted, refused);
	matcha_close(dev);
	fake_free(fd);
}

/* The ends of the range, by name, against expected_outcome and by their values. */
void test_meter_conversion_extremes(void)
{
	struct fake_cfg cfg = conversion_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK_OK(dev, matcha_set_clock_hz(dev, HZ));
	const struct geometry *g = &geometries[0]; /* 32-bit rates, one tick per clock */
	const uint32_t *w = fd->table[METER].entries[1].data;
	/* A burst of 2^39 leaves shift 0: a unit per tick is 250e6 bytes/s. */
	const uint64_t unit = HZ, b = 1ull << 39;
	struct {
		const char *name;
		struct matcha_meter_config m;
		int rc;
		uint32_t cir, pir; /* the units held, when accepted */
	} cases[] = {
		{ "rate 0", { .cir = 0, .cburst = b }, 0, 0, 0 },
		{ "both rates 0", { .flags = MATCHA_METER_TWO_RATE, .cburst = 1, .pburst = b },
		  0, 0, 0 },
		{ "one unit", { .cir = unit, .cburst = b }, 0, 1, 0 },
		{ "just below one unit: held as one", { .cir = unit - 1, .cburst = b }, 0, 1, 0 },
		{ "just above one unit: two would be 100 % over",
		  { .cir = unit + 1, .cburst = b }, MATCHA_EINVAL, 0, 0 },
		{ "just above 1000 units: 1001, 0.1 % over less a byte/s",
		  { .cir = 1000 * unit + 1, .cburst = b }, 0, 1001, 0 },
		{ "just above 999 units: 1000, 0.1 % over and a bit",
		  { .cir = 999 * unit + 1, .cburst = b }, MATCHA_EINVAL, 0, 0 },
		{ "just below 1000 units", { .cir = 1000 * unit - 1, .cburst = b }, 0, 1000, 0 },
		{ "the largest rate: 2^32 - 1 units", { .cir = 0xFFFFFFFFull * unit, .cburst = 1 },
		  0, 0xFFFFFFFFu, 0 },
		{ "one byte/s above the largest", { .cir = 0xFFFFFFFFull * unit + 1, .cburst = 1 },
		  MATCHA_E2BIG, 0, 0 },
		{ "the largest PIR over rate 0",
		  { .flags = MATCHA_METER_TWO_RATE, .cburst = 1, .pir = 0xFFFFFFFFull * unit,
		    .pburst = 1 }, 0, 0, 0xFFFFFFFFu },
		{ "the largest 64-bit rate", { .cir = UINT64_MAX, .cburst = 1 }, MATCHA_E2BIG, 0, 0 },
	};
	for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		check_conversion(fd, dev, g, HZ, &cases[i].m);
		CHECK_MSG(!check_failures(), "case \"%s\"", cases[i].name);
		CHECK_RC(dev, matcha_meter_set(dev, METER, 1, &cases[i].m), cases[i].rc);
		if (!cases[i].rc)
			CHECK_MSG(w[CIR] == cases[i].cir && w[PIR] == cases[i].pir &&
					  (w[MODE] >> MATCHA_HW_METER_MODE_SHIFT_LSB) == 0,
				  "case \"%s\": units %u and %u, mode 0x%x", cases[i].name,
				  (unsigned)w[CIR], (unsigned)w[PIR], (unsigned)w[MODE]);
	}
	/* A rate whose units at its shift are a fraction: rounded up, never down. 1e6 bytes/s
	 * with a burst of 2^19 at 250 MHz: shift 20, 1e6 * 2^20 / 250e6 = 4194.304 units. */
	struct matcha_meter_config m = { .cir = 1000000, .cburst = 1ull << 19 };
	check_conversion(fd, dev, g, HZ, &m);
	CHECK_MSG(w[CIR] == 4195 && (w[MODE] >> MATCHA_HW_METER_MODE_SHIFT_LSB) == 20,
		  "units %u, mode 0x%x", (unsigned)w[CIR], (unsigned)w[MODE]);
	/* The largest rate a refusal names is taken, one more is not: at 156250001 Hz and
	 * 4 clocks per tick, 2^24 - 1 units per tick are 655359965131803.75 bytes/s. */
	g = &geometries[1];
	CHECK_OK(dev, matcha_set_clock_hz(dev, 156250001));
	m = (struct matcha_meter_config){ .cir = 655359965131804ull, .cburst = 1 };
	check_conversion(fd, dev, g, 156250001, &m);
	CHECK_RC(dev, matcha_meter_set(dev, METER4, 1, &m), MATCHA_E2BIG);
	CHECK_MSG(strstr(matcha_last_error(dev), "largest the meter holds at 156250001 Hz, "
			 "655359965131803 bytes/s"), "\"%s\"", matcha_last_error(dev));
	m.cir--;
	check_conversion(fd, dev, g, 156250001, &m);
	CHECK(fd->table[METER4].entries[1].data[CIR] == 0xFFFFFFu);
	matcha_close(dev);
	fake_free(fd);
}
