/* SPDX-License-Identifier: Apache-2.0 */
/* Matcha's Corundum application block: CONTROL and the packet-out counters
 * (ip/corundum/README.md, "Control: the app BAR"). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* 0 if the device is a Corundum Matcha block (APP_ID reads "MTCA"), else MATCHA_ENODEV
 * naming the device and what APP_ID read, or why it could not be read: the simulator and
 * the boards answer an address beyond the pipeline's window with a bus error. */
static int check_app_block(matcha_dev *dev, const char *op)
{
	const char *name = dev->uri ? dev->uri : "the device";
	uint32_t id;
	if (matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_ID), &id)) {
		char why[sizeof dev->error];
		memcpy(why, dev->error, sizeof why);
		return matcha_fail(dev, MATCHA_ENODEV, "%s: %s is no Corundum Matcha application "
				   "block: its APP_ID could not be read (%s)", op, name, why);
	}
	if (id != MATCHA_HW_APP_ID_VALUE)
		return matcha_fail(dev, MATCHA_ENODEV, "%s: %s is no Corundum Matcha application "
				   "block: APP_ID (register 0x%06x) reads 0x%08x, not 0x%08x (\"MTCA\")",
				   op, name, (unsigned)APP_REG(MATCHA_HW_APP_ID), (unsigned)id,
				   MATCHA_HW_APP_ID_VALUE);
	return 0;
}

int matcha_app_control(matcha_dev *dev, uint32_t set, uint32_t clear, uint32_t *now)
{
	if ((set | clear) & ~MATCHA_APP_CONTROL_BITS)
		return matcha_fail(dev, MATCHA_EINVAL, "app_control: 0x%08x has bits that are no "
				   "CONTROL bit (CONTROL_TX_PIPELINE 0x%x, CONTROL_CPU_PORT 0x%x)",
				   (unsigned)((set | clear) & ~MATCHA_APP_CONTROL_BITS),
				   MATCHA_HW_APP_CONTROL_TX_PIPELINE, MATCHA_HW_APP_CONTROL_CPU_PORT);
	if (set & clear)
		return matcha_fail(dev, MATCHA_EINVAL, "app_control: CONTROL bits 0x%x are both to "
				   "be set and cleared", (unsigned)(set & clear));
	uint32_t was, after;
	int rc = check_app_block(dev, "app_control");
	if (rc || (rc = matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_CONTROL), &was)))
		return rc;
	uint32_t want = (was & ~clear) | set;
	if (want != was && (rc = matcha_reg_write(dev, APP_REG(MATCHA_HW_APP_CONTROL), want)))
		return rc;
	if ((rc = matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_CONTROL), &after)))
		return rc;
	if (now)
		*now = after;
	/* The block keeps only the bits its register map defines (1.2 added CONTROL_CPU_PORT). */
	if ((after & set) != set) {
		uint32_t version;
		if ((rc = matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_VERSION), &version)))
			return rc;
		return matcha_fail(dev, MATCHA_ENOTSUP, "app_control: CONTROL bits 0x%x do not "
				   "stay set: the block's register map %u.%u lacks them",
				   (unsigned)(set & ~after),
				   (unsigned)(version >> MATCHA_HW_APP_VERSION_MAJOR_SHIFT),
				   (unsigned)(version & MATCHA_HW_APP_VERSION_MINOR_MASK));
	}
	return 0;
}

int matcha_app_packet_outs(matcha_dev *dev, struct matcha_app_packet_outs *counts)
{
	int rc = check_app_block(dev, "app_packet_outs");
	if (rc || (rc = matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_PACKET_OUTS), &counts->taken)) ||
	    (rc = matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_PACKET_OUT_WRONG_PORT),
				  &counts->wrong_port)))
		return rc;
	return matcha_reg_read(dev, APP_REG(MATCHA_HW_APP_PACKET_OUT_MALFORMED), &counts->malformed);
}
