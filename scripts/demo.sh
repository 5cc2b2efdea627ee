#!/usr/bin/env bash
# `make demo`: check the sample links (some are hostile on
# purpose, so rejections are expected), then print the AASA for the shipped route table.
# Uses the debug binary `make` has just built; fails if a command fails to run (status 2).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=.build/debug/pushgate
if [[ ! -x $bin ]]; then
    echo "demo: $bin is not built (run 'make run')" >&2
    exit 2
fi

echo "== pushgate check-link --stdin < config/sample-links.txt"
"$bin" check-link --stdin < config/sample-links.txt
status=$?
if (( status >= 2 )); then
    echo "demo: check-link failed (exit $status)" >&2
    exit "$status"
fi
echo "(exit $status: 0 all accepted, 1 some rejected)"
echo
echo "== pushgate aasa generate"
"$bin" aasa generate || { status=$?; echo "demo: aasa generate failed (exit $status)" >&2; exit "$status"; }
echo
echo "== pushgate send --campaign config/campaigns/inline-alert.json   (dry run: the shipped config has apns.dryRun)"
"$bin" send --campaign config/campaigns/inline-alert.json || { status=$?; echo "demo: send failed (exit $status)" >&2; exit "$status"; }
