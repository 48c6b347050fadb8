#include "stats/graph_stats.h"

namespace cfp {

double opFlops(const Graph& graph, const Op& op) {
    if (op.kind == OpKind::Dot) {
        const TensorType& lhs = graph.op(op.operands[0]).type;
        double contracted = 1;
        for (int64_t a : op.attrs.dot.lhsContracting) contracted *= static_cast<double>(lhs.dims[static_cast<size_t>(a)]);
        return 2.0 * static_cast<double>(op.type.elements()) * contracted;
    }
    if (op.kind == OpKind::Convert) return 0;  // a cast moves bytes; it does no arithmetic
    if (isElementwise(op.kind)) return static_cast<double>(op.type.elements());
    if (op.kind == OpKind::Reduce) return static_cast<double>(graph.op(op.operands[0]).type.elements());
    return 0;
}

GraphStats computeStats(const Graph& graph) {
    GraphStats s;
    s.ops = graph.size();
    std::array<int64_t, kOpKindCount> byKind{};
    std::vector<bool> savedForBackward(static_cast<size_t>(graph.size()), false);
    for (const Op& op : graph.ops()) {
        const auto phase = static_cast<size_t>(op.phase);
        ++s.opsByPhase[phase];
        ++byKind[static_cast<size_t>(op.kind)];
        const double f = opFlops(graph, op);
        s.flops += f;
        s.flopsByPhase[phase] += f;
        if (op.kind == OpKind::Parameter) {
            if (op.role == ParamRole::Trainable) {
                s.trainableParams += op.type.elements();
                s.trainableParamBytes += op.type.bytes();
            } else if (op.role == ParamRole::OptimizerState) {
                s.optimizerStateBytes += op.type.bytes();
            } else if (op.role == ParamRole::Input) {
                s.inputBytes += op.type.bytes();
            }
        }
        if (op.phase == Phase::Backward)
            for (OpId in : op.operands)
                if (graph.op(in).phase == Phase::Forward) savedForBackward[static_cast<size_t>(in)] = true;
    }
    // Values computed from constants alone (masks, scales, RoPE tables) are recomputed or folded by
    // any compiler, and a saved broadcast is kept as its (smaller) operand and re-broadcast: charge
    // those to their source instead. Reverse id order visits users before operands.
    std::vector<bool> dependsOnData(static_cast<size_t>(graph.size()), false);
    for (const Op& op : graph.ops()) {
        bool data = op.kind == OpKind::Parameter;
        for (OpId in : op.operands) data = data || dependsOnData[static_cast<size_t>(in)];
        dependsOnData[static_cast<size_t>(op.id)] = data;
    }
    for (auto it = graph.ops().rbegin(); it != graph.ops().rend(); ++it) {
        const Op& op = *it;
        const auto i = static_cast<size_t>(op.id);
        if (!savedForBackward[i] || !dependsOnData[i]) continue;
        if (op.kind == OpKind::Broadcast) {
            savedForBackward[static_cast<size_t>(op.operands[0])] = true;
            continue;
        }
        if (op.kind == OpKind::Parameter) continue;
        s.activationBytes += op.type.bytes();
    }
    for (int k = 0; k < kOpKindCount; ++k)
        if (byKind[static_cast<size_t>(k)] > 0) s.opsByKind[std::string(opKindName(static_cast<OpKind>(k)))] = byKind[static_cast<size_t>(k)];
    return s;
}

}  // namespace cfp
