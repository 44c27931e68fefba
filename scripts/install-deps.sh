#!/usr/bin/env bash
# Installs what cutune needs to build and test, from Debian's packages only.
# The CUDA 13 toolkit (NVRTC, driver API headers, nvcc for bench/) is expected at /usr/local/cuda;
# it is part of the machine image, not something this script can fetch.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev libnlopt-cxx-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev zlib1g-dev libgtest-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "install-deps: the CUDA 13 toolkit was not found at /usr/local/cuda (set CUDAToolkit_ROOT to build elsewhere)" >&2
fi
