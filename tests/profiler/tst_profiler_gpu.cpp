// GPU tests of the CUDA/NCCL backend. Each skips (QSKIP) when the backend is not compiled or no
// GPU can be used, so the suite passes on machines without one; on a GPU machine they check the
// devices, the executor's GEMMs, memory kernel and collectives against the hardware's peaks, and a
// whole session.

#include <QTemporaryDir>
#include <QtTest>

#include "hardware/hardware.h"
#include "models/models.h"
#include "must.h"
#include "profiler/calibration.h"
#include "profiler/session.h"

using namespace cfp;
using namespace cfp::profiler;
using cfp::test::must;

namespace {

// Runs `work` once through the backend with a short protocol; seconds per execution.
double timeOnce(MeasureBackend& b, const SegmentWorkPlan& work) {
    if (auto st = b.prepare(work); !st) qFatal("prepare %s: %s", work.label.c_str(), st.error().toString().c_str());
    LaunchResult r;
    for (int round = 0; round < 2; ++round) {
        if (auto st = b.launch(5, Timing::Total); !st) qFatal("launch: %s", st.error().toString().c_str());
        while (true) {
            auto p = b.poll(r);
            if (!p) qFatal("poll: %s", p.error().toString().c_str());
            if (*p == PollState::Done) break;
        }
    }
    return r.secondsPerIteration;
}

std::string gpuSpec(const GpuInfo& g) {
    if (g.name.find("H100") != std::string::npos) return "h100-sxm";
    if (g.name.find("H200") != std::string::npos) return "h200";
    if (g.name.find("A100") != std::string::npos) return g.memoryBytes > (int64_t{50} << 30) ? "a100-sxm-80gb" : "a100-sxm-40gb";
    return "h100-sxm";
}

}  // namespace

class TestProfilerGpu : public QObject {
    Q_OBJECT

    std::vector<GpuInfo> m_devices;

private slots:
    void initTestCase() {
        if (!backendInfo().compiled) QSKIP("built without the CUDA/NCCL backend");
        auto d = discoverDevices();
        if (!d) QSKIP(qPrintable("no usable GPU: " + QString::fromStdString(d.error().message)));
        m_devices = *d;
    }

    void devicesAndFingerprint() {
        for (const GpuInfo& g : m_devices) {
            QVERIFY(!g.name.empty());
            QVERIFY(g.memoryBytes > 0);
            QVERIFY(g.smCount > 0);
            QVERIFY(g.computeMajor >= 7);
            QVERIFY(!g.pciBusId.empty());
        }
        auto f = must(localFingerprint(), "fingerprint");
        QCOMPARE(f.gpuCount, static_cast<int>(m_devices.size()));
        QCOMPARE(f.gpuModel, m_devices.front().name);
        QVERIFY(!f.driverVersion.empty());
        QVERIFY(f.key().find(f.gpuModel) == 0);
    }

    // A large bf16 GEMM reaches a fair share of the spec's peak; the memory kernel a fair share of
    // HBM bandwidth.
    void gemmAndMemoryKernel() {
        auto hw = must(loadHardware(gpuSpec(m_devices.front())), "hw");
        const Mesh mesh = must(assignLinkClasses(must(parseMesh("1"), "mesh"), 8), "links");
        auto model = must(CostModel::create(hw, mesh), "model");
        auto backend = must(makeCudaBackend({}), "backend");
        auto setup = must(backend->open(mesh), "open");
        QCOMPARE(setup.comm, CommMode::Measured);
        const SegmentWorkPlan gemm = gemmProbe(GemmShape{1, 8192, 8192, 8192, DType::BF16}, model);
        const double t = timeOnce(*backend, gemm);
        const double tflops = gemm.items.front().flops / t / 1e12;
        qInfo("bf16 8192^3 GEMM: %.3f ms, %.0f TFLOP/s (spec peak %.0f)", t * 1e3, tflops, hw.peakFlopsFor(DType::BF16) / 1e12);
        QVERIFY(tflops > 0.3 * hw.peakFlopsFor(DType::BF16) / 1e12);
        const SegmentWorkPlan mem = memoryProbe(int64_t{1} << 30, model);
        const double tm = timeOnce(*backend, mem);
        qInfo("memory kernel 1 GiB: %.3f ms, %.0f GB/s (spec %.0f)", tm * 1e3, 1073741824.0 / tm / 1e9, hw.hbmBytesPerSecond / 1e9);
        QVERIFY(1073741824.0 / tm > 0.3 * hw.hbmBytesPerSecond);
        // Out of memory is an error the session turns into "infeasible".
        SegmentWorkPlan huge = mem;
        huge.items.front().readBytes = int64_t{1} << 40;
        auto st = backend->prepare(huge);
        QVERIFY(!st);
        QCOMPARE(st.error().code, std::string("profiler.oom"));
    }

    void collectivesOnTwoGpus() {
        if (m_devices.size() < 2) QSKIP("needs two GPUs");
        auto hw = must(loadHardware(gpuSpec(m_devices.front())), "hw");
        const Mesh mesh = must(assignLinkClasses(must(parseMesh("2"), "mesh"), 8), "links");
        auto model = must(CostModel::create(hw, mesh), "model");
        auto backend = must(makeCudaBackend({}), "backend");
        auto setup = must(backend->open(mesh), "open");
        QCOMPARE(setup.comm, CommMode::Measured);
        for (CollectiveKind k : {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter, CollectiveKind::AllToAll}) {
            const double t = timeOnce(*backend, collectiveProbe(k, 0, int64_t{64} << 20, model));
            qInfo("%s 64 MiB over 2 GPUs: %.3f ms", std::string(collectiveKindName(k)).c_str(), t * 1e3);
            QVERIFY(t > 0 && t < 1.0);
        }
    }

    // A whole session on the first segment type of a small GPT, over the GPUs there are.
    void session() {
        ModelConfig c = must(presetConfig("gpt3-125m"), "preset");
        c.numLayers = 2;
        BuildOptions o;
        o.batch = 8;
        o.seq = 512;
        SessionConfig cfg;
        cfg.graph = std::make_shared<const Graph>(must(buildTrainingStep(c, o), "gpt").graph);
        auto hw = must(loadHardware(gpuSpec(m_devices.front())), "hw");
        cfg.cluster = must(makeCluster(hw, 1), "cluster");
        cfg.mesh = std::to_string(std::min<size_t>(m_devices.size(), 8));
        cfg.cluster.hardware.gpusPerNode = static_cast<int64_t>(std::min<size_t>(m_devices.size(), 8));
        cfg.segmentTypes = {0};
        cfg.calibrationGrid.gemmSizes = {1024, 4096};
        QTemporaryDir dir;
        cfg.dbPath = dir.filePath("gpu.db").toStdString();
        ProfilerSession s(cfg, must(makeCudaBackend({}), "backend"));
        auto report = must(s.run(), "session");
        QVERIFY(report.calibrationMeasured);
        QVERIFY(!report.results.empty());
        QVERIFY(report.opMeasurements > 0);
        qInfo("session: %zu combinations in %.1f s; calibrated model mean error %.1f%%, worst %.1f%%", report.results.size(), report.seconds,
              100 * report.accuracy.meanRelativeError, 100 * report.accuracy.worstRelativeError);
        for (const auto& r : report.results)
            if (r.status == CombinationStatus::Measured) QVERIFY(r.seconds > 0);
    }
};

QTEST_GUILESS_MAIN(TestProfilerGpu)
#include "tst_profiler_gpu.moc"
