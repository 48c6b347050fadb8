#include "plan/segment_dp.h"

#include <algorithm>
#include <map>
#include <optional>

#include "util/parallel.h"

namespace cfp {

namespace {

constexpr double kEmpty = std::numeric_limits<double>::infinity();

// Per strategy j < n, the candidate (lt + term[j], lm + sum[j]) of one state kept where it is
// better than the group's best so far (time, then memory; a tie keeps the earlier state).
// Branch-free over contiguous arrays, so that it vectorises; built for AVX2 too where the
// compiler can pick the variant at load time.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
void groupMinimum(size_t n, double lt, int64_t lm, int64_t lmx, int64_t x, const double* __restrict term, const int64_t* __restrict sum,
                  const int64_t* __restrict most, double* __restrict bt, int64_t* __restrict bm, int64_t* __restrict bmx,
                  int64_t* __restrict bx) {
    for (size_t j = 0; j < n; ++j) {
        const double nt = lt + term[j];
        const int64_t nm = lm + sum[j];
        const bool better = nt < bt[j] || (nt == bt[j] && nm < bm[j]);
        bt[j] = better ? nt : bt[j];
        bm[j] = better ? nm : bm[j];
        bmx[j] = better ? (lmx > most[j] ? lmx : most[j]) : bmx[j];
        bx[j] = better ? x : bx[j];
    }
}

// out[j] = terms[j] + row[j] for j < n (a pair cost row added to the strategies' terms).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
void addRow(size_t n, const double* __restrict terms, const double* __restrict row, double* __restrict out) {
    for (size_t j = 0; j < n; ++j) out[j] = terms[j] + row[j];
}

}  // namespace

// Keeps the Pareto-minimal labels (time, memory sum, working set); thins to `cap` by spreading
// over memory. Returns false when thinning dropped a non-dominated label.
bool pruneLabels(std::vector<DpLabel>& labels, int cap, bool timeOnly) {
    if (labels.size() <= 1) return true;
    std::sort(labels.begin(), labels.end(), [](const DpLabel& a, const DpLabel& b) {
        if (a.t != b.t) return a.t < b.t;
        if (a.m != b.m) return a.m < b.m;
        return a.mx < b.mx;
    });
    if (timeOnly) {
        labels.resize(1);
        return true;
    }
    std::vector<DpLabel> kept;
    for (const DpLabel& l : labels) {
        bool dominated = false;
        for (const DpLabel& k : kept)
            if (k.m <= l.m && k.mx <= l.mx) {
                dominated = true;
                break;
            }
        if (!dominated) kept.push_back(l);
    }
    bool exact = true;
    if (static_cast<int>(kept.size()) > cap) {
        exact = false;
        // Keep the fastest, the smallest, and evenly spread ones in between (by time order).
        std::vector<DpLabel> thin;
        const size_t n = kept.size();
        for (int i = 0; i < cap; ++i) thin.push_back(kept[static_cast<size_t>(std::llround(static_cast<double>(i) * static_cast<double>(n - 1) / (cap - 1)))]);
        auto smallest = std::min_element(kept.begin(), kept.end(), [](const DpLabel& a, const DpLabel& b) { return a.m + a.mx < b.m + b.mx; });
        thin.back() = *smallest;
        kept = std::move(thin);
    }
    labels = std::move(kept);
    return exact;
}

Result<SegmentDp> SegmentDp::create(const PlanProblem::Impl& problem, int64_t limitBytes, const StrategyMask& allowedMask,
                                    const SearchOptions& searchOptions, const PlanHooks& planHooks, const std::string& label) {
    SegmentDp dp;
    dp.P = &problem;
    dp.B = problem.blockCount();
    dp.limit = limitBytes;
    dp.allowed = allowedMask;
    dp.options = searchOptions;
    dp.hooks = planHooks;
    dp.meshLabel = label;
    const int B = dp.B;
    const PlanProblem::Impl* P = dp.P;
    // Masks are over the blocks' strategies; every recomputation variant of an allowed one is allowed.
    for (int b = 0; b < B; ++b) {
        bool any = false;
        for (int s = 0; s < P->strategies(b); ++s) any = any || dp.allowedAt(b, s);
        if (!any) return makeError("plan.bad_pin", "block " + std::to_string(b) + " has no allowed strategy");
    }
    dp.minRemaining.assign(static_cast<size_t>(B) + 1, 0);
    for (int b = B - 1; b >= 0; --b) {
        int64_t best = std::numeric_limits<int64_t>::max();
        for (int s = 0; s < P->strategies(b); ++s)
            if (dp.allowedAt(b, s)) best = std::min(best, P->unaryMemSum[static_cast<size_t>(b)][static_cast<size_t>(s)]);
        dp.minRemaining[static_cast<size_t>(b)] = dp.minRemaining[static_cast<size_t>(b) + 1] + best;
    }
    // The frontier before and after every block does not depend on the pass: it is laid out once.
    // The frontier does not depend on the pass either: laid out once (the build's, where it laid it
    // out under the same cap).
    if (!P->layout.empty() && P->layoutMaxStates == dp.options.maxStates)
        dp.m_plans = P->layout;
    else
        CFP_TRY(P->layoutFrontier(P->pairs, B, dp.options.maxStates, dp.meshLabel, dp.m_plans));
    dp.threads = resolveThreads(dp.options.threads);
    dp.m_scratch.resize(static_cast<size_t>(dp.threads));
    // A time-only step with at least options.parallelStepWork (state, choice) pairs splits its
    // states among the worker threads (each keeps its own best label per next state; merged in
    // state order, so the result is the sequential one).
    dp.parallelStepWork = std::max<int64_t>(1, dp.options.parallelStepWork);
    if (dp.options.reuseRepeats == RepeatReuse::On) dp.findWindows();
    dp.m_windowAt.assign(static_cast<size_t>(B), nullptr);
    for (const Window& w : dp.m_windows) dp.m_windowAt[static_cast<size_t>(w.start)] = &w;
    return dp;
}

size_t SegmentDp::Layer::indexOf(int64_t x) const {
    return static_cast<size_t>(std::lower_bound(id.begin(), id.end(), static_cast<uint32_t>(x)) - id.begin());
}

int64_t SegmentDp::step(int b, const Layer& cur, Layer& nxt, const DpPass& mode, bool& exact, int64_t passengerStates, int worker) {
    const StepPlan& sp = m_plans[static_cast<size_t>(b)];
    const std::vector<Classes>& frontierClasses = classesBefore(b);
    const bool timeOnly = mode.timeOnly;
    const int64_t count = sp.count / passengerStates;
    const int db = P->strategies(b);
    const auto& uTime = P->unaryTime[static_cast<size_t>(b)];
    const auto& uSum = P->unaryMemSum[static_cast<size_t>(b)];
    const auto& uMax = P->unaryMemMax[static_cast<size_t>(b)];
    // Per strategy, once per step: whether it is allowed, its own term, and its slot in the
    // next frontier.
    std::vector<int> live;
    std::vector<double> own;
    std::vector<int64_t> slotY, liveSum, liveMax;  // per live strategy: its slot, memory sum, working set
    for (int s = 0; s < db; ++s) {
        const auto su = static_cast<size_t>(s);
        if (!allowedAt(b, s) || uMax[su] > mode.workingCap) continue;
        live.push_back(s);
        own.push_back(mode.memoryObjective ? static_cast<double>(uSum[su])  // exact below 2^53 bytes
                                           : uTime[su] + mode.lambda * static_cast<double>(uSum[su]));
        slotY.push_back(sp.bPos >= 0 ? sp.nextClasses[static_cast<size_t>(sp.bPos)].classOf[su] * sp.stride[static_cast<size_t>(sp.bPos)] : 0);
        liveSum.push_back(uSum[su]);
        liveMax.push_back(uMax[su]);
    }
    const bool allLive = static_cast<int>(live.size()) == db;  // then live[j] == j
    // Decodes state x over the current frontier into assign: per position, the class's
    // representative strategy (every strategy of the class costs the same with b and with every
    // later block); returns the part of the next state that x keeps.
    auto decode = [&](int64_t x, int* assign) {
        auto rest = static_cast<uint32_t>(x);  // states fit in 32 bits (DpLabel::prevState); its division is the cheaper
        for (int i = static_cast<int>(frontierClasses.size()) - 1; i >= 0; --i) {
            const auto& fc = frontierClasses[static_cast<size_t>(i)];
            const auto d = static_cast<uint32_t>(fc.representative.size());
            assign[i] = fc.representative[rest % d];
            rest /= d;
        }
        int64_t baseY = 0;
        for (size_t i = 0; i < frontierClasses.size(); ++i)
            if (const int j = sp.posInNext[i]; j >= 0)
                baseY += sp.nextClasses[static_cast<size_t>(j)].classOf[static_cast<size_t>(assign[i])] * sp.stride[static_cast<size_t>(j)];
        return baseY;
    };
    // Per live strategy: its own term plus its pair costs with the frontier's strategies in
    // assign, summed pair by pair (the same order per strategy as one by one; the memory
    // objective has no pair terms). The running sums of the last state are kept (RowSums): a
    // state that reads the same rows for its first k pairs starts from the k-th (the same
    // additions in the same order), which states taken in ascending order mostly do.
    const size_t npb = mode.memoryObjective ? 0 : sp.pb.size();
    struct RowSums {
        std::vector<std::vector<double>> partial;  // [k]: own + the rows of pairs 0 .. k-1 at `at`
        std::vector<int> at;                       // per pair: the strategy its row was read at (-1: none)
    };
    auto rowSums = [&] {
        RowSums rs;
        rs.partial.assign(npb + 1, std::vector<double>(live.size()));
        rs.partial[0] = own;
        rs.at.assign(npb, -1);
        return rs;
    };
    auto termsOf = [&](const int* assign, RowSums& rs) -> const double* {
        size_t k = 0;
        while (k < npb && rs.at[k] == assign[static_cast<size_t>(sp.pb[k].first)]) ++k;
        for (; k < npb; ++k) {
            const int a = assign[static_cast<size_t>(sp.pb[k].first)];
            rs.at[k] = a;
            const double* row = sp.pb[k].second->cost.data() + static_cast<size_t>(a) * static_cast<size_t>(db);
            const double* before = rs.partial[k].data();
            double* after = rs.partial[k + 1].data();
            if (allLive)
                addRow(live.size(), before, row, after);
            else
                for (size_t j = 0; j < live.size(); ++j) after[j] = before[j] + row[static_cast<size_t>(live[j])];
        }
        return rs.partial[npb].data();
    };
    // Time-only steps (one label per state: every layer of a time-only pass holds one): the states
    // grouped by the part of the next state they keep. The states of a group compete for the
    // same next states, so per strategy the best of the group is found first (a branch-free
    // minimum over contiguous arrays) and written once. The labels are those of a state-by-state
    // loop in ascending order: groups reach disjoint next states, a group's states go in
    // ascending order, and of equal (time, memory) candidates the smaller state and then the
    // smaller strategy wins, as there.
    auto relaxSingle = [&](int64_t i0, int64_t i1, Scratch& sc) {
        const size_t nf = frontierClasses.size(), nLive = live.size();
        std::vector<int> assigns(static_cast<size_t>(i1 - i0) * std::max<size_t>(1, nf));
        std::vector<std::pair<int64_t, int64_t>> keys;  // (kept part, index into cur.id), ascending
        keys.reserve(static_cast<size_t>(i1 - i0));
        for (int64_t i = i0; i < i1; ++i)
            keys.emplace_back(decode(cur.id[static_cast<size_t>(i)], assigns.data() + static_cast<size_t>(i - i0) * nf), i);
        if (keys.size() * 4 >= static_cast<size_t>(count)) {
            // Many states for the next layer's size: a counting sort by kept part (stable, so
            // each group's states stay ascending).
            std::vector<uint32_t> start(static_cast<size_t>(count) + 1, 0);
            for (const auto& k : keys) ++start[static_cast<size_t>(k.first) + 1];
            for (size_t y = 0; y < static_cast<size_t>(count); ++y) start[y + 1] += start[y];
            std::vector<std::pair<int64_t, int64_t>> sorted(keys.size());
            for (const auto& k : keys) sorted[start[static_cast<size_t>(k.first)]++] = k;
            keys = std::move(sorted);
        } else {
            std::sort(keys.begin(), keys.end());
        }
        RowSums rows = rowSums();
        std::vector<double> gT(nLive);
        std::vector<int64_t> gM(nLive), gMx(nLive), gX(nLive);
        // Raw pointers: the list's growth would otherwise make the compiler reload every
        // vector's data on each strategy.
        DpLabel* const best = sc.bestOf.data();
        const int64_t *const sum = liveSum.data(), *const most = liveMax.data(), *const slotOf = slotY.data();
        const int* const strategy = live.data();
        auto put = [&](size_t j, int64_t baseY, double t, int64_t m, int64_t mx, int32_t x) {
            const auto y = static_cast<uint32_t>(baseY + slotOf[j]);
            DpLabel& slot = best[y];
            if (t < slot.t || (t == slot.t && (m < slot.m || (m == slot.m && x < slot.prevState)))) {
                if (slot.t == kEmpty) sc.touched.push_back(y);
                slot = DpLabel{t, m, mx, x, 0, strategy[j]};
            }
        };
        for (size_t g0 = 0; g0 < keys.size();) {
            size_t g1 = g0 + 1;
            while (g1 < keys.size() && keys[g1].first == keys[g0].first) ++g1;
            const int64_t baseY = keys[g0].first;
            if (g1 == g0 + 1) {
                const auto i = static_cast<size_t>(keys[g0].second);
                const auto x = static_cast<int32_t>(cur.id[i]);
                const DpLabel l = cur.labels[cur.offset[i]];
                const double* const term = termsOf(assigns.data() + (i - static_cast<size_t>(i0)) * nf, rows);
                for (size_t j = 0; j < nLive; ++j) put(j, baseY, l.t + term[j], l.m + sum[j], std::max(l.mx, most[j]), x);
            } else {
                std::fill(gT.begin(), gT.end(), kEmpty);
                std::fill(gM.begin(), gM.end(), 0);
                std::fill(gX.begin(), gX.end(), -1);
                for (size_t k = g0; k < g1; ++k) {
                    const auto i = static_cast<size_t>(keys[k].second);
                    const DpLabel l = cur.labels[cur.offset[i]];
                    const double* const term = termsOf(assigns.data() + (i - static_cast<size_t>(i0)) * nf, rows);
                    groupMinimum(nLive, l.t, l.m, l.mx, cur.id[i], term, sum, most, gT.data(), gM.data(), gMx.data(), gX.data());
                }
                for (size_t j = 0; j < nLive; ++j)
                    if (gX[j] >= 0) put(j, baseY, gT[j], gM[j], gMx[j], static_cast<int32_t>(gX[j]));
            }
            g0 = g1;
        }
    };
    // The states cur.id[i0 .. i1) into scratch sc under the Pareto pass (a time-only pass holds one
    // label per state: relaxSingle).
    auto relax = [&](int64_t i0, int64_t i1, Scratch& sc, bool& ex) {
        std::vector<int> assign(std::max<size_t>(1, frontierClasses.size()));
        RowSums rows = rowSums();  // per live strategy: own term plus its pair costs
        for (auto i = static_cast<size_t>(i0); i < static_cast<size_t>(i1); ++i) {
            const size_t x = cur.id[i];
            const uint32_t l0 = cur.offset[i], l1 = cur.offset[i + 1];
            const int64_t baseY = decode(static_cast<int64_t>(x), assign.data());
            const double* const terms = termsOf(assign.data(), rows);
            for (size_t j = 0; j < live.size(); ++j) {
                const int s = live[j];
                const auto su = static_cast<size_t>(s);
                const double t = terms[j];
                const int64_t y = baseY + slotY[j];
                for (uint32_t li = l0; li < l1; ++li) {
                    const DpLabel& l = cur.labels[li];
                    const DpLabel nl{l.t + t, l.m + uSum[su], std::max(l.mx, uMax[su]), static_cast<int32_t>(x), static_cast<int32_t>(li - l0), s};
                    if (limit > 0 && nl.m + minRemaining[static_cast<size_t>(b) + 1] + P->constMemSum + std::max(nl.mx, P->constMemMax) > limit)
                        continue;
                    auto& bucket = sc.buckets[static_cast<size_t>(y)];
                    if (bucket.empty()) sc.touched.push_back(static_cast<uint32_t>(y));
                    bucket.push_back(nl);
                    if (static_cast<int>(bucket.size()) > 4 * options.labelCap + 8) ex = pruneLabels(bucket, options.labelCap, false) && ex;
                }
            }
        }
    };
    const auto n = static_cast<int64_t>(cur.id.size());
    const int64_t stepWork = n * static_cast<int64_t>(live.size());
    const int ranges = worker < 0 && timeOnly && stepWork >= parallelStepWork
                           ? parallelRanges(n, threads, std::max<int64_t>(1, parallelStepWork / 4 / std::max<size_t>(1, live.size())))
                           : 1;
    const DpLabel empty{kEmpty, 0, 0, -1, -1, -1};
    auto prepare = [&](Scratch& s) {
        if (timeOnly && s.bestOf.size() < static_cast<size_t>(count)) s.bestOf.resize(static_cast<size_t>(count), empty);
        if (!timeOnly && s.buckets.size() < static_cast<size_t>(count)) s.buckets.resize(static_cast<size_t>(count));
    };
    Scratch& sc = m_scratch[static_cast<size_t>(std::max(worker, 0))];
    if (ranges > 1) {
        for (int w = 0; w < ranges; ++w) prepare(m_scratch[static_cast<size_t>(w)]);
        // Only time-only steps are split (ranges above).
        parallelFor(n, ranges, 1, [&](int64_t i0, int64_t i1, int w) { relaxSingle(i0, i1, m_scratch[static_cast<size_t>(w)]); });
        // Later ranges replace a label only when strictly better, as the sequential loop does.
        for (int w = 1; w < ranges; ++w) {
            Scratch& other = m_scratch[static_cast<size_t>(w)];
            for (const uint32_t y : other.touched) {
                DpLabel& nl = other.bestOf[y];
                DpLabel& slot = sc.bestOf[y];
                if (nl.t < slot.t || (nl.t == slot.t && nl.m < slot.m)) {
                    if (slot.t == kEmpty) sc.touched.push_back(y);
                    slot = nl;
                }
                nl = empty;
            }
            other.touched.clear();
        }
    } else {
        prepare(sc);
        if (timeOnly)
            relaxSingle(0, n, sc);
        else
            relax(0, n, sc, exact);
    }
    // The next layer from the touched states, ascending; the scratch left empty. Where many
    // states were touched, a scan of the scratch is cheaper than sorting the list.
    if (sc.touched.size() * 8 >= static_cast<size_t>(count)) {
        sc.touched.clear();
        for (size_t y = 0; y < static_cast<size_t>(count); ++y)
            if (timeOnly ? sc.bestOf[y].t != kEmpty : !sc.buckets[y].empty()) sc.touched.push_back(static_cast<uint32_t>(y));
    } else {
        std::sort(sc.touched.begin(), sc.touched.end());
    }
    nxt.id.clear();
    nxt.offset.assign(1, 0);
    nxt.labels.clear();
    nxt.id.reserve(sc.touched.size());
    nxt.offset.reserve(sc.touched.size() + 1);
    nxt.labels.reserve(sc.touched.size());
    for (const uint32_t y : sc.touched) {
        if (timeOnly) {
            nxt.labels.push_back(sc.bestOf[y]);
            sc.bestOf[y] = empty;
        } else {
            std::vector<DpLabel>& bucket = sc.buckets[y];
            exact = pruneLabels(bucket, options.labelCap, false) && exact;
            nxt.labels.insert(nxt.labels.end(), bucket.begin(), bucket.end());
            bucket.clear();
        }
        nxt.id.push_back(y);
        nxt.offset.push_back(static_cast<uint32_t>(nxt.labels.size()));
    }
    sc.touched.clear();
    // Every state with labels contributes each live strategy (labels counted once per state).
    const int64_t done = n * static_cast<int64_t>(live.size());
    return done;
}

void SegmentDp::findWindows() {
    auto sameClasses = [](const Classes& x, const Classes& y) { return x.classOf == y.classOf && x.representative == y.representative; };
    auto sameClassList = [&](const std::vector<Classes>& x, const std::vector<Classes>& y) {
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (!sameClasses(x[i], y[i])) return false;
        return true;
    };
    // Block c's step is block b's step.
    auto sameStep = [&](int b, int c) {
        const auto bu = static_cast<size_t>(b), cu = static_cast<size_t>(c);
        if (P->strategies(b) != P->strategies(c)) return false;
        for (int s = 0; s < P->strategies(b); ++s)
            if (allowedAt(b, s) != allowedAt(c, s)) return false;
        if (P->unaryTime[bu] != P->unaryTime[cu] || P->unaryMemSum[bu] != P->unaryMemSum[cu] || P->unaryMemMax[bu] != P->unaryMemMax[cu])
            return false;
        const StepPlan& x = m_plans[bu];
        const StepPlan& y = m_plans[cu];
        if (x.posInNext != y.posInNext || x.bPos != y.bPos || x.count != y.count || x.pb.size() != y.pb.size()) return false;
        if (!sameClassList(classesBefore(b), classesBefore(c)) || !sameClassList(x.nextClasses, y.nextClasses)) return false;
        for (size_t i = 0; i < x.pb.size(); ++i) {
            const PlanProblem::Impl::Pair &px = *x.pb[i].second, &py = *y.pb[i].second;
            if (x.pb[i].first != y.pb[i].first || ((px.table == 0 || px.table != py.table) && px.cost != py.cost)) return false;
        }
        return true;
    };
    // Leading frontier positions before `start` that no step of [start, start + length) reads or changes.
    auto passengersOf = [&](int start, int length) {
        size_t np = classesBefore(start).size();
        for (int b = start; b < start + length; ++b) {
            const StepPlan& sp = m_plans[static_cast<size_t>(b)];
            const auto& before = classesBefore(b);
            size_t k = 0;
            while (k < np && k < before.size() && sp.posInNext[k] == static_cast<int>(k) && sameClasses(before[k], sp.nextClasses[k])) ++k;
            np = k;
            for (const auto& [i, p] : sp.pb) np = std::min(np, static_cast<size_t>(i));
        }
        return np;
    };
    int nextFree = 1;
    for (const RepeatRun& run : repeatRuns(P->cover())) {
        const int length = P->cover().segments[static_cast<size_t>(run.firstSegment)].blockCount;
        if (run.count < 4 || length < 1) continue;
        const int runEnd = run.firstBlock + run.count * length;
        // The start whose matrix costs least (then the earliest), among the first two segments.
        int pos = std::max(nextFree, run.firstBlock);
        int failures = 0;  // a pinned or otherwise different segment ends a window; two in a row end the run
        while (failures < 2 && pos + 3 * length <= std::min(B, runEnd + length)) {
            std::optional<Window> best;
            double bestWork = 0;
            for (int start = pos; start < pos + length && start + 3 * length <= B; ++start) {
                Window w{start, length, 1, 1, 1, 1, 0};
                while (start + (w.repeats + 1) * length <= B) {
                    bool same = true;
                    for (int j = 0; j < length && same; ++j) same = sameStep(start + j, start + w.repeats * length + j);
                    if (!same) break;
                    ++w.repeats;
                }
                const size_t np = passengersOf(start, length);
                const auto& before = classesBefore(start);
                for (size_t i = 0; i < np; ++i) w.passengerStates *= static_cast<int64_t>(before[i].representative.size());
                w.local = countBefore(start) / w.passengerStates;
                w.localEnd = m_plans[static_cast<size_t>(start + length - 1)].count / w.passengerStates;
                for (int b = start; b < start + length; ++b) {
                    int allowedCount = 0;
                    for (int s = 0; s < P->strategies(b); ++s) allowedCount += allowedAt(b, s) ? 1 : 0;
                    w.plainWork += countBefore(b) * allowedCount;
                }
                // The matrix costs `local` DPs over the stretch from one start state each (measured
                // on one: while the start state's part of the frontier stays in it, a row covers
                // about 1/local of a plain stretch's states) and a min-plus product per repeat;
                // reuse must save at least half of the plain passes' work. The matrix holds
                // local × localEnd labels: at most 2^20 of them.
                if (w.repeats < 3 || w.local * w.localEnd > (int64_t{1} << 20)) continue;
                int64_t rowWork = 0;
                stretchFrom(w, 0, DpPass::fastest(), nullptr, 0, rowWork);
                const double matrixWork = static_cast<double>(w.local) * static_cast<double>(rowWork) +
                                          static_cast<double>(w.repeats) * static_cast<double>(w.passengerStates * w.local * w.localEnd);
                if (2 * matrixWork > static_cast<double>(w.repeats) * static_cast<double>(w.plainWork)) continue;
                if (!best || matrixWork < bestWork || (matrixWork == bestWork && w.repeats > best->repeats)) {
                    best = w;
                    bestWork = matrixWork;
                }
            }
            if (!best) {
                pos += length;
                ++failures;
                continue;
            }
            failures = 0;
            m_windows.push_back(*best);
            pos = best->start + best->repeats * best->length;
        }
        nextFree = std::max(nextFree, pos);
    }
}

SegmentDp::Layer SegmentDp::stretchFrom(const Window& w, int64_t x, const DpPass& mode, std::vector<Layer>* layers, int worker, int64_t& done) {
    Layer cur;
    cur.id.push_back(static_cast<uint32_t>(x));
    cur.offset.push_back(1);
    cur.labels.push_back(DpLabel{0.0, 0, 0, -1, -1, -1});
    bool exact = true;
    for (int b = w.start; b < w.start + w.length; ++b) {
        Layer nxt;
        done += step(b, cur, nxt, mode, exact, w.passengerStates, worker);
        if (layers) layers->push_back(std::move(cur));
        cur = std::move(nxt);
    }
    if (layers) layers->push_back(cur);
    return cur;
}

void SegmentDp::report(int b, int& lastProgress) const {
    if (!hooks.progress || (b - lastProgress < 8 && b != B - 1)) return;
    lastProgress = b;
    PlanProgress pr;
    pr.stage = "search";
    pr.mesh = meshLabel;
    pr.fraction = static_cast<double>(b + 1) / std::max(1, B);
    pr.pass = m_passes;
    hooks.progress(pr);
}

Result<DpResult> SegmentDp::run(const DpPass& mode) {
    ++m_passes;
    const bool timeOnly = mode.timeOnly;
    DpResult out;
    out.reusedBlocks = 0;
    Layer cur;
    cur.id.push_back(0);
    cur.labels.push_back(DpLabel{0.0, 0, 0, -1, -1, -1});
    cur.offset.push_back(1);
    std::vector<Layer> steps(static_cast<size_t>(B));
    std::vector<const Window*> stretchEnd(static_cast<size_t>(B), nullptr);  // last block of a reused stretch → its window
    std::vector<int> stretchStart(static_cast<size_t>(B), -1);
    bool exact = true;
    int lastProgress = -1;
    for (int b = 0; b < B;) {
        if (hooks.cancelled()) return makeError("plan.cancelled", "search cancelled");
        const Window* w = timeOnly ? m_windowAt[static_cast<size_t>(b)] : nullptr;
        if (!w) {
            Layer nxt;
            const int64_t done = step(b, cur, nxt, mode, exact, 1, -1);
            m_work += done;
            m_doneWork += done;
            steps[static_cast<size_t>(b)] = std::move(cur);
            cur = std::move(nxt);
            report(b, lastProgress);
            ++b;
            continue;
        }
        // The stretch's matrix: local start state × local end state.
        const int64_t L = w->local;
        const int64_t Lend = w->localEnd;
        // Its rows are independent: split among the workers. Kept as times, memory sums and working
        // sets apart, for the branch-free minimum; an empty cell has infinite time and memory 0.
        const auto cells = static_cast<size_t>(L * Lend);
        std::vector<double> cellT(cells, kEmpty);
        std::vector<int64_t> cellM(cells, 0), cellMx(cells, 0);
        std::vector<int64_t> rowWork(static_cast<size_t>(threads), 0);
        parallelFor(L, threads, 1, [&](int64_t x0, int64_t x1, int worker) {
            for (int64_t x = x0; x < x1; ++x) {
                if (hooks.cancelled()) return;
                const Layer end = stretchFrom(*w, x, mode, nullptr, worker, rowWork[static_cast<size_t>(worker)]);
                for (size_t i = 0; i < end.id.size(); ++i) {
                    const auto c = static_cast<size_t>(x * Lend + end.id[i]);
                    const DpLabel& l = end.labels[end.offset[i]];
                    cellT[c] = l.t;
                    cellM[c] = l.m;
                    cellMx[c] = l.mx;
                }
            }
        });
        if (hooks.cancelled()) return makeError("plan.cancelled", "search cancelled");
        for (const int64_t d : rowWork) m_doneWork += d;
        const auto ends = static_cast<size_t>(Lend);
        std::vector<double> gT(ends);
        std::vector<int64_t> gM(ends), gMx(ends), gX(ends);
        for (int k = 0; k < w->repeats; ++k) {
            const int start = w->start + k * w->length, last = start + w->length - 1;
            Layer nxt;
            // Min-plus product, row by row of the matrix (every end state still sees the start
            // states in ascending order, so ties go as in a plain step). An empty cell (infinite
            // time, memory 0) never wins: no sum of labels has a negative memory.
            size_t i = 0;  // cur's states, ascending: those of passenger value pv are pv × L + local
            for (int64_t pv = 0; pv < w->passengerStates; ++pv) {
                std::fill(gT.begin(), gT.end(), kEmpty);
                std::fill(gM.begin(), gM.end(), 0);
                std::fill(gMx.begin(), gMx.end(), 0);
                std::fill(gX.begin(), gX.end(), -1);
                for (; i < cur.id.size() && cur.id[i] < static_cast<uint64_t>((pv + 1) * L); ++i) {
                    const size_t s = cur.id[i];
                    const DpLabel& a = cur.labels[cur.offset[i]];
                    const size_t row = (s - static_cast<size_t>(pv * L)) * ends;
                    groupMinimum(ends, a.t, a.m, a.mx, static_cast<int64_t>(s), cellT.data() + row, cellM.data() + row, cellMx.data() + row, gT.data(),
                                 gM.data(), gMx.data(), gX.data());
                }
                for (size_t y = 0; y < ends; ++y) {
                    if (gT[y] == kEmpty) continue;
                    nxt.labels.push_back(DpLabel{gT[y], gM[y], gMx[y], static_cast<int32_t>(gX[y]), 0, -1});
                    nxt.id.push_back(static_cast<uint32_t>(pv * Lend + static_cast<int64_t>(y)));
                    nxt.offset.push_back(static_cast<uint32_t>(nxt.labels.size()));
                }
            }
            steps[static_cast<size_t>(start)] = std::move(cur);
            cur = std::move(nxt);
            stretchEnd[static_cast<size_t>(last)] = w;
            stretchStart[static_cast<size_t>(last)] = start;
            m_work += w->plainWork;
            out.reusedBlocks += w->length;
            report(last, lastProgress);
        }
        b = w->start + w->repeats * w->length;
    }
    // Final: frontier is empty, one state.
    const DpLabel* best = nullptr;
    int32_t bestIndex = -1;
    if (cur.id.size() == 1)
        for (uint32_t li = cur.offset[0]; li < cur.offset[1]; ++li) {
            const DpLabel& l = cur.labels[li];
            const int64_t mem = l.m + P->constMemSum + std::max(l.mx, P->constMemMax);
            if (!timeOnly && limit > 0 && mem > limit) continue;
            if (!best || l.t < best->t) {
                best = &l;
                bestIndex = static_cast<int32_t>(li - cur.offset[0]);
            }
        }
    if (!best) return makeError("plan.infeasible", "no plan fits");
    out.choice.assign(static_cast<size_t>(B), 0);
    int32_t state = 0, li = bestIndex;
    const Layer* layer = &cur;
    std::map<std::pair<const Window*, int64_t>, std::vector<Layer>> stretches;  // reused stretches, by start state
    for (int b = B - 1; b >= 0;) {
        const DpLabel& l = layer->labels[layer->offset[layer->indexOf(state)] + static_cast<uint32_t>(li)];
        if (const Window* w = stretchEnd[static_cast<size_t>(b)]) {
            // Replay the stretch from its local start state and trace it back from the local end state.
            const int start = stretchStart[static_cast<size_t>(b)];
            const int64_t Lend = w->localEnd;
            const int64_t x = l.prevState % w->local;
            auto it = stretches.find({w, x});
            if (it == stretches.end()) {
                std::vector<Layer> layers;
                int64_t done = 0;
                stretchFrom(*w, x, mode, &layers, 0, done);
                it = stretches.emplace(std::make_pair(w, x), std::move(layers)).first;
            }
            const std::vector<Layer>& layers = it->second;
            int32_t s = static_cast<int32_t>(state % Lend), sl = 0;
            for (int j = w->length - 1; j >= 0; --j) {
                const Layer& after = layers[static_cast<size_t>(j) + 1];
                const DpLabel& il = after.labels[after.offset[after.indexOf(s)] + static_cast<uint32_t>(sl)];
                out.choice[static_cast<size_t>(start + j)] = il.choice;
                s = il.prevState;
                sl = il.prevLabel;
            }
            state = l.prevState;
            li = l.prevLabel;
            layer = &steps[static_cast<size_t>(start)];
            b = start - 1;
            continue;
        }
        out.choice[static_cast<size_t>(b)] = l.choice;
        state = l.prevState;
        li = l.prevLabel;
        layer = &steps[static_cast<size_t>(b)];
        --b;
    }
    out.objectiveSeconds = best->t + P->constTime;
    out.memoryBytes = best->m + P->constMemSum + std::max(best->mx, P->constMemMax);
    out.exact = exact;
    return out;
}

}  // namespace cfp
