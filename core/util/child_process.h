#pragma once
// Runs a piece of work in a forked child process with a deadline and a cancel flag: the way the
// exact solvers call COIN-OR CBC (iopddl/ilp.cpp, plan/pipeline_mip.cpp). CBC checks its own time
// limit only between branch-and-bound nodes — its root node (LP, cuts, heuristics) can run far past
// it — and its C interface has no way to stop a solve from another thread; a child can be killed at
// the deadline or on cancel, and a crash in it leaves the caller standing.
//
// The child runs `work` (on a copy of the parent's memory, so the work reads the parent's data
// without serialising it), sends back the bytes it returns through a pipe and exits; its stdout and
// stderr go to /dev/null. Where fork is not available the work runs in this process and only the
// solver's own limits apply.
//
//   ChildRun run = runInChildProcess([&] { return encode(solve(model)); }, 60.0, &cancelFlag);
//   if (run.outcome == ChildOutcome::Finished) decode(run.bytes);

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace cfp {

enum class ChildOutcome : uint8_t {
    Finished,   // the work returned; `bytes` holds what it returned
    TimedOut,   // killed at the deadline
    Cancelled,  // killed because *cancel became true
    Failed,     // no child (pipe or fork failed and the caller asked for isolation), or it died
};

struct ChildRun {
    ChildOutcome outcome = ChildOutcome::Failed;
    std::string bytes;
};

// Runs `work` in a child, killed `seconds` after the start (or when *cancel turns true, checked
// every 50 ms). Without fork (or when pipe or fork fails) runs `work` in this process.
ChildRun runInChildProcess(const std::function<std::string()>& work, double seconds, const std::atomic<bool>* cancel = nullptr);

}  // namespace cfp
