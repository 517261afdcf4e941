/*
 * A small JSON reader (RFC 8259) for layout.json: the whole text into a tree, with the
 * line of every value for messages. Numbers keep their text; strings are decoded to UTF-8
 * (a \u0000 escape is refused, so every string is a C string). Nesting is limited, so a
 * hostile file cannot exhaust the stack.
 */
#ifndef MATCHA_JSON_H
#define MATCHA_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	unsigned line;       /* where the value starts, from 1 */
	bool boolean;        /* JSON_BOOL */
	char *text;          /* JSON_STRING: the decoded string; JSON_NUMBER: the literal */
	size_t n;            /* JSON_ARRAY, JSON_OBJECT: number of elements or members */
	struct json *items;  /* elements, or member values */
	char **keys;         /* JSON_OBJECT: member names */
};

#define JSON_MAX_DEPTH 64

/* Parses text[0..len); on failure returns NULL with "line L, column C: what" in err. */
struct json *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(struct json *v);

/* The member `key` of an object, or NULL (also when v is not an object). */
const struct json *json_get(const struct json *v, const char *key);
/* A number that is a non-negative integer below 2^64 (no sign, fraction or exponent). */
bool json_u64(const struct json *v, uint64_t *out);
/* Structural equality (numbers by their text, members in any order). */
bool json_equal(const struct json *a, const struct json *b);
const char *json_type_name(enum json_type t);

#endif
