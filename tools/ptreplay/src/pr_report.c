// SPDX-License-Identifier: GPL-2.0
/*
 * pr_report: the outputs of `ptreplay decode`, from the results of
 * pr_decode: instruction flow, call/return flow, per-function profile
 * and the decode-health report, as text or as one JSON object.
 */
#include "pr_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct pr_prof_out {
	const char *name, *dso;
	uint64_t count;
};

static int pr_prof_out_cmp(const void *a, const void *b)
{
	const struct pr_prof_out *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->dso, y->dso);
}

/* Print @s as a JSON string. */
static void pr_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; ++s) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void pr_print_profile(const struct pr_decode *d, FILE *out,
			     uint64_t total)
{
	struct pr_prof_out *all = NULL;
	size_t n = 0, cap = 0, i, j, k;
	int json = d->rp->opts.json;

	for (i = 0; i < d->nq; ++i) {
		const struct pr_qres *r = &d->q[i];

		for (j = 0; j < r->capprof; ++j) {
			struct pr_prof *p = &r->prof[j];

			if (!p->name)
				continue;
			for (k = 0; k < n; ++k)
				if (!strcmp(all[k].name, p->name) &&
				    !strcmp(all[k].dso, p->dso))
					break;
			if (k < n) {
				all[k].count += p->count;
				continue;
			}
			if (n == cap) {
				struct pr_prof_out *a;

				cap = cap ? 2 * cap : 64;
				a = realloc(all, cap * sizeof(*a));
				if (!a)
					break;
				all = a;
			}
			all[n].name = p->name;
			all[n].dso = p->dso;
			all[n].count = p->count;
			n += 1;
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), pr_prof_out_cmp);
	if (json) {
		fprintf(out, "\"profile\":[");
		for (i = 0; i < n; ++i) {
			fprintf(out, "%s\n{\"function\":", i ? "," : "");
			pr_json_str(out, all[i].name);
			fprintf(out, ",\"image\":");
			pr_json_str(out, all[i].dso);
			fprintf(out, ",\"insns\":%" PRIu64 "}", all[i].count);
		}
		fprintf(out, "]");
	} else {
		fprintf(out, "# profile: instructions per function "
			"(%" PRIu64 " total)\n", total);
		fprintf(out, "%12s %6s  %-40s %s\n", "insns", "%", "function",
			"image");
		for (i = 0; i < n; ++i)
			fprintf(out, "%12" PRIu64 " %6.2f  %-40s %s\n",
				all[i].count, total ? 100.0 * all[i].count /
				total : 0.0, all[i].name, all[i].dso);
	}
	free(all);
}

/* The revision switches of @d (text): per switch what tied it and how
 * many instructions the old revision ran; then what each revision in use
 * at the end ran.
 */
static void pr_print_switches(const struct pr_decode *d, FILE *out)
{
	uint64_t by[4] = { 0 }, nsus = 0, runs = 0, shown = 0, nuo = 0, uoruns = 0;
	uint64_t ndoubt = 0, druns = 0;
	size_t i, j;

	for (i = 0; i < d->nq; ++i) {
		for (j = 0; j < 4; ++j)
			by[j] += d->q[i].nsw_by[j];
		nsus += d->q[i].nsuspect;
		runs += d->q[i].nsuspect_runs;
		nuo += d->q[i].nunordered;
		uoruns += d->q[i].nunordered_runs;
		ndoubt += d->q[i].ndoubt;
		druns += d->q[i].ndoubt_runs;
	}
	fprintf(out, "revision switches:      %" PRIu64 " (by event %" PRIu64
		", by time %" PRIu64 ", late %" PRIu64 ")\n",
		by[FLOWJIT_TIE_EVENT] + by[FLOWJIT_TIE_TIME] +
		by[FLOWJIT_TIE_LATE], by[FLOWJIT_TIE_EVENT],
		by[FLOWJIT_TIE_TIME], by[FLOWJIT_TIE_LATE]);
	for (i = 0; i < d->nq; ++i) {
		const struct pr_qres *r = &d->q[i];

		for (j = 0; j < r->nsw && shown < 200; ++j) {
			const struct pr_rev_switch *sw = &r->sw[j];

			if (!sw->from)
				continue;
			fprintf(out, "  tid %d %#" PRIx64 ": revision %u (%"
				PRIu64 " insns) -> %u by %s from insn %" PRIu64
				"\n", sw->tid, sw->start, sw->from->revision,
				sw->from_insns, sw->to->revision,
				flowjit_tie_how_name(sw->how), sw->at);
			shown += 1;
		}
		for (j = 0; j < r->ncur && shown < 200; ++j, ++shown)
			fprintf(out, "  tid %d %#" PRIx64 ": revision %u (%"
				PRIu64 " insns) to the end, since %s\n",
				r->cur[j].tid, r->cur[j].start,
				r->cur[j].rev->revision, r->cur[j].insns,
				flowjit_tie_how_name(r->cur[j].how));
	}
	if (shown >= 200)
		fprintf(out, "  (more not shown)\n");
	fprintf(out, "suspect instructions:   %" PRIu64 " (in %" PRIu64
		" runs: a newer image may have been lost)\n", nsus, runs);
	fprintf(out, "unordered instructions: %" PRIu64 " (in %" PRIu64
		" runs: a newer image with other bytes within the clock's "
		"lag)\n", nuo, uoruns);
	fprintf(out, "  tied in doubt:        %" PRIu64 " (in %" PRIu64
		" runs: another resume at the fault's IP may be the fault's)\n",
		ndoubt, druns);
}

static void pr_print_health(const struct pr_decode *d, FILE *out,
			    uint64_t ninsn, uint64_t nerrors)
{
	const struct pr_replay *rp = d->rp;
	const struct pr_replay_counts *c = &rp->cnt;
	struct flowjit_store_stats fj;
	uint64_t nsync = 0, novf = 0, aux = 0, fj_missing, fj_malformed;
	uint64_t nsus = 0, nuo = 0, ndoubt = 0, sw_by[4] = { 0 };
	int json = rp->opts.json;
	size_t i, j;
	int first = 1;

	/* images still pending at the end lost chunks too */
	pr_store_flowjit_stats(&rp->store, &fj);
	fj_missing = fj.incomplete + fj.pending;
	fj_malformed = fj.bad_records - fj.too_large;
	for (i = 0; i < d->nq; ++i) {
		aux += rp->q[i].size;
		nsync += d->q[i].nsync;
		novf += d->q[i].noverflow;
		nsus += d->q[i].nsuspect;
		nuo += d->q[i].nunordered;
		ndoubt += d->q[i].ndoubt;
		for (j = 0; j < 4; ++j)
			sw_by[j] += d->q[i].nsw_by[j];
	}

	if (json) {
		fprintf(out, "\"health\":{\"instructions\":%" PRIu64
			",\"errors\":%" PRIu64 ",\"queues\":%zu,"
			"\"aux_bytes\":%" PRIu64 ",\"syncs\":%" PRIu64
			",\"overflows\":%" PRIu64 ",\"decode_seconds\":%.6f,"
			"\"errors_by_kind\":[", ninsn, nerrors, rp->nq, aux,
			nsync, novf, d->seconds);
		for (i = 0; i < d->nq; ++i) {
			const struct pr_qres *r = &d->q[i];

			for (j = 0; j < r->nerr; ++j) {
				fprintf(out, "%s{\"queue\":%u,\"kind\":",
					first ? "" : ",", rp->q[i].idx);
				pr_json_str(out, pr_decode_err_name(r->err[j].code));
				fprintf(out, ",\"region\":");
				pr_json_str(out, r->err[j].region);
				fprintf(out, ",\"count\":%" PRIu64 "}",
					r->err[j].count);
				first = 0;
			}
		}
		fprintf(out, "],\"flowjit\":{\"records\":%" PRIu64
			",\"ignored\":%" PRIu64 ",\"images_resolved\":%" PRIu64
			",\"incomplete_bad_checksum\":%" PRIu64
			",\"incomplete_missing_chunks\":%" PRIu64
			",\"incomplete_overlapping_chunks\":%" PRIu64
			",\"too_large\":%" PRIu64 ",\"bad_records\":%" PRIu64
			",\"unknown_version\":%" PRIu64 ",\"retired\":%" PRIu64
			",\"retire_unmatched\":%" PRIu64 ",\"faults\":%"
			PRIu64 ",\"revisions_missing\":%" PRIu64
			",\"deltas\":%" PRIu64 ",\"deltas_without_base\":%"
			PRIu64 ",\"deltas_bad\":%" PRIu64
			",\"pinned\":%" PRIu64
			",\"switches_by_event\":%" PRIu64
			",\"switches_by_time\":%" PRIu64
			",\"switches_late\":%" PRIu64
			",\"suspect_instructions\":%" PRIu64
			",\"unordered_instructions\":%" PRIu64
			",\"tied_in_doubt\":%" PRIu64 "},"
			"\"lost_records\":%" PRIu64 ",\"lost_events\":%" PRIu64
			",\"lost_samples\":%" PRIu64 ",\"aux_truncated\":%"
			PRIu64 ",\"aux_collision\":%" PRIu64 ",\"records\":%"
			PRIu64 ",\"mmaps\":%" PRIu64 ",\"files_missing\":%"
			PRIu64 ",\"buildid_mismatch\":%" PRIu64
			",\"ksymbols\":%" PRIu64 ",\"bpf_loads\":%" PRIu64
			",\"text_pokes\":%" PRIu64 "}",
			c->fj_records, c->fj_ignored, fj.images,
			fj.csum_errors, fj_missing, fj.overlaps,
			fj.too_large, fj_malformed, fj.unknown_version,
			rp->store.fj_retired, rp->store.fj_retire_unmatched,
			fj.faults, fj.missing_revs, fj.deltas,
			fj.delta_no_base, fj.delta_bad, fj.pinned,
			sw_by[FLOWJIT_TIE_EVENT],
			sw_by[FLOWJIT_TIE_TIME], sw_by[FLOWJIT_TIE_LATE],
			nsus, nuo, ndoubt, c->lost, c->lost_events, c->lost_samples, c->aux_truncated,
			c->aux_collision, c->records, c->mmaps,
			rp->store.files_missing, rp->store.buildid_mismatch,
			c->ksymbols, c->bpf_loads, c->text_pokes);
		return;
	}

	fprintf(out, "# decode health\n");
	fprintf(out, "instructions decoded:   %" PRIu64 "\n", ninsn);
	fprintf(out, "decode errors:          %" PRIu64 "\n", nerrors);
	for (i = 0; i < d->nq; ++i) {
		const struct pr_qres *r = &d->q[i];

		for (j = 0; j < r->nerr; ++j)
			fprintf(out, "  %8" PRIu64 "  %-28s in %s (queue %u)\n",
				r->err[j].count,
				pr_decode_err_name(r->err[j].code),
				r->err[j].region, rp->q[i].idx);
	}
	fprintf(out, "AUX queues:             %zu (%" PRIu64 " bytes, %s)\n",
		rp->nq, aux, rp->info.per_cpu_mmaps ? "per CPU" :
		"per thread");
	fprintf(out, "synchronizations:       %" PRIu64 "\n", nsync);
	fprintf(out, "overflows:              %" PRIu64 "\n", novf);
	fprintf(out, "flowjit records:        %" PRIu64 "%s\n", c->fj_records,
		c->fj_ignored ? " (ignored: --no-flowjit)" : "");
	fprintf(out, "  images resolved:      %" PRIu64 "\n", fj.images);
	fprintf(out, "  incomplete:           %" PRIu64 " (bad checksum %"
		PRIu64 ", missing chunks %" PRIu64 ", overlapping chunks %"
		PRIu64 ", too large %" PRIu64 ")\n",
		fj.csum_errors + fj_missing + fj.overlaps + fj.too_large,
		fj.csum_errors, fj_missing, fj.overlaps, fj.too_large);
	fprintf(out, "  malformed records:    %" PRIu64 " (unknown version %"
		PRIu64 ")\n", fj_malformed, fj.unknown_version);
	fprintf(out, "  retired:              %" PRIu64 " (unmatched %" PRIu64
		")\n", rp->store.fj_retired, rp->store.fj_retire_unmatched);
	fprintf(out, "  user JIT faults:      %" PRIu64 " (revisions missing %"
		PRIu64 ")\n", fj.faults, fj.missing_revs);
	fprintf(out, "  delta records:        %" PRIu64 " (without base %" PRIu64
		", bad result %" PRIu64 ")\n", fj.deltas + fj.delta_no_base +
		fj.delta_bad, fj.delta_no_base, fj.delta_bad);
	fprintf(out, "  pinned pages:         %" PRIu64 "%s\n", fj.pinned,
		fj.pinned ? " (images of pages the kernel may write without "
		"a fault: their code is suspect)" : "");
	pr_print_switches(d, out);
	fprintf(out, "records lost:           %" PRIu64 " (in %" PRIu64
		" PERF_RECORD_LOST)\n", c->lost, c->lost_events);
	fprintf(out, "AUX truncated:          %" PRIu64 "\n", c->aux_truncated);
	fprintf(out, "code mappings:          %" PRIu64 " (unreadable %" PRIu64
		", build-id mismatch %" PRIu64 ")\n", c->mmaps,
		c->mmaps_unreadable, rp->store.buildid_mismatch);
	fprintf(out, "ksymbols:               %" PRIu64 ", BPF loads %" PRIu64
		", text pokes %" PRIu64 "\n", c->ksymbols, c->bpf_loads,
		c->text_pokes);
	fprintf(out, "decode time:            %.3f s\n", d->seconds);
}

/* The flow lines (or with @calls, the call lines) of every queue, one
 * queue after the other; in JSON, array elements joined by commas.
 */
static void pr_print_lines(const struct pr_decode *d, FILE *out, int calls)
{
	int json = d->rp->opts.json, first = 1;
	size_t i;

	for (i = 0; i < d->nq; ++i) {
		const struct pr_buf *b = calls ? &d->q[i].calls : &d->q[i].flow;

		if (!b->len)
			continue;
		if (json && !first)
			fputs(",\n", out);
		fwrite(b->p, 1, b->len, out);
		first = 0;
	}
}

uint64_t pr_report_print(const struct pr_decode *d, FILE *out)
{
	uint64_t ninsn = 0, nerrors = 0;
	uint32_t o;
	int json;
	size_t i;

	if (!d || !out)
		return 0;
	o = d->rp->opts.outputs;
	json = d->rp->opts.json;
	for (i = 0; i < d->nq; ++i) {
		ninsn += d->q[i].ninsn;
		nerrors += d->q[i].nerrors;
	}

	/* the flow and call lines went out while decoding */
	if (d->streamed)
		o &= ~(uint32_t)(PR_OUT_FLOW | PR_OUT_CALLS);
	if (json && !d->streamed)
		fputc('{', out);
	if (o & PR_OUT_FLOW) {
		if (json)
			fprintf(out, "\"flow\":[\n");
		pr_print_lines(d, out, 0);
		if (json)
			fprintf(out, "]");
	}
	if (o & PR_OUT_CALLS) {
		if (json)
			fprintf(out, "%s\"calls\":[\n", o & PR_OUT_FLOW ?
				",\n" : "");
		pr_print_lines(d, out, 1);
		if (json)
			fprintf(out, "]");
	}
	o = d->rp->opts.outputs;
	if (o & PR_OUT_PROFILE) {
		if (json && (o & (PR_OUT_FLOW | PR_OUT_CALLS)))
			fprintf(out, ",\n");
		pr_print_profile(d, out, ninsn);
	}
	if (o & PR_OUT_HEALTH) {
		if (json && (o & (PR_OUT_FLOW | PR_OUT_CALLS | PR_OUT_PROFILE)))
			fprintf(out, ",\n");
		pr_print_health(d, out, ninsn, nerrors);
	}
	if (json)
		fprintf(out, "}\n");
	return nerrors;
}
