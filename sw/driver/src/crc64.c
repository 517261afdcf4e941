/* SPDX-License-Identifier: Apache-2.0 */
/* The exact-match hash of docs/tables.md, bit for bit. */
#include "internal.h"

/* 0x42F0E1EBA9EA3693 bit-reversed: the CRC is reflected, so it shifts right. */
#define CRC64_XZ_POLY_REFLECTED 0xC96C5795D7870F42ull

static uint64_t crc64_byte(uint64_t crc, uint8_t byte)
{
	crc ^= byte;
	for (int b = 0; b < 8; b++)
		crc = crc & 1 ? crc >> 1 ^ CRC64_XZ_POLY_REFLECTED : crc >> 1;
	return crc;
}

uint64_t matcha_crc64_xz(const uint8_t *p, size_t n)
{
	uint64_t crc = ~0ull;
	for (size_t i = 0; i < n; i++)
		crc = crc64_byte(crc, p[i]);
	return ~crc;
}

uint32_t matcha_exact_index(const uint8_t *key_be, unsigned key_bits, unsigned way,
			    unsigned slots)
{
	unsigned n = div_ceil(key_bits, 8);
	if (n == 0)
		return 0; /* CRC-64/XZ of no bytes is 0 */
	/* The hardware's key has exactly key_bits bits; whatever sits above them is not hashed. */
	uint8_t top = key_bits % 8 ? key_be[0] & ((1u << (key_bits % 8)) - 1) : key_be[0];
	uint64_t crc = crc64_byte(~0ull, top);
	for (unsigned i = 1; i < n; i++)
		crc = crc64_byte(crc, key_be[i]);
	return (uint32_t)(~crc >> (16 * way)) & (slots - 1);
}
