#pragma once
// The contest's evaluation of a solution, recomputed from scratch.
//
// score = sum over nodes of the chosen strategy's cost + sum over edges of the cost of the chosen
// combination (row-major over the edge's nodes), in 128-bit arithmetic. usage(t) = sum of the
// chosen usages of the nodes whose interval [lo, hi) contains t. The solution is valid when
// usage(t) <= usage_limit for every t (always, without a limit).
//
// Worked example (example.json, limit 50): solution [0, 0, 2, 1, 0] costs 15 + 55 + 35 + 75 + 95 = 275
// on nodes and 30 + 40 + 10 + 30 + 60 = 170 on edges, score 445; usage peaks at 50 for t in [50, 70)
// (nodes 0, 1, 2: 10 + 25 + 15), so it is valid. [0, 0, 1, 1, 0] scores 415 but uses
// 10 + 25 + 20 = 55 there: invalid.
//
// A solution of the wrong length or with a strategy index out of range has no score: that is an
// error (iopddl.solution_size, iopddl.strategy_range), as in the contest.

#include <cstdint>
#include <string>

#include "iopddl/problem.h"
#include "util/result.h"

namespace cfp::iopddl {

struct Evaluation {
    Int128 score = 0;          // node costs + edge costs
    Int128 nodeCost = 0;       // the node part of score
    Int128 edgeCost = 0;       // the edge part of score
    bool valid = true;         // usage within the limit at every time step
    Int128 peakUsage = 0;      // the largest usage(t)
    int64_t peakTime = -1;     // the first t where usage(t) is largest (-1: no node is ever live)
    int64_t firstOverTime = -1;   // the first t with usage(t) > limit, or -1
    int64_t overTimeSteps = 0;    // how many t have usage(t) > limit
};

Result<Evaluation> evaluate(const Problem& problem, const Solution& solution);

}  // namespace cfp::iopddl
