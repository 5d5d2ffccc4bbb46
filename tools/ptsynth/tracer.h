/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracer.h - single-step a program with ptrace, log its ground truth
 * (tracer.c)
 *
 * ps_trace_program() returns 0 with the program's exit code in *exit_status
 * (128 + the signal if one killed it), or -1 after printing why on stderr
 * (the program is killed).  ps_trace_parse_signal() returns a signal number,
 * or -1 for a name or number it refuses.
 */
#ifndef PTSYNTH_TRACER_H
#define PTSYNTH_TRACER_H

#include <stdint.h>

struct ps_trace_opts {
	uint64_t max_insns;	/* kill the program after this many, 0: no */
	int start_sig;		/* start-at mode: step from this signal on */
	int stop_sig;		/* ... up to this one (0: up to the exit) */
};

int ps_trace_parse_signal(const char *s);
int ps_trace_program(const char *gt_path, char **argv,
		     const struct ps_trace_opts *o, int *exit_status);

#endif
