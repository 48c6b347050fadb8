#include "models/layers.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace cfp::models_detail {

namespace {

DotDimensionNumbers dotDims(std::vector<int64_t> lhsBatch, std::vector<int64_t> rhsBatch,
                            std::vector<int64_t> lhsContracting, std::vector<int64_t> rhsContracting) {
    return DotDimensionNumbers{std::move(lhsBatch), std::move(rhsBatch), std::move(lhsContracting),
                               std::move(rhsContracting)};
}

// A large negative score for masked attention entries that stays finite in the dtype.
double maskedScore(DType t) { return t == DType::F16 ? -3.0e4 : -1.0e9; }

}  // namespace

LayerEmitter::LayerEmitter(GraphBuilder& builder, const ModelConfig& config, const BuildOptions& options)
    : m_b(builder),
      m_cfg(config),
      m_opt(options),
      m_dt(options.dtype),
      m_acc(options.dtype == DType::F64 ? DType::F64 : DType::F32),
      m_gptStyle(config.family == ModelFamily::Gpt),
      m_batch(options.batch),
      m_seq(options.seq),
      m_hidden(config.hiddenSize),
      m_heads(config.numHeads),
      m_kvHeads(config.numKvHeads),
      m_headDim(config.hiddenSize / config.numHeads) {}

OpId LayerEmitter::weight(const std::string& leaf, std::vector<int64_t> dims) {
    const std::string& s = m_b.currentScope();
    return m_b.parameter(s.empty() ? leaf : s + "." + leaf, TensorType{m_dt, std::move(dims)}, ParamRole::Trainable);
}

OpId LayerEmitter::splat(double value, DType dtype, std::vector<int64_t> dims) {
    OpId s = m_b.scalar(value, dtype);
    return dims.empty() ? s : m_b.broadcast(s, std::move(dims), {});
}

OpId LayerEmitter::expandTo(OpId x, const std::vector<int64_t>& dims, const std::vector<int64_t>& missing) {
    std::vector<int64_t> mapping;
    size_t next = 0;
    for (int64_t a = 0; a < static_cast<int64_t>(dims.size()); ++a) {
        if (next < missing.size() && missing[next] == a) {
            ++next;
            continue;
        }
        mapping.push_back(a);
    }
    return m_b.broadcast(x, dims, std::move(mapping));
}

OpId LayerEmitter::linear(OpId x, int64_t out) {
    const int64_t in = m_b.dims(x).back();
    OpId w = weight("weight", {in, out});
    OpId y = m_b.matmul(x, w);
    if (!m_gptStyle) return y;
    OpId bias = weight("bias", {out});
    const auto& yd = m_b.dims(y);
    return m_b.add(y, m_b.broadcast(bias, yd, {static_cast<int64_t>(yd.size()) - 1}));
}

OpId LayerEmitter::layerNorm(OpId x) {
    const std::vector<int64_t> dims = m_b.dims(x);
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    const double n = static_cast<double>(dims.back());
    OpId gamma = weight("weight", {dims.back()});
    OpId beta = weight("bias", {dims.back()});
    OpId mean = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(x, {last}), 1.0 / n);
    OpId centered = m_b.sub(x, expandTo(mean, dims, {last}));
    OpId var = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(m_b.mul(centered, centered), {last}), 1.0 / n);
    OpId rstd = m_b.unary(OpKind::Rsqrt, m_b.binaryScalar(OpKind::Add, var, m_cfg.normEpsilon));
    OpId normed = m_b.mul(centered, expandTo(rstd, dims, {last}));
    OpId scaled = m_b.mul(normed, m_b.broadcast(gamma, dims, {last}));
    return m_b.add(scaled, m_b.broadcast(beta, dims, {last}));
}

OpId LayerEmitter::rmsNorm(OpId x) {
    const std::vector<int64_t> dims = m_b.dims(x);
    const int64_t last = static_cast<int64_t>(dims.size()) - 1;
    const double n = static_cast<double>(dims.back());
    OpId gamma = weight("weight", {dims.back()});
    OpId meanSquare = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(m_b.mul(x, x), {last}), 1.0 / n);
    OpId rms = m_b.unary(OpKind::Rsqrt, m_b.binaryScalar(OpKind::Add, meanSquare, m_cfg.normEpsilon));
    OpId normed = m_b.mul(x, expandTo(rms, dims, {last}));
    return m_b.mul(normed, m_b.broadcast(gamma, dims, {last}));
}

OpId LayerEmitter::gelu(OpId x) {
    // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
    const double kSqrt2OverPi = std::sqrt(2.0 / std::numbers::pi);
    OpId cube = m_b.mul(m_b.mul(x, x), x);
    OpId inner = m_b.add(x, m_b.binaryScalar(OpKind::Multiply, cube, 0.044715));
    OpId t = m_b.unary(OpKind::Tanh, m_b.binaryScalar(OpKind::Multiply, inner, kSqrt2OverPi));
    OpId onePlus = m_b.binaryScalar(OpKind::Add, t, 1.0);
    return m_b.mul(m_b.binaryScalar(OpKind::Multiply, x, 0.5), onePlus);
}

OpId LayerEmitter::silu(OpId x) { return m_b.mul(x, m_b.unary(OpKind::Logistic, x)); }

OpId LayerEmitter::softmax(OpId x, int64_t axis) {
    const std::vector<int64_t> dims = m_b.dims(x);
    OpId max = m_b.reduce(x, {axis}, ReduceKind::Max);
    OpId e = m_b.exp(m_b.sub(x, expandTo(max, dims, {axis})));
    OpId sum = m_b.reduce(e, {axis});
    return m_b.div(e, expandTo(sum, dims, {axis}));
}

SharedTensors LayerEmitter::sharedTensors(int64_t seq) {
    SharedTensors out;
    {
        auto s = m_b.scope("attn_mask");
        const TensorType idx{DType::S32, {seq, seq}};
        OpId query = m_b.iota(idx, 0);
        OpId key = m_b.iota(idx, 1);
        out.causalMask = m_b.compare(key, query, ComparisonDirection::LE);
    }
    if (m_cfg.positions == PositionEncoding::Rotary) {
        // Tables computed in-graph (no extra inputs), HF convention: angle[p, i] = p · θ^(-2i/Dh)
        // for i < Dh/2, repeated for the second half; rotate-half pairs element i with i + Dh/2.
        auto s = m_b.scope("rope");
        const int64_t half = m_headDim / 2;
        const TensorType t{m_acc, {seq, half}};
        OpId pos = m_b.iota(t, 0);
        OpId freqIndex = m_b.iota(t, 1);
        OpId invFreq = m_b.exp(m_b.binaryScalar(OpKind::Multiply, freqIndex,
                                                -2.0 * std::log(m_cfg.ropeTheta) / static_cast<double>(m_headDim)));
        OpId angle = m_b.mul(pos, invFreq);
        OpId full = m_b.concatenate({angle, angle}, 1);
        out.ropeCos = m_b.convert(m_b.unary(OpKind::Cosine, full), m_dt);
        out.ropeSin = m_b.convert(m_b.unary(OpKind::Sine, full), m_dt);
    }
    return out;
}

OpId LayerEmitter::embed(OpId ids, OpId& tokenTable) {
    auto s = m_b.scope("embed");
    OpId x;
    {
        auto t = m_b.scope("tokens");
        tokenTable = weight("weight", {m_cfg.vocabSize, m_hidden});
        GatherDimensionNumbers g;
        g.offsetDims = {2};
        g.collapsedSliceDims = {0};
        g.startIndexMap = {0};
        g.indexVectorDim = 2;
        g.sliceSizes = {1, m_hidden};
        x = m_b.gather(tokenTable, ids, g);
    }
    if (m_cfg.positions == PositionEncoding::Learned) {
        auto p = m_b.scope("positions");
        OpId table = weight("weight", {m_cfg.maxPositions, m_hidden});
        OpId used = m_seq == m_cfg.maxPositions ? table : m_b.sliceAxis(table, 0, 0, m_seq);
        x = m_b.add(x, m_b.broadcast(used, {m_batch, m_seq, m_hidden}, {1, 2}));
    }
    return x;
}

OpId LayerEmitter::rope(OpId x, const SharedTensors& shared) {
    auto s = m_b.scope("rope");
    const std::vector<int64_t> dims = m_b.dims(x);  // [B,S,h,Dh]
    const int64_t half = m_headDim / 2;
    OpId cos = m_b.broadcast(shared.ropeCos, dims, {1, 3});
    OpId sin = m_b.broadcast(shared.ropeSin, dims, {1, 3});
    OpId first = m_b.sliceAxis(x, 3, 0, half);
    OpId second = m_b.sliceAxis(x, 3, half, m_headDim);
    OpId rotated = m_b.concatenate({m_b.neg(second), first}, 3);
    return m_b.add(m_b.mul(x, cos), m_b.mul(rotated, sin));
}

OpId LayerEmitter::repeatKv(OpId x) {
    // Query head j uses KV head j / (H/K): broadcast a group axis after the KV-head axis, then fold.
    const int64_t group = m_heads / m_kvHeads;
    OpId wide = m_b.broadcast(x, {m_batch, m_seq, m_kvHeads, group, m_headDim}, {0, 1, 2, 4});
    return m_b.reshape(wide, {m_batch, m_seq, m_heads, m_headDim});
}

OpId LayerEmitter::attention(OpId x, const SharedTensors& shared) {
    auto s = m_b.scope("attn");
    const int64_t B = m_batch, S = m_seq, H = m_heads, K = m_kvHeads, Dh = m_headDim;
    OpId q, k, v;  // [B,S,H,Dh], [B,S,K,Dh], [B,S,K,Dh]
    if (m_opt.qkv == QkvLayout::Fused) {
        // One [D, (H + 2K)·Dh] projection. Columns are grouped per KV head as (queries of the
        // group, key, value) — Megatron-LM's layout — so that splitting the columns over devices
        // splits whole heads and the Q/K/V slices below stay local to a device.
        auto p = m_b.scope("qkv");
        const int64_t group = H / K;
        OpId qkv = linear(x, (H + 2 * K) * Dh);
        OpId grouped = m_b.reshape(qkv, {B, S, K, group + 2, Dh});
        q = m_b.reshape(m_b.sliceAxis(grouped, 3, 0, group), {B, S, H, Dh});
        k = m_b.reshape(m_b.sliceAxis(grouped, 3, group, group + 1), {B, S, K, Dh});
        v = m_b.reshape(m_b.sliceAxis(grouped, 3, group + 1, group + 2), {B, S, K, Dh});
    } else {
        {
            auto p = m_b.scope("q");
            q = m_b.reshape(linear(x, H * Dh), {B, S, H, Dh});
        }
        {
            auto p = m_b.scope("k");
            k = m_b.reshape(linear(x, K * Dh), {B, S, K, Dh});
        }
        {
            auto p = m_b.scope("v");
            v = m_b.reshape(linear(x, K * Dh), {B, S, K, Dh});
        }
    }
    if (m_cfg.positions == PositionEncoding::Rotary) {
        q = rope(q, shared);
        k = rope(k, shared);
    }
    OpId context;
    {
        auto c = m_b.scope("core");
        if (K < H) {
            k = repeatKv(k);
            v = repeatKv(v);
        }
        OpId qh = m_b.transpose(q, {0, 2, 1, 3});  // [B,H,S,Dh]
        OpId kh = m_b.transpose(k, {0, 2, 1, 3});
        OpId vh = m_b.transpose(v, {0, 2, 1, 3});
        OpId scores = m_b.dot(qh, kh, dotDims({0, 1}, {0, 1}, {3}, {3}));  // [B,H,S,S]
        scores = m_b.binaryScalar(OpKind::Multiply, scores, 1.0 / std::sqrt(static_cast<double>(Dh)));
        const std::vector<int64_t> sd = {B, H, S, S};
        OpId mask = m_b.broadcast(shared.causalMask, sd, {2, 3});
        OpId masked = m_b.select(mask, scores, splat(maskedScore(m_dt), m_dt, sd));
        OpId probs = softmax(masked, 3);
        OpId ctx = m_b.dot(probs, vh, dotDims({0, 1}, {0, 1}, {3}, {2}));  // [B,H,S,Dh]
        context = m_b.reshape(m_b.transpose(ctx, {0, 2, 1, 3}), {B, S, H * Dh});
    }
    auto o = m_b.scope("out");
    return linear(context, m_hidden);
}

OpId LayerEmitter::denseMlp(OpId x) {
    auto s = m_b.scope("mlp");
    const int64_t F = m_cfg.ffnSize;
    if (m_gptStyle) {
        OpId h;
        {
            auto p = m_b.scope("fc1");
            h = linear(x, F);
        }
        {
            auto p = m_b.scope("act");
            h = gelu(h);
        }
        auto p = m_b.scope("fc2");
        return linear(h, m_hidden);
    }
    OpId gate, up, act;
    {
        auto p = m_b.scope("gate");
        gate = linear(x, F);
    }
    {
        auto p = m_b.scope("up");
        up = linear(x, F);
    }
    {
        auto p = m_b.scope("act");
        act = m_b.mul(silu(gate), up);
    }
    auto p = m_b.scope("down");
    return linear(act, m_hidden);
}

OpId LayerEmitter::moe(OpId x, OpId& auxLoss) {
    // GShard/Switch dense dispatch with groups = sequences: each sequence routes its S tokens
    // into E experts with a fixed capacity C = ceil(capacityFactor · S · k / E).
    auto s = m_b.scope("moe");
    const int64_t B = m_batch, S = m_seq, D = m_hidden, E = m_cfg.numExperts, topK = m_cfg.topK;
    const int64_t F = m_cfg.ffnSize;
    const int64_t capacity = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(m_cfg.capacityFactor * static_cast<double>(S * topK) / static_cast<double>(E))));
    const DType r = m_acc;
    const std::vector<int64_t> tokE = {B, S, E};

    // Router: logits in the model dtype (the weight stays a direct dot operand), routing in f32/f64.
    OpId probs;
    std::vector<OpId> choice(static_cast<size_t>(topK)), gate(static_cast<size_t>(topK));
    {
        auto p = m_b.scope("router");
        OpId w = weight("weight", {D, E});
        OpId logits = m_b.convert(m_b.matmul(x, w), r);  // [B,S,E]
        probs = softmax(logits, 2);
        // Top-k by repeated max: choice i is a 0/1 mask over experts, its gate the probability.
        OpId remaining = probs;
        for (int64_t i = 0; i < topK; ++i) {
            OpId best = m_b.reduce(remaining, {2}, ReduceKind::Max);  // [B,S]
            OpId hit = m_b.compare(remaining, expandTo(best, tokE, {2}), ComparisonDirection::EQ);
            choice[static_cast<size_t>(i)] = m_b.convert(hit, r);
            gate[static_cast<size_t>(i)] = best;
            if (i + 1 < topK) remaining = m_b.select(hit, splat(-1.0, r, tokE), remaining);
        }
        if (topK > 1) {  // renormalise the k gates to sum to one (GShard top-2, Mixtral)
            OpId total = gate[0];
            for (int64_t i = 1; i < topK; ++i) total = m_b.add(total, gate[static_cast<size_t>(i)]);
            for (auto& g : gate) g = m_b.div(g, total);
        }
    }

    OpId dispatch = kNoOp, combine = kNoOp, dispatched;
    {
        auto p = m_b.scope("dispatch");
        // Position of each token in its expert's buffer: an inclusive cumulative sum over the
        // sequence, as a dot with the lower-triangular L[t, t'] = (t' ≤ t); later choices queue
        // behind all tokens of earlier choices (GShard).
        const TensorType idx{DType::S32, {S, S}};
        OpId lower = m_b.convert(m_b.compare(m_b.iota(idx, 1), m_b.iota(idx, 0), ComparisonDirection::LE), r);
        const std::vector<int64_t> slots = {B, S, E, capacity};
        OpId slotIndex = m_b.iota(TensorType{r, slots}, 3);
        OpId offset = kNoOp;  // [B,E] tokens queued by earlier choices
        for (int64_t i = 0; i < topK; ++i) {
            OpId mask = choice[static_cast<size_t>(i)];
            OpId cum = m_b.transpose(m_b.dot(lower, mask, dotDims({}, {}, {1}, {1})), {1, 0, 2});  // [B,S,E]
            OpId pos = m_b.binaryScalar(OpKind::Subtract, cum, 1.0);
            if (offset != kNoOp) pos = m_b.add(pos, expandTo(offset, tokE, {1}));
            OpId count = m_b.reduce(mask, {1});
            offset = offset == kNoOp ? count : m_b.add(offset, count);
            OpId fits = m_b.convert(m_b.compare(pos, splat(static_cast<double>(capacity), r, tokE),
                                                ComparisonDirection::LT), r);
            OpId keep = m_b.mul(mask, fits);
            OpId slot = m_b.convert(m_b.compare(expandTo(pos, slots, {3}), slotIndex, ComparisonDirection::EQ), r);
            OpId d = m_b.mul(slot, expandTo(keep, slots, {3}));                        // [B,S,E,C]
            OpId c = m_b.mul(d, expandTo(gate[static_cast<size_t>(i)], slots, {2, 3}));
            dispatch = dispatch == kNoOp ? d : m_b.add(dispatch, d);
            combine = combine == kNoOp ? c : m_b.add(combine, c);
        }
        // einsum "bsec,bsd->becd"
        dispatched = m_b.dot(m_b.convert(dispatch, m_dt), x, dotDims({0}, {0}, {1}, {1}));  // [B,E,C,D]
    }

    OpId expertOut;
    {
        auto p = m_b.scope("experts");
        OpId h1, h3, act;
        // Expert is the batch dim of each dot; per-expert weights [E, D, F] and [E, F, D].
        {
            auto w = m_b.scope("w1");
            h1 = m_b.dot(dispatched, weight("weight", {E, D, F}), dotDims({1}, {0}, {3}, {1}));  // [E,B,C,F]
        }
        {
            auto w = m_b.scope("w3");
            h3 = m_b.dot(dispatched, weight("weight", {E, D, F}), dotDims({1}, {0}, {3}, {1}));
        }
        {
            auto a = m_b.scope("act");
            act = m_b.mul(silu(h1), h3);
        }
        auto w = m_b.scope("w2");
        expertOut = m_b.dot(act, weight("weight", {E, F, D}), dotDims({0}, {0}, {3}, {1}));  // [E,B,C,D]
    }

    OpId out;
    {
        auto p = m_b.scope("combine");
        // einsum "bsec,ebcd->bsd"
        out = m_b.dot(m_b.convert(combine, m_dt), expertOut, dotDims({0}, {1}, {2, 3}, {0, 2}));
    }

    if (m_cfg.routerAuxLossCoef > 0.0) {
        // Switch Transformer load balancing: E · Σ_e f_e · P_e, f = fraction of tokens whose first
        // choice is e, P = mean router probability of e.
        auto p = m_b.scope("aux_loss");
        const double perToken = 1.0 / static_cast<double>(B * S);
        OpId fraction = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(choice[0], {0, 1}), perToken);
        OpId meanProb = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(probs, {0, 1}), perToken);
        OpId balance = m_b.reduce(m_b.mul(fraction, meanProb), {0});
        OpId weighted = m_b.binaryScalar(OpKind::Multiply, balance,
                                         m_cfg.routerAuxLossCoef * static_cast<double>(E));
        auxLoss = weighted;
    }
    return out;
}

OpId LayerEmitter::layer(OpId x, int64_t index, const SharedTensors& shared, OpId& auxLoss) {
    auxLoss = kNoOp;
    auto s = m_b.scope("layers." + std::to_string(index));
    OpId h;
    {
        auto n = m_b.scope("attn_norm");
        h = norm(x);
    }
    x = m_b.add(x, attention(h, shared));
    {
        auto n = m_b.scope("mlp_norm");
        h = norm(x);
    }
    const bool expert = m_cfg.family == ModelFamily::Moe && index % m_cfg.moeEvery == m_cfg.moeEvery - 1;
    return m_b.add(x, expert ? moe(h, auxLoss) : denseMlp(h));
}

OpId LayerEmitter::head(OpId x, OpId tokenTable, OpId labels, const std::vector<OpId>& auxLosses) {
    {
        auto n = m_b.scope("final_norm");
        x = norm(x);
    }
    OpId logits;
    {
        auto h = m_b.scope("lm_head");
        if (m_cfg.tiedEmbeddings) {
            // Tied: the token-embedding parameter itself is the dot operand ([V,D], contract D).
            logits = m_b.dot(x, tokenTable, dotDims({}, {}, {2}, {1}));
        } else {
            logits = m_b.matmul(x, weight("weight", {m_hidden, m_cfg.vocabSize}));
        }
    }
    auto l = m_b.scope("loss");
    const int64_t V = m_cfg.vocabSize;
    const std::vector<int64_t> dims = {m_batch, m_seq, V};
    OpId z = m_b.convert(logits, m_acc);
    OpId max = m_b.reduce(z, {2}, ReduceKind::Max);
    OpId shifted = m_b.sub(z, expandTo(max, dims, {2}));
    OpId logSum = m_b.log(m_b.reduce(m_b.exp(shifted), {2}));  // [B,S]
    OpId vocabIndex = m_b.iota(TensorType{DType::S32, dims}, 2);
    OpId oneHot = m_b.convert(m_b.compare(vocabIndex, expandTo(labels, dims, {2}), ComparisonDirection::EQ), m_acc);
    OpId picked = m_b.reduce(m_b.mul(shifted, oneHot), {2});
    OpId nll = m_b.sub(logSum, picked);
    OpId loss = m_b.binaryScalar(OpKind::Multiply, m_b.reduce(nll, {0, 1}),
                                 1.0 / static_cast<double>(m_batch * m_seq));
    // Auxiliary losses are summed here, not inside the layers, so every layer stays identical.
    for (OpId aux : auxLosses) loss = m_b.add(loss, m_b.convert(aux, m_acc));
    return loss;
}

}  // namespace cfp::models_detail
