#include "plan/op_owners.h"

#include "cost/op_cost.h"
#include "rules/op_rules.h"

namespace cfp {

Consumers::Consumers(const Graph& graph) {
    const auto n = static_cast<size_t>(graph.size());
    start.assign(n + 1, 0);
    for (const Op& op : graph.ops())
        for (OpId o : op.operands) ++start[static_cast<size_t>(o) + 1];
    for (size_t k = 0; k < n; ++k) start[k + 1] += start[k];
    list.resize(static_cast<size_t>(start[n]));
    std::vector<int64_t> at(start.begin(), start.end() - 1);
    for (const Op& op : graph.ops())
        for (size_t i = 0; i < op.operands.size(); ++i)
            list[static_cast<size_t>(at[static_cast<size_t>(op.operands[i])]++)] = {op.id, static_cast<int32_t>(i)};
}

OpOwners decideOwners(const Graph& graph, const BlockAnalysis& ba, const std::vector<char>& sourceLike,
                      const std::vector<char>& hasRule, const Consumers& consumers) {
    const auto n = static_cast<size_t>(graph.size());
    OpOwners o;
    o.owner.assign(n, -1);
    o.memberIndex.assign(n, -1);
    o.follows.assign(n, -1);
    o.pulledBy.assign(n, {kNoOp, -1});
    auto constantDerived = [&](size_t k) { return sourceLike[k] && graph.op(static_cast<OpId>(k)).kind != OpKind::Parameter; };
    for (const ParallelBlock& b : ba.blocks)
        for (size_t k = 0; k < b.members.size(); ++k) {
            const auto m = static_cast<size_t>(b.members[k]);
            if (constantDerived(m)) continue;
            o.owner[m] = b.id;
            o.memberIndex[m] = static_cast<int64_t>(k);
        }
    o.order.reserve(n);
    for (const Op& op : graph.ops())
        if (o.memberIndex[static_cast<size_t>(op.id)] >= 0) o.order.push_back(op.id);
    // Parameters outside blocks (optimizer state, norms' scales, data inputs) are pulled too: they
    // are stored the way their first consumer reads them.
    auto free = [&](size_t k) {
        const bool param = graph.op(static_cast<OpId>(k)).kind == OpKind::Parameter;
        return o.memberIndex[k] < 0 && o.owner[k] < 0 && (param || (!sourceLike[k] && hasRule[k]));
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (!free(k)) continue;
            // An op follows what is computed, not a trainable weight another block owns (as a block
            // grows, blocks.cpp): a token lookup is not kept whole with the tied LM head's table but
            // pulled by its consumer, split over the batch like the layer it feeds.
            int32_t pick = -1;
            for (size_t i = 0; i < op.operands.size(); ++i)
                if (o.owner[static_cast<size_t>(op.operands[i])] >= 0 && graph.op(op.operands[i]).role != ParamRole::Trainable &&
                    (pick < 0 || op.operands[i] > op.operands[static_cast<size_t>(pick)]))
                    pick = static_cast<int32_t>(i);
            if (pick < 0) continue;
            o.follows[k] = pick;
            o.owner[k] = o.owner[static_cast<size_t>(op.operands[static_cast<size_t>(pick)])];
            o.order.push_back(op.id);
            changed = true;
        }
        for (OpId id = graph.size() - 1; id >= 0; --id) {
            const auto k = static_cast<size_t>(id);
            if (!free(k)) continue;
            for (const auto& [c, slot] : consumers.of(k)) {
                if (o.owner[static_cast<size_t>(c)] < 0) continue;
                o.pulledBy[k] = {c, slot};
                o.owner[k] = o.owner[static_cast<size_t>(c)];
                o.order.push_back(id);
                changed = true;
                break;
            }
        }
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (o.memberIndex[k] >= 0 || o.owner[k] >= 0) continue;
        if (!sourceLike[k] && hasRule[k])
            for (size_t i = 0; i < op.operands.size() && o.follows[k] < 0; ++i)
                if (!sourceLike[static_cast<size_t>(op.operands[i])]) o.follows[k] = static_cast<int32_t>(i);
        o.order.push_back(op.id);
    }
    return o;
}

OpDecisionCounts countOpDecisions(const Graph& graph, const BlockAnalysis& blocks) {
    const auto n = static_cast<size_t>(graph.size());
    const std::vector<char> sourceLike = opRoles(graph, AttentionKernel::Flash).sourceLike;
    std::vector<char> hasRule(n, 0);
    const bool stored = blocks.rules && blocks.rules->size() == n;
    const std::vector<char> manual = stored ? std::vector<char>{} : manualRegionOps(graph);
    for (size_t k = 0; k < n; ++k)
        hasRule[k] = stored ? (*blocks.rules)[k].has_value()
                            : shardingRuleFor(graph, graph.op(static_cast<OpId>(k)), partitioningOf(manual, static_cast<OpId>(k))).ok();
    const OpOwners o = decideOwners(graph, blocks, sourceLike, hasRule, Consumers(graph));
    OpDecisionCounts c;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (!hasRule[k]) c.opaqueByTarget[op.kind == OpKind::CustomCall ? op.attrs.target : std::string(opKindName(op.kind))]++;
        if (o.memberIndex[k] >= 0) ++c.inBlocks;
        else if (o.owner[k] >= 0 && o.pulledBy[k].first != kNoOp) ++c.pulled;
        else if (o.owner[k] >= 0) ++c.follow;
        else if (sourceLike[k] && op.kind != OpKind::Parameter) ++c.constantFolded;
        else if (o.follows[k] >= 0) ++c.fixedFollowing;
        else ++c.replicated;
    }
    return c;
}

}  // namespace cfp
