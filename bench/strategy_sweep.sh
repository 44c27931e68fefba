#!/usr/bin/env bash
# The strategy comparison of bench/RESULTS.md ("Search strategies"): every strategy on every shared
# landscape with 20 seeds, the option grids of the tunable strategies with the leave-one-landscape-out
# table, and the warm-start pairs. CPU only. Usage: bench/strategy_sweep.sh BUILD_BIN [LANDSCAPES] [SEEDS]
set -euo pipefail
bin=${1:?usage: strategy_sweep.sh BUILD_BIN [LANDSCAPES] [SEEDS]}
folder=${2:-"$(dirname "$0")/../../shared/landscapes"}
seeds=${3:-20}
tune="$bin/tune"

echo "## Every strategy, default options ($(date -u +%F), commit $(git -C "$(dirname "$0")" rev-parse --short HEAD))"
/usr/bin/time -f "wall %e s, CPU %U s" "$tune" strategies "$folder" --repeats "$seeds"

echo; echo "## bayes_opt option grid"
"$tune" strategies "$folder" --repeats "$seeds" --leave-one-out --strategy bayes_opt \
  --strategy-option initial=3,6 --strategy-option cost_power=0.5,1 --strategy-option exploit_every=0,4
echo; echo "## genetic_algorithm option grid"
"$tune" strategies "$folder" --repeats "$seeds" --leave-one-out --strategy genetic_algorithm \
  --strategy-option population=10,20,40 --strategy-option mutation_rate=0.1,0.2
echo; echo "## greedy_ils option grid"
"$tune" strategies "$folder" --repeats "$seeds" --leave-one-out --strategy greedy_ils \
  --strategy-option neighbourhood=adjacent,hamming --strategy-option perturbation_moves=2,3,5
echo; echo "## Warm starts (bayes_opt, default options)"
"$tune" strategies "$folder" --repeats "$seeds" --warm-pairs --strategy bayes_opt
