#include "plan/problem_impl.h"
#include "plan/op_owners.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <span>

#include "stats/graph_stats.h"
#include "util/parallel.h"

namespace cfp {

PlanProblem::PlanProblem() : m(std::make_unique<Impl>()) {}
PlanProblem::PlanProblem(PlanProblem&&) noexcept = default;
PlanProblem& PlanProblem::operator=(PlanProblem&&) noexcept = default;
PlanProblem::~PlanProblem() = default;

const AnalysisReport& PlanProblem::analysis() const { return *m->analysisStore; }
const CostModel& PlanProblem::model() const { return m->model(); }
int PlanProblem::blockCount() const { return m->blockCount(); }
const std::vector<BlockAssignment>& PlanProblem::choices(int block) const { return m->choiceList[static_cast<size_t>(block)]; }
const Graph& PlanProblem::graph() const { return *m->g; }
const MemoryPolicy& PlanProblem::policy() const { return m->policy; }

void PlanProblem::Impl::computeOpState(const Op& op, double opFlops, OpState& s) {
    const MeshSizes& sizes = model().sizes();
    const auto k = static_cast<size_t>(op.id);
    const int64_t own = local(op.id, s.result);
    if (op.kind == OpKind::Parameter) {
        s.memSum = parameterMemory(op, own, replicas(s.result), policy, !resident.empty() && resident[k]).total();
        const CommCost gathers = weightGatherCost(model(), op, replicaMask(s.result), own, policy);
        s.own = overlappedCharge(model(), gathers, overlapCovers[k], policy.overlapParamGather);
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
    // A flash attention core's tensors stay on chip: no HBM traffic, no working set; values inside
    // fused chains take no working set either (op_cost.h).
    int64_t work = unmaterialized[k] ? 0 : own;
    double bytes = static_cast<double>(onChip[k] ? 0 : own);
    std::vector<std::vector<int64_t>> operandDims;
    std::vector<TensorType> operandTypes;
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const TensorType& type = g->op(op.operands[i]).type;
        const CompactSharding n = rule(k) ? projectOperand(*rule(k), s.factors, i) : CompactSharding::replicated(type.rank());
        addAxes(n);
        const auto ko = static_cast<size_t>(op.operands[i]);
        const int64_t b = onChip[ko] ? 0 : local(op.operands[i], n);
        work += unmaterialized[ko] && !view[ko] ? 0 : b;  // a view's reader reads what it views
        bytes += static_cast<double>(b);
        if (model().hasMeasurements()) {
            operandDims.push_back(localDims(type, n, sizes));
            operandTypes.push_back(type);
        }
    }
    if (const int32_t e = workPerElement[k]; e >= 0) work = workOfElements(own, op.type.dtype, e);  // a library kernel's buffers
    s.memMax = work / z;
    // Sequence parallelism splits the work of an op it applies to as optimizer sharding does.
    const int64_t sp = sequenceParallelSplit(spAxis, sizes, spOps[k], axesUsed);
    s.spSplit = static_cast<uint16_t>(sp);
    const std::optional<GemmGrid> grid = op.kind == OpKind::Dot ? gemmGridOf(*g, op, localDims(op.type, s.result, sizes)) : std::nullopt;
    s.kernel = view[k] ? 0.0 : opKernelSeconds(model(), op, opFlops, axesUsed, bytes, z * sp, onChip[k], grid ? &*grid : nullptr, &flash[k]);
    if (model().hasMeasurements() && !onChip[k] && !view[k]) {
        const uint64_t sig = opCostSignature(op, operandDims, operandTypes, localDims(op.type, s.result, sizes));
        if (const double* t = model().measured(sig)) {
            s.kernel = *t / static_cast<double>(z * sp);
            s.measured = true;
        }
    }
    // Per step: micro-batch rounds (cost/op_cost.h).
    s.kernel *= kernelRepeats(op, policy, flashRecompute[k]);
    const uint32_t scatterMask = ownScatterMask(s.partialMask, scattersOwnResult(gradToOptimizer[k], policy), spAxis, spScatters[k]);
    const CommCost oc = ownCollectiveCost(model(), s.partialMask, own, scatterMask,
                                          gradContribution[k] && policy.overlapGradReduce ? &policy : nullptr);
    const double repeats = ownCollectiveRepeats(op, gradContribution[k], policy);
    s.own = gradContribution[k] ? overlappedCharge(model(), oc.times(repeats), overlapCovers[k], policy.overlapGradReduce)
                                : chargedComm(model(), op, policy, oc, s.kernel / runsPerStep(op, policy), attention[k] != 0) * repeats;
}

Status PlanProblem::Impl::buildStates(const std::vector<std::pair<uint64_t, double>>& measured) {
    for (const auto& [sig, seconds] : measured) modelStore->setMeasured(sig, seconds);
    const Graph& graph = *g;
    const auto n = static_cast<size_t>(graph.size());
    const BlockAnalysis& ba = analysis().blocks;
    const MeshSizes& sizes = model().sizes();
    ruleStore = analysis().blocks.rules;
    std::shared_ptr<std::vector<std::optional<OpShardingRule>>> derived;
    if (!ruleStore || ruleStore->size() != n) {
        derived = std::make_shared<std::vector<std::optional<OpShardingRule>>>(n);
        ruleStore = derived;
    }
    owner.assign(n, -1);
    stateOffset.assign(n, 0);
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
    OpRoles roles = opRoles(graph, policy.attention, policy.crossEntropy, policy.fusion);
    overlapCovers = overlapCover(graph, roles, model(), policy);
    onChip = std::move(roles.onChip);
    flash = std::move(roles.flash);
    attention = contextRingMatmuls(graph, onChip, policy, model());
    unmaterialized = std::move(roles.unmaterialized);
    workPerElement = std::move(roles.workPerElement);
    resident = stepResidentWeights(graph, policy);
    flashRecompute = std::move(roles.flashRecompute);
    view = std::move(roles.view);
    eagerFused = std::move(roles.eagerFused);
    uses = std::move(roles.uses);
    sourceLike = std::move(roles.sourceLike);
    gradToOptimizer = std::move(roles.gradToOptimizer);
    gradContribution = std::move(roles.gradContribution);
    const std::vector<char> readByBackward = std::move(roles.readByBackward);
    const std::optional<int> sp = sequenceParallelAxisIndex(policy, model().mesh());
    if (!sp) return makeError("plan.internal", "sequence parallelism on '" + policy.sequenceParallelAxis + "', which the mesh lacks");
    spAxis = *sp;
    spOps = spAxis >= 0 ? sequenceParallelOps(graph) : std::vector<char>(n, 0);
    spScatters = spAxis >= 0 ? sequenceParallelScatters(graph, spOps) : std::vector<char>(n, 0);
    spGatherer = spAxis >= 0 ? sequenceParallelGatherers(graph, spOps) : std::vector<OpId>(n, kNoOp);
    const std::vector<char> manual = derived ? manualRegionOps(graph) : std::vector<char>{};
    for (const Op& op : graph.ops()) {
        auto it = types.try_emplace(op.type, static_cast<uint32_t>(types.size())).first;
        typeId[static_cast<size_t>(op.id)] = it->second;
        if (derived) {
            auto r = shardingRuleFor(graph, op, partitioningOf(manual, op.id));
            if (r) (*derived)[static_cast<size_t>(op.id)] = std::move(*r);
        }
    }
    // Who decides each op's sharding (plan/op_owners.h).
    const Consumers consumerIndex(graph);
    auto consumers = [&](size_t k) { return consumerIndex.of(k); };
    std::vector<char> hasRule(n, 0);
    for (size_t k = 0; k < n; ++k) hasRule[k] = rule(k).has_value();
    const OpOwners decided = decideOwners(graph, ba, sourceLike, hasRule, consumerIndex);
    owner = decided.owner;
    const std::vector<int64_t>& memberIndex = decided.memberIndex;
    const std::vector<int32_t>& follows = decided.follows;
    const std::vector<std::pair<OpId, int32_t>>& pulledBy = decided.pulledBy;
    const std::vector<OpId>& order = decided.order;
    // Memory policy: which ops recompute with their block, which results are checkpoints, which
    // gradients feed the optimizer alone.
    rcEligible.assign(n, 0);
    checkpoint.assign(n, 0);
    const bool rcOn = policy.recompute != RecomputePolicy::None;
    // The unit a recomputation keeps the inputs of: the block, or the layer (RecomputePolicy::Layers
    // and SelectiveOps, whose forward ops outside layers do not recompute; under SelectiveOps the
    // results a layer keeps do not either).
    const bool byLayer = recomputesByLayer(policy.recompute);
    const std::vector<int32_t> layers = byLayer ? layerUnits(graph) : std::vector<int32_t>{};
    const std::vector<int32_t>& unit = byLayer ? layers : owner;
    const std::vector<char> keptOps =
        policy.recompute == RecomputePolicy::SelectiveOps ? selectiveOpsKept(graph, sourceLike, onChip, layers) : std::vector<char>(n, 0);
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        rcEligible[k] = rcOn && op.phase == Phase::Forward && !sourceLike[k] && owner[k] >= 0 && (!byLayer || unit[k] >= 0) && !keptOps[k];
    }
    // Per op (in parallel; each writes only its own entries).
    parallelFor(static_cast<int64_t>(n), threads, 4096, [&](int64_t i0, int64_t i1, int) {
        for (auto k = static_cast<size_t>(i0); k < static_cast<size_t>(i1); ++k) {
            const Op& op = graph.op(static_cast<OpId>(k));
            for (const auto& [c, slot] : consumers(k)) {
                const auto ck = static_cast<size_t>(c);
                // A forward result a recomputed op reads and cannot recompute with it: of another
                // unit, or not recomputed itself.
                if (rcEligible[ck] && (unit[ck] != unit[k] || !rcEligible[k]) && op.phase == Phase::Forward && !sourceLike[k] && !onChip[k])
                    checkpoint[k] = 1;
            }
        }
    });
    // Ops of repeated segments have their twins' states (opTwins): they share their slots, and
    // only the others are filled.
    if (!shareRepeated || !segmentCounterparts(blockCounterpart, blockSegment)) {
        blockCounterpart.clear();
        blockSegment.clear();
    }
    twin = shareRepeated ? opTwins(decided, readByBackward) : std::vector<OpId>{};
    auto isTwin = [&](size_t k) { return !twin.empty() && twin[k] != static_cast<OpId>(k); };
    size_t total = 0;
    for (size_t k = 0; k < n; ++k) {
        if (isTwin(k)) continue;
        stateOffset[k] = total;
        total += static_cast<size_t>(nstates(static_cast<OpId>(k)));
    }
    for (size_t k = 0; k < n; ++k)
        if (isTwin(k)) stateOffset[k] = stateOffset[static_cast<size_t>(twin[k])];
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
                const bool spPiece = spOps[k] || (spAxis >= 0 && spScatters[k] && (os.partialMask & (1u << spAxis)));
                const int64_t bytes = local(op.id, os.result) / sequenceParallelSplit(spAxis, sizes, spPiece, ~replicaMask(os.result));
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
    for (const OpId id : order)
        if (!isTwin(static_cast<size_t>(id))) byLevel[static_cast<size_t>(level[static_cast<size_t>(id)])].push_back(id);
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

bool PlanProblem::Impl::segmentCounterparts(std::vector<int>& canon, std::vector<int>& segment) const {
    const auto& blocks = analysis().blocks.blocks;
    const auto& cover = analysis().cover;
    canon.resize(blocks.size());
    std::iota(canon.begin(), canon.end(), 0);
    segment.assign(blocks.size(), -1);
    for (size_t si = 0; si < cover.segments.size(); ++si) {
        const Segment& seg = cover.segments[si];
        if (seg.type < 0 || static_cast<size_t>(seg.type) >= cover.types.size()) return false;
        const Segment& first = cover.segments[static_cast<size_t>(cover.types[static_cast<size_t>(seg.type)].firstSegment)];
        if (first.blockCount != seg.blockCount) return false;
        for (int i = 0; i < seg.blockCount; ++i) {
            const auto b = static_cast<size_t>(seg.firstBlock + i);
            if (b >= blocks.size()) return false;
            canon[b] = first.firstBlock + i;
            segment[b] = static_cast<int>(si);
        }
    }
    return true;
}

std::vector<OpId> PlanProblem::Impl::opTwins(const OpOwners& d, const std::vector<char>& readByBackward) const {
    const Graph& graph = *g;
    const auto n = static_cast<size_t>(graph.size());
    std::vector<OpId> out(n);
    std::iota(out.begin(), out.end(), OpId{0});
    if (blockCounterpart.empty()) return out;
    const std::vector<int>& canon = blockCounterpart;
    const auto& blocks = analysis().blocks.blocks;
    // The i-th op (by id) a block decides corresponds to the i-th its counterpart decides.
    std::vector<std::vector<OpId>> opsOf(blocks.size());
    for (size_t k = 0; k < n; ++k)
        if (owner[k] >= 0) opsOf[static_cast<size_t>(owner[k])].push_back(static_cast<OpId>(k));
    // Blocks with the same member shardings and factors in every strategy (their members' input).
    auto sameStrategies = [&](const ParallelBlock& x, const ParallelBlock& y) {
        if (x.strategies.size() != y.strategies.size() || x.members.size() != y.members.size()) return false;
        for (size_t s = 0; s < x.strategies.size(); ++s)
            if (x.strategies[s].memberShardings != y.strategies[s].memberShardings || x.strategies[s].memberFactors != y.strategies[s].memberFactors)
                return false;
        return true;
    };
    std::vector<OpId> candidate(n, kNoOp);
    std::vector<char> counterpart(blocks.size(), 0), strategiesAlike(blocks.size(), 0);
    for (size_t b = 0; b < blocks.size(); ++b) {
        const auto c = static_cast<size_t>(canon[b]);
        if (c == b || opsOf[b].size() != opsOf[c].size() || base(static_cast<int>(b)) != base(static_cast<int>(c))) continue;
        counterpart[b] = 1;
        for (size_t i = 0; i < opsOf[b].size(); ++i) candidate[static_cast<size_t>(opsOf[b][i])] = opsOf[c][i];
    }
    parallelFor(static_cast<int64_t>(blocks.size()), threads, 8, [&](int64_t b0, int64_t b1, int) {
        for (auto b = static_cast<size_t>(b0); b < static_cast<size_t>(b1); ++b)
            if (counterpart[b]) strategiesAlike[b] = sameStrategies(blocks[b], blocks[static_cast<size_t>(canon[b])]);
    });
    // Everything a state is computed from (buildStates' fill, computeOpState), compared.
    auto sameFlags = [&](size_t k, size_t r) {
        for (const std::vector<char>* f : {&sourceLike, &readByBackward, &checkpoint, &rcEligible, &spOps, &spScatters, &onChip, &unmaterialized,
                                           &flashRecompute, &view, &gradToOptimizer, &gradContribution, &resident})
            if (!f->empty() && (*f)[k] != (*f)[r]) return false;
        return workPerElement[k] == workPerElement[r] && overlapCovers[k] == overlapCovers[r] && typeId[k] == typeId[r] && rule(k) == rule(r);
    };
    auto alikeOps = [&](const Op& a, const Op& b) {
        return a.kind == b.kind && a.type == b.type && a.phase == b.phase && a.role == b.role && a.derivedOperand == b.derivedOperand &&
               a.attrs == b.attrs && a.operands.size() == b.operands.size();
    };
    auto alike = [&](size_t k, size_t r) {
        const Op& a = graph.op(static_cast<OpId>(k));
        const Op& b = graph.op(static_cast<OpId>(r));
        if (!alikeOps(a, b) || !sameFlags(k, r)) return false;
        if ((a.derivedFrom == kNoOp) != (b.derivedFrom == kNoOp)) return false;
        if (a.derivedFrom != kNoOp && !alikeOps(graph.op(a.derivedFrom), graph.op(b.derivedFrom))) return false;
        for (size_t i = 0; i < a.operands.size(); ++i) {
            const auto ka = static_cast<size_t>(a.operands[i]), kb = static_cast<size_t>(b.operands[i]);
            if (graph.op(a.operands[i]).type != graph.op(b.operands[i]).type || onChip[ka] != onChip[kb] ||
                unmaterialized[ka] != unmaterialized[kb] || view[ka] != view[kb] || sourceLike[ka] != sourceLike[kb])
                return false;
        }
        // The state's input: the block's strategies, the consumer it is pulled by, or the operand it follows.
        if (d.memberIndex[k] != d.memberIndex[r] || d.follows[k] != d.follows[r] || (d.pulledBy[k].first == kNoOp) != (d.pulledBy[r].first == kNoOp))
            return false;
        if (d.memberIndex[k] >= 0) return strategiesAlike[static_cast<size_t>(owner[k])] != 0;
        if (d.pulledBy[k].first != kNoOp)
            return d.pulledBy[k].second == d.pulledBy[r].second && out[static_cast<size_t>(d.pulledBy[k].first)] == d.pulledBy[r].first;
        if (d.follows[k] >= 0) {
            const auto f = static_cast<size_t>(d.follows[k]);
            return out[static_cast<size_t>(a.operands[f])] == b.operands[f];
        }
        return true;
    };
    // In the order owners were decided: an op's input is settled before it.
    for (const OpId id : d.order) {
        const auto k = static_cast<size_t>(id);
        if (candidate[k] != kNoOp && alike(k, static_cast<size_t>(candidate[k]))) out[k] = candidate[k];
    }
    return out;
}

void PlanProblem::Impl::buildNodeTerms() {
    const Graph& graph = *g;
    const size_t B = analysis().blocks.blocks.size();
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
    // A block whose every op is the twin of its counterpart's (opTwins), in the same order, has
    // its counterpart's node terms: copied after the others are summed.
    std::vector<int>& copyFrom = nodeTermsFrom;
    copyFrom.assign(B, -1);
    if (!twin.empty() && blockCounterpart.size() == B)
        for (size_t b = 0; b < B; ++b) {
            const auto c = static_cast<size_t>(blockCounterpart[b]);
            bool same = c != b && opsOf[b].size() == opsOf[c].size();
            for (size_t i = 0; same && i < opsOf[b].size(); ++i) same = twin[static_cast<size_t>(opsOf[b][i])] == opsOf[c][i];
            if (same) copyFrom[b] = static_cast<int>(c);
        }
    std::vector<size_t> summed, copied;
    for (size_t b = 0; b < B; ++b) (copyFrom[b] < 0 ? summed : copied).push_back(b);
    parallelFor(static_cast<int64_t>(summed.size()), threads, 8, [&](int64_t b0, int64_t b1, int) {
        for (auto bi = static_cast<size_t>(b0); bi < static_cast<size_t>(b1); ++bi) {
            const size_t ou = summed[bi];
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
        }
    });
    for (const size_t b : copied) {
        const auto c = static_cast<size_t>(copyFrom[b]);
        unaryTime[b] = unaryTime[c];
        unaryMemSum[b] = unaryMemSum[c];
        unaryMemMax[b] = unaryMemMax[c];
    }
}

int64_t PlanProblem::Impl::leastMemoryBound() const {
    return leastMemory([](int, int) { return true; }, nullptr);
}

int64_t PlanProblem::Impl::leastMemory(const std::function<bool(int, int)>& allowed, std::vector<int32_t>* choice,
                                       const std::vector<int64_t>* copies) const {
    struct Entry {
        int64_t working;
        int b, s;
    };
    const int B = static_cast<int>(unaryMemSum.size());
    std::vector<Entry> entries;
    for (int b = 0; b < B; ++b)
        for (int s = 0; s < static_cast<int>(unaryMemSum[static_cast<size_t>(b)].size()); ++s)
            if (allowed(b, s)) entries.push_back({unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)], b, s});
    std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) { return x.working < y.working; });
    constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
    std::vector<int64_t> leastSum(static_cast<size_t>(B), kNone);
    int covered = 0;
    int64_t sum = constMemSum;  // over the covered blocks
    int64_t best = kNone, bestCap = 0;
    for (size_t i = 0; i < entries.size();) {
        const int64_t cap = entries[i].working;
        for (; i < entries.size() && entries[i].working == cap; ++i) {
            const auto b = static_cast<size_t>(entries[i].b);
            const int64_t own = unaryMemSum[b][static_cast<size_t>(entries[i].s)] * (copies ? (*copies)[b] : 1);
            if (leastSum[b] == kNone) {
                ++covered;
                sum += own;
                leastSum[b] = own;
            } else if (own < leastSum[b]) {
                sum -= leastSum[b] - own;
                leastSum[b] = own;
            }
        }
        if (covered == B && sum + std::max(cap, constMemMax) < best) {
            best = sum + std::max(cap, constMemMax);
            bestCap = cap;
        }
    }
    if (B == 0) best = constMemSum + constMemMax;
    if (choice) {
        choice->assign(static_cast<size_t>(B), 0);
        for (int b = 0; b < B; ++b) {
            const auto bs = static_cast<size_t>(b);
            int chosen = -1;
            for (int s = 0; s < static_cast<int>(unaryMemSum[bs].size()); ++s) {
                const auto ss = static_cast<size_t>(s);
                if (!allowed(b, s) || unaryMemMax[bs][ss] > bestCap) continue;
                const auto cs = static_cast<size_t>(chosen);
                if (chosen < 0 || unaryMemSum[bs][ss] < unaryMemSum[bs][cs] ||
                    (unaryMemSum[bs][ss] == unaryMemSum[bs][cs] && unaryMemMax[bs][ss] < unaryMemMax[bs][cs]))
                    chosen = s;
            }
            (*choice)[bs] = chosen;
        }
    }
    return best;
}

void PlanProblem::Impl::buildEdgeTerms() {
    const Graph& graph = *g;
    const size_t B = analysis().blocks.blocks.size();
    std::vector<std::vector<std::pair<OpId, int32_t>>> edgesOf(B);  // (consumer, operand)
    std::vector<std::vector<std::pair<OpId, int32_t>>> pairEdges;
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
            }
        }
    }
    collectPairEdges(static_cast<int>(B), pairs, pairIndex, pairEdges);
    std::vector<ReshardCache> caches(static_cast<size_t>(threads));
    std::vector<double> fixedCost(fixedEdges.size(), 0.0);
    parallelFor(static_cast<int64_t>(fixedEdges.size()), threads, 1024, [&](int64_t e0, int64_t e1, int w) {
        for (auto e = static_cast<size_t>(e0); e < static_cast<size_t>(e1); ++e) {
            const auto [v, slot] = fixedEdges[e];
            fixedCost[e] = edge(graph.op(v).operands[static_cast<size_t>(slot)], 0, v, 0, static_cast<size_t>(slot), &caches[static_cast<size_t>(w)]);
        }
    });
    for (const double c : fixedCost) constTime += c;
    // A block that took its counterpart's node terms takes its edge terms too where its edges are
    // the counterpart's, edge by edge: the same slot, twins (or the same fixed op) at both ends,
    // read alike. Its terms are then copied after the others are summed.
    // Two fixed ops (one state each) price an edge alike when they are the same op, or alike ops
    // in the same state with the same roles (a per-layer constant broadcast, say).
    auto fixedAlike = [&](OpId a, OpId b) {
        if (a == b) return true;
        const auto ka = static_cast<size_t>(a), kb = static_cast<size_t>(b);
        const Op &x = graph.op(a), &y = graph.op(b);
        if (x.kind != y.kind || x.type != y.type || x.phase != y.phase || x.role != y.role || !(x.attrs == y.attrs) || x.operands.size() != y.operands.size())
            return false;
        for (const std::vector<char>* f : {&sourceLike, &onChip, &unmaterialized, &view, &eagerFused, &spOps, &spScatters, &rcEligible})
            if ((*f)[ka] != (*f)[kb]) return false;
        return uses[ka] == uses[kb] && typeId[ka] == typeId[kb] && rule(ka) == rule(kb) && st(a, 0) == st(b, 0);
    };
    auto sameEnd = [&](OpId a, OpId b) {
        const auto ka = static_cast<size_t>(a), kb = static_cast<size_t>(b);
        return owner[ka] < 0 ? owner[kb] < 0 && fixedAlike(a, b) : owner[kb] >= 0 && twin[ka] == twin[kb];
    };
    std::vector<char> edgesCopied(B, 0);
    for (size_t b = 0; b < B && !twin.empty(); ++b) {
        if (nodeTermsFrom.size() != B || nodeTermsFrom[b] < 0) continue;
        const auto c = static_cast<size_t>(nodeTermsFrom[b]);
        const auto ob = static_cast<int32_t>(b), oc = static_cast<int32_t>(c);
        edgesCopied[b] = edgesAlike(edgesOf[b], edgesOf[c], [&](OpId v, OpId w, OpId u, OpId x) {
            const auto ku = static_cast<size_t>(u), kx = static_cast<size_t>(x), kv = static_cast<size_t>(v), kw = static_cast<size_t>(w);
            return sameEnd(v, w) && sameEnd(u, x) && (owner[ku] == ob) == (owner[kx] == oc) && (owner[kv] == ob) == (owner[kw] == oc);
        });
    }
    parallelFor(static_cast<int64_t>(B), threads, 8, [&](int64_t b0, int64_t b1, int w) {
        ReshardCache* cache = &caches[static_cast<size_t>(w)];
        std::vector<double> baseE;
        for (auto ou = static_cast<size_t>(b0); ou < static_cast<size_t>(b1); ++ou) {
            if (edgesCopied[ou]) continue;
            const int S = strategies(static_cast<int>(ou)), bo = base(static_cast<int>(ou));
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
    for (size_t b = 0; b < B; ++b)
        if (edgesCopied[b]) {
            unaryTime[b] = unaryTime[static_cast<size_t>(nodeTermsFrom[b])];
            ++sharedEdgeBlocks;
        }
    // The first segments' pairs were priced for the frontier check (checkFrontierPrefix): taken over.
    sharedPairs += pricePairs(pairs, pairIndex, pairEdges, caches, &prefixPairs);
    prefixPairs = {};
}

void PlanProblem::Impl::collectPairEdges(int upTo, std::vector<Pair>& ps, std::map<std::pair<int, int>, size_t>& index, PairEdges& pairEdges) const {
    for (const Op& op : g->ops()) {
        const int32_t ov = owner[static_cast<size_t>(op.id)];
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const int32_t ou = owner[static_cast<size_t>(op.operands[i])];
            if (ou < 0 || ov < 0 || ou == ov || std::min(ou, ov) >= upTo) continue;
            const size_t slot = pairOf(ou, ov, ps, index);
            if (slot == pairEdges.size()) pairEdges.emplace_back();
            pairEdges[slot].emplace_back(op.id, static_cast<int32_t>(i));
        }
    }
}

size_t PlanProblem::Impl::pricePairs(std::vector<Pair>& ps, const std::map<std::pair<int, int>, size_t>& index, const PairEdges& pairEdges,
                                     std::vector<ReshardCache>& caches, std::vector<Pair>* known) {
    const Graph& graph = *g;
    // Tables already priced (a pair's edges are all collected once its earlier block is reached).
    std::vector<char> done(ps.size(), 0);
    if (known)
        for (Pair& k : *known)
            if (const auto it = index.find({k.a, k.b}); it != index.end()) {
                ps[it->second].cost = std::move(k.cost);
                ps[it->second].table = k.table;
                done[it->second] = 1;
            }
    // Repeated segments (analysis().cover): a pair of blocks costs what the pair at the same place in
    // its type's first segment (and the segment after it) costs when their edges join twins, so its
    // table is copied, not priced again. tst_planner repeatedSegmentsEqualComputedOnes checks the
    // tables equal the priced ones on every built-in family.
    const std::vector<size_t> copyFrom = shareRepeated ? repeatedPairs(ps, index, pairEdges) : std::vector<size_t>(ps.size(), ps.size());
    std::vector<size_t> priced;
    for (size_t pi = 0; pi < ps.size(); ++pi)
        if (copyFrom[pi] == ps.size() && !done[pi]) {
            priced.push_back(pi);
            ps[pi].table = ++tablesPriced;
        }
    parallelFor(static_cast<int64_t>(priced.size()), threads, 8, [&](int64_t p0, int64_t p1, int w) {
        ReshardCache* cache = &caches[static_cast<size_t>(w)];
        std::vector<double> scratch;
        for (auto k = static_cast<size_t>(p0); k < static_cast<size_t>(p1); ++k) {
            const size_t pi = priced[k];
            for (const auto& [v, slot] : pairEdges[pi])
                addEdgeToPair(graph.op(v).operands[static_cast<size_t>(slot)], v, static_cast<size_t>(slot), ps[pi], scratch, cache);
        }
    });
    size_t copied = 0;
    for (size_t pi = 0; pi < ps.size(); ++pi)
        if (copyFrom[pi] != ps.size() && !done[pi]) {
            ps[pi].cost = ps[copyFrom[pi]].cost;
            ps[pi].table = ps[copyFrom[pi]].table;
            ++copied;
        }
    return copied;
}

bool PlanProblem::Impl::edgesAlike(const std::vector<std::pair<OpId, int32_t>>& mine, const std::vector<std::pair<OpId, int32_t>>& theirs,
                                   const std::function<bool(OpId, OpId, OpId, OpId)>& ends) const {
    if (mine.size() != theirs.size()) return false;
    // The first operand slot of v that reads u (sequence parallelism gathers there only).
    auto firstSlot = [&](OpId v, OpId u) {
        const auto& operands = g->op(v).operands;
        return std::find(operands.begin(), operands.end(), u) - operands.begin();
    };
    for (size_t k = 0; k < mine.size(); ++k) {
        const auto [v, slot] = mine[k];
        const auto [w, wslot] = theirs[k];
        const OpId u = g->op(v).operands[static_cast<size_t>(slot)], x = g->op(w).operands[static_cast<size_t>(wslot)];
        const auto ku = static_cast<size_t>(u), kx = static_cast<size_t>(x), kv = static_cast<size_t>(v), kw = static_cast<size_t>(w);
        if (slot != wslot || uses[ku] != uses[kx] || eagerFused[ku] != eagerFused[kx] || eagerFused[kv] != eagerFused[kw] ||
            (spGatherer[ku] == v) != (spGatherer[kx] == w) || firstSlot(v, u) != firstSlot(w, x) || !ends(v, w, u, x))
            return false;
    }
    return true;
}

std::vector<size_t> PlanProblem::Impl::repeatedPairs(const std::vector<Pair>& ps, const std::map<std::pair<int, int>, size_t>& index,
                                                     const PairEdges& pairEdges) const {
    const auto& blocks = analysis().blocks.blocks;
    const size_t none = ps.size();
    std::vector<size_t> out(ps.size(), none);
    if (twin.empty() || blockCounterpart.size() != blocks.size()) return out;
    const std::vector<int>&canon = blockCounterpart, &segment = blockSegment;
    // Alike blocks: as many members and the same strategies in the same order.
    auto alike = [&](int x, int y) {
        const ParallelBlock &bx = blocks[static_cast<size_t>(x)], &by = blocks[static_cast<size_t>(y)];
        if (bx.members.size() != by.members.size() || bx.strategies.size() != by.strategies.size()) return false;
        for (size_t s = 0; s < bx.strategies.size(); ++s)
            if (bx.strategies[s].label != by.strategies[s].label) return false;
        return true;
    };
    for (size_t pi = 0; pi < ps.size(); ++pi) {
        const int a = ps[pi].a, b = ps[pi].b;
        // The counterpart: both blocks moved back by a's distance to its counterpart in its type's
        // first segment (b may be in a later segment: the edges from one layer into the next).
        const int shift = a - canon[static_cast<size_t>(a)];
        if (segment[static_cast<size_t>(a)] < 0 || segment[static_cast<size_t>(b)] < 0 || shift <= 0 || b - shift < 0) continue;
        const int ca = a - shift, cb = b - shift;
        if (canon[static_cast<size_t>(cb)] != canon[static_cast<size_t>(b)]) continue;
        const auto it = index.find({ca, cb});
        if (it == index.end() || !alike(a, ca) || !alike(b, cb)) continue;
        // Edge by edge: ops with the same states (twins) in blocks at the same distance.
        const bool same = edgesAlike(pairEdges[pi], pairEdges[it->second], [&](OpId v, OpId w, OpId u, OpId x) {
            const auto ku = static_cast<size_t>(u), kx = static_cast<size_t>(x), kv = static_cast<size_t>(v), kw = static_cast<size_t>(w);
            return twin[kv] == twin[kw] && twin[ku] == twin[kx] && owner[kv] - a == owner[kw] - ca && owner[ku] - a == owner[kx] - ca;
        });
        if (same) out[pi] = it->second;
    }
    return out;
}

Status PlanProblem::Impl::layoutFrontier(const std::vector<Pair>& ps, int upTo, int64_t maxStates, const std::string& meshLabel,
                                         std::vector<StepPlan>& plans) const {
    const int B = blockCount();
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

Status PlanProblem::Impl::checkFrontierPrefix(int64_t maxStates, const std::string& meshLabel) {
    const auto& segs = analysis().cover.segments;
    const int B = static_cast<int>(analysis().blocks.blocks.size());
    const int upTo = segs.size() > 4 ? segs[4].firstBlock : B;
    std::vector<Pair> ps;
    std::map<std::pair<int, int>, size_t> index;
    PairEdges pairEdges;
    collectPairEdges(upTo, ps, index, pairEdges);
    std::vector<ReshardCache> caches(static_cast<size_t>(threads));
    sharedPairs = pricePairs(ps, index, pairEdges, caches, nullptr);
    std::vector<Pair> kept;
    for (const auto& p : ps)
        if (!separable(p, static_cast<size_t>(strategies(p.a)), static_cast<size_t>(strategies(p.b)))) kept.push_back(p);
    // Kept for buildEdgeTerms, which would price the same tables again.
    prefixPairs = std::move(ps);
    std::vector<StepPlan> plans;
    return layoutFrontier(kept, upTo, maxStates, meshLabel, plans);
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
    std::vector<std::optional<CommCost>> priced(haves.size() * needs.size());
    const double repeats = kernelRepeats(g->op(v), policy);  // as edge() prices it
    baseCost.assign(static_cast<size_t>(bu) * static_cast<size_t>(bv), 0.0);
    for (int su = 0; su < bu; ++su)
        for (int sv = 0; sv < bv; ++sv) {
            const size_t h = haveOf[static_cast<size_t>(su)], q = needOf[static_cast<size_t>(sv)];
            double& e = baseCost[static_cast<size_t>(su) * static_cast<size_t>(bv) + static_cast<size_t>(sv)];
            if (haves[h] == needs[q]) {
                e = edge(u, su, v, sv, i, cache);
            } else {
                std::optional<CommCost>& c = priced[h * needs.size() + q];
                if (!c) c = reshard(u, haves[h], needs[q], cache);
                e = edgeRun(v, sv, *c, spGather(u, su, v, sv, i)) * repeats;  // as edge() prices it
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

// Cuts pair terms until the search frontier fits: longest span first (an edge from an early block
// to a late one — a tied embedding and its LM head, a mask or position table read by every layer —
// keeps its block in the frontier the whole way), doubling the count each try. A cut pair is
// replaced in the search by its additive least-squares fit f(sa) + g(sb) (row and column means),
// moved into the two blocks' own terms; its residual is kept and priced afterwards.
void PlanProblem::Impl::cutWideFrontier(int64_t maxStates) {
    if (maxStates <= 0 || pairs.empty()) return;
    const int B = blockCount();
    std::vector<StepPlan> scratch;
    if (layoutFrontier(pairs, B, maxStates, std::string(), scratch)) {
        layout = std::move(scratch);
        layoutMaxStates = maxStates;
        return;
    }
    std::vector<size_t> order(pairs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return pairs[x].b - pairs[x].a > pairs[y].b - pairs[y].a; });
    std::vector<char> cut(pairs.size(), 0);
    for (size_t k = 1;; k = std::min(order.size(), 2 * k)) {
        std::fill(cut.begin(), cut.end(), 0);
        for (size_t i = 0; i < k; ++i) cut[order[i]] = 1;
        std::vector<Pair> kept;
        for (size_t i = 0; i < pairs.size(); ++i)
            if (!cut[i]) kept.push_back(pairs[i]);
        if (k == order.size() || layoutFrontier(kept, B, maxStates, std::string(), scratch)) break;
    }
    std::vector<Pair> kept;
    for (size_t i = 0; i < pairs.size(); ++i) {
        if (!cut[i]) {
            kept.push_back(std::move(pairs[i]));
            continue;
        }
        Pair& p = pairs[i];
        auto& ua = unaryTime[static_cast<size_t>(p.a)];
        auto& ub = unaryTime[static_cast<size_t>(p.b)];
        const size_t da = ua.size(), db = ub.size();
        std::vector<double> row(da, 0.0), col(db, 0.0);
        double mean = 0;
        for (size_t sa = 0; sa < da; ++sa)
            for (size_t sb = 0; sb < db; ++sb) {
                const double c = p.cost[sa * db + sb];
                row[sa] += c / static_cast<double>(db);
                col[sb] += c / static_cast<double>(da);
                mean += c / static_cast<double>(da * db);
            }
        for (size_t sa = 0; sa < da; ++sa) ua[sa] += row[sa] - mean;
        for (size_t sb = 0; sb < db; ++sb) ub[sb] += col[sb];
        for (size_t sa = 0; sa < da; ++sa)
            for (size_t sb = 0; sb < db; ++sb) p.cost[sa * db + sb] -= row[sa] - mean + col[sb];
        p.table = 0;  // its residual: no longer the table it was priced as
        cutPairs.push_back(std::move(p));
    }
    pairs = std::move(kept);
    pairIndex.clear();
    for (size_t i = 0; i < pairs.size(); ++i) pairIndex[{pairs[i].a, pairs[i].b}] = i;
}

double PlanProblem::Impl::cutGap(const std::vector<int32_t>& s) const {
    double gap = 0;
    for (const Pair& p : cutPairs) {
        const auto db = static_cast<size_t>(strategies(p.b));
        const double at = p.cost[static_cast<size_t>(s[static_cast<size_t>(p.a)]) * db + static_cast<size_t>(s[static_cast<size_t>(p.b)])];
        gap += at - *std::min_element(p.cost.begin(), p.cost.end());
    }
    return gap;
}

Result<PlanProblem> PlanProblem::build(const Graph& graph, AnalysisReport analysis, const CostModel& model,
                                       const Measurements& measurements, const ProblemOptions& options) {
    return build(graph, std::make_shared<const AnalysisReport>(std::move(analysis)), model, measurements, options);
}

Result<PlanProblem> PlanProblem::withNodeTerms(const Graph& graph, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                               const Measurements& measurements, const ProblemOptions& options) {
    if (!analysis) return makeError("plan.internal", "no analysis to build the problem on");
    const MemoryPolicy& policy = options.policy;
    PlanProblem p;
    p.m->g = &graph;
    p.m->threads = resolveThreads(options.threads);
    p.m->policy = policy;
    p.m->variants = policy.recompute == RecomputePolicy::Auto ? 2 : 1;
    p.m->variantRc[0] = policy.recompute == RecomputePolicy::All || recomputesByLayer(policy.recompute);
    p.m->analysisStore = std::move(analysis);
    p.m->modelStore = model;
    for (const ParallelBlock& b : p.m->analysis().blocks.blocks) {
        if (b.strategies.empty() || b.strategies.front().memberFactors.size() != b.members.size())
            return makeError("plan.internal", "block " + std::to_string(b.id) + " has no strategies with member factors");
        p.m->blockBase.push_back(static_cast<int32_t>(b.strategies.size()));
    }
    if (!measurements.calibration.empty()) p.m->modelStore->setCalibration(measurements.calibration);
    p.m->shareRepeated = options.shareRepeatedSegments;
    CFP_TRY(p.m->buildStates(measurements.kernels));
    p.m->buildNodeTerms();
    return p;
}

std::optional<std::pair<RepeatRun, Segment>> PlanProblem::Impl::repeatedLayer() const {
    const std::vector<RepeatRun> runs = repeatRuns(cover());
    const auto run = std::max_element(runs.begin(), runs.end(), [](const RepeatRun& x, const RepeatRun& y) { return x.count < y.count; });
    if (run == runs.end() || run->count < 3) return std::nullopt;
    return std::make_pair(*run, cover().segments[static_cast<size_t>(run->firstSegment + run->count / 2)]);
}

Result<std::vector<int64_t>> PlanProblem::Impl::deeperCopies(int64_t extra, int layers) const {
    const auto layer = repeatedLayer();
    // The layers: one segment each, all of one type, the first and the last possibly merged
    // into the segments around them (the embedding, the head).
    if (!layer || layer->first.count > layers || layer->first.count < layers - 2)
        return makeError("plan.no_layers", "the shorter model's " + std::to_string(layers) + " layers are not a run of repeated segments (" +
                                               describeCover(cover()) + ")");
    // An interior one stands for the layers left out too.
    const Segment& inner = layer->second;
    std::vector<int64_t> copies(unaryMemSum.size(), 1);
    for (int b = inner.firstBlock; b < inner.firstBlock + inner.blockCount; ++b) copies[static_cast<size_t>(b)] = 1 + extra;
    return copies;
}

Result<std::pair<PlanProblem, std::vector<int64_t>>> PlanProblem::shorterNodeTerms(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis,
                                                                                    const CostModel& model, const Measurements& measurements,
                                                                                    const ProblemOptions& options, int64_t extra, int layers) {
    auto p = withNodeTerms(shorter, std::move(analysis), model, measurements, options);
    if (!p) return p.error();
    auto copies = p->m->deeperCopies(extra, layers);
    if (!copies) return copies.error();
    return std::make_pair(std::move(*p), std::move(*copies));
}

Result<int64_t> PlanProblem::leastMemoryDeeper(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                               const Measurements& measurements, const ProblemOptions& options, int64_t extra, int layers) {
    auto p = shorterNodeTerms(shorter, std::move(analysis), model, measurements, options, extra, layers);
    if (!p) return p.error();
    return p->first.m->leastMemory([](int, int) { return true; }, nullptr, &p->second);
}

Result<PlanProblem> PlanProblem::buildDeeper(const Graph& shorter, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                             const Measurements& measurements, const ProblemOptions& options, int64_t extra, int layers) {
    auto p = shorterNodeTerms(shorter, std::move(analysis), model, measurements, options, extra, layers);
    if (!p) return p.error();
    auto built = finishBuild(std::move(p->first), options, &p->second);
    if (!built) return built.error();
    return deeper(std::move(*built), extra);
}

Result<PlanProblem> PlanProblem::deeper(PlanProblem shorter, int64_t extra) {
    const Impl& S = *shorter.m;
    const SegmentCover& cover = S.cover();
    auto refuse = [&](const std::string& why) {
        return makeError("plan.no_layers", "the model cannot be planned from its " + std::to_string(S.blockCount()) + "-block copy: " + why);
    };
    if (extra < 0) return refuse("a negative layer count");
    if (S.termsOnly) return refuse("its layers were repeated already");
    if (!S.cutPairs.empty()) return refuse("pair terms were cut to fit its frontier");
    const auto layer = S.repeatedLayer();
    if (!layer) return refuse("no run of 3 or more alike segments (" + describeCover(cover) + ")");
    const auto& [run, inner] = *layer;
    const int f = inner.firstBlock, n = inner.blockCount, B = S.blockCount();
    const int runStart = run.firstBlock, runEnd = run.firstBlock + run.count * n;
    const int64_t add = extra * n;
    if (static_cast<int64_t>(B) + add > std::numeric_limits<int32_t>::max()) return refuse("too many blocks");
    auto in = [](int b, int lo, int hi) { return b >= lo && b < hi; };
    // Fixed ops (in no block) in the layers and the edges between them would be counted once per
    // layer in the constant: the copy's constant stands for the deeper model's only where they cost
    // nothing (the segments need not start where layers do, so every layer's are checked).
    {
        const std::vector<int32_t> unit = layerUnits(*S.g);
        const int32_t lastLayer = layerCount(unit) - 1;
        for (const Op& op : S.g->ops()) {
            const auto k = static_cast<size_t>(op.id);
            // An op of the repeated segment outside every layer (a per-layer term of the loss) puts
            // work in the pool of the ops outside layers, which overlapped collectives there hide
            // behind (cost/op_cost.h overlapCover): that pool grows with the layers.
            if (in(S.owner[k], f, f + n) && unit[k] < 0) return refuse("its repeated segment has ops outside the layers (" + op.name + ")");
            // Ops outside the layers that read an interior layer's values (a per-layer term summed
            // into the loss) are as many as the layers: the same.
            if (unit[k] < 0)
                for (const OpId u : op.operands)
                    if (const int32_t from = unit[static_cast<size_t>(u)]; from > 0 && from < lastLayer)
                        return refuse("an op outside the layers reads an interior layer (" + op.name + ")");
            if (S.owner[k] >= 0 || unit[k] < 0) continue;
            const OpState& os = S.st(op.id, 0);
            if (os.kernel + os.own != 0 || os.memSum != 0) return refuse("a fixed op in a layer costs time or memory (" + op.name + ")");
            for (size_t i = 0; i < op.operands.size(); ++i)
                if (S.owner[static_cast<size_t>(op.operands[i])] < 0 && S.edge(op.operands[i], 0, op.id, 0, i) != 0)
                    return refuse("an edge between fixed ops in a layer costs time (into " + op.name + ")");
        }
    }
    // The pairs between consecutive layers: those from the layer before into the repeated one
    // (repeated with it) must be those from it into the next one, shifted by a layer.
    std::map<std::pair<int, int>, const Impl::Pair*> into, outOf;
    for (const Impl::Pair& p : S.pairs) {
        if (in(p.a, f - n, f) && in(p.b, f, f + n)) into[{p.a + n, p.b + n}] = &p;
        if (in(p.a, f, f + n) && in(p.b, f + n, f + 2 * n)) outOf[{p.a, p.b}] = &p;
    }
    if (into.size() != outOf.size()) return refuse("the pairs into the next layer are not those from the layer before");
    for (const auto& [key, p] : outOf) {
        const auto it = into.find(key);
        if (it == into.end() || !((p->table != 0 && p->table == it->second->table) || p->cost == it->second->cost))
            return refuse("the pairs into the next layer are not those from the layer before");
    }
    PlanProblem out;
    Impl& D = *out.m;
    D.g = S.g;
    D.threads = S.threads;
    D.analysisStore = S.analysisStore;
    D.modelStore = S.modelStore;
    D.ruleStore = S.ruleStore;
    D.policy = S.policy;
    D.variants = S.variants;
    D.variantRc[0] = S.variantRc[0];
    D.variantRc[1] = S.variantRc[1];
    D.constTime = S.constTime;
    D.constMemSum = S.constMemSum;
    D.constMemMax = S.constMemMax;
    D.termsOnly = true;
    D.tablesPriced = S.tablesPriced;
    // Blocks: those up to the repeated segment's end, its blocks `extra` times more, the rest.
    std::vector<int> source;  // per block of the deeper problem: its block here
    source.reserve(static_cast<size_t>(B + add));
    for (int b = 0; b < f + n; ++b) source.push_back(b);
    for (int64_t k = 0; k < extra; ++k)
        for (int j = 0; j < n; ++j) source.push_back(f + j);
    for (int b = f + n; b < B; ++b) source.push_back(b);
    for (const int b : source) {
        const auto bs = static_cast<size_t>(b);
        D.blockBase.push_back(S.blockBase[bs]);
        D.unaryTime.push_back(S.unaryTime[bs]);
        D.unaryMemSum.push_back(S.unaryMemSum[bs]);
        D.unaryMemMax.push_back(S.unaryMemMax[bs]);
        D.choiceList.push_back(S.choiceList[bs]);
    }
    D.sourceBlock.assign(source.begin(), source.end());
    auto shifted = [&](int b) { return b < f + n ? b : static_cast<int>(b + add); };
    for (const Impl::Pair& p : S.pairs) {
        const bool aIn = in(p.a, f, f + n), bIn = in(p.b, f, f + n);
        auto put = [&](int a, int b) {
            Impl::Pair q = p;
            q.a = a;
            q.b = b;
            D.pairs.push_back(std::move(q));
        };
        if (aIn && bIn) {
            for (int64_t k = 0; k <= extra; ++k) put(static_cast<int>(p.a + k * n), static_cast<int>(p.b + k * n));
        } else if (bIn && in(p.a, f - n, f)) {
            for (int64_t k = 0; k <= extra; ++k) put(static_cast<int>(p.a + k * n), static_cast<int>(p.b + k * n));
        } else if (aIn && in(p.b, f + n, f + 2 * n)) {
            put(static_cast<int>(p.a + add), shifted(p.b));
        } else if (aIn || bIn) {
            return refuse("a pair term reaches its repeated layer from farther than the layer before (blocks " + std::to_string(p.a) + " and " +
                          std::to_string(p.b) + ")");
        } else if (p.a < f && p.b >= f + n && (p.a >= runStart || p.b < runEnd)) {
            return refuse("a pair term skips a layer (blocks " + std::to_string(p.a) + " and " + std::to_string(p.b) + ")");
        } else {
            put(shifted(p.a), shifted(p.b));
        }
    }
    std::stable_sort(D.pairs.begin(), D.pairs.end(), [](const Impl::Pair& x, const Impl::Pair& y) { return x.b < y.b || (x.b == y.b && x.a < y.a); });
    for (size_t i = 0; i < D.pairs.size(); ++i) D.pairIndex[{D.pairs[i].a, D.pairs[i].b}] = i;
    // The cover: the repeated segment `extra` times more in the run.
    auto cv = std::make_shared<SegmentCover>(cover);
    std::vector<Segment> segments;
    for (const Segment& sg : cover.segments) {
        Segment t = sg;
        t.firstBlock = shifted(sg.firstBlock);
        segments.push_back(t);
        if (sg.firstBlock == f)
            for (int64_t k = 1; k <= extra; ++k) segments.push_back(Segment{sg.type, static_cast<int>(f + k * n), n});
    }
    cv->segments = std::move(segments);
    D.deeperCover = std::move(cv);
    D.source = std::make_shared<const PlanProblem>(std::move(shorter));
    return out;
}

Result<PlanProblem> PlanProblem::build(const Graph& graph, std::shared_ptr<const AnalysisReport> analysis, const CostModel& model,
                                       const Measurements& measurements, const ProblemOptions& options) {
    auto built = withNodeTerms(graph, std::move(analysis), model, measurements, options);
    if (!built) return built.error();
    return finishBuild(std::move(*built), options, nullptr);
}

Result<PlanProblem> PlanProblem::finishBuild(PlanProblem p, const ProblemOptions& options, const std::vector<int64_t>* copies) {
    // A mesh that cannot fit is said so before any pair term (the frontier's too).
    if (options.infeasibleAbove > 0)
        if (const int64_t bound = copies ? p.m->leastMemory([](int, int) { return true; }, nullptr, copies) : p.m->leastMemoryBound();
            bound > options.infeasibleAbove) {
            if (options.leastMemoryOnTooLarge) *options.leastMemoryOnTooLarge = bound;
            return noPlanFits(options.meshLabel, options.infeasibleAbove, bound);
        }
    if (options.frontierCap > 0)
        if (Status frontier = p.m->checkFrontierPrefix(options.frontierCap, options.meshLabel); !frontier) {
            // Turned away for its frontier: what every plan here needs at least, for the caller to
            // tell a mesh that cannot fit from one worth planning with the frontier cut.
            if (options.leastMemoryOnTooLarge) *options.leastMemoryOnTooLarge = p.m->leastMemoryBound();
            return frontier.error();
        }
    p.m->buildEdgeTerms();
    p.m->separatePairs();
    p.m->cutWideFrontier(options.frontierLimit);
    p.m->choiceList.resize(p.m->analysis().blocks.blocks.size());
    for (int b = 0; b < static_cast<int>(p.m->choiceList.size()); ++b)
        for (int s = 0; s < p.m->strategies(b); ++s) p.m->choiceList[static_cast<size_t>(b)].push_back(p.m->choice(b, s));
    return p;
}

double PlanProblem::Impl::objective(const std::vector<int32_t>& s) const {
    double t = constTime;
    for (size_t b = 0; b < unaryTime.size(); ++b) t += unaryTime[b][static_cast<size_t>(s[b])];
    for (const std::vector<Pair>* list : {&pairs, &cutPairs})
        for (const auto& p : *list)
            t += p.cost[static_cast<size_t>(s[static_cast<size_t>(p.a)]) * static_cast<size_t>(strategies(p.b)) +
                        static_cast<size_t>(s[static_cast<size_t>(p.b)])];
    return t;
}

double PlanProblem::objective(const Assignment& assignment) const { return m->objective(m->indices(assignment)); }

MemoryBreakdown PlanProblem::memoryBreakdown(const Assignment& assignment) const {
    const Impl& P = *m;
    const std::vector<int32_t> strategy = P.indices(assignment);
    const Graph& graph = *P.g;
    MemoryBreakdown mb;
    std::vector<int64_t> act(P.analysis().blocks.blocks.size(), 0);
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
        if (op.kind == OpKind::Parameter) {  // as computeOpState's memSum (ZeRO stages, resident weights)
            const MemoryBreakdown held = parameterMemory(op, own, P.replicas(os.result), P.policy, !P.resident.empty() && P.resident[k]);
            mb.weights += held.weights;
            mb.gradients += held.gradients;
            mb.optimizer += held.optimizer;
            mb.activations += held.activations;
            continue;
        }
        mb.activations += rc ? os.memSumRc : os.memSum;
        const bool group = o >= 0 && op.phase != Phase::Optimizer;
        mb.transient = std::max(mb.transient, os.memMax + (group ? act[static_cast<size_t>(o)] : 0));
    }
    return mb;
}

int64_t PlanProblem::Impl::memory(const std::vector<int32_t>& s) const {
    int64_t sum = constMemSum, mx = constMemMax;
    for (size_t b = 0; b < unaryMemSum.size(); ++b) {
        sum += unaryMemSum[b][static_cast<size_t>(s[b])];
        mx = std::max(mx, unaryMemMax[b][static_cast<size_t>(s[b])]);
    }
    return sum + mx;
}

int64_t PlanProblem::memory(const Assignment& assignment) const { return m->memory(m->indices(assignment)); }

Status PlanProblem::checkAssignment(const Assignment& assignment) const {
    if (static_cast<int>(assignment.size()) != blockCount())
        return makeError("plan.mismatch", "the assignment has " + std::to_string(assignment.size()) + " blocks, the problem " +
                                              std::to_string(blockCount()));
    for (int b = 0; b < blockCount(); ++b)
        if (m->indexOf(b, assignment[static_cast<size_t>(b)]) < 0)
            return makeError("plan.mismatch", "block " + std::to_string(b) + ": strategy " + std::to_string(assignment[static_cast<size_t>(b)].strategy) +
                                                  (assignment[static_cast<size_t>(b)].recompute ? " recomputed" : "") + " is not one of its choices");
    return {};
}

Result<StrategyMask> PlanProblem::applyPins(const std::vector<Pin>& pins) const {
    const auto& blocks = m->analysis().blocks.blocks;
    const auto& cover = m->analysis().cover;
    StrategyMask mask(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) mask[b].assign(blocks[b].strategies.size(), 1);
    auto strategyOf = [&](int block, const std::string& text, const Pin& pin) -> Result<int> {
        const auto& st = blocks[static_cast<size_t>(block)].strategies;
        for (size_t s = 0; s < st.size(); ++s)
            if (st[s].label == text) return static_cast<int>(s);
        char* end = nullptr;
        const long v = std::strtol(text.c_str(), &end, 10);
        if (!text.empty() && end && *end == '\0' && v >= 0 && v < static_cast<long>(st.size())) return static_cast<int>(v);
        std::string known;
        for (size_t s = 0; s < st.size() && s < 12; ++s) known += (s ? ", " : "") + st[s].label;
        return makeError("plan.bad_pin", "pin '" + pin.toString() + "': block " + std::to_string(block) + " has no strategy '" + text +
                                             "' (strategies: " + known + (st.size() > 12 ? ", …" : "") + ")");
    };
    auto restrict = [&](int block, int s) {
        for (size_t k = 0; k < mask[static_cast<size_t>(block)].size(); ++k)
            mask[static_cast<size_t>(block)][k] = mask[static_cast<size_t>(block)][k] && static_cast<int>(k) == s;
    };
    for (const Pin& pin : pins) {
        const std::string text = pin.toString();
        if (pin.scope == Pin::Scope::Block) {
            if (pin.index < 0 || pin.index >= static_cast<int32_t>(blocks.size()))
                return makeError("plan.bad_pin", "pin '" + text + "': no block 'b" + std::to_string(pin.index) + "' (blocks b0…b" +
                                                     std::to_string(blocks.size() - 1) + ")");
            if (pin.strategies.size() != 1 || !pin.strategies.front())
                return makeError("plan.bad_pin", "pin '" + text + "': a block pin names one strategy");
            auto s = strategyOf(pin.index, *pin.strategies.front(), pin);
            if (!s) return s.error();
            restrict(pin.index, *s);
            continue;
        }
        std::vector<int> segs;
        if (pin.scope == Pin::Scope::SegmentType) {
            if (pin.index < 0 || pin.index >= static_cast<int32_t>(cover.types.size()))
                return makeError("plan.bad_pin", "pin '" + text + "': no segment type 'T" + std::to_string(pin.index) + "' (types T0…T" +
                                                     std::to_string(cover.types.size() - 1) + ")");
            for (size_t i = 0; i < cover.segments.size(); ++i)
                if (cover.segments[i].type == pin.index) segs.push_back(static_cast<int>(i));
        } else {
            if (pin.index < 0 || pin.index >= static_cast<int32_t>(cover.segments.size()))
                return makeError("plan.bad_pin", "pin '" + text + "': no segment '" + std::to_string(pin.index) + "' (segments 0…" +
                                                     std::to_string(cover.segments.size() - 1) + ", or T<k> for a type)");
            segs.push_back(pin.index);
        }
        for (int si : segs) {
            const Segment& seg = cover.segments[static_cast<size_t>(si)];
            if (static_cast<int>(pin.strategies.size()) != seg.blockCount)
                return makeError("plan.bad_pin", "pin '" + text + "': segment " + std::to_string(si) + " has " +
                                                     std::to_string(seg.blockCount) + " blocks, the pin gives " +
                                                     std::to_string(pin.strategies.size()) + " strategies (use ';' between multi-axis labels)");
            for (int k = 0; k < seg.blockCount; ++k) {
                const auto& entry = pin.strategies[static_cast<size_t>(k)];
                if (!entry) continue;
                auto s = strategyOf(seg.firstBlock + k, *entry, pin);
                if (!s) return s.error();
                restrict(seg.firstBlock + k, *s);
            }
        }
    }
    return mask;
}

PlanProblem::Splits PlanProblem::splits(const Assignment& assignment) const {
    const Impl& P = *m;
    const Impl& Q = P.termsOnly ? *P.source->m : P;  // whose op states
    const Mesh& mesh = Q.model().mesh();
    // Per block of Q, the blocks of this problem that take its states.
    std::vector<std::vector<int32_t>> takers(static_cast<size_t>(Q.blockCount()));
    for (int b = 0; b < P.blockCount(); ++b)
        takers[static_cast<size_t>(P.termsOnly ? P.sourceBlock[static_cast<size_t>(b)] : b)].push_back(b);
    Splits out;
    for (const Op& op : Q.g->ops()) {
        if (op.kind != OpKind::Parameter) continue;
        const bool weight = op.role == ParamRole::Trainable, input = op.role == ParamRole::Input && op.type.rank() >= 2;
        if (!weight && !input) continue;
        const int32_t o = Q.owner[static_cast<size_t>(op.id)];
        auto under = [&](int s) {
            const TensorSharding t = fromCompact(Q.st(op.id, s).result, mesh);
            if (weight) {
                out.weightBytes += op.type.bytes();
                for (const auto& axes : t.dims())
                    for (const std::string& a : axes) out.weightsOver[a] += op.type.bytes();
            }
            if (input)
                for (const std::string& a : t.dimAxes(1))
                    if (std::find(out.sequence.begin(), out.sequence.end(), a) == out.sequence.end()) out.sequence.push_back(a);
        };
        if (o < 0)
            under(0);
        else
            for (const int32_t b : takers[static_cast<size_t>(o)]) under(assignment[static_cast<size_t>(b)].strategy);
    }
    return out;
}

void PlanProblem::fillPlan(const Assignment& assignment, const StrategyMask& pinned, Plan& plan) const {
    const Impl& P = *m;
    const std::vector<int32_t> strategy = P.indices(assignment);
    const Graph& graph = *P.g;
    const Mesh& mesh = P.model().mesh();
    plan.mesh = mesh;
    plan.blocks.clear();
    for (int b = 0; b < blockCount(); ++b) {
        const auto& blk = P.analysis().blocks.blocks[static_cast<size_t>(b)];
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
    for (size_t si = 0; si < P.analysis().cover.segments.size(); ++si) {
        const Segment& seg = P.analysis().cover.segments[si];
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

}  // namespace cfp
