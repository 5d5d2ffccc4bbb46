#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of ptsynth's kernel scenario (scripts/kscenario): record the
# sideband of the whole machine (flowjit images, KSYMBOL, TEXT_POKE) while
# /kscen/kscen runs, and send the perf.data and kscen's output to the host
# on ttyS2 (scripts/run-guest unpacks them).
PATH=/extra:/bin
export PATH HOME=/tmp PERF_PAGER=cat
cd /tmp || exit 1
# --kcore: the kernel text as it runs when recording starts (the host's
# vmlinux has, e.g., calls to __fentry__ where ftrace put nops at boot),
# sent to the host with the perf.data; --flowjit asks for TEXT_POKE.
perf record -q --kcore --flowjit -e dummy -a -o /tmp/k.dir -- /kscen/kscen \
	> /tmp/kscen.out 2> /tmp/kscen.err
rc=$?
echo "perf record: exit $rc" >> /tmp/kscen.err
ls -l /tmp/k.dir /tmp/k.dir/kcore_dir >> /tmp/kscen.err 2>&1
cp /tmp/k.dir/data /tmp/k.data
for f in kcore kallsyms modules; do
	cp "/tmp/k.dir/kcore_dir/$f" "/tmp/$f"
done
for f in k.data kcore kallsyms modules kscen.out kscen.err; do
	[ -c /dev/ttyS2 ] || break
	{
		echo "=== begin $f"
		base64 "/tmp/$f"
		echo "=== end $f"
	} > /dev/ttyS2
done
cat /tmp/kscen.out /tmp/kscen.err
exit $rc
