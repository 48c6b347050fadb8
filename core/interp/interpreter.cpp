#include "interp/interpreter.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "sharding/hlo_sharding.h"

namespace cfp {

namespace {

using Index = std::vector<int64_t>;

// Steps `index` through all multi-indices of `dims` in row-major order; false after the last one.
bool nextIndex(Index& index, const std::vector<int64_t>& dims) {
    for (size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) return true;
        index[d] = 0;
    }
    return false;
}

// Calls fn(index, flat) for every element of `dims`, in row-major order.
template <typename Fn>
void forEachIndex(const std::vector<int64_t>& dims, Fn&& fn) {
    for (int64_t d : dims)
        if (d == 0) return;
    Index index(dims.size(), 0);
    int64_t flat = 0;
    do {
        fn(static_cast<const Index&>(index), flat++);
    } while (nextIndex(index, dims));
}

int64_t flatten(const Index& index, const std::vector<int64_t>& strides) {
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) flat += index[d] * strides[d];
    return flat;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Error opError(const Op& op, std::string code, std::string message) {
    return makeError(std::move(code), std::move(message), op.name);
}

double truncateToInteger(double x, DType to) {
    if (std::isnan(x)) return 0.0;
    const double t = std::trunc(x);
    // Saturate as XLA does for out-of-range float→int conversions.
    return std::clamp(t, integerMin(to), integerMax(to));
}

double unaryValue(OpKind kind, double x) {
    switch (kind) {
        case OpKind::Negate: return -x;
        case OpKind::Exponential: return std::exp(x);
        case OpKind::Log: return std::log(x);
        case OpKind::Sqrt: return std::sqrt(x);
        case OpKind::Rsqrt: return 1.0 / std::sqrt(x);
        case OpKind::Tanh: return std::tanh(x);
        case OpKind::Logistic: return 1.0 / (1.0 + std::exp(-x));
        case OpKind::Abs: return std::fabs(x);
        case OpKind::Sign: return std::isnan(x) ? x : double((x > 0) - (x < 0));
        case OpKind::Sine: return std::sin(x);
        case OpKind::Cosine: return std::cos(x);
        default: break;
    }
    assert(false && "not a unary elementwise op");
    return 0.0;
}

double compareValue(ComparisonDirection c, double a, double b) {
    switch (c) {
        case ComparisonDirection::EQ: return a == b;
        case ComparisonDirection::NE: return a != b;
        case ComparisonDirection::LT: return a < b;
        case ComparisonDirection::LE: return a <= b;
        case ComparisonDirection::GT: return a > b;
        case ComparisonDirection::GE: return a >= b;
    }
    return 0.0;
}

double binaryValue(const Op& op, DType operandType, double a, double b) {
    const bool integer = isInteger(operandType);
    switch (op.kind) {
        case OpKind::Add: return a + b;
        case OpKind::Subtract: return a - b;
        case OpKind::Multiply: return a * b;
        case OpKind::Divide:
            if (integer) return b == 0 ? -1.0 : std::trunc(a / b);
            return a / b;
        case OpKind::Maximum:
            if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
            return std::max(a, b);
        case OpKind::Minimum:
            if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
            return std::min(a, b);
        case OpKind::Power: return std::pow(a, b);
        case OpKind::Compare: return compareValue(op.attrs.comparison, a, b);
        case OpKind::And:
            if (operandType == DType::Pred) return (a != 0) && (b != 0);
            return double(static_cast<int64_t>(a) & static_cast<int64_t>(b));
        case OpKind::Or:
            if (operandType == DType::Pred) return (a != 0) || (b != 0);
            return double(static_cast<int64_t>(a) | static_cast<int64_t>(b));
        default: break;
    }
    assert(false && "not a binary elementwise op");
    return 0.0;
}

double reduceIdentity(ReduceKind kind, DType dtype) {
    switch (kind) {
        case ReduceKind::Add: return 0.0;
        case ReduceKind::Multiply: return 1.0;
        case ReduceKind::Max:
            if (isInteger(dtype)) return integerMin(dtype);
            return -std::numeric_limits<double>::infinity();
        case ReduceKind::Min:
            if (isInteger(dtype)) return integerMax(dtype);
            return std::numeric_limits<double>::infinity();
    }
    return 0.0;
}

double combine(ReduceKind kind, double acc, double x) {
    switch (kind) {
        case ReduceKind::Add: return acc + x;
        case ReduceKind::Multiply: return acc * x;
        case ReduceKind::Max:
            if (std::isnan(acc) || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
            return std::max(acc, x);
        case ReduceKind::Min:
            if (std::isnan(acc) || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
            return std::min(acc, x);
    }
    return acc;
}

// Reads the index vector for batch position `batch` (indices dims without index_vector_dim).
void readIndexVector(const Tensor& indices, int64_t indexVectorDim, const Index& batch, Index& out) {
    const auto& dims = indices.type.dims;
    const auto strides = rowMajorStrides(dims);
    const bool implicit = indexVectorDim == indices.type.rank();
    const int64_t n = implicit ? 1 : dims[static_cast<size_t>(indexVectorDim)];
    out.assign(static_cast<size_t>(n), 0);
    Index full(dims.size(), 0);
    size_t b = 0;
    for (size_t d = 0; d < dims.size(); ++d)
        if (static_cast<int64_t>(d) != indexVectorDim) full[d] = batch[b++];
    for (int64_t k = 0; k < n; ++k) {
        if (!implicit) full[static_cast<size_t>(indexVectorDim)] = k;
        out[static_cast<size_t>(k)] = static_cast<int64_t>(indices.values[static_cast<size_t>(flatten(full, strides))]);
    }
}

// Position, among the indices' batch dims (every dim but the index vector dim), of each batching dim.
std::vector<int64_t> batchPositions(int64_t indicesRank, int64_t indexVectorDim, const std::vector<int64_t>& batching) {
    std::vector<int64_t> out;
    for (int64_t d : batching) out.push_back(d - (indexVectorDim < indicesRank && d > indexVectorDim ? 1 : 0));
    return out;
}

Tensor evalGather(const Op& op, const Tensor& operand, const Tensor& indices) {
    const GatherDimensionNumbers& g = op.attrs.gather;
    Tensor out{op.type, std::vector<double>(static_cast<size_t>(op.type.elements()))};
    const auto inStrides = rowMajorStrides(operand.type.dims);
    std::vector<int64_t> windowOperandDims;  // operand dim of each offset dim, in order
    for (int64_t a = 0; a < operand.type.rank(); ++a)
        if (!contains(g.collapsedSliceDims, a) && !contains(g.operandBatchingDims, a)) windowOperandDims.push_back(a);
    const std::vector<int64_t> batchPos = batchPositions(indices.type.rank(), g.indexVectorDim, g.startIndicesBatchingDims);
    Index batch, startVector, in(operand.type.dims.size());
    forEachIndex(op.type.dims, [&](const Index& o, int64_t flat) {
        batch.clear();
        std::fill(in.begin(), in.end(), 0);
        size_t w = 0;
        for (int64_t a = 0; a < op.type.rank(); ++a) {
            if (contains(g.offsetDims, a)) in[static_cast<size_t>(windowOperandDims[w++])] = o[static_cast<size_t>(a)];
            else batch.push_back(o[static_cast<size_t>(a)]);
        }
        readIndexVector(indices, g.indexVectorDim, batch, startVector);
        for (size_t k = 0; k < g.startIndexMap.size(); ++k) {
            const auto dim = static_cast<size_t>(g.startIndexMap[k]);
            const int64_t maxStart = operand.type.dims[dim] - g.sliceSizes[dim];
            in[dim] += std::clamp<int64_t>(startVector[k], 0, maxStart);
        }
        for (size_t j = 0; j < g.operandBatchingDims.size(); ++j)
            in[static_cast<size_t>(g.operandBatchingDims[j])] = batch[static_cast<size_t>(batchPos[j])];
        out.values[static_cast<size_t>(flat)] = operand.values[static_cast<size_t>(flatten(in, inStrides))];
    });
    return out;
}

Tensor evalScatter(const Op& op, const Tensor& operand, const Tensor& indices, const Tensor& updates) {
    const ScatterDimensionNumbers& s = op.attrs.scatter;
    Tensor out = operand;
    out.type = op.type;
    const auto outStrides = rowMajorStrides(op.type.dims);
    std::vector<int64_t> windowOperandDims;  // operand dim of each update window dim, in order
    for (int64_t a = 0; a < operand.type.rank(); ++a)
        if (!contains(s.insertedWindowDims, a) && !contains(s.inputBatchingDims, a)) windowOperandDims.push_back(a);
    const std::vector<int64_t> batchPos = batchPositions(indices.type.rank(), s.indexVectorDim, s.scatterIndicesBatchingDims);
    // Window extent per operand dim (1 for inserted dims), to skip out-of-bounds windows.
    std::vector<int64_t> windowSize(operand.type.dims.size(), 1);
    for (size_t w = 0; w < windowOperandDims.size(); ++w)
        windowSize[static_cast<size_t>(windowOperandDims[w])] = updates.type.dims[static_cast<size_t>(s.updateWindowDims[w])];
    Index batch, startVector, start(operand.type.dims.size()), in(operand.type.dims.size());
    forEachIndex(updates.type.dims, [&](const Index& u, int64_t flat) {
        batch.clear();
        std::fill(in.begin(), in.end(), 0);
        size_t w = 0;
        for (int64_t a = 0; a < updates.type.rank(); ++a) {
            if (contains(s.updateWindowDims, a)) in[static_cast<size_t>(windowOperandDims[w++])] = u[static_cast<size_t>(a)];
            else batch.push_back(u[static_cast<size_t>(a)]);
        }
        readIndexVector(indices, s.indexVectorDim, batch, startVector);
        std::fill(start.begin(), start.end(), 0);
        for (size_t k = 0; k < s.scatterDimsToOperandDims.size(); ++k)
            start[static_cast<size_t>(s.scatterDimsToOperandDims[k])] = startVector[k];
        for (size_t j = 0; j < s.inputBatchingDims.size(); ++j)
            start[static_cast<size_t>(s.inputBatchingDims[j])] = batch[static_cast<size_t>(batchPos[j])];
        for (size_t d = 0; d < start.size(); ++d) {
            if (start[d] < 0 || start[d] + windowSize[d] > operand.type.dims[d]) return;  // skipped
            in[d] += start[d];
        }
        double& slot = out.values[static_cast<size_t>(flatten(in, outStrides))];
        slot = combine(op.attrs.reduceKind, slot, updates.values[static_cast<size_t>(flat)]);
    });
    return out;
}

Tensor evalDot(const Op& op, const Tensor& lhs, const Tensor& rhs) {
    const DotDimensionNumbers& d = op.attrs.dot;
    std::vector<int64_t> lhsFree, rhsFree;
    for (int64_t a = 0; a < lhs.type.rank(); ++a)
        if (!contains(d.lhsBatch, a) && !contains(d.lhsContracting, a)) lhsFree.push_back(a);
    for (int64_t a = 0; a < rhs.type.rank(); ++a)
        if (!contains(d.rhsBatch, a) && !contains(d.rhsContracting, a)) rhsFree.push_back(a);
    std::vector<int64_t> contractDims;
    for (int64_t a : d.lhsContracting) contractDims.push_back(lhs.type.dims[static_cast<size_t>(a)]);
    const auto lStrides = rowMajorStrides(lhs.type.dims), rStrides = rowMajorStrides(rhs.type.dims);
    Tensor out{op.type, std::vector<double>(static_cast<size_t>(op.type.elements()), 0.0)};
    Index l(lhs.type.dims.size()), r(rhs.type.dims.size());
    forEachIndex(op.type.dims, [&](const Index& o, int64_t flat) {
        size_t pos = 0;
        for (size_t k = 0; k < d.lhsBatch.size(); ++k, ++pos) {
            l[static_cast<size_t>(d.lhsBatch[k])] = o[pos];
            r[static_cast<size_t>(d.rhsBatch[k])] = o[pos];
        }
        for (int64_t a : lhsFree) l[static_cast<size_t>(a)] = o[pos++];
        for (int64_t a : rhsFree) r[static_cast<size_t>(a)] = o[pos++];
        double sum = 0.0;
        forEachIndex(contractDims, [&](const Index& c, int64_t) {
            for (size_t k = 0; k < c.size(); ++k) {
                l[static_cast<size_t>(d.lhsContracting[k])] = c[k];
                r[static_cast<size_t>(d.rhsContracting[k])] = c[k];
            }
            sum += lhs.values[static_cast<size_t>(flatten(l, lStrides))] *
                   rhs.values[static_cast<size_t>(flatten(r, rStrides))];
        });
        out.values[static_cast<size_t>(flat)] = sum;
    });
    return out;
}

Result<Tensor> evalOp(const Op& op, const std::vector<Tensor>& values,
                      const std::map<std::string, Tensor>& parameters) {
    auto in = [&](size_t i) -> const Tensor& { return values[static_cast<size_t>(op.operands[i])]; };
    const auto n = static_cast<size_t>(op.type.elements());
    Tensor out{op.type, {}};

    if (isUnaryElementwise(op.kind)) {
        const Tensor& x = in(0);
        out.values.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const double v = x.values[i];
            if (op.kind != OpKind::Convert) out.values[i] = unaryValue(op.kind, v);
            else if (op.type.dtype == DType::Pred) out.values[i] = v != 0.0 ? 1.0 : 0.0;
            else if (isInteger(op.type.dtype)) out.values[i] = truncateToInteger(v, op.type.dtype);
            else out.values[i] = v;
        }
        return out;
    }
    if (isBinaryElementwise(op.kind)) {
        const Tensor& a = in(0);
        const Tensor& b = in(1);
        out.values.resize(n);
        for (size_t i = 0; i < n; ++i) out.values[i] = binaryValue(op, a.type.dtype, a.values[i], b.values[i]);
        return out;
    }

    switch (op.kind) {
        case OpKind::Parameter: {
            auto it = parameters.find(op.name);
            if (it == parameters.end())
                return opError(op, "interp.missing_parameter", "no value given for parameter " + op.type.toString());
            if (it->second.type != op.type)
                return opError(op, "interp.bad_parameter", "value of type " + it->second.type.toString() +
                                                               " given for parameter " + op.type.toString());
            if (it->second.values.size() != n)
                return opError(op, "interp.bad_parameter", "value has " + std::to_string(it->second.values.size()) +
                                                               " elements, parameter " + op.type.toString() +
                                                               " needs " + std::to_string(n));
            return it->second;
        }
        case OpKind::Constant:
            if (op.attrs.literal.size() == 1) out.values.assign(n, op.attrs.literal[0]);
            else out.values = op.attrs.literal;
            return out;
        case OpKind::Iota: {
            out.values.resize(n);
            const auto axis = static_cast<size_t>(op.attrs.dimensions[0]);
            forEachIndex(op.type.dims, [&](const Index& i, int64_t flat) {
                out.values[static_cast<size_t>(flat)] = double(i[axis]);
            });
            return out;
        }
        case OpKind::Select: {
            const Tensor& p = in(0);
            const Tensor& t = in(1);
            const Tensor& f = in(2);
            out.values.resize(n);
            for (size_t i = 0; i < n; ++i) out.values[i] = p.values[i] != 0.0 ? t.values[i] : f.values[i];
            return out;
        }
        case OpKind::Broadcast: {
            const Tensor& x = in(0);
            const auto strides = rowMajorStrides(x.type.dims);
            const auto& map = op.attrs.dimensions;
            out.values.resize(n);
            forEachIndex(op.type.dims, [&](const Index& o, int64_t flat) {
                int64_t src = 0;
                for (size_t i = 0; i < map.size(); ++i) src += o[static_cast<size_t>(map[i])] * strides[i];
                out.values[static_cast<size_t>(flat)] = x.values[static_cast<size_t>(src)];
            });
            return out;
        }
        case OpKind::Reshape:
            out.values = in(0).values;
            return out;
        case OpKind::Transpose: {
            const Tensor& x = in(0);
            const auto strides = rowMajorStrides(x.type.dims);
            const auto& perm = op.attrs.dimensions;
            out.values.resize(n);
            forEachIndex(op.type.dims, [&](const Index& o, int64_t flat) {
                int64_t src = 0;
                for (size_t i = 0; i < perm.size(); ++i) src += o[i] * strides[static_cast<size_t>(perm[i])];
                out.values[static_cast<size_t>(flat)] = x.values[static_cast<size_t>(src)];
            });
            return out;
        }
        case OpKind::Slice: {
            const Tensor& x = in(0);
            const auto strides = rowMajorStrides(x.type.dims);
            const SliceBounds& s = op.attrs.slice;
            out.values.resize(n);
            forEachIndex(op.type.dims, [&](const Index& o, int64_t flat) {
                int64_t src = 0;
                for (size_t i = 0; i < o.size(); ++i) src += (s.start[i] + o[i] * s.stride[i]) * strides[i];
                out.values[static_cast<size_t>(flat)] = x.values[static_cast<size_t>(src)];
            });
            return out;
        }
        case OpKind::Concatenate: {
            const auto axis = static_cast<size_t>(op.attrs.dimensions[0]);
            const auto outStrides = rowMajorStrides(op.type.dims);
            out.values.resize(n);
            int64_t offset = 0;
            for (size_t k = 0; k < op.operands.size(); ++k) {
                const Tensor& x = in(k);
                forEachIndex(x.type.dims, [&](const Index& i, int64_t flat) {
                    Index o = i;
                    o[axis] += offset;
                    out.values[static_cast<size_t>(flatten(o, outStrides))] = x.values[static_cast<size_t>(flat)];
                });
                offset += x.type.dims[axis];
            }
            return out;
        }
        case OpKind::Reduce: {
            const Tensor& x = in(0);
            const auto outStrides = rowMajorStrides(op.type.dims);
            const auto& reduced = op.attrs.dimensions;
            out.values.assign(n, reduceIdentity(op.attrs.reduceKind, op.type.dtype));
            Index o;
            forEachIndex(x.type.dims, [&](const Index& i, int64_t flat) {
                o.clear();
                for (size_t d = 0; d < i.size(); ++d)
                    if (!contains(reduced, static_cast<int64_t>(d))) o.push_back(i[d]);
                double& slot = out.values[static_cast<size_t>(flatten(o, outStrides))];
                slot = combine(op.attrs.reduceKind, slot, x.values[static_cast<size_t>(flat)]);
            });
            return out;
        }
        case OpKind::Dot: return evalDot(op, in(0), in(1));
        case OpKind::Gather: return evalGather(op, in(0), in(1));
        case OpKind::Scatter: return evalScatter(op, in(0), in(1), in(2));
        case OpKind::CustomCall:
            if (op.attrs.target == "hlo.erf" && op.operands.size() == 1) {  // elementwise erf
                Tensor out{op.type, in(0).values};
                for (double& v : out.values) v = std::erf(v);
                return out;
            }
            return opError(op, "interp.unsupported", "custom-call '" + op.attrs.target + "' cannot be evaluated");
        default: break;
    }
    return opError(op, "interp.unsupported", "no evaluation rule for " + std::string(opKindName(op.kind)));
}

// ---- manual regions ----

// The sharding of a manual region's boundary, parsed; its tiled or replicated form only.
Result<HloSharding> boundarySharding(const Op& op) {
    auto h = parseHloSharding(op.attrs.sharding);
    if (!h) return opError(op, "interp.unsupported", h.error().message);
    if (h->kind != HloSharding::Kind::Tiled && h->kind != HloSharding::Kind::Replicated)
        return opError(op, "interp.unsupported", "boundary sharding " + op.attrs.sharding + " is neither tiled nor replicated");
    return *h;
}

// Where device `device`'s tile of a value of `fullDims` starts under `h` (zeros when replicated).
std::vector<int64_t> tileStart(const HloSharding& h, int64_t device, const std::vector<int64_t>& fullDims) {
    std::vector<int64_t> start(fullDims.size(), 0);
    if (h.kind != HloSharding::Kind::Tiled) return start;
    const auto it = std::find(h.devices.begin(), h.devices.end(), device);
    int64_t pos = it - h.devices.begin();
    for (size_t g = h.tileDims.size(); g-- > 0;) {
        const int64_t c = pos % h.tileDims[g];
        pos /= h.tileDims[g];
        if (g < fullDims.size()) start[g] = c * (fullDims[g] / h.tileDims[g]);
    }
    return start;
}

// Copies `local` into `full` at `start` (toFull) or `full` at `start` into `local`.
void copyTile(Tensor& full, Tensor& local, const std::vector<int64_t>& start, bool toFull) {
    const std::vector<int64_t> fs = rowMajorStrides(full.type.dims);
    Index at(local.type.dims.size(), 0);
    forEachIndex(local.type.dims, [&](const Index& i, int64_t k) {
        for (size_t d = 0; d < i.size(); ++d) at[d] = i[d] + start[d];
        const auto f = static_cast<size_t>(flatten(at, fs));
        if (toFull) full.values[f] = local.values[static_cast<size_t>(k)];
        else local.values[static_cast<size_t>(k)] = full.values[f];
    });
}

// SPMD execution: ops of a manual region hold one value per device (each device's tile from
// SPMDFullToShardShape on, combined by hlo.all-reduce over its replica groups), and
// SPMDShardToFullShape assembles the devices' tiles into the full value again. values[i] of a
// region's op is device 0's.
Result<std::vector<Tensor>> evalManual(const Graph& graph, const std::map<std::string, Tensor>& parameters,
                                       const EvalOptions& options, const std::vector<char>& manual, int64_t total) {
    int64_t devices = 1;
    for (const Op& op : graph.ops()) {
        if (isFullToShard(op) || isShardToFull(op)) {
            auto h = boundarySharding(op);
            if (!h) return h.error();
            if (h->kind == HloSharding::Kind::Tiled) devices = std::max<int64_t>(devices, static_cast<int64_t>(h->devices.size()));
        }
        for (const auto& g : op.attrs.replicaGroups)
            for (int64_t d : g) devices = std::max(devices, d + 1);
    }
    int64_t manualElements = 0;
    for (const Op& op : graph.ops())
        if (manual[static_cast<size_t>(op.id)]) manualElements += op.type.elements();
    if (manualElements > 0 && (manualElements * (devices - 1) > options.maxTotalElements - total))
        return makeError("interp.too_large", "a manual region on " + std::to_string(devices) + " devices needs more than " +
                                                 std::to_string(options.maxTotalElements) + " elements");
    std::vector<Tensor> values;
    values.reserve(static_cast<size_t>(graph.size()));
    std::vector<std::vector<Tensor>> local(static_cast<size_t>(graph.size()));  // per manual op: per device
    auto perDevice = [&](OpId o, int64_t d) -> const Tensor& {
        return manual[static_cast<size_t>(o)] ? local[static_cast<size_t>(o)][static_cast<size_t>(d)] : values[static_cast<size_t>(o)];
    };
    for (const Op& op : graph.ops()) {
        const auto k = static_cast<size_t>(op.id);
        if (isFullToShard(op) || isShardToFull(op)) {
            auto h = boundarySharding(op);
            if (!h) return h.error();
            if (isFullToShard(op)) {
                Tensor full = values[static_cast<size_t>(op.operands[0])];
                for (int64_t d = 0; d < devices; ++d) {
                    Tensor tile{op.type, std::vector<double>(static_cast<size_t>(op.type.elements()))};
                    copyTile(full, tile, tileStart(*h, d, full.type.dims), false);
                    local[k].push_back(std::move(tile));
                }
                values.push_back(local[k][0]);
            } else {
                Tensor full{op.type, std::vector<double>(static_cast<size_t>(op.type.elements()))};
                for (int64_t d = devices; d-- > 0;) {
                    Tensor tile = perDevice(op.operands[0], d);
                    copyTile(full, tile, tileStart(*h, d, op.type.dims), true);
                }
                values.push_back(std::move(full));
            }
            continue;
        }
        if (!manual[k]) {
            auto value = evalOp(op, values, parameters);
            if (!value) return value.error();
            values.push_back(std::move(*value));
            continue;
        }
        if (op.kind == OpKind::CustomCall && op.attrs.target == kAllReduceTarget && op.operands.size() == 1) {
            std::vector<std::vector<int64_t>> groups = op.attrs.replicaGroups;
            if (groups.empty()) {
                groups.emplace_back();
                for (int64_t d = 0; d < devices; ++d) groups[0].push_back(d);
            }
            local[k].assign(static_cast<size_t>(devices), Tensor{op.type, {}});
            for (const auto& g : groups) {
                Tensor sum{op.type, std::vector<double>(static_cast<size_t>(op.type.elements()), reduceIdentity(op.attrs.reduceKind, op.type.dtype))};
                for (int64_t d : g) {
                    const Tensor& x = perDevice(op.operands[0], d);
                    for (size_t i = 0; i < sum.values.size(); ++i) sum.values[i] = combine(op.attrs.reduceKind, sum.values[i], x.values[i]);
                }
                for (int64_t d : g) local[k][static_cast<size_t>(d)] = sum;
            }
            values.push_back(local[k][0]);
            continue;
        }
        // Any other op of the region: once per device, on that device's operands.
        Op renumbered = op;
        std::vector<Tensor> operands(op.operands.size());
        for (size_t i = 0; i < op.operands.size(); ++i) renumbered.operands[i] = static_cast<OpId>(i);
        for (int64_t d = 0; d < devices; ++d) {
            for (size_t i = 0; i < op.operands.size(); ++i) operands[i] = perDevice(op.operands[i], d);
            auto value = evalOp(renumbered, operands, parameters);
            if (!value) return value.error();
            local[k].push_back(std::move(*value));
        }
        values.push_back(local[k][0]);
    }
    return values;
}

}  // namespace

double Tensor::at(const std::vector<int64_t>& index) const {
    assert(index.size() == type.dims.size());
    return values[static_cast<size_t>(flatten(index, rowMajorStrides(type.dims)))];
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
    return strides;
}

Result<std::vector<Tensor>> evaluate(const Graph& graph, const std::map<std::string, Tensor>& parameters,
                                     const EvalOptions& options) {
    CFP_TRY(graph.validate());
    // Check the budget before computing anything, so a huge graph fails fast.
    int64_t total = 0;
    for (const Op& op : graph.ops()) {
        total += op.type.elements();  // validated: each count ≤ 2^62, so the sum of two cannot wrap
        if (total > options.maxTotalElements)
            return opError(op, "interp.too_large", "evaluating up to this op needs " + std::to_string(total) +
                                                       " elements, over the budget of " +
                                                       std::to_string(options.maxTotalElements));
    }
    std::vector<Tensor> values;
    values.reserve(static_cast<size_t>(graph.size()));
    // Manual (shard_map) regions run once per device (evalManual); elsewhere one value per op.
    std::vector<char> manual(static_cast<size_t>(graph.size()), 0);
    bool anyManual = false;
    for (const Op& op : graph.ops()) {
        bool m = isFullToShard(op);
        if (!isShardToFull(op))
            for (OpId o : op.operands) m = m || manual[static_cast<size_t>(o)];
        manual[static_cast<size_t>(op.id)] = m;
        anyManual = anyManual || m;
    }
    if (anyManual) return evalManual(graph, parameters, options, manual, total);
    for (const Op& op : graph.ops()) {
        auto value = evalOp(op, values, parameters);
        if (!value) return value.error();
        values.push_back(std::move(*value));
    }
    return values;
}

}  // namespace cfp
