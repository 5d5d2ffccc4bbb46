/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the user JIT selftests share: write a tiny function into a page,
 * call it, and find the snapshot flowjit took of a page.
 */
#ifndef FLOWJIT_USER_JIT_H
#define FLOWJIT_USER_JIT_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "flowjit_records.h"

#define PAGE	4096UL

static sigjmp_buf segv_jmp;

static inline void on_segv(int sig)
{
	siglongjmp(segv_jmp, sig);
}

/* run @fn(@arg); returns the signal it died of, or 0 */
static inline int faults(void (*fn)(void *), void *arg)
{
	struct sigaction sa = { .sa_handler = on_segv }, old_segv, old_bus;
	int sig;

	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(segv_jmp, 1);
	if (!sig)
		fn(arg);
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

/* the attr of an event that tracks user JIT code (and no kernel code) */
static inline void user_attr(struct perf_event_attr *attr)
{
	sb_attr_init(attr);
	attr->flowjit = 1;
	attr->exclude_kernel = 1;
}

/* such an event on this task */
static inline int open_self(struct sb *sb)
{
	struct perf_event_attr attr;

	user_attr(&attr);
	return sb_open_task(sb, &attr, 0);
}

/* such an event on every CPU: it tracks every process */
static inline int open_cpu_wide(struct sb *sb)
{
	struct perf_event_attr attr;

	user_attr(&attr);
	return sb_open(sb, &attr);
}

/* write "mov eax, @val; ret" at @p */
static inline void emit_ret_imm(uint8_t *p, uint32_t val)
{
	p[0] = 0xb8;
	memcpy(p + 1, &val, 4);
	p[5] = 0xc3;
}

static inline int call(const void *p)
{
	return ((int (*)(void))p)();
}

/* the user JIT snapshot of the page at @addr with revision > @after */
static inline struct fj_obj *find_page(struct fj_set *set, uint64_t addr,
				       uint32_t after)
{
	int i;

	for (i = 0; i < set->nr; i++) {
		struct fj_obj *o = &set->obj[i];

		if (fj_user_image(o, 0) && o->rec.addr == addr &&
		    o->rec.revision > after)
			return o;
	}
	return NULL;
}

/* how many user JIT snapshots @set holds */
static inline int count_images(struct fj_set *set)
{
	int i, n = 0;

	for (i = 0; i < set->nr; i++)
		n += fj_user_image(&set->obj[i], 0);
	return n;
}

#endif /* FLOWJIT_USER_JIT_H */
