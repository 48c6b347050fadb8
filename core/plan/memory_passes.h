#pragma once

#include <functional>
// The memory searches' passes (memory_search.cpp), each callable alone: PlanProblem::search
// composes them, and tests/plan/tst_memory_passes.cpp checks each against brute force. Internal to
// core/plan and its tests (it exposes PlanProblem::Impl through segment_dp.h).

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "plan/problem_impl.h"
#include "plan/segment_dp.h"

namespace cfp::memory_passes {

using Choices = std::vector<int32_t>;

// A candidate plan during the memory searches, in the problem's choice indices.
struct Candidate {
    Choices choice;
    double objectiveSeconds = 0;
    int64_t memoryBytes = 0;
    bool exact = true;
    int reusedBlocks = 0;
};

// "1228.1 ms"
std::string millis(double seconds);

Candidate fromPass(const DpResult& r);
// The memory sum and the largest working set of an assignment.
std::pair<int64_t, int64_t> sumAndMax(const PlanProblem::Impl& P, const Choices& st);
// A plan found by a relaxed pass, priced exactly from the problem's terms.
Candidate priced(const PlanProblem::Impl& P, Choices choice);

// The fastest plan, memory ignored.
Result<Candidate> fastestPass(SegmentDp& dp);
// The least memory sum among plans whose blocks' working sets are at most workingCap.
Result<Candidate> leastMemoryPass(SegmentDp& dp, int64_t workingCap = std::numeric_limits<int64_t>::max());
// The exact Pareto pass under the engine's limit; plan.infeasible when no plan fits.
Result<Candidate> paretoPass(SegmentDp& dp);
// A time pass that charges lambda seconds per byte of memory sum, priced exactly.
Result<Candidate> lagrangianPass(SegmentDp& dp, double lambda);
// The lower convex hull of (memory sum, time) walked from the fastest and least-memory plans
// towards the limit: a plan that fits, at most `steps` passes; nullopt when `hopeless(λ, plan)`
// says no plan that fits can be of use.
Result<std::optional<Candidate>> lagrangianHullWalk(SegmentDp& dp, int64_t limit, const Candidate& fastest, const Candidate& lean, int steps,
                                                    const std::function<bool(double, const Candidate&)>& hopeless = {});
// Only plans with a smaller working set fit: lambda raised until a plan fits, then bisected;
// nullopt when none is found. `floorMemory`: the least-sum plan's memory (no price finds less);
// `startLambda` the first price (0: 1 ms per GiB); `hopeless(λ, plan)`: stop raising.
Result<std::optional<Candidate>> lagrangianBisection(SegmentDp& dp, int64_t limit, int steps, int64_t floorMemory = 0, double startLambda = 0,
                                                     const std::function<bool(double, const Candidate&)>& hopeless = {});
// Single-block changes that make the step faster and still fit, most time saved per byte first.
void greedySlackFill(const SegmentDp& dp, int64_t limit, Candidate& r);
// Time passes under caps on the working set below the fastest plan's: the fastest that fits, or
// nullopt.
Result<std::optional<Candidate>> cappedFastestPass(SegmentDp& dp, int64_t limit, const Candidate& fastest, int64_t memoryPassWork);
// The least memory any plan needs, exactly, and a plan that needs it (priced; memoryBytes is its
// memory). No pass: memory has no pair terms (memory_search.cpp).
Candidate leastMemoryPlan(const SegmentDp& dp);
// plan.infeasible, with the smallest need and its breakdown.
Error infeasibilityReport(const PlanProblem& problem, const Candidate& smallest, int64_t limit, const std::string& meshLabel);

}  // namespace cfp::memory_passes
