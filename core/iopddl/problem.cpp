#include "iopddl/problem.h"

#include <algorithm>

namespace cfp::iopddl {

std::string toString(Int128 value) {
    if (value == 0) return "0";
    const bool negative = value < 0;
    // Work on the magnitude as unsigned so that the most negative value does not overflow.
    __extension__ typedef unsigned __int128 UInt128;
    UInt128 magnitude = negative ? UInt128(0) - static_cast<UInt128>(value) : static_cast<UInt128>(value);
    std::string digits;
    while (magnitude > 0) {
        digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
        magnitude /= 10;
    }
    if (negative) digits.push_back('-');
    std::reverse(digits.begin(), digits.end());
    return digits;
}

void Problem::clear() {
    name.clear();
    intervals.clear();
    strategyBegin.assign(1, 0);
    nodeCosts.clear();
    nodeUsages.clear();
    edgeNodeBegin.assign(1, 0);
    edgeNodes.clear();
    edgeCostBegin.assign(1, 0);
    edgeCosts.clear();
    usageLimit.reset();
}

int64_t Problem::timeSteps() const {
    int64_t end = 0;
    for (const Interval& i : intervals)
        if (!i.empty()) end = std::max(end, i.hi);
    return end;
}

int64_t Problem::addNode(Interval interval, std::span<const int64_t> costs, std::span<const int64_t> usages) {
    intervals.push_back(interval);
    nodeCosts.insert(nodeCosts.end(), costs.begin(), costs.end());
    nodeUsages.insert(nodeUsages.end(), usages.begin(), usages.end());
    strategyBegin.push_back(static_cast<int64_t>(nodeCosts.size()));
    return nodeCount() - 1;
}

int64_t Problem::addEdge(std::span<const int64_t> nodes, std::span<const int64_t> costs) {
    edgeNodes.insert(edgeNodes.end(), nodes.begin(), nodes.end());
    edgeNodeBegin.push_back(static_cast<int64_t>(edgeNodes.size()));
    edgeCosts.insert(edgeCosts.end(), costs.begin(), costs.end());
    edgeCostBegin.push_back(static_cast<int64_t>(edgeCosts.size()));
    return edgeCount() - 1;
}

}  // namespace cfp::iopddl
