#include "export/export.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

namespace cfp {

namespace {

constexpr std::string_view kFormatNames[] = {"jax", "dtensor", "megatron", "hlo-sharding", "trace"};

// ---------------------------------------------------------------------------------------------
// Text helpers (locale-independent: a Qt application may have called setlocale()).

std::string fixedNumber(double v, int precision) {
    if (!std::isfinite(v)) return "n/a";
    char buf[512];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, precision);
    if (r.ec != std::errc{}) return "n/a";
    return std::string(buf, r.ptr);
}

std::string gib(int64_t bytes) {
    return fixedNumber(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8SequenceLength(std::string_view s, size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (b0 < 0x80) return 1;
    if ((b0 & 0xE0) == 0xC0) { n = 2; cp = b0 & 0x1F; }
    else if ((b0 & 0xF0) == 0xE0) { n = 3; cp = b0 & 0x0F; }
    else if ((b0 & 0xF8) == 0xF0) { n = 4; cp = b0 & 0x07; }
    else return 0;
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values above U+10FFFF are not valid UTF-8.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

// Body of a Python string literal (no quotes): backslash escapes for quotes, backslashes and
// control characters; invalid UTF-8 becomes U+FFFD so the module always decodes.
std::string pyEscape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const size_t n = utf8SequenceLength(s, i);
            if (n == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '"': out += "\\\""; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    static constexpr char hex[] = "0123456789abcdef";
                    out += "\\x";
                    out += hex[c >> 4];
                    out += hex[c & 0xF];
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out;
}

std::string pyStr(std::string_view s) { return "\"" + pyEscape(s) + "\""; }

// Python tuple literal of already-rendered items: "()", "(a,)", "(a, b)".
std::string pyTuple(const std::vector<std::string>& items) {
    if (items.empty()) return "()";
    std::string out = "(";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += items[i];
    }
    if (items.size() == 1) out += ",";
    return out + ")";
}

std::string joinAxes(const std::vector<std::string>& axes) {
    if (axes.size() == 1) return axes.front();
    std::string out = "{";
    for (size_t i = 0; i < axes.size(); ++i) {
        if (i) out += ",";
        out += axes[i];
    }
    return out + "}";
}

// ---------------------------------------------------------------------------------------------
// Plan lookups.

struct ParamEntry {
    const Op* op = nullptr;
    std::string path;
    const TensorSharding* sharding = nullptr;
};

struct Context {
    const Graph& graph;
    const Plan& plan;
    std::vector<const TensorPlan*> byOp;       // TensorPlan per op id (nullptr: none)
    std::vector<std::vector<OpId>> users;
    std::vector<ParamEntry> params;            // trainable parameters, op order
};

Status indexTensors(Context& ctx) {
    ctx.byOp.assign(static_cast<size_t>(ctx.graph.size()), nullptr);
    for (size_t i = 0; i < ctx.plan.tensors.size(); ++i) {
        const TensorPlan& t = ctx.plan.tensors[i];
        const std::string where = "/tensors/" + std::to_string(i);
        if (t.op < 0 || t.op >= ctx.graph.size())
            return makeError("export.bad_plan",
                             "plan entry names op " + std::to_string(t.op) + " but the graph has " +
                                 std::to_string(ctx.graph.size()) + " ops",
                             where);
        if (ctx.byOp[static_cast<size_t>(t.op)])
            return makeError("export.bad_plan",
                             "plan has two entries for op " + ctx.graph.op(t.op).name, where);
        ctx.byOp[static_cast<size_t>(t.op)] = &t;
    }
    return {};
}

Status collectParams(Context& ctx) {
    std::set<std::string> seen;
    for (const Op& op : ctx.graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Trainable) continue;
        const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
        if (!t)
            return makeError("export.bad_plan", "plan has no sharding for parameter " + op.name, op.name);
        if (t->result.isPartial())
            return makeError("export.bad_plan",
                             "parameter " + op.name + " is stored as a pending partial sum (" +
                                 t->result.toString() + ")",
                             op.name);
        if (Status s = validateSharding(t->result, ctx.plan.mesh, op.type); !s)
            return makeError("export.bad_plan",
                             "sharding " + t->result.toString() + " of parameter " + op.name +
                                 " does not fit mesh " + ctx.plan.mesh.toString() + ": " + s.error().message,
                             op.name);
        ParamEntry e{&op, parameterPath(op), &t->result};
        if (!seen.insert(e.path).second)
            return makeError("export.bad_plan", "two parameters share the path " + e.path, op.name);
        ctx.params.push_back(std::move(e));
    }
    return {};
}

Result<Context> makeContext(const Graph& graph, const Plan& plan) {
    Context ctx{graph, plan, {}, {}, {}};
    CFP_TRY(indexTensors(ctx));
    CFP_TRY(collectParams(ctx));
    ctx.users = graph.users();
    return ctx;
}

// A 2-D parameter used as the right operand of a forward dot that contracts its first dim:
// y[..., out] = x[..., in] · W[in, out]. PyTorch's nn.Linear stores such a weight as [out, in].
bool isLinearWeight(const Context& ctx, const Op& param) {
    if (param.type.dims.size() != 2) return false;
    for (OpId u : ctx.users[static_cast<size_t>(param.id)]) {
        const Op& d = ctx.graph.op(u);
        if (d.kind != OpKind::Dot || d.phase != Phase::Forward || d.operands.size() != 2) continue;
        if (d.operands[1] != param.id || d.operands[0] == param.id) continue;
        return d.attrs.dot.rhsBatch.empty() && d.attrs.dot.rhsContracting == std::vector<int64_t>{0};
    }
    return false;
}

// The axes of `axes` whose mesh size is above 1 (an axis of size 1 splits nothing).
std::vector<std::string> effectiveAxes(const std::vector<std::string>& axes, const Mesh& mesh) {
    std::vector<std::string> out;
    for (const auto& a : axes)
        if (mesh.axisSize(a).value_or(1) > 1) out.push_back(a);
    return out;
}

std::vector<std::vector<std::string>> effectiveDims(const TensorSharding& s, const Mesh& mesh) {
    std::vector<std::vector<std::string>> out;
    for (const auto& d : s.dims()) out.push_back(effectiveAxes(d, mesh));
    return out;
}

std::string headerText(const Plan& plan, std::string_view title) {
    std::string h;
    h += title;
    h += "\n\n";
    h += "Model:     " + (plan.model.empty() ? std::string("(unnamed)") : plan.model);
    if (!plan.modelSource.empty()) h += " (" + plan.modelSource + ")";
    if (plan.build) h += ", batch " + std::to_string(plan.build->batch) + ", sequence " + std::to_string(plan.build->seq);
    h += "\n";
    std::string hw = plan.hardwareName.empty() ? plan.hardware : plan.hardwareName;
    if (!plan.hardwareName.empty() && !plan.hardware.empty() && plan.hardware != plan.hardwareName)
        hw += " (" + plan.hardware + ")";
    if (hw.empty()) hw = "(unspecified)";
    h += "Hardware:  " + hw + ", " + std::to_string(plan.nodes) + " node(s) x " +
         std::to_string(plan.gpusPerNode) + " GPUs\n";
    h += "Mesh:      " + plan.mesh.toString() + ", " + std::to_string(plan.mesh.deviceCount()) + " devices\n";
    h += "Predicted step time: " + fixedNumber(plan.predictedStepSeconds * 1e3, 3) +
         " ms (search objective), " + fixedNumber(plan.evaluatorStepSeconds * 1e3, 3) + " ms (evaluator)\n";
    h += "Memory per device: " + gib(plan.memory.total());
    if (plan.memoryLimitBytes > 0) h += " of " + gib(plan.memoryLimitBytes);
    h += "\n";
    return h;
}

// pyEscape turns newlines into "\n"; docstrings keep real line breaks instead.
std::string pyDocstringLines(const std::string& text) {
    std::string out = "\"\"\"";
    size_t start = 0;
    while (start <= text.size()) {
        const size_t nl = text.find('\n', start);
        const std::string_view line =
            std::string_view(text).substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        out += pyEscape(line);
        if (nl == std::string::npos) break;
        out += "\n";
        start = nl + 1;
    }
    return out + "\"\"\"\n";
}

// "{dp=2, tp=4}": the mesh without link classes.
std::string plainMeshText(const Mesh& mesh) {
    std::string out = "{";
    for (size_t i = 0; i < mesh.axes().size(); ++i)
        out += (i ? ", " : "") + mesh.axes()[i].name + "=" + std::to_string(mesh.axes()[i].size);
    return out + "}";
}

std::string meshShapeTuple(const Mesh& mesh) {
    std::vector<std::string> items;
    for (const auto& a : mesh.axes()) items.push_back(std::to_string(a.size));
    return pyTuple(items);
}

std::string meshNamesTuple(const Mesh& mesh) {
    std::vector<std::string> items;
    for (const auto& a : mesh.axes()) items.push_back(pyStr(a.name));
    return pyTuple(items);
}

// ---------------------------------------------------------------------------------------------
// jax

std::string partitionSpec(const TensorSharding& s) {
    bool any = false;
    for (const auto& d : s.dims()) any = any || !d.empty();
    if (!any) return "P()";
    std::string out = "P(";
    for (size_t i = 0; i < s.dims().size(); ++i) {
        if (i) out += ", ";
        const auto& axes = s.dims()[i];
        if (axes.empty()) {
            out += "None";
        } else if (axes.size() == 1) {
            out += pyStr(axes.front());
        } else {
            std::vector<std::string> items;
            for (const auto& a : axes) items.push_back(pyStr(a));
            out += pyTuple(items);
        }
    }
    return out + ")";
}

std::string exportJax(const Context& ctx) {
    const Plan& plan = ctx.plan;
    std::string doc = headerText(plan, "CFP Explorer plan: JAX shardings of every trainable parameter.");
    doc += "\n"
           "PARTITION_SPECS maps each parameter's dotted module path ('layers.0.attn.qkv.weight':\n"
           "the op's scope, then its leaf name) to a PartitionSpec over the mesh axes. Dims keep the\n"
           "graph's order: a linear weight is [in, out], like a Flax Dense kernel. A dim split over\n"
           "several axes lists them major to minor. Device order: mesh_utils.create_device_mesh over\n"
           "jax.devices(); the plan numbers devices row-major over the mesh axes (first axis\n"
           "outermost), which is jax.devices() order on GPUs.\n"
           "\n"
           "Generated by CFP Explorer (cfp export --format jax); do not edit by hand.";
    std::string out = pyDocstringLines(doc);
    out += "\n";
    out += "import jax\n";
    out += "from jax.experimental import mesh_utils\n";
    out += "from jax.sharding import NamedSharding, PartitionSpec as P\n";
    out += "\n";
    out += "MESH_SHAPE = " + meshShapeTuple(plan.mesh) + "\n";
    out += "MESH_AXIS_NAMES = " + meshNamesTuple(plan.mesh) + "\n";
    out += "\n";
    out += "mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh(" + meshShapeTuple(plan.mesh) + "), " +
           meshNamesTuple(plan.mesh) + ")\n";
    out += "\n";
    out += "PARTITION_SPECS = {\n";
    for (const auto& p : ctx.params) out += "    " + pyStr(p.path) + ": " + partitionSpec(*p.sharding) + ",\n";
    out += "}\n";
    out += "\n";
    out += "# Global (unsharded) shape of every parameter, for checking against the model's pytree.\n";
    out += "PARAM_SHAPES = {\n";
    for (const auto& p : ctx.params) {
        std::vector<std::string> dims;
        for (int64_t d : p.op->type.dims) dims.push_back(std::to_string(d));
        out += "    " + pyStr(p.path) + ": " + pyTuple(dims) + ",\n";
    }
    out += "}\n";
    out += "\n";
    out += "\n";
    out += "def named_shardings(mesh):\n";
    out += "    \"\"\"NamedSharding of every parameter path on `mesh` (a Mesh with MESH_AXIS_NAMES).\"\"\"\n";
    out += "    return {path: NamedSharding(mesh, spec) for path, spec in PARTITION_SPECS.items()}\n";
    out += "\n";
    out += "\n";
    out += "NAMED_SHARDINGS = named_shardings(mesh)\n";
    return out;
}

// ---------------------------------------------------------------------------------------------
// dtensor

enum class TpStyle { Colwise, Rowwise };

struct TpEntry {
    std::string module;
    std::string axis;
    TpStyle style = TpStyle::Colwise;
};

// Column parallel: only the graph's out dim (1) split, over exactly one axis; row parallel: only
// the in dim (0). Axes of size 1 are ignored.
std::optional<TpEntry> tensorParallelStyle(const Context& ctx, const ParamEntry& p) {
    if (p.op->scope.empty() || !isLinearWeight(ctx, *p.op)) return std::nullopt;
    const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
    if (dims[0].empty() && dims[1].size() == 1) return TpEntry{p.op->scope, dims[1][0], TpStyle::Colwise};
    if (dims[1].empty() && dims[0].size() == 1) return TpEntry{p.op->scope, dims[0][0], TpStyle::Rowwise};
    return std::nullopt;
}

std::string exportDTensor(const Context& ctx) {
    const Plan& plan = ctx.plan;
    const Mesh& mesh = plan.mesh;

    // Tensor-parallel entries, grouped by mesh axis; the primary axis has the most entries (ties:
    // the earlier mesh axis).
    std::map<std::string, std::vector<TpEntry>> byAxis;
    std::set<std::string> modules;
    for (const auto& p : ctx.params) {
        auto e = tensorParallelStyle(ctx, p);
        if (!e || !modules.insert(e->module).second) continue;
        byAxis[e->axis].push_back(*e);
    }
    std::string primary;
    size_t best = 0;
    for (const auto& a : mesh.axes()) {
        auto it = byAxis.find(a.name);
        if (it != byAxis.end() && it->second.size() > best) {
            best = it->second.size();
            primary = a.name;
        }
    }

    std::string doc = headerText(plan, "CFP Explorer plan: PyTorch DTensor placements of every trainable parameter.");
    doc += "\n"
           "Paths: PLACEMENTS keys are dotted parameter paths ('layers.0.attn.qkv.weight': the op's\n"
           "scope, then its leaf name); PARALLELIZE_PLAN keys are module paths (the scope,\n"
           "'layers.0.attn.qkv').\n"
           "\n"
           "Layout: the graph stores a linear weight as W[in, out] (y = x @ W); torch.nn.Linear stores\n"
           "weight[out, in] (y = x @ weight.T). For every 2-D parameter used as the right operand of a\n"
           "forward matmul that contracts its first dim (listed in LINEAR_WEIGHTS), PLACEMENTS use the\n"
           "PyTorch layout: Shard(0) is the graph's out dim (column parallel), Shard(1) its in dim\n"
           "(row parallel). Every other parameter keeps the graph's dim order (an embedding table\n"
           "[vocab, hidden] matches nn.Embedding.weight).\n"
           "\n"
           "Placements: one per mesh dim, in MESH_DIM_NAMES order: Shard(d) when that mesh axis splits\n"
           "tensor dim d, else Replicate(). When one tensor dim is split over several mesh dims, DTensor\n"
           "cuts it in mesh-dim order (the earlier mesh dim major); the plan lists its own order, and\n"
           "entries whose order differs from mesh order are marked with a comment (such a layout needs\n"
           "a permutation of the shards, or a DTensor version with strided sharding).\n"
           "\n"
           "Generated by CFP Explorer (cfp export --format dtensor); do not edit by hand.";
    std::string out = pyDocstringLines(doc);
    out += "\n";
    out += "from torch.distributed.device_mesh import init_device_mesh\n";
    out += "\n";
    out += "try:\n";
    out += "    from torch.distributed.tensor import Replicate, Shard\n";
    out += "except ImportError:  # PyTorch < 2.4\n";
    out += "    from torch.distributed._tensor import Replicate, Shard\n";
    out += "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel\n";
    out += "\n";
    out += "MESH_SHAPE = " + meshShapeTuple(mesh) + "\n";
    out += "MESH_DIM_NAMES = " + meshNamesTuple(mesh) + "\n";
    out += "\n";
    out += "\n";
    out += "def make_device_mesh(device_type=\"cuda\"):\n";
    out += "    \"\"\"The plan's device mesh (call after the process group is up, e.g. under torchrun).\"\"\"\n";
    out += "    return init_device_mesh(device_type, " + meshShapeTuple(mesh) + ", mesh_dim_names=" +
           meshNamesTuple(mesh) + ")\n";
    out += "\n";
    out += "\n";
    auto styleText = [](TpStyle s) { return s == TpStyle::Colwise ? "ColwiseParallel()" : "RowwiseParallel()"; };
    out += "# Tensor parallelism: parallelize_module(model, device_mesh[TP_MESH_DIM], PARALLELIZE_PLAN).\n";
    out += "# Linear layers whose weight is split over exactly one mesh axis (column: out features,\n";
    out += "# row: in features) and over nothing else; all other layouts are in PLACEMENTS only.\n";
    out += "TP_MESH_DIM = " + (primary.empty() ? std::string("None") : pyStr(primary)) + "\n";
    out += "PARALLELIZE_PLAN = {\n";
    if (!primary.empty())
        for (const auto& e : byAxis[primary]) out += "    " + pyStr(e.module) + ": " + styleText(e.style) + ",\n";
    out += "}\n";
    out += "\n";
    out += "# Linear layers that are column/row parallel over another mesh axis (apply with device_mesh[axis]).\n";
    out += "OTHER_PARALLELIZE_PLANS = {\n";
    for (const auto& a : mesh.axes()) {
        auto it = byAxis.find(a.name);
        if (a.name == primary || it == byAxis.end()) continue;
        out += "    " + pyStr(a.name) + ": {\n";
        for (const auto& e : it->second) out += "        " + pyStr(e.module) + ": " + styleText(e.style) + ",\n";
        out += "    },\n";
    }
    out += "}\n";
    out += "\n";
    out += "# Parameters whose PLACEMENTS use PyTorch's [out, in] layout (graph dims transposed).\n";
    out += "LINEAR_WEIGHTS = {\n";
    for (const auto& p : ctx.params)
        if (isLinearWeight(ctx, *p.op)) out += "    " + pyStr(p.path) + ",\n";
    out += "}\n";
    out += "\n";
    out += "PLACEMENTS = {\n";
    for (const auto& p : ctx.params) {
        const bool transposed = isLinearWeight(ctx, *p.op);
        const auto& s = *p.sharding;
        std::string line = "    " + pyStr(p.path) + ": [";
        for (size_t i = 0; i < mesh.axes().size(); ++i) {
            if (i) line += ", ";
            const AxisUse use = s.use(mesh.axes()[i].name);
            if (use.kind == AxisUse::Kind::Dim) {
                const int64_t d = transposed ? 1 - use.dim : use.dim;
                line += "Shard(" + std::to_string(d) + ")";
            } else {
                line += "Replicate()";
            }
        }
        line += "],";
        // Dims split over several axes in an order other than mesh order.
        std::string caveat;
        for (size_t d = 0; d < s.dims().size(); ++d) {
            const auto& axes = s.dims()[d];
            if (axes.size() < 2) continue;
            bool meshOrder = true;
            for (size_t k = 1; k < axes.size(); ++k)
                meshOrder = meshOrder && mesh.axisIndex(axes[k - 1]).value_or(0) < mesh.axisIndex(axes[k]).value_or(0);
            if (meshOrder) continue;
            const int64_t td = transposed ? 1 - static_cast<int64_t>(d) : static_cast<int64_t>(d);
            std::string order;
            for (const auto& a : axes) order += (order.empty() ? "" : ", ") + a;
            caveat += (caveat.empty() ? "  # " : "; ") + std::string("dim ") + std::to_string(td) +
                      ": plan order " + order + " (major to minor) differs from mesh order";
        }
        out += line + caveat + "\n";
    }
    out += "}\n";
    return out;
}

// ---------------------------------------------------------------------------------------------
// megatron

enum class LayerRole { Column, Row, Norm, Expert, Other };

std::vector<std::string> splitDots(std::string_view s) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t dot = s.find('.', start);
        parts.emplace_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return parts;
}

bool isNumber(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The transformer layer a scope belongs to ("layers.4" for "layers.4.mlp.fc1"): the scope up to
// its first numeric component after the first; empty when the scope is outside every layer.
std::string layerOf(std::string_view scope, std::vector<std::string>* rest = nullptr) {
    const auto parts = splitDots(scope);
    for (size_t i = 1; i < parts.size(); ++i) {
        if (!isNumber(parts[i])) continue;
        std::string layer;
        for (size_t k = 0; k <= i; ++k) layer += (k ? "." : "") + parts[k];
        if (rest) rest->assign(parts.begin() + static_cast<std::ptrdiff_t>(i) + 1, parts.end());
        return layer;
    }
    return {};
}

LayerRole layerRole(const std::vector<std::string>& rest) {
    static const std::set<std::string> kColumn = {"qkv", "q", "k", "v", "q_proj", "k_proj", "v_proj",
                                                  "query", "key", "value", "query_key_value", "c_attn",
                                                  "fc1", "c_fc", "gate", "up", "gate_proj", "up_proj",
                                                  "dense_h_to_4h"};
    static const std::set<std::string> kRow = {"out", "o", "o_proj", "out_proj", "proj", "c_proj",
                                               "fc2", "down", "down_proj", "dense_4h_to_h", "dense"};
    for (const auto& part : rest)
        if (part == "moe" || part == "experts" || part == "router") return LayerRole::Expert;
    if (rest.empty()) return LayerRole::Other;
    const std::string& leaf = rest.back();
    if (kColumn.count(leaf)) return LayerRole::Column;
    if (kRow.count(leaf)) return LayerRole::Row;
    if (leaf.find("norm") != std::string::npos || leaf.rfind("ln", 0) == 0) return LayerRole::Norm;
    return LayerRole::Other;
}

// "segment 5 block 21 (layers.4.mlp.fc1)", as far as the plan knows the block of `op`.
std::string locate(const Context& ctx, const Op& op) {
    int32_t block = -1;
    if (const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)]) block = t->block;
    if (block < 0) {
        for (OpId u : ctx.users[static_cast<size_t>(op.id)]) {
            const TensorPlan* t = ctx.byOp[static_cast<size_t>(u)];
            if (t && t->block >= 0) {
                block = t->block;
                break;
            }
        }
    }
    const std::string what = "(" + (op.scope.empty() ? op.name : op.scope) + ")";
    if (block < 0) return what;
    std::string where = "block " + std::to_string(block) + " " + what;
    for (const auto& seg : ctx.plan.segments)
        if (block >= seg.firstBlock && block < seg.firstBlock + seg.blockCount)
            return "segment " + std::to_string(seg.index) + " " + where;
    return where;
}

std::string describeSplit(const std::vector<std::vector<std::string>>& dims, bool matrix) {
    std::vector<std::string> parts;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d].empty()) continue;
        std::string name = matrix ? (d == 0 ? "rows" : "columns") : "dim " + std::to_string(d);
        parts.push_back(name + " over " + joinAxes(dims[d]));
    }
    if (parts.empty()) return "is replicated";
    std::string out = "splits ";
    for (size_t i = 0; i < parts.size(); ++i) out += (i ? " and " : "") + parts[i];
    return out;
}

Error notUniform(const std::string& reason, const std::string& where) {
    return makeError("export.not_uniform", "plan is not a uniform Megatron-LM layout: " + reason, where);
}

Result<std::string> exportMegatron(const Context& ctx) {
    const Mesh& mesh = ctx.plan.mesh;

    struct LayerParam {
        const ParamEntry* param;
        LayerRole role;
        std::vector<std::vector<std::string>> dims;  // effective split axes per dim
        bool linear;
    };
    std::vector<LayerParam> layerParams;
    for (const auto& p : ctx.params) {
        std::vector<std::string> rest;
        if (layerOf(p.op->scope, &rest).empty()) continue;  // embeddings, final norm, LM head: not checked
        layerParams.push_back({&p, layerRole(rest), effectiveDims(*p.sharding, mesh), isLinearWeight(ctx, *p.op)});
    }
    if (layerParams.empty())
        return notUniform("no transformer-layer parameters (scopes like layers.N.*) found", {});

    // The tensor-parallel axis: the one most linear layer weights are split over, alone on one dim.
    std::map<std::string, size_t> votes;
    for (const auto& lp : layerParams) {
        if (!lp.linear || (lp.role != LayerRole::Column && lp.role != LayerRole::Row)) continue;
        if (lp.dims[0].empty() && lp.dims[1].size() == 1) ++votes[lp.dims[1][0]];
        if (lp.dims[1].empty() && lp.dims[0].size() == 1) ++votes[lp.dims[0][0]];
    }
    std::string tp;
    size_t best = 0;
    for (const auto& a : mesh.axes()) {
        auto it = votes.find(a.name);
        if (it != votes.end() && it->second > best) {
            best = it->second;
            tp = a.name;
        }
    }
    const std::vector<std::string> tpAxes = tp.empty() ? std::vector<std::string>{} : std::vector<std::string>{tp};
    const std::string over = tp.empty() ? std::string(" (no tensor parallelism)") : " over " + tp;

    for (const auto& lp : layerParams) {
        const Op& op = *lp.param->op;
        const std::string loc = locate(ctx, op);
        const bool matrix = op.type.dims.size() == 2;
        switch (lp.role) {
            case LayerRole::Expert:
                return notUniform(loc + " is an MoE layer; the Megatron export does not map expert parallelism", op.name);
            case LayerRole::Other:
                return notUniform(loc + " holds " + op.name + ", not a recognised attention, MLP or norm parameter",
                                  op.name);
            case LayerRole::Norm:
                for (const auto& d : lp.dims)
                    if (!d.empty())
                        return notUniform(loc + " " + describeSplit(lp.dims, false) + " (" + op.name +
                                              "), Megatron replicates norm parameters",
                                          op.name);
                break;
            case LayerRole::Column:
            case LayerRole::Row: {
                const bool column = lp.role == LayerRole::Column;
                if (matrix) {
                    if (!lp.linear)
                        return notUniform(loc + " " + op.name + " is not a plain [in, out] linear weight", op.name);
                    const auto want = column ? std::vector<std::vector<std::string>>{{}, tpAxes}
                                             : std::vector<std::vector<std::string>>{tpAxes, {}};
                    if (lp.dims != want)
                        return notUniform(loc + " " + describeSplit(lp.dims, true) + ", Megatron needs " +
                                              (column ? "column-parallel" : "row-parallel") + over,
                                          op.name);
                } else if (op.type.dims.size() == 1) {
                    // Bias: split like the output features (column) or replicated (row).
                    const auto want = column ? std::vector<std::vector<std::string>>{tpAxes}
                                             : std::vector<std::vector<std::string>>{{}};
                    if (lp.dims != want)
                        return notUniform(loc + " " + describeSplit(lp.dims, false) + " (" + op.name + "), Megatron needs " +
                                              (column && !tp.empty() ? "it split over " + tp : std::string("it replicated")),
                                          op.name);
                } else {
                    return notUniform(loc + " " + op.name + " has rank " + std::to_string(op.type.dims.size()) +
                                          ", not a linear weight or bias",
                                      op.name);
                }
                break;
            }
        }
    }

    // Data parallelism: every data input's batch dim split over all the other axes (any order).
    std::set<std::string> dpAxes;
    int64_t dpSize = 1;
    for (const auto& a : mesh.axes())
        if (a.name != tp && a.size > 1) {
            dpAxes.insert(a.name);
            dpSize *= a.size;
        }
    for (const Op& op : ctx.graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Input || op.type.dims.empty()) continue;
        const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
        if (!t) return makeError("export.bad_plan", "plan has no sharding for input " + op.name, op.name);
        if (t->result.rank() != static_cast<int64_t>(op.type.dims.size()))
            return makeError("export.bad_plan", "sharding " + t->result.toString() + " of input " + op.name +
                                                    " has the wrong rank", op.name);
        const auto dims = effectiveDims(t->result, mesh);
        bool ok = std::set<std::string>(dims[0].begin(), dims[0].end()) == dpAxes && dims[0].size() == dpAxes.size();
        for (size_t d = 1; d < dims.size(); ++d) ok = ok && dims[d].empty();
        if (!ok) {
            std::string need = dpAxes.empty() ? std::string("the batch unsplit") : "the batch split over ";
            std::vector<std::string> list(dpAxes.begin(), dpAxes.end());
            if (!dpAxes.empty()) need += joinAxes(list) + " only";
            return notUniform("input " + op.name + " " + describeSplit(dims, false) + ", Megatron needs " + need,
                              op.name);
        }
    }

    // Megatron numbers tensor-parallel ranks consecutively: the TP axis must be the innermost one.
    if (!tp.empty()) {
        const auto idx = static_cast<size_t>(*mesh.axisIndex(tp));
        for (size_t i = idx + 1; i < mesh.axes().size(); ++i)
            if (mesh.axes()[i].size > 1)
                return notUniform("tensor-parallel axis " + tp + " is not the innermost mesh axis (" +
                                      mesh.axes()[i].name + " is inside it); Megatron places tensor-parallel "
                                      "ranks on consecutive devices",
                                  {});
    }

    const int64_t tpSize = tp.empty() ? 1 : *mesh.axisSize(tp);
    // Megatron-LM derives the data-parallel size from WORLD_SIZE / (TP · PP · CP); it has no flag
    // for it. The plan's data-parallel size (dpSize) is what WORLD_SIZE / TP must come to.
    (void)dpSize;
    std::string flags = "--tensor-model-parallel-size " + std::to_string(tpSize) + " --pipeline-model-parallel-size 1";

    // Sequence parallelism only when every [batch, seq, …] value in every layer's norms is split
    // along the sequence over exactly the tensor-parallel axis.
    if (!tp.empty()) {
        size_t normValues = 0;
        bool sequenceParallel = true;
        for (const Op& op : ctx.graph.ops()) {
            if (op.phase != Phase::Forward || op.type.dims.size() < 3) continue;
            std::vector<std::string> rest;
            if (layerOf(op.scope, &rest).empty() || layerRole(rest) != LayerRole::Norm) continue;
            const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
            ++normValues;
            if (!t || t->result.rank() != static_cast<int64_t>(op.type.dims.size()) ||
                effectiveAxes(t->result.dimAxes(1), mesh) != tpAxes) {
                sequenceParallel = false;
                break;
            }
        }
        if (sequenceParallel && normValues > 0) flags += " --sequence-parallel";
    }
    // Memory policy. Megatron recomputes whole layers (full granularity); the plan recomputes per
    // ParallelBlock, so the flags follow only when every block of every layer recomputes.
    if (ctx.plan.policy.optimizerSharding) flags += " --use-distributed-optimizer";
    size_t layerBlocks = 0, recomputed = 0;
    for (const TensorPlan& t : ctx.plan.tensors) {
        if (t.block < 0 || static_cast<size_t>(t.block) >= ctx.plan.blocks.size()) continue;
        const Op& op = ctx.graph.op(t.op);
        if (op.phase != Phase::Forward || layerOf(op.scope, nullptr).empty()) continue;
        ++layerBlocks;
        recomputed += ctx.plan.blocks[static_cast<size_t>(t.block)].recompute;
    }
    if (recomputed > 0 && recomputed == layerBlocks)
        flags += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
    else if (recomputed > 0)
        return notUniform("the plan recomputes some ParallelBlocks of the layers and not others; Megatron-LM recomputes "
                          "whole layers (plan with --recompute all or none for a Megatron export)",
                          {});
    return flags + "\n";
}

// ---------------------------------------------------------------------------------------------
// hlo-sharding

Result<std::string> exportHloSharding(const Context& ctx) {
    std::string out = "# CFP Explorer plan: XLA HloSharding of every trainable parameter; model " +
                      ctx.plan.model + ", mesh " + ctx.plan.mesh.toString() + "\n";
    // Keep the header one line whatever the model name holds.
    std::replace(out.begin(), out.end() - 1, '\n', ' ');
    std::replace(out.begin(), out.end() - 1, '\r', ' ');
    for (const auto& p : ctx.params) {
        auto text = hloShardingText(*p.sharding, ctx.plan.mesh);
        if (!text) return text.error().withContext(p.op->name);
        out += p.path + " " + *text + "\n";
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// trace

double roundMicros(double seconds) { return std::round(seconds * 1e9) / 1e3; }

Result<std::string> exportTrace(const Graph& graph, const Plan& plan, std::span<const TimelineEvent> timeline) {
    using Json = nlohmann::ordered_json;

    for (size_t i = 0; i < timeline.size(); ++i) {
        const auto& e = timeline[i];
        const std::string where = "/timeline/" + std::to_string(i);
        if (!std::isfinite(e.startSeconds) || !std::isfinite(e.durationSeconds))
            return makeError("export.bad_timeline", "event " + e.name + " has a non-finite time", where);
        if (e.durationSeconds < 0)
            return makeError("export.bad_timeline", "event " + e.name + " has a negative duration", where);
    }

    // Tracks: compute first, then comm:<axis> in mesh order, then any other track by name.
    std::set<std::string> present;
    for (const auto& e : timeline) present.insert(e.track.empty() ? std::string("compute") : e.track);
    std::vector<std::string> tracks;
    auto take = [&](const std::string& t) {
        if (present.erase(t)) tracks.push_back(t);
    };
    take("compute");
    for (const auto& a : plan.mesh.axes()) take("comm:" + a.name);
    for (const auto& t : present) tracks.push_back(t);
    std::map<std::string, int> tid;
    for (size_t i = 0; i < tracks.size(); ++i) tid[tracks[i]] = static_cast<int>(i) + 1;

    std::vector<size_t> order(timeline.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto trackOf = [&](const TimelineEvent& e) { return tid.at(e.track.empty() ? std::string("compute") : e.track); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const double ta = roundMicros(timeline[a].startSeconds), tb = roundMicros(timeline[b].startSeconds);
        if (ta != tb) return ta < tb;
        return trackOf(timeline[a]) < trackOf(timeline[b]);
    });

    const std::string processName = "CFP predicted step: " + plan.model + " on " + plainMeshText(plan.mesh);
    std::vector<Json> events;
    events.push_back(Json{{"ph", "M"}, {"pid", 1}, {"tid", 0}, {"name", "process_name"},
                          {"args", Json{{"name", processName}}}});
    for (const auto& t : tracks) {
        events.push_back(Json{{"ph", "M"}, {"pid", 1}, {"tid", tid[t]}, {"name", "thread_name"},
                              {"args", Json{{"name", t}}}});
        events.push_back(Json{{"ph", "M"}, {"pid", 1}, {"tid", tid[t]}, {"name", "thread_sort_index"},
                              {"args", Json{{"sort_index", tid[t]}}}});
    }
    double end = 0;
    for (size_t i : order) {
        const auto& e = timeline[i];
        Json args = Json::object();
        if (e.op >= 0 && e.op < graph.size()) {
            args["op"] = graph.op(e.op).name;
            args["opId"] = e.op;
        }
        if (!e.scope.empty()) args["scope"] = e.scope;
        if (!e.detail.empty()) args["detail"] = e.detail;
        events.push_back(Json{{"ph", "X"},
                              {"pid", 1},
                              {"tid", trackOf(e)},
                              {"name", e.name},
                              {"cat", e.category.empty() ? std::string("other") : e.category},
                              {"ts", roundMicros(e.startSeconds)},
                              {"dur", roundMicros(e.durationSeconds)},
                              {"args", std::move(args)}});
        end = std::max(end, e.startSeconds + e.durationSeconds);
    }

    Json other = {
        {"generator", "CFP Explorer"},
        {"model", plan.model},
        {"modelSource", plan.modelSource},
        {"batch", plan.build ? plan.build->batch : 0},
        {"seq", plan.build ? plan.build->seq : 0},
        {"hardware", plan.hardware},
        {"hardwareName", plan.hardwareName},
        {"nodes", plan.nodes},
        {"gpusPerNode", plan.gpusPerNode},
        {"mesh", plan.mesh.toString()},
        {"devices", plan.mesh.deviceCount()},
        {"predictedStepSeconds", plan.predictedStepSeconds},
        {"evaluatorStepSeconds", plan.evaluatorStepSeconds},
        {"computeSeconds", plan.step.computeSeconds},
        {"collectiveSeconds", plan.step.collectiveSeconds},
        {"reshardSeconds", plan.step.reshardSeconds},
        {"provenance", std::string(provenanceName(plan.step.provenance))},
        {"memoryBytesPerDevice", plan.memory.total()},
        {"memoryLimitBytes", plan.memoryLimitBytes},
        {"segments", plan.segments.size()},
        {"blocks", plan.blocks.size()},
        {"searchExact", plan.searchExact},
        {"timelineEvents", timeline.size()},
        {"timelineSeconds", end},
    };

    // One event per line: readable, diffable, and still one JSON document. Invalid UTF-8 in names
    // becomes U+FFFD instead of failing.
    const auto dump = [](const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); };
    std::string out = "{\"traceEvents\":[\n";
    for (size_t i = 0; i < events.size(); ++i) {
        out += dump(events[i]);
        out += i + 1 < events.size() ? ",\n" : "\n";
    }
    out += "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":" + dump(other) + "\n}\n";
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Result<ExportFormat> parseExportFormat(std::string_view name) {
    for (size_t i = 0; i < std::size(kFormatNames); ++i)
        if (name == kFormatNames[i]) return static_cast<ExportFormat>(i);
    std::string valid;
    for (auto n : kFormatNames) valid += (valid.empty() ? "" : ", ") + std::string(n);
    return makeError("export.bad_format", "unknown export format '" + std::string(name) + "'; expected one of " + valid);
}

std::vector<std::string> exportFormatNames() { return {std::begin(kFormatNames), std::end(kFormatNames)}; }

std::string_view exportFormatName(ExportFormat format) {
    const auto i = static_cast<size_t>(format);
    return i < std::size(kFormatNames) ? kFormatNames[i] : std::string_view("unknown");
}

std::string_view exportFormatExtension(ExportFormat format) {
    switch (format) {
        case ExportFormat::Jax:
        case ExportFormat::DTensor: return ".py";
        case ExportFormat::Megatron:
        case ExportFormat::HloSharding: return ".txt";
        case ExportFormat::Trace: return ".json";
    }
    return ".txt";
}

std::string parameterPath(const Op& op) {
    if (op.scope.empty() || op.name == op.scope) return op.name;
    if (op.name.size() > op.scope.size() && op.name.compare(0, op.scope.size(), op.scope) == 0 &&
        op.name[op.scope.size()] == '.')
        return op.name;
    return op.scope + "." + op.name;
}

Result<std::string> hloShardingText(const TensorSharding& sharding, const Mesh& mesh) {
    if (sharding.isPartial())
        return makeError("export.bad_plan",
                         "HloSharding cannot express a pending partial sum (" + sharding.toString() + ")");
    const auto& axes = mesh.axes();
    std::vector<size_t> tileOrder;     // mesh axis index per tile position, major to minor
    std::vector<int64_t> tileDims;
    std::vector<bool> used(axes.size(), false);
    bool anySplit = false;
    for (const auto& dimAxes : sharding.dims()) {
        int64_t product = 1;
        for (const auto& a : dimAxes) {
            const auto idx = mesh.axisIndex(a);
            if (!idx) return makeError("export.bad_plan", "mesh " + mesh.toString() + " has no axis '" + a + "'");
            const auto i = static_cast<size_t>(*idx);
            used[i] = true;
            tileOrder.push_back(i);
            product *= axes[i].size;
            anySplit = anySplit || axes[i].size > 1;
        }
        tileDims.push_back(product);
    }
    if (!anySplit) return std::string("{replicated}");
    int64_t replicated = 1;
    for (size_t i = 0; i < axes.size(); ++i)
        if (!used[i] && axes[i].size > 1) {
            tileOrder.push_back(i);
            replicated *= axes[i].size;
        }
    if (replicated > 1) tileDims.push_back(replicated);

    // Row-major device numbering: stride of axis i = product of the sizes of the axes after it.
    std::vector<int64_t> stride(axes.size(), 1);
    for (size_t i = axes.size(); i-- > 1;) stride[i - 1] = stride[i] * axes[i].size;

    std::string out = "{devices=[";
    for (size_t i = 0; i < tileDims.size(); ++i) out += (i ? "," : "") + std::to_string(tileDims[i]);
    out += "]";
    // Tile positions in row-major order (the last tile axis fastest), decoded as mixed-radix numbers.
    int64_t tiles = 1;
    for (size_t i : tileOrder) tiles *= axes[i].size;
    for (int64_t n = 0; n < tiles; ++n) {
        int64_t rest = n, device = 0;
        for (size_t k = tileOrder.size(); k-- > 0;) {
            const size_t axis = tileOrder[k];
            device += (rest % axes[axis].size) * stride[axis];
            rest /= axes[axis].size;
        }
        out += (n ? "," : "") + std::to_string(device);
    }
    if (replicated > 1) out += " last_tile_dim_replicate";
    return out + "}";
}

Result<std::string> exportPlan(const Graph& graph, const Plan& plan, ExportFormat format,
                               std::span<const TimelineEvent> timeline) {
    if (format == ExportFormat::Trace) return exportTrace(graph, plan, timeline);
    auto ctx = makeContext(graph, plan);
    if (!ctx) return ctx.error();
    switch (format) {
        case ExportFormat::Jax: return exportJax(*ctx);
        case ExportFormat::DTensor: return exportDTensor(*ctx);
        case ExportFormat::Megatron: return exportMegatron(*ctx);
        case ExportFormat::HloSharding: return exportHloSharding(*ctx);
        case ExportFormat::Trace: break;
    }
    return makeError("export.bad_format", "unknown export format");
}

}  // namespace cfp
