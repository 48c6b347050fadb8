#include "io/graph_json.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <span>
#include <unordered_map>

#include "io/atomic_file.h"
#include "io/strict_json.h"

namespace cfp {

namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Attribute fields per op kind. The writer emits exactly these; the reader requires them and
// rejects any other attribute, so that what is read is exactly what would be written back.

constexpr std::string_view kCommonFields[] = {"name",  "op",    "type",         "operands",
                                              "phase", "scope", "derived_from", "derived_operand"};

std::vector<std::string_view> attributeFields(OpKind kind) {
    switch (kind) {
        case OpKind::Parameter: return {"role"};
        case OpKind::Constant: return {"literal"};
        case OpKind::Iota: return {"iota_dimension"};
        case OpKind::Broadcast:
        case OpKind::Transpose:
        case OpKind::Concatenate: return {"dimensions"};
        case OpKind::Reduce: return {"dimensions", "reduce_kind"};
        case OpKind::Compare: return {"comparison_direction"};
        case OpKind::Slice: return {"slice"};
        case OpKind::Dot: return {"dot_dimension_numbers"};
        case OpKind::Gather: return {"gather_dimension_numbers", "slice_sizes"};
        case OpKind::Scatter: return {"scatter_dimension_numbers", "reduce_kind"};
        // Optional: a manual boundary's sharding, a collective's replica groups and combiner.
        case OpKind::CustomCall: return {"custom_call_target", "sharding", "replica_groups", "reduce_kind"};
        default: return {};
    }
}

bool isAnyAttributeField(std::string_view key) {
    for (int k = 0; k < kOpKindCount; ++k)
        for (std::string_view f : attributeFields(static_cast<OpKind>(k)))
            if (f == key) return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// Writer. Hand-formatted so that the layout is fixed and readable: one node per line.

std::string jsonString(std::string_view s) {
    // Names and scopes are nearly always plain ASCII, which needs no escaping.
    const bool plain = std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
    if (plain) {
        std::string out;
        out.reserve(s.size() + 2);
        out += '"';
        out += s;
        out += '"';
        return out;
    }
    // Invalid UTF-8 can only come from graphs built in code; replace it rather than throw.
    return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string numberText(double v) {
    if (std::isnan(v)) return "\"nan\"";
    if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
    return Json(v).dump();  // shortest text that parses back to the same double
}

std::string intList(const std::vector<int64_t>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(v[i]);
    }
    return out + "]";
}

// Appends `"key": value` pairs with ", " between them inside one pair of braces.
class ObjectWriter {
public:
    explicit ObjectWriter(std::string& out) : m_out(out) { m_out += '{'; }
    void raw(std::string_view key, std::string_view valueText) {
        if (!m_first) m_out += ", ";
        m_first = false;
        m_out += jsonString(key);
        m_out += ": ";
        m_out += valueText;
    }
    void str(std::string_view key, std::string_view value) { raw(key, jsonString(value)); }
    void ints(std::string_view key, const std::vector<int64_t>& v) { raw(key, intList(v)); }
    void integer(std::string_view key, int64_t v) { raw(key, std::to_string(v)); }
    void close() { m_out += '}'; }

private:
    std::string& m_out;
    bool m_first = true;
};

void writeAttributes(ObjectWriter& w, const Op& op) {
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::Parameter: w.str("role", paramRoleName(op.role)); break;
        case OpKind::Constant: {
            std::string text = "[";
            for (size_t i = 0; i < a.literal.size(); ++i) {
                if (i) text += ", ";
                text += numberText(a.literal[i]);
            }
            w.raw("literal", text + "]");
            break;
        }
        case OpKind::Iota: w.integer("iota_dimension", a.dimensions.empty() ? 0 : a.dimensions.front()); break;
        case OpKind::Broadcast:
        case OpKind::Transpose:
        case OpKind::Concatenate: w.ints("dimensions", a.dimensions); break;
        case OpKind::Reduce:
            w.ints("dimensions", a.dimensions);
            w.str("reduce_kind", reduceKindName(a.reduceKind));
            break;
        case OpKind::Compare: w.str("comparison_direction", comparisonName(a.comparison)); break;
        case OpKind::Slice: {
            std::string text;
            ObjectWriter s(text);
            s.ints("start", a.slice.start);
            s.ints("limit", a.slice.limit);
            s.ints("stride", a.slice.stride);
            s.close();
            w.raw("slice", text);
            break;
        }
        case OpKind::Dot: {
            std::string text;
            ObjectWriter d(text);
            d.ints("lhs_batch_dims", a.dot.lhsBatch);
            d.ints("rhs_batch_dims", a.dot.rhsBatch);
            d.ints("lhs_contracting_dims", a.dot.lhsContracting);
            d.ints("rhs_contracting_dims", a.dot.rhsContracting);
            d.close();
            w.raw("dot_dimension_numbers", text);
            break;
        }
        case OpKind::Gather: {
            std::string text;
            ObjectWriter g(text);
            g.ints("offset_dims", a.gather.offsetDims);
            g.ints("collapsed_slice_dims", a.gather.collapsedSliceDims);
            g.ints("start_index_map", a.gather.startIndexMap);
            g.integer("index_vector_dim", a.gather.indexVectorDim);
            if (!a.gather.operandBatchingDims.empty()) {
                g.ints("operand_batching_dims", a.gather.operandBatchingDims);
                g.ints("start_indices_batching_dims", a.gather.startIndicesBatchingDims);
            }
            g.close();
            w.raw("gather_dimension_numbers", text);
            w.ints("slice_sizes", a.gather.sliceSizes);
            break;
        }
        case OpKind::Scatter: {
            std::string text;
            ObjectWriter s(text);
            s.ints("update_window_dims", a.scatter.updateWindowDims);
            s.ints("inserted_window_dims", a.scatter.insertedWindowDims);
            s.ints("scatter_dims_to_operand_dims", a.scatter.scatterDimsToOperandDims);
            s.integer("index_vector_dim", a.scatter.indexVectorDim);
            if (!a.scatter.inputBatchingDims.empty()) {
                s.ints("input_batching_dims", a.scatter.inputBatchingDims);
                s.ints("scatter_indices_batching_dims", a.scatter.scatterIndicesBatchingDims);
            }
            s.close();
            w.raw("scatter_dimension_numbers", text);
            w.str("reduce_kind", reduceKindName(a.reduceKind));
            break;
        }
        case OpKind::CustomCall:
            w.str("custom_call_target", a.target);
            // Written when they differ from their defaults (none; every device one group; add).
            if (!a.sharding.empty()) w.str("sharding", a.sharding);
            if (!a.replicaGroups.empty()) {
                std::string text = "[";
                for (size_t g = 0; g < a.replicaGroups.size(); ++g) text += (g ? ", " : "") + intList(a.replicaGroups[g]);
                w.raw("replica_groups", text + "]");
            }
            if (a.reduceKind != ReduceKind::Add) w.str("reduce_kind", reduceKindName(a.reduceKind));
            break;
        default: break;
    }
}

void writeNode(std::string& out, const Graph& graph, const Op& op) {
    ObjectWriter w(out);
    w.str("name", op.name);
    w.str("op", opKindName(op.kind));
    w.str("type", op.type.toString());
    std::string operands = "[";
    for (size_t i = 0; i < op.operands.size(); ++i) {
        if (i) operands += ", ";
        operands += jsonString(graph.op(op.operands[i]).name);
    }
    w.raw("operands", operands + "]");
    writeAttributes(w, op);
    w.str("phase", phaseName(op.phase));
    w.str("scope", op.scope);
    if (op.derivedFrom >= 0 && op.derivedFrom < graph.size()) w.str("derived_from", graph.op(op.derivedFrom).name);
    if (op.derivedOperand != -1) w.integer("derived_operand", op.derivedOperand);
    w.close();
}

// ---------------------------------------------------------------------------------------------
// Reading the DOM into a graph.

// The graph format's codes for the strict reader's errors (io/strict_json.h).
constexpr StrictJson kGraphJson{.syntaxCode = "json.parse",
                                .duplicateKeyCode = "json.duplicate_key",
                                .typeCode = "json.type",
                                .missingFieldCode = "json.missing_field",
                                .unknownFieldCode = "json.unknown_field",
                                .outOfRangeCode = "json.out_of_range"};

#define CFP_IO_ASSIGN(lhs, expr)                     \
    do {                                             \
        auto cfp_io_result_ = (expr);                \
        if (!cfp_io_result_) return cfp_io_result_.error(); \
        lhs = std::move(cfp_io_result_.value());     \
    } while (0)

enum class Need { Required, Optional };

// The member `key` of `obj` (at `ptr`), nullptr when optional and absent.
Result<const Json*> member(const Json& obj, const std::string& ptr, std::string_view key, Need need) {
    auto it = obj.find(key);
    if (it != obj.end()) return &*it;
    if (need == Need::Optional) return static_cast<const Json*>(nullptr);
    return kGraphJson.missingField(ptr, key);
}

Status checkKeys(const Json& obj, const std::string& ptr, std::span<const std::string_view> allowed,
                 std::string_view owner) {
    const std::string* key = firstUnknownKey(obj, allowed);
    if (!key) return {};
    Error e = kGraphJson.unknownField(ptr, *key);
    if (isAnyAttributeField(*key) && !owner.empty())
        e.message = std::string(owner) + " does not take attribute '" + *key + "'";
    return e;
}

Result<std::vector<int64_t>> asIntList(const Json& j, const std::string& ptr) {
    if (!j.is_array()) return kGraphJson.typeError(ptr, "an array of integers", j);
    std::vector<int64_t> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        if (j[i].is_number_integer() && !j[i].is_number_unsigned()) {  // fast path: no pointer string
            out.push_back(j[i].get<int64_t>());
            continue;
        }
        int64_t v = 0;
        CFP_IO_ASSIGN(v, kGraphJson.int64(j[i], childPointer(ptr, i)));
        out.push_back(v);
    }
    return out;
}

template <typename Enum>
Result<Enum> asEnum(const Json& j, const std::string& ptr, std::optional<Enum> (*parse)(std::string_view),
                    std::string_view what) {
    std::string text;
    CFP_IO_ASSIGN(text, kGraphJson.string(j, ptr));
    auto v = parse(text);
    if (!v) return makeError("json.bad_value", "unknown " + std::string(what) + " '" + text + "'", ptr);
    return *v;
}

Result<double> asLiteralValue(const Json& j, const std::string& ptr) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
        return makeError("json.bad_value", "literal strings are \"nan\", \"inf\" and \"-inf\", got '" + s + "'", ptr);
    }
    return kGraphJson.typeError(ptr, "a number (or \"nan\", \"inf\", \"-inf\")", j);
}

// Reads an object of integer lists and integers; `lists` default to [] when absent, `ints` are
// required. Targets are given in the same order as the names.
struct IntListField {
    std::string_view name;
    std::vector<int64_t>* target;
    Need need;
};
struct IntField {
    std::string_view name;
    int64_t* target;
};

Status readDimensionObject(const Json& j, const std::string& ptr, std::span<const IntListField> lists,
                           std::span<const IntField> ints) {
    if (!j.is_object()) return kGraphJson.typeError(ptr, "an object", j);
    std::vector<std::string_view> allowed;
    for (const auto& f : lists) allowed.push_back(f.name);
    for (const auto& f : ints) allowed.push_back(f.name);
    CFP_TRY(checkKeys(j, ptr, allowed, {}));
    for (const auto& f : lists) {
        const Json* v = nullptr;
        CFP_IO_ASSIGN(v, member(j, ptr, f.name, f.need));
        if (v) CFP_IO_ASSIGN(*f.target, asIntList(*v, childPointer(ptr, f.name)));
    }
    for (const auto& f : ints) {
        const Json* v = nullptr;
        CFP_IO_ASSIGN(v, member(j, ptr, f.name, Need::Required));
        CFP_IO_ASSIGN(*f.target, kGraphJson.int64(*v, childPointer(ptr, f.name)));
    }
    return {};
}

// One node as read, before operand names are resolved.
struct Draft {
    Op op;
    std::vector<std::string> operandNames;
    std::optional<std::string> derivedFromName;
};

class DocumentReader {
public:
    explicit DocumentReader(const GraphReadLimits& limits) : m_limits(limits) {}

    Result<Graph> read(const Json& doc);

private:
    Status readNode(const Json& j, const std::string& ptr, Draft& d) const;
    Status readAttributes(const Json& j, const std::string& ptr, Op& op) const;

    GraphReadLimits m_limits;
};

Status DocumentReader::readAttributes(const Json& j, const std::string& ptr, Op& op) const {
    OpAttrs& a = op.attrs;
    auto field = [&](std::string_view key) { return member(j, ptr, key, Need::Required); };
    const Json* v = nullptr;
    switch (op.kind) {
        case OpKind::Parameter:
            CFP_IO_ASSIGN(v, field("role"));
            CFP_IO_ASSIGN(op.role, asEnum<ParamRole>(*v, ptr + "/role", parseParamRole, "parameter role"));
            break;
        case OpKind::Constant: {
            CFP_IO_ASSIGN(v, field("literal"));
            const std::string lp = ptr + "/literal";
            if (!v->is_array()) return kGraphJson.typeError(lp, "an array of numbers", *v);
            if (static_cast<int64_t>(v->size()) > m_limits.maxLiteralValues)
                return makeError("json.limit", "literal has " + std::to_string(v->size()) + " values, more than the limit of " +
                                                   std::to_string(m_limits.maxLiteralValues), lp);
            a.literal.reserve(v->size());
            for (size_t i = 0; i < v->size(); ++i) {
                if ((*v)[i].is_number()) {  // fast path: no pointer string
                    a.literal.push_back((*v)[i].get<double>());
                    continue;
                }
                double x = 0;
                CFP_IO_ASSIGN(x, asLiteralValue((*v)[i], childPointer(lp, i)));
                a.literal.push_back(x);
            }
            break;
        }
        case OpKind::Iota: {
            CFP_IO_ASSIGN(v, field("iota_dimension"));
            int64_t dim = 0;
            CFP_IO_ASSIGN(dim, kGraphJson.int64(*v, ptr + "/iota_dimension"));
            a.dimensions = {dim};
            break;
        }
        case OpKind::Broadcast:
        case OpKind::Transpose:
        case OpKind::Concatenate:
        case OpKind::Reduce:
            CFP_IO_ASSIGN(v, field("dimensions"));
            CFP_IO_ASSIGN(a.dimensions, asIntList(*v, ptr + "/dimensions"));
            if (op.kind == OpKind::Reduce) {
                CFP_IO_ASSIGN(v, field("reduce_kind"));
                CFP_IO_ASSIGN(a.reduceKind, asEnum<ReduceKind>(*v, ptr + "/reduce_kind", parseReduceKind, "reduce kind"));
            }
            break;
        case OpKind::Compare:
            CFP_IO_ASSIGN(v, field("comparison_direction"));
            CFP_IO_ASSIGN(a.comparison, asEnum<ComparisonDirection>(*v, ptr + "/comparison_direction", parseComparison,
                                                                    "comparison direction"));
            break;
        case OpKind::Slice: {
            CFP_IO_ASSIGN(v, field("slice"));
            const IntListField lists[] = {{"start", &a.slice.start, Need::Required},
                                          {"limit", &a.slice.limit, Need::Required},
                                          {"stride", &a.slice.stride, Need::Required}};
            CFP_TRY(readDimensionObject(*v, ptr + "/slice", lists, {}));
            break;
        }
        case OpKind::Dot: {
            CFP_IO_ASSIGN(v, field("dot_dimension_numbers"));
            const IntListField lists[] = {{"lhs_batch_dims", &a.dot.lhsBatch, Need::Optional},
                                          {"rhs_batch_dims", &a.dot.rhsBatch, Need::Optional},
                                          {"lhs_contracting_dims", &a.dot.lhsContracting, Need::Optional},
                                          {"rhs_contracting_dims", &a.dot.rhsContracting, Need::Optional}};
            CFP_TRY(readDimensionObject(*v, ptr + "/dot_dimension_numbers", lists, {}));
            break;
        }
        case OpKind::Gather: {
            CFP_IO_ASSIGN(v, field("gather_dimension_numbers"));
            const IntListField lists[] = {{"offset_dims", &a.gather.offsetDims, Need::Optional},
                                          {"collapsed_slice_dims", &a.gather.collapsedSliceDims, Need::Optional},
                                          {"start_index_map", &a.gather.startIndexMap, Need::Optional},
                                          {"operand_batching_dims", &a.gather.operandBatchingDims, Need::Optional},
                                          {"start_indices_batching_dims", &a.gather.startIndicesBatchingDims, Need::Optional}};
            const IntField ints[] = {{"index_vector_dim", &a.gather.indexVectorDim}};
            CFP_TRY(readDimensionObject(*v, ptr + "/gather_dimension_numbers", lists, ints));
            CFP_IO_ASSIGN(v, field("slice_sizes"));
            CFP_IO_ASSIGN(a.gather.sliceSizes, asIntList(*v, ptr + "/slice_sizes"));
            break;
        }
        case OpKind::Scatter: {
            CFP_IO_ASSIGN(v, field("scatter_dimension_numbers"));
            const IntListField lists[] = {
                {"update_window_dims", &a.scatter.updateWindowDims, Need::Optional},
                {"inserted_window_dims", &a.scatter.insertedWindowDims, Need::Optional},
                {"scatter_dims_to_operand_dims", &a.scatter.scatterDimsToOperandDims, Need::Optional},
                {"input_batching_dims", &a.scatter.inputBatchingDims, Need::Optional},
                {"scatter_indices_batching_dims", &a.scatter.scatterIndicesBatchingDims, Need::Optional}};
            const IntField ints[] = {{"index_vector_dim", &a.scatter.indexVectorDim}};
            CFP_TRY(readDimensionObject(*v, ptr + "/scatter_dimension_numbers", lists, ints));
            CFP_IO_ASSIGN(v, field("reduce_kind"));
            CFP_IO_ASSIGN(a.reduceKind, asEnum<ReduceKind>(*v, ptr + "/reduce_kind", parseReduceKind, "reduce kind"));
            break;
        }
        case OpKind::CustomCall:
            CFP_IO_ASSIGN(v, field("custom_call_target"));
            CFP_IO_ASSIGN(a.target, kGraphJson.string(*v, ptr + "/custom_call_target"));
            CFP_IO_ASSIGN(v, member(j, ptr, "sharding", Need::Optional));
            if (v) CFP_IO_ASSIGN(a.sharding, kGraphJson.string(*v, ptr + "/sharding"));
            CFP_IO_ASSIGN(v, member(j, ptr, "replica_groups", Need::Optional));
            if (v) {
                const std::string gp = ptr + "/replica_groups";
                if (!v->is_array()) return kGraphJson.typeError(gp, "an array of device id lists", *v);
                for (size_t g = 0; g < v->size(); ++g) {
                    std::vector<int64_t> group;
                    CFP_IO_ASSIGN(group, asIntList((*v)[g], childPointer(gp, g)));
                    a.replicaGroups.push_back(std::move(group));
                }
            }
            CFP_IO_ASSIGN(v, member(j, ptr, "reduce_kind", Need::Optional));
            if (v) CFP_IO_ASSIGN(a.reduceKind, asEnum<ReduceKind>(*v, ptr + "/reduce_kind", parseReduceKind, "reduce kind"));
            break;
        default: break;
    }
    return {};
}

Status DocumentReader::readNode(const Json& j, const std::string& ptr, Draft& d) const {
    if (!j.is_object()) return kGraphJson.typeError(ptr, "an object", j);
    Op& op = d.op;
    const Json* v = nullptr;

    CFP_IO_ASSIGN(v, member(j, ptr, "name", Need::Required));
    CFP_IO_ASSIGN(op.name, kGraphJson.string(*v, ptr + "/name"));
    if (op.name.empty()) return makeError("graph.bad_name", "node name is empty", ptr + "/name");

    CFP_IO_ASSIGN(v, member(j, ptr, "op", Need::Required));
    std::string kindName;
    CFP_IO_ASSIGN(kindName, kGraphJson.string(*v, ptr + "/op"));
    auto kind = parseOpKind(kindName);
    if (!kind) return makeError("graph.unknown_op", "unknown op kind '" + kindName + "'", ptr + "/op");
    op.kind = *kind;

    std::vector<std::string_view> allowed(std::begin(kCommonFields), std::end(kCommonFields));
    for (std::string_view f : attributeFields(op.kind)) allowed.push_back(f);
    CFP_TRY(checkKeys(j, ptr, allowed, kindName));

    CFP_IO_ASSIGN(v, member(j, ptr, "type", Need::Required));
    std::string typeText;
    CFP_IO_ASSIGN(typeText, kGraphJson.string(*v, ptr + "/type"));
    auto type = parseTensorType(typeText);
    if (!type) return makeError(type.error().code, type.error().message, ptr + "/type");
    op.type = std::move(*type);

    CFP_IO_ASSIGN(v, member(j, ptr, "operands", Need::Optional));
    if (v) {
        const std::string optr = ptr + "/operands";
        if (!v->is_array()) return kGraphJson.typeError(optr, "an array of node names", *v);
        d.operandNames.reserve(v->size());
        for (size_t i = 0; i < v->size(); ++i) {
            if ((*v)[i].is_string()) {  // fast path: no pointer string
                d.operandNames.push_back((*v)[i].get<std::string>());
                continue;
            }
            std::string name;
            CFP_IO_ASSIGN(name, kGraphJson.string((*v)[i], childPointer(optr, i)));
            d.operandNames.push_back(std::move(name));
        }
    }

    CFP_IO_ASSIGN(v, member(j, ptr, "phase", Need::Optional));
    if (v) CFP_IO_ASSIGN(op.phase, asEnum<Phase>(*v, ptr + "/phase", parsePhase, "phase"));
    CFP_IO_ASSIGN(v, member(j, ptr, "scope", Need::Optional));
    if (v) CFP_IO_ASSIGN(op.scope, kGraphJson.string(*v, ptr + "/scope"));

    CFP_TRY(readAttributes(j, ptr, op));

    CFP_IO_ASSIGN(v, member(j, ptr, "derived_from", Need::Optional));
    if (v) CFP_IO_ASSIGN(d.derivedFromName, kGraphJson.string(*v, ptr + "/derived_from"));
    CFP_IO_ASSIGN(v, member(j, ptr, "derived_operand", Need::Optional));
    if (v) {
        int64_t operand = 0;
        CFP_IO_ASSIGN(operand, kGraphJson.int64(*v, ptr + "/derived_operand"));
        if (operand < std::numeric_limits<int32_t>::min() || operand > std::numeric_limits<int32_t>::max())
            return makeError("json.out_of_range", "derived_operand " + std::to_string(operand) + " does not fit 32 bits",
                             ptr + "/derived_operand");
        op.derivedOperand = static_cast<int32_t>(operand);
    }
    return {};
}

std::string nodePointer(size_t index) { return "/nodes/" + std::to_string(index); }

Result<Graph> DocumentReader::read(const Json& doc) {
    if (!doc.is_object()) return kGraphJson.typeError("", "an object", doc);
    const Json* v = nullptr;

    CFP_IO_ASSIGN(v, member(doc, "", "format", Need::Required));
    std::string format;
    CFP_IO_ASSIGN(format, kGraphJson.string(*v, "/format"));
    if (format != kGraphFormatName)
        return makeError("json.bad_format", "format is '" + format + "', expected '" + std::string(kGraphFormatName) + "'",
                         "/format");
    CFP_IO_ASSIGN(v, member(doc, "", "version", Need::Required));
    int64_t version = 0;
    CFP_IO_ASSIGN(version, kGraphJson.int64(*v, "/version"));
    if (version != kGraphFormatVersion)
        return makeError("json.unsupported_version", "version " + std::to_string(version) + " is not supported (this reader knows version " +
                                                         std::to_string(kGraphFormatVersion) + ")",
                         "/version");
    static constexpr std::string_view kTopFields[] = {"format", "version", "name", "nodes", "outputs"};
    CFP_TRY(checkKeys(doc, "", kTopFields, {}));

    Graph graph;
    CFP_IO_ASSIGN(v, member(doc, "", "name", Need::Optional));
    if (v) {
        std::string name;
        CFP_IO_ASSIGN(name, kGraphJson.string(*v, "/name"));
        graph.setName(std::move(name));
    }

    CFP_IO_ASSIGN(v, member(doc, "", "nodes", Need::Required));
    const Json& nodes = *v;
    if (!nodes.is_array()) return kGraphJson.typeError("/nodes", "an array of nodes", nodes);
    const int64_t maxNodes = std::min<int64_t>(m_limits.maxNodes, std::numeric_limits<OpId>::max());
    if (static_cast<int64_t>(nodes.size()) > maxNodes)
        return makeError("json.limit", std::to_string(nodes.size()) + " nodes, more than the limit of " +
                                           std::to_string(maxNodes), "/nodes");
    const size_t n = nodes.size();
    std::vector<Draft> drafts(n);
    for (size_t i = 0; i < n; ++i) CFP_TRY(readNode(nodes[i], nodePointer(i), drafts[i]));

    // Names → file index. Views point into `drafts`, which is not resized from here on.
    std::unordered_map<std::string_view, int32_t> byName;
    byName.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto [it, inserted] = byName.emplace(drafts[i].op.name, static_cast<int32_t>(i));
        if (!inserted)
            return makeError("graph.duplicate_name", "node name '" + drafts[i].op.name + "' is already used by " +
                                                          nodePointer(static_cast<size_t>(it->second)),
                             nodePointer(i) + "/name");
    }
    auto lookup = [&](const std::string& name) {
        auto it = byName.find(name);
        return it == byName.end() ? int32_t{-1} : it->second;
    };

    // Operands as file indices, and users in compressed rows for the topological sort.
    std::vector<std::vector<int32_t>> operands(n);
    std::vector<int32_t> derivedFrom(n, -1);
    std::vector<size_t> userStart(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
        const auto& names = drafts[i].operandNames;
        operands[i].reserve(names.size());
        for (size_t k = 0; k < names.size(); ++k) {
            const int32_t in = lookup(names[k]);
            if (in < 0)
                return makeError("graph.dangling_operand", "operand '" + names[k] + "' names no node",
                                 childPointer(nodePointer(i) + "/operands", k));
            operands[i].push_back(in);
            ++userStart[static_cast<size_t>(in) + 1];
        }
        if (const auto& from = drafts[i].derivedFromName) {
            derivedFrom[i] = lookup(*from);
            if (derivedFrom[i] < 0)
                return makeError("graph.dangling_derived_from", "derived_from '" + *from + "' names no node",
                                 nodePointer(i) + "/derived_from");
        }
    }
    for (size_t i = 0; i < n; ++i) userStart[i + 1] += userStart[i];
    std::vector<int32_t> users(userStart[n]);
    {
        std::vector<size_t> fill(userStart.begin(), userStart.end() - 1);
        for (size_t i = 0; i < n; ++i)
            for (int32_t in : operands[i]) users[fill[static_cast<size_t>(in)]++] = static_cast<int32_t>(i);
    }

    // Kahn's algorithm taking the smallest ready file index first: a file already in topological
    // order keeps its order exactly, and any other file gets the same order every time.
    std::vector<size_t> pending(n);
    std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i) {
        pending[i] = operands[i].size();
        if (pending[i] == 0) ready.push(static_cast<int32_t>(i));
    }
    std::vector<int32_t> order;
    order.reserve(n);
    std::vector<OpId> newId(n, kNoOp);
    while (!ready.empty()) {
        const int32_t u = ready.top();
        ready.pop();
        newId[static_cast<size_t>(u)] = static_cast<OpId>(order.size());
        order.push_back(u);
        for (size_t e = userStart[static_cast<size_t>(u)]; e < userStart[static_cast<size_t>(u) + 1]; ++e)
            if (--pending[static_cast<size_t>(users[e])] == 0) ready.push(users[e]);
    }
    if (order.size() < n) {
        // Every node left has an operand that is also left, so walking operands from any of them
        // must come back to a node already on the walk: that node lies on a cycle.
        size_t start = 0;
        while (newId[start] != kNoOp) ++start;
        std::vector<int64_t> stepOf(n, -1);
        std::vector<std::pair<size_t, size_t>> walk;  // (node, operand index followed)
        size_t cur = start;
        while (stepOf[cur] < 0) {
            stepOf[cur] = static_cast<int64_t>(walk.size());
            size_t k = 0;
            while (newId[static_cast<size_t>(operands[cur][k])] != kNoOp) ++k;
            walk.emplace_back(cur, k);
            cur = static_cast<size_t>(operands[cur][k]);
        }
        const size_t first = static_cast<size_t>(stepOf[cur]);
        std::string path;
        constexpr size_t kShown = 8;
        for (size_t s = first; s < walk.size() && s < first + kShown; ++s) path += drafts[walk[s].first].op.name + " -> ";
        path += walk.size() - first > kShown ? "..." : drafts[cur].op.name;
        return makeError("graph.cycle",
                         "node '" + drafts[cur].op.name + "' depends on itself through its operands: " + path,
                         childPointer(nodePointer(cur) + "/operands", walk[first].second));
    }

    // Outputs are resolved before the drafts are moved into the graph (the name index views them).
    std::vector<int32_t> outputs;
    CFP_IO_ASSIGN(v, member(doc, "", "outputs", Need::Optional));
    if (v) {
        if (!v->is_array()) return kGraphJson.typeError("/outputs", "an array of node names", *v);
        for (size_t k = 0; k < v->size(); ++k) {
            std::string name;
            CFP_IO_ASSIGN(name, kGraphJson.string((*v)[k], childPointer("/outputs", k)));
            const int32_t idx = lookup(name);
            if (idx < 0)
                return makeError("graph.dangling_output", "output '" + name + "' names no node", childPointer("/outputs", k));
            outputs.push_back(idx);
        }
    }
    byName.clear();

    for (int32_t u : order) {
        Draft& d = drafts[static_cast<size_t>(u)];
        Op op = std::move(d.op);
        const std::string name = op.name;
        op.operands.clear();
        for (int32_t in : operands[static_cast<size_t>(u)]) op.operands.push_back(newId[static_cast<size_t>(in)]);
        const int32_t from = derivedFrom[static_cast<size_t>(u)];
        op.derivedFrom = from < 0 ? kNoOp : newId[static_cast<size_t>(from)];
        auto added = graph.add(std::move(op));
        if (!added) {
            const Error& e = added.error();
            std::string where = nodePointer(static_cast<size_t>(u));
            if (e.code == "graph.type_mismatch") where += "/type";
            if (e.code == "graph.bad_role") where += "/role";
            return makeError(e.code, "node '" + name + "': " + e.message, where);
        }
    }
    for (int32_t idx : outputs) CFP_TRY(graph.addOutput(newId[static_cast<size_t>(idx)]));
    return graph;
}

// "<source>:<where>", "<source>" for the whole document, or `where` alone without a source.
Error located(Error e, const std::string& sourceName) {
    if (sourceName.empty()) return e;
    e.where = e.where.empty() ? sourceName : sourceName + ":" + e.where;
    return e;
}

#undef CFP_IO_ASSIGN

}  // namespace

Result<Graph> readGraphJson(std::string_view text, const std::string& sourceName, const GraphReadLimits& limits) {
    try {
        auto doc = kGraphJson.parse(text);
        if (!doc) return located(doc.error(), sourceName);
        auto graph = DocumentReader(limits).read(*doc);
        if (!graph) return located(graph.error(), sourceName);
        return graph;
    } catch (const std::bad_alloc&) {
        return located(makeError("io.out_of_memory", "out of memory while reading the graph"), sourceName);
    } catch (const std::exception& ex) {
        // Only a bug can get here (every DOM access is type-checked first); report it, never crash.
        return located(makeError("io.internal", std::string("internal error while reading the graph: ") + ex.what()),
                       sourceName);
    }
}

Result<Graph> readGraphFile(const std::string& path, const GraphReadLimits& limits) {
    auto text = readFileLimited(path, limits.maxFileBytes);
    if (!text) return text.error();
    return readGraphJson(*text, path, limits);
}

std::string writeGraphJson(const Graph& graph) {
    std::string out;
    out += "{\n";
    out += "  \"format\": " + jsonString(kGraphFormatName) + ",\n";
    out += "  \"version\": " + std::to_string(kGraphFormatVersion) + ",\n";
    out += "  \"name\": " + jsonString(graph.name()) + ",\n";
    if (graph.ops().empty()) {
        out += "  \"nodes\": [],\n";
    } else {
        out += "  \"nodes\": [\n";
        for (size_t i = 0; i < graph.ops().size(); ++i) {
            out += "    ";
            writeNode(out, graph, graph.ops()[i]);
            out += i + 1 < graph.ops().size() ? ",\n" : "\n";
        }
        out += "  ],\n";
    }
    out += "  \"outputs\": [";
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
        if (i) out += ", ";
        out += jsonString(graph.op(graph.outputs()[i]).name);
    }
    out += "]\n}\n";
    return out;
}

Status writeGraphFile(const Graph& graph, const std::string& path) {
    return writeFileAtomically(path, writeGraphJson(graph));
}

}  // namespace cfp
