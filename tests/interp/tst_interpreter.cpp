// Reference interpreter: hand-computed values for every op kind and clear errors.
#include <QtTest>

#include <cmath>

#include "interp/interpreter.h"
#include "ir/graph_builder.h"

using namespace cfp;

Q_DECLARE_METATYPE(OpKind)
Q_DECLARE_METATYPE(std::vector<double>)

namespace {

Tensor tensor(DType dtype, std::vector<int64_t> dims, std::vector<double> values) {
    return Tensor{TensorType{dtype, std::move(dims)}, std::move(values)};
}

// Evaluates and returns the value of `id`; fails the test on an evaluation error.
std::vector<double> valueOf(const Graph& g, OpId id, const std::map<std::string, Tensor>& params = {}) {
    auto r = evaluate(g, params);
    if (!r) {
        QTest::qFail(r.error().toString().c_str(), __FILE__, __LINE__);
        return {};
    }
    return (*r)[static_cast<size_t>(id)].values;
}

bool near(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!(std::fabs(a[i] - b[i]) <= tol * (1.0 + std::fabs(b[i])))) return false;
    return true;
}

QByteArray show(const std::vector<double>& v) {
    QByteArray out = "{";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + QByteArray::number(v[i], 'g', 10);
    return out + "}";
}

#define COMPARE_VALUES(actual, expected)                                                            \
    do {                                                                                            \
        const auto a_ = (actual);                                                                   \
        const auto e_ = (expected);                                                                 \
        QVERIFY2(near(a_, e_), ("got " + show(a_) + ", expected " + show(e_)).constData());         \
    } while (0)

}  // namespace

class TestInterpreter : public QObject {
    Q_OBJECT

private slots:
    void unaryOps_data() {
        QTest::addColumn<OpKind>("kind");
        QTest::addColumn<std::vector<double>>("expected");
        // input is always {0.25, 1, 4}
        QTest::newRow("negate") << OpKind::Negate << std::vector<double>{-0.25, -1, -4};
        QTest::newRow("exponential") << OpKind::Exponential
                                     << std::vector<double>{std::exp(0.25), std::exp(1.0), std::exp(4.0)};
        QTest::newRow("log") << OpKind::Log << std::vector<double>{std::log(0.25), 0, std::log(4.0)};
        QTest::newRow("sqrt") << OpKind::Sqrt << std::vector<double>{0.5, 1, 2};
        QTest::newRow("rsqrt") << OpKind::Rsqrt << std::vector<double>{2, 1, 0.5};
        QTest::newRow("tanh") << OpKind::Tanh << std::vector<double>{std::tanh(0.25), std::tanh(1.0), std::tanh(4.0)};
        QTest::newRow("logistic") << OpKind::Logistic
                                  << std::vector<double>{1 / (1 + std::exp(-0.25)), 1 / (1 + std::exp(-1.0)),
                                                         1 / (1 + std::exp(-4.0))};
        QTest::newRow("abs") << OpKind::Abs << std::vector<double>{0.25, 1, 4};
        QTest::newRow("sign") << OpKind::Sign << std::vector<double>{1, 1, 1};
        QTest::newRow("sine") << OpKind::Sine << std::vector<double>{std::sin(0.25), std::sin(1.0), std::sin(4.0)};
        QTest::newRow("cosine") << OpKind::Cosine << std::vector<double>{std::cos(0.25), std::cos(1.0), std::cos(4.0)};
    }
    void unaryOps() {
        QFETCH(OpKind, kind);
        QFETCH(std::vector<double>, expected);
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F64, {3}}, ParamRole::Input);
        OpId y = b.unary(kind, x);
        COMPARE_VALUES(valueOf(g, y, {{"x", tensor(DType::F64, {3}, {0.25, 1, 4})}}), expected);
    }

    void signAndAbsOfNegativesAndIntegers() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {-2.5, 0, 3};
        OpId x = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {3}});
        OpId s = b.unary(OpKind::Sign, x);
        OpId a = b.unary(OpKind::Abs, x);
        lit.literal = {-7, 0, 5};
        OpId i = b.addOp(OpKind::Constant, {}, lit, {DType::S32, {3}});
        OpId ineg = b.neg(i);
        COMPARE_VALUES(valueOf(g, s), (std::vector<double>{-1, 0, 1}));
        COMPARE_VALUES(valueOf(g, a), (std::vector<double>{2.5, 0, 3}));
        COMPARE_VALUES(valueOf(g, ineg), (std::vector<double>{7, 0, -5}));
    }

    void convertTruncatesAndMakesPred() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {4}}, ParamRole::Input);
        OpId toInt = b.convert(x, DType::S32);
        OpId toPred = b.convert(x, DType::Pred);
        OpId back = b.convert(toInt, DType::F64);
        OpId predToF = b.convert(toPred, DType::BF16);
        auto params = std::map<std::string, Tensor>{{"x", tensor(DType::F32, {4}, {-2.7, 2.7, 0.0, 0.5})}};
        COMPARE_VALUES(valueOf(g, toInt, params), (std::vector<double>{-2, 2, 0, 0}));
        COMPARE_VALUES(valueOf(g, toPred, params), (std::vector<double>{1, 1, 0, 1}));
        COMPARE_VALUES(valueOf(g, back, params), (std::vector<double>{-2, 2, 0, 0}));
        COMPARE_VALUES(valueOf(g, predToF, params), (std::vector<double>{1, 1, 0, 1}));
        // Values are not rounded to the declared type: f32 keeps double precision here.
        OpId third = b.div(b.constant(1, {DType::F32, {}}), b.constant(3, {DType::F32, {}}));
        QCOMPARE(valueOf(g, third, params).at(0), 1.0 / 3.0);
    }

    void binaryOps_data() {
        QTest::addColumn<OpKind>("kind");
        QTest::addColumn<std::vector<double>>("expected");
        // a = {6, -2, 0.5}, b = {4, 3, 2}
        QTest::newRow("add") << OpKind::Add << std::vector<double>{10, 1, 2.5};
        QTest::newRow("subtract") << OpKind::Subtract << std::vector<double>{2, -5, -1.5};
        QTest::newRow("multiply") << OpKind::Multiply << std::vector<double>{24, -6, 1};
        QTest::newRow("divide") << OpKind::Divide << std::vector<double>{1.5, -2.0 / 3.0, 0.25};
        QTest::newRow("maximum") << OpKind::Maximum << std::vector<double>{6, 3, 2};
        QTest::newRow("minimum") << OpKind::Minimum << std::vector<double>{4, -2, 0.5};
        QTest::newRow("power") << OpKind::Power << std::vector<double>{1296, -8, 0.25};
    }
    void binaryOps() {
        QFETCH(OpKind, kind);
        QFETCH(std::vector<double>, expected);
        Graph g;
        GraphBuilder b(g);
        OpId a = b.parameter("a", {DType::F64, {3}}, ParamRole::Input);
        OpId c = b.parameter("b", {DType::F64, {3}}, ParamRole::Input);
        OpId y = b.binary(kind, a, c);
        COMPARE_VALUES(valueOf(g, y, {{"a", tensor(DType::F64, {3}, {6, -2, 0.5})},
                                      {"b", tensor(DType::F64, {3}, {4, 3, 2})}}),
                       expected);
    }

    void integerDivideTruncatesTowardZero() {
        Graph g;
        GraphBuilder b(g);
        OpId a = b.parameter("a", {DType::S32, {4}}, ParamRole::Input);
        OpId c = b.parameter("b", {DType::S32, {4}}, ParamRole::Input);
        OpId y = b.div(a, c);
        COMPARE_VALUES(valueOf(g, y, {{"a", tensor(DType::S32, {4}, {-7, 7, 9, 5})},
                                      {"b", tensor(DType::S32, {4}, {2, 2, -4, 0})}}),
                       (std::vector<double>{-3, 3, -2, -1}));
    }

    void compareSelectAndLogic_data() {
        QTest::addColumn<int>("direction");
        QTest::addColumn<std::vector<double>>("expected");
        // a = {1, 2, 3}, b = {2, 2, 2}
        QTest::newRow("EQ") << int(ComparisonDirection::EQ) << std::vector<double>{0, 1, 0};
        QTest::newRow("NE") << int(ComparisonDirection::NE) << std::vector<double>{1, 0, 1};
        QTest::newRow("LT") << int(ComparisonDirection::LT) << std::vector<double>{1, 0, 0};
        QTest::newRow("LE") << int(ComparisonDirection::LE) << std::vector<double>{1, 1, 0};
        QTest::newRow("GT") << int(ComparisonDirection::GT) << std::vector<double>{0, 0, 1};
        QTest::newRow("GE") << int(ComparisonDirection::GE) << std::vector<double>{0, 1, 1};
    }
    void compareSelectAndLogic() {
        QFETCH(int, direction);
        QFETCH(std::vector<double>, expected);
        Graph g;
        GraphBuilder b(g);
        OpId a = b.parameter("a", {DType::F32, {3}}, ParamRole::Input);
        OpId c = b.constant(2, {DType::F32, {3}});
        OpId p = b.compare(a, c, static_cast<ComparisonDirection>(direction));
        OpId sel = b.select(p, a, b.neg(a));
        auto params = std::map<std::string, Tensor>{{"a", tensor(DType::F32, {3}, {1, 2, 3})}};
        COMPARE_VALUES(valueOf(g, p, params), expected);
        std::vector<double> selected;
        for (size_t i = 0; i < 3; ++i) selected.push_back(expected[i] != 0 ? double(i + 1) : -double(i + 1));
        COMPARE_VALUES(valueOf(g, sel, params), selected);
    }

    void andOrOnPredAndIntegers() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {0, 1, 0, 1};
        OpId p = b.addOp(OpKind::Constant, {}, lit, {DType::Pred, {4}});
        lit.literal = {0, 0, 1, 1};
        OpId q = b.addOp(OpKind::Constant, {}, lit, {DType::Pred, {4}});
        OpId pAndQ = b.binary(OpKind::And, p, q);
        OpId pOrQ = b.binary(OpKind::Or, p, q);
        lit.literal = {6, 12};
        OpId i = b.addOp(OpKind::Constant, {}, lit, {DType::S64, {2}});
        lit.literal = {3, 10};
        OpId j = b.addOp(OpKind::Constant, {}, lit, {DType::S64, {2}});
        OpId iAndJ = b.binary(OpKind::And, i, j);
        OpId iOrJ = b.binary(OpKind::Or, i, j);
        COMPARE_VALUES(valueOf(g, pAndQ), (std::vector<double>{0, 0, 0, 1}));
        COMPARE_VALUES(valueOf(g, pOrQ), (std::vector<double>{0, 1, 1, 1}));
        COMPARE_VALUES(valueOf(g, iAndJ), (std::vector<double>{2, 8}));
        COMPARE_VALUES(valueOf(g, iOrJ), (std::vector<double>{7, 14}));
    }

    void constantsAndIota() {
        Graph g;
        GraphBuilder b(g);
        OpId splat = b.constant(2.5, {DType::BF16, {2, 2}});
        OpAttrs lit;
        lit.literal = {1, 2, 3, 4, 5, 6};
        OpId full = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3}});
        OpId iota0 = b.iota({DType::S32, {2, 3}}, 0);
        OpId iota1 = b.iota({DType::F32, {2, 3}}, 1);
        COMPARE_VALUES(valueOf(g, splat), (std::vector<double>{2.5, 2.5, 2.5, 2.5}));
        COMPARE_VALUES(valueOf(g, full), (std::vector<double>{1, 2, 3, 4, 5, 6}));
        COMPARE_VALUES(valueOf(g, iota0), (std::vector<double>{0, 0, 0, 1, 1, 1}));
        COMPARE_VALUES(valueOf(g, iota1), (std::vector<double>{0, 1, 2, 0, 1, 2}));
    }

    void broadcastMapsOperandDims() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {1, 2, 3};
        OpId v = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {3}});
        lit.literal = {1, 2, 3, 4, 5, 6};
        OpId m = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3}});
        OpId rows = b.broadcast(v, {2, 3}, {1});  // each row is v
        OpId cols = b.broadcast(v, {3, 2}, {0});  // each column is v
        OpId swapped = b.broadcast(m, {3, 2}, {1, 0});  // a transposing broadcast
        OpId widened = b.broadcast(m, {3, 2, 2}, {2, 0});  // out[i][k][j] = m[j][i]
        OpId scalar = b.broadcast(b.scalar(7, DType::F32), {2}, {});
        COMPARE_VALUES(valueOf(g, rows), (std::vector<double>{1, 2, 3, 1, 2, 3}));
        COMPARE_VALUES(valueOf(g, cols), (std::vector<double>{1, 1, 2, 2, 3, 3}));
        COMPARE_VALUES(valueOf(g, swapped), (std::vector<double>{1, 4, 2, 5, 3, 6}));
        COMPARE_VALUES(valueOf(g, widened), (std::vector<double>{1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6}));
        COMPARE_VALUES(valueOf(g, scalar), (std::vector<double>{7, 7}));
    }

    void layoutOps() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        OpId x = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 2, 3}});
        OpId r = b.reshape(x, {4, 3});
        OpId t = b.transpose(x, {2, 0, 1});  // result [3,2,2], t[k][i][j] = x[i][j][k]
        OpId s = b.slice(x, {0, 1, 0}, {2, 2, 3}, {1, 1, 2});  // x[:, 1:2, 0:3:2] → [2,1,2]
        OpId c = b.concatenate({r, b.constant(-1, {DType::F32, {4, 1}})}, 1);  // [4,4]
        COMPARE_VALUES(valueOf(g, r), lit.literal);
        COMPARE_VALUES(valueOf(g, t), (std::vector<double>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
        COMPARE_VALUES(valueOf(g, s), (std::vector<double>{3, 5, 9, 11}));
        COMPARE_VALUES(valueOf(g, c), (std::vector<double>{0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1}));
        QCOMPARE(g.op(s).type.toString(), std::string("f32[2,1,2]"));
    }

    void reductions_data() {
        QTest::addColumn<int>("reduceKind");
        QTest::addColumn<std::vector<double>>("overColumns");
        QTest::addColumn<std::vector<double>>("overAll");
        // x = [[1, -2, 3], [4, 5, -6]]
        QTest::newRow("add") << int(ReduceKind::Add) << std::vector<double>{2, 3} << std::vector<double>{5};
        QTest::newRow("max") << int(ReduceKind::Max) << std::vector<double>{3, 5} << std::vector<double>{5};
        QTest::newRow("min") << int(ReduceKind::Min) << std::vector<double>{-2, -6} << std::vector<double>{-6};
        QTest::newRow("multiply") << int(ReduceKind::Multiply) << std::vector<double>{-6, -120}
                                  << std::vector<double>{720};
    }
    void reductions() {
        QFETCH(int, reduceKind);
        QFETCH(std::vector<double>, overColumns);
        QFETCH(std::vector<double>, overAll);
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {1, -2, 3, 4, 5, -6};
        OpId x = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3}});
        const auto kind = static_cast<ReduceKind>(reduceKind);
        OpId cols = b.reduce(x, {1}, kind);
        OpId all = b.reduce(x, {0, 1}, kind);
        OpId none = b.reduce(x, {}, kind);
        COMPARE_VALUES(valueOf(g, cols), overColumns);
        COMPARE_VALUES(valueOf(g, all), overAll);
        COMPARE_VALUES(valueOf(g, none), lit.literal);
    }

    void reduceOverRows() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {1, -2, 3, 4, 5, -6};
        OpId x = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3}});
        COMPARE_VALUES(valueOf(g, b.reduce(x, {0})), (std::vector<double>{5, 3, -3}));
    }

    void matmul() {
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {1, 2, 3, 4, 5, 6};
        OpId a = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3}});
        lit.literal = {7, 8, 9, 10, 11, 12};
        OpId w = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {3, 2}});
        OpId y = b.matmul(a, w);
        COMPARE_VALUES(valueOf(g, y), (std::vector<double>{58, 64, 139, 154}));
    }

    void dotWithBatchDims() {
        // lhs [3(k), 2(b)] and rhs [2(b), 2(n), 3(k)]: batch lhs {1} rhs {0}, contract lhs {0} rhs {2}.
        // Result is [b, n] (batch, then lhs free (none), then rhs free).
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {1, 2, 3, 4, 5, 6};  // lhs[k][b]: b=0 → {1,3,5}, b=1 → {2,4,6}
        OpId lhs = b.addOp(OpKind::Constant, {}, lit, {DType::F64, {3, 2}});
        lit.literal = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1};  // rhs[0] = {e0, e1}, rhs[1] = {e2, 1s}
        OpId rhs = b.addOp(OpKind::Constant, {}, lit, {DType::F64, {2, 2, 3}});
        DotDimensionNumbers d;
        d.lhsBatch = {1};
        d.rhsBatch = {0};
        d.lhsContracting = {0};
        d.rhsContracting = {2};
        OpId y = b.dot(lhs, rhs, d);
        QCOMPARE(g.op(y).type.toString(), std::string("f64[2,2]"));
        // b=0: {1,3,5}·e0 = 1, ·e1 = 3; b=1: {2,4,6}·e2 = 6, ·1s = 12
        COMPARE_VALUES(valueOf(g, y), (std::vector<double>{1, 3, 6, 12}));

        // Batched matmul [2,2,3]·[2,3,1] → [2,2,1] and free dims from both sides in HLO order.
        Graph g2;
        GraphBuilder b2(g2);
        lit.literal = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        OpId p = b2.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 2, 3}});
        lit.literal = {1, 1, 1, 1, 0, -1};
        OpId q = b2.addOp(OpKind::Constant, {}, lit, {DType::F32, {2, 3, 1}});
        DotDimensionNumbers bd;
        bd.lhsBatch = {0};
        bd.rhsBatch = {0};
        bd.lhsContracting = {2};
        bd.rhsContracting = {1};
        OpId z = b2.dot(p, q, bd);
        COMPARE_VALUES(valueOf(g2, z), (std::vector<double>{6, 15, -2, -2}));
    }

    void embeddingLookupWithGather() {
        Graph g;
        GraphBuilder b(g);
        OpId table = b.parameter("table", {DType::F32, {4, 2}}, ParamRole::Trainable);
        OpId ids = b.parameter("ids", {DType::S32, {3}}, ParamRole::Input);
        GatherDimensionNumbers d;
        d.offsetDims = {1};
        d.collapsedSliceDims = {0};
        d.startIndexMap = {0};
        d.indexVectorDim = 1;
        d.sliceSizes = {1, 2};
        OpId rows = b.gather(table, ids, d);
        auto params = std::map<std::string, Tensor>{{"table", tensor(DType::F32, {4, 2}, {0, 1, 10, 11, 20, 21, 30, 31})},
                                                    {"ids", tensor(DType::S32, {3}, {2, 0, 7})}};
        // index 7 is clamped to the last row, 3, as HLO gather does.
        COMPARE_VALUES(valueOf(g, rows, params), (std::vector<double>{20, 21, 0, 1, 30, 31}));
    }

    void gatherWithIndexVectorDimZero() {
        // operand [3,3], indices [2(vector),2(batch)]: index vectors are columns {2,0} and {1,2}.
        Graph g;
        GraphBuilder b(g);
        OpAttrs lit;
        lit.literal = {0, 1, 2, 10, 11, 12, 20, 21, 22};
        OpId x = b.addOp(OpKind::Constant, {}, lit, {DType::F32, {3, 3}});
        lit.literal = {2, 1, 0, 2};
        OpId idx = b.addOp(OpKind::Constant, {}, lit, {DType::S64, {2, 2}});
        GatherDimensionNumbers d;
        d.offsetDims = {};
        d.collapsedSliceDims = {0, 1};
        d.startIndexMap = {0, 1};
        d.indexVectorDim = 0;
        d.sliceSizes = {1, 1};
        OpId y = b.gather(x, idx, d);
        COMPARE_VALUES(valueOf(g, y), (std::vector<double>{20, 12}));
        // Window gather: slices of 2 columns starting at column idx of each row (offset dim first).
        lit.literal = {1, 0};
        OpId starts = b.addOp(OpKind::Constant, {}, lit, {DType::S32, {2}});
        GatherDimensionNumbers w;
        w.offsetDims = {0};  // result [2(window), 2(batch)]
        w.collapsedSliceDims = {0};
        w.startIndexMap = {1};
        w.indexVectorDim = 1;
        w.sliceSizes = {1, 2};
        OpId win = b.gather(x, starts, w);
        // batch 0: row? start_index_map maps only to dim 1, so row start is 0: x[0][1..2] = {1,2};
        // batch 1: x[0][0..1] = {0,1}. Result[w][b].
        COMPARE_VALUES(valueOf(g, win), (std::vector<double>{1, 0, 2, 1}));
    }

    void embeddingGradientWithScatter() {
        Graph g;
        GraphBuilder b(g);
        OpId zeros = b.constant(0, {DType::F32, {4, 2}});
        OpId ids = b.parameter("ids", {DType::S32, {3}}, ParamRole::Input);
        OpId upd = b.parameter("upd", {DType::F32, {3, 2}}, ParamRole::Input);
        ScatterDimensionNumbers d;
        d.updateWindowDims = {1};
        d.insertedWindowDims = {0};
        d.scatterDimsToOperandDims = {0};
        d.indexVectorDim = 1;
        OpId sum = b.scatter(zeros, ids, upd, d, ReduceKind::Add);
        OpId mx = b.scatter(b.constant(2, {DType::F32, {4, 2}}), ids, upd, d, ReduceKind::Max);
        auto params = std::map<std::string, Tensor>{{"ids", tensor(DType::S32, {3}, {2, 0, 2})},
                                                    {"upd", tensor(DType::F32, {3, 2}, {1, 2, 3, 4, 5, -6})}};
        COMPARE_VALUES(valueOf(g, sum, params), (std::vector<double>{3, 4, 0, 0, 6, -4, 0, 0}));
        COMPARE_VALUES(valueOf(g, mx, params), (std::vector<double>{3, 4, 2, 2, 5, 2, 2, 2}));
        // An out-of-bounds index skips its update.
        params["ids"] = tensor(DType::S32, {3}, {2, 4, -1});
        COMPARE_VALUES(valueOf(g, sum, params), (std::vector<double>{0, 0, 0, 0, 1, 2, 0, 0}));
    }

    void missingParameterIsAnError() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {2}}, ParamRole::Input);
        b.exp(x);
        auto r = evaluate(g, {});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("interp.missing_parameter"));
        QCOMPARE(r.error().where, std::string("x"));
    }

    void misshapedParameterIsAnError_data() {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<std::vector<double>>("dims");
        QTest::addColumn<int>("count");
        QTest::newRow("wrong dims") << int(DType::F32) << std::vector<double>{3} << 3;
        QTest::newRow("wrong dtype") << int(DType::F64) << std::vector<double>{2} << 2;
        QTest::newRow("wrong value count") << int(DType::F32) << std::vector<double>{2} << 5;
    }
    void misshapedParameterIsAnError() {
        QFETCH(int, dtype);
        QFETCH(std::vector<double>, dims);
        QFETCH(int, count);
        Graph g;
        GraphBuilder b(g);
        b.parameter("x", {DType::F32, {2}}, ParamRole::Input);
        std::vector<int64_t> d(dims.begin(), dims.end());
        auto r = evaluate(g, {{"x", tensor(static_cast<DType>(dtype), d, std::vector<double>(size_t(count), 1.0))}});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("interp.bad_parameter"));
        QCOMPARE(r.error().where, std::string("x"));
    }

    void tooLargeIsAnError() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.constant(1, {DType::F32, {64, 64}});
        OpId y = b.exp(x);
        b.neg(y);
        EvalOptions small;
        small.maxTotalElements = 2 * 64 * 64;  // room for two ops, not three
        auto r = evaluate(g, {}, small);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("interp.too_large"));
        QCOMPARE(r.error().where, g.op(2).name);
        small.maxTotalElements = 3 * 64 * 64;
        QVERIFY(evaluate(g, {}, small).ok());
        // The default budget rejects a huge graph before computing anything.
        Graph huge;
        GraphBuilder hb(huge);
        hb.constant(0, {DType::F32, {1 << 20, 1 << 10}});
        auto h = evaluate(huge, {});
        QVERIFY(!h.ok());
        QCOMPARE(h.error().code, std::string("interp.too_large"));
    }

    void customCallIsUnsupported() {
        Graph g;
        GraphBuilder b(g);
        OpId x = b.constant(1, {DType::F32, {2}});
        OpAttrs a;
        a.target = "flash_attention";
        b.addOp(OpKind::CustomCall, {x}, a, {DType::F32, {2}});
        auto r = evaluate(g, {});
        QVERIFY(!r.ok());
        QCOMPARE(r.error().code, std::string("interp.unsupported"));
        QVERIFY(r.error().message.find("flash_attention") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestInterpreter)
#include "tst_interpreter.moc"
