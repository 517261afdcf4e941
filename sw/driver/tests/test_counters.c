/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Descriptor kind flags, raw per-entry counters, the default action, and the expansion of
 * ranges into ternary prefixes. Counts that follow entries across moves are tested with
 * each kind (test_exact.c, test_lpm.c, test_ternary.c).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"

#define EXACT 0   /* standard device: default action, no counters */
#define LPM32 1   /* counters and a default action */
#define LPM128 2  /* neither */
#define TERNARY 3 /* neither */

void test_discovery_kind_flags(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[3].counters = true;
	cfg.table[3].kind_extra = 0xF000; /* flags this driver does not know: ignored */
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct matcha_table_info in;
	const bool counters[4] = { false, true, false, true };
	const bool defaults[4] = { true, true, false, false };
	const unsigned kinds[4] = { MATCHA_KIND_EXACT, MATCHA_KIND_LPM, MATCHA_KIND_LPM,
				    MATCHA_KIND_TERNARY };
	for (unsigned i = 0; i < 4; i++) {
		CHECK_OK(dev, matcha_table_info(dev, i, &in));
		CHECK_MSG(in.kind == kinds[i] && in.counters == counters[i] &&
			  in.default_action == defaults[i], "table %u: kind %u, counters %d, "
			  "default %d", i, in.kind, in.counters, in.default_action);
	}
	CHECK_OK(dev, matcha_table_info(dev, 1, &in));
	CHECK(in.levels == 12 && in.ways == 0); /* the flags do not hide the geometry */
	matcha_close(dev);
	fake_free(fd);

	/* A flag on an unknown kind is still an unknown kind. */
	cfg = fake_standard_cfg();
	cfg.table[2].kind = 9;
	cfg.table[2].counters = true;
	fd = fake_new(&cfg);
	CHECK(matcha_open_ops(&fake_ops, fd, &dev) == MATCHA_ENODEV);
	CHECK(strstr(matcha_last_error(dev), "descriptor 2 has unknown kind 9"));
	matcha_close(dev);
	fake_free(fd);
}

void test_counters_raw_read_zero(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[EXACT].counters = true;
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	struct fake_table *t = &fd->table[EXACT];
	/* 64-bit counts: both words of each, from one READ. */
	t->packets[1023] = 0x123456789ull;
	t->bytes[1023] = 0xFEDCBA9876543210ull;
	uint64_t p = 0, b = 0;
	CHECK_OK(dev, matcha_counters_read(dev, EXACT, 1023, &p, &b));
	CHECK(p == 0x123456789ull && b == 0xFEDCBA9876543210ull);
	fake_hit(fd, EXACT, 7, 64);
	fake_hit(fd, EXACT, 7, 1500);
	CHECK_OK(dev, matcha_counters_read(dev, EXACT, 7, &p, NULL));
	CHECK(p == 2);
	CHECK_OK(dev, matcha_counters_read(dev, EXACT, 7, NULL, &b));
	CHECK(b == 1564);
	/* The latch holds the READ's snapshot; later hits show at the next READ. */
	fake_hit(fd, EXACT, 7, 100);
	CHECK(t->packets_latch == 2 && t->bytes_latch == 1564);
	unsigned long zeros = t->zeros;
	CHECK_OK(dev, matcha_counters_zero(dev, EXACT, 7));
	CHECK(t->zeros == zeros + 1 && t->packets[7] == 0 && t->bytes[7] == 0);
	CHECK_OK(dev, matcha_counters_read(dev, EXACT, 7, &p, &b));
	CHECK(p == 0 && b == 0);
	CHECK(t->packets[1023] == 0x123456789ull); /* ZERO touched one index only */

	/* CLEAR zeroes every count. */
	CHECK_OK(dev, matcha_table_clear(dev, EXACT));
	CHECK_OK(dev, matcha_counters_read(dev, EXACT, 1023, &p, &b));
	CHECK(p == 0 && b == 0);

	/* LPM: the index is the result index; the window INDEX is levels << 20 | result. */
	fd->table[LPM32].packets[5] = 9;
	fd->table[LPM32].bytes[5] = 900;
	CHECK_OK(dev, matcha_counters_read(dev, LPM32, 5, &p, &b));
	CHECK(p == 9 && b == 900);
	CHECK(fd->table[LPM32].index == (12u << 20 | 5));
	CHECK_OK(dev, matcha_counters_zero(dev, LPM32, 5));
	CHECK(fd->table[LPM32].packets[5] == 0 && fd->table[LPM32].index == (12u << 20 | 5));

	CHECK_RC(dev, matcha_counters_read(dev, EXACT, 1024, &p, &b), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "index 1024 is out of range (table 0 counts 1024 "
		     "entries)"));
	CHECK_RC(dev, matcha_counters_zero(dev, LPM32, 2048), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "2048 results"));
	CHECK_RC(dev, matcha_counters_read(dev, 4, 0, &p, &b), MATCHA_ENOTABLE);
	matcha_close(dev);
	fake_free(fd);
}

void test_counters_unsupported(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t key[16] = { 0 }, mask[16] = { 0 };
	uint64_t p, b;
	unsigned long reads = fd->reads, writes = fd->writes;
	/* Tables without counters: refused before any register access. */
	CHECK_RC(dev, matcha_counters_read(dev, EXACT, 0, &p, &b), MATCHA_ENOTSUP);
	CHECK(strstr(matcha_last_error(dev), "counters_read: table 0 has no per-entry counters"));
	CHECK_RC(dev, matcha_counters_zero(dev, TERNARY, 0), MATCHA_ENOTSUP);
	CHECK(fd->reads == reads && fd->writes == writes);
	CHECK_OK(dev, matcha_exact_add(dev, EXACT, key, 44, 1, NULL, 0));
	reads = fd->reads, writes = fd->writes;
	CHECK_RC(dev, matcha_exact_counters(dev, EXACT, key, 44, &p, &b, 0), MATCHA_ENOTSUP);
	CHECK(strstr(matcha_last_error(dev), "exact_counters: table 0 has no per-entry counters"));
	CHECK_RC(dev, matcha_lpm_counters(dev, LPM128, key, 0, &p, &b, 0), MATCHA_ENOTSUP);
	CHECK_RC(dev, matcha_ternary_counters(dev, TERNARY, key, mask, 104, 0, &p, &b, 0),
		 MATCHA_ENOTSUP);
	CHECK(fd->reads == reads && fd->writes == writes);
	/* No entry was zeroed on the way in either: the table has no ZERO. */
	CHECK(fd->table[EXACT].zeros == 0);

	/* Wrong kind, absent entries, unknown flags. */
	CHECK_RC(dev, matcha_exact_counters(dev, LPM32, key, 32, &p, &b, 0), MATCHA_EKIND);
	CHECK_RC(dev, matcha_lpm_counters(dev, LPM32, key, 8, &p, &b, 0), MATCHA_ENOENT);
	CHECK(strstr(matcha_last_error(dev), "/8 prefix is not in table 1"));
	CHECK_OK(dev, matcha_lpm_add(dev, LPM32, key, 8, 1, NULL, 0));
	CHECK_RC(dev, matcha_lpm_counters(dev, LPM32, key, 8, &p, &b, 2), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "unknown flags 0x2"));
	key[0] = 1;
	CHECK_RC(dev, matcha_lpm_counters(dev, LPM32, key, 7, &p, &b, 0), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "bits set beyond its length 7"));
	CHECK(strcmp(matcha_strerror(MATCHA_ENOTSUP), "the hardware lacks that feature") == 0);
	matcha_close(dev);
	fake_free(fd);
}

void test_default_action(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.ntables = 5;
	/* A table whose action data is the widest there is, and one without any. */
	cfg.table[3].default_action = true;
	cfg.table[3].data_bits = 512;
	cfg.table[4] = (struct fake_table_cfg){ .kind = MATCHA_KIND_EXACT, .key_bits = 16, .size = 32,
						.ways_or_levels = 2, .default_action = true };
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t data[5] = { 0x12, 0x34, 0x56, 0x78, 0x9A }, got[8];
	uint8_t action = 0;
	/* The reset value (the fake's: action 0, data 0). */
	CHECK_OK(dev, matcha_table_get_default(dev, EXACT, &action, got, 40));
	CHECK(action == 0 && !memcmp(got, "\0\0\0\0\0", 5));

	CHECK_OK(dev, matcha_table_set_default(dev, EXACT, 0xA5, data, 40));
	const struct fake_entry *d = &fd->table[EXACT].default_entry;
	CHECK(d->flags == (FAKE_FLAGS_ACTION(0xA5) | MATCHA_HW_FLAGS_VALID) && d->data[0] == 0x3456789A && d->data[1] == 0x12);
	memset(got, 0xEE, sizeof got);
	CHECK_OK(dev, matcha_table_get_default(dev, EXACT, &action, got, 40));
	CHECK(action == 0xA5 && !memcmp(got, data, 5));
	/* A wider buffer is zero-extended; without a buffer only the action id comes back. */
	memset(got, 0xEE, sizeof got);
	CHECK_OK(dev, matcha_table_get_default(dev, EXACT, &action, got, 64));
	CHECK(!memcmp(got, "\0\0\0", 3) && !memcmp(got + 3, data, 5));
	action = 0;
	CHECK_OK(dev, matcha_table_get_default(dev, EXACT, &action, NULL, 0));
	CHECK(action == 0xA5);
	/* Narrower data is zero-extended; the default survives CLEAR. */
	CHECK_OK(dev, matcha_table_set_default(dev, EXACT, 3, data + 3, 16));
	CHECK_OK(dev, matcha_table_clear(dev, EXACT));
	CHECK_OK(dev, matcha_table_get_default(dev, EXACT, &action, got, 40));
	CHECK(action == 3 && !memcmp(got, "\0\0\0\x78\x9A", 5));

	/* 512 bits of data, and none. */
	uint8_t wide[64], wide_got[64];
	for (unsigned i = 0; i < 64; i++)
		wide[i] = (uint8_t)(i * 37 + 1);
	CHECK_OK(dev, matcha_table_set_default(dev, 3, 200, wide, 512));
	CHECK_OK(dev, matcha_table_get_default(dev, 3, &action, wide_got, 512));
	CHECK(action == 200 && !memcmp(wide, wide_got, 64));
	CHECK_OK(dev, matcha_table_set_default(dev, 4, 9, NULL, 0));
	CHECK_OK(dev, matcha_table_get_default(dev, 4, &action, got, 0));
	CHECK(action == 9);

	/* Errors, with nothing written. */
	unsigned long writes = fd->writes;
	CHECK_RC(dev, matcha_table_set_default(dev, EXACT, 1, data, 41), MATCHA_E2BIG);
	CHECK(strstr(matcha_last_error(dev), "action data is 41 bits, table 0 takes 40"));
	CHECK_RC(dev, matcha_table_get_default(dev, EXACT, &action, got, 39), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "a 39-bit buffer for the 40-bit action data"));
	CHECK_RC(dev, matcha_table_set_default(dev, LPM128, 1, NULL, 0), MATCHA_ENOTSUP);
	CHECK(strstr(matcha_last_error(dev), "table_set_default: table 2 has no default action"));
	CHECK_RC(dev, matcha_table_get_default(dev, LPM128, &action, NULL, 0), MATCHA_ENOTSUP);
	CHECK_RC(dev, matcha_table_set_default(dev, 5, 1, NULL, 0), MATCHA_ENOTABLE);
	CHECK(fd->writes == writes);
	matcha_close(dev);
	fake_free(fd);
}

/* ------------------------------------------------------------ range to prefixes */

/* The fewest prefixes covering [lo, hi] exactly, by trying every tiling: a minimal cover
 * can be taken disjoint, so it is a sequence of aligned blocks from lo to hi. */
static unsigned brute_min_prefixes(unsigned lo, unsigned hi, unsigned bits)
{
	unsigned best[257]; /* best[x]: fewest blocks tiling [x, hi] */
	best[hi + 1 - lo] = 0;
	for (unsigned x = hi + 1; x-- > lo;) {
		unsigned b = ~0u;
		for (unsigned size = 1; size <= 1u << bits && x % size == 0 && x + size - 1 <= hi;
		     size *= 2)
			if (best[x + size - lo] + 1 < b)
				b = best[x + size - lo] + 1;
		best[x - lo] = b;
	}
	return best[0];
}

void test_range_to_prefixes_exhaustive(void)
{
	struct matcha_prefix p[MATCHA_RANGE_MAX_PREFIXES];
	unsigned long ranges = 0;
	for (unsigned bits = 1; bits <= 8; bits++) {
		unsigned top = 1u << bits, worst = 0;
		for (unsigned lo = 0; lo < top; lo++)
			for (unsigned hi = lo; hi < top; hi++, ranges++) {
				int n = matcha_range_to_prefixes(lo, hi, bits, p, MATCHA_RANGE_MAX_PREFIXES);
				CHECK_MSG(n > 0, "[%u, %u] of %u bits: %d", lo, hi, bits, n);
				/* Exactly the range, each value matched once. */
				for (unsigned v = 0; v < top; v++) {
					unsigned matches = 0;
					for (int i = 0; i < n; i++)
						matches += (v & p[i].mask) == p[i].value;
					CHECK_MSG(matches == (v >= lo && v <= hi), "[%u, %u] of %u bits: "
						  "%u matches %u prefixes", lo, hi, bits, v, matches);
				}
				for (int i = 0; i < n; i++) {
					CHECK((p[i].value & ~p[i].mask) == 0 && p[i].mask < top);
					/* A prefix mask: ones, then zeros. */
					uint32_t low = ~p[i].mask & (top - 1);
					CHECK((low & (low + 1)) == 0);
					CHECK(i == 0 || p[i].value > p[i - 1].value);
				}
				CHECK_MSG((unsigned)n == brute_min_prefixes(lo, hi, bits),
					  "[%u, %u] of %u bits: %d prefixes, %u suffice", lo, hi, bits,
					  n, brute_min_prefixes(lo, hi, bits));
				if ((unsigned)n > worst)
					worst = (unsigned)n;
				/* Too little room: refused, nothing written. */
				struct matcha_prefix small[MATCHA_RANGE_MAX_PREFIXES];
				memset(small, 0xAB, sizeof small);
				CHECK(matcha_range_to_prefixes(lo, hi, bits, small, (unsigned)n - 1) ==
				      MATCHA_ENOSPC);
				CHECK(small[0].value == 0xABABABAB);
			}
		/* The bound is reached: 2*bits - 2 (one prefix for a 1-bit field). */
		CHECK_MSG(worst == (bits == 1 ? 1 : 2 * bits - 2), "%u bits: worst %u", bits, worst);
	}
	printf("  %lu ranges of 1..8 bits\n", ranges);
}

void test_range_to_prefixes_wide(void)
{
	struct matcha_prefix p[MATCHA_RANGE_MAX_PREFIXES];
	/* Ports 1024-65535: 6 prefixes 0x0400/6, 0x0800/5, 0x1000/4, 0x2000/3, 0x4000/2, 0x8000/1. */
	CHECK(matcha_range_to_prefixes(1024, 65535, 16, p, 62) == 6);
	CHECK(p[0].value == 0x0400 && p[0].mask == 0xFC00);
	CHECK(p[5].value == 0x8000 && p[5].mask == 0x8000);
	CHECK(matcha_range_to_prefixes(1, 65534, 16, p, 62) == 30);
	CHECK(matcha_range_to_prefixes(0, 65535, 16, p, 62) == 1 && p[0].mask == 0);
	CHECK(matcha_range_to_prefixes(80, 80, 16, p, 62) == 1 && p[0].value == 80 &&
	      p[0].mask == 0xFFFF);
	/* 32 bits: the whole field, and the worst case. */
	CHECK(matcha_range_to_prefixes(0, UINT32_MAX, 32, p, 62) == 1 && p[0].value == 0 &&
	      p[0].mask == 0);
	CHECK(matcha_range_to_prefixes(1, UINT32_MAX - 1, 32, p, 62) == 62);
	CHECK(p[0].value == 1 && p[0].mask == UINT32_MAX && p[61].value == UINT32_MAX - 1 &&
	      p[61].mask == UINT32_MAX);
	CHECK(matcha_range_to_prefixes(0x80000000u, UINT32_MAX, 32, p, 1) == 1 &&
	      p[0].mask == 0x80000000u);
	/* Invalid arguments. */
	CHECK(matcha_range_to_prefixes(5, 4, 16, p, 62) == MATCHA_EINVAL);
	CHECK(matcha_range_to_prefixes(0, 65536, 16, p, 62) == MATCHA_EINVAL);
	CHECK(matcha_range_to_prefixes(0, 0, 0, p, 62) == MATCHA_EINVAL);
	CHECK(matcha_range_to_prefixes(0, 0, 33, p, 62) == MATCHA_EINVAL);
	CHECK(matcha_range_to_prefixes(0, 1, 1, NULL, 0) == MATCHA_ENOSPC);
}
