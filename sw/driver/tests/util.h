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

#endif
