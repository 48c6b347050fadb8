#include "segments/search_space.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace cfp {

namespace {

// log10(10^a + 10^b) without leaving the log domain; −inf is the empty sum.
double log10Add(double a, double b) {
    if (std::isinf(a) && a < 0) return b;
    if (std::isinf(b) && b < 0) return a;
    const double hi = std::max(a, b), lo = std::min(a, b);
    return hi + std::log10(1.0 + std::pow(10.0, lo - hi));
}

}  // namespace

Result<SearchSpaceReport> searchSpaceReport(std::span<const int64_t> opStrategyCounts, std::span<const BlockView> blocks,
                                            const SegmentCover& cover) {
    SearchSpaceReport r;
    r.ops = static_cast<int64_t>(opStrategyCounts.size());
    r.blocks = static_cast<int64_t>(blocks.size());
    r.segments = static_cast<int64_t>(cover.segments.size());
    for (size_t i = 0; i < opStrategyCounts.size(); ++i) {
        if (opStrategyCounts[i] < 1)
            return makeError("segments.bad_strategy_count",
                             "op strategy count " + std::to_string(opStrategyCounts[i]) + " is below 1",
                             "ops/" + std::to_string(i));
        r.opLevelLog10 += std::log10(static_cast<double>(opStrategyCounts[i]));
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
        if (blocks[b].strategyCount < 1)
            return makeError("segments.bad_strategy_count",
                             "block strategy count " + std::to_string(blocks[b].strategyCount) + " is below 1",
                             "blocks/" + std::to_string(b));
        r.strategiesPerBlock.push_back(blocks[b].strategyCount);
        r.blockLevelLog10 += std::log10(static_cast<double>(blocks[b].strategyCount));
    }

    // Per segment: log10 of its combinations, from the blocks it covers.
    constexpr double kNegInf = -std::numeric_limits<double>::infinity();
    std::vector<double> segLog;
    r.types.resize(cover.types.size());
    std::vector<char> typeSeen(cover.types.size(), 0);
    for (size_t i = 0; i < cover.segments.size(); ++i) {
        const Segment& s = cover.segments[i];
        if (s.type < 0 || static_cast<size_t>(s.type) >= cover.types.size() || s.firstBlock < 0 || s.blockCount < 1 ||
            static_cast<size_t>(s.firstBlock) + static_cast<size_t>(s.blockCount) > blocks.size())
            return makeError("segments.bad_cover", "segment outside the block sequence or of an unknown type",
                             "segments/" + std::to_string(i));
        double lg = 0.0;
        int64_t combos = 1;
        for (int q = 0; q < s.blockCount; ++q) {
            const int64_t c = blocks[static_cast<size_t>(s.firstBlock + q)].strategyCount;
            lg += std::log10(static_cast<double>(c));
            combos = combos > std::numeric_limits<int64_t>::max() / c ? std::numeric_limits<int64_t>::max() : combos * c;
        }
        segLog.push_back(lg);
        SegmentTypeSpace& t = r.types[static_cast<size_t>(s.type)];
        t.occurrences++;
        if (!typeSeen[static_cast<size_t>(s.type)]) {
            typeSeen[static_cast<size_t>(s.type)] = 1;
            t.type = s.type;
            t.blocks = s.blockCount;
            t.combinations = combos;
            t.combinationsLog10 = lg;
        }
    }

    double profiled = kNegInf, states = kNegInf, transitions = kNegInf;
    for (const SegmentTypeSpace& t : r.types) {
        r.segmentLevelLog10 += t.combinationsLog10;
        profiled = log10Add(profiled, t.combinationsLog10);
    }
    for (size_t i = 0; i < segLog.size(); ++i) {
        states = log10Add(states, segLog[i]);
        if (i + 1 < segLog.size()) transitions = log10Add(transitions, segLog[i] + segLog[i + 1]);
    }
    r.profiledCombinationsLog10 = std::isinf(profiled) ? 0.0 : profiled;
    r.dpStatesLog10 = std::isinf(states) ? 0.0 : states;
    r.dpTransitionsLog10 = std::isinf(transitions) ? 0.0 : transitions;
    return r;
}

}  // namespace cfp
