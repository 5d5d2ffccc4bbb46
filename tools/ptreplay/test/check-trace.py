#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the files of ptreplay --chrome-trace and --folded.

  check-trace.py chrome FILE [--names A,B,...] [--nest OUTER/INNER ...]
  check-trace.py folded FILE [--total N] [--stack 'a;b;c' ...]

chrome: valid JSON; a "traceEvents" list of "M", "B", "E" and "i" events
with pid, tid and ts; per thread "B"/"E" in time order, each "E" closes
the last open "B" (of its name, if it has one), none left open; --names
must all be slice names; --nest OUTER/INNER: some INNER slice opens while
an OUTER one of the same thread is open.
folded: every line is "frame;frame;... count" with count > 0, frames not
empty, lines sorted and unique; --total: the counts add up to N; --stack:
that stack is a line.  Prints what is wrong and exits 1, else exits 0.
"""
import json
import re
import sys


def fail(msg):
    print("check-trace: " + msg)
    sys.exit(1)


def check_chrome(path, names, nests):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: not valid JSON: %s" % (path, e))
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        fail("no traceEvents list")
    stacks, last, seen, inside = {}, {}, set(), set()
    nslices = 0
    for i, ev in enumerate(events):
        ph = ev.get("ph")
        if ph == "M":
            continue
        for k in ("pid", "tid", "ts"):
            if k not in ev:
                fail("event %d: %s without %s" % (i, ph, k))
        key = (ev["pid"], ev["tid"])
        if ev["ts"] < last.get(key, ev["ts"]) and ph != "i":
            fail("event %d: thread %s goes back in time" % (i, key))
        stack = stacks.setdefault(key, [])
        if ph == "B":
            name = ev.get("name")
            if not isinstance(name, str):
                fail("event %d: B without a name" % i)
            for outer in stack:
                inside.add((outer, name))
            stack.append(name)
            seen.add(name)
            nslices += 1
        elif ph == "E":
            if not stack:
                fail("event %d: E with no open B on thread %s" % (i, key))
            if "name" in ev and ev["name"] != stack[-1]:
                fail("event %d: E %r closes B %r" % (i, ev["name"],
                                                     stack[-1]))
            stack.pop()
        elif ph != "i":
            fail("event %d: unexpected ph %r" % (i, ph))
        if ph != "i":
            last[key] = ev["ts"]
    for key, stack in stacks.items():
        if stack:
            fail("thread %s: %d slices never end (%r)" % (key, len(stack),
                                                          stack[-1]))
    for n in names:
        if n not in seen:
            fail("no slice named %r (%d names seen, e.g. %s)" %
                 (n, len(seen), sorted(seen)[:5]))
    for outer, inner in nests:
        if (outer, inner) not in inside:
            fail("no %r slice within a %r slice" % (inner, outer))
    print("chrome: %d slices, %d threads, %d names" %
          (nslices, len(stacks), len(seen)))


def check_folded(path, total, stacks):
    line_re = re.compile(r"^(\S.*) ([0-9]+)$")
    got = 0
    prev = None
    lines = set()
    with open(path, encoding="utf-8", errors="strict") as f:
        for no, line in enumerate(f, 1):
            m = line_re.match(line.rstrip("\n"))
            if not m:
                fail("line %d: not 'stack count': %r" % (no, line))
            stack, count = m.group(1), int(m.group(2))
            if count <= 0:
                fail("line %d: count %d" % (no, count))
            if any(not fr for fr in stack.split(";")):
                fail("line %d: an empty frame" % no)
            if prev is not None and stack <= prev:
                fail("line %d: not sorted or not unique" % no)
            prev = stack
            lines.add(stack)
            got += count
    if total is not None and got != total:
        fail("counts add up to %d, expected %d" % (got, total))
    for s in stacks:
        if s not in lines:
            fail("no line for stack %r" % s)
    print("folded: %d stacks, %d instructions" % (len(lines), got))


def main(argv):
    if len(argv) < 3 or argv[1] not in ("chrome", "folded"):
        fail(__doc__)
    names, nests, stacks, total = [], [], [], None
    args = argv[3:]
    while args:
        opt = args.pop(0)
        if not args:
            fail("%s needs a value" % opt)
        val = args.pop(0)
        if opt == "--names":
            names += [n for n in val.split(",") if n]
        elif opt == "--nest":
            nests.append(tuple(val.split("/", 1)))
        elif opt == "--total":
            total = int(val)
        elif opt == "--stack":
            stacks.append(val)
        else:
            fail("unknown option " + opt)
    if argv[1] == "chrome":
        check_chrome(argv[2], names, nests)
    else:
        check_folded(argv[2], total, stacks)


if __name__ == "__main__":
    main(sys.argv)
