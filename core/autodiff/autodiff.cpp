#include "autodiff/autodiff.h"

#include <algorithm>
#include <cmath>

#include "ir/graph_builder.h"

namespace cfp {

namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int64_t> range(int64_t from, int64_t to) {
    std::vector<int64_t> out;
    for (int64_t i = from; i < to; ++i) out.push_back(i);
    return out;
}

// Dims of [0, rank) that are not in `used`, ascending.
std::vector<int64_t> complement(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b = {}) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < rank; ++i)
        if (!contains(a, i) && !contains(b, i)) out.push_back(i);
    return out;
}

// Whether a gradient can flow from an op of `kind` into its operand number `operand`. Index operands
// (gather/scatter indices) and select's predicate never carry one; sources have no operands.
bool carriesGradient(OpKind kind, size_t operand) {
    switch (kind) {
        case OpKind::Select: return operand != 0;
        case OpKind::Gather: return operand == 0;
        case OpKind::Scatter: return operand != 1;
        case OpKind::Compare:
        case OpKind::And:
        case OpKind::Or: return false;
        default: return true;
    }
}

// Custom-calls an importer writes for elementwise HLO opcodes the IR has no kind for, whose
// derivative is known: erf (PyTorch's exact GELU), d/dx erf(x) = 2/√π · exp(−x²).
bool hasCustomCallGradient(const Op& op) { return op.attrs.target == "hlo.erf" && op.operands.size() == 1; }

// Kinds whose output never depends differentiably on anything, even when their type is floating.
bool isSource(OpKind kind) {
    return kind == OpKind::Parameter || kind == OpKind::Constant || kind == OpKind::Iota;
}

// Emits vector-Jacobian products. Holds one GraphBuilder stamped with phase = backward; before each
// rule it sets the scope and provenance of the forward op being differentiated.
class BackwardPass {
public:
    BackwardPass(Graph& graph, OpId loss) : m_graph(graph), m_b(graph), m_loss(loss) {
        m_b.setPhase(Phase::Backward);
    }

    Result<std::map<OpId, OpId>> run(const std::vector<OpId>& wrt);

private:
    // Marks m_active (depends differentiably on some wrt op) and m_needed (also reaches the loss).
    void markOps(const std::vector<OpId>& wrt);
    // Errors for ops a gradient would have to cross but cannot; checked before emitting anything.
    Status checkDifferentiable() const;
    void differentiate(const Op& fwd);
    // Contribution of fwd's gradient `g` to its operand number j, or kNoOp when it is zero.
    OpId vjp(const Op& fwd, OpId g, size_t j);
    void accumulate(OpId x, OpId contribution);
    void stamp(const Op& fwd, int32_t operand) {
        m_b.setScope(fwd.scope);
        m_b.setDerived(fwd.id, operand);
    }

    // ---- emission helpers (use the current stamp) ----
    // `dims` by value: a reference into the graph would dangle once the scalar is added.
    OpId splat(double value, DType dtype, std::vector<int64_t> dims) {
        const OpId s = m_b.scalar(value, dtype);
        return dims.empty() ? s : m_b.broadcast(s, std::move(dims), {});
    }
    OpId zerosLike(OpId x) {
        const TensorType t = m_b.type(x);
        return splat(0.0, t.dtype, t.dims);
    }
    OpId scaled(OpId x, double c) { return m_b.mul(x, splat(c, m_b.dtype(x), m_b.dims(x))); }
    OpId transposeTo(OpId x, const std::vector<int64_t>& order);
    OpId dotVjp(const Op& fwd, OpId g, size_t j);
    OpId sliceVjp(const Op& fwd, OpId g);
    OpId reduceVjp(const Op& fwd, OpId g);

    Graph& m_graph;
    GraphBuilder m_b;
    OpId m_loss;
    std::vector<char> m_active, m_needed;  // indexed by forward op id ≤ m_loss
    std::vector<OpId> m_grad;              // gradient op of each forward op, kNoOp while none
};

void BackwardPass::markOps(const std::vector<OpId>& wrt) {
    const auto n = static_cast<size_t>(m_loss) + 1;
    m_active.assign(n, 0);
    m_needed.assign(n, 0);
    for (OpId w : wrt)
        if (w <= m_loss) m_active[static_cast<size_t>(w)] = 1;
    for (size_t i = 0; i < n; ++i) {
        const Op& op = m_graph.op(static_cast<OpId>(i));
        if (!isFloating(op.type.dtype)) {
            m_active[i] = 0;  // integer and pred values carry no gradient
            continue;
        }
        if (m_active[i] || isSource(op.kind)) continue;
        for (size_t j = 0; j < op.operands.size(); ++j)
            if (carriesGradient(op.kind, j) && m_active[static_cast<size_t>(op.operands[j])]) {
                m_active[i] = 1;
                break;
            }
    }
    m_needed[n - 1] = m_active[n - 1];
    for (size_t i = n; i-- > 0;) {
        if (!m_needed[i]) continue;
        const Op& op = m_graph.op(static_cast<OpId>(i));
        for (size_t j = 0; j < op.operands.size(); ++j) {
            const auto in = static_cast<size_t>(op.operands[j]);
            if (carriesGradient(op.kind, j) && m_active[in]) m_needed[in] = 1;
        }
    }
}

Status BackwardPass::checkDifferentiable() const {
    for (size_t i = 0; i < m_needed.size(); ++i) {
        if (!m_needed[i]) continue;
        const Op& op = m_graph.op(static_cast<OpId>(i));
        bool flowsIn = false;
        for (size_t j = 0; j < op.operands.size(); ++j)
            if (carriesGradient(op.kind, j) && m_needed[static_cast<size_t>(op.operands[j])]) flowsIn = true;
        if (!flowsIn) continue;
        if (op.kind == OpKind::CustomCall && !hasCustomCallGradient(op))
            return makeError("autodiff.not_differentiable",
                             "the loss depends on custom-call '" + op.attrs.target + "', which has no gradient rule",
                             op.name);
        if (op.kind == OpKind::Scatter && op.attrs.reduceKind != ReduceKind::Add)
            return makeError("autodiff.not_differentiable",
                             "scatter combining with " + std::string(reduceKindName(op.attrs.reduceKind)) +
                                 " has no gradient rule (only add)",
                             op.name);
    }
    return {};
}

Result<std::map<OpId, OpId>> BackwardPass::run(const std::vector<OpId>& wrt) {
    markOps(wrt);
    CFP_TRY(checkDifferentiable());
    m_grad.assign(static_cast<size_t>(m_loss) + 1, kNoOp);
    return catchBuildErrors<std::map<OpId, OpId>>([&]() -> Result<std::map<OpId, OpId>> {
        const Op loss = m_graph.op(m_loss);
        if (m_needed[static_cast<size_t>(m_loss)]) {
            stamp(loss, -1);
            m_grad[static_cast<size_t>(m_loss)] = m_b.scalar(1.0, loss.type.dtype);
        }
        for (OpId id = m_loss; id >= 0; --id) {
            const auto i = static_cast<size_t>(id);
            if (!m_needed[i] || m_grad[i] == kNoOp) continue;
            // A copy: emitting ops grows the op vector, which would invalidate a reference.
            const Op fwd = m_graph.op(id);
            differentiate(fwd);
        }
        std::map<OpId, OpId> out;
        for (OpId w : wrt) {
            if (out.count(w)) continue;
            OpId g = w <= m_loss ? m_grad[static_cast<size_t>(w)] : kNoOp;
            if (g == kNoOp) {
                stamp(m_graph.op(w), -1);
                g = zerosLike(w);
            }
            out.emplace(w, g);
        }
        return out;
    });
}

void BackwardPass::differentiate(const Op& fwd) {
    const OpId g = m_grad[static_cast<size_t>(fwd.id)];
    for (size_t j = 0; j < fwd.operands.size(); ++j) {
        const OpId x = fwd.operands[j];
        if (!carriesGradient(fwd.kind, j) || !m_needed[static_cast<size_t>(x)]) continue;
        stamp(fwd, static_cast<int32_t>(j));
        const OpId c = vjp(fwd, g, j);
        if (c != kNoOp) accumulate(x, c);
    }
}

void BackwardPass::accumulate(OpId x, OpId contribution) {
    OpId& slot = m_grad[static_cast<size_t>(x)];
    if (slot == kNoOp) {
        slot = contribution;
        return;
    }
    stamp(m_graph.op(x), -1);
    m_b.setDerived(x, -1);
    slot = m_b.add(slot, contribution);
}

OpId BackwardPass::transposeTo(OpId x, const std::vector<int64_t>& order) {
    // order[p] = the target dim that x's dim p holds; result dim i must be x's dim with order[p] == i.
    std::vector<int64_t> perm(order.size());
    bool identity = true;
    for (size_t p = 0; p < order.size(); ++p) {
        perm[static_cast<size_t>(order[p])] = static_cast<int64_t>(p);
        if (order[p] != static_cast<int64_t>(p)) identity = false;
    }
    return identity ? x : m_b.transpose(x, std::move(perm));
}

OpId BackwardPass::dotVjp(const Op& fwd, OpId g, size_t j) {
    // Y = dot(L, R): Y dims are [batch, L free, R free]. Each operand's gradient is ONE dot of g with
    // the other operand, plus a transpose into the operand's dim order when HLO's result order differs.
    const DotDimensionNumbers& d = fwd.attrs.dot;
    const OpId lhs = fwd.operands[0], rhs = fwd.operands[1];
    const int64_t lhsRank = m_b.type(lhs).rank(), rhsRank = m_b.type(rhs).rank();
    const auto lhsFree = complement(lhsRank, d.lhsBatch, d.lhsContracting);
    const auto rhsFree = complement(rhsRank, d.rhsBatch, d.rhsContracting);
    const auto nb = static_cast<int64_t>(d.lhsBatch.size());
    const auto nlf = static_cast<int64_t>(lhsFree.size());
    const auto nrf = static_cast<int64_t>(rhsFree.size());
    DotDimensionNumbers dd;
    std::vector<int64_t> order;  // operand dim held by each result dim of the new dot
    if (j == 0) {
        // dL = dot(g, R): batch with batch, contract g's R-free dims with R's free dims.
        dd.lhsBatch = range(0, nb);
        dd.rhsBatch = d.rhsBatch;
        dd.lhsContracting = range(nb + nlf, nb + nlf + nrf);
        dd.rhsContracting = rhsFree;
        order = d.lhsBatch;
        order.insert(order.end(), lhsFree.begin(), lhsFree.end());
        // R's remaining dims are its contracting dims in ascending order; each pairs with an L dim.
        for (int64_t r : complement(rhsRank, d.rhsBatch, rhsFree)) {
            const auto k = std::find(d.rhsContracting.begin(), d.rhsContracting.end(), r) - d.rhsContracting.begin();
            order.push_back(d.lhsContracting[static_cast<size_t>(k)]);
        }
        return transposeTo(m_b.dot(g, rhs, std::move(dd)), order);
    }
    // dR = dot(L, g): batch with batch, contract L's free dims with g's L-free dims.
    dd.lhsBatch = d.lhsBatch;
    dd.rhsBatch = range(0, nb);
    dd.lhsContracting = lhsFree;
    dd.rhsContracting = range(nb, nb + nlf);
    order = d.rhsBatch;
    for (int64_t l : complement(lhsRank, d.lhsBatch, lhsFree)) {
        const auto k = std::find(d.lhsContracting.begin(), d.lhsContracting.end(), l) - d.lhsContracting.begin();
        order.push_back(d.rhsContracting[static_cast<size_t>(k)]);
    }
    order.insert(order.end(), rhsFree.begin(), rhsFree.end());
    return transposeTo(m_b.dot(lhs, g, std::move(dd)), order);
}

OpId BackwardPass::sliceVjp(const Op& fwd, OpId g) {
    // Pads g back to the operand's shape with zeros, one dim at a time: strided dims first interleave
    // stride-1 zeros after every element (reshape + concatenate + reshape + slice), then zero blocks
    // go before `start` and after `limit` (concatenate). No pad op is needed.
    const OpId x = fwd.operands[0];
    const std::vector<int64_t> xDims = m_b.dims(x);
    if (fwd.type.elements() == 0) return zerosLike(x);
    const SliceBounds& s = fwd.attrs.slice;
    const DType dtype = fwd.type.dtype;
    OpId cur = g;
    std::vector<int64_t> dims = fwd.type.dims;
    for (size_t d = 0; d < dims.size(); ++d) {
        const int64_t span = s.limit[d] - s.start[d];
        if (s.stride[d] > 1) {
            const int64_t m = dims[d];
            std::vector<int64_t> expanded = dims;
            expanded.insert(expanded.begin() + static_cast<std::ptrdiff_t>(d) + 1, 1);
            std::vector<int64_t> zeroDims = expanded;
            zeroDims[d + 1] = s.stride[d] - 1;
            const OpId column = m_b.reshape(cur, expanded);
            const OpId interleaved = m_b.concatenate({column, splat(0.0, dtype, zeroDims)}, static_cast<int64_t>(d) + 1);
            dims[d] = m * s.stride[d];
            cur = m_b.reshape(interleaved, dims);
            if (dims[d] != span) {
                cur = m_b.sliceAxis(cur, static_cast<int64_t>(d), 0, span);
                dims[d] = span;
            }
        }
        std::vector<OpId> parts;
        if (s.start[d] > 0) {
            std::vector<int64_t> zeroDims = dims;
            zeroDims[d] = s.start[d];
            parts.push_back(splat(0.0, dtype, zeroDims));
        }
        parts.push_back(cur);
        if (s.limit[d] < xDims[d]) {
            std::vector<int64_t> zeroDims = dims;
            zeroDims[d] = xDims[d] - s.limit[d];
            parts.push_back(splat(0.0, dtype, zeroDims));
        }
        if (parts.size() > 1) cur = m_b.concatenate(std::move(parts), static_cast<int64_t>(d));
        dims[d] = xDims[d];
    }
    return cur;
}

OpId BackwardPass::reduceVjp(const Op& fwd, OpId g) {
    const OpId x = fwd.operands[0];
    const std::vector<int64_t> xDims = m_b.dims(x);
    const auto kept = complement(static_cast<int64_t>(xDims.size()), fwd.attrs.dimensions);
    switch (fwd.attrs.reduceKind) {
        case ReduceKind::Add: return m_b.broadcast(g, xDims, kept);
        case ReduceKind::Max:
        case ReduceKind::Min: {
            // The gradient is shared equally by the elements equal to the extremum (as JAX does), so
            // that duplicated values (a broadcast, a repeated gather row) get the true derivative.
            const DType dtype = fwd.type.dtype;
            const OpId yWide = m_b.broadcast(fwd.id, xDims, kept);
            const OpId hits = m_b.convert(m_b.compare(x, yWide, ComparisonDirection::EQ), dtype);
            const OpId count = m_b.reduce(hits, fwd.attrs.dimensions, ReduceKind::Add);
            const OpId share = m_b.broadcast(m_b.div(g, count), xDims, kept);
            return m_b.mul(share, hits);
        }
        case ReduceKind::Multiply: {
            // d(prod)/dx_i = prod / x_i (undefined where x_i == 0, as the quotient rule is).
            const OpId gy = m_b.broadcast(m_b.mul(g, fwd.id), xDims, kept);
            return m_b.div(gy, x);
        }
    }
    return kNoOp;
}

OpId BackwardPass::vjp(const Op& fwd, OpId g, size_t j) {
    const OpId y = fwd.id;
    const OpId x = fwd.operands[j];
    switch (fwd.kind) {
        // ---- unary ----
        case OpKind::Negate: return m_b.neg(g);
        case OpKind::Exponential: return m_b.mul(g, y);
        case OpKind::Log: return m_b.div(g, x);
        case OpKind::Sqrt: return scaled(m_b.div(g, y), 0.5);                       // g / (2√x)
        case OpKind::Rsqrt: return scaled(m_b.div(m_b.mul(g, y), x), -0.5);         // -g·x^-3/2 / 2
        case OpKind::Tanh: {
            const OpId one = splat(1.0, fwd.type.dtype, fwd.type.dims);
            return m_b.mul(g, m_b.sub(one, m_b.mul(y, y)));
        }
        case OpKind::Logistic: {
            const OpId one = splat(1.0, fwd.type.dtype, fwd.type.dims);
            return m_b.mul(g, m_b.mul(y, m_b.sub(one, y)));
        }
        case OpKind::Abs: return m_b.mul(g, m_b.unary(OpKind::Sign, x));
        case OpKind::Sign: return kNoOp;  // piecewise constant
        case OpKind::Sine: return m_b.mul(g, m_b.unary(OpKind::Cosine, x));
        case OpKind::Cosine: return m_b.neg(m_b.mul(g, m_b.unary(OpKind::Sine, x)));
        case OpKind::Convert: return isFloating(m_b.dtype(x)) ? m_b.convert(g, m_b.dtype(x)) : kNoOp;

        // ---- binary ----
        case OpKind::Add: return g;
        case OpKind::Subtract: return j == 0 ? g : m_b.neg(g);
        case OpKind::Multiply: return m_b.mul(g, fwd.operands[1 - j]);
        case OpKind::Divide:
            if (j == 0) return m_b.div(g, fwd.operands[1]);
            return m_b.neg(m_b.div(m_b.mul(g, y), fwd.operands[1]));  // -g·(a/b)/b
        case OpKind::Maximum:
        case OpKind::Minimum: {
            // Ties go to the first operand, as the selection a >= b ? a : b does.
            const auto dir = fwd.kind == OpKind::Maximum ? ComparisonDirection::GE : ComparisonDirection::LE;
            const OpId firstWins = m_b.compare(fwd.operands[0], fwd.operands[1], dir);
            const OpId zero = zerosLike(g);
            return j == 0 ? m_b.select(firstWins, g, zero) : m_b.select(firstWins, zero, g);
        }
        case OpKind::Power: {
            const OpId a = fwd.operands[0], p = fwd.operands[1];
            if (j == 0) {
                // g·p·a^(p-1)
                const OpId pMinus1 = m_b.sub(p, splat(1.0, fwd.type.dtype, fwd.type.dims));
                return m_b.mul(g, m_b.mul(p, m_b.binary(OpKind::Power, a, pMinus1)));
            }
            return m_b.mul(g, m_b.mul(y, m_b.log(a)));  // g·a^p·ln a
        }

        // ---- ternary ----
        case OpKind::Select: {
            const OpId zero = zerosLike(g);
            return j == 1 ? m_b.select(fwd.operands[0], g, zero) : m_b.select(fwd.operands[0], zero, g);
        }

        // ---- layout ----
        case OpKind::Broadcast: {
            // Sum over the result dims no operand dim maps to, then order the kept dims as the operand's.
            const auto& map = fwd.attrs.dimensions;
            const auto added = complement(fwd.type.rank(), map);
            const OpId summed = added.empty() ? g : m_b.reduce(g, added, ReduceKind::Add);
            std::vector<int64_t> sortedMap = map;
            std::sort(sortedMap.begin(), sortedMap.end());
            // Reduced dim p holds result dim sortedMap[p], i.e. operand dim i with map[i] == sortedMap[p].
            std::vector<int64_t> order;
            for (int64_t r : sortedMap)
                order.push_back(std::find(map.begin(), map.end(), r) - map.begin());
            return transposeTo(summed, order);
        }
        case OpKind::Reshape: return m_b.reshape(g, m_b.dims(x));
        case OpKind::Transpose: return transposeTo(g, fwd.attrs.dimensions);
        case OpKind::Slice: return sliceVjp(fwd, g);
        case OpKind::Concatenate: {
            if (fwd.operands.size() == 1) return g;
            const int64_t axis = fwd.attrs.dimensions[0];
            int64_t offset = 0;
            for (size_t k = 0; k < j; ++k) offset += m_b.dims(fwd.operands[k])[static_cast<size_t>(axis)];
            const int64_t size = m_b.dims(x)[static_cast<size_t>(axis)];
            return m_b.sliceAxis(g, axis, offset, offset + size);
        }

        // ---- reductions, contractions, indexing ----
        case OpKind::Reduce: return reduceVjp(fwd, g);
        case OpKind::Dot: return dotVjp(fwd, g, j);
        case OpKind::CustomCall:
            if (hasCustomCallGradient(fwd)) {  // hlo.erf
                const OpId slope = m_b.unary(OpKind::Exponential, m_b.neg(m_b.mul(x, x)));
                return m_b.mul(g, scaled(slope, 1.1283791670955126));  // 2/√π
            }
            break;
        case OpKind::Gather: {
            // Scatter-add g into zeros: the window dims of g are gather's offset dims.
            const GatherDimensionNumbers& gd = fwd.attrs.gather;
            ScatterDimensionNumbers sd;
            sd.updateWindowDims = gd.offsetDims;
            sd.insertedWindowDims = gd.collapsedSliceDims;
            sd.scatterDimsToOperandDims = gd.startIndexMap;
            sd.indexVectorDim = gd.indexVectorDim;
            sd.inputBatchingDims = gd.operandBatchingDims;
            sd.scatterIndicesBatchingDims = gd.startIndicesBatchingDims;
            return m_b.scatter(zerosLike(x), fwd.operands[1], g, std::move(sd), ReduceKind::Add);
        }
        case OpKind::Scatter: {
            // Scatter-add: the operand passes through; each update receives the gradient at its window.
            if (j == 0) return g;
            const ScatterDimensionNumbers& sd = fwd.attrs.scatter;
            const std::vector<int64_t> updateDims = m_b.dims(fwd.operands[2]);
            GatherDimensionNumbers gd;
            gd.offsetDims = sd.updateWindowDims;
            gd.collapsedSliceDims = sd.insertedWindowDims;
            gd.startIndexMap = sd.scatterDimsToOperandDims;
            gd.indexVectorDim = sd.indexVectorDim;
            gd.operandBatchingDims = sd.inputBatchingDims;
            gd.startIndicesBatchingDims = sd.scatterIndicesBatchingDims;
            size_t w = 0;
            for (int64_t a = 0; a < fwd.type.rank(); ++a)
                gd.sliceSizes.push_back(contains(sd.insertedWindowDims, a) || contains(sd.inputBatchingDims, a)
                                            ? 1
                                            : updateDims[static_cast<size_t>(sd.updateWindowDims[w++])]);
            return m_b.gather(g, fwd.operands[1], std::move(gd));
        }
        default: break;
    }
    // checkDifferentiable() rejected everything else before any op was emitted.
    throw BuildError(makeError("autodiff.not_differentiable",
                               "no gradient rule for " + std::string(opKindName(fwd.kind)), fwd.name));
}

// Checks that AdamW can be appended for these parameters without touching the graph.
Status checkAdamWParameters(const Graph& graph, const std::vector<OpId>& params, const AdamWConfig& config) {
    if (config.step < 1) return makeError("autodiff.bad_config", "AdamW step must be at least 1");
    if (!(config.beta1 >= 0 && config.beta1 < 1) || !(config.beta2 >= 0 && config.beta2 < 1))
        return makeError("autodiff.bad_config", "AdamW betas must lie in [0, 1)");
    for (OpId p : params) {
        if (p < 0 || p >= graph.size())
            return makeError("autodiff.bad_parameter", "op " + std::to_string(p) + " does not exist");
        const Op& op = graph.op(p);
        if (op.kind != OpKind::Parameter)
            return makeError("autodiff.bad_parameter", "AdamW updates parameters, this is a " +
                                                           std::string(opKindName(op.kind)), op.name);
        if (!isFloating(op.type.dtype))
            return makeError("autodiff.bad_parameter", "AdamW needs a floating-point parameter, got " +
                                                           op.type.toString(), op.name);
        std::vector<std::string> names = {op.name + ".adam_m", op.name + ".adam_v"};
        if (op.type.dtype != DType::F32) names.push_back(op.name + ".master");
        for (const auto& name : names)
            if (graph.find(name) != kNoOp)
                return makeError("autodiff.name_taken", "optimizer state '" + name + "' already exists", op.name);
    }
    return {};
}

}  // namespace

Result<std::map<OpId, OpId>> appendBackward(Graph& graph, OpId loss, const std::vector<OpId>& wrt) {
    if (loss < 0 || loss >= graph.size())
        return makeError("autodiff.bad_loss", "loss refers to op " + std::to_string(loss) + ", which does not exist");
    const Op& lossOp = graph.op(loss);
    if (lossOp.type.rank() != 0 || !isFloating(lossOp.type.dtype))
        return makeError("autodiff.bad_loss", "loss must be a floating-point scalar, got " + lossOp.type.toString(),
                         lossOp.name);
    for (OpId w : wrt)
        if (w < 0 || w >= graph.size())
            return makeError("autodiff.bad_wrt", "gradient requested for op " + std::to_string(w) +
                                                     ", which does not exist");
    BackwardPass pass(graph, loss);
    return pass.run(wrt);
}

Status appendAdamW(Graph& graph, const std::map<OpId, OpId>& gradients, const AdamWConfig& config) {
    std::vector<OpId> params;
    for (const auto& [p, g] : gradients) params.push_back(p);
    CFP_TRY(checkAdamWParameters(graph, params, config));
    for (const auto& [p, g] : gradients) {
        if (g < 0 || g >= graph.size() || graph.op(g).type != graph.op(p).type)
            return makeError("autodiff.bad_gradient", "gradient must be an existing op of the parameter's type " +
                                                          graph.op(p).type.toString(), graph.op(p).name);
    }
    const double biasCorrection1 = 1.0 - std::pow(config.beta1, static_cast<double>(config.step));
    const double biasCorrection2 = 1.0 - std::pow(config.beta2, static_cast<double>(config.step));
    return catchBuildErrors<void>([&]() -> Status {
        GraphBuilder b(graph);
        b.setPhase(Phase::Optimizer);
        for (const auto& [p, g] : gradients) {
            const Op param = graph.op(p);  // a copy: adding ops invalidates references
            b.setScope(param.scope);
            b.setDerived(p, -1);
            const std::vector<int64_t>& dims = param.type.dims;
            const TensorType f32{DType::F32, dims};
            auto splat = [&](double v) {
                const OpId s = b.scalar(v, DType::F32);
                return dims.empty() ? s : b.broadcast(s, dims, {});
            };
            const OpId m = b.parameter(param.name + ".adam_m", f32, ParamRole::OptimizerState);
            const OpId v = b.parameter(param.name + ".adam_v", f32, ParamRole::OptimizerState);
            const bool needsMaster = param.type.dtype != DType::F32;
            const OpId w32 = needsMaster ? b.parameter(param.name + ".master", f32, ParamRole::OptimizerState) : p;

            const OpId g32 = b.convert(g, DType::F32);
            const OpId m2 = b.add(b.mul(m, splat(config.beta1)), b.mul(g32, splat(1.0 - config.beta1)));
            const OpId v2 = b.add(b.mul(v, splat(config.beta2)), b.mul(b.mul(g32, g32), splat(1.0 - config.beta2)));
            const OpId mHat = b.div(m2, splat(biasCorrection1));
            const OpId vHat = b.div(v2, splat(biasCorrection2));
            const OpId denom = b.add(b.unary(OpKind::Sqrt, vHat), splat(config.epsilon));
            const OpId update = b.add(b.div(mHat, denom), b.mul(w32, splat(config.weightDecay)));
            const OpId w32Next = b.sub(w32, b.mul(update, splat(config.learningRate)));
            const OpId pNext = b.convert(w32Next, param.type.dtype);

            b.output(pNext);
            if (needsMaster) b.output(w32Next);
            b.output(m2);
            b.output(v2);
        }
        return {};
    });
}

Status appendTrainingStep(Graph& graph, OpId loss, const AdamWConfig& config) {
    const std::vector<OpId> params = graph.parameters(ParamRole::Trainable);
    CFP_TRY(checkAdamWParameters(graph, params, config));
    auto gradients = appendBackward(graph, loss, params);
    if (!gradients) return gradients.error();
    const auto& outputs = graph.outputs();
    if (std::find(outputs.begin(), outputs.end(), loss) == outputs.end()) CFP_TRY(graph.addOutput(loss));
    return appendAdamW(graph, *gradients, config);
}

}  // namespace cfp
