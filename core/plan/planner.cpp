#include "plan/planner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "stats/graph_stats.h"
#include "util/parallel.h"

namespace cfp {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int64_t ceilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

bool isSource(OpKind k) { return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota; }

// "219.62 GiB", or MiB below one GiB (a 1 MiB limit must not print as "0.00 GiB").
std::string gib(int64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (std::abs(b) < 1024.0 * 1024.0 * 1024.0)
        std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024.0));
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

// One op under one strategy of the block that decides it.
struct OpState {
    CompactSharding result;   // as passed on (no partial)
    FactorAssignment factors;
    uint32_t partialMask = 0; // axes of the own all-reduce
    bool measured = false;
    double kernel = 0;        // kernel seconds
    double own = 0;           // own all-reduce seconds
    int64_t memSum = 0;       // persistent bytes this op adds
    int64_t memMax = 0;       // its working set
    int64_t memSumRc = 0;     // persistent bytes when its block recomputes
    int64_t actRc = 0;        // bytes it adds to its block's recomputed activations
};

struct ReshardKey {
    uint32_t type;
    CompactSharding have, need;
    bool operator==(const ReshardKey&) const = default;
};
struct ReshardKeyHash {
    size_t operator()(const ReshardKey& k) const { return k.have.hash() * 31 + k.need.hash() * 1000003u + k.type; }
};

}  // namespace

struct PlanProblem::Impl {
    const Graph* g = nullptr;
    int threads = 1;  // workers for the cost tables (PlannerOptions::threads)
    AnalysisReport analysis;
    std::optional<CostModel> modelStore;
    const CostModel& model() const { return *modelStore; }
    // Per op: its sharding rule (the block finder's, BlockAnalysis::rules, or derived in buildStates).
    std::shared_ptr<const std::vector<std::optional<OpShardingRule>>> ruleStore;
    const std::optional<OpShardingRule>& rule(size_t k) const { return (*ruleStore)[k]; }
    std::vector<int32_t> owner;       // per op: block or -1 (fixed)
    std::vector<size_t> stateOffset;  // per op: index of its state 0
    std::vector<OpState> states;
    std::vector<int32_t> uses;
    std::vector<uint32_t> typeId;     // per op: interned result type
    std::vector<char> sourceLike;       // sources and values computed from constants alone
    MemoryPolicy policy;
    // Recomputation variants: strategy index s of block b is variant s / base(b) (variantRc says
    // whether it recomputes) of the block's strategy s % base(b). Two variants under Auto.
    int variants = 1;
    bool variantRc[2] = {false, true};
    std::vector<char> rcEligible;       // forward ops owned by a block, run again if it recomputes
    std::vector<char> checkpoint;       // forward results read by a recomputable op of another block
    std::vector<char> gradToOptimizer;  // backward results read only by the optimizer (ZeRO reduce-scatter)

    // Decomposed terms.
    double constTime = 0;
    int64_t constMemSum = 0, constMemMax = 0;
    std::vector<std::vector<double>> unaryTime;      // [block][strategy]
    std::vector<std::vector<int64_t>> unaryMemSum, unaryMemMax;
    struct Pair {
        int a = 0, b = 0;            // a < b
        std::vector<double> cost;    // [sa * d_b + sb]
    };
    std::vector<Pair> pairs;
    std::map<std::pair<int, int>, size_t> pairIndex;

    using ReshardCache = std::unordered_map<ReshardKey, double, ReshardKeyHash>;
    mutable ReshardCache reshardCache;  // the calling thread's; workers pass their own

    int base(int b) const { return static_cast<int>(analysis.blocks.blocks[static_cast<size_t>(b)].strategies.size()); }
    int strategies(int b) const { return base(b) * variants; }
    bool recomputes(int b, int s) const { return variantRc[s / base(b)]; }
    int nstates(OpId op) const { return owner[static_cast<size_t>(op)] < 0 ? 1 : base(owner[static_cast<size_t>(op)]); }
    // Devices holding the same piece of a tensor with this sharding, and their axes.
    uint32_t replicaMask(const CompactSharding& c) const {
        uint32_t m = 0;
        for (int a = 0; a < model().sizes().rank; ++a)
            if (c.dimOf[static_cast<size_t>(a)] < 0) m |= 1u << a;
        return m;
    }
    int64_t replicas(const CompactSharding& c) const {
        int64_t r = 1;
        for (int a = 0; a < model().sizes().rank; ++a)
            if (c.dimOf[static_cast<size_t>(a)] < 0) r *= model().sizes().size[static_cast<size_t>(a)];
        return r;
    }
    // How many ways optimizer-state sharding splits op `v`'s work further (1 outside the optimizer).
    int64_t zeroSplit(OpId v, const CompactSharding& result) const {
        const Op& op = g->op(v);
        if (!policy.optimizerSharding || op.phase != Phase::Optimizer || sourceLike[static_cast<size_t>(v)]) return 1;
        return replicas(result);
    }
    // Edge cost `e` (base strategies) when v's block runs strategy sv (full index): a recomputed
    // consumer reshards again, and a fused edge inside a recomputed block saves twice.
    double edgeTimes(OpId u, OpId v, int sv, double e) const {
        const int32_t ov = owner[static_cast<size_t>(v)];
        if (e == 0 || ov < 0 || !rcEligible[static_cast<size_t>(v)] || !recomputes(ov, sv)) return e;
        if (e > 0) return 2 * e;
        return owner[static_cast<size_t>(u)] == ov && rcEligible[static_cast<size_t>(u)] ? 2 * e : e;
    }
    std::vector<int64_t> bytesOf;     // per op: its result's bytes, unsplit
    // Bytes per device of op u's result under sharding c.
    int64_t local(OpId u, const CompactSharding& c) const { return localBytes(bytesOf[static_cast<size_t>(u)], c, model().sizes()); }
    const OpState& st(OpId op, int s) const { return states[stateOffset[static_cast<size_t>(op)] + static_cast<size_t>(s)]; }
    OpState& st(OpId op, int s) { return states[stateOffset[static_cast<size_t>(op)] + static_cast<size_t>(s)]; }

    CompactSharding need(OpId v, int s, size_t i) const {
        const auto& r = rule(static_cast<size_t>(v));
        if (!r) return CompactSharding::replicated(g->op(g->op(v).operands[i]).type.rank());
        return projectOperand(*r, st(v, s).factors, i);
    }

    double reshard(OpId u, const CompactSharding& have, const CompactSharding& needed, ReshardCache* cache = nullptr) const {
        if (have == needed) return 0.0;
        ReshardCache& memo = cache ? *cache : reshardCache;
        const ReshardKey key{typeId[static_cast<size_t>(u)], have, needed};
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        const Mesh& mesh = model().mesh();
        auto plan = planReshard(fromCompact(have, mesh), fromCompact(needed, mesh), mesh, g->op(u).type);
        const double s = plan ? model().reshardSeconds(*plan) : std::numeric_limits<double>::infinity();
        memo.emplace(key, s);
        return s;
    }

    // Cost of edge u → v (operand i) with u in state su and v in state sv.
    double edge(OpId u, int su, OpId v, int sv, size_t i, ReshardCache* cache = nullptr) const {
        const CompactSharding& have = st(u, su).result;
        const CompactSharding n = need(v, sv, i);
        if (have == n) {
            const Op& pu = g->op(u);
            if (fusesInto(pu.kind, g->op(v).kind) && uses[static_cast<size_t>(u)] == 1 && !st(u, su).measured &&
                !st(v, sv).measured && !sourceLike[static_cast<size_t>(u)])
                return -model().fusedEdgeSavingSeconds(local(u, have) / zeroSplit(v, st(v, sv).result));
            return 0.0;
        }
        return reshard(u, have, n, cache);
    }

    Status buildStates(const std::vector<std::pair<uint64_t, double>>& measured);
    void buildTerms();
    void separatePairs();
    // Adds edge u → v (operand i) between two different blocks to the pair terms.
    void addPairEdge(OpId u, OpId v, size_t i, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index, std::vector<double>& scratch) const;
    // The index of the pair of blocks x and y in ps, a new zero pair when it has none yet.
    size_t pairOf(int x, int y, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index) const;
    // Adds that edge's costs to pair p (whose blocks are u's and v's owners).
    void addEdgeToPair(OpId u, OpId v, size_t i, Pair& p, std::vector<double>& scratch, ReshardCache* cache = nullptr) const;
    static bool separable(const Pair& p, size_t da, size_t db);

    // The search's frontier layout (PlanProblem::search). Strategy classes: while block a waits in
    // the frontier after position b, two of its strategies whose pair costs with every block after
    // b are equal are interchangeable for the rest of the search, so the frontier keeps one state
    // per class (labels remember the strategy). The classes only coarsen as b advances. Exact; it
    // keeps the state small when a block waits long for one distant partner (the tied embedding of
    // a GPT, read again by the LM head).
    struct Classes {
        std::vector<int> classOf;         // per strategy
        std::vector<int> representative;  // per class: its first strategy
    };
    // plans[b] takes the labels over the frontier before b (plans[b - 1].next; empty for b = 0) to
    // those over the frontier after b.
    struct StepPlan {
        std::vector<int> next;              // frontier after b: blocks ascending
        std::vector<Classes> nextClasses;   // their strategy classes w.r.t. the blocks after b
        std::vector<int> posInNext;         // per position before b: its position in next, or -1
        int bPos = -1;                      // b's position in next, or -1
        std::vector<int64_t> stride;        // mixed radix of next (position 0 most significant)
        int64_t count = 1;                  // states after b
        std::vector<std::pair<int, const Pair*>> pb;  // pair terms into b, by position before b (ascending)
    };
    // Lays out positions 0 .. upTo-1 from the pair terms `ps` (exact there when ps holds every pair
    // that touches a block before upTo); plan.too_large when a frontier exceeds maxStates.
    Status layoutFrontier(const std::vector<Pair>& ps, int upTo, int64_t maxStates, const std::string& meshLabel,
                          std::vector<StepPlan>& plans) const;
    // The layout of the first blocks (the first four segments) from their own pair terms, before
    // the whole graph's cost tables are built: a mesh whose frontier is too large fails fast.
    Status checkFrontierPrefix(int64_t maxStates, const std::string& meshLabel) const;
    // The cost and memory terms of op under the sharding in s (opFlops: the op's FLOPs, unsplit).
    void computeOpState(const Op& op, double opFlops, OpState& s);
};

PlanProblem::PlanProblem() : m(std::make_unique<Impl>()) {}
PlanProblem::PlanProblem(PlanProblem&&) noexcept = default;
PlanProblem& PlanProblem::operator=(PlanProblem&&) noexcept = default;
PlanProblem::~PlanProblem() = default;

const AnalysisReport& PlanProblem::analysis() const { return m->analysis; }
const CostModel& PlanProblem::model() const { return m->model(); }
int PlanProblem::blockCount() const { return static_cast<int>(m->analysis.blocks.blocks.size()); }
int PlanProblem::strategyCount(int block) const { return m->strategies(block); }

void PlanProblem::Impl::computeOpState(const Op& op, double opFlops, OpState& s) {
    const MeshSizes& sizes = model().sizes();
    const auto k = static_cast<size_t>(op.id);
    const int64_t own = local(op.id, s.result);
    if (op.kind == OpKind::Parameter) {
        s.memSum = op.role == ParamRole::Trainable ? 2 * own : own;
        if (policy.optimizerSharding && op.role == ParamRole::OptimizerState) s.memSum = ceilDiv(own, replicas(s.result));
        if (policy.optimizerSharding && op.role == ParamRole::Trainable) s.own = model().shardedAllGatherSeconds(replicaMask(s.result), own);
        s.memSumRc = s.memSum;
        return;
    }
    if (sourceLike[k]) return;  // folded into its consumers: no kernel, no buffer of its own
    const int64_t z = zeroSplit(op.id, s.result);
    // Working set, axes used, local shapes.
    uint32_t axesUsed = s.partialMask;
    auto addAxes = [&](const CompactSharding& c) {
        for (int a = 0; a < sizes.rank; ++a)
            if (c.dimOf[static_cast<size_t>(a)] >= 0) axesUsed |= 1u << a;
    };
    addAxes(s.result);
    int64_t work = own;
    double bytes = static_cast<double>(own);
    std::vector<std::vector<int64_t>> operandDims;
    std::vector<TensorType> operandTypes;
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const TensorType& type = g->op(op.operands[i]).type;
        const CompactSharding n = rule(k) ? projectOperand(*rule(k), s.factors, i) : CompactSharding::replicated(type.rank());
        addAxes(n);
        const int64_t b = local(op.operands[i], n);
        work += b;
        bytes += static_cast<double>(b);
        if (model().hasMeasurements()) {
            operandDims.push_back(localDims(type, n, sizes));
            operandTypes.push_back(type);
        }
    }
    s.memMax = work / z;
    double split = static_cast<double>(z);
    for (int a = 0; a < sizes.rank; ++a)
        if (axesUsed & (1u << a)) split *= static_cast<double>(sizes.size[static_cast<size_t>(a)]);
    const double flops = opFlops / split;
    s.kernel = model().kernelSeconds(op.kind, op.type.dtype, flops, bytes / static_cast<double>(z));
    if (model().hasMeasurements()) {
        const uint64_t sig = opCostSignature(op, operandDims, operandTypes, localDims(op.type, s.result, sizes));
        if (const double* t = model().measured(sig)) {
            s.kernel = *t / static_cast<double>(z);
            s.measured = true;
        }
    }
    s.own = policy.optimizerSharding && gradToOptimizer[k] ? model().shardedReduceScatterSeconds(s.partialMask, own)
                                                           : model().ownAllReduceSeconds(s.partialMask, own);
}

Status PlanProblem::Impl::buildStates(const std::vector<std::pair<uint64_t, double>>& measured) {
    for (const auto& [sig, seconds] : measured) modelStore->setMeasured(sig, seconds);
    const Graph& graph = *g;
    const auto n = static_cast<size_t>(graph.size());
    const BlockAnalysis& ba = analysis.blocks;
    const MeshSizes& sizes = model().sizes();
    ruleStore = analysis.blocks.rules;
    std::shared_ptr<std::vector<std::optional<OpShardingRule>>> derived;
    if (!ruleStore || ruleStore->size() != n) {
        derived = std::make_shared<std::vector<std::optional<OpShardingRule>>>(n);
        ruleStore = derived;
    }
    owner.assign(n, -1);
    stateOffset.assign(n, 0);
    uses.assign(n, 0);
    typeId.assign(n, 0);
    bytesOf.assign(n, 0);
    parallelFor(static_cast<int64_t>(n), threads, 4096, [&](int64_t i0, int64_t i1, int) {
        for (int64_t i = i0; i < i1; ++i) bytesOf[static_cast<size_t>(i)] = graph.op(static_cast<OpId>(i)).type.bytes();
    });
    // The blocks' interned shardings in compact form, once.
    std::vector<CompactSharding> storedCompact;
    storedCompact.reserve(ba.shardings.size());
    for (const TensorSharding& t : ba.shardings) {
        auto c = toCompact(t, model().mesh());
        if (!c) return c.error().withContext("block sharding " + t.toString());
        storedCompact.push_back(*c);
    }
    struct TypeHash {
        size_t operator()(const TensorType& t) const {
            size_t h = static_cast<size_t>(t.dtype) * 0x9e3779b97f4a7c15ull;
            for (int64_t d : t.dims) h = (h ^ static_cast<size_t>(d)) * 0x100000001b3ull;
            return h;
        }
    };
    std::unordered_map<TensorType, uint32_t, TypeHash> types;  // TensorType::operator== compares dtype and dims
    std::vector<char> readByBackward(n, 0);
    for (const Op& op : graph.ops()) {
        for (OpId o : op.operands) {
            ++uses[static_cast<size_t>(o)];
            if (op.phase == Phase::Backward) readByBackward[static_cast<size_t>(o)] = 1;
        }
        auto it = types.try_emplace(op.type, static_cast<uint32_t>(types.size())).first;
        typeId[static_cast<size_t>(op.id)] = it->second;
        if (derived && hasShardingRule(op.kind)) {
            auto r = shardingRuleFor(graph, op);
            if (r) (*derived)[static_cast<size_t>(op.id)] = std::move(*r);
        }
    }
    // Values computed from constants and iota alone (masks, position ids) stay replicated and
    // fixed: every device computes them without communication and consumers slice them locally.
    std::vector<char> constantDerived(n, 0);  // computed from Constant/Iota alone (no parameter)
    sourceLike.assign(n, 0);
    for (const Op& op : graph.ops()) {
        bool c = op.kind == OpKind::Constant || op.kind == OpKind::Iota;
        if (!c && op.kind != OpKind::Parameter && !op.operands.empty()) {
            c = true;
            for (OpId o : op.operands) c = c && constantDerived[static_cast<size_t>(o)];
        }
        constantDerived[static_cast<size_t>(op.id)] = c;
        sourceLike[static_cast<size_t>(op.id)] = c || op.kind == OpKind::Parameter;
    }
    // Owners: block members first.
    std::vector<int64_t> memberIndex(n, -1);
    for (const ParallelBlock& b : ba.blocks)
        for (size_t k = 0; k < b.members.size(); ++k) {
            if (constantDerived[static_cast<size_t>(b.members[k])]) continue;
            owner[static_cast<size_t>(b.members[k])] = b.id;
            memberIndex[static_cast<size_t>(b.members[k])] = static_cast<int64_t>(k);
        }
    // Ops outside blocks, in alternating passes until nothing changes:
    //   forward (graph order): an op with an operand that depends on a block follows the most
    //     recently computed such operand — the nearest producer, which keeps dependences local;
    //   backward (reverse order): an op with none (e.g. computed from data inputs only, like a
    //     one-hot of the labels, or from the loss seed) is pulled by its first consumer that
    //     depends on a block and takes the sharding that consumer reads.
    // The rest are fixed: they follow their first non-source operand, or are replicated.
    std::vector<int32_t> follows(n, -1);
    std::vector<std::pair<OpId, int32_t>> pulledBy(n, {kNoOp, -1});
    // Consumers (op, operand slot) of each op in op order, CSR.
    std::vector<int64_t> consumerStart(n + 1, 0);
    for (const Op& op : graph.ops())
        for (OpId o : op.operands) ++consumerStart[static_cast<size_t>(o) + 1];
    for (size_t k = 0; k < n; ++k) consumerStart[k + 1] += consumerStart[k];
    std::vector<std::pair<OpId, int32_t>> consumerList(static_cast<size_t>(consumerStart[n]));
    {
        std::vector<int64_t> at(consumerStart.begin(), consumerStart.end() - 1);
        for (const Op& op : graph.ops())
            for (size_t i = 0; i < op.operands.size(); ++i)
                consumerList[static_cast<size_t>(at[static_cast<size_t>(op.operands[i])]++)] = {op.id, static_cast<int32_t>(i)};
    }
    auto consumers = [&](size_t k) {
        return std::span<const std::pair<OpId, int32_t>>(consumerList.data() + consumerStart[k], consumerList.data() + consumerStart[k + 1]);
    };
    std::vector<OpId> order;  // members first, then in the order owners were decided
    order.reserve(n);
    for (const Op& op : graph.ops())
        if (memberIndex[static_cast<size_t>(op.id)] >= 0) order.push_back(op.id);
    // Parameters outside blocks (optimizer state, norms' scales, data inputs) are pulled too: they
    // are stored the way their first consumer reads them.
    auto free = [&](size_t k) {
        const bool param = graph.op(static_cast<OpId>(k)).kind == OpKind::Parameter;
        return memberIndex[k] < 0 && owner[k] < 0 && (param || (!sourceLike[k] && rule(k)));
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (const Op& op : graph.ops()) {
            const auto k = static_cast<size_t>(op.id);
            if (!free(k)) continue;
            int32_t pick = -1;
            for (size_t i = 0; i < op.operands.size(); ++i)
                if (owner[static_cast<size_t>(op.operands[i])] >= 0 &&
                    (pick < 0 || op.operands[i] > op.operands[static_cast<size_t>(pick)]))
                    pick = static_cast<int32_t>(i);
            if (pick < 0) continue;
            follows[k] = pick;
            owner[k] = owner[static_cast<size_t>(op.operands[static_cast<size_t>(pick)])];
            order.push_back(op.id);
            changed = true;
        }
        for (OpId id = graph.size() - 1; id >= 0; --id) {
            const auto k = static_cast<size_t>(id);
            if (!free(k)) continue;
            for (const auto& [c, slot] : consumers(k)) {
                if (owner[static_cast<size_t>(c)] < 0) continue;
                pulledBy[k] = {c, slot};
                owner[k] = owner[static_cast<size_t>(c)];
                order.push_back(id);
                changed = true;
                break;
            }
        }
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (memberIndex[k] >= 0 || owner[k] >= 0) continue;
        if (!sourceLike[k] && rule(k))
            for (size_t i = 0; i < op.operands.size() && follows[k] < 0; ++i)
                if (!sourceLike[static_cast<size_t>(op.operands[i])]) follows[k] = static_cast<int32_t>(i);
        order.push_back(op.id);
    }
    // Memory policy: which ops recompute with their block, which results are checkpoints, which
    // gradients feed the optimizer alone.
    rcEligible.assign(n, 0);
    checkpoint.assign(n, 0);
    gradToOptimizer.assign(n, 0);
    const bool rcOn = policy.recompute != RecomputePolicy::None;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        rcEligible[k] = rcOn && op.phase == Phase::Forward && !sourceLike[k] && owner[k] >= 0;
    }
    // Per op (in parallel; each writes only its own entries).
    parallelFor(static_cast<int64_t>(n), threads, 4096, [&](int64_t i0, int64_t i1, int) {
        for (auto k = static_cast<size_t>(i0); k < static_cast<size_t>(i1); ++k) {
            const Op& op = graph.op(static_cast<OpId>(k));
            bool toOptimizer = op.phase == Phase::Backward && !consumers(k).empty();
            for (const auto& [c, slot] : consumers(k)) {
                const auto ck = static_cast<size_t>(c);
                if (graph.op(c).phase != Phase::Optimizer) toOptimizer = false;
                if (rcEligible[ck] && owner[ck] != owner[k] && op.phase == Phase::Forward && !sourceLike[k]) checkpoint[k] = 1;
            }
            gradToOptimizer[k] = toOptimizer;
        }
    });
    size_t total = 0;
    for (size_t k = 0; k < n; ++k) {
        stateOffset[k] = total;
        total += static_cast<size_t>(nstates(static_cast<OpId>(k)));
    }
    states.assign(total, OpState{});
    auto setPartial = [&](OpState& os, const CompactSharding& full) {
        for (int a = 0; a < sizes.rank; ++a)
            if (full.dimOf[static_cast<size_t>(a)] == CompactSharding::kAxisPartial) os.partialMask |= 1u << a;
    };
    // Per worker: rule messages, and the inputs of an op's distinct states.
    struct FillScratch {
        std::string why;
        std::vector<CompactSharding> input;  // per state: the sharding it is derived from
        std::vector<int> distinct;           // states with an input not seen before
        std::vector<const CompactSharding*> known;
    };
    // Every state of op `id`. A state is a function of its input alone (a member's factors and
    // stored sharding, the sharding a pulled op's consumer reads, the result of the operand a
    // following op follows): a state whose input equals an earlier state's is a copy of it.
    auto fill = [&](OpId id, FillScratch& scratch) -> Status {
        const Op& op = graph.op(id);
        const auto k = static_cast<size_t>(id);
        const int S = nstates(op.id);
        const double flops = opFlops(graph, op);
        std::string& why = scratch.why;
        scratch.distinct.clear();
        scratch.input.resize(static_cast<size_t>(S));
        for (int s = 0; s < S; ++s) {
            OpState& os = st(op.id, s);
            // The state's input, and an earlier state with the same one.
            int same = -1;
            if (memberIndex[k] >= 0) {
                const ParallelBlock& b = ba.blocks[static_cast<size_t>(owner[k])];
                const auto mi = static_cast<size_t>(memberIndex[k]);
                const BlockStrategy& strat = b.strategies[static_cast<size_t>(s)];
                for (const int t : scratch.distinct) {
                    const BlockStrategy& other = b.strategies[static_cast<size_t>(t)];
                    if (other.memberShardings[mi] == strat.memberShardings[mi] && other.memberFactors[mi] == strat.memberFactors[mi]) {
                        same = t;
                        break;
                    }
                }
            } else if (pulledBy[k].first != kNoOp || follows[k] >= 0) {
                CompactSharding& in = scratch.input[static_cast<size_t>(s)];
                if (pulledBy[k].first != kNoOp)
                    in = need(pulledBy[k].first, s, static_cast<size_t>(pulledBy[k].second));
                else
                    in = st(op.operands[static_cast<size_t>(follows[k])], owner[k] < 0 ? 0 : s).result;
                for (const int t : scratch.distinct)
                    if (scratch.input[static_cast<size_t>(t)] == in) {
                        same = t;
                        break;
                    }
            }
            if (same >= 0) {
                os = st(op.id, same);
                continue;
            }
            scratch.distinct.push_back(s);
            if (memberIndex[k] >= 0) {
                const ParallelBlock& b = ba.blocks[static_cast<size_t>(owner[k])];
                const BlockStrategy& strat = b.strategies[static_cast<size_t>(s)];
                const auto mi = static_cast<size_t>(memberIndex[k]);
                os.factors = strat.memberFactors[mi];
                const uint32_t stored = strat.memberShardings[mi];
                if (stored >= storedCompact.size())
                    return makeError("plan.internal", "block " + std::to_string(b.id) + " refers to sharding " + std::to_string(stored) +
                                                          " of " + std::to_string(storedCompact.size()));
                os.result = storedCompact[stored];
                if (rule(k) && !isSource(op.kind)) setPartial(os, projectResult(*rule(k), os.factors));
            } else if (pulledBy[k].first != kNoOp && op.kind == OpKind::Parameter) {
                os.result = scratch.input[static_cast<size_t>(s)];
            } else if (pulledBy[k].first != kNoOp) {
                const CompactSharding& wanted = scratch.input[static_cast<size_t>(s)];
                if (!assignFromResult(*rule(k), wanted, sizes, os.factors, &why)) os.factors = FactorAssignment{};
                const CompactSharding full = projectResult(*rule(k), os.factors);
                setPartial(os, full);
                os.result = full.withoutPartial();
            } else if (follows[k] >= 0) {
                const auto i = static_cast<size_t>(follows[k]);
                scratch.known.assign(op.operands.size(), nullptr);
                scratch.known[i] = &scratch.input[static_cast<size_t>(s)];
                if (!assignFromOperands(*rule(k), scratch.known, sizes, os.factors, &why)) os.factors = FactorAssignment{};
                const CompactSharding full = projectResult(*rule(k), os.factors);
                setPartial(os, full);
                os.result = full.withoutPartial();
            } else {
                os.factors = FactorAssignment{};
                os.result = CompactSharding::replicated(op.type.rank());
            }
            computeOpState(op, flops, os);
            if (op.phase == Phase::Forward && !sourceLike[k]) {
                // Kept for the backward pass: read by it (unless recomputed), or a checkpoint.
                const int64_t bytes = local(op.id, os.result);
                const bool kept = readByBackward[k] || checkpoint[k];
                const bool keptRc = checkpoint[k] || (readByBackward[k] && !rcEligible[k]);
                os.memSumRc = os.memSum + (keptRc ? bytes : 0);
                os.actRc = rcEligible[k] && readByBackward[k] && !keptRc ? bytes : 0;
                os.memSum += kept ? bytes : 0;
            } else {
                os.memSumRc = os.memSum;
            }
        }
        return {};
    };
    // An op's states depend only on those of the op it follows or is pulled by (decided before it
    // in `order`); block members and fixed ops on none. Level by level, each level's ops are
    // split among the workers.
    std::vector<int32_t> level(n, 0);
    int32_t levels = 1;
    for (const OpId id : order) {
        const auto k = static_cast<size_t>(id);
        if (memberIndex[k] >= 0) continue;
        int32_t lv = 0;
        if (pulledBy[k].first != kNoOp)
            lv = level[static_cast<size_t>(pulledBy[k].first)] + 1;
        else if (follows[k] >= 0)
            lv = level[static_cast<size_t>(graph.op(id).operands[static_cast<size_t>(follows[k])])] + 1;
        level[k] = lv;
        levels = std::max(levels, lv + 1);
    }
    std::vector<std::vector<OpId>> byLevel(static_cast<size_t>(levels));
    for (const OpId id : order) byLevel[static_cast<size_t>(level[static_cast<size_t>(id)])].push_back(id);
    for (const std::vector<OpId>& ops : byLevel) {
        // Strided, not contiguous: members (a state per strategy) and fixed ops (one) mix evenly.
        const int ranges = parallelRanges(static_cast<int64_t>(ops.size()), threads, 256);
        CFP_TRY(parallelTry(ranges, ranges, 1, [&](int64_t, int64_t, int w) -> Status {
            FillScratch scratch;
            for (auto i = static_cast<size_t>(w); i < ops.size(); i += static_cast<size_t>(ranges)) CFP_TRY(fill(ops[i], scratch));
            return {};
        }));
    }
    return {};
}

void PlanProblem::Impl::buildTerms() {
    const Graph& graph = *g;
    const size_t B = analysis.blocks.blocks.size();
    unaryTime.assign(B, {});
    unaryMemSum.assign(B, {});
    unaryMemMax.assign(B, {});
    // Per block and strategy: recomputed activations, and the largest working set of its forward
    // and backward ops (live together with them) and of its optimizer ops.
    std::vector<std::vector<int64_t>> act(B), groupMax(B), otherMax(B);
    for (size_t b = 0; b < B; ++b) {
        const auto S = static_cast<size_t>(strategies(static_cast<int>(b)));
        unaryTime[b].assign(S, 0.0);
        unaryMemSum[b].assign(S, 0);
        unaryMemMax[b].assign(S, 0);
        act[b].assign(S, 0);
        groupMax[b].assign(S, 0);
        otherMax[b].assign(S, 0);
    }
    // What each block's terms sum, in op order (and operand order): its ops, the edges with one
    // end in it (the other fixed, or both in it); and every pair's edges. The sums are taken per
    // block and per pair in that order, blocks and pairs split among the workers, so the tables
    // do not depend on the thread count.
    std::vector<std::vector<OpId>> opsOf(B);
    std::vector<std::vector<std::pair<OpId, int32_t>>> edgesOf(B);  // (consumer, operand)
    std::vector<std::vector<std::pair<OpId, int32_t>>> pairEdges;
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const int32_t o = owner[k];
        if (o < 0) {
            const OpState& s = st(op.id, 0);
            constTime += s.kernel + s.own;
            constMemSum += s.memSum;
            constMemMax = std::max(constMemMax, s.memMax);
        } else {
            opsOf[static_cast<size_t>(o)].push_back(op.id);
        }
    }
    std::vector<std::pair<OpId, int32_t>> fixedEdges;  // both ends fixed: priced below, summed in op order
    for (const Op& op : graph.ops()) {
        const OpId v = op.id;
        const int32_t ov = owner[static_cast<size_t>(v)];
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            const int32_t ou = owner[static_cast<size_t>(u)];
            if (ou < 0 && ov < 0) {
                fixedEdges.emplace_back(v, static_cast<int32_t>(i));
            } else if (ou < 0 || ov < 0 || ou == ov) {
                edgesOf[static_cast<size_t>(ou < 0 ? ov : ou)].emplace_back(v, static_cast<int32_t>(i));
            } else {
                const size_t slot = pairOf(ou, ov, pairs, pairIndex);
                if (slot == pairEdges.size()) pairEdges.emplace_back();
                pairEdges[slot].emplace_back(v, static_cast<int32_t>(i));
            }
        }
    }
    std::vector<ReshardCache> caches(static_cast<size_t>(threads));
    std::vector<double> fixedCost(fixedEdges.size(), 0.0);
    parallelFor(static_cast<int64_t>(fixedEdges.size()), threads, 1024, [&](int64_t e0, int64_t e1, int w) {
        for (auto e = static_cast<size_t>(e0); e < static_cast<size_t>(e1); ++e) {
            const auto [v, slot] = fixedEdges[e];
            fixedCost[e] = edge(graph.op(v).operands[static_cast<size_t>(slot)], 0, v, 0, static_cast<size_t>(slot), &caches[static_cast<size_t>(w)]);
        }
    });
    for (const double c : fixedCost) constTime += c;
    parallelFor(static_cast<int64_t>(B), threads, 8, [&](int64_t b0, int64_t b1, int w) {
        ReshardCache* cache = &caches[static_cast<size_t>(w)];
        std::vector<double> baseE;
        for (auto ou = static_cast<size_t>(b0); ou < static_cast<size_t>(b1); ++ou) {
            const int o = static_cast<int>(ou);
            const int S = strategies(o), bo = base(o);
            // Node terms.
            for (const OpId id : opsOf[ou]) {
                const auto k = static_cast<size_t>(id);
                const Op& op = graph.op(id);
                for (int s = 0; s < S; ++s) {
                    const auto su = static_cast<size_t>(s);
                    const OpState& os = st(id, s % bo);
                    const bool rc = recomputes(o, s);
                    unaryTime[ou][su] += (os.kernel + os.own) * (rc && rcEligible[k] ? 2.0 : 1.0);
                    unaryMemSum[ou][su] += rc ? os.memSumRc : os.memSum;
                    if (rc) act[ou][su] += os.actRc;
                    auto& mx = op.phase == Phase::Optimizer ? otherMax[ou][su] : groupMax[ou][su];
                    mx = std::max(mx, os.memMax);
                }
            }
            for (int s = 0; s < S; ++s) {
                const auto su = static_cast<size_t>(s);
                unaryMemMax[ou][su] = std::max(otherMax[ou][su], groupMax[ou][su] + act[ou][su]);
            }
            // Edge terms: priced once per base strategy, then per recomputation variant.
            for (const auto& [v, slot] : edgesOf[ou]) {
                const auto i = static_cast<size_t>(slot);
                const OpId u = graph.op(v).operands[i];
                const int32_t ov = owner[static_cast<size_t>(v)], ouOwner = owner[static_cast<size_t>(u)];
                baseE.resize(static_cast<size_t>(bo));
                for (int sb = 0; sb < bo; ++sb)
                    baseE[static_cast<size_t>(sb)] = edge(u, ouOwner < 0 ? 0 : sb, v, ov < 0 ? 0 : sb, i, cache);
                for (int s = 0; s < S; ++s) {
                    const double e = baseE[static_cast<size_t>(s % bo)];
                    unaryTime[ou][static_cast<size_t>(s)] += ov < 0 ? e : edgeTimes(u, v, s, e);
                }
            }
        }
    });
    parallelFor(static_cast<int64_t>(pairs.size()), threads, 8, [&](int64_t p0, int64_t p1, int w) {
        ReshardCache* cache = &caches[static_cast<size_t>(w)];
        std::vector<double> scratch;
        for (auto pi = static_cast<size_t>(p0); pi < static_cast<size_t>(p1); ++pi)
            for (const auto& [v, slot] : pairEdges[pi])
                addEdgeToPair(graph.op(v).operands[static_cast<size_t>(slot)], v, static_cast<size_t>(slot), pairs[pi], scratch, cache);
    });
}

Status PlanProblem::Impl::layoutFrontier(const std::vector<Pair>& ps, int upTo, int64_t maxStates, const std::string& meshLabel,
                                         std::vector<StepPlan>& plans) const {
    const int B = static_cast<int>(analysis.blocks.blocks.size());
    // Pairs by their later and by their earlier block; last use of each block.
    std::vector<std::vector<const Pair*>> pairsInto(static_cast<size_t>(B)), pairsFrom(static_cast<size_t>(B));
    std::vector<int> lastUse(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) lastUse[static_cast<size_t>(b)] = b;
    for (const auto& p : ps) {
        pairsInto[static_cast<size_t>(p.b)].push_back(&p);
        pairsFrom[static_cast<size_t>(p.a)].push_back(&p);
        lastUse[static_cast<size_t>(p.a)] = std::max(lastUse[static_cast<size_t>(p.a)], p.b);
    }
    auto classesAfter = [&](int a, int after) {
        Classes c;
        std::map<std::vector<double>, int> seen;
        const int da = strategies(a);
        for (int s = 0; s < da; ++s) {
            std::vector<double> row;
            for (const Pair* p : pairsFrom[static_cast<size_t>(a)]) {
                if (p->b <= after) continue;
                const auto dc = static_cast<size_t>(strategies(p->b));
                row.insert(row.end(), p->cost.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(s) * dc),
                           p->cost.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(s + 1) * dc));
            }
            auto [it, inserted] = seen.try_emplace(std::move(row), static_cast<int>(c.representative.size()));
            if (inserted) c.representative.push_back(s);
            c.classOf.push_back(it->second);
        }
        return c;
    };
    plans.assign(static_cast<size_t>(upTo), StepPlan{});
    std::vector<int> frontier;
    for (int b = 0; b < upTo; ++b) {
        StepPlan& sp = plans[static_cast<size_t>(b)];
        for (int a : frontier)
            if (lastUse[static_cast<size_t>(a)] > b) sp.next.push_back(a);
        if (lastUse[static_cast<size_t>(b)] > b) sp.next.push_back(b);
        for (int a : sp.next) sp.nextClasses.push_back(classesAfter(a, b));
        for (const Classes& c : sp.nextClasses) {
            sp.count *= static_cast<int64_t>(c.representative.size());
            if (sp.count > maxStates)
                return makeError("plan.too_large", "the search frontier at block " + std::to_string(b) + " has more than " +
                                                       std::to_string(maxStates) + " states on mesh " + meshLabel +
                                                       " (too many strategy combinations to search exactly); use a mesh "
                                                       "with fewer axes, or pin blocks with --pin");
        }
        sp.posInNext.assign(frontier.size(), -1);
        for (size_t i = 0; i < frontier.size(); ++i)
            for (size_t j = 0; j < sp.next.size(); ++j)
                if (sp.next[j] == frontier[i]) sp.posInNext[i] = static_cast<int>(j);
        sp.bPos = sp.next.empty() || sp.next.back() != b ? -1 : static_cast<int>(sp.next.size()) - 1;
        sp.stride.assign(sp.next.size(), 1);
        for (int j = static_cast<int>(sp.next.size()) - 2; j >= 0; --j)
            sp.stride[static_cast<size_t>(j)] = sp.stride[static_cast<size_t>(j) + 1] *
                                                static_cast<int64_t>(sp.nextClasses[static_cast<size_t>(j) + 1].representative.size());
        for (size_t i = 0; i < frontier.size(); ++i)
            for (const Pair* p : pairsInto[static_cast<size_t>(b)])
                if (frontier[i] == p->a) sp.pb.emplace_back(static_cast<int>(i), p);
        frontier = sp.next;
    }
    return {};
}

Status PlanProblem::Impl::checkFrontierPrefix(int64_t maxStates, const std::string& meshLabel) const {
    const auto& segs = analysis.cover.segments;
    const int B = static_cast<int>(analysis.blocks.blocks.size());
    const int upTo = segs.size() > 4 ? segs[4].firstBlock : B;
    std::vector<Pair> ps;
    std::map<std::pair<int, int>, size_t> index;
    std::vector<double> scratch;
    for (const Op& op : g->ops())
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const int32_t ou = owner[static_cast<size_t>(op.operands[i])], ov = owner[static_cast<size_t>(op.id)];
            if (ou >= 0 && ov >= 0 && ou != ov && std::min(ou, ov) < upTo) addPairEdge(op.operands[i], op.id, i, ps, index, scratch);
        }
    std::vector<Pair> kept;
    for (auto& p : ps)
        if (!separable(p, static_cast<size_t>(strategies(p.a)), static_cast<size_t>(strategies(p.b)))) kept.push_back(std::move(p));
    std::vector<StepPlan> plans;
    return layoutFrontier(kept, upTo, maxStates, meshLabel, plans);
}

void PlanProblem::Impl::addPairEdge(OpId u, OpId v, size_t i, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index,
                                    std::vector<double>& baseCost) const {
    addEdgeToPair(u, v, i, ps[pairOf(owner[static_cast<size_t>(u)], owner[static_cast<size_t>(v)], ps, index)], baseCost);
}

size_t PlanProblem::Impl::pairOf(int x, int y, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index) const {
    const int a = std::min(x, y), b = std::max(x, y);
    auto [it, inserted] = index.try_emplace({a, b}, ps.size());
    if (inserted) {
        Pair p;
        p.a = a;
        p.b = b;
        p.cost.assign(static_cast<size_t>(strategies(a)) * static_cast<size_t>(strategies(b)), 0.0);
        ps.push_back(std::move(p));
    }
    return it->second;
}

void PlanProblem::Impl::addEdgeToPair(OpId u, OpId v, size_t i, Pair& p, std::vector<double>& baseCost, ReshardCache* cache) const {
    const int32_t ou = owner[static_cast<size_t>(u)], ov = owner[static_cast<size_t>(v)];
    const int a = p.a;
    const int db = strategies(p.b);
    const int bu = base(ou), bv = base(ov);
    // The shardings u has and v reads repeat across strategies: resharding is priced once per
    // distinct pair (equal shardings go through edge(), which prices fusion).
    auto distinct = [](std::vector<CompactSharding>& seen, const CompactSharding& c) {
        for (size_t k = 0; k < seen.size(); ++k)
            if (seen[k] == c) return k;
        seen.push_back(c);
        return seen.size() - 1;
    };
    std::vector<CompactSharding> haves, needs;
    std::vector<size_t> haveOf(static_cast<size_t>(bu)), needOf(static_cast<size_t>(bv));
    for (int su = 0; su < bu; ++su) haveOf[static_cast<size_t>(su)] = distinct(haves, st(u, su).result);
    for (int sv = 0; sv < bv; ++sv) needOf[static_cast<size_t>(sv)] = distinct(needs, need(v, sv, i));
    std::vector<double> priced(haves.size() * needs.size(), std::numeric_limits<double>::quiet_NaN());
    baseCost.assign(static_cast<size_t>(bu) * static_cast<size_t>(bv), 0.0);
    for (int su = 0; su < bu; ++su)
        for (int sv = 0; sv < bv; ++sv) {
            const size_t h = haveOf[static_cast<size_t>(su)], q = needOf[static_cast<size_t>(sv)];
            double& e = baseCost[static_cast<size_t>(su) * static_cast<size_t>(bv) + static_cast<size_t>(sv)];
            if (haves[h] == needs[q]) {
                e = edge(u, su, v, sv, i, cache);
            } else {
                double& c = priced[h * needs.size() + q];
                if (std::isnan(c)) c = reshard(u, haves[h], needs[q], cache);
                e = c;
            }
        }
    for (int su = 0; su < strategies(ou); ++su)
        for (int sv = 0; sv < strategies(ov); ++sv) {
            const double e = baseCost[static_cast<size_t>(su % bu) * static_cast<size_t>(bv) + static_cast<size_t>(sv % bv)];
            const int sa = ou == a ? su : sv, sb = ou == a ? sv : su;
            p.cost[static_cast<size_t>(sa) * static_cast<size_t>(db) + static_cast<size_t>(sb)] += edgeTimes(u, v, sv, e);
        }
}

bool PlanProblem::Impl::separable(const Pair& p, size_t da, size_t db) {
    auto at = [&](size_t sa, size_t sb) { return p.cost[sa * db + sb]; };
    double scale = 0;
    for (double c : p.cost) scale = std::max(scale, std::abs(c));
    for (size_t sa = 0; sa < da; ++sa)
        for (size_t sb = 0; sb < db; ++sb)
            if (std::abs(at(sa, sb) - at(sa, 0) - at(0, sb) + at(0, 0)) > 1e-12 * std::max(1.0, scale)) return false;
    return true;
}

// Moves pair terms that split into f(sa) + g(sb) (e.g. scalars, or edges whose cost depends on
// one side only) into the two blocks' own terms, so that they do not widen the search frontier.
void PlanProblem::Impl::separatePairs() {
    auto& unary = unaryTime;
    std::vector<Pair> kept;
    for (auto& p : pairs) {
        const size_t da = unary[static_cast<size_t>(p.a)].size(), db = unary[static_cast<size_t>(p.b)].size();
        auto at = [&](size_t sa, size_t sb) { return p.cost[sa * db + sb]; };
        if (!separable(p, da, db)) {
            kept.push_back(std::move(p));
            continue;
        }
        for (size_t sa = 0; sa < da; ++sa) unary[static_cast<size_t>(p.a)][sa] += at(sa, 0);
        for (size_t sb = 0; sb < db; ++sb) unary[static_cast<size_t>(p.b)][sb] += at(0, sb) - at(0, 0);
    }
    pairs = std::move(kept);
    pairIndex.clear();
    for (size_t i = 0; i < pairs.size(); ++i) pairIndex[{pairs[i].a, pairs[i].b}] = i;
}

Result<PlanProblem> PlanProblem::build(const Graph& graph, AnalysisReport analysis, const CostModel& model,
                                       const std::vector<std::pair<uint64_t, double>>& measured, const MemoryPolicy& policy,
                                       int64_t frontierCap, const std::string& meshLabel, int threads) {
    PlanProblem p;
    p.m->g = &graph;
    p.m->threads = resolveThreads(threads);
    p.m->policy = policy;
    p.m->variants = policy.recompute == RecomputePolicy::Auto ? 2 : 1;
    p.m->variantRc[0] = policy.recompute == RecomputePolicy::All;
    p.m->analysis = std::move(analysis);
    p.m->modelStore = model;
    for (const ParallelBlock& b : p.m->analysis.blocks.blocks)
        if (b.strategies.empty() || b.strategies.front().memberFactors.size() != b.members.size())
            return makeError("plan.internal", "block " + std::to_string(b.id) + " has no strategies with member factors");
    CFP_TRY(p.m->buildStates(measured));
    if (frontierCap > 0) CFP_TRY(p.m->checkFrontierPrefix(frontierCap, meshLabel));
    p.m->buildTerms();
    p.m->separatePairs();
    return p;
}

double PlanProblem::objective(const std::vector<int32_t>& s) const {
    double t = m->constTime;
    for (size_t b = 0; b < m->unaryTime.size(); ++b) t += m->unaryTime[b][static_cast<size_t>(s[b])];
    for (const auto& p : m->pairs)
        t += p.cost[static_cast<size_t>(s[static_cast<size_t>(p.a)]) * static_cast<size_t>(m->strategies(p.b)) +
                    static_cast<size_t>(s[static_cast<size_t>(p.b)])];
    return t;
}

MemoryBreakdown PlanProblem::memoryBreakdown(const std::vector<int32_t>& strategy) const {
    const Impl& P = *m;
    const Graph& graph = *P.g;
    MemoryBreakdown mb;
    std::vector<int64_t> act(P.analysis.blocks.blocks.size(), 0);
    for (const Op& op : graph.ops()) {
        const int32_t o = P.owner[static_cast<size_t>(op.id)];
        if (o >= 0 && P.recomputes(o, strategy[static_cast<size_t>(o)]))
            act[static_cast<size_t>(o)] += P.st(op.id, strategy[static_cast<size_t>(o)] % P.base(o)).actRc;
    }
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        const int32_t o = P.owner[k];
        const int s = o < 0 ? 0 : strategy[static_cast<size_t>(o)];
        const bool rc = o >= 0 && P.recomputes(o, s);
        const OpState& os = P.st(op.id, o < 0 ? 0 : s % P.base(o));
        const int64_t own = localBytes(op.type, os.result, P.model().sizes());
        if (op.kind == OpKind::Parameter) {
            if (op.role == ParamRole::Trainable) {
                mb.weights += own;
                mb.gradients += own;
            } else if (op.role == ParamRole::OptimizerState) {
                mb.optimizer += os.memSum;
            } else {
                mb.activations += own;
            }
            continue;
        }
        mb.activations += rc ? os.memSumRc : os.memSum;
        const bool group = o >= 0 && op.phase != Phase::Optimizer;
        mb.transient = std::max(mb.transient, os.memMax + (group ? act[static_cast<size_t>(o)] : 0));
    }
    return mb;
}

int64_t PlanProblem::memory(const std::vector<int32_t>& s) const {
    int64_t sum = m->constMemSum, mx = m->constMemMax;
    for (size_t b = 0; b < m->unaryMemSum.size(); ++b) {
        sum += m->unaryMemSum[b][static_cast<size_t>(s[b])];
        mx = std::max(mx, m->unaryMemMax[b][static_cast<size_t>(s[b])]);
    }
    return sum + mx;
}

Result<StrategyMask> PlanProblem::applyPins(const std::vector<std::string>& pins) const {
    const auto& blocks = m->analysis.blocks.blocks;
    const auto& cover = m->analysis.cover;
    StrategyMask mask(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) mask[b].assign(blocks[b].strategies.size(), 1);
    auto strategyOf = [&](int block, const std::string& text, const std::string& pin) -> Result<int> {
        const auto& st = blocks[static_cast<size_t>(block)].strategies;
        for (size_t s = 0; s < st.size(); ++s)
            if (st[s].label == text) return static_cast<int>(s);
        char* end = nullptr;
        const long v = std::strtol(text.c_str(), &end, 10);
        if (!text.empty() && end && *end == '\0' && v >= 0 && v < static_cast<long>(st.size())) return static_cast<int>(v);
        std::string known;
        for (size_t s = 0; s < st.size() && s < 12; ++s) known += (s ? ", " : "") + st[s].label;
        return makeError("plan.bad_pin", "pin '" + pin + "': block " + std::to_string(block) + " has no strategy '" + text +
                                             "' (strategies: " + known + (st.size() > 12 ? ", …" : "") + ")");
    };
    auto restrict = [&](int block, int s) {
        for (size_t k = 0; k < mask[static_cast<size_t>(block)].size(); ++k)
            mask[static_cast<size_t>(block)][k] = mask[static_cast<size_t>(block)][k] && static_cast<int>(k) == s;
    };
    for (const std::string& pin : pins) {
        const auto eq = pin.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == pin.size())
            return makeError("plan.bad_pin", "pin '" + pin + "': expected SEGMENT=COMBO or bN=STRATEGY");
        std::string lhs = pin.substr(0, eq);
        const std::string rhs = pin.substr(eq + 1);
        if (lhs.rfind("block:", 0) == 0) lhs = "b" + lhs.substr(6);
        if (lhs[0] == 'b') {
            char* end = nullptr;
            const long b = std::strtol(lhs.c_str() + 1, &end, 10);
            if (!end || *end != '\0' || lhs.size() < 2 || b < 0 || b >= static_cast<long>(blocks.size()))
                return makeError("plan.bad_pin", "pin '" + pin + "': no block '" + lhs + "' (blocks b0…b" +
                                                     std::to_string(blocks.size() - 1) + ")");
            auto s = strategyOf(static_cast<int>(b), rhs, pin);
            if (!s) return s.error();
            restrict(static_cast<int>(b), *s);
            continue;
        }
        std::vector<int> segs;
        if (lhs[0] == 'T' || lhs[0] == 't') {
            char* end = nullptr;
            const long t = std::strtol(lhs.c_str() + 1, &end, 10);
            if (!end || *end != '\0' || lhs.size() < 2 || t < 0 || t >= static_cast<long>(cover.types.size()))
                return makeError("plan.bad_pin", "pin '" + pin + "': no segment type '" + lhs + "' (types T0…T" +
                                                     std::to_string(cover.types.size() - 1) + ")");
            for (size_t i = 0; i < cover.segments.size(); ++i)
                if (cover.segments[i].type == t) segs.push_back(static_cast<int>(i));
        } else {
            char* end = nullptr;
            const long sidx = std::strtol(lhs.c_str(), &end, 10);
            if (!end || *end != '\0' || sidx < 0 || sidx >= static_cast<long>(cover.segments.size()))
                return makeError("plan.bad_pin", "pin '" + pin + "': no segment '" + lhs + "' (segments 0…" +
                                                     std::to_string(cover.segments.size() - 1) + ", or T<k> for a type)");
            segs.push_back(static_cast<int>(sidx));
        }
        std::vector<std::string> parts;
        size_t start = 0;
        // Labels contain commas on multi-axis meshes ("x:rows,y:cols"), so entries are split on ';'
        // when the pin has one, else on ','.
        const char sep = rhs.find(';') != std::string::npos ? ';' : ',';
        while (true) {
            const auto next = rhs.find(sep, start);
            parts.push_back(rhs.substr(start, next == std::string::npos ? std::string::npos : next - start));
            if (next == std::string::npos) break;
            start = next + 1;
        }
        for (int si : segs) {
            const Segment& seg = cover.segments[static_cast<size_t>(si)];
            if (static_cast<int>(parts.size()) != seg.blockCount)
                return makeError("plan.bad_pin", "pin '" + pin + "': segment " + std::to_string(si) + " has " +
                                                     std::to_string(seg.blockCount) + " blocks, the pin gives " +
                                                     std::to_string(parts.size()) + " strategies (use ';' between multi-axis labels)");
            for (int k = 0; k < seg.blockCount; ++k) {
                if (parts[static_cast<size_t>(k)] == "*") continue;
                auto s = strategyOf(seg.firstBlock + k, parts[static_cast<size_t>(k)], pin);
                if (!s) return s.error();
                restrict(seg.firstBlock + k, *s);
            }
        }
    }
    return mask;
}

namespace {

struct Label {
    double t;
    int64_t m;
    int64_t mx;
    int32_t prevState;
    int32_t prevLabel;
    int32_t choice;
};

// Keeps the Pareto-minimal labels (time, memory sum, working set); thins to `cap` by spreading
// over memory. Returns false when thinning dropped a non-dominated label.
bool prune(std::vector<Label>& labels, int cap, bool timeOnly) {
    if (labels.size() <= 1) return true;
    std::sort(labels.begin(), labels.end(), [](const Label& a, const Label& b) {
        if (a.t != b.t) return a.t < b.t;
        if (a.m != b.m) return a.m < b.m;
        return a.mx < b.mx;
    });
    if (timeOnly) {
        labels.resize(1);
        return true;
    }
    std::vector<Label> kept;
    for (const Label& l : labels) {
        bool dominated = false;
        for (const Label& k : kept)
            if (k.m <= l.m && k.mx <= l.mx) {
                dominated = true;
                break;
            }
        if (!dominated) kept.push_back(l);
    }
    bool exact = true;
    if (static_cast<int>(kept.size()) > cap) {
        exact = false;
        // Keep the fastest, the smallest, and evenly spread ones in between (by time order).
        std::vector<Label> thin;
        const size_t n = kept.size();
        for (int i = 0; i < cap; ++i) thin.push_back(kept[static_cast<size_t>(std::llround(static_cast<double>(i) * static_cast<double>(n - 1) / (cap - 1)))]);
        auto smallest = std::min_element(kept.begin(), kept.end(), [](const Label& a, const Label& b) { return a.m + a.mx < b.m + b.mx; });
        thin.back() = *smallest;
        kept = std::move(thin);
    }
    labels = std::move(kept);
    return exact;
}

}  // namespace

Result<SearchResult> PlanProblem::search(int64_t limit, const StrategyMask& allowed, const PlannerOptions& options,
                                         const std::string& meshLabel, int64_t* smallestNeed) const {
    const Impl& P = *m;
    const int B = blockCount();
    // Masks are over the blocks' strategies; every recomputation variant of an allowed one is allowed.
    auto allowedAt = [&](int b, int s) {
        return allowed.empty() || allowed[static_cast<size_t>(b)].empty() ||
               allowed[static_cast<size_t>(b)][static_cast<size_t>(s % P.base(b))];
    };
    for (int b = 0; b < B; ++b) {
        bool any = false;
        for (int s = 0; s < P.strategies(b); ++s) any = any || allowedAt(b, s);
        if (!any) return makeError("plan.bad_pin", "block " + std::to_string(b) + " has no allowed strategy");
    }
    std::vector<int64_t> minRemaining(static_cast<size_t>(B) + 1, 0);
    for (int b = B - 1; b >= 0; --b) {
        int64_t best = std::numeric_limits<int64_t>::max();
        for (int s = 0; s < P.strategies(b); ++s)
            if (allowedAt(b, s)) best = std::min(best, P.unaryMemSum[static_cast<size_t>(b)][static_cast<size_t>(s)]);
        minRemaining[static_cast<size_t>(b)] = minRemaining[static_cast<size_t>(b) + 1] + best;
    }

    // The frontier before and after every block does not depend on the pass: it is laid out once.
    using Classes = Impl::Classes;
    using StepPlan = Impl::StepPlan;
    std::vector<StepPlan> plans;
    CFP_TRY(P.layoutFrontier(P.pairs, B, options.maxStates, meshLabel, plans));
    const std::vector<Classes> noClasses;
    auto classesBefore = [&](int b) -> const std::vector<Classes>& { return b == 0 ? noClasses : plans[static_cast<size_t>(b) - 1].nextClasses; };
    auto countBefore = [&](int b) -> int64_t { return b == 0 ? 1 : plans[static_cast<size_t>(b) - 1].count; };

    // One pass's objective: the time (plus lambda seconds per byte of memory sum, a Lagrangian
    // relaxation of the memory limit), or the memory sum alone under a cap on the working set (for
    // the infeasibility report). Time-only passes keep the best label per state; the Pareto
    // pass keeps the Pareto set (capped by labelCap).
    struct Mode {
        bool timeOnly = true;
        bool memoryObjective = false;
        double lambda = 0;
        int64_t workingCap = std::numeric_limits<int64_t>::max();  // strategies whose working set exceeds it are left out
    };
    // Labels of all states of one position, flat: state x owns labels[offset[x] .. offset[x+1]).
    struct Layer {
        std::vector<uint32_t> offset{0};
        std::vector<Label> labels;
        size_t states() const { return offset.size() - 1; }
    };
    constexpr double kEmpty = std::numeric_limits<double>::infinity();
    // Per-worker scratch of a DP step: time-only passes keep one label per state, the Pareto
    // pass candidates per state.
    struct Scratch {
        std::vector<Label> bestOf;
        std::vector<std::vector<Label>> buckets;
    };
    const int threads = resolveThreads(options.threads);
    std::vector<Scratch> scratch(static_cast<size_t>(threads));
    // `work` counts (state, strategy) steps, to size the Pareto pass (a reused stretch counts as
    // stepping through it); `doneWork` the steps actually taken, to budget the infeasibility report.
    int64_t work = 0, doneWork = 0;
    // A time-only step with at least options.parallelStepWork (state, strategy) pairs splits its
    // states among the worker threads (each keeps its own best label per next state; merged in
    // state order, so the result is the sequential one).
    const int64_t kParallelStepWork = std::max<int64_t>(1, options.parallelStepWork);
    // The DP step over block b: `cur` (labels before b) to `nxt` (labels after b); returns its
    // (state, strategy) pairs. `passengerStates` > 1 (a window's stretch from passenger part 0):
    // only the states with passenger part 0, the first count / passengerStates, are laid out.
    // `worker` ≥ 0: sequential, on that worker's scratch; -1: may split large steps.
    auto step = [&](int b, const Layer& cur, Layer& nxt, const Mode& mode, bool& exact, int64_t passengerStates, int worker) -> int64_t {
        const StepPlan& sp = plans[static_cast<size_t>(b)];
        const std::vector<Classes>& frontierClasses = classesBefore(b);
        const bool timeOnly = mode.timeOnly;
        const int64_t count = sp.count / passengerStates;
        const int db = P.strategies(b);
        const auto& uTime = P.unaryTime[static_cast<size_t>(b)];
        const auto& uSum = P.unaryMemSum[static_cast<size_t>(b)];
        const auto& uMax = P.unaryMemMax[static_cast<size_t>(b)];
        // Per strategy, once per step: whether it is allowed, its own term, and its slot in the
        // next frontier.
        std::vector<int> live;
        std::vector<double> own;
        std::vector<int64_t> slotY, liveSum, liveMax;  // per live strategy: its slot, memory sum, working set
        for (int s = 0; s < db; ++s) {
            const auto su = static_cast<size_t>(s);
            if (!allowedAt(b, s) || uMax[su] > mode.workingCap) continue;
            live.push_back(s);
            own.push_back(mode.memoryObjective ? static_cast<double>(uSum[su])  // exact below 2^53 bytes
                                               : uTime[su] + mode.lambda * static_cast<double>(uSum[su]));
            slotY.push_back(sp.bPos >= 0 ? sp.nextClasses[static_cast<size_t>(sp.bPos)].classOf[su] * sp.stride[static_cast<size_t>(sp.bPos)] : 0);
            liveSum.push_back(uSum[su]);
            liveMax.push_back(uMax[su]);
        }
        // States [x0, x1) into scratch sc.
        const bool allLive = static_cast<int>(live.size()) == db;  // then live[j] == j
        auto relax = [&](int64_t x0, int64_t x1, Scratch& sc, bool& ex) {
            std::vector<int> assign(frontierClasses.size());
            std::vector<const double*> rows(sp.pb.size());
            std::vector<double> terms(live.size());  // per live strategy: own term plus its pair costs
            for (auto x = static_cast<size_t>(x0); x < static_cast<size_t>(x1); ++x) {
                const uint32_t l0 = cur.offset[x], l1 = cur.offset[x + 1];
                if (l0 == l1) continue;
                // Decode x over the current frontier.
                int64_t rest = static_cast<int64_t>(x);
                for (int i = static_cast<int>(frontierClasses.size()) - 1; i >= 0; --i) {
                    const auto& fc = frontierClasses[static_cast<size_t>(i)];
                    const int d = static_cast<int>(fc.representative.size());
                    // The class's representative strategy: every strategy of the class costs the same
                    // with b and with every later block.
                    assign[static_cast<size_t>(i)] = fc.representative[static_cast<size_t>(rest % d)];
                    rest /= d;
                }
                int64_t baseY = 0;
                for (size_t i = 0; i < frontierClasses.size(); ++i)
                    if (const int j = sp.posInNext[i]; j >= 0)
                        baseY += sp.nextClasses[static_cast<size_t>(j)].classOf[static_cast<size_t>(assign[i])] * sp.stride[static_cast<size_t>(j)];
                // The pair cost rows of the frontier's strategies (the memory objective has no pair terms).
                const size_t npb = mode.memoryObjective ? 0 : sp.pb.size();
                for (size_t k = 0; k < npb; ++k)
                    rows[k] = sp.pb[k].second->cost.data() + static_cast<size_t>(assign[static_cast<size_t>(sp.pb[k].first)]) * static_cast<size_t>(db);
                // Summed pair by pair over all strategies (the same order per strategy as one by one).
                std::copy(own.begin(), own.end(), terms.begin());
                for (size_t k = 0; k < npb; ++k) {
                    const double* row = rows[k];
                    if (allLive)
                        for (size_t j = 0; j < terms.size(); ++j) terms[j] += row[j];
                    else
                        for (size_t j = 0; j < terms.size(); ++j) terms[j] += row[static_cast<size_t>(live[j])];
                }
                if (timeOnly && l1 == l0 + 1) {
                    // One label (what a time-only pass keeps per state): the candidate is built
                    // only when it beats the slot.
                    const Label& l = cur.labels[l0];
                    for (size_t j = 0; j < live.size(); ++j) {
                        const double nt = l.t + terms[j];
                        const int64_t nm = l.m + liveSum[j];
                        Label& slot = sc.bestOf[static_cast<size_t>(baseY + slotY[j])];
                        if (nt < slot.t || (nt == slot.t && nm < slot.m))
                            slot = Label{nt, nm, std::max(l.mx, liveMax[j]), static_cast<int32_t>(x), 0, live[j]};
                    }
                    continue;
                }
                for (size_t j = 0; j < live.size(); ++j) {
                    const int s = live[j];
                    const auto su = static_cast<size_t>(s);
                    const double t = terms[j];
                    const int64_t y = baseY + slotY[j];
                    if (timeOnly) {
                        // One label per state: the candidate is built only when it wins.
                        Label& slot = sc.bestOf[static_cast<size_t>(y)];
                        for (uint32_t li = l0; li < l1; ++li) {
                            const Label& l = cur.labels[li];
                            const double nt = l.t + t;
                            const int64_t nm = l.m + uSum[su];
                            if (nt < slot.t || (nt == slot.t && nm < slot.m))
                                slot = Label{nt, nm, std::max(l.mx, uMax[su]), static_cast<int32_t>(x), static_cast<int32_t>(li - l0), s};
                        }
                        continue;
                    }
                    for (uint32_t li = l0; li < l1; ++li) {
                        const Label& l = cur.labels[li];
                        const Label nl{l.t + t, l.m + uSum[su], std::max(l.mx, uMax[su]), static_cast<int32_t>(x), static_cast<int32_t>(li - l0), s};
                        if (limit > 0 && nl.m + minRemaining[static_cast<size_t>(b) + 1] + P.constMemSum + std::max(nl.mx, P.constMemMax) > limit)
                            continue;
                        auto& bucket = sc.buckets[static_cast<size_t>(y)];
                        bucket.push_back(nl);
                        if (static_cast<int>(bucket.size()) > 4 * options.labelCap + 8) ex = prune(bucket, options.labelCap, false) && ex;
                    }
                }
            }
        };
        const int64_t states = static_cast<int64_t>(cur.states());
        const int64_t stepWork = states * static_cast<int64_t>(live.size());
        const int ranges = worker < 0 && timeOnly && stepWork >= kParallelStepWork
                               ? parallelRanges(states, threads, std::max<int64_t>(1, kParallelStepWork / 4 / std::max<size_t>(1, live.size())))
                               : 1;
        Scratch& sc = scratch[static_cast<size_t>(std::max(worker, 0))];
        if (ranges > 1) {
            parallelFor(states, ranges, 1, [&](int64_t x0, int64_t x1, int w) {
                Scratch& mine = scratch[static_cast<size_t>(w)];
                mine.bestOf.assign(static_cast<size_t>(count), Label{kEmpty, 0, 0, -1, -1, -1});
                bool unused = true;
                relax(x0, x1, mine, unused);
            });
            // Later ranges replace a label only when strictly better, as the sequential loop does.
            for (int w = 1; w < ranges; ++w)
                for (size_t y = 0; y < static_cast<size_t>(count); ++y) {
                    const Label& nl = scratch[static_cast<size_t>(w)].bestOf[y];
                    Label& slot = sc.bestOf[y];
                    if (nl.t < slot.t || (nl.t == slot.t && nl.m < slot.m)) slot = nl;
                }
        } else {
            if (timeOnly)
                sc.bestOf.assign(static_cast<size_t>(count), Label{kEmpty, 0, 0, -1, -1, -1});
            else
                sc.buckets.assign(static_cast<size_t>(count), {});
            relax(0, states, sc, exact);
        }
        nxt.offset.assign(static_cast<size_t>(count) + 1, 0);
        nxt.labels.clear();
        for (size_t y = 0; y < static_cast<size_t>(count); ++y) {
            if (timeOnly) {
                if (sc.bestOf[y].t != kEmpty) nxt.labels.push_back(sc.bestOf[y]);
            } else {
                exact = prune(sc.buckets[y], options.labelCap, false) && exact;
                nxt.labels.insert(nxt.labels.end(), sc.buckets[y].begin(), sc.buckets[y].end());
            }
            nxt.offset[y + 1] = static_cast<uint32_t>(nxt.labels.size());
        }
        // Every state with labels contributes each live strategy (labels counted once per state).
        int64_t done = 0;
        for (size_t x = 0; x < cur.states(); ++x)
            if (cur.offset[x] < cur.offset[x + 1]) done += static_cast<int64_t>(live.size());
        return done;
    };

    // Repeated segments (a transformer's layers) make the same DP step recur every `length`
    // blocks. A window is a run of `repeats` consecutive stretches of `length` blocks whose steps
    // are identical (same frontier classes before and after, strategy counts, masks, unary terms
    // and pair cost tables, position by position), so each stretch maps the labels at its start to
    // those at its end by the same function. Its leading frontier positions that no step of the
    // stretch reads or changes (`passengers`: a tied embedding waiting for the LM head) carry
    // through unchanged, so a state is (passenger part, local part) and a time-only pass needs the
    // stretch's effect only as a min-plus matrix from local state to local state: computed once
    // per pass (one DP over the stretch per local start state) and applied `repeats` times. The
    // result is the same DP (time ties are broken by memory sum as in a plain step; sums may be
    // added in another order). The Pareto pass steps block by block.
    struct Window {
        int start = 0, length = 0, repeats = 0;
        int64_t passengerStates = 1, local = 1;  // states before the window = passengerStates × local
        int64_t localEnd = 1;                    // local states after a stretch (its matrix is local × localEnd)
        int64_t plainWork = 0;                   // a plain pass's work over one stretch (for `work`)
    };
    std::vector<Window> windows;
    if (options.reuseRepeats) {
        auto sameClasses = [](const Classes& x, const Classes& y) { return x.classOf == y.classOf && x.representative == y.representative; };
        auto sameClassList = [&](const std::vector<Classes>& x, const std::vector<Classes>& y) {
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i)
                if (!sameClasses(x[i], y[i])) return false;
            return true;
        };
        // Block c's step is block b's step.
        auto sameStep = [&](int b, int c) {
            const auto bu = static_cast<size_t>(b), cu = static_cast<size_t>(c);
            if (P.strategies(b) != P.strategies(c)) return false;
            for (int s = 0; s < P.strategies(b); ++s)
                if (allowedAt(b, s) != allowedAt(c, s)) return false;
            if (P.unaryTime[bu] != P.unaryTime[cu] || P.unaryMemSum[bu] != P.unaryMemSum[cu] || P.unaryMemMax[bu] != P.unaryMemMax[cu])
                return false;
            const StepPlan& x = plans[bu];
            const StepPlan& y = plans[cu];
            if (x.posInNext != y.posInNext || x.bPos != y.bPos || x.count != y.count || x.pb.size() != y.pb.size()) return false;
            if (!sameClassList(classesBefore(b), classesBefore(c)) || !sameClassList(x.nextClasses, y.nextClasses)) return false;
            for (size_t i = 0; i < x.pb.size(); ++i)
                if (x.pb[i].first != y.pb[i].first || x.pb[i].second->cost != y.pb[i].second->cost) return false;
            return true;
        };
        // Leading frontier positions before `start` that no step of [start, start + length) reads or changes.
        auto passengersOf = [&](int start, int length) {
            size_t np = classesBefore(start).size();
            for (int b = start; b < start + length; ++b) {
                const StepPlan& sp = plans[static_cast<size_t>(b)];
                const auto& before = classesBefore(b);
                size_t k = 0;
                while (k < np && k < before.size() && sp.posInNext[k] == static_cast<int>(k) && sameClasses(before[k], sp.nextClasses[k])) ++k;
                np = k;
                for (const auto& [i, p] : sp.pb) np = std::min(np, static_cast<size_t>(i));
            }
            return np;
        };
        int nextFree = 1;
        for (const RepeatRun& run : repeatRuns(P.analysis.cover)) {
            const int length = P.analysis.cover.segments[static_cast<size_t>(run.firstSegment)].blockCount;
            if (run.count < 4 || length < 1) continue;
            const int runEnd = run.firstBlock + run.count * length;
            // The start whose local state count is smallest (then the earliest), among the first two segments.
            int pos = std::max(nextFree, run.firstBlock);
            int failures = 0;  // a pinned or otherwise different segment ends a window; two in a row end the run
            while (failures < 2 && pos + 3 * length <= std::min(B, runEnd + length)) {
                std::optional<Window> best;
                for (int start = pos; start < pos + length && start + 3 * length <= B; ++start) {
                    Window w{start, length, 1, 1, 1, 1, 0};
                    while (start + (w.repeats + 1) * length <= B) {
                        bool same = true;
                        for (int j = 0; j < length && same; ++j) same = sameStep(start + j, start + w.repeats * length + j);
                        if (!same) break;
                        ++w.repeats;
                    }
                    const size_t np = passengersOf(start, length);
                    const auto& before = classesBefore(start);
                    for (size_t i = 0; i < np; ++i) w.passengerStates *= static_cast<int64_t>(before[i].representative.size());
                    w.local = countBefore(start) / w.passengerStates;
                    w.localEnd = plans[static_cast<size_t>(start + length - 1)].count / w.passengerStates;
                    for (int b = start; b < start + length; ++b) {
                        int allowedCount = 0;
                        for (int s = 0; s < P.strategies(b); ++s) allowedCount += allowedAt(b, s) ? 1 : 0;
                        w.plainWork += countBefore(b) * allowedCount;
                    }
                    // The matrix costs at most `local` DPs over the stretch without passengers, that
                    // is local / passengerStates plain stretches; reuse must save more than that.
                    // The matrix holds local² labels: at most 2^20 of them.
                    if (w.repeats < 3 || w.local >= (w.repeats - 1) * w.passengerStates || w.local > 1024) continue;
                    if (!best || w.local < best->local || (w.local == best->local && w.repeats > best->repeats)) best = w;
                }
                if (!best) {
                    pos += length;
                    ++failures;
                    continue;
                }
                failures = 0;
                windows.push_back(*best);
                pos = best->start + best->repeats * best->length;
            }
            nextFree = std::max(nextFree, pos);
        }
    }
    std::vector<const Window*> windowAt(static_cast<size_t>(B), nullptr);
    for (const Window& w : windows) windowAt[static_cast<size_t>(w.start)] = &w;

    // Time-only DP over one stretch of window w from local start state x (passenger part 0, so
    // only the local states are laid out); the layers before each block and after the last, when
    // `layers` is given.
    // `done` gets the steps taken (for doneWork; a reused stretch counts as plainWork per repeat
    // in `work`). Sequential, on `worker`'s scratch.
    auto stretchFrom = [&](const Window& w, int64_t x, const Mode& mode, std::vector<Layer>* layers, int worker, int64_t& done) {
        Layer cur;
        cur.offset.assign(static_cast<size_t>(w.local) + 1, 0);
        for (size_t i = static_cast<size_t>(x) + 1; i < cur.offset.size(); ++i) cur.offset[i] = 1;
        cur.labels.push_back(Label{0.0, 0, 0, -1, -1, -1});
        bool exact = true;
        for (int b = w.start; b < w.start + w.length; ++b) {
            Layer nxt;
            done += step(b, cur, nxt, mode, exact, w.passengerStates, worker);
            if (layers) layers->push_back(std::move(cur));
            cur = std::move(nxt);
        }
        if (layers) layers->push_back(cur);
        return cur;
    };

    auto runPass = [&](const Mode& mode, SearchResult& out) -> Status {
        const bool timeOnly = mode.timeOnly;
        out.reusedBlocks = 0;
        Layer cur;
        cur.labels.push_back(Label{0.0, 0, 0, -1, -1, -1});
        cur.offset.push_back(1);
        std::vector<Layer> steps(static_cast<size_t>(B));
        std::vector<const Window*> stretchEnd(static_cast<size_t>(B), nullptr);  // last block of a reused stretch → its window
        std::vector<int> stretchStart(static_cast<size_t>(B), -1);
        bool exact = true;
        int lastProgress = -1;
        auto report = [&](int b) {
            if (!options.progress || (b - lastProgress < 8 && b != B - 1)) return;
            lastProgress = b;
            PlanProgress pr;
            pr.stage = "search";
            pr.mesh = meshLabel;
            pr.fraction = static_cast<double>(b + 1) / std::max(1, B);
            options.progress(pr);
        };
        for (int b = 0; b < B;) {
            if (options.cancel && options.cancel->load()) return makeError("plan.cancelled", "search cancelled");
            const Window* w = timeOnly ? windowAt[static_cast<size_t>(b)] : nullptr;
            if (!w) {
                Layer nxt;
                const int64_t done = step(b, cur, nxt, mode, exact, 1, -1);
                work += done;
                doneWork += done;
                steps[static_cast<size_t>(b)] = std::move(cur);
                cur = std::move(nxt);
                report(b);
                ++b;
                continue;
            }
            // The stretch's matrix: local start state × local end state.
            const int64_t L = w->local;
            const int64_t Lend = w->localEnd;
            // Its rows are independent: split among the workers.
            std::vector<Label> matrix(static_cast<size_t>(L * Lend), Label{kEmpty, 0, 0, -1, -1, -1});
            std::vector<int64_t> rowWork(static_cast<size_t>(threads), 0);
            parallelFor(L, threads, 1, [&](int64_t x0, int64_t x1, int worker) {
                for (int64_t x = x0; x < x1; ++x) {
                    if (options.cancel && options.cancel->load()) return;
                    const Layer end = stretchFrom(*w, x, mode, nullptr, worker, rowWork[static_cast<size_t>(worker)]);
                    for (int64_t y = 0; y < Lend; ++y)
                        if (end.offset[static_cast<size_t>(y)] < end.offset[static_cast<size_t>(y) + 1])
                            matrix[static_cast<size_t>(x * Lend + y)] = end.labels[end.offset[static_cast<size_t>(y)]];
                }
            });
            if (options.cancel && options.cancel->load()) return makeError("plan.cancelled", "search cancelled");
            for (const int64_t d : rowWork) doneWork += d;
            std::vector<Label> bestAt;  // per local end state, for one passenger value
            for (int k = 0; k < w->repeats; ++k) {
                const int start = w->start + k * w->length, last = start + w->length - 1;
                Layer nxt;
                nxt.offset.assign(static_cast<size_t>(w->passengerStates * Lend) + 1, 0);
                // Min-plus product, row by row of the matrix (every end state still sees the start
                // states in ascending order, so ties go as in a plain step).
                bestAt.resize(static_cast<size_t>(Lend));
                for (int64_t pv = 0; pv < w->passengerStates; ++pv) {
                    std::fill(bestAt.begin(), bestAt.end(), Label{kEmpty, 0, 0, -1, -1, -1});
                    for (int64_t x = 0; x < L; ++x) {
                        const auto s = static_cast<size_t>(pv * L + x);
                        if (cur.offset[s] == cur.offset[s + 1]) continue;
                        const Label& a = cur.labels[cur.offset[s]];
                        const Label* row = matrix.data() + static_cast<size_t>(x * Lend);
                        for (size_t y = 0; y < static_cast<size_t>(Lend); ++y) {
                            const Label& via = row[y];
                            if (via.t == kEmpty) continue;
                            const double t = a.t + via.t;
                            const int64_t m = a.m + via.m;
                            Label& best = bestAt[y];
                            if (t < best.t || (t == best.t && m < best.m))
                                best = Label{t, m, std::max(a.mx, via.mx), static_cast<int32_t>(s), 0, -1};
                        }
                    }
                    for (int64_t y = 0; y < Lend; ++y) {
                        if (bestAt[static_cast<size_t>(y)].t != kEmpty) nxt.labels.push_back(bestAt[static_cast<size_t>(y)]);
                        nxt.offset[static_cast<size_t>(pv * Lend + y) + 1] = static_cast<uint32_t>(nxt.labels.size());
                    }
                }
                steps[static_cast<size_t>(start)] = std::move(cur);
                cur = std::move(nxt);
                stretchEnd[static_cast<size_t>(last)] = w;
                stretchStart[static_cast<size_t>(last)] = start;
                work += w->plainWork;
                out.reusedBlocks += w->length;
                report(last);
            }
            b = w->start + w->repeats * w->length;
        }
        // Final: frontier is empty, one state.
        const Label* best = nullptr;
        int32_t bestIndex = -1;
        if (cur.states() == 1)
            for (uint32_t li = cur.offset[0]; li < cur.offset[1]; ++li) {
                const Label& l = cur.labels[li];
                const int64_t mem = l.m + P.constMemSum + std::max(l.mx, P.constMemMax);
                if (!timeOnly && limit > 0 && mem > limit) continue;
                if (!best || l.t < best->t) {
                    best = &l;
                    bestIndex = static_cast<int32_t>(li - cur.offset[0]);
                }
            }
        if (!best) return makeError("plan.infeasible", "no plan fits");
        out.strategy.assign(static_cast<size_t>(B), 0);
        int32_t state = 0, li = bestIndex;
        const Layer* layer = &cur;
        std::map<std::pair<const Window*, int64_t>, std::vector<Layer>> stretches;  // reused stretches, by start state
        for (int b = B - 1; b >= 0;) {
            const Label& l = layer->labels[layer->offset[static_cast<size_t>(state)] + static_cast<uint32_t>(li)];
            if (const Window* w = stretchEnd[static_cast<size_t>(b)]) {
                // Replay the stretch from its local start state and trace it back from the local end state.
                const int start = stretchStart[static_cast<size_t>(b)];
                const int64_t Lend = w->localEnd;
                const int64_t x = l.prevState % w->local;
                auto it = stretches.find({w, x});
                if (it == stretches.end()) {
                    std::vector<Layer> layers;
                    int64_t done = 0;
                    stretchFrom(*w, x, mode, &layers, 0, done);
                    it = stretches.emplace(std::make_pair(w, x), std::move(layers)).first;
                }
                const std::vector<Layer>& layers = it->second;
                int32_t s = static_cast<int32_t>(state % Lend), sl = 0;
                for (int j = w->length - 1; j >= 0; --j) {
                    const Layer& after = layers[static_cast<size_t>(j) + 1];
                    const Label& il = after.labels[after.offset[static_cast<size_t>(s)] + static_cast<uint32_t>(sl)];
                    out.strategy[static_cast<size_t>(start + j)] = il.choice;
                    s = il.prevState;
                    sl = il.prevLabel;
                }
                state = l.prevState;
                li = l.prevLabel;
                layer = &steps[static_cast<size_t>(start)];
                b = start - 1;
                continue;
            }
            out.strategy[static_cast<size_t>(b)] = l.choice;
            state = l.prevState;
            li = l.prevLabel;
            layer = &steps[static_cast<size_t>(b)];
            --b;
        }
        out.objectiveSeconds = best->t + P.constTime;
        out.memoryBytes = best->m + P.constMemSum + std::max(best->mx, P.constMemMax);
        out.exact = exact;
        return {};
    };

    int passes = 0;
    auto run = [&](const Mode& mode, SearchResult& out) -> Status {
        ++passes;
        return runPass(mode, out);
    };
    auto done = [&](SearchResult r) {
        r.passes = passes;
        return r;
    };
    SearchResult fastest;
    CFP_TRY(run(Mode{}, fastest));
    if (limit <= 0 || fastest.memoryBytes <= limit) return done(fastest);
    const int64_t timeOnlyWork = work;
    // The least memory sum: every plan needs at least that plus the largest of the blocks' least
    // working sets, so when that exceeds the limit nothing fits and no constrained search runs.
    SearchResult leanest;
    const int64_t doneBefore = doneWork;
    CFP_TRY(run(Mode{true, true, 0}, leanest));
    const int64_t memoryPassWork = std::max<int64_t>(1, doneWork - doneBefore);
    auto sumAndMax = [&](const std::vector<int32_t>& st) {
        int64_t sum = P.constMemSum, mx = P.constMemMax;
        for (int b = 0; b < B; ++b) {
            sum += P.unaryMemSum[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])];
            mx = std::max(mx, P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])]);
        }
        return std::pair{sum, mx};
    };
    const auto [leanSum, leanMax] = sumAndMax(leanest.strategy);
    int64_t leastMax = P.constMemMax;
    for (int b = 0; b < B; ++b) {
        int64_t least = std::numeric_limits<int64_t>::max();
        for (int s = 0; s < P.strategies(b); ++s)
            if (allowedAt(b, s)) least = std::min(least, P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)]);
        leastMax = std::max(leastMax, least);
    }
    // The Lagrangian plan usually leaves memory unused (it trades time for memory at one price
    // everywhere). Greedy: single-block changes (strategy or recomputation) that make the step
    // faster and still fit, the most time saved per byte first (a change that also saves
    // memory first of all), until none is left.
    auto fillSlack = [&](SearchResult& r) {
        std::vector<std::vector<const Impl::Pair*>> touching(static_cast<size_t>(B));
        for (const auto& p : P.pairs) {
            touching[static_cast<size_t>(p.a)].push_back(&p);
            touching[static_cast<size_t>(p.b)].push_back(&p);
        }
        std::vector<int32_t>& st = r.strategy;
        auto uMaxOf = [&](int b) { return P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])]; };
        int64_t sum = P.constMemSum;
        for (int b = 0; b < B; ++b) sum += P.unaryMemSum[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])];
        // Time change of every single-block change at the current strategies, kept up to date:
        // a change of block b alters only b's row and its pair partners' rows.
        std::vector<std::vector<double>> dtOf(static_cast<size_t>(B));
        auto computeDt = [&](int b) {
            const auto bu = static_cast<size_t>(b);
            const int cur = st[bu];
            auto& row = dtOf[bu];
            row.assign(static_cast<size_t>(P.strategies(b)), 0.0);
            for (int c = 0; c < P.strategies(b); ++c) {
                const auto cu = static_cast<size_t>(c);
                double dt = P.unaryTime[bu][cu] - P.unaryTime[bu][static_cast<size_t>(cur)];
                for (const Impl::Pair* p : touching[bu]) {
                    const auto db = static_cast<size_t>(P.strategies(p->b));
                    const auto sa = static_cast<size_t>(st[static_cast<size_t>(p->a)]), sb = static_cast<size_t>(st[static_cast<size_t>(p->b)]);
                    dt += p->a == b ? p->cost[cu * db + sb] - p->cost[sa * db + sb] : p->cost[sa * db + cu] - p->cost[sa * db + sb];
                }
                row[cu] = dt;
            }
        };
        for (int b = 0; b < B; ++b) computeDt(b);
        // Each round scans every single-block change: at most 4·B rounds and 2^27 changes looked at.
        int64_t looked = 0;
        for (int iteration = 0; iteration < 4 * B && looked < (int64_t{1} << 27); ++iteration) {
            // The two largest working sets, to know the largest without any one block.
            int top = -1;
            int64_t max1 = P.constMemMax, max2 = P.constMemMax;
            for (int b = 0; b < B; ++b) {
                const int64_t v = uMaxOf(b);
                if (v > max1) {
                    max2 = max1;
                    max1 = v;
                    top = b;
                } else if (v > max2) {
                    max2 = v;
                }
            }
            const int64_t mem = sum + max1;
            double bestScore = 0, bestGain = 0;
            int bestBlock = -1, bestChoice = -1;
            for (int b = 0; b < B; ++b) {
                const auto bu = static_cast<size_t>(b);
                const int cur = st[bu];
                const int64_t othersMax = b == top ? max2 : max1;
                looked += P.strategies(b);
                for (int c = 0; c < P.strategies(b); ++c) {
                    if (c == cur || !allowedAt(b, c)) continue;
                    const auto cu = static_cast<size_t>(c);
                    const int64_t newMem = sum - P.unaryMemSum[bu][static_cast<size_t>(cur)] + P.unaryMemSum[bu][cu] +
                                           std::max(othersMax, P.unaryMemMax[bu][cu]);
                    if (newMem > limit) continue;
                    const double gain = -dtOf[bu][cu];
                    if (gain <= 1e-12 * std::max(1e-9, r.objectiveSeconds)) continue;
                    const int64_t dm = newMem - mem;
                    const double score = dm <= 0 ? std::numeric_limits<double>::infinity() : gain / static_cast<double>(dm);
                    if (score > bestScore || (score == bestScore && gain > bestGain)) {
                        bestScore = score;
                        bestGain = gain;
                        bestBlock = b;
                        bestChoice = c;
                    }
                }
            }
            if (bestBlock < 0) break;
            const auto bu = static_cast<size_t>(bestBlock);
            sum += P.unaryMemSum[bu][static_cast<size_t>(bestChoice)] - P.unaryMemSum[bu][static_cast<size_t>(st[bu])];
            st[bu] = bestChoice;
            computeDt(bestBlock);
            for (const Impl::Pair* p : touching[bu]) computeDt(p->a == bestBlock ? p->b : p->a);
        }
        r.objectiveSeconds = objective(st);
        r.memoryBytes = memory(st);
    };
    if (leanSum + leastMax <= limit) {
        // Under the limit. Small problems: the exact Pareto pass. Large ones (its cost would be about
        // labelCap times the fastest pass's): a Lagrangian search — time-only passes that charge
        // lambda seconds per byte of memory, lambda bisected to the smallest that fits — whose plan
        // fits but is not proven optimal.
        if (timeOnlyWork * options.labelCap <= options.paretoWorkLimit) {
            SearchResult constrained;
            auto st = run(Mode{false, false, 0}, constrained);
            if (st) return done(constrained);
            if (st.error().code != "plan.infeasible") return st.error();
        } else {
            std::optional<SearchResult> best;
            SearchResult last;  // the last pass's plan
            auto lagrangian = [&](double lambda) -> Result<bool> {
                CFP_TRY(run(Mode{true, false, lambda}, last));
                last.objectiveSeconds = objective(last.strategy);
                last.memoryBytes = memory(last.strategy);
                last.exact = false;
                const bool fits = last.memoryBytes <= limit;
                if (fits && (!best || last.objectiveSeconds < best->objectiveSeconds)) best = last;
                return fits;
            };
            if (leanSum + leanMax <= limit) {
                // The least-memory plan fits: it and the fastest plan are the two ends of the lower
                // convex hull of (memory sum, time) over all plans, the plans a Lagrangian pass can
                // return. Walk the hull towards the limit: lambda = the slope between the nearest
                // known plan that does not fit (a) and the nearest that fits (c); the pass at that
                // price returns a hull plan strictly below the line a–c, which replaces a or c, or
                // nothing new (its value equals the line's): then a and c are adjacent on the hull.
                // Each pass finds a new hull plan, so the walk ends; the fastest plan that fits is kept.
                SearchResult lean = leanest;
                lean.objectiveSeconds = objective(lean.strategy);
                lean.memoryBytes = leanSum + leanMax;
                lean.exact = false;
                best = lean;
                double ta = fastest.objectiveSeconds, tc = lean.objectiveSeconds;
                int64_t sa = sumAndMax(fastest.strategy).first, sc = leanSum;
                for (int i = 0; i < options.lagrangeSteps && sa > sc; ++i) {
                    const double lambda = (tc - ta) / static_cast<double>(sa - sc);
                    if (!(lambda > 0)) break;
                    auto fits = lagrangian(lambda);
                    if (!fits) return fits.error();
                    const double t = last.objectiveSeconds;
                    const int64_t sum = sumAndMax(last.strategy).first;
                    const double line = ta + lambda * static_cast<double>(sa);
                    if (t + lambda * static_cast<double>(sum) >= line - 1e-9 * std::abs(line)) break;
                    (*fits ? tc : ta) = t;
                    (*fits ? sc : sa) = sum;
                }
                fillSlack(*best);
                return done(*best);
            }
            // Otherwise (only plans with a smaller working set fit, if any): a first lambda that
            // fits, 1 ms per GiB, then ×8 until one fits or memory stops paying (two raises in a row
            // without less memory); then lambda bisected (geometrically) lagrangeSteps times.
            double lo = 0, hi = 1e-3 / (1024.0 * 1024.0 * 1024.0);
            bool found = false;
            int64_t lastMemory = std::numeric_limits<int64_t>::max();
            for (int i = 0, stalled = 0; i < 16 && !found && stalled < 2; ++i) {
                auto f = lagrangian(hi);
                if (!f) return f.error();
                found = *f;
                if (!found) {
                    lo = hi;
                    hi *= 8;
                    stalled = last.memoryBytes < lastMemory ? 0 : stalled + 1;
                    lastMemory = std::min(lastMemory, last.memoryBytes);
                }
            }
            if (found)
                for (int i = 0; i < options.lagrangeSteps; ++i) {
                    const double mid = lo > 0 ? std::sqrt(lo * hi) : hi / 8;
                    auto fits = lagrangian(mid);
                    if (!fits) return fits.error();
                    (*fits ? hi : lo) = mid;
                }
            if (best) {
                fillSlack(*best);
                return done(*best);
            }
        }
    }
    // Nothing fits: find the least memory any plan needs. Memory is a sum plus the largest working
    // set: the least sum's plan, or one with a smaller working set and a larger sum, found by DPs on
    // the sum under caps on the working set below the least sum plan's. Exact when every distinct
    // working-set size below it is a cap; the caps are budgeted by the memory pass's work (2^27
    // steps, at least 2 and at most 64 passes), sampled evenly when there are more.
    std::vector<int64_t> caps;
    for (int b = 0; b < B; ++b)
        for (int s = 0; s < P.strategies(b); ++s)
            if (const int64_t v = P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)]; allowedAt(b, s) && v < leanMax) caps.push_back(v);
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    const auto budget = static_cast<size_t>(std::clamp<int64_t>((int64_t{1} << 27) / memoryPassWork, 2, 64));
    std::vector<int64_t> sampled;
    const size_t kCaps = caps.size() <= budget ? caps.size() : std::min<size_t>(budget, 12);
    for (size_t i = 0; i < kCaps; ++i) sampled.push_back(caps[caps.size() - 1 - i * (caps.size() - 1) / std::max<size_t>(1, kCaps - 1)]);
    SearchResult smallest = leanest;
    int64_t need = leanSum + leanMax;
    for (const int64_t cap : sampled) {
        SearchResult r;
        Mode mode{true, true, 0};
        mode.workingCap = cap;
        auto st = run(mode, r);
        if (!st) {
            if (st.error().code != "plan.infeasible") return st.error();
            continue;  // some block has no strategy within the cap
        }
        if (const int64_t m = memory(r.strategy); m < need) {
            need = m;
            smallest = std::move(r);
        }
    }
    if (need <= limit) {  // a capped least-memory plan fits where the searches above found none
        smallest.objectiveSeconds = objective(smallest.strategy);
        smallest.memoryBytes = need;
        smallest.exact = false;
        fillSlack(smallest);
        return done(smallest);
    }
    if (smallestNeed) *smallestNeed = need;
    const MemoryBreakdown mb = memoryBreakdown(smallest.strategy);
    return makeError("plan.infeasible", "no plan on mesh " + meshLabel + " fits in " + gib(limit) +
                                            " per device: the smallest needs " + gib(need) + " (" + gib(need - limit) +
                                            " short: weights " + gib(mb.weights) + ", gradients " + gib(mb.gradients) +
                                            ", optimizer " + gib(mb.optimizer) + ", activations " + gib(mb.activations) +
                                            ", largest op " + gib(mb.transient) +
                                            "); use more devices, a larger memory limit, or a smaller batch");
}

void PlanProblem::fillPlan(const std::vector<int32_t>& strategy, const StrategyMask& pinned, Plan& plan) const {
    const Impl& P = *m;
    const Graph& graph = *P.g;
    const Mesh& mesh = P.model().mesh();
    plan.mesh = mesh;
    plan.blocks.clear();
    for (int b = 0; b < blockCount(); ++b) {
        const auto& blk = P.analysis.blocks.blocks[static_cast<size_t>(b)];
        const int s = strategy[static_cast<size_t>(b)];
        bool isPinned = false;
        if (!pinned.empty() && !pinned[static_cast<size_t>(b)].empty()) {
            int allowed = 0;
            for (char c : pinned[static_cast<size_t>(b)]) allowed += c != 0;
            isPinned = allowed == 1;
        }
        const int sb = s % P.base(b);
        plan.blocks.push_back({b, sb, blk.strategies[static_cast<size_t>(sb)].label, isPinned, P.recomputes(b, s)});
    }
    plan.policy = P.policy;
    // Few distinct shardings recur across the graph: each worker spells each out once. Ops in
    // contiguous ranges, one per worker (fromCompact is a pure function: the same plan whatever
    // the thread count).
    struct CompactHash {
        size_t operator()(const CompactSharding& c) const { return c.hash(); }
    };
    const auto n = static_cast<int64_t>(graph.size());
    plan.tensors.clear();
    plan.tensors.resize(static_cast<size_t>(n));
    parallelFor(n, P.threads, 4096, [&](int64_t i0, int64_t i1, int) {
        std::unordered_map<CompactSharding, TensorSharding, CompactHash> spelled;
        auto text = [&](const CompactSharding& c) -> const TensorSharding& {
            auto it = spelled.find(c);
            if (it == spelled.end()) it = spelled.emplace(c, fromCompact(c, mesh)).first;
            return it->second;
        };
        for (int64_t i = i0; i < i1; ++i) {
            const Op& op = graph.op(static_cast<OpId>(i));
            const int32_t o = P.owner[static_cast<size_t>(op.id)];
            const int s = o < 0 ? 0 : strategy[static_cast<size_t>(o)] % P.base(o);
            const OpState& os = P.st(op.id, s);
            TensorPlan& t = plan.tensors[static_cast<size_t>(i)];
            t.op = op.id;
            t.block = o;
            t.recompute = o >= 0 && P.rcEligible[static_cast<size_t>(op.id)] && P.recomputes(o, strategy[static_cast<size_t>(o)]);
            t.result = text(os.result);
            t.operands.reserve(op.operands.size());
            for (size_t k = 0; k < op.operands.size(); ++k) t.operands.push_back(text(P.need(op.id, s, k)));
            for (int a = 0; a < P.model().sizes().rank; ++a)
                if (os.partialMask & (1u << a)) t.ownCollectiveAxes.push_back(mesh.axes()[static_cast<size_t>(a)].name);
        }
    });
    plan.segments.clear();
    for (size_t si = 0; si < P.analysis.cover.segments.size(); ++si) {
        const Segment& seg = P.analysis.cover.segments[si];
        SegmentPlan sp;
        sp.index = static_cast<int32_t>(si);
        sp.type = seg.type;
        sp.firstBlock = seg.firstBlock;
        sp.blockCount = seg.blockCount;
        for (int b = seg.firstBlock; b < seg.firstBlock + seg.blockCount; ++b)
            sp.combination.push_back(strategy[static_cast<size_t>(b)] % P.base(b));
        plan.segments.push_back(std::move(sp));
    }
}

std::vector<std::string> autoMeshes(int64_t devices, int64_t gpusPerNode) {
    std::vector<std::vector<int64_t>> shapes;
    if (devices <= 1) {
        shapes.push_back({1});
    } else {
        shapes.push_back({devices});
        for (int64_t a = 2; a < devices; ++a) {
            if (devices % a) continue;
            shapes.push_back({a, devices / a});
        }
        for (int64_t a = 2; a < devices; ++a) {
            if (devices % a) continue;
            for (int64_t b = 2; b < devices / a; ++b) {
                if ((devices / a) % b) continue;
                const int64_t c = devices / a / b;
                if (c >= 2) shapes.push_back({a, b, c});
            }
        }
    }
    std::vector<std::string> out;
    for (const auto& s : shapes) {
        std::string text;
        for (size_t i = 0; i < s.size(); ++i) text += (i ? "x" : "") + std::to_string(s[i]);
        auto mesh = parseMesh(text, devices);
        if (!mesh) continue;
        if (!assignLinkClasses(*mesh, gpusPerNode)) continue;
        out.push_back(text);
    }
    return out;
}

namespace {

// Baseline restriction: the entry dot's lhs split on dim 0 over exactly `batchAxes` (mesh order)
// and, when `weightAxis` is set, its rhs split over that axis (on any dim), otherwise replicated.
StrategyMask baselineMask(const PlanProblem& problem, const std::vector<std::string>& batchAxes,
                          const std::string& weightAxis, std::string& note) {
    const auto& blocks = problem.analysis().blocks.blocks;
    StrategyMask mask(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
        mask[b].assign(blocks[b].strategies.size(), 0);
        bool any = false;
        for (size_t s = 0; s < blocks[b].strategies.size(); ++s) {
            const auto& ops = blocks[b].strategies[s].entryOperands;
            if (ops.size() < 2 || ops[0].rank() < 1) continue;
            bool ok = ops[0].dimAxes(0) == batchAxes && !ops[0].isPartial();
            for (int64_t d = 1; d < ops[0].rank() && ok; ++d)
                for (const auto& a : ops[0].dimAxes(d))
                    if (weightAxis.empty() || a != weightAxis) ok = false;
            // The other operand: split over the weight axis (Megatron), or replicated, or — for a
            // batched matmul such as attention — split like the lhs on its leading batch dim.
            bool weightSplit = false;
            for (int64_t d = 0; d < ops[1].rank(); ++d)
                for (const auto& a : ops[1].dimAxes(d)) {
                    if (a == weightAxis) weightSplit = true;
                    else if (!(d == 0 && ops[1].dimAxes(0) == batchAxes && !batchAxes.empty())) ok = false;
                }
            if (!weightAxis.empty() && !weightSplit) ok = false;
            if (ok) {
                mask[b][s] = 1;
                any = true;
            }
        }
        if (!any && !weightAxis.empty()) {
            // Blocks without a weight to split (e.g. no weight operand) keep batch-only strategies.
            std::string ignored;
            auto batchOnly = baselineMask(problem, batchAxes, {}, ignored);
            if (!batchOnly.empty() && !batchOnly[b].empty()) {
                mask[b] = batchOnly[b];
                any = std::any_of(mask[b].begin(), mask[b].end(), [](char c) { return c != 0; });
            }
        }
        if (!any) {
            note = "block " + std::to_string(b) + " has no such strategy (its batch dimension cannot be split that way)";
            return {};
        }
    }
    return mask;
}

}  // namespace

Result<AnalysisReport> planningAnalysis(const Graph& graph, const Mesh& mesh, const PlannerOptions& options) {
    AnalysisOptions analysisOptions;
    analysisOptions.threads = options.threads;
    analysisOptions.check = options.checkBlocks;
    analysisOptions.searchSpace = options.checkBlocks;
    auto analysis = analyzeGraph(graph, mesh, analysisOptions);
    if (!analysis) return analysis.error();
    if (analysis->check.checked && !analysis->check.pass)
        return makeError("analysis.check", "the independent block check failed on mesh " + mesh.toString() + ": " +
                                               analysis->check.firstViolation);
    return analysis;
}

namespace {

struct MeshPlan {
    std::optional<PlanProblem> problem;
    SearchResult result;
    StrategyMask mask;
};

// failFast: check the frontier of the first segments before building the whole graph's cost
// tables, so that a mesh whose frontier is too large is skipped quickly (worth it when several
// meshes are tried; with one, the search's own layout reports the same plan.too_large).
Result<MeshPlan> planOnMesh(const Graph& graph, const Cluster& cluster, const Mesh& mesh, const PlannerOptions& options,
                            int64_t limit, const std::function<Result<StrategyMask>(const PlanProblem&)>& restrict,
                            bool failFast, int64_t* smallestNeed = nullptr) {
    auto analysis = planningAnalysis(graph, mesh, options);
    if (!analysis) return analysis.error();
    auto model = CostModel::create(cluster.hardware, mesh);
    if (!model) return model.error();
    model->setCalibration(options.calibration);
    auto problem = PlanProblem::build(graph, std::move(*analysis), *model, options.measured, options.policy, failFast ? options.maxStates : 0,
                                      mesh.toString(), options.threads);
    if (!problem) return problem.error();
    MeshPlan mp;
    auto mask = restrict(*problem);
    if (!mask) return mask.error();
    mp.mask = *mask;
    auto r = problem->search(limit, mp.mask, options, mesh.toString(), smallestNeed);
    if (!r) return r.error();
    mp.result = *r;
    mp.problem = std::move(*problem);
    return mp;
}

}  // namespace

Result<PlanOutcome> planGraph(const Graph& graph, const Cluster& cluster, const std::string& meshText,
                              const PlannerOptions& options) {
    const auto start = Clock::now();
    const int64_t devices = cluster.devices();
    const int64_t limit = options.memoryLimitBytes > 0 ? options.memoryLimitBytes : cluster.hardware.memoryBytes;
    std::vector<std::string> meshes;
    if (meshText.empty() || meshText == "auto") {
        meshes = autoMeshes(devices, cluster.hardware.gpusPerNode);
        if (meshes.empty()) return makeError("plan.bad_mesh", "no mesh of " + std::to_string(devices) + " devices aligns with nodes of " +
                                                                  std::to_string(cluster.hardware.gpusPerNode) + " GPUs");
    } else {
        meshes = {meshText};
    }
    PlanOutcome out;
    std::optional<MeshPlan> best;
    Error lastError = makeError("plan.infeasible", "no mesh was planned");
    std::optional<Error> closest;  // the infeasible mesh with the smallest need
    int64_t closestNeed = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < meshes.size(); ++i) {
        const auto t0 = Clock::now();
        MeshCandidate cand;
        auto parsed = parseMesh(meshes[i], devices);
        if (!parsed) return parsed.error().withContext("--mesh");
        auto mesh = assignLinkClasses(*parsed, cluster.hardware.gpusPerNode);
        if (!mesh) return mesh.error().withContext("--mesh");
        cand.mesh = mesh->toString();
        if (options.progress) {
            PlanProgress pr;
            pr.stage = "analysis";
            pr.mesh = cand.mesh;
            pr.meshIndex = static_cast<int>(i);
            pr.meshCount = static_cast<int>(meshes.size());
            pr.bestSeconds = best ? best->result.objectiveSeconds : 0.0;
            options.progress(pr);
        }
        int64_t need = 0;
        auto mp = planOnMesh(graph, cluster, *mesh, options, limit,
                             [&](const PlanProblem& p) { return p.applyPins(options.pins); }, meshes.size() > 1, &need);
        cand.seconds = since(t0);
        if (!mp) {
            if (mp.error().code == "plan.cancelled" || mp.error().code == "plan.bad_pin" || meshes.size() == 1) return mp.error();
            cand.note = mp.error().message;
            lastError = mp.error();
            if (mp.error().code == "plan.infeasible" && need > 0 && need < closestNeed) {
                closestNeed = need;
                closest = mp.error();
            }
            out.candidates.push_back(cand);
            continue;
        }
        cand.planned = true;
        cand.stepSeconds = mp->result.objectiveSeconds;
        cand.memoryBytes = mp->result.memoryBytes;
        out.candidates.push_back(cand);
        if (!best || mp->result.objectiveSeconds < best->result.objectiveSeconds) best = std::move(*mp);
    }
    if (!best && closest)
        return makeError(closest->code, "none of the " + std::to_string(meshes.size()) + " meshes tried fits; the closest: " + closest->message,
                         closest->where);
    if (!best) return lastError;

    Plan& plan = out.plan;
    plan.model = graph.name();
    plan.hardware = cluster.hardware.id;
    plan.hardwareName = cluster.hardware.name;
    plan.nodes = cluster.nodes;
    plan.gpusPerNode = cluster.hardware.gpusPerNode;
    plan.memoryLimitBytes = limit;
    plan.pins = options.pins;
    best->problem->fillPlan(best->result.strategy, best->mask, plan);
    plan.predictedStepSeconds = best->result.objectiveSeconds;
    plan.searchExact = best->result.exact;
    auto ev = evaluatePlan(graph, plan, best->problem->model(), options.timeline, options.threads);
    if (!ev) return ev.error().withContext("evaluator");
    plan.step = ev->step;
    plan.evaluatorStepSeconds = ev->step.total();
    plan.memory = ev->memory;
    // Per-segment costs from the evaluator's per-op costs (ops decided by the segment's blocks).
    std::vector<int32_t> segOfBlock(best->problem->analysis().blocks.blocks.size(), -1);
    for (const SegmentPlan& sp : plan.segments)
        for (int b = sp.firstBlock; b < sp.firstBlock + sp.blockCount; ++b) segOfBlock[static_cast<size_t>(b)] = sp.index;
    for (const TensorPlan& t : plan.tensors) {
        if (t.block < 0) continue;
        SegmentPlan& sp = plan.segments[static_cast<size_t>(segOfBlock[static_cast<size_t>(t.block)])];
        const CostBreakdown& c = ev->opCost[static_cast<size_t>(t.op)];
        sp.cost.computeSeconds += c.computeSeconds;
        sp.cost.collectiveSeconds += c.collectiveSeconds;
        sp.cost.reshardSeconds += c.reshardSeconds;
        if (c.provenance != Provenance::Modelled) sp.cost.provenance = Provenance::Mixed;
        const Op& op = graph.op(t.op);
        int64_t split = 1;
        for (const auto& axes : t.result.dims())
            for (const auto& a : axes) split *= plan.mesh.axisSize(a).value_or(1);
        const int64_t own = op.type.bytes() / split;
        if (op.kind == OpKind::Parameter) {
            int64_t replicas = 1;
            for (const auto& axis : plan.mesh.axes())
                if (t.result.use(axis.name).kind != AxisUse::Kind::Dim) replicas *= axis.size;
            if (op.role == ParamRole::Trainable) sp.memoryBytes += 2 * own;
            else if (op.role == ParamRole::OptimizerState && plan.policy.optimizerSharding) sp.memoryBytes += (own + replicas - 1) / replicas;
            else sp.memoryBytes += own;
        }
    }
    out.evaluation = std::move(*ev);

    if (options.baselines) {
        if (options.progress) {
            PlanProgress pr;
            pr.stage = "baselines";
            pr.fraction = 0;
            options.progress(pr);
        }
        struct BaselineSpec {
            std::string name, description, meshSpec;
            std::vector<std::string> batchAxes;
            std::string weightAxis;
        };
        // One baseline, planned on its own mesh: its report entry.
        auto runBaseline = [&](const BaselineSpec& spec) -> Baseline {
            Baseline bl;
            bl.name = spec.name;
            bl.description = spec.description;
            auto parsed = parseMesh(spec.meshSpec, devices);
            auto mesh = parsed ? assignLinkClasses(*parsed, cluster.hardware.gpusPerNode) : Result<Mesh>(parsed.error());
            if (!mesh) {
                bl.note = mesh.error().message;
                return bl;
            }
            std::string note;
            PlannerOptions quiet = options;
            quiet.progress = nullptr;
            auto mp = planOnMesh(graph, cluster, *mesh, quiet, 0, [&](const PlanProblem& p) -> Result<StrategyMask> {
                auto mask = baselineMask(p, spec.batchAxes, spec.weightAxis, note);
                if (mask.empty()) return makeError("plan.baseline", note);
                return mask;
            }, false);
            if (!mp) {
                bl.note = mp.error().message;
                return bl;
            }
            Plan bp;
            mp->problem->fillPlan(mp->result.strategy, {}, bp);
            auto bev = evaluatePlan(graph, bp, mp->problem->model(), false, options.threads);
            if (!bev) {
                bl.note = bev.error().message;
                return bl;
            }
            bl.feasible = true;
            bl.stepSeconds = bev->step.total();
            bl.memory = bev->memory;
            bl.fits = bev->memory.total() <= limit;
            if (!bl.fits)
                bl.note = "needs " + gib(bev->memory.total()) + " per device, " + gib(bev->memory.total() - limit) + " over the limit of " +
                          gib(limit);
            return bl;
        };
        std::vector<BaselineSpec> specs;
        specs.push_back({"data_parallel", "batch split over all " + std::to_string(devices) + " devices, weights replicated",
                         "dp=" + std::to_string(devices), {"dp"}, ""});
        const int64_t g = std::min(cluster.hardware.gpusPerNode, devices);
        if (cluster.nodes > 1)
            specs.push_back({"megatron",
                             "tensor parallel over the " + std::to_string(g) + " GPUs of a node, data parallel over " +
                                 std::to_string(cluster.nodes) + " nodes",
                             "dp=" + std::to_string(cluster.nodes) + ",tp=" + std::to_string(g), {"dp"}, "tp"});
        else
            specs.push_back({"megatron", "tensor parallel over the " + std::to_string(g) + " GPUs of the node", "tp=" + std::to_string(g), {}, "tp"});
        // The baselines are independent plans: with two or more worker threads they run side by
        // side (each still splits its own large loops), and are reported in the order above.
        std::vector<Baseline> results(specs.size());
        parallelFor(static_cast<int64_t>(specs.size()), resolveThreads(options.threads), 1, [&](int64_t i0, int64_t i1, int) {
            for (auto i = static_cast<size_t>(i0); i < static_cast<size_t>(i1); ++i) results[i] = runBaseline(specs[i]);
        });
        plan.baselines.insert(plan.baselines.end(), results.begin(), results.end());
    }
    plan.searchSeconds = since(start);
    out.problem = std::make_shared<const PlanProblem>(std::move(*best->problem));
    return out;
}

}  // namespace cfp
