#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ptksynth gt on a small hand-written QEMU log (tests/kgt/qemu.log, in
# the format of QEMU 7.2's -d in_asm,exec,nochain) with marks at TSC 1000
# and 2000, filter [0xffffffff81000000, 0xffffffff81000100). What the log
# contains and what the ground truth must be (tests/kgt/expected.txt,
# "ptksynth dump" lines: insn TID TSC IP BYTES / exit TID TSC TARGET):
#
# - a 10-byte movabs split over two lines by QEMU (continuation line);
# - a block run cancelled by "Stopped execution of TB chain before",
#   then an interrupt (-d int) at its pc: an irq record before it;
# - rep stos run as three blocks: one instruction;
# - a block of CPU 1 inside the filter: not the marks' CPU, ignored;
# - a direct call out of the filter to an unlogged function: an exit
#   with the call's target, then the return site re-enters;
# - a return to the logged caller outside the filter: an exit there;
# - 12 logged steps between the marks: step i has TSC 1000 + 1000 i / 11.
#
# Then the failures kgt must report: a return inside the filter to an
# address no logged call pushed, and a mark missing from the log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pk=$here/../ptksynth
d=$here/kgt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=0xffffffff81000000..0xffffffff81000100

if "$pk" gt -l "$d/qemu.log" -m "$d/marks.txt" -f "$f" -o "$tmp/t.gt" 2> "$tmp/err" &&
   "$pk" dump -g "$tmp/t.gt" > "$tmp/t.txt" && cmp -s "$tmp/t.txt" "$d/expected.txt"; then
	echo "ok - ptksynth gt: instructions, exits and interpolated TSCs of a hand-written QEMU log"
else
	sed 's/^/# /' "$tmp/err"
	diff "$d/expected.txt" "$tmp/t.txt" 2>&1 | sed 's/^/# /'
	echo "not ok - ptksynth gt: instructions, exits and interpolated TSCs of a hand-written QEMU log"
fi
if grep -q "1 not started, 1 of them in the filter between the marks.*2 rep iterations folded, 2 in-filter steps of other CPUs, 1 interrupts in the filter, 0 exceptions in the filter, 0 errors" "$tmp/err"; then
	echo "ok - ptksynth gt: counts the cancelled block run, the interrupt, the folded rep iterations, the other CPU's steps"
else
	sed 's/^/# /' "$tmp/err"
	echo "not ok - ptksynth gt: counts the cancelled block run, the interrupt, the folded rep iterations, the other CPU's steps"
fi

# the ret at ...11 followed by an instruction inside the filter
sed 's/^0xffffffff81000205:  90 /0xffffffff81000080:  90 /;s#/ffffffff81000205/#/ffffffff81000080/#' \
	"$d/qemu.log" > "$tmp/bad.log"
if ! "$pk" gt -l "$tmp/bad.log" -m "$d/marks.txt" -f "$f" -o "$tmp/b.gt" 2> "$tmp/err" &&
   grep -q "return to an address no logged call pushed" "$tmp/err"; then
	echo "ok - ptksynth gt: fails on a return inside the filter that no logged call explains"
else
	sed 's/^/# /' "$tmp/err"
	echo "not ok - ptksynth gt: fails on a return inside the filter that no logged call explains"
fi

# a third mark printed that the log does not have
{ cat "$d/marks.txt"; echo "mark 3 3000"; } > "$tmp/marks3.txt"
if ! "$pk" gt -l "$d/qemu.log" -m "$tmp/marks3.txt" -f "$f" -o "$tmp/c.gt" 2> "$tmp/err" &&
   grep -q "the log has 2 marks" "$tmp/err"; then
	echo "ok - ptksynth gt: fails when the log lacks a printed mark"
else
	sed 's/^/# /' "$tmp/err"
	echo "not ok - ptksynth gt: fails when the log lacks a printed mark"
fi

# ptksynth synth on the sideband of a perf newer than the one ptsynth is
# built with: perf_event_attr of 136 bytes (6.12's, with config3). Every
# attr of the file it writes, its own intel_pt attr too, must say the
# file's attr size in its size field: perf reads each attr by that field
# and the attr's ids right after it.
python3 - "$tmp/sb136.data" <<'PY'
import struct, sys
ASZ = 136                                  # perf_event_attr, 6.12
ST = 0x1 | 0x2 | 0x4 | 0x80 | 0x10000      # IP TID TIME CPU IDENTIFIER
def attr(ident_off):
    a = struct.pack('<IIQQQQQ', 1, ASZ, 9, 1, ST, 0, (1 << 9) | (1 << 18))
    a += b'\0' * (ASZ - len(a))
    return a + struct.pack('<QQ', ident_off, 8)
hdr = 104
attrs_off = hdr
ids_off = attrs_off + 2 * (ASZ + 16)
data_off = ids_off + 16
comm = struct.pack('<II', 7, 7) + b'kscen\0\0\0'
comm += struct.pack('<IIQII', 7, 7, 1500, 0, 0) + struct.pack('<Q', 1)
rec = struct.pack('<IHH', 3, 0, 8 + len(comm)) + comm
f = open(sys.argv[1], 'wb')
f.write(b'PERFILE2' + struct.pack('<QQ', hdr, ASZ + 16))
f.write(struct.pack('<QQQQQQ', attrs_off, 2 * (ASZ + 16), data_off, len(rec), 0, 0))
f.write(b'\0' * 32)
f.write(attr(ids_off) + attr(ids_off + 8))
f.write(struct.pack('<QQ', 1, 2))
f.write(rec)
PY
check_attrs() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
asz, off, size = struct.unpack_from('<QQQ', b, 16)
bad = [i for i in range(size // asz)
       if struct.unpack_from('<I', b, off + i * asz + 4)[0] != asz - 16]
print('attr size', asz - 16, 'attrs', size // asz, 'wrong size field', bad)
sys.exit(1 if bad or size // asz != 3 else 0)
PY
}
if "$pk" synth -g "$tmp/t.gt" -s "$tmp/sb136.data" -f "$f" -o "$tmp/k136.data" 2> "$tmp/err" &&
   check_attrs "$tmp/k136.data" > "$tmp/attrs"; then
	echo "ok - ptksynth synth: on a sideband with 136-byte attrs (6.12's perf), every attr it writes says 136 ($(cat "$tmp/attrs"))"
else
	sed 's/^/# /' "$tmp/err" "$tmp/attrs"
	echo "not ok - ptksynth synth: on a sideband with 136-byte attrs (6.12's perf), every attr it writes says 136"
fi
