// Per-segment alternatives (plan/alternatives.h): every combination of one segment with the rest of
// the plan fixed, checked against the search's objective, brute-force Pareto marking, pins and the
// recomputation variants.

#include <QtTest>

#include <cmath>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "plan_helpers.h"
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

PlanOutcome plan(const Graph& g, RecomputePolicy recompute) {
    PlannerOptions o;
    o.baselines = Baselines::Skip;
    o.policy.recompute = recompute;
    return must(planGraph(g, oneNode(), cfp::test::meshOf("8"), o), "plan");
}

// The chosen row is the plan's own assignment, never dominated, and no fitting row is faster (the
// DP is exact); the Pareto marks equal a brute-force check.
void checkRows(const PlanOutcome& out, const Assignment& assignment, const SegmentPlan& sp, const SegmentAlternatives& alt) {
    int chosen = 0;
    for (const CombinationCost& r : alt.rows) {
        if (r.chosen) {
            ++chosen;
            for (int k = 0; k < sp.blockCount; ++k) QVERIFY(r.combination[static_cast<size_t>(k)] == assignment[static_cast<size_t>(sp.firstBlock + k)]);
            QCOMPARE(r.stepSeconds, out.plan.predictedStepSeconds);
            QVERIFY(!r.dominated);
        }
        if (r.fits) QVERIFY(r.stepSeconds >= out.plan.predictedStepSeconds * (1 - 1e-12));
    }
    QCOMPARE(chosen, 1);
    for (const CombinationCost& r : alt.rows) {
        bool dominated = false;
        for (const CombinationCost& q : alt.rows)
            if (q.allowed && q.fits && q.stepSeconds <= r.stepSeconds && q.memoryBytes <= r.memoryBytes &&
                (q.stepSeconds < r.stepSeconds || q.memoryBytes < r.memoryBytes))
                dominated = true;
        QCOMPARE(r.dominated, r.allowed && r.fits && dominated);
    }
}

int choiceCount(const PlanProblem& problem, int block) { return static_cast<int>(problem.choices(block).size()); }

}  // namespace

class TestAlternatives : public QObject {
    Q_OBJECT

private slots:
    void everyCombinationOfEverySegment() {
        const Graph g = smallGpt();
        const PlanOutcome out = plan(g, RecomputePolicy::None);
        QVERIFY(out.problem);
        const PlanProblem& problem = *out.problem;
        const auto assignment = must(assignmentOf(problem, out.plan), "assignment");
        QCOMPARE(problem.objective(assignment), out.plan.predictedStepSeconds);
        for (const SegmentPlan& sp : out.plan.segments) {
            const auto alt = must(segmentAlternatives(problem, assignment, sp.index, out.plan.memoryLimitBytes, {}), "alternatives");
            int64_t expected = 1;
            for (int k = 0; k < sp.blockCount; ++k) expected *= choiceCount(problem, sp.firstBlock + k);
            QCOMPARE(alt.combinations, expected);
            QCOMPARE(static_cast<int64_t>(alt.rows.size()), expected);
            QVERIFY(!alt.sampled);
            checkRows(out, assignment, sp, alt);
        }
    }

    // Under RecomputePolicy::Auto every block has a plain and a recomputed variant of each strategy.
    void recomputationVariants() {
        const Graph g = smallGpt();
        const PlanOutcome out = plan(g, RecomputePolicy::Auto);
        const PlanProblem& problem = *out.problem;
        const auto assignment = must(assignmentOf(problem, out.plan), "assignment");
        QCOMPARE(problem.objective(assignment), out.plan.predictedStepSeconds);
        for (int b = 0; b < problem.blockCount(); ++b) {
            const int n = static_cast<int>(problem.analysis().blocks.blocks[static_cast<size_t>(b)].strategies.size());
            QCOMPARE(choiceCount(problem, b), 2 * n);
            const BlockAssignment a = assignment[static_cast<size_t>(b)];
            QCOMPARE(a.strategy, out.plan.blocks[static_cast<size_t>(b)].strategy);
            QCOMPARE(a.recompute, out.plan.blocks[static_cast<size_t>(b)].recompute);
            QCOMPARE(assignmentLabel(problem, b, {0, false}), problem.analysis().blocks.blocks[static_cast<size_t>(b)].strategies[0].label);
            QVERIFY(assignmentLabel(problem, b, {0, true}).find("+recompute") != std::string::npos);
        }
        // The segment with the fewest combinations, in full.
        const SegmentPlan* smallest = &out.plan.segments.front();
        for (const SegmentPlan& sp : out.plan.segments)
            if (sp.blockCount < smallest->blockCount) smallest = &sp;
        const auto alt = must(segmentAlternatives(problem, assignment, smallest->index, out.plan.memoryLimitBytes, {}), "alternatives");
        int64_t expected = 1;
        for (int k = 0; k < smallest->blockCount; ++k) expected *= choiceCount(problem, smallest->firstBlock + k);
        QCOMPARE(static_cast<int64_t>(alt.rows.size()), expected);
        checkRows(out, assignment, *smallest, alt);
        // A plan that is not the problem's.
        Plan other = out.plan;
        other.blocks.pop_back();
        QVERIFY(!assignmentOf(problem, other));
    }

    void pinsAndLimitsMarkRows() {
        const Graph g = smallGpt();
        const PlanOutcome out = plan(g, RecomputePolicy::Auto);
        const PlanProblem& problem = *out.problem;
        const auto assignment = must(assignmentOf(problem, out.plan), "assignment");
        const SegmentPlan& layer = out.plan.segments[0];
        // Pin the segment to its blocks' first strategies: only those rows are allowed, with or
        // without recomputation (pins restrict strategies, the search still decides recomputation).
        std::string pin = std::to_string(layer.index) + "=";
        for (int k = 0; k < layer.blockCount; ++k) pin += (k ? "," : "") + std::string("0");
        const StrategyMask mask = must(problem.applyPins({cfp::test::pinOf(pin)}), "pins");
        // Segment 0 is layer 0 (6 blocks, more combinations than the default 4,096 rows): ask for
        // all rows, so that every allowed one is listed, not a sample.
        const auto all = must(segmentAlternatives(problem, assignment, layer.index, 0, mask, 1), "count");
        const auto alt = must(segmentAlternatives(problem, assignment, layer.index, 0, mask, all.combinations), "alternatives");
        QVERIFY(!alt.sampled);
        int allowed = 0;
        for (const CombinationCost& r : alt.rows) {
            QVERIFY(r.fits);  // no limit
            if (!r.allowed) continue;
            ++allowed;
            for (int k = 0; k < layer.blockCount; ++k) {
                QCOMPARE(r.combination[static_cast<size_t>(k)].strategy, 0);
            }
        }
        QCOMPARE(allowed, 1 << layer.blockCount);
        // A limit below every row: nothing fits, nothing is dominated.
        const auto tight = must(segmentAlternatives(problem, assignment, layer.index, 1, {}), "alternatives");
        for (const CombinationCost& r : tight.rows) QVERIFY(!r.fits && !r.dominated);
        // Sampling: the chosen combination and the changes of one block come first; the same rows
        // every time.
        const int64_t neighbours = [&] {
            int64_t n = 1;
            for (int k = 0; k < layer.blockCount; ++k) n += choiceCount(problem, layer.firstBlock + k) - 1;
            return n;
        }();
        const auto few = must(segmentAlternatives(problem, assignment, layer.index, 0, {}, neighbours + 7), "alternatives");
        QCOMPARE(static_cast<int64_t>(few.rows.size()), neighbours + 7);
        QVERIFY(few.sampled);
        int chosen = 0, oneBlockChanges = 0;
        for (const CombinationCost& r : few.rows) {
            int differ = 0;
            for (int k = 0; k < layer.blockCount; ++k) differ += r.combination[static_cast<size_t>(k)] != assignment[static_cast<size_t>(layer.firstBlock + k)];
            chosen += r.chosen;
            oneBlockChanges += differ == 1;
            QCOMPARE(r.chosen, differ == 0);
        }
        QCOMPARE(chosen, 1);
        QCOMPARE(oneBlockChanges, neighbours - 1);
        const auto again = must(segmentAlternatives(problem, assignment, layer.index, 0, {}, neighbours + 7), "alternatives");
        for (size_t i = 0; i < few.rows.size(); ++i) QVERIFY(again.rows[i].combination == few.rows[i].combination);
        auto bad = segmentAlternatives(problem, assignment, 999, 0, {});
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, std::string("plan.bad_segment"));
        auto mismatch = segmentAlternatives(problem, Assignment{BlockAssignment{}}, 0, 0, {});
        QVERIFY(!mismatch);
        QCOMPARE(mismatch.error().code, std::string("plan.mismatch"));
    }
};

QTEST_APPLESS_MAIN(TestAlternatives)
#include "tst_alternatives.moc"
