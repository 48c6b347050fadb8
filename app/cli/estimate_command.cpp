// `cfp estimate`: a configuration a user runs today, priced as the planner prices its own plans
// (core/workflow runEstimate).

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "plan_report.h"
#include "plan/plan_json.h"
#include "plan/run_config.h"
#include "workflow/workflow.h"

namespace cfp::cli {

int cmdEstimate(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--config", "--global-batch", "--memory-limit", "--memory-reserve", "--attention", "--cross-entropy", "--fusion", "--db",
                        "--db-fingerprint",
                        "--threads", "-o", "--output"});
    spec.flags.insert({"--json", "--quiet"});
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp estimate [MODEL] --config tp=T,dp=D,zero=Z,mbs=M,recompute=R [--global-batch G]\n"
                     "                    [--hardware H] [--nodes N] [--memory-reserve S] [-o PLAN] [--json]\n\n"
                     "Prices a parallel configuration you run today (Megatron-LM or torchtitan style) with the\n"
                     "planner's cost model and the independent evaluator: the step time and its parts, the memory\n"
                     "per device against the usable memory, and whether it fits. Every block is restricted as\n"
                     "Megatron-LM lays it out: the batch over dp, weights column/row parallel over tp.\n\n"
                     "  --config C         keys (any order; keys left out are chosen: the fastest completion that\n"
                     "                     fits, tp over the divisors of a node's GPUs, zero 0-3, recompute\n"
                     "                     none/op/full, sp off/on, mbs the fewest rounds that fit):\n"
                     "                       tp, dp       tensor- and data-parallel degrees (tp × dp = devices)\n"
                     "                       zero         ZeRO stage 0–3 over dp (1 optimizer state, 2 and gradients,\n"
                     "                                    3 and weights: FSDP)\n"
                     "                       mbs          micro-batch per data-parallel rank: rounds = G / (mbs × dp)\n"
                     "                       recompute    none; selective (the attention core, as flash attention\n"
                     "                                    recomputes it); full (every layer recomputed from\n"
                     "                                    its input, as Megatron-LM); op (torchtitan's per-op\n"
                     "                                    selective checkpointing: a layer keeps its input,\n"
                     "                                    every other linear layer's output and the attention\n"
                     "                                    output, and recomputes the rest)\n"
                     "                       sp           on: sequence parallelism over tp (Megatron-LM's: norms,\n"
                     "                                    dropout and residuals split along the sequence) or off\n"
                     "                       overlap      on (default: gradient reduction overlapped with the\n"
                     "                                    backward, weight all-gathers with compute: DDP, FSDP,\n"
                     "                                    Megatron-LM --overlap-grad-reduce --overlap-param-gather),\n"
                     "                                    grad, param, off (both on the critical path), or all (on,\n"
                     "                                    and tensor-parallel communication beside its GEMMs:\n"
                     "                                    Megatron-LM --tp-comm-overlap)\n"
                     "                       bucket       gradient bucket in MB (default 80: Megatron-LM's 40M\n"
                     "                                    parameters in bf16; PyTorch DDP uses 25)\n"
                     "                       pp           pipeline stages (default 1): the layers cut into pp stages\n"
                     "                       vp           model chunks per pipeline rank (default 1; > 1 interleaves)\n"
                     "                       pp_first, pp_last  layers of the first and last stage, the others\n"
                     "                                    sharing the rest evenly (Megatron-LM's --decoder-first/\n"
                     "                                    last-pipeline-num-layers; default: every stage even)\n"
                     "                       schedule     1f1b (default), interleaved (vp > 1), gpipe, zb-h1, zb-h2,\n"
                     "                                    zb-v or dualpipe-v (vp 2: a V, first and last chunk on rank 0),\n"
                     "                                    dualpipe (two copies of the model from both ends: rank r\n"
                     "                                    holds chunks r and pp - 1 - r; pp even, no vp)\n"
                     "                       cp           context parallelism (default 1): the sequence split\n"
                     "                                    over cp ranks (tp × cp × dp = devices), keys and values\n"
                     "                                    exchanged for the attention (not with pp > 1); left out,\n"
                     "                                    2, 4, … are tried where nothing fits without it\n"
                     "                       cp_comm      p2p (default: a ring beside the attention kernels,\n"
                     "                                    Megatron-LM's --cp-comm-type p2p) or all_gather (keys\n"
                     "                                    and values gathered before the attention)\n"
                     "  --global-batch G   sequences per optimizer step (the same as --batch)\n"
                     "  --hardware H       built-in spec or JSON file (default h100-sxm); --nodes N (default 1)\n"
                     "  --memory-limit S   usable memory per device (default: HBM less the spec's reserve)\n"
                     "  --memory-reserve S memory kept back from the HBM (default: the spec's)\n"
                     "  --attention A      flash (default), flash2 or eager attention kernels (as cfp plan)\n"
                     "  --cross-entropy C  fused (default), inplace (Megatron-LM without loss fusion) or eager\n"
                     "                     (PyTorch F.cross_entropy on f32 logits, as torchtitan) (as cfp plan)\n"
                     "  --fusion F         compiled (default: fused elementwise chains) or eager (PyTorch without\n"
                     "                     torch.compile: one kernel per op) (as cfp plan)\n"
                     "  --db FILE          measurements of a profile DB (as cfp plan --db)\n"
                     "  --threads N        worker threads\n"
                     "  -o PLAN            write the priced configuration as a plan file (docs/plan-format.md),\n"
                     "                     atomically: cfp export and the explorer read it like a searched plan\n"
                  << kModelOptionsHelp
                  << "  --json             step_seconds, memory_per_device_bytes, usable_memory_bytes, fits, the\n"
                     "                     breakdowns, batch and the configuration\n";
        return kExitOk;
    }
    auto configText = args->value("--config");
    if (!configText) return fail(makeError("cli.usage", "--config is required, e.g. --config tp=8,dp=16,zero=1,mbs=1"));
    auto config = RunConfig::parse(*configText);
    if (!config) return fail(config.error());
    auto common = commonRequestFromArgs(*args);
    if (!common) return fail(common.error());
    PlanRequest r = std::move(*common);
    if (auto g = args->value("--global-batch")) {
        if (args->value("--batch") && *args->value("--batch") != *g)
            return fail(makeError("cli.usage", "--global-batch and --batch say different batches; give one"));
        auto n = parsePositive("--global-batch", *g);
        if (!n) return fail(n.error());
        r.model.build.batch = *n;
    }
    PlanHooks hooks;
    const bool progress = !args->has("--quiet") && isatty(STDERR_FILENO);
    if (progress)
        hooks.progress = [](const PlanProgress& p) {
            std::fprintf(stderr, "\r\033[Kcfp: %s %s %3.0f%%", p.stage.c_str(), p.mesh.c_str(), p.fraction * 100.0);
            std::fflush(stderr);
        };
    auto run = runEstimate(r, *config, hooks);
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (!run) return fail(run.error());
    const Plan& p = run->outcome.plan;
    std::optional<std::string> out = args->value("-o");
    if (!out) out = args->value("--output");
    if (out) {
        if (auto st = writePlanFile(*out, p, run->model->graph); !st) return fail(st.error());
    }
    const bool fits = p.memory.total() <= p.memoryLimitBytes;
    if (args->has("--json")) {
        Json j = planRunJson(*run);
        j["config"] = config->toString();
        j["estimated_config"] = run->estimatedConfig.value_or(*config).toString();
        std::cout << j.dump(2) << '\n';
        return kExitOk;
    }
    const std::string priced = run->estimatedConfig.value_or(*config).toString();
    std::cout << "estimate of " << priced << (priced == config->toString() ? "" : " (" + config->toString() + ", the rest chosen)") << ": " << ms(p.stepSeconds()) << " per step, "
              << cli::humanBytes(static_cast<double>(p.memory.total())) << " of " << cli::humanBytes(static_cast<double>(p.memoryLimitBytes))
              << " usable per device — " << (fits ? "fits" : "does NOT fit") << "\n\n";
    printPlanRun(*run);
    return kExitOk;
}

}  // namespace cfp::cli
