#pragma once
// The IOPDDL problem: the intra-operator parallelism benchmark of the ASPLOS/EuroSys 2025 contest
// (Google's `iopddl` repository), and cfp's own op-level formulation in the same shape.
//
// Nodes are operators; each has strategies, each strategy a cost and a memory usage that is live
// over the node's half-open time interval [lo, hi). Edges join nodes (two in every known instance,
// any number in the format) and carry a cost for every combination of their nodes' strategies,
// row-major: for an edge (u, v) the cost of (su, sv) is costs[su * k_v + sv]. A solution picks one
// strategy per node; its score is the sum of the chosen node and edge costs, and it is invalid when
// the summed usage at any time step t exceeds the usage limit.
//
// Worked example (the contest's example.json): node 1 has strategies {cost 55, usage 25} and
// {cost 65, usage 25} over [40, 70); edge 2 joins nodes 1 and 3 (2 strategies each) with costs
// [90, 10, 20, 80], so choosing strategy 1 for node 1 and 0 for node 3 costs 20 on that edge.
//
// Storage is flat (one vector per quantity plus offsets) so that an instance with 10^5 nodes and
// 10^7 edge costs stays compact: node i's strategies are [strategyBegin[i], strategyBegin[i+1]).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cfp::iopddl {

// Scores and usage sums: 64-bit terms, 128-bit sums (a few 10^18 "forbidden" costs must not wrap).
__extension__ typedef __int128 Int128;

// Decimal text of a 128-bit integer ("-170141183460469231731687303715884105728" at the extreme).
std::string toString(Int128 value);

struct Interval {
    int64_t lo = 0;  // first time step the usage is live
    int64_t hi = 0;  // one past the last; lo >= hi means never live
    bool empty() const { return lo >= hi; }
};

struct Problem {
    std::string name;
    std::vector<Interval> intervals;         // per node
    std::vector<int64_t> strategyBegin;      // size nodes + 1, into nodeCosts / nodeUsages
    std::vector<int64_t> nodeCosts;
    std::vector<int64_t> nodeUsages;
    std::vector<int64_t> edgeNodeBegin;      // size edges + 1, into edgeNodes
    std::vector<int64_t> edgeNodes;
    std::vector<int64_t> edgeCostBegin;      // size edges + 1, into edgeCosts
    std::vector<int64_t> edgeCosts;
    std::optional<int64_t> usageLimit;       // absent: no memory constraint

    Problem() { clear(); }
    void clear();

    int64_t nodeCount() const { return static_cast<int64_t>(intervals.size()); }
    int64_t edgeCount() const { return static_cast<int64_t>(edgeNodeBegin.size()) - 1; }
    int64_t strategyCount(int64_t node) const { return strategyBegin[node + 1] - strategyBegin[node]; }
    std::span<const int64_t> costs(int64_t node) const {
        return {nodeCosts.data() + strategyBegin[node], static_cast<size_t>(strategyCount(node))};
    }
    std::span<const int64_t> usages(int64_t node) const {
        return {nodeUsages.data() + strategyBegin[node], static_cast<size_t>(strategyCount(node))};
    }
    std::span<const int64_t> edgeEnds(int64_t edge) const {
        return {edgeNodes.data() + edgeNodeBegin[edge], static_cast<size_t>(edgeNodeBegin[edge + 1] - edgeNodeBegin[edge])};
    }
    std::span<const int64_t> edgeCostTable(int64_t edge) const {
        return {edgeCosts.data() + edgeCostBegin[edge], static_cast<size_t>(edgeCostBegin[edge + 1] - edgeCostBegin[edge])};
    }
    // One past the last time step any node is live (0 when none is).
    int64_t timeSteps() const;

    // Appends a node / an edge (builders and tests; the reader fills the vectors directly).
    int64_t addNode(Interval interval, std::span<const int64_t> costs, std::span<const int64_t> usages);
    int64_t addEdge(std::span<const int64_t> nodes, std::span<const int64_t> costs);
};

// A strategy index per node.
using Solution = std::vector<int64_t>;

}  // namespace cfp::iopddl
