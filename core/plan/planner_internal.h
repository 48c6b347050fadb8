#pragma once
// Planning on one mesh, shared by planGraph (planner.cpp) and the baselines (baselines.cpp). Not a
// public header.

#include <functional>
#include <optional>

#include "plan/planner.h"

namespace cfp {

struct MeshPlan {
    std::optional<PlanProblem> problem;
    SearchResult result;
    StrategyMask mask;
    // planGraph's mesh auto: the plan was found on the shorter copy of the model with a layer
    // repeated (`problem` is PlanProblem::deeper's) for this variant; the model's own problem takes
    // it over where the plan is kept.
    std::optional<size_t> variant;
};

enum class FrontierCheck : uint8_t {
    Skip,
    // Check the frontier of the first segments before building the whole graph's cost tables, so
    // that a mesh whose frontier is too large is skipped quickly (worth it when several meshes are
    // tried; with one, the search's own layout reports the same plan.too_large).
    FailFast,
};

// Analyses `graph` on `mesh` (unless `analysis` is given: then it is used as it is), builds the
// problem, restricts it (pins, or a baseline's mask) and searches it under `limit`. `found`: the
// answer of the same search on an equal problem (PlanProblem::deeper's), taken where the problem
// built here gives its plan the same time and memory (else searched here).
Result<MeshPlan> planOnMesh(const Graph& graph, const Cluster& cluster, const Mesh& mesh, const PlannerOptions& options, int64_t limit,
                            const std::function<Result<StrategyMask>(const PlanProblem&)>& restrict, FrontierCheck frontier,
                            std::shared_ptr<const AnalysisReport> analysis = nullptr, int64_t* smallestNeed = nullptr,
                            double* fastestSeconds = nullptr, const SearchResult* found = nullptr);

// The baselines' restriction on a problem: every block's entry matmul input split on dim 0 over
// exactly `batchAxes` and, when `weightAxis` is set, its weight split over that axis (column or row
// parallel, heads for attention); with `seqAxis` (context parallelism) the input's sequence dim
// split over that axis too. Empty (and `note` says which block) when a block has no such
// strategy.
StrategyMask baselineMask(const PlanProblem& problem, const std::vector<std::string>& batchAxes, const std::string& weightAxis,
                          std::string& note, const std::string& seqAxis = {});

// The data-parallel and Megatron-style baselines of the cluster, each planned on its own mesh and
// recomputed by the evaluator, with its memory against `limit`.
std::vector<Baseline> planBaselines(const Graph& graph, const Cluster& cluster, int64_t limit, const PlannerOptions& options);

}  // namespace cfp
