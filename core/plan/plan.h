#pragma once
// A parallelization plan: what the planner (planner.h) returns, what the plan file
// (plan_json.h, docs/plan-format.md) stores and what the exporters (core/export) read.
//
// A plan fixes one strategy per ParallelBlock; every op of the graph then has one sharding per
// operand (as it consumes it) and one for its result (as it passes it on, after its own
// collective). A result that the op's strategy leaves as a pending partial sum over some mesh axes
// is completed by the op's own all-reduce over those axes (ownCollectiveAxes).
//
// Times are seconds per training step on one device (every device runs the same program);
// memory is bytes per device. Every cost carries its provenance: "modelled" (analytic model) or
// "measured" (profile DB values that replaced the model for matching ops).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/step_policy.h"
#include "hardware/hardware.h"
#include "ir/graph.h"
#include "models/models.h"
#include "plan/pin.h"
#include "plan/pipeline.h"
#include "plan/step_sim.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"

namespace cfp {

enum class Provenance : uint8_t { Modelled, Measured, Mixed };
std::string_view provenanceName(Provenance p);  // "modelled", "measured", "mixed"

// Seconds split the way the reports and charts show them.
struct CostBreakdown {
    double computeSeconds = 0;        // kernels (roofline), launch overhead included
    double collectiveSeconds = 0;     // the ops' own collectives (e.g. the dW all-reduce)
    double reshardSeconds = 0;        // resharding on edges whose producer and consumer disagree
    Provenance provenance = Provenance::Modelled;
    double total() const { return computeSeconds + collectiveSeconds + reshardSeconds; }
};


// One op's shardings under the plan.
struct TensorPlan {
    OpId op = kNoOp;
    int32_t block = -1;                       // the block whose strategy decides it, or -1 (fixed)
    TensorSharding result;                    // as passed on to consumers (no pending partial)
    std::vector<TensorSharding> operands;     // as this op consumes them
    std::vector<std::string> ownCollectiveAxes;  // all-reduce completing a partial result, mesh order
    bool recompute = false;                   // a forward op run again in the backward pass (MemoryPolicy)
};

struct BlockChoice {
    int32_t block = 0;
    int32_t strategy = 0;   // index into ParallelBlock::strategies
    std::string label;      // "x:rows"
    bool pinned = false;
    bool recompute = false; // its forward ops are recomputed (MemoryPolicy)
};

struct SegmentPlan {
    int32_t index = 0;                    // position in the segment chain
    int32_t type = 0;                     // segment type id
    int32_t firstBlock = 0;
    int32_t blockCount = 0;
    std::vector<int32_t> combination;     // strategy index per block of the segment
    CostBreakdown cost;                   // ops of this segment's blocks + edges into them
    int64_t memoryBytes = 0;              // weights + gradients + optimizer + activations of its ops
};

struct Baseline {
    std::string name;          // "data_parallel", "megatron"
    std::string description;   // "batch split over all 128 devices"
    bool feasible = false;     // the strategy exists on this mesh/model (e.g. batch divisible)
    bool fits = false;         // and its memory fits the limit
    double stepSeconds = 0;    // its step time, simulated (step_sim.h; valid when feasible)
    MemoryBreakdown memory;
    std::string note;          // why not feasible / by how much it does not fit
    double objectiveSeconds = 0;  // the evaluator's sum, in the search objective's terms (not saved)
};

// One interval of the predicted step, for the trace exporter. The evaluator lays the step out as
// one compute stream plus one stream per mesh axis (collectives and resharding on that axis); ops
// run in graph order and nothing overlaps (the cost model's assumption).
struct TimelineEvent {
    std::string name;          // op name, or "reshard <producer> -> <consumer>"
    std::string track;         // "compute" or "comm:<axis>"
    std::string category;      // "compute", "collective", "reshard"
    double startSeconds = 0;
    double durationSeconds = 0;
    OpId op = kNoOp;           // the op it belongs to (the consumer for resharding)
    std::string scope;         // the op's scope path
    std::string detail;        // e.g. "all-reduce over x, 96 MiB"
};

// Pipeline parallelism on a plan (plan/pipeline_plan.h): the chunks, the schedule and the
// replay's result per rank.
struct PipelineChunk {
    int32_t firstLayer = 0, layers = 0;  // layer units (op_cost.h layerUnits), in order
    bool embedding = false, head = false;
    double forwardSeconds = 0, inputGradSeconds = 0, weightGradSeconds = 0;  // one micro-batch
    int64_t activationBytes = 0;  // kept per micro-batch in flight
    bool operator==(const PipelineChunk&) const = default;
};

struct PipelineRank {
    double busySeconds = 0;   // compute of every micro-batch
    double endSeconds = 0;    // its last action's end in the replay
    double tailSeconds = 0;   // gradient reduction, optimizer and gathers beyond the last backward
    MemoryBreakdown memory;   // per device of the rank
    bool operator==(const PipelineRank&) const = default;
};

struct PipelinePlan {
    int32_t stages = 1;        // pp
    int32_t chunksPerRank = 1; // v
    PipeScheduleKind schedule = PipeScheduleKind::OneFOneB;
    // custom (read from a CSV) and mip (found by the schedule optimiser): the actions of every rank,
    // in order, and the placement of the chunks; the generated kinds leave them empty and the
    // placement theirs (their actions are made again: pipelineSchedule).
    PipePlacement placement = PipePlacement::Looped;
    std::vector<std::vector<PipeAction>> actions;
    std::string scheduleOrigin;     // how a custom or mip schedule was found, one line; empty otherwise
    int32_t microBatches = 1;
    double transferSeconds = 0;     // one activation (or gradient) between neighbouring stages
    int64_t transferBytes = 0;
    std::vector<PipelineChunk> chunks;  // per virtual stage
    std::vector<PipelineRank> ranks;
    double seconds = 0;        // the step: max over ranks of end + tail
    double bubbleSeconds = 0;  // the slowest rank's idle time: the step less its compute, communication, contention
    int32_t slowestRank = 0, fullestRank = 0;
    bool operator==(const PipelinePlan&) const = default;
};

struct Plan {
    std::string model;                 // graph name
    std::string modelSource;           // how to load it again ("builtin:gpt3-175b", a path)
    std::optional<BuildOptions> build; // builder options of built-in models and configs (seq resolved)
    bool importTraining = false;       // an imported forward pass made a training step (--train)
    std::string hardware;              // hardware spec id or file
    std::string hardwareName;          // its display name
    int64_t nodes = 1;
    int64_t gpusPerNode = 8;
    Mesh mesh;                         // with link classes
    int64_t memoryLimitBytes = 0;      // per device
    MemoryPolicy policy;               // optimizer sharding, recomputation, gradient accumulation
    std::vector<Pin> pins;             // the search's restrictions (pin.h)
    std::vector<BlockChoice> blocks;   // one per block, in block order
    std::vector<SegmentPlan> segments; // the segment chain
    std::vector<TensorPlan> tensors;   // one per op, in op order
    CostBreakdown step;                // whole step (evaluator)
    double predictedStepSeconds = 0;   // the search's objective
    double evaluatorStepSeconds = 0;   // recomputed by the independent evaluator (the sum: no overlap)
    StepSimulation simulated;          // the step as frameworks schedule it (step_sim.h); seconds 0: none
    // The step time shown: the simulated one where there is one, else the evaluator's sum.
    double stepSeconds() const { return simulated.seconds > 0 ? simulated.seconds : evaluatorStepSeconds; }
    MemoryBreakdown memory;            // per device (evaluator); with a pipeline, the fullest rank's
    // Pipeline stages (pp > 1): the mesh is one stage's dp × tp; the cluster holds pp of them.
    std::optional<PipelinePlan> pipeline;
    std::vector<Baseline> baselines;
    double searchSeconds = 0;
    bool searchExact = true;           // false when memory fronts were thinned (see planner.h) or pairs cut
    int64_t searchCutPairs = 0;        // pair terms cut to fit the search frontier (problem.h frontierLimit)
    double searchGapSeconds = 0;       // with cut pairs: at most this much slower than the optimum
};

// The batch a plan trains on, from its graph: the sequences of one micro-batch round (dimension 0
// of the first data input), how many ways the plan splits them (the data-parallel degree: the
// widest split of that dimension over the forward results that have it), and per step.
struct PlanBatch {
    int64_t round = 0;            // sequences in one round, over all devices
    int64_t dataParallel = 1;     // devices the round is split over
    std::vector<std::string> dataParallelAxes;  // the mesh axes of that widest split, major to minor
    int64_t accumulation = 1;     // rounds per step
    int64_t microBatch() const { return dataParallel > 0 ? round / dataParallel : round; }  // per data-parallel rank
    int64_t global() const { return round * accumulation; }
};
// nullopt when the graph has no data input with a dimension 0.
std::optional<PlanBatch> planBatch(const Plan& plan, const Graph& graph);

// The plan in the terms an engineer uses (DP/TP/ZeRO): the mesh axes that split the batch (data
// parallel: the axes of dimension 0 of the most widely batch-split forward result) and, per other
// axis, the share of the trainable weights' bytes it splits (tensor parallel from half of them;
// below that the axis is said to split activations), the ZeRO stage and the micro-batch. Example: "data parallel 4 (x) · tensor parallel 2 (z, 96% of the weights) ·
// ZeRO-1 · micro-batch 2 × 1 round"; a data-parallel axis that splits weights too says so
// ("data parallel 8 (x, y, z; weights split too: y 20%, z 20%)"); an axis that splits the token
// inputs' sequence and few weights is "context parallel 2 (cp: the sequence split)". Axes of size
// 1 are left out. `withPolicy` false: the axes (and pipeline) only, without ZeRO and micro-batch.
std::string parallelismSummary(const Plan& plan, const Graph& graph, bool withPolicy = true);
// The mesh axes that split the token inputs' sequence (dim 1 of [B, S]): context parallelism, as
// parallelismSummary says it. Empty when the plan has no per-op shardings.
std::vector<std::string> tokenSequenceAxes(const Plan& plan, const Graph& graph);

// What a plan's step does per second, as training logs report it. Model FLOPs are the matrix
// multiplications of the forward and backward passes as the graph writes them (one round, times
// the rounds; recomputation and elementwise work not counted: MFU, not HFU — the convention of
// Megatron-LM's and PaLM's model-FLOPs formulas); MFU is them over the step time × every device
// × the peak dense FLOP/s of the matmuls' type. Tokens where the first data input is [sequences,
// tokens] integer ids, else only sequences.
struct PlanThroughput {
    double sequencesPerSecond = 0;
    double tokensPerSecond = 0;    // 0: the input is not a token sequence
    double modelFlopsPerStep = 0;
    double mfu = 0;                // of the devices' peak, 0..1
    int64_t devices = 0;
};
// nullopt without a step time or a batch input.
std::optional<PlanThroughput> planThroughput(const Plan& plan, const Graph& graph, const HardwareSpec& hardware);
// "63,412 tokens/s (7,927 per GPU) · MFU 41.2% (4.21 PFLOP of matmuls per step)"; sequences where
// the input is not a token sequence.
std::string throughputText(const PlanThroughput& t);

}  // namespace cfp
