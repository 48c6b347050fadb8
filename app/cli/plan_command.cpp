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
#include "plan/plan_json.h"
#include "plan/planner.h"
#include "workflow/workflow.h"

namespace cfp::cli {

namespace {

Json planSummaryJson(const PlanOutcome& o, const Graph& graph) {
    const Plan& p = o.plan;
    Json j;
    j["model"] = graph.name();
    j["hardware"] = p.hardware;
    j["nodes"] = p.nodes;
    j["devices"] = p.mesh.deviceCount();
    j["mesh"] = p.mesh.toString();
    j["predicted_step_seconds"] = p.predictedStepSeconds;
    j["evaluator_step_seconds"] = p.evaluatorStepSeconds;
    j["step"] = costJson(p.step);
    j["memory_per_device_bytes"] = p.memory.total();
    j["memory_limit_bytes"] = p.memoryLimitBytes;
    j["usable_memory_bytes"] = p.memoryLimitBytes;
    if (const auto b = planBatch(p, graph))
        j["batch"] = {{"global", b->global()},
                      {"accumulation_steps", b->accumulation},
                      {"round", b->round},
                      {"data_parallel", b->dataParallel},
                      {"micro_batch_per_rank", b->microBatch()}};
    else
        j["batch"] = nullptr;
    int recomputedBlocks = 0;
    for (const BlockChoice& b : p.blocks) recomputedBlocks += b.recompute;
    j["memory_policy"] = {{"optimizer_sharding", p.policy.optimizerSharding},
                          {"recompute", std::string(recomputePolicyName(p.policy.recompute))},
                          {"recomputed_blocks", recomputedBlocks},
                          {"accumulation_steps", p.policy.accumulation}};
    j["memory_breakdown_bytes"] = {{"weights", p.memory.weights},
                                   {"gradients", p.memory.gradients},
                                   {"optimizer", p.memory.optimizer},
                                   {"activations", p.memory.activations},
                                   {"transient", p.memory.transient}};
    Json segs = Json::array();
    for (const SegmentPlan& s : p.segments) {
        Json labels = Json::array();
        for (int k = 0; k < s.blockCount; ++k) labels.push_back(p.blocks[static_cast<size_t>(s.firstBlock + k)].label);
        Json c = costJson(s.cost);
        segs.push_back({{"index", s.index},
                        {"type", s.type},
                        {"first_block", s.firstBlock},
                        {"combination", s.combination},
                        {"labels", labels},
                        {"cost", c},
                        {"memory_bytes", s.memoryBytes}});
    }
    j["segments"] = segs;
    Json baselines = Json::object();
    Json details = Json::array();
    for (const Baseline& b : p.baselines) {
        baselines[b.name] = b.feasible ? Json(b.stepSeconds) : Json(nullptr);
        details.push_back({{"name", b.name},
                           {"description", b.description},
                           {"feasible", b.feasible},
                           {"fits", b.fits},
                           {"step_seconds", b.feasible ? Json(b.stepSeconds) : Json(nullptr)},
                           {"memory_per_device_bytes", b.feasible ? Json(b.memory.total()) : Json(nullptr)},
                           {"speedup_of_plan", b.feasible && p.evaluatorStepSeconds > 0 ? Json(b.stepSeconds / p.evaluatorStepSeconds) : Json(nullptr)},
                           {"note", b.note}});
    }
    j["baselines"] = baselines;
    j["baseline_details"] = details;
    Json cands = Json::array();
    for (const MeshCandidate& c : o.candidates)
        cands.push_back({{"mesh", c.mesh},
                         {"planned", c.planned},
                         {"step_seconds", c.planned ? Json(c.stepSeconds) : Json(nullptr)},
                         {"memory_bytes", c.planned ? Json(c.memoryBytes) : Json(nullptr)},
                         {"seconds", c.seconds},
                         {"note", c.note}});
    j["meshes_tried"] = cands;
    j["pins"] = pinTexts(p.pins);
    j["search_exact"] = p.searchExact;
    j["search_seconds"] = p.searchSeconds;
    return j;
}

void printPlan(const PlanOutcome& o, const Graph& graph) {
    const Plan& p = o.plan;
    std::cout << graph.name() << " on " << p.nodes << " x " << p.gpusPerNode << " " << p.hardwareName << ", mesh "
              << p.mesh.toString() << "\n\n";
    std::cout << "  step time        " << ms(p.evaluatorStepSeconds) << "  (compute " << ms(p.step.computeSeconds)
              << ", own collectives " << ms(p.step.collectiveSeconds) << ", resharding " << ms(p.step.reshardSeconds) << "; "
              << provenanceName(p.step.provenance) << ")\n";
    std::cout << "  search objective " << ms(p.predictedStepSeconds) << (p.searchExact ? "" : "  (not proven optimal under the memory limit)")
              << "\n";
    if (const auto b = planBatch(p, graph))
        std::cout << "  batch            " << b->global() << " sequences per step = " << b->accumulation << " round"
                  << (b->accumulation == 1 ? "" : "s") << " of " << b->round << " (micro-batch " << b->microBatch()
                  << " per data-parallel rank, " << b->dataParallel << " way" << (b->dataParallel == 1 ? "" : "s") << ")\n";
    std::cout << "  memory/device    " << cli::humanBytes(static_cast<double>(p.memory.total())) << " of "
              << cli::humanBytes(static_cast<double>(p.memoryLimitBytes)) << " usable  (weights " << cli::humanBytes(static_cast<double>(p.memory.weights))
              << ", grads " << cli::humanBytes(static_cast<double>(p.memory.gradients)) << ", optimizer "
              << cli::humanBytes(static_cast<double>(p.memory.optimizer)) << ", activations "
              << cli::humanBytes(static_cast<double>(p.memory.activations)) << ", largest op "
              << cli::humanBytes(static_cast<double>(p.memory.transient)) << ")\n";
    int recomputed = 0;
    for (const BlockChoice& b : p.blocks) recomputed += b.recompute;
    std::cout << "  memory policy    optimizer sharding " << (p.policy.optimizerSharding ? "on" : "off") << ", recompute "
              << recomputePolicyName(p.policy.recompute) << " (" << recomputed << " of " << p.blocks.size()
              << " blocks recomputed)\n\n";
    std::cout << "  segments (runs of one type and combination; +rc: block recomputed):\n";
    size_t i = 0;
    while (i < p.segments.size()) {
        size_t j = i + 1;
        const SegmentPlan& s = p.segments[i];
        auto recomputes = [&](const SegmentPlan& seg) {
            std::vector<bool> r;
            for (int k = 0; k < seg.blockCount; ++k) r.push_back(p.blocks[static_cast<size_t>(seg.firstBlock + k)].recompute);
            return r;
        };
        while (j < p.segments.size() && p.segments[j].type == s.type && p.segments[j].combination == s.combination &&
               recomputes(p.segments[j]) == recomputes(s))
            ++j;
        std::string labels;
        for (int k = 0; k < s.blockCount; ++k) {
            const BlockChoice& b = p.blocks[static_cast<size_t>(s.firstBlock + k)];
            labels += (k ? " | " : "") + b.label + (b.recompute ? " +rc" : "");
        }
        std::cout << "    #" << i << (j - i > 1 ? "-" + std::to_string(j - 1) : std::string()) << "  T" << s.type << " x " << (j - i)
                  << "  " << ms(s.cost.total()) << " each  [" << labels << "]\n";
        i = j;
    }
    std::cout << "\n  baselines:\n";
    for (const Baseline& b : p.baselines) {
        std::cout << "    " << b.name << " (" << b.description << "): ";
        if (!b.feasible) std::cout << "not possible: " << b.note << "\n";
        else
            std::cout << ms(b.stepSeconds) << ", " << cli::humanBytes(static_cast<double>(b.memory.total())) << "/device"
                      << (b.fits ? "" : " — does not fit: " + b.note) << "; plan is " << cli::fixed(b.stepSeconds / p.evaluatorStepSeconds, 2)
                      << "x faster\n";
    }
    if (o.candidates.size() > 1) {
        std::cout << "\n  meshes tried:\n";
        for (const MeshCandidate& c : o.candidates)
            std::cout << "    " << c.mesh << ": " << (c.planned ? ms(c.stepSeconds) : "skipped — " + c.note) << "\n";
    }
    std::cout << "\n  planned in " << cli::fixed(p.searchSeconds, 2) << " s\n";
}

}  // namespace

namespace {

// The request `cfp plan` states: model, cluster, mesh, memory, pins and profile DB.
Result<PlanRequest> requestFromArgs(const ParsedArgs& args) {
    PlanRequest r;
    if (args.positionals.size() > 1)
        return makeError("cli.usage", "expected one MODEL, got " + std::to_string(args.positionals.size()));
    if (!args.positionals.empty()) r.model.source = args.positionals[0];
    auto build = buildOptionsFrom(args);
    if (!build) return build.error();
    r.model.build = *build;
    if (args.has("--train")) r.model.training = TrainingMode::AppendTraining;
    r.hardware = args.value("--hardware").value_or("h100-sxm");
    if (auto v = args.value("--nodes")) {
        auto n = parsePositive("--nodes", *v);
        if (!n) return n.error();
        r.nodes = *n;
    }
    auto mesh = MeshChoice::parse(args.value("--mesh").value_or("auto"));
    if (!mesh) return mesh.error().withContext("--mesh");
    r.mesh = *mesh;
    if (auto v = args.value("--threads")) {
        auto t = parsePositive("--threads", *v);
        if (!t) return t.error();
        r.search.threads = static_cast<int>(std::min<int64_t>(*t, 1024));
    }
    auto pins = parsePins(args.all("--pin"));
    if (!pins) return pins.error().withContext("--pin");
    r.pins = *pins;
    r.baselines = args.has("--no-baselines") ? Baselines::Skip : Baselines::Include;
    r.blockCheck = args.has("--check-blocks") ? BlockCheck::Run : BlockCheck::Skip;
    if (auto v = args.value("--memory-limit")) {
        auto b = parseBytes("--memory-limit", *v);
        if (!b) return b.error();
        r.memoryLimitBytes = *b;
    }
    if (auto v = args.value("--memory-reserve")) {
        auto b = parseBytes("--memory-reserve", *v);
        if (!b) return b.error();
        r.memoryReserveBytes = *b;
    }
    if (auto v = args.value("--accumulation")) {
        if (*v != "auto") {
            auto n = parsePositive("--accumulation", *v);
            if (!n) return n.error();
            r.accumulation = *n;
        }
    }
    if (auto v = args.value("--recompute")) {
        auto rc = parseRecomputePolicy(*v);
        if (!rc) return makeError("cli.usage", "--recompute: '" + *v + "' is not one of auto, none, all");
        r.policy.recompute = *rc;
    }
    if (auto v = args.value("--optimizer-sharding")) {
        if (*v != "on" && *v != "off") return makeError("cli.usage", "--optimizer-sharding: '" + *v + "' is not on or off");
        r.policy.optimizerSharding = *v == "on";
    }
    if (auto db = args.value("--db")) r.profile = ProfileSource{*db, args.value("--db-fingerprint").value_or("")};
    else if (args.value("--db-fingerprint")) return makeError("cli.usage", "--db-fingerprint needs --db FILE");
    return r;
}

}  // namespace

int cmdPlan(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--hardware", "--nodes", "--mesh", "--pin", "--memory-limit", "--memory-reserve", "--accumulation", "--recompute",
                        "--optimizer-sharding", "-o", "--output",
                        "--db", "--db-fingerprint", "--threads"});
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
                     "  --mesh M           auto (default: every 1–3 axis mesh aligned with nodes) or 8, 2x4, dp=2,tp=4\n"
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
                     "  --recompute R      activation recomputation per ParallelBlock: auto (default: the search\n"
                     "                     decides per block, only where memory needs it), none, or all\n"
                     "  --optimizer-sharding on|off\n"
                     "                     shard optimizer state and update over the axes a weight is replicated on\n"
                     "                     (ZeRO-1 / distributed optimizer; default on)\n"
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
                                                                  std::to_string(p.accumulationIndex + 1) + "/" +
                                                                  std::to_string(p.accumulationCount) + ") "
                                                            : std::string();
            std::fprintf(stderr, "\r\033[Kcfp: %s%s mesh %d/%d %s %3.0f%%", rounds.c_str(), p.stage.c_str(), p.meshIndex + 1, p.meshCount,
                         p.mesh.c_str(), p.fraction * 100.0);
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
    if (args->has("--json")) {
        Json j = planSummaryJson(outcome, graph);
        Json tried = Json::array();
        for (const AccumulationTry& t : run->accumulationTried)
            tried.push_back({{"accumulation_steps", t.steps},
                             {"planned", t.planned},
                             {"step_seconds", t.planned ? Json(t.stepSeconds) : Json(nullptr)},
                             {"memory_bytes", t.planned ? Json(t.memoryBytes) : Json(nullptr)},
                             {"note", t.note}});
        j["accumulation_tried"] = tried;
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
        printPlan(outcome, graph);
        if (run->accumulationTried.size() > 1) {
            std::cout << "  gradient accumulation tried:\n";
            for (const AccumulationTry& t : run->accumulationTried)
                std::cout << "    " << t.steps << " round" << (t.steps == 1 ? "" : "s") << ": "
                          << (t.planned ? ms(t.stepSeconds) + ", " + cli::humanBytes(static_cast<double>(t.memoryBytes)) + "/device"
                                        : "no plan fits — " + t.note)
                          << (t.steps == outcome.plan.policy.accumulation ? "  (chosen)" : "") << "\n";
        }
        if (run->profile)
            std::cout << "  " << run->profile->note() << "; " << measuredOps << " of " << computingOps << " kernels in the plan measured\n";
        if (out) std::cout << "  plan written to " << *out << "\n";
    }
    return kExitOk;
}

}  // namespace cfp::cli
