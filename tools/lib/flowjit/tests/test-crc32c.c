// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32C: known vectors, the table against the bitwise definition, and
 * the crc32 instruction path against the table path.
 */
#include <stdlib.h>
#include <string.h>

#include "../libflowjit.h"
#include "tap.h"

/* the definition, a bit at a time (what the uapi header documents) */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return crc;
}

static uint8_t buf[70000];

static void fill(uint32_t seed)
{
	size_t i;

	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245U + 12345U;
		buf[i] = (uint8_t)(seed >> 16);
	}
}

static int check_value(void)
{
	TAP_CHECK(flowjit_csum("123456789", 9) == 0xe3069283U);
	TAP_CHECK(flowjit_csum("", 0) == 0);
	return 0;
}

/* RFC 3720 (iSCSI) B.4: 32 bytes of zeroes, of ones, increasing, decreasing */
static int iscsi_vectors(void)
{
	uint8_t v[32];
	int i;

	memset(v, 0, sizeof(v));
	TAP_CHECK(flowjit_csum(v, 32) == 0x8a9136aaU);
	memset(v, 0xff, sizeof(v));
	TAP_CHECK(flowjit_csum(v, 32) == 0x62a8ab43U);
	for (i = 0; i < 32; i++)
		v[i] = (uint8_t)i;
	TAP_CHECK(flowjit_csum(v, 32) == 0x46dd794eU);
	for (i = 0; i < 32; i++)
		v[i] = (uint8_t)(31 - i);
	TAP_CHECK(flowjit_csum(v, 32) == 0x113fdb5cU);
	return 0;
}

static int table_is_bitwise(void)
{
	uint8_t b;
	int i;

	for (i = 0; i < 256; i++) {
		b = (uint8_t)i;
		TAP_CHECK(flowjit_crc32c_table(0, &b, 1) ==
			  crc32c_bitwise(0, &b, 1));
	}
	fill(1);
	TAP_CHECK(flowjit_crc32c_table(~0U, buf, sizeof(buf)) ==
		  crc32c_bitwise(~0U, buf, sizeof(buf)));
	return 0;
}

/* every length 0..300 at every alignment 0..15, and one large buffer */
static int hw_equals_table(void)
{
	size_t off, len;
	uint32_t hw;

	if (!flowjit_crc32c_has_hw())
		return 0;
	fill(7);
	for (off = 0; off < 16; off++)
		for (len = 0; len <= 300; len++) {
			hw = 0x12345678U;
			TAP_CHECK(!flowjit_crc32c_hw(&hw, buf + off, len));
			TAP_CHECK(hw == flowjit_crc32c_table(0x12345678U,
							     buf + off, len));
		}
	hw = ~0U;
	TAP_CHECK(!flowjit_crc32c_hw(&hw, buf + 3, sizeof(buf) - 3));
	TAP_CHECK(hw == flowjit_crc32c_table(~0U, buf + 3, sizeof(buf) - 3));
	return 0;
}

/* flowjit_crc32c() gives the same as either path, and chains */
static int chained_updates(void)
{
	uint32_t crc;

	fill(3);
	crc = flowjit_crc32c(~0U, buf, 1000);
	crc = flowjit_crc32c(crc, buf + 1000, 4001);
	TAP_CHECK(~crc == flowjit_csum(buf, 5001));
	TAP_CHECK(flowjit_csum(buf, 5001) ==
		  ~flowjit_crc32c_table(~0U, buf, 5001));
	return 0;
}

static int hw_null(void)
{
	TAP_CHECK(flowjit_crc32c_hw(NULL, buf, 1) < 0);
	return 0;
}

int main(void)
{
	tap_run(check_value,
		"crc32c: the check value of \"123456789\" is 0xe3069283, of nothing 0");
	tap_run(iscsi_vectors,
		"crc32c: the four 32-byte vectors of RFC 3720 B.4");
	tap_run(table_is_bitwise,
		"crc32c: the table path equals the bitwise definition (all bytes, 70000 random bytes)");
	if (flowjit_crc32c_has_hw())
		tap_run(hw_equals_table,
			"crc32c: the SSE4.2 crc32 path equals the table path at every length 0-300 and alignment 0-15, and on 70 kB");
	else
		printf("ok %d crc32c: the SSE4.2 path equals the table path # SKIP no SSE4.2\n",
		       ++tap_nr);
	tap_run(chained_updates,
		"crc32c: updates chain, and flowjit_crc32c() agrees with the table path");
	tap_run(hw_null,
		"crc32c: the hardware path refuses a NULL result");
	return tap_exit();
}
