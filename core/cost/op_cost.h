#pragma once
// One op's cost and memory on one device, given its shardings, and what the step's memory policy
// (step_policy.h) does to it. Every consumer of the cost model computes these the same way through
// this module: the planner's op states (plan/problem.cpp), the independent evaluator
// (plan/evaluator.cpp, which shares these primitives as it shares the roofline and the collectives,
// and nothing of the planner's tables), the op-level formulation (oplevel/) and the profiler's
// work plans (profiler/src/work_plan.cpp).
//
//   kernel   flops split over every mesh axis the op's operands, result or own collective use
//            (each axis splits one factor); an optimizer op under optimizer-state sharding works
//            on 1/r of its local shard (r = the weight's replicas): opKernelSeconds.
//   own      a partial result completed by an all-reduce per partial axis, in mesh order, on the
//            local result; a gradient only the sharded optimizer reads is reduce-scattered instead,
//            each axis on what is left of the buffer: forEachOwnCollective.
//   weights  a trainable weight under optimizer-state sharding is all-gathered back from its 1/r
//            pieces after the update, reverse mesh order: forEachWeightGather.
//   memory   parameterMemory: a trainable weight holds itself and a gradient buffer like it;
//            optimizer state is split over the weight's replicas under optimizer-state sharding;
//            data inputs count as activations.
//
// Example: W[4096,16384] trainable on {dp=2, tp=4} split [{},{tp}] (replicated over dp): local
// 32 MiB in bf16; memory weights 32 MiB + gradients 32 MiB; its AdamW moments (f32, 64 MiB each
// locally) hold 32 MiB each under optimizer sharding (r = 2); after the update the weight is
// all-gathered over dp from 16 MiB pieces.

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "cost/step_policy.h"
#include "ir/graph.h"
#include "rules/op_rules.h"
#include "sharding/sharding.h"

namespace cfp {

// Attention cores (found by a rule over the graph, so imported graphs get them too): a forward
// matmul of two activations D1 (no operand derived from weights alone: Q·Kᵀ) whose result S flows
// only through row-wise ops (elementwise, select, compare, convert, broadcast, reduce: scale, mask,
// softmax) into another matmul of two activations D2 (P·V). The core's tensors of S's shape — in
// the forward, and the backward ops of that shape connected to them (dP, dS and the softmax
// gradient) — are on chip under AttentionKernel::Flash: no HBM traffic, no kernel launch of their
// own, never saved for backward; the matmuls among them still cost their flops, and the forward's
// on-chip matmuls run again in the backward (the scores recomputed from the saved Q, K, V and the
// log-sum-exp). Example, GPT layer (b, heads h, sequence s, head dim d): S = Q·Kᵀ [b,h,s,s], its
// scale, mask, max, exp, sum and divide, and in the backward dP = dO·Vᵀ and the softmax gradient;
// not the [b,h,s] row maxima and sums, which stay ordinary (small) tensors.
//
// Saved for backward, as fused kernels keep it (found by a rule over the graph, like the attention
// cores). Frameworks run chains of elementwise, broadcast, layout and reduction ops as fused
// kernels (XLA fusions, Inductor, Megatron-LM's fused norms, bias-GeLU and SwiGLU): a value inside
// a chain is recomputed by the fused backward kernel from what the forward kept instead of being
// kept itself, while a GEMM's backward (and any other non-fusible backward kernel: gather, scatter,
// custom calls, the flash attention backward) reads its operands from memory. readByBackward is
// the least bytes of forward results (unsharded sizes) that satisfy every backward op: a minimum
// vertex cut (util/max_flow.h) between the values no fusible op can recompute (results of
// matmuls, gathers, …) and the values backward ops read. Recomputing inside a fused backward
// kernel is taken as free: it reads the kept inputs instead of the intermediate it recomputes.
// Example, GPT layer with flash attention (s sequence, b micro-batch, h hidden, 2-byte values):
// the layer norms' inputs and outputs (2sbh each, the output is a GEMM operand), Q, K, V and the
// attention output (8sbh), the MLP's first GEMM result and the GeLU output (8sbh each) — 32sbh, as
// Korthikanti et al. 2022 count for Megatron-LM without dropout; the norms' centred values, the
// GeLU's intermediates and the residual sums are recomputed.
//
// Per op, from the graph alone (and the attention kernel).
struct OpRoles {
    // Sources (parameters, constants, iota) and values computed from constants and iota alone
    // (masks, one-hot iotas, position ids): folded into their consumers as a compiler does — no
    // kernel and no buffer of their own; consumers take their piece locally.
    std::vector<char> sourceLike;
    std::vector<char> gradToOptimizer;  // a backward result that only optimizer ops read
    // A weight gradient's contribution: gradToOptimizer, or a backward result that reaches the
    // optimizer only through backward adds (a tied weight's two contributions, summed). Frameworks
    // accumulate it locally over the micro-batch rounds and reduce it once per step (under ZeRO-0/1;
    // ownCollectiveRepeats), overlapped with the backward (plan/step_sim.h). Only gradToOptimizer
    // results are reduce-scattered (scattersOwnResult): the add needs its operands whole.
    std::vector<char> gradContribution;
    std::vector<char> readByBackward;   // a result kept for backward (forward: fused kernels, above)
    std::vector<int32_t> uses;          // operand uses
    std::vector<char> onChip;           // in a flash attention core (above); all 0 under Eager
    std::vector<char> unmaterialized;   // never in HBM: on chip, or inside a fused chain (below)
    std::vector<char> flashRecompute;   // on chip in the forward: runs again in the backward
    // The matmuls of a fused core (an on-chip operand or result): its key length, head dimension
    // and mask, read against the hardware's fused-attention curves (cost_model.h); seq 0 elsewhere.
    // A core is causal when its mask (a select in the core) is computed from iota and constants
    // alone — positions, as a causal mask is; a mask from the data (padding) counts as none.
    std::vector<FlashMatmul> flash;
    std::vector<char> view;             // an eager view: no kernel, no buffer (below); all 0 when compiled
    // Ops whose chains fuse even under eager kernels: the optimizer's update (PyTorch's fused or
    // foreach AdamW) and a cross-entropy core (below: a library kernel or two).
    std::vector<char> eagerFused;
    // Negative: the op's working set is its materialised operands and result (below); else it is
    // the op's result's elements (local) times this many bytes: the buffers a library kernel holds
    // at once beside what the activations count (cross-entropy cores, below).
    std::vector<int32_t> workPerElement;
};
// readByBackward is 0 for on-chip ops (they are recomputed, not saved) and for forward values the
// fused backward kernels recompute.
//
// Working sets. An op's working set (its operands and result, the memory it needs at once) leaves
// out values that never reach HBM: on-chip ones, and a fusible op's result (elementwise,
// broadcast, layout, reduce) that only fusible ops of its own phase read and that is not kept for
// backward — a fused kernel passes it in registers. Example: the loss's f32 logits, shifted
// logits and exponentials inside one fused cross-entropy; the bf16 logits the head's GEMM writes
// remain. Values computed from constants and iota alone (masks, one-hot iotas) are folded into
// their readers and take none either. Kernel times keep their own fusion rule (cost_model.h:
// fused edges).
//
// Cross-entropy cores (found by a rule over the graph, as attention cores are): a forward matmul L
// that is not in an attention core, whose forward descendants are all row-wise ops (the loss: no
// matmul or other kernel reads what it leads to) and include an exponential of L's shape. The core
// is the forward ops of L's shape among those descendants (the f32 logits, the shifted logits,
// their exponentials, the broadcast maximum) and the backward ops of L's shape connected to them
// (the gradients inside the softmax, up to the gradient of the logits). Under
// CrossEntropyKernel::Fused nothing changes (the rules above: the bf16 logits are kept, the rest
// is in registers); under eager kernels that is stated explicitly (the core's values take no HBM,
// its edges fuse: OpRoles::eagerFused; the logits are kept, their gradient written). Otherwise (step_policy.h) the core's values take no HBM of their own except:
// the operand of the exponential (the shifted logits, standing for the f32 log-probabilities or
// softmax of the same size) is kept for the backward instead of L, its working set the logits
// beside it (workPerElement: L's bytes per logit; under Eager also the f32 copy log_softmax reads);
// the gradient of the logits is materialised, and under Eager its working set is two tensors of
// the kept value's type per logit (the log-probabilities' gradient and the logits' f32 gradient,
// beside the kept log-probabilities that the activations count); the core's other ops hold
// nothing of their own (they read the kept buffer). Kernel times keep their fused-edge rule.
//
// Under KernelFusion::Eager (step_policy.h) no chain is fused: every op is a kernel that reads its
// operands from HBM and writes its result there, and a forward value is kept when a backward op
// reads it (autograd's saved tensors; on-chip values of a flash core excepted) — except views.
// Views, as PyTorch's strided tensors make them: a broadcast (expand), transpose or slice, and a
// reshape of a contiguous value (a materialised result, or a reshape of one), outside the
// optimizer, take no kernel and no buffer; a reader reads the value they view (the broadcast's at
// its full size: a stride-0 read), and a backward op reading a view keeps the value it views
// (nothing where that is a weight or a constant). A reshape of a transpose, broadcast or slice is a
// copy, as `.contiguous()` or `reshape` makes one (Llama's grouped keys repeated before the
// attention; the attention output before its projection). The graph's ops are priced as written:
// a norm or activation that a framework calls as one kernel (F.layer_norm, F.gelu) but the graph
// writes as several ops is several kernels here. Measured with PyTorch on a Llama-3.1-8B layer
// (bench/reference/layer_memory.py, policy none): 52.03 sbh kept; this rule 55 (tst_layer_memory).
OpRoles opRoles(const Graph& graph, AttentionKernel attention = AttentionKernel::Eager,
                CrossEntropyKernel crossEntropy = CrossEntropyKernel::Fused, KernelFusion fusion = KernelFusion::Compiled);
// Whether an edge producer → consumer may fuse under the policy (kinds; the caller checks the
// single use, the shardings and measured times): cost_model.h's fusesInto when compiled; under
// eager only between ops of one library kernel (OpRoles::eagerFused).
bool fusesUnder(const MemoryPolicy& policy, const std::vector<char>& eagerFused, const Op& producer, const Op& consumer);
// An op's working set where OpRoles::workPerElement sets it (`perElement` ≥ 0): its local result's
// elements times that many bytes.
inline int64_t workOfElements(int64_t localResultBytes, DType type, int32_t perElement) {
    return localResultBytes / dtypeBytes(type) * perElement;
}

// Transformer layers, from op scopes: an op whose scope has a numeric component belongs to the
// layer named by the scope up to it ("layers.3.attn.qkv" → "layers.3", "model.layers.12.mlp" →
// "model.layers.12"); the unit is that layer's index in order of first appearance, -1 for ops
// outside layers (embeddings, final norm, head, loss). Backward and optimizer ops carry their
// forward op's scope.
std::vector<int32_t> layerUnits(const Graph& graph);
// How many layers layerUnits finds (the largest unit + 1; 0 without layers).
int32_t layerCount(const std::vector<int32_t>& units);
int32_t layerCount(const Graph& graph);

// Per-op selective recomputation (RecomputePolicy::SelectiveOps): the forward results a layer keeps
// instead of recomputing — in each layer (`layers`, from layerUnits), every other linear matmul's
// (a matmul with an operand derived from weights alone), the first, third, … in op order, and the
// attention kernel's output (the matmul reading the core's on-chip probabilities under flash
// attention). As torchtitan's policy: it saves the outputs of aten.mm except every second one and
// of the flash attention kernel. Example, Llama-3-8B layer (h = 4096, K and V projections of 1024,
// ffn 14336, separate Q, K, V projections; s sequence, b micro-batch, 2-byte values): besides the
// layer's input (2 sbh) it keeps Q (2 sbh), V (0.5), the attention output (2), the gate projection
// (7) and the down projection (2): 15.5 sbh; PyTorch measured 15.53 (bench/reference/layer_memory.py).
// `sourceLike` and `onChip` as OpRoles has them.
std::vector<char> selectiveOpsKept(const Graph& graph, const std::vector<char>& sourceLike, const std::vector<char>& onChip,
                                   const std::vector<int32_t>& layers);

// Per op: computed from a data input (an activation), as opposed to from weights and constants
// alone. The attention-core rule and the Megatron layout (which operand carries the batch) read it.
std::vector<char> dataDerived(const Graph& graph);

// Sequence parallelism on mesh axis T (MemoryPolicy::sequenceParallelAxis; `axis` its index, -1
// off): a fusible activation op (elementwise, broadcast, layout or reduce, computed from data, not
// an optimizer op, not in a manual region: sequenceParallelOps) that splits nothing over T — its operands, result and own
// collectives leave T out, so every device of a T-group would run the same work on the same data —
// runs on a 1/|T| piece of the sequence instead: its kernel time is divided by |T|. Its result,
// and a partial sum over T completed by its collective (a row-parallel matmul's output, which
// sequence parallelism reduce-scatters), held whole over T, is held as a 1/|T| piece: kept (and
// recomputed) bytes divided by |T|. Matmuls, gathers and other kernels are not split. Working sets
// are left whole (the gathered input of a column-parallel matmul is whole). Example, GPT layer at
// tensor parallelism t: the layer norms' inputs and outputs (8 sbh) become 8/t: 32/t sbh per layer
// with flash attention and no dropout, Korthikanti et al.'s 34/t less the two dropout masks.
// sequenceParallelSplit: |T| where the op qualifies (`candidate`) and `mask` (the axes its kernel
// uses, or its result's split axes) leaves T out, else 1.
//
// Communication, as Megatron-LM runs it and for any layout: a piece is made from a tensor whole
// over T by slicing (free); a partial sum over T read by an op sequence parallelism can split
// (sequenceParallelScatters: the row-parallel output read by the residual add) is completed by a
// reduce-scatter over T instead of an all-reduce; a piece read by an op that needs it whole is
// all-gathered over T on the edge into that op (sequenceParallelGathers). The gather is charged once
// per piece: on the edge into its first consumer that sequence parallelism cannot split
// (sequenceParallelGatherers: the column-parallel matmul after a norm; in the backward the
// row-parallel matmul's input-gradient matmul, whose weight-gradient matmul reads the same gathered
// buffer), and on the edge into any consumer it could split that uses T (a layout that splits that
// op over T another way). The backward's re-gather of a saved piece for a weight-gradient matmul,
// which Megatron-LM overlaps with the input-gradient matmul, is not charged. In the Megatron layout
// the reduce-scatter and the all-gather are the two halves of the all-reduce they replace; a layout
// that holds a region whole over T without a partial sum before it pays the whole all-gather.
std::vector<char> sequenceParallelOps(const Graph& graph);
// The mesh index of the policy's sequence-parallel axis: -1 when it is off, nullopt when `mesh`
// has no such axis.
std::optional<int> sequenceParallelAxisIndex(const MemoryPolicy& policy, const Mesh& mesh);
int64_t sequenceParallelSplit(int axis, const MeshSizes& sizes, bool candidate, uint32_t mask);
// Per op: whether its partial sum over T is reduce-scattered into a piece (computed from data, and a
// consumer is in sequenceParallelOps; the rest of the partial axes are all-reduced as before).
std::vector<char> sequenceParallelScatters(const Graph& graph, const std::vector<char>& spOps);
// Per op: the consumer whose edge carries the all-gather of its result when held as a piece: its
// first consumer in op order not in sequenceParallelOps, kNoOp when none.
std::vector<OpId> sequenceParallelGatherers(const Graph& graph, const std::vector<char>& spOps);
// Whether an op's result is held as a piece over T (`axis` ≥ 0): its kernel ran on a piece
// (`split` > 1), or it completes a partial sum over T by a reduce-scatter.
bool sequenceParallelPiece(int axis, int64_t split, uint32_t partialMask, bool scatters);
// Whether edge u → v (operand `slot`) all-gathers u's piece: u is held as a piece (`uPiece`), the
// slot is u's first among v's operands, and v is u's gatherer or an op sequence parallelism could
// split (`vCandidate`) that runs whole (`vSplit` 1).
bool sequenceParallelGathers(bool uPiece, const Op& v, size_t slot, OpId u, OpId gatherer, bool vCandidate, int64_t vSplit);
// The axes whose partial sum an op completes by a reduce-scatter rather than an all-reduce: all of
// `partialMask` for a gradient only the sharded optimizer reads (scattersOwnResult), T where
// sequence parallelism holds the result as a piece (`spScatters`, sequenceParallelScatters).
uint32_t ownScatterMask(uint32_t partialMask, bool scattersOwn, int spAxis, bool spScatters);
// That all-gather as a resharding step (for the step simulator and the trace): the piece of a
// tensor held as `held` (whole over T in its sharding), `localBytes` per device once gathered. Last
// in the edge's plan, so that its seconds sum as the search sums them.
CollectiveStep sequenceParallelGatherStep(const TensorSharding& held, const Mesh& mesh, size_t axis, int64_t localBytes);
// The bytes of forward results kept for backward (readByBackward), unsharded: one device's
// activations without parallelism or recomputation.
int64_t savedActivationBytes(const Graph& graph, const OpRoles& roles);

// The mesh axes on which a tensor's pieces repeat (its replicas: not split there), as a mask
// (bit a = mesh axis a), and the product of the sizes of the axes in a mask.
uint32_t replicaMask(const CompactSharding& sharding, const MeshSizes& sizes);
uint32_t replicaMask(const TensorSharding& sharding, const Mesh& mesh);
int64_t axesProduct(uint32_t mask, const MeshSizes& sizes);

// How many ways optimizer-state sharding splits an op's work further: its result's `replicas` for
// an optimizer op that is not folded, else 1.
int64_t optimizerWorkSplit(const Op& op, bool sourceLike, int64_t replicas, const MemoryPolicy& policy);

// The op's kernel time (see above): `opFlops` its FLOPs unsplit, `axesUsed` the mesh axes its
// shardings and own collectives use, `localBytes` its operands read and result written per device,
// `zeroSplit` from optimizerWorkSplit.
// An on-chip op (OpRoles::onChip) costs its flops only (CostModel::onChipSeconds). A dot's `grid`
// (gemmGridOf) applies the hardware's GEMM waves (cost_model.h). A fused attention matmul
// (`flash` with seq > 0, OpRoles::flash) runs at the hardware's fused-attention efficiency where it
// has curves (cost_model.h "Fused attention"); one recomputed in the backward costs, per run, the
// mean of its forward and backward prices (kernelRepeats counts two runs).
double opKernelSeconds(const CostModel& model, const Op& op, double opFlops, uint32_t axesUsed, double localBytes, int64_t zeroSplit,
                       bool onChip = false, const GemmGrid* grid = nullptr, const FlashMatmul* flash = nullptr);
// A dot's output grid from its local result dims: HLO's result order, batch dims, then the lhs's
// free dims (m, their product), then the rhs's (n). Other ops: nullopt.
std::optional<GemmGrid> gemmGridOf(const Graph& graph, const Op& op, const std::vector<int64_t>& localResultDims);

// A collective an op runs itself.
struct OpCollective {
    CollectiveKind kind = CollectiveKind::AllReduce;
    size_t axis = 0;
    int64_t bytes = 0;  // the message (CostModel::collectiveSeconds' convention)
};

// The collectives completing a partial result over the axes in `partialMask`, in mesh order: an
// all-reduce of the local result per axis, or, on the axes in `scatterMask` (ownScatterMask), a
// reduce-scatter of what is left of the buffer.
template <typename Fn>
void forEachOwnCollective(const MeshSizes& sizes, uint32_t partialMask, int64_t localResultBytes, uint32_t scatterMask, Fn&& fn) {
    int64_t left = localResultBytes;
    for (int a = 0; a < sizes.rank; ++a) {
        if (!(partialMask & (1u << a))) continue;
        const bool scatter = (scatterMask & (1u << a)) != 0;
        fn(OpCollective{scatter ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, static_cast<size_t>(a), left});
        if (scatter) left /= sizes.size[static_cast<size_t>(a)];
    }
}
template <typename Fn>
void forEachOwnCollective(const MeshSizes&, uint32_t, int64_t, bool, Fn&&) = delete;  // a mask, not a flag
// Whether an op's partial result is reduce-scattered (optimizer-state sharding, a gradient only the
// optimizer reads) rather than all-reduced.
inline bool scattersOwnResult(bool gradToOptimizer, const MemoryPolicy& policy) { return policy.optimizerSharding && gradToOptimizer; }

// The all-gathers of a trainable weight from its 1/r pieces, reverse mesh order: after the update
// under ZeRO-1/2, before every forward and backward under ZeRO-3 (weightGatherRepeats); none for
// other parameters or without optimizer-state sharding.
template <typename Fn>
void forEachWeightGather(const MeshSizes& sizes, const Op& param, uint32_t replicaAxes, int64_t localBytes, const MemoryPolicy& policy,
                         Fn&& fn) {
    if (param.kind != OpKind::Parameter || param.role != ParamRole::Trainable || !policy.optimizerSharding) return;
    int64_t have = localBytes / axesProduct(replicaAxes, sizes);
    for (int a = sizes.rank - 1; a >= 0; --a) {
        if (!(replicaAxes & (1u << a))) continue;
        have *= sizes.size[static_cast<size_t>(a)];
        fn(OpCollective{CollectiveKind::AllGather, static_cast<size_t>(a), have});
    }
}

// How many times per step (gradient accumulation, step_policy.h) an op's kernel runs, and its own
// collectives: a forward or backward op once per micro-batch round, an optimizer op once; a
// gradient only the optimizer reads is reduced once; a parameter's all-gathers happen once.
// Resharding into an op runs as often as its kernel.
// A flash-recomputed op (OpRoles::flashRecompute) runs twice as often.
double kernelRepeats(const Op& op, const MemoryPolicy& policy, bool flashRecompute = false);
double ownCollectiveRepeats(const Op& op, bool gradToOptimizer, const MemoryPolicy& policy);

// Tensor-parallel communication beside its GEMM (MemoryPolicy::overlapTensorParallel, Megatron-LM
// --tp-comm-overlap; the step simulator's computeBeside): the resharding into a matmul and the
// matmul's own collectives (not a gradient's reduction) on intra-node axes run beside it, in
// chunks. The objective (and the evaluator's sum) charges such communication, `beside` seconds of
// it per run of a matmul whose kernel takes `gemm` seconds per run, as the simulator does: the part
// the kernel hides at the contention factor (HardwareSpec::overlapSlowdown), the rest in full. Each
// edge into the matmul and its own collectives are charged against the whole kernel on their own
// (the simulator adds them up first), so the charge can be below the simulated step where both
// occur; the Megatron layouts have one of them per matmul.
bool communicatesBeside(const Op& op, const MemoryPolicy& policy);
double besideGemmCharge(const CostModel& model, double beside, double gemm);
// Ring context parallelism (MemoryPolicy::contextRing, Megatron-LM --cp-comm-type p2p): the
// matmuls of an attention core — those with an on-chip operand or result (OpRoles::onChip: Q·Kᵀ,
// P·V and their backward dots; none under eager attention) — receive the keys and values, and send
// their gradients on, over the context-parallel axis chunk by chunk while they compute on the
// chunk in hand. Their communication on that axis (a resharding into them, their own collectives)
// runs beside their kernel and is charged as tensor-parallel communication beside a GEMM is
// (besideGemmCharge): what the kernel hides at the contention factor, the rest in full. The bytes
// are those of the all-gather (a ring all-gather passes the same chunks); a gradient's partial
// sum over cp is still priced as an all-reduce (the ring passes half of that: the estimate errs on
// the slow side). attentionMatmul: whether op is such a matmul.
bool attentionMatmul(const Op& op, const std::vector<char>& onChip);
// Per op of `graph`: whether it is an attention matmul the context ring runs beside (all 0 unless
// the policy runs the ring on a mesh with the context-parallel axis).
std::vector<char> contextRingMatmuls(const Graph& graph, const std::vector<char>& onChip, const MemoryPolicy& policy, const CostModel& model);
// Whether communication on mesh axis `axis` into op (a resharding) or of op (its own collectives,
// not a gradient's reduction) runs beside op's kernel: tensor-parallel communication beside a
// GEMM on an intra-node axis, or the context ring into an attention matmul (`attention`).
bool runsBeside(const CostModel& model, const Op& op, const MemoryPolicy& policy, size_t axis, bool attention);
// Whether mesh axis `axis` joins devices of one node (the simulator's compute-side channel).
bool intraNodeAxis(const CostModel& model, size_t axis);

// How many times per step a weight's gathers run: once (ZeRO-1/2), 2 × rounds (ZeRO-3).
double weightGatherRepeats(const MemoryPolicy& policy);

// Seconds of an op's own collectives (one time each), summed in the order above.
double ownCollectiveSeconds(const CostModel& model, uint32_t partialMask, int64_t localResultBytes, uint32_t scatterMask);
// Communication seconds, and the part of them on intra-node axes (communicatesBeside).
// `context`: the part on the context-parallel axis (CostModel::contextAxis; the context ring).
struct CommCost {
    double total = 0, intra = 0, context = 0;
    void add(const CostModel& model, size_t axis, double seconds);
    CommCost times(double k) const { return {total * k, intra * k, context * k}; }
};
// An op's own collectives (ownCollectiveSeconds) and a resharding's steps, so split; an overlapped
// gradient's reductions `coalesced` (coalescedSeconds) where the policy is given.
CommCost ownCollectiveCost(const CostModel& model, uint32_t partialMask, int64_t localResultBytes, uint32_t scatterMask,
                           const MemoryPolicy* coalesced = nullptr);
CommCost reshardCost(const CostModel& model, const ReshardPlan& plan);
// What the objective charges for `c` per run of op `op` whose kernel takes `gemm` seconds per
// run: the part that runsBeside the kernel charged by besideGemmCharge (its intra-node part where
// the op communicatesBeside; its context-parallel part where it is an attention matmul under the
// context ring), the rest in full.
double chargedComm(const CostModel& model, const Op& op, const MemoryPolicy& policy, const CommCost& c, double gemm, bool attention);
// Runs of an op per step that its communication is charged against: a micro-batch round's (the
// accumulation count), once for the optimizer.
double runsPerStep(const Op& op, const MemoryPolicy& policy);
double ownCollectiveSeconds(const CostModel&, uint32_t, int64_t, bool) = delete;  // a mask, not a flag
// A weight's gathers per step (weightGatherRepeats), coalesced (coalescedSeconds) where overlapped.
CommCost weightGatherCost(const CostModel& model, const Op& param, uint32_t replicaAxes, int64_t localBytes, const MemoryPolicy& policy);
// Overlapped gradient reductions and weight gathers travel coalesced, in buckets of
// MemoryPolicy::bucketBytes (80 MB by default) as the step simulator runs them: a collective of
// fewer bytes is priced at its share of a bucket's time (NCCL's bus bandwidth at the bucket's size,
// its latency shared), a larger one on its own. (FSDP gathers a layer's weights at once, often more
// than a bucket: priced at the bucket's rate, a little dearer than the simulator's.)
double coalescedSeconds(const CostModel& model, const OpCollective& o, const MemoryPolicy& policy);

// Overlapped collectives: gradient reductions (an op whose result only the optimizer reads) under
// MemoryPolicy::overlapGradReduce and weight all-gathers under overlapParamGather run beside the
// compute of their layer (plan/step_sim.h). The search's objective (and the evaluator's sum)
// charges each op's overlapped collectives, per channel (intra-node and inter-node links run side
// by side), the part its `cover` seconds of compute hide at the contention factor
// (HardwareSpec::overlapSlowdown) and the rest in full, each priced coalesced (coalescedSeconds).
// Where the communication fits under the compute this is the contention charge alone; where it
// does not (a 64-way ZeRO-3 group across nodes at one sequence per rank) the objective pays the
// excess as the simulated step does. Not overlapped: all of it.
//
// The cover (overlapCover, per op): the compute of the op's layer (layerUnits; the ops outside
// layers are one more pool) at the ideal split (each kernel's flops and bytes over all devices),
// shared among the layer's overlapped collectives by the bytes of their tensors:
//   weight gathers — ZeRO-1/2: the layer's forward of one round (the gathers after the update run
//     under the next step's first forward); ZeRO-3: every round's forward and half its backward;
//   gradient reductions — the layer's backward of each round that reduces: the last under
//     ZeRO-0/1, every round under ZeRO-2, half of every round's backward under ZeRO-3 (the other
//     half hides the backward's gathers).
// Example: a layer whose weights' gathers take 34 ms per round on the inter-node channel beside a
// 5.3 ms forward is charged 34 - 5.3 + 0.1 x 5.3 ms for them, not 3.4 ms.
std::vector<double> overlapCover(const Graph& graph, const OpRoles& roles, const CostModel& model, const MemoryPolicy& policy);
// The charge for overlapped communication `c` (per channel, as CommCost splits it) beside `cover`
// seconds of compute; `c` in full where `overlapped` is false.
double overlappedCharge(const CostModel& model, const CommCost& c, double cover, bool overlapped);

// What a parameter op holds per device: a trainable weight itself and a gradient buffer like it
// (each split over its `replicas` from ZeRO-3 and ZeRO-2 on); optimizer state split over its
// `replicas` under optimizer-state sharding; anything else (data inputs) as activations. Under
// ZeRO-3 a `resident` weight (stepResidentWeights) also holds its gathered copy (`localBytes`).
MemoryBreakdown parameterMemory(const Op& param, int64_t localBytes, int64_t replicas, const MemoryPolicy& policy, bool resident = false);

// The trainable weights ZeRO-3 keeps gathered through a micro-batch's forward and backward, as
// FSDP2 wraps a model (one fully_shard unit per layer, the root module around the rest): the
// weights outside the layers (layerUnits: embeddings, final norm, head), since fully_shard does not
// reshard the root module after its forward ("the parameters would be freed and all-gathered
// immediately", torch/distributed/fsdp/_fully_shard/_fsdp_state.py). A layer's weights are gathered
// around the ops that read them (their working sets). Empty (none) below ZeRO-3 or when the graph
// has no layers to wrap.
std::vector<char> stepResidentWeights(const Graph& graph, const MemoryPolicy& policy);

}  // namespace cfp
