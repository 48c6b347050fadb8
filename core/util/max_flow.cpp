#include "util/max_flow.h"

#include <algorithm>

namespace cfp {

MaxFlow::MaxFlow(int32_t vertices) : head_(static_cast<size_t>(vertices), -1), level_(static_cast<size_t>(vertices), -1) {}

int32_t MaxFlow::addVertex() {
    head_.push_back(-1);
    level_.push_back(-1);
    return static_cast<int32_t>(head_.size()) - 1;
}

void MaxFlow::addEdge(int32_t from, int32_t to, int64_t capacity) {
    capacity = std::min(capacity, kInfinity);
    edges_.push_back({to, head_[static_cast<size_t>(from)], capacity});
    head_[static_cast<size_t>(from)] = static_cast<int32_t>(edges_.size()) - 1;
    edges_.push_back({from, head_[static_cast<size_t>(to)], 0});
    head_[static_cast<size_t>(to)] = static_cast<int32_t>(edges_.size()) - 1;
}

bool MaxFlow::levels(int32_t source, int32_t sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<int32_t> queue{source};
    level_[static_cast<size_t>(source)] = 0;
    for (size_t q = 0; q < queue.size(); ++q) {
        const int32_t v = queue[q];
        for (int32_t e = head_[static_cast<size_t>(v)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
            const Edge& ed = edges_[static_cast<size_t>(e)];
            if (ed.cap <= 0 || level_[static_cast<size_t>(ed.to)] >= 0) continue;
            level_[static_cast<size_t>(ed.to)] = level_[static_cast<size_t>(v)] + 1;
            queue.push_back(ed.to);
        }
    }
    return level_[static_cast<size_t>(sink)] >= 0;
}

// One augmenting path search of the blocking flow, iterative (paths can be long), with the
// current-edge cursors of Dinic's algorithm.
int64_t MaxFlow::push(int32_t source, int32_t sink, int64_t limit) {
    std::vector<int32_t> path;  // edges from the source
    int32_t v = source;
    while (true) {
        if (v == sink) {
            int64_t f = limit;
            for (int32_t e : path) f = std::min(f, edges_[static_cast<size_t>(e)].cap);
            for (int32_t e : path) {
                edges_[static_cast<size_t>(e)].cap -= f;
                edges_[static_cast<size_t>(e) ^ 1].cap += f;
            }
            return f;
        }
        int32_t& e = cursor_[static_cast<size_t>(v)];
        while (e >= 0) {
            const Edge& ed = edges_[static_cast<size_t>(e)];
            if (ed.cap > 0 && level_[static_cast<size_t>(ed.to)] == level_[static_cast<size_t>(v)] + 1) break;
            e = ed.next;
        }
        if (e >= 0) {
            path.push_back(e);
            v = edges_[static_cast<size_t>(e)].to;
            continue;
        }
        // Dead end: retreat, and never try this vertex again in this phase.
        level_[static_cast<size_t>(v)] = -1;
        if (path.empty()) return 0;
        path.pop_back();
        v = path.empty() ? source : edges_[static_cast<size_t>(path.back())].to;
        int32_t& back = cursor_[static_cast<size_t>(v)];
        back = edges_[static_cast<size_t>(back)].next;
    }
}

int64_t MaxFlow::run(int32_t source, int32_t sink) {
    int64_t flow = 0;
    while (levels(source, sink)) {
        cursor_ = head_;
        while (int64_t f = push(source, sink, kInfinity)) {
            flow = std::min(kInfinity, flow + f);
            if (flow >= kInfinity) break;
        }
        if (flow >= kInfinity) break;
    }
    levels(source, sink);  // the residual graph's source side
    return flow;
}

}  // namespace cfp
