/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tools/perf/flowjit uses of perf that the perf of Linux 6.12 spells
 * differently from 6.1's. (tools/perf/flowjit/6.1/base.h is this file
 * for 6.1.)
 */
#ifndef __PERF_FLOWJIT_BASE_H
#define __PERF_FLOWJIT_BASE_H

#include "util/addr_location.h"
#include "util/sample.h"

struct perf_tool;

/* the tool perf gives event callbacks is const */
#define FLOWJIT_TOOL_CONST	const

#endif /* __PERF_FLOWJIT_BASE_H */
