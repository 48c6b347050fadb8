#pragma once
// Exact solving of small IOPDDL problems as an integer linear program, through COIN-OR CBC.
//
// Formulation (on the solver model: merged pairwise edges, single-strategy nodes folded):
//   x[v][s] in {0, 1}           node v takes strategy s;        sum_s x[v][s] = 1
//   y[e][a][b] >= 0 (continuous) edge e = (u, v) takes (a, b);   sum_b y[e][a][b] = x[u][a],
//                                                                sum_a y[e][a][b] = x[v][b]
//   memory, per time slot t:    sum over live v, s of usage[v][s] x[v][s] <= limit - fixed usage(t)
//   minimise                    sum cost[v][s] x[v][s] + sum cost[e][a][b] y[e][a][b]
// The marginal constraints make y integral whenever x is and give the tight "local polytope" LP.
// Strategies and strategy pairs whose cost is the contest's "forbidden" 10^18 (any cost >= 10^17)
// get no variable. A memory row is written only for time slots where the largest usages of the
// live nodes could exceed the limit.
//
// Without CBC at build time, solveIlp returns iopddl.no_ilp_solver.

#include <cstdint>
#include <span>
#include <vector>

#include "iopddl/problem.h"
#include "util/result.h"

namespace cfp::iopddl {

struct IlpOptions {
    double timeLimitSeconds = 60;
    int threads = 1;
    const Solution* start = nullptr;  // a known solution for CBC to start from (optional)
};

enum class IlpStatus {
    Optimal,      // proven optimal
    Feasible,     // a solution, not proven optimal (time limit)
    Infeasible,   // proven: nothing fits the memory limit without forbidden costs
    NoSolution,   // the time limit came before any solution
};

const char* ilpStatusName(IlpStatus status);

struct IlpResult {
    IlpStatus status = IlpStatus::NoSolution;
    Solution solution;        // empty unless Optimal or Feasible
    Int128 score = 0;         // evaluate()'s score of `solution`
    double bound = 0;         // CBC's lower bound on the optimum (the objective, when Optimal)
    double seconds = 0;
    int64_t variables = 0, rows = 0;
};

bool ilpSolverAvailable();
Result<IlpResult> solveIlp(const Problem& problem, const IlpOptions& options);

struct SolverModel;
class MemoryProfile;

// Large-neighbourhood step for the solver: re-optimises the variables `vars` of the solver model
// exactly (every other variable fixed at x), under the memory limit given the rest's usage in
// `memory` (the usage of x). CBC stops after `maxNodes` branch-and-bound nodes (0: no limit) or
// `seconds`. When it finds a strictly cheaper assignment, x and memory are updated and the result
// is true; *proven tells whether CBC proved its answer optimal. Without CBC: false.
bool reoptimizeExactly(const SolverModel& model, std::vector<int32_t>& x, MemoryProfile& memory, std::span<const int32_t> vars, int64_t limit,
                       int maxNodes, double seconds = 1e9, bool* proven = nullptr);

}  // namespace cfp::iopddl
