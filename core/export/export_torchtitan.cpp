// The torchtitan export: a job-config TOML (`torchtitan/train.py --job.config_file FILE`) that runs
// the plan's parallel layout (docs/exporters.md, "torchtitan").
//
// Keys and their meaning are those of torchtitan's JobConfig (torchtitan/config/job_config.py),
// torchtitan's Llama 3 parallelisation (torchtitan/models/llama3/infra/parallelize.py) and its
// pipelining (torchtitan/distributed/pipeline_parallel.py) at pytorch/torchtitan commit
// 238fa9953e4aec2a62582121564273d7cbb1e9f1 (2026-02-23), the last one that reads TOML job configs;
// the schedule names are PyTorch's get_schedule_class (torch/distributed/pipelining/schedules.py).

#include "export/export_internal.h"
#include "plan/pipeline.h"
#include "plan/pipeline_plan.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cfp::exporting {

namespace {

constexpr std::string_view kTorchtitanCommit = "238fa9953e4aec2a62582121564273d7cbb1e9f1";

Error unsupported(const std::string& why) { return makeError("export.unsupported", why); }

// The schedules PyTorch has no class for that a torchtitan job runs from a CSV of their actions
// (exportScheduleCsv): zb-h1 and zb-h2 generated again from the plan, custom and mip the plan's
// own actions (pipelineSchedule).
bool runsFromCsv(const Plan& plan) {
    if (!plan.pipeline) return false;
    switch (plan.pipeline->schedule) {
        case PipeScheduleKind::ZeroBubbleH1:
        case PipeScheduleKind::ZeroBubbleH2:
        case PipeScheduleKind::Custom:
        case PipeScheduleKind::Mip: return true;
        default: return false;
    }
}

// A TOML basic string: JSON's escapes are TOML's (quotes, backslashes, control characters as
// \uXXXX), invalid UTF-8 replaced as nlohmann does; TOML also escapes DEL, which JSON does not.
std::string tomlString(std::string_view s) {
    const std::string json = nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(json.size());
    for (const char c : json) {
        if (c == '\x7f') out += "\\u007f";
        else out += c;
    }
    return out;
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// torchtitan's llama3_args flavors (torchtitan/models/llama3/__init__.py): the SwiGLU width is
// torchtitan's own rounding of dim, multiple_of and ffn_dim_multiplier, written out here.
struct Flavor {
    const char* name;
    int64_t dim, layers, heads, kvHeads, ffn, vocab;
};
constexpr Flavor kFlavors[] = {
    {"debugmodel", 256, 6, 16, 16, 768, 2048},
    {"8B", 4096, 32, 32, 8, 14336, 128256},
    {"70B", 8192, 80, 64, 8, 28672, 128256},
    {"405B", 16384, 126, 128, 8, 53248, 128256},
};

const Flavor* matchFlavor(const ModelConfig& m) {
    if (m.ropeTheta != 500000.0 || m.normEpsilon != 1e-5) return nullptr;
    for (const Flavor& f : kFlavors)
        if (f.dim == m.hiddenSize && f.layers == m.numLayers && f.heads == m.numHeads && f.kvHeads == m.numKvHeads &&
            f.ffn == m.ffnSize && f.vocab == m.vocabSize)
            return &f;
    return nullptr;
}

// The TransformerModelArgs that give this model in torchtitan: its FeedForward takes
// hidden = int(2 * 4 * dim / 3), scales it by ffn_dim_multiplier and rounds it up to multiple_of.
std::string transformerArgs(const ModelConfig& m) {
    const int64_t base = 8 * m.hiddenSize / 3;
    std::string ffn;
    for (int64_t k = 4096; k >= 1 && ffn.empty(); k /= 2)
        if (base <= m.ffnSize && (base + k - 1) / k * k == m.ffnSize) ffn = "multiple_of=" + std::to_string(k);
    if (ffn.empty())  // int(multiplier * base) is then ffn, rounded up to a multiple of 1
        ffn = "multiple_of=1, ffn_dim_multiplier=" + number((static_cast<double>(m.ffnSize) + 0.5) / static_cast<double>(base));
    return "TransformerModelArgs(dim=" + std::to_string(m.hiddenSize) + ", n_layers=" + std::to_string(m.numLayers) +
           ", n_heads=" + std::to_string(m.numHeads) + ", n_kv_heads=" + std::to_string(m.numKvHeads) +
           ", vocab_size=" + std::to_string(m.vocabSize) + ", " + ffn + ", norm_eps=" + number(m.normEpsilon) +
           ", rope_theta=" + number(m.ropeTheta) + ")";
}

// PyTorch's name for a schedule the plan runs, and whether it holds one stage per rank.
struct ScheduleName {
    std::string_view name;
    bool singleStage = true;
};
std::optional<ScheduleName> torchSchedule(PipeScheduleKind k) {
    switch (k) {
        case PipeScheduleKind::GPipe: return ScheduleName{"GPipe", true};
        case PipeScheduleKind::OneFOneB: return ScheduleName{"1F1B", true};
        case PipeScheduleKind::Interleaved: return ScheduleName{"Interleaved1F1B", false};
        case PipeScheduleKind::ZeroBubbleV: return ScheduleName{"ZBVZeroBubble", false};
        case PipeScheduleKind::DualPipeV: return ScheduleName{"DualPipeV", false};
        // PyTorch's InterleavedZeroBubble is a looped schedule of two or more stages per rank;
        // the plan's zb-h1 and zb-h2 hold one. DualPipe (two copies of the model), custom and
        // optimised schedules have no PyTorch class.
        case PipeScheduleKind::ZeroBubbleH1:
        case PipeScheduleKind::ZeroBubbleH2:
        case PipeScheduleKind::DualPipe:
        case PipeScheduleKind::Custom:
        case PipeScheduleKind::Mip: return std::nullopt;
    }
    return std::nullopt;
}

std::string commentLines(const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start < text.size()) {
        const size_t nl = text.find('\n', start);
        const std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        out += line.empty() ? "#\n" : "# " + line + "\n";
        if (nl == std::string::npos) break;
        start = nl + 1;
    }
    return out;
}

}  // namespace

Result<std::string> exportTorchtitan(const Context& ctx) {
    const LayoutTarget target{"torchtitan", "torchtitan"};
    const Plan& plan = ctx.plan;
    const MemoryPolicy& policy = plan.policy;

    // The model: torchtitan builds it from its own registry by name and flavor.
    if (!ctx.model)
        return unsupported("torchtitan builds its models from its own registry; this model was imported from '" + plan.modelSource +
                           "' and has no torchtitan model (export a built-in or config.json Llama model)");
    const ModelConfig& m = *ctx.model;
    if (m.family == ModelFamily::Gpt)
        return unsupported("torchtitan has no GPT model (its llama3 model is the Llama architecture); export " + m.name +
                           " as megatron or dtensor");
    if (m.family == ModelFamily::Moe)
        return unsupported("torchtitan has no Mixtral-style MoE model (its MoE models are DeepSeek-V3, Qwen3 and gpt-oss); export " +
                           m.name + " as dtensor or megatron");
    if (m.tiedEmbeddings)
        return unsupported("torchtitan's llama3 model keeps the output layer apart from the token embedding; " + m.name +
                           " ties them");
    const BuildOptions build = plan.build.value_or(BuildOptions{});
    std::string_view paramDtype;
    if (build.dtype == DType::BF16) paramDtype = "bfloat16";
    else if (build.dtype == DType::F32) paramDtype = "float32";
    else
        return unsupported("torchtitan trains in bfloat16 or float32; the plan's parameters are " + std::string(dtypeName(build.dtype)));

    auto layout = recogniseUniformLayout(ctx, target);
    if (!layout) return layout.error();
    const int64_t tp = layout->tpSize, dp = layout->dpSize;
    if (m.numHeads % tp != 0 || m.numKvHeads % tp != 0)
        return unsupported("torchtitan's tensor parallelism splits the attention heads: the tensor-parallel size " +
                           std::to_string(tp) + " must divide the " + std::to_string(m.numHeads) + " heads and the " +
                           std::to_string(m.numKvHeads) + " KV heads");

    // The batch: the plan's graph is one micro-batch round over the data-parallel ranks.
    const auto batch = planBatch(plan, ctx.graph);
    if (!batch || batch->round <= 0) return makeError("export.bad_plan", "the plan's graph has no batched data input");
    const int64_t seq = build.seq;
    if (seq <= 0) return makeError("export.bad_plan", "the plan states no sequence length");
    if (batch->round % dp != 0)
        return makeError("export.bad_plan", "the round of " + std::to_string(batch->round) + " sequences does not split over " +
                                                std::to_string(dp) + " data-parallel ranks");
    const int64_t microBatch = batch->round / dp;
    // torchtitan asserts seq_len % (tp · 2 · cp) == 0 (ParallelDims.seq_len_divisor).
    const int64_t cp = layout->cpSize;
    if (seq % (2 * tp * cp) != 0)
        return unsupported("torchtitan needs the sequence length (" + std::to_string(seq) + ") to be a multiple of 2 x the tensor-parallel size" +
                           (cp > 1 ? " x the context-parallel size (" : " (") + std::to_string(2 * tp * cp) + ")");

    // Data parallelism. torchtitan applies DDP only when it is the job's only parallelism
    // ("DDP has not supported > 1D parallelism"), and has no ZeRO-1/2 mode of its own: FSDP2 with
    // reshard_after_forward off keeps the optimizer state and the gradients sharded and each
    // weight gathered from its forward through its backward — ZeRO-2's memory, and its traffic
    // (a gather and a reduce-scatter per weight and round).
    const int zero = zeroStageOf(policy);
    const bool otherParallelism = tp > 1 || cp > 1 || plan.pipeline.has_value();
    int64_t replicate = 1, shard = 1;
    std::string reshard = "default";
    std::string dpComment;
    if (dp > 1) {
        if (zero == 0) {
            if (otherParallelism)
                return unsupported("the plan keeps the optimizer state whole (ZeRO-0) beside tensor or pipeline parallelism; torchtitan "
                                   "applies DDP only when data parallelism is the only parallelism (plan with --zero 1, 2 or 3)");
            replicate = dp;
            dpComment = "DDP over " + std::to_string(dp) + " ranks (the plan's ZeRO-0: optimizer state and gradients whole)";
        } else if (zero == 3) {
            shard = dp;
            // torchtitan's "default" reshards every layer after its forward but, under pipeline
            // parallelism, none; the plan's ZeRO-3 gathers again for the backward in every round.
            reshard = plan.pipeline ? "always" : "default";
            dpComment = "FSDP2 over " + std::to_string(dp) + " ranks (the plan's ZeRO-3: weights, gradients and optimizer state sharded, "
                        "each layer's weights gathered for its forward and again for its backward)";
        } else {
            shard = dp;
            reshard = "never";
            dpComment = "FSDP2 over " + std::to_string(dp) + " ranks without resharding after the forward: ZeRO-2 (gradients and optimizer "
                        "state sharded, each layer's weights gathered from its forward through its backward)";
            if (zero == 1)
                dpComment += ". The plan is ZeRO-1 (whole gradients, all-reduced); torchtitan has no ZeRO-1 mode, and its FSDP "
                             "shards the gradients too: less gradient memory than the plan counts";
        }
    }

    std::string head = headerText(plan, "torchtitan job config generated by cfp (cfp export --format torchtitan) from the plan below.");
    head += "Parallelism: " + std::string(layout->tpAxis.empty() ? "no tensor parallelism" : "tensor parallel " + std::to_string(tp) + " over " + layout->tpAxis);
    if (cp > 1) head += ", context parallel " + std::to_string(cp) + " over " + layout->cpAxis;
    if (!layout->dpAxes.empty()) head += ", data parallel " + std::to_string(dp) + " over " + joinAxes(layout->dpAxes);
    if (plan.pipeline) head += ", " + std::to_string(plan.pipeline->stages) + " pipeline stages";
    const int64_t world = plan.mesh.deviceCount() * (plan.pipeline ? plan.pipeline->stages : 1);
    head += "; " + std::to_string(world) + " ranks in all\n";
    const int64_t perNode = std::max<int64_t>(1, std::min<int64_t>(world, plan.gpusPerNode));
    head += "\nRun: torchrun --nnodes " + std::to_string((world + perNode - 1) / perNode) + " --nproc_per_node " + std::to_string(perNode) +
            " -m torchtitan.train --job.config_file FILE\n";
    head += "(torchtitan's TOML job config keys as of pytorch/torchtitan " + std::string(kTorchtitanCommit) +
            "; keys not written keep torchtitan's defaults.)\n";

    std::string t = commentLines(head) + "\n";

    // [model]
    t += "[model]\nname = \"llama3\"\n";
    if (const Flavor* f = matchFlavor(m)) {
        t += "flavor = " + tomlString(f->name) + "\n";
    } else {
        t += commentLines("torchtitan's llama3_args has no flavor of " + m.name + "'s shape: add it to llama3_args in "
                          "torchtitan/models/llama3/__init__.py as\n  " + tomlString(m.name) + ": " + transformerArgs(m));
        t += "flavor = " + tomlString(m.name) + "\n";
        if (ctx.notes)
            ctx.notes->push_back("torchtitan has no llama3 flavor of " + m.name + "'s shape; the file says which TransformerModelArgs to register as '" +
                                 m.name + "'");
    }

    // [training]
    int64_t localBatch = microBatch;
    if (plan.pipeline) localBatch = microBatch * plan.pipeline->microBatches;
    const int64_t global = batch->global();
    if (localBatch * dp > global || global % (localBatch * dp) != 0)
        return makeError("export.bad_plan", "the plan's global batch of " + std::to_string(global) + " sequences is not a multiple of " +
                                                std::to_string(localBatch) + " per data-parallel rank x " + std::to_string(dp) + " ranks");
    t += "\n[training]\n";
    if (plan.pipeline)
        t += commentLines("local_batch_size: the sequences of a step per data-parallel rank, cut into " +
                          std::to_string(plan.pipeline->microBatches) + " pipeline micro-batches of " + std::to_string(microBatch));
    else if (global / (localBatch * dp) > 1)
        t += commentLines("global_batch_size / (local_batch_size x " + std::to_string(dp) + ") = " + std::to_string(global / (localBatch * dp)) +
                          " gradient accumulation steps, the plan's rounds");
    t += "local_batch_size = " + std::to_string(localBatch) + "\n";
    t += "global_batch_size = " + std::to_string(global) + "\n";
    t += "seq_len = " + std::to_string(seq) + "\n";
    t += "mixed_precision_param = " + tomlString(paramDtype) + "\n";

    // [parallelism]
    t += "\n[parallelism]\n";
    if (!dpComment.empty()) t += commentLines(dpComment);
    t += "data_parallel_replicate_degree = " + std::to_string(replicate) + "\n";
    t += "data_parallel_shard_degree = " + std::to_string(shard) + "\n";
    if (shard > 1) t += "fsdp_reshard_after_forward = " + tomlString(reshard) + "\n";
    if (tp > 1) {
        const bool sp = !policy.sequenceParallelAxis.empty() || layout->sequenceParallel;
        t += commentLines(sp ? "torchtitan's tensor parallelism is sequence parallel (SequenceParallel on the norms), as the plan is"
                             : "torchtitan's tensor parallelism is always sequence parallel (SequenceParallel on the norms, "
                               "sequence-split activations between the layers); the plan is not, so the job's activation "
                               "memory and tensor-parallel collectives differ from the plan's");
    }
    t += "tensor_parallel_degree = " + std::to_string(tp) + "\n";
    if (tp > 1) {
        if (policy.overlapTensorParallel)
            t += commentLines("The plan overlaps tensor-parallel communication with the GEMMs; torchtitan does so only with [compile] enable = true");
        t += "enable_async_tensor_parallel = " + std::string(policy.overlapTensorParallel ? "true" : "false") + "\n";
    }
    t += "context_parallel_degree = " + std::to_string(cp) + "\n";
    if (cp > 1) {
        if (policy.contextRing) {
            t += commentLines("The plan passes the keys and values around the context-parallel ranks chunk by chunk beside the attention, "
                              "as the alltoall rotation of PyTorch's ring attention does");
            t += "context_parallel_rotate_method = \"alltoall\"\n";
        } else {
            t += commentLines("The plan all-gathers the keys and values over the context-parallel ranks, as torchtitan's allgather rotation does");
            t += "context_parallel_rotate_method = \"allgather\"\n";
        }
    }
    if (const auto& pl = plan.pipeline) {
        const bool csv = runsFromCsv(plan);
        std::optional<ScheduleName> schedule = torchSchedule(pl->schedule);
        if (!schedule && csv) {
            // Run from its actions: _PipelineScheduleRuntime reads them from the CSV beside this file.
            if (ctx.scheduleCsvName.empty())
                return unsupported("PyTorch's pipelining has no class for the plan's " + std::string(pipeScheduleName(pl->schedule)) +
                                   " schedule: torchtitan runs it from a schedule CSV written beside the TOML, so write the export to a file");
            schedule = ScheduleName{pl->chunksPerRank == 1 ? "PipelineScheduleSingle" : "PipelineScheduleMulti", pl->chunksPerRank == 1};
        }
        if (!schedule)
            return unsupported("the plan's pipeline runs " + std::string(pipeScheduleName(pl->schedule)) +
                               ", which PyTorch's pipelining has no schedule for (torchtitan runs GPipe, 1F1B, Interleaved1F1B, "
                               "InterleavedZeroBubble with 2 or more stages per rank, ZBVZeroBubble and DualPipeV, and zb-h1 and "
                               "zb-h2 from a schedule CSV)");
        if (schedule->singleStage != (pl->chunksPerRank == 1))
            return unsupported("the plan's " + std::string(pipeScheduleName(pl->schedule)) + " pipeline holds " + std::to_string(pl->chunksPerRank) +
                               " stages per rank; PyTorch's " + std::string(schedule->name) +
                               (schedule->singleStage ? " holds one" : " holds two or more"));
        if (pl->chunks.size() != static_cast<size_t>(pl->stages) * static_cast<size_t>(pl->chunksPerRank))
            return makeError("export.bad_plan", "the plan's pipeline has " + std::to_string(pl->chunks.size()) + " chunks for " +
                                                    std::to_string(pl->stages) + " x " + std::to_string(pl->chunksPerRank) + " stages");
        t += "pipeline_parallel_degree = " + std::to_string(pl->stages) + "\n";
        if (csv) {
            t += commentLines("PyTorch has no class for the plan's " + std::string(pipeScheduleName(pl->schedule)) +
                              " schedule: torchtitan runs its actions (a row per rank, as cfp schedule -o writes them) from "
                              "the CSV written beside this file; the path is opened from the directory torchtitan runs in");
            t += "pipeline_parallel_schedule = " + tomlString(schedule->name) + "\n";
            t += "pipeline_parallel_schedule_csv = " + tomlString(ctx.scheduleCsvName) + "\n";
        } else {
            t += "pipeline_parallel_schedule = " + tomlString(schedule->name) + "\n";
        }
        t += "pipeline_parallel_microbatch_size = " + std::to_string(microBatch) + "\n";
        t += commentLines("The plan's stages, in model order (torchtitan places them on the ranks as the schedule does)");
        t += "module_fqns_per_model_part = [\n";
        for (const PipelineChunk& c : pl->chunks) {
            std::vector<std::string> names;
            if (c.embedding) names.push_back(tomlString("tok_embeddings"));
            for (int32_t l = c.firstLayer; l < c.firstLayer + c.layers; ++l) names.push_back(tomlString("layers." + std::to_string(l)));
            if (c.head) {
                names.push_back(tomlString("norm"));
                names.push_back(tomlString("output"));
            }
            std::string row;
            for (const auto& n : names) row += (row.empty() ? "" : ", ") + n;
            t += "  [" + row + "],\n";
        }
        t += "]\n";
    } else {
        t += "pipeline_parallel_degree = 1\n";
    }

    // [activation_checkpoint]
    std::string mode, option, acComment;
    switch (policy.recompute) {
        case RecomputePolicy::None: mode = "none"; break;
        case RecomputePolicy::Layers: mode = "full"; break;
        case RecomputePolicy::SelectiveOps:
            mode = "selective";
            option = "op";
            break;
        case RecomputePolicy::Auto:
        case RecomputePolicy::All:
            // Chosen per ParallelBlock: torchtitan's checkpointing wraps whole layers.
            switch (layerBlockRecompute(ctx)) {
                case LayerRecompute::None: mode = "none"; break;
                case LayerRecompute::Every:
                    mode = "full";
                    acComment = "The plan recomputes every block of every layer: torchtitan's full checkpointing of each layer";
                    break;
                case LayerRecompute::Some:
                    return unsupported("the plan recomputes some blocks of the layers and not others; torchtitan checkpoints whole layers "
                                       "or per op (plan with --recompute none, layers or ops)");
            }
            break;
    }
    t += "\n[activation_checkpoint]\n";
    if (!acComment.empty()) t += commentLines(acComment);
    t += "mode = " + tomlString(mode) + "\n";
    if (!option.empty()) t += "selective_ac_option = " + tomlString(option) + "\n";

    // [compile]: the kernels the plan priced (Inductor fuses as cost_model.h's fusion rule does);
    // the loss compiled too where the plan prices a fused one.
    const bool compiled = policy.fusion == KernelFusion::Compiled;
    const bool compiledLoss = compiled && policy.crossEntropy != CrossEntropyKernel::Eager;
    t += "\n[compile]\n";
    t += commentLines(compiled ? "The plan prices compiled kernels (fused elementwise, norm and activation chains): torch.compile"
                               : "The plan prices eager kernels (one per op), as torchtitan runs without torch.compile");
    t += "enable = " + std::string(compiled ? "true" : "false") + "\n";
    if (compiled) t += "components = [" + tomlString("model") + (compiledLoss ? ", " + tomlString("loss") : std::string()) + "]\n";

    if (policy.crossEntropy != CrossEntropyKernel::Eager && !compiledLoss)
        t += "\n" + commentLines("The plan prices a " + std::string(crossEntropyKernelName(policy.crossEntropy)) +
                                 " cross-entropy; torchtitan's loss is eager F.cross_entropy on f32 logits, whose memory "
                                 "`cfp plan --cross-entropy eager` prices");
    if (ctx.notes && tp > 1) vocabularyLayoutNotes(ctx, layout->tpAxis, target.framework);
    return t;
}

}  // namespace cfp::exporting

namespace cfp {

Result<std::optional<std::string>> exportScheduleCsv(const Plan& plan) {
    if (!exporting::runsFromCsv(plan)) return std::optional<std::string>{};
    const PipelinePlan& pl = *plan.pipeline;
    auto schedule = pipelineSchedule(pl);
    if (!schedule) return schedule.error().withContext("plan pipeline");
    return std::optional<std::string>{schedule->toCsv()};
}

}  // namespace cfp
