#!/usr/bin/env bash
# Copies what a GPU run needs from a build folder into .carry/bin (ignored by git), for the lent GPU
# machine, which has the CUDA driver and toolkit but no -dev packages: tune, cutune-worker, the
# nlopt runtime they load through their $ORIGIN rpath, and the named extra programs (GPU tests,
# benches). The whole tree that travels must stay under 64 MiB, so name only what the run needs.
#
#   scripts/carry-bundle.sh BUILD_DIR [PROGRAM…]     e.g. scripts/carry-bundle.sh build test_gpu_scan bench_scan
#
# On the GPU machine the programs sit in .carry/bin; GPU tests that start `tune` find it at the path
# the build gave them, so link the build folder's bin there first:
#   mkdir -p build && ln -sfn "$PWD/.carry/bin" build/bin
set -euo pipefail
build=$1
shift
cd "$(dirname "$0")/.."
rm -rf .carry/bin
mkdir -p .carry/bin
for program in tune cutune-worker libnlopt.so.0 "$@"; do
  cp "$build/bin/$program" .carry/bin/
done
strip --strip-unneeded .carry/bin/* 2>/dev/null || true
du -sh .carry/bin
