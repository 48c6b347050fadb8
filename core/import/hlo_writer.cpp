#include "import/hlo_writer.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sharding/hlo_sharding.h"

namespace cfp {

namespace {

std::string ints(const std::vector<int64_t>& v) {
    std::string out = "{";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out + "}";
}

std::string shapeText(const TensorType& t) {
    std::string out = t.toString();
    if (t.rank() > 0) {
        out += "{";
        for (int64_t d = t.rank() - 1; d >= 0; --d) out += std::to_string(d) + (d ? "," : "");
        out += "}";
    }
    return out;
}

std::string number(double v, DType dtype) {
    if (dtype == DType::Pred) return v != 0 ? "true" : "false";
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, ptr) : std::string("0");
}

// Nested braces over the dims, e.g. {{1,2},{3,4}}; a splat literal repeats its value.
void literalText(const Op& op, size_t dim, int64_t& next, std::string& out) {
    const auto& dims = op.type.dims;
    if (dim == dims.size()) {
        const auto& lit = op.attrs.literal;
        out += number(lit.size() == 1 ? lit[0] : lit[static_cast<size_t>(next)], op.type.dtype);
        ++next;
        return;
    }
    out += "{";
    for (int64_t i = 0; i < dims[dim]; ++i) {
        if (i) out += ", ";
        literalText(op, dim + 1, next, out);
    }
    out += "}";
}

std::string sanitize(const std::string& name) {
    std::string out;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '.' || c == '-';
        out += ok ? c : '_';
    }
    if (out.empty() || !((out[0] >= 'a' && out[0] <= 'z') || (out[0] >= 'A' && out[0] <= 'Z') || out[0] == '_'))
        out.insert(out.begin(), '_');
    return out;
}

double identity(ReduceKind k, DType t) {
    const double inf = std::numeric_limits<double>::infinity();
    switch (k) {
        case ReduceKind::Add: return 0;
        case ReduceKind::Multiply: return 1;
        case ReduceKind::Max:
            return isInteger(t) ? integerMin(t) : -inf;
        case ReduceKind::Min:
            return isInteger(t) ? integerMax(t) : inf;
    }
    return 0;
}

std::string_view combinerOpcode(ReduceKind k) {
    switch (k) {
        case ReduceKind::Add: return "add";
        case ReduceKind::Max: return "maximum";
        case ReduceKind::Min: return "minimum";
        case ReduceKind::Multiply: return "multiply";
    }
    return "add";
}

std::string regionName(ReduceKind k, DType t) {
    return "region_" + std::string(combinerOpcode(k)) + "_" + std::string(dtypeName(t));
}

}  // namespace

std::string writeHloText(const Graph& graph, const std::vector<std::string>& shardings) {
    // Unique HLO names for every op.
    std::vector<std::string> names(static_cast<size_t>(graph.size()));
    std::set<std::string> taken;
    for (const Op& op : graph.ops()) {
        std::string n = sanitize(op.name);
        for (int k = 1; !taken.insert(n).second; ++k) n = sanitize(op.name) + "_" + std::to_string(k);
        names[static_cast<size_t>(op.id)] = n;
    }
    auto ref = [&](OpId id) { return shapeText(graph.op(id).type) + " %" + names[static_cast<size_t>(id)]; };

    std::string out = "HloModule " + sanitize(graph.name().empty() ? "module" : graph.name()) + "\n\n";
    std::set<std::pair<ReduceKind, DType>> regions;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Reduce || op.kind == OpKind::Scatter || (op.kind == OpKind::CustomCall && !op.attrs.replicaGroups.empty()))
            regions.insert({op.attrs.reduceKind, op.type.dtype});
    for (const auto& [kind, dtype] : regions) {
        const std::string t = std::string(dtypeName(dtype)) + "[]";
        out += "%" + regionName(kind, dtype) + " (lhs: " + t + ", rhs: " + t + ") -> " + t + " {\n";
        out += "  %lhs = " + t + " parameter(0)\n  %rhs = " + t + " parameter(1)\n";
        out += "  ROOT %result = " + t + " " + std::string(combinerOpcode(kind)) + "(" + t + " %lhs, " + t + " %rhs)\n}\n\n";
    }

    std::string signature, resultShape = "(";
    int64_t paramNumber = 0;
    for (const Op& op : graph.ops())
        if (op.kind == OpKind::Parameter)
            signature += (paramNumber++ ? ", " : "") + names[static_cast<size_t>(op.id)] + ": " + op.type.toString();
    for (size_t i = 0; i < graph.outputs().size(); ++i)
        resultShape += (i ? ", " : "") + shapeText(graph.op(graph.outputs()[i]).type);
    resultShape += ")";
    out += "ENTRY %main (" + signature + ") -> " + resultShape + " {\n";

    paramNumber = 0;
    for (const Op& op : graph.ops()) {
        const std::string& name = names[static_cast<size_t>(op.id)];
        const OpAttrs& a = op.attrs;
        std::string operands;
        for (size_t i = 0; i < op.operands.size(); ++i) operands += (i ? ", " : "") + ref(op.operands[i]);
        std::string attrs;
        std::string opcode(opKindName(op.kind));
        switch (op.kind) {
            case OpKind::Parameter: operands = std::to_string(paramNumber++); break;
            case OpKind::Constant: {
                int64_t next = 0;
                std::string lit;
                if (op.type.rank() > 0 && op.type.elements() > 4096) lit = "{...}";
                else literalText(op, 0, next, lit);
                operands = lit;
                break;
            }
            case OpKind::Iota: attrs = ", iota_dimension=" + std::to_string(a.dimensions.at(0)); break;
            case OpKind::Compare: attrs = ", direction=" + std::string(comparisonName(a.comparison)); break;
            case OpKind::Broadcast:
            case OpKind::Transpose:
            case OpKind::Concatenate: attrs = ", dimensions=" + ints(a.dimensions); break;
            case OpKind::Slice: {
                attrs = ", slice={";
                for (size_t d = 0; d < a.slice.start.size(); ++d)
                    attrs += (d ? ", [" : "[") + std::to_string(a.slice.start[d]) + ":" + std::to_string(a.slice.limit[d]) + ":" +
                             std::to_string(a.slice.stride[d]) + "]";
                attrs += "}";
                break;
            }
            case OpKind::Reduce: {
                const std::string init = name + ".init";
                const std::string t = std::string(dtypeName(op.type.dtype)) + "[]";
                out += "  %" + init + " = " + t + " constant(" + number(identity(a.reduceKind, op.type.dtype), op.type.dtype) + ")\n";
                operands += ", " + t + " %" + init;
                attrs = ", dimensions=" + ints(a.dimensions) + ", to_apply=%" + regionName(a.reduceKind, op.type.dtype);
                break;
            }
            case OpKind::Dot: {
                const DotDimensionNumbers& d = a.dot;
                if (!d.lhsBatch.empty()) attrs += ", lhs_batch_dims=" + ints(d.lhsBatch);
                attrs += ", lhs_contracting_dims=" + ints(d.lhsContracting);
                if (!d.rhsBatch.empty()) attrs += ", rhs_batch_dims=" + ints(d.rhsBatch);
                attrs += ", rhs_contracting_dims=" + ints(d.rhsContracting);
                break;
            }
            case OpKind::Gather: {
                const GatherDimensionNumbers& g = a.gather;
                attrs = ", offset_dims=" + ints(g.offsetDims) + ", collapsed_slice_dims=" + ints(g.collapsedSliceDims) +
                        ", start_index_map=" + ints(g.startIndexMap) + ", index_vector_dim=" + std::to_string(g.indexVectorDim) +
                        ", slice_sizes=" + ints(g.sliceSizes);
                if (!g.operandBatchingDims.empty())
                    attrs += ", operand_batching_dims=" + ints(g.operandBatchingDims) +
                             ", start_indices_batching_dims=" + ints(g.startIndicesBatchingDims);
                break;
            }
            case OpKind::Scatter: {
                const ScatterDimensionNumbers& s = a.scatter;
                attrs = ", update_window_dims=" + ints(s.updateWindowDims) + ", inserted_window_dims=" + ints(s.insertedWindowDims) +
                        ", scatter_dims_to_operand_dims=" + ints(s.scatterDimsToOperandDims) +
                        ", index_vector_dim=" + std::to_string(s.indexVectorDim);
                if (!s.inputBatchingDims.empty())
                    attrs += ", input_batching_dims=" + ints(s.inputBatchingDims) +
                             ", scatter_indices_batching_dims=" + ints(s.scatterIndicesBatchingDims);
                attrs += ", to_apply=%" + regionName(a.reduceKind, op.type.dtype);
                break;
            }
            case OpKind::CustomCall: {
                if (!a.replicaGroups.empty()) {  // a collective (hlo.all-reduce): the HLO instruction again
                    opcode = a.target.rfind("hlo.", 0) == 0 ? a.target.substr(4) : a.target;
                    attrs = ", channel_id=1, replica_groups=" + replicaGroupsText(a.replicaGroups) +
                            ", use_global_device_ids=true, to_apply=%" + regionName(a.reduceKind, op.type.dtype);
                    break;
                }
                if (isFullToShard(op) && op.operands.size() == 1) {
                    // The full value's sharding on a Sharding custom-call before it, as shard_map writes.
                    const std::string annotated = name + ".sharding";
                    out += "  %" + annotated + " = " + shapeText(graph.op(op.operands[0]).type) + " custom-call(" + operands +
                           "), custom_call_target=\"Sharding\", sharding=" + a.sharding + "\n";
                    operands = shapeText(graph.op(op.operands[0]).type) + " %" + annotated;
                }
                std::string target;
                for (char c : a.target) target += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
                attrs = ", custom_call_target=\"" + target + "\"";
                if (isFullToShard(op)) attrs += ", sharding={manual}";
                else if (!a.sharding.empty()) attrs += ", sharding=" + a.sharding;
                break;
            }
            default: break;
        }
        std::string opName;
        for (char c : op.scope) opName += c == '.' ? '/' : c;
        opName += (opName.empty() ? "" : "/") + opcode;
        std::string quoted;
        for (char c : opName) quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
        const auto at = static_cast<size_t>(op.id);
        // A manual region's boundaries keep their own shardings.
        if (at < shardings.size() && !shardings[at].empty() && !isFullToShard(op) && !isShardToFull(op))
            attrs += ", sharding=" + shardings[at];
        out += "  %" + name + " = " + shapeText(op.type) + " " + opcode + "(" + operands + ")" + attrs +
               ", metadata={op_name=\"" + quoted + "\"}\n";
    }
    std::string outs;
    for (size_t i = 0; i < graph.outputs().size(); ++i) outs += (i ? ", " : "") + ref(graph.outputs()[i]);
    std::string rootName = "tuple";
    for (int k = 1; taken.count(rootName); ++k) rootName = "tuple_" + std::to_string(k);
    out += "  ROOT %" + rootName + " = " + resultShape + " tuple(" + outs + ")\n}\n";
    return out;
}

}  // namespace cfp
