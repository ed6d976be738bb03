#!/usr/bin/env bash
# Configures and builds primus-cli into ./build (Release with debug info).
#
#   scripts/build.sh          the main job: primus-cli and its torchrun link only
#   scripts/build.sh --all    every target: tests, benches, primus-comm-worker, man pages,
#                             completion scripts (what scripts/test.sh and `cmake --install` need)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(primus-cli)
case "${1:-}" in
  "") ;;
  --all) targets=() ;;
  *) echo "build: unknown argument '$1'" >&2; echo "usage: scripts/build.sh [--all]" >&2; exit 2 ;;
esac
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$(nproc)" "${targets[@]}"
