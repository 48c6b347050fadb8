#pragma once
// Reference interpreter for the graph IR: evaluates every op of a Graph on the CPU in double
// precision, following XLA HLO semantics. It is a test oracle (finite differences against autodiff,
// hand-computed values against builders), not a fast engine: keep graphs small.
//
// Value model:
//   * Every tensor is a row-major std::vector<double> of TensorType::elements() values.
//   * pred values are 0 or 1; integer values are whole numbers held in a double.
//   * Values are NOT rounded to the declared element type: an f16/bf16/f32 op computes in double.
//     (convert to an integer type truncates toward zero, to pred gives x != 0 ? 1 : 0; integer
//     divide truncates toward zero and x/0 gives -1 as in XLA; everything else is exact double math.)
//   * gather clamps start indices so the slice fits (HLO); scatter skips an update whose window
//     would leave the operand (XLA's behaviour for out-of-bounds scatter indices).
//   * reduce has no init operand in this IR: it starts from the identity of its kind
//     (add 0, multiply 1, max -inf, min +inf; the integer type's limits for integers).
//   * custom-call cannot be evaluated (interp.unsupported), but for hlo.erf and a manual (shard_map)
//     region's ops: the region runs once per device as SPMD code does — SPMDFullToShardShape hands
//     each device its tile of the full value (by the boundary's sharding), the region's ops compute
//     on each device's values, hlo.all-reduce combines them over its replica groups, and
//     SPMDShardToFullShape assembles the devices' tiles into the full value. The value returned
//     for an op of the region is device 0's. Devices: the boundaries' device lists (rules/op_rules.h).
//
//   Graph g; GraphBuilder b(g);
//   OpId x = b.parameter("x", {DType::F32, {2}}, ParamRole::Input);
//   OpId y = b.exp(x);
//   auto values = evaluate(g, {{"x", Tensor{{DType::F32, {2}}, {0.0, 1.0}}}});
//   // (*values)[y].values == {1.0, 2.718281828...}
//
// Error codes (stable): interp.missing_parameter, interp.bad_parameter (type or value count does not
// match the parameter), interp.too_large (the element budget would be exceeded),
// interp.unsupported (custom-call). The error's `where` names the op. A graph that fails
// Graph::validate() is rejected first with validate()'s own error.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace cfp {

struct Tensor {
    TensorType type;
    std::vector<double> values;  // row-major, type.elements() entries

    // Value at a multi-index (checked with assert only).
    double at(const std::vector<int64_t>& index) const;
};

struct EvalOptions {
    // Sum of the element counts of all ops' results may not exceed this.
    int64_t maxTotalElements = int64_t{1} << 24;
};

// Evaluates every op of `graph`; result[i] is the value of op i. `parameters` maps parameter names
// to values; every parameter op needs one of exactly its type (extra entries are ignored).
Result<std::vector<Tensor>> evaluate(const Graph& graph, const std::map<std::string, Tensor>& parameters,
                                     const EvalOptions& options = {});

// Row-major strides of `dims` (stride of the last dim is 1).
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims);

}  // namespace cfp
