#pragma once
// Reverse-mode automatic differentiation over the graph IR, and the AdamW update.
//
// appendBackward() walks the forward ops that the loss depends on *and* that depend on some `wrt` op,
// in reverse topological order, and appends their vector-Jacobian products (phase = backward, scope
// = the scope of the forward op being differentiated). Every op it appends records in Op::derivedFrom
// the forward op whose gradient rule produced it and in Op::derivedOperand which operand of that op
// the gradient flows to (-1 for the seed, derived from the loss, and for the adds that accumulate the
// gradients of a value used several times, derived from that value). For a forward dot Y = X·W this
// yields exactly two backward dots, dX (derivedOperand 0) and dW (derivedOperand 1), each followed
// at most by a transpose into the operand's dim order, so later analysis can pair them without
// guessing:
//
//   Y[B,S,F] = dot(X[B,S,H], W[H,F])        lhs_contracting={2}, rhs_contracting={0}
//   dX[B,S,H] = dot(dY, W)                   lhs_contracting={2}, rhs_contracting={1}
//   dW[H,F]   = dot(X, dY)                   lhs_contracting={0,1}, rhs_contracting={0,1}
//
// Conventions (all O(number of ops); gradients keep the forward value's element type):
//   * integer and pred values, compare, and/or, iota, constants and parameters not in `wrt` carry no
//     gradient; neither do select's predicate nor gather/scatter indices; sign's gradient is zero.
//   * maximum/minimum send the gradient to the first operand on ties (select on a >= b / a <= b);
//     reduce max/min share it equally among the elements equal to the result (as JAX does).
//   * gather's gradient is a scatter-add into zeros with the same indices: it assumes the start
//     indices are in bounds (gather clamps them, scatter would skip them).
//   * slice's gradient pads with zeros through concatenate (strided slices interleave zero blocks via
//     reshape + concatenate); there is no pad op in the IR.
//   * custom-call (but hlo.erf: 2/√π·exp(−x²)) and scatter with a combiner other than add have no
//     gradient rule: an error
//     (autodiff.not_differentiable) when a gradient would have to cross one, none otherwise.
// Errors (autodiff.bad_loss, autodiff.bad_wrt, autodiff.not_differentiable) are found before any op
// is appended, so a failed call leaves the graph unchanged.
//
// appendAdamW() appends, for every trainable parameter P with gradient g (in OpId order), AdamW's
// update (phase = optimizer, derivedFrom = P, scope = P's scope): new optimizer-state parameters
// `<P>.adam_m`, `<P>.adam_v` (f32, role optimizer_state) and, when P is not f32, an f32 master copy
// `<P>.master` that the update reads instead of P:
//   g32 = convert(g, f32);  m' = β1·m + (1-β1)·g32;  v' = β2·v + (1-β2)·g32²
//   W32' = W32 - lr·( (m'/(1-β1^t)) / (sqrt(v'/(1-β2^t)) + ε) + λ·W32 );  P' = convert(W32', P.dtype)
// Graph outputs, per parameter in OpId order: P', then W32' when there is a master copy, then m', v'.

#include <map>
#include <vector>

#include "ir/graph.h"

namespace cfp {

// Gradient of a scalar floating-point loss with respect to each requested op: wrt op id → gradient
// op id (an op of the wrt op's type). Ops that the loss does not depend on get a zero gradient (a
// broadcast scalar constant).
Result<std::map<OpId, OpId>> appendBackward(Graph& graph, OpId loss, const std::vector<OpId>& wrt);

struct AdamWConfig {
    double learningRate = 3e-4;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double epsilon = 1e-8;
    double weightDecay = 0.1;
    int64_t step = 1;  // bias correction uses this step number (a constant in the graph)
};

// Appends the AdamW update for each (parameter → gradient) pair and marks updated tensors as graph
// outputs. Errors (autodiff.bad_parameter, autodiff.bad_gradient, autodiff.name_taken,
// autodiff.bad_config) leave the graph unchanged.
Status appendAdamW(Graph& graph, const std::map<OpId, OpId>& gradients, const AdamWConfig& config = {});

// Forward graph with a scalar loss → full training step: backward for every trainable parameter
// (ParamRole::Trainable, in OpId order), then AdamW. The loss stays a graph output (it is added as
// one, before the optimizer outputs, when absent). Errors leave the graph unchanged.
Status appendTrainingStep(Graph& graph, OpId loss, const AdamWConfig& config = {});

}  // namespace cfp
