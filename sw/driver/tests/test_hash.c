/*
 * The exact-match hash against tb/model/vectors/hash_vectors.json, the vectors the RTL
 * generator and the Python model check too. The file has one fixed shape, so a small
 * reader for exactly that shape does: a list of objects
 *   {"keyBits": n, "key": "<hex>", "crc64": "<hex>", "index": {"slots": s, "ways": [..]}}
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_WAYS 4

struct hash_vector {
	unsigned key_bits;
	uint8_t key[MATCHA_MAX_KEY_BYTES];
	unsigned key_bytes;
	uint64_t crc64;
	unsigned slots;
	unsigned ways[MAX_WAYS];
	unsigned nways;
};

struct reader {
	const char *p;
	bool error;
};

static void skip_space(struct reader *r)
{
	while (isspace((unsigned char)*r->p))
		r->p++;
}

static bool accept(struct reader *r, char c)
{
	skip_space(r);
	if (*r->p != c)
		return false;
	r->p++;
	return true;
}

static void expect(struct reader *r, char c)
{
	if (!accept(r, c))
		r->error = true;
}

/* A string into buf (no escapes in this format). */
static void read_string(struct reader *r, char *buf, size_t size)
{
	expect(r, '"');
	size_t n = 0;
	while (!r->error && *r->p && *r->p != '"') {
		if (n + 1 >= size)
			r->error = true;
		else
			buf[n++] = *r->p;
		r->p++;
	}
	buf[n] = '\0';
	expect(r, '"');
}

static unsigned long read_number(struct reader *r)
{
	skip_space(r);
	char *end;
	unsigned long v = strtoul(r->p, &end, 10);
	if (end == r->p)
		r->error = true;
	r->p = end;
	return v;
}

static void read_index(struct reader *r, struct hash_vector *v)
{
	char name[32];
	expect(r, '{');
	do {
		read_string(r, name, sizeof name);
		expect(r, ':');
		if (!strcmp(name, "slots")) {
			v->slots = (unsigned)read_number(r);
		} else if (!strcmp(name, "ways")) {
			expect(r, '[');
			do {
				if (v->nways == MAX_WAYS)
					r->error = true;
				else
					v->ways[v->nways++] = (unsigned)read_number(r);
			} while (!r->error && accept(r, ','));
			expect(r, ']');
		} else {
			r->error = true;
		}
	} while (!r->error && accept(r, ','));
	expect(r, '}');
}

static void read_vector(struct reader *r, struct hash_vector *v)
{
	char name[32], hex[2 * MATCHA_MAX_KEY_BYTES + 1];
	memset(v, 0, sizeof *v);
	expect(r, '{');
	do {
		read_string(r, name, sizeof name);
		expect(r, ':');
		if (!strcmp(name, "keyBits")) {
			v->key_bits = (unsigned)read_number(r);
		} else if (!strcmp(name, "key")) {
			read_string(r, hex, sizeof hex);
			v->key_bytes = (unsigned)strlen(hex) / 2;
			for (unsigned i = 0; i < v->key_bytes; i++) {
				char byte[3] = { hex[2 * i], hex[2 * i + 1], 0 };
				v->key[i] = (uint8_t)strtoul(byte, NULL, 16);
			}
		} else if (!strcmp(name, "crc64")) {
			read_string(r, hex, sizeof hex);
			v->crc64 = strtoull(hex, NULL, 16);
		} else if (!strcmp(name, "index")) {
			read_index(r, v);
		} else {
			r->error = true;
		}
	} while (!r->error && accept(r, ','));
	expect(r, '}');
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	size_t got = fread(buf, 1, (size_t)n, f);
	buf[got] = '\0';
	fclose(f);
	return buf;
}

void test_crc64_check_value(void)
{
	CHECK(matcha_crc64_xz((const uint8_t *)"123456789", 9) == 0x995DC9BBDF1939FAull);
	CHECK(matcha_crc64_xz(NULL, 0) == 0);
}

void test_hash_vectors(void)
{
	char *text = read_file(MATCHA_HASH_VECTORS);
	CHECK_MSG(text, "cannot read %s", MATCHA_HASH_VECTORS);
	struct reader r = { text, false };
	unsigned count = 0, widths_not_byte_multiple = 0;
	expect(&r, '[');
	do {
		struct hash_vector v;
		read_vector(&r, &v);
		if (r.error)
			break;
		count++;
		widths_not_byte_multiple += v.key_bits % 8 != 0;
		if (v.key_bytes != (v.key_bits + 7) / 8 || v.nways != MAX_WAYS) {
			check_fail(__FILE__, __LINE__, "vector %u: %u key bytes for %u bits, %u ways",
				   count, v.key_bytes, v.key_bits, v.nways);
			continue;
		}
		uint64_t crc = matcha_crc64_xz(v.key, v.key_bytes);
		if (crc != v.crc64)
			check_fail(__FILE__, __LINE__, "vector %u (%u bits): crc64 %016llx, file says "
				   "%016llx", count, v.key_bits, (unsigned long long)crc,
				   (unsigned long long)v.crc64);
		for (unsigned w = 0; w < MAX_WAYS; w++) {
			uint32_t index = matcha_exact_index(v.key, v.key_bits, w, v.slots);
			if (index != v.ways[w])
				check_fail(__FILE__, __LINE__, "vector %u way %u: index %u, file says %u",
					   count, w, (unsigned)index, v.ways[w]);
		}
	} while (accept(&r, ','));
	expect(&r, ']');
	if (r.error)
		check_fail(__FILE__, __LINE__, "%s: parse error near \"%.20s\"",
			   MATCHA_HASH_VECTORS, r.p);
	free(text);
	CHECK_MSG(count >= 70, "only %u vectors", count);
	CHECK(widths_not_byte_multiple > 0);
}
