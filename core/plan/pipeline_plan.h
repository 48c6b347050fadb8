#pragma once
// Pipeline parallelism on a plan: the layer chain cut into pp × v chunks (Megatron-LM's layout:
// rank r holds virtual stages r, r + pp, …; the embedding on the first stage, the final norm,
// LM head and loss on the last), each rank running its chunks of the plan's dp × tp program, the
// micro-batch rounds scheduled by a pipeline schedule (plan/pipeline.h) and replayed.
//
// Everything comes from the evaluator's pieces of the plan (evaluator.h), split by layer:
//   - per chunk and micro-batch: forward seconds (kernels, blocking collectives and resharding of
//     its forward ops) and backward seconds (backward ops and recomputed forwards), the backward
//     split into the input gradient (I) and the weight gradient (W: ops whose results reach only
//     weight gradients); activations kept per micro-batch;
//   - a stage boundary sends the tensors the next chunk's forward reads from this one (and their
//     gradients back), at the link between the ranks (inter-node when a stage fills a node or
//     more, else NVLink), not overlapped with compute on the critical path of the schedule;
//   - after its last backward, each rank runs what the step simulator (step_sim.h) gives for its
//     own chunks' last round beyond their compute: the gradient reduction over the data-parallel
//     axes (overlapped with that backward where the schedule overlaps it), the optimizer, and
//     ZeRO-1/2's weight gathers — the rank's tail;
//   - memory per rank: the parameters, gradients and optimizer state of its chunks (a tied
//     embedding on both the first and the last stage, as Megatron-LM keeps it), the schedule's
//     peak of activations in flight, and the plan's largest working set.
// The step is the latest rank's end plus its tail. Chunks must hold whole layers: L layers split
// evenly into pp × v chunks (else pipeline.split).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "ir/graph.h"
#include "plan/pipeline.h"
#include "plan/pipeline_mip.h"
#include "plan/plan.h"  // PipelinePlan

namespace cfp {

struct Evaluation;

struct PipelineSettings {
    // Pipeline stages; kSearchedStages in a request: the search chooses them (`cfp plan --pp auto`).
    static constexpr int32_t kSearchedStages = 0;
    // Chunks per rank in a request: the search chooses them (`cfp plan --pp P --vp auto`).
    static constexpr int32_t kSearchedChunks = 0;
    int32_t stages = 1, chunksPerRank = 1;
    PipeScheduleKind schedule = PipeScheduleKind::OneFOneB;
    // GPUs per node of the cluster (0: the cost model's hardware's), to tell whether a stage
    // boundary crosses nodes.
    int64_t gpusPerNode = 0;
    // Layers per chunk, in chunk order (empty: as many in each, the layers dividing into stages ×
    // chunks). runPipelinedPlan tries first and last stages with fewer or more layers than the
    // others (unevenSplits), as Megatron-LM's --decoder-first/last-pipeline-num-layers run them.
    std::vector<int32_t> chunkLayers;
    // custom: the schedule's actions per rank (a CSV: scheduleFromCsv) and their placement (looped
    // or v); mip: filled by reschedulePipeline. Empty for the generated kinds.
    std::vector<std::vector<PipeAction>> actions;
    PipePlacement placement = PipePlacement::Looped;
    std::string scheduleOrigin;  // PipelinePlan::scheduleOrigin
    // mip: the schedule optimiser's time limit (PipeMipOptions::timeLimitSeconds).
    double optimiserSeconds = 20;
    bool operator==(const PipelineSettings&) const = default;
};

// Reads the schedule CSV at `path` into `settings` as a custom schedule for its stages and chunks:
// the actions, their placement — `placement` where given, else looped, or a V where only that
// reading holds (two chunks per rank) — and the origin "read from NAME" (`cfp plan
// --schedule-csv`, the explorer's Schedule CSV). Errors: io.* and schedule.csv, at the file.
Status loadScheduleCsv(const std::string& path, std::optional<PipePlacement> placement, PipelineSettings& settings);

// The schedule a pipeline runs: its stored actions (custom, mip) or its kind's generated again.
// Errors: makeSchedule's; schedule.csv where stored actions are not a schedule of the pipeline's
// shape (scheduleFromCsv's checks).
Result<PipeSchedule> pipelineSchedule(const PipelinePlan& pipeline);

// A split (layers per chunk) that `chunks` chunks of `layers` layers can run: one count per chunk,
// each at least 1, summing to the layers; pipeline.split otherwise.
Status checkSplit(const std::vector<int32_t>& split, int64_t chunks, int32_t layers);

// The layers of each chunk of a pipeline, in chunk order (its split).
std::vector<int32_t> chunkLayers(const PipelinePlan& pipeline);

// "12 x 8" for an even split, else "11, 12 x 6, 13" (runs of equal chunks folded).
std::string splitText(const PipelinePlan& pipeline);

// What follows "N stages" in a report: "" (one chunk per rank), " × 2 chunks per rank", or
// DualPipe's ", two copies (rank r holds chunks r and 7 − r)" (P − 1 − r).
std::string pipelineChunksText(const PipelinePlan& pipeline);

// The rank that holds chunk `chunk` of `pl` (its schedule's placement: pipeRankOf).
int32_t chunkRank(const PipelinePlan& pl, int32_t chunk);

// Uneven splits worth trying for a pipeline cut evenly (`even`, applied by applyPipeline): one chunk
// per rank, or two in a V (zb-v, dualpipe-v: the first and the last chunk both on rank 0), the first
// and last chunk given f and l layers and every other chunk the same count (what Megatron-LM's
// --decoder-first/last-pipeline-num-layers express), ranked by the busiest rank's time they give
// when every layer costs what an inner chunk's layer does and the first and last chunk keep their
// embedding and head (the even cut's chunk times); at most `keep` splits more balanced than the
// even one by that measure, the most balanced first.
std::vector<std::vector<int32_t>> unevenSplits(const PipelinePlan& even, int32_t keep);

// Cuts `plan` (its dp × tp program, one micro-batch per round, policy.accumulation rounds; `ev`
// its evaluation) into the pipeline of `settings` and writes it into the plan: Plan::pipeline, the
// simulated step (seconds the pipeline's; compute, communication and contention of the slowest
// rank over every round) and the memory of the fullest rank. Errors: pipeline.split (layers do not
// divide into the chunks; no layers), schedule.* (the schedule's own, e.g. interleaved with rounds
// not a multiple of pp; schedule.csv and schedule.shape for custom and mip actions
// that are not a schedule of this pipeline); the plan is unchanged then. A custom or mip schedule
// runs settings.actions in settings.placement. DualPipe (bidirectional) cuts the layers into pp
// chunks, not pp × 2: its stages pp + c run chunk c again on rank pp − 1 − c (Plan::pipeline's
// chunks list both copies), each rank holds both its chunks' parameters, gradients and optimizer
// state, and its tail also sums its gradients with its partner's (an all-reduce of two ranks at
// the link between stages, after the last backward).
Status applyPipeline(const Graph& graph, Plan& plan, const Evaluation& ev, const CostModel& model, const PipelineSettings& settings);

// What reschedulePipeline found, for the report.
struct PipelineReschedule {
    PipeMipResult mip;  // the optimiser's answer (its replay in the chunks' times)
    bool kept = false;  // it replaced the generated schedule (false: it did not fit or was slower)
};

// The schedule of `plan`'s pipeline (applied by applyPipeline with a generated schedule, the
// plan's `ev` and `model`) searched again by the schedule optimiser (plan/pipeline_mip.h): its
// chunks' forward, input-gradient and weight-gradient times and the transfer, and on every rank as
// many stage activations in flight as the fastest generated schedule of the placement whose ranks
// all fit in `limit` holds on its fullest rank (at most what fits beside what a rank holds
// throughout, each its largest chunk's), warm-started from those generated schedules. The answer is
// applied as a schedule of kind mip with the same split where its fullest rank fits in `limit`
// and its step is no slower than the generated schedule's (plan unchanged otherwise: kept false).
// Errors: the optimiser's (schedule.no_mip_solver without CBC, schedule.too_large, schedule.shape
// for a chunk without weight-gradient work).
Result<PipelineReschedule> reschedulePipeline(const Graph& graph, Plan& plan, const Evaluation& ev, const CostModel& model,
                                             const PipelineSettings& settings, int64_t limit, const PipeMipOptions& options);

// The pipeline's schedule replayed again from its chunks' times (for charts and the trace).
Result<PipeReplay> replayPipeline(const PipelinePlan& pipeline);

// The replay as timeline events: a track per rank ("rank 0", …), each action one event named
// like "F mb 3 (stage 2)" with category forward / backward / input-grad / weight-grad, each
// rank's tail (category "tail": gradient reduction, optimizer, gathers) after its last action,
// and its point-to-point sends (pipelineTransfers, category "transfer") on "rank N comm".
std::vector<TimelineEvent> pipelineTimeline(const PipelinePlan& pipeline, const PipeReplay& replay);

// The point-to-point transfers of a replayed pipeline (the looped placement the planner prices:
// chunk c on rank c mod pp): a forward's activation to the next chunk's rank, a backward's
// (input-gradient's) gradient to the previous chunk's rank, each PipelinePlan::transferSeconds
// from the end of the action that produced it. They delay the receiver only (the replay's rule).
struct PipeTransfer {
    int32_t fromRank = 0, toRank = 0;
    int32_t microBatch = 0;
    int32_t fromStage = 0;  // the chunk that sends
    bool gradient = false;  // backward (a gradient) rather than forward (an activation)
    double start = 0, end = 0;
};
std::vector<PipeTransfer> pipelineTransfers(const PipelinePlan& pipeline, const PipeReplay& replay);

// Each rank's memory per device over the replay, as steps (time, bytes from then on): what the
// rank holds throughout (weights, gradients, optimizer state, the working set) plus the
// activations of its micro-batches in flight — a forward takes its chunk's at its start, the
// backward (the weight-gradient part where it is split) gives them back at its end, as the
// replay counts them. The largest value of rank r is PipelinePlan::ranks[r].memory.total().
struct MemoryStep {
    double seconds = 0;
    int64_t bytes = 0;
};
std::vector<std::vector<MemoryStep>> pipelineMemoryOverTime(const PipelinePlan& pipeline, const PipeReplay& replay);

}  // namespace cfp
