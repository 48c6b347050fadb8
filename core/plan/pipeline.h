#pragma once
// Pipeline schedules as data, their generators and their replay (no model needed; `cfp schedule`).
//
// A pipeline of P ranks holds V model chunks per rank: P·V virtual stages, numbered in the order a
// micro-batch's forward runs them (its backward runs them in reverse). Which rank holds a stage is
// the schedule's placement (PipePlacement):
//
//   looped         stage s on rank s mod P (Megatron-LM's and PyTorch's interleaving). P = 2,
//                  V = 2: stages 0, 1, 2, 3 on ranks 0, 1, 0, 1.
//   v              the chunks alternate direction (PyTorch's "v" style): chunk 0's stages 0..P−1
//                  on ranks 0..P−1, chunk 1's stages P..2P−1 on ranks P−1..0, chunk 2 down again, …
//                  P = 2, V = 2: ranks 0, 1, 1, 0 — rank 0 holds the first and the last stage, and
//                  the micro-batch turns on rank P − 1 without a transfer (ZB-V, DualPipeV).
//   bidirectional  DualPipe's (DeepSeek-V3, arXiv 2412.19437): two copies of a model cut into P
//                  stages, V = 2. Stages 0..P−1 (model stages 0..P−1) on ranks 0..P−1 run the
//                  micro-batches 0..M/2 − 1 downwards; stages P..2P−1 (stage P + k is model stage
//                  k) on ranks P−1..0 run the micro-batches M/2..M−1 upwards. Each path is P stages
//                  long and ends in its own loss; rank r holds model stages r and P − 1 − r, twice
//                  the parameters of one stage.
//
// A schedule is, per rank, the list of actions it runs in order:
//
//   F  forward of one micro-batch on one stage
//   B  full backward (input and weight gradients together)
//   I  input-gradient backward only (zero-bubble schedules split B = I + W)
//   W  weight-gradient backward (after the same micro-batch's I on that stage)
//   F&B  a forward and a full backward of two stages of the rank, run as one overlapped unit
//        (DualPipe's overlapped_forward_backward, PyTorch's OVERLAP_F_B)
//
// written as PyTorch's `torch.distributed.pipelining` action strings, "{stage}{kind}{micro-batch}":
// "2F0", "1B3", "0W2", and a pair "(2F4;1B0)OVERLAP_F_B". A schedule's CSV has one line per rank,
// its actions separated by commas; like PyTorch's, it does not record the placement, which the
// reader is given.
//
// Replay (replaySchedule): every rank runs its actions in list order, each as soon as the rank is
// free and its inputs are there — F(m, s) after F(m, s−1) and the activation's transfer, B/I(m, s)
// after F(m, s) and B/I(m, s+1) with the gradient's transfer (the last stage of the micro-batch's
// path after its own F: the loss), W(m, s) after I(m, s); a pair when both its parts could start.
// Transfers take `transferSeconds` between ranks and nothing on one rank; they do not occupy the
// ranks (sent and received beside compute). A pair takes F + B (PipeOverlap::Serial: one stream,
// the pair only fixes the order) or max(F, B) (PipeOverlap::Full: each part hides the other, the
// F&B DeepSeek counts as one unit). Activation memory: a forward holds its stage's activations
// until the micro-batch's B (or W) on that stage; a pair takes its forward's before its backward
// frees its own.
//
// Closed forms for uniform stages (F, B = I + W per stage and micro-batch, M micro-batches, no
// transfer time; tests/plan/tst_pipeline.cpp). bubbleSeconds() is the idlest rank's idle time in
// the makespan; spanBubbleSeconds() only counts a rank's idle time between its first and its last
// action — what an iteration costs a rank when the next one starts on it as soon as it is free (the
// zero-bubble paper's optimizer post-validation), the bubble its parallelograms make zero.
//
//   GPipe, 1F1B      (M + P − 1)(F + B), a bubble of (P − 1)(F + B).
//   interleaved      V chunks of F/V, B/V: M(F + B) + (P − 1)(F + B)/V.
//   ZB-H1            M(F + B) + (P − 1)(F + I − W). Activations counted until W: rank r defers its
//                    first r weight gradients and holds up to P micro-batches on every rank, where
//                    1F1B holds P − r (the zero-bubble paper counts what W keeps apart: 1F1B's).
//   ZB-H2            (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241, the
//                    handcrafted ZB-H2) for M ≥ 2P − 1 and F ≥ min(I, W): M(F + B) +
//                    (P − 1)·max(F, F + I − 2W); rank 0's idle time between its first and last
//                    action (P − 1)·max(0, F + I − 2W), the paper's (p − 1)(T_F + T_B − 2T_W) with
//                    its T_B our I, and no rank idles more in its span. With F = I = W every rank
//                    is busy without a gap from rF to rF + M(F + B) (the parallelogram):
//                    spanBubbleSeconds() 0, bubbleSeconds() the ramp (P − 1)F. Activations counted
//                    until W: 2P − 1 on every rank; counted until I as the paper does, 2P − 1 − 2r
//                    (rank 0's 2P − 1 its (2p − 1)M_B).
//   ZB-V             (the zero-bubble repository's handcrafted ZB-V, as PyTorch's
//                    ScheduleZBVZeroBubble; Qi et al., arXiv 2405.15362) with per-chunk F = I = W = f
//                    and M ≥ 2P − 1: (P − 1)f + 6Mf, every rank busy without a gap from its first
//                    action to its last (spanBubbleSeconds() 0; bubbleSeconds() the ramp (P − 1)f);
//                    at most 2P chunks' activations held per rank — P micro-batches of a rank's
//                    layers, 1F1B's peak.
//   DualPipeV        (DeepSeek's dualpipev.py, as PyTorch's ScheduleDualPipeV) with per-chunk F, B,
//                    W and F&B the pair's time (F + B serial, max(F, B) full): a bubble of
//                    (P − 1)(F&B + B − 3W) — the DualPipe README's (PP/2 − 1)(F&B + B − 3W) with
//                    PP = 2P stages — exactly when I = F ≥ W (not for other ratios: the README's is
//                    the formula of that shape); 2P + 1 chunks' activations held per rank at the
//                    peak (the README's PP + 1).
//   DualPipe         (dualpipe.py), P even, per-stage F, B, W: (P/2 − 1)(F&B + B − 3W) under the
//                    same condition, P + 1 stages' activations per rank (the README's PP + 1), and
//                    2× the parameters.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cfp {

enum class PipeActionKind : uint8_t { Forward, Backward, InputGrad, WeightGrad, OverlappedForwardBackward };
char pipeActionLetter(PipeActionKind k);  // F, B, I, W; O for an overlapped pair

struct PipeAction {
    PipeActionKind kind = PipeActionKind::Forward;
    int32_t stage = 0;       // virtual stage (an overlapped pair: its forward's)
    int32_t microBatch = 0;
    // An overlapped pair only: the full backward (B) it runs beside its forward; else −1.
    int32_t backwardStage = -1;
    int32_t backwardMicroBatch = -1;

    bool overlapped() const { return kind == PipeActionKind::OverlappedForwardBackward; }
    PipeAction forwardPart() const;   // a pair's F (an action that is no pair: itself)
    PipeAction backwardPart() const;  // a pair's B (an action that is no pair: itself)
    std::string toString() const;     // "2F0"; a pair "(2F4;1B0)OVERLAP_F_B"
    bool operator==(const PipeAction&) const = default;
};
// The overlapped pair of a forward and a full backward.
PipeAction overlappedPair(const PipeAction& forward, const PipeAction& backward);

enum class PipeScheduleKind : uint8_t {
    GPipe,
    OneFOneB,
    Interleaved,
    ZeroBubbleH1,
    ZeroBubbleH2,
    ZeroBubbleV,
    DualPipeV,
    DualPipe,
    Custom,
    Mip,  // found by the schedule optimiser (plan/pipeline_mip.h), not generated
};
// "gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2", "zb-v", "dualpipe-v", "dualpipe", "custom", "mip"
std::string_view pipeScheduleName(PipeScheduleKind k);
// What Megatron-LM runs: interleaved 1F1B with more than one chunk per rank, else 1F1B.
inline PipeScheduleKind defaultPipeSchedule(int32_t chunks) { return chunks > 1 ? PipeScheduleKind::Interleaved : PipeScheduleKind::OneFOneB; }
// Stages per rank where the user gives none: DualPipe's two (its model's copies), else one.
inline int32_t defaultChunksPerRank(PipeScheduleKind k) { return k == PipeScheduleKind::DualPipe ? 2 : 1; }
// Accepts the names above but "custom" (and "interleaved-1f1b"). Errors: schedule.unknown.
// makeSchedule does not generate "mip": optimizePipeSchedule (plan/pipeline_mip.h) searches it.
Result<PipeScheduleKind> parsePipeScheduleKind(std::string_view name);

// Whether the planner (plan/pipeline_plan.h) prices schedules of `kind`: every generated one, each
// chunk on the rank the schedule places it (gpipe, 1f1b, interleaved, zb-h1, zb-h2 looped; zb-v
// and dualpipe-v in a V, two chunks per rank, the first and the last on rank 0; a dualpipe-v or
// dualpipe pair priced F + B, as PipeOverlap::Serial; dualpipe bidirectional, two copies of the
// model's P chunks), and custom and mip schedules of the looped and V placements, given their
// actions (a CSV; the schedule optimiser run on the plan's stage times). All of them now: kept as a
// switch for a schedule added later that the planner cannot place.
bool plannerPricesSchedule(PipeScheduleKind k);
// parsePipeScheduleKind for the planner's inputs, "custom" too. Errors: schedule.unknown,
// schedule.unsupported (a schedule only `cfp schedule` replays, saying so in one line).
Result<PipeScheduleKind> parsePlannedScheduleKind(std::string_view name);

enum class PipePlacement : uint8_t { Looped, VShape, Bidirectional };
std::string_view pipePlacementName(PipePlacement p);  // "looped", "v", "bidirectional"
// Accepts the names above (and "vshape"). Errors: schedule.unknown.
Result<PipePlacement> parsePipePlacement(std::string_view name);
// The placement of a generated schedule: v for zb-v and dualpipe-v, bidirectional for dualpipe,
// looped otherwise.
PipePlacement pipeSchedulePlacement(PipeScheduleKind k);
// The rank that runs `stage` (a chunk, in model order) of a pipeline of `ranks` ranks placed so:
// looped, stage mod ranks; a V or bidirectional, odd chunks run back up the ranks.
int32_t pipeRankOf(PipePlacement placement, int32_t ranks, int32_t stage);
// The model chunks (the layer chain's cut) of a pipeline of `ranks` ranks and `chunks` virtual
// stages per rank: ranks × chunks, but bidirectional P (its 2P stages run two copies of P chunks),
// and the model chunk virtual stage `stage` runs.
int32_t pipeModelChunks(PipePlacement placement, int32_t ranks, int32_t chunks);
int32_t pipeModelChunkOf(PipePlacement placement, int32_t ranks, int32_t stage);

struct PipeSchedule {
    PipeScheduleKind kind = PipeScheduleKind::Custom;
    PipePlacement placement = PipePlacement::Looped;
    int32_t ranks = 1;          // P
    int32_t chunks = 1;         // V: stages per rank
    int32_t microBatches = 1;   // M (bidirectional: both directions together)
    std::vector<std::vector<PipeAction>> actions;  // per rank, in order

    int32_t stages() const { return ranks * chunks; }
    int32_t chunkOf(int32_t stage) const { return stage / ranks; }
    int32_t rankOf(int32_t stage) const;
    // The stages a micro-batch passes through: P·V; bidirectional P (each model stage held twice).
    int32_t pathStages() const { return placement == PipePlacement::Bidirectional ? ranks : stages(); }
    // The stage before `stage` on a micro-batch's path and the one after (−1: none; the last one
    // computes the loss).
    int32_t previousStage(int32_t stage) const;
    int32_t nextStage(int32_t stage) const;
    // Whether `microBatch` runs on `stage`: always, but in a bidirectional pipeline (micro-batches
    // below M/2 on stages 0..P−1, the others on P..2P−1).
    bool runsOn(int32_t stage, int32_t microBatch) const;
    std::string toCsv() const;  // one line per rank: pipeActionsCsv(actions)
};
// Actions per rank as CSV, one line per rank (what scheduleFromCsv reads).
std::string pipeActionsCsv(const std::vector<std::vector<PipeAction>>& actions);

// Errors: schedule.shape (P, V or M < 1; interleaved with V < 2 or M not a multiple of P, as
// Megatron-LM requires; gpipe, 1f1b, zb-h1 and zb-h2 with V > 1; zb-v, dualpipe-v and dualpipe
// with V ≠ 2; dualpipe-v with M < 2P and dualpipe with P odd, M odd or M < 2P, as DeepSeek's
// DualPipe asserts), schedule.unknown (custom, mip).
Result<PipeSchedule> makeSchedule(PipeScheduleKind kind, int32_t ranks, int32_t chunks, int32_t microBatches);
// A schedule from CSV (one line per rank) for `placement`. Checks that every stage's forward and
// backward of every micro-batch that runs on it appears exactly once, on the rank that holds the
// stage (schedule.csv at "line N"); a bidirectional one needs V = 2 and an even M.
Result<PipeSchedule> scheduleFromCsv(std::string_view csv, int32_t ranks, int32_t chunks, PipePlacement placement = PipePlacement::Looped);

// Seconds of one micro-batch on each virtual stage.
struct StageTimes {
    double forward = 0;
    double inputGrad = 0;   // I; a full backward B takes inputGrad + weightGrad
    double weightGrad = 0;  // W
    double activationBytes = 1;  // held per micro-batch in flight (1: count micro-batches)
};

// How long an overlapped forward-and-backward pair takes on its rank.
enum class PipeOverlap : uint8_t {
    Serial,  // F + B: the parts one after the other (nothing hidden)
    Full,    // max(F, B): each part hides the other (DualPipe's ideal F&B)
};

struct PipeEvent {
    PipeAction action;
    int32_t rank = 0;
    double start = 0, end = 0;
};

struct PipeReplay {
    double seconds = 0;                  // the makespan
    std::vector<double> busySeconds;     // per rank: time computing
    std::vector<double> startSeconds;    // per rank: when its first action starts
    std::vector<double> endSeconds;      // per rank: when its last action ends
    std::vector<double> peakActivation;  // per rank: the most activationBytes held at once
    std::vector<int32_t> peakInFlight;   // per rank: the most micro-batch stages held at once
    std::vector<PipeEvent> events;       // every action, per rank in order
    double bubbleSeconds() const;        // the largest idle time of a rank: seconds − busy
    double bubbleFraction() const;       // bubbleSeconds / seconds
    double spanBubbleSeconds() const;    // the largest idle time of a rank between its first
                                         // action's start and its last one's end
};

// Replays `schedule` with per-stage times (size stages(), or one entry for all) and the transfer
// time between neighbouring ranks. Errors: schedule.deadlock (an action waits for one that cannot
// run first, naming it), schedule.shape (times of the wrong size).
Result<PipeReplay> replaySchedule(const PipeSchedule& schedule, const std::vector<StageTimes>& times, double transferSeconds,
                                  PipeOverlap overlap = PipeOverlap::Serial);

}  // namespace cfp
