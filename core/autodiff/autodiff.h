#pragma once
// Reverse-mode automatic differentiation over the graph IR, and the AdamW update.
//
// appendBackward() walks the forward ops that the loss depends on in reverse topological order and
// appends their vector-Jacobian products (phase = backward). Every op it appends records in
// Op::derivedFrom the forward op whose gradient rule produced it and in Op::derivedOperand which
// operand of that op the gradient flows to (-1 for the seed and for gradient accumulation). For a
// forward dot Y = X·W this yields exactly two backward dots, dX (derivedOperand 0) and dW
// (derivedOperand 1), so later analysis can pair them without guessing.
//
// appendAdamW() appends, for every trainable parameter with a gradient, AdamW's update
// (phase = optimizer, derivedFrom = the parameter): new optimizer-state parameters m and v (f32,
// role optimizer_state) and, when the parameter is not f32, an f32 master copy; outputs are the
// updated parameter, m, v (and master copy).

#include <map>
#include <vector>

#include "ir/graph.h"

namespace cfp {

// Gradient of a scalar loss with respect to each requested op: wrt op id → gradient op id.
// Ops that the loss does not depend on get a zero gradient (a broadcast constant).
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
// outputs.
Status appendAdamW(Graph& graph, const std::map<OpId, OpId>& gradients, const AdamWConfig& config = {});

// Forward graph with a scalar loss → full training step: backward for every trainable parameter,
// then AdamW. The loss stays a graph output.
Status appendTrainingStep(Graph& graph, OpId loss, const AdamWConfig& config = {});

}  // namespace cfp
