#pragma once
// Search-space report: how much CFP's two structural facts shrink the plan search.
//
// All sizes are log10 sums, so nothing overflows (a GPT-3 175B step has ~10^5 ops; its op-level
// space is ~10^40000):
//   op level       Σ over ops of log10(strategies of the op)            (every op chosen freely)
//   block level    Σ over blocks of log10(strategyCount)                (one choice per block)
//   segment level  Σ over distinct segment types of log10(combinations) (the per-type spaces, each
//                  profiled once; for one layer type of 4 blocks × 3 strategies: log10 81)
// plus what the work actually is:
//   profiled combinations   Σ over types of combinations: one profiling run each
//   DP states               Σ over segments (repeats included) of combinations
//   DP transitions          Σ over consecutive segment pairs of combinations_i × combinations_{i+1}
//
//   4 blocks × 3 strategies repeated 96 times, one segment type:
//   block level 384·log10 3 ≈ 183.2, segment level log10 81 ≈ 1.908, 81 profiled combinations,
//   DP states 96·81 = 7776, DP transitions 95·81² = 623295.

#include <cstdint>
#include <span>
#include <vector>

#include "segments/block_view.h"
#include "segments/segments.h"

namespace cfp {

struct SegmentTypeSpace {
    int type = 0;
    int blocks = 0;
    int occurrences = 0;
    int64_t combinations = 1;        // saturating at INT64_MAX
    double combinationsLog10 = 0.0;
};

struct SearchSpaceReport {
    int64_t ops = 0;
    int64_t blocks = 0;
    int64_t segments = 0;
    double opLevelLog10 = 0.0;
    double blockLevelLog10 = 0.0;
    double segmentLevelLog10 = 0.0;
    double profiledCombinationsLog10 = 0.0;  // log10 Σ over types of combinations
    double dpStatesLog10 = 0.0;              // log10 Σ over segments of combinations
    double dpTransitionsLog10 = 0.0;         // log10 Σ over consecutive pairs (−inf-free: 0 segments → 0)
    std::vector<int64_t> strategiesPerBlock;
    std::vector<SegmentTypeSpace> types;
};

// `opStrategyCounts` has one entry (≥ 1) per op of the graph. Errors: "segments.bad_strategy_count"
// (an entry below 1, at "ops/<i>" or "blocks/<i>"), "segments.bad_cover" (a segment outside the
// block sequence or with an unknown type).
Result<SearchSpaceReport> searchSpaceReport(std::span<const int64_t> opStrategyCounts, std::span<const BlockView> blocks,
                                            const SegmentCover& cover);

}  // namespace cfp
