#!/bin/sh
# The packages `make fuzz` needs besides the build's own: clang, its
# sanitizer and libFuzzer runtimes, and its OpenMP; installed (as root) or
# named as tests/deps.sh does for the build's.
exec sh "$(dirname "$0")/../deps.sh" clang libclang-rt-dev libomp-dev
