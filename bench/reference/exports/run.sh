#!/bin/bash
# Runs a plan's JAX and DTensor exports for real where jax and torch are installed (the lent GPU
# machine has both): JAX on 8 host devices, DTensor under torchrun with 8 gloo ranks on the CPU.
#   cfp plan builtin:gpt3-125m --batch 8 --mesh 2x4 -o plan.json
#   cfp export plan.json --format jax -o plan_jax.py; cfp export plan.json --format dtensor -o plan_dtensor.py
#   bash bench/reference/exports/run.sh plan_jax.py plan_dtensor.py
here=$(cd "$(dirname "$0")" && pwd)
jaxfile=$(realpath "$1"); dtfile=$(realpath "$2")
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu python3 "$here/check_jax.py" "$jaxfile"
XLA_FLAGS=--xla_force_host_platform_device_count=8 JAX_PLATFORMS=cpu python3 "$here/check_jax_tree.py" "$jaxfile"
torchrun --nproc-per-node 8 "$here/check_dtensor.py" "$dtfile" "$jaxfile"
