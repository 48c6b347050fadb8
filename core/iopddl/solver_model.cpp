#include "iopddl/solver_model.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace cfp::iopddl {

namespace {

constexpr double kForbidden = 1e17;

struct DisjointSets {
    std::vector<int32_t> parent;
    explicit DisjointSets(int32_t n) : parent(static_cast<size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
    int32_t find(int32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    // The smaller id becomes the root, so roots are each set's smallest node.
    void unite(int32_t a, int32_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (a < b) parent[b] = a;
        else parent[a] = b;
    }
};

// A merged edge between two free nodes, over their allowed strategies: [lo position][hi position].
struct PairEdge {
    int32_t lo = 0, hi = 0;
    std::vector<double> cost;
    bool matching = false;
};

}  // namespace

double SolverModel::cost(std::span<const int32_t> x) const {
    double total = constant;
    for (int32_t v = 0; v < n; ++v) {
        total += unary[static_cast<size_t>(valueBegin[v] + x[v])];
        for (const Arc& a : arcsOf(v))
            if (v < a.to) total += mats[static_cast<size_t>(a.offset + int64_t(x[v]) * k[a.to] + x[a.to])];
    }
    return total;
}

Solution SolverModel::toSolution(std::span<const int32_t> x) const {
    Solution s(static_cast<size_t>(problemNodes));
    for (int64_t v = 0; v < problemNodes; ++v) {
        const int32_t var = nodeVariable[static_cast<size_t>(v)];
        s[static_cast<size_t>(v)] = var < 0 ? fixedStrategy[static_cast<size_t>(v)]
                                            : nodeStrategy[static_cast<size_t>(nodeStrategyBegin[static_cast<size_t>(v)] + x[var])];
    }
    return s;
}

std::vector<int32_t> SolverModel::fromSolution(const Solution& solution) const {
    std::vector<int32_t> x(static_cast<size_t>(n), -1);
    for (int64_t v = 0; v < problemNodes && v < static_cast<int64_t>(solution.size()); ++v) {
        const int32_t var = nodeVariable[static_cast<size_t>(v)];
        if (var < 0 || x[var] >= 0) continue;
        const int32_t* map = nodeStrategy.data() + nodeStrategyBegin[static_cast<size_t>(v)];
        for (int32_t i = 0; i < k[var]; ++i)
            if (map[i] == solution[static_cast<size_t>(v)]) {
                x[var] = i;
                break;
            }
    }
    for (int32_t& value : x) value = std::max(value, 0);
    return x;
}

Result<SolverModel> buildSolverModel(const Problem& p, ModelStats* stats, const ModelOptions& options) {
    if (p.nodeCount() > INT32_MAX / 2) return makeError("iopddl.unsupported", "more than 2^30 nodes");
    const int32_t nodes = static_cast<int32_t>(p.nodeCount());
    SolverModel m;
    m.problemNodes = nodes;
    ModelStats local;
    ModelStats& st = stats ? *stats : local;
    st = ModelStats{};

    // Allowed strategies: those without a forbidden own cost, unless none is.
    std::vector<int64_t> allowBegin(static_cast<size_t>(nodes) + 1, 0);
    std::vector<int32_t> allow;
    std::vector<double> nodeCost;  // per allowed strategy, edges of one node folded in below
    for (int32_t v = 0; v < nodes; ++v) {
        const auto c = p.costs(v);
        const size_t before = allow.size();
        for (size_t s = 0; s < c.size(); ++s)
            if (!options.pruneForbidden || static_cast<double>(c[s]) < kForbidden) allow.push_back(static_cast<int32_t>(s));
        if (allow.size() == before)
            for (size_t s = 0; s < c.size(); ++s) allow.push_back(static_cast<int32_t>(s));
        for (size_t i = before; i < allow.size(); ++i) nodeCost.push_back(static_cast<double>(c[static_cast<size_t>(allow[i])]));
        allowBegin[v + 1] = static_cast<int64_t>(allow.size());
    }
    auto kAllowed = [&](int32_t v) { return static_cast<int32_t>(allowBegin[v + 1] - allowBegin[v]); };
    auto original = [&](int32_t v, int32_t pos) { return allow[static_cast<size_t>(allowBegin[v] + pos)]; };
    auto isFixed = [&](int32_t v) { return kAllowed(v) == 1; };

    // Edges: fold into node costs or the constant, merge the rest per pair.
    std::map<std::pair<int32_t, int32_t>, size_t> pairIndex;
    std::vector<PairEdge> pairs;
    for (int64_t e = 0; e < p.edgeCount(); ++e) {
        const auto ends = p.edgeEnds(e);
        const auto table = p.edgeCostTable(e);
        if (ends.size() == 1) {
            const int32_t v = static_cast<int32_t>(ends[0]);
            for (int32_t i = 0; i < kAllowed(v); ++i)
                nodeCost[static_cast<size_t>(allowBegin[v] + i)] += static_cast<double>(table[static_cast<size_t>(original(v, i))]);
            continue;
        }
        if (ends.size() != 2)
            return makeError("iopddl.unsupported", "edge " + std::to_string(e) + " joins " + std::to_string(ends.size()) +
                                                       " nodes; the solver handles edges of one or two nodes");
        const int32_t u = static_cast<int32_t>(ends[0]), v = static_cast<int32_t>(ends[1]);
        const int64_t kv = p.strategyCount(v);
        auto at = [&](int32_t su, int32_t sv) { return static_cast<double>(table[static_cast<size_t>(int64_t(su) * kv + sv)]); };
        if (u == v) {
            for (int32_t i = 0; i < kAllowed(u); ++i) nodeCost[static_cast<size_t>(allowBegin[u] + i)] += at(original(u, i), original(u, i));
        } else if (isFixed(u) && isFixed(v)) {
            m.constant += at(original(u, 0), original(v, 0));
        } else if (isFixed(u)) {
            for (int32_t i = 0; i < kAllowed(v); ++i) nodeCost[static_cast<size_t>(allowBegin[v] + i)] += at(original(u, 0), original(v, i));
        } else if (isFixed(v)) {
            for (int32_t i = 0; i < kAllowed(u); ++i) nodeCost[static_cast<size_t>(allowBegin[u] + i)] += at(original(u, i), original(v, 0));
        } else {
            const int32_t lo = std::min(u, v), hi = std::max(u, v);
            auto [it, inserted] = pairIndex.try_emplace({lo, hi}, pairs.size());
            if (inserted) pairs.push_back(PairEdge{lo, hi, std::vector<double>(static_cast<size_t>(int64_t(kAllowed(lo)) * kAllowed(hi)), 0.0), false});
            PairEdge& pe = pairs[it->second];
            const int32_t khi = kAllowed(hi);
            for (int32_t a = 0; a < kAllowed(lo); ++a)
                for (int32_t b = 0; b < khi; ++b)
                    pe.cost[static_cast<size_t>(int64_t(a) * khi + b)] +=
                        u == lo ? at(original(lo, a), original(hi, b)) : at(original(hi, b), original(lo, a));
        }
    }
    for (int32_t v = 0; v < nodes; ++v)
        if (isFixed(v)) m.constant += nodeCost[static_cast<size_t>(allowBegin[v])];
        else ++st.freeNodes;

    // Matching edges and their components.
    DisjointSets sets(nodes);
    std::vector<std::vector<size_t>> matchingOf(static_cast<size_t>(nodes));
    for (size_t e = 0; e < pairs.size(); ++e) {
        PairEdge& pe = pairs[e];
        const int32_t klo = kAllowed(pe.lo), khi = kAllowed(pe.hi);
        std::vector<int32_t> colCount(static_cast<size_t>(khi), 0);
        bool matching = true;
        for (int32_t a = 0; a < klo && matching; ++a) {
            int32_t rowCount = 0;
            for (int32_t b = 0; b < khi; ++b)
                if (pe.cost[static_cast<size_t>(int64_t(a) * khi + b)] < kForbidden) {
                    ++rowCount;
                    ++colCount[static_cast<size_t>(b)];
                }
            matching = rowCount <= 1;
        }
        for (int32_t b = 0; b < khi && matching; ++b) matching = colCount[static_cast<size_t>(b)] <= 1;
        pe.matching = matching;
        if (!matching) continue;
        ++st.matchingEdges;
        sets.unite(pe.lo, pe.hi);
        matchingOf[static_cast<size_t>(pe.lo)].push_back(e);
        matchingOf[static_cast<size_t>(pe.hi)].push_back(e);
    }

    // Each component's values: its root's allowed strategies that every member can follow.
    // map[v] (positions in v's allowed list, one per root position) is filled by BFS over matching edges.
    std::vector<int64_t> mapBegin(static_cast<size_t>(nodes), -1);
    std::vector<int32_t> mapPos;  // per member: k(root) entries, -1 = impossible
    std::vector<std::vector<int32_t>> members(static_cast<size_t>(nodes));
    for (int32_t v = 0; v < nodes; ++v)
        if (!isFixed(v)) members[static_cast<size_t>(sets.find(v))].push_back(v);
    std::vector<int32_t> rootOf(static_cast<size_t>(nodes), -1);     // contracted root, or itself
    std::vector<std::vector<int32_t>> domainOf(static_cast<size_t>(nodes));  // root positions kept
    for (int32_t r = 0; r < nodes; ++r) {
        const auto& mem = members[static_cast<size_t>(r)];
        if (mem.empty()) continue;
        const int32_t kr = kAllowed(r);
        if (mem.size() == 1) {
            rootOf[r] = r;
            mapBegin[r] = static_cast<int64_t>(mapPos.size());
            for (int32_t i = 0; i < kr; ++i) mapPos.push_back(i);
            for (int32_t i = 0; i < kr; ++i) domainOf[r].push_back(i);
            continue;
        }
        ++st.components;
        std::vector<int32_t> queue{r};
        mapBegin[r] = static_cast<int64_t>(mapPos.size());
        for (int32_t i = 0; i < kr; ++i) mapPos.push_back(i);
        std::vector<char> ok(static_cast<size_t>(kr), 1);
        for (size_t head = 0; head < queue.size(); ++head) {
            const int32_t v = queue[head];
            for (const size_t e : matchingOf[static_cast<size_t>(v)]) {
                const PairEdge& pe = pairs[e];
                const int32_t w = pe.lo == v ? pe.hi : pe.lo;
                const int32_t kw = kAllowed(w), khi = kAllowed(pe.hi);
                // The partner of v's position a on this edge, or -1.
                auto partner = [&](int32_t a) {
                    for (int32_t b = 0; b < kw; ++b) {
                        const double c = pe.lo == v ? pe.cost[static_cast<size_t>(int64_t(a) * khi + b)]
                                                    : pe.cost[static_cast<size_t>(int64_t(b) * khi + a)];
                        if (c < kForbidden) return b;
                    }
                    return -1;
                };
                const bool seen = mapBegin[w] >= 0;
                if (!seen) {
                    mapBegin[w] = static_cast<int64_t>(mapPos.size());
                    mapPos.resize(mapPos.size() + static_cast<size_t>(kr), -1);
                    queue.push_back(w);
                }
                for (int32_t i = 0; i < kr; ++i) {
                    if (!ok[static_cast<size_t>(i)]) continue;
                    const int32_t a = mapPos[static_cast<size_t>(mapBegin[v] + i)];
                    const int32_t b = a < 0 ? -1 : partner(a);
                    int32_t& slot = mapPos[static_cast<size_t>(mapBegin[w] + i)];
                    if (b < 0 || (seen && slot != b)) ok[static_cast<size_t>(i)] = 0;
                    else slot = b;
                }
            }
        }
        for (int32_t i = 0; i < kr; ++i)
            if (ok[static_cast<size_t>(i)]) domainOf[r].push_back(i);
        if (!domainOf[r].empty()) {
            for (const int32_t v : mem) rootOf[v] = r;
            continue;
        }
        // No value satisfies every matching edge: keep the members as single variables.
        ++st.inconsistent;
        for (const int32_t v : mem) {
            rootOf[v] = v;
            mapBegin[v] = static_cast<int64_t>(mapPos.size());
            for (int32_t i = 0; i < kAllowed(v); ++i) mapPos.push_back(i);
            domainOf[v].clear();
            for (int32_t i = 0; i < kAllowed(v); ++i) domainOf[v].push_back(i);
        }
    }

    // Variables, numbered by their smallest node.
    std::vector<int32_t> varOfRoot(static_cast<size_t>(nodes), -1);
    m.nodeVariable.assign(static_cast<size_t>(nodes), -1);
    for (int32_t v = 0; v < nodes; ++v) {
        if (isFixed(v)) continue;
        const int32_t r = rootOf[v];
        if (varOfRoot[r] < 0) {
            varOfRoot[r] = m.n++;
            m.k.push_back(static_cast<int32_t>(domainOf[r].size()));
        }
        m.nodeVariable[v] = varOfRoot[r];
    }
    // position of member v for value i of its variable
    auto memberPos = [&](int32_t v, int32_t i) {
        const int32_t r = rootOf[v];
        return mapPos[static_cast<size_t>(mapBegin[v] + domainOf[r][static_cast<size_t>(i)])];
    };
    m.nodeStrategyBegin.assign(static_cast<size_t>(nodes), 0);
    m.fixedStrategy.assign(static_cast<size_t>(nodes), 0);
    for (int32_t v = 0; v < nodes; ++v) {
        m.nodeStrategyBegin[v] = static_cast<int64_t>(m.nodeStrategy.size());
        if (isFixed(v)) {
            m.fixedStrategy[v] = original(v, 0);
            continue;
        }
        const int32_t var = m.nodeVariable[v];
        for (int32_t i = 0; i < m.k[var]; ++i) m.nodeStrategy.push_back(original(v, memberPos(v, i)));
    }

    // Unary costs: members' own costs, then edges inside a variable.
    m.valueBegin.assign(static_cast<size_t>(m.n) + 1, 0);
    for (int32_t c = 0; c < m.n; ++c) m.valueBegin[c + 1] = m.valueBegin[c] + m.k[c];
    m.unary.assign(static_cast<size_t>(m.valueBegin[m.n]), 0.0);
    for (int32_t v = 0; v < nodes; ++v) {
        if (isFixed(v)) continue;
        const int32_t var = m.nodeVariable[v];
        for (int32_t i = 0; i < m.k[var]; ++i)
            m.unary[static_cast<size_t>(m.valueBegin[var] + i)] += nodeCost[static_cast<size_t>(allowBegin[v] + memberPos(v, i))];
    }
    std::map<std::pair<int32_t, int32_t>, std::vector<double>> varPairs;
    for (const PairEdge& pe : pairs) {
        const int32_t a = m.nodeVariable[pe.lo], b = m.nodeVariable[pe.hi];
        const int32_t khi = kAllowed(pe.hi);
        auto cost = [&](int32_t posLo, int32_t posHi) { return pe.cost[static_cast<size_t>(int64_t(posLo) * khi + posHi)]; };
        if (a == b) {
            for (int32_t i = 0; i < m.k[a]; ++i) m.unary[static_cast<size_t>(m.valueBegin[a] + i)] += cost(memberPos(pe.lo, i), memberPos(pe.hi, i));
            continue;
        }
        const int32_t va = std::min(a, b), vb = std::max(a, b);
        auto& mat = varPairs[{va, vb}];
        if (mat.empty()) mat.assign(static_cast<size_t>(int64_t(m.k[va]) * m.k[vb]), 0.0);
        const int32_t ka = m.k[va], kb = m.k[vb];
        for (int32_t i = 0; i < ka; ++i)
            for (int32_t j = 0; j < kb; ++j) {
                // (i, j) are values of (va, vb); pe.lo belongs to a.
                const int32_t valueLo = a == va ? i : j, valueHi = a == va ? j : i;
                mat[static_cast<size_t>(int64_t(i) * kb + j)] += cost(memberPos(pe.lo, valueLo), memberPos(pe.hi, valueHi));
            }
    }

    // Arcs: both orientations of every variable pair, grouped by variable in neighbour order.
    std::vector<int64_t> degree(static_cast<size_t>(m.n) + 1, 0);
    for (const auto& [key, mat] : varPairs) {
        ++degree[static_cast<size_t>(key.first)];
        ++degree[static_cast<size_t>(key.second)];
    }
    m.arcBegin.assign(static_cast<size_t>(m.n) + 1, 0);
    for (int32_t v = 0; v < m.n; ++v) m.arcBegin[v + 1] = m.arcBegin[v] + degree[static_cast<size_t>(v)];
    m.arcs.resize(static_cast<size_t>(m.arcBegin[m.n]));
    std::vector<int64_t> fill(m.arcBegin.begin(), m.arcBegin.end() - 1);
    int64_t total = 0;
    for (const auto& [key, mat] : varPairs) total += 2 * static_cast<int64_t>(mat.size());
    m.mats.resize(static_cast<size_t>(total));
    int64_t offset = 0;
    for (const auto& [key, mat] : varPairs) {
        const auto [lo, hi] = key;
        const int32_t klo = m.k[lo], khi = m.k[hi];
        const int64_t forward = offset, backward = offset + static_cast<int64_t>(mat.size());
        std::copy(mat.begin(), mat.end(), m.mats.begin() + forward);
        for (int32_t b = 0; b < khi; ++b)
            for (int32_t a = 0; a < klo; ++a) m.mats[static_cast<size_t>(backward + int64_t(b) * klo + a)] = mat[static_cast<size_t>(int64_t(a) * khi + b)];
        const int64_t atLo = fill[lo]++, atHi = fill[hi]++;
        m.arcs[static_cast<size_t>(atLo)] = Arc{hi, forward, backward, atHi};
        m.arcs[static_cast<size_t>(atHi)] = Arc{lo, backward, forward, atLo};
        offset = backward + static_cast<int64_t>(mat.size());
    }
    m.edgeCount = static_cast<int64_t>(varPairs.size());

    // Time slots over every live node.
    for (int32_t v = 0; v < nodes; ++v) {
        const Interval iv = p.intervals[static_cast<size_t>(v)];
        if (iv.empty()) continue;
        m.slotPoints.push_back(iv.lo);
        m.slotPoints.push_back(iv.hi);
    }
    std::sort(m.slotPoints.begin(), m.slotPoints.end());
    m.slotPoints.erase(std::unique(m.slotPoints.begin(), m.slotPoints.end()), m.slotPoints.end());
    const int32_t slots = m.slotPoints.empty() ? 0 : static_cast<int32_t>(m.slotPoints.size()) - 1;
    auto slotOf = [&](int64_t t) {
        return static_cast<int32_t>(std::lower_bound(m.slotPoints.begin(), m.slotPoints.end(), t) - m.slotPoints.begin());
    };
    std::vector<int64_t> fixedDiff(static_cast<size_t>(slots) + 1, 0);
    // Usage per variable: a sweep over its members' slot ranges; usage common to all values goes
    // to the baseline, the rest to segments.
    std::vector<std::vector<int32_t>> liveMembers(static_cast<size_t>(m.n));
    for (int32_t v = 0; v < nodes; ++v) {
        const Interval iv = p.intervals[static_cast<size_t>(v)];
        if (iv.empty()) continue;
        if (isFixed(v)) {
            const int64_t u = p.usages(v)[static_cast<size_t>(original(v, 0))];
            fixedDiff[static_cast<size_t>(slotOf(iv.lo))] += u;
            fixedDiff[static_cast<size_t>(slotOf(iv.hi))] -= u;
        } else {
            liveMembers[static_cast<size_t>(m.nodeVariable[v])].push_back(v);
        }
    }
    m.segmentBegin.assign(static_cast<size_t>(m.n) + 1, 0);
    for (int32_t c = 0; c < m.n; ++c) {
        const int32_t kc = m.k[c];
        std::vector<std::pair<int32_t, int32_t>> events;  // (slot, +member+1 / -(member+1))
        for (const int32_t v : liveMembers[static_cast<size_t>(c)]) {
            events.emplace_back(slotOf(p.intervals[static_cast<size_t>(v)].lo), v + 1);
            events.emplace_back(slotOf(p.intervals[static_cast<size_t>(v)].hi), -(v + 1));
        }
        std::sort(events.begin(), events.end());
        std::vector<int64_t> current(static_cast<size_t>(kc), 0);
        size_t e = 0;
        while (e < events.size()) {
            const int32_t at = events[e].first;
            for (; e < events.size() && events[e].first == at; ++e) {
                const int32_t v = std::abs(events[e].second) - 1;
                const int64_t sign = events[e].second > 0 ? 1 : -1;
                const auto u = p.usages(v);
                for (int32_t i = 0; i < kc; ++i) current[static_cast<size_t>(i)] += sign * u[static_cast<size_t>(original(v, memberPos(v, i)))];
            }
            if (e == events.size()) break;
            const int32_t until = events[e].first;
            const int64_t low = *std::min_element(current.begin(), current.end());
            fixedDiff[static_cast<size_t>(at)] += low;
            fixedDiff[static_cast<size_t>(until)] -= low;
            const bool varies = *std::max_element(current.begin(), current.end()) != low;
            if (!varies) continue;
            // Extend the previous segment when it ends here with the same usage.
            if (!m.segments.empty() && static_cast<int64_t>(m.segments.size()) > m.segmentBegin[c] && m.segments.back().endSlot == at) {
                const int64_t* prev = m.segmentUsage.data() + m.segments.back().usageOffset;
                bool same = true;
                for (int32_t i = 0; i < kc && same; ++i) same = prev[i] == current[static_cast<size_t>(i)] - low;
                if (same) {
                    m.segments.back().endSlot = until;
                    continue;
                }
            }
            m.segments.push_back(Segment{at, until, static_cast<int64_t>(m.segmentUsage.size())});
            for (int32_t i = 0; i < kc; ++i) m.segmentUsage.push_back(current[static_cast<size_t>(i)] - low);
        }
        m.segmentBegin[c + 1] = static_cast<int64_t>(m.segments.size());
    }
    m.fixedUsage.assign(static_cast<size_t>(slots), 0);
    int64_t run = 0;
    for (int32_t j = 0; j < slots; ++j) {
        run += fixedDiff[static_cast<size_t>(j)];
        m.fixedUsage[static_cast<size_t>(j)] = run;
    }
    return m;
}

}  // namespace cfp::iopddl
