#!/usr/bin/env bash
# Installs what cutune needs to build and test: Debian packages, and the pinned npm packages
# (Chart.js, embedded into reports; playwright-core, which drives Debian's Chromium in the
# browser tests). The CUDA 13 toolkit (NVRTC, driver API headers, nvcc for bench/) is expected at
# /usr/local/cuda; it is part of the machine image, not something this script can fetch.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev libnlopt-cxx-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev libeigen3-dev zlib1g-dev libgtest-dev libtomlplusplus-dev
  python3 python3-numpy
  openmpi-bin
  nodejs npm chromium
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A node and npm from elsewhere (the machine image's) will do.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [ "$p" = nodejs ] || [ "$p" = npm ] || filtered+=("$p"); done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

for folder in reports tests/browser; do
  if [ ! -d "$folder/node_modules" ] || [ "$folder/package-lock.json" -nt "$folder/node_modules" ]; then
    echo "install-deps: npm ci in $folder"
    (cd "$folder" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$folder/node_modules"
  fi
done

if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "install-deps: the CUDA 13 toolkit was not found at /usr/local/cuda (set CUDAToolkit_ROOT to build elsewhere)" >&2
fi
