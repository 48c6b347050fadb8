#pragma once
// Independent checker of ParallelBlocks (DESIGN.md §6 "What communication-free means").
//
// For each block and each strategy it starts from the entry dot's stored operand shardings only and
// re-derives every member's sharding edge by edge with the sharding rules (rules/op_rules.h):
//   * a member with operands in the block: forward, from those operands' re-derived shardings (a
//     paired backward dot's output-gradient operand carries its forward dot's sharding);
//   * a member without (a pulled weight, bias broadcast, optimizer state): backward, from the first
//     member that consumes it;
//   * a partial-sum result is completed by the member's own all-reduce (listed, not resharding).
// It does not reuse the growth code's decisions: no stored member sharding, factor assignment or
// pulling order is read before the comparison. Then it compares every re-derived sharding and own
// collective with the stored ones and, on EVERY edge between two members, plans the resharding from
// the producer's sharding to what the consumer expects (planReshard): it must have zero steps.
//
// Result: "pass", or the first violation, e.g.
//   "block 3 strategy x:cols: edge dot.12 -> add.15 needs resharding [{},{x}] partial{} -> [{x},{}] partial{}"

#include <cstdint>
#include <string>
#include <vector>

#include "blocks/blocks.h"

namespace cfp {

struct StrategyCollectives {
    int32_t block = 0;
    std::string label;
    std::vector<OwnCollective> collectives;
};

struct BlockCheckReport {
    bool checked = false;         // the check ran (analyzeGraph leaves it out when asked)
    bool pass = true;
    std::string firstViolation;   // empty when pass
    int64_t edgesChecked = 0;     // intra-block edges, summed over strategies
    int64_t reshardSteps = 0;     // collectives needed on those edges (0 when pass)
    std::vector<StrategyCollectives> ownCollectives;  // re-derived, per block and strategy

    std::string summary() const { return !checked ? "not run" : pass ? "pass" : firstViolation; }
};

// Blocks are checked in `threads` contiguous ranges (0: util/parallel.h's default); the report
// does not depend on it.
BlockCheckReport checkBlocks(const Graph& graph, const BlockAnalysis& analysis, int threads = 0);

}  // namespace cfp
