#!/usr/bin/env bash
# Fuzzes cfp's file readers with libFuzzer (clang, ASan + UBSan), one target at a time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: 60 s each for every target
#   FUZZ_RUNS=1000000 scripts/fuzz.sh 0 fuzz_hlo   # a fixed number of executions instead of a time
#   FUZZ_MAX_LEN=4096 …                           # largest input (default 16384 bytes)
#
# Targets: fuzz_graph_json fuzz_hlo fuzz_stablehlo fuzz_onnx fuzz_hf_config fuzz_plan. The build lives in
# build/fuzz (separate from the default and CI builds, which never build fuzzers). Each target
# keeps its corpus in build/fuzz/corpus/<target> between runs, seeded from tests/data; crashes
# go to build/fuzz/artifacts/<target>/ (turn each into a regression test). The last line per
# target is its summary: executions, executions per second, new corpus size, crashes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
CFP_PACKAGES+=(clang libclang-rt-14-dev)
cfp_install_deps

seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fuzz_graph_json fuzz_hlo fuzz_stablehlo fuzz_onnx fuzz_hf_config fuzz_plan)
fi

build=build/fuzz
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCFP_BUILD_FUZZERS=ON -DCFP_BUILD_TESTS=OFF -DCFP_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target "${targets[@]}"

seeds() {
  case $1 in
    fuzz_graph_json) echo tests/data/graphs tests/data/analysis ;;
    fuzz_hlo) echo tests/data/hlo ;;
    fuzz_stablehlo) echo tests/data/stablehlo ;;
    fuzz_onnx) echo tests/data/onnx ;;
    fuzz_hf_config) echo tests/data/configs resources/models ;;
    fuzz_plan) echo tests/data/plans ;;
  esac
}

for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  # Seeds: the test fixtures of the format (copied, so the corpus can grow without touching them).
  for dir in $(seeds "$t"); do
    [[ -d $dir ]] && find "$dir" -maxdepth 1 -type f -size -32k -exec cp -n {} "$corpus/" \;
  done
  limit=(-max_total_time="$seconds")
  if [[ -n ${FUZZ_RUNS:-} ]]; then limit=(-runs="$FUZZ_RUNS"); fi
  # -jobs=1 runs one worker process, which writes fuzz-0.log in its working directory.
  logdir=$PWD/$build/logs/$t
  rm -rf "$logdir" && mkdir -p "$logdir"
  echo "== $t (${FUZZ_RUNS:-${seconds}s}) corpus $(ls "$corpus" | wc -l) files"
  status=0
  root=$PWD
  (cd "$logdir" && "$root/$build/fuzz/$t" "$root/$corpus" "${limit[@]}" -jobs=1 -workers=1 -timeout=10 \
    -rss_limit_mb=2048 -max_len="${FUZZ_MAX_LEN:-16384}" -print_final_stats=1 -artifact_prefix="$root/$artifacts/" \
    >launcher.log 2>&1) || status=$?
  log=$logdir/fuzz-0.log
  [[ -f $log ]] || log=$logdir/launcher.log
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  crashes=$(find "$artifacts" -type f | wc -l)
  echo "$t: $execs executions, $rate exec/s, corpus $(ls "$corpus" | wc -l) files, exit $status, $crashes crash file(s) in $artifacts"
  if ((status != 0)); then tail -40 "$log"; fi
done
