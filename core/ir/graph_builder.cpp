#include "ir/graph_builder.h"

#include "ir/shape_inference.h"

namespace cfp {

GraphBuilder::ScopeGuard::ScopeGuard(GraphBuilder& b, const std::string& part) : m_builder(b), m_saved(b.m_scope) {
    if (part.empty()) return;
    b.m_scope = b.m_scope.empty() ? part : b.m_scope + "." + part;
}

OpId GraphBuilder::addOp(Op op) {
    if (op.name.empty()) op.name = std::string(opKindName(op.kind)) + "." + std::to_string(m_graph.size());
    op.phase = m_phase;
    if (op.scope.empty()) op.scope = m_scope;
    if (op.derivedFrom == kNoOp) {
        op.derivedFrom = m_derivedFrom;
        op.derivedOperand = m_derivedOperand;
    }
    auto id = m_graph.add(std::move(op));
    if (!id) throw BuildError(id.error());
    return *id;
}

OpId GraphBuilder::addOp(OpKind kind, std::vector<OpId> operands, OpAttrs attrs, TensorType declared) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    if (hasDeclaredType(kind)) {
        op.type = std::move(declared);
    } else {
        // Infer first so that Graph::add's check compares against the right type.
        std::vector<const TensorType*> types;
        for (OpId in : op.operands) {
            if (in < 0 || in >= m_graph.size())
                throw BuildError(makeError("graph.bad_operand", "operand refers to a missing op",
                                           std::string(opKindName(kind))));
            types.push_back(&m_graph.op(in).type);
        }
        auto t = inferType(kind, types, op.attrs, nullptr);
        if (!t) throw BuildError(t.error().withContext(m_scope.empty() ? std::string(opKindName(kind)) : m_scope));
        op.type = std::move(*t);
    }
    return addOp(std::move(op));
}

OpId GraphBuilder::parameter(const std::string& name, TensorType type, ParamRole role) {
    Op op;
    op.kind = OpKind::Parameter;
    op.name = name;
    op.type = std::move(type);
    op.role = role;
    return addOp(std::move(op));
}

OpId GraphBuilder::constant(double value, TensorType type) {
    OpAttrs a;
    a.literal = {value};
    return addOp(OpKind::Constant, {}, std::move(a), std::move(type));
}

OpId GraphBuilder::iota(TensorType type, int64_t dimension) {
    OpAttrs a;
    a.dimensions = {dimension};
    return addOp(OpKind::Iota, {}, std::move(a), std::move(type));
}

OpId GraphBuilder::compare(OpId a, OpId b, ComparisonDirection dir) {
    OpAttrs attrs;
    attrs.comparison = dir;
    return addOp(OpKind::Compare, {a, b}, std::move(attrs));
}

OpId GraphBuilder::convert(OpId x, DType to) {
    if (dtype(x) == to) return x;
    return addOp(OpKind::Convert, {x}, {}, TensorType{to, dims(x)});
}

OpId GraphBuilder::binaryScalar(OpKind kind, OpId x, double c) {
    OpId s = scalar(c, dtype(x));
    OpId b = dims(x).empty() ? s : broadcast(s, dims(x), {});
    return binary(kind, x, b);
}

OpId GraphBuilder::broadcast(OpId x, std::vector<int64_t> resultDims, std::vector<int64_t> mapping) {
    OpAttrs a;
    a.dimensions = std::move(mapping);
    return addOp(OpKind::Broadcast, {x}, std::move(a), TensorType{dtype(x), std::move(resultDims)});
}

OpId GraphBuilder::broadcastLike(OpId x, OpId like, std::vector<int64_t> mapping) {
    return broadcast(x, dims(like), std::move(mapping));
}

OpId GraphBuilder::reshape(OpId x, std::vector<int64_t> newDims) {
    if (newDims == dims(x)) return x;
    return addOp(OpKind::Reshape, {x}, {}, TensorType{dtype(x), std::move(newDims)});
}

OpId GraphBuilder::transpose(OpId x, std::vector<int64_t> permutation) {
    OpAttrs a;
    a.dimensions = std::move(permutation);
    return addOp(OpKind::Transpose, {x}, std::move(a));
}

OpId GraphBuilder::slice(OpId x, std::vector<int64_t> start, std::vector<int64_t> limit, std::vector<int64_t> stride) {
    if (stride.empty()) stride.assign(start.size(), 1);
    OpAttrs a;
    a.slice = SliceBounds{std::move(start), std::move(limit), std::move(stride)};
    return addOp(OpKind::Slice, {x}, std::move(a));
}

OpId GraphBuilder::sliceAxis(OpId x, int64_t axis, int64_t start, int64_t limit) {
    std::vector<int64_t> lo(dims(x).size(), 0), hi = dims(x);
    lo.at(static_cast<size_t>(axis)) = start;
    hi.at(static_cast<size_t>(axis)) = limit;
    return slice(x, std::move(lo), std::move(hi));
}

OpId GraphBuilder::concatenate(std::vector<OpId> xs, int64_t axis) {
    OpAttrs a;
    a.dimensions = {axis};
    return addOp(OpKind::Concatenate, std::move(xs), std::move(a));
}

OpId GraphBuilder::reduce(OpId x, std::vector<int64_t> reduceDims, ReduceKind kind) {
    OpAttrs a;
    a.dimensions = std::move(reduceDims);
    a.reduceKind = kind;
    return addOp(OpKind::Reduce, {x}, std::move(a));
}

OpId GraphBuilder::dot(OpId a, OpId b, DotDimensionNumbers d) {
    OpAttrs attrs;
    attrs.dot = std::move(d);
    return addOp(OpKind::Dot, {a, b}, std::move(attrs));
}

OpId GraphBuilder::matmul(OpId a, OpId b) {
    DotDimensionNumbers d;
    d.lhsContracting = {static_cast<int64_t>(dims(a).size()) - 1};
    d.rhsContracting = {0};
    return dot(a, b, std::move(d));
}

OpId GraphBuilder::gather(OpId operand, OpId indices, GatherDimensionNumbers d) {
    OpAttrs a;
    a.gather = std::move(d);
    return addOp(OpKind::Gather, {operand, indices}, std::move(a));
}

OpId GraphBuilder::scatter(OpId operand, OpId indices, OpId updates, ScatterDimensionNumbers d, ReduceKind combine) {
    OpAttrs a;
    a.scatter = std::move(d);
    a.reduceKind = combine;
    return addOp(OpKind::Scatter, {operand, indices, updates}, std::move(a));
}

void GraphBuilder::output(OpId id) {
    auto s = m_graph.addOutput(id);
    if (!s) throw BuildError(s.error());
}

}  // namespace cfp
