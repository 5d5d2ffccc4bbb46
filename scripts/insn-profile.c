// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for scripts/bench-profile: how many guest kernel
 * instructions each translation block ran, inside windows the guest
 * marks. Every execution of the kernel code at @toggle (the entry of a
 * system call the guest program makes for the purpose) opens or closes
 * a window; without toggle= everything counts.
 *
 *   -plugin insn-profile.so,out=FILE[,toggle=HEXADDR]
 *
 * FILE gets "# windows N" and then a line "VADDR INSNS EXECUTIONS" per
 * kernel translation block that ran inside a window; bench-profile adds
 * them up per function from System.map. A block is counted whole each
 * time it starts: one cut short by an exception or an interrupt counts
 * the instructions it did not run too. A "rep" string instruction is a
 * block of its own that runs once an iteration, as QEMU's instruction
 * counting (-icount) counts it.
 *
 * QEMU's plugin API (qemu-plugin.h; Debian 12 ships no header for it):
 * the few calls used here, as the API's version 1 has them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *udata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *udata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* the guest's kernel half (x86-64) */
#define KERNEL_START	0xffff800000000000ULL

/* a translated block; one address may be translated more than once */
struct block {
	uint64_t	vaddr;
	uint64_t	runs;
	unsigned int	insns;
	struct block	*next;
};

static struct block *blocks;
static const char *out_path;
static uint64_t toggle;
static int counting = 1;
static uint64_t windows;
static uint64_t unrecorded;	/* blocks calloc() failed for */

static void toggle_cb(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	counting = !counting;
	windows += counting;
}

static void block_cb(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	if (counting)
		((struct block *)udata)->runs++;
}

static void trans_cb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	(void)id;
	if (vaddr < KERNEL_START)
		return;
	/* before the block's own callback: a window opens with its block */
	if (toggle && vaddr == toggle)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, toggle_cb,
						     QEMU_PLUGIN_CB_NO_REGS,
						     NULL);
	b = calloc(1, sizeof(*b));
	if (!b) {
		unrecorded++;
		return;
	}
	b->vaddr = vaddr;
	b->insns = qemu_plugin_tb_n_insns(tb);
	b->next = blocks;
	blocks = b;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_cb,
					     QEMU_PLUGIN_CB_NO_REGS, b);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out_path, "w");
	struct block *b;

	(void)id;
	(void)udata;
	if (!f) {
		perror(out_path);
		return;
	}
	fprintf(f, "# windows %llu%s\n", (unsigned long long)windows,
		toggle ? "" : " (no toggle: the whole run)");
	if (unrecorded)
		fprintf(f, "# unrecorded blocks %llu (out of memory)\n",
			(unsigned long long)unrecorded);
	for (b = blocks; b; b = b->next)
		if (b->runs)
			fprintf(f, "%016llx %u %llu\n",
				(unsigned long long)b->vaddr, b->insns,
				(unsigned long long)b->runs);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc,
			char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_path = argv[i] + 4;
		} else if (!strncmp(argv[i], "toggle=", 7)) {
			toggle = strtoull(argv[i] + 7, NULL, 16);
			counting = 0;
		} else {
			fprintf(stderr, "insn-profile: unknown argument '%s'\n",
				argv[i]);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "insn-profile: no out=FILE\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, trans_cb);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
