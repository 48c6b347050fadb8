// The ONNX importer on models built here with the ONNX C++ API: operator mapping, shapes from ONNX
// shape inference, scopes from node names, --train through our autodiff, analysis, and clean
// errors for truncated, corrupted and inconsistent models.
#include <QtTest>

#include <onnx/onnx_pb.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <cstring>

#include "analysis/analysis.h"
#include "import/onnx_import.h"
#include "loader/model_loader.h"
#include "sharding/mesh.h"

#include "must.h"

using namespace cfp;

namespace {

void addTensorInput(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<std::string>& dims) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    for (const std::string& d : dims) {
        auto* dim = t->mutable_shape()->add_dim();
        if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
        else dim->set_dim_param(d);
    }
}

void addInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims, float value) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
        t->add_dims(d);
        n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(value + 0.001f * static_cast<float>(i % 7));
}

void addInt64Initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    std::string raw(values.size() * 8, '\0');
    std::memcpy(raw.data(), values.data(), raw.size());
    t->set_raw_data(raw);
}

onnx::NodeProto* addNode(onnx::GraphProto* g, const std::string& name, const std::string& op,
                         const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type(op);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
}

void intAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
}

void intsAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
}

void addOutput(onnx::GraphProto* g, const std::string& name) { g->add_output()->set_name(name); }

onnx::ModelProto newModel() {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    m.mutable_graph()->set_name("test");
    return m;
}

// x[batch,8] → fc1 (MatMul + Add) → Relu → fc2 (MatMul) → Softmax → ReduceMean → scalar loss.
std::string mlpBytes() {
    onnx::ModelProto m = newModel();
    auto* g = m.mutable_graph();
    addTensorInput(g, "x", onnx::TensorProto_DataType_FLOAT, {"batch", "8"});
    addInitializer(g, "fc1.weight", {8, 16}, 0.1f);
    addInitializer(g, "fc1.bias", {16}, 0.0f);
    addInitializer(g, "fc2.weight", {16, 4}, 0.2f);
    addNode(g, "/model/fc1/MatMul", "MatMul", {"x", "fc1.weight"}, {"h0"});
    addNode(g, "/model/fc1/Add", "Add", {"h0", "fc1.bias"}, {"h1"});
    addNode(g, "/model/act/Relu", "Relu", {"h1"}, {"h2"});
    addNode(g, "/model/fc2/MatMul", "MatMul", {"h2", "fc2.weight"}, {"logits"});
    intAttr(addNode(g, "/model/Softmax", "Softmax", {"logits"}, {"probs"}), "axis", -1);
    intAttr(addNode(g, "/loss/ReduceMean", "ReduceMean", {"probs"}, {"loss"}), "keepdims", 0);
    addOutput(g, "loss");
    return m.SerializeAsString();
}

// A transformer-style block: embedding Gather, LayerNormalization, Gemm (transB), erf-GeLU,
// Transpose, Reshape, Slice and Concat.
std::string blockBytes() {
    onnx::ModelProto m = newModel();
    auto* g = m.mutable_graph();
    addTensorInput(g, "ids", onnx::TensorProto_DataType_INT64, {"6"});
    addInitializer(g, "embed.weight", {32, 8}, 0.05f);
    addInitializer(g, "ln.weight", {8}, 1.0f);
    addInitializer(g, "ln.bias", {8}, 0.0f);
    addInitializer(g, "proj.weight", {12, 8}, 0.1f);
    addInitializer(g, "proj.bias", {12}, 0.0f);
    addInitializer(g, "half", {}, 0.5f);
    addInitializer(g, "one", {}, 1.0f);
    addInitializer(g, "rsqrt2", {}, 0.70710678f);
    addInt64Initializer(g, "shape", {3, 2, 12});
    addInt64Initializer(g, "starts", {0});
    addInt64Initializer(g, "ends", {1});
    addInt64Initializer(g, "axes", {1});
    addNode(g, "/embed/Gather", "Gather", {"embed.weight", "ids"}, {"e"});
    addNode(g, "/block/ln/LayerNormalization", "LayerNormalization", {"e", "ln.weight", "ln.bias"}, {"n"});
    intAttr(addNode(g, "/block/proj/Gemm", "Gemm", {"n", "proj.weight", "proj.bias"}, {"p"}), "transB", 1);
    addNode(g, "/block/act/Mul", "Mul", {"p", "rsqrt2"}, {"ps"});
    addNode(g, "/block/act/Erf", "Erf", {"ps"}, {"pe"});
    addNode(g, "/block/act/Add", "Add", {"pe", "one"}, {"pa"});
    addNode(g, "/block/act/Mul_1", "Mul", {"p", "pa"}, {"pm"});
    addNode(g, "/block/act/Mul_2", "Mul", {"pm", "half"}, {"act"});
    intsAttr(addNode(g, "/block/Transpose", "Transpose", {"act"}, {"t"}), "perm", {1, 0});
    addNode(g, "/block/Reshape", "Reshape", {"t", "shape"}, {"r"});
    addNode(g, "/block/Slice", "Slice", {"r", "starts", "ends", "axes"}, {"s"});
    intAttr(addNode(g, "/block/Concat", "Concat", {"s", "r"}, {"c"}), "axis", 1);
    intAttr(addNode(g, "/head/ReduceSum", "ReduceSum", {"c"}, {"loss"}), "keepdims", 0);
    addOutput(g, "loss");
    return m.SerializeAsString();
}

int countKind(const Graph& g, OpKind k) {
    return static_cast<int>(std::count_if(g.ops().begin(), g.ops().end(), [&](const Op& op) { return op.kind == k; }));
}

}  // namespace

class TestOnnxImport : public QObject {
    Q_OBJECT

private slots:
    void available() { QVERIFY(onnxImportAvailable()); }

    void mlp() {
        const ImportedModel m = test::must(importOnnxBytes(mlpBytes(), "mlp.onnx"), "mlp");
        const Graph& g = m.graph;
        QVERIFY(g.validate().ok());
        QCOMPARE(countKind(g, OpKind::Dot), 2);
        const Op& fc2 = g.op(g.find("/model/fc2/MatMul"));
        QCOMPARE(fc2.type.toString(), std::string("f32[1,4]"));  // symbolic batch taken as 1
        QCOMPARE(fc2.scope, std::string("model.fc2"));
        QCOMPARE(g.op(g.find("fc1.weight")).role, ParamRole::Trainable);
        QCOMPARE(g.op(g.find("x")).role, ParamRole::Input);
        QCOMPARE(g.parameters(ParamRole::Trainable).size(), size_t{3});
        QCOMPARE(g.op(g.outputs()[0]).type.rank(), int64_t{0});
        QVERIFY(!m.notes.empty());
        QCOMPARE(m.notes[0].code, std::string("onnx.symbolic_dim"));
    }

    void mlpTrainsAndAnalyses() {
        ImportOptions opt;
        opt.training = TrainingMode::AppendTraining;
        const ImportedModel m = test::must(importOnnxBytes(mlpBytes(), "mlp.onnx", opt), "mlp --train");
        QVERIFY(m.trainingAppended);
        QVERIFY(m.graph.find("fc2.weight.adam_m") != kNoOp);
        QCOMPARE(countKind(m.graph, OpKind::Dot), 2 + 4 - 1);  // dX of fc1 is not needed (x is an input)
        const AnalysisReport r = test::must(analyzeGraph(m.graph, test::must(parseMesh("2"), "mesh")), "analysis");
        QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
        QCOMPARE(r.blocks.blocks.size(), size_t{2});
    }

    void transformerBlock() {
        const ImportedModel m = test::must(importOnnxBytes(blockBytes(), "block.onnx"), "block");
        const Graph& g = m.graph;
        QVERIFY(g.validate().ok());
        QCOMPARE(g.op(g.find("/embed/Gather")).type.toString(), std::string("f32[6,8]"));
        QCOMPARE(g.op(g.find("/block/ln/LayerNormalization")).type.toString(), std::string("f32[6,8]"));
        QCOMPARE(g.op(g.find("/block/ln/LayerNormalization")).scope, std::string("block.ln"));
        QCOMPARE(g.op(g.find("/block/proj/Gemm")).kind, OpKind::Add);  // dot + bias
        QCOMPARE(g.op(g.find("/block/proj/Gemm.transB")).kind, OpKind::Transpose);
        QVERIFY2(g.find("/block/Reshape") != kNoOp, "no reshape");
        QVERIFY2(g.op(g.find("/block/Reshape")).type.toString() == "f32[3,2,12]", g.op(g.find("/block/Reshape")).type.toString().c_str());
        QCOMPARE(g.op(g.find("/block/Slice")).type.toString(), std::string("f32[3,1,12]"));
        QCOMPARE(g.op(g.find("/block/Concat")).type.toString(), std::string("f32[3,3,12]"));
        QCOMPARE(g.op(g.find("ids")).type.toString(), std::string("s64[6]"));
        // The shape and index initializers are constants, not weights.
        QCOMPARE(g.parameters(ParamRole::Trainable).size(), size_t{8});
        ImportOptions opt;
        opt.training = TrainingMode::AppendTraining;
        const ImportedModel t = test::must(importOnnxBytes(blockBytes(), "block.onnx", opt), "block --train");
        QVERIFY(t.graph.find("proj.weight.adam_v") != kNoOp);
        const AnalysisReport r = test::must(analyzeGraph(t.graph, test::must(parseMesh("2"), "mesh")), "analysis");
        QVERIFY2(r.check.pass, r.check.firstViolation.c_str());
    }

    // tests/data/onnx/{mlp,block}.onnx are mlpBytes() and blockBytes() written to files (fixtures
    // for the CLI and seeds for the fuzzer); they import to the same graphs.
    void committedFixturesMatch() {
        const ImportedModel built = test::must(importOnnxBytes(mlpBytes(), "mlp.onnx"), "mlp");
        const LoadedModel file = test::must(loadModel(CFP_TEST_DATA_DIR "/onnx/mlp.onnx", BuildOptions{}), "mlp file");
        QCOMPARE(file.kind, ModelSourceKind::Onnx);
        QVERIFY(file.graph == built.graph);
        const ImportedModel block = test::must(importOnnxBytes(blockBytes(), "block.onnx"), "block");
        const LoadedModel blockFile = test::must(loadModel(CFP_TEST_DATA_DIR "/onnx/block.onnx", BuildOptions{}), "block file");
        QVERIFY(blockFile.graph == block.graph);
    }

    void cli() {
        QProcess p;
        p.start(QStringLiteral(CFP_CLI_PATH), {"describe", CFP_TEST_DATA_DIR "/onnx/mlp.onnx", "--train", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(j["source_kind"].toString(), QString("onnx"));
        QCOMPARE(j["training_appended"].toBool(), true);
        QVERIFY(p.readAllStandardError().contains("onnx.symbolic_dim"));
        QProcess a;
        a.start(QStringLiteral(CFP_CLI_PATH), {"analyze", CFP_TEST_DATA_DIR "/onnx/block.onnx", "--train", "--mesh", "2"});
        QVERIFY(a.waitForFinished(120000));
        QCOMPARE(a.exitCode(), 0);
        QVERIFY(a.readAllStandardOutput().contains("block check            pass"));
    }

    void malformed() {
        const std::string good = mlpBytes();
        // Truncations and byte flips: never a crash, always an onnx.* code.
        int errors = 0;
        for (size_t n = 0; n < good.size(); n += 3) {
            auto r = importOnnxBytes(std::string_view(good).substr(0, n), "cut.onnx");
            if (r) continue;
            ++errors;
            QVERIFY2(r.error().code.rfind("onnx.", 0) == 0 || r.error().code.rfind("import.", 0) == 0, r.error().toString().c_str());
            QVERIFY2(r.error().where.rfind("cut.onnx", 0) == 0, r.error().toString().c_str());
        }
        QVERIFY(errors > 10);
        auto half = importOnnxBytes(std::string_view(good).substr(0, good.size() / 2), "half.onnx");
        QVERIFY(!half);
        std::string flipped = good;
        for (size_t i = 0; i < good.size(); i += 5) {
            flipped[i] = static_cast<char>(flipped[i] ^ 0x41);
            auto r = importOnnxBytes(flipped, "flip.onnx");
            if (!r) QVERIFY2(r.error().code.rfind("onnx.", 0) == 0 || r.error().code.rfind("import.", 0) == 0, r.error().toString().c_str());
            flipped[i] = good[i];
        }
        auto garbage = importOnnxBytes("this is not a protobuf", "text.onnx");
        QVERIFY(!garbage);
        QCOMPARE(garbage.error().code, std::string("onnx.parse"));

        // A node reading an undefined value: located at the node.
        onnx::ModelProto m = newModel();
        auto* g = m.mutable_graph();
        addTensorInput(g, "x", onnx::TensorProto_DataType_FLOAT, {"4"});
        addNode(g, "bad_node", "Add", {"x", "nowhere"}, {"y"});
        addOutput(g, "y");
        auto r = importOnnxBytes(m.SerializeAsString(), "m.onnx");
        QVERIFY(!r);
        QCOMPARE(r.error().code, std::string("onnx.unknown_value"));
        QCOMPARE(r.error().where, std::string("m.onnx: node 'bad_node' (Add)"));

        // An unsupported element type.
        onnx::ModelProto s = newModel();
        addTensorInput(s.mutable_graph(), "text", onnx::TensorProto_DataType_STRING, {"4"});
        addOutput(s.mutable_graph(), "text");
        auto rs = importOnnxBytes(s.SerializeAsString(), "s.onnx");
        QVERIFY(!rs);
        QCOMPARE(rs.error().code, std::string("onnx.unsupported_type"));

        // Raw data of the wrong length.
        onnx::ModelProto w = newModel();
        auto* wg = w.mutable_graph();
        addTensorInput(wg, "x", onnx::TensorProto_DataType_INT64, {"2"});
        auto* t = wg->add_initializer();
        t->set_name("k");
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        t->add_dims(2);
        t->set_raw_data(std::string(5, '\0'));
        addNode(wg, "add", "Add", {"x", "k"}, {"y"});
        addOutput(wg, "y");
        auto rw = importOnnxBytes(w.SerializeAsString(), "w.onnx");
        QVERIFY(!rw);
        QCOMPARE(rw.error().code, std::string("onnx.bad_tensor"));
    }
};

QTEST_GUILESS_MAIN(TestOnnxImport)
#include "tst_onnx_import.moc"
