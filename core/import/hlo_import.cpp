#include "import/hlo_import.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "import/hlo_parser.h"
#include "import/row_stacks.h"
#include "ir/shape_inference.h"
#include "sharding/hlo_sharding.h"
#include "util/checked_math.h"

namespace cfp {

namespace {

using hlo::Instruction;

// ---------------------------------------------------------------------------------------------
// Scope paths from metadata.

// Splits at '/' outside brackets and quotes.
std::vector<std::string> splitPath(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    char quote = 0;
    for (char c : s) {
        if (quote) {
            if (c == quote) quote = 0;
            cur += c;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        if (c == '/' && depth == 0) {
            out.push_back(std::move(cur));
            cur.clear();
            continue;
        }
        cur += c;
    }
    out.push_back(std::move(cur));
    return out;
}

bool isIdent(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// "params['layers_0']['w']" → "params.layers_0.w"; "Linear[fc1]" → "fc1"; "dot_general[…]" → "dot_general".
std::string cleanComponent(std::string c, bool& isPath) {
    isPath = false;
    const size_t bracket = c.find('[');
    if (bracket == std::string::npos) return c;
    const std::string head = c.substr(0, bracket);
    if (c.find("['") != std::string::npos || c.find("[\"") != std::string::npos) {
        std::string out = head;
        for (size_t i = bracket; i < c.size(); ++i) {
            const char ch = c[i];
            if (ch == '[') out += '.';
            else if (ch != ']' && ch != '\'' && ch != '"') out += ch;
        }
        isPath = true;
        return out;
    }
    if (c.back() == ']' && isIdent(head)) {
        const std::string inner = c.substr(bracket + 1, c.size() - bracket - 2);
        if (isIdent(inner)) {
            isPath = true;
            return inner;  // PyTorch/XLA "Type[attribute]"
        }
    }
    return head;
}

}  // namespace

std::string scopeFromOpName(std::string_view opName) {
    std::vector<std::string> parts;
    bool anyPath = false;
    for (std::string c : splitPath(opName)) {
        // Unwrap transformations: transpose(jvp(GPT)) → GPT; drop jit(...) / pjit(...) wrappers.
        bool dropped = false;
        while (true) {
            const size_t open = c.find('(');
            if (open == std::string::npos || open == 0 || c.back() != ')' || !isIdent(c.substr(0, open))) break;
            const std::string fn = c.substr(0, open);
            if (fn == "jit" || fn == "pjit" || fn == "xla_computation" || fn == "shard_map") {
                dropped = true;
                break;
            }
            c = c.substr(open + 1, c.size() - open - 2);
        }
        if (dropped || c.empty()) continue;
        bool isPath = false;
        c = cleanComponent(std::move(c), isPath);
        anyPath = anyPath || isPath;
        if (!c.empty()) parts.push_back(std::move(c));
    }
    // The last component names the primitive (dot_general, add, aten__mm), not a scope — unless
    // the only component is a parameter path such as params['w'].
    if (parts.size() == 1 && !anyPath) parts.clear();
    else if (parts.size() > 1) parts.pop_back();
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : ".") + p;
    return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Opcode tables.

std::optional<OpKind> elementwiseKind(std::string_view opcode) {
    static const std::map<std::string_view, OpKind> kTable = {
        {"negate", OpKind::Negate},   {"exponential", OpKind::Exponential}, {"log", OpKind::Log},
        {"sqrt", OpKind::Sqrt},       {"rsqrt", OpKind::Rsqrt},             {"tanh", OpKind::Tanh},
        {"logistic", OpKind::Logistic}, {"abs", OpKind::Abs},               {"sign", OpKind::Sign},
        {"sine", OpKind::Sine},       {"cosine", OpKind::Cosine},           {"add", OpKind::Add},
        {"subtract", OpKind::Subtract}, {"multiply", OpKind::Multiply},     {"divide", OpKind::Divide},
        {"maximum", OpKind::Maximum}, {"minimum", OpKind::Minimum},         {"power", OpKind::Power},
        {"and", OpKind::And},         {"or", OpKind::Or},                   {"select", OpKind::Select},
    };
    auto it = kTable.find(opcode);
    if (it == kTable.end()) return std::nullopt;
    return it->second;
}

// HLO opcodes the IR has no kind for; imported as opaque custom-calls.
bool isKnownOpaqueOpcode(std::string_view opcode) {
    static const std::set<std::string_view> kOpaque = {
        "after-all", "all-gather", "all-gather-start", "all-gather-done", "all-reduce", "all-reduce-start",
        "all-reduce-done", "all-to-all", "async-start", "async-update", "async-done", "atan2", "batch-norm-grad",
        "batch-norm-inference", "batch-norm-training", "bitcast-convert", "cbrt", "ceil", "cholesky", "clz",
        "collective-broadcast", "collective-permute", "collective-permute-start", "collective-permute-done",
        "complex", "conditional", "convolution", "copy-start", "copy-done", "dynamic-reshape", "dynamic-slice",
        "dynamic-update-slice", "erf", "exponential-minus-one", "fft", "floor", "get-dimension-size", "imag",
        "infeed", "is-finite", "log-plus-one", "not", "outfeed", "pad", "partition-id", "popcnt", "real",
        "recv", "recv-done", "reduce-precision", "reduce-scatter", "reduce-window", "remainder", "replica-id",
        "reverse", "rng", "rng-bit-generator", "rng-get-and-update-state", "round-nearest-afz",
        "round-nearest-even", "select-and-scatter", "send", "send-done", "set-dimension-size", "shift-left",
        "shift-right-arithmetic", "shift-right-logical", "sort", "stochastic-convert", "tan", "topk",
        "triangular-solve", "xor", "map", "reduce", "scatter", "gather", "custom-call", "while", "erf-inv",
    };
    return kOpaque.count(opcode) > 0;
}

std::optional<DType> elementType(std::string_view t) {
    if (t == "u32") return DType::S32;
    if (t == "u64") return DType::S64;
    return parseDType(t);
}

// A value: one graph op, or a tuple of values (tokens are empty tuples).
struct Value {
    OpId id = kNoOp;
    bool isTuple = false;
    std::vector<Value> elements;

    void leaves(std::vector<OpId>& out) const {
        if (!isTuple) {
            out.push_back(id);
            return;
        }
        for (const Value& e : elements) e.leaves(out);
    }
};

Value tupleOf(std::vector<Value> elements) {
    Value v;
    v.isTuple = true;
    v.elements = std::move(elements);
    return v;
}

class Importer {
public:
    Importer(const hlo::Module& module, const std::string& source, const ImportOptions& options)
        : m_module(module), m_source(source), m_options(options), m_staged(module.name) {
        for (size_t i = 0; i < module.computations.size(); ++i)
            m_computations.emplace(module.computations[i].name, static_cast<int>(i));
    }

    Result<ImportedModel> run();

private:
    // One activation of a computation being lowered.
    struct Frame {
        const hlo::Computation* comp = nullptr;
        std::unordered_map<std::string, int> index;  // instruction name → index
        std::vector<std::optional<Value>> values;
        const std::vector<Value>* args = nullptr;    // nullptr for the entry computation
        std::string prefix;                          // name prefix for inlined ops
        std::string scope;                           // scope of the call site
        const std::vector<int64_t>* mapDims = nullptr;  // inside a `map`: dims of every value
        std::string scopeSuffix;                     // ".<iteration>" inside unrolled loop bodies
        int depth = 0;
    };

    Error fail(const Instruction& ins, const std::string& code, const std::string& message) const {
        return makeError(code, "instruction '" + ins.name + "': " + message, hlo::locationText(m_source, ins.where));
    }
    Error failFrom(const Instruction& ins, const Error& inner) const {
        std::string code = inner.code.rfind("hlo.", 0) == 0 || inner.code.rfind("import.", 0) == 0 ? inner.code : "hlo.type_error";
        std::string msg = inner.message;
        if (code == "hlo.type_error") msg += " (" + inner.code + ")";
        return fail(ins, code, msg);
    }
    void note(const std::string& code, const std::string& message, const std::string& where) {
        if (m_noteKeys.insert(code + message).second) m_notes.push_back({code, message, where});
    }

    Result<TensorType> declaredType(const Frame& f, const Instruction& ins, const hlo::Shape& shape) const;
    Result<Value> operand(Frame& f, const Instruction& ins, size_t i);
    // The operand's value in place (no copy of a large tuple); valid until the frame ends.
    Result<const Value*> operandRef(Frame& f, const Instruction& ins, size_t i);
    Result<OpId> leafOperand(Frame& f, const Instruction& ins, size_t i);
    Result<Value> valueOf(Frame& f, int index);
    std::string scopeOf(const Frame& f, const Instruction& ins) const;
    std::string uniqueName(const std::string& base);
    // Adds an op (name derived from the instruction) and checks it against the declared type when given.
    Result<OpId> emit(Frame& f, const Instruction& ins, Op op, const std::string& suffix = {});
    // The start indices of a dynamic-slice / -update-slice (operands from `first` on) when every one
    // is a scalar constant, clamped to [0, dim − window] as HLO does; nullopt otherwise (or when the
    // operand count or the window's rank does not fit `dims`). `dims` and `window` must not refer
    // into the graph being built (reading the operands may add ops to it).
    Result<std::optional<std::vector<int64_t>>> constantStarts(Frame& f, const Instruction& ins, size_t first,
                                                               const std::vector<int64_t>& dims,
                                                               const std::vector<int64_t>& window);
    // `update` written into `x` at `starts` (in range), dims from `dim` on: slices and concatenates.
    Result<OpId> placeUpdate(Frame& f, const Instruction& ins, OpId x, OpId update, const std::vector<int64_t>& starts,
                             size_t dim);
    Result<OpId> emitChecked(Frame& f, const Instruction& ins, Op op, const TensorType& declared, const std::string& suffix = {});
    Result<Value> lowerComputation(int comp, const std::vector<Value>* args, const std::string& prefix,
                                   const std::string& scope, const std::string& scopeSuffix, int depth,
                                   const std::vector<int64_t>* mapDims = nullptr);
    Result<Value> lower(Frame& f, const Instruction& ins);
    Result<Value> opaque(Frame& f, const Instruction& ins, const std::string& target, const OpAttrs& attrs = {});
    // A value of `shape`: makeLeaf(type, name suffix) for each array element (".0", ".1", … for
    // tuple elements), tokens as empty tuples.
    using LeafMaker = std::function<Result<OpId>(TensorType, const std::string&)>;
    Result<Value> perLeaf(Frame& f, const Instruction& ins, const hlo::Shape& shape, const std::string& suffix,
                          const LeafMaker& makeLeaf);
    Result<Value> lowerConstant(Frame& f, const Instruction& ins);
    Result<Value> lowerReduce(Frame& f, const Instruction& ins);
    Result<Value> lowerDot(Frame& f, const Instruction& ins);
    Result<Value> lowerWhile(Frame& f, const Instruction& ins);
    Result<Value> lowerPad(Frame& f, const Instruction& ins);
    Result<Value> lowerCall(Frame& f, const Instruction& ins, std::string_view attr);
    Result<Value> lowerBatchNorm(Frame& f, const Instruction& ins);
    Result<Value> lowerConditional(Frame& f, const Instruction& ins);
    Result<Value> lowerCustomCall(Frame& f, const Instruction& ins);
    // SPMDFullToShardShape / SPMDShardToFullShape: the boundaries of a manual (shard_map) region.
    Result<Value> lowerManualBoundary(Frame& f, const Instruction& ins, const std::string& target);
    // all-reduce: in a manual region a custom-call hlo.all-reduce per operand with its replica
    // groups and combiner; elsewhere opaque.
    Result<Value> lowerAllReduce(Frame& f, const Instruction& ins);
    // The ops of one lowering, emitted in order and named <instruction><tag><n>; the first failure
    // stops the rest (kNoOp from then on) and is kept in `error`.
    struct Chain {
        Chain(Importer& importer, Frame& frame, const Instruction& instruction, std::string t)
            : im(importer), f(frame), ins(instruction), tag(std::move(t)) {}
        OpId add(OpKind kind, std::vector<OpId> operands, OpAttrs attrs = {}, TensorType declared = {}) {
            if (error) return kNoOp;
            Op op;
            op.kind = kind;
            op.operands = std::move(operands);
            op.attrs = std::move(attrs);
            op.type = std::move(declared);
            return keep(im.emit(f, ins, std::move(op), tag + std::to_string(step++)));
        }
        OpId splat(double value, DType t, const std::vector<int64_t>& dims) {  // a scalar broadcast to dims
            OpAttrs a;
            a.literal = {value};
            const OpId c = add(OpKind::Constant, {}, a, TensorType{t, {}});
            if (error) return kNoOp;
            return keep(im.broadcastScalar(f, ins, c, dims, tag + std::to_string(step++)));
        }
        OpId keep(Result<OpId> id) {
            if (!id) {
                error = id.error();
                return kNoOp;
            }
            return *id;
        }
        Importer& im;
        Frame& f;
        const Instruction& ins;
        std::string tag;
        std::optional<Error> error;
        int step = 0;
    };
    // cuDNN fused attention (`__cudnn$fmhaSoftmax`, `__cudnn$fmhaSoftmaxBackward`) written out as the
    // attention core it computes; nullopt when the call is a variant this does not know (bias,
    // dropout, other masks, unexpected shapes), left opaque then.
    std::optional<Result<Value>> lowerFusedAttention(Frame& f, const Instruction& ins, const std::string& target);
    Result<int> computationRef(const Instruction& ins, std::string_view attr) const;
    std::optional<ReduceKind> combiner(int comp) const;
    std::optional<double> scalarConstant(Frame& f, const Instruction& ins, size_t operandIndex);
    Result<int64_t> tripCount(const Instruction& ins, const Value& init);
    Result<OpId> broadcastScalar(Frame& f, const Instruction& ins, OpId scalar, const std::vector<int64_t>& dims,
                                 const std::string& suffix);
    Result<int64_t> intAttr(const Instruction& ins, std::string_view key, bool required, int64_t fallback = 0) const;
    Result<std::vector<int64_t>> listAttr(const Instruction& ins, std::string_view key, bool required) const;

    const hlo::Module& m_module;
    const std::string& m_source;
    const ImportOptions& m_options;
    Graph m_staged;
    PhaseHints m_hints;
    std::unordered_map<std::string, int> m_computations;
    std::set<int> m_active;  // computations being lowered (recursion check)
    std::vector<ImportNote> m_notes;
    std::set<std::string> m_noteKeys;
    std::vector<ShardingAnnotation> m_shardings;
    std::vector<char> m_manual;  // per staged op: in a manual region (rules/op_rules.h manualRegionOps)
    int64_t m_manualBoundaries = 0;
    std::map<std::string, int64_t> m_opaqueCounts;
    int64_t m_nameCounter = 0;
    int64_t m_inlined = 0;  // computation activations so far (bounded like ops: no exponential call trees)
};

std::string Importer::uniqueName(const std::string& base) {
    if (m_staged.find(base) == kNoOp) return base;
    while (true) {
        std::string candidate = base + "." + std::to_string(++m_nameCounter);
        if (m_staged.find(candidate) == kNoOp) return candidate;
    }
}

std::string Importer::scopeOf(const Frame& f, const Instruction& ins) const {
    std::string scope;
    if (const std::string* md = ins.attribute("metadata")) {
        std::string file, line;
        for (const auto& [k, v] : hlo::parseFieldList(*md)) {
            if (k == "op_name") scope = scopeFromOpName(v);
            if (k == "source_file") file = v;
            if (k == "source_line") line = v;
        }
        if (scope.empty() && !file.empty()) {
            scope = std::filesystem::path(file).stem().string();
            if (!line.empty()) scope += ".L" + line;
        }
    }
    if (scope.empty()) return f.scope;
    return scope + f.scopeSuffix;
}

Result<TensorType> Importer::declaredType(const Frame& f, const Instruction& ins, const hlo::Shape& shape) const {
    if (shape.isTuple) return fail(ins, "hlo.unsupported_type", "expected an array shape, got the tuple " + shape.toString());
    auto dt = elementType(shape.elementType);
    if (!dt)
        return fail(ins, "hlo.unsupported_type",
                    "element type '" + shape.elementType + "' is not supported (pred, s8, u8, s16, u16, s32, u32, s64, u64, f8e4m3fn, f8e5m2, f16, bf16, f32, "
                    "f64)");
    TensorType t{*dt, f.mapDims ? *f.mapDims : shape.dims};
    for (int64_t d : t.dims)
        if (d < 0) return fail(ins, "hlo.unsupported_type", "unbounded dynamic dimension in " + shape.toString());
    if (auto st = validateTensorType(t); !st) return fail(ins, "hlo.too_large", st.error().message);
    return t;
}

Result<Value> Importer::valueOf(Frame& f, int index) {
    auto& slot = f.values[static_cast<size_t>(index)];
    if (!slot) {
        // Constants are lowered on first use so that reduce init values and other unused constants
        // do not become ops.
        const Instruction& ins = f.comp->instructions[static_cast<size_t>(index)];
        auto v = lower(f, ins);
        if (!v) return v.error();
        slot = std::move(*v);
    }
    return *slot;
}

Result<Value> Importer::operand(Frame& f, const Instruction& ins, size_t i) {
    if (i >= ins.operands.size())
        return fail(ins, "hlo.bad_attribute", ins.opcode + " needs at least " + std::to_string(i + 1) + " operand(s)");
    auto it = f.index.find(ins.operands[i]);
    if (it == f.index.end())
        return fail(ins, "hlo.unknown_operand", "operand '" + ins.operands[i] + "' is not defined in computation '" + f.comp->name + "'");
    return valueOf(f, it->second);
}

Result<const Value*> Importer::operandRef(Frame& f, const Instruction& ins, size_t i) {
    if (i >= ins.operands.size())
        return fail(ins, "hlo.bad_attribute", ins.opcode + " needs at least " + std::to_string(i + 1) + " operand(s)");
    auto it = f.index.find(ins.operands[i]);
    if (it == f.index.end())
        return fail(ins, "hlo.unknown_operand", "operand '" + ins.operands[i] + "' is not defined in computation '" + f.comp->name + "'");
    auto v = valueOf(f, it->second);
    if (!v) return v.error();
    return &*f.values[static_cast<size_t>(it->second)];
}

Result<OpId> Importer::leafOperand(Frame& f, const Instruction& ins, size_t i) {
    auto v = operand(f, ins, i);
    if (!v) return v.error();
    if (v->isTuple) return fail(ins, "hlo.type_error", "operand '" + ins.operands[i] + "' is a tuple where an array is needed");
    return v->id;
}

Result<std::optional<std::vector<int64_t>>> Importer::constantStarts(Frame& f, const Instruction& ins, size_t first,
                                                                     const std::vector<int64_t>& dims,
                                                                     const std::vector<int64_t>& window) {
    if (ins.operands.size() != dims.size() + first || window.size() != dims.size()) return std::optional<std::vector<int64_t>>{};
    std::vector<int64_t> starts;
    for (size_t k = 0; k < dims.size(); ++k) {
        auto idx = leafOperand(f, ins, k + first);
        if (!idx) return idx.error();
        const Op& c = m_staged.op(*idx);
        if (c.kind != OpKind::Constant || c.attrs.literal.size() != 1 || window[k] > dims[k])
            return std::optional<std::vector<int64_t>>{};
        starts.push_back(std::clamp<int64_t>(static_cast<int64_t>(c.attrs.literal[0]), 0, dims[k] - window[k]));
    }
    return std::optional<std::vector<int64_t>>(std::move(starts));
}

Result<OpId> Importer::placeUpdate(Frame& f, const Instruction& ins, OpId x, OpId update,
                                   const std::vector<int64_t>& starts, size_t dim) {
    const std::vector<int64_t> dims = m_staged.op(x).type.dims;
    const std::vector<int64_t> udims = m_staged.op(update).type.dims;
    while (dim < dims.size() && udims[dim] == dims[dim]) ++dim;
    if (dim == dims.size()) return update;  // covers the rest whole
    auto slice = [&](OpId of, int64_t from, int64_t to, const char* suffix) -> Result<OpId> {
        Op sl;
        sl.kind = OpKind::Slice;
        sl.operands = {of};
        for (size_t k = 0; k < dims.size(); ++k) {
            sl.attrs.slice.start.push_back(k == dim ? from : 0);
            sl.attrs.slice.limit.push_back(k == dim ? to : m_staged.op(of).type.dims[k]);
            sl.attrs.slice.stride.push_back(1);
        }
        return emit(f, ins, std::move(sl), suffix);
    };
    const int64_t start = starts[dim], end = starts[dim] + udims[dim];
    auto middle = slice(x, start, end, ".window");
    if (!middle) return middle.error();
    auto inner = placeUpdate(f, ins, *middle, update, starts, dim + 1);
    if (!inner) return inner.error();
    Op cat;
    cat.kind = OpKind::Concatenate;
    cat.attrs.dimensions = {static_cast<int64_t>(dim)};
    if (start > 0) {
        auto before = slice(x, 0, start, ".before");
        if (!before) return before.error();
        cat.operands.push_back(*before);
    }
    cat.operands.push_back(*inner);
    if (end < dims[dim]) {
        auto after = slice(x, end, dims[dim], ".after");
        if (!after) return after.error();
        cat.operands.push_back(*after);
    }
    if (cat.operands.size() == 1) return cat.operands[0];
    return emit(f, ins, std::move(cat), ".placed");
}

Result<OpId> Importer::emit(Frame& f, const Instruction& ins, Op op, const std::string& suffix) {
    if (m_staged.size() >= m_options.maxOps)
        return fail(ins, "hlo.too_large", "the graph would exceed " + std::to_string(m_options.maxOps) + " ops");
    op.name = uniqueName(f.prefix + ins.name + suffix);
    op.scope = scopeOf(f, ins);
    op.phase = Phase::Forward;
    if (op.kind == OpKind::Parameter) op.role = ParamRole::Input;
    if (!hasDeclaredType(op.kind)) {
        std::vector<const TensorType*> types;
        for (OpId in : op.operands) types.push_back(&m_staged.op(in).type);
        auto t = inferType(op.kind, types, op.attrs, nullptr);
        if (!t) return failFrom(ins, t.error());
        op.type = std::move(*t);
    }
    bool manual = isFullToShard(op);
    if (!isShardToFull(op))
        for (OpId in : op.operands) manual = manual || m_manual[static_cast<size_t>(in)];
    auto id = m_staged.add(std::move(op));
    if (!id) return failFrom(ins, id.error());
    m_manual.push_back(manual);
    int8_t hint = -1;
    if (const std::string* md = ins.attribute("metadata")) {
        for (const auto& [k, v] : hlo::parseFieldList(*md))
            if (k == "op_name" && v.find("jvp(") != std::string::npos)
                hint = static_cast<int8_t>(v.find("transpose(") != std::string::npos ? Phase::Backward : Phase::Optimizer);
    }
    m_hints.push_back(hint);
    return *id;
}

Result<OpId> Importer::emitChecked(Frame& f, const Instruction& ins, Op op, const TensorType& declared,
                                   const std::string& suffix) {
    if (hasDeclaredType(op.kind)) op.type = declared;
    auto id = emit(f, ins, std::move(op), suffix);
    if (!id) return id;
    const TensorType& got = m_staged.op(*id).type;
    if (got != declared)
        return fail(ins, "hlo.shape_mismatch", "declared " + declared.toString() + " but " + ins.opcode + " of its operands gives " + got.toString());
    return id;
}

Result<OpId> Importer::broadcastScalar(Frame& f, const Instruction& ins, OpId scalar, const std::vector<int64_t>& dims,
                                       const std::string& suffix) {
    const TensorType& t = m_staged.op(scalar).type;
    if (t.dims == dims) return scalar;
    if (t.rank() != 0) return fail(ins, "hlo.type_error", "expected a scalar or " + TensorType{t.dtype, dims}.toString() + ", got " + t.toString());
    Op b;
    b.kind = OpKind::Broadcast;
    b.operands = {scalar};
    b.type = TensorType{t.dtype, dims};
    return emit(f, ins, std::move(b), suffix);
}

Result<int64_t> Importer::intAttr(const Instruction& ins, std::string_view key, bool required, int64_t fallback) const {
    const std::string* v = ins.attribute(key);
    if (!v) {
        if (required) return fail(ins, "hlo.bad_attribute", ins.opcode + " needs " + std::string(key) + "=");
        return fallback;
    }
    int64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc() || ptr != v->data() + v->size())
        return fail(ins, "hlo.bad_attribute", std::string(key) + "=" + *v + " is not an integer");
    return out;
}

Result<std::vector<int64_t>> Importer::listAttr(const Instruction& ins, std::string_view key, bool required) const {
    const std::string* v = ins.attribute(key);
    if (!v) {
        if (required) return fail(ins, "hlo.bad_attribute", ins.opcode + " needs " + std::string(key) + "={…}");
        return std::vector<int64_t>{};
    }
    auto list = hlo::parseIntList(*v);
    if (!list) return fail(ins, "hlo.bad_attribute", std::string(key) + ": " + list.error().message);
    return list;
}

Result<int> Importer::computationRef(const Instruction& ins, std::string_view attr) const {
    const std::string* v = ins.attribute(attr);
    if (!v) return fail(ins, "hlo.bad_attribute", ins.opcode + " needs " + std::string(attr) + "=%computation");
    std::string name = *v;
    if (!name.empty() && name[0] == '%') name.erase(0, 1);
    auto it = m_computations.find(name);
    if (it == m_computations.end()) return fail(ins, "hlo.unknown_computation", "no computation named '" + name + "'");
    if (it->second == m_module.entry) return fail(ins, "hlo.recursion", "calls the ENTRY computation");
    return it->second;
}

// add/maximum/minimum/multiply of the two parameters; nullopt otherwise.
std::optional<ReduceKind> Importer::combiner(int comp) const {
    const hlo::Computation& c = m_module.computations[static_cast<size_t>(comp)];
    const Instruction& root = c.instructions[static_cast<size_t>(c.root)];
    std::optional<ReduceKind> kind;
    if (root.opcode == "add") kind = ReduceKind::Add;
    else if (root.opcode == "maximum") kind = ReduceKind::Max;
    else if (root.opcode == "minimum") kind = ReduceKind::Min;
    else if (root.opcode == "multiply") kind = ReduceKind::Multiply;
    if (!kind || root.operands.size() != 2) return std::nullopt;
    std::set<std::string> params;
    for (const Instruction& i : c.instructions)
        if (i.opcode == "parameter") params.insert(i.name);
    if (params.size() != 2 || !params.count(root.operands[0]) || !params.count(root.operands[1]) ||
        root.operands[0] == root.operands[1])
        return std::nullopt;
    return kind;
}

// The operand's value when it is a scalar constant (an HLO constant or a constant op).
std::optional<double> Importer::scalarConstant(Frame& f, const Instruction& ins, size_t operandIndex) {
    if (operandIndex >= ins.operands.size()) return std::nullopt;
    auto it = f.index.find(ins.operands[operandIndex]);
    if (it == f.index.end()) return std::nullopt;
    const Instruction& src = f.comp->instructions[static_cast<size_t>(it->second)];
    if (src.opcode == "constant" && !f.values[static_cast<size_t>(it->second)]) {
        if (src.shape.isTuple || !src.shape.dims.empty()) return std::nullopt;
        double v = 0;
        std::string text = src.payload;
        text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
        if (text == "true") return 1.0;
        if (text == "false") return 0.0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
        return v;
    }
    auto value = valueOf(f, it->second);
    if (!value || value->isTuple) return std::nullopt;
    OpId id = value->id;
    while (m_staged.op(id).kind == OpKind::Broadcast || m_staged.op(id).kind == OpKind::Convert) id = m_staged.op(id).operands[0];
    const Op& op = m_staged.op(id);
    if (op.kind == OpKind::Constant && op.attrs.literal.size() == 1) return op.attrs.literal[0];
    return std::nullopt;
}

Result<Value> Importer::perLeaf(Frame& f, const Instruction& ins, const hlo::Shape& shape, const std::string& suffix,
                                const LeafMaker& makeLeaf) {
    if (shape.isTuple) {
        std::vector<Value> elems;
        for (size_t i = 0; i < shape.elements.size(); ++i) {
            auto e = perLeaf(f, ins, shape.elements[i], suffix + "." + std::to_string(i), makeLeaf);
            if (!e) return e;
            elems.push_back(std::move(*e));
        }
        return tupleOf(std::move(elems));
    }
    if (shape.elementType == "token") return tupleOf({});
    auto t = declaredType(f, ins, shape);
    if (!t) return t.error();
    auto id = makeLeaf(std::move(*t), suffix);
    if (!id) return id.error();
    Value v;
    v.id = *id;
    return v;
}

Result<Value> Importer::opaque(Frame& f, const Instruction& ins, const std::string& target, const OpAttrs& attrs) {
    std::vector<OpId> inputs;
    for (size_t i = 0; i < ins.operands.size(); ++i) {
        auto v = operand(f, ins, i);
        if (!v) return v.error();
        v->leaves(inputs);
    }
    // The IR has no collective ops but all-reduce: in a manual region the others would be priced
    // as free, so the region is refused rather than mis-imported.
    static const std::set<std::string_view> kCollectives = {
        "all-gather", "all-gather-start", "all-gather-done", "all-reduce-start", "all-reduce-done", "all-to-all",
        "reduce-scatter", "collective-broadcast", "collective-permute", "collective-permute-start",
        "collective-permute-done", "ragged-all-to-all", "async-start", "async-update", "async-done", "send", "recv"};
    if (kCollectives.count(ins.opcode) &&
        std::any_of(inputs.begin(), inputs.end(), [&](OpId o) { return m_manual[static_cast<size_t>(o)] != 0; }))
        return fail(ins, "hlo.manual_collective",
                    ins.opcode + " inside a manual (shard_map) region is not supported: the IR has no such collective (an "
                                 "all-reduce is imported), so the region's communication could not be priced");
    if (target.rfind("hlo.", 0) == 0) ++m_opaqueCounts[ins.opcode];
    // One custom-call per array element of the result shape.
    return perLeaf(f, ins, ins.shape, "", [&](TensorType t, const std::string& suffix) {
        Op op;
        op.kind = OpKind::CustomCall;
        op.operands = inputs;
        op.attrs = attrs;
        op.attrs.target = target;
        op.type = std::move(t);
        return emit(f, ins, std::move(op), suffix);
    });
}

Result<Value> Importer::lowerConstant(Frame& f, const Instruction& ins) {
    auto t = declaredType(f, ins, ins.shape);
    if (!t) return t.error();
    std::vector<double> values;
    std::string token;
    bool elided = false;
    auto flush = [&]() -> Status {
        if (token.empty()) return {};
        if (token == "...") {
            elided = true;
        } else if (token == "true" || token == "false") {
            values.push_back(token == "true" ? 1.0 : 0.0);
        } else {
            double v = 0;
            const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
            if (ec != std::errc() || ptr != token.data() + token.size())
                return fail(ins, "hlo.bad_literal", "'" + token + "' is not a number");
            values.push_back(v);
        }
        token.clear();
        if (static_cast<int64_t>(values.size()) > m_options.maxLiteralValues)
            return fail(ins, "hlo.too_large", "constant has more than " + std::to_string(m_options.maxLiteralValues) + " values");
        return {};
    };
    for (char c : ins.payload) {
        if (c == '{' || c == '}' || c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            CFP_TRY(flush());
        } else {
            token += c;
        }
    }
    CFP_TRY(flush());
    const int64_t n = f.mapDims ? 1 : t->elements();
    if (elided) {
        note("hlo.elided_constant", "constants printed as {...} are read as zeros", hlo::locationText(m_source, ins.where));
        values.assign(1, 0.0);
    }
    if (values.empty()) return fail(ins, "hlo.bad_literal", "constant has no value");
    if (values.size() != 1 && static_cast<int64_t>(values.size()) != n)
        return fail(ins, "hlo.bad_literal", "constant " + t->toString() + " has " + std::to_string(values.size()) + " values");
    if (std::all_of(values.begin(), values.end(), [&](double v) {
            return v == values[0] || (std::isnan(v) && std::isnan(values[0]));
        }))
        values.resize(1);
    Op op;
    op.kind = OpKind::Constant;
    op.attrs.literal = std::move(values);
    if (f.mapDims) {
        // Inside a map the scalar constant is broadcast to the mapped shape.
        op.type = TensorType{t->dtype, {}};
        auto s = emit(f, ins, std::move(op), ".scalar");
        if (!s) return s.error();
        auto b = broadcastScalar(f, ins, *s, t->dims, "");
        if (!b) return b.error();
        Value v;
        v.id = *b;
        return v;
    }
    op.type = std::move(*t);
    auto id = emit(f, ins, std::move(op));
    if (!id) return id.error();
    Value v;
    v.id = *id;
    return v;
}

Result<Value> Importer::lowerReduce(Frame& f, const Instruction& ins) {
    auto comp = computationRef(ins, "to_apply");
    if (!comp) return comp.error();
    const auto kind = combiner(*comp);
    auto dims = listAttr(ins, "dimensions", true);
    if (!dims) return dims.error();
    if (ins.operands.size() != 2 || ins.shape.isTuple || !kind) {
        // Variadic (argmax-style) or an unknown combiner: the reduced dims are kept whole.
        OpAttrs a;
        a.dimensions = *dims;
        return opaque(f, ins, "hlo.reduce", a);
    }
    auto x = leafOperand(f, ins, 0);
    if (!x) return x.error();
    auto declared = declaredType(f, ins, ins.shape);
    if (!declared) return declared.error();
    const std::optional<double> init = scalarConstant(f, ins, 1);
    const double inf = std::numeric_limits<double>::infinity();
    bool identity = false;
    if (init) {
        const double v = *init;
        switch (*kind) {
            case ReduceKind::Add: identity = v == 0; break;
            case ReduceKind::Multiply: identity = v == 1; break;
            case ReduceKind::Max: identity = v == -inf || v <= -3.0e38 || v == static_cast<double>(std::numeric_limits<int32_t>::min()) ||
                                             v == static_cast<double>(std::numeric_limits<int64_t>::min()); break;
            case ReduceKind::Min: identity = v == inf || v >= 3.0e38 || v == static_cast<double>(std::numeric_limits<int32_t>::max()) ||
                                             v == static_cast<double>(std::numeric_limits<int64_t>::max()); break;
        }
    }
    Op r;
    r.kind = OpKind::Reduce;
    r.operands = {*x};
    r.attrs.dimensions = *dims;
    r.attrs.reduceKind = *kind;
    if (identity) {
        auto id = emitChecked(f, ins, std::move(r), *declared);
        if (!id) return id.error();
        Value v;
        v.id = *id;
        return v;
    }
    // Non-identity init: reduce, then combine the init value once.
    auto red = emitChecked(f, ins, std::move(r), *declared, ".reduce");
    if (!red) return red.error();
    auto initOp = leafOperand(f, ins, 1);
    if (!initOp) return initOp.error();
    auto b = broadcastScalar(f, ins, *initOp, declared->dims, ".init");
    if (!b) return b.error();
    Op c;
    c.kind = *kind == ReduceKind::Add ? OpKind::Add : *kind == ReduceKind::Multiply ? OpKind::Multiply
            : *kind == ReduceKind::Max ? OpKind::Maximum : OpKind::Minimum;
    c.operands = {*red, *b};
    auto id = emitChecked(f, ins, std::move(c), *declared);
    if (!id) return id.error();
    Value v;
    v.id = *id;
    return v;
}

Result<Value> Importer::lowerDot(Frame& f, const Instruction& ins) {
    auto lhs = leafOperand(f, ins, 0);
    if (!lhs) return lhs.error();
    auto rhs = leafOperand(f, ins, 1);
    if (!rhs) return rhs.error();
    auto declared = declaredType(f, ins, ins.shape);
    if (!declared) return declared.error();
    Op d;
    d.kind = OpKind::Dot;
    auto lb = listAttr(ins, "lhs_batch_dims", false);
    auto rb = listAttr(ins, "rhs_batch_dims", false);
    auto lc = listAttr(ins, "lhs_contracting_dims", false);
    auto rc = listAttr(ins, "rhs_contracting_dims", false);
    for (auto* r : {&lb, &rb, &lc, &rc})
        if (!*r) return r->error();
    d.attrs.dot = DotDimensionNumbers{*lb, *rb, *lc, *rc};
    OpId a = *lhs, b = *rhs;
    const DType lt = m_staged.op(a).type.dtype, rt = m_staged.op(b).type.dtype;
    auto convertTo = [&](OpId x, DType to, const std::string& suffix) -> Result<OpId> {
        Op c;
        c.kind = OpKind::Convert;
        c.operands = {x};
        c.type = TensorType{to, m_staged.op(x).type.dims};
        return emit(f, ins, std::move(c), suffix);
    };
    if (lt != rt) {
        // Mixed operand types: compute in the result type.
        if (lt != declared->dtype) {
            auto c = convertTo(a, declared->dtype, ".lhs");
            if (!c) return c.error();
            a = *c;
        }
        if (rt != declared->dtype) {
            auto c = convertTo(b, declared->dtype, ".rhs");
            if (!c) return c.error();
            b = *c;
        }
    }
    d.operands = {a, b};
    const DType computeType = m_staged.op(a).type.dtype;
    if (computeType == declared->dtype) {
        auto id = emitChecked(f, ins, std::move(d), *declared);
        if (!id) return id.error();
        Value v;
        v.id = *id;
        return v;
    }
    // bf16 × bf16 → f32 (preferred element type): the dot in the operand type, then a convert.
    auto id = emitChecked(f, ins, std::move(d), TensorType{computeType, declared->dims}, ".dot");
    if (!id) return id.error();
    auto c = convertTo(*id, declared->dtype, "");
    if (!c) return c.error();
    Value v;
    v.id = *c;
    return v;
}

Result<Value> Importer::lowerPad(Frame& f, const Instruction& ins) {
    const std::string* padding = ins.attribute("padding");
    if (!padding) return fail(ins, "hlo.bad_attribute", "pad needs padding=");
    auto x = leafOperand(f, ins, 0);
    if (!x) return x.error();
    // padding=lo_hi[_interior] per dim, joined by 'x'.
    std::vector<std::array<int64_t, 3>> cfg;
    const std::string& p = *padding;
    const Error bad = fail(ins, "hlo.bad_attribute", "padding=" + p + " is not lo_hi[_interior]x…");
    size_t start = 0;
    while (start <= p.size()) {
        size_t end = p.find('x', start);
        if (end == std::string::npos) end = p.size();
        std::array<int64_t, 3> c{0, 0, 0};
        size_t i = start;
        int k = 0;
        for (; k < 3 && i < end; ++k) {
            const auto [ptr, ec] = std::from_chars(p.data() + i, p.data() + end, c[static_cast<size_t>(k)]);
            if (ec != std::errc()) return bad;
            i = static_cast<size_t>(ptr - p.data());
            if (i < end) {
                if (p[i] != '_') return bad;
                ++i;
            }
        }
        if (k < 2 || i != end) return bad;
        cfg.push_back(c);
        start = end + 1;
    }
    const TensorType xt = m_staged.op(*x).type;
    if (static_cast<int64_t>(cfg.size()) != xt.rank())
        return fail(ins, "hlo.bad_attribute", "padding=" + p + " does not have one entry per dimension of " + xt.toString());
    for (const auto& c : cfg)
        if (c[0] < 0 || c[1] < 0 || c[2] != 0) return opaque(f, ins, "hlo.pad");
    auto padValue = leafOperand(f, ins, 1);
    if (!padValue) return padValue.error();
    OpId cur = *x;
    size_t lastPadded = cfg.size();
    for (size_t d = 0; d < cfg.size(); ++d)
        if (cfg[d][0] != 0 || cfg[d][1] != 0) lastPadded = d;
    for (size_t d = 0; d < cfg.size(); ++d) {
        if (cfg[d][0] == 0 && cfg[d][1] == 0) continue;
        std::vector<OpId> parts;
        for (int side = 0; side < 2; ++side) {
            const int64_t width = cfg[d][static_cast<size_t>(side)];
            if (width == 0) {
                if (side == 0) parts.push_back(cur);
                continue;
            }
            std::vector<int64_t> dims = m_staged.op(cur).type.dims;
            dims[d] = width;
            auto b = broadcastScalar(f, ins, *padValue, dims, ".pad" + std::to_string(d) + (side ? "hi" : "lo"));
            if (!b) return b.error();
            parts.push_back(*b);
            if (side == 0) parts.push_back(cur);
        }
        Op c;
        c.kind = OpKind::Concatenate;
        c.operands = parts;
        c.attrs.dimensions = {static_cast<int64_t>(d)};
        auto id = emit(f, ins, std::move(c), d == lastPadded ? std::string() : ".dim" + std::to_string(d));
        if (!id) return id.error();
        cur = *id;
    }
    auto declared = declaredType(f, ins, ins.shape);
    if (!declared) return declared.error();
    if (m_staged.op(cur).type != *declared)
        return fail(ins, "hlo.shape_mismatch", "declared " + declared->toString() + " but padding gives " + m_staged.op(cur).type.toString());
    Value v;
    v.id = cur;
    return v;
}

Result<Value> Importer::lowerCall(Frame& f, const Instruction& ins, std::string_view attr) {
    auto comp = computationRef(ins, attr);
    if (!comp) return comp.error();
    std::vector<Value> args;
    for (size_t i = 0; i < ins.operands.size(); ++i) {
        auto v = operand(f, ins, i);
        if (!v) return v.error();
        args.push_back(std::move(*v));
    }
    return lowerComputation(*comp, &args, f.prefix + ins.name + "/", scopeOf(f, ins), f.scopeSuffix, f.depth + 1);
}

// batch-norm-training / -inference / -grad written out in primitives, so their statistics are
// ordinary reductions with sharding rules. PyTorch/XLA lowers LayerNorm this way: the input
// reshaped to [1, rows, features] with feature_index=1, scale ones and offset zeros, the
// affine weight and bias applied after.
//   training(x, γ, β) → (γ·(x−μ)·rsqrt(σ²+ε) + β, μ, σ²), μ and σ² over every dim but the feature's;
//   inference(x, γ, β, μ, σ²) → γ·(x−μ)·rsqrt(σ²+ε) + β;
//   grad(x, γ, μ, σ², dy) → (γ·rsqrt(σ²+ε)/N·(N·dy − Σdy − x̂·Σ(dy·x̂)), Σ(dy·x̂), Σdy), x̂ = (x−μ)·rsqrt(σ²+ε).
Result<Value> Importer::lowerBatchNorm(Frame& f, const Instruction& ins) {
    const std::string& opc = ins.opcode;
    const size_t arity = opc == "batch-norm-training" ? 3 : 5;
    if (ins.operands.size() != arity)
        return fail(ins, "hlo.bad_attribute", opc + " takes " + std::to_string(arity) + " operands");
    std::vector<OpId> in;
    for (size_t i = 0; i < arity; ++i) {
        auto x = leafOperand(f, ins, i);
        if (!x) return x.error();
        in.push_back(*x);
    }
    auto feature = intAttr(ins, "feature_index", true);
    if (!feature) return feature.error();
    const std::string* epsText = ins.attribute("epsilon");
    if (!epsText) return fail(ins, "hlo.bad_attribute", opc + " needs epsilon=");
    char* end = nullptr;
    const double eps = std::strtod(epsText->c_str(), &end);
    if (end == epsText->c_str() || *end != '\0') return fail(ins, "hlo.bad_attribute", "epsilon=" + *epsText + " is not a number");
    const TensorType xt = m_staged.op(in[0]).type;
    if (*feature < 0 || *feature >= xt.rank())
        return fail(ins, "hlo.bad_attribute", "feature_index=" + std::to_string(*feature) + " is outside " + xt.toString());
    const auto fd = static_cast<size_t>(*feature);
    const std::vector<int64_t> featureDims{xt.dims[fd]};
    for (size_t i = 1; i < arity; ++i) {
        const bool isGradOutput = opc == "batch-norm-grad" && i == 4;
        const TensorType& t = m_staged.op(in[i]).type;
        if (t.dims != (isGradOutput ? xt.dims : featureDims))
            return fail(ins, "hlo.shape_mismatch", "operand " + std::to_string(i) + " is " + t.toString() + ", expected " +
                                                       TensorType{xt.dtype, isGradOutput ? xt.dims : featureDims}.toString());
    }
    std::vector<int64_t> others;
    double count = 1;
    for (size_t d = 0; d < xt.dims.size(); ++d)
        if (d != fd) {
            others.push_back(static_cast<int64_t>(d));
            count *= static_cast<double>(xt.dims[d]);
        }
    Chain chain(*this, f, ins, ".bn");
    const std::optional<Error>& error = chain.error;
    auto add = [&](OpKind kind, std::vector<OpId> operands, OpAttrs attrs = {}, TensorType declared = {}) {
        return chain.add(kind, std::move(operands), std::move(attrs), std::move(declared));
    };
    auto splat = [&](double value, const std::vector<int64_t>& dims) { return chain.splat(value, xt.dtype, dims); };
    auto spread = [&](OpId perFeature) -> OpId {  // [F] → x's shape along the feature dim
        OpAttrs a;
        a.dimensions = {*feature};
        return add(OpKind::Broadcast, {perFeature}, a, TensorType{xt.dtype, xt.dims});
    };
    auto sum = [&](OpId v) -> OpId {  // over every dim but the feature's
        OpAttrs a;
        a.dimensions = others;
        a.reduceKind = ReduceKind::Add;
        return add(OpKind::Reduce, {v}, a);
    };
    auto bin = [&](OpKind k, OpId a, OpId b) { return add(k, {a, b}); };
    auto invStd = [&](OpId variance) {
        return add(OpKind::Rsqrt, {bin(OpKind::Add, variance, splat(eps, featureDims))});
    };
    auto finish = [&](std::vector<OpId> leaves) -> Result<Value> {
        if (error) return failFrom(ins, *error);
        std::vector<hlo::Shape> shapes = ins.shape.isTuple ? ins.shape.elements : std::vector<hlo::Shape>{ins.shape};
        if (shapes.size() != leaves.size())
            return fail(ins, "hlo.shape_mismatch", opc + " gives " + std::to_string(leaves.size()) + " results");
        std::vector<Value> values;
        for (size_t i = 0; i < leaves.size(); ++i) {
            auto declared = declaredType(f, ins, shapes[i]);
            if (!declared) return declared.error();
            if (m_staged.op(leaves[i]).type != *declared)
                return fail(ins, "hlo.shape_mismatch", "declared " + declared->toString() + " but " + opc + " gives " +
                                                           m_staged.op(leaves[i]).type.toString());
            Value v;
            v.id = leaves[i];
            values.push_back(std::move(v));
        }
        if (!ins.shape.isTuple) return values[0];
        return tupleOf(std::move(values));
    };
    const OpId x = in[0], scale = in[1];
    if (opc == "batch-norm-training") {
        const OpId inverseN = splat(1.0 / count, featureDims);
        const OpId mean = bin(OpKind::Multiply, sum(x), inverseN);
        const OpId centred = bin(OpKind::Subtract, x, spread(mean));
        const OpId variance = bin(OpKind::Multiply, sum(bin(OpKind::Multiply, centred, centred)), inverseN);
        const OpId gain = bin(OpKind::Multiply, invStd(variance), scale);
        const OpId out = bin(OpKind::Add, bin(OpKind::Multiply, centred, spread(gain)), spread(in[2]));
        return finish({out, mean, variance});
    }
    if (opc == "batch-norm-inference") {
        const OpId gain = bin(OpKind::Multiply, invStd(in[4]), scale);
        const OpId centred = bin(OpKind::Subtract, x, spread(in[3]));
        return finish({bin(OpKind::Add, bin(OpKind::Multiply, centred, spread(gain)), spread(in[2]))});
    }
    const OpId dy = in[4];
    const OpId inv = invStd(in[3]);
    const OpId xhat = bin(OpKind::Multiply, bin(OpKind::Subtract, x, spread(in[2])), spread(inv));
    const OpId gradOffset = sum(dy);
    const OpId gradScale = sum(bin(OpKind::Multiply, dy, xhat));
    const OpId inner = bin(OpKind::Subtract,
                           bin(OpKind::Subtract, bin(OpKind::Multiply, dy, splat(count, xt.dims)), spread(gradOffset)),
                           bin(OpKind::Multiply, xhat, spread(gradScale)));
    const OpId factor = bin(OpKind::Multiply, bin(OpKind::Multiply, scale, inv), splat(1.0 / count, featureDims));
    return finish({bin(OpKind::Multiply, spread(factor), inner), gradScale, gradOffset});
}

// A conditional whose predicate or branch index is a constant is its chosen branch, inlined; any
// other conditional stays opaque.
Result<Value> Importer::lowerConditional(Frame& f, const Instruction& ins) {
    if (ins.operands.empty()) return fail(ins, "hlo.bad_attribute", "conditional needs a predicate or branch index");
    const std::optional<double> selector = scalarConstant(f, ins, 0);
    if (!selector) return opaque(f, ins, "hlo.conditional");
    std::vector<std::string> branches;
    if (const std::string* list = ins.attribute("branch_computations")) {
        std::string text = *list;
        for (char& c : text)
            if (c == '{' || c == '}' || c == ',') c = ' ';
        std::istringstream words(text);
        for (std::string w; words >> w;) branches.push_back(w);
    } else {
        const std::string* t = ins.attribute("true_computation");
        const std::string* e = ins.attribute("false_computation");
        if (!t || !e) return fail(ins, "hlo.bad_attribute", "conditional needs branch_computations= or true_/false_computation=");
        branches = {*e, *t};  // a pred selects index 1 (true) or 0 (false)
    }
    if (branches.size() + 1 != ins.operands.size())
        return fail(ins, "hlo.bad_attribute", "conditional has " + std::to_string(branches.size()) + " branches but " +
                                                  std::to_string(ins.operands.size() - 1) + " branch operands");
    // An index out of range runs the last branch (HLO's rule).
    auto index = static_cast<int64_t>(*selector);
    if (ins.attribute("true_computation")) index = *selector != 0 ? 1 : 0;
    if (index < 0 || index >= static_cast<int64_t>(branches.size())) index = static_cast<int64_t>(branches.size()) - 1;
    std::string name = branches[static_cast<size_t>(index)];
    if (!name.empty() && name[0] == '%') name.erase(0, 1);
    auto it = m_computations.find(name);
    if (it == m_computations.end())
        return fail(ins, "hlo.unknown_computation", "branch '" + name + "' is not a computation of the module");
    auto arg = operand(f, ins, static_cast<size_t>(index) + 1);
    if (!arg) return arg.error();
    std::vector<Value> args{std::move(*arg)};
    return lowerComputation(it->second, &args, f.prefix + ins.name + "/", scopeOf(f, ins), f.scopeSuffix, f.depth + 1);
}

// Custom-calls whose targets are known become what they compute: XLA GPU's cuBLAS GEMMs a dot
// (dimension numbers from backend_config; the workspace result an empty value), `Sharding` its
// operand (the annotation kept on it). Any other target stays an opaque custom-call.
Result<Value> Importer::lowerCustomCall(Frame& f, const Instruction& ins) {
    const std::string* targetText = ins.attribute("custom_call_target");
    const std::string target = targetText ? hlo::unquote(*targetText) : std::string("unknown");
    if (target == "Sharding" && ins.operands.size() == 1) {
        if (const std::string* s = ins.attribute("sharding"); s && !ins.operands.empty()) {
            std::string producer = ins.operands[0];
            if (!producer.empty() && producer[0] == '%') producer.erase(0, 1);
            m_shardings.push_back({f.prefix + producer, *s});
        }
        return operand(f, ins, 0);
    }
    const bool gemm = target == "__cublas$gemm" || target == "__cublas$lt$matmul" || target == "__cublas$lt$matmul$f8";
    if (gemm && ins.operands.size() >= 2) {
        const std::string* cfg = ins.attribute("backend_config");
        nlohmann::json j = cfg ? nlohmann::json::parse(hlo::unquote(*cfg), nullptr, false) : nlohmann::json();
        const nlohmann::json* dn = nullptr;
        if (j.is_object() && j.contains("gemm_backend_config") && j["gemm_backend_config"].contains("dot_dimension_numbers"))
            dn = &j["gemm_backend_config"]["dot_dimension_numbers"];
        if (!dn || !dn->is_object() || ins.operands.size() != 2) return opaque(f, ins, target);
        Instruction dot = ins;
        dot.opcode = "dot";
        dot.shape = ins.shape.isTuple && !ins.shape.elements.empty() ? ins.shape.elements[0] : ins.shape;
        auto list = [&](const char* key) {
            std::string text = "{";
            if (dn->contains(key) && (*dn)[key].is_array())
                for (const auto& v : (*dn)[key]) {
                    if (text.size() > 1) text += ",";
                    text += v.is_string() ? v.get<std::string>() : v.dump();
                }
            return text + "}";
        };
        dot.attributes = {{"lhs_batch_dims", list("lhs_batch_dimensions")},
                          {"rhs_batch_dims", list("rhs_batch_dimensions")},
                          {"lhs_contracting_dims", list("lhs_contracting_dimensions")},
                          {"rhs_contracting_dims", list("rhs_contracting_dimensions")}};
        if (const std::string* md = ins.attribute("metadata")) dot.attributes.push_back({"metadata", *md});
        auto out = lowerDot(f, dot);
        if (!out || !ins.shape.isTuple) return out;
        std::vector<Value> elems{std::move(*out)};
        for (size_t i = 1; i < ins.shape.elements.size(); ++i) elems.push_back(tupleOf({}));  // workspace
        return tupleOf(std::move(elems));
    }
    if (target == "__cudnn$fmhaSoftmax" || target == "__cudnn$fmhaSoftmaxBackward")
        if (auto lowered = lowerFusedAttention(f, ins, target)) return std::move(*lowered);
    if (target == kFullToShardTarget || target == kShardToFullTarget) return lowerManualBoundary(f, ins, target);
    return opaque(f, ins, target);
}

// shard_map lowers to `custom-call(Sharding)` with the full value's sharding, then
// SPMDFullToShardShape (sharding={manual}) giving each device's tile; the region's ops run on the
// tiles; SPMDShardToFullShape (sharding= the full value's) assembles them again. Both become
// custom-calls carrying the full side's sharding (rules/op_rules.h "Manual regions").
Result<Value> Importer::lowerManualBoundary(Frame& f, const Instruction& ins, const std::string& target) {
    const bool toShard = target == kFullToShardTarget;
    if (ins.operands.size() != 1) return fail(ins, "hlo.bad_attribute", target + " takes one operand");
    auto x = leafOperand(f, ins, 0);
    if (!x) return x.error();
    const std::string* own = ins.attribute("sharding");
    std::string full;
    if (toShard) {
        if (own) {
            auto s = parseHloSharding(*own);
            if (!s || s->kind != HloSharding::Kind::Manual)
                return fail(ins, "hlo.manual_sharding",
                            "SPMDFullToShardShape with sharding=" + *own +
                                ": only fully manual regions ({manual}) are supported (a partially manual shard_map leaves "
                                "axes to the partitioner)");
        }
        // The full value's sharding: the Sharding custom-call before it (or the operand's annotation).
        auto it = f.index.find(ins.operands[0]);
        const std::string* s = it == f.index.end() ? nullptr : f.comp->instructions[static_cast<size_t>(it->second)].attribute("sharding");
        if (!s)
            return fail(ins, "hlo.manual_sharding",
                        "its operand '" + ins.operands[0] +
                            "' carries no sharding: shard_map puts a custom-call Sharding with sharding={devices=…} (or "
                            "{replicated}) before SPMDFullToShardShape");
        full = *s;
    } else {
        if (!own) return fail(ins, "hlo.manual_sharding", "SPMDShardToFullShape needs sharding={…}, the full value's sharding");
        full = *own;
    }
    auto parsed = parseHloSharding(full);
    if (!parsed) return fail(ins, "hlo.manual_sharding", parsed.error().message);
    if (parsed->kind != HloSharding::Kind::Replicated && parsed->kind != HloSharding::Kind::Tiled)
        return fail(ins, "hlo.manual_sharding", "the full value's sharding " + full + " is neither replicated nor tiled");
    auto declared = declaredType(f, ins, ins.shape);
    if (!declared) return declared.error();
    const TensorType& in = m_staged.op(*x).type;
    const TensorType& fullType = toShard ? in : *declared;
    const TensorType& localType = toShard ? *declared : in;
    // Each device's tile: the full dims divided by the grid (XLA pads uneven tiles; not modelled).
    std::vector<int64_t> tiles(fullType.dims.size(), 1);
    if (parsed->kind == HloSharding::Kind::Tiled) {
        if (parsed->tensorRank() != fullType.rank())
            return fail(ins, "hlo.manual_sharding", full + " tiles " + std::to_string(parsed->tensorRank()) + " dims of " + fullType.toString());
        for (size_t d = 0; d < tiles.size(); ++d) tiles[d] = parsed->tileDims[d];
    }
    bool fits = fullType.dtype == localType.dtype && fullType.rank() == localType.rank();
    for (size_t d = 0; fits && d < tiles.size(); ++d) fits = localType.dims[d] * tiles[d] == fullType.dims[d];
    if (!fits)
        return fail(ins, "hlo.shape_mismatch",
                    "the tiles of " + fullType.toString() + " under " + full + " are not " + localType.toString() +
                        " (uneven, padded tiles are not supported)");
    Op op;
    op.kind = OpKind::CustomCall;
    op.operands = {*x};
    op.attrs.target = target;
    op.attrs.sharding = full;
    op.type = *declared;
    auto id = emit(f, ins, std::move(op));
    if (!id) return id.error();
    ++m_manualBoundaries;
    Value v;
    v.id = *id;
    return v;
}

Result<Value> Importer::lowerAllReduce(Frame& f, const Instruction& ins) {
    std::vector<OpId> inputs;
    for (size_t i = 0; i < ins.operands.size(); ++i) {
        auto v = operand(f, ins, i);
        if (!v) return v.error();
        v->leaves(inputs);
    }
    const bool manual = std::any_of(inputs.begin(), inputs.end(), [&](OpId o) { return m_manual[static_cast<size_t>(o)] != 0; });
    if (!manual) return opaque(f, ins, "hlo.all-reduce");
    // psum in a shard_map: replica_groups (device ids, with use_global_device_ids) and to_apply.
    const std::string* rg = ins.attribute("replica_groups");
    if (!rg) return fail(ins, "hlo.manual_collective", "an all-reduce in a manual region needs replica_groups={…}");
    auto groups = parseReplicaGroups(*rg);
    if (!groups) return fail(ins, "hlo.manual_collective", groups.error().message);
    if (groups->empty())
        return fail(ins, "hlo.manual_collective", "replica_groups={} (every device, with the count left to the compiler): list the groups");
    for (const auto& g : *groups)
        if (g.size() != (*groups)[0].size() || g.empty())
            return fail(ins, "hlo.manual_collective", "replica groups of different sizes: " + *rg);
    auto comp = computationRef(ins, "to_apply");
    if (!comp) return comp.error();
    const std::optional<ReduceKind> kind = combiner(*comp);
    if (!kind) return fail(ins, "hlo.manual_collective", "an all-reduce whose to_apply is not add, maximum, minimum or multiply");
    // One all-reduce per operand: a variadic all-reduce reduces each alike.
    size_t next = 0;
    return perLeaf(f, ins, ins.shape, "", [&](TensorType t, const std::string& suffix) -> Result<OpId> {
        if (next >= inputs.size() || m_staged.op(inputs[next]).type != t)
            return fail(ins, "hlo.shape_mismatch", "an all-reduce's results have its operands' shapes");
        Op op;
        op.kind = OpKind::CustomCall;
        op.operands = {inputs[next++]};
        op.attrs.target = std::string(kAllReduceTarget);
        op.attrs.replicaGroups = *groups;
        op.attrs.reduceKind = *kind;
        op.type = std::move(t);
        return emit(f, ins, std::move(op), suffix);
    });
}

namespace {

bool hasAxis(const std::vector<int64_t>& axes, int64_t a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); }

// The result dims of a dot (batch, lhs free, rhs free), or nullopt when the numbers do not fit.
std::optional<std::vector<int64_t>> dotResultDims(const std::vector<int64_t>& lhs, const std::vector<int64_t>& rhs,
                                                  const DotDimensionNumbers& d) {
    auto valid = [](const std::vector<int64_t>& axes, size_t rank) {
        return std::all_of(axes.begin(), axes.end(), [&](int64_t a) { return a >= 0 && static_cast<size_t>(a) < rank; });
    };
    if (d.lhsBatch.size() != d.rhsBatch.size() || d.lhsContracting.size() != d.rhsContracting.size() ||
        !valid(d.lhsBatch, lhs.size()) || !valid(d.rhsBatch, rhs.size()) || !valid(d.lhsContracting, lhs.size()) ||
        !valid(d.rhsContracting, rhs.size()))
        return std::nullopt;
    std::vector<int64_t> out;
    for (size_t k = 0; k < d.lhsBatch.size(); ++k) {
        if (lhs[static_cast<size_t>(d.lhsBatch[k])] != rhs[static_cast<size_t>(d.rhsBatch[k])]) return std::nullopt;
        out.push_back(lhs[static_cast<size_t>(d.lhsBatch[k])]);
    }
    for (size_t k = 0; k < d.lhsContracting.size(); ++k)
        if (lhs[static_cast<size_t>(d.lhsContracting[k])] != rhs[static_cast<size_t>(d.rhsContracting[k])]) return std::nullopt;
    auto free = [&](const std::vector<int64_t>& dims, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
        for (size_t a = 0; a < dims.size(); ++a)
            if (!hasAxis(b, static_cast<int64_t>(a)) && !hasAxis(c, static_cast<int64_t>(a))) out.push_back(dims[a]);
    };
    free(lhs, d.lhsBatch, d.lhsContracting);
    free(rhs, d.rhsBatch, d.rhsContracting);
    return out;
}

std::optional<DotDimensionNumbers> fmhaDims(const nlohmann::json& cfg, const char* key) {
    if (!cfg.contains(key) || !cfg[key].is_object()) return std::nullopt;
    const nlohmann::json& j = cfg[key];
    auto list = [&](const char* k, std::vector<int64_t>& out) {
        if (!j.contains(k) || !j[k].is_array()) return;
        for (const auto& v : j[k]) {
            if (v.is_string()) {
                int64_t x = 0;
                const std::string s = v.get<std::string>();
                std::from_chars(s.data(), s.data() + s.size(), x);
                out.push_back(x);
            } else if (v.is_number_integer()) {
                out.push_back(v.get<int64_t>());
            }
        }
    };
    DotDimensionNumbers d;
    list("lhs_batch_dimensions", d.lhsBatch);
    list("rhs_batch_dimensions", d.rhsBatch);
    list("lhs_contracting_dimensions", d.lhsContracting);
    list("rhs_contracting_dimensions", d.rhsContracting);
    return d;
}

}  // namespace

std::optional<Result<Value>> Importer::lowerFusedAttention(Frame& f, const Instruction& ins, const std::string& target) {
    const bool backward = target == "__cudnn$fmhaSoftmaxBackward";
    const std::string* cfgText = ins.attribute("backend_config");
    nlohmann::json j = cfgText ? nlohmann::json::parse(hlo::unquote(*cfgText), nullptr, false) : nlohmann::json();
    if (!j.is_object() || !j.contains("cudnn_fmha_backend_config")) return std::nullopt;
    const nlohmann::json& cfg = j["cudnn_fmha_backend_config"];
    const std::string mask = cfg.value("mask_type", std::string("NO_MASK"));
    const double dropout = cfg.contains("dropout_rate") && cfg["dropout_rate"].is_number() ? cfg["dropout_rate"].get<double>() : 0.0;
    const double scale = cfg.contains("fmha_scale") && cfg["fmha_scale"].is_number() ? cfg["fmha_scale"].get<double>() : 1.0;
    if ((mask != "NO_MASK" && mask != "CAUSAL") || dropout != 0.0) return std::nullopt;
    const size_t arity = backward ? 6 : 3;  // q, k, v (, stats, d_out, out)
    if (ins.operands.size() != arity || !ins.shape.isTuple) return std::nullopt;
    std::vector<OpId> in;
    for (size_t i = 0; i < arity; ++i) {
        auto x = leafOperand(f, ins, i);
        if (!x) return Result<Value>(x.error());
        in.push_back(*x);
    }
    const OpId q = in[0], k = in[1], v = in[2];
    auto dimsOf = [&](OpId id) { return m_staged.op(id).type.dims; };
    const DType dt = m_staged.op(q).type.dtype;
    // Score layout: bmm1 of the forward; the backward states it as bmm2_grad_gemm2 (dO · Vᵀ, with
    // dO laid out as q and V as k).
    auto bmm1 = fmhaDims(cfg, backward ? "bmm2_grad_gemm2_dot_dimension_numbers" : "bmm1_dot_dimension_numbers");
    if (!bmm1) return std::nullopt;
    auto scoreDims = dotResultDims(dimsOf(q), dimsOf(k), *bmm1);
    if (!scoreDims || scoreDims->size() < 2) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(scoreDims->size());
    std::vector<int64_t> rowDims(scoreDims->begin(), scoreDims->end() - 1);  // scores without the key dim
    std::vector<std::vector<int64_t>> expected;  // the declared array results, the workspace left out
    std::vector<hlo::Shape> declaredShapes;
    for (const hlo::Shape& s : ins.shape.elements) {
        if (s.isTuple) return std::nullopt;
        declaredShapes.push_back(s);
    }
    // Forward: out (, stats), workspace. Backward: dq, dk, dv, workspace.
    std::optional<DotDimensionNumbers> outDn, dvDn, dkDn, dqDn;
    if (!backward) {
        outDn = fmhaDims(cfg, "bmm2_dot_dimension_numbers");
        if (!outDn) return std::nullopt;
        auto o = dotResultDims(*scoreDims, dimsOf(v), *outDn);
        if (!o) return std::nullopt;
        expected.push_back(*o);
        if (declaredShapes.size() == 3) expected.push_back(rowDims);
    } else {
        dkDn = fmhaDims(cfg, "bmm1_grad_gemm1_dot_dimension_numbers");
        dqDn = fmhaDims(cfg, "bmm1_grad_gemm2_dot_dimension_numbers");
        dvDn = fmhaDims(cfg, "bmm2_grad_gemm1_dot_dimension_numbers");
        if (!dkDn || !dqDn || !dvDn) return std::nullopt;
        if (dimsOf(in[3]) != rowDims || dimsOf(in[4]) != dimsOf(q) || dimsOf(in[5]) != dimsOf(q)) return std::nullopt;
        auto dq = dotResultDims(*scoreDims, dimsOf(k), *dqDn);
        auto dk = dotResultDims(*scoreDims, dimsOf(q), *dkDn);
        auto dv = dotResultDims(*scoreDims, dimsOf(in[4]), *dvDn);
        if (!dq || !dk || !dv) return std::nullopt;
        expected = {*dq, *dk, *dv};
    }
    if (declaredShapes.size() != expected.size() + 1) return std::nullopt;
    for (size_t i = 0; i < expected.size(); ++i) {
        auto declared = declaredType(f, ins, declaredShapes[i]);
        if (!declared || declared->dims != expected[i]) return std::nullopt;
    }
    Chain chain(*this, f, ins, ".fmha");
    const std::optional<Error>& error = chain.error;
    auto add = [&](OpKind kind, std::vector<OpId> operands, OpAttrs attrs = {}, TensorType declared = {}) {
        return chain.add(kind, std::move(operands), std::move(attrs), std::move(declared));
    };
    auto splat = [&](double value, DType t, const std::vector<int64_t>& dims) { return chain.splat(value, t, dims); };
    auto dot = [&](OpId a, OpId b, const DotDimensionNumbers& dn) {
        OpAttrs at;
        at.dot = dn;
        return add(OpKind::Dot, {a, b}, at);
    };
    auto bin = [&](OpKind kind, OpId a, OpId b) { return add(kind, {a, b}); };
    auto rows = [&](OpId x, ReduceKind r) {  // over the key dim
        OpAttrs a;
        a.dimensions = {rank - 1};
        a.reduceKind = r;
        return add(OpKind::Reduce, {x}, a);
    };
    auto spread = [&](OpId perRow, DType t) {  // [rows] → the scores' shape
        OpAttrs a;
        for (int64_t d = 0; d + 1 < rank; ++d) a.dimensions.push_back(d);
        return add(OpKind::Broadcast, {perRow}, a, TensorType{t, *scoreDims});
    };
    auto convert = [&](OpId x, DType t) {
        if (!error && m_staged.op(x).type.dtype == t) return x;
        return add(OpKind::Convert, {x}, {}, TensorType{t, error ? std::vector<int64_t>{} : m_staged.op(x).type.dims});
    };
    // Scaled scores, the causal mask as a select on iotas (query row ≥ key column).
    OpId scores = bin(OpKind::Multiply, dot(q, k, *bmm1), splat(scale, dt, *scoreDims));
    std::optional<OpId> keep;
    if (mask == "CAUSAL") {
        OpAttrs rowIota, colIota, ge;
        rowIota.dimensions = {rank - 2};
        colIota.dimensions = {rank - 1};
        ge.comparison = ComparisonDirection::GE;
        const OpId r = add(OpKind::Iota, {}, rowIota, TensorType{DType::S32, *scoreDims});
        const OpId c = add(OpKind::Iota, {}, colIota, TensorType{DType::S32, *scoreDims});
        keep = add(OpKind::Compare, {r, c}, ge);
        scores = add(OpKind::Select, {*keep, scores, splat(dt == DType::F16 ? -65000.0 : -1e30, dt, *scoreDims)});
    }
    std::vector<OpId> leaves;
    if (!backward) {
        const OpId m = rows(scores, ReduceKind::Max);
        const OpId e = add(OpKind::Exponential, {bin(OpKind::Subtract, scores, spread(m, dt))});
        const OpId l = rows(e, ReduceKind::Add);
        const OpId p = bin(OpKind::Divide, e, spread(l, dt));
        leaves.push_back(dot(p, v, *outDn));
        if (expected.size() == 2) {  // the softmax statistics: log-sum-exp per row, f32
            const OpId lse = bin(OpKind::Add, convert(m, DType::F32), add(OpKind::Log, {convert(l, DType::F32)}));
            leaves.push_back(lse);
        }
    } else {
        const OpId stats = in[3], dOut = in[4], out = in[5];
        // P from the saved statistics; dS = P ∘ (dP − rowsum(dO ∘ O)); the scale on dQ and dK.
        const OpId p = add(OpKind::Exponential,
                           {bin(OpKind::Subtract, convert(scores, DType::F32), spread(stats, DType::F32))});
        const OpId pt = convert(p, dt);
        const OpId dp = convert(dot(dOut, v, *bmm1), DType::F32);
        OpAttrs sumH;
        for (int64_t a : bmm1->lhsContracting) sumH.dimensions.push_back(a);
        sumH.reduceKind = ReduceKind::Add;
        const OpId delta = add(OpKind::Reduce, {convert(bin(OpKind::Multiply, dOut, out), DType::F32)}, sumH);
        // delta keeps dO's dims but the contracted one; in score order: batch dims, then the free dim.
        OpAttrs toScores;
        const auto& qd = dimsOf(q);
        for (int64_t a = 0; a < static_cast<int64_t>(qd.size()); ++a) {
            if (hasAxis(bmm1->lhsContracting, a)) continue;
            const auto pos = std::find(bmm1->lhsBatch.begin(), bmm1->lhsBatch.end(), a);
            toScores.dimensions.push_back(pos != bmm1->lhsBatch.end() ? pos - bmm1->lhsBatch.begin()
                                                                       : static_cast<int64_t>(bmm1->lhsBatch.size()));
        }
        const OpId deltaS = add(OpKind::Broadcast, {delta}, toScores, TensorType{DType::F32, *scoreDims});
        const OpId ds = convert(bin(OpKind::Multiply, bin(OpKind::Multiply, p, bin(OpKind::Subtract, dp, deltaS)),
                                    splat(scale, DType::F32, *scoreDims)),
                                dt);
        leaves.push_back(dot(ds, k, *dqDn));
        leaves.push_back(dot(ds, q, *dkDn));
        leaves.push_back(dot(pt, dOut, *dvDn));
    }
    if (error) return Result<Value>(failFrom(ins, *error));
    std::vector<Value> values;
    for (size_t i = 0; i < leaves.size(); ++i) {
        auto declared = declaredType(f, ins, declaredShapes[i]);
        if (!declared) return Result<Value>(declared.error());
        OpId leaf = convert(leaves[i], declared->dtype);
        if (error) return Result<Value>(failFrom(ins, *error));
        Value val;
        val.id = leaf;
        values.push_back(val);
    }
    values.push_back(tupleOf({}));  // workspace
    note("hlo.fused_attention",
         "cuDNN fused attention calls written out as their attention core (scores, softmax, weighted sum; the "
         "backward from the saved statistics)",
         m_source);
    return Result<Value>(tupleOf(std::move(values)));
}

Result<int64_t> Importer::tripCount(const Instruction& ins, const Value& init) {
    if (const std::string* cfg = ins.attribute("backend_config")) {
        const std::string text = hlo::unquote(*cfg);
        const size_t k = text.find("known_trip_count");
        if (k != std::string::npos) {
            size_t n = text.find("\"n\"", k);
            if (n != std::string::npos) {
                n = text.find_first_of("0123456789", n + 3);
                int64_t v = 0;
                if (n != std::string::npos) {
                    const auto [ptr, ec] = std::from_chars(text.data() + n, text.data() + text.size(), v);
                    if (ec == std::errc() && v >= 0) return v;
                }
            }
        }
    }
    // condition: ROOT compare(get-tuple-element(p, index=k), constant(N)), direction=LT|LE|GT|GE
    auto cond = computationRef(ins, "condition");
    if (!cond) return cond.error();
    auto body = computationRef(ins, "body");
    if (!body) return body.error();
    const hlo::Computation& c = m_module.computations[static_cast<size_t>(*cond)];
    const hlo::Computation& b = m_module.computations[static_cast<size_t>(*body)];
    auto find = [](const hlo::Computation& comp, const std::string& name) -> const Instruction* {
        for (const Instruction& i : comp.instructions)
            if (i.name == name) return &i;
        return nullptr;
    };
    auto constantValue = [](const Instruction* i) -> std::optional<int64_t> {
        if (!i || i->opcode != "constant") return std::nullopt;
        int64_t v = 0;
        std::string t = i->payload;
        t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
        const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
        if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
        return v;
    };
    auto gteIndex = [&](const Instruction* i) -> std::optional<int64_t> {
        if (!i || i->opcode != "get-tuple-element") return std::nullopt;
        auto k = intAttr(*i, "index", true);
        if (!k) return std::nullopt;
        return *k;
    };
    const Error unknown = fail(ins, "hlo.unsupported_while",
                               "the loop's trip count is not known (no known_trip_count in backend_config, and the "
                               "condition is not `counter < constant` with a constant step); export the module with "
                               "the loop unrolled (e.g. jax.lax.scan(..., unroll=True))");
    const Instruction& root = c.instructions[static_cast<size_t>(c.root)];
    if (root.opcode != "compare" || root.operands.size() != 2) return unknown;
    const std::string* dir = root.attribute("direction");
    if (!dir) return unknown;
    std::optional<int64_t> k = gteIndex(find(c, root.operands[0]));
    std::optional<int64_t> limit = constantValue(find(c, root.operands[1]));
    std::string direction = *dir;
    if (!k) {  // constant OP counter: flip
        k = gteIndex(find(c, root.operands[1]));
        limit = constantValue(find(c, root.operands[0]));
        if (direction == "GT") direction = "LT";
        else if (direction == "GE") direction = "LE";
        else direction = "?";
    }
    if (!k || !limit || (direction != "LT" && direction != "LE")) return unknown;
    if (!init.isTuple || *k < 0 || *k >= static_cast<int64_t>(init.elements.size())) return unknown;
    const Value& counter = init.elements[static_cast<size_t>(*k)];
    if (counter.isTuple) return unknown;
    OpId cid = counter.id;
    const Op& cop = m_staged.op(cid);
    if (cop.kind != OpKind::Constant || cop.attrs.literal.size() != 1) return unknown;
    const double start = cop.attrs.literal[0];
    // body: ROOT tuple(…, add(get-tuple-element(p, index=k), constant(step)), …)
    const Instruction& broot = b.instructions[static_cast<size_t>(b.root)];
    if (broot.opcode != "tuple" || static_cast<int64_t>(broot.operands.size()) <= *k) return unknown;
    const Instruction* step = find(b, broot.operands[static_cast<size_t>(*k)]);
    if (!step || step->opcode != "add" || step->operands.size() != 2) return unknown;
    std::optional<int64_t> stepValue;
    for (int side = 0; side < 2; ++side)
        if (gteIndex(find(b, step->operands[static_cast<size_t>(side)])) == k)
            stepValue = constantValue(find(b, step->operands[static_cast<size_t>(1 - side)]));
    if (!stepValue || *stepValue <= 0) return unknown;
    const double span = static_cast<double>(*limit) - start + (direction == "LE" ? 1.0 : 0.0);
    if (span <= 0) return int64_t{0};
    const double trips = std::ceil(span / static_cast<double>(*stepValue));
    if (trips > static_cast<double>(m_options.maxOps)) return fail(ins, "hlo.too_large", "loop runs " + std::to_string(trips) + " times");
    return static_cast<int64_t>(trips);
}

Result<Value> Importer::lowerWhile(Frame& f, const Instruction& ins) {
    auto body = computationRef(ins, "body");
    if (!body) return body.error();
    auto init = operand(f, ins, 0);
    if (!init) return init.error();
    auto trips = tripCount(ins, *init);
    if (!trips) return trips.error();
    note("hlo.while_unrolled", "while loop '" + ins.name + "' unrolled " + std::to_string(*trips) + " times",
         hlo::locationText(m_source, ins.where));
    Value state = std::move(*init);
    const std::string scope = scopeOf(f, ins);
    for (int64_t i = 0; i < *trips; ++i) {
        std::vector<Value> args{state};
        const std::string iter = std::to_string(i);
        auto next = lowerComputation(*body, &args, f.prefix + ins.name + "." + iter + "/",
                                     scope.empty() ? ins.name + "." + iter : scope + "." + iter,
                                     f.scopeSuffix + "." + iter, f.depth + 1);
        if (!next) return next.error();
        state = std::move(*next);
    }
    return state;
}

Result<Value> Importer::lower(Frame& f, const Instruction& ins) {
    const std::string& opc = ins.opcode;
    auto single = [](Result<OpId> id) -> Result<Value> {
        if (!id) return id.error();
        Value v;
        v.id = *id;
        return v;
    };
    if (const std::string* s = ins.attribute("sharding"))
        m_shardings.push_back({f.prefix + ins.name, *s});

    if (opc == "parameter") {
        int64_t n = 0;
        const auto [ptr, ec] = std::from_chars(ins.payload.data(), ins.payload.data() + ins.payload.size(), n);
        if (ec != std::errc() || n < 0) return fail(ins, "hlo.bad_attribute", "parameter(" + ins.payload + ") needs a number");
        if (f.args) {
            if (n >= static_cast<int64_t>(f.args->size()))
                return fail(ins, "hlo.bad_attribute", "parameter(" + std::to_string(n) + ") but the computation is called with " +
                                                          std::to_string(f.args->size()) + " operand(s)");
            return (*f.args)[static_cast<size_t>(n)];
        }
        return perLeaf(f, ins, ins.shape, "", [&](TensorType t, const std::string& suffix) {
            Op p;
            p.kind = OpKind::Parameter;
            p.type = std::move(t);
            return emit(f, ins, std::move(p), suffix);
        });
    }
    if (opc == "constant") {
        if (ins.shape.isTuple) return fail(ins, "hlo.unsupported_type", "tuple constants are not supported");
        return lowerConstant(f, ins);
    }
    if (opc == "tuple") {
        std::vector<Value> elems;
        for (size_t i = 0; i < ins.operands.size(); ++i) {
            auto v = operand(f, ins, i);
            if (!v) return v.error();
            elems.push_back(std::move(*v));
        }
        return tupleOf(std::move(elems));
    }
    if (opc == "get-tuple-element") {
        auto t = operandRef(f, ins, 0);
        if (!t) return t.error();
        auto k = intAttr(ins, "index", true);
        if (!k) return k.error();
        const Value& tuple = **t;
        if (!tuple.isTuple || *k < 0 || *k >= static_cast<int64_t>(tuple.elements.size()))
            return fail(ins, "hlo.bad_attribute", "index=" + std::to_string(*k) + " is outside the operand's tuple");
        return tuple.elements[static_cast<size_t>(*k)];
    }
    if (opc == "copy" || opc == "domain" || opc == "optimization-barrier" || opc == "add-dependency") {
        return operand(f, ins, 0);
    }
    if (opc == "call") return lowerCall(f, ins, "to_apply");
    if (opc == "fusion") return lowerCall(f, ins, "calls");
    if (opc == "while") return lowerWhile(f, ins);
    if (opc == "custom-call") return lowerCustomCall(f, ins);
    if (opc == "batch-norm-training" || opc == "batch-norm-inference" || opc == "batch-norm-grad")
        return lowerBatchNorm(f, ins);
    if (opc == "conditional") return lowerConditional(f, ins);
    if (opc == "sort") {
        auto d = listAttr(ins, "dimensions", true);
        if (!d) return d.error();
        if (d->size() != 1) return fail(ins, "hlo.bad_attribute", "sort needs one dimension in dimensions={…}");
        OpAttrs a;
        a.dimensions = *d;
        return opaque(f, ins, "hlo.sort", a);
    }

    if (auto kind = elementwiseKind(opc)) {
        Op op;
        op.kind = *kind;
        for (size_t i = 0; i < ins.operands.size(); ++i) {
            auto x = leafOperand(f, ins, i);
            if (!x) return x.error();
            op.operands.push_back(*x);
        }
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        // Integer scalar arithmetic on constants is folded: an unrolled loop's counter stays a
        // constant, so the slices it indexes (a scan over stacked layer weights) are static.
        if (declared->rank() == 0 && !isFloating(declared->dtype) && op.operands.size() == 2 &&
            (op.kind == OpKind::Add || op.kind == OpKind::Subtract || op.kind == OpKind::Multiply)) {
            const Op& a = m_staged.op(op.operands[0]);
            const Op& b = m_staged.op(op.operands[1]);
            if (a.kind == OpKind::Constant && b.kind == OpKind::Constant && a.attrs.literal.size() == 1 && b.attrs.literal.size() == 1) {
                const double x = a.attrs.literal[0], y = b.attrs.literal[0];
                Op c;
                c.kind = OpKind::Constant;
                c.attrs.literal = {op.kind == OpKind::Add ? x + y : op.kind == OpKind::Subtract ? x - y : x * y};
                return single(emitChecked(f, ins, std::move(c), *declared));
            }
        }
        return single(emitChecked(f, ins, std::move(op), *declared));
    }
    if (opc == "dynamic-slice") {
        // With constant start indices (an unrolled scan's counter), a static slice; starts are
        // clamped to [0, dim − size] as HLO does.
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        if (ins.operands.size() >= 2) {
            auto x = leafOperand(f, ins, 0);
            if (!x) return x.error();
            const std::vector<int64_t> dims = m_staged.op(*x).type.dims;
            auto starts = constantStarts(f, ins, 1, dims, declared->dims);
            if (!starts) return starts.error();
            if (*starts) {
                SliceBounds sb;
                for (size_t k = 0; k < dims.size(); ++k) {
                    sb.start.push_back((**starts)[k]);
                    sb.limit.push_back((**starts)[k] + declared->dims[k]);
                    sb.stride.push_back(1);
                }
                Op sl;
                sl.kind = OpKind::Slice;
                sl.operands = {*x};
                sl.attrs.slice = sb;
                return single(emitChecked(f, ins, std::move(sl), *declared));
            }
        }
        return opaque(f, ins, "hlo.dynamic-slice");
    }
    if (opc == "dynamic-update-slice") {
        // With constant start indices (an unrolled scan stacking per-layer results), the update
        // placed by slices of the operand around it and a concatenate per dim it does not cover.
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        if (ins.operands.size() >= 3) {
            auto x = leafOperand(f, ins, 0);
            if (!x) return x.error();
            auto u = leafOperand(f, ins, 1);
            if (!u) return u.error();
            const std::vector<int64_t> dims = m_staged.op(*x).type.dims;
            const std::vector<int64_t> window = m_staged.op(*u).type.dims;  // a copy: reading operands may add ops
            auto starts = constantStarts(f, ins, 2, dims, window);
            if (!starts) return starts.error();
            if (*starts) {
                auto placed = placeUpdate(f, ins, *x, *u, **starts, 0);
                if (!placed) return placed.error();
                if (m_staged.op(*placed).type != *declared)
                    return fail(ins, "hlo.type_error", "dynamic-update-slice result is " + m_staged.op(*placed).type.toString() +
                                                           ", declared " + declared->toString());
                Value v;
                v.id = *placed;
                return v;
            }
        }
        return opaque(f, ins, "hlo.dynamic-update-slice");
    }
    if (opc == "compare") {
        Op op;
        op.kind = OpKind::Compare;
        for (size_t i = 0; i < 2; ++i) {
            auto x = leafOperand(f, ins, i);
            if (!x) return x.error();
            op.operands.push_back(*x);
        }
        const std::string* dir = ins.attribute("direction");
        if (!dir) return fail(ins, "hlo.bad_attribute", "compare needs direction=");
        auto c = parseComparison(*dir);
        if (!c) return fail(ins, "hlo.bad_attribute", "direction=" + *dir + " is not EQ, NE, LT, LE, GT or GE");
        op.attrs.comparison = *c;
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        return single(emitChecked(f, ins, std::move(op), *declared));
    }
    if (opc == "convert" || opc == "reshape" || opc == "broadcast" || opc == "transpose" || opc == "bitcast" ||
        opc == "slice" || opc == "concatenate" || opc == "iota" || opc == "gather" || opc == "scatter" ||
        opc == "clamp" || opc == "log-plus-one" || opc == "exponential-minus-one" || opc == "not") {
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        Op op;
        if (opc == "iota") {
            op.kind = OpKind::Iota;
            auto d = intAttr(ins, "iota_dimension", true);
            if (!d) return d.error();
            op.attrs.dimensions = {*d};
            return single(emitChecked(f, ins, std::move(op), *declared));
        }
        if (opc == "scatter") {
            auto comp = computationRef(ins, "to_apply");
            if (!comp) return comp.error();
            const auto kind = combiner(*comp);
            if (!kind || ins.operands.size() != 3) return opaque(f, ins, "hlo.scatter");
            op.attrs.reduceKind = *kind;
        }
        for (size_t i = 0; i < ins.operands.size(); ++i) {
            auto x = leafOperand(f, ins, i);
            if (!x) return x.error();
            op.operands.push_back(*x);
        }
        if (opc == "convert") {
            op.kind = OpKind::Convert;
        } else if (opc == "reshape" || opc == "bitcast") {
            if (op.operands.size() == 1 && m_staged.op(op.operands[0]).type == *declared) {
                Value v;
                v.id = op.operands[0];
                return v;
            }
            if (opc == "bitcast" && (op.operands.size() != 1 || m_staged.op(op.operands[0]).type.dtype != declared->dtype))
                return opaque(f, ins, "hlo.bitcast");
            op.kind = OpKind::Reshape;
        } else if (opc == "broadcast") {
            op.kind = OpKind::Broadcast;
            auto d = listAttr(ins, "dimensions", false);
            if (!d) return d.error();
            op.attrs.dimensions = *d;
            // StableHLO's broadcast_in_dim may stretch a size-1 dim: drop such dims with a reshape
            // first, leaving the broadcast HLO allows.
            if (op.operands.size() == 1) {
                const TensorType& x = m_staged.op(op.operands[0]).type;
                TensorType kept{x.dtype, {}};
                std::vector<int64_t> keptDims;
                for (size_t i = 0; i < x.dims.size() && i < d->size(); ++i) {
                    const int64_t to = (*d)[i];
                    const bool stretched = x.dims[i] == 1 && to >= 0 && to < declared->rank() &&
                                           declared->dims[static_cast<size_t>(to)] != 1;
                    if (stretched) continue;
                    kept.dims.push_back(x.dims[i]);
                    keptDims.push_back(to);
                }
                if (kept.dims.size() != x.dims.size() && x.dims.size() == d->size()) {
                    Op squeeze;
                    squeeze.kind = OpKind::Reshape;
                    squeeze.operands = {op.operands[0]};
                    squeeze.type = kept;
                    auto s = emit(f, ins, std::move(squeeze), ".squeeze");
                    if (!s) return s.error();
                    op.operands = {*s};
                    op.attrs.dimensions = keptDims;
                }
            }
        } else if (opc == "transpose") {
            op.kind = OpKind::Transpose;
            auto d = listAttr(ins, "dimensions", true);
            if (!d) return d.error();
            op.attrs.dimensions = *d;
        } else if (opc == "concatenate") {
            op.kind = OpKind::Concatenate;
            auto d = listAttr(ins, "dimensions", true);
            if (!d) return d.error();
            op.attrs.dimensions = *d;
        } else if (opc == "slice") {
            op.kind = OpKind::Slice;
            const std::string* s = ins.attribute("slice");
            if (!s) return fail(ins, "hlo.bad_attribute", "slice needs slice={[start:limit:stride], …}");
            auto ranges = hlo::parseSliceRanges(*s);
            if (!ranges) return fail(ins, "hlo.bad_attribute", ranges.error().message);
            for (const auto& r : *ranges) {
                op.attrs.slice.start.push_back(r[0]);
                op.attrs.slice.limit.push_back(r[1]);
                op.attrs.slice.stride.push_back(r[2]);
            }
        } else if (opc == "gather") {
            op.kind = OpKind::Gather;
            GatherDimensionNumbers& g = op.attrs.gather;
            auto od = listAttr(ins, "offset_dims", true);
            auto cd = listAttr(ins, "collapsed_slice_dims", true);
            auto sm = listAttr(ins, "start_index_map", true);
            auto ss = listAttr(ins, "slice_sizes", true);
            for (auto* r : {&od, &cd, &sm, &ss})
                if (!*r) return r->error();
            auto iv = intAttr(ins, "index_vector_dim", true);
            if (!iv) return iv.error();
            auto ob = listAttr(ins, "operand_batching_dims", false);
            auto sb = listAttr(ins, "start_indices_batching_dims", false);
            for (auto* r : {&ob, &sb})
                if (!*r) return r->error();
            g = GatherDimensionNumbers{*od, *cd, *sm, *iv, *ss, *ob, *sb};
        } else if (opc == "scatter") {
            op.kind = OpKind::Scatter;
            ScatterDimensionNumbers& s = op.attrs.scatter;
            auto uw = listAttr(ins, "update_window_dims", true);
            auto iw = listAttr(ins, "inserted_window_dims", true);
            auto sd = listAttr(ins, "scatter_dims_to_operand_dims", true);
            for (auto* r : {&uw, &iw, &sd})
                if (!*r) return r->error();
            auto iv = intAttr(ins, "index_vector_dim", true);
            if (!iv) return iv.error();
            auto ib = listAttr(ins, "input_batching_dims", false);
            auto sb = listAttr(ins, "scatter_indices_batching_dims", false);
            for (auto* r : {&ib, &sb})
                if (!*r) return r->error();
            s = ScatterDimensionNumbers{*uw, *iw, *sd, *iv, *ib, *sb};
        } else if (opc == "clamp") {
            if (op.operands.size() != 3) return fail(ins, "hlo.bad_attribute", "clamp takes min, operand, max");
            auto lo = broadcastScalar(f, ins, op.operands[0], m_staged.op(op.operands[1]).type.dims, ".min");
            if (!lo) return lo.error();
            auto hi = broadcastScalar(f, ins, op.operands[2], m_staged.op(op.operands[1]).type.dims, ".max");
            if (!hi) return hi.error();
            Op upper;
            upper.kind = OpKind::Minimum;
            upper.operands = {op.operands[1], *hi};
            auto u = emit(f, ins, std::move(upper), ".upper");
            if (!u) return u.error();
            Op lower;
            lower.kind = OpKind::Maximum;
            lower.operands = {*u, *lo};
            return single(emitChecked(f, ins, std::move(lower), *declared));
        } else {  // log-plus-one, exponential-minus-one, not
            if (op.operands.size() != 1) return fail(ins, "hlo.bad_attribute", opc + " takes one operand");
            const OpId x = op.operands[0];
            const TensorType xt = m_staged.op(x).type;
            if (opc == "not" && xt.dtype != DType::Pred) return opaque(f, ins, "hlo.not");
            Op one;
            one.kind = OpKind::Constant;
            one.attrs.literal = {opc == "not" ? 0.0 : 1.0};
            one.type = TensorType{xt.dtype, {}};
            auto c = emit(f, ins, std::move(one), ".one");
            if (!c) return c.error();
            auto cb = broadcastScalar(f, ins, *c, xt.dims, ".ones");
            if (!cb) return cb.error();
            if (opc == "not") {
                Op cmp;
                cmp.kind = OpKind::Compare;
                cmp.attrs.comparison = ComparisonDirection::EQ;
                cmp.operands = {x, *cb};
                return single(emitChecked(f, ins, std::move(cmp), *declared));
            }
            if (opc == "log-plus-one") {
                Op add;
                add.kind = OpKind::Add;
                add.operands = {x, *cb};
                auto a = emit(f, ins, std::move(add), ".plus_one");
                if (!a) return a.error();
                Op log;
                log.kind = OpKind::Log;
                log.operands = {*a};
                return single(emitChecked(f, ins, std::move(log), *declared));
            }
            Op e;
            e.kind = OpKind::Exponential;
            e.operands = {x};
            auto ex = emit(f, ins, std::move(e), ".exp");
            if (!ex) return ex.error();
            Op sub;
            sub.kind = OpKind::Subtract;
            sub.operands = {*ex, *cb};
            return single(emitChecked(f, ins, std::move(sub), *declared));
        }
        return single(emitChecked(f, ins, std::move(op), *declared));
    }
    if (opc == "reduce") return lowerReduce(f, ins);
    if (opc == "dot") return lowerDot(f, ins);
    if (opc == "pad") return lowerPad(f, ins);
    if (opc == "map") {
        auto comp = computationRef(ins, "to_apply");
        if (!comp) return comp.error();
        const hlo::Computation& c = m_module.computations[static_cast<size_t>(*comp)];
        const bool elementwise = std::all_of(c.instructions.begin(), c.instructions.end(), [](const Instruction& i) {
            return i.opcode == "parameter" || i.opcode == "constant" || i.opcode == "convert" || i.opcode == "compare" ||
                   elementwiseKind(i.opcode).has_value();
        });
        auto declared = declaredType(f, ins, ins.shape);
        if (!declared) return declared.error();
        if (!elementwise) return opaque(f, ins, "hlo.map");
        std::vector<Value> args;
        for (size_t i = 0; i < ins.operands.size(); ++i) {
            auto v = operand(f, ins, i);
            if (!v) return v.error();
            args.push_back(std::move(*v));
        }
        return lowerComputation(*comp, &args, f.prefix + ins.name + "/", scopeOf(f, ins), f.scopeSuffix, f.depth + 1,
                                &declared->dims);
    }
    if (opc == "all-reduce") return lowerAllReduce(f, ins);
    if (isKnownOpaqueOpcode(opc)) return opaque(f, ins, "hlo." + opc);
    bool scheduled = false;
    for (const hlo::Attribute& a : m_module.attributes) scheduled |= a.key == "is_scheduled" && a.value == "true";
    return fail(ins, "hlo.unknown_opcode",
                "'" + opc + "' is not an HLO opcode" +
                    (scheduled ? std::string(" (this is XLA's optimised, scheduled module: import the module before "
                                             "optimisation, e.g. jax.jit(f).lower(...).as_text() or the "
                                             "*before_optimizations* dump)")
                               : std::string()));
}

Result<Value> Importer::lowerComputation(int comp, const std::vector<Value>* args, const std::string& prefix,
                                         const std::string& scope, const std::string& scopeSuffix, int depth,
                                         const std::vector<int64_t>* mapDims) {
    const hlo::Computation& c = m_module.computations[static_cast<size_t>(comp)];
    if (depth > 64)
        return makeError("hlo.recursion", "computations nest more than 64 deep", hlo::locationText(m_source, c.where));
    if (m_active.count(comp))
        return makeError("hlo.recursion", "computation '" + c.name + "' calls itself", hlo::locationText(m_source, c.where));
    if (++m_inlined > m_options.maxOps)
        return makeError("hlo.too_large", "more than " + std::to_string(m_options.maxOps) + " computation calls after inlining",
                         hlo::locationText(m_source, c.where));
    m_active.insert(comp);
    Frame f;
    f.comp = &c;
    f.args = args;
    f.prefix = prefix;
    f.scope = scope;
    f.mapDims = mapDims;
    f.scopeSuffix = scopeSuffix;
    f.depth = depth;
    const size_t n = c.instructions.size();
    f.values.resize(n);
    for (size_t i = 0; i < n; ++i) f.index.emplace(c.instructions[i].name, static_cast<int>(i));
    // Topological order by operand names (Kahn), so that instructions may appear in any order.
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (size_t i = 0; i < n; ++i) {
        const Instruction& ins = c.instructions[i];
        for (const std::string& o : ins.operands) {
            auto it = f.index.find(o);
            if (it == f.index.end())
                return makeError("hlo.unknown_operand",
                                 "instruction '" + ins.name + "': operand '" + o + "' is not defined in computation '" + c.name + "'",
                                 hlo::locationText(m_source, ins.where));
            ++pending[i];
            users[static_cast<size_t>(it->second)].push_back(static_cast<int>(i));
        }
    }
    // Smallest ready index first: a module already in order is lowered in file order.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
        if (pending[i] == 0) ready.push(static_cast<int>(i));
    size_t done = 0;
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        ++done;
        const Instruction& ins = c.instructions[static_cast<size_t>(i)];
        const bool lazy = ins.opcode == "constant" && i != c.root;
        if (!lazy && !f.values[static_cast<size_t>(i)]) {
            auto v = lower(f, ins);
            if (!v) {
                m_active.erase(comp);
                return v.error();
            }
            f.values[static_cast<size_t>(i)] = std::move(*v);
        }
        for (int u : users[static_cast<size_t>(i)])
            if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
    }
    if (done != n) {
        m_active.erase(comp);
        return makeError("hlo.cycle", "the instructions of computation '" + c.name + "' depend on each other in a cycle",
                         hlo::locationText(m_source, c.where));
    }
    auto root = valueOf(f, c.root);
    m_active.erase(comp);
    return root;
}

Result<ImportedModel> Importer::run() {
    auto root = lowerComputation(m_module.entry, nullptr, "", "", "", 0);
    if (!root) return root.error();
    std::vector<OpId> outs;
    root->leaves(outs);
    for (OpId o : outs) CFP_TRY(m_staged.addOutput(o));
    for (const auto& [opcode, count] : m_opaqueCounts)
        m_notes.push_back({"hlo.opaque_op",
                           std::to_string(count) + " '" + opcode + "' instruction(s) imported as custom-call 'hlo." + opcode +
                               "' (no IR op kind; the analysis lists those without a sharding rule)",
                           m_source});
    if (m_manualBoundaries > 0)
        m_notes.push_back({"hlo.manual_region",
                           std::to_string(m_manualBoundaries) + " SPMDFullToShardShape/SPMDShardToFullShape boundary op(s) of manual "
                           "(shard_map) regions: the ops between them run on each device's tiles and are planned unsplit; the "
                           "boundaries keep their shardings",
                           m_source});
    ImportedModel out;
    out.format = "hlo";
    out.notes = std::move(m_notes);
    m_hints.resize(static_cast<size_t>(m_staged.size()), -1);
    auto rows = resolveRowStacks(m_staged, m_hints);
    if (!rows) return rows.error();
    if (*rows > 0)
        out.notes.push_back({"hlo.row_stacks",
                             std::to_string(*rows) + " one-row read(s) of stacks an unrolled loop builds row by row (lax.scan's "
                             "stacked outputs) resolved to the ops that wrote the rows, so that every iteration looks alike",
                             m_source});
    // Sharding annotations name HLO instructions; keep those that became a graph op of that name
    // (after the stacks above dropped the ops they no longer need).
    for (ShardingAnnotation& s : m_shardings) {
        if (m_staged.find(s.op) == kNoOp && m_staged.find(s.op + ".0") != kNoOp) s.op += ".0";
        if (m_staged.find(s.op) != kNoOp) out.shardings.push_back(std::move(s));
    }
    CFP_TRY(finishImport(std::move(m_staged), m_hints, m_options, out));
    return out;
}

}  // namespace

Result<ImportedModel> importHloModule(const hlo::Module& module, const std::string& sourceName, const ImportOptions& options) {
    return Importer(module, sourceName, options).run();
}

Result<ImportedModel> importHloText(std::string_view text, const std::string& sourceName, const ImportOptions& options) {
    hlo::ParseLimits limits;
    limits.maxInputBytes = options.maxFileBytes;
    limits.maxInstructions = options.maxOps;
    auto module = hlo::parseModule(text, sourceName, limits);
    if (!module) return module.error();
    return Importer(*module, sourceName, options).run();
}

Result<ImportedModel> importHloFile(const std::string& path, const ImportOptions& options) {
    auto text = readImportFile(path, options.maxFileBytes, "hlo");
    if (!text) return text.error();
    return importHloText(*text, path, options);
}

}  // namespace cfp
