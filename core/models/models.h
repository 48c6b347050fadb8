#pragma once
// Built-in model builders: GPT (GPT-2/GPT-3 style), LLaMA (RMSNorm, SwiGLU, RoPE, grouped-query
// attention) and MoE (top-k gated experts with a capacity factor, expert layers every k layers;
// Mixtral is LLaMA-style attention with MoE MLPs). Each emits the full training step: forward,
// cross-entropy loss, backward (autodiff/autodiff.h) and the AdamW update.
//
//   auto cfg = presetConfig("gpt3-175b");          // published shapes
//   BuildOptions opt;                               // batch 8, model's default sequence, bf16
//   auto model = buildTrainingStep(*cfg, opt);      // model->graph, model->loss
//
// Graph conventions (what later analysis may rely on):
//   * Parameters are named after their scope: "embed.tokens.weight", "layers.17.attn.qkv.weight",
//     "layers.3.moe.experts.w1.weight", "final_norm.weight", "lm_head.weight". Data inputs are the
//     s32 parameters "input_ids" and "labels" ([batch, seq], role input, scope "inputs"). Nothing
//     else is an input: RoPE tables and the causal mask are computed in-graph from iota.
//   * Every op carries a scope path: embed, rope, attn_mask, layers.N.{attn_norm, attn.qkv |
//     attn.q/k/v, attn.rope, attn.core, attn.out, mlp_norm, mlp.fc1/act/fc2 (GPT) |
//     mlp.gate/up/act/down (LLaMA), moe.router, moe.dispatch, moe.experts.w1/w3/act/w2,
//     moe.combine, moe.aux_loss}, final_norm, lm_head, loss.
//   * Every layer is emitted by the same function, so layers of one kind (dense or MoE) have
//     identical op sequences up to names and scopes.
//   * Trainable weights are used directly as dot operands (never through a convert or reshape), so
//     each projection is exactly one forward dot whose backward yields one dX and one dW dot.
//   * Arithmetic runs in BuildOptions::dtype except where precision matters: the loss (log-softmax
//     over the vocabulary), MoE routing (softmax, top-k, capacity counting) and the RoPE angle
//     tables are computed in f32 — or in f64 when the model dtype is f64, so that tiny f64 models
//     can be checked against finite differences.

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace cfp {

enum class ModelFamily : uint8_t { Gpt, Llama, Moe };
std::string_view modelFamilyName(ModelFamily f);  // "gpt", "llama", "moe"

// Gpt: LayerNorm with bias, biases on every projection, GeLU (tanh) MLP.
// Llama and Moe: RMSNorm, no biases, SwiGLU MLP (dense layers) / SwiGLU experts (MoE layers).
// Position encoding and embedding tying are separate fields so GPT-NeoX-like models (GPT layers
// with rotary positions and an untied head) are expressible.

enum class QkvLayout : uint8_t { Fused, Separate };

enum class PositionEncoding : uint8_t {
    Learned,  // GPT-2/3: a trainable [maxPositions, hidden] table added to the token embedding
    Rotary,   // RoPE on queries and keys inside attention (no parameters)
};
std::string_view positionEncodingName(PositionEncoding p);  // "learned", "rotary"

struct ModelConfig {
    std::string name;              // "gpt3-175b", or the config file's stem
    ModelFamily family = ModelFamily::Gpt;
    int64_t vocabSize = 0;
    int64_t hiddenSize = 0;
    int64_t numLayers = 0;
    int64_t numHeads = 0;
    int64_t numKvHeads = 0;        // == numHeads without grouped-query attention
    int64_t ffnSize = 0;           // MLP intermediate size (per expert for MoE)
    int64_t maxPositions = 0;      // context length the model was trained with
    bool tiedEmbeddings = false;   // LM head shares the token embedding (GPT)
    double normEpsilon = 1e-5;
    PositionEncoding positions = PositionEncoding::Learned;
    double ropeTheta = 10000.0;    // RoPE base (rotary positions only)
    // MoE only
    int64_t numExperts = 0;
    int64_t topK = 0;
    int64_t moeEvery = 1;          // every k-th layer is an expert layer (1 = all): layers k-1, 2k-1, …
    double capacityFactor = 1.25;
    double routerAuxLossCoef = 0.01;  // Switch-style load-balancing loss weight (0: not emitted)

    bool operator==(const ModelConfig&) const = default;
};

struct BuildOptions {
    int64_t batch = 8;
    int64_t seq = 0;               // 0: min(maxPositions, 2048)
    DType dtype = DType::BF16;     // bf16/f16 (mixed precision, fp32 master weights), f32 or f64
    QkvLayout qkv = QkvLayout::Fused;
};

struct BuiltModel {
    Graph graph;
    ModelConfig config;
    BuildOptions options;          // with seq resolved
    OpId loss = kNoOp;
};

// Names accepted by presetConfig(), e.g. "gpt3-175b", "llama2-7b", "mixtral-8x7b", in a stable
// order. Each preset cites its source in models/presets.cpp.
std::vector<std::string> presetNames();
// Error "model.unknown_preset" lists the valid names. A leading "builtin:" is accepted too.
Result<ModelConfig> presetConfig(std::string_view name);

// Hugging-Face-style config.json (GPT-2, GPT-NeoX, LLaMA/Mistral, Mixtral field names), chosen by
// `model_type` or else `architectures`. The config's name is the file's stem. Errors name the file
// and the JSON Pointer of the bad or missing field, e.g.
//   "config.json:/hidden_size: expected a positive integer [config.bad_field]".
// Codes: config.io, config.parse, config.missing_field, config.bad_field, config.too_large,
// config.unknown_model_type, and model.* from validateConfig (located at the offending field).
Result<ModelConfig> readHfConfig(const std::string& path);
// Same, from JSON text; `fileName` is only used in error locations and as the config's name stem.
Result<ModelConfig> parseHfConfig(std::string_view jsonText, const std::string& fileName);

// Checks divisibility and ranges (heads divide hidden, kv heads divide heads, top-k ≤ experts,
// positive sizes, sizes below sanity limits, …). Errors are located at the ModelConfig field name
// ("numKvHeads"). Codes: model.bad_size, model.too_large, model.heads_not_dividing,
// model.kv_heads_not_dividing, model.odd_head_dim, model.bad_experts, model.top_k_exceeds_experts,
// model.bad_value.
Status validateConfig(const ModelConfig& config);
// Checks the options against a (valid) config: batch and seq positive (model.bad_batch,
// model.bad_seq), seq ≤ maxPositions for learned positions (model.seq_exceeds_positions), a
// supported dtype (model.bad_dtype).
Status validateOptions(const ModelConfig& config, const BuildOptions& options);

// Trainable parameter count from the formula (independent of the graph), for cross-checks.
// Requires a config that passes validateConfig.
int64_t analyticParameterCount(const ModelConfig& config);

// Forward pass and scalar loss only (no backward, no optimizer): the loss is a graph output.
Result<BuiltModel> buildForward(const ModelConfig& config, const BuildOptions& options);

// Forward, loss, backward and AdamW (autodiff::appendTrainingStep with default AdamWConfig).
Result<BuiltModel> buildTrainingStep(const ModelConfig& config, const BuildOptions& options);

}  // namespace cfp
