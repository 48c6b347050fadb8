#pragma once
// Whole-graph statistics reported by `cfp describe`: op counts, parameters, FLOPs, activations.
//
// FLOPs count one multiply-add as 2 FLOPs (the usual convention, so a training step of a dense
// transformer comes out near 6·params·tokens plus attention):
//   dot          2 · (result elements) · (product of contracting dim sizes)
//   elementwise  1 per result element (transcendentals included, as in roofline accounting)
//   reduce       1 per operand element
//   everything else (layout, gather/scatter, sources) 0
// Activation bytes are the forward results that backward ops read (what training must keep alive
// between the passes, without rematerialisation), excluding parameters and values computed from
// constants alone; a saved broadcast counts as its operand (compilers keep the small tensor).

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace cfp {

struct GraphStats {
    int64_t ops = 0;
    std::array<int64_t, 3> opsByPhase{};     // indexed by Phase
    std::map<std::string, int64_t> opsByKind;  // HLO kind name → count (sorted by name)
    int64_t trainableParams = 0;             // elements of trainable parameters
    int64_t trainableParamBytes = 0;
    int64_t optimizerStateBytes = 0;         // AdamW moments and master weights
    int64_t inputBytes = 0;                  // data inputs (token ids, labels)
    double flops = 0;                        // per step, all phases
    std::array<double, 3> flopsByPhase{};
    int64_t activationBytes = 0;
};

double opFlops(const Graph& graph, const Op& op);
GraphStats computeStats(const Graph& graph);

}  // namespace cfp
