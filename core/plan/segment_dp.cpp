#include "plan/segment_dp.h"

#include <algorithm>
#include <map>
#include <optional>

#include "util/parallel.h"

namespace cfp {

namespace {

constexpr double kEmpty = std::numeric_limits<double>::infinity();

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
    dp.B = static_cast<int>(problem.analysis.blocks.blocks.size());
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
    // States [x0, x1) into scratch sc.
    const bool allLive = static_cast<int>(live.size()) == db;  // then live[j] == j
    auto relax = [&](int64_t x0, int64_t x1, Scratch& sc, bool& ex) {
        std::vector<int> assign(frontierClasses.size());
        std::vector<const double*> rows(sp.pb.size());
        std::vector<double> terms(live.size());  // per live strategy: own term plus its pair costs
        for (auto x = static_cast<size_t>(x0); x < static_cast<size_t>(x1); ++x) {
            const uint32_t l0 = cur.offset[x], l1 = cur.offset[x + 1];
            if (l0 == l1) continue;
            // Decode x over the current frontier.
            int64_t rest = static_cast<int64_t>(x);
            for (int i = static_cast<int>(frontierClasses.size()) - 1; i >= 0; --i) {
                const auto& fc = frontierClasses[static_cast<size_t>(i)];
                const int d = static_cast<int>(fc.representative.size());
                // The class's representative strategy: every strategy of the class costs the same
                // with b and with every later block.
                assign[static_cast<size_t>(i)] = fc.representative[static_cast<size_t>(rest % d)];
                rest /= d;
            }
            int64_t baseY = 0;
            for (size_t i = 0; i < frontierClasses.size(); ++i)
                if (const int j = sp.posInNext[i]; j >= 0)
                    baseY += sp.nextClasses[static_cast<size_t>(j)].classOf[static_cast<size_t>(assign[i])] * sp.stride[static_cast<size_t>(j)];
            // The pair cost rows of the frontier's strategies (the memory objective has no pair terms).
            const size_t npb = mode.memoryObjective ? 0 : sp.pb.size();
            for (size_t k = 0; k < npb; ++k)
                rows[k] = sp.pb[k].second->cost.data() + static_cast<size_t>(assign[static_cast<size_t>(sp.pb[k].first)]) * static_cast<size_t>(db);
            // Summed pair by pair over all strategies (the same order per strategy as one by one).
            std::copy(own.begin(), own.end(), terms.begin());
            for (size_t k = 0; k < npb; ++k) {
                const double* row = rows[k];
                if (allLive)
                    for (size_t j = 0; j < terms.size(); ++j) terms[j] += row[j];
                else
                    for (size_t j = 0; j < terms.size(); ++j) terms[j] += row[static_cast<size_t>(live[j])];
            }
            if (timeOnly && l1 == l0 + 1) {
                // One label (what a time-only pass keeps per state): the candidate is built
                // only when it beats the slot.
                const DpLabel& l = cur.labels[l0];
                for (size_t j = 0; j < live.size(); ++j) {
                    const double nt = l.t + terms[j];
                    const int64_t nm = l.m + liveSum[j];
                    DpLabel& slot = sc.bestOf[static_cast<size_t>(baseY + slotY[j])];
                    if (nt < slot.t || (nt == slot.t && nm < slot.m))
                        slot = DpLabel{nt, nm, std::max(l.mx, liveMax[j]), static_cast<int32_t>(x), 0, live[j]};
                }
                continue;
            }
            for (size_t j = 0; j < live.size(); ++j) {
                const int s = live[j];
                const auto su = static_cast<size_t>(s);
                const double t = terms[j];
                const int64_t y = baseY + slotY[j];
                if (timeOnly) {
                    // One label per state: the candidate is built only when it wins.
                    DpLabel& slot = sc.bestOf[static_cast<size_t>(y)];
                    for (uint32_t li = l0; li < l1; ++li) {
                        const DpLabel& l = cur.labels[li];
                        const double nt = l.t + t;
                        const int64_t nm = l.m + uSum[su];
                        if (nt < slot.t || (nt == slot.t && nm < slot.m))
                            slot = DpLabel{nt, nm, std::max(l.mx, uMax[su]), static_cast<int32_t>(x), static_cast<int32_t>(li - l0), s};
                    }
                    continue;
                }
                for (uint32_t li = l0; li < l1; ++li) {
                    const DpLabel& l = cur.labels[li];
                    const DpLabel nl{l.t + t, l.m + uSum[su], std::max(l.mx, uMax[su]), static_cast<int32_t>(x), static_cast<int32_t>(li - l0), s};
                    if (limit > 0 && nl.m + minRemaining[static_cast<size_t>(b) + 1] + P->constMemSum + std::max(nl.mx, P->constMemMax) > limit)
                        continue;
                    auto& bucket = sc.buckets[static_cast<size_t>(y)];
                    bucket.push_back(nl);
                    if (static_cast<int>(bucket.size()) > 4 * options.labelCap + 8) ex = pruneLabels(bucket, options.labelCap, false) && ex;
                }
            }
        }
    };
    const int64_t states = static_cast<int64_t>(cur.states());
    const int64_t stepWork = states * static_cast<int64_t>(live.size());
    const int ranges = worker < 0 && timeOnly && stepWork >= parallelStepWork
                           ? parallelRanges(states, threads, std::max<int64_t>(1, parallelStepWork / 4 / std::max<size_t>(1, live.size())))
                           : 1;
    Scratch& sc = m_scratch[static_cast<size_t>(std::max(worker, 0))];
    if (ranges > 1) {
        parallelFor(states, ranges, 1, [&](int64_t x0, int64_t x1, int w) {
            Scratch& mine = m_scratch[static_cast<size_t>(w)];
            mine.bestOf.assign(static_cast<size_t>(count), DpLabel{kEmpty, 0, 0, -1, -1, -1});
            bool unused = true;
            relax(x0, x1, mine, unused);
        });
        // Later ranges replace a label only when strictly better, as the sequential loop does.
        for (int w = 1; w < ranges; ++w)
            for (size_t y = 0; y < static_cast<size_t>(count); ++y) {
                const DpLabel& nl = m_scratch[static_cast<size_t>(w)].bestOf[y];
                DpLabel& slot = sc.bestOf[y];
                if (nl.t < slot.t || (nl.t == slot.t && nl.m < slot.m)) slot = nl;
            }
    } else {
        if (timeOnly)
            sc.bestOf.assign(static_cast<size_t>(count), DpLabel{kEmpty, 0, 0, -1, -1, -1});
        else
            sc.buckets.assign(static_cast<size_t>(count), {});
        relax(0, states, sc, exact);
    }
    nxt.offset.assign(static_cast<size_t>(count) + 1, 0);
    nxt.labels.clear();
    for (size_t y = 0; y < static_cast<size_t>(count); ++y) {
        if (timeOnly) {
            if (sc.bestOf[y].t != kEmpty) nxt.labels.push_back(sc.bestOf[y]);
        } else {
            exact = pruneLabels(sc.buckets[y], options.labelCap, false) && exact;
            nxt.labels.insert(nxt.labels.end(), sc.buckets[y].begin(), sc.buckets[y].end());
        }
        nxt.offset[y + 1] = static_cast<uint32_t>(nxt.labels.size());
    }
    // Every state with labels contributes each live strategy (labels counted once per state).
    int64_t done = 0;
    for (size_t x = 0; x < cur.states(); ++x)
        if (cur.offset[x] < cur.offset[x + 1]) done += static_cast<int64_t>(live.size());
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
        for (size_t i = 0; i < x.pb.size(); ++i)
            if (x.pb[i].first != y.pb[i].first || x.pb[i].second->cost != y.pb[i].second->cost) return false;
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
    for (const RepeatRun& run : repeatRuns(P->analysis.cover)) {
        const int length = P->analysis.cover.segments[static_cast<size_t>(run.firstSegment)].blockCount;
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
    cur.offset.assign(static_cast<size_t>(w.local) + 1, 0);
    for (size_t i = static_cast<size_t>(x) + 1; i < cur.offset.size(); ++i) cur.offset[i] = 1;
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
        // Its rows are independent: split among the workers.
        std::vector<DpLabel> matrix(static_cast<size_t>(L * Lend), DpLabel{kEmpty, 0, 0, -1, -1, -1});
        std::vector<int64_t> rowWork(static_cast<size_t>(threads), 0);
        parallelFor(L, threads, 1, [&](int64_t x0, int64_t x1, int worker) {
            for (int64_t x = x0; x < x1; ++x) {
                if (hooks.cancelled()) return;
                const Layer end = stretchFrom(*w, x, mode, nullptr, worker, rowWork[static_cast<size_t>(worker)]);
                for (int64_t y = 0; y < Lend; ++y)
                    if (end.offset[static_cast<size_t>(y)] < end.offset[static_cast<size_t>(y) + 1])
                        matrix[static_cast<size_t>(x * Lend + y)] = end.labels[end.offset[static_cast<size_t>(y)]];
            }
        });
        if (hooks.cancelled()) return makeError("plan.cancelled", "search cancelled");
        for (const int64_t d : rowWork) m_doneWork += d;
        std::vector<DpLabel> bestAt;  // per local end state, for one passenger value
        for (int k = 0; k < w->repeats; ++k) {
            const int start = w->start + k * w->length, last = start + w->length - 1;
            Layer nxt;
            nxt.offset.assign(static_cast<size_t>(w->passengerStates * Lend) + 1, 0);
            // Min-plus product, row by row of the matrix (every end state still sees the start
            // states in ascending order, so ties go as in a plain step).
            bestAt.resize(static_cast<size_t>(Lend));
            for (int64_t pv = 0; pv < w->passengerStates; ++pv) {
                std::fill(bestAt.begin(), bestAt.end(), DpLabel{kEmpty, 0, 0, -1, -1, -1});
                for (int64_t x = 0; x < L; ++x) {
                    const auto s = static_cast<size_t>(pv * L + x);
                    if (cur.offset[s] == cur.offset[s + 1]) continue;
                    const DpLabel& a = cur.labels[cur.offset[s]];
                    const DpLabel* row = matrix.data() + static_cast<size_t>(x * Lend);
                    for (size_t y = 0; y < static_cast<size_t>(Lend); ++y) {
                        const DpLabel& via = row[y];
                        if (via.t == kEmpty) continue;
                        const double t = a.t + via.t;
                        const int64_t m = a.m + via.m;
                        DpLabel& best = bestAt[y];
                        if (t < best.t || (t == best.t && m < best.m))
                            best = DpLabel{t, m, std::max(a.mx, via.mx), static_cast<int32_t>(s), 0, -1};
                    }
                }
                for (int64_t y = 0; y < Lend; ++y) {
                    if (bestAt[static_cast<size_t>(y)].t != kEmpty) nxt.labels.push_back(bestAt[static_cast<size_t>(y)]);
                    nxt.offset[static_cast<size_t>(pv * Lend + y) + 1] = static_cast<uint32_t>(nxt.labels.size());
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
    if (cur.states() == 1)
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
        const DpLabel& l = layer->labels[layer->offset[static_cast<size_t>(state)] + static_cast<uint32_t>(li)];
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
                const DpLabel& il = after.labels[after.offset[static_cast<size_t>(s)] + static_cast<uint32_t>(sl)];
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
