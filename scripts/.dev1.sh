set -u
cd /work/main 2>/dev/null || true
root=$PWD; [ "$root" = /work/main ] || { mkdir -p /work && ln -sfn "$root" /work/main; }
mkdir -p build && ln -sfn "$root/.carry/bin" build/bin
bench/throughput.sh .carry/bin 0 2>&1 | tee $OUT/throughput.log
w=$(mktemp -d); export CUTUNE_CACHE=$w/c
s=$(date +%s.%N); .carry/bin/tune --kernel scan --device 0 --quiet --strategy genetic_algorithm --db $w/ga.db > $w/ga.out; e=$(date +%s.%N)
echo "scan main job with genetic_algorithm (warm cache): $(echo "$e - $s" | bc) s"; grep -E "^(run|time|compiles)" $w/ga.out
rm -rf $w/c; s=$(date +%s.%N); .carry/bin/tune --kernel scan --device 0 --quiet --strategy genetic_algorithm --db $w/ga2.db > $w/ga2.out; e=$(date +%s.%N)
echo "scan main job with genetic_algorithm (cold cache): $(echo "$e - $s" | bc) s"; grep -E "^(run|time|compiles)" $w/ga2.out
