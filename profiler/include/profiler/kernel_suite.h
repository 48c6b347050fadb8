#pragma once
// Kernel comparison (`cfp profile --kernels`): the kernels of one model's training step on one
// GPU, each priced by the cost model with the hardware spec's numbers (what `cfp plan` uses
// without a profile DB) and measured on its own, so that the model can be judged kernel by kernel.
//
//   GEMMs      every distinct matmul shape of the first layer and of the ops outside the layers
//              (embedding, LM head), forward and backward, unsplit (one device, the whole
//              micro-batch of the graph) — the attention core's matmuls as eager attention runs
//              them (their own kernels, the s×s scores in HBM) among them. Priced as a dot
//              (cost_model.h: the GEMM efficiency with tile and wave quantisation, or the HBM
//              roofline, plus a launch); run by the profiler's cuBLASLt backend.
//   memory     a streaming kernel that reads and writes `bytes` in halves (the model's memory-bound
//              kernel, calibration.h memoryProbe), over sizes; run by the profiler's memory kernel.
//   attention  the first layer's attention core as one fused kernel, forward and backward, at the
//              graph's shape (batch, heads, sequence, head dim, causal mask or not): the evaluator's
//              compute for the core's ops in a plan on one device under AttentionKernel::Flash (the
//              kernel frameworks pick by default: cuDNN's on Hopper) and ::Flash2 (FlashAttention-2)
//              — cost/op_cost.h "Attention cores", cost_model.h "Fused attention"; the forward's
//              Q·Kᵀ run again in the backward counts in the backward. The profiler has no fused
//              attention kernel of its own, so these rows carry no measurement from it:
//              bench/reference/kernels.py times the same shapes with PyTorch's
//              scaled_dot_product_attention on the backend each row names as the outside reference.
//
// Every case names how the outside reference runs it (`reference`), so the script needs only the
// JSON that `cfp profile --kernels --json` writes.

#include <cstdint>
#include <string>
#include <vector>

#include "cost/step_policy.h"
#include "hardware/hardware.h"
#include "ir/graph.h"
#include "profiler/work_plan.h"
#include "util/result.h"

namespace cfp::profiler {

enum class KernelGroup : uint8_t { Gemm, Memory, Attention };
std::string_view kernelGroupName(KernelGroup group);  // "gemm", "memory", "attention"

struct AttentionShape {
    int64_t batch = 1, heads = 1, seq = 1, keySeq = 1, headDim = 1;
    bool causal = false;
    DType dtype = DType::BF16;
};

struct KernelCase {
    KernelGroup group = KernelGroup::Gemm;
    std::string name;               // "layers.0.mlp.fc1 (forward)", "copy 64 MiB", "attention (forward)"
    std::string shape;              // "16384x4096 . 4096x16384", "b2 h32 s8192 d128 causal"
    std::string reference;          // how the outside reference runs it: matmul, copy, sdpa_forward, sdpa_backward
    std::string backend;            // attention: PyTorch's SDPA backend it stands for (cudnn: --attention flash; flash: flash2)
    double predictedSeconds = 0;    // the cost model's, with the hardware spec's numbers
    double flops = 0, bytes = 0;    // of the kernel (attention: the matmuls' flops as the model counts them)
    GemmShape gemm;                 // Gemm
    int64_t copyBytes = 0;          // Memory: bytes read plus bytes written
    AttentionShape attention;       // Attention
    // What the profiler runs: a one-item work plan (calibration.h probes); no items where the
    // profiler has no such kernel (fused attention).
    SegmentWorkPlan work;
    bool measurable() const { return !work.items.empty(); }
};

struct KernelSuiteOptions {
    std::vector<int64_t> copyBytes{int64_t{4} << 20, int64_t{64} << 20, int64_t{256} << 20, int64_t{1} << 30};
};

// The cases of `graph` (a training step) on one device of `hardware`. Errors: kernels.no_dots
// when the graph has no matmul; the planner's when the one-device plan cannot be made.
Result<std::vector<KernelCase>> kernelSuite(const Graph& graph, const HardwareSpec& hardware, const KernelSuiteOptions& options = {});

}  // namespace cfp::profiler
