#include "cost/op_cost.h"

namespace cfp {

OpRoles opRoles(const Graph& graph) {
    const auto n = static_cast<size_t>(graph.size());
    OpRoles r;
    r.sourceLike.assign(n, 0);
    r.gradToOptimizer.assign(n, 0);
    r.readByBackward.assign(n, 0);
    r.uses.assign(n, 0);
    std::vector<int32_t> optimizerUses(n, 0);
    for (const Op& op : graph.ops()) {
        bool c = op.kind == OpKind::Constant || op.kind == OpKind::Iota || op.kind == OpKind::Parameter;
        if (!c && !op.operands.empty()) {
            c = true;
            for (OpId o : op.operands) c = c && r.sourceLike[static_cast<size_t>(o)] && graph.op(o).kind != OpKind::Parameter;
        }
        r.sourceLike[static_cast<size_t>(op.id)] = c;
        for (OpId o : op.operands) {
            const auto k = static_cast<size_t>(o);
            ++r.uses[k];
            if (op.phase == Phase::Backward) r.readByBackward[k] = 1;
            if (op.phase == Phase::Optimizer) ++optimizerUses[k];
        }
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        r.gradToOptimizer[k] = op.phase == Phase::Backward && r.uses[k] > 0 && optimizerUses[k] == r.uses[k];
    }
    return r;
}

uint32_t replicaMask(const CompactSharding& sharding, const MeshSizes& sizes) {
    uint32_t m = 0;
    for (int a = 0; a < sizes.rank; ++a)
        if (sharding.dimOf[static_cast<size_t>(a)] < 0) m |= 1u << a;
    return m;
}

uint32_t replicaMask(const TensorSharding& sharding, const Mesh& mesh) {
    uint32_t m = 0;
    for (size_t a = 0; a < mesh.axes().size(); ++a)
        if (sharding.use(mesh.axes()[a].name).kind != AxisUse::Kind::Dim) m |= 1u << a;
    return m;
}

int64_t axesProduct(uint32_t mask, const MeshSizes& sizes) {
    int64_t r = 1;
    for (int a = 0; a < sizes.rank; ++a)
        if (mask & (1u << a)) r *= sizes.size[static_cast<size_t>(a)];
    return r;
}

int64_t optimizerWorkSplit(const Op& op, bool sourceLike, int64_t replicas, const MemoryPolicy& policy) {
    if (!policy.optimizerSharding || op.phase != Phase::Optimizer || sourceLike) return 1;
    return replicas;
}

double opKernelSeconds(const CostModel& model, const Op& op, double opFlops, uint32_t axesUsed, double localBytes, int64_t zeroSplit) {
    const MeshSizes& sizes = model.sizes();
    double split = static_cast<double>(zeroSplit);
    for (int a = 0; a < sizes.rank; ++a)
        if (axesUsed & (1u << a)) split *= static_cast<double>(sizes.size[static_cast<size_t>(a)]);
    return model.kernelSeconds(op.kind, op.type.dtype, opFlops / split, localBytes / static_cast<double>(zeroSplit));
}

double kernelRepeats(const Op& op, const MemoryPolicy& policy) {
    return op.phase == Phase::Optimizer || op.kind == OpKind::Parameter ? 1.0 : static_cast<double>(policy.accumulation);
}

double ownCollectiveRepeats(const Op& op, bool gradToOptimizer, const MemoryPolicy& policy) {
    return gradToOptimizer ? 1.0 : kernelRepeats(op, policy);
}

double ownCollectiveSeconds(const CostModel& model, uint32_t partialMask, int64_t localResultBytes, bool scatter) {
    double t = 0;
    forEachOwnCollective(model.sizes(), partialMask, localResultBytes, scatter,
                         [&](const OpCollective& c) { t += model.collectiveSeconds(c.kind, c.axis, c.bytes); });
    return t;
}

double weightGatherSeconds(const CostModel& model, const Op& param, uint32_t replicaAxes, int64_t localBytes, const MemoryPolicy& policy) {
    double t = 0;
    forEachWeightGather(model.sizes(), param, replicaAxes, localBytes, policy,
                        [&](const OpCollective& c) { t += model.collectiveSeconds(c.kind, c.axis, c.bytes); });
    return t;
}

MemoryBreakdown parameterMemory(const Op& param, int64_t localBytes, int64_t replicas, const MemoryPolicy& policy) {
    MemoryBreakdown m;
    switch (param.role) {
        case ParamRole::Trainable:
            m.weights = localBytes;
            m.gradients = localBytes;
            break;
        case ParamRole::OptimizerState: {
            const int64_t r = policy.optimizerSharding ? replicas : 1;
            m.optimizer = (localBytes + r - 1) / r;
            break;
        }
        default: m.activations = localBytes; break;
    }
    return m;
}

}  // namespace cfp
