#!/usr/bin/env bash
# The one release build (`make release`, every benchmark): the Swift runtime and Foundation
# linked statically, so a short command does not spend ~15 ms binding some 50 shared
# libraries at start-up, and every benchmark measures the same binary.
# Usage: scripts/release-build.sh [--product NAME]
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${SWIFT:-swift}" build -c release --static-swift-stdlib "$@"
