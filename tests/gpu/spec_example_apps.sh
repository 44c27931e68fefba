#!/usr/bin/env bash
# The example kernel specs end to end on a GPU, as a user would run them: tune each spec with a
# small budget, then let its application look the best config up, load the stored cubin, run the
# plan on its own data and check the result on the CPU. Exit 77 (skipped) without a GPU.
#   spec_example_apps.sh TUNE CONV2D_APP HISTOGRAM_APP EXAMPLES_FOLDER
set -euo pipefail
tune=$1 conv2d_app=$2 histogram_app=$3 examples=$4
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
db=$folder/examples.db
set +e
"$tune" --best --device 0 --db "$folder/none.db" >/dev/null 2>&1
[ $? = 3 ] && { echo "SKIPPED: no CUDA driver or device"; exit 77; }
set -e

"$tune" --kernel-file "$examples/conv2d/conv2d.toml" --device 0 --db "$db" --quiet --max-evals 30 \
  --problem height=2160,width=3840,radius=2
"$tune" --kernel-file "$examples/histogram/histogram.toml" --device 0 --db "$db" --quiet --max-evals 30 \
  --problem n=10000000,bins=256,type=uint32
# Other sizes than the tuned ones: the apps size their own grids from the looked-up config.
"$conv2d_app" --db "$db" --height 1080 --width 1920 --radius 2 | tee "$folder/conv2d.out"
"$histogram_app" --db "$db" --n 3000001 --bins 256 --type uint32 | tee "$folder/histogram.out"
grep -q "^gpu        verified" "$folder/conv2d.out"
grep -q "^gpu        verified" "$folder/histogram.out"
echo "both example applications ran their looked-up cubins and matched the CPU"
