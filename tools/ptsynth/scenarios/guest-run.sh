#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the flowjit guest (busybox sh, run by scripts/run-guest -r): every
# scenario of /extra/scen/list runs the sample JIT (or the command the
# line gives after its ptsynth trace options and " -- ") under "ptsynth
# trace" (ground truth) while "perf record --flowjit -e dummy" records
# the sideband of the same run (the traced child inherits perf's events).
# The ground truth, perf.data, the JIT's revision log and the outputs go
# to the host through ttyS2 (gzip + base64 between markers), as
# tools/perf/flowjit/guest/flowjit-e2e.sh does.
PATH=/extra:/extra/scen:/bin
export PATH HOME=/tmp PERF_PAGER=cat
cd /tmp || exit 1

export_file() {
	[ -c /dev/ttyS2 ] || return
	gzip -c "$2" > /tmp/export.gz || return
	{
		echo "=== begin $1.gz"
		base64 /tmp/export.gz
		echo "=== end $1.gz"
	} > /dev/ttyS2
}

now() {
	cut -d' ' -f1 /proc/uptime
}

grep -v '^#' /extra/scen/list | while read -r name args; do
	[ -n "$name" ] || continue
	case " $args " in
	*" -- "*) cmd=$args ;;
	*) cmd="-- /samples/ebpf-jit $args" ;;
	esac
	t0=$(now)
	# shellcheck disable=SC2086
	timeout -s KILL 1200 perf record -q --flowjit -e dummy -o "/tmp/$name.data" -- \
		ptsynth trace -g "/tmp/$name.gt" $cmd \
		> "/tmp/$name.out" 2> "/tmp/$name.err"
	rc=$?
	t1=$(now)
	echo "# scenario $name: rc $rc, $t0 .. $t1 s (uptime)"
	sed 's/^/#   /' "/tmp/$name.err" | tail -n 5
	echo "$rc $t0 $t1" > "/tmp/$name.time"
	for f in data gt out err time; do
		[ -f "/tmp/$name.$f" ] && export_file "$name.$f" "/tmp/$name.$f"
	done
	rm -f "/tmp/$name.data" "/tmp/$name.gt"
done
