#!/usr/bin/env bash
# Main job: install what is missing, build, and run CFP Explorer on its default built-in model
# (GPT-3 1.3B on one node of 8×H100).
#
# With a display (DISPLAY or WAYLAND_DISPLAY set) it opens the desktop explorer, which analyses the
# model at once and plans it with the Search button; `run.sh MODEL` opens another model. Without a
# display, or with planner options (e.g. `run.sh builtin:gpt3-13b --nodes 2 --json`), it runs the
# headless planner `cfp plan` instead and says so. CFP_HEADLESS=1 forces the headless planner.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cfp_install_deps

cmake --preset default >/dev/null

gui=1
if [[ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
  gui=0
  reason="no display (DISPLAY and WAYLAND_DISPLAY are unset)"
elif [[ -n "${CFP_HEADLESS:-}" ]]; then
  gui=0
  reason="CFP_HEADLESS is set"
elif (($# > 1)) || [[ "${1:-}" == -* ]]; then
  gui=0
  reason="planner options were given"
fi

if ((gui)); then
  if cmake --build --preset default --target cfp-explorer; then
    exec build/default/app/explorer/cfp-explorer "$@"
  fi
  reason="the explorer did not build (see above)"
fi

echo "run.sh: ${reason}: running the headless planner (cfp plan) instead of the explorer" >&2
cmake --build --preset default --target cfp
exec build/default/app/cli/cfp plan "$@"
