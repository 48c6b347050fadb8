#include "plan/evaluator.h"

#include <algorithm>
#include <map>
#include <span>

#include "stats/graph_stats.h"
#include "util/parallel.h"

namespace cfp {

namespace {

std::string mib(int64_t bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

}  // namespace

std::vector<char> sourceLikeOps(const Graph& graph) {
    std::vector<char> sourceLike(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops()) {
        bool c = op.kind == OpKind::Constant || op.kind == OpKind::Iota || op.kind == OpKind::Parameter;
        if (!c && !op.operands.empty()) {
            c = true;
            for (OpId o : op.operands) c = c && sourceLike[static_cast<size_t>(o)] && graph.op(o).kind != OpKind::Parameter;
        }
        sourceLike[static_cast<size_t>(op.id)] = c;
    }
    return sourceLike;
}

Result<Evaluation> evaluatePlan(const Graph& graph, const Plan& plan, const CostModel& model, bool withTimeline, int threads) {
    const Mesh& mesh = plan.mesh;
    const MemoryPolicy& policy = plan.policy;
    const auto n = static_cast<size_t>(graph.size());
    if (static_cast<int64_t>(plan.tensors.size()) != graph.size())
        return makeError("plan.mismatch", "the plan has " + std::to_string(plan.tensors.size()) + " tensors, the graph " +
                                              std::to_string(graph.size()) + " ops");
    // Per-op work in contiguous op ranges, one per worker; a range stops at its first error and
    // the lowest range's error is the one reported (the first in op order).
    const int workers = parallelRanges(static_cast<int64_t>(n), resolveThreads(threads), 1024);
    auto perOp = [&](const std::function<Status(const Op&)>& fn) -> Status {
        return parallelTry(static_cast<int64_t>(n), workers, 1, [&](int64_t i0, int64_t i1, int) -> Status {
            for (int64_t i = i0; i < i1; ++i) CFP_TRY(fn(graph.op(static_cast<OpId>(i))));
            return {};
        });
    };
    CFP_TRY(perOp([&](const Op& op) -> Status {
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        if (t.op != op.id || t.operands.size() != op.operands.size())
            return makeError("plan.mismatch", "tensor entry " + std::to_string(op.id) + " does not match op " + op.name);
        auto ok = validateSharding(t.result, mesh, op.type);
        if (!ok) return ok.error().withContext(op.name + " result");
        for (size_t i = 0; i < op.operands.size(); ++i) {
            auto okOperand = validateSharding(t.operands[i], mesh, graph.op(op.operands[i]).type);
            if (!okOperand) return okOperand.error().withContext(op.name + " operand " + std::to_string(i));
        }
        return {};
    }));

    const std::vector<char> sourceLike = sourceLikeOps(graph);
    std::vector<int32_t> uses(n, 0);
    std::vector<char> readByBackward(n, 0);
    // Consumers of each op in op order (CSR); operandStart: each op's first operand edge.
    std::vector<int64_t> consumerStart(n + 1, 0), operandStart(n + 1, 0);
    for (const Op& op : graph.ops()) {
        operandStart[static_cast<size_t>(op.id) + 1] = operandStart[static_cast<size_t>(op.id)] + static_cast<int64_t>(op.operands.size());
        for (OpId o : op.operands) {
            ++uses[static_cast<size_t>(o)];
            if (op.phase == Phase::Backward) readByBackward[static_cast<size_t>(o)] = 1;
        }
    }
    for (size_t k = 0; k < n; ++k) consumerStart[k + 1] = consumerStart[k] + uses[k];
    std::vector<OpId> consumerList(static_cast<size_t>(consumerStart[n]));
    {
        std::vector<int64_t> at(consumerStart.begin(), consumerStart.end() - 1);
        for (const Op& op : graph.ops())
            for (OpId o : op.operands) consumerList[static_cast<size_t>(at[static_cast<size_t>(o)]++)] = op.id;
    }
    auto consumers = [&](OpId v) {
        return std::span<const OpId>(consumerList.data() + consumerStart[static_cast<size_t>(v)],
                                     consumerList.data() + consumerStart[static_cast<size_t>(v) + 1]);
    };

    // Memory policy. Recomputation: a forward op of a block may be marked; the marks of a block
    // agree; forward results read by another block's forward op are checkpoints (kept).
    auto blockOf = [&](OpId v) { return plan.tensors[static_cast<size_t>(v)].block; };
    auto canRecompute = [&](OpId v) {
        return policy.recompute != RecomputePolicy::None && graph.op(v).phase == Phase::Forward && !sourceLike[static_cast<size_t>(v)] &&
               blockOf(v) >= 0;
    };
    std::vector<char> rc(n, 0), checkpoint(n, 0);
    std::map<int32_t, int> blockMark;  // block → 0/1: its ops' recompute mark
    for (const Op& op : graph.ops()) {
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        if (t.recompute && !canRecompute(op.id))
            return makeError("plan.mismatch", op.name + " is marked for recomputation but is not a forward op of a block" +
                                                  std::string(policy.recompute == RecomputePolicy::None ? " (recompute is none)" : ""));
        if (!canRecompute(op.id)) continue;
        auto [it, inserted] = blockMark.try_emplace(t.block, t.recompute ? 1 : 0);
        if (!inserted && it->second != (t.recompute ? 1 : 0))
            return makeError("plan.mismatch", "block " + std::to_string(t.block) + " recomputes some of its forward ops but not " + op.name);
        rc[static_cast<size_t>(op.id)] = t.recompute;
    }
    for (const Op& op : graph.ops()) {
        if (op.phase != Phase::Forward || sourceLike[static_cast<size_t>(op.id)]) continue;
        for (OpId c : consumers(op.id))
            if (canRecompute(c) && blockOf(c) != blockOf(op.id)) checkpoint[static_cast<size_t>(op.id)] = 1;
    }
    // Optimizer-state sharding: devices holding the same piece of a result.
    auto replicaAxes = [&](const TensorSharding& s) {
        std::vector<size_t> axes;
        for (size_t a = 0; a < mesh.axes().size(); ++a)
            if (s.use(mesh.axes()[a].name).kind != AxisUse::Kind::Dim) axes.push_back(a);
        return axes;
    };
    auto replicas = [&](const TensorSharding& s) {
        int64_t r = 1;
        for (size_t a : replicaAxes(s)) r *= mesh.axes()[a].size;
        return r;
    };
    auto zeroSplit = [&](const Op& op) -> int64_t {
        if (!policy.optimizerSharding || op.phase != Phase::Optimizer || sourceLike[static_cast<size_t>(op.id)]) return 1;
        return replicas(plan.tensors[static_cast<size_t>(op.id)].result);
    };
    auto feedsOptimizerOnly = [&](const Op& op) {
        if (op.phase != Phase::Backward || consumers(op.id).empty()) return false;
        for (OpId c : consumers(op.id))
            if (graph.op(c).phase != Phase::Optimizer) return false;
        return true;
    };

    Evaluation ev;
    ev.opCost.assign(n, CostBreakdown{});
    std::vector<double> kernel(n, 0.0);
    std::vector<char> measured(n, 0);
    bool anyMeasured = false, anyModelled = false;

    // Kernels and own collectives (a recomputed op runs both twice).
    struct Collective {
        CollectiveKind kind;
        size_t axis;
        int64_t bytes;
        double seconds;
    };
    std::vector<std::vector<Collective>> ownCollectives(n);
    std::vector<double> ownSeconds(n, 0.0);
    // Per op: its result's bytes per device, and its working set (result and operands).
    std::vector<int64_t> ownBytes(n, 0), workBytes(n, 0);
    // Per op (in parallel): its kernel, own collectives and whether it was measured.
    CFP_TRY(perOp([&](const Op& op) -> Status {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t resultBytes = shardBytes(op.type, t.result, mesh);
        int64_t operandBytes = 0;
        for (size_t i = 0; i < op.operands.size(); ++i) operandBytes += shardBytes(graph.op(op.operands[i]).type, t.operands[i], mesh);
        ownBytes[k] = resultBytes;
        workBytes[k] = resultBytes + operandBytes;
        if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable && policy.optimizerSharding) {
            // The updated weight is all-gathered back from its 1/r pieces (reverse mesh order).
            const auto axes = replicaAxes(t.result);
            int64_t have = resultBytes / replicas(t.result);
            for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
                have *= mesh.axes()[*it].size;
                const double c = model.collectiveSeconds(CollectiveKind::AllGather, *it, have);
                ownCollectives[k].push_back({CollectiveKind::AllGather, *it, have, c});
                ownSeconds[k] += c;
            }
        }
        if (sourceLike[k]) return {};
        const auto z = static_cast<double>(zeroSplit(op));
        // Mesh axes the op's result, operands or own collectives use (validated above: all known).
        uint32_t axesUsed = 0;
        auto use = [&](const std::string& axis) {
            if (auto a = mesh.axisIndex(axis)) axesUsed |= 1u << *a;
        };
        auto useAll = [&](const TensorSharding& sh) {
            for (const auto& axes : sh.dims())
                for (const std::string& a : axes) use(a);
        };
        for (const std::string& a : t.ownCollectiveAxes) use(a);
        useAll(t.result);
        for (const TensorSharding& operand : t.operands) useAll(operand);
        // Integers far below 2^53: the same value as summing the operands one by one in double.
        const double bytes = static_cast<double>(resultBytes + operandBytes);
        double split = z;
        for (size_t a = 0; a < mesh.axes().size(); ++a)
            if (axesUsed & (1u << a)) split *= static_cast<double>(mesh.axes()[a].size);
        const double flops = opFlops(graph, op) / split;
        // A measured kernel (profile DB) replaces the model where its signature matches.
        const double* m = nullptr;
        if (model.hasMeasurements()) {
            std::vector<std::vector<int64_t>> operandDims;
            std::vector<TensorType> operandTypes;
            for (size_t i = 0; i < op.operands.size(); ++i) {
                const TensorType& type = graph.op(op.operands[i]).type;
                operandDims.push_back(shardDims(type, t.operands[i], mesh));
                operandTypes.push_back(type);
            }
            m = model.measured(opCostSignature(op, operandDims, operandTypes, shardDims(op.type, t.result, mesh)));
        }
        if (m) {
            kernel[k] = *m / z;
            measured[k] = 1;
        } else {
            kernel[k] = model.kernelSeconds(op.kind, op.type.dtype, flops, bytes / z);
        }
        // A partial result is completed by an all-reduce per axis, or — a gradient that only the
        // sharded optimizer reads — reduce-scattered over those axes (mesh order, shrinking).
        const bool scatter = policy.optimizerSharding && feedsOptimizerOnly(op);
        int64_t left = resultBytes;
        for (const auto& axis : t.ownCollectiveAxes) {
            auto a = mesh.axisIndex(axis);
            if (!a) return makeError("plan.mismatch", op.name + ": own collective on unknown axis '" + axis + "'");
            const auto ax = static_cast<size_t>(*a);
            const CollectiveKind kind = scatter ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce;
            const double c = model.collectiveSeconds(kind, ax, scatter ? left : resultBytes);
            ownCollectives[k].push_back({kind, ax, scatter ? left : resultBytes, c});
            ownSeconds[k] += c;
            if (scatter) left /= mesh.axes()[ax].size;
        }
        return {};
    }));
    // Summed in op order.
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (sourceLike[k]) {
            ev.step.collectiveSeconds += ownSeconds[k];
            ev.opCost[k].collectiveSeconds += ownSeconds[k];
            continue;
        }
        (measured[k] ? anyMeasured : anyModelled) = true;
        const double times = rc[k] ? 2.0 : 1.0;
        ev.step.computeSeconds += times * kernel[k];
        ev.step.collectiveSeconds += times * ownSeconds[k];
        ev.opCost[k].computeSeconds += times * kernel[k];
        ev.opCost[k].collectiveSeconds += times * ownSeconds[k];
        if (measured[k]) ev.opCost[k].provenance = Provenance::Measured;
    }

    // Edges: resharding and fusion (again for a recomputed consumer: its resharding, and a fused
    // edge whose producer is recomputed with it).
    struct EdgeCost {
        OpId producer;
        ReshardPlan plan;
        double seconds;
    };
    std::vector<std::vector<EdgeCost>> reshardInto(withTimeline ? n : 0);
    std::vector<double> fusedSavingConsumer(n, 0.0), fusedSavingProducer(n, 0.0);
    std::vector<double> rcSavingConsumer(n, 0.0), rcSavingProducer(n, 0.0);
    // Per operand edge of each op (in parallel): a fused edge's bytes and whether it is fused
    // again in a recomputation, or a resharding's plan and seconds.
    struct EdgeTerm {
        bool fused = false, again = false, counted = false;
        int64_t bytes = 0;
        double seconds = 0;
    };
    std::vector<EdgeTerm> edgeTerms(static_cast<size_t>(operandStart[n]));  // per operand edge, op by op
    CFP_TRY(perOp([&](const Op& op) -> Status {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            const auto ku = static_cast<size_t>(u);
            const Op& producer = graph.op(u);
            const TensorSharding& have = plan.tensors[ku].result;
            const TensorSharding& need = t.operands[i];
            EdgeTerm& e = edgeTerms[static_cast<size_t>(operandStart[k]) + i];
            if (have == need) {
                if (fusesInto(producer.kind, op.kind) && uses[ku] == 1 && !measured[k] && !measured[ku] && !sourceLike[ku]) {
                    e.fused = true;
                    e.bytes = shardBytes(producer.type, have, mesh) / zeroSplit(op);
                    e.again = rc[k] && rc[ku] && blockOf(u) == blockOf(op.id);
                }
                continue;
            }
            auto rp = planReshard(have, need, mesh, producer.type);
            if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
            e.seconds = model.reshardSeconds(*rp) * (rc[k] ? 2.0 : 1.0);
            e.counted = e.seconds > 0 || !rp->isNoCommunication();
            if (withTimeline) reshardInto[k].push_back({u, std::move(*rp), e.seconds});
        }
        return {};
    }));
    // Summed in op and operand order.
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const EdgeTerm& e = edgeTerms[static_cast<size_t>(operandStart[k]) + i];
            const auto ku = static_cast<size_t>(op.operands[i]);
            if (e.fused) {
                const int64_t b = e.bytes;
                const double saving = model.fusedEdgeSavingSeconds(b) * (e.again ? 2.0 : 1.0);
                ev.step.computeSeconds -= saving;
                ev.opCost[k].computeSeconds -= saving;
                // For the timeline: the consumer no longer reads the tensor; the producer no
                // longer writes it nor launches a kernel of its own (it runs in the consumer's).
                fusedSavingConsumer[k] += model.hbmSeconds(static_cast<double>(b));
                fusedSavingProducer[ku] += model.hbmSeconds(static_cast<double>(b)) + model.launchSeconds();
                if (e.again) {
                    rcSavingConsumer[k] += model.hbmSeconds(static_cast<double>(b));
                    rcSavingProducer[ku] += model.hbmSeconds(static_cast<double>(b)) + model.launchSeconds();
                }
                ++ev.edgesFused;
                continue;
            }
            if (e.counted) ++ev.edgesResharded;
            ev.step.reshardSeconds += e.seconds;
            ev.opCost[k].reshardSeconds += e.seconds;
        }
    }
    ev.step.provenance = anyMeasured ? (anyModelled ? Provenance::Mixed : Provenance::Measured) : Provenance::Modelled;

    // Memory. A recomputing block's activations are live while its backward ops run.
    std::map<int32_t, int64_t> recomputed;  // block → bytes
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t own = ownBytes[k];
        if (op.kind == OpKind::Parameter) {
            switch (op.role) {
                case ParamRole::Trainable:
                    ev.memory.weights += own;
                    ev.memory.gradients += own;
                    break;
                case ParamRole::OptimizerState: {
                    const int64_t r = policy.optimizerSharding ? replicas(t.result) : 1;
                    ev.memory.optimizer += (own + r - 1) / r;
                    break;
                }
                default: ev.memory.activations += own; break;
            }
            continue;
        }
        if (sourceLike[k] || op.phase != Phase::Forward) continue;
        const bool kept = checkpoint[k] || (readByBackward[k] && !rc[k]);
        if (kept) ev.memory.activations += own;
        else if (rc[k] && readByBackward[k]) recomputed[t.block] += own;
    }
    int64_t transient = 0;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        if (sourceLike[k]) continue;
        int64_t work = workBytes[k] / zeroSplit(op);
        if (t.block >= 0 && op.phase != Phase::Optimizer) {
            auto it = recomputed.find(t.block);
            if (it != recomputed.end()) work += it->second;
        }
        transient = std::max(transient, work);
    }
    ev.memory.transient = transient;

    if (withTimeline) {
        // Each op's events (and, for a recomputed op, those of its second run; for an updated
        // weight, its all-gathers) are built in parallel with their durations; start times are
        // laid out in step order afterwards.
        auto emitCollectives = [&](const Op& op, const std::string& prefix, std::vector<TimelineEvent>& out) {
            for (const Collective& c : ownCollectives[static_cast<size_t>(op.id)]) {
                const std::string axis = mesh.axes()[c.axis].name;
                const std::string kind(collectiveKindName(c.kind));
                out.push_back({prefix + op.name + " " + kind, "comm:" + axis, "collective", 0.0, c.seconds, op.id, op.scope,
                               kind + " over " + axis + ", " + mib(c.bytes)});
            }
        };
        auto emitOp = [&](const Op& op, bool again, std::vector<TimelineEvent>& out) {
            const auto k = static_cast<size_t>(op.id);
            const std::string prefix = again ? "recompute " : "";
            for (const EdgeCost& e : reshardInto[k])
                for (const CollectiveStep& step : e.plan.steps) {
                    auto a = mesh.axisIndex(step.axis);
                    const double d = a ? model.collectiveSeconds(step.kind, static_cast<size_t>(*a), step.messageBytes) : 0.0;
                    if (d <= 0) continue;
                    out.push_back({prefix + "reshard " + graph.op(e.producer).name + " -> " + op.name, "comm:" + step.axis,
                                   "reshard", 0.0, d, op.id, op.scope,
                                   std::string(collectiveKindName(step.kind)) + " over " + step.axis + ", " + mib(step.messageBytes)});
                }
            const double d = again ? kernel[k] - rcSavingConsumer[k] - rcSavingProducer[k]
                                   : kernel[k] - fusedSavingConsumer[k] - fusedSavingProducer[k];
            out.push_back({prefix + op.name, "compute", again ? "recompute" : "compute", 0.0, std::max(0.0, d), op.id, op.scope,
                           std::string(opKindName(op.kind)) + (measured[k] ? " (measured)" : "")});
            emitCollectives(op, prefix, out);
        };
        std::vector<std::vector<TimelineEvent>> once(n), again(n);
        CFP_TRY(perOp([&](const Op& op) -> Status {
            const auto k = static_cast<size_t>(op.id);
            if (sourceLike[k]) {
                if (!ownCollectives[k].empty()) emitCollectives(op, "updated ", once[k]);
                return {};
            }
            emitOp(op, false, once[k]);
            if (rc[k]) emitOp(op, true, again[k]);
            return {};
        }));
        size_t events = 0;
        for (size_t k = 0; k < n; ++k) events += once[k].size() + again[k].size();
        ev.timeline.reserve(events);
        double now = 0;
        auto place = [&](std::vector<TimelineEvent>& events) {
            for (TimelineEvent& e : events) {
                e.startSeconds = now;
                now += e.durationSeconds;
                ev.timeline.push_back(std::move(e));
            }
        };
        // A recomputing block runs its forward ops again just before its first backward op.
        std::map<int32_t, std::vector<OpId>> pending;
        for (const Op& op : graph.ops())
            if (rc[static_cast<size_t>(op.id)]) pending[blockOf(op.id)].push_back(op.id);
        std::vector<OpId> weights;
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (op.phase == Phase::Backward && blockOf(op.id) >= 0) {
                auto it = pending.find(blockOf(op.id));
                if (it != pending.end()) {
                    for (OpId r : it->second) place(again[static_cast<size_t>(r)]);
                    pending.erase(it);
                }
            }
            if (!ownCollectives[k].empty() && sourceLike[k]) weights.push_back(op.id);
            if (sourceLike[k]) continue;
            place(once[k]);
        }
        for (const auto& [block, ops] : pending)
            for (OpId r : ops) place(again[static_cast<size_t>(r)]);
        // The updated weights' all-gathers close the step (optimizer-state sharding).
        for (OpId w : weights) place(once[static_cast<size_t>(w)]);
    }
    return ev;
}

}  // namespace cfp
