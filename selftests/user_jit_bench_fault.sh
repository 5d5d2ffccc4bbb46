#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Only the fault part of user_jit_bench, for scripts/bench-userjit's boot
# on a CPU model without ERMS/FSRM; says which of the two the CPU has.
flags=$(grep -m1 -o -w -e erms -e fsrm /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "# cpu: erms/fsrm present: ${flags:-none}"
exec "$(dirname "$0")/user_jit_bench" fault 9 256
