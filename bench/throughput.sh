#!/usr/bin/env bash
# Tuning throughput on one GPU, in one go: configs per second on the Kernel Tuner–shaped reduce
# space at 2^26 (float32 sum, min and max: 3 x 90 configs) with a cold and then a warm compile
# cache, and the main job (`tune run --kernel scan --device 0`) on a fresh database and an empty
# compile cache, then (CHECK_BEST=0 skips it) a brute force of the same space measuring every config
# in full, and whether the two pick the same best configs (bench/same_best.py). For each run it
# prints tune's own split of the wall time: verifying and measuring on the GPU, the GPU's idle time
# (waiting for compiles, setting problems up, between configs), the fresh compiles, and the time
# around the run.
#
#   bench/throughput.sh BIN_DIR [DEVICE]       (BIN_DIR holds tune and cutune-worker)
#
# Kernel Tuner 1.4 on the same kind of space and GPU model: 660 configs in 76.1 s, 8.7 configs/s
# (issue 14, H100, 2026-11-25). Record results in bench/RESULTS.md with device, date and commit.
set -euo pipefail
bin=$1
device=${2:-0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CUTUNE_CACHE=$work/cubins

run() {  # name, then tune's arguments
  local name=$1
  shift
  local started ended
  started=$(date +%s.%N)
  "$bin/tune" run --device "$device" --quiet "$@" > "$work/$name.out"
  ended=$(date +%s.%N)
  local evaluated
  evaluated=$(sed -n 's/^run [0-9]*: \([0-9]*\) evaluated.*/\1/p' "$work/$name.out")
  awk -v n="$name" -v e="$evaluated" -v s="$started" -v t="$ended" \
    'BEGIN { printf "%-28s %5d configs in %7.1f s wall: %6.1f configs/s\n", n, e, t - s, e / (t - s) }'
  grep -E "^(time|compiles|around the run):" "$work/$name.out" | sed "s/^/    /"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
reduce=(--kernel reduce --n 67108864 --strategy brute_force
        --restrict "pass == atomic && preset == memset")
# The first NVRTC use since the machine booted also reads NVRTC's libraries from disk (on the lent
# H100, 38 s of NVRTC time for 270 compiles instead of 9): run once, then again with an empty cubin
# cache; the second is the cold-cache figure.
rm -rf "$CUTUNE_CACHE"
run reduce-kt-space-cold-first "${reduce[@]}" --db "$work/reduce-first.db"
rm -rf "$CUTUNE_CACHE"
run reduce-kt-space-cold-cache "${reduce[@]}" --db "$work/reduce-cold.db"
run reduce-kt-space-warm-cache "${reduce[@]}" --db "$work/reduce-warm.db"
rm -rf "$CUTUNE_CACHE"
run scan-main-job-fresh --kernel scan --db "$work/scan.db"
"$bin/tune" db best --family scan --db "$work/scan.db"  # the one device this database holds
if [ "${CHECK_BEST:-1}" = 1 ]; then
  # The main job cuts losers short; a brute force that measures every config in full must pick the
  # same best configs, within noise.
  run scan-brute-force-in-full --kernel scan --strategy brute_force --cut-ratio 0 --db "$work/scan-full.db"
  python3 "$(dirname "$0")/same_best.py" scan "$work/scan.db" "$work/scan-full.db"
fi
