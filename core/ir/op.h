#pragma once
// Primitive operations of the graph IR, in XLA HLO's vocabulary.
//
// Every op produces exactly one tensor. Attributes follow HLO's names and meaning:
//   broadcast   dimensions[i] = result dim that operand dim i maps to      (HLO `dimensions`)
//   reduce      dimensions = operand dims reduced away; reduceKind = add|max|min|multiply
//   transpose   dimensions = permutation: result dim i is operand dim dimensions[i]
//   concatenate dimensions = {axis}
//   iota        dimensions = {iota_dimension}
//   dot         dot = batch / contracting dims; result = batch dims, lhs free dims, rhs free dims
//   slice       slice = start / limit / stride per dim
//   gather      gather = HLO GatherDimensionNumbers + slice_sizes
//   scatter     scatter = HLO ScatterDimensionNumbers; reduceKind combines updates (add)
//   compare     comparison = EQ|NE|LT|LE|GT|GE, result element type pred
//   constant    literal = one value (splat over the type) or one value per element
//   custom-call target = the custom call's target name; the result type is declared, not inferred.
//               The boundaries of a manual (shard_map) region, targets SPMDFullToShardShape and
//               SPMDShardToFullShape, carry the HloSharding text of their full-shaped side
//               (sharding); an explicit all-reduce (target hlo.all-reduce) its replica groups and
//               combiner (replicaGroups, reduceKind). rules/op_rules.h "Manual regions".
//   parameter   role says what the parameter holds (data input, trainable weight, optimizer state)
//
// Example: Y = X·W with X: bf16[8,1024,4096], W: bf16[4096,16384] is
//   dot(X, W) with lhsContracting={2}, rhsContracting={0} → bf16[8,1024,16384].

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/types.h"

namespace cfp {

using OpId = int32_t;
inline constexpr OpId kNoOp = -1;

enum class OpKind : uint8_t {
    // sources
    Parameter, Constant, Iota,
    // unary elementwise
    Negate, Exponential, Log, Sqrt, Rsqrt, Tanh, Logistic, Abs, Sign, Sine, Cosine, Convert,
    // binary elementwise
    Add, Subtract, Multiply, Divide, Maximum, Minimum, Power, Compare, And, Or,
    // ternary elementwise
    Select,
    // layout and data movement
    Broadcast, Reshape, Transpose, Slice, Concatenate,
    // reductions and contractions
    Reduce, Dot,
    // indexing
    Gather, Scatter,
    // opaque
    CustomCall,
};

inline constexpr int kOpKindCount = static_cast<int>(OpKind::CustomCall) + 1;

std::string_view opKindName(OpKind k);  // HLO spelling: "exponential", "custom-call", …
std::optional<OpKind> parseOpKind(std::string_view name);

bool isUnaryElementwise(OpKind k);
bool isBinaryElementwise(OpKind k);
bool isElementwise(OpKind k);  // unary, binary or select
// Ops whose result type cannot be inferred from operands and attributes alone and is declared:
// parameter, constant, iota, broadcast, reshape, convert, custom-call.
bool hasDeclaredType(OpKind k);

enum class Phase : uint8_t { Forward, Backward, Optimizer };
std::string_view phaseName(Phase p);  // "forward", "backward", "optimizer"
std::optional<Phase> parsePhase(std::string_view name);

// What a parameter holds.
enum class ParamRole : uint8_t {
    None,            // not a parameter
    Input,           // data fed each step (token ids, labels, masks)
    Trainable,       // model weight updated by the optimizer
    OptimizerState,  // optimizer slots and master weights (AdamW m, v, fp32 master copy, step)
};
std::string_view paramRoleName(ParamRole r);  // "none", "input", "trainable", "optimizer_state"
std::optional<ParamRole> parseParamRole(std::string_view name);

enum class ComparisonDirection : uint8_t { EQ, NE, LT, LE, GT, GE };
std::string_view comparisonName(ComparisonDirection c);
std::optional<ComparisonDirection> parseComparison(std::string_view name);

enum class ReduceKind : uint8_t { Add, Max, Min, Multiply };
std::string_view reduceKindName(ReduceKind r);  // "add", "max", "min", "multiply"
std::optional<ReduceKind> parseReduceKind(std::string_view name);

struct DotDimensionNumbers {
    std::vector<int64_t> lhsBatch, rhsBatch, lhsContracting, rhsContracting;
    bool operator==(const DotDimensionNumbers&) const = default;
};

struct SliceBounds {
    std::vector<int64_t> start, limit, stride;
    bool operator==(const SliceBounds&) const = default;
};

// Batching dims (XLA's operand_batching_dims / start_indices_batching_dims, as `take_along_axis`
// lowers): operand dim operandBatchingDims[j] is read at the index of indices dim
// startIndicesBatchingDims[j], like a batch dim of a dot; slice size 1, neither collapsed nor offset.
struct GatherDimensionNumbers {
    std::vector<int64_t> offsetDims, collapsedSliceDims, startIndexMap;
    int64_t indexVectorDim = 0;
    std::vector<int64_t> sliceSizes;
    std::vector<int64_t> operandBatchingDims, startIndicesBatchingDims;
    bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
    std::vector<int64_t> updateWindowDims, insertedWindowDims, scatterDimsToOperandDims;
    int64_t indexVectorDim = 0;
    std::vector<int64_t> inputBatchingDims, scatterIndicesBatchingDims;  // as gather's batching dims
    bool operator==(const ScatterDimensionNumbers&) const = default;
};

// Attributes of an op; only the fields its kind uses are meaningful (others stay empty/default).
struct OpAttrs {
    std::vector<int64_t> dimensions;
    DotDimensionNumbers dot;
    SliceBounds slice;
    GatherDimensionNumbers gather;
    ScatterDimensionNumbers scatter;
    ComparisonDirection comparison = ComparisonDirection::EQ;
    ReduceKind reduceKind = ReduceKind::Add;
    std::vector<double> literal;
    std::string target;
    std::string sharding;                            // custom-call: "{devices=[4,1]<=[4]}" (manual boundaries)
    std::vector<std::vector<int64_t>> replicaGroups;  // custom-call: device ids per group (collectives)
    bool operator==(const OpAttrs&) const = default;
};

struct Op {
    OpId id = kNoOp;            // index in Graph::ops()
    OpKind kind = OpKind::Parameter;
    std::string name;           // unique within the graph
    TensorType type;            // result type
    std::vector<OpId> operands; // all < id (SSA, topological order)
    OpAttrs attrs;
    Phase phase = Phase::Forward;
    std::string scope;          // module path, e.g. "layers.17.mlp.fc1"
    ParamRole role = ParamRole::None;  // for parameters

    // Provenance of derived ops. Backward ops: the forward op they differentiate and which of its
    // operands the gradient flows to (-1 when the op accumulates or seeds the output gradient).
    // Optimizer ops: the trainable parameter they update (derivedOperand = -1).
    OpId derivedFrom = kNoOp;
    int32_t derivedOperand = -1;

    bool operator==(const Op&) const = default;
};

// Custom-call targets with a meaning of their own (op.h above; rules/op_rules.h "Manual regions").
inline constexpr std::string_view kFullToShardTarget = "SPMDFullToShardShape";
inline constexpr std::string_view kShardToFullTarget = "SPMDShardToFullShape";
inline constexpr std::string_view kAllReduceTarget = "hlo.all-reduce";
inline bool isFullToShard(const Op& op) { return op.kind == OpKind::CustomCall && op.attrs.target == kFullToShardTarget; }
inline bool isShardToFull(const Op& op) { return op.kind == OpKind::CustomCall && op.attrs.target == kShardToFullTarget; }

}  // namespace cfp
