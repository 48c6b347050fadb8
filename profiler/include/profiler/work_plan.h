#pragma once
// Segment work plans: what one rank executes for one segment type under one block-strategy
// combination, derived from the planner (plan/planner.h) and the cost model (cost/cost_model.h)
// so that the executor runs exactly what the model costs.
//
// The segment's ops are the ops the planner assigns to the segment's blocks (block members and
// the ops that follow them), taken at the type's representative segment. Their shardings come
// from PlanProblem::fillPlan with the combination on those blocks; shapes are local (per device),
// computed as the evaluator does. In op order:
//   - every dot becomes a GEMM item (batch, m, n, k, dtype), its local flops and bytes;
//   - every other computing op belongs to a memory-bound group: ops joined by FUSED edges (the
//     cost model's fusion rule) form one kernel whose bytes are the group's reads and writes
//     minus the fused tensors; an unfused op is a group of one. Reduce, gather, scatter and
//     custom-call kernels are memory bound here (their flops are far below the ridge point);
//   - every own all-reduce of an op (a contraction split) becomes a collective item on that mesh
//     axis with the op's local result as the message (the evaluator's convention);
//   - every edge between two of the segment's ops whose shardings differ becomes the collectives
//     of its resharding plan (sharding/reshard.h), one item per step with communication.
// With optimizer-state sharding (plan.h MemoryPolicy) the optimizer's ops work on 1/r of their
// result (r = the devices holding the same piece), a gradient read only by the optimizer is
// reduce-scattered instead of all-reduced, and each trainable weight of the segment is all-gathered
// back after its update — as the evaluator costs them.
// Edges from ops outside the segment (the resharding between segments) are the segment DP's
// transition costs and are not part of the segment; they are counted in boundaryEdges.
// Sources (parameters, constants and values computed from them alone) cost nothing; their
// buffers are counted in the segment's memory.
//
// predictedSeconds of an item is the cost model's number for exactly that item, so
//   Σ items = Σ over the segment's ops of the evaluator's cost − resharding on boundary edges
//            + fusion savings on boundary edges
// (tests check it against the evaluator).
//
// Example: GPT-3 125M layer on {x=8}, combination "x:rows | x:cols | …": the fused QKV dot is a
// GEMM [1024 x 768] · [768 x 2304] (batch split over x: 8 sequences of 128 → 1024 rows / 8 = 128
// per device …), its bias add and the reshape after it one memory group, the dW's all-reduce over
// x a collective item with the weight gradient's bytes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "cost/cost_model.h"
#include "hardware/hardware.h"
#include "ir/graph.h"
#include "plan/planner.h"

namespace cfp::profiler {

enum class WorkKind : uint8_t { Gemm, Memory, Collective };
std::string_view workKindName(WorkKind kind);  // "gemm", "memory", "collective"

// C[batch, m, n] = A[batch, m, k] · B[batch, k, n] (row-major; layouts do not change the work).
struct GemmShape {
    int64_t batch = 1, m = 1, n = 1, k = 1;
    DType dtype = DType::BF16;
    bool operator==(const GemmShape&) const = default;
    double flops() const { return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
    int64_t bytes() const { return batch * (m * k + k * n + m * n) * dtypeBytes(dtype); }
};

// The GEMM a dot runs with operands of `operandDims` (local shapes): its batch dims, the lhs's
// free dims as m, the rhs's as n, the contracting dims as k.
GemmShape dotGemmShape(const Op& dot, const std::vector<std::vector<int64_t>>& operandDims);

struct WorkItem {
    WorkKind kind = WorkKind::Memory;
    std::string name;              // "layers.0.attn.qkv dot", "fused add+multiply (3 ops)", "all-reduce over x"
    std::vector<OpId> ops;         // the ops this item runs (for a collective: the op it belongs to)
    double predictedSeconds = 0;   // the cost model's seconds for this item
    double flops = 0;              // local flops (the evaluator's: op flops / axes used)
    double bytes = 0;              // local bytes read and written (memory items: after fusion)
    // Gemm
    GemmShape gemm;
    uint64_t opSignature = 0;      // cost/cost_model.h opCostSignature of the dot (local shapes)
    // Memory: the group's kernels as the model prices them, and the tensors fusion keeps on chip.
    struct Part {
        OpKind kind = OpKind::Add;
        DType dtype = DType::F32;
        double flops = 0, bytes = 0;
        bool operator==(const Part&) const = default;
    };
    std::vector<Part> parts;
    std::vector<int64_t> fusedTensorBytes;
    int64_t readBytes = 0, writeBytes = 0;
    // Collective
    CollectiveKind collective = CollectiveKind::AllReduce;
    int axis = -1;                 // mesh axis index
    std::string axisName;
    int64_t axisSize = 1;
    int64_t messageBytes = 0;      // the full message b (DESIGN.md §6)
    bool reshard = false;          // from a resharding edge (else an op's own all-reduce)
    DType dtype = DType::F32;      // element type of the message (gemm items: of the GEMM)
};

struct SegmentWorkPlan {
    int segmentType = 0;
    uint64_t segmentSignature = 0;       // SegmentCatalog::TypeInfo::signature
    std::vector<int32_t> combination;    // strategy index per block of the segment
    std::string combinationKey;          // "0,2,1,1"
    std::string label;                   // "x:rows | x:cols | x:rows | x:contract"
    std::string mesh;                    // with link classes
    std::vector<WorkItem> items;         // in op order
    double predictedSeconds = 0;         // Σ items
    double predictedCommSeconds = 0;     // Σ collective items
    int64_t persistentBytes = 0;         // weights, gradients, optimizer state, saved activations
    int64_t workspaceBytes = 0;          // the largest item's buffers (operands and results)
    int64_t memoryBytes() const { return persistentBytes + workspaceBytes; }
    int boundaryEdges = 0;               // edges into the segment from outside (not executed)
    int ops = 0;                         // computing ops of the segment
};

// "0,2,1,1"
std::string combinationKey(const std::vector<int32_t>& combination);
// Inverse of combinationKey; profiler.bad_combination on malformed text.
Result<std::vector<int32_t>> parseCombinationKey(const std::string& key);

// The profiling problem of one model on one mesh: its segment types, their combinations and the
// work plan of each combination.
class SegmentCatalog {
public:
    struct TypeInfo {
        int type = 0;
        int firstBlock = 0;                  // of the representative segment
        int blockCount = 0;
        int occurrences = 0;
        int64_t combinations = 1;            // Π strategyCounts (saturating)
        std::vector<int> strategyCounts;
        std::vector<std::vector<std::string>> labels;  // per block: strategy labels
        uint64_t signature = 0;              // FNV-1a over the mesh, the memory policy, block fingerprints,
                                             // strategy counts and the kinds and types of the ops it runs
        std::string name;                    // "T1 (4 blocks, x24)"
    };

    // `mesh` must have link classes. The catalog keeps a copy of the cost model (with
    // `calibration` applied) and a pointer to `graph`, which must outlive it. `policy` is the
    // planner's memory policy; its optimizer-state sharding is executed as the evaluator costs it,
    // recomputation is not (segments are profiled without it: a recomputed block runs the same
    // forward work again, which the planner prices from the same measurements).
    static Result<SegmentCatalog> build(const Graph& graph, const HardwareSpec& hardware, const Mesh& mesh,
                                        const CostCalibration& calibration = {}, MemoryPolicy policy = {});
    SegmentCatalog(SegmentCatalog&&) noexcept;
    SegmentCatalog& operator=(SegmentCatalog&&) noexcept;
    ~SegmentCatalog();

    const Mesh& mesh() const;
    const CostModel& model() const;
    const AnalysisReport& analysis() const;
    const std::vector<TypeInfo>& types() const;

    // Mixed radix, the first block most significant: index 0 = all strategies 0.
    std::vector<int32_t> combination(int type, int64_t index) const;
    std::string label(int type, const std::vector<int32_t>& combination) const;

    // profiler.bad_combination when the type or a strategy index is out of range.
    Result<SegmentWorkPlan> workPlan(int type, const std::vector<int32_t>& combination) const;
    // The same plan priced by another model of the same mesh (e.g. uncalibrated vs calibrated).
    double predictSeconds(const SegmentWorkPlan& plan, const CostModel& model) const;

private:
    SegmentCatalog();
    struct Impl;
    std::unique_ptr<Impl> m;
};

// Seconds the cost model gives one work item (what predictedSeconds holds for items built here).
// Memory items: Σ kernel(part) − Σ fused-edge saving; GEMMs: the contraction kernel of the item's
// flops and bytes; collectives: the collective on the item's axis.
double itemSeconds(const WorkItem& item, const CostModel& model);

}  // namespace cfp::profiler
