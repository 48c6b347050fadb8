// `cfp plan`: the fastest plan that fits, with baselines (core/workflow).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "plan_report.h"
#include "plan/plan_json.h"
#include "plan/planner.h"
#include "plan/run_config.h"
#include "workflow/workflow.h"

namespace cfp::cli {

namespace {

// The request `cfp plan` states: model, cluster, mesh, memory, pins and profile DB.
Result<PlanRequest> requestFromArgs(const ParsedArgs& args) {
    auto common = commonRequestFromArgs(args);
    if (!common) return common.error();
    PlanRequest r = std::move(*common);
    if (args.has("--train")) r.model.training = TrainingMode::AppendTraining;
    auto mesh = MeshChoice::parse(args.value("--mesh").value_or("auto"));
    if (!mesh) return mesh.error().withContext("--mesh");
    r.mesh = *mesh;
    auto pins = parsePins(args.all("--pin"));
    if (!pins) return pins.error().withContext("--pin");
    r.pins = *pins;
    r.baselines = args.has("--no-baselines") ? Baselines::Skip : Baselines::Include;
    r.blockCheck = args.has("--check-blocks") ? BlockCheck::Run : BlockCheck::Skip;
    if (auto v = args.value("--accumulation")) {
        if (*v != "auto") {
            auto n = parsePositive("--accumulation", *v);
            if (!n) return n.error();
            r.accumulation = *n;
        }
    }
    if (auto v = args.value("--recompute")) {
        // full and op recompute per layer, as cfp estimate names them (RecomputePolicy Layers, SelectiveOps).
        auto rc = *v == "full" ? std::optional{RecomputePolicy::Layers}
                  : *v == "op" ? std::optional{RecomputePolicy::SelectiveOps}
                               : parseRecomputePolicy(*v);
        if (!rc || *v == "layers" || *v == "ops") return makeError("cli.usage", "--recompute: '" + *v + "' is not one of auto, none, all, full, op");
        r.policy.recompute = *rc;
    }
    if (auto v = args.value("--optimizer-sharding")) {
        if (*v != "on" && *v != "off") return makeError("cli.usage", "--optimizer-sharding: '" + *v + "' is not on or off");
        r.policy.optimizerSharding = *v == "on";
        r.policy.zeroStage = r.policy.optimizerSharding ? 1 : 0;
        r.searchZero = false;
    }
    if (auto v = args.value("--overlap")) {
        if (!setOverlapWord(r.policy, *v)) return makeError("cli.usage", "--overlap: '" + *v + "' is not all, on, grad, param or off");
    }
    if (auto v = args.value("--sequence-parallel")) {
        if (*v != "auto" && *v != "off") return makeError("cli.usage", "--sequence-parallel: '" + *v + "' is not auto or off");
        r.searchSequenceParallel = *v == "auto";
    }
    if (auto v = args.value("--bucket-mb")) {
        auto n = parsePositive("--bucket-mb", *v);
        if (!n) return n.error();
        r.policy.bucketBytes = *n * 1'000'000;
    }
    if (auto v = args.value("--zero")) {
        if (*v != "auto" && *v != "0" && *v != "1" && *v != "2" && *v != "3")
            return makeError("cli.usage", "--zero: '" + *v + "' is not auto, 0, 1, 2 or 3");
        if (args.value("--optimizer-sharding")) return makeError("cli.usage", "--zero and --optimizer-sharding both set the ZeRO stage; give one");
        r.searchZero = *v == "auto";
        r.policy.zeroStage = r.searchZero ? 1 : std::stoi(*v);
        r.policy.optimizerSharding = r.policy.zeroStage >= 1;
    }
    // "auto" (the search's choice, `searched`) or a count from 1 to `most`.
    auto autoOrCount = [&](const std::string& option, int64_t most, const std::string& what, int32_t searched) -> Result<std::optional<int32_t>> {
        const auto v = args.value(option);
        if (!v) return std::optional<int32_t>{};
        if (*v == "auto") return std::optional<int32_t>{searched};
        auto n = parsePositive(option, *v);
        if (!n) return n.error();
        if (*n > most) return makeError("cli.usage", option + ": at most " + std::to_string(most) + " " + what);
        return std::optional<int32_t>{static_cast<int32_t>(*n)};
    };
    auto stages = autoOrCount("--pp", 4096, "stages", PipelineSettings::kSearchedStages);
    if (!stages) return stages.error();
    if (*stages) r.pipeline.stages = **stages;
    auto chunks = autoOrCount("--vp", 64, "chunks per rank", PipelineSettings::kSearchedChunks);
    if (!chunks) return chunks.error();
    if (*chunks) {
        r.pipeline.chunksPerRank = **chunks;
        if (**chunks != PipelineSettings::kSearchedChunks) r.pipeline.schedule = defaultPipeSchedule(**chunks);
    }
    if (auto v = args.value("--schedule")) {
        auto kind = parsePlannedScheduleKind(*v);
        if (!kind) return makeError("cli.usage", "--schedule: " + kind.error().message);
        if (*kind == PipeScheduleKind::Custom && !args.value("--schedule-csv"))
            return makeError("cli.usage", "--schedule custom reads its actions from --schedule-csv FILE");
        r.pipeline.schedule = *kind;
        if (!*chunks) r.pipeline.chunksPerRank = defaultChunksPerRank(*kind);
    }
    if (auto v = args.value("--schedule-time-limit")) {
        if (r.pipeline.schedule != PipeScheduleKind::Mip) return makeError("cli.usage", "--schedule-time-limit is for --schedule mip");
        char* end = nullptr;
        const double seconds = std::strtod(v->c_str(), &end);
        if (end == v->c_str() || *end != '\0' || !(seconds > 0) || seconds > 86400)
            return makeError("cli.usage", "--schedule-time-limit: '" + *v + "' is not a number of seconds from 0 to 86400");
        r.pipeline.optimiserSeconds = seconds;
    }
    if (args.value("--placement") && !args.value("--schedule-csv") && r.pipeline.schedule != PipeScheduleKind::Mip)
        return makeError("cli.usage", "--placement is for --schedule-csv FILE and --schedule mip");
    if (auto v = args.value("--placement"); v && r.pipeline.schedule == PipeScheduleKind::Mip) {
        auto placement = parsePipePlacement(*v);
        if (!placement) return placement.error().withContext("--placement");
        if (*placement == PipePlacement::Bidirectional)
            return makeError("cli.usage", "--placement bidirectional: DualPipe's two copies of the parameters are replayed by cfp schedule only");
        r.pipeline.placement = *placement;
    }
    if (auto file = args.value("--schedule-csv")) {
        if (args.value("--schedule") && r.pipeline.schedule != PipeScheduleKind::Custom)
            return makeError("cli.usage", "--schedule-csv runs the file's schedule: leave out --schedule (or give custom)");
        if (r.pipeline.stages < 2) return makeError("cli.usage", "--schedule-csv needs --pp P > 1");
        if (r.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks) return makeError("cli.usage", "--schedule-csv needs --vp V, not auto");
        std::optional<PipePlacement> placement;
        if (auto v = args.value("--placement")) {
            auto parsed = parsePipePlacement(*v);
            if (!parsed) return parsed.error().withContext("--placement");
            if (*parsed == PipePlacement::Bidirectional)
                return makeError("cli.usage", "--placement bidirectional: DualPipe's two copies of the parameters are replayed by cfp schedule only");
            placement = *parsed;
        }
        CFP_TRY(loadScheduleCsv(*file, placement, r.pipeline));
    }
    if (auto v = args.value("--pp-split")) {
        // "9,3": layers per chunk, in model order.
        size_t start = 0;
        while (start <= v->size()) {
            const size_t end = std::min(v->find(',', start), v->size());
            auto n = parsePositive("--pp-split", v->substr(start, end - start));
            if (!n) return n.error();
            if (*n > 1'000'000) return makeError("cli.usage", "--pp-split: " + std::to_string(*n) + " layers in a chunk");
            r.pipeline.chunkLayers.push_back(static_cast<int32_t>(*n));
            if (end == v->size()) break;
            start = end + 1;
        }
        if (r.pipeline.stages < 2) return makeError("cli.usage", "--pp-split needs --pp P > 1");
    }
    if (r.pipeline.stages == 1 && (args.value("--vp") || args.value("--schedule")))
        return makeError("cli.usage", "--vp and --schedule need --pp P > 1 or --pp auto");
    return r;
}

}  // namespace

int cmdPlan(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--mesh", "--pin", "--memory-limit", "--memory-reserve", "--accumulation", "--attention", "--cross-entropy", "--fusion", "--zero", "--config", "--recompute",
                        "--optimizer-sharding", "--overlap", "--bucket-mb", "--sequence-parallel", "-o", "--output",
                        "--db", "--db-fingerprint", "--threads", "--pp", "--vp", "--schedule", "--pp-split", "--schedule-csv",
                        "--schedule-time-limit", "--placement"});
    spec.flags.insert({"--json", "--no-baselines", "--quiet", "--check-blocks"});
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp plan [MODEL] [--hardware H] [--nodes N] [--mesh auto|SHAPE] [--pin P]... [--memory-limit SIZE] [-o PLAN] [--json]\n\n"
                     "Finds the fastest plan that fits in memory: ParallelBlocks and segments on the mesh, the\n"
                     "analytic cost model, and the segment DP; recomputes it with the independent evaluator and\n"
                     "compares it with data-parallel and Megatron-style baselines.\n\n"
                     "  --hardware H       built-in spec (see `cfp hardware`) or a JSON file (default h100-sxm)\n"
                     "  --nodes N          nodes of the hardware's GPUs per node (default 1)\n"
                     "  --mesh M           auto (default: every 1–3 axis mesh aligned with nodes; with flash attention\n"
                     "                     each also with an axis that splits the sequence as cp, the keys and values\n"
                     "                     in a ring) or 8, 2x4, dp=2,tp=4; an axis named cp is context parallel\n"
                     "  --pin P            restrict the search; repeatable. SEG=COMBO pins segment SEG (index, or\n"
                     "                     T<k> for every segment of type k) to one strategy per block, e.g.\n"
                     "                     --pin 3=x:rows,x:cols,*,x:contract (';' between multi-axis labels);\n"
                     "                     bN=STRATEGY pins block N\n"
                     "  --batch G          the global batch: sequences per optimizer step (model option below)\n"
                     "  --accumulation A   gradient-accumulation steps: auto (default: the fewest micro-batch rounds\n"
                     "                     whose plan is fastest, searched over the divisors of the global batch)\n"
                     "                     or a count that divides it; the graph is one round of G/A sequences\n"
                     "  --memory-limit S   usable memory per device, e.g. 40GiB (default: the GPU's HBM less its\n"
                     "                     reserve, see `cfp hardware`)\n"
                     "  --memory-reserve S memory kept back from the HBM for the CUDA context, library workspaces,\n"
                     "                     NCCL buffers and allocator fragmentation (default: the hardware spec's)\n"
                     "  --attention A      flash (default: attention cores as one fused kernel, scores on chip,\n"
                     "                     recomputed in the backward, at the speed of the kernel frameworks pick\n"
                     "                     on the GPU: cuDNN's on Hopper), flash2 (the same at FlashAttention-2's\n"
                     "                     speed: PyTorch's flash backend) or eager (one kernel per op, scores saved)\n"
                     "  --cross-entropy C  how the loss runs: fused (default: one kernel, the logits kept; Megatron-LM\n"
                     "                     --cross-entropy-loss-fusion, a compiled loss), inplace (Megatron-LM's default:\n"
                     "                     f32 softmax kept, gradient in place) or eager (PyTorch F.cross_entropy on f32\n"
                     "                     logits, as torchtitan: f32 log-probabilities kept, two f32 gradients)\n"
                     "  --fusion F         compiled (default: chains of elementwise, norm and activation ops fused\n"
                     "                     as XLA, torch.compile and Megatron-LM's fused kernels run them) or eager\n"
                     "                     (PyTorch without torch.compile, torchtitan's default: one kernel per op,\n"
                     "                     autograd keeps what each backward op reads; AdamW stays multi-tensor)\n"
                     "  --recompute R      activation recomputation: per ParallelBlock auto (default: the search\n"
                     "                     decides per block, only where memory needs it), none or all; or per\n"
                     "                     layer as frameworks run it: full (every layer recomputed from its input,\n"
                     "                     Megatron-LM's --recompute-granularity full) or op (torchtitan's per-op\n"
                     "                     selective checkpointing; cfp estimate's recompute=full and op)\n"
                     "  --zero Z           ZeRO stage over the axes each weight is replicated on: 0 none, 1 optimizer\n"
                     "                     state, 2 and gradients, 3 and weights (FSDP full sharding), or auto\n"
                     "                     (default: 1, and 2 then 3 while the plan is shaped by the memory limit or\n"
                     "                     none fits; the fastest is kept)\n"
                     "  --optimizer-sharding on|off\n"
                     "                     shard optimizer state and update over the axes a weight is replicated on\n"
                     "                     (ZeRO-1 / distributed optimizer; default on)\n"
                     "  --overlap O        the step's schedule (plan/step_sim.h): on (default: gradient reduction\n"
                     "                     overlapped with the backward, weight all-gathers with compute), grad,\n"
                     "                     param, off (both on the critical path), or all (on, and tensor-parallel\n"
                     "                     communication beside its GEMMs: Megatron-LM --tp-comm-overlap)\n"
                     "  --bucket-mb N      gradient bucket size in MB (default 80)\n"
                     "  --sequence-parallel auto|off\n"
                     "                     auto (default): also plan every mesh with Megatron-LM's sequence\n"
                     "                     parallelism over each intra-node axis (norms, dropout and residuals\n"
                     "                     split along the sequence, reduce-scatter + all-gather) and keep the\n"
                     "                     fastest; off: never\n"
                     "  --pp P|auto        pipeline stages: the layers cut into P stages of devices/P ranks each;\n"
                     "                     the search plans one stage's mesh (--mesh counts its devices), the\n"
                     "                     micro-batches are searched, no baselines (docs/planning.md); auto:\n"
                     "                     no stages and every P the nodes and the layers allow, each planned,\n"
                     "                     the fastest kept (one search per P: minutes on large models)\n"
                     "  --vp V|auto        model chunks per pipeline rank (interleaved 1F1B; default 1); auto: 1\n"
                     "                     and every V with pp x V dividing the layers, the fastest kept\n"
                     "  --schedule S       1f1b (default), interleaved (with --vp > 1), gpipe, zb-h1, zb-h2,\n"
                     "                     zb-v or dualpipe-v (with --vp 2: two chunks per rank in a V), dualpipe\n"
                     "                     (two copies of the model from both ends: rank r holds chunks r and\n"
                     "                     P - 1 - r, twice the parameters; P even), or mip:\n"
                     "                     the plan searched with 1f1b (interleaved with --vp > 1), then its\n"
                     "                     schedule optimised by CBC at its stages' times, holding no more\n"
                     "                     micro-batches than the fastest generated schedule that fits\n"
                     "  --schedule-time-limit S  mip: seconds for the schedule optimiser (default 20)\n"
                     "  --schedule-csv FILE run the pipeline schedule of FILE (PyTorch action strings, one line\n"
                     "                     per rank: 0F0,0I0,0W0,...; its micro-batches are the rounds)\n"
                     "  --placement L      --schedule-csv and mip: looped (default: stage s on rank s mod P; a\n"
                     "                     CSV that reads only in a V with --vp 2: v) or v\n"
                     "                     (with --vp 2: the chunks in a V, mip searched from zb-v)\n"
                     "  --pp-split L,L,... layers per chunk in model order (default: searched: the even cut and\n"
                     "                     first and last stages with other counts, the fastest that fits)\n"
                     "  --config C         also price the configuration you run today (keys as cfp estimate:\n"
                     "                     tp=8,dp=16,zero=1,mbs=1,...) and say how much faster the plan is\n"
                     "  -o PLAN            write the plan file (docs/plan-format.md), atomically\n"
                     "  --db FILE          use the measurements of a profile DB (cfp profile): measured GEMMs and the\n"
                     "                     calibrated model of the fingerprint profiled as --hardware\n"
                     "  --db-fingerprint K that fingerprint instead (see `cfp profile --list --db FILE`)\n"
                     "  --no-baselines     skip the baselines\n"
                     "  --threads N        worker threads for the block check, cost tables, search and evaluator\n"
                     "                     (default: CFP_THREADS, else every hardware thread); the plan is the same\n"
                     "  --check-blocks     also run the independent block check of `cfp analyze` on every mesh\n"
                     "                     (a violation fails that mesh); the evaluator checks the plan either way\n"
                     "  --quiet            no progress on stderr\n"
                  << kModelOptionsHelp << "  --json             machine-readable summary on stdout\n";
        return kExitOk;
    }
    auto request = requestFromArgs(*args);
    if (!request) return fail(request.error());
    PlanHooks hooks;
    const bool progress = !args->has("--quiet") && isatty(STDERR_FILENO);
    if (progress)
        hooks.progress = [](const PlanProgress& p) {
            const std::string rounds = p.accumulation > 0 ? "accumulation " + std::to_string(p.accumulation) + " (" +
                                                                  std::to_string(p.accumulationIndex + 1) + " of " +
                                                                  std::to_string(p.accumulationCount) + ") "
                                                            : std::string();
            const std::string pass = p.pass > 0 ? " pass " + std::to_string(p.pass) : std::string();
            const std::string stages = p.pipelineStages > 0 ? (p.pipelineStages == 1 ? std::string("no stages") : "pp " + std::to_string(p.pipelineStages)) +
                                                                  " (" + std::to_string(p.stagesIndex + 1) +
                                                                  " of " + std::to_string(p.stagesCount) + ") "
                                                            : std::string();
            std::fprintf(stderr, "\r\033[Kcfp: %3.0f%% %s%s%s mesh %d of %d %s%s", p.overall * 100.0, stages.c_str(), rounds.c_str(), p.stage.c_str(), p.meshIndex + 1,
                         p.meshCount, p.mesh.c_str(), pass.c_str());
            std::fflush(stderr);
        };
    auto model = loadRequestedModel(request->model);
    if (!model) return fail(model.error());
    // Imported models: say what the importer approximated (one line each, on stderr).
    for (const ImportNote& n : model->notes) std::cerr << "cfp: note: " << n.toString() << '\n';
    auto run = runPlan(*request, std::make_shared<const LoadedModel>(std::move(*model)), hooks);
    if (progress) std::fprintf(stderr, "\r\033[K");
    if (!run) return fail(run.error());
    const PlanOutcome& outcome = run->outcome;
    const Graph& graph = run->model->graph;
    std::optional<std::string> out = args->value("-o");
    if (!out) out = args->value("--output");
    if (out) {
        if (auto st = writePlanFile(*out, outcome.plan, graph); !st) return fail(st.error());
    }
    int64_t measuredOps = 0, computingOps = 0;
    for (const CostBreakdown& c : outcome.evaluation.opCost) {
        if (c.computeSeconds != 0) ++computingOps;
        if (c.provenance == Provenance::Measured) ++measuredOps;
    }
    // --config: the configuration the user runs today, priced the same way, against the plan.
    std::optional<PlanRun> configured;
    std::optional<RunConfig> config;
    if (auto text = args->value("--config")) {
        auto parsed = RunConfig::parse(*text);
        if (!parsed) return fail(parsed.error());
        config = *parsed;
        auto est = runEstimate(*request, *config);
        if (!est) return fail(est.error());
        configured = std::move(*est);
    }
    if (args->has("--json")) {
        Json j = planRunJson(*run);
        if (configured) {
            const Plan& c = configured->outcome.plan;
            j["config_estimate"] = {{"config", config->toString()},
                                    {"estimated_config", configured->estimatedConfig.value_or(*config).toString()},
                                    {"step_seconds", c.stepSeconds()},
                                    {"memory_per_device_bytes", c.memory.total()},
                                    {"fits", c.memory.total() <= c.memoryLimitBytes},
                                    {"accumulation_steps", c.policy.accumulation},
                                    {"speedup_of_plan", c.stepSeconds() / outcome.plan.stepSeconds()}};
        }
        if (const auto& pu = run->profile)
            j["profile"] = {{"db", pu->database},
                            {"fingerprint", pu->fingerprint},
                            {"hardware_spec", pu->hardwareSpec},
                            {"simulated", pu->simulated},
                            {"op_measurements", pu->opMeasurements},
                            {"calibrated", pu->calibrated},
                            {"measured_ops_in_plan", measuredOps}};
        else
            j["profile"] = nullptr;
        std::cout << j.dump(2) << '\n';
    } else {
        printPlanRun(*run);
        if (configured) {
            const Plan& c = configured->outcome.plan;
            const bool fits = c.memory.total() <= c.memoryLimitBytes;
            std::cout << "\n  against " << configured->estimatedConfig.value_or(*config).toString() << " (cfp estimate): " << ms(c.stepSeconds()) << ", "
                      << cli::humanBytes(static_cast<double>(c.memory.total())) << "/device" << (fits ? "" : " — does NOT fit")
                      << "; plan is " << cli::speedup(c.stepSeconds(), outcome.plan.stepSeconds()) << "\n";
        }
        if (run->profile)
            std::cout << "  " << run->profile->note() << "; " << measuredOps << " of " << computingOps << " kernels in the plan measured\n";
        if (out) std::cout << "  plan written to " << *out << "\n";
    }
    return kExitOk;
}

}  // namespace cfp::cli
