// Graph statistics against closed-form figures: FLOPs per step ≈ 6·params·tokens plus attention
// (Narayanan et al. 2021, eq. 3 without recomputation), parameter counts, op accounting.
#include <QtTest>

#include "ir/graph_builder.h"
#include "models/models.h"
#include "stats/graph_stats.h"

using namespace cfp;

namespace {

// Elements of trainable parameters that feed a forward dot (directly or through layout ops):
// the "N" of 6·N·T. Embedding tables read only by gather/slice do no matmul work.
int64_t matmulParameterElements(const Graph& g) {
    const auto users = g.users();
    int64_t total = 0;
    for (OpId p : g.parameters(ParamRole::Trainable)) {
        std::vector<OpId> frontier{p};
        bool feedsDot = false;
        while (!frontier.empty() && !feedsDot) {
            const OpId cur = frontier.back();
            frontier.pop_back();
            for (OpId u : users[static_cast<size_t>(cur)]) {
                const Op& op = g.op(u);
                if (op.phase != Phase::Forward) continue;
                if (op.kind == OpKind::Dot) feedsDot = true;
                else if (op.kind == OpKind::Reshape || op.kind == OpKind::Transpose || op.kind == OpKind::Convert)
                    frontier.push_back(u);
            }
        }
        if (feedsDot) total += g.op(p).type.elements();
    }
    return total;
}

}  // namespace

class TestGraphStats : public QObject {
    Q_OBJECT

private slots:
    void countsHandBuiltGraph() {
        Graph g("mlp");
        GraphBuilder b(g);
        OpId x = b.parameter("x", {DType::F32, {4, 8}}, ParamRole::Input);
        OpId w = b.parameter("w", {DType::F32, {8, 16}}, ParamRole::Trainable);
        OpId y = b.matmul(x, w);            // 2·4·16·8 = 1024 FLOPs
        OpId e = b.exp(y);                  // 64
        OpId r = b.reduce(e, {0, 1});       // 64
        b.output(r);
        const GraphStats s = computeStats(g);
        QCOMPARE(s.ops, int64_t{5});
        QCOMPARE(s.trainableParams, int64_t{128});
        QCOMPARE(s.trainableParamBytes, int64_t{512});
        QCOMPARE(s.inputBytes, int64_t{128});
        QCOMPARE(s.flops, 1024.0 + 64 + 64);
        QCOMPARE(s.opsByKind.at("dot"), int64_t{1});
        QCOMPARE(s.opsByPhase[0], int64_t{5});
        QCOMPARE(s.activationBytes, int64_t{0});  // no backward ops
    }

    void flopsMatchStandardFormula_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("seq");
        QTest::newRow("gpt3-125m") << "gpt3-125m" << 2 << 512;
        QTest::newRow("gpt3-1.3b") << "gpt3-1.3b" << 2 << 1024;
        QTest::newRow("gpt3-175b") << "gpt3-175b" << 1 << 2048;
        QTest::newRow("llama2-7b") << "llama2-7b" << 1 << 1024;
        QTest::newRow("llama3-8b") << "llama3-8b" << 1 << 1024;
    }
    // Dense decoders: 6·N·T (N: parameters that feed matmuls) for the weight matmuls (forward 2, backward 4) plus attention's
    // score and context matmuls, 12·L·s·d·T (no causal halving: the graph computes full scores).
    void flopsMatchStandardFormula() {
        QFETCH(QString, preset);
        QFETCH(int, batch);
        QFETCH(int, seq);
        auto cfg = presetConfig(preset.toStdString());
        QVERIFY(cfg.ok());
        BuildOptions opt;
        opt.batch = batch;
        opt.seq = seq;
        auto model = buildTrainingStep(*cfg, opt);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
        const GraphStats s = computeStats(model->graph);
        const double tokens = double(batch) * seq;
        const double n = double(matmulParameterElements(model->graph));
        QVERIFY(n > 0.9 * double(s.trainableParams));
        const double expected = 6.0 * n * tokens + 12.0 * double(cfg->numLayers) * seq * double(cfg->hiddenSize) * tokens;
        const double ratio = s.flops / expected;
        qInfo("%s: graph %.4g FLOPs, formula %.4g, ratio %.4f", qPrintable(preset), s.flops, expected, ratio);
        QVERIFY2(ratio > 0.95 && ratio < 1.05, qPrintable(QString("ratio %1").arg(ratio)));
        // The backward pass does twice the forward matmul work.
        QVERIFY(s.flopsByPhase[1] > 1.8 * s.flopsByPhase[0] && s.flopsByPhase[1] < 2.2 * s.flopsByPhase[0]);
        QVERIFY(s.activationBytes > 0);
    }
};

QTEST_GUILESS_MAIN(TestGraphStats)
#include "tst_graph_stats.moc"
