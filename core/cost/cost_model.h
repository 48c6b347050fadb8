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
// GEMM waves (a hardware file's gemm_waves: SM count and tile shapes). A GEMM's output — batch ×
// M × N, local — is cut into tiles of tm × tn, one SM computing one tile at a time; the SMs run the
// tiles in waves. With T = batch · ⌈M/tm⌉ · ⌈N/tn⌉ tiles on S SMs the GEMM takes ⌈T/S⌉ waves of a
// tile's time, where a machine of full tiles and full waves would take batch·M·N / (S·tm·tn) of
// them: the efficiency is gemm_efficiency × batch·M·N / (⌈T/S⌉·S·tm·tn), at the tile shape of
// the file's list that gives the most (NVIDIA's "Matrix Multiplication Background User's Guide":
// tile and wave quantisation). Large GEMMs lose a few percent (16384 × 4096 in 128 × 256 tiles on
// 132 SMs: 2048 tiles, 16 waves, 97%); a GEMM of 133 tiles takes two waves where 132 take one.
// Dots only, not inside a flash attention kernel, and not where a calibration table gives the
// measured efficiency (which has the shapes in it).
// Unaligned GEMMs (a hardware file's gemm_unaligned_efficiency): a GEMM one of whose dimensions
// m, n, k (local) is not a multiple of 16 bytes' worth of its type (8 bf16 values) runs at that
// efficiency instead, waves aside — the tensor-core kernels that cuBLAS prefers need every row of
// every operand 16-byte aligned. Measured on an H200 (`cfp profile --kernels`, 2026-11-30), bf16
// GEMMs with n or k = 50257 (GPT-2's vocabulary in the LM head, forward and both gradients):
// 134-143 TFLOP/s through cuBLASLt and torch.matmul alike, 0.14 of peak, where the aligned GEMMs
// of the same layer reach 0.70-0.93. Frameworks pad the vocabulary for this reason (Megatron-LM's
// --make-vocab-size-divisible-by 128).
//
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
// Rails: an inter-node axis whose groups hold m > 1 devices of each node (stride p < G GPUs per
// node, m = G / p) runs as NCCL runs it on rail-optimised nodes, m rings (channels) side by side,
// each leaving the node through a different GPU's NIC, the hops inside the node on NVLink: a group
// moves data at m × the per-GPU inter-node bandwidth, at most the intra-node bandwidth. The node's
// G NICs are shared by its p groups, which run the collective at the same time, so each gets m.
// (NCCL all-reduce across DGX H100 nodes, 8 × 400 Gb/s per node: bus bandwidth ~370-390 GB/s,
// 8 × the 46-48 GB/s one NIC achieves; across nodes of 4 HDR NICs, 85-96 GB/s: micro_benchmarks
// in published-runs.json.) An axis with one device per node (stride ≥ G) uses one NIC per device.
// Measured bus bandwidth (LinkSpec::busCurve, a hardware file's bus_bandwidth_curve): where the
// axis's link has one, all-reduce, all-gather and reduce-scatter take b · f / busbw(b), with f =
// 2(n−1)/n for all-reduce and (n−1)/n for the others (nccl-tests' bus-bandwidth convention, which
// makes a curve measured on 8 GPUs hold for other group sizes), busbw log-log interpolated between
// the measured sizes (beyond the largest, its value), capped at the curve's other-collectives peak
// for all-gather and reduce-scatter; below the smallest size the time runs linearly from the
// curve's latency floor at 0 bytes to that size's; the floor, an all-reduce's on the curve's m
// devices, scales with the ring's steps: (n−1)/(m−1) of it, half of that for all-gather and
// reduce-scatter. Below the cap a reduce-scatter and an all-gather cost one
// all-reduce, as on the α-β line. DGX H100's NVLink: 67 GB/s at 1 MiB, 362 at
// 64 MiB, 480 at 8 GiB (NVLS), where the α-β line gives 101, 427 and 450. All-to-all stays α-β.
// An op's own all-reduce over several axes is one all-reduce per axis, the message shrinking by
// nothing (b is the full result). Resharding is the sum of its planned steps (sharding/reshard.h).
//
// Fused attention (a hardware file's flash_attention / flash_attention_2, AttentionKernel::Flash /
// ::Flash2). The matmuls of a fused attention core (cost/op_cost.h "Attention cores": Q·Kᵀ and P·V
// in the forward kernel; the scores again, dP, dV, dQ and dK in the backward) run at the measured
// efficiency of such a kernel — its curve over the key sequence length s for the direction, read
// log-linearly between the measured lengths — instead of gemm_efficiency, times (d/128)^0.3 for a
// head dimension d below 128 (measured at d = 64: 0.71-0.86 of d = 128 for cuDNN, 0.83-0.92 for
// FlashAttention-2; 0.81 here). A causal mask halves the work (the kernels skip the key tiles above
// the diagonal) at the causal curve's efficiency. The forward's Q·Kᵀ, run again in the backward,
// costs one run at each direction's efficiency. Measured on an H200 (cuDNN 0.61-0.69 of peak
// forward, 0.37-0.54 backward; FlashAttention-2 0.34-0.35 and 0.22-0.32; causal: cuDNN 0.46-0.60 and
// 0.25-0.52 of the half work): the curves of h100-sxm and h200. Without curves an attention
// matmul costs what any on-chip matmul or GEMM costs (gemm_efficiency, every s × s product).
//
// Measured values. The profiler's measurements override the model for ops with the same
// signature (kind, attributes, dtype and LOCAL shapes of operands and result): setMeasured().
// The provenance of every number is then "measured" instead of "modelled".
//
// Calibration (setCalibration). The profiler also measures the hardware the model describes, and
// the model then uses what was measured instead of the spec's numbers:
//   - GEMM efficiency: contraction kernels use the efficiency interpolated from a table of measured
//     GEMMs (achieved / peak FLOP/s) over shapes, by inverse-distance weighting of the 4 nearest
//     measured points in (log2 flops, log2 flops-per-byte) of the same dtype;
//   - HBM: the achieved bandwidth of the memory-bound kernel replaces hbm · hbm_efficiency;
//   - launch: the measured fixed cost of one kernel;
//   - collectives: a fitted α and β per (link class, axis size, collective), used in the same
//     formulas as above (for all-reduce the ring formula with the fitted α and β, which then
//     includes whatever algorithm the library chose). Axes without a fit keep the spec's link.
// Calibrated numbers keep the provenance "modelled": they are the model, with measured constants.

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "hardware/hardware.h"
#include "ir/graph.h"
#include "rules/op_rules.h"
#include "sharding/mesh.h"
#include "sharding/reshard.h"

namespace cfp {

// A fused attention matmul (above, "Fused attention").
struct FlashMatmul {
    int64_t seq = 0;          // the core's key length; 0: not a fused attention matmul
    int64_t headDim = 0;
    bool causal = false;
    bool flash2 = false;      // the hardware's flash_attention_2 curves, else flash_attention
    bool recomputed = false;  // a forward matmul that runs again in the backward kernel
};

bool isFusibleKind(OpKind kind);
// Kind-level fusion condition (the sharding and single-consumer conditions are the caller's).
bool fusesInto(OpKind producer, OpKind consumer);

// Bytes of one device's piece of `type` under a compact sharding (splits only; partial axes
// do not shrink the buffer).
int64_t localBytes(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh);
// The same from the tensor's whole size in bytes.
int64_t localBytes(int64_t bytes, const CompactSharding& sharding, const MeshSizes& mesh);
// Local dims under a compact sharding (even splits; the analysis rejects uneven ones).
std::vector<int64_t> localDims(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh);

// The same for a TensorSharding on `mesh` (the evaluator's and the profiler's view of a plan).
int64_t shardBytes(const TensorType& type, const TensorSharding& sharding, const Mesh& mesh);
std::vector<int64_t> shardDims(const TensorType& type, const TensorSharding& sharding, const Mesh& mesh);

// Signature for measured values: kind, attributes, dtype and local shapes of operands and result.
uint64_t opCostSignature(const Op& op, std::span<const std::vector<int64_t>> localOperandDims,
                         std::span<const TensorType> operandTypes, const std::vector<int64_t>& localResultDims);

struct GemmEfficiencyPoint {
    DType dtype = DType::BF16;
    double flops = 0;        // local flops of the GEMM (2·m·n·k·batch)
    double bytes = 0;        // operands read + result written
    double efficiency = 0;   // achieved / HardwareSpec::peakFlopsFor(dtype), in (0, 1]
    bool operator==(const GemmEfficiencyPoint&) const = default;
};

struct CollectiveFit {
    LinkClass link = LinkClass::IntraNode;
    int64_t devices = 0;             // axis size n
    CollectiveKind kind = CollectiveKind::AllReduce;
    double alphaSeconds = 0;         // per ring step
    double betaSecondsPerByte = 0;   // 1 / achieved bandwidth
    bool operator==(const CollectiveFit&) const = default;
};

// The ring formula's factors for `kind` on n devices: seconds = steps·α + bytesFactor·b·β.
struct AlphaBetaFactors {
    double steps = 0;
    double bytesFactor = 0;
};
AlphaBetaFactors ringFactors(CollectiveKind kind, double n);

struct CostCalibration {
    std::vector<GemmEfficiencyPoint> gemm;
    double hbmBytesPerSecond = 0;    // achieved; 0 = not calibrated
    double launchSeconds = -1;       // measured fixed cost of one kernel; < 0 = not calibrated
    std::vector<CollectiveFit> collectives;
    bool empty() const { return gemm.empty() && hbmBytesPerSecond <= 0 && launchSeconds < 0 && collectives.empty(); }
    bool operator==(const CostCalibration&) const = default;
};

// A GEMM's output grid (local): batch × m × n (GEMM waves, above).
struct GemmGrid {
    double batch = 1, m = 1, n = 1;
};
// Values of `dtype` in 16 bytes: the alignment unaligned GEMMs miss (above; 8 for bf16).
int64_t gemmAlignment(DType dtype);
// The sizes among m, n and k = flops / (2 · batch · m · n) of a GEMM of `grid` in `dtype` that are
// not multiples of gemmAlignment (in that order); empty when it is aligned.
std::vector<int64_t> gemmUnalignedDims(const GemmGrid& grid, double flops, DType dtype);
inline bool gemmUnaligned(const GemmGrid& grid, double flops, DType dtype) { return !gemmUnalignedDims(grid, flops, dtype).empty(); }
// The wave and tile factor of the header's rule, in (0, 1]; 1 without gemm_waves.
double gemmWaveFactor(const HardwareSpec& hardware, const GemmGrid& grid);

// Interpolated efficiency for a GEMM of `flops` and `bytes` in `dtype` (see above), or nullopt
// when the table has no point of that dtype.
std::optional<double> interpolateGemmEfficiency(const std::vector<GemmEfficiencyPoint>& table, DType dtype, double flops,
                                                double bytes);

// A collective of `bytes` over n devices on a link with a measured bus-bandwidth curve (above).
double busCurveSeconds(const BusCurve& curve, CollectiveKind kind, double n, double bytes);

class CostModel {
public:
    // `mesh` must have link classes (assignLinkClasses) and at most kMaxRuleMeshAxes axes.
    static Result<CostModel> create(const HardwareSpec& hardware, const Mesh& mesh);

    const HardwareSpec& hardware() const { return m_hw; }
    const Mesh& mesh() const { return m_mesh; }
    const MeshSizes& sizes() const { return m_sizes; }

    double launchSeconds() const {
        return m_calibration.launchSeconds >= 0 ? m_calibration.launchSeconds : m_hw.kernelLaunchSeconds;
    }
    double hbmSeconds(double bytes) const;
    // One op's kernel, from its local flops and bytes (see above).
    // A dot's `grid` (its local output) applies the GEMM waves where the hardware has them.
    double kernelSeconds(OpKind kind, DType dtype, double localFlops, double localBytes, const GemmGrid* grid = nullptr) const;
    // An op inside a fused attention kernel (its operands and result on chip): a matmul's flops at
    // the GEMM rate, nothing for the rest (hidden under the matmuls); no launch of its own.
    double onChipSeconds(OpKind kind, DType dtype, double localFlops) const;
    // A fused attention matmul of `localFlops` (every s × s product counted) in the forward or the
    // backward kernel (see above); nullopt where the hardware has no curves for its kernel.
    std::optional<double> flashMatmulSeconds(DType dtype, double localFlops, const FlashMatmul& flash, bool backward) const;
    // What one fused edge saves: the tensor written and read once less, one launch less.
    double fusedEdgeSavingSeconds(int64_t localTensorBytes) const;

    double collectiveSeconds(CollectiveKind kind, size_t axis, int64_t messageBytes) const;  // see above
    // An op's own collectives and an updated weight's all-gathers: cost/op_cost.h.
    double reshardSeconds(const ReshardPlan& plan) const;

    // Link of mesh axis `axis` (by its link class).
    const LinkSpec& link(size_t axis) const;
    // Bandwidth per device of one group of mesh axis `axis` (the β⁻¹ of its collectives): the
    // link's, or for an inter-node axis with m > 1 members per node, m rails (see the header).
    double axisBytesPerSecond(size_t axis) const { return m_axisBytesPerSecond.at(axis); }
    // The index of the mesh axis named kContextParallelAxis (step_policy.h), -1 when there is none.
    int contextAxis() const { return m_contextAxis; }

    void setMeasured(uint64_t signature, double seconds);
    // Measured seconds for this signature, or nullptr.
    const double* measured(uint64_t signature) const;
    bool hasMeasurements() const { return !m_measured.empty(); }
    size_t measuredCount() const { return m_measured.size(); }

    // Measured hardware constants (see above). An empty calibration restores the spec's numbers.
    void setCalibration(CostCalibration calibration);
    const CostCalibration& calibration() const { return m_calibration; }
    bool isCalibrated() const { return !m_calibration.empty(); }

private:
    CostModel() = default;
    HardwareSpec m_hw;
    Mesh m_mesh;
    MeshSizes m_sizes;
    std::unordered_map<uint64_t, double> m_measured;
    CostCalibration m_calibration;
    std::vector<double> m_axisBytesPerSecond;  // per mesh axis
    int m_contextAxis = -1;
    const CollectiveFit* findFit(CollectiveKind kind, size_t axis) const;
};

}  // namespace cfp
