// SPDX-License-Identifier: GPL-2.0-only
/*
 * flowjit_aux: a PMU without hardware that writes its AUX area the way
 * intel_bts does, so that AUX consumers (mmap, splice) can be tested and
 * measured on any machine. An hrtimer stands for the hardware: every
 * attr.config1 ns (default 1 ms, at least 10 us) it writes attr.config
 * bytes (whole 64 byte records, at least one, at most 64 KiB) of
 * sequence numbered records into the AUX area and commits them with
 * perf_aux_output_end(), which also posts PERF_RECORD_AUX. A late timer
 * writes for each period that passed, up to FJAX_LATE_MAX and at most
 * FJAX_TICK_MAX bytes, so the rate holds with coarse timers.
 *
 * The timer runs in hard interrupt context, so its work is bounded: at
 * most FJAX_TICK_MAX bytes a tick, and after a tick the CPU is left to
 * others for at least as long as the tick took. A rate the CPU cannot
 * sustain that way is not reached (periods are skipped, as a timer later
 * than FJAX_LATE_MAX periods skips them), rather than taking the CPU.
 * Only CAP_PERFMON (or CAP_SYS_ADMIN) may open it: it is for tests.
 *
 * Records that do not fit are lost: the tick writes what fits, counts the
 * rest in the event's count (read() of the event fd) and sets
 * PERF_AUX_FLAG_TRUNCATED, after which perf core disables the event, as
 * for BTS. A tick that leaves less than one record of space also sets
 * TRUNCATED, so every gap in the sequence numbers follows a TRUNCATED
 * record. The event count is the number of records lost.
 *
 * Record (little endian):
 *   u32 magic "FJAX", u32 cpu, u64 seq, u64 lost (before this record),
 *   u8 payload[40] with payload[i] = seq * 7 + i (mod 256)
 */

#include <linux/capability.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>

#define FJAX_MAGIC	0x58414a46	/* "FJAX" */
#define FJAX_REC	64
#define FJAX_PERIOD	NSEC_PER_MSEC
#define FJAX_PERIOD_MIN	(10 * NSEC_PER_USEC)
#define FJAX_PERIOD_BYTES_MAX	SZ_64K	/* attr.config */
#define FJAX_TICK_MAX	SZ_256K	/* bytes a timer callback writes */
#define FJAX_LATE_MAX	16	/* periods a late timer catches up */

struct fjax_rec {
	u32 magic;
	u32 cpu;
	u64 seq;
	u64 lost;
	u8 payload[FJAX_REC - 24];
};

struct fjax_buf {
	void **pages;
	unsigned long size;
};

static struct pmu fjax_pmu;

static void *fjax_setup_aux(struct perf_event *event, void **pages,
			    int nr_pages, bool overwrite)
{
	struct fjax_buf *buf;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	buf->pages = pages;
	buf->size = (unsigned long)nr_pages << PAGE_SHIFT;
	return buf;
}

static void fjax_free_aux(void *data)
{
	kfree(data);
}

static void fjax_write(struct fjax_buf *buf, unsigned long off,
		       struct perf_event *event)
{
	struct fjax_rec *r;
	u64 seq = local64_read(&event->hw.prev_count);
	int i;

	off &= buf->size - 1;
	r = buf->pages[off >> PAGE_SHIFT] + (off & ~PAGE_MASK);
	r->magic = FJAX_MAGIC;
	r->cpu = smp_processor_id();
	r->seq = seq;
	r->lost = local64_read(&event->count);
	for (i = 0; i < sizeof(r->payload); i++)
		r->payload[i] = seq * 7 + i;
	local64_set(&event->hw.prev_count, seq + 1);
}

/* @periods of the "hardware", in hard interrupt context */
static void fjax_tick(struct perf_event *event, u64 periods)
{
	u64 want = event->hw.last_period * periods, fit, i;
	struct perf_output_handle handle;
	struct fjax_buf *buf;

	buf = perf_aux_output_begin(&handle, event);
	if (!buf) {
		/* no AUX space at all: every record of this tick is lost */
		local64_add(want, &event->count);
		local64_add(want, &event->hw.prev_count);
		return;
	}
	if (!handle.size)
		fit = want;	/* overwrite mode: the buffer never fills */
	else
		fit = min_t(u64, want, handle.size / FJAX_REC);
	for (i = 0; i < fit; i++)
		fjax_write(buf, handle.head + i * FJAX_REC, event);
	if (fit < want) {
		local64_add(want - fit, &event->count);
		local64_add(want - fit, &event->hw.prev_count);
	}
	if (handle.size && (fit < want || handle.size - fit * FJAX_REC < FJAX_REC))
		perf_aux_output_flag(&handle, PERF_AUX_FLAG_TRUNCATED);
	/* records before aux_head: (B) of kernel/events/ring_buffer.c */
	smp_wmb();
	if (!handle.size)
		handle.head += fit * FJAX_REC;
	perf_aux_output_end(&handle, fit * FJAX_REC);
}

static enum hrtimer_restart fjax_timer(struct hrtimer *timer)
{
	struct perf_event *event = container_of(timer, struct perf_event,
						hw.hrtimer);
	ktime_t period = ns_to_ktime(event->hw.sample_period);
	ktime_t start = hrtimer_cb_get_time(timer), now;
	u64 periods, most;

	if (event->hw.state & PERF_HES_STOPPED)
		return HRTIMER_NORESTART;
	/* a late timer writes for every period that passed, as hardware */
	periods = hrtimer_forward_now(timer, period);
	most = FJAX_TICK_MAX / (event->hw.last_period * FJAX_REC);
	fjax_tick(event, clamp_t(u64, periods, 1, min_t(u64, most, FJAX_LATE_MAX)));
	/*
	 * Hardware does not take the CPU: leave it to others for at least
	 * as long as this tick took, whatever the rate asks for.
	 */
	now = hrtimer_cb_get_time(timer);
	hrtimer_forward(timer, ktime_add(now, ktime_sub(now, start)), period);
	return HRTIMER_RESTART;
}

static void fjax_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
	hrtimer_start(&event->hw.hrtimer, ns_to_ktime(event->hw.sample_period),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void fjax_stop(struct perf_event *event, int flags)
{
	event->hw.state |= PERF_HES_STOPPED;
	hrtimer_cancel(&event->hw.hrtimer);
}

static int fjax_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		fjax_start(event, flags);
	return 0;
}

static void fjax_del(struct perf_event *event, int flags)
{
	fjax_stop(event, flags);
}

static void fjax_read(struct perf_event *event)
{
	/* event->count is kept up to date by the ticks */
}

static int fjax_check_period(struct perf_event *event, u64 value)
{
	return -EINVAL;
}

static int fjax_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	u64 bytes = attr->config, period = attr->config1;

	if (attr->type != fjax_pmu.type)
		return -ENOENT;
	/* a test device: not for unprivileged users, whatever perf allows */
	if (!event->parent && !perfmon_capable())
		return -EACCES;
	/* it never samples; a period (perf record sets one) is ignored */
	if (attr->freq || attr->config2)
		return -EINVAL;
	if (!period)
		period = FJAX_PERIOD;
	if (period < FJAX_PERIOD_MIN || period > NSEC_PER_SEC ||
	    bytes > FJAX_PERIOD_BYTES_MAX)
		return -EINVAL;
	event->hw.last_period = max_t(u64, bytes / FJAX_REC, 1);
	/* no sampling: these two fields are free (see fjax_check_period) */
	event->hw.sample_period = period;
	local64_set(&event->hw.prev_count, 0);
	hrtimer_init(&event->hw.hrtimer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_HARD);
	event->hw.hrtimer.function = fjax_timer;
	return 0;
}

static struct pmu fjax_pmu = {
	.task_ctx_nr	= perf_sw_context,
	.capabilities	= PERF_PMU_CAP_NO_EXCLUDE,
	.event_init	= fjax_event_init,
	.add		= fjax_add,
	.del		= fjax_del,
	.start		= fjax_start,
	.stop		= fjax_stop,
	.read		= fjax_read,
	.check_period	= fjax_check_period,
	.setup_aux	= fjax_setup_aux,
	.free_aux	= fjax_free_aux,
	.module		= THIS_MODULE,
};

static int __init fjax_init(void)
{
	return perf_pmu_register(&fjax_pmu, "flowjit_aux", -1);
}
module_init(fjax_init);

static void __exit fjax_exit(void)
{
	perf_pmu_unregister(&fjax_pmu);
}
module_exit(fjax_exit);

MODULE_DESCRIPTION("flowjit: AUX test PMU without hardware");
MODULE_LICENSE("GPL");
