#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ptreplay's browser test: export the calls scenario (test/pr_mkperf.h)
# with --chrome-trace and --folded, load both into speedscope in headless
# Chromium (playwright-core) and check what the page shows: thread names,
# JIT and BPF function names, the call nesting (hover tooltips down the
# flame chart), the folded stacks.  Screenshots go to $B/viewer.png and
# $B/viewer-bpf.png.
#
# Needs node (>= 18) and npm (Debian: nodejs, npm) and Chromium (Debian:
# chromium; CHROMIUM=path overrides /usr/bin/chromium); without them it
# prints a SKIP with the reason.  speedscope and playwright-core, pinned in
# test/viewer/package-lock.json, are installed into $B/viewer-node with
# `npm ci` (not globally), once per lock file.
#
# Environment: PTREPLAY (default ../ptreplay), TEST_BIN_DIR (where mkperf
# is, default ../build), VIEWER_BUILD ($B, default ../build).
# With --lines, prints unnumbered "ok - ..." lines for run-tests.sh;
# else numbered TAP with a plan.  Exits non-zero if a test failed.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
ptreplay=${PTREPLAY:-$top/ptreplay}
bin=${TEST_BIN_DIR:-$top/build}
B=${VIEWER_BUILD:-$top/build}
chromium=${CHROMIUM:-/usr/bin/chromium}
lines_only=0
[[ ${1:-} == --lines ]] && lines_only=1

lines=()
ok()   { lines+=("ok - $1"); }
fail() { lines+=("not ok - $1"); shift; for d in "$@"; do lines+=("# $d"); done; }
diag() { lines+=("# $1"); }

report() {
	local n=0 failed=0 l
	if ((lines_only)); then
		printf '%s\n' "${lines[@]}"
		grep -q '^not ok' < <(printf '%s\n' "${lines[@]}") && return 1
		return 0
	fi
	echo "TAP version 13"
	echo "1..$(printf '%s\n' "${lines[@]}" | grep -cE '^(not )?ok ')"
	for l in "${lines[@]}"; do
		case $l in
		"ok - "*) n=$((n + 1)); echo "ok $n ${l#ok - }" ;;
		"not ok - "*) n=$((n + 1)); failed=$((failed + 1))
			echo "not ok $n ${l#not ok - }" ;;
		*) echo "$l" ;;
		esac
	done
	((failed == 0))
}

# skip_all REASON: the whole test is skipped
skip_all() {
	if ((lines_only)); then
		echo "ok - viewer: speedscope in headless Chromium shows the exported calls # SKIP $1"
	else
		echo "TAP version 13"
		echo "1..0 # SKIP $1"
	fi
	exit 0
}

[[ -n ${NO_VIEWER:-} ]] && skip_all "NO_VIEWER is set"
command -v node > /dev/null || skip_all "no node (apt-get install nodejs)"
command -v npm > /dev/null || skip_all "no npm (apt-get install npm)"
[[ -x $chromium ]] || skip_all "no $chromium (apt-get install chromium)"
node_major=$(node -e 'console.log(process.versions.node.split(".")[0])' 2> /dev/null)
[[ $node_major =~ ^[0-9]+$ ]] || skip_all "node does not run"
((node_major >= 18)) || skip_all "node $node_major: playwright-core needs 18 or later"
[[ -x $ptreplay && -x $bin/mkperf ]] ||
	skip_all "build ptreplay and $bin/mkperf first (make -C tools/ptreplay check)"

# --- set-up: the pinned packages, in the build directory ---
nm=$B/viewer-node
mkdir -p "$nm"
if ! cmp -s "$here/viewer/package-lock.json" "$nm/installed.lock" ||
   [[ ! -d $nm/node_modules/speedscope || ! -d $nm/node_modules/playwright-core ]]; then
	cp "$here/viewer/package.json" "$here/viewer/package-lock.json" "$nm/"
	# the system's CAs, as apt uses them: node has its own list, which
	# lacks a site's own CA (a proxy that inspects TLS)
	ca=()
	[[ -r /etc/ssl/certs/ca-certificates.crt ]] && ca=(--cafile /etc/ssl/certs/ca-certificates.crt)
	if (cd "$nm" && timeout 600 npm ci --no-audit --no-fund --ignore-scripts "${ca[@]}") \
		> "$nm/npm.log" 2>&1; then
		cp "$here/viewer/package-lock.json" "$nm/installed.lock"
	else
		# say why (a TLS error: the system does not trust the CA of a
		# proxy between it and the registry), not where npm's log is
		fail "viewer: speedscope and playwright-core install from the npm registry (npm ci)" \
			"$(grep -m 3 -E 'ERR! (code|errno|request|network|[0-9]{3})' "$nm/npm.log" ||
			   tail -n 3 "$nm/npm.log")"
		report
		exit 1
	fi
fi
versions=$(cd "$nm" && node -e 'for (const p of ["speedscope", "playwright-core"])
	process.stdout.write(p + " " + require(p + "/package.json").version + " ")')
diag "node $(node --version), npm $(npm --version), $versions"

# --- the files: the calls scenario, exported ---
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/mkperf" --calls "$tmp/calls.data"
if "$ptreplay" decode -i "$tmp/calls.data" --chrome-trace "$tmp/calls.json" \
	--folded "$tmp/calls.folded" > "$tmp/out" 2>&1; then
	ok "viewer: ptreplay exports the calls scenario (--chrome-trace, --folded)"
else
	fail "viewer: ptreplay exports the calls scenario (--chrome-trace, --folded)" \
		"$(head -3 "$tmp/out")"
	report
	exit 1
fi

# --- speedscope in headless Chromium ---
out=$(cd "$tmp" && NODE_PATH=$nm/node_modules timeout 300 node \
	"$here/viewer/viewer-check.cjs" "$nm/node_modules/speedscope/dist/release" \
	"$tmp/calls.json" "$tmp/calls.folded" "$B/viewer.png" "$chromium" 2>&1)
rc=$?
while IFS= read -r l; do
	case $l in
	"ok - "*|"not ok - "*|"# "*) lines+=("$l") ;;
	*) [[ -n $l ]] && lines+=("# $l") ;;
	esac
done <<< "$out"
((rc == 0)) || fail "viewer: the browser check exits cleanly" "exit status $rc"
grep -q '^ok - viewer: speedscope opens' <<< "$out" ||
	fail "viewer: speedscope shows the trace" "$(tail -3 <<< "$out")"
report
