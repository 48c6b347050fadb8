#!/usr/bin/env bash
# Builds everything with the CI preset (Release, warnings as errors) and runs all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cfp_install_deps

export QT_QPA_PLATFORM=offscreen
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
