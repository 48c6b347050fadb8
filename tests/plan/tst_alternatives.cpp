// Per-segment alternatives (plan/alternatives.h): every combination of one segment with the rest of
// the plan fixed, checked against the search's objective, brute-force Pareto marking and pins.

#include <QtTest>

#include <cmath>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "plan/alternatives.h"
#include "plan/planner.h"

using namespace cfp;
using cfp::test::must;

namespace {

Graph smallGpt() {
    ModelConfig c = must(presetConfig("gpt3-125m"), "preset");
    c.numLayers = 3;
    BuildOptions o;
    o.batch = 8;
    o.seq = 128;
    return must(buildTrainingStep(c, o), "gpt").graph;
}

Cluster oneNode() { return must(makeCluster(must(loadHardware("h100-sxm"), "hw"), 1), "cluster"); }

std::vector<int32_t> strategyOf(const Plan& p) {
    std::vector<int32_t> s;
    for (const BlockChoice& b : p.blocks) s.push_back(b.strategy);
    return s;
}

}  // namespace

class TestAlternatives : public QObject {
    Q_OBJECT

private slots:
    void everyCombinationOfEverySegment() {
        const Graph g = smallGpt();
        PlannerOptions o;
        o.baselines = false;
        o.policy.recompute = RecomputePolicy::None;  // one variant per strategy: the layer's 3^k combinations
        const PlanOutcome out = must(planGraph(g, oneNode(), "8", o), "plan");
        QVERIFY(out.problem);
        const PlanProblem& problem = *out.problem;
        const auto strategy = strategyOf(out.plan);
        QCOMPARE(problem.objective(strategy), out.plan.predictedStepSeconds);
        for (const SegmentPlan& sp : out.plan.segments) {
            const auto alt = must(segmentAlternatives(problem, strategy, sp.index, out.plan.memoryLimitBytes, {}), "alternatives");
            int64_t expected = 1;
            for (int k = 0; k < sp.blockCount; ++k) expected *= problem.strategyCount(sp.firstBlock + k);
            QCOMPARE(alt.combinations, expected);
            QCOMPARE(static_cast<int64_t>(alt.rows.size()), expected);
            QVERIFY(!alt.truncated);
            int chosen = 0;
            for (const CombinationCost& r : alt.rows) {
                if (r.chosen) {
                    ++chosen;
                    QCOMPARE(r.combination, sp.combination);
                    QCOMPARE(r.stepSeconds, out.plan.predictedStepSeconds);
                    QVERIFY(!r.dominated);
                }
                // The DP is exact: changing one segment of the optimal plan never gives a faster plan that fits.
                if (r.fits) QVERIFY(r.stepSeconds >= out.plan.predictedStepSeconds * (1 - 1e-12));
            }
            QCOMPARE(chosen, 1);
            // Pareto marking against brute force.
            for (const CombinationCost& r : alt.rows) {
                bool dominated = false;
                for (const CombinationCost& q : alt.rows)
                    if (q.allowed && q.fits && q.stepSeconds <= r.stepSeconds && q.memoryBytes <= r.memoryBytes &&
                        (q.stepSeconds < r.stepSeconds || q.memoryBytes < r.memoryBytes))
                        dominated = true;
                QCOMPARE(r.dominated, r.allowed && r.fits && dominated);
            }
        }
    }

    void pinsAndLimitsMarkRows() {
        const Graph g = smallGpt();
        PlannerOptions o;
        o.baselines = false;
        o.policy.recompute = RecomputePolicy::None;  // one variant per strategy: the layer's 3^k combinations
        const PlanOutcome out = must(planGraph(g, oneNode(), "8", o), "plan");
        const PlanProblem& problem = *out.problem;
        const auto strategy = strategyOf(out.plan);
        const SegmentPlan& layer = out.plan.segments[1];
        // Pin the segment to its first combination: only that row is allowed.
        std::string pin = std::to_string(layer.index) + "=";
        for (int k = 0; k < layer.blockCount; ++k) pin += (k ? "," : "") + std::string("0");
        const StrategyMask mask = must(problem.applyPins({pin}), "pins");
        const auto alt = must(segmentAlternatives(problem, strategy, layer.index, 0, mask), "alternatives");
        int allowed = 0;
        for (const CombinationCost& r : alt.rows) {
            QVERIFY(r.fits);  // no limit
            if (r.allowed) {
                ++allowed;
                QCOMPARE(r.combination, std::vector<int32_t>(static_cast<size_t>(layer.blockCount), 0));
            }
        }
        QCOMPARE(allowed, 1);
        // A limit below every row: nothing fits, nothing is dominated.
        const auto tight = must(segmentAlternatives(problem, strategy, layer.index, 1, {}), "alternatives");
        for (const CombinationCost& r : tight.rows) QVERIFY(!r.fits && !r.dominated);
        // Truncation and bad input.
        const auto few = must(segmentAlternatives(problem, strategy, layer.index, 0, {}, 5), "alternatives");
        QCOMPARE(few.rows.size(), size_t{5});
        QVERIFY(few.truncated);
        auto bad = segmentAlternatives(problem, strategy, 999, 0, {});
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, std::string("plan.bad_segment"));
        auto mismatch = segmentAlternatives(problem, {0}, 0, 0, {});
        QVERIFY(!mismatch);
        QCOMPARE(mismatch.error().code, std::string("plan.mismatch"));
    }
};

QTEST_APPLESS_MAIN(TestAlternatives)
#include "tst_alternatives.moc"
