// Explorer projects keep the last plan (issue 24): a saved plan comes back in a fresh window without
// a search (same step time, pins, assignment; faster than the search that made it); a project whose
// request was edited is not restored as if current (another model build: searched again; only the
// pins: restored and marked out of date); a plan that no longer prices the same is searched again;
// and a project whose model fails to load leaves the window's model, pins, request and plan as they
// were. Also the project file itself: round trip, errors under /last_plan, requestDifferences.
// Offscreen; GPT-3 125M at batch 8 × sequence 128 on a fixed mesh of 8 (as tst_explorer).

#include <QElapsedTimer>
#include <QLabel>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "controller.h"
#include "main_window.h"
#include "panels.h"
#include "plan_helpers.h"
#include "window_helpers.h"
#include "plan/plan_json.h"
#include "workflow/request.h"

using namespace cfp;
using namespace cfp::explorer;
using namespace cfp::test::gui;

namespace {

WindowOptions projectWindow(const QString& project) {
    WindowOptions o;
    o.discoverDevices = false;
    o.model = project.toStdString();
    return o;
}

// Waits for a fresh project window's first job to start and every job to end.
bool waitOpened(MainWindow& w, const QSignalSpy& opened) {
    QElapsedTimer t;
    t.start();
    while (opened.isEmpty() && !w.lastErrorDialog() && t.elapsed() < kWaitMs) QTest::qWait(5);
    return waitIdle(w);
}

int searchesStarted(const QSignalSpy& started) {
    int n = 0;
    for (const QList<QVariant>& args : started)
        if (args.at(0).value<JobKind>() == JobKind::Search) ++n;
    return n;
}

// From the first job's start to the end of the last job of `until`'s kind (the project's opening
// job and, when it searches, the search), on a fresh window's jobs.
struct JobClock {
    QElapsedTimer clock;
    qint64 endMs = -1;
    JobClock(JobRunner& jobs, JobKind until) {
        QObject::connect(&jobs, &JobRunner::jobStarted, &jobs, [this](JobKind, const QString&) {
            if (!clock.isValid()) clock.start();
        });
        QObject::connect(&jobs, &JobRunner::jobFinished, &jobs, [this, until](JobKind kind, bool, const QString&, const QString&) {
            if (kind == until && clock.isValid()) endMs = clock.elapsed();
        });
    }
};

bool anyStatusContains(const QSignalSpy& status, const QString& text) {
    for (const QList<QVariant>& args : status)
        if (args.at(0).toString().contains(text)) return true;
    return false;
}

QString statusLines(const QSignalSpy& status) {
    QStringList lines;
    for (const QList<QVariant>& args : status) lines << args.at(0).toString();
    return lines.join(QLatin1Char('\n'));
}

// Pins segment type 1 to the plan's combination with its first block's strategy moved on by one
// (as tst_explorer's project test does): a plan the unpinned search would not choose.
Pin pinAnotherStrategy(MainWindow& w) {
    const auto& plan = w.explorer()->plan();
    const auto& c = plan->plan().segments[1].combination;
    QList<int> l(c.begin(), c.end());
    const size_t first = static_cast<size_t>(plan->plan().segments[1].firstBlock);
    l[0] = (l[0] + 1) % static_cast<int>(plan->analysis->report->blocks.blocks[first].strategies.size());
    w.planPanel()->pin(QStringLiteral("T1"), l);
    return w.explorer()->pins().at(0);
}

// The request as a project stores it (search options are not saved).
std::string requestText(const PlanRequest& r) { return requestToJson(r); }

}  // namespace

class TestProject : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

    // Written once by savedPlanComesBackWithoutASearch (a pinned search's plan), used by the
    // tests after it.
    QString project_;
    double savedStepSeconds_ = 0;
    Pin savedPin_;

private slots:
    void initTestCase() {
        setUpTestFiles(dir_, "tst_project");
    }

    // Save after a pinned search, open in a fresh window: the plan is there with the same step
    // time, pins and choices, no search job ran, and opening took less time than the search.
    void savedPlanComesBackWithoutASearch() {
        project_ = path("pinned.cfpx.json");
        std::string planText;
        Assignment assignment;
        qint64 searchMs = 0;
        PlanRequest request;
        {
            MainWindow w(smallModel());
            QVERIFY(waitAnalysis(w));
            QVERIFY(searchAndWait(w));
            savedPin_ = pinAnotherStrategy(w);
            QElapsedTimer t;
            t.start();
            QVERIFY(searchAndWait(w));
            searchMs = t.elapsed();
            const auto plan = w.explorer()->plan();
            QVERIFY(plan->plan().pins == std::vector<Pin>{savedPin_});
            savedStepSeconds_ = plan->plan().stepSeconds();
            planText = planToText(plan->plan(), plan->model->graph());
            assignment = plan->assignment();
            request = w.explorer()->request();
            w.saveProject(project_);
            QVERIFY(!w.lastErrorDialog());
        }
        // The file holds the request and the plan with the request it answers.
        auto read = readProjectFile(project_.toStdString());
        QVERIFY2(read, read ? "" : read.error().toString().c_str());
        QVERIFY(read->lastPlan);
        QVERIFY(read->lastPlan->request.pins == std::vector<Pin>{savedPin_});
        QVERIFY(requestDifferences(read->lastPlan->request, read->request).empty());
        QVERIFY(readRequestFile(project_.toStdString()));  // still a request file

        MainWindow w(projectWindow(project_));
        JobClock restoring(w.explorer()->jobs(), JobKind::Analysis);
        QSignalSpy started(&w.explorer()->jobs(), &JobRunner::jobStarted);
        QSignalSpy status(w.explorer(), &Explorer::status);
        QSignalSpy opened(w.explorer(), &Explorer::projectOpened);
        QVERIFY(waitOpened(w, opened));
        QCOMPARE(opened.size(), 1);
        QCOMPARE(searchesStarted(started), 0);
        const auto plan = w.explorer()->plan();
        QVERIFY(plan);
        QCOMPARE(plan->plan().stepSeconds(), savedStepSeconds_);
        QVERIFY(plan->plan().pins == std::vector<Pin>{savedPin_});
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{savedPin_});
        QVERIFY(plan->assignment() == assignment);
        QCOMPARE(planToText(plan->plan(), plan->model->graph()), planText);
        QCOMPARE(requestText(w.explorer()->request()), requestText(request));
        QVERIFY2(anyStatusContains(status, QStringLiteral("restored the saved plan")), qPrintable(statusLines(status)));
        // What the views read: the analysis is the plan's, the evaluator's step agrees, and the
        // plan panel does not call it out of date.
        QCOMPARE(w.explorer()->analysis(), plan->analysis);
        QCOMPARE(plan->outcome->evaluation.step.total(), plan->plan().evaluatorStepSeconds);
        QCOMPARE(plan->outcome->problem->objective(plan->assignment()), plan->plan().predictedStepSeconds);
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        QVERIFY2(!summary.contains(QStringLiteral("Out of date")), qPrintable(summary));
        // The combinations chart works on the restored problem.
        QSignalSpy alternatives(w.explorer(), &Explorer::alternativesReady);
        w.explorer()->requestAlternatives(plan->plan().segments[1].index);
        QVERIFY(waitIdle(w));
        QVERIFY(!alternatives.isEmpty());
        // Saving again gives the same bytes.
        const QString again = path("pinned-again.cfpx.json");
        w.saveProject(again);
        QCOMPARE(slurp(again), slurp(project_));

        // Faster than opening it as before (the request alone: load, analyse, search), timed the
        // same way: a fresh window's jobs from the first start to the plan (the model's load in
        // both); the better of two tries each, as the machine may be busy.
        const QString requestOnly = path("pinned-request-only.json");
        QVERIFY(writeRequestFile(requestOnly.toStdString(), read->request));
        auto openMs = [this](const QString& file, JobKind last, int searches) -> qint64 {
            MainWindow window(projectWindow(file));
            JobClock clock(window.explorer()->jobs(), last);
            QSignalSpy started(&window.explorer()->jobs(), &JobRunner::jobStarted);
            QSignalSpy opened(window.explorer(), &Explorer::projectOpened);
            if (!waitOpened(window, opened) || searchesStarted(started) != searches || !window.explorer()->plan()) return -1;
            // The same plan either way.
            if (window.explorer()->plan()->plan().stepSeconds() != savedStepSeconds_) return -1;
            return clock.endMs;
        };
        const qint64 restoreMs = std::min(restoring.endMs, openMs(project_, JobKind::Analysis, 0));
        const qint64 researchMs = std::min(openMs(requestOnly, JobKind::Search, 1), openMs(requestOnly, JobKind::Search, 1));
        qInfo("pinned search %lld ms; a fresh window on the project: %lld ms to load the model and restore its plan, %lld ms to load, "
              "analyse and search again", searchMs, restoreMs, researchMs);
        QVERIFY(restoreMs > 0 && researchMs > 0);
        QVERIFY2(restoreMs < researchMs, qPrintable(QStringLiteral("restored in %1 ms, searched again in %2 ms").arg(restoreMs).arg(researchMs)));
    }

    // A project whose request was edited after its plan was saved.
    void editedProjectIsNotRestoredAsCurrent_data() {
        QTest::addColumn<QByteArray>("from");
        QTest::addColumn<QByteArray>("to");
        QTest::addColumn<bool>("searched");
        QTest::addColumn<QString>("said");
        // The model's sequence length (the first "seq" is the project's request, the plan's request
        // and the plan follow): another model build, so another plan: searched again.
        QTest::newRow("seq") << QByteArray("\"seq\": 128") << QByteArray("\"seq\": 64") << true << "other settings: model";
        QTest::newRow("memory limit") << QByteArray("\"memory_limit_bytes\": 0") << QByteArray("\"memory_limit_bytes\": 60000000000") << true
                                      << "other settings: memory_limit_bytes";
        // The plan's own step edited: it no longer prices as saved (plan.stale): searched again.
        QTest::newRow("plan edited") << QByteArray("\"evaluator_step_seconds\": ") << QByteArray("\"evaluator_step_seconds\": 1") << true
                                     << "plan.stale";
        // Only the pins: the plan is the project's model and settings, restored and marked out of
        // date as in a session whose pins changed after the search.
        QTest::newRow("pins") << QByteArray("\"pins\": [") << QByteArray() << false << "made before the pins changed";
    }

    void editedProjectIsNotRestoredAsCurrent() {
        QFETCH(QByteArray, from);
        QFETCH(QByteArray, to);
        QFETCH(bool, searched);
        QFETCH(QString, said);
        QVERIFY2(!project_.isEmpty(), "savedPlanComesBackWithoutASearch runs first");
        QByteArray text = slurp(project_);
        const qsizetype at = text.indexOf(from);
        QVERIFY(at >= 0);
        if (to.isEmpty()) {
            // The project's own pins emptied (the plan's request keeps them).
            const qsizetype end = text.indexOf(']', at);
            text.replace(at, end - at + 1, "\"pins\": []");
        } else {
            text.replace(at, from.size(), to);
        }
        const QString edited = path(QStringLiteral("edited-%1.cfpx.json").arg(QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-')));
        QVERIFY(spit(edited, text));
        auto read = readProjectFile(edited.toStdString());
        QVERIFY2(read, read ? "" : read.error().toString().c_str());

        MainWindow w(projectWindow(edited));
        QSignalSpy started(&w.explorer()->jobs(), &JobRunner::jobStarted);
        QSignalSpy status(w.explorer(), &Explorer::status);
        QSignalSpy opened(w.explorer(), &Explorer::projectOpened);
        QVERIFY(waitOpened(w, opened));
        QCOMPARE(opened.size(), 1);
        QVERIFY2(anyStatusContains(status, said), qPrintable(statusLines(status)));
        QCOMPARE(searchesStarted(started), searched ? 1 : 0);
        const auto plan = w.explorer()->plan();
        QVERIFY(plan);
        QVERIFY(requestText(w.explorer()->request()) == requestText(read->request));
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        if (searched) {
            // A plan for the project's request as it is now.
            QVERIFY(requestDifferences(plan->request, w.explorer()->request(), &plan->plan().mesh).empty());
            QVERIFY2(!summary.contains(QStringLiteral("Out of date")), qPrintable(summary));
        } else {
            // The saved plan, shown as out of date against the project's pins.
            QCOMPARE(plan->plan().stepSeconds(), savedStepSeconds_);
            QVERIFY(plan->plan().pins == std::vector<Pin>{savedPin_});
            QVERIFY(w.explorer()->pins().empty());
            QVERIFY2(summary.contains(QStringLiteral("Out of date")), qPrintable(summary));
        }
    }

    // A project without a saved plan (written before plans were kept) is searched as before.
    void projectWithoutPlanIsSearched() {
        PlanRequest r;
        r.model.source = "builtin:gpt3-125m";
        r.model.build.batch = 8;
        r.model.build.seq = 128;
        r.mesh = cfp::test::meshOf("8");
        const QString file = path("request-only.json");
        QVERIFY(writeRequestFile(file.toStdString(), r));
        MainWindow w(projectWindow(file));
        QSignalSpy started(&w.explorer()->jobs(), &JobRunner::jobStarted);
        QSignalSpy opened(w.explorer(), &Explorer::projectOpened);
        QVERIFY(waitOpened(w, opened));
        QCOMPARE(searchesStarted(started), 1);
        QVERIFY(w.explorer()->plan());
    }

    // A project whose model fails to load leaves the session as it was.
    void failedProjectLeavesSessionUntouched_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QByteArray>("contents");  // empty: the file does not exist
        QTest::newRow("missing") << "missing.hlo" << QByteArray();
        QTest::newRow("truncated") << "truncated.hlo" << QByteArray("HloModule m\n\nENTRY main {\n  p0 = f32[8,16]{1,0} parameter(0)\n  ROOT d = f32[8");
        QTest::newRow("truncated graph") << "truncated.json" << QByteArray("{\"format\": \"cfp-graph\", \"version\": 1, \"ops\": [ {\"name\": ");
    }

    void failedProjectLeavesSessionUntouched() {
        QFETCH(QString, model);
        QFETCH(QByteArray, contents);
        const QString modelPath = path(model);
        if (!contents.isEmpty()) QVERIFY(spit(modelPath, contents));
        else QFile::remove(modelPath);

        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        const Pin pin = pinAnotherStrategy(w);
        const auto modelBefore = w.explorer()->model();
        const auto analysisBefore = w.explorer()->analysis();
        const auto planBefore = w.explorer()->plan();
        const PlanRequest requestBefore = w.explorer()->request();
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{pin});

        PlanRequest other;
        other.model.source = modelPath.toStdString();
        other.mesh = cfp::test::meshOf("8");
        const QString project = path(QStringLiteral("broken-model-%1.cfpx.json").arg(QString::fromLatin1(QTest::currentDataTag()).replace(' ', '-')));
        QVERIFY(writeRequestFile(project.toStdString(), other));
        QSignalSpy opened(w.explorer(), &Explorer::projectOpened);
        QSignalSpy failed(w.explorer(), &Explorer::failed);
        w.openPath(project);
        QVERIFY(waitIdle(w));
        QCOMPARE(opened.size(), 0);
        QCOMPARE(failed.size(), 1);
        QVERIFY(w.lastErrorDialog());
        QVERIFY(w.lastErrorDialog()->isVisible());
        QVERIFY2(w.lastErrorDialog()->text().contains(model), qPrintable(w.lastErrorDialog()->text()));
        QCOMPARE(w.explorer()->model(), modelBefore);
        QCOMPARE(w.explorer()->analysis(), analysisBefore);
        QCOMPARE(w.explorer()->plan(), planBefore);
        QVERIFY(w.explorer()->request() == requestBefore);
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{pin});
        w.lastErrorDialog()->close();
        // And the session goes on: a search honours the pins on the model as it was.
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->model->loaded->spec, std::string("builtin:gpt3-125m"));
        QVERIFY(w.explorer()->plan()->plan().pins == std::vector<Pin>{pin});
    }

    // The file: a round trip, the last plan's errors located under /last_plan, a request file
    // reads a project, and requestDifferences' rules.
    void projectFile() {
        PlanRequest r;
        r.pins = cfp::test::pinsOf({"b0=0"});
        r.mesh = cfp::test::meshOf("x=8");
        ProjectPlan last;
        last.request = r;
        last.request.mesh = {};  // made under auto
        last.partial = true;
        last.planText = "{\n  \"format\": \"cfp-plan\",\n  \"x\": [1, 2.5]\n}\n";
        const std::string text = projectToJson(r, &last);
        QCOMPARE(projectToJson(r, &last), text);  // deterministic
        auto back = projectFromJson(text, "p.json");
        QVERIFY2(back, back ? "" : back.error().toString().c_str());
        QVERIFY(back->request == r);
        QVERIFY(back->lastPlan);
        QVERIFY(back->lastPlan->request == last.request);
        QVERIFY(back->lastPlan->partial);
        QCOMPARE(back->lastPlan->planText, std::string("{\"format\":\"cfp-plan\",\"x\":[1,2.5]}"));
        QVERIFY(requestFromJson(text, "p.json"));
        QVERIFY(!projectFromJson(requestToJson(r), "r.json")->lastPlan);

        auto bad = projectFromJson(QByteArray::fromStdString(text).replace("\"nodes\": 1,\n      \"mesh\"", "\"nodes\": 0,\n      \"mesh\"").toStdString(),
                                   "p.json");
        QVERIFY(!bad);
        QCOMPARE(QString::fromStdString(bad.error().where), QStringLiteral("/last_plan/request/nodes"));
        bad = projectFromJson(QByteArray::fromStdString(text).replace("\"partial\": true", "\"partial\": 1").toStdString(), "p.json");
        QVERIFY(!bad);
        QCOMPARE(QString::fromStdString(bad.error().where), QStringLiteral("/last_plan/partial"));

        // Auto answers the plan's own mesh, not another; pins and the model are differences.
        const Mesh planMesh = cfp::test::meshOf("x=8").mesh();
        QVERIFY(requestDifferences(last.request, r, &planMesh).empty());
        const Mesh otherMesh = cfp::test::meshOf("x=2,y=4").mesh();
        QCOMPARE(requestDifferences(last.request, r, &otherMesh), std::vector<std::string>{"mesh"});
        QCOMPARE(requestDifferences(r, last.request, &planMesh), std::vector<std::string>{"mesh"});  // fixed does not answer auto
        PlanRequest s = r;
        s.pins.clear();
        s.model.build.seq = 64;
        s.blockCheck = BlockCheck::Run;  // not a difference
        QCOMPARE(requestDifferences(r, s), (std::vector<std::string>{"model", "pins"}));
    }
};

QTEST_MAIN(TestProject)
#include "tst_project.moc"
