// The memory searches' passes (plan/memory_passes.h), each run alone on a problem small enough to
// enumerate, against brute force over every assignment.

#include <QtTest>

#include <cmath>
#include <limits>
#include <functional>

#include "analysis/analysis.h"
#include "hardware/hardware.h"
#include "approx.h"
#include "must.h"
#include "plan/memory_passes.h"
#include "tiny_gpt.h"

using namespace cfp;
using namespace cfp::memory_passes;
using cfp::test::close;
using cfp::test::must;
using cfp::test::tinyGpt;

namespace {

PlanProblem problemOf(const Graph& g) {
    const Mesh mesh = must(assignLinkClasses(must(parseMesh("4"), "mesh"), 8), "link classes");
    auto model = must(CostModel::create(must(loadHardware("h100-sxm"), "hw"), mesh), "cost model");
    return must(PlanProblem::build(g, must(analyzeGraph(g, mesh), "analysis"), model), "problem");
}

// Every assignment in the problem's choice indices.
void forEachChoice(const PlanProblem::Impl& P, int blocks, const std::function<void(const Choices&)>& f) {
    Choices c(static_cast<size_t>(blocks), 0);
    while (true) {
        f(c);
        int b = blocks - 1;
        while (b >= 0 && ++c[static_cast<size_t>(b)] == P.strategies(b)) c[static_cast<size_t>(b--)] = 0;
        if (b < 0) return;
    }
}

struct Truth {
    double fastest = INFINITY;
    int64_t fastestMemory = 0, leastSum = INT64_MAX, leastTotal = INT64_MAX, leanMemory = 0;
};

}  // namespace

class TestMemoryPasses : public QObject {
    Q_OBJECT
    Graph g_ = tinyGpt(1);
    PlanProblem p_ = problemOf(g_);
    const PlanProblem::Impl& P() const { return p_.impl(); }
    Truth truth_;

    SegmentDp engine(int64_t limit, int labelCap = 1 << 20) const {
        SearchOptions o;
        o.labelCap = labelCap;
        return must(SegmentDp::create(P(), limit, {}, o, {}, "{x=4}"), "engine");
    }
    double bestUnder(int64_t limit) const {
        double best = INFINITY;
        forEachChoice(P(), p_.blockCount(), [&](const Choices& c) {
            if (P().memory(c) <= limit) best = std::min(best, P().objective(c));
        });
        return best;
    }

private slots:
    void initTestCase() {
        double combos = 1;
        for (int b = 0; b < p_.blockCount(); ++b) combos *= P().strategies(b);
        QVERIFY2(combos >= 27 && combos <= 2e6, std::to_string(combos).c_str());
        forEachChoice(P(), p_.blockCount(), [&](const Choices& c) {
            const double t = P().objective(c);
            if (t < truth_.fastest) {
                truth_.fastest = t;
                truth_.fastestMemory = P().memory(c);
            }
            truth_.leastSum = std::min(truth_.leastSum, sumAndMax(P(), c).first);
            truth_.leastTotal = std::min(truth_.leastTotal, P().memory(c));
        });
        QVERIFY(truth_.leastTotal < truth_.fastestMemory);
        SegmentDp dp = engine(0);
        truth_.leanMemory = P().memory(must(leastMemoryPass(dp), "lean").choice);
        QVERIFY(truth_.leanMemory < truth_.fastestMemory);
    }
    // A limit between the least-memory pass's plan (which the Lagrangian passes start from) and the
    // fastest plan.
    int64_t midLimit() const { return (truth_.leanMemory + truth_.fastestMemory) / 2; }

    void fastestPassIsTheFastest() {
        SegmentDp dp = engine(0);
        const Candidate c = must(fastestPass(dp), "fastest");
        QVERIFY(close(c.objectiveSeconds, truth_.fastest));
        QVERIFY(close(P().objective(c.choice), c.objectiveSeconds));
        QCOMPARE(dp.passes(), 1);
    }

    void leastMemoryPassHasTheLeastSum() {
        SegmentDp dp = engine(0);
        const Candidate c = must(leastMemoryPass(dp), "least memory");
        QCOMPARE(sumAndMax(P(), c.choice).first, truth_.leastSum);
        // Under a working-set cap below every choice of some block: nothing.
        auto none = leastMemoryPass(dp, 0);
        QVERIFY(!none);
        QCOMPARE(QString::fromStdString(none.error().code), QStringLiteral("plan.infeasible"));
    }

    void paretoPassIsExactUnderTheLimit() {
        const int64_t limit = (truth_.leastTotal + truth_.fastestMemory) / 2;
        SegmentDp dp = engine(limit);
        const Candidate c = must(paretoPass(dp), "pareto");
        QVERIFY(c.exact);
        QVERIFY(c.memoryBytes <= limit);
        QVERIFY2(close(c.objectiveSeconds, bestUnder(limit)), (std::to_string(c.objectiveSeconds) + " vs " + std::to_string(bestUnder(limit))).c_str());
    }

    void lagrangianHullWalkFitsAndSlackFillOnlyImproves() {
        const int64_t limit = midLimit();
        SegmentDp dp = engine(limit);
        const Candidate fastest = must(fastestPass(dp), "fastest");
        const Candidate lean = priced(P(), must(leastMemoryPass(dp), "lean").choice);
        QVERIFY(lean.memoryBytes <= limit);
        Candidate walk = *must(lagrangianHullWalk(dp, limit, fastest, lean, 8), "hull walk");
        QVERIFY(walk.memoryBytes <= limit);
        QVERIFY(walk.objectiveSeconds >= bestUnder(limit) * (1 - 1e-12));
        const double before = walk.objectiveSeconds;
        greedySlackFill(dp, limit, walk);
        QVERIFY(walk.memoryBytes <= limit);
        QCOMPARE(walk.memoryBytes, P().memory(walk.choice));
        QVERIFY(walk.objectiveSeconds <= before * (1 + 1e-12));
        QVERIFY(walk.objectiveSeconds >= bestUnder(limit) * (1 - 1e-12));
        // A Lagrangian pass at price 0 is the fastest plan.
        QVERIFY(close(must(lagrangianPass(dp, 0.0), "lambda 0").objectiveSeconds, truth_.fastest));
        // The walk's stop on a Lagrangian bound (the search's `hopeless`): every plan that fits has
        // a memory sum of at most limit − leastMax, so a pass bounds them below; the bound never
        // passes the best plan that fits, and a cutoff at it is never declared hopeless.
        int64_t leastMax = P().constMemMax;
        for (int b = 0; b < dp.blocks(); ++b) {
            int64_t least = std::numeric_limits<int64_t>::max();
            for (int s = 0; s < P().strategies(b); ++s) least = std::min(least, P().unaryMemMax[static_cast<size_t>(b)][static_cast<size_t>(s)]);
            leastMax = std::max(leastMax, least);
        }
        double highest = 0;
        int passes = 0;
        auto bound = [&](double cutoff) {
            return [&, cutoff](double lambda, const Candidate& c) {
                ++passes;
                const double b = c.objectiveSeconds + lambda * static_cast<double>(sumAndMax(P(), c.choice).first) -
                                 lambda * static_cast<double>(limit - leastMax);
                highest = std::max(highest, b);
                return b >= cutoff;
            };
        };
        const auto kept = must(lagrangianHullWalk(dp, limit, fastest, lean, 8, bound(bestUnder(limit) * (1 + 1e-9))), "bounded walk");
        QVERIFY(kept.has_value());
        QVERIFY(passes > 0);
        QVERIFY2(highest <= bestUnder(limit) * (1 + 1e-12), (std::to_string(highest) + " vs " + std::to_string(bestUnder(limit))).c_str());
        QVERIFY(!must(lagrangianHullWalk(dp, limit, fastest, lean, 8, [](double, const Candidate&) { return true; }), "hopeless").has_value());
    }

    void bisectionFindsAPlanThatFits() {
        // Between the plan a very high price on memory gives (what the bisection reaches at most)
        // and the fastest plan.
        SegmentDp probe = engine(0);
        const int64_t dear = must(lagrangianPass(probe, 1.0), "lambda 1").memoryBytes;
        QVERIFY(dear < truth_.fastestMemory);
        const int64_t limit = (dear + truth_.fastestMemory) / 2;
        SegmentDp dp = engine(limit);
        const double start = truth_.fastest / static_cast<double>(truth_.fastestMemory) / 64;  // as the search scales it
        auto found = must(lagrangianBisection(dp, limit, 8, 0, start), "bisection");
        QVERIFY(found.has_value());
        QVERIFY(found->memoryBytes <= limit);
        QVERIFY(found->objectiveSeconds >= bestUnder(limit) * (1 - 1e-12));
    }

    // Capped time passes: under a limit below the fastest plan's memory that some plan with a
    // smaller working set meets, a plan that fits and is no faster than the optimum. Tried on tiny
    // GPTs of a few shapes; at least one must have such a plan.
    void cappedFastestPassFits() {
        int tried = 0;
        for (const auto& [hidden, seq] : {std::pair<int64_t, int64_t>{64, 16}, {64, 64}, {32, 128}, {128, 32}}) {
            const Graph g = tinyGpt(1, hidden, 8, seq);
            const PlanProblem p = problemOf(g);
            const PlanProblem::Impl& Q = p.impl();
            SearchOptions o;
            SegmentDp probe = must(SegmentDp::create(Q, 0, {}, o, {}, "{x=4}"), "engine");
            const Candidate fastest = must(fastestPass(probe), "fastest");
            const int64_t fastestMemory = Q.memory(fastest.choice), fastestMax = sumAndMax(Q, fastest.choice).second;
            // The least memory among plans with a smaller working set than the fastest's, and the
            // fastest plan under a limit.
            int64_t least = INT64_MAX, leastAll = INT64_MAX;
            forEachChoice(Q, p.blockCount(), [&](const Choices& c) {
                leastAll = std::min(leastAll, Q.memory(c));
                if (sumAndMax(Q, c).second < fastestMax) least = std::min(least, Q.memory(c));
            });
            // Nothing under a limit below every plan: nullopt.
            SegmentDp none = must(SegmentDp::create(Q, leastAll - 1, {}, o, {}, "{x=4}"), "engine");
            QVERIFY(!must(cappedFastestPass(none, leastAll - 1, fastest, 1), "none").has_value());
            if (least >= fastestMemory) continue;
            ++tried;
            const int64_t limit = (least + fastestMemory) / 2;
            SegmentDp dp = must(SegmentDp::create(Q, limit, {}, o, {}, "{x=4}"), "engine");
            auto found = must(cappedFastestPass(dp, limit, fastest, 1), "capped");
            QVERIFY(found.has_value());
            QVERIFY(found->memoryBytes <= limit);
            QCOMPARE(found->memoryBytes, Q.memory(found->choice));
            QVERIFY(sumAndMax(Q, found->choice).second < fastestMax);
            double best = INFINITY;
            forEachChoice(Q, p.blockCount(), [&](const Choices& c) {
                if (Q.memory(c) <= limit) best = std::min(best, Q.objective(c));
            });
            QVERIFY(found->objectiveSeconds >= best * (1 - 1e-12));
        }
        QVERIFY2(tried >= 1, std::to_string(tried).c_str());
    }

    void leastMemoryPlanAndTheReport() {
        SegmentDp dp = engine(truth_.leastTotal - 1);
        // Exact (brute force), with no pass, and the plan needs what it says; the build's bound
        // (every choice) is the same here (no pins).
        const Candidate smallest = leastMemoryPlan(dp);
        QCOMPARE(smallest.memoryBytes, truth_.leastTotal);
        QCOMPARE(P().memory(smallest.choice), truth_.leastTotal);
        QCOMPARE(P().leastMemoryBound(), truth_.leastTotal);
        QCOMPARE(dp.passes(), 0);
        // Restricted to every other choice of each block (as pins restrict), against brute force.
        std::vector<int32_t> restrictedChoice;
        const int64_t restricted = P().leastMemory([](int, int s) { return s % 2 == 0; }, &restrictedChoice);
        int64_t truth = std::numeric_limits<int64_t>::max();
        forEachChoice(P(), p_.blockCount(), [&](const Choices& c) {
            for (const int32_t s : c)
                if (s % 2 != 0) return;
            truth = std::min(truth, P().memory(c));
        });
        QCOMPARE(restricted, truth);
        QCOMPARE(P().memory(restrictedChoice), truth);
        QVERIFY(restricted > truth_.leastTotal || restricted == truth_.leastTotal);
        const Error e = infeasibilityReport(p_, smallest, truth_.leastTotal - 1, "{x=4}");
        QCOMPARE(QString::fromStdString(e.code), QStringLiteral("plan.infeasible"));
        QVERIFY(QString::fromStdString(e.message).contains(QStringLiteral("{x=4}")));
        QVERIFY(QString::fromStdString(e.message).contains(QStringLiteral("short")));
    }
};

QTEST_GUILESS_MAIN(TestMemoryPasses)
#include "tst_memory_passes.moc"
