#!/bin/bash
# Runs DTensor exports with Hugging Face names for real on a transformers LlamaForCausalLM (the lent
# GPU machine has torch and transformers; the ranks are gloo processes on its CPU). Plans and
# exports are made here first (cfp built), then on the machine:
#   bash bench/reference/exports/run_hf.sh prepare build/default/app/cli/cfp OUTDIR
#   bash bench/reference/exports/run_hf.sh run OUTDIR
# Each plan: names checked against the model's parameters, loss and gradients of parallelize()
# (tensor parallelism, then FSDP2) against one process, tensor-parallel placements against PLACEMENTS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
config="$here/../../../tests/data/export/llama_tiny_config.json"
plans="megatron fsdp best best8"
if [ "$1" = prepare ]; then
    cfp=$2 out=$3
    mkdir -p "$out" && cp "$config" "$out/config.json"
    "$cfp" estimate "$config" --batch 8 --seq 64 --config tp=4,dp=2 -o "$out/megatron.json"
    "$cfp" estimate "$config" --batch 8 --seq 64 --config dp=8,zero=3 -o "$out/fsdp.json"
    "$cfp" plan "$config" --batch 8 --seq 64 --mesh dp=2,tp=4 --no-baselines -o "$out/best.json"
    "$cfp" plan "$config" --batch 8 --seq 64 --mesh 8 --no-baselines -o "$out/best8.json"
    for p in $plans; do "$cfp" export "$out/$p.json" --format dtensor -o "$out/${p}_dt.py"; done
    exit 0
fi
out=$2
for p in $plans; do
    OMP_NUM_THREADS=1 torchrun --nproc-per-node 8 "$here/check_dtensor_hf.py" "$out/${p}_dt.py" "$out/config.json" 8 64
done
