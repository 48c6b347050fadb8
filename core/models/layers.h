#pragma once
// Internal to cfp_models: the building blocks the model builders share (norms, projections,
// attention, MLPs, the MoE layer, embedding and loss). Every block emits primitive HLO-vocabulary
// ops through a GraphBuilder under the caller's current scope and throws BuildError on a shape
// bug (caught by the public entry points in builders.cpp).
//
// Shapes use B = batch, S = seq, D = hidden, H = heads, K = KV heads, Dh = D / H, F = ffn,
// V = vocab, E = experts, C = expert capacity.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "models/models.h"

namespace cfp::models_detail {

// Values shared by all layers, computed once before the first layer.
struct SharedTensors {
    OpId causalMask = kNoOp;  // pred[S,S]: key position ≤ query position
    OpId ropeCos = kNoOp;     // dtype[S,Dh] (rotary only)
    OpId ropeSin = kNoOp;
};

class LayerEmitter {
public:
    LayerEmitter(GraphBuilder& builder, const ModelConfig& config, const BuildOptions& options);

    // Precision used for the loss, routing and RoPE angles: f64 for f64 models, else f32.
    DType accDtype() const { return m_acc; }

    // ---- parameters and basic blocks (under the current scope) ----
    // A trainable parameter named "<scope>.<leaf>".
    OpId weight(const std::string& leaf, std::vector<int64_t> dims);
    // x[..., in] · W[in, out] (+ bias[out] when the family uses biases). W is "<scope>.weight".
    OpId linear(OpId x, int64_t out);
    OpId layerNorm(OpId x);   // over the last dim, with weight and bias
    OpId rmsNorm(OpId x);     // over the last dim, weight only
    OpId norm(OpId x) { return m_gptStyle ? layerNorm(x) : rmsNorm(x); }
    OpId gelu(OpId x);        // tanh approximation
    OpId silu(OpId x);        // x · logistic(x)
    // Softmax over `axis` (max-subtracted).
    OpId softmax(OpId x, int64_t axis);
    // Broadcasts x to `dims`, mapping x's dims onto all result dims except `missing` (sorted).
    OpId expandTo(OpId x, const std::vector<int64_t>& dims, const std::vector<int64_t>& missing);
    // A splat constant of the given type.
    OpId splat(double value, DType dtype, std::vector<int64_t> dims);

    // ---- model pieces ----
    SharedTensors sharedTensors(int64_t seq);
    // Token (+ learned position) embedding of ids s32[B,S] → [B,S,D]. Returns also the token
    // embedding table through `tokenTable` (for the tied LM head).
    OpId embed(OpId ids, OpId& tokenTable);
    // One transformer layer (pre-norm, residuals); `auxLoss` receives the layer's MoE balance loss
    // (a scalar) or kNoOp.
    OpId layer(OpId x, int64_t index, const SharedTensors& shared, OpId& auxLoss);
    // Final norm, LM head and mean token cross-entropy → scalar loss (accDtype).
    OpId head(OpId x, OpId tokenTable, OpId labels, const std::vector<OpId>& auxLosses);

    OpId attention(OpId x, const SharedTensors& shared);
    OpId denseMlp(OpId x);
    OpId moe(OpId x, OpId& auxLoss);  // sets auxLoss when routerAuxLossCoef > 0

private:
    OpId rope(OpId x, const SharedTensors& shared);  // x[B,S,h,Dh]
    OpId repeatKv(OpId x);                           // [B,S,K,Dh] → [B,S,H,Dh]

    GraphBuilder& m_b;
    const ModelConfig& m_cfg;
    const BuildOptions& m_opt;
    DType m_dt;
    DType m_acc;
    bool m_gptStyle;
    int64_t m_batch, m_seq, m_hidden, m_heads, m_kvHeads, m_headDim;
};

}  // namespace cfp::models_detail
