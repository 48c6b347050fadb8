// Manual (shard_map) regions, in HLO text and StableHLO: a JAX-style training step of an MLP under
// shard_map (tests/data/hlo/shard_map_mlp.hlo, tests/data/stablehlo/shard_map_mlp.mlir) imports its
// SPMDFullToShardShape / SPMDShardToFullShape boundaries and psums; run device by device by the
// reference interpreter it computes what the unsharded MLP computes; it analyses with the block
// check passing on meshes its shardings fit, the region's ops unsplit in every strategy and the
// boundaries in their annotated shardings; it plans with the boundaries' operands and results in
// those shardings, the psums priced as all-reduces over their groups' axes, the search's objective
// equal to the evaluator's; a mesh the shardings do not fit is a one-line hlo.manual_mesh error
// naming the instruction; malformed regions and collectives the IR cannot price are import errors;
// the graph survives the native JSON format and HLO text.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/analysis.h"
#include "hardware/hardware.h"
#include "import/hlo_import.h"
#include "import/hlo_writer.h"
#include "import/stablehlo_import.h"
#include "interp/interpreter.h"
#include "io/graph_json.h"
#include "oplevel/oplevel.h"
#include "plan/planner.h"
#include "rules/op_rules.h"
#include "sharding/hlo_sharding.h"
#include "sharding/mesh.h"

#include "must.h"

using namespace cfp;

namespace {

const std::string kHlo = std::string(CFP_TEST_DATA_DIR) + "/hlo/shard_map_mlp.hlo";
const std::string kMlir = std::string(CFP_TEST_DATA_DIR) + "/stablehlo/shard_map_mlp.mlir";

ImportedModel load(const QString& file) {
    const std::string path = file == "hlo" ? kHlo : kMlir;
    return file == "hlo" ? test::must(importHloFile(path), path) : test::must(importStableHloFile(path), path);
}

Mesh linked(const std::string& text) { return test::must(assignLinkClasses(test::must(parseMesh(text), text), 8), "link classes"); }

bool isAllReduce(const Op& op) { return op.kind == OpKind::CustomCall && op.attrs.target == kAllReduceTarget; }

// The parameter op of `type` (the step has one of each).
OpId parameterOf(const Graph& g, const std::string& type) {
    for (const Op& op : g.ops())
        if (op.kind == OpKind::Parameter && op.type.toString() == type) return op.id;
    qFatal("no parameter of type %s", type.c_str());
}

// The boundary that reads `operand` (FullToShard), or whose result has `type` (ShardToFull).
OpId fullToShardOf(const Graph& g, OpId operand) {
    for (const Op& op : g.ops())
        if (isFullToShard(op) && op.operands[0] == operand) return op.id;
    return kNoOp;
}

void addFiles() {
    QTest::addColumn<QString>("file");
    QTest::newRow("hlo") << QStringLiteral("hlo");
    QTest::newRow("stablehlo") << QStringLiteral("stablehlo");
}

// The step's values by hand: y = relu(x·w1)·w2, loss = mean(y²), its gradients and SGD (lr 0.01).
struct Reference {
    double loss = 0;
    std::vector<double> w1, w2;  // updated
};

Reference reference(const std::vector<double>& x, const std::vector<double>& w1, const std::vector<double>& w2) {
    const int B = 16, D = 32, H = 64;
    std::vector<double> pre(B * H, 0), h(B * H), y(B * D, 0);
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < H; ++j) {
            for (int i = 0; i < D; ++i) pre[b * H + j] += x[b * D + i] * w1[i * H + j];
            h[b * H + j] = std::max(0.0, pre[b * H + j]);
        }
    for (int b = 0; b < B; ++b)
        for (int k = 0; k < D; ++k)
            for (int j = 0; j < H; ++j) y[b * D + k] += h[b * H + j] * w2[j * D + k];
    Reference r;
    for (double v : y) r.loss += v * v / (B * D);
    std::vector<double> dy(B * D), dh(B * H, 0), dw1(D * H, 0), dw2(H * D, 0);
    for (int k = 0; k < B * D; ++k) dy[k] = 2 * y[k] / (B * D);
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < H; ++j) {
            for (int k = 0; k < D; ++k) dh[b * H + j] += dy[b * D + k] * w2[j * D + k];
            if (pre[b * H + j] <= 0) dh[b * H + j] = 0;
        }
    for (int j = 0; j < H; ++j)
        for (int k = 0; k < D; ++k)
            for (int b = 0; b < B; ++b) dw2[j * D + k] += h[b * H + j] * dy[b * D + k];
    for (int i = 0; i < D; ++i)
        for (int j = 0; j < H; ++j)
            for (int b = 0; b < B; ++b) dw1[i * H + j] += x[b * D + i] * dh[b * H + j];
    r.w1 = w1;
    r.w2 = w2;
    for (size_t k = 0; k < r.w1.size(); ++k) r.w1[k] -= 0.01 * dw1[k];
    for (size_t k = 0; k < r.w2.size(); ++k) r.w2[k] -= 0.01 * dw2[k];
    return r;
}

Tensor wave(const TensorType& type, double seed) {
    Tensor t{type, {}};
    for (int64_t i = 0; i < type.elements(); ++i) t.values.push_back(std::sin(seed * static_cast<double>(i + 1)));
    return t;
}

const char* kRegionModule = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  s = f32[8,4] custom-call(x), custom_call_target="Sharding", sharding=SHARDING
  l = LOCAL custom-call(s), custom_call_target="SPMDFullToShardShape", sharding=MANUAL
  BODY
  m = LOCAL custom-call(body), custom_call_target="Sharding", sharding={manual}
  ROOT y = f32[8,4] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding=FULL
}
)";

std::string regionModule(const std::string& sharding, const std::string& local, const std::string& body,
                         const std::string& full = "{devices=[4,1]<=[4]}", const std::string& manual = "{manual}") {
    std::string t = kRegionModule;
    auto put = [&](const std::string& key, const std::string& value) {
        for (size_t at = t.find(key); at != std::string::npos; at = t.find(key, at + value.size())) t.replace(at, key.size(), value);
    };
    put("SHARDING", sharding);
    put("LOCAL", local);
    put("BODY", body);
    put("FULL", full);
    put("MANUAL", manual);
    return t;
}

}  // namespace

class TestShardMapImport : public QObject {
    Q_OBJECT

private slots:
    void importsRegions_data() { addFiles(); }
    void importsRegions() {
        QFETCH(QString, file);
        const ImportedModel m = load(file);
        const Graph& g = m.graph;
        int toShard = 0, toFull = 0, allReduces = 0, dots = 0;
        const std::vector<char> manual = manualRegionOps(g);
        for (const Op& op : g.ops()) {
            toShard += isFullToShard(op);
            toFull += isShardToFull(op);
            if (isAllReduce(op)) {
                ++allReduces;
                QVERIFY(manual[static_cast<size_t>(op.id)]);
                QCOMPARE(op.attrs.reduceKind, ReduceKind::Add);
            }
            if (op.kind == OpKind::Dot) {
                ++dots;
                QVERIFY2(manual[static_cast<size_t>(op.id)], op.name.c_str());  // every matmul is in a region
            }
            if (isFullToShard(op) || isShardToFull(op)) {
                // The local side is the full side cut by the sharding's grid.
                const HloSharding h = test::must(parseHloSharding(op.attrs.sharding), op.attrs.sharding);
                const TensorType& full = isFullToShard(op) ? g.op(op.operands[0]).type : op.type;
                const TensorType& local = isFullToShard(op) ? op.type : g.op(op.operands[0]).type;
                for (size_t d = 0; d < full.dims.size(); ++d)
                    QCOMPARE(local.dims[d] * (h.kind == HloSharding::Kind::Tiled ? h.tileDims[d] : 1), full.dims[d]);
            }
            if (isShardToFull(op)) QVERIFY(!manual[static_cast<size_t>(op.id)]);
        }
        QCOMPARE(toShard, 4);     // x, w1, w2 forward; dy backward
        QCOMPARE(toFull, 3);      // y; dw1, dw2
        QCOMPARE(allReduces, 3);  // the forward psum; the backward's variadic psum as one per operand
        QCOMPARE(dots, 6);
        // x is cut over dp (4 rows of 16), w1's columns over tp, w2's rows over tp.
        const OpId x = parameterOf(g, "f32[16,32]"), w1 = parameterOf(g, "f32[32,64]"), w2 = parameterOf(g, "f32[64,32]");
        QCOMPARE(g.op(fullToShardOf(g, x)).attrs.sharding, std::string("{devices=[4,1,2]<=[8] last_tile_dim_replicate}"));
        QCOMPARE(g.op(fullToShardOf(g, x)).type.toString(), std::string("f32[4,32]"));
        QCOMPARE(g.op(fullToShardOf(g, w1)).attrs.sharding, std::string("{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"));
        QCOMPARE(g.op(fullToShardOf(g, w2)).type.toString(), std::string("f32[32,32]"));
        // The psum over tp pairs neighbours; the weight gradients' over dp strides by 2.
        std::vector<std::string> groups;
        for (const Op& op : g.ops())
            if (isAllReduce(op)) groups.push_back(replicaGroupsText(op.attrs.replicaGroups));
        QCOMPARE(groups, (std::vector<std::string>{"{{0,1},{2,3},{4,5},{6,7}}", "{{0,2,4,6},{1,3,5,7}}", "{{0,2,4,6},{1,3,5,7}}"}));
        // The loss and the update are outside the regions; the weights are trainable, x is data.
        QVERIFY(m.loss != kNoOp && !manual[static_cast<size_t>(m.loss)]);
        for (OpId o : g.outputs()) QVERIFY(!manual[static_cast<size_t>(o)]);
        QCOMPARE(g.op(w1).role, ParamRole::Trainable);
        QCOMPARE(g.op(w2).role, ParamRole::Trainable);
        QCOMPARE(g.op(x).role, ParamRole::Input);
        QVERIFY(m.hadBackward);
        bool noted = false;
        for (const ImportNote& n : m.notes) noted = noted || n.code == "hlo.manual_region";
        QVERIFY(noted);
    }

    // Both syntaxes give the same boundaries, collectives and matmuls.
    void stableHloMatchesHlo() {
        const ImportedModel a = load("hlo"), b = load("stablehlo");
        auto summary = [](const Graph& g) {
            std::vector<std::string> out;
            for (const Op& op : g.ops())
                if (op.kind == OpKind::CustomCall || op.kind == OpKind::Dot)
                    out.push_back(std::string(opKindName(op.kind)) + " " + op.attrs.target + " " + op.type.toString() + " " +
                                  op.attrs.sharding + " " + replicaGroupsText(op.attrs.replicaGroups) + " " + g.op(op.operands[0]).type.toString());
            std::sort(out.begin(), out.end());
            return out;
        };
        QCOMPARE(summary(a.graph), summary(b.graph));
    }

    // Device by device, the region computes the MLP the sharded program stands for.
    void interpreterRunsEachDevice_data() { addFiles(); }
    void interpreterRunsEachDevice() {
        QFETCH(QString, file);
        const ImportedModel m = load(file);
        const Graph& g = m.graph;
        const OpId x = parameterOf(g, "f32[16,32]"), w1 = parameterOf(g, "f32[32,64]"), w2 = parameterOf(g, "f32[64,32]");
        const Tensor tx = wave(g.op(x).type, 0.37), t1 = wave(g.op(w1).type, 0.11), t2 = wave(g.op(w2).type, 0.23);
        const std::map<std::string, Tensor> in{{g.op(x).name, tx}, {g.op(w1).name, t1}, {g.op(w2).name, t2}};
        const auto values = test::must(evaluate(g, in), "evaluate");
        const Reference r = reference(tx.values, t1.values, t2.values);
        const auto& outs = g.outputs();
        QCOMPARE(outs.size(), size_t{3});
        QVERIFY2(std::abs(values[static_cast<size_t>(outs[0])].values[0] - r.loss) < 1e-9,
                 (std::to_string(values[static_cast<size_t>(outs[0])].values[0]) + " vs " + std::to_string(r.loss)).c_str());
        for (size_t k = 0; k < r.w1.size(); ++k) QVERIFY(std::abs(values[static_cast<size_t>(outs[1])].values[k] - r.w1[k]) < 1e-9);
        for (size_t k = 0; k < r.w2.size(); ++k) QVERIFY(std::abs(values[static_cast<size_t>(outs[2])].values[k] - r.w2[k]) < 1e-9);
        // The update moved the weights: the gradients were not lost on the way.
        double moved = 0;
        for (size_t k = 0; k < r.w1.size(); ++k) moved += std::abs(r.w1[k] - t1.values[k]);
        QVERIFY(moved > 1e-6);
    }

    void analyses_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("mesh");
        for (const char* f : {"hlo", "stablehlo"})
            for (const char* mesh : {"dp=4,tp=2", "4x2", "2x2x2"}) QTest::newRow((std::string(f) + " " + mesh).c_str()) << f << mesh;
    }
    void analyses() {
        QFETCH(QString, file);
        QFETCH(QString, mesh);
        const ImportedModel m = load(file);
        const Graph& g = m.graph;
        const Mesh mm = linked(mesh.toStdString());
        const AnalysisReport r = test::must(analyzeGraph(g, mm), "analysis");
        QVERIFY2(r.check.pass, r.check.summary().c_str());
        const std::vector<char> manual = manualRegionOps(g);
        const BlockAnalysis& ba = r.blocks;
        int pinned = 0;
        for (const ParallelBlock& b : ba.blocks) {
            const Op& entry = g.op(b.entry);
            const bool source = isSourcePinned(entry, manual[static_cast<size_t>(entry.id)] ? Partitioning::Manual : Partitioning::Auto);
            pinned += source;
            if (source || manual[static_cast<size_t>(entry.id)]) QCOMPARE(b.strategies.size(), size_t{1});
            for (size_t s = 0; s < b.strategies.size(); ++s)
                for (size_t k = 0; k < b.members.size(); ++k) {
                    const Op& op = g.op(b.members[k]);
                    if (manual[static_cast<size_t>(op.id)] && !isFullToShard(op))
                        QVERIFY2(ba.sharding(b, s, k).isReplicated(), (op.name + " " + ba.sharding(b, s, k).toString()).c_str());
                }
            // A psum is its block's own all-reduce over its group's axes.
            if (isAllReduce(entry)) {
                QCOMPARE(b.strategies[0].ownCollectives.size(), size_t{1});
                QCOMPARE(b.strategies[0].ownCollectives[0].op, entry.id);
            }
        }
        QCOMPARE(pinned, 10);  // 4 + 3 boundaries, 3 psums
        if (mesh != "dp=4,tp=2") return;
        // The source's strategies, by the full side's dim each axis splits.
        const OpId x = parameterOf(g, "f32[16,32]"), w1 = parameterOf(g, "f32[32,64]"), w2 = parameterOf(g, "f32[64,32]");
        auto label = [&](OpId op) { return ba.blocks[static_cast<size_t>(ba.blockOf[static_cast<size_t>(op)])].strategies[0].label; };
        QCOMPARE(label(fullToShardOf(g, x)), std::string("dp:dim0,tp:-"));
        QCOMPARE(label(fullToShardOf(g, w1)), std::string("dp:-,tp:dim1"));
        QCOMPARE(label(fullToShardOf(g, w2)), std::string("dp:-,tp:dim0"));
        std::vector<std::string> sums;
        for (const Op& op : g.ops())
            if (isAllReduce(op)) sums.push_back(label(op.id));
        QCOMPARE(sums, (std::vector<std::string>{"dp:-,tp:sum", "dp:sum,tp:-", "dp:sum,tp:-"}));
        // The region's inputs are pulled into their boundaries' blocks in the annotated shardings.
        const ParallelBlock& bx = ba.blocks[static_cast<size_t>(ba.blockOf[static_cast<size_t>(x)])];
        QCOMPARE(ba.sharding(bx, 0, static_cast<size_t>(bx.memberIndex(x))).toString(), std::string("[{dp},{}] partial{}"));
        const ParallelBlock& b1 = ba.blocks[static_cast<size_t>(ba.blockOf[static_cast<size_t>(w1)])];
        QCOMPARE(ba.sharding(b1, 0, static_cast<size_t>(b1.memberIndex(w1))).toString(), std::string("[{},{tp}] partial{}"));
    }

    void mismatchedMeshIsAnError_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("mesh");
        for (const char* f : {"hlo", "stablehlo"})
            for (const char* mesh : {"8", "2x4", "4x4", "2"}) QTest::newRow((std::string(f) + " " + mesh).c_str()) << f << mesh;
    }
    void mismatchedMeshIsAnError() {
        QFETCH(QString, file);
        QFETCH(QString, mesh);
        const ImportedModel m = load(file);
        auto r = analyzeGraph(m.graph, linked(mesh.toStdString()));
        QVERIFY(!r);
        QCOMPARE(r.error().code, std::string("hlo.manual_mesh"));
        // One line, naming the instruction (the first boundary: x's FullToShard) and the sharding.
        const OpId first = fullToShardOf(m.graph, parameterOf(m.graph, "f32[16,32]"));
        QCOMPARE(r.error().where, "instruction '" + m.graph.op(first).name + "'");
        QVERIFY(r.error().message.find("{devices=[4,1,2]<=[8] last_tile_dim_replicate}") != std::string::npos);
        QVERIFY(r.error().toString().find('\n') == std::string::npos);
    }

    void plans_data() { addFiles(); }
    void plans() {
        QFETCH(QString, file);
        const ImportedModel m = load(file);
        const Graph& g = m.graph;
        const Cluster cluster = test::must(makeCluster(test::must(loadHardware("h100-sxm"), "hw"), 1), "cluster");
        PlannerOptions options;
        options.baselines = Baselines::Skip;
        options.blockCheck = BlockCheck::Run;
        const PlanOutcome out = test::must(planGraph(g, cluster, test::must(MeshChoice::parse("dp=4,tp=2"), "mesh"), options), "plan");
        const Plan& plan = out.plan;
        QVERIFY2(std::abs(plan.predictedStepSeconds - plan.evaluatorStepSeconds) <= 1e-9 * plan.evaluatorStepSeconds,
                 (std::to_string(plan.predictedStepSeconds) + " vs " + std::to_string(plan.evaluatorStepSeconds)).c_str());
        const std::vector<char> manual = manualRegionOps(g);
        auto text = [](const TensorSharding& t) { return t.toString(); };
        for (const TensorPlan& t : plan.tensors) {
            const Op& op = g.op(t.op);
            if (isFullToShard(op)) {
                QVERIFY(t.result.isReplicated());  // each device's tile, whole
                continue;
            }
            if (!manual[static_cast<size_t>(op.id)]) continue;
            // Inside a region nothing is split again; only the psums communicate.
            QVERIFY2(t.result.isReplicated(), (op.name + " " + text(t.result)).c_str());
            for (const TensorSharding& s : t.operands) QVERIFY2(s.isReplicated(), op.name.c_str());
            if (isAllReduce(op)) QVERIFY(!t.ownCollectiveAxes.empty());
            else QVERIFY2(t.ownCollectiveAxes.empty(), op.name.c_str());
        }
        auto tensorOf = [&](OpId id) -> const TensorPlan& { return plan.tensors[static_cast<size_t>(id)]; };
        const OpId x = parameterOf(g, "f32[16,32]"), w1 = parameterOf(g, "f32[32,64]"), w2 = parameterOf(g, "f32[64,32]");
        QCOMPARE(text(tensorOf(x).result), std::string("[{dp},{}] partial{}"));
        QCOMPARE(text(tensorOf(w1).result), std::string("[{},{tp}] partial{}"));
        QCOMPARE(text(tensorOf(w2).result), std::string("[{tp},{}] partial{}"));
        QCOMPARE(text(tensorOf(fullToShardOf(g, w1)).operands[0]), std::string("[{},{tp}] partial{}"));
        std::vector<std::string> fulls, sums;
        for (const Op& op : g.ops()) {
            if (isShardToFull(op)) fulls.push_back(text(tensorOf(op.id).result));
            if (isAllReduce(op)) sums.push_back(tensorOf(op.id).ownCollectiveAxes.at(0));
        }
        QCOMPARE(fulls, (std::vector<std::string>{"[{dp},{}] partial{}", "[{},{tp}] partial{}", "[{tp},{}] partial{}"}));
        QCOMPARE(sums, (std::vector<std::string>{"tp", "dp", "dp"}));
        QVERIFY(out.evaluation.step.collectiveSeconds > 0);  // the psums cost time
        // The updated weights keep the gradients' shardings: no resharding at the update.
        QCOMPARE(text(tensorOf(g.outputs()[1]).result), std::string("[{},{tp}] partial{}"));
    }

    // The op-level (Alpa-style) formulation takes the regions as written too, and the planner's
    // plan is one of its solutions.
    void opLevelTakesRegionsAsWritten() {
        const ImportedModel m = load("hlo");
        const Graph& g = m.graph;
        const Cluster cluster = test::must(makeCluster(test::must(loadHardware("h100-sxm"), "hw"), 1), "cluster");
        PlannerOptions options;
        options.baselines = Baselines::Skip;
        const PlanOutcome out = test::must(planGraph(g, cluster, test::must(MeshChoice::parse("dp=4,tp=2"), "mesh"), options), "plan");
        const CostModel model = test::must(CostModel::create(cluster.hardware, out.plan.mesh), "cost model");
        const OpLevelFormulation f = test::must(buildOpLevel(g, model, {}, &out.plan), "formulation");
        const std::vector<char> manual = manualRegionOps(g);
        for (const Op& op : g.ops())
            if (manual[static_cast<size_t>(op.id)] || isShardToFull(op))
                QVERIFY2(f.strategies[static_cast<size_t>(op.id)].size() == 1, op.name.c_str());
        QVERIFY(solutionForPlan(f, g, out.plan));
        const CostModel flat = test::must(CostModel::create(cluster.hardware, linked("8")), "cost model");
        auto bad = buildOpLevel(g, flat);
        QVERIFY(!bad);
        QCOMPARE(bad.error().code, std::string("hlo.manual_mesh"));
    }

    // Under --mesh auto only the meshes the shardings fit are planned; the others say why.
    void autoMeshSkipsMeshesThatDoNotFit() {
        const ImportedModel m = load("hlo");
        const Cluster cluster = test::must(makeCluster(test::must(loadHardware("h100-sxm"), "hw"), 1), "cluster");
        PlannerOptions options;
        options.baselines = Baselines::Skip;
        const PlanOutcome out = test::must(planGraph(m.graph, cluster, MeshChoice::automatic(), options), "plan");
        int planned = 0, refused = 0;
        for (const MeshCandidate& c : out.candidates) {
            if (c.note.find("does not fit the planning mesh") != std::string::npos) ++refused;
            if (c.planned) ++planned;
        }
        QVERIFY(planned >= 1);
        QVERIFY(refused >= 2);  // {x=8}, {x=2, y=4}
        QVERIFY(out.plan.mesh.deviceCount() == 8);
    }

    void malformedRegions_data() {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<QString>("code");
        const std::string ok = "  body = f32[2,4] negate(l)";
        QTest::newRow("no sharding before the region")
            << std::string(R"(HloModule m
ENTRY main {
  x = f32[8,4] parameter(0)
  l = f32[2,4] custom-call(x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  ROOT y = f32[8,4] custom-call(l), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
}
)") << "hlo.manual_sharding";
        QTest::newRow("partially manual") << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", ok, "{devices=[4,1]<=[4]}",
                                                          "{devices=[1,1,4]<=[4] last_tile_dims={manual}}")
                                          << "hlo.manual_sharding";
        QTest::newRow("no full sharding") << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", ok, "{manual}") << "hlo.manual_sharding";
        QTest::newRow("sharding syntax") << regionModule("{devices=[4,1]0,1,2}", "f32[2,4]", ok) << "hlo.manual_sharding";
        QTest::newRow("uneven tiles") << regionModule("{devices=[3,1]<=[3]}", "f32[3,4]", "  body = f32[3,4] negate(l)",
                                                      "{devices=[3,1]<=[3]}")
                                      << "hlo.shape_mismatch";
        QTest::newRow("local shape") << regionModule("{devices=[4,1]<=[4]}", "f32[4,4]", "  body = f32[4,4] negate(l)") << "hlo.shape_mismatch";
        QTest::newRow("all-gather in the region")
            << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", "  g = f32[8,4] all-gather(l), dimensions={0}, replica_groups={{0,1,2,3}}\n"
                                                               "  body = f32[2,4] slice(g), slice={[0:2], [0:4]}")
            << "hlo.manual_collective";
        QTest::newRow("reduce-scatter in the region")
            << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", "  body = f32[2,4] reduce-scatter(l), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=add")
            << "hlo.manual_collective";
        QTest::newRow("all-reduce over every device")
            << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", "  body = f32[2,4] all-reduce(l), replica_groups={}, to_apply=add")
            << "hlo.manual_collective";
        QTest::newRow("all-reduce, unequal groups")
            << regionModule("{devices=[4,1]<=[4]}", "f32[2,4]", "  body = f32[2,4] all-reduce(l), replica_groups={{0,1,2},{3}}, to_apply=add")
            << "hlo.manual_collective";
    }
    void malformedRegions() {
        QFETCH(std::string, text);
        QFETCH(QString, code);
        auto r = importHloText(text, "bad.hlo");
        QVERIFY2(!r, text.c_str());
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QVERIFY2(r.error().message.find("instruction '") == 0, r.error().message.c_str());
        QVERIFY(r.error().where.find("bad.hlo:") == 0);
    }

    // Collectives outside a region (an already partitioned module) stay opaque, as before.
    void collectivesOutsideRegionsStayOpaque() {
        const std::string text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,4] parameter(0)
  s = f32[8,4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT g = f32[16,4] all-gather(s), dimensions={0}, replica_groups={{0,1}}
}
)";
        const ImportedModel m = test::must(importHloText(text, "p.hlo"), "import");
        QCOMPARE(m.graph.op(m.graph.find("s")).attrs.target, std::string("hlo.all-reduce"));
        QVERIFY(!shardingRuleFor(m.graph, m.graph.op(m.graph.find("s"))));  // no rule: a block boundary
        QCOMPARE(m.graph.op(m.graph.find("g")).attrs.target, std::string("hlo.all-gather"));
    }

    // Shardy's form of shard_map is refused with what to do instead.
    void shardyIsUnsupported() {
        const std::string text = R"(module @jit_f {
  func.func public @main(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x8xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x8xf32>
      sdy.return %1 : tensor<4x8xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
)";
        auto r = importStableHloText(text, "sdy.mlir");
        QVERIFY(!r);
        QCOMPARE(r.error().code, std::string("stablehlo.unsupported"));
        QCOMPARE(r.error().where, std::string("sdy.mlir:3:10"));
        QVERIFY(r.error().message.find("jax_use_shardy_partitioner=False") != std::string::npos);
    }

    // The boundaries' shardings and the psums' groups survive the native format and HLO text.
    void roundTrips_data() { addFiles(); }
    void roundTrips() {
        QFETCH(QString, file);
        const ImportedModel m = load(file);
        const Graph back = test::must(readGraphJson(writeGraphJson(m.graph), "g.json"), "json");
        QVERIFY(back == m.graph);
        const ImportedModel again = test::must(importHloText(writeHloText(m.graph), "again.hlo"), "hlo again");
        QCOMPARE(again.graph.size(), m.graph.size());
        for (OpId i = 0; i < m.graph.size(); ++i) {
            const Op& a = m.graph.op(i);
            const Op& b = again.graph.op(i);
            QVERIFY2(a.kind == b.kind && a.type == b.type && a.operands == b.operands && a.attrs == b.attrs, (a.name + " vs " + b.name).c_str());
        }
        const AnalysisReport r = test::must(analyzeGraph(again.graph, linked("dp=4,tp=2")), "analysis");
        QVERIFY(r.check.pass);
    }
};

QTEST_GUILESS_MAIN(TestShardMapImport)
#include "tst_shard_map_import.moc"
