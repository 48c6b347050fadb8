// The Megatron-LM export: parallelism flags, checked against the layouts Megatron-LM uses (docs/exporters.md),
// and the recognition of that layout, which the torchtitan export shares (export_torchtitan.cpp).

#include "export/export_internal.h"
#include "plan/pipeline_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

namespace cfp::exporting {

namespace {

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

Error notUniform(const LayoutTarget& target, const std::string& reason, const std::string& where) {
    return makeError("export.not_uniform", "plan is not a uniform " + std::string(target.framework) + " layout: " + reason, where);
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// The model, batch and precision flags of a builder-made model (Context::model): its shape, the
// global batch and the micro-batch per data-parallel rank (Megatron-LM's data-parallel size is
// the devices over `tpSize`; the plan's rounds are the accumulation steps), the sequence length,
// the precision. The vocabulary comes from Megatron-LM's tokenizer and is not written; nor are
// MoE flags.
std::string modelFlags(const Context& ctx, int64_t tpSize) {
    const ModelConfig& c = *ctx.model;
    auto flag = [](const std::string& name, int64_t v) { return " --" + name + " " + std::to_string(v); };
    std::string f = flag("num-layers", c.numLayers) + flag("hidden-size", c.hiddenSize) + flag("ffn-hidden-size", c.ffnSize) +
                    flag("num-attention-heads", c.numHeads);
    if (c.numKvHeads > 0 && c.numKvHeads != c.numHeads) f += " --group-query-attention" + flag("num-query-groups", c.numKvHeads);
    if (c.family == ModelFamily::Gpt) {
        f += " --normalization LayerNorm";
    } else {
        f += " --normalization RMSNorm --swiglu --disable-bias-linear";
    }
    f += " --norm-epsilon " + number(c.normEpsilon);
    if (c.positions == PositionEncoding::Rotary) f += " --position-embedding-type rope --rotary-base " + number(c.ropeTheta);
    else f += " --position-embedding-type learned_absolute";
    if (!c.tiedEmbeddings) f += " --untie-embeddings-and-output-weights";
    const BuildOptions build = ctx.plan.build.value_or(BuildOptions{});
    const int64_t seq = build.seq > 0 ? build.seq : std::min<int64_t>(c.maxPositions, 2048);
    f += flag("seq-length", seq) + flag("max-position-embeddings", std::max(c.maxPositions, seq));
    if (const auto batch = planBatch(ctx.plan, ctx.graph)) {
        const int64_t dp = std::max<int64_t>(1, ctx.plan.mesh.deviceCount() / std::max<int64_t>(1, tpSize));
        const int64_t perRank = batch->global() / (std::max<int64_t>(1, batch->accumulation) * dp);
        if (perRank > 0 && perRank * batch->accumulation * dp == batch->global()) f += flag("micro-batch-size", perRank);
        f += flag("global-batch-size", batch->global());
    }
    if (build.dtype == DType::BF16) f += " --bf16";
    else if (build.dtype == DType::F16) f += " --fp16";
    return f;
}

}  // namespace

// Megatron-LM and torchtitan make the token embedding vocabulary-parallel (rows over the
// tensor-parallel axis) and the output layer column-parallel over the vocabulary, whatever the plan
// does: say where the plan differs, since the job's memory and communication there are the
// framework's, not the plan's.
void vocabularyLayoutNotes(const Context& ctx, const std::string& tp, std::string_view framework) {
    for (const ParamEntry& p : ctx.params) {
        const bool table = p.op->scope == "embed.tokens", head = p.op->scope == "lm_head";
        if ((!table && !head) || p.dims.size() != 2) continue;
        const auto dims = effectiveDims(*p.sharding, ctx.plan.mesh);
        const size_t vocabDim = table ? 0 : 1;  // the table [vocab, hidden]; the head [hidden, vocab]
        const bool vocabParallel = dims[vocabDim] == std::vector<std::string>{tp} && dims[1 - vocabDim].empty();
        if (vocabParallel) continue;
        std::string layout = "[";
        for (size_t d = 0; d < dims.size(); ++d) {
            layout += d ? ",{" : "{";
            for (size_t k = 0; k < dims[d].size(); ++k) layout += (k ? "," : "") + dims[d][k];
            layout += "}";
        }
        ctx.notes->push_back(p.path + ": the plan lays it out " + layout + "]; " + std::string(framework) + " splits its vocabulary over " +
                             tp + (table ? " (a vocabulary-parallel embedding: the lookup all-reduces)"
                                         : " (a column-parallel output layer: the loss is vocabulary-parallel)") +
                             ", so the job's memory and communication there differ from the plan's");
    }
}

Result<UniformLayout> recogniseUniformLayout(const Context& ctx, const LayoutTarget& target) {
    const Mesh& mesh = ctx.plan.mesh;
    const std::string who(target.name);
    auto notUniformHere = [&](const std::string& reason, const std::string& where) { return notUniform(target, reason, where); };

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
        return notUniformHere("no transformer-layer parameters (scopes like layers.N.*) found", {});

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
                return notUniformHere(loc + " is an MoE layer; the " + who + " export does not map expert parallelism", op.name);
            case LayerRole::Other:
                return notUniformHere(loc + " holds " + op.name + ", not a recognised attention, MLP or norm parameter",
                                      op.name);
            case LayerRole::Norm:
                for (const auto& d : lp.dims)
                    if (!d.empty())
                        return notUniformHere(loc + " " + describeSplit(lp.dims, false) + " (" + op.name + "), " + who +
                                                  " replicates norm parameters",
                                              op.name);
                break;
            case LayerRole::Column:
            case LayerRole::Row: {
                const bool column = lp.role == LayerRole::Column;
                if (matrix) {
                    if (!lp.linear)
                        return notUniformHere(loc + " " + op.name + " is not a plain [in, out] linear weight", op.name);
                    const auto want = column ? std::vector<std::vector<std::string>>{{}, tpAxes}
                                             : std::vector<std::vector<std::string>>{tpAxes, {}};
                    if (lp.dims != want)
                        return notUniformHere(loc + " " + describeSplit(lp.dims, true) + ", " + who + " needs " +
                                                  (column ? "column-parallel" : "row-parallel") + over,
                                              op.name);
                } else if (op.type.dims.size() == 1) {
                    // Bias: split like the output features (column) or replicated (row).
                    const auto want = column ? std::vector<std::vector<std::string>>{tpAxes}
                                             : std::vector<std::vector<std::string>>{{}};
                    if (lp.dims != want)
                        return notUniformHere(loc + " " + describeSplit(lp.dims, false) + " (" + op.name + "), " + who + " needs " +
                                                  (column && !tp.empty() ? "it split over " + tp : std::string("it replicated")),
                                              op.name);
                } else {
                    return notUniformHere(loc + " " + op.name + " has rank " + std::to_string(op.type.dims.size()) +
                                              ", not a linear weight or bias",
                                          op.name);
                }
                break;
            }
        }
    }

    // Context parallelism: an axis other than tp that splits a data input's sequence (its dim 1).
    UniformLayout layout;
    for (const Op& op : ctx.graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Input || op.type.dims.size() < 2) continue;
        const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
        if (!t || t->result.rank() != static_cast<int64_t>(op.type.dims.size())) continue;
        const auto dims = effectiveDims(t->result, mesh);
        for (const std::string& a : dims[1])
            if (a != tp && layout.cpAxis.empty()) layout.cpAxis = a;
    }
    if (!layout.cpAxis.empty()) layout.cpSize = *mesh.axisSize(layout.cpAxis);
    // Data parallelism: every data input's batch dim split over all the other axes (any order).
    std::set<std::string> dpAxes;
    for (const auto& a : mesh.axes())
        if (a.name != tp && a.name != layout.cpAxis && a.size > 1) {
            dpAxes.insert(a.name);
            layout.dpAxes.push_back(a.name);
            layout.dpSize *= a.size;
        }
    const std::vector<std::string> cpAxes = layout.cpAxis.empty() ? std::vector<std::string>{} : std::vector<std::string>{layout.cpAxis};
    for (const Op& op : ctx.graph.ops()) {
        if (op.kind != OpKind::Parameter || op.role != ParamRole::Input || op.type.dims.empty()) continue;
        const TensorPlan* t = ctx.byOp[static_cast<size_t>(op.id)];
        if (!t) return makeError("export.bad_plan", "plan has no sharding for input " + op.name, op.name);
        if (t->result.rank() != static_cast<int64_t>(op.type.dims.size()))
            return makeError("export.bad_plan", "sharding " + t->result.toString() + " of input " + op.name +
                                                    " has the wrong rank", op.name);
        const auto dims = effectiveDims(t->result, mesh);
        bool ok = std::set<std::string>(dims[0].begin(), dims[0].end()) == dpAxes && dims[0].size() == dpAxes.size();
        for (size_t d = 1; d < dims.size(); ++d) ok = ok && (d == 1 && dims.size() >= 2 ? dims[d] == cpAxes : dims[d].empty());
        if (!ok) {
            std::string need = dpAxes.empty() ? std::string("the batch unsplit") : "the batch split over ";
            std::vector<std::string> list(dpAxes.begin(), dpAxes.end());
            if (!dpAxes.empty()) need += joinAxes(list) + " only";
            if (!cpAxes.empty()) need += " and the sequence over " + layout.cpAxis;
            return notUniformHere("input " + op.name + " " + describeSplit(dims, false) + ", " + who + " needs " + need,
                                  op.name);
        }
    }

    // Both frameworks number tensor-parallel ranks consecutively: the TP axis must be the innermost one.
    if (!tp.empty()) {
        const auto idx = static_cast<size_t>(*mesh.axisIndex(tp));
        for (size_t i = idx + 1; i < mesh.axes().size(); ++i)
            if (mesh.axes()[i].size > 1)
                return notUniformHere("tensor-parallel axis " + tp + " is not the innermost mesh axis (" + mesh.axes()[i].name +
                                          " is inside it); " + who + " places tensor-parallel ranks on consecutive devices",
                                      {});
    }
    // The context-parallel axis inside every data-parallel one.
    if (!layout.cpAxis.empty()) {
        const auto idx = static_cast<size_t>(*mesh.axisIndex(layout.cpAxis));
        for (size_t i = idx + 1; i < mesh.axes().size(); ++i)
            if (mesh.axes()[i].size > 1 && mesh.axes()[i].name != tp)
                return notUniformHere("context-parallel axis " + layout.cpAxis + " is outside data-parallel axis " + mesh.axes()[i].name + "; " +
                                          who + " places context-parallel ranks inside data-parallel ones (tensor, context, data)",
                                      {});
    }
    layout.tpAxis = tp;
    layout.tpSize = tp.empty() ? 1 : *mesh.axisSize(tp);

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
            std::vector<std::string> onSeq;
            if (t && t->result.rank() == static_cast<int64_t>(op.type.dims.size()))
                for (const std::string& a : effectiveAxes(t->result.dimAxes(1), mesh))
                    if (a != layout.cpAxis) onSeq.push_back(a);
            if (!t || t->result.rank() != static_cast<int64_t>(op.type.dims.size()) || onSeq != tpAxes) {
                sequenceParallel = false;
                break;
            }
        }
        layout.sequenceParallel = sequenceParallel && normValues > 0;
    }
    return layout;
}

Result<std::string> exportMegatron(const Context& ctx) {
    const LayoutTarget target{"Megatron", "Megatron-LM"};
    auto layout = recogniseUniformLayout(ctx, target);
    if (!layout) return layout.error();
    const std::string& tp = layout->tpAxis;
    const int64_t tpSize = layout->tpSize;
    // Megatron-LM derives the data-parallel size from WORLD_SIZE / (TP · PP · CP); it has no flag
    // for it. The plan's data-parallel size (layout->dpSize) is what WORLD_SIZE / (TP · PP) must come to.
    // Pipeline stages (Plan::pipeline): the mesh is one stage's, Megatron-LM's order (tensor, data,
    // pipeline) puts a stage on consecutive ranks. Megatron-LM runs 1F1B, interleaved with virtual
    // stages.
    int64_t ppSize = 1;
    std::string virtualFlag;
    if (const auto& pl = ctx.plan.pipeline) {
        if (pl->schedule != PipeScheduleKind::OneFOneB && pl->schedule != PipeScheduleKind::Interleaved)
            return notUniform(target,
                              "the plan's pipeline runs " + std::string(pipeScheduleName(pl->schedule)) +
                                  "; Megatron-LM runs 1f1b (interleaved with virtual stages)",
                              {});
        ppSize = pl->stages;
        if (pl->chunksPerRank > 1 && !pl->chunks.empty())
            virtualFlag = " --num-layers-per-virtual-pipeline-stage " + std::to_string(pl->chunks.front().layers);
        // An uneven split: the first and last stage's layers (--decoder-first/last-pipeline-num-layers),
        // every other stage as many as each other, one chunk per rank.
        if (pl->chunks.size() >= 2) {
            const int32_t first = pl->chunks.front().layers, last = pl->chunks.back().layers;
            const int32_t inner = pl->chunks.size() > 2 ? pl->chunks[1].layers : first;
            bool innerEven = true;
            for (size_t c = 1; c + 1 < pl->chunks.size(); ++c) innerEven = innerEven && pl->chunks[c].layers == inner;
            if (first != inner || last != inner || !innerEven) {
                if (pl->chunksPerRank > 1 || !innerEven)
                    return notUniform(target, "the plan's stages hold " + splitText(*pl) +
                                                  " layers; Megatron-LM sets only the first and last stage apart, one chunk per rank",
                                      {});
                if (first != inner) virtualFlag += " --decoder-first-pipeline-num-layers " + std::to_string(first);
                if (last != inner) virtualFlag += " --decoder-last-pipeline-num-layers " + std::to_string(last);
            }
        }
    }
    if (layout->cpSize > 1 && ppSize > 1)
        return notUniform(target, "the plan splits the sequence over " + layout->cpAxis + " and has pipeline stages; cfp does not plan both", {});
    std::string flags = "--tensor-model-parallel-size " + std::to_string(tpSize) + " --pipeline-model-parallel-size " +
                        std::to_string(ppSize) + virtualFlag;
    // Context parallelism as the plan prices it: Megatron-LM's p2p exchange (its default: the keys
    // and values passed in a ring beside the attention; MemoryPolicy::contextRing) or all_gather
    // ("all-gather to get full sequence of KV before attention … cannot be overlapped",
    // TransformerConfig).
    if (layout->cpSize > 1)
        flags += " --context-parallel-size " + std::to_string(layout->cpSize) + " --cp-comm-type " +
                 (ctx.plan.policy.contextRing ? "p2p" : "all_gather");
    // Sequence parallelism: the norms' values split along the sequence over tp in the shardings, or
    // the plan's policy (cost/op_cost.h prices it over tp without changing the shardings).
    if (layout->sequenceParallel || (!tp.empty() && ctx.plan.policy.sequenceParallelAxis == tp)) flags += " --sequence-parallel";
    // Memory policy. Megatron recomputes whole layers (full granularity); the plan recomputes per
    // ParallelBlock, so the flags follow only when every block of every layer recomputes.
    if (ctx.plan.policy.optimizerSharding) flags += " --use-distributed-optimizer";
    const LayerRecompute recompute = layerBlockRecompute(ctx);
    if (recompute == LayerRecompute::Every)
        flags += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
    else if (recompute == LayerRecompute::Some)
        return notUniform(target,
                          "the plan recomputes some ParallelBlocks of the layers and not others; Megatron-LM recomputes "
                          "whole layers (plan with --recompute all or none for a Megatron export)",
                          {});
    if (ctx.model) {
        // Megatron-LM asserts that tensor parallelism divides the heads and the KV groups.
        const ModelConfig& c = *ctx.model;
        if (c.numHeads % tpSize != 0 || (c.numKvHeads > 0 && c.numKvHeads % tpSize != 0))
            return notUniform(target,
                              "Megatron-LM needs the tensor-parallel size " + std::to_string(tpSize) + " to divide the " +
                                  std::to_string(c.numHeads) + " attention heads" +
                                  (c.numKvHeads != c.numHeads ? " and the " + std::to_string(c.numKvHeads) + " KV groups" : std::string()),
                              {});
        flags += modelFlags(ctx, tpSize);
    }
    if (ctx.notes && tpSize > 1) vocabularyLayoutNotes(ctx, tp, target.framework);
    if (ctx.notes && ctx.plan.policy.fusion == KernelFusion::Eager)
        ctx.notes->push_back("the plan prices eager kernels (one per op, as PyTorch without torch.compile); Megatron-LM runs its fused "
                             "kernels (layer norm, bias-GeLU, softmax, bias-dropout-add), so its step is shorter than the plan's "
                             "(plan with --fusion compiled for Megatron-LM)");
    return flags + "\n";
}

LayerRecompute layerBlockRecompute(const Context& ctx) {
    size_t layerBlocks = 0, recomputed = 0;
    for (const TensorPlan& t : ctx.plan.tensors) {
        if (t.block < 0 || static_cast<size_t>(t.block) >= ctx.plan.blocks.size()) continue;
        const Op& op = ctx.graph.op(t.op);
        if (op.phase != Phase::Forward || layerOf(op.scope, nullptr).empty()) continue;
        ++layerBlocks;
        recomputed += ctx.plan.blocks[static_cast<size_t>(t.block)].recompute;
    }
    if (recomputed == 0) return LayerRecompute::None;
    return recomputed == layerBlocks ? LayerRecompute::Every : LayerRecompute::Some;
}

}  // namespace cfp::exporting
