#pragma once
// How the planner decides the sharding of every op (PlanProblem, plan/problem.cpp), and the counts
// `cfp analyze` and the explorer report from it.
//
//   * block members take their block's strategy (values computed from constants and iota alone
//     excepted: they are folded);
//   * outside blocks, in alternating passes until nothing changes:
//       follows — forward (graph order): an op with an operand that depends on a block follows the
//         most recently computed such operand (the nearest producer; a trainable weight another
//         block owns is not followed);
//       pulled — backward (reverse order): an op with none (a one-hot of the labels, the loss seed,
//         a parameter outside blocks) takes the sharding its first consumer that depends on a
//         block reads;
//   * the rest are fixed: values computed from constants and iota alone are constant-folded into
//     their consumers; ops without a sharding rule (opaque custom-calls) stay replicated; other
//     fixed ops follow their first operand that is not source-like, or stay replicated.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "blocks/blocks.h"
#include "ir/graph.h"

namespace cfp {

// Consumers (op, operand slot) of each op in op order, as CSR.
struct Consumers {
    std::vector<int64_t> start;                      // n + 1
    std::vector<std::pair<OpId, int32_t>> list;
    explicit Consumers(const Graph& graph);
    std::span<const std::pair<OpId, int32_t>> of(size_t k) const {
        return {list.data() + start[k], list.data() + start[k + 1]};
    }
};

struct OpOwners {
    std::vector<int32_t> owner;                      // block whose strategy decides the op, or -1 (fixed)
    std::vector<int64_t> memberIndex;                // index among its block's members, or -1
    std::vector<int32_t> follows;                    // operand slot it follows, or -1
    std::vector<std::pair<OpId, int32_t>> pulledBy;  // (consumer, slot) it is pulled by, or {kNoOp, -1}
    std::vector<OpId> order;                         // members first, then in the order owners were decided
};

// `sourceLike` as OpRoles has it (cost/op_cost.h); `hasRule[k]`: op k has a sharding rule.
OpOwners decideOwners(const Graph& graph, const BlockAnalysis& blocks, const std::vector<char>& sourceLike,
                      const std::vector<char>& hasRule, const Consumers& consumers);

// Ops by how the planner decides them (every op counted once).
struct OpDecisionCounts {
    int64_t inBlocks = 0;        // members of a block
    int64_t follow = 0;          // follow an operand that depends on a block
    int64_t pulled = 0;          // take the sharding a consumer reads
    int64_t constantFolded = 0;  // computed from constants and iota alone, folded into consumers
    int64_t fixedFollowing = 0;  // fixed, following a fixed operand (no block reaches them)
    int64_t replicated = 0;      // fixed and replicated: opaque ops, and sources nothing reads from a block
    std::map<std::string, int64_t> opaqueByTarget;  // ops without a sharding rule, by kind or target
};
OpDecisionCounts countOpDecisions(const Graph& graph, const BlockAnalysis& blocks);
}  // namespace cfp
