#include "plan/evaluator.h"
#include "plan/step_sim.h"

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

namespace {

// The simulated step's placements as timeline events: kernels on "compute", communication on the
// critical path on "comm:<axis>", overlapped communication on "comm:<axis> (overlapped)" (a
// channel runs one collective at a time, so no track has overlapping events).
void simulatedTimeline(const Graph& graph, const Mesh& mesh, const std::vector<SimTask>& tasks, const std::vector<SimPlacement>& placed,
                       const std::vector<char>& measured, std::vector<TimelineEvent>& out) {
    out.reserve(placed.size());
    auto roundText = [](int64_t r) { return "round " + std::to_string(r + 1); };
    for (const SimPlacement& p : placed) {
        TimelineEvent e;
        e.startSeconds = p.start;
        e.durationSeconds = p.seconds;
        switch (p.kind) {
            case SimPlacement::Kind::Task: {
                const SimTask& t = tasks[p.task];
                const Op& op = graph.op(t.op);
                e.op = t.op;
                e.scope = op.scope;
                const std::string prefix = t.again ? "recompute " : "";
                if (t.kind == SimTaskKind::Compute) {
                    e.name = prefix + op.name;
                    e.track = "compute";
                    e.category = t.again ? "recompute" : "compute";
                    e.detail = std::string(opKindName(op.kind)) + (measured[static_cast<size_t>(t.op)] ? " (measured)" : "");
                } else {
                    const std::string axis = mesh.axes()[static_cast<size_t>(t.axis)].name;
                    const std::string kind(collectiveKindName(t.collective));
                    e.name = t.reshard ? prefix + "reshard " + graph.op(t.from).name + " -> " + op.name : prefix + op.name + " " + kind;
                    e.track = "comm:" + axis + (p.overlapped ? " (overlapped)" : "");
                    e.category = t.reshard ? "reshard" : "collective";
                    e.detail = kind + " over " + axis + ", " + mib(t.bytes) + (p.overlapped ? ", beside its GEMM" : "");
                }
                if (op.phase != Phase::Optimizer) e.detail += ", " + roundText(p.round);
                break;
            }
            case SimPlacement::Kind::Bucket:
            case SimPlacement::Kind::Gather: {
                const std::string axis = mesh.axes()[static_cast<size_t>(p.axis)].name;
                const std::string kind(collectiveKindName(p.collective));
                const bool bucket = p.kind == SimPlacement::Kind::Bucket;
                e.name = std::string(bucket ? "gradient bucket " : "weight gather ") + kind + " (" + std::to_string(p.members) + " weight" +
                         (p.members == 1 ? "" : "s") + ")";
                if (bucket) {
                    e.op = tasks[p.task].op;
                    e.scope = graph.op(e.op).scope;
                }
                e.track = "comm:" + axis + (p.overlapped ? " (overlapped)" : "");
                e.category = "collective";
                e.detail = kind + " over " + axis + ", " + mib(p.bytes) + (p.overlapped ? ", overlapped" : ", on the critical path") + ", " +
                           roundText(p.round);
                break;
            }
            case SimPlacement::Kind::Rounds:
                e.name = "rounds 2-" + std::to_string(p.members + 1) + " (" + std::to_string(p.members) + " micro-batch rounds as round 1)";
                e.track = "compute";
                e.category = "rounds";
                e.detail = "folded: forward and backward of " + std::to_string(p.members) + " more micro-batches";
                break;
        }
        out.push_back(std::move(e));
    }
}

}  // namespace

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

    const OpRoles roles = opRoles(graph, policy.attention, policy.crossEntropy, policy.fusion);
    const std::vector<double> cover = overlapCover(graph, roles, model, policy);
    const std::vector<char> resident = stepResidentWeights(graph, policy);
    const std::vector<char>& onChip = roles.onChip;  // flash attention cores (cost/op_cost.h)
    const std::vector<char> attention = contextRingMatmuls(graph, onChip, policy, model);  // cost/op_cost.h
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
    const std::vector<char> spScatters = spAxis >= 0 ? sequenceParallelScatters(graph, spOps) : std::vector<char>(n, 0);
    const std::vector<OpId> spGatherer = spAxis >= 0 ? sequenceParallelGatherers(graph, spOps) : std::vector<OpId>{};
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
    std::vector<char> spPiece(n, 0); // and whether it holds its result as a piece
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
            if (!roles.unmaterialized[ko] || roles.view[ko]) operandWork += b;  // a view's reader reads what it views
        }
        const int64_t movedResult = onChip[k] ? 0 : resultBytes;
        ownBytes[k] = resultBytes;
        workBytes[k] = roles.workPerElement[k] >= 0 ? workOfElements(resultBytes, op.type.dtype, roles.workPerElement[k])
                                               : (roles.unmaterialized[k] ? 0 : resultBytes) + operandWork;
        // An updated weight is all-gathered back from its 1/r pieces (optimizer-state sharding).
        // Charged (op_cost.h: overlappedCharge), the timeline's are whole.
        forEachWeightGather(sizes, op, replicaMask(t.result, mesh), resultBytes, policy, [&](const OpCollective& c) {
            ownCollectives[k].push_back({c, model.collectiveSeconds(c.kind, c.axis, c.bytes) * weightGatherRepeats(policy)});
        });
        if (!ownCollectives[k].empty()) {
            const CommCost gathers = weightGatherCost(model, op, replicaMask(t.result, mesh), resultBytes, policy);
            ownSeconds[k] += overlappedCharge(model, gathers, cover[k], policy.overlapParamGather);
        }
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
        if (model.hasMeasurements() && !onChip[k] && !roles.view[k]) {
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
            const std::optional<GemmGrid> grid = op.kind == OpKind::Dot ? gemmGridOf(graph, op, shardDims(op.type, t.result, mesh)) : std::nullopt;
            kernel[k] = roles.view[k] ? 0.0 : opKernelSeconds(model, op, opFlops(graph, op), axesUsed, bytes, z * spK[k], onChip[k], grid ? &*grid : nullptr,
                                                        &roles.flash[k]);
        }
        // Per step: once per micro-batch round, or once (cost/op_cost.h).
        kernel[k] *= kernelRepeats(op, policy, roles.flashRecompute[k]);
        const double ownRepeats = ownCollectiveRepeats(op, roles.gradContribution[k], policy);
        // A partial result is completed by its own collectives (cost/op_cost.h).
        spPiece[k] = sequenceParallelPiece(spAxis, spK[k], partialMask, spScatters[k]);
        const uint32_t scatterMask = ownScatterMask(partialMask, scattersOwnResult(roles.gradToOptimizer[k], policy), spAxis, spScatters[k]);
        // Charged (op_cost.h: beside a matmul, a gradient's reduction overlapped); the timeline's are whole.
        CommCost own;
        forEachOwnCollective(sizes, partialMask, resultBytes, scatterMask, [&](const OpCollective& c) {
            const double seconds = model.collectiveSeconds(c.kind, c.axis, c.bytes);
            ownCollectives[k].push_back({c, seconds * ownRepeats});
            const bool coalesced = roles.gradContribution[k] && policy.overlapGradReduce;  // an overlapped gradient's reduction
            own.add(model, c.axis, coalesced ? coalescedSeconds(model, c, policy) : seconds);
        });
        ownSeconds[k] += roles.gradContribution[k]
                             ? overlappedCharge(model, own.times(ownRepeats), cover[k], policy.overlapGradReduce)
                             : chargedComm(model, op, policy, own, kernel[k] / runsPerStep(op, policy), attention[k]) * ownRepeats;
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
    std::vector<std::vector<EdgeCost>> reshardInto(n);  // the step simulator's blocking tasks
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
            // Sequence parallelism's all-gather of a piece into this op (cost/op_cost.h).
            const bool gather = spAxis >= 0 && sequenceParallelGathers(spPiece[ku], op, i, u, spGatherer[ku], spOps[k] != 0, spK[k]);
            if (have == need && !gather) {
                if (fusesUnder(policy, roles.eagerFused, producer, op) && uses[ku] == 1 && !measured[k] && !measured[ku] && !sourceLike[ku] && !onChip[ku] &&
                    !onChip[k]) {
                    e.fused = true;
                    e.bytes = shardBytes(producer.type, have, mesh) / (zeroSplit(op) * spK[k]);
                    e.again = rc[k] && rc[ku] && blockOf(u) == blockOf(op.id);
                }
                continue;
            }
            auto rp = have == need ? Result<ReshardPlan>(ReshardPlan{have, need, {}}) : planReshard(have, need, mesh, producer.type);
            if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
            if (gather) rp->steps.push_back(sequenceParallelGatherStep(have, mesh, static_cast<size_t>(spAxis), shardBytes(producer.type, have, mesh)));
            const double run = chargedComm(model, op, policy, reshardCost(model, *rp), kernel[k] / runsPerStep(op, policy), attention[k]);
            e.seconds = run * kernelRepeats(op, policy) * (rc[k] ? 2.0 : 1.0);
            e.counted = e.seconds > 0 || !rp->isNoCommunication();
            if (!rp->steps.empty()) reshardInto[k].push_back({u, std::move(*rp), e.seconds});
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

    // The step as frameworks run it (plan/step_sim.h): the same kernels, collectives and
    // reshardings as tasks in program order, one round's worth each (a recomputing block runs its
    // forward again before its first backward op, as in the timeline below).
    {
        const double rounds = static_cast<double>(std::max<int64_t>(1, policy.accumulation));
        std::vector<SimTask> tasks;
        tasks.reserve(2 * n);
        auto perRun = [&](const Op& op) { return op.phase == Phase::Optimizer ? 1.0 : rounds; };
        auto addRun = [&](const Op& op, bool again) {
            const auto k = static_cast<size_t>(op.id);
            const double runs = perRun(op);
            const bool perRound = op.phase != Phase::Optimizer;
            for (const EdgeCost& e : reshardInto[k])
                for (const CollectiveStep& step : e.plan.steps) {
                    auto a = mesh.axisIndex(step.axis);
                    const double d = a ? model.collectiveSeconds(step.kind, static_cast<size_t>(*a), step.messageBytes) : 0.0;
                    if (d <= 0) continue;
                    SimTask t{SimTaskKind::Blocking, op.id, perRound, d, step.kind, static_cast<int>(*a), step.messageBytes};
                    t.again = again;
                    t.reshard = true;
                    t.beside = runsBeside(model, op, policy, *a, attention[k]);
                    t.from = e.producer;
                    tasks.push_back(t);
                }
            const double d = again ? kernel[k] - rcSavingConsumer[k] - rcSavingProducer[k] : kernel[k] - fusedSavingConsumer[k] - fusedSavingProducer[k];
            SimTask kernelTask{SimTaskKind::Compute, op.id, perRound, std::max(0.0, d) / runs};
            kernelTask.again = again;
            tasks.push_back(kernelTask);
            for (const Collective& c : ownCollectives[k]) {
                if (roles.gradContribution[k]) {
                    // Every round under ZeRO-2/3, else once (ownCollectiveRepeats); priced per bucket.
                    tasks.push_back({SimTaskKind::GradReduce, op.id, zeroStageOf(policy) >= 2, 0.0, c.c.kind, static_cast<int>(c.c.axis),
                                     c.c.bytes});
                } else {
                    SimTask t{SimTaskKind::Blocking, op.id, perRound, c.seconds / runs, c.c.kind, static_cast<int>(c.c.axis), c.c.bytes};
                    t.again = again;
                    t.beside = runsBeside(model, op, policy, c.c.axis, attention[k]);
                    tasks.push_back(t);
                }
            }
        };
        std::map<int32_t, std::vector<OpId>> pendingRc;
        for (const Op& op : graph.ops())
            if (rc[static_cast<size_t>(op.id)]) pendingRc[blockOf(op.id)].push_back(op.id);
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (op.phase == Phase::Backward && blockOf(op.id) >= 0) {
                auto it = pendingRc.find(blockOf(op.id));
                if (it != pendingRc.end()) {
                    for (OpId r : it->second) addRun(graph.op(r), true);
                    pendingRc.erase(it);
                }
            }
            if (sourceLike[k]) {
                for (const Collective& c : ownCollectives[k])
                    tasks.push_back({SimTaskKind::WeightGather, op.id, false, 0.0, c.c.kind, static_cast<int>(c.c.axis), c.c.bytes});
                continue;
            }
            addRun(op, false);
        }
        for (const auto& [block, ops] : pendingRc)
            for (OpId r : ops) addRun(graph.op(r), true);
        std::vector<SimPlacement> placed;
        ev.simulated = simulateStep(graph, tasks, model, policy, withTimeline ? &placed : nullptr);
        if (withTimeline) simulatedTimeline(graph, mesh, tasks, placed, measured, ev.timeline);
        ev.tasks = std::move(tasks);
    }

    // Memory. A recomputing unit's activations are live while its backward ops run.
    std::map<int32_t, int64_t> recomputed;  // unit → bytes
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const TensorPlan& t = plan.tensors[k];
        const int64_t own = ownBytes[k];
        if (op.kind == OpKind::Parameter) {
            const MemoryBreakdown held = parameterMemory(op, own, replicas(t.result), policy, !resident.empty() && resident[k]);
            ev.memory.weights += held.weights;
            ev.memory.gradients += held.gradients;
            ev.memory.optimizer += held.optimizer;
            ev.memory.activations += held.activations;
            ev.opMemory[k] = held;
            continue;
        }
        if (sourceLike[k] || op.phase != Phase::Forward) continue;
        const bool kept = checkpoint[k] || (readByBackward[k] && !rc[k]);
        // A partial sum over the sequence-parallel axis, reduce-scattered by the op into a piece.
        bool completed = false;
        for (const std::string& axis : t.ownCollectiveAxes)
            completed = completed || (spAxis >= 0 && spScatters[k] && mesh.axisIndex(axis) == static_cast<size_t>(spAxis));
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

    return ev;
}

}  // namespace cfp
