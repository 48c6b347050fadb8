#include "cost/step_policy.h"

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

std::string_view attentionKernelName(AttentionKernel a) { return a == AttentionKernel::Flash ? "flash" : "eager"; }

std::optional<AttentionKernel> parseAttentionKernel(std::string_view name) {
    if (name == "flash") return AttentionKernel::Flash;
    if (name == "eager") return AttentionKernel::Eager;
    return std::nullopt;
}

}  // namespace cfp
