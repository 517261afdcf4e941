/* SPDX-License-Identifier: Apache-2.0 */
/*
 * matcha_open(): device URIs and the memory-mapped backends.
 *
 *   mqnic:/dev/mqnicN   Corundum's character device: the application region (index 1),
 *                       found with the region-info ioctl and mapped at its mmap offset
 *   pci:DDDD:BB:DD.F    the PCI device's BAR 2 through sysfs (.../resource2), at offset 0;
 *                       pci:/path/to/resourceN maps that file instead
 *   sim:PATH            a simulator's control socket (sim.c, docs/sim-socket.md)
 *   serial:DEV[@BAUD]   the same messages over a serial line to a board's UART bridge (sim.c)
 *
 * A mapped window is bounds-checked on every access, so a register beyond the mapping is a
 * bus error with a message, never a SIGBUS or a stray access. Behind Corundum (both mapped
 * backends) the AXI-Lite response codes never reach the host, so when the window is
 * Matcha's Corundum application block the backend reads the block's record of refused
 * accesses after every access and reports a refused one as a bus error.
 */
/* mmap, ioctl, O_CLOEXEC, MSG_NOSIGNAL, SOCK_CLOEXEC */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/*
 * Corundum's region-info ioctl (driver/mqnic/mqnic_ioctl.h, API version 0): the caller sets
 * argsz and index; the driver fills in the rest. The app region has type 0x1002 and is
 * mapped at offset index << 40 of the character device.
 */
#define MQNIC_IOCTL_TYPE 0x88
#define MQNIC_IOCTL_GET_REGION_INFO _IO(MQNIC_IOCTL_TYPE, 0xC0 + 2)
#define MQNIC_REGION_TYPE_APP_CTRL 0x00001002u
#define MQNIC_APP_REGION 1u

struct mqnic_region_info {
	uint32_t argsz;
	uint32_t flags;
	uint32_t index;
	uint32_t type;
	uint32_t next;
	uint32_t child;
	uint64_t size;
	uint64_t offset;
	uint8_t name[32];
};

/* The bus error code of an access outside the mapping. */
#define MMAP_OUT_OF_RANGE 1
#define MMAP_REFUSED 2

/* Matcha's Corundum application block (ip/corundum/README.md, "Control: the app BAR"): its
 * own registers from MATCHA_HW_APP_BASE; from register map 1.1 on, ERROR_ADDRESS and ERROR
 * record the last access it answered with SLVERR (ERROR_SEEN: one happened, ERROR_WRITE: a
 * write, ERROR_COUNT: how many since ERROR was written; writing ERROR clears it). */
#define APP_ERRORS_MAJOR 1
#define APP_ERRORS_MINOR 1
#define APP_ID_REG APP_REG(MATCHA_HW_APP_ID)
#define APP_VERSION_REG APP_REG(MATCHA_HW_APP_VERSION)
#define APP_ERROR_ADDRESS_REG APP_REG(MATCHA_HW_APP_ERROR_ADDRESS)
#define APP_ERROR_REG APP_REG(MATCHA_HW_APP_ERROR)

struct mmap_regs {
	volatile uint32_t *base;
	size_t size;
	bool app_errors; /* the window is an app block that records refused accesses */
	char desc[160];  /* the last failure in words */
};

/* After an access: MMAP_REFUSED, with the record in words, if the app block refused one
 * since the last check (the record is cleared), else 0. */
static int refused_access(struct mmap_regs *m)
{
	if (!m->app_errors)
		return 0;
	uint32_t error = m->base[APP_ERROR_REG / 4];
	if (!(error & MATCHA_HW_APP_ERROR_SEEN))
		return 0;
	uint32_t addr = m->base[APP_ERROR_ADDRESS_REG / 4];
	m->base[APP_ERROR_REG / 4] = 0;
	unsigned count = (error >> MATCHA_HW_APP_ERROR_COUNT_SHIFT) & MATCHA_HW_APP_ERROR_COUNT_MASK;
	snprintf(m->desc, sizeof m->desc, "the app block answered SLVERR (no such register) to "
		 "a %s of 0x%06x%s", error & MATCHA_HW_APP_ERROR_WRITE ? "write" : "read", (unsigned)addr,
		 count > 1 ? " (the last of several refused accesses)" : "");
	return MMAP_REFUSED;
}

static int mmap_read32(void *ctx, uint32_t addr, uint32_t *val)
{
	struct mmap_regs *m = ctx;
	if (addr % 4 || (size_t)addr + 4 > m->size)
		return MMAP_OUT_OF_RANGE;
	*val = m->base[addr / 4];
	return refused_access(m);
}

static int mmap_write32(void *ctx, uint32_t addr, uint32_t val)
{
	struct mmap_regs *m = ctx;
	if (addr % 4 || (size_t)addr + 4 > m->size)
		return MMAP_OUT_OF_RANGE;
	m->base[addr / 4] = val;
	return refused_access(m);
}

static const char *mmap_describe(void *ctx, int rc)
{
	struct mmap_regs *m = ctx;
	if (rc == MMAP_OUT_OF_RANGE)
		snprintf(m->desc, sizeof m->desc, "the address is outside the 0x%zx-byte mapping",
			 m->size);
	return m->desc;
}

static void mmap_release(void *ctx)
{
	struct mmap_regs *m = ctx;
	munmap((void *)m->base, m->size);
	free(m);
}

static const struct matcha_regs_ops mmap_ops = { mmap_read32, mmap_write32 };

/* Maps `size` bytes of `fd` at `offset` as the backend of `dev`; closes fd. */
static int map_window(matcha_dev *dev, int fd, const char *path, uint64_t offset,
		      uint64_t size)
{
	if (size < MATCHA_HW_INFO_WINDOW_BYTES) {
		close(fd);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: the window is only 0x%llx bytes; a "
				   "Matcha control window has at least the 64 KiB info block",
				   path, (unsigned long long)size);
	}
	if (size > (uint64_t)UINT32_MAX + 1)
		size = (uint64_t)UINT32_MAX + 1; /* register addresses are 32 bits */
	struct mmap_regs *m = calloc(1, sizeof *m);
	if (!m) {
		close(fd);
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the mapping of %s", path);
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
	int err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		free(m);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: mmap of 0x%llx bytes at offset 0x%llx "
				   "failed: %s", path, (unsigned long long)size,
				   (unsigned long long)offset, strerror(err));
	}
	m->base = p;
	m->size = size;
	/* Matcha's app block with the record of refused accesses: start from a clean one. */
	uint32_t app_version = size >= APP_ERROR_REG + 4 ? m->base[APP_VERSION_REG / 4] : 0;
	m->app_errors = size >= APP_ERROR_REG + 4 && m->base[APP_ID_REG / 4] == MATCHA_HW_APP_ID_VALUE &&
			app_version >> MATCHA_HW_APP_VERSION_MAJOR_SHIFT == APP_ERRORS_MAJOR &&
			(app_version & MATCHA_HW_APP_VERSION_MINOR_MASK) >= APP_ERRORS_MINOR;
	if (m->app_errors)
		m->base[APP_ERROR_REG / 4] = 0;
	dev->ops = mmap_ops;
	dev->ctx = m;
	dev->backend = (struct matcha_backend){ mmap_release, mmap_describe, size };
	return 0;
}

static int open_rw(matcha_dev *dev, const char *path, const char *what, int *fd)
{
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0)
		return matcha_fail(dev, MATCHA_ENODEV, "cannot open %s (%s): %s", path, what,
				   strerror(errno));
	return 0;
}

static int open_mqnic(matcha_dev *dev, const char *path)
{
	int fd, rc;
	if ((rc = open_rw(dev, path, "Corundum mqnic device", &fd)))
		return rc;
	struct mqnic_region_info info = { .argsz = sizeof info, .index = MQNIC_APP_REGION };
	if (ioctl(fd, MQNIC_IOCTL_GET_REGION_INFO, &info) != 0) {
		int err = errno;
		close(fd);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: the region-info ioctl for region %u "
				   "failed: %s (not a Corundum mqnic device?)", path,
				   MQNIC_APP_REGION, strerror(err));
	}
	if (info.type != MQNIC_REGION_TYPE_APP_CTRL) {
		close(fd);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: region %u has type 0x%04x, not the "
				   "application region (0x%04x): the bitstream has no app block",
				   path, MQNIC_APP_REGION, (unsigned)info.type,
				   MQNIC_REGION_TYPE_APP_CTRL);
	}
	return map_window(dev, fd, path, info.offset, info.size);
}

/* Whether text has the shape of pattern, where 'h' stands for a hex digit. */
static bool shaped(const char *text, const char *pattern)
{
	for (; *pattern; text++, pattern++) {
		bool hex = (*text >= '0' && *text <= '9') || (*text >= 'a' && *text <= 'f') ||
			   (*text >= 'A' && *text <= 'F');
		if (*pattern == 'h' ? !hex : *text != *pattern)
			return false;
	}
	return *text == '\0';
}

/* "DDDD:BB:DD.F" or "BB:DD.F" (domain 0): the sysfs name, always with the domain. */
static bool pci_name(const char *bdf, char *name, size_t len)
{
	char full[16];
	if (shaped(bdf, "hh:hh.h"))
		snprintf(full, sizeof full, "0000:%s", bdf);
	else if (shaped(bdf, "hhhh:hh:hh.h"))
		snprintf(full, sizeof full, "%s", bdf);
	else
		return false;
	unsigned long slot = strtoul(full + 8, NULL, 16), fn = strtoul(full + 11, NULL, 16);
	if (slot > 0x1F || fn > 7)
		return false;
	for (size_t i = 0; full[i] && i + 1 < len; i++)
		name[i] = (char)(full[i] >= 'A' && full[i] <= 'F' ? full[i] + ('a' - 'A') : full[i]);
	name[strlen(full) < len ? strlen(full) : len - 1] = '\0';
	return true;
}

static int open_pci(matcha_dev *dev, const char *arg)
{
	char path[256], name[32];
	if (arg[0] == '/')
		snprintf(path, sizeof path, "%s", arg);
	else if (pci_name(arg, name, sizeof name))
		snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/resource2", name);
	else
		return matcha_fail(dev, MATCHA_EINVAL, "pci:%s: not a PCI address (DDDD:BB:DD.F, "
				   "e.g. pci:0000:01:00.0) nor the path of a resource file", arg);
	int fd, rc;
	struct stat st;
	if ((rc = open_rw(dev, path, "PCI BAR 2", &fd)))
		return rc;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: %s", path, strerror(err));
	}
	return map_window(dev, fd, path, 0, (uint64_t)st.st_size);
}

int matcha_open(const char *uri, matcha_dev **devp)
{
	matcha_dev *dev = matcha_dev_new();
	*devp = dev;
	if (!dev)
		return MATCHA_ENOMEM;
	if (!uri)
		return matcha_fail(dev, MATCHA_EINVAL, "no device URI");
	if (!(dev->uri = strdup(uri)))
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the device URI");
	const char *colon = strchr(uri, ':');
	size_t scheme = colon ? (size_t)(colon - uri) : 0;
	const char *arg = colon ? colon + 1 : "";
	int rc;
	if (!colon || !*arg)
		return matcha_fail(dev, MATCHA_EINVAL, "device URI \"%s\" is not SCHEME:ARGUMENT "
				   "(mqnic:/dev/mqnic0, pci:0000:01:00.0, sim:PATH, serial:/dev/ttyUSB1)", uri);
	if (scheme == 5 && !strncmp(uri, "mqnic", 5))
		rc = open_mqnic(dev, arg);
	else if (scheme == 3 && !strncmp(uri, "pci", 3))
		rc = open_pci(dev, arg);
	else if (scheme == 3 && !strncmp(uri, "sim", 3))
		rc = matcha_sim_connect(dev, arg);
	else if (scheme == 6 && !strncmp(uri, "serial", 6))
		rc = matcha_serial_open(dev, arg);
	else
		return matcha_fail(dev, MATCHA_EINVAL, "unknown device URI scheme \"%.*s\" in \"%s\" "
				   "(mqnic:, pci:, sim: or serial:)", (int)scheme, uri, uri);
	if (rc)
		return rc;
	struct matcha_regs_ops ops = dev->ops;
	return matcha_dev_attach(dev, &ops, dev->ctx);
}
