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
#   FLOWJIT_BASE=6.12      the corpus made on 6.12 ($B/scenarios-6.12)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
B=${FLOWJIT_BUILD:-$top/build}
S=$B/scenarios
[[ ${FLOWJIT_BASE:-6.1} == 6.1 ]] || S=$B/scenarios-$FLOWJIT_BASE
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

# @1 what, @2 ptreplay's exit status, @3 its flow of scenario $n in $d,
# @4 the perf.data decoded: ok if it exited 0 and every thread's flow is
# the ground truth's, or if ptreplay marked instructions the clock cannot
# order (unordered_marked)
exact() {
	local cmp

	cmp=$("$ptsynth" cmpflow -g "$d/gt" "$3" 2>&1)
	if (($2 == 0)) && grep -q ': match$' <<< "$cmp" && ! grep -qv ': match$' <<< "$cmp"; then
		ok "$n: $1"
	elif [[ -n ${4:-} ]] && unordered_marked "$4"; then
		ok "$n: $1, $uo_what"
	else
		sed 's/^/# /' <<< "$cmp" | head -n 5
		not_ok "$n: $1 (rc $2)"
	fi
}

# @1 a perf.data of scenario $n: where a thread that did not take the
# exec fault runs a page's new bytes within an MTC period of the image
# (ptsynth's model interleaves threads at every instruction, so it can)
# no decoder can tell the revisions apart; ptreplay must say so. 0 if it
# counts such unordered instructions (and nothing suspect), exits 2, and
# decodes nothing wrongly before the first instruction it marks; sets
# uo_what.
unordered_marked() {
	local f=$1.uo uo sus rc mark wrong

	"$ptreplay" decode -i "$1" --health > "$f.health" 2> /dev/null
	uo=$(health "$f.health" 'unordered instructions')
	sus=$(health "$f.health" 'suspect instructions')
	((${uo:-0} > 0 && ${sus:-0} == 0)) || return 1
	"$ptreplay" decode -i "$1" --flow -e > "$f.flow" 2> /dev/null
	rc=$?
	right_before_mark "$f.flow"
	[[ $rc == 2 && -n $mark && -z $wrong ]] || return 1
	uo_what="but for $uo instructions the clock cannot order, marked before anything decoded wrongly (first mark at flow line $mark)"
}

# lost_check NAME WHAT SYNTH-ARGS...: synthesise with the sideband and
# SYNTH-ARGS (a loss) into $d/perf-NAME.data; ptreplay must say so
# (suspect instructions or decode errors, exit 2) and decode nothing
# wrongly before the first instruction it marks
# @1 a flow of ptreplay -e: sets mark to the line of its first mark (a
# suspect or unordered image, a decode error; empty if none) and wrong to
# the first difference from the ground truth before it (empty if none)
right_before_mark() {
	mark=$(grep -n -m 1 'trace error' "$1" | cut -d: -f1)
	head -n $((${mark:-0} ? mark - 1 : $(wc -l < "$1"))) "$1" > "$1.before"
	# (a flow cut short differs where it ends: not a wrong one)
	wrong=$("$ptsynth" cmpflow -g "$d/gt" "$1.before" 2>&1 |
		awk '/differ at insn/ { k = $6; d = $NF; sub(/\)$/, "", d)
		     if (k != d) { print; exit } }')
}

lost_check() {
	local name=$1 what=$2 rc sus errs mark wrong
	shift 2
	"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		"$@" -o "$d/perf-$name.data" 2> "$d/synth-$name.err"
	"$ptreplay" decode -i "$d/perf-$name.data" --flow -e > "$d/$name.flow" 2> /dev/null
	rc=$?
	"$ptreplay" decode -i "$d/perf-$name.data" --health > "$d/$name.health" 2> /dev/null
	sus=$(health "$d/$name.health" 'suspect instructions')
	errs=$(health "$d/$name.health" 'decode errors')
	# the first line that says something may be wrong: a suspect
	# image or a decode error; every instruction before it is right
	right_before_mark "$d/$name.flow"
	what="$what: ptreplay says so ($sus suspect instructions, $errs decode errors, exit $rc) before anything it decodes wrongly"
	if ((rc == 2 && ${sus:-0} + ${errs:-0} > 0)) && [[ -n $mark && -z $wrong ]]; then
		ok "$n: $what (first mark at flow line $mark)"
	else
		echo "# $n: ${wrong:-nothing wrong} before flow line ${mark:-(none)}"
		not_ok "$n: $what"
	fi
}

health() {	# @1 health file, @2 field
	sed -n "s/^$2: *\([0-9]*\).*/\1/p" "$1" | head -n 1
}

timeonly_bad=() timeonly_ok=() delta_runs=() base_runs=()
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
	# code rewritten in place that ran in both versions: addresses whose
	# instruction bytes differ from one run to a later one
	rewritten=$(awk '$1 == "insn" {
		b = ""; for (k = 11; k <= NF; k++) b = b " " $k
		if (($7 in seen) && seen[$7] != b) diff[$7] = 1
		seen[$7] = b
	} END { print length(diff) }' "$d/gt.dump")
	nthreads=$(awk '$1 == "insn" { t[$3] = 1 } END { print length(t) }' "$d/gt.dump")
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
	elif unordered_marked "$d/perf.data"; then
		ok "$n: ptreplay with flowjit records decodes all $total instructions as executed, $uo_what"
	else
		sed 's/^/# /' <<< "$cmp" | head -n 5
		head -n 3 "$d/ptreplay.err" | sed 's/^/# /'
		not_ok "$n: ptreplay with flowjit records decodes all $total instructions as executed (rc $rc)"
	fi

	# 1a. the flow exported for viewers: a valid Chrome trace (B/E
	# nested per thread), collapsed stacks counting every instruction,
	# the JIT code a frame of its own name
	"$ptreplay" decode -i "$d/perf.data" --chrome-trace "$d/timeline.json" \
		--folded "$d/stacks.folded" > /dev/null 2> "$d/export.err"
	rc=$?
	# exit 2 for unordered instructions only: the export is whole, so it
	# counts every instruction ptreplay decoded. After a mark that may
	# differ from the truth (an instruction of other bytes than those
	# that ran: 1. says so); what the export must count is the flow's.
	want=$total
	if ((rc == 2)) && unordered_marked "$d/perf.data"; then
		rc=0
		want=$(grep -c . "$d/ptreplay.flow")
	fi
	ct=$(python3 "$top/tools/ptreplay/test/check-trace.py" chrome "$d/timeline.json" 2>&1 &&
	     python3 "$top/tools/ptreplay/test/check-trace.py" folded "$d/stacks.folded" \
		--total "$want" 2>&1)
	ctrc=$?
	jit=$(grep -c '^[^ ]*jit:[0-9]*:0x' "$d/stacks.folded")
	if ((rc == 0 && ctrc == 0 && jit > 0)); then
		ok "$n: exported: a valid Chrome trace and collapsed stacks of all $want instructions decoded, JIT code in $jit stacks ($(tr '\n' ' ' <<< "$ct"))"
	else
		echo "# $n: $(tail -n 2 <<< "$ct") $(head -n 2 "$d/export.err")"
		not_ok "$n: exported: a valid Chrome trace and collapsed stacks of all $want instructions decoded, JIT code named (rc $rc, check $ctrc, $jit JIT stacks)"
	fi

	# revision switches: what tied them (a diagnostic)
	echo "# $n: $(grep -m 1 '^revision switches' "$d/ptreplay.health")"

	# 1b. adversarial hardware timing: every exec fault's image written
	# 1 ns before the fault returns (no MTC can come between), interrupts
	# at random boundaries and around each JIT rewrite. ptreplay must stay
	# exact; picking code by time only (--no-tie) must fail wherever code
	# rewritten in place ran in both versions.
	adv=(--hw-fault-tail-ns 1 --irq-every 3000 --irq-seed 18 --irq-jit)
	if "$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		"${adv[@]}" -o "$d/perf-adv.data" 2> "$d/synth-adv.err"; then
		irqs=$(sed -n 's/.* \([0-9]*\) interrupts modelled.*/\1/p' "$d/synth-adv.err")
		"$ptreplay" decode -i "$d/perf-adv.data" --flow > "$d/adv.flow" 2> /dev/null
		exact "images at the end of their faults, ${irqs:-?} interrupts: ptreplay decodes all $total instructions as executed" \
		      $? "$d/adv.flow" "$d/perf-adv.data"
		"$ptreplay" decode -i "$d/perf-adv.data" --health > "$d/adv.health" 2> /dev/null
		sw=$(grep -m 1 '^revision switches' "$d/adv.health")
		byev=$(sed -n 's/.*(by event \([0-9]*\),.*/\1/p' <<< "$sw")
		echo "# $n: adversarial: $sw"
		"$ptreplay" decode -i "$d/perf-adv.data" --no-tie --flow > "$d/adv-notie.flow" 2> /dev/null
		cmp=$("$ptsynth" cmpflow -g "$d/gt" "$d/adv-notie.flow" 2>&1)
		# a switch made by a tie is one the clock could not make: there
		# picking by time reads the old bytes
		# (it still decodes right where the first instructions of the
		# new revision are the old one's and an MTC comes before the
		# changed ones: counted over the corpus below)
		if grep -q MISMATCH <<< "$cmp"; then
			timeonly_bad+=("$n")
			echo "# $n: $byev switches by event ($rewritten addresses rewritten in place ran twice);" \
			     "by time only: $(grep -m 1 'differ' <<< "$cmp" | sed 's/^# //')"
		else
			((${byev:-0})) && timeonly_ok+=("$n")
			echo "# $n: $byev switches by event ($rewritten addresses rewritten in place ran twice);" \
			     "by time only: $(tail -n 1 <<< "$cmp")"
		fi
	else
		sed 's/^/# /' "$d/synth-adv.err" | tail -n 3
		not_ok "$n: ptsynth synth with adversarial timing"
	fi

	# 1c. per-CPU layout on two CPUs, threads sharing them (multi-threaded
	# scenarios), with the same adversarial timing
	if ((nthreads > 1)); then
		"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
			"${adv[@]}" --per-cpu --cpus 2 -o "$d/perf-cpu.data" 2> "$d/synth-cpu.err"
		"$ptreplay" decode -i "$d/perf-cpu.data" --flow > "$d/cpu.flow" 2> /dev/null
		exact "per-CPU on 2 CPUs, adversarial timing: ptreplay decodes every thread as executed" \
		      $? "$d/cpu.flow" "$d/perf-cpu.data"
		# a coarse clock (MTC period 9: 21 us at 24 MHz, where threads
		# interleave at every instruction) makes the threads that did
		# not fault run new bytes within the lag: ptreplay must decode
		# them exactly or mark them, never decode them wrongly in silence
		"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
			"${adv[@]}" --mtc=9 -o "$d/perf-mtc9.data" 2> "$d/synth-mtc9.err"
		"$ptreplay" decode -i "$d/perf-mtc9.data" --flow > "$d/mtc9.flow" 2> /dev/null
		exact "MTC period 9, adversarial timing: ptreplay decodes all $total instructions as executed" \
		      $? "$d/mtc9.flow" "$d/perf-mtc9.data"
	fi

	# 1c'. an interrupt at each exec fault's IP the last time the thread
	# ran it before the fault: the trace shows it as it shows the fault,
	# so ptreplay ties the fault there; the fault's own TIP.PGE before the
	# clock passed it must put that tie in doubt (marked before anything
	# decoded wrongly), with perf's MTC period 3 and with 9
	for mtc in 3 9; do
		"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
			"${adv[@]}" --irq-fault-ip --mtc=$mtc -o "$d/perf-fip$mtc.data" \
			2> "$d/synth-fip$mtc.err" || { not_ok "$n: ptsynth synth --irq-fault-ip"; break; }
		nfip=$(sed -n 's/.* \([0-9]*\) at fault IPs.*/\1/p' "$d/synth-fip$mtc.err")
		# none where no thread ran a fault's IP again before its fault
		if ! ((${nfip:-0})); then
			echo "# $n: an interrupt at each exec fault IP: not checked (no thread ran a fault's IP before its fault in this run)"
			break
		fi
		"$ptreplay" decode -i "$d/perf-fip$mtc.data" --flow > "$d/fip$mtc.flow" 2> /dev/null
		exact "an interrupt at each of $nfip exec fault IPs before its fault, MTC period $mtc: ptreplay decodes all $total instructions as executed" \
		      $? "$d/fip$mtc.flow" "$d/perf-fip$mtc.data"
	done

	# 1c''. no MTC (perf's mtc=0): TSC packets only, at PSB+ and where
	# tracing is enabled, so the clock can stay behind for the whole
	# trace. A thread that runs alone orders its code by its own exec
	# faults (ties); ptreplay must decode it exactly. A thread that runs
	# code another thread faulted in is bounded only by the next TSC
	# packet and its own next fault: ptreplay must decode it exactly or
	# mark what the clock cannot order before anything decoded wrongly
	# (tools/ptreplay/README.rst, "Revision switches tied to faults").
	# perf's scenario check decodes it too (perf-nomtc.data, or
	# perf-nomtc-mt.data with more than one thread: perf bounds by the
	# thread's next fault only, and warns of more than ptreplay marks)
	nomtc=nomtc
	((nthreads > 1)) && nomtc=nomtc-mt
	"$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		"${adv[@]}" --no-mtc -o "$d/perf-$nomtc.data" 2> "$d/synth-$nomtc.err"
	"$ptreplay" decode -i "$d/perf-$nomtc.data" --flow > "$d/$nomtc.flow" 2> /dev/null
	exact "no MTC, adversarial timing: ptreplay decodes all $total instructions as executed" \
	      $? "$d/$nomtc.flow" "$d/perf-$nomtc.data"
	# per CPU without MTC the clock places the threads' switches only
	# to the PSB period: not checked (the README says why)
	((nthreads > 1)) && echo "# $n: no MTC per CPU: not checked (thread switches placed by a clock that lags to the next PSB)"

	# 1d. the last exec fault image lost (a PERF_RECORD_LOST in its place):
	# ptreplay must say so (suspect instructions, exit 2), and decode
	# nothing wrongly before the first instruction it marks
	nimg=$(sed -n 's/.*(\([0-9]*\) exec faults).*/\1/p' "$d/synth.err" | head -n 1)
	if ((${nimg:-0} >= 2)); then
		lost_check lost "image $nimg lost" --lose-image "$nimg"
	fi

	# 1e. delta records: images after a page's first become deltas
	# against the page's previous one (ptsynth --delta, as a kernel
	# writing deltas would), adversarial timing: decoded exactly
	if "$ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		"${adv[@]}" --delta -o "$d/perf-delta.data" 2> "$d/synth-delta.err"; then
		nd=$(sed -n 's/.* \([0-9]*\) user JIT images made deltas (\([0-9]*\) bytes.*image \([0-9]*\)$/\1 \2 \3/p' \
		     "$d/synth-delta.err")
		read -r ndelta dbytes dbase <<< "${nd:-0 0 0}"
		"$ptreplay" decode -i "$d/perf-delta.data" --flow > "$d/delta.flow" 2> /dev/null
		exact "$ndelta images as delta records ($dbytes bytes of pieces), adversarial timing: ptreplay decodes all $total instructions as executed" \
		      $? "$d/delta.flow" "$d/perf-delta.data"
		((ndelta)) && delta_runs+=("$n")
		# 1f. a delta's base lost: its page has no code from the delta
		# on (never the older bytes); ptreplay says so. The image lost
		# is the first a later delta is against; where every revision
		# went whole (the kernel writes a page's first revision, and
		# the first after it was freed, over zeros) there is none
		if ((${dbase:-0})); then
			lost_check delta-lost "delta base (image $dbase) lost" --delta --lose-image "$dbase"
			dnb=$(sed -n 's/.*delta records: *[0-9]* (without base \([0-9]*\).*/\1/p' \
			      "$d/delta-lost.health")
			echo "# $n: delta base lost: ${dnb:-?} delta records without base"
			base_runs+=("$n")
		elif ((ndelta)); then
			echo "# $n: no delta is against an earlier image (every revision went whole): no base to lose"
		fi
	else
		sed 's/^/# /' "$d/synth-delta.err" | tail -n 3
		not_ok "$n: ptsynth synth --delta"
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

# what ties buy, over the corpus: with every fault's image written just
# before its return, picking code by time only must decode some scenario
# wrongly (issue 18); where it does not, the changed bytes ran after an
# MTC had caught the clock up
if ((${#timeonly_bad[@]})); then
	ok "corpus: picking code by time only decodes ${#timeonly_bad[@]} scenarios wrongly (${timeonly_bad[*]}); with ties all decode exactly${timeonly_ok:+ (by time only still right: ${timeonly_ok[*]})}"
else
	not_ok "corpus: picking code by time only decodes some scenario wrongly (none did${timeonly_ok:+; right: ${timeonly_ok[*]}})"
fi

# delta records must have been exercised somewhere: a page rewritten
if ((${#delta_runs[@]})); then
	ok "corpus: delta records decoded in ${#delta_runs[@]} scenarios (${delta_runs[*]})"
else
	not_ok "corpus: delta records decoded in some scenario (no page was rewritten)"
fi
# and a lost base reported somewhere
if ((${#base_runs[@]})); then
	ok "corpus: a delta's lost base reported in ${#base_runs[@]} scenarios (${base_runs[*]})"
else
	not_ok "corpus: a delta's lost base reported in some scenario (no delta was against an earlier image)"
fi
