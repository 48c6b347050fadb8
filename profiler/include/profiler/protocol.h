#pragma once
// The measuring protocol, with CFP's defaults (DESIGN.md "Profiler").
//
// For each combination of a segment type:
//   1. prepare: buffers for the work plan (cudaMalloc once); out of memory marks the combination
//      infeasible and the run goes on;
//   2. warmupRuns untimed executions;
//   3. timedRounds rounds of runsPerRound executions each, timed with events around the round;
//      the round's time is its mean per execution, the combination's time the median of rounds;
//   4. after each round, a combination whose round time exceeds abandonFactor × the best time so
//      far of its segment type is abandoned (its time is then that round's, a lower bound);
//   5. one instrumented execution of every finished combination times each work item, so each
//      GEMM becomes a measured op for the cost model.
// When a segment type is done, the best keepBestByTime combinations by time and the best
// keepBestByMemory by memory are kept (the rest are pruned from the report's candidate list).
//
// A launch that has not finished after max(watchdogSeconds, watchdogFactor × its predicted time)
// is a hang (a stuck NCCL collective): the backend is aborted and the session ends with an error.

#include <string>

#include "util/result.h"

namespace cfp::profiler {

struct ProtocolSettings {
    int warmupRuns = 2;
    int timedRounds = 3;
    int runsPerRound = 3;
    double abandonFactor = 1.5;   // 0 disables early abandonment
    int keepBestByTime = 10;
    int keepBestByMemory = 10;
    double watchdogSeconds = 60;  // shortest time a launch may take before it counts as a hang
    double watchdogFactor = 100;  // × the launch's predicted time, when that is longer
    double pollSeconds = 0.002;   // how often a running launch is checked (cancel, watchdog)
    double cancelGraceSeconds = 0.5;  // after cancel, how long a launch may still finish before the abort

    // "2 warm-ups, 3x3 timed, abandon at 1.5x, keep 10+10"
    std::string describe() const;
};

// profiler.bad_protocol when a setting is out of range (the message names it).
Status validateProtocol(const ProtocolSettings& settings);

}  // namespace cfp::profiler
