/* Helpers shared by the table tests. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>

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

#endif
