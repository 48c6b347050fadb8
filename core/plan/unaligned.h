#pragma once
// What a plan's unaligned GEMMs cost (cost/cost_model.h "Unaligned GEMMs"): the matmuls whose local
// m, n or k is not a whole number of 16-byte vectors of their type — in practice a vocabulary like
// GPT-2's 50257 in the head's GEMM and both its gradients — run far below the GEMM rate on hardware
// that says so (gemm_unaligned_efficiency). The report says how much of the step they take and
// about how much padding the odd dimension would give back: the same GEMMs at the aligned price
// (the padded dimension is at most 127 larger, a fraction of a percent of the work at a vocabulary's
// size). Frameworks pad for this reason: Megatron-LM's --make-vocab-size-divisible-by (128),
// nanoGPT's 50304.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "ir/graph.h"
#include "plan/plan.h"

namespace cfp {

struct UnalignedGemms {
    int64_t kernels = 0;              // dots with an unaligned local dimension (forward and backward, one round)
    std::vector<int64_t> dims;        // the unaligned dimensions' sizes, distinct, ascending
    int64_t vector = 8;               // values per 16 bytes of their type
    DType dtype = DType::BF16;
    double seconds = 0;               // their kernels per step, as the cost model prices them
    double alignedSeconds = 0;        // the same GEMMs at the aligned price (waves included)
    double stepSeconds = 0;           // the plan's step, for scale
};

// nullopt when the hardware prices no unaligned GEMM differently or the plan has none.
std::optional<UnalignedGemms> planUnalignedGemms(const Plan& plan, const Graph& graph, const HardwareSpec& hardware);

// "3 GEMMs per round have a dimension of 50257, not a multiple of 8 bf16 values: 9.1 ms of the
// 73.0 ms step; padded to a multiple of 128 (50304) about 1.7 ms"
std::string unalignedGemmsText(const UnalignedGemms& u);

}  // namespace cfp
