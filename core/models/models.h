#pragma once
// Built-in model builders: GPT (GPT-2/GPT-3 style), LLaMA (RMSNorm, SwiGLU, RoPE, grouped-query
// attention) and MoE (top-k gated experts with a capacity factor, expert layers every k layers;
// Mixtral is LLaMA-style attention with MoE MLPs). Each emits the full training step: forward,
// cross-entropy loss, backward (autodiff/autodiff.h) and the AdamW update.
//
//   auto cfg = presetConfig("gpt3-175b");          // published shapes
//   BuildOptions opt;                               // batch 8, model's default sequence, bf16
//   auto model = buildTrainingStep(*cfg, opt);      // model->graph, model->loss

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace cfp {

enum class ModelFamily : uint8_t { Gpt, Llama, Moe };
std::string_view modelFamilyName(ModelFamily f);  // "gpt", "llama", "moe"

enum class QkvLayout : uint8_t { Fused, Separate };

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
    // MoE only
    int64_t numExperts = 0;
    int64_t topK = 0;
    int64_t moeEvery = 1;          // every k-th layer is an expert layer (1 = all)
    double capacityFactor = 1.25;
};

struct BuildOptions {
    int64_t batch = 8;
    int64_t seq = 0;               // 0: min(maxPositions, 2048)
    DType dtype = DType::BF16;     // bf16 (mixed precision, fp32 master weights) or f32
    QkvLayout qkv = QkvLayout::Fused;
};

struct BuiltModel {
    Graph graph;
    ModelConfig config;
    BuildOptions options;          // with seq resolved
    OpId loss = kNoOp;
};

// Names accepted by presetConfig(), e.g. "gpt3-175b", "llama2-7b", "mixtral-8x7b".
std::vector<std::string> presetNames();
// Error "model.unknown_preset" lists the valid names.
Result<ModelConfig> presetConfig(std::string_view name);
// Hugging-Face-style config.json (GPT-2 / GPT-NeoX, LLaMA, Mixtral field names). Errors name the
// file and the JSON Pointer of the bad or missing field.
Result<ModelConfig> readHfConfig(const std::string& path);
// Checks divisibility and ranges (heads divide hidden, kv heads divide heads, top-k ≤ experts, …).
Status validateConfig(const ModelConfig& config);

// Trainable parameter count from the formula (independent of the graph), for cross-checks.
int64_t analyticParameterCount(const ModelConfig& config);

Result<BuiltModel> buildTrainingStep(const ModelConfig& config, const BuildOptions& options);

}  // namespace cfp
