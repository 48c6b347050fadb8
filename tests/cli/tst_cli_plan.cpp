// End-to-end tests of `cfp plan`, `cfp export` and `cfp hardware`: the built binary is run with
// QProcess on a small model (GPT-3 125M, batch 8, sequence 128) on one node of 8 H100s, and its
// outputs are checked against docs/plan-format.md, docs/plan.schema.json and docs/exporters.md.
//
// Kept fast (a few seconds): every plan is on a 1-D mesh of 8, except one `--mesh auto` run on a
// 4-GPU node (a hardware file derived from h100-sxm). On 8 GPUs `--mesh auto` also plans 2x2x2,
// which alone takes over a minute of CPU for this model.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run runProgram(const QString& program, const QStringList& args, const QString& workDir = {}) {
    QProcess p;
    if (!workDir.isEmpty()) p.setWorkingDirectory(workDir);
    p.start(program, args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
        return {-2, p.readAllStandardOutput(), "timed out: " + p.readAllStandardError()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

Run cfp(const QStringList& args) { return runProgram(QStringLiteral(CFP_CLI_PATH), args); }

QString python() { return QStandardPaths::findExecutable(QStringLiteral("python3")); }

Run runPython(const char* script, const QStringList& args) {
    return runProgram(python(), QStringList{"-c", QString::fromUtf8(script)} + args);
}

QJsonDocument parseJson(const QByteArray& text) {
    QJsonParseError e;
    QJsonDocument doc = QJsonDocument::fromJson(text, &e);
    if (e.error != QJsonParseError::NoError)
        qWarning("bad JSON at offset %d: %s", e.offset, qPrintable(e.errorString()));
    return doc;
}

QByteArray slurp(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

bool nearlyEqual(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)); }

// The model of every plan here, and the options `cfp export` rebuilds it with from the plan file.
const QStringList kModel{"builtin:gpt3-125m", "--batch", "8", "--seq", "128"};

QStringList planArgs(const QStringList& extra) { return QStringList{"plan"} + kModel + extra; }

// Pins that make every block of gpt3-125m on {x=8} split the batch (entry matmul rows, attention
// batch dim) with the weights replicated: the data-parallel layout. Segment types follow the
// layers: T0 = layer 0 (6 blocks: QKV, two attention cores, out, fc1, fc2; it also computes the
// causal mask), T1 = layers 1-11 (the same 6 blocks), T2 = the LM head's block.
const QStringList kDataParallelPins{"--pin", "T0=x:rows,x:batch0,x:batch0,x:rows,x:rows,x:rows",
                                    "--pin", "T1=x:rows,x:batch0,x:batch0,x:rows,x:rows,x:rows",
                                    "--pin", "T2=x:rows"};
// Megatron tensor parallelism over all 8 GPUs: column-parallel QKV/fc1, row-parallel out/fc2
// (the "contract" strategy), attention split on its batch (= heads) dim, the LM head contracting.
const QStringList kTensorParallelPins{"--pin", "T0=x:cols,x:batch0,x:batch0,x:contract,x:cols,x:contract",
                                      "--pin", "T1=x:cols,x:batch0,x:batch0,x:contract,x:cols,x:contract",
                                      "--pin", "T2=x:contract"};

// One error line on stderr, nothing on stdout.
#define CHECK_ONE_LINE_ERROR(run)                                                     \
    do {                                                                              \
        QVERIFY2((run).out.isEmpty(), (run).out.left(200).constData());               \
        QVERIFY2((run).err.startsWith("cfp: error: "), (run).err.constData());        \
        QCOMPARE((run).err.count('\n'), 1);                                           \
    } while (0)

// Prints the keys of the dict literal assigned to NAME (argv[2]) in the Python file argv[1], one
// per line, after checking that the file parses.
const char* kDictKeysScript = R"PY(
import ast, sys
tree = ast.parse(open(sys.argv[1]).read(), sys.argv[1])
for node in tree.body:
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == sys.argv[2] for t in node.targets):
        for k in node.value.keys:
            print(ast.literal_eval(k))
        sys.exit(0)
print("no assignment to " + sys.argv[2])
sys.exit(3)
)PY";

const char* kSchemaScript = R"PY(
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
doc = json.load(open(sys.argv[2]))
errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
for e in errors[:5]:
    print("/%s: %s" % ("/".join(map(str, e.absolute_path)), e.message[:300]))
sys.exit(1 if errors else 0)
)PY";

}  // namespace

class TestCliPlan : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString planPath_;            // `cfp plan kModel --mesh 8 -o`
    QJsonObject summary_;         // its --json summary
    QStringList trainable_;       // trainable parameter names of the graph, in op order

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        planPath_ = path("plan.json");
        Run r = cfp(planArgs({"--mesh", "8", "--json", "-o", planPath_}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.isEmpty(), r.err.constData());  // no progress when stderr is not a terminal
        summary_ = parseJson(r.out).object();
        QVERIFY(!summary_.isEmpty());

        const QString graphPath = path("graph.json");
        Run g = cfp(QStringList{"graph"} + kModel + QStringList{"-o", graphPath});
        QVERIFY2(g.exitCode == 0, g.err.constData());
        for (const QJsonValue& n : parseJson(slurp(graphPath)).object()["nodes"].toArray())
            if (n.toObject()["role"].toString() == "trainable") trainable_ << n.toObject()["name"].toString();
        QCOMPARE(trainable_.size(), 2 + 12 * 12 + 2);  // embeddings, 12 layers of 12, final norm
    }

    // ---- cfp plan ----

    // Sequence parallelism is a search dimension: under a tight memory limit the plan on {x=8}
    // splits weights over x, the variant with sequence parallelism over x is planned beside it and
    // wins (less activation memory buys less recomputation: 7.8 against 12.9 ms), and at a lower
    // limit only it fits; --sequence-parallel off never tries it.
    void planSearchesSequenceParallel() {
        const QStringList common{"--mesh", "8", "--memory-limit", "600MiB", "--accumulation", "1", "--zero", "1", "--no-baselines", "--json", "--quiet"};
        Run on = cfp(planArgs(common));
        QVERIFY2(on.exitCode == 0, on.err.constData());
        Run off = cfp(planArgs(common + QStringList{"--sequence-parallel", "off"}));
        QVERIFY2(off.exitCode == 0, off.err.constData());
        const QJsonObject a = parseJson(on.out).object(), b = parseJson(off.out).object();
        QCOMPARE(a["memory_policy"].toObject()["sequence_parallel"].toString(), QString("x"));
        QVERIFY(b["memory_policy"].toObject()["sequence_parallel"].isNull());
        QVERIFY2(a["step_seconds"].toDouble() < b["step_seconds"].toDouble(),
                 qPrintable(QString("%1 vs %2").arg(a["step_seconds"].toDouble()).arg(b["step_seconds"].toDouble())));
        bool variant = false;
        for (const QJsonValue& v : a["meshes_tried"].toArray()) variant = variant || v.toObject()["sequence_parallel"].toString() == "x";
        QVERIFY(variant);
        for (const QJsonValue& v : b["meshes_tried"].toArray()) QVERIFY(v.toObject()["sequence_parallel"].isNull());
        const QStringList tighter{"--mesh", "8", "--memory-limit", "500MiB", "--accumulation", "1", "--zero", "1", "--no-baselines", "--quiet"};
        QCOMPARE(cfp(planArgs(tighter)).exitCode, 0);
        Run none = cfp(planArgs(tighter + QStringList{"--sequence-parallel", "off"}));
        QVERIFY(none.exitCode != 0 && none.err.contains("fits in 500.00 MiB"));
        // Nothing fits either way: the error says both were tried, and the closest.
        Run neither = cfp(planArgs({"--mesh", "8", "--memory-limit", "300MiB", "--accumulation", "1", "--no-baselines", "--quiet"}));
        QVERIFY(neither.exitCode != 0);
        QVERIFY2(neither.err.contains("no plan fits with or without sequence parallelism; the closest: no plan on mesh"), neither.err.constData());
        QVERIFY2(neither.err.contains("at ZeRO stages 1 to 3"), neither.err.constData());  // --zero auto tried them all
        Run bad = cfp(planArgs({"--sequence-parallel", "on"}));
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.contains("--sequence-parallel"));
    }

    // --pp auto: the counts of stages tried, in the text and the JSON; a fixed mesh is refused.
    void planSearchesPipelineStages() {
        Run json = cfp(planArgs({"--pp", "auto", "--sequence-parallel", "off", "--json", "--quiet"}));
        QVERIFY2(json.exitCode == 0, json.err.constData());
        const QJsonObject o = parseJson(json.out).object();
        const QJsonArray tried = o["pipeline_stages_tried"].toArray();
        QCOMPARE(tried.size(), 3);  // no stages, 2 and 4 (12 layers on 8 GPUs)
        double fastest = 0;
        for (const QJsonValue& v : tried) {
            const QJsonObject t = v.toObject();
            QVERIFY(t["planned"].toBool());
            if (fastest == 0 || t["step_seconds"].toDouble() < fastest) fastest = t["step_seconds"].toDouble();
        }
        QCOMPARE(tried[0].toObject()["pipeline_stages"].toInt(), 1);
        QCOMPARE(o["step_seconds"].toDouble(), fastest);
        Run text = cfp(planArgs({"--pp", "auto", "--sequence-parallel", "off", "--quiet"}));
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY2(text.out.contains("pipeline stages tried:") && text.out.contains("no stages: ") && text.out.contains("pp 4: ") &&
                     text.out.contains("(chosen)"),
                 text.out.constData());
        Run fixed = cfp(planArgs({"--pp", "auto", "--mesh", "4", "--quiet"}));
        QVERIFY(fixed.exitCode != 0);
        QVERIFY2(fixed.err.contains("--mesh") && fixed.err.contains("mesh auto"), fixed.err.constData());
        Run bad = cfp(planArgs({"--pp", "some"}));
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.contains("--pp"));
    }

    void planJsonHasTheFields() {
        const QJsonObject& j = summary_;
        for (const char* key : {"model", "hardware", "devices", "mesh", "predicted_step_seconds", "evaluator_step_seconds",
                                "step", "memory_per_device_bytes", "memory_limit_bytes", "memory_breakdown_bytes",
                                "segments", "baselines", "baseline_details", "meshes_tried", "pins", "search_exact",
                                "search_seconds", "memory_policy"})
            QVERIFY2(j.contains(key), key);
        const QJsonObject policy = j["memory_policy"].toObject();
        QCOMPARE(policy["optimizer_sharding"].toBool(), true);
        QCOMPARE(policy["recompute"].toString(), QString("auto"));
        QVERIFY(policy.contains("recomputed_blocks"));
        QCOMPARE(j["model"].toString(), QString("gpt3-125m"));
        QCOMPARE(j["hardware"].toString(), QString("h100-sxm"));
        QCOMPARE(j["devices"].toInteger(), 8);
        QCOMPARE(j["mesh"].toString(), QString("{x=8 (intra)}"));
        // The mesh alone: its plan splits no weight, so no sequence-parallel variant is tried.
        QCOMPARE(j["meshes_tried"].toArray().size(), 1);
        QVERIFY(j["meshes_tried"].toArray()[0].toObject()["sequence_parallel"].isNull());
        QVERIFY(j["pins"].toArray().isEmpty());

        const double predicted = j["predicted_step_seconds"].toDouble();
        const double evaluated = j["evaluator_step_seconds"].toDouble();
        QVERIFY(predicted > 0 && std::isfinite(predicted));
        QVERIFY2(nearlyEqual(predicted, evaluated, 1e-9), qPrintable(QString("predicted %1 evaluator %2").arg(predicted, 0, 'g', 17).arg(evaluated, 0, 'g', 17)));
        QVERIFY(nearlyEqual(j["step"].toObject()["seconds"].toDouble(), evaluated, 1e-12));

        const qint64 memory = j["memory_per_device_bytes"].toInteger();
        const qint64 limit = j["memory_limit_bytes"].toInteger();
        QVERIFY(memory > 0);
        QCOMPARE(limit, (qint64(80) << 30) - (qint64(6) << 30));  // h100-sxm usable memory (HBM less its reserve), no --memory-limit
        QVERIFY(memory <= limit);
        qint64 parts = 0;
        for (const QJsonValue& v : j["memory_breakdown_bytes"].toObject()) parts += v.toInteger();
        QCOMPARE(parts, memory);

        const QJsonArray segments = j["segments"].toArray();
        QCOMPARE(segments.size(), 13);  // first segment, 11 repeated layer segments, last segment
        for (int i = 0; i < segments.size(); ++i) {
            const QJsonObject s = segments[i].toObject();
            QCOMPARE(s["index"].toInt(), i);
            const QJsonArray combination = s["combination"].toArray();
            QVERIFY(!combination.isEmpty());
            for (const QJsonValue& c : combination) QVERIFY(c.isDouble() && c.toInt() >= 0);
            QCOMPARE(s["labels"].toArray().size(), combination.size());
            const QJsonObject cost = s["cost"].toObject();
            QVERIFY(cost["seconds"].toDouble() > 0);
            QVERIFY(nearlyEqual(cost["seconds"].toDouble(),
                                cost["compute_seconds"].toDouble() + cost["collective_seconds"].toDouble() +
                                    cost["reshard_seconds"].toDouble(),
                                1e-9));
            QCOMPARE(cost["provenance"].toString(), QString("modelled"));
        }

        const QJsonObject baselines = j["baselines"].toObject();
        QVERIFY(baselines.contains("data_parallel"));
        QVERIFY(baselines.contains("megatron"));
        for (const QJsonValue& v : baselines) QVERIFY(v.isDouble() || v.isNull());
        int fitting = 0;
        for (const QJsonValue& v : j["baseline_details"].toArray()) {
            const QJsonObject b = v.toObject();
            QCOMPARE(baselines[b["name"].toString()], b["step_seconds"]);
            if (!b["feasible"].toBool() || !b["fits"].toBool()) continue;
            ++fitting;
            // The search space contains both baselines' layouts on this mesh: never slower in the
            // search's objective (the simulated step re-times both: docs/planning.md).
            QVERIFY2(evaluated <= b["objective_seconds"].toDouble() * (1 + 1e-9),
                     qPrintable(b["name"].toString() + " is faster than the plan"));
        }
        QCOMPARE(fitting, 2);  // 125M fits easily both ways

        QVERIFY(j["search_seconds"].isDouble() && j["search_seconds"].toDouble() >= 0);
        QVERIFY(j["search_exact"].isBool());
    }

    void planHumanOutput() {
        const QString out = path("human.json");
        Run r = cfp(planArgs({"--mesh", "8", "--no-baselines", "-o", out}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.contains("gpt3-125m on 1 x 8"));
        QVERIFY(r.out.contains("step time"));
        QVERIFY(r.out.contains("memory/device"));
        QVERIFY(r.out.contains("segments"));
        QVERIFY(r.out.contains(("plan written to " + out).toUtf8()));
        QVERIFY(!r.out.contains("data_parallel"));  // --no-baselines
        QVERIFY(QFile::exists(out));
    }

    // cfp estimate: a configuration as users run it, with the fields scripts read.
    void estimateJsonHasTheFields() {
        Run r = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,zero=1,mbs=2,sp=off", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject j = parseJson(r.out).object();
        QVERIFY(j["step_seconds"].toDouble() > 0);
        // The step shown is the simulated one; the evaluator's sum is the search objective's.
        QCOMPARE(j["step_seconds"].toDouble(), j["simulated_step"].toObject()["seconds"].toDouble());
        QVERIFY(j["evaluator_step_seconds"].toDouble() > 0);
        QVERIFY(j["memory_per_device_bytes"].toInteger() > 0);
        QCOMPARE(j["usable_memory_bytes"].toInteger(), (qint64(74) << 30));
        QVERIFY(j["fits"].toBool());
        QCOMPARE(j["config"].toString(), QStringLiteral("tp=2,dp=4,zero=1,mbs=2,sp=off"));
        // The key left out (recompute) is chosen and said.
        QCOMPARE(j["estimated_config"].toString(), QStringLiteral("tp=2,dp=4,zero=1,mbs=2,recompute=none,sp=off"));
        const QJsonObject batch = j["batch"].toObject();
        QCOMPARE(batch["global"].toInt(), 32);
        QCOMPARE(batch["accumulation_steps"].toInt(), 4);
        QCOMPARE(batch["micro_batch_per_rank"].toInt(), 2);
        QCOMPARE(batch["data_parallel"].toInt(), 4);
        QVERIFY(j["memory_breakdown_bytes"].toObject().contains("activations"));
        QVERIFY(j["memory_policy"].toObject()["sequence_parallel"].isNull());
        // Sequence parallelism and per-op recomputation are stated as priced, in JSON and in text.
        Run sp = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,mbs=2,sp=on,recompute=op", "--json"});
        QVERIFY2(sp.exitCode == 0, sp.err.constData());
        const QJsonObject spPolicy = parseJson(sp.out).object()["memory_policy"].toObject();
        QCOMPARE(spPolicy["sequence_parallel"].toString(), QStringLiteral("tp"));
        QCOMPARE(spPolicy["recompute"].toString(), QStringLiteral("ops"));
        QVERIFY(parseJson(sp.out).object()["memory_breakdown_bytes"].toObject()["activations"].toInteger() <
                j["memory_breakdown_bytes"].toObject()["activations"].toInteger());
        Run spText = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,mbs=2,sp=on,recompute=op"});
        QVERIFY2(spText.out.contains("sequence parallel over tp") && spText.out.contains("recompute per op"), spText.out.constData());
        // Context parallelism: the sequence split over cp, said so; fewer activations per device
        // than the same data parallelism without it, more communication (the keys gathered).
        Run cp = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=2,cp=2,mbs=2,sp=off,zero=1", "--json"});
        QVERIFY2(cp.exitCode == 0, cp.err.constData());
        const QJsonObject cpj = parseJson(cp.out).object();
        QVERIFY2(cpj["parallelism"].toString().contains("context parallel 2 (cp: the sequence split; keys and values in a ring beside the attention)"),
                 cp.out.constData());
        QCOMPARE(cpj["estimated_config"].toString(), QStringLiteral("tp=2,dp=2,cp=2,cp_comm=p2p,zero=1,mbs=2,recompute=none,sp=off"));
        // All-gather context parallelism, asked for: said so, and slower than the ring.
        Run cpGather = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config",
                            "tp=2,dp=2,cp=2,mbs=2,sp=off,zero=1,cp_comm=all_gather", "--json"});
        QVERIFY2(cpGather.exitCode == 0, cpGather.err.constData());
        const QJsonObject cpg = parseJson(cpGather.out).object();
        QVERIFY2(cpg["parallelism"].toString().contains("keys and values all-gathered"), cpGather.out.constData());
        QVERIFY(cpg["step_seconds"].toDouble() > cpj["step_seconds"].toDouble());
        // The ring runs inside flash attention kernels: eager attention all-gathers by default and
        // refuses p2p.
        Run cpEager = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--attention", "eager", "--config",
                           "tp=2,dp=2,cp=2,mbs=2,sp=off,zero=1", "--json"});
        QVERIFY2(cpEager.exitCode == 0, cpEager.err.constData());
        QVERIFY(parseJson(cpEager.out).object()["estimated_config"].toString().contains(QStringLiteral("cp_comm=all_gather")));
        Run cpEagerRing = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--attention", "eager", "--config",
                               "tp=2,dp=2,cp=2,cp_comm=p2p,mbs=2,sp=off,zero=1"});
        QVERIFY(cpEagerRing.exitCode != 0);
        QVERIFY2(cpEagerRing.err.contains("use --attention flash, or cp_comm=all_gather"), cpEagerRing.err.constData());
        // cp left out and nothing fits without it: the estimate splits the sequence (2, 4, … ranks)
        // until a completion fits, said in the configuration it priced.
        Run cpChosen = cfp({"estimate", "builtin:gpt3-125m", "--seq", "2048", "--global-batch", "4", "--memory-limit", "560MiB", "--config", "tp=2",
                            "--json"});
        QVERIFY2(cpChosen.exitCode == 0, cpChosen.err.constData());
        const QJsonObject cpc = parseJson(cpChosen.out).object();
        QVERIFY2(cpc["estimated_config"].toString().startsWith(QStringLiteral("tp=2,dp=2,cp=2,cp_comm=p2p,")), cpChosen.out.constData());
        QVERIFY(cpc["fits"].toBool());
        // The chosen cp keeps the exchange the user named; where none is needed, none is said.
        Run cpChosenGathered = cfp({"estimate", "builtin:gpt3-125m", "--seq", "2048", "--global-batch", "4", "--memory-limit", "560MiB", "--config",
                                    "tp=2,cp_comm=all_gather", "--json"});
        QVERIFY2(parseJson(cpChosenGathered.out).object()["estimated_config"].toString().startsWith(QStringLiteral("tp=2,dp=2,cp=2,cp_comm=all_gather,")),
                 cpChosenGathered.out.constData());
        Run cpUnneeded = cfp({"estimate", "builtin:gpt3-125m", "--seq", "2048", "--global-batch", "4", "--config", "tp=2,cp_comm=p2p", "--json"});
        QVERIFY2(cpUnneeded.exitCode == 0, cpUnneeded.err.constData());
        QVERIFY2(!parseJson(cpUnneeded.out).object()["estimated_config"].toString().contains(QStringLiteral("cp")), cpUnneeded.out.constData());
        Run cpOne = cfp({"estimate", "builtin:gpt3-125m", "--config", "tp=2,cp=1,cp_comm=p2p"});
        QVERIFY(cpOne.exitCode != 0);
        QVERIFY2(cpOne.err.contains("cp_comm=p2p needs cp > 1"), cpOne.err.constData());
        Run cpBad = cfp({"estimate", "builtin:gpt3-125m", "--config", "cp=2,cp_comm=ring"});
        QVERIFY(cpBad.exitCode != 0);
        QVERIFY2(cpBad.err.contains("cp_comm=ring: expected p2p or all_gather"), cpBad.err.constData());
        QVERIFY(cpj["memory_breakdown_bytes"].toObject()["activations"].toInteger() < j["memory_breakdown_bytes"].toObject()["activations"].toInteger());
        // Eager kernels (--fusion eager): said in JSON and text, slower and holding more than the
        // compiled default; the plan file carries it; a wrong word is a usage error.
        const QString planFile = path(QStringLiteral("eager-plan.json"));
        Run eager = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,zero=1,mbs=2,sp=off",
                         "--fusion", "eager", "--json", "-o", planFile});
        QVERIFY2(eager.exitCode == 0, eager.err.constData());
        const QJsonObject ej = parseJson(eager.out).object();
        QCOMPARE(ej["memory_policy"].toObject()["fusion"].toString(), QStringLiteral("eager"));
        QCOMPARE(j["memory_policy"].toObject()["fusion"].toString(), QStringLiteral("compiled"));
        QVERIFY(ej["step_seconds"].toDouble() > j["step_seconds"].toDouble());
        QVERIFY(ej["memory_breakdown_bytes"].toObject()["activations"].toInteger() > j["memory_breakdown_bytes"].toObject()["activations"].toInteger());
        QFile written(planFile);
        QVERIFY(written.open(QIODevice::ReadOnly));
        QVERIFY(written.readAll().contains("\"fusion\": \"eager\""));
        if (!python().isEmpty()) {  // the schema admits it
            Run v = runPython(kSchemaScript, {QStringLiteral(CFP_SOURCE_DIR "/docs/plan.schema.json"), planFile});
            QVERIFY2(v.exitCode == 0, (v.out + v.err).constData());
        }
        Run eagerText = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,zero=1,mbs=2,sp=off",
                             "--fusion", "eager"});
        QVERIFY2(eagerText.out.contains("eager kernels"), eagerText.out.constData());
        Run badFusion = cfp({"estimate", "builtin:gpt3-125m", "--config", "tp=2,dp=4", "--fusion", "jit"});
        QCOMPARE(badFusion.exitCode, 2);
        QVERIFY2(badFusion.err.contains("--fusion: 'jit' is not compiled or eager"), badFusion.err.constData());
        Run cpPipe = cfp({"estimate", "builtin:gpt3-125m", "--config", "cp=2,pp=2"});
        QCOMPARE(cpPipe.exitCode, 1);
        QVERIFY2(cpPipe.err.contains("context parallelism with pipeline stages") && cpPipe.err.contains("[config.unsupported]"), cpPipe.err.constData());
        // cfp plan under per-layer recomputation (full, op) prices as cfp estimate does: the
        // plan's layout estimated with recompute=full has the plan's step and memory.
        Run full = cfp({"plan", "builtin:gpt3-125m", "--seq", "128", "--batch", "32", "--mesh", "dp=4,tp=2", "--no-baselines", "--zero", "1",
                        "--recompute", "full", "--json"});
        QVERIFY2(full.exitCode == 0, full.err.constData());
        const QJsonObject fj = parseJson(full.out).object();
        QCOMPARE(fj["memory_policy"].toObject()["recompute"].toString(), QStringLiteral("layers"));
        Run none = cfp({"plan", "builtin:gpt3-125m", "--seq", "128", "--batch", "32", "--mesh", "dp=4,tp=2", "--no-baselines", "--zero", "1",
                        "--recompute", "none", "--json"});
        QVERIFY2(none.exitCode == 0, none.err.constData());
        const QJsonObject nj = parseJson(none.out).object();
        QVERIFY(fj["memory_breakdown_bytes"].toObject()["activations"].toInteger() < nj["memory_breakdown_bytes"].toObject()["activations"].toInteger());
        QVERIFY(fj["step_seconds"].toDouble() > nj["step_seconds"].toDouble());  // the forward runs twice
        Run op = cfp({"plan", "builtin:gpt3-125m", "--seq", "128", "--batch", "32", "--mesh", "8", "--no-baselines", "--recompute", "op", "--json"});
        QVERIFY2(op.exitCode == 0, op.err.constData());
        QCOMPARE(parseJson(op.out).object()["memory_policy"].toObject()["recompute"].toString(), QStringLiteral("ops"));
        Run spAlone = cfp({"estimate", "builtin:gpt3-125m", "--config", "tp=1,sp=on"});
        QCOMPARE(spAlone.exitCode, 1);
        QVERIFY2(spAlone.err.contains("tp > 1"), spAlone.err.constData());
        // Human output says whether it fits; errors name --config.
        Run h = cfp({"estimate", "builtin:gpt3-125m", "--seq", "128", "--global-batch", "32", "--config", "tp=2,dp=4,mbs=2"});
        QVERIFY2(h.exitCode == 0, h.err.constData());
        QVERIFY(h.out.contains("fits"));
        Run bad = cfp({"estimate", "builtin:gpt3-125m", "--config", "tp=3"});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("--config") && bad.err.contains("[config.devices]"), bad.err.constData());
        Run missing = cfp({"estimate", "builtin:gpt3-125m"});
        QCOMPARE(missing.exitCode, 2);
        // cfp plan --config: the plan against the configuration, priced the same way.
        Run vs = cfp({"plan", "builtin:gpt3-125m", "--seq", "128", "--batch", "32", "--mesh", "auto", "--no-baselines", "--config",
                      "tp=2,dp=4,zero=1,mbs=2,sp=off", "--json"});
        QVERIFY2(vs.exitCode == 0, vs.err.constData());
        const QJsonObject p = parseJson(vs.out).object();
        const QJsonObject c = p["config_estimate"].toObject();
        QCOMPARE(c["config"].toString(), QStringLiteral("tp=2,dp=4,zero=1,mbs=2,sp=off"));
        QCOMPARE(c["estimated_config"].toString(), QStringLiteral("tp=2,dp=4,zero=1,mbs=2,recompute=none,sp=off"));
        QCOMPARE(c["step_seconds"].toDouble(), j["step_seconds"].toDouble());  // the same as cfp estimate
        QVERIFY(c["speedup_of_plan"].toDouble() >= 1.0 - 1e-9);                 // the planner is no slower
    }

    void planFileValidatesAgainstTheSchema() {
        const QByteArray text = slurp(planPath_);
        const QJsonObject plan = parseJson(text).object();
        QCOMPARE(plan["format"].toString(), QString("cfp-plan"));
        QVERIFY(plan["version"].isDouble());
        QCOMPARE(plan["version"].toInt(), 3);
        QVERIFY(text.endsWith("}\n"));
        QCOMPARE(plan["model"].toObject()["source"].toString(), QString("builtin:gpt3-125m"));
        QCOMPARE(plan["model"].toObject()["batch"].toInt(), 8);
        QCOMPARE(plan["model"].toObject()["seq"].toInt(), 128);
        // The file and the --json summary of the same run agree.
        QCOMPARE(plan["evaluator_step_seconds"].toDouble(), summary_["evaluator_step_seconds"].toDouble());
        QCOMPARE(plan["predicted_step_seconds"].toDouble(), summary_["predicted_step_seconds"].toDouble());
        QCOMPARE(plan["memory_per_device"].toObject()["total"].toInteger(), summary_["memory_per_device_bytes"].toInteger());
        QCOMPARE(plan["segments"].toArray().size(), summary_["segments"].toArray().size());

        if (python().isEmpty()) QSKIP("python3 is not installed");
        Run v = runPython(kSchemaScript, {QStringLiteral(CFP_SOURCE_DIR "/docs/plan.schema.json"), planPath_});
        QVERIFY2(v.exitCode == 0, (v.out + v.err).constData());
    }

    void planFileIsDeterministic() {
        const QString again = path("plan-again.json");
        Run r = cfp(planArgs({"--mesh", "8", "-o", again}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // `search.seconds` is the search's wall time (docs/plan-format.md), the one value that
        // differs from run to run by design; every other byte must be the same.
        const QRegularExpression wallTime(R"re(("search": \{\s*"seconds": )[^,\s]+)re");
        QString a = QString::fromUtf8(slurp(planPath_)), b = QString::fromUtf8(slurp(again));
        QVERIFY(a.contains(wallTime));
        QVERIFY(a.size() > 100000);
        a.replace(wallTime, "\\1 0");
        b.replace(wallTime, "\\1 0");
        QVERIFY(a == b);
    }

    void planErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("needles");
        QTest::newRow("unknown hardware")
            << QStringList{"--hardware", "nope"} << 1
            << QStringList{"nope", "h100-sxm", "h200", "a100-sxm-80gb", "v100-sxm-32gb", "hardware.unknown"};
        QTest::newRow("memory limit too small")
            << QStringList{"--memory-limit", "1MiB"} << 1 << QStringList{"short", "plan.infeasible"};
        QTest::newRow("pin of no block") << QStringList{"--pin", "b9999=0"} << 1 << QStringList{"b9999", "plan.bad_pin"};
        QTest::newRow("pin of no strategy") << QStringList{"--pin", "b0=nope"} << 1 << QStringList{"nope", "plan.bad_pin"};
        QTest::newRow("mesh of 3 on 8 GPUs") << QStringList{"--mesh", "3"} << 1 << QStringList{"8", "mesh.device_count"};
        QTest::newRow("memory limit not a size") << QStringList{"--memory-limit", "abc"} << 2 << QStringList{"--memory-limit", "abc"};
        QTest::newRow("memory limit unit") << QStringList{"--memory-limit", "4XB"} << 2 << QStringList{"--memory-limit", "XB"};
        QTest::newRow("zero nodes") << QStringList{"--nodes", "0"} << 2 << QStringList{"--nodes"};
        QTest::newRow("recompute value") << QStringList{"--recompute", "some"} << 2 << QStringList{"--recompute", "some", "auto, none, all, full, op"};
        QTest::newRow("recompute policy name") << QStringList{"--recompute", "layers"} << 2 << QStringList{"--recompute", "layers"};
        QTest::newRow("optimizer sharding value")
            << QStringList{"--optimizer-sharding", "yes"} << 2 << QStringList{"--optimizer-sharding", "on or off"};
        QTest::newRow("unknown option") << QStringList{"--frob"} << 2 << QStringList{"--frob"};
    }
    void planErrors() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QStringList, needles);
        const QString out = path("error-plan.json");
        QStringList all = planArgs(args);
        if (!args.contains("--mesh")) all << "--mesh" << "8";
        Run r = cfp(all + QStringList{"-o", out});
        QCOMPARE(r.exitCode, exitCode);
        CHECK_ONE_LINE_ERROR(r);
        for (const QString& n : needles) QVERIFY2(r.err.contains(n.toUtf8()), qPrintable(n + " not in: " + r.err));
        QVERIFY(!QFile::exists(out));  // nothing written on failure
    }

    void meshAutoPicksTheFastestCandidate() {
        // A 4-GPU-per-node H100: `--mesh auto` then plans {x=4} and {x=2, y=2}.
        QString spec = QString::fromUtf8(slurp(QStringLiteral(CFP_SOURCE_DIR "/resources/hardware/h100-sxm.json")));
        const QRegularExpression perNode(R"re("gpus_per_node":\s*8)re");
        QVERIFY(spec.contains(perNode));
        spec.replace(perNode, R"("gpus_per_node": 4)");
        const QString hw = path("h100-x4.json");
        {
            QFile f(hw);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(spec.toUtf8());
        }
        const QString out = path("auto.json");
        Run r = cfp(planArgs({"--hardware", hw, "--mesh", "auto", "--json", "-o", out}));
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject j = parseJson(r.out).object();
        QCOMPARE(j["devices"].toInteger(), 4);
        QCOMPARE(j["hardware"].toString(), hw);
        const QJsonArray tried = j["meshes_tried"].toArray();
        QVERIFY(tried.size() >= 2);
        QString fastest;
        double best = INFINITY;
        for (const QJsonValue& v : tried) {
            const QJsonObject c = v.toObject();
            // Planned, or skipped because its bound cannot beat the best found, or a sequence-parallel
            // variant without tensor parallelism (the note says so).
            QVERIFY2(c["planned"].toBool() || c["note"].toString().contains("is faster than") ||
                         (!c["sequence_parallel"].isNull() && c["note"].toString().contains("no tensor parallelism for sequence parallelism")),
                     qPrintable(c["mesh"].toString() + ": " + c["note"].toString()));
            if (c["planned"].toBool() && c["step_seconds"].toDouble() < best) {
                best = c["step_seconds"].toDouble();
                fastest = c["mesh"].toString();
            }
        }
        // The meshes close to the best objective are re-ranked by the simulated step: the plan is
        // the fastest of them simulated (docs/planning.md), else the best objective's.
        QString simFastest;
        double simBest = INFINITY;
        for (const QJsonValue& v : tried)
            if (v.toObject()["simulated_step_seconds"].isDouble() && v.toObject()["simulated_step_seconds"].toDouble() < simBest) {
                simBest = v.toObject()["simulated_step_seconds"].toDouble();
                simFastest = v.toObject()["mesh"].toString();
            }
        if (!simFastest.isEmpty()) {
            QCOMPARE(j["mesh"].toString(), simFastest);
            QVERIFY(nearlyEqual(j["step_seconds"].toDouble(), simBest, 1e-9));
            fastest = simFastest;
            for (const QJsonValue& v : tried)
                if (v.toObject()["mesh"].toString() == simFastest) best = v.toObject()["step_seconds"].toDouble();
        }
        QCOMPARE(j["mesh"].toString(), fastest);
        const double step = j["evaluator_step_seconds"].toDouble();
        QVERIFY(nearlyEqual(step, best, 1e-9));
        QVERIFY(nearlyEqual(step, j["predicted_step_seconds"].toDouble(), 1e-9));
        // docs/planning.md: with --mesh auto the plan is never slower than a baseline that fits.
        for (const QJsonValue& v : j["baseline_details"].toArray()) {
            const QJsonObject b = v.toObject();
            if (b["feasible"].toBool() && b["fits"].toBool())
                QVERIFY2(step <= b["objective_seconds"].toDouble() * 1.05 * (1 + 1e-9), qPrintable(b["name"].toString()));
        }
        // The plan names its hardware file; export reloads it for the trace.
        Run t = cfp({"export", out, "--format", "trace", "-o", "-"});
        QVERIFY2(t.exitCode == 0, t.err.constData());
        const QJsonObject other = parseJson(t.out).object()["otherData"].toObject();
        QCOMPARE(other["gpusPerNode"].toInt(), 4);
        QCOMPARE(other["mesh"].toString(), fastest);
    }

    // ---- cfp export ----

    void exportPythonModulesParse_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("dict");  // the dict keyed by every trainable parameter path
        QTest::newRow("jax") << "jax" << "PARTITION_SPECS";
        QTest::newRow("dtensor") << "dtensor" << "PLACEMENTS";
    }
    void exportPythonModulesParse() {
        QFETCH(QString, format);
        QFETCH(QString, dict);
        const QString out = path("export." + format + ".py");
        Run r = cfp({"export", planPath_, "--format", format, "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.contains(out.toUtf8()), r.err.constData());  // "cfp: wrote jax export to FILE"
        QVERIFY(slurp(out).endsWith('\n'));
        if (python().isEmpty()) QSKIP("python3 is not installed");
        Run parsed = runPython("import ast,sys; ast.parse(open(sys.argv[1]).read())", {out});
        QVERIFY2(parsed.exitCode == 0, parsed.err.constData());
        Run keys = runPython(kDictKeysScript, {out, dict});
        QVERIFY2(keys.exitCode == 0, (keys.out + keys.err).constData());
        const QStringList paths = QString::fromUtf8(keys.out).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(paths, trainable_);  // the built-in models' parameter names are their paths
    }

    void exportHloShardingHasOneLinePerParameter() {
        // A tensor-parallel plan (Megatron's layout over 8), priced by cfp estimate.
        const QString tpPlan = path("plan_tp8.json");
        Run e = cfp(QStringList{"estimate"} + kModel + QStringList{"--config", "tp=8,zero=0", "-o", tpPlan});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        const QString out = path("export.hlo");
        Run r = cfp({"export", tpPlan, "--format", "hlo-sharding", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QStringList lines = QString::fromUtf8(slurp(out)).split('\n');
        QCOMPARE(lines.takeLast(), QString());  // ends with a newline
        QVERIFY(lines.takeFirst().startsWith("# "));
        QCOMPARE(lines.size(), trainable_.size());
        const QRegularExpression line(
            R"re(^(\S+) \{(replicated|devices=\[\d+(,\d+)*\]\d+(,\d+)*( last_tile_dim_replicate)?)\}$)re");
        QStringList names;
        int split = 0;
        for (const QString& l : lines) {
            const auto m = line.match(l);
            QVERIFY2(m.hasMatch(), qPrintable(l));
            names << m.captured(1);
            if (m.captured(2) != "replicated") ++split;
        }
        QCOMPARE(names, trainable_);
        QVERIFY(split > 0);  // the plan is tensor parallel in the layers
    }

    void exportTraceIsChromeTraceJson() {
        const QString out = path("export.trace.json");
        Run r = cfp({"export", planPath_, "--format", "trace", "-o", out});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject trace = parseJson(slurp(out)).object();
        const QJsonArray events = trace["traceEvents"].toArray();
        QVERIFY(!events.isEmpty());
        int complete = 0;
        double end = 0;
        bool metadataDone = false;
        std::map<int, std::vector<std::pair<qint64, qint64>>> slices;  // per track: [start, end) in ns
        for (const QJsonValue& v : events) {
            const QJsonObject e = v.toObject();
            const QString ph = e["ph"].toString();
            QVERIFY2(ph == "M" || ph == "X", qPrintable(ph));
            if (ph == "M") {
                QVERIFY(!metadataDone);  // metadata first
                continue;
            }
            metadataDone = true;
            ++complete;
            QVERIFY(!e["name"].toString().isEmpty());
            QVERIFY(e["pid"].isDouble() && e["tid"].isDouble());
            QVERIFY(e["ts"].toDouble() >= 0);
            QVERIFY(e["dur"].toDouble() > 0);  // no zero-length events
            const qint64 ts = std::llround(e["ts"].toDouble() * 1e3), dur = std::llround(e["dur"].toDouble() * 1e3);
            slices[e["tid"].toInt()].push_back({ts, ts + dur});
            const QString cat = e["cat"].toString();
            QVERIFY2(cat == "compute" || cat == "collective" || cat == "reshard", qPrintable(cat));
            end = std::max(end, e["ts"].toDouble() + e["dur"].toDouble());
        }
        QVERIFY(complete > 1000);
        // Nesting (what Perfetto needs of complete events on one track): slices never overlap.
        for (auto& [tid, s] : slices) {
            std::sort(s.begin(), s.end());
            for (size_t i = 1; i < s.size(); ++i)
                QVERIFY2(s[i].first >= s[i - 1].second,
                         qPrintable(QString("track %1: [%2, %3) overlaps [%4, %5)").arg(tid).arg(s[i - 1].first).arg(s[i - 1].second).arg(s[i].first).arg(s[i].second)));
        }
        const QJsonObject other = trace["otherData"].toObject();
        QCOMPARE(other["timelineEvents"].toInt(), complete + other["eventsWithoutDuration"].toInt());
        QVERIFY(nearlyEqual(other["evaluatorStepSeconds"].toDouble(), summary_["evaluator_step_seconds"].toDouble(), 1e-12));
        const double step = summary_["step_seconds"].toDouble();
        QVERIFY(nearlyEqual(other["stepSeconds"].toDouble(), step, 1e-12));
        // The timeline is the simulated step: it ends at the step time (µs, rounded to ns).
        QVERIFY2(nearlyEqual(end, step * 1e6, 1e-6), qPrintable(QString("%1 us vs %2 s").arg(end).arg(step)));
    }

    // --names: the exported names are the target model's parameters, with their shapes — the lists
    // in tests/data/export were read off transformers 5.17 (LlamaForCausalLM, GPT2LMHeadModel) and
    // torchtitan's Llama module tree for the same configs — and the DTensor styles read back are the
    // plan's layouts.
    void exportNamesAreTheTargetModels_data() {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("names");
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<QString>("list");
        QTest::newRow("llama hf, tp 4 dp 2") << "llama_tiny_config.json" << "hf" << "tp=4,dp=2" << "hf_llama_params.txt";
        QTest::newRow("llama hf (auto), dp 8") << "llama_tiny_config.json" << "auto" << "dp=8" << "hf_llama_params.txt";
        QTest::newRow("llama torchtitan, tp 4 dp 2") << "llama_tiny_config.json" << "torchtitan" << "tp=4,dp=2"
                                                      << "torchtitan_llama_params.txt";
        QTest::newRow("gpt-2 hf, dp 8") << "gpt2_tiny_config.json" << "hf" << "dp=8" << "hf_gpt2_params.txt";
        // transformers 5 fuses each layer's experts: gate_up_proj [E, 2F, D], down_proj [E, D, F].
        QTest::newRow("mixtral hf (auto), dp 8") << "mixtral_tiny_config.json" << "auto" << "dp=8" << "hf_mixtral_params.txt";
        QTest::newRow("mixtral hf, tp 4 dp 2") << "mixtral_tiny_config.json" << "hf" << "tp=4,dp=2" << "hf_mixtral_params.txt";
    }
    void exportNamesAreTheTargetModels() {
        QFETCH(QString, config);
        QFETCH(QString, names);
        QFETCH(QString, parallel);
        QFETCH(QString, list);
        const QString data = QStringLiteral(CFP_TEST_DATA_DIR "/export/");
        QTemporaryDir dir;
        const QString plan = dir.filePath("plan.json");
        Run e = cfp({"estimate", data + config, "--batch", "8", "--seq", "64", "--config", parallel, "-o", plan});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        // The target's parameters: name → shape.
        QFile f(data + list);
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::map<QString, QString> want;
        for (const QByteArray& line : f.readAll().split('\n')) {
            if (line.isEmpty() || line.startsWith('#')) continue;
            const QList<QByteArray> parts = line.split(' ');
            want[QString::fromUtf8(parts[0])] = QString::fromUtf8(parts.value(1));
        }
        Run dt = cfp({"export", plan, "--format", "dtensor", "--names", names, "-o", "-"});
        QVERIFY2(dt.exitCode == 0, dt.err.constData());
        Run jx = cfp({"export", plan, "--format", "jax", "--names", names, "-o", "-"});
        QVERIFY2(jx.exitCode == 0, jx.err.constData());
        // PARAM_SHAPES (graph layout) and LINEAR_WEIGHTS (stored [out, in]) give the target's shapes.
        std::map<QString, QString> shapes;
        const QRegularExpression shapeLine(QStringLiteral("^    \"([^\"]+)\": \\(([0-9, ]+),?\\),$"));
        bool inShapes = false;
        for (const QString& line : QString::fromUtf8(jx.out).split('\n')) {
            if (line.startsWith("PARAM_SHAPES")) inShapes = true;
            else if (line == "}") inShapes = false;
            else if (inShapes) {
                auto m = shapeLine.match(line);
                if (m.hasMatch()) {
                    QString dims = QString(m.captured(2)).remove(' ');
                    if (dims.endsWith(',')) dims.chop(1);  // a 1-tuple
                    shapes[m.captured(1)] = dims;
                }
            }
        }
        std::set<QString> linear;
        std::map<QString, QStringList> permuted;  // PERMUTED_WEIGHTS: name → the target's dim order
        const QRegularExpression permutedLine(QStringLiteral("^    \"([^\"]+)\": \\(([0-9, ]+)\\),$"));
        QString section;
        for (const QString& line : QString::fromUtf8(dt.out).split('\n')) {
            if (line.startsWith("LINEAR_WEIGHTS") || line.startsWith("PERMUTED_WEIGHTS")) section = line.section(' ', 0, 0);
            else if (line == "}") section.clear();
            else if (section == "LINEAR_WEIGHTS") linear.insert(line.trimmed().remove('"').remove(','));
            else if (section == "PERMUTED_WEIGHTS") {
                auto m = permutedLine.match(line);
                QVERIFY2(m.hasMatch(), qPrintable(line));
                permuted[m.captured(1)] = QString(m.captured(2)).remove(' ').split(',');
            }
        }
        QCOMPARE(shapes.size(), want.size());
        for (const auto& [name, shape] : shapes) {
            QVERIFY2(want.count(name), qPrintable(name + " is not a parameter of the target model"));
            QString stored = shape;
            if (linear.count(name)) {
                const QStringList d = shape.split(',');
                stored = d.value(1) + "," + d.value(0);
            } else if (permuted.count(name)) {
                const QStringList d = shape.split(',');
                QStringList t;
                for (const QString& i : permuted[name]) t << d.value(i.toInt());
                stored = t.join(',');
            }
            QCOMPARE(stored, want[name]);
        }
        if (parallel.startsWith("tp")) {
            // Megatron-style: projections column then row parallel with default layouts; the untied
            // head row parallel over a replicated input (the final norm passes on its whole output).
            const QString py = QString::fromUtf8(dt.out);
            const bool hf = names == "hf";
            const QString q = hf ? "model.layers.1.self_attn.q_proj" : "layers.1.attention.wq";
            const QString o = hf ? "model.layers.1.self_attn.o_proj" : "layers.1.attention.wo";
            const QString head = hf ? "lm_head" : "output";
            QVERIFY(py.contains("    \"" + q + "\": ColwiseParallel(),\n"));
            QVERIFY(py.contains("    \"" + o + "\": RowwiseParallel(),\n"));
            QVERIFY(py.contains("    \"" + head + "\": RowwiseParallel(input_layouts=Replicate()),\n"));
            QVERIFY(py.contains("    \"" + q + ".weight\": [Replicate(), Shard(0)],  # from layers.1.attn.qkv.weight\n"));
            QVERIFY(py.contains("DP_MESH_DIMS = (\"dp\",)\n"));
            QVERIFY(py.contains(hf ? "HF_TP_PLAN = None\n" : "HF_TP_PLAN = None\n"));
            if (config.startsWith("mixtral")) {  // experts split over tp by expert: dim 0 in both layouts
                QVERIFY(py.contains("    \"model.layers.1.mlp.experts.gate_up_proj\": [Replicate(), Shard(0)],  # from "
                                    "layers.1.moe.experts.w1.weight + layers.1.moe.experts.w3.weight\n"));
                // Expert parallelism has no DTensor style: parallelize() refuses it, naming the module.
                QVERIFY(py.contains("UNEXPRESSED = {\n    \"model.layers.0.mlp.experts\": "));
            } else {
                // A Megatron-style Llama plan is applied whole by parallelize().
                QVERIFY(py.contains("UNEXPRESSED = {\n}\n"));
            }
        }
    }
    // `cfp graph --plan P -o step.hlo`: every instruction carries the plan's layout; importing the
    // text gives every op its sharding back, and each parameter's is the hlo-sharding export's.
    void hloRoundTripKeepsThePlansShardings() {
        QTemporaryDir dir;
        const QString plan = dir.filePath("plan.json"), hlo = dir.filePath("step.hlo");
        Run e = cfp({"estimate", "builtin:gpt3-125m", "--batch", "8", "--seq", "128", "--config", "tp=4,dp=2", "-o", plan});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        Run g = cfp({"graph", "--plan", plan, "-o", hlo});
        QVERIFY2(g.exitCode == 0, g.err.constData());
        Run d = cfp({"describe", hlo, "--json"});
        QVERIFY2(d.exitCode == 0, d.err.constData());
        const QJsonObject j = parseJson(d.out).object();
        const QJsonObject read = j["source_shardings"].toObject();
        QCOMPARE(read.size(), j["ops"].toInt());
        Run x = cfp({"export", plan, "--format", "hlo-sharding", "-o", "-"});
        QVERIFY2(x.exitCode == 0, x.err.constData());
        int params = 0;
        for (const QByteArray& line : x.out.split('\n')) {
            if (line.isEmpty() || line.startsWith('#')) continue;
            const int space = line.indexOf(' ');
            const QString name = QString::fromUtf8(line.left(space));
            QVERIFY2(read.contains(name), qPrintable(name));
            QCOMPARE(read[name].toString(), QString::fromUtf8(line.mid(space + 1)));
            ++params;
        }
        QVERIFY(params > 100);
        QVERIFY(read["layers.0.attn.qkv.weight"].toString().startsWith("{devices=[1,4,2]"));  // column split over tp
        Run bad = cfp({"graph", "--plan", plan, "-o", dir.filePath("step.json")});
        QCOMPARE(bad.exitCode, 2);
        // One code path: `cfp export --format hlo` writes the same bytes.
        Run ex = cfp({"export", plan, "--format", "hlo", "-o", "-"});
        QVERIFY2(ex.exitCode == 0, ex.err.constData());
        QCOMPARE(ex.out, slurp(hlo));
    }
    void exportNamesRefusals() {
        // An imported graph has no name map; GPT (and MoE) have no torchtitan one.
        QTemporaryDir dir;
        const QString plan = dir.filePath("plan.json");
        Run e = cfp({"estimate", QStringLiteral(CFP_TEST_DATA_DIR "/export/gpt2_tiny_config.json"), "--batch", "8", "--seq",
                     "64", "--config", "dp=8", "-o", plan});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        Run r = cfp({"export", plan, "--format", "dtensor", "--names", "torchtitan", "-o", "-"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("[export.unsupported]"));
        QCOMPARE(r.err.count('\n'), 1);
        Run bad = cfp({"export", plan, "--format", "dtensor", "--names", "flax", "-o", "-"});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY(bad.err.contains("[export.bad_names]"));
        // Megatron's flags name no parameters: --names does not matter there.
        Run m = cfp({"export", plan, "--format", "megatron", "--names", "hf", "-o", "-"});
        QCOMPARE(m.exitCode, 0);
    }
    void exportTorchtitanScheduleCsv() {
        // A zero-bubble pipeline has no PyTorch class: the TOML names the schedule CSV written
        // beside it; on stdout there is no beside, so the export is refused.
        QTemporaryDir dir;
        const QString plan = dir.filePath("plan.json");
        Run e = cfp({"estimate", QStringLiteral(CFP_TEST_DATA_DIR "/export/llama_tiny_config.json"), "--batch", "16", "--seq", "64",
                     "--config", "dp=4,pp=2,schedule=zb-h1,mbs=1", "-o", plan});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        Run r = cfp({"export", plan, "--format", "torchtitan", "-o", dir.filePath("job.toml")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("and its schedule to " + dir.filePath("job.schedule.csv").toUtf8()), r.err.constData());
        const QByteArray toml = slurp(dir.filePath("job.toml"));
        QVERIFY2(toml.contains("pipeline_parallel_schedule_csv = \"job.schedule.csv\"\n"), toml.constData());
        const QList<QByteArray> rows = slurp(dir.filePath("job.schedule.csv")).trimmed().split('\n');
        QCOMPARE(rows.size(), 2);  // a row per rank
        QVERIFY2(rows[1] == "1F0,1I0,1F1,1I1,1W0,1F2,1I2,1W1,1F3,1I3,1W2,1W3", rows[1].constData());  // ZB-H1: the last rank defers one W
        Run out = cfp({"export", plan, "--format", "torchtitan", "-o", "-"});
        QCOMPARE(out.exitCode, 1);
        QVERIFY2(out.err.contains("write the export to a file") && out.err.contains("[export.unsupported]"), out.err.constData());
    }
    // `cfp plan --schedule-csv FILE`: the plan runs the file's schedule (its micro-batches the
    // rounds), the plan file keeps it and the torchtitan export writes it back; `--schedule mip`
    // optimises the plan's schedule and says how; bad files and misused options fail in one line.
    void planPipelineScheduleFromCsvAndMip() {
        QTemporaryDir dir;
        const QString model = QStringLiteral(CFP_TEST_DATA_DIR "/export/llama_tiny_config.json");
        const QStringList base{"plan", model, "--batch", "16", "--seq", "64", "--pp", "2", "--mesh", "4", "--quiet", "--no-baselines"};
        // 1F1B on 2 ranks with its backward split, rank 1 deferring nothing: 4 micro-batches.
        const QByteArray given = "0F0,0F1,0I0,0W0,0F2,0I1,0W1,0F3,0I2,0W2,0I3,0W3\n1F0,1I0,1W0,1F1,1I1,1W1,1F2,1I2,1W2,1F3,1I3,1W3\n";
        const QString csv = dir.filePath("given.csv");
        {
            QFile f(csv);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(given);
        }
        const QString plan = dir.filePath("plan.json");
        Run r = cfp(base + QStringList{"--schedule-csv", csv, "-o", plan});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("pipe schedule    custom: read from given.csv"), r.out.constData());
        QVERIFY2(r.out.contains("4 micro-batches"), r.out.constData());
        const QJsonObject pipeline = parseJson(slurp(plan)).object()["pipeline"].toObject();
        QCOMPARE(pipeline["schedule"].toString(), QString("custom"));
        QCOMPARE(pipeline["actions"].toString().toUtf8(), given);
        Run e = cfp({"export", plan, "--format", "torchtitan", "-o", dir.filePath("job.toml")});
        QVERIFY2(e.exitCode == 0, e.err.constData());
        QCOMPARE(slurp(dir.filePath("job.schedule.csv")), given);
        QVERIFY(slurp(dir.filePath("job.toml")).contains("pipeline_parallel_schedule_csv = \"job.schedule.csv\""));

        Run mip = cfp(base + QStringList{"--schedule", "mip", "--schedule-time-limit", "5", "--json"});
        if (!mip.err.contains("[schedule.no_mip_solver]")) {  // a build without CBC says so instead
            QVERIFY2(mip.exitCode == 0, mip.err.constData());
            const QJsonObject j = parseJson(mip.out).object()["pipeline"].toObject();
            QCOMPARE(j["schedule"].toString(), QString("mip"));
            QVERIFY(j["schedule_origin"].toString().startsWith("schedule optimiser (CBC"));
            QVERIFY(j["actions_csv"].toString().count('\n') == 2);
        }

        // Errors: a missing file, a cell that is no action (its file and line named), options
        // without what they belong to.
        struct Bad {
            QStringList args;
            int exit;
            QByteArray needle;
        };
        const QString broken = dir.filePath("broken.csv");
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("0F0,0X1\n1F0\n");
        }
        for (const Bad& b : {Bad{{"--schedule-csv", dir.filePath("none.csv")}, 1, "none.csv"},
                             Bad{{"--schedule-csv", broken}, 1, "line 1"},
                             Bad{{"--schedule-time-limit", "5"}, 2, "--schedule mip"},
                             Bad{{"--schedule", "custom"}, 2, "--schedule-csv"},
                             Bad{{"--placement", "v"}, 2, "--schedule-csv"}}) {
            Run bad = cfp(base + b.args);
            QVERIFY2(bad.exitCode == b.exit, (b.args.join(' ') + ": " + QString::fromUtf8(bad.err)).toUtf8().constData());
            CHECK_ONE_LINE_ERROR(bad);
            QVERIFY2(bad.err.contains(b.needle), bad.err.constData());
        }
    }

    void exportMegatronOfTheSearchedPlan() {
        // Flags when the plan is a uniform Megatron layout, else exit 1 and one line saying why.
        Run r = cfp({"export", planPath_, "--format", "megatron", "-o", "-"});
        if (r.exitCode == 0) {
            QVERIFY2(r.out.startsWith("--tensor-model-parallel-size "), r.out.constData());
            QCOMPARE(r.out.count('\n'), 1);
        } else {
            QCOMPARE(r.exitCode, 1);
            CHECK_ONE_LINE_ERROR(r);
            QVERIFY2(r.err.contains("Megatron"), r.err.constData());
            QVERIFY2(r.err.contains("export.not_uniform"), r.err.constData());
        }
    }

    void exportMegatronOfATensorParallelPlan() {
        const QString plan = path("tp.json");
        Run p = cfp(planArgs(QStringList{"--mesh", "8", "--no-baselines", "-o", plan} + kTensorParallelPins));
        QVERIFY2(p.exitCode == 0, p.err.constData());
        Run r = cfp({"export", plan, "--format", "megatron", "-o", "-"});
        // gpt3-125m has 12 heads: Megatron-LM cannot split them 8 ways, and the export says so.
        QCOMPARE(r.exitCode, 1);
        CHECK_ONE_LINE_ERROR(r);
        QVERIFY2(r.err.contains("tensor-parallel size 8 to divide the 12 attention heads"), r.err.constData());
    }

    void exportMegatronOfADataParallelPlan() {
        const QString plan = path("dp.json");
        Run p = cfp(planArgs(QStringList{"--mesh", "8", "--json", "-o", plan} + kDataParallelPins));
        QVERIFY2(p.exitCode == 0, p.err.constData());
        const QJsonObject j = parseJson(p.out).object();
        QCOMPARE(j["pins"].toArray().size(), 3);
        for (const QJsonValue& b : parseJson(slurp(plan)).object()["blocks"].toArray()) QVERIFY(b.toObject()["pinned"].toBool());
        // The pins give exactly the data_parallel baseline: same step time, same memory.
        const QJsonObject dp = j["baseline_details"].toArray()[0].toObject();
        QCOMPARE(dp["name"].toString(), QString("data_parallel"));
        QVERIFY(nearlyEqual(j["step_seconds"].toDouble(), dp["step_seconds"].toDouble(), 1e-9));
        QVERIFY(nearlyEqual(j["evaluator_step_seconds"].toDouble(), dp["objective_seconds"].toDouble(), 1e-9));
        QCOMPARE(j["memory_per_device_bytes"].toInteger(), dp["memory_per_device_bytes"].toInteger());
        // ... with every trainable parameter replicated.
        Run hlo = cfp({"export", plan, "--format", "hlo-sharding", "-o", "-"});
        QVERIFY2(hlo.exitCode == 0, hlo.err.constData());
        QCOMPARE(hlo.out.count(" {replicated}\n"), trainable_.size());

        // Pure data parallelism is Megatron with tensor-parallel size 1 (docs/exporters.md: T = 1
        // when every layer weight is replicated, data parallel over the other axes = x).
        Run r = cfp({"export", plan, "--format", "megatron", "-o", "-"});
        // The token lookup is split over the batch with the first layer (not kept whole with the
        // tied LM head's table), so the data inputs are split over the data-parallel axis.
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.startsWith("--tensor-model-parallel-size 1 "), r.out.constData());
        // The model, batch and precision as the plan has them (gpt3-125m, batch 8, sequence 128,
        // one round over 8 data-parallel ranks).
        for (const char* f : {" --num-layers 12 --hidden-size 768 --ffn-hidden-size 3072 --num-attention-heads 12 ",
                              " --normalization LayerNorm ", " --position-embedding-type learned_absolute ",
                              " --seq-length 128 --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 8 --bf16\n"})
            QVERIFY2(r.out.contains(f), f);
        QVERIFY(!r.out.contains("--untie-embeddings-and-output-weights"));
    }

    void exportToStdoutMatchesTheFile() {
        const QString out = path("stdout-check.py");
        QVERIFY(cfp({"export", planPath_, "--format", "jax", "-o", out}).exitCode == 0);
        Run r = cfp({"export", planPath_, "--format", "jax", "-o", "-"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.isEmpty(), r.err.constData());
        QCOMPARE(r.out, slurp(out));
        QVERIFY(!QFile::exists(dir_.filePath("-")));
    }

    void exportErrors() {
        const QString out = path("never.txt");
        // Unknown format: usage-ish failure listing the formats.
        Run f = cfp({"export", planPath_, "--format", "onnx", "-o", out});
        QVERIFY(f.exitCode == 1 || f.exitCode == 2);
        CHECK_ONE_LINE_ERROR(f);
        for (const char* name : {"onnx", "jax", "dtensor", "megatron", "hlo-sharding", "trace", "torchtitan"})
            QVERIFY2(f.err.contains(name), f.err.constData());

        // Missing plan file: named in the message.
        const QString missing = path("no-such-plan.json");
        Run m = cfp({"export", missing, "--format", "jax", "-o", out});
        QCOMPARE(m.exitCode, 1);
        CHECK_ONE_LINE_ERROR(m);
        QVERIFY2(m.err.contains(missing.toUtf8()), m.err.constData());

        // A truncated plan file: a syntax error with its code.
        const QString truncated = path("truncated.json");
        {
            QFile t(truncated);
            QVERIFY(t.open(QIODevice::WriteOnly));
            t.write(slurp(planPath_).left(1000));
        }
        Run s = cfp({"export", truncated, "--format", "jax", "-o", out});
        QCOMPARE(s.exitCode, 1);
        CHECK_ONE_LINE_ERROR(s);
        QVERIFY2(s.err.contains("plan.syntax"), s.err.constData());

        // Usage errors.
        Run noFormat = cfp({"export", planPath_, "-o", out});
        QCOMPARE(noFormat.exitCode, 2);
        QVERIFY(noFormat.err.contains("--format"));
        Run noOutput = cfp({"export", planPath_, "--format", "jax"});
        QCOMPARE(noOutput.exitCode, 2);
        QVERIFY(noOutput.err.contains("-o"));
        QCOMPARE(cfp({"export", "--format", "jax", "-o", out}).exitCode, 2);

        QVERIFY(!QFile::exists(out));
    }

    // ---- cfp hardware, help ----

    void hardwareListsTheBuiltins() {
        Run r = cfp({"hardware"});
        QCOMPARE(r.exitCode, 0);
        for (const char* id : {"h100-sxm", "h200", "a100-sxm-80gb", "v100-sxm-32gb"}) QVERIFY2(r.out.contains(id), id);

        Run j = cfp({"hardware", "--json"});
        QCOMPARE(j.exitCode, 0);
        const QJsonDocument doc = parseJson(j.out);
        QVERIFY(doc.isArray());
        QMap<QString, QJsonObject> byId;
        for (const QJsonValue& v : doc.array()) {
            const QJsonObject h = v.toObject();
            QVERIFY(!h["name"].toString().isEmpty());
            QVERIFY(h["memory_bytes"].toInteger() > 0);
            QVERIFY(h["bf16_flops"].toDouble() > 0);
            QVERIFY(h["gpus_per_node"].toInt() > 0);
            byId[h["id"].toString()] = h;
        }
        for (const char* id : {"h100-sxm", "h200", "a100-sxm-80gb", "v100-sxm-32gb"}) QVERIFY2(byId.contains(id), id);
        QCOMPARE(byId["h100-sxm"]["memory_bytes"].toInteger(), qint64(80) << 30);
        QVERIFY(byId["h200"]["memory_bytes"].toInteger() > byId["h100-sxm"]["memory_bytes"].toInteger());
        QCOMPARE(cfp({"hardware", "--frob"}).exitCode, 2);
    }

    void helpMentionsTheOptions() {
        Run plan = cfp({"plan", "--help"});
        QCOMPARE(plan.exitCode, 0);
        for (const char* opt : {"--pin", "--mesh", "--memory-limit", "--recompute", "--optimizer-sharding", "--hardware", "--nodes",
                                "--json", "-o PLAN", "--check-blocks", "--threads"})
            QVERIFY2(plan.out.contains(opt), opt);
        Run exp = cfp({"export", "--help"});
        QCOMPARE(exp.exitCode, 0);
        QVERIFY(exp.out.contains("--format"));
        for (const char* name : {"jax", "dtensor", "megatron", "hlo-sharding", "trace", "hlo", "torchtitan"}) QVERIFY2(exp.out.contains(name), name);
        Run hw = cfp({"hardware", "--help"});
        QCOMPARE(hw.exitCode, 0);
        QVERIFY(hw.out.contains("--json"));
        Run top = cfp({"--help"});
        for (const char* cmd : {"plan", "export", "hardware"}) QVERIFY2(top.out.contains(cmd), cmd);
    }
};

QTEST_GUILESS_MAIN(TestCliPlan)
#include "tst_cli_plan.moc"
