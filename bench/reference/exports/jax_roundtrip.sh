#!/bin/bash
# A JAX user's round trip where jax and optax are installed (the lent GPU machine): lower a scanned
# GPT + AdamW step with debug info, plan it with cfp, export the plan for JAX, then run the jitted
# step on 8 host devices with the export's shardings and compare with the unsharded step.
#   bash bench/reference/exports/jax_roundtrip.sh CFP [WORKDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cfp=$1 work=${2:-$(mktemp -d)}
python3 "$here/jax_roundtrip.py" lower "$work"
"$cfp" plan "$work/step.mlir" --mesh 2x4 --no-baselines -o "$work/plan.json"
"$cfp" export "$work/plan.json" --format jax -o "$work/plan_jax.py"
python3 "$here/jax_roundtrip.py" check "$work"
