#pragma once
// Pipeline schedules as data, their generators and their replay (no model needed; `cfp schedule`).
//
// A pipeline of P ranks holds V model chunks per rank (V > 1: interleaved/virtual stages). Virtual
// stage s = chunk × P + rank (Megatron-LM's and PyTorch's looped placement): a micro-batch's
// forward runs stages 0, 1, …, P·V − 1 and its backward the reverse. A schedule is, per rank, the
// list of actions it runs in order:
//
//   F  forward of one micro-batch on one stage
//   B  full backward (input and weight gradients together)
//   I  input-gradient backward only (zero-bubble schedules split B = I + W)
//   W  weight-gradient backward (after the same micro-batch's I on that stage)
//
// written as PyTorch's `torch.distributed.pipelining` action strings, "{stage}{kind}{micro-batch}":
// "2F0", "1B3", "0W2". A schedule's CSV has one line per rank, its actions separated by commas.
//
// Replay (replaySchedule): every rank runs its actions in list order, each as soon as the rank is
// free and its inputs are there — F(m, s) after F(m, s−1) and the activation's transfer, B/I(m, s)
// after F(m, s) and B/I(m, s+1) with the gradient's transfer (the last stage after its own F:
// the loss), W(m, s) after I(m, s). Transfers take `transferSeconds` between ranks and nothing on
// one rank; they do not occupy the ranks (sent and received beside compute). Activation memory: a
// forward holds its stage's activations until the micro-batch's B (or W) on that stage.
//
// Closed forms for uniform stages (F, B = I + W per stage and micro-batch, M micro-batches, no
// transfer time; tests/plan/tst_pipeline.cpp): GPipe and 1F1B take (M + P − 1)(F + B), a bubble of
// (P − 1)(F + B); interleaved 1F1B with V chunks (F/V, B/V each) M(F + B) + (P − 1)(F + B)/V;
// ZB-H1 M(F + B) + (P − 1)(F + I − W). Activations are counted until the micro-batch's W, so
// ZB-H1 (rank r defers its first r weight gradients) holds up to P micro-batches on every rank,
// where 1F1B holds P − r; the zero-bubble paper counts what W keeps apart and states 1F1B's peak.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace cfp {

enum class PipeActionKind : uint8_t { Forward, Backward, InputGrad, WeightGrad };
char pipeActionLetter(PipeActionKind k);  // F, B, I, W

struct PipeAction {
    PipeActionKind kind = PipeActionKind::Forward;
    int32_t stage = 0;       // virtual stage
    int32_t microBatch = 0;
    std::string toString() const;  // "2F0"
    bool operator==(const PipeAction&) const = default;
};

enum class PipeScheduleKind : uint8_t { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, Custom };
std::string_view pipeScheduleName(PipeScheduleKind k);  // "gpipe", "1f1b", "interleaved", "zb-h1", "custom"
// What Megatron-LM runs: interleaved 1F1B with more than one chunk per rank, else 1F1B.
inline PipeScheduleKind defaultPipeSchedule(int32_t chunks) { return chunks > 1 ? PipeScheduleKind::Interleaved : PipeScheduleKind::OneFOneB; }
// Accepts the names above (and "interleaved-1f1b"). Errors: schedule.unknown.
Result<PipeScheduleKind> parsePipeScheduleKind(std::string_view name);

struct PipeSchedule {
    PipeScheduleKind kind = PipeScheduleKind::Custom;
    int32_t ranks = 1;          // P
    int32_t chunks = 1;         // V: stages per rank
    int32_t microBatches = 1;   // M
    std::vector<std::vector<PipeAction>> actions;  // per rank, in order
    int32_t stages() const { return ranks * chunks; }
    int32_t rankOf(int32_t stage) const { return stage % ranks; }
    int32_t chunkOf(int32_t stage) const { return stage / ranks; }
    std::string toCsv() const;  // one line per rank
};

// Errors: schedule.shape (P, V or M < 1; interleaved with V < 2 or M not a multiple of P, as
// Megatron-LM requires; gpipe, 1f1b and zb-h1 with V > 1), schedule.unknown (custom).
Result<PipeSchedule> makeSchedule(PipeScheduleKind kind, int32_t ranks, int32_t chunks, int32_t microBatches);
// A schedule from CSV (one line per rank). Checks that every stage's forward and backward of every
// micro-batch appears exactly once, on the rank that holds the stage (schedule.csv at "line N").
Result<PipeSchedule> scheduleFromCsv(std::string_view csv, int32_t ranks, int32_t chunks);

// Seconds of one micro-batch on each virtual stage.
struct StageTimes {
    double forward = 0;
    double inputGrad = 0;   // I; a full backward B takes inputGrad + weightGrad
    double weightGrad = 0;  // W
    double activationBytes = 1;  // held per micro-batch in flight (1: count micro-batches)
};

struct PipeEvent {
    PipeAction action;
    int32_t rank = 0;
    double start = 0, end = 0;
};

struct PipeReplay {
    double seconds = 0;                  // the makespan
    std::vector<double> busySeconds;     // per rank: time computing
    std::vector<double> endSeconds;      // per rank: when its last action ends
    std::vector<double> peakActivation;  // per rank: the most activationBytes held at once
    std::vector<int32_t> peakInFlight;   // per rank: the most micro-batch stages held at once
    std::vector<PipeEvent> events;       // every action, per rank in order
    double bubbleSeconds() const;        // the largest idle time of a rank: seconds − busy
    double bubbleFraction() const;       // bubbleSeconds / seconds
};

// Replays `schedule` with per-stage times (size stages(), or one entry for all) and the transfer
// time between neighbouring ranks. Errors: schedule.deadlock (an action waits for one that cannot
// run first, naming it), schedule.shape (times of the wrong size).
Result<PipeReplay> replaySchedule(const PipeSchedule& schedule, const std::vector<StageTimes>& times, double transferSeconds);

}  // namespace cfp
