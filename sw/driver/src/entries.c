/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entries by name (matcha_entry_*): matches per key field and parameters per action,
 * turned into the keys and action data of the index-based calls, with a handle per entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* ---------------------------------------------------------------------- bit fields */

static bool value_bit(const struct matcha_value *v, unsigned i)
{
	return i < 8 * MATCHA_VALUE_BYTES && (v->be[MATCHA_VALUE_BYTES - 1 - i / 8] >> i % 8 & 1);
}

/* Bits needed to write the value (0 for 0). */
static unsigned value_width(const struct matcha_value *v)
{
	for (unsigned i = 0; i < MATCHA_VALUE_BYTES; i++)
		if (v->be[i])
			for (unsigned b = 8; b-- > 0;)
				if (v->be[i] >> b & 1)
					return 8 * (MATCHA_VALUE_BYTES - 1 - i) + b + 1;
	return 0;
}

static bool value_fits(const struct matcha_value *v, unsigned width)
{
	return value_width(v) <= width;
}

/* The value in hex ("0x1ff"), shortened in the middle if very long. */
static const char *value_hex(const struct matcha_value *v, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	unsigned nibbles = (value_width(v) + 3) / 4;
	size_t o = 0;
	buf[o++] = '0';
	buf[o++] = 'x';
	if (nibbles == 0)
		buf[o++] = '0';
	for (unsigned n = nibbles; n-- > 0 && o + 1 < len;) {
		uint8_t byte = v->be[MATCHA_VALUE_BYTES - 1 - n / 2];
		buf[o++] = digits[n % 2 ? byte >> 4 : byte & 0xF];
	}
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}

/* The value in decimal and hex ("16 (0x10)") when it fits 64 bits, else in hex. */
static const char *value_text(const struct matcha_value *v, char *buf, size_t len)
{
	if (value_width(v) > 64)
		return value_hex(v, buf, len);
	char hex[24];
	uint64_t x = 0;
	for (unsigned i = MATCHA_VALUE_BYTES - 8; i < MATCHA_VALUE_BYTES; i++)
		x = x << 8 | v->be[i];
	snprintf(buf, len, "%llu (%s)", (unsigned long long)x, value_hex(v, hex, sizeof hex));
	return buf;
}

/* Bit i (0 = least significant) of a big-endian byte string of nbytes bytes. */
static void set_bit(uint8_t *be, unsigned nbytes, unsigned i)
{
	be[nbytes - 1 - i / 8] |= (uint8_t)(1u << i % 8);
}

static bool get_bit(const uint8_t *be, unsigned nbytes, unsigned i)
{
	return be[nbytes - 1 - i / 8] >> i % 8 & 1;
}

/* Writes the low `width` bits of v at bit `offset` of be (which starts zeroed there). */
static void put_field(uint8_t *be, unsigned nbytes, unsigned offset, unsigned width,
		      const struct matcha_value *v)
{
	for (unsigned b = 0; b < width; b++)
		if (value_bit(v, b))
			set_bit(be, nbytes, offset + b);
}

static void get_field(const uint8_t *be, unsigned nbytes, unsigned offset, unsigned width,
		      struct matcha_value *v)
{
	memset(v, 0, sizeof *v);
	for (unsigned b = 0; b < width; b++)
		if (get_bit(be, nbytes, offset + b))
			v->be[MATCHA_VALUE_BYTES - 1 - b / 8] |= (uint8_t)(1u << b % 8);
}

/* A value with the top `len` of `width` bits set: a prefix mask. */
static void prefix_mask(struct matcha_value *m, unsigned width, unsigned len)
{
	memset(m, 0, sizeof *m);
	for (unsigned b = width - len; b < width; b++)
		m->be[MATCHA_VALUE_BYTES - 1 - b / 8] |= (uint8_t)(1u << b % 8);
}

static uint32_t value_u32(const struct matcha_value *v)
{
	const uint8_t *p = v->be + MATCHA_VALUE_BYTES - 4;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void value_from_u32(struct matcha_value *v, uint32_t x)
{
	memset(v, 0, sizeof *v);
	for (unsigned i = 0; i < 4; i++)
		v->be[MATCHA_VALUE_BYTES - 1 - i] = (uint8_t)(x >> 8 * i);
}

/*
 * On a range field a value and mask whose set bits are a prefix of the field's (a plain
 * value, a prefix, a wildcard) are the range *lo..*hi; false for any other mask.
 */
static bool range_of_mask(const struct matcha_value *value, const struct matcha_value *mask,
			  unsigned width, uint32_t *lo, uint32_t *hi)
{
	uint32_t m = value_u32(mask), top = width >= 32 ? UINT32_MAX : (uint32_t)((1ull << width) - 1);
	uint32_t free_bits = ~m & top;
	if (free_bits & (free_bits + 1))
		return false; /* the clear bits are not the low ones */
	if (lo)
		*lo = value_u32(value) & m;
	if (hi)
		*hi = (value_u32(value) & m) | free_bits;
	return true;
}

/* ------------------------------------------------------------------------- tables */

struct named {
	struct layout_table *lt;
	struct matcha_table *t;
	const struct matcha_kind_ops *ops;
	struct matcha_table_info info;
	unsigned key_bytes, data_bytes;
};

/* The table a by-name call names. */
static int table_named(matcha_dev *dev, const char *name, const char *op,
		       struct matcha_table **t)
{
	unsigned table;
	int rc;
	*t = NULL;
	if (!dev->layout)
		return matcha_fail(dev, MATCHA_ELAYOUT, "%s: no layout loaded: tables, actions and "
				   "parameters have names only with a layout file", op);
	if (!name)
		return matcha_fail(dev, MATCHA_EINVAL, "%s: no table name", op);
	if ((rc = matcha_table_by_name(dev, name, &table)))
		return rc;
	*t = &dev->tables[table];
	return 0;
}

/* A table handle's table with its layout, for a call on its entries. */
static int named(struct matcha_table *t, const char *op, struct named *n)
{
	matcha_dev *dev = t->dev;
	int rc;
	if (!dev->layout)
		return matcha_fail(dev, MATCHA_ELAYOUT, "%s: no layout loaded: tables, actions and "
				   "parameters have names only with a layout file", op);
	if (!matcha_layout_table(dev, t->index))
		return matcha_fail(dev, MATCHA_ENOTABLE, "%s: descriptor %u is no table of the "
				   "layout (it is a %s)", op, t->index, matcha_kind_name(t->info.kind));
	/* matcha_table_for: a table whose adoption was refused answers with the refusal. */
	if ((rc = matcha_table_for(dev, t->index, 0, op, &t)))
		return rc;
	n->t = t;
	n->ops = t->ops;
	n->info = t->info;
	n->lt = &dev->layout->tables[t->index];
	n->key_bytes = t->key_bytes;
	n->data_bytes = t->data_bytes;
	return 0;
}

static int named_table(matcha_dev *dev, const char *name, const char *op, struct named *n)
{
	struct matcha_table *t;
	int rc = table_named(dev, name, op, &t);
	return rc ? rc : named(t, op, n);
}

int matcha_table_get(matcha_dev *dev, const char *name, matcha_table **table)
{
	return table_named(dev, name, "table_get", table);
}

int matcha_table_at(matcha_dev *dev, unsigned index, matcha_table **table)
{
	*table = NULL;
	if (index >= dev->ntables)
		return matcha_fail(dev, MATCHA_ENOTABLE, "table_at: table %u does not exist (%u "
				   "tables)", index, dev->ntables);
	*table = &dev->tables[index];
	return 0;
}

unsigned matcha_table_index(const matcha_table *table) { return table->index; }

static const char *table_name(const struct named *n) { return n->lt->pub.name; }

/* A message of the index-based layer, prefixed with the table's name. */
static int wrap(matcha_dev *dev, int rc, const struct named *n)
{
	char msg[sizeof dev->error];
	memcpy(msg, dev->error, sizeof msg);
	return matcha_fail(dev, rc, "table %s: %s", table_name(n), msg);
}

/* "a, b, c": the names of `count` structs of `stride` bytes whose first member is a name. */
static const char *list_names(char *buf, size_t len, const void *items, size_t stride,
			      unsigned count)
{
	buf[0] = '\0';
	for (unsigned i = 0; i < count; i++) {
		const char *name = *(const char *const *)((const char *)items + i * stride);
		size_t at = strlen(buf);
		snprintf(buf + at, len - at, "%s%s", i ? ", " : "", name);
	}
	return buf;
}

/* ------------------------------------------------------------------ action data */

static int find_action(matcha_dev *dev, const struct named *n, const char *action,
		       const struct matcha_action_info **ac)
{
	const struct matcha_table_layout *tl = &n->lt->pub;
	*ac = action ? matcha_action_by_name(tl, action) : NULL;
	if (*ac)
		return 0;
	char names[256];
	return matcha_fail(dev, MATCHA_EINVAL, "table %s has no action \"%s\" (actions: %s)",
			   table_name(n), action ? action : "(null)",
			   list_names(names, sizeof names, tl->actions, sizeof *tl->actions,
				      tl->nactions));
}

/* Checks the parameters of an action and packs them into data (n->data_bytes bytes). */
static int pack_params(matcha_dev *dev, const struct named *n,
		       const struct matcha_action_info *ac, const struct matcha_value *params,
		       unsigned nparams, uint8_t *data)
{
	char hex[80];
	if (nparams != ac->nparams) {
		char names[256];
		list_names(names, sizeof names, ac->params, sizeof *ac->params, ac->nparams);
		return matcha_fail(dev, MATCHA_EINVAL, "action %s of table %s takes %u parameter%s"
				   "%s%s%s, %u given", ac->name, table_name(n), ac->nparams,
				   ac->nparams == 1 ? "" : "s", ac->nparams ? " (" : "", names,
				   ac->nparams ? ")" : "", nparams);
	}
	memset(data, 0, MATCHA_MAX_DATA_BYTES);
	for (unsigned p = 0; p < nparams; p++) {
		const struct matcha_param_info *pi = &ac->params[p];
		if (!value_fits(&params[p], pi->width) && pi->width < 64)
			return matcha_fail(dev, MATCHA_E2BIG, "parameter %s of action %s takes 0..%llu "
					   "(%u bits): %s is out of range", pi->name, ac->name,
					   (1ull << pi->width) - 1, pi->width,
					   value_text(&params[p], hex, sizeof hex));
		if (!value_fits(&params[p], pi->width))
			return matcha_fail(dev, MATCHA_E2BIG, "parameter %s of action %s is %u bits: "
					   "%s is out of range", pi->name, ac->name, pi->width,
					   value_text(&params[p], hex, sizeof hex));
		put_field(data, n->data_bytes, pi->offset, pi->width, &params[p]);
	}
	return 0;
}

static void unpack_params(const struct named *n, const struct matcha_action_info *ac,
			  const uint8_t *data, struct matcha_value *params)
{
	for (unsigned p = 0; p < ac->nparams; p++)
		get_field(data, n->data_bytes, ac->params[p].offset, ac->params[p].width,
			  &params[p]);
}

/* ------------------------------------------------------------------------ matches */

static const char *match_kind_name(unsigned kind)
{
	switch (kind) {
	case MATCHA_MATCH_EXACT: return "plain value";
	case MATCHA_MATCH_LPM: return "prefix (value/length)";
	case MATCHA_MATCH_TERNARY: return "ternary mask (value&&&mask)";
	case MATCHA_MATCH_RANGE: return "range (low->high)";
	default: return "match of unknown kind";
	}
}

/* Checks one field's match and returns it with everything it does not use zeroed. */
static int check_match(matcha_dev *dev, const struct named *n, const struct matcha_field_info *f,
		       const struct matcha_match *m, struct matcha_match *norm)
{
	char hex[40], hex2[40];
	memset(norm, 0, sizeof *norm);
	norm->kind = m->kind;
	norm->value = m->value;
	if (m->kind < MATCHA_MATCH_EXACT || m->kind > MATCHA_MATCH_RANGE)
		return matcha_fail(dev, MATCHA_EINVAL, "key field %s: match kind %u is not one of "
				   "enum matcha_match_kind", f->name, m->kind);
	if (!(n->ops->match_kinds & 1u << m->kind)) {
		char takes[200] = "";
		for (unsigned k = MATCHA_MATCH_EXACT; k <= MATCHA_MATCH_RANGE; k++) {
			size_t at = strlen(takes);
			if (n->ops->match_kinds & 1u << k)
				snprintf(takes + at, sizeof takes - at, "%sa %s", at ? " or " : "",
					 match_kind_name(k));
		}
		return matcha_fail(dev, MATCHA_EINVAL, "table %s (kind %s): key field %s "
				   "takes %s, not a %s", table_name(n),
				   matcha_kind_name(n->info.kind), f->name, takes,
				   match_kind_name(m->kind));
	}
	if (!value_fits(&m->value, f->width))
		return matcha_fail(dev, MATCHA_E2BIG, "key field %s is %u bits: %s does not fit",
				   f->name, f->width, value_hex(&m->value, hex, sizeof hex));
	switch (m->kind) {
	case MATCHA_MATCH_LPM: {
		struct matcha_value mask;
		if (m->prefix_len > f->width)
			return matcha_fail(dev, MATCHA_E2BIG, "key field %s is %u bits: a /%u "
					   "prefix is longer", f->name, f->width, m->prefix_len);
		prefix_mask(&mask, f->width, m->prefix_len);
		for (unsigned i = 0; i < MATCHA_VALUE_BYTES; i++)
			if (m->value.be[i] & ~mask.be[i])
				return matcha_fail(dev, MATCHA_EINVAL, "key field %s: %s has bits set "
						   "beyond its /%u prefix", f->name,
						   value_hex(&m->value, hex, sizeof hex),
						   m->prefix_len);
		norm->prefix_len = m->prefix_len;
		break;
	}
	case MATCHA_MATCH_TERNARY:
		if (!value_fits(&m->mask, f->width))
			return matcha_fail(dev, MATCHA_E2BIG, "key field %s is %u bits: mask %s does "
					   "not fit", f->name, f->width,
					   value_hex(&m->mask, hex, sizeof hex));
		for (unsigned i = 0; i < MATCHA_VALUE_BYTES; i++)
			if (m->value.be[i] & ~m->mask.be[i])
				return matcha_fail(dev, MATCHA_EINVAL, "key field %s: value %s has bits "
						   "set outside mask %s", f->name,
						   value_hex(&m->value, hex, sizeof hex),
						   value_hex(&m->mask, hex2, sizeof hex2));
		norm->mask = m->mask;
		if (f->range && !range_of_mask(&m->value, &m->mask, f->width, NULL, NULL))
			return matcha_fail(dev, MATCHA_EINVAL, "key field %s is a range field: it "
					   "takes a range (low->high), a value, a prefix or a "
					   "wildcard (0&&&0), and mask %s is none of them", f->name,
					   value_hex(&m->mask, hex, sizeof hex));
		break;
	case MATCHA_MATCH_RANGE:
		if (f->width > 32)
			return matcha_fail(dev, MATCHA_EINVAL, "key field %s is %u bits: ranges are "
					   "for fields of at most 32 bits", f->name, f->width);
		if (!value_fits(&m->high, f->width))
			return matcha_fail(dev, MATCHA_E2BIG, "key field %s is %u bits: range end %s "
					   "does not fit", f->name, f->width,
					   value_hex(&m->high, hex, sizeof hex));
		if (value_u32(&m->value) > value_u32(&m->high))
			return matcha_fail(dev, MATCHA_EINVAL, "key field %s: range %u->%u is empty "
					   "(low above high)", f->name, (unsigned)value_u32(&m->value),
					   (unsigned)value_u32(&m->high));
		norm->high = m->high;
		break;
	}
	return 0;
}

/* The hardware entries of a checked match: *hw is allocated, *nhw entries. */
static int build_keys(matcha_dev *dev, const struct named *n, const struct matcha_match *match,
		      struct matcha_key **hw, unsigned *nhw)
{
	const struct matcha_table_layout *tl = &n->lt->pub;
	unsigned kb = n->key_bytes;
	struct matcha_prefix ranges[MATCHA_MAX_FIELDS][MATCHA_RANGE_MAX_PREFIXES];
	unsigned nranges[MATCHA_MAX_FIELDS];
	uint64_t total = 1; /* at most size * 62 before the check below stops it */

	for (unsigned f = 0; f < tl->nfields; f++) {
		nranges[f] = 1;
		/* A range field takes the range natively: one entry. */
		if (match[f].kind != MATCHA_MATCH_RANGE || tl->fields[f].range)
			continue;
		int k = matcha_range_to_prefixes(value_u32(&match[f].value),
						 value_u32(&match[f].high), tl->fields[f].width,
						 ranges[f], MATCHA_RANGE_MAX_PREFIXES);
		if (k < 0)
			return matcha_fail(dev, k, "key field %s: the range cannot be expanded",
					   tl->fields[f].name);
		nranges[f] = (unsigned)k;
		total *= (unsigned)k;
		if (total > n->info.size)
			return matcha_fail(dev, MATCHA_ENOSPC, "table %s: the ranges expand to more "
					   "entries than the table's %u", table_name(n),
					   n->info.size);
	}
	*hw = calloc((size_t)total, sizeof **hw);
	if (!*hw)
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for %u entries", (unsigned)total);
	*nhw = (unsigned)total;

	unsigned pick[MATCHA_MAX_FIELDS] = { 0 }; /* the range prefix of each field */
	bool partial = false;
	for (unsigned e = 0; e < total; e++) {
		struct matcha_key *k = &(*hw)[e];
		for (unsigned f = 0; f < tl->nfields; f++) {
			const struct matcha_field_info *fi = &tl->fields[f];
			const struct matcha_match *m = &match[f];
			struct matcha_value value = m->value, mask;
			if (fi->range) {
				/* lo in the value's bits of the field, hi in the mask's. */
				uint32_t lo = 0, hi = 0;
				if (m->kind == MATCHA_MATCH_RANGE) {
					lo = value_u32(&m->value);
					hi = value_u32(&m->high);
				} else {
					if (m->kind == MATCHA_MATCH_TERNARY)
						mask = m->mask;
					else
						prefix_mask(&mask, fi->width, m->kind == MATCHA_MATCH_LPM ?
							    m->prefix_len : fi->width);
					range_of_mask(&m->value, &mask, fi->width, &lo, &hi);
				}
				value_from_u32(&value, lo);
				value_from_u32(&mask, hi);
				put_field(k->value, kb, fi->offset, fi->width, &value);
				put_field(k->mask, kb, fi->offset, fi->width, &mask);
				continue;
			}
			switch (m->kind) {
			case MATCHA_MATCH_EXACT: prefix_mask(&mask, fi->width, fi->width); break;
			case MATCHA_MATCH_LPM: prefix_mask(&mask, fi->width, m->prefix_len); break;
			case MATCHA_MATCH_TERNARY: mask = m->mask; break;
			default:
				value_from_u32(&value, ranges[f][pick[f]].value);
				value_from_u32(&mask, ranges[f][pick[f]].mask);
			}
			put_field(k->value, kb, fi->offset, fi->width, &value);
			put_field(k->mask, kb, fi->offset, fi->width, &mask);
			if (!n->ops->prefix)
				continue;
			unsigned len = m->kind == MATCHA_MATCH_LPM ? m->prefix_len : fi->width;
			if (partial && len)
				return matcha_fail(dev, MATCHA_EINVAL, "table %s: key field %s follows a "
						   "partial prefix, so it must be /0 (the key is one "
						   "prefix)", table_name(n), fi->name);
			partial = partial || len < fi->width;
			k->prefix_len += len;
		}
		/* Next combination: the last ranged field varies fastest. */
		for (unsigned f = tl->nfields; f-- > 0;) {
			if (++pick[f] < nranges[f])
				break;
			pick[f] = 0;
		}
	}
	return 0;
}

static bool same_match(const struct named_entry *e, const struct matcha_match *match,
		       unsigned nmatch, uint32_t priority)
{
	return e->nmatch == nmatch && !memcmp(e->match, match, nmatch * sizeof *match) &&
	       e->priority == priority;
}

/*
 * The handle of the entry that holds hardware entry k (same key and prefix length; with a
 * mask also the same mask and priority), for the message of a duplicate. Only an add that
 * the driver refused as a duplicate pays for this walk.
 */
static bool holder(const struct named *n, const struct matcha_key *k, uint32_t *handle)
{
	bool masked = n->ops->masked;
	for (uint32_t h = 0; h < n->lt->nhandles; h++) {
		const struct named_entry *o = n->lt->entries[h];
		if (!o || (masked && o->priority != k->priority))
			continue;
		for (unsigned j = 0; j < o->nhw; j++)
			if (o->hw[j].prefix_len == k->prefix_len &&
			    !memcmp(o->hw[j].value, k->value, n->key_bytes) &&
			    (!masked || !memcmp(o->hw[j].mask, k->mask, n->key_bytes))) {
				*handle = h;
				return true;
			}
	}
	return false;
}

/* ---------------------------------------------------------------- hardware calls */

static int hw_counters(matcha_dev *dev, const struct named *n, const struct matcha_key *k,
		       uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	uint32_t index;
	int rc = n->ops->find(dev, n->t, "entry_counters", k, &index);
	return rc ? rc : matcha_counter_entry(dev, n->t, index, packets, bytes, flags);
}

/* Reads a hardware entry back and checks that it holds the key it was given. */
static int hw_read(matcha_dev *dev, const struct named *n, const struct matcha_key *k,
		   uint32_t *index, struct matcha_entry *e)
{
	int rc;
	if ((rc = n->ops->find(dev, n->t, "entry_read", k, index)) ||
	    (rc = matcha_window_read(dev, n->t, matcha_window_index(n->t, *index), e)))
		return rc;
	/* A prefix table's result holds no key, nor does a direct table's entry (its index,
	 * found from the key, is the key); a masked entry also its mask and priority. */
	bool same = n->ops->prefix || n->ops->key_is_index ||
		    (!memcmp(e->key, k->value, n->key_bytes) &&
		     (!n->ops->masked || (!memcmp(e->mask, k->mask, n->key_bytes) &&
					  e->priority == k->priority)));
	if (!e->valid || !same)
		return matcha_fail(dev, MATCHA_EHW, "table %s: entry %u reads back %s", table_name(n),
				   (unsigned)*index, e->valid ? "with another key than was written" :
				   "invalid");
	return 0;
}

/* ------------------------------------------------------------------------ entries */

static int get_entry(matcha_dev *dev, const struct named *n, uint32_t handle,
		     struct named_entry **e)
{
	struct layout_table *lt = n->lt;
	*e = handle < lt->nhandles ? lt->entries[handle] : NULL;
	if (*e)
		return 0;
	return matcha_fail(dev, MATCHA_ENOENT, "table %s has no entry with handle %u",
			   table_name(n), (unsigned)handle);
}

static int store_entry(matcha_dev *dev, struct layout_table *lt, struct named_entry *e,
		       uint32_t *handle)
{
	if (lt->nhandles == lt->cap) {
		uint32_t cap = lt->cap ? 2 * lt->cap : 16;
		struct named_entry **p = realloc(lt->entries, cap * sizeof *p);
		if (!p)
			return matcha_fail(dev, MATCHA_ENOMEM, "no memory for entry handles");
		lt->entries = p;
		lt->cap = cap;
	}
	*handle = lt->nhandles;
	lt->entries[lt->nhandles++] = e;
	return 0;
}

int matcha_table_entry_add(matcha_table *table, const struct matcha_match *match,
			   unsigned nmatch, const char *action, const struct matcha_value *params,
			   unsigned nparams, int64_t priority, uint32_t *handle)
{
	matcha_dev *dev = table->dev;
	struct named n;
	const struct matcha_action_info *ac;
	uint8_t data[MATCHA_MAX_DATA_BYTES];
	struct matcha_match norm[MATCHA_MAX_FIELDS];
	int rc;

	if ((rc = named(table, "entry_add", &n)) ||
	    (rc = find_action(dev, &n, action, &ac)) ||
	    (rc = pack_params(dev, &n, ac, params, nparams, data)))
		return rc;
	const struct matcha_table_layout *tl = &n.lt->pub;
	bool ternary = n.ops->masked; /* entries have a priority */
	if (nmatch != tl->nfields) {
		char names[512];
		list_names(names, sizeof names, tl->fields, sizeof *tl->fields, tl->nfields);
		return matcha_fail(dev, MATCHA_EINVAL, "table %s takes %u key field%s (%s), %u "
				   "given", tl->name, tl->nfields, tl->nfields == 1 ? "" : "s",
				   names, nmatch);
	}
	if (ternary && (priority < 0 || priority > UINT32_MAX))
		return matcha_fail(dev, MATCHA_EINVAL, "table %s is a %s table: an entry needs a "
				   "priority in 0..%u (higher wins)", tl->name,
				   matcha_kind_name(n.info.kind), UINT32_MAX);
	if (!ternary && priority != MATCHA_NO_PRIORITY)
		return matcha_fail(dev, MATCHA_EINVAL, "table %s (kind %s): its entries have "
				   "no priority", tl->name, matcha_kind_name(n.info.kind));
	for (unsigned f = 0; f < nmatch; f++)
		if ((rc = check_match(dev, &n, &tl->fields[f], &match[f], &norm[f])))
			return rc;

	struct named_entry *e = calloc(1, sizeof *e);
	if (!e || !(e->match = calloc(nmatch, sizeof *e->match))) {
		free(e);
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for an entry");
	}
	memcpy(e->match, norm, nmatch * sizeof *norm);
	e->nmatch = nmatch;
	e->has_priority = ternary;
	e->priority = ternary ? (uint32_t)priority : 0;
	if ((rc = build_keys(dev, &n, norm, &e->hw, &e->nhw)))
		goto fail;
	for (unsigned i = 0; i < e->nhw; i++)
		e->hw[i].priority = e->priority;
	for (unsigned i = 0; i < e->nhw; i++) {
		if ((rc = n.ops->add(dev, n.t, &e->hw[i], ac->id, data, n.info.data_bits))) {
			uint32_t other;
			if (rc == MATCHA_EEXIST && holder(&n, &e->hw[i], &other))
				matcha_fail(dev, rc, "table %s: duplicate entry: handle %u has the same %s",
					    tl->name, (unsigned)other, !ternary ? "key" :
					    same_match(n.lt->entries[other], norm, nmatch, e->priority) ?
					    "match and priority" : "value, mask and priority in one of "
					    "its entries");
			else
				wrap(dev, rc, &n);
			/* All or nothing: the hardware entries added so far go again. */
			char msg[sizeof dev->error];
			memcpy(msg, dev->error, sizeof msg);
			while (i-- > 0)
				n.ops->remove(dev, n.t, &e->hw[i]);
			matcha_fail(dev, rc, "%s", msg);
			goto fail;
		}
	}
	if ((rc = store_entry(dev, n.lt, e, handle)))
		goto fail;
	return 0;
fail:
	matcha_named_entry_free(e);
	return rc;
}

/* Stops at the first failure: an all-or-nothing batch would have to delete what it added,
 * and a delete can fail in turn, leaving the caller a state no message describes. */
int matcha_table_entries_add(matcha_table *table, const struct matcha_entry_spec *entries,
			     size_t n, uint32_t *handles, size_t *added)
{
	matcha_dev *dev = table->dev;
	*added = 0;
	for (size_t i = 0; i < n; i++) {
		const struct matcha_entry_spec *e = &entries[i];
		int rc = matcha_table_entry_add(table, e->match, e->nmatch, e->action, e->params,
						e->nparams, e->priority, &handles[i]);
		if (rc) {
			char msg[sizeof dev->error];
			memcpy(msg, dev->error, sizeof msg);
			return matcha_fail(dev, rc, "entry %zu of %zu: %s", i, n, msg);
		}
		*added = i + 1;
	}
	return 0;
}

int matcha_table_entry_modify(matcha_table *table, uint32_t handle, const char *action,
			      const struct matcha_value *params, unsigned nparams)
{
	matcha_dev *dev = table->dev;
	struct named n;
	struct named_entry *e;
	const struct matcha_action_info *ac;
	uint8_t data[MATCHA_MAX_DATA_BYTES];
	int rc;

	if ((rc = named(table, "entry_modify", &n)) ||
	    (rc = get_entry(dev, &n, handle, &e)) || (rc = find_action(dev, &n, action, &ac)) ||
	    (rc = pack_params(dev, &n, ac, params, nparams, data)))
		return rc;
	for (unsigned i = 0; i < e->nhw; i++)
		if ((rc = n.ops->modify(dev, n.t, &e->hw[i], ac->id, data, n.info.data_bits)))
			return wrap(dev, rc, &n);
	return 0;
}

int matcha_table_entry_delete(matcha_table *table, uint32_t handle)
{
	matcha_dev *dev = table->dev;
	struct named n;
	struct named_entry *e;
	int rc;

	if ((rc = named(table, "entry_delete", &n)) ||
	    (rc = get_entry(dev, &n, handle, &e)))
		return rc;
	for (unsigned i = 0; i < e->nhw; i++)
		if ((rc = n.ops->remove(dev, n.t, &e->hw[i])))
			return wrap(dev, rc, &n);
	matcha_named_entry_free(e);
	n.lt->entries[handle] = NULL;
	return 0;
}

static int action_of_id(matcha_dev *dev, const struct named *n, uint8_t id,
			const struct matcha_action_info **ac)
{
	const struct matcha_table_layout *tl = &n->lt->pub;
	for (unsigned a = 0; a < tl->nactions; a++)
		if (tl->actions[a].id == id) {
			*ac = &tl->actions[a];
			return 0;
		}
	return matcha_fail(dev, MATCHA_EHW, "table %s holds action id %u, which the layout does "
			   "not name", tl->name, id);
}

int matcha_table_entry_read(matcha_table *table, uint32_t handle,
			    struct matcha_entry_view *view)
{
	matcha_dev *dev = table->dev;
	struct named n;
	struct named_entry *e;
	struct matcha_entry hw, first;
	uint32_t index;
	int rc;

	if ((rc = named(table, "entry_read", &n)) ||
	    (rc = get_entry(dev, &n, handle, &e)))
		return rc;
	memset(view, 0, sizeof *view);
	for (unsigned i = 0; i < e->nhw; i++) {
		if ((rc = hw_read(dev, &n, &e->hw[i], &index, &hw)))
			return rc;
		if (i == 0) {
			first = hw;
			view->index = index;
		} else if (hw.action_id != first.action_id ||
			   memcmp(hw.data, first.data, n.data_bytes))
			return matcha_fail(dev, MATCHA_EHW, "table %s: entries %u and %u of handle %u "
					   "hold different actions", table_name(&n),
					   (unsigned)view->index, (unsigned)index, (unsigned)handle);
	}
	if ((rc = action_of_id(dev, &n, first.action_id, &view->action)))
		return rc;
	view->handle = handle;
	view->nmatch = e->nmatch;
	view->match = e->match;
	view->nparams = view->action->nparams;
	unpack_params(&n, view->action, first.data, view->params);
	view->has_priority = e->has_priority;
	view->priority = e->priority;
	view->hw_entries = e->nhw;
	return 0;
}

int matcha_table_entry_next(matcha_table *table, uint32_t from, uint32_t *handle)
{
	struct named n;
	int rc = named(table, "entry_next", &n);
	if (rc)
		return rc;
	for (uint32_t h = from; h < n.lt->nhandles; h++)
		if (n.lt->entries[h]) {
			*handle = h;
			return 0;
		}
	return MATCHA_ENOENT; /* the end of a walk, not a failure worth a message */
}

int matcha_table_entry_counters(matcha_table *table, uint32_t handle, uint64_t *packets,
				uint64_t *bytes, unsigned flags)
{
	matcha_dev *dev = table->dev;
	struct named n;
	struct named_entry *e;
	uint64_t p = 0, b = 0;
	int rc;

	if ((rc = named(table, "entry_counters", &n)) ||
	    (rc = get_entry(dev, &n, handle, &e)))
		return rc;
	if (!n.info.counters)
		return matcha_fail(dev, MATCHA_ENOTSUP, "table %s has no per-entry counters",
				   table_name(&n));
	for (unsigned i = 0; i < e->nhw; i++) {
		uint64_t ep, eb;
		if ((rc = hw_counters(dev, &n, &e->hw[i], &ep, &eb, flags)))
			return wrap(dev, rc, &n);
		p += ep;
		b += eb;
	}
	if (packets)
		*packets = p;
	if (bytes)
		*bytes = b;
	return 0;
}

/* ------------------------------------------------------------ the by-name forms */

int matcha_entry_add(matcha_dev *dev, const char *table, const struct matcha_match *match,
		     unsigned nmatch, const char *action, const struct matcha_value *params,
		     unsigned nparams, int64_t priority, uint32_t *handle)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_add", &t);
	return rc ? rc : matcha_table_entry_add(t, match, nmatch, action, params, nparams,
						priority, handle);
}

int matcha_entry_modify(matcha_dev *dev, const char *table, uint32_t handle,
			const char *action, const struct matcha_value *params, unsigned nparams)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_modify", &t);
	return rc ? rc : matcha_table_entry_modify(t, handle, action, params, nparams);
}

int matcha_entry_delete(matcha_dev *dev, const char *table, uint32_t handle)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_delete", &t);
	return rc ? rc : matcha_table_entry_delete(t, handle);
}

int matcha_entry_read(matcha_dev *dev, const char *table, uint32_t handle,
		      struct matcha_entry_view *view)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_read", &t);
	return rc ? rc : matcha_table_entry_read(t, handle, view);
}

int matcha_entry_next(matcha_dev *dev, const char *table, uint32_t from, uint32_t *handle)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_next", &t);
	return rc ? rc : matcha_table_entry_next(t, from, handle);
}

int matcha_entry_counters(matcha_dev *dev, const char *table, uint32_t handle,
			  uint64_t *packets, uint64_t *bytes, unsigned flags)
{
	struct matcha_table *t;
	int rc = table_named(dev, table, "entry_counters", &t);
	return rc ? rc : matcha_table_entry_counters(t, handle, packets, bytes, flags);
}

int matcha_default_set(matcha_dev *dev, const char *table, const char *action,
		       const struct matcha_value *params, unsigned nparams)
{
	struct named n;
	const struct matcha_action_info *ac;
	uint8_t data[MATCHA_MAX_DATA_BYTES];
	int rc;

	if ((rc = named_table(dev, table, "default_set", &n)) ||
	    (rc = find_action(dev, &n, action, &ac)) ||
	    (rc = pack_params(dev, &n, ac, params, nparams, data)))
		return rc;
	rc = matcha_table_set_default(dev, n.lt->pub.table, ac->id, data, n.info.data_bits);
	return rc ? wrap(dev, rc, &n) : 0;
}

int matcha_default_get(matcha_dev *dev, const char *table,
		       const struct matcha_action_info **action, struct matcha_value *params)
{
	struct named n;
	uint8_t id, data[MATCHA_MAX_DATA_BYTES];
	int rc;

	if ((rc = named_table(dev, table, "default_get", &n)))
		return rc;
	if ((rc = matcha_table_get_default(dev, n.lt->pub.table, &id, data, n.info.data_bits)))
		return wrap(dev, rc, &n);
	if ((rc = action_of_id(dev, &n, id, action)))
		return rc;
	if (params)
		unpack_params(&n, *action, data, params);
	return 0;
}

/* ------------------------------------------------------------------------ adoption */

/* The match of field f of a table's hardware entry, as a user would have written it. */
static void adopted_match(const struct named *n, const struct matcha_field_info *f,
			  const struct matcha_key *k, struct matcha_match *m)
{
	struct matcha_value mask, full;
	memset(m, 0, sizeof *m);
	get_field(k->value, n->key_bytes, f->offset, f->width, &m->value);
	m->kind = MATCHA_MATCH_EXACT;
	if (f->range) {
		/* lo in the value, hi in the mask: a range unless they are one value. */
		get_field(k->mask, n->key_bytes, f->offset, f->width, &m->high);
		if (memcmp(&m->high, &m->value, sizeof m->value))
			m->kind = MATCHA_MATCH_RANGE;
		else
			memset(&m->high, 0, sizeof m->high);
	} else if (n->ops->prefix) {
		/* The field's share of the prefix: the key's top bits down to the prefix's end. */
		unsigned top = n->info.key_bits - f->offset - f->width;
		unsigned len = k->prefix_len <= top ? 0 : k->prefix_len - top;
		m->kind = MATCHA_MATCH_LPM;
		m->prefix_len = len < f->width ? len : f->width;
	} else if (n->ops->masked) {
		get_field(k->mask, n->key_bytes, f->offset, f->width, &mask);
		prefix_mask(&full, f->width, f->width);
		if (memcmp(&mask, &full, sizeof mask)) {
			m->kind = MATCHA_MATCH_TERNARY;
			m->mask = mask;
		}
	}
}

int matcha_layout_table_adopted(matcha_dev *dev, unsigned table)
{
	/* A meter array keeps no entries. */
	if (!matcha_layout_table(dev, table))
		return 0;
	struct matcha_table *t = &dev->tables[table];
	struct named n = { .lt = &dev->layout->tables[table], .t = t, .ops = t->ops,
			   .info = t->info, .key_bytes = t->key_bytes,
			   .data_bytes = t->data_bytes };
	const struct matcha_table_layout *tl = &n.lt->pub;
	matcha_layout_table_cleared(dev, table);
	for (uint32_t i = 0; i < t->indexes; i++) {
		struct matcha_key k;
		struct matcha_entry hw;
		const struct matcha_action_info *ac;
		uint32_t index, handle;
		int rc;
		if (!t->ops->shadow_key(t, i, &k))
			continue;
		struct named_entry *e = calloc(1, sizeof *e);
		if (!e || !(e->match = calloc(tl->nfields ? tl->nfields : 1, sizeof *e->match)) ||
		    !(e->hw = calloc(1, sizeof *e->hw))) {
			matcha_named_entry_free(e);
			return matcha_fail(dev, MATCHA_ENOMEM, "no memory for an entry");
		}
		e->nmatch = tl->nfields;
		for (unsigned f = 0; f < tl->nfields; f++)
			adopted_match(&n, &tl->fields[f], &k, &e->match[f]);
		e->has_priority = n.ops->masked;
		e->priority = k.priority;
		e->nhw = 1;
		e->hw[0] = k;
		/* Its action must be one the layout names (reads go to the hardware). */
		if ((rc = hw_read(dev, &n, &e->hw[0], &index, &hw)) ||
		    (rc = action_of_id(dev, &n, hw.action_id, &ac)) ||
		    (rc = store_entry(dev, n.lt, e, &handle))) {
			char msg[sizeof dev->error];
			memcpy(msg, dev->error, sizeof msg);
			matcha_named_entry_free(e);
			return rc == MATCHA_EHW ? matcha_fail(dev, rc, "%s (adopting entry %u)", msg,
							     (unsigned)i) : rc;
		}
	}
	return 0;
}
