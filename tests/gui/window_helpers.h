#pragma once
// What the explorer's GUI tests share: the small model they open, waiting for a fresh window's
// analysis and for a search, and reading and writing whole files. Offscreen platform.

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "controller.h"
#include "main_window.h"
#include "plan_helpers.h"

namespace cfp::test::gui {

inline constexpr int kWaitMs = 300000;

// GPT-3 125M at batch 8 × sequence 128 on a mesh of 8: analysed and searched in well under a second.
inline explorer::WindowOptions smallModel() {
    explorer::WindowOptions o;
    o.model = "builtin:gpt3-125m";
    o.build.batch = 8;
    o.build.seq = 128;
    o.cluster.mesh = cfp::test::meshOf("8");
    o.discoverDevices = false;
    return o;
}

inline bool waitIdle(explorer::MainWindow& w) { return w.explorer()->jobs().waitForIdle(kWaitMs); }

// Waits for the first analysis of a fresh window (its job starts from the event loop).
inline bool waitAnalysis(explorer::MainWindow& w) {
    QElapsedTimer t;
    t.start();
    while (!w.explorer()->analysis() && t.elapsed() < kWaitMs) QTest::qWait(5);
    return waitIdle(w) && w.explorer()->analysis();
}

inline bool searchAndWait(explorer::MainWindow& w) {
    w.explorer()->search();
    return waitIdle(w) && w.explorer()->plan();
}

// A test's files in `dir` (CFP_KEEP_TEST_FILES=1 keeps them for a look afterwards), and its
// settings (recent files, layout) in a settings file of that test only.
inline void setUpTestFiles(QTemporaryDir& dir, const char* testName) {
    QVERIFY(dir.isValid());
    if (qEnvironmentVariableIsSet("CFP_KEEP_TEST_FILES")) {
        dir.setAutoRemove(false);
        qInfo("test files kept in %s", qPrintable(dir.path()));
    }
    qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());
    QCoreApplication::setOrganizationName("cfp-explorer-test");
    QCoreApplication::setApplicationName(testName);
}

inline QByteArray slurp(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

inline bool spit(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

}  // namespace cfp::test::gui
