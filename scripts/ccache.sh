# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that compile with ccache (kernel-build,
# kernel-sparse, perf-build, series-build, text-module): one cache for
# every kernel and perf of both bases, $FLOWJIT_CACHE/ccache (default
# ~/.cache/flowjit/ccache), with one size limit. ccache trims the cache to
# the limit of the command that stores into it, so one script with a
# smaller limit than the others (perf-build's was 2 GiB, kernel-build's
# 8 GiB) could evict what the kernel builds had stored before it, and a
# "warm" machine would build its sanitizer kernels cold. The caller sets
# CCACHE_BASEDIR (the tree it builds in) after sourcing this.
#
# shellcheck shell=bash
cache=${FLOWJIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flowjit}
export CCACHE_DIR=$cache/ccache CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-16G} CCACHE_SLOPPINESS=time_macros
mkdir -p "$CCACHE_DIR"
