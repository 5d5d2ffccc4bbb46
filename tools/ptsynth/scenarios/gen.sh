#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate ptsynth's scenario corpus from source (make -C tools/ptsynth
# scenarios): needs the flowjit kernel, perf and guest image of
# FLOWJIT_BUILD (make guest; scripts/perf-build).
#
#   gen.sh [NAME...]      default: every scenario of scenarios/list
#   FLOWJIT_SCEN_DIR=DIR  write the corpus there instead of $B/scenarios
#   FLOWJIT_BASE=6.12     the 6.12 series' kernel and guest image
#                         ($B/linux-6.12, $B/initramfs-6.12*), into
#                         $B/scenarios-6.12
#
# The guest runs each scenario (guest-run.sh); the host merges the real
# perf --flowjit sideband with the PT trace synthesised from the ground
# truth:
#   $B/scenarios/NAME/gt               ground truth (tools/ptsynth/gt.h)
#   $B/scenarios/NAME/sideband.data    perf record --flowjit -e dummy, as recorded
#   $B/scenarios/NAME/perf.data        intel_pt + that sideband (flowjit records)
#   $B/scenarios/NAME/perf-noflowjit.data  the same without flowjit records
#   $B/scenarios/NAME/{out,err,time}   its output, the tracer's, timing
# Files named in the sideband (/samples/ebpf-jit; LuaJIT and its shared
# libraries) are read from $B/scenarios/root (a copy of the guest's),
# written into perf.data as absolute paths.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
B=${FLOWJIT_BUILD:-$top/build}
die() { echo "scenarios: $*" >&2; exit 1; }
case ${FLOWJIT_BASE:-6.1} in
6.1) sfx= ;;
6.12) sfx=-6.12 ;;
*) die "FLOWJIT_BASE is 6.1 or 6.12, not '$FLOWJIT_BASE'" ;;
esac
# FLOWJIT_SCEN_DIR: another corpus directory (make demo's)
S=${FLOWJIT_SCEN_DIR:-$B/scenarios$sfx}
kernel=$B/linux$sfx/arch/x86/boot/bzImage img=$B/initramfs$sfx

[[ -f $kernel && -f $img.cpio.gz ]] ||
	die "no flowjit kernel and guest image in $B (make guest)"
[[ -d $img/extra ]] || die "no perf in the guest image (scripts/perf-build; make guest)"
make -s -C "$here/.." ptsynth
mkdir -p "$S"

# scenarios asked for
list=$S/list
if (($#)); then
	for n in "$@"; do
		grep -E "^$n[[:space:]]" "$here/list" || die "no scenario $n"
	done > "$list"
else
	grep -v '^#' "$here/list" > "$list"
fi

# payload: ptsynth with its shared libraries, appended to the initramfs
p=$S/payload
rm -rf "$p"
mkdir -p "$p/extra/scen"
cp "$here/../ptsynth" "$p/extra/scen/ptsynth"
install -m 755 "$here/guest-run.sh" "$p/extra/scen/run"
cp "$list" "$p/extra/scen/list"
cp "$here"/*.lua "$p/extra/scen/"
ldd "$here/../ptsynth" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
while read -r lib; do
	mkdir -p "$p$(dirname "$lib")"
	cp -L "$lib" "$p$lib"
done
(cd "$p" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$S/payload.cpio.gz"
cat "$img.cpio.gz" "$S/payload.cpio.gz" > "$S/initramfs.cpio.gz"

# the guest's files the sideband names
rm -rf "$S/root"
mkdir -p "$S/root/samples"
cp "$img/samples/ebpf-jit" "$S/root/samples/"
if grep -q ' /usr/bin/luajit ' "$list"; then
	lj=$img/usr/bin/luajit
	[[ -x $lj ]] || die "no LuaJIT in the guest image (scripts/guest-luajit: apt-get install luajit)"
	# the guest has them at the paths ldd gives here (scripts/guest-luajit)
	for f in /usr/bin/luajit $(ldd "$lj" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[[ -f $img$f ]] || die "no $f in the guest image"
		mkdir -p "$S/root$(dirname "$f")"
		cp "$img$f" "$S/root$f"
	done
fi

t0=$SECONDS
# a boot under TCG on a loaded machine panics now and then in the timer
# check ("IO-APIC + timer doesn't work"): boot again then
for try in 1 2; do
	"$top/scripts/run-guest" -t "${FLOWJIT_SCEN_TIMEOUT:-3000}" -k "$kernel" -i "$S/initramfs.cpio.gz" \
		-r /extra/scen/run -o "$S/guest" && break
	grep -q "IO-APIC + timer doesn't work" "$S/guest/console.log" && ((try < 2)) ||
		die "guest run failed (see $S/guest)"
	echo "scenarios: the guest's timer check failed at boot, booting again"
done
echo "scenarios: guest run $((SECONDS - t0)) s"

while read -r name args; do
	[[ -n $name ]] || continue
	d=$S/$name f=$S/guest/files
	rm -rf "$d"
	mkdir -p "$d"
	for x in gt:gt data:sideband.data out:out err:err time:time; do
		[[ -f $f/$name.${x%%:*}.gz ]] || die "$name: the guest sent no $name.${x%%:*}"
		gzip -dc "$f/$name.${x%%:*}.gz" > "$d/${x#*:}"
	done
	read -r rc g0 g1 < "$d/time"
	[[ $rc == 0 ]] || die "$name: guest run exited with $rc: $(tail -n 3 "$d/err")"
	t=$SECONDS
	"$here/../ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		-o "$d/perf.data" 2> "$d/synth.err" || die "$name: synth: $(cat "$d/synth.err")"
	"$here/../ptsynth" synth -g "$d/gt" --sideband "$d/sideband.data" --root "$S/root" \
		--strip-flowjit -o "$d/perf-noflowjit.data" 2>> "$d/synth.err" ||
		die "$name: synth --strip-flowjit: $(cat "$d/synth.err")"
	case " $args " in
	*" -- "*) echo "$name: ptsynth trace $args" ;;
	*) echo "$name: ebpf-jit $args" ;;
	esac > "$d/README"
	awk -v g0="$g0" -v g1="$g1" -v s=$((SECONDS - t)) \
		'BEGIN { printf "guest (trace + perf record): %.1f s, host synth: %d s\n", g1 - g0, s }' >> "$d/README"
	head -n 1 "$d/synth.err" >> "$d/README"
	echo "scenarios: $name: $(tail -n 2 "$d/README" | tr '\n' ' ')"
done < "$list"
