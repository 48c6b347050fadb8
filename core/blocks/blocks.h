#pragma once
// ParallelBlocks: groups of ops in which the partition chosen at the block's entry contraction
// propagates to every member with no communication (DESIGN.md "ParallelBlocks", §6).
//
// General rules (no per-model tables):
//   1. Seeds. Every dot that is not a backward dot paired with a forward dot seeds a block, in op-id
//      order. Its strategies on the mesh: for each mesh axis one factor of the dot — any batch
//      factor, the OUTERMOST lhs-free factor the axis divides ("rows", in practice the data batch),
//      the outermost rhs-free factor it divides ("cols"), or any contracting factor ("contract",
//      result a partial sum) — or the axis stays unused when no factor divides. n-D meshes give
//      the product over axes (two axes on one factor allowed, major = earlier mesh axis); only
//      strategies whose splits divide evenly are kept. A plain matmul on {x=8} has exactly three:
//      "x:rows", "x:cols", "x:contract". Labels list "axis:choice" per mesh axis: "dp:rows,tp:cols".
//      Manual (shard_map) regions (rules/op_rules.h): a dot inside one has the one strategy that
//      splits nothing ("x:-"); each op whose sharding the source fixes — a region's boundaries and
//      all-reduces — seeds a block too, in op-id order, with the source's one strategy placed on the
//      mesh ("dp:dim0,tp:-": the full side's dim each axis splits; "dp:-,tp:sum": an all-reduce's
//      group axes), or findParallelBlocks fails with hlo.manual_mesh. Such ops are never static and
//      never join or are pulled into another block.
//   2. Own collectives. A member whose propagated result is a pending partial sum (a contraction
//      split, a reduce-add over a split dim, a vocab-parallel gather, a scatter-add of split
//      updates) completes it with its OWN all-reduce to replicated; its stored sharding is the
//      reduced one. Own collectives are listed per strategy; they are cost, not resharding.
//   3. Backward pairing. The backward dots of a forward dot (dX: gradient flowing to operand 0,
//      dW: to operand 1) join its block. Their output-gradient operand dY is taken to carry the
//      forward result's sharding (the block's contract for dY); their shared operand is a member.
//      So under "x:rows" dW = Xᵀ·dY contracts over the split batch → partial → own all-reduce (the
//      data-parallel gradient all-reduce); under "x:cols" dX ends in an all-reduce. Pairs come from
//      autodiff provenance (Op::derivedFrom / derivedOperand) when the graph has it, otherwise from
//      structure (pairBackwardDotsStructurally).
//   4. Growth. An op joins a block when, for EVERY strategy, its sharding follows from block members
//      by communication-free propagation (rules/op_rules.h, strict: the in-block operands must agree
//      exactly). Operands that are *static* (derived only from weights, optimizer state, constants,
//      iota, through ops that have a sharding rule: an opaque op is a boundary) or sources (any parameter) and not yet claimed are pulled in backward with the sharding
//      the consumer needs (a dot's weight, a bias through its broadcast, AdamW's m, v and master
//      copy); a static value another block already claimed stays outside (an inter-block edge).
//      Forward growth never enters static ops: they are pulled, so a causal mask shared by all
//      layers does not drag the layers into one block. Dots with a static operand (weights) never
//      join: they seed. Weight-free dots (attention scores and context) join when both operands are
//      members and the propagated shardings form a valid strategy with no resharding — this merges
//      QKV projection and the two attention dots into one block. Each block grows to completion
//      with a min-heap worklist in op-id order before the next seed starts; an op belongs to the
//      first block that takes it. A joining op must also match what members already consuming it
//      expect (e.g. the computed dY of a paired backward dot).
//   5. Everything else is "resolved later" with a reason: MultiBlockInput (operands from two or more
//      blocks, e.g. residual adds), NeedsCommunication (propagation fails under some strategy, e.g.
//      a reduce-max over a split dim), NoRule (custom-call), Unreached (depends on ops resolved
//      later, or no block reaches it), ReplicatedSource (a parameter, constant or static value no
//      block claimed: kept replicated). Every op is in exactly one block or in that set.
//
// Example: an MLP  h = X·W1, a = gelu(h), y = a·W2  on {x=8}, training step. Two blocks:
//   block 0, entry h: W1 (pulled), gelu ops, dX1 and dW1 (paired), dW1's AdamW chain (m, v pulled);
//   block 1, entry y: W2, dX2, dW2, its AdamW chain. The GeLU backward multiplies dX2 (block 1) by
//   gelu'(h) (block 0): MultiBlockInput, resolved later. Both blocks have 3 strategies.
//
// Storage: shardings are interned in BlockAnalysis::shardings; each strategy stores one index per
// member (GPT-3 175B: ~68k ops analysed in well under a second and a few MB).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "sharding/mesh.h"
#include "sharding/reshard.h"
#include "rules/op_rules.h"
#include "sharding/sharding.h"
#include "util/result.h"

namespace cfp {

// A forward dot and one of its backward dots.
struct DotPair {
    OpId forward = kNoOp;
    OpId backward = kNoOp;
    int32_t side = 0;          // 0: gradient of forward operand 0 (dX), 1: of operand 1 (dW)
    int32_t gradOperand = 0;   // operand index of dY in the backward dot
    bool operator==(const DotPair&) const = default;
};

// From Op::derivedFrom / derivedOperand: backward dots derived from a dot.
std::vector<DotPair> pairBackwardDotsByProvenance(const Graph& graph);
// Without provenance: a dot B pairs with an earlier dot F on side s when B shares F's other operand
// (operand 1 for s = 0, operand 0 for s = 1; identical after stripping transpose/reshape/convert),
// B's other operand has F's result shape, and B contracts the shared operand's free dims (as
// reverse-mode differentiation does). Among several candidates F, one confirmed by the sibling
// backward dot (the other side of the same F consuming the same dY) wins, then the latest F. Each
// (F, side) and each B is used once. Sorted by backward id.
std::vector<DotPair> pairBackwardDotsStructurally(const Graph& graph);
// Provenance when any op carries it, structure otherwise.
std::vector<DotPair> pairBackwardDots(const Graph& graph);

struct OwnCollective {
    OpId op = kNoOp;
    CollectiveKind kind = CollectiveKind::AllReduce;
    std::vector<std::string> axes;  // mesh order
    int64_t bytes = 0;              // full result size (the message b of DESIGN.md §6)
    bool operator==(const OwnCollective&) const = default;
};

struct BlockStrategy {
    std::string label;                        // "x:rows", "dp:rows,tp:cols"
    std::vector<TensorSharding> entryOperands;  // the entry dot's operand shardings (the decision)
    std::vector<uint32_t> memberShardings;    // per member: index into BlockAnalysis::shardings
    std::vector<FactorAssignment> memberFactors;  // per member: mesh axes on its rule's factors
    std::vector<OwnCollective> ownCollectives;  // in member order
};

struct ParallelBlock {
    int32_t id = 0;
    OpId entry = kNoOp;
    std::vector<OpId> members;                // sorted by id, entry included
    std::vector<BlockStrategy> strategies;
    std::vector<DotPair> backwardPairs;       // forward dots of this block with their backward dots
    // Index of `op` in members, or -1.
    int64_t memberIndex(OpId op) const;
};

enum class UnassignedReason : uint8_t { MultiBlockInput, NeedsCommunication, NoRule, Unreached, ReplicatedSource };
std::string_view unassignedReasonName(UnassignedReason r);  // "multi_block_input", …

struct UnassignedOp {
    OpId op = kNoOp;
    UnassignedReason reason = UnassignedReason::Unreached;
    std::string detail;
};

struct UnsupportedOp {
    OpId op = kNoOp;
    std::string name;
    std::string kind;     // "custom-call"
    std::string message;
};

struct BlockAnalysis {
    Mesh mesh;
    std::vector<TensorSharding> shardings;    // interned
    std::vector<ParallelBlock> blocks;        // ordered by entry id
    std::vector<UnassignedOp> resolvedLater;  // sorted by op id
    std::vector<UnsupportedOp> unsupported;
    std::vector<int32_t> blockOf;             // per op: block id or -1
    // Per op: its sharding rule (shardingRuleFor), none where it has no rule. Derived once here;
    // the planner reads them instead of deriving them again (null: derive them).
    std::shared_ptr<const std::vector<std::optional<OpShardingRule>>> rules;

    const TensorSharding& sharding(const ParallelBlock& block, size_t strategy, size_t member) const {
        return shardings[block.strategies[strategy].memberShardings[member]];
    }
    // (ops in blocks + ops resolved later with a reason) / all ops.
    double coverage(const Graph& graph) const;
};

// Errors: rules.bad_mesh (more than 8 axes), hlo.manual_mesh (a manual region's sharding or replica
// groups do not fit the mesh, naming the op). The ops' rules are derived on `threads` workers
// (0: util/parallel.h's default); the result does not depend on it.
// A matmul's strategies split, per mesh axis, a batch dim, the first free dim of each side ("rows",
// "cols") or a contracting dim; over `sequenceAxis` (context parallelism: the mesh axis named so)
// also the lhs's second free dim ("seq": S of [B, S, D] · [D, F], whose first is the batch).
Result<BlockAnalysis> findParallelBlocks(const Graph& graph, const Mesh& mesh, int threads = 0, const std::string& sequenceAxis = {});

}  // namespace cfp
