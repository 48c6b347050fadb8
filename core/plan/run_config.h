#pragma once
// A parallel configuration as a user runs it today (Megatron-LM or torchtitan style), to be priced
// by `cfp estimate` and compared with a plan (`cfp plan --config`). One parser and one printer:
//
//   auto c = RunConfig::parse("tp=8,dp=16,zero=1,mbs=1,recompute=full,sp=off");
//   c->toString()   // "tp=8,dp=16,zero=1,mbs=1,recompute=full,sp=off"
//
// Keys (each at most once, any order; a key left out is chosen: see planConfigured):
//   tp  tensor-parallel degree (Megatron column/row-parallel layers)      default 1
//   dp  data-parallel degree                                              default devices / (tp · cp · pp)
//   pp  pipeline-parallel degree: the layers cut into pp stages (plan/pipeline_plan.h)   default 1
//   vp  model chunks per pipeline rank (Megatron-LM's virtual pipeline size; > 1 interleaves) default 1
//   pp_first, pp_last  layers of the first and last pipeline stage, the others sharing the rest
//       evenly (Megatron-LM's --decoder-first/last-pipeline-num-layers; vp 1)  default: all even
//   schedule  1f1b (Megatron-LM's default) | interleaved (with vp > 1) | gpipe | zb-h1 | zb-h2 |
//             zb-v | dualpipe-v (vp 2, a V) | dualpipe (two copies from both ends; vp 2 unless given)
//             default: interleaved when vp > 1, else 1f1b
//   cp  context-parallel degree: the sequence split over cp ranks, keys and values exchanged
//       for the attention (baselines.cpp; not with pp > 1)                default 1, or (cfp
//       estimate, pp 1) the fewest of 2, 4, 8, … ranks at which a completion fits where none does without
//   cp_comm  p2p: keys and values passed around the cp ranks in a ring beside the attention
//            kernels (Megatron-LM's default --cp-comm-type p2p) | all_gather: gathered before
//            the attention, on the critical path (--cp-comm-type all_gather)   default p2p
//   zero  ZeRO stage: 0 none, 1 optimizer state, 2 and gradients, 3 and weights sharded over dp (FSDP)   default 1
//   mbs   micro-batch per data-parallel rank                              default: the fewest rounds that fit
//   recompute  none | selective (the attention core: what flash attention recomputes; with
//              flash attention the same as none) | full (every layer recomputed from its input) |
//              op (torchtitan's per-op selective checkpointing: each layer keeps its input, every
//              other linear layer's output and the attention output)                    default none
//   sp    on: sequence parallelism over tp (Megatron-LM's) | off           default off
//   overlap  on (data-parallel gradient reduction overlapped with the backward and weight
//            all-gathers with compute: PyTorch DDP, FSDP, Megatron-LM with --overlap-grad-reduce
//            --overlap-param-gather) | grad (the reduction only) | param (the gathers only) |
//            off (both after the backward / the update, on the critical path) | all (on, and
//            tensor-parallel communication beside the GEMM next to it: Megatron-LM
//            --tp-comm-overlap)                                                 default on
//   bucket   gradient bucket size in MB (10^6 bytes)                       default 80

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plan/pipeline.h"
#include "util/result.h"

namespace cfp {

enum class RecomputeMode : uint8_t { None, Selective, Full, Op };
std::string_view recomputeModeName(RecomputeMode m);  // "none", "selective", "full", "op"

struct RunConfig {
    std::optional<int64_t> tp, dp, pp, vp, cp, microBatch;
    std::optional<int64_t> ppFirst, ppLast;  // layers of the first and last pipeline stage
    std::optional<PipeScheduleKind> schedule;
    std::optional<int> zero;
    std::optional<bool> sequenceParallel;
    std::optional<RecomputeMode> recompute;
    std::optional<std::string> overlap;  // "on", "grad", "param" or "off" (setOverlapWord)
    std::optional<int64_t> bucketMb;
    std::optional<bool> cpRing;  // cp_comm: true p2p, false all_gather

    // Errors: config.syntax ("tp=8,dp=x": which key, what was expected), schedule.unsupported.
    static Result<RunConfig> parse(std::string_view text);
    std::string toString() const;  // the keys given, in the order above the parser documents
    bool operator==(const RunConfig&) const = default;
};

}  // namespace cfp
