// SPDX-License-Identifier: GPL-2.0
/*
 * ptksynth - ptsynth's kernel mode (README.rst, "Kernel scenario")
 *
 *   ptksynth gt -l QEMU.log -m MARKS -f RANGES -o FILE.gt
 *       kernel ground truth from QEMU's execution log (kgt.c)
 *   ptksynth synth -g FILE.gt -s GUEST.data -o perf.data [--raw FILE.pt]
 *         [--psb-period N] [--pmu-type N] [-f RANGES]
 *       PT stream of that ground truth, packaged with the guest's sideband
 *       (-f: the filter as perf record --filter would note it for perf)
 *
 *   ptksynth dump -g FILE.gt
 *       instructions (tid tsc ip bytes) and filter exits (tid tsc target)
 *   ptksynth vmdiff -g FILE.gt --vmlinux VMLINUX
 *       kernel instructions of the ground truth whose bytes differ from
 *       the ELF file's (one line each: tsc ip truth-bytes file-bytes)
 *
 * RANGES: START..END[,START..END...] (END exclusive), the trace filter.
 * The flow of a ground truth is printed by "ptsynth dump --insns" and
 * compared with a decoder's by "ptsynth cmpflow".
 */
#include <elf.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kgt.h"

/* bytes of ELF64 @f (@n bytes) at virtual address @va, from PT_LOAD */
static const uint8_t *elf_at(const uint8_t *f, size_t n, uint64_t va,
			     size_t len)
{
	const Elf64_Ehdr *eh = (const void *)f;
	int i;

	if (n < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff > n || eh->e_phnum > (n - eh->e_phoff) / sizeof(Elf64_Phdr))
		return NULL;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(f + eh->e_phoff) + i;

		if (ph->p_type != PT_LOAD || va < ph->p_vaddr ||
		    va - ph->p_vaddr + len > ph->p_filesz ||
		    ph->p_offset > n || ph->p_filesz > n - ph->p_offset)
			continue;
		return f + ph->p_offset + (va - ph->p_vaddr);
	}
	return NULL;
}

static int vmdiff(const char *gtp, const char *vmlinux)
{
	struct gt_trace gt;
	size_t n = 0, i, diff = 0, checked = 0;
	uint8_t *f = kgt_read_file(vmlinux, &n);

	if (!f) {
		fprintf(stderr, "ptksynth: cannot read %s\n", vmlinux);
		return -1;
	}
	if (gt_load(&gt, gtp)) {
		free(f);
		return -1;
	}
	for (i = 0; i < gt.nr_recs; i++) {
		const struct gt_insn *in = (const void *)gt.recs[i];
		const uint8_t *b;
		int j;

		if (in->h.type != GT_INSN || !(in->h.flags & GT_INSN_KERNEL))
			continue;
		b = elf_at(f, n, in->ip, in->len);
		if (!b)
			continue;
		checked++;
		if (!memcmp(b, in->bytes, in->len))
			continue;
		diff++;
		printf("%llu %#llx ", (unsigned long long)in->h.tsc,
		       (unsigned long long)in->ip);
		for (j = 0; j < in->len; j++)
			printf("%02x", in->bytes[j]);
		printf(" ");
		for (j = 0; j < in->len; j++)
			printf("%02x", b[j]);
		printf("\n");
	}
	fprintf(stderr, "ptksynth vmdiff: %zu instructions in the file, %zu differ\n",
		checked, diff);
	gt_free(&gt);
	free(f);
	return 0;
}

/* the kernel records of a ground truth, one line each */
static int kdump(const char *gtp)
{
	struct gt_trace gt;
	size_t i;

	if (gt_load(&gt, gtp))
		return -1;
	for (i = 0; i < gt.nr_recs; i++) {
		const struct gt_rec *r = gt.recs[i];
		const struct gt_insn *in = (const void *)r;
		int j;

		if (r->type == GT_INSN) {
			printf("insn %u %llu %#llx", r->tid,
			       (unsigned long long)r->tsc,
			       (unsigned long long)in->ip);
			for (j = 0; j < in->len; j++)
				printf(" %02x", in->bytes[j]);
			printf("\n");
		} else if (r->type == GT_KIRQ) {
			printf("irq %u %llu %#llx\n", r->tid,
			       (unsigned long long)r->tsc,
			       (unsigned long long)((const struct gt_kirq *)r)->ip);
		} else if (r->type == GT_KEXIT) {
			printf("exit %u %llu %#llx\n", r->tid,
			       (unsigned long long)r->tsc,
			       (unsigned long long)((const struct gt_kexit *)r)->target);
		}
	}
	gt_free(&gt);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
"usage: ptksynth gt -l QEMU.log -m MARKS -f START..END[,...] -o FILE.gt\n"
"       ptksynth synth -g FILE.gt -s GUEST.data -o perf.data [--raw FILE.pt]\n"
"                [--psb-period N] [--pmu-type N] [-f START..END[,...]]\n"
"       ptksynth vmdiff -g FILE.gt --vmlinux VMLINUX\n"
"       ptksynth dump -g FILE.gt\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "marks", required_argument, NULL, 'm' },
		{ "filter", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "gt", required_argument, NULL, 'g' },
		{ "sideband", required_argument, NULL, 's' },
		{ "raw", required_argument, NULL, 'r' },
		{ "psb-period", required_argument, NULL, 'p' },
		{ "pmu-type", required_argument, NULL, 't' },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct kgt_opts go = { 0 };
	struct ksynth_opts so = { .psb_period = 4096, .pmu_type = 8 };
	const char *cmd, *vml = NULL;
	int c, err;

	if (argc < 2) {
		usage();
		return 2;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "l:m:f:o:g:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': go.log = optarg; break;
		case 'm': go.marks = optarg; break;
		case 'f':
			go.nr_filter = kgt_parse_ranges(optarg, go.filter,
							KGT_MAX_RANGES);
			if (go.nr_filter <= 0) {
				fprintf(stderr, "ptksynth: bad ranges: %s\n", optarg);
				return 2;
			}
			memcpy(so.filter, go.filter, sizeof(so.filter));
			so.nr_filter = go.nr_filter;
			break;
		case 'o': go.out = so.out = optarg; break;
		case 'g': so.gt = optarg; break;
		case 's': so.sideband = optarg; break;
		case 'r': so.raw = optarg; break;
		case 'p': so.psb_period = strtoull(optarg, NULL, 0); break;
		case 't': so.pmu_type = strtoul(optarg, NULL, 0); break;
		case 'k': vml = optarg; break;
		default: usage(); return 2;
		}
	}
	if (!strcmp(cmd, "gt")) {
		if (!go.log || !go.marks || !go.nr_filter || !go.out) {
			usage();
			return 2;
		}
		err = kgt_run(&go);
	} else if (!strcmp(cmd, "synth")) {
		if (!so.gt || !so.sideband || !so.out) {
			usage();
			return 2;
		}
		err = ksynth_run(&so);
	} else if (!strcmp(cmd, "dump") && so.gt) {
		err = kdump(so.gt);
	} else if (!strcmp(cmd, "vmdiff") && so.gt && vml) {
		err = vmdiff(so.gt, vml);
	} else {
		usage();
		return 2;
	}
	return err ? 1 : 0;
}
