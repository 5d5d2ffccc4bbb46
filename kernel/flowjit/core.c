// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit: runtime code images for branch trace decoders.
 *
 * This file holds the system-wide switch. The capture paths come with
 * the users that need them.
 */
#include <linux/init.h>
#include <linux/sysctl.h>

/* kernel.flowjit: 0 disables flowjit system-wide, 1 (default) allows it. */
static int sysctl_flowjit = 1;

static struct ctl_table flowjit_sysctls[] = {
	{
		.procname	= "flowjit",
		.data		= &sysctl_flowjit,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{ }
};

static int __init flowjit_init(void)
{
	register_sysctl_init("kernel", flowjit_sysctls);
	return 0;
}
late_initcall(flowjit_init);
