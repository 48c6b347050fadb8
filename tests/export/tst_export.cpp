// Exporters: JAX and DTensor modules (parsed and executed by Python against stub jax/torch
// packages), Megatron-LM flags and their refusals, torchtitan job configs of estimated Llama plans
// (read back with Python's tomllib) and their refusals, hand-checked XLA HloSharding strings, the Chrome
// trace, format names and determinism. The plan is built by hand on a real 2-layer GPT-3 125M
// training step: mesh dp=2,tp=4, Megatron-style weights (QKV and fc1 column-split on tp, attention
// out and fc2 row-split on tp), data inputs batch-split on dp, everything else replicated.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "export/export.h"
#include "models/models.h"
#include "must.h"
#include "plan/pipeline.h"
#include "plan/run_config.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"
#include "workflow/request.h"
#include "workflow/workflow.h"

using namespace cfp;
using cfp::test::must;

namespace {

QByteArray text(const Error& e) { return QByteArray::fromStdString(e.toString()); }

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

bool startsWithLayer1(const std::string& scope) { return scope.rfind("layers.1.", 0) == 0; }

struct Fixture {
    BuiltModel model;
    Plan plan;

    const Graph& graph() const { return model.graph; }
    TensorPlan& tensor(std::string_view opName) {
        const OpId id = model.graph.find(opName);
        if (id == kNoOp) qFatal("no op %s", std::string(opName).c_str());
        return plan.tensors[static_cast<size_t>(id)];
    }
    void setResult(std::string_view opName, std::string_view sharding) {
        tensor(opName).result = must(parseSharding(sharding), std::string(sharding));
    }
};

bool scopeEndsWith(const Op& op, std::string_view leaf) { return endsWith(op.scope, leaf); }

Fixture makeFixture(std::string_view meshText = "dp=2,tp=4") {
    Fixture f;
    ModelConfig cfg = must(presetConfig("gpt3-125m"), "preset");
    cfg.numLayers = 2;
    BuildOptions opt;
    opt.batch = 8;
    opt.seq = 128;
    f.model = must(buildTrainingStep(cfg, opt), "build");
    const Graph& g = f.model.graph;

    Plan& p = f.plan;
    p.model = g.name();
    p.modelSource = "builtin:gpt3-125m";
    BuildOptions build;
    build.batch = 8;
    build.seq = 128;
    p.build = build;
    p.hardware = "h100-sxm";
    p.hardwareName = "NVIDIA H100 SXM";
    p.nodes = 1;
    p.gpusPerNode = 8;
    p.mesh = must(parseMesh(meshText), "mesh");
    p.memoryLimitBytes = int64_t{80} << 30;
    p.predictedStepSeconds = 0.0123456;
    p.evaluatorStepSeconds = 0.0123457;
    p.memory.weights = int64_t{1} << 28;

    for (const Op& op : g.ops()) {
        TensorPlan t;
        t.op = op.id;
        t.result = TensorSharding::replicated(static_cast<int64_t>(op.type.dims.size()));
        for (OpId o : op.operands)
            t.operands.push_back(TensorSharding::replicated(static_cast<int64_t>(g.op(o).type.dims.size())));
        p.tensors.push_back(std::move(t));
    }

    // Blocks: one per forward dot with a weight operand (the projections and the tied LM head), in
    // op order; the weight, its bias and the dot carry the block. Segments: one per layer (four
    // blocks each), then the LM head.
    int32_t block = 0;
    for (const Op& op : g.ops()) {
        if (op.kind != OpKind::Dot || op.phase != Phase::Forward) continue;
        const Op& rhs = g.op(op.operands[1]);
        if (rhs.kind != OpKind::Parameter) continue;
        p.tensors[static_cast<size_t>(op.id)].block = block;
        p.tensors[static_cast<size_t>(rhs.id)].block = block;
        const OpId bias = g.find(rhs.scope + ".bias");
        if (bias != kNoOp && rhs.scope != "embed.tokens") p.tensors[static_cast<size_t>(bias)].block = block;
        p.blocks.push_back(BlockChoice{block, 0, "tp:cols", false});
        ++block;
    }
    for (int32_t s = 0; s * 4 < block; ++s) {
        SegmentPlan seg;
        seg.index = s;
        seg.firstBlock = s * 4;
        seg.blockCount = std::min(4, block - s * 4);
        p.segments.push_back(seg);
    }

    const auto& axes = p.mesh.axes();
    const bool megatronMesh = axes.size() == 2 && axes[0].name == "dp" && axes[1].name == "tp";
    if (megatronMesh || meshText == "tp=4,dp=2") {
        for (const Op& op : g.ops()) {
            if (op.kind != OpKind::Parameter) continue;
            const bool weight = endsWith(op.name, ".weight"), bias = endsWith(op.name, ".bias");
            if (op.role == ParamRole::Input) f.setResult(op.name, "[{dp},{}]");
            if (op.role != ParamRole::Trainable) continue;
            if (scopeEndsWith(op, ".attn.qkv") || scopeEndsWith(op, ".mlp.fc1")) {
                if (weight) f.setResult(op.name, "[{},{tp}]");
                if (bias) f.setResult(op.name, "[{tp}]");
            }
            if ((scopeEndsWith(op, ".attn.out") || scopeEndsWith(op, ".mlp.fc2")) && weight)
                f.setResult(op.name, "[{tp},{}]");
        }
        // Activations as a Megatron-style plan passes them on: a column-parallel projection's
        // output and a row-parallel one's input split along features over tp.
        auto featuresOnTp = [&](OpId id) {
            std::string s = "[";
            for (size_t d = 0; d < g.op(id).type.dims.size(); ++d)
                s += std::string(d ? "," : "") + (d + 1 == g.op(id).type.dims.size() ? "{tp}" : "{}");
            f.setResult(g.op(id).name, s + "]");
        };
        for (const Op& op : g.ops()) {
            if (op.kind != OpKind::Dot || op.phase != Phase::Forward) continue;
            const Op& w = g.op(op.operands[1]);
            if (scopeEndsWith(w, ".attn.qkv") || scopeEndsWith(w, ".mlp.fc1")) featuresOnTp(op.id);
            if (scopeEndsWith(w, ".attn.out") || scopeEndsWith(w, ".mlp.fc2")) featuresOnTp(op.operands[0]);
        }
    }
    return f;
}

std::string exportOk(const Fixture& f, ExportFormat format, std::span<const TimelineEvent> timeline = {}) {
    auto r = exportPlan(f.graph(), f.plan, format, timeline);
    if (!r) qFatal("export %s: %s", std::string(exportFormatName(format)).c_str(), r.error().toString().c_str());
    return std::move(r).value();
}

// ---- Python ---------------------------------------------------------------------------------

QString python() { return QStandardPaths::findExecutable("python3"); }

struct PyRun {
    int exitCode = -1;
    QByteArray out;
};

PyRun runPython(const QStringList& args, const QByteArray& input, const QString& pythonPath = {}) {
    QProcess proc;
    proc.setProcessChannelMode(QProcess::SeparateChannels);
    if (!pythonPath.isEmpty()) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PYTHONPATH", pythonPath);
        env.insert("PYTHONDONTWRITEBYTECODE", "1");
        proc.setProcessEnvironment(env);
    }
    proc.start(python(), args);
    if (!proc.waitForStarted(10000)) return {};
    proc.write(input);
    proc.closeWriteChannel();
    proc.waitForFinished(60000);
    PyRun r;
    r.exitCode = proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1;
    r.out = proc.readAllStandardOutput();
    if (r.exitCode != 0) r.out += proc.readAllStandardError();
    return r;
}

bool parsesAsPython(const std::string& source, QByteArray* error) {
    PyRun r = runPython({"-c", "import ast,sys; ast.parse(sys.stdin.read())"}, QByteArray::fromStdString(source));
    if (error) *error = r.out;
    return r.exitCode == 0;
}

// The TOML file as Python's tomllib reads it, as JSON ({"error": …} when it does not parse).
nlohmann::json tomllibParse(const std::string& toml, QByteArray* error) {
    PyRun r = runPython({"-c", "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))"},
                        QByteArray::fromStdString(toml));
    if (error) *error = r.out;
    if (r.exitCode != 0) return nlohmann::json::object({{"error", r.out.toStdString()}});
    return nlohmann::json::parse(r.out.toStdString(), nullptr, false);
}

void writeFile(const QString& path, const char* content) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    file.write(content);
}

// Minimal stand-ins for the jax and torch APIs the generated modules use, so the modules can be
// executed here (neither library is installed on CI).
void writeStubs(const QString& root) {
    writeFile(root + "/jax/tree_util.py",
              "class DictKey:\n"
              "    def __init__(self, key):\n"
              "        self.key = key\n"
              "class SequenceKey:\n"
              "    def __init__(self, idx):\n"
              "        self.idx = idx\n"
              "def tree_map_with_path(f, tree, path=()):\n"
              "    if isinstance(tree, dict):\n"
              "        return {k: tree_map_with_path(f, v, path + (DictKey(k),)) for k, v in tree.items()}\n"
              "    if isinstance(tree, (list, tuple)):\n"
              "        return type(tree)(tree_map_with_path(f, v, path + (SequenceKey(i),)) for i, v in enumerate(tree))\n"
              "    return f(path, tree)\n");
    writeFile(root + "/jax/__init__.py", "from . import sharding, experimental, tree_util\n"
                                         "def devices():\n"
                                         "    return ['dev%d' % i for i in range(8)]\n");
    writeFile(root + "/jax/sharding.py",
              "class Mesh:\n"
              "    def __init__(self, devices, axis_names):\n"
              "        self.devices, self.axis_names = devices, tuple(axis_names)\n"
              "class PartitionSpec(tuple):\n"
              "    def __new__(cls, *parts):\n"
              "        return tuple.__new__(cls, parts)\n"
              "class NamedSharding:\n"
              "    def __init__(self, mesh, spec):\n"
              "        self.mesh, self.spec = mesh, spec\n");
    writeFile(root + "/jax/experimental/__init__.py", "from . import mesh_utils\n");
    writeFile(root + "/jax/experimental/mesh_utils.py",
              "def create_device_mesh(shape, devices=None):\n"
              "    n = 1\n"
              "    for d in shape:\n"
              "        n *= d\n"
              "    assert devices is None or len(devices) == n, 'mesh_utils: device count does not match the shape'\n"
              "    return ('device-grid', tuple(shape))\n");
    writeFile(root + "/torch/__init__.py", "");
    writeFile(root + "/torch/distributed/__init__.py", "");
    // Signatures as torch 2.11 has them (keyword-only layouts, mesh_dim_names keyword-only).
    writeFile(root + "/torch/distributed/device_mesh.py",
              "def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):\n"
              "    assert isinstance(mesh_shape, tuple) and mesh_dim_names is None or len(mesh_dim_names) == len(mesh_shape)\n"
              "    return (device_type, tuple(mesh_shape), tuple(mesh_dim_names))\n");
    writeFile(root + "/torch/distributed/tensor/__init__.py",
              "class Shard:\n"
              "    def __init__(self, dim):\n"
              "        self.dim = dim\n"
              "    def __repr__(self):\n"
              "        return 'Shard(%d)' % self.dim\n"
              "class Replicate:\n"
              "    def __repr__(self):\n"
              "        return 'Replicate()'\n");
    writeFile(root + "/torch/distributed/tensor/parallel/__init__.py",
              "from torch.distributed.tensor import Shard, Replicate\n"
              "def _layout(x):\n"
              "    assert x is None or isinstance(x, (Shard, Replicate)), 'a layout is a Placement'\n"
              "    return x\n"
              "class _Style:\n"
              "    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):\n"
              "        self.args = [('input_layouts', _layout(input_layouts)), ('output_layouts', _layout(output_layouts))]\n"
              "    def __repr__(self):\n"
              "        return type(self).__name__ + '(' + ', '.join('%s=%r' % kv for kv in self.args if kv[1] is not None) + ')'\n"
              "class ColwiseParallel(_Style):\n"
              "    pass\n"
              "class RowwiseParallel(_Style):\n"
              "    pass\n"
              "class SequenceParallel:\n"
              "    def __init__(self, *, sequence_dim=1, use_local_output=False):\n"
              "        self.sequence_dim = sequence_dim\n"
              "    def __repr__(self):\n"
              "        return 'SequenceParallel()'\n"
              "def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):\n"
              "    return module\n");
}

// Executes `source` as a module against the stubs and returns what `probe` (Python code with the
// module bound to `m`) prints as JSON.
nlohmann::json executeModule(const std::string& source, const char* probe) {
    QTemporaryDir dir;
    if (!dir.isValid()) qFatal("no temporary directory");
    writeStubs(dir.path());
    const QString modulePath = dir.path() + "/generated_plan.py";
    QFile file(modulePath);
    if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write module");
    file.write(QByteArray::fromStdString(source));
    file.close();
    const QString script = QString("import importlib.util, json, sys\n"
                                   "spec = importlib.util.spec_from_file_location('generated_plan', sys.argv[1])\n"
                                   "m = importlib.util.module_from_spec(spec)\n"
                                   "spec.loader.exec_module(m)\n") +
                           probe;
    PyRun r = runPython({"-c", script, modulePath}, {}, dir.path());
    if (r.exitCode != 0) qFatal("python failed: %s", r.out.constData());
    return nlohmann::json::parse(r.out.toStdString());
}

std::vector<TimelineEvent> sampleTimeline() {
    // Deliberately out of order; two tracks per mesh axis and compute.
    std::vector<TimelineEvent> t;
    t.push_back({"all-reduce dW layers.0.mlp.fc1", "comm:dp", "collective", 300e-6, 50e-6, kNoOp,
                 "layers.0.mlp.fc1", "all-reduce over dp, 9 MiB"});
    t.push_back({"dot.34", "compute", "compute", 0.0, 100e-6, 34, "layers.0.attn.qkv", ""});
    t.push_back({"reshard a -> b", "comm:tp", "reshard", 100e-6, 20.5e-6, 40, "layers.0.attn.core",
                 "all-gather over tp"});
    t.push_back({"dot.82", "compute", "compute", 120.5e-6, 179.5e-6, 82, "layers.0.attn.out", ""});
    t.push_back({"zero", "compute", "compute", 350e-6, 0.0, kNoOp, "", ""});
    return t;
}

// ---- torchtitan ------------------------------------------------------------------------------

// A configuration priced by runEstimate on one node of eight GPUs.
PlanRun estimated(const std::string& source, int64_t batch, int64_t seq, const std::string& config, const MemoryPolicy& policy = {}) {
    PlanRequest r;
    r.policy = policy;
    r.model.source = source;
    r.model.build.batch = batch;
    r.model.build.seq = seq;
    r.mesh = must(MeshChoice::parse("8"), "mesh");
    r.baselines = Baselines::Skip;
    return must(runEstimate(r, must(RunConfig::parse(config), config)), config);
}

Result<std::string> torchtitanOf(const PlanRun& run, const Plan& plan, std::vector<std::string>* notes = nullptr) {
    return exportPlan(run.model->graph, plan, ExportFormat::Torchtitan, {}, run.model->config ? &*run.model->config : nullptr, {}, notes);
}

std::string torchtitanOk(const PlanRun& run) {
    auto r = torchtitanOf(run, run.outcome.plan);
    if (!r) qFatal("torchtitan export: %s", r.error().toString().c_str());
    return std::move(r).value();
}

// "section.key" -> the value's text, for the one-line "key = value" entries of a TOML file.
std::map<std::string, std::string> tomlEntries(const std::string& toml) {
    std::map<std::string, std::string> out;
    std::string section;
    size_t start = 0;
    while (start < toml.size()) {
        size_t nl = toml.find('\n', start);
        if (nl == std::string::npos) nl = toml.size();
        const std::string line = toml.substr(start, nl - start);
        start = nl + 1;
        if (line.empty() || line[0] == '#' || line[0] == ' ' || line[0] == ']') continue;
        if (line[0] == '[') {
            section = line.substr(1, line.find(']') - 1);
            continue;
        }
        const size_t eq = line.find(" = ");
        if (eq == std::string::npos) continue;
        out[section + "." + line.substr(0, eq)] = line.substr(eq + 3);
    }
    return out;
}

}  // namespace

class TestExport : public QObject {
    Q_OBJECT

private slots:
    // ---- names ----------------------------------------------------------------------------------
    void formatNames() {
        const std::vector<std::string> names = {"jax", "dtensor", "megatron", "hlo-sharding", "trace", "hlo", "torchtitan"};
        QCOMPARE(exportFormatNames(), names);
        for (size_t i = 0; i < names.size(); ++i) {
            auto f = parseExportFormat(names[i]);
            QVERIFY2(f.ok(), names[i].c_str());
            QCOMPARE(static_cast<size_t>(*f), i);
            QCOMPARE(std::string(exportFormatName(*f)), names[i]);
        }
        QCOMPARE(std::string(exportFormatExtension(ExportFormat::Jax)), std::string(".py"));
        QCOMPARE(std::string(exportFormatExtension(ExportFormat::Trace)), std::string(".json"));
        QCOMPARE(std::string(exportFormatExtension(ExportFormat::HloModule)), std::string(".hlo"));
        QCOMPARE(std::string(exportFormatExtension(ExportFormat::Torchtitan)), std::string(".toml"));
        for (const char* bad : {"", "JAX", "pytorch", "HLO", "trace "}) {
            auto f = parseExportFormat(bad);
            QVERIFY2(!f.ok(), bad);
            QCOMPARE(QString::fromStdString(f.error().code), QString("export.bad_format"));
            for (const auto& n : names) QVERIFY2(contains(f.error().message, n), text(f.error()).constData());
        }
    }

    void parameterPaths() {
        Op op;
        op.name = "layers.3.attn.qkv.weight";
        op.scope = "layers.3.attn.qkv";
        QCOMPARE(parameterPath(op), std::string("layers.3.attn.qkv.weight"));
        op.name = "weight";
        QCOMPARE(parameterPath(op), std::string("layers.3.attn.qkv.weight"));
        op.name = "layers.3.attn.qkvx";  // a prefix of the name, but not a path component
        QCOMPARE(parameterPath(op), std::string("layers.3.attn.qkv.layers.3.attn.qkvx"));
        op.scope = "";
        QCOMPARE(parameterPath(op), std::string("layers.3.attn.qkvx"));
    }

    // ---- jax ------------------------------------------------------------------------------------
    void jaxModule() {
        Fixture f = makeFixture();
        f.setResult("embed.positions.weight", "[{dp,tp},{}]");
        const std::string py = exportOk(f, ExportFormat::Jax);
        QVERIFY(endsWith(py, "\n"));
        QVERIFY(contains(py, "MESH_SHAPE = (2, 4)\n"));
        QVERIFY(contains(py, "MESH_AXIS_NAMES = (\"dp\", \"tp\")\n"));
        QVERIFY(!contains(py, "\nmesh = "));  // no mesh at import: the module imports anywhere
        QVERIFY(contains(py, "    \"layers.0.attn.qkv.weight\": P(None, \"tp\"),\n"));
        QVERIFY(contains(py, "    \"layers.0.attn.qkv.bias\": P(\"tp\"),\n"));
        QVERIFY(contains(py, "    \"layers.1.mlp.fc2.weight\": P(\"tp\", None),\n"));
        QVERIFY(contains(py, "    \"final_norm.weight\": P(),\n"));
        QVERIFY(contains(py, "    \"embed.positions.weight\": P((\"dp\", \"tp\"), None),\n"));
        QVERIFY(contains(py, "def make_mesh(devices=None):"));
        QVERIFY(contains(py, "def named_shardings(mesh=None):"));
        QVERIFY(contains(py, "Mesh:      {dp=2, tp=4}, 8 devices"));
        QVERIFY(contains(py, "Predicted step time: 12.346 ms"));
        QVERIFY(contains(py, "gpt3-125m"));
        // Optimizer state and data inputs have their own tables (no adam_m entry anywhere).
        QVERIFY(!contains(py, "adam_m"));
        QVERIFY(contains(py, "INPUT_SPECS = {\n    \"input_ids\": P(\"dp\", None),\n    \"labels\": P(\"dp\", None),\n}\n"));
        QVERIFY(contains(py, "OPTIMIZER_STATE_SPECS = {\n"));

        if (python().isEmpty()) QSKIP("python3 not found");
        QByteArray err;
        QVERIFY2(parsesAsPython(py, &err), err.constData());
        const auto j = executeModule(py,
                                     "class Leaf:\n"
                                     "    def __init__(self, ndim):\n"
                                     "        self.ndim = ndim\n"
                                     "def tree_check():\n"
                                     "    tree = {}\n"
                                     "    for path, shape in m.PARAM_SHAPES.items():\n"
                                     "        node = tree\n"
                                     "        for p in path.split('.')[:-1]:\n"
                                     "            node = node.setdefault(p, {})\n"
                                     "        node[path.split('.')[-1]] = Leaf(len(shape))\n"
                                     "    flax = m.tree_shardings({'params': tree})\n"
                                     "    fc2 = flax['params']['layers']['1']['mlp']['fc2']['weight'].spec\n"
                                     "    opt = m.optimizer_shardings(({'count': Leaf(0), 'mu': tree, 'nu': tree},))\n"
                                     "    try:\n"
                                     "        m.tree_shardings({'not_in_plan': Leaf(2)})\n"
                                     "        unknown = 'accepted'\n"
                                     "    except KeyError as e:\n"
                                     "        unknown = str(e)\n"
                                     "    return [list(fc2), list(opt[0]['count'].spec), list(opt[0]['mu']['layers']['0']['attn']['qkv']['weight'].spec), unknown]\n"
                                     "def wrong():\n"
                                     "    try:\n"
                                     "        m.make_mesh(['d'] * 4)\n"
                                     "    except ValueError as e:\n"
                                     "        return str(e)\n"
                                     "print(json.dumps({'specs': {k: [list(d) if isinstance(d, tuple) else d for d in v]\n"
                                     "                            for k, v in m.PARTITION_SPECS.items()},\n"
                                     "                  'named': len(m.named_shardings()), 'axes': list(m.make_mesh().axis_names),\n"
                                     "                  'grid': list(m.make_mesh().devices[1]),\n"
                                     "                  'wrong': wrong(),\n"
                                     "                  'shape': list(m.PARAM_SHAPES['layers.0.attn.qkv.weight']),\n"
                                     "                  'tree': tree_check()}))\n");
        const auto& specs = j.at("specs");
        QCOMPARE(specs.size(), f.graph().parameters(ParamRole::Trainable).size());
        QCOMPARE(j.at("named").get<size_t>(), specs.size());
        QCOMPARE(j.at("axes").dump(), std::string(R"(["dp","tp"])"));
        QCOMPARE(j.at("grid").dump(), std::string("[2,4]"));
        // Too few devices: a clear error when the mesh is asked for, not at import.
        QCOMPARE(j.at("wrong").get<std::string>(), std::string("this plan's mesh (2, 4) needs 8 devices, 4 given"));
        QCOMPARE(j.at("shape").dump(), std::string("[768,2304]"));
        // tree_shardings under Flax's 'params', an optimizer state (count replicated; the moments as
        // the plan stores them — replicated in this hand-built plan — with ZeRO-1's dp added to their
        // first dim), and a leaf the plan does not know.
        const std::string tree = j.at("tree").dump();
        QVERIFY2(tree == R"([["tp",null],[],["dp",null],"'no sharding in this plan for not_in_plan'"])", tree.c_str());
        QCOMPARE(specs.at("layers.0.attn.qkv.weight").dump(), std::string(R"([null,"tp"])"));
        QCOMPARE(specs.at("layers.1.attn.out.weight").dump(), std::string(R"(["tp",null])"));
        QCOMPARE(specs.at("embed.positions.weight").dump(), std::string(R"([["dp","tp"],null])"));
        QCOMPARE(specs.at("embed.tokens.weight").dump(), std::string("[]"));
    }

    void jaxOneAxisMeshTuples() {
        Fixture f = makeFixture("x=8");
        f.setResult("embed.positions.weight", "[{x},{}]");
        const std::string py = exportOk(f, ExportFormat::Jax);
        QVERIFY(contains(py, "MESH_SHAPE = (8,)\n"));
        QVERIFY(contains(py, "MESH_AXIS_NAMES = (\"x\",)\n"));
        QVERIFY(contains(py, "    \"embed.positions.weight\": P(\"x\", None),\n"));
        if (python().isEmpty()) QSKIP("python3 not found");
        QByteArray err;
        QVERIFY2(parsesAsPython(py, &err), err.constData());
    }

    // ---- dtensor --------------------------------------------------------------------------------
    void dtensorModule() {
        Fixture f = makeFixture();
        // A dim split over two axes, once in mesh order and once against it.
        f.setResult("embed.positions.weight", "[{dp,tp},{}]");
        f.setResult("embed.tokens.weight", "[{},{tp,dp}]");
        const std::string py = exportOk(f, ExportFormat::DTensor);
        QVERIFY(endsWith(py, "\n"));
        QVERIFY(contains(py, "init_device_mesh(device_type, (2, 4), mesh_dim_names=(\"dp\", \"tp\"))"));
        QVERIFY(contains(py, "TP_MESH_DIM = \"tp\"\n"));
        QVERIFY(contains(py, "    \"layers.0.attn.qkv\": ColwiseParallel(),\n"));
        QVERIFY(contains(py, "    \"layers.0.mlp.fc1\": ColwiseParallel(),\n"));
        QVERIFY(contains(py, "    \"layers.1.attn.out\": RowwiseParallel(),\n"));
        QVERIFY(contains(py, "    \"layers.1.mlp.fc2\": RowwiseParallel(),\n"));
        // Graph W[in, out] column split (dim 1) is PyTorch weight[out, in] Shard(0); row split Shard(1).
        QVERIFY(contains(py, "    \"layers.0.attn.qkv.weight\": [Replicate(), Shard(0)],\n"));
        QVERIFY(contains(py, "    \"layers.0.mlp.fc2.weight\": [Replicate(), Shard(1)],\n"));
        QVERIFY(contains(py, "    \"layers.0.attn.qkv.bias\": [Replicate(), Shard(0)],\n"));
        QVERIFY(contains(py, "    \"layers.0.attn_norm.weight\": [Replicate(), Replicate()],\n"));
        QVERIFY(contains(py, "    \"embed.positions.weight\": [Shard(0), Shard(0)],\n"));
        // The tied embedding [vocab, hidden] is not transposed; its dim 1 is split tp-major.
        QVERIFY(contains(py, "    \"embed.tokens.weight\": [Shard(1), Shard(1)],  # dim 1: plan order tp, dp"));
        QVERIFY(contains(py, "graph stores a linear weight as W[in, out]"));

        if (python().isEmpty()) QSKIP("python3 not found");
        QByteArray err;
        QVERIFY2(parsesAsPython(py, &err), err.constData());
        const auto j = executeModule(py,
                                     "print(json.dumps({'plan': {k: repr(v) for k, v in m.PARALLELIZE_PLAN.items()},\n"
                                     "                  'other': len(m.OTHER_PARALLELIZE_PLANS),\n"
                                     "                  'placements': {k: [repr(p) for p in v] for k, v in m.PLACEMENTS.items()},\n"
                                     "                  'linear': sorted(m.LINEAR_WEIGHTS), 'tp': m.TP_MESH_DIM,\n"
                                     "                  'mesh': repr(m.make_device_mesh())}))\n");
        QCOMPARE(j.at("plan").size(), size_t(8));  // 4 projections x 2 layers
        QCOMPARE(j.at("plan").at("layers.1.mlp.fc1").get<std::string>(), std::string("ColwiseParallel()"));
        QCOMPARE(j.at("other").get<int>(), 0);
        QCOMPARE(j.at("tp").get<std::string>(), std::string("tp"));
        QCOMPARE(j.at("placements").size(), f.graph().parameters(ParamRole::Trainable).size());
        QCOMPARE(j.at("placements").at("layers.1.attn.out.weight").dump(), std::string(R"js(["Replicate()","Shard(1)"])js"));
        QCOMPARE(j.at("linear").size(), size_t(8));
        QCOMPARE(j.at("mesh").get<std::string>(), std::string("('cuda', (2, 4), ('dp', 'tp'))"));
    }

    void dtensorOtherAxisPlans() {
        Fixture f = makeFixture();
        // Layer 1's fc1 column-parallel over dp instead: listed for the dp axis.
        f.setResult("layers.1.mlp.fc1.weight", "[{},{dp}]");
        f.setResult("layers.1.mlp.fc1.bias", "[{dp}]");
        // Split over both axes (FSDP-like on top of TP): in PLACEMENTS only.
        f.setResult("layers.1.mlp.fc2.weight", "[{tp},{dp}]");
        const std::string py = exportOk(f, ExportFormat::DTensor);
        QVERIFY(contains(py, "TP_MESH_DIM = \"tp\"\n"));
        // Its output is split over tp, not dp: the style gathers it on dp.
        QVERIFY(contains(py, "OTHER_PARALLELIZE_PLANS = {\n    \"dp\": {\n        \"layers.1.mlp.fc1\": ColwiseParallel(output_layouts=Replicate()),\n    },\n}\n"));
        QVERIFY(!contains(py, "\"layers.1.mlp.fc2\": RowwiseParallel()"));
        QVERIFY(contains(py, "    \"layers.1.mlp.fc2.weight\": [Shard(0), Shard(1)],\n"));
        // …which parallelize() would not apply: listed, and refused unless allow_partial.
        QVERIFY(contains(py, "UNEXPRESSED = {\n    \"layers.1.mlp.fc2\": \"layers.1.mlp.fc2.weight is split over tp on graph dim 0, over dp on dim 1; "
                            "no parallel style fits that layout\",\n}\n"));
        if (python().isEmpty()) QSKIP("python3 not found");
        QByteArray err;
        QVERIFY2(parsesAsPython(py, &err), err.constData());
        const auto j = executeModule(py,
                                     "try:\n"
                                     "    m.parallelize(object(), mesh='mesh')\n"
                                     "    print(json.dumps({'raised': ''}))\n"
                                     "except NotImplementedError as e:\n"
                                     "    print(json.dumps({'raised': str(e)}))\n");
        QVERIFY2(j.at("raised").get<std::string>().rfind("1 module(s) have layouts no parallel style expresses, first layers.1.mlp.fc2: ", 0) == 0,
                 j.dump().c_str());
    }

    // A mixed plan: layer 0 data parallel over both mesh axes, layer 1 Megatron-style over tp (data
    // parallel over dp only). Layer 1's styles receive the batch split over tp (Shard(0), gathered by
    // the style) and hand it back split (Shard(0): reduce-scattered); FSDP2 shards layer 1 over dp
    // alone and everything else over (dp, tp).
    void dtensorMixedPlan() {
        Fixture f = makeFixture();
        const Graph& g = f.graph();
        for (const Op& op : g.ops()) {
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Input) f.setResult(op.name, "[{dp,tp},{}]");
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable && op.scope.rfind("layers.0.", 0) == 0)
                f.setResult(op.name, op.type.rank() == 2 ? "[{},{}]" : "[{}]");
        }
        for (const Op& op : g.ops()) {
            if (op.kind != OpKind::Dot || op.phase != Phase::Forward || g.op(op.operands[1]).kind != OpKind::Parameter) continue;
            const Op& w = g.op(op.operands[1]);
            const Op& in = g.op(op.operands[0]);
            const bool layer0 = w.scope.rfind("layers.0.", 0) == 0, layer1 = w.scope.rfind("layers.1.", 0) == 0;
            const std::string batch = "[{dp,tp}" + std::string(in.type.rank() == 3 ? ",{},{}]" : ",{}]");
            if (layer0) {
                f.setResult(in.name, batch);
                f.setResult(op.name, "[{dp,tp}" + std::string(op.type.rank() == 3 ? ",{},{}]" : ",{}]"));
            }
            // Layer 1's first projections read layer 0's batch-split output (through the norm).
            if (layer1 && (scopeEndsWith(w, ".attn.qkv") || scopeEndsWith(w, ".mlp.fc1"))) f.setResult(in.name, batch);
            if (layer1 && scopeEndsWith(w, ".mlp.fc2")) f.setResult(op.name, "[{dp,tp}" + std::string(op.type.rank() == 3 ? ",{},{}]" : ",{}]"));
        }
        const std::string py = exportOk(f, ExportFormat::DTensor);
        QVERIFY(contains(py, "    \"layers.1.attn.qkv\": ColwiseParallel(input_layouts=Shard(0)),\n"));
        QVERIFY(contains(py, "    \"layers.1.mlp.fc1\": ColwiseParallel(input_layouts=Shard(0)),\n"));
        QVERIFY(contains(py, "    \"layers.1.mlp.fc2\": RowwiseParallel(output_layouts=Shard(0)),\n"));
        QVERIFY(!contains(py, "\"layers.0.attn.qkv\": "));
        QVERIFY(contains(py, "DP_MESH_DIMS = (\"dp\", \"tp\")\n"));
        QVERIFY(contains(py, "BLOCK_DP_MESH_DIMS = {\n    \"layers.1\": (\"dp\",),\n}\n"));
        QVERIFY(contains(py, "ROOT_DP_MESH_DIMS = (\"dp\", \"tp\")\n"));
        QVERIFY(contains(py, "UNEXPRESSED = {\n}\n"));
        if (python().isEmpty()) QSKIP("python3 not found");
        QByteArray err;
        QVERIFY2(parsesAsPython(py, &err), err.constData());
        // FSDP2 per block on the right mesh, with stand-ins that record the calls.
        const auto j = executeModule(py,
                                     "import sys, types\n"
                                     "calls = []\n"
                                     "fsdp = types.ModuleType('torch.distributed.fsdp')\n"
                                     "def fully_shard(module, *, mesh=None, reshard_after_forward=True):\n"
                                     "    calls.append([module, mesh])\n"
                                     "    return module\n"
                                     "fsdp.fully_shard = fully_shard\n"
                                     "sys.modules['torch.distributed.fsdp'] = fsdp\n"
                                     "class Sub:\n"
                                     "    def __init__(self, dims):\n"
                                     "        self.dims = dims\n"
                                     "    def _flatten(self):\n"
                                     "        return 'flat:' + '+'.join(self.dims)\n"
                                     "class Mesh:\n"
                                     "    def __getitem__(self, dims):\n"
                                     "        return Sub(dims) if isinstance(dims, tuple) else 'dim:' + dims\n"
                                     "class Blocks:\n"
                                     "    def named_children(self):\n"
                                     "        return [('0', 'block0'), ('1', 'block1')]\n"
                                     "class Model:\n"
                                     "    def get_submodule(self, name):\n"
                                     "        assert name == m.BLOCKS, name\n"
                                     "        return Blocks()\n"
                                     "model = Model()\n"
                                     "m.apply_fsdp(model, Mesh())\n"
                                     "print(json.dumps([[c[0] if isinstance(c[0], str) else 'model', c[1]] for c in calls]))\n");
        QCOMPARE(j.dump(), std::string(R"js([["block0","flat:dp+tp"],["block1","dim:dp"],["model","flat:dp+tp"]])js"));
    }

    // ---- megatron -------------------------------------------------------------------------------
    void megatronFlags() {
        Fixture f = makeFixture();
        QCOMPARE(exportOk(f, ExportFormat::Megatron), std::string("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --use-distributed-optimizer\n"));
        // Megatron-LM's own embedding layout (vocabulary over tp) differs from this plan's
        // replicated table (the head is tied to it): a note says so.
        std::vector<std::string> notes;
        QVERIFY(exportPlan(f.graph(), f.plan, ExportFormat::Megatron, {}, nullptr, {}, &notes).ok());
        QCOMPARE(notes.size(), size_t{1});
        QVERIFY2(notes[0].rfind("embed.tokens.weight: the plan lays it out [{},{}]; Megatron-LM splits its vocabulary over tp", 0) == 0,
                 notes[0].c_str());
    }

    // With the model's architecture: its shape, positions, norm and MLP, batch and precision (a
    // Llama with grouped-query attention and an untied head; the fixture's graph gives the batch).
    void megatronModelFlags() {
        Fixture f = makeFixture();
        const ModelConfig llama = must(presetConfig("llama3-8b"), "llama");
        auto r = exportPlan(f.graph(), f.plan, ExportFormat::Megatron, {}, &llama);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        for (const char* flag : {" --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 ",
                                 " --group-query-attention --num-query-groups 8 ", " --normalization RMSNorm --swiglu --disable-bias-linear ",
                                 " --position-embedding-type rope --rotary-base 500000 ", " --untie-embeddings-and-output-weights ",
                                 " --global-batch-size "})
            QVERIFY2(contains(*r, flag), (std::string(flag) + " in " + *r).c_str());
        // Tensor parallelism must divide the heads (Megatron-LM asserts it): 4 does not divide 6.
        ModelConfig odd = llama;
        odd.numHeads = odd.numKvHeads = 6;
        auto bad = exportPlan(f.graph(), f.plan, ExportFormat::Megatron, {}, &odd);
        QVERIFY(!bad.ok());
        QCOMPARE(QString::fromStdString(bad.error().code), QString("export.not_uniform"));
        QVERIFY(contains(bad.error().message, "divide the 6 attention heads"));
    }

    // Memory policy flags: the distributed optimizer follows optimizer sharding; layer recomputation
    // only when every block of every layer recomputes.
    void megatronMemoryPolicy() {
        Fixture f = makeFixture();
        f.plan.policy.optimizerSharding = false;
        QCOMPARE(exportOk(f, ExportFormat::Megatron), std::string("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 1\n"));
        for (BlockChoice& b : f.plan.blocks) b.recompute = true;
        QCOMPARE(exportOk(f, ExportFormat::Megatron),
                 std::string("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --recompute-granularity full "
                             "--recompute-method uniform --recompute-num-layers 1\n"));
        f.plan.blocks[1].recompute = false;
        auto r = exportPlan(f.graph(), f.plan, ExportFormat::Megatron);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.not_uniform"));
        QVERIFY2(contains(r.error().message, "recomputes some ParallelBlocks"), text(r.error()).constData());
    }

    void megatronRefusesRowSplitFc1() {
        Fixture f = makeFixture();
        f.setResult("layers.1.mlp.fc1.weight", "[{tp},{}]");
        auto r = exportPlan(f.graph(), f.plan, ExportFormat::Megatron);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.not_uniform"));
        const std::string& m = r.error().message;
        QVERIFY2(contains(m, "segment 1 block 6 (layers.1.mlp.fc1) splits rows over tp, Megatron needs "
                             "column-parallel over tp"),
                 text(r.error()).constData());
        QVERIFY(m.find('\n') == std::string::npos);
    }

    void megatronRefusals_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<QString>("reason");
        QTest::newRow("bias") << "dp=2,tp=4" << "layers.0.mlp.fc1.bias" << "[{}]"
                              << "segment 0 block 2 (layers.0.mlp.fc1) is replicated (layers.0.mlp.fc1.bias)";
        QTest::newRow("norm") << "dp=2,tp=4" << "layers.1.mlp_norm.weight" << "[{tp}]"
                              << "(layers.1.mlp_norm) splits dim 0 over tp (layers.1.mlp_norm.weight), Megatron "
                                 "replicates norm parameters";
        QTest::newRow("fsdp-like") << "dp=2,tp=4" << "layers.0.attn.out.weight" << "[{tp},{dp}]"
                                   << "segment 0 block 1 (layers.0.attn.out) splits rows over tp and columns over dp, "
                                      "Megatron needs row-parallel over tp";
        QTest::newRow("inputs") << "dp=2,tp=4" << "input_ids" << "[{},{}]"
                                << "input input_ids is replicated, Megatron needs the batch split over dp only";
        QTest::newRow("inputs over tp") << "dp=2,tp=4" << "labels" << "[{dp,tp},{}]"
                                        << "input labels splits dim 0 over {dp,tp}";
        QTest::newRow("tp outermost") << "tp=4,dp=2" << "" << "" << "tensor-parallel axis tp is not the innermost mesh axis";
    }
    void megatronRefusals() {
        QFETCH(QString, mesh);
        QFETCH(QString, op);
        QFETCH(QString, sharding);
        QFETCH(QString, reason);
        Fixture f = makeFixture(mesh.toStdString());
        if (!op.isEmpty()) f.setResult(op.toStdString(), sharding.toStdString());
        auto r = exportPlan(f.graph(), f.plan, ExportFormat::Megatron);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.not_uniform"));
        QVERIFY2(contains(r.error().message, reason.toStdString()), text(r.error()).constData());
    }

    void megatronPureDataParallel() {
        Fixture f = makeFixture("dp=2,tp=4");
        for (const Op& op : f.graph().ops())
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable)
                f.tensor(op.name).result = TensorSharding::replicated(static_cast<int64_t>(op.type.dims.size()));
        f.setResult("input_ids", "[{tp,dp},{}]");
        f.setResult("labels", "[{dp,tp},{}]");
        QCOMPARE(exportOk(f, ExportFormat::Megatron), std::string("--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --use-distributed-optimizer\n"));
    }

    void megatronSequenceParallel() {
        Fixture f = makeFixture();
        // Every [batch, seq, hidden] value in the layers' norms split along the sequence over tp.
        for (const Op& op : f.graph().ops()) {
            if (op.phase != Phase::Forward || op.type.dims.size() != 3) continue;
            if (!endsWith(op.scope, "_norm") || !op.scope.starts_with("layers.")) continue;
            f.setResult(op.name, "[{dp},{tp},{}]");
        }
        QCOMPARE(exportOk(f, ExportFormat::Megatron),
                 std::string("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --sequence-parallel --use-distributed-optimizer\n"));
        // One norm value not sequence-split: not clearly sequence parallel.
        for (const Op& op : f.graph().ops())
            if (op.phase == Phase::Forward && op.type.dims.size() == 3 && op.scope == "layers.1.mlp_norm") {
                f.setResult(op.name, "[{dp},{},{}]");
                break;
            }
        QCOMPARE(exportOk(f, ExportFormat::Megatron), std::string("--tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --use-distributed-optimizer\n"));
    }

    // ---- hlo-sharding ---------------------------------------------------------------------------
    void hloSharding_data() {
        QTest::addColumn<QString>("mesh");
        QTest::addColumn<QString>("sharding");
        QTest::addColumn<QString>("expected");
        // Device d on {x=2, y=4} has coordinates (x, y) = (d / 4, d % 4).
        QTest::newRow("y rows, x cols") << "x=2,y=4" << "[{y},{x}]" << "{devices=[4,2]0,4,1,5,2,6,3,7}";
        QTest::newRow("mesh order") << "x=2,y=4" << "[{x},{y}]" << "{devices=[2,4]0,1,2,3,4,5,6,7}";
        QTest::newRow("replicated") << "x=2,y=4" << "[{},{}]" << "{replicated}";
        QTest::newRow("scalar") << "x=2,y=4" << "[]" << "{replicated}";
        QTest::newRow("x only") << "x=2,y=4" << "[{x},{}]" << "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}";
        QTest::newRow("y only") << "x=2,y=4" << "[{y},{}]" << "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}";
        QTest::newRow("cols over y") << "x=2,y=4" << "[{},{y}]" << "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}";
        QTest::newRow("two axes, mesh order") << "x=2,y=4" << "[{x,y},{}]" << "{devices=[8,1]0,1,2,3,4,5,6,7}";
        QTest::newRow("two axes, reversed") << "x=2,y=4" << "[{y,x},{}]" << "{devices=[8,1]0,4,1,5,2,6,3,7}";
        QTest::newRow("two axes on dim 1") << "x=2,y=4" << "[{},{y,x}]" << "{devices=[1,8]0,4,1,5,2,6,3,7}";
        // {x=2, y=2, z=2}: device = 4x + 2y + z. Tiles z (dim 0), x (dim 1), y (replicated).
        QTest::newRow("3-D with replication") << "2x2x2" << "[{z},{x}]"
                                              << "{devices=[2,2,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}";
        QTest::newRow("3-D two on one dim") << "2x2x2" << "[{z,x},{},{y}]" << "{devices=[4,1,2]0,2,4,6,1,3,5,7}";
        QTest::newRow("1-D") << "4" << "[{},{x}]" << "{devices=[1,4]0,1,2,3}";
        // Axes of size 1 split nothing.
        QTest::newRow("size-1 axis only") << "x=1,y=4" << "[{x},{}]" << "{replicated}";
        QTest::newRow("size-1 axis unused") << "x=1,y=4" << "[{},{y}]" << "{devices=[1,4]0,1,2,3}";
    }
    void hloSharding() {
        QFETCH(QString, mesh);
        QFETCH(QString, sharding);
        QFETCH(QString, expected);
        const Mesh m = must(parseMesh(mesh.toStdString()), "mesh");
        const TensorSharding s = must(parseSharding(sharding.toStdString()), "sharding");
        auto r = hloShardingText(s, m);
        QVERIFY2(r.ok(), r.ok() ? "" : text(r.error()).constData());
        QCOMPARE(QString::fromStdString(*r), expected);
    }

    void hloShardingErrors() {
        const Mesh m = must(parseMesh("x=2,y=4"), "mesh");
        auto partial = hloShardingText(must(parseSharding("[{x},{}] partial{y}"), "s"), m);
        QVERIFY(!partial.ok());
        QCOMPARE(QString::fromStdString(partial.error().code), QString("export.bad_plan"));
        auto unknown = hloShardingText(must(parseSharding("[{z},{}]"), "s"), m);
        QVERIFY(!unknown.ok());
        QCOMPARE(QString::fromStdString(unknown.error().code), QString("export.bad_plan"));
    }

    void hloShardingExport() {
        Fixture f = makeFixture();
        const std::string out = exportOk(f, ExportFormat::HloSharding);
        QVERIFY(endsWith(out, "\n"));
        QVERIFY(out.starts_with("# "));
        QVERIFY(contains(out, "\nlayers.0.attn.qkv.weight {devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}\n"));
        QVERIFY(contains(out, "\nlayers.0.attn.qkv.bias {devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}\n"));
        QVERIFY(contains(out, "\nlayers.1.mlp.fc2.weight {devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}\n"));
        QVERIFY(contains(out, "\nfinal_norm.weight {replicated}\n"));
        // One line per trainable parameter plus the header.
        const auto lines = std::count(out.begin(), out.end(), '\n');
        QCOMPARE(static_cast<size_t>(lines), f.graph().parameters(ParamRole::Trainable).size() + 1);
    }

    // ---- trace ----------------------------------------------------------------------------------
    void trace() {
        Fixture f = makeFixture();
        const auto timeline = sampleTimeline();
        const std::string out = exportOk(f, ExportFormat::Trace, timeline);
        QVERIFY(endsWith(out, "\n"));
        const auto j = nlohmann::json::parse(out);  // throws (fails the test) on invalid JSON
        QVERIFY(j.at("traceEvents").is_array());
        QCOMPARE(j.at("displayTimeUnit").get<std::string>(), std::string("ns"));
        QCOMPARE(j.at("otherData").at("model").get<std::string>(), std::string("gpt3-125m"));
        QCOMPARE(j.at("otherData").at("mesh").get<std::string>(), std::string("{dp=2, tp=4}"));
        QCOMPARE(j.at("otherData").at("timelineEvents").get<int>(), 5);

        std::map<int, std::string> threads;
        std::string process;
        std::vector<nlohmann::json> complete;
        for (const auto& e : j.at("traceEvents")) {
            const std::string ph = e.at("ph");
            QCOMPARE(e.at("pid").get<int>(), 1);
            if (ph == "M") {
                if (e.at("name") == "process_name") process = e.at("args").at("name");
                if (e.at("name") == "thread_name") {
                    const int tid = e.at("tid");
                    QVERIFY(!threads.count(tid));
                    threads[tid] = e.at("args").at("name");
                }
                continue;
            }
            QCOMPARE(ph, std::string("X"));
            for (const char* key : {"name", "cat", "ts", "dur", "pid", "tid", "args"}) QVERIFY2(e.contains(key), key);
            complete.push_back(e);
        }
        QCOMPARE(process, std::string("CFP predicted step: gpt3-125m on {dp=2, tp=4} (devices 0-7 each run this timeline)"));
        // One thread per track: compute first, then the communication axes in mesh order.
        QCOMPARE(threads.size(), size_t(3));
        QCOMPARE(threads[1], std::string("compute"));
        QCOMPARE(threads[2], std::string("comm:dp"));
        QCOMPARE(threads[3], std::string("comm:tp"));
        // The zero-length event is left out and counted.
        QCOMPARE(complete.size(), timeline.size() - 1);
        QCOMPARE(j.at("otherData").at("eventsWithoutDuration").get<int>(), 1);
        double last = -1;
        for (const auto& e : complete) {
            const double ts = e.at("ts"), dur = e.at("dur");
            QVERIFY(ts >= last);
            QVERIFY(dur > 0);
            last = ts;
            QVERIFY(threads.count(e.at("tid").get<int>()));
        }
        // Microseconds; kernels named with their scope; the op id resolves to the op's name.
        QCOMPARE(complete[0].at("name").get<std::string>(), std::string("layers.0.attn.qkv: dot.34"));
        QCOMPARE(complete[0].at("args").at("op").get<std::string>(), f.graph().op(34).name);
        QCOMPARE(complete[2].at("name").get<std::string>(), std::string("layers.0.attn.out: dot.82"));
        QCOMPARE(complete[2].at("ts").get<double>(), 120.5);
        QCOMPARE(complete[2].at("dur").get<double>(), 179.5);
        QCOMPARE(complete[3].at("cat").get<std::string>(), std::string("collective"));
        QCOMPARE(threads[complete[3].at("tid").get<int>()], std::string("comm:dp"));
        QCOMPARE(complete[3].at("args").at("detail").get<std::string>(), std::string("all-reduce over dp, 9 MiB"));
    }

    // On request a process per device: its mesh coordinates, node and GPU, each communication track
    // named with the devices of its group on that axis, every device the same slices, no overlap.
    void traceEveryDevice() {
        Fixture f = makeFixture();
        const auto timeline = sampleTimeline();
        ExportOptions options;
        options.traceEveryDevice = true;
        auto out = exportPlan(f.graph(), f.plan, ExportFormat::Trace, timeline, nullptr, options);
        QVERIFY2(bool(out), out ? "" : out.error().toString().c_str());
        const auto j = nlohmann::json::parse(*out);
        QCOMPARE(j.at("otherData").at("processes").get<std::string>(), std::string("one per device"));
        std::map<int, std::string> processes;
        std::map<std::pair<int, int>, std::string> threads;
        std::map<int, std::vector<std::pair<double, double>>> slicesByProcess;
        std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slicesByTrack;
        for (const auto& e : j.at("traceEvents")) {
            const int pid = e.at("pid"), tid = e.at("tid");
            if (e.at("ph") == "M") {
                if (e.at("name") == "process_name") processes[pid] = e.at("args").at("name");
                if (e.at("name") == "thread_name") threads[{pid, tid}] = e.at("args").at("name");
                continue;
            }
            const std::pair<double, double> slice{e.at("ts").get<double>(), e.at("dur").get<double>()};
            slicesByProcess[pid].push_back(slice);
            slicesByTrack[{pid, tid}].push_back(slice);
        }
        QCOMPARE(processes.size(), size_t(8));
        QCOMPARE(processes[1], std::string("device 0 (node 0, GPU 0): dp=0, tp=0"));
        QCOMPARE(processes[7], std::string("device 6 (node 0, GPU 6): dp=1, tp=2"));
        // Device 6 = (dp 1, tp 2): its dp group is {2, 6}, its tp group {4, 5, 6, 7}.
        QCOMPARE(threads[std::make_pair(7, 1)], std::string("compute"));
        QCOMPARE(threads[std::make_pair(7, 2)], std::string("comm:dp with devices 2,6"));
        QCOMPARE(threads[std::make_pair(7, 3)], std::string("comm:tp with devices 4,5,6,7"));
        QCOMPARE(threads[std::make_pair(1, 3)], std::string("comm:tp with devices 0,1,2,3"));
        for (const auto& [pid, slices] : slicesByProcess) QCOMPARE(slices, slicesByProcess[1]);
        QCOMPARE(slicesByProcess[1].size(), timeline.size() - 1);
        QCOMPARE(j.at("otherData").at("eventsWithoutDuration").get<int>(), 1);
        for (auto& [track, slices] : slicesByTrack) {  // a track's slices nest or follow, never cross
            std::sort(slices.begin(), slices.end());
            for (size_t i = 1; i < slices.size(); ++i) QVERIFY(slices[i - 1].first + slices[i - 1].second <= slices[i].first + 1e-9);
        }
    }

    // Back to back stays back to back: start and end are rounded to the nanosecond, the duration is
    // their difference (rounding start and duration apart would give [1, 4) and [3, …) here).
    void traceEventsDoNotOverlapAfterRounding() {
        Fixture f = makeFixture();
        std::vector<TimelineEvent> t;
        t.push_back({"a", "compute", "compute", 0.6e-9, 2.8e-9, kNoOp, "", ""});
        t.push_back({"b", "compute", "compute", 3.4e-9, 2.2e-9, kNoOp, "", ""});
        const auto j = nlohmann::json::parse(exportOk(f, ExportFormat::Trace, t));
        std::vector<std::pair<double, double>> slices;
        for (const auto& e : j.at("traceEvents"))
            if (e.at("ph") == "X") slices.push_back({e.at("ts").get<double>() * 1e3, e.at("dur").get<double>() * 1e3});
        QCOMPARE(slices.size(), size_t(2));
        QCOMPARE(std::llround(slices[0].first), 1LL);
        QCOMPARE(std::llround(slices[0].first + slices[0].second), 3LL);
        QCOMPARE(std::llround(slices[1].first), 3LL);
    }

    void traceRejectsBadEvents() {
        Fixture f = makeFixture();
        auto timeline = sampleTimeline();
        timeline[1].durationSeconds = -1e-6;
        auto r = exportPlan(f.graph(), f.plan, ExportFormat::Trace, timeline);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_timeline"));
        timeline[1].durationSeconds = std::numeric_limits<double>::quiet_NaN();
        r = exportPlan(f.graph(), f.plan, ExportFormat::Trace, timeline);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_timeline"));
    }

    void traceWithoutTimeline() {
        Fixture f = makeFixture();
        const auto j = nlohmann::json::parse(exportOk(f, ExportFormat::Trace));
        QCOMPARE(j.at("traceEvents").size(), size_t(2));  // the process name and its sort index only
    }

    // ---- torchtitan ------------------------------------------------------------------------------
    // Llama 3 8B at FSDP (ZeRO-3) over 8 ranks with torchtitan's per-op checkpointing: every key
    // from the plan, and Python's tomllib reads the file as the same values.
    void torchtitanFsdp() {
        const PlanRun run = estimated("builtin:llama3-8b", 32, 2048, "tp=1,dp=8,zero=3,mbs=2,recompute=op");
        const std::string toml = torchtitanOk(run);
        QVERIFY2(toml.rfind("# torchtitan job config generated by cfp", 0) == 0, toml.c_str());
        // The plan's model is one round's (16 sequences); the step is two of them.
        QVERIFY2(contains(toml, "# Model:     llama3-8b (builtin:llama3-8b), batch 16, sequence 2048\n"), toml.c_str());
        const std::map<std::string, std::string> want = {
            {"model.name", "\"llama3\""},
            {"model.flavor", "\"8B\""},
            {"training.local_batch_size", "2"},
            {"training.global_batch_size", "32"},
            {"training.seq_len", "2048"},
            {"training.mixed_precision_param", "\"bfloat16\""},
            {"parallelism.data_parallel_replicate_degree", "1"},
            {"parallelism.data_parallel_shard_degree", "8"},
            {"parallelism.fsdp_reshard_after_forward", "\"default\""},
            {"parallelism.tensor_parallel_degree", "1"},
            {"parallelism.context_parallel_degree", "1"},
            {"parallelism.pipeline_parallel_degree", "1"},
            {"activation_checkpoint.mode", "\"selective\""},
            {"activation_checkpoint.selective_ac_option", "\"op\""},
            {"compile.enable", "true"},
            {"compile.components", "[\"model\", \"loss\"]"},
        };
        QCOMPARE(tomlEntries(toml), want);
        // Two rounds of 2 × 8 sequences: torchtitan's gradient accumulation steps.
        QVERIFY2(contains(toml, "= 2 gradient accumulation steps"), toml.c_str());
        // The plan's compiled kernels and fused loss are torch.compile's on the model and the loss.
        QVERIFY2(contains(toml, "torch.compile"), toml.c_str());
        QVERIFY2(!contains(toml, "torchtitan's loss is eager F.cross_entropy"), toml.c_str());

        if (python().isEmpty()) QSKIP("python3 not found: the TOML is not read back with tomllib");
        QByteArray error;
        const nlohmann::json parsed = tomllibParse(toml, &error);
        const nlohmann::json expected = {
            {"model", {{"name", "llama3"}, {"flavor", "8B"}}},
            {"training", {{"local_batch_size", 2}, {"global_batch_size", 32}, {"seq_len", 2048}, {"mixed_precision_param", "bfloat16"}}},
            {"parallelism",
             {{"data_parallel_replicate_degree", 1},
              {"data_parallel_shard_degree", 8},
              {"fsdp_reshard_after_forward", "default"},
              {"tensor_parallel_degree", 1},
              {"context_parallel_degree", 1},
              {"pipeline_parallel_degree", 1}}},
            {"activation_checkpoint", {{"mode", "selective"}, {"selective_ac_option", "op"}}},
            {"compile", {{"enable", true}, {"components", {"model", "loss"}}}},
        };
        QVERIFY2(parsed == expected, (parsed.dump() + "\n" + error.toStdString()).c_str());
    }

    // Eager kernels (torchtitan without torch.compile): compile off; the loss as the plan prices it.
    void torchtitanEagerKernels() {
        MemoryPolicy eager;
        eager.fusion = KernelFusion::Eager;
        eager.crossEntropy = CrossEntropyKernel::Eager;
        std::string toml = torchtitanOk(estimated("builtin:llama3-8b", 32, 2048, "tp=1,dp=8,zero=3,mbs=2,recompute=op", eager));
        auto e = tomlEntries(toml);
        QCOMPARE(e.at("compile.enable"), std::string("false"));
        QVERIFY(!e.count("compile.components"));
        QVERIFY2(!contains(toml, "torchtitan's loss is eager F.cross_entropy"), toml.c_str());
        // A fused loss under eager kernels is not torchtitan's: the file says so.
        eager.crossEntropy = CrossEntropyKernel::Fused;
        toml = torchtitanOk(estimated("builtin:llama3-8b", 32, 2048, "tp=1,dp=8,zero=3,mbs=2,recompute=op", eager));
        QCOMPARE(tomlEntries(toml).at("compile.enable"), std::string("false"));
        QVERIFY2(contains(toml, "torchtitan's loss is eager F.cross_entropy"), toml.c_str());
        // Compiled kernels with torchtitan's eager loss: the model compiled, the loss not.
        MemoryPolicy compiled;
        compiled.crossEntropy = CrossEntropyKernel::Eager;
        toml = torchtitanOk(estimated("builtin:llama3-8b", 32, 2048, "tp=1,dp=8,zero=3,mbs=2,recompute=op", compiled));
        QCOMPARE(tomlEntries(toml).at("compile.components"), std::string("[\"model\"]"));
    }

    // Tensor parallel 2 × data parallel 4 at ZeRO-1: torchtitan runs DDP only alone, so FSDP2
    // without resharding after the forward (ZeRO-2), and says that the plan's ZeRO-1 is not it.
    void torchtitanTensorParallel() {
        const PlanRun run = estimated("builtin:llama3-8b", 16, 2048, "tp=2,dp=4,zero=1,mbs=4,recompute=full,sp=on");
        const std::string toml = torchtitanOk(run);
        const auto e = tomlEntries(toml);
        QCOMPARE(e.at("parallelism.tensor_parallel_degree"), std::string("2"));
        QCOMPARE(e.at("parallelism.data_parallel_shard_degree"), std::string("4"));
        QCOMPARE(e.at("parallelism.data_parallel_replicate_degree"), std::string("1"));
        QCOMPARE(e.at("parallelism.fsdp_reshard_after_forward"), std::string("\"never\""));
        QCOMPARE(e.at("training.local_batch_size"), std::string("4"));
        QCOMPARE(e.at("training.global_batch_size"), std::string("16"));
        QCOMPARE(e.at("activation_checkpoint.mode"), std::string("\"full\""));
        QVERIFY(!e.count("activation_checkpoint.selective_ac_option"));
        QVERIFY2(contains(toml, "torchtitan has no ZeRO-1 mode"), toml.c_str());
        QVERIFY2(contains(toml, "sequence parallel (SequenceParallel on the norms), as the plan is"), toml.c_str());

        // Without sequence parallelism the file says torchtitan's differs.
        const PlanRun noSp = estimated("builtin:llama3-8b", 16, 2048, "tp=2,dp=4,zero=1,mbs=4,recompute=none,sp=off");
        const std::string plain = torchtitanOk(noSp);
        QVERIFY2(contains(plain, "the plan is not, so the job's activation"), plain.c_str());
        QCOMPARE(tomlEntries(plain).at("activation_checkpoint.mode"), std::string("\"none\""));

        // ZeRO-0 is DDP, which torchtitan applies only as the sole parallelism.
        const PlanRun ddp = estimated("builtin:llama3-8b", 16, 2048, "tp=1,dp=8,zero=0,mbs=2,recompute=full");
        const auto d = tomlEntries(torchtitanOk(ddp));
        QCOMPARE(d.at("parallelism.data_parallel_replicate_degree"), std::string("8"));
        QCOMPARE(d.at("parallelism.data_parallel_shard_degree"), std::string("1"));
        QVERIFY(!d.count("parallelism.fsdp_reshard_after_forward"));
        const PlanRun ddpTp = estimated("builtin:llama3-8b", 16, 2048, "tp=2,dp=4,zero=0,mbs=4,recompute=full");
        auto r = torchtitanOf(ddpTp, ddpTp.outcome.plan);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.unsupported"));
        QVERIFY2(contains(r.error().message, "applies DDP only when data parallelism is the only parallelism"), text(r.error()).constData());
    }

    // Context parallelism: the sequence split over cp, the keys and values all-gathered — torchtitan's
    // allgather rotation and Megatron-LM's all_gather exchange, cp between dp and tp in both.
    void contextParallelIsExported() {
        const PlanRun run = estimated("builtin:llama3-8b", 8, 2048, "tp=2,dp=2,cp=2,zero=1,mbs=1,recompute=none,sp=on");
        const std::string toml = torchtitanOk(run);
        const auto e = tomlEntries(toml);
        QCOMPARE(e.at("parallelism.context_parallel_degree"), std::string("2"));
        QCOMPARE(e.at("parallelism.context_parallel_rotate_method"), std::string("\"alltoall\""));  // the ring, by default
        QCOMPARE(e.at("parallelism.tensor_parallel_degree"), std::string("2"));
        QCOMPARE(e.at("parallelism.data_parallel_shard_degree"), std::string("2"));
        QCOMPARE(e.at("training.local_batch_size"), std::string("1"));
        QVERIFY2(contains(toml, "as the plan is"), toml.c_str());  // sequence parallel over tp beside cp
        auto m = exportPlan(run.model->graph, run.outcome.plan, ExportFormat::Megatron, {}, &*run.model->config);
        QVERIFY2(m.ok(), m.ok() ? "" : m.error().toString().c_str());
        QVERIFY2(contains(*m, "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --context-parallel-size 2 --cp-comm-type p2p --sequence-parallel "
                                 "--use-distributed-optimizer"),
                 m->c_str());
        // All-gather context parallelism: allgather rotation, --cp-comm-type all_gather.
        const PlanRun gathered = estimated("builtin:llama3-8b", 8, 2048, "tp=2,dp=2,cp=2,cp_comm=all_gather,zero=1,mbs=1,recompute=none,sp=on");
        QCOMPARE(tomlEntries(torchtitanOk(gathered)).at("parallelism.context_parallel_rotate_method"), std::string("\"allgather\""));
        auto mg = exportPlan(gathered.model->graph, gathered.outcome.plan, ExportFormat::Megatron, {}, &*gathered.model->config);
        QVERIFY2(mg.ok() && contains(*mg, "--context-parallel-size 2 --cp-comm-type all_gather"), mg.ok() ? mg->c_str() : "");
        // Without context parallelism neither says so.
        const PlanRun plain = estimated("builtin:llama3-8b", 8, 2048, "tp=2,dp=4,zero=1,mbs=1,recompute=none,sp=on");
        // A plan priced with eager kernels: the Megatron-LM export says its fused kernels differ.
        auto noteOf = [](const PlanRun& r) {
            std::vector<std::string> notes;
            auto out = exportPlan(r.model->graph, r.outcome.plan, ExportFormat::Megatron, {}, &*r.model->config, {}, &notes);
            std::string all;
            for (const std::string& n : notes) all += n + "\n";
            return out.ok() ? all : std::string("error");
        };
        QVERIFY(!contains(noteOf(plain), "eager kernels"));
        MemoryPolicy eagerPolicy;
        eagerPolicy.fusion = KernelFusion::Eager;
        const std::string eagerNotes = noteOf(estimated("builtin:llama3-8b", 8, 2048, "tp=2,dp=4,zero=1,mbs=1,recompute=none,sp=on", eagerPolicy));
        QVERIFY2(contains(eagerNotes, "the plan prices eager kernels") && contains(eagerNotes, "--fusion compiled"), eagerNotes.c_str());
        QCOMPARE(tomlEntries(torchtitanOk(plain)).at("parallelism.context_parallel_degree"), std::string("1"));
        QVERIFY(!contains(torchtitanOk(plain), "context_parallel_rotate_method"));
    }

    // Pipelines: the degree, PyTorch's schedule name, the micro-batch and the plan's stage split.
    void torchtitanPipeline() {
        const PlanRun run = estimated("builtin:llama3-8b", 16, 2048, "tp=1,dp=4,pp=2,zero=1,mbs=1,recompute=none");
        QVERIFY(run.outcome.plan.pipeline.has_value());
        const std::string toml = torchtitanOk(run);
        const auto e = tomlEntries(toml);
        QCOMPARE(e.at("parallelism.pipeline_parallel_degree"), std::string("2"));
        QCOMPARE(e.at("parallelism.pipeline_parallel_schedule"), std::string("\"1F1B\""));
        QCOMPARE(e.at("parallelism.pipeline_parallel_microbatch_size"), std::string("1"));
        QCOMPARE(e.at("parallelism.data_parallel_shard_degree"), std::string("4"));
        // A step's 4 micro-batches per data-parallel rank, one step.
        QCOMPARE(e.at("training.local_batch_size"), std::string("4"));
        QCOMPARE(e.at("training.global_batch_size"), std::string("16"));
        QVERIFY2(contains(toml, "  [\"tok_embeddings\", \"layers.0\", "), toml.c_str());
        QVERIFY2(contains(toml, "\"layers.15\"],\n  [\"layers.16\", "), toml.c_str());
        QVERIFY2(contains(toml, "\"layers.31\", \"norm\", \"output\"],\n]\n"), toml.c_str());

        const PlanRun interleaved = estimated("builtin:llama3-8b", 16, 2048, "tp=1,dp=4,pp=2,vp=2,zero=1,mbs=1,recompute=none");
        const std::string itoml = torchtitanOk(interleaved);
        QCOMPARE(tomlEntries(itoml).at("parallelism.pipeline_parallel_schedule"), std::string("\"Interleaved1F1B\""));
        QVERIFY2(contains(itoml, "\"layers.7\"],\n  [\"layers.8\", "), itoml.c_str());
        QVERIFY2(contains(itoml, "\"layers.23\"],\n  [\"layers.24\", "), itoml.c_str());

        // A schedule PyTorch has no class for: run from its actions in a CSV beside the TOML,
        // which a file on stdout cannot have.
        Plan zb = run.outcome.plan;
        zb.pipeline->schedule = PipeScheduleKind::ZeroBubbleH1;
        auto r = torchtitanOf(run, zb);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.unsupported"));
        QVERIFY2(contains(r.error().message, "no class for the plan's zb-h1 schedule"), text(r.error()).constData());
        QVERIFY(!renderExportFiles(run.model->graph, zb, ExportFormat::Torchtitan, "-", &*run.model->config).ok());
        const auto files = must(renderExportFiles(run.model->graph, zb, ExportFormat::Torchtitan, "out/job.toml", &*run.model->config), "zb-h1 files");
        QCOMPARE(files.size(), size_t{2});
        QCOMPARE(QString::fromStdString(files[1].path), QString("out/job.schedule.csv"));
        const auto ze = tomlEntries(files[0].text);
        QCOMPARE(ze.at("parallelism.pipeline_parallel_schedule"), std::string("\"PipelineScheduleSingle\""));
        QCOMPARE(ze.at("parallelism.pipeline_parallel_schedule_csv"), std::string("\"job.schedule.csv\""));
        // The CSV is the plan's schedule: its actions read back are the generated ones.
        const PipeSchedule generated = must(makeSchedule(PipeScheduleKind::ZeroBubbleH1, zb.pipeline->stages, 1, zb.pipeline->microBatches), "zb-h1");
        QCOMPARE(QString::fromStdString(files[1].text), QString::fromStdString(generated.toCsv()));
        const PipeSchedule back = must(scheduleFromCsv(files[1].text, zb.pipeline->stages, 1), "csv read back");
        QCOMPARE(back.actions.size(), generated.actions.size());
        for (size_t k = 0; k < back.actions.size(); ++k) QVERIFY(back.actions[k] == generated.actions[k]);
        QVERIFY2(contains(files[1].text, "0I0,0W0"), files[1].text.c_str());
        // Other plans have no such file; DualPipe (two copies of the model) has no torchtitan form.
        QCOMPARE(must(renderExportFiles(run.model->graph, run.outcome.plan, ExportFormat::Torchtitan, "job.toml", &*run.model->config), "1f1b").size(),
                 size_t{1});
        zb.pipeline->schedule = PipeScheduleKind::DualPipe;
        r = torchtitanOf(run, zb);
        QVERIFY(!r.ok());
        QVERIFY2(contains(r.error().message, "runs dualpipe"), text(r.error()).constData());

        if (python().isEmpty()) QSKIP("python3 not found: the TOML is not read back with tomllib");
        QByteArray error;
        const nlohmann::json parsed = tomllibParse(itoml, &error);
        const auto& parts = parsed["parallelism"]["module_fqns_per_model_part"];
        QVERIFY2(parts.is_array() && parts.size() == 4, (parsed.dump() + error.toStdString()).c_str());
        QCOMPARE(parts[0].size(), size_t{9});   // tok_embeddings + 8 layers
        QCOMPARE(parts[3].size(), size_t{10});  // 8 layers + norm + output
        QCOMPARE(parsed["parallelism"]["pipeline_parallel_schedule"].get<std::string>(), std::string("Interleaved1F1B"));
    }

    // A model torchtitan has no flavor of: the file names it and says which arguments to register.
    void torchtitanCustomFlavor() {
        const PlanRun run = estimated(CFP_TEST_DATA_DIR "/export/llama_tiny_config.json", 8, 128, "tp=2,dp=4,zero=3,mbs=1,recompute=none,sp=on");
        std::vector<std::string> notes;
        const std::string toml = must(torchtitanOf(run, run.outcome.plan, &notes), "export");
        QCOMPARE(tomlEntries(toml).at("model.flavor"), std::string("\"llama_tiny_config\""));
        QVERIFY2(contains(toml, "TransformerModelArgs(dim=128, n_layers=2, n_heads=8, n_kv_heads=4, vocab_size=512, multiple_of=32, "
                                "norm_eps=1.0000000000000001e-05, rope_theta=10000)"),
                 toml.c_str());
        QVERIFY(!notes.empty());
        QVERIFY2(contains(notes.front(), "no llama3 flavor"), notes.front().c_str());
        // A name with characters TOML must escape: a tab, DEL, invalid UTF-8 (replaced by U+FFFD).
        ModelConfig odd = *run.model->config;
        odd.name = "tiny\t\x7f\xff";
        const std::string oddToml = must(exportPlan(run.model->graph, run.outcome.plan, ExportFormat::Torchtitan, {}, &odd), "odd name");
        QCOMPARE(tomlEntries(oddToml).at("model.flavor"), std::string("\"tiny\\t\\u007f\xef\xbf\xbd\""));
    }

    void torchtitanRefusals() {
        // GPT: torchtitan has no model for it.
        const PlanRun gpt = estimated("builtin:gpt3-125m", 8, 128, "tp=1,dp=8,zero=1,mbs=1,recompute=none");
        auto r = torchtitanOf(gpt, gpt.outcome.plan);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.unsupported"));
        QVERIFY2(contains(r.error().message, "torchtitan has no GPT model"), text(r.error()).constData());
        // The hand-made GPT plan has no builder model: refused as well.
        Fixture f = makeFixture();
        auto h = exportPlan(f.graph(), f.plan, ExportFormat::Torchtitan);
        QVERIFY(!h.ok());
        QCOMPARE(QString::fromStdString(h.error().code), QString("export.unsupported"));

        // Not one layout: a layer norm split over a mesh axis, the first place named.
        const PlanRun llama = estimated("builtin:llama3-8b", 16, 2048, "tp=2,dp=4,zero=1,mbs=4,recompute=none,sp=on");
        Plan odd = llama.outcome.plan;
        const Graph& g = llama.model->graph;
        std::string normName;
        for (const Op& op : g.ops())
            if (op.kind == OpKind::Parameter && op.role == ParamRole::Trainable && op.type.rank() == 1 && startsWithLayer1(op.scope) &&
                contains(op.scope, "norm")) {
                normName = op.name;
                odd.tensors[static_cast<size_t>(op.id)].result = must(parseSharding("[{" + odd.mesh.axes().front().name + "}]"), "norm");
                break;
            }
        QVERIFY(!normName.empty());
        r = torchtitanOf(llama, odd);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.not_uniform"));
        QVERIFY2(contains(r.error().message, "plan is not a uniform torchtitan layout: "), text(r.error()).constData());
        QVERIFY2(contains(r.error().message, "torchtitan replicates norm parameters"), text(r.error()).constData());
        QCOMPARE(QString::fromStdString(r.error().where), QString::fromStdString(normName));
    }

    void torchtitanDeterministic() {
        const PlanRun a = estimated("builtin:llama3-8b", 16, 2048, "tp=2,dp=4,zero=1,mbs=4,recompute=op,sp=on");
        const std::string first = torchtitanOk(a);
        QCOMPARE(torchtitanOk(a), first);
        QVERIFY(endsWith(first, "\n"));
    }

    // ---- errors and determinism -----------------------------------------------------------------
    void badPlans() {
        Fixture f = makeFixture();
        Plan missing = f.plan;
        missing.tensors.resize(10);
        auto r = exportPlan(f.graph(), missing, ExportFormat::Jax);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_plan"));

        Fixture wrongRank = makeFixture();
        wrongRank.setResult("final_norm.weight", "[{},{}]");
        r = exportPlan(wrongRank.graph(), wrongRank.plan, ExportFormat::HloSharding);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_plan"));
        QVERIFY(contains(r.error().message, "final_norm.weight"));

        Fixture uneven = makeFixture();
        uneven.setResult("embed.tokens.weight", "[{dp},{}]");  // vocabulary 50257 is odd
        r = exportPlan(uneven.graph(), uneven.plan, ExportFormat::DTensor);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_plan"));

        Fixture partial = makeFixture();
        partial.setResult("final_norm.weight", "[{}] partial{tp}");
        r = exportPlan(partial.graph(), partial.plan, ExportFormat::Megatron);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().code), QString("export.bad_plan"));
    }

    void deterministic() {
        const auto timeline = sampleTimeline();
        for (const auto& name : exportFormatNames()) {
            const ExportFormat format = *parseExportFormat(name);
            if (format == ExportFormat::Torchtitan) continue;  // a GPT plan: refused (torchtitanDeterministic)
            Fixture a = makeFixture(), b = makeFixture();
            const std::string first = exportOk(a, format, timeline);
            QCOMPARE(exportOk(a, format, timeline), first);
            QCOMPARE(exportOk(b, format, timeline), first);
            QVERIFY2(endsWith(first, "\n"), name.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
