#pragma once
// Independent plan evaluator: recomputes a plan's step time and per-device memory from scratch,
// op by op and edge by edge, from the plan's per-op shardings only (Plan::tensors). It does not
// read the planner's tables, strategies or caches; it shares only the cost primitives (kernel
// roofline, α-β collectives, resharding planner) with it.
//
//   step = Σ ops  kernel(op)                       local flops and bytes (cost_model.h)
//        + Σ ops  own all-reduce per partial axis  message = the op's local result; a gradient's
//                                                  reduction and a weight's gathers at their
//                                                  overlap charge (cost/op_cost.h)
//        + Σ edges resharding(producer result → consumer operand)
//        − Σ fused edges  saving                   (cost_model.h, "Fusion")
// Sources (parameters, constants) cost nothing to compute. Local flops are the op's flops over
// the product of the sizes of every mesh axis its shardings use (each axis splits one factor).
//
// Memory per device (cost/step_policy.h MemoryBreakdown): trainable parameters and one gradient
// buffer each, sharded like the parameter; optimizer-state parameters; data inputs plus every
// forward result that a backward op reads; plus the largest op's working set (its operands as it
// consumes them and its result).
//
// The per-op pieces (kernel split, own collectives, a weight's all-gathers, what a parameter
// holds) come from cost/op_cost.h, which the planner uses too; everything else — which shardings
// ops have, which edges reshard or fuse, what is recomputed and kept — is derived here from the
// plan's tensors alone.
//
// The same pieces, whole, go to the step simulator (step_sim.h) in program order: `simulated` is
// the step as frameworks schedule it, and the step time the tool shows.

#include <vector>

#include "cost/cost_model.h"
#include "plan/plan.h"
#include "plan/step_sim.h"

namespace cfp {

struct Evaluation {
    CostBreakdown step;
    MemoryBreakdown memory;
    // Per op: kernel minus the savings of its fused operand edges (compute), its own collectives,
    // and the resharding of its operands (edges are charged to the consumer).
    std::vector<CostBreakdown> opCost;
    // Per op: what it holds per device for the whole step — a parameter's weights, gradients and
    // optimizer state (or a data input's activations), a forward result's activations when it is
    // kept for the backward pass; transient working sets are not attributed to ops.
    std::vector<MemoryBreakdown> opMemory;
    // Per ParallelBlock (index = block id; ops outside blocks are in none): the sums of its ops'
    // opCost and opMemory, in op order. A block's provenance is Mixed when any op was measured.
    std::vector<CostBreakdown> blockCost;
    std::vector<MemoryBreakdown> blockMemory;
    std::vector<TimelineEvent> timeline;  // when requested
    // The step as frameworks schedule it, communication overlapped (plan/step_sim.h).
    StepSimulation simulated;
    // The tasks handed to the simulator, in program order (pipeline_plan.h splits them by stage).
    std::vector<SimTask> tasks;
    int64_t edgesResharded = 0;
    int64_t edgesFused = 0;
};

// Adds op's cost and memory (ev.opCost, ev.opMemory) to a rollup (a block's, a segment's).
void addOpShare(CostBreakdown& cost, MemoryBreakdown& memory, const Evaluation& ev, OpId op);

// Errors: plan.mismatch (tensors do not match the graph), sharding.* (a sharding invalid on the
// mesh), reshard.* (an edge that cannot be resharded, e.g. to a partial sum).
// Per-op work is split among `threads` workers (0: util/parallel.h's default); sums are taken
// in op order afterwards, so the result does not depend on it.
Result<Evaluation> evaluatePlan(const Graph& graph, const Plan& plan, const CostModel& model, bool withTimeline = false,
                                int threads = 0);

}  // namespace cfp
