#!/usr/bin/env bash
# Installs the Debian 12 packages CFP Explorer needs, only those that are missing.
# Sourced by scripts/run.sh and scripts/test.sh; safe to run on its own (as root).
set -euo pipefail

CFP_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  nlohmann-json3-dev zlib1g-dev coinor-libcbc-dev
  qt6-base-dev libgl-dev
  qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 libgraphviz-dev
  xvfb xauth dpkg-dev
  python3 python3-jsonschema
  libonnx-dev libprotobuf-dev
  libsqlite3-dev libopenmpi-dev
  libgoogle-perftools-dev
)

cfp_install_deps() {
  local missing=()
  for p in "${CFP_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "cfp setup: installing ${missing[*]}"
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  cfp_install_deps
fi
