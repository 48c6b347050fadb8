#include "plan/planner.h"

#include <cmath>

#include <algorithm>
#include <chrono>
#include <future>
#include <limits>
#include <map>
#include <optional>

#include "plan/memory_passes.h"
#include "plan/pipeline_plan.h"
#include "plan/planner_internal.h"
#include "plan/problem_impl.h"

namespace cfp {

std::vector<std::string> autoMeshes(int64_t devices, int64_t gpusPerNode) {
    std::vector<std::vector<int64_t>> shapes;
    if (devices <= 1) {
        shapes.push_back({1});
    } else {
        shapes.push_back({devices});
        for (int64_t a = 2; a < devices; ++a) {
            if (devices % a) continue;
            shapes.push_back({a, devices / a});
        }
        for (int64_t a = 2; a < devices; ++a) {
            if (devices % a) continue;
            for (int64_t b = 2; b < devices / a; ++b) {
                if ((devices / a) % b) continue;
                const int64_t c = devices / a / b;
                if (c >= 2) shapes.push_back({a, b, c});
            }
        }
    }
    std::vector<std::string> out;
    for (const auto& s : shapes) {
        std::string text;
        for (size_t i = 0; i < s.size(); ++i) text += (i ? "x" : "") + std::to_string(s[i]);
        auto mesh = parseMesh(text, devices);
        if (!mesh) continue;
        if (!assignLinkClasses(*mesh, gpusPerNode)) continue;
        out.push_back(text);
    }
    return out;
}

int64_t memoryLimitFor(const PlannerOptions& options, const HardwareSpec& hardware) {
    if (options.memoryLimitBytes && *options.memoryLimitBytes > 0) return *options.memoryLimitBytes;
    return hardware.memoryBytes - options.memoryReserveBytes.value_or(hardware.memoryReserveBytes);
}

namespace {

// The axis matmuls may also split their input's sequence over (AnalysisOptions::sequenceAxis): the
// caller's, else a mesh axis named "cp" whoever made the mesh (the search's ring variants, the
// user, a plan file being restored).
std::string contextAxisOf(const Mesh& mesh, const std::string& given) {
    return given.empty() && mesh.findAxis(kContextParallelAxis) ? std::string(kContextParallelAxis) : given;
}

}  // namespace

Result<AnalysisReport> planningAnalysis(const Graph& graph, const Mesh& mesh, const PlannerOptions& options) {
    AnalysisOptions analysisOptions;
    analysisOptions.threads = options.search.threads;
    analysisOptions.check = options.blockCheck == BlockCheck::Run;
    analysisOptions.searchSpace = options.blockCheck == BlockCheck::Run;
    analysisOptions.sequenceAxis = contextAxisOf(mesh, options.contextParallelAxis);
    auto analysis = analyzeGraph(graph, mesh, analysisOptions);
    if (!analysis) return analysis.error();
    if (analysis->check.checked && !analysis->check.pass)
        return makeError("analysis.check", "the independent block check failed on mesh " + mesh.toString() + ": " +
                                               analysis->check.firstViolation);
    return analysis;
}

namespace {

// The problem options every planning build on `mesh` shares: the policy, the mesh's label, threads.
ProblemOptions problemOptionsFor(const PlannerOptions& options, const Mesh& mesh) {
    ProblemOptions po;
    po.policy = options.policy;
    po.meshLabel = mesh.toString();
    po.threads = options.search.threads;
    return po;
}

}  // namespace

Result<PlanProblem> planningProblem(const Graph& graph, const HardwareSpec& hardware, const Mesh& mesh, const PlannerOptions& options,
                                    std::shared_ptr<const AnalysisReport> analysis, int64_t frontierCap, int64_t* leastMemoryOnTooLarge, int64_t infeasibleAbove) {
    auto model = CostModel::create(hardware, mesh);
    if (!model) return model.error();
    ProblemOptions po = problemOptionsFor(options, mesh);
    po.frontierCap = frontierCap;
    po.frontierLimit = options.search.maxStates;
    po.leastMemoryOnTooLarge = leastMemoryOnTooLarge;
    po.infeasibleAbove = infeasibleAbove;
    return PlanProblem::build(graph, std::move(analysis), *model, options.measurements, po);
}

namespace {

// The analysis of the model with fewer layers on `mesh` (ShorterModel), made once per mesh.
Result<std::shared_ptr<const AnalysisReport>> shorterAnalysis(ShorterModel& shorter, const Mesh& mesh, const PlannerOptions& options,
                                                              const std::string& analysisKey) {
    std::shared_ptr<const AnalysisReport>& analysis = shorter.analyses[analysisKey];
    if (!analysis) {
        PlannerOptions quiet = options;
        quiet.blockCheck = BlockCheck::Skip;
        auto made = planningAnalysis(*shorter.graph, mesh, quiet);
        if (!made) {
            shorter.analyses.erase(analysisKey);
            return made.error();
        }
        analysis = std::make_shared<const AnalysisReport>(std::move(*made));
    }
    return analysis;
}

// What every plan of the model needs on `mesh` under the options' policy, from the model with fewer
// layers (ShorterModel).
Result<int64_t> leastMemoryFromShorter(ShorterModel& shorter, const HardwareSpec& hardware, const Mesh& mesh, const PlannerOptions& options,
                                       const std::string& analysisKey) {
    auto analysis = shorterAnalysis(shorter, mesh, options, analysisKey);
    if (!analysis) return analysis.error();
    auto model = CostModel::create(hardware, mesh);
    if (!model) return model.error();
    return PlanProblem::leastMemoryDeeper(*shorter.graph, *analysis, *model, options.measurements, problemOptionsFor(options, mesh), shorter.layersLeftOut,
                                          kShorterModelLayers);
}

// The model's problem on `mesh` made from the model with fewer layers (PlanProblem::buildDeeper);
// its copy's build is a fraction of the model's own. plan.infeasible (and `need` set) where every
// plan needs more than `limit` (> 0), said before the copy's pair terms.
Result<PlanProblem> deeperFromShorter(ShorterModel& shorter, const HardwareSpec& hardware, const Mesh& mesh, const PlannerOptions& options,
                                      const std::string& analysisKey, int64_t limit, int64_t* need) {
    auto analysis = shorterAnalysis(shorter, mesh, options, analysisKey);
    if (!analysis) return analysis.error();
    auto model = CostModel::create(hardware, mesh);
    if (!model) return model.error();
    ProblemOptions po = problemOptionsFor(options, mesh);
    po.frontierLimit = options.search.maxStates;
    po.infeasibleAbove = limit;
    po.leastMemoryOnTooLarge = need;
    return PlanProblem::buildDeeper(*shorter.graph, *analysis, *model, options.measurements, po, shorter.layersLeftOut, kShorterModelLayers);
}

}  // namespace

Result<MeshPlan> planOnMesh(const Graph& graph, const Cluster& cluster, const Mesh& mesh, const PlannerOptions& options, int64_t limit,
                            const std::function<Result<StrategyMask>(const PlanProblem&)>& restrict, FrontierCheck frontier,
                            std::shared_ptr<const AnalysisReport> analysis, int64_t* smallestNeed, double* fastestSeconds, const SearchResult* found) {
    if (!analysis) {
        auto fresh = planningAnalysis(graph, mesh, options);
        if (!fresh) return fresh.error();
        analysis = std::make_shared<const AnalysisReport>(std::move(*fresh));
    }
    auto problem = planningProblem(graph, cluster.hardware, mesh, options, std::move(analysis),
                                   frontier == FrontierCheck::FailFast ? options.search.maxStates : 0, smallestNeed,
                                   options.search.briefInfeasibility ? limit : 0);
    if (!problem) return problem.error();
    MeshPlan mp;
    auto mask = restrict(*problem);
    if (!mask) return mask.error();
    mp.mask = *mask;
    // The plan found on an equal problem, where it is one of this problem's and has the same time
    // and memory here (the sums may be taken in another order: within a few units in the last place).
    if (found && problem->checkAssignment(found->assignment) &&
        std::abs(problem->objective(found->assignment) - found->objectiveSeconds) <= 1e-12 * found->objectiveSeconds &&
        problem->memory(found->assignment) == found->memoryBytes) {
        mp.result = *found;
        mp.problem = std::move(*problem);
        return mp;
    }
    auto r = problem->search(limit, mp.mask, options.search, options.hooks, mesh.toString(), smallestNeed, fastestSeconds);
    if (!r) return r.error();
    mp.result = *r;
    mp.problem = std::move(*problem);
    return mp;
}

void SearchMemo::record(const std::string& mesh, const std::string& sequenceParallelAxis, int64_t rounds, int zeroStage, double fastestSeconds) {
    m_seen[{mesh, sequenceParallelAxis}].push_back({fastestSeconds, rounds, zeroStage});
}

SearchMemo::Bound SearchMemo::fastestBound(const std::string& mesh, const std::string& sequenceParallelAxis, int64_t rounds, int zeroStage) const {
    Bound out;
    const auto it = m_seen.find({mesh, sequenceParallelAxis});
    if (it == m_seen.end()) return out;
    for (const Bound& b : it->second)
        // ZeRO-1 shards the optimizer's update, which ZeRO-0 runs whole on every rank: a ZeRO-0
        // bound holds for ZeRO-0 only.
        if (b.rounds <= rounds && b.zeroStage <= zeroStage && (b.zeroStage > 0 || zeroStage == 0) && b.seconds > out.seconds) out = b;
    return out;
}

std::shared_ptr<const AnalysisReport> SearchMemo::analysis(const Graph* graph, const std::string& key) const {
    if (graph != m_analysedGraph) return nullptr;
    const auto it = m_analyses.find(key);
    return it == m_analyses.end() ? nullptr : it->second;
}

void SearchMemo::keepAnalysis(const Graph* graph, const std::string& key, std::shared_ptr<const AnalysisReport> report) {
    if (graph != m_analysedGraph) {
        m_analyses.clear();
        m_analysedGraph = graph;
    }
    m_analyses.insert_or_assign(key, std::move(report));
}

void SearchMemo::forgetAnalyses() {
    m_analyses.clear();
    m_analysedGraph = nullptr;
}

namespace {

// The share of PlanProgress::overall the meshes' searches take; the rest is the evaluator and
// the baselines.
constexpr double kMeshesShare = 0.95;

void reportProgress(const PlannerOptions& options, const std::string& stage, const std::string& mesh, size_t index, size_t count,
                    double best, double overall) {
    if (!options.hooks.progress) return;
    PlanProgress pr;
    pr.stage = stage;
    pr.mesh = mesh;
    pr.meshIndex = static_cast<int>(index);
    pr.meshCount = static_cast<int>(count);
    pr.bestSeconds = best;
    pr.overall = overall;
    options.hooks.progress(pr);
}

// The plan of the best mesh, evaluated, with its per-segment costs and the baselines.
Result<PlanOutcome> finishPlan(const Graph& graph, const Cluster& cluster, const PlannerOptions& options, int64_t limit, MeshPlan best,
                               PlanOutcome out, Clock::time_point start) {
    Plan& plan = out.plan;
    plan.model = graph.name();
    plan.hardware = cluster.hardware.id;
    plan.hardwareName = cluster.hardware.name;
    plan.nodes = cluster.nodes;
    plan.gpusPerNode = cluster.hardware.gpusPerNode;
    plan.memoryLimitBytes = limit;
    plan.pins = options.pins;
    best.problem->fillPlan(best.result.assignment, best.mask, plan);
    plan.predictedStepSeconds = best.result.objectiveSeconds;
    plan.searchExact = best.result.exact;
    plan.searchCutPairs = best.result.cutPairs;
    plan.searchGapSeconds = best.result.gapBoundSeconds;
    auto ev = evaluatePlan(graph, plan, best.problem->model(), options.timeline == Timeline::Record, options.search.threads);
    if (!ev) return ev.error().withContext("evaluator");
    plan.step = ev->step;
    plan.evaluatorStepSeconds = ev->step.total();
    plan.simulated = ev->simulated;
    plan.memory = ev->memory;
    // Per-segment costs from the evaluator's per-op costs (ops decided by the segment's blocks).
    std::vector<int32_t> segOfBlock(best.problem->analysis().blocks.blocks.size(), -1);
    for (const SegmentPlan& sp : plan.segments)
        for (int b = sp.firstBlock; b < sp.firstBlock + sp.blockCount; ++b) segOfBlock[static_cast<size_t>(b)] = sp.index;
    for (const TensorPlan& t : plan.tensors) {
        if (t.block < 0) continue;
        SegmentPlan& sp = plan.segments[static_cast<size_t>(segOfBlock[static_cast<size_t>(t.block)])];
        MemoryBreakdown held;
        addOpShare(sp.cost, held, *ev, t.op);
        sp.memoryBytes += held.total();
    }
    out.evaluation = std::move(*ev);
    if (options.baselines == Baselines::Include) {
        reportProgress(options, "baselines", plan.mesh.toString(), 0, 1, plan.predictedStepSeconds, kMeshesShare + 0.5 * (1 - kMeshesShare));
        auto baselines = planBaselines(graph, cluster, limit, options);
        plan.baselines.insert(plan.baselines.end(), baselines.begin(), baselines.end());
    }
    plan.searchSeconds = since(start);
    out.assignment = best.result.assignment;
    out.pinned = best.mask;
    out.memoryBound = best.result.limitBinding;
    out.problem = std::make_shared<const PlanProblem>(std::move(*best.problem));
    return out;
}

// What a mesh's plan splits: the axes it splits at least half of the trainable weights' bytes over
// (its tensor-parallel axes), and the other axes that split the token inputs' sequence (dim 1 of
// [B, S]: context parallelism, as parallelismSummary says it).
struct PlanAxes {
    std::vector<std::string> weights;
    std::vector<std::string> sequence;
};

PlanAxes planAxes(const MeshPlan& mp) {
    const PlanProblem::Splits split = mp.problem->splits(mp.result.assignment);
    PlanAxes out;
    out.sequence = split.sequence;
    for (const auto& [axis, bytes] : split.weightsOver)
        if (2 * bytes >= split.weightBytes) out.weights.push_back(axis);
    std::erase_if(out.sequence, [&](const std::string& a) { return std::find(out.weights.begin(), out.weights.end(), a) != out.weights.end(); });
    return out;
}

}  // namespace

Result<Mesh> withAxisRenamed(const Mesh& mesh, const std::string& from, const std::string& to) {
    std::vector<MeshAxis> axes = mesh.axes();
    for (MeshAxis& a : axes)
        if (a.name == from) a.name = to;
    return Mesh::create(std::move(axes));
}

namespace {

// Re-ranking by the simulated step (planGraph): planned meshes within 5% of the best objective, at
// most 6 besides it.
constexpr double kRerankSlack = 0.05;
constexpr size_t kRerankKeep = 6;
// How much slower (memory aside) a mesh's own plan may be than the best so far for its
// sequence-parallel variants to be planned (planMeshes).
constexpr double kSpReach = 0.2;

// Plans every mesh of `meshes` (and its sequence-parallel variants) and keeps the fastest; `given`:
// the analysis of meshes[0] when the caller has it.
Result<PlanOutcome> planMeshes(const Graph& graph, const Cluster& cluster, const std::vector<Mesh>& meshes, const PlannerOptions& options,
                               std::shared_ptr<const AnalysisReport> given) {
    const auto start = Clock::now();
    const int64_t limit = memoryLimitFor(options, cluster.hardware);
    // What is planned: every mesh, and with PlannerOptions::searchSequenceParallel each of them
    // again with sequence parallelism over each intra-node axis of more than one device.
    // A variant is planned only where the mesh's own plan splits at least half of the weights over
    // the axis (tensor parallelism for sequence parallelism to extend) or the mesh had no plan that
    // fits.
    // Then, with flash attention, each planned one again with an axis its plan splits the token
    // sequence over (and not the weights) as the context-parallel axis "cp": the keys and values
    // go around a ring beside the attention (MemoryPolicy::contextRing) where the plan without it
    // gathers them on the critical path. Only where that plan was at most kSpReach slower than the
    // best so far: the ring takes at most the keys' and values' exposed transfers off it.
    struct Variant {
        size_t mesh;
        std::string spAxis;
        std::string cpAxis;  // the mesh's axis named kContextParallelAxis in this variant, empty: none
        double parentSeconds = 0;  // a ring variant: the objective of the plan it was made from
    };
    // Also where the mesh's fastest plan, memory aside, was at most kSpReach slower than the best
    // so far (sequence parallelism takes work and memory off the norms and residuals).
    struct BaseOutcome {
        bool infeasible = false;
        std::vector<std::string> weightAxes;
        bool near = false;
    };
    std::vector<std::optional<BaseOutcome>> baseOf(meshes.size());
    // A variant's mesh: link classes bound, its ring axis named "cp".
    auto meshOf = [&](const Variant& v) -> Result<Mesh> {
        auto linked = assignLinkClasses(meshes[v.mesh], cluster.hardware.gpusPerNode);
        if (!linked || v.cpAxis.empty()) return linked;
        return withAxisRenamed(*linked, v.cpAxis, kContextParallelAxis);  // the ring's axis
    };
    // The analysis (blocks and segments) does not depend on the policy: once per mesh and context
    // axis (and once per graph for the request's other ZeRO stages: SearchMemo).
    auto analysisKey = [&](const Mesh& m) {
        return m.toString() + "|" + contextAxisOf(m, options.contextParallelAxis) + (options.blockCheck == BlockCheck::Run ? "|checked" : "");
    };
    // Only among the meshes of --mesh auto (a mesh the user names keeps its axes' names) and
    // without pins (they name the axes of the mesh they were made on).
    const bool ringVariants =
        meshes.size() > 1 && options.pins.empty() && options.contextParallelAxis.empty() && fusedAttention(options.policy.attention);
    Result<std::shared_ptr<const AnalysisReport>> analysis = makeError("plan.internal", "no analysis");
    std::string heldKey;  // whose analysis `analysis` holds
    if (given && !meshes.empty()) {
        if (auto m0 = meshOf({0, {}, {}, 0})) {
            analysis = std::move(given);
            heldKey = analysisKey(*m0);
        }
    }
    std::vector<Variant> variants;
    for (size_t i = 0; i < meshes.size(); ++i) {
        variants.push_back({i, options.policy.sequenceParallelAxis, {}, 0});
        if (!options.searchSequenceParallel || !options.policy.sequenceParallelAxis.empty()) continue;
        auto linked = assignLinkClasses(meshes[i], cluster.hardware.gpusPerNode);
        if (!linked) continue;
        for (const MeshAxis& axis : linked->axes())
            if (axis.size > 1 && axis.link == LinkClass::IntraNode) variants.push_back({i, axis.name, {}, 0});
    }
    PlanOutcome out;
    std::optional<MeshPlan> best;
    size_t bestIndex = 0;  // its index in out.candidates
    // Planned meshes whose objective is within kRerankSlack of the best (at most kRerankKeep), with
    // their index in out.candidates: the step simulator re-ranks them and the best (below).
    std::vector<std::pair<size_t, MeshPlan>> close;
    Error lastError = makeError("plan.infeasible", "no mesh was planned");
    std::optional<Error> closest;  // the infeasible mesh with the smallest need
    size_t dominatedCount = 0;     // variants no faster than the caller's cutoff (SearchOptions::cutoffSeconds)
    int64_t closestNeed = std::numeric_limits<int64_t>::max();
    struct Bounded {
        int64_t need;
        size_t variant;
        std::string mesh;  // its candidate's mesh label
        bool operator<(const Bounded& o) const { return need < o.need || (need == o.need && variant < o.variant); }
    };
    std::vector<Bounded> bounded;  // infeasible variants said from a bound
    std::optional<std::pair<int64_t, Error>> frontierClosest;  // the nearest of those turned away for their frontier
    // With several candidates an infeasible one is said from a bound (SearchOptions::
    // briefInfeasibility); where none fits, the nearest is searched again for its exact report.
    bool brief = variants.size() > 1;
    // One mesh; returns false when the search stops (cancelled with a plan in hand), and fills
    // `wide` with the meshes the fail-fast frontier check turned away.
    std::vector<std::pair<size_t, size_t>> wide;  // (variant, its candidate entry)
    // Progress: mesh k of n (its variants share its k and its slot of PlanProgress::overall);
    // each DP pass of a search takes half of what is left of the slot. Never decreasing (a mesh
    // retried with its frontier cut reports where the search already is).
    double reported = 0;
    auto progressFor = [&](size_t vi, const std::string& label) -> std::function<void(const PlanProgress&)> {
        if (!options.hooks.progress) return nullptr;
        const size_t i = variants[vi].mesh;
        size_t first = vi, last = vi;
        while (first > 0 && variants[first - 1].mesh == i) --first;
        while (last + 1 < variants.size() && variants[last + 1].mesh == i) ++last;
        const double width = kMeshesShare / static_cast<double>(meshes.size()) / static_cast<double>(last - first + 1);
        const double slot = kMeshesShare * static_cast<double>(i) / static_cast<double>(meshes.size()) + width * static_cast<double>(vi - first);
        return [&, i, slot, width, label](const PlanProgress& p) {
            PlanProgress q = p;
            q.mesh = label;
            q.meshIndex = static_cast<int>(i);
            q.meshCount = static_cast<int>(meshes.size());
            const double within = p.stage == "search" && p.pass > 0 ? 1 - std::ldexp(1.0, 1 - p.pass) + std::ldexp(p.fraction, -p.pass) : 0.0;
            reported = std::max(reported, slot + width * within);
            q.overall = reported;
            q.bestSeconds = best ? best->result.objectiveSeconds : 0.0;
            options.hooks.progress(q);
        };
    };
    // The next mesh's analysis is made on a helper thread while this one is built and searched
    // (the build is mostly one thread, the analysis a pure function of the graph and the mesh):
    // for the first later variant on other axes whose analysis is not held, kept or already on
    // its way, unless an earlier search's bound will skip it.
    std::map<std::string, std::future<Result<AnalysisReport>>> prefetched;
    // The cutoff a search started now would have, and an earlier search's bound on a variant
    // (SearchMemo): a variant whose bound reaches the cutoff is skipped without its analysis.
    auto cutoffNow = [&] { return best ? std::min(options.search.cutoffSeconds, best->result.objectiveSeconds) : options.search.cutoffSeconds; };
    auto recordedBound = [&](const std::string& mesh, const std::string& spAxis) {
        return options.memo ? options.memo->fastestBound(mesh, spAxis, options.policy.accumulation, zeroStageOf(options.policy)) : SearchMemo::Bound{};
    };
    auto skippedOnBound = [](const SearchMemo::Bound& known, double cutoff) { return known.seconds > 0 && known.seconds >= cutoff; };
    // Whether variant j is not planned, as things stand (the rules above).
    auto passedOver = [&](size_t j) {
        const Variant& v = variants[j];
        if (!v.cpAxis.empty()) return best && v.parentSeconds > best->result.objectiveSeconds * (1 + kSpReach);
        if (v.spAxis.empty() || v.spAxis == options.policy.sequenceParallelAxis) return false;
        const std::optional<BaseOutcome>& base = baseOf[v.mesh];
        return !base || (!base->infeasible && !base->near && std::find(base->weightAxes.begin(), base->weightAxes.end(), v.spAxis) == base->weightAxes.end());
    };
    // The options variant vi is planned with on its mesh `m`: a mesh axis named "cp" (a ring
    // variant's, or the caller's mesh's) is the context axis, the keys and values in a ring beside
    // flash attention, else gathered; the variant's sequence-parallel axis.
    auto variantOptions = [&](size_t vi, const Mesh& m) {
        PlannerOptions o = options;
        o.contextParallelAxis = contextAxisOf(m, options.contextParallelAxis);
        if (options.contextParallelAxis.empty() && !o.contextParallelAxis.empty())
            o.policy.contextRing = fusedAttention(options.policy.attention);
        o.policy.sequenceParallelAxis = variants[vi].spAxis;
        return o;
    };
    // Variants where nothing fits, from the shorter model (PlannerOptions::shorter): their least
    // memory, 0 where it fits or could not be told. Mesh auto only (one mesh gets its exact report).
    std::map<std::string, int64_t> shorterNeed;  // by mesh and sequence-parallel axis
    auto tooLarge = [&](size_t j, const Mesh& m, const PlannerOptions& meshOptions) -> int64_t {
        if (!options.shorter || !brief || limit <= 0) return 0;
        const std::string key = m.toString() + "|" + variants[j].spAxis;
        if (auto it = shorterNeed.find(key); it != shorterNeed.end()) return it->second;
        auto need = leastMemoryFromShorter(*options.shorter, cluster.hardware, m, meshOptions, analysisKey(m));
        return shorterNeed[key] = need && *need > limit ? *need : 0;
    };
    // Variants searched on the shorter model with its layer repeated (PlanProblem::deeper): mesh
    // auto without pins, as tooLarge. Then the model's own analysis is made only for a plan kept
    // (ownProblem, below), not ahead.
    auto onShorter = [&] { return options.shorter && options.search.deeperSearch && brief && options.pins.empty(); };
    auto prefetchAfter = [&](size_t vi) {
        if (variants.size() < 2 || !options.search.analyseAhead || onShorter()) return;
        for (size_t j = vi + 1; j < variants.size(); ++j) {
            auto m = meshOf(variants[j]);
            if (!m) continue;
            const std::string key = analysisKey(*m);
            if (passedOver(j) || key == heldKey || prefetched.count(key) || (options.memo && options.memo->analysis(&graph, key))) continue;
            if (skippedOnBound(recordedBound(m->toString(), variants[j].spAxis), cutoffNow())) continue;
            if (tooLarge(j, *m, variantOptions(j, *m)) > 0) continue;
            PlannerOptions quiet = options;
            quiet.hooks = PlanHooks{};
            prefetched.emplace(key, std::async(std::launch::async, [&graph, mesh = *m, quiet] { return planningAnalysis(graph, mesh, quiet); }));
            return;
        }
    };
    auto tryMesh = [&](size_t vi, FrontierCheck check) -> Result<bool> {
        const auto t0 = Clock::now();
        prefetchAfter(vi);
        const size_t i = variants[vi].mesh;
        MeshCandidate cand;
        auto mesh = meshOf(variants[vi]);
        if (!mesh) return mesh.error().withContext("--mesh");
        cand.mesh = mesh->toString();
        cand.sequenceParallelAxis = variants[vi].spAxis;
        cand.contextRing = !variants[vi].cpAxis.empty();
        const bool isBase = variants[vi].spAxis == options.policy.sequenceParallelAxis && variants[vi].cpAxis.empty();
        PlannerOptions meshOptions = variantOptions(vi, *mesh);
        meshOptions.hooks.progress =
            progressFor(vi, cand.mesh + (cand.sequenceParallelAxis.empty() ? "" : ", sequence parallel over " + cand.sequenceParallelAxis));
        if (meshOptions.hooks.progress) {
            PlanProgress pr;
            pr.stage = "analysis";
            meshOptions.hooks.progress(pr);
        }
        int64_t need = 0;
        // A mesh whose fastest plan is no faster than the best so far is skipped (exact).
        meshOptions.search.briefInfeasibility = brief;
        meshOptions.search.cutoffSeconds = cutoffNow();
        double fastest = 0;
        // A bound an earlier search of the request recorded (SearchMemo): skipped as its own
        // fastest pass would skip it, without the analysis and the problem.
        const int64_t rounds = options.policy.accumulation;
        const int zero = zeroStageOf(options.policy);
        const SearchMemo::Bound known = recordedBound(cand.mesh, cand.sequenceParallelAxis);
        auto search = [&]() -> Result<MeshPlan> {
            if (skippedOnBound(known, meshOptions.search.cutoffSeconds)) {
                fastest = known.seconds;
                ++options.memo->skipped;
                return makeError("plan.dominated", "no plan on mesh " + cand.mesh + " is faster than " + memory_passes::millis(meshOptions.search.cutoffSeconds) +
                                                       " (its fastest, memory aside, took " + memory_passes::millis(known.seconds) + " at " +
                                                       std::to_string(known.rounds) + (known.rounds == 1 ? " round" : " rounds") + " and ZeRO-" +
                                                       std::to_string(known.zeroStage) + "; more rounds and higher stages only add time)");
            }
            // Searched on the shorter model with its layer repeated: where no plan here is of use
            // (none fits, told before the copy's pair terms as tooLarge tells it; dominated; none
            // fits after all), that is the answer; a plan it finds is taken over by the model's own
            // problem below. Where the copy cannot stand for the model (or its frontier is too
            // wide), the model's own problem is searched.
            if (onShorter()) {
                auto deeper = deeperFromShorter(*options.shorter, cluster.hardware, *mesh, meshOptions, analysisKey(*mesh), limit, &need);
                if (!deeper && deeper.error().code == "plan.infeasible") {
                    if (options.memo) ++options.memo->shorterSkips;
                    return deeper.error();
                }
                if (deeper) {
                    auto r = deeper->search(limit, {}, meshOptions.search, meshOptions.hooks, mesh->toString(), &need, &fastest);
                    if (r || r.error().code != "plan.too_large") {
                        if (options.memo) ++options.memo->deeperSearches;
                        if (options.memo && fastest > 0) options.memo->record(cand.mesh, cand.sequenceParallelAxis, rounds, zero, fastest);
                        if (!r) return r.error();
                        // The model's own problem is made only if the plan is kept (ownProblem).
                        MeshPlan onCopy;
                        onCopy.result = std::move(*r);
                        onCopy.problem = std::move(*deeper);
                        onCopy.variant = vi;
                        return onCopy;
                    }
                }
            } else if (const int64_t bound = tooLarge(vi, *mesh, meshOptions); bound > 0) {
                need = bound;
                if (options.memo) ++options.memo->shorterSkips;
                return noPlanFits(cand.mesh, limit, need);
            }
            const std::string key = analysisKey(*mesh);
            if (heldKey != key) {
                if (auto kept = options.memo ? options.memo->analysis(&graph, key) : nullptr) {
                    analysis = std::move(kept);
                    ++options.memo->analysesReused;
                } else if (auto ahead = prefetched.find(key); ahead != prefetched.end()) {
                    Result<AnalysisReport> made = ahead->second.get();
                    prefetched.erase(ahead);
                    ++out.analysesAhead;
                    if (made)
                        analysis = std::make_shared<const AnalysisReport>(std::move(*made));
                    else
                        analysis = made.error();
                } else if (auto fresh = planningAnalysis(graph, *mesh, meshOptions)) {
                    analysis = std::make_shared<const AnalysisReport>(std::move(*fresh));
                } else {
                    analysis = fresh.error();
                }
                heldKey = key;
            }
            if (!analysis) return analysis.error();
            std::shared_ptr<const AnalysisReport> shared = *analysis;
            // Held while a variant of this mesh on the same axes may follow (the problem holds it too).
            if (vi + 1 >= variants.size() || variants[vi + 1].mesh != i || variants[vi + 1].cpAxis != variants[vi].cpAxis) {
                heldKey.clear();
                analysis = makeError("plan.internal", "no analysis");
            }
            auto planned = planOnMesh(graph, cluster, *mesh, meshOptions, limit, [&](const PlanProblem& p) { return p.applyPins(options.pins); }, check,
                                      shared, &need, &fastest);
            if (options.memo && fastest > 0) options.memo->record(cand.mesh, cand.sequenceParallelAxis, rounds, zero, fastest);
            // Kept for the count's later ZeRO stages unless they will skip the mesh on the bound
            // just recorded (their cutoff is no larger than this one).
            if (options.memo && options.memo->keepAnalyses && !(fastest > 0 && fastest >= meshOptions.search.cutoffSeconds))
                options.memo->keepAnalysis(&graph, key, std::move(shared));
            return planned;
        };
        auto mp = search();
        cand.seconds = since(t0);
        if (!mp && mp.error().code == "plan.dominated" && (best || variants.size() > 1)) {
            if (isBase && best && fastest > 0 && fastest <= best->result.objectiveSeconds * (1 + kSpReach))
                baseOf[i] = BaseOutcome{false, {}, true};
            cand.note = mp.error().message;
            if (!best) lastError = mp.error();
            ++dominatedCount;
            out.candidates.push_back(cand);
            return true;
        }
        if (!mp && mp.error().code == "plan.cancelled" && best) {
            // Cancelled with a plan in hand: keep the best so far rather than nothing.
            cand.note = "search cancelled";
            out.candidates.push_back(cand);
            out.stopped = true;
            return false;
        }
        if (!mp) {
            if (mp.error().code == "plan.cancelled" || mp.error().code == "plan.bad_pin" || variants.size() == 1) return mp.error();
            bool wideFrontier = false;
            if (mp.error().code == "plan.too_large" && check == FrontierCheck::FailFast) {
                // Every plan here needs more than the limit (the build's bound): infeasible like any
                // other mesh, not worth a cut frontier.
                wideFrontier = true;
                if (limit > 0 && need > limit)
                    mp = noPlanFits(cand.mesh, limit, need);
                else
                    wide.emplace_back(vi, out.candidates.size());
            }
            cand.note = mp.error().message;
            lastError = mp.error();
            if (isBase && mp.error().code == "plan.infeasible") baseOf[i] = BaseOutcome{true, {}};
            if (mp.error().code == "plan.infeasible" && need > 0 && need < closestNeed) {
                closestNeed = need;
                closest = mp.error();
            }
            if (mp.error().code == "plan.infeasible" && need > 0 && brief) {
                if (wideFrontier) {
                    // Not searched again (its frontier is too wide): its bound stands.
                    if (!frontierClosest || need < frontierClosest->first) frontierClosest = std::make_pair(need, mp.error());
                } else {
                    bounded.push_back({need, vi, cand.mesh});
                }
            }
            out.candidates.push_back(cand);
            return true;
        }
        // Sequence parallelism splits along the sequence what tensor parallelism leaves whole: over
        // an axis that is not tensor-parallel it is not that (the plan is the mesh's own plan, or
        // it trades a gradient's all-reduce for its halves), and a framework would not run it.
        const bool variant = variants[vi].spAxis != options.policy.sequenceParallelAxis;  // one of ours, not the caller's policy
        const PlanAxes axes = variant || variants.size() > meshes.size() || ringVariants ? planAxes(*mp) : PlanAxes{};
        const std::vector<std::string>& split = axes.weights;
        // Its ring variants (above), planned after the mesh's other variants.
        const double reach = std::min(best ? best->result.objectiveSeconds : mp->result.objectiveSeconds, mp->result.objectiveSeconds) * (1 + kSpReach);
        if (ringVariants && variants[vi].cpAxis.empty() && !mesh->findAxis(kContextParallelAxis) && mp->result.objectiveSeconds <= reach) {
            size_t at = vi + 1;
            while (at < variants.size() && variants[at].mesh == i) ++at;
            for (const std::string& a : axes.sequence) {
                if (a == variants[vi].spAxis || mesh->axisSize(a).value_or(1) <= 1) continue;
                const Variant ring{i, variants[vi].spAxis, a, mp->result.objectiveSeconds};
                if (std::none_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.mesh == ring.mesh && v.spAxis == ring.spAxis && v.cpAxis == ring.cpAxis; }))
                    variants.insert(variants.begin() + static_cast<std::ptrdiff_t>(at++), ring);
            }
        }
        if (isBase) {
            baseOf[i] = BaseOutcome{false, split};
        } else if (!variants[vi].cpAxis.empty() &&
                   std::find(axes.sequence.begin(), axes.sequence.end(), std::string(kContextParallelAxis)) == axes.sequence.end()) {
            // Planned again with the axis named cp, the plan split something else over it (the
            // batch): no sequence goes around a ring, and the mesh's own plan says it already.
            cand.note = "the plan splits no token sequence over " + std::string(kContextParallelAxis) + " (no ring to run)";
            out.candidates.push_back(cand);
            return true;
        } else if (variant && std::find(split.begin(), split.end(), cand.sequenceParallelAxis) == split.end()) {
            cand.note = "less than half of the weights are split over " + cand.sequenceParallelAxis +
                        " (no tensor parallelism for sequence parallelism to extend)";
            out.candidates.push_back(cand);
            return true;
        }
        cand.planned = true;
        cand.stepSeconds = mp->result.objectiveSeconds;
        cand.memoryBytes = mp->result.memoryBytes;
        out.candidates.push_back(cand);
        // The best by the objective, and the planned meshes close to it, kept for re-ranking.
        if (!best || mp->result.objectiveSeconds < best->result.objectiveSeconds) {
            if (best) close.emplace_back(bestIndex, std::move(*best));
            best = std::move(*mp);
            bestIndex = out.candidates.size() - 1;
        } else {
            close.emplace_back(out.candidates.size() - 1, std::move(*mp));
        }
        std::erase_if(close, [&](const auto& c) { return c.second.result.objectiveSeconds > best->result.objectiveSeconds * (1 + kRerankSlack); });
        if (close.size() > kRerankKeep) {
            std::sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.second.result.objectiveSeconds < b.second.result.objectiveSeconds; });
            close.resize(kRerankKeep);
        }
        return true;
    };
    for (size_t i = 0; i < variants.size(); ++i) {
        if (passedOver(i)) continue;
        auto go = tryMesh(i, variants.size() > 1 ? FrontierCheck::FailFast : FrontierCheck::Skip);
        if (!go) return go.error();
        if (!*go) break;
    }
    // No mesh planned and some were turned away for a wide frontier: plan those with the frontier
    // cut (ProblemOptions::frontierLimit; the plan is not exact) rather than give up.
    if (!best && !out.stopped && !wide.empty()) {
        // Their first attempts leave the report (no candidate is planned yet, so no index that
        // matters moves).
        const std::vector<std::pair<size_t, size_t>> retry = std::move(wide);
        for (auto it = retry.rbegin(); it != retry.rend(); ++it)
            out.candidates.erase(out.candidates.begin() + static_cast<std::ptrdiff_t>(it->second));
        for (const auto& entry : retry) {
            auto go = tryMesh(entry.first, FrontierCheck::Skip);
            if (!go) return go.error();
            if (!*go) break;
        }
    }
    if (!best && closest && brief && !out.stopped) {
        // The nearest mesh's exact least memory and its breakdown, for the report: the meshes
        // searched again in the order of their bounds until a bound is no smaller than the least
        // exact need found (a mesh's need is at least its bound).
        brief = false;
        std::sort(bounded.begin(), bounded.end());
        closestNeed = std::numeric_limits<int64_t>::max();
        closest.reset();
        for (const Bounded& b : bounded) {
            if (b.need >= closestNeed || options.hooks.cancelled()) break;
            const size_t vi = b.variant;
            std::erase_if(out.candidates, [&](const MeshCandidate& c) { return c.mesh == b.mesh && c.sequenceParallelAxis == variants[vi].spAxis; });
            heldKey.clear();
            analysis = makeError("plan.internal", "no analysis");
            auto go = tryMesh(vi, FrontierCheck::Skip);
            if (!go) return go.error();
        }
        if (frontierClosest && frontierClosest->first < closestNeed) {
            closestNeed = frontierClosest->first;
            closest = frontierClosest->second;
        }
    }
    // "the 22 meshes (and 18 sequence-parallel variants)": what was searched, for the reports below.
    auto meshesTried = [&] {
        const auto tried = std::count_if(out.candidates.begin(), out.candidates.end(), [&](const MeshCandidate& c) {
            return !c.contextRing && c.sequenceParallelAxis != options.policy.sequenceParallelAxis;
        });
        const auto rings = std::count_if(out.candidates.begin(), out.candidates.end(), [](const MeshCandidate& c) { return c.contextRing; });
        std::vector<std::string> more;
        if (tried > 0) more.push_back(std::to_string(tried) + " sequence-parallel variant" + (tried == 1 ? "" : "s"));
        if (rings > 0) more.push_back(std::to_string(rings) + " context-ring variant" + (rings == 1 ? "" : "s"));
        return "the " + std::to_string(meshes.size()) + " meshes" +
               (more.empty() ? std::string() : " (and " + more.front() + (more.size() > 1 ? ", " + more.back() : std::string()) + ")");
    };
    const bool cutoff = std::isfinite(options.search.cutoffSeconds);
    if (!best && closest) {
        if (dominatedCount > 0 && cutoff)
            // Some were pruned as no faster than a plan the caller has: not shown not to fit.
            return makeError("plan.dominated", "no plan on " + meshesTried() + " both fits and is faster than " +
                                                   memory_passes::millis(options.search.cutoffSeconds) + ": " +
                                                   std::to_string(dominatedCount) + " of them are no faster and none of the others fits; the closest: " +
                                                   closest->message,
                             closest->where);
        const std::string what = meshes.size() == 1 ? "no plan fits with or without sequence parallelism" : "none of " + meshesTried() + " tried fits";
        return makeError(closest->code, what + "; the closest: " + closest->message, closest->where);
    }
    if (!best && dominatedCount > 1 && lastError.code == "plan.dominated" && cutoff)
        return makeError("plan.dominated", "no plan on " + meshesTried() + " is faster than " + memory_passes::millis(options.search.cutoffSeconds) +
                                               "; the last: " + lastError.message);
    if (!best) return lastError;
    // A plan kept that was found on the shorter copy: the model's own analysis and problem take it
    // over (its time and memory checked there; searched there where they differ).
    auto ownProblem = [&](MeshPlan& mp) -> Status {
        if (!mp.variant) return {};
        const size_t vi = *mp.variant;
        auto mesh = meshOf(variants[vi]);
        if (!mesh) return mesh.error();
        PlannerOptions meshOptions = variantOptions(vi, *mesh);
        meshOptions.hooks.progress = nullptr;
        meshOptions.search.cutoffSeconds = std::numeric_limits<double>::infinity();  // the plan is kept: no cutoff if searched again
        const std::string key = analysisKey(*mesh);
        std::shared_ptr<const AnalysisReport> own = options.memo ? options.memo->analysis(&graph, key) : nullptr;
        if (!own) {
            auto made = planningAnalysis(graph, *mesh, meshOptions);
            if (!made) return made.error();
            own = std::make_shared<const AnalysisReport>(std::move(*made));
            if (options.memo && options.memo->keepAnalyses) options.memo->keepAnalysis(&graph, key, own);
        }
        const SearchResult found = mp.result;
        auto planned = planOnMesh(graph, cluster, *mesh, meshOptions, limit, [&](const PlanProblem& p) { return p.applyPins(options.pins); },
                                  FrontierCheck::Skip, std::move(own), nullptr, nullptr, &found);
        if (!planned) return planned.error();
        mp = std::move(*planned);
        return {};
    };
    if (auto st = ownProblem(*best); !st) return st.error();
    for (auto& entry : close)
        if (auto st = ownProblem(entry.second); !st) return st.error();
    // Re-ranking: the objective is a sum (overlapped collectives at their contention and what their
    // layer's compute cannot hide: cost/op_cost.h overlappedCharge); the step shown is simulated.
    // Among the best mesh's plan and the close ones, the fastest simulated wins.
    if (!close.empty() && !out.stopped) {
        auto simulated = [&](const MeshPlan& mp) -> std::optional<double> {
            Plan p;
            mp.problem->fillPlan(mp.result.assignment, mp.mask, p);
            auto ev = evaluatePlan(graph, p, mp.problem->model(), false, options.search.threads);
            if (!ev) return std::nullopt;
            return ev->simulated.seconds;
        };
        double bestSim = simulated(*best).value_or(std::numeric_limits<double>::infinity());
        out.candidates[bestIndex].simulatedSeconds = std::isfinite(bestSim) ? bestSim : 0.0;
        for (auto& [index, mp] : close) {
            const auto sim = simulated(mp);
            if (!sim) continue;
            out.candidates[index].simulatedSeconds = *sim;
            if (*sim < bestSim) {
                bestSim = *sim;
                std::swap(*best, mp);
                std::swap(bestIndex, index);
            }
        }
    }
    if (out.stopped) {
        PlannerOptions finish = options;
        finish.baselines = Baselines::Skip;  // they would be cancelled too
        return finishPlan(graph, cluster, finish, limit, std::move(*best), std::move(out), start);
    }
    return finishPlan(graph, cluster, options, limit, std::move(*best), std::move(out), start);
}

}  // namespace

Result<PlanOutcome> planGraph(const Graph& graph, const Cluster& cluster, const MeshChoice& choice, const PlannerOptions& options) {
    const int64_t devices = cluster.devices();
    std::vector<Mesh> meshes;
    if (choice.isAuto()) {
        for (const std::string& text : autoMeshes(devices, cluster.hardware.gpusPerNode)) {
            auto parsed = parseMesh(text, devices);
            if (!parsed) return parsed.error().withContext("mesh");
            meshes.push_back(std::move(*parsed));
        }
        if (meshes.empty()) return makeError("plan.bad_mesh", "no mesh of " + std::to_string(devices) + " devices aligns with nodes of " +
                                                                  std::to_string(cluster.hardware.gpusPerNode) + " GPUs");
    } else {
        if (auto st = checkDeviceCount(choice.mesh(), devices); !st) return st.error().withContext("--mesh");
        meshes = {choice.mesh()};
    }
    return planMeshes(graph, cluster, meshes, options, nullptr);
}

Result<PlanOutcome> planAnalysed(const Graph& graph, const Cluster& cluster, AnalysisReport analysis, const PlannerOptions& options) {
    const Mesh mesh = analysis.blocks.mesh;
    if (auto st = checkDeviceCount(mesh, cluster.devices()); !st) return st.error().withContext("--mesh");
    return planMeshes(graph, cluster, {mesh}, options, std::make_shared<const AnalysisReport>(std::move(analysis)));
}

int64_t configuredDataParallel(const RunConfig& config, const Cluster& cluster) {
    return config.dp.value_or(std::max<int64_t>(1, cluster.devices() / (config.tp.value_or(1) * config.pp.value_or(1) * config.cp.value_or(1))));
}

Result<PlanOutcome> planConfigured(const Graph& graph, const Cluster& cluster, const RunConfig& config, const PlannerOptions& options) {
    const auto start = Clock::now();
    auto unsupported = [](const std::string& what) {
        return makeError("config.unsupported", what + " is not modelled yet", "--config");
    };
    const int64_t pp = config.pp.value_or(1);
    if (pp > 1 && config.zero.value_or(1) >= 2)
        return unsupported("ZeRO-" + std::to_string(*config.zero) + " with pipeline parallelism (Megatron-LM runs pp with ZeRO-1, its distributed optimizer)");
    if (pp == 1 && (config.vp.value_or(1) > 1 || config.schedule || config.ppFirst || config.ppLast))
        return makeError("config.unsupported", "vp, pp_first, pp_last and schedule need pp > 1", "--config");
    if ((config.ppFirst || config.ppLast) && config.vp.value_or(1) > 1)
        return unsupported("pp_first and pp_last with virtual stages (vp > 1)");
    // Selective recomputation (Korthikanti et al.: the attention core's scores, softmax and dropout
    // recomputed in the backward, nothing else) is what flash attention does: the same saved
    // activations and the same extra work (cost/op_cost.h, "Attention cores").
    if (config.recompute == RecomputeMode::Selective && !fusedAttention(options.policy.attention))
        return unsupported("selective recomputation with eager attention (flash attention recomputes the attention core: use it)");
    const int64_t tp = config.tp.value_or(1), dp = configuredDataParallel(config, cluster), cp = config.cp.value_or(1);
    if (config.sequenceParallel.value_or(false) && tp == 1)
        return makeError("config.unsupported", "sp=on needs tp > 1: sequence parallelism splits what tensor parallelism leaves whole", "--config");
    if (config.cp && cp == 1 && config.cpRing)
        return makeError("config.unsupported",
                         std::string("cp_comm=") + (*config.cpRing ? "p2p" : "all_gather") +
                             " needs cp > 1: it says how context parallelism passes the keys and values (leave cp out and the estimate "
                             "chooses it where nothing fits without it)",
                         "--config");
    if (cp > 1 && pp > 1) return unsupported("context parallelism with pipeline stages (cp=" + std::to_string(cp) + ", pp=" + std::to_string(pp) + ")");
    if (tp * dp * pp * cp != cluster.devices()) {
        std::string names = "dp × tp", values = std::to_string(dp) + " × " + std::to_string(tp);
        if (cp > 1) names += " × cp", values += " × " + std::to_string(cp);
        if (pp > 1) names += " × pp", values += " × " + std::to_string(pp);
        return makeError("config.devices", names + " = " + values + " = " + std::to_string(dp * tp * pp * cp) + " devices, the cluster has " +
                                               std::to_string(cluster.devices()),
                         "--config");
    }
    PipelineSettings pipeline;
    if (pp > 1) {
        pipeline.stages = static_cast<int32_t>(pp);
        pipeline.chunksPerRank = static_cast<int32_t>(config.vp.value_or(defaultChunksPerRank(config.schedule.value_or(PipeScheduleKind::OneFOneB))));
        pipeline.schedule = config.schedule.value_or(defaultPipeSchedule(pipeline.chunksPerRank));
        if (config.ppFirst || config.ppLast) {
            // Megatron-LM's --decoder-first/last-pipeline-num-layers: the other stages share the
            // rest evenly.
            const int32_t layers = layerCount(graph);
            const int64_t inner = pp - (config.ppFirst ? 1 : 0) - (config.ppLast ? 1 : 0);
            const int64_t rest = layers - config.ppFirst.value_or(0) - config.ppLast.value_or(0);
            if (inner == 0 && rest != 0)
                return makeError("config.split",
                                 "pp_first and pp_last hold " + std::to_string(layers - rest) + " layers; the model has " + std::to_string(layers),
                                 "--config");
            if (inner > 0 && (rest < inner || rest % inner != 0))
                return makeError("config.split",
                                 "pp_first and pp_last leave " + std::to_string(std::max<int64_t>(0, rest)) + " of the " + std::to_string(layers) +
                                     " layers to " + std::to_string(inner) + " other stage" + (inner == 1 ? "" : "s") +
                                     ", which must have at least one each and as many as each other",
                                 "--config");
            const int32_t each = inner > 0 ? static_cast<int32_t>(rest / inner) : 0;
            pipeline.chunkLayers.assign(static_cast<size_t>(pp), each);
            if (config.ppFirst) pipeline.chunkLayers.front() = static_cast<int32_t>(*config.ppFirst);
            if (config.ppLast) pipeline.chunkLayers.back() = static_cast<int32_t>(*config.ppLast);
        }
    }
    // Megatron-LM's rank order, innermost first: tensor, context, data (then pipeline).
    std::string meshText;
    if (dp > 1) meshText = "dp=" + std::to_string(dp);
    if (cp > 1) meshText += (meshText.empty() ? "" : ",") + std::string("cp=") + std::to_string(cp);
    if (tp > 1) meshText += (meshText.empty() ? "" : ",") + std::string("tp=") + std::to_string(tp);
    if (meshText.empty()) meshText = "dp=1";
    // With pipeline stages the mesh is one stage's: its devices are consecutive ranks, the stages
    // side by side (Megatron-LM's order: tensor, data, pipeline).
    auto parsed = parseMesh(meshText, cluster.devices() / pp);
    if (!parsed) return parsed.error().withContext("--config");
    auto mesh = assignLinkClasses(*parsed, cluster.hardware.gpusPerNode);
    if (!mesh) return mesh.error().withContext("--config");
    PlannerOptions o = options;
    o.policy.optimizerSharding = config.zero.value_or(1) >= 1;
    o.policy.zeroStage = config.zero.value_or(1);
    // Full recomputation as frameworks run it: per layer, keeping the layer's input.
    // torchtitan's per-op selective checkpointing: per layer too, keeping what it saves.
    o.policy.recompute = config.recompute == RecomputeMode::Full ? RecomputePolicy::Layers
                         : config.recompute == RecomputeMode::Op ? RecomputePolicy::SelectiveOps
                                                                  : RecomputePolicy::None;
    // A pipeline rank's parameters: 1/pp of the program's (step_policy.h).
    o.policy.pipelineStages = pp;
    // Sequence parallelism over the tensor-parallel axis (cost/op_cost.h).
    o.policy.sequenceParallelAxis = config.sequenceParallel.value_or(false) ? "tp" : "";
    // The schedule (plan/step_sim.h); keys left out keep the request's.
    if (config.overlap) setOverlapWord(o.policy, *config.overlap);
    if (config.bucketMb) o.policy.bucketBytes = *config.bucketMb * 1'000'000;
    o.baselines = Baselines::Skip;
    o.pins.clear();
    o.contextParallelAxis = cp > 1 ? kContextParallelAxis : "";
    // The keys and values around a ring beside the attention unless cp_comm=all_gather; the ring
    // runs inside fused (flash) attention kernels, so eager attention all-gathers them.
    o.policy.contextRing = cp > 1 && config.cpRing.value_or(fusedAttention(o.policy.attention));
    if (o.policy.contextRing && !fusedAttention(o.policy.attention))
        return makeError("config.unsupported",
                         "cp_comm=p2p passes the keys and values around the ring inside fused (flash) attention kernels; "
                         "use --attention flash, or cp_comm=all_gather with eager attention",
                         "--config");
    const int64_t limit = memoryLimitFor(options, cluster.hardware);
    std::vector<std::string> batchAxes;
    if (dp > 1) batchAxes.push_back("dp");
    const std::string weightAxis = tp > 1 ? "tp" : "";
    reportProgress(o, "search", mesh->toString(), 0, 1, 0.0, 0.0);
    std::string note;
    auto mp = planOnMesh(graph, cluster, *mesh, o, 0, [&](const PlanProblem& p) -> Result<StrategyMask> {
        auto mask = baselineMask(p, batchAxes, weightAxis, note, o.contextParallelAxis);
        if (mask.empty()) return makeError("plan.baseline", note);
        return mask;
    }, FrontierCheck::Skip);
    if (!mp) return mp.error();
    PlanOutcome out;
    MeshCandidate cand;
    cand.mesh = mesh->toString();
    cand.planned = true;
    cand.stepSeconds = mp->result.objectiveSeconds;
    cand.memoryBytes = mp->result.memoryBytes;
    cand.seconds = since(start);
    out.candidates.push_back(cand);
    auto done = finishPlan(graph, cluster, o, limit, std::move(*mp), std::move(out), start);
    if (!done) return done;
    if (pp > 1) {
        if (auto ok = applyPipeline(graph, done->plan, done->evaluation, done->problem->model(), pipeline); !ok) return ok.error();
    }
    // Under recomputation per layer the search's memory terms bound a layer block by block; the
    // evaluator's memory is the layer's (step_policy.h).
    done->candidates.back().memoryBytes = done->plan.memory.total();
    return done;
}

}  // namespace cfp
