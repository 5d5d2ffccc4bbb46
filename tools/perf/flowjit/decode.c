// SPDX-License-Identifier: GPL-2.0
/*
 * perf and flowjit: code bytes for perf's Intel PT decoder.
 *
 * util/intel-pt.c asks here first whenever it needs the instructions at
 * an address: flowjit_pt__walk() walks them in the image live at the
 * decoder's time, straight from the store, and only if no image covers
 * the address does perf go on to its maps and dsos. The image store is
 * filled before decoding starts, from all flowjit records of the file
 * (perf_session__peek_events()), because the decoder's clock lags: it is
 * the last timing packet, older than the instructions that follow it, so
 * an image written after that packet and run before the next one must
 * already be in the store. Without a seekable file (a pipe) the store is
 * filled as the session delivers the records in time order.
 *
 * The records also reach flowjit_pt__event() in time order: there user
 * JIT images get a map and symbol "jit:<pid>:<addr>" so that samples in
 * them have a name (eBPF programs have theirs from PERF_RECORD_KSYMBOL),
 * and util/intel-pt.c invalidates the instruction blocks it cached from
 * dsos over the image's range.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "store.h"
#include "decode.h"
#include "util/config.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/intel-pt-decoder/intel-pt-insn-decoder.h"

struct flowjit_pt {
	struct flowjit_store		*store;
	struct flowjit_store_reads	reads;	/* what the decoder read */
	struct perf_session		*session;
	bool				preloaded;
};

static int flowjit_pt__config(const char *var, const char *value, void *data)
{
	bool *on = data;

	if (!strcmp(var, "intel-pt.flowjit"))
		*on = perf_config_bool(var, value);
	return 0;
}

static int flowjit_pt__peek(struct perf_session *session, union perf_event *event,
			    u64 offset __maybe_unused, void *data)
{
	struct flowjit_pt *fp = data;
	struct perf_sample sample = { .time = 0 };

	if (event->header.type != PERF_RECORD_FLOWJIT)
		return 0;
	if (evlist__parse_sample(session->evlist, event, &sample))
		sample.time = 0;
	return flowjit_store__add_event(fp->store, event, sample.time, NULL);
}

struct flowjit_pt *flowjit_pt__new(struct perf_session *session)
{
	struct flowjit_pt *fp;
	struct evsel *evsel;
	bool on = true, recorded = false;

	/* not recorded with --flowjit: decode exactly as without flowjit */
	evlist__for_each_entry(session->evlist, evsel)
		recorded |= evsel->core.attr.flowjit;
	if (!recorded)
		return NULL;
	perf_config(flowjit_pt__config, &on);
	if (!on) {
		pr_debug("flowjit: intel-pt.flowjit is off: not using flowjit images\n");
		return NULL;
	}
	fp = zalloc(sizeof(*fp));
	if (!fp)
		return NULL;
	fp->store = flowjit_store_alloc();
	if (!fp->store) {
		free(fp);
		return NULL;
	}
	fp->session = session;
	if (!perf_data__is_pipe(session->data) &&
	    !perf_session__peek_events(session, session->header.data_offset,
				       session->header.data_size, flowjit_pt__peek, fp)) {
		fp->preloaded = true;
	} else {
		/* start over in time order */
		flowjit_store_free(fp->store);
		fp->store = flowjit_store_alloc();
		if (!fp->store) {
			free(fp);
			return NULL;
		}
	}
	return fp;
}

void flowjit_pt__delete(struct flowjit_pt *fp)
{
	struct flowjit_store_stats s;

	if (!fp)
		return;
	flowjit_store_stats(fp->store, &s);
	/* always say what was dropped: the decode may have suffered from it */
	if (s.records && (verbose > 0 || flowjit_store__dropped(fp->store)))
		flowjit_store__fprintf_stats(fp->store, &fp->reads, stderr);
	flowjit_store_free(fp->store);
	free(fp);
}

/* the address space of @ip for process @pid at @time */
static bool flowjit_pt__asid(struct flowjit_pt *fp, u32 pid, bool kernel, u64 time,
			     u64 *asid)
{
	uint64_t a = FLOWJIT_ASID_KERNEL;

	if (!kernel && flowjit_store_pid_asid(fp->store, pid, time, &a))
		return false;
	*asid = a;
	return true;
}

/*
 * User JIT code: a map of its own named jit:<pid>:<addr>, for symbols.
 * Made when the record is delivered, and again when the decoder walks
 * the code if an mmap record replaced it or the decoder got there first.
 */
static int flowjit_pt__name_user_code(struct flowjit_pt *fp, const struct flowjit_rev *rev,
				      u32 pid)
{
	struct addr_location al;
	struct machine *machine = &fp->session->machines.host;
	struct thread *thread;
	struct symbol *sym;
	struct dso *dso;
	struct map *map;
	char name[64];
	int err = -ENOMEM;

	thread = machine__find_thread(machine, pid, pid);
	if (!thread)
		return 0;
	snprintf(name, sizeof(name), "jit:%u:%#llx", pid, (unsigned long long)rev->start);
	/* named already (the name is the same for every revision there) */
	if (thread__find_map(thread, PERF_RECORD_MISC_USER, rev->start, &al) &&
	    al.map->start == rev->start && al.map->end == rev->end && al.map->dso &&
	    !strcmp(al.map->dso->long_name, name)) {
		err = 0;
		goto out;
	}
	dso = dso__new(name);
	if (!dso)
		goto out;
	map = map__new2(rev->start, dso);
	if (!map)
		goto out_dso;
	map->end = rev->end;
	sym = symbol__new(map->map_ip(map, rev->start), rev->end - rev->start, 0, 0, name);
	if (!sym)
		goto out_map;
	dso__insert_symbol(dso, sym);
	dso__set_loaded(dso);
	err = thread__insert_map(thread, map);
out_map:
	map__put(map);
out_dso:
	dso__put(dso);
out:
	thread__put(thread);
	return err;
}

int flowjit_pt__walk(struct flowjit_pt *fp, u32 pid, bool kernel, u64 time, bool late,
		     struct intel_pt_insn *insn, u64 *insn_cnt, u64 *ip, u64 to_ip,
		     u64 max_insn_cnt)
{
	unsigned char buf[INTEL_PT_INSN_BUF_SZ];
	const struct flowjit_rev *rev;
	const u8 *bytes;
	size_t len, n;		/* bytes valid at *ip */
	u64 asid;

	if (!fp || !flowjit_pt__asid(fp, pid, kernel, time, &asid))
		return FLOWJIT_WALK_NONE;
	len = flowjit_store_span(fp->store, asid, *ip, time, late, &bytes, &rev, &fp->reads);
	if (!len)
		return FLOWJIT_WALK_NONE;
	if (!kernel && rev->kind == FLOWJIT_KIND_USER_JIT)
		flowjit_pt__name_user_code(fp, rev, pid);
	while (1) {
		/*
		 * Decode in place in the bytes one lookup answered; near
		 * their end, from a copy of what is live there (maybe from
		 * the next image).
		 */
		if (len < INTEL_PT_INSN_BUF_SZ) {
			len = flowjit_store_read(fp->store, asid, *ip, time, late, buf,
						 sizeof(buf), &fp->reads);
			if (!len)
				return FLOWJIT_WALK_NONE;
			bytes = buf;
		}
		n = min_t(size_t, len, INTEL_PT_INSN_BUF_SZ);
		if (intel_pt_get_insn(bytes, n, 1, insn)) {
			/* maybe the rest is in an image that is not live yet */
			if (!late && n < INTEL_PT_INSN_BUF_SZ)
				return FLOWJIT_WALK_NONE;
			pr_debug("flowjit: cannot decode the image bytes at %#llx\n",
				 (unsigned long long)*ip);
			return -EINVAL;
		}
		insn->emulated_ptwrite = false;
		*insn_cnt += 1;
		if (insn->branch != INTEL_PT_BR_NO_BRANCH)
			return 0;
		if (max_insn_cnt && *insn_cnt >= max_insn_cnt)
			return 0;
		*ip += insn->length;
		if (to_ip && *ip == to_ip) {
			insn->length = 0;
			insn->op = INTEL_PT_OP_OTHER;
			return 0;
		}
		if (bytes == buf) {
			/* past the copied instruction: in place again */
			len = flowjit_store_span(fp->store, asid, *ip, time, late, &bytes,
						 NULL, &fp->reads);
			if (!len)
				return FLOWJIT_WALK_NONE;
		} else {
			bytes += insn->length;
			len -= insn->length;
		}
	}
}

int flowjit_pt__event(struct flowjit_pt *fp, union perf_event *event,
		      struct perf_sample *sample, u64 *asid, u64 *start, u64 *end)
{
	const struct flowjit_rev *rev = NULL;
	struct flowjit_chunk chunk;
	int err;

	*start = *end = 0;
	if (!fp->preloaded) {
		err = flowjit_store__add_event(fp->store, event, sample->time, &rev);
		if (err)	/* out of memory: decode on without this image */
			pr_debug("flowjit: record dropped: %d\n", err);
	} else if (!flowjit__parse(event, &chunk, NULL) &&
		   chunk.rec.op == FLOWJIT_OP_IMAGE &&
		   chunk.rec.chunk_off + chunk.rec.chunk_len == chunk.rec.len) {
		/* the last chunk: the image is live from now on */
		rev = flowjit_store_find(fp->store, chunk.rec.asid, chunk.rec.addr,
					 sample->time);
		if (rev && (rev->start != chunk.rec.addr || rev->time != sample->time))
			rev = NULL;
	}
	if (!rev)
		return 0;
	*asid = rev->asid;
	*start = rev->start;
	*end = rev->end;
	if (rev->asid != FLOWJIT_ASID_KERNEL && rev->kind == FLOWJIT_KIND_USER_JIT)
		flowjit_pt__name_user_code(fp, rev, rev->pid);	/* names are best effort */
	return 0;
}
