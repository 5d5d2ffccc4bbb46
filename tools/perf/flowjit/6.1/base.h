/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tools/perf/flowjit uses of perf that the perf of Linux 6.1 spells
 * differently from 6.12's: 6.12's names, on 6.1. (tools/perf/flowjit/
 * 6.12/base.h is this file for 6.12.)
 */
#ifndef __PERF_FLOWJIT_BASE_H
#define __PERF_FLOWJIT_BASE_H

#include <linux/types.h>
#include "util/dso.h"
#include "util/map.h"
#include "util/symbol.h"

struct perf_tool;

/* the tool perf gives event callbacks is const from 6.10 on */
#define FLOWJIT_TOOL_CONST

/* struct map's and struct dso's fields, accessors from 6.4 and 6.9 on */
static inline u64 map__start(const struct map *map)
{
	return map->start;
}

static inline u64 map__end(const struct map *map)
{
	return map->end;
}

static inline struct dso *map__dso(const struct map *map)
{
	return map->dso;
}

static inline void map__set_end(struct map *map, u64 end)
{
	map->end = end;
}

static inline const char *dso__long_name(const struct dso *dso)
{
	return dso->long_name;
}

/* 6.1 takes no reference on a lookup's map and thread */
static inline void addr_location__init(struct addr_location *al __maybe_unused)
{
}

static inline void addr_location__exit(struct addr_location *al __maybe_unused)
{
}

#endif /* __PERF_FLOWJIT_BASE_H */
