// Presets, validation and the closed-form parameter count.
#include <algorithm>
#include <array>

#include "models/models.h"

namespace cfp {

std::string_view modelFamilyName(ModelFamily f) {
    switch (f) {
        case ModelFamily::Gpt: return "gpt";
        case ModelFamily::Llama: return "llama";
        case ModelFamily::Moe: return "moe";
    }
    return "?";
}

std::string_view positionEncodingName(PositionEncoding p) {
    return p == PositionEncoding::Learned ? "learned" : "rotary";
}

namespace {

struct Preset {
    const char* name;
    ModelConfig (*make)();
};

// GPT-3: Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (n_layers,
// d_model, n_heads, d_head); vocabulary 50257 (GPT-2 BPE), context 2048, d_ff = 4·d_model, tied
// embeddings, learned positions. Two rows of the table are inconsistent with d_head and are fixed
// the way public reproductions (Megatron-LM, Alpa) do: 1.3B uses 16 heads of 128 (the table says
// 24 heads with d_model 2048), 13B uses d_model 5120 = 40·128 (the table prints 5140).
ModelConfig gpt3(const char* name, int64_t layers, int64_t hidden, int64_t heads) {
    ModelConfig c;
    c.name = name;
    c.family = ModelFamily::Gpt;
    c.vocabSize = 50257;
    c.hiddenSize = hidden;
    c.numLayers = layers;
    c.numHeads = heads;
    c.numKvHeads = heads;
    c.ffnSize = 4 * hidden;
    c.maxPositions = 2048;
    c.tiedEmbeddings = true;
    c.normEpsilon = 1e-5;
    c.positions = PositionEncoding::Learned;
    return c;
}

// GPT-2 small as published on the Hugging Face hub (openai-community/gpt2 config.json):
// 124,439,808 parameters.
ModelConfig gpt2() {
    ModelConfig c = gpt3("gpt2", 12, 768, 12);
    c.maxPositions = 1024;
    return c;
}

// LLaMA 2: Touvron et al. 2023, Table 1 and the released config.json files (meta-llama/Llama-2-*-hf):
// vocabulary 32000, context 4096, RMSNorm eps 1e-5, RoPE theta 10000, untied head; 70B uses
// grouped-query attention with 8 KV heads.
ModelConfig llama(const char* name, int64_t layers, int64_t hidden, int64_t heads, int64_t kvHeads, int64_t ffn) {
    ModelConfig c;
    c.name = name;
    c.family = ModelFamily::Llama;
    c.vocabSize = 32000;
    c.hiddenSize = hidden;
    c.numLayers = layers;
    c.numHeads = heads;
    c.numKvHeads = kvHeads;
    c.ffnSize = ffn;
    c.maxPositions = 4096;
    c.tiedEmbeddings = false;
    c.normEpsilon = 1e-5;
    c.positions = PositionEncoding::Rotary;
    c.ropeTheta = 10000.0;
    return c;
}

// Llama 3 8B: meta-llama/Meta-Llama-3-8B config.json: vocabulary 128256, 32 layers, d 4096,
// 32 heads, 8 KV heads, ffn 14336, context 8192, RoPE theta 500000.
ModelConfig llama3_8b() {
    ModelConfig c = llama("llama3-8b", 32, 4096, 32, 8, 14336);
    c.vocabSize = 128256;
    c.maxPositions = 8192;
    c.ropeTheta = 500000.0;
    return c;
}

// Mixtral 8x7B: Jiang et al. 2024, "Mixtral of Experts", Table 1, and mistralai/Mixtral-8x7B-v0.1
// config.json: d 4096, 32 layers, 32 heads, 8 KV heads, ffn 14336 per expert, 8 experts, top-2 in
// every layer, vocabulary 32000, context 32768, RoPE theta 1e6, router_aux_loss_coef 0.02.
// Mixtral itself is dropless; the builder uses a fixed capacity (factor 1.25) as GShard does.
ModelConfig mixtral8x7b() {
    ModelConfig c = llama("mixtral-8x7b", 32, 4096, 32, 8, 14336);
    c.family = ModelFamily::Moe;
    c.maxPositions = 32768;
    c.ropeTheta = 1e6;
    c.numExperts = 8;
    c.topK = 2;
    c.moeEvery = 1;
    c.routerAuxLossCoef = 0.02;
    return c;
}

const std::array kPresets = {
    Preset{"gpt2", [] { return gpt2(); }},
    Preset{"gpt3-125m", [] { return gpt3("gpt3-125m", 12, 768, 12); }},
    Preset{"gpt3-350m", [] { return gpt3("gpt3-350m", 24, 1024, 16); }},
    Preset{"gpt3-760m", [] { return gpt3("gpt3-760m", 24, 1536, 16); }},
    Preset{"gpt3-1.3b", [] { return gpt3("gpt3-1.3b", 24, 2048, 16); }},
    Preset{"gpt3-2.7b", [] { return gpt3("gpt3-2.7b", 32, 2560, 32); }},
    Preset{"gpt3-6.7b", [] { return gpt3("gpt3-6.7b", 32, 4096, 32); }},
    Preset{"gpt3-13b", [] { return gpt3("gpt3-13b", 40, 5120, 40); }},
    Preset{"gpt3-175b", [] { return gpt3("gpt3-175b", 96, 12288, 96); }},
    Preset{"llama2-7b", [] { return llama("llama2-7b", 32, 4096, 32, 32, 11008); }},
    Preset{"llama2-13b", [] { return llama("llama2-13b", 40, 5120, 40, 40, 13824); }},
    Preset{"llama2-70b", [] { return llama("llama2-70b", 80, 8192, 64, 8, 28672); }},
    Preset{"llama3-8b", [] { return llama3_8b(); }},
    Preset{"mixtral-8x7b", [] { return mixtral8x7b(); }},
};

// Sanity limits: far above any published model, far below sizes whose products could overflow.
constexpr int64_t kMaxHidden = int64_t{1} << 20;
constexpr int64_t kMaxFfn = int64_t{1} << 22;
constexpr int64_t kMaxVocab = int64_t{1} << 24;
constexpr int64_t kMaxLayers = int64_t{1} << 14;
constexpr int64_t kMaxPositions = int64_t{1} << 24;
constexpr int64_t kMaxExperts = int64_t{1} << 12;

Status checkSize(int64_t value, int64_t limit, const char* field) {
    if (value <= 0)
        return makeError("model.bad_size", std::string(field) + " must be positive, got " + std::to_string(value), field);
    if (value > limit)
        return makeError("model.too_large", std::string(field) + " = " + std::to_string(value) +
                                                " exceeds the sanity limit " + std::to_string(limit), field);
    return {};
}

}  // namespace

std::vector<std::string> presetNames() {
    std::vector<std::string> out;
    for (const Preset& p : kPresets) out.emplace_back(p.name);
    return out;
}

Result<ModelConfig> presetConfig(std::string_view name) {
    if (name.starts_with("builtin:")) name.remove_prefix(8);
    for (const Preset& p : kPresets)
        if (name == p.name) return p.make();
    std::string valid;
    for (const Preset& p : kPresets) valid += (valid.empty() ? "" : ", ") + std::string(p.name);
    return makeError("model.unknown_preset", "unknown model preset '" + std::string(name) + "'; valid: " + valid);
}

Status validateConfig(const ModelConfig& c) {
    CFP_TRY(checkSize(c.vocabSize, kMaxVocab, "vocabSize"));
    CFP_TRY(checkSize(c.hiddenSize, kMaxHidden, "hiddenSize"));
    CFP_TRY(checkSize(c.numLayers, kMaxLayers, "numLayers"));
    CFP_TRY(checkSize(c.numHeads, c.hiddenSize, "numHeads"));
    CFP_TRY(checkSize(c.numKvHeads, c.numHeads, "numKvHeads"));
    CFP_TRY(checkSize(c.ffnSize, kMaxFfn, "ffnSize"));
    CFP_TRY(checkSize(c.maxPositions, kMaxPositions, "maxPositions"));
    if (c.hiddenSize % c.numHeads != 0)
        return makeError("model.heads_not_dividing", "numHeads " + std::to_string(c.numHeads) +
                                                         " does not divide hiddenSize " + std::to_string(c.hiddenSize),
                         "numHeads");
    if (c.numHeads % c.numKvHeads != 0)
        return makeError("model.kv_heads_not_dividing", "numKvHeads " + std::to_string(c.numKvHeads) +
                                                            " does not divide numHeads " + std::to_string(c.numHeads),
                         "numKvHeads");
    if (c.positions == PositionEncoding::Rotary && (c.hiddenSize / c.numHeads) % 2 != 0)
        return makeError("model.odd_head_dim", "rotary positions need an even head dimension, got " +
                                                   std::to_string(c.hiddenSize / c.numHeads), "numHeads");
    if (!(c.normEpsilon > 0.0 && c.normEpsilon < 1.0))
        return makeError("model.bad_value", "normEpsilon must be in (0, 1)", "normEpsilon");
    if (c.positions == PositionEncoding::Rotary && !(c.ropeTheta > 1.0 && c.ropeTheta < 1e12))
        return makeError("model.bad_value", "ropeTheta must be in (1, 1e12)", "ropeTheta");
    if (c.family == ModelFamily::Moe) {
        if (c.numExperts < 1)
            return makeError("model.bad_experts", "a MoE model needs at least one expert", "numExperts");
        CFP_TRY(checkSize(c.numExperts, kMaxExperts, "numExperts"));
        CFP_TRY(checkSize(c.topK, kMaxExperts, "topK"));
        if (c.topK > c.numExperts)
            return makeError("model.top_k_exceeds_experts", "topK " + std::to_string(c.topK) + " exceeds numExperts " +
                                                                std::to_string(c.numExperts), "topK");
        CFP_TRY(checkSize(c.moeEvery, kMaxLayers, "moeEvery"));
        if (!(c.capacityFactor > 0.0 && c.capacityFactor <= 1e3))
            return makeError("model.bad_value", "capacityFactor must be in (0, 1000]", "capacityFactor");
        if (!(c.routerAuxLossCoef >= 0.0 && c.routerAuxLossCoef < 1e3))
            return makeError("model.bad_value", "routerAuxLossCoef must be in [0, 1000)", "routerAuxLossCoef");
    }
    return {};
}

Status validateOptions(const ModelConfig& c, const BuildOptions& o) {
    if (o.batch <= 0 || o.batch > (int64_t{1} << 24))
        return makeError("model.bad_batch", "batch must be in [1, 2^24], got " + std::to_string(o.batch), "batch");
    if (o.seq < 0 || o.seq > kMaxPositions)
        return makeError("model.bad_seq", "seq must be in [1, 2^24] (0: model default), got " + std::to_string(o.seq),
                         "seq");
    const int64_t seq = o.seq == 0 ? std::min<int64_t>(c.maxPositions, 2048) : o.seq;
    if (c.positions == PositionEncoding::Learned && seq > c.maxPositions)
        return makeError("model.seq_exceeds_positions", "seq " + std::to_string(seq) + " exceeds the " +
                                                            std::to_string(c.maxPositions) +
                                                            " learned positions of the model", "seq");
    if (o.dtype != DType::BF16 && o.dtype != DType::F16 && o.dtype != DType::F32 && o.dtype != DType::F64)
        return makeError("model.bad_dtype", "model dtype must be bf16, f16, f32 or f64, got " +
                                                std::string(dtypeName(o.dtype)), "dtype");
    return {};
}

int64_t analyticParameterCount(const ModelConfig& c) {
    const int64_t d = c.hiddenSize, f = c.ffnSize, v = c.vocabSize;
    const int64_t kvDim = c.numKvHeads * (d / c.numHeads);
    const bool gpt = c.family == ModelFamily::Gpt;

    int64_t total = v * d;                                           // token embedding
    if (c.positions == PositionEncoding::Learned) total += c.maxPositions * d;
    if (!c.tiedEmbeddings) total += d * v;                           // untied LM head (no bias)
    total += gpt ? 2 * d : d;                                        // final norm

    const int64_t norms = gpt ? 2 * (2 * d) : 2 * d;                 // two norms per layer
    int64_t attn = d * (d + 2 * kvDim) + d * d;                      // q, k, v, out
    if (gpt) attn += (d + 2 * kvDim) + d;                            // their biases
    const int64_t denseMlp = gpt ? 2 * d * f + f + d : 3 * d * f;
    const int64_t expertLayerMlp = d * c.numExperts + c.numExperts * 3 * d * f;  // router + experts

    for (int64_t layer = 0; layer < c.numLayers; ++layer) {
        const bool expert = c.family == ModelFamily::Moe && layer % c.moeEvery == c.moeEvery - 1;
        total += norms + attn + (expert ? expertLayerMlp : denseMlp);
    }
    return total;
}

}  // namespace cfp
