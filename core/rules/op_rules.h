#pragma once
// Per-op sharding rules as data: one registry of Shardy-style *factor* rules, and the one generic
// propagation algorithm over them.
//
// A rule describes an op by its *factors*: the independent index spaces of the computation. Every
// operand dimension and every result dimension maps to at most one factor (or to none). A sharding
// of the op is an assignment of mesh axes to factors (each mesh axis to at most one factor, axes of
// one factor ordered major to minor); the shardings of operands and result are its projections.
//
// Factor kinds:
//   PassThrough  appears in the result (and in any number of operands). Splitting it splits the
//                result the same way; operands that lack it are replicated along it (each device
//                computes its slice). A factor that exists only in the result (broadcast's new dims,
//                a source's dims) is therefore free to shard.
//   Reduction    operand-only, combined by a SUM: dot contraction, reduce-add, a gather's collapsed
//                table dim (vocab-parallel embedding: each device looks up its rows, zeros elsewhere),
//                the scattered dims of a scatter-add into zeros. Splitting it leaves the result a
//                pending partial sum over those axes.
//   Blocked      cannot be split without communication: sliced or concatenated dims, reduce-max/min
//                dims, reshape dims that are not the major-most dimension of their group, index
//                vectors.
//
// Worked examples (printed with OpShardingRule::toString; factor letters in order of creation):
//   dot X[8,1024,4096]·W[4096,16384], contracting {2},{0}:
//       ([i,j,l], [l,k]) -> [i,j,k] {i=8, j=1024, k=16384, l=4096 reduction}
//     (factors in the order batch, lhs free, rhs free, contracting)
//     operands [{x},{},{}], [{},{}] → i on x → result [{x},{},{}]
//     operands [{},{},{x}], [{x},{}] → l on x → result [{},{},{}] partial{x}
//   reduce-max f32[8,16] over {1}:  ([i,j]) -> [i]  {i=8, j=16 blocked}; operand [{},{x}] → needs
//     communication (rules.needs_communication).
//   reshape [B,S,H]=[8,1024,4096] → [B,S,nh,hd]=[8,1024,32,128]: groups {B}↔{B}, {S}↔{S},
//     {H}↔{nh,hd}. Only the major-most dims of a group correspond, through a factor of size
//     gcd(H, nh) = 32; the minor result dim hd is its own blocked factor:
//       ([i,j,k]) -> [i,j,k,l] {i=8, j=1024, k=32, l=128 blocked}
//     operand [{},{},{x}] (x=8 divides 32) → result [{},{},{x},{}].
//   broadcast f32[16] → f32[8,16] dims {1}: ([j]) -> [i,j] {i=8, j=16}; result-only factor i is free.
//
// Custom-calls have a rule only when their target is an HLO opcode the IR has no kind for and
// whose sharding is known (op_rules.cpp customCallRule: shifts, xor, bitcast-convert, rounding,
// rng-bit-generator, sort, variadic reduce, dynamic-slice, …), or a manual region's boundary or
// all-reduce (below); others are reported with code rules.no_rule, and analysis treats them as
// block boundaries.
//
// Manual (shard_map) regions. JAX's shard_map (and PyTorch/XLA's manual sharding) lower a
// per-device program between two custom-calls (docs/importers.md):
//   x_local = custom-call SPMDFullToShardShape(x)   x full-shaped, in the sharding attrs.sharding;
//                                                   x_local: each device's tile of it
//   … ops on local shapes, explicit collectives (custom-call hlo.all-reduce, attrs.replicaGroups) …
//   y = custom-call SPMDShardToFullShape(y_local)   y: the full value the devices' tiles form, in
//                                                   the sharding attrs.sharding
// An op is in the manual region (manualRegionOps) when it is a FullToShard or reads a value of the
// region, unless it is a ShardToFull. Its shapes are already one device's share: it must not be
// split again, and unsplit (every device computing its own local values) it prices exactly each
// device's work. The boundaries' rules keep the two sides apart, FullToShard f32[16,64] → f32[4,64]:
//   ([i,j]) -> [k,l] {i=16, j=64, k=4 blocked, l=64 blocked}
// the full side's factors only in the operand (splitting them hands each device its tile, the local
// result stays whole); ShardToFull the reverse, the full side's factors only in the result. An
// all-reduce in a region (Partitioning::Manual) is elementwise with one more reduction factor of its
// group size that no dim carries, ([i,j]) -> [i,j] {i=8, j=64, k=4 reduction}: split over the group's
// axes it leaves a partial sum that its own all-reduce completes, which is the collective's cost.
// Which axes these factors take is not propagated but fixed by the source (isSourcePinned):
// sourcePinnedFactors places the op's sharding or replica groups on the mesh (sharding/hlo_sharding.h)
// and fails with hlo.manual_mesh when they do not fit it. ParallelBlocks give each such op a block
// of its own with that one strategy and the dots of a region one strategy that splits nothing
// (blocks/blocks.h).
//
// Propagation works on n-D meshes of at most kMaxRuleMeshAxes axes. Forward propagation is strict:
// every KNOWN operand dimension mapped to a factor must carry exactly the same ordered axes as every
// other known dimension of that factor (an unsplit dimension next to a split one disagrees: that
// would need at least a local slice on the edge); unknown operands (std::nullopt) adapt. Operands
// must not be pending partial sums. Every factor's axes must divide its size. Failures are
// Error{code "rules.needs_communication"} with a message naming the operand, dim and factor.
//
// Stable error codes: rules.no_rule, rules.needs_communication, rules.bad_mesh, rules.bad_operands,
// hlo.manual_mesh.

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"
#include "util/result.h"

namespace cfp {

inline constexpr int kMaxRuleMeshAxes = 8;
inline constexpr int32_t kNoFactor = -1;

enum class FactorKind : uint8_t { PassThrough, Reduction, Blocked };
std::string_view factorKindName(FactorKind k);  // "pass", "reduction", "blocked"

// What a dot factor is (other ops: Dim). Lets strategy enumeration pick rows/columns/contraction.
enum class FactorRole : uint8_t { Dim, DotBatch, DotLhsFree, DotRhsFree, DotContracting };

struct Factor {
    int64_t size = 1;
    FactorKind kind = FactorKind::PassThrough;
    FactorRole role = FactorRole::Dim;
    bool operator==(const Factor&) const = default;
};

struct OpShardingRule {
    std::vector<Factor> factors;
    std::vector<std::vector<int32_t>> operandDims;  // [operand][dim] → factor or kNoFactor
    std::vector<int32_t> resultDims;                // [dim] → factor or kNoFactor

    int32_t factorCount() const { return static_cast<int32_t>(factors.size()); }
    // "([i,j,l], [l,k]) -> [i,j,k] {…}"; "_" = no factor.
    std::string toString() const;
    bool operator==(const OpShardingRule&) const = default;
};

// ---- registry ----

// One rule function per OpKind (nullptr: no rule). The op's operands are looked up in `graph`.
using RuleFunction = OpShardingRule (*)(const Graph& graph, const Op& op);
const std::array<RuleFunction, kOpKindCount>& ruleRegistry();
// Whether every op of `kind` has a rule (a custom-call may still have one by its target).
bool hasShardingRule(OpKind kind);

// The rule of `op` (an op of `graph`), or rules.no_rule naming the op and its kind. Inside a
// manual region (Partitioning::Manual, from manualRegionOps) an all-reduce has a rule too.
enum class Partitioning : uint8_t { Auto, Manual };
Result<OpShardingRule> shardingRuleFor(const Graph& graph, const Op& op, Partitioning partitioning = Partitioning::Auto);


// ---- factor assignments (the generic algorithm) ----

// Mesh axes assigned to factors, by mesh axis index: factorOf[a] = factor (or kNoFactor),
// position[a] = a's place among its factor's axes (0 = major). Fixed size: no allocation.
struct FactorAssignment {
    std::array<int16_t, kMaxRuleMeshAxes> factorOf{};
    std::array<int8_t, kMaxRuleMeshAxes> position{};
    FactorAssignment() { factorOf.fill(-1); position.fill(-1); }
    bool operator==(const FactorAssignment& o) const {  // as 64-bit words (see CompactSharding)
        static_assert(sizeof(factorOf) == 2 * sizeof(uint64_t) && sizeof(position) == sizeof(uint64_t));
        uint64_t a[3], b[3];
        std::memcpy(a, factorOf.data(), sizeof factorOf);
        std::memcpy(b, o.factorOf.data(), sizeof factorOf);
        std::memcpy(a + 2, position.data(), sizeof position);
        std::memcpy(b + 2, o.position.data(), sizeof position);
        return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
    }
};

// A sharding in mesh-axis-index form (what the analysis stores): per mesh axis the dim it splits
// (kAxisUnused, kAxisPartial, or ≥ 0) and its position in that dim's list. Fixed size.
struct CompactSharding {
    static constexpr int8_t kAxisUnused = -1;
    static constexpr int8_t kAxisPartial = -2;
    std::array<int8_t, kMaxRuleMeshAxes> dimOf{};
    std::array<int8_t, kMaxRuleMeshAxes> position{};
    int8_t rank = 0;
    CompactSharding() { dimOf.fill(kAxisUnused); position.fill(-1); }
    static CompactSharding replicated(int64_t rank);
    bool isPartial() const;
    CompactSharding withoutPartial() const;  // partial axes become unused
    // The two per-axis arrays as 64-bit words: compared (with the rank) on every edge of the cost
    // tables, where the defaulted comparison called memcmp per array, and hashed.
    std::array<uint64_t, 2> words() const {
        static_assert(sizeof(dimOf) == sizeof(uint64_t) && sizeof(position) == sizeof(uint64_t));
        std::array<uint64_t, 2> w{};
        std::memcpy(&w[0], dimOf.data(), sizeof w[0]);
        std::memcpy(&w[1], position.data(), sizeof w[1]);
        return w;
    }
    bool operator==(const CompactSharding& o) const {
        const auto a = words(), b = o.words();
        return a[0] == b[0] && a[1] == b[1] && rank == o.rank;
    }
    size_t hash() const;
};

// Mesh axis sizes, validated (at most kMaxRuleMeshAxes axes).
struct MeshSizes {
    std::array<int64_t, kMaxRuleMeshAxes> size{};
    int rank = 0;
};
Result<MeshSizes> meshSizes(const Mesh& mesh);

Result<CompactSharding> toCompact(const TensorSharding& sharding, const Mesh& mesh);
TensorSharding fromCompact(const CompactSharding& sharding, const Mesh& mesh);

// Compact core, used by the analysis hot path. Return false and fill `why` (when non-null) when
// the shardings need communication.
bool assignFromOperands(const OpShardingRule& rule, std::span<const CompactSharding* const> operands,
                        const MeshSizes& mesh, FactorAssignment& out, std::string* why);
bool assignFromResult(const OpShardingRule& rule, const CompactSharding& result, const MeshSizes& mesh,
                      FactorAssignment& out, std::string* why);
CompactSharding projectOperand(const OpShardingRule& rule, const FactorAssignment& a, size_t operand);
// Result sharding; axes on Reduction factors become partial axes.
CompactSharding projectResult(const OpShardingRule& rule, const FactorAssignment& a);

// ---- public TensorSharding API ----

// Factor assignment from operand shardings (std::nullopt = unknown, adapts), or from the result.
Result<FactorAssignment> factorsFromOperands(const OpShardingRule& rule,
                                             std::span<const std::optional<TensorSharding>> operands,
                                             const Mesh& mesh);
Result<FactorAssignment> factorsFromResult(const OpShardingRule& rule, const TensorSharding& result,
                                           const Mesh& mesh);
TensorSharding operandShardingFor(const OpShardingRule& rule, const FactorAssignment& a, size_t operand,
                                  const Mesh& mesh);
TensorSharding resultShardingFor(const OpShardingRule& rule, const FactorAssignment& a, const Mesh& mesh);

// Result sharding that follows from the operand shardings without communication (it may be a
// pending partial sum when a Reduction factor is split), or rules.needs_communication.
Result<TensorSharding> propagateForward(const OpShardingRule& rule,
                                        std::span<const std::optional<TensorSharding>> operands,
                                        const Mesh& mesh);
Result<TensorSharding> propagateForward(const OpShardingRule& rule, std::span<const TensorSharding> operands,
                                        const Mesh& mesh);
// Operand shardings that produce `result` without communication. Operands are replicated along
// result-only factors and along Reduction factors, unless `result` is a partial sum and the rule has
// exactly one Reduction factor, which then takes the partial axes.
Result<std::vector<TensorSharding>> propagateBackward(const OpShardingRule& rule, const TensorSharding& result,
                                                      const Mesh& mesh);

// ---- manual regions (above) ----

// (The targets and isFullToShard / isShardToFull are in ir/op.h.)
// Per op: 1 when it is in a manual region.
std::vector<char> manualRegionOps(const Graph& graph);
inline Partitioning partitioningOf(const std::vector<char>& manual, OpId op) {
    return manual[static_cast<size_t>(op)] ? Partitioning::Manual : Partitioning::Auto;
}
// The region's boundaries, and its all-reduces: ops whose factor assignment the source fixes.
bool isSourcePinned(const Op& op, Partitioning partitioning);

// Whether `op` is made locally, on any device and for any slice of it, from the step's inputs (token
// ids, labels: Input parameters) and values `adapts` accepts (static ones, other such ops): a
// broadcast or an elementwise op of them, as the labels' one-hot compare(iota, broadcast(labels)) a
// vocabulary-parallel loss reads split (and its gradient's scale times it). Block analysis pulls such ops like static values.
template <typename Adapts>
bool isStepData(const Graph& g, const Op& op, Adapts&& adapts) {
    if ((op.kind != OpKind::Broadcast && !isElementwise(op.kind)) || op.operands.empty()) return false;
    for (OpId o : op.operands) {
        const Op& x = g.op(o);
        if (!(x.kind == OpKind::Parameter && x.role == ParamRole::Input) && !adapts(o)) return false;
    }
    return true;
}
// That assignment on `mesh` (`rule` is the op's rule). hlo.manual_mesh, located at the op, when
// the op's sharding or replica groups do not fit the mesh.
Result<FactorAssignment> sourcePinnedFactors(const Op& op, const OpShardingRule& rule, const Mesh& mesh);

}  // namespace cfp
