#include "ir/graph.h"

#include "ir/shape_inference.h"

namespace cfp {

namespace {

// Checks one op against the ops before it; `known` answers whether an id is a valid earlier op.
Result<TensorType> checkOp(const Op& op, const std::vector<Op>& ops, OpId selfId) {
    std::vector<const TensorType*> operandTypes;
    operandTypes.reserve(op.operands.size());
    for (size_t i = 0; i < op.operands.size(); ++i) {
        const OpId in = op.operands[i];
        if (in < 0 || in >= selfId || in >= static_cast<OpId>(ops.size()))
            return makeError("graph.bad_operand", "operand " + std::to_string(i) + " refers to op " +
                                                      std::to_string(in) + ", which does not precede it");
        operandTypes.push_back(&ops[static_cast<size_t>(in)].type);
    }
    if ((op.kind == OpKind::Parameter) != (op.role != ParamRole::None))
        return makeError("graph.bad_role", op.kind == OpKind::Parameter
                                               ? "parameter needs a role (input, trainable, optimizer_state)"
                                               : "only parameters have a role");
    auto type = inferType(op.kind, operandTypes, op.attrs, &op.type);
    if (!type) return type.error();
    if (*type != op.type)
        return makeError("graph.type_mismatch", "declared type " + op.type.toString() + " but " +
                                                    std::string(opKindName(op.kind)) + " gives " + type->toString());
    return type;
}

}  // namespace

Result<OpId> Graph::add(Op op) {
    const auto id = static_cast<OpId>(m_ops.size());
    if (op.name.empty()) return makeError("graph.bad_name", "op " + std::to_string(id) + " has an empty name");
    if (m_byName.count(op.name)) return makeError("graph.duplicate_name", "op name is used twice", op.name);
    auto type = checkOp(op, m_ops, id);
    if (!type) return type.error().withContext(op.name);
    op.id = id;
    m_byName.emplace(op.name, id);
    m_ops.push_back(std::move(op));
    return id;
}

OpId Graph::find(std::string_view name) const {
    auto it = m_byName.find(std::string(name));
    return it == m_byName.end() ? kNoOp : it->second;
}

Status Graph::addOutput(OpId id) {
    if (id < 0 || id >= static_cast<OpId>(m_ops.size()))
        return makeError("graph.bad_output", "output refers to op " + std::to_string(id) + ", which does not exist");
    m_outputs.push_back(id);
    return {};
}

Status Graph::validate() const {
    std::unordered_map<std::string, OpId> names;
    for (size_t i = 0; i < m_ops.size(); ++i) {
        const Op& op = m_ops[i];
        if (op.id != static_cast<OpId>(i))
            return makeError("graph.bad_id", "op at index " + std::to_string(i) + " has id " + std::to_string(op.id),
                             op.name);
        if (op.name.empty()) return makeError("graph.bad_name", "op " + std::to_string(i) + " has an empty name");
        if (!names.emplace(op.name, op.id).second)
            return makeError("graph.duplicate_name", "op name is used twice", op.name);
        auto type = checkOp(op, m_ops, op.id);
        if (!type) return type.error().withContext(op.name);
        if (op.derivedFrom != kNoOp && (op.derivedFrom < 0 || op.derivedFrom >= static_cast<OpId>(m_ops.size())))
            return makeError("graph.bad_provenance", "derived_from refers to a missing op", op.name);
    }
    for (OpId out : m_outputs)
        if (out < 0 || out >= static_cast<OpId>(m_ops.size()))
            return makeError("graph.bad_output", "output refers to op " + std::to_string(out) + ", which does not exist");
    return {};
}

std::vector<std::vector<OpId>> Graph::users() const {
    std::vector<std::vector<OpId>> out(m_ops.size());
    for (const Op& op : m_ops)
        for (OpId in : op.operands) out[static_cast<size_t>(in)].push_back(op.id);
    return out;
}

std::vector<OpId> Graph::parameters(ParamRole role) const {
    std::vector<OpId> out;
    for (const Op& op : m_ops)
        if (op.kind == OpKind::Parameter && op.role == role) out.push_back(op.id);
    return out;
}

}  // namespace cfp
