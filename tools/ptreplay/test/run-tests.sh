#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run all ptreplay tests and print kselftest-style TAP on stdout:
#   unit tests (TEST_BIN_DIR/test-*), CLI robustness tests of $PTREPLAY,
#   and the libipt ptt conformance run (PTT_DIR, skipped if absent).
# Exits non-zero if any test failed.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${TEST_BIN_DIR:?}
ptreplay=${PTREPLAY:?}
ptt=${PTT_DIR:-}
if [[ -z $ptt ]]; then
	for d in "$here/../../../../shared/peer/libipt-ptt" \
		 /work/shared/peer/libipt-ptt; do
		[[ -x $d/run ]] && { ptt=$d; break; }
	done
fi

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
for t in "$bin"/test-*; do
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

# --- conformance: libipt's ptt cases, compared with ptxed's output ---
if [[ -z $ptt ]]; then
	skip "ptreplay raw --insn-decoder: conformance with ptxed" "no libipt-ptt cases (set PTT_DIR)"
	skip "ptreplay raw --block-decoder: conformance with ptxed" "no libipt-ptt cases (set PTT_DIR)"
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
