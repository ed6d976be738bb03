#!/usr/bin/env bash
# The whole test suite, as the README and CI run it: install, build, then
# every ctest test (unit, integration and slow), in parallel across cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --all
scripts/build.sh --all
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 "$@"
