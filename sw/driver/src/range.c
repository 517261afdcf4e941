/* SPDX-License-Identifier: Apache-2.0 */
/* Ranges of a ternary key field as value/mask prefixes (matcha_range_to_prefixes). */
#include "internal.h"

/*
 * From lo upwards, each step takes the largest block that starts at x (its size divides x)
 * and ends within the range. Every cover of the range by prefixes can be made disjoint
 * (nested prefixes are redundant) and a disjoint one must start a block at x, so these
 * greedy blocks are the unique fewest.
 */
int matcha_range_to_prefixes(uint32_t lo, uint32_t hi, unsigned bits,
			     struct matcha_prefix *out, unsigned max)
{
	struct matcha_prefix p[MATCHA_RANGE_MAX_PREFIXES + 1];
	unsigned n = 0;
	if (bits == 0 || bits > 32)
		return MATCHA_EINVAL;
	uint64_t top = (uint64_t)1 << bits;
	if (lo > hi || hi >= top)
		return MATCHA_EINVAL;
	for (uint64_t x = lo; x <= hi; n++) {
		uint64_t size = x ? x & (~x + 1) : top;
		while (x + size - 1 > hi)
			size >>= 1;
		p[n] = (struct matcha_prefix){ (uint32_t)x, (uint32_t)((top - 1) & ~(size - 1)) };
		x += size;
	}
	if (n > max)
		return MATCHA_ENOSPC;
	for (unsigned i = 0; i < n; i++)
		out[i] = p[i];
	return (int)n;
}
