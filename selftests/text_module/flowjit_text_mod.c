// SPDX-License-Identifier: GPL-2.0
/*
 * Test module of selftests/flowjit/kernel_text: its init function
 * enables a static key with a site in the module's core text, so the
 * text when the module is coming and when it is live differ.
 */
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/module.h>

static DEFINE_STATIC_KEY_FALSE(flowjit_text_key);

static noinline int flowjit_text_branch(void)
{
	if (static_branch_unlikely(&flowjit_text_key))
		return 2;
	return 1;
}

static int __init flowjit_text_init(void)
{
	static_branch_enable(&flowjit_text_key);
	return flowjit_text_branch() == 2 ? 0 : -EINVAL;
}

static void __exit flowjit_text_exit(void)
{
}

module_init(flowjit_text_init);
module_exit(flowjit_text_exit);
MODULE_DESCRIPTION("flowjit kernel text selftest module");
MODULE_LICENSE("GPL");
