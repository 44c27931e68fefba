#!/usr/bin/env bash
# On a lent GPU machine, in the repository root, with programs from scripts/carry-bundle.sh in
# .carry/bin: bench/throughput.sh, then each GPU test program named (default: every test_gpu_* there),
# each under a time limit. Logs go to $OUT (the device tool's folder that comes back) when set.
#
#   scripts/device-checks.sh [--no-throughput] [TEST…]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp}
root=$PWD
# GPU tests start `tune` at the path the build gave them (/work/main/build/bin/tune here).
[ "$root" = /work/main ] || { mkdir -p /work && ln -sfn "$root" /work/main; }
mkdir -p build && ln -sfn "$root/.carry/bin" build/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
throughput=1
[ "${1:-}" = --no-throughput ] && { throughput=0; shift; }
if [ $throughput = 1 ]; then
  bench/throughput.sh .carry/bin 0 2>&1 | tee "$out/throughput.log"
fi
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=($(cd .carry/bin && ls test_gpu_* 2>/dev/null))
summary=()
for t in "${tests[@]}"; do
  started=$(date +%s)
  timeout 300 ".carry/bin/$t" > "$out/$t.log" 2>&1
  rc=$?
  line=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$t.log" | tr '\n' ' ')
  summary+=("$(printf '%-24s rc=%-3s %4ss  %s' "$t" "$rc" "$(( $(date +%s) - started ))" "$line")")
  [ $rc = 0 ] || grep -E '^\[  FAILED|Failure|error' "$out/$t.log" | head -20
done
printf '%s\n' "${summary[@]}" | tee "$out/gpu_tests_summary.log"
