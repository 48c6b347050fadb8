#include "blocks/block_checker.h"

#include <algorithm>
#include <map>
#include <optional>

#include "rules/op_rules.h"
#include "util/parallel.h"

namespace cfp {

namespace {

bool isSourceKind(OpKind k) { return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota; }

// Positions renumbered 0..n-1 within each dimension, so that two compact shardings that list the
// same axes in the same order compare equal whatever positions produced them.
CompactSharding normalized(const CompactSharding& c) {
    CompactSharding out = c;
    for (size_t a = 0; a < out.dimOf.size(); ++a) {
        if (out.dimOf[a] < 0) {
            out.position[a] = -1;
            continue;
        }
        int8_t rank = 0;
        for (size_t b = 0; b < out.dimOf.size(); ++b)
            if (c.dimOf[b] == c.dimOf[a] && c.position[b] < c.position[a]) ++rank;
        out.position[a] = rank;
    }
    return out;
}

bool isReplicated(const CompactSharding& c) {
    return std::all_of(c.dimOf.begin(), c.dimOf.end(), [](int8_t d) { return d == CompactSharding::kAxisUnused; });
}

// The checker works on compact (mesh-axis-index) shardings: fixed size, no allocation per edge.
// Text forms are built only for messages.
struct Checker {
    const Graph& g;
    const BlockAnalysis& a;
    BlockCheckReport report;
    std::vector<char> m_static;
    std::vector<char> m_data;  // isStepData (op_rules.h), as the finder has it
    std::vector<char> m_manual;  // in a manual region: re-derived from the graph (op_rules.h)
    MeshSizes m_sizes;
    std::vector<CompactSharding> m_stored;  // a.shardings in compact form (for the comparison only)

    void prepare() {
        m_static.assign(static_cast<size_t>(g.size()), 0);
        m_data.assign(static_cast<size_t>(g.size()), 0);
        m_manual = manualRegionOps(g);
        for (const Op& op : g.ops()) {
            bool st;
            if (op.kind == OpKind::Parameter)
                st = op.role == ParamRole::Trainable || op.role == ParamRole::OptimizerState;
            else if (op.kind == OpKind::Constant || op.kind == OpKind::Iota)
                st = true;
            else {
                // An op without a sharding rule (an opaque custom-call) is a block boundary: what
                // it computes is not static even from static inputs, as for the finder.
                // A source-pinned op (a manual region's boundary or collective) is a block of its own.
                const Partitioning p = partitioningOf(m_manual, op.id);
                st = !op.operands.empty() && !isSourcePinned(op, p) && (op.kind != OpKind::CustomCall || shardingRuleFor(g, op, p).ok());
                for (OpId o : op.operands) st = st && m_static[static_cast<size_t>(o)];
            }
            m_static[static_cast<size_t>(op.id)] = st;
            m_data[static_cast<size_t>(op.id)] = !st && !isSourcePinned(op, partitioningOf(m_manual, op.id)) &&
                                                 isStepData(g, op, [&](OpId o) { return m_static[static_cast<size_t>(o)] || m_data[static_cast<size_t>(o)]; });
        }
        auto sizes = meshSizes(a.mesh);
        if (!sizes) {
            fail(sizes.error().message);
            return;
        }
        m_sizes = *sizes;
        m_stored.reserve(a.shardings.size());
        for (const TensorSharding& t : a.shardings) {
            auto c = toCompact(t, a.mesh);
            if (!c) {
                fail("stored sharding " + t.toString() + ": " + c.error().message);
                return;
            }
            m_stored.push_back(normalized(*c));
        }
    }

    void fail(std::string text) {
        if (report.pass) {
            report.pass = false;
            report.firstViolation = std::move(text);
        }
    }

    std::string text(const CompactSharding& c) const { return fromCompact(c, a.mesh).toString(); }

    void checkBlock(const ParallelBlock& b) {
        const size_t n = b.members.size();
        std::vector<OpShardingRule> rules(n);
        for (size_t k = 0; k < n; ++k) {
            auto r = shardingRuleFor(g, g.op(b.members[k]), partitioningOf(m_manual, b.members[k]));
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
        // Per member: its backward pairing (or null), its forward dot's index, and the operand slot
        // it shares with that forward dot (or -1).
        std::vector<const DotPair*> pairs(n, nullptr);
        std::vector<int64_t> forwardOf(n, -1), sharedSlot(n, -1);
        for (size_t k = 0; k < n; ++k) {
            auto pit = pairOf.find(b.members[k]);
            if (pit == pairOf.end()) continue;
            const DotPair& pr = *pit->second;
            pairs[k] = &pr;
            forwardOf[k] = idx(pr.forward);
            const Op& op = g.op(b.members[k]);
            const size_t fpos = pr.side == 0 ? 1 : 0;
            if (fpos < op.operands.size() && g.op(pr.forward).operands[fpos] == op.operands[fpos])
                sharedSlot[k] = static_cast<int64_t>(fpos);
        }
        // A member is derived forward when some operand is a member, or it is the entry or a
        // paired backward dot; otherwise backward from a consuming member.
        // Sources and static values (derived only from weights, optimizer state, constants, iota)
        // take the sharding their consumers need; everything else follows its operands — but a
        // broadcast of a computed value, which can make any slice of its new dims locally, takes
        // what its first consuming member needs where that member cannot follow it (below).
        std::vector<char> forwardType(n, 0);
        for (size_t k = 0; k < n; ++k) {
            const Op& op = g.op(b.members[k]);
            const bool pulled = isSourceKind(op.kind) || m_static[static_cast<size_t>(op.id)] || m_data[static_cast<size_t>(op.id)];
            forwardType[k] = op.id == b.entry || pairs[k] ||
                             (!pulled && std::any_of(operandIndex[k].begin(), operandIndex[k].end(), [](int64_t p) { return p >= 0; }));
        }

        std::vector<CompactSharding> derived(n), operandBuffer;
        std::vector<FactorAssignment> factors(n);
        std::vector<char> hasDerived(n), hasFactors(n);
        std::vector<const CompactSharding*> in;
        std::vector<size_t> pending(n);
        std::string why;
        for (size_t s = 0; s < b.strategies.size(); ++s) {
            const BlockStrategy& st = b.strategies[s];
            auto where = [&] { return "block " + std::to_string(b.id) + " strategy " + st.label; };
            std::fill(hasDerived.begin(), hasDerived.end(), 0);
            std::fill(hasFactors.begin(), hasFactors.end(), 0);
            StrategyCollectives collectives{b.id, st.label, {}};
            auto finish = [&](size_t k, const FactorAssignment& fa) {
                factors[k] = fa;
                hasFactors[k] = 1;
                const CompactSharding result = projectResult(rules[k], fa);
                if (result.isPartial()) {
                    std::vector<std::string> axes;
                    for (int x = 0; x < m_sizes.rank; ++x)
                        if (result.dimOf[static_cast<size_t>(x)] == CompactSharding::kAxisPartial)
                            axes.push_back(a.mesh.axes()[static_cast<size_t>(x)].name);
                    collectives.collectives.push_back(
                        OwnCollective{b.members[k], CollectiveKind::AllReduce, std::move(axes), g.op(b.members[k]).type.bytes()});
                }
                derived[k] = normalized(result.withoutPartial());
                hasDerived[k] = 1;
            };
            // Whether a forward-derived member has everything it reads.
            auto forwardReady = [&](size_t k, bool relaxedStep) {
                const std::vector<int64_t>& ops = operandIndex[k];
                const int64_t f = forwardOf[k];
                for (size_t i = 0; i < ops.size(); ++i) {
                    if (pairs[k] && static_cast<int32_t>(i) == pairs[k]->gradOperand) {
                        if (f < 0 || !hasDerived[static_cast<size_t>(f)]) return false;
                        continue;
                    }
                    const int64_t p = ops[i];
                    if (p < 0) {
                        if (static_cast<int64_t>(i) == sharedSlot[k] && f >= 0 && !hasFactors[static_cast<size_t>(f)]) return false;
                        continue;
                    }
                    if (!hasDerived[static_cast<size_t>(p)] && !(relaxedStep && !forwardType[static_cast<size_t>(p)])) return false;
                }
                return true;
            };
            // Strict passes wait for every in-block operand; when they stall, one relaxed step lets
            // one pending member treat not-yet-derived pulled operands as adapting (they are then
            // derived backward from it), as a pulled weight adapts to its consumer. Passes visit only
            // the members still pending, in id order.
            pending.resize(n);
            for (size_t k = 0; k < n; ++k) pending[k] = k;
            bool progress = true;
            bool relaxed = false;
            while (progress && !pending.empty()) {
                progress = false;
                // In a relaxed step only the chosen member may proceed: the pending member with the
                // most informative (split) derived operands, lowest id on ties.
                int64_t chosen = -1;
                if (relaxed) {
                    int best = -1;
                    for (const size_t k : pending) {
                        if (!forwardType[k]) continue;
                        if (pairs[k] && (forwardOf[k] < 0 || !hasDerived[static_cast<size_t>(forwardOf[k])])) continue;
                        int info = 0;
                        bool ready = true;
                        for (const int64_t p : operandIndex[k]) {
                            if (p < 0) continue;
                            const auto q = static_cast<size_t>(p);
                            if (forwardType[q] && !hasDerived[q]) ready = false;
                            if (hasDerived[q] && !isReplicated(derived[q])) ++info;
                        }
                        if (ready && info > best) {
                            best = info;
                            chosen = static_cast<int64_t>(k);
                        }
                    }
                }
                for (const size_t k : pending) {
                    if (hasDerived[k]) continue;
                    if (relaxed && static_cast<int64_t>(k) != chosen) continue;
                    const Op& op = g.op(b.members[k]);
                    const OpShardingRule& rule = rules[k];
                    if (op.id == b.entry) {
                        operandBuffer.clear();
                        for (const TensorSharding& t : st.entryOperands) {
                            auto c = toCompact(t, a.mesh);
                            if (!c) {
                                fail(where() + ": entry " + op.name + " operand sharding is invalid: " + c.error().message);
                                return;
                            }
                            operandBuffer.push_back(*c);
                        }
                        if (operandBuffer.size() != rule.operandDims.size()) {
                            fail(where() + ": entry " + op.name + " has " + std::to_string(operandBuffer.size()) +
                                 " stored operand shardings for " + std::to_string(rule.operandDims.size()) + " operands");
                            return;
                        }
                        in.assign(operandBuffer.size(), nullptr);
                        for (size_t i = 0; i < operandBuffer.size(); ++i) in[i] = &operandBuffer[i];
                        FactorAssignment fa;
                        if (isSourcePinned(op, partitioningOf(m_manual, op.id))) {
                            // The source fixes it: placed on the mesh again from the op itself, and
                            // the stored operand shardings must be what it reads.
                            auto pin = sourcePinnedFactors(op, rule, a.mesh);
                            if (!pin) {
                                fail(where() + ": entry " + op.name + ": " + pin.error().message);
                                return;
                            }
                            fa = *pin;
                            for (size_t i = 0; i < operandBuffer.size(); ++i)
                                if (!(normalized(projectOperand(rule, fa, i)) == normalized(operandBuffer[i]))) {
                                    fail(where() + ": entry " + op.name + " stores operand " + std::to_string(i) + " as " + text(operandBuffer[i]) +
                                         ", the source's sharding reads it as " + text(projectOperand(rule, fa, i)));
                                    return;
                                }
                        } else if (!assignFromOperands(rule, in, m_sizes, fa, &why)) {
                            fail(where() + ": entry " + op.name + " strategy is invalid: " + why);
                            return;
                        }
                        finish(k, fa);
                        progress = true;
                        continue;
                    }
                    if (forwardType[k]) {
                        if (!forwardReady(k, relaxed)) continue;
                        const int64_t f = forwardOf[k];
                        CompactSharding shared;
                        in.assign(op.operands.size(), nullptr);
                        for (size_t i = 0; i < op.operands.size(); ++i) {
                            if (pairs[k] && static_cast<int32_t>(i) == pairs[k]->gradOperand) {
                                in[i] = &derived[static_cast<size_t>(f)];
                                continue;
                            }
                            const int64_t p = operandIndex[k][i];
                            if (p < 0) {
                                // A paired backward dot reads its shared operand as its forward dot does.
                                if (static_cast<int64_t>(i) == sharedSlot[k] && f >= 0) {
                                    shared = projectOperand(rules[static_cast<size_t>(f)], factors[static_cast<size_t>(f)], i);
                                    in[i] = &shared;
                                }
                                continue;  // external: adapts
                            }
                            if (hasDerived[static_cast<size_t>(p)]) in[i] = &derived[static_cast<size_t>(p)];
                        }
                        FactorAssignment fa;
                        bool ok = assignFromOperands(rule, in, m_sizes, fa, &why);
                        if (!ok) {
                            // Broadcast operands no other member has read yet adapt to this one.
                            std::vector<size_t> adapting;
                            for (size_t i = 0; i < op.operands.size(); ++i) {
                                const int64_t p = operandIndex[k][i];
                                if (p < 0 || !hasDerived[static_cast<size_t>(p)] || g.op(b.members[static_cast<size_t>(p)]).kind != OpKind::Broadcast ||
                                    m_static[static_cast<size_t>(b.members[static_cast<size_t>(p)])])
                                    continue;
                                const auto& readers = consumers[static_cast<size_t>(p)];
                                if (std::any_of(readers.begin(), readers.end(), [&](const auto& r) { return r.first != k && hasDerived[r.first]; })) continue;
                                in[i] = nullptr;
                                adapting.push_back(i);
                            }
                            std::string retryWhy;
                            ok = !adapting.empty() && assignFromOperands(rule, in, m_sizes, fa, &retryWhy);
                            for (size_t i : ok ? adapting : std::vector<size_t>{}) {
                                const auto p = static_cast<size_t>(operandIndex[k][i]);
                                const CompactSharding need = normalized(projectOperand(rule, fa, i));
                                FactorAssignment bfa;
                                if (!assignFromResult(rules[p], need, m_sizes, bfa, &retryWhy)) {
                                    ok = false;
                                    break;
                                }
                                const Op& bop = g.op(b.members[p]);
                                for (size_t j = 0; j < bop.operands.size() && ok; ++j) {
                                    const int64_t q = operandIndex[p][j];
                                    if (q >= 0 && !(normalized(projectOperand(rules[p], bfa, j)) == derived[static_cast<size_t>(q)])) {
                                        retryWhy = "broadcast " + bop.name + " would need its operand resharded";
                                        ok = false;
                                    }
                                }
                                if (!ok) break;
                                factors[p] = bfa;
                                derived[p] = need;
                            }
                        }
                        if (!ok) {
                            fail(where() + ": " + op.name + " cannot be derived from its operands in the block: " + why);
                            return;
                        }
                        finish(k, fa);
                        progress = true;
                        continue;
                    }
                    // Backward from the first consuming member that is derived.
                    for (const auto& [u, i] : consumers[k]) {
                        if (!hasFactors[u]) continue;
                        const CompactSharding need = projectOperand(rules[u], factors[u], i);
                        if (isSourceKind(op.kind)) {
                            factors[k] = FactorAssignment{};
                        } else if (!assignFromResult(rule, need, m_sizes, factors[k], &why)) {
                            fail(where() + ": " + op.name + " cannot produce what " + g.op(b.members[u]).name + " needs: " + why);
                            return;
                        }
                        hasFactors[k] = 1;
                        derived[k] = normalized(need);
                        hasDerived[k] = 1;
                        progress = true;
                        break;
                    }
                }
                std::erase_if(pending, [&](size_t k) { return hasDerived[k] != 0; });
                if (!progress && !relaxed) {
                    relaxed = true;
                    progress = true;
                } else if (progress) {
                    relaxed = false;
                }
            }
            for (size_t k = 0; k < n; ++k) {
                const Op& op = g.op(b.members[k]);
                if (!hasDerived[k]) {
                    fail(where() + ": member " + op.name + " cannot be derived from the entry");
                    return;
                }
                const uint32_t storedIndex = st.memberShardings.at(k);
                if (storedIndex >= m_stored.size()) {
                    fail(where() + ": member " + op.name + " refers to stored sharding " + std::to_string(storedIndex) +
                         " of " + std::to_string(m_stored.size()));
                    return;
                }
                if (!(m_stored[storedIndex] == derived[k])) {
                    fail(where() + ": member " + op.name + " stored " + a.shardings[storedIndex].toString() +
                         ", re-derived " + text(derived[k]));
                    return;
                }
                // Local values of a manual region are each device's work: never split again.
                if (m_manual[static_cast<size_t>(op.id)] && !isSourcePinned(op, Partitioning::Manual) &&
                    !isReplicated(projectResult(rules[k], factors[k]))) {
                    fail(where() + ": member " + op.name + " of a manual region is split: " + text(projectResult(rules[k], factors[k])));
                    return;
                }
            }
            // Every intra-block edge: producer's sharding → what the consumer expects.
            for (size_t k = 0; k < n; ++k) {
                const Op& op = g.op(b.members[k]);
                for (size_t i = 0; i < op.operands.size(); ++i) {
                    const int64_t p = operandIndex[k][i];
                    if (p < 0) continue;
                    ++report.edgesChecked;
                    const CompactSharding expected = normalized(projectOperand(rules[k], factors[k], i));
                    const CompactSharding& have = derived[static_cast<size_t>(p)];
                    if (have == expected) continue;
                    const TensorSharding haveText = fromCompact(have, a.mesh), expectedText = fromCompact(expected, a.mesh);
                    auto plan = planReshard(haveText, expectedText, a.mesh, g.op(op.operands[i]).type);
                    const int64_t steps = plan ? static_cast<int64_t>(plan->steps.size()) : 1;
                    report.reshardSteps += steps;
                    if (steps > 0)
                        fail(where() + ": edge " + g.op(op.operands[i]).name + " -> " + op.name + " needs resharding " +
                             haveText.toString() + " -> " + expectedText.toString());
                }
            }
            std::sort(collectives.collectives.begin(), collectives.collectives.end(),
                      [](const OwnCollective& x, const OwnCollective& y) { return x.op < y.op; });
            if (collectives.collectives != st.ownCollectives)
                fail(where() + ": own collectives differ from the stored ones (" + std::to_string(st.ownCollectives.size()) +
                     " stored, " + std::to_string(collectives.collectives.size()) + " re-derived)");
            report.ownCollectives.push_back(std::move(collectives));
            if (!report.pass) return;
        }
    }
};

}  // namespace

BlockCheckReport checkBlocks(const Graph& graph, const BlockAnalysis& analysis, int threads) {
    Checker c{graph, analysis, {}, {}, {}, {}};
    c.report.checked = true;
    c.prepare();
    if (!c.report.pass) return c.report;
    // Membership first: the first block with an op out of range or already in an earlier block.
    std::vector<int32_t> seen(static_cast<size_t>(graph.size()), 0);
    size_t firstBad = analysis.blocks.size();
    std::string badMessage;
    for (size_t bi = 0; bi < analysis.blocks.size() && firstBad == analysis.blocks.size(); ++bi) {
        const auto& b = analysis.blocks[bi];
        for (OpId m : b.members)
            if (m < 0 || m >= graph.size() || seen[static_cast<size_t>(m)]++) {
                firstBad = bi;
                badMessage = "block " + std::to_string(b.id) + ": op " + std::to_string(m) + " is out of range or in two blocks";
                break;
            }
    }
    // The blocks before it are checked independently, in contiguous ranges (one checker each);
    // merged in block order, the report is the sequential one: counts and collectives up to the
    // first violation, and that violation.
    const auto nb = static_cast<int64_t>(firstBad);
    const int ranges = parallelRanges(nb, resolveThreads(threads), 16);
    std::vector<Checker> parts(static_cast<size_t>(std::max(ranges, 1)), c);
    parallelFor(nb, ranges, 1, [&](int64_t b0, int64_t b1, int w) {
        Checker& mine = parts[static_cast<size_t>(w)];
        for (int64_t bi = b0; bi < b1 && mine.report.pass; ++bi) mine.checkBlock(analysis.blocks[static_cast<size_t>(bi)]);
    });
    for (Checker& part : parts) {
        c.report.edgesChecked += part.report.edgesChecked;
        c.report.reshardSteps += part.report.reshardSteps;
        for (auto& oc : part.report.ownCollectives) c.report.ownCollectives.push_back(std::move(oc));
        if (!part.report.pass) {
            c.report.pass = false;
            c.report.firstViolation = std::move(part.report.firstViolation);
            return c.report;
        }
    }
    if (firstBad < analysis.blocks.size()) {
        c.fail(badMessage);
        return c.report;
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
