// The baselines a plan is compared with, each planned on its own mesh by the same search under a
// restriction (docs/planning.md "Evaluator and baselines"):
//   - data parallel: one axis over all devices; every block splits the batch (dim 0 of its entry
//     matmul's input) and keeps weights replicated;
//   - Megatron-style: mesh dp = nodes × tp = GPUs per node; every block splits the batch over dp
//     and its weight over tp (column or row parallel, heads for attention), the best such per block.
// Each is searched under the plan's memory limit with the plan's memory policy (ZeRO stage,
// recomputation per block, accumulation rounds), so a baseline "does not fit" only when no such
// layout fits.

#include <algorithm>
#include <limits>

#include "plan/planner_internal.h"
#include "plan/problem_impl.h"
#include "util/parallel.h"

namespace cfp {

// Baseline restriction, per block on its entry op: the activation operand (a dot's operand
// computed from data — the lhs of x·W, either of an attention matmul — or a gather's indices) split
// on its batch dim (dim 0; for an MoE expert matmul the first dim after the expert dim) over
// exactly `batchAxes` (mesh order), its other dims over nothing but `weightAxis`;
// the weight operand (a dot's operand computed from weights alone, a gather's table) split over
// `weightAxis` when set (on any dim: column, row or vocabulary parallel) and otherwise replicated.
// An operand of an attention matmul other than the first is split like it on its leading batch
// dim. Blocks with nothing to split over the weight axis keep the batch-only strategies.
// Context parallelism (`seqAxis`): the activation's sequence dim — its first dim after the batch
// that is not a matmul batch dim (S of [B, S, D], of the attention's [B, H, S, Dh] queries, of a
// gather's [B, S] token ids) — is split over that axis as well, and the other data operand only
// where its dim is paired with that one (contracted with it, as in a weight gradient): the keys
// and values an attention matmul reads stay whole along their sequence, so the search gathers
// them over the axis (all-gather context parallelism, as Llama 3 was trained; under the ring,
// MemoryPolicy::contextRing, the same bytes are charged beside the attention kernels: cost/op_cost.h
// attentionMatmul). Blocks without a sequence to split keep the strategies without it.
StrategyMask baselineMask(const PlanProblem& problem, const std::vector<std::string>& batchAxes,
                          const std::string& weightAxis, std::string& note, const std::string& seqAxis) {
    const Graph& graph = problem.graph();
    const std::vector<char> fromData = dataDerived(graph);  // cost/op_cost.h
    const auto& blocks = problem.analysis().blocks.blocks;
    auto allowedWith = [&](const ParallelBlock& block, const BlockStrategy& st, const std::string& axis, const std::string& seq) {
        const auto& ops = st.entryOperands;
        const Op& entry = graph.op(block.entry);
        if (ops.size() < 2) return false;
        size_t act = 0;
        if (entry.kind == OpKind::Gather) act = 1;
        else if (!fromData[static_cast<size_t>(entry.operands[0])] && fromData[static_cast<size_t>(entry.operands[1])]) act = 1;
        const size_t other = 1 - act;
        const bool bothData = fromData[static_cast<size_t>(entry.operands[other])] && entry.kind != OpKind::Gather;
        // A matmul's batch dims on the activation's side and on the other (none for a gather).
        static const std::vector<int64_t> kNone;
        const bool dot = entry.kind == OpKind::Dot;
        const auto& actBatchDims = dot ? (act == 0 ? entry.attrs.dot.lhsBatch : entry.attrs.dot.rhsBatch) : kNone;
        const auto& otherBatchDims = dot ? (act == 0 ? entry.attrs.dot.rhsBatch : entry.attrs.dot.lhsBatch) : kNone;
        // The activation's batch: dim 0, unless the matmul pairs dim 0 with a weight's (an MoE
        // expert's [E, B, C, F] · [E, F, D]): then its first dim that is not such a batch dim.
        int64_t actBatch = 0;
        if (!bothData)
            while (std::find(actBatchDims.begin(), actBatchDims.end(), actBatch) != actBatchDims.end()) ++actBatch;
        if (ops[act].rank() <= actBatch || ops[act].dimAxes(actBatch) != batchAxes || ops[act].isPartial()) return false;
        // The activation's sequence dim, split over `seq` (context parallelism), and the other
        // operand's dim paired with it by the matmul (contracted or batch), if any.
        int64_t actSeq = -1, otherSeq = -1;
        if (!seq.empty()) {
            for (int64_t d = actBatch + 1; d < ops[act].rank() && actSeq < 0; ++d)
                if (std::find(actBatchDims.begin(), actBatchDims.end(), d) == actBatchDims.end()) actSeq = d;
            if (actSeq < 0) return false;
            const auto& onSeq = ops[act].dimAxes(actSeq);
            if (std::find(onSeq.begin(), onSeq.end(), seq) == onSeq.end()) return false;
            if (dot) {
                const auto& actC = act == 0 ? entry.attrs.dot.lhsContracting : entry.attrs.dot.rhsContracting;
                const auto& otherC = act == 0 ? entry.attrs.dot.rhsContracting : entry.attrs.dot.lhsContracting;
                for (size_t k = 0; k < actC.size() && k < otherC.size(); ++k)
                    if (actC[k] == actSeq) otherSeq = otherC[k];
                for (size_t k = 0; k < actBatchDims.size() && k < otherBatchDims.size(); ++k)
                    if (actBatchDims[k] == actSeq) otherSeq = otherBatchDims[k];
            }
        }
        for (int64_t d = 0; d < ops[act].rank(); ++d)
            if (d != actBatch)
                for (const auto& a : ops[act].dimAxes(d))
                    if (!(d == actSeq && a == seq) && (axis.empty() || a != axis)) return false;
        // The other data operand's batch: the batch dim paired with the activation's dim 0 (an MoE
        // combine reads expert outputs [E, B, C, D]), else its dim 0.
        int64_t otherBatch = 0;
        for (size_t k = 0; k < actBatchDims.size() && k < otherBatchDims.size(); ++k)
            if (actBatchDims[k] == 0) otherBatch = otherBatchDims[k];
        bool weightSplit = false;
        for (int64_t d = 0; d < ops[other].rank(); ++d)
            for (const auto& a : ops[other].dimAxes(d)) {
                if (a == axis) weightSplit = true;
                else if (bothData && d == otherSeq && a == seq) continue;
                else if (!(bothData && d == otherBatch && ops[other].dimAxes(d) == batchAxes && !batchAxes.empty())) return false;
            }
        return axis.empty() || weightSplit;
    };
    StrategyMask mask(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
        const auto& strategies = blocks[b].strategies;
        mask[b].assign(strategies.size(), 0);
        // The first of these that the block has strategies for: blocks without a weight to split
        // (e.g. no weight operand) keep batch-only strategies, blocks without a sequence to split
        // the strategies without it.
        const std::pair<std::string, std::string> tiers[] = {{weightAxis, seqAxis}, {"", seqAxis}, {weightAxis, ""}, {"", ""}};
        bool any = false;
        for (const auto& [axis, seq] : tiers) {
            for (size_t s = 0; s < strategies.size(); ++s)
                if (allowedWith(blocks[b], strategies[s], axis, seq)) mask[b][s] = any = true;
            if (any) break;
        }
        if (!any) {
            note = "block " + std::to_string(b) + " has no such strategy (its batch dimension cannot be split that way" +
                   (seqAxis.empty() ? std::string(")") : ", nor its sequence over " + seqAxis + ")");
            return {};
        }
    }
    return mask;
}

std::vector<Baseline> planBaselines(const Graph& graph, const Cluster& cluster, int64_t limit, const PlannerOptions& options) {
    const int64_t devices = cluster.devices();
    struct BaselineSpec {
        std::string name, description, meshSpec;
        std::vector<std::string> batchAxes;
        std::string weightAxis;
        bool sequenceParallel = false;  // over weightAxis, as Megatron-LM's --sequence-parallel
    };
    // One baseline, planned on its own mesh: its report entry.
    auto runBaseline = [&](const BaselineSpec& spec) -> Baseline {
        Baseline bl;
        bl.name = spec.name;
        bl.description = spec.description;
        auto parsed = parseMesh(spec.meshSpec, devices);
        auto mesh = parsed ? assignLinkClasses(*parsed, cluster.hardware.gpusPerNode) : Result<Mesh>(parsed.error());
        if (!mesh) {
            bl.note = mesh.error().message;
            return bl;
        }
        std::string note;
        PlannerOptions quiet = options;
        quiet.hooks.progress = nullptr;
        if (spec.sequenceParallel) quiet.policy.sequenceParallelAxis = spec.weightAxis;
        quiet.search.cutoffSeconds = std::numeric_limits<double>::infinity();  // a baseline is reported however slow
        auto restrict = [&](const PlanProblem& p) -> Result<StrategyMask> {
            auto mask = baselineMask(p, spec.batchAxes, spec.weightAxis, note);
            if (mask.empty()) return makeError("plan.baseline", note);
            return mask;
        };
        // On equal terms with the plan: the same memory policy (ZeRO stage, recomputation per
        // block, the plan's accumulation rounds) under the same limit; only when no such layout
        // fits, the fastest one, reported as not fitting.
        auto mp = planOnMesh(graph, cluster, *mesh, quiet, limit, restrict, FrontierCheck::Skip);
        if (!mp && mp.error().code == "plan.infeasible") mp = planOnMesh(graph, cluster, *mesh, quiet, 0, restrict, FrontierCheck::Skip);
        if (!mp) {
            bl.note = mp.error().message;
            return bl;
        }
        Plan bp;
        mp->problem->fillPlan(mp->result.assignment, {}, bp);
        auto bev = evaluatePlan(graph, bp, mp->problem->model(), false, options.search.threads);
        if (!bev) {
            bl.note = bev.error().message;
            return bl;
        }
        bl.feasible = true;
        bl.stepSeconds = bev->simulated.seconds > 0 ? bev->simulated.seconds : bev->step.total();
        bl.objectiveSeconds = bev->step.total();
        bl.memory = bev->memory;
        bl.fits = bev->memory.total() <= limit;
        if (!bl.fits)
            bl.note = "needs " + gib(bev->memory.total()) + " per device, " + gib(bev->memory.total() - limit) + " over the limit of " +
                      gib(limit);
        return bl;
    };
    std::vector<BaselineSpec> specs;
    specs.push_back({"data_parallel", "batch split over all " + std::to_string(devices) + " devices, weights replicated",
                     "dp=" + std::to_string(devices), {"dp"}, ""});
    const int64_t g = std::min(cluster.hardware.gpusPerNode, devices);
    if (cluster.nodes > 1)
        specs.push_back({"megatron",
                         "tensor parallel over the " + std::to_string(g) + " GPUs of a node, data parallel over " +
                             std::to_string(cluster.nodes) + " nodes",
                         "dp=" + std::to_string(cluster.nodes) + ",tp=" + std::to_string(g), {"dp"}, "tp"});
    else
        specs.push_back({"megatron", "tensor parallel over the " + std::to_string(g) + " GPUs of the node", "tp=" + std::to_string(g), {}, "tp"});
    // On equal terms with a plan that may use sequence parallelism: the Megatron layout with it
    // too, the better of the two reported (one that fits over one that does not, then the faster).
    const bool withSp = options.searchSequenceParallel && options.policy.sequenceParallelAxis.empty() && g > 1;
    if (withSp) {
        BaselineSpec sp = specs.back();
        sp.sequenceParallel = true;
        sp.description += ", sequence parallel";
        specs.push_back(sp);
    }
    // The baselines are independent plans: with two or more worker threads they run side by
    // side (each still splits its own large loops), and are reported in the order above.
    std::vector<Baseline> results(specs.size());
    parallelFor(static_cast<int64_t>(specs.size()), resolveThreads(options.search.threads), 1, [&](int64_t i0, int64_t i1, int) {
        for (auto i = static_cast<size_t>(i0); i < static_cast<size_t>(i1); ++i) results[i] = runBaseline(specs[i]);
    });
    if (withSp) {
        const Baseline& with = results.back();
        Baseline& without = results[results.size() - 2];
        const bool better = with.feasible && (!without.feasible || (with.fits && !without.fits) ||
                                              (with.fits == without.fits && with.stepSeconds < without.stepSeconds));
        if (better) without = with;
        results.pop_back();
    }
    return results;
}

}  // namespace cfp
