// The PyTorch DTensor export: a device mesh and parallelize_module styles (docs/exporters.md).

#include "export/export_internal.h"

#include "cost/step_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace cfp::exporting {

namespace {

enum class TpStyle { Colwise, Rowwise };

// One entry of a parallelize_module plan: the module, the mesh axis it is parallel over and the
// style with the layouts the plan gives its input and output (empty: the style's default).
struct TpEntry {
    std::string module;
    std::string axis;
    std::string style;  // "ColwiseParallel", "RowwiseParallel", "SequenceParallel"
    std::vector<std::string> args;  // "input_layouts=Shard(1)", …
    bool embedding = false;         // an nn.Embedding, not an nn.Linear
    bool defaults() const { return args.empty(); }
    std::string text() const {
        std::string out = style + "(";
        for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + args[i];
        return out + ")";
    }
};

std::string moduleOf(const std::string& path) {
    const size_t dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(0, dot);
}

// The forward op of the step reading `param` first as operand `which` (a dot or a gather), or null.
const Op* forwardUse(const Context& ctx, const Op& param, OpKind kind, size_t which) {
    for (OpId u : ctx.users[static_cast<size_t>(param.id)]) {
        const Op& d = ctx.graph.op(u);
        if (d.kind == kind && d.phase == Phase::Forward && d.operands.size() > which && d.operands[which] == param.id) return &d;
    }
    return nullptr;
}

// Whether mesh axis `axis` splits dim `dim` (negative: from the end) of a sharding.
bool splits(const TensorSharding& s, int64_t dim, const std::string& axis) {
    const int64_t r = static_cast<int64_t>(s.dims().size());
    if (dim < 0) dim += r;
    if (dim < 0 || dim >= r) return false;
    const auto& axes = s.dims()[static_cast<size_t>(dim)];
    return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// The sequence dim of an activation [batch, seq, …]: dim 1 of a rank-3 value.
bool sequenceSplit(const TensorSharding& s, const std::string& axis) { return s.dims().size() == 3 && splits(s, 1, axis); }

const TensorPlan* planOf(const Context& ctx, const Op& op) { return ctx.byOp[static_cast<size_t>(op.id)]; }

// Column parallel: only the graph's out dim (1) split, over exactly one axis; row parallel: only
// the in dim (0). Axes of size 1 are ignored. The layouts are what the module receives and passes
// on: the activation as its producer passes it on (Shard(1): sequence parallel; Shard(-1): split
// features; Replicate()) and the dot's result as passed on.
std::optional<TpEntry> tensorParallelStyle(const Context& ctx, const ParamEntry& p) {
    if (p.op->scope.empty() || !storedTransposed(ctx, p)) return std::nullopt;
    const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
    TpStyle style;
    std::string axis;
    if (dims[0].empty() && dims[1].size() == 1) {
        style = TpStyle::Colwise;
        axis = dims[1][0];
    } else if (dims[1].empty() && dims[0].size() == 1) {
        style = TpStyle::Rowwise;
        axis = dims[0][0];
    } else {
        return std::nullopt;
    }
    TpEntry e{moduleOf(p.path), axis, style == TpStyle::Colwise ? "ColwiseParallel" : "RowwiseParallel", {}};
    const Op* dot = forwardUse(ctx, *p.op, OpKind::Dot, 1);
    const TensorPlan* t = dot ? planOf(ctx, *dot) : nullptr;
    const TensorPlan* producer = dot ? ctx.byOp[static_cast<size_t>(dot->operands[0])] : nullptr;
    if (!t || !producer) return e;
    const TensorSharding& in = producer->result;
    const TensorSharding& out = t->result;
    // A norm is no parallel module in PyTorch: it passes on its whole output, whatever features the
    // plan splits inside the next block.
    const bool fromNorm = ctx.graph.op(dot->operands[0]).scope.find("norm") != std::string::npos;
    // Shard(0): the batch split over this axis (a mixed plan whose previous layer is data parallel
    // over it); the style gathers it, and a row-parallel output split by batch is reduce-scattered.
    const auto batchSplit = [&](const TensorSharding& t) { return t.dims().size() >= 2 && splits(t, 0, axis); };
    const std::string received = sequenceSplit(in, axis)               ? "Shard(1)"
                                 : batchSplit(in)                      ? "Shard(0)"
                                 : splits(in, -1, axis) && !fromNorm ? "Shard(-1)"
                                                                     : "Replicate()";
    if (style == TpStyle::Colwise) {
        if (received != "Replicate()") e.args.push_back("input_layouts=" + received);
        if (batchSplit(out)) e.args.push_back("output_layouts=Shard(0)");
        else if (!splits(out, -1, axis)) e.args.push_back("output_layouts=Replicate()");  // the plan gathers it
    } else {
        if (received != "Shard(-1)") e.args.push_back("input_layouts=" + received);
        if (sequenceSplit(out, axis)) e.args.push_back("output_layouts=Shard(1)");  // reduce-scatter
        else if (batchSplit(out)) e.args.push_back("output_layouts=Shard(0)");
    }
    return e;
}

// The token embedding [vocab, hidden]: vocabulary split → RowwiseParallel on the lookup (ids
// replicated), hidden split → ColwiseParallel; the output layout from the lookup's result.
std::optional<TpEntry> embeddingStyle(const Context& ctx, const ParamEntry& p) {
    const Op* lookup = forwardUse(ctx, *p.op, OpKind::Gather, 0);
    if (!lookup || p.dims.size() != 2) return std::nullopt;
    const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
    const bool rows = dims[0].size() == 1 && dims[1].empty(), cols = dims[1].size() == 1 && dims[0].empty();
    if (!rows && !cols) return std::nullopt;
    const std::string axis = rows ? dims[0][0] : dims[1][0];
    TpEntry e{moduleOf(p.path), axis, rows ? "RowwiseParallel" : "ColwiseParallel", {"input_layouts=Replicate()"}, true};
    const TensorPlan* t = planOf(ctx, *lookup);
    if (t && sequenceSplit(t->result, axis)) e.args.push_back("output_layouts=Shard(1)");
    else if (cols && t && !splits(t->result, -1, axis)) e.args.push_back("output_layouts=Replicate()");
    return e;
}

// A norm's weight whose input the plan splits along the sequence over one axis: SequenceParallel.
std::optional<TpEntry> normStyle(const Context& ctx, const ParamEntry& p) {
    if (p.dims.size() != 1 || p.path.find("norm") == std::string::npos) return std::nullopt;
    for (OpId u : ctx.users[static_cast<size_t>(p.op->id)]) {
        const Op& m = ctx.graph.op(u);
        if (m.phase != Phase::Forward) continue;
        const TensorPlan* t = planOf(ctx, m);
        if (!t) continue;
        for (const auto& a : ctx.plan.mesh.axes())
            if (a.size > 1 && sequenceSplit(t->result, a.name)) return TpEntry{moduleOf(p.path), a.name, "SequenceParallel", {}};
        // Broadcast of the weight first: look one step further.
        for (OpId v : ctx.users[static_cast<size_t>(m.id)]) {
            const TensorPlan* tv = planOf(ctx, ctx.graph.op(v));
            if (!tv || ctx.graph.op(v).phase != Phase::Forward) continue;
            for (const auto& a : ctx.plan.mesh.axes())
                if (a.size > 1 && sequenceSplit(tv->result, a.name)) return TpEntry{moduleOf(p.path), a.name, "SequenceParallel", {}};
        }
    }
    return std::nullopt;
}

// Where the transformer blocks sit in the target's module tree (FSDP wraps each).
std::string blocksPath(NameConvention names, const ModelConfig* model) {
    if (names == NameConvention::HuggingFace) return model && model->family == ModelFamily::Gpt ? "transformer.h" : "model.layers";
    return "layers";
}

// The transformer block a parameter or module belongs to ("model.layers.3"), or "" for the rest.
std::string blockOf(const std::string& path, const std::string& blocks) {
    if (path.size() <= blocks.size() + 1 || path.compare(0, blocks.size() + 1, blocks + ".") != 0) return {};
    const size_t end = path.find('.', blocks.size() + 1);
    return path.substr(0, end);
}

// Hugging Face's tp_plan spelling of a style with default layouts ("colwise", "rowwise").
std::optional<std::string> hfStyle(const TpEntry& e) {
    if (e.style == "ColwiseParallel" && e.defaults()) return "colwise";
    if (e.style == "RowwiseParallel" && e.defaults()) return "rowwise";
    if (e.embedding && e.style == "RowwiseParallel" && e.args == std::vector<std::string>{"input_layouts=Replicate()"})
        return "embedding_rowwise";
    return std::nullopt;
}

// "model.layers.12.mlp.up_proj" → "model.layers.*.mlp.up_proj".
std::string layerPattern(const std::string& module) {
    std::string out;
    size_t i = 0;
    while (i < module.size()) {
        const size_t dot = module.find('.', i);
        const std::string part = module.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
        const bool number = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        out += (out.empty() ? "" : ".") + (number ? std::string("*") : part);
        if (dot == std::string::npos) break;
        i = dot + 1;
    }
    return out;
}

}  // namespace

std::string exportDTensor(const Context& ctx) {
    const Plan& plan = ctx.plan;
    const Mesh& mesh = plan.mesh;

    // parallelize_module entries, grouped by mesh axis; the primary axis has the most entries
    // (ties: the earlier mesh axis).
    std::map<std::string, std::vector<TpEntry>> byAxis;
    std::set<std::string> modules;
    for (const auto& p : ctx.params) {
        auto e = tensorParallelStyle(ctx, p);
        if (!e) e = embeddingStyle(ctx, p);
        if (!e) e = normStyle(ctx, p);
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
    // Data parallelism: the axes that split the batch; FSDP2 shards over them (ZeRO stage from the plan).
    std::vector<std::string> dpAxes;
    if (auto batch = planBatch(plan, ctx.graph))
        for (const auto& a : batch->dataParallelAxes)
            if (mesh.axisSize(a).value_or(1) > 1) dpAxes.push_back(a);
    const int zero = zeroStageOf(plan.policy);

    // What parallelize() applies: a module's style over its axis, FSDP2 over the data-parallel
    // axes. A parameter split over any other axis has a layout no style says: UNEXPRESSED.
    std::map<std::string, std::set<std::string>> styledAxes;  // module → axes of its styles
    for (const auto& [axis, entries] : byAxis)
        for (const auto& e : entries) styledAxes[e.module].insert(axis);
    std::map<std::string, std::string> unexpressed;  // module → why
    std::set<std::string> keptWhole;                  // 1-D parameters split where no style says so
    const std::string blocks = blocksPath(ctx.names, ctx.model);
    std::map<std::string, std::set<std::string>> blockTpAxes;  // block ("" = outside blocks) → axes its styles use
    for (const auto& p : ctx.params) {
        const std::string module = moduleOf(p.path);
        auto styled = styledAxes.find(module);
        if (styled != styledAxes.end()) blockTpAxes[blockOf(module, blocks)].insert(styled->second.begin(), styled->second.end());
        const auto dims = effectiveDims(*p.sharding, mesh);
        bool expressed = true;
        std::string layout;  // "over tp on graph dim 0, over dp on dim 1"
        for (size_t d = 0; d < dims.size(); ++d) {
            if (dims[d].empty()) continue;
            layout += std::string(layout.empty() ? "over " : ", over ") + joinAxes(dims[d]) + (layout.empty() ? " on graph dim " : " on dim ") +
                      std::to_string(d);
            for (const auto& a : dims[d])
                if (!(styled != styledAxes.end() && styled->second.count(a)) &&
                    std::find(dpAxes.begin(), dpAxes.end(), a) == dpAxes.end())  // FSDP2 shards over the dp axes
                    expressed = false;
        }
        // A norm weight or bias the plan splits along features (e.g. the final norm of a
        // Megatron-style plan): PyTorch keeps it whole and computes the same; it costs its few
        // bytes per device, nothing more.
        if (!expressed && p.dims.size() <= 1) {
            keptWhole.insert(p.path);
            continue;
        }
        if (!expressed && !unexpressed.count(module))
            unexpressed[module] = p.path + " is split " + layout + (styled == styledAxes.end() ? "; no parallel style fits that layout"
                                                                                                 : "; its module's style covers only " +
                                                                                                       joinAxes({styled->second.begin(), styled->second.end()}));
    }
    if (!unexpressed.empty() && ctx.notes)
        ctx.notes->push_back("dtensor: " + std::to_string(unexpressed.size()) + " module" + (unexpressed.size() == 1 ? "" : "s") +
                             " with layouts no parallel style expresses (first: " + unexpressed.begin()->second +
                             "); parallelize() refuses them unless allow_partial=True, PLACEMENTS holds them");
    // FSDP2 per block over the data-parallel axes its tensor-parallel styles leave (a mixed plan's
    // tensor-parallel layer is data parallel over fewer axes).
    const auto dpWithout = [&](const std::set<std::string>& used) {
        std::vector<std::string> out;
        for (const auto& a : dpAxes)
            if (!used.count(a)) out.push_back(a);
        return out;
    };
    std::map<std::string, std::vector<std::string>> blockDp;
    std::set<std::string> rootUsed = blockTpAxes[""];
    for (const auto& [block, used] : blockTpAxes) {
        if (block.empty()) continue;
        auto dims = dpWithout(used);
        if (dims != dpAxes) blockDp[block] = dims;
        if (dims.empty()) rootUsed.insert(used.begin(), used.end());  // its parameters fall to the root unit
    }
    const std::vector<std::string> rootDp = dpWithout(rootUsed);
    const auto axesTuple = [](const std::vector<std::string>& axes) {
        std::vector<std::string> q;
        for (const auto& a : axes) q.push_back(pyStr(a));
        return pyTuple(q);
    };

    std::string doc = headerText(plan, "CFP Explorer plan: PyTorch DTensor placements of every trainable parameter.");
    doc += "\n"
           "Names: " + std::string(nameConventionName(ctx.names)) +
           (ctx.names == NameConvention::HuggingFace ? " (Hugging Face transformers' module tree)"
            : ctx.names == NameConvention::Torchtitan ? " (torchtitan's module tree)"
                                                      : " (the graph's parameter paths: scope, then leaf name)") +
           ". PLACEMENTS keys are parameter names, PARALLELIZE_PLAN keys module names.\n"
           "\n"
           "Layout: the graph stores a linear weight as W[in, out] (y = x @ W); torch.nn.Linear stores\n"
           "weight[out, in] (y = x @ weight.T). For every parameter the target keeps as nn.Linear\n"
           "(listed in LINEAR_WEIGHTS), PLACEMENTS use the PyTorch layout: Shard(0) is the graph's out\n"
           "dim (column parallel), Shard(1) its in dim (row parallel). Every other parameter keeps the\n"
           "graph's dim order (an embedding table [vocab, hidden] matches nn.Embedding.weight).\n"
           "\n"
           "Placements: one per mesh dim, in MESH_DIM_NAMES order: Shard(d) when that mesh axis splits\n"
           "tensor dim d, else Replicate(). When one tensor dim is split over several mesh dims, DTensor\n"
           "cuts it in mesh-dim order (the earlier mesh dim major); the plan lists its own order, and\n"
           "entries whose order differs from mesh order are marked with a comment (such a layout needs\n"
           "a permutation of the shards, or a DTensor version with strided sharding).\n"
           "\n"
           "Use: parallelize(model) under torchrun applies PARALLELIZE_PLAN on the tensor-parallel mesh\n"
           "dim, then FSDP2 (fully_shard) per transformer block and on the model over DP_MESH_DIMS (a\n"
           "block tensor parallel over one of them: BLOCK_DP_MESH_DIMS). It refuses a plan with layouts\n"
           "no parallel style expresses (UNEXPRESSED) unless allow_partial=True.\n"
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
    out += "from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, SequenceParallel, parallelize_module\n";
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
    out += "# Tensor parallelism: parallelize_module(model, device_mesh[TP_MESH_DIM], PARALLELIZE_PLAN).\n";
    out += "# Linear layers whose weight is split over exactly one mesh axis (column: out features, row: in\n";
    out += "# features) and over nothing else, the token embedding, and norms whose input the plan splits\n";
    out += "# along the sequence; each style's layouts are the plan's (Shard(1): sequence parallel). All other\n";
    out += "# layouts are in PLACEMENTS only.\n";
    out += "TP_MESH_DIM = " + (primary.empty() ? std::string("None") : pyStr(primary)) + "\n";
    out += "PARALLELIZE_PLAN = {\n";
    if (!primary.empty())
        for (const auto& e : byAxis[primary]) out += "    " + pyStr(e.module) + ": " + e.text() + ",\n";
    out += "}\n";
    out += "\n";
    out += "# Layers parallel over another mesh axis (apply with device_mesh[axis]).\n";
    out += "OTHER_PARALLELIZE_PLANS = {\n";
    for (const auto& a : mesh.axes()) {
        auto it = byAxis.find(a.name);
        if (a.name == primary || it == byAxis.end()) continue;
        out += "    " + pyStr(a.name) + ": {\n";
        for (const auto& e : it->second) out += "        " + pyStr(e.module) + ": " + e.text() + ",\n";
        out += "    },\n";
    }
    out += "}\n";
    out += "\n";
    // Hugging Face's tp_plan: one style per layer pattern, only where every layer agrees and the
    // styles have their default layouts (what the strings mean there).
    {
        std::map<std::string, std::set<std::string>> patterns;
        bool expressible = !primary.empty() && byAxis.size() == 1;
        std::string why = primary.empty() ? "no tensor-parallel layers" : byAxis.size() > 1 ? "layers parallel over several axes" : "";
        if (expressible)
            for (const auto& e : byAxis[primary]) {
                auto h = hfStyle(e);
                if (!h) {
                    expressible = false;
                    why = e.module + " needs " + e.text();
                    break;
                }
                patterns[layerPattern(e.module)].insert(*h);
            }
        for (const auto& [k, v] : patterns)
            if (v.size() > 1) {
                expressible = false;
                why = "layers differ at " + k;
            }
        out += "# The plan as a Hugging Face tp_plan (model.config.base_model_tp_plan style; None when the\n";
        out += "# plan needs more than its strings say" + (expressible || why.empty() ? std::string() : ": " + why) + ").\n";
        if (expressible && ctx.names == NameConvention::HuggingFace) {
            out += "HF_TP_PLAN = {\n";
            for (const auto& [k, v] : patterns) out += "    " + pyStr(k) + ": " + pyStr(*v.begin()) + ",\n";
            out += "}\n";
        } else {
            out += "HF_TP_PLAN = None\n";
        }
    }
    out += "\n";
    out += "# Data parallelism: FSDP2 over the mesh dims that split the batch; ZeRO-3 reshards the weights\n";
    out += "# after forward, ZeRO-1/2 keep them gathered until backward (FSDP2 always shards the optimizer\n";
    out += "# state and gradients).\n";
    out += "DP_MESH_DIMS = " + axesTuple(dpAxes) + "\n";
    out += "ZERO_STAGE = " + std::to_string(zero) + "\n";
    out += "BLOCKS = " + pyStr(blocks) + "  # the transformer blocks, each its own FSDP unit\n";
    out += "# Blocks data parallel over fewer mesh dims (tensor parallel over the others), and the dims of\n";
    out += "# the model's own FSDP unit (embedding, head, final norm).\n";
    out += "BLOCK_DP_MESH_DIMS = {\n";
    for (const auto& [block, dims] : blockDp) out += "    " + pyStr(block) + ": " + axesTuple(dims) + ",\n";
    out += "}\n";
    out += "ROOT_DP_MESH_DIMS = " + axesTuple(rootDp) + "\n";
    out += "\n";
    out += "# Modules whose plan layout no parallel style above expresses (PLACEMENTS has it; apply it with\n";
    out += "# distribute_tensor and your own input/output redistribution, or change the plan).\n";
    out += "UNEXPRESSED = {\n";
    for (const auto& [module, why] : unexpressed) out += "    " + pyStr(module) + ": " + pyStr(why) + ",\n";
    out += "}\n";
    out += "# Norm weights and biases the plan splits along features where no style does: parallelize()\n";
    out += "# keeps them whole (the same result; their few bytes on every device).\n";
    out += "KEPT_WHOLE = {\n";
    for (const auto& path : keptWhole) out += "    " + pyStr(path) + ",\n";
    out += "}\n";
    out += "\n";
    out += "\n";
    out += "def _dp_mesh(mesh, dims, cache):\n";
    out += "    if dims not in cache:\n";
    out += "        cache[dims] = mesh[dims[0]] if len(dims) == 1 else mesh[dims]._flatten()\n";
    out += "    return cache[dims]\n";
    out += "\n";
    out += "\n";
    out += "def apply_fsdp(model, mesh):\n";
    out += "    \"\"\"fully_shard every block of BLOCKS over its data-parallel mesh dims (BLOCK_DP_MESH_DIMS, else\n";
    out += "    DP_MESH_DIMS), then the model over ROOT_DP_MESH_DIMS.\"\"\"\n";
    out += "    if not DP_MESH_DIMS:\n";
    out += "        return model\n";
    out += "    from torch.distributed.fsdp import fully_shard\n";
    out += "    cache = {}\n";
    out += "    for name, block in model.get_submodule(BLOCKS).named_children():\n";
    out += "        dims = BLOCK_DP_MESH_DIMS.get(BLOCKS + \".\" + name, DP_MESH_DIMS)\n";
    out += "        if dims:\n";
    out += "            fully_shard(block, mesh=_dp_mesh(mesh, dims, cache), reshard_after_forward=ZERO_STAGE >= 3)\n";
    out += "    if not ROOT_DP_MESH_DIMS:\n";
    out += "        return model\n";
    out += "    return fully_shard(model, mesh=_dp_mesh(mesh, ROOT_DP_MESH_DIMS, cache), reshard_after_forward=ZERO_STAGE >= 3)\n";
    out += "\n";
    out += "\n";
    out += "def parallelize(model, mesh=None, allow_partial=False):\n";
    out += "    \"\"\"The plan applied to `model` (names as PARALLELIZE_PLAN's): tensor parallelism, then FSDP.\n";
    out += "\n";
    out += "    Refuses a plan with UNEXPRESSED layouts (the job would not run the plan) unless allow_partial.\"\"\"\n";
    out += "    if UNEXPRESSED and not allow_partial:\n";
    out += "        name, why = next(iter(UNEXPRESSED.items()))\n";
    out += "        raise NotImplementedError(\"%d module(s) have layouts no parallel style expresses, first %s: %s\"\n";
    out += "                                  % (len(UNEXPRESSED), name, why))\n";
    out += "    mesh = make_device_mesh() if mesh is None else mesh\n";
    out += "    if TP_MESH_DIM is not None:\n";
    out += "        for name in PARALLELIZE_PLAN:\n";
    out += "            model.get_submodule(name)  # fails naming a module the model does not have\n";
    out += "        parallelize_module(model, mesh[TP_MESH_DIM], PARALLELIZE_PLAN)\n";
    out += "    for axis, axis_plan in OTHER_PARALLELIZE_PLANS.items():\n";
    out += "        parallelize_module(model, mesh[axis], axis_plan)\n";
    out += "    return apply_fsdp(model, mesh)\n";
    out += "\n";
    out += "\n";
    out += "# Parameters whose PLACEMENTS use PyTorch's [out, in] layout (graph dims transposed).\n";
    out += "LINEAR_WEIGHTS = {\n";
    for (const auto& p : ctx.params)
        if (storedTransposed(ctx, p)) out += "    " + pyStr(p.path) + ",\n";
    out += "}\n";
    out += "\n";
    // Other parameters the target stores in another dim order than the graph (Mixtral's experts).
    out += "# Parameters the target stores in another dim order: the target's dim i is the graph's dim\n";
    out += "# order[i] (PARAM_SHAPES-style graph shapes permuted); PLACEMENTS use the target's dims.\n";
    out += "PERMUTED_WEIGHTS = {\n";
    for (const auto& p : ctx.params)
        if (!p.storedOrder.empty()) {
            std::vector<std::string> order;
            for (int64_t d : p.storedOrder) order.push_back(std::to_string(d));
            out += "    " + pyStr(p.path) + ": " + pyTuple(order) + ",\n";
        }
    out += "}\n";
    out += "\n";
    out += "PLACEMENTS = {\n";
    for (const auto& p : ctx.params) {
        const bool transposed = storedTransposed(ctx, p);
        // The target's dim of graph dim d.
        const auto targetDim = [&](int64_t d) -> int64_t {
            if (transposed) return 1 - d;
            for (size_t i = 0; i < p.storedOrder.size(); ++i)
                if (p.storedOrder[i] == d) return static_cast<int64_t>(i);
            return d;
        };
        const auto& s = *p.sharding;
        std::string line = "    " + pyStr(p.path) + ": [";
        for (size_t i = 0; i < mesh.axes().size(); ++i) {
            if (i) line += ", ";
            const AxisUse use = s.use(mesh.axes()[i].name);
            if (use.kind == AxisUse::Kind::Dim) {
                line += "Shard(" + std::to_string(targetDim(use.dim)) + ")";
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
            const int64_t td = targetDim(static_cast<int64_t>(d));
            std::string order;
            for (const auto& a : axes) order += (order.empty() ? "" : ", ") + a;
            caveat += (caveat.empty() ? "  # " : "; ") + std::string("dim ") + std::to_string(td) +
                      ": plan order " + order + " (major to minor) differs from mesh order";
        }
        if (!p.fusedFrom.empty()) caveat += (caveat.empty() ? "  # " : "; ") + std::string("from ") + p.fusedFrom;
        out += line + caveat + "\n";
    }
    out += "}\n";
    return out;
}

}  // namespace cfp::exporting
