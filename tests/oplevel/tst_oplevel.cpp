// The op-level formulation on a tiny GPT training step: its costs against the independent plan
// evaluator (on the CFP plan and on random assignments), its shape, follow ops, the IOPDDL round
// trip, and the CBC optimum against the CFP plan.
#include <QtTest>

#include "cost/cost_model.h"
#include "hardware/hardware.h"
#include "iopddl/evaluate.h"
#include "iopddl/ilp.h"
#include "iopddl/json_io.h"
#include "iopddl/solver.h"
#include "iopddl/solver_model.h"
#include "models/models.h"
#include "must.h"
#include "plan_helpers.h"
#include "oplevel/oplevel.h"
#include "plan/evaluator.h"
#include "plan/planner.h"

using namespace cfp;

namespace {

struct Fixture {
    BuiltModel model;
    HardwareSpec hardware;
    PlanOutcome outcome;
};

const Fixture& fixture() {
    static const Fixture f = [] {
        Fixture x;
        ModelConfig c = test::must(presetConfig("gpt3-125m"), "preset");
        c.numLayers = 1;
        c.hiddenSize = 128;
        c.numHeads = 8;
        c.numKvHeads = 8;
        c.ffnSize = 512;
        c.vocabSize = 512;
        BuildOptions b;
        b.batch = 8;
        b.seq = 16;
        x.model = test::must(buildTrainingStep(c, b), "model");
        x.hardware = test::must(loadHardware("h100-sxm"), "hardware");
        const Cluster cluster = test::must(makeCluster(x.hardware, 1), "cluster");
        PlannerOptions options;
        options.baselines = Baselines::Skip;
        options.policy.optimizerSharding = false;
        options.policy.recompute = RecomputePolicy::None;
        options.policy.attention = AttentionKernel::Eager;  // the op-level formulation has no fused attention
        options.policy.overlapGradReduce = options.policy.overlapParamGather = false;  // nor overlap
        x.outcome = test::must(planGraph(x.model.graph, cluster, cfp::test::meshOf("8"), options), "plan");
        return x;
    }();
    return f;
}

CostModel costModel() { return test::must(CostModel::create(fixture().hardware, fixture().outcome.plan.mesh), "cost model"); }

}  // namespace

class TestOpLevel : public QObject {
    Q_OBJECT

private slots:
    void shape() {
        const Graph& g = fixture().model.graph;
        const CostModel model = costModel();
        const OpLevelFormulation f = test::must(buildOpLevel(g, model), "formulation");
        QCOMPARE(f.problem.nodeCount(), g.size());
        int64_t uses = 0;
        for (const Op& op : g.ops()) uses += static_cast<int64_t>(op.operands.size());
        QCOMPARE(f.firstCarriedEdge, uses);
        QCOMPARE(f.problem.edgeCount(), uses + static_cast<int64_t>(carriedParameters(g).size()));
        QVERIFY(iopddl::validateProblem(f.problem).ok());
        QVERIFY(!f.problem.usageLimit.has_value());
        // A dot on a 1-D mesh of 8: replicated, or one of its factors split (batch, lhs free, rhs
        // free, contraction) where 8 divides it.
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Dot) QVERIFY(f.strategies[static_cast<size_t>(op.id)].size() >= 3);
        // Every parameter is live over the whole step; other results from their op to their last use.
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Parameter) {
                QCOMPARE(f.problem.intervals[static_cast<size_t>(op.id)].lo, 0);
                QCOMPARE(f.problem.intervals[static_cast<size_t>(op.id)].hi, g.size());
            } else {
                QCOMPARE(f.problem.intervals[static_cast<size_t>(op.id)].lo, op.id);
            }
        // The IOPDDL text reads back to the same problem.
        const iopddl::Problem back = test::must(iopddl::parseProblem(iopddl::problemToJson(f.problem)), "round trip");
        QCOMPARE(back.nodeCosts, f.problem.nodeCosts);
        QCOMPARE(back.edgeCosts, f.problem.edgeCosts);
        QCOMPARE(back.nodeUsages, f.problem.nodeUsages);
    }

    // The CFP plan is a solution of the formulation and costs what the evaluator says.
    void pricesTheCfpPlanLikeTheEvaluator() {
        const Fixture& x = fixture();
        const CostModel model = costModel();
        const OpLevelFormulation f = test::must(buildOpLevel(x.model.graph, model, {}, &x.outcome.plan), "formulation");
        const iopddl::Solution s = test::must(solutionForPlan(f, x.model.graph, x.outcome.plan), "solution");
        const iopddl::Evaluation e = test::must(iopddl::evaluate(f.problem, s), "evaluate");
        const double seconds = costSeconds(f, static_cast<double>(e.score));
        const double want = x.outcome.plan.evaluatorStepSeconds;
        QVERIFY2(std::abs(seconds - want) <= 1e-6 * want, qPrintable(QString("%1 vs %2").arg(seconds).arg(want)));
    }

    // Any assignment: the formulation's score equals the evaluator's step time of the same shardings
    // (without the carried updates, which the evaluator does not see).
    void randomAssignmentsMatchTheEvaluator() {
        const Graph& g = fixture().model.graph;
        const CostModel model = costModel();
        OpLevelOptions options;
        options.carryUpdates = false;
        const OpLevelFormulation f = test::must(buildOpLevel(g, model, options), "formulation");
        QCOMPARE(f.firstCarriedEdge, f.problem.edgeCount());
        uint64_t state = 12345;
        for (int trial = 0; trial < 12; ++trial) {
            iopddl::Solution s;
            for (const auto& list : f.strategies) {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                s.push_back(static_cast<int64_t>((state >> 33) % list.size()));
            }
            const iopddl::Evaluation e = test::must(iopddl::evaluate(f.problem, s), "evaluate");
            const Evaluation ev = test::must(evaluatePlan(g, planForSolution(f, g, model.mesh(), s), model), "evaluator");
            const double seconds = costSeconds(f, static_cast<double>(e.score));
            QVERIFY2(std::abs(seconds - ev.step.total()) <= 1e-6 * ev.step.total(),
                     qPrintable(QString("trial %1: %2 vs %3").arg(trial).arg(seconds).arg(ev.step.total())));
        }
    }

    // Every updated tensor of AdamW is paired with the parameter it replaces, of the same type; the
    // formulation has an edge for each after the operand edges.
    void carriedUpdates() {
        const Graph& g = fixture().model.graph;
        const auto pairs = carriedParameters(g);
        const auto trainable = g.parameters(ParamRole::Trainable);
        QVERIFY(!trainable.empty());
        int64_t masters = 0;
        for (const OpId p : trainable) masters += g.op(p).type.dtype != DType::F32;
        QCOMPARE(static_cast<int64_t>(pairs.size()), static_cast<int64_t>(3 * trainable.size()) + masters);
        for (const auto& [updated, parameter] : pairs) {
            QCOMPARE(g.op(updated).type, g.op(parameter).type);
            QCOMPARE(g.op(parameter).kind, OpKind::Parameter);
            QVERIFY(g.op(updated).phase == Phase::Optimizer);
        }
        const OpLevelFormulation f = test::must(buildOpLevel(g, costModel()), "formulation");
        QCOMPARE(f.problem.edgeCount() - f.firstCarriedEdge, static_cast<int64_t>(pairs.size()));
    }

    void followOps() {
        const Graph& g = fixture().model.graph;
        const CostModel model = costModel();
        OpLevelOptions options;
        options.followTrivial = true;
        options.memoryLimitBytes = int64_t(80) << 30;
        const OpLevelFormulation f = test::must(buildOpLevel(g, model, options), "formulation");
        QVERIFY(f.followers > 0);
        QCOMPARE(*f.problem.usageLimit, int64_t(80) << 30);
        int64_t checked = 0;
        for (int64_t e = 0; e < f.problem.edgeCount(); ++e) {
            const auto ends = f.problem.edgeEnds(e);
            const Op& consumer = g.op(static_cast<OpId>(ends[1]));
            if (consumer.operands.size() != 1 || f.strategies[static_cast<size_t>(ends[1])].size() != f.strategies[static_cast<size_t>(ends[0])].size())
                continue;
            const auto table = f.problem.edgeCostTable(e);
            const int64_t k = f.problem.strategyCount(ends[1]);
            bool offDiagonalForbidden = true;
            for (int64_t a = 0; a < k; ++a)
                for (int64_t b = 0; b < k; ++b)
                    if (a != b && table[static_cast<size_t>(a * k + b)] < 1'000'000'000'000'000'000) offDiagonalForbidden = false;
            checked += offDiagonalForbidden;
        }
        QVERIFY(checked >= f.followers);
        // The solver's model contracts followers into their operands' variables.
        iopddl::ModelStats stats;
        const iopddl::SolverModel m = test::must(iopddl::buildSolverModel(f.problem, &stats), "model");
        QVERIFY(stats.matchingEdges >= f.followers);
        QVERIFY(m.n < stats.freeNodes);
    }

    // CBC's optimum is no worse than the CFP plan and the evaluator agrees with it; the heuristic
    // solver's answer is no better than the optimum.
    void optimumBoundsTheCfpPlan() {
        if (!iopddl::ilpSolverAvailable()) QSKIP("no CBC in this build");
        const Fixture& x = fixture();
        const CostModel model = costModel();
        OpLevelOptions options;
        options.memoryLimitBytes = x.hardware.memoryBytes;
        const OpLevelFormulation f = test::must(buildOpLevel(x.model.graph, model, options, &x.outcome.plan), "formulation");
        const iopddl::Solution cfpSolution = test::must(solutionForPlan(f, x.model.graph, x.outcome.plan), "solution");
        iopddl::IlpOptions io;
        io.timeLimitSeconds = 60;
        io.start = &cfpSolution;
        const iopddl::IlpResult ilp = test::must(iopddl::solveIlp(f.problem, io), "ilp");
        QCOMPARE(int(ilp.status), int(iopddl::IlpStatus::Optimal));
        const double optimum = costSeconds(f, static_cast<double>(ilp.score));
        QVERIFY(optimum <= x.outcome.plan.evaluatorStepSeconds * (1 + 1e-9));
        const Evaluation ev = test::must(evaluatePlan(x.model.graph, planForSolution(f, x.model.graph, model.mesh(), ilp.solution), model), "evaluator");
        double carried = 0;
        for (int64_t e = f.firstCarriedEdge; e < f.problem.edgeCount(); ++e) {
            const auto ends = f.problem.edgeEnds(e);
            const int64_t index = ilp.solution[static_cast<size_t>(ends[0])] * f.problem.strategyCount(ends[1]) + ilp.solution[static_cast<size_t>(ends[1])];
            carried += costSeconds(f, static_cast<double>(f.problem.edgeCostTable(e)[static_cast<size_t>(index)]));
        }
        QVERIFY(carried >= 0);
        QVERIFY(std::abs(ev.step.total() + carried - optimum) <= 1e-6 * optimum);
        iopddl::SolverOptions so;
        so.timeLimitSeconds = 5;
        so.maxEpochs = 20;
        const iopddl::SolverResult heuristic = test::must(iopddl::solve(f.problem, so), "solve");
        QVERIFY(heuristic.valid);
        QVERIFY(heuristic.score >= ilp.score);
    }
};

QTEST_APPLESS_MAIN(TestOpLevel)
#include "tst_oplevel.moc"
