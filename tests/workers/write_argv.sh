#!/bin/sh
# Worker for the argument-integrity tests: `write_argv.sh OUT ARG...` writes
# each ARG followed by a NUL byte to OUT.<RANK>, byte for byte (printf %s
# copies any byte but NUL, which no argument can hold). POSIX sh only, so it
# runs in the tests' minimal container image too.
out="$1.${RANK:-none}"
shift
for arg in "$@"; do printf '%s\0' "$arg"; done > "$out"
