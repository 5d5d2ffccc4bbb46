/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pr_mkperf: build small perf.data files in memory for tests, with
 * tools/lib/flowjit's writer (pdata.h).
 *
 * Layout as perf record writes it: header, ids, two attrs (intel_pt with
 * attr.flowjit, and a dummy tracking event), the data section.  All
 * records carry a sample_id trailer for sample_type TID|TIME|CPU|
 * IDENTIFIER; time conversion is the identity (shift 0, mult 1, zero 0):
 * perf time = TSC.
 */
#ifndef PR_MKPERF_H
#define PR_MKPERF_H

#include <intel-pt.h>

#include "libflowjit.h"
#include "pdata.h"
#include "pr_decode.h"
#include "pr_report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the sample_id layout of every record */
#define MKP_SAMPLE_TYPE	(PDATA_ST_TID | PDATA_ST_TIME | PDATA_ST_CPU | \
			 PDATA_ST_IDENTIFIER)

struct mkp {
	uint8_t *data;		/* the data section */
	size_t len, cap;
	uint64_t pt_config;	/* the intel_pt attr's config */
};

static inline void mkp_put(struct mkp *m, const void *p, size_t n)
{
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4096;

		while (cap < m->len + n)
			cap *= 2;
		m->data = realloc(m->data, cap);
		if (!m->data)
			abort();
		m->cap = cap;
	}
	memcpy(m->data + m->len, p, n);
	m->len += n;
}

static inline void mkp_u64(struct mkp *m, uint64_t v) { mkp_put(m, &v, 8); }
static inline void mkp_u32(struct mkp *m, uint32_t v) { mkp_put(m, &v, 4); }
static inline void mkp_u16(struct mkp *m, uint16_t v) { mkp_put(m, &v, 2); }

/* Start a record; returns its offset for mkp_end(). */
static inline size_t mkp_begin(struct mkp *m, uint32_t type, uint16_t misc)
{
	size_t at = m->len;

	mkp_u32(m, type);
	mkp_u16(m, misc);
	mkp_u16(m, 0);
	return at;
}

/* Pad the body to 8 bytes, add the sample_id trailer, fix the size. */
static inline void mkp_end(struct mkp *m, size_t at, uint32_t pid,
			   uint32_t tid, uint64_t time, uint32_t cpu)
{
	static const uint8_t zero[8];
	struct pdata_sid sid = {
		.pid = pid, .tid = tid, .time = time, .cpu = cpu,
		.id = 1,	/* identifier */
	};
	uint8_t trailer[64];
	uint16_t size;

	if ((m->len - at) & 7)
		mkp_put(m, zero, 8 - ((m->len - at) & 7));
	mkp_put(m, trailer, pdata_put_sid(trailer, MKP_SAMPLE_TYPE, &sid));
	size = (uint16_t)(m->len - at);
	memcpy(m->data + at + 6, &size, 2);
}

/* identity time conversion; no trailer: a user-type record */
static inline void mkp_auxtrace_info(struct mkp *m)
{
	uint64_t rec[PDATA_PT_INFO_WORDS], priv[PDATA_PT_PRIV_MAX] = { 0 };

	priv[PDATA_PT_PMU_TYPE] = 8;
	priv[PDATA_PT_TIME_MULT] = 1;
	priv[PDATA_PT_CAP_USER_TIME_ZERO] = 1;
	mkp_put(m, rec, pdata_pt_info_put(rec, PDATA_PT_INFO_WORDS, priv,
					  NULL));
}

/* The same with MTC: period 2^@period CTC ticks, @n/@d TSC ticks per CTC
 * tick, and the intel_pt attr asking for it (as perf record writes both).
 */
static inline void mkp_auxtrace_info_mtc(struct mkp *m, int period,
					 uint32_t n, uint32_t d)
{
	uint64_t rec[PDATA_PT_INFO_WORDS], priv[PDATA_PT_PRIV_MAX] = { 0 };

	priv[PDATA_PT_PMU_TYPE] = 8;
	priv[PDATA_PT_TIME_MULT] = 1;
	priv[PDATA_PT_CAP_USER_TIME_ZERO] = 1;
	priv[PDATA_PT_MTC_BIT] = 1ULL << 9;
	priv[PDATA_PT_MTC_FREQ_BITS] = 0xfULL << 14;
	priv[PDATA_PT_TSC_CTC_N] = n;
	priv[PDATA_PT_TSC_CTC_D] = d;
	m->pt_config |= 1ULL << 9 | (uint64_t)period << 14;
	mkp_put(m, rec, pdata_pt_info_put(rec, PDATA_PT_INFO_WORDS, priv,
					  NULL));
}

static inline void mkp_comm(struct mkp *m, uint32_t pid, uint32_t tid,
			    const char *comm, int exec, uint64_t time)
{
	char buf[16] = { 0 };
	size_t at = mkp_begin(m, 3, exec ? 1 << 13 : 0);

	mkp_u32(m, pid);
	mkp_u32(m, tid);
	strncpy(buf, comm, sizeof(buf) - 1);
	mkp_put(m, buf, 16);
	mkp_end(m, at, pid, tid, time, 0);
}

/* FORK of thread @tid (process @pid) from thread @ptid of @ppid. */
static inline void mkp_fork(struct mkp *m, uint32_t pid, uint32_t ppid,
			    uint32_t tid, uint32_t ptid, uint64_t time)
{
	size_t at = mkp_begin(m, 7, 0);

	mkp_u32(m, pid);
	mkp_u32(m, ppid);
	mkp_u32(m, tid);
	mkp_u32(m, ptid);
	mkp_u64(m, time);
	mkp_end(m, at, pid, tid, time, 0);
}

static inline void mkp_mmap2(struct mkp *m, uint32_t pid, uint64_t start,
			     uint64_t len, uint64_t pgoff, const char *name,
			     uint64_t time)
{
	size_t at = mkp_begin(m, 10, 2 /* user */);
	uint8_t zero[24] = { 0 };

	mkp_u32(m, pid);
	mkp_u32(m, pid);
	mkp_u64(m, start);
	mkp_u64(m, len);
	mkp_u64(m, pgoff);
	mkp_put(m, zero, 24);
	mkp_u32(m, 5);		/* PROT_READ | PROT_EXEC */
	mkp_u32(m, 2);		/* MAP_PRIVATE */
	mkp_put(m, name, strlen(name) + 1);
	mkp_end(m, at, pid, pid, time, 0);
}

static inline void mkp_lost(struct mkp *m, uint64_t n, uint64_t time)
{
	size_t at = mkp_begin(m, 2, 0);

	mkp_u64(m, 1);
	mkp_u64(m, n);
	mkp_end(m, at, 0, 0, time, 0);
}

static inline void mkp_ksymbol(struct mkp *m, uint64_t addr, uint32_t len,
			       const char *name, int unregister, uint64_t time)
{
	size_t at = mkp_begin(m, 17, 0);

	mkp_u64(m, addr);
	mkp_u32(m, len);
	mkp_u16(m, 1);		/* BPF */
	mkp_u16(m, unregister ? 1 : 0);
	mkp_put(m, name, strlen(name) + 1);
	mkp_end(m, at, 0, 0, time, 0);
}

/* One flowjit record: a chunk [off, off + n) of @bytes, or a retire. */
static inline void mkp_flowjit_rec(struct mkp *m, uint8_t kind, uint8_t op,
				   uint64_t asid, uint32_t pid, uint64_t addr,
				   uint64_t len, uint64_t id,
				   uint32_t revision, uint32_t csum,
				   const uint8_t *bytes, uint32_t off,
				   uint32_t n, uint64_t time)
{
	struct flowjit_record rec = {
		.version = FLOWJIT_RECORD_VERSION, .kind = kind, .op = op,
		.asid = asid, .pid = pid, .tid = pid, .addr = addr,
		.len = len, .id = id, .revision = revision, .csum = csum,
		.chunk_off = off, .chunk_len = n,
	};
	size_t at = mkp_begin(m, FLOWJIT_PERF_RECORD_TYPE, 0);

	mkp_put(m, &rec, sizeof(rec));
	if (n)
		mkp_put(m, bytes + off, n);
	mkp_end(m, at, pid, pid, time, 0);
}

/* A whole image in chunks of at most @chunk bytes; @skip_chunk >= 0 drops
 * that chunk, @bad_csum corrupts the checksum.
 */
static inline void mkp_flowjit(struct mkp *m, uint8_t kind, uint64_t asid,
			       uint32_t pid, uint64_t addr,
			       const uint8_t *bytes, uint32_t len,
			       uint64_t id, uint32_t revision, uint64_t time,
			       uint32_t chunk, int skip_chunk, int bad_csum,
			       uint32_t (*crc)(const void *, size_t))
{
	uint32_t csum = crc(bytes, len) ^ (bad_csum ? 1 : 0), off;
	int idx = 0;

	for (off = 0; off < len; off += chunk, ++idx) {
		uint32_t n = len - off < chunk ? len - off : chunk;

		if (idx == skip_chunk)
			continue;
		mkp_flowjit_rec(m, kind, 1, asid, pid, addr, len, id, revision,
				csum, bytes, off, n, time);
	}
}

static inline void mkp_auxtrace(struct mkp *m, const uint8_t *pt, size_t n,
				uint32_t idx, uint32_t tid, uint32_t cpu)
{
	static const uint8_t zero[8];
	struct pdata_auxtrace a;

	pdata_auxtrace_init(&a, n, idx, idx, tid, cpu);
	mkp_put(m, &a, sizeof(a));
	mkp_put(m, pt, n);
	if (a.aux_size > n)
		mkp_put(m, zero, a.aux_size - n);
}

/* The whole file for data section @m; *@size receives its size. */
static inline uint8_t *mkp_file(const struct mkp *m, size_t *size)
{
	static const uint64_t ids[2] = { 1, 2 };
	struct pdata_wattr wa[2];
	struct pdata_writer w;
	uint8_t attr[2][136];
	char *f = NULL;
	FILE *out;
	int i;

	memset(attr, 0, sizeof(attr));
	for (i = 0; i < 2; ++i) {
		uint32_t type = i ? 1 : 8, asize = 136;
		uint64_t st = MKP_SAMPLE_TYPE;
		uint64_t flags = PDATA_ATTR_SAMPLE_ID_ALL | (1ULL << 5) |
				 (i ? 0 : 1ULL << 63);

		memcpy(attr[i], &type, 4);
		memcpy(attr[i] + 4, &asize, 4);
		if (!i)
			memcpy(attr[i] + 8, &m->pt_config, 8);
		memcpy(attr[i] + 24, &st, 8);
		memcpy(attr[i] + PDATA_ATTR_FLAGS_OFFSET, &flags, 8);
		wa[i].attr = attr[i];
		wa[i].size = sizeof(attr[i]);
		wa[i].ids = &ids[i];
		wa[i].nr_ids = 1;
	}
	/* a seekable FILE (not a memory stream: the header goes last) */
	out = tmpfile();
	if (!out || pdata_write_begin(&w, out, 136 + 16, wa, 2) ||
	    pdata_write(&w, m->data, m->len) || pdata_write_end(&w))
		abort();
	*size = (size_t)ftell(out);
	f = malloc(*size);
	if (!f || fseek(out, 0, SEEK_SET) || fread(f, *size, 1, out) != 1)
		abort();
	fclose(out);
	return (uint8_t *)f;
}

/* PT packets with libipt's encoder. */
struct mkpt {
	uint8_t buf[4096];
	struct pt_encoder *enc;
};

static inline void mkpt_init(struct mkpt *p)
{
	struct pt_config config;

	pt_config_init(&config);
	config.begin = p->buf;
	config.end = p->buf + sizeof(p->buf);
	p->enc = pt_alloc_encoder(&config);
}

static inline void mkpt_pkt(struct mkpt *p, struct pt_packet *pkt)
{
	if (pt_enc_next(p->enc, pkt) < 0)
		abort();
}

/* PSB, TSC, MODE.Exec 64-bit, PSBEND. */
static inline void mkpt_psb(struct mkpt *p, uint64_t tsc)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_psb;
	mkpt_pkt(p, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc;
	mkpt_pkt(p, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec.csl = 1;
	mkpt_pkt(p, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_psbend;
	mkpt_pkt(p, &pkt);
}

static inline void mkpt_tip(struct mkpt *p, enum pt_packet_type type,
			    uint64_t ip)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	pkt.payload.ip.ip = ip;
	mkpt_pkt(p, &pkt);
}

static inline void mkpt_tsc(struct mkpt *p, uint64_t tsc)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc;
	mkpt_pkt(p, &pkt);
}

static inline size_t mkpt_fini(struct mkpt *p)
{
	uint64_t off = 0;

	pt_enc_get_offset(p->enc, &off);
	pt_free_encoder(p->enc);
	return (size_t)off;
}

/* The JIT scenario (pid 100, one per-thread AUX queue):
 *
 * - user JIT page at 0x10000: revision 1 (nop; nop; nop; syscall) from time
 *   1000, sent in 2-byte chunks; revision 2 (nop; syscall) from 3000; both
 *   taken at an exec fault at 0x10000, as the kernel records them;
 * - BPF prog 7 at MKP_KADDR (nop; nop; syscall) from 1000, retired at 2000;
 *   prog 8 reuses the address (nop; syscall) from 2500; both named by KSYMBOL;
 * - an image missing a chunk at 0x30000, one with a bad CRC at 0x40000;
 * - PERF_RECORD_LOST of 3 records;
 * - the trace: at TSC 1500 the JIT page then prog 7 run, at TSC 3500 the
 *   JIT page then prog 8.  The flow is 11 instructions (MKP_FLOW).
 */
#define MKP_KADDR	0xffffffffa0001000ULL
#define MKP_FLOW							\
	"  100             10000\n"					\
	"  100             10001\n"					\
	"  100             10002\n"					\
	"  100             10003\n"					\
	"  100  ffffffffa0001000\n"					\
	"  100  ffffffffa0001001\n"					\
	"  100  ffffffffa0001002\n"					\
	"  100             10000\n"					\
	"  100             10001\n"					\
	"  100  ffffffffa0001000\n"					\
	"  100  ffffffffa0001001\n"

static inline void mkp_scenario_split(struct mkp *m,
				      uint32_t (*crc)(const void *, size_t),
				      size_t nsplit)
{
	static const uint8_t rev1[] = { 0x90, 0x90, 0x90, 0x0f, 0x05 };
	static const uint8_t rev2[] = { 0x90, 0x0f, 0x05 };
	static const uint8_t progA[] = { 0x90, 0x90, 0x0f, 0x05 };
	static const uint8_t progB[] = { 0x90, 0x0f, 0x05 };
	static const uint8_t junk[16] = { 0x90 };
	struct mkpt pt;
	size_t n;

	mkp_auxtrace_info(m);
	mkp_comm(m, 100, 100, "jitter", 1, 10);
	mkp_lost(m, 3, 500);
	mkp_flowjit(m, 7, 1, 100, 0x10000, rev1, sizeof(rev1), 0x10000, 1,
		    1000, 2, -1, 0, crc);
	mkp_flowjit(m, 1, 0, 100, MKP_KADDR, progA, sizeof(progA), 7, 1, 1000,
		    4096, -1, 0, crc);
	mkp_ksymbol(m, MKP_KADDR, sizeof(progA), "bpf_prog_aaaa_A", 0, 1001);
	mkp_flowjit(m, 7, 1, 100, 0x30000, junk, sizeof(junk), 0, 1, 1100, 4,
		    1, 0, crc);
	mkp_flowjit(m, 7, 1, 100, 0x40000, junk, sizeof(junk), 0, 1, 1200, 4,
		    -1, 1, crc);
	mkp_flowjit_rec(m, 1, 2, 0, 100, MKP_KADDR, sizeof(progA), 7, 1, 0,
			NULL, 0, 0, 2000);
	mkp_ksymbol(m, MKP_KADDR, sizeof(progA), "bpf_prog_aaaa_A", 1, 2000);
	mkp_flowjit(m, 1, 0, 100, MKP_KADDR, progB, sizeof(progB), 8, 1, 2500,
		    4096, -1, 0, crc);
	mkp_ksymbol(m, MKP_KADDR, sizeof(progB), "bpf_prog_bbbb_B", 0, 2501);
	mkp_flowjit(m, 7, 1, 100, 0x10000, rev2, sizeof(rev2), 0x10000, 2,
		    3000, 4096, -1, 0, crc);

	mkpt_init(&pt);
	mkpt_psb(&pt, 1500);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	mkpt_tip(&pt, ppt_tip_pge, MKP_KADDR);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	mkpt_psb(&pt, 3500);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	mkpt_tip(&pt, ppt_tip_pge, MKP_KADDR);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	n = mkpt_fini(&pt);
	/* in @nsplit AUXTRACE buffers of one queue (8-byte multiples: no
	 * padding between)
	 */
	{
		size_t at = 0, k;

		for (k = 0; k < nsplit; ++k) {
			size_t part = k + 1 == nsplit ? n - at :
				      (n / nsplit) & ~(size_t)7;

			mkp_auxtrace(m, pt.buf + at, part, 0, 100,
				     (uint32_t)-1);
			at += part;
		}
	}
}

/* The scenario in @nsplit AUXTRACE buffers as a perf.data file of *@size
 * bytes, to be freed by the caller.
 */
static inline uint8_t *mkp_scenario_file(uint32_t (*crc)(const void *,
							 size_t),
					 size_t nsplit, size_t *size)
{
	struct mkp m = { 0 };
	uint8_t *f;

	mkp_scenario_split(&m, crc, nsplit);
	f = mkp_file(&m, size);
	free(m.data);
	return f;
}

/* The tie scenario (pid 100, one per-thread AUX queue, TSC 990 at the
 * start, no other timing packet): a user JIT page at 0x10000 imaged at
 * exec faults of the thread at 0x10000, revision 1 (nop; nop; nop;
 * syscall) at time 1000, revision 2 (nop; syscall) at 1600. The trace:
 * TIP.PGE at 0x10000 (revision 1's fault), the page runs; TIP.PGE at
 * 0x10001 (an interrupt had stopped it there), the rest runs again;
 * TIP.PGE at 0x10000 (revision 2's fault), the page runs. The clock stays
 * at 990: only ties give revision 2 (MKP_TIE_FLOW); by time revision 1
 * runs three times (MKP_TIE_FLOW_OLD).
 *
 * @with_ip: the records carry the fault's IP (else 0, as old kernels
 * wrote); @mtc: AUXTRACE_INFO says MTC every 2 TSC ticks, so with up to
 * 256 MTCs dropped a TIP.PGE at clock 990 is before 1504, no fault of
 * time 1600; @lost: revision 2's record
 * is lost (a PERF_RECORD_LOST at 1300 instead), and a PSB+ with TSC 1700
 * comes before the last run; @ovf: the last TIP.PGE is lost in an
 * overflow (OVF, then FUP at 0x10000).
 */
/* revision 1 from 0x10000, then from 0x10001 */
#define MKP_TIE_FLOW_RUNS_1_2						\
	"  100             10000\n"					\
	"  100             10001\n"					\
	"  100             10002\n"					\
	"  100             10003\n"					\
	"  100             10001\n"					\
	"  100             10002\n"					\
	"  100             10003\n"
#define MKP_TIE_FLOW							\
	MKP_TIE_FLOW_RUNS_1_2						\
	"  100             10000\n"					\
	"  100             10001\n"
#define MKP_TIE_FLOW_OLD						\
	MKP_TIE_FLOW_RUNS_1_2						\
	"  100             10000\n"					\
	"  100             10001\n"					\
	"  100             10002\n"					\
	"  100             10003\n"

static inline uint8_t *mkp_tie_file(uint32_t (*crc)(const void *, size_t),
				    int with_ip, int mtc, int lost, int ovf,
				    size_t *size)
{
	static const uint8_t rev1[] = { 0x90, 0x90, 0x90, 0x0f, 0x05 };
	static const uint8_t rev2[] = { 0x90, 0x0f, 0x05 };
	uint64_t ip = with_ip ? 0x10000 : 0;
	struct mkp m = { 0 };
	struct mkpt pt;
	uint8_t *f;
	size_t n;

	if (mtc)
		mkp_auxtrace_info_mtc(&m, 1, 1, 1);
	else
		mkp_auxtrace_info(&m);
	mkp_comm(&m, 100, 100, "jitter", 1, 10);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, rev1, sizeof(rev1), ip, 1, 1000,
		    4096, -1, 0, crc);
	if (lost)
		mkp_lost(&m, 1, 1300);
	else
		mkp_flowjit(&m, 7, 1, 100, 0x10000, rev2, sizeof(rev2), ip,
			    2, 1600, 4096, -1, 0, crc);

	mkpt_init(&pt);
	mkpt_psb(&pt, 990);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	mkpt_tip(&pt, ppt_tip_pge, 0x10001);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	if (lost)
		mkpt_psb(&pt, 1700);
	if (ovf) {
		struct pt_packet pkt;

		/* revision 2's fault and TIP.PGE lost: OVF, FUP 0x10000 */
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_ovf;
		mkpt_pkt(&pt, &pkt);
		mkpt_tip(&pt, ppt_fup, 0x10000);
	} else {
		mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	}
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 0, 100, (uint32_t)-1);
	f = mkp_file(&m, size);
	free(m.data);
	return f;
}

/* The unordered scenario: MTC every 2 TSC ticks, the clock at 990 (PSB
 * TSC, no MTC follows); a user JIT page at 0x10000, revision 1 (nop; nop;
 * nop; syscall) at time 900, revision 2 (nop; syscall) at @t2, both
 * without a fault IP (another thread faulted: nothing ties them here).
 * The thread runs the page from 0x10000 to its syscall.
 */
static inline uint8_t *mkp_unordered_file(uint32_t (*crc)(const void *, size_t),
					  uint64_t t2, size_t *size)
{
	static const uint8_t rev1[] = { 0x90, 0x90, 0x90, 0x0f, 0x05 };
	static const uint8_t rev2[] = { 0x90, 0x0f, 0x05 };
	struct mkp m = { 0 };
	struct mkpt pt;
	uint8_t *f;
	size_t n;

	mkp_auxtrace_info_mtc(&m, 1, 1, 1);
	mkp_comm(&m, 100, 100, "jitter", 1, 10);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, rev1, sizeof(rev1), 0, 1, 900,
		    4096, -1, 0, crc);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, rev2, sizeof(rev2), 0, 2, t2,
		    4096, -1, 0, crc);
	mkpt_init(&pt);
	mkpt_psb(&pt, 990);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 0, 100, (uint32_t)-1);
	f = mkp_file(&m, size);
	free(m.data);
	return f;
}

/* The calls scenario (two per-thread AUX queues):
 *
 * - thread 100 ("jitter") runs user JIT code of three flowjit images:
 *   0x10000 calls 0x20000 twice, which calls 0x28000 each time
 *   (MKP_CALLS_FOLDED); 15 instructions;
 * - thread 101 ("bpfrunner") runs BPF program bpf_prog_1111_outer (at
 *   MKP_KADDR), which calls bpf_prog_2222_inner; 6 instructions.
 *
 * With @timed, TSC packets at 10000 (each PSB), then 11000, 12000 and
 * 13000 as thread 100 returns; else only the PSBs' TSC 10000.
 */
#define MKP_CALLS_FOLDED						\
	"bpf_prog_1111_outer 4\n"					\
	"bpf_prog_1111_outer;bpf_prog_2222_inner 2\n"			\
	"jit:100:0x10000 3\n"						\
	"jit:100:0x10000;jit:100:0x20000 6\n"				\
	"jit:100:0x10000;jit:100:0x20000;jit:100:0x28000 6\n"

static inline uint8_t *mkp_calls_file(uint32_t (*crc)(const void *, size_t),
				      int timed, size_t *size)
{
	/* call 0x20000; call 0x20000; syscall */
	static const uint8_t a[] = { 0xe8, 0xfb, 0xff, 0x00, 0x00,
				     0xe8, 0xf6, 0xff, 0x00, 0x00,
				     0x0f, 0x05 };
	/* nop; call 0x28000; ret */
	static const uint8_t b[] = { 0x90, 0xe8, 0xfa, 0x7f, 0x00, 0x00,
				     0xc3 };
	/* nop; nop; ret */
	static const uint8_t c[] = { 0x90, 0x90, 0xc3 };
	/* nop; call MKP_KADDR + 0x1000; nop; syscall */
	static const uint8_t ka[] = { 0x90, 0xe8, 0xfa, 0x0f, 0x00, 0x00,
				      0x90, 0x0f, 0x05 };
	/* nop; ret */
	static const uint8_t kb[] = { 0x90, 0xc3 };
	struct mkp m = { 0 };
	struct mkpt pt;
	uint8_t *f;
	size_t n;

	mkp_auxtrace_info(&m);
	mkp_comm(&m, 100, 100, "jitter", 1, 10);
	mkp_comm(&m, 101, 101, "bpfrunner", 1, 10);
	mkp_flowjit(&m, 7, 1, 100, 0x10000, a, sizeof(a), 0, 1, 1000, 4096,
		    -1, 0, crc);
	mkp_flowjit(&m, 7, 1, 100, 0x20000, b, sizeof(b), 0, 1, 1000, 4096,
		    -1, 0, crc);
	mkp_flowjit(&m, 7, 1, 100, 0x28000, c, sizeof(c), 0, 1, 1000, 4096,
		    -1, 0, crc);
	mkp_flowjit(&m, 1, 0, 101, MKP_KADDR, ka, sizeof(ka), 11, 1, 1000,
		    4096, -1, 0, crc);
	mkp_ksymbol(&m, MKP_KADDR, sizeof(ka), "bpf_prog_1111_outer", 0,
		    1001);
	mkp_flowjit(&m, 1, 0, 101, MKP_KADDR + 0x1000, kb, sizeof(kb), 12, 1,
		    1000, 4096, -1, 0, crc);
	mkp_ksymbol(&m, MKP_KADDR + 0x1000, sizeof(kb),
		    "bpf_prog_2222_inner", 0, 1001);

	mkpt_init(&pt);
	mkpt_psb(&pt, 10000);
	mkpt_tip(&pt, ppt_tip_pge, 0x10000);
	mkpt_tip(&pt, ppt_tip, 0x20006);		/* 0x28000 returns */
	if (timed)
		mkpt_tsc(&pt, 11000);
	mkpt_tip(&pt, ppt_tip, 0x10005);		/* 0x20000 returns */
	if (timed)
		mkpt_tsc(&pt, 12000);
	mkpt_tip(&pt, ppt_tip, 0x20006);
	if (timed)
		mkpt_tsc(&pt, 13000);
	mkpt_tip(&pt, ppt_tip, 0x1000a);
	mkpt_tip(&pt, ppt_tip_pgd, 0);		/* syscall */
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 0, 100, (uint32_t)-1);

	mkpt_init(&pt);
	mkpt_psb(&pt, 10000);
	mkpt_tip(&pt, ppt_tip_pge, MKP_KADDR);
	mkpt_tip(&pt, ppt_tip, MKP_KADDR + 6);	/* the inner one returns */
	mkpt_tip(&pt, ppt_tip_pgd, 0);
	n = mkpt_fini(&pt);
	mkp_auxtrace(&m, pt.buf, n, 1, 101, (uint32_t)-1);
	f = mkp_file(&m, size);
	free(m.data);
	return f;
}

/* Load the scenario (in @nsplit AUXTRACE buffers) with @opts, decode it
 * and print its outputs into *@text (to be freed). Returns 0, or what
 * failed: the load's status, or -1 if decoding ran out of memory.
 */
/* Image sections the last mkp_decode_file() made (pr_image.h). */
static uint64_t mkp_last_sections;

static inline int mkp_decode_file(struct pr_replay_opts *opts, uint8_t *f,
				  size_t size, char **text, uint64_t *nerr,
				  uint64_t *nsuspect)
{
	struct pr_replay rp;
	struct pr_decode *d = NULL;
	size_t len;
	FILE *out;
	int status;

	opts->no_files = 1;
	opts->progress = 0;
	pr_replay_init(&rp, opts);
	status = pr_replay_load(&rp, f, size);
	if (!status) {
		d = pr_decode_run(&rp);
		if (!d)
			status = -1;
	}
	out = open_memstream(text, &len);
	*nerr = pr_report_print(d, out);
	fclose(out);
	if (nsuspect)
		*nsuspect = pr_decode_suspect(d);
	mkp_last_sections = 0;
	for (size_t i = 0; d && i < d->nq; ++i)
		mkp_last_sections += d->q[i].nsections;
	pr_decode_free(d);
	pr_replay_fini(&rp);
	free(f);
	return status;
}

/* As mkp_decode_file(), the lines written while decoding (opts.stream). */
static inline int mkp_decode_stream(struct pr_replay_opts *opts, uint8_t *f,
				    size_t size, char **text)
{
	struct pr_replay rp;
	struct pr_decode *d = NULL;
	size_t len;
	FILE *out;
	int status;

	opts->no_files = 1;
	opts->progress = 0;
	out = open_memstream(text, &len);
	opts->stream = out;
	pr_replay_init(&rp, opts);
	status = pr_replay_load(&rp, f, size);
	if (!status) {
		d = pr_decode_run(&rp);
		if (!d)
			status = -1;
	}
	pr_report_print(d, out);
	fclose(out);
	opts->stream = NULL;
	pr_decode_free(d);
	pr_replay_fini(&rp);
	free(f);
	return status;
}

static inline int mkp_decode_scenario(struct pr_replay_opts *opts,
				      size_t nsplit, char **text,
				      uint64_t *nerr)
{
	size_t size;
	uint8_t *f = mkp_scenario_file(flowjit_csum, nsplit, &size);

	return mkp_decode_file(opts, f, size, text, nerr, NULL);
}

#endif /* PR_MKPERF_H */
