#include "segments/segments.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace cfp {

namespace {

constexpr int64_t kSat = std::numeric_limits<int64_t>::max();

int64_t satMul(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if (a > kSat / b) return kSat;
    return a * b;
}

int64_t satAdd(int64_t a, int64_t b) { return a > kSat - b ? kSat : a + b; }

// A distinct window (a candidate segment type).
struct Candidate {
    int length = 0;
    int firstStart = 0;
    int64_t combinations = 1;
    std::vector<uint64_t> symbols;  // bitset over distinct single-block keys
    std::vector<int> starts;        // every position where the window occurs
    bool repeats = false;           // occurs twice without overlap (always true for single blocks)
};

// Hash of the edges between blocks of window [start, start+length), by position in the window.
uint64_t windowEdgeHash(std::span<const BlockSignature> blocks, int start, int length) {
    Fnv1a64 h;
    for (int q = 0; q < length; ++q) {
        for (const CrossBlockEdge& e : blocks[static_cast<size_t>(start + q)].incoming) {
            int producer = q + e.offset;
            if (producer < 0 || producer >= length) continue;
            h.i64(q);
            h.i64(producer);
            h.i64(e.producerMember);
            h.i64(e.consumerMember);
            h.i64(e.operandSlot);
        }
    }
    return h.value();
}

struct Windows {
    int n = 0;
    int maxLen = 0;
    std::vector<int> keyAt;  // [start * maxLen + length - 1] → candidate id, -1 past the end
    std::vector<Candidate> cands;
    int symbolCount = 0;
    std::vector<int> symbolOfCand;  // single-block candidates → dense symbol index, else -1

    int key(int start, int length) const { return keyAt[static_cast<size_t>(start * maxLen + length - 1)]; }
};

Windows internWindows(std::span<const BlockSignature> blocks, int maxWindow) {
    Windows w;
    w.n = static_cast<int>(blocks.size());
    w.maxLen = std::max(1, std::min(maxWindow, w.n));
    w.keyAt.assign(static_cast<size_t>(w.n) * static_cast<size_t>(w.maxLen), -1);
    std::map<std::vector<uint64_t>, int> ids;
    std::vector<uint64_t> key;
    for (int i = 0; i < w.n; ++i) {
        key.clear();
        for (int l = 1; l <= w.maxLen && i + l <= w.n; ++l) {
            const BlockSignature& b = blocks[static_cast<size_t>(i + l - 1)];
            key.push_back(b.fingerprint);
            key.push_back(static_cast<uint64_t>(b.strategyCount));
            std::vector<uint64_t> full = key;
            full.push_back(windowEdgeHash(blocks, i, l));
            auto [it, inserted] = ids.try_emplace(std::move(full), static_cast<int>(w.cands.size()));
            if (inserted) {
                Candidate c;
                c.length = l;
                c.firstStart = i;
                for (int q = 0; q < l; ++q)
                    c.combinations = satMul(c.combinations, blocks[static_cast<size_t>(i + q)].strategyCount);
                w.cands.push_back(std::move(c));
            }
            w.cands[static_cast<size_t>(it->second)].starts.push_back(i);
            w.keyAt[static_cast<size_t>(i * w.maxLen + l - 1)] = it->second;
        }
    }
    // Symbols: the distinct single-block windows.
    w.symbolOfCand.assign(w.cands.size(), -1);
    for (size_t c = 0; c < w.cands.size(); ++c)
        if (w.cands[c].length == 1) w.symbolOfCand[c] = w.symbolCount++;
    const size_t words = (static_cast<size_t>(w.symbolCount) + 63) / 64;
    for (Candidate& c : w.cands) {
        c.symbols.assign(words, 0);
        for (int q = 0; q < c.length; ++q) {
            auto s = static_cast<size_t>(w.symbolOfCand[static_cast<size_t>(w.key(c.firstStart + q, 1))]);
            c.symbols[s / 64] |= uint64_t{1} << (s % 64);
        }
        if (c.length == 1) {
            c.repeats = true;
        } else {
            int count = 0, freeFrom = 0;
            for (int s : c.starts)
                if (s >= freeFrom) {
                    ++count;
                    freeFrom = s + c.length;
                }
            c.repeats = count >= 2;
        }
    }
    return w;
}

// Uses of the multi-block types of a type set, two bits each: 0 unused, 1 used once inside,
// 2 used once as the first or the last segment, 3 used at least twice. A state is accepted when
// every multi-block type is used, none is a one-off inside, and one-offs at the ends come with at
// least one repeated multi-block type (the head and tail of a stack of repeated layers).
struct Uses {
    Uses(const Windows& w, const std::vector<int>& set) : index(set.size(), -1) {
        for (size_t i = 0; i < set.size(); ++i)
            if (w.cands[static_cast<size_t>(set[i])].length > 1) index[i] = m++;
        for (int j = 0; j < m; ++j) {
            ones |= uint64_t{1} << (2 * j);
        }
    }
    // State after using set[i] as the segment [start, end) of a sequence of n blocks.
    uint64_t bump(uint64_t s, size_t i, int start, int end, int n) const {
        if (index[i] < 0) return s;
        const int shift = 2 * index[i];
        const uint64_t field = (s >> shift) & 3U;
        const uint64_t next = field != 0 ? 3 : (start == 0 || end == n) ? 2 : 1;
        return (s & ~(uint64_t{3} << shift)) | (next << shift);
    }
    bool accept(uint64_t s) const {
        const uint64_t low = s & ones, high = (s >> 1) & ones;  // per field: bit 0 and bit 1
        if ((low | high) != ones) return false;                  // some type unused
        if ((low & ~high & ones) != 0) return false;             // a one-off inside (field 1)
        const bool edgeOneOff = (high & ~low & ones) != 0;       // field 2
        const bool repeated = (high & low & ones) != 0;          // field 3
        return !edgeOneOff || repeated;
    }
    std::vector<int> index;
    int m = 0;
    uint64_t ones = 0;
};

// A cover as the sequence of (start, candidate) pairs.
struct Partition {
    std::vector<std::pair<int, int>> segments;
};

class CoverSearch {
public:
    // `cutAllowed` (n + 1 entries, or null for every position): where a segment may end, i.e. the
    // positions a cover may cut the sequence at. The layer-aligned search passes the positions
    // that do not split a layer.
    CoverSearch(const Windows& w, int64_t workLimit, const std::vector<char>* cutAllowed = nullptr)
        : m_w(w), m_limit(workLimit), m_cutAllowed(cutAllowed) {}

    bool exhausted() const { return m_exhausted; }
    int64_t work() const { return m_work; }

    // Iterative deepening; returns the best type sets found at the first feasible level (from
    // `minLevel` on, up to `maxLevel` types when positive).
    std::vector<std::vector<int>> run(std::vector<int> forced, int& levelOut, int minLevel = 0, int maxLevel = 0) {
        std::sort(forced.begin(), forced.end());
        const int k0 = std::max(minLevel, static_cast<int>(forced.size()) +
                                              (static_cast<int>(forced.size()) < m_w.symbolCount ? 1 : 0));
        const int kMax = maxLevel > 0 ? std::min(maxLevel, m_w.symbolCount) : m_w.symbolCount;
        for (int k = k0; k <= kMax; ++k) {
            m_level = k;
            m_visited.clear();
            dfs(forced);
            if (!m_best.empty() || m_exhausted) {
                levelOut = k;
                return m_best;
            }
        }
        levelOut = kMax;
        return m_best;
    }

    // Whether a segment may end at position q.
    bool cutOk(int q) const { return m_cutAllowed == nullptr || (*m_cutAllowed)[static_cast<size_t>(q)] != 0; }

    // Forward reachability over (position, uses of each multi-block type). Fills `states` when
    // given. Returns whether some state at n is accepted (see Uses).
    bool countsFeasible(const std::vector<int>& set, std::vector<std::vector<uint64_t>>* statesOut) {
        const Uses uses(m_w, set);
        if (uses.m > 32) {  // two bits per type in a 64-bit state
            m_exhausted = true;
            return false;
        }
        std::vector<std::vector<uint64_t>> states(static_cast<size_t>(m_w.n) + 1);
        states[0].push_back(0);
        for (int p = 0; p <= m_w.n; ++p) {
            auto& here = states[static_cast<size_t>(p)];
            std::sort(here.begin(), here.end());
            here.erase(std::unique(here.begin(), here.end()), here.end());
            if (p == m_w.n) break;
            m_work += static_cast<int64_t>(here.size() * set.size()) + 1;
            if (here.empty()) continue;
            for (size_t i = 0; i < set.size(); ++i) {
                const Candidate& c = m_w.cands[static_cast<size_t>(set[i])];
                if (p + c.length > m_w.n || m_w.key(p, c.length) != set[i] || !cutOk(p + c.length)) continue;
                auto& there = states[static_cast<size_t>(p + c.length)];
                for (uint64_t s : here) there.push_back(uses.bump(s, i, p, p + c.length, m_w.n));
            }
        }
        const auto& last = states[static_cast<size_t>(m_w.n)];
        const bool ok = std::any_of(last.begin(), last.end(), [&](uint64_t s) { return uses.accept(s); });
        if (statesOut) *statesOut = std::move(states);
        return ok;
    }

    // The cover using exactly the types of `set` under the repeat rule with the fewest segments,
    // then the lexicographically smallest boundaries.
    Partition bestPartition(const std::vector<int>& set) {
        std::vector<std::vector<uint64_t>> states;
        countsFeasible(set, &states);
        const Uses uses(m_w, set);
        constexpr int kInf = std::numeric_limits<int>::max();
        // f[p][j]: fewest segments from (p, states[p][j]) to an accepted state at n.
        std::vector<std::vector<int>> f(states.size());
        auto lookup = [&](int p, uint64_t s) {
            const auto& v = states[static_cast<size_t>(p)];
            auto it = std::lower_bound(v.begin(), v.end(), s);
            if (it == v.end() || *it != s) return kInf;
            return f[static_cast<size_t>(p)][static_cast<size_t>(it - v.begin())];
        };
        for (int p = m_w.n; p >= 0; --p) {
            const auto& here = states[static_cast<size_t>(p)];
            auto& fp = f[static_cast<size_t>(p)];
            fp.assign(here.size(), kInf);
            for (size_t j = 0; j < here.size(); ++j) {
                if (p == m_w.n) {
                    fp[j] = uses.accept(here[j]) ? 0 : kInf;
                    continue;
                }
                for (size_t i = 0; i < set.size(); ++i) {
                    const Candidate& c = m_w.cands[static_cast<size_t>(set[i])];
                    if (p + c.length > m_w.n || m_w.key(p, c.length) != set[i] || !cutOk(p + c.length)) continue;
                    int rest = lookup(p + c.length, uses.bump(here[j], i, p, p + c.length, m_w.n));
                    if (rest != kInf) fp[j] = std::min(fp[j], rest + 1);
                }
            }
        }
        Partition out;
        int p = 0;
        uint64_t s = 0;
        while (p < m_w.n) {
            const int want = lookup(p, s) - 1;
            int pickLen = kInf;
            size_t pick = 0;
            for (size_t i = 0; i < set.size(); ++i) {
                const Candidate& c = m_w.cands[static_cast<size_t>(set[i])];
                if (p + c.length > m_w.n || m_w.key(p, c.length) != set[i] || !cutOk(p + c.length)) continue;
                if (lookup(p + c.length, uses.bump(s, i, p, p + c.length, m_w.n)) == want && c.length < pickLen) {
                    pickLen = c.length;
                    pick = i;
                }
            }
            out.segments.emplace_back(p, set[pick]);
            s = uses.bump(s, pick, p, p + pickLen, m_w.n);
            p += pickLen;
        }
        return out;
    }

private:
    std::pair<int64_t, int64_t> cost(const std::vector<int>& set) const {
        int64_t combos = 0, blocks = 0;
        for (int c : set) {
            combos = satAdd(combos, m_w.cands[static_cast<size_t>(c)].combinations);
            blocks += m_w.cands[static_cast<size_t>(c)].length;
        }
        return {combos, blocks};
    }

    void dfs(const std::vector<int>& set) {
        if (m_exhausted) return;
        if (m_work > m_limit) {
            m_exhausted = true;
            return;
        }
        if (!m_visited.insert(set).second) return;
        const auto c = cost(set);
        const bool leaf = static_cast<int>(set.size()) == m_level;
        if (!m_best.empty() && (leaf ? c > m_bestCost : c >= m_bestCost)) return;  // children cost more
        if (leaf) {
            if (plainReach(set)[static_cast<size_t>(m_w.n)] && countsFeasible(set, nullptr)) {
                if (m_best.empty() || c < m_bestCost) m_best.clear();
                m_bestCost = c;
                m_best.push_back(set);
            }
            return;
        }
        const std::vector<char> reach = plainReach(set);
        const size_t words = (static_cast<size_t>(m_w.symbolCount) + 63) / 64;
        std::vector<uint64_t> have(words, 0), all(words, 0);
        for (int c2 : set)
            for (size_t i = 0; i < words; ++i) have[i] |= m_w.cands[static_cast<size_t>(c2)].symbols[i];
        for (int s = 0; s < m_w.symbolCount; ++s) all[static_cast<size_t>(s) / 64] |= uint64_t{1} << (s % 64);
        const bool lastSlot = static_cast<int>(set.size()) + 1 == m_level;

        std::vector<int> next;
        for (int p = 0; p < m_w.n; ++p) {
            if (!reach[static_cast<size_t>(p)]) continue;
            m_work += m_w.maxLen;
            for (int l = 1; l <= m_w.maxLen && p + l <= m_w.n; ++l) {
                if (!cutOk(p + l)) continue;
                const int id = m_w.key(p, l);
                const Candidate& cand = m_w.cands[static_cast<size_t>(id)];
                // A window that does not repeat can only be the first or the last segment.
                const bool atEnd = p == 0 || p + l == m_w.n;
                if ((!cand.repeats && !atEnd) || std::binary_search(set.begin(), set.end(), id)) continue;
                if (lastSlot) {
                    bool covers = true;
                    for (size_t i = 0; i < words && covers; ++i) covers = (have[i] | cand.symbols[i]) == all[i];
                    if (!covers) continue;
                }
                next.push_back(id);
            }
        }
        std::sort(next.begin(), next.end(), [&](int a, int b) {
            const Candidate& ca = m_w.cands[static_cast<size_t>(a)];
            const Candidate& cb = m_w.cands[static_cast<size_t>(b)];
            return std::tie(ca.combinations, ca.length, a) < std::tie(cb.combinations, cb.length, b);
        });
        next.erase(std::unique(next.begin(), next.end()), next.end());
        for (int id : next) {
            std::vector<int> child = set;
            child.insert(std::upper_bound(child.begin(), child.end(), id), id);
            dfs(child);
            if (m_exhausted) return;
        }
    }

    std::vector<char> plainReach(const std::vector<int>& set) {
        std::vector<char> reach(static_cast<size_t>(m_w.n) + 1, 0);
        reach[0] = 1;
        m_work += static_cast<int64_t>(m_w.n) * static_cast<int64_t>(set.size()) + 1;
        for (int p = 0; p < m_w.n; ++p) {
            if (!reach[static_cast<size_t>(p)]) continue;
            for (int id : set) {
                const int l = m_w.cands[static_cast<size_t>(id)].length;
                if (p + l <= m_w.n && m_w.key(p, l) == id && cutOk(p + l)) reach[static_cast<size_t>(p + l)] = 1;
            }
        }
        return reach;
    }

    const Windows& m_w;
    int64_t m_limit;
    const std::vector<char>* m_cutAllowed = nullptr;
    int64_t m_work = 0;
    bool m_exhausted = false;
    int m_level = 0;
    std::set<std::vector<int>> m_visited;
    std::vector<std::vector<int>> m_best;
    std::pair<int64_t, int64_t> m_bestCost{kSat, 0};
};

SegmentCover buildCover(std::span<const BlockSignature> blocks, const Windows& w, const Partition& part) {
    SegmentCover cover;
    std::map<int, int> typeOfCand;
    for (const auto& [start, cand] : part.segments) {
        auto [it, inserted] = typeOfCand.try_emplace(cand, static_cast<int>(cover.types.size()));
        if (inserted) {
            SegmentType t;
            t.id = it->second;
            const Candidate& c = w.cands[static_cast<size_t>(cand)];
            for (int q = 0; q < c.length; ++q) {
                const BlockSignature& b = blocks[static_cast<size_t>(start + q)];
                t.blockFingerprints.push_back(b.fingerprint);
                t.strategyCounts.push_back(b.strategyCount);
                t.combinations = satMul(t.combinations, b.strategyCount);
                t.combinationsLog10 += std::log10(static_cast<double>(b.strategyCount));
            }
            t.firstSegment = static_cast<int>(cover.segments.size());
            cover.types.push_back(std::move(t));
        }
        cover.types[static_cast<size_t>(it->second)].occurrences++;
        cover.segments.push_back(Segment{it->second, start, w.cands[static_cast<size_t>(cand)].length});
    }
    return cover;
}

// Fallback when the search runs out of work: the longest tandem run of one window (period p ≤
// maxLen, repeated at least twice) as one type, every other block a singleton.
Partition periodicFallback(const Windows& w) {
    int bestStart = 0, bestLen = 0, bestCount = 0;
    for (int len = 2; len <= w.maxLen; ++len) {
        for (int start = 0; start + 2 * len <= w.n; ++start) {
            const int id = w.key(start, len);
            int count = 1;
            while (start + (count + 1) * len <= w.n && w.key(start + count * len, len) == id) ++count;
            if (count >= 2 && count * len > bestCount * bestLen) {
                bestStart = start;
                bestLen = len;
                bestCount = count;
            }
        }
    }
    Partition out;
    if (bestCount < 2) return out;
    for (int p = 0; p < bestStart; ++p) out.segments.emplace_back(p, w.key(p, 1));
    for (int r = 0; r < bestCount; ++r) out.segments.emplace_back(bestStart + r * bestLen, w.key(bestStart, bestLen));
    for (int p = bestStart + bestCount * bestLen; p < w.n; ++p) out.segments.emplace_back(p, w.key(p, 1));
    return out;
}

// Where a cover may cut the block sequence without splitting a model layer: position q (a segment
// boundary between blocks q-1 and q) is allowed unless blocks of one non-empty layer lie on both
// sides of it. Positions 0 and n are always allowed. Empty when no block has a layer.
std::vector<char> layerCuts(std::span<const BlockSignature> blocks) {
    const int n = static_cast<int>(blocks.size());
    std::map<std::string_view, std::pair<int, int>> span;  // layer -> first and last block
    for (int b = 0; b < n; ++b) {
        const std::string& layer = blocks[static_cast<size_t>(b)].layer;
        if (layer.empty()) continue;
        auto [it, inserted] = span.try_emplace(layer, b, b);
        if (!inserted) it->second.second = b;
    }
    if (span.empty()) return {};
    std::vector<int> delta(static_cast<size_t>(n) + 2, 0);  // cuts first+1..last are inside the layer
    for (const auto& [layer, fl] : span) {
        if (fl.first == fl.second) continue;
        ++delta[static_cast<size_t>(fl.first) + 1];
        --delta[static_cast<size_t>(fl.second) + 1];
    }
    std::vector<char> allowed(static_cast<size_t>(n) + 1, 1);
    int inside = 0;
    for (int q = 0; q <= n; ++q) {
        inside += delta[static_cast<size_t>(q)];
        allowed[static_cast<size_t>(q)] = inside == 0 ? 1 : 0;
    }
    return allowed;
}

bool respects(const Partition& p, const std::vector<char>& cuts) {
    return std::all_of(p.segments.begin(), p.segments.end(),
                       [&](const std::pair<int, int>& seg) { return cuts[static_cast<size_t>(seg.first)] != 0; });
}

bool better(const Partition& a, const Partition& b, const Windows& w) {
    if (a.segments.size() != b.segments.size()) return a.segments.size() < b.segments.size();
    for (size_t i = 0; i < a.segments.size(); ++i) {
        const int la = w.cands[static_cast<size_t>(a.segments[i].second)].length;
        const int lb = w.cands[static_cast<size_t>(b.segments[i].second)].length;
        if (la != lb) return la < lb;
    }
    return false;
}

}  // namespace

std::string_view coverQualityName(CoverQuality q) {
    switch (q) {
        case CoverQuality::Optimal: return "optimal";
        case CoverQuality::TypeCountOptimal: return "type_count_optimal";
        case CoverQuality::Fallback: return "fallback";
    }
    return "unknown";
}

Result<SegmentCover> computeSegmentCover(std::span<const BlockSignature> blocks, const CoverOptions& options) {
    if (options.maxWindowBlocks < 1)
        return makeError("segments.bad_option", "maxWindowBlocks must be at least 1, got " +
                                                    std::to_string(options.maxWindowBlocks),
                         "maxWindowBlocks");
    for (size_t b = 0; b < blocks.size(); ++b)
        if (blocks[b].strategyCount < 1)
            return makeError("segments.bad_block",
                             "strategy count " + std::to_string(blocks[b].strategyCount) + " is below 1",
                             "blocks/" + std::to_string(b));
    if (blocks.empty()) return SegmentCover{};

    const Windows w = internWindows(blocks, options.maxWindowBlocks);
    // Blocks whose structure occurs once can only be singleton types.
    // A block whose structure occurs once, too far from both ends to be in a head or tail window,
    // can only be a singleton type.
    std::vector<int> forced;
    for (size_t c = 0; c < w.cands.size(); ++c) {
        const Candidate& cand = w.cands[c];
        if (cand.length == 1 && cand.starts.size() == 1 && cand.starts[0] >= w.maxLen &&
            cand.starts[0] < w.n - w.maxLen)
            forced.push_back(static_cast<int>(c));
    }

    Partition singletons;
    for (int p = 0; p < w.n; ++p) singletons.segments.emplace_back(p, w.key(p, 1));
    // Without any repeating multi-block window, no admissible cover groups blocks: the singleton
    // cover is the only one (and the search would climb through every level to find it).
    const bool anyRepeat = std::any_of(w.cands.begin(), w.cands.end(),
                                       [](const Candidate& c) { return c.length > 1 && c.repeats; });
    if (!anyRepeat) {
        SegmentCover cover = buildCover(blocks, w, singletons);
        cover.quality = CoverQuality::Optimal;
        return cover;
    }

    CoverSearch search(w, options.searchWorkLimit);
    int64_t work = 0;  // of the layer-aligned search
    int level = 0;
    const std::vector<std::vector<int>> sets = search.run(forced, level);

    SegmentCover cover;
    if (sets.empty()) {
        Partition fallback = periodicFallback(w);
        cover = buildCover(blocks, w, fallback.segments.empty() ? singletons : fallback);
        if (cover.types.size() > static_cast<size_t>(w.symbolCount)) cover = buildCover(blocks, w, singletons);
        cover.quality = CoverQuality::Fallback;
    } else {
        auto bestOf = [&](CoverSearch& s, const std::vector<std::vector<int>>& candidates) {
            Partition best;
            bool have = false;
            for (const auto& set : candidates) {
                Partition p = s.bestPartition(set);
                if (!have || better(p, best, w)) {
                    best = std::move(p);
                    have = true;
                }
            }
            return best;
        };
        Partition best = bestOf(search, sets);
        bool exhausted = search.exhausted();
        // Criterion 2: where the best cover splits a model layer, the cover with as many types
        // that splits none (if any) wins; criteria 3-6 then choose among those.
        const std::vector<char> cuts = layerCuts(blocks);
        if (!cuts.empty() && !respects(best, cuts)) {
            CoverSearch aligned(w, options.searchWorkLimit, &cuts);
            int alignedLevel = 0;
            const std::vector<std::vector<int>> alignedSets = aligned.run(forced, alignedLevel, level, level);
            if (!alignedSets.empty()) {
                best = bestOf(aligned, alignedSets);
                exhausted = aligned.exhausted();
            } else if (aligned.exhausted()) {
                exhausted = true;  // an aligned cover may exist: criterion 2 is not proven
            }
            work += aligned.work();
        }
        cover = buildCover(blocks, w, best);
        cover.quality = exhausted ? CoverQuality::TypeCountOptimal : CoverQuality::Optimal;
    }
    cover.searchWork = search.work() + work;
    return cover;
}

Result<SegmentCover> computeSegmentCover(std::span<const uint64_t> fingerprints, std::span<const int64_t> strategyCounts,
                                         const CoverOptions& options) {
    if (!strategyCounts.empty() && strategyCounts.size() != fingerprints.size())
        return makeError("segments.bad_option",
                         "got " + std::to_string(strategyCounts.size()) + " strategy counts for " +
                             std::to_string(fingerprints.size()) + " blocks",
                         "strategyCounts");
    std::vector<BlockSignature> sigs(fingerprints.size());
    for (size_t i = 0; i < sigs.size(); ++i) {
        sigs[i].fingerprint = fingerprints[i];
        sigs[i].strategyCount = strategyCounts.empty() ? 1 : strategyCounts[i];
    }
    return computeSegmentCover(std::span<const BlockSignature>(sigs), options);
}

std::vector<RepeatRun> repeatRuns(const SegmentCover& cover) {
    std::vector<RepeatRun> runs;
    for (size_t i = 0; i < cover.segments.size(); ++i) {
        const Segment& s = cover.segments[i];
        if (!runs.empty() && runs.back().type == s.type) {
            runs.back().count++;
            continue;
        }
        runs.push_back(RepeatRun{s.type, 1, static_cast<int>(i), s.firstBlock});
    }
    return runs;
}

std::string describeCover(const SegmentCover& cover) {
    std::string out;
    for (const RepeatRun& r : repeatRuns(cover)) {
        if (!out.empty()) out += ", ";
        const size_t blocks = cover.types[static_cast<size_t>(r.type)].blockFingerprints.size();
        out += "T" + std::to_string(r.type) + "[" + std::to_string(blocks) + (blocks == 1 ? " block" : " blocks") +
               "] x" + std::to_string(r.count) + " @" + std::to_string(r.firstBlock);
    }
    return out;
}

Status checkCover(std::span<const BlockSignature> blocks, const SegmentCover& cover, const CoverOptions& options) {
    auto fail = [](std::string message, std::string where) {
        return makeError("segments.bad_cover", std::move(message), std::move(where));
    };
    int next = 0;
    std::vector<int> seen(cover.types.size(), 0);
    std::vector<int> firstStart(cover.types.size(), -1);
    std::vector<int> firstSegment(cover.types.size(), -1);
    int nextNewType = 0;
    for (size_t i = 0; i < cover.segments.size(); ++i) {
        const Segment& s = cover.segments[i];
        const std::string where = "segments/" + std::to_string(i);
        if (s.firstBlock != next) return fail("segment starts at block " + std::to_string(s.firstBlock) +
                                                  ", expected " + std::to_string(next), where);
        if (s.blockCount < 1 || s.blockCount > options.maxWindowBlocks ||
            static_cast<size_t>(s.firstBlock + s.blockCount) > blocks.size())
            return fail("bad window length " + std::to_string(s.blockCount), where);
        if (s.type < 0 || static_cast<size_t>(s.type) >= cover.types.size()) return fail("unknown type", where);
        const SegmentType& t = cover.types[static_cast<size_t>(s.type)];
        if (seen[static_cast<size_t>(s.type)] == 0) {
            if (s.type != nextNewType) return fail("type ids are not numbered by first occurrence", where);
            ++nextNewType;
            firstStart[static_cast<size_t>(s.type)] = s.firstBlock;
            firstSegment[static_cast<size_t>(s.type)] = static_cast<int>(i);
        }
        seen[static_cast<size_t>(s.type)]++;
        if (t.blockFingerprints.size() != static_cast<size_t>(s.blockCount))
            return fail("window length differs from its type", where);
        for (int q = 0; q < s.blockCount; ++q) {
            const BlockSignature& b = blocks[static_cast<size_t>(s.firstBlock + q)];
            if (b.fingerprint != t.blockFingerprints[static_cast<size_t>(q)] ||
                b.strategyCount != t.strategyCounts[static_cast<size_t>(q)])
                return fail("block " + std::to_string(s.firstBlock + q) + " does not match type T" +
                                std::to_string(s.type), where);
        }
        if (windowEdgeHash(blocks, s.firstBlock, s.blockCount) !=
            windowEdgeHash(blocks, firstStart[static_cast<size_t>(s.type)], s.blockCount))
            return fail("edges between the window's blocks differ from the type's first window", where);
        next += s.blockCount;
    }
    if (static_cast<size_t>(next) != blocks.size())
        return fail("segments cover " + std::to_string(next) + " of " + std::to_string(blocks.size()) + " blocks",
                    "segments");
    bool repeated = false, edgeOneOff = false;
    for (size_t t = 0; t < cover.types.size(); ++t) {
        if (seen[t] != cover.types[t].occurrences)
            return fail("occurrence count is wrong", "types/" + std::to_string(t));
        if (cover.types[t].blockFingerprints.size() < 2) continue;
        if (seen[t] >= 2) {
            repeated = true;
            continue;
        }
        const int only = firstSegment[t];
        if (only != 0 && only + 1 != static_cast<int>(cover.segments.size()))
            return fail("a multi-block type occurs once and is neither the first nor the last segment",
                        "types/" + std::to_string(t));
        edgeOneOff = true;
    }
    if (edgeOneOff && !repeated)
        return fail("one-off head or tail windows without any repeated multi-block type", "types");
    return {};
}

}  // namespace cfp
