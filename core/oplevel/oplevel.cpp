#include "oplevel/oplevel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "cost/op_cost.h"
#include "plan/evaluator.h"
#include "sharding/reshard.h"
#include "stats/graph_stats.h"

namespace cfp {

namespace {

constexpr int64_t kForbidden = 1'000'000'000'000'000'000;

bool sameStrategy(const OpStrategy& a, const OpStrategy& b) {
    return a.partialMask == b.partialMask && a.result == b.result && a.operands == b.operands;
}

OpStrategy strategyFrom(const OpShardingRule& rule, const FactorAssignment& a, size_t operandCount) {
    OpStrategy s;
    const CompactSharding full = projectResult(rule, a);
    s.result = full.withoutPartial();
    for (size_t ax = 0; ax < full.dimOf.size(); ++ax)
        if (full.dimOf[ax] == CompactSharding::kAxisPartial) s.partialMask |= 1u << ax;
    for (size_t i = 0; i < operandCount; ++i) s.operands.push_back(projectOperand(rule, a, i));
    return s;
}

// Every assignment of mesh axes (in mesh order) to splittable factors whose sizes they divide.
void enumerate(const OpShardingRule& rule, const MeshSizes& sizes, int axis, FactorAssignment& a, std::vector<int64_t>& used,
               std::vector<FactorAssignment>& out) {
    if (axis == sizes.rank) {
        out.push_back(a);
        return;
    }
    enumerate(rule, sizes, axis + 1, a, used, out);  // axis unused
    for (int32_t f = 0; f < rule.factorCount(); ++f) {
        const Factor& factor = rule.factors[static_cast<size_t>(f)];
        if (factor.kind == FactorKind::Blocked) continue;
        const int64_t product = used[static_cast<size_t>(f)] * sizes.size[static_cast<size_t>(axis)];
        if (factor.size % product != 0) continue;
        int8_t position = 0;
        for (int b = 0; b < axis; ++b)
            if (a.factorOf[static_cast<size_t>(b)] == f) ++position;
        a.factorOf[static_cast<size_t>(axis)] = static_cast<int16_t>(f);
        a.position[static_cast<size_t>(axis)] = position;
        const int64_t before = used[static_cast<size_t>(f)];
        used[static_cast<size_t>(f)] = product;
        enumerate(rule, sizes, axis + 1, a, used, out);
        used[static_cast<size_t>(f)] = before;
        a.factorOf[static_cast<size_t>(axis)] = -1;
        a.position[static_cast<size_t>(axis)] = -1;
    }
}

struct ReshardKey {
    int32_t type;
    CompactSharding from, to;
    bool operator==(const ReshardKey&) const = default;
};
struct ReshardKeyHash {
    size_t operator()(const ReshardKey& k) const { return (k.from.hash() * 31 + k.to.hash()) * 131 + static_cast<size_t>(k.type); }
};

}  // namespace

Result<OpLevelFormulation> buildOpLevel(const Graph& graph, const CostModel& model, const OpLevelOptions& options, const Plan* extra) {
    const Mesh& mesh = model.mesh();
    const MeshSizes& sizes = model.sizes();
    const auto n = static_cast<size_t>(graph.size());
    OpLevelFormulation f;
    f.costUnitSeconds = options.costUnitSeconds;
    f.strategies.resize(n);
    auto units = [&](double seconds) { return static_cast<int64_t>(std::llround(seconds / options.costUnitSeconds)); };

    // Sources and values computed from constants alone cost nothing (the evaluator's rule).
    const std::vector<char> sourceLike = opRoles(graph).sourceLike;
    std::vector<int32_t> uses(n, 0);
    std::vector<int64_t> lastUse(n, 0);
    for (const Op& op : graph.ops()) {
        lastUse[static_cast<size_t>(op.id)] = op.id;
        for (OpId o : op.operands) {
            ++uses[static_cast<size_t>(o)];
            lastUse[static_cast<size_t>(o)] = std::max<int64_t>(lastUse[static_cast<size_t>(o)], op.id);
        }
    }

    // Strategies.
    std::vector<char> follower(n, 0);
    std::vector<std::optional<OpShardingRule>> rules(n);
    const std::vector<char> manual = manualRegionOps(graph);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        auto& list = f.strategies[k];
        const Partitioning partitioning = partitioningOf(manual, op.id);
        if (auto rule = shardingRuleFor(graph, op, partitioning)) rules[k] = std::move(*rule);
        // A manual (shard_map) region as written (rules/op_rules.h): its boundaries and all-reduces
        // in the source's one strategy, its other ops unsplit.
        const bool asWritten = rules[k] && (isSourcePinned(op, partitioning) || manual[k]);
        if (asWritten) {
            FactorAssignment a;
            if (isSourcePinned(op, partitioning)) {
                auto pin = sourcePinnedFactors(op, *rules[k], mesh);
                if (!pin) return pin.error();
                a = *pin;
            }
            list.push_back(strategyFrom(*rules[k], a, op.operands.size()));
        }
        const bool follows = !asWritten && options.followTrivial && rules[k] && op.operands.size() == 1 && isFusibleKind(op.kind) &&
                             !sourceLike[static_cast<size_t>(op.operands[0])] && !sourceLike[k];
        if (follows) {
            follower[k] = 1;
            ++f.followers;
            for (const OpStrategy& ps : f.strategies[static_cast<size_t>(op.operands[0])]) {
                const CompactSharding* have[] = {&ps.result};
                FactorAssignment a;
                if (!assignFromOperands(*rules[k], have, sizes, a, nullptr)) a = FactorAssignment{};
                list.push_back(strategyFrom(*rules[k], a, 1));
            }
            continue;
        }
        if (asWritten) {
            // its one strategy, above
        } else if (!rules[k]) {
            OpStrategy s;
            s.result = CompactSharding::replicated(op.type.rank());
            for (OpId o : op.operands) s.operands.push_back(CompactSharding::replicated(graph.op(o).type.rank()));
            list.push_back(s);
        } else {
            std::vector<FactorAssignment> assignments;
            FactorAssignment a;
            std::vector<int64_t> used(static_cast<size_t>(rules[k]->factorCount()), 1);
            enumerate(*rules[k], sizes, 0, a, used, assignments);
            for (const FactorAssignment& fa : assignments) {
                OpStrategy s = strategyFrom(*rules[k], fa, op.operands.size());
                if (std::none_of(list.begin(), list.end(), [&](const OpStrategy& t) { return sameStrategy(t, s); })) list.push_back(std::move(s));
            }
        }
        if (extra && k < extra->tensors.size()) {
            const TensorPlan& t = extra->tensors[k];
            OpStrategy s;
            auto result = toCompact(t.result, mesh);
            if (!result) return result.error().withContext(op.name + " result");
            s.result = *result;
            for (const TensorSharding& o : t.operands) {
                auto c = toCompact(o, mesh);
                if (!c) return c.error().withContext(op.name + " operand");
                s.operands.push_back(*c);
            }
            for (const std::string& axis : t.ownCollectiveAxes)
                if (auto ax = mesh.axisIndex(axis)) s.partialMask |= 1u << *ax;
            if (s.operands.size() == op.operands.size() &&
                std::none_of(list.begin(), list.end(), [&](const OpStrategy& u) { return sameStrategy(u, s); }))
                list.push_back(std::move(s));
        }
    }

    // Nodes: costs, usages, intervals.
    iopddl::Problem& p = f.problem;
    p.name = graph.name();
    const int64_t horizon = static_cast<int64_t>(n);
    std::vector<int64_t> costs, usage;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        costs.clear();
        usage.clear();
        for (const OpStrategy& s : f.strategies[k]) {
            const int64_t resultBytes = localBytes(op.type, s.result, sizes);
            double seconds = 0;
            if (!sourceLike[k]) {
                uint32_t axesUsed = s.partialMask;
                auto addAxes = [&](const CompactSharding& c) {
                    for (int a = 0; a < sizes.rank; ++a)
                        if (c.dimOf[static_cast<size_t>(a)] >= 0) axesUsed |= 1u << a;
                };
                addAxes(s.result);
                double bytes = static_cast<double>(resultBytes);
                for (size_t i = 0; i < op.operands.size(); ++i) {
                    addAxes(s.operands[i]);
                    bytes += static_cast<double>(localBytes(graph.op(op.operands[i]).type, s.operands[i], sizes));
                }
                // Without the step's memory policy (no optimizer-state sharding): cost/op_cost.h.
                const std::optional<GemmGrid> grid = gemmGridOf(graph, op, localDims(op.type, s.result, sizes));
                seconds = opKernelSeconds(model, op, opFlops(graph, op), axesUsed, bytes, 1, false, grid ? &*grid : nullptr) +
                          ownCollectiveSeconds(model, s.partialMask, resultBytes, 0u);
            }
            costs.push_back(units(seconds));
            usage.push_back(sourceLike[k] && op.kind != OpKind::Parameter ? 0 : resultBytes);
        }
        const iopddl::Interval live = op.kind == OpKind::Parameter ? iopddl::Interval{0, horizon}
                                                                   : iopddl::Interval{op.id, lastUse[k] + 1};
        p.addNode(live, costs, usage);
    }

    // Edges, one per operand use.
    std::vector<TensorType> types;
    auto typeIndex = [&](const TensorType& t) {
        auto it = std::find(types.begin(), types.end(), t);
        if (it != types.end()) return static_cast<int32_t>(it - types.begin());
        types.push_back(t);
        return static_cast<int32_t>(types.size()) - 1;
    };
    std::unordered_map<ReshardKey, double, ReshardKeyHash> reshardCache;
    std::vector<int64_t> edgeCosts;
    for (const Op& op : graph.ops()) {
        const auto v = static_cast<size_t>(op.id);
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            const Op& producer = graph.op(u);
            const auto ku = static_cast<size_t>(u);
            const bool fusible = fusesInto(producer.kind, op.kind) && uses[ku] == 1 && !sourceLike[ku];
            const int32_t type = typeIndex(producer.type);
            const auto& from = f.strategies[ku];
            const auto& to = f.strategies[v];
            edgeCosts.assign(from.size() * to.size(), 0);
            for (size_t a = 0; a < from.size(); ++a)
                for (size_t b = 0; b < to.size(); ++b) {
                    int64_t& cost = edgeCosts[a * to.size() + b];
                    if (follower[v] && a != b) {
                        cost = kForbidden;
                        continue;
                    }
                    const CompactSharding& have = from[a].result;
                    const CompactSharding& need = to[b].operands[i];
                    if (have == need) {
                        if (fusible) cost = -units(model.fusedEdgeSavingSeconds(localBytes(producer.type, have, sizes)));
                        continue;
                    }
                    const ReshardKey key{type, have, need};
                    auto it = reshardCache.find(key);
                    if (it == reshardCache.end()) {
                        auto rp = planReshard(fromCompact(have, mesh), fromCompact(need, mesh), mesh, producer.type);
                        if (!rp) return rp.error().withContext("edge " + producer.name + " -> " + op.name);
                        it = reshardCache.emplace(key, model.reshardSeconds(*rp)).first;
                    }
                    cost = units(it->second);
                }
            const int64_t ends[] = {static_cast<int64_t>(u), op.id};
            p.addEdge(ends, edgeCosts);
        }
    }
    f.firstCarriedEdge = p.edgeCount();
    if (options.carryUpdates)
        for (const auto& [updated, parameter] : carriedParameters(graph)) {
            const auto& from = f.strategies[static_cast<size_t>(updated)];
            const auto& to = f.strategies[static_cast<size_t>(parameter)];
            const TensorType& type = graph.op(updated).type;
            const int32_t typeId = typeIndex(type);
            edgeCosts.assign(from.size() * to.size(), 0);
            for (size_t a = 0; a < from.size(); ++a)
                for (size_t b = 0; b < to.size(); ++b) {
                    if (from[a].result == to[b].result) continue;
                    const ReshardKey key{typeId, from[a].result, to[b].result};
                    auto it = reshardCache.find(key);
                    if (it == reshardCache.end()) {
                        auto rp = planReshard(fromCompact(from[a].result, mesh), fromCompact(to[b].result, mesh), mesh, type);
                        if (!rp) return rp.error().withContext("update " + graph.op(updated).name + " -> " + graph.op(parameter).name);
                        it = reshardCache.emplace(key, model.reshardSeconds(*rp)).first;
                    }
                    edgeCosts[a * to.size() + b] = units(it->second);
                }
            const int64_t ends[] = {static_cast<int64_t>(updated), static_cast<int64_t>(parameter)};
            p.addEdge(ends, edgeCosts);
        }
    if (options.memoryLimitBytes > 0) p.usageLimit = options.memoryLimitBytes;
    return f;
}

std::vector<std::pair<OpId, OpId>> carriedParameters(const Graph& graph) {
    std::map<std::string, OpId> parameterByName;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Parameter) parameterByName[op.name] = op.id;
    std::map<OpId, std::vector<OpId>> updatesOf;  // trainable parameter -> its optimizer outputs, in output order
    for (const OpId o : graph.outputs()) {
        const Op& op = graph.op(o);
        if (op.phase == Phase::Optimizer && op.derivedFrom != kNoOp) updatesOf[op.derivedFrom].push_back(o);
    }
    std::vector<std::pair<OpId, OpId>> pairs;
    for (const auto& [p, outputs] : updatesOf) {
        const std::string& name = graph.op(p).name;
        std::vector<OpId> replaced{p};
        for (const char* suffix : {".master", ".adam_m", ".adam_v"}) {
            auto it = parameterByName.find(name + suffix);
            if (it != parameterByName.end()) replaced.push_back(it->second);
        }
        for (size_t i = 0; i < outputs.size() && i < replaced.size(); ++i)
            if (graph.op(outputs[i]).type == graph.op(replaced[i]).type) pairs.emplace_back(outputs[i], replaced[i]);
    }
    return pairs;
}

Result<iopddl::Solution> solutionForPlan(const OpLevelFormulation& f, const Graph& graph, const Plan& plan) {
    if (plan.tensors.size() != static_cast<size_t>(graph.size()) || f.strategies.size() != plan.tensors.size())
        return makeError("plan.mismatch", "the plan has " + std::to_string(plan.tensors.size()) + " tensors, the graph " +
                                              std::to_string(graph.size()) + " ops");
    iopddl::Solution s(plan.tensors.size(), -1);
    for (const Op& op : graph.ops()) {
        const TensorPlan& t = plan.tensors[static_cast<size_t>(op.id)];
        OpStrategy want;
        auto result = toCompact(t.result, plan.mesh);
        if (!result) return result.error().withContext(op.name);
        want.result = *result;
        for (const TensorSharding& o : t.operands) {
            auto c = toCompact(o, plan.mesh);
            if (!c) return c.error().withContext(op.name);
            want.operands.push_back(*c);
        }
        for (const std::string& axis : t.ownCollectiveAxes)
            if (auto ax = plan.mesh.axisIndex(axis)) want.partialMask |= 1u << *ax;
        const auto& list = f.strategies[static_cast<size_t>(op.id)];
        for (size_t i = 0; i < list.size(); ++i)
            if (sameStrategy(list[i], want)) {
                s[static_cast<size_t>(op.id)] = static_cast<int64_t>(i);
                break;
            }
        if (s[static_cast<size_t>(op.id)] < 0)
            return makeError("oplevel.not_representable", "the plan's shardings of " + op.name + " are not among its op-level strategies");
    }
    return s;
}

Plan planForSolution(const OpLevelFormulation& f, const Graph& graph, const Mesh& mesh, const iopddl::Solution& solution) {
    Plan plan;
    plan.mesh = mesh;
    plan.policy.optimizerSharding = false;
    plan.policy.recompute = RecomputePolicy::None;
    plan.policy.attention = AttentionKernel::Eager;  // the op-level formulation prices every op as a kernel
    plan.policy.overlapGradReduce = plan.policy.overlapParamGather = false;  // and every collective on the critical path
    for (const Op& op : graph.ops()) {
        const OpStrategy& s = f.strategies[static_cast<size_t>(op.id)][static_cast<size_t>(solution[static_cast<size_t>(op.id)])];
        TensorPlan t;
        t.op = op.id;
        t.result = fromCompact(s.result, mesh);
        for (const CompactSharding& o : s.operands) t.operands.push_back(fromCompact(o, mesh));
        for (size_t a = 0; a < mesh.axes().size(); ++a)
            if (s.partialMask & (1u << a)) t.ownCollectiveAxes.push_back(mesh.axes()[a].name);
        plan.tensors.push_back(std::move(t));
    }
    return plan;
}

}  // namespace cfp
