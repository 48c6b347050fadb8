#pragma once
// The planner: from a training graph, a cluster and a mesh (or every mesh that fits the cluster)
// to the fastest plan whose per-device memory fits (DESIGN.md "Segment DP").
//
// 1. Analysis (analysis/analysis.h): ParallelBlocks with their strategies, the segment chain.
// 2. Every op's sharding as a function of ONE block's strategy. Block members take the block's
//    stored shardings. Every other op follows, in graph order, its first operand whose producer
//    depends on a block, the most recently computed one (else its first non-source operand): its sharding propagates forward from
//    that operand's sharding alone (other operands are read as the op then needs them; a result
//    that becomes a partial sum is completed by the op's own all-reduce). Ops with no such
//    operand, sources outside blocks and ops without a sharding rule are replicated and fixed.
// 3. Costs (cost/cost_model.h) then split exactly into: a constant (fixed ops and the edges
//    between them), a term per block and strategy (its ops' kernels and own collectives, edges
//    within the block's ops and from fixed ops, memory), and a term per pair of blocks and pair of
//    strategies (resharding and fusion on edges between their ops).
// 4. Segment DP over the chain of segments. A segment's state is its combination (one strategy
//    per block); the DP is carried out block by block in segment order, keeping as state only the
//    strategies of the blocks whose edges cross the current position (the frontier), which is
//    what the segment-to-segment transition depends on. That makes it exact and keeps the state
//    small: for a GPT layer chain the frontier is a few blocks. Every state keeps the Pareto set
//    of (time, memory sum, largest working set) labels, so the per-device memory limit is a true
//    constraint; a first pass keeps only the fastest label and is enough whenever its plan fits.
//    If a state's Pareto set exceeds PlannerOptions::labelCap the set is thinned (spread over
//    memory) and the result is marked inexact (Plan::searchExact = false).
// 5. The plan is assembled op by op and recomputed by the independent evaluator (evaluator.h);
//    the DP's objective must equal the evaluator's step time (tests check it on every preset).
//
// Pins (restrictions of the DP): "SEG=COMBO" pins segment SEG (its index in the chain, or "T<k>"
// for every segment of type k) to COMBO, a comma-separated list with one entry per block of the
// segment: a strategy label ("x:rows") or index, or "*" for free; "b<N>=STRATEGY" (or
// "block:N=…") pins block N. A pin that names no segment/block or no strategy is an error
// (plan.bad_pin).
//
// Mesh auto: every factorization of the device count into 1–3 axes of size ≥ 2 (or the 1-D mesh
// for one device) that assignLinkClasses accepts (aligned with node boundaries); each is planned
// and the fastest fitting plan wins. Baselines: data parallel (batch split over one axis of all
// devices, weights replicated) and Megatron-style (mesh dp=nodes × tp=GPUs per node: batch over
// dp, every block splitting its weight over tp, the best such per block chosen by the same DP),
// each recomputed by the evaluator with its memory against the limit.
//
// Errors: plan.bad_pin, plan.bad_mesh, plan.infeasible (nothing fits: the message gives the
// smallest per-device memory any plan on the mesh needs, its breakdown, and the shortfall),
// plan.too_large (a frontier beyond PlannerOptions::maxStates), plan.cancelled.

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "cost/cost_model.h"
#include "hardware/hardware.h"
#include "plan/evaluator.h"
#include "plan/plan.h"

namespace cfp {

struct PlanProgress {
    std::string stage;      // "analysis", "search", "baselines", "evaluate"
    std::string mesh;       // the mesh being planned
    int meshIndex = 0, meshCount = 1;
    double fraction = 0;    // of this stage for this mesh
    double bestSeconds = 0; // best step time found so far (0: none yet)
};

struct PlannerOptions {
    int64_t memoryLimitBytes = 0;        // per device; 0 = the hardware's HBM capacity
    std::vector<std::string> pins;
    bool baselines = true;
    int labelCap = 24;                   // Pareto labels kept per DP state
    int64_t maxStates = 1 << 18;         // frontier states before plan.too_large (that mesh is skipped under auto)
    // Under a memory limit the fastest plan may not fit. Then, when (steps of the fastest pass) ×
    // labelCap stays within paretoWorkLimit, the exact Pareto pass runs; otherwise a Lagrangian
    // search finds a plan that fits, marked not proven optimal (Plan::searchExact = false): time
    // passes that charge lambda seconds per byte, walking the convex hull of (memory, time) from
    // the fastest and the least-memory plan to the limit (at most lagrangeSteps passes; about 5 on
    // GPT-3 175B), or, when the least-memory plan itself does not fit, raising lambda until a plan
    // fits and bisecting it lagrangeSteps times.
    int64_t paretoWorkLimit = int64_t{1} << 27;
    int lagrangeSteps = 8;
    // Time-only passes apply the DP over a repeated stretch of blocks (a layer) as one min-plus
    // matrix computed once per pass (PlanProblem::search); off: block by block everywhere.
    bool reuseRepeats = true;
    // Worker threads for the cost tables, the search's large steps and window matrices, and the
    // evaluator (0: CFP_THREADS or the hardware's count). Results do not depend on it.
    int threads = 0;
    // Also run the analysis's independent block check (a violation fails that mesh, error
    // analysis.check) and its search-space report, as `cfp analyze` does. Off: the plan does not
    // depend on them, and the evaluator recomputes the returned plan independently anyway.
    bool checkBlocks = false;
    // Also lay out the evaluator's timeline of the chosen plan (PlanOutcome::evaluation.timeline).
    // Off by default: exporters and the explorer evaluate a plan afresh when they draw a trace.
    bool timeline = false;
    int64_t parallelStepWork = int64_t{1} << 16;  // a time-only DP step with this many (state, strategy) pairs is split
    std::function<void(const PlanProgress&)> progress;  // called from the planning thread
    const std::atomic<bool>* cancel = nullptr;          // checked between blocks; plan.cancelled
    std::vector<std::pair<uint64_t, double>> measured;  // op cost signature → measured seconds
    MemoryPolicy policy;                 // optimizer sharding and recomputation (plan.h)
    CostCalibration calibration;                        // measured hardware constants (cost_model.h); empty = the spec's
};

struct MeshCandidate {
    std::string mesh;            // printed form with link classes
    bool planned = false;        // a plan that fits was found
    double stepSeconds = 0;
    int64_t memoryBytes = 0;
    double seconds = 0;          // analysis + search time for this mesh
    std::string note;            // why not planned
};

class PlanProblem;

struct PlanOutcome {
    Plan plan;
    Evaluation evaluation;                 // of the chosen plan (its timeline when PlannerOptions::timeline)
    std::vector<MeshCandidate> candidates; // every mesh tried, in order
    // The chosen mesh's decomposed problem (its analysis and cost tables), for tools that look at
    // alternatives to the plan (plan/alternatives.h). It points into the graph given to planGraph,
    // which must outlive it.
    std::shared_ptr<const PlanProblem> problem;
};

// Plans `graph` on `cluster`. `meshText` is a mesh ("8", "2x4", "dp=2,tp=4") or "auto". When no
// mesh under auto has a plan that fits, the error is the one of the mesh that comes closest (the
// smallest need), saying how many meshes were tried.
Result<PlanOutcome> planGraph(const Graph& graph, const Cluster& cluster, const std::string& meshText,
                              const PlannerOptions& options = {});

// ---- lower-level pieces (tests, tools) ----

struct SearchResult {
    std::vector<int32_t> strategy;   // per block
    double objectiveSeconds = 0;     // constant + Σ block terms + Σ pair terms
    int64_t memoryBytes = 0;         // the DP's memory (sum + largest working set)
    bool exact = true;
    int reusedBlocks = 0;            // blocks the last time-only pass covered by reused stretch matrices
    int passes = 0;                  // DP passes over the blocks (fastest, least-memory, Lagrangian, Pareto)
};

// Domain restriction per block: allowed[b][s]; empty = all allowed.
using StrategyMask = std::vector<std::vector<char>>;

// The decomposed problem on one mesh (step 2–3 above).
class PlanProblem {
public:
    // frontierCap > 0: before the cost tables of the whole graph are built, the search frontier of
    // the first four segments is laid out from their own pair terms, and a frontier above the cap
    // fails there with the search's plan.too_large (a mesh with too many strategy combinations is
    // rejected in a fraction of the build time; meshLabel names it).
    static Result<PlanProblem> build(const Graph& graph, AnalysisReport analysis, const CostModel& model,
                                     const std::vector<std::pair<uint64_t, double>>& measured = {},
                                     const MemoryPolicy& policy = {}, int64_t frontierCap = 0,
                                     const std::string& meshLabel = {}, int threads = 0);
    PlanProblem(PlanProblem&&) noexcept;
    PlanProblem& operator=(PlanProblem&&) noexcept;
    ~PlanProblem();

    const AnalysisReport& analysis() const;
    const CostModel& model() const;
    int blockCount() const;
    // The block's strategies times its recomputation variants (2 under RecomputePolicy::Auto:
    // index s is strategy s % n of the block's n, recomputed when s >= n); SearchResult::strategy
    // and the assignments below use these indices, StrategyMask the block's own strategies.
    int strategyCount(int block) const;

    // The objective (time) and memory of a full assignment, from the decomposed terms.
    double objective(const std::vector<int32_t>& strategy) const;
    int64_t memory(const std::vector<int32_t>& strategy) const;
    MemoryBreakdown memoryBreakdown(const std::vector<int32_t>& strategy) const;

    // Exact search (see above). `limit` = per-device memory limit in bytes.
    // On plan.infeasible, *smallestNeed (when given) is the least memory any plan needs.
    Result<SearchResult> search(int64_t limit, const StrategyMask& allowed, const PlannerOptions& options,
                                const std::string& meshLabel = {}, int64_t* smallestNeed = nullptr) const;

    // Restricts blocks by pins; plan.bad_pin on an unknown segment/block/strategy.
    Result<StrategyMask> applyPins(const std::vector<std::string>& pins) const;

    // Every op's shardings under the assignment (Plan::tensors) and the blocks/segments parts of a plan.
    void fillPlan(const std::vector<int32_t>& strategy, const StrategyMask& pinned, Plan& plan) const;

private:
    PlanProblem();
    struct Impl;
    std::unique_ptr<Impl> m;
};

// Mesh candidates for `--mesh auto` on the cluster (printed forms, without link classes).
std::vector<std::string> autoMeshes(int64_t devices, int64_t gpusPerNode);

// The analysis planGraph runs on each mesh: threads, and the block check and search-space report
// only with checkBlocks. A check that ran and failed is an error (analysis.check).
Result<AnalysisReport> planningAnalysis(const Graph& graph, const Mesh& mesh, const PlannerOptions& options);

}  // namespace cfp
