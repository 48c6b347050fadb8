#include "blocks/block_checker.h"

#include <algorithm>
#include <map>
#include <optional>

#include "rules/op_rules.h"

namespace cfp {

namespace {

bool isSourceKind(OpKind k) { return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota; }

std::vector<std::string> partialAxesInMeshOrder(const TensorSharding& s, const Mesh& mesh) {
    std::vector<std::string> out;
    for (const auto& axis : mesh.axes())
        if (s.isPartialOver(axis.name)) out.push_back(axis.name);
    return out;
}

struct Checker {
    const Graph& g;
    const BlockAnalysis& a;
    BlockCheckReport report;
    std::vector<char> m_static;

    void classify() {
        m_static.assign(static_cast<size_t>(g.size()), 0);
        for (const Op& op : g.ops()) {
            bool st;
            if (op.kind == OpKind::Parameter)
                st = op.role == ParamRole::Trainable || op.role == ParamRole::OptimizerState;
            else if (op.kind == OpKind::Constant || op.kind == OpKind::Iota)
                st = true;
            else {
                st = !op.operands.empty();
                for (OpId o : op.operands) st = st && m_static[static_cast<size_t>(o)];
            }
            m_static[static_cast<size_t>(op.id)] = st;
        }
    }

    void fail(std::string text) {
        if (report.pass) {
            report.pass = false;
            report.firstViolation = std::move(text);
        }
    }

    void checkBlock(const ParallelBlock& b) {
        const size_t n = b.members.size();
        std::vector<std::optional<OpShardingRule>> rules(n);
        for (size_t k = 0; k < n; ++k) {
            auto r = shardingRuleFor(g, g.op(b.members[k]));
            if (!r) {
                fail("block " + std::to_string(b.id) + ": member " + g.op(b.members[k]).name + " has no sharding rule");
                return;
            }
            rules[k] = std::move(*r);
        }
        std::map<OpId, const DotPair*> pairOf;
        for (const auto& p : b.backwardPairs) pairOf[p.backward] = &p;
        auto idx = [&](OpId op) { return b.memberIndex(op); };
        // Member-local wiring, computed once per block: operand → member index (or -1), and for
        // each member the consuming members with the first operand slot that reads it (id order).
        std::vector<std::vector<int64_t>> operandIndex(n);
        std::vector<std::vector<std::pair<size_t, size_t>>> consumers(n);
        for (size_t k = 0; k < n; ++k) {
            const Op& op = g.op(b.members[k]);
            operandIndex[k].reserve(op.operands.size());
            for (size_t i = 0; i < op.operands.size(); ++i) {
                const int64_t p = idx(op.operands[i]);
                operandIndex[k].push_back(p);
                if (p < 0) continue;
                auto& list = consumers[static_cast<size_t>(p)];
                if (list.empty() || list.back().first != k) list.emplace_back(k, i);
            }
        }
        // A member is derived forward when some operand is a member, or it is the entry or a
        // paired backward dot; otherwise backward from a consuming member.
        // Sources and static values (derived only from weights, optimizer state, constants, iota)
        // take the sharding their consumers need; everything else follows its operands.
        std::vector<char> forwardType(n, 0);
        for (size_t k = 0; k < n; ++k) {
            const Op& op = g.op(b.members[k]);
            const bool pulled = isSourceKind(op.kind) || m_static[static_cast<size_t>(op.id)];
            forwardType[k] = op.id == b.entry || pairOf.count(op.id) ||
                             (!pulled && std::any_of(operandIndex[k].begin(), operandIndex[k].end(), [](int64_t p) { return p >= 0; }));
        }
        for (size_t s = 0; s < b.strategies.size(); ++s) {
            const BlockStrategy& st = b.strategies[s];
            const std::string where = "block " + std::to_string(b.id) + " strategy " + st.label;
            std::vector<std::optional<TensorSharding>> derived(n);
            std::vector<std::optional<FactorAssignment>> factors(n);
            StrategyCollectives collectives{b.id, st.label, {}};
            auto finish = [&](size_t k, const TensorSharding& result) {
                const auto axes = partialAxesInMeshOrder(result, a.mesh);
                TensorSharding done = result;
                if (!axes.empty()) {
                    done = *result.withPartialAxes({});
                    collectives.collectives.push_back(OwnCollective{b.members[k], CollectiveKind::AllReduce, axes,
                                                                    g.op(b.members[k]).type.bytes()});
                }
                derived[k] = done;
            };
            // Strict passes wait for every in-block operand; when they stall, one relaxed step lets
            // the lowest pending member treat not-yet-derived pulled operands as adapting (they are
            // then derived backward from it), as a pulled weight adapts to its consumer.
            bool progress = true;
            bool relaxed = false;
            while (progress) {
                progress = false;
                // In a relaxed step only the chosen member may proceed: the pending member with the
                // most informative (split) derived operands, lowest id on ties.
                int64_t chosen = -1;
                if (relaxed) {
                    int best = -1;
                    for (size_t k = 0; k < n; ++k) {
                        if (derived[k] || !forwardType[k]) continue;
                        int info = 0;
                        bool ready = true;
                        auto pit = pairOf.find(b.members[k]);
                        if (pit != pairOf.end()) {
                            const int64_t f = idx(pit->second->forward);
                            ready = f >= 0 && derived[static_cast<size_t>(f)].has_value();
                        }
                        for (const int64_t p : operandIndex[k]) {
                            if (p >= 0 && forwardType[static_cast<size_t>(p)] && !derived[static_cast<size_t>(p)]) ready = false;
                            if (p >= 0 && derived[static_cast<size_t>(p)] && !derived[static_cast<size_t>(p)]->isReplicated()) ++info;
                        }
                        if (ready && info > best) {
                            best = info;
                            chosen = static_cast<int64_t>(k);
                        }
                    }
                }
                for (size_t k = 0; k < n; ++k) {
                    if (derived[k]) continue;
                    if (relaxed && static_cast<int64_t>(k) != chosen) continue;
                    const Op& op = g.op(b.members[k]);
                    const OpShardingRule& rule = *rules[k];
                    if (op.id == b.entry) {
                        std::vector<std::optional<TensorSharding>> in(st.entryOperands.begin(), st.entryOperands.end());
                        auto fa = factorsFromOperands(rule, in, a.mesh);
                        if (!fa) {
                            fail(where + ": entry " + op.name + " strategy is invalid: " + fa.error().message);
                            return;
                        }
                        factors[k] = *fa;
                        finish(k, resultShardingFor(rule, *fa, a.mesh));
                        progress = true;
                        continue;
                    }
                    if (forwardType[k]) {
                        std::vector<std::optional<TensorSharding>> in(op.operands.size());
                        bool ready = true;
                        auto pit = pairOf.find(op.id);
                        for (size_t i = 0; i < op.operands.size(); ++i) {
                            if (pit != pairOf.end() && static_cast<int32_t>(i) == pit->second->gradOperand) {
                                const int64_t f = idx(pit->second->forward);
                                if (f < 0 || !derived[static_cast<size_t>(f)]) { ready = false; break; }
                                in[i] = derived[static_cast<size_t>(f)];
                                continue;
                            }
                            const int64_t p = operandIndex[k][i];
                            if (p < 0) {
                                // A paired backward dot reads its shared operand as its forward dot does.
                                if (pit != pairOf.end()) {
                                    const DotPair& pr = *pit->second;
                                    const size_t fpos = pr.side == 0 ? 1 : 0;
                                    const Op& fwd = g.op(pr.forward);
                                    const int64_t f = idx(pr.forward);
                                    if (i == fpos && fwd.operands[fpos] == op.operands[i] && f >= 0) {
                                        if (!factors[static_cast<size_t>(f)]) { ready = false; break; }
                                        in[i] = operandShardingFor(*rules[static_cast<size_t>(f)], *factors[static_cast<size_t>(f)], fpos, a.mesh);
                                    }
                                }
                                continue;  // external: adapts
                            }
                            if (!derived[static_cast<size_t>(p)]) {
                                if (relaxed && !forwardType[static_cast<size_t>(p)]) continue;
                                ready = false;
                                break;
                            }
                            in[i] = derived[static_cast<size_t>(p)];
                        }
                        if (!ready) continue;
                        auto fa = factorsFromOperands(rule, in, a.mesh);
                        if (!fa) {
                            fail(where + ": " + op.name + " cannot be derived from its operands in the block: " + fa.error().message);
                            return;
                        }
                        factors[k] = *fa;
                        finish(k, resultShardingFor(rule, *fa, a.mesh));
                        progress = true;
                        continue;
                    }
                    // Backward from the first consuming member that is derived.
                    for (const auto& [u, i] : consumers[k]) {
                        if (!factors[u]) continue;
                        const Op& uo = g.op(b.members[u]);
                        const TensorSharding need = operandShardingFor(*rules[u], *factors[u], i, a.mesh);
                        if (isSourceKind(op.kind)) {
                            factors[k] = FactorAssignment{};
                        } else {
                            auto fa = factorsFromResult(rule, need, a.mesh);
                            if (!fa) {
                                fail(where + ": " + op.name + " cannot produce what " + uo.name + " needs: " + fa.error().message);
                                return;
                            }
                            factors[k] = *fa;
                        }
                        derived[k] = need;
                        progress = true;
                        break;
                    }
                }
                if (!progress && !relaxed) {
                    relaxed = true;
                    progress = true;
                } else if (progress) {
                    relaxed = false;
                }
            }
            for (size_t k = 0; k < n; ++k) {
                const Op& op = g.op(b.members[k]);
                if (!derived[k]) {
                    fail(where + ": member " + op.name + " cannot be derived from the entry");
                    return;
                }
                const TensorSharding& stored = a.sharding(b, s, k);
                if (!(stored == *derived[k])) {
                    fail(where + ": member " + op.name + " stored " + stored.toString() + ", re-derived " + derived[k]->toString());
                    return;
                }
            }
            // Every intra-block edge: producer's sharding → what the consumer expects.
            for (size_t k = 0; k < n; ++k) {
                const Op& op = g.op(b.members[k]);
                for (size_t i = 0; i < op.operands.size(); ++i) {
                    const int64_t p = operandIndex[k][i];
                    if (p < 0) continue;
                    const TensorSharding expected = operandShardingFor(*rules[k], *factors[k], i, a.mesh);
                    const TensorSharding& have = *derived[static_cast<size_t>(p)];
                    ++report.edgesChecked;
                    if (have == expected) continue;
                    auto plan = planReshard(have, expected, a.mesh, g.op(op.operands[i]).type);
                    const int64_t steps = plan ? static_cast<int64_t>(plan->steps.size()) : 1;
                    report.reshardSteps += steps;
                    if (steps > 0)
                        fail(where + ": edge " + g.op(op.operands[i]).name + " -> " + op.name + " needs resharding " +
                             have.toString() + " -> " + expected.toString());
                }
            }
            std::sort(collectives.collectives.begin(), collectives.collectives.end(),
                      [](const OwnCollective& x, const OwnCollective& y) { return x.op < y.op; });
            if (collectives.collectives != st.ownCollectives)
                fail(where + ": own collectives differ from the stored ones (" + std::to_string(st.ownCollectives.size()) +
                     " stored, " + std::to_string(collectives.collectives.size()) + " re-derived)");
            report.ownCollectives.push_back(std::move(collectives));
            if (!report.pass) return;
        }
    }
};

}  // namespace

BlockCheckReport checkBlocks(const Graph& graph, const BlockAnalysis& analysis) {
    Checker c{graph, analysis, {}, {}};
    c.classify();
    std::vector<int32_t> seen(static_cast<size_t>(graph.size()), 0);
    for (const auto& b : analysis.blocks) {
        for (OpId m : b.members) {
            if (m < 0 || m >= graph.size() || seen[static_cast<size_t>(m)]++) {
                c.fail("block " + std::to_string(b.id) + ": op " + std::to_string(m) + " is out of range or in two blocks");
                return c.report;
            }
        }
        c.checkBlock(b);
        if (!c.report.pass) return c.report;
    }
    for (const auto& u : analysis.resolvedLater)
        if (seen[static_cast<size_t>(u.op)]++) {
            c.fail("op " + graph.op(u.op).name + " is both in a block and resolved later");
            return c.report;
        }
    for (OpId op = 0; op < graph.size(); ++op)
        if (!seen[static_cast<size_t>(op)]) {
            c.fail("op " + graph.op(op).name + " is neither in a block nor resolved later");
            return c.report;
        }
    return c.report;
}

}  // namespace cfp
