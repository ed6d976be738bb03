#!/usr/bin/env bash
# The "fuzz" tests of the normal build (tests/fuzz/README.md):
#   run_fuzzers.sh build SOURCE_DIR FUZZ_BUILD_DIR
#       configures FUZZ_BUILD_DIR with clang and PRIMUS_FUZZ=ON, builds every target
#   run_fuzzers.sh run SOURCE_DIR FUZZ_BUILD_DIR TARGET SECONDS
#       runs one target for SECONDS on its checked-in corpus; new inputs go to
#       FUZZ_BUILD_DIR/corpus/TARGET, a crashing input to FUZZ_BUILD_DIR/artifacts/
set -euo pipefail
mode=$1 source=$2 build=$3

case "$mode" in
  build)
    if ! command -v clang++ >/dev/null; then
      echo "clang++ not found: scripts/setup.sh installs clang and libclang-rt-14-dev" >&2
      exit 4
    fi
    launcher=()
    if command -v ccache >/dev/null; then
      launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    CXX=clang++ cmake -S "$source" -B "$build" -G Ninja -DPRIMUS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "${launcher[@]}" >/dev/null
    exec ninja -C "$build" -j"$(nproc)" primus_fuzz_targets
    ;;
  run)
    target=$4 seconds=$5
    binary="$build/tests/fuzz/${target}_fuzz"
    [[ -x "$binary" ]] || { echo "$binary is missing: run the fuzz.build test first" >&2; exit 4; }
    mkdir -p "$build/corpus/$target" "$build/artifacts"
    # New inputs go to the first directory; the checked-in seeds are only read.
    exec "$binary" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$target-" "$build/corpus/$target" "$source/tests/fuzz/corpus/$target"
    ;;
  *)
    echo "usage: $0 build|run SOURCE_DIR FUZZ_BUILD_DIR [TARGET SECONDS]" >&2
    exit 2
    ;;
esac
