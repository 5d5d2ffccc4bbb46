#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run all ptreplay tests and print kselftest-style TAP on stdout:
#   unit tests (TEST_BIN_DIR/test-*), CLI robustness tests of $PTREPLAY,
#   the browser test (test/viewer-test.sh) and the libipt ptt conformance
#   run (PTT_DIR; by default
#   ../shared/peer/libipt-ptt beside the repository, a failure if absent).
# Exits non-zero if any test failed.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${TEST_BIN_DIR:?}
ptreplay=${PTREPLAY:?}
ptt=${PTT_DIR:-$(cd "$here/../../.." && pwd)/../shared/peer/libipt-ptt}

# Make sanitizer reports (make check SAN=1) fail tests that accept exit
# status 1 or 2.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=99:print_stacktrace=1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lines=()

ok()   { lines+=("ok - $1"); }
fail() { lines+=("not ok - $1"); shift; for d in "$@"; do lines+=("# $d"); done; }
skip() { lines+=("ok - $1 # SKIP $2"); }
diag() { lines+=("# $1"); }
check() { local what=$1; shift; if "$@" > /dev/null 2>&1; then ok "$what"; else fail "$what"; fi; }

# --- unit tests ---
# the ones the Makefile built (TEST_BINS): a test-* left in the build
# directory by a source that is gone must not run
if [[ -n ${TEST_BINS:-} ]]; then
	read -ra tests <<< "$TEST_BINS"
else
	tests=("$bin"/test-*)
fi
for t in "${tests[@]}"; do
	[[ -x $t && $t != *.o ]] || continue
	out=$("$t" 2>"$tmp/err"); rc=$?
	while IFS= read -r l; do lines+=("$l"); done <<< "$out"
	if ((rc)) && ! grep -q '^not ok' <<< "$out"; then
		fail "$(basename "$t") exits cleanly" "exit status $rc" \
			"$(head -c 300 "$tmp/err")"
	fi
done

# --- CLI robustness ---
# run NAME ARGS...: run ptreplay with a timeout; status in $rc
run() { timeout 20 "$ptreplay" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null; rc=$?; }
# status_is WHAT EXPECTED ARGS...
status_is() {
	local what=$1 want=$2; shift 2
	run "$@"
	if [[ $rc == "$want" ]]; then ok "$what"; else
		fail "$what" "exit status $rc, expected $want" \
			"stderr: $(head -c 200 "$tmp/err")"; fi
}
# stderr_says WHAT TEXT: the last run printed TEXT on stderr
stderr_says() { check "$1" grep -q -- "$2" "$tmp/err"; }

printf '\x90\xeb\x01\xcc\x90\xff\xe0' > "$tmp/code.bin"
# PSB, MODE.EXEC 64-bit, PSBEND, TIP.PGE 0x1000, TIP.PGD 0x3000
printf '\x02\x82%.0s' {1..8} > "$tmp/good.pt"
printf '\x99\x01\x02\x23\x71\x00\x10\x00\x00\x00\x00\x61\x00\x30\x00\x00\x00\x00' >> "$tmp/good.pt"
: > "$tmp/empty.pt"
RANDOM=42; for i in $(seq 512); do printf "\\x$(printf %02x $((RANDOM % 256)))"; done > "$tmp/garbage.pt"

status_is "ptreplay: no mode prints usage and fails" 1
status_is "ptreplay: an unknown mode fails" 1 bogus
status_is "ptreplay: raw --help succeeds" 0 raw --help
status_is "ptreplay: raw decodes a good trace with exit status 0" 0 \
	raw --raw "$tmp/code.bin:0x1000" --pt "$tmp/good.pt" --no-inst
check "ptreplay: raw prints the decoded flow on stdout" \
	diff -u - "$tmp/out" <<< $'[enabled]\n0000000000001000\n0000000000001001\n0000000000001004\n0000000000001005\n[disabled]'
status_is "ptreplay: --raw FILE:OFF:ADDR maps the file at the offset" 0 \
	raw --raw "$tmp/code.bin:0x1000" --raw "$tmp/code.bin:0x4:0x1004" \
	--pt "$tmp/good.pt" --no-inst --check
status_is "ptreplay: a missing --pt file fails" 1 \
	raw --raw "$tmp/code.bin:0x1000" --pt "$tmp/nonexistent.pt"
stderr_says "ptreplay: a missing --pt file is named on stderr" nonexistent.pt
status_is "ptreplay: a missing --raw file fails" 1 \
	raw --raw "$tmp/nonexistent.bin:0x1000" --pt "$tmp/good.pt"
stderr_says "ptreplay: a missing --raw file is named on stderr" nonexistent.bin
status_is "ptreplay: a --raw spec without address fails" 1 \
	raw --raw "$tmp/code.bin" --pt "$tmp/good.pt"
status_is "ptreplay: a --raw spec with a reversed range fails" 1 \
	raw --raw "$tmp/code.bin:6-2:0x1000" --pt "$tmp/good.pt"
status_is "ptreplay: a --raw offset past the file end fails" 1 \
	raw --raw "$tmp/code.bin:0x100:0x1000" --pt "$tmp/good.pt"
status_is "ptreplay: an empty --pt file fails" 1 \
	raw --raw "$tmp/code.bin:0x1000" --pt "$tmp/empty.pt"
status_is "ptreplay: a --pt range past the file end fails" 1 \
	raw --raw "$tmp/code.bin:0x1000" --pt "$tmp/good.pt:0x10-0x1000"
status_is "ptreplay: a garbage --pt file fails with status 2" 2 \
	raw --raw "$tmp/code.bin:0x1000" --pt "$tmp/garbage.pt"
stderr_says "ptreplay: a garbage --pt file is explained on stderr" "no synchronization point"
status_is "ptreplay: unmapped code is a decode error (status 2)" 2 \
	raw --raw "$tmp/code.bin:0x2000" --pt "$tmp/good.pt"
status_is "ptreplay: an option missing its argument fails" 1 \
	raw --pt "$tmp/good.pt" --mtc-freq

# every prefix of the good trace and byte flips of it: no crash, no hang
bad=""
size=$(stat -c %s "$tmp/good.pt")
for ((n = 1; n < size; n++)); do
	head -c "$n" "$tmp/good.pt" > "$tmp/cut.pt"
	for dec in --insn-decoder --block-decoder; do
		run raw $dec --raw "$tmp/code.bin:0x1000" --pt "$tmp/cut.pt"
		((rc <= 2)) || bad+=" cut$n$dec:$rc"
	done
done
check "ptreplay: every truncation of a trace decodes without crash or hang" \
	test -z "$bad"
[[ -n $bad ]] && diag "failures:$bad"
bad=""
RANDOM=7
for ((n = 0; n < 150; n++)); do
	cp "$tmp/good.pt" "$tmp/flip.pt"
	for k in 1 2 3; do
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="$tmp/flip.pt" bs=1 seek=$((RANDOM % size)) \
			conv=notrunc status=none
	done
	dec=--insn-decoder; ((n % 2)) && dec=--block-decoder
	run raw $dec --raw "$tmp/code.bin:0x1000" --raw "$tmp/garbage.pt:0x0:0x3000" \
		--pt "$tmp/flip.pt"
	((rc <= 2)) || bad+=" flip$n:$rc"
done
check "ptreplay: 150 corrupted traces decode without crash or hang" \
	test -z "$bad"
[[ -n $bad ]] && diag "failures:$bad"

# --- decode: perf.data replay (synthetic flowjit scenario) ---
mkperf=$bin/mkperf
"$mkperf" "$tmp/jit.data"
expected_jit=$'  100             10000\n  100             10001\n  100             10002\n  100             10003\n  100  ffffffffa0001000\n  100  ffffffffa0001001\n  100  ffffffffa0001002\n  100             10000\n  100             10001\n  100  ffffffffa0001000\n  100  ffffffffa0001001'
status_is "ptreplay decode: the flowjit scenario decodes with exit status 0" 0 \
	decode -i "$tmp/jit.data"
check "ptreplay decode: JIT page revisions and a reused BPF address decode each in its own time" \
	diff -u - "$tmp/out" <<< "$expected_jit"
status_is "ptreplay: options without a mode mean decode" 0 -i "$tmp/jit.data" --flow
check "ptreplay: the default mode prints the same flow" diff -u - "$tmp/out" <<< "$expected_jit"
status_is "ptreplay decode --no-flowjit: the same trace has decode errors (status 2)" 2 \
	decode -i "$tmp/jit.data" --no-flowjit --health
check "ptreplay decode --no-flowjit: no instructions decode without the flowjit images" \
	grep -q "^instructions decoded:   0$" "$tmp/out"
check "ptreplay decode --no-flowjit: the errors are reported as no memory mapped" \
	grep -q "no memory mapped at this address" "$tmp/out"
run decode -i "$tmp/jit.data" --health
check "ptreplay decode --health: flowjit images resolved and incomplete are reported" \
	grep -q "incomplete:           2 (bad checksum 1, missing chunks 1" "$tmp/out"
check "ptreplay decode --health: lost records are reported" \
	grep -q "records lost:           3" "$tmp/out"
run decode -i "$tmp/jit.data" --json --flow --calls --profile --health
check "ptreplay decode --json: the output is one valid JSON document" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["health"]["instructions"]==11 and len(d["flow"])==11' "$tmp/out"
run decode -i "$tmp/jit.data"
check "ptreplay decode: no progress bar when stderr is not a terminal" test ! -s "$tmp/err"
run decode -i "$tmp/jit.data" --progress
check "ptreplay decode --progress: a progress bar on stderr, the flow unchanged on stdout" \
	bash -c 'grep -q "100%" "$1" && diff -q - "$2" <<< "$3"' _ "$tmp/err" "$tmp/out" "$expected_jit"
status_is "ptreplay decode: a missing perf.data fails with status 1" 1 decode -i "$tmp/nonexistent.data"
stderr_says "ptreplay decode: a missing perf.data is named on stderr" nonexistent.data
status_is "ptreplay decode: a garbage file fails with status 1" 1 decode -i "$tmp/garbage.pt"
stderr_says "ptreplay decode: a garbage file is explained" "bad magic"
status_is "ptreplay decode: an empty file fails with status 1" 1 decode -i "$tmp/empty.pt"
status_is "ptreplay decode: an unknown option fails with status 1" 1 decode --bogus
status_is "ptreplay decode: a bad -j fails with status 1" 1 decode -i "$tmp/jit.data" -j 0
bad=""
size=$(stat -c %s "$tmp/jit.data")
for ((n = 0; n < size; n += 5)); do
	head -c "$n" "$tmp/jit.data" > "$tmp/cut.data"
	run decode -i "$tmp/cut.data" --health
	((rc <= 2)) || bad+=" cut$n:$rc"
	((n >= 104 && n < size && rc == 0)) && grep -q "instructions decoded:   11" "$tmp/out" && bad+=" cut$n:full"
done
check "ptreplay decode: every truncation of a perf.data fails cleanly (status 1) or decodes part" \
	test -z "$bad"
[[ -n $bad ]] && diag "failures:$bad"
bad=""
RANDOM=11
for ((n = 0; n < 100; n++)); do
	cp "$tmp/jit.data" "$tmp/flip.data"
	for k in 1 2 3 4; do
		printf "\\x$(printf %02x $((RANDOM % 256)))" |
			dd of="$tmp/flip.data" bs=1 seek=$((104 + (RANDOM * 32768 + RANDOM) % (size - 104))) \
			conv=notrunc status=none
	done
	run decode -i "$tmp/flip.data" --health --calls --profile -j 2 \
		--chrome-trace "$tmp/flip.json" --folded "$tmp/flip.folded"
	((rc <= 2)) || bad+=" flip$n:$rc"
	((rc == 1)) || python3 "$here/check-trace.py" chrome "$tmp/flip.json" > "$tmp/ct" ||
		bad+=" flip$n:json($(tail -1 "$tmp/ct"))"
done
check "ptreplay decode: 100 corrupted perf.data files: clear error or decode, no crash or hang, a valid trace file" \
	test -z "$bad"
[[ -n $bad ]] && diag "failures:$bad"

# --- decode: --chrome-trace, --folded (pr_export) ---
# check_trace WHAT KIND FILE ARGS...: test/check-trace.py says it is fine
check_trace() {
	local what=$1; shift
	if python3 "$here/check-trace.py" "$@" > "$tmp/ct" 2>&1; then
		ok "$what"; diag "$(cat "$tmp/ct")"
	else fail "$what" "$(tail -3 "$tmp/ct")"; fi
}
"$mkperf" --calls "$tmp/calls.data"
"$mkperf" --calls-untimed "$tmp/callsu.data"
status_is "ptreplay decode --chrome-trace --folded: the calls scenario exports with status 0" 0 \
	decode -i "$tmp/calls.data" --chrome-trace "$tmp/calls.json" --folded "$tmp/calls.folded"
check "ptreplay decode --chrome-trace: the export alone prints nothing on stdout (no default --flow)" \
	test ! -s "$tmp/out"
check_trace "ptreplay decode --chrome-trace: valid JSON; JIT and BPF names (jit:PID:ADDR, KSYMBOL) nest per thread as called" \
	chrome "$tmp/calls.json" \
	--names jit:100:0x10000,jit:100:0x20000,jit:100:0x28000,bpf_prog_1111_outer,bpf_prog_2222_inner \
	--nest jit:100:0x10000/jit:100:0x28000 --nest jit:100:0x20000/jit:100:0x28000 --nest bpf_prog_1111_outer/bpf_prog_2222_inner
check "ptreplay decode --chrome-trace: threads are named from COMM, time is perf time from TSC" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["traceEvents"]
n={x["tid"]:x["args"]["name"] for x in e if x["ph"]=="M" and x["name"]=="thread_name"}
assert n=={100:"jitter",101:"bpfrunner"}, n
assert d["otherData"]["clock"].startswith("perf time") and d["otherData"]["time_zero_ns"]==10000' "$tmp/calls.json"
check "ptreplay decode --folded: one line per stack with its instructions (21 of 21)" \
	diff -u - "$tmp/calls.folded" <<< "bpf_prog_1111_outer 4
bpf_prog_1111_outer;bpf_prog_2222_inner 2
jit:100:0x10000 3
jit:100:0x10000;jit:100:0x20000 6
jit:100:0x10000;jit:100:0x20000;jit:100:0x28000 6"
run decode -i "$tmp/callsu.data" --perfetto "$tmp/callsu.json"
check "ptreplay decode --perfetto: the same JSON; without two timing packets time is instructions, and it says so" \
	bash -c 'grep -q "\"clock\":\"instructions" "$1" && grep -q "\"ts\":7,\"name\":\"jit:100:0x20000\"" "$1"' _ "$tmp/callsu.json"
status_is "ptreplay decode --chrome-trace: an unwritable file fails with status 1" 1 \
	decode -i "$tmp/calls.data" --chrome-trace "$tmp/no/such/dir.json"
stderr_says "ptreplay decode --chrome-trace: an unwritable file is named on stderr" "no/such/dir.json"
status_is "ptreplay decode --folded: a missing argument fails with status 1" 1 \
	decode -i "$tmp/calls.data" --folded

# --- decode: ptsynth traces of real executions vs ground truth and perf ---
ptsynth_dir=$here/../../ptsynth
ptsynth=$ptsynth_dir/ptsynth
perf=""
for p in "${PERF:-}" perf /usr/bin/perf_6.1; do
	[[ -n $p ]] && "$p" --version > /dev/null 2>&1 && { perf=$p; break; }
done
if [[ ! -x $ptsynth ]] || [[ ! -x $ptsynth_dir/build/tests/loop ]]; then
	make -C "$ptsynth_dir" > "$tmp/ptsynth-build.log" 2>&1
	make -C "$ptsynth_dir" build/tests/loop build/tests/threads \
		build/tests/signal build/tests/indirect >> "$tmp/ptsynth-build.log" 2>&1
fi
if [[ ! -x $ptsynth || ! -x $ptsynth_dir/build/tests/loop ]]; then
	skip "ptreplay decode: ptsynth flows" "ptsynth could not be built"
else
	# gt_flow NAME DATA DESC: ptreplay's flow == ground truth, and == perf's
	gt_flow() {
		local name=$1 data=$2 desc=$3 extra=${4:-}
		run decode -i "$data" $extra
		cp "$tmp/out" "$tmp/$name.pr"
		"$ptsynth" cmpflow -g "$tmp/$name.gt" "$tmp/$name.pr" > "$tmp/cmp" 2>&1
		if [[ $rc == 0 ]] && grep -q ": match" "$tmp/cmp" && ! grep -q MISMATCH "$tmp/cmp"; then
			ok "ptreplay decode: $desc: flow == ground truth instruction for instruction"
		else
			fail "ptreplay decode: $desc: flow == ground truth instruction for instruction" \
				"exit status $rc" "$(tail -3 "$tmp/cmp")"
		fi
		while IFS= read -r l; do diag "$name: $l"; done < <(grep '^tid' "$tmp/cmp")
		if [[ -z $perf ]]; then
			skip "ptreplay decode: $desc: flow == perf script's" "no perf"
			return
		fi
		"$perf" script -i "$data" --itrace=i0ns -F tid,ip > "$tmp/$name.perf" 2> /dev/null
		# perf interleaves threads by time, ptreplay prints per queue:
		# compare per thread (a stable sort by tid keeps each order)
		check "ptreplay decode: $desc: flow == perf script --itrace=i0ns -F tid,ip, line for line per thread" \
			cmp <(sort -s -n -k1,1 "$tmp/$name.pr") <(sort -s -n -k1,1 "$tmp/$name.perf")
	}
	for p in loop indirect signal threads; do
		if ! "$ptsynth" record -o "$tmp/$p.data" -g "$tmp/$p.gt" -- \
			"$ptsynth_dir/build/tests/$p" > /dev/null 2> "$tmp/rec.err"; then
			fail "ptreplay decode: ptsynth records $p" "$(tail -2 "$tmp/rec.err")"
			continue
		fi
		gt_flow $p "$tmp/$p.data" "ptsynth $p program (per-thread AUX)"
	done
	if [[ -f $tmp/loop.gt ]]; then
		"$ptsynth" synth -g "$tmp/loop.gt" -o "$tmp/loopcpu.data" --per-cpu --cpus 2 > /dev/null 2>&1
		cp "$tmp/loop.gt" "$tmp/loopcpu.gt"
		gt_flow loopcpu "$tmp/loopcpu.data" "ptsynth loop program, per-CPU AUX with switch sideband"
		"$ptsynth" synth -g "$tmp/loop.gt" -o "$tmp/loopret.data" --retcomp --long-tnt --psb-period 256 > /dev/null 2>&1
		cp "$tmp/loop.gt" "$tmp/loopret.gt"
		gt_flow loopret "$tmp/loopret.data" "ptsynth loop program, return compression, TNT-64, PSB every 256 bytes"
	fi
	if [[ -f $tmp/loop.gt ]]; then
		"$ptsynth" synth -g "$tmp/loop.gt" -o "$tmp/loopovf.data" --ovf-at 50000 --ovf-len 40 > /dev/null 2>&1
		run decode -i "$tmp/loopovf.data" -e
		cp "$tmp/out" "$tmp/loopovf.pr"
		"$ptsynth" cmpflow -g "$tmp/loop.gt" "$tmp/loopovf.pr" > "$tmp/cmp" 2>&1
		diag "loopovf: $(grep '^tid' "$tmp/cmp")"
		check "ptreplay decode -e: an injected OVF is reported in the flow and decoding resumes exactly after the lost instructions" \
			grep -q "1 overflow(s).*, 50040): match" "$tmp/cmp"
		if [[ -n $perf ]]; then
			"$perf" script -i "$tmp/loopovf.data" --itrace=i0nse -F tid,ip > "$tmp/loopovf.perf" 2> /dev/null
			check "ptreplay decode -e: around an OVF the instructions equal perf script's" \
				cmp <(grep -v error "$tmp/loopovf.pr") <(grep -v error "$tmp/loopovf.perf")
		fi
		run decode -i "$tmp/loopovf.data" --health
		check "ptreplay decode --health: the overflow is counted" grep -q "^overflows:              1$" "$tmp/out"
	fi
	# the block decoder (--calls, --profile, --health) against the
	# instruction flow decoder, and sections against the read callback
	# (--flow), on every ptsynth trace: the same bytes
	bad="" nblk=0
	for p in loop indirect signal threads loopcpu loopret loopovf; do
		[[ -f $tmp/$p.data ]] || continue
		for outs in "--calls --profile --health" "--calls" "--profile"; do
			run decode -i "$tmp/$p.data" $outs
			grep -v "^decode time:" "$tmp/out" > "$tmp/blk.out"
			export PTREPLAY_DECODER=insn
			run decode -i "$tmp/$p.data" $outs
			unset PTREPLAY_DECODER
			grep -v "^decode time:" "$tmp/out" | cmp -s - "$tmp/blk.out" || bad+=" $p($outs)"
			nblk=$((nblk + 1))
		done
		run decode -i "$tmp/$p.data" -e
		cp "$tmp/out" "$tmp/sec.out"
		export PTREPLAY_READ=callback
		run decode -i "$tmp/$p.data" -e
		unset PTREPLAY_READ
		cmp -s "$tmp/out" "$tmp/sec.out" || bad+=" $p(flow)"
		# a piece per PSB: decoded as the whole trace, streamed alike,
		# and with -j 3 (profile and health: pieces in parallel)
		for outs in "-e" "--flow --calls --profile --health" "--calls --json" \
			"--profile --health -j 3" "--flow --calls -j 2"; do
			run decode -i "$tmp/$p.data" ${outs% -j *}
			grep -v "^decode time:" "$tmp/out" | sed 's/"decode_seconds":[0-9.]*//' > "$tmp/whole.out"
			export PTREPLAY_PIECE=1
			run decode -i "$tmp/$p.data" $outs
			unset PTREPLAY_PIECE
			grep -v "^decode time:" "$tmp/out" | sed 's/"decode_seconds":[0-9.]*//' |
				cmp -s - "$tmp/whole.out" || bad+=" $p(pieces $outs)"
		done
	done
	check "ptreplay decode: block decoder == instruction flow decoder (calls, profile, health; $nblk runs), sections == read callback (flow), a piece per PSB (also decoded in parallel, -j) == the whole trace, on the ptsynth traces" \
		test -z "$bad" -a "$nblk" -ge 15
	[[ -n $bad ]] && diag "differ:$bad"
	if [[ -f $tmp/threads.data ]]; then
		run decode -i "$tmp/threads.data" -j 2
		check "ptreplay decode: -j 2 prints the same flow as -j 1 (3 threads)" \
			cmp "$tmp/out" "$tmp/threads.pr"
		run decode -i "$tmp/loop.data" --profile --health
		check "ptreplay decode --profile: functions are named from ELF symbols (collatz, main)" \
			grep -qE "^ +[0-9]+ +[0-9.]+  collatz " "$tmp/out"
		check "ptreplay decode --health: a clean ptsynth trace has no decode errors" \
			grep -q "^decode errors:          0$" "$tmp/out"
		run decode -i "$tmp/loop.data" --calls
		check "ptreplay decode --calls: calls and returns are named (main -> collatz)" \
			grep -q "call   main+0x[0-9a-f]* -> collatz+0x0" "$tmp/out"
	fi
	# exports of real executions: valid, nested, every instruction; the
	# threads sharing one CPU's queue (switched in and out)
	[[ -f $tmp/threads.gt ]] && "$ptsynth" synth -g "$tmp/threads.gt" \
		-o "$tmp/threadscpu.data" --per-cpu --cpus 1 > /dev/null 2>&1
	# and with interrupts and CYC (time changes inside blocks)
	[[ -f $tmp/threads.gt ]] && "$ptsynth" synth -g "$tmp/threads.gt" \
		-o "$tmp/threadsirq.data" --irq-every 300 --cyc > /dev/null 2>&1
	for p in loop indirect signal threads threadscpu threadsirq loopcpu loopret loopovf; do
		[[ -f $tmp/$p.data ]] || continue
		run decode -i "$tmp/$p.data" --health -j 2 --chrome-trace "$tmp/$p.json" \
			--folded "$tmp/$p.folded"
		insns=$(sed -n 's/^instructions decoded: *//p' "$tmp/out")
		check_trace "ptreplay decode --chrome-trace: ptsynth $p: valid JSON, slices nest per thread" \
			chrome "$tmp/$p.json"
		check_trace "ptreplay decode --folded: ptsynth $p: well-formed, the counts add up to the $insns instructions decoded" \
			folded "$tmp/$p.folded" --total "${insns:-0}"
	done
	# the exports of the block decoder against the instruction flow
	# decoder's (the same calls, returns and instructions per stack), and
	# of a piece per PSB against the whole trace; times may differ (README,
	# "Known limitations": the block decoder, pieces)
	samev() {
		python3 -c 'import json,sys
a,b=(json.load(open(f)) for f in sys.argv[1:])
t=("ts","time_zero_ns","ns_per_instruction")
s=lambda d:[{k:v for k,v in e.items() if k not in t} for e in d["traceEvents"]+[d["otherData"]]]
n=sum(x!=y for x,y in zip(a["traceEvents"],b["traceEvents"]))
print(n, "of", len(a["traceEvents"]))
sys.exit(s(a)!=s(b))' "$@"
	}
	# a difference is kept for a look afterwards (the traces come from
	# a fresh execution each run): the trace and both exports, in
	# PTREPLAY_TEST_KEEP (default /tmp), and the first event that differs
	keep_differ() {
		local d=${PTREPLAY_TEST_KEEP:-/tmp}/ptreplay-differ-$1-$$
		mkdir -p "$d" && cp "$tmp/$1.data" "$tmp/$2" "$tmp/$3" "$d/" &&
			diag "kept in $d"
		diag "$(python3 -c 'import json,sys
a,b=(json.load(open(f))["traceEvents"] for f in sys.argv[1:])
t=("ts",)
for i,(x,y) in enumerate(zip(a,b)):
    if {k:v for k,v in x.items() if k not in t}!={k:v for k,v in y.items() if k not in t}:
        print("event", i, "of", len(a), "/", len(b), ":", x, "<>", y); break
else:
    print("events equal for", min(len(a),len(b)), "then", len(a), "/", len(b))' \
			"$tmp/$2" "$tmp/$3" 2>&1 | head -c 2000)"
	}
	bad="" nexp=0 nts=""
	for p in loop indirect signal threads threadscpu threadsirq loopcpu loopret loopovf; do
		[[ -f $tmp/$p.folded ]] || continue
		export PTREPLAY_DECODER=insn
		run decode -i "$tmp/$p.data" --health -j 2 --chrome-trace "$tmp/$p.insn.json" \
			--folded "$tmp/$p.insn.folded"
		unset PTREPLAY_DECODER
		cmp -s "$tmp/$p.folded" "$tmp/$p.insn.folded" || bad+=" $p(folded)"
		samev "$tmp/$p.json" "$tmp/$p.insn.json" > "$tmp/samev" || {
			bad+=" $p(chrome)"
			keep_differ "$p" "$p.json" "$p.insn.json"
		}
		nts+=" $p:$(cat "$tmp/samev")"
		export PTREPLAY_PIECE=1
		run decode -i "$tmp/$p.data" -j 2 --chrome-trace "$tmp/$p.pc.json" \
			--folded "$tmp/$p.pc.folded"
		unset PTREPLAY_PIECE
		cmp -s "$tmp/$p.folded" "$tmp/$p.pc.folded" || bad+=" $p(pieces folded)"
		samev "$tmp/$p.json" "$tmp/$p.pc.json" > /dev/null || {
			bad+=" $p(pieces chrome)"
			keep_differ "$p" "$p.json" "$p.pc.json"
		}
		nexp=$((nexp + 1))
	done
	check "ptreplay decode --folded, --chrome-trace: the block decoder's equal the instruction flow decoder's (PTREPLAY_DECODER=insn; the same stacks, counts and events), and a piece per PSB's (-j 2) the whole trace's, on $nexp ptsynth traces" \
		test -z "$bad" -a "$nexp" -ge 8
	diag "chrome events at another time, block against insn decoder:$nts"
	[[ -n $bad ]] && diag "differ:$bad"
	if [[ -f $tmp/loop.json ]]; then
		check_trace "ptreplay decode --chrome-trace: ptsynth loop: collatz slices lie within main" \
			chrome "$tmp/loop.json" --nest main/collatz
		check "ptreplay decode --folded: ptsynth loop: collatz is called from main" \
			grep -qE "(^|;)main;collatz [0-9]+$" "$tmp/loop.folded"
	fi
	[[ -f $tmp/loopovf.json ]] && check "ptreplay decode --chrome-trace: the injected OVF is an instant event" \
		grep -q '"name":"trace error","args":{"error":"overflow"}' "$tmp/loopovf.json"
	[[ -f $tmp/threads.json ]] && check "ptreplay decode --chrome-trace: ptsynth threads: 3 threads, named" \
		python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]
assert len({x["tid"] for x in e if x["ph"]=="B"})==3
assert len([x for x in e if x["ph"]=="M" and x["name"]=="thread_name"])==3' "$tmp/threads.json"
fi

# --- names: a JIT naming its code in a perf map (test/prog-jitmap.c) ---
# ptsynth on this host writes no flowjit records: test/gtflowjit adds the
# images a flowjit kernel would (the snapshot at mprotect(PROT_EXEC), and
# the in-place rewrite found in the executed bytes), timed by the tracer's
# TSC with MTC (every 2^9 crystal ticks) so that the decoder's time tells
# the revisions apart.
if [[ -x $ptsynth && -x $bin/prog-jitmap && -x $bin/gtflowjit ]]; then
	mkdir -p "$tmp/maps"
	if "$ptsynth" record -o "$tmp/jm.raw" -g "$tmp/jm.gt" -- "$bin/prog-jitmap" "$tmp/maps" > /dev/null 2> "$tmp/rec.err" &&
	   "$ptsynth" synth -g "$tmp/jm.gt" -o "$tmp/jm.tsc" --timing=tsc --mtc=9 > /dev/null 2>&1 &&
	   "$bin/gtflowjit" "$tmp/jm.gt" "$tmp/jm.tsc" "$tmp/jm.data" > "$tmp/gtfj.out" 2>&1; then
		ok "ptreplay names: ptsynth records a JIT that writes its perf map, with flowjit images of its page"
		diag "names: $(cat "$tmp/gtfj.out")"
		run decode -i "$tmp/jm.data" --flow
		"$ptsynth" cmpflow -g "$tmp/jm.gt" "$tmp/out" > "$tmp/cmp" 2>&1
		check "ptreplay names: the JIT's flow equals the ground truth (both revisions of its page)" \
			grep -q ": match$" "$tmp/cmp"
		status_is "ptreplay names: --calls with the JIT's perf map decodes with status 0" 0 \
			decode -i "$tmp/jm.data" --calls --perf-map-dir "$tmp/maps"
		got=$(grep -o -- "-> jit_[a-z]*+0x[0-9a-f]*\( \[stale\]\)\?\|return jit_[a-z]*+0x[0-9a-f]*\( \[stale\]\)\?" "$tmp/out" | tr '\n' '|')
		want="-> jit_one+0x0|return jit_one+0x5|-> jit_two+0x0|return jit_two+0x5|-> jit_one+0x0 [stale]|return jit_one+0x5 [stale]|"
		if [[ $got == "$want" ]]; then
			ok "ptreplay names: calls into JIT code are named from the perf map; the rewritten function is marked [stale]"
		else
			fail "ptreplay names: calls into JIT code are named from the perf map; the rewritten function is marked [stale]" \
				"got: $got" "want: $want"
		fi
		# the jitdump: TSC times converted as the trace's pick the load
		# live at each call; bytes differing from flowjit's are stale
		jd=$(echo "$tmp"/maps/jit-*.dump)
		status_is "ptreplay names: --calls with the JIT's jitdump decodes with status 0" 0 \
			decode -i "$tmp/jm.data" --calls --perf-map-dir '' --jitdump "$jd"
		got=$(grep -o -- "-> jit_[a-z_0-9]*+0x[0-9a-f]*\( \[stale\]\)\?" "$tmp/out" | tr '\n' '|')
		want="-> jit_one+0x0|-> jit_two+0x0|-> jit_one_v2+0x0|"
		if [[ $got == "$want" ]]; then
			ok "ptreplay names: the jitdump names each call by the load live at its time (jit_one, then jit_one_v2)"
		else
			fail "ptreplay names: the jitdump names each call by the load live at its time (jit_one, then jit_one_v2)" \
				"got: $got" "want: $want"
		fi
		cp "$jd" "$tmp/tampered.dump"
		printf '\x07' | dd of="$tmp/tampered.dump" bs=1 seek=$(( $(stat -c %s "$jd") - 5 )) conv=notrunc 2> /dev/null
		run decode -i "$tmp/jm.data" --calls --perf-map-dir '' --jitdump "$tmp/tampered.dump"
		check "ptreplay names: a jitdump load whose bytes differ from flowjit's revision is marked [stale]" \
			bash -c "grep -q -- '-> jit_one_v2+0x0 \[stale\]' '$tmp/out' && grep -q -- '-> jit_one+0x0\$' '$tmp/out'"
		run decode -i "$tmp/jm.data" --profile --perf-map-dir "$tmp/maps"
		check "ptreplay names: --profile counts jit_one, jit_two and the stale jit_one apart" \
			bash -c "grep -qE '^ +2 .* jit_one  ' '$tmp/out' && grep -qE '^ +2 .* jit_two  ' '$tmp/out' && grep -qE '^ +2 .* jit_one \[stale\] ' '$tmp/out'"
		run decode -i "$tmp/jm.data" --calls --perf-map-dir ''
		check "ptreplay names: without a perf map JIT code is jit:<pid>:<page>" \
			bash -c "grep -q -- '-> jit:[0-9]*:0x[0-9a-f]*+0x10\$' '$tmp/out' && ! grep -q jit_one '$tmp/out'"
		run decode -i "$tmp/jm.data" --calls --json --perf-map-dir "$tmp/maps"
		check "ptreplay names: --json carries the names" \
			python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(c['to']=='jit_one+0x0 [stale]' for c in d['calls'])" "$tmp/out"
		# a damaged map: counted and warned about, the good lines still name
		mkdir -p "$tmp/badmaps"
		{ cat "$tmp"/maps/perf-*.map; printf 'zzzz 10 bad\n1000 0 empty\nffffffffffffff00 1000 wraps\n\x00\x01\x02\n1234 10 cut-off'; } \
			> "$tmp/badmaps/$(basename "$tmp"/maps/perf-*.map)"
		status_is "ptreplay names: a malformed perf map is no error (status 0)" 0 \
			decode -i "$tmp/jm.data" --calls --perf-map-dir "$tmp/badmaps"
		stderr_says "ptreplay names: a malformed perf map is reported with counts" \
			"perf-[0-9]*.map: 2 entries kept; dropped 3 malformed, 1 truncated, 1 larger than"
		check "ptreplay names: the good lines of a malformed perf map still name the code" \
			grep -q -- "-> jit_two+0x0" "$tmp/out"
		head -c 3000 /dev/urandom > "$tmp/garbage.dump"
		status_is "ptreplay names: a garbage --jitdump is no error (status 0)" 0 \
			decode -i "$tmp/jm.data" --calls --jitdump "$tmp/garbage.dump" --perf-map-dir ''
		stderr_says "ptreplay names: a garbage --jitdump is refused with the reason" \
			"garbage.dump: not a jitdump (bad magic): not used"
		status_is "ptreplay names: a missing --jitdump is no error (status 0)" 0 \
			decode -i "$tmp/jm.data" --calls --jitdump "$tmp/none.dump"
		stderr_says "ptreplay names: a missing --jitdump is reported" "none.dump: No such file"
		run decode -i "$tmp/jm.data" --calls --lines
		check "ptreplay names: --lines adds file:line to names of a -g program" \
			grep -q "call   main+0x[0-9a-f]* (prog-jitmap.c:[0-9]*) -> " "$tmp/out"
		run decode -i "$tmp/jm.data" --profile --lines
		check "ptreplay names: --lines names profile functions with where they are declared" \
			grep -qE "^ +[0-9]+ +[0-9.]+  prog_outer \(prog-jitmap.c:28\) " "$tmp/out"
	else
		fail "ptreplay names: ptsynth records a JIT that writes its perf map, with flowjit images of its page" \
			"$(tail -2 "$tmp/rec.err")" "$(cat "$tmp/gtfj.out" 2>/dev/null)"
	fi
else
	skip "ptreplay names: a JIT writing its perf map under ptsynth" "ptsynth or test programs not built"
fi

# --- libFuzzer: perf.data reader, loader and decode loop ---
fuzz=${FUZZ_BIN:-}
if [[ -z $fuzz || ! -x $fuzz ]]; then
	skip "ptreplay fuzz: 20 s of libFuzzer on the perf.data reader and decode loop" "no clang (apt-get install clang)"
else
	mkdir -p "$tmp/corpus"
	cp "$tmp/jit.data" "$tmp/corpus/"
	[[ -f $tmp/loopcpu.data ]] && cp "$tmp/loopcpu.data" "$tmp/corpus/"
	# seeds of the perf map and jitdump parsers
	cp "$tmp"/maps/perf-*.map "$tmp"/maps/jit-*.dump "$tmp/corpus/" 2> /dev/null
	python3 - "$tmp/corpus/seed.dump" <<'PY'
import struct, sys
def rec(kind, t, body):
    return struct.pack('<IIQ', kind, 16 + len(body), t) + body
def load(t, addr, name, code, idx):
    return rec(0, t, struct.pack('<IIQQQQ', 7, 7, addr, addr, len(code), idx) + name + b'\0' + code)
d = struct.pack('<IIIIIIQQ', 0x4A695444, 1, 40, 62, 0, 7, 0, 0)
d += load(100, 0x1000, b'f', bytes([0xb8, 1, 0, 0, 0, 0xc3]), 1)
d += load(300, 0x1010, b'g', bytes([0xb8, 2, 0, 0, 0, 0xc3]), 2)
d += rec(1, 400, struct.pack('<IIQQQQQ', 7, 7, 0x1020, 0x1010, 0x1020, 6, 2))
d += rec(3, 500, b'')
open(sys.argv[1], 'wb').write(d)
PY
	timeout 60 "$fuzz" -seed=1 -max_total_time="${FUZZ_SECONDS:-20}" -timeout=5 \
		-rss_limit_mb=2048 -print_final_stats=1 "$tmp/corpus" > "$tmp/fuzz.log" 2>&1
	frc=$?
	diag "fuzz: $(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$tmp/fuzz.log")"
	if ((frc == 0)); then
		ok "ptreplay fuzz: ${FUZZ_SECONDS:-20} s of libFuzzer (ASan+UBSan) on the perf.data reader and decode loop: no crash, leak or hang"
	else
		fail "ptreplay fuzz: ${FUZZ_SECONDS:-20} s of libFuzzer (ASan+UBSan) on the perf.data reader and decode loop: no crash, leak or hang" \
			"exit status $frc" "$(grep -m3 -E 'ERROR|SUMMARY|crash-' "$tmp/fuzz.log")"
	fi
fi

# --- viewer: the exports in speedscope in headless Chromium (SKIP without
# node, npm or chromium) ---
while IFS= read -r l; do lines+=("$l"); done < <(PTREPLAY=$ptreplay TEST_BIN_DIR=$bin \
	bash "$here/viewer-test.sh" --lines 2>&1)

# --- conformance: libipt's ptt cases, compared with ptxed's output ---
if [[ ! -x $ptt/run ]]; then
	# the conformance set is part of the test contract: missing is a failure
	for dec in --insn-decoder --block-decoder; do
		check "ptreplay raw $dec: conformance with ptxed ($ptt/run not found; set PTT_DIR)" false
	done
else
	known=$here/ptt-known-failures.txt
	for dec in --insn-decoder --block-decoder; do
		"$ptt/run" -- "$ptreplay" raw $dec > "$tmp/ptt$dec" 2>&1
		tally=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/ptt$dec")
		passed=${tally%% passed*}
		diag "libipt-ptt $dec: $tally"
		check "ptreplay raw $dec: passes at least the 95 libipt ptt cases that ptxed on libipt 2.0.5 passes" \
			test "${passed:-0}" -ge 95
		unexpected=$(sed -n 's/^FAIL \([^:]*\):.*/\1/p' "$tmp/ptt$dec" |
			grep -vxF -f <(sed 's/[[:space:]].*//; /^#/d; /^$/d' "$known"))
		check "ptreplay raw $dec: every ptt case not listed as a known libipt 2.0.5 limitation passes" \
			test -z "$unexpected"
		[[ -n $unexpected ]] && grep -F "$unexpected" "$tmp/ptt$dec" |
			while IFS= read -r l; do lines+=("# $l"); done
		for l in $unexpected; do diag "unexpected failure: $l"; done
	done
fi

# --- report ---
n=0 failed=0
echo "TAP version 13"
echo "1..$(printf '%s\n' "${lines[@]}" | grep -cE '^(not )?ok ')"
for l in "${lines[@]}"; do
	case $l in
	"ok - "*) n=$((n + 1)); echo "ok $n ${l#ok - }" ;;
	"not ok - "*) n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n ${l#not ok - }" ;;
	*) echo "$l" ;;
	esac
done
((failed == 0))
