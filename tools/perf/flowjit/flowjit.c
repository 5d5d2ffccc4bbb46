// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: check, print, reassemble and synthesize
 * PERF_RECORD_FLOWJIT records (runtime code images).
 *
 * A record is a struct flowjit_record, chunk_len bytes of code, padding
 * to 8 bytes and the sample_id. Objects larger than FLOWJIT_CHUNK_MAX come
 * in several records with increasing chunk_off, back to back in one ring
 * buffer; the CRC-32C in every chunk covers the whole object.
 */
#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>
#include <api/fs/fs.h>

#include "flowjit.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/synthetic-events.h"
#include "util/tool.h"

bool flowjit__show_bytes;

int flowjit__parse(const union perf_event *event, struct flowjit_chunk *chunk,
		   const char **why)
{
	size_t size = event->header.size;

	size = size > sizeof(event->header) ? size - sizeof(event->header) : 0;
	return flowjit_chunk_parse(chunk, &event->header + 1, size, why);
}

void *flowjit__swap(union perf_event *event)
{
	struct flowjit_record *rec = (void *)(&event->header + 1);
	size_t end;

	if (event->header.size < sizeof(event->header) + sizeof(*rec))
		return NULL;
	rec->version	= bswap_16(rec->version);
	rec->flags	= bswap_32(rec->flags);
	rec->asid	= bswap_64(rec->asid);
	rec->pid	= bswap_32(rec->pid);
	rec->tid	= bswap_32(rec->tid);
	rec->addr	= bswap_64(rec->addr);
	rec->len	= bswap_64(rec->len);
	rec->id		= bswap_64(rec->id);
	rec->sub	= bswap_32(rec->sub);
	rec->revision	= bswap_32(rec->revision);
	rec->csum	= bswap_32(rec->csum);
	rec->chunk_off	= bswap_32(rec->chunk_off);
	rec->chunk_len	= bswap_32(rec->chunk_len);
	rec->base	= bswap_32(rec->base);
	end = sizeof(event->header) + sizeof(*rec) + PERF_ALIGN(rec->chunk_len, sizeof(u64));
	if (end > event->header.size)
		return NULL;
	if (rec->op == FLOWJIT_OP_DELTA) {
		/* the pieces' headers: a bad one stops here (the parser refuses it) */
		u8 *p = (u8 *)(rec + 1), *stop = p + rec->chunk_len;

		while ((size_t)(stop - p) >= sizeof(struct flowjit_delta_piece)) {
			struct flowjit_delta_piece piece;

			/* pieces are not aligned: copy */
			memcpy(&piece, p, sizeof(piece));
			piece.off = bswap_16(piece.off);
			piece.len = bswap_16(piece.len);
			memcpy(p, &piece, sizeof(piece));
			p += sizeof(piece);
			if (piece.len > stop - p)
				break;
			p += piece.len;
		}
	}
	return (void *)event + end;
}

/* the reassembly behind perf_event__fprintf_flowjit() (zeroed: initialized) */
static struct flowjit_reasm flowjit__print_reasm;
/*
 * and the user JIT revisions, so that a delta record is printed as the
 * revision it makes of its base (NULL until the first; never freed, as
 * the reassembly)
 */
static struct flowjit_store *flowjit__print_store;

/*
 * Give user JIT page record @chunk to the print store. Returns the
 * revision it completed, or NULL (a delta without its base so far).
 */
static const struct flowjit_rev *flowjit__print_keep(const struct flowjit_chunk *chunk)
{
	const struct flowjit_rev *rev = NULL;

	if (chunk->rec.kind != FLOWJIT_KIND_USER_JIT)
		return NULL;
	if (!flowjit__print_store)
		flowjit__print_store = flowjit_store_alloc();
	if (!flowjit__print_store ||
	    flowjit_store_add_chunk(flowjit__print_store, chunk, 0, &rev))
		return NULL;
	return rev;
}

static size_t flowjit__fprintf_bytes(const struct flowjit_image *img, FILE *fp)
{
	size_t ret = 0;
	u64 i;

	for (i = 0; i < img->rec.len; i++) {
		ret += fprintf(fp, "%s%02x%s", i % 16 ? "" : "    ", img->bytes[i],
			       i % 16 == 15 || i + 1 == img->rec.len ? "\n" : " ");
	}
	return ret;
}

/* the libbpf build overrides this, see bpf.c */
const char * __weak flowjit__bpf_prog_name(struct perf_env *env __maybe_unused,
					   u64 id __maybe_unused)
{
	return NULL;
}

static size_t flowjit__fprintf_name(const struct flowjit_record *rec,
				    struct machine *machine, FILE *fp)
{
	const char *name;

	if (!machine || !machine->env || rec->asid != FLOWJIT_ASID_KERNEL ||
	    (rec->kind != FLOWJIT_KIND_BPF_PROG && rec->kind != FLOWJIT_KIND_BPF_SUBPROG))
		return 0;
	name = flowjit__bpf_prog_name(machine->env, rec->id);
	if (!name || !*name)
		return 0;
	return fprintf(fp, " name %s", name);
}

size_t perf_event__fprintf_flowjit(union perf_event *event, struct machine *machine,
				   FILE *fp)
{
	struct flowjit_reasm *ra = &flowjit__print_reasm;
	struct flowjit_counts was = ra->counts;
	struct flowjit_chunk chunk;
	const struct flowjit_record *rec;
	struct flowjit_image img;
	const char *why = NULL;
	size_t ret;
	int err;

	err = flowjit__parse(event, &chunk, &why);
	if (err)
		return fprintf(fp, " bad flowjit record (size %u): %s\n",
			       event->header.size, why);
	rec = &chunk.rec;
	ret = fprintf(fp, " %s %s id %llu sub %u asid %llu addr %#llx len %llu",
		      flowjit_op_name(rec->op), flowjit_kind_name(rec->kind),
		      (unsigned long long)rec->id, rec->sub,
		      (unsigned long long)rec->asid, (unsigned long long)rec->addr,
		      (unsigned long long)rec->len);
	ret += flowjit__fprintf_name(rec, machine, fp);
	ret += fprintf(fp, " rev %u pid %u tid %u", rec->revision, rec->pid, rec->tid);
	if (rec->flags & FLOWJIT_F_EXISTING)
		ret += fprintf(fp, " existing");
	if (rec->flags & FLOWJIT_F_OLD_BYTES)
		ret += fprintf(fp, " old_bytes");
	if (rec->flags & FLOWJIT_F_PINNED)
		ret += fprintf(fp, " pinned");
	if (rec->op == FLOWJIT_OP_DELTA) {
		const struct flowjit_rev *rev = flowjit__print_keep(&chunk);

		ret += fprintf(fp, " base %u pieces %u bytes csum %#010x",
			       rec->base, rec->chunk_len, rec->csum);
		if (!rev)
			return ret + fprintf(fp, " no base (or BAD)\n");
		ret += fprintf(fp, " ok\n");
		if (flowjit__show_bytes) {
			img.rec = *rec;
			img.bytes = (u8 *)rev->bytes;
			ret += flowjit__fprintf_bytes(&img, fp);
		}
		return ret;
	}
	if (rec->op != FLOWJIT_OP_IMAGE)
		return ret + fprintf(fp, "\n");
	flowjit__print_keep(&chunk);

	ret += fprintf(fp, " chunk %u+%u csum %#010x", rec->chunk_off,
		       rec->chunk_len, rec->csum);
	err = flowjit_reasm_add(ra, &chunk, 0, &img);
	if (err < 0)
		return ret + fprintf(fp, " no memory\n");
	if (ra->counts.bad_csum != was.bad_csum)
		return ret + fprintf(fp, " BAD\n");
	if (ra->counts.overlap != was.overlap)
		return ret + fprintf(fp, " chunk out of sequence (repeat)\n");
	if (ra->counts.too_large != was.too_large)
		return ret + fprintf(fp, " too large\n");
	if (!err)
		return ret + fprintf(fp, " partial\n");
	ret += fprintf(fp, " ok\n");
	if (flowjit__show_bytes)
		ret += flowjit__fprintf_bytes(&img, fp);
	free(img.bytes);
	return ret;
}

int perf_event__process_flowjit(FLOWJIT_TOOL_CONST struct perf_tool *tool
				__maybe_unused,
				union perf_event *event,
				struct perf_sample *sample __maybe_unused,
				struct machine *machine)
{
	if (dump_trace)
		perf_event__fprintf_flowjit(event, machine, stdout);
	return 0;
}

int flowjit__check_kernel(void)
{
	int on;

	if (access(FLOWJIT_SYSCTL, F_OK)) {
		pr_err("--flowjit: this kernel has no flowjit support (%s is missing):\n"
		       "a kernel built with CONFIG_FLOWJIT is needed.\n", FLOWJIT_SYSCTL);
		return -1;
	}
	if (sysctl__read_int("kernel/flowjit", &on) == 0 && !on) {
		pr_err("--flowjit: flowjit is disabled: kernel.flowjit is 0.\n");
		return -1;
	}
	return 0;
}

int flowjit__open_strerror(struct evsel *evsel, int err, char *msg, size_t size)
{
	if (!evsel->core.attr.flowjit)
		return 0;
	if (access(FLOWJIT_SYSCTL, F_OK))
		return scnprintf(msg, size,
				 "%s: this kernel has no flowjit support (%s is missing).",
				 evsel__name(evsel), FLOWJIT_SYSCTL);
	switch (err) {
	case EACCES:
		return scnprintf(msg, size,
				 "%s: no permission for flowjit records: kernel.flowjit is 0,\n"
				 "or kernel code bytes are not readable (kernel.kptr_restrict,\n"
				 "kernel.perf_event_paranoid > 1 without CAP_PERFMON).",
				 evsel__name(evsel));
	case EPERM:
		return scnprintf(msg, size,
				 "%s: flowjit records of kernel code are refused under kernel lockdown.",
				 evsel__name(evsel));
	case EINVAL:
		return scnprintf(msg, size,
				 "%s: the kernel refused attr.flowjit (it needs sample_id_all and\n"
				 "PERF_SAMPLE_TIME, and not both exclude_kernel and exclude_user).",
				 evsel__name(evsel));
	default:
		return 0;
	}
}

int flowjit__synthesize_bpf_prog(FLOWJIT_TOOL_CONST struct perf_tool *tool,
				 perf_event__handler_t process,
				 struct machine *machine,
				 const struct bpf_prog_info *info)
{
	const u64 *addrs = (const u64 *)(uintptr_t)info->jited_ksyms;
	const u32 *lens = (const u32 *)(uintptr_t)info->jited_func_lens;
	const u8 *insns = (const u8 *)(uintptr_t)info->jited_prog_insns;
	size_t max = sizeof(struct perf_event_header) + sizeof(struct flowjit_record) +
		     FLOWJIT_CHUNK_MAX + machine->id_hdr_size;
	union perf_event *event;
	u64 off = 0, c;
	u32 i;
	int err = 0;

	if (!insns || !addrs || !lens || !info->jited_prog_len)
		return 0;	/* not JIT'd, or its bytes are not readable */
	event = zalloc(max);
	if (!event)
		return -ENOMEM;
	for (i = 0; i < info->nr_jited_ksyms && !err; i++) {
		struct flowjit_record *rec = (void *)(&event->header + 1);
		u32 csum;

		if (off + lens[i] > info->jited_prog_len) {
			err = -EINVAL;
			break;
		}
		csum = flowjit_csum(insns + off, lens[i]);
		for (c = 0; c < lens[i] && !err; c += FLOWJIT_CHUNK_MAX) {
			u32 n = min_t(u64, lens[i] - c, FLOWJIT_CHUNK_MAX);
			size_t size = sizeof(event->header) + sizeof(*rec) +
				      PERF_ALIGN(n, sizeof(u64));

			memset(event, 0, max);
			*rec = (struct flowjit_record) {
				.version	= FLOWJIT_RECORD_VERSION,
				.kind		= i ? FLOWJIT_KIND_BPF_SUBPROG :
						      FLOWJIT_KIND_BPF_PROG,
				.op		= FLOWJIT_OP_IMAGE,
				.flags		= FLOWJIT_F_EXISTING,
				.asid		= FLOWJIT_ASID_KERNEL,
				.addr		= addrs[i],
				.len		= lens[i],
				.id		= info->id,
				.sub		= i,
				.revision	= 1,
				.csum		= csum,
				.chunk_off	= c,
				.chunk_len	= n,
			};
			memcpy(rec + 1, insns + off + c, n);
			event->header.type = PERF_RECORD_FLOWJIT;
			event->header.misc = PERF_RECORD_MISC_KERNEL;
			event->header.size = size + machine->id_hdr_size;
			err = perf_tool__process_synth_event(tool, event, machine, process);
		}
		off += lens[i];
	}
	free(event);
	return err;
}
