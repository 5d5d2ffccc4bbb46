// SPDX-License-Identifier: GPL-2.0
/* perf.data writer: header, attrs, AUXTRACE_INFO, AUXTRACE payload, time. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <unistd.h>

#include "tap.h"
#include "gtbuild.h"
#include "perfdata.h"
#include "synth.h"

static const uint8_t jmp_rax[] = { 0xff, 0xe0 };

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n);
	if (b && fread(b, n, 1, f) != 1) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = n;
	return b;
}

int main(void)
{
	char path[] = "/tmp/ptsynth-unit-XXXXXX";
	struct ps_perf_opts po = { .pmu_type = 9, .psb_period = 4096 };
	struct gt_timeconv tc = { .time_shift = 10, .time_mult = 3000,
				  .time_zero = 5000 };
	struct ps_synth_result res;
	struct ps_synth_opts o;
	struct gtb b = { 0 };
	uint64_t *h, tsc = 123456789012ULL;
	unsigned __int128 exact;
	struct perf_event_attr *a0, *a1;
	size_t len, off, end;
	uint8_t *f;
	int i, fd, aux_ok = 0, info_ok = 0;

	for (i = 0; i < 50; i++)
		gtb_insn(&b, 0x401000 + (i & 1) * 0x100, jmp_rax, 2);
	gtb_finish(&b);
	ps_synth_opts_default(&o);
	fd = mkstemp(path);
	if (fd < 0 || ps_synth_run(&b.t, &o, &res))
		return 1;
	close(fd);
	po.path = path;
	TAP_OK(!ps_perf_write(&b.t, &res, &po), "unit: perf.data writer succeeds");
	f = slurp(path, &len);
	h = (uint64_t *)f;
	TAP_OK(f && len > 104 && h[0] == 0x32454c4946524550ULL && h[1] == 104 &&
	       h[2] == sizeof(struct perf_event_attr) + 16 &&
	       h[4] == 2 * h[2],
	       "unit: perf.data header: PERFILE2 magic, 104-byte header, two attrs");
	a0 = (void *)(f + h[3]);
	a1 = (void *)(f + h[3] + h[2]);
	TAP_OK(a0->type == 9 && (a0->config & (1 << 10)) &&
	       (a0->config & (1 << 11)) && a0->sample_id_all &&
	       (a0->sample_type & PERF_SAMPLE_TIME) &&
	       a1->type == PERF_TYPE_SOFTWARE &&
	       a1->config == PERF_COUNT_SW_DUMMY && a1->mmap2 && a1->comm,
	       "unit: intel_pt attr (tsc, noretcomp) and dummy tracking attr");
	off = h[5];
	end = h[5] + h[6];
	while (off + 8 <= end && f) {
		struct perf_event_header *e = (void *)(f + off);
		uint64_t *q = (uint64_t *)(e + 1);

		if (!e->size)
			break;
		if (e->type == 70 && q[0] == 1 && q[1] == 9 &&
		    q[1 + 5] == (1 << 10) && q[1 + 9] == 0)
			info_ok = 1;
		if (e->type == 71) {
			uint64_t size = q[0];

			if (size == ((res.streams[0].buf.len + 7) & ~7UL) &&
			    !memcmp(f + off + e->size, res.streams[0].buf.data,
				    res.streams[0].buf.len) &&
			    (uint32_t)(q[3] >> 32) == 100)
				aux_ok = 1;
			off += size;
		}
		off += e->size;
	}
	TAP_OK(info_ok, "unit: AUXTRACE_INFO is intel_pt with the attr's PMU type and TSC bit");
	TAP_OK(aux_ok, "unit: AUXTRACE record (per-thread) is followed by the exact trace bytes");
	exact = (unsigned __int128)tsc * tc.time_mult;
	TAP_OK(ps_perf_tsc_to_time(tsc, &tc) ==
	       tc.time_zero + (uint64_t)(exact >> tc.time_shift),
	       "unit: TSC to perf time: time_zero + (tsc * time_mult) >> time_shift");
	unlink(path);
	free(f);
	ps_synth_result_free(&res);
	gtb_free(&b);
	return tap_failed ? 1 : 0;
}
