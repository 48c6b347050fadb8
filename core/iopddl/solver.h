#pragma once
// The per-operator solver for IOPDDL problems (10^4-10^5 nodes, a memory limit over time).
//
// Structure it exploits (measured on the contest's public instances): two thirds of the edges are
// "matching" edges (each strategy of an end has at most one partner of finite cost: the two
// operators shard a tensor alike), a tenth of the nodes have one strategy, and the usage limit is
// about 1.1x the peak of the least-memory assignment, so memory binds at some time steps and not
// at others.
//
// 1. Model (solver_model.h): single-strategy nodes folded into costs, edges merged per pair, and
//    nodes joined by matching edges contracted into one variable (A: 33,816 nodes -> 291
//    variables); memory as per-variable segments of compressed time over a baseline.
// 2. Start: per variable the value with the least usage over time, repaired greedily (the cheapest
//    usage reduction per byte at the fullest slot) and polished.
// 3. Lagrangian rounds: memory at each time slot is priced per byte; the priced problem has no
//    constraint and is approximated by TRW-S message passing (message_passing.h), decoded and
//    improved by single-variable descent. Prices rise where that assignment exceeds the limit and
//    fall where it does not. Each round also decodes the messages from the best fitting
//    assignment, changing a variable only where usage stays within the limit, and polishes it by
//    best-improvement moves under the limit.
// 4. Exact steps (ilp.h, CBC): the whole problem when it is small (proving optimality ends the
//    run), otherwise large neighbourhoods re-optimised exactly under the memory rows, the rest
//    fixed: a part of the variable graph, the variables live at a busy slot, or a time window.
// Strategies and pairs with the contest's "forbidden" cost (10^18) are avoided: the search looks
// for fitting solutions without them, and keeps forbidden strategies only when the memory limit
// cannot be met otherwise.
//
// 5. Threads: each runs the Lagrangian rounds with its own price step (0.1 for the first thread
//    down to 0.003 for the last, geometric), and all switch to exact
//    steps after 25% of the time (10% when the whole problem goes to CBC, which the first thread
//    does while the others take neighbourhoods). They meet at fixed
//    epochs (ten rounds or four neighbourhood steps) and all continue from the best fitting
//    assignment (ties: the lowest thread). The result depends on the seed, the thread count and
//    how many epochs ran; with `maxEpochs` set the whole run is reproducible.

#include <cstdint>
#include <functional>
#include <string>

#include "iopddl/problem.h"
#include "util/result.h"

namespace cfp::iopddl {

struct SolverOptions {
    double timeLimitSeconds = 10;   // wall clock, from the call (reading the file is not counted)
    int threads = 1;
    uint64_t seed = 1;
    int64_t maxEpochs = 0;          // stop after this many epochs (0: only the time limit)
    std::function<void(const std::string&)> log;  // progress lines (from the calling thread)
};

struct SolverResult {
    Solution solution;
    Int128 score = 0;        // evaluate()'s score of `solution`
    bool valid = false;      // evaluate()'s verdict
    double seconds = 0;      // solver wall time
    int64_t epochs = 0;
    int64_t sweeps = 0;      // forest sweeps, all threads
};

Result<SolverResult> solve(const Problem& problem, const SolverOptions& options);

}  // namespace cfp::iopddl
