#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ptreplay decode speed against perf script and memory on a long trace,
# on ptsynth-generated traces of a real execution (bench/spin.c: two
# threads, ~1.1 M instructions, two per-thread AUX queues).  Prints
# "BENCH <name> <value> <unit>" lines:
#
#   decode_speed_ratio        ptreplay wall time / perf script wall time,
#                             the same flow (--itrace=i0ns -F tid,ip),
#                             -j 1, on LONG_RUNS copies of the run (goal
#                             <= 0.1)
#   calls_insns_per_second    instructions / wall time of --calls, -j 1
#   profile_insns_per_second  the same for --profile (goal >= 50 M each)
#   speedup_2_threads         ptreplay -j 1 / -j 2 wall time of
#                             --profile (pieces of a queue in parallel;
#                             goal >= 1.8); the flow's too (queues in
#                             parallel, lines spooled)
#   peak_rss_mb               ptreplay's peak RSS decoding the flow of a
#                             trace of LONG_MB MiB of AUX data (goal:
#                             bounded; the small trace's is printed too)
#
# Times are the median of RUNS (3) alternating runs writing to /dev/null
# (the flows are first checked equal per thread).  The long traces repeat
# each AUXTRACE record of the short one (bench/mklong.c: the run N times
# over).  The machine is shared: the load average is printed before and
# after.  The short trace is generated once into BENCH_DIR (build/bench)
# and reused; the 1 GiB trace (~2 min to decode) is made there, run
# under flock /tmp/flowjit-heavy.lock.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$here/..
ptreplay=${PTREPLAY:-$top/ptreplay}
ptsynth=$top/../ptsynth/ptsynth
dir=${BENCH_DIR:-$top/build/bench}
iters=${BENCH_ITERS:-35000}
runs=${RUNS:-3}
long_runs=${LONG_RUNS:-10}
long_mb=${LONG_MB:-1024}
perf=""
for p in "${PERF:-}" perf /usr/bin/perf_6.1; do
	[[ -n $p ]] && "$p" --version > /dev/null 2>&1 && { perf=$p; break; }
done
[[ -n $perf ]] || { echo "bench: no working perf binary" >&2; exit 1; }
[[ -x $ptsynth ]] || make -C "$top/../ptsynth" > /dev/null || exit 1
mkdir -p "$dir"

printf 'BENCH load_average_before %s (1, 5, 15 min)\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

if [[ ! -s $dir/spin.data || ! -s $dir/spin.gt || $dir/spin.data -ot $here/spin.c ]]; then
	gcc -O1 -g -o "$dir/spin" "$here/spin.c" -lpthread || exit 1
	echo "bench: generating the trace with ptsynth (single-stepping, ~1-2 min)..." >&2
	start=$(date +%s)
	"$ptsynth" record -o "$dir/spin.data" -g "$dir/spin.gt" -- "$dir/spin" "$iters" \
		> /dev/null 2> "$dir/record.log" || { cat "$dir/record.log" >&2; exit 1; }
	echo "bench: generated in $(( $(date +%s) - start )) s" >&2
fi
lib=$top/../lib/flowjit
gcc -O2 -std=gnu11 -Wall -I"$lib" -I"$top/../../include/uapi" -o "$dir/mklong" \
	"$here/mklong.c" "$lib/pdata.c" || exit 1
data=$dir/spin.data
long=$dir/spin-x$long_runs.data
[[ $long -nt $data ]] || "$dir/mklong" "$data" "$long" "$long_runs" || exit 1

now() { date +%s.%N; }
# timed OUT CMD...: wall seconds of CMD, stdout to OUT
timed() { local out=$1 t0 t1; shift; t0=$(now); "$@" > "$out" 2> /dev/null; t1=$(now); echo "$t1 - $t0" | bc -l; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# insns FILE: the instructions ptreplay decodes in FILE
insns() { "$ptreplay" decode -i "$1" --health | awk '/^instructions decoded:/ { print $3 }'; }
# median_of N CMD...: the median wall time of N runs of CMD
median_of() { local n=$1 i; shift; for ((i = 0; i < n; i++)); do timed /dev/null "$@"; done | median; }

# the same flow as perf's, per thread
"$perf" script -i "$long" --itrace=i0ns -F tid,ip > "$dir/flow.perf" 2> /dev/null
"$ptreplay" decode -i "$long" -j 1 > "$dir/flow.j1"
"$ptreplay" decode -i "$long" -j 2 > "$dir/flow.j2"
n_perf=$(wc -l < "$dir/flow.perf")
n_pr=$(wc -l < "$dir/flow.j1")
if [[ $n_perf != "$n_pr" ]] || ! cmp -s <(sort -s -n -k1,1 "$dir/flow.perf") <(sort -s -n -k1,1 "$dir/flow.j1") ||
   ! cmp -s "$dir/flow.j1" "$dir/flow.j2"; then
	echo "bench: flows differ (perf $n_perf, ptreplay $n_pr instructions)" >&2
	exit 1
fi
rm -f "$dir/flow.perf" "$dir/flow.j1" "$dir/flow.j2"

: > "$dir/t.perf"; : > "$dir/t.j1"; : > "$dir/t.j2"
for ((i = 0; i < runs; i++)); do
	timed /dev/null "$perf" script -i "$long" --itrace=i0ns -F tid,ip >> "$dir/t.perf"
	timed /dev/null "$ptreplay" decode -i "$long" -j 1 >> "$dir/t.j1"
	timed /dev/null "$ptreplay" decode -i "$long" -j 2 >> "$dir/t.j2"
done
t_perf=$(median < "$dir/t.perf")
t_j1=$(median < "$dir/t.j1")
t_j2=$(median < "$dir/t.j2")
t_calls=$(median_of "$runs" "$ptreplay" decode -i "$long" -j 1 --calls)
: > "$dir/t.p1"; : > "$dir/t.p2"
for ((i = 0; i < runs; i++)); do
	timed /dev/null "$ptreplay" decode -i "$long" -j 1 --profile >> "$dir/t.p1"
	timed /dev/null "$ptreplay" decode -i "$long" -j 2 --profile >> "$dir/t.p2"
done
t_prof=$(median < "$dir/t.p1")
t_prof2=$(median < "$dir/t.p2")
# step 1 and 2 of issue 21 measured: the read callback, the insn decoder
t_prof_insn=$(PTREPLAY_DECODER=insn median_of "$runs" "$ptreplay" decode -i "$long" -j 1 --profile)
t_prof_cb=$(PTREPLAY_DECODER=insn PTREPLAY_READ=callback median_of "$runs" "$ptreplay" decode -i "$long" -j 1 --profile)
t_flow_cb=$(PTREPLAY_READ=callback median_of "$runs" "$ptreplay" decode -i "$long" -j 1)

printf 'BENCH instructions %d insns (%d copies of the run, %d AUX bytes)\n' "$n_pr" "$long_runs" "$(stat -c %s "$long")"
printf 'BENCH perf_script_seconds %.3f s\n' "$t_perf"
printf 'BENCH ptreplay_seconds %.3f s\n' "$t_j1"
printf 'BENCH decode_speed_ratio %.3f ptreplay/perf (wall, -j 1, the same flow; goal <= 0.1)\n' "$(echo "$t_j1 / $t_perf" | bc -l)"
printf 'BENCH calls_insns_per_second %.0f insns/s (--calls, -j 1, wall; goal >= 50 M)\n' "$(echo "$n_pr / $t_calls" | bc -l)"
printf 'BENCH profile_insns_per_second %.0f insns/s (--profile, -j 1, wall; goal >= 50 M)\n' "$(echo "$n_pr / $t_prof" | bc -l)"
printf 'BENCH profile_insn_decoder_insns_per_second %.0f insns/s (PTREPLAY_DECODER=insn: sections, no block decoder)\n' "$(echo "$n_pr / $t_prof_insn" | bc -l)"
printf 'BENCH profile_read_callback_insns_per_second %.0f insns/s (PTREPLAY_DECODER=insn PTREPLAY_READ=callback: before issue 21)\n' "$(echo "$n_pr / $t_prof_cb" | bc -l)"
printf 'BENCH flow_read_callback_seconds %.3f s (PTREPLAY_READ=callback; sections: %.3f s)\n' "$t_flow_cb" "$t_j1"
printf 'BENCH speedup_2_threads %.2f x (wall, --profile, -j 1 / -j 2; goal >= 1.8; the flow: %.2f x)\n' \
	"$(echo "$t_prof / $t_prof2" | bc -l)" "$(echo "$t_j1 / $t_j2" | bc -l)"

# memory: the short trace, and LONG_MB MiB of AUX data
rss() { /usr/bin/time -f %M "$@" 2>&1 > /dev/null | tail -1; }
rss_short=$(rss "$ptreplay" decode -i "$data" -j 1)
copies=$(( (long_mb * 1048576 + $(stat -c %s "$data") - 1) / $(stat -c %s "$data") ))
big=$dir/spin-big.data
if [[ ! -s $big || $big -ot $data || $(cat "$big.copies" 2> /dev/null) != "$copies" ]]; then
	"$dir/mklong" "$data" "$big" "$copies" || exit 1
	echo "$copies" > "$big.copies"
fi
t0=$(now)
rss_big=$(flock /tmp/flowjit-heavy.lock /usr/bin/time -f %M "$ptreplay" decode -i "$big" -j 1 2>&1 > /dev/null | tail -1)
t_big=$(echo "$(now) - $t0" | bc -l)
printf 'BENCH peak_rss_mb %.1f MiB (the flow of %d MiB of AUX data, %d copies, %.0f s; %.1f MiB for the %d KiB trace)\n' \
	"$(echo "$rss_big / 1024" | bc -l)" "$(( $(stat -c %s "$big") >> 20 ))" "$copies" "$t_big" \
	"$(echo "$rss_short / 1024" | bc -l)" "$(( $(stat -c %s "$data") >> 10 ))"
printf 'BENCH load_average_after %s (1, 5, 15 min)\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
