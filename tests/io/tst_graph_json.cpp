// The native JSON graph format: exact round trips, deterministic bytes, a golden file, clear
// located errors for malformed input, and the atomic file writer.
#include <QtTest>

#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "io/atomic_file.h"
#include "io/graph_json.h"
#include "ir/graph_builder.h"

#include "must.h"

using namespace cfp;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string kDataDir = std::string(CFP_TEST_DATA_DIR) + "/graphs";

TensorType t(const char* text) { return test::must(parseTensorType(text), text); }

QByteArray bytes(const std::string& s) { return QByteArray::fromStdString(s); }

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

// A graph with every op kind, every phase, role, reduce kind, comparison direction and element
// type, provenance links, awkward names and literals that are hard to print exactly.
Graph allKindsGraph() {
    Graph g("all kinds: \"quoted\", tab\t, unicode \u00fc");
    GraphBuilder b(g);
    auto outer = b.scope("block.0");
    const OpId x = b.parameter("x", t("f32[4,8]"), ParamRole::Input);
    const OpId w = b.parameter("w/with~pointer chars", t("f32[8,8]"), ParamRole::Trainable);
    const OpId m = b.parameter("adam.m", t("f32[8,8]"), ParamRole::OptimizerState);
    b.parameter("ids64", t("s64[3]"), ParamRole::Input);
    b.parameter("half", t("f16[2,2]"), ParamRole::Input);
    const OpId c = b.constant(0.5, t("f32[4,8]"));
    {
        OpAttrs lit;
        lit.literal = {0.1, -0.0, 1e-310, std::numeric_limits<double>::max(), -2.5, 3.0, 1e22, 123456789012345678.0};
        b.addOp(OpKind::Constant, {}, lit, t("f64[2,4]"));
    }
    b.iota(t("s32[4,8]"), 1);

    auto inner = b.scope("elementwise");
    for (OpKind k : {OpKind::Negate, OpKind::Exponential, OpKind::Log, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Tanh,
                     OpKind::Logistic, OpKind::Abs, OpKind::Sign, OpKind::Sine, OpKind::Cosine})
        b.unary(k, x);
    b.convert(x, DType::BF16);
    for (OpKind k : {OpKind::Add, OpKind::Subtract, OpKind::Multiply, OpKind::Divide, OpKind::Maximum,
                     OpKind::Minimum, OpKind::Power})
        b.binary(k, x, c);
    std::vector<OpId> preds;
    for (auto dir : {ComparisonDirection::EQ, ComparisonDirection::NE, ComparisonDirection::LT,
                     ComparisonDirection::LE, ComparisonDirection::GT, ComparisonDirection::GE})
        preds.push_back(b.compare(x, c, dir));
    const OpId both = b.binary(OpKind::And, preds[0], preds[1]);
    const OpId either = b.binary(OpKind::Or, both, preds[2]);
    b.select(either, x, c);

    b.setScope("layout");
    const OpId bias = b.parameter("bias", t("f32[8]"), ParamRole::Trainable);
    b.broadcast(bias, {4, 8}, {1});
    b.reshape(x, {32});
    b.transpose(x, {1, 0});
    b.slice(x, {0, 1}, {4, 8}, {2, 3});
    b.concatenate({x, c, x}, 0);
    for (auto k : {ReduceKind::Add, ReduceKind::Max, ReduceKind::Min, ReduceKind::Multiply}) b.reduce(x, {1}, k);

    b.setScope("contraction");
    const OpId lhs = b.parameter("lhs", t("f32[2,3,4]"), ParamRole::Input);
    const OpId rhs = b.parameter("rhs", t("f32[2,4,5]"), ParamRole::Input);
    b.dot(lhs, rhs, DotDimensionNumbers{{0}, {0}, {2}, {1}});
    const OpId y = b.matmul(x, w);

    b.setScope("indexing");
    const OpId table = b.parameter("table", t("f32[10,4]"), ParamRole::Trainable);
    const OpId ids = b.parameter("ids", t("s32[3]"), ParamRole::Input);
    const OpId rows = b.gather(table, ids, GatherDimensionNumbers{{1}, {0}, {0}, 1, {1, 4}});
    b.scatter(table, ids, rows, ScatterDimensionNumbers{{1}, {0}, {0}, 1});
    // take_along_axis: batching dims pair table rows with index rows.
    const OpId scores = b.parameter("scores", t("f32[3,5]"), ParamRole::Input);
    const OpId picks = b.parameter("picks", t("s32[3,1]"), ParamRole::Input);
    const OpId picked = b.gather(scores, picks, GatherDimensionNumbers{{}, {1}, {1}, 1, {1, 1}, {0}, {0}});
    b.scatter(scores, picks, picked, ScatterDimensionNumbers{{}, {1}, {1}, 1, {0}, {0}});
    for (const char* type : {"s8[2]", "u8[0]", "s16[2]", "u16[2]", "f8e4m3fn[2]", "f8e5m2[2]"})
        b.parameter(std::string("small.") + type, t(type), ParamRole::Input);

    b.setScope("opaque");
    {
        OpAttrs a;
        a.target = "my_fused_kernel";
        b.addOp(OpKind::CustomCall, {x, w}, a, t("f32[4,8]"));
        a.target = "rng";
        b.addOp(OpKind::CustomCall, {}, a, t("f32[]"));
    }

    b.setScope("backward");
    b.setPhase(Phase::Backward);
    b.setDerived(y, 1);
    const OpId dw = b.matmul(b.transpose(x, {1, 0}), y);
    b.setDerived(kNoOp, 3);  // an operand index without a source op must survive too
    b.neg(dw);

    b.setScope("");
    b.setPhase(Phase::Optimizer);
    b.setDerived(w);
    const OpId updated = b.sub(w, b.mul(m, dw));
    b.setDerived(kNoOp);
    b.output(updated);
    b.output(y);
    b.output(y);  // an op may be listed twice
    return g;
}

// A two-layer MLP with a mean-squared loss: the golden file's graph.
Graph mlpGraph() {
    Graph g("mlp");
    GraphBuilder b(g);
    const OpId x = b.parameter("x", t("f32[4,8]"), ParamRole::Input);
    const OpId target = b.parameter("target", t("f32[4,2]"), ParamRole::Input);
    OpId h = kNoOp;
    {
        auto s = b.scope("fc1");
        const OpId w = b.parameter("fc1.weight", t("f32[8,16]"), ParamRole::Trainable);
        const OpId bias = b.parameter("fc1.bias", t("f32[16]"), ParamRole::Trainable);
        h = b.add(b.matmul(x, w), b.broadcast(bias, {4, 16}, {1}));
        h = b.max(h, b.broadcast(b.scalar(0.0, DType::F32), {4, 16}, {}));
    }
    OpId out = kNoOp;
    {
        auto s = b.scope("fc2");
        const OpId w = b.parameter("fc2.weight", t("f32[16,2]"), ParamRole::Trainable);
        out = b.matmul(h, w);
    }
    auto s = b.scope("loss");
    const OpId diff = b.sub(out, target);
    const OpId loss = b.binaryScalar(OpKind::Multiply, b.reduce(b.mul(diff, diff), {0, 1}), 1.0 / 8.0);
    b.output(loss);
    return g;
}

// A minimal document around the given node list and outputs.
std::string doc(const std::string& nodes, const std::string& outputs = "[]") {
    return R"({"format": "cfp-graph", "version": 1, "name": "t", "nodes": [)" + nodes + R"(], "outputs": )" +
           outputs + "}";
}

const std::string kParam = R"({"name": "p", "op": "parameter", "type": "f32[2]", "role": "input"})";
const std::string kParamQ = R"({"name": "q", "op": "parameter", "type": "f32[3]", "role": "input"})";

std::string node(const std::string& name, const std::string& op, const std::string& type, const std::string& rest) {
    return R"({"name": ")" + name + R"(", "op": ")" + op + R"(", "type": ")" + type + "\"" +
           (rest.empty() ? "" : ", " + rest) + "}";
}

std::string errorText(const Error& e) { return e.toString(); }

}  // namespace

class TestGraphJson : public QObject {
    Q_OBJECT

private slots:
    void allKindsGraphCoversEverything() {
        const Graph g = allKindsGraph();
        QVERIFY(g.validate().ok());
        std::set<OpKind> kinds;
        std::set<Phase> phases;
        std::set<ParamRole> roles;
        std::set<ReduceKind> reduceKinds;
        std::set<ComparisonDirection> directions;
        std::set<DType> dtypes;
        for (const Op& op : g.ops()) {
            kinds.insert(op.kind);
            phases.insert(op.phase);
            if (op.kind == OpKind::Parameter) roles.insert(op.role);
            if (op.kind == OpKind::Reduce) reduceKinds.insert(op.attrs.reduceKind);
            if (op.kind == OpKind::Compare) directions.insert(op.attrs.comparison);
            dtypes.insert(op.type.dtype);
        }
        QCOMPARE(int(kinds.size()), kOpKindCount);
        QCOMPARE(int(phases.size()), 3);
        QCOMPARE(int(roles.size()), 3);
        QCOMPARE(int(reduceKinds.size()), 4);
        QCOMPARE(int(directions.size()), 6);
        QCOMPARE(dtypes.size(), std::size(kAllDTypes));
    }

    void roundTripsExactly_data() {
        QTest::addColumn<int>("which");
        QTest::newRow("every kind and attribute") << 0;
        QTest::newRow("mlp") << 1;
        QTest::newRow("empty graph") << 2;
    }
    void roundTripsExactly() {
        QFETCH(int, which);
        const Graph g = which == 0 ? allKindsGraph() : which == 1 ? mlpGraph() : Graph("empty");
        const std::string text = writeGraphJson(g);
        auto back = readGraphJson(text, "roundtrip.json");
        QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
        QVERIFY(back->validate().ok());
        QVERIFY(*back == g);
        QCOMPARE(bytes(writeGraphJson(*back)), bytes(text));
    }

    void writerIsDeterministic() {
        const Graph a = allKindsGraph();
        const Graph b = allKindsGraph();
        const std::string text = writeGraphJson(a);
        QCOMPARE(bytes(writeGraphJson(a)), bytes(text));
        QCOMPARE(bytes(writeGraphJson(b)), bytes(text));
        QVERIFY(text.back() == '\n');
    }

    void goldenMlp() {
        const std::string path = kDataDir + "/mlp.json";
        const std::string text = writeGraphJson(mlpGraph());
        if (qEnvironmentVariableIsSet("CFP_UPDATE_GOLDEN")) spit(path, text);
        QCOMPARE(bytes(text), bytes(slurp(path)));
        auto read = readGraphFile(path);
        QVERIFY2(read.ok(), read.ok() ? "" : errorText(read.error()).c_str());
        QVERIFY(*read == mlpGraph());
    }

    void literalsKeepEveryDouble() {
        const Graph g = allKindsGraph();
        auto back = readGraphJson(writeGraphJson(g), {});
        QVERIFY(back.ok());
        const Op& lit = back->op(back->find("constant.6"));
        QCOMPARE(lit.kind, OpKind::Constant);
        QCOMPARE(lit.attrs.literal.size(), size_t{8});
        QVERIFY(std::signbit(lit.attrs.literal[1]));  // -0.0 keeps its sign
        QCOMPARE(lit.attrs.literal[2], 1e-310);       // subnormal
        QCOMPARE(lit.attrs.literal[3], std::numeric_limits<double>::max());
    }

    void nonFiniteLiteralsAreStrings() {
        Graph g("nonfinite");
        GraphBuilder b(g);
        OpAttrs a;
        a.literal = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()};
        b.addOp(OpKind::Constant, {}, a, t("f32[3]"));
        const std::string text = writeGraphJson(g);
        QVERIFY(text.find(R"("literal": ["nan", "inf", "-inf"])") != std::string::npos);
        auto back = readGraphJson(text, {});
        QVERIFY(back.ok());
        const auto& lit = back->op(0).attrs.literal;
        QVERIFY(std::isnan(lit[0]));
        QVERIFY(std::isinf(lit[1]) && lit[1] > 0);
        QVERIFY(std::isinf(lit[2]) && lit[2] < 0);
        QCOMPARE(bytes(writeGraphJson(*back)), bytes(text));
    }

    void readsNodesInAnyOrder() {
        // c uses a and b; file order c, a, b must come out a, b, c (stable where the order allows).
        const std::string text = doc(node("c", "add", "f32[2]", R"("operands": ["a", "b"])") + ", " +
                                         node("a", "parameter", "f32[2]", R"("role": "input")") + ", " +
                                         node("b", "negate", "f32[2]", R"("operands": ["a"])") + ", " +
                                         node("z", "parameter", "f32[2]", R"("role": "input")"),
                                     R"(["c"])");
        auto g = readGraphJson(text, {});
        QVERIFY2(g.ok(), g.ok() ? "" : errorText(g.error()).c_str());
        std::vector<std::string> names;
        for (const Op& op : g->ops()) names.push_back(op.name);
        QCOMPARE(names, (std::vector<std::string>{"a", "b", "c", "z"}));
        QCOMPARE(g->outputs(), (std::vector<OpId>{2}));
        QCOMPARE(g->op(2).operands, (std::vector<OpId>{0, 1}));
        QVERIFY(g->validate().ok());
    }

    void shuffledFileReadsBackToTheSameOps() {
        const Graph g = allKindsGraph();
        // Re-emit the nodes of the written file in a shuffled order.
        std::string text = writeGraphJson(g);
        const size_t begin = text.find("\"nodes\": [\n") + 11;
        const size_t end = text.find("\n  ],\n");
        std::vector<std::string> lines;
        std::istringstream in(text.substr(begin, end - begin));
        for (std::string line; std::getline(in, line);) {
            if (line.back() == ',') line.pop_back();
            lines.push_back(line);
        }
        QCOMPARE(int64_t(lines.size()), g.size());
        std::mt19937 rng(7);
        std::shuffle(lines.begin(), lines.end(), rng);
        std::string nodes;
        for (size_t i = 0; i < lines.size(); ++i) nodes += (i ? ",\n" : "\n") + lines[i];
        text = text.substr(0, begin - 1) + nodes + text.substr(end);

        auto back = readGraphJson(text, {});
        QVERIFY2(back.ok(), back.ok() ? "" : errorText(back.error()).c_str());
        QVERIFY(back->validate().ok());
        QCOMPARE(back->size(), g.size());
        auto nameOf = [](const Graph& gr, OpId id) { return id == kNoOp ? std::string("-") : gr.op(id).name; };
        for (const Op& op : back->ops()) {
            const Op& orig = g.op(g.find(op.name));
            QCOMPARE(op.kind, orig.kind);
            QCOMPARE(op.type, orig.type);
            QVERIFY(op.attrs == orig.attrs);
            QCOMPARE(op.scope, orig.scope);
            QCOMPARE(op.phase, orig.phase);
            QCOMPARE(op.role, orig.role);
            QCOMPARE(op.derivedOperand, orig.derivedOperand);
            QCOMPARE(nameOf(*back, op.derivedFrom), nameOf(g, orig.derivedFrom));
            QCOMPARE(op.operands.size(), orig.operands.size());
            for (size_t i = 0; i < op.operands.size(); ++i)
                QCOMPARE(nameOf(*back, op.operands[i]), nameOf(g, orig.operands[i]));
        }
        QCOMPARE(back->outputs().size(), g.outputs().size());
        for (size_t i = 0; i < g.outputs().size(); ++i)
            QCOMPARE(nameOf(*back, back->outputs()[i]), nameOf(g, g.outputs()[i]));
    }

    void acceptsOptionalFieldsAndForwardProvenance() {
        // phase, scope and operands may be left out; derived_from may name a later node.
        const std::string text =
            doc(node("d", "negate", "f32[2]", R"("operands": ["p"], "derived_from": "e", "derived_operand": 0)") +
                ", " + kParam + ", " + node("e", "exponential", "f32[2]", R"("operands": ["p"], "phase": "backward")"));
        auto g = readGraphJson(text, {});
        QVERIFY2(g.ok(), g.ok() ? "" : errorText(g.error()).c_str());
        QVERIFY(g->validate().ok());
        const Op& d = g->op(g->find("d"));
        QCOMPARE(d.derivedFrom, g->find("e"));
        QCOMPARE(d.derivedOperand, 0);
        QCOMPARE(d.phase, Phase::Forward);
        QCOMPARE(d.scope, std::string());
        QCOMPARE(g->op(g->find("e")).phase, Phase::Backward);
        auto again = readGraphJson(writeGraphJson(*g), {});
        QVERIFY(again.ok() && *again == *g);
    }

    void hugeTypesDoNotAllocate() {
        // 2^60 elements: a valid type; a splat constant and a huge-stride slice must not allocate or overflow.
        const std::string text =
            doc(node("big", "constant", "f32[1073741824,1073741824]", R"("literal": [0])") + ", " +
                node("s", "slice", "f32[1,1]",
                     R"("operands": ["big"], "slice": {"start": [0, 0], "limit": [4, 4], "stride": [9223372036854775807, 9223372036854775807]})"));
        auto g = readGraphJson(text, {});
        QVERIFY2(g.ok(), g.ok() ? "" : errorText(g.error()).c_str());
        QCOMPARE(g->op(1).type, t("f32[1,1]"));
    }

    void rejectsMalformedInput_data() {
        QTest::addColumn<std::string>("text");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("where");

        // -- JSON syntax: line:column of the offending byte
        QTest::newRow("empty text") << std::string() << "json.parse" << "in.json:1:1";
        QTest::newRow("truncated") << std::string(R"({"format": "cfp-graph", "version": 1, "nodes": [)")
                                   << "json.parse" << "in.json:1:49";
        QTest::newRow("truncated multi-line")
            << std::string("{\n  \"format\": \"cfp-graph\",\n  \"nodes\": [\n    {\"name\": \"p\"") << "json.parse"
            << "in.json:4:17";
        QTest::newRow("missing colon") << std::string("{\n  \"format\" \"cfp-graph\"\n}") << "json.parse"
                                       << "in.json:2:22";  // the parser stops at the end of the unexpected string
        QTest::newRow("trailing garbage") << doc(kParam) + " x" << "json.parse" << "in.json:1:" + QString::number(doc(kParam).size() + 2);
        QTest::newRow("invalid utf-8") << std::string("{\"format\": \"\xff\"}") << "json.parse" << "in.json:1:13";
        QTest::newRow("number overflow") << std::string("{\"format\": 1e500}") << "json.parse" << "in.json:1:16";
        QTest::newRow("duplicate key") << doc(R"({"name": "p", "op": "parameter", "type": "f32[2]", "type": "f32[3]", "role": "input"})")
                                       << "json.duplicate_key" << "in.json:/nodes/0/type";
        QTest::newRow("duplicate top-level key")
            << std::string(R"({"format": "cfp-graph", "version": 1, "version": 1, "nodes": []})") << "json.duplicate_key"
            << "in.json:/version";
        QTest::newRow("deep nesting") << doc(std::string(100000, '[') + std::string(100000, ']')) << "json.type"
                                      << "in.json:/nodes/0";
        // -- document
        QTest::newRow("top-level array") << std::string("[]") << "json.type" << "in.json";
        QTest::newRow("missing format") << std::string(R"({"version": 1, "nodes": []})") << "json.missing_field"
                                        << "in.json:/format";
        QTest::newRow("wrong format") << std::string(R"({"format": "onnx", "version": 1, "nodes": []})")
                                      << "json.bad_format" << "in.json:/format";
        QTest::newRow("format not a string") << std::string(R"({"format": ["cfp-graph"], "version": 1, "nodes": []})")
                                             << "json.type" << "in.json:/format";
        QTest::newRow("missing version") << std::string(R"({"format": "cfp-graph", "nodes": []})")
                                         << "json.missing_field" << "in.json:/version";
        QTest::newRow("unknown version") << std::string(R"({"format": "cfp-graph", "version": 2, "nodes": []})")
                                         << "json.unsupported_version" << "in.json:/version";
        QTest::newRow("version as string") << std::string(R"({"format": "cfp-graph", "version": "1", "nodes": []})")
                                           << "json.type" << "in.json:/version";
        QTest::newRow("version as float") << std::string(R"({"format": "cfp-graph", "version": 1.0, "nodes": []})")
                                          << "json.type" << "in.json:/version";
        QTest::newRow("unknown top-level field")
            << std::string(R"({"format": "cfp-graph", "version": 1, "nodes": [], "edges": []})") << "json.unknown_field"
            << "in.json:/edges";
        QTest::newRow("missing nodes") << std::string(R"({"format": "cfp-graph", "version": 1})") << "json.missing_field"
                                       << "in.json:/nodes";
        QTest::newRow("nodes is an object") << std::string(R"({"format": "cfp-graph", "version": 1, "nodes": {}})")
                                            << "json.type" << "in.json:/nodes";
        QTest::newRow("name is a number") << std::string(R"({"format": "cfp-graph", "version": 1, "name": 3, "nodes": []})")
                                          << "json.type" << "in.json:/name";
        // -- nodes: JSON shape
        QTest::newRow("node not an object") << doc(kParam + ", 3") << "json.type" << "in.json:/nodes/1";
        QTest::newRow("missing name") << doc(R"({"op": "parameter", "type": "f32[2]", "role": "input"})")
                                      << "json.missing_field" << "in.json:/nodes/0/name";
        QTest::newRow("name not a string") << doc(R"({"name": 1, "op": "parameter", "type": "f32[2]", "role": "input"})")
                                           << "json.type" << "in.json:/nodes/0/name";
        QTest::newRow("empty name") << doc(node("", "parameter", "f32[2]", R"("role": "input")")) << "graph.bad_name"
                                    << "in.json:/nodes/0/name";
        QTest::newRow("missing op") << doc(R"({"name": "p", "type": "f32[2]"})") << "json.missing_field"
                                    << "in.json:/nodes/0/op";
        QTest::newRow("unknown op") << doc(node("p", "convolution", "f32[2]", "")) << "graph.unknown_op"
                                    << "in.json:/nodes/0/op";
        QTest::newRow("missing type") << doc(R"({"name": "p", "op": "parameter", "role": "input"})")
                                      << "json.missing_field" << "in.json:/nodes/0/type";
        QTest::newRow("type not a string")
            << doc(R"({"name": "p", "op": "parameter", "type": [2], "role": "input"})") << "json.type"
            << "in.json:/nodes/0/type";
        QTest::newRow("bad type string") << doc(node("p", "parameter", "f32[2x]", R"("role": "input")")) << "shape.syntax"
                                         << "in.json:/nodes/0/type";
        QTest::newRow("unknown dtype") << doc(node("p", "parameter", "f8[2]", R"("role": "input")"))
                                       << "shape.unknown_dtype" << "in.json:/nodes/0/type";
        QTest::newRow("negative dim") << doc(node("p", "parameter", "f32[-2]", R"("role": "input")"))
                                      << "shape.negative_dim" << "in.json:/nodes/0/type";
        QTest::newRow("overflowing shape")
            << doc(node("p", "parameter", "f32[4294967296,4294967296]", R"("role": "input")")) << "shape.too_large"
            << "in.json:/nodes/0/type";
        QTest::newRow("unknown field") << doc(node("p", "parameter", "f32[2]", R"("role": "input", "shape": [2])"))
                                       << "json.unknown_field" << "in.json:/nodes/0/shape";
        QTest::newRow("unknown field with pointer chars")
            << doc(node("p", "parameter", "f32[2]", R"("role": "input", "a/b~c": 1)")) << "json.unknown_field"
            << "in.json:/nodes/0/a~1b~0c";
        QTest::newRow("attribute of another kind")
            << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "p"], "dimensions": [0])"))
            << "json.unknown_field" << "in.json:/nodes/1/dimensions";
        QTest::newRow("role on a non-parameter")
            << doc(kParam + ", " + node("a", "negate", "f32[2]", R"("operands": ["p"], "role": "input")"))
            << "json.unknown_field" << "in.json:/nodes/1/role";
        QTest::newRow("operands is a string") << doc(kParam + ", " + node("a", "negate", "f32[2]", R"("operands": "p")"))
                                              << "json.type" << "in.json:/nodes/1/operands";
        QTest::newRow("operand is a number") << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", 0])"))
                                             << "json.type" << "in.json:/nodes/1/operands/1";
        QTest::newRow("bad phase") << doc(node("p", "parameter", "f32[2]", R"("role": "input", "phase": "fwd")"))
                                   << "json.bad_value" << "in.json:/nodes/0/phase";
        QTest::newRow("phase is a number") << doc(node("p", "parameter", "f32[2]", R"("role": "input", "phase": 0)"))
                                           << "json.type" << "in.json:/nodes/0/phase";
        QTest::newRow("scope is an array") << doc(node("p", "parameter", "f32[2]", R"("role": "input", "scope": ["a"])"))
                                           << "json.type" << "in.json:/nodes/0/scope";
        // -- attributes
        QTest::newRow("missing role") << doc(node("p", "parameter", "f32[2]", "")) << "json.missing_field"
                                      << "in.json:/nodes/0/role";
        QTest::newRow("unknown role") << doc(node("p", "parameter", "f32[2]", R"("role": "weights")")) << "json.bad_value"
                                      << "in.json:/nodes/0/role";
        QTest::newRow("parameter with role none") << doc(node("p", "parameter", "f32[2]", R"("role": "none")"))
                                                  << "graph.bad_role" << "in.json:/nodes/0/role";
        QTest::newRow("dimensions is a string")
            << doc(kParam + ", " + node("b", "broadcast", "f32[3,2]", R"("operands": ["p"], "dimensions": "1")"))
            << "json.type" << "in.json:/nodes/1/dimensions";
        QTest::newRow("dimension is a float")
            << doc(kParam + ", " + node("b", "broadcast", "f32[3,2]", R"("operands": ["p"], "dimensions": [1.5])"))
            << "json.type" << "in.json:/nodes/1/dimensions/0";
        QTest::newRow("dimension beyond int64")
            << doc(kParam + ", " +
                   node("b", "broadcast", "f32[3,2]", R"("operands": ["p"], "dimensions": [18446744073709551615])"))
            << "json.out_of_range" << "in.json:/nodes/1/dimensions/0";
        QTest::newRow("missing reduce kind")
            << doc(kParam + ", " + node("r", "reduce", "f32[]", R"("operands": ["p"], "dimensions": [0])"))
            << "json.missing_field" << "in.json:/nodes/1/reduce_kind";
        QTest::newRow("unknown reduce kind")
            << doc(kParam + ", " +
                   node("r", "reduce", "f32[]", R"("operands": ["p"], "dimensions": [0], "reduce_kind": "sum")"))
            << "json.bad_value" << "in.json:/nodes/1/reduce_kind";
        QTest::newRow("unknown comparison")
            << doc(kParam + ", " + node("c", "compare", "pred[2]", R"("operands": ["p", "p"], "comparison_direction": "eq")"))
            << "json.bad_value" << "in.json:/nodes/1/comparison_direction";
        QTest::newRow("missing dot dimension numbers")
            << doc(kParam + ", " + node("d", "dot", "f32[]", R"("operands": ["p", "p"])")) << "json.missing_field"
            << "in.json:/nodes/1/dot_dimension_numbers";
        QTest::newRow("misspelt dot field")
            << doc(kParam + ", " + node("d", "dot", "f32[]",
                                        R"("operands": ["p", "p"], "dot_dimension_numbers": {"lhs_contracting": [0]})"))
            << "json.unknown_field" << "in.json:/nodes/1/dot_dimension_numbers/lhs_contracting";
        QTest::newRow("dot dims not a list")
            << doc(kParam + ", " + node("d", "dot", "f32[]",
                                        R"("operands": ["p", "p"], "dot_dimension_numbers": {"lhs_contracting_dims": 0})"))
            << "json.type" << "in.json:/nodes/1/dot_dimension_numbers/lhs_contracting_dims";
        QTest::newRow("slice without stride")
            << doc(kParam + ", " + node("s", "slice", "f32[1]", R"("operands": ["p"], "slice": {"start": [0], "limit": [1]})"))
            << "json.missing_field" << "in.json:/nodes/1/slice/stride";
        QTest::newRow("gather without index_vector_dim")
            << doc(kParam + ", " + node("g", "gather", "f32[1]",
                                        R"("operands": ["p", "p"], "gather_dimension_numbers": {}, "slice_sizes": [1])"))
            << "json.missing_field" << "in.json:/nodes/1/gather_dimension_numbers/index_vector_dim";
        QTest::newRow("custom-call without target") << doc(node("c", "custom-call", "f32[2]", "")) << "json.missing_field"
                                                    << "in.json:/nodes/0/custom_call_target";
        QTest::newRow("literal not an array") << doc(node("c", "constant", "f32[2]", R"("literal": 1.0)")) << "json.type"
                                              << "in.json:/nodes/0/literal";
        QTest::newRow("literal NaN spelt wrong") << doc(node("c", "constant", "f32[2]", R"("literal": [1, "NaN"])"))
                                                 << "json.bad_value" << "in.json:/nodes/0/literal/1";
        QTest::newRow("literal null") << doc(node("c", "constant", "f32[2]", R"("literal": [null, 1])")) << "json.type"
                                      << "in.json:/nodes/0/literal/0";
        QTest::newRow("literal count") << doc(node("c", "constant", "f32[3]", R"("literal": [1, 2])"))
                                       << "shape.bad_attribute" << "in.json:/nodes/0";
        QTest::newRow("derived_operand beyond int32")
            << doc(node("p", "parameter", "f32[2]", R"("role": "input", "derived_operand": 4294967296)"))
            << "json.out_of_range" << "in.json:/nodes/0/derived_operand";
        // -- graph structure
        QTest::newRow("duplicate name") << doc(kParam + ", " + kParam) << "graph.duplicate_name"
                                        << "in.json:/nodes/1/name";
        QTest::newRow("dangling operand") << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "q"])"))
                                          << "graph.dangling_operand" << "in.json:/nodes/1/operands/1";
        QTest::newRow("cycle") << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "b"])") + ", " +
                                      node("b", "negate", "f32[2]", R"("operands": ["a"])"))
                               << "graph.cycle" << "in.json:/nodes/1/operands/1";
        QTest::newRow("self cycle") << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "a"])"))
                                    << "graph.cycle" << "in.json:/nodes/1/operands/1";
        QTest::newRow("cycle behind a user") << doc(node("c", "negate", "f32[2]", R"("operands": ["a"])") + ", " +
                                                    node("a", "negate", "f32[2]", R"("operands": ["b"])") + ", " +
                                                    node("b", "negate", "f32[2]", R"("operands": ["a"])"))
                                             << "graph.cycle" << "in.json:/nodes/1/operands/0";
        QTest::newRow("dangling derived_from")
            << doc(node("p", "parameter", "f32[2]", R"("role": "input", "derived_from": "nobody")"))
            << "graph.dangling_derived_from" << "in.json:/nodes/0/derived_from";
        QTest::newRow("outputs not an array") << doc(kParam, R"("p")") << "json.type" << "in.json:/outputs";
        QTest::newRow("output is a number") << doc(kParam, "[0]") << "json.type" << "in.json:/outputs/0";
        QTest::newRow("dangling output") << doc(kParam, R"(["p", "loss"])") << "graph.dangling_output"
                                         << "in.json:/outputs/1";
        // -- shape inference (Graph::add's errors, located at the node)
        QTest::newRow("operand types differ")
            << doc(kParam + ", " + kParamQ + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "q"])"))
            << "shape.type_mismatch" << "in.json:/nodes/2";
        QTest::newRow("wrong operand count") << doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p"])"))
                                             << "shape.operand_count" << "in.json:/nodes/1";
        QTest::newRow("declared type disagrees")
            << doc(kParam + ", " + node("n", "negate", "f32[3]", R"("operands": ["p"])")) << "graph.type_mismatch"
            << "in.json:/nodes/1/type";
        QTest::newRow("bad transpose permutation")
            << doc(kParam + ", " + node("tr", "transpose", "f32[2]", R"("operands": ["p"], "dimensions": [1])"))
            << "shape.bad_attribute" << "in.json:/nodes/1";
    }
    void rejectsMalformedInput() {
        QFETCH(std::string, text);
        QFETCH(QString, code);
        QFETCH(QString, where);
        auto r = readGraphJson(text, "in.json");
        QVERIFY2(!r.ok(), "malformed input was accepted");
        const Error& e = r.error();
        QVERIFY2(QString::fromStdString(e.code) == code && QString::fromStdString(e.where) == where,
                 qPrintable("got " + QString::fromStdString(e.toString())));
        QVERIFY(!e.message.empty());
        // Without a source name the location is the bare pointer (or line:column).
        auto bare = readGraphJson(text, {});
        QVERIFY(!bare.ok());
        QString expectBare = where.mid(QString("in.json").size());
        if (expectBare.startsWith(':')) expectBare.remove(0, 1);
        QCOMPARE(QString::fromStdString(bare.error().where), expectBare);
    }

    void cycleMessageNamesTheCycle() {
        auto r = readGraphJson(doc(kParam + ", " + node("a", "add", "f32[2]", R"("operands": ["p", "b"])") + ", " +
                                   node("b", "negate", "f32[2]", R"("operands": ["a"])")),
                               {});
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("a -> b -> a") != std::string::npos, r.error().message.c_str());
    }

    void enforcesLimits() {
        GraphReadLimits limits;
        limits.maxNodes = 2;
        limits.maxLiteralValues = 3;
        auto tooMany = readGraphJson(doc(kParam + ", " + kParamQ + ", " +
                                         node("r", "parameter", "f32[]", R"("role": "input")")),
                                     {}, limits);
        QVERIFY(!tooMany.ok());
        QCOMPARE(tooMany.error().code, std::string("json.limit"));
        QCOMPARE(tooMany.error().where, std::string("/nodes"));
        auto bigLiteral = readGraphJson(doc(node("c", "constant", "f32[4]", R"("literal": [1, 2, 3, 4])")), {}, limits);
        QVERIFY(!bigLiteral.ok());
        QCOMPARE(bigLiteral.error().code, std::string("json.limit"));
        QCOMPARE(bigLiteral.error().where, std::string("/nodes/0/literal"));
        QVERIFY(readGraphJson(doc(node("c", "constant", "f32[3]", R"("literal": [1, 2, 3])")), {}, limits).ok());
    }

    // ---- files ----

    void fileErrorsNameTheFile() {
        const std::string dangling = kDataDir + "/bad_dangling_operand.json";
        auto r = readGraphFile(dangling);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("graph.dangling_operand"));
        QCOMPARE(r.error().where, dangling + ":/nodes/2/operands/1");

        const std::string truncated = kDataDir + "/bad_truncated.json";
        r = readGraphFile(truncated);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("json.parse"));
        QCOMPARE(r.error().where, truncated + ":6:1");

        r = readGraphFile(kDataDir + "/no_such_file.json");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("io.open"));
        QCOMPARE(r.error().where, kDataDir + "/no_such_file.json");

        r = readGraphFile(kDataDir);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("io.read"));

        GraphReadLimits small;
        small.maxFileBytes = 16;
        r = readGraphFile(kDataDir + "/mlp.json", small);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("io.too_large"));
    }

    void writesFilesThatReadBack() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.path().toStdString() + "/graph.json";
        const Graph g = allKindsGraph();
        auto s = writeGraphFile(g, path);
        QVERIFY2(s.ok(), s.ok() ? "" : errorText(s.error()).c_str());
        QCOMPARE(bytes(slurp(path)), bytes(writeGraphJson(g)));
        auto back = readGraphFile(path);
        QVERIFY(back.ok() && *back == g);
        // Nothing but the target is left in the directory.
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 std::ptrdiff_t{1});
    }

    void writeIntoMissingDirectoryFails() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/missing/graph.json";
        auto s = writeGraphFile(mlpGraph(), path);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("io.open"));
        QCOMPARE(s.error().where, path);
        QVERIFY(!std::filesystem::exists(path));

        // A path "through" a regular file fails the same way (this also holds when running as root,
        // where permission bits would not stop the write).
        spit(dir.path().toStdString() + "/plain", "x");
        s = writeGraphFile(mlpGraph(), dir.path().toStdString() + "/plain/graph.json");
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("io.open"));
    }

    void writeIntoReadOnlyDirectoryFails() {
        if (::geteuid() == 0) QSKIP("permission bits do not stop root");
        QTemporaryDir dir;
        const std::string sub = dir.path().toStdString() + "/ro";
        std::filesystem::create_directory(sub);
        ::chmod(sub.c_str(), 0555);
        auto s = writeGraphFile(mlpGraph(), sub + "/graph.json");
        ::chmod(sub.c_str(), 0755);
        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("io.open"));
    }

    void failedWriteKeepsTheOldFile() {
        // A file size limit makes write() fail with EFBIG part-way, as a full disk would with ENOSPC.
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/graph.json";
        spit(path, "old content\n");
        ::chmod(path.c_str(), 0600);
        const Graph g = allKindsGraph();
        QVERIFY(writeGraphJson(g).size() > 8192);

        auto* previousHandler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit saved{};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        rlimit small = saved;
        small.rlim_cur = 4096;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        auto s = writeGraphFile(g, path);
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, previousHandler);

        QVERIFY(!s.ok());
        QCOMPARE(s.error().code, std::string("io.write"));
        QCOMPARE(s.error().where, path);
        QCOMPARE(bytes(slurp(path)), QByteArray("old content\n"));
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 std::ptrdiff_t{1});

        // Once writing can succeed the file is replaced, and keeps its mode.
        s = writeGraphFile(g, path);
        QVERIFY2(s.ok(), s.ok() ? "" : errorText(s.error()).c_str());
        QCOMPARE(bytes(slurp(path)), bytes(writeGraphJson(g)));
        struct stat st {};
        QVERIFY(::stat(path.c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0600);
    }

    void newFilesAreWorldReadable() {
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/fresh.json";
        QVERIFY(writeFileAtomically(path, "{}\n").ok());
        struct stat st {};
        QVERIFY(::stat(path.c_str(), &st) == 0);
        QCOMPARE(int(st.st_mode & 0777), 0644);
    }
};

QTEST_GUILESS_MAIN(TestGraphJson)
#include "tst_graph_json.moc"
