/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery, error reporting and the generic table calls. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"

void test_strerror_all_codes(void)
{
	for (int code = MATCHA_ELAYOUT; code <= MATCHA_OK; code++)
		CHECK_MSG(strcmp(matcha_strerror(code), "unknown error") != 0, "code %d", code);
	CHECK(strcmp(matcha_strerror(1), "unknown error") == 0);
}

void test_discovery(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	CHECK(matcha_version(dev) == MATCHA_HW_INFO_VERSION_VALUE);
	CHECK(matcha_build_id(dev) == 0xC0FFEE01);
	CHECK(matcha_table_count(dev) == 4);
	CHECK(strcmp(matcha_last_error(dev), "") == 0);

	struct matcha_table_info in;
	CHECK_OK(dev, matcha_table_info(dev, 0, &in));
	CHECK(in.kind == MATCHA_KIND_EXACT && in.key_bits == 44 && in.size == 1024 &&
	      in.data_bits == 40 && in.base == MATCHA_HW_INFO_WINDOW_BYTES && in.ways == 4 && in.levels == 0 &&
	      in.latency == 3);
	CHECK_OK(dev, matcha_table_info(dev, 1, &in));
	CHECK(in.kind == MATCHA_KIND_LPM && in.key_bits == 32 && in.levels == 12 && in.ways == 0 &&
	      in.base == 0x20000 && in.size == 2048);
	CHECK_OK(dev, matcha_table_info(dev, 2, &in));
	CHECK(in.kind == MATCHA_KIND_LPM && in.key_bits == 128 && in.levels == 11);
	CHECK_OK(dev, matcha_table_info(dev, 3, &in));
	CHECK(in.kind == MATCHA_KIND_TERNARY && in.key_bits == 104 && in.size == 256 &&
	      in.ways == 0 && in.levels == 0);
	CHECK_RC(dev, matcha_table_info(dev, 4, &in), MATCHA_ENOTABLE);
	CHECK(strstr(matcha_last_error(dev), "table 4 does not exist"));
	matcha_close(dev);
	fake_free(fd);
}

/* Opens a device that must fail with `want`; its message must contain `needle`. */
static void expect_open_failure(const struct fake_cfg *cfg, long fail_read_addr, int want,
				const char *needle)
{
	struct fake_dev *fd = fake_new(cfg);
	fd->fail_read_addr = fail_read_addr;
	matcha_dev *dev;
	int rc = matcha_open_ops(&fake_ops, fd, &dev);
	if (rc != want || !dev || !strstr(matcha_last_error(dev), needle))
		check_fail(__FILE__, __LINE__, "open returned %d (%s), message \"%s\"; expected %d "
			   "and \"%s\"", rc, matcha_strerror(rc), matcha_last_error(dev), want,
			   needle);
	else if (matcha_table_count(dev) != 0)
		check_fail(__FILE__, __LINE__, "a failed open left %u tables",
			   matcha_table_count(dev));
	matcha_close(dev);
	fake_free(fd);
}

void test_discovery_bad_magic(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.magic = 0xDEADBEEF;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "magic is 0xdeadbeef");
}

void test_discovery_bad_version(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.version = 2u << 16 | 3;
	expect_open_failure(&cfg, -1, MATCHA_EVERSION, "version is 2.3, this driver speaks 1.x");
	cfg.version = 1u << 16 | 7; /* a newer minor version is fine */
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	matcha_close(dev);
	fake_free(fd);
}

void test_discovery_bus_error(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	/* Table 2's key width: the message names the register that failed. */
	uint32_t addr = MATCHA_HW_INFO_DESCRIPTORS + MATCHA_HW_INFO_DESCRIPTOR_BYTES * 2 +
			4 * MATCHA_HW_DESC_KEY_BITS_WORD;
	char needle[40];
	snprintf(needle, sizeof needle, "read of register 0x%06x", (unsigned)addr);
	expect_open_failure(&cfg, addr, MATCHA_EIO, needle);
	struct matcha_regs_ops no_write = { fake_ops.read32, NULL };
	matcha_dev *dev;
	CHECK(matcha_open_ops(&no_write, NULL, &dev) == MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "write32"));
	matcha_close(dev);
}

void test_discovery_bad_descriptor(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	cfg.table[0].ways_or_levels = 5;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "exact table 0: 5 ways");
	cfg = fake_standard_cfg();
	cfg.table[0].size = 1000;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "not a power-of-two");
	cfg = fake_standard_cfg();
	cfg.table[1].extra = 11; /* 11 slots of 49 bits: 539 > 512 */
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "LPM table 1: 11-slot nodes of 32-bit keys are "
			    "not 3 or more slots in 512 DATA bits");
	cfg = fake_standard_cfg();
	cfg.table[1].extra = 2;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "2-slot nodes");
	cfg = fake_standard_cfg();
	cfg.table[2].kind = 9;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "descriptor 2 has unknown kind 9");
	cfg = fake_standard_cfg();
	cfg.table[3].key_bits = 600;
	expect_open_failure(&cfg, -1, MATCHA_ENODEV, "key width 600");
}

void test_table_errors(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint8_t key[16] = { 0 };
	CHECK_RC(dev, matcha_exact_add(dev, 9, key, 44, 1, NULL, 0), MATCHA_ENOTABLE);
	CHECK(strstr(matcha_last_error(dev), "exact_add: table 9 does not exist (4 tables)"));
	CHECK_RC(dev, matcha_exact_add(dev, 1, key, 32, 1, NULL, 0), MATCHA_EKIND);
	CHECK(strstr(matcha_last_error(dev), "table 1 is of kind lpm, not exact"));
	CHECK_RC(dev, matcha_lpm_add(dev, 0, key, 8, 1, NULL, 0), MATCHA_EKIND);
	CHECK_RC(dev, matcha_ternary_add(dev, 2, key, key, 104, 1, 1, NULL, 0), MATCHA_EKIND);
	CHECK_RC(dev, matcha_table_clear(dev, 4), MATCHA_ENOTABLE);
	matcha_close(dev);
	fake_free(fd);
}

void test_table_counters(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	fd->table[3].hits = 0x100000002ull;
	fd->table[3].misses = 0xFFFFFFFFull;
	uint64_t hits, misses;
	CHECK_OK(dev, matcha_table_counters(dev, 3, &hits, &misses));
	CHECK(hits == 0x100000002ull && misses == 0xFFFFFFFFull);
	matcha_close(dev);
	fake_free(fd);
}
