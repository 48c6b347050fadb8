// The XLA HLO text importer: hand-written modules covering the grammar import with the expected ops,
// shapes, scopes and shardings; built-in models written as HLO and read back are the same graph
// (kinds, shapes, attributes, scopes, and the phases and roles the importer infers); an HLO training
// step of a 2-layer GPT analyses with the block checker passing and one repeated layer type; and
// malformed modules give located errors with stable codes.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/analysis.h"
#include "import/hlo_import.h"
#include "import/hlo_parser.h"
#include "import/hlo_writer.h"
#include "interp/interpreter.h"
#include "rules/op_rules.h"
#include "ir/graph_builder.h"
#include "loader/model_loader.h"
#include "models/models.h"
#include "sharding/mesh.h"

#include "must.h"

using namespace cfp;

Q_DECLARE_METATYPE(std::string)

namespace {

const std::string kDataDir = std::string(CFP_TEST_DATA_DIR) + "/hlo";

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

const Op& opNamed(const Graph& g, const std::string& name) {
    const OpId id = g.find(name);
    if (id == kNoOp) qFatal("no op named %s", name.c_str());
    return g.op(id);
}

int countKind(const Graph& g, OpKind k) {
    return static_cast<int>(std::count_if(g.ops().begin(), g.ops().end(), [&](const Op& op) { return op.kind == k; }));
}

ModelConfig tinyGpt(int64_t layers) {
    ModelConfig c = test::must(presetConfig("gpt3-125m"), "preset");
    c.name = "tiny-gpt";
    c.numLayers = layers;
    c.hiddenSize = 64;
    c.numHeads = 4;
    c.numKvHeads = 4;
    c.ffnSize = 256;
    c.vocabSize = 128;
    c.maxPositions = 32;
    return c;
}

}  // namespace

class TestHloImport : public QObject {
    Q_OBJECT

private slots:
    void jaxStyleModule();
    void modernSyntax();
    void grammarCoverage();
    void trainAppendsBackward();
    void scopesFromOpNames_data();
    void scopesFromOpNames();
    void roundTripBuiltinModels_data();
    void roundTripBuiltinModels();
    void gptTrainingStepAnalyses();
    void batchNormLoweringsCompute();
    void frameworkLoweringsHaveRules();
    void fusedAttentionCompute_data();
    void fusedAttentionCompute();
    void batchedGatherScatterCompute();
    void constantDynamicUpdateSlice();
    void scanStacksResolveToRows_data();
    void scanStacksResolveToRows();
    void optimizedDumpSections();
    void jaxDumpsImport();
    void torchXlaStyleStepAnalyses();
    void loaderSniffsHlo();
    void malformedModules_data();
    void malformedModules();
    void truncatedModulesNeverCrash();
    void exponentialCallTreeIsBounded();
};

void TestHloImport::jaxStyleModule() {
    const ImportedModel m = test::must(importHloFile(kDataDir + "/jax_mlp.hlo"), "jax_mlp");
    const Graph& g = m.graph;
    QVERIFY(g.validate().ok());
    QCOMPARE(g.size(), int64_t{14});  // 4 parameters + 10 ops; reduce init constants are not ops
    QCOMPARE(opNamed(g, "dot.5").type.toString(), std::string("f32[4,16]"));
    QCOMPARE(opNamed(g, "dot.5").attrs.dot.lhsContracting, std::vector<int64_t>{1});
    QCOMPARE(opNamed(g, "dot.5").scope, std::string("MLP.fc"));
    QCOMPARE(opNamed(g, "tanh.8").scope, std::string("MLP"));
    QCOMPARE(opNamed(g, "Arg_1.2").scope, std::string("params.fc.w"));
    QCOMPARE(opNamed(g, "reduce.10").attrs.reduceKind, ReduceKind::Max);
    QCOMPARE(opNamed(g, "reduce.10").type.toString(), std::string("f32[4]"));
    QCOMPARE(opNamed(g, "reduce.14").attrs.reduceKind, ReduceKind::Add);
    QCOMPARE(opNamed(g, "Arg_3.4").role, ParamRole::Input);
    QCOMPARE(opNamed(g, "Arg_1.2").role, ParamRole::Trainable);
    QCOMPARE(g.outputs().size(), size_t{1});
    QCOMPARE(g.op(g.outputs()[0]).name, std::string("multiply.16"));
    QCOMPARE(m.loss, g.outputs()[0]);
    QVERIFY(!m.hadBackward);
    for (const Op& op : g.ops()) QCOMPARE(op.phase, Phase::Forward);
    QCOMPARE(m.shardings.size(), size_t{2});
    QCOMPARE(m.shardings[0].op, std::string("Arg_0.1"));
    QCOMPARE(m.shardings[0].sharding, std::string("{devices=[2,1]0,1}"));
    QCOMPARE(m.shardings[1].sharding, std::string("{replicated}"));
}

void TestHloImport::modernSyntax() {
    const ImportedModel m = test::must(importHloFile(kDataDir + "/modern_syntax.hlo"), "modern");
    const Graph& g = m.graph;
    QVERIFY(g.validate().ok());
    // Tuple parameter → one parameter per element; call and fusion inlined under their names.
    QCOMPARE(opNamed(g, "p1.0").type.toString(), std::string("f32[3]"));
    QCOMPARE(opNamed(g, "p1.1").type.toString(), std::string("s32[]"));
    QCOMPARE(opNamed(g, "call.1/e").kind, OpKind::Exponential);
    const Op& mul = opNamed(g, "fusion.1/multiply.1");
    QCOMPARE(mul.kind, OpKind::Multiply);
    QCOMPARE(mul.scope, std::string("model.scale"));  // PyTorch/XLA Type[attribute] path
    QCOMPARE(g.op(mul.operands[0]).name, std::string("p0"));
    QCOMPARE(g.op(mul.operands[1]).kind, OpKind::Broadcast);
    QCOMPARE(g.outputs().size(), size_t{2});
    QCOMPARE(g.op(g.outputs()[0]).name, std::string("fusion.1/multiply.1"));
    QCOMPARE(g.op(g.outputs()[1]).name, std::string("call.1/e"));
    QCOMPARE(m.shardings.size(), size_t{1});
    QCOMPARE(m.shardings[0].op, std::string("p1.0"));
}

void TestHloImport::grammarCoverage() {
    const ImportedModel m = test::must(importHloFile(kDataDir + "/grammar.hlo"), "grammar");
    const Graph& g = m.graph;
    QVERIFY(g.validate().ok());
    // while: unrolled three times, one dot per iteration, chained, scoped per iteration.
    QCOMPARE(countKind(g, OpKind::Dot), 4);  // 3 loop dots + the mixed-precision dot
    const Op& d0 = opNamed(g, "loop.0/y");
    const Op& d2 = opNamed(g, "loop.2/y");
    QCOMPARE(d0.scope, std::string("while.body.layer.0"));
    QCOMPARE(d2.scope, std::string("while.body.layer.2"));
    QCOMPARE(g.op(d2.operands[0]).name, std::string("loop.1/y"));
    QCOMPARE(g.op(d0.operands[0]).name, std::string("x"));
    // gather / scatter-add keep their dimension numbers; scatter with a replacing combiner and sort
    // have no IR op and stay opaque.
    QCOMPARE(opNamed(g, "gather").attrs.gather.sliceSizes, (std::vector<int64_t>{1, 4}));
    QCOMPARE(opNamed(g, "scatter").kind, OpKind::Scatter);
    QCOMPARE(opNamed(g, "scatter.set").kind, OpKind::CustomCall);
    QCOMPARE(opNamed(g, "scatter.set").attrs.target, std::string("hlo.scatter"));
    QCOMPARE(opNamed(g, "sorted.0").attrs.target, std::string("hlo.sort"));
    QCOMPARE(opNamed(g, "sorted.1").type.toString(), std::string("s32[4,4]"));
    // map inlined elementwise: multiply by a broadcast constant, then tanh.
    const Op& t = opNamed(g, "mapped/t");
    QCOMPARE(t.kind, OpKind::Tanh);
    QCOMPARE(t.type.toString(), std::string("f32[4,4]"));
    QCOMPARE(opNamed(g, "slice").attrs.slice.stride, (std::vector<int64_t>{2, 1}));
    QCOMPARE(opNamed(g, "tr").attrs.dimensions, (std::vector<int64_t>{1, 0}));
    // clamp → minimum then maximum; pad → concatenates; bf16 dot to f32 → dot + convert.
    QCOMPARE(opNamed(g, "clamped").kind, OpKind::Maximum);
    QCOMPARE(opNamed(g, "clamped.upper").kind, OpKind::Minimum);
    QCOMPARE(opNamed(g, "padded").type.toString(), std::string("f32[20]"));
    QCOMPARE(opNamed(g, "padded").kind, OpKind::Concatenate);
    QCOMPARE(opNamed(g, "wide.dot").type.toString(), std::string("bf16[2,8]"));
    QCOMPARE(opNamed(g, "wide").kind, OpKind::Convert);
    QCOMPARE(opNamed(g, "wide").type.toString(), std::string("f32[2,8]"));
    QCOMPARE(opNamed(g, "cc").attrs.target, std::string("my_kernel"));
    QCOMPARE(opNamed(g, "pid").type.toString(), std::string("s32[]"));  // u32 read as s32
    // Reduce with init 5: reduce then add the init.
    QCOMPARE(opNamed(g, "sum.reduce").kind, OpKind::Reduce);
    QCOMPARE(opNamed(g, "sum").kind, OpKind::Add);
    QCOMPARE(opNamed(g, "l1p").kind, OpKind::Log);
    QCOMPARE(opNamed(g, "arr").attrs.literal, (std::vector<double>{1, 2, 3, 4}));
    QVERIFY(g.find("unused") == kNoOp);  // unused constants do not become ops
    QCOMPARE(g.outputs().size(), size_t{10});
    QCOMPARE(m.shardings.size(), size_t{1});
    QCOMPARE(m.shardings[0].op, std::string("w"));
    // Notes: the loop, and the opaque opcodes.
    std::set<std::string> codes;
    for (const ImportNote& n : m.notes) codes.insert(n.code);
    QVERIFY(codes.count("hlo.while_unrolled"));
    QVERIFY(codes.count("hlo.opaque_op"));
}

void TestHloImport::trainAppendsBackward() {
    ImportOptions opt;
    opt.training = TrainingMode::AppendTraining;
    const ImportedModel m = test::must(importHloFile(kDataDir + "/jax_mlp.hlo", opt), "jax_mlp --train");
    QVERIFY(m.trainingAppended);
    QVERIFY(m.graph.validate().ok());
    int backward = 0, optimizer = 0;
    for (const Op& op : m.graph.ops()) {
        backward += op.phase == Phase::Backward;
        optimizer += op.phase == Phase::Optimizer;
    }
    QVERIFY(backward > 5);
    QVERIFY(optimizer > 10);
    // The weight and bias gain Adam state; labels do not.
    QVERIFY(m.graph.find("Arg_1.2.adam_m") != kNoOp);
    QVERIFY(m.graph.find("Arg_2.3.adam_v") != kNoOp);
    QVERIFY(m.graph.find("Arg_3.4.adam_m") == kNoOp);

    // --train on a module without a scalar output is an error.
    const std::string noLoss = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
    auto r = importHloText(noLoss, "noloss.hlo", opt);
    QVERIFY(!r);
    QCOMPARE(r.error().code, std::string("import.no_loss"));
}

void TestHloImport::scopesFromOpNames_data() {
    QTest::addColumn<std::string>("opName");
    QTest::addColumn<std::string>("scope");
    QTest::newRow("jax") << std::string("jit(step)/jit(main)/transpose(jvp(GPT))/layers_0/attn/dot_general[dimension_numbers=(([1], [0]), ([], []))]")
                         << std::string("GPT.layers_0.attn");
    QTest::newRow("primitive only") << std::string("jit(f)/jit(main)/add") << std::string("");
    QTest::newRow("param path") << std::string("params['layers_0']['w']") << std::string("params.layers_0.w");
    QTest::newRow("pytorch") << std::string("Model[model]/Linear[fc1]/aten__addmm") << std::string("model.fc1");
    QTest::newRow("plain") << std::string("layers/3/mlp/fc1/dot") << std::string("layers.3.mlp.fc1");
    QTest::newRow("slash in brackets") << std::string("a/b[x=1/2]/c") << std::string("a.b");
    QTest::newRow("empty") << std::string("") << std::string("");
}

void TestHloImport::scopesFromOpNames() {
    QFETCH(std::string, opName);
    QFETCH(std::string, scope);
    QCOMPARE(scopeFromOpName(opName), scope);
}

void TestHloImport::roundTripBuiltinModels_data() {
    QTest::addColumn<std::string>("preset");
    QTest::addColumn<QString>("dtype");
    QTest::newRow("gpt fp32") << std::string("gpt") << QString("f32");
    QTest::newRow("gpt bf16") << std::string("gpt") << QString("bf16");
    QTest::newRow("llama bf16") << std::string("llama") << QString("bf16");
    QTest::newRow("mixtral f32") << std::string("moe") << QString("f32");
}

void TestHloImport::roundTripBuiltinModels() {
    QFETCH(std::string, preset);
    QFETCH(QString, dtype);
    ModelConfig c = tinyGpt(2);
    if (preset != "gpt") {
        c = test::must(presetConfig(preset == "llama" ? "llama2-7b" : "mixtral-8x7b"), "preset");
        c.numLayers = 2;
        c.hiddenSize = 64;
        c.numHeads = 4;
        c.numKvHeads = 2;
        c.ffnSize = 128;
        c.vocabSize = 96;
        c.maxPositions = 64;
        if (c.numExperts > 0) c.numExperts = 4;
    }
    BuildOptions opt;
    opt.batch = 2;
    opt.seq = 16;
    opt.dtype = dtype == "bf16" ? DType::BF16 : DType::F32;
    const BuiltModel built = test::must(buildTrainingStep(c, opt), "build");
    const Graph& src = built.graph;
    const std::string text = writeHloText(src);
    const ImportedModel m = test::must(importHloText(text, "roundtrip.hlo"), "import");
    const Graph& g = m.graph;
    QCOMPARE(g.size(), src.size());
    QVERIFY(m.hadBackward);
    int phaseMismatches = 0;
    std::string firstMismatch;
    for (OpId i = 0; i < src.size(); ++i) {
        const Op& a = src.op(i);
        const Op& b = g.op(i);
        QVERIFY2(b.name == a.name, (a.name + " read as " + b.name).c_str());
        QCOMPARE(b.kind, a.kind);
        QCOMPARE(b.type, a.type);
        QCOMPARE(b.operands, a.operands);
        QVERIFY2(b.attrs == a.attrs, a.name.c_str());
        QCOMPARE(b.scope, a.scope);
        QCOMPARE(b.role, a.role);
        if (b.phase != a.phase) {
            if (phaseMismatches++ < 40)
                firstMismatch += a.name + "(" + std::string(opKindName(a.kind)) + ") " + std::string(phaseName(a.phase)) + " read as " + std::string(phaseName(b.phase)) + "; ";
        }
    }
    QVERIFY2(phaseMismatches == 0, firstMismatch.c_str());
    QCOMPARE(g.outputs(), src.outputs());
}

void TestHloImport::gptTrainingStepAnalyses() {
    // tests/data/hlo/gpt2_train.hlo: a 2-layer GPT training step (forward, loss, backward, AdamW)
    // with no phase or provenance information: phases are inferred and backward dots paired by
    // structure.
    const ImportedModel m = test::must(importHloFile(kDataDir + "/gpt2_train.hlo"), "gpt2_train");
    QVERIFY(m.hadBackward);
    const Mesh mesh = test::must(parseMesh("8"), "mesh");
    const AnalysisReport r = test::must(analyzeGraph(m.graph, mesh), "analysis");
    QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
    QVERIFY(r.blocks.unsupported.empty());
    QCOMPARE(r.coverage, 1.0);
    // The two layers are one segment type of 4 blocks (QKV + attention, output projection, fc1,
    // fc2) that occurs twice; every other type occurs at most twice and has one block.
    int layerTypes = 0;
    for (const SegmentType& t : r.cover.types) {
        if (t.blockFingerprints.size() == 4 && t.occurrences == 2) ++layerTypes;
        else QCOMPARE(t.blockFingerprints.size(), size_t{1});
    }
    QCOMPARE(layerTypes, 1);
    QCOMPARE(static_cast<int>(r.blocks.blocks.size()), 13);
}

void TestHloImport::batchNormLoweringsCompute() {
    // batch-norm-training / -inference / -grad written out in primitives compute what XLA's
    // definitions say: statistics per feature over every other dim; the gradient checked against
    // central differences of Σ dy·training(x).
    const std::string text = R"(HloModule bn
ENTRY main {
  x = f32[2,3,4] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  dy = f32[2,3,4] parameter(3)
  bn = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  out = f32[2,3,4] get-tuple-element(bn), index=0
  mean = f32[3] get-tuple-element(bn), index=1
  var = f32[3] get-tuple-element(bn), index=2
  inf = f32[2,3,4] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
  g = (f32[2,3,4], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1
  gx = f32[2,3,4] get-tuple-element(g), index=0
  gs = f32[3] get-tuple-element(g), index=1
  go = f32[3] get-tuple-element(g), index=2
  ROOT t = (f32[2,3,4], f32[3], f32[3], f32[2,3,4], f32[2,3,4], f32[3], f32[3]) tuple(out, mean, var, inf, gx, gs, go)
}
)";
    const ImportedModel m = test::must(importHloText(text, "bn.hlo"), "bn");
    for (const Op& op : m.graph.ops()) QVERIFY2(op.kind != OpKind::CustomCall, op.name.c_str());
    auto tensor = [](std::vector<int64_t> dims, double seed) {
        Tensor t;
        t.type = TensorType{DType::F32, std::move(dims)};
        for (int64_t i = 0; i < t.type.elements(); ++i) t.values.push_back(std::sin(seed * static_cast<double>(i + 1)) * 2.0);
        return t;
    };
    std::map<std::string, Tensor> in{{"x", tensor({2, 3, 4}, 0.7)},
                                     {"scale", tensor({3}, 1.3)},
                                     {"offset", tensor({3}, 0.4)},
                                     {"dy", tensor({2, 3, 4}, 2.1)}};
    auto run = [&](const std::map<std::string, Tensor>& p) {
        auto values = test::must(evaluate(m.graph, p), "evaluate");
        std::vector<Tensor> outs;
        for (OpId o : m.graph.outputs()) outs.push_back(values[static_cast<size_t>(o)]);
        return outs;
    };
    const std::vector<Tensor> o = run(in);
    QCOMPARE(o.size(), size_t{7});
    const double eps = 0.001;
    const Tensor& x = in["x"];
    for (int64_t c = 0; c < 3; ++c) {
        double mean = 0, var = 0;
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 4; ++b) mean += x.at({a, c, b}) / 8.0;
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 4; ++b) var += (x.at({a, c, b}) - mean) * (x.at({a, c, b}) - mean) / 8.0;
        QVERIFY(std::abs(o[1].values[static_cast<size_t>(c)] - mean) < 1e-9);
        QVERIFY(std::abs(o[2].values[static_cast<size_t>(c)] - var) < 1e-9);
        for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 4; ++b) {
                const double want = (x.at({a, c, b}) - mean) / std::sqrt(var + eps) * in["scale"].values[static_cast<size_t>(c)] +
                                    in["offset"].values[static_cast<size_t>(c)];
                QVERIFY(std::abs(o[0].at({a, c, b}) - want) < 1e-9);
                QVERIFY(std::abs(o[3].at({a, c, b}) - want) < 1e-9);  // inference with the batch statistics
            }
    }
    // Gradients: d/dx Σ dy·out by central differences; d/dscale and d/doffset likewise.
    auto objective = [&](const std::map<std::string, Tensor>& p) {
        const Tensor out = run(p)[0];
        double s = 0;
        for (size_t i = 0; i < out.values.size(); ++i) s += out.values[i] * in["dy"].values[i];
        return s;
    };
    auto check = [&](const std::string& name, const Tensor& grad) {
        for (size_t i = 0; i < grad.values.size(); ++i) {
            auto plus = in, minus = in;
            plus[name].values[i] += 1e-5;
            minus[name].values[i] -= 1e-5;
            const double numeric = (objective(plus) - objective(minus)) / 2e-5;
            QVERIFY2(std::abs(numeric - grad.values[i]) < 1e-5 * std::max(1.0, std::abs(numeric)),
                     (name + "[" + std::to_string(i) + "] " + std::to_string(numeric) + " vs " + std::to_string(grad.values[i])).c_str());
        }
    };
    check("x", o[4]);
    check("scale", o[5]);
    check("offset", o[6]);
}

namespace {

Tensor wave(std::vector<int64_t> dims, double seed) {
    Tensor t;
    t.type = TensorType{DType::F32, std::move(dims)};
    for (int64_t i = 0; i < t.type.elements(); ++i) t.values.push_back(std::sin(seed * static_cast<double>(i + 1)));
    return t;
}

std::vector<Tensor> outputsOf(const Graph& g, const std::map<std::string, Tensor>& p) {
    auto values = test::must(evaluate(g, p), "evaluate");
    std::vector<Tensor> outs;
    for (OpId o : g.outputs()) outs.push_back(values[static_cast<size_t>(o)]);
    return outs;
}

}  // namespace

void TestHloImport::fusedAttentionCompute_data() {
    QTest::addColumn<QString>("mask");
    QTest::newRow("causal") << QStringLiteral("CAUSAL");
    QTest::newRow("no mask") << QStringLiteral("NO_MASK");
}

void TestHloImport::fusedAttentionCompute() {
    // cuDNN's fused attention as XLA's GPU backend emits it (q, k, v as [batch, seq, heads, dim];
    // the dot dimension numbers of its backend config) computes softmax(scale·q·kᵀ)·v with the
    // log-sum-exp statistics; its backward gives the gradients of Σ dy·out, checked against
    // central differences.
    QFETCH(QString, mask);
    const std::string dims1 = R"("bmm1_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["3"], "lhs_batch_dimensions": ["0", "2"], "rhs_batch_dimensions": ["0", "2"]}, "bmm2_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["1"], "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "2"]})";
    const std::string dims2 = R"("bmm1_grad_gemm1_dot_dimension_numbers": {"lhs_contracting_dimensions": ["2"], "rhs_contracting_dimensions": ["1"], "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "2"]}, "bmm1_grad_gemm2_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["1"], "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "2"]}, "bmm2_grad_gemm1_dot_dimension_numbers": {"lhs_contracting_dimensions": ["2"], "rhs_contracting_dimensions": ["1"], "lhs_batch_dimensions": ["0", "1"], "rhs_batch_dimensions": ["0", "2"]}, "bmm2_grad_gemm2_dot_dimension_numbers": {"lhs_contracting_dimensions": ["3"], "rhs_contracting_dimensions": ["3"], "lhs_batch_dimensions": ["0", "2"], "rhs_batch_dimensions": ["0", "2"]})";
    const std::string common = R"("fmha_scale": 0.5, "mask_type": ")" + mask.toStdString() + R"(", "dropout_rate": 0.0, "is_flash_attention": true)";
    const std::string text = "HloModule fmha\nENTRY main {\n"
                             "  q = f32[2,3,2,4] parameter(0)\n  k = f32[2,3,2,4] parameter(1)\n"
                             "  v = f32[2,3,2,4] parameter(2)\n  dy = f32[2,3,2,4] parameter(3)\n"
                             "  fwd = (f32[2,2,3,4], f32[2,2,3], u8[0]) custom-call(q, k, v), custom_call_target=\"__cudnn$fmhaSoftmax\", "
                             "backend_config={\"cudnn_fmha_backend_config\": {" + common + ", " + dims1 + "}}\n"
                             "  out = f32[2,2,3,4] get-tuple-element(fwd), index=0\n"
                             "  stats = f32[2,2,3] get-tuple-element(fwd), index=1\n"
                             "  outT = f32[2,3,2,4] transpose(out), dimensions={0,2,1,3}\n"
                             "  bwd = (f32[2,2,3,4], f32[2,2,3,4], f32[2,2,3,4], u8[0]) custom-call(q, k, v, stats, dy, outT), "
                             "custom_call_target=\"__cudnn$fmhaSoftmaxBackward\", backend_config={\"cudnn_fmha_backend_config\": {" +
                             common + ", " + dims2 + "}}\n"
                             "  dq = f32[2,2,3,4] get-tuple-element(bwd), index=0\n"
                             "  dk = f32[2,2,3,4] get-tuple-element(bwd), index=1\n"
                             "  dv = f32[2,2,3,4] get-tuple-element(bwd), index=2\n"
                             "  ROOT t = (f32[2,2,3,4], f32[2,2,3], f32[2,2,3,4], f32[2,2,3,4], f32[2,2,3,4]) tuple(out, stats, dq, dk, dv)\n}\n";
    const ImportedModel m = test::must(importHloText(text, "fmha.hlo"), "fmha");
    for (const Op& op : m.graph.ops()) QVERIFY2(op.kind != OpKind::CustomCall, op.name.c_str());
    QVERIFY(std::any_of(m.notes.begin(), m.notes.end(), [](const ImportNote& n) { return n.code == "hlo.fused_attention"; }));
    std::map<std::string, Tensor> in{{"q", wave({2, 3, 2, 4}, 0.7)}, {"k", wave({2, 3, 2, 4}, 1.1)},
                                     {"v", wave({2, 3, 2, 4}, 1.9)}, {"dy", wave({2, 3, 2, 4}, 2.3)}};
    const bool causal = mask == QStringLiteral("CAUSAL");
    // Reference, straight from the definition.
    auto attention = [&](const std::map<std::string, Tensor>& p, Tensor* lse) {
        Tensor out;
        out.type = TensorType{DType::F32, {2, 2, 3, 4}};
        out.values.assign(48, 0.0);
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t n = 0; n < 2; ++n)
                for (int64_t i = 0; i < 3; ++i) {
                    std::vector<double> s;
                    for (int64_t j = 0; j < 3; ++j) {
                        double dotqk = 0;
                        for (int64_t h = 0; h < 4; ++h) dotqk += p.at("q").at({b, i, n, h}) * p.at("k").at({b, j, n, h});
                        s.push_back(causal && j > i ? -1e30 : 0.5 * dotqk);
                    }
                    const double mx = *std::max_element(s.begin(), s.end());
                    double l = 0;
                    for (double x : s) l += std::exp(x - mx);
                    if (lse) lse->values.push_back(mx + std::log(l));
                    for (int64_t h = 0; h < 4; ++h) {
                        double acc = 0;
                        for (int64_t j = 0; j < 3; ++j) acc += std::exp(s[static_cast<size_t>(j)] - mx) / l * p.at("v").at({b, j, n, h});
                        out.values[static_cast<size_t>(((b * 2 + n) * 3 + i) * 4 + h)] = acc;
                    }
                }
        return out;
    };
    const std::vector<Tensor> o = outputsOf(m.graph, in);
    QCOMPARE(o.size(), size_t{5});
    Tensor lse;
    const Tensor want = attention(in, &lse);
    for (size_t i = 0; i < want.values.size(); ++i) QVERIFY(std::abs(o[0].values[i] - want.values[i]) < 1e-9);
    for (size_t i = 0; i < lse.values.size(); ++i) QVERIFY(std::abs(o[1].values[i] - lse.values[i]) < 1e-9);
    // Gradients of Σ dy[b,s,n,h]·out[b,n,s,h], laid out [b, n, s, h] as the call returns them.
    auto objective = [&](const std::map<std::string, Tensor>& p) {
        const Tensor out = attention(p, nullptr);
        double s = 0;
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t n = 0; n < 2; ++n)
                for (int64_t i = 0; i < 3; ++i)
                    for (int64_t h = 0; h < 4; ++h) s += p.at("dy").at({b, i, n, h}) * out.at({b, n, i, h});
        return s;
    };
    auto check = [&](const std::string& name, const Tensor& grad) {
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t s = 0; s < 3; ++s)
                for (int64_t n = 0; n < 2; ++n)
                    for (int64_t h = 0; h < 4; ++h) {
                        const auto flat = static_cast<size_t>(((b * 3 + s) * 2 + n) * 4 + h);
                        auto plus = in, minus = in;
                        plus[name].values[flat] += 1e-6;
                        minus[name].values[flat] -= 1e-6;
                        const double numeric = (objective(plus) - objective(minus)) / 2e-6;
                        const double got = grad.at({b, n, s, h});
                        QVERIFY2(std::abs(numeric - got) < 1e-6 * std::max(1.0, std::abs(numeric)),
                                 (name + " " + std::to_string(numeric) + " vs " + std::to_string(got)).c_str());
                    }
    };
    check("q", o[2]);
    check("k", o[3]);
    check("v", o[4]);
}

void TestHloImport::batchedGatherScatterCompute() {
    // take_along_axis as JAX lowers it: a gather and a scatter-add with batching dims read each
    // row at its own index; the batch dim of table, indices and result share one sharding factor.
    const std::string text = R"(HloModule take
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,3,4] parameter(0)
  idx = s32[2,3,1] parameter(1)
  u = f32[2,3] parameter(2)
  g = f32[2,3] gather(x, idx), offset_dims={}, collapsed_slice_dims={2}, start_index_map={2}, operand_batching_dims={0,1}, start_indices_batching_dims={0,1}, index_vector_dim=2, slice_sizes={1,1,1}
  z = f32[] constant(0)
  zeros = f32[2,3,4] broadcast(z), dimensions={}
  s = f32[2,3,4] scatter(zeros, idx, u), update_window_dims={}, inserted_window_dims={2}, scatter_dims_to_operand_dims={2}, input_batching_dims={0,1}, scatter_indices_batching_dims={0,1}, index_vector_dim=2, to_apply=add
  ROOT t = (f32[2,3], f32[2,3,4]) tuple(g, s)
}
)";
    const ImportedModel m = test::must(importHloText(text, "take.hlo"), "take");
    for (const Op& op : m.graph.ops()) QVERIFY2(op.kind != OpKind::CustomCall, op.name.c_str());
    Tensor idx;
    idx.type = TensorType{DType::S32, {2, 3, 1}};
    idx.values = {3, 0, 2, 1, 1, 3};
    const std::map<std::string, Tensor> in{{"x", wave({2, 3, 4}, 0.9)}, {"idx", idx}, {"u", wave({2, 3}, 1.7)}};
    const std::vector<Tensor> o = outputsOf(m.graph, in);
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t s = 0; s < 3; ++s) {
            const auto at = static_cast<int64_t>(idx.values[static_cast<size_t>(b * 3 + s)]);
            QCOMPARE(o[0].at({b, s}), in.at("x").at({b, s, at}));
            for (int64_t c = 0; c < 4; ++c) QCOMPARE(o[1].at({b, s, c}), c == at ? in.at("u").at({b, s}) : 0.0);
        }
    for (const char* name : {"g", "s"}) {
        const Op& op = opNamed(m.graph, name);
        const OpShardingRule r = test::must(shardingRuleFor(m.graph, op), name);
        QCOMPARE(r.operandDims[0][0], r.operandDims[1][0]);  // table/base batch dim = indices batch dim
        QCOMPARE(r.operandDims[0][1], r.operandDims[1][1]);
        QCOMPARE(r.resultDims[0], r.operandDims[1][0]);
        QCOMPARE(r.factors[static_cast<size_t>(r.resultDims[0])].kind, FactorKind::PassThrough);
    }
    // The gradient of a batched gather is a batched scatter-add (autodiff keeps the batching dims).
    QCOMPARE(opNamed(m.graph, "s").attrs.scatter.inputBatchingDims, (std::vector<int64_t>{0, 1}));
}

void TestHloImport::constantDynamicUpdateSlice() {
    // An unrolled scan stacks per-layer results with dynamic-update-slice at constant rows: slices
    // and a concatenate, the same values.
    const std::string text = R"(HloModule dus
ENTRY main {
  x = f32[4,3,2] parameter(0)
  u = f32[1,3,1] parameter(1)
  r = s32[] constant(2)
  z = s32[] constant(0)
  o = s32[] constant(1)
  ROOT d = f32[4,3,2] dynamic-update-slice(x, u, r, z, o)
}
)";
    const ImportedModel m = test::must(importHloText(text, "dus.hlo"), "dus");
    for (const Op& op : m.graph.ops()) QVERIFY2(op.kind != OpKind::CustomCall, op.name.c_str());
    const std::map<std::string, Tensor> in{{"x", wave({4, 3, 2}, 0.3)}, {"u", wave({1, 3, 1}, 2.9)}};
    const Tensor out = outputsOf(m.graph, in)[0];
    for (int64_t a = 0; a < 4; ++a)
        for (int64_t b = 0; b < 3; ++b)
            for (int64_t c = 0; c < 2; ++c)
                QCOMPARE(out.at({a, b, c}), a == 2 && c == 1 ? in.at("u").at({0, b, 0}) : in.at("x").at({a, b, c}));
}

void TestHloImport::scanStacksResolveToRows_data() {
    QTest::addColumn<int>("rows");
    QTest::newRow("3 layers") << 3;
    QTest::newRow("300 steps") << 300;  // a long scan: each stack resolved in one pass, not row by row
}

void TestHloImport::scanStacksResolveToRows() {
    QFETCH(int, rows);
    const std::string L = std::to_string(rows), last = std::to_string(rows - 1);
    // lax.scan's pattern: a loop reads row i of stacked weights, stacks its per-iteration result at
    // row i, a second loop reads that stack in reverse; the weights are also used whole (an
    // optimizer). Unrolled, every iteration must look alike: the weights one parameter per row,
    // the stack's rows read from the ops that wrote them, no stack of stacks left.
    const std::string carry = "(s32[], f32[2,3], f32[" + L + ",2,3], f32[" + L + ",3])";
    const std::string back = "(s32[], f32[2,3], f32[" + L + ",2,3])";
    const std::string text = "HloModule scan\n"
                             "fc {\n  s = " + carry + " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                             "  n = s32[] constant(" + L + ")\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
                             "fb {\n  s = " + carry + " parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                             "  h = f32[2,3] get-tuple-element(s), index=1\n  st = f32[" + L + ",2,3] get-tuple-element(s), index=2\n"
                             "  w = f32[" + L + ",3] get-tuple-element(s), index=3\n  z = s32[] constant(0)\n"
                             "  wr = f32[1,3] dynamic-slice(w, i, z), dynamic_slice_sizes={1,3}\n  wv = f32[3] reshape(wr)\n"
                             "  wb = f32[2,3] broadcast(wv), dimensions={1}\n  m = f32[2,3] multiply(h, wb)\n  t = f32[2,3] tanh(m)\n"
                             "  tr = f32[1,2,3] reshape(t)\n  st2 = f32[" + L + ",2,3] dynamic-update-slice(st, tr, i, z, z)\n"
                             "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n  ROOT out = " + carry + " tuple(i2, t, st2, w)\n}\n"
                             "rc {\n  s = " + back + " parameter(0)\n  j = s32[] get-tuple-element(s), index=0\n"
                             "  n = s32[] constant(" + L + ")\n  ROOT lt = pred[] compare(j, n), direction=LT\n}\n"
                             "rb {\n  s = " + back + " parameter(0)\n  j = s32[] get-tuple-element(s), index=0\n"
                             "  a = f32[2,3] get-tuple-element(s), index=1\n  st = f32[" + L + ",2,3] get-tuple-element(s), index=2\n"
                             "  two = s32[] constant(" + last + ")\n  k = s32[] subtract(two, j)\n  z = s32[] constant(0)\n"
                             "  r = f32[1,2,3] dynamic-slice(st, k, z, z), dynamic_slice_sizes={1,2,3}\n  rv = f32[2,3] reshape(r)\n"
                             "  half = f32[] constant(0.5)\n  hb = f32[2,3] broadcast(half), dimensions={}\n  ah = f32[2,3] multiply(a, hb)\n"
                             "  a2 = f32[2,3] add(ah, rv)\n  one = s32[] constant(1)\n  j2 = s32[] add(j, one)\n"
                             "  ROOT out = " + back + " tuple(j2, a2, st)\n}\n"
                             "ENTRY main {\n  x = f32[2,3] parameter(0)\n  w = f32[" + L + ",3] parameter(1)\n  zero = s32[] constant(0)\n"
                             "  f0 = f32[] constant(0)\n  st0 = f32[" + L + ",2,3] broadcast(f0), dimensions={}\n"
                             "  init = " + carry + " tuple(zero, x, st0, w)\n  loop = " + carry + " while(init), condition=fc, body=fb\n"
                             "  h = f32[2,3] get-tuple-element(loop), index=1\n  st = f32[" + L + ",2,3] get-tuple-element(loop), index=2\n"
                             "  a0 = f32[2,3] broadcast(f0), dimensions={}\n  binit = " + back + " tuple(zero, a0, st)\n"
                             "  bl = " + back + " while(binit), condition=rc, body=rb\n  acc = f32[2,3] get-tuple-element(bl), index=1\n"
                             "  w2 = f32[" + L + ",3] multiply(w, w)\n  ROOT o = (f32[2,3], f32[" + L + ",2,3], f32[2,3], f32[" + L + ",3]) tuple(h, st, acc, w2)\n}\n";
    const ImportedModel m = test::must(importHloText(text, "scan.hlo"), "scan");
    const Graph& g = m.graph;
    QVERIFY(g.validate().ok());
    bool resolved = false, split = false;
    for (const ImportNote& n : m.notes) {
        resolved |= n.code == "hlo.row_stacks";
        split |= n.code == "hlo.stacked_parameters_split";
    }
    QVERIFY(resolved);
    QVERIFY(split);
    // The weights: one parameter per row, and their concatenate (named as the stack) for the
    // whole use. The stack: one concatenate of the three rows; no slice of a concatenate.
    for (int r = 0; r < rows; ++r) QCOMPARE(opNamed(g, "w[" + std::to_string(r) + "]").kind, OpKind::Parameter);
    QCOMPARE(opNamed(g, "w").kind, OpKind::Concatenate);
    int concats = 0;
    for (const Op& op : g.ops()) {
        if (op.kind == OpKind::Concatenate) {
            ++concats;
            QCOMPARE(op.operands.size(), static_cast<size_t>(rows));
            for (OpId in : op.operands) QVERIFY2(g.op(in).kind != OpKind::Concatenate && g.op(in).kind != OpKind::Slice, op.name.c_str());
        }
        if (op.kind == OpKind::Slice) QVERIFY2(g.op(op.operands[0]).kind != OpKind::Concatenate, op.name.c_str());
    }
    QCOMPARE(concats, 2);
    // The same values as the loops compute.
    const Tensor x = wave({2, 3}, 0.7), w = wave({rows, 3}, 1.3);
    std::map<std::string, Tensor> in{{"x", x}};
    for (int64_t r = 0; r < rows; ++r) {
        Tensor row;
        row.type = TensorType{DType::F32, {1, 3}};
        for (int64_t c = 0; c < 3; ++c) row.values.push_back(w.at({r, c}));
        in["w[" + std::to_string(r) + "]"] = row;
    }
    const std::vector<Tensor> o = outputsOf(g, in);
    std::vector<double> h(x.values.begin(), x.values.end());
    std::vector<std::vector<double>> stack;
    for (int64_t i = 0; i < rows; ++i) {
        for (size_t e = 0; e < h.size(); ++e) h[e] = std::tanh(h[e] * w.at({i, static_cast<int64_t>(e % 3)}));
        stack.push_back(h);
    }
    std::vector<double> acc(6, 0.0);
    for (int64_t k = rows - 1; k >= 0; --k)
        for (size_t e = 0; e < acc.size(); ++e) acc[e] = acc[e] * 0.5 + stack[static_cast<size_t>(k)][e];
    for (size_t e = 0; e < 6; ++e) {
        QVERIFY(std::abs(o[0].values[e] - h[e]) < 1e-6);
        QVERIFY(std::abs(o[2].values[e] - acc[e]) < 1e-6);
        for (size_t r = 0; r < static_cast<size_t>(rows); ++r) QVERIFY(std::abs(o[1].values[r * 6 + e] - stack[r][e]) < 1e-6);
    }
    for (size_t e = 0; e < w.values.size(); ++e) QVERIFY(std::abs(o[3].values[e] - w.values[e] * w.values[e]) < 1e-6);
}

void TestHloImport::optimizedDumpSections() {
    // XLA's dumps may end with source-location tables, and hold u8/s8/f8 values.
    const std::string text = R"(HloModule m, is_scheduled=true

FileNames
1 "train.py"
2 "/usr/lib/python3/site-packages/optax/_src/update.py"

FunctionNames
1 "step"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=0 end_column=0}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

ENTRY main {
  p = f32[4] parameter(0)
  b = u8[4] parameter(1)
  f = f8e4m3fn[4] convert(p)
  ROOT n = f32[4] negate(p)
}
)";
    const ImportedModel m = test::must(importHloText(text, "opt.hlo"), "optimized dump");
    QCOMPARE(opNamed(m.graph, "b").type.toString(), std::string("u8[4]"));
    QCOMPARE(opNamed(m.graph, "b").type.bytes(), int64_t{4});
}

void TestHloImport::jaxDumpsImport() {
    // Training steps JAX lowered (tests/data/jax/generate.py): a 12-layer BERT with AdamW and a GPT
    // with cuDNN fused attention import with no opaque op, their parameter counts exact.
    const std::string dir = std::string(CFP_TEST_DATA_DIR) + "/jax";
    const ImportedModel bert = test::must(importHloFile(dir + "/jax_bert12_adamw.hlo"), "bert");
    const ImportedModel fmha = test::must(importHloFile(dir + "/jax_gpt_cudnn_attention.hlo"), "cudnn");
    auto trainable = [](const Graph& g) {
        int64_t n = 0;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable) n += op.type.elements();
        return n;
    };
    QCOMPARE(trainable(bert.graph), int64_t{109514298});  // BERT-base with an untied MLM bias
    QCOMPARE(trainable(fmha.graph), int64_t{1710592});
    for (const ImportedModel* m : {&bert, &fmha}) {
        QVERIFY(m->hadBackward);
        int optimizer = 0;
        for (const Op& op : m->graph.ops()) {
            optimizer += op.phase == Phase::Optimizer;
            if (op.kind == OpKind::CustomCall) QVERIFY2(static_cast<bool>(shardingRuleFor(m->graph, op)), op.attrs.target.c_str());
        }
        QVERIFY(optimizer > 0);
        const AnalysisReport r = test::must(analyzeGraph(m->graph, test::must(parseMesh("2x4"), "mesh")), "analysis");
        QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
    }
    QVERIFY(std::any_of(fmha.notes.begin(), fmha.notes.end(), [](const ImportNote& n) { return n.code == "hlo.fused_attention"; }));
}

void TestHloImport::frameworkLoweringsHaveRules() {
    // Lowerings frameworks emit import with sharding rules: dropout's bits (rng-bit-generator,
    // shift, or, bitcast-convert), sort, an argmax reduce, dynamic-slice and -update-slice, a
    // `Sharding` custom-call (its operand, annotated), a cuBLAS GEMM custom-call (a dot), and a
    // conditional on a constant (its branch). An unknown target stays opaque.
    const std::string text = R"(HloModule lowerings
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  ge = pred[] compare(a, b), direction=GE
  v = f32[] select(ge, a, b)
  i = s32[] select(ge, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
less {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT lt = pred[] compare(p0, p1), direction=LT
}
neg_branch {
  p = f32[8,16] parameter(0)
  ROOT n = f32[8,16] negate(p)
}
exp_branch {
  p = f32[8,16] parameter(0)
  ROOT e = f32[8,16] exponential(p)
}
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  state = u64[2] parameter(2)
  rng = (u64[2], u32[8,16]) rng-bit-generator(state), algorithm=rng_default
  bits = u32[8,16] get-tuple-element(rng), index=1
  nine = u32[] constant(9)
  nines = u32[8,16] broadcast(nine), dimensions={}
  shifted = u32[8,16] shift-right-logical(bits, nines)
  asfloat = f32[8,16] bitcast-convert(shifted)
  sorted = f32[8,16] sort(x), dimensions={1}, to_apply=less
  iota = s32[8,16] iota(), iota_dimension=1
  init = f32[] constant(-inf)
  zero = s32[] constant(0)
  am = (f32[8], s32[8]) reduce(x, iota, init, zero), dimensions={1}, to_apply=argmax
  i0 = s32[] constant(0)
  at = s32[] parameter(3)
  ds = f32[8,4] dynamic-slice(x, i0, at), dynamic_slice_sizes={8,4}
  fixed = f32[8,4] dynamic-slice(x, i0, i0), dynamic_slice_sizes={8,4}
  dus = f32[8,16] dynamic-update-slice(x, ds, i0, at)
  annotated = f32[8,16] custom-call(dus), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
  gemm = (f32[8,32], s8[1024]) custom-call(annotated, w), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
  out = f32[8,32] get-tuple-element(gemm), index=0
  one = s32[] constant(1)
  cond = f32[8,16] conditional(one, asfloat, sorted), branch_computations={neg_branch, exp_branch}
  mystery = f32[8,16] custom-call(cond), custom_call_target="my_kernel"
  ROOT t = (f32[8,32], f32[8,16], f32[8], s32[8], f32[8,4]) tuple(out, mystery, am, fixed)
}
)";
    const ImportedModel m = test::must(importHloText(text, "lowerings.hlo"), "lowerings");
    const Graph& g = m.graph;
    std::set<std::string> withRule, withoutRule;
    for (const Op& op : g.ops()) {
        if (op.kind != OpKind::CustomCall) continue;
        (shardingRuleFor(g, op) ? withRule : withoutRule).insert(op.attrs.target);
    }
    const std::set<std::string> known = {"hlo.rng-bit-generator", "hlo.shift-right-logical", "hlo.bitcast-convert",
                                         "hlo.sort", "hlo.reduce", "hlo.dynamic-slice", "hlo.dynamic-update-slice"};
    auto joined = [](const std::set<std::string>& xs) {
        QStringList out;
        for (const auto& x : xs) out << QString::fromStdString(x);
        return out.join(' ');
    };
    QCOMPARE(joined(withRule), joined(known));
    QCOMPARE(joined(withoutRule), QString("my_kernel"));
    // The GEMM is a dot of the annotated value (the Sharding call passes its operand on) and w.
    const Op& dot = opNamed(g, "gemm");
    QCOMPARE(dot.kind, OpKind::Dot);
    QCOMPARE(g.op(dot.operands[0]).name, std::string("dus"));
    QCOMPARE(dot.attrs.dot.lhsContracting, std::vector<int64_t>{1});
    bool annotated = false;
    for (const ShardingAnnotation& s : m.shardings) annotated |= s.op == "dus";
    QVERIFY(annotated);
    // The conditional on constant 1 is its second branch.
    QCOMPARE(g.op(opNamed(g, "mystery").operands[0]).kind, OpKind::Exponential);
    // Rules: sort keeps its sorted dim whole; the argmax reduce keeps rows splittable.
    const OpShardingRule sortRule = test::must(shardingRuleFor(g, opNamed(g, "sorted")), "sort rule");
    QCOMPARE(sortRule.factors[1].kind, FactorKind::Blocked);
    QCOMPARE(sortRule.factors[0].kind, FactorKind::PassThrough);
    const OpShardingRule dsRule = test::must(shardingRuleFor(g, opNamed(g, "ds")), "dynamic-slice rule");
    QCOMPARE(dsRule.factors[static_cast<size_t>(dsRule.resultDims[0])].kind, FactorKind::PassThrough);
    QCOMPARE(dsRule.factors[static_cast<size_t>(dsRule.resultDims[1])].kind, FactorKind::Blocked);
    // With constant starts (an unrolled scan's counter) a dynamic slice is a static slice.
    QCOMPARE(opNamed(g, "fixed").kind, OpKind::Slice);
    // The random bits are free to split (each device draws its own slice); the state stays whole.
    const Mesh mesh = test::must(parseMesh("4"), "mesh");
    const OpShardingRule rngRule = test::must(shardingRuleFor(g, opNamed(g, "rng.1")), "rng rule");
    std::vector<TensorSharding> operands = test::must(
        propagateBackward(rngRule, test::must(parseSharding("[{x},{}]"), "sharding"), mesh), "rng backward");
    QCOMPARE(QString::fromStdString(operands[0].toString()), QString("[{}] partial{}"));
}

void TestHloImport::torchXlaStyleStepAnalyses() {
    // tests/data/hlo/torch_xla_gpt2_step.hlo: a 2-layer GPT-2 forward and loss as PyTorch/XLA dumps
    // it (SyncTensorsGraph, pN.M parameters, LayerNorm as batch-norm-training over [1, rows,
    // features], dropout as rng-bit-generator bits shifted and bitcast to floats, causal mask and
    // one-hot labels from iota, position ids from iota, tied LM head); --train appends backward
    // (the embedding gradients are scatter-adds) and AdamW. No op is opaque, the blocks pass the
    // independent check on every mesh, and the two layers are one repeated segment type.
    ImportOptions opt;
    opt.training = TrainingMode::AppendTraining;
    const ImportedModel m = test::must(importHloFile(kDataDir + "/torch_xla_gpt2_step.hlo", opt), "torch_xla step");
    QVERIFY(m.trainingAppended);
    int scatters = 0, batchNormCalls = 0;
    for (const Op& op : m.graph.ops()) {
        scatters += op.kind == OpKind::Scatter && op.phase == Phase::Backward;
        batchNormCalls += op.kind == OpKind::CustomCall && op.attrs.target.find("batch-norm") != std::string::npos;
    }
    QVERIFY(scatters >= 1);
    QCOMPARE(batchNormCalls, 0);
    for (const char* meshText : {"8", "2x4", "2x2x2"}) {
        const Mesh mesh = test::must(parseMesh(meshText), meshText);
        const AnalysisReport r = test::must(analyzeGraph(m.graph, mesh), "analysis");
        QVERIFY2(r.check.pass, (std::string(meshText) + ": " + r.check.firstViolation).c_str());
        QVERIFY2(r.blocks.unsupported.empty(), r.blocks.unsupported.empty() ? "" : r.blocks.unsupported[0].message.c_str());
        int repeated = 0;
        for (const SegmentType& t : r.cover.types) repeated += t.occurrences == 2 && t.blockFingerprints.size() >= 4;
        QCOMPARE(repeated, 1);
    }
}

void TestHloImport::loaderSniffsHlo() {
    QCOMPARE(sniffModelFile(kDataDir + "/jax_mlp.hlo"), ModelSourceKind::HloText);
    const auto dir = std::filesystem::temp_directory_path() / "cfp_hlo_sniff";
    std::filesystem::create_directories(dir);
    const std::string txt = (dir / "dump.txt").string();
    std::filesystem::copy_file(kDataDir + "/modern_syntax.hlo", txt, std::filesystem::copy_options::overwrite_existing);
    // modern_syntax.hlo starts with a comment line, so it is sniffed as a config; a dump that starts
    // with HloModule is sniffed as HLO whatever its extension.
    const std::string dump = (dir / "module.txt").string();
    {
        std::ofstream out(dump);
        out << slurp(kDataDir + "/jax_mlp.hlo");
    }
    QCOMPARE(sniffModelFile(dump), ModelSourceKind::HloText);
    const LoadedModel lm = test::must(loadModel(dump, BuildOptions{}), "load");
    QCOMPARE(lm.kind, ModelSourceKind::HloText);
    QCOMPARE(lm.graph.size(), int64_t{14});
    std::filesystem::remove_all(dir);
}

void TestHloImport::malformedModules_data() {
    QTest::addColumn<std::string>("text");
    QTest::addColumn<std::string>("code");
    QTest::addColumn<std::string>("where");
    const std::string head = "HloModule m\nENTRY e {\n";
    QTest::newRow("empty") << std::string("") << std::string("hlo.no_module") << std::string("bad.hlo:1:1");
    QTest::newRow("no entry") << std::string("HloModule m\nc {\n  ROOT p = f32[] parameter(0)\n}\n") << std::string("hlo.no_entry")
                              << std::string("bad.hlo");
    QTest::newRow("unclosed") << head + "  p = f32[] parameter(0)\n" << std::string("hlo.syntax") << std::string("bad.hlo:2:1");
    QTest::newRow("bad shape") << head + "  p = f32[4,x] parameter(0)\n}\n" << std::string("hlo.syntax") << std::string("bad.hlo:3:13");
    QTest::newRow("huge dim") << head + "  p = f32[99999999999999999999] parameter(0)\n}\n" << std::string("hlo.too_large")
                              << std::string("bad.hlo:3");
    QTest::newRow("overflowing shape") << head + "  p = f32[4294967296,4294967296] parameter(0)\n}\n"
                                       << std::string("hlo.too_large") << std::string("bad.hlo:3:3");
    QTest::newRow("unknown operand") << head + "  ROOT n = f32[] negate(q)\n}\n" << std::string("hlo.unknown_operand")
                                     << std::string("bad.hlo:3:3");
    QTest::newRow("unknown opcode") << head + "  p = f32[] parameter(0)\n  ROOT n = f32[] frobnicate(p)\n}\n"
                                    << std::string("hlo.unknown_opcode") << std::string("bad.hlo:4:3");
    QTest::newRow("shape mismatch") << head + "  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n}\n"
                                    << std::string("hlo.shape_mismatch") << std::string("bad.hlo:4:3");
    QTest::newRow("type error") << head + "  p = f32[4] parameter(0)\n  q = f32[5] parameter(1)\n  ROOT n = f32[4] add(p, q)\n}\n"
                                << std::string("hlo.type_error") << std::string("bad.hlo:5:3");
    QTest::newRow("unsupported type") << head + "  ROOT p = c64[4] parameter(0)\n}\n" << std::string("hlo.unsupported_type")
                                      << std::string("bad.hlo:3:3");
    QTest::newRow("duplicate name") << head + "  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}\n"
                                    << std::string("hlo.duplicate_name") << std::string("bad.hlo:4:3");
    QTest::newRow("missing attribute") << head + "  p = f32[4,4] parameter(0)\n  ROOT t = f32[4,4] transpose(p)\n}\n"
                                       << std::string("hlo.bad_attribute") << std::string("bad.hlo:4:3");
    QTest::newRow("bad list") << head + "  p = f32[4,4] parameter(0)\n  ROOT t = f32[4,4] transpose(p), dimensions={1,x}\n}\n"
                              << std::string("hlo.bad_attribute") << std::string("bad.hlo:4:3");
    QTest::newRow("bad literal") << head + "  ROOT c = f32[2] constant({1, two})\n}\n" << std::string("hlo.bad_literal")
                                 << std::string("bad.hlo:3:3");
    QTest::newRow("literal count") << head + "  ROOT c = f32[3] constant({1, 2})\n}\n" << std::string("hlo.bad_literal")
                                   << std::string("bad.hlo:3:3");
    QTest::newRow("unknown computation") << head + "  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=%nowhere\n}\n"
                                         << std::string("hlo.unknown_computation") << std::string("bad.hlo:4:3");
    QTest::newRow("cycle") << head + "  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n" << std::string("hlo.cycle")
                           << std::string("bad.hlo:2:1");
    QTest::newRow("recursion") << std::string("HloModule m\nr {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=r\n}\n") +
                                      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=r\n}\n"
                               << std::string("hlo.recursion") << std::string("bad.hlo:2:1");
    QTest::newRow("unknown trip count")
        << std::string("HloModule m\nc {\n  s = (f32[]) parameter(0)\n  x = f32[] get-tuple-element(s), index=0\n"
                       "  z = f32[] constant(0)\n  ROOT lt = pred[] compare(x, z), direction=LT\n}\n"
                       "b {\n  s = (f32[]) parameter(0)\n  x = f32[] get-tuple-element(s), index=0\n  n = f32[] negate(x)\n"
                       "  ROOT t = (f32[]) tuple(n)\n}\n"
                       "ENTRY e {\n  p = f32[] parameter(0)\n  t = (f32[]) tuple(p)\n  ROOT w = (f32[]) while(t), condition=c, body=b\n}\n")
        << std::string("hlo.unsupported_while") << std::string("bad.hlo:17:3");
    QTest::newRow("deep tuple") << head + "  p = " + std::string(200, '(') + "f32[]" + std::string(200, ')') + " parameter(0)\n}\n"
                                << std::string("hlo.too_deep") << std::string("bad.hlo:3");
    QTest::newRow("unterminated string") << head + "  p = f32[] parameter(0), metadata={op_name=\"abc}\n}\n"
                                         << std::string("hlo.syntax") << std::string("bad.hlo:3");
    QTest::newRow("unterminated comment") << head + "  /* comment\n" << std::string("hlo.syntax") << std::string("bad.hlo:");
    QTest::newRow("gte out of range") << head + "  p = f32[] parameter(0)\n  t = (f32[]) tuple(p)\n  ROOT g = f32[] get-tuple-element(t), index=3\n}\n"
                                      << std::string("hlo.bad_attribute") << std::string("bad.hlo:5:3");
}

void TestHloImport::malformedModules() {
    QFETCH(std::string, text);
    QFETCH(std::string, code);
    QFETCH(std::string, where);
    auto r = importHloText(text, "bad.hlo");
    QVERIFY2(!r, "import succeeded");
    QVERIFY2(r.error().code == code, r.error().toString().c_str());
    QVERIFY2(r.error().where.rfind(where, 0) == 0, r.error().toString().c_str());
}

void TestHloImport::truncatedModulesNeverCrash() {
    // Every prefix of the grammar module (at a stride) either imports or fails with an hlo.* code.
    const std::string text = slurp(kDataDir + "/grammar.hlo");
    int failures = 0;
    for (size_t n = 0; n < text.size(); n += 7) {
        auto r = importHloText(std::string_view(text).substr(0, n), "cut.hlo");
        if (r) continue;
        ++failures;
        QVERIFY2(r.error().code.rfind("hlo.", 0) == 0, r.error().toString().c_str());
        QVERIFY2(r.error().where.rfind("cut.hlo", 0) == 0, r.error().toString().c_str());
    }
    QVERIFY(failures > 100);
    // Byte flips: same property.
    std::string flipped = text;
    for (size_t i = 0; i < text.size(); i += 13) {
        flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
        auto r = importHloText(flipped, "flip.hlo");
        if (!r) QVERIFY2(r.error().code.rfind("hlo.", 0) == 0 || r.error().code.rfind("import.", 0) == 0, r.error().toString().c_str());
        flipped[i] = text[i];
    }
}

void TestHloImport::exponentialCallTreeIsBounded() {
    // c0 calls c1 twice, c1 calls c2 twice, …: 2^40 inlined calls that emit no op. The import stops
    // at the op/call limit instead of running for ever.
    std::string text = "HloModule m\n";
    const int depth = 40;
    text += "c" + std::to_string(depth) + " {\n  ROOT p = f32[] parameter(0)\n}\n";
    for (int i = depth - 1; i >= 0; --i)
        text += "c" + std::to_string(i) + " {\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c" + std::to_string(i + 1) +
                "\n  b = f32[] call(p), to_apply=c" + std::to_string(i + 1) + "\n  ROOT t = (f32[], f32[]) tuple(a, b)\n}\n";
    text += "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = (f32[], f32[]) call(p), to_apply=c0\n}\n";
    ImportOptions opt;
    opt.maxOps = 10'000;
    auto r = importHloText(text, "tree.hlo", opt);
    QVERIFY(!r);
    QCOMPARE(r.error().code, std::string("hlo.too_large"));
}

QTEST_GUILESS_MAIN(TestHloImport)
#include "tst_hlo_import.moc"
