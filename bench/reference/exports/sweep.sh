#!/bin/bash
# Exports every kind of plan of the built-in presets in every format: for each preset on 1 node of 8
# GPUs and on 2 nodes, the planner's best plan (`cfp plan`), a data-parallel plan (`cfp estimate
# --config dp=…`), a Megatron-style plan (`--config tp=8,dp=…`) and a pinned mixed plan (`cfp plan
# --mesh dp=…,tp=4` with layer 1 pinned to a Megatron-style layout over tp, the rest searched),
# each exported as jax, dtensor, megatron, hlo-sharding, trace and hlo with the default names and,
# for dtensor, with hf names.
# Prints one line per plan: which formats wrote a file and which were refused, with the reason's
# code and the parameter or layer the message names. Usage:
#   bash bench/reference/exports/sweep.sh build/default/app/cli/cfp [PRESET...] > sweep.txt
cfp=${1:?cfp binary}; shift
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(gpt2 gpt3-1.3b gpt3-13b gpt3-175b llama2-7b llama3-8b llama2-70b mixtral-8x7b)
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
        # The pinned mixed plan: segment 1 (layer 1) as a Megatron-style estimate on the same mesh lays
        # it out (multi-axis labels such as "dp:rows,tp:cols" separated by ';' in a pin), every other
        # segment searched.
        mesh="dp=$((2 * nodes)),tp=4"
        if "$cfp" estimate "builtin:$preset" --batch 32 --nodes $nodes --config tp=4,dp=$((2 * nodes)) -o "$work/tp4.json" >/dev/null 2>"$work/err"; then
            # Same accumulation rounds as the estimate: the same micro-batch graph, the same segments.
            pin=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["segments"][1]; print("1=" + ";".join(s["labels"]) + (";" if len(s["labels"]) == 1 else ""))' "$work/tp4.json")
            rounds=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["memory_policy"].get("accumulation_steps", 1))' "$work/tp4.json")
            "$cfp" plan "builtin:$preset" --batch 32 --nodes $nodes --mesh "$mesh" --accumulation "$rounds" --pin "$pin" --no-baselines -o "$work/mixed.json" >/dev/null 2>"$work/err" && made[mixed]=1 ||
                echo "$preset x$nodes mixed: no plan ($(tail -1 "$work/err"))"
        else
            echo "$preset x$nodes mixed: no tp=4 layout to pin ($(tail -1 "$work/err"))"
        fi
        for kind in best dp megatron mixed; do
            [ -n "${made[$kind]:-}" ] || continue
            line="$preset x$nodes $kind:"
            for spec in jax dtensor megatron hlo-sharding trace hlo dtensor:hf; do
                fmt=${spec%%:*}; names=auto; [ "$spec" != "$fmt" ] && names=${spec#*:}
                if "$cfp" export "$work/$kind.json" --format "$fmt" --names "$names" -o "$work/out" 2>"$work/err"; then
                    line+=" $spec ok"
                    # A dtensor file parallelize() refuses unless allow_partial (layouts no style expresses).
                    n=$(grep -o 'dtensor: [0-9]* module' "$work/err" | grep -o '[0-9]*')
                    [ -n "$n" ] && line+="(${n} unexpressed: $(grep -o 'first: [^ ]*' "$work/err" | cut -c8-))"
                else
                    line+=" $spec REFUSED[$(grep -o '\[[a-z_.]*\]$' "$work/err" | tr -d '[]'): $(sed 's/^cfp: error: //' "$work/err" | cut -c1-90)]"
                fi
            done
            echo "$line"
        done
        unset made
    done
done
