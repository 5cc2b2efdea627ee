#!/usr/bin/env python3
"""Runs one command with standard input from a file and standard output and error to
/dev/null, and prints "cpu wall peakKB": the child's user + system CPU seconds as the
kernel accounts them (os.wait4's rusage, microsecond resolution), its elapsed seconds
and its maximum resident size. Used by run.sh in place of /usr/bin/time, whose
figures are rounded to 10 ms (the runs measured take 0.2-0.8 s).

Usage: cputime.py INPUT COMMAND [ARG...]
"""
import os
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as stdin, open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        child = subprocess.Popen(sys.argv[2:], stdin=stdin, stdout=devnull, stderr=devnull)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    child.returncode = code  # reaped here, not by Popen
    print(f"{usage.ru_utime + usage.ru_stime:.6f} {wall:.6f} {usage.ru_maxrss}")
    # 0 and 1 (check-link's "some link refused") are answers; anything else is a failure.
    if code not in (0, 1):
        print(f"cputime.py: {sys.argv[2]} exited with {code}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
