/* SPDX-License-Identifier: Apache-2.0 */
/* Device handle: discovery, errors, register access and the table window protocol. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind.h"

/* Descriptor counts beyond this are taken as a misread block, not a real design. */
#define MAX_OBJECTS 4096
/* STATUS polls before a busy command counts as hung; CLEAR of the largest RAM is ~1M clocks
 * and every poll is at least one bus round trip. */
#define BUSY_POLLS 10000000u

const char *matcha_strerror(int err)
{
	switch (err) {
	case MATCHA_OK: return "success";
	case MATCHA_EIO: return "register access failed";
	case MATCHA_ENODEV: return "not a usable Matcha device";
	case MATCHA_EVERSION: return "unsupported register map version";
	case MATCHA_EINVAL: return "invalid argument";
	case MATCHA_ENOTABLE: return "no such table";
	case MATCHA_EKIND: return "wrong table kind";
	case MATCHA_E2BIG: return "value wider than the table's field";
	case MATCHA_EEXIST: return "entry exists";
	case MATCHA_ENOENT: return "no such entry";
	case MATCHA_ENOSPC: return "table full";
	case MATCHA_ENOMEM: return "out of memory";
	case MATCHA_ETIMEDOUT: return "table command timed out";
	case MATCHA_EHW: return "table command failed";
	case MATCHA_ENOTSUP: return "the hardware lacks that feature";
	case MATCHA_ELAYOUT: return "layout file unusable or missing";
	default: return "unknown error";
	}
}

int matcha_fail(matcha_dev *dev, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dev->error, sizeof dev->error, fmt, ap);
	va_end(ap);
	return err;
}

const char *matcha_last_error(const matcha_dev *dev)
{
	return dev ? dev->error : "no device handle (out of memory)";
}

int matcha_reg_read(matcha_dev *dev, uint32_t addr, uint32_t *val)
{
	int rc = dev->ops.read32(dev->ctx, addr, val);
	if (rc && dev->backend.describe)
		return matcha_fail(dev, MATCHA_EIO, "read of register 0x%06x failed: %s",
				   (unsigned)addr, dev->backend.describe(dev->ctx, rc));
	if (rc)
		return matcha_fail(dev, MATCHA_EIO, "read of register 0x%06x failed (backend error %d)",
				   (unsigned)addr, rc);
	return 0;
}

int matcha_reg_write(matcha_dev *dev, uint32_t addr, uint32_t val)
{
	int rc = dev->ops.write32(dev->ctx, addr, val);
	if (rc && dev->backend.describe)
		return matcha_fail(dev, MATCHA_EIO, "write of 0x%08x to register 0x%06x failed: %s",
				   (unsigned)val, (unsigned)addr, dev->backend.describe(dev->ctx, rc));
	if (rc)
		return matcha_fail(dev, MATCHA_EIO,
				   "write of 0x%08x to register 0x%06x failed (backend error %d)",
				   (unsigned)val, (unsigned)addr, rc);
	return 0;
}

/* ---------------------------------------------------------------------- discovery */

static int check_descriptor(matcha_dev *dev, struct matcha_table *t)
{
	const struct matcha_table_info *in = &t->info;
	unsigned i = t->index;

	/* A code the registry lacks, though the generator may name it, is unknown here. */
	if (!t->ops)
		return matcha_fail(dev, MATCHA_ENODEV, "descriptor %u has unknown kind %u", i,
				   in->kind);
	if (in->key_bits == 0 || in->key_bits > MATCHA_MAX_KEY_BITS)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: key width %u is not in 1..%d", i,
				   in->key_bits, MATCHA_MAX_KEY_BITS);
	if (in->data_bits > MATCHA_MAX_DATA_BITS)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: action data width %u exceeds %d",
				   i, in->data_bits, MATCHA_MAX_DATA_BITS);
	if (in->size == 0)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: size is 0", i);
	if (in->base % MATCHA_HW_INFO_WINDOW_BYTES != 0 || in->base < MATCHA_HW_INFO_WINDOW_BYTES)
		return matcha_fail(dev, MATCHA_ENODEV,
				   "table %u: window base 0x%x is not a 64 KiB window after the "
				   "info block", i, (unsigned)in->base);
	uint64_t mapped = dev->backend.window_bytes;
	if (mapped && (uint64_t)in->base + MATCHA_HW_INFO_WINDOW_BYTES > mapped)
		return matcha_fail(dev, MATCHA_ENODEV, "table %u: its window 0x%x..0x%x lies beyond "
				   "the 0x%llx bytes mapped", i, (unsigned)in->base,
				   (unsigned)in->base + MATCHA_HW_INFO_WINDOW_BYTES - 1,
				   (unsigned long long)mapped);
	return 0;
}

static int read_descriptor(matcha_dev *dev, struct matcha_table *t)
{
	uint32_t w[MATCHA_HW_DESC_WORDS];
	uint32_t addr = MATCHA_HW_INFO_DESCRIPTORS + MATCHA_HW_INFO_DESCRIPTOR_BYTES * t->index;
	for (unsigned k = 0; k < MATCHA_HW_DESC_WORDS; k++) {
		int rc = matcha_reg_read(dev, addr + 4 * k, &w[k]);
		if (rc)
			return rc;
	}
	struct matcha_table_info *in = &t->info;
	/* Kind flags beyond those known here would be new features: ignored. */
	uint32_t kind = w[MATCHA_HW_DESC_KIND_WORD];
	in->kind = KIND_CODE(kind);
	in->counters = kind & MATCHA_HW_KIND_COUNTERS;
	in->default_action = kind & MATCHA_HW_KIND_DEFAULT_ACTION;
	in->key_bits = w[MATCHA_HW_DESC_KEY_BITS_WORD];
	in->size = w[MATCHA_HW_DESC_SIZE_WORD];
	in->data_bits = w[MATCHA_HW_DESC_DATA_BITS_WORD];
	in->base = w[MATCHA_HW_DESC_BASE_WORD];
	in->latency = w[MATCHA_HW_DESC_LATENCY_WORD];
	t->ops = matcha_kind(in->kind);
	t->key_bytes = div_ceil(in->key_bits, 8);
	t->key_words = div_ceil(in->key_bits, 32);
	t->data_bytes = div_ceil(in->data_bits, 8);
	t->data_words = div_ceil(in->data_bits, 32);

	t->indexes = in->size;
	int rc = check_descriptor(dev, t);
	if (rc)
		return rc;
	/* The geometry word (ways, levels, meter widths), the extra word and the kind flags are
	 * the kind's; so are indexes beyond `size`, which the counters then cover too. */
	if ((rc = t->ops->init(dev, t, w)))
		return rc;
	return matcha_counters_init(dev, t);
}

static void free_tables(matcha_dev *dev)
{
	for (unsigned i = 0; i < dev->ntables; i++) {
		struct matcha_table *t = &dev->tables[i];
		if (t->ops && t->ops->release)
			t->ops->release(t);
		matcha_counters_free(t);
		free(t->refused);
	}
	free(dev->tables);
	dev->tables = NULL;
	dev->ntables = 0;
}

static int discover(matcha_dev *dev)
{
	uint32_t magic, objects;
	int rc;

	if ((rc = matcha_reg_read(dev, MATCHA_HW_INFO_MAGIC, &magic)))
		return rc;
	if (magic != MATCHA_HW_INFO_MAGIC_VALUE)
		return matcha_fail(dev, MATCHA_ENODEV,
				   "magic is 0x%08x, a Matcha block has 0x%08x (\"MTCH\")",
				   (unsigned)magic, MATCHA_HW_INFO_MAGIC_VALUE);
	if ((rc = matcha_reg_read(dev, MATCHA_HW_INFO_VERSION, &dev->version)))
		return rc;
	if (VERSION_MAJOR(dev->version) != MATCHA_VERSION_MAJOR)
		return matcha_fail(dev, MATCHA_EVERSION,
				   "register map version is %u.%u, this driver speaks %d.x",
				   (unsigned)VERSION_MAJOR(dev->version),
				   (unsigned)VERSION_MINOR(dev->version),
				   MATCHA_VERSION_MAJOR);
	if ((rc = matcha_reg_read(dev, MATCHA_HW_INFO_BUILD_ID, &dev->build_id)))
		return rc;
	if ((rc = matcha_reg_read(dev, MATCHA_HW_INFO_OBJECTS, &objects)))
		return rc;
	if (objects > MAX_OBJECTS)
		return matcha_fail(dev, MATCHA_ENODEV, "OBJECTS is %u, more than %d descriptors",
				   (unsigned)objects, MAX_OBJECTS);

	dev->tables = calloc(objects ? objects : 1, sizeof *dev->tables);
	if (!dev->tables)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for %u table descriptors",
				   (unsigned)objects);
	for (unsigned i = 0; i < objects; i++) {
		dev->tables[i].dev = dev;
		dev->tables[i].index = i;
		dev->ntables = i + 1; /* so that free_tables() sees what was set up */
		if ((rc = read_descriptor(dev, &dev->tables[i])))
			return rc;
	}
	return 0;
}

matcha_dev *matcha_dev_new(void)
{
	return calloc(1, sizeof(matcha_dev));
}

int matcha_open_ops(const struct matcha_regs_ops *ops, void *ctx, matcha_dev **devp)
{
	matcha_dev *dev = matcha_dev_new();
	*devp = dev;
	if (!dev)
		return MATCHA_ENOMEM;
	return matcha_dev_attach(dev, ops, ctx);
}

int matcha_dev_attach(matcha_dev *dev, const struct matcha_regs_ops *ops, void *ctx)
{
	if (!ops || !ops->read32 || !ops->write32)
		return matcha_fail(dev, MATCHA_EINVAL, "register access ops lack read32 or write32");
	dev->ops = *ops;
	dev->ctx = ctx;
	int rc = discover(dev);
	if (rc)
		free_tables(dev);
	else
		dev->error[0] = '\0'; /* LPM capacity probes leave expected range errors */
	return rc;
}

void matcha_close(matcha_dev *dev)
{
	if (!dev)
		return;
	matcha_layout_free(dev);
	free_tables(dev);
	if (dev->backend.release)
		dev->backend.release(dev->ctx);
	free(dev->uri);
	free(dev);
}

uint32_t matcha_version(const matcha_dev *dev) { return dev->version; }
uint32_t matcha_build_id(const matcha_dev *dev) { return dev->build_id; }
unsigned matcha_table_count(const matcha_dev *dev) { return dev->ntables; }

int matcha_table_for(matcha_dev *dev, unsigned table, unsigned kind, const char *op,
		     struct matcha_table **t)
{
	*t = NULL;
	if (table >= dev->ntables)
		return matcha_fail(dev, MATCHA_ENOTABLE, "%s: table %u does not exist (%u tables)",
				   op, table, dev->ntables);
	*t = &dev->tables[table];
	if ((*t)->refused && strcmp(op, "table_clear") && strcmp(op, "table_info"))
		return matcha_fail(dev, MATCHA_EHW, "%s: %s; matcha_table_clear() starts it over",
				   op, (*t)->refused);
	if (kind && (*t)->info.kind != kind)
		return matcha_fail(dev, MATCHA_EKIND, "%s: table %u is of kind %s, not %s", op,
				   table, matcha_kind_name((*t)->info.kind), matcha_kind_name(kind));
	return 0;
}

int matcha_table_info(matcha_dev *dev, unsigned table, struct matcha_table_info *info)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, 0, "table_info", &t);
	if (rc)
		return rc;
	*info = t->info;
	return 0;
}

/* ------------------------------------------------------------------ window protocol */

static int wait_idle(matcha_dev *dev, struct matcha_table *t, uint32_t cmd, uint32_t index)
{
	uint32_t status;
	for (uint32_t polls = 0; polls < BUSY_POLLS; polls++) {
		int rc = matcha_reg_read(dev, t->info.base + MATCHA_HW_WIN_STATUS, &status);
		if (rc)
			return rc;
		if (status & MATCHA_HW_STATUS_BUSY)
			continue;
		if (STATUS_ERROR(status) == MATCHA_HW_STATUS_ERROR_INDEX_RANGE)
			return matcha_fail(dev, MATCHA_EHW,
					   "table %u: command %u: index 0x%x out of range",
					   t->index, (unsigned)cmd, (unsigned)index);
		if (STATUS_ERROR(status))
			return matcha_fail(dev, MATCHA_EHW, "table %u: command %u on index 0x%x "
					   "failed with error %u", t->index, (unsigned)cmd,
					   (unsigned)index, (unsigned)STATUS_ERROR(status));
		return 0;
	}
	return matcha_fail(dev, MATCHA_ETIMEDOUT, "table %u: command %u still busy after %u "
			   "STATUS reads", t->index, (unsigned)cmd, BUSY_POLLS);
}

int matcha_window_command(matcha_dev *dev, struct matcha_table *t, uint32_t cmd,
			  uint32_t index)
{
	int rc;
	uint32_t base = t->info.base;
	bool indexed = cmd == MATCHA_HW_CMD_WRITE || cmd == MATCHA_HW_CMD_READ || cmd == MATCHA_HW_CMD_ZERO ||
		       cmd == MATCHA_HW_CMD_RANGE_SLOT || cmd == MATCHA_HW_CMD_RANGE_SPAN ||
		       cmd == MATCHA_HW_CMD_RANGE_REBUILD;
	if (indexed && (rc = matcha_reg_write(dev, base + MATCHA_HW_WIN_INDEX, index)))
		return rc;
	if ((rc = matcha_reg_write(dev, base + MATCHA_HW_WIN_CMD, cmd)))
		return rc;
	return wait_idle(dev, t, cmd, index);
}

static int write_words(matcha_dev *dev, uint32_t addr, const uint32_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc = matcha_reg_write(dev, addr + 4 * i, w[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int matcha_window_stage(matcha_dev *dev, struct matcha_table *t, const struct staged_entry *e)
{
	uint32_t base = t->info.base;
	int rc;
	if (e->key && (rc = write_words(dev, base + MATCHA_HW_WIN_KEY, e->key, t->key_words)))
		return rc;
	if (e->mask && (rc = write_words(dev, base + MATCHA_HW_WIN_MASK, e->mask, t->key_words)))
		return rc;
	if (e->data && (rc = write_words(dev, base + MATCHA_HW_WIN_DATA, e->data, e->data_words)))
		return rc;
	if (e->has_priority && (rc = matcha_reg_write(dev, base + MATCHA_HW_WIN_PRIORITY, e->priority)))
		return rc;
	if (!e->no_flags && (rc = matcha_reg_write(dev, base + MATCHA_HW_WIN_FLAGS, e->flags)))
		return rc;
	return 0;
}

int matcha_window_write(matcha_dev *dev, struct matcha_table *t, uint32_t index,
			const struct staged_entry *e)
{
	int rc = matcha_window_stage(dev, t, e);
	return rc ? rc : matcha_window_command(dev, t, MATCHA_HW_CMD_WRITE, index);
}

struct staged_entry matcha_staged_key(const struct matcha_table *t, const uint8_t *canon,
				      uint8_t action_id, const uint32_t *data,
				      uint32_t *key_words)
{
	matcha_be_to_words(canon, t->key_bytes, key_words, t->key_words);
	return (struct staged_entry){
		.flags = MATCHA_HW_FLAGS_VALID | FLAGS_ACTION(action_id),
		.key = key_words,
		.data = t->data_words ? data : NULL,
		.data_words = t->data_words,
	};
}

static int read_words(matcha_dev *dev, uint32_t addr, uint32_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int rc = matcha_reg_read(dev, addr + 4 * i, &w[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int matcha_window_read(matcha_dev *dev, struct matcha_table *t, uint32_t index,
		       struct matcha_entry *entry)
{
	uint32_t base = t->info.base, flags, words[MATCHA_HW_WIN_STAGING_WORDS];
	int rc;

	memset(entry, 0, sizeof *entry);
	if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_READ, index)))
		return rc;
	if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_FLAGS, &flags)))
		return rc;
	entry->valid = flags & MATCHA_HW_FLAGS_VALID;
	entry->action_id = FLAGS_ACTION_OF(flags);
	entry->key_bits = t->info.key_bits;
	entry->data_bits = t->info.data_bits;
	if ((rc = read_words(dev, base + MATCHA_HW_WIN_KEY, words, t->key_words)))
		return rc;
	matcha_words_to_be(words, t->key_words, entry->key, t->key_bytes);
	if ((rc = read_words(dev, base + MATCHA_HW_WIN_DATA, words, t->data_words)))
		return rc;
	matcha_words_to_be(words, t->data_words, entry->data, t->data_bytes);
	if (t->ops->masked) {
		if ((rc = read_words(dev, base + MATCHA_HW_WIN_MASK, words, t->key_words)))
			return rc;
		matcha_words_to_be(words, t->key_words, entry->mask, t->key_bytes);
		if ((rc = matcha_reg_read(dev, base + MATCHA_HW_WIN_PRIORITY, &entry->priority)))
			return rc;
	}
	return 0;
}

uint32_t matcha_window_index(const struct matcha_table *t, uint32_t i)
{
	return t->ops->window_index ? t->ops->window_index(t, i) : i;
}

/* Empties a table's shadow (and its handles): after CLEAR, before adoption and after a
 * refused one. */
static void reset_shadow(matcha_dev *dev, struct matcha_table *t)
{
	matcha_layout_table_cleared(dev, t->index);
	if (t->ops->reset)
		t->ops->reset(t);
	matcha_counters_reset(t);
}

int matcha_table_clear(matcha_dev *dev, unsigned table)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, 0, "table_clear", &t);
	if (rc)
		return rc;
	if ((rc = matcha_window_command(dev, t, MATCHA_HW_CMD_CLEAR, 0)))
		return rc;
	reset_shadow(dev, t);
	free(t->refused);
	t->refused = NULL;
	return 0;
}

int matcha_table_refuse(matcha_dev *dev, struct matcha_table *t, int rc)
{
	size_t len = strlen(dev->error) + 1;
	free(t->refused);
	if ((t->refused = malloc(len)))
		memcpy(t->refused, dev->error, len);
	else
		rc = matcha_fail(dev, MATCHA_ENOMEM, "no memory for the refusal of table %u", t->index);
	return rc;
}

int matcha_tables_adopt(matcha_dev *dev)
{
	int first = 0;
	char first_msg[sizeof dev->error];
	for (unsigned i = 0; i < dev->ntables; i++) {
		struct matcha_table *t = &dev->tables[i];
		free(t->refused);
		t->refused = NULL;
		reset_shadow(dev, t);
		/* A kind without adopt (meter arrays, session tables) keeps no shadow: it is
		 * left as it is. */
		int rc = t->ops->adopt ? t->ops->adopt(dev, t) : 0;
		if (!rc)
			rc = matcha_layout_table_adopted(dev, i);
		if (!rc)
			continue;
		reset_shadow(dev, t);
		/* What the hardware holds is refused; a failed access may pass on a retry. */
		if (rc == MATCHA_EHW || rc == MATCHA_ELAYOUT)
			rc = matcha_table_refuse(dev, t, rc);
		if (!first) {
			first = rc;
			memcpy(first_msg, dev->error, sizeof first_msg);
		}
	}
	if (first)
		return matcha_fail(dev, first, "%s", first_msg);
	dev->error[0] = '\0';
	return 0;
}

int matcha_read_u64(matcha_dev *dev, uint32_t addr, uint64_t *val)
{
	uint32_t lo, hi;
	int rc;
	/* The low word read latches the high word: low first. */
	if ((rc = matcha_reg_read(dev, addr, &lo)) || (rc = matcha_reg_read(dev, addr + 4, &hi)))
		return rc;
	*val = (uint64_t)hi << 32 | lo;
	return 0;
}

int matcha_table_counters(matcha_dev *dev, unsigned table, uint64_t *hits, uint64_t *misses)
{
	struct matcha_table *t;
	int rc = matcha_table_for(dev, table, 0, "table_counters", &t);
	if (rc || (rc = matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_HITS, hits)))
		return rc;
	return matcha_read_u64(dev, t->info.base + MATCHA_HW_WIN_MISSES, misses);
}

/* ----------------------------------------------------------------- value conversion */

void matcha_be_to_words(const uint8_t *be, unsigned nbytes, uint32_t *words, unsigned nwords)
{
	memset(words, 0, nwords * sizeof *words);
	for (unsigned i = 0; i < nbytes; i++) {
		unsigned bit = 8 * (nbytes - 1 - i); /* position of this byte's lsb */
		if (bit / 32 < nwords)
			words[bit / 32] |= (uint32_t)be[i] << (bit % 32);
	}
}

void matcha_words_to_be(const uint32_t *words, unsigned nwords, uint8_t *be, unsigned nbytes)
{
	for (unsigned i = 0; i < nbytes; i++) {
		unsigned bit = 8 * (nbytes - 1 - i);
		be[i] = bit / 32 < nwords ? (uint8_t)(words[bit / 32] >> (bit % 32)) : 0;
	}
}

int matcha_key_canonical(matcha_dev *dev, struct matcha_table *t, const uint8_t *key,
			 unsigned key_bits, uint8_t *canon)
{
	uint32_t words[MATCHA_HW_WIN_STAGING_WORDS];
	if (key_bits == 0)
		return matcha_fail(dev, MATCHA_EINVAL, "key of table %u is 0 bits", t->index);
	int rc = matcha_value_to_words(dev, t, "key", key, key_bits, t->info.key_bits, words);
	if (rc)
		return rc;
	matcha_words_to_be(words, t->key_words, canon, t->key_bytes);
	return 0;
}

int matcha_value_to_words(matcha_dev *dev, struct matcha_table *t, const char *what,
			  const uint8_t *be, unsigned bits, unsigned field_bits,
			  uint32_t *words)
{
	unsigned nwords = div_ceil(field_bits, 32);
	if (bits > field_bits)
		return matcha_fail(dev, MATCHA_E2BIG, "%s is %u bits, table %u takes %u", what,
				   bits, t->index, field_bits);
	if (bits && !be)
		return matcha_fail(dev, MATCHA_EINVAL, "%s is %u bits but its pointer is NULL",
				   what, bits);
	if (bits % 8 && be[0] >> (bits % 8))
		return matcha_fail(dev, MATCHA_EINVAL,
				   "%s is %u bits but has bits set above bit %u in its first byte "
				   "(0x%02x)", what, bits, bits - 1, be[0]);
	matcha_be_to_words(be, div_ceil(bits, 8), words, nwords);
	return 0;
}
