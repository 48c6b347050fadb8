#pragma once
// Which combinations of a segment type the profiler measures. A type with at most
// CandidateLimits::maxCombinations combinations is profiled whole. A larger one (a layer with many
// blocks on a mesh with several axes easily has millions) is profiled on the combinations the
// search would consider: the cost model's fastest ones and its least-memory ones, found by a beam
// search over the type's blocks, since enumerating every combination is out of reach.
//
// The beam search, for one objective (predicted seconds, or memory bytes per device): start from
// combination 0; for every block in order, replace that block's strategy by each of its strategies
// in every combination of the beam, price the results with the work plan's cost model
// (SegmentCatalog::workPlan) and keep the `beamWidth` best; two sweeps over the blocks. Every
// combination priced on the way is a candidate; the `byTime` fastest and the `byMemory` smallest of
// them are selected (ties by the other objective, then by combination index). It is a heuristic:
// the combinations selected are the best the search saw, not necessarily the best of all, and the
// CandidateSet says how many of how many were priced and selected.
//
// Example: a 6-block layer on {x=4, y=8} with 12 strategies per block has 12^6 ≈ 3.0 M
// combinations; with beamWidth 16 about 2 × 6 × 16 × 12 ≈ 2,300 are priced and the 100 fastest plus
// the 20 least-memory of them (some in both) are profiled: "120 of 2985984".
//
// Results do not depend on thread count or hash order: everything is in stable orders.

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/work_plan.h"
#include "util/result.h"

namespace cfp::profiler {

struct CandidateLimits {
    int64_t maxCombinations = 100000;  // a type with more is profiled on a candidate set
    int byTime = 100;                  // the fastest by the cost model
    int byMemory = 20;                 // the least memory per device
    int beamWidth = 16;
    int sweeps = 2;
};

struct CandidateSet {
    int type = 0;
    int64_t combinations = 0;          // of the type
    bool complete = true;              // every combination (combinations ≤ maxCombinations)
    std::vector<int64_t> indices;      // combination indices (SegmentCatalog::combination), in profiling order
    int64_t priced = 0;                // work plans priced to choose them (0 when complete)
    int fastest = 0, leastMemory = 0;  // how many were selected for each reason (some for both)

    int64_t count() const { return static_cast<int64_t>(indices.size()); }
    // "" when complete, else "120 of 2985984 combinations: the 100 fastest and 20 least-memory by the
    // cost model (2304 priced)".
    std::string describe() const;
};

// The combinations of `type` to profile. Complete types list 0…n−1 in order; candidate sets are
// ordered by predicted time (fastest first). Errors: profiler.bad_config (type out of range, limits below 1),
// work plan errors.
Result<CandidateSet> selectCandidates(const SegmentCatalog& catalog, int type, const CandidateLimits& limits = {});

}  // namespace cfp::profiler
