#!/bin/bash
# Exports every kind of plan of the built-in presets in every format: for each preset on 1 node of 8
# GPUs and on 2 nodes, the planner's best plan (`cfp plan`), a data-parallel plan (`cfp estimate
# --config dp=…`) and a Megatron-style plan (`--config tp=8,dp=…`), each exported as jax, dtensor,
# megatron, hlo-sharding, trace and hlo with the default names and, for dtensor, with hf names.
# Prints one line per plan: which formats wrote a file and which were refused, with the reason's
# code and the parameter or layer the message names. Usage:
#   bash bench/reference/exports/sweep.sh build/default/app/cli/cfp [PRESET...] > sweep.txt
cfp=${1:?cfp binary}; shift
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(gpt2 gpt3-1.3b gpt3-13b llama2-7b llama3-8b llama2-70b mixtral-8x7b)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for preset in "${presets[@]}"; do
    for nodes in 1 2; do
        dp=$((8 * nodes))
        declare -A made=()
        "$cfp" plan "builtin:$preset" --batch 32 --nodes $nodes --no-baselines -o "$work/best.json" >/dev/null 2>"$work/err" && made[best]=1 ||
            echo "$preset x$nodes best: no plan ($(tail -1 "$work/err"))"
        "$cfp" estimate "builtin:$preset" --batch 32 --nodes $nodes --config dp=$dp -o "$work/dp.json" >/dev/null 2>"$work/err" && made[dp]=1 ||
            echo "$preset x$nodes dp: no plan ($(tail -1 "$work/err"))"
        "$cfp" estimate "builtin:$preset" --batch 32 --nodes $nodes --config tp=8,dp=$nodes -o "$work/megatron.json" >/dev/null 2>"$work/err" && made[megatron]=1 ||
            echo "$preset x$nodes megatron: no plan ($(tail -1 "$work/err"))"
        for kind in best dp megatron; do
            [ -n "${made[$kind]:-}" ] || continue
            line="$preset x$nodes $kind:"
            for spec in jax dtensor megatron hlo-sharding trace hlo dtensor:hf; do
                fmt=${spec%%:*}; names=auto; [ "$spec" != "$fmt" ] && names=${spec#*:}
                if "$cfp" export "$work/$kind.json" --format "$fmt" --names "$names" -o "$work/out" 2>"$work/err"; then
                    line+=" $spec ok"
                else
                    line+=" $spec REFUSED[$(grep -o '\[[a-z_.]*\]$' "$work/err" | tr -d '[]'): $(sed 's/^cfp: error: //' "$work/err" | cut -c1-90)]"
                fi
            done
            echo "$line"
        done
        unset made
    done
done
