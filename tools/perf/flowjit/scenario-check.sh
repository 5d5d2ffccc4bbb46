#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# perf's Intel PT decoder on a ptsynth scenario (a real PT packet stream
# of a real run, with the real side-band of perf record --flowjit): TAP
# lines saying whether perf script decodes exactly the instructions the
# ground truth says ran, with the flowjit records, and fails without
# them (records stripped, and with intel-pt.flowjit = false).
#
#   scenario-check.sh [-p PERF] [-s PTSYNTH] [-o WORK] DIR...
#
# DIR holds perf.data (intel_pt + side-band with flowjit records) and
# the ground truth gt (or perf.data.gt, tools/ptsynth/gt.h); optionally
# perf-noflowjit.data (the same without flowjit records; made with
# perf inject --strip-flowjit otherwise) and jit.log (the revision log of
# samples/ebpf-jit: its code ranges are the JIT code to find symbols
# for). A missing DIR or file is a "not ok" with the reason. Outputs go
# to WORK/NAME (default DIR/perf-check).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
perf=${PERF:-perf} ptsynth=${PTSYNTH:-ptsynth} work=
while getopts "p:s:o:" o; do
	case $o in
	p) perf=$OPTARG ;;
	s) ptsynth=$OPTARG ;;
	o) work=$OPTARG ;;
	*) echo "usage: scenario-check.sh [-p PERF] [-s PTSYNTH] [-o WORK] DIR..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

ok() { echo "ok - perf scenario $*"; }
not_ok() { echo "not ok - perf scenario $*"; }

# instructions, trace errors and cmpflow's verdict of one perf script run
# @1 name @2 perf.data @3 output prefix, then env assignments for perf
decode() {
	local data=$2 out=$3
	shift 3
	env "$@" "$perf" script -i "$data" --itrace=i0nse -F tid,ip > "$out.flow" 2> "$out.err"
	echo $? > "$out.rc"
	grep -c 'instruction trace error' "$out.flow" > "$out.errors"
	grep -vc 'error' "$out.flow" > "$out.insns"
	"$ptsynth" cmpflow -g "$gt" "$out.flow" > "$out.cmp" 2>&1
}

# every thread's flow matches the ground truth
matches() {
	grep -q ': match$' "$1.cmp" && ! grep -v '^#' "$1.cmp" | grep -qv ': match$'
}

# perf warned of instructions it decoded where the clock cannot order a
# newer image (a thread that did not take the exec fault ran the page
# within an MTC period of it: no decoder can tell, ptsynth's model can
# make that happen); sets uo to their number
unordered() {
	local re='^flowjit: warning: \([0-9]*\) instructions were decoded from user JIT code'

	uo=$(sed -n "s/$re that a newer image.*/\\1/p" "$1.err")
	((${uo:-0} > 0))
}

# what a decode right but for @1 instructions perf warned of says
unordered_what() {
	echo "but for $1 instructions perf warns the clock cannot order"
}

# perf warned of instructions a tie it found in doubt made live (an
# interrupt at a fault's IP before the fault: the trace shows it as the
# fault); sets td to their number
in_doubt() {
	local re='^flowjit: warning: \([0-9]*\) instructions were decoded from user JIT code'

	td=$(sed -n "s/$re a fault image made live.*/\\1/p" "$1.err")
	((${td:-0} > 0))
}

[[ $# -gt 0 ]] || { not_ok "corpus: no scenario directory given"; exit 0; }
command -v "$perf" > /dev/null || { not_ok "tools: no perf ($perf)"; exit 0; }
command -v "$ptsynth" > /dev/null || { not_ok "tools: no ptsynth ($ptsynth)"; exit 0; }

for d in "$@"; do
	n=$(basename "$d")
	gt=$d/gt
	[[ -s $gt ]] || gt=$d/perf.data.gt
	if [[ ! -s $d/perf.data || ! -s $gt ]]; then
		not_ok "$n: corpus present ($d has no perf.data and ground truth)"
		continue
	fi
	w=${work:+$work/$n}
	w=${w:-$d/perf-check}
	mkdir -p "$w" || { not_ok "$n: cannot write $w"; continue; }
	total=$("$ptsynth" dump -g "$gt" --insns 2> /dev/null | grep -c .)

	# 1. with the flowjit records: the flow as executed, no error
	decode "$n" "$d/perf.data" "$w/flowjit" PERF_CONFIG=/dev/null
	insns=$(cat "$w/flowjit.insns") errs=$(cat "$w/flowjit.errors") rc=$(cat "$w/flowjit.rc")
	what="perf script decodes all $total instructions as executed with flowjit images"
	if [[ $rc == 0 && $errs == 0 ]] && matches "$w/flowjit"; then
		ok "$n: $what, 0 errors"
	elif [[ $rc == 0 ]] && unordered "$w/flowjit"; then
		ok "$n: $what, $(unordered_what "$uo") ($errs errors)"
	else
		sed 's/^/# /' "$w/flowjit.cmp" | head -n 6
		grep -m 3 'error' "$w/flowjit.flow" | sed 's/^/# /'
		not_ok "$n: $what ($insns decoded, $errs errors, rc $rc)"
	fi
	echo "# $n: with flowjit: $insns of $total instructions, $errs errors"

	# 1b. hardware timing at its hardest (every image written just before
	# its fault returns, interrupts around JIT rewrites: ptsynth's
	# scenarios/test.sh makes these), and per-CPU on two CPUs; a coarse
	# clock, no MTC (tools/ptsynth's scenarios/test.sh writes
	# perf-nomtc.data, or perf-nomtc-mt.data where more than one thread
	# runs: there only a thread's next fault bounds the real time for
	# perf, and perf warns of what another thread may have replaced), and
	# an interrupt at each fault's IP before it:
	# exact, or perf warns of what it cannot order or of ties in doubt
	for v in adv cpu delta mtc9 nomtc fip3 fip9; do
		f=$d/perf-$v.data
		[[ $v == nomtc && ! -s $f ]] && f=$d/perf-nomtc-mt.data
		[[ -s $f ]] || continue
		if [[ $v == fip* ]] &&
		   grep -q ' 0 at fault IPs' "$d/synth-$v.err" 2> /dev/null; then
			echo "# $n: an interrupt at each fault's IP, MTC period ${v#fip}:" \
			     "not checked (no thread ran a fault's IP before its fault in this run)"
			continue
		fi
		decode "$n" "$f" "$w/$v" PERF_CONFIG=/dev/null
		insns=$(cat "$w/$v.insns") errs=$(cat "$w/$v.errors") rc=$(cat "$w/$v.rc")
		case $v in
		adv) what="images at the end of their faults, interrupts:" ;;
		cpu) what="per-CPU on 2 CPUs, images at the end of their faults:" ;;
		delta) what="delta records, images at the end of their faults:" ;;
		mtc9) what="MTC period 9, images at the end of their faults:" ;;
		nomtc) what="no MTC, images at the end of their faults:" ;;
		fip*) what="an interrupt at each fault's IP before it, MTC period ${v#fip}:" ;;
		esac
		what+=" perf script decodes all $total instructions as executed"
		if [[ $rc == 0 && $errs == 0 ]] && matches "$w/$v"; then
			ok "$n: $what"
		elif [[ $rc == 0 ]] && unordered "$w/$v"; then
			ok "$n: $what, $(unordered_what "$uo") ($errs errors)"
		elif [[ $rc == 0 ]] && in_doubt "$w/$v"; then
			what+=", but for $td instructions perf warns a tie is in doubt"
			ok "$n: $what ($errs errors)"
		else
			sed 's/^/# /' "$w/$v.cmp" | head -n 6
			not_ok "$n: $what ($insns decoded, $errs errors, rc $rc)"
		fi
	done
	# 1c. an exec fault image lost: perf says so without being asked
	if [[ -s $d/perf-lost.data ]]; then
		decode "$n" "$d/perf-lost.data" "$w/lost" PERF_CONFIG=/dev/null
		errs=$(cat "$w/lost.errors")
		what="an exec fault image lost: perf warns of suspect instructions or shows errors"
		warned=$(grep -c 'flowjit: warning: [1-9][0-9]* instructions' "$w/lost.err")
		if ((warned > 0 || errs > 0)); then
			sus=$(grep -o '[0-9]* suspect' "$w/lost.err" | head -n 1)
			ok "$n: $what (${sus:-0 suspect}, $errs errors)"
		else
			sed 's/^/# /' "$w/lost.err" | head -n 4
			not_ok "$n: $what"
		fi
	fi

	# 1d. a delta's base image lost: perf warns, never decodes old bytes
	if [[ -s $d/perf-delta-lost.data ]] &&
		grep -q 'without base [1-9]' "$d/delta-lost.health"; then
		decode "$n" "$d/perf-delta-lost.data" "$w/delta-lost" PERF_CONFIG=/dev/null
		errs=$(cat "$w/delta-lost.errors")
		what="a delta record's base image lost: perf warns and shows errors"
		if grep -q 'flowjit: warning: [1-9][0-9]* delta records without' \
			"$w/delta-lost.err" && ((errs > 0)); then
			ok "$n: $what ($errs errors)"
		else
			sed 's/^/# /' "$w/delta-lost.err" | head -n 4
			not_ok "$n: $what"
		fi
	fi

	# 2. the records stripped: JIT code cannot be decoded
	nofj=$d/perf-noflowjit.data
	if [[ ! -s $nofj ]]; then
		nofj=$w/stripped.data
		"$perf" inject --strip-flowjit -i "$d/perf.data" -o "$nofj" 2> "$w/inject.err"
	fi
	decode "$n" "$nofj" "$w/stripped" PERF_CONFIG=/dev/null
	insns=$(cat "$w/stripped.insns") errs=$(cat "$w/stripped.errors")
	what="without flowjit records perf script shows errors"
	if ((errs > 0)) && ! matches "$w/stripped"; then
		ok "$n: $what: $errs, and decodes $insns of $total instructions"
	else
		not_ok "$n: $what ($errs errors, $insns of $total instructions)"
	fi

	# 3. the records there, their use off
	printf '[intel-pt]\n\tflowjit = false\n' > "$w/config"
	decode "$n" "$d/perf.data" "$w/off" PERF_CONFIG="$w/config"
	insns=$(cat "$w/off.insns") errs=$(cat "$w/off.errors")
	what="with intel-pt.flowjit = false perf script shows errors"
	if ((errs > 0)) && ! matches "$w/off"; then
		ok "$n: $what: $errs, and decodes $insns of $total instructions"
	else
		not_ok "$n: $what ($errs errors, $insns of $total instructions)"
	fi

	# 4. symbols: every instruction in the JIT's code is in a jit: symbol
	PERF_CONFIG=/dev/null "$perf" script -i "$d/perf.data" --itrace=i0ns -F ip,sym \
		> "$w/sym.txt" 2> /dev/null
	if [[ ! -s $d/jit.log ]]; then
		named=$(grep -c ' jit:[0-9]*:0x' "$w/sym.txt")
		if ((named > 0)); then
			ok "$n: $named instructions have a jit:<pid>:<addr> symbol (no jit.log)"
		else
			not_ok "$n: instructions have a jit:<pid>:<addr> symbol (none; no jit.log)"
		fi
		continue
	fi
	read -r injit named < <(awk '
	function num(h,   i, v) {
		h = tolower(h); sub(/^0x/, "", h); v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return v
	}
	FNR == NR { if (!/^#/ && NF >= 3) { a[++na] = num($2); l[na] = $3 + 0 } next }
	{
		ip = num($1)
		for (k = 1; k <= na; k++)
			if (ip >= a[k] && ip < a[k] + l[k]) {
				c++
				if ($2 ~ /^jit:[0-9]+:0x[0-9a-f]+/)
					s++
				break
			}
	}
	END { print c + 0, s + 0 }' "$d/jit.log" "$w/sym.txt")
	if ((injit > 0 && injit == named)); then
		ok "$n: all $injit instructions in JIT code have a jit:<pid>:<addr> symbol"
	else
		grep -m 3 -v ' jit:' "$w/sym.txt" | sed 's/^/# /'
		not_ok "$n: instructions in JIT code have a jit:<pid>:<addr> symbol" \
		       "($named of $injit)"
	fi
done
exit 0
