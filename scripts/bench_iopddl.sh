#!/usr/bin/env bash
# Reproduces the two comparison tables of docs/BENCHMARKS.md ("Op-level optimum vs CFP" and
# "IOPDDL contest instances"):
#   1. bench_oplevel: the CFP plan against the CBC-proven op-level optimum on small GPT, LLaMA and
#      MoE training steps (same cost model);
#   2. `cfp iopddl solve` on the public IOPDDL instances A, G, M and S at the contest's time limits
#      with 2 threads, each answer re-checked by `cfp iopddl eval`, with its ratio to the best known
#      score and to XLA's, and the solver's peak resident memory.
#
#   scripts/bench_iopddl.sh [IOPDDL_DIR] [--only-oplevel | --only-iopddl]
#
# IOPDDL_DIR holds asplos-2025-iopddl-{A,G,M,S}.json.gz (Google's `iopddl` repository,
# benchmarks/); default $IOPDDL_DIR or ./benchmarks/iopddl. Runs take about 12 minutes (the
# instances alone 60 + 120 + 180 + 240 s). Run it on an otherwise idle machine: the limits are
# wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${IOPDDL_DIR:-benchmarks/iopddl}"
part=all
for arg in "$@"; do
  case "$arg" in
    --only-oplevel) part=oplevel ;;
    --only-iopddl) part=iopddl ;;
    -*) echo "usage: $0 [IOPDDL_DIR] [--only-oplevel | --only-iopddl]" >&2; exit 2 ;;
    *) dir="$arg" ;;
  esac
done

source scripts/deps.sh
cfp_install_deps
cmake --preset default >/dev/null
cmake --build --preset default -j2 --target cfp bench_oplevel >/dev/null
cfp=build/default/app/cli/cfp

if [[ $part != iopddl ]]; then
  echo "## Op-level optimum vs CFP"
  echo
  build/default/bench/bench_oplevel
  echo
fi
[[ $part == oplevel ]] && exit 0

if [[ ! -d $dir ]]; then
  echo "bench_iopddl: no instance directory '$dir' (pass IOPDDL_DIR)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "## IOPDDL instances (2 threads, contest time limits)"
echo
echo "| instance | time limit (s) | our score | valid | seconds | peak RSS (MB) | best known | ours / best | XLA | ours / XLA |"
echo "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
# instance, contest time limit, best known score, XLA's score (- when XLA had no valid answer)
while read -r name limit best xla; do
  file="$dir/asplos-2025-iopddl-$name.json.gz"
  if [[ ! -f $file ]]; then
    echo "| $name | $limit | (missing $file) | | | | $best | | $xla | |"
    continue
  fi
  /usr/bin/time -f "%M" -o "$work/rss" "$cfp" iopddl solve "$file" --time-limit "$limit" --threads 2 --json -o "$work/$name.sol" > "$work/$name.json"
  "$cfp" iopddl eval "$file" "$work/$name.sol" --json > "$work/$name.eval"
  python3 - "$name" "$limit" "$best" "$xla" "$work/$name.json" "$work/$name.eval" "$work/rss" <<'EOF'
import json, sys
name, limit, best, xla, solved, checked, rss = sys.argv[1:]
s = json.load(open(solved)); e = json.load(open(checked))
assert s["score"] == e["score"] and s["valid"] == e["valid"], "solve and eval disagree"
score = e["score"]
mb = int(open(rss).read().split()[-1]) / 1024
best_ratio = f"{score / int(best):.4f}"
xla_text, xla_ratio = ("—", "—") if xla == "-" else (f"{int(xla):,}", f"{score / int(xla):.4f}")
print(f"| {name} | {limit} | {score:,} | {'yes' if e['valid'] else 'NO'} | {s['seconds']:.1f} | {mb:.0f} | {int(best):,} | {best_ratio} | {xla_text} | {xla_ratio} |")
EOF
done <<'LIST'
A 60 6548641531 13214846074
G 120 217039 1264777
M 180 49928460991 -
S 240 1534613444 -
LIST
