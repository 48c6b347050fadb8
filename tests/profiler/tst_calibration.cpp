// Calibration: the cost model takes measured constants (GEMM efficiency table, HBM bandwidth,
// launch time, α/β per axis and collective); fits recover known constants; a session against a
// simulated "true" machine that differs from the spec calibrates the model towards it.

#include <QtTest>

#include <cmath>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "plan_helpers.h"
#include "tiny_gpt.h"
#include "plan/planner.h"
#include "profiler/calibration.h"
#include "profiler/session.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;

namespace {

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max({1e-30, std::abs(a), std::abs(b)}); }

HardwareSpec h100() { return must(loadHardware("h100-sxm"), "h100"); }

Mesh linkedMesh(const std::string& text, int64_t gpusPerNode = 8) {
    return must(assignLinkClasses(must(parseMesh(text), "mesh"), gpusPerNode), "link classes");
}

// A machine unlike its spec: slower HBM, slower GEMMs, slower links, dearer launches.
HardwareSpec trueMachine() {
    HardwareSpec h = h100();
    h.hbmEfficiency = 0.55;
    h.gemmEfficiency = 0.45;
    h.kernelLaunchSeconds = 6e-6;
    h.intraNode.bytesPerSecond *= 0.6;
    h.intraNode.latencySeconds *= 3;
    h.intraNode.supportsTree = false;  // a pure ring, so the α-β line is exact
    h.intraNode.busCurve = {};         // (the spec's measured curve is not this machine's)
    h.smCount = 0;                     // one efficiency for every GEMM shape, which the fit recovers
    h.interNode.bytesPerSecond *= 0.5;
    h.interNode.latencySeconds *= 2;
    h.interNode.supportsTree = false;
    return h;
}

std::shared_ptr<const Graph> tinyGpt() { return std::make_shared<const Graph>(cfp::test::tinyGpt(2, 256, 16, 128)); }

}  // namespace

class TestCalibration : public QObject {
    Q_OBJECT

private slots:
    void costModelUsesTheCalibration() {
        const Mesh mesh = linkedMesh("dp=2,tp=4", 4);
        auto model = must(CostModel::create(h100(), mesh), "model");
        const double hbmBefore = model.hbmSeconds(1e9);
        const double arBefore = model.collectiveSeconds(CollectiveKind::AllReduce, 1, 1 << 20);
        const double dotBefore = model.kernelSeconds(OpKind::Dot, DType::BF16, 1e12, 1e8);
        QVERIFY(!model.isCalibrated());
        CostCalibration c;
        c.hbmBytesPerSecond = 1e12;
        c.launchSeconds = 1e-5;
        c.gemm = {{DType::BF16, 1e12, 1e8, 0.25}};
        c.collectives = {{LinkClass::IntraNode, 4, CollectiveKind::AllReduce, 2e-5, 1e-10}};
        model.setCalibration(c);
        QVERIFY(model.isCalibrated());
        QVERIFY(close(model.hbmSeconds(1e9), 1e-3, 1e-12));
        QCOMPARE(model.launchSeconds(), 1e-5);
        // A fusible kernel: bytes at the measured bandwidth plus the measured launch.
        QVERIFY(close(model.kernelSeconds(OpKind::Add, DType::BF16, 0, 1e9), 1e-3 + 1e-5, 1e-12));
        // The dot at the measured efficiency.
        QVERIFY(close(model.kernelSeconds(OpKind::Dot, DType::BF16, 1e12, 1e8), 1e12 / (h100().peakFlopsFor(DType::BF16) * 0.25) + 1e-5, 1e-12));
        QVERIFY(model.kernelSeconds(OpKind::Dot, DType::BF16, 1e12, 1e8) > dotBefore);
        // tp (axis 1, intra-node, 4 devices): the fit; ring formula with its α and β.
        QVERIFY(close(model.collectiveSeconds(CollectiveKind::AllReduce, 1, 1 << 20), 6 * 2e-5 + 1.5 * (1 << 20) * 1e-10, 1e-12));
        QVERIFY(model.collectiveSeconds(CollectiveKind::AllReduce, 1, 1 << 20) != arBefore);
        // No fit for all-gather, nor for the inter-node axis: the spec's link.
        auto plain = must(CostModel::create(h100(), mesh), "plain");
        QCOMPARE(model.collectiveSeconds(CollectiveKind::AllGather, 1, 1 << 20), plain.collectiveSeconds(CollectiveKind::AllGather, 1, 1 << 20));
        QCOMPARE(model.collectiveSeconds(CollectiveKind::AllReduce, 0, 1 << 20), plain.collectiveSeconds(CollectiveKind::AllReduce, 0, 1 << 20));
        model.setCalibration({});
        QCOMPARE(model.hbmSeconds(1e9), hbmBefore);
    }

    // Rails: an inter-node axis with m members per node moves data through m NICs per group, at
    // most at NVLink's rate; with one member per node, one NIC.
    void interNodeAxesUseOneRailPerMemberInANode() {
        const HardwareSpec h = h100();  // 8 GPUs per node, 50 GB/s per NIC, 450 GB/s NVLink
        const double nic = h.interNode.bytesPerSecond, nvlink = h.intraNode.bytesPerSecond;
        auto flat = must(CostModel::create(h, linkedMesh("48")), "flat");  // 6 nodes x 8 members
        QCOMPARE(flat.axisBytesPerSecond(0), std::min(8 * nic, nvlink));
        auto split = must(CostModel::create(h, linkedMesh("dp=12,tp=4")), "split");  // dp: 2 per node
        QCOMPARE(split.axisBytesPerSecond(0), 2 * nic);
        QCOMPARE(split.axisBytesPerSecond(1), nvlink);
        auto outer = must(CostModel::create(h, linkedMesh("6x8")), "outer");  // x: 1 per node
        QCOMPARE(outer.axisBytesPerSecond(0), nic);
        // The ring's byte term at that bandwidth (no tree: reduce-scatter), α per step on the NIC hop.
        const double b = 512.0 * (1 << 20);
        QVERIFY(close(flat.collectiveSeconds(CollectiveKind::ReduceScatter, 0, static_cast<int64_t>(b)),
                      47 * h.interNode.latencySeconds + 47.0 / 48.0 * b / std::min(8 * nic, nvlink), 1e-12));
    }

    void gemmEfficiencyInterpolation() {
        const std::vector<GemmEfficiencyPoint> table{{DType::BF16, 1e9, 1e7, 0.2},
                                                     {DType::BF16, 1e12, 1e9, 0.8},
                                                     {DType::F32, 1e12, 1e9, 0.5}};
        QCOMPARE(*interpolateGemmEfficiency(table, DType::BF16, 1e9, 1e7), 0.2);   // exact point
        QCOMPARE(*interpolateGemmEfficiency(table, DType::F32, 3e9, 1e8), 0.5);    // the only f32 point
        const double mid = *interpolateGemmEfficiency(table, DType::BF16, std::sqrt(1e9 * 1e12), std::sqrt(1e7 * 1e9));
        QVERIFY(close(mid, 0.5, 1e-12));  // equidistant in log space: the mean
        const double nearBig = *interpolateGemmEfficiency(table, DType::BF16, 5e11, 5e8);
        QVERIFY(nearBig > 0.7 && nearBig < 0.8);
        QVERIFY(!interpolateGemmEfficiency(table, DType::F16, 1e9, 1e7));
        QVERIFY(!interpolateGemmEfficiency({}, DType::BF16, 1e9, 1e7));
    }

    void lineFits() {
        const LineFit f = fitLine({1, 2, 3, 4}, {3, 5, 7, 9});
        QVERIFY(close(f.slope, 2, 1e-12));
        QVERIFY(close(f.intercept, 1, 1e-12));
        QCOMPARE(f.points, 4);
        const LineFit one = fitLine({2}, {6});
        QCOMPARE(one.slope, 3.0);
        QCOMPARE(one.intercept, 0.0);
    }

    // Probes timed by a model with known constants: the fit gives those constants back.
    void fitsRecoverKnownConstants() {
        // Nodes of 4 GPUs, as the mesh's link classes say: dp has one member per node (one rail).
        const Mesh mesh = linkedMesh("dp=2,tp=4", 4);
        HardwareSpec trueSpec = trueMachine(), specSpec = h100();
        trueSpec.gpusPerNode = specSpec.gpusPerNode = 4;
        auto truth = must(CostModel::create(trueSpec, mesh), "truth");
        auto spec = must(CostModel::create(specSpec, mesh), "spec");
        CalibrationGrid grid;
        grid.gemmSizes = {1024, 4096, 16384};  // compute bound
        const auto probes = calibrationProbes(grid, spec, ProbeCollectives::Include);
        std::vector<double> seconds;
        for (const auto& p : probes) seconds.push_back(itemSeconds(p.items.front(), truth));
        const CostCalibration c = fitCalibration(probes, seconds, spec);
        const HardwareSpec t = trueMachine();
        QVERIFY(close(c.hbmBytesPerSecond, t.hbmBytesPerSecond * t.hbmEfficiency, 1e-9));
        QVERIFY(close(c.launchSeconds, t.kernelLaunchSeconds, 1e-6));
        QCOMPARE(c.gemm.size(), size_t{27});
        for (const auto& p : c.gemm) QVERIFY2(close(p.efficiency, t.gemmEfficiency, 1e-6), qPrintable(QString::number(p.efficiency)));
        // 4 collectives on each of the two axes.
        QCOMPARE(c.collectives.size(), size_t{8});
        for (const CollectiveFit& f : c.collectives) {
            const LinkSpec& l = f.link == LinkClass::InterNode ? t.interNode : t.intraNode;
            QVERIFY(close(f.alphaSeconds, l.latencySeconds, 1e-6));
            QVERIFY(close(f.betaSecondsPerByte, 1.0 / l.bytesPerSecond, 1e-9));
            QCOMPARE(f.devices, f.link == LinkClass::InterNode ? int64_t{2} : int64_t{4});
        }
        // The calibrated model now prices every probe as the true machine does.
        spec.setCalibration(c);
        for (size_t i = 0; i < probes.size(); ++i) QVERIFY(close(itemSeconds(probes[i].items.front(), spec), seconds[i], 1e-6));
    }

    // The planner with a calibration: the DP's objective still equals the evaluator's.
    void plannerWithCalibration() {
        const auto g = tinyGpt();
        const Mesh mesh = linkedMesh("8");
        auto truth = must(CostModel::create(trueMachine(), mesh), "truth");
        auto spec = must(CostModel::create(h100(), mesh), "spec");
        CalibrationGrid grid;
        const auto probes = calibrationProbes(grid, spec, ProbeCollectives::Include);
        std::vector<double> seconds;
        for (const auto& p : probes) seconds.push_back(itemSeconds(p.items.front(), truth));
        PlannerOptions o;
        o.baselines = Baselines::Skip;
        o.measurements.calibration = fitCalibration(probes, seconds, spec);
        auto cal = must(planGraph(*g, must(makeCluster(h100(), 1), "cluster"), cfp::test::meshOf("8"), o), "calibrated plan");
        QVERIFY(close(cal.plan.predictedStepSeconds, cal.plan.evaluatorStepSeconds, 1e-9));
        PlannerOptions plainOptions;
        plainOptions.baselines = Baselines::Skip;
        auto plain = must(planGraph(*g, must(makeCluster(h100(), 1), "cluster"), cfp::test::meshOf("8"), plainOptions), "plan");
        QVERIFY(cal.plan.evaluatorStepSeconds > plain.plan.evaluatorStepSeconds);  // the true machine is slower
        QCOMPARE(cal.plan.step.provenance, Provenance::Modelled);
    }

    // A whole session against the true machine: calibration is measured and stored, and the
    // calibrated model predicts the measured segments far better than the spec's numbers.
    void sessionCalibratesTowardsTheMachine() {
        SessionConfig cfg;
        cfg.graph = tinyGpt();
        cfg.cluster = must(makeCluster(h100(), 1), "cluster");
        cfg.mesh = "8";
        cfg.calibration = CalibrationMode::IfMissing;
        cfg.protocol.abandonFactor = 0;
        const Mesh mesh = linkedMesh("8");
        auto truth = std::make_shared<CostModel>(must(CostModel::create(trueMachine(), mesh), "truth"));
        SimulatedBackend::Options o;
        o.seconds = [truth](const SegmentWorkPlan& w) {
            double t = 0;
            for (const WorkItem& item : w.items) t += itemSeconds(item, *truth);
            return t;
        };
        ProfilerSession s(cfg, std::make_unique<SimulatedBackend>(o));
        auto report = must(s.run(), "run");
        QVERIFY(report.calibrationMeasured);
        QVERIFY(!report.calibration.empty());
        qInfo("%d combinations: calibrated mean %.4f worst %.4f; spec mean %.4f worst %.4f", report.accuracy.segments,
              report.accuracy.meanRelativeError, report.accuracy.worstRelativeError, report.uncalibratedAccuracy.meanRelativeError,
              report.uncalibratedAccuracy.worstRelativeError);
        QVERIFY(report.accuracy.segments > 10);
        QVERIFY2(report.accuracy.meanRelativeError < 0.05,
                 qPrintable(QString("calibrated mean error %1, worst %2 (%3)")
                                .arg(report.accuracy.meanRelativeError)
                                .arg(report.accuracy.worstRelativeError)
                                .arg(QString::fromStdString(report.accuracy.worst))));
        QVERIFY(report.uncalibratedAccuracy.meanRelativeError > 0.2);
        QVERIFY(report.accuracy.meanRelativeError < report.uncalibratedAccuracy.meanRelativeError / 4);
    }

    void accuracyReport() {
        const AccuracyReport r = accuracyOf({{"a", 1.1, 1.0}, {"b", 0.5, 1.0}, {"c", 2.0, 2.0}, {"skip", 1.0, 0.0}});
        QCOMPARE(r.segments, 3);
        QVERIFY(close(r.meanRelativeError, (0.1 + 0.5 + 0.0) / 3, 1e-12));
        QVERIFY(close(r.worstRelativeError, 0.5, 1e-12));
        QCOMPARE(r.worst, std::string("b"));
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
