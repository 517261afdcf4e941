/* SPDX-License-Identifier: Apache-2.0 */
/* The Corundum application block's calls: CONTROL and the packet-out counters, checked
 * against the fake's registers. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fake_dev.h"

#define TX_PIPELINE MATCHA_HW_APP_CONTROL_TX_PIPELINE
#define CPU_PORT MATCHA_HW_APP_CONTROL_CPU_PORT

/* The standard fake with the app block, and the driver on it. */
static matcha_dev *open_with_app_block(struct fake_dev **fd)
{
	struct fake_cfg cfg = fake_standard_cfg();
	*fd = fake_new(&cfg);
	fake_add_app_block(*fd);
	return fake_open(*fd);
}

void test_app_control_set_and_clear_each_bit(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_with_app_block(&fd);
	CHECK(dev);
	const uint32_t bits[] = { TX_PIPELINE, CPU_PORT };
	for (unsigned i = 0; i < 2; i++) {
		uint32_t bit = bits[i], other = bits[1 - i], now = 0xDEAD;
		for (unsigned other_set = 0; other_set < 2; other_set++) {
			fd->app.control = other_set ? other : 0;
			CHECK_OK(dev, matcha_app_control(dev, bit, 0, &now));
			CHECK_MSG(fd->app.control == (bit | (other_set ? other : 0)) &&
				  now == fd->app.control, "set 0x%x: CONTROL 0x%x, read back 0x%x",
				  bit, fd->app.control, now);
			CHECK_OK(dev, matcha_app_control(dev, 0, bit, &now));
			CHECK_MSG(fd->app.control == (other_set ? other : 0u) && now == fd->app.control,
				  "clear 0x%x: CONTROL 0x%x, read back 0x%x", bit, fd->app.control, now);
		}
	}
	/* Both at once, then reading alone: no write. */
	CHECK_OK(dev, matcha_app_control(dev, TX_PIPELINE | CPU_PORT, 0, NULL));
	CHECK(fd->app.control == (TX_PIPELINE | CPU_PORT));
	unsigned long writes = fd->app.control_writes;
	uint32_t now = 0;
	CHECK_OK(dev, matcha_app_control(dev, 0, 0, &now));
	CHECK(now == (TX_PIPELINE | CPU_PORT) && fd->app.control_writes == writes);
	CHECK_OK(dev, matcha_app_control(dev, CPU_PORT, 0, &now)); /* already set */
	CHECK(fd->app.control_writes == writes);
	matcha_close(dev);
	fake_free(fd);
}

/* A block whose CONTROL holds more bits than this driver knows (a later register map):
 * they are written back as they were read. */
void test_app_control_keeps_other_bits(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_with_app_block(&fd);
	CHECK(dev);
	const uint32_t unknown = 0xA5A5A5A4u & ~MATCHA_APP_CONTROL_BITS;
	fd->app.control_bits = UINT32_MAX;
	fd->app.control = unknown | TX_PIPELINE;
	uint32_t now;
	CHECK_OK(dev, matcha_app_control(dev, CPU_PORT, TX_PIPELINE, &now));
	CHECK_MSG(fd->app.control == (unknown | CPU_PORT) && now == fd->app.control,
		  "CONTROL 0x%08x, read back 0x%08x", fd->app.control, now);
	CHECK_OK(dev, matcha_app_control(dev, TX_PIPELINE, CPU_PORT, &now));
	CHECK(fd->app.control == (unknown | TX_PIPELINE) && now == fd->app.control);
	matcha_close(dev);
	fake_free(fd);
}

void test_app_control_refuses_undefined_bits(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_with_app_block(&fd);
	CHECK(dev);
	fd->app.control = TX_PIPELINE;
	unsigned long reads = fd->reads;
	const uint32_t undefined = (uint32_t)~MATCHA_APP_CONTROL_BITS;
	for (unsigned bit = 0; bit < 32; bit++) {
		uint32_t b = 1u << bit;
		if (!(b & undefined))
			continue;
		CHECK_RC(dev, matcha_app_control(dev, b, 0, NULL), MATCHA_EINVAL);
		CHECK_RC(dev, matcha_app_control(dev, 0, b, NULL), MATCHA_EINVAL);
	}
	char want[96];
	snprintf(want, sizeof want, "0x%08x has bits that are no CONTROL bit", 1u << 2);
	CHECK_RC(dev, matcha_app_control(dev, CPU_PORT | 1u << 2, 0, NULL), MATCHA_EINVAL);
	CHECK_MSG(strstr(matcha_last_error(dev), want), "%s", matcha_last_error(dev));
	CHECK_RC(dev, matcha_app_control(dev, CPU_PORT, CPU_PORT, NULL), MATCHA_EINVAL);
	CHECK(strstr(matcha_last_error(dev), "both to be set and cleared"));
	/* Refused before any access: CONTROL as it was, nothing read or written. */
	CHECK(fd->app.control == TX_PIPELINE && fd->app.control_writes == 0 && fd->reads == reads);
	matcha_close(dev);
	fake_free(fd);
}

void test_app_control_not_a_corundum_block(void)
{
	/* The simulator's window: nothing at APP_BASE, the read fails. */
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	matcha_dev *dev = fake_open(fd);
	CHECK(dev);
	uint32_t now = 0xDEAD;
	struct matcha_app_packet_outs counts;
	CHECK_RC(dev, matcha_app_control(dev, CPU_PORT, 0, &now), MATCHA_ENODEV);
	CHECK_MSG(strstr(matcha_last_error(dev), "app_control: the device is no Corundum Matcha "
			 "application block: its APP_ID could not be read (read of register "
			 "0x800000 failed"), "%s", matcha_last_error(dev));
	CHECK(now == 0xDEAD);
	CHECK_RC(dev, matcha_app_packet_outs(dev, &counts), MATCHA_ENODEV);
	matcha_close(dev);
	fake_free(fd);

	/* Another Corundum application block (the template's APP_ID): CONTROL is not ours. */
	dev = open_with_app_block(&fd);
	CHECK(dev);
	fd->app.id = 0x12340001;
	CHECK_RC(dev, matcha_app_control(dev, TX_PIPELINE, 0, &now), MATCHA_ENODEV);
	CHECK_MSG(strstr(matcha_last_error(dev), "APP_ID (register 0x800000) reads 0x12340001, "
			 "not 0x4d544341 (\"MTCA\")"), "%s", matcha_last_error(dev));
	CHECK(fd->app.control == 0 && fd->app.control_writes == 0);
	matcha_close(dev);
	fake_free(fd);
}

/* A block of register map 1.1 keeps CONTROL bit 0 only: CPU_PORT does not stay set. */
void test_app_control_bit_the_block_lacks(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_with_app_block(&fd);
	CHECK(dev);
	fd->app.version = 1u << MATCHA_HW_APP_VERSION_MAJOR_SHIFT | 1;
	fd->app.control_bits = TX_PIPELINE;
	uint32_t now;
	CHECK_RC(dev, matcha_app_control(dev, CPU_PORT, 0, &now), MATCHA_ENOTSUP);
	CHECK_MSG(strstr(matcha_last_error(dev), "CONTROL bits 0x2 do not stay set: the block's "
			 "register map 1.1 lacks them"), "%s", matcha_last_error(dev));
	CHECK(now == 0);
	CHECK_OK(dev, matcha_app_control(dev, TX_PIPELINE, CPU_PORT, &now));
	CHECK(now == TX_PIPELINE && fd->app.control == TX_PIPELINE);
	matcha_close(dev);
	fake_free(fd);
}

void test_app_packet_outs(void)
{
	struct fake_dev *fd;
	matcha_dev *dev = open_with_app_block(&fd);
	CHECK(dev);
	fd->app.packet_outs = 0xFFFFFFF0u;
	fd->app.wrong_port = 7;
	fd->app.malformed = 3;
	struct matcha_app_packet_outs c;
	CHECK_OK(dev, matcha_app_packet_outs(dev, &c));
	CHECK(c.taken == 0xFFFFFFF0u && c.wrong_port == 7 && c.malformed == 3);
	matcha_close(dev);
	fake_free(fd);
}
