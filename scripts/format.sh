#!/usr/bin/env bash
# Formats the tree's C and C++ sources with .clang-format (CUDA sources are left alone: the
# templates' text is what NVRTC reports and users read). --check lists the files that would change
# and exits 1 if any would.
#   scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cc')
if [[ ${1:-} == --check ]]; then
  changed=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "$f"; changed=1; fi
  done
  exit $changed
fi
clang-format --style=file -i "${files[@]}"
