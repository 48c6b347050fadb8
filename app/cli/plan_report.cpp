// What `cfp plan` and `cfp estimate` print of a plan: the human summary and the --json object.

#include "plan_report.h"

#include <algorithm>
#include <iostream>

#include "plan/unaligned.h"

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
    j["simulated_step"] = {{"seconds", p.simulated.seconds},
                           {"compute_seconds", p.simulated.computeSeconds},
                           {"exposed_communication_seconds", p.simulated.exposedCommSeconds},
                           {"overlapped_communication_seconds", p.simulated.overlappedCommSeconds},
                           {"contention_seconds", p.simulated.contentionSeconds},
                           {"gradient_buckets", p.simulated.gradientBuckets},
                           {"weight_gathers", p.simulated.gatherCollectives}};
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
    if (o.problem)
        if (const auto t = planThroughput(p, graph, o.problem->model().hardware()))
            j["throughput"] = {{"sequences_per_second", t->sequencesPerSecond},
                               {"tokens_per_second", t->tokensPerSecond},
                               {"model_flops_per_step", t->modelFlopsPerStep},
                               {"mfu", t->mfu}};
    if (o.problem)
        if (const auto u = planUnalignedGemms(p, graph, o.problem->model().hardware()))
            j["unaligned_gemms"] = {{"kernels_per_round", u->kernels}, {"dims", u->dims}, {"seconds", u->seconds}, {"aligned_seconds", u->alignedSeconds}};
    int recomputedBlocks = 0;
    for (const BlockChoice& b : p.blocks) recomputedBlocks += b.recompute;
    j["memory_policy"] = {{"optimizer_sharding", p.policy.optimizerSharding},
                          {"recompute", std::string(recomputePolicyName(p.policy.recompute))},
                          {"recomputed_blocks", recomputedBlocks},
                          {"accumulation_steps", p.policy.accumulation},
                          {"attention", std::string(attentionKernelName(p.policy.attention))},
                          {"cross_entropy", std::string(crossEntropyKernelName(p.policy.crossEntropy))},
                          {"fusion", std::string(kernelFusionName(p.policy.fusion))},
                          {"zero_stage", zeroStageOf(p.policy)},
                          {"sequence_parallel", p.policy.sequenceParallelAxis.empty() ? Json(nullptr) : Json(p.policy.sequenceParallelAxis)}};
    j["parallelism"] = parallelismSummary(p, graph);
    if (p.pipeline) {
        const PipelinePlan& pl = *p.pipeline;
        Json ranks = Json::array();
        for (const PipelineRank& r : pl.ranks)
            ranks.push_back({{"busy_seconds", r.busySeconds}, {"end_seconds", r.endSeconds}, {"tail_seconds", r.tailSeconds},
                             {"memory_bytes", r.memory.total()}, {"activation_bytes", r.memory.activations}});
        Json chunks = Json::array();
        for (const PipelineChunk& c : pl.chunks)
            chunks.push_back({{"first_layer", c.firstLayer}, {"layers", c.layers}, {"embedding", c.embedding}, {"head", c.head},
                              {"forward_seconds", c.forwardSeconds}, {"input_grad_seconds", c.inputGradSeconds},
                              {"weight_grad_seconds", c.weightGradSeconds}, {"activation_bytes", c.activationBytes}});
        j["pipeline"] = {{"stages", pl.stages}, {"chunks_per_rank", pl.chunksPerRank}, {"schedule", std::string(pipeScheduleName(pl.schedule))},
                         {"micro_batches", pl.microBatches}, {"bubble_seconds", pl.bubbleSeconds}, {"transfer_seconds", pl.transferSeconds},
                         {"transfer_bytes", pl.transferBytes}, {"slowest_rank", pl.slowestRank}, {"fullest_rank", pl.fullestRank},
                         {"ranks", ranks}, {"chunks", chunks}, {"placement", std::string(pipePlacementName(pl.placement))}};
        if (!pl.scheduleOrigin.empty()) j["pipeline"]["schedule_origin"] = pl.scheduleOrigin;
        if (auto schedule = pipelineSchedule(pl)) j["pipeline"]["actions_csv"] = schedule->toCsv();
        j["devices"] = p.mesh.deviceCount() * pl.stages;
    }
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
                           {"objective_seconds", b.feasible ? Json(b.objectiveSeconds) : Json(nullptr)},
                           {"memory_per_device_bytes", b.feasible ? Json(b.memory.total()) : Json(nullptr)},
                           {"speedup_of_plan", b.feasible && p.stepSeconds() > 0 ? Json(b.stepSeconds / p.stepSeconds()) : Json(nullptr)},
                           {"note", b.note}});
    }
    j["baselines"] = baselines;
    j["baseline_details"] = details;
    Json cands = Json::array();
    for (const MeshCandidate& c : o.candidates)
        cands.push_back({{"mesh", c.mesh},
                         {"sequence_parallel", c.sequenceParallelAxis.empty() ? Json(nullptr) : Json(c.sequenceParallelAxis)},
                         {"context_ring", c.contextRing},
                         {"planned", c.planned},
                         {"step_seconds", c.planned ? Json(c.stepSeconds) : Json(nullptr)},
                         {"simulated_step_seconds", c.simulatedSeconds > 0 ? Json(c.simulatedSeconds) : Json(nullptr)},
                         {"memory_bytes", c.planned ? Json(c.memoryBytes) : Json(nullptr)},
                         {"seconds", c.seconds},
                         {"note", c.note}});
    j["meshes_tried"] = cands;
    j["pins"] = pinTexts(p.pins);
    j["search_exact"] = p.searchExact;
    if (p.searchCutPairs > 0) {
        j["search_cut_pairs"] = p.searchCutPairs;
        j["search_gap_bound_seconds"] = p.searchGapSeconds;
    }
    j["search_seconds"] = p.searchSeconds;
    return j;
}

// Why the plan may not be the optimum, when it may not.
std::string searchExactness(const Plan& p) {
    if (p.searchExact) return "";
    if (p.searchCutPairs > 0)
        return "  (search frontier too wide: " + std::to_string(p.searchCutPairs) + " long-range pair terms approximated; within " +
               ms(p.searchGapSeconds) + " of the optimum)";
    return "  (not proven optimal under the memory limit)";
}

void printPlan(const PlanOutcome& o, const Graph& graph) {
    const Plan& p = o.plan;
    std::cout << graph.name() << " on " << p.nodes << " x " << p.gpusPerNode << " " << p.hardwareName << ", mesh "
              << p.mesh.toString() << (p.pipeline ? " per stage × " + std::to_string(p.pipeline->stages) + " pipeline stages" : std::string())
              << "\n\n";
    if (p.simulated.seconds > 0) {
        const StepSimulation& s = p.simulated;
        std::cout << "  step time        " << ms(s.seconds) << "  (compute " << ms(s.computeSeconds) << ", exposed communication "
                  << ms(s.exposedCommSeconds) << ", contention " << ms(s.contentionSeconds)
                  << (p.pipeline ? ", pipeline bubble " + ms(p.pipeline->bubbleSeconds) + " on rank " + std::to_string(p.pipeline->slowestRank) : std::string())
                  << "; " << ms(s.overlappedCommSeconds)
                  << " of communication overlapped; " << provenanceName(p.step.provenance) << ")\n";
        std::cout << "  schedule         " << overlapText(p.policy) << "; " << s.gradientBuckets << " gradient bucket" << (s.gradientBuckets == 1 ? "" : "s")
                  << ", " << s.gatherCollectives << " weight all-gather" << (s.gatherCollectives == 1 ? "" : "s") << " per step\n";
    } else {
        std::cout << "  step time        " << ms(p.evaluatorStepSeconds) << "  (compute " << ms(p.step.computeSeconds)
                  << ", own collectives " << ms(p.step.collectiveSeconds) << ", resharding " << ms(p.step.reshardSeconds) << "; "
                  << provenanceName(p.step.provenance) << ")\n";
    }
    if (p.pipeline) {
        const PipelinePlan& pl = *p.pipeline;
        const PipelineChunk& c = pl.chunks.front();
        const bool uneven = std::any_of(pl.chunks.begin(), pl.chunks.end(), [&](const PipelineChunk& x) { return x.layers != c.layers; });
        std::cout << "  pipeline         " << pl.stages << " stages" << pipelineChunksText(pl)
                  << ", " << (uneven ? "layers per chunk " + splitText(pl) : std::to_string(c.layers) + (c.layers == 1 ? " layer" : " layers") + " per chunk") << ", "
                  << pipeScheduleName(pl.schedule) << ", "
                  << pl.microBatches << " micro-batches; stage 0 per micro-batch: forward " << ms(c.forwardSeconds) << ", backward "
                  << ms(c.inputGradSeconds + c.weightGradSeconds) << "; transfer " << cli::humanBytes(static_cast<double>(pl.transferBytes)) << " in "
                  << ms(pl.transferSeconds) << "; slowest rank " << pl.slowestRank << " (tail " << ms(pl.ranks[static_cast<size_t>(pl.slowestRank)].tailSeconds)
                  << "), fullest rank " << pl.fullestRank << "\n";
        if (!pl.scheduleOrigin.empty()) std::cout << "  pipe schedule    " << pipeScheduleName(pl.schedule) << ": " << pl.scheduleOrigin << "\n";
    }
    std::cout << "  search objective " << ms(p.predictedStepSeconds) << (p.pipeline ? " for every layer on one stage's devices" : "") << " (compute " << ms(p.step.computeSeconds) << ", collectives "
              << ms(p.step.collectiveSeconds) << ", resharding " << ms(p.step.reshardSeconds) << "; overlapped collectives at their contention and what their layer's compute cannot hide)"
              << searchExactness(p) << "\n";
    if (const auto b = planBatch(p, graph))
        std::cout << "  batch            " << b->global() << " sequences per step = " << b->accumulation << " round"
                  << (b->accumulation == 1 ? "" : "s") << " of " << b->round << " (micro-batch " << b->microBatch()
                  << " per data-parallel rank, " << b->dataParallel << " way" << (b->dataParallel == 1 ? "" : "s") << ")\n";
    if (o.problem)
        if (const auto t = planThroughput(p, graph, o.problem->model().hardware()))
            std::cout << "  throughput       " << throughputText(*t) << "\n";
    if (o.problem)
        if (const auto u = planUnalignedGemms(p, graph, o.problem->model().hardware()))
            std::cout << "  unaligned GEMMs  " << unalignedGemmsText(*u) << "\n";
    std::cout << "  memory/device    " << cli::humanBytes(static_cast<double>(p.memory.total())) << " of "
              << cli::humanBytes(static_cast<double>(p.memoryLimitBytes)) << " usable  (weights " << cli::humanBytes(static_cast<double>(p.memory.weights))
              << ", grads " << cli::humanBytes(static_cast<double>(p.memory.gradients)) << ", optimizer "
              << cli::humanBytes(static_cast<double>(p.memory.optimizer)) << ", activations "
              << cli::humanBytes(static_cast<double>(p.memory.activations)) << ", largest op "
              << cli::humanBytes(static_cast<double>(p.memory.transient)) << ")\n";
    int recomputed = 0;
    for (const BlockChoice& b : p.blocks) recomputed += b.recompute;
    const bool byLayer = recomputesByLayer(p.policy.recompute);
    const std::string perLayer = p.policy.recompute == RecomputePolicy::Layers
                                     ? "per layer (each layer keeps its input and runs its forward again in the backward)"
                                     : "per op (each layer keeps its input, every other linear layer's output and the attention output, "
                                       "and runs the rest of its forward again in the backward)";
    std::cout << "  memory policy    ZeRO stage " << zeroStageOf(p.policy) << ", recompute "
              << (byLayer ? perLayer
                          : std::string(recomputePolicyName(p.policy.recompute)) + " (" + std::to_string(recomputed) + " of " +
                                std::to_string(p.blocks.size()) + " blocks recomputed)")
              << ", attention " << attentionKernelName(p.policy.attention)
              << ", cross-entropy " << crossEntropyKernelName(p.policy.crossEntropy) << ", " << kernelFusionName(p.policy.fusion) << " kernels"
              << (p.policy.sequenceParallelAxis.empty() ? std::string() : ", sequence parallel over " + p.policy.sequenceParallelAxis) << "\n";
    std::cout << "  parallelism      " << parallelismSummary(p, graph) << "\n\n";
    std::cout << "  segments (runs of one type and combination" << (byLayer ? "" : "; +rc: block recomputed") << "):\n";
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
            labels += (k ? " | " : "") + b.label + (b.recompute && !byLayer ? " +rc" : "");
        }
        std::cout << "    #" << i << (j - i > 1 ? "-" + std::to_string(j - 1) : std::string()) << "  T" << s.type << " x " << (j - i)
                  << "  " << ms(s.cost.total()) << " each  [" << labels << "]\n";
        i = j;
    }
    if (!p.baselines.empty()) std::cout << "\n  baselines:\n";
    for (const Baseline& b : p.baselines) {
        std::cout << "    " << b.name << " (" << b.description << "): ";
        if (!b.feasible) std::cout << "not possible: " << b.note << "\n";
        else
            std::cout << ms(b.stepSeconds) << ", " << cli::humanBytes(static_cast<double>(b.memory.total())) << "/device"
                      << (b.fits ? "" : " — does not fit: " + b.note) << "; plan is " << cli::speedup(b.stepSeconds, p.stepSeconds())
                      << "\n";
    }
    if (o.candidates.size() > 1) {
        std::cout << "\n  meshes tried (search objective; simulated step where re-ranked):\n";
        for (const MeshCandidate& c : o.candidates)
            std::cout << "    " << c.mesh << (c.sequenceParallelAxis.empty() ? "" : ", sequence parallel over " + c.sequenceParallelAxis)
                      << (c.contextRing ? ", keys and values in a ring over cp" : "") << ": "
                      << (c.planned ? ms(c.stepSeconds) + (c.simulatedSeconds > 0 ? ", simulated " + ms(c.simulatedSeconds) : std::string())
                                    : "skipped — " + c.note)
                      << "\n";
    }
    std::cout << "\n  planned in " << cli::fixed(p.searchSeconds, 2) << " s\n";
}

}  // namespace

Result<PlanRequest> commonRequestFromArgs(const ParsedArgs& args) {
    PlanRequest r;
    if (args.positionals.size() > 1) return makeError("cli.usage", "expected one MODEL, got " + std::to_string(args.positionals.size()));
    if (!args.positionals.empty()) r.model.source = args.positionals[0];
    auto build = buildOptionsFrom(args);
    if (!build) return build.error();
    r.model.build = *build;
    r.hardware = args.value("--hardware").value_or("h100-sxm");
    if (auto v = args.value("--nodes")) {
        auto n = parsePositive("--nodes", *v);
        if (!n) return n.error();
        r.nodes = *n;
    }
    if (auto v = args.value("--threads")) {
        auto t = parsePositive("--threads", *v);
        if (!t) return t.error();
        r.search.threads = static_cast<int>(std::min<int64_t>(*t, 1024));
    }
    for (const char* option : {"--memory-limit", "--memory-reserve"})
        if (auto v = args.value(option)) {
            auto b = parseBytes(option, *v);
            if (!b) return b.error();
            (std::string(option) == "--memory-limit" ? r.memoryLimitBytes : r.memoryReserveBytes) = *b;
        }
    if (auto v = args.value("--attention")) {
        auto a = parseAttentionKernel(*v);
        if (!a) return makeError("cli.usage", "--attention: '" + *v + "' is not flash, flash2 or eager");
        r.policy.attention = *a;
    }
    if (auto v = args.value("--cross-entropy")) {
        auto c = parseCrossEntropyKernel(*v);
        if (!c) return makeError("cli.usage", "--cross-entropy: '" + *v + "' is not fused, inplace or eager");
        r.policy.crossEntropy = *c;
    }
    if (auto v = args.value("--fusion")) {
        auto f = parseKernelFusion(*v);
        if (!f) return makeError("cli.usage", "--fusion: '" + *v + "' is not compiled or eager");
        r.policy.fusion = *f;
    }
    if (auto db = args.value("--db")) r.profile = ProfileSource{*db, args.value("--db-fingerprint").value_or("")};
    else if (args.value("--db-fingerprint")) return makeError("cli.usage", "--db-fingerprint needs --db FILE");
    return r;
}

Json planRunJson(const PlanRun& run) {
    Json j = planSummaryJson(run.outcome, run.model->graph);
    const Plan& p = run.outcome.plan;
    j["step_seconds"] = p.stepSeconds();
    j["fits"] = p.memory.total() <= p.memoryLimitBytes;
    Json tried = Json::array();
    for (const AccumulationTry& t : run.accumulationTried)
        tried.push_back({{"accumulation_steps", t.steps},
                         {"zero_stage", t.zeroStage},
                         {"planned", t.planned},
                         {"step_seconds", t.stepSeconds > 0 ? Json(t.stepSeconds) : Json(nullptr)},
                         {"memory_bytes", t.memoryBytes > 0 ? Json(t.memoryBytes) : Json(nullptr)},
                         {"note", t.note},
                         {"search_seconds", t.searchSeconds},
                         {"meshes_skipped_on_bounds", t.boundSkips},
                         {"meshes_ruled_out_by_shorter_model", t.shorterSkips},
                         {"searched_on_shorter_model", t.deeperSearches}});
    j["accumulation_tried"] = tried;
    if (!run.outcome.stagesTried.empty()) {
        Json stages = Json::array();
        for (const StagesTry& t : run.outcome.stagesTried)
            stages.push_back({{"pipeline_stages", t.stages},
                              {"chunks_per_rank", t.chunks},
                              {"planned", t.planned},
                              {"step_seconds", t.stepSeconds > 0 ? Json(t.stepSeconds) : Json(nullptr)},
                              {"memory_bytes", t.memoryBytes > 0 ? Json(t.memoryBytes) : Json(nullptr)},
                              {"note", t.note}});
        j["pipeline_stages_tried"] = stages;
    }
    return j;
}

namespace {

// "  [13.5 s; 1 skipped on earlier bounds; 40 ruled out on memory by a 4-layer copy; 12 searched on
// it with a layer repeated]", or "".
std::string searchNotes(const AccumulationTry& t) {
    std::vector<std::string> parts;
    if (t.searchSeconds >= 0.05) parts.push_back(cli::fixed(t.searchSeconds, 1) + " s");
    if (t.boundSkips > 0) parts.push_back(std::to_string(t.boundSkips) + " skipped on earlier bounds");
    if (t.shorterSkips > 0)
        parts.push_back(std::to_string(t.shorterSkips) + " ruled out on memory by a " + std::to_string(kShorterModelLayers) + "-layer copy");
    if (t.deeperSearches > 0)
        parts.push_back(std::to_string(t.deeperSearches) + " searched on " + (t.shorterSkips > 0 ? std::string("it") : "a " + std::to_string(kShorterModelLayers) + "-layer copy") +
                        " with a layer repeated");
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "  [" : "; ") + p;
    return out.empty() ? out : out + "]";
}

}  // namespace

void printPlanRun(const PlanRun& run) {
    printPlan(run.outcome, run.model->graph);
    if (run.accumulationTried.size() > 1) {
        bool stages = false;
        for (const AccumulationTry& t : run.accumulationTried) stages = stages || t.zeroStage != run.accumulationTried.front().zeroStage;
        std::cout << (stages ? "  ZeRO stages and gradient accumulation tried:\n" : "  gradient accumulation tried:\n");
        const Plan& p = run.outcome.plan;
        for (const AccumulationTry& t : run.accumulationTried)
            std::cout << "    " << (stages ? "ZeRO-" + std::to_string(t.zeroStage) + ", " : std::string()) << t.steps << " round"
                      << (t.steps == 1 ? "" : "s") << ": "
                      << (t.stepSeconds > 0 ? ms(t.stepSeconds) + ", " + cli::humanBytes(static_cast<double>(t.memoryBytes)) + "/device" +
                                                  (t.planned ? "" : " — " + t.note)
                                            : "no plan — " + t.note)
                      << (t.steps == p.policy.accumulation && t.zeroStage == zeroStageOf(p.policy) ? "  (chosen)" : "")
                      << searchNotes(t) << "\n";
    }
    if (!run.outcome.stagesTried.empty()) {
        const Plan& p = run.outcome.plan;
        const int32_t chosen = p.pipeline ? p.pipeline->stages : 1, chosenChunks = p.pipeline ? p.pipeline->chunksPerRank : 1;
        const bool chunksSearched = std::all_of(run.outcome.stagesTried.begin(), run.outcome.stagesTried.end(),
                                                [&](const StagesTry& t) { return t.stages == run.outcome.stagesTried.front().stages; });
        std::cout << (chunksSearched ? "  pipeline chunks per rank tried:\n" : "  pipeline stages tried:\n");
        for (const StagesTry& t : run.outcome.stagesTried)
            std::cout << "    "
                      << (chunksSearched ? "vp " + std::to_string(t.chunks)
                          : t.stages == 1 ? std::string("no stages")
                                          : "pp " + std::to_string(t.stages) + (t.chunks > 1 ? " x vp " + std::to_string(t.chunks) : std::string()))
                      << ": "
                      << (t.stepSeconds > 0 ? ms(t.stepSeconds) + ", " + cli::humanBytes(static_cast<double>(t.memoryBytes)) + "/device" +
                                                  (t.planned ? "" : " — " + t.note)
                                            : "no plan — " + t.note)
                      << (t.stages == chosen && (t.stages == 1 || t.chunks == chosenChunks) ? "  (chosen)" : "") << "\n";
    }
}

}  // namespace cfp::cli
