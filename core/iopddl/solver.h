#pragma once
// The per-operator solver for IOPDDL problems (10^4-10^5 nodes, a memory limit over time).
//
// Structure it exploits (measured on the contest's public instances): most nodes are leaves or
// lie on chains, a tenth have one strategy, and the usage limit is about 1.1x the peak of the
// least-memory assignment, so memory binds at some time steps and not at others.
//
// 1. Model (solver_model.h): pairwise merged edges, single-strategy nodes folded into costs.
// 2. Start from the least-usage assignment, which fits whenever anything does.
// 3. Lagrangian search: memory at each time slot is priced (lambda_t per byte); the priced problem
//    has no constraint and is improved by exact dynamic programs on induced forests (each sweep
//    picks trees of nodes with every other node fixed and re-optimises them all at once; this
//    moves whole chains and subtrees together, which single-node moves cannot). Prices rise where
//    usage exceeds the limit and decay where it does not.
// 4. Every priced solution is repaired to fit (greedy: the cheapest usage reductions per byte at
//    the time slots over the limit) and polished under the hard limit; the best fitting
//    solution is kept.
// Strategies and pairs with the contest's "forbidden" cost (10^18) are avoided: the search looks
// for fitting solutions without them, and keeps forbidden strategies only when the memory limit
// cannot be met otherwise.
//
// 5. Threads run independent searches with different seeds, exchanging the best solution at
//    fixed epochs; the result depends on the seed, the thread count and how many epochs ran.
//    With `maxEpochs` set the whole run is reproducible.

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
