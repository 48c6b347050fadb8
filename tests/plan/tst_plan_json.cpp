// The plan file: exact round trips field by field and byte for byte, determinism, a golden file,
// the check against the graph, the JSON Schema, strict located errors for malformed input, and
// atomic writes.
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "ir/graph_builder.h"
#include "models/models.h"
#include "plan/plan_json.h"
#include "sharding/mesh.h"

#include "must.h"
#include "plan_helpers.h"

using namespace cfp;
using OJson = nlohmann::ordered_json;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string kDataDir = std::string(CFP_TEST_DATA_DIR) + "/plans";
const std::string kSchema = std::string(CFP_SOURCE_DIR) + "/docs/plan.schema.json";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

QByteArray bytes(const std::string& s) { return QByteArray::fromStdString(s); }

std::string errorText(const Error& e) { return e.toString(); }

Mesh linkedMesh(const char* text, int64_t gpusPerNode) {
    return test::must(assignLinkClasses(test::must(parseMesh(text), text), gpusPerNode), "link classes");
}

TensorSharding split(int64_t rank, int64_t dim, std::vector<std::string> axes) {
    return test::must(TensorSharding::replicated(rank).withDimAxes(dim, std::move(axes)), "split sharding");
}

// A dimension of `type` that `factor` divides, or -1.
int64_t divisibleDim(const TensorType& type, int64_t factor) {
    for (int64_t d = 0; d < type.rank(); ++d)
        if (type.dims[static_cast<size_t>(d)] % factor == 0 && type.dims[static_cast<size_t>(d)] > 0) return d;
    return -1;
}

// Replicated shardings of the right ranks for every op, except a few split ones (on both mesh
// axes), a pending partial operand and own collectives; blocks, segments, baselines and costs
// with doubles that are hard to print exactly.
Plan handPlan(const Graph& g, const std::string& source, int64_t nodes, int64_t gpusPerNode, const Mesh& mesh) {
    Plan p;
    p.model = g.name();
    p.modelSource = source;
    BuildOptions build;
    build.batch = 8;
    build.seq = 64;
    p.build = build;
    p.hardware = "h100-sxm";
    p.hardwareName = "NVIDIA H100 SXM5 80GB";
    p.nodes = nodes;
    p.gpusPerNode = gpusPerNode;
    p.mesh = mesh;
    p.memoryLimitBytes = int64_t{80} << 30;
    const std::string outer = mesh.axes().front().name;
    const std::string inner = mesh.axes().back().name;
    p.pins = cfp::test::pinsOf({"0=" + outer + ":rows,*", "b1=" + inner + ":cols"});
    p.blocks = {{0, 1, outer + ":rows", false},
                {1, 0, outer + ":batch", false},
                {2, 2, inner + ":cols," + outer + ":batch", true},
                {3, 0, outer + ":batch", false}};
    SegmentPlan s0;
    s0.index = 0;
    s0.type = 0;
    s0.firstBlock = 0;
    s0.blockCount = 2;
    s0.combination = {1, 0};
    s0.cost = {0.1, 1.0 / 3.0, 2e-7, Provenance::Modelled};
    s0.memoryBytes = 123456789012;
    SegmentPlan s1;
    s1.index = 1;
    s1.type = 1;
    s1.firstBlock = 2;
    s1.blockCount = 2;
    s1.combination = {2, 0};
    s1.cost = {1.5e-3, 0, 7.0 / 9.0, Provenance::Measured};
    s1.memoryBytes = 42;
    p.segments = {s0, s1};

    const std::vector<std::string> axisNames = [&] {
        std::vector<std::string> names;
        for (const MeshAxis& a : mesh.axes()) names.push_back(a.name);
        return names;
    }();
    const int64_t innerSize = mesh.axes().back().size;
    int splits = 0;
    bool partialDone = false;
    for (const Op& op : g.ops()) {
        TensorPlan t;
        t.op = op.id;
        t.block = static_cast<int32_t>(op.id % 5) - 1;
        t.result = TensorSharding::replicated(op.type.rank());
        for (OpId in : op.operands) t.operands.push_back(TensorSharding::replicated(g.op(in).type.rank()));
        if (op.id % 7 == 3 && splits < 6) {
            if (const int64_t d = divisibleDim(op.type, innerSize); d >= 0) {
                t.result = split(op.type.rank(), d, {inner});
                ++splits;
            }
        }
        if (!partialDone && !op.operands.empty() && op.kind == OpKind::Dot) {
            t.operands[0] = test::must(t.operands[0].withPartialAxes({outer}), "partial");
            t.ownCollectiveAxes = axisNames;
            partialDone = true;
        }
        p.tensors.push_back(std::move(t));
    }
    p.step = {0.75, 0.125, 1e-9, Provenance::Mixed};
    p.predictedStepSeconds = 0.8750000010000001;
    p.evaluatorStepSeconds = 0.875000001;
    p.simulated = {0.7123456789012345, 0.625, 0.0625, 0.03125, 0.0248456789012345, 7, 3};
    p.memory = {1000, 2000, 3000, 4000, 5000};
    Baseline dp{"data_parallel", "batch split over all 8 devices", true, true, 1.2345678901234567, {10, 20, 30, 40, 50}, ""};
    Baseline mg{"megatron", "tensor parallel over 8 devices", false, false, 0, {}, "12 heads do not divide over 8 devices"};
    p.baselines = {dp, mg};
    p.searchSeconds = 0.0123;
    p.searchExact = false;
    return p;
}

struct Fixture {
    Graph graph;
    Plan plan;
};

// GPT-3 125M reduced to 2 layers, batch 8, sequence 64, on a 2x4 mesh over 2 nodes of 4 GPUs
// (x inter-node, y intra-node).
const Fixture& gpt() {
    static const Fixture f = [] {
        ModelConfig c = test::must(presetConfig("gpt3-125m"), "preset");
        c.numLayers = 2;
        BuildOptions opt;
        opt.batch = 8;
        opt.seq = 64;
        BuiltModel m = test::must(buildTrainingStep(c, opt), "model");
        Fixture out;
        out.graph = std::move(m.graph);
        out.plan = handPlan(out.graph, "builtin:gpt3-125m", 2, 4, linkedMesh("2x4", 4));
        return out;
    }();
    return f;
}

// A two-layer MLP (small enough for a readable golden file) on {dp=2, tp=4} in one node of 8.
const Fixture& mlp() {
    static const Fixture f = [] {
        Fixture out;
        out.graph = Graph("mlp");
        GraphBuilder b(out.graph);
        const OpId x = b.parameter("x", {DType::F32, {8, 16}}, ParamRole::Input);
        OpId h = 0;
        {
            auto s = b.scope("fc1");
            const OpId w = b.parameter("fc1.weight", {DType::F32, {16, 32}}, ParamRole::Trainable);
            h = b.unary(OpKind::Tanh, b.matmul(x, w));
        }
        OpId y = 0;
        {
            auto s = b.scope("fc2");
            const OpId w = b.parameter("fc2.weight", {DType::F32, {32, 4}}, ParamRole::Trainable);
            y = b.matmul(h, w);
        }
        b.output(b.reduce(y, {0, 1}));
        out.plan = handPlan(out.graph, "tests/data/graphs/mlp.json", 1, 8, linkedMesh("dp=2,tp=4", 8));
        return out;
    }();
    return f;
}

bool sameDouble(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

#define SAME_DOUBLE(a, b) QVERIFY2(sameDouble((a), (b)), qPrintable(QString("%1 != %2").arg((a), 0, 'g', 17).arg((b), 0, 'g', 17)))

void compareCost(const CostBreakdown& a, const CostBreakdown& b) {
    SAME_DOUBLE(a.computeSeconds, b.computeSeconds);
    SAME_DOUBLE(a.collectiveSeconds, b.collectiveSeconds);
    SAME_DOUBLE(a.reshardSeconds, b.reshardSeconds);
    QCOMPARE(a.provenance, b.provenance);
}

void compareMemory(const MemoryBreakdown& a, const MemoryBreakdown& b) {
    QCOMPARE(a.weights, b.weights);
    QCOMPARE(a.gradients, b.gradients);
    QCOMPARE(a.optimizer, b.optimizer);
    QCOMPARE(a.activations, b.activations);
    QCOMPARE(a.transient, b.transient);
}

// Field-by-field equality (Plan has no operator==); a failure names the field.
void comparePlans(const Plan& a, const Plan& b) {
    QCOMPARE(a.model, b.model);
    QCOMPARE(a.modelSource, b.modelSource);
    QCOMPARE(a.build.has_value(), b.build.has_value());
    if (a.build) {
        QCOMPARE(a.build->batch, b.build->batch);
        QCOMPARE(a.build->seq, b.build->seq);
        QCOMPARE(a.build->dtype, b.build->dtype);
        QCOMPARE(a.build->qkv, b.build->qkv);
    }
    QCOMPARE(a.hardware, b.hardware);
    QCOMPARE(a.hardwareName, b.hardwareName);
    QCOMPARE(a.nodes, b.nodes);
    QCOMPARE(a.gpusPerNode, b.gpusPerNode);
    QCOMPARE(a.mesh.toString(), b.mesh.toString());
    QVERIFY(a.mesh == b.mesh);
    QCOMPARE(a.memoryLimitBytes, b.memoryLimitBytes);
    QCOMPARE(a.pins, b.pins);
    QCOMPARE(a.blocks.size(), b.blocks.size());
    for (size_t i = 0; i < a.blocks.size(); ++i) {
        QCOMPARE(a.blocks[i].block, b.blocks[i].block);
        QCOMPARE(a.blocks[i].strategy, b.blocks[i].strategy);
        QCOMPARE(a.blocks[i].label, b.blocks[i].label);
        QCOMPARE(a.blocks[i].pinned, b.blocks[i].pinned);
    }
    QCOMPARE(a.segments.size(), b.segments.size());
    for (size_t i = 0; i < a.segments.size(); ++i) {
        const SegmentPlan& x = a.segments[i];
        const SegmentPlan& y = b.segments[i];
        QCOMPARE(x.index, y.index);
        QCOMPARE(x.type, y.type);
        QCOMPARE(x.firstBlock, y.firstBlock);
        QCOMPARE(x.blockCount, y.blockCount);
        QCOMPARE(x.combination, y.combination);
        compareCost(x.cost, y.cost);
        QCOMPARE(x.memoryBytes, y.memoryBytes);
    }
    QCOMPARE(a.tensors.size(), b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const TensorPlan& x = a.tensors[i];
        const TensorPlan& y = b.tensors[i];
        QCOMPARE(x.op, y.op);
        QCOMPARE(x.block, y.block);
        QVERIFY2(x.result == y.result, qPrintable(QString::number(i)));
        QVERIFY2(x.operands == y.operands, qPrintable(QString::number(i)));
        QCOMPARE(x.ownCollectiveAxes, y.ownCollectiveAxes);
    }
    compareCost(a.step, b.step);
    SAME_DOUBLE(a.predictedStepSeconds, b.predictedStepSeconds);
    SAME_DOUBLE(a.evaluatorStepSeconds, b.evaluatorStepSeconds);
    compareMemory(a.memory, b.memory);
    QCOMPARE(a.baselines.size(), b.baselines.size());
    for (size_t i = 0; i < a.baselines.size(); ++i) {
        const Baseline& x = a.baselines[i];
        const Baseline& y = b.baselines[i];
        QCOMPARE(x.name, y.name);
        QCOMPARE(x.description, y.description);
        QCOMPARE(x.feasible, y.feasible);
        QCOMPARE(x.fits, y.fits);
        SAME_DOUBLE(x.stepSeconds, y.stepSeconds);
        compareMemory(x.memory, y.memory);
        QCOMPARE(x.note, y.note);
    }
    SAME_DOUBLE(a.searchSeconds, b.searchSeconds);
    QCOMPARE(a.searchExact, b.searchExact);
}

// Runs `fn` (which uses QCOMPARE/QVERIFY) and fails the calling test if it failed.
#define COMPARE_PLANS(a, b)                      \
    do {                                         \
        comparePlans((a), (b));                  \
        if (QTest::currentTestFailed()) return;  \
    } while (0)

// The golden text with one JSON value changed (through the DOM, so the rest stays valid).
std::string mutated(const std::function<void(OJson&)>& change) {
    OJson j = planToJson(gpt().plan, gpt().graph);
    change(j);
    return j.dump(2);
}

// Replaces the first occurrence of `from` in `text` with `to` (which must exist).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    if (at == std::string::npos) qFatal("'%s' not in the text", from.c_str());
    return text.replace(at, from.size(), to);
}

std::string lineOf(const std::string& text, const std::string& key) {
    const size_t at = text.find(key);
    if (at == std::string::npos) qFatal("'%s' not in the text", key.c_str());
    const size_t start = text.rfind('\n', at) + 1;
    return text.substr(start, text.find('\n', at) - start + 1);
}

}  // namespace

class TestPlanJson : public QObject {
    Q_OBJECT

private slots:
    void fixtureIsValid() {
        const Fixture& f = gpt();
        QVERIFY(f.graph.size() > 500);
        auto s = checkPlanAgainstGraph(f.plan, f.graph);
        QVERIFY2(s.ok(), s.ok() ? "" : errorText(s.error()).c_str());
        QCOMPARE(f.plan.mesh.toString(), std::string("{x=2 (inter), y=4 (intra)}"));
        int splitCount = 0;
        for (const TensorPlan& t : f.plan.tensors) splitCount += !t.result.isReplicated();
        QVERIFY(splitCount >= 3);
        qInfo("gpt3-125m, 2 layers: %lld ops, plan text %zu bytes", static_cast<long long>(f.graph.size()),
              planToText(f.plan, f.graph).size());
    }

    void roundTripsFieldByFieldAndByteForByte() {
        for (const Fixture* f : {&gpt(), &mlp()}) {
            const std::string text = planToText(f->plan, f->graph);
            QVERIFY(text.ends_with("}\n"));
            std::vector<std::string> names;
            auto back = planFromJson(text, "plan.json", &names);
            QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
            COMPARE_PLANS(*back, f->plan);
            QCOMPARE(names.size(), static_cast<size_t>(f->graph.size()));
            for (const Op& op : f->graph.ops()) QCOMPARE(names[static_cast<size_t>(op.id)], op.name);
            QCOMPARE(bytes(planToText(*back, f->graph)), bytes(text));
            // The text is JSON that any parser reads, and equals the DOM planToJson gives.
            QCOMPARE(OJson::parse(text), planToJson(f->plan, f->graph));
        }
    }

    void isDeterministic() {
        const Fixture& f = gpt();
        const std::string a = planToText(f.plan, f.graph);
        const std::string b = planToText(f.plan, f.graph);
        QCOMPARE(bytes(a), bytes(b));
        const Plan copy = handPlan(f.graph, "builtin:gpt3-125m", 2, 4, linkedMesh("2x4", 4));
        QCOMPARE(bytes(planToText(copy, f.graph)), bytes(a));
        QCOMPARE(planToJson(copy, f.graph).dump(), planToJson(f.plan, f.graph).dump());
        // Layout: 2-space indent, fixed key order, one tensor entry per line.
        QVERIFY(a.starts_with("{\n  \"format\": \"cfp-plan\",\n  \"version\": 3,\n  \"model\": {\n    \"name\": "));
        const OJson j = OJson::parse(a);
        std::vector<std::string> keys;
        for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
        const std::vector<std::string> expected{"format", "version", "model", "hardware", "mesh", "memory_limit_bytes", "memory_policy", "pins",
                                                "predicted_step_seconds", "evaluator_step_seconds", "step",
                                                "simulated_step", "memory_per_device", "search", "segments", "blocks", "baselines", "tensors"};
        QCOMPARE(keys, expected);
        const std::string line = lineOf(a, "\"op\": 1,");
        QVERIFY2(line.starts_with("    {\"op\": 1, \"name\": ") && line.ends_with("},\n"), line.c_str());
        QVERIFY(a.find("\"predicted_step_seconds\": 0.8750000010000001,") != std::string::npos);
        QVERIFY(a.find("\"compute_seconds\": 0.1,") != std::string::npos);
        QVERIFY(a.find("\"step_seconds\": null,") != std::string::npos);
        QCOMPARE(j["memory_per_device"]["total"].get<int64_t>(), int64_t{15000});
        QCOMPARE(j["segments"][1]["labels"], OJson::parse(R"(["y:cols,x:batch", "x:batch"])"));
        QCOMPARE(j["mesh"]["axes"][0], OJson::parse(R"({"name": "x", "size": 2, "link": "inter"})"));
    }

    void goldenFile() {
        const Fixture& f = mlp();
        const std::string text = planToText(f.plan, f.graph);
        const std::string path = kDataDir + "/mlp_plan.json";
        if (qEnvironmentVariableIsSet("CFP_UPDATE_GOLDEN")) spit(path, text);
        QCOMPARE(bytes(slurp(path)), bytes(text));
        std::vector<std::string> names;
        auto back = readPlanFile(path, &names);
        QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
        auto s = checkPlanAgainstGraph(*back, f.graph, &names);
        QVERIFY2(s.ok(), s.ok() ? "" : errorText(s.error()).c_str());
    }

    void nonFiniteAndOddStringsRoundTrip() {
        const Fixture& f = mlp();
        Plan p = f.plan;
        p.predictedStepSeconds = std::numeric_limits<double>::infinity();
        p.evaluatorStepSeconds = -std::numeric_limits<double>::infinity();
        p.searchSeconds = std::numeric_limits<double>::quiet_NaN();
        p.step.reshardSeconds = std::numeric_limits<double>::denorm_min();
        p.segments[0].cost.computeSeconds = std::numeric_limits<double>::max();
        p.pins = cfp::test::pinsOf({"b0=quote \" backslash \\ tab \t newline \n", "b1=unicode \u00fc \u4e2d"});
        const std::string text = planToText(p, f.graph);
        QVERIFY(text.find("\"predicted_step_seconds\": \"inf\"") != std::string::npos);
        QVERIFY(text.find("\"seconds\": \"nan\"") != std::string::npos);
        auto back = planFromJson(text, "");
        QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
        COMPARE_PLANS(*back, p);
        QCOMPARE(bytes(planToText(*back, f.graph)), bytes(text));

        // Invalid UTF-8 is replaced, never thrown on, and the output stays valid JSON.
        p.pins = cfp::test::pinsOf({std::string("b0=bad \xff\xfe utf-8")});
        const std::string replacedText = planToText(p, f.graph);
        QVERIFY(planFromJson(replacedText, "").ok());
        QVERIFY(replacedText.find("bad \xef\xbf\xbd\xef\xbf\xbd utf-8") != std::string::npos);

        // A mesh not bound to hardware (no link classes) stores null links.
        p = f.plan;
        p.mesh = test::must(parseMesh("dp=2,tp=4"), "mesh");
        const std::string unbound = planToText(p, f.graph);
        QVERIFY(unbound.find("{\"name\": \"dp\", \"size\": 2, \"link\": null}") != std::string::npos);
        auto unboundBack = planFromJson(unbound, "");
        QVERIFY2(unboundBack.ok(), unboundBack.ok() ? "" : errorText(unboundBack.error()).c_str());
        QVERIFY(unboundBack->mesh == p.mesh);
        QVERIFY(!unboundBack->mesh.hasLinkClasses());
    }

    void checkAgainstGraph() {
        const Fixture& f = gpt();
        QVERIFY(checkPlanAgainstGraph(f.plan, f.graph).ok());

        // A name changed in the file: the entry no longer names the graph's op.
        const std::string text = planToText(f.plan, f.graph);
        const std::string name5 = f.graph.op(5).name;
        const std::string edited = replaced(text, "{\"op\": 5, \"name\": \"" + name5 + "\"", "{\"op\": 5, \"name\": \"renamed\"");
        std::vector<std::string> names;
        auto plan = planFromJson(edited, "plan.json", &names);
        QVERIFY(plan.ok());
        QVERIFY(checkPlanAgainstGraph(*plan, f.graph).ok());  // without names there is nothing to compare
        auto s = checkPlanAgainstGraph(*plan, f.graph, &names);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.mismatch"));
        QCOMPARE(s.error().where, std::string("/tensors/5/name"));
        QVERIFY2(s.error().message.find(name5) != std::string::npos, s.error().message.c_str());

        // A result rank changed.
        Plan p = f.plan;
        const size_t k = 17;
        p.tensors[k].result = TensorSharding::replicated(f.graph.op(static_cast<OpId>(k)).type.rank() + 1);
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.mismatch"));
        QCOMPARE(s.error().where, std::string("/tensors/17/result"));
        QVERIFY2(s.error().message.find(f.graph.op(17).name) != std::string::npos, s.error().message.c_str());
        QVERIFY2(s.error().message.find("sharding.rank_mismatch") != std::string::npos, s.error().message.c_str());

        // An operand rank changed, an operand missing.
        OpId withOperands = 0;
        while (f.graph.op(withOperands).operands.empty()) ++withOperands;
        const std::string wp = "/tensors/" + std::to_string(withOperands);
        p = f.plan;
        p.tensors[static_cast<size_t>(withOperands)].operands[0] = TensorSharding::replicated(7);
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.mismatch"));
        QCOMPARE(s.error().where, wp + "/operands/0");
        p = f.plan;
        p.tensors[static_cast<size_t>(withOperands)].operands.pop_back();
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().where, wp + "/operands");

        // An uneven split, an unknown axis.
        p = f.plan;
        const OpId ids = f.graph.find("input_ids");
        QVERIFY(ids != kNoOp);
        p.tensors[static_cast<size_t>(ids)].result = split(2, 0, {"x", "y"});  // 8 over 8: even
        QVERIFY(checkPlanAgainstGraph(p, f.graph).ok());
        p.tensors[static_cast<size_t>(ids)].result = split(2, 1, {"q"});
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message.find("sharding.unknown_axis") != std::string::npos, s.error().message.c_str());
        p = f.plan;
        p.mesh = linkedMesh("8", 8);
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.mismatch"));

        // Fewer entries than ops, another model, a bad block reference.
        p = f.plan;
        p.tensors.pop_back();
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().where, std::string("/tensors"));
        p = f.plan;
        p.model = "gpt3-175b";
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().where, std::string("/model/name"));
        p = f.plan;
        p.tensors[3].block = 4;
        s = checkPlanAgainstGraph(p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().where, std::string("/tensors/3/block"));

        // The writer refuses a plan that is not for the graph, and writes nothing.
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/plan.json";
        s = writePlanFile(path, p, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.mismatch"));
        QVERIFY(!std::filesystem::exists(path));
    }

    void validatesAgainstTheSchema() {
        const QString python = QStandardPaths::findExecutable("python3");
        if (python.isEmpty()) QSKIP("python3 is not installed");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string gptPath = dir.path().toStdString() + "/gpt.json";
        const std::string oddPath = dir.path().toStdString() + "/odd.json";
        spit(gptPath, planToText(gpt().plan, gpt().graph));
        Plan odd = mlp().plan;
        odd.predictedStepSeconds = std::numeric_limits<double>::infinity();
        odd.mesh = test::must(parseMesh("4x2"), "mesh");
        odd.tensors.clear();
        for (const Op& op : mlp().graph.ops()) {
            TensorPlan t;
            t.op = op.id;
            t.result = TensorSharding::replicated(op.type.rank());
            for (OpId in : op.operands) t.operands.push_back(TensorSharding::replicated(mlp().graph.op(in).type.rank()));
            odd.tensors.push_back(std::move(t));
        }
        spit(oddPath, planToText(odd, mlp().graph));
        // Valid documents pass; each mutation must be rejected by the schema.
        const char* script = R"PY(
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
v = cls(schema)
for path in sys.argv[2:]:
    doc = json.load(open(path))
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        print("%s: /%s: %s" % (path, "/".join(map(str, e.absolute_path)), e.message))
        sys.exit(1)
    def bad(name, change):
        d = copy.deepcopy(doc)
        change(d)
        if v.is_valid(d):
            print("%s: schema accepts %s" % (path, name))
            sys.exit(2)
    bad("format", lambda d: d.__setitem__("format", "cfp-graph"))
    bad("version", lambda d: d.__setitem__("version", 1))
    bad("recompute policy", lambda d: d["memory_policy"].__setitem__("recompute", "sometimes"))
    bad("recompute false on a tensor", lambda d: d["tensors"][0].__setitem__("recompute", False))
    bad("provenance", lambda d: d["step"].__setitem__("provenance", "guessed"))
    bad("missing tensors", lambda d: d.pop("tensors"))
    bad("extra field", lambda d: d.__setitem__("extra", 1))
    bad("string batch", lambda d: d["model"].__setitem__("batch", "8"))
    bad("negative memory", lambda d: d["memory_per_device"].__setitem__("weights", -1))
    bad("link", lambda d: d["mesh"]["axes"][0].__setitem__("link", "pcie"))
    bad("tensor without result", lambda d: d["tensors"][0].pop("result"))
    bad("number as sharding", lambda d: d["tensors"][0].__setitem__("result", 3))
    bad("seconds as text", lambda d: d["search"].__setitem__("seconds", "fast"))
    bad("infeasible with a time", lambda d: d["baselines"][1].__setitem__("step_seconds", 1.5))
    bad("feasible without a time", lambda d: d["baselines"][0].__setitem__("step_seconds", None))
    bad("bad axis name", lambda d: d["tensors"][0].__setitem__("own_collective_axes", ["1x"]))
print("ok")
)PY";
        QProcess proc;
        proc.start(python, {"-c", script, QString::fromStdString(kSchema), QString::fromStdString(gptPath),
                            QString::fromStdString(oddPath), QString::fromStdString(kDataDir + "/mlp_plan.json")});
        QVERIFY(proc.waitForFinished(120000));
        const QByteArray out = proc.readAllStandardOutput() + proc.readAllStandardError();
        QVERIFY2(proc.exitStatus() == QProcess::NormalExit && proc.exitCode() == 0, out.constData());
        QCOMPARE(out.trimmed(), QByteArray("ok"));
    }

    void malformedInputs_data() {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<std::string>("code");
        QTest::addColumn<std::string>("where");  // "" when not checked; "L:C" for any line:column

        const std::string good = planToText(gpt().plan, gpt().graph);
        auto row = [](const char* name, std::string text, const char* code, const char* where) {
            QTest::newRow(name) << std::move(text) << std::string(code) << std::string(where);
        };
        row("truncated", good.substr(0, good.size() / 2), "plan.syntax", "L:C");
        row("empty", "", "plan.syntax", "L:C");
        row("trailing garbage", good + "x", "plan.syntax", "L:C");
        row("not an object", "[1, 2]", "plan.format", "");
        row("graph file", "{\"format\": \"cfp-graph\", \"version\": 1}", "plan.format", "/format");
        row("wrong format", mutated([](OJson& j) { j["format"] = "cfp-plan2"; }), "plan.format", "/format");
        row("no format", mutated([](OJson& j) { j.erase("format"); }), "plan.format", "/format");
        row("version 99", mutated([](OJson& j) { j["version"] = 99; }), "plan.version", "/version");
        row("version 0", mutated([](OJson& j) { j["version"] = 0; }), "plan.version", "/version");
        row("no accumulation steps", mutated([](OJson& j) { j["memory_policy"].erase("accumulation_steps"); }), "plan.format",
            "/memory_policy/accumulation_steps");
        row("zero stage 4", mutated([](OJson& j) { j["memory_policy"]["zero_stage"] = 4; }), "plan.format", "/memory_policy/zero_stage");
        row("zero stage against sharding", mutated([](OJson& j) { j["memory_policy"]["zero_stage"] = 0; }), "plan.format",
            "/memory_policy/zero_stage");
        row("zero accumulation steps", mutated([](OJson& j) { j["memory_policy"]["accumulation_steps"] = 0; }), "plan.format",
            "/memory_policy/accumulation_steps");
        row("version 2 with accumulation steps", mutated([](OJson& j) { j["version"] = 2; }), "plan.format", "/memory_policy/accumulation_steps");
        row("version text", mutated([](OJson& j) { j["version"] = "1"; }), "plan.format", "/version");
        row("missing field", mutated([](OJson& j) { j.erase("memory_limit_bytes"); }), "plan.format", "/memory_limit_bytes");
        row("missing nested field", mutated([](OJson& j) { j["tensors"][3].erase("result"); }), "plan.format",
            "/tensors/3/result");
        row("unknown field", mutated([](OJson& j) { j["comment"] = "hi"; }), "plan.format", "/comment");
        row("duplicate key", replaced(good, "\"version\": 3,", "\"version\": 3, \"version\": 3,"), "plan.format", "/version");
        row("wrong type", mutated([](OJson& j) { j["pins"] = "x"; }), "plan.format", "/pins");
        row("wrong element type", mutated([](OJson& j) { j["tensors"][2]["operands"] = OJson::array({1}); }), "plan.format",
            "/tensors/2/operands/0");
        row("float for integer", mutated([](OJson& j) { j["model"]["batch"] = 8.0; }), "plan.format", "/model/batch");
        row("bad provenance", mutated([](OJson& j) { j["segments"][1]["cost"]["provenance"] = "guessed"; }), "plan.format",
            "/segments/1/cost/provenance");
        row("bad seconds text", mutated([](OJson& j) { j["search"]["seconds"] = "soon"; }), "plan.format", "/search/seconds");
        row("bad memory total", mutated([](OJson& j) { j["memory_per_device"]["total"] = 1; }), "plan.format",
            "/memory_per_device/total");
        row("negative bytes", mutated([](OJson& j) { j["baselines"][0]["memory_per_device"]["weights"] = -5; }),
            "plan.format", "/baselines/0/memory_per_device/weights");
        row("infeasible with a time", mutated([](OJson& j) { j["baselines"][1]["step_seconds"] = 1.0; }), "plan.format",
            "/baselines/1/step_seconds");
        row("feasible without a time", mutated([](OJson& j) { j["baselines"][0]["step_seconds"] = nullptr; }), "plan.format",
            "/baselines/0/step_seconds");
        row("bad sharding", mutated([](OJson& j) { j["tensors"][4]["result"] = "[{x},{"; }), "plan.sharding",
            "/tensors/4/result");
        row("bad operand sharding", mutated([](OJson& j) { j["tensors"][7]["operands"][0] = "[{x},{x}]"; }), "plan.sharding",
            "/tensors/7/operands/0");
        row("sharding on unknown axis", mutated([](OJson& j) { j["tensors"][4]["result"] = "[{q},{}]"; }), "plan.sharding",
            "/tensors/4/result");
        row("unknown own collective axis", mutated([](OJson& j) { j["tensors"][4]["own_collective_axes"] = {"q"}; }),
            "plan.sharding", "/tensors/4/own_collective_axes/0");
        row("bad mesh", mutated([](OJson& j) { j["mesh"]["text"] = "{x=0 (inter), y=4 (intra)}"; }), "plan.mesh",
            "/mesh/text");
        row("mesh garbage", mutated([](OJson& j) { j["mesh"]["text"] = "2x"; }), "plan.mesh", "/mesh/text");
        row("mesh axes disagree", mutated([](OJson& j) { j["mesh"]["axes"][1]["size"] = 8; }), "plan.mesh",
            "/mesh/axes/1/size");
        row("mesh link disagrees", mutated([](OJson& j) { j["mesh"]["axes"][0]["link"] = "intra"; }), "plan.mesh",
            "/mesh/axes/0/link");
        row("mesh axis missing", mutated([](OJson& j) { j["mesh"]["axes"].erase(1); }), "plan.mesh", "/mesh/axes");
        row("tensor index out of range", mutated([](OJson& j) { j["tensors"][9]["op"] = 100000; }), "plan.format",
            "/tensors/9/op");
        row("negative tensor index", mutated([](OJson& j) { j["tensors"][0]["op"] = -1; }), "plan.format", "/tensors/0/op");
        row("tensor count", mutated([](OJson& j) { j["tensors"].erase(j["tensors"].size() - 1); }), "plan.format",
            "/tensors");
        row("block out of range", mutated([](OJson& j) { j["tensors"][2]["block"] = 4; }), "plan.format", "/tensors/2/block");
        row("block below -1", mutated([](OJson& j) { j["tensors"][2]["block"] = -2; }), "plan.format", "/tensors/2/block");
        row("blocks out of order", mutated([](OJson& j) { j["blocks"][1]["block"] = 2; }), "plan.format", "/blocks/1/block");
        row("segment beyond blocks", mutated([](OJson& j) { j["segments"][1]["first_block"] = 3; }), "plan.format",
            "/segments/1/blocks");
        row("segment combination length", mutated([](OJson& j) { j["segments"][0]["combination"] = {1}; }), "plan.format",
            "/segments/0/combination");
        row("segment combination differs", mutated([](OJson& j) { j["segments"][0]["combination"][0] = 2; }), "plan.format",
            "/segments/0/combination/0");
        row("segment label differs", mutated([](OJson& j) { j["segments"][0]["labels"][1] = "y:rows"; }), "plan.format",
            "/segments/0/labels/1");
        row("segment index", mutated([](OJson& j) { j["segments"][1]["index"] = 5; }), "plan.format", "/segments/1/index");
        row("huge integer", replaced(good, "\"memory_limit_bytes\": 85899345920,", "\"memory_limit_bytes\": 99999999999999999999999,"),
            "plan.format", "/memory_limit_bytes");
        row("uint64 max", replaced(good, "\"memory_limit_bytes\": 85899345920,", "\"memory_limit_bytes\": 18446744073709551615,"),
            "plan.format", "/memory_limit_bytes");
        row("below int64", replaced(good, "\"memory_limit_bytes\": 85899345920,", "\"memory_limit_bytes\": -9223372036854775809,"),
            "plan.format", "/memory_limit_bytes");
        row("overflowing number", replaced(good, "\"memory_limit_bytes\": 85899345920,", "\"memory_limit_bytes\": 1e999,"),
            "plan.syntax", "L:C");
        row("huge op count", mutated([](OJson& j) { j["model"]["ops"] = int64_t{1} << 40; }), "plan.format", "/model/ops");
        row("huge block index", mutated([](OJson& j) { j["blocks"][0]["strategy"] = int64_t{1} << 33; }), "plan.format",
            "/blocks/0/strategy");
        row("huge segment", mutated([](OJson& j) { j["segments"][0]["blocks"] = 2147483647; }), "plan.format",
            "/segments/0/blocks");
        row("zero nodes", mutated([](OJson& j) { j["hardware"]["nodes"] = 0; }), "plan.format", "/hardware/nodes");
        row("huge mesh", mutated([](OJson& j) {
                j["mesh"]["text"] = "x=1048576,y=1048576";
                j["mesh"]["axes"] = OJson::array();
            }),
            "plan.mesh", "/mesh/text");
    }

    void malformedInputs() {
        QFETCH(std::string, text);
        QFETCH(std::string, code);
        QFETCH(std::string, where);
        std::vector<std::string> names{"stale"};
        auto r = planFromJson(text, "bad.json", &names);
        QVERIFY(!r.ok());
        QVERIFY(names.empty());
        QVERIFY2(r.error().code == code, errorText(r.error()).c_str());
        if (where == "L:C") {
            QVERIFY2(QRegularExpression("^\\d+:\\d+$").match(QString::fromStdString(r.error().where)).hasMatch(),
                     errorText(r.error()).c_str());
        } else if (!where.empty()) {
            QVERIFY2(r.error().where == where, errorText(r.error()).c_str());
        }
        QVERIFY2(r.error().message.ends_with("(in bad.json)"), r.error().message.c_str());
        if (code == "plan.version")
            QVERIFY2(r.error().message.find("supports versions 2 and 3") != std::string::npos, r.error().message.c_str());
    }

    // A version-2 plan (before gradient accumulation) reads as one round per step.
    void readsVersionTwoAsOneRound() {
        const std::string v2 = mutated([](OJson& j) {
            j["version"] = 2;
            j["memory_policy"].erase("accumulation_steps");
            j["memory_policy"].erase("attention");
            j["memory_policy"].erase("zero_stage");
            j["memory_policy"].erase("overlap");
            j["memory_policy"].erase("bucket_bytes");
            j["memory_policy"].erase("cross_entropy");
        });
        auto r = planFromJson(v2, "v2.json");
        QVERIFY2(r.ok(), r.ok() ? "" : errorText(r.error()).c_str());
        QCOMPARE(r->policy.accumulation, int64_t{1});
        QVERIFY(r->policy.attention == AttentionKernel::Eager);  // version-2 plans priced attention op by op
        const std::string four = mutated([](OJson& j) { j["memory_policy"]["accumulation_steps"] = 4; });
        auto r4 = planFromJson(four, "four.json");
        QVERIFY2(r4.ok(), r4.ok() ? "" : errorText(r4.error()).c_str());
        QCOMPARE(r4->policy.accumulation, int64_t{4});
        // FlashAttention-2's speed (--attention flash2) is kept; an unknown kernel names the choices.
        auto f2 = planFromJson(mutated([](OJson& j) { j["memory_policy"]["attention"] = "flash2"; }), "f2.json");
        QVERIFY2(f2.ok(), f2.ok() ? "" : errorText(f2.error()).c_str());
        QVERIFY(f2->policy.attention == AttentionKernel::Flash2);
        QVERIFY(fusedAttention(f2->policy.attention));
        auto bad = planFromJson(mutated([](OJson& j) { j["memory_policy"]["attention"] = "flash3"; }), "bad.json");
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.find("expected flash, flash2 or eager") != std::string::npos, bad.error().message.c_str());
    }

    void syntaxErrorsAreLocated() {
        auto r = planFromJson("{\n  \"format\": \"cfp-plan\",\n  \"version\": 1,\n  oops\n}\n", "");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("plan.syntax"));
        QCOMPARE(r.error().where, std::string("4:3"));
        QVERIFY(r.error().message.find("(in") == std::string::npos);
    }

    // Random truncations and byte changes never crash the reader.
    void neverCrashes() {
        const std::string good = planToText(mlp().plan, mlp().graph);
        std::mt19937 rng(12345);
        int accepted = 0;
        for (size_t cut = 0; cut + 1 < good.size(); cut += 7) accepted += planFromJson(good.substr(0, cut), "").ok();
        QCOMPARE(accepted, 0);
        const char alphabet[] = "{}[],:\"0123456789-+.eE \\nulltruefalsexy{}[]";
        for (int trial = 0; trial < 3000; ++trial) {
            std::string text = good;
            const int edits = 1 + static_cast<int>(rng() % 4);
            for (int e = 0; e < edits; ++e) {
                const size_t at = rng() % text.size();
                switch (rng() % 3) {
                    case 0: text[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
                    case 1: text.erase(at, 1 + rng() % 8); break;
                    default: text.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
                }
                if (text.empty()) text = "{";
            }
            auto r = planFromJson(text, "");
            if (r.ok()) {
                (void)checkPlanAgainstGraph(*r, mlp().graph);
                (void)planToText(*r, mlp().graph);
            } else {
                QVERIFY(r.error().code.starts_with("plan."));
            }
        }
        // Deep nesting is neither a stack overflow nor accepted.
        const std::string deep = std::string(200000, '[') + std::string(200000, ']');
        auto r = planFromJson(deep, "");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("plan.format"));
    }

    void writesAndReadsFiles() {
        const Fixture& f = gpt();
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.path().toStdString() + "/plan.json";
        auto s = writePlanFile(path, f.plan, f.graph);
        QVERIFY2(s.ok(), s.ok() ? "" : errorText(s.error()).c_str());
        QCOMPARE(bytes(slurp(path)), bytes(planToText(f.plan, f.graph)));
        std::vector<std::string> names;
        auto back = readPlanFile(path, &names);
        QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
        COMPARE_PLANS(*back, f.plan);
        QVERIFY(checkPlanAgainstGraph(*back, f.graph, &names).ok());
        // Re-writing the plan read back gives the same bytes.
        const std::string again = dir.path().toStdString() + "/again.json";
        QVERIFY(writePlanFile(again, *back, f.graph).ok());
        QCOMPARE(bytes(slurp(again)), bytes(slurp(path)));

        // Errors from a file name it.
        spit(dir.path().toStdString() + "/bad.json", "{\"format\": \"cfp-plan\", \"version\": 99}");
        auto bad = readPlanFile(dir.path().toStdString() + "/bad.json");
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code, std::string("plan.version"));
        QVERIFY(bad.error().message.ends_with("(in " + dir.path().toStdString() + "/bad.json)"));

        auto missing = readPlanFile(dir.path().toStdString() + "/missing.json");
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code, std::string("plan.io"));
        QCOMPARE(missing.error().where, dir.path().toStdString() + "/missing.json");
        auto directory = readPlanFile(dir.path().toStdString());
        QVERIFY(!directory.ok());
        QCOMPARE(directory.error().code, std::string("plan.io"));
    }

    void unwritablePathsLeaveNothingBehind() {
        const Fixture& f = mlp();
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString();
        auto entries = [&] {
            return std::distance(std::filesystem::directory_iterator(root), std::filesystem::directory_iterator());
        };

        // A missing directory, and a path through a regular file (fails for root too).
        auto s = writePlanFile(root + "/missing/plan.json", f.plan, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.io"));
        QCOMPARE(s.error().where, root + "/missing/plan.json");
        spit(root + "/plain", "x");
        s = writePlanFile(root + "/plain/plan.json", f.plan, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.io"));
        QCOMPARE(entries(), std::ptrdiff_t{1});

        // The target is a directory: the finished temporary file cannot replace it and is removed.
        std::filesystem::create_directory(root + "/taken");
        s = writePlanFile(root + "/taken", f.plan, f.graph);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.io"));
        QVERIFY(std::filesystem::is_directory(root + "/taken"));
        QCOMPARE(entries(), std::ptrdiff_t{2});

        // A write that fails part-way (file size limit, as a full disk) keeps the old file.
        const std::string path = root + "/plan.json";
        spit(path, "old content\n");
        const std::string big = planToText(gpt().plan, gpt().graph);
        QVERIFY(big.size() > 8192);
        auto* previousHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit saved{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        rlimit small = saved;
        small.rlim_cur = 4096;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        s = writePlanFile(path, gpt().plan, gpt().graph);
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, previousHandler);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("plan.io"));
        QVERIFY2(s.error().message.find("io.write") != std::string::npos, s.error().message.c_str());
        QCOMPARE(bytes(slurp(path)), QByteArray("old content\n"));
        QCOMPARE(entries(), std::ptrdiff_t{3});
    }
};

QTEST_GUILESS_MAIN(TestPlanJson)
#include "tst_plan_json.moc"
