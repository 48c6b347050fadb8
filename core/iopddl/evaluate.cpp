#include "iopddl/evaluate.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace cfp::iopddl {

Result<Evaluation> evaluate(const Problem& problem, const Solution& solution) {
    const int64_t n = problem.nodeCount();
    if (static_cast<int64_t>(solution.size()) != n)
        return makeError("iopddl.solution_size",
                         "the solution has " + std::to_string(solution.size()) + " strategies for " + std::to_string(n) + " nodes");
    Evaluation ev;
    // Usage changes as (time, delta) events; the sweep below sees usage(t) piecewise constant
    // between consecutive event times, so the cost is O(n log n) whatever the time horizon.
    std::vector<std::pair<int64_t, int64_t>> events;
    events.reserve(static_cast<size_t>(2 * n));
    for (int64_t i = 0; i < n; ++i) {
        const int64_t s = solution[static_cast<size_t>(i)];
        if (s < 0 || s >= problem.strategyCount(i))
            return makeError("iopddl.strategy_range",
                             "node " + std::to_string(i) + " has strategy " + std::to_string(s) + ", not in 0.." +
                                 std::to_string(problem.strategyCount(i) - 1));
        ev.nodeCost += problem.costs(i)[static_cast<size_t>(s)];
        const Interval iv = problem.intervals[static_cast<size_t>(i)];
        const int64_t usage = problem.usages(i)[static_cast<size_t>(s)];
        if (!iv.empty() && usage != 0) {
            events.emplace_back(iv.lo, usage);
            events.emplace_back(iv.hi, -usage);
        }
    }
    for (int64_t k = 0; k < problem.edgeCount(); ++k) {
        int64_t index = 0;
        for (const int64_t node : problem.edgeEnds(k)) index = index * problem.strategyCount(node) + solution[static_cast<size_t>(node)];
        ev.edgeCost += problem.edgeCostTable(k)[static_cast<size_t>(index)];
    }
    ev.score = ev.nodeCost + ev.edgeCost;

    std::sort(events.begin(), events.end());
    Int128 usage = 0;
    bool any = false;
    for (size_t i = 0; i < events.size();) {
        const int64_t t = events[i].first;
        for (; i < events.size() && events[i].first == t; ++i) usage += events[i].second;
        if (i == events.size()) break;  // usage is 0 from the last event on
        const int64_t until = events[i].first;
        if (!any || usage > ev.peakUsage) {
            ev.peakUsage = usage;
            ev.peakTime = t;
            any = true;
        }
        if (problem.usageLimit && usage > *problem.usageLimit) {
            if (ev.firstOverTime < 0) ev.firstOverTime = t;
            ev.overTimeSteps += until - t;
            ev.valid = false;
        }
    }
    // Nodes live with zero usage still make usage(t) = 0 a value at their steps; nothing to add.
    if (!any && problem.timeSteps() > 0) ev.peakTime = 0;
    return ev;
}

}  // namespace cfp::iopddl
