// PlanProblem::search: the fastest plan under a per-device memory limit, as named passes over the
// segment DP engine (segment_dp.h). In order:
//
//  1. fastestPass        the time-only DP; the answer whenever its plan fits.
//  2. leastMemoryPlan    the least memory any plan needs, exactly and without a pass (memory has no
//                        pair terms; PlanProblem::Impl::leastMemory): above the limit nothing fits
//                        and infeasibilityReport says so with its breakdown; otherwise its plan is
//                        the answer of last resort.
//     leastMemoryPass    the memory sum alone: the Lagrangian searches' least-memory end.
//  3. paretoPass         small problems: the exact Pareto DP under the limit.
//     lagrangianHullWalk large problems whose least-memory plan fits: time passes that charge λ per
//                        byte, walking the lower convex hull of (memory sum, time) from the fastest
//                        and least-memory plans towards the limit.
//     lagrangianBisection large problems where only plans with a smaller working set fit: λ raised
//                        until a plan fits, then bisected.
//     cappedFastestPass  only plans with a smaller working set fit and the price on the sum finds
//                        none: time passes under caps on the working set.
//  4. greedySlackFill    the Lagrangian plans (and the least-memory plan) leave memory unused:
//                        single-block changes that make the step faster and still fit, most time
//                        saved per byte first.
// docs/planning.md "Segment DP" explains why each pass is exact or bounded.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "plan/memory_passes.h"
#include "plan/segment_dp.h"

namespace cfp {

namespace memory_passes {

// "1228.1 ms"
std::string millis(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
    return text;
}

Candidate fromPass(const DpResult& r) { return {r.choice, r.objectiveSeconds, r.memoryBytes, r.exact, r.reusedBlocks}; }

// The memory sum and the largest working set of an assignment.
std::pair<int64_t, int64_t> sumAndMax(const PlanProblem::Impl& P, const Choices& st) {
    int64_t sum = P.constMemSum, mx = P.constMemMax;
    for (size_t b = 0; b < st.size(); ++b) {
        sum += P.unaryMemSum[b][static_cast<size_t>(st[b])];
        mx = std::max(mx, P.unaryMemMax[b][static_cast<size_t>(st[b])]);
    }
    return {sum, mx};
}

// A plan found by a relaxed pass, priced exactly from the problem's terms.
Candidate priced(const PlanProblem::Impl& P, Choices choice) {
    Candidate c;
    c.objectiveSeconds = P.objective(choice);
    c.memoryBytes = P.memory(choice);
    c.exact = false;
    c.choice = std::move(choice);
    return c;
}

Result<Candidate> fastestPass(SegmentDp& dp) {
    auto r = dp.run(DpPass::fastest());
    if (!r) return r.error();
    return fromPass(*r);
}

Result<Candidate> leastMemoryPass(SegmentDp& dp, int64_t workingCap) {
    auto r = dp.run(DpPass::leastMemory(workingCap));
    if (!r) return r.error();
    return fromPass(*r);
}

// The exact Pareto pass; plan.infeasible when no plan fits.
Result<Candidate> paretoPass(SegmentDp& dp) {
    auto r = dp.run(DpPass::pareto());
    if (!r) return r.error();
    return fromPass(*r);
}

// A Lagrangian pass at price lambda, priced exactly.
Result<Candidate> lagrangianPass(SegmentDp& dp, double lambda) {
    auto r = dp.run(DpPass::lagrangian(lambda));
    if (!r) return r.error();
    Candidate c = priced(dp.problem(), r->choice);
    c.reusedBlocks = r->reusedBlocks;
    return c;
}

// The least-memory plan fits: it and the fastest plan are the two ends of the lower convex hull of
// (memory sum, time) over all plans, the plans a Lagrangian pass can return. Walk the hull towards
// the limit: lambda = the slope between the nearest known plan that does not fit (a) and the
// nearest that fits (c); the pass at that price returns a hull plan strictly below the line a–c,
// which replaces a or c, or nothing new (its value equals the line's): then a and c are adjacent on
// the hull. Each pass finds a new hull plan, so the walk ends. Returns the fastest plan that fits
// (the least-memory plan at worst), or nullopt once a pass's Lagrangian lower bound shows that no
// plan that fits can be of use (`hopeless`, as the bisection's).
Result<std::optional<Candidate>> lagrangianHullWalk(SegmentDp& dp, int64_t limit, const Candidate& fastest, const Candidate& lean, int steps,
                                                    const std::function<bool(double, const Candidate&)>& hopeless) {
    const PlanProblem::Impl& P = dp.problem();
    Candidate best = lean;
    double ta = fastest.objectiveSeconds, tc = lean.objectiveSeconds;
    int64_t sa = sumAndMax(P, fastest.choice).first, sc = sumAndMax(P, lean.choice).first;
    for (int i = 0; i < steps && sa > sc; ++i) {
        const double lambda = (tc - ta) / static_cast<double>(sa - sc);
        if (!(lambda > 0)) break;
        auto last = lagrangianPass(dp, lambda);
        if (!last) return last.error();
        if (hopeless && hopeless(lambda, *last)) return std::optional<Candidate>{};
        const bool fits = last->memoryBytes <= limit;
        if (fits && last->objectiveSeconds < best.objectiveSeconds) best = *last;
        const double t = last->objectiveSeconds;
        const int64_t sum = sumAndMax(P, last->choice).first;
        const double line = ta + lambda * static_cast<double>(sa);
        if (t + lambda * static_cast<double>(sum) >= line - 1e-9 * std::abs(line)) break;
        (fits ? tc : ta) = t;
        (fits ? sc : sa) = sum;
    }
    return std::optional<Candidate>{best};
}

// Only plans with a smaller working set than the least-memory plan's fit, if any: a first lambda
// (`startLambda`, else 1 ms per GiB), then ×8 until a plan fits or memory stops paying (two raises
// in a row without less memory); then lambda bisected (geometrically) `steps` times. nullopt when
// no pass fits.
Result<std::optional<Candidate>> lagrangianBisection(SegmentDp& dp, int64_t limit, int steps, int64_t floorMemory, double startLambda,
                                                     const std::function<bool(double, const Candidate&)>& hopeless) {
    std::optional<Candidate> best;
    auto tryLambda = [&](double lambda) -> Result<bool> {
        auto last = lagrangianPass(dp, lambda);
        if (!last) return last.error();
        const bool fits = last->memoryBytes <= limit;
        if (fits && (!best || last->objectiveSeconds < best->objectiveSeconds)) best = *last;
        return fits;
    };
    double lo = 0, hi = startLambda > 0 ? startLambda : 1e-3 / (1024.0 * 1024.0 * 1024.0);
    bool found = false;
    // Raised until a plan fits; or until its plan needs no more than the least-sum plan
    // (`floorMemory`: a higher price finds no less), or raising it has stopped lowering the memory
    // twice in a row, or the caller says no plan that fits can be of use (`hopeless`, from the
    // pass's Lagrangian lower bound).
    int64_t lastMemory = std::numeric_limits<int64_t>::max();
    for (int i = 0, stalled = 0; i < 16 && !found && stalled < 2; ++i) {
        auto last = lagrangianPass(dp, hi);
        if (!last) return last.error();
        found = last->memoryBytes <= limit;
        if (found && (!best || last->objectiveSeconds < best->objectiveSeconds)) best = *last;
        if (!found) {
            if (hopeless && hopeless(hi, *last)) break;
            lo = hi;
            hi *= 8;
            stalled = last->memoryBytes < lastMemory ? 0 : stalled + 1;
            lastMemory = std::min(lastMemory, last->memoryBytes);
            if (last->memoryBytes <= floorMemory) break;
        }
    }
    if (found)
        for (int i = 0; i < steps; ++i) {
            const double mid = lo > 0 ? std::sqrt(lo * hi) : hi / 8;
            auto fits = tryLambda(mid);
            if (!fits) return fits.error();
            (*fits ? hi : lo) = mid;
        }
    return best;
}

// Single-block changes (strategy or recomputation) that make the step faster and still fit, the
// most time saved per byte first (a change that also saves memory first of all), until none is
// left (at most 4·B rounds and 2^27 changes looked at). Each change's time delta is kept up to
// date: a change of block b alters only b's row and its pair partners' rows.
void greedySlackFill(const SegmentDp& dp, int64_t limit, Candidate& r) {
    const PlanProblem::Impl& P = dp.problem();
    const int B = dp.blocks();
    std::vector<std::vector<const PlanProblem::Impl::Pair*>> touching(static_cast<size_t>(B));
    for (const auto& p : P.pairs) {
        touching[static_cast<size_t>(p.a)].push_back(&p);
        touching[static_cast<size_t>(p.b)].push_back(&p);
    }
    Choices& st = r.choice;
    auto uMaxOf = [&](int b) { return P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])]; };
    int64_t sum = P.constMemSum;
    for (int b = 0; b < B; ++b) sum += P.unaryMemSum[static_cast<size_t>(b)][static_cast<size_t>(st[static_cast<size_t>(b)])];
    std::vector<std::vector<double>> dtOf(static_cast<size_t>(B));
    auto computeDt = [&](int b) {
        const auto bu = static_cast<size_t>(b);
        const int cur = st[bu];
        auto& row = dtOf[bu];
        row.assign(static_cast<size_t>(P.strategies(b)), 0.0);
        for (int c = 0; c < P.strategies(b); ++c) {
            const auto cu = static_cast<size_t>(c);
            double dt = P.unaryTime[bu][cu] - P.unaryTime[bu][static_cast<size_t>(cur)];
            for (const PlanProblem::Impl::Pair* p : touching[bu]) {
                const auto db = static_cast<size_t>(P.strategies(p->b));
                const auto sa = static_cast<size_t>(st[static_cast<size_t>(p->a)]), sb = static_cast<size_t>(st[static_cast<size_t>(p->b)]);
                dt += p->a == b ? p->cost[cu * db + sb] - p->cost[sa * db + sb] : p->cost[sa * db + cu] - p->cost[sa * db + sb];
            }
            row[cu] = dt;
        }
    };
    for (int b = 0; b < B; ++b) computeDt(b);
    int64_t looked = 0;
    for (int iteration = 0; iteration < 4 * B && looked < (int64_t{1} << 27); ++iteration) {
        // The two largest working sets, to know the largest without any one block.
        int top = -1;
        int64_t max1 = P.constMemMax, max2 = P.constMemMax;
        for (int b = 0; b < B; ++b) {
            const int64_t v = uMaxOf(b);
            if (v > max1) {
                max2 = max1;
                max1 = v;
                top = b;
            } else if (v > max2) {
                max2 = v;
            }
        }
        const int64_t mem = sum + max1;
        double bestScore = 0, bestGain = 0;
        int bestBlock = -1, bestChoice = -1;
        for (int b = 0; b < B; ++b) {
            const auto bu = static_cast<size_t>(b);
            const int cur = st[bu];
            const int64_t othersMax = b == top ? max2 : max1;
            looked += P.strategies(b);
            for (int c = 0; c < P.strategies(b); ++c) {
                if (c == cur || !dp.allowedAt(b, c)) continue;
                const auto cu = static_cast<size_t>(c);
                const int64_t newMem = sum - P.unaryMemSum[bu][static_cast<size_t>(cur)] + P.unaryMemSum[bu][cu] +
                                       std::max(othersMax, P.unaryMemMax[bu][cu]);
                if (newMem > limit) continue;
                const double gain = -dtOf[bu][cu];
                if (gain <= 1e-12 * std::max(1e-9, r.objectiveSeconds)) continue;
                const int64_t dm = newMem - mem;
                const double score = dm <= 0 ? std::numeric_limits<double>::infinity() : gain / static_cast<double>(dm);
                if (score > bestScore || (score == bestScore && gain > bestGain)) {
                    bestScore = score;
                    bestGain = gain;
                    bestBlock = b;
                    bestChoice = c;
                }
            }
        }
        if (bestBlock < 0) break;
        const auto bu = static_cast<size_t>(bestBlock);
        sum += P.unaryMemSum[bu][static_cast<size_t>(bestChoice)] - P.unaryMemSum[bu][static_cast<size_t>(st[bu])];
        st[bu] = bestChoice;
        computeDt(bestBlock);
        for (const PlanProblem::Impl::Pair* p : touching[bu]) computeDt(p->a == bestBlock ? p->b : p->a);
    }
    r.objectiveSeconds = P.objective(st);
    r.memoryBytes = P.memory(st);
}

// The working-set sizes below `below` that some allowed choice has, largest first, sampled evenly
// to at most `budget`.
std::vector<int64_t> workingSetCaps(const SegmentDp& dp, int64_t below, size_t budget) {
    const PlanProblem::Impl& P = dp.problem();
    std::vector<int64_t> caps;
    for (int b = 0; b < dp.blocks(); ++b)
        for (int s = 0; s < P.strategies(b); ++s)
            if (const int64_t v = P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)]; dp.allowedAt(b, s) && v < below) caps.push_back(v);
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    std::vector<int64_t> sampled;
    const size_t k = caps.size() <= budget ? caps.size() : std::min<size_t>(budget, 12);
    for (size_t i = 0; i < k; ++i) sampled.push_back(caps[caps.size() - 1 - i * (caps.size() - 1) / std::max<size_t>(1, k - 1)]);
    return sampled;
}

// Where the largest working set, not the memory sum, keeps plans out (a Lagrangian price on the sum
// cannot lower it): the fastest plan among time passes whose choices keep their working set under
// caps below the fastest plan's, each cap a working-set size some choice has. nullopt when none fits.
Result<std::optional<Candidate>> cappedFastestPass(SegmentDp& dp, int64_t limit, const Candidate& fastest, int64_t memoryPassWork) {
    const PlanProblem::Impl& P = dp.problem();
    const auto budget = static_cast<size_t>(std::clamp<int64_t>((int64_t{1} << 27) / memoryPassWork, 2, 64));
    std::optional<Candidate> best;
    for (const int64_t cap : workingSetCaps(dp, sumAndMax(P, fastest.choice).second, budget)) {
        DpPass pass = DpPass::fastest();
        pass.workingCap = cap;
        auto r = dp.run(pass);
        if (!r) {
            if (r.error().code != "plan.infeasible") return r.error();
            break;  // some block has no choice within the cap, nor within any smaller one
        }
        Candidate c = priced(P, r->choice);
        c.reusedBlocks = r->reusedBlocks;
        if (c.memoryBytes <= limit && (!best || c.objectiveSeconds < best->objectiveSeconds)) best = std::move(c);
    }
    return best;
}

// The least memory any plan needs, exactly (PlanProblem::Impl::leastMemory), and a plan that needs it.
Candidate leastMemoryPlan(const SegmentDp& dp) {
    Choices choice;
    dp.problem().leastMemory([&](int b, int s) { return dp.allowedAt(b, s); }, &choice);
    return priced(dp.problem(), std::move(choice));
}

Error infeasibilityReport(const PlanProblem& problem, const Candidate& smallest, int64_t limit, const std::string& meshLabel) {
    const MemoryBreakdown mb = problem.memoryBreakdown(problem.impl().assignmentOf(smallest.choice));
    const int64_t need = smallest.memoryBytes;
    return makeError("plan.infeasible", "no plan on mesh " + meshLabel + " fits in " + gib(limit) +
                                            " per device: the smallest needs " + gib(need) + " (" + gib(need - limit) +
                                            " short: weights " + gib(mb.weights) + ", gradients " + gib(mb.gradients) +
                                            ", optimizer " + gib(mb.optimizer) + ", activations " + gib(mb.activations) +
                                            ", largest op " + gib(mb.transient) +
                                            "); use more devices, a larger memory limit, more gradient-accumulation rounds or a smaller batch");
}

}  // namespace memory_passes

using namespace memory_passes;

Result<SearchResult> PlanProblem::search(int64_t limit, const StrategyMask& allowed, const SearchOptions& options, const PlanHooks& hooks,
                                         const std::string& meshLabel, int64_t* smallestNeed, double* fastestSeconds) const {
    const Impl& P = *m;
    auto engine = SegmentDp::create(P, limit, allowed, options, hooks, meshLabel);
    if (!engine) return engine.error();
    SegmentDp& dp = *engine;
    auto done = [&](const Candidate& c, bool limitBinding = true) {
        SearchResult r;
        r.limitBinding = limitBinding;
        r.assignment = P.assignmentOf(c.choice);
        r.objectiveSeconds = c.objectiveSeconds;
        r.memoryBytes = c.memoryBytes;
        r.exact = c.exact;
        if (!P.cutPairs.empty()) {
            // The search ran without the cut pairs' residuals: price the plan with them.
            r.objectiveSeconds = P.objective(c.choice);
            r.exact = false;
            r.cutPairs = static_cast<int>(P.cutPairs.size());
            r.gapBoundSeconds = P.cutGap(c.choice);
        }
        r.reusedBlocks = c.reusedBlocks;
        r.passes = dp.passes();
        return r;
    };
    if (options.briefInfeasibility && limit > 0) {
        // Every plan needs at least the blocks' least memory (Impl::leastMemoryBound, over every
        // choice, pinned or not): above the limit, nothing fits, and no pass runs.
        if (const int64_t bound = P.leastMemoryBound(); bound > limit) {
            if (smallestNeed) *smallestNeed = bound;
            return noPlanFits(meshLabel, limit, bound);
        }
    }
    auto fastest = fastestPass(dp);
    if (!fastest) return fastest.error();
    if (fastestSeconds) *fastestSeconds = fastest->objectiveSeconds;
    if (fastest->objectiveSeconds >= options.cutoffSeconds)
        return makeError("plan.dominated", "no plan on mesh " + meshLabel + " is faster than " + millis(options.cutoffSeconds) +
                                               " (its fastest, memory aside, takes " + millis(fastest->objectiveSeconds) + ")");
    if (limit <= 0 || fastest->memoryBytes <= limit) return done(*fastest, false);
    // The least memory any plan needs, exactly (no pass). Above the limit nothing fits: said in
    // brief where another mesh or count has a plan or will be reported, else with the breakdown.
    Candidate smallest = leastMemoryPlan(dp);
    if (smallest.memoryBytes > limit) {
        if (smallestNeed) *smallestNeed = smallest.memoryBytes;
        if (std::isfinite(options.cutoffSeconds) || options.briefInfeasibility)
            return noPlanFits(meshLabel, limit, smallest.memoryBytes);
        return infeasibilityReport(*this, smallest, limit, meshLabel);
    }
    const int64_t timeOnlyWork = dp.work();
    auto leanest = leastMemoryPass(dp);
    if (!leanest) return leanest.error();
    // The pass's nominal work (a reused stretch counted as stepped through), so that the report's
    // budget — and with it the plan it finds — is the same with and without reused stretches.
    const int64_t memoryPassWork = std::max<int64_t>(1, dp.work() - timeOnlyWork);
    const auto [leanSum, leanMax] = sumAndMax(P, leanest->choice);
    int64_t leastMax = P.constMemMax;
    for (int b = 0; b < dp.blocks(); ++b) {
        int64_t least = std::numeric_limits<int64_t>::max();
        for (int s = 0; s < P.strategies(b); ++s)
            if (dp.allowedAt(b, s)) least = std::min(least, P.unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)]);
        leastMax = std::max(leastMax, least);
    }
    // Every plan that fits has a memory sum of at most limit − leastMax, so a pass at price λ bounds
    // its time from below by (pass time + λ·sum) − λ·(limit − leastMax); once that reaches the
    // cutoff (a faster plan elsewhere), no plan here is of use: plan.dominated, without more passes.
    double dominatedBound = 0;
    auto hopeless = [&](double lambda, const Candidate& c) {
        if (!std::isfinite(options.cutoffSeconds)) return false;
        const double bound = c.objectiveSeconds + lambda * static_cast<double>(sumAndMax(P, c.choice).first) -
                             lambda * static_cast<double>(limit - leastMax);
        if (bound < options.cutoffSeconds) return false;
        dominatedBound = bound;
        return true;
    };
    auto dominated = [&] {
        return makeError("plan.dominated", "no plan on mesh " + meshLabel + " that fits in " + gib(limit) + " is faster than " +
                                               millis(options.cutoffSeconds) + " (a memory-priced pass bounds them below by " +
                                               millis(dominatedBound) + ")");
    };
    // Some plan fits (the least-memory one). Small problems: the exact Pareto pass. Large ones (its
    // cost would be about labelCap times the fastest pass's): the Lagrangian searches, whose plan
    // fits but is not proven optimal.
    if (timeOnlyWork * options.labelCap <= options.paretoWorkLimit) {
        auto constrained = paretoPass(dp);
        if (constrained) return done(*constrained);
        if (constrained.error().code != "plan.infeasible") return constrained.error();
    } else if (leanSum + leanMax <= limit) {
        Candidate lean = priced(P, leanest->choice);
        lean.reusedBlocks = leanest->reusedBlocks;
        auto best = lagrangianHullWalk(dp, limit, *fastest, lean, options.lagrangeSteps, hopeless);
        if (!best) return best.error();
        if (!*best) return dominated();
        greedySlackFill(dp, limit, **best);
        return done(**best);
    } else {
        // The first price is scaled to the problem.
        const double start = fastest->objectiveSeconds / static_cast<double>(std::max<int64_t>(1, fastest->memoryBytes)) / 64;
        auto best = lagrangianBisection(dp, limit, options.lagrangeSteps, leanSum + leanMax, start, hopeless);
        if (!best) return best.error();
        if (*best) {
            greedySlackFill(dp, limit, **best);
            return done(**best);
        }
        if (dominatedBound > 0) return dominated();
    }
    auto capped = cappedFastestPass(dp, limit, *fastest, memoryPassWork);
    if (!capped) return capped.error();
    if (*capped) {
        greedySlackFill(dp, limit, **capped);
        return done(**capped);
    }
    // The searches above found none that fits: the least-memory plan, filled.
    greedySlackFill(dp, limit, smallest);
    return done(smallest);
}

}  // namespace cfp
