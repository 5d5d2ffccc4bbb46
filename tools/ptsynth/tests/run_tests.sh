#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run all ptsynth tests, kselftest-style TAP on stdout.
# usage: tests/run_tests.sh BUILD_DIR   (from tools/ptsynth, via make check)
#
# Every flow test compares a decoded instruction flow with the single-
# stepped ground truth, instruction for instruction; nothing is compared
# with a stored expected output.

B=${1:-build}
P=./ptsynth
W=$(mktemp -d /tmp/ptsynth-check.XXXXXX)
# Intel's conformance streams sit in ../shared beside the repository
top=$(cd "$(dirname "$0")/../../.." && pwd)
PTT=${PTT_CASES:-$top/../shared/peer/libipt-ptt/cases}
n=0
failed=0
# Time as a real core would take and send it (README.rst "Timing"): the
# ground truth's time remapped by the hardware-timing model, TSC, TMA and
# CBR in PSB+, MTC at perf's default period 3, no TSC at exec faults.
# PTSYNTH_TIMING="--timing=tsc --mtc=9" runs the suite on the tracer's
# stretched time as before (period 9: single-stepping makes an instruction
# last tens of microseconds).
TIMING=${PTSYNTH_TIMING---timing=hw}

trap 'rm -rf "$W"' EXIT

tap() {		# tap STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

skip() {	# skip DESCRIPTION REASON
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

diag() {	# diag FILE: show a file as TAP diagnostics
	[ -f "$1" ] && sed 's/^/# /' "$1"
}

find_perf() {
	local p

	for p in "${PERF:-}" perf /usr/bin/perf_6.1 /usr/bin/perf; do
		[ -n "$p" ] || continue
		if "$p" --version >/dev/null 2>&1; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# unit tests: their "ok"/"not ok" lines get numbered here
run_unit() {
	local out line status

	out=$("$@" 2>"$W/unit.err")
	status=$?
	while IFS= read -r line; do
		case "$line" in
		"ok "*)		n=$((n + 1)); echo "ok $n ${line#ok }" ;;
		"not ok "*)	n=$((n + 1)); failed=$((failed + 1))
				echo "not ok $n ${line#not ok }" ;;
		*)		echo "$line" ;;
		esac
	done <<< "$out"
	if [ $status -ne 0 ] && ! grep -q "^not ok" <<< "$out"; then
		tap 1 "unit: $1 exited with status $status"
	fi
}

libipt_check() {	# libipt_check NAME DESC [SYNTH OPTS]
	local name=$1 desc=$2
	shift 2
	$P check -g "$W/$name.data.gt" $TIMING "$@" >"$W/check.out" 2>"$W/check.err"
	local st=$?
	diag "$W/check.out"
	tap $st "$desc"
}

perf_check() {		# perf_check NAME PERFDATA DESC
	local name=$1 data=$2 desc=$3

	if [ -z "$PERFBIN" ]; then
		skip "$desc" "no working perf binary"
		return
	fi
	"$PERFBIN" script -i "$data" --itrace=i0nse -F tid,ip \
		>"$W/perf.flow" 2>"$W/perf.err"
	if [ $? -ne 0 ]; then
		diag "$W/perf.err"
		tap 1 "$desc"
		return
	fi
	$P cmpflow -g "$W/$name.data.gt" "$W/perf.flow" >"$W/cmp.out" 2>&1
	local st=$?
	diag "$W/cmp.out"
	tap $st "$desc"
}

synth() {		# synth NAME OUT [OPTS]
	local name=$1 out=$2
	shift 2
	$P synth -g "$W/$name.data.gt" -o "$out" $TIMING "$@" >/dev/null 2>"$W/synth.err"
}

echo "TAP version 13"
PERFBIN=$(find_perf)
echo "# perf: ${PERFBIN:-none} ($($PERFBIN --version 2>/dev/null))"

for u in tnt ipc psb mtc cyc perfdata startat sideband hwtime events percpu fault; do
	run_unit "$B/tests/unit_$u"
done
run_unit "$B/tests/unit_pttroundtrip" "$PTT"

declare -A what=(
	[loop]="loop with conditional branches"
	[indirect]="indirect-call/indirect-jump program"
	[recursion]="recursion/return program"
	[syscalls]="syscall program"
	[signal]="signal-handler program"
	[plt]="libc-through-PLT program"
	[threads]="multi-threaded program"
)

for p in loop indirect recursion syscalls signal plt threads; do
	start=$(date +%s)
	if ! $P record $TIMING -o "$W/$p.data" -- "$B/tests/$p" >/dev/null 2>"$W/$p.rec"; then
		diag "$W/$p.rec"
		tap 1 "ptsynth: ${what[$p]} is single-stepped and synthesised"
		continue
	fi
	echo "# $p: $(grep -h 'instructions in' "$W/$p.rec") ($(( $(date +%s) - start ))s)"
	libipt_check $p "ptsynth: ${what[$p]} decodes identically in libipt and ground truth"
	perf_check $p "$W/$p.data" "ptsynth: ${what[$p]} decodes identically in perf 6.1 and ground truth"
done

# the programs exercise what they claim
$P dump -g "$W/signal.data.gt" >"$W/signal.dump" 2>/dev/null
nsync=$(grep -c '^signal .* sig 10 ' "$W/signal.dump")
nasync=$(grep -c '^signal .* sig 14 ' "$W/signal.dump")
echo "# signal program: $nsync SIGUSR1 (after kill syscall), $nasync SIGALRM (asynchronous)"
[ "$nsync" -ge 2 ] && [ "$nasync" -ge 1 ]
tap $? "ptsynth: ground truth records synchronous and asynchronous signal deliveries"
ntid=$($P dump -g "$W/threads.data.gt" --insns 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
[ "$ntid" -eq 3 ]
tap $? "ptsynth: ground truth of the threaded program has 3 threads (got $ntid)"

# packet generation variants on recorded ground truth
synth loop "$W/loop.cpu.data" --per-cpu
perf_check loop "$W/loop.cpu.data" "ptsynth: per-CPU AUX layout with switch sideband decodes identically in perf"
synth signal "$W/signal.cpu.data" --per-cpu
perf_check signal "$W/signal.cpu.data" "ptsynth: per-CPU layout of the signal program decodes identically in perf"
libipt_check recursion "ptsynth: return compression (retcomp) decodes identically in libipt" --retcomp
synth recursion "$W/rec.retcomp.data" --retcomp
perf_check recursion "$W/rec.retcomp.data" "ptsynth: return compression with noretcomp=0 in the attr decodes identically in perf"

# The environment decides how many instructions ld.so runs between its
# mmap of libc and libc's first instruction, hence whether a PSB+ falls in
# between: with time only in PSB+ (no MTC), perf 6.1 applied libc's MMAP2
# at the next PSB+ and failed ("Failed to get instruction") in an empty
# environment, as on a fresh machine.  With MTC every environment decodes.
for pad in 0 1000 5000; do
	if [ "$pad" = 0 ]; then
		envdesc="an empty environment (env -i)"
		envset=
	else
		envdesc="an environment of $pad bytes"
		envset="PAD=$(head -c "$pad" /dev/zero | tr '\0' x)"
	fi
	if ! env -i $envset $P record $TIMING --retcomp -o "$W/env$pad.data" -- \
		"$B/tests/recursion" >/dev/null 2>"$W/env.rec"; then
		diag "$W/env.rec"
		tap 1 "ptsynth: recursion program records in $envdesc"
		continue
	fi
	perf_check "env$pad" "$W/env$pad.data" \
		"ptsynth: return compression decodes identically in perf in $envdesc"
	if [ -n "$PERFBIN" ]; then
		# the old timing model, for comparison: not a test
		$P synth -g "$W/env$pad.data.gt" --retcomp --timing=tsc-fault \
			-o "$W/env.notiming.data" >/dev/null 2>&1
		"$PERFBIN" script -i "$W/env.notiming.data" --itrace=i0nse -F tid,ip \
			>"$W/perf.flow" 2>/dev/null
		echo "# without MTC: $($P cmpflow -g "$W/env$pad.data.gt" "$W/perf.flow" 2>&1 | tail -n 1)"
	fi
done
libipt_check loop "ptsynth: TNT-64 packets decode identically in libipt" --long-tnt
synth loop "$W/loop.tnt64.data" --long-tnt
perf_check loop "$W/loop.tnt64.data" "ptsynth: TNT-64 packets decode identically in perf"
libipt_check plt "ptsynth: PSB+ every 256 bytes decodes identically in libipt" --psb-period 256
synth plt "$W/plt.psb.data" --psb-period 256
perf_check plt "$W/plt.psb.data" "ptsynth: PSB+ every 256 bytes decodes identically in perf"

# Per-CPU layout with the three threads sharing CPUs: switches are FUP +
# TIP.PGD, SWITCH_CPU_WIDE out/in, TSC + TMA + CBR, TIP.PGE; perf must
# give each instruction to the right thread (README.rst "Known problems":
# with the tracer's time it did not).
for cpus in 1 2; do
	synth threads "$W/threads.cpu$cpus.data" --per-cpu --cpus $cpus
	perf_check threads "$W/threads.cpu$cpus.data" \
		"ptsynth: per-CPU layout, 3 threads on $cpus CPU(s), decodes per thread in perf"
done

# Time: libipt and perf must turn the timing packets of a JIT-free program
# into each instruction's hardware time, at most one MTC period (+200 ns)
# early, 200 ns late (README.rst "Tests").
timecheck() {	# timecheck NAME WHAT [SYNTH OPTS]
	local name=$1 what=$2
	shift 2
	libipt_check $name "ptsynth: libipt decodes $what with the right times" \
		--time "$@"
	if [ -z "$PERFBIN" ]; then
		skip "ptsynth: an unpatched perf decodes $what with the right times" \
			"no working perf binary"
		return
	fi
	synth $name "$W/$name.time.data" "$@"
	"$PERFBIN" script -i "$W/$name.time.data" --itrace=i0nse -F tid,ip,time --ns \
		>"$W/perf.flow" 2>"$W/perf.err"
	$P cmpflow -g "$W/$name.data.gt" $TIMING --time "$@" "$W/perf.flow" >"$W/cmp.out" 2>&1
	local st=$?
	diag "$W/cmp.out"
	tap $st "ptsynth: an unpatched perf decodes $what with the right times"
}
timecheck recursion "the timing packets (MTC) of a JIT-free program"
timecheck recursion "the timing packets (MTC, CYC) of a JIT-free program" --cyc

# Asynchronous interrupts at seeded pseudo-random boundaries: FUP +
# TIP.PGD ... TIP.PGE at the next IP, time passing in MTCs.
synth plt "$W/plt.irq.data" --irq-every 300 --irq-seed 7
nirq=$(sed -n 's/^ptsynth: \([0-9]*\) interrupts modelled.*/\1/p' "$W/synth.err")
echo "# plt: ${nirq:-no} interrupts modelled"
[ "${nirq:-0}" -gt 100 ]
tap $? "ptsynth: --irq-every 300 models interrupts (${nirq:-0})"
libipt_check plt "ptsynth: interrupts every 300 insns decode identically in libipt" \
	--irq-every 300 --irq-seed 7
perf_check plt "$W/plt.irq.data" "ptsynth: interrupts every 300 insns decode identically in perf"

# A JIT page rewritten in place between two runs (tests/progs/jit.c): with
# --irq-jit an interrupt at the old revision's last instruction, one in
# the other JIT page in between, one at the new revision's first.  perf
# cannot read anonymous memory: libipt only.
if $P record -o "$W/jit.data" --irq-jit -- "$B/tests/jit" >/dev/null 2>"$W/jit.rec"; then
	grep 'interrupts modelled' "$W/jit.rec" | sed 's/^/# jit: /'
	grep -q '^ptsynth: 3 interrupts modelled (0 random, 3 around 1 JIT rewrites)' "$W/jit.rec"
	tap $? "ptsynth: --irq-jit finds the JIT rewrite and models 3 interrupts around it"
	libipt_check jit "ptsynth: interrupts around a JIT rewrite decode identically in libipt" --irq-jit
else
	diag "$W/jit.rec"
	tap 1 "ptsynth: the JIT program is single-stepped and synthesised"
fi

# The old model stays for comparison: the tracer's time, a TSC at faults
libipt_check loop "ptsynth: the old timing model (--timing=tsc-fault) decodes identically in libipt" \
	--timing=tsc-fault

# --sideband: the sideband of a real perf record of the traced run
# replaces the synthesised one (part 2; no flowjit records on this host)
if [ -n "$PERFBIN" ] && "$PERFBIN" record -q -e dummy -o "$W/sb.perf" -- \
	$P trace -g "$W/sb.data.gt" -- "$B/tests/loop" >/dev/null 2>"$W/sb.err"; then
	$P synth $TIMING -g "$W/sb.data.gt" --sideband "$W/sb.perf" --root / \
		-o "$W/sb.data" >/dev/null 2>"$W/synth.err"
	st=$?
	diag "$W/synth.err"
	grep -q "sideband: [1-9][0-9]* records kept .* 0 malformed" "$W/synth.err" && [ $st = 0 ]
	tap $? "ptsynth: synth --sideband merges the sideband of a real perf record of the run"
	perf_check sb "$W/sb.data" "ptsynth: a trace with a real perf record sideband decodes in perf as ground truth"
else
	diag "$W/sb.err"
	skip "ptsynth: synth --sideband with a real perf record" "perf record -e dummy does not work here"
fi

# start-at mode (--start-on-signal/--stop-on-signal): the ground truth of
# the window between the two signals is exactly the part of a full
# single-stepped run of the same program (no ASLR: setarch -R) after the
# first signal's tgkill up to the second one's, and it decodes in both
# decoders as executed.
SS="setarch $(uname -m) -R"
if $SS $P trace -g "$W/ssfull.gt" -- "$B/tests/startstop" >/dev/null 2>"$W/ssfull.err" &&
   $SS $P record $TIMING --start-on-signal USR1 --stop-on-signal USR2 -o "$W/ss.data" -- \
	"$B/tests/startstop" >/dev/null 2>"$W/ss.err"; then
	$P dump -g "$W/ss.data.gt" --insns | awk '{ print $2 }' >"$W/ss.ips"
	$P dump -g "$W/ssfull.gt" | awk -v len="$(wc -l <"$W/ss.ips")" '
		$1 == "insn" { n++; if (k && n > k && n <= k + len) print substr($7, 3) }
		$1 == "syscall" && $7 == 234 && !k { k = n }' >"$W/ssfull.ips"
	full=$($P dump -g "$W/ssfull.gt" --insns | wc -l)
	win=$(wc -l <"$W/ss.ips")
	echo "# startstop: $win instructions between the signals, $full in the full run"
	[ "$win" -gt 100 ] && [ "$win" -lt "$full" ] && cmp -s "$W/ss.ips" "$W/ssfull.ips"
	tap $? "ptsynth: start-at ground truth equals the full run's instructions between the two signals"
	libipt_check ss "ptsynth: start-at trace (PSB+, TIP.PGE mid-run) decodes identically in libipt and ground truth"
	perf_check ss "$W/ss.data" "ptsynth: start-at trace decodes identically in perf 6.1 and ground truth"
else
	diag "$W/ssfull.err"
	diag "$W/ss.err"
	tap 1 "ptsynth: start-at mode traces the program between the two signals"
fi
$P trace --start-on-signal USR1 -g "$W/nostart.gt" -- "$B/tests/loop" >/dev/null 2>"$W/nostart.err"
st=$?
[ $st = 1 ] && grep -q "without the start signal" "$W/nostart.err"
tap $? "ptsynth: start-at mode fails when the start signal never comes (exit $st)"

# LuaJIT (if installed): a hot loop compiled into traces, single-stepped
# only between two signals after the warming (scenarios/luajit-hot.lua);
# libipt decodes the machine code from the tracer's snapshot of LuaJIT's
# anonymous mcode area.
if command -v luajit >/dev/null; then
	$P record $TIMING --start-on-signal USR1 --stop-on-signal USR2 -o "$W/lj.data" -- \
		luajit scenarios/luajit-hot.lua >/dev/null 2>"$W/lj.err"
	grep 'signal' "$W/lj.err" | sed 's/^/# /'
	$P dump -g "$W/lj.data.gt" >"$W/lj.dump" 2>/dev/null
	read -r ljall ljmc < <(awk '
		function num(h,   i, v) {
			h = tolower(h); sub(/^0x/, "", h); v = 0
			for (i = 1; i <= length(h); i++)
				v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v
		}
		$1 == "mmap" && $NF == "//anon" {
			split($6, r, "-"); a[++na] = num(r[1]); e[na] = num(r[2])
		}
		$1 == "insn" { n++; ip = num($7)
			for (i = 1; i <= na; i++) if (ip >= a[i] && ip < e[i]) { c++; break } }
		END { print n + 0, c + 0 }' "$W/lj.dump")
	echo "# luajit: $ljall instructions between the signals, $ljmc in the mcode area"
	[ "${ljmc:-0}" -gt 0 ]
	tap $? "ptsynth: the LuaJIT window runs compiled traces ($ljmc of $ljall instructions in anonymous executable memory)"
	libipt_check lj "ptsynth: LuaJIT's mcode window decodes identically in libipt (code from the tracer's snapshot) and ground truth"
else
	skip "ptsynth: LuaJIT window in start-at mode" "no luajit"
fi

# OVF: packets of insns [50000, 50040) are lost, decoding resumes exactly
# at insn 50040 (the FUP after OVF); before it the flow is a prefix.
$P check $TIMING -g "$W/loop.data.gt" --ovf-at 50000 --ovf-len 40 >"$W/ovf.out" 2>&1
st=$?
diag "$W/ovf.out"
grep -q "1 overflow(s).*, 50040): match" "$W/ovf.out" && [ $st = 0 ]
tap $? "ptsynth: injected OVF: libipt resumes at the FUP after OVF and matches ground truth around the gap"
synth loop "$W/loop.ovf.data" --ovf-at 50000 --ovf-len 40
if [ -n "$PERFBIN" ]; then
	perf_check loop "$W/loop.ovf.data" "ptsynth: injected OVF decodes in perf as ground truth with one gap"
	grep -q "1 overflow(s).*, 50040): match" "$W/cmp.out"
	tap $? "ptsynth: perf reports the overflow and resumes exactly after the lost instructions"
else
	skip "ptsynth: perf resumes after OVF" "no working perf binary"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
