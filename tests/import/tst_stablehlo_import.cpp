// The StableHLO (MLIR text) importer: a JAX-style module with lax.scan over stacked layer weights,
// a private function, reductions in both printed forms, shardings and locations imports into the
// graph the HLO importer gives for the same program; with --train it analyses with the block
// check passing; malformed text gives located errors and never crashes.
#include <QtTest>

#include <fstream>
#include <iterator>
#include <set>

#include "analysis/analysis.h"
#include "import/hlo_import.h"
#include "import/stablehlo_import.h"
#include "interp/interpreter.h"
#include "loader/model_loader.h"
#include "rules/op_rules.h"
#include "sharding/mesh.h"

#include "must.h"

using namespace cfp;

namespace {

const std::string kDir = std::string(CFP_TEST_DATA_DIR) + "/stablehlo";

int64_t parameterElements(const Graph& g) {
    int64_t n = 0;
    for (const Op& op : g.ops())
        if (op.kind == OpKind::Parameter && isFloating(op.type.dtype)) n += op.type.elements();
    return n;
}

// The most blocks a segment type of exactly `occurrences` segments has (0: none).
size_t largestRepeatedType(const SegmentCover& cover, int occurrences) {
    size_t most = 0;
    for (const SegmentType& t : cover.types)
        if (t.occurrences == occurrences) most = std::max(most, t.blockFingerprints.size());
    return most;
}

}  // namespace

class TestStableHloImport : public QObject {
    Q_OBJECT
private slots:
    void scanOverStackedLayers() {
        const ImportedModel m = test::must(importStableHloFile(kDir + "/scan_mlp.mlir"), "scan_mlp");
        const Graph& g = m.graph;
        QCOMPARE(m.format, std::string("stablehlo"));
        QCOMPARE(parameterElements(g), int64_t{128 * 64 + 16 * 64 + 2 * 64 * 256 + 2 * 256 * 64 + 2 * 64});
        std::map<OpKind, int> kinds;
        for (const Op& op : g.ops()) ++kinds[op.kind];
        // The scan's dynamic slices became static slices, and the stacks read one layer at a time
        // became one parameter per layer (3 stacks × 2 layers, the table, positions and ids).
        QCOMPARE(kinds[OpKind::CustomCall], 0);
        QCOMPARE(kinds[OpKind::Slice], 0);
        QCOMPARE(kinds[OpKind::Parameter], 9);
        QVERIFY(g.find("arg2[1]") != kNoOp);
        QCOMPARE(kinds[OpKind::Dot], 5);         // 2 per layer and the tied head
        QCOMPARE(kinds[OpKind::Gather], 1);
        bool unrolled = false, split = false;
        for (const ImportNote& n : m.notes) {
            unrolled |= n.code == "hlo.while_unrolled";
            split |= n.code == "hlo.stacked_parameters_split";
        }
        QVERIFY(unrolled);
        QVERIFY(split);
        // The argument's sharding is kept; #loc definitions give scopes.
        QCOMPARE(m.shardings.size(), size_t{1});
        QCOMPARE(m.shardings[0].sharding, std::string("{replicated}"));
        int fc1 = 0;
        for (const Op& op : g.ops()) fc1 += op.kind == OpKind::Dot && op.scope.find("mlp.fc1") != std::string::npos;
        QCOMPARE(fc1, 2);
        // The loader picks the importer by extension and by content.
        const LoadedModel loaded = test::must(loadModel(kDir + "/scan_mlp.mlir", BuildOptions{}), "load");
        QCOMPARE(loaded.kind, ModelSourceKind::StableHlo);
    }

    void trainingStepAnalyses() {
        ImportOptions opt;
        opt.training = TrainingMode::AppendTraining;
        const ImportedModel m = test::must(importStableHloFile(kDir + "/scan_mlp.mlir", opt), "scan_mlp --train");
        QVERIFY(m.trainingAppended);
        for (const char* meshText : {"8", "2x4"}) {
            const AnalysisReport r = test::must(analyzeGraph(m.graph, test::must(parseMesh(meshText), meshText)), "analysis");
            QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
            QVERIFY(r.blocks.unsupported.empty());
            QCOMPARE(r.blocks.blocks.size(), size_t{5});
            // The two layers' first projections are one repeated segment type.
            int repeated = 0;
            for (const SegmentType& t : r.cover.types) repeated += t.occurrences >= 2;
            QVERIFY(repeated >= 1);
        }
    }

    // A GPT training step exactly as JAX lowers it (tests/data/jax/generate.py: lax.scan over two
    // stacked layers, take_along_axis in the loss, an optax AdamW update): the scans unrolled, the
    // batched gather/scatter of take_along_axis and the stacking dynamic-update-slices written as IR
    // ops; every trainable weight counted once; the block check passes.
    void jaxGptScanAdamwStep() {
        const ImportedModel m =
            test::must(importStableHloFile(std::string(CFP_TEST_DATA_DIR) + "/jax/jax_gpt2_scan_adamw.mlir"), "jax gpt");
        const Graph& g = m.graph;
        int64_t trainable = 0;
        int optimizer = 0, batchedGathers = 0;
        for (const Op& op : g.ops()) {
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable) trainable += op.type.elements();
            optimizer += op.phase == Phase::Optimizer;
            batchedGathers += op.kind == OpKind::Gather && !op.attrs.gather.operandBatchingDims.empty();
            if (op.kind == OpKind::CustomCall) QVERIFY2(static_cast<bool>(shardingRuleFor(g, op)), op.attrs.target.c_str());
        }
        // 512×128 tokens, 64×128 positions, 2 layers × (12·128² + 13·128), final norm 2×128.
        QCOMPARE(trainable, int64_t{470528});
        QVERIFY(m.hadBackward);
        QVERIFY(optimizer > 0);
        QCOMPARE(batchedGathers, 1);
        for (const char* meshText : {"8", "2x4"}) {
            const AnalysisReport r = test::must(analyzeGraph(g, test::must(parseMesh(meshText), meshText)), "analysis");
            QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
            // The scanned layers are one repeated segment type of several blocks (their stacked
            // weights split per layer, their stacked residuals read from the ops that wrote them).
            QVERIFY(largestRepeatedType(r.cover, 2) >= 6);
        }
    }

    // The same step with 4 scanned layers: the file's layer stacks (leading dim 2) and the scans'
    // trip counts made 4, as generate.py with 4 layers writes it. The layers' forward and
    // backward are repeated segment types of several blocks each, on every mesh.
    void jaxGptScanFourLayers() {
        std::ifstream in(std::string(CFP_TEST_DATA_DIR) + "/jax/jax_gpt2_scan_adamw.mlir");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        QVERIFY(!text.empty());
        auto replaceAll = [&](const std::string& from, const std::string& to) {
            for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
        };
        replaceAll("tensor<2x", "tensor<4x");
        replaceAll("dense<2> : tensor<i32>", "dense<4> : tensor<i32>");
        const ImportedModel m = test::must(importStableHloText(text, "jax_gpt4_scan_adamw.mlir"), "jax gpt, 4 layers");
        int64_t trainable = 0;
        for (const Op& op : m.graph.ops())
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable) trainable += op.type.elements();
        QCOMPARE(trainable, int64_t{512 * 128 + 64 * 128 + 4 * (12 * 128 * 128 + 13 * 128) + 2 * 128});
        for (const char* meshText : {"8", "2x4"}) {
            const AnalysisReport r = test::must(analyzeGraph(m.graph, test::must(parseMesh(meshText), meshText)), "analysis");
            QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
            QVERIFY(largestRepeatedType(r.cover, 4) >= 6);
            QVERIFY(largestRepeatedType(r.cover, 3) >= 6);
        }
    }

    // broadcast_in_dim may stretch a size-1 dim (HLO's broadcast may not): the same values.
    void stretchingBroadcast() {
        const std::string mlir = R"(module @m {
  func.func public @main(%arg0: tensor<1x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
})";
        const ImportedModel m = test::must(importStableHloText(mlir, "stretch.mlir"), "stretch");
        Tensor x;
        x.type = TensorType{DType::F32, {1, 3}};
        x.values = {1, 2, 3};
        const auto values = test::must(evaluate(m.graph, {{"arg0", x}}), "evaluate");
        const Tensor& out = values[static_cast<size_t>(m.graph.outputs()[0])];
        QCOMPARE(out.values, (std::vector<double>{1, 2, 3, 1, 2, 3}));
    }

    // The same program in StableHLO and in HLO text gives the same graph.
    void sameGraphAsHlo() {
        const std::string mlir = R"(module @m {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>, %arg2: tensor<16xf32>) -> (tensor<f32>, tensor<16x4xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<4x16xf32>
    %3 = stablehlo.iota dim = 1 : tensor<4x16xi32>
    %c = stablehlo.constant dense<8> : tensor<4x16xi32>
    %4 = stablehlo.compare  LT, %3, %c,  SIGNED : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi1>
    %5 = stablehlo.select %4, %2, %0 : tensor<4x16xi1>, tensor<4x16xf32>
    %6 = stablehlo.slice %5 [0:4, 0:16:2] : (tensor<4x16xf32>) -> tensor<4x8xf32>
    %7 = stablehlo.concatenate %6, %6, dim = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
    %8 = stablehlo.transpose %7, dims = [1, 0] : (tensor<4x16xf32>) -> tensor<16x4xf32>
    %9 = stablehlo.convert %8 : (tensor<16x4xf32>) -> tensor<16x4xbf16>
    %10 = stablehlo.convert %9 : (tensor<16x4xbf16>) -> tensor<16x4xf32>
    %11 = stablehlo.reshape %10 : (tensor<16x4xf32>) -> tensor<64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.reduce(%11 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
    return %12, %10 : tensor<f32>, tensor<16x4xf32>
  }
}
)";
        const std::string hlo = R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  arg0 = f32[4,8] parameter(0)
  arg1 = f32[8,16] parameter(1)
  arg2 = f32[16] parameter(2)
  v0 = f32[4,16] dot(arg0, arg1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  v1 = f32[4,16] broadcast(arg2), dimensions={1}
  v2 = f32[4,16] add(v0, v1)
  v3 = s32[4,16] iota(), iota_dimension=1
  c.splat = s32[] constant(8)
  c = s32[4,16] broadcast(c.splat), dimensions={}
  v4 = pred[4,16] compare(v3, c), direction=LT
  v5 = f32[4,16] select(v4, v2, v0)
  v6 = f32[4,8] slice(v5), slice={[0:4:1], [0:16:2]}
  v7 = f32[4,16] concatenate(v6, v6), dimensions={1}
  v8 = f32[16,4] transpose(v7), dimensions={1,0}
  v9 = bf16[16,4] convert(v8)
  v10 = f32[16,4] convert(v9)
  v11 = f32[64] reshape(v10)
  cst = f32[] constant(0)
  v12 = f32[] reduce(v11, cst), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[], f32[16,4]) tuple(v12, v10)
}
)";
        const ImportedModel a = test::must(importStableHloText(mlir, "m.mlir"), "stablehlo");
        const ImportedModel b = test::must(importHloText(hlo, "m.hlo"), "hlo");
        QCOMPARE(a.graph.size(), b.graph.size());
        for (OpId i = 0; i < a.graph.size(); ++i) {
            const Op& x = a.graph.op(i);
            const Op& y = b.graph.op(i);
            QVERIFY2(x.kind == y.kind && x.type == y.type && x.operands == y.operands && x.attrs == y.attrs,
                     (x.name + " vs " + y.name).c_str());
        }
        QCOMPARE(a.graph.outputs(), b.graph.outputs());
    }

    void malformedModules_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("where");
        QTest::newRow("dynamic shape") << "func.func @main(%a: tensor<?x4xf32>) -> tensor<f32> {\n}" << "stablehlo.unsupported" << "1:";
        QTest::newRow("undefined value")
            << "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.add %a, %b : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}"
            << "stablehlo.syntax" << "2:";
        QTest::newRow("no return") << "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.negate %a : tensor<4xf32>\n}"
                                   << "stablehlo.syntax" << "m.mlir";
        QTest::newRow("no entry") << "func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}"
                                  << "stablehlo.no_entry" << "m.mlir";
        QTest::newRow("unterminated") << "module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n    return %a : tensor<4xf32>\n"
                                      << "stablehlo.syntax" << "4:";
        QTest::newRow("stray character") << "module @m { ~ }" << "stablehlo.syntax" << "1:13";
    }
    void malformedModules() {
        QFETCH(QString, text);
        QFETCH(QString, code);
        QFETCH(QString, where);
        auto r = importStableHloText(text.toStdString(), "m.mlir");
        QVERIFY(!r);
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QVERIFY2(QString::fromStdString(r.error().toString()).contains(where), r.error().toString().c_str());
    }

    // Inputs fuzz_stablehlo once crashed on (a result count too large for an int, a reduce with no
    // operands) are errors now.
    void fuzzFindingsAreErrors_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("result count") << "result_count.mlir.txt";
        QTest::newRow("reduce without init") << "reduce_without_init.mlir.txt";
    }
    void fuzzFindingsAreErrors() {
        QFETCH(QString, file);
        auto r = importStableHloFile(kDir + "/fuzz/" + file.toStdString());
        QVERIFY(!r);
        QVERIFY2(r.error().code.rfind("stablehlo.", 0) == 0, r.error().toString().c_str());
    }

    // Every prefix of a real module gives a result or an error, never a crash.
    void truncatedModulesNeverCrash() {
        QFile f(QString::fromStdString(kDir + "/scan_mlp.mlir"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const std::string text = f.readAll().toStdString();
        int errors = 0;
        for (size_t n = 0; n < text.size(); n += 13) {
            auto r = importStableHloText(std::string_view(text).substr(0, n), "cut.mlir");
            if (!r) {
                ++errors;
                const std::string c = r.error().code;
                QVERIFY2(c.rfind("stablehlo.", 0) == 0 || c.rfind("hlo.", 0) == 0 || c.rfind("import.", 0) == 0, c.c_str());
            }
        }
        QVERIFY(errors > 100);
    }
};

QTEST_GUILESS_MAIN(TestStableHloImport)
#include "tst_stablehlo_import.moc"
