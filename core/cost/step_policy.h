#pragma once
// How a training step runs beyond the per-op shardings: the memory policy (optimizer-state
// sharding, activation recomputation) and the per-device memory it leads to. The cost model's
// consumers — the planner, the independent evaluator, the op-level formulation and the profiler —
// read it through cost/op_cost.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cfp {

// How the training step trades time for memory (both are standard in large-model training).
//  - optimizerSharding (ZeRO stage 1, Megatron's distributed optimizer): the optimizer state and the
//    optimizer's update of a weight are split over the mesh axes on which the weight is replicated;
//    the gradient's all-reduce over those axes becomes a reduce-scatter, and the updated weight is
//    all-gathered back over them (the ring all-reduce's two halves, split around the update).
//    Weights and gradients keep their plan sharding.
//  - recompute: activation recomputation at ParallelBlock granularity. A recomputed block keeps
//    only the tensors that enter it from other blocks (its checkpoints) and runs its forward ops a
//    second time in the backward pass (kernels, own collectives and resharding into them again);
//    while its backward runs, its recomputed activations are live on top of the working set.
//    Whenever recomputation is enabled (Auto or All), forward tensors passed between blocks are
//    kept as checkpoints. None: no block recomputes; All: every block does; Auto: the segment DP
//    chooses per block (each strategy with and without recomputation) for the fastest plan that fits.
//    Layers: recomputation per transformer layer, as Megatron-LM's full recomputation and
//    activation checkpointing per layer do: every forward op in a layer (cost/op_cost.h,
//    layerUnits) runs again in the backward; a layer keeps only the tensors that enter it from
//    outside (its input), and while its backward runs its recomputed activations are live.
//    Embeddings, the head and the loss are not recomputed. Priced by `cfp estimate` (recompute=full);
//    the search's memory terms bound it per block, the evaluator's memory is the layer's.
//    SelectiveOps: per-op selective recomputation per layer, as torchtitan's selective activation
//    checkpointing with selective_ac_option="op" runs it: a layer keeps its input, the results of
//    every other linear matmul (the first, third, … in op order) and the attention kernel's output
//    (cost/op_cost.h, selectiveOpsKept); every other forward op of the layer runs again in the
//    backward, reading what the layer keeps. Priced by `cfp estimate` (recompute=op) as Layers is.
//    Measured with PyTorch on a Llama-3.1-8B layer (bench/reference/layer_memory.py): 15.5 sbh bytes
//    kept per layer, as counted here.
enum class RecomputePolicy : uint8_t { None, Auto, All, Layers, SelectiveOps };
std::string_view recomputePolicyName(RecomputePolicy p);  // "none", "auto", "all", "layers", "ops"
std::optional<RecomputePolicy> parseRecomputePolicy(std::string_view name);
// The policies whose unit is the layer, not the block (priced, not searched).
inline bool recomputesByLayer(RecomputePolicy p) { return p == RecomputePolicy::Layers || p == RecomputePolicy::SelectiveOps; }

//  - accumulation (gradient accumulation): the graph is one micro-batch round — the global batch
//    divided by `accumulation`, split over the data-parallel axes as the plan shards the batch — and
//    a step runs `accumulation` rounds of forward and backward, then the gradient synchronisation
//    and the optimizer once. Per step: forward and backward kernels, their own collectives and the
//    resharding into them run `accumulation` times; a gradient that only the optimizer reads is
//    accumulated locally and reduced (all-reduce, or reduce-scatter under optimizer-state
//    sharding) once, as DDP's no_sync and Megatron-LM's gradient buffers do; the optimizer, the
//    resharding into it and the updated weights' all-gathers run once. Memory holds one round's
//    activations and one gradient buffer per weight (the accumulation buffer).
//  - attention: how the attention core runs (cost/op_cost.h, "Attention cores"). Flash: one fused
//    kernel per direction, as FlashAttention and PyTorch's scaled_dot_product_attention run it —
//    the s×s scores and probabilities stay on chip (no HBM traffic, not saved for backward) and the
//    backward recomputes the scores. Eager: every op of the core is a kernel of its own that writes
//    its result, and the backward reads the saved probabilities. Flash2: the same fused kernels as
//    FlashAttention-2 runs them (PyTorch's flash backend), where Flash is the kernel frameworks pick
//    by default on the GPU (cuDNN's on Hopper); they differ only in speed, the hardware file's
//    flash_attention and flash_attention_2 curves (cost/cost_model.h "Fused attention").
enum class AttentionKernel : uint8_t { Flash, Eager, Flash2 };
std::string_view attentionKernelName(AttentionKernel a);  // "flash", "eager", "flash2"
std::optional<AttentionKernel> parseAttentionKernel(std::string_view name);
// Flash or Flash2: the core runs as fused kernels.
inline bool fusedAttention(AttentionKernel a) { return a != AttentionKernel::Eager; }
//  - crossEntropy: how the loss's cross-entropy runs (cost/op_cost.h, "Cross-entropy cores"): what
//    it keeps for the backward and the buffers its kernels hold, at the logits' size (tokens ×
//    vocabulary, 1/t of it under a vocabulary-parallel head).
//    Fused: one kernel per direction, the f32 values in registers (Megatron-LM
//      --cross-entropy-loss-fusion, a compiled loss, fused cross-entropy kernels): the forward keeps
//      the logits (2 bytes per logit in bf16).
//    InPlace: Megatron-LM's vocabulary-parallel cross-entropy without fusion: the logits copied to
//      f32, the softmax computed and kept in that buffer (4 bytes per logit), the gradient computed
//      in it in place; the bf16 logits are not kept.
//    Eager: PyTorch's F.cross_entropy on f32 logits (torchtitan, Hugging Face): the f32
//      log-probabilities kept (4 bytes per logit); the backward writes two more f32 tensors of that
//      size (the gradient of the log-probabilities, then of the logits) before the bf16 gradient:
//      12 bytes per logit live at its peak. Measured with PyTorch on Llama-3.1-8B's head (16384
//      tokens × 128256): 19.57 GiB above what the forward leaves, the 10 bytes per logit this
//      counts (12 less the bf16 logits, freed) — docs/BENCHMARKS.md, "Outside reference".
enum class CrossEntropyKernel : uint8_t { Fused, InPlace, Eager };
std::string_view crossEntropyKernelName(CrossEntropyKernel c);  // "fused", "inplace", "eager"
std::optional<CrossEntropyKernel> parseCrossEntropyKernel(std::string_view name);
//  - fusion: how the elementwise, broadcast, layout and reduction ops between the library kernels
//    (GEMMs, attention, cross-entropy) run.
//    Compiled: as a compiler fuses them (XLA, torch.compile's Inductor) and as Megatron-LM's fused
//      kernels run them (fused norms, bias-GeLU, SwiGLU, bias-dropout-add): chains of them are one
//      kernel (cost_model.h, "Fusion"), and a fused backward kernel recomputes a chain's
//      intermediates from what the forward kept (op_cost.h, "Saved for backward").
//    Eager: PyTorch without torch.compile (torchtitan's default, Hugging Face): every op is a kernel
//      of its own that reads its operands from HBM and writes its result there, and autograd keeps
//      every forward value a backward op reads. The optimizer's update stays one multi-tensor kernel
//      chain (PyTorch's fused or foreach AdamW). Flash attention and the cross-entropy keep their
//      own settings. torchtitan measured Llama 3.1 8B on 8 H100 at 5,762 tokens/s per GPU eager and
//      6,667 with torch.compile (published-runs.json H8): the eager step 1.16x the compiled one.
enum class KernelFusion : uint8_t { Compiled, Eager };
std::string_view kernelFusionName(KernelFusion f);  // "compiled", "eager"
std::optional<KernelFusion> parseKernelFusion(std::string_view name);

//  - zeroStage (2 and 3; 0 and 1 are optimizerSharding off and on): ZeRO-2 also keeps each
//    weight's gradient buffer as 1/r over the weight's replicas, reduce-scattered into it every
//    micro-batch round; ZeRO-3 (FSDP's FULL_SHARD) keeps the weight itself as 1/r too and
//    all-gathers it before its forward and again before its backward in every round (the gathered
//    weight is in the working set of the ops that read it), with no all-gather after the update.
//  - sequenceParallelAxis (Megatron-LM's sequence parallelism; Korthikanti et al. 2022, §4.2.2):
//    on this mesh axis (empty: off) the activations the tensor-parallel matmuls leave whole — layer
//    norms, dropout, residual additions, the embedding output — are split along the sequence:
//    cost/op_cost.h, sequenceParallelSplit. Set by `cfp estimate --config sp=on` (the axis "tp").
struct MemoryPolicy {
    bool optimizerSharding = true;
    RecomputePolicy recompute = RecomputePolicy::Auto;
    int64_t accumulation = 1;
    AttentionKernel attention = AttentionKernel::Flash;
    CrossEntropyKernel crossEntropy = CrossEntropyKernel::Fused;
    KernelFusion fusion = KernelFusion::Compiled;
    int zeroStage = 1;  // 0–3; 2 and 3 imply optimizerSharding (zeroStageOf)
    std::string sequenceParallelAxis;
    // The step's schedule (plan/step_sim.h): data-parallel gradient reduction overlapped with the
    // backward, weight all-gathers (ZeRO/FSDP) overlapped with compute, gradient bucket size
    // (0: kDefaultBucketBytes).
    bool overlapGradReduce = true;
    bool overlapParamGather = true;
    // Tensor-parallel communication overlapped with the GEMM next to it (Megatron-LM
    // --tp-comm-overlap: the all-gather into a column-parallel GEMM and the reduce-scatter or
    // all-reduce out of a row-parallel one run in chunks beside the GEMM; step_sim.h).
    bool overlapTensorParallel = false;
    // Context parallelism's keys and values passed around the ranks of the context-parallel axis
    // (the mesh axis named kContextParallelAxis) in a ring, beside the attention kernels, as
    // Megatron-LM's --cp-comm-type p2p runs them (cost/op_cost.h runsBeside); false: they
    // are all-gathered before the attention and their gradients reduced after it, on the critical
    // path (--cp-comm-type all_gather). No effect on a mesh without that axis.
    bool contextRing = false;
    int64_t bucketBytes = 0;
    // Pipeline stages the program is cut into (plan/pipeline_plan.h): a rank holds about 1/P of
    // the layers, so the parameters, gradients and optimizer state a device holds are counted
    // 1/P (parameterMemory); the search's memory terms then approximate a rank's. 1: no pipeline.
    int64_t pipelineStages = 1;
};

// The mesh axis context parallelism splits the sequence over (`cfp estimate --config cp=C`).
inline constexpr const char* kContextParallelAxis = "cp";

// Gradient bucket size when a policy states none: Megatron-LM's distributed-optimizer bucket,
// 40,000,000 parameters (at least), in bf16 (PyTorch DDP's default is 25 MiB).
inline constexpr int64_t kDefaultBucketBytes = 80'000'000;

// The ZeRO stage a policy describes: 0 without optimizer sharding, else max(1, zeroStage).
inline int zeroStageOf(const MemoryPolicy& p) { return p.optimizerSharding ? (p.zeroStage < 1 ? 1 : p.zeroStage) : 0; }

// The schedule in words: "gradient reduction and weight gathers overlapped, buckets of 80 MB",
// "no overlap (buckets of 80 MB)", "gradient reduction overlapped, weight gathers not, …".
std::string overlapText(const MemoryPolicy& p);
// The schedule as one word, "all" (on, and tensor-parallel communication too), "on", "grad",
// "param" or "off" (CLI --overlap, files), and back (false for any other word).
std::string overlapWord(const MemoryPolicy& p);
bool setOverlapWord(MemoryPolicy& p, std::string_view word);

// Per-device memory of a plan (bytes).
struct MemoryBreakdown {
    int64_t weights = 0;       // trainable parameters, local shards
    int64_t gradients = 0;     // one gradient buffer per trainable parameter, sharded like it
    int64_t optimizer = 0;     // optimizer-state parameters (AdamW moments, fp32 master weights)
    int64_t activations = 0;   // data inputs and forward results kept for the backward pass
    int64_t transient = 0;     // the largest single op's working set (operands + result)
    int64_t total() const { return weights + gradients + optimizer + activations + transient; }
    bool operator==(const MemoryBreakdown&) const = default;
};

}  // namespace cfp
