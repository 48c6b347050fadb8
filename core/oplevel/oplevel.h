#pragma once
// The op-level (Alpa-style) formulation of intra-operator parallelism on cfp's cost model, as an
// IOPDDL problem (iopddl/problem.h): one node per op, one strategy per way of splitting the op.
//
// Strategies. An op's strategies are its factor assignments (rules/op_rules.h): every mesh axis,
// in mesh order, goes to one of the op's splittable factors or to none, as long as the axes of a
// factor divide its size. A strategy fixes the op's operand shardings, its result sharding and its
// own collective (the all-reduce completing a split contraction). Ops without a sharding rule have
// one strategy: everything replicated. A manual (shard_map) region is taken as written: its
// boundaries and all-reduces have the one strategy the source fixes, its other ops the one that
// splits nothing (rules/op_rules.h; hlo.manual_mesh when the source's shardings do not fit the mesh). With `followTrivial` (Alpa's "follow" ops), an op with a
// single operand that is not a source and whose kind is fusible (elementwise, convert, reshape,
// transpose, broadcast, ...) instead gets one strategy per strategy of that operand: the sharding
// that propagates from it without communication (or, where none does, replicated); the edge to
// the operand then allows only the matching pairs (the others cost the contest's 10^18), which
// the IOPDDL solver contracts away.
//
// Costs, exactly as the independent plan evaluator (plan/evaluator.h) charges a plan whose ops
// take these shardings, with no optimizer sharding and no recomputation:
//   node (op, strategy)  = kernel at local flops and bytes + own all-reduce per partial axis;
//                          sources and values computed from constants cost nothing
//   edge (producer -> consumer operand) = resharding of the producer's result to the operand's
//                          sharding; minus the fusion saving when they are equal and the edge fuses
//   edge (updated tensor -> the parameter it replaces), with `carryUpdates`: the resharding of the
//                          optimizer's output (P', its f32 master, the Adam moments) to the sharding
//                          of the parameter it becomes in the next step. The plan evaluator has no
//                          such term (a step is evaluated alone); cfp's planner keeps them aligned,
//                          but without it an op-level search would leave updated weights split and
//                          never gather them, a saving no real training loop has.
// Costs are integers in units of `costUnitSeconds` (default 1 ps), so a cost of 1,000,000 is 1 us.
//
// Memory over liveness intervals, time = op index (graph order is topological): an op's result
// uses its local bytes from its own step to its last consumer's ([id, lastUse + 1)); parameters
// (weights, optimizer state, data inputs) for the whole step; sources computed from constants use
// nothing. The usage limit is OpLevelOptions::memoryLimitBytes (0: none). This is the IOPDDL
// contest's model; the planner's own memory model (weights + saved activations + the largest
// working set) differs, so memory is reported by each model separately.

#include <cstdint>
#include <vector>

#include "cost/cost_model.h"
#include "iopddl/problem.h"
#include "ir/graph.h"
#include "plan/plan.h"
#include "rules/op_rules.h"

namespace cfp {

struct OpLevelOptions {
    int64_t memoryLimitBytes = 0;     // 0: no usage limit
    bool followTrivial = false;       // single-operand fusible ops follow their operand
    bool carryUpdates = true;         // edges from updated parameters to the parameters they replace
    double costUnitSeconds = 1e-12;   // one cost unit
};

struct OpStrategy {
    CompactSharding result;                  // as passed on to consumers (no pending partial)
    std::vector<CompactSharding> operands;   // as the op consumes them
    uint32_t partialMask = 0;                // mesh axes of the op's own all-reduce
};

// (updated tensor, parameter it replaces) for a training step built by appendAdamW: the optimizer
// outputs derived from trainable parameter P, in output order, replace P, then P.master when it
// exists, then P.adam_m and P.adam_v (pairs whose types differ are left out).
std::vector<std::pair<OpId, OpId>> carriedParameters(const Graph& graph);

struct OpLevelFormulation {
    iopddl::Problem problem;                       // node i = op i, edge per operand use, then carried updates
    std::vector<std::vector<OpStrategy>> strategies;  // per op, the problem's strategy order
    double costUnitSeconds = 1e-12;
    int64_t followers = 0;                         // ops that follow their operand
    int64_t firstCarriedEdge = 0;                  // edges from here on are carried updates
};

// `extra`: a plan whose per-op shardings are added as strategies where they are not among the
// enumerated ones (so that the plan is a solution of the formulation). Errors: rules.*,
// sharding.* or reshard.* for shardings the mesh cannot hold or move.
Result<OpLevelFormulation> buildOpLevel(const Graph& graph, const CostModel& model, const OpLevelOptions& options = {},
                                        const Plan* extra = nullptr);

// The solution that gives every op the plan's shardings; oplevel.not_representable when an op's
// shardings are not among its strategies (a follower whose plan sharding does not follow).
Result<iopddl::Solution> solutionForPlan(const OpLevelFormulation& formulation, const Graph& graph, const Plan& plan);

// The plan whose op shardings are the solution's strategies (no blocks, segments or memory
// policy): what the independent evaluator checks a formulation's answer with.
Plan planForSolution(const OpLevelFormulation& formulation, const Graph& graph, const Mesh& mesh, const iopddl::Solution& solution);

// Seconds of a cost in the formulation's units.
inline double costSeconds(const OpLevelFormulation& f, double cost) { return cost * f.costUnitSeconds; }

}  // namespace cfp
