#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perf record --flowjit end to end, in the flowjit guest (busybox sh).
# Run by the guest's /init after the selftests as /extra/run; prints TAP
# framed as one selftest ("perf:flowjit") for scripts/run-guest. perf.data
# files the host checks with an unpatched perf are written to /dev/ttyS2
# (see export_file; scripts/run-guest unpacks them).
#
# The expected images come from flowjit-bpf-load, which prints what
# bpf_prog_info says about the program it loads: address, length,
# CRC-32C and bytes of every JIT'd function.
PATH=/extra:/bin
export PATH HOME=/tmp PERF_PAGER=cat
cd /tmp || exit 1
n=0
fail=0
tests="record_cpu_wide record_cpu_wide_retire record_per_task record_cpu_clock \
	record_pid record_existing report_dump inject_keeps inject_strip no_flowjit_sysctl user_jit"

echo "# selftest: perf:flowjit"
echo "1..$(echo $tests | wc -w)"

ok() {
	n=$((n + 1))
	echo "ok $n $*"
}

not_ok() {
	n=$((n + 1))
	fail=1
	echo "not ok $n $*"
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

# show a file's head as TAP diagnostics
show() {
	sed -n "1,${2:-20}p" "$1" | sed 's/^/#   /'
}

# the image lines and bytes perf script shows for prog @2 in file @1,
# in the form flowjit-bpf-load prints them; @3: "existing" to keep only
# synthesized ones
perf_images() {
	perf script -i "$1" --show-flowjit-bytes 2> /tmp/script.err |
	awk -v id="$2" -v want="$3" '
	/PERF_RECORD_FLOWJIT / {
		keep = 0
		for (i = 1; i <= NF; i++)
			if ($i == "IMAGE") break
		if (i > NF) next
		if ($(i + 3) != id) next
		ex = ($0 ~ / existing /)
		if ((want == "existing") != ex) next
		if ($NF != "ok") { print "csum not ok: " $0; next }
		for (j = i; j <= NF; j++) {
			if ($j == "addr") addr = $(j + 1)
			if ($j == "len") len = $(j + 1)
			if ($j == "csum") csum = $(j + 1)
		}
		printf "IMAGE %s id %s sub %s addr %s len %s csum %s\n",
		       $(i + 1), $(i + 3), $(i + 5), addr, len, csum
		keep = 1
		next
	}
	keep && /^    [0-9a-f][0-9a-f]( |$)/ { print; next }
	{ keep = 0 }'
}

# compare the images of @1 with what flowjit-bpf-load printed in @2
check_images() {
	local data=$1 exp=$2 name=$3 want=$4 id
	id=$(sed -n 's/^IMAGE [a-z_]* id \([0-9]*\) .*/\1/p' "$exp" | head -n 1)
	if [ -z "$id" ]; then
		show "$exp"
		echo "# $name: flowjit-bpf-load loaded no program"
		not_ok "$name: images of the loaded program equal bpf_prog_info"
		return 1
	fi
	perf_images "$data" "$id" "$want" > /tmp/got.txt
	if [ -s /tmp/got.txt ] && cmp -s "$exp" /tmp/got.txt; then
		local funcs lines
		funcs=$(grep -c ^IMAGE "$exp")
		lines=$(grep -c '^    ' "$exp")
		# what varies (the id, the JIT's output) stays out of the name
		echo "# $name: prog $id: $funcs functions, $lines lines of bytes"
		ok "$name: images of the loaded program equal bpf_prog_info"
	else
		diff "$exp" /tmp/got.txt | head -n 20 | sed 's/^/#   /'
		show /tmp/script.err 5
		echo "# $name: prog $id"
		not_ok "$name: images of the loaded program equal bpf_prog_info"
	fi
}

# perf.data files for the host: base64 on ttyS2, between markers
export_file() {
	[ -c /dev/ttyS2 ] || return
	{
		echo "=== begin $1"
		base64 "$2"
		echo "=== end $1"
	} > /dev/ttyS2
}

# perf record -o @1 @2...; a run that hangs is killed after a minute
record() {
	local out=$1
	shift
	timeout -s KILL 60 perf record -o "$out" "$@" > /tmp/record.out 2> /tmp/record.err
	local rc=$?
	if [ $rc != 0 ]; then
		if [ $rc = 137 ]; then
			echo "#   perf record $*: killed after 60 s"
		else
			echo "#   perf record $*: exit status $rc"
		fi
		show /tmp/record.err
		show /tmp/record.out 5
		return $rc
	fi
}

# 1. CPU-wide: a program loaded and closed while recording
if record /tmp/a.data --flowjit -e dummy -a -- flowjit-bpf-load; then
	cp /tmp/record.out /tmp/a.exp
	check_images /tmp/a.data /tmp/a.exp record_cpu_wide ""
	export_file a.data /tmp/a.data
else
	echo "# record_cpu_wide: perf record --flowjit -e dummy -a failed"
	not_ok "record_cpu_wide: images of the loaded program equal bpf_prog_info"
fi

# 2. ... and its retire records, one per function
id=$(sed -n 's/^IMAGE [a-z_]* id \([0-9]*\) .*/\1/p' /tmp/a.exp 2> /dev/null | head -n 1)
funcs=$(grep -c '^IMAGE' /tmp/a.exp 2> /dev/null)
retired=$(perf script -i /tmp/a.data --show-flowjit-events 2> /dev/null |
	  grep -c " RETIRE bpf_[a-z]* id $id sub ")
echo "# record_cpu_wide_retire: prog $id: $retired retire records, $funcs functions"
if [ -n "$id" ] && [ "$retired" = "$funcs" ]; then
	ok "record_cpu_wide_retire: a retire record for each function of the program"
else
	not_ok "record_cpu_wide_retire: a retire record for each function of the program"
fi

# 3. per task: the images of the programs the task loads
if record /tmp/b.data --flowjit -e dummy -- flowjit-bpf-load; then
	cp /tmp/record.out /tmp/b.exp
	check_images /tmp/b.data /tmp/b.exp record_per_task ""
else
	echo "# record_per_task: perf record --flowjit -e dummy -- cmd failed"
	not_ok "record_per_task: images of the loaded program equal bpf_prog_info"
fi

# 4. a sampling event as the tracking event, per task
if record /tmp/c.data --flowjit -e cpu-clock -c 100000 -- flowjit-bpf-load; then
	cp /tmp/record.out /tmp/c.exp
	check_images /tmp/c.data /tmp/c.exp record_cpu_clock ""
else
	echo "# record_cpu_clock: perf record --flowjit -e cpu-clock -- cmd failed"
	not_ok "record_cpu_clock: images of the loaded program equal bpf_prog_info"
fi

# 4b. attached to a running process (-p): perf record starts with its
# events disabled (-D -1) and the program is loaded only after perf has
# acknowledged "enable" on its control fifo, so neither a slow start of
# perf nor a slow guest can make the load come first
rm -f /tmp/p.ctl /tmp/p.ack /tmp/p.go
mkfifo /tmp/p.ctl /tmp/p.ack /tmp/p.go
flowjit-bpf-load -w /tmp/p.go > /tmp/p.exp &
loader=$!
record /tmp/p.data --flowjit -e dummy -D -1 --control fifo:/tmp/p.ctl,/tmp/p.ack \
	-p $loader &
recorder=$!
# read-write opens of a fifo do not wait for the other end
exec 5<> /tmp/p.ctl 6<> /tmp/p.ack
echo enable >&5
ack=
read -t 60 ack <&6
exec 5>&- 6>&-
# the loader loads after a line on its fifo, with or without the ack
echo go > /tmp/p.go
wait $loader
if wait $recorder && [ "$ack" = ack ]; then
	check_images /tmp/p.data /tmp/p.exp record_pid ""
else
	echo "# record_pid: perf record --flowjit -e dummy -D -1 --control -p PID failed" \
	     "(ack: '$ack')"
	not_ok "record_pid: images of the loaded program equal bpf_prog_info"
fi

# 5. a program loaded before perf record started: synthesized image; the
# loader holds it until it is told to go (SIGTERM), however slowly perf
# record starts
flowjit-bpf-load 600 > /tmp/d.exp &
holder=$!
i=0
while [ ! -s /tmp/d.exp ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
if record /tmp/d.data --flowjit -e dummy -a -- sleep 0.1; then
	check_images /tmp/d.data /tmp/d.exp record_existing existing
else
	echo "# record_existing: perf record --flowjit -e dummy -a -- sleep failed"
	not_ok "record_existing: images of the loaded program equal bpf_prog_info"
fi
kill $holder 2> /dev/null
wait $holder 2> /dev/null

# 6. perf report -D prints the records
perf report -D -i /tmp/a.data > /tmp/dump.txt 2> /dev/null
if grep -q "PERF_RECORD_FLOWJIT.* IMAGE bpf_prog id $id .* ok$" /tmp/dump.txt; then
	ok "report_dump: perf report -D shows the program's images"
else
	grep FLOWJIT /tmp/dump.txt | head -n 5 | sed 's/^/#   /'
	echo "# report_dump: prog $id"
	not_ok "report_dump: perf report -D shows the program's images"
fi

# 7. perf inject keeps every flowjit record
perf inject -i /tmp/a.data -o /tmp/ai.data 2> /tmp/inject.err
perf script -i /tmp/a.data --show-flowjit-events 2> /dev/null | grep FLOWJIT > /tmp/a.fj
perf script -i /tmp/ai.data --show-flowjit-events 2> /dev/null | grep FLOWJIT > /tmp/ai.fj
if [ -s /tmp/a.fj ] && cmp -s /tmp/a.fj /tmp/ai.fj; then
	echo "# inject_keeps: $(wc -l < /tmp/a.fj) flowjit records"
	ok "inject_keeps: perf inject keeps the flowjit records"
else
	show /tmp/inject.err 5
	not_ok "inject_keeps: perf inject keeps the flowjit records"
fi

# 8. perf inject --strip-flowjit drops them and the attr bit
perf inject --strip-flowjit -i /tmp/a.data -o /tmp/as.data 2> /tmp/inject.err
if [ -s /tmp/as.data ] &&
   ! perf script -i /tmp/as.data --show-flowjit-events 2> /dev/null | grep -q FLOWJIT &&
   ! perf evlist -v -i /tmp/as.data 2> /dev/null | grep -qE 'flowjit(_delta)?: 1' &&
   perf evlist -v -i /tmp/a.data 2> /dev/null | grep -q 'flowjit: 1' &&
   perf evlist -v -i /tmp/a.data 2> /dev/null | grep -q 'flowjit_delta: 1'; then
	ok "inject_strip: perf inject --strip-flowjit drops the records" \
	   "and attr.flowjit, attr.flowjit_delta"
	export_file as.data /tmp/as.data
else
	show /tmp/inject.err 5
	not_ok "inject_strip: perf inject --strip-flowjit drops the records" \
	       "and attr.flowjit, attr.flowjit_delta"
fi

# 9. kernel.flowjit=0: a clear error, never a file without records
echo 0 > /proc/sys/kernel/flowjit
perf record --flowjit -e dummy -a -o /tmp/e.data -- true > /dev/null 2> /tmp/e.err
rc=$?
echo 1 > /proc/sys/kernel/flowjit
if [ $rc != 0 ] && grep -q 'kernel.flowjit is 0' /tmp/e.err; then
	ok "no_flowjit_sysctl: with kernel.flowjit=0 perf record --flowjit fails and says why"
else
	show /tmp/e.err 5
	echo "# no_flowjit_sysctl: perf record exit status $rc"
	not_ok "no_flowjit_sysctl: with kernel.flowjit=0 perf record --flowjit fails and says why"
fi

# 10. user JIT pages (FLOWJIT_KIND_USER_JIT) of samples/ebpf-jit, a user
# space JIT that logs every revision of its code that ran, with its bytes:
# each must be inside a user_jit image perf shows, with the same bytes
if [ -x /samples/ebpf-jit ]; then
	if record /tmp/u.data --flowjit -e dummy -- /samples/ebpf-jit --log /tmp/u.log rewrite; then
		perf script -i /tmp/u.data --show-flowjit-bytes 2> /dev/null > /tmp/u.txt
		awk '
		function num(h,   i, n) {
			h = tolower(h); sub(/^0x/, "", h); n = 0
			for (i = 1; i <= length(h); i++)
				n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return n
		}
		FNR == NR {
			if (/PERF_RECORD_FLOWJIT (IMAGE|DELTA) user_jit / && $NF == "ok") {
				for (j = 1; j <= NF; j++) {
					if ($j == "addr") a = num($(j + 1))
					if ($j == "len") l = $(j + 1) + 0
				}
				cur = ++nimg; ia[cur] = a; il[cur] = l; ib[cur] = ""
				if (/PERF_RECORD_FLOWJIT DELTA/)
					ndelta++
				next
			}
			if (cur && /^    [0-9a-f][0-9a-f]( |$)/) {
				line = $0; gsub(/ /, "", line); ib[cur] = ib[cur] line
				next
			}
			cur = 0
			next
		}
		/^#/ { next }
		{
			revs++; a = num($2); l = $3 + 0; found = 0
			for (k = 1; k <= nimg && !found; k++)
				if (ia[k] <= a && a + l <= ia[k] + il[k] &&
				    substr(ib[k], (a - ia[k]) * 2 + 1, l * 2) == $6)
					found = 1
			if (found) good++
			else
				print "#   revision " $1 " at " $2 " len " l \
				      ": no user_jit image with its bytes"
		}
		END {
			printf "%d %d %d %d\n", nimg, revs, good, ndelta
		}' /tmp/u.txt /tmp/u.log > /tmp/u.res
		set -- $(tail -n 1 /tmp/u.res)
		sed '$d' /tmp/u.res | head -n 10
		# perf record sets attr.flowjit_delta: rewrites come as deltas,
		# which perf script puts together with their bases
		echo "# user_jit: ${3:-0} of ${2:-0} revisions ebpf-jit ran found;" \
		     "${1:-0} images, ${4:-0} of them delta records"
		if [ "${2:-0}" -gt 0 ] && [ "$2" = "$3" ] && [ "${4:-0}" -gt 0 ]; then
			ok "user_jit: every revision ebpf-jit ran is in the user_jit" \
			   "images with its bytes, rewrites as delta records"
		else
			not_ok "user_jit: every revision ebpf-jit ran is in the user_jit" \
			       "images with its bytes, rewrites as delta records"
		fi
	else
		echo "# user_jit: perf record --flowjit -e dummy -- ebpf-jit rewrite failed"
		not_ok "user_jit: every revision ebpf-jit ran is in the user_jit" \
		       "images with its bytes, rewrites as delta records"
	fi
else
	skip user_jit "no user JIT sample program (/samples/ebpf-jit) in the guest"
fi

echo "# exit: 0 perf:flowjit"
