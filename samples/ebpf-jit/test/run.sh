#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make check: the unit tests, then every scenario in every mode through the
# ebpf-jit command, each log checked by test/logcheck. TAP on stdout.
cd "$(dirname "$0")/.." || exit 1
out=test/out
rm -rf "$out"
mkdir -p "$out"
n=0
failed=0

result() {	# result STATUS WHAT...
	st=$1
	shift
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $n $*"
	else
		echo "not ok $n $*"
		failed=$((failed + 1))
	fi
}

# unit tests, renumbered into this run
./test/unit > "$out/unit.txt" 2>&1
urc=$?
while IFS= read -r line; do
	case $line in
	"ok "*|"not ok "*)
		st=0
		case $line in "not ok "*) st=1 ;; esac
		result $st "$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //')"
		;;
	"#"*) echo "$line" ;;
	esac
done < "$out/unit.txt"
[ $urc -eq 0 ] || [ $failed -gt 0 ] || result 1 "unit tests exited with status $urc"

# scen NAME LOGCHECK-OPTS -- EBPF-JIT-ARGS: run, then check the log
scen() {
	name=$1
	shift
	chk=
	while [ "$1" != "--" ]; do
		chk="$chk $1"
		shift
	done
	shift
	log=$out/$name.log
	if ! ./ebpf-jit --log "$log" "$@" > "$out/$name.txt" 2>&1; then
		sed 's/^/# /' "$out/$name.txt" | tail -n 20
		return 1
	fi
	# shellcheck disable=SC2086
	./test/logcheck $chk "$log" > "$out/$name.chk" || {
		cat "$out/$name.chk"
		return 1
	}
	! grep -q MISMATCH "$out/$name.txt"
}

for m in wx rwx mmap-exec memfd-dual; do
	scen "$m-compile-run" --count 1 -- --mode $m --prog fib --args 10 compile-run &&
		grep -q 'result: r0 = 55 ' "$out/$m-compile-run.txt"
	result $? "$m compile-run: fib(10) = 55, one revision logged"
	scen "$m-rewrite" --count 5 --same-addr --differ -- --mode $m rewrite
	result $? "$m rewrite: 5 revisions of other bytes and lengths at one address, all right"
	scen "$m-span" --count 2 --same-addr --differ --pages 2 -- --mode $m span &&
		grep -q 'inside insn' "$out/$m-span.txt"
	result $? "$m span: 2 revisions across a page boundary (inside an insn), all right"
	scen "$m-free-reuse" --count 5 --same-addr --differ -- --mode $m free-reuse
	result $? "$m free-reuse: 5 programs freed and placed again at one address"
	scen "$m-threads" --count 5 --same-addr --differ -- --mode $m --threads 2 \
		--runs 3000 threads &&
		! grep -v ' 0 mismatches' "$out/$m-threads.txt" | grep -q mismatches
	result $? "$m threads: 2 threads run 5 revisions rewritten between barriers, no mismatch"
	if [ $m != wx ]; then
		scen "$m-atomic" --count 9 --same-addr --differ -- --mode $m --sync atomic \
			threads && grep -q ', 0 other$' "$out/$m-atomic.txt"
		result $? "$m threads --sync atomic: 9 revisions under running threads, logged"
	fi
	scen "$m-loop42" --count 1 -- --mode $m loop42 &&
		grep -q '41 not taken, 1 taken' "$out/$m-loop42.txt"
	result $? "$m loop42: r0 = 42, loop-exit jae 41 times not taken and once taken"
	scen "$m-static-key" --count 5 --same-addr --differ -- --mode $m --count 2 static-key
	result $? "$m static-key: nop5 -> jmp -> nop5 -> jmp -> nop5, each executed, r0 1/2"
	scen "$m-sites" --count 1000 --pages 1 -- --mode $m --runs 2 sites 1000
	result $? "$m sites 1000: one page each, run twice, 1000 revisions logged"
done
for m in wx memfd-dual; do
	scen "$m-sites-each" --count 500 --pages 1 -- --mode $m --map each sites 500
	result $? "$m --map each sites 500: a mapping per site"
	scen "$m-rewrite-each" --count 3 --same-addr --differ -- --mode $m --map each \
		--count 2 rewrite
	result $? "$m --map each rewrite: 3 revisions in the object's own mapping"
done
scen sites-60000 --count 60000 --pages 1 -- --mode wx sites 60000 &&
	grep -q '^sites: 60000 x ' "$out/sites-60000.txt"
result $? "wx sites 60000: 60000 one-page sites compiled, run and logged"

# bad input: a clear message and exit status 1 or 2, never a crash
bad() {		# bad STATUS PATTERN ARGS...
	want=$1
	pat=$2
	shift 2
	./ebpf-jit "$@" > "$out/bad.txt" 2>&1
	rc=$?
	[ $rc -eq "$want" ] && grep -q "$pat" "$out/bad.txt" && return 0
	echo "# ebpf-jit $*: status $rc"
	sed 's/^/# /' "$out/bad.txt"
	return 1
}
bad 1 'insn 0 (opcode 0xff)' --hex ff00000000000000 compile-run
result $? "bad bytecode: unknown opcode 0xff is reported, status 1"
bad 1 'falls off the end' --hex b70000002a000000 compile-run
result $? "bad bytecode: a program without exit is reported, status 1"
bad 1 'jump target out of the program' --hex "0500ff7f00000000 9500000000000000" compile-run
result $? "bad bytecode: a jump out of the program is reported, status 1"
bad 2 'odd number of digits' --hex 123 compile-run
result $? "bad input: an odd number of hex digits is reported, status 2"
head -c 12 /dev/zero > "$out/short.bin"
bad 2 'insns of 8 bytes' --file "$out/short.bin" compile-run
result $? "bad input: a 12-byte bytecode file is reported, status 2"
bad 2 'unknown --mode' --mode bogus loop42
result $? "bad input: an unknown mode is reported, status 2"
bad 1 'not with --mode wx' --mode wx --sync atomic threads
result $? "bad input: --sync atomic with --mode wx is refused, status 1"
bad 2 'unknown scenario' nosuch
result $? "bad input: an unknown scenario is reported, status 2"
printf '\267\000\000\000\052\000\000\000\225\000\000\000\000\000\000\000' > "$out/p42.bin"
bad 0 'result: r0 = 42 ' --file "$out/p42.bin" compile-run &&
	bad 0 'result: r0 = 42 ' --hex 'b70000002a000000 9500000000000000' compile-run
result $? "bytecode from --file and --hex: mov r0, 42; exit gives 42"

echo "1..$n"
echo "# ebpf-jit: $((n - failed)) of $n passed"
[ $failed -eq 0 ]
