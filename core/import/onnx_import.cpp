// ONNX → graph IR through the ONNX library's protobuf classes and shape inference.
#include "import/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <utility>
#include <unordered_map>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "ir/shape_inference.h"
#include "util/checked_math.h"

namespace cfp {

namespace {

std::optional<DType> dtypeOf(int32_t t) {
    switch (t) {
        case onnx::TensorProto_DataType_FLOAT: return DType::F32;
        case onnx::TensorProto_DataType_FLOAT16: return DType::F16;
        case onnx::TensorProto_DataType_BFLOAT16: return DType::BF16;
        case onnx::TensorProto_DataType_DOUBLE: return DType::F64;
        case onnx::TensorProto_DataType_INT32:
        case onnx::TensorProto_DataType_UINT32: return DType::S32;
        case onnx::TensorProto_DataType_INT64:
        case onnx::TensorProto_DataType_UINT64: return DType::S64;
        case onnx::TensorProto_DataType_BOOL: return DType::Pred;
        default: return std::nullopt;
    }
}

// "/model/layers.0/attn/q_proj/MatMul" → "model.layers.0.attn.q_proj".
std::string scopeFromNodeName(const std::string& name) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : name) {
        if (c == '/') {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) parts.push_back(cur);
    if (parts.size() <= 1) return "";
    parts.pop_back();
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ".") + p;
    return out;
}

class OnnxImporter {
public:
    OnnxImporter(const onnx::ModelProto& model, const std::string& source, const ImportOptions& options)
        : m_model(model), m_source(source), m_options(options), m_graph(model.graph().name().empty() ? "onnx" : model.graph().name()) {}

    Result<ImportedModel> run();

private:
    Error fail(const std::string& code, const std::string& message) const {
        return makeError(code, message, m_where.empty() ? m_source : m_source + ": " + m_where);
    }
    Result<TensorType> typeOf(const onnx::TypeProto& t, const std::string& what);
    Result<OpId> add(Op op, const std::string& suffix = {});
    Result<OpId> value(const std::string& name);
    Result<OpId> scalar(double v, DType t);
    Result<OpId> broadcastTo(OpId x, const std::vector<int64_t>& dims);
    Result<OpId> binary(OpKind k, OpId a, OpId b, const std::string& suffix = {});
    Result<OpId> unary(OpKind k, OpId x, const std::string& suffix = {});
    Result<OpId> reshape(OpId x, const std::vector<int64_t>& dims, const std::string& suffix = {});
    Result<OpId> reduce(OpId x, std::vector<int64_t> axes, ReduceKind k, bool keepDims, bool mean, const std::string& suffix = {});
    Result<std::vector<double>> constantValues(const std::string& name);
    Result<std::vector<double>> tensorValues(const onnx::TensorProto& t);
    Result<OpId> lowerNode(const onnx::NodeProto& node);
    std::vector<int64_t> broadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const;
    const onnx::AttributeProto* attr(const onnx::NodeProto& node, const std::string& name) const {
        for (const auto& a : node.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) const {
        const auto* a = attr(node, name);
        return a ? a->i() : fallback;
    }
    float floatAttr(const onnx::NodeProto& node, const std::string& name, float fallback) const {
        const auto* a = attr(node, name);
        return a ? a->f() : fallback;
    }

    const onnx::ModelProto& m_model;
    const std::string& m_source;
    const ImportOptions& m_options;
    Graph m_graph;
    std::unordered_map<std::string, OpId> m_values;
    std::unordered_map<std::string, const onnx::TypeProto*> m_types;    // after shape inference
    std::unordered_map<std::string, const onnx::TensorProto*> m_tensors;  // initializers and Constant outputs
    std::vector<ImportNote> m_notes;
    std::string m_where;   // node being lowered
    std::string m_scope;
    std::string m_nodeName;
    int64_t m_counter = 0;
};

Result<TensorType> OnnxImporter::typeOf(const onnx::TypeProto& t, const std::string& what) {
    if (!t.has_tensor_type()) return fail("onnx.unsupported_type", what + " is not a tensor");
    auto dt = dtypeOf(t.tensor_type().elem_type());
    if (!dt) return fail("onnx.unsupported_type", what + " has element type " + std::to_string(t.tensor_type().elem_type()) +
                                                   " (supported: float, float16, bfloat16, double, int32, int64, bool)");
    TensorType out{*dt, {}};
    if (!t.tensor_type().has_shape()) return fail("onnx.unknown_shape", what + " has no shape, even after shape inference");
    for (const auto& d : t.tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return fail("onnx.unknown_shape", what + " has a symbolic dimension '" + d.dim_param() + "'");
        out.dims.push_back(d.dim_value());
    }
    if (auto st = validateTensorType(out); !st) return fail("onnx.too_large", what + ": " + st.error().message);
    return out;
}

Result<OpId> OnnxImporter::add(Op op, const std::string& suffix) {
    if (m_graph.size() >= m_options.maxOps) return fail("onnx.too_large", "more than " + std::to_string(m_options.maxOps) + " ops");
    std::string base = (m_nodeName.empty() ? std::string(opKindName(op.kind)) : m_nodeName) + suffix;
    std::string name = base;
    while (m_graph.find(name) != kNoOp) name = base + "." + std::to_string(++m_counter);
    op.name = name;
    op.scope = m_scope;
    if (op.kind == OpKind::Parameter && op.role == ParamRole::None) op.role = ParamRole::Input;
    if (!hasDeclaredType(op.kind)) {
        std::vector<const TensorType*> types;
        for (OpId in : op.operands) types.push_back(&m_graph.op(in).type);
        auto t = inferType(op.kind, types, op.attrs, nullptr);
        if (!t) return fail("onnx.type_error", t.error().message + " (" + t.error().code + ")");
        op.type = *t;
    }
    auto id = m_graph.add(std::move(op));
    if (!id) return fail("onnx.type_error", id.error().message + " (" + id.error().code + ")");
    return id;
}

Result<OpId> OnnxImporter::value(const std::string& name) {
    auto it = m_values.find(name);
    if (it != m_values.end()) return it->second;
    auto t = m_tensors.find(name);
    if (t != m_tensors.end()) {
        const std::string savedName = std::exchange(m_nodeName, name);
        struct Restore {
            std::string& target;
            std::string saved;
            ~Restore() { target = std::move(saved); }
        } restore{m_nodeName, savedName};
        auto vals = tensorValues(*t->second);
        if (!vals) return vals.error();
        auto dt = dtypeOf(t->second->data_type());
        if (!dt) return fail("onnx.unsupported_type", "constant '" + name + "' has an unsupported element type");
        Op c;
        c.kind = OpKind::Constant;
        c.type = TensorType{*dt, std::vector<int64_t>(t->second->dims().begin(), t->second->dims().end())};
        c.attrs.literal = std::move(*vals);
        if (c.attrs.literal.empty()) c.attrs.literal = {0.0};
        if (std::all_of(c.attrs.literal.begin(), c.attrs.literal.end(), [&](double v) { return v == c.attrs.literal[0]; }))
            c.attrs.literal.resize(1);
        auto id = add(std::move(c), "");
        if (!id) return id;
        m_values[name] = *id;
        return id;
    }
    return fail("onnx.unknown_value", "input '" + name + "' is not produced by any node, input or initializer");
}

Result<std::vector<double>> OnnxImporter::tensorValues(const onnx::TensorProto& t) {
    int64_t n = 1;
    for (int64_t d : t.dims()) {
        auto m = checkedMul(n, d);
        if (!m || d < 0) return fail("onnx.too_large", "tensor '" + t.name() + "' has an invalid or huge shape");
        n = *m;
    }
    if (n > m_options.maxLiteralValues) return fail("onnx.too_large", "tensor '" + t.name() + "' has " + std::to_string(n) + " values");
    std::vector<double> out;
    const std::string& raw = t.raw_data();
    auto fromRaw = [&](size_t width, auto decode) -> Status {
        if (raw.size() != static_cast<size_t>(n) * width)
            return fail("onnx.bad_tensor", "tensor '" + t.name() + "' has " + std::to_string(raw.size()) + " bytes of data for " +
                                               std::to_string(n) + " values");
        for (int64_t i = 0; i < n; ++i) out.push_back(decode(raw.data() + i * static_cast<int64_t>(width)));
        return {};
    };
    const bool hasRaw = t.has_raw_data();
    switch (t.data_type()) {
        case onnx::TensorProto_DataType_FLOAT:
            if (hasRaw) { CFP_TRY(fromRaw(4, [](const char* p) { float v; std::memcpy(&v, p, 4); return double(v); })); }
            else for (float v : t.float_data()) out.push_back(v);
            break;
        case onnx::TensorProto_DataType_DOUBLE:
            if (hasRaw) { CFP_TRY(fromRaw(8, [](const char* p) { double v; std::memcpy(&v, p, 8); return v; })); }
            else for (double v : t.double_data()) out.push_back(v);
            break;
        case onnx::TensorProto_DataType_INT64:
            if (hasRaw) { CFP_TRY(fromRaw(8, [](const char* p) { int64_t v; std::memcpy(&v, p, 8); return double(v); })); }
            else for (int64_t v : t.int64_data()) out.push_back(static_cast<double>(v));
            break;
        case onnx::TensorProto_DataType_INT32:
        case onnx::TensorProto_DataType_BOOL:
            if (hasRaw) {
                const size_t w = t.data_type() == onnx::TensorProto_DataType_BOOL ? 1 : 4;
                CFP_TRY(fromRaw(w, [w](const char* p) {
                    if (w == 1) return double(*p != 0);
                    int32_t v;
                    std::memcpy(&v, p, 4);
                    return double(v);
                }));
            } else {
                for (int32_t v : t.int32_data()) out.push_back(v);
            }
            break;
        default:
            out.assign(1, 0.0);  // values of other types do not matter to the plan
            break;
    }
    if (!out.empty() && out.size() != 1 && static_cast<int64_t>(out.size()) != n)
        return fail("onnx.bad_tensor", "tensor '" + t.name() + "' has " + std::to_string(out.size()) + " values for shape of " +
                                           std::to_string(n));
    return out;
}

Result<std::vector<double>> OnnxImporter::constantValues(const std::string& name) {
    auto t = m_tensors.find(name);
    if (t == m_tensors.end()) return fail("onnx.not_constant", "input '" + name + "' must be a constant (initializer or Constant node)");
    return tensorValues(*t->second);
}

Result<OpId> OnnxImporter::scalar(double v, DType t) {
    Op c;
    c.kind = OpKind::Constant;
    c.type = TensorType{t, {}};
    c.attrs.literal = {v};
    return add(std::move(c), ".c");
}

std::vector<int64_t> OnnxImporter::broadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) const {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r, 1);
    for (size_t i = 0; i < r; ++i) {
        const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
        const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
        out[i] = da == 1 ? db : (db == 1 || db == da ? da : -1);
    }
    return out;
}

// Numpy broadcasting: drop the size-1 dims that expand, then an HLO broadcast.
Result<OpId> OnnxImporter::broadcastTo(OpId x, const std::vector<int64_t>& dims) {
    const TensorType t = m_graph.op(x).type;
    if (t.dims == dims) return x;
    if (t.rank() > static_cast<int64_t>(dims.size())) return fail("onnx.type_error", "cannot broadcast " + t.toString());
    const size_t offset = dims.size() - static_cast<size_t>(t.rank());
    std::vector<int64_t> kept, mapping;
    for (size_t i = 0; i < t.dims.size(); ++i) {
        const int64_t want = dims[offset + i];
        if (t.dims[i] == want) {
            kept.push_back(want);
            mapping.push_back(static_cast<int64_t>(offset + i));
        } else if (t.dims[i] != 1) {
            return fail("onnx.type_error", "cannot broadcast " + t.toString() + " to " + TensorType{t.dtype, dims}.toString());
        }
    }
    OpId src = x;
    if (kept != t.dims) {
        auto r = reshape(x, kept, ".squeeze");
        if (!r) return r;
        src = *r;
    }
    Op b;
    b.kind = OpKind::Broadcast;
    b.operands = {src};
    b.attrs.dimensions = mapping;
    b.type = TensorType{t.dtype, dims};
    return add(std::move(b), ".bcast");
}

Result<OpId> OnnxImporter::binary(OpKind k, OpId a, OpId b, const std::string& suffix) {
    const auto dims = broadcastDims(m_graph.op(a).type.dims, m_graph.op(b).type.dims);
    if (std::find(dims.begin(), dims.end(), -1) != dims.end())
        return fail("onnx.type_error", "operands " + m_graph.op(a).type.toString() + " and " + m_graph.op(b).type.toString() +
                                           " do not broadcast");
    auto x = broadcastTo(a, dims);
    if (!x) return x;
    auto y = broadcastTo(b, dims);
    if (!y) return y;
    Op op;
    op.kind = k;
    op.operands = {*x, *y};
    return add(std::move(op), suffix);
}

Result<OpId> OnnxImporter::unary(OpKind k, OpId x, const std::string& suffix) {
    Op op;
    op.kind = k;
    op.operands = {x};
    return add(std::move(op), suffix);
}

Result<OpId> OnnxImporter::reshape(OpId x, const std::vector<int64_t>& dims, const std::string& suffix) {
    if (m_graph.op(x).type.dims == dims) return x;
    Op r;
    r.kind = OpKind::Reshape;
    r.operands = {x};
    r.type = TensorType{m_graph.op(x).type.dtype, dims};
    return add(std::move(r), suffix);
}

Result<OpId> OnnxImporter::reduce(OpId x, std::vector<int64_t> axes, ReduceKind k, bool keepDims, bool mean,
                                  const std::string& suffix) {
    const TensorType t = m_graph.op(x).type;
    if (axes.empty())
        for (int64_t i = 0; i < t.rank(); ++i) axes.push_back(i);
    for (int64_t& a : axes) {
        if (a < 0) a += t.rank();
        if (a < 0 || a >= t.rank()) return fail("onnx.bad_attribute", "reduction axis outside " + t.toString());
    }
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    Op r;
    r.kind = OpKind::Reduce;
    r.operands = {x};
    r.attrs.dimensions = axes;
    r.attrs.reduceKind = k;
    auto id = add(std::move(r), suffix + ".reduce");
    if (!id) return id;
    OpId cur = *id;
    if (mean) {
        int64_t count = 1;
        for (int64_t a : axes) count *= t.dims[static_cast<size_t>(a)];
        auto c = scalar(static_cast<double>(count), t.dtype);
        if (!c) return c;
        auto d = binary(OpKind::Divide, cur, *c, suffix + ".mean");
        if (!d) return d;
        cur = *d;
    }
    if (keepDims) {
        std::vector<int64_t> dims = t.dims;
        for (int64_t a : axes) dims[static_cast<size_t>(a)] = 1;
        return reshape(cur, dims, suffix + ".keepdims");
    }
    return cur;
}

Result<OpId> OnnxImporter::lowerNode(const onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    // Shape, axis and bound inputs of these ops are read as constants, not imported as ops.
    static const std::set<std::string> kConstantInputs = {"Reshape", "Expand", "Unsqueeze", "Squeeze", "Slice",
                                                          "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};
    const bool dataOnly = kConstantInputs.count(op) > 0;
    std::vector<OpId> in;
    for (const std::string& name : node.input()) {
        if (name.empty() || (dataOnly && !in.empty())) {
            in.push_back(kNoOp);
            continue;
        }
        auto v = value(name);
        if (!v) return v;
        in.push_back(*v);
    }
    auto needInputs = [&](size_t n) -> Status {
        if (in.size() < n || std::find(in.begin(), in.begin() + static_cast<long>(n), kNoOp) != in.begin() + static_cast<long>(n))
            return fail("onnx.bad_node", op + " needs " + std::to_string(n) + " input(s), got " + std::to_string(in.size()));
        return {};
    };
    auto outType = [&]() -> Result<TensorType> {
        if (node.output_size() < 1) return fail("onnx.bad_node", op + " has no output");
        auto it = m_types.find(node.output(0));
        if (it == m_types.end()) return fail("onnx.unknown_shape", "shape inference gave no type for output '" + node.output(0) + "'");
        return typeOf(*it->second, "output '" + node.output(0) + "'");
    };
    auto dt = [&](OpId x) { return m_graph.op(x).type.dtype; };
    auto dims = [&](OpId x) { return m_graph.op(x).type.dims; };

    static const std::map<std::string, OpKind> kBinary = {
        {"Add", OpKind::Add}, {"Sub", OpKind::Subtract}, {"Mul", OpKind::Multiply}, {"Div", OpKind::Divide},
        {"Pow", OpKind::Power}, {"Max", OpKind::Maximum}, {"Min", OpKind::Minimum}, {"And", OpKind::And}, {"Or", OpKind::Or}};
    static const std::map<std::string, OpKind> kUnary = {
        {"Tanh", OpKind::Tanh}, {"Exp", OpKind::Exponential}, {"Log", OpKind::Log}, {"Sqrt", OpKind::Sqrt},
        {"Neg", OpKind::Negate}, {"Abs", OpKind::Abs}, {"Sigmoid", OpKind::Logistic}, {"Sin", OpKind::Sine},
        {"Cos", OpKind::Cosine}, {"Sign", OpKind::Sign}};
    static const std::map<std::string, ComparisonDirection> kCompare = {
        {"Equal", ComparisonDirection::EQ}, {"Less", ComparisonDirection::LT}, {"Greater", ComparisonDirection::GT},
        {"LessOrEqual", ComparisonDirection::LE}, {"GreaterOrEqual", ComparisonDirection::GE}};

    if (auto k = kBinary.find(op); k != kBinary.end()) {
        CFP_TRY(needInputs(2));
        return binary(k->second, in[0], in[1]);
    }
    if (auto k = kUnary.find(op); k != kUnary.end()) {
        CFP_TRY(needInputs(1));
        return unary(k->second, in[0]);
    }
    if (auto k = kCompare.find(op); k != kCompare.end()) {
        CFP_TRY(needInputs(2));
        const auto d = broadcastDims(dims(in[0]), dims(in[1]));
        auto a = broadcastTo(in[0], d);
        if (!a) return a;
        auto b = broadcastTo(in[1], d);
        if (!b) return b;
        Op c;
        c.kind = OpKind::Compare;
        c.attrs.comparison = k->second;
        c.operands = {*a, *b};
        return add(std::move(c));
    }
    if (op == "Identity" || op == "Dropout") {
        CFP_TRY(needInputs(1));
        return in[0];
    }
    if (op == "Relu") {
        CFP_TRY(needInputs(1));
        auto z = scalar(0, dt(in[0]));
        if (!z) return z;
        return binary(OpKind::Maximum, in[0], *z);
    }
    if (op == "Reciprocal") {
        CFP_TRY(needInputs(1));
        auto one = scalar(1, dt(in[0]));
        if (!one) return one;
        return binary(OpKind::Divide, *one, in[0]);
    }
    if (op == "Erf" || op == "Gelu") {
        // erf(x) ≈ tanh(2/√π·(x + 0.044715·x³)·…) is not exact; the plan only needs an elementwise op
        // of the same cost class. Gelu uses the tanh form exactly.
        CFP_TRY(needInputs(1));
        const OpId x = in[0];
        if (op == "Erf") {
            m_notes.push_back({"onnx.approximated", "Erf is imported as tanh(1.1284·x) (same shape and cost class)", m_source});
            auto c = scalar(1.1283791670955126, dt(x));
            if (!c) return c;
            auto s = binary(OpKind::Multiply, x, *c, ".scaled");
            if (!s) return s;
            return unary(OpKind::Tanh, *s);
        }
        auto x2 = binary(OpKind::Multiply, x, x, ".x2");
        if (!x2) return x2;
        auto x3 = binary(OpKind::Multiply, *x2, x, ".x3");
        if (!x3) return x3;
        auto k = scalar(0.044715, dt(x));
        if (!k) return k;
        auto kx3 = binary(OpKind::Multiply, *x3, *k, ".kx3");
        if (!kx3) return kx3;
        auto inner = binary(OpKind::Add, x, *kx3, ".inner");
        if (!inner) return inner;
        auto s = scalar(0.7978845608028654, dt(x));
        if (!s) return s;
        auto scaled = binary(OpKind::Multiply, *inner, *s, ".scaled");
        if (!scaled) return scaled;
        auto t = unary(OpKind::Tanh, *scaled, ".tanh");
        if (!t) return t;
        auto one = scalar(1, dt(x));
        if (!one) return one;
        auto onePlus = binary(OpKind::Add, *t, *one, ".one_plus");
        if (!onePlus) return onePlus;
        auto half = scalar(0.5, dt(x));
        if (!half) return half;
        auto hx = binary(OpKind::Multiply, x, *half, ".half_x");
        if (!hx) return hx;
        return binary(OpKind::Multiply, *hx, *onePlus);
    }
    if (op == "MatMul" || op == "Gemm") {
        CFP_TRY(needInputs(2));
        OpId a = in[0], b = in[1];
        if (op == "Gemm") {
            auto transposed = [&](OpId x, const char* flag) -> Result<OpId> {
                if (!intAttr(node, flag, 0)) return x;
                Op t;
                t.kind = OpKind::Transpose;
                t.operands = {x};
                t.attrs.dimensions = {1, 0};
                return add(std::move(t), std::string(".") + flag);
            };
            auto ta = transposed(a, "transA");
            if (!ta) return ta;
            auto tb = transposed(b, "transB");
            if (!tb) return tb;
            a = *ta;
            b = *tb;
        }
        const int64_t ra = m_graph.op(a).type.rank(), rb = m_graph.op(b).type.rank();
        if (ra < 2 || rb < 2) return fail("onnx.unsupported", op + " of rank-1 operands is not supported");
        Op d;
        d.kind = OpKind::Dot;
        d.operands = {a, b};
        if (rb == 2) {
            d.attrs.dot.lhsContracting = {ra - 1};
            d.attrs.dot.rhsContracting = {0};
        } else if (ra == rb) {
            for (int64_t i = 0; i < ra - 2; ++i) {
                d.attrs.dot.lhsBatch.push_back(i);
                d.attrs.dot.rhsBatch.push_back(i);
            }
            d.attrs.dot.lhsContracting = {ra - 1};
            d.attrs.dot.rhsContracting = {rb - 2};
        } else {
            return fail("onnx.unsupported", "MatMul with broadcast batch dimensions is not supported");
        }
        const bool gemmExtras = op == "Gemm" && (floatAttr(node, "alpha", 1.f) != 1.f || in.size() > 2);
        auto id = add(std::move(d), gemmExtras ? ".dot" : "");
        if (!id || op != "Gemm") return id;
        OpId cur = *id;
        if (floatAttr(node, "alpha", 1.f) != 1.f) {
            auto s = scalar(floatAttr(node, "alpha", 1.f), dt(cur));
            if (!s) return s;
            auto m = binary(OpKind::Multiply, cur, *s, in.size() > 2 ? ".alpha" : "");
            if (!m) return m;
            cur = *m;
        }
        if (in.size() > 2 && in[2] != kNoOp) {
            OpId c = in[2];
            if (floatAttr(node, "beta", 1.f) != 1.f) {
                auto s = scalar(floatAttr(node, "beta", 1.f), dt(c));
                if (!s) return s;
                auto m = binary(OpKind::Multiply, c, *s, ".beta");
                if (!m) return m;
                c = *m;
            }
            return binary(OpKind::Add, cur, c);
        }
        return cur;
    }
    if (op == "Softmax") {
        CFP_TRY(needInputs(1));
        int64_t axis = intAttr(node, "axis", -1);
        const OpId x = in[0];
        auto mx = reduce(x, {axis}, ReduceKind::Max, true, false, ".max");
        if (!mx) return mx;
        auto sh = binary(OpKind::Subtract, x, *mx, ".shift");
        if (!sh) return sh;
        auto e = unary(OpKind::Exponential, *sh, ".exp");
        if (!e) return e;
        auto s = reduce(*e, {axis}, ReduceKind::Add, true, false, ".sum");
        if (!s) return s;
        return binary(OpKind::Divide, *e, *s);
    }
    if (op == "LayerNormalization") {
        CFP_TRY(needInputs(2));
        const OpId x = in[0];
        const int64_t rank = m_graph.op(x).type.rank();
        int64_t axis = intAttr(node, "axis", -1);
        if (axis < 0) axis += rank;
        std::vector<int64_t> axes;
        for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
        auto mean = reduce(x, axes, ReduceKind::Add, true, true, ".mean");
        if (!mean) return mean;
        auto c = binary(OpKind::Subtract, x, *mean, ".centered");
        if (!c) return c;
        auto sq = binary(OpKind::Multiply, *c, *c, ".sq");
        if (!sq) return sq;
        auto var = reduce(*sq, axes, ReduceKind::Add, true, true, ".var");
        if (!var) return var;
        auto eps = scalar(floatAttr(node, "epsilon", 1e-5f), dt(x));
        if (!eps) return eps;
        auto ve = binary(OpKind::Add, *var, *eps, ".var_eps");
        if (!ve) return ve;
        auto rs = unary(OpKind::Rsqrt, *ve, ".rsqrt");
        if (!rs) return rs;
        auto n = binary(OpKind::Multiply, *c, *rs, ".normed");
        if (!n) return n;
        auto scaled = binary(OpKind::Multiply, *n, in[1], in.size() > 2 && in[2] != kNoOp ? ".scaled" : "");
        if (!scaled || !(in.size() > 2 && in[2] != kNoOp)) return scaled;
        return binary(OpKind::Add, *scaled, in[2]);
    }
    if (op == "Transpose") {
        CFP_TRY(needInputs(1));
        Op t;
        t.kind = OpKind::Transpose;
        t.operands = {in[0]};
        if (const auto* p = attr(node, "perm")) {
            t.attrs.dimensions.assign(p->ints().begin(), p->ints().end());
        } else {
            for (int64_t i = m_graph.op(in[0]).type.rank() - 1; i >= 0; --i) t.attrs.dimensions.push_back(i);
        }
        return add(std::move(t));
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Expand") {
        CFP_TRY(needInputs(1));
        auto t = outType();
        if (!t) return t.error();
        if (op == "Expand") return broadcastTo(in[0], t->dims);
        return reshape(in[0], t->dims);
    }
    if (op == "Cast") {
        CFP_TRY(needInputs(1));
        auto to = dtypeOf(static_cast<int32_t>(intAttr(node, "to", 0)));
        if (!to) return fail("onnx.unsupported_type", "Cast to an unsupported element type");
        if (*to == dt(in[0])) return in[0];
        Op c;
        c.kind = OpKind::Convert;
        c.operands = {in[0]};
        c.type = TensorType{*to, dims(in[0])};
        return add(std::move(c));
    }
    if (op == "Where") {
        CFP_TRY(needInputs(3));
        const auto d = broadcastDims(broadcastDims(dims(in[0]), dims(in[1])), dims(in[2]));
        Op s;
        s.kind = OpKind::Select;
        for (OpId x : {in[0], in[1], in[2]}) {
            auto b = broadcastTo(x, d);
            if (!b) return b;
            s.operands.push_back(*b);
        }
        return add(std::move(s));
    }
    if (op == "Concat") {
        Op c;
        c.kind = OpKind::Concatenate;
        for (OpId x : in)
            if (x != kNoOp) c.operands.push_back(x);
        if (c.operands.empty()) return fail("onnx.bad_node", "Concat needs inputs");
        int64_t axis = intAttr(node, "axis", 0);
        if (axis < 0) axis += m_graph.op(c.operands[0]).type.rank();
        c.attrs.dimensions = {axis};
        return add(std::move(c));
    }
    if (op == "Gather") {
        CFP_TRY(needInputs(2));
        const TensorType data = m_graph.op(in[0]).type, idx = m_graph.op(in[1]).type;
        int64_t axis = intAttr(node, "axis", 0);
        if (axis < 0) axis += data.rank();
        if (axis < 0 || axis >= data.rank()) return fail("onnx.bad_attribute", "Gather axis outside " + data.toString());
        Op g;
        g.kind = OpKind::Gather;
        g.operands = {in[0], in[1]};
        GatherDimensionNumbers& n = g.attrs.gather;
        const int64_t outRank = data.rank() - 1 + idx.rank();
        for (int64_t i = 0; i < outRank; ++i)
            if (i < axis || i >= axis + idx.rank()) n.offsetDims.push_back(i);
        n.collapsedSliceDims = {axis};
        n.startIndexMap = {axis};
        n.indexVectorDim = idx.rank();
        n.sliceSizes = data.dims;
        n.sliceSizes[static_cast<size_t>(axis)] = 1;
        return add(std::move(g));
    }
    if (op == "Slice") {
        CFP_TRY(needInputs(1));
        if (node.input_size() < 3) return fail("onnx.bad_node", "Slice needs data, starts and ends");
        const TensorType t = m_graph.op(in[0]).type;
        auto starts = constantValues(node.input(1));
        if (!starts) return starts.error();
        auto ends = constantValues(node.input(2));
        if (!ends) return ends.error();
        std::vector<double> axes, steps;
        if (node.input_size() > 3 && !node.input(3).empty()) {
            auto a = constantValues(node.input(3));
            if (!a) return a.error();
            axes = *a;
        } else {
            for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<double>(i));
        }
        if (node.input_size() > 4 && !node.input(4).empty()) {
            auto s = constantValues(node.input(4));
            if (!s) return s.error();
            steps = *s;
        } else {
            steps.assign(starts->size(), 1.0);
        }
        if (ends->size() != starts->size() || axes.size() != starts->size() || steps.size() != starts->size())
            return fail("onnx.bad_node", "Slice starts, ends, axes and steps differ in length");
        Op s;
        s.kind = OpKind::Slice;
        s.operands = {in[0]};
        s.attrs.slice.start.assign(static_cast<size_t>(t.rank()), 0);
        s.attrs.slice.limit = t.dims;
        s.attrs.slice.stride.assign(static_cast<size_t>(t.rank()), 1);
        for (size_t i = 0; i < starts->size(); ++i) {
            int64_t a = static_cast<int64_t>(axes[i]);
            if (a < 0) a += t.rank();
            if (a < 0 || a >= t.rank()) return fail("onnx.bad_attribute", "Slice axis outside " + t.toString());
            const int64_t dim = t.dims[static_cast<size_t>(a)];
            auto clampIndex = [&](double v) {
                double x = v < 0 ? v + static_cast<double>(dim) : v;
                return static_cast<int64_t>(std::clamp(x, 0.0, static_cast<double>(dim)));
            };
            if (steps[i] < 1) return fail("onnx.unsupported", "Slice with a step below 1 is not supported");
            s.attrs.slice.start[static_cast<size_t>(a)] = clampIndex((*starts)[i]);
            s.attrs.slice.limit[static_cast<size_t>(a)] = std::max(clampIndex((*ends)[i]), s.attrs.slice.start[static_cast<size_t>(a)]);
            s.attrs.slice.stride[static_cast<size_t>(a)] = static_cast<int64_t>(std::min(steps[i], 1e15));
        }
        return add(std::move(s));
    }
    if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
        CFP_TRY(needInputs(1));
        std::vector<int64_t> axes;
        if (const auto* a = attr(node, "axes")) axes.assign(a->ints().begin(), a->ints().end());
        else if (node.input_size() > 1 && !node.input(1).empty()) {
            auto v = constantValues(node.input(1));
            if (!v) return v.error();
            for (double x : *v) axes.push_back(static_cast<int64_t>(x));
        }
        const ReduceKind k = op == "ReduceMax" ? ReduceKind::Max : op == "ReduceMin" ? ReduceKind::Min : ReduceKind::Add;
        return reduce(in[0], axes, k, intAttr(node, "keepdims", 1) != 0, op == "ReduceMean");
    }
    if (op == "Shape") {
        CFP_TRY(needInputs(1));
        Op c;
        c.kind = OpKind::Constant;
        const auto d = dims(in[0]);
        c.type = TensorType{DType::S64, {static_cast<int64_t>(d.size())}};
        for (int64_t x : d) c.attrs.literal.push_back(static_cast<double>(x));
        if (c.attrs.literal.empty()) return fail("onnx.unsupported", "Shape of a scalar");
        return add(std::move(c));
    }
    // Anything else: an opaque custom-call with the inferred output type.
    auto t = outType();
    if (!t) return t.error();
    m_notes.push_back({"onnx.opaque_op", "'" + op + "' has no IR op kind: kept as custom-call onnx." + op, m_source + ": " + m_where});
    Op c;
    c.kind = OpKind::CustomCall;
    for (OpId x : in)
        if (x != kNoOp) c.operands.push_back(x);
    c.attrs.target = "onnx." + op;
    c.type = *t;
    return add(std::move(c));
}

Result<ImportedModel> OnnxImporter::run() {
    const onnx::GraphProto& g = m_model.graph();
    for (const auto& vi : g.value_info()) m_types[vi.name()] = &vi.type();
    for (const auto& vi : g.output()) m_types[vi.name()] = &vi.type();
    for (const auto& t : g.initializer()) m_tensors[t.name()] = &t;
    for (const auto& node : g.node())
        if (node.op_type() == "Constant" && node.output_size() == 1)
            for (const auto& a : node.attribute())
                if (a.name() == "value" && a.has_t()) m_tensors[node.output(0)] = &a.t();
    // Initializers are weights (trainable when floating point); other graph inputs are data.
    for (const auto& t : g.initializer()) {
        auto dt = dtypeOf(t.data_type());
        m_where = "initializer '" + t.name() + "'";
        if (!dt) return fail("onnx.unsupported_type", "element type " + std::to_string(t.data_type()) + " is not supported");
        if (!isFloating(*dt)) continue;  // integer initializers stay constants (shapes, indices)
        Op p;
        p.kind = OpKind::Parameter;
        p.type = TensorType{*dt, std::vector<int64_t>(t.dims().begin(), t.dims().end())};
        if (auto st = validateTensorType(p.type); !st) return fail("onnx.too_large", st.error().message);
        p.role = ParamRole::Trainable;
        m_nodeName = t.name();
        m_scope = scopeFromNodeName("/" + t.name());
        std::replace(m_scope.begin(), m_scope.end(), '/', '.');
        auto id = add(std::move(p));
        if (!id) return id.error();
        m_values[t.name()] = *id;
    }
    for (const auto& vi : g.input()) {
        if (m_values.count(vi.name()) || m_tensors.count(vi.name())) continue;
        m_where = "input '" + vi.name() + "'";
        auto t = typeOf(vi.type(), "input '" + vi.name() + "'");
        if (!t) return t.error();
        Op p;
        p.kind = OpKind::Parameter;
        p.type = *t;
        p.role = ParamRole::Input;
        m_nodeName = vi.name();
        m_scope.clear();
        auto id = add(std::move(p));
        if (!id) return id.error();
        m_values[vi.name()] = *id;
    }
    int index = 0;
    for (const auto& node : g.node()) {
        m_where = "node '" + (node.name().empty() ? "#" + std::to_string(index) : node.name()) + "' (" + node.op_type() + ")";
        ++index;
        if (node.op_type() == "Constant") continue;  // read on use
        m_nodeName = node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type()) : node.name();
        m_scope = scopeFromNodeName(node.name());
        auto out = lowerNode(node);
        if (!out) return out.error();
        if (node.output_size() > 1) {
            // Extra outputs (Dropout's mask, LayerNormalization's statistics) are not modelled.
            for (int i = 1; i < node.output_size(); ++i)
                if (!node.output(i).empty()) m_values.erase(node.output(i));
        }
        if (node.output_size() >= 1) {
            auto it = m_types.find(node.output(0));
            if (it != m_types.end()) {
                auto declared = typeOf(*it->second, "output '" + node.output(0) + "'");
                if (declared && *declared != m_graph.op(*out).type)
                    return fail("onnx.shape_mismatch", "shape inference says " + declared->toString() + " but the node gives " +
                                                           m_graph.op(*out).type.toString());
            }
            m_values[node.output(0)] = *out;
        }
    }
    m_where.clear();
    for (const auto& vi : g.output()) {
        auto v = value(vi.name());
        if (!v) return v.error();
        CFP_TRY(m_graph.addOutput(*v));
    }
    ImportedModel out;
    out.format = "onnx";
    out.notes = std::move(m_notes);
    CFP_TRY(finishImport(std::move(m_graph), {}, m_options, out, RoleSource::AsStaged));
    return out;
}

}  // namespace

bool onnxImportAvailable() { return true; }

Result<ImportedModel> importOnnxBytes(std::string_view bytes, const std::string& sourceName, const ImportOptions& options) {
    if (static_cast<int64_t>(bytes.size()) > options.maxFileBytes)
        return makeError("onnx.too_large", "the model is larger than the limit", sourceName);
    if (bytes.size() > static_cast<size_t>(INT32_MAX))
        return makeError("onnx.too_large", "protobuf messages are limited to 2 GiB", sourceName);
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return makeError("onnx.parse", "not a valid ONNX model (the protobuf does not parse; truncated or not ONNX)", sourceName);
    if (!model.has_graph()) return makeError("onnx.parse", "the model has no graph", sourceName);
    // Symbolic input dims (batch, sequence) are taken as 1 so that shape inference gives numbers.
    std::vector<ImportNote> notes;
    for (auto& in : *model.mutable_graph()->mutable_input()) {
        if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
        for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
            if (!d.has_dim_value()) {
                notes.push_back({"onnx.symbolic_dim", "dimension '" + d.dim_param() + "' of input '" + in.name() + "' taken as 1", sourceName});
                d.set_dim_value(1);
            }
    }
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
        return makeError("onnx.shape_inference", std::string("ONNX shape inference failed: ") + e.what(), sourceName);
    }
    try {
        auto out = OnnxImporter(model, sourceName, options).run();
        if (out) out->notes.insert(out->notes.begin(), notes.begin(), notes.end());
        return out;
    } catch (const std::exception& e) {
        return makeError("onnx.internal", std::string("the ONNX library failed: ") + e.what(), sourceName);
    }
}

Result<ImportedModel> importOnnxFile(const std::string& path, const ImportOptions& options) {
    auto bytes = readImportFile(path, options.maxFileBytes, "onnx");
    if (!bytes) return bytes.error();
    return importOnnxBytes(*bytes, path, options);
}

}  // namespace cfp
