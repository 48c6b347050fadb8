#pragma once
// Analytic cost model: seconds for one op's kernel, one collective, one resharding, on one
// device of a cluster (HardwareSpec) laid out as a mesh with link classes.
//
// Kernels (per device, local shard sizes):
//   contraction and other compute ops (dot, reduce, gather, scatter, custom-call):
//       max(flops / (peak(dtype) · gemm_efficiency), bytes / (hbm · hbm_efficiency)) + launch
//   fusible ops (elementwise, select, broadcast, reshape, transpose, convert, slice, concatenate,
//   iota): bytes / (hbm · hbm_efficiency) + launch — memory bound: an elementwise op does a few
//       flops per element it moves, far below the ridge point of any GPU here.
//   bytes = local operand bytes read + local result bytes written.
// Fusion, as a compiler does it: an edge producer → consumer is FUSED when the producer is fusible,
// the consumer is fusible or a reduce, the producer has exactly one consumer, neither op has a
// measured time, and the edge needs no resharding. A fused edge saves the producer's write and
// the consumer's read of that tensor and one kernel launch (the consumer joins the producer's
// kernel): fusedEdgeSavingSeconds(). Fused edges form a forest (single consumer), so summing the
// savings per edge gives exactly the fused groups' cost.
//
// Collectives on mesh axis a of n devices, message b bytes (the full, unsharded message within
// one a-group, DESIGN.md §6), link of the axis's class with latency α and bandwidth 1/β:
//   all-gather, reduce-scatter: (n−1)·α + (n−1)/n · b·β          (ring)
//   all-reduce: min(ring 2(n−1)·α + 2(n−1)/n · b·β,
//                   tree 2·⌈log2 n⌉·α + 2 · b·β)  — tree only where the link supports it
//   all-to-all: (n−1)·α + (n−1)/n² · b·β
// An op's own all-reduce over several axes is one all-reduce per axis, the message shrinking by
// nothing (b is the full result). Resharding is the sum of its planned steps (sharding/reshard.h).
//
// Measured values. The profiler's measurements override the model for ops with the same
// signature (kind, attributes, dtype and LOCAL shapes of operands and result): setMeasured().
// The provenance of every number is then "measured" instead of "modelled".

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "hardware/hardware.h"
#include "ir/graph.h"
#include "rules/op_rules.h"
#include "sharding/mesh.h"
#include "sharding/reshard.h"

namespace cfp {

bool isFusibleKind(OpKind kind);
// Kind-level fusion condition (the sharding and single-consumer conditions are the caller's).
bool fusesInto(OpKind producer, OpKind consumer);

// Bytes of one device's piece of `type` under a compact sharding (splits only; partial axes
// do not shrink the buffer).
int64_t localBytes(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh);
// Local dims under a compact sharding (even splits; the analysis rejects uneven ones).
std::vector<int64_t> localDims(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh);

// Signature for measured values: kind, attributes, dtype and local shapes of operands and result.
uint64_t opCostSignature(const Op& op, std::span<const std::vector<int64_t>> localOperandDims,
                         std::span<const TensorType> operandTypes, const std::vector<int64_t>& localResultDims);

class CostModel {
public:
    // `mesh` must have link classes (assignLinkClasses) and at most kMaxRuleMeshAxes axes.
    static Result<CostModel> create(const HardwareSpec& hardware, const Mesh& mesh);

    const HardwareSpec& hardware() const { return m_hw; }
    const Mesh& mesh() const { return m_mesh; }
    const MeshSizes& sizes() const { return m_sizes; }

    double launchSeconds() const { return m_hw.kernelLaunchSeconds; }
    double hbmSeconds(double bytes) const;
    // One op's kernel, from its local flops and bytes (see above).
    double kernelSeconds(OpKind kind, DType dtype, double localFlops, double localBytes) const;
    // What one fused edge saves: the tensor written and read once less, one launch less.
    double fusedEdgeSavingSeconds(int64_t localTensorBytes) const;

    double collectiveSeconds(CollectiveKind kind, size_t axis, int64_t messageBytes) const;
    // The op's own all-reduce over every axis in `partialMask` (bit a = mesh axis a).
    double ownAllReduceSeconds(uint32_t partialMask, int64_t resultBytes) const;
    // Optimizer-state sharding (ZeRO-1, see plan.h MemoryPolicy): a gradient of `localBytes` that
    // is a partial sum over the axes in `partialMask` is reduce-scattered over them one axis after
    // another in mesh order (each step's message is what is left of the buffer), instead of being
    // all-reduced.
    double shardedReduceScatterSeconds(uint32_t partialMask, int64_t localBytes) const;
    // The updated weight of `localBytes`, held in 1/r pieces over the axes in `replicaMask`
    // (r = the product of their sizes), all-gathered over them in reverse mesh order.
    double shardedAllGatherSeconds(uint32_t replicaMask, int64_t localBytes) const;
    double reshardSeconds(const ReshardPlan& plan) const;

    // Link of mesh axis `axis` (by its link class).
    const LinkSpec& link(size_t axis) const;

    void setMeasured(uint64_t signature, double seconds);
    // Measured seconds for this signature, or nullptr.
    const double* measured(uint64_t signature) const;
    bool hasMeasurements() const { return !m_measured.empty(); }

private:
    CostModel() = default;
    HardwareSpec m_hw;
    Mesh m_mesh;
    MeshSizes m_sizes;
    std::unordered_map<uint64_t, double> m_measured;
};

}  // namespace cfp
