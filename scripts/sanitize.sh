#!/usr/bin/env bash
# The CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (with LeakSanitizer).
#
#   scripts/sanitize.sh [BUILD_DIR] [CTEST_ARGS…]      default BUILD_DIR: build-sanitize
#
# Every program of the tree is built instrumented (tune, its worker processes, the tests), so
# what a test drives through `tune` is checked too. Any report fails its test: UBSan is made fatal,
# and ASan/LSan abort on their first finding. GPU tests skip themselves here; run this script on
# the GPU machine to check them as well (tests/gpu/sanitize-gpu.sh runs compute-sanitizer). A full
# run takes about half an hour on 2 cores, most of it the build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
shift || true
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -Wl,--as-needed" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined -Wl,--as-needed"
# --as-needed: the sanitizer runtimes switch it off, and the CUDA driver stub (dlopen'ed at run time,
# never needed at link time) would then become a dependency that machines without a GPU lack.
cmake --build "$build"
# Leaks in libraries we load but do not own (NVRTC, the CUDA driver) are theirs, not ours.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer-suppressions.txt:print_suppressions=0"
export ASAN_OPTIONS="abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir "$build" --output-on-failure -j2 "$@"
