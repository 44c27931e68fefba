#!/usr/bin/env bash
# Tuning on 1, 2, … N GPUs of this host (--devices 0..k-1), in one go: configs per second for the
# Kernel Tuner–shaped reduce space at 2^26 and for the main job (scan, default problems), each on
# a fresh database with a warm cubin cache (compiled once first), and the ratio to k times the
# one-GPU rate measured in the same run. Target (issue 16): at least 0.9 × k × the one-GPU rate.
#
#   bench/scale_out.sh BIN_DIR [MAX_GPUS]       (BIN_DIR holds tune and cutune-worker)
#
# Record results in bench/RESULTS.md with the device kind, date and commit.
set -euo pipefail
bin=$1
gpus=${2:-$(nvidia-smi --list-gpus | wc -l)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CUTUNE_CACHE=${CUTUNE_CACHE:-$work/cubins}  # a caller may share one between runs

nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null || true
reduce=(--kernel reduce --n 67108864 --strategy brute_force --restrict "pass == atomic && preset == memset")
scan=(--kernel scan)
"$bin/tune" run --device 0 --quiet "${reduce[@]}" --db "$work/warm-up-reduce.db" > /dev/null
"$bin/tune" run --device 0 --quiet "${scan[@]}" --db "$work/warm-up-scan.db" > /dev/null

declare -A one
for job in reduce scan; do
  for ((k = 1; k <= gpus; k *= 2)); do
    devices=$(seq -s, 0 $((k - 1)))
    [ $job = reduce ] && args=("${reduce[@]}") || args=("${scan[@]}")
    started=$(date +%s.%N)
    "$bin/tune" run --devices "$devices" --quiet "${args[@]}" --db "$work/$job-$k.db" > "$work/$job-$k.out"
    ended=$(date +%s.%N)
    evaluated=$(sed -n 's/^run [0-9]*: \([0-9]*\) evaluated.*/\1/p' "$work/$job-$k.out")
    rate=$(awk -v e="$evaluated" -v s="$started" -v t="$ended" 'BEGIN { printf "%.1f", e / (t - s) }')
    [ $k = 1 ] && one[$job]=$rate
    awk -v j="$job" -v k="$k" -v e="$evaluated" -v s="$started" -v t="$ended" -v r="$rate" -v o="${one[$job]}" \
      'BEGIN { printf "%-7s %d GPU(s): %5d configs in %6.1f s: %7.1f configs/s, %.2f x the one-GPU rate (%.2f of k x it)\n",
               j, k, e, t - s, r, r / o, r / (o * k) }'
    grep -E "^(time|around the run):" "$work/$job-$k.out" | sed 's/^/    /'
  done
done
