#include "ir/shape_inference.h"

#include <algorithm>

#include "util/checked_math.h"

namespace cfp {

namespace {

std::string list(const std::vector<int64_t>& v) {
    std::string out = "{";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(v[i]);
    }
    return out + "}";
}

Error err(std::string code, std::string message) { return makeError("shape." + code, std::move(message)); }

// Every entry in [0, rank) and no repeats.
Status checkAxes(const std::vector<int64_t>& axes, int64_t rank, const std::string& what) {
    std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
    for (int64_t a : axes) {
        if (a < 0 || a >= rank)
            return err("bad_attribute", what + " " + list(axes) + " has " + std::to_string(a) +
                                            ", outside [0," + std::to_string(rank) + ")");
        if (seen[static_cast<size_t>(a)])
            return err("bad_attribute", what + " " + list(axes) + " repeats " + std::to_string(a));
        seen[static_cast<size_t>(a)] = true;
    }
    return {};
}

Status checkSorted(const std::vector<int64_t>& axes, const std::string& what) {
    if (!std::is_sorted(axes.begin(), axes.end()))
        return err("bad_attribute", what + " " + list(axes) + " must be sorted");
    return {};
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Result<TensorType> checked(TensorType t) {
    CFP_TRY(validateTensorType(t));
    return t;
}

Result<TensorType> inferDot(const TensorType& lhs, const TensorType& rhs, const DotDimensionNumbers& d) {
    if (lhs.dtype != rhs.dtype)
        return err("dtype_mismatch", "dot operands " + lhs.toString() + " and " + rhs.toString() +
                                         " have different element types");
    if (d.lhsBatch.size() != d.rhsBatch.size())
        return err("bad_attribute", "dot batch dims " + list(d.lhsBatch) + " and " + list(d.rhsBatch) +
                                        " differ in count");
    if (d.lhsContracting.size() != d.rhsContracting.size())
        return err("bad_attribute", "dot contracting dims " + list(d.lhsContracting) + " and " +
                                        list(d.rhsContracting) + " differ in count");
    std::vector<int64_t> lhsUsed = d.lhsBatch, rhsUsed = d.rhsBatch;
    lhsUsed.insert(lhsUsed.end(), d.lhsContracting.begin(), d.lhsContracting.end());
    rhsUsed.insert(rhsUsed.end(), d.rhsContracting.begin(), d.rhsContracting.end());
    CFP_TRY(checkAxes(lhsUsed, lhs.rank(), "dot lhs batch+contracting dims"));
    CFP_TRY(checkAxes(rhsUsed, rhs.rank(), "dot rhs batch+contracting dims"));
    auto sizeOf = [](const TensorType& t, int64_t a) { return t.dims[static_cast<size_t>(a)]; };
    for (size_t i = 0; i < d.lhsBatch.size(); ++i)
        if (sizeOf(lhs, d.lhsBatch[i]) != sizeOf(rhs, d.rhsBatch[i]))
            return err("dim_mismatch", "dot batch dim " + std::to_string(i) + ": " + lhs.toString() + " vs " +
                                           rhs.toString());
    for (size_t i = 0; i < d.lhsContracting.size(); ++i)
        if (sizeOf(lhs, d.lhsContracting[i]) != sizeOf(rhs, d.rhsContracting[i]))
            return err("dim_mismatch", "dot contracting dim " + std::to_string(i) + ": " + lhs.toString() +
                                           " vs " + rhs.toString());
    TensorType out{lhs.dtype, {}};
    for (int64_t a : d.lhsBatch) out.dims.push_back(sizeOf(lhs, a));
    for (int64_t a = 0; a < lhs.rank(); ++a)
        if (!contains(lhsUsed, a)) out.dims.push_back(sizeOf(lhs, a));
    for (int64_t a = 0; a < rhs.rank(); ++a)
        if (!contains(rhsUsed, a)) out.dims.push_back(sizeOf(rhs, a));
    return checked(std::move(out));
}

// Index-vector size and batch dims of gather/scatter start indices.
Status indexShape(const TensorType& indices, int64_t indexVectorDim, int64_t& vectorSize,
                  std::vector<int64_t>& batchDims) {
    if (!isInteger(indices.dtype))
        return err("dtype_mismatch", "indices " + indices.toString() + " must be s32 or s64");
    if (indexVectorDim < 0 || indexVectorDim > indices.rank())
        return err("bad_attribute", "index_vector_dim " + std::to_string(indexVectorDim) + " outside [0," +
                                        std::to_string(indices.rank()) + "]");
    vectorSize = indexVectorDim == indices.rank() ? 1 : indices.dims[static_cast<size_t>(indexVectorDim)];
    batchDims.clear();
    for (int64_t a = 0; a < indices.rank(); ++a)
        if (a != indexVectorDim) batchDims.push_back(indices.dims[static_cast<size_t>(a)]);
    return {};
}

// Operand batching dims (sorted, apart from the collapsed/inserted and indexed dims) paired one to
// one with indices dims (not the index vector dim) of the same size.
Status checkBatchingDims(const TensorType& operand, const TensorType& indices, int64_t indexVectorDim,
                         const std::vector<int64_t>& operandDims, const std::vector<int64_t>& indicesDims,
                         const std::vector<int64_t>& collapsed, const std::vector<int64_t>& indexed, const char* what) {
    const std::string w(what);
    if (operandDims.size() != indicesDims.size())
        return err("bad_attribute", w + " batching dims " + list(operandDims) + " and " + list(indicesDims) +
                                        " differ in length");
    CFP_TRY(checkAxes(operandDims, operand.rank(), (w + " operand batching dims").c_str()));
    CFP_TRY(checkSorted(operandDims, (w + " operand batching dims").c_str()));
    CFP_TRY(checkAxes(indicesDims, indices.rank(), (w + " indices batching dims").c_str()));
    for (size_t j = 0; j < operandDims.size(); ++j) {
        const int64_t o = operandDims[j], i = indicesDims[j];
        if (i == indexVectorDim || contains(collapsed, o) || contains(indexed, o))
            return err("bad_attribute", w + " batching dims " + list(operandDims) + " / " + list(indicesDims) +
                                            " overlap the index vector, collapsed or indexed dims");
        if (operand.dims[static_cast<size_t>(o)] != indices.dims[static_cast<size_t>(i)])
            return err("dim_mismatch", w + " batching dim " + std::to_string(o) + " of " + operand.toString() +
                                           " and dim " + std::to_string(i) + " of indices " + indices.toString() +
                                           " differ in size");
    }
    return {};
}

Result<TensorType> inferGather(const TensorType& operand, const TensorType& indices,
                               const GatherDimensionNumbers& g) {
    int64_t vectorSize = 0;
    std::vector<int64_t> batch;
    CFP_TRY(indexShape(indices, g.indexVectorDim, vectorSize, batch));
    if (static_cast<int64_t>(g.startIndexMap.size()) != vectorSize)
        return err("bad_attribute", "gather start_index_map " + list(g.startIndexMap) + " must have " +
                                        std::to_string(vectorSize) + " entries (index vector size)");
    CFP_TRY(checkAxes(g.startIndexMap, operand.rank(), "gather start_index_map"));
    if (static_cast<int64_t>(g.sliceSizes.size()) != operand.rank())
        return err("bad_attribute", "gather slice_sizes " + list(g.sliceSizes) + " must have one entry per operand dim");
    for (size_t i = 0; i < g.sliceSizes.size(); ++i)
        if (g.sliceSizes[i] < 0 || g.sliceSizes[i] > operand.dims[i])
            return err("bad_attribute", "gather slice_sizes " + list(g.sliceSizes) + " exceed operand " + operand.toString());
    CFP_TRY(checkAxes(g.collapsedSliceDims, operand.rank(), "gather collapsed_slice_dims"));
    CFP_TRY(checkSorted(g.collapsedSliceDims, "gather collapsed_slice_dims"));
    for (int64_t c : g.collapsedSliceDims)
        if (g.sliceSizes[static_cast<size_t>(c)] > 1)
            return err("bad_attribute", "gather collapsed dim " + std::to_string(c) + " has slice size > 1");
    CFP_TRY(checkBatchingDims(operand, indices, g.indexVectorDim, g.operandBatchingDims, g.startIndicesBatchingDims,
                              g.collapsedSliceDims, g.startIndexMap, "gather"));
    for (int64_t b : g.operandBatchingDims)
        if (g.sliceSizes[static_cast<size_t>(b)] != 1)
            return err("bad_attribute", "gather batching dim " + std::to_string(b) + " needs slice size 1");
    if (static_cast<int64_t>(g.offsetDims.size()) !=
        operand.rank() - static_cast<int64_t>(g.collapsedSliceDims.size() + g.operandBatchingDims.size()))
        return err("bad_attribute", "gather offset_dims " + list(g.offsetDims) +
                                        " must have one entry per operand dim neither collapsed nor batching");
    const int64_t outRank = static_cast<int64_t>(batch.size() + g.offsetDims.size());
    CFP_TRY(checkAxes(g.offsetDims, outRank, "gather offset_dims"));
    CFP_TRY(checkSorted(g.offsetDims, "gather offset_dims"));
    TensorType out{operand.dtype, std::vector<int64_t>(static_cast<size_t>(outRank), 0)};
    size_t nextOffset = 0, nextBatch = 0;
    std::vector<int64_t> windowSizes;
    for (int64_t a = 0; a < operand.rank(); ++a)
        if (!contains(g.collapsedSliceDims, a) && !contains(g.operandBatchingDims, a))
            windowSizes.push_back(g.sliceSizes[static_cast<size_t>(a)]);
    for (int64_t a = 0; a < outRank; ++a)
        out.dims[static_cast<size_t>(a)] = contains(g.offsetDims, a) ? windowSizes[nextOffset++] : batch[nextBatch++];
    return checked(std::move(out));
}

Result<TensorType> inferScatter(const TensorType& operand, const TensorType& indices, const TensorType& updates,
                                const ScatterDimensionNumbers& s) {
    if (updates.dtype != operand.dtype)
        return err("dtype_mismatch", "scatter updates " + updates.toString() + " and operand " +
                                         operand.toString() + " have different element types");
    int64_t vectorSize = 0;
    std::vector<int64_t> batch;
    CFP_TRY(indexShape(indices, s.indexVectorDim, vectorSize, batch));
    CFP_TRY(checkAxes(s.updateWindowDims, updates.rank(), "scatter update_window_dims"));
    CFP_TRY(checkSorted(s.updateWindowDims, "scatter update_window_dims"));
    CFP_TRY(checkAxes(s.insertedWindowDims, operand.rank(), "scatter inserted_window_dims"));
    CFP_TRY(checkSorted(s.insertedWindowDims, "scatter inserted_window_dims"));
    CFP_TRY(checkBatchingDims(operand, indices, s.indexVectorDim, s.inputBatchingDims, s.scatterIndicesBatchingDims,
                              s.insertedWindowDims, s.scatterDimsToOperandDims, "scatter"));
    if (static_cast<int64_t>(s.updateWindowDims.size() + s.insertedWindowDims.size() + s.inputBatchingDims.size()) !=
        operand.rank())
        return err("bad_attribute",
                   "scatter update_window_dims + inserted_window_dims + input_batching_dims must cover the operand rank");
    if (static_cast<int64_t>(s.scatterDimsToOperandDims.size()) != vectorSize)
        return err("bad_attribute", "scatter scatter_dims_to_operand_dims " + list(s.scatterDimsToOperandDims) +
                                        " must have " + std::to_string(vectorSize) + " entries");
    CFP_TRY(checkAxes(s.scatterDimsToOperandDims, operand.rank(), "scatter scatter_dims_to_operand_dims"));
    std::vector<int64_t> updateScatterDims;
    for (int64_t a = 0; a < updates.rank(); ++a)
        if (!contains(s.updateWindowDims, a)) updateScatterDims.push_back(updates.dims[static_cast<size_t>(a)]);
    if (updateScatterDims != batch)
        return err("dim_mismatch", "scatter updates " + updates.toString() + " do not match indices " + indices.toString());
    size_t w = 0;
    for (int64_t a = 0; a < operand.rank(); ++a) {
        if (contains(s.insertedWindowDims, a) || contains(s.inputBatchingDims, a)) continue;
        const int64_t bound = updates.dims[static_cast<size_t>(s.updateWindowDims[w++])];
        if (bound > operand.dims[static_cast<size_t>(a)])
            return err("dim_mismatch", "scatter window of " + updates.toString() + " exceeds operand " + operand.toString());
    }
    return operand;
}

}  // namespace

int expectedOperandCount(OpKind kind) {
    if (isUnaryElementwise(kind)) return 1;
    if (isBinaryElementwise(kind)) return 2;
    switch (kind) {
        case OpKind::Parameter:
        case OpKind::Constant:
        case OpKind::Iota: return 0;
        case OpKind::Select:
        case OpKind::Scatter: return 3;
        case OpKind::Broadcast:
        case OpKind::Reshape:
        case OpKind::Transpose:
        case OpKind::Slice:
        case OpKind::Reduce: return 1;
        case OpKind::Dot:
        case OpKind::Gather: return 2;
        case OpKind::Concatenate:
        case OpKind::CustomCall: return -1;
        default: return -1;
    }
}

Result<TensorType> inferType(OpKind kind, std::span<const TensorType* const> operands, const OpAttrs& attrs,
                             const TensorType* declared) {
    const std::string kindName(opKindName(kind));
    const int expected = expectedOperandCount(kind);
    if (expected >= 0 && static_cast<int>(operands.size()) != expected)
        return err("operand_count", kindName + " takes " + std::to_string(expected) + " operand(s), got " +
                                        std::to_string(operands.size()));
    if (hasDeclaredType(kind)) {
        if (!declared) return err("missing_type", kindName + " needs a declared result type");
        CFP_TRY(validateTensorType(*declared));
    }
    auto operand = [&](size_t i) -> const TensorType& { return *operands[i]; };

    if (isUnaryElementwise(kind)) {
        const TensorType& x = operand(0);
        if (kind == OpKind::Convert) {
            if (declared->dims != x.dims)
                return err("dim_mismatch", "convert from " + x.toString() + " to " + declared->toString() +
                                               " changes dimensions");
            return *declared;
        }
        const bool intOk = kind == OpKind::Negate || kind == OpKind::Abs || kind == OpKind::Sign;
        if (!isFloating(x.dtype) && !(intOk && isInteger(x.dtype)))
            return err("dtype_mismatch", kindName + " needs a floating-point operand, got " + x.toString());
        return x;
    }
    if (isBinaryElementwise(kind)) {
        const TensorType& a = operand(0);
        const TensorType& b = operand(1);
        if (a != b)
            return err("type_mismatch", kindName + " operands " + a.toString() + " and " + b.toString() +
                                            " differ (broadcast explicitly)");
        if (kind == OpKind::And || kind == OpKind::Or) {
            if (a.dtype != DType::Pred && !isInteger(a.dtype))
                return err("dtype_mismatch", kindName + " needs pred or integer operands, got " + a.toString());
            return a;
        }
        if (kind == OpKind::Compare) return TensorType{DType::Pred, a.dims};
        if (a.dtype == DType::Pred)
            return err("dtype_mismatch", kindName + " does not take pred operands");
        return a;
    }

    switch (kind) {
        case OpKind::Parameter:
            return *declared;
        case OpKind::Constant: {
            const int64_t n = declared->elements();
            if (attrs.literal.size() != 1 && static_cast<int64_t>(attrs.literal.size()) != n)
                return err("bad_attribute", "constant " + declared->toString() + " needs 1 or " + std::to_string(n) +
                                                " literal values, got " + std::to_string(attrs.literal.size()));
            return *declared;
        }
        case OpKind::Iota:
            if (declared->dtype == DType::Pred)
                return err("dtype_mismatch", "iota cannot produce pred");
            if (attrs.dimensions.size() != 1)
                return err("bad_attribute", "iota needs exactly one iota dimension");
            CFP_TRY(checkAxes(attrs.dimensions, declared->rank(), "iota dimension"));
            return *declared;
        case OpKind::CustomCall:
            if (attrs.target.empty()) return err("bad_attribute", "custom-call needs a target name");
            return *declared;
        case OpKind::Select: {
            const TensorType& p = operand(0);
            if (p.dtype != DType::Pred || p.dims != operand(1).dims)
                return err("type_mismatch", "select predicate " + p.toString() + " must be pred with the dims of " +
                                                operand(1).toString());
            if (operand(1) != operand(2))
                return err("type_mismatch", "select branches " + operand(1).toString() + " and " +
                                                operand(2).toString() + " differ");
            return operand(1);
        }
        case OpKind::Broadcast: {
            const TensorType& x = operand(0);
            if (x.dtype != declared->dtype)
                return err("dtype_mismatch", "broadcast from " + x.toString() + " to " + declared->toString() +
                                                 " changes the element type");
            if (static_cast<int64_t>(attrs.dimensions.size()) != x.rank())
                return err("bad_attribute", "broadcast dimensions " + list(attrs.dimensions) + " need one entry per operand dim of " +
                                                x.toString());
            CFP_TRY(checkAxes(attrs.dimensions, declared->rank(), "broadcast dimensions"));
            for (size_t i = 0; i < attrs.dimensions.size(); ++i)
                if (x.dims[i] != declared->dims[static_cast<size_t>(attrs.dimensions[i])])
                    return err("dim_mismatch", "broadcast of " + x.toString() + " to " + declared->toString() +
                                                   " maps dim " + std::to_string(i) + " onto a different size");
            return *declared;
        }
        case OpKind::Reshape: {
            const TensorType& x = operand(0);
            if (x.dtype != declared->dtype)
                return err("dtype_mismatch", "reshape from " + x.toString() + " to " + declared->toString() +
                                                 " changes the element type");
            if (x.elements() != declared->elements())
                return err("dim_mismatch", "reshape from " + x.toString() + " to " + declared->toString() +
                                               " changes the element count");
            return *declared;
        }
        case OpKind::Transpose: {
            const TensorType& x = operand(0);
            if (static_cast<int64_t>(attrs.dimensions.size()) != x.rank())
                return err("bad_attribute", "transpose permutation " + list(attrs.dimensions) + " does not match rank of " +
                                                x.toString());
            CFP_TRY(checkAxes(attrs.dimensions, x.rank(), "transpose permutation"));
            TensorType out{x.dtype, {}};
            for (int64_t a : attrs.dimensions) out.dims.push_back(x.dims[static_cast<size_t>(a)]);
            return out;
        }
        case OpKind::Slice: {
            const TensorType& x = operand(0);
            const SliceBounds& s = attrs.slice;
            const auto r = static_cast<size_t>(x.rank());
            if (s.start.size() != r || s.limit.size() != r || s.stride.size() != r)
                return err("bad_attribute", "slice bounds need one start/limit/stride per dim of " + x.toString());
            TensorType out{x.dtype, {}};
            for (size_t i = 0; i < r; ++i) {
                if (s.start[i] < 0 || s.start[i] > s.limit[i] || s.limit[i] > x.dims[i] || s.stride[i] < 1)
                    return err("bad_attribute", "slice dim " + std::to_string(i) + " [" + std::to_string(s.start[i]) + ":" +
                                                    std::to_string(s.limit[i]) + ":" + std::to_string(s.stride[i]) +
                                                    "] is outside " + x.toString());
                // Ceil-divide without forming limit - start + stride - 1, which overflows for huge strides.
                const int64_t extent = s.limit[i] - s.start[i];
                out.dims.push_back(extent == 0 ? 0 : (extent - 1) / s.stride[i] + 1);
            }
            return out;
        }
        case OpKind::Concatenate: {
            if (operands.empty()) return err("operand_count", "concatenate needs at least one operand");
            const TensorType& first = operand(0);
            if (attrs.dimensions.size() != 1)
                return err("bad_attribute", "concatenate needs exactly one dimension");
            CFP_TRY(checkAxes(attrs.dimensions, first.rank(), "concatenate dimension"));
            const auto axis = static_cast<size_t>(attrs.dimensions[0]);
            TensorType out = first;
            for (size_t i = 1; i < operands.size(); ++i) {
                const TensorType& t = operand(i);
                bool ok = t.dtype == first.dtype && t.rank() == first.rank();
                for (size_t d = 0; ok && d < t.dims.size(); ++d)
                    if (d != axis && t.dims[d] != first.dims[d]) ok = false;
                if (!ok)
                    return err("type_mismatch", "concatenate operand " + std::to_string(i) + " " + t.toString() +
                                                    " does not match " + first.toString() + " outside dim " +
                                                    std::to_string(axis));
                auto sum = checkedAdd(out.dims[axis], t.dims[axis]);
                if (!sum) return err("too_large", "concatenated dimension overflows");
                out.dims[axis] = *sum;
            }
            return checked(std::move(out));
        }
        case OpKind::Reduce: {
            const TensorType& x = operand(0);
            CFP_TRY(checkAxes(attrs.dimensions, x.rank(), "reduce dimensions"));
            if (x.dtype == DType::Pred) return err("dtype_mismatch", "reduce does not take pred operands");
            TensorType out{x.dtype, {}};
            for (int64_t a = 0; a < x.rank(); ++a)
                if (!contains(attrs.dimensions, a)) out.dims.push_back(x.dims[static_cast<size_t>(a)]);
            return out;
        }
        case OpKind::Dot:
            return inferDot(operand(0), operand(1), attrs.dot);
        case OpKind::Gather:
            return inferGather(operand(0), operand(1), attrs.gather);
        case OpKind::Scatter:
            return inferScatter(operand(0), operand(1), operand(2), attrs.scatter);
        default:
            break;
    }
    return err("unknown_kind", "no shape rule for " + kindName);
}

}  // namespace cfp
