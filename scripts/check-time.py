#!/usr/bin/env python3
"""One clock (docs/architecture.md, "Lifecycle and time"): production code reads the time
only through the injected `TimeSource` of Sources/Timing.

    python3 scripts/check-time.py      # exit 1 with every clock read found outside Timing

Refused in every Swift file under Sources/ except Sources/Timing (comments are ignored;
string literals are not, so a read inside an interpolation is caught too):
  - constructing the real clock, `SystemClock()`, except in the one composition-root file
    that makes the process's clock (COMPOSITION_ROOT);
  - reading a clock directly: `clock_gettime`, `gettimeofday`, `time(nil)`, `Date()`,
    `Date.now`, `DispatchTime.now()`, `DispatchWallTime`, a Dispatch timeout or deadline
    written `.now() + …`, `ContinuousClock`, `SuspendingClock`, `.uptimeNanoseconds`,
    `ProcessInfo…systemUptime`, `CFAbsoluteTimeGetCurrent`.
A timed wait goes through Timing's `Wakeup`; a deadline through `TimeSource`'s monotonic
time. Run by `make test`, before the build.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = os.path.join("Sources", "Timing") + os.sep
# The one file allowed to make the real clock: the executable's composition root.
COMPOSITION_ROOT = os.path.join("Sources", "pushgate", "ProcessClock.swift")

READS = [
    (re.compile(r"\bSystemClock\s*\(\s*\)"), "makes its own SystemClock(); take the injected TimeSource"),
    (re.compile(r"\bclock_gettime\s*\("), "reads clock_gettime directly"),
    (re.compile(r"\bgettimeofday\s*\("), "reads gettimeofday directly"),
    (re.compile(r"(?<![\w.])time\s*\(\s*(nil|&|NULL\b)"), "reads time(nil) directly"),
    (re.compile(r"(?<![\w.])Date\s*\(\s*\)"), "reads Date() directly"),
    (re.compile(r"\bDate\s*\.\s*now\b"), "reads Date.now directly"),
    (re.compile(r"\bDate\s*\(\s*timeIntervalSinceNow"), "reads Date(timeIntervalSinceNow:) directly"),
    (re.compile(r"\bDispatch(Wall)?Time\s*\.\s*now\s*\("), "reads DispatchTime.now() directly"),
    (re.compile(r"\bDispatchWallTime\b"), "uses DispatchWallTime (wall time for a wait)"),
    (re.compile(r"(?:deadline|timeout|wallDeadline)\s*:\s*\.now\s*\("), "reads Dispatch's clock (.now()) for a wait"),
    (re.compile(r"\b(Continuous|Suspending)Clock\b"), "uses a Swift clock directly"),
    (re.compile(r"\.uptimeNanoseconds\b"), "reads Dispatch's uptime directly"),
    (re.compile(r"\bsystemUptime\b"), "reads ProcessInfo's uptime directly"),
    (re.compile(r"\bCFAbsoluteTimeGetCurrent\b"), "reads CFAbsoluteTimeGetCurrent directly"),
]


def without_comments(text):
    """Comments blanked (newlines kept, so line numbers stay right)."""
    text = re.sub(r"/\*[\s\S]*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return re.sub(r"//[^\n]*", "", text)


def problems():
    found = []
    for base, _, files in os.walk(os.path.join(ROOT, "Sources")):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(base, name)
            shown = os.path.relpath(path, ROOT)
            if shown.startswith(TIMING):
                continue
            text = without_comments(open(path, encoding="utf-8").read())
            for pattern, what in READS:
                for m in pattern.finditer(text):
                    if shown == COMPOSITION_ROOT and "SystemClock" in m.group(0):
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    found.append(f"{shown}:{line}: {what} (only Sources/Timing reads the clock)")
    return sorted(found)


def main():
    found = problems()
    for p in found:
        print("time: " + p, file=sys.stderr)
    if found:
        print(f"time: {len(found)} clock read(s) outside Sources/Timing", file=sys.stderr)
        return 1
    print("time: every clock read goes through Sources/Timing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
