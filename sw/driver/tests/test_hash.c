/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The exact-match and session hashes against tb/model/vectors/hash_vectors.json, the
 * vectors the RTL generator checks too (written by the Python model): a list of objects
 *   {"keyBits": n, "key": "<hex>", "crc64": "<hex>", "index": {"slots": s, "ways": [..]},
 *    "session": {"slots": s, "ways": [..]}}
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_WAYS 4

void test_crc64_check_value(void)
{
	CHECK(matcha_crc64_xz((const uint8_t *)"123456789", 9) == 0x995DC9BBDF1939FAull);
	CHECK(matcha_crc64_xz(NULL, 0) == 0);
}

void test_hash_vectors(void)
{
	json_error_t error;
	json_t *vectors = json_load_file(MATCHA_HASH_VECTORS, 0, &error), *jv;
	CHECK_MSG(json_is_array(vectors), "%s, line %d: %s", MATCHA_HASH_VECTORS, error.line,
		  json_is_array(vectors) ? "not a list" : error.text);
	unsigned widths_not_byte_multiple = 0;
	size_t i;
	json_array_foreach(vectors, i, jv) {
		int key_bits, slots, ways[MAX_WAYS], session_slots, session[MAX_WAYS];
		const char *key_hex, *crc_hex;
		/* JSON_STRICT: a member or way this test does not read is an error, not ignored. */
		if (json_unpack_ex(jv, &error, JSON_STRICT,
				   "{s:i, s:s, s:s, s:{s:i, s:[iiii]}, s:{s:i, s:[iiii]}}", "keyBits",
				   &key_bits, "key", &key_hex, "crc64", &crc_hex, "index", "slots", &slots,
				   "ways", &ways[0], &ways[1], &ways[2], &ways[3], "session", "slots",
				   &session_slots, "ways", &session[0], &session[1], &session[2],
				   &session[3])) {
			check_fail(__FILE__, __LINE__, "vector %zu: %s", i, error.text);
			continue;
		}
		widths_not_byte_multiple += key_bits % 8 != 0;
		uint8_t key[MATCHA_MAX_KEY_BYTES];
		unsigned key_bytes = (unsigned)strlen(key_hex) / 2;
		if (key_bits <= 0 || key_bytes != ((unsigned)key_bits + 7) / 8 ||
		    key_bytes > sizeof key) {
			check_fail(__FILE__, __LINE__, "vector %zu: %u key bytes for %d bits", i,
				   key_bytes, key_bits);
			continue;
		}
		for (unsigned b = 0; b < key_bytes; b++)
			sscanf(key_hex + 2 * b, "%2hhx", &key[b]);
		uint64_t crc = matcha_crc64_xz(key, key_bytes);
		if (crc != strtoull(crc_hex, NULL, 16))
			check_fail(__FILE__, __LINE__, "vector %zu (%d bits): crc64 %016llx, file says "
				   "%s", i, key_bits, (unsigned long long)crc, crc_hex);
		for (unsigned w = 0; w < MAX_WAYS; w++) {
			uint32_t index = matcha_exact_index(key, (unsigned)key_bits, w, (uint32_t)slots);
			if (index != (uint32_t)ways[w])
				check_fail(__FILE__, __LINE__, "vector %zu way %u: index %u, file says %d",
					   i, w, (unsigned)index, ways[w]);
			index = matcha_session_index(key, (unsigned)key_bits, w, (uint32_t)session_slots);
			if (index != (uint32_t)session[w])
				check_fail(__FILE__, __LINE__, "vector %zu way %u: session index %u, file "
					   "says %d", i, w, (unsigned)index, session[w]);
		}
	}
	CHECK_MSG(json_array_size(vectors) >= 70, "only %zu vectors", json_array_size(vectors));
	CHECK(widths_not_byte_multiple > 0);
	json_decref(vectors);
}
