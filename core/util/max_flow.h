#pragma once
// Maximum flow and a minimum s–t cut on a directed graph with integer capacities (Dinic's
// algorithm: BFS levels, then blocking flows along level-increasing edges).
//
//   MaxFlow f(4);                       // vertices 0..3
//   f.addEdge(0, 1, 5); f.addEdge(1, 3, 2); f.addEdge(0, 2, 1); f.addEdge(2, 3, 4);
//   f.run(0, 3)      // 3
//   f.sourceSide(1)  // true: after run(), reachable from the source in the residual graph
//
// The cut edges are those from a source-side vertex to a sink-side one; their capacities sum to
// the flow. Capacities saturate at kInfinity (edges that must never be cut).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cfp {

class MaxFlow {
public:
    static constexpr int64_t kInfinity = int64_t{1} << 60;

    explicit MaxFlow(int32_t vertices);
    int32_t addVertex();
    void addEdge(int32_t from, int32_t to, int64_t capacity);
    // The maximum flow from `source` to `sink` (at most kInfinity).
    int64_t run(int32_t source, int32_t sink);
    // After run(): whether v is on the source side of the minimum cut.
    bool sourceSide(int32_t v) const { return level_[static_cast<size_t>(v)] >= 0; }
    int32_t vertices() const { return static_cast<int32_t>(head_.size()); }

private:
    struct Edge {
        int32_t to;
        int32_t next;  // the next edge leaving the same vertex, or -1
        int64_t cap;   // residual capacity
    };
    bool levels(int32_t source, int32_t sink);
    int64_t push(int32_t source, int32_t sink, int64_t limit);

    std::vector<Edge> edges_;  // edge e and its reverse e ^ 1
    std::vector<int32_t> head_, level_, cursor_;
};

}  // namespace cfp
