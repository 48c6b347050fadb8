// End-to-end tests of `cfp profile` and `cfp plan --db`: the built binary is run with QProcess.
// Without a GPU, `cfp profile` must fail fast with one clear line; `--simulate` runs the whole
// pipeline (session, profile DB) so that `cfp plan --db` can be checked to use the measurements.

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
    qint64 ms = 0;
};

Run cfp(const QStringList& args) {
    QProcess p;
    QElapsedTimer timer;
    timer.start();
    p.start(QStringLiteral(CFP_CLI_PATH), args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
        return {-2, p.readAllStandardOutput(), "timed out: " + p.readAllStandardError(), timer.elapsed()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError(), timer.elapsed()};
}

QJsonObject parseObject(const QByteArray& text) {
    QJsonParseError e;
    const QJsonDocument doc = QJsonDocument::fromJson(text, &e);
    if (e.error != QJsonParseError::NoError) qWarning("bad JSON at %d: %s", e.offset, qPrintable(e.errorString()));
    return doc.object();
}

const QStringList kModel{"builtin:gpt3-125m", "--batch", "8", "--seq", "128"};
// Its segment types: T0 layers.0, T1 the other layers, T2 the LM head. The profiles below measure
// T2 alone (2 combinations): the protocol is the same and the sanitizer build stays well within the
// test timeout.

bool haveGpu() {
    const Run r = cfp({"devices", "--json"});
    return r.exitCode == 0;
}

}  // namespace

class TestCliProfile : public QObject {
    Q_OBJECT

private slots:
    // No GPU (or no backend): non-zero within a few seconds, one line saying what is missing and
    // that `cfp plan` uses the analytic model.
    void noGpuFailsFastWithOneLine() {
        if (haveGpu()) QSKIP("a GPU is present");
        QTemporaryDir dir;
        const Run r = cfp(QStringList{"profile"} + kModel + QStringList{"--db", dir.filePath("p.db")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.ms < 5000, qPrintable(QString("took %1 ms").arg(r.ms)));
        const QList<QByteArray> lines = r.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        const QString line = QString::fromUtf8(lines[0]);
        QVERIFY2(line.startsWith("cfp: error: profile: "), qPrintable(line));
        QVERIFY2(line.contains("profiler.no_device") || line.contains("profiler.no_backend"), qPrintable(line));
        QVERIFY2(line.contains("`cfp plan` uses the analytic cost model"), qPrintable(line));
        QVERIFY(r.out.isEmpty());
        QVERIFY(!QFile::exists(dir.filePath("p.db")));  // nothing created
    }

    void usageErrors() {
        QCOMPARE(cfp(QStringList{"profile"} + kModel).exitCode, 2);  // no --db
        QTemporaryDir dir;
        const QString db = dir.filePath("u.db");
        QCOMPARE(cfp(QStringList{"profile"} + kModel + QStringList{"--db", db, "--simulate", "--calibrate", "sometimes"}).exitCode, 2);
        QCOMPARE(cfp(QStringList{"profile"} + kModel + QStringList{"--db", db, "--simulate", "--abandon", "0.5"}).exitCode, 2);
        QCOMPARE(cfp(QStringList{"profile"} + kModel + QStringList{"--db", db, "--simulate", "--types", "X"}).exitCode, 2);
        QCOMPARE(cfp(QStringList{"plan"} + kModel + QStringList{"--db-fingerprint", "k"}).exitCode, 2);
        const Run help = cfp({"profile", "--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("mpirun"));
    }

    // --kernels: each kernel of the step on one device against the model, no DB; its JSON is what
    // bench/reference/kernels.py reads (the fields it uses are checked).
    void kernelsAgainstTheModel() {
        const Run r = cfp(QStringList{"profile"} + kModel + QStringList{"--kernels", "--simulate", "--quiet", "--hardware", "h200", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject o = parseObject(r.out);
        QCOMPARE(o["model"].toString(), QString("gpt3-125m"));
        QCOMPARE(o["hardware_spec"].toString(), QString("h200"));
        const QJsonArray kernels = o["kernels"].toArray();
        QSet<QString> groups, references;
        int measured = 0;
        for (const auto& v : kernels) {
            const QJsonObject k = v.toObject();
            groups.insert(k["group"].toString());
            references.insert(k["reference"].toString());
            QVERIFY(k["predicted_seconds"].toDouble() > 0);
            if (k["group"] == "gemm") QVERIFY(k["gemm"].toObject()["m"].toInt() > 0);
            if (k["group"] == "memory") QVERIFY(k["copy_bytes"].toDouble() > 0);
            if (k["group"] == "attention") {
                QVERIFY(k["measured_seconds"].isNull());
                QCOMPARE(k["attention"].toObject()["seq"].toInt(), 128);
                QVERIFY(k["attention"].toObject()["causal"].toBool());
            } else {
                QCOMPARE(k["measured_seconds"].toDouble(), k["predicted_seconds"].toDouble());  // simulated
                ++measured;
            }
        }
        QCOMPARE(groups, (QSet<QString>{"gemm", "memory", "attention"}));
        QCOMPARE(references, (QSet<QString>{"matmul", "copy", "sdpa_forward", "sdpa_backward"}));
        QCOMPARE(o["accuracy"].toObject()["segments"].toInt(), measured);

        const Run text = cfp(QStringList{"profile"} + kModel + QStringList{"--kernels", "--simulate", "--quiet"});
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY(text.out.contains("kernel by kernel on one device"));
        QVERIFY(text.out.contains("attention core, flash (forward)"));
        QVERIFY(text.out.contains("bench/reference/kernels.py"));
        // Options of the segment profile do not apply.
        QTemporaryDir dir;
        const Run withDb = cfp(QStringList{"profile"} + kModel + QStringList{"--kernels", "--simulate", "--db", dir.filePath("k.db")});
        QCOMPARE(withDb.exitCode, 2);
        QVERIFY(withDb.err.contains("--db does not apply to --kernels"));
        QVERIFY(!QFile::exists(dir.filePath("k.db")));
    }

    // --simulate: the session and the DB end to end; a second run reuses everything; `cfp plan
    // --db` takes the measurements (mixed provenance, the profile section) and labels them simulated.
    void simulateThenPlanWithTheDb() {
        QTemporaryDir dir;
        const QString db = dir.filePath("sim.db");
        const QStringList profile = QStringList{"profile"} + kModel + QStringList{"--mesh", "8", "--db", db, "--simulate", "--types", "T2", "--json"};
        const Run first = cfp(profile);
        QVERIFY2(first.exitCode == 0, first.err.constData());
        const QJsonObject a = parseObject(first.out);
        QCOMPARE(a["backend"].toString(), QString("simulated"));
        QCOMPARE(a["mesh"].toString(), QString("{x=8 (intra)}"));
        QVERIFY(a["calibration_measured"].toBool());
        QVERIFY(a["op_measurements_stored"].toInt() > 0);
        const QJsonArray types = a["segment_types"].toArray();
        QCOMPARE(types.size(), 1);
        const int combinations = types[0].toObject()["combinations"].toInt();
        QVERIFY(combinations > 1);
        QCOMPARE(a["results"].toArray().size(), combinations);
        QCOMPARE(types[0].toObject()["reused"].toInt(), 0);
        QVERIFY(a["accuracy"].toObject()["segments"].toInt() > 0);
        QVERIFY(QFile::exists(db));

        const Run second = cfp(profile);
        QVERIFY2(second.exitCode == 0, second.err.constData());
        const QJsonObject b = parseObject(second.out);
        QCOMPARE(b["segment_types"].toArray()[0].toObject()["reused"].toInt(), combinations);
        QVERIFY(!b["calibration_measured"].toBool());  // the DB has it

        const Run list = cfp({"profile", "--list", "--db", db, "--json"});
        QCOMPARE(list.exitCode, 0);
        const QJsonArray fingerprints = QJsonDocument::fromJson(list.out).array();
        QCOMPARE(fingerprints.size(), 1);
        QVERIFY(fingerprints[0].toObject()["fingerprint"].toString().startsWith("simulated|"));
        QCOMPARE(fingerprints[0].toObject()["hardware_spec"].toString(), QString("h100-sxm"));

        const Run plan = cfp(QStringList{"plan"} + kModel + QStringList{"--mesh", "8", "--no-baselines", "--db", db, "--json"});
        QVERIFY2(plan.exitCode == 0, plan.err.constData());
        const QJsonObject p = parseObject(plan.out);
        const QJsonObject prof = p["profile"].toObject();
        QCOMPARE(prof["db"].toString(), db);
        QVERIFY(prof["simulated"].toBool());
        QVERIFY(prof["calibrated"].toBool());
        QVERIFY(prof["op_measurements"].toInt() > 0);
        QVERIFY(prof["measured_ops_in_plan"].toInt() > 0);
        QCOMPARE(p["step"].toObject()["provenance"].toString(), QString("mixed"));

        const Run text = cfp(QStringList{"plan"} + kModel + QStringList{"--mesh", "8", "--no-baselines", "--db", db});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("SIMULATED"));

        // Another hardware spec has no measurements in this DB: a clear error.
        const Run other = cfp(QStringList{"plan"} + kModel + QStringList{"--mesh", "8", "--hardware", "a100-sxm-80gb", "--db", db});
        QCOMPARE(other.exitCode, 1);
        QVERIFY(other.err.contains("profile_db.not_found"));
        QVERIFY(other.err.contains("h100-sxm"));
    }

    // A damaged DB: a one-line error that names the file and --new-db; nothing changes; --new-db
    // keeps the damaged file aside and starts over.
    void damagedDb() {
        QTemporaryDir dir;
        const QString db = dir.filePath("bad.db");
        {
            QFile f(db);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("definitely not sqlite\n").repeated(100));
        }
        const QStringList profile = QStringList{"profile"} + kModel + QStringList{"--mesh", "8", "--db", db, "--simulate", "--types", "T2",
                                                                                  "--calibrate", "never", "--quiet"};
        const Run r = cfp(profile);
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.err.trimmed().split('\n').size(), 1);
        QVERIFY(r.err.contains("profile_db.damaged"));
        QVERIFY(r.err.contains("--new-db"));
        QFile f(db);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("definitely not sqlite\n").repeated(100));
        const Run plan = cfp(QStringList{"plan"} + kModel + QStringList{"--mesh", "8", "--db", db});
        QCOMPARE(plan.exitCode, 1);
        QVERIFY(plan.err.contains("profile_db.damaged"));

        const Run fresh = cfp(profile + QStringList{"--new-db"});
        QVERIFY2(fresh.exitCode == 0, fresh.err.constData());
        QVERIFY(fresh.out.contains("previous file kept as"));
        const QStringList aside = QDir(dir.path()).entryList({"bad.db.damaged-*"});
        QCOMPARE(aside.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCliProfile)
#include "tst_cli_profile.moc"
