/* The JSON reader of json.h: recursive descent over the text. */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	const char *p, *end, *start;
	unsigned depth;
	char *err;
	size_t errlen;
	bool failed;
	const char *counted; /* line_of() has counted the lines up to here ... */
	unsigned line;       /* ... and this is the line there */
};

static void fail(struct parser *ps, const char *what)
{
	if (ps->failed)
		return;
	ps->failed = true;
	unsigned line = 1, col = 1;
	for (const char *c = ps->start; c < ps->p && c < ps->end; c++) {
		if (*c == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	snprintf(ps->err, ps->errlen, "line %u, column %u: %s", line, col, what);
}

/* The line at ps->p; the parser only moves forward, so counting resumes where it ended. */
static unsigned line_of(struct parser *ps)
{
	for (; ps->counted < ps->p; ps->counted++)
		ps->line += *ps->counted == '\n';
	return ps->line;
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return false;
	ps->p += n;
	return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool parse_number(struct parser *ps, struct json *v)
{
	const char *s = ps->p;
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || !is_digit(*ps->p)) {
		fail(ps, "a number needs a digit here");
		return false;
	}
	if (*ps->p == '0')
		ps->p++;
	else
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			fail(ps, "a digit must follow the decimal point");
			return false;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			fail(ps, "an exponent needs a digit");
			return false;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
	}
	v->type = JSON_NUMBER;
	v->text = strndup(s, (size_t)(ps->p - s));
	if (!v->text)
		fail(ps, "out of memory");
	return v->text != NULL;
}

static int hex4(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string at ps->p (the opening quote); the decoded text, or NULL after fail(). */
static char *parse_string(struct parser *ps)
{
	ps->p++; /* the opening quote */
	const char *s = ps->p;
	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\')
			ps->p++;
		ps->p++;
	}
	if (ps->p >= ps->end) {
		ps->p = s - 1;
		fail(ps, "unterminated string");
		return NULL;
	}
	/* Decoding never makes the text longer: an escape of n bytes yields at most n. */
	char *out = malloc((size_t)(ps->p - s) + 1), *o = out;
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	for (const char *c = s; c < ps->p; c++) {
		if ((unsigned char)*c < 0x20) {
			ps->p = c;
			fail(ps, "control character in a string (escape it)");
			goto bad;
		}
		if (*c != '\\') {
			*o++ = *c;
			continue;
		}
		c++;
		switch (*c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			int cp = ps->p - c >= 5 ? hex4(c + 1) : -1;
			if (cp < 0) {
				ps->p = c - 1;
				fail(ps, "\\u needs four hex digits");
				goto bad;
			}
			c += 4;
			if (cp >= 0xD800 && cp < 0xDC00) {
				int lo = ps->p - c >= 7 && c[1] == '\\' && c[2] == 'u' ? hex4(c + 3) : -1;
				if (lo < 0xDC00 || lo > 0xDFFF) {
					ps->p = c - 5;
					fail(ps, "a high surrogate \\u escape without its low half");
					goto bad;
				}
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				c += 6;
			} else if (cp >= 0xDC00 && cp < 0xE000) {
				ps->p = c - 5;
				fail(ps, "a low surrogate \\u escape on its own");
				goto bad;
			} else if (cp == 0) {
				ps->p = c - 5;
				fail(ps, "\\u0000 is not allowed in a string");
				goto bad;
			}
			o += put_utf8(o, (unsigned)cp);
			break;
		}
		default:
			ps->p = c - 1;
			fail(ps, "unknown escape in a string");
			goto bad;
		}
	}
	*o = '\0';
	ps->p++; /* the closing quote */
	return out;
bad:
	free(out);
	return NULL;
}

static bool parse_value(struct parser *ps, struct json *v);

/* Appends a zeroed slot to an array or object under construction. */
static struct json *grow(struct parser *ps, struct json *v)
{
	struct json *items = realloc(v->items, (v->n + 1) * sizeof *items);
	if (!items) {
		fail(ps, "out of memory");
		return NULL;
	}
	v->items = items;
	if (v->type == JSON_OBJECT) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
		if (!keys) {
			fail(ps, "out of memory");
			return NULL;
		}
		v->keys = keys;
		v->keys[v->n] = NULL;
	}
	memset(&v->items[v->n], 0, sizeof *items);
	return &v->items[v->n++];
}

static bool parse_container(struct parser *ps, struct json *v, bool object)
{
	char close = object ? '}' : ']';
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	if (++ps->depth > JSON_MAX_DEPTH) {
		fail(ps, "nested too deeply");
		return false;
	}
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return true;
	}
	for (;;) {
		skip_space(ps);
		char *key = NULL;
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, "expected a member name in double quotes");
				return false;
			}
			const char *at = ps->p;
			if (!(key = parse_string(ps)))
				return false;
			for (size_t i = 0; i < v->n; i++)
				if (!strcmp(v->keys[i], key)) {
					ps->p = at;
					fail(ps, "duplicate member name");
					free(key);
					return false;
				}
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				fail(ps, "expected ':' after a member name");
				return false;
			}
			ps->p++;
			skip_space(ps);
		}
		struct json *item = grow(ps, v);
		if (!item) {
			free(key);
			return false;
		}
		if (object)
			v->keys[v->n - 1] = key;
		if (!parse_value(ps, item))
			return false;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return true;
		}
		fail(ps, object ? "expected ',' or '}' after an object member" :
				  "expected ',' or ']' after an array element");
		return false;
	}
}

static bool parse_value(struct parser *ps, struct json *v)
{
	skip_space(ps);
	v->line = line_of(ps);
	if (ps->p >= ps->end) {
		fail(ps, "unexpected end of the text, a value was expected");
		return false;
	}
	switch (*ps->p) {
	case '{': return parse_container(ps, v, true);
	case '[': return parse_container(ps, v, false);
	case '"':
		v->type = JSON_STRING;
		return (v->text = parse_string(ps)) != NULL;
	case 't':
	case 'f':
		v->type = JSON_BOOL;
		v->boolean = *ps->p == 't';
		if (literal(ps, v->boolean ? "true" : "false"))
			return true;
		break;
	case 'n':
		v->type = JSON_NULL;
		if (literal(ps, "null"))
			return true;
		break;
	default:
		if (*ps->p == '-' || is_digit(*ps->p))
			return parse_number(ps, v);
	}
	fail(ps, "not a JSON value");
	return false;
}

static void free_value(struct json *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_value(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->text);
}

void json_free(struct json *v)
{
	if (!v)
		return;
	free_value(v);
	free(v);
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { text, text + len, text, 0, err, errlen, false, text, 1 };
	struct json *root = calloc(1, sizeof *root);
	if (!root) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
		ps.p += 3; /* a UTF-8 byte order mark */
	if (parse_value(&ps, root)) {
		skip_space(&ps);
		if (ps.p == ps.end)
			return root;
		fail(&ps, "text after the end of the JSON value");
	}
	json_free(root);
	return NULL;
}

const struct json *json_get(const struct json *v, const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

bool json_u64(const struct json *v, uint64_t *out)
{
	if (!v || v->type != JSON_NUMBER)
		return false;
	uint64_t x = 0;
	for (const char *c = v->text; *c; c++) {
		if (!is_digit(*c) || x > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*c - '0');
	}
	*out = x;
	return true;
}

bool json_equal(const struct json *a, const struct json *b)
{
	if (a->type != b->type || a->n != b->n)
		return false;
	switch (a->type) {
	case JSON_NULL: return true;
	case JSON_BOOL: return a->boolean == b->boolean;
	case JSON_NUMBER:
	case JSON_STRING: return !strcmp(a->text, b->text);
	case JSON_ARRAY:
		for (size_t i = 0; i < a->n; i++)
			if (!json_equal(&a->items[i], &b->items[i]))
				return false;
		return true;
	case JSON_OBJECT:
		for (size_t i = 0; i < a->n; i++) {
			const struct json *m = json_get(b, a->keys[i]);
			if (!m || !json_equal(&a->items[i], m))
				return false;
		}
		return true;
	}
	return false;
}

const char *json_type_name(enum json_type t)
{
	static const char *const names[] = { "null", "a boolean", "a number", "a string",
					     "an array", "an object" };
	return names[t];
}
