/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layout.json (docs/pipeline.md): parsed with jansson, checked against the self-describing
 * block, kept as names for tables, key fields, actions and parameters.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/* Duplicate members are refused (jansson keeps the last one silently otherwise); any value
 * may be the top level, so that a number there gets the layout's own message. */
#define LAYOUT_JSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

struct loader {
	matcha_dev *dev;
	const char *name; /* the file, in messages */
	struct matcha_layout *layout;
};

#define LFAIL(ld, ...) matcha_fail((ld)->dev, MATCHA_ELAYOUT, __VA_ARGS__)

void matcha_named_entry_free(struct named_entry *e)
{
	if (!e)
		return;
	free(e->match);
	free(e->hw);
	free(e);
}

static void free_layout(struct matcha_layout *l)
{
	if (!l)
		return;
	for (unsigned i = 0; i < l->ntables; i++) {
		struct layout_table *t = &l->tables[i];
		free((char *)t->pub.name);
		for (unsigned f = 0; f < t->pub.nfields; f++)
			free((char *)t->fields[f].name);
		free(t->fields);
		for (unsigned a = 0; a < t->pub.nactions; a++) {
			struct matcha_action_info *ac = &t->actions[a];
			for (unsigned p = 0; p < ac->nparams; p++)
				free((char *)ac->params[p].name);
			free((void *)ac->params);
			free((char *)ac->name);
		}
		free(t->actions);
		for (uint32_t h = 0; h < t->nhandles; h++)
			matcha_named_entry_free(t->entries[h]);
		free(t->entries);
	}
	free(l->tables);
	if (l->meters)
		for (unsigned i = 0; i < l->ntables; i++)
			free((char *)l->meters[i].name);
	free(l->meters);
	if (l->sessions)
		for (unsigned i = 0; i < l->ntables; i++) {
			free((char *)l->sessions[i].name);
			free((char *)l->sessions[i].after);
		}
	free(l->sessions);
	free(l->program);
	free(l);
}

void matcha_layout_free(matcha_dev *dev)
{
	free_layout(dev->layout);
	dev->layout = NULL;
}

void matcha_layout_table_cleared(matcha_dev *dev, unsigned table)
{
	if (!dev->layout || table >= dev->layout->ntables)
		return;
	struct layout_table *t = &dev->layout->tables[table];
	for (uint32_t h = 0; h < t->nhandles; h++)
		matcha_named_entry_free(t->entries[h]);
	t->nhandles = 0;
}

/* ----------------------------------------------------------------- member access */

/* A type as the messages name it: integers and reals are numbers, true and false booleans. */
static const char *type_name(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* A number as jansson writes it (a real keeps its ".0"), for a message. */
static void number_text(const json_t *v, char *buf, size_t len)
{
	size_t n = json_dumpb(v, buf, len - 1, JSON_ENCODE_ANY);
	buf[n < len - 1 ? n : len - 1] = '\0';
}

/* `what` names the object in messages ("table 1 (ipv4_lpm)", "the program"); `type` is any
 * type of the kind wanted (JSON_INTEGER for a number, JSON_TRUE for a boolean). */
static json_t *member(struct loader *ld, const json_t *obj, const char *key, json_type type,
		      const char *what, int *rc)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*rc = LFAIL(ld, "layout %s: %s has no \"%s\"", ld->name, what, key);
		return NULL;
	}
	if (strcmp(type_name(json_typeof(v)), type_name(type))) {
		*rc = LFAIL(ld, "layout %s: \"%s\" of %s is %s, not %s", ld->name, key, what,
			    type_name(json_typeof(v)), type_name(type));
		return NULL;
	}
	return v;
}

static int member_uint(struct loader *ld, const json_t *obj, const char *key,
		       const char *what, uint64_t max, unsigned *out)
{
	int rc = 0;
	char text[40];
	const json_t *v = member(ld, obj, key, JSON_INTEGER, what, &rc);
	if (!v)
		return rc;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		number_text(v, text, sizeof text);
		return LFAIL(ld, "layout %s: \"%s\" of %s is %s, not an integer in 0..%llu",
			     ld->name, key, what, text, (unsigned long long)max);
	}
	*out = (unsigned)json_integer_value(v);
	return 0;
}

static int member_string(struct loader *ld, const json_t *obj, const char *key,
			 const char *what, char **out)
{
	int rc = 0;
	const json_t *v = member(ld, obj, key, JSON_STRING, what, &rc);
	if (!v)
		return rc;
	if (!json_string_length(v))
		return LFAIL(ld, "layout %s: \"%s\" of %s is empty", ld->name, key, what);
	if (!(*out = strdup(json_string_value(v))))
		return matcha_fail(ld->dev, MATCHA_ENOMEM, "no memory for the layout");
	return 0;
}

/* `v`, an element of a list, must be an object; `what` names it ("table #0"). */
static int need_object(struct loader *ld, const json_t *v, const char *what)
{
	if (json_is_object(v))
		return 0;
	return LFAIL(ld, "layout %s: %s is %s, not an object", ld->name, what,
		     type_name(json_typeof(v)));
}

/* ---------------------------------------------------------------------- one table */

static int read_fields(struct loader *ld, const json_t *jt, struct layout_table *t,
		       const char *what)
{
	int rc = 0;
	const json_t *key = member(ld, jt, "key", JSON_ARRAY, what, &rc);
	if (!key)
		return rc;
	size_t nkey = json_array_size(key);
	if (nkey == 0 || nkey > MATCHA_MAX_FIELDS)
		return LFAIL(ld, "layout %s: %s has %zu key fields, the driver takes 1..%d",
			     ld->name, what, nkey, MATCHA_MAX_FIELDS);
	t->fields = calloc(nkey, sizeof *t->fields);
	if (!t->fields)
		return matcha_fail(ld->dev, MATCHA_ENOMEM, "no memory for the layout");
	unsigned total = 0;
	for (size_t f = 0; f < nkey; f++) {
		const json_t *jf = json_array_get(key, f), *jn;
		struct matcha_field_info *fi = &t->fields[f];
		char fwhat[200];
		snprintf(fwhat, sizeof fwhat, "key field #%zu of %s", f, what);
		t->pub.nfields = (unsigned)f + 1;
		if ((rc = need_object(ld, jf, fwhat)))
			return rc;
		const json_t *names = member(ld, jf, "fields", JSON_ARRAY, fwhat, &rc);
		if (!names)
			return rc;
		if ((rc = member_uint(ld, jf, "width", fwhat, MATCHA_MAX_KEY_BITS, &fi->width)))
			return rc;
		if (fi->width == 0)
			return LFAIL(ld, "layout %s: %s is 0 bits wide", ld->name, fwhat);
		if (json_array_size(names) == 0)
			return LFAIL(ld, "layout %s: %s names no PHV field", ld->name, fwhat);
		size_t len = 0, k;
		json_array_foreach(names, k, jn) {
			if (!json_is_string(jn) || !json_string_length(jn))
				return LFAIL(ld, "layout %s: name #%zu of %s is not a non-empty string",
					     ld->name, k, fwhat);
			len += json_string_length(jn) + 1;
		}
		char *name = calloc(len, 1);
		if (!name)
			return matcha_fail(ld->dev, MATCHA_ENOMEM, "no memory for the layout");
		json_array_foreach(names, k, jn) {
			if (k)
				strcat(name, "|");
			strcat(name, json_string_value(jn));
		}
		fi->name = name;
		total += fi->width;
		/* Ternary range fields are marked; any other field leaves "range" out. */
		const json_t *jr = json_object_get(jf, "range");
		if (jr && !json_is_boolean(jr))
			return LFAIL(ld, "layout %s: \"range\" of %s is %s, not a boolean", ld->name,
				     fwhat, type_name(json_typeof(jr)));
		fi->range = jr && json_is_true(jr);
	}
	if (total != t->pub.key_bits)
		return LFAIL(ld, "layout %s: the key fields of %s add up to %u bits, its keyWidth is "
			     "%u", ld->name, what, total, t->pub.key_bits);
	/* First field in the most significant bits. */
	unsigned below = total;
	for (unsigned f = 0; f < t->pub.nfields; f++) {
		below -= t->fields[f].width;
		t->fields[f].offset = below;
	}
	return 0;
}

static int read_action(struct loader *ld, const json_t *ja, size_t position,
		       struct layout_table *t, struct matcha_action_info *ac, const char *what)
{
	int rc;
	unsigned id;
	char *name = NULL, awhat[240];
	snprintf(awhat, sizeof awhat, "action #%zu of %s", position, what);
	if ((rc = need_object(ld, ja, awhat)) || (rc = member_string(ld, ja, "name", awhat, &name)))
		return rc;
	ac->name = name;
	snprintf(awhat, sizeof awhat, "action %s of %s", name, what);
	if ((rc = member_uint(ld, ja, "id", awhat, 255, &id)))
		return rc;
	ac->id = (uint8_t)id;
	const json_t *params = member(ld, ja, "params", JSON_ARRAY, awhat, &rc);
	if (!params)
		return rc;
	size_t nparams = json_array_size(params);
	if (nparams > MATCHA_MAX_PARAMS)
		return LFAIL(ld, "layout %s: %s has %zu parameters, the driver takes at most %d",
			     ld->name, awhat, nparams, MATCHA_MAX_PARAMS);
	struct matcha_param_info *pi = calloc(nparams ? nparams : 1, sizeof *pi);
	if (!pi)
		return matcha_fail(ld->dev, MATCHA_ENOMEM, "no memory for the layout");
	ac->params = pi;
	for (size_t p = 0; p < nparams; p++) {
		char *pname = NULL, pwhat[300];
		const json_t *jp = json_array_get(params, p);
		snprintf(pwhat, sizeof pwhat, "parameter #%zu of %s", p, awhat);
		if ((rc = need_object(ld, jp, pwhat)) ||
		    (rc = member_string(ld, jp, "name", pwhat, &pname)))
			return rc;
		pi[p].name = pname;
		ac->nparams = (unsigned)p + 1;
		snprintf(pwhat, sizeof pwhat, "parameter %s of %s", pname, awhat);
		if ((rc = member_uint(ld, jp, "width", pwhat, MATCHA_MAX_DATA_BITS, &pi[p].width)) ||
		    (rc = member_uint(ld, jp, "offset", pwhat, MATCHA_MAX_DATA_BITS, &pi[p].offset)))
			return rc;
		if (pi[p].width == 0 || pi[p].offset + pi[p].width > t->pub.data_bits)
			return LFAIL(ld, "layout %s: parameter %s of action %s (%s) takes bits %u..%u, "
				     "outside the %u-bit action data", ld->name, pname, name, what,
				     pi[p].offset, pi[p].offset + pi[p].width - 1, t->pub.data_bits);
		for (size_t q = 0; q < p; q++)
			if (!strcmp(pi[q].name, pname))
				return LFAIL(ld, "layout %s: action %s of %s has two parameters called "
					     "%s", ld->name, name, what, pname);
	}
	for (const struct matcha_action_info *o = t->actions; o < ac; o++) {
		if (!strcmp(o->name, name))
			return LFAIL(ld, "layout %s: %s has two actions called %s", ld->name, what,
				     name);
		if (o->id == ac->id)
			return LFAIL(ld, "layout %s: actions %s and %s of %s share id %u", ld->name,
				     o->name, name, what, id);
	}
	return 0;
}

static int read_actions(struct loader *ld, const json_t *jt, struct layout_table *t,
			const char *what)
{
	int rc = 0;
	const json_t *actions = member(ld, jt, "actions", JSON_ARRAY, what, &rc);
	if (!actions)
		return rc;
	size_t nactions = json_array_size(actions);
	if (nactions == 0 || nactions > 256)
		return LFAIL(ld, "layout %s: %s has %zu actions (1..256)", ld->name, what, nactions);
	t->actions = calloc(nactions, sizeof *t->actions);
	if (!t->actions)
		return matcha_fail(ld->dev, MATCHA_ENOMEM, "no memory for the layout");
	for (size_t a = 0; a < nactions; a++) {
		t->pub.nactions = (unsigned)a + 1;
		if ((rc = read_action(ld, json_array_get(actions, a), a, t, &t->actions[a], what)))
			return rc;
	}
	const json_t *def = json_object_get(jt, "default");
	if (!def || json_is_null(def))
		return 0;
	char dwhat[200];
	snprintf(dwhat, sizeof dwhat, "the default of %s", what);
	if ((rc = need_object(ld, def, dwhat)))
		return rc;
	const json_t *name = member(ld, def, "action", JSON_STRING, dwhat, &rc);
	if (!name)
		return rc;
	for (unsigned a = 0; a < t->pub.nactions; a++)
		if (!strcmp(t->actions[a].name, json_string_value(name)))
			t->pub.default_action = &t->actions[a];
	if (!t->pub.default_action)
		return LFAIL(ld, "layout %s: the default action %s of %s is not one of its actions",
			     ld->name, json_string_value(name), what);
	return 0;
}

/* A layout value against the hardware's, with the message of a difference. */
static int agree(struct loader *ld, const char *what, const char *key, unsigned layout,
		 unsigned hw)
{
	if (layout == hw)
		return 0;
	return LFAIL(ld, "layout %s: %s has %s %u, the hardware %u: the layout does not "
		     "describe this bitstream", ld->name, what, key, layout, hw);
}

/* The table's range fields (KeyField range) against the hardware's; `apply`: the table
 * takes their places in the key. */
static int table_ranges(struct loader *ld, const struct layout_table *t, const char *what,
			bool apply)
{
	struct matcha_table *ht = &ld->dev->tables[t->pub.table];
	unsigned offset[MATCHA_MAX_FIELDS], width[MATCHA_MAX_FIELDS], n = 0;
	for (unsigned f = 0; f < t->pub.nfields; f++)
		if (t->fields[f].range) {
			offset[n] = t->fields[f].offset;
			width[n++] = t->fields[f].width;
		}
	if (!ht->ops->range_fields)
		return n ? LFAIL(ld, "layout %s: %s has range fields, and only ternary tables "
				 "have them", ld->name, what) : 0;
	if (!ht->ops->range_fields(ld->dev, ht, offset, width, n, apply))
		return 0;
	char msg[sizeof ld->dev->error];
	memcpy(msg, ld->dev->error, sizeof msg);
	return LFAIL(ld, "layout %s: %s", ld->name, msg);
}

/* The table's layout against its descriptor. */
static int check_table(struct loader *ld, const json_t *jt, struct layout_table *t,
		       const char *what, unsigned latency, bool counters)
{
	matcha_dev *dev = ld->dev;
	struct matcha_table_info in;
	int rc;
	if ((rc = matcha_table_info(dev, t->pub.table, &in)))
		return rc;
	if (t->pub.kind != in.kind)
		return LFAIL(ld, "layout %s: %s is %s in the layout, %s in the hardware: the "
			     "layout does not describe this bitstream", ld->name, what,
			     matcha_kind_name(t->pub.kind), matcha_kind_name(in.kind));
	if ((rc = agree(ld, what, "keyWidth", t->pub.key_bits, in.key_bits)) ||
	    (rc = agree(ld, what, "size", t->pub.size, in.size)) ||
	    (rc = agree(ld, what, "dataWidth", t->pub.data_bits, in.data_bits)) ||
	    (rc = agree(ld, what, "latency", latency, in.latency)) ||
	    (rc = agree(ld, what, "counters", counters, in.counters)) ||
	    (rc = agree(ld, what, "a default action (1 yes, 0 no)", t->pub.default_action != NULL,
			in.default_action)))
		return rc;
	if ((rc = table_ranges(ld, t, what, false)))
		return rc;
	if (in.kind == MATCHA_KIND_EXACT) {
		unsigned ways;
		return (rc = member_uint(ld, jt, "ways", what, 64, &ways)) ? rc :
		       agree(ld, what, "ways", ways, in.ways);
	}
	if (in.kind == MATCHA_KIND_LPM) {
		unsigned levels, fanout, pointer_bits, memory_levels;
		const json_t *lpm = member(ld, jt, "lpm", JSON_OBJECT, what, &rc);
		if (!lpm || (rc = member_uint(ld, lpm, "levels", what, 512, &levels)) ||
		    (rc = member_uint(ld, lpm, "fanout", what, 512, &fanout)) ||
		    (rc = member_uint(ld, lpm, "pointerBits", what, 32, &pointer_bits)) ||
		    (rc = member_uint(ld, lpm, "memoryLevels", what, 512, &memory_levels)) ||
		    (rc = agree(ld, what, "lpm.levels", levels, in.levels)))
			return rc;
		const json_t *nodes = member(ld, lpm, "nodes", JSON_ARRAY, what, &rc);
		if (!nodes)
			return rc;
		if (json_array_size(nodes) != levels)
			return LFAIL(ld, "layout %s: %s has lpm.nodes of %zu levels, lpm.levels %u",
				     ld->name, what, json_array_size(nodes), levels);
		/* The node counts the driver probed, level by level. */
		unsigned in_memory = 0;
		for (unsigned i = 0; i < levels; i++) {
			struct matcha_lpm_level lv;
			const json_t *n = json_array_get(nodes, i);
			char name[32];
			snprintf(name, sizeof name, "lpm.nodes[%u]", i);
			if (!json_is_integer(n))
				return LFAIL(ld, "layout %s: %s of %s is not a number", ld->name, name,
					     what);
			if ((rc = matcha_lpm_level(dev, t->pub.table, i, &lv)) ||
			    (i == 0 && (rc = agree(ld, what, "lpm.fanout", fanout, lv.fanout))) ||
			    (i == 0 && (rc = agree(ld, what, "lpm.pointerBits", pointer_bits, lv.pointer_bits))) ||
			    (rc = agree(ld, what, name, (unsigned)json_integer_value(n), lv.nodes)))
				return rc;
			in_memory += lv.in_memory;
		}
		return agree(ld, what, "lpm.memoryLevels", memory_levels, in_memory);
	}
	return 0;
}

static int read_table(struct loader *ld, const json_t *jt, size_t position)
{
	struct matcha_layout *l = ld->layout;
	unsigned index, latency;
	char what[160], *kind = NULL, *name = NULL;
	int rc;

	snprintf(what, sizeof what, "table #%zu", position);
	if ((rc = need_object(ld, jt, what)) ||
	    (rc = member_uint(ld, jt, "index", what, UINT32_MAX, &index)))
		return rc;
	if (index >= l->ntables)
		return LFAIL(ld, "layout %s: %s has index %u, the hardware has %u tables", ld->name,
			     what, index, l->ntables);
	struct layout_table *t = &l->tables[index];
	if (t->pub.name)
		return LFAIL(ld, "layout %s: two tables have index %u", ld->name, index);
	if ((rc = member_string(ld, jt, "name", what, &name)))
		return rc;
	t->pub.name = name;
	t->pub.table = index;
	snprintf(what, sizeof what, "table %u (%s)", index, name);
	for (unsigned o = 0; o < l->ntables; o++)
		if (o != index && l->tables[o].pub.name && !strcmp(l->tables[o].pub.name, name))
			return LFAIL(ld, "layout %s: tables %u and %u are both called %s", ld->name,
				     o, index, name);
	if ((rc = member_string(ld, jt, "kind", what, &kind)))
		return rc;
	t->pub.kind = matcha_entry_kind_code(kind);
	if (!t->pub.kind) {
		char kinds[200] = "";
		for (unsigned k = 1; k < MATCHA_KIND_CODES; k++) {
			size_t at = strlen(kinds);
			if (matcha_kind(k) && matcha_kind(k)->add)
				snprintf(kinds + at, sizeof kinds - at, "%s%s", at ? ", " : "",
					 matcha_kind_name(k));
		}
		rc = LFAIL(ld, "layout %s: %s has kind \"%s\" (a table's kind is one of %s)",
			   ld->name, what, kind, kinds);
		free(kind);
		return rc;
	}
	free(kind);
	const json_t *jc = member(ld, jt, "counters", JSON_TRUE, what, &rc);
	if (!jc)
		return rc;
	if ((rc = member_uint(ld, jt, "keyWidth", what, MATCHA_MAX_KEY_BITS, &t->pub.key_bits)) ||
	    (rc = member_uint(ld, jt, "dataWidth", what, MATCHA_MAX_DATA_BITS, &t->pub.data_bits)) ||
	    (rc = member_uint(ld, jt, "size", what, UINT32_MAX, &t->pub.size)) ||
	    (rc = member_uint(ld, jt, "latency", what, UINT32_MAX, &latency)) ||
	    (rc = read_fields(ld, jt, t, what)) || (rc = read_actions(ld, jt, t, what)))
		return rc;
	t->pub.fields = t->fields;
	t->pub.actions = t->actions;
	return check_table(ld, jt, t, what, latency, json_is_true(jc));
}

/* One entry of the program's "meters" list, checked against its descriptor. */
static int read_meter(struct loader *ld, const json_t *jm, size_t position)
{
	struct matcha_layout *l = ld->layout;
	struct matcha_table_info in;
	unsigned index, size, latency;
	char what[160], *name = NULL;
	int rc;

	snprintf(what, sizeof what, "meter array #%zu", position);
	if ((rc = need_object(ld, jm, what)) ||
	    (rc = member_uint(ld, jm, "index", what, UINT32_MAX, &index)))
		return rc;
	if (index >= l->ntables)
		return LFAIL(ld, "layout %s: %s has index %u, the hardware has %u descriptors",
			     ld->name, what, index, l->ntables);
	/* The tables are read first: a clash with one is found here. */
	if (l->tables[index].pub.name)
		return LFAIL(ld, "layout %s: %s and table %u (%s) both have index %u", ld->name,
			     what, index, l->tables[index].pub.name, index);
	struct matcha_meter_layout *m = &l->meters[index];
	if (m->name)
		return LFAIL(ld, "layout %s: two meter arrays have index %u", ld->name, index);
	if ((rc = member_string(ld, jm, "name", what, &name)))
		return rc;
	m->name = name;
	m->table = index;
	snprintf(what, sizeof what, "meter array %u (%s)", index, name);
	for (unsigned o = 0; o < l->ntables; o++)
		if (o != index && l->meters[o].name && !strcmp(l->meters[o].name, name))
			return LFAIL(ld, "layout %s: meter arrays %u and %u are both called %s",
				     ld->name, o, index, name);
	if ((rc = member_uint(ld, jm, "size", what, UINT32_MAX, &size)) ||
	    (rc = member_uint(ld, jm, "latency", what, UINT32_MAX, &latency)) ||
	    (rc = matcha_table_info(ld->dev, index, &in)))
		return rc;
	m->size = size;
	if (in.kind != MATCHA_KIND_METER)
		return LFAIL(ld, "layout %s: %s is a meter array in the layout, %s in the "
			     "hardware: the layout does not describe this bitstream", ld->name, what,
			     matcha_kind_name(in.kind));
	return (rc = agree(ld, what, "size", size, in.size)) ? rc :
	       agree(ld, what, "latency", latency, in.latency);
}

/* The object a descriptor index already has, for a clash message; NULL if none. */
static const char *described_as(const struct matcha_layout *l, unsigned index, const char **what)
{
	if (l->tables[index].pub.name) {
		*what = "table";
		return l->tables[index].pub.name;
	}
	if (l->meters[index].name) {
		*what = "meter array";
		return l->meters[index].name;
	}
	*what = "session table";
	return l->sessions[index].name;
}

/* One entry of the program's "sessions" list, checked against its descriptor. */
static int read_session(struct loader *ld, const json_t *js, size_t position)
{
	struct matcha_layout *l = ld->layout;
	struct matcha_table_info in;
	unsigned index, size, ways, key_bits, latency;
	char what[160], *name = NULL;
	const char *other, *other_kind;
	int rc;

	snprintf(what, sizeof what, "session table #%zu", position);
	if ((rc = need_object(ld, js, what)) ||
	    (rc = member_uint(ld, js, "index", what, UINT32_MAX, &index)))
		return rc;
	if (index >= l->ntables)
		return LFAIL(ld, "layout %s: %s has index %u, the hardware has %u descriptors",
			     ld->name, what, index, l->ntables);
	/* Tables and meter arrays are read first: a clash with one is found here. */
	if ((other = described_as(l, index, &other_kind)))
		return LFAIL(ld, "layout %s: %s and %s %u (%s) both have index %u", ld->name, what,
			     other_kind, index, other, index);
	if ((rc = member_string(ld, js, "name", what, &name)))
		return rc;
	struct matcha_session_layout *s = &l->sessions[index];
	s->name = name;
	s->table = index;
	snprintf(what, sizeof what, "session table %u (%s)", index, name);
	for (unsigned o = 0; o < l->ntables; o++)
		if (o != index && (other = described_as(l, o, &other_kind)) && !strcmp(other, name))
			return LFAIL(ld, "layout %s: %s %u and session table %u are both called %s",
				     ld->name, other_kind, o, index, name);
	char *after = NULL;
	if ((rc = member_string(ld, js, "after", what, &after)))
		return rc;
	s->after = after;
	bool found = false;
	for (unsigned o = 0; o < l->ntables; o++)
		found |= l->tables[o].pub.name && !strcmp(l->tables[o].pub.name, after);
	if (!found)
		return LFAIL(ld, "layout %s: %s follows table %s, which the program does not have",
			     ld->name, what, after);
	if ((rc = member_uint(ld, js, "size", what, UINT32_MAX, &size)) ||
	    (rc = member_uint(ld, js, "ways", what, UINT32_MAX, &ways)) ||
	    (rc = member_uint(ld, js, "keyWidth", what, MATCHA_MAX_KEY_BITS, &key_bits)) ||
	    (rc = member_uint(ld, js, "latency", what, UINT32_MAX, &latency)) ||
	    (rc = matcha_table_info(ld->dev, index, &in)))
		return rc;
	s->size = size;
	s->ways = ways;
	if (in.kind != MATCHA_KIND_SESSION && in.kind != MATCHA_KIND_MEM_SESSION)
		return LFAIL(ld, "layout %s: %s is a session table in the layout, %s in the "
			     "hardware: the layout does not describe this bitstream", ld->name, what,
			     matcha_kind_name(in.kind));
	/* "ways": a key's candidate slots; in memory, the sessions of its bucket. */
	unsigned candidates = in.kind == MATCHA_KIND_MEM_SESSION ? in.bucket_entries : in.ways;
	if ((rc = agree(ld, what, "size", size, in.size)) ||
	    (rc = agree(ld, what, "ways", ways, candidates)) ||
	    (rc = agree(ld, what, "keyWidth", key_bits, in.key_bits)))
		return rc;
	return agree(ld, what, "latency", latency, in.latency);
}

/* An optional list of the program: absent is empty. */
static int optional_list(struct loader *ld, const json_t *prog, const char *key,
			 const json_t **list)
{
	int rc = 0;
	*list = json_object_get(prog, key);
	if (*list && !(*list = member(ld, prog, key, JSON_ARRAY, "the program", &rc)))
		return rc;
	return 0;
}

static int load(struct loader *ld, const json_t *root)
{
	matcha_dev *dev = ld->dev;
	int rc = 0;
	char text[40];
	if (!json_is_object(root))
		return LFAIL(ld, "layout %s: the top level is %s, not an object", ld->name,
			     type_name(json_typeof(root)));
	const json_t *jid = member(ld, root, "buildId", JSON_INTEGER, "the layout", &rc);
	if (!jid)
		return rc;
	if (!json_is_integer(jid) || json_integer_value(jid) < 0 ||
	    json_integer_value(jid) > UINT32_MAX) {
		number_text(jid, text, sizeof text);
		return LFAIL(ld, "layout %s: buildId %s is not a 32-bit number", ld->name, text);
	}
	uint64_t build_id = (uint64_t)json_integer_value(jid);
	if (build_id != matcha_build_id(dev))
		return LFAIL(ld, "layout %s: buildId is %llu (0x%08llx), the hardware's BUILD_ID is "
			     "%u (0x%08x): the layout belongs to another bitstream", ld->name,
			     (unsigned long long)build_id, (unsigned long long)build_id,
			     (unsigned)matcha_build_id(dev), (unsigned)matcha_build_id(dev));
	const json_t *prog = member(ld, root, "program", JSON_OBJECT, "the layout", &rc);
	if (!prog)
		return rc;
	if ((rc = member_string(ld, prog, "name", "the program", &ld->layout->program)))
		return rc;
	const json_t *tables = member(ld, prog, "tables", JSON_ARRAY, "the program", &rc);
	if (!tables)
		return rc;
	/* A program without meter arrays or session tables may leave those lists out. */
	const json_t *meters, *sessions;
	if ((rc = optional_list(ld, prog, "meters", &meters)) ||
	    (rc = optional_list(ld, prog, "sessions", &sessions)))
		return rc;
	size_t ntables = json_array_size(tables), nmeters = json_array_size(meters),
	       nsessions = json_array_size(sessions);
	if (!nmeters && !nsessions && ntables != matcha_table_count(dev))
		return LFAIL(ld, "layout %s: the program has %zu tables, the hardware %u: the "
			     "layout does not describe this bitstream", ld->name, ntables,
			     matcha_table_count(dev));
	if (!nsessions && ntables + nmeters != matcha_table_count(dev))
		return LFAIL(ld, "layout %s: the program has %zu tables and %zu meter arrays, the "
			     "hardware %u descriptors: the layout does not describe this bitstream",
			     ld->name, ntables, nmeters, matcha_table_count(dev));
	if (ntables + nmeters + nsessions != matcha_table_count(dev))
		return LFAIL(ld, "layout %s: the program has %zu tables, %zu meter arrays and %zu "
			     "session tables, the hardware %u descriptors: the layout does not "
			     "describe this bitstream", ld->name, ntables, nmeters, nsessions,
			     matcha_table_count(dev));
	for (size_t i = 0; i < ntables; i++)
		if ((rc = read_table(ld, json_array_get(tables, i), i)))
			return rc;
	for (size_t i = 0; i < nmeters; i++)
		if ((rc = read_meter(ld, json_array_get(meters, i), i)))
			return rc;
	for (size_t i = 0; i < nsessions; i++)
		if ((rc = read_session(ld, json_array_get(sessions, i), i)))
			return rc;
	/* The counts agree and no index is described twice, so every one is described. */
	return 0;
}

/* Reads the parsed layout `root` (NULL: jansson's `error`) into the handle. */
static int load_parsed(matcha_dev *dev, json_t *root, const json_error_t *error,
		       const char *name)
{
	struct loader ld = { dev, name, NULL };
	if (!root)
		return LFAIL(&ld, "layout %s is not valid JSON: line %d, column %d: %s", ld.name,
			     error->line, error->column, error->text);
	ld.layout = calloc(1, sizeof *ld.layout);
	unsigned n = matcha_table_count(dev);
	if (ld.layout) {
		ld.layout->tables = calloc(n ? n : 1, sizeof *ld.layout->tables);
		ld.layout->meters = calloc(n ? n : 1, sizeof *ld.layout->meters);
		ld.layout->sessions = calloc(n ? n : 1, sizeof *ld.layout->sessions);
	}
	int rc;
	if (!ld.layout || !ld.layout->tables || !ld.layout->meters || !ld.layout->sessions) {
		if (ld.layout) {
			free(ld.layout->tables);
			free(ld.layout->meters);
			free(ld.layout->sessions);
		}
		free(ld.layout);
		json_decref(root);
		return matcha_fail(dev, MATCHA_ENOMEM, "no memory for the layout");
	}
	ld.layout->ntables = n;
	rc = load(&ld, root);
	json_decref(root);
	if (rc) {
		free_layout(ld.layout);
		return rc;
	}
	matcha_layout_free(dev);
	dev->layout = ld.layout;
	for (unsigned i = 0; i < n; i++)
		if (ld.layout->tables[i].pub.name)
			table_ranges(&ld, &ld.layout->tables[i], ld.layout->tables[i].pub.name, true);
	/* Entries the handle adopted before the layout came get their handles now. */
	for (unsigned i = 0; i < n; i++)
		if ((rc = matcha_layout_table_adopted(dev, i))) {
			matcha_layout_free(dev);
			return rc;
		}
	return 0;
}

int matcha_layout_load_text(matcha_dev *dev, const char *text, size_t len, const char *name)
{
	json_error_t error;
	json_t *root = json_loadb(text, len, LAYOUT_JSON_FLAGS, &error);
	return load_parsed(dev, root, &error, name ? name : "(text)");
}

int matcha_layout_load(matcha_dev *dev, const char *path)
{
	/* Opened here rather than by json_load_file, so that the message keeps the system's
	 * reason in the driver's words. */
	FILE *f = fopen(path, "rb");
	if (!f)
		return matcha_fail(dev, MATCHA_ELAYOUT, "cannot open layout %s: %s", path,
				   strerror(errno));
	json_error_t error;
	json_t *root = json_loadf(f, LAYOUT_JSON_FLAGS, &error);
	int err = ferror(f);
	fclose(f);
	if (err) {
		json_decref(root);
		return matcha_fail(dev, MATCHA_ELAYOUT, "cannot read layout %s", path);
	}
	return load_parsed(dev, root, &error, path);
}

const char *matcha_layout_program(const matcha_dev *dev)
{
	return dev->layout ? dev->layout->program : NULL;
}

const struct matcha_table_layout *matcha_layout_table(const matcha_dev *dev, unsigned table)
{
	if (!dev->layout || table >= dev->layout->ntables || !dev->layout->tables[table].pub.name)
		return NULL;
	return &dev->layout->tables[table].pub;
}

const struct matcha_meter_layout *matcha_layout_meter(const matcha_dev *dev, unsigned table)
{
	if (!dev->layout || table >= dev->layout->ntables || !dev->layout->meters[table].name)
		return NULL;
	return &dev->layout->meters[table];
}

const struct matcha_session_layout *matcha_layout_session(const matcha_dev *dev, unsigned table)
{
	if (!dev->layout || table >= dev->layout->ntables || !dev->layout->sessions[table].name)
		return NULL;
	return &dev->layout->sessions[table];
}

enum named { NAMED_TABLES, NAMED_METERS, NAMED_SESSIONS };

static const char *name_of(const struct matcha_layout *l, enum named which, unsigned i)
{
	return which == NAMED_TABLES ? l->tables[i].pub.name :
	       which == NAMED_METERS ? l->meters[i].name : l->sessions[i].name;
}

/* The names of the tables, meter arrays or session tables, for an unknown-name message. */
static void list_names(const struct matcha_layout *l, enum named which, char *out, size_t size)
{
	out[0] = '\0';
	for (unsigned i = 0; i < l->ntables; i++) {
		const char *name = name_of(l, which, i);
		size_t at = strlen(out);
		if (name)
			snprintf(out + at, size - at, "%s%s", at ? ", " : "", name);
	}
}

int matcha_meter_by_name(matcha_dev *dev, const char *name, unsigned *table)
{
	if (!dev->layout)
		return matcha_fail(dev, MATCHA_ELAYOUT, "meter arrays have names only with a "
				   "layout file (matcha_layout_load)");
	for (unsigned i = 0; i < dev->layout->ntables; i++)
		if (dev->layout->meters[i].name && !strcmp(dev->layout->meters[i].name, name)) {
			*table = i;
			return 0;
		}
	char names[200];
	list_names(dev->layout, NAMED_METERS, names, sizeof names);
	return matcha_fail(dev, MATCHA_ENOTABLE, "unknown meter array \"%s\" (meter arrays: %s)",
			   name, names[0] ? names : "none");
}

int matcha_session_by_name(matcha_dev *dev, const char *name, unsigned *table)
{
	if (!dev->layout)
		return matcha_fail(dev, MATCHA_ELAYOUT, "session tables have names only with a "
				   "layout file (matcha_layout_load)");
	for (unsigned i = 0; i < dev->layout->ntables; i++)
		if (dev->layout->sessions[i].name && !strcmp(dev->layout->sessions[i].name, name)) {
			*table = i;
			return 0;
		}
	char names[200];
	list_names(dev->layout, NAMED_SESSIONS, names, sizeof names);
	return matcha_fail(dev, MATCHA_ENOTABLE, "unknown session table \"%s\" (session tables: "
			   "%s)", name, names[0] ? names : "none");
}

int matcha_table_by_name(matcha_dev *dev, const char *name, unsigned *table)
{
	if (!dev->layout)
		return matcha_fail(dev, MATCHA_ELAYOUT, "tables have names only with a layout "
				   "file (matcha_layout_load)");
	for (unsigned i = 0; i < dev->layout->ntables; i++)
		if (dev->layout->tables[i].pub.name && !strcmp(dev->layout->tables[i].pub.name, name)) {
			*table = i;
			return 0;
		}
	char names[200];
	list_names(dev->layout, NAMED_TABLES, names, sizeof names);
	return matcha_fail(dev, MATCHA_ENOTABLE, "unknown table \"%s\" (tables: %s)", name, names);
}

const struct matcha_action_info *matcha_action_by_name(const struct matcha_table_layout *tl,
						       const char *name)
{
	for (unsigned a = 0; a < tl->nactions; a++)
		if (!strcmp(tl->actions[a].name, name))
			return &tl->actions[a];
	return NULL;
}
