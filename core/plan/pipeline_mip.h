#pragma once
// The pipeline schedule optimiser (`cfp schedule --schedule mip`): the mixed-integer program of
// She, Pang, Li, Liu and Zhong, "Automatic Operator-level Parallelism Planning for Distributed Deep
// Learning – A Mixed-Integer Programming Approach" (arXiv 2503.09357), at the level of pipeline
// actions (plan/pipeline.h) instead of operators. It chooses when every forward F, input-gradient
// backward I and weight-gradient backward W of every micro-batch runs on every stage — and so the
// order of the actions on each rank — under the pipeline's precedences with their transfers, one
// action at a time per rank and a limit on the stage activations a rank holds, and minimises the
// makespan (optionally plus a weight times the peak activations). The backward is always split (a
// full B is an I with its W right after it). COIN-OR CBC solves it from a warm start with a time
// limit; the answer is a PipeSchedule of kind Mip, per rank in start order, which replaySchedule
// replays to the MIP's makespan and which is written as CSV or action strings like the others.
//
// Formulation: time-indexed counts over first-in-first-out chains (not the paper's disjunctive
// start-time model with an ordering binary per pair of actions on a device).
//
//   Grid. Every duration — F, I, W of each stage and the transfer — is a whole number of units of
//   `unitSeconds` (the largest min/k, k ≤ 64, that divides them all; where none does within
//   `maxSlots` units of horizon, durations are rounded up to a grid and `exactGrid` is false: the
//   replay then uses the true times and CBC's bound is only the rounded problem's). A model's horizon
//   T: the schedules it holds end by unit T (Search, below).
//   Chains. For each stage s and kind k ∈ {F, I, W}, the micro-batches that run on s. They have
//   the same times, so any schedule can be relabelled to run every chain in micro-batch order
//   without changing a rank's timeline or memory: where every I on s starts after its own F ends,
//   the k-th earliest I starts after the k-th earliest F ends, and likewise for each precedence.
//   First-in-first-out chains lose nothing, and a schedule is the counts
//       N[c][t] ∈ {0 … M_c}  actions of chain c started at or before unit t  (t = 0 … T − 1)
//   with every constraint linear in them:
//       N[c][t − 1] ≤ N[c][t]
//       F  N[F,s][t] ≤ N[F,s−1][t − F(s−1) − hop]       hop: the transfer between ranks, 0 on one rank
//       I  N[I,s][t] ≤ N[F,s][t − F(s)],  N[I,s][t] ≤ N[I,s+1][t − I(s+1) − hop]  (the last stage
//          of a path after its own F only: the loss)
//       W  N[W,s][t] ≤ N[I,s][t − I(s)]
//       one at a time   Σ over chains c of rank r of N[c][t] − N[c][t − d(c)] ≤ 1
//       memory          Σ over stages s of rank r of N[F,s][t] − N[W,s][t] ≤ L   (replaySchedule's
//                       count: a forward holds its stage's activations until that micro-batch's W)
//       makespan        z[t] ∈ {0, 1}, "every action has ended by t": M_s·z[t] ≤ N[W,s][t − W(s)],
//                       z[t] ≤ z[t + 1], z[t] = 0 below the lower bound
//       minimise        T − Σ z[t]  (+ weight × peak, with peak ≥ every memory row's left side)
//   Each count is bounded by the actions whose latest start (from T) has passed and those whose
//   earliest start (from the precedences) has.
//   Size for P = 8 ranks, V = 2 (v placement), M = 20 micro-batches, F = I = W (the unit one stage's
//   F): 48 chains × 127–143 units, 6,300–7,000 integer columns and 18,000–20,000 rows for
//   the whole model, far fewer where the horizon is short or a window fixes the rest. The paper's
//   disjunctive model would need a binary and two big-M rows per pair of actions that may share a
//   rank: 120 actions per rank, up to 7,140 pairs each, 57,000 binaries whose big-M relaxation
//   bounds the makespan by little more than the longest path.
//
// Warm start: each generator of the placement that accepts the shape (looped with one chunk:
// zb-h2, zb-h1, 1f1b, gpipe; looped with more: interleaved; v: zb-v, dualpipe-v; bidirectional:
// dualpipe), its full backwards split into I then W and its overlapped pairs into F, I, W, and a
// greedy list schedule that admits a micro-batch only when every rank can reserve room for all of
// its stages there; the fastest that keeps to the limit (of equally fast ones, the one that holds
// the fewest stage activations). The default limit is DualPipeV's peak
// (v), DualPipe's (bidirectional), otherwise the fastest generated schedule's.
//
// Lower bound: over ranks, the earliest start of any of its actions plus all its work (F = I = W:
// ZB-V and ZB-H2 meet it, and CBC does not run), raised by what CBC proves (exact grid only).
//
// Search: models of the formulation above, each holding only the schedules that end by its
// horizon (the counts' windows shrink with it), solved by CBC in turn within the time limit:
//   proving    the horizon is the lower bound: CBC soon shows that nothing ends by it (the bound
//              rises a unit) or finds a schedule that does (optimal); a short time each, until one
//              is not settled;
//   windows    a large-neighbourhood search, in the spirit of the paper's bi-level decomposition:
//              the best schedule's counts fixed before a window of time and, shifted a unit
//              earlier, after it; the horizon a unit shorter. CBC places only the window's counts;
//              feasible, the schedule is a unit shorter. Windows slide over the schedule and widen
//              by half after a pass without a gain;
//   improving  once the window is the whole schedule: the whole model at the best makespan,
//              started from the best schedule, with the rest of the time.
// With a memory weight the objective is not the makespan: one improving model from the warm start.
// Each CBC run is in a child process (util/child_process.h), killed a second after its share of
// the time limit or when `cancel` turns true; its own (wall-clock) limit is a little shorter, so
// it usually returns its best. The best schedule found so far stands when a run returns nothing.
//
// Not modelled: overlapped F&B pairs that hide one another (PipeOverlap::Full: the MIP runs one
// action at a time), activation bytes (stage activations are counted), different times per
// micro-batch. Without CBC at build time, optimizePipeSchedule returns schedule.no_mip_solver.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/pipeline.h"
#include "util/result.h"

namespace cfp {

struct PipeMipRequest {
    PipePlacement placement = PipePlacement::VShape;
    int32_t ranks = 1;
    int32_t chunks = 2;
    int32_t microBatches = 1;
    std::vector<StageTimes> times;   // per stage (ranks × chunks), or one entry for all; F, I, W > 0
    double transferSeconds = 0;
    // Stage activations a rank may hold at once (replay's peakInFlight); unset: the default above.
    std::optional<int32_t> memoryLimit;
    double memoryWeightSeconds = 0;  // objective: makespan + this × the largest peak of a rank
};

struct PipeMipOptions {
    double timeLimitSeconds = 60;
    int32_t maxSlots = 1500;  // units of the time grid at most
    const std::atomic<bool>* cancel = nullptr;
};

enum class PipeMipStatus : uint8_t {
    Optimal,    // proven: CBC closed the gap, or the schedule meets the lower bound
    TimeLimit,  // the best found when the time limit came
    Cancelled,  // *cancel turned true: the best found until then (at least the warm start)
};
const char* pipeMipStatusName(PipeMipStatus s);  // "optimal", "time_limit", "cancelled"

struct PipeMipResult {
    PipeSchedule schedule;          // kind Mip; I and W split; per rank in start order
    PipeReplay replay;              // `schedule` replayed with the request's times
    PipeMipStatus status = PipeMipStatus::TimeLimit;
    int32_t memoryLimit = 0;        // the limit it kept to
    std::string memoryLimitFrom;    // "given", or the schedule whose peak it is ("dualpipe-v")
    std::string warmStart;          // the warm start's schedule: "zb-v", …, "greedy"
    double warmStartSeconds = 0;    // its makespan (backward split, pairs serial)
    int32_t warmStartPeak = 0;      // its largest peakInFlight
    double mipMakespanSeconds = 0;  // the makespan of the chosen solution as the MIP counts it
    double objectiveSeconds = 0;    // replay.seconds + weight × peak
    double boundSeconds = 0;        // a lower bound on the objective
    double gap() const { return objectiveSeconds > 0 ? (objectiveSeconds - boundSeconds) / objectiveSeconds : 0.0; }
    bool improved = false;          // CBC found a better schedule than the warm start
    bool solverRan = false;         // false: the warm start met the bound, or cancelled before
    double unitSeconds = 0;
    bool exactGrid = true;
    int64_t columns = 0, integerColumns = 0, rows = 0;
    double solveSeconds = 0;        // wall time of the whole call
};

bool pipeMipSolverAvailable();

// The smallest memory limit any schedule of the placement keeps to: the most stages of one
// micro-batch's path on a rank (looped: V; v: 2 for V = 2; bidirectional: 1). Below it
// optimizePipeSchedule returns schedule.memory_limit.
int32_t minimumPipeMemoryLimit(PipePlacement placement, int32_t ranks, int32_t chunks);

// Errors: schedule.shape (P, V or M < 1; bidirectional with V ≠ 2 or M odd; times of the wrong
// size or not > 0; a negative transfer), schedule.memory_limit (below the minimum),
// schedule.too_large (more than 400,000 counts on the grid), schedule.no_mip_solver (no CBC).
Result<PipeMipResult> optimizePipeSchedule(const PipeMipRequest& request, const PipeMipOptions& options = {});

}  // namespace cfp
