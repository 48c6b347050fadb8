#pragma once
// The planning problem on one mesh, decomposed (DESIGN.md "Segment DP"), and the search over it.
//
// 1. Analysis (analysis/analysis.h): ParallelBlocks with their strategies, the segment chain.
// 2. Every op's sharding as a function of ONE block's strategy. Block members take the block's
//    stored shardings. Every other op follows, in graph order, its first operand whose producer
//    depends on a block, the most recently computed one (else its first non-source operand): its
//    sharding propagates forward from that operand's sharding alone (other operands are read as the
//    op then needs them; a result that becomes a partial sum is completed by the op's own
//    all-reduce). Ops with no such operand, sources outside blocks and ops without a sharding rule
//    are replicated and fixed.
// 3. Costs (cost/cost_model.h, cost/step_policy.h) then split exactly into: a constant (fixed ops
//    and the edges between them), a term per block and choice (its ops' kernels and own
//    collectives, edges within the block's ops and from fixed ops, memory), and a term per pair of
//    blocks and pair of choices (resharding and fusion on edges between their ops).
// 4. Segment DP (plan/segment_dp.h) over the chain of segments, block by block, keeping as state
//    only the strategies of the blocks whose edges cross the current position (the frontier).
//    Every state keeps the Pareto set of (time, memory sum, largest working set) labels, so the
//    per-device memory limit is a true constraint; a first pass keeps only the fastest label and
//    is enough whenever its plan fits. The memory searches (plan/memory_search.cpp) are named
//    passes over that engine.
//
// A block's CHOICE is a strategy of the block and whether its forward ops are recomputed in the
// backward pass (MemoryPolicy::recompute): under RecomputePolicy::Auto each strategy comes with and
// without recomputation, under None without, under All with. choices(b) lists them in the search's
// order.

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analysis.h"
#include "cost/cost_model.h"
#include "plan/pin.h"
#include "plan/plan.h"

namespace cfp {

// One block's decision: its strategy (index into ParallelBlock::strategies) and recomputation.
struct BlockAssignment {
    int32_t strategy = 0;
    bool recompute = false;
    bool operator==(const BlockAssignment&) const = default;
};
using Assignment = std::vector<BlockAssignment>;  // per block

// Domain restriction per block over its strategies: allowed[b][s]; empty = all allowed. Every
// recomputation variant of an allowed strategy is allowed.
using StrategyMask = std::vector<std::vector<char>>;

struct PlanProgress {
    std::string stage;      // "analysis", "search", "baselines", "evaluate"
    std::string mesh;       // the mesh being planned (", sequence parallel over z" for a variant)
    int meshIndex = 0, meshCount = 1;  // mesh k of n (its sequence-parallel variants share its k)
    double fraction = 0;    // of this stage's current pass for this mesh
    int pass = 0;           // the search's DP pass on this mesh (1, 2, ...; 0: not searching)
    // Of the whole planning call, never decreasing: the planner's meshes share [0, 0.95] equally
    // (a mesh's variants its share), each pass of a search half of what is left of its slot.
    double overall = 0;
    double bestSeconds = 0; // best step time found so far (0: none yet)
    // While the workflow tries gradient-accumulation counts: the one being planned (0: none).
    int64_t accumulation = 0;
    int accumulationIndex = 0, accumulationCount = 1;
    // While the workflow tries pipeline-stage counts (`--pp auto`): the one being planned (0: none).
    int32_t pipelineStages = 0;
    int stagesIndex = 0, stagesCount = 1;
};

// What a caller watches and stops: called and checked from the planning thread.
struct PlanHooks {
    std::function<void(const PlanProgress&)> progress;
    const std::atomic<bool>* cancel = nullptr;  // checked between blocks; plan.cancelled
    bool cancelled() const { return cancel && cancel->load(); }
};

enum class RepeatReuse : uint8_t { On, Off };

// The search's algorithm settings; the defaults serve every preset.
struct SearchOptions {
    int labelCap = 24;                   // Pareto labels kept per DP state (more: thinned, inexact)
    int64_t maxStates = 1 << 18;         // frontier states before plan.too_large (that mesh is skipped under auto)
    // Under a memory limit the fastest plan may not fit. Then, when (steps of the fastest pass) ×
    // labelCap stays within paretoWorkLimit, the exact Pareto pass runs; otherwise a Lagrangian
    // search finds a plan that fits, marked not proven optimal (SearchResult::exact = false): time
    // passes that charge lambda seconds per byte, walking the convex hull of (memory, time) from
    // the fastest and the least-memory plan to the limit (at most lagrangeSteps passes; about 5 on
    // GPT-3 175B), or, when the least-memory plan itself does not fit, raising lambda until a plan
    // fits and bisecting it lagrangeSteps times.
    int64_t paretoWorkLimit = int64_t{1} << 27;
    int lagrangeSteps = 8;
    // Time-only passes apply the DP over a repeated stretch of blocks (a layer) as one min-plus
    // matrix computed once per pass (plan/segment_dp.h); Off: block by block everywhere.
    RepeatReuse reuseRepeats = RepeatReuse::On;
    // Worker threads for the analysis, the cost tables, the search's large steps and window
    // matrices, and the evaluator (0: CFP_THREADS or the hardware's count). Results do not depend on it.
    int threads = 0;
    int64_t parallelStepWork = int64_t{1} << 16;  // a time-only DP step with this many (state, choice) pairs is split
    // A plan is of use only if faster than this (the best found on another mesh or accumulation
    // count): when the fastest plan, memory aside, takes at least this long — a lower bound on
    // every plan of the problem — the search stops with plan.dominated. Exact pruning.
    double cutoffSeconds = std::numeric_limits<double>::infinity();
    // Several candidates are searched and only the one nearest to fitting is reported (mesh auto):
    // a problem no plan of which fits says so from a bound — its blocks' least memory, or the
    // least-sum pass — without the passes that find its least memory exactly (plan.infeasible's
    // "every plan needs at least"). Exact: only problems proven to have no plan that fits.
    bool briefInfeasibility = false;
    // runPlan's searches of later rounds and ZeRO stages skip a mesh whose fastest plan, memory
    // aside, at fewer rounds or a lower stage already took at least as long as the best plan in
    // hand (SearchMemo, plan/planner.h). False: every search from scratch (tests compare the two).
    bool reuseBounds = true;
    // Under mesh auto, the next variant's analysis is made on a helper thread while the current one
    // is built and searched (plan/planner.cpp); not where the variants are searched on the shorter
    // copy (deeperSearch), which needs the model's own analysis only for a plan it keeps.
    // False: each analysis when its variant comes (tests compare the two).
    bool analyseAhead = true;
    // runPlan under mesh auto, for a model the builders make with many alike layers: a mesh where
    // every plan needs more than the memory limit is told from the model built with 4 layers
    // (ShorterModel, plan/planner.h; the same bound, exactly). False: from the model's own problem
    // (tests compare the two).
    bool shorterModel = true;
    // And, with it, every variant is searched on the copy with one interior layer repeated for the
    // layers left out (PlanProblem::deeper: the model's own problem, term for term, a fraction of
    // its analysis and build); the model's own analysis and problem are made only for a plan the
    // search keeps (the best, and those close to it for the re-ranking), and take it over. False:
    // every variant on the model's own problem (tests compare the two).
    bool deeperSearch = true;
};

// Measured values from a profile DB (profiler/): kernels by cost signature, and hardware constants.
struct Measurements {
    std::vector<std::pair<uint64_t, double>> kernels;  // op cost signature → measured seconds
    CostCalibration calibration;                       // cost_model.h; empty = the spec's numbers
    bool empty() const { return kernels.empty() && calibration.empty(); }
};

struct SearchResult {
    Assignment assignment;           // per block
    double objectiveSeconds = 0;     // constant + Σ block terms + Σ pair terms
    int64_t memoryBytes = 0;         // the DP's memory (sum + largest working set)
    bool exact = true;
    int reusedBlocks = 0;            // blocks the last time-only pass covered by reused stretch matrices
    int passes = 0;                  // DP passes over the blocks (fastest, least-memory, Lagrangian, Pareto)
    bool limitBinding = false;       // the fastest plan did not fit: the memory limit shaped the result
    int cutPairs = 0;                // pair terms cut to fit the frontier (ProblemOptions::frontierLimit)
    double gapBoundSeconds = 0;      // with cut pairs: the plan is at most this much slower than the optimum
};

// How PlanProblem::build prices and prepares the problem.
struct ProblemOptions {
    MemoryPolicy policy;
    // > 0: before the cost tables of the whole graph are built, the search frontier of the first
    // four segments is laid out from their own pair terms, and a frontier above the cap fails there
    // with the search's plan.too_large (a mesh with too many strategy combinations is rejected in a
    // fraction of the build time; meshLabel names it).
    int64_t frontierCap = 0;
    // > 0 (the search's SearchOptions::maxStates): when the exact frontier would exceed it, the
    // longest pair terms are cut (their additive fit kept, the rest priced only afterwards), so
    // that every graph plans; the search is then not exact and SearchResult::gapBoundSeconds says
    // by how much its plan may miss the optimum.
    int64_t frontierLimit = 0;
    // Where frontierCap turns the mesh away, or infeasibleAbove does: set to a lower bound of every
    // plan's memory.
    int64_t* leastMemoryOnTooLarge = nullptr;
    // > 0: when every plan needs more than this (the blocks' least memory, which has no pair
    // terms), the build stops before the pair tables with plan.infeasible, as the search's
    // SearchOptions::briefInfeasibility would say it (mesh auto's other meshes).
    int64_t infeasibleAbove = 0;
    std::string meshLabel;
    int threads = 0;  // workers for the op states and cost tables (SearchOptions::threads)
    // A repeated segment's op states, node terms and pair tables copied from its type's first
    // segment where the ops, blocks and edges are alike (false: every one computed; the tables are
    // the same either way).
    bool shareRepeatedSegments = true;
};

class PlanProblem {
public:
    static Result<PlanProblem> build(const Graph& graph, AnalysisReport analysis, const CostModel& model,
                                     const Measurements& measurements = {}, const ProblemOptions& options = {});
    // The same on an analysis shared with others (the planner keeps a mesh's for its other searches).
    static Result<PlanProblem> build(const Graph& graph, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                     const Measurements& measurements = {}, const ProblemOptions& options = {});
    // The least memory per device of every plan of a model `extra` layers deeper than `shorter`:
    // the blocks and node terms of `shorter` (a copy of the model built with `layers` layers; no
    // pair terms, which memory does not have), one of its interior layers counted 1 + extra times.
    // Equals the deeper model's own bound (a build's leastMemoryBound) where its layers are alike
    // term for term, as the model builders emit them (tst_plan leastMemoryFromShorterModel); a
    // fraction of its cost (the search's mesh auto skips meshes where nothing fits with it).
    // plan.no_layers when the layers of `shorter` are not a run of repeated segments.
    static Result<int64_t> leastMemoryDeeper(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                             const Measurements& measurements, const ProblemOptions& options, int64_t extra, int layers);
    // The problem of the model `extra` layers deeper than this one's (built on a shorter copy of
    // it: ShorterModel, plan/planner.h; kept inside it), from its block-level terms alone: the middle
    // segment of its longest run of repeated segments (an interior layer) repeated `extra` more
    // times, with its own pair terms and those from the layer before it (the pairs between two
    // consecutive layers) repeated with it; the blocks after it follow, shifted. Its blocks are
    // the deeper model's, in order, and its terms theirs where the layers are alike term for term
    // as the model builders emit them (tst_planner deeperProblemEqualsTheModels compares every
    // term), at a fraction of the deeper model's analysis and build. Only the search runs on it
    // (search, objective, memory, checkAssignment): it has no op states of its own blocks, no
    // plan to fill. plan.no_layers where it cannot be exact: no run of at least 3 alike segments,
    // a pair term that skips a layer or reaches the repeated layer from farther than the layer
    // before it, pairs into the next layer unlike those from the previous one, pair terms cut to
    // fit the frontier, or fixed ops in the layer that cost time or memory.
    static Result<PlanProblem> deeper(PlanProblem shorter, int64_t extra);
    // `shorter`'s problem (a copy of the model built with `layers` layers), built and made `extra`
    // layers deeper (deeper). With options.infeasibleAbove > 0, where the deeper model's least
    // memory (leastMemoryDeeper's) is above it, plan.infeasible before the pair terms, setting
    // options.leastMemoryOnTooLarge (where given) to it, as build says it of the model's own
    // problem: one build of the copy's node terms for both.
    static Result<PlanProblem> buildDeeper(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                           const Measurements& measurements, const ProblemOptions& options, int64_t extra, int layers);
    PlanProblem(PlanProblem&&) noexcept;
    PlanProblem& operator=(PlanProblem&&) noexcept;
    ~PlanProblem();

    const Graph& graph() const;
    const AnalysisReport& analysis() const;
    const CostModel& model() const;
    const MemoryPolicy& policy() const;
    int blockCount() const;
    // The block's choices in the search's order (strategy major, then without/with recomputation).
    const std::vector<BlockAssignment>& choices(int block) const;

    // The objective (time) and memory of a full assignment, from the decomposed terms.
    double objective(const Assignment& assignment) const;
    int64_t memory(const Assignment& assignment) const;
    MemoryBreakdown memoryBreakdown(const Assignment& assignment) const;
    // The assignment is one of the problem's (right length, strategies and recomputation among the
    // blocks' choices); plan.mismatch otherwise.
    Status checkAssignment(const Assignment& assignment) const;

    // Exact search (memory_search.cpp). `limit` = per-device memory limit in bytes (≤ 0: none).
    // On plan.infeasible, *smallestNeed (when given) is the least memory any plan needs; once the
    // fastest pass ran (also on plan.dominated), *fastestSeconds is its plan's time, memory aside.
    Result<SearchResult> search(int64_t limit, const StrategyMask& allowed, const SearchOptions& options, const PlanHooks& hooks = {},
                                const std::string& meshLabel = {}, int64_t* smallestNeed = nullptr, double* fastestSeconds = nullptr) const;

    // Restricts blocks by pins; plan.bad_pin on an unknown segment/block/strategy.
    Result<StrategyMask> applyPins(const std::vector<Pin>& pins) const;

    // Every op's shardings under the assignment (Plan::tensors) and the blocks/segments parts of a plan.
    void fillPlan(const Assignment& assignment, const StrategyMask& pinned, Plan& plan) const;
    // What the assignment splits, as fillPlan's tensors say it: per mesh axis the bytes of the
    // trainable weights split over it (of `weightBytes` in all), and the axes the token inputs'
    // sequence (dim 1 of an input of rank 2 or more) is split over, in op order, each once. A
    // deeper problem (deeper) counts its repeated layer's weights once per repeat, each under its
    // own block's choice, as the deeper model's fillPlan would.
    struct Splits {
        std::map<std::string, int64_t> weightsOver;
        int64_t weightBytes = 0;
        std::vector<std::string> sequence;
    };
    Splits splits(const Assignment& assignment) const;

    struct Impl;  // plan/problem_impl.h (the planner's own files)
    const Impl& impl() const { return *m; }

private:
    PlanProblem();
    // build's first part: the op states and the blocks' own terms.
    static Result<PlanProblem> withNodeTerms(const Graph& graph, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                             const Measurements& measurements, const ProblemOptions& options);
    // withNodeTerms on a shorter copy, with per block how many times the model `extra` layers
    // deeper holds it (Impl::deeperCopies): leastMemoryDeeper's and buildDeeper's first part.
    static Result<std::pair<PlanProblem, std::vector<int64_t>>> shorterNodeTerms(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis,
                                                                                 const CostModel& model, const Measurements& measurements,
                                                                                 const ProblemOptions& options, int64_t extra, int layers);
    // build's second part on withNodeTerms's problem: the memory bound (with `copies`, per block
    // how many times the model holds it: Impl::leastMemory), the frontier check, the pair terms.
    static Result<PlanProblem> finishBuild(PlanProblem p, const ProblemOptions& options, const std::vector<int64_t>* copies);
    std::unique_ptr<Impl> m;
};

}  // namespace cfp
