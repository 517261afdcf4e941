/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the table tests. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>

#include "matcha.h"

/* Big-endian bytes to little-endian word order, written apart from the driver's. */
static inline void test_be_to_words(const uint8_t *be, unsigned nbytes, uint32_t *words,
				    unsigned nwords)
{
	for (unsigned w = 0; w < nwords; w++)
		words[w] = 0;
	for (unsigned i = 0; i < nbytes; i++) {
		unsigned lsb = 8 * (nbytes - 1 - i);
		words[lsb / 32] |= (uint32_t)be[i] << lsb % 32;
	}
}

/* A random value of `bits` bits as ceil(bits/8) big-endian bytes. */
static inline void random_value(struct rng *r, uint8_t *p, unsigned bits)
{
	rng_bytes(r, p, (bits + 7) / 8);
	if (bits % 8)
		p[0] &= (uint8_t)((1u << bits % 8) - 1);
}

/* The IPv4 address a.b.c.d as 4 big-endian bytes in k; k. */
static inline uint8_t *ipv4(uint8_t *k, unsigned a, unsigned b, unsigned c, unsigned d)
{
	k[0] = (uint8_t)a, k[1] = (uint8_t)b, k[2] = (uint8_t)c, k[3] = (uint8_t)d;
	return k;
}

/* Adds the route a.b.c.d/len to the IPv4 LPM table `table`: action id `id` (its low byte),
 * action data `id` (32 bits). */
static inline int ipv4_route_add(matcha_dev *dev, unsigned table, unsigned a, unsigned b,
				 unsigned c, unsigned d, unsigned len, uint32_t id)
{
	uint8_t k[4], data[4] = { (uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8),
				  (uint8_t)id };
	return matcha_lpm_add(dev, table, ipv4(k, a, b, c, d), len, (uint8_t)id, data, 32);
}

static inline int ipv4_route_delete(matcha_dev *dev, unsigned table, unsigned a, unsigned b,
				    unsigned c, unsigned d, unsigned len)
{
	uint8_t k[4];
	return matcha_lpm_delete(dev, table, ipv4(k, a, b, c, d), len);
}

/* A struct matcha_value (512-bit big-endian) of a 64-bit number or of big-endian bytes. */
static inline struct matcha_value val_u64(uint64_t x)
{
	struct matcha_value v = { { 0 } };
	for (unsigned i = 0; i < 8; i++)
		v.be[MATCHA_VALUE_BYTES - 1 - i] = (uint8_t)(x >> 8 * i);
	return v;
}

static inline struct matcha_value val_bytes(const uint8_t *be, unsigned n)
{
	struct matcha_value v = { { 0 } };
	for (unsigned i = 0; i < n; i++)
		v.be[MATCHA_VALUE_BYTES - n + i] = be[i];
	return v;
}

/* The text of layout `path` with the first `from` replaced by `to` (NULL if `from` does
 * not occur); *len its length. Defined in test_layout.c. */
char *test_layout_edited(const char *path, const char *from, const char *to, size_t *len);

#endif
