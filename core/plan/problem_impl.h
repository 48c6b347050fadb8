#pragma once
// The planner's own view of a PlanProblem (problem.h): the op states and the decomposed cost and
// memory tables that problem.cpp builds and the segment DP (segment_dp.h) and the memory searches
// (memory_search.cpp) read. Not a public header: only core/plan's planner files include it.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "cost/op_cost.h"
#include "plan/problem.h"

namespace cfp {

struct OpOwners;  // plan/op_owners.h

namespace plan_internal {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

inline int64_t ceilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

inline bool isSource(OpKind k) { return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota; }

// "219.62 GiB", or MiB below one GiB (a 1 MiB limit must not print as "0.00 GiB").
inline std::string gib(int64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (std::abs(b) < 1024.0 * 1024.0 * 1024.0)
        std::snprintf(buf, sizeof buf, "%.2f MiB", b / (1024.0 * 1024.0));
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

// plan.infeasible said from a bound: every plan on the mesh needs at least `need` bytes, more than
// `limit` (the build's ProblemOptions::infeasibleAbove, the search's brief infeasibility, mesh auto).
inline Error noPlanFits(const std::string& meshLabel, int64_t limit, int64_t need) {
    return makeError("plan.infeasible", "no plan on mesh " + meshLabel + " fits in " + gib(limit) + " per device (every plan needs at least " +
                                            gib(need) + ")");
}

// One op under one strategy of the block that decides it.
struct OpState {
    CompactSharding result;   // as passed on (no partial)
    FactorAssignment factors;
    uint32_t partialMask = 0; // axes of the own all-reduce
    bool measured = false;
    uint16_t spSplit = 1;     // sequence parallelism's split of its kernel (cost/op_cost.h)
    double kernel = 0;        // kernel seconds
    double own = 0;           // own all-reduce seconds
    int64_t memSum = 0;       // persistent bytes this op adds
    int64_t memMax = 0;       // its working set
    int64_t memSumRc = 0;     // persistent bytes when its block recomputes
    int64_t actRc = 0;        // bytes it adds to its block's recomputed activations
    bool operator==(const OpState&) const = default;
};

struct ReshardKey {
    uint32_t type;
    CompactSharding have, need;
    bool operator==(const ReshardKey&) const = default;
};
struct ReshardKeyHash {
    size_t operator()(const ReshardKey& k) const { return k.have.hash() * 31 + k.need.hash() * 1000003u + k.type; }
};

}  // namespace plan_internal

using namespace plan_internal;

struct PlanProblem::Impl {
    const Graph* g = nullptr;
    int threads = 1;  // workers for the cost tables (ProblemOptions::threads)
    // The analysis the problem is built on, shared with the planner's other searches of the same
    // graph and mesh (SearchMemo).
    std::shared_ptr<const AnalysisReport> analysisStore;
    const AnalysisReport& analysis() const { return *analysisStore; }
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
    std::vector<char> gradContribution; // and those summed into one (reduced once per step: OpRoles)
    std::vector<char> onChip;           // in a flash attention core (cost/op_cost.h)
    std::vector<FlashMatmul> flash;     // a fused core's matmuls: the curves they are priced at (OpRoles::flash)
    std::vector<char> unmaterialized;   // never in HBM: no working set (cost/op_cost.h)
    std::vector<char> attention;        // the context ring's matmuls (contextRingMatmuls)
    std::vector<int32_t> workPerElement;  // a kernel's working set per result element (cost/op_cost.h)
    std::vector<double> overlapCovers;    // compute the op's overlapped collectives hide behind (overlapCover)
    std::vector<char> resident;           // ZeRO-3 weights gathered for the whole step (stepResidentWeights)
    std::vector<char> flashRecompute;   // on chip in the forward: runs again in the backward
    std::vector<char> view;             // an eager view: no kernel (cost/op_cost.h)
    std::vector<char> eagerFused;       // chains that fuse under eager kernels too (cost/op_cost.h)
    std::vector<char> spOps;            // ops sequence parallelism can split (cost/op_cost.h)
    std::vector<char> spScatters;       // partial sums it reduce-scatters into pieces
    std::vector<OpId> spGatherer;       // per op: the consumer whose edge gathers its piece
    int spAxis = -1;                    // the sequence-parallel mesh axis, -1 off (cost/op_cost.h)

    // Decomposed terms.
    double constTime = 0;
    int64_t constMemSum = 0, constMemMax = 0;
    std::vector<std::vector<double>> unaryTime;      // [block][strategy]
    std::vector<std::vector<int64_t>> unaryMemSum, unaryMemMax;
    struct Pair {
        int a = 0, b = 0;            // a < b
        std::vector<double> cost;    // [sa * d_b + sb]
        uint32_t table = 0;          // pairs with the same nonzero table hold equal costs (copies: pricePairs)
    };
    std::vector<Pair> pairs;
    std::map<std::pair<int, int>, size_t> pairIndex;
    // Repeated segments (ProblemOptions::shareRepeatedSegments): what an op, a block or a pair of
    // blocks in a repeated segment costs is copied from its counterpart in its type's first segment
    // where everything it is computed from is the same. segmentCounterparts: per block, that
    // counterpart (itself in a first segment) and its segment (-1: none); false where the cover
    // does not line up with the blocks.
    bool shareRepeated = true;
    bool segmentCounterparts(std::vector<int>& canon, std::vector<int>& segment) const;
    // Those of the problem's blocks, found once by buildStates (empty: not shared, or the cover
    // does not line up).
    std::vector<int> blockCounterpart, blockSegment;
    // buildStates: per op, the op whose states it has (its own id: computed). An op a block of a
    // repeated segment decides is the twin of the op in the same place (by id) among those the
    // counterpart block decides when they have the same kind, types, attributes, roles (OpRoles,
    // recomputation, sequence parallelism), rule and input: the same member factors and shardings
    // in every strategy, or a consumer it is pulled by or an operand it follows that is itself a
    // twin. Empty when not shared.
    std::vector<OpId> twin;
    // buildNodeTerms: per block, the counterpart whose node terms it took (-1: summed its own);
    // buildEdgeTerms takes its edge terms the same way where its edges are the counterpart's.
    std::vector<int> nodeTermsFrom;
    size_t sharedEdgeBlocks = 0;  // blocks whose edge terms were copied too
    std::vector<OpId> opTwins(const OpOwners& decided, const std::vector<char>& readByBackward) const;
    // buildEdgeTerms: tables of a repeated segment's pairs copied from its type's first segment;
    // repeatedPairs: per pair of ps, the pair it copies (ps.size(): none).
    size_t sharedPairs = 0;  // how many were copied
    using PairEdges = std::vector<std::vector<std::pair<OpId, int32_t>>>;  // per pair: its edges (consumer, operand)
    std::vector<size_t> repeatedPairs(const std::vector<Pair>& ps, const std::map<std::pair<int, int>, size_t>& index, const PairEdges& pairEdges) const;
    // Whether two edge lists (consumer, operand) price alike edge by edge: the same slots, read
    // alike (uses, fusion, sequence parallelism's gather), and `ends(v, w, u, x)` for each edge
    // u → v of `mine` and x → w of `theirs` (the caller's condition on the ops at the ends).
    bool edgesAlike(const std::vector<std::pair<OpId, int32_t>>& mine, const std::vector<std::pair<OpId, int32_t>>& theirs,
                    const std::function<bool(OpId, OpId, OpId, OpId)>& ends) const;
    // The pairs of blocks with an edge between them whose earlier block is before `upTo`, with their
    // edges in op and operand order (the order their costs are summed in).
    void collectPairEdges(int upTo, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index, PairEdges& pairEdges) const;
    // The pair tables checkFrontierPrefix priced, for buildEdgeTerms.
    std::vector<Pair> prefixPairs;
    // Pair terms cut to keep the search frontier within its cap (cutWideFrontier): what is left of
    // each after its additive fit moved into the blocks' own terms. objective() adds them back.
    std::vector<Pair> cutPairs;

    using ReshardCache = std::unordered_map<ReshardKey, CommCost, ReshardKeyHash>;
    mutable ReshardCache reshardCache;  // the calling thread's; workers pass their own
    // Prices the tables of ps (the workers' reshard caches in `caches`): those in `known` (moved
    // out of it), then the others, copying repeated ones (repeatedPairs). Returns how many it copied.
    size_t pricePairs(std::vector<Pair>& ps, const std::map<std::pair<int, int>, size_t>& index, const PairEdges& pairEdges,
                      std::vector<ReshardCache>& caches, std::vector<Pair>* known);
    uint32_t tablesPriced = 0;  // the last Pair::table given out

    // Per block: its strategies (ParallelBlock::strategies' count; set with the analysis, or by
    // PlanProblem::deeper for the blocks it repeats).
    std::vector<int32_t> blockBase;
    int base(int b) const { return blockBase[static_cast<size_t>(b)]; }
    int blockCount() const { return static_cast<int>(blockBase.size()); }
    // The segment cover the search walks: the analysis's, or PlanProblem::deeper's with its layer
    // repeated.
    std::shared_ptr<const SegmentCover> deeperCover;
    const SegmentCover& cover() const { return deeperCover ? *deeperCover : analysis().cover; }
    // PlanProblem::deeper's problem: block-level terms only (no op states of its own blocks); per
    // block, the block of the shorter copy whose terms and op states it has.
    bool termsOnly = false;
    std::vector<int32_t> sourceBlock;
    std::shared_ptr<const PlanProblem> source;  // the shorter copy's problem
    int strategies(int b) const { return base(b) * variants; }
    bool recomputes(int b, int s) const { return variantRc[s / base(b)]; }
    // The search works on choice indices (0 .. strategies(b)); the public API on BlockAssignment.
    std::vector<std::vector<BlockAssignment>> choiceList;  // per block: choice index → assignment
    BlockAssignment choice(int b, int s) const { return {s % base(b), recomputes(b, s)}; }
    // The index of `a` among b's choices, or -1 when it is not one of them.
    int indexOf(int b, const BlockAssignment& a) const {
        if (a.strategy < 0 || a.strategy >= base(b)) return -1;
        for (int v = 0; v < variants; ++v)
            if (variantRc[v] == a.recompute) return v * base(b) + a.strategy;
        return -1;
    }
    std::vector<int32_t> indices(const Assignment& a) const {
        std::vector<int32_t> out(a.size());
        for (size_t b = 0; b < a.size(); ++b) out[b] = indexOf(static_cast<int>(b), a[b]);
        return out;
    }
    Assignment assignmentOf(const std::vector<int32_t>& idx) const {
        Assignment out(idx.size());
        for (size_t b = 0; b < idx.size(); ++b) out[b] = choice(static_cast<int>(b), idx[b]);
        return out;
    }
    double objective(const std::vector<int32_t>& s) const;
    int64_t memory(const std::vector<int32_t>& s) const;
    int nstates(OpId op) const { return owner[static_cast<size_t>(op)] < 0 ? 1 : base(owner[static_cast<size_t>(op)]); }
    // Devices holding the same piece of a tensor with this sharding, and their axes.
    uint32_t replicaMask(const CompactSharding& c) const { return cfp::replicaMask(c, model().sizes()); }
    int64_t replicas(const CompactSharding& c) const { return axesProduct(replicaMask(c), model().sizes()); }
    // How many ways optimizer-state sharding splits op `v`'s work further (1 outside the optimizer).
    int64_t zeroSplit(OpId v, const CompactSharding& result) const {
        return optimizerWorkSplit(g->op(v), sourceLike[static_cast<size_t>(v)], replicas(result), policy);
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

    CommCost reshard(OpId u, const CompactSharding& have, const CompactSharding& needed, ReshardCache* cache = nullptr) const {
        if (have == needed) return {};
        ReshardCache& memo = cache ? *cache : reshardCache;
        const ReshardKey key{typeId[static_cast<size_t>(u)], have, needed};
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        const Mesh& mesh = model().mesh();
        auto plan = planReshard(fromCompact(have, mesh), fromCompact(needed, mesh), mesh, g->op(u).type);
        const CommCost c = plan ? reshardCost(model(), *plan) : CommCost{std::numeric_limits<double>::infinity(), 0.0};
        memo.emplace(key, c);
        return c;
    }

    // Kernel seconds of op v in state s per run (a micro-batch round; once for the optimizer).
    double kernelRun(OpId v, int s) const { return st(v, s).kernel / runsPerStep(g->op(v), policy); }

    // Seconds per run of v of edge u → v (operand i) with resharding cost r and sequence
    // parallelism's gather: communication beside a matmul charged as cost/op_cost.h says.
    double edgeRun(OpId v, int sv, const CommCost& r, double gather) const {
        const CommCost c{r.total + gather, r.intra + (gather > 0 && intraNodeAxis(model(), static_cast<size_t>(spAxis)) ? gather : 0.0),
                         r.context + (gather > 0 && spAxis == model().contextAxis() ? gather : 0.0)};
        return chargedComm(model(), g->op(v), policy, c, kernelRun(v, sv), attention[static_cast<size_t>(v)] != 0);
    }

    // Sequence parallelism's all-gather on edge u → v (operand i), seconds per run of v (cost/op_cost.h).
    double spGather(OpId u, int su, OpId v, int sv, size_t i) const {
        if (spAxis < 0) return 0.0;
        const OpState& a = st(u, su);
        const auto ku = static_cast<size_t>(u);
        const bool piece = sequenceParallelPiece(spAxis, a.spSplit, a.partialMask, spScatters[ku]);
        if (!sequenceParallelGathers(piece, g->op(v), i, u, spGatherer[ku], spOps[static_cast<size_t>(v)] != 0, st(v, sv).spSplit)) return 0.0;
        return model().collectiveSeconds(CollectiveKind::AllGather, static_cast<size_t>(spAxis), local(u, a.result));
    }

    // Cost of edge u → v (operand i) with u in state su and v in state sv, per step (as often as
    // v's kernel runs: cost/op_cost.h kernelRepeats).
    double edge(OpId u, int su, OpId v, int sv, size_t i, ReshardCache* cache = nullptr) const {
        const CompactSharding& have = st(u, su).result;
        const CompactSharding n = need(v, sv, i);
        const Op& pv = g->op(v);
        const double gather = spGather(u, su, v, sv, i);
        if (have == n && gather == 0) {
            const Op& pu = g->op(u);
            if (fusesUnder(policy, eagerFused, pu, pv) && uses[static_cast<size_t>(u)] == 1 && !st(u, su).measured &&
                !st(v, sv).measured && !sourceLike[static_cast<size_t>(u)] && !onChip[static_cast<size_t>(u)] &&
                !onChip[static_cast<size_t>(v)])
                return -model().fusedEdgeSavingSeconds(local(u, have) / (zeroSplit(v, st(v, sv).result) * st(v, sv).spSplit)) *
                       kernelRepeats(pv, policy);
            return 0.0;
        }
        return edgeRun(v, sv, reshard(u, have, n, cache), gather) * kernelRepeats(pv, policy);
    }

    Status buildStates(const std::vector<std::pair<uint64_t, double>>& measured);
    // The cost tables: the blocks' own terms (their ops: time and memory), then the edges' (into
    // the blocks' terms and the pairs).
    void buildNodeTerms();
    void buildEdgeTerms();
    // The least memory of every plan, exactly, from the node terms alone (memory has no pair
    // terms): leastMemory over every choice.
    int64_t leastMemoryBound() const;
    // The least memory of the plans whose choices `allowed(block, choice)` admits, and in
    // `choice` (when given) a plan that needs it. A plan's memory is the constant sum, its blocks'
    // sums and the largest working set (the constant one or a block's). Under a cap c on the
    // working set the least sum is every block at its least sum among its choices within c, so the
    // least memory is the least, over the working-set sizes c some choice has (and every block has
    // a choice within), of that sum plus max(c, the constant working set): swept ascending, each
    // block's least sum kept as its choices come in, O(n log n) for n choices. The plan: per block
    // the least sum within the best cap (ties: the smaller working set, then the smaller choice).
    // `copies` (when given): per block, how many times the plan holds it (a layer counted for the
    // layers a shorter copy of the model left out: PlanProblem::leastMemoryDeeper); each copy takes
    // the block's least sum within the cap, as memory has no pair terms.
    int64_t leastMemory(const std::function<bool(int, int)>& allowed, std::vector<int32_t>* choice,
                        const std::vector<int64_t>* copies = nullptr) const;
    // Per block of a shorter copy of the model (`layers` layers: PlanProblem::leastMemoryDeeper),
    // how many times the model `extra` layers deeper holds it: the middle segment of its longest
    // run (an interior layer) 1 + extra times, the others once. plan.no_layers when the layers are
    // not a run of repeated segments.
    Result<std::vector<int64_t>> deeperCopies(int64_t extra, int layers) const;
    // The longest run of repeated segments (of at least 3) and its middle segment: the layer a
    // shorter copy repeats for the layers it left out (deeperCopies, PlanProblem::deeper).
    std::optional<std::pair<RepeatRun, Segment>> repeatedLayer() const;
    void separatePairs();
    // When the exact frontier would exceed maxStates: the longest pair terms are cut (see
    // problem.cpp); the search then optimises without their residuals and is not exact.
    void cutWideFrontier(int64_t maxStates);
    // Σ over cut pairs of (residual at `s` − its smallest residual): how much slower than the
    // optimum a plan the search found can be (0 without cut pairs).
    double cutGap(const std::vector<int32_t>& s) const;
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
    // The frontier laid out over `pairs` by cutWideFrontier where it fits under layoutMaxStates,
    // for the searches (SegmentDp::create) to take rather than lay out again.
    std::vector<StepPlan> layout;
    int64_t layoutMaxStates = 0;
    // Lays out positions 0 .. upTo-1 from the pair terms `ps` (exact there when ps holds every pair
    // that touches a block before upTo); plan.too_large when a frontier exceeds maxStates.
    Status layoutFrontier(const std::vector<Pair>& ps, int upTo, int64_t maxStates, const std::string& meshLabel,
                          std::vector<StepPlan>& plans) const;
    // The layout of the first blocks (the first four segments) from their own pair terms, before
    // the whole graph's cost tables are built: a mesh whose frontier is too large fails fast.
    Status checkFrontierPrefix(int64_t maxStates, const std::string& meshLabel);
    // The cost and memory terms of op under the sharding in s (opFlops: the op's FLOPs, unsplit).
    void computeOpState(const Op& op, double opFlops, OpState& s);
};
}  // namespace cfp
