#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ptreplay decode speed against perf script, on a ptsynth-generated trace
# of a real execution (bench/spin.c: two threads, ~1.1 M instructions,
# two per-thread AUX queues).  Prints "BENCH <name> <value> <unit>" lines.
#
#   decode_speed_ratio = ptreplay wall time / perf script wall time
#                        (the same perf.data, the same instruction count;
#                        below 1 means ptreplay is faster; goal <= 0.5)
#   speedup_2_threads  = ptreplay -j 1 wall time / ptreplay -j 2 wall time
#
# Both are the median of RUNS (5) alternating runs writing the flow to
# /dev/null (the flows are first checked equal in files: same instruction
# count, same flow per thread); decode-only times come from ptreplay
# --health.  The machine is shared: the load average is printed too.  The trace is generated
# once into BENCH_DIR (build/bench) and reused.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$here/..
ptreplay=${PTREPLAY:-$top/ptreplay}
ptsynth=$top/../ptsynth/ptsynth
dir=${BENCH_DIR:-$top/build/bench}
iters=${BENCH_ITERS:-35000}
runs=${RUNS:-5}
perf=""
for p in "${PERF:-}" perf /usr/bin/perf_6.1; do
	[[ -n $p ]] && "$p" --version > /dev/null 2>&1 && { perf=$p; break; }
done
[[ -n $perf ]] || { echo "bench: no working perf binary" >&2; exit 1; }
[[ -x $ptsynth ]] || make -C "$top/../ptsynth" > /dev/null || exit 1
mkdir -p "$dir"

if [[ ! -s $dir/spin.data || ! -s $dir/spin.gt || $dir/spin.data -ot $here/spin.c ]]; then
	gcc -O1 -g -o "$dir/spin" "$here/spin.c" -lpthread || exit 1
	echo "bench: generating the trace with ptsynth (single-stepping, ~1-2 min)..." >&2
	start=$(date +%s)
	"$ptsynth" record -o "$dir/spin.data" -g "$dir/spin.gt" -- "$dir/spin" "$iters" \
		> /dev/null 2> "$dir/record.log" || { cat "$dir/record.log" >&2; exit 1; }
	echo "bench: generated in $(( $(date +%s) - start )) s" >&2
fi
data=$dir/spin.data

now() { date +%s.%N; }
# timed OUT CMD...: wall seconds of CMD, stdout to OUT
timed() { local out=$1 t0 t1; shift; t0=$(now); "$@" > "$out" 2> /dev/null; t1=$(now); echo "$t1 - $t0" | bc -l; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

t_file_perf=$(timed "$dir/flow.perf" "$perf" script -i "$data" --itrace=i0ns -F tid,ip)
t_file_j1=$(timed "$dir/flow.j1" "$ptreplay" decode -i "$data" -j 1)
"$ptreplay" decode -i "$data" -j 2 > "$dir/flow.j2"
: > "$dir/t.perf"; : > "$dir/t.j1"; : > "$dir/t.j2"
for ((i = 0; i < runs; i++)); do
	timed /dev/null "$perf" script -i "$data" --itrace=i0ns -F tid,ip >> "$dir/t.perf"
	timed /dev/null "$ptreplay" decode -i "$data" -j 1 >> "$dir/t.j1"
	timed /dev/null "$ptreplay" decode -i "$data" -j 2 >> "$dir/t.j2"
done
n_perf=$(wc -l < "$dir/flow.perf")
n_pr=$(wc -l < "$dir/flow.j1")
if [[ $n_perf != "$n_pr" ]] || ! cmp -s <(sort -s -n -k1,1 "$dir/flow.perf") <(sort -s -n -k1,1 "$dir/flow.j1") ||
   ! cmp -s "$dir/flow.j1" "$dir/flow.j2"; then
	echo "bench: flows differ (perf $n_perf, ptreplay $n_pr instructions)" >&2
	exit 1
fi
t_perf=$(median < "$dir/t.perf")
t_j1=$(median < "$dir/t.j1")
t_j2=$(median < "$dir/t.j2")
d_j1=$("$ptreplay" decode -i "$data" -j 1 --health --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["health"]["decode_seconds"])')
d_j2=$("$ptreplay" decode -i "$data" -j 2 --health --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["health"]["decode_seconds"])')

printf 'BENCH instructions %d insns\n' "$n_pr"
printf 'BENCH perf_script_seconds %.3f s\n' "$t_perf"
printf 'BENCH ptreplay_seconds %.3f s\n' "$t_j1"
printf 'BENCH ptreplay_j2_seconds %.3f s\n' "$t_j2"
printf 'BENCH decode_speed_ratio %.3f ptreplay/perf (wall, lower is better; goal <= 0.5)\n' "$(echo "$t_j1 / $t_perf" | bc -l)"
printf 'BENCH perf_over_ptreplay %.2f x\n' "$(echo "$t_perf / $t_j1" | bc -l)"
printf 'BENCH decode_speed_ratio_to_file %.3f ptreplay/perf (one run each, flow written to a file)\n' "$(echo "$t_file_j1 / $t_file_perf" | bc -l)"
printf 'BENCH speedup_2_threads %.2f x (wall, -j1/-j2)\n' "$(echo "$t_j1 / $t_j2" | bc -l)"
printf 'BENCH decode_only_speedup_2_threads %.2f x (--health decode time, -j1/-j2)\n' "$(echo "$d_j1 / $d_j2" | bc -l)"
printf 'BENCH ptreplay_insns_per_second %.0f insns/s\n' "$(echo "$n_pr / $t_j1" | bc -l)"
printf 'BENCH machine_load %s loadavg\n' "$(cut -d' ' -f1 /proc/loadavg)"
