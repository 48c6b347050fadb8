// End-to-end tests of the `cfp` tool: output fields, exit codes and one-line errors.
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

int runFormatTests(int argc, char** argv);

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run cfp(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(CFP_CLI_PATH), args);
    if (!p.waitForFinished(300000)) qFatal("cfp did not finish");
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QJsonObject json(const QByteArray& text) {
    QJsonParseError e;
    auto doc = QJsonDocument::fromJson(text, &e);
    if (e.error != QJsonParseError::NoError) qWarning("bad JSON: %s", qPrintable(e.errorString()));
    return doc.object();
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void helpAndUsage() {
        Run r = cfp({"--help"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("describe"));
        QCOMPARE(cfp({}).exitCode, 2);
        QCOMPARE(cfp({"frobnicate"}).exitCode, 2);
        Run d = cfp({"describe", "--help"});
        QCOMPARE(d.exitCode, 0);
        QVERIFY(d.out.contains("--batch"));
    }

    void describeJsonHasTheFields() {
        Run r = cfp({"describe", "builtin:gpt3-125m", "--json", "--batch", "1", "--seq", "128"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        for (const char* key : {"ops", "ops_by_phase", "ops_by_kind", "params", "flops_per_step", "activation_bytes"})
            QVERIFY2(j.contains(key), key);
        const QJsonObject phases = j["ops_by_phase"].toObject();
        QVERIFY(phases["forward"].toInteger() > 0);
        QVERIFY(phases["backward"].toInteger() > 0);
        QVERIFY(phases["optimizer"].toInteger() > 0);
        QCOMPARE(phases["forward"].toInteger() + phases["backward"].toInteger() + phases["optimizer"].toInteger(),
                 j["ops"].toInteger());
        QVERIFY(j["ops_by_kind"].toObject()["dot"].toInteger() > 0);
        const double params = j["params"].toDouble();
        QVERIFY2(params > 123e6 && params < 127e6, qPrintable(QString::number(params)));
        QVERIFY(j["flops_per_step"].toDouble() > 6 * 100e6 * 128);
        // Kept for backward as fused kernels keep them (32·sbh per layer with flash attention, the
        // embeddings and the head besides), less than op by op.
        const qint64 fused = j["activation_bytes"].toInteger(), unfused = j["unfused_activation_bytes"].toInteger();
        const qint64 layers = 12 * 32 * qint64{128} * 768;
        QVERIFY2(fused >= layers && fused < unfused, qPrintable(QStringLiteral("%1 %2 %3").arg(fused).arg(unfused).arg(layers)));
        QCOMPARE(j["batch"].toInteger(), 1);
        QCOMPARE(j["seq"].toInteger(), 128);
    }

    void describeHumanOutput() {
        Run r = cfp({"describe", "builtin:gpt3-125m", "--batch", "1", "--seq", "64"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("parameters"));
        QVERIFY(r.out.contains("FLOPs per step"));
        QVERIFY(r.out.contains("dot"));
        QVERIFY(r.err.isEmpty());
    }

    void errorsAreOneLineWithExitCode_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("needle");
        QTest::newRow("unknown preset") << QStringList{"describe", "builtin:gpt5"} << 1 << "model.unknown_preset";
        QTest::newRow("missing file") << QStringList{"describe", "/nonexistent/config.json"} << 1 << "load.not_found";
        QTest::newRow("unknown option") << QStringList{"describe", "--frob"} << 2 << "unknown option --frob";
        QTest::newRow("zero batch") << QStringList{"describe", "builtin:gpt3-125m", "--batch", "0"} << 2 << "--batch";
        QTest::newRow("bad dtype") << QStringList{"describe", "builtin:gpt3-125m", "--dtype", "fp8"} << 2 << "--dtype";
        QTest::newRow("two models") << QStringList{"describe", "builtin:gpt3-125m", "builtin:gpt3-350m"} << 2 << "one MODEL";
        QTest::newRow("graph without -o") << QStringList{"graph", "builtin:gpt3-125m"} << 2 << "-o FILE";
        QTest::newRow("schedule without ranks") << QStringList{"schedule", "--micro-batches", "8"} << 2 << "--ranks P";
        QTest::newRow("interleaved M not multiple of P")
            << QStringList{"schedule", "--ranks", "4", "--micro-batches", "6", "--schedule", "interleaved", "--chunks", "2"} << 1 << "schedule.shape";
        QTest::newRow("unknown schedule") << QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--schedule", "chimera"} << 1
                                          << "schedule.unknown";
        QTest::newRow("zb-v with 3 chunks")
            << QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--schedule", "zb-v", "--chunks", "3"} << 1 << "schedule.shape";
        QTest::newRow("dualpipe with odd ranks")
            << QStringList{"schedule", "--ranks", "3", "--micro-batches", "8", "--schedule", "dualpipe"} << 1 << "even number of ranks";
        QTest::newRow("placement without a file")
            << QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--placement", "v"} << 2 << "--placement is for --from";
        QTest::newRow("unknown overlap")
            << QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--overlap", "half"} << 2 << "--overlap expects";
        QTest::newRow("negative time") << QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--f", "-1"} << 2 << "--f expects";
    }
    void errorsAreOneLineWithExitCode() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, needle);
        Run r = cfp(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(needle.toUtf8()), r.err.constData());
        QVERIFY(r.err.startsWith("cfp: error: "));
    }

    // cfp schedule: the JSON fields, 1F1B's closed form, and a CSV written and read back.
    void scheduleReplaysAndRoundTrips() {
        QTemporaryDir dir;
        const QString csv = dir.filePath("zb.csv");
        Run r = cfp({"schedule", "--ranks", "4", "--micro-batches", "8", "--schedule", "zb-h1", "--f", "1", "--b", "1", "--w", "0.5",
                     "--json", "-o", csv});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        // ZB-H1: M(F + I + W) + (P − 1)(F + I − W) = 8 × 2.5 + 3 × 1.5.
        QCOMPARE(j["step_seconds"].toDouble(), 24.5);
        QCOMPARE(j["bubble_seconds"].toDouble(), 4.5);
        QCOMPARE(j["peak_activations"].toArray().size(), 4);
        QVERIFY(j.contains("bubble_fraction"));
        Run back = cfp({"schedule", "--ranks", "4", "--from", csv, "--f", "1", "--b", "1", "--w", "0.5", "--json"});
        QCOMPARE(back.exitCode, 0);
        QCOMPARE(json(back.out)["step_seconds"].toDouble(), 24.5);
        QCOMPARE(json(back.out)["schedule"].toString(), QString("custom"));
        Run text = cfp({"schedule", "--ranks", "2", "--micro-batches", "4"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("step       15.000 s"), text.out.constData());  // (M + P − 1)(F + I + W) = 5 × 3
    }

    // cfp schedule with the zero-bubble and DualPipe schedules: the closed forms (plan/pipeline.h) at
    // the CLI's scale (--f, --b, --w are a rank's share; a V chunk takes half), the placement, the
    // overlap model, and a V schedule's CSV read back with --placement v.
    void newSchedulesThroughTheCli() {
        auto run = [&](const QStringList& extra) {
            Run r = cfp(QStringList{"schedule", "--ranks", "4", "--micro-batches", "8", "--json"} + extra);
            if (r.exitCode != 0) qWarning() << r.err;
            return json(r.out);
        };
        // ZB-H2, F = I = W: (P − 1)F + M(F + I + W), no idle time inside any rank's span.
        const QJsonObject h2 = run({"--schedule", "zb-h2"});
        QCOMPARE(h2["step_seconds"].toDouble(), 27.0);
        QCOMPARE(h2["span_bubble_seconds"].toDouble(), 0.0);
        QCOMPARE(h2["placement"].toString(), QString("looped"));
        // ZB-V, 2 chunks by default: (P − 1)f + 6Mf with f = 0.5; P micro-batches of activations.
        const QJsonObject v = run({"--schedule", "zb-v"});
        QCOMPARE(v["chunks"].toInt(), 2);
        QCOMPARE(v["placement"].toString(), QString("v"));
        QCOMPARE(v["step_seconds"].toDouble(), 25.5);
        QCOMPARE(v["peak_activations"].toArray()[0].toDouble(), 4.0);
        // DualPipeV, per chunk F = I = W = 1: bubble (P − 1)(F&B + B − 3W), F&B = F + B or max(F, B).
        const QJsonObject dv = run({"--schedule", "dualpipe-v", "--f", "2", "--b", "2", "--w", "2"});
        QCOMPARE(dv["bubble_seconds"].toDouble(), 6.0);
        QCOMPARE(dv["overlap"].toString(), QString("serial"));
        const QJsonObject dvFull = run({"--schedule", "dualpipe-v", "--f", "2", "--b", "2", "--w", "2", "--overlap", "full"});
        QCOMPARE(dvFull["bubble_seconds"].toDouble(), 3.0);
        // DualPipe: (P/2 − 1)(F&B + B − 3W) with whole stages; P + 1 micro-batches at the peak.
        const QJsonObject d = run({"--schedule", "dualpipe"});
        QCOMPARE(d["placement"].toString(), QString("bidirectional"));
        QCOMPARE(d["bubble_seconds"].toDouble(), 2.0);
        QCOMPARE(d["peak_activations"].toArray()[0].toDouble(), 5.0);

        QTemporaryDir dir;
        const QString csv = dir.filePath("dualpipev.csv");
        QCOMPARE(cfp({"schedule", "--ranks", "4", "--micro-batches", "8", "--schedule", "dualpipe-v", "-o", csv}).exitCode, 0);
        Run back = cfp({"schedule", "--ranks", "4", "--from", csv, "--placement", "v", "--chunks", "2", "--json"});
        QCOMPARE(back.exitCode, 0);
        QCOMPARE(json(back.out)["step_seconds"].toDouble(), 27.0);  // per chunk F = I = W = 0.5
        Run looped = cfp({"schedule", "--ranks", "4", "--from", csv, "--chunks", "2"});
        QCOMPARE(looped.exitCode, 1);
        QVERIFY2(looped.err.contains("held by rank"), looped.err.constData());
    }

    void graphRoundTripsThroughTheCli() {
        QTemporaryDir dir;
        const QString a = dir.filePath("a.json"), b = dir.filePath("b.json");
        const QStringList common{"builtin:gpt3-125m", "--batch", "1", "--seq", "32"};
        QCOMPARE(cfp(QStringList{"graph"} + common + QStringList{"-o", a}).exitCode, 0);
        QCOMPARE(cfp(QStringList{"graph"} + common + QStringList{"-o", b}).exitCode, 0);
        QFile fa(a), fb(b);
        QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
        const QByteArray bytesA = fa.readAll();
        QVERIFY(bytesA.size() > 1000);
        QCOMPARE(bytesA, fb.readAll());  // deterministic build and writer

        const QJsonObject built = json(cfp(QStringList{"describe", "--json"} + common).out);
        const QJsonObject read = json(cfp({"describe", a, "--json"}).out);
        QCOMPARE(read["source_kind"].toString(), QString("graph"));
        for (const char* key : {"ops", "params", "flops_per_step", "activation_bytes"})
            QCOMPARE(read[key].toDouble(), built[key].toDouble());
    }

    void malformedGraphFileNamesThePlace() {
        QTemporaryDir dir;
        QFile f(dir.filePath("bad.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "cfp-graph", "version": 1, "name": "x", "nodes": [{"name": "a", "op": "add", "type": "f32[2]", "operands": ["b", "c"]}], "outputs": []})");
        f.close();
        Run r = cfp({"describe", f.fileName()});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains("/nodes/0"), r.err.constData());
    }

    void analyzeReportsBlocksAndSegments() {
        Run r = cfp({"analyze", "builtin:gpt3-350m", "--mesh", "8", "--json", "--batch", "8", "--seq", "64"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["comm_free_check"].toString(), QString("pass"));
        QCOMPARE(j["ops_covered_fraction"].toDouble(), 1.0);
        QCOMPARE(j["blocks"].toInteger(), 24 * 4 + 1);
        QVERIFY(j["segment_types"].toInteger() <= 4);
        QVERIFY(j["search_space_log10"].toObject()["op_level"].toDouble() >
                j["search_space_log10"].toObject()["block_level"].toDouble());
        Run human = cfp({"analyze", "builtin:gpt3-350m", "--mesh", "dp=2,tp=4", "--batch", "8", "--seq", "64"});
        QCOMPARE(human.exitCode, 0);
        QVERIFY(human.out.contains("block check            pass"));
        QVERIFY(human.out.contains("segments: 3 types"));
    }

    void analyzeRejectsBadMeshes_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("needle");
        QTest::newRow("device count") << QStringList{"--mesh", "3x3", "--devices", "8"} << "mesh.device_count";
        QTest::newRow("zero axis") << QStringList{"--mesh", "0"} << "--mesh";
        QTest::newRow("garbage") << QStringList{"--mesh", "dp=two"} << "--mesh";
        QTest::newRow("straddles nodes") << QStringList{"--mesh", "3x4", "--gpus-per-node", "8"} << "--mesh";
    }
    void analyzeRejectsBadMeshes() {
        QFETCH(QStringList, args);
        QFETCH(QString, needle);
        Run r = cfp(QStringList{"analyze", "builtin:gpt3-125m", "--batch", "1", "--seq", "32"} + args);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(needle.toUtf8()), r.err.constData());
    }

    void devicesReportsClearly() {
        Run r = cfp({"devices", "--json"});
        const QJsonObject j = json(r.out);
        QVERIFY(j.contains("backend"));
        if (j["devices"].toArray().isEmpty()) {
            QCOMPARE(r.exitCode, 1);
            QVERIFY(!j["error"].toString().isEmpty());
        } else {
            QCOMPARE(r.exitCode, 0);
        }
    }
};

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    TestCli cli;
    const int a = QTest::qExec(&cli, argc, argv);
    const int b = runFormatTests(argc, argv);
    return a || b;
}
#include "tst_cli.moc"
