set -u
w=$(mktemp -d); export CUTUNE_CACHE=$w/c
for s in genetic_algorithm bayes_opt genetic_algorithm bayes_opt; do
  rm -rf $w/c; st=$(date +%s%N); .carry/bin/tune --kernel scan --device 0 --quiet --strategy $s --db $w/$s-$RANDOM.db > $w/o.out; en=$(date +%s%N)
  echo "scan main job, $s, cold cache: $(( (en - st) / 1000000 )) ms wall"; grep -E "^(time|compiles)" $w/o.out
done
# Warm start: a budgeted bayes_opt run on reduce at one size, then at another size and as another seed
db=$w/warm.db
.carry/bin/tune --kernel reduce --device 0 --n 16777216 --max-evals 40 --db $db 2>&1 | grep -E "warm start|^run|best" | head -5
.carry/bin/tune --kernel reduce --device 0 --n 8388608 --max-evals 40 --db $db 2>&1 | grep -E "warm start|^run" | head -8
.carry/bin/tune --kernel reduce --device 0 --n 4194304 --max-evals 40 --db $db --no-warm-start 2>&1 | grep -E "warm start|^run" | head -3
.carry/bin/tune --best --kernel reduce --device 0 --db $db
