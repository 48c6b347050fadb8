// The explorer's profiler panel on the offscreen platform: the default profile DB sits in one
// application directory (not cfp-explorer/cfp-explorer), simulated runs go to a DB of their own and
// never switch the search to their numbers, and no estimate of the time left survives Cancel.

#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "controller.h"
#include "main_window.h"
#include "panels.h"
#include "plan_helpers.h"
#include "window_helpers.h"
#include "profiler/profile_db.h"

using namespace cfp;
using namespace cfp::explorer;
using namespace cfp::test::gui;

class TestProfilePanel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toUtf8());
        qputenv("XDG_DATA_HOME", dir_.filePath("data").toUtf8());
        // As app/explorer/main.cpp names the application.
        QCoreApplication::setOrganizationName("cfp-explorer");
        QCoreApplication::setApplicationName("cfp-explorer");
        if (!profiler::profileDbAvailable()) QSKIP("built without SQLite");
    }

    // The proposed DB: DATA/cfp-explorer/profile.db, once (AppDataLocation doubles it, since the
    // organization and the application are both named cfp-explorer).
    void defaultDbPathHasNoDoubledDirectory() {
        const QString expected = QDir(dir_.filePath("data")).filePath("cfp-explorer/profile.db");
        QCOMPARE(ProfilerPanel::defaultDbPath(), expected);
        QVERIFY(!ProfilerPanel::defaultDbPath().contains("cfp-explorer/cfp-explorer"));
        MainWindow w(smallModel());
        QCOMPARE(w.profilerPanel()->dbEdit()->text(), expected);
        QCOMPARE(w.profilerPanel()->runDbPath(), expected);
        w.profilerPanel()->simulateBox()->setChecked(true);
        QCOMPARE(w.profilerPanel()->runDbPath(), QDir(dir_.filePath("data")).filePath("cfp-explorer/profile.simulated.db"));
    }

    // A simulated run writes NAME.simulated.db beside the DB named in the panel, leaves that DB
    // alone and does not make the search plan with simulated numbers.
    void simulatedRunsHaveTheirOwnDb() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        ProfilerPanel* panel = w.profilerPanel();
        const QString real = path("sim/profile.db");
        const QString simulated = path("sim/profile.simulated.db");
        panel->dbEdit()->setText(real);
        panel->simulateBox()->setChecked(true);
        QCOMPARE(panel->runDbPath(), simulated);
        QVERIFY2(panel->statusText().contains(simulated), qPrintable(panel->statusText()));
        QSignalSpy finished(panel, &ProfilerPanel::profilingFinished);
        panel->startButton()->click();
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QVERIFY(panel->measurements()->topLevelItemCount() > 0);
        QVERIFY(QFile::exists(simulated));
        QVERIFY(!QFile::exists(real));
        QVERIFY2(panel->statusText().contains(simulated), qPrintable(panel->statusText()));
        QVERIFY2(panel->statusText().contains("not used for planning"), qPrintable(panel->statusText()));
        QVERIFY(!w.explorer()->request().profile);
        QVERIFY2(!panel->progressText().contains("left"), qPrintable(panel->progressText()));
    }

    // "Kernels vs model" (as cfp profile --kernels): one row per kernel of the model's step with the
    // model's price and, simulated, the same measured; the attention core priced but not run; no
    // DB written, the search's measurements untouched; the segment view's columns come back.
    void kernelsAgainstTheModel() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        ProfilerPanel* panel = w.profilerPanel();
        panel->dbEdit()->setText(path("kernels/profile.db"));
        panel->simulateBox()->setChecked(true);
        QSignalSpy finished(panel, &ProfilerPanel::profilingFinished);
        panel->kernelsButton()->click();
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QTreeWidget* rows = panel->measurements();
        QCOMPARE(rows->headerItem()->text(1), QString("kernel"));
        QSet<QString> groups;
        int attention = 0;
        for (int i = 0; i < rows->topLevelItemCount(); ++i) {
            const QTreeWidgetItem* it = rows->topLevelItem(i);
            groups.insert(it->text(0));
            QVERIFY(!it->text(4).isEmpty());  // the model's price
            if (it->text(0) == "attention") {
                ++attention;
                QCOMPARE(it->text(6), QString("not run"));
                QVERIFY(it->text(3).isEmpty());
            } else {
                QCOMPARE(it->text(5), QString("+0.0%"));  // simulated: the model's own numbers
            }
        }
        QCOMPARE(groups, (QSet<QString>{"gemm", "memory", "attention"}));
        QCOMPARE(attention, 4);  // flash (the default kernel's speed) and flash2, forward and backward
        QVERIFY2(panel->statusText().contains("kernels on one GPU"), qPrintable(panel->statusText()));
        QVERIFY(!QFile::exists(path("kernels/profile.db")) && !QFile::exists(path("kernels/profile.simulated.db")));
        QVERIFY(!w.explorer()->request().profile);
        QVERIFY(panel->startButton()->isEnabled() && panel->kernelsButton()->isEnabled());
        QSignalSpy again(panel, &ProfilerPanel::profilingFinished);
        panel->startButton()->click();
        QVERIFY(again.wait(kWaitMs));
        QCOMPARE(rows->headerItem()->text(1), QString("combination"));
    }

    // Cancel takes the estimate of the time left away at once, and no late progress report brings
    // it back; the line then says how many combinations were done.
    void cancelClearsTheEstimate() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        ProfilerPanel* panel = w.profilerPanel();
        panel->dbEdit()->setText(path("cancel/profile.db"));
        panel->simulateBox()->setChecked(true);
        QSignalSpy finished(panel, &ProfilerPanel::profilingFinished);
        panel->startButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(panel->progressText().contains("left") || !finished.isEmpty(), kWaitMs);
        if (!finished.isEmpty()) QSKIP("the run finished before an estimate was shown (too fast a machine)");
        panel->cancelButton()->click();
        QVERIFY2(!panel->progressText().contains("left"), qPrintable(panel->progressText()));
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.at(0).at(0).toBool(), false);
        QTest::qWait(300);  // progress reports queued before the session stopped
        QVERIFY2(!panel->progressText().contains("left"), qPrintable(panel->progressText()));
        QVERIFY2(panel->progressText().startsWith("Cancelled after"), qPrintable(panel->progressText()));
        QVERIFY(panel->startButton()->isEnabled());
    }
};

QTEST_MAIN(TestProfilePanel)
#include "tst_profile_panel.moc"
