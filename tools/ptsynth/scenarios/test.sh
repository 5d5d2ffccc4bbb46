#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# TAP checks of the scenario corpus in $B/scenarios (gen.sh): for each
# scenario, ptreplay decodes perf.data exactly as the ground truth says
# the program ran (every instruction, with flowjit records), shows decode
# errors with --no-flowjit, and Debian's unpatched perf shows errors on
# the file without flowjit records. The ground truth must run JIT code;
# a LuaJIT scenario's window must also leave the mcode by a trace exit.
#
#   test.sh [NAME...]      default: every scenario gen.sh made
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
B=${FLOWJIT_BUILD:-$top/build}
S=$B/scenarios
ptsynth=$here/../ptsynth
ptreplay=$top/tools/ptreplay/ptreplay

ok() { echo "ok - scenario $*"; }
not_ok() { echo "not ok - scenario $*"; }

make -s -C "$here/.." ptsynth > /dev/null || { not_ok "tools: ptsynth builds"; exit 1; }
make -s -C "$top/tools/ptreplay" > /dev/null || { not_ok "tools: ptreplay builds"; exit 1; }
dperf=$(command -v perf_6.1 || command -v perf || true)
if (($#)); then
	names=("$@")
else
	mapfile -t names < <(awk '{ print $1 }' "$S/list" 2> /dev/null)
fi
((${#names[@]})) || { not_ok "corpus: scenarios were generated ($S/list)"; exit 1; }

health() {	# @1 health file, @2 field
	sed -n "s/^$2: *\([0-9]*\).*/\1/p" "$1" | head -n 1
}

for n in "${names[@]}"; do
	d=$S/$n
	if [[ ! -s $d/perf.data || ! -s $d/gt ]]; then
		not_ok "$n: generated"
		continue
	fi
	# ground truth: instructions, and how many ran in JIT code (the
	# anonymous executable mappings the tracer saw)
	"$ptsynth" dump -g "$d/gt" > "$d/gt.dump" 2> /dev/null
	awk '$1 == "insn" { print $3, substr($7, 3) }' "$d/gt.dump" > "$d/gt.flow"
	total=$(wc -l < "$d/gt.flow")
	read -r jit maps jumps < <(awk '
	function num(h,   i, n) {
		h = tolower(h); sub(/^0x/, "", h); n = 0
		for (i = 1; i <= length(h); i++)
			n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return n
	}
	$1 == "mmap" && ($NF == "//anon" || $NF == "prot" || $(NF - 1) == "prot") {
		split($6, r, "-"); a[++na] = num(r[1]); e[na] = num(r[2]); next
	}
	$1 == "insn" {
		ip = num($7); in_jit = 0
		for (k = 1; k <= na; k++) if (ip >= a[k] && ip < e[k]) { c++; in_jit = 1; break }
		# a jmp rel32 from JIT code to code outside it (a trace exit)
		if (!in_jit && jmp[$3]) j++
		jmp[$3] = in_jit && $11 == "e9"
	}
	END { print c + 0, na, j + 0 }' "$d/gt.dump")
	if ((jit > 0)); then
		ok "$n: ground truth has $total instructions, $jit in JIT code ($maps anonymous executable mappings)"
	else
		not_ok "$n: ground truth runs JIT code ($total instructions, $jit in JIT code)"
	fi
	# LuaJIT: the window leaves compiled traces through their exit stubs
	# (jmp rel32 from the mcode to lj_vm_exit_handler in luajit's text)
	if grep -Eq "^$n[[:space:]].*/luajit " "$S/list"; then
		if ((jumps > 0)); then
			ok "$n: $jumps trace exits (jmp from the mcode into luajit's text) in the window"
		else
			not_ok "$n: the window has a trace exit (jmp from the mcode into luajit's text)"
		fi
	fi
	rm -f "$d/gt.dump"

	# 1. ptreplay with the flowjit records: every instruction
	"$ptreplay" decode -i "$d/perf.data" --flow > "$d/ptreplay.flow" 2> "$d/ptreplay.err"
	rc=$?
	"$ptreplay" decode -i "$d/perf.data" --health > "$d/ptreplay.health" 2>&1
	cmp=$("$ptsynth" cmpflow -g "$d/gt" "$d/ptreplay.flow" 2>&1)
	if ((rc == 0)) && grep -q ': match$' <<< "$cmp" && ! grep -qv ': match$' <<< "$cmp"; then
		ok "$n: ptreplay with flowjit records decodes all $total instructions as executed" \
		   "($(health "$d/ptreplay.health" '  images resolved') images resolved, 0 errors)"
	else
		sed 's/^/# /' <<< "$cmp" | head -n 5
		head -n 3 "$d/ptreplay.err" | sed 's/^/# /'
		not_ok "$n: ptreplay with flowjit records decodes all $total instructions as executed (rc $rc)"
	fi

	# what time resolution at exec faults buys (diagnostics, README.rst
	# "Exec faults"): the tracer's time with a TSC packet after each
	# fault (the old model), and without it
	for t in tsc-fault tsc; do
		"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
			--timing=$t -o "$d/perf-$t.data" 2> /dev/null || continue
		"$ptreplay" decode -i "$d/perf-$t.data" --flow > "$d/$t.flow" 2> /dev/null
		rc=$?
		echo "# $n: --timing=$t: ptreplay exits $rc:" \
		     "$("$ptsynth" cmpflow -g "$d/gt" "$d/$t.flow" 2>&1 | head -n 1)"
	done

	# 2. ptreplay --no-flowjit: JIT code cannot be decoded
	"$ptreplay" decode -i "$d/perf.data" --no-flowjit --health > "$d/ptreplay-nofj.health" 2>&1
	rc=$?
	errs=$(health "$d/ptreplay-nofj.health" 'decode errors')
	insns=$(health "$d/ptreplay-nofj.health" 'instructions decoded')
	if ((rc == 2 && ${errs:-0} > 0 && ${insns:-0} < total)); then
		ok "$n: ptreplay --no-flowjit: ${errs} decode errors, $insns of $total instructions"
	else
		not_ok "$n: ptreplay --no-flowjit shows decode errors (rc $rc, ${errs:-?} errors, ${insns:-?} of $total)"
	fi

	# 3. Debian's perf on the file without flowjit records
	if [[ -z $dperf ]]; then
		echo "ok - scenario $n: unpatched perf shows decode errors # SKIP no perf"
		continue
	fi
	"$dperf" script -i "$d/perf-noflowjit.data" --itrace=i0nse -F tid,ip \
		> "$d/perf-noflowjit.flow" 2> "$d/perf-noflowjit.err"
	perrs=$(grep -c 'instruction trace error' "$d/perf-noflowjit.flow")
	pinsns=$(grep -vc 'instruction trace error' "$d/perf-noflowjit.flow")
	if ((perrs > 0 && pinsns < total)); then
		ok "$n: $("$dperf" version) on the file without flowjit records:" \
		   "$perrs decode errors, $pinsns of $total instructions"
	else
		not_ok "$n: unpatched perf shows decode errors without flowjit records ($perrs errors, $pinsns of $total)"
	fi
done
