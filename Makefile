# SPDX-License-Identifier: GPL-2.0
#
# flowjit: the two commands are `make demo` and `make check`; both set up
# what they need (Debian packages included) and skip what is built.

.PHONY: all setup tree kernel guest check demo bench clean kscenario \
	check-kernel check-guest check-perf check-scenarios check-tools check-base612 \
	series-build

all: guest

setup:
	@scripts/setup

tree: setup
	@scripts/kernel-tree

kernel: tree
	@scripts/kernel-build

guest: kernel
	@scripts/guest-image

check: setup
	@scripts/check

# one part of make check (scripts/check lists them), with what it needs
check-kernel check-guest check-perf check-scenarios check-tools check-base612: setup
	@scripts/check $(@:check-%=%)

# each base's series built one patch at a time (scripts/series-build): an
# incremental kernel build per patch, so not part of make check
series-build: setup
	@scripts/kernel-tree && FLOWJIT_BASE=6.12 scripts/kernel-tree && \
	{ scripts/series-build -p; FLOWJIT_BASE=6.12 scripts/series-build -p; } | scripts/tap-tally

# the kernel static-key decode scenario (tools/ptsynth/README.rst); needs
# the guest with perf (scripts/perf-build, scripts/guest-image)
kscenario: guest
	@scripts/kscenario

demo: setup
	@scripts/demo

bench: setup
	@scripts/bench

clean:
	rm -rf build
	@for d in tools/*/; do \
		[ -f $$d/Makefile ] && $(MAKE) -s -C $$d clean || true; \
	done
