#include "plan/plan.h"

#include <algorithm>

namespace cfp {

std::string_view provenanceName(Provenance p) {
    switch (p) {
        case Provenance::Modelled: return "modelled";
        case Provenance::Measured: return "measured";
        case Provenance::Mixed: return "mixed";
    }
    return "modelled";
}

std::optional<PlanBatch> planBatch(const Plan& plan, const Graph& graph) {
    std::optional<PlanBatch> out;
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Input || op.type.rank() == 0) continue;
        out = PlanBatch{};
        out->round = op.type.dims[0];
        out->accumulation = plan.policy.accumulation;
        break;
    }
    if (!out || plan.tensors.size() != static_cast<size_t>(graph.size())) return out;
    // The widest split of the batch dimension over the forward pass's results (a data input may
    // stay replicated, e.g. token ids read by a vocabulary-parallel embedding).
    for (const Op& op : graph.ops()) {
        if (op.phase != Phase::Forward || op.type.rank() == 0 || op.type.dims[0] != out->round) continue;
        const auto& dims = plan.tensors[static_cast<size_t>(op.id)].result.dims();
        if (dims.empty()) continue;
        int64_t split = 1;
        for (const std::string& axis : dims[0]) split *= plan.mesh.axisSize(axis).value_or(1);
        out->dataParallel = std::max(out->dataParallel, split);
    }
    return out;
}

}  // namespace cfp
