// `cfp describe | analyze | plan | graph` on imported models (.hlo; .onnx where the build reads it):
// source kind, inferred training step, --train, sharding annotations, and one-line errors.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <map>

#include "import/onnx_import.h"

namespace {

const QString kData = QStringLiteral(CFP_TEST_DATA_DIR "/hlo");

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runCfp(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(CFP_CLI_PATH), args);
    if (!p.waitForFinished(300000)) qFatal("cfp did not finish");
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

QJsonObject json(const QByteArray& text) {
    QJsonParseError e;
    const QJsonDocument d = QJsonDocument::fromJson(text, &e);
    if (e.error != QJsonParseError::NoError) qFatal("not JSON: %s", text.constData());
    return d.object();
}

// `cfp describe MODEL EXTRA --json` gives `params`; `cfp plan MODEL EXTRA --mesh M` plans on each mesh.
void describesAndPlans(const QString& model, const QStringList& extra, qint64 params, const std::vector<const char*>& meshes) {
    const Run d = runCfp(QStringList{"describe", model} + extra + QStringList{"--json"});
    QVERIFY2(d.exitCode == 0, d.err.constData());
    QCOMPARE(json(d.out)["params"].toInteger(), params);
    for (const char* mesh : meshes) {
        const Run r = runCfp(QStringList{"plan", model} + extra + QStringList{"--mesh", mesh, "--no-baselines", "--json"});
        QVERIFY2(r.exitCode == 0, (model.toStdString() + " --mesh " + mesh + ": " + r.err.toStdString()).c_str());
        QVERIFY(json(r.out)["predicted_step_seconds"].toDouble() > 0);
    }
}

}  // namespace

class TestImportCli : public QObject {
    Q_OBJECT

private slots:
    void describeHlo() {
        const Run r = runCfp({"describe", kData + "/jax_mlp.hlo", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["source_kind"].toString(), QString("hlo"));
        QCOMPARE(j["ops"].toInt(), 14);
        QCOMPARE(j["imported_training_step"].toBool(), false);
        QCOMPARE(j["source_shardings"].toObject()["Arg_0.1"].toString(), QString("{devices=[2,1]0,1}"));
        const Run text = runCfp({"describe", kData + "/jax_mlp.hlo"});
        QVERIFY(text.out.contains("source shardings"));
        QVERIFY(text.out.contains("forward only"));
    }
    void describeTrain() {
        const Run r = runCfp({"describe", kData + "/jax_mlp.hlo", "--train", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["training_appended"].toBool(), true);
        QVERIFY(j["ops_by_phase"].toObject()["backward"].toInt() > 0);
        QVERIFY(j["ops_by_phase"].toObject()["optimizer"].toInt() > 0);
    }
    void analyzeHloTrainingStep() {
        const Run r = runCfp({"analyze", kData + "/gpt2_train.hlo", "--mesh", "8", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["comm_free_check"].toString(), QString("pass"));
        QCOMPARE(j["blocks"].toInt(), 13);
        int layerTypes = 0;
        for (const auto& t : j["blocks_per_segment_type"].toArray()) {
            const QJsonObject o = t.toObject();
            if (o["blocks"].toInt() == 4 && o["occurrences"].toInt() == 2) ++layerTypes;
        }
        QVERIFY2(layerTypes == 1, r.out.left(2000).constData());
    }
    void planHlo() {
        QTemporaryDir dir;
        const Run r = runCfp({"plan", kData + "/gpt2_train.hlo", "--mesh", "8", "--no-baselines", "--json",
                           "-o", dir.filePath("plan.json")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(json(r.out)["predicted_step_seconds"].toDouble() > 0);
    }
    void planTorchXlaStyleStep() {
        // A PyTorch/XLA-style forward with --train plans on a flat, a 2-D and the automatic mesh.
        for (const char* mesh : {"8", "2x4", "auto"}) {
            QTemporaryDir dir;
            const Run r = runCfp({"plan", kData + "/torch_xla_gpt2_step.hlo", "--train", "--mesh", mesh, "--no-baselines",
                                  "--json", "-o", dir.filePath("plan.json")});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            QVERIFY(json(r.out)["predicted_step_seconds"].toDouble() > 0);
        }
    }
    void planTorchXlaBertStep() {
        // A 12-layer BERT-style MLM step written as PyTorch/XLA lowers it (torch_xla_style.py bert 12: post-LN,
        // exact GELU through erf, token types, tied MLM head), --train adding the backward and AdamW
        // (11,480 ops, 109.5 M parameters): plans on a flat, a 2-D and the automatic mesh.
        describesAndPlans(kData + "/torch_xla_bert12.hlo", {"--train"}, 109514298, {"8", "2x4", "auto"});
    }
    void analyzeSaysHowOpsAreDecided() {
        // Every op counted once by how the planner decides it; opaque ops listed by target.
        QTemporaryDir dir;
        const QString path = dir.filePath("opaque.hlo");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("HloModule m\nENTRY e {\n  x = f32[8,16] parameter(0)\n  w = f32[16,16] parameter(1)\n"
                "  d = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                "  k = f32[8,16] custom-call(d), custom_call_target=\"my_kernel\"\n"
                "  c = f32[8,16] convolution(k, w), window={size=1}, dim_labels=bf_io->bf\n"
                "  ROOT n = f32[8,16] negate(c)\n}\n");
        f.close();
        const Run r = runCfp({"analyze", path, "--mesh", "4", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject j = json(r.out);
        const QJsonObject d = j["ops_by_decision"].toObject();
        int sum = 0;
        for (const QString& k : d.keys()) sum += d[k].toInt();
        QCOMPARE(sum, j["ops"].toInt());
        QCOMPARE(d["in_blocks"].toInt(), 3);  // x, w, d
        const QJsonObject opaque = j["opaque_ops_by_target"].toObject();
        QCOMPARE(opaque["my_kernel"].toInt(), 1);
        QCOMPARE(opaque["hlo.convolution"].toInt(), 1);
        const Run text = runCfp({"analyze", path, "--mesh", "4"});
        QVERIFY(text.out.contains("opaque ops             hlo.convolution 1, my_kernel 1"));
        // The PyTorch/XLA-style step has none.
        const Run step = runCfp({"analyze", kData + "/torch_xla_gpt2_step.hlo", "--train", "--mesh", "8", "--json"});
        QVERIFY2(step.exitCode == 0, step.err.constData());
        QVERIFY(json(step.out)["opaque_ops_by_target"].toObject().isEmpty());
    }
    void planStableHlo() {
        // A JAX-style StableHLO module (lax.scan over stacked layers) with --train: describe shows
        // its parameters; it plans on a flat, a 2-D and the automatic mesh.
        describesAndPlans(QStringLiteral(CFP_TEST_DATA_DIR "/stablehlo/scan_mlp.mlir"), {"--train"}, 74880, {"8", "2x4", "auto"});
    }
    void planJaxSteps() {
        // Training steps JAX lowered (tests/data/jax): the scanned GPT with AdamW (StableHLO) shows its
        // parameter count and plans; the 12-layer BERT with AdamW (HLO) plans on a flat, a 2-D and the
        // automatic mesh; the GPT with cuDNN fused attention plans from either text.
        const QString dir = QStringLiteral(CFP_TEST_DATA_DIR "/jax");
        describesAndPlans(dir + "/jax_gpt2_scan_adamw.mlir", {}, 470528, {"8", "auto"});
        describesAndPlans(dir + "/jax_bert12_adamw.hlo", {}, 109514298, {"8", "2x4", "auto"});
        describesAndPlans(dir + "/jax_gpt_cudnn_attention.mlir", {}, 1710592, {"2x4"});
        describesAndPlans(dir + "/jax_gpt_cudnn_attention.hlo", {}, 1710592, {"8"});
    }
    void jaxDebugInfoNamesReachTheExport() {
        // A step lowered with debug info names its arguments by pytree path; they become the
        // parameters' names, and a plan made with --train exports them (the plan records --train,
        // so `cfp export` rebuilds the same graph).
        QTemporaryDir dir;
        const QString mlir = dir.filePath("step.mlir");
        QFile f(mlir);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("module @jit_f {\n"
                "  func.func public @main(%arg0: tensor<8x8xf32> loc(\"params['layers']['0']['w']\"), %arg1: tensor<8x8xf32> "
                "loc(\"x\")) -> (tensor<f32> {jax.result_info = \"result\"}) {\n"
                "    %0 = stablehlo.dot_general %arg1, %arg0, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
                "    %1 = stablehlo.tanh %0 : tensor<8x8xf32>\n"
                "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
                "    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>\n"
                "    return %2 : tensor<f32>\n  }\n}\n");
        f.close();
        const QString plan = dir.filePath("plan.json");
        const Run p = runCfp({"plan", mlir, "--train", "--mesh", "8", "--no-baselines", "-o", plan});
        QVERIFY2(p.exitCode == 0, p.err.constData());
        const Run e = runCfp({"export", plan, "--format", "jax", "-o", "-"});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        QVERIFY(e.out.contains("    \"params.layers.0.w\": P("));
    }
    void scannedStacksExportWhole() {
        // The scanned step's stacked weights are planned one layer per parameter (`arg1[0]`,
        // `arg1[1]`); the exports name the stacks the program has, with their stacked shapes, and
        // say where the plan lays a stack's layers out differently.
        QTemporaryDir dir;
        const QString plan = dir.filePath("plan.json");
        const Run p = runCfp({"plan", QString(CFP_TEST_DATA_DIR) + "/jax/jax_gpt2_scan_adamw.mlir", "--mesh", "2x4", "--no-baselines", "-o", plan});
        QVERIFY2(p.exitCode == 0, p.err.constData());
        const Run e = runCfp({"export", plan, "--format", "jax", "-o", "-"});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        QVERIFY(e.out.contains("    \"arg1\": P("));
        QVERIFY(e.out.contains("    \"arg1\": (2, 128, 512),"));
        QVERIFY(!e.out.contains("arg1["));
        QVERIFY(e.out.contains("    \"arg12\": P"));  // not stacked: as it is
        int specs = 0;
        for (const QByteArray& line : e.out.split('\n')) specs += line.startsWith("    \"arg") && line.contains(": P(");
        QCOMPARE(specs, 2 * 16 + 2);  // 16 parameters, the optimizer state of each, and the two inputs
        for (const QByteArray& line : e.err.split('\n'))
            if (!line.isEmpty()) QVERIFY2(line.contains("stacked parameter arg") && line.contains("a scan runs one layout"), line.constData());
        const Run h = runCfp({"export", plan, "--format", "hlo-sharding", "-o", "-"});
        QVERIFY2(h.exitCode == 0, h.err.constData());
        QVERIFY(h.out.contains("\narg1 {"));
        QVERIFY(!h.out.contains("arg1["));
    }
    void graphWritesHlo() {
        QTemporaryDir dir;
        const QString out = dir.filePath("mlp.hlo");
        const Run r = runCfp({"graph", kData + "/jax_mlp.hlo", "-o", out});
        QCOMPARE(r.exitCode, 0);
        const Run again = runCfp({"describe", out, "--json"});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(json(again.out)["ops"].toInt(), 14);
    }
    void onnxWithoutLibrarySaysSo() {
        if (cfp::onnxImportAvailable()) QSKIP("this build reads ONNX (tst_onnx_import covers it)");
        const Run r = runCfp({"describe", QStringLiteral(CFP_TEST_DATA_DIR "/onnx/mlp.onnx")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("[onnx.unavailable]"));
    }
    void shardMapStepAnalysesAndPlans() {
        // A shard_map'd MLP training step (tests/data/hlo/shard_map_mlp.hlo and its StableHLO): the
        // block check passes on the mesh its shardings are written for, with every op accounted for;
        // it plans there, on the same mesh with named axes and under auto; a plan file records the
        // boundaries' shardings; a mesh they do not fit is one error line naming the instruction.
        const QString hlo = kData + "/shard_map_mlp.hlo";
        const QString mlir = QStringLiteral(CFP_TEST_DATA_DIR "/stablehlo/shard_map_mlp.mlir");
        for (const QString& model : {hlo, mlir}) {
            const Run a = runCfp({"analyze", model, "--mesh", "4x2", "--json"});
            QVERIFY2(a.exitCode == 0, a.err.constData());
            const QJsonObject j = json(a.out);
            QCOMPARE(j["comm_free_check"].toString(), QString("pass"));
            QCOMPARE(j["blocks"].toInt(), 15);  // 7 boundaries, 3 psums, 5 blocks of matmuls in the regions
            QCOMPARE(j["unsupported_ops"].toArray().size(), 0);
            QVERIFY(a.err.contains("[hlo.manual_region]"));
            describesAndPlans(model, {}, 4096, {"4x2", "dp=4,tp=2", "auto"});
            for (const char* mesh : {"8", "2x4"}) {
                const Run bad = runCfp({"analyze", model, "--mesh", mesh});
                QCOMPARE(bad.exitCode, 1);
                const QList<QByteArray> lines = bad.err.trimmed().split('\n');
                QCOMPARE(lines.size(), 2);  // the import note, the error
                QVERIFY(lines[1].startsWith("cfp: error: instruction '"));
                QVERIFY(lines[1].contains("{devices=[4,1,2]<=[8] last_tile_dim_replicate}"));
                QVERIFY(lines[1].endsWith("[hlo.manual_mesh]"));
            }
        }
        QTemporaryDir dir;
        const QString planFile = dir.filePath("plan.json");
        const Run p = runCfp({"plan", hlo, "--mesh", "dp=4,tp=2", "--no-baselines", "-o", planFile});
        QVERIFY2(p.exitCode == 0, p.err.constData());
        QFile f(planFile);
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::map<QString, QString> results;
        for (const QJsonValue t : json(f.readAll())["tensors"].toArray())
            results[t.toObject()["name"].toString()] = t.toObject()["result"].toString();
        QCOMPARE(results["Arg_0.31"], QString("[{dp},{}] partial{}"));        // x, as the region reads it
        QCOMPARE(results["custom-call.35"], QString("[{},{}] partial{}"));    // each device's rows, whole
        QCOMPARE(results["call.40/dot.9"], QString("[{},{}] partial{}"));  // not split again
        QCOMPARE(results["custom-call.56"], QString("[{},{tp}] partial{}"));  // dw1 back in w1's sharding
        // The plan file reads back against the model (`cfp export` rebuilds it from the plan), and
        // exported as XLA shardings the weights are laid out as the source annotated them.
        const Run e = runCfp({"export", planFile, "--format", "hlo-sharding", "-o", "-"});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        QVERIFY2(e.out.contains("Arg_1.32 {devices=[1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"), e.out.constData());  // <=[4,2]T(1,0)
    }
    void malformedHloIsOneLine() {
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.hlo");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n}\n");
        f.close();
        const Run r = runCfp({"analyze", bad});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(r.err.contains("bad.hlo:4:3"));
        QVERIFY(r.err.contains("[hlo.shape_mismatch]"));
    }
};

QTEST_GUILESS_MAIN(TestImportCli)
#include "tst_import_cli.moc"
