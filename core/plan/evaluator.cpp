#include "plan/evaluator.h"

#include <algorithm>
#include <set>

#include "stats/graph_stats.h"

namespace cfp {

namespace {

// Product of the sizes of the axes splitting the tensor's dims.
int64_t splitFactor(const TensorSharding& s, const Mesh& mesh) {
    int64_t f = 1;
    for (const auto& axes : s.dims())
        for (const auto& a : axes) f *= mesh.axisSize(a).value_or(1);
    return f;
}

int64_t shardBytes(const TensorType& type, const TensorSharding& s, const Mesh& mesh) {
    return type.bytes() / splitFactor(s, mesh);
}

std::vector<int64_t> shardDims(const TensorType& type, const TensorSharding& s, const Mesh& mesh) {
    std::vector<int64_t> dims = type.dims;
    for (size_t d = 0; d < dims.size() && d < s.dims().size(); ++d)
        for (const auto& a : s.dims()[d]) dims[d] /= mesh.axisSize(a).value_or(1);
    return dims;
}

std::string mib(int64_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

}  // namespace

Result<Evaluation> evaluatePlan(const Graph& graph, const Plan& plan, const CostModel& model, bool withTimeline) {
    const Mesh& mesh = plan.mesh;
    if (static_cast<int64_t>(plan.tensors.size()) != graph.size())
        return makeError("plan.mismatch", "the plan has " + std::to_string(plan.tensors.size()) + " tensors, the graph " +
                                              std::to_string(graph.size()) + " ops");
    for (const Op& op : graph.ops()) {
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        if (t.op != op.id || t.operands.size() != op.operands.size())
            return makeError("plan.mismatch", "tensor entry " + std::to_string(op.id) + " does not match op " + op.name);
        auto ok = validateSharding(t.result, mesh, op.type);
        if (!ok) return ok.error().withContext(op.name + " result");
        for (size_t i = 0; i < op.operands.size(); ++i) {
            auto okOperand = validateSharding(t.operands[i], mesh, graph.op(op.operands[i]).type);
            if (!okOperand) return okOperand.error().withContext(op.name + " operand " + std::to_string(i));
        }
    }

    // Sources, and values computed from constants and iota alone (masks, one-hot iotas, position
    // ids): folded into their consumers as a compiler does — no kernel and no buffer of their own;
    // consumers take their piece locally.
    std::vector<char> sourceLike(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops()) {
        bool c = op.kind == OpKind::Constant || op.kind == OpKind::Iota || op.kind == OpKind::Parameter;
        if (!c && !op.operands.empty()) {
            c = true;
            for (OpId o : op.operands) c = c && sourceLike[static_cast<size_t>(o)] && graph.op(o).kind != OpKind::Parameter;
        }
        sourceLike[static_cast<size_t>(op.id)] = c;
    }
    std::vector<int32_t> uses(static_cast<size_t>(graph.size()), 0);
    std::vector<char> readByBackward(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops())
        for (OpId o : op.operands) {
            ++uses[static_cast<size_t>(o)];
            if (op.phase == Phase::Backward) readByBackward[static_cast<size_t>(o)] = 1;
        }

    Evaluation ev;
    ev.opCost.assign(static_cast<size_t>(graph.size()), CostBreakdown{});
    std::vector<double> kernel(static_cast<size_t>(graph.size()), 0.0);
    std::vector<char> measured(static_cast<size_t>(graph.size()), 0);
    bool anyMeasured = false, anyModelled = false;

    // Kernels and own collectives.
    std::vector<double> ownSeconds(static_cast<size_t>(graph.size()), 0.0);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        if (sourceLike[k]) continue;
        std::set<std::string> axesUsed(t.ownCollectiveAxes.begin(), t.ownCollectiveAxes.end());
        for (const auto& axes : t.result.dims()) axesUsed.insert(axes.begin(), axes.end());
        double bytes = static_cast<double>(shardBytes(op.type, t.result, mesh));
        std::vector<std::vector<int64_t>> operandDims;
        std::vector<TensorType> operandTypes;
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const TensorType& type = graph.op(op.operands[i]).type;
            for (const auto& axes : t.operands[i].dims()) axesUsed.insert(axes.begin(), axes.end());
            bytes += static_cast<double>(shardBytes(type, t.operands[i], mesh));
            operandDims.push_back(shardDims(type, t.operands[i], mesh));
            operandTypes.push_back(type);
        }
        double split = 1;
        for (const auto& a : axesUsed) split *= static_cast<double>(mesh.axisSize(a).value_or(1));
        const double flops = opFlops(graph, op) / split;
        const uint64_t sig = opCostSignature(op, operandDims, operandTypes, shardDims(op.type, t.result, mesh));
        if (const double* m = model.measured(sig)) {
            kernel[k] = *m;
            measured[k] = 1;
            anyMeasured = true;
        } else {
            kernel[k] = model.kernelSeconds(op.kind, op.type.dtype, flops, bytes);
            anyModelled = true;
        }
        const int64_t resultBytes = shardBytes(op.type, t.result, mesh);
        for (const auto& axis : t.ownCollectiveAxes) {
            auto a = mesh.axisIndex(axis);
            if (!a) return makeError("plan.mismatch", op.name + ": own collective on unknown axis '" + axis + "'");
            ownSeconds[k] += model.collectiveSeconds(CollectiveKind::AllReduce, static_cast<size_t>(*a), resultBytes);
        }
        ev.step.computeSeconds += kernel[k];
        ev.step.collectiveSeconds += ownSeconds[k];
        ev.opCost[k].computeSeconds += kernel[k];
        ev.opCost[k].collectiveSeconds += ownSeconds[k];
        if (measured[k]) ev.opCost[k].provenance = Provenance::Measured;
    }

    // Edges: resharding and fusion.
    struct EdgeCost {
        OpId producer;
        ReshardPlan plan;
        double seconds;
    };
    std::vector<std::vector<EdgeCost>> reshardInto(withTimeline ? static_cast<size_t>(graph.size()) : 0);
    std::vector<double> fusedSavingConsumer(static_cast<size_t>(graph.size()), 0.0);
    std::vector<double> fusedSavingProducer(static_cast<size_t>(graph.size()), 0.0);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            const Op& producer = graph.op(u);
            const TensorSharding& have = plan.tensors[static_cast<size_t>(u)].result;
            const TensorSharding& need = t.operands[i];
            if (have == need) {
                if (fusesInto(producer.kind, op.kind) && uses[static_cast<size_t>(u)] == 1 && !measured[k] &&
                    !measured[static_cast<size_t>(u)] && !sourceLike[static_cast<size_t>(u)]) {
                    const int64_t b = shardBytes(producer.type, have, mesh);
                    const double saving = model.fusedEdgeSavingSeconds(b);
                    ev.step.computeSeconds -= saving;
                    ev.opCost[k].computeSeconds -= saving;
                    // For the timeline: the consumer no longer reads the tensor; the producer no
                    // longer writes it nor launches a kernel of its own (it runs in the consumer's).
                    fusedSavingConsumer[k] += model.hbmSeconds(static_cast<double>(b));
                    fusedSavingProducer[static_cast<size_t>(u)] += model.hbmSeconds(static_cast<double>(b)) + model.launchSeconds();
                    ++ev.edgesFused;
                }
                continue;
            }
            auto rp = planReshard(have, need, mesh, producer.type);
            if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
            const double s = model.reshardSeconds(*rp);
            if (s > 0 || !rp->isNoCommunication()) ++ev.edgesResharded;
            ev.step.reshardSeconds += s;
            ev.opCost[k].reshardSeconds += s;
            if (withTimeline) reshardInto[k].push_back({u, std::move(*rp), s});
        }
    }
    ev.step.provenance = anyMeasured ? (anyModelled ? Provenance::Mixed : Provenance::Measured) : Provenance::Modelled;

    // Memory.
    int64_t transient = 0;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t own = shardBytes(op.type, t.result, mesh);
        if (op.kind == OpKind::Parameter) {
            switch (op.role) {
                case ParamRole::Trainable:
                    ev.memory.weights += own;
                    ev.memory.gradients += own;
                    break;
                case ParamRole::OptimizerState: ev.memory.optimizer += own; break;
                default: ev.memory.activations += own; break;
            }
            continue;
        }
        if (sourceLike[k]) continue;
        if (op.phase == Phase::Forward && readByBackward[k]) ev.memory.activations += own;
        int64_t work = own;
        for (size_t i = 0; i < op.operands.size(); ++i) work += shardBytes(graph.op(op.operands[i]).type, t.operands[i], mesh);
        transient = std::max(transient, work);
    }
    ev.memory.transient = transient;

    if (withTimeline) {
        double now = 0;
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (sourceLike[k]) continue;
            for (const EdgeCost& e : reshardInto[k])
                for (const CollectiveStep& step : e.plan.steps) {
                    auto a = mesh.axisIndex(step.axis);
                    const double d = a ? model.collectiveSeconds(step.kind, static_cast<size_t>(*a), step.messageBytes) : 0.0;
                    if (d <= 0) continue;
                    ev.timeline.push_back({"reshard " + graph.op(e.producer).name + " -> " + op.name, "comm:" + step.axis,
                                           "reshard", now, d, op.id, op.scope,
                                           std::string(collectiveKindName(step.kind)) + " over " + step.axis + ", " + mib(step.messageBytes)});
                    now += d;
                }
            const double d = kernel[k] - fusedSavingConsumer[k] - fusedSavingProducer[k];
            ev.timeline.push_back({op.name, "compute", "compute", now, std::max(0.0, d), op.id, op.scope,
                                   std::string(opKindName(op.kind)) + (measured[k] ? " (measured)" : "")});
            now += std::max(0.0, d);
            const TensorPlan& t = plan.tensors[k];
            const int64_t resultBytes = shardBytes(op.type, t.result, mesh);
            for (const auto& axis : t.ownCollectiveAxes) {
                auto a = mesh.axisIndex(axis);
                const double c = a ? model.collectiveSeconds(CollectiveKind::AllReduce, static_cast<size_t>(*a), resultBytes) : 0.0;
                ev.timeline.push_back({op.name + " all-reduce", "comm:" + axis, "collective", now, c, op.id, op.scope,
                                       "all-reduce over " + axis + ", " + mib(resultBytes)});
                now += c;
            }
        }
    }
    return ev;
}

}  // namespace cfp
