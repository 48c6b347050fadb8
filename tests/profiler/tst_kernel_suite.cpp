// Kernel comparison (profiler/kernel_suite.h, `cfp profile --kernels`): the cases of a model's
// step on one device — GEMM shapes as the graph's dots have them, each priced as a GEMM probe; the
// attention core found with its shape and mask, priced as the evaluator prices it under flash
// attention with the forward's recomputation counted in the backward; measured one by one by a
// session (here the simulated backend, whose times are the model's), nothing stored.

#include <QtTest>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "profiler/calibration.h"
#include "profiler/kernel_suite.h"
#include "profiler/session.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;

namespace {

constexpr int64_t kBatch = 2, kSeq = 256;

Graph gpt(int64_t seq = kSeq) {
    ModelConfig c = must(presetConfig("gpt3-125m"), "preset");
    c.numLayers = 2;
    BuildOptions b;
    b.batch = kBatch;
    b.seq = seq;
    return must(buildTrainingStep(c, b), "build").graph;
}

HardwareSpec h200() { return must(loadHardware("h200"), "h200"); }

}  // namespace

class TestKernelSuite : public QObject {
    Q_OBJECT

private slots:
    void gemmsAreTheGraphsDotsPricedAsProbes() {
        const Graph g = gpt();
        const auto suite = must(kernelSuite(g, h200()), "suite");
        HardwareSpec one = h200();
        one.gpusPerNode = 1;
        const CostModel model = must(CostModel::create(one, must(assignLinkClasses(must(parseMesh("dp=1", 1), "mesh"), 1), "links")), "model");
        std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> shapes;
        int gemms = 0;
        for (const KernelCase& c : suite) {
            if (c.group != KernelGroup::Gemm) continue;
            ++gemms;
            QVERIFY2(shapes.insert({c.gemm.batch, c.gemm.m, c.gemm.n, c.gemm.k}).second, c.shape.c_str());  // each shape once
            QVERIFY(c.measurable());
            QCOMPARE(c.reference, std::string("matmul"));
            QCOMPARE(c.predictedSeconds, gemmProbe(c.gemm, model).predictedSeconds);
            QCOMPARE(c.flops, 2.0 * c.gemm.batch * c.gemm.m * c.gemm.n * c.gemm.k);
        }
        const int64_t t = kBatch * kSeq, h = 768;
        // The fused QKV projection forward, the MLP's, the head's, and Q·Kᵀ per head (12 heads of 64).
        QVERIFY(shapes.count({1, t, 3 * h, h}));
        QVERIFY(shapes.count({1, t, 4 * h, h}));
        QVERIFY(shapes.count({1, t, 50257, h}));
        QVERIFY(shapes.count({kBatch * 12, kSeq, kSeq, 64}));
        // Its weight gradient: hᵀ · dY over the tokens.
        QVERIFY(shapes.count({1, h, 3 * h, t}));
        QVERIFY(gemms >= 10);
    }

    void attentionCoreAsOneFlashKernel() {
        // A sequence of 2048: the matmuls, not the HBM, bound every attention kernel.
        constexpr int64_t kLong = 2048;
        const Graph g = gpt(kLong);
        const auto suite = must(kernelSuite(g, h200()), "suite");
        std::map<std::string, KernelCase> att;
        for (const KernelCase& c : suite)
            if (c.group == KernelGroup::Attention) att[c.backend + " " + c.reference] = c;
        QCOMPARE(att.size(), size_t{4});  // the default fused kernel (cuDNN's on Hopper) and FlashAttention-2
        const KernelCase& f = att.at("cudnn sdpa_forward");
        const KernelCase& b = att.at("cudnn sdpa_backward");
        QVERIFY(!f.measurable() && !b.measurable());  // the profiler has no fused attention kernel
        QCOMPARE(f.attention.batch, kBatch);
        QCOMPARE(f.attention.heads, int64_t{12});
        QCOMPARE(f.attention.seq, kLong);
        QCOMPARE(f.attention.keySeq, kLong);
        QCOMPARE(f.attention.headDim, int64_t{64});
        QVERIFY(f.attention.causal);
        // Matmuls of s×s×d per head: Q·Kᵀ and P·V forward; the scores again, dP, dV, dQ and dK
        // backward (the recomputation is the backward's, not the forward's).
        const double one = 2.0 * kBatch * 12 * kLong * kLong * 64;
        QCOMPARE(f.flops, 2 * one);
        QCOMPARE(b.flops, 5 * one);
        QVERIFY(f.predictedSeconds > 0 && b.predictedSeconds > f.predictedSeconds);
        // At the hardware's fused-attention curves (cost_model.h): causal, half the work; s = 2048
        // is the curves' second point; head dim 64. The
        // matmuls' part, found as the difference against a machine whose curves are half as
        // efficient (which doubles it and nothing else): the forward's two matmuls, the
        // backward's five (the scores again, dP, dV, dQ, dK).
        HardwareSpec slow = h200();
        for (auto* curve : {&slow.flashAttention.causalForward, &slow.flashAttention.causalBackward})
            for (auto& p : *curve) p.second /= 2;
        std::map<std::string, KernelCase> halved;
        for (const KernelCase& c : must(kernelSuite(g, slow), "slow suite"))
            if (c.group == KernelGroup::Attention) halved[c.backend + " " + c.reference] = c;
        const HardwareSpec h = h200();
        const double d64 = std::pow(64.0 / 128.0, 0.3);
        const double fwd = 2 * one * 0.5 / (989e12 * h.flashAttention.causalForward[1].second * d64);
        const double bwd = 5 * one * 0.5 / (989e12 * h.flashAttention.causalBackward[1].second * d64);
        const double fwdPart = halved.at("cudnn sdpa_forward").predictedSeconds - f.predictedSeconds;
        const double bwdPart = halved.at("cudnn sdpa_backward").predictedSeconds - b.predictedSeconds;
        QVERIFY2(std::abs(fwdPart - fwd) < 1e-9 * fwd, qPrintable(QString("%1 vs %2").arg(fwdPart).arg(fwd)));
        QVERIFY2(std::abs(bwdPart - bwd) < 1e-9 * bwd, qPrintable(QString("%1 vs %2").arg(bwdPart).arg(bwd)));
        QCOMPARE(halved.at("flash sdpa_forward").predictedSeconds, att.at("flash sdpa_forward").predictedSeconds);  // its own curves
        // FlashAttention-2 is slower on this GPU.
        QVERIFY(att.at("flash sdpa_forward").predictedSeconds > 1.5 * f.predictedSeconds);
    }

    void sessionMeasuresEachKernelAndStoresNothing() {
        // A node of 8 and a mesh over it: the kernel mode runs on one device regardless, and
        // measures no calibration even where it would for segments.
        SessionConfig config;
        config.graph = std::make_shared<const Graph>(gpt());
        config.cluster = Cluster{h200(), 1};
        config.mesh = "2x4";
        config.kernels = true;
        config.calibration = CalibrationMode::Always;
        config.protocol.warmupRuns = 0;
        config.protocol.timedRounds = 1;
        config.protocol.runsPerRound = 1;
        int progress = 0;
        ProfilerSession::Callbacks cb;
        cb.progress = [&](const SessionProgress& p) { progress += p.stage == "kernels"; };
        ProfilerSession session(config, std::make_unique<SimulatedBackend>(), cb);
        const ProfileReport report = must(session.run(), "run");
        QCOMPARE(report.mesh, std::string("{dp=1 (intra)}"));
        const auto suite = must(kernelSuite(*config.graph, h200()), "suite");
        QCOMPARE(report.kernels.size(), suite.size());
        int measured = 0;
        for (size_t i = 0; i < suite.size(); ++i) {
            const KernelResult& r = report.kernels[i];
            QCOMPARE(r.kernel.name, suite[i].name);
            QCOMPARE(r.measured, suite[i].measurable());
            if (!r.measured) continue;
            ++measured;
            QCOMPARE(r.status, CombinationStatus::Measured);
            QVERIFY(std::abs(r.seconds - suite[i].predictedSeconds) <= 1e-12 * suite[i].predictedSeconds);  // the simulated backend
        }
        QCOMPARE(report.kernelAccuracy.segments, measured);
        QVERIFY(progress > 0);  // throttled: at least the stage's first
        QVERIFY(report.results.empty() && report.types.empty());
        QVERIFY(!report.calibrationMeasured);
    }
};

QTEST_GUILESS_MAIN(TestKernelSuite)
#include "tst_kernel_suite.moc"
