#!/usr/bin/env bash
# Main job: install what is missing, build, and run CFP Explorer on its default built-in model.
# Plans GPT-3 1.3B on one node of 8×H100; extra arguments go to `cfp plan` (e.g. builtin:gpt3-13b --nodes 2 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cfp_install_deps

cmake --preset default >/dev/null
cmake --build --preset default --target cfp
exec build/default/app/cli/cfp plan "$@"
