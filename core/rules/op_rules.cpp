#include "rules/op_rules.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "sharding/hlo_sharding.h"

namespace cfp {

std::string_view factorKindName(FactorKind k) {
    switch (k) {
        case FactorKind::PassThrough: return "pass";
        case FactorKind::Reduction: return "reduction";
        case FactorKind::Blocked: return "blocked";
    }
    return "?";
}

namespace {

std::string factorLetter(int32_t f) {
    if (f < 26) return std::string(1, static_cast<char>('i' + f > 'z' ? 'a' + (f - 18) : 'i' + f));
    return "f" + std::to_string(f);
}

const std::vector<int64_t>& operandDimsOf(const Graph& g, const Op& op, size_t i) {
    return g.op(op.operands.at(i)).type.dims;
}

int32_t addFactor(OpShardingRule& r, int64_t size, FactorKind kind, FactorRole role = FactorRole::Dim) {
    r.factors.push_back(Factor{size, kind, role});
    return r.factorCount() - 1;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// One pass-through factor per result dim; operands of the result's rank map dim for dim (a rank-0
// operand, e.g. a scalar select predicate, maps nothing).
OpShardingRule elementwiseRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    for (int64_t d : op.type.dims) {
        (void)d;
        addFactor(r, d, FactorKind::PassThrough);
    }
    r.resultDims.resize(op.type.dims.size());
    std::iota(r.resultDims.begin(), r.resultDims.end(), 0);
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const auto& dims = operandDimsOf(g, op, i);
        if (dims == op.type.dims)
            r.operandDims.push_back(r.resultDims);
        else
            r.operandDims.emplace_back(dims.size(), kNoFactor);
    }
    return r;
}

OpShardingRule sourceRule(const Graph&, const Op& op) {
    OpShardingRule r;
    for (int64_t d : op.type.dims) r.resultDims.push_back(addFactor(r, d, FactorKind::PassThrough));
    return r;
}

OpShardingRule broadcastRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    for (int64_t d : op.type.dims) r.resultDims.push_back(addFactor(r, d, FactorKind::PassThrough));
    const auto& in = operandDimsOf(g, op, 0);
    std::vector<int32_t> map(in.size(), kNoFactor);
    for (size_t i = 0; i < in.size() && i < op.attrs.dimensions.size(); ++i) {
        const int64_t rd = op.attrs.dimensions[i];
        if (rd >= 0 && rd < op.type.rank() && op.type.dims[static_cast<size_t>(rd)] == in[i])
            map[i] = static_cast<int32_t>(rd);
    }
    r.operandDims.push_back(std::move(map));
    return r;
}

// Dims are grouped into runs with equal products; within a group only the major-most non-unit
// dims of both sides correspond (a split of either into p contiguous blocks is the same split of
// the other exactly when p divides both sizes, hence a factor of size gcd). Every other dim is
// blocked: splitting a minor sub-dimension would interleave pieces.
OpShardingRule reshapeRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const auto& a = operandDimsOf(g, op, 0);
    const auto& b = op.type.dims;
    std::vector<int32_t> in(a.size(), kNoFactor), out(b.size(), kNoFactor);
    const bool hasZero = std::find(a.begin(), a.end(), 0) != a.end() || std::find(b.begin(), b.end(), 0) != b.end();
    size_t i = 0, j = 0;
    bool ok = !hasZero;
    while (ok && (i < a.size() || j < b.size())) {
        const size_t gi = i, gj = j;
        int64_t pa = i < a.size() ? a[i++] : 1;
        int64_t pb = j < b.size() ? b[j++] : 1;
        while (pa != pb) {
            if (pa < pb) {
                if (i >= a.size()) { ok = false; break; }
                pa *= a[i++];
            } else {
                if (j >= b.size()) { ok = false; break; }
                pb *= b[j++];
            }
        }
        if (!ok) break;
        auto major = [](const std::vector<int64_t>& d, size_t from, size_t to) {
            for (size_t k = from; k < to; ++k)
                if (d[k] > 1) return k;
            return from;
        };
        const size_t ma = major(a, gi, i), mb = major(b, gj, j);
        if (ma < i && mb < j) {
            const int32_t f = addFactor(r, std::gcd(a[ma], b[mb]), FactorKind::PassThrough);
            in[ma] = f;
            out[mb] = f;
        }
        for (size_t k = gi; k < i; ++k)
            if (in[k] == kNoFactor) in[k] = addFactor(r, a[k], FactorKind::Blocked);
        for (size_t k = gj; k < j; ++k)
            if (out[k] == kNoFactor) out[k] = addFactor(r, b[k], FactorKind::Blocked);
    }
    if (!ok) {  // sizes do not regroup (malformed): everything blocked
        r = OpShardingRule{};
        in.assign(a.size(), kNoFactor);
        out.assign(b.size(), kNoFactor);
        for (size_t k = 0; k < a.size(); ++k) in[k] = addFactor(r, a[k], FactorKind::Blocked);
        for (size_t k = 0; k < b.size(); ++k) out[k] = addFactor(r, b[k], FactorKind::Blocked);
    }
    r.operandDims.push_back(std::move(in));
    r.resultDims = std::move(out);
    return r;
}

OpShardingRule transposeRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const auto& in = operandDimsOf(g, op, 0);
    std::vector<int32_t> map;
    for (int64_t d : in) map.push_back(addFactor(r, d, FactorKind::PassThrough));
    for (int64_t p : op.attrs.dimensions) r.resultDims.push_back(map.at(static_cast<size_t>(p)));
    r.operandDims.push_back(std::move(map));
    return r;
}

OpShardingRule sliceRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const auto& in = operandDimsOf(g, op, 0);
    const SliceBounds& s = op.attrs.slice;
    std::vector<int32_t> map;
    for (size_t d = 0; d < in.size(); ++d) {
        const bool whole = s.start.at(d) == 0 && s.limit.at(d) == in[d] && (s.stride.empty() || s.stride.at(d) == 1);
        map.push_back(addFactor(r, op.type.dims[d], whole ? FactorKind::PassThrough : FactorKind::Blocked));
    }
    r.resultDims = map;
    r.operandDims.push_back(std::move(map));
    return r;
}

OpShardingRule concatenateRule(const Graph&, const Op& op) {
    OpShardingRule r;
    const int64_t axis = op.attrs.dimensions.empty() ? 0 : op.attrs.dimensions[0];
    for (int64_t d = 0; d < op.type.rank(); ++d)
        r.resultDims.push_back(addFactor(r, op.type.dims[static_cast<size_t>(d)],
                                         d == axis ? FactorKind::Blocked : FactorKind::PassThrough));
    r.operandDims.assign(op.operands.size(), r.resultDims);
    return r;
}

OpShardingRule reduceRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const auto& in = operandDimsOf(g, op, 0);
    // A sum, maximum or minimum over a split dim is a partial result each device combines with the
    // others' (an all-reduce with that operator: NCCL's sum, max, min), as vocabulary-parallel
    // cross-entropy takes the row maxima over a vocabulary split across tensor-parallel ranks.
    const ReduceKind kind = op.attrs.reduceKind;
    const FactorKind reduced = kind == ReduceKind::Add || kind == ReduceKind::Max || kind == ReduceKind::Min ? FactorKind::Reduction : FactorKind::Blocked;
    std::vector<int32_t> map;
    for (size_t d = 0; d < in.size(); ++d) {
        const bool isReduced = contains(op.attrs.dimensions, static_cast<int64_t>(d));
        const int32_t f = addFactor(r, in[d], isReduced ? reduced : FactorKind::PassThrough);
        map.push_back(f);
        if (!isReduced) r.resultDims.push_back(f);
    }
    r.operandDims.push_back(std::move(map));
    // Remaining operands (init values, when present) are scalars.
    for (size_t i = 1; i < op.operands.size(); ++i) r.operandDims.emplace_back(operandDimsOf(g, op, i).size(), kNoFactor);
    return r;
}

// Factors in a fixed order: batch, lhs free, rhs free, contracting (FactorRole tells which).
OpShardingRule dotRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const DotDimensionNumbers& d = op.attrs.dot;
    const auto& lhs = operandDimsOf(g, op, 0);
    const auto& rhs = operandDimsOf(g, op, 1);
    std::vector<int32_t> lm(lhs.size(), kNoFactor), rm(rhs.size(), kNoFactor);
    for (size_t k = 0; k < d.lhsBatch.size(); ++k) {
        const auto l = static_cast<size_t>(d.lhsBatch[k]);
        const int32_t f = addFactor(r, lhs[l], FactorKind::PassThrough, FactorRole::DotBatch);
        lm[l] = f;
        rm[static_cast<size_t>(d.rhsBatch[k])] = f;
        r.resultDims.push_back(f);
    }
    for (size_t l = 0; l < lhs.size(); ++l) {
        if (contains(d.lhsBatch, static_cast<int64_t>(l)) || contains(d.lhsContracting, static_cast<int64_t>(l))) continue;
        lm[l] = addFactor(r, lhs[l], FactorKind::PassThrough, FactorRole::DotLhsFree);
        r.resultDims.push_back(lm[l]);
    }
    for (size_t l = 0; l < rhs.size(); ++l) {
        if (contains(d.rhsBatch, static_cast<int64_t>(l)) || contains(d.rhsContracting, static_cast<int64_t>(l))) continue;
        rm[l] = addFactor(r, rhs[l], FactorKind::PassThrough, FactorRole::DotRhsFree);
        r.resultDims.push_back(rm[l]);
    }
    for (size_t k = 0; k < d.lhsContracting.size(); ++k) {
        const auto l = static_cast<size_t>(d.lhsContracting[k]);
        const int32_t f = addFactor(r, lhs[l], FactorKind::Reduction, FactorRole::DotContracting);
        lm[l] = f;
        rm[static_cast<size_t>(d.rhsContracting[k])] = f;
    }
    r.operandDims.push_back(std::move(lm));
    r.operandDims.push_back(std::move(rm));
    return r;
}

// Result batch dims (non-offset) follow the index batch dims; offset dims follow the operand's
// window dims (pass-through when the window is the whole dim). A collapsed, indexed table dim with
// slice size 1 is a Reduction: vocab-parallel lookup, each device contributes its rows, zeros else.
OpShardingRule gatherRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const GatherDimensionNumbers& gd = op.attrs.gather;
    const auto& table = operandDimsOf(g, op, 0);
    const auto& idx = operandDimsOf(g, op, 1);
    std::vector<int32_t> tm(table.size(), kNoFactor), im(idx.size(), kNoFactor);
    r.resultDims.assign(op.type.dims.size(), kNoFactor);
    std::vector<int64_t> batchResultDims;
    for (int64_t d = 0; d < op.type.rank(); ++d)
        if (!contains(gd.offsetDims, d)) batchResultDims.push_back(d);
    size_t next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(idx.size()); ++d) {
        if (d == gd.indexVectorDim) {
            im[static_cast<size_t>(d)] = addFactor(r, idx[static_cast<size_t>(d)], FactorKind::Blocked);
            continue;
        }
        const int32_t f = addFactor(r, idx[static_cast<size_t>(d)], FactorKind::PassThrough);
        im[static_cast<size_t>(d)] = f;
        if (next < batchResultDims.size()) r.resultDims[static_cast<size_t>(batchResultDims[next++])] = f;
        // A batching dim: the table dim it pairs with is read at this index, as a dot's batch dim.
        for (size_t j = 0; j < gd.startIndicesBatchingDims.size() && j < gd.operandBatchingDims.size(); ++j)
            if (gd.startIndicesBatchingDims[j] == d) tm[static_cast<size_t>(gd.operandBatchingDims[j])] = f;
    }
    size_t window = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(table.size()); ++k) {
        const auto ku = static_cast<size_t>(k);
        if (contains(gd.operandBatchingDims, k)) continue;
        const int64_t sliceSize = ku < gd.sliceSizes.size() ? gd.sliceSizes[ku] : table[ku];
        if (contains(gd.collapsedSliceDims, k)) {
            const bool lookup = contains(gd.startIndexMap, k) && sliceSize == 1;
            tm[ku] = addFactor(r, table[ku], lookup ? FactorKind::Reduction : FactorKind::Blocked);
            continue;
        }
        const int64_t rd = window < gd.offsetDims.size() ? gd.offsetDims[window++] : -1;
        if (sliceSize == table[ku] && rd >= 0) {
            const int32_t f = addFactor(r, table[ku], FactorKind::PassThrough);
            tm[ku] = f;
            r.resultDims[static_cast<size_t>(rd)] = f;
        } else {
            tm[ku] = addFactor(r, table[ku], FactorKind::Blocked);
            if (rd >= 0) r.resultDims[static_cast<size_t>(rd)] = addFactor(r, op.type.dims[static_cast<size_t>(rd)], FactorKind::Blocked);
        }
    }
    for (auto& f : r.resultDims)
        if (f == kNoFactor) f = addFactor(r, 1, FactorKind::Blocked);
    r.operandDims.push_back(std::move(tm));
    r.operandDims.push_back(std::move(im));
    return r;
}

bool isZeroSplat(const Graph& g, OpId id) {
    const Op* op = &g.op(id);
    while (op->kind == OpKind::Broadcast || op->kind == OpKind::Convert) op = &g.op(op->operands[0]);
    if (op->kind != OpKind::Constant) return false;
    return std::all_of(op->attrs.literal.begin(), op->attrs.literal.end(), [](double v) { return v == 0.0; });
}

// Operand and result dims correspond one to one. Inserted (indexed) dims are pass-through between
// operand and result: a device holding a range of rows applies only the updates landing in it.
// The updates' scatter dims are a Reduction (partial sums of scatter-adds) when the combiner is add
// and the operand is zeros — otherwise each device would add the operand once more.
OpShardingRule scatterRule(const Graph& g, const Op& op) {
    OpShardingRule r;
    const ScatterDimensionNumbers& sd = op.attrs.scatter;
    const auto& base = operandDimsOf(g, op, 0);
    const auto& idx = operandDimsOf(g, op, 1);
    const auto& upd = operandDimsOf(g, op, 2);
    std::vector<int32_t> bm(base.size(), kNoFactor), im(idx.size(), kNoFactor), um(upd.size(), kNoFactor);
    size_t window = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(base.size()); ++k) {
        const auto ku = static_cast<size_t>(k);
        if (contains(sd.inputBatchingDims, k)) continue;  // shares the indices' batching dim's factor, below
        if (contains(sd.insertedWindowDims, k)) {
            bm[ku] = addFactor(r, base[ku], FactorKind::PassThrough);
            continue;
        }
        const int64_t ud = window < sd.updateWindowDims.size() ? sd.updateWindowDims[window++] : -1;
        if (ud >= 0 && upd[static_cast<size_t>(ud)] == base[ku]) {
            const int32_t f = addFactor(r, base[ku], FactorKind::PassThrough);
            bm[ku] = f;
            um[static_cast<size_t>(ud)] = f;
        } else {
            bm[ku] = addFactor(r, base[ku], FactorKind::Blocked);
        }
    }
    const FactorKind scattered = op.attrs.reduceKind == ReduceKind::Add && isZeroSplat(g, op.operands[0])
                                     ? FactorKind::Reduction
                                     : FactorKind::Blocked;
    std::vector<int64_t> updateScatterDims;
    for (int64_t d = 0; d < static_cast<int64_t>(upd.size()); ++d)
        if (!contains(sd.updateWindowDims, d)) updateScatterDims.push_back(d);
    size_t next = 0;
    for (int64_t d = 0; d < static_cast<int64_t>(idx.size()); ++d) {
        const auto du = static_cast<size_t>(d);
        if (d == sd.indexVectorDim) {
            im[du] = addFactor(r, idx[du], FactorKind::Blocked);
            continue;
        }
        // A batching dim pairs an operand dim with this one: each device updates its own rows.
        int64_t batched = -1;
        for (size_t j = 0; j < sd.scatterIndicesBatchingDims.size() && j < sd.inputBatchingDims.size(); ++j)
            if (sd.scatterIndicesBatchingDims[j] == d) batched = sd.inputBatchingDims[j];
        const int32_t f = addFactor(r, idx[du], batched >= 0 ? FactorKind::PassThrough : scattered);
        im[du] = f;
        if (batched >= 0) bm[static_cast<size_t>(batched)] = f;
        if (next < updateScatterDims.size()) um[static_cast<size_t>(updateScatterDims[next++])] = f;
    }
    for (auto& f : bm)
        if (f == kNoFactor) f = addFactor(r, 1, FactorKind::Blocked);
    for (auto& f : um)
        if (f == kNoFactor) f = addFactor(r, 1, FactorKind::Blocked);
    r.resultDims = bm;
    r.operandDims.push_back(std::move(bm));
    r.operandDims.push_back(std::move(im));
    r.operandDims.push_back(std::move(um));
    return r;
}

// Custom-calls an importer emits for HLO opcodes the IR has no kind for ("hlo.<opcode>"), when
// their sharding is known from the opcode and shapes. Other targets have no rule.
//   elementwise opcodes (shifts, xor, bitcast-convert of one width, rounding, erf, …): as
//     elementwise ops, every operand of the result's dims or a scalar;
//   generators (rng-bit-generator, rng): the result dims are free, the state or bounds replicated
//     (each device draws its own slice; a state of the result's shape maps dim for dim);
//   sort along a dim: that dim blocked, the others shared by every operand and the result;
//   variadic reduce (argmax): reduced dims blocked, the others pass through;
//   dynamic-slice / dynamic-update-slice: dims taken whole pass through, sliced dims blocked.
std::optional<OpShardingRule> customCallRule(const Graph& g, const Op& op) {
    static const std::set<std::string_view> kElementwise = {
        "hlo.shift-left", "hlo.shift-right-logical", "hlo.shift-right-arithmetic", "hlo.xor", "hlo.bitcast-convert",
        "hlo.bitcast", "hlo.remainder", "hlo.floor", "hlo.ceil", "hlo.erf", "hlo.erf-inv", "hlo.is-finite",
        "hlo.round-nearest-afz", "hlo.round-nearest-even", "hlo.atan2", "hlo.tan", "hlo.cbrt", "hlo.not",
        "hlo.popcnt", "hlo.clz", "hlo.reduce-precision", "hlo.stochastic-convert"};
    const std::string& t = op.attrs.target;
    const auto& dims = op.type.dims;
    if (kElementwise.count(t)) {
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const auto& od = operandDimsOf(g, op, i);
            if (od != dims && !od.empty()) return std::nullopt;
        }
        return elementwiseRule(g, op);
    }
    if (t == "hlo.rng-bit-generator" || t == "hlo.rng") return elementwiseRule(g, op);
    if (isFullToShard(op) || isShardToFull(op)) {
        // The full side's factors on one side only, the local side's blocked (op_rules.h).
        if (op.operands.size() != 1) return std::nullopt;
        const auto& in = operandDimsOf(g, op, 0);
        if (in.size() != dims.size()) return std::nullopt;
        const bool toShard = isFullToShard(op);
        OpShardingRule r;
        r.operandDims.emplace_back();
        for (size_t d = 0; d < in.size(); ++d)
            r.operandDims[0].push_back(addFactor(r, in[d], toShard ? FactorKind::PassThrough : FactorKind::Blocked));
        for (size_t d = 0; d < dims.size(); ++d)
            r.resultDims.push_back(addFactor(r, dims[d], toShard ? FactorKind::Blocked : FactorKind::PassThrough));
        return r;
    }
    if (t == "hlo.sort") {
        if (op.attrs.dimensions.size() != 1) return std::nullopt;
        OpShardingRule r;
        for (size_t d = 0; d < dims.size(); ++d)
            r.resultDims.push_back(addFactor(r, dims[d], static_cast<int64_t>(d) == op.attrs.dimensions[0]
                                                             ? FactorKind::Blocked : FactorKind::PassThrough));
        for (size_t i = 0; i < op.operands.size(); ++i) {
            if (operandDimsOf(g, op, i) != dims) return std::nullopt;
            r.operandDims.push_back(r.resultDims);
        }
        return r;
    }
    if (t == "hlo.reduce") {
        const size_t n = op.operands.size();
        if (n < 2 || n % 2 != 0) return std::nullopt;
        const auto& in = operandDimsOf(g, op, 0);
        OpShardingRule r;
        std::vector<int32_t> map;
        for (size_t d = 0; d < in.size(); ++d) {
            const bool reduced = contains(op.attrs.dimensions, static_cast<int64_t>(d));
            const int32_t f = addFactor(r, in[d], reduced ? FactorKind::Blocked : FactorKind::PassThrough);
            map.push_back(f);
            if (!reduced) r.resultDims.push_back(f);
        }
        if (r.resultDims.size() != dims.size()) return std::nullopt;
        for (size_t i = 0; i < n; ++i) {
            const auto& od = operandDimsOf(g, op, i);
            if (i < n / 2) {
                if (od != in) return std::nullopt;
                r.operandDims.push_back(map);
            } else {
                if (!od.empty()) return std::nullopt;
                r.operandDims.emplace_back();
            }
        }
        return r;
    }
    if (t == "hlo.dynamic-slice" || t == "hlo.dynamic-update-slice") {
        const bool update = t == "hlo.dynamic-update-slice";
        const size_t first = update ? 2 : 1;
        if (op.operands.size() < first) return std::nullopt;
        const auto& x = operandDimsOf(g, op, 0);
        const auto& part = update ? operandDimsOf(g, op, 1) : dims;
        if (x.size() != part.size() || (update && x != dims)) return std::nullopt;
        OpShardingRule r;
        std::vector<int32_t> xm, pm;
        for (size_t d = 0; d < x.size(); ++d) {
            const bool whole = part[d] == x[d];
            const int32_t f = addFactor(r, x[d], whole ? FactorKind::PassThrough : FactorKind::Blocked);
            xm.push_back(f);
            pm.push_back(whole ? f : addFactor(r, part[d], FactorKind::Blocked));
        }
        r.resultDims = update ? xm : pm;
        r.operandDims.push_back(xm);
        if (update) r.operandDims.push_back(pm);
        for (size_t i = first; i < op.operands.size(); ++i) {
            const auto& od = operandDimsOf(g, op, i);
            if (!od.empty()) return std::nullopt;
            r.operandDims.emplace_back();
        }
        return r;
    }
    return std::nullopt;
}

std::array<RuleFunction, kOpKindCount> makeRegistry() {
    std::array<RuleFunction, kOpKindCount> t{};
    for (int k = 0; k < kOpKindCount; ++k)
        if (isElementwise(static_cast<OpKind>(k))) t[static_cast<size_t>(k)] = &elementwiseRule;
    auto set = [&t](OpKind k, RuleFunction f) { t[static_cast<size_t>(k)] = f; };
    set(OpKind::Parameter, &sourceRule);
    set(OpKind::Constant, &sourceRule);
    set(OpKind::Iota, &sourceRule);
    set(OpKind::Broadcast, &broadcastRule);
    set(OpKind::Reshape, &reshapeRule);
    set(OpKind::Transpose, &transposeRule);
    set(OpKind::Slice, &sliceRule);
    set(OpKind::Concatenate, &concatenateRule);
    set(OpKind::Reduce, &reduceRule);
    set(OpKind::Dot, &dotRule);
    set(OpKind::Gather, &gatherRule);
    set(OpKind::Scatter, &scatterRule);
    // CustomCall: no rule in the registry; known targets through customCallRule.
    return t;
}

// ---- propagation helpers ----

// Axes of `dim` in major-to-minor order; returns the count.
int axesOnDim(const CompactSharding& s, int dim, std::array<int8_t, kMaxRuleMeshAxes>& out) {
    int n = 0;
    for (int p = 0; p < kMaxRuleMeshAxes; ++p) {
        bool found = false;
        for (int a = 0; a < kMaxRuleMeshAxes; ++a)
            if (s.dimOf[static_cast<size_t>(a)] == dim && s.position[static_cast<size_t>(a)] == p) {
                out[static_cast<size_t>(n++)] = static_cast<int8_t>(a);
                found = true;
                break;
            }
        if (!found) break;
    }
    return n;
}

int axesOnFactor(const FactorAssignment& fa, int f, std::array<int8_t, kMaxRuleMeshAxes>& out) {
    int n = 0;
    for (int p = 0; p < kMaxRuleMeshAxes; ++p) {
        bool found = false;
        for (int a = 0; a < kMaxRuleMeshAxes; ++a)
            if (fa.factorOf[static_cast<size_t>(a)] == f && fa.position[static_cast<size_t>(a)] == p) {
                out[static_cast<size_t>(n++)] = static_cast<int8_t>(a);
                found = true;
                break;
            }
        if (!found) break;
    }
    return n;
}

void setWhy(std::string* why, std::string text) {
    if (why) *why = std::move(text);
}

bool checkDivisibility(const OpShardingRule& rule, const FactorAssignment& out, const MeshSizes& mesh, std::string* why) {
    for (int32_t f = 0; f < rule.factorCount(); ++f) {
        int64_t product = 1;
        for (int a = 0; a < mesh.rank; ++a)
            if (out.factorOf[static_cast<size_t>(a)] == f) product *= mesh.size[static_cast<size_t>(a)];
        if (product > 1 && rule.factors[static_cast<size_t>(f)].size % product != 0) {
            setWhy(why, "factor " + factorLetter(f) + " of size " + std::to_string(rule.factors[static_cast<size_t>(f)].size) +
                            " is not divisible by its split " + std::to_string(product));
            return false;
        }
    }
    return true;
}

// Factors already bound: a bit mask for up to 64 factors (every rule of the built-in ops), a vector
// beyond. No allocation on the common path.
class SeenFactors {
public:
    explicit SeenFactors(size_t count) {
        if (count > 64) m_wide.assign(count, 0);
    }
    bool test(int32_t f) const {
        return m_wide.empty() ? (m_bits >> f) & 1u : m_wide[static_cast<size_t>(f)] != 0;
    }
    void set(int32_t f) {
        if (m_wide.empty())
            m_bits |= uint64_t{1} << f;
        else
            m_wide[static_cast<size_t>(f)] = 1;
    }

private:
    uint64_t m_bits = 0;
    std::vector<char> m_wide;
};

// Where a dimension sits, for messages (text built only on failure).
struct DimPlace {
    int64_t operand = -1;  // -1: the result
    size_t dim = 0;
    std::string text() const {
        return (operand < 0 ? std::string("result") : "operand " + std::to_string(operand)) + " dim " + std::to_string(dim);
    }
};

// Adds dim `axes` to factor f, or checks agreement when f already has a source.
bool bindFactor(const OpShardingRule& rule, int32_t f, const std::array<int8_t, kMaxRuleMeshAxes>& axes, int n,
                SeenFactors& seen, FactorAssignment& out, const DimPlace& place, std::string* why) {
    const Factor& factor = rule.factors[static_cast<size_t>(f)];
    if (n > 0 && factor.kind == FactorKind::Blocked) {
        setWhy(why, place.text() + " splits blocked factor " + factorLetter(f));
        return false;
    }
    if (seen.test(f)) {
        std::array<int8_t, kMaxRuleMeshAxes> have{};
        const int m = axesOnFactor(out, f, have);
        if (m != n || !std::equal(axes.begin(), axes.begin() + n, have.begin())) {
            setWhy(why, place.text() + " disagrees with another operand on factor " + factorLetter(f));
            return false;
        }
        return true;
    }
    seen.set(f);
    for (int k = 0; k < n; ++k) {
        const auto a = static_cast<size_t>(axes[static_cast<size_t>(k)]);
        if (out.factorOf[a] != -1) {
            setWhy(why, place.text() + ": mesh axis " + std::to_string(a) + " would split two factors");
            return false;
        }
        out.factorOf[a] = static_cast<int16_t>(f);
        out.position[a] = static_cast<int8_t>(k);
    }
    return true;
}

Error needsCommunication(const std::string& why) { return makeError("rules.needs_communication", why); }

}  // namespace

std::string OpShardingRule::toString() const {
    auto list = [](const std::vector<int32_t>& dims) {
        std::string s = "[";
        for (size_t d = 0; d < dims.size(); ++d) {
            if (d) s += ",";
            s += dims[d] == kNoFactor ? "_" : factorLetter(dims[d]);
        }
        return s + "]";
    };
    std::string s = "(";
    for (size_t i = 0; i < operandDims.size(); ++i) {
        if (i) s += ", ";
        s += list(operandDims[i]);
    }
    s += ") -> " + list(resultDims) + " {";
    for (int32_t f = 0; f < factorCount(); ++f) {
        if (f) s += ", ";
        s += factorLetter(f) + "=" + std::to_string(factors[static_cast<size_t>(f)].size);
        if (factors[static_cast<size_t>(f)].kind != FactorKind::PassThrough)
            s += " " + std::string(factorKindName(factors[static_cast<size_t>(f)].kind));
    }
    return s + "}";
}

const std::array<RuleFunction, kOpKindCount>& ruleRegistry() {
    static const std::array<RuleFunction, kOpKindCount> registry = makeRegistry();
    return registry;
}

bool hasShardingRule(OpKind kind) { return ruleRegistry()[static_cast<size_t>(kind)] != nullptr; }

namespace {

// An all-reduce in a manual region: elementwise, plus a reduction factor of the group size in no dim.
std::optional<OpShardingRule> manualAllReduceRule(const Graph& g, const Op& op) {
    if (op.operands.size() != 1 || operandDimsOf(g, op, 0) != op.type.dims) return std::nullopt;
    const auto& groups = op.attrs.replicaGroups;
    if (groups.empty() || groups[0].empty()) return std::nullopt;
    OpShardingRule r = elementwiseRule(g, op);
    addFactor(r, static_cast<int64_t>(groups[0].size()), FactorKind::Reduction);
    return r;
}

}  // namespace

Result<OpShardingRule> shardingRuleFor(const Graph& graph, const Op& op, Partitioning partitioning) {
    const RuleFunction fn = ruleRegistry()[static_cast<size_t>(op.kind)];
    if (op.kind == OpKind::CustomCall && partitioning == Partitioning::Manual && op.attrs.target == kAllReduceTarget)
        if (auto r = manualAllReduceRule(graph, op)) return std::move(*r);
    if (op.kind == OpKind::CustomCall)
        if (auto r = customCallRule(graph, op)) return std::move(*r);
    if (!fn) {
        std::string what = "no sharding rule for " + std::string(opKindName(op.kind));
        if (!op.attrs.target.empty()) what += " '" + op.attrs.target + "'";
        return makeError("rules.no_rule", what, op.name);
    }
    return fn(graph, op);
}

CompactSharding CompactSharding::replicated(int64_t rank) {
    CompactSharding s;
    s.rank = static_cast<int8_t>(rank);
    return s;
}

bool CompactSharding::isPartial() const {
    return std::find(dimOf.begin(), dimOf.end(), kAxisPartial) != dimOf.end();
}

CompactSharding CompactSharding::withoutPartial() const {
    CompactSharding s = *this;
    for (size_t a = 0; a < s.dimOf.size(); ++a)
        if (s.dimOf[a] == kAxisPartial) {
            s.dimOf[a] = kAxisUnused;
            s.position[a] = -1;
        }
    return s;
}

size_t CompactSharding::hash() const {
    // The two words mixed by multiplication: hashed on every resharding-cache lookup of the cost tables.
    const auto [d, p] = words();
    uint64_t h = (d ^ static_cast<uint64_t>(static_cast<uint8_t>(rank))) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 32) ^ p) * 0xbf58476d1ce4e5b9ull;
    return static_cast<size_t>(h ^ (h >> 31));
}

Result<MeshSizes> meshSizes(const Mesh& mesh) {
    if (mesh.rank() > kMaxRuleMeshAxes)
        return makeError("rules.bad_mesh", "meshes of more than " + std::to_string(kMaxRuleMeshAxes) +
                                               " axes are not supported, got " + std::to_string(mesh.rank()));
    MeshSizes m;
    m.rank = static_cast<int>(mesh.rank());
    for (int a = 0; a < m.rank; ++a) m.size[static_cast<size_t>(a)] = mesh.axes()[static_cast<size_t>(a)].size;
    return m;
}

Result<CompactSharding> toCompact(const TensorSharding& sharding, const Mesh& mesh) {
    if (mesh.rank() > kMaxRuleMeshAxes) return makeError("rules.bad_mesh", "too many mesh axes");
    CompactSharding c;
    c.rank = static_cast<int8_t>(sharding.rank());
    for (int64_t d = 0; d < sharding.rank(); ++d) {
        const auto& axes = sharding.dimAxes(d);
        for (size_t p = 0; p < axes.size(); ++p) {
            auto a = mesh.axisIndex(axes[p]);
            if (!a) return makeError("sharding.unknown_axis", "mesh " + mesh.toString() + " has no axis '" + axes[p] + "'");
            c.dimOf[static_cast<size_t>(*a)] = static_cast<int8_t>(d);
            c.position[static_cast<size_t>(*a)] = static_cast<int8_t>(p);
        }
    }
    for (const auto& name : sharding.partialAxes()) {
        auto a = mesh.axisIndex(name);
        if (!a) return makeError("sharding.unknown_axis", "mesh " + mesh.toString() + " has no axis '" + name + "'");
        c.dimOf[static_cast<size_t>(*a)] = CompactSharding::kAxisPartial;
    }
    return c;
}

TensorSharding fromCompact(const CompactSharding& c, const Mesh& mesh) {
    std::vector<TensorSharding::AxisList> dims(static_cast<size_t>(c.rank));
    TensorSharding::AxisList partial;
    std::array<int8_t, kMaxRuleMeshAxes> axes{};
    for (int d = 0; d < c.rank; ++d) {
        const int n = axesOnDim(c, d, axes);
        for (int k = 0; k < n; ++k) dims[static_cast<size_t>(d)].push_back(mesh.axes()[static_cast<size_t>(axes[static_cast<size_t>(k)])].name);
    }
    for (int a = 0; a < static_cast<int>(mesh.rank()) && a < kMaxRuleMeshAxes; ++a)
        if (c.dimOf[static_cast<size_t>(a)] == CompactSharding::kAxisPartial) partial.push_back(mesh.axes()[static_cast<size_t>(a)].name);
    auto s = TensorSharding::create(std::move(dims), std::move(partial));
    return s ? *s : TensorSharding::replicated(c.rank);
}

bool assignFromOperands(const OpShardingRule& rule, std::span<const CompactSharding* const> operands,
                        const MeshSizes& mesh, FactorAssignment& out, std::string* why) {
    out = FactorAssignment{};
    SeenFactors seen(rule.factors.size());
    std::array<int8_t, kMaxRuleMeshAxes> axes{};
    for (size_t i = 0; i < operands.size() && i < rule.operandDims.size(); ++i) {
        const CompactSharding* s = operands[i];
        if (!s) continue;
        const auto& map = rule.operandDims[i];
        if (s->rank != static_cast<int8_t>(map.size())) {
            setWhy(why, "operand " + std::to_string(i) + " sharding has rank " + std::to_string(s->rank) +
                            ", the operand has rank " + std::to_string(map.size()));
            return false;
        }
        if (s->isPartial()) {
            setWhy(why, "operand " + std::to_string(i) + " is a pending partial sum");
            return false;
        }
        for (size_t d = 0; d < map.size(); ++d) {
            const int n = axesOnDim(*s, static_cast<int>(d), axes);
            const DimPlace place{static_cast<int64_t>(i), d};
            if (map[d] == kNoFactor) {
                if (n > 0) {
                    setWhy(why, place.text() + " is split but maps to no factor");
                    return false;
                }
                continue;
            }
            if (!bindFactor(rule, map[d], axes, n, seen, out, place, why)) return false;
        }
    }
    return checkDivisibility(rule, out, mesh, why);
}

bool assignFromResult(const OpShardingRule& rule, const CompactSharding& result, const MeshSizes& mesh,
                      FactorAssignment& out, std::string* why) {
    out = FactorAssignment{};
    if (result.rank != static_cast<int8_t>(rule.resultDims.size())) {
        setWhy(why, "result sharding has the wrong rank");
        return false;
    }
    SeenFactors seen(rule.factors.size());
    std::array<int8_t, kMaxRuleMeshAxes> axes{};
    for (size_t d = 0; d < rule.resultDims.size(); ++d) {
        const int n = axesOnDim(result, static_cast<int>(d), axes);
        const DimPlace place{-1, d};
        if (rule.resultDims[d] == kNoFactor) {
            if (n > 0) {
                setWhy(why, place.text() + " is split but maps to no factor");
                return false;
            }
            continue;
        }
        if (!bindFactor(rule, rule.resultDims[d], axes, n, seen, out, place, why)) return false;
    }
    if (result.isPartial()) {
        int32_t reduction = kNoFactor;
        int count = 0;
        for (int32_t f = 0; f < rule.factorCount(); ++f)
            if (rule.factors[static_cast<size_t>(f)].kind == FactorKind::Reduction) {
                reduction = f;
                ++count;
            }
        if (count != 1) {
            setWhy(why, "a partial result cannot be attributed to one reduction factor");
            return false;
        }
        int8_t p = 0;
        for (int a = 0; a < mesh.rank; ++a)
            if (result.dimOf[static_cast<size_t>(a)] == CompactSharding::kAxisPartial) {
                out.factorOf[static_cast<size_t>(a)] = static_cast<int16_t>(reduction);
                out.position[static_cast<size_t>(a)] = p++;
            }
    }
    return checkDivisibility(rule, out, mesh, why);
}

CompactSharding projectOperand(const OpShardingRule& rule, const FactorAssignment& fa, size_t operand) {
    const auto& map = rule.operandDims.at(operand);
    CompactSharding s = CompactSharding::replicated(static_cast<int64_t>(map.size()));
    for (size_t a = 0; a < kMaxRuleMeshAxes; ++a) {
        const int16_t f = fa.factorOf[a];
        if (f < 0) continue;
        for (size_t d = 0; d < map.size(); ++d)
            if (map[d] == f) {
                s.dimOf[a] = static_cast<int8_t>(d);
                s.position[a] = fa.position[a];
                break;
            }
    }
    return s;
}

CompactSharding projectResult(const OpShardingRule& rule, const FactorAssignment& fa) {
    CompactSharding s = CompactSharding::replicated(static_cast<int64_t>(rule.resultDims.size()));
    for (size_t a = 0; a < kMaxRuleMeshAxes; ++a) {
        const int16_t f = fa.factorOf[a];
        if (f < 0) continue;
        bool placed = false;
        for (size_t d = 0; d < rule.resultDims.size(); ++d)
            if (rule.resultDims[d] == f) {
                s.dimOf[a] = static_cast<int8_t>(d);
                s.position[a] = fa.position[a];
                placed = true;
                break;
            }
        if (!placed && rule.factors[static_cast<size_t>(f)].kind == FactorKind::Reduction)
            s.dimOf[a] = CompactSharding::kAxisPartial;
    }
    return s;
}

Result<FactorAssignment> factorsFromOperands(const OpShardingRule& rule,
                                             std::span<const std::optional<TensorSharding>> operands,
                                             const Mesh& mesh) {
    auto sizes = meshSizes(mesh);
    if (!sizes) return sizes.error();
    if (operands.size() != rule.operandDims.size())
        return makeError("rules.bad_operands", "the rule has " + std::to_string(rule.operandDims.size()) +
                                                   " operands, got " + std::to_string(operands.size()) + " shardings");
    std::vector<CompactSharding> compact(operands.size());
    std::vector<const CompactSharding*> ptrs(operands.size(), nullptr);
    for (size_t i = 0; i < operands.size(); ++i) {
        if (!operands[i]) continue;
        auto c = toCompact(*operands[i], mesh);
        if (!c) return c.error();
        compact[i] = *c;
        ptrs[i] = &compact[i];
    }
    FactorAssignment fa;
    std::string why;
    if (!assignFromOperands(rule, ptrs, *sizes, fa, &why)) return needsCommunication(why);
    return fa;
}

Result<FactorAssignment> factorsFromResult(const OpShardingRule& rule, const TensorSharding& result, const Mesh& mesh) {
    auto sizes = meshSizes(mesh);
    if (!sizes) return sizes.error();
    auto c = toCompact(result, mesh);
    if (!c) return c.error();
    FactorAssignment fa;
    std::string why;
    if (!assignFromResult(rule, *c, *sizes, fa, &why)) return needsCommunication(why);
    return fa;
}

TensorSharding operandShardingFor(const OpShardingRule& rule, const FactorAssignment& a, size_t operand, const Mesh& mesh) {
    return fromCompact(projectOperand(rule, a, operand), mesh);
}

TensorSharding resultShardingFor(const OpShardingRule& rule, const FactorAssignment& a, const Mesh& mesh) {
    return fromCompact(projectResult(rule, a), mesh);
}

Result<TensorSharding> propagateForward(const OpShardingRule& rule,
                                        std::span<const std::optional<TensorSharding>> operands, const Mesh& mesh) {
    auto fa = factorsFromOperands(rule, operands, mesh);
    if (!fa) return fa.error();
    return resultShardingFor(rule, *fa, mesh);
}

Result<TensorSharding> propagateForward(const OpShardingRule& rule, std::span<const TensorSharding> operands,
                                        const Mesh& mesh) {
    std::vector<std::optional<TensorSharding>> known(operands.begin(), operands.end());
    return propagateForward(rule, std::span<const std::optional<TensorSharding>>(known), mesh);
}

Result<std::vector<TensorSharding>> propagateBackward(const OpShardingRule& rule, const TensorSharding& result,
                                                      const Mesh& mesh) {
    auto fa = factorsFromResult(rule, result, mesh);
    if (!fa) return fa.error();
    std::vector<TensorSharding> out;
    for (size_t i = 0; i < rule.operandDims.size(); ++i) out.push_back(operandShardingFor(rule, *fa, i, mesh));
    return out;
}

// ---- manual regions ----

std::vector<char> manualRegionOps(const Graph& graph) {
    std::vector<char> manual(static_cast<size_t>(graph.size()), 0);
    for (const Op& op : graph.ops()) {
        bool m = isFullToShard(op);
        if (!isShardToFull(op))
            for (OpId o : op.operands) m = m || manual[static_cast<size_t>(o)];
        manual[static_cast<size_t>(op.id)] = m;
    }
    return manual;
}

bool isSourcePinned(const Op& op, Partitioning partitioning) {
    return isFullToShard(op) || isShardToFull(op) ||
           (partitioning == Partitioning::Manual && op.kind == OpKind::CustomCall && op.attrs.target == kAllReduceTarget);
}

Result<FactorAssignment> sourcePinnedFactors(const Op& op, const OpShardingRule& rule, const Mesh& mesh) {
    const std::string where = "instruction '" + op.name + "'";
    FactorAssignment fa;
    if (op.attrs.target == kAllReduceTarget) {
        auto axes = groupAxesOnMesh(op.attrs.replicaGroups, mesh);
        if (!axes)
            return makeError("hlo.manual_mesh", "the all-reduce's replica groups " + replicaGroupsText(op.attrs.replicaGroups) +
                                                    " do not fit the planning mesh: " + axes.error().message, where);
        int32_t reduction = kNoFactor;
        for (int32_t f = 0; f < rule.factorCount(); ++f)
            if (rule.factors[static_cast<size_t>(f)].kind == FactorKind::Reduction) reduction = f;
        int8_t position = 0;
        for (const std::string& name : *axes) {
            const auto a = static_cast<size_t>(*mesh.axisIndex(name));
            fa.factorOf[a] = static_cast<int16_t>(reduction);
            fa.position[a] = position++;
        }
        return fa;
    }
    if ((!isFullToShard(op) && !isShardToFull(op)) || rule.operandDims.size() != 1)
        return makeError("rules.no_rule", "the source fixes no sharding of " + std::string(opKindName(op.kind)) + " '" + op.attrs.target + "'",
                         where);
    auto parsed = parseHloSharding(op.attrs.sharding);
    if (!parsed) return makeError(parsed.error().code, parsed.error().message, where);
    const std::vector<int32_t>& full = isFullToShard(op) ? rule.operandDims[0] : rule.resultDims;
    auto sharding = shardingOnMesh(*parsed, mesh, static_cast<int64_t>(full.size()));
    if (!sharding) {
        // A hint: the mesh the sharding's grid is, its dims of size > 1 in order.
        std::string hint;
        if (parsed->kind == HloSharding::Kind::Tiled)
            for (int64_t t : parsed->tileDims)
                if (t > 1) hint += (hint.empty() ? "" : "x") + std::to_string(t);
        return makeError("hlo.manual_mesh", "the manual region's sharding " + op.attrs.sharding + " (" + op.attrs.target +
                                                ") does not fit the planning mesh: " + sharding.error().message +
                                                (hint.empty() ? std::string() : " (a mesh of that grid: --mesh " + hint + ")"),
                         where);
    }
    for (size_t a = 0; a < mesh.axes().size() && a < static_cast<size_t>(kMaxRuleMeshAxes); ++a) {
        const AxisUse use = sharding->use(mesh.axes()[a].name);
        if (use.kind != AxisUse::Kind::Dim) continue;
        fa.factorOf[a] = static_cast<int16_t>(full[static_cast<size_t>(use.dim)]);
        fa.position[a] = static_cast<int8_t>(use.position);
    }
    return fa;
}

}  // namespace cfp
