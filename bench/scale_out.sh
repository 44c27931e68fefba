#!/usr/bin/env bash
# Tuning on 1, 2, … N GPUs of this host (--devices 0..k-1), in one go: configs per second for the
# Kernel Tuner–shaped reduce space at 2^26 and for the main job (scan, default problems), each on
# a fresh database with a warm cubin cache (compiled once first), and the ratio to k times the
# one-GPU rate measured in the same run. Target (issue 16): at least 0.9 × k × the one-GPU rate.
#
#   [ROUNDS=R] bench/scale_out.sh BIN_DIR [MAX_GPUS]       (BIN_DIR holds tune and cutune-worker)
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

# ROUNDS (default 1) repeats the whole sequence, the one-GPU run of round r on GPU (r - 1) mod N:
# one GPU alone varies by 10-20 % from GPU to GPU and run to run (bench/RESULTS.md, 2026-11-27), so
# the ratios at the end compare each k's mean rate with the mean one-GPU rate over every round.
rounds=${ROUNDS:-1}
declare -A rates
for ((round = 1; round <= rounds; ++round)); do
  for job in reduce scan; do
    for ((k = 1; k <= gpus; k *= 2)); do
      if [ $k = 1 ]; then devices=$(((round - 1) % gpus)); else devices=$(seq -s, 0 $((k - 1))); fi
      [ $job = reduce ] && args=("${reduce[@]}") || args=("${scan[@]}")
      out=$work/$job-$k-$round
      started=$(date +%s.%N)
      "$bin/tune" run --devices "$devices" --quiet "${args[@]}" --db "$out.db" > "$out.out"
      ended=$(date +%s.%N)
      evaluated=$(sed -n 's/^run [0-9]*: \([0-9]*\) evaluated.*/\1/p' "$out.out")
      rate=$(awk -v e="$evaluated" -v s="$started" -v t="$ended" 'BEGIN { printf "%.1f", e / (t - s) }')
      rates[$job,$k]+="$rate "
      awk -v j="$job" -v k="$k" -v d="$devices" -v e="$evaluated" -v s="$started" -v t="$ended" -v r="$rate" \
        'BEGIN { printf "%-7s %d GPU(s) (%s): %5d configs in %6.1f s: %7.1f configs/s\n", j, k, d, e, t - s, r }'
      grep -E "^(time|around the run):" "$out.out" | sed 's/^/    /'
    done
  done
done
mean() { awk '{ for (i = 1; i <= NF; ++i) s += $i; printf "%.3f", s / NF }' <<< "$1"; }
echo "mean over $rounds round(s):"
for job in reduce scan; do
  one=$(mean "${rates[$job,1]}")
  for ((k = 1; k <= gpus; k *= 2)); do
    awk -v j="$job" -v k="$k" -v r="$(mean "${rates[$job,$k]}")" -v runs="${rates[$job,$k]% }" -v o="$one" \
      'BEGIN { printf "%-7s %d GPU(s): %7.1f configs/s (runs: %s), %.2f x the one-GPU rate (%.2f of k x it)\n",
               j, k, r, runs, r / o, r / (o * k) }'
  done
done
