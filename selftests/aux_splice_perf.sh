#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perf record --aux-splice end to end with the flowjit_aux test PMU: the
# AUX data of a splice() run, to a file and through a pipe, is the PMU's
# byte stream, complete and in order, in the same perf.data format as a
# write() run (checked by aux_perfdata). Needs perf in /extra.
PATH=/extra:/bin:$PATH
dir=$(cd "$(dirname "$0")" && pwd)
ev=flowjit_aux/config=2048/
n=0
fail=0

echo "1..4"
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		fail=1
		echo "not ok $n $2"
	fi
}

if ! command -v perf > /dev/null ||
   [ ! -e /sys/bus/event_source/devices/flowjit_aux ]; then
	for t in write_file splice_file splice_pipe splice_message; do
		n=$((n + 1))
		echo "ok $n $t # SKIP no perf or no flowjit_aux PMU"
	done
	exit 4
fi

check() {
	"$dir/aux_perfdata" "$1" 2>&1 | sed 's/^/# /'
	"$dir/aux_perfdata" "$1" > /dev/null 2>&1
}

cd /tmp || exit 1
perf record -q -e "$ev" -C 0 -o w.data -- sleep 1 > w.log 2>&1
check w.data
result $? "write_file: perf record (write) of flowjit_aux gives the PMU's stream"

perf record -q --aux-splice -e "$ev" -C 0 -o s.data -- sleep 1 > s.log 2>&1
check s.data
result $? "splice_file: perf record --aux-splice to a file gives the PMU's stream"

perf record -q --aux-splice -e "$ev" -C 0 -o - -- sleep 1 2> p.log > p.data
check p.data
result $? "splice_pipe: perf record --aux-splice -o - (into the pipe) gives the PMU's stream"

# a kernel with AUX splice must not print the fallback message
! grep -q "cannot splice" s.log p.log
result $? "splice_message: no fallback to write() on this kernel"
cat s.log p.log | sed 's/^/# /'
exit $fail
