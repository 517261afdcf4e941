/* SPDX-License-Identifier: Apache-2.0 */
/* matcha_open(): URI parsing, the mapped backends on ordinary files, the sim: socket. */
#define _GNU_SOURCE /* pread, pwrite */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fake_dev.h"
#include "internal.h"
#include "sim_server.h"

/* matcha_open(uri) must fail with `want` and a message containing `needle`. */
static bool open_fails(const char *uri, int want, const char *needle)
{
	matcha_dev *dev;
	int rc = matcha_open(uri, &dev);
	bool ok = rc == want && dev && strstr(matcha_last_error(dev), needle) &&
		  matcha_table_count(dev) == 0;
	if (!ok)
		check_fail(__FILE__, __LINE__, "matcha_open(\"%s\") returned %d, \"%s\"; expected %d "
			   "and \"%s\"", uri ? uri : "NULL", rc, matcha_last_error(dev), want, needle);
	matcha_close(dev);
	return ok;
}

void test_open_uri_errors(void)
{
	CHECK(open_fails(NULL, MATCHA_EINVAL, "no device URI"));
	CHECK(open_fails("", MATCHA_EINVAL, "is not SCHEME:ARGUMENT"));
	CHECK(open_fails("/dev/mqnic0", MATCHA_EINVAL, "is not SCHEME:ARGUMENT"));
	CHECK(open_fails("mqnic:", MATCHA_EINVAL, "is not SCHEME:ARGUMENT"));
	CHECK(open_fails("uio:/dev/uio0", MATCHA_EINVAL, "unknown device URI scheme \"uio\""));
	CHECK(open_fails("MQNIC:/dev/mqnic0", MATCHA_EINVAL, "unknown device URI scheme"));
	CHECK(open_fails("pci:zz:00.0", MATCHA_EINVAL, "pci:zz:00.0: not a PCI address"));
	CHECK(open_fails("pci:0000:01:00.0x", MATCHA_EINVAL, "not a PCI address"));
	CHECK(open_fails("pci:0000:01:20.0", MATCHA_EINVAL, "not a PCI address")); /* slot > 31 */
	CHECK(open_fails("pci:0000:01:00.8", MATCHA_EINVAL, "not a PCI address")); /* function > 7 */
	CHECK(open_fails("pci: 01:00.0", MATCHA_EINVAL, "not a PCI address"));
	CHECK(open_fails("pci:0x1:00.0", MATCHA_EINVAL, "not a PCI address"));
	CHECK(open_fails("pci:1:0.0", MATCHA_EINVAL, "not a PCI address"));
	/* Addresses no machine has: what is opened shows how the address was read. */
	CHECK(open_fails("pci:fe:1f.7", MATCHA_ENODEV,
			 "cannot open /sys/bus/pci/devices/0000:fe:1f.7/resource2 (PCI BAR 2): "
			 "No such file or directory"));
	CHECK(open_fails("pci:FFFF:fe:1F.7", MATCHA_ENODEV,
			 "/sys/bus/pci/devices/ffff:fe:1f.7/resource2"));
	CHECK(open_fails("mqnic:/nonexistent/mqnic9", MATCHA_ENODEV,
			 "cannot open /nonexistent/mqnic9 (Corundum mqnic device): No such file"));
	CHECK(open_fails("sim:/nonexistent/matcha.sock", MATCHA_ENODEV,
			 "sim:/nonexistent/matcha.sock: cannot connect: No such file or directory "
			 "(is the simulator running?)"));
	char longpath[200];
	memset(longpath, 'a', sizeof longpath);
	memcpy(longpath, "sim:/", 5);
	longpath[sizeof longpath - 1] = '\0';
	CHECK(open_fails(longpath, MATCHA_EINVAL, "a socket path is at most 107 bytes"));
}

#define WINDOW MATCHA_HW_INFO_WINDOW_BYTES
#define DESCRIPTOR_AT(i) (MATCHA_HW_INFO_DESCRIPTORS + MATCHA_HW_INFO_DESCRIPTOR_BYTES * (i))

/* A register file: the info block with `objects` descriptors, `bytes` long. */
static void write_window_file(const char *path, size_t bytes, unsigned objects)
{
	uint32_t *w = calloc(1, bytes < 0x100 ? 0x100 : bytes);
	w[MATCHA_HW_INFO_MAGIC / 4] = MATCHA_HW_INFO_MAGIC_VALUE;
	w[MATCHA_HW_INFO_VERSION / 4] = MATCHA_HW_INFO_VERSION_VALUE;
	w[MATCHA_HW_INFO_BUILD_ID / 4] = 0x12345678;
	w[MATCHA_HW_INFO_OBJECTS / 4] = objects;
	for (unsigned i = 0; i < objects; i++) {
		/* ternary tables: nothing is probed at open */
		uint32_t d[MATCHA_HW_DESC_WORDS] = {
			[MATCHA_HW_DESC_KIND_WORD] = MATCHA_HW_KIND_TERNARY,
			[MATCHA_HW_DESC_KEY_BITS_WORD] = 104,
			[MATCHA_HW_DESC_SIZE_WORD] = 64,
			[MATCHA_HW_DESC_DATA_BITS_WORD] = 8,
			[MATCHA_HW_DESC_BASE_WORD] = WINDOW * (i + 1),
			[MATCHA_HW_DESC_LATENCY_WORD] = 7,
		};
		memcpy(&w[DESCRIPTOR_AT(i) / 4], d, sizeof d);
	}
	FILE *f = fopen(path, "wb");
	fwrite(w, 1, bytes, f);
	fclose(f);
	free(w);
}

void test_open_pci_resource_file(void)
{
	char path[64], uri[80];
	snprintf(path, sizeof path, "/tmp/matcha-test-%d.resource2", (int)getpid());
	snprintf(uri, sizeof uri, "pci:%s", path);
	write_window_file(path, 3 * WINDOW, 2);
	matcha_dev *dev;
	CHECK_OK(dev, matcha_open(uri, &dev));
	CHECK(matcha_table_count(dev) == 2 && matcha_build_id(dev) == 0x12345678);
	struct matcha_table_info in;
	CHECK_OK(dev, matcha_table_info(dev, 1, &in));
	CHECK(in.kind == MATCHA_KIND_TERNARY && in.key_bits == 104 && in.base == 0x20000);

	/* Writes land in the file at their byte offset, reads come from it. */
	CHECK_OK(dev, matcha_reg_write(dev, 0x20044, 0xA5C3E10F));
	uint32_t word = 0, back = 0;
	int fd = open(path, O_RDWR);
	CHECK(pread(fd, &word, 4, 0x20044) == 4 && word == 0xA5C3E10F);
	word = 0x600DF00D;
	CHECK(pwrite(fd, &word, 4, 0x1FFFC) == 4);
	close(fd);
	CHECK_OK(dev, matcha_reg_read(dev, 0x1FFFC, &back));
	CHECK(back == 0x600DF00D);

	/* The last word of the mapping is in it; beyond: a bus error with a message, not a
	 * SIGBUS. */
	CHECK_OK(dev, matcha_reg_write(dev, 0x2FFFC, 0x0BADCAFE));
	CHECK_OK(dev, matcha_reg_read(dev, 0x2FFFC, &back));
	CHECK(back == 0x0BADCAFE);
	CHECK_RC(dev, matcha_reg_read(dev, 0x30000, &back), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "read of register 0x030000 failed: the address is "
		     "outside the 0x30000-byte mapping"));
	CHECK_RC(dev, matcha_reg_write(dev, 0xFFFFFFFC, 1), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "register 0xfffffffc failed"));
	matcha_close(dev);
	unlink(path);
}

/* Puts the 32-bit `value` at byte `offset` of the file at `path`. */
static void poke(const char *path, long offset, uint32_t value)
{
	int fd = open(path, O_RDWR);
	CHECK(pwrite(fd, &value, 4, offset) == 4);
	close(fd);
}

static uint32_t peek(const char *path, long offset)
{
	uint32_t value = 0;
	int fd = open(path, O_RDWR);
	if (pread(fd, &value, 4, offset) != 4)
		value = 0xFFFFFFFFu; /* no word there: never what a test expects */
	close(fd);
	return value;
}

/* Behind Corundum the app block's SLVERR never reaches the host: the mapped backends read
 * the block's record of refused accesses (ERROR, ERROR_ADDRESS) after every access and fail
 * the one that set it, with the refused address and kind. */
#define APP_VERSION(major, minor) ((uint32_t)(major) << MATCHA_HW_APP_VERSION_MAJOR_SHIFT | (minor))
/* An ERROR word: `count` refused accesses, the last a write or not. */
#define APP_ERROR_RECORD(count, write)                                                         \
	((uint32_t)(count) << MATCHA_HW_APP_ERROR_COUNT_SHIFT |                                \
	 ((write) ? MATCHA_HW_APP_ERROR_WRITE : 0) | MATCHA_HW_APP_ERROR_SEEN)
void test_open_app_block_errors(void)
{
	char path[64], uri[80];
	snprintf(path, sizeof path, "/tmp/matcha-test-%d.app", (int)getpid());
	snprintf(uri, sizeof uri, "pci:%s", path);
	write_window_file(path, APP_REG(MATCHA_HW_APP_ERROR) + 4, 2);
	poke(path, APP_REG(MATCHA_HW_APP_ID), MATCHA_HW_APP_ID_VALUE);
	poke(path, APP_REG(MATCHA_HW_APP_VERSION), APP_VERSION(1, 1));
	/* a stale record from before the open */
	poke(path, APP_REG(MATCHA_HW_APP_ERROR), APP_ERROR_RECORD(1, false));
	matcha_dev *dev;
	CHECK_OK(dev, matcha_open(uri, &dev));
	CHECK(peek(path, APP_REG(MATCHA_HW_APP_ERROR)) == 0); /* cleared at open */
	uint32_t back;
	CHECK_OK(dev, matcha_reg_read(dev, WINDOW, &back));

	/* The block refused the next access (in the file: the record appears). */
	poke(path, APP_REG(MATCHA_HW_APP_ERROR_ADDRESS), 0x7F0040);
	poke(path, APP_REG(MATCHA_HW_APP_ERROR), APP_ERROR_RECORD(1, true));
	CHECK_RC(dev, matcha_reg_write(dev, 0x20044, 1), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "write of 0x00000001 to register 0x020044 failed: "
		     "the app block answered SLVERR (no such register) to a write of 0x7f0040"));
	CHECK(peek(path, APP_REG(MATCHA_HW_APP_ERROR)) == 0);
	CHECK_OK(dev, matcha_reg_write(dev, 0x20044, 1));
	poke(path, APP_REG(MATCHA_HW_APP_ERROR_ADDRESS), 0x800014);
	poke(path, APP_REG(MATCHA_HW_APP_ERROR), APP_ERROR_RECORD(3, false));
	CHECK_RC(dev, matcha_reg_read(dev, WINDOW, &back), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "a read of 0x800014 (the last of several"));
	matcha_close(dev);

	/* Register map 1.0 has no record: the word there is not read as one. */
	poke(path, APP_REG(MATCHA_HW_APP_VERSION), APP_VERSION(1, 0));
	poke(path, APP_REG(MATCHA_HW_APP_ERROR), APP_ERROR_RECORD(1, true));
	CHECK_OK(dev, matcha_open(uri, &dev));
	CHECK_OK(dev, matcha_reg_read(dev, WINDOW, &back));
	CHECK(peek(path, APP_REG(MATCHA_HW_APP_ERROR)) == APP_ERROR_RECORD(1, true));
	matcha_close(dev);
	unlink(path);
}

void test_open_short_mapping(void)
{
	char path[64], uri[80];
	snprintf(path, sizeof path, "/tmp/matcha-test-%d.short", (int)getpid());
	snprintf(uri, sizeof uri, "pci:%s", path);
	/* Two tables described, only the first window there. */
	write_window_file(path, 2 * WINDOW, 2);
	CHECK(open_fails(uri, MATCHA_ENODEV, "table 1: its window 0x20000..0x2ffff lies beyond "
			 "the 0x20000 bytes mapped"));
	write_window_file(path, 100, 0);
	CHECK(open_fails(uri, MATCHA_ENODEV, "the window is only 0x64 bytes"));
	/* A file that is no Corundum device refuses the region-info ioctl. */
	snprintf(uri, sizeof uri, "mqnic:%s", path);
	CHECK(open_fails(uri, MATCHA_ENODEV, "the region-info ioctl for region 1 failed"));
	unlink(path);
}

/* A fake of fake_standard_cfg served on `s` and opened over the socket, in *fd and *dev;
 * false (the test failed) if either fails. */
static bool open_over_socket(struct sim_server *s, struct fake_dev **fd, matcha_dev **dev)
{
	struct fake_cfg cfg = fake_standard_cfg();
	char uri[128];
	*fd = fake_new(&cfg);
	*dev = NULL;
	if (sim_server_start(s, *fd))
		return false;
	snprintf(uri, sizeof uri, "sim:%s", s->path);
	int rc = matcha_open(uri, dev);
	if (rc)
		check_fail(__FILE__, __LINE__, "matcha_open(\"%s\") returned %d: %s", uri, rc,
			   matcha_last_error(*dev));
	return rc == 0;
}

void test_open_sim_socket(void)
{
	struct fake_dev *fd;
	matcha_dev *dev;
	struct sim_server s;
	if (!open_over_socket(&s, &fd, &dev))
		return;
	CHECK(matcha_table_count(dev) == 4 && matcha_build_id(dev) == 0xC0FFEE01);
	struct matcha_lpm_level lv;
	CHECK_OK(dev, matcha_lpm_level(dev, 1, 11, &lv)); /* probed over the socket */
	CHECK(lv.fanout == 4 && lv.nodes == 2049);

	/* An entry goes through the socket into the fake, and reads back. */
	uint8_t key[6] = { 0x0A, 0xBC, 0xDE, 0xF0, 0x12, 0x34 }, data[5] = { 1, 2, 3, 4, 5 };
	uint32_t index;
	struct matcha_entry e;
	CHECK_OK(dev, matcha_exact_add(dev, 0, key, 44, 7, data, 40));
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, 0, key, 44, &index));
	const struct fake_entry *fe = &fd->table[0].entries[index];
	CHECK(fe->flags == (1u | 7u << 8) && fe->key[0] == 0xDEF01234 && fe->key[1] == 0xABC &&
	      fe->data[0] == 0x02030405 && fe->data[1] == 1);
	CHECK_OK(dev, matcha_exact_read(dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 7 && !memcmp(e.key, key, 6) && !memcmp(e.data, data, 5));
	matcha_close(dev);
	sim_server_stop(&s);
	CHECK(atomic_load(&s.served) > 100);
	fake_free(fd);
}

/* matcha-sim answers DECERR beyond its window: it has no Corundum app block, and the
 * refusal names the device and the simulator's answer. */
void test_open_sim_app_control_refused(void)
{
	struct fake_dev *fd;
	matcha_dev *dev;
	struct sim_server s;
	if (!open_over_socket(&s, &fd, &dev))
		return;
	s.decerr_from = MATCHA_HW_APP_BASE;
	char want[400];
	snprintf(want, sizeof want, "app_control: sim:%s is no Corundum Matcha application block: "
		 "its APP_ID could not be read (read of register 0x800000 failed: the simulator "
		 "answered DECERR", s.path);
	uint32_t now;
	CHECK_RC(dev, matcha_app_control(dev, MATCHA_HW_APP_CONTROL_CPU_PORT, 0, &now), MATCHA_ENODEV);
	CHECK_MSG(strstr(matcha_last_error(dev), want), "%s", matcha_last_error(dev));
	matcha_close(dev);
	sim_server_stop(&s);
	fake_free(fd);
}

void test_open_sim_bus_errors(void)
{
	struct fake_dev *fd;
	matcha_dev *dev;
	struct sim_server s;
	if (!open_over_socket(&s, &fd, &dev))
		return;
	s.decerr_from = 0x40000; /* table 3's window and above: no slave there */
	uint8_t v[13] = { 0 }, m[13] = { 0 };
	CHECK_RC(dev, matcha_ternary_add(dev, 3, v, m, 104, 1, 0, NULL, 0), MATCHA_EIO);
	CHECK_MSG(strstr(matcha_last_error(dev), "write of 0x00000000 to register 0x040040 failed: "
			 "the simulator answered DECERR (resp 3"), "%s", matcha_last_error(dev));
	/* The fake answers an unmapped register of a table window with SLVERR. */
	uint32_t val;
	CHECK_RC(dev, matcha_reg_read(dev, 0x10200, &val), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "read of register 0x010200 failed: the simulator "
		     "answered SLVERR (resp 2)"));
	/* The connection survives error answers. */
	CHECK_OK(dev, matcha_reg_read(dev, 0x0, &val));
	CHECK(val == MATCHA_HW_INFO_MAGIC_VALUE);
	/* An answer to another request: the stream is out of step and is dropped. */
	atomic_store(&s.wrong_op_at, atomic_load(&s.served));
	CHECK_RC(dev, matcha_reg_read(dev, 0x0, &val), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "answer is not for this request"));
	CHECK_RC(dev, matcha_reg_read(dev, 0x0, &val), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "the simulator closed the connection"));
	matcha_close(dev);
	sim_server_stop(&s);
	fake_free(fd);
}

void test_open_sim_closes_mid_transaction(void)
{
	struct fake_dev *fd;
	matcha_dev *dev;
	struct sim_server s;
	if (!open_over_socket(&s, &fd, &dev))
		return;
	/* The server takes the third request of the add and closes without answering. */
	atomic_store(&s.close_at, atomic_load(&s.served) + 2);
	uint8_t key[6] = { 1, 2, 3, 4, 5, 6 };
	CHECK_RC(dev, matcha_exact_add(dev, 0, key, 44, 1, NULL, 0), MATCHA_EIO);
	CHECK_MSG(strstr(matcha_last_error(dev), "failed: the simulator closed the connection "
			 "(sim:/tmp/matcha-test-"), "%s", matcha_last_error(dev));
	/* Every later call fails at once, with the same reason. */
	uint32_t val;
	CHECK_RC(dev, matcha_reg_read(dev, 0x0, &val), MATCHA_EIO);
	CHECK(strstr(matcha_last_error(dev), "read of register 0x000000 failed: the simulator "
		     "closed the connection"));
	matcha_close(dev);
	sim_server_stop(&s);
	fake_free(fd);
}

void test_open_serial_pty(void)
{
	struct fake_cfg cfg = fake_standard_cfg();
	struct fake_dev *fd = fake_new(&cfg);
	struct sim_server s;
	char uri[160];
	if (sim_server_start_pty(&s, fd))
		return;
	snprintf(uri, sizeof uri, "serial:%s@921600", s.path);
	matcha_dev *dev;
	CHECK_OK(dev, matcha_open(uri, &dev));
	CHECK(matcha_table_count(dev) == 4 && matcha_build_id(dev) == 0xC0FFEE01);

	/* An entry goes over the line into the fake, and reads back. */
	uint8_t key[6] = { 0x0A, 0xBC, 0xDE, 0xF0, 0x12, 0x34 }, data[5] = { 1, 2, 3, 4, 5 };
	uint32_t index;
	struct matcha_entry e;
	CHECK_OK(dev, matcha_exact_add(dev, 0, key, 44, 7, data, 40));
	CHECK_OK(dev, matcha_exact_lookup_sw(dev, 0, key, 44, &index));
	CHECK(fd->table[0].entries[index].flags == (1u | 7u << 8));
	CHECK_OK(dev, matcha_exact_read(dev, 0, index, &e));
	CHECK(e.valid && e.action_id == 7 && !memcmp(e.key, key, 6) && !memcmp(e.data, data, 5));
	/* An error answer names the board and the line. */
	uint32_t val;
	CHECK_RC(dev, matcha_reg_read(dev, 0x10200, &val), MATCHA_EIO);
	CHECK_MSG(strstr(matcha_last_error(dev), "the board answered SLVERR (resp 2) (serial:/dev/"),
		  "%s", matcha_last_error(dev));
	matcha_close(dev);
	sim_server_stop(&s);
	fake_free(fd);

	CHECK(open_fails("serial:/dev/ttyS0@12345", MATCHA_EINVAL, "is not DEVICE[@BAUD]"));
	CHECK(open_fails("serial:@115200", MATCHA_EINVAL, "is not DEVICE[@BAUD]"));
	CHECK(open_fails("serial:/nonexistent/tty", MATCHA_ENODEV, "cannot open the serial line"));
}
