#include "blocks/blocks.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "rules/op_rules.h"
#include "util/parallel.h"

namespace cfp {

std::string_view unassignedReasonName(UnassignedReason r) {
    switch (r) {
        case UnassignedReason::MultiBlockInput: return "multi_block_input";
        case UnassignedReason::NeedsCommunication: return "needs_communication";
        case UnassignedReason::NoRule: return "no_rule";
        case UnassignedReason::Unreached: return "unreached";
        case UnassignedReason::ReplicatedSource: return "replicated_source";
    }
    return "?";
}

int64_t ParallelBlock::memberIndex(OpId op) const {
    auto it = std::lower_bound(members.begin(), members.end(), op);
    return it != members.end() && *it == op ? it - members.begin() : -1;
}

double BlockAnalysis::coverage(const Graph& graph) const {
    if (graph.size() == 0) return 1.0;
    int64_t covered = static_cast<int64_t>(resolvedLater.size());
    for (const auto& b : blocks) covered += static_cast<int64_t>(b.members.size());
    return static_cast<double>(covered) / static_cast<double>(graph.size());
}

// ---------------------------------------------------------------- pairing

namespace {

bool isLayoutOp(OpKind k) { return k == OpKind::Transpose || k == OpKind::Reshape || k == OpKind::Convert; }

OpId stripLayout(const Graph& g, OpId id) {
    while (isLayoutOp(g.op(id).kind)) id = g.op(id).operands[0];
    return id;
}

std::vector<int64_t> freeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < rank; ++d)
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end())
            out.push_back(d);
    return out;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

std::vector<DotPair> pairBackwardDotsByProvenance(const Graph& graph) {
    std::vector<DotPair> out;
    for (const Op& op : graph.ops()) {
        if (op.kind != OpKind::Dot || op.derivedFrom == kNoOp || op.derivedFrom >= op.id) continue;
        if (graph.op(op.derivedFrom).kind != OpKind::Dot) continue;
        if (op.derivedOperand != 0 && op.derivedOperand != 1) continue;
        out.push_back(DotPair{op.derivedFrom, op.id, op.derivedOperand, op.derivedOperand});
    }
    return out;
}

std::vector<DotPair> pairBackwardDotsStructurally(const Graph& graph) {
    struct Candidate {
        OpId forward;
        int32_t side;
        OpId grad;
    };
    // Dots by the layout-stripped root of each operand position.
    std::unordered_map<OpId, std::vector<OpId>> byOperand[2];
    std::vector<std::vector<Candidate>> candidates(static_cast<size_t>(graph.size()));
    for (const Op& b : graph.ops()) {
        if (b.kind != OpKind::Dot) continue;
        for (int32_t side = 0; side < 2; ++side) {
            // side 0 (dX = dot(dY, R)): shares F's operand 1 at position 1; side 1 (dW = dot(L, dY)):
            // shares F's operand 0 at position 0.
            const int pos = side == 0 ? 1 : 0;
            const OpId shared = b.operands[static_cast<size_t>(pos)];
            const OpId grad = b.operands[static_cast<size_t>(1 - pos)];
            auto it = byOperand[pos].find(stripLayout(graph, shared));
            if (it == byOperand[pos].end()) continue;
            for (OpId f : it->second) {
                const Op& fwd = graph.op(f);
                if (graph.op(grad).type.dims != fwd.type.dims) continue;
                if (fwd.operands[static_cast<size_t>(pos)] == shared) {
                    // Direct share: B contracts the shared operand's free dims.
                    const DotDimensionNumbers& fd = fwd.attrs.dot;
                    const int64_t rank = graph.op(shared).type.rank();
                    const auto want = pos == 1 ? freeDims(rank, fd.rhsBatch, fd.rhsContracting)
                                               : freeDims(rank, fd.lhsBatch, fd.lhsContracting);
                    const auto have = pos == 1 ? b.attrs.dot.rhsContracting : b.attrs.dot.lhsContracting;
                    if (sorted(have) != want) continue;
                    if (b.attrs.dot.lhsBatch.size() != fd.lhsBatch.size()) continue;
                }
                candidates[static_cast<size_t>(b.id)].push_back(Candidate{f, side, grad});
            }
        }
        for (int pos = 0; pos < 2; ++pos)
            byOperand[pos][stripLayout(graph, b.operands[static_cast<size_t>(pos)])].push_back(b.id);
    }
    // Confirmation: another dot is a candidate for the other side of the same forward dot with the
    // same dY (after layout stripping).
    std::map<std::tuple<OpId, int32_t, OpId>, int> sideUses;
    for (const auto& list : candidates)
        for (const auto& c : list) ++sideUses[{c.forward, c.side, stripLayout(graph, c.grad)}];
    std::vector<DotPair> out;
    std::set<std::pair<OpId, int32_t>> used;
    for (OpId b = 0; b < graph.size(); ++b) {
        const auto& list = candidates[static_cast<size_t>(b)];
        if (list.empty()) continue;
        const Candidate* best = nullptr;
        bool bestConfirmed = false;
        for (const auto& c : list) {
            if (used.count({c.forward, c.side})) continue;
            const bool confirmed = sideUses.count({c.forward, 1 - c.side, stripLayout(graph, c.grad)}) > 0;
            if (!best || (confirmed && !bestConfirmed) || (confirmed == bestConfirmed && c.forward > best->forward)) {
                best = &c;
                bestConfirmed = confirmed;
            }
        }
        if (!best) continue;
        // An unconfirmed pair is accepted only when it is the op's only candidate.
        if (!bestConfirmed && list.size() > 1) continue;
        used.insert({best->forward, best->side});
        out.push_back(DotPair{best->forward, b, best->side, best->side == 0 ? 0 : 1});
    }
    // A dot that is itself the forward of an accepted pair cannot be a backward dot of an earlier one
    // unless it is genuinely a gradient; drop pairs whose backward dot is also a paired forward dot
    // appearing *before* being claimed — rare, and resolving it keeps results deterministic.
    std::set<OpId> forwards;
    for (const auto& p : out) forwards.insert(p.forward);
    std::erase_if(out, [&](const DotPair& p) { return forwards.count(p.backward) > 0; });
    return out;
}

std::vector<DotPair> pairBackwardDots(const Graph& graph) {
    const bool hasProvenance = std::any_of(graph.ops().begin(), graph.ops().end(),
                                           [](const Op& op) { return op.derivedFrom != kNoOp; });
    return hasProvenance ? pairBackwardDotsByProvenance(graph) : pairBackwardDotsStructurally(graph);
}

// ---------------------------------------------------------------- growth

namespace {

struct Failure {
    UnassignedReason reason = UnassignedReason::Unreached;
    std::string detail;
};

// A candidate's (or pulled op's) shardings under every strategy, before it is committed.
struct Pending {
    OpId op = kNoOp;
    std::vector<CompactSharding> shard;     // per strategy, own collective applied
    std::vector<FactorAssignment> assign;   // per strategy
    std::vector<uint8_t> partialMask;       // per strategy: axes of the own all-reduce (bitmask)
};

class BlockFinder {
public:
    BlockFinder(const Graph& g, const Mesh& mesh, const MeshSizes& sizes, int threads, std::string sequenceAxis)
        : m_g(g), m_mesh(mesh), m_sizes(sizes), m_threads(threads), m_sequenceAxis(std::move(sequenceAxis)) {}

    Result<BlockAnalysis> run();

private:
    struct Growing {
        int32_t id = 0;
        OpId entry = kNoOp;
        int S = 0;
        std::vector<std::string> labels;
        std::vector<OpId> members;                 // insertion order
        std::vector<CompactSharding> shard;        // members × S
        std::vector<FactorAssignment> assign;      // members × S
        std::vector<uint8_t> partialMask;          // members × S
        std::vector<DotPair> pairs;
    };

    bool isSource(OpId id) const {
        const OpKind k = m_g.op(id).kind;
        return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota;
    }
    // Sources and ops computed from them only adapt to what their reader needs; so does a
    // broadcast, which can make any slice of its new dims from what it reads (a row maximum
    // broadcast over a vocabulary its reader holds split: vocabulary-parallel cross-entropy).
    bool pullable(OpId id) const { return fixedPullable(id) || adaptive(id); }
    bool fixedPullable(OpId id) const { return m_static[static_cast<size_t>(id)] || m_data[static_cast<size_t>(id)] || isSource(id); }
    // A broadcast of a computed value: it joins a block through the op that reads it, taking its
    // operand's sharding where that reader can follow it, else what the reader needs.
    bool adaptive(OpId id) const { return m_g.op(id).kind == OpKind::Broadcast && !fixedPullable(id); }
    // Whether `o` adapts to what a reader in block b needs: a source or static value, or an adaptive
    // broadcast of no other block's result (one of another block's is that block's edge).
    bool pullableFor(const Growing& b, OpId o) const {
        if (fixedPullable(o)) return true;
        if (!adaptive(o)) return false;
        for (OpId x : m_g.op(o).operands)
            if (m_owner[static_cast<size_t>(x)] != b.id && !fixedPullable(x)) return false;
        return true;
    }
    // The sharding an adaptive broadcast `o` has from its operands under strategy s (false when an
    // operand is not a member or it cannot follow them).
    bool forwardShard(const Growing& b, OpId o, int s, CompactSharding& out) const {
        const Op& op = m_g.op(o);
        std::vector<const CompactSharding*> in(op.operands.size(), nullptr);
        for (size_t i = 0; i < op.operands.size(); ++i) {
            if (m_owner[static_cast<size_t>(op.operands[i])] != b.id) return false;
            in[i] = &memberShard(b, op.operands[i], s);
        }
        FactorAssignment fa;
        if (!assignFromOperands(rule(o), in, m_sizes, fa, nullptr)) return false;
        uint8_t mask = 0;
        finishResult(rule(o), fa, out, mask);
        return mask == 0;
    }
    // Operand i of a paired backward dot is the very operand its forward dot shares (dX reads the
    // forward's operand 1, dW its operand 0); outside the block it is read as the forward reads it.
    bool sharesForwardOperand(const DotPair& pair, size_t i) const {
        const size_t fpos = pair.side == 0 ? 1 : 0;
        return i == fpos && m_owner[static_cast<size_t>(pair.forward)] != -1 &&
               m_g.op(pair.forward).operands[fpos] == m_g.op(pair.backward).operands[i];
    }
    const OpShardingRule& rule(OpId id) const { return *(*m_rules)[static_cast<size_t>(id)]; }
    bool hasRule(OpId id) const { return m_hasRule[static_cast<size_t>(id)] != 0; }

    void enumerateStrategies(OpId dot, std::vector<FactorAssignment>& out, std::vector<std::string>& labels) const;
    void seed(Growing& b);
    // `why` (may be null: the op already has its failure noted) gets the reason it cannot join.
    bool evaluate(Growing& b, OpId u, std::vector<Pending>& pending, Failure* why);
    bool pull(Growing& b, OpId o, int s, const CompactSharding& required, std::vector<Pending>& pending);
    void commit(Growing& b, std::vector<Pending>& pending,
                std::priority_queue<OpId, std::vector<OpId>, std::greater<>>& heap);
    void joinBackwardDots(Growing& b, OpId forward,
                          std::priority_queue<OpId, std::vector<OpId>, std::greater<>>& heap);
    const CompactSharding& memberShard(const Growing& b, OpId op, int s) const {
        return b.shard[static_cast<size_t>(m_local[static_cast<size_t>(op)]) * static_cast<size_t>(b.S) + static_cast<size_t>(s)];
    }
    const FactorAssignment& memberAssign(const Growing& b, OpId op, int s) const {
        return b.assign[static_cast<size_t>(m_local[static_cast<size_t>(op)]) * static_cast<size_t>(b.S) + static_cast<size_t>(s)];
    }
    void finishResult(const OpShardingRule& r, const FactorAssignment& a, CompactSharding& shard, uint8_t& mask) const {
        shard = projectResult(r, a);
        mask = 0;
        for (int ax = 0; ax < m_sizes.rank; ++ax)
            if (shard.dimOf[static_cast<size_t>(ax)] == CompactSharding::kAxisPartial) mask |= static_cast<uint8_t>(1u << ax);
        if (mask) shard = shard.withoutPartial();
    }
    void noteFailure(OpId u, Failure f) {
        auto& slot = m_failure[static_cast<size_t>(u)];
        if (!slot) slot = std::move(f);
    }

    const Graph& m_g;
    const Mesh& m_mesh;
    MeshSizes m_sizes;
    int m_threads = 0;
    std::string m_sequenceAxis;  // findParallelBlocks' sequenceAxis
    std::shared_ptr<std::vector<std::optional<OpShardingRule>>> m_rules;
    std::vector<uint8_t> m_hasRule;
    std::vector<char> m_manual;                       // in a manual region (op_rules.h)
    std::vector<std::optional<FactorAssignment>> m_pins;  // source-pinned ops: their one assignment
    std::vector<uint8_t> m_static;
    std::vector<uint8_t> m_data;  // isStepData: made locally from the step's inputs and static values
    std::vector<int32_t> m_userStart, m_users;  // CSR
    std::vector<int32_t> m_owner, m_local;
    std::vector<int32_t> m_pairOf;               // backward dot → index into m_pairs, or -1
    std::vector<std::vector<int32_t>> m_pairsOfForward;
    std::vector<DotPair> m_pairs;
    std::vector<std::optional<Failure>> m_failure;
    std::vector<Growing> m_blocks;
};

void BlockFinder::enumerateStrategies(OpId dot, std::vector<FactorAssignment>& out, std::vector<std::string>& labels) const {
    const OpShardingRule& r = rule(dot);
    if (const auto& pin = m_pins[static_cast<size_t>(dot)]) {
        // The source's one strategy: per axis the full side's dim it splits, or the sum it reduces.
        const Op& op = m_g.op(dot);
        const std::vector<int32_t>& full = isShardToFull(op) ? r.resultDims : r.operandDims[0];
        std::string label;
        for (int a = 0; a < m_sizes.rank; ++a) {
            const int16_t f = pin->factorOf[static_cast<size_t>(a)];
            std::string role = "-";
            if (f >= 0 && r.factors[static_cast<size_t>(f)].kind == FactorKind::Reduction) role = "sum";
            for (size_t d = 0; f >= 0 && d < full.size(); ++d)
                if (full[d] == f) role = "dim" + std::to_string(d);
            label += (a ? "," : "") + m_mesh.axes()[static_cast<size_t>(a)].name + ":" + role;
        }
        out.push_back(*pin);
        labels.push_back(label);
        return;
    }
    if (m_manual[static_cast<size_t>(dot)]) {
        // Local shapes are each device's work already: the one strategy splits nothing.
        std::string label;
        for (int a = 0; a < m_sizes.rank; ++a) label += (a ? "," : "") + m_mesh.axes()[static_cast<size_t>(a)].name + ":-";
        out.emplace_back();
        labels.push_back(label);
        return;
    }
    struct Option {
        int32_t factor;  // kNoFactor = axis unused
        std::string name;
    };
    std::vector<std::vector<Option>> perAxis(static_cast<size_t>(m_sizes.rank));
    int nBatch = 0, nContract = 0;
    for (const Factor& f : r.factors) {
        nBatch += f.role == FactorRole::DotBatch;
        nContract += f.role == FactorRole::DotContracting;
    }
    for (int a = 0; a < m_sizes.rank; ++a) {
        const int64_t n = m_sizes.size[static_cast<size_t>(a)];
        auto& opts = perAxis[static_cast<size_t>(a)];
        const bool sequence = !m_sequenceAxis.empty() && m_mesh.axes()[static_cast<size_t>(a)].name == m_sequenceAxis;
        int lhsFree = 0;
        bool rhsDone = false;
        int bi = 0, ci = 0;
        for (int32_t f = 0; f < r.factorCount(); ++f) {
            const Factor& fac = r.factors[static_cast<size_t>(f)];
            const bool divides = fac.size % n == 0;
            switch (fac.role) {
                case FactorRole::DotBatch:
                    if (divides) opts.push_back({f, nBatch > 1 ? "batch" + std::to_string(bi) : "batch"});
                    ++bi;
                    break;
                case FactorRole::DotLhsFree:
                    if (divides && (lhsFree == 0 || (lhsFree == 1 && sequence))) opts.push_back({f, lhsFree == 0 ? "rows" : "seq"});
                    lhsFree += divides ? 1 : 0;
                    break;
                case FactorRole::DotRhsFree:
                    if (divides && !rhsDone) {
                        opts.push_back({f, "cols"});
                        rhsDone = true;
                    }
                    break;
                case FactorRole::DotContracting:
                    if (divides) opts.push_back({f, nContract > 1 ? "contract" + std::to_string(ci) : "contract"});
                    ++ci;
                    break;
                case FactorRole::Dim: break;
            }
        }
        if (opts.empty() || n == 1) opts = {{kNoFactor, "-"}};
    }
    // Cartesian product, first axis slowest.
    std::vector<size_t> idx(static_cast<size_t>(m_sizes.rank), 0);
    while (true) {
        FactorAssignment fa;
        std::string label;
        std::vector<int64_t> product(r.factors.size(), 1);
        for (int a = 0; a < m_sizes.rank; ++a) {
            const Option& o = perAxis[static_cast<size_t>(a)][idx[static_cast<size_t>(a)]];
            if (!label.empty()) label += ",";
            label += m_mesh.axes()[static_cast<size_t>(a)].name + ":" + o.name;
            if (o.factor == kNoFactor) continue;
            int8_t pos = 0;
            for (int b = 0; b < a; ++b)
                if (fa.factorOf[static_cast<size_t>(b)] == o.factor) ++pos;
            fa.factorOf[static_cast<size_t>(a)] = static_cast<int16_t>(o.factor);
            fa.position[static_cast<size_t>(a)] = pos;
            product[static_cast<size_t>(o.factor)] *= m_sizes.size[static_cast<size_t>(a)];
        }
        bool even = true;
        for (size_t f = 0; f < r.factors.size(); ++f)
            if (r.factors[f].size % product[f] != 0) even = false;
        if (even) {
            out.push_back(fa);
            labels.push_back(label);
        }
        int a = m_sizes.rank - 1;
        while (a >= 0) {
            if (++idx[static_cast<size_t>(a)] < perAxis[static_cast<size_t>(a)].size()) break;
            idx[static_cast<size_t>(a)] = 0;
            --a;
        }
        if (a < 0) break;
    }
}

bool BlockFinder::pull(Growing& b, OpId o, int s, const CompactSharding& required, std::vector<Pending>& pending) {
    const int32_t owner = m_owner[static_cast<size_t>(o)];
    if (owner == b.id) return memberShard(b, o, s) == required;
    if (owner != -1 || !pullableFor(b, o) || !hasRule(o)) return true;  // external: an inter-block edge
    Pending* p = nullptr;
    for (auto& q : pending)
        if (q.op == o) p = &q;
    if (p && s < static_cast<int>(p->shard.size())) return p->shard[static_cast<size_t>(s)] == required;
    if (!p) {
        pending.push_back(Pending{o, {}, {}, {}});
        p = &pending.back();
    }
    if (static_cast<int>(p->shard.size()) != s) return false;  // pulled under an earlier strategy only
    FactorAssignment fa;
    if (!isSource(o) && !assignFromResult(rule(o), required, m_sizes, fa, nullptr)) return false;
    p->shard.push_back(required);
    p->assign.push_back(fa);
    p->partialMask.push_back(0);
    if (isSource(o)) return true;
    const Op& op = m_g.op(o);
    const OpShardingRule& r = rule(o);
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const CompactSharding need = projectOperand(r, fa, i);
        if (!pull(b, op.operands[i], s, need, pending)) return false;
    }
    return true;
}

bool BlockFinder::evaluate(Growing& b, OpId u, std::vector<Pending>& pending, Failure* why) {
    const Op& op = m_g.op(u);
    const OpShardingRule& r = rule(u);
    const int32_t pairIndex = m_pairOf[static_cast<size_t>(u)];
    const DotPair* pair = pairIndex >= 0 ? &m_pairs[static_cast<size_t>(pairIndex)] : nullptr;
    // Operand roles: member (known), pullable (adapts), or foreign (the op cannot join).
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const OpId o = op.operands[i];
        if (pair && static_cast<int32_t>(i) == pair->gradOperand) continue;
        const int32_t owner = m_owner[static_cast<size_t>(o)];
        if (owner == b.id || pullableFor(b, o)) continue;
        if (pair && sharesForwardOperand(*pair, i)) continue;  // read as the forward dot reads it
        if (why)
            *why = {owner >= 0 ? UnassignedReason::MultiBlockInput : UnassignedReason::Unreached,
                    "operand " + m_g.op(o).name + (owner >= 0 ? " belongs to block " + std::to_string(owner) : " is not in the block")};
        return false;
    }
    Pending self{u, {}, {}, {}};
    self.shard.reserve(static_cast<size_t>(b.S));
    self.assign.reserve(static_cast<size_t>(b.S));
    self.partialMask.reserve(static_cast<size_t>(b.S));
    CompactSharding sharedScratch;
    std::vector<const CompactSharding*> ptrs(op.operands.size(), nullptr);
    std::vector<CompactSharding> broadcastScratch(op.operands.size());
    std::string reason;
    std::vector<size_t> lengths;
    const auto& users = m_users;
    for (int s = 0; s < b.S; ++s) {
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId o = op.operands[i];
            ptrs[i] = nullptr;
            if (pair && static_cast<int32_t>(i) == pair->gradOperand)
                ptrs[i] = &memberShard(b, pair->forward, s);  // dY carries the forward result's sharding
            else if (m_owner[static_cast<size_t>(o)] == b.id)
                ptrs[i] = &memberShard(b, o, s);
            else if (pair && sharesForwardOperand(*pair, i)) {
                const size_t fpos = pair->side == 0 ? 1 : 0;
                sharedScratch = projectOperand(rule(pair->forward), memberAssign(b, pair->forward, s), fpos);
                ptrs[i] = &sharedScratch;
            } else if (m_owner[static_cast<size_t>(o)] == -1 && adaptive(o) && forwardShard(b, o, s, broadcastScratch[i])) {
                ptrs[i] = &broadcastScratch[i];  // first as its operands have it
            }
        }
        FactorAssignment fa;
        bool assigned = assignFromOperands(r, ptrs, m_sizes, fa, nullptr);
        if (!assigned) {
            // Else the broadcasts take what u needs of them (any slice of a new dim is local).
            for (size_t i = 0; i < ptrs.size(); ++i)
                if (ptrs[i] == &broadcastScratch[i]) ptrs[i] = nullptr;
        }
        if (!assigned && !assignFromOperands(r, ptrs, m_sizes, fa, why ? &reason : nullptr)) {
            if (why) *why = {UnassignedReason::NeedsCommunication, "strategy " + b.labels[static_cast<size_t>(s)] + ": " + reason};
            return false;
        }
        CompactSharding res;
        uint8_t mask = 0;
        finishResult(r, fa, res, mask);
        // Members that already consume u must get what they expect.
        for (int32_t k = m_userStart[static_cast<size_t>(u)]; k < m_userStart[static_cast<size_t>(u) + 1]; ++k) {
            const OpId user = users[static_cast<size_t>(k)];
            if (m_owner[static_cast<size_t>(user)] != b.id) continue;
            const Op& uo = m_g.op(user);
            for (size_t i = 0; i < uo.operands.size(); ++i) {
                if (uo.operands[i] != u) continue;
                const CompactSharding expected = projectOperand(rule(user), memberAssign(b, user, s), i);
                if (!(expected == res)) {
                    if (why)
                        *why = {UnassignedReason::NeedsCommunication,
                                "strategy " + b.labels[static_cast<size_t>(s)] + ": member " + uo.name + " expects a different sharding"};
                    return false;
                }
            }
        }
        self.shard.push_back(res);
        self.assign.push_back(fa);
        self.partialMask.push_back(mask);
        // Pull unclaimed static operands with what u needs; a failed pull leaves them outside.
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId o = op.operands[i];
            if (m_owner[static_cast<size_t>(o)] != -1 || !pullableFor(b, o)) continue;
            if (pair && static_cast<int32_t>(i) == pair->gradOperand) continue;
            // A pull only appends (new pulled ops, or this strategy's entry of one pulled under
            // the earlier strategies): a failed one is undone by cutting back to the sizes before.
            lengths.clear();
            for (const Pending& q : pending) lengths.push_back(q.shard.size());
            if (pull(b, o, s, projectOperand(r, fa, i), pending)) continue;
            pending.resize(lengths.size());
            for (size_t q = 0; q < lengths.size(); ++q) {
                pending[q].shard.resize(lengths[q]);
                pending[q].assign.resize(lengths[q]);
                pending[q].partialMask.resize(lengths[q]);
            }
        }
    }
    // Drop pulled ops that were not pulled under every strategy (a pull that failed part-way), then
    // pulled ops left without a consumer in the block.
    std::erase_if(pending, [&](const Pending& p) { return static_cast<int>(p.shard.size()) != b.S; });
    pending.push_back(std::move(self));
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t k = 0; k + 1 < pending.size(); ++k) {
            bool consumed = false;
            for (int32_t j = m_userStart[static_cast<size_t>(pending[k].op)]; j < m_userStart[static_cast<size_t>(pending[k].op) + 1] && !consumed; ++j) {
                const OpId user = m_users[static_cast<size_t>(j)];
                consumed = m_owner[static_cast<size_t>(user)] == b.id ||
                           std::any_of(pending.begin(), pending.end(), [&](const Pending& q) { return q.op == user; });
            }
            if (!consumed) {
                pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
                changed = true;
                break;
            }
        }
    }
    return true;
}

void BlockFinder::commit(Growing& b, std::vector<Pending>& pending,
                         std::priority_queue<OpId, std::vector<OpId>, std::greater<>>& heap) {
    for (auto& p : pending) {
        m_owner[static_cast<size_t>(p.op)] = b.id;
        m_local[static_cast<size_t>(p.op)] = static_cast<int32_t>(b.members.size());
        b.members.push_back(p.op);
        b.shard.insert(b.shard.end(), p.shard.begin(), p.shard.end());
        b.assign.insert(b.assign.end(), p.assign.begin(), p.assign.end());
        b.partialMask.insert(b.partialMask.end(), p.partialMask.begin(), p.partialMask.end());
    }
    // A block grows along the results it computes, not through a pulled source to that source's
    // other readers: a weight shared by two places (tied embeddings: the LM head's matmul and the
    // token lookup) does not make them one block.
    // A block grows along the results it computes, and through a broadcast of them to its readers.
    auto pushReaders = [&](OpId of, auto& self) -> void {
        for (int32_t k = m_userStart[static_cast<size_t>(of)]; k < m_userStart[static_cast<size_t>(of) + 1]; ++k) {
            const OpId user = m_users[static_cast<size_t>(k)];
            if (m_owner[static_cast<size_t>(user)] != -1) continue;
            if (!pullable(user)) heap.push(user);
            else if (adaptive(user)) self(user, self);
        }
    };
    for (auto& p : pending) {
        if (fixedPullable(p.op)) continue;
        pushReaders(p.op, pushReaders);
    }
    pending.clear();
}

void BlockFinder::joinBackwardDots(Growing& b, OpId forward,
                                   std::priority_queue<OpId, std::vector<OpId>, std::greater<>>& heap) {
    for (int32_t pi : m_pairsOfForward[static_cast<size_t>(forward)]) {
        const DotPair& pair = m_pairs[static_cast<size_t>(pi)];
        if (m_owner[static_cast<size_t>(pair.backward)] != -1) continue;
        std::vector<Pending> pending;
        Failure why;
        if (evaluate(b, pair.backward, pending, m_failure[static_cast<size_t>(pair.backward)] ? nullptr : &why)) {
            commit(b, pending, heap);
            b.pairs.push_back(pair);
        } else {
            noteFailure(pair.backward, why);
        }
    }
}

void BlockFinder::seed(Growing& b) {
    std::vector<FactorAssignment> strategies;
    enumerateStrategies(b.entry, strategies, b.labels);
    b.S = static_cast<int>(strategies.size());
    std::priority_queue<OpId, std::vector<OpId>, std::greater<>> heap;
    const Op& entry = m_g.op(b.entry);
    const OpShardingRule& r = rule(b.entry);
    Pending self{b.entry, {}, {}, {}};
    for (int s = 0; s < b.S; ++s) {
        CompactSharding res;
        uint8_t mask = 0;
        finishResult(r, strategies[static_cast<size_t>(s)], res, mask);
        self.shard.push_back(res);
        self.assign.push_back(strategies[static_cast<size_t>(s)]);
        self.partialMask.push_back(mask);
    }
    std::vector<Pending> pending{self};
    commit(b, pending, heap);
    for (size_t i = 0; i < entry.operands.size(); ++i) {
        const OpId o = entry.operands[i];
        if (m_owner[static_cast<size_t>(o)] != -1 || !pullableFor(b, o)) continue;
        std::vector<Pending> trial;
        bool ok = true;
        for (int s = 0; s < b.S && ok; ++s) ok = pull(b, o, s, projectOperand(r, strategies[static_cast<size_t>(s)], i), trial);
        if (ok) commit(b, trial, heap);
    }
    joinBackwardDots(b, b.entry, heap);
    while (!heap.empty()) {
        const OpId u = heap.top();
        heap.pop();
        if (m_owner[static_cast<size_t>(u)] != -1 || !hasRule(u) || m_pins[static_cast<size_t>(u)]) continue;
        const Op& op = m_g.op(u);
        if (op.kind == OpKind::Dot) {
            if (m_pairOf[static_cast<size_t>(u)] >= 0) continue;  // joins with its forward dot only
            // Dots with a weight (static operand) are decisions of their own: they seed.
            bool weightFree = true, allMembers = true;
            for (OpId o : op.operands) {
                weightFree = weightFree && !fixedPullable(o);
                allMembers = allMembers && m_owner[static_cast<size_t>(o)] == b.id;
            }
            if (!weightFree || !allMembers) continue;
        }
        std::vector<Pending> pending;
        Failure why;
        if (evaluate(b, u, pending, m_failure[static_cast<size_t>(u)] ? nullptr : &why)) {
            commit(b, pending, heap);
            if (op.kind == OpKind::Dot) joinBackwardDots(b, u, heap);
        } else {
            noteFailure(u, why);
        }
    }
}

Result<BlockAnalysis> BlockFinder::run() {
    const size_t n = static_cast<size_t>(m_g.size());
    BlockAnalysis out;
    out.mesh = m_mesh;
    m_rules = std::make_shared<std::vector<std::optional<OpShardingRule>>>(n);
    m_hasRule.assign(n, 0);
    m_static.assign(n, 0);
    m_data.assign(n, 0);
    m_manual = manualRegionOps(m_g);
    m_pins.assign(n, std::nullopt);
    // Rules of all ops in parallel (each op's own); the messages of those without one, kept.
    std::vector<std::string> noRule(n);
    parallelFor(static_cast<int64_t>(n), resolveThreads(m_threads), 1024, [&](int64_t i0, int64_t i1, int) {
        for (auto i = static_cast<size_t>(i0); i < static_cast<size_t>(i1); ++i) {
            auto r = shardingRuleFor(m_g, m_g.op(static_cast<OpId>(i)), partitioningOf(m_manual, static_cast<OpId>(i)));
            if (r) {
                (*m_rules)[i] = std::move(*r);
                m_hasRule[i] = 1;
            } else {
                noRule[i] = r.error().message;
            }
        }
    });
    for (const Op& op : m_g.ops()) {
        if (!m_hasRule[static_cast<size_t>(op.id)])
            out.unsupported.push_back(UnsupportedOp{op.id, op.name, std::string(opKindName(op.kind)), std::move(noRule[static_cast<size_t>(op.id)])});
        // Manual-region boundaries and collectives: their sharding is the source's, placed on the mesh.
        if (m_hasRule[static_cast<size_t>(op.id)] && isSourcePinned(op, partitioningOf(m_manual, op.id))) {
            auto pin = sourcePinnedFactors(op, rule(op.id), m_mesh);
            if (!pin) return pin.error();
            m_pins[static_cast<size_t>(op.id)] = *pin;
        }
        bool isStatic;
        if (m_pins[static_cast<size_t>(op.id)])
            isStatic = false;  // a block of its own: never pulled into another
        else if (op.kind == OpKind::Parameter)
            isStatic = op.role == ParamRole::Trainable || op.role == ParamRole::OptimizerState;
        else if (op.kind == OpKind::Constant || op.kind == OpKind::Iota)
            isStatic = true;
        else {
            isStatic = !op.operands.empty() && m_hasRule[static_cast<size_t>(op.id)];
            for (OpId o : op.operands) isStatic = isStatic && m_static[static_cast<size_t>(o)];
        }
        m_static[static_cast<size_t>(op.id)] = isStatic;
        m_data[static_cast<size_t>(op.id)] = !isStatic && !m_pins[static_cast<size_t>(op.id)] && m_hasRule[static_cast<size_t>(op.id)] &&
                                             isStepData(m_g, op, [&](OpId o) { return m_static[static_cast<size_t>(o)] || m_data[static_cast<size_t>(o)]; });
    }
    // Users, CSR.
    m_userStart.assign(n + 1, 0);
    for (const Op& op : m_g.ops())
        for (OpId o : op.operands) ++m_userStart[static_cast<size_t>(o) + 1];
    for (size_t i = 0; i < n; ++i) m_userStart[i + 1] += m_userStart[i];
    m_users.assign(static_cast<size_t>(m_userStart[n]), 0);
    {
        // An op using a value twice appears twice; the worklist and the checks tolerate that.
        std::vector<int32_t> fill(m_userStart.begin(), m_userStart.end() - 1);
        for (const Op& op : m_g.ops())
            for (OpId o : op.operands) m_users[static_cast<size_t>(fill[static_cast<size_t>(o)]++)] = op.id;
    }
    m_pairs = pairBackwardDots(m_g);
    m_pairOf.assign(n, -1);
    m_pairsOfForward.assign(n, {});
    for (size_t i = 0; i < m_pairs.size(); ++i) {
        m_pairOf[static_cast<size_t>(m_pairs[i].backward)] = static_cast<int32_t>(i);
        m_pairsOfForward[static_cast<size_t>(m_pairs[i].forward)].push_back(static_cast<int32_t>(i));
    }
    m_owner.assign(n, -1);
    m_local.assign(n, -1);
    m_failure.assign(n, std::nullopt);

    for (const Op& op : m_g.ops()) {
        const bool pinned = m_pins[static_cast<size_t>(op.id)].has_value();
        if ((op.kind != OpKind::Dot && !pinned) || !m_hasRule[static_cast<size_t>(op.id)]) continue;
        if (m_pairOf[static_cast<size_t>(op.id)] >= 0 || m_owner[static_cast<size_t>(op.id)] != -1) continue;
        Growing b;
        b.id = static_cast<int32_t>(m_blocks.size());
        b.entry = op.id;
        m_blocks.push_back(std::move(b));
        seed(m_blocks.back());
    }

    // ---- output ----
    struct CompactHash {
        size_t operator()(const CompactSharding& c) const { return c.hash(); }
    };
    std::unordered_map<CompactSharding, uint32_t, CompactHash> interned;
    auto intern = [&](const CompactSharding& c) -> uint32_t {
        auto it = interned.find(c);
        if (it != interned.end()) return it->second;
        const auto id = static_cast<uint32_t>(out.shardings.size());
        out.shardings.push_back(fromCompact(c, m_mesh));
        interned.emplace(c, id);
        return id;
    };
    out.blockOf = m_owner;
    out.rules = m_rules;
    for (Growing& g : m_blocks) {
        ParallelBlock pb;
        pb.id = g.id;
        pb.entry = g.entry;
        pb.members = g.members;
        std::sort(pb.members.begin(), pb.members.end());
        pb.backwardPairs = g.pairs;
        std::sort(pb.backwardPairs.begin(), pb.backwardPairs.end(),
                  [](const DotPair& a, const DotPair& c) { return a.backward < c.backward; });
        const OpShardingRule& er = rule(g.entry);
        const auto S = static_cast<size_t>(g.S);
        for (size_t s = 0; s < S; ++s) {
            BlockStrategy st;
            st.label = g.labels[s];
            st.memberShardings.reserve(pb.members.size());
            st.memberFactors.reserve(pb.members.size());
            const FactorAssignment& ea = g.assign[static_cast<size_t>(m_local[static_cast<size_t>(g.entry)]) * S + s];
            for (size_t i = 0; i < er.operandDims.size(); ++i) st.entryOperands.push_back(fromCompact(projectOperand(er, ea, i), m_mesh));
            for (OpId m : pb.members) {
                const size_t k = static_cast<size_t>(m_local[static_cast<size_t>(m)]) * S + s;
                st.memberShardings.push_back(intern(g.shard[k]));
                st.memberFactors.push_back(g.assign[k]);
                if (g.partialMask[k]) {
                    OwnCollective c;
                    c.op = m;
                    for (int a = 0; a < m_sizes.rank; ++a)
                        if (g.partialMask[k] & (1u << a)) c.axes.push_back(m_mesh.axes()[static_cast<size_t>(a)].name);
                    c.bytes = m_g.op(m).type.bytes();
                    st.ownCollectives.push_back(std::move(c));
                }
            }
            pb.strategies.push_back(std::move(st));
        }
        out.blocks.push_back(std::move(pb));
    }

    // Reasons for everything else.
    for (const Op& op : m_g.ops()) {
        const auto i = static_cast<size_t>(op.id);
        if (m_owner[i] != -1) continue;
        UnassignedOp u;
        u.op = op.id;
        std::set<int32_t> blocks;
        std::string laterOperand;
        for (OpId o : op.operands) {
            if (m_owner[static_cast<size_t>(o)] >= 0) blocks.insert(m_owner[static_cast<size_t>(o)]);
            else if (!fixedPullable(o) && laterOperand.empty()) laterOperand = m_g.op(o).name;
        }
        if (!m_hasRule[i]) {
            u.reason = UnassignedReason::NoRule;
            u.detail = "no sharding rule for " + std::string(opKindName(op.kind)) + ": block boundary";
        } else if (fixedPullable(op.id)) {
            u.reason = UnassignedReason::ReplicatedSource;
            u.detail = "static value or parameter no block claimed: kept replicated";
        } else if (blocks.size() >= 2) {
            u.reason = UnassignedReason::MultiBlockInput;
            u.detail = "operands from blocks";
            for (int32_t b : blocks) u.detail += " " + std::to_string(b);
        } else if (m_failure[i] && m_failure[i]->reason == UnassignedReason::NeedsCommunication) {
            u.reason = UnassignedReason::NeedsCommunication;
            u.detail = m_failure[i]->detail;
        } else {
            u.reason = UnassignedReason::Unreached;
            u.detail = laterOperand.empty() ? "no block reaches it" : "depends on " + laterOperand + ", resolved later";
        }
        out.resolvedLater.push_back(std::move(u));
    }
    return out;
}

}  // namespace

Result<BlockAnalysis> findParallelBlocks(const Graph& graph, const Mesh& mesh, int threads, const std::string& sequenceAxis) {
    auto sizes = meshSizes(mesh);
    if (!sizes) return sizes.error();
    BlockFinder finder(graph, mesh, *sizes, threads, sequenceAxis);
    return finder.run();
}

}  // namespace cfp
