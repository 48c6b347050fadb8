// Parameter names of the frameworks a plan is exported for (docs/exporters.md, "Names"): the
// builders' paths mapped onto Hugging Face transformers' and torchtitan's module trees, a fused QKV
// weight split into the target's three projections where the plan's layout allows it.

#include "export/export_internal.h"

#include <charconv>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cfp {

namespace {

struct Convention {
    NameConvention kind;
    const char* name;
};
constexpr Convention kConventions[] = {{NameConvention::Auto, "auto"},
                                       {NameConvention::Cfp, "cfp"},
                                       {NameConvention::HuggingFace, "hf"},
                                       {NameConvention::Torchtitan, "torchtitan"}};

}  // namespace

Result<NameConvention> parseNameConvention(std::string_view name) {
    for (const Convention& c : kConventions)
        if (name == c.name) return c.kind;
    return makeError("export.bad_names", "unknown name convention '" + std::string(name) + "' (auto, cfp, hf, torchtitan)");
}

std::string_view nameConventionName(NameConvention c) {
    for (const Convention& k : kConventions)
        if (k.kind == c) return k.name;
    return "?";
}

std::vector<std::string> nameConventionNames() {
    std::vector<std::string> out;
    for (const Convention& c : kConventions) out.emplace_back(c.name);
    return out;
}

NameConvention resolveNameConvention(NameConvention requested, const Plan& plan, const ModelConfig* model) {
    if (requested != NameConvention::Auto) return requested;
    // A model read from a Hugging Face config.json speaks Hugging Face's names.
    const std::string& s = plan.modelSource;
    const bool hfConfig = model && s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0 && s.rfind("builtin:", 0) != 0;
    return hfConfig ? NameConvention::HuggingFace : NameConvention::Cfp;
}

namespace exporting {

namespace {

// "layers.12.attn.qkv.weight" → layer 12, rest "attn.qkv.weight".
std::optional<std::pair<int64_t, std::string>> layerPath(const std::string& path) {
    if (path.rfind("layers.", 0) != 0) return std::nullopt;
    const size_t dot = path.find('.', 7);
    if (dot == std::string::npos) return std::nullopt;
    int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(path.data() + 7, path.data() + dot, n);
    if (ec != std::errc() || ptr != path.data() + dot) return std::nullopt;
    return std::make_pair(n, path.substr(dot + 1));
}

struct Target {
    std::string name;
    bool conv1d = false;  // stored [in, out] (GPT-2's Conv1D), not nn.Linear's [out, in]
};

// One cfp path's name under a convention; nullopt: not mapped (refused by the caller).
std::optional<Target> targetName(const std::string& path, const ModelConfig& m, NameConvention c) {
    const bool hf = c == NameConvention::HuggingFace;
    if (m.family == ModelFamily::Llama || m.family == ModelFamily::Moe) {
        static const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kTop = {
            {"embed.tokens.weight", {"model.embed_tokens.weight", "tok_embeddings.weight"}},
            {"final_norm.weight", {"model.norm.weight", "norm.weight"}},
            {"lm_head.weight", {"lm_head.weight", "output.weight"}}};
        for (const auto& [from, to] : kTop)
            if (path == from) return Target{hf ? to.first : to.second};
        static const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> kLayer = {
            {"attn_norm.weight", {"input_layernorm.weight", "attention_norm.weight"}},
            {"attn.q.weight", {"self_attn.q_proj.weight", "attention.wq.weight"}},
            {"attn.k.weight", {"self_attn.k_proj.weight", "attention.wk.weight"}},
            {"attn.v.weight", {"self_attn.v_proj.weight", "attention.wv.weight"}},
            {"attn.out.weight", {"self_attn.o_proj.weight", "attention.wo.weight"}},
            {"mlp_norm.weight", {"post_attention_layernorm.weight", "ffn_norm.weight"}},
            {"mlp.gate.weight", {"mlp.gate_proj.weight", "feed_forward.w1.weight"}},
            {"mlp.up.weight", {"mlp.up_proj.weight", "feed_forward.w3.weight"}},
            {"mlp.down.weight", {"mlp.down_proj.weight", "feed_forward.w2.weight"}},
            {"moe.router.weight", {"mlp.gate.weight", ""}}};
        auto layer = layerPath(path);
        if (!layer) return std::nullopt;
        for (const auto& [from, to] : kLayer)
            if (layer->second == from && !(hf ? to.first : to.second).empty())
                return Target{(hf ? "model.layers." : "layers.") + std::to_string(layer->first) + "." + (hf ? to.first : to.second)};
        return std::nullopt;
    }
    if (m.family == ModelFamily::Gpt && hf && m.positions == PositionEncoding::Learned) {
        static const std::vector<std::pair<std::string, std::string>> kTop = {
            {"embed.tokens.weight", "transformer.wte.weight"}, {"embed.positions.weight", "transformer.wpe.weight"},
            {"final_norm.weight", "transformer.ln_f.weight"},  {"final_norm.bias", "transformer.ln_f.bias"},
            {"lm_head.weight", "lm_head.weight"}};
        for (const auto& [from, to] : kTop)
            if (path == from) return Target{to};
        static const std::vector<std::pair<std::string, std::string>> kLayer = {
            {"attn_norm", "ln_1"}, {"attn.qkv", "attn.c_attn"}, {"attn.out", "attn.c_proj"},
            {"mlp_norm", "ln_2"},  {"mlp.fc1", "mlp.c_fc"},      {"mlp.fc2", "mlp.c_proj"}};
        auto layer = layerPath(path);
        if (!layer) return std::nullopt;
        const size_t leafDot = layer->second.rfind('.');
        if (leafDot == std::string::npos) return std::nullopt;
        const std::string module = layer->second.substr(0, leafDot), leaf = layer->second.substr(leafDot);
        for (const auto& [from, to] : kLayer)
            if (module == from) {
                const bool isWeight = leaf == ".weight" && module.find("norm") == std::string::npos;
                return Target{"transformer.h." + std::to_string(layer->first) + "." + to + leaf, isWeight};
            }
        return std::nullopt;
    }
    return std::nullopt;
}

Error unsupported(const std::string& path, NameConvention c, const std::string& why) {
    return makeError("export.unsupported", std::string("--names ") + std::string(nameConventionName(c)) + ": " + why, path);
}

// Mixtral's experts as transformers 5 stores them (MixtralExperts): gate_up_proj [E, 2F, D] holds
// each expert's gate (w1) rows then its up (w3) rows, down_proj [E, D, F] is w2; the graph keeps
// w1 and w3 as [E, D, F] and w2 as [E, F, D]. gate_up_proj is written once, at w3 (after w1): a
// split of F would give a device gate rows of some experts' features and up rows of others, so the
// plan's layout is expressible only with F whole and w1 and w3 laid out alike.
Status mapExperts(const Context& ctx, const ParamEntry& p, const std::pair<int64_t, std::string>& layer, NameConvention c,
                  std::vector<ParamEntry>& mapped) {
    const std::string base = "model.layers." + std::to_string(layer.first) + ".mlp.experts.";
    const std::string& leaf = layer.second;
    if (p.dims.size() != 3) return unsupported(p.path, c, "an expert weight of rank " + std::to_string(p.dims.size()) + ", not 3");
    if (leaf == "moe.experts.w1.weight") return {};  // with w3
    ParamEntry e = p;
    e.storedOrder = {0, 2, 1};
    if (leaf == "moe.experts.w2.weight") {
        e.path = base + "down_proj";
        mapped.push_back(std::move(e));
        return {};
    }
    if (leaf != "moe.experts.w3.weight") return unsupported(p.path, c, "no name in the target's module tree");
    const std::string gatePath = "layers." + std::to_string(layer.first) + ".moe.experts.w1.weight";
    const ParamEntry* gate = nullptr;
    for (const ParamEntry& q : ctx.params)
        if (q.path == gatePath) gate = &q;
    if (!gate || gate->dims != p.dims) return unsupported(p.path, c, "no gate projection " + gatePath + " of the same shape to fuse with");
    const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
    if (effectiveDims(*gate->sharding, ctx.plan.mesh) != dims)
        return unsupported(p.path, c, "the plan lays out " + gatePath + " and " + p.path +
                                          " differently; transformers stores them as one gate_up_proj");
    if (!dims[2].empty())
        return unsupported(p.path, c, "the plan splits the experts' feed-forward features; transformers stores gate and up as "
                                      "gate_up_proj [E, 2F, D], where a split of 2F is not a split of each (export with --names cfp)");
    e.path = base + "gate_up_proj";
    e.dims[2] *= 2;
    e.fusedFrom = gatePath + " + " + p.path;
    mapped.push_back(std::move(e));
    return {};
}

}  // namespace

Status applyNameConvention(Context& ctx, NameConvention c) {
    if (c == NameConvention::Cfp || c == NameConvention::Auto) return {};
    const std::string conv(nameConventionName(c));
    if (!ctx.model)
        return makeError("export.unsupported", "--names " + conv +
                                                   " maps the builders' parameter names; this model was imported and "
                                                   "keeps its own (export with --names cfp)");
    const ModelConfig& m = *ctx.model;
    if (m.family == ModelFamily::Moe && c != NameConvention::HuggingFace)
        return makeError("export.unsupported", "--names " + conv + ": torchtitan has no Mixtral-style model; use --names hf "
                                                                   "(MixtralForCausalLM) or cfp");
    if (m.family == ModelFamily::Gpt && c == NameConvention::Torchtitan)
        return makeError("export.unsupported", "--names torchtitan: torchtitan has no GPT model; use --names hf (GPT-2) or cfp");
    if (m.family == ModelFamily::Gpt && m.positions != PositionEncoding::Learned)
        return makeError("export.unsupported", "--names hf: GPT layers with rotary positions (GPT-NeoX) have no name map yet; "
                                               "export with --names cfp");
    const int64_t headDim = m.hiddenSize / m.numHeads;
    std::vector<ParamEntry> mapped;
    for (const ParamEntry& p : ctx.params) {
        auto layer = layerPath(p.path);
        const bool fusedQkv = layer && (layer->second == "attn.qkv.weight") &&
                              (m.family == ModelFamily::Llama || m.family == ModelFamily::Moe);
        if (fusedQkv) {
            // The builders' fused QKV is grouped per KV head (Megatron's layout): whole groups on a
            // device hold their query heads and their key and value, so a column split over axes
            // whose product divides the KV heads is each projection's own column split.
            const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
            int64_t ways = 1;
            for (const std::string& a : dims[1]) ways *= ctx.plan.mesh.axisSize(a).value_or(1);
            if (ways > 1 && m.numKvHeads % ways != 0)
                return unsupported(p.path, c, "the plan splits the fused QKV columns " + std::to_string(ways) +
                                                  " ways, which does not divide the " + std::to_string(m.numKvHeads) +
                                                  " KV heads into whole groups");
            const std::string base = c == NameConvention::HuggingFace ? "model.layers." + std::to_string(layer->first) + ".self_attn."
                                                                       : "layers." + std::to_string(layer->first) + ".attention.";
            const bool hf = c == NameConvention::HuggingFace;
            const std::pair<const char*, int64_t> parts[] = {{hf ? "q_proj" : "wq", m.numHeads * headDim},
                                                             {hf ? "k_proj" : "wk", m.numKvHeads * headDim},
                                                             {hf ? "v_proj" : "wv", m.numKvHeads * headDim}};
            for (const auto& [leaf, width] : parts) {
                ParamEntry e = p;
                e.path = base + leaf + ".weight";
                e.dims = {p.dims[0], width};
                e.fusedFrom = p.path;
                mapped.push_back(std::move(e));
            }
            continue;
        }
        if (m.family == ModelFamily::Moe && layer && layer->second.rfind("moe.experts.", 0) == 0) {
            CFP_TRY(mapExperts(ctx, p, *layer, c, mapped));
            continue;
        }
        auto t = targetName(p.path, m, c);
        if (!t) return unsupported(p.path, c, "no name in the target's module tree");
        if (m.family == ModelFamily::Gpt && layer && layer->second.rfind("attn.qkv.", 0) == 0) {
            // GPT-2 stores c_attn as [q | k | v]; the builders group columns per head, so only an
            // unsplit column dim means the same thing in both.
            const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
            if (!dims.back().empty())
                return unsupported(p.path, c, "the plan splits the fused QKV columns; GPT-2 stores c_attn as [q | k | v], "
                                              "where a column shard is not a group of heads (export with --names cfp, or "
                                              "pin attention replicated)");
        }
        ParamEntry e = p;
        e.path = t->name;
        e.conv1d = t->conv1d;
        mapped.push_back(std::move(e));
    }
    ctx.params = std::move(mapped);
    ctx.names = c;
    return {};
}

}  // namespace exporting

}  // namespace cfp
