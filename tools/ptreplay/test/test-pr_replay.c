// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for pr_replay: loading a perf.data into queues, tasks and the
 * versioned code store.
 */
#include "pr_mkperf.h"
#include "pr_decode.h"
#include "pr_replay.h"
#include "pr_test.h"

/* COMM names threads; a forked thread has its parent's name until its
 * own COMM; control characters in a name become '?'.
 */
static struct prt_result comm_names(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	struct mkp m = { 0 };
	size_t size;
	uint8_t *f;

	mkp_auxtrace_info(&m);
	mkp_comm(&m, 100, 100, "jitter", 1, 10);
	mkp_fork(&m, 100, 100, 102, 100, 20);
	mkp_fork(&m, 100, 100, 103, 100, 21);
	mkp_comm(&m, 100, 103, "work\ter", 0, 30);
	mkp_comm(&m, 104, 104, "a-name-of-15-ch", 1, 40);
	f = mkp_file(&m, &size);
	free(m.data);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), -1);	/* no AUX data */
	prt_str_eq(pr_replay_comm(&rp, 100), "jitter");
	prt_str_eq(pr_replay_comm(&rp, 102), "jitter");
	prt_str_eq(pr_replay_comm(&rp, 103), "work?er");
	prt_str_eq(pr_replay_comm(&rp, 104), "a-name-of-15-ch");
	prt_null(pr_replay_comm(&rp, 105));
	prt_null(pr_replay_comm(&rp, 0));
	prt_null(pr_replay_comm(NULL, 100));
	pr_replay_fini(&rp);
	free(f);
	return prt_passed();
}

static uint8_t *scenario(size_t *size)
{
	return mkp_scenario_file(flowjit_csum, 1, size);
}

static struct prt_result load_scenario(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct flowjit_store_stats fj;
	struct pr_replay rp;
	const struct pr_region *r;
	size_t size;
	uint8_t *f = scenario(&size);

	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	prt_uint_eq(rp.nq, 1);
	prt_int_eq(rp.q[0].tid, 100);
	prt_uint_eq(pr_replay_pid(&rp, 100), 100);
	prt_uint_eq(rp.cnt.lost, 3);
	prt_uint_eq(rp.cnt.lost_events, 1);
	pr_store_flowjit_stats(&rp.store, &fj);
	prt_uint_eq(fj.images, 4);
	prt_uint_eq(fj.csum_errors, 1);
	/* the image missing a chunk is still waiting for it */
	prt_uint_eq(fj.incomplete + fj.pending, 1);
	prt_uint_eq(rp.store.fj_retired, 1);
	prt_uint_eq(rp.store.fj_retire_unmatched, 0);
	prt_uint_eq(rp.cnt.ksymbols, 3);
	prt_int_eq(rp.info.valid, 1);

	/* the BPF address holds prog 7 at 1500 and prog 8 at 3000 */
	r = pr_store_lookup(&rp.store, 0, MKP_KADDR, 1500, NULL, NULL);
	prt_ptr(r);
	prt_uint_eq(r->rev->id, 7);
	prt_str_eq(r->name, "bpf_prog_aaaa_A");
	r = pr_store_lookup(&rp.store, 0, MKP_KADDR, 3000, NULL, NULL);
	prt_ptr(r);
	prt_uint_eq(r->rev->id, 8);
	prt_str_eq(r->name, "bpf_prog_bbbb_B");
	/* the JIT page's revisions */
	r = pr_store_lookup(&rp.store, 100, 0x10000, 1500, NULL, NULL);
	prt_ptr(r);
	prt_uint_eq(r->rev->revision, 1);
	prt_str_eq(r->name, "jit:100:0x10000");
	r = pr_store_lookup(&rp.store, 100, 0x10000, 3500, NULL, NULL);
	prt_ptr(r);
	prt_uint_eq(r->rev->revision, 2);
	/* incomplete images give no code */
	prt_null(pr_store_lookup(&rp.store, 100, 0x30000, 3500, NULL, NULL));
	prt_null(pr_store_lookup(&rp.store, 100, 0x40000, 3500, NULL, NULL));
	pr_replay_fini(&rp);
	free(f);
	return prt_passed();
}

static struct prt_result load_no_flowjit(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1,
				       .no_flowjit = 1 };
	struct flowjit_store_stats fj;
	struct pr_replay rp;
	size_t size;
	uint8_t *f = scenario(&size);

	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	prt_uint_eq(rp.cnt.fj_records, 14);
	prt_uint_eq(rp.cnt.fj_ignored, 14);
	pr_store_flowjit_stats(&rp.store, &fj);
	prt_uint_eq(fj.records, 0);
	prt_uint_eq(fj.images, 0);
	prt_null(pr_store_lookup(&rp.store, 100, 0x10000, 1500, NULL, NULL));
	pr_replay_fini(&rp);
	free(f);
	return prt_passed();
}

static struct prt_result load_not_pt(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	struct mkp m = { 0 };
	size_t size;
	uint8_t *f;

	mkp_comm(&m, 1, 1, "x", 0, 1);
	f = mkp_file(&m, &size);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), -1);
	prt_check(strstr(rp.error, "Intel PT"));
	pr_replay_fini(&rp);
	free(f);
	free(m.data);

	pr_replay_init(&rp, NULL);
	rp.opts.input = "/nonexistent/perf.data";
	prt_int_eq(pr_replay_load(&rp, NULL, 0), -1);
	prt_check(strstr(rp.error, "cannot open"));
	pr_replay_fini(&rp);
	pr_replay_fini(NULL);
	return prt_passed();
}

/* Per-CPU scheduling from SWITCH_CPU_WIDE records. */
static struct prt_result on_cpu(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	struct mkp m = { 0 };
	uint32_t pid, tid;
	size_t size, at;
	uint8_t *f;

	mkp_auxtrace_info(&m);
	at = mkp_begin(&m, 15, 0);		/* in: 7/8 on cpu 1 at 100 */
	mkp_u32(&m, 0);
	mkp_u32(&m, 0);
	mkp_end(&m, at, 7, 8, 100, 1);
	at = mkp_begin(&m, 15, 1 << 13);	/* out at 200 */
	mkp_u32(&m, 9);
	mkp_u32(&m, 9);
	mkp_end(&m, at, 7, 8, 200, 1);
	mkp_auxtrace(&m, (const uint8_t *)"\x02\x82", 2, 0, (uint32_t)-1, 1);
	f = mkp_file(&m, &size);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	prt_int_eq(pr_replay_on_cpu(&rp, 1, 50, &pid, &tid), -1);
	prt_int_eq(pr_replay_on_cpu(&rp, 1, 150, &pid, &tid), 0);
	prt_uint_eq(pid, 7);
	prt_uint_eq(tid, 8);
	prt_int_eq(pr_replay_on_cpu(&rp, 1, 250, &pid, &tid), -1);
	prt_int_eq(pr_replay_on_cpu(&rp, 2, 150, &pid, &tid), -1);
	prt_uint_eq(pr_replay_pid(&rp, 8), 7);
	pr_replay_fini(&rp);
	free(f);
	free(m.data);
	return prt_passed();
}

/* TEXT_POKE: new bytes over kernel code from the poke's time on. */
static struct prt_result text_poke(void)
{
	static const uint8_t code[] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	struct mkp m = { 0 };
	uint8_t buf[5];
	size_t size, at;
	uint8_t *f;

	mkp_auxtrace_info(&m);
	mkp_flowjit(&m, 1, 0, 1, MKP_KADDR, code, sizeof(code), 9, 1, 100,
		    4096, -1, 0, flowjit_csum);
	at = mkp_begin(&m, 20, 0);
	mkp_u64(&m, MKP_KADDR + 1);
	mkp_u16(&m, 2);			/* old_len */
	mkp_u16(&m, 2);			/* new_len */
	mkp_put(&m, "\x90\x90\xeb\x00", 4);
	mkp_end(&m, at, 0, 0, 200, 0);
	mkp_auxtrace(&m, (const uint8_t *)"\x02\x82", 2, 0, 1, 0);
	f = mkp_file(&m, &size);
	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	prt_uint_eq(rp.cnt.text_pokes, 1);
	prt_uint_eq(pr_store_read(&rp.store, 0, MKP_KADDR, 150, buf, 5), 5);
	prt_uint_eq(buf[1], 0x90);
	prt_uint_eq(buf[2], 0x90);
	prt_uint_eq(pr_store_read(&rp.store, 0, MKP_KADDR, 250, buf, 5), 5);
	prt_uint_eq(buf[0], 0x90);
	prt_uint_eq(buf[1], 0xeb);
	prt_uint_eq(buf[2], 0x00);
	prt_uint_eq(buf[3], 0x90);
	pr_replay_fini(&rp);
	free(f);
	free(m.data);
	return prt_passed();
}

/* A file for exec_and_retire(): process 100 runs a JIT page of asid 1 at
 * 0x10000, execs at 2000 (the kernel's retire record of asid 1, the COMM
 * exec only at 2500, as perf may write them) and runs another JIT page
 * at the same address from 3000 in asid 2; a second image of asid 2 at
 * 0x20000 has [0x20004, 0x20008) retired at 3100.
 */
static uint8_t *exec_file(size_t *size)
{
	static const uint8_t old_page[] = { 0x90, 0x90, 0x90, 0x90 };
	static const uint8_t new_page[] = { 0xcc, 0xcc, 0xcc, 0xcc };
	static const uint8_t code[16] = { 0x90, 0x90, 0x90, 0x90, 0xc3, 0xc3,
					  0xc3, 0xc3, 0x90, 0x90, 0x90, 0x90 };
	struct mkp m = { 0 };
	uint8_t *f;

	mkp_auxtrace_info(&m);
	mkp_comm(&m, 100, 100, "jitter", 0, 10);
	mkp_flowjit(&m, FLOWJIT_KIND_USER_JIT, 1, 100, 0x10000, old_page,
		    sizeof(old_page), 0, 1, 1000, 4096, -1, 0, flowjit_csum);
	mkp_flowjit_rec(&m, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 1, 100,
			0, 0x7ffffffff000ULL, 0, 0, 0, NULL, 0, 0, 2000);
	mkp_comm(&m, 100, 100, "jitter2", 1, 2500);
	mkp_flowjit(&m, FLOWJIT_KIND_USER_JIT, 2, 100, 0x10000, new_page,
		    sizeof(new_page), 0, 1, 3000, 4096, -1, 0, flowjit_csum);
	mkp_flowjit(&m, FLOWJIT_KIND_USER_JIT, 2, 100, 0x20000, code,
		    sizeof(code), 0, 1, 3000, 4096, -1, 0, flowjit_csum);
	mkp_flowjit_rec(&m, FLOWJIT_KIND_USER_JIT, FLOWJIT_OP_RETIRE, 2, 100,
			0x20004, 4, 0, 0, 0, NULL, 0, 0, 3100);
	mkp_auxtrace(&m, (const uint8_t *)"\x02\x82", 2, 0, 100, (uint32_t)-1);
	f = mkp_file(&m, size);
	free(m.data);
	return f;
}

/* An exec keeps the pid but not the code: the old image of an address is
 * not read once the exec retired its address space, though the new
 * image there comes later; a retire record of part of an image hides
 * that part only.
 */
static struct prt_result exec_and_retire(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	uint8_t buf[16];
	size_t size;
	uint8_t *f = exec_file(&size);

	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	prt_uint_eq(rp.cnt.execs, 1);
	/* before the exec: the old page */
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x10000, 1500, buf, 4), 4);
	prt_uint_eq(buf[0], 0x90);
	/* after it, before the new page's time: the new page (a decoder's
	 * time lags), never the old one
	 */
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x10000, 2200, buf, 4), 4);
	prt_uint_eq(buf[0], 0xcc);
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x10000, 3500, buf, 4), 4);
	prt_uint_eq(buf[0], 0xcc);
	/* the retired part reads as nothing, the rest of the image stays */
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x20000, 3050, buf, 16), 16);
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x20000, 3200, buf, 16), 4);
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x20004, 3200, buf, 4), 0);
	prt_uint_eq(pr_store_read(&rp.store, 100, 0x20008, 3200, buf, 8), 8);
	prt_uint_eq(buf[0], 0x90);
	pr_replay_fini(&rp);
	free(f);
	return prt_passed();
}

/* The same file's counts: both retire records hid code. */
static struct prt_result exec_and_retire_counts(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct flowjit_store_stats fj;
	struct pr_replay rp;
	size_t size;
	uint8_t *f = exec_file(&size);

	pr_replay_init(&rp, &opts);
	prt_int_eq(pr_replay_load(&rp, f, size), 0);
	pr_store_flowjit_stats(&rp.store, &fj);
	prt_uint_eq(fj.images, 3);
	prt_uint_eq(fj.retires, 2);
	prt_uint_eq(rp.store.fj_retired, 2);
	prt_uint_eq(rp.store.fj_retire_unmatched, 0);
	pr_replay_fini(&rp);
	free(f);
	return prt_passed();
}

/* Every truncation and byte flips of the file: load fails or succeeds,
 * never crashes (the sanitizer build checks the bounds).
 */
static struct prt_result hostile(void)
{
	struct pr_replay_opts opts = { .jobs = 1, .no_files = 1 };
	struct pr_replay rp;
	size_t size, n, i;
	uint8_t *f = scenario(&size);
	uint8_t *g = malloc(size);
	unsigned int seed = 1;

	prt_ptr(g);
	for (n = 0; n < size; n += 3) {
		memcpy(g, f, size);
		pr_replay_init(&rp, &opts);
		(void)pr_replay_load(&rp, g, n);
		pr_replay_fini(&rp);
	}
	for (i = 0; i < 2000; ++i) {
		memcpy(g, f, size);
		for (n = 0; n < 4; ++n) {
			seed = seed * 1103515245 + 12345;
			g[104 + (seed >> 8) % (size - 104)] = (uint8_t)(seed >> 3);
		}
		pr_replay_init(&rp, &opts);
		if (pr_replay_load(&rp, g, size) == 0) {
			struct pr_decode *d = pr_decode_run(&rp);

			prt_check(d);
			pr_decode_free(d);
		}
		pr_replay_fini(&rp);
	}
	free(g);
	free(f);
	return prt_passed();
}

int main(void)
{
	struct prt_suite suite = { 0, 0 };

	prt_run(suite, "pr_replay: threads are named by COMM, forked ones by "
		"their parent until their own", comm_names);
	prt_run(suite, "pr_replay: the JIT scenario loads: queues, lost "
		"records, flowjit images resolved/incomplete/retired, names",
		load_scenario);
	prt_run(suite, "pr_replay: --no-flowjit counts flowjit records but "
		"maps no code from them", load_no_flowjit);
	prt_run(suite, "pr_replay: a file without Intel PT data or a missing "
		"file is refused with a reason", load_not_pt);
	prt_run(suite, "pr_replay: SWITCH_CPU_WIDE gives the task on a CPU at "
		"a time", on_cpu);
	prt_run(suite, "pr_replay: TEXT_POKE bytes replace kernel code from "
		"the poke's time on", text_poke);
	prt_run(suite, "pr_replay: an exec keeps the pid, not the JIT code; a "
		"partial retire hides its part only", exec_and_retire);
	prt_run(suite, "pr_replay: retire records that hid code are counted "
		"retired", exec_and_retire_counts);
	prt_run(suite, "pr_replay: truncated and corrupted files load or fail "
		"cleanly, and decode", hostile);
	return prt_exit(&suite);
}
