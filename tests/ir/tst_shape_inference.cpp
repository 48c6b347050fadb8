// Shape inference and validation: results for every op kind and clear errors for bad input.
#include <QtTest>

#include "ir/graph.h"
#include "ir/graph_builder.h"
#include "ir/shape_inference.h"
#include "util/checked_math.h"

#include "must.h"

using namespace cfp;

Q_DECLARE_METATYPE(std::string)

namespace {

TensorType t(const char* text) { return test::must(parseTensorType(text), text); }

Result<TensorType> infer(OpKind kind, std::vector<TensorType> operands, const OpAttrs& attrs = {},
                         const TensorType* declared = nullptr) {
    std::vector<const TensorType*> ptrs;
    for (auto& o : operands) ptrs.push_back(&o);
    return inferType(kind, ptrs, attrs, declared);
}

OpAttrs dims(std::vector<int64_t> d) {
    OpAttrs a;
    a.dimensions = std::move(d);
    return a;
}

OpAttrs dotDims(std::vector<int64_t> lb, std::vector<int64_t> rb, std::vector<int64_t> lc, std::vector<int64_t> rc) {
    OpAttrs a;
    a.dot = {std::move(lb), std::move(rb), std::move(lc), std::move(rc)};
    return a;
}

}  // namespace

class TestShapeInference : public QObject {
    Q_OBJECT

private slots:
    void parsesAndPrintsTypes_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("matrix") << "f32[8,1024]";
        QTest::newRow("scalar") << "bf16[]";
        QTest::newRow("pred") << "pred[4,4]";
        QTest::newRow("s64 zero dim") << "s64[0,3]";
    }
    void parsesAndPrintsTypes() {
        QFETCH(QString, text);
        auto r = parseTensorType(text.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(QString::fromStdString(r->toString()), text);
    }

    void rejectsBadTypes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::newRow("unknown dtype") << "f8[2]" << "shape.unknown_dtype";
        QTest::newRow("negative dim") << "f32[-1,2]" << "shape.negative_dim";
        QTest::newRow("garbage dim") << "f32[2x]" << "shape.syntax";
        QTest::newRow("no brackets") << "f32" << "shape.syntax";
        QTest::newRow("overflow") << "f32[4294967296,4294967296]" << "shape.too_large";
        QTest::newRow("overflow bytes") << "f64[1073741824,1073741824,8]" << "shape.too_large";
        QTest::newRow("trailing comma") << "f32[2,]" << "shape.syntax";
    }
    void rejectsBadTypes() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        auto r = parseTensorType(text.toStdString());
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), code);
    }

    void checkedMathDoesNotWrap() {
        QVERIFY(!checkedMul(int64_t{1} << 40, int64_t{1} << 40));
        QVERIFY(!checkedMul(-1, INT64_MIN));
        QCOMPARE(*checkedMul(3, 5), int64_t{15});
        const int64_t big[] = {int64_t{1} << 31, int64_t{1} << 31, 4};
        QVERIFY(!checkedProduct(big));
        const int64_t neg[] = {4, -2};
        QVERIFY(!checkedProduct(neg));
    }

    void infersValidOps_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QStringList>("operands");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("attrCase");
        QTest::newRow("add") << int(OpKind::Add) << QStringList{"f32[2,3]", "f32[2,3]"} << "f32[2,3]" << 0;
        QTest::newRow("compare") << int(OpKind::Compare) << QStringList{"s32[4]", "s32[4]"} << "pred[4]" << 0;
        QTest::newRow("exp") << int(OpKind::Exponential) << QStringList{"bf16[7]"} << "bf16[7]" << 0;
        QTest::newRow("select") << int(OpKind::Select) << QStringList{"pred[2]", "f32[2]", "f32[2]"} << "f32[2]" << 0;
        QTest::newRow("matmul") << int(OpKind::Dot) << QStringList{"f32[8,16,32]", "f32[32,64]"} << "f32[8,16,64]" << 1;
        QTest::newRow("batched matmul") << int(OpKind::Dot) << QStringList{"f32[4,8,16]", "f32[4,16,32]"} << "f32[4,8,32]" << 2;
        QTest::newRow("reduce") << int(OpKind::Reduce) << QStringList{"f32[2,3,4]"} << "f32[2,4]" << 3;
        QTest::newRow("transpose") << int(OpKind::Transpose) << QStringList{"f32[2,3,4]"} << "f32[4,2,3]" << 4;
        QTest::newRow("concatenate") << int(OpKind::Concatenate) << QStringList{"f32[2,3]", "f32[2,5]"} << "f32[2,8]" << 5;
        QTest::newRow("slice strided") << int(OpKind::Slice) << QStringList{"f32[10,4]"} << "f32[3,4]" << 6;
        QTest::newRow("embedding gather") << int(OpKind::Gather) << QStringList{"f32[100,16]", "s32[2,5]"} << "f32[2,5,16]" << 7;
        QTest::newRow("embedding scatter") << int(OpKind::Scatter) << QStringList{"f32[100,16]", "s32[2,5]", "f32[2,5,16]"} << "f32[100,16]" << 8;
    }
    void infersValidOps() {
        QFETCH(int, kind);
        QFETCH(QStringList, operands);
        QFETCH(QString, expected);
        QFETCH(int, attrCase);
        OpAttrs a;
        switch (attrCase) {
            case 1: a = dotDims({}, {}, {2}, {0}); break;
            case 2: a = dotDims({0}, {0}, {2}, {1}); break;
            case 3: a = dims({1}); break;
            case 4: a = dims({2, 0, 1}); break;
            case 5: a = dims({1}); break;
            case 6: a.slice = {{1, 0}, {8, 4}, {3, 1}}; break;
            case 7: a.gather = {{2}, {0}, {0}, 2, {1, 16}}; break;
            case 8: a.scatter = {{2}, {0}, {0}, 2}; break;
            default: break;
        }
        std::vector<TensorType> ops;
        for (const auto& o : operands) ops.push_back(t(o.toStdString().c_str()));
        auto r = infer(static_cast<OpKind>(kind), ops, a);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().toString().c_str());
        QCOMPARE(QString::fromStdString(r->toString()), expected);
    }

    void rejectsInvalidOps_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QStringList>("operands");
        QTest::addColumn<int>("attrCase");
        QTest::addColumn<QString>("code");
        QTest::newRow("add mismatched") << int(OpKind::Add) << QStringList{"f32[2,3]", "f32[3,2]"} << 0 << "shape.type_mismatch";
        QTest::newRow("add one operand") << int(OpKind::Add) << QStringList{"f32[2]"} << 0 << "shape.operand_count";
        QTest::newRow("exp on ints") << int(OpKind::Exponential) << QStringList{"s32[2]"} << 0 << "shape.dtype_mismatch";
        QTest::newRow("dot contracting size") << int(OpKind::Dot) << QStringList{"f32[8,32]", "f32[16,64]"} << 1 << "shape.dim_mismatch";
        QTest::newRow("dot dtype") << int(OpKind::Dot) << QStringList{"f32[8,32]", "bf16[32,64]"} << 1 << "shape.dtype_mismatch";
        QTest::newRow("dot axis out of range") << int(OpKind::Dot) << QStringList{"f32[8]", "f32[8]"} << 2 << "shape.bad_attribute";
        QTest::newRow("reduce repeated dim") << int(OpKind::Reduce) << QStringList{"f32[2,3]"} << 3 << "shape.bad_attribute";
        QTest::newRow("transpose not a permutation") << int(OpKind::Transpose) << QStringList{"f32[2,3]"} << 4 << "shape.bad_attribute";
        QTest::newRow("slice past end") << int(OpKind::Slice) << QStringList{"f32[4]"} << 5 << "shape.bad_attribute";
        QTest::newRow("select predicate type") << int(OpKind::Select) << QStringList{"f32[2]", "f32[2]", "f32[2]"} << 0 << "shape.type_mismatch";
        QTest::newRow("gather float indices") << int(OpKind::Gather) << QStringList{"f32[10,4]", "f32[3]"} << 6 << "shape.dtype_mismatch";
        QTest::newRow("concatenate mismatch") << int(OpKind::Concatenate) << QStringList{"f32[2,3]", "f32[3,3]"} << 7 << "shape.type_mismatch";
    }
    void rejectsInvalidOps() {
        QFETCH(int, kind);
        QFETCH(QStringList, operands);
        QFETCH(int, attrCase);
        QFETCH(QString, code);
        OpAttrs a;
        switch (attrCase) {
            case 1: a = dotDims({}, {}, {1}, {0}); break;
            case 2: a = dotDims({}, {}, {1}, {0}); break;
            case 3: a = dims({1, 1}); break;
            case 4: a = dims({0, 0}); break;
            case 5: a.slice = {{2}, {5}, {1}}; break;
            case 6: a.gather = {{1}, {0}, {0}, 1, {1, 4}}; break;
            case 7: a = dims({1}); break;
            default: break;
        }
        std::vector<TensorType> ops;
        for (const auto& o : operands) ops.push_back(t(o.toStdString().c_str()));
        auto r = infer(static_cast<OpKind>(kind), ops, a);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QVERIFY(!r.error().message.empty());
    }

    void declaredTypesAreChecked() {
        const TensorType x = t("f32[4,6]");
        TensorType badReshape = t("f32[5,5]");
        QCOMPARE(QString::fromStdString(infer(OpKind::Reshape, {x}, {}, &badReshape).error().code),
                 QString("shape.dim_mismatch"));
        TensorType goodReshape = t("f32[24]");
        QVERIFY(infer(OpKind::Reshape, {x}, {}, &goodReshape).ok());
        TensorType bcast = t("f32[3,4,6]");
        QVERIFY(infer(OpKind::Broadcast, {x}, dims({1, 2}), &bcast).ok());
        QVERIFY(!infer(OpKind::Broadcast, {x}, dims({0, 1}), &bcast).ok());
        QVERIFY(!infer(OpKind::Reshape, {x}, {}, nullptr).ok());  // missing declared type
    }

    void graphRejectsBadOpsWithName() {
        Graph g("g");
        GraphBuilder b(g);
        OpId x = b.parameter("x", t("f32[4,8]"), ParamRole::Input);
        OpId w = b.parameter("w", t("f32[16,2]"), ParamRole::Trainable);
        try {
            b.matmul(x, w);
            QFAIL("expected a BuildError");
        } catch (const BuildError& e) {
            QCOMPARE(QString::fromStdString(e.error().code), QString("shape.dim_mismatch"));
        }
        // Duplicate names and forward references are rejected by Graph::add.
        Op dup;
        dup.kind = OpKind::Parameter;
        dup.name = "x";
        dup.type = t("f32[1]");
        dup.role = ParamRole::Input;
        QCOMPARE(QString::fromStdString(g.add(dup).error().code), QString("graph.duplicate_name"));
        Op fwd;
        fwd.kind = OpKind::Negate;
        fwd.name = "neg";
        fwd.type = t("f32[4,8]");
        fwd.operands = {5};
        auto r = g.add(fwd);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("graph.bad_operand"));
        QCOMPARE(QString::fromStdString(r.error().where), QString("neg"));
        QCOMPARE(g.size(), int64_t{2});
        QVERIFY(g.validate().ok());
        QVERIFY(x != w);
    }

    void builderStampsContext() {
        Graph g("g");
        GraphBuilder b(g);
        OpId x = b.parameter("x", t("f32[2,3]"), ParamRole::Input);
        OpId y;
        {
            auto s1 = b.scope("layers.0");
            auto s2 = b.scope("mlp");
            b.setPhase(Phase::Backward);
            b.setDerived(x, 0);
            y = b.exp(x);
        }
        QCOMPARE(QString::fromStdString(g.op(y).scope), QString("layers.0.mlp"));
        QCOMPARE(QString::fromStdString(g.op(y).name), QString("exponential.1"));
        QCOMPARE(g.op(y).phase, Phase::Backward);
        QCOMPARE(g.op(y).derivedFrom, x);
        QCOMPARE(b.currentScope(), std::string());
    }
};

QTEST_GUILESS_MAIN(TestShapeInference)
#include "tst_shape_inference.moc"
