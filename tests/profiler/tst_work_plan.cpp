// Segment work plans: what the executor runs must be exactly what the cost model costs. Checked
// against the independent plan evaluator, on local GEMM shapes, on collectives per mesh axis, and
// on the op signatures the planner looks measurements up by.

#include <QtTest>

#include <cmath>

#include "hardware/hardware.h"
#include "io/graph_json.h"
#include "models/models.h"
#include "must.h"
#include "plan_helpers.h"
#include "tiny_gpt.h"
#include "plan/evaluator.h"
#include "plan/planner.h"
#include "profiler/work_plan.h"
#include "stats/graph_stats.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;
using cfp::test::tinyGpt;

namespace {

bool close(double a, double b, double rel = 1e-9) { return std::abs(a - b) <= rel * std::max({1e-15, std::abs(a), std::abs(b)}); }

HardwareSpec h100() { return must(loadHardware("h100-sxm"), "h100"); }

Mesh linkedMesh(const std::string& text, int64_t gpusPerNode = 8) {
    return must(assignLinkClasses(must(parseMesh(text), "mesh"), gpusPerNode), "link classes");
}

// What the evaluator charges the segment's ops, less what crosses the segment boundary (the
// segment DP's transition), recomputed here from the evaluator's per-op costs.
double evaluatorSegmentSeconds(const Graph& g, const Mesh& mesh, const PlanProblem& problem, const SegmentCatalog::TypeInfo& info,
                               const std::vector<int32_t>& combination) {
    const CostModel& model = problem.model();
    Assignment assignment(static_cast<size_t>(problem.blockCount()));
    for (int i = 0; i < info.blockCount; ++i) assignment[static_cast<size_t>(info.firstBlock + i)].strategy = combination[static_cast<size_t>(i)];
    Plan plan;
    problem.fillPlan(assignment, {}, plan);
    const Evaluation ev = must(evaluatePlan(g, plan, model), "evaluate");
    auto in = [&](OpId op) {
        const int32_t b = plan.tensors[static_cast<size_t>(op)].block;
        return b >= info.firstBlock && b < info.firstBlock + info.blockCount;
    };
    std::vector<int> uses(static_cast<size_t>(g.size()), 0);
    std::vector<char> source(static_cast<size_t>(g.size()), 0);
    for (const Op& op : g.ops()) {
        for (OpId o : op.operands) ++uses[static_cast<size_t>(o)];
        bool s = op.kind == OpKind::Constant || op.kind == OpKind::Iota || op.kind == OpKind::Parameter;
        if (!s && !op.operands.empty()) {
            s = true;
            for (OpId o : op.operands) s = s && source[static_cast<size_t>(o)] && g.op(o).kind != OpKind::Parameter;
        }
        source[static_cast<size_t>(op.id)] = s;
    }
    double total = 0;
    for (const Op& op : g.ops()) {
        if (!in(op.id)) continue;
        total += ev.opCost[static_cast<size_t>(op.id)].total();
        for (size_t i = 0; i < op.operands.size(); ++i) {
            const OpId u = op.operands[i];
            if (in(u)) continue;
            const TensorSharding& have = plan.tensors[static_cast<size_t>(u)].result;
            const TensorSharding& need = plan.tensors[static_cast<size_t>(op.id)].operands[i];
            if (have != need) {
                total -= model.reshardSeconds(must(planReshard(have, need, mesh, g.op(u).type), "reshard"));
            } else if (fusesInto(g.op(u).kind, op.kind) && uses[static_cast<size_t>(u)] == 1 && !source[static_cast<size_t>(u)]) {
                int64_t split = 1;
                for (const auto& axes : have.dims())
                    for (const auto& a : axes) split *= mesh.axisSize(a).value_or(1);
                // An optimizer op under optimizer-state sharding works on 1/r of its result, r = the
                // devices holding the same piece of it.
                int64_t r = 1;
                if (plan.policy.optimizerSharding && op.phase == Phase::Optimizer && !source[static_cast<size_t>(op.id)]) {
                    const TensorSharding& res = plan.tensors[static_cast<size_t>(op.id)].result;
                    int64_t used = 1;
                    for (const auto& axes : res.dims())
                        for (const auto& a : axes) used *= mesh.axisSize(a).value_or(1);
                    r = mesh.deviceCount() / used;
                }
                total += model.fusedEdgeSavingSeconds(g.op(u).type.bytes() / split / r);
            }
        }
    }
    return total;
}

}  // namespace

class TestWorkPlan : public QObject {
    Q_OBJECT

private slots:
    void itemsCostWhatTheEvaluatorCosts_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<bool>("optimizerSharding");
        QTest::newRow("8") << "8" << true;
        QTest::newRow("8, optimizer state replicated") << "8" << false;
        QTest::newRow("2x4") << "2x4" << true;
        QTest::newRow("dp=2,tp=4 on 2 nodes of 4") << "dp=2,tp=4@4" << true;
        QTest::newRow("dp=2,tp=4 on 2 nodes of 4, optimizer state replicated") << "dp=2,tp=4@4" << false;
    }
    void itemsCostWhatTheEvaluatorCosts() {
        QFETCH(QString, mesh);
        QFETCH(bool, optimizerSharding);
        MemoryPolicy policy;
        policy.optimizerSharding = optimizerSharding;
        policy.recompute = RecomputePolicy::None;
        policy.attention = AttentionKernel::Eager;  // the profiler executes attention op by op
        // Items are measured whole: compared with the evaluator's sum without overlap charges.
        policy.overlapGradReduce = policy.overlapParamGather = false;
        const QStringList parts = mesh.split('@');
        const Mesh m = linkedMesh(parts[0].toStdString(), parts.size() > 1 ? parts[1].toLongLong() : 8);
        const Graph g = tinyGpt(2);
        auto catalog = must(SegmentCatalog::build(g, h100(), m, {}, policy), "catalog");
        QVERIFY(catalog.types().size() >= 2);
        // The evaluator's side, built independently of the catalog.
        const auto problem = must(
            PlanProblem::build(g, must(analyzeGraph(g, m), "analysis"), must(CostModel::create(h100(), m), "model"), {}, ProblemOptions{policy}), "problem");
        int scatters = 0, gathers = 0;
        int checked = 0;
        for (const auto& info : catalog.types()) {
            const int64_t n = std::min<int64_t>(info.combinations, 12);
            for (int64_t i = 0; i < n; ++i) {
                // Spread over the combinations, not only the first few.
                const auto combo = catalog.combination(info.type, i * std::max<int64_t>(1, info.combinations / n));
                const SegmentWorkPlan w = must(catalog.workPlan(info.type, combo), "work plan");
                double sum = 0;
                for (const WorkItem& item : w.items) {
                    QVERIFY(close(item.predictedSeconds, itemSeconds(item, catalog.model())));
                    sum += item.predictedSeconds;
                    if (item.kind == WorkKind::Collective && item.collective == CollectiveKind::ReduceScatter && !item.reshard) ++scatters;
                    if (item.kind == WorkKind::Collective && item.collective == CollectiveKind::AllGather && !item.reshard) ++gathers;
                }
                QVERIFY(close(sum, w.predictedSeconds));
                const double expected = evaluatorSegmentSeconds(g, m, problem, info, combo);
                QVERIFY2(close(w.predictedSeconds, expected, 1e-9),
                         qPrintable(QString("T%1 %2: work plan %3 s, evaluator %4 s")
                                        .arg(info.type)
                                        .arg(QString::fromStdString(w.label))
                                        .arg(w.predictedSeconds)
                                        .arg(expected)));
                ++checked;
            }
        }
        QVERIFY(checked >= 20);
        // Optimizer-state sharding turns gradient all-reduces into reduce-scatters and adds the
        // updated weights' all-gathers; without it there are none.
        QCOMPARE(scatters > 0, optimizerSharding);
        QCOMPARE(gathers > 0, optimizerSharding);
    }

    // The MLP X[4,8]·W1[8,16] on {x=2}: rows halve m, columns halve n, contraction halves k and
    // ends in an all-reduce of the local result over x.
    void gemmShapesAreLocal() {
        const Graph g = must(readGraphFile(std::string(CFP_TEST_DATA_DIR) + "/graphs/mlp.json"), "mlp");
        const Mesh m = linkedMesh("2");
        auto catalog = must(SegmentCatalog::build(g, h100(), m), "catalog");
        bool sawRows = false, sawCols = false, sawContract = false;
        for (const auto& info : catalog.types()) {
            for (int64_t i = 0; i < info.combinations; ++i) {
                const auto combo = catalog.combination(info.type, i);
                const SegmentWorkPlan w = must(catalog.workPlan(info.type, combo), "work plan");
                for (const WorkItem& item : w.items) {
                    if (item.kind != WorkKind::Gemm || item.name.rfind("dot.5", 0) != 0) continue;
                    const std::string label = info.labels[0][static_cast<size_t>(combo[0])];
                    QCOMPARE(item.gemm.batch, int64_t{1});
                    QCOMPARE(item.gemm.dtype, DType::F32);
                    if (label == "x:rows") {
                        QCOMPARE(item.gemm.m, int64_t{2});
                        QCOMPARE(item.gemm.n, int64_t{16});
                        QCOMPARE(item.gemm.k, int64_t{8});
                        sawRows = true;
                    } else if (label == "x:cols") {
                        QCOMPARE(item.gemm.m, int64_t{4});
                        QCOMPARE(item.gemm.n, int64_t{8});
                        QCOMPARE(item.gemm.k, int64_t{8});
                        sawCols = true;
                    } else if (label == "x:contract") {
                        QCOMPARE(item.gemm.k, int64_t{4});
                        QCOMPARE(item.gemm.m, int64_t{4});
                        QCOMPARE(item.gemm.n, int64_t{16});
                        bool allReduce = false;
                        for (const WorkItem& c : w.items)
                            if (c.kind == WorkKind::Collective && !c.reshard && c.ops == item.ops) {
                                QCOMPARE(c.collective, CollectiveKind::AllReduce);
                                QCOMPARE(c.axisName, std::string("x"));
                                QCOMPARE(c.messageBytes, int64_t{4 * 16 * 4});
                                allReduce = true;
                            }
                        QVERIFY(allReduce);
                        sawContract = true;
                    }
                    QCOMPARE(item.flops, item.gemm.flops());
                }
            }
        }
        QVERIFY(sawRows && sawCols && sawContract);
    }

    // Collectives name an axis of the mesh, with that axis's size, and own all-reduces carry the
    // op's local result.
    void collectivesUseTheirAxis() {
        const Graph g = tinyGpt(2);
        const Mesh m = linkedMesh("dp=2,tp=4");
        auto catalog = must(SegmentCatalog::build(g, h100(), m), "catalog");
        int collectives = 0;
        for (const auto& info : catalog.types())
            for (int64_t i = 0; i < std::min<int64_t>(info.combinations, 30); ++i) {
                const SegmentWorkPlan w = must(catalog.workPlan(info.type, catalog.combination(info.type, i)), "work plan");
                double comm = 0;
                for (const WorkItem& item : w.items) {
                    if (item.kind != WorkKind::Collective) continue;
                    ++collectives;
                    QVERIFY(item.axis == 0 || item.axis == 1);
                    QCOMPARE(item.axisName, m.axes()[static_cast<size_t>(item.axis)].name);
                    QCOMPARE(item.axisSize, m.axes()[static_cast<size_t>(item.axis)].size);
                    QVERIFY(item.messageBytes > 0);
                    comm += item.predictedSeconds;
                }
                QVERIFY(close(comm, w.predictedCommSeconds));
                QVERIFY(w.persistentBytes > 0);
                QVERIFY(w.workspaceBytes > 0);
            }
        QVERIFY(collectives > 0);
    }

    // GEMM signatures are the ones the planner and the evaluator look measurements up by: measuring
    // every GEMM of one combination of the first segment makes those dots "measured" in a plan pinned
    // to it.
    void gemmSignaturesReachThePlanner() {
        const Graph g = tinyGpt(2);
        const Mesh m = linkedMesh("8");
        auto catalog = must(SegmentCatalog::build(g, h100(), m), "catalog");
        const auto& info = catalog.types().front();
        const auto combo = catalog.combination(info.type, info.combinations - 1);
        const SegmentWorkPlan w = must(catalog.workPlan(info.type, combo), "work plan");
        PlannerOptions o;
        o.baselines = Baselines::Skip;
        o.memoryLimitBytes = int64_t{1} << 50;
        int gemms = 0;
        for (const WorkItem& item : w.items)
            if (item.kind == WorkKind::Gemm) {
                o.measurements.kernels.emplace_back(item.opSignature, 0.25);
                ++gemms;
            }
        QVERIFY(gemms > 0);
        std::string pin = "b" + std::to_string(info.firstBlock) + "=" + info.labels[0][static_cast<size_t>(combo[0])];
        o.pins.push_back(cfp::test::pinOf(pin));
        for (int b = 1; b < info.blockCount; ++b)
            o.pins.push_back(cfp::test::pinOf("b" + std::to_string(info.firstBlock + b) + "=" + info.labels[static_cast<size_t>(b)][static_cast<size_t>(combo[static_cast<size_t>(b)])]));
        auto out = must(planGraph(g, must(makeCluster(h100(), 1), "cluster"), cfp::test::meshOf("8"), o), "plan");
        int measured = 0;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Dot && out.evaluation.opCost[static_cast<size_t>(op.id)].provenance == Provenance::Measured) {
                QCOMPARE(out.evaluation.opCost[static_cast<size_t>(op.id)].computeSeconds, 0.25);
                ++measured;
            }
        QVERIFY2(measured >= gemms, qPrintable(QString("%1 measured dots, %2 GEMMs").arg(measured).arg(gemms)));
        QCOMPARE(out.plan.step.provenance, Provenance::Mixed);
    }

    void combinationsAreMixedRadix() {
        const Graph g = tinyGpt(2);
        auto catalog = must(SegmentCatalog::build(g, h100(), linkedMesh("8")), "catalog");
        for (const auto& info : catalog.types()) {
            int64_t expected = 1;
            for (int c : info.strategyCounts) expected *= c;
            QCOMPARE(info.combinations, expected);
            QCOMPARE(catalog.combination(info.type, 0), std::vector<int32_t>(static_cast<size_t>(info.blockCount), 0));
            std::vector<int32_t> last;
            for (int c : info.strategyCounts) last.push_back(c - 1);
            QCOMPARE(catalog.combination(info.type, info.combinations - 1), last);
            // Index 1 advances the last block.
            if (info.strategyCounts.back() > 1) QCOMPARE(catalog.combination(info.type, 1).back(), 1);
            QVERIFY(info.signature != 0);
            QVERIFY(!info.name.empty());
        }
        // Different meshes give different segment signatures.
        auto other = must(SegmentCatalog::build(g, h100(), linkedMesh("2x4")), "catalog 2x4");
        QVERIFY(other.types().front().signature != catalog.types().front().signature);
    }

    void combinationKeys() {
        QCOMPARE(combinationKey({0, 2, 1}), std::string("0,2,1"));
        QCOMPARE(must(parseCombinationKey("0,2,1"), "key"), (std::vector<int32_t>{0, 2, 1}));
        QCOMPARE(must(parseCombinationKey("7"), "key"), (std::vector<int32_t>{7}));
        for (const char* bad : {"", "1,,2", "a", "1,-2", "1,2,"}) {
            auto r = parseCombinationKey(bad);
            QVERIFY2(!r, bad);
            QCOMPARE(r.error().code, std::string("profiler.bad_combination"));
        }
    }

    void badCombinationsAreErrors() {
        const Graph g = tinyGpt(1);
        auto catalog = must(SegmentCatalog::build(g, h100(), linkedMesh("8")), "catalog");
        QCOMPARE(catalog.workPlan(99, {0}).error().code, std::string("profiler.bad_combination"));
        const auto& info = catalog.types().front();
        QCOMPARE(catalog.workPlan(info.type, {}).error().code, std::string("profiler.bad_combination"));
        std::vector<int32_t> tooLarge(static_cast<size_t>(info.blockCount), 0);
        tooLarge[0] = info.strategyCounts[0];
        QCOMPARE(catalog.workPlan(info.type, tooLarge).error().code, std::string("profiler.bad_combination"));
    }
};

QTEST_APPLESS_MAIN(TestWorkPlan)
#include "tst_work_plan.moc"
