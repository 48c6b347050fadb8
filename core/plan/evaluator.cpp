#include "plan/evaluator.h"

#include <algorithm>
#include <map>
#include <span>

#include "cost/op_cost.h"
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

void addOpShare(CostBreakdown& cost, MemoryBreakdown& memory, const Evaluation& ev, OpId op) {
    const CostBreakdown& c = ev.opCost[static_cast<size_t>(op)];
    cost.computeSeconds += c.computeSeconds;
    cost.collectiveSeconds += c.collectiveSeconds;
    cost.reshardSeconds += c.reshardSeconds;
    if (c.provenance != Provenance::Modelled) cost.provenance = Provenance::Mixed;
    const MemoryBreakdown& m = ev.opMemory[static_cast<size_t>(op)];
    memory.weights += m.weights;
    memory.gradients += m.gradients;
    memory.optimizer += m.optimizer;
    memory.activations += m.activations;
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

    const OpRoles roles = opRoles(graph, policy.attention);
    const std::vector<char>& onChip = roles.onChip;  // flash attention cores (cost/op_cost.h)
    const std::vector<char>& sourceLike = roles.sourceLike;
    const std::vector<int32_t>& uses = roles.uses;
    const std::vector<char>& readByBackward = roles.readByBackward;
    // Consumers of each op in op order (CSR); operandStart: each op's first operand edge.
    std::vector<int64_t> consumerStart(n + 1, 0), operandStart(n + 1, 0);
    for (const Op& op : graph.ops())
        operandStart[static_cast<size_t>(op.id) + 1] = operandStart[static_cast<size_t>(op.id)] + static_cast<int64_t>(op.operands.size());
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
    // agree; forward results a recomputed op reads are checkpoints (kept) where they are another
    // unit's or not recomputed. The unit is the block, or under RecomputePolicy::Layers and
    // SelectiveOps the layer (every forward op in a layer is marked, no other; under SelectiveOps
    // not the results the layer keeps: selectiveOpsKept).
    auto blockOf = [&](OpId v) { return plan.tensors[static_cast<size_t>(v)].block; };
    const bool byLayer = recomputesByLayer(policy.recompute);
    const std::vector<int32_t> layer = byLayer ? layerUnits(graph) : std::vector<int32_t>{};
    const std::vector<char> keptOps = policy.recompute == RecomputePolicy::SelectiveOps
                                          ? selectiveOpsKept(graph, sourceLike, onChip, layer)
                                          : std::vector<char>(n, 0);
    auto unitOf = [&](OpId v) { return byLayer ? layer[static_cast<size_t>(v)] : blockOf(v); };
    auto canRecompute = [&](OpId v) {
        return policy.recompute != RecomputePolicy::None && graph.op(v).phase == Phase::Forward && !sourceLike[static_cast<size_t>(v)] &&
               blockOf(v) >= 0 && (!byLayer || unitOf(v) >= 0) && !keptOps[static_cast<size_t>(v)];
    };
    std::vector<char> rc(n, 0), checkpoint(n, 0);
    std::map<int32_t, int> blockMark;  // block → 0/1: its ops' recompute mark
    for (const Op& op : graph.ops()) {
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        if (t.recompute && !canRecompute(op.id))
            return makeError("plan.mismatch", op.name + " is marked for recomputation but is not a forward op of a block" +
                                                  std::string(policy.recompute == RecomputePolicy::None ? " (recompute is none)" : ""));
        if (!canRecompute(op.id)) continue;
        if (byLayer && !t.recompute)
            return makeError("plan.mismatch", op.name + " is in a layer but not marked for recomputation (recompute is " +
                                                  std::string(recomputePolicyName(policy.recompute)) + ")");
        if (byLayer) {
            rc[static_cast<size_t>(op.id)] = 1;
            continue;
        }
        auto [it, inserted] = blockMark.try_emplace(t.block, t.recompute ? 1 : 0);
        if (!inserted && it->second != (t.recompute ? 1 : 0))
            return makeError("plan.mismatch", "block " + std::to_string(t.block) + " recomputes some of its forward ops but not " + op.name);
        rc[static_cast<size_t>(op.id)] = t.recompute;
    }
    for (const Op& op : graph.ops()) {
        if (op.phase != Phase::Forward || sourceLike[static_cast<size_t>(op.id)] || onChip[static_cast<size_t>(op.id)]) continue;
        for (OpId c : consumers(op.id))
            if (canRecompute(c) && (unitOf(c) != unitOf(op.id) || (rc[static_cast<size_t>(c)] && !rc[static_cast<size_t>(op.id)])))
                checkpoint[static_cast<size_t>(op.id)] = 1;
    }
    // Optimizer-state sharding: devices holding the same piece of a result (cost/op_cost.h).
    const MeshSizes& sizes = model.sizes();
    // Sequence parallelism (cost/op_cost.h): its axis, and the ops it can split.
    const std::optional<int> spAxisFound = sequenceParallelAxisIndex(policy, mesh);
    if (!spAxisFound) return makeError("plan.mismatch", "sequence parallelism on '" + policy.sequenceParallelAxis + "', which the mesh lacks");
    const int spAxis = *spAxisFound;
    const std::vector<char> spOps = spAxis >= 0 ? sequenceParallelOps(graph) : std::vector<char>{};
    auto spSplit = [&](OpId v, uint32_t mask, bool completed = false) {
        return spAxis < 0 ? int64_t{1} : sequenceParallelSplit(spAxis, sizes, spOps[static_cast<size_t>(v)] != 0 || completed, mask);
    };
    auto replicas = [&](const TensorSharding& sh) { return axesProduct(replicaMask(sh, mesh), sizes); };
    auto zeroSplit = [&](const Op& op) -> int64_t {
        return optimizerWorkSplit(op, sourceLike[static_cast<size_t>(op.id)], replicas(plan.tensors[static_cast<size_t>(op.id)].result),
                                  policy);
    };

    Evaluation ev;
    ev.opCost.assign(n, CostBreakdown{});
    ev.opMemory.assign(n, MemoryBreakdown{});
    std::vector<double> kernel(n, 0.0);
    std::vector<char> measured(n, 0);
    bool anyMeasured = false, anyModelled = false;

    // Kernels and own collectives (a recomputed op runs both twice).
    struct Collective {
        OpCollective c;
        double seconds;
    };
    std::vector<std::vector<Collective>> ownCollectives(n);
    std::vector<double> ownSeconds(n, 0.0);
    // Per op: its result's bytes per device, and its working set (result and operands).
    std::vector<int64_t> ownBytes(n, 0), workBytes(n, 0);
    std::vector<int64_t> spK(n, 1);  // sequence parallelism's split of each kernel (cost/op_cost.h)
    // Per op (in parallel): its kernel, own collectives and whether it was measured.
    CFP_TRY(perOp([&](const Op& op) -> Status {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t resultBytes = shardBytes(op.type, t.result, mesh);
        // What the op moves through HBM: nothing of a flash attention core's on-chip tensors.
        // Its working set: nothing of those nor of values inside fused chains (op_cost.h).
        int64_t operandBytes = 0, operandWork = 0;
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const auto ko = static_cast<size_t>(op.operands[i]);
            if (onChip[ko]) continue;
            const int64_t b = shardBytes(graph.op(op.operands[i]).type, t.operands[i], mesh);
            operandBytes += b;
            if (!roles.unmaterialized[ko]) operandWork += b;
        }
        const int64_t movedResult = onChip[k] ? 0 : resultBytes;
        ownBytes[k] = resultBytes;
        workBytes[k] = (roles.unmaterialized[k] ? 0 : resultBytes) + operandWork;
        // An updated weight is all-gathered back from its 1/r pieces (optimizer-state sharding).
        forEachWeightGather(sizes, op, replicaMask(t.result, mesh), resultBytes, policy, [&](const OpCollective& c) {
            const double seconds = model.collectiveSeconds(c.kind, c.axis, c.bytes) * weightGatherRepeats(policy);
            ownCollectives[k].push_back({c, seconds});
            ownSeconds[k] += seconds;
        });
        if (sourceLike[k]) return {};
        const int64_t z = zeroSplit(op);
        // Mesh axes the op's result, operands or own collectives use (validated above: all known).
        uint32_t partialMask = 0;
        for (const std::string& axis : t.ownCollectiveAxes) {
            auto a = mesh.axisIndex(axis);
            if (!a) return makeError("plan.mismatch", op.name + ": own collective on unknown axis '" + axis + "'");
            partialMask |= 1u << *a;
        }
        uint32_t axesUsed = partialMask;
        auto useAll = [&](const TensorSharding& sh) {
            for (const auto& axes : sh.dims())
                for (const std::string& a : axes)
                    if (auto i = mesh.axisIndex(a)) axesUsed |= 1u << *i;
        };
        useAll(t.result);
        for (const TensorSharding& operand : t.operands) useAll(operand);
        // Integers far below 2^53: the same value as summing the operands one by one in double.
        const double bytes = static_cast<double>(movedResult + operandBytes);
        // A measured kernel (profile DB) replaces the model where its signature matches.
        const double* m = nullptr;
        if (model.hasMeasurements() && !onChip[k]) {
            std::vector<std::vector<int64_t>> operandDims;
            std::vector<TensorType> operandTypes;
            for (size_t i = 0; i < op.operands.size(); ++i) {
                const TensorType& type = graph.op(op.operands[i]).type;
                operandDims.push_back(shardDims(type, t.operands[i], mesh));
                operandTypes.push_back(type);
            }
            m = model.measured(opCostSignature(op, operandDims, operandTypes, shardDims(op.type, t.result, mesh)));
        }
        spK[k] = spSplit(op.id, axesUsed);
        if (m) {
            kernel[k] = *m / static_cast<double>(z * spK[k]);
            measured[k] = 1;
        } else {
            kernel[k] = opKernelSeconds(model, op, opFlops(graph, op), axesUsed, bytes, z * spK[k], onChip[k]);
        }
        // Per step: once per micro-batch round, or once (cost/op_cost.h).
        kernel[k] *= kernelRepeats(op, policy, roles.flashRecompute[k]);
        const double ownRepeats = ownCollectiveRepeats(op, roles.gradToOptimizer[k], policy);
        // A partial result is completed by its own collectives (cost/op_cost.h).
        forEachOwnCollective(sizes, partialMask, resultBytes, scattersOwnResult(roles.gradToOptimizer[k], policy), [&](const OpCollective& c) {
            const double seconds = model.collectiveSeconds(c.kind, c.axis, c.bytes) * ownRepeats;
            ownCollectives[k].push_back({c, seconds});
            ownSeconds[k] += seconds;
        });
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
                if (fusesInto(producer.kind, op.kind) && uses[ku] == 1 && !measured[k] && !measured[ku] && !sourceLike[ku] && !onChip[ku] &&
                    !onChip[k]) {
                    e.fused = true;
                    e.bytes = shardBytes(producer.type, have, mesh) / (zeroSplit(op) * spK[k]);
                    e.again = rc[k] && rc[ku] && blockOf(u) == blockOf(op.id);
                }
                continue;
            }
            auto rp = planReshard(have, need, mesh, producer.type);
            if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
            e.seconds = model.reshardSeconds(*rp) * kernelRepeats(op, policy) * (rc[k] ? 2.0 : 1.0);
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
                const double saving = model.fusedEdgeSavingSeconds(b) * kernelRepeats(op, policy) * (e.again ? 2.0 : 1.0);
                ev.step.computeSeconds -= saving;
                ev.opCost[k].computeSeconds -= saving;
                // For the timeline: the consumer no longer reads the tensor; the producer no
                // longer writes it nor launches a kernel of its own (it runs in the consumer's).
                const double r = kernelRepeats(op, policy);
                fusedSavingConsumer[k] += model.hbmSeconds(static_cast<double>(b)) * r;
                fusedSavingProducer[ku] += (model.hbmSeconds(static_cast<double>(b)) + model.launchSeconds()) * r;
                if (e.again) {
                    rcSavingConsumer[k] += model.hbmSeconds(static_cast<double>(b)) * r;
                    rcSavingProducer[ku] += (model.hbmSeconds(static_cast<double>(b)) + model.launchSeconds()) * r;
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

    // Memory. A recomputing unit's activations are live while its backward ops run.
    std::map<int32_t, int64_t> recomputed;  // unit → bytes
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t own = ownBytes[k];
        if (op.kind == OpKind::Parameter) {
            const MemoryBreakdown held = parameterMemory(op, own, replicas(t.result), policy);
            ev.memory.weights += held.weights;
            ev.memory.gradients += held.gradients;
            ev.memory.optimizer += held.optimizer;
            ev.memory.activations += held.activations;
            ev.opMemory[k] = held;
            continue;
        }
        if (sourceLike[k] || op.phase != Phase::Forward) continue;
        const bool kept = checkpoint[k] || (readByBackward[k] && !rc[k]);
        // A partial sum over the sequence-parallel axis, completed (reduce-scattered) by the op.
        bool completed = false;
        for (const std::string& axis : t.ownCollectiveAxes) completed = completed || (spAxis >= 0 && mesh.axisIndex(axis) == static_cast<size_t>(spAxis));
        const int64_t held = own / spSplit(op.id, ~replicaMask(t.result, mesh), completed);
        if (kept) {
            ev.memory.activations += held;
            ev.opMemory[k].activations = held;
        }
        else if (rc[k] && readByBackward[k]) recomputed[unitOf(op.id)] += held;
    }
    int64_t transient = 0;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (sourceLike[k]) continue;
        int64_t work = workBytes[k] / zeroSplit(op);
        if (unitOf(op.id) >= 0 && op.phase != Phase::Optimizer) {
            auto it = recomputed.find(unitOf(op.id));
            if (it != recomputed.end()) work += it->second;
        }
        transient = std::max(transient, work);
    }
    ev.memory.transient = transient;

    // Per block, in op order.
    int32_t blocks = 0;
    for (const TensorPlan& t : plan.tensors) blocks = std::max(blocks, t.block + 1);
    ev.blockCost.assign(static_cast<size_t>(blocks), CostBreakdown{});
    ev.blockMemory.assign(static_cast<size_t>(blocks), MemoryBreakdown{});
    for (const TensorPlan& t : plan.tensors) {
        if (t.block < 0) continue;
        addOpShare(ev.blockCost[static_cast<size_t>(t.block)], ev.blockMemory[static_cast<size_t>(t.block)], ev, t.op);
    }

    if (withTimeline) {
        // Each op's events (and, for a recomputed op, those of its second run; for an updated
        // weight, its all-gathers) are built in parallel with their durations; start times are
        // laid out in step order afterwards.
        auto emitCollectives = [&](const Op& op, const std::string& prefix, std::vector<TimelineEvent>& out) {
            for (const Collective& c : ownCollectives[static_cast<size_t>(op.id)]) {
                const std::string axis = mesh.axes()[c.c.axis].name;
                const std::string kind(collectiveKindName(c.c.kind));
                out.push_back({prefix + op.name + " " + kind, "comm:" + axis, "collective", 0.0, c.seconds, op.id, op.scope,
                               kind + " over " + axis + ", " + mib(c.c.bytes)});
            }
        };
        auto emitOp = [&](const Op& op, bool again, std::vector<TimelineEvent>& out) {
            const auto k = static_cast<size_t>(op.id);
            const std::string prefix = again ? "recompute " : "";
            for (const EdgeCost& e : reshardInto[k])
                for (const CollectiveStep& step : e.plan.steps) {
                    auto a = mesh.axisIndex(step.axis);
                    const double d =
                        a ? model.collectiveSeconds(step.kind, static_cast<size_t>(*a), step.messageBytes) * kernelRepeats(op, policy) : 0.0;
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
