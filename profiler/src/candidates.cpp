#include "profiler/candidates.h"

#include <algorithm>
#include <map>
#include <set>

namespace cfp::profiler {

namespace {

struct Priced {
    int64_t index = 0;
    double seconds = 0;
    int64_t memoryBytes = 0;
};

bool fasterThan(const Priced& a, const Priced& b) {
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    if (a.memoryBytes != b.memoryBytes) return a.memoryBytes < b.memoryBytes;
    return a.index < b.index;
}

bool smallerThan(const Priced& a, const Priced& b) {
    if (a.memoryBytes != b.memoryBytes) return a.memoryBytes < b.memoryBytes;
    if (a.seconds != b.seconds) return a.seconds < b.seconds;
    return a.index < b.index;
}

}  // namespace

std::string CandidateSet::describe() const {
    if (complete) return {};
    return std::to_string(count()) + " of " + std::to_string(combinations) + " combinations: the " + std::to_string(fastest) +
           " fastest and " + std::to_string(leastMemory) + " least-memory by the cost model (" + std::to_string(priced) + " priced)";
}

Result<CandidateSet> selectCandidates(const SegmentCatalog& catalog, int type, const CandidateLimits& limits) {
    if (type < 0 || static_cast<size_t>(type) >= catalog.types().size())
        return makeError("profiler.bad_config", "no segment type T" + std::to_string(type));
    if (limits.maxCombinations < 1 || limits.byTime < 1 || limits.byMemory < 0 || limits.beamWidth < 1 || limits.sweeps < 1)
        return makeError("profiler.bad_config", "candidate limits must be at least 1 (byMemory at least 0)");
    const SegmentCatalog::TypeInfo& info = catalog.types()[static_cast<size_t>(type)];
    CandidateSet out;
    out.type = type;
    out.combinations = info.combinations;
    if (info.combinations <= limits.maxCombinations) {
        out.indices.resize(static_cast<size_t>(info.combinations));
        for (int64_t i = 0; i < info.combinations; ++i) out.indices[static_cast<size_t>(i)] = i;
        return out;
    }
    out.complete = false;

    // Mixed radix, the first block most significant (SegmentCatalog::combination).
    const std::vector<int>& counts = info.strategyCounts;
    auto indexOf = [&](const std::vector<int32_t>& c) {
        int64_t index = 0;
        for (size_t b = 0; b < counts.size(); ++b) index = index * counts[b] + c[b];
        return index;
    };
    std::map<int64_t, Priced> priced;
    auto price = [&](const std::vector<int32_t>& c) -> Result<Priced> {
        const int64_t index = indexOf(c);
        if (auto it = priced.find(index); it != priced.end()) return it->second;
        auto work = catalog.workPlan(type, c);
        if (!work) return work.error();
        Priced p{index, work->predictedSeconds, work->memoryBytes()};
        priced.emplace(index, p);
        return p;
    };

    auto beamSearch = [&](bool (*better)(const Priced&, const Priced&)) -> Status {
        std::vector<std::vector<int32_t>> beam{std::vector<int32_t>(counts.size(), 0)};
        for (int sweep = 0; sweep < limits.sweeps; ++sweep)
            for (size_t b = 0; b < counts.size(); ++b) {
                std::vector<std::pair<Priced, std::vector<int32_t>>> next;
                std::set<int64_t> seen;
                for (const auto& base : beam)
                    for (int32_t s = 0; s < counts[b]; ++s) {
                        std::vector<int32_t> c = base;
                        c[b] = s;
                        auto p = price(c);
                        if (!p) return p.error();
                        if (seen.insert(p->index).second) next.emplace_back(*p, std::move(c));
                    }
                std::sort(next.begin(), next.end(), [&](const auto& x, const auto& y) { return better(x.first, y.first); });
                if (next.size() > static_cast<size_t>(limits.beamWidth)) next.resize(static_cast<size_t>(limits.beamWidth));
                beam.clear();
                for (auto& n : next) beam.push_back(std::move(n.second));
            }
        return {};
    };
    CFP_TRY(beamSearch(&fasterThan));
    if (limits.byMemory > 0) CFP_TRY(beamSearch(&smallerThan));
    out.priced = static_cast<int64_t>(priced.size());

    std::vector<Priced> all;
    all.reserve(priced.size());
    for (const auto& [index, p] : priced) all.push_back(p);
    std::vector<Priced> chosen;
    std::set<int64_t> taken;
    std::sort(all.begin(), all.end(), smallerThan);
    for (size_t i = 0; i < all.size() && out.leastMemory < limits.byMemory; ++i, ++out.leastMemory)
        if (taken.insert(all[i].index).second) chosen.push_back(all[i]);
    std::sort(all.begin(), all.end(), fasterThan);
    for (size_t i = 0; i < all.size() && out.fastest < limits.byTime; ++i, ++out.fastest)
        if (taken.insert(all[i].index).second) chosen.push_back(all[i]);
    // Fastest first, so that early abandonment has a good reference from the start.
    std::sort(chosen.begin(), chosen.end(), fasterThan);
    for (const Priced& p : chosen) out.indices.push_back(p.index);
    return out;
}

}  // namespace cfp::profiler
