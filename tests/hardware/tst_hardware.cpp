// Hardware specs: every built-in loads with its datasheet numbers, the embedded copies match
// resources/hardware/, dtype fallbacks, user files (round trip, comments, paths vs names), one
// stable error code per kind of bad input with the right location, and cluster construction.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "hardware/hardware.h"
#include "must.h"
#include "sharding/mesh.h"

using namespace cfp;
using cfp::test::must;

namespace {

QString errorText(const Error& e) { return QString::fromStdString(e.toString()); }

constexpr int64_t kGib = int64_t{1} << 30;

// A small valid spec; the malformed-input cases each change one piece of it.
const char* const kBaseSpec = R"({
  "format": "cfp-hardware",
  "version": 1,
  "name": "Test GPU",
  "sources": ["a datasheet"],
  "memory_gib": 16,
  "hbm_tb_per_s": 1.5,
  "peak_tflops": {"bf16": 100, "f32": 50, "vector_f32": 10},
  "gemm_efficiency": 0.5,
  "hbm_efficiency": 0.25,
  "kernel_launch_us": 2,
  "gpus_per_node": 4,
  "intra_node": {"name": "NVLink", "bandwidth_gb_per_s": 100, "latency_us": 1, "supports_tree": false},
  "inter_node": {"name": "Ethernet", "bandwidth_gb_per_s": 10, "latency_us": 10, "supports_tree": true}
}
)";

bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return file.write(bytes) == bytes.size();
}

QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return file.readAll();
}

// Relative difference small enough for values that went through a decimal unit conversion.
bool nearlyEqual(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

// Restores the working directory when a test that changes it ends, pass or fail.
class CurrentDirGuard {
public:
    CurrentDirGuard() : m_saved(QDir::currentPath()) {}
    ~CurrentDirGuard() { QDir::setCurrent(m_saved); }
    CurrentDirGuard(const CurrentDirGuard&) = delete;
    CurrentDirGuard& operator=(const CurrentDirGuard&) = delete;

private:
    QString m_saved;
};

}  // namespace

class TestHardware : public QObject {
    Q_OBJECT

private slots:
    // ---------------------------------------------------------------------------------------------
    // Built-ins.

    void listsBuiltinsSorted() {
        const std::vector<std::string> expected = {"a100-pcie-40gb", "a100-sxm-40gb", "a100-sxm-80gb",
                                                   "h100-sxm",       "h200",          "v100-sxm-32gb"};
        QCOMPARE(hardwareNames(), expected);
    }

    // The embedded copies are the files of resources/hardware/, all of them and current.
    void embedsEveryResourceFile() {
        const QDir dir(QStringLiteral(CFP_SOURCE_DIR "/resources/hardware"));
        const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        std::vector<std::string> stems;
        for (const QString& file : files) stems.push_back(QFileInfo(file).completeBaseName().toStdString());
        std::sort(stems.begin(), stems.end());
        QCOMPARE(hardwareNames(), stems);
        for (const QString& file : files) {
            const auto embedded = builtinHardwareJson(QFileInfo(file).completeBaseName().toStdString());
            QVERIFY2(embedded.has_value(), qPrintable(file));
            QCOMPARE(QByteArray(embedded->data(), static_cast<qsizetype>(embedded->size())), readFile(dir.filePath(file)));
        }
        QVERIFY(!builtinHardwareJson("h900").has_value());
    }

    void everyBuiltinIsSane_data() {
        QTest::addColumn<QString>("id");
        for (const std::string& name : hardwareNames()) QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void everyBuiltinIsSane() {
        QFETCH(QString, id);
        const HardwareSpec spec = must(loadHardware(id.toStdString()), id.toStdString());
        QCOMPARE(QString::fromStdString(spec.id), id);
        QVERIFY(spec.name.rfind("NVIDIA ", 0) == 0);
        QVERIFY(spec.sources.size() >= 2);
        for (const std::string& source : spec.sources) QVERIFY(!source.empty());
        // The built-ins cite their figures in comments.
        QVERIFY(builtinHardwareJson(id.toStdString())->find("// datasheet") != std::string_view::npos);

        QVERIFY(spec.memoryBytes >= 16 * kGib && spec.memoryBytes <= 256 * kGib);
        QVERIFY(spec.memoryBytes % kGib == 0);
        QVERIFY(spec.hbmBytesPerSecond >= 0.5e12 && spec.hbmBytesPerSecond <= 10e12);
        QVERIFY(spec.vectorFlops >= 10e12 && spec.vectorFlops <= 100e12);
        // Tensor-core rates are above the vector rate; half precision at least as fast as f32.
        QVERIFY(spec.peakFlopsFor(DType::F16) > spec.vectorFlops);
        QVERIFY(spec.peakFlopsFor(DType::F16) >= spec.peakFlopsFor(DType::F32));
        QVERIFY(spec.peakFlopsFor(DType::F32) >= spec.vectorFlops);
        QVERIFY(spec.peakFlops.count(DType::F64) == 1);
        QVERIFY(spec.gemmEfficiency > 0.5 && spec.gemmEfficiency <= 1);
        QVERIFY(spec.hbmEfficiency > 0.5 && spec.hbmEfficiency <= 1);
        QVERIFY(spec.kernelLaunchSeconds > 1e-7 && spec.kernelLaunchSeconds < 1e-4);
        QCOMPARE(spec.gpusPerNode, int64_t{8});

        // Inside a node is faster and nearer than between nodes; trees are for the network.
        QVERIFY(!spec.intraNode.name.empty() && !spec.interNode.name.empty());
        QVERIFY(spec.intraNode.bytesPerSecond > spec.interNode.bytesPerSecond);
        QVERIFY(spec.intraNode.latencySeconds > 0 && spec.intraNode.latencySeconds < spec.interNode.latencySeconds);
        QVERIFY(spec.interNode.latencySeconds < 1e-4);
        QVERIFY(!spec.intraNode.supportsTree);
        QVERIFY(spec.interNode.supportsTree);
    }

    void builtinNumbers_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("name");
        QTest::addColumn<qint64>("memoryGib");
        QTest::addColumn<double>("hbm");
        QTest::addColumn<double>("bf16");
        QTest::addColumn<double>("f16");
        QTest::addColumn<double>("f32");
        QTest::addColumn<double>("vector");
        QTest::addColumn<double>("intra");
        QTest::addColumn<double>("inter");
        // bf16 of V100 falls back to its f32 (CUDA-core) rate: it has no bf16 entry.
        QTest::newRow("h100-sxm") << "h100-sxm" << "NVIDIA H100 SXM5 80GB" << qint64(80) << 3.35e12 << 989e12
                                  << 989e12 << 494.7e12 << 67e12 << 450e9 << 50e9;
        QTest::newRow("h200") << "h200" << "NVIDIA H200 SXM 141GB" << qint64(141) << 4.8e12 << 989e12 << 989e12
                              << 494.7e12 << 67e12 << 450e9 << 50e9;
        QTest::newRow("a100-sxm-40gb") << "a100-sxm-40gb" << "NVIDIA A100 SXM4 40GB" << qint64(40) << 1.555e12
                                       << 312e12 << 312e12 << 156e12 << 19.5e12 << 300e9 << 25e9;
        QTest::newRow("a100-sxm-80gb") << "a100-sxm-80gb" << "NVIDIA A100 SXM4 80GB" << qint64(80) << 2.039e12
                                       << 312e12 << 312e12 << 156e12 << 19.5e12 << 300e9 << 25e9;
        QTest::newRow("a100-pcie-40gb") << "a100-pcie-40gb" << "NVIDIA A100 PCIe 40GB" << qint64(40) << 1.555e12
                                        << 312e12 << 312e12 << 156e12 << 19.5e12 << 32e9 << 25e9;
        QTest::newRow("v100-sxm-32gb") << "v100-sxm-32gb" << "NVIDIA V100 SXM2 32GB" << qint64(32) << 0.9e12
                                       << 15.7e12 << 125e12 << 15.7e12 << 15.7e12 << 150e9 << 12.5e9;
    }
    void builtinNumbers() {
        QFETCH(QString, id);
        QFETCH(QString, name);
        QFETCH(qint64, memoryGib);
        QFETCH(double, hbm);
        QFETCH(double, bf16);
        QFETCH(double, f16);
        QFETCH(double, f32);
        QFETCH(double, vector);
        QFETCH(double, intra);
        QFETCH(double, inter);
        const HardwareSpec spec = must(loadHardware(id.toStdString()), id.toStdString());
        QCOMPARE(QString::fromStdString(spec.name), name);
        QCOMPARE(spec.memoryBytes, memoryGib * kGib);
        QVERIFY(nearlyEqual(spec.hbmBytesPerSecond, hbm));
        QVERIFY(nearlyEqual(spec.peakFlopsFor(DType::BF16), bf16));
        QVERIFY(nearlyEqual(spec.peakFlopsFor(DType::F16), f16));
        QVERIFY(nearlyEqual(spec.peakFlopsFor(DType::F32), f32));
        QVERIFY(nearlyEqual(spec.vectorFlops, vector));
        QVERIFY(nearlyEqual(spec.intraNode.bytesPerSecond, intra));
        QVERIFY(nearlyEqual(spec.interNode.bytesPerSecond, inter));
    }

    void h100Exactly() {
        const HardwareSpec h100 = must(loadHardware("h100-sxm"), "h100-sxm");
        // Whole numbers in the file convert exactly.
        QVERIFY(h100.peakFlops.at(DType::BF16) == 989e12);
        QVERIFY(h100.peakFlops.at(DType::F16) == 989e12);
        QVERIFY(h100.vectorFlops == 67e12);
        QVERIFY(h100.memoryBytes == 85'899'345'920);  // 80 GiB
        QVERIFY(h100.intraNode.bytesPerSecond == 450e9);
        QVERIFY(h100.interNode.bytesPerSecond == 50e9);
        QVERIFY(h100.kernelLaunchSeconds == 3e-6);
        QVERIFY(h100.intraNode.latencySeconds == 1e-6);
        QVERIFY(h100.interNode.latencySeconds == 5e-6);
        QCOMPARE(h100.intraNode.name, std::string("NVLink 4 (NVSwitch)"));
        QCOMPARE(h100.interNode.name, std::string("InfiniBand NDR 400 Gb/s"));
        QVERIFY(h100.peakFlops.count(DType::BF16) == 1);

        const HardwareSpec v100 = must(loadHardware("v100-sxm-32gb"), "v100");
        QVERIFY(v100.peakFlops.count(DType::BF16) == 0);  // no bf16 on Volta
    }

    // ---------------------------------------------------------------------------------------------
    // peakFlopsFor.

    // DGX H100's NVLink carries the nccl-tests all-reduce curve (dgxc-benchmarking) and the ring
    // collectives' peak; its InfiniBand and the other GPUs keep the α-β line.
    // GEMM waves: the SMs and cuBLAS's efficient tile sizes on every built-in GPU; written back.
    void gemmWaves() {
        const HardwareSpec h = must(loadHardware("h100-sxm"), "h100");
        QCOMPARE(h.smCount, 132);
        QCOMPARE(h.gemmTiles.size(), size_t{3});
        QCOMPARE(h.gemmTiles.front(), (std::pair<int, int>{256, 128}));
        QCOMPARE(must(loadHardware("a100-sxm-80gb"), "a100").smCount, 108);
        QCOMPARE(must(loadHardware("v100-sxm-32gb"), "v100").smCount, 80);
        const HardwareSpec back = must(parseHardware(writeHardwareJson(h), "back.json"), "back");
        QCOMPARE(back.smCount, 132);
        QVERIFY(back.gemmTiles == h.gemmTiles);
    }

    // Fused-attention curves measured on an H200 (h100-sxm shares them: the same die and clocks);
    // other GPUs have none (their attention matmuls at gemm_efficiency).
    void attentionCurves() {
        for (const char* id : {"h100-sxm", "h200"}) {
            const HardwareSpec h = must(loadHardware(id), id);
            QCOMPARE(h.flashAttention.forward.size(), size_t{5});
            QCOMPARE(h.flashAttention.causalForward.front(), (std::pair<double, double>{1024, 0.464}));
            QCOMPARE(h.flashAttention2.causalBackward.back(), (std::pair<double, double>{16384, 0.311}));
        }
        QVERIFY(must(loadHardware("a100-sxm-80gb"), "a100").flashAttention.empty());
    }

    void h100BusCurve() {
        const HardwareSpec h = must(loadHardware("h100-sxm"), "h100");
        QCOMPARE(h.intraNode.busCurve.points.size(), size_t{8});
        QCOMPARE(h.intraNode.busCurve.points.front().first, 1048576.0);
        QCOMPARE(h.intraNode.busCurve.points.front().second, 67e9);
        QCOMPARE(h.intraNode.busCurve.points.back().second, 480e9);
        QVERIFY(nearlyEqual(h.intraNode.busCurve.floorSeconds, 13e-6));
        QCOMPARE(h.intraNode.busCurve.devices, int64_t{8});
        QCOMPARE(h.intraNode.busCurve.otherPeakBytesPerSecond, 370e9);
        QVERIFY(h.interNode.busCurve.empty());
        QVERIFY(must(loadHardware("a100-sxm-80gb"), "a100").intraNode.busCurve.empty());
    }

    void peakFlopsFallbacks() {
        HardwareSpec spec;
        spec.vectorFlops = 10e12;
        // Nothing listed: every dtype runs at the vector rate.
        QCOMPARE(spec.peakFlopsFor(DType::BF16), 10e12);
        QCOMPARE(spec.peakFlopsFor(DType::F32), 10e12);
        // f32 listed: dtypes without an entry take it, listed ones keep theirs.
        spec.peakFlops[DType::F32] = 50e12;
        QCOMPARE(spec.peakFlopsFor(DType::BF16), 50e12);
        QCOMPARE(spec.peakFlopsFor(DType::S32), 50e12);
        spec.peakFlops[DType::BF16] = 200e12;
        QCOMPARE(spec.peakFlopsFor(DType::BF16), 200e12);
        QCOMPARE(spec.peakFlopsFor(DType::F16), 50e12);
        QCOMPARE(spec.peakFlopsFor(DType::F64), 50e12);

        // The same through a file: a spec listing only bf16 costs f32 at the vector rate.
        QString text = QString::fromUtf8(kBaseSpec);
        text.replace(R"("peak_tflops": {"bf16": 100, "f32": 50, "vector_f32": 10})",
                     R"("peak_tflops": {"bf16": 100, "vector_f32": 10})");
        const HardwareSpec parsed = must(parseHardware(text.toStdString(), "test.json"), "bf16 only");
        QVERIFY(parsed.peakFlopsFor(DType::BF16) == 100e12);
        QVERIFY(parsed.peakFlopsFor(DType::F32) == 10e12);
        QVERIFY(parsed.peakFlopsFor(DType::F16) == 10e12);
    }

    // ---------------------------------------------------------------------------------------------
    // Parsing.

    void parsesBaseSpec() {
        const HardwareSpec spec = must(parseHardware(kBaseSpec, "/some/dir/test-gpu.json"), "base");
        QCOMPARE(spec.id, std::string("test-gpu"));
        QCOMPARE(spec.name, std::string("Test GPU"));
        QCOMPARE(spec.sources, std::vector<std::string>{"a datasheet"});
        QCOMPARE(spec.memoryBytes, 16 * kGib);
        QVERIFY(spec.hbmBytesPerSecond == 1.5e12);
        QVERIFY(spec.peakFlops.size() == 2);
        QVERIFY(spec.vectorFlops == 10e12);
        QVERIFY(spec.gemmEfficiency == 0.5);
        QVERIFY(spec.hbmEfficiency == 0.25);
        QVERIFY(spec.kernelLaunchSeconds == 2e-6);
        QCOMPARE(spec.gpusPerNode, int64_t{4});
        QCOMPARE(spec.intraNode.name, std::string("NVLink"));
        QVERIFY(spec.intraNode.bytesPerSecond == 100e9);
        QVERIFY(spec.intraNode.latencySeconds == 1e-6);
        QVERIFY(!spec.intraNode.supportsTree);
        QVERIFY(spec.interNode.bytesPerSecond == 10e9);
        QVERIFY(spec.interNode.latencySeconds == 10e-6);
        QVERIFY(spec.interNode.supportsTree);

        QCOMPARE(must(parseHardware(kBaseSpec, "builtin:foo"), "builtin").id, std::string("foo"));
    }

    void optionalFieldsDefault() {
        QString text = QString::fromUtf8(kBaseSpec);
        for (const char* line : {R"(  "sources": ["a datasheet"],)", R"(  "gemm_efficiency": 0.5,)",
                                 R"(  "hbm_efficiency": 0.25,)", R"(  "kernel_launch_us": 2,)"})
            text.replace(QString::fromUtf8(line) + "\n", QString());
        const HardwareSpec spec = must(parseHardware(text.toStdString(), "test.json"), "defaults");
        const HardwareSpec defaults;
        QVERIFY(spec.sources.empty());
        QCOMPARE(spec.gemmEfficiency, defaults.gemmEfficiency);
        QCOMPARE(spec.hbmEfficiency, defaults.hbmEfficiency);
        QCOMPARE(spec.kernelLaunchSeconds, defaults.kernelLaunchSeconds);
    }

    void acceptsComments() {
        QString text = QString::fromUtf8(kBaseSpec);
        text.prepend("// leading comment\n/* block\n   comment */\n");
        text.replace(R"("memory_gib": 16,)", R"("memory_gib": 16,   // "16GB" is 16 GiB)");
        text.replace(R"("bf16": 100,)", R"("bf16": /* dense */ 100,)");
        text.append("// trailing comment without newline");
        const HardwareSpec spec = must(parseHardware(text.toStdString(), "test.json"), "comments");
        QCOMPARE(spec.memoryBytes, 16 * kGib);
        QVERIFY(spec.peakFlops.at(DType::BF16) == 100e12);
    }

    void rejectsMalformedSpecs_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("messagePart");
        // Missing fields.
        QTest::newRow("missing memory") << R"("memory_gib": 16,)" << "" << "/memory_gib" << "missing required field";
        QTest::newRow("missing format") << R"("format": "cfp-hardware",)" << "" << "/format" << "missing";
        QTest::newRow("missing name") << R"("name": "Test GPU",)" << "" << "/name" << "missing";
        QTest::newRow("missing link field") << R"("latency_us": 10, )" << "" << "/inter_node/latency_us" << "missing";
        QTest::newRow("missing tree flag") << R"(, "supports_tree": false)" << "" << "/intra_node/supports_tree"
                                           << "missing";
        QTest::newRow("missing vector rate") << R"(, "vector_f32": 10)" << "" << "/peak_tflops/vector_f32" << "missing";
        QTest::newRow("missing inter node")
            << R"(,
  "inter_node": {"name": "Ethernet", "bandwidth_gb_per_s": 10, "latency_us": 10, "supports_tree": true})"
            << "" << "/inter_node" << "missing";
        // Wrong types.
        QTest::newRow("string for integer") << R"("gpus_per_node": 4)" << R"("gpus_per_node": "4")" << "/gpus_per_node"
                                            << "expected an integer, got string";
        QTest::newRow("fraction for integer") << R"("gpus_per_node": 4)" << R"("gpus_per_node": 4.5)"
                                              << "/gpus_per_node" << "expected an integer, got number";
        QTest::newRow("string for number") << R"("hbm_tb_per_s": 1.5)" << R"("hbm_tb_per_s": "1.5")" << "/hbm_tb_per_s"
                                           << "expected a number, got string";
        QTest::newRow("number for bool") << R"("supports_tree": false)" << R"("supports_tree": 0)"
                                         << "/intra_node/supports_tree" << "expected true or false";
        QTest::newRow("array for object") << R"({"bf16": 100, "f32": 50, "vector_f32": 10})" << "[100]"
                                          << "/peak_tflops" << "expected an object, got array";
        QTest::newRow("string for link") << R"({"name": "Ethernet", "bandwidth_gb_per_s": 10, "latency_us": 10, "supports_tree": true})"
                                         << R"("ethernet")" << "/inter_node" << "expected an object, got string";
        QTest::newRow("number in sources") << R"(["a datasheet"])" << R"(["a datasheet", 7])" << "/sources/1"
                                           << "expected a string, got number";
        QTest::newRow("null name") << R"("name": "Test GPU")" << R"("name": null)" << "/name"
                                   << "expected a string, got null";
        // Out of range.
        QTest::newRow("negative bandwidth") << R"("bandwidth_gb_per_s": 100)" << R"("bandwidth_gb_per_s": -100)"
                                            << "/intra_node/bandwidth_gb_per_s" << "must be > 0, got -100";
        QTest::newRow("zero bandwidth") << R"("bandwidth_gb_per_s": 10,)" << R"("bandwidth_gb_per_s": 0,)"
                                        << "/inter_node/bandwidth_gb_per_s" << "must be > 0, got 0";
        QTest::newRow("zero memory") << R"("memory_gib": 16)" << R"("memory_gib": 0)" << "/memory_gib" << "must be > 0";
        QTest::newRow("huge memory") << R"("memory_gib": 16)" << R"("memory_gib": 1e10)" << "/memory_gib"
                                     << "must be at most";
        QTest::newRow("negative latency") << R"("latency_us": 1,)" << R"("latency_us": -1,)"
                                          << "/intra_node/latency_us" << "must be >= 0, got -1";
        QTest::newRow("negative launch") << R"("kernel_launch_us": 2)" << R"("kernel_launch_us": -2)"
                                         << "/kernel_launch_us" << "must be >= 0";
        QTest::newRow("zero efficiency") << R"("gemm_efficiency": 0.5)" << R"("gemm_efficiency": 0)"
                                         << "/gemm_efficiency" << "must be in (0, 1], got 0";
        QTest::newRow("efficiency above one") << R"("hbm_efficiency": 0.25)" << R"("hbm_efficiency": 1.5)"
                                              << "/hbm_efficiency" << "must be in (0, 1], got 1.5";
        QTest::newRow("zero SMs") << R"("gemm_efficiency": 0.5,)" << R"("gemm_efficiency": 0.5, "gemm_waves": {"sm_count": 0, "tiles": [[128, 128]]},)"
                                  << "/gemm_waves/sm_count" << "must be between 1 and 100000, got 0";
        QTest::newRow("no tiles") << R"("gemm_efficiency": 0.5,)" << R"("gemm_efficiency": 0.5, "gemm_waves": {"sm_count": 8, "tiles": []},)"
                                  << "/gemm_waves/tiles" << "a non-empty array";
        QTest::newRow("tile of three") << R"("gemm_efficiency": 0.5,)"
                                       << R"("gemm_efficiency": 0.5, "gemm_waves": {"sm_count": 8, "tiles": [[128, 128], [1, 2, 3]]},)"
                                       << "/gemm_waves/tiles/1" << "a [rows, columns] pair";
        QTest::newRow("fractional tile") << R"("gemm_efficiency": 0.5,)"
                                         << R"("gemm_efficiency": 0.5, "gemm_waves": {"sm_count": 8, "tiles": [[128, 0.5]]},)"
                                         << "/gemm_waves/tiles/0/1" << "must be an integer between 1 and 4096";
        QTest::newRow("unknown wave field") << R"("gemm_efficiency": 0.5,)"
                                            << R"("gemm_efficiency": 0.5, "gemm_waves": {"sm_count": 8, "tile": [[128, 128]]},)"
                                            << "/gemm_waves/tile" << "unknown field 'tile'";
        QTest::newRow("zero gpus per node") << R"("gpus_per_node": 4)" << R"("gpus_per_node": 0)" << "/gpus_per_node"
                                            << "must be between 1 and";
        QTest::newRow("negative gpus per node") << R"("gpus_per_node": 4)" << R"("gpus_per_node": -8)"
                                                << "/gpus_per_node" << "got -8";
        QTest::newRow("negative tflops") << R"("bf16": 100)" << R"("bf16": -100)" << "/peak_tflops/bf16"
                                         << "must be > 0";
        QTest::newRow("zero vector rate") << R"("vector_f32": 10)" << R"("vector_f32": 0)" << "/peak_tflops/vector_f32"
                                          << "must be > 0";
        QTest::newRow("empty name") << R"("name": "Test GPU")" << R"("name": "")" << "/name" << "name is empty";
        QTest::newRow("empty link name") << R"("name": "NVLink")" << R"("name": "")" << "/intra_node/name"
                                         << "name is empty";
        // Unknown fields and values.
        QTest::newRow("unknown top-level field") << R"("memory_gib": 16)" << R"("memory_gb": 16)" << "/memory_gb"
                                                 << "unknown field 'memory_gb'; did you mean 'memory_gib'?";
        QTest::newRow("unrelated top-level field") << R"("version": 1,)" << R"("version": 1, "colour": "green",)"
                                                   << "/colour" << "unknown field 'colour'";
        QTest::newRow("unknown link field") << R"("latency_us": 10)" << R"("latency_ms": 10)"
                                            << "/inter_node/latency_ms" << "did you mean 'latency_us'?";
        QTest::newRow("unknown dtype") << R"("bf16": 100)" << R"("fp16": 100)" << "/peak_tflops/fp16"
                                       << "unknown dtype 'fp16'";
        QTest::newRow("integer dtype") << R"("bf16": 100)" << R"("s32": 100)" << "/peak_tflops/s32"
                                       << "unknown dtype 's32'";
        QTest::newRow("duplicate key") << R"("version": 1,)" << R"("version": 1, "version": 1,)" << "/version"
                                       << "appears twice";
        QTest::newRow("duplicate nested key") << R"("latency_us": 1,)" << R"("latency_us": 1, "latency_us": 2,)"
                                              << "/intra_node/latency_us" << "appears twice";
        QTest::newRow("other format") << R"("format": "cfp-hardware")" << R"("format": "cfp-graph")" << "/format"
                                      << "format is 'cfp-graph', expected 'cfp-hardware'";
        QTest::newRow("a graph document") << R"("format": "cfp-hardware")" << R"("format": "cfp-graph", "nodes": [])"
                                          << "/format" << "format is 'cfp-graph'";
        QTest::newRow("other version") << R"("version": 1)" << R"("version": 2)" << "/version"
                                       << "version 2 is not supported";
        // A measured bus-bandwidth curve: sizes ascending, positive, a floor, no unknown keys.
        const QString link = R"("latency_us": 1, "supports_tree": false})";
        auto curve = [&](const char* body) { return QString(R"("latency_us": 1, "supports_tree": false, "bus_bandwidth_curve": %1})").arg(body); };
        QTest::newRow("curve sizes descend") << link << curve(R"({"devices": 8, "points": [[4096, 10], [1024, 20]], "floor_us": 5})")
                                             << "/intra_node/bus_bandwidth_curve/points/1/0" << "message sizes must ascend";
        QTest::newRow("curve bandwidth zero") << link << curve(R"({"devices": 8, "points": [[4096, 0]], "floor_us": 5})")
                                              << "/intra_node/bus_bandwidth_curve/points/0/1" << "must be > 0";
        QTest::newRow("curve no points") << link << curve(R"({"devices": 8, "points": [], "floor_us": 5})") << "/intra_node/bus_bandwidth_curve/points"
                                         << "non-empty array";
        QTest::newRow("curve point not a pair") << link << curve(R"({"devices": 8, "points": [[4096]], "floor_us": 5})")
                                                << "/intra_node/bus_bandwidth_curve/points/0" << "pair";
        QTest::newRow("curve without floor") << link << curve(R"({"devices": 8, "points": [[4096, 10]]})") << "/intra_node/bus_bandwidth_curve/floor_us"
                                             << "missing";
        QTest::newRow("curve unknown key") << link << curve(R"({"devices": 8, "points": [[4096, 10]], "floor_us": 5, "flor": 1})")
                                           << "/intra_node/bus_bandwidth_curve/flor" << "unknown";
        QTest::newRow("curve of one device") << link << curve(R"({"devices": 1, "points": [[4096, 10]], "floor_us": 5})")
                                             << "/intra_node/bus_bandwidth_curve/devices" << "at least 2";
        // Fused-attention curves.
        const QString eff = R"("gemm_efficiency": 0.5,)";
        auto attention = [&](const char* forward) {
            return eff + QString(R"( "flash_attention": {"forward": %1, "backward": [[1024, 0.4]], "causal_forward": [[1024, 0.4]], "causal_backward": [[1024, 0.3]]},)").arg(forward);
        };
        QTest::newRow("attention lengths descend") << eff << attention("[[2048, 0.6], [1024, 0.5]]") << "/flash_attention/forward/1/0" << "ascend";
        QTest::newRow("attention efficiency above 1") << eff << attention("[[2048, 1.5]]") << "/flash_attention/forward/0/1" << "";
        QTest::newRow("attention curve missing") << eff << eff + R"( "flash_attention_2": {"forward": [[1024, 0.5]]},)"
                                                 << "/flash_attention_2/backward" << "missing";
    }
    void rejectsMalformedSpecs() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, where);
        QFETCH(QString, messagePart);
        QString text = QString::fromUtf8(kBaseSpec);
        QVERIFY2(text.contains(from), qPrintable(from));
        text.replace(text.indexOf(from), from.size(), to);
        auto spec = parseHardware(text.toStdString(), "dir/test.json");
        QVERIFY(!spec.ok());
        const Error& e = spec.error();
        QCOMPARE(QString::fromStdString(e.code), QStringLiteral("hardware.format"));
        QCOMPARE(QString::fromStdString(e.where), where);
        QVERIFY2(QString::fromStdString(e.message).contains(messagePart), qPrintable(errorText(e)));
        // The message names the file, and the error is one line.
        QVERIFY2(QString::fromStdString(e.message).contains("(in dir/test.json)"), qPrintable(errorText(e)));
        QVERIFY(!errorText(e).contains('\n'));
    }

    void rejectsNonObjects_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("array") << "[1, 2]";
        QTest::newRow("number") << "42";
        QTest::newRow("string") << R"("h100-sxm")";
    }
    void rejectsNonObjects() {
        QFETCH(QString, text);
        auto spec = parseHardware(text.toStdString(), "test.json");
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.format"));
        QCOMPARE(spec.error().where, std::string());
        QVERIFY(spec.error().message.find("expected an object") != std::string::npos);
    }

    void reportsSyntaxErrors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("truncated") << "{\n  \"format\": \"cfp-hardware\",\n  \"version\": 1,\n  \"name\": \"X\""
                                   << "test.json:4:14" << "unexpected end of input";
        QTest::newRow("truncated base") << QString::fromUtf8(kBaseSpec).left(200) << "test.json:8:60"
                                        << "unexpected end of input";
        QTest::newRow("empty") << "" << "test.json:1:1" << "unexpected end of input";
        QTest::newRow("double comma") << "{\n  \"a\": 1,,\n}" << "test.json:2:10" << "unexpected ','";
        QTest::newRow("bare word") << "{\n  \"memory_gib\": eighty\n}" << "test.json:2:17" << "invalid literal";
        QTest::newRow("unterminated comment") << "{ /* never closed\n" << "test.json:2:1" << "comment";
        QTest::newRow("overflowing number") << "{\n  \"hbm_tb_per_s\": 1e999\n}" << "test.json:2:23"
                                            << "number overflow";
        QTest::newRow("trailing garbage") << "{}\n}" << "test.json:2:1" << "expected end of input";
    }
    void reportsSyntaxErrors() {
        QFETCH(QString, text);
        QFETCH(QString, where);
        QFETCH(QString, messagePart);
        auto spec = parseHardware(text.toStdString(), "test.json");
        QVERIFY(!spec.ok());
        const Error& e = spec.error();
        QCOMPARE(QString::fromStdString(e.code), QStringLiteral("hardware.syntax"));
        QCOMPARE(QString::fromStdString(e.where), where);
        QVERIFY2(QString::fromStdString(e.message).contains(messagePart), qPrintable(errorText(e)));
        // nlohmann's own prefix and location are replaced by ours.
        QVERIFY2(!QString::fromStdString(e.message).contains("json.exception"), qPrintable(errorText(e)));
        QVERIFY(!errorText(e).contains('\n'));
    }

    // ---------------------------------------------------------------------------------------------
    // Names and files.

    void unknownNameListsBuiltins_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("typo") << "h900";
        QTest::newRow("case") << "H100-SXM";
        QTest::newRow("empty") << "";
        QTest::newRow("no extension") << "my-gpu";
    }
    void unknownNameListsBuiltins() {
        QFETCH(QString, name);
        auto spec = loadHardware(name.toStdString());
        QVERIFY(!spec.ok());
        const Error& e = spec.error();
        QCOMPARE(QString::fromStdString(e.code), QStringLiteral("hardware.unknown"));
        QVERIFY(e.message.find("'" + name.toStdString() + "'") != std::string::npos);
        for (const std::string& known : hardwareNames())
            QVERIFY2(e.message.find(known) != std::string::npos, qPrintable(errorText(e)));
    }

    // A spec written out and read back from a user's directory gives the same numbers.
    void userFileRoundTrip_data() {
        QTest::addColumn<QString>("id");
        for (const std::string& name : hardwareNames()) QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }
    void userFileRoundTrip() {
        QFETCH(QString, id);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const HardwareSpec original = must(loadHardware(id.toStdString()), "built-in");
        const QString path = dir.filePath("my-" + id + ".json");
        QVERIFY(writeFile(path, QByteArray::fromStdString(writeHardwareJson(original))));

        const HardwareSpec copy = must(loadHardware(path.toStdString()), "copy");
        QCOMPARE(QString::fromStdString(copy.id), "my-" + id);
        QCOMPARE(copy.name, original.name);
        QCOMPARE(copy.sources, original.sources);
        QCOMPARE(copy.memoryBytes, original.memoryBytes);
        QVERIFY(nearlyEqual(copy.hbmBytesPerSecond, original.hbmBytesPerSecond));
        QCOMPARE(copy.peakFlops.size(), original.peakFlops.size());
        for (const auto& [dtype, flops] : original.peakFlops) QVERIFY(nearlyEqual(copy.peakFlops.at(dtype), flops));
        QVERIFY(nearlyEqual(copy.vectorFlops, original.vectorFlops));
        QVERIFY(nearlyEqual(copy.gemmEfficiency, original.gemmEfficiency));
        QVERIFY(nearlyEqual(copy.hbmEfficiency, original.hbmEfficiency));
        QVERIFY(nearlyEqual(copy.kernelLaunchSeconds, original.kernelLaunchSeconds));
        QCOMPARE(copy.gemmUnalignedEfficiency, original.gemmUnalignedEfficiency);
        QVERIFY(copy.flashAttention.forward == original.flashAttention.forward);
        QVERIFY(copy.flashAttention.causalBackward == original.flashAttention.causalBackward);
        QVERIFY(copy.flashAttention2.causalForward == original.flashAttention2.causalForward);
        QCOMPARE(copy.gpusPerNode, original.gpusPerNode);
        for (auto [a, b] : {std::pair{&copy.intraNode, &original.intraNode}, std::pair{&copy.interNode, &original.interNode}}) {
            QCOMPARE(a->name, b->name);
            QVERIFY(nearlyEqual(a->bytesPerSecond, b->bytesPerSecond));
            QVERIFY(nearlyEqual(a->latencySeconds, b->latencySeconds));
            QCOMPARE(a->supportsTree, b->supportsTree);
            QCOMPARE(a->busCurve.points.size(), b->busCurve.points.size());
            for (size_t i = 0; i < a->busCurve.points.size(); ++i) {
                QVERIFY(nearlyEqual(a->busCurve.points[i].first, b->busCurve.points[i].first));
                QVERIFY(nearlyEqual(a->busCurve.points[i].second, b->busCurve.points[i].second));
            }
            QVERIFY(nearlyEqual(a->busCurve.floorSeconds, b->busCurve.floorSeconds));
            QCOMPARE(a->busCurve.devices, b->busCurve.devices);
            QVERIFY(nearlyEqual(a->busCurve.otherPeakBytesPerSecond, b->busCurve.otherPeakBytesPerSecond));
        }
        // Writing the copy gives the same text: the written form is a fixed point.
        QCOMPARE(writeHardwareJson(copy), writeHardwareJson(original));
    }

    void pathsAndNames() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeFile(dir.filePath("my-gpu.json"), kBaseSpec));
        QVERIFY(writeFile(dir.filePath("my-gpu.spec"), kBaseSpec));
        // A file named like a built-in, in the working directory, does not shadow it.
        QVERIFY(writeFile(dir.filePath("h100-sxm"), "not json"));

        CurrentDirGuard guard;
        QVERIFY(QDir::setCurrent(dir.path()));
        // Ends in ".json": a file, relative to the working directory.
        QCOMPARE(must(loadHardware("my-gpu.json"), "relative").name, std::string("Test GPU"));
        QCOMPARE(must(loadHardware("./my-gpu.json"), "dot slash").id, std::string("my-gpu"));
        // Contains '/': a file whatever its extension.
        QCOMPARE(must(loadHardware("./my-gpu.spec"), "other extension").id, std::string("my-gpu"));
        QCOMPARE(must(loadHardware((dir.path() + "/my-gpu.json").toStdString()), "absolute").id, std::string("my-gpu"));
        // Built-ins come from the binary, not from the working directory.
        QCOMPARE(must(loadHardware("h100-sxm"), "built-in elsewhere").name, std::string("NVIDIA H100 SXM5 80GB"));
    }

    void fileErrors() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        // No such file: unknown, like a name that is no built-in; the built-ins are listed.
        const std::string missing = dir.filePath("missing.json").toStdString();
        auto spec = loadHardware(missing);
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.unknown"));
        QCOMPARE(spec.error().where, missing);
        QVERIFY(spec.error().message.find("h100-sxm") != std::string::npos);

        // Exists but cannot be read (a directory).
        QVERIFY(QDir(dir.path()).mkdir("folder.json"));
        const std::string folder = dir.filePath("folder.json").toStdString();
        spec = loadHardware(folder);
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.io"));
        QCOMPARE(spec.error().where, folder);

        // Far too large to be a spec.
        const QString big = dir.filePath("big.json");
        QVERIFY(writeFile(big, QByteArray(2 << 20, ' ')));
        spec = loadHardware(big.toStdString());
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.io"));

        // Errors inside a file name it: syntax in `where`, format in the message.
        const QString broken = dir.filePath("broken.json");
        QVERIFY(writeFile(broken, "{\n  \"format\": \"cfp-hardware\",\n"));
        spec = loadHardware(broken.toStdString());
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.syntax"));
        QCOMPARE(QString::fromStdString(spec.error().where), broken + ":3:1");

        QString text = QString::fromUtf8(kBaseSpec);
        text.replace(R"("bandwidth_gb_per_s": 10,)", R"("bandwidth_gb_per_s": -10,)");
        const QString negative = dir.filePath("negative.json");
        QVERIFY(writeFile(negative, text.toUtf8()));
        spec = loadHardware(negative.toStdString());
        QVERIFY(!spec.ok());
        QCOMPARE(spec.error().code, std::string("hardware.format"));
        QCOMPARE(spec.error().where, std::string("/inter_node/bandwidth_gb_per_s"));
        QVERIFY(spec.error().message.find(negative.toStdString()) != std::string::npos);
    }

    // The complete example in docs/hardware-format.md is a valid spec.
    void documentedExampleParses() {
        const QString doc = QString::fromUtf8(readFile(QStringLiteral(CFP_SOURCE_DIR "/docs/hardware-format.md")));
        QVERIFY(!doc.isEmpty());
        const QString fence = QStringLiteral("```jsonc\n");
        const qsizetype start = doc.indexOf(fence);
        QVERIFY(start >= 0);
        const qsizetype end = doc.indexOf(QStringLiteral("```"), start + fence.size());
        QVERIFY(end > start);
        const QString example = doc.mid(start + fence.size(), end - start - fence.size());
        const HardwareSpec spec = must(parseHardware(example.toStdString(), "docs/my-gpu.json"), "documented example");
        QCOMPARE(spec.id, std::string("my-gpu"));
        QVERIFY(spec.peakFlops.count(DType::BF16) == 1);
    }

    // ---------------------------------------------------------------------------------------------
    // Clusters.

    void makesClusters() {
        const HardwareSpec h100 = must(loadHardware("h100-sxm"), "h100");
        const Cluster one = must(makeCluster(h100, 1), "one node");
        QCOMPARE(one.devices(), int64_t{8});
        QCOMPARE(QString::fromStdString(one.toString()), QStringLiteral("1 × 8 NVIDIA H100 SXM5 80GB"));
        const Cluster sixteen = must(makeCluster(h100, 16), "16 nodes");
        QCOMPARE(sixteen.devices(), int64_t{128});
        QCOMPARE(sixteen.nodes, int64_t{16});
        QCOMPARE(QString::fromStdString(sixteen.toString()), QStringLiteral("16 × 8 NVIDIA H100 SXM5 80GB"));
        const Cluster largest = must(makeCluster(h100, kMaxMeshDevices / 8), "largest");
        QCOMPARE(largest.devices(), kMaxMeshDevices);
    }

    void rejectsBadClusters_data() {
        QTest::addColumn<qint64>("nodes");
        QTest::addColumn<qint64>("gpusPerNode");
        QTest::newRow("zero nodes") << qint64(0) << qint64(8);
        QTest::newRow("negative nodes") << qint64(-2) << qint64(8);
        QTest::newRow("most negative") << qint64(std::numeric_limits<int64_t>::min()) << qint64(8);
        QTest::newRow("one node too many") << qint64(kMaxMeshDevices / 8 + 1) << qint64(8);
        QTest::newRow("int64 max nodes") << qint64(std::numeric_limits<int64_t>::max()) << qint64(8);
        QTest::newRow("no gpus per node") << qint64(1) << qint64(0);
        QTest::newRow("negative gpus per node") << qint64(2) << qint64(-8);
    }
    void rejectsBadClusters() {
        QFETCH(qint64, nodes);
        QFETCH(qint64, gpusPerNode);
        HardwareSpec spec = must(loadHardware("a100-sxm-80gb"), "a100");
        spec.gpusPerNode = gpusPerNode;
        auto cluster = makeCluster(spec, nodes);
        QVERIFY(!cluster.ok());
        QCOMPARE(cluster.error().code, std::string("cluster.bad_nodes"));
        QVERIFY(!cluster.error().message.empty());
    }
};

QTEST_GUILESS_MAIN(TestHardware)
#include "tst_hardware.moc"
