#!/usr/bin/env bash
# Builds everything with the CI preset (Release, warnings as errors) and runs all tests; then the
# core, profiler and CLI tests again under AddressSanitizer and UndefinedBehaviorSanitizer (the
# asan preset: Debug, no explorer), leaving out the three end-to-end planning suites that the
# Release run covers and that take minutes each at Debug speed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cfp_install_deps

export QT_QPA_PLATFORM=offscreen
cmake --preset ci
cmake --build --preset ci
ctest --preset ci

cmake --preset asan
cmake --build --preset asan
ctest --preset asan -E '^(tst_workflow|tst_plan_goldens|tst_cli_plan)$'
