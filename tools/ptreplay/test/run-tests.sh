#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run all ptreplay tests and print kselftest-style TAP on stdout:
#   unit tests (TEST_BIN_DIR/test-*), CLI robustness tests of $PTREPLAY,
#   and the libipt ptt conformance run (PTT_DIR; by default
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
	run decode -i "$tmp/flip.data" --health --calls --profile -j 2
	((rc <= 2)) || bad+=" flip$n:$rc"
done
check "ptreplay decode: 100 corrupted perf.data files: clear error or decode, no crash or hang" \
	test -z "$bad"
[[ -n $bad ]] && diag "failures:$bad"

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
fi

# --- libFuzzer: perf.data reader, loader and decode loop ---
fuzz=${FUZZ_BIN:-}
if [[ -z $fuzz || ! -x $fuzz ]]; then
	skip "ptreplay fuzz: 20 s of libFuzzer on the perf.data reader and decode loop" "no clang (apt-get install clang)"
else
	mkdir -p "$tmp/corpus"
	cp "$tmp/jit.data" "$tmp/corpus/"
	[[ -f $tmp/loopcpu.data ]] && cp "$tmp/loopcpu.data" "$tmp/corpus/"
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
