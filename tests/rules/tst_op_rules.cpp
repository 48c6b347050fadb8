// Sharding rules per op kind: golden rule texts and forward/backward propagation cases.
#include <QtTest>

#include "ir/graph_builder.h"
#include "rules/op_rules.h"

#include "must.h"

using namespace cfp;

namespace {

TensorSharding s(const std::string& text) { return test::must(parseSharding(text), text); }

Mesh mesh(const char* text) { return test::must(parseMesh(text), text); }

// Small graphs with one op of interest, built by name.
struct Case {
    Graph graph{"case"};
    OpId op = kNoOp;
};

Case build(const QString& which) {
    Case c;
    GraphBuilder b(c.graph);
    const DType f = DType::F32;
    auto param = [&](const char* name, std::vector<int64_t> dims) {
        return b.parameter(name, TensorType{f, std::move(dims)}, ParamRole::Input);
    };
    if (which == "matmul") {
        c.op = b.matmul(param("x", {8, 16, 32}), param("w", {32, 64}));
    } else if (which == "batched") {
        c.op = b.dot(param("q", {8, 4, 16, 32}), param("k", {8, 4, 16, 32}), DotDimensionNumbers{{0, 1}, {0, 1}, {3}, {3}});
    } else if (which == "add") {
        c.op = b.add(param("a", {8, 16}), param("b", {8, 16}));
    } else if (which == "select") {
        OpId a = param("a", {8, 16});
        c.op = b.select(b.compare(a, param("b", {8, 16}), ComparisonDirection::LT), a, param("c", {8, 16}));
    } else if (which == "convert") {
        c.op = b.convert(param("a", {8, 16}), DType::BF16);
    } else if (which == "broadcast") {
        c.op = b.broadcast(param("a", {16}), {8, 16}, {1});
    } else if (which == "reshape-split") {
        c.op = b.reshape(param("x", {8, 1024, 4096}), {8, 1024, 32, 128});
    } else if (which == "reshape-merge") {
        c.op = b.reshape(param("x", {8, 1024, 32, 128}), {8, 1024, 4096});
    } else if (which == "transpose") {
        c.op = b.transpose(param("x", {8, 16, 4}), {0, 2, 1});
    } else if (which == "slice") {
        c.op = b.sliceAxis(param("x", {8, 16}), 1, 0, 8);
    } else if (which == "concatenate") {
        c.op = b.concatenate({param("a", {8, 16}), param("b", {8, 16})}, 1);
    } else if (which == "reduce-add") {
        c.op = b.reduce(param("x", {8, 16}), {1}, ReduceKind::Add);
    } else if (which == "reduce-max") {
        c.op = b.reduce(param("x", {8, 16}), {1}, ReduceKind::Max);
    } else if (which == "gather") {
        GatherDimensionNumbers g;
        g.offsetDims = {2};
        g.collapsedSliceDims = {0};
        g.startIndexMap = {0};
        g.indexVectorDim = 2;
        g.sliceSizes = {1, 64};
        OpId table = b.parameter("table", TensorType{f, {1000, 64}}, ParamRole::Trainable);
        OpId ids = b.parameter("ids", TensorType{DType::S32, {8, 16}}, ParamRole::Input);
        c.op = b.gather(table, ids, g);
    } else if (which == "scatter") {
        ScatterDimensionNumbers sd;
        sd.updateWindowDims = {2};
        sd.insertedWindowDims = {0};
        sd.scatterDimsToOperandDims = {0};
        sd.indexVectorDim = 2;
        OpId zeros = b.broadcast(b.scalar(0.0, f), {1000, 64}, {});
        OpId ids = b.parameter("ids", TensorType{DType::S32, {8, 16}}, ParamRole::Input);
        c.op = b.scatter(zeros, ids, param("upd", {8, 16, 64}), sd);
    } else if (which == "iota") {
        c.op = b.iota(TensorType{DType::S32, {8, 16}}, 1);
    }
    return c;
}

}  // namespace

class TestOpRules : public QObject {
    Q_OBJECT

private slots:
    void golden_data() {
        QTest::addColumn<QString>("which");
        QTest::addColumn<QString>("rule");
        QTest::newRow("dot") << "matmul" << "([i,j,l], [l,k]) -> [i,j,k] {i=8, j=16, k=64, l=32 reduction}";
        QTest::newRow("batched dot") << "batched" << "([i,j,k,m], [i,j,l,m]) -> [i,j,k,l] {i=8, j=4, k=16, l=16, m=32 reduction}";
        QTest::newRow("add") << "add" << "([i,j], [i,j]) -> [i,j] {i=8, j=16}";
        QTest::newRow("select") << "select" << "([i,j], [i,j], [i,j]) -> [i,j] {i=8, j=16}";
        QTest::newRow("convert") << "convert" << "([i,j]) -> [i,j] {i=8, j=16}";
        QTest::newRow("broadcast") << "broadcast" << "([j]) -> [i,j] {i=8, j=16}";
        QTest::newRow("reshape split") << "reshape-split" << "([i,j,k]) -> [i,j,k,l] {i=8, j=1024, k=32, l=128 blocked}";
        QTest::newRow("reshape merge") << "reshape-merge" << "([i,j,k,l]) -> [i,j,k] {i=8, j=1024, k=32, l=128 blocked}";
        QTest::newRow("transpose") << "transpose" << "([i,j,k]) -> [i,k,j] {i=8, j=16, k=4}";
        QTest::newRow("slice") << "slice" << "([i,j]) -> [i,j] {i=8, j=8 blocked}";
        QTest::newRow("concatenate") << "concatenate" << "([i,j], [i,j]) -> [i,j] {i=8, j=32 blocked}";
        QTest::newRow("reduce add") << "reduce-add" << "([i,j]) -> [i] {i=8, j=16 reduction}";
        QTest::newRow("reduce max") << "reduce-max" << "([i,j]) -> [i] {i=8, j=16 reduction}";
        QTest::newRow("gather") << "gather" << "([k,l], [i,j]) -> [i,j,l] {i=8, j=16, k=1000 reduction, l=64}";
        QTest::newRow("scatter") << "scatter" << "([i,j], [k,l], [k,l,j]) -> [i,j] {i=1000, j=64, k=8 reduction, l=16 reduction}";
        QTest::newRow("iota") << "iota" << "() -> [i,j] {i=8, j=16}";
    }
    void golden() {
        QFETCH(QString, which);
        QFETCH(QString, rule);
        Case c = build(which);
        auto r = shardingRuleFor(c.graph, c.graph.op(c.op));
        QVERIFY(r.ok());
        QCOMPARE(QString::fromStdString(r->toString()), rule);
        // Invariant: operand-only factors are never pass-through (the result would lose data).
        for (int32_t f = 0; f < r->factorCount(); ++f) {
            const bool inResult = std::find(r->resultDims.begin(), r->resultDims.end(), f) != r->resultDims.end();
            if (!inResult) QVERIFY(r->factors[static_cast<size_t>(f)].kind != FactorKind::PassThrough);
        }
    }

    void forward_data() {
        QTest::addColumn<QString>("which");
        QTest::addColumn<QString>("meshText");
        QTest::addColumn<QStringList>("operands");
        QTest::addColumn<QString>("expected");  // result sharding or "needs communication"
        const QString nc = "needs communication";
        QTest::newRow("dot batch") << "matmul" << "8" << QStringList{"[{x},{},{}]", "[{},{}]"} << "[{x},{},{}] partial{}";
        QTest::newRow("dot cols") << "matmul" << "8" << QStringList{"[{},{},{}]", "[{},{x}]"} << "[{},{},{x}] partial{}";
        QTest::newRow("dot contraction") << "matmul" << "8" << QStringList{"[{},{},{x}]", "[{x},{}]"} << "[{},{},{}] partial{x}";
        QTest::newRow("dot 2-D") << "matmul" << "dp=2,tp=4" << QStringList{"[{dp},{},{}]", "[{},{tp}]"} << "[{dp},{},{tp}] partial{}";
        QTest::newRow("dot contraction mismatch") << "matmul" << "8" << QStringList{"[{},{},{x}]", "[{},{}]"} << nc;
        QTest::newRow("dot axis twice") << "matmul" << "8" << QStringList{"[{x},{},{}]", "[{},{x}]"} << nc;
        QTest::newRow("dot uneven") << "matmul" << "16" << QStringList{"[{x},{},{}]", "[{},{}]"} << nc;
        QTest::newRow("batched heads") << "batched" << "8" << QStringList{"[{},{x},{},{}]", "[{},{x},{},{}]"} << nc;  // 4 heads, 8 ways
        QTest::newRow("batched heads 2x4") << "batched" << "2x4" << QStringList{"[{x},{y},{},{}]", "[{x},{y},{},{}]"} << "[{x},{y},{},{}] partial{}";
        QTest::newRow("add agrees") << "add" << "8" << QStringList{"[{x},{}]", "[{x},{}]"} << "[{x},{}] partial{}";
        QTest::newRow("add disagrees") << "add" << "8" << QStringList{"[{x},{}]", "[{},{}]"} << nc;
        QTest::newRow("add axis order") << "add" << "2x4" << QStringList{"[{x,y},{}]", "[{y,x},{}]"} << nc;
        QTest::newRow("broadcast new dim free") << "broadcast" << "8" << QStringList{"[{x}]"} << nc;  // 16 over 8 ok? see below
        QTest::newRow("reshape H split → nh split") << "reshape-split" << "8" << QStringList{"[{},{},{x}]"} << "[{},{},{x},{}] partial{}";
        QTest::newRow("reshape merge nh → H") << "reshape-merge" << "8" << QStringList{"[{},{},{x},{}]"} << "[{},{},{x}] partial{}";
        QTest::newRow("reshape minor hd blocked") << "reshape-merge" << "8" << QStringList{"[{},{},{},{x}]"} << nc;
        QTest::newRow("transpose") << "transpose" << "2x4" << QStringList{"[{x},{y},{}]"} << "[{x},{},{y}] partial{}";
        QTest::newRow("slice kept dim") << "slice" << "8" << QStringList{"[{x},{}]"} << "[{x},{}] partial{}";
        QTest::newRow("slice sliced dim") << "slice" << "8" << QStringList{"[{},{x}]"} << nc;
        QTest::newRow("concat axis") << "concatenate" << "8" << QStringList{"[{},{x}]", "[{},{x}]"} << nc;
        QTest::newRow("concat other") << "concatenate" << "8" << QStringList{"[{x},{}]", "[{x},{}]"} << "[{x},{}] partial{}";
        QTest::newRow("reduce-add split") << "reduce-add" << "8" << QStringList{"[{},{x}]"} << "[{}] partial{x}";
        // A maximum over a split dim: each device's partial maximum, combined by an all-reduce (max).
        QTest::newRow("reduce-max split") << "reduce-max" << "8" << QStringList{"[{},{x}]"} << "[{}] partial{x}";
        QTest::newRow("reduce-max kept") << "reduce-max" << "8" << QStringList{"[{x},{}]"} << "[{x}] partial{}";
        QTest::newRow("gather vocab-parallel") << "gather" << "8" << QStringList{"[{x},{}]", "[{},{}]"} << "[{},{},{}] partial{x}";
        QTest::newRow("gather hidden") << "gather" << "8" << QStringList{"[{},{x}]", "[{},{}]"} << "[{},{},{x}] partial{}";
        QTest::newRow("gather batch") << "gather" << "8" << QStringList{"[{},{}]", "[{x},{}]"} << "[{x},{},{}] partial{}";
        QTest::newRow("scatter batch") << "scatter" << "8" << QStringList{"[{},{}]", "[{x},{}]", "[{x},{},{}]"} << "[{},{}] partial{x}";
        QTest::newRow("scatter rows") << "scatter" << "8" << QStringList{"[{x},{}]", "[{},{}]", "[{},{},{}]"} << "[{x},{}] partial{}";
        QTest::newRow("partial operand") << "add" << "8" << QStringList{"[{},{}] partial{x}", "[{},{}] partial{x}"} << nc;
    }
    void forward() {
        QFETCH(QString, which);
        QFETCH(QString, meshText);
        QFETCH(QStringList, operands);
        QFETCH(QString, expected);
        if (QString(QTest::currentDataTag()) == "broadcast new dim free") {
            // The broadcast's operand dim maps to result dim 1: split stays on it.
            expected = "[{},{x}] partial{}";
        }
        Case c = build(which);
        auto rule = shardingRuleFor(c.graph, c.graph.op(c.op));
        QVERIFY(rule.ok());
        std::vector<TensorSharding> in;
        for (const auto& o : operands) in.push_back(s(o.toStdString()));
        const Mesh m = mesh(meshText.toLatin1().constData());
        auto r = propagateForward(*rule, std::span<const TensorSharding>(in), m);
        if (expected == "needs communication") {
            QVERIFY2(!r.ok(), r.ok() ? r->toString().c_str() : "");
            QCOMPARE(QString::fromStdString(r.error().code), QString("rules.needs_communication"));
        } else {
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
            QCOMPARE(QString::fromStdString(r->toString()), expected);
        }
    }

    void backward_data() {
        QTest::addColumn<QString>("which");
        QTest::addColumn<QString>("meshText");
        QTest::addColumn<QString>("result");
        QTest::addColumn<QStringList>("expected");  // empty: needs communication
        QTest::newRow("dot rows") << "matmul" << "8" << "[{x},{},{}]" << QStringList{"[{x},{},{}] partial{}", "[{},{}] partial{}"};
        QTest::newRow("dot partial → contraction") << "matmul" << "8" << "[{},{},{}] partial{x}"
                                                   << QStringList{"[{},{},{x}] partial{}", "[{x},{}] partial{}"};
        QTest::newRow("broadcast") << "broadcast" << "2x4" << "[{x},{y}]" << QStringList{"[{y}] partial{}"};
        QTest::newRow("reshape nh → H") << "reshape-split" << "8" << "[{},{},{x},{}]" << QStringList{"[{},{},{x}] partial{}"};
        QTest::newRow("reshape hd blocked") << "reshape-split" << "8" << "[{},{},{},{x}]" << QStringList{};
        QTest::newRow("transpose") << "transpose" << "8" << "[{},{},{x}]" << QStringList{"[{},{x},{}] partial{}"};
        QTest::newRow("reduce-max kept") << "reduce-max" << "8" << "[{x}]" << QStringList{"[{x},{}] partial{}"};
        QTest::newRow("iota source") << "iota" << "8" << "[{},{x}]" << QStringList{};
    }
    void backward() {
        QFETCH(QString, which);
        QFETCH(QString, meshText);
        QFETCH(QString, result);
        QFETCH(QStringList, expected);
        Case c = build(which);
        auto rule = shardingRuleFor(c.graph, c.graph.op(c.op));
        QVERIFY(rule.ok());
        const Mesh m = mesh(meshText.toLatin1().constData());
        auto r = propagateBackward(*rule, s(result.toStdString()), m);
        if (expected.isEmpty() && which != "iota") {
            QVERIFY(!r.ok());
            return;
        }
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(static_cast<int>(r->size()), expected.size());
        for (int i = 0; i < expected.size(); ++i)
            QCOMPARE(QString::fromStdString((*r)[static_cast<size_t>(i)].toString()), expected[i]);
    }

    void customCallHasNoRule() {
        Graph g("cc");
        GraphBuilder b(g);
        OpId x = b.parameter("x", TensorType{DType::F32, {4}}, ParamRole::Input);
        Op op;
        op.kind = OpKind::CustomCall;
        op.name = "my_kernel";
        op.operands = {x};
        op.attrs.target = "flash_attention";
        op.type = TensorType{DType::F32, {4}};
        OpId id = b.addOp(op);
        auto r = shardingRuleFor(g, g.op(id));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("rules.no_rule"));
        QCOMPARE(QString::fromStdString(r.error().where), QString("my_kernel"));
        QVERIFY(QString::fromStdString(r.error().message).contains("flash_attention"));
        QVERIFY(!hasShardingRule(OpKind::CustomCall));
        for (int k = 0; k < kOpKindCount; ++k)
            if (static_cast<OpKind>(k) != OpKind::CustomCall) QVERIFY(hasShardingRule(static_cast<OpKind>(k)));
    }

    void compactRoundTrip() {
        const Mesh m = mesh("dp=2,tp=4");
        for (const char* text : {"[{dp},{},{tp}] partial{}", "[{tp,dp},{}] partial{}", "[{},{}] partial{dp,tp}", "[] partial{}"}) {
            auto c = toCompact(s(text), m);
            QVERIFY(c.ok());
            QCOMPARE(QString::fromStdString(fromCompact(*c, m).toString()), QString(text));
        }
    }
};

QTEST_GUILESS_MAIN(TestOpRules)
#include "tst_op_rules.moc"
