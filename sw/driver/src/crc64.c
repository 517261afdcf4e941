/* SPDX-License-Identifier: Apache-2.0 */
/* The exact-match hash of docs/tables.md and the session hash of docs/sessions.md, bit for bit. */
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

/* CRC-64/XZ of a key of exactly key_bits bits: whatever sits above them is not hashed. */
static uint64_t key_crc(const uint8_t *key_be, unsigned key_bits)
{
	unsigned n = div_ceil(key_bits, 8);
	if (n == 0)
		return 0; /* CRC-64/XZ of no bytes is 0 */
	uint8_t top = key_bits % 8 ? key_be[0] & ((1u << (key_bits % 8)) - 1) : key_be[0];
	uint64_t crc = crc64_byte(~0ull, top);
	for (unsigned i = 1; i < n; i++)
		crc = crc64_byte(crc, key_be[i]);
	return ~crc;
}

uint32_t matcha_exact_index(const uint8_t *key_be, unsigned key_bits, unsigned way,
			    unsigned slots)
{
	return (uint32_t)(key_crc(key_be, key_bits) >> (16 * way)) & (slots - 1);
}

/* PRESENT's S-box and bit permutation (docs/sessions.md, "Slots"). */
static const uint8_t present_sbox[16] = { 0xC, 0x5, 0x6, 0xB, 0x9, 0x0, 0xA, 0xD,
					  0x3, 0xE, 0xF, 0x8, 0x4, 0x7, 0x1, 0x2 };

uint64_t matcha_session_mix(uint64_t h)
{
	uint64_t substituted = 0, mixed = 0;
	for (unsigned n = 0; n < 16; n++)
		substituted |= (uint64_t)present_sbox[h >> 4 * n & 0xF] << 4 * n;
	for (unsigned i = 0; i < 64; i++)
		if (substituted >> i & 1)
			mixed |= 1ull << (i == 63 ? 63 : 16 * i % 63);
	return mixed;
}

uint32_t matcha_session_index(const uint8_t *key_be, unsigned key_bits, unsigned way,
			      unsigned slots)
{
	return (uint32_t)(matcha_session_mix(key_crc(key_be, key_bits)) >> (16 * way)) &
	       (slots - 1);
}
