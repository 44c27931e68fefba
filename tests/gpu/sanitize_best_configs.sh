#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck on every family's best config, on the GPU.
#
#   tests/gpu/sanitize_best_configs.sh TUNE [FAMILY…]        (default: every family of tune --list)
#
# Tunes each family briefly (12 evaluations per problem, default problems) into a scratch database,
# takes the best config of its smallest tuned problem, and runs exactly that config under each tool
# (`--restrict` pins every parameter; `--target-processes all` follows tune into its GPU worker).
# A tool's report of any error, or the config failing its verification under the tool, fails the
# script. Prints one line per (family, tool). Exit 77 without a GPU.
set -uo pipefail
tune=$(readlink -f "$1")
shift
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
"$tune" --best --device 0 --db "$folder/none.db" >/dev/null 2>&1
[ $? = 3 ] && { echo "SKIPPED: no CUDA driver or device"; exit 77; }
families=("$@")
[ ${#families[@]} = 0 ] && mapfile -t families < <("$tune" --list | awk '{print $1}')

failures=0
for family in "${families[@]}"; do
  db=$folder/$family.db
  if ! "$tune" --kernel "$family" --device 0 --db "$db" --quiet --max-evals 12 >"$folder/tune.log" 2>&1; then
    echo "$family: tuning failed: $(tail -1 "$folder/tune.log")"
    failures=$((failures + 1))
    continue
  fi
  # The smallest problem's best config, as --problem and --restrict arguments.
  # Labels become their numbers (from tune space --json): a label may also be an axis's name
  # ("map == block" would compare two axes).
  "$tune" space --kernel "$family" --json >"$folder/space.json"
  read -r problem restrict config < <(python3 - "$db" "$family" "$folder/space.json" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
row = db.execute("""SELECT p.key, r.config FROM results r JOIN problems p ON p.id = r.problem_id
                    WHERE p.family = ? AND r.status = 'ok' ORDER BY p.size, r.time_ms_median LIMIT 1""",
                 (sys.argv[2],)).fetchone()
key, config = row
axes = {a["name"]: dict(zip(a.get("labels", []), a["values"])) for a in json.load(open(sys.argv[3]))["axes"]}
terms = []
for name, value in (f.split("=", 1) for f in config.split(",")):
    terms.append(f"{name} == {axes.get(name, {}).get(value, value)}")
print(key, " && ".join(terms).replace(" ", "\x01"), config)
PY
  )
  restrict=${restrict//$'\x01'/ }
  for tool in memcheck racecheck; do
    out=$folder/$family-$tool.log
    "$sanitizer" --tool "$tool" --target-processes all --error-exitcode 99 \
      "$tune" --kernel "$family" --device 0 --db "$folder/$family-$tool.db" --quiet --samples 3 --cut-ratio 0 \
      --no-warm-start --problem "$problem" --restrict "$restrict" >"$out" 2>&1
    rc=$?
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out" | sort | uniq -c | tr -s ' ' | paste -sd';')
    status=$(python3 -c "import sqlite3,sys; print(','.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('SELECT status FROM results')))" \
             "$folder/$family-$tool.db" 2>/dev/null)
    if [ $rc = 0 ] && [ "$status" = ok ]; then
      echo "ok    $family $tool  $problem  $config  [$summary]"
    else
      echo "FAIL  $family $tool  $problem  $config  exit $rc, result '$status' [$summary]"
      grep -E "=========" "$out" | head -20
      grep -vE "=========" "$out" | tail -3
      failures=$((failures + 1))
    fi
  done
done
echo "$failures failure(s)"
[ $failures = 0 ]
