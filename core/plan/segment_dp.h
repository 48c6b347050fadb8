#pragma once
// The segment DP engine: one pass over the blocks of a PlanProblem in segment order, for one
// objective (DpPass). The memory searches (memory_search.cpp) combine passes into
// PlanProblem::search. Not a public header: only core/plan's planner files include it.
//
// State. The DP walks the blocks in order; its state before block b is the choice of every block
// whose pair terms reach past b (the frontier), in strategy classes: while block a waits in the
// frontier, two of its choices whose pair costs with every later block are equal are the same
// state (problem_impl.h, Classes). A layer chain's frontier at a segment boundary is the segment's
// combination, or the part of it the next segment depends on.
//
// Labels. Every state keeps labels (time, memory sum, largest working set) with a back pointer.
// A time-only pass (DpPass::timeOnly) keeps the best label per state (ties: the smaller memory
// sum); the Pareto pass keeps the Pareto set, thinned to SearchOptions::labelCap (then inexact).
//
// Repeated stretches (windows). In a layer stack the steps recur every layer: a window is a run
// of `repeats` consecutive stretches of `length` blocks whose steps are identical (same frontier
// classes before and after, choice counts, masks, unary terms and pair cost tables, position by
// position). Its leading frontier positions that no step of the stretch reads or changes
// (passengers: a tied embedding waiting for the LM head) carry through, so a state is (passenger
// part, local part) and a time-only pass needs the stretch only as a min-plus matrix from local
// state to local state: computed once per pass and applied `repeats` times. Same result as the
// block-by-block DP (ties broken the same way; sums may be added in another order).
//
// Example (GPT layer chain on {x=8}: 4 blocks per layer, 3 strategies each, recomputation auto
// so 6 choices): the frontier between layers holds the last block of the previous layer (6
// states) plus the tied embedding as a passenger (3 classes); each layer's window matrix is 6×6.

#include <cstdint>
#include <limits>
#include <vector>

#include "plan/problem_impl.h"

namespace cfp {

// What one pass minimises.
struct DpPass {
    bool timeOnly = true;          // one label per state (false: the Pareto set under the limit)
    bool memoryObjective = false;  // minimise the memory sum (no pair terms) instead of time
    double lambda = 0;             // seconds charged per byte of memory sum (a Lagrangian price)
    int64_t workingCap = std::numeric_limits<int64_t>::max();  // choices whose working set exceeds it are left out

    static DpPass fastest() { return {}; }
    static DpPass lagrangian(double lambda) { return {true, false, lambda}; }
    static DpPass leastMemory(int64_t workingCap = std::numeric_limits<int64_t>::max()) {
        return {true, true, 0, workingCap};
    }
    static DpPass pareto() { return {false, false, 0}; }
};

// A pass's answer in the problem's choice indices (PlanProblem::Impl::choice).
struct DpResult {
    std::vector<int32_t> choice;   // per block
    double objectiveSeconds = 0;   // the pass's time (without lambda) ...
    int64_t memoryBytes = 0;       // ... and memory, from its labels
    bool exact = true;             // false when the Pareto pass thinned a label set
    int reusedBlocks = 0;          // blocks covered by reused stretch matrices
};

struct DpLabel {
    double t;
    int64_t m;
    int64_t mx;
    int32_t prevState;
    int32_t prevLabel;
    int32_t choice;
};

// Keeps the Pareto-minimal labels (time, memory sum, working set); thins to `cap` by spreading
// over memory. Returns false when thinning dropped a non-dominated label.
bool pruneLabels(std::vector<DpLabel>& labels, int cap, bool timeOnly);

class SegmentDp {
public:
    // Lays out the frontier (plan.too_large beyond SearchOptions::maxStates) and finds the
    // repeated windows; plan.bad_pin when a block has no allowed strategy.
    static Result<SegmentDp> create(const PlanProblem::Impl& problem, int64_t limit, const StrategyMask& allowed,
                                    const SearchOptions& options, const PlanHooks& hooks, const std::string& meshLabel);

    // One pass. Errors: plan.infeasible (no label within the limit: Pareto passes, or every choice
    // of some block above DpPass::workingCap), plan.cancelled.
    Result<DpResult> run(const DpPass& pass);

    const PlanProblem::Impl& problem() const { return *P; }
    int blocks() const { return B; }
    bool allowedAt(int b, int s) const {
        return allowed.empty() || allowed[static_cast<size_t>(b)].empty() ||
               allowed[static_cast<size_t>(b)][static_cast<size_t>(s % P->base(b))];
    }
    int passes() const { return m_passes; }
    // (state, choice) steps: `work` counts a reused stretch as stepping through it (sizes the
    // Pareto pass and budgets the infeasibility report), `doneWork` the steps actually taken.
    int64_t work() const { return m_work; }
    int64_t doneWork() const { return m_doneWork; }

private:
    using Classes = PlanProblem::Impl::Classes;
    using StepPlan = PlanProblem::Impl::StepPlan;
    // Labels of one position, flat, for the states that have any (ascending): state id[i] owns
    // labels[offset[i] .. offset[i+1]). Sparse because most states are empty where it matters: a
    // reused stretch's row starts from one state, and its steps reach a few hundred of tens of
    // thousands.
    struct Layer {
        std::vector<uint32_t> id;
        std::vector<uint32_t> offset{0};
        std::vector<DpLabel> labels;
        // The position of state x in id (x must have labels).
        size_t indexOf(int64_t x) const;
    };
    // Per-worker scratch of a DP step: time-only passes keep one label per next state, the Pareto
    // pass candidates per next state. Both are indexed by state and empty between steps: a step
    // lists the states it touched and clears only those.
    struct Scratch {
        std::vector<DpLabel> bestOf;
        std::vector<std::vector<DpLabel>> buckets;
        std::vector<uint32_t> touched;
    };
    struct Window {
        int start = 0, length = 0, repeats = 0;
        int64_t passengerStates = 1, local = 1;  // states before the window = passengerStates × local
        int64_t localEnd = 1;                    // local states after a stretch (its matrix is local × localEnd)
        int64_t plainWork = 0;                   // a plain pass's work over one stretch (for `work`)
    };

    const std::vector<Classes>& classesBefore(int b) const {
        return b == 0 ? m_noClasses : m_plans[static_cast<size_t>(b) - 1].nextClasses;
    }
    int64_t countBefore(int b) const { return b == 0 ? 1 : m_plans[static_cast<size_t>(b) - 1].count; }
    // The step over block b: `cur` (labels before b) to `nxt`; returns its (state, choice) pairs.
    // passengerStates > 1: a window's stretch from passenger part 0 (only those states laid out).
    // worker ≥ 0: sequential on that worker's scratch; -1: may split large steps.
    int64_t step(int b, const Layer& cur, Layer& nxt, const DpPass& mode, bool& exact, int64_t passengerStates, int worker);
    void findWindows();
    // Time-only DP over one stretch of window w from local start state x; the layers before each
    // block and after the last when `layers` is given. Sequential, on `worker`'s scratch.
    Layer stretchFrom(const Window& w, int64_t x, const DpPass& mode, std::vector<Layer>* layers, int worker, int64_t& done);
    void report(int b, int& lastProgress) const;

    const PlanProblem::Impl* P = nullptr;
    int B = 0;
    int64_t limit = 0;
    StrategyMask allowed;
    SearchOptions options;
    PlanHooks hooks;
    std::string meshLabel;
    int threads = 1;
    int64_t parallelStepWork = 1;
    std::vector<int64_t> minRemaining;  // least memory sum of the blocks from b on
    std::vector<StepPlan> m_plans;
    std::vector<Classes> m_noClasses;
    std::vector<Scratch> m_scratch;
    std::vector<Window> m_windows;
    std::vector<const Window*> m_windowAt;
    int64_t m_work = 0, m_doneWork = 0;
    int m_passes = 0;
};

}  // namespace cfp
