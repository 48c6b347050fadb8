#pragma once
// The planner: from a training graph, a cluster and a mesh choice (one mesh, or every mesh that
// fits the cluster) to the fastest plan whose per-device memory fits (DESIGN.md "Segment DP").
//
// Per mesh: the planning analysis (blocks and segments), the decomposed problem and its search
// (problem.h), then the plan assembled op by op and recomputed by the independent evaluator
// (evaluator.h); the search's objective must equal the evaluator's step time (tests check it on
// every preset). Baselines (baselines.h) are planned on their own meshes beside it.
//
// Pins restrict the search (pin.h). Mesh auto: every factorization of the device count into 1–3
// axes of size ≥ 2 (or the 1-D mesh for one device) that assignLinkClasses accepts (aligned with
// node boundaries); each is planned and the fastest fitting plan wins.
//
// Errors: plan.bad_pin, plan.bad_mesh, plan.infeasible (nothing fits: the message gives the
// smallest per-device memory any plan on the mesh needs, its breakdown, and the shortfall),
// plan.too_large (a frontier beyond SearchOptions::maxStates), plan.cancelled.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "hardware/hardware.h"
#include "plan/evaluator.h"
#include "plan/pin.h"
#include "plan/run_config.h"
#include "plan/plan.h"
#include "plan/problem.h"

namespace cfp {

enum class Baselines : uint8_t { Include, Skip };
// Also run the analysis's independent block check (a violation fails that mesh, error
// analysis.check) and its search-space report, as `cfp analyze` does. Skip: the plan does not
// depend on them, and the evaluator recomputes the returned plan independently anyway.
enum class BlockCheck : uint8_t { Skip, Run };
// Also lay out the evaluator's timeline of the chosen plan (PlanOutcome::evaluation.timeline).
// Skip by default: exporters and the explorer evaluate a plan afresh when they draw a trace.
enum class Timeline : uint8_t { Skip, Record };

// What the searches of one request learn about each mesh for the later ones (runPlan: rounds
// ascending, ZeRO stages ascending at each). A mesh's fastest plan, memory aside, at R rounds and
// ZeRO stage Z bounds every plan on that mesh (and sequence-parallel axis) at R' >= R rounds and
// stage Z' >= Z from below (Z >= 1, or Z' = Z = 0): more rounds and a higher stage only add time
// (each round launches the kernels and reads the weights again and pays its latencies again; a
// higher stage gathers and scatters more, at no lower price; a smaller round's strategies are a
// subset of a larger one's; ZeRO-1 though shards the optimizer's update, which ZeRO-0 runs whole).
// planGraph skips a mesh that bound puts at or above the best plan in hand without building its
// problem, exactly as its own fastest pass would (plan.dominated). tst_planner checks the
// monotonicity this rests on over built-in models and meshes.
class SearchMemo {
public:
    struct Bound {
        double seconds = 0;  // 0: nothing recorded that applies
        int64_t rounds = 0;
        int zeroStage = 0;
    };
    void record(const std::string& mesh, const std::string& sequenceParallelAxis, int64_t rounds, int zeroStage, double fastestSeconds);
    // The largest fastest time recorded for the mesh at no more rounds and no higher stage.
    Bound fastestBound(const std::string& mesh, const std::string& sequenceParallelAxis, int64_t rounds, int zeroStage) const;
    // Meshes skipped on a recorded bound (for the report and the benchmarks).
    int64_t skipped = 0;
    // Meshes said not to fit from the model with fewer layers (PlannerOptions::shorter).
    int64_t shorterSkips = 0;
    // Variants searched on that model with its layer repeated (PlanProblem::deeper).
    int64_t deeperSearches = 0;

    // The analyses (blocks and segments) of one graph's meshes, for the searches at the other ZeRO
    // stages of the same round count (the analysis depends on the graph and the mesh, not the
    // policy). runPlan sets `keepAnalyses` while a later stage of the count will search, and calls
    // forgetAnalyses when the count (and so the graph) changes. Keyed by the graph's address and
    // the analysis options (planMeshes).
    bool keepAnalyses = false;
    std::shared_ptr<const AnalysisReport> analysis(const Graph* graph, const std::string& key) const;
    void keepAnalysis(const Graph* graph, const std::string& key, std::shared_ptr<const AnalysisReport> report);
    void forgetAnalyses();
    int64_t analysesReused = 0;

private:
    std::map<std::pair<std::string, std::string>, std::vector<Bound>> m_seen;
    const Graph* m_analysedGraph = nullptr;
    std::map<std::string, std::shared_ptr<const AnalysisReport>> m_analyses;
};

// The model built again with fewer layers (runPlan, for models the builders make): where every
// plan of the model on a mesh needs more memory than the limit, mesh auto says so from this copy
// (PlanProblem::leastMemoryDeeper: its analysis and node terms, a fraction of the model's) rather
// than from the model's own analysis and problem. The bound is the model's own, exactly.
constexpr int kShorterModelLayers = 4;  // the copy's layers (runPlan)
struct ShorterModel {
    std::shared_ptr<const Graph> graph;  // kShorterModelLayers layers
    int64_t layersLeftOut = 0;           // the model's layers less the copy's
    // Its analyses by mesh (and context axis), made once for the searches of every ZeRO stage (of
    // the one request the copy belongs to: no locking).
    std::map<std::string, std::shared_ptr<const AnalysisReport>> analyses;
};

struct PlannerOptions {
    // Per device: memoryLimitBytes when given, else the hardware's usable memory — its capacity
    // less memoryReserveBytes, or less the spec's own reserve (HardwareSpec::memoryReserveBytes).
    std::optional<int64_t> memoryLimitBytes;
    std::optional<int64_t> memoryReserveBytes;
    std::vector<Pin> pins;
    MemoryPolicy policy;                      // optimizer sharding, recomputation, accumulation (cost/step_policy.h)
    Measurements measurements;                // from a profile DB; empty: the analytic model
    Baselines baselines = Baselines::Include;
    BlockCheck blockCheck = BlockCheck::Skip;
    Timeline timeline = Timeline::Skip;
    SearchOptions search;
    PlanHooks hooks;                          // progress and cancellation
    // planGraph (and planAnalysed) also plan a mesh with sequence parallelism over an intra-node
    // axis (MemoryPolicy::sequenceParallelAxis; cost/op_cost.h prices it for any layout), as one
    // more candidate beside the mesh without it, when policy.sequenceParallelAxis is empty: where
    // the mesh's plan is tensor parallel over the axis (half of the weights' bytes split there), it
    // had no plan that fits, or its fastest plan, memory aside, was within 20% of the best so far.
    // A variant whose plan is not tensor parallel over its axis is dropped (docs/planning.md).
    bool searchSequenceParallel = false;
    // The mesh axis matmuls may also split their input's sequence over (context parallelism,
    // `cfp estimate --config cp=C`: the axis "cp"); AnalysisOptions::sequenceAxis.
    std::string contextParallelAxis;
    // Shared by the searches of one request (runPlan); null: each search on its own.
    std::shared_ptr<SearchMemo> memo;
    // The model with fewer layers (above); null: none.
    std::shared_ptr<ShorterModel> shorter;
};

struct MeshCandidate {
    std::string mesh;            // printed form with link classes
    std::string sequenceParallelAxis;  // the axis sequence parallelism splits over, empty: none
    bool contextRing = false;    // a ring variant: an axis of the mesh named "cp" by the search (planMeshes)
    bool planned = false;        // a plan that fits was found
    double stepSeconds = 0;      // the search's objective (a sum)
    double simulatedSeconds = 0; // its plan's simulated step, where it was re-ranked (else 0)
    int64_t memoryBytes = 0;
    double seconds = 0;          // analysis + search time for this mesh
    std::string note;            // why not planned
};

// One pipeline-stage count a search with the stages searched (`cfp plan --pp auto`) planned.
struct StagesTry {
    int32_t stages = 1;       // 1: no pipeline
    bool planned = false;     // a plan fits
    double stepSeconds = 0;   // its step time
    int64_t memoryBytes = 0;  // its memory per device (the fullest rank's)
    std::string note;         // why not planned
    int32_t chunks = 1;       // model chunks per rank (vp)
};

struct PlanOutcome {
    Plan plan;
    Evaluation evaluation;                 // of the chosen plan (its timeline with Timeline::Record)
    std::vector<MeshCandidate> candidates; // every mesh tried, in order
    Assignment assignment;                 // the search's choice per block (plan.blocks says the same)
    StrategyMask pinned;                   // the pins' restriction on the chosen mesh (empty: none)
    bool memoryBound = false;              // the chosen mesh's fastest plan did not fit (SearchResult::limitBinding)
    // The search was cancelled after some mesh had a plan: the best of the meshes planned so far,
    // without baselines (the meshes not tried are not in `candidates`).
    bool stopped = false;
    // With the pipeline stages searched: every count tried, ascending (empty otherwise).
    std::vector<StagesTry> stagesTried;
    // The chosen mesh's decomposed problem (its analysis and cost tables), for tools that look at
    // alternatives to the plan (plan/alternatives.h). It points into the graph given to planGraph,
    // which must outlive it.
    std::shared_ptr<const PlanProblem> problem;
    int64_t analysesAhead = 0;  // analyses made on the helper thread and used (SearchOptions::analyseAhead)
};

// Plans `graph` on `cluster`. When no mesh under auto has a plan that fits, the error is the one
// of the mesh that comes closest (the smallest need), saying how many meshes were tried.
Result<PlanOutcome> planGraph(const Graph& graph, const Cluster& cluster, const MeshChoice& mesh, const PlannerOptions& options = {});
// The same on one mesh whose analysis the caller already has (it must be planningAnalysis's, or
// analyzeGraph's, on that mesh with link classes); the analysis is not run again.
Result<PlanOutcome> planAnalysed(const Graph& graph, const Cluster& cluster, AnalysisReport analysis, const PlannerOptions& options = {});

// A configuration a user runs (plan/run_config.h), priced as the planner prices its own plans: on
// the mesh dp × tp, every block restricted as the Megatron-style baseline (batch over dp, weights
// column/row parallel over tp), the fastest such plan, with the configuration's optimizer sharding
// (ZeRO stage 0–3) and recomputation (none; selective as flash attention; full per layer:
// RecomputePolicy::Layers; op, per op: RecomputePolicy::SelectiveOps); options.policy.accumulation
// gives the rounds. With pp > 1 the mesh is one stage's (devices / pp) and the plan's layers are
// cut into pp × vp chunks and scheduled (plan/pipeline_plan.h: Plan::pipeline; the step and the
// memory are the pipeline's). The memory limit is not imposed: the plan's memory says whether it
// fits (Plan::memoryLimitBytes).
// Errors: config.unsupported (cp: not modelled yet; ZeRO-2/3 with pp; vp or schedule without pp;
// sp without tp; selective with eager attention), config.devices (dp × tp × pp is not the
// cluster's devices), pipeline.split, schedule.shape, plan.baseline (a block with no such
// strategy), and the planner's.
Result<PlanOutcome> planConfigured(const Graph& graph, const Cluster& cluster, const RunConfig& config, const PlannerOptions& options);
// The configuration's data-parallel degree on the cluster (dp, else devices / tp).
int64_t configuredDataParallel(const RunConfig& config, const Cluster& cluster);

// Mesh candidates for `--mesh auto` on the cluster (printed forms, without link classes).
std::vector<std::string> autoMeshes(int64_t devices, int64_t gpusPerNode);

// The analysis planGraph runs on each mesh: threads, and the block check and search-space report
// only with BlockCheck::Run. A check that ran and failed is an error (analysis.check).
Result<AnalysisReport> planningAnalysis(const Graph& graph, const Mesh& mesh, const PlannerOptions& options);

// `mesh` with its axis `from` named `to` (size and link class kept): the search's ring variants
// name an axis kContextParallelAxis (MemoryPolicy::contextRing); a pipeline's later micro-batch
// counts give it a plain name back.
Result<Mesh> withAxisRenamed(const Mesh& mesh, const std::string& from, const std::string& to);
// The problem the search solves on `mesh` from that analysis: the cost model of `hardware` on the
// mesh, the options' policy, measurements, frontier limit and threads; `frontierCap` > 0 stops
// building where the frontier of the first segments exceeds it (plan.too_large), then setting
// `leastMemoryOnTooLarge` (where given) to a lower bound of every plan's memory there; as it does
// where `infeasibleAbove` > 0 and every plan needs more than that (plan.infeasible,
// ProblemOptions::infeasibleAbove).
Result<PlanProblem> planningProblem(const Graph& graph, const HardwareSpec& hardware, const Mesh& mesh, const PlannerOptions& options,
                                    std::shared_ptr<const AnalysisReport> analysis, int64_t frontierCap = 0, int64_t* leastMemoryOnTooLarge = nullptr,
                                    int64_t infeasibleAbove = 0);

// The per-device memory limit the options give on this hardware.
int64_t memoryLimitFor(const PlannerOptions& options, const HardwareSpec& hardware);

}  // namespace cfp
