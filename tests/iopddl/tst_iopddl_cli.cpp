// End-to-end tests of `cfp iopddl eval` and `cfp iopddl solve` on the contest's example and on
// small made-up problems: printed scores, JSON fields, written solutions, exit codes and errors.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run cfp(const QStringList& args, const QString& workDir = {}) {
    QProcess p;
    if (!workDir.isEmpty()) p.setWorkingDirectory(workDir);
    p.start(QStringLiteral(CFP_CLI_PATH), args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return {-2, {}, "timed out"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

QJsonObject json(const QByteArray& text) {
    QJsonParseError e;
    auto doc = QJsonDocument::fromJson(text, &e);
    if (e.error != QJsonParseError::NoError) qWarning("bad JSON: %s in %s", qPrintable(e.errorString()), text.constData());
    return doc.object();
}

const QString kExample = QStringLiteral(CFP_TEST_DATA_DIR "/iopddl/example.json");

void spit(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(text);
}

QByteArray slurp(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

}  // namespace

class TestIopddlCli : public QObject {
    Q_OBJECT

private slots:
    void evalText() {
        QTemporaryDir dir;
        const QString sol = dir.filePath("s.json");
        spit(sol, "[0, 0, 2, 1, 0]\n");
        Run r = cfp({"iopddl", "eval", kExample, sol});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("score    445"), r.out.constData());
        QVERIFY(r.out.contains("valid    yes"));
        QVERIFY(r.out.contains("peak usage 50 at t=50, limit 50"));
    }

    void evalJsonInvalid() {
        QTemporaryDir dir;
        const QString sol = dir.filePath("s.json");
        spit(sol, "Solution: [0, 0, 1, 1, 0]\n");
        Run r = cfp({"iopddl", "eval", kExample, sol, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["instance"].toString(), QString("example"));
        QCOMPARE(j["score"].toInteger(), 415);
        QCOMPARE(j["valid"].toBool(), false);
        QCOMPARE(j["node_cost"].toInteger(), 285);
        QCOMPARE(j["edge_cost"].toInteger(), 130);
        QCOMPARE(j["peak_usage"].toInteger(), 55);
        QCOMPARE(j["usage_limit"].toInteger(), 50);
        QCOMPARE(j["first_over_time"].toInteger(), 50);
        QCOMPARE(j["over_time_steps"].toInteger(), 20);
    }

    void evalErrors() {
        QTemporaryDir dir;
        const QString sol = dir.filePath("s.json");
        spit(sol, "[0, 0, 2]\n");
        Run size = cfp({"iopddl", "eval", kExample, sol});
        QCOMPARE(size.exitCode, 1);
        QVERIFY2(size.err.startsWith("cfp: error: "), size.err.constData());
        QVERIFY(size.err.contains("[iopddl.solution_size]"));
        QCOMPARE(size.err.count('\n'), 1);
        spit(sol, "[0, 0, 2, 1, 0");
        Run syntax = cfp({"iopddl", "eval", kExample, sol});
        QCOMPARE(syntax.exitCode, 1);
        QVERIFY(syntax.err.contains("[iopddl.solution]"));
        QVERIFY(syntax.err.contains(sol.toUtf8() + ":1:"));
        QCOMPARE(cfp({"iopddl", "eval", kExample}).exitCode, 2);
        QCOMPARE(cfp({"iopddl", "frobnicate"}).exitCode, 2);
        QCOMPARE(cfp({"iopddl", "eval", "/nonexistent.json", sol}).exitCode, 1);
        QCOMPARE(cfp({"iopddl", "solve", kExample}).exitCode, 2);  // --time-limit is required
        QCOMPARE(cfp({"iopddl", "solve", kExample, "--time-limit", "-3"}).exitCode, 2);
    }

    // The example's optimum is 445 (brute force in tst_iopddl_io); the solver must find it.
    void solveExample() {
        QTemporaryDir dir;
        Run r = cfp({"iopddl", "solve", kExample, "--time-limit", "2", "--threads", "2", "--json"}, dir.path());
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = json(r.out);
        QCOMPARE(j["score"].toInteger(), 445);
        QCOMPARE(j["valid"].toBool(), true);
        QVERIFY(j["seconds"].toDouble() < 3.0);
        QCOMPARE(j["solution"].toString(), QString("example.solution.json"));
        QCOMPARE(slurp(dir.filePath("example.solution.json")), QByteArray("[0, 0, 2, 1, 0]\n"));
        // The written solution evaluates to what solve printed.
        Run e = cfp({"iopddl", "eval", kExample, dir.filePath("example.solution.json"), "--json"});
        QCOMPARE(json(e.out)["score"].toInteger(), 445);
        Run text = cfp({"iopddl", "solve", kExample, "--time-limit", "1", "-o", dir.filePath("x.json")});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("score    445"));
        QVERIFY(text.out.contains("valid    yes"));
        QVERIFY(text.out.contains("seconds  "));
    }
};

QTEST_APPLESS_MAIN(TestIopddlCli)
#include "tst_iopddl_cli.moc"
