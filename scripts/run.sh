#!/usr/bin/env bash
# Main job: install what is missing, build, and run CFP Explorer on its default built-in model.
# Extra arguments are passed to `cfp describe` (e.g. builtin:gpt3-175b --json).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cfp_install_deps

cmake --preset default >/dev/null
cmake --build --preset default --target cfp
exec build/default/app/cli/cfp describe "$@"
