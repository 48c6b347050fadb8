#pragma once
// Alternatives to a plan, one segment at a time: for a segment of the chain, the step time and
// per-device memory of the whole plan when that segment alone takes each of its combinations and
// every other block keeps the plan's strategy. This is what the explorer's per-segment chart shows
// ("what would this layer cost under each of its 81 combinations?").
//
// Every row is computed from the problem's decomposed terms (PlanProblem::objective / memory), so
// a row for the plan's own combination equals the search's objective for the plan.
//
// A row is marked
//   allowed    every block's strategy passes `allowed` (the pins); otherwise the search never saw it
//   fits       its memory is within `limitBytes` (limitBytes ≤ 0: no limit)
//   dominated  an allowed, fitting row is no slower and needs no more memory, and is better in one
//              of the two: a Pareto search drops it (the DP's memory labels prune the same way)
//   chosen     the plan's own combination
//
// A block's alternatives are its choices (PlanProblem::choices): with RecomputePolicy::Auto each
// strategy with and without recomputation. Pins restrict the strategies, not the recomputation.
//
// Example (GPT layer on {x=8}, 4 blocks of 3 strategies, recomputation auto): 6^4 = 1296 rows; the
// chosen one is the fastest fitting allowed row.

#include <cstdint>
#include <vector>

#include "plan/planner.h"

namespace cfp {

struct CombinationCost {
    std::vector<BlockAssignment> combination;  // per block of the segment
    double stepSeconds = 0;            // the whole step with this combination in the segment
    int64_t memoryBytes = 0;           // per device
    bool allowed = true;
    bool fits = true;
    bool dominated = false;
    bool chosen = false;
};

struct SegmentAlternatives {
    int32_t segment = 0;
    int64_t combinations = 0;          // all combinations of the segment (may exceed rows.size())
    std::vector<CombinationCost> rows; // in lexicographic order of the blocks' choice indices (first block slowest)
    // combinations > maxRows: the rows are the chosen combination, every change of one of its
    // blocks, and a uniform sample of the others (fixed seed), maxRows in all. Pareto marks are then
    // relative to the rows listed.
    bool sampled = false;
};

// The plan's assignment (its blocks' strategies and recomputation); plan.mismatch when the plan's
// blocks are not the problem's.
Result<Assignment> assignmentOf(const PlanProblem& problem, const Plan& plan);

// "x:rows", and " +recompute" for a recomputed choice where the search chooses it per block.
std::string assignmentLabel(const PlanProblem& problem, int block, const BlockAssignment& choice);

// `assignment`: the plan's (assignmentOf, PlanOutcome::assignment). At most `maxRows` rows (see `sampled`). `allowed`: the pins' mask
// (PlanProblem::applyPins; empty = everything). Errors: plan.bad_segment (no such segment),
// plan.mismatch (strategy has the wrong length or an index out of range).
Result<SegmentAlternatives> segmentAlternatives(const PlanProblem& problem, const Assignment& assignment,
                                                int32_t segment, int64_t limitBytes, const StrategyMask& allowed,
                                                int64_t maxRows = 4096);

}  // namespace cfp
