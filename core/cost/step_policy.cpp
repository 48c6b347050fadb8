#include "cost/step_policy.h"

#include <cstdio>

namespace cfp {

std::string_view recomputePolicyName(RecomputePolicy p) {
    switch (p) {
        case RecomputePolicy::None: return "none";
        case RecomputePolicy::Auto: return "auto";
        case RecomputePolicy::All: return "all";
        case RecomputePolicy::Layers: return "layers";
        case RecomputePolicy::SelectiveOps: return "ops";
    }
    return "none";
}

std::optional<RecomputePolicy> parseRecomputePolicy(std::string_view name) {
    if (name == "none") return RecomputePolicy::None;
    if (name == "auto") return RecomputePolicy::Auto;
    if (name == "all") return RecomputePolicy::All;
    if (name == "layers") return RecomputePolicy::Layers;
    if (name == "ops") return RecomputePolicy::SelectiveOps;
    return std::nullopt;
}

std::string_view attentionKernelName(AttentionKernel a) {
    switch (a) {
        case AttentionKernel::Flash: return "flash";
        case AttentionKernel::Flash2: return "flash2";
        case AttentionKernel::Eager: return "eager";
    }
    return "?";
}

std::optional<AttentionKernel> parseAttentionKernel(std::string_view name) {
    if (name == "flash") return AttentionKernel::Flash;
    if (name == "flash2") return AttentionKernel::Flash2;
    if (name == "eager") return AttentionKernel::Eager;
    return std::nullopt;
}

std::string_view crossEntropyKernelName(CrossEntropyKernel c) {
    switch (c) {
        case CrossEntropyKernel::Fused: return "fused";
        case CrossEntropyKernel::InPlace: return "inplace";
        case CrossEntropyKernel::Eager: return "eager";
    }
    return "fused";
}

std::optional<CrossEntropyKernel> parseCrossEntropyKernel(std::string_view name) {
    if (name == "fused") return CrossEntropyKernel::Fused;
    if (name == "inplace") return CrossEntropyKernel::InPlace;
    if (name == "eager") return CrossEntropyKernel::Eager;
    return std::nullopt;
}

std::string_view kernelFusionName(KernelFusion f) { return f == KernelFusion::Compiled ? "compiled" : "eager"; }

std::optional<KernelFusion> parseKernelFusion(std::string_view name) {
    if (name == "compiled") return KernelFusion::Compiled;
    if (name == "eager") return KernelFusion::Eager;
    return std::nullopt;
}

std::string overlapWord(const MemoryPolicy& p) {
    if (p.overlapTensorParallel && p.overlapGradReduce && p.overlapParamGather) return "all";
    return p.overlapGradReduce && p.overlapParamGather ? "on" : p.overlapGradReduce ? "grad" : p.overlapParamGather ? "param" : "off";
}

bool setOverlapWord(MemoryPolicy& p, std::string_view word) {
    if (word != "all" && word != "on" && word != "off" && word != "grad" && word != "param") return false;
    p.overlapGradReduce = word == "all" || word == "on" || word == "grad";
    p.overlapParamGather = word == "all" || word == "on" || word == "param";
    p.overlapTensorParallel = word == "all";
    return true;
}

std::string overlapText(const MemoryPolicy& p) {
    const int64_t bucket = p.bucketBytes > 0 ? p.bucketBytes : kDefaultBucketBytes;
    char mb[32];
    std::snprintf(mb, sizeof mb, "%.0f MB", static_cast<double>(bucket) / 1e6);
    const std::string buckets = std::string("buckets of ") + mb;
    if (p.overlapTensorParallel) return "gradient reduction, weight gathers and tensor-parallel communication overlapped, " + buckets;
    if (p.overlapGradReduce && p.overlapParamGather) return "gradient reduction and weight gathers overlapped, " + buckets;
    if (p.overlapGradReduce) return "gradient reduction overlapped, weight gathers not, " + buckets;
    if (p.overlapParamGather) return "weight gathers overlapped, gradient reduction not, " + buckets;
    return "no overlap, " + buckets;
}

}  // namespace cfp
