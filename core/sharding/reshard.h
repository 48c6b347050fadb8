#pragma once
// Resharding planner: the collectives that turn one sharding of a tensor into another.
//
// Each step acts on ONE mesh axis a (n = its size) and changes the sharding in one of five ways:
//
//   kind           before → after (on the affected dims)         communication
//   AllGather      dim d lists a last (innermost) → a removed      ring all-gather in each a-group
//   ReduceScatter  partial over a → a appended to dim d            ring reduce-scatter
//   AllReduce      partial over a → a nowhere                      ring all-reduce
//   AllToAll       a last on dim d → a appended to dim toDim       all-to-all in each a-group
//   LocalSlice     a unused → a appended to dim d                  none (each device keeps its piece)
//
// Only the innermost (last-listed) axis of a dimension can be gathered or moved: gathering a major
// axis would leave strided, non-contiguous pieces. So a dimension keeps the longest common prefix of
// its current and target axis lists, and removes what lies beyond it innermost-first.
//
// Planning rules (greedy, deterministic; each iteration takes the first applicable rule):
//   1. LocalSlice an axis the current sharding does not use into its target dim, when the axes that
//      precede it there are already in place. Slicing is free and makes every later message smaller.
//   2. ReduceScatter a pending partial sum over a onto the dim the target splits over a, when the
//      axes preceding a there are already in place (pending sums are resolved before anything is
//      gathered, while the data is still small).
//   3. AllReduce a pending partial sum that the target does not keep and that cannot be
//      reduce-scattered now (the target replicates over a, or its dim is not ready).
//   4. AllToAll: the innermost excess axis of a dim that the target places on another dim that is
//      ready for it.
//   5. AllGather: among the innermost excess axes, the one whose gather sends the fewest bytes
//      (ties: the lowest dim). Total gather volume does not depend on the order, but when moves are
//      blocked (a swap of two axes) gathering the cheaper one first unblocks the other's AllToAll.
//   Ties inside a rule go to the lowest dim, then the lowest position, then mesh axis order. A partial
//   sum kept by the target stays; a partial sum the source lacks cannot be created by resharding
//   (reshard.partial_target) — partial sums come from contractions only.
//
// Bytes. B is the full tensor's byte size. For a step on axis a, the message b ("the full, unsharded
// message" of DESIGN.md §6 within one a-group) is
//     b = B / Π{ size(c) : c ≠ a, c splits some dim of the sharding before the step }
// i.e. the data the n devices of one a-group hold between them once a's own split is undone. Pending
// partial sums do not divide b. Bytes each device sends (ring algorithms, the bandwidth term of §6):
//     AllGather, ReduceScatter: (n−1)/n · b      AllReduce: 2(n−1)/n · b
//     AllToAll: (n−1)/n² · b                     LocalSlice: 0
// These are exact for even splits; an AllReduce whose b is not a multiple of n is rounded up.
//
// Worked example: X f32[8,1024,4096] (B = 128 MiB) on {dp=2, tp=4},
//   from [{dp},{},{tp}] partial{}   to [{tp},{},{dp}] partial{}   (swap dp and tp)
//   dim 0 wants tp but holds dp; dim 2 wants dp but holds tp: neither AllToAll is ready (rule 4).
//   Rule 5: gathering dp sends 1/2·(128/4) = 16 MiB, gathering tp sends 3/4·(128/2) = 48 MiB.
//     1. AllGather  dp dim 0       b = 32 MiB   send 16 MiB   → [{},{},{tp}]
//     2. AllToAll   tp dim 2 → 0   b = 128 MiB  send 24 MiB   → [{tp},{},{}]
//     3. LocalSlice dp dim 2       b = 32 MiB   send 0        → [{tp},{},{dp}]
//
// Stable error codes: reshard.partial_target, reshard.internal, plus sharding.* from validation.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/types.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"
#include "util/result.h"

namespace cfp {

enum class CollectiveKind : uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll, LocalSlice };

// "all-gather", "reduce-scatter", "all-reduce", "all-to-all", "local-slice"
std::string_view collectiveKindName(CollectiveKind kind);

struct CollectiveStep {
    CollectiveKind kind = CollectiveKind::LocalSlice;
    std::string axis;      // the mesh axis whose groups communicate
    int64_t axisSize = 1;  // n
    // AllGather: the dim losing the axis; ReduceScatter, LocalSlice: the dim gaining it;
    // AllToAll: the dim losing it; AllReduce: -1.
    int64_t dim = -1;
    int64_t toDim = -1;                // AllToAll only: the dim gaining the axis
    int64_t messageBytes = 0;          // b, see above
    int64_t sendBytesPerDevice = 0;    // ring volume each device sends
    TensorSharding before;
    TensorSharding after;

    // "all-gather x dim 0: b=134217728 send=117440512 [{x},{},{}] partial{} -> [{},{},{}] partial{}"
    std::string toString() const;
    bool operator==(const CollectiveStep&) const = default;
};

struct ReshardPlan {
    TensorSharding from;
    TensorSharding to;
    std::vector<CollectiveStep> steps;

    bool isNoCommunication() const;   // only local slices (or nothing)
    int64_t sendBytesPerDevice() const;  // sum over steps
    std::string toString() const;     // one step per line
};

// Plans from → to for a tensor of `type` on `mesh`. Both shardings are validated first.
Result<ReshardPlan> planReshard(const TensorSharding& from, const TensorSharding& to, const Mesh& mesh,
                                const TensorType& type);

// α-β ring time of one step on an axis of `axisSize` devices (DESIGN.md §6), with b =
// step.messageBytes and β = 1 / bytesPerSecond:
//   all-gather, reduce-scatter: (n−1)·α + (n−1)/n · b·β
//   all-reduce:                 2(n−1)·α + 2(n−1)/n · b·β
//   all-to-all:                 (n−1)·α + (n−1)/n² · b·β
//   local slice:                0
// `axisSize` is normally step.axisSize; a group of one device costs 0.
double collectiveSeconds(const CollectiveStep& step, int64_t axisSize, double alphaSeconds, double bytesPerSecond);

}  // namespace cfp
