#!/bin/sh
# Runs Python 3 with the arguments given, choosing the interpreter when the test runs: the first
# of $CUTUNE_PYTHON, /usr/bin/python3 and python3 on PATH that imports numpy and tomllib (3.11+).
# Chosen at run time, not when CMake configures, because a build folder is carried between
# machines whose numpy lives in different interpreters: Debian's /usr/bin/python3 on the CPU
# machines (where python3 on PATH is a pyenv Python without numpy), a virtual environment's
# python3 on PATH on the GPU machine (where /usr/bin/python3 has no numpy).
for python in "${CUTUNE_PYTHON:-}" /usr/bin/python3 python3; do
  [ -n "$python" ] || continue
  if "$python" -c "import numpy, tomllib" >/dev/null 2>&1; then
    exec "$python" "$@"
  fi
done
echo "with_python.sh: no Python 3.11+ with numpy (tried \$CUTUNE_PYTHON, /usr/bin/python3, python3 on PATH)" >&2
exit 1
