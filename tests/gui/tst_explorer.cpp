// GUI flows of cfp-explorer on the offscreen platform: open the default model and analyse it off the
// GUI thread, search with progress and charts, override a segment (combo box), undo/redo, re-search
// with the pin, export every format (byte-identical to `cfp export`), save and reload a project,
// error dialogs for malformed files, recent files, drag and drop, the folded graph, and the job
// runner's rules (stale results dropped, cancel). Item models run under QAbstractItemModelTester.
//
// Most flows use GPT-3 125M at batch 8 × sequence 128 on a fixed mesh of 8 (fast); the first test
// opens the real default (GPT-3 1.3B on one node of 8×H100) and searches every mesh, as a user would.

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QRegularExpression>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QTreeView>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtTest>

#include "charts.h"
#include "compare_dialog.h"
#include "graph_view.h"
#include "main_window.h"
#include "models.h"
#include "panels.h"
#include "controller.h"
#include "plan_helpers.h"
#include "window_helpers.h"
#include "view_format.h"
#include "plan/planner.h"
#include "sharding/mesh.h"

using namespace cfp;
using namespace cfp::explorer;
using namespace cfp::test::gui;

namespace {

// `cfp estimate --json` of a configuration on smallModel()'s model and cluster (empty on failure).
QJsonObject cliEstimate(const QString& config, const QStringList& more = {}) {
    QProcess p;
    p.start(QStringLiteral(CFP_CLI_PATH), QStringList{"estimate", "builtin:gpt3-125m", "--batch", "8", "--seq", "128", "--config", config, "--json"} + more);
    if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

// The plan "Your configuration" prices for `config` (the search panel's Estimate).
Plan estimateFromPanel(MainWindow& w, const QString& config) {
    w.searchPanel()->configEdit()->setText(config);
    w.searchPanel()->estimateButton()->click();
    if (!waitIdle(w) || !w.explorer()->lastEstimate()) qFatal("no estimate");
    return w.explorer()->lastEstimate()->outcome.plan;
}

}  // namespace

class TestExplorer : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        setUpTestFiles(dir_, "tst_explorer");
    }

    // The default model opens at once (the window is up before the model), is analysed off the
    // GUI thread, and the search on every mesh of one node finds a plan no slower than the baselines.
    void opensDefaultModelAnalysesAndSearches() {
        WindowOptions o;
        o.discoverDevices = false;
        MainWindow w(o);
        w.show();
        QVERIFY(!w.explorer()->analysis());  // nothing computed in the constructor
        QSignalSpy progress(w.explorer(), &Explorer::searchProgress);
        QTest::qWait(1);                      // the load starts from the event loop
        QVERIFY(w.explorer()->jobs().isRunning(JobKind::Analysis));
        // Search pressed while the model loads: it starts once the analysis is in.
        w.searchPanel()->searchButton()->click();
        QVERIFY(!w.lastErrorDialog());
        QVERIFY(waitAnalysis(w));
        auto a = w.explorer()->analysis();
        QCOMPARE(QString::fromStdString(a->model->loaded->spec), QStringLiteral("builtin:gpt3-1.3b"));
        QAbstractItemModelTester tester(w.structureModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto& cover = a->report->cover;
        QCOMPARE(w.structureModel()->rowCount(), static_cast<int>(cover.segments.size()) + (a->report->blocks.resolvedLater.empty() ? 0 : 1));
        // Segment → blocks → ops with counts.
        const QModelIndex seg1 = w.structureModel()->index(1, 0);
        QCOMPARE(w.structureModel()->rowCount(seg1), cover.segments[1].blockCount);
        const QModelIndex block = w.structureModel()->index(0, 0, seg1);
        const auto& pb = a->report->blocks.blocks[static_cast<size_t>(cover.segments[1].firstBlock)];
        QCOMPARE(w.structureModel()->rowCount(block), static_cast<int>(pb.members.size()));
        QCOMPARE(w.structureModel()->index(0, StructureModel::ColOps, block).data().toString().section(' ', 0, 0),
                 QString::fromStdString(std::string(opKindName(a->graph().op(pb.members[0]).kind))));
        QVERIFY(w.structureModel()->index(1, StructureModel::ColOps).data().toString().contains(QStringLiteral("%1 blocks").arg(cover.segments[1].blockCount)));
        // The "outside blocks" row says how the planner decides every op (plan/op_owners.h).
        const QString outside = w.structureModel()->index(static_cast<int>(cover.segments.size()), 0).data(Qt::ToolTipRole).toString();
        QVERIFY2(outside.contains(QStringLiteral("%1 in blocks").arg(a->decisions.inBlocks)) && outside.contains(QStringLiteral("constant-folded")) &&
                     outside.contains(QStringLiteral("Opaque ops (no sharding rule, block boundaries): none")),
                 qPrintable(outside));
        // The folded graph: one node per run; the layers are one "Layer × 22" node.
        QCOMPARE(w.graphView()->visibleNodeCount(), static_cast<int>(a->runs.size()));
        QCOMPARE(a->typeNames[static_cast<size_t>(cover.segments[1].type)], std::string("Layer"));
        // The search: progress, best so far, plan, baselines.
        QVERIFY(w.explorer()->plan());
        QVERIFY(progress.count() >= 2);
        QVERIFY2(progress.last().at(1).toString().endsWith(QStringLiteral(" s")), qPrintable(progress.last().at(1).toString()));
        QCOMPARE(w.searchPanel()->progressBar()->value(), 1000);
        QVERIFY(!w.explorer()->bestSoFar().empty());
        QCOMPARE(w.explorer()->bestSoFar().back().second, w.explorer()->plan()->plan().predictedStepSeconds);
        // The curve runs to the end of the search, not to its last improvement; the stage line says
        // how long the search has run; skipped meshes say why in the result's tooltip.
        const auto curve = w.explorer()->bestSoFar();
        for (size_t i = 1; i < curve.size(); ++i) QVERIFY(curve[i].first >= curve[i - 1].first && curve[i].second <= curve[i - 1].second);
        bool anySkipped = false;
        for (const MeshCandidate& c : w.explorer()->plan()->outcome->candidates) anySkipped = anySkipped || !c.planned;
        if (anySkipped) QVERIFY(w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult")) &&
                                w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult"))->toolTip().contains(QStringLiteral("Skipped meshes")));
        const Plan& plan = w.explorer()->plan()->plan();
        QVERIFY(w.explorer()->plan()->outcome->candidates.size() >= 3);  // every mesh of one node
        for (const Baseline& b : plan.baselines)
            if (b.feasible && b.fits) QVERIFY(plan.evaluatorStepSeconds <= b.stepSeconds * (1 + 1e-9));
        QVERIFY(w.segmentChart()->pointCount() >= 3 * static_cast<int>(plan.segments.size()));
        QVERIFY(w.baselineChart()->pointCount() >= 1);
        QVERIFY(w.combinationChart()->alternatives());  // the layer's combinations were requested
    }

    // Cancel stops the search: the buttons and the progress bar return to idle, no error, and the
    // next search still works. What was planned before Cancel is kept: no plan when no mesh had
    // one yet, else the best of them, marked stopped.
    // Progress on a search over every mesh says mesh k of n (n: the meshes, not their
    // sequence-parallel variants) and the bar never goes back; Cancel after the first plan keeps
    // it, marked partial in both summaries.
    void cancelStopsTheSearch() {
        WindowOptions o = smallModel();
        o.build.seq = 2048;  // a search of seconds: Cancel lands mid-way
        o.cluster.mesh = MeshChoice::automatic();
        MainWindow w(o);
        w.show();
        QVERIFY(waitAnalysis(w));
        QSignalSpy finished(&w.explorer()->jobs(), &JobRunner::jobFinished);
        QSignalSpy progress(w.explorer(), &Explorer::searchProgress);
        std::vector<int> bar;
        connect(w.searchPanel()->progressBar(), &QProgressBar::valueChanged, this, [&](int v) { bar.push_back(v); });
        w.searchPanel()->searchButton()->click();
        QVERIFY(w.explorer()->jobs().isRunning(JobKind::Search));
        QVERIFY(!w.searchPanel()->searchButton()->isEnabled());
        QElapsedTimer t;
        t.start();
        while (w.explorer()->bestSoFar().empty() && w.explorer()->jobs().isRunning(JobKind::Search) && t.elapsed() < kWaitMs) QTest::qWait(2);
        QVERIFY2(w.explorer()->jobs().isRunning(JobKind::Search), "the search ended before Cancel");
        QElapsedTimer stopping;
        stopping.start();
        w.searchPanel()->cancelButton()->click();
        QVERIFY(waitIdle(w));
        qInfo("stopped %lld ms after Cancel", static_cast<long long>(stopping.elapsed()));
        auto kept = w.explorer()->plan();
        QVERIFY(kept);
        QVERIFY(kept->outcome->stopped);
        QVERIFY(kept->plan().baselines.empty());
        QVERIFY2(w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult"))->text().contains(QStringLiteral("Partial result")),
                 qPrintable(w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult"))->text()));
        QVERIFY(w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text().contains(QStringLiteral("Partial")));
        const int meshes = static_cast<int>(cfp::autoMeshes(8, 8).size());
        QVERIFY(progress.count() >= 2);
        int meshLines = 0;
        for (const auto& args : progress) {
            const QString text = args.at(1).toString();
            static const QRegularExpression k(QStringLiteral("mesh (\\d+) of (\\d+) "));
            if (const auto m = k.match(text); m.hasMatch()) {
                ++meshLines;
                QCOMPARE(m.captured(2).toInt(), meshes);
                QVERIFY(m.captured(1).toInt() >= 1 && m.captured(1).toInt() <= meshes);
            }
        }
        QVERIFY(meshLines > 0);
        for (size_t i = 1; i + 1 < bar.size(); ++i) QVERIFY2(bar[i] >= bar[i - 1] || bar[i] == 0, "the progress bar went back");
        QVERIFY(w.searchPanel()->searchButton()->isEnabled());
        QVERIFY(!w.searchPanel()->cancelButton()->isEnabled());
        QVERIFY(!w.lastErrorDialog());  // cancelling is not an error
        bool sawEnd = false;
        for (const auto& args : finished)
            if (args.at(0).value<JobKind>() == JobKind::Search) sawEnd = true;
        QVERIFY(sawEnd);
        w.explorer()->setCluster([&] { ClusterSettings c = w.explorer()->cluster(); c.mesh = cfp::test::meshOf("8"); return c; }());
        QVERIFY(searchAndWait(w));
    }

    // Override one segment through the combo-box editor, undo/redo it, and re-search: the result
    // honours the pin and the table shows the change against the previous plan.
    void overrideUndoAndResearch() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        auto first = w.explorer()->plan();
        PlanModel* model = w.planPanel()->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int seg = 1;
        const SegmentPlan& sp = first->plan().segments[seg];
        const QModelIndex cell = model->segmentIndex(seg, PlanModel::ColCombination);
        QVERIFY(cell.isValid());
        QCOMPARE(cell.data(PlanModel::CombinationRole).value<QList<int>>(), QList<int>(sp.combination.begin(), sp.combination.end()));
        QCOMPARE(model->segmentIndex(seg, PlanModel::ColPinned).data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Unchecked);

        // The editor: one combo box per block; choose another strategy for the first block.
        CombinationDelegate delegate;
        QWidget* editor = delegate.createEditor(w.planPanel()->view()->viewport(), QStyleOptionViewItem(), cell);
        QVERIFY(editor);
        delegate.setEditorData(editor, cell);
        const auto boxes = editor->findChildren<QComboBox*>();
        QCOMPARE(boxes.size(), sp.blockCount);
        QCOMPARE(boxes[0]->currentIndex(), sp.combination[0]);
        const int other = (sp.combination[0] + 1) % boxes[0]->count();
        boxes[0]->setCurrentIndex(other);
        delegate.setModelData(editor, model, cell);
        delete editor;
        QCOMPARE(w.explorer()->pins().size(), size_t{1});
        const Pin pin = w.explorer()->pins()[0];
        QCOMPARE(pin.target(), std::string("1"));
        QCOMPARE(model->segmentIndex(seg, PlanModel::ColPinned).data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        QVERIFY(model->segmentIndex(seg, PlanModel::ColCombination).data().toString().contains(QStringLiteral("re-search")));

        // The window does not grow with the pin's text (the Undo button says Undo; the text is its
        // tooltip; 2139 px before)
        // (form panels scroll in their docks, chart tabs scroll): it fits a 1280-px screen.
        QVERIFY2(w.minimumSizeHint().width() <= 1280, qPrintable(QString::number(w.minimumSizeHint().width())));
        // The plan on screen no longer answers the pins: the summary says so until a re-search.
        QLabel* summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"));
        QVERIFY(summary->text().contains(QStringLiteral("Out of date")));
        QUndoStack* undo = w.planPanel()->undoStack();
        undo->undo();
        QVERIFY(w.explorer()->pins().empty());
        QVERIFY(!summary->text().contains(QStringLiteral("Out of date")));
        QVERIFY2(w.minimumSizeHint().width() <= 1280, qPrintable(QString::number(w.minimumSizeHint().width())));
        undo->redo();
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{pin});

        w.planPanel()->researchButton()->click();
        QVERIFY(waitIdle(w));
        auto second = w.explorer()->plan();
        QVERIFY(second != first);
        QCOMPARE(w.explorer()->previousPlan(), first);
        const Plan& p = second->plan();
        QVERIFY(p.pins == std::vector<Pin>{pin});
        QCOMPARE(p.segments[seg].combination[0], other);
        QVERIFY(p.blocks[static_cast<size_t>(p.segments[seg].firstBlock)].pinned);
        QVERIFY(p.predictedStepSeconds >= first->plan().predictedStepSeconds * (1 - 1e-12));  // a pin never helps
        const QString delta = model->segmentIndex(seg, PlanModel::ColDelta).data().toString();
        QVERIFY2(!delta.isEmpty(), "the diff column is empty");
        QVERIFY2(w.minimumSizeHint().width() <= 1280, qPrintable(QString::number(w.minimumSizeHint().width())));
        // The summary a person reads first: step, memory with its headroom, throughput and MFU, the
        // plan in DP/TP/ZeRO terms, against the baselines, against the previous plan.
        QVERIFY(!summary->text().contains(QStringLiteral("Out of date")));
        for (const QString& part : {QStringLiteral("headroom"), QStringLiteral(" tokens/s ("), QStringLiteral("MFU "), QStringLiteral("ZeRO-1"),
                                    QStringLiteral("against the baselines: "), QStringLiteral("vs previous plan"),
                                    // GPT-2's vocabulary in the head (plan/unaligned.h); the whole sentence in the tooltip
                                    QStringLiteral("unaligned GEMMs (dimension 50257)")})
            QVERIFY2(summary->text().contains(part), qPrintable(part + QStringLiteral(" missing from ") + summary->text()));
        QVERIFY2(summary->toolTip().contains(QStringLiteral("padded to a multiple of 128 (50304)")), qPrintable(summary->toolTip()));
        // Undo after the re-search: the pinned plan stays on screen, marked out of date.
        undo->undo();
        QVERIFY(summary->text().contains(QStringLiteral("Out of date")));
        undo->redo();
        // Unpin through the check box.
        QVERIFY(model->setData(model->segmentIndex(seg, PlanModel::ColPinned), Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(w.explorer()->pins().empty());
        // The structure tree shows the pin in the block's plan column.
        w.structureModel()->setPlan(second);
        const QModelIndex blockRow = w.structureModel()->indexFor({Selection::Kind::Block, p.segments[seg].firstBlock});
        QVERIFY(w.structureModel()->index(blockRow.row(), StructureModel::ColStrategy, blockRow.parent()).data().toString().contains("pinned"));
    }

    // Small texts: no "-0 ns" when a difference rounds to zero; a mesh the cluster cannot hold is
    // reported as a mesh error, not as a model that cannot be opened.
    void formatAndErrorTitles() {
        QCOMPARE(formatSeconds(-1e-10), QStringLiteral("0 ns"));
        QCOMPARE(formatSeconds(-2e-3), QStringLiteral("-2.0 ms"));
        QCOMPARE(formatSeconds(0.0), QStringLiteral("0 µs"));
        // A change that rounds to nothing has no sign (the Δ column and "vs previous plan").
        QCOMPARE(formatDelta(-1e-10), QStringLiteral("±0"));
        QCOMPARE(formatDelta(-2e-3), QStringLiteral("−2.0 ms"));
        QCOMPARE(formatDelta(3.5e-3), QStringLiteral("+3.5 ms"));
        QCOMPARE(formatDuration(42.4), QStringLiteral("42 s"));
        QCOMPARE(formatDuration(200), QStringLiteral("3 min 20 s"));
        QCOMPARE(formatDuration(3900), QStringLiteral("1 h 05 min"));
        PlanProgress pp;
        pp.stage = "search";
        pp.mesh = "{x=2, y=4}, sequence parallel over y";
        pp.meshIndex = 2;
        pp.meshCount = 10;
        pp.pass = 3;
        QCOMPARE(progressText(pp), QStringLiteral("search · mesh 3 of 10 {x=2, y=4}, sequence parallel over y · pass 3"));
        pp.accumulation = 2;
        pp.accumulationCount = 3;
        QCOMPARE(progressText(pp), QStringLiteral("2 round(s) (1 of 3) · search · mesh 3 of 10 {x=2, y=4}, sequence parallel over y · pass 3"));
        WindowOptions o = smallModel();
        auto three = parseMesh("3");
        QVERIFY(three.ok());
        o.cluster.mesh = MeshChoice::fixed(*three);
        MainWindow w(o);
        QSignalSpy failed(w.explorer(), &Explorer::failed);
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() >= 1, 60000);
        QCOMPARE(failed.at(0).at(0).toString(), QStringLiteral("Cannot use this mesh"));
        if (w.lastErrorDialog()) w.lastErrorDialog()->close();
    }

    // Ctrl+F focuses Find op; View lists every dock and Reset layout brings a closed one back; Help's
    // glossary puts the strategy labels in data/tensor/sequence-parallel terms.
    void viewHelpAndFind() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QLineEdit* find = w.findChild<QLineEdit*>(QStringLiteral("findEdit"));
        QVERIFY(find);
        QAction* findAction = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->shortcut() == QKeySequence(QKeySequence::Find)) findAction = a;
        QVERIFY(findAction);
        findAction->trigger();
        QCOMPARE(w.focusWidget(), static_cast<QWidget*>(find));  // the window's focus (active or not)
        QMenu* view = nullptr;
        QMenu* help = nullptr;
        for (QAction* m : w.menuBar()->actions()) {
            if (m->text() == QStringLiteral("&View")) view = m->menu();
            if (m->text() == QStringLiteral("&Help")) help = m->menu();
        }
        QVERIFY(view && help);
        const QList<QDockWidget*> docks = w.findChildren<QDockWidget*>();
        QVERIFY(docks.size() >= 5);
        for (QDockWidget* d : docks) QVERIFY2(view->actions().contains(d->toggleViewAction()), qPrintable(d->objectName()));
        docks.front()->toggleViewAction()->trigger();
        QVERIFY(!docks.front()->isVisible());
        w.resetLayout();
        QVERIFY(docks.front()->isVisible());
        QWidget* glossary = w.showGlossary();
        QVERIFY(glossary && glossary->isVisible());
        if (qEnvironmentVariableIsSet("CFP_SHOT_DIR")) {  // to look at it
            glossary->grab().save(qEnvironmentVariable("CFP_SHOT_DIR") + "/glossary.png");
            w.grab().save(qEnvironmentVariable("CFP_SHOT_DIR") + "/window.png");
        }
        for (const char* term : {"data parallel", "ColwiseParallel", "RowwiseParallel", "ZeRO", "x:contract"})
            QVERIFY2(MainWindow::glossaryText().contains(QLatin1String(term)), term);
        glossary->close();
        // Help > Documentation links every document that exists.
        auto* docs = qobject_cast<QMessageBox*>(w.showDocumentation());
        QVERIFY(docs && docs->isVisible());
        QVERIFY2(docs->text().contains(QStringLiteral("href=\"file://")) && docs->text().contains(QStringLiteral("planning.md</a>")),
                 qPrintable(docs->text()));
        docs->close();
    }

    // File > Compare with a saved plan: the same plan compares equal; after a pin and a re-search
    // the pinned segment, the step time and the pins differ, shown in bold; a file that is not a
    // plan is an error dialog.
    void comparesWithASavedPlan() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        const QString saved = path("compare-saved.json");
        w.explorer()->savePlan(saved);
        QVERIFY(waitIdle(w));
        QVERIFY(QFile::exists(saved));
        const Plan first = w.explorer()->plan()->plan();
        for (const CompareRow& r : comparePlans(first, first, w.explorer()->plan()->model->graph()))
            QVERIFY2(!r.differs, qPrintable(r.what));
        const SegmentPlan& sp = first.segments[1];
        QList<int> combo(sp.combination.begin(), sp.combination.end());
        combo[0] = (combo[0] + 1) % static_cast<int>(w.explorer()->plan()->analysis->report->blocks.blocks[static_cast<size_t>(sp.firstBlock)].strategies.size());
        w.planPanel()->pin(QStringLiteral("1"), combo);
        QVERIFY(searchAndWait(w));
        auto* d = qobject_cast<CompareDialog*>(w.compareWithPlan(saved));
        QVERIFY(d && d->isVisible());
        QStringList differing;
        for (int i = 0; i < d->table()->topLevelItemCount(); ++i)
            if (d->table()->topLevelItem(i)->font(0).bold()) differing << d->table()->topLevelItem(i)->text(0);
        QVERIFY2(differing.contains(QStringLiteral("segment #1")) && differing.contains(QStringLiteral("pins")), qPrintable(differing.join(", ")));
        QVERIFY(!differing.contains(QStringLiteral("model")) && !differing.contains(QStringLiteral("mesh")));
        if (qEnvironmentVariableIsSet("CFP_SHOT_DIR")) d->grab().save(qEnvironmentVariable("CFP_SHOT_DIR") + "/compare.png");  // to look at it
        d->close();
        QVERIFY(spit(path("not-a-plan.json"), "{\"format\": \"something else\"}"));
        QVERIFY(!w.compareWithPlan(path("not-a-plan.json")));
        QVERIFY(w.lastErrorDialog() && w.lastErrorDialog()->windowTitle() == QStringLiteral("Cannot read the plan"));
    }

    // The layout is remembered: a dock hidden in one session stays hidden in the next (settings of
    // this test only; the geometry is Qt's saveGeometry beside it); View > Reset layout shows it.
    void layoutIsRemembered() {
        QSettings().remove(QStringLiteral("window"));
        WindowOptions o = smallModel();
        o.rememberLayout = true;
        {
            MainWindow w(o);
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            auto* profiler = w.findChild<QDockWidget*>(QStringLiteral("profilerDock"));
            QVERIFY(profiler);
            profiler->toggleViewAction()->trigger();
            QVERIFY(!profiler->isVisible());
            QVERIFY(w.close());
            QVERIFY(waitIdle(w));
        }
        MainWindow again(o);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(!again.findChild<QDockWidget*>(QStringLiteral("profilerDock"))->isVisible());
        again.resetLayout();
        QVERIFY(again.findChild<QDockWidget*>(QStringLiteral("profilerDock"))->isVisible() ||
                again.findChild<QDockWidget*>(QStringLiteral("propertiesDock"))->isVisible());  // tabified: one of the two in front
        QSettings().remove(QStringLiteral("window"));
    }

    // Settings edited in the cluster panel and not applied survive opening another model (marked
    // as edits); Apply uses them and clears the mark; a project's settings replace them.
    void openKeepsUnappliedEdits() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        ClusterPanel* panel = w.clusterPanel();
        auto* note = panel->findChild<QLabel*>(QStringLiteral("editedNote"));
        QVERIFY(note && !note->isVisibleTo(panel));
        panel->batchBox()->setValue(16);
        panel->seqBox()->setValue(64);
        QVERIFY(panel->hasUnappliedEdits());
        QVERIFY(note->isVisibleTo(panel));
        w.openPath(QStringLiteral("builtin:gpt2"));
        QTRY_VERIFY_WITH_TIMEOUT(w.explorer()->analysis() && w.explorer()->analysis()->graph().name() == "gpt2", kWaitMs);
        QVERIFY(waitIdle(w));
        QCOMPARE(panel->batchBox()->value(), 16);
        QCOMPARE(panel->seqBox()->value(), 64);
        QVERIFY(panel->hasUnappliedEdits());
        QCOMPARE(w.explorer()->request().model.build.batch, int64_t{8});  // not applied yet
        panel->apply();
        QVERIFY(waitIdle(w));
        QVERIFY(!panel->hasUnappliedEdits());
        QVERIFY(!note->isVisibleTo(panel));
        QCOMPARE(w.explorer()->request().model.build.batch, int64_t{16});
        QCOMPARE(w.explorer()->request().model.build.seq, int64_t{64});
    }

    // A working session's edges: the window on a 1280×800 screen, a built-in model opened with
    // its options, an old error dialog gone when the next job starts, and closing over an unsaved
    // plan asks first (Cancel keeps the window, Discard closes it).
    void builtinDialogErrorsAndClosing() {
        WindowOptions o = smallModel();
        o.confirmClose = true;
        MainWindow w(o);
        w.resize(1280, 800);
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(!w.hasUnsavedWork());
        auto* dialog = w.openBuiltinDialog();
        QVERIFY(dialog);
        auto* preset = dialog->findChild<QComboBox*>(QStringLiteral("presetCombo"));
        QVERIFY(preset && preset->count() >= 5);
        preset->setCurrentIndex(preset->findText(QStringLiteral("llama2-7b")));
        QVERIFY(dialog->findChild<QLabel*>() != nullptr);
        dialog->findChild<QSpinBox*>(QStringLiteral("batchSpin"))->setValue(4);
        dialog->findChild<QSpinBox*>(QStringLiteral("seqSpin"))->setValue(256);
        dialog->findChild<QSpinBox*>(QStringLiteral("nodesSpin"))->setValue(2);
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QElapsedTimer t;
        t.start();
        while (w.explorer()->request().model.source != "builtin:llama2-7b" && !w.lastErrorDialog() && t.elapsed() < kWaitMs) QTest::qWait(5);
        QVERIFY2(!w.lastErrorDialog(), qPrintable(w.lastErrorDialog() ? w.lastErrorDialog()->text() : QString()));
        QVERIFY(waitAnalysis(w));
        QVERIFY(w.explorer()->request().mesh.isAuto());  // the fixed mesh of 8 counted one node
        QCOMPARE(w.explorer()->analysis()->model->loaded->graph.name(), std::string("llama2-7b"));
        QCOMPARE(w.explorer()->request().model.build.batch, int64_t{4});
        QCOMPARE(w.explorer()->request().model.build.seq, int64_t{256});
        QCOMPARE(w.explorer()->request().nodes, int64_t{2});
        QCOMPARE(w.recentFiles().value(0), QStringLiteral("builtin:llama2-7b"));
        // An error dialog closes when the next search starts.
        w.showError(QStringLiteral("Search failed"), QStringLiteral("an earlier failure"));
        QPointer<QMessageBox> old = w.lastErrorDialog();
        QVERIFY(old && old->isVisible());
        w.explorer()->setCluster([&] { ClusterSettings c = w.explorer()->cluster(); c.nodes = 1; c.mesh = cfp::test::meshOf("8"); return c; }());
        w.explorer()->search();
        QTRY_VERIFY(!old || !old->isVisible());
        QVERIFY(waitIdle(w) && w.explorer()->plan());
        // After a search the window still fits the screen, and the plan is unsaved work.
        QVERIFY2(w.minimumSizeHint().width() <= 1280 && w.minimumSizeHint().height() <= 800,
                 qPrintable(QStringLiteral("%1x%2").arg(w.minimumSizeHint().width()).arg(w.minimumSizeHint().height())));
        QVERIFY(w.hasUnsavedWork());
        auto answer = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [button] {
                for (QWidget* top : QApplication::topLevelWidgets())
                    if (auto* box = qobject_cast<QMessageBox*>(top); box && box->objectName() == QLatin1String("unsavedDialog"))
                        box->button(button)->click();
            });
        };
        answer(QMessageBox::Cancel);
        QVERIFY(!w.close());
        QVERIFY(w.isVisible());
        answer(QMessageBox::Discard);
        QVERIFY(w.close());
        // Saving a project clears the mark.
        MainWindow again(smallModel());
        again.show();
        QVERIFY(waitAnalysis(again));
        QVERIFY(searchAndWait(again));
        QVERIFY(again.hasUnsavedWork());
        again.saveProject(path("saved.cfpx.json"));
        QVERIFY(!again.hasUnsavedWork());
    }

    // Every export format: the GUI's file equals the bytes `cfp export` writes from the saved plan.
    void exportsEqualTheCommandLine() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        const QString planFile = path("gui-plan.json");
        w.explorer()->savePlan(planFile);
        QVERIFY(waitIdle(w));
        QVERIFY(QFile::exists(planFile));
        std::vector<std::pair<std::string, QString>> runs;
        for (const std::string& format : exportFormatNames()) runs.push_back({format, QStringLiteral("auto")});
        runs.push_back({"dtensor", QStringLiteral("hf")});  // Hugging Face names (GPT-2's module tree)
        runs.push_back({"trace", QStringLiteral("all")});   // a timeline per device
        for (const auto& [format, names] : runs) {
            const QString f = QString::fromStdString(format);
            const QString gui = path("gui-" + f + "-" + names + ".out"), cli = path("cli-" + f + "-" + names + ".out");
            ExportDialog dialog(w.explorer(), &w);
            dialog.formatBox()->setCurrentText(f);
            const bool everyDevice = names == QLatin1String("all");
            QCOMPARE(dialog.everyDeviceBox()->isEnabled(), format == "trace");
            dialog.everyDeviceBox()->setChecked(everyDevice);
            if (!everyDevice) dialog.namesBox()->setCurrentText(names);
            QCOMPARE(dialog.namesBox()->currentText(), everyDevice ? QStringLiteral("auto") : names);
            if (qEnvironmentVariableIsSet("CFP_SHOT_DIR"))  // to look at the dialog
                dialog.grab().save(qEnvironmentVariable("CFP_SHOT_DIR") + "/export-" + f + "-" + names + ".png");
            dialog.pathEdit()->setText(gui);
            QSignalSpy failed(w.explorer(), &Explorer::failed);
            dialog.start();
            QVERIFY(waitIdle(w));
            QProcess p;
            p.start(QStringLiteral(CFP_CLI_PATH), everyDevice ? QStringList{"export", planFile, "--format", f, "--trace-devices", "all", "-o", cli}
                                                              : QStringList{"export", planFile, "--format", f, "--names", names, "-o", cli});
            QVERIFY(p.waitForFinished(120000));
            if (p.exitCode() != 0) {
                // The command refuses (e.g. megatron on a plan that is not uniform): so must the GUI.
                QVERIFY2(failed.count() == 1, qPrintable(f));
                QVERIFY(!QFile::exists(gui));
                QVERIFY(w.lastErrorDialog());
                w.lastErrorDialog()->close();
                continue;
            }
            QCOMPARE(failed.count(), 0);
            const QByteArray a = slurp(gui), b = slurp(cli);
            QVERIFY2(!a.isEmpty(), qPrintable(f));
            QVERIFY2(a == b, qPrintable(f + ": GUI and CLI exports differ"));
        }
        // The name the dialog proposes follows the format and is absolute, in the last export's folder.
        ExportDialog next(w.explorer(), &w);
        for (const std::string& format : exportFormatNames()) {
            next.formatBox()->setCurrentText(QString::fromStdString(format));
            const QFileInfo proposed(next.pathEdit()->text());
            QVERIFY2(proposed.isAbsolute() && proposed.fileName().startsWith(QStringLiteral("plan_")), qPrintable(proposed.filePath()));
            QCOMPARE(proposed.absolutePath(), QFileInfo(path("x")).absolutePath());
        }
    }

    // A zero-bubble pipeline for torchtitan: the dialog writes the TOML and the schedule CSV it
    // names, the same bytes as `cfp export` of the saved plan.
    void torchtitanScheduleCsvFromTheExportDialog() {
        WindowOptions o = smallModel();
        o.model = CFP_TEST_DATA_DIR "/export/llama_tiny_config.json";
        o.build.batch = 16;
        o.build.seq = 64;
        MainWindow w(o);
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        c->stagesBox()->setValue(2);
        c->meshBox()->setCurrentText(QStringLiteral("auto"));
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("zb-h1")));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->plan().pipeline->schedule, PipeScheduleKind::ZeroBubbleH1);
        const QString planFile = path("zb-plan.json");
        w.explorer()->savePlan(planFile);
        QVERIFY(waitIdle(w));
        ExportDialog dialog(w.explorer(), &w);
        dialog.formatBox()->setCurrentText(QStringLiteral("torchtitan"));
        dialog.pathEdit()->setText(path("gui-zb.toml"));
        QSignalSpy failed(w.explorer(), &Explorer::failed);
        dialog.start();
        QVERIFY(waitIdle(w));
        QCOMPARE(failed.count(), 0);
        QProcess p;
        p.start(QStringLiteral(CFP_CLI_PATH), QStringList{"export", planFile, "--format", "torchtitan", "-o", path("cli-zb.toml")});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QByteArray csv = slurp(path("gui-zb.schedule.csv"));
        QVERIFY2(csv.startsWith("0F0,"), csv.constData());
        QCOMPARE(csv, slurp(path("cli-zb.schedule.csv")));
        QByteArray gui = slurp(path("gui-zb.toml")), cli = slurp(path("cli-zb.toml"));
        QVERIFY2(gui.contains("pipeline_parallel_schedule_csv = \"gui-zb.schedule.csv\""), gui.constData());
        QCOMPARE(gui.replace("gui-zb", "x"), cli.replace("cli-zb", "x"));
    }

    // One request, two front ends, one workflow: `cfp plan` and the explorer's search write the
    // same plan file, byte for byte but for the search's wall time. The explorer reuses its
    // analysis of the fixed mesh; the command analyses afresh.
    void cliAndExplorerWriteTheSamePlan() {
        for (const QStringList& pins : {QStringList{}, QStringList{"T1=x:rows,*,*,*,*,*"}}) {
            WindowOptions o = smallModel();
            MainWindow w(o);
            QVERIFY(waitAnalysis(w));
            std::vector<Pin> typed;
            for (const QString& p : pins) typed.push_back(cfp::test::pinOf(p.toStdString()));
            w.explorer()->setPins(typed);
            QVERIFY(searchAndWait(w));
            const QString gui = path("gui-plan.json"), cli = path("cli-plan.json");
            w.explorer()->savePlan(gui);
            QVERIFY(waitIdle(w));
            QStringList args{"plan", "builtin:gpt3-125m", "--batch", "8", "--seq", "128", "--mesh", "8", "--quiet", "-o", cli};
            for (const QString& p : pins) args << "--pin" << p;
            QProcess p;
            p.start(QStringLiteral(CFP_CLI_PATH), args);
            QVERIFY(p.waitForFinished(120000));
            QCOMPARE(p.exitCode(), 0);
            auto normalised = [](QByteArray text) {
                // The search's own wall time is the one field that may differ.
                const qsizetype at = text.indexOf("\"search\": {");
                const qsizetype s = text.indexOf("\"seconds\": ", at);
                const qsizetype e = text.indexOf(',', s);
                if (at >= 0 && s > at && e > s) text.replace(s, e - s, "\"seconds\": 0");
                return text;
            };
            const QByteArray a = normalised(slurp(gui)), b = normalised(slurp(cli));
            QVERIFY(!a.isEmpty());
            QVERIFY2(a == b, qPrintable(QStringLiteral("pins %1: the explorer's and the CLI's plan files differ").arg(pins.join(' '))));
        }
    }

    // Pricing a configuration the user runs from the search panel: the same step time and memory
    // as `cfp estimate --json` on the same model and cluster; the plan's comparison once there is a
    // plan; a bad configuration is a dialog naming the key, not a crash.
    void estimateFromTheSearchPanel() {
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        SearchPanel* panel = w.searchPanel();
        panel->configEdit()->setText(QStringLiteral("tp=2,dp=4,zero=1,mbs=1,recompute=full"));
        QSignalSpy done(w.explorer(), &Explorer::estimated);
        panel->estimateButton()->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(done.count(), 1);
        const auto run = w.explorer()->lastEstimate();
        QVERIFY(run);
        const QString text = panel->estimateLabel()->text();
        QVERIFY2(text.contains(QStringLiteral("per step")) && text.contains(QStringLiteral("fits")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("8 sequences per step")), qPrintable(text));

        const QJsonObject j = cliEstimate(QStringLiteral("tp=2,dp=4,zero=1,mbs=1,recompute=full"));
        QVERIFY(!j.isEmpty());
        QCOMPARE(j["step_seconds"].toDouble(), run->outcome.plan.stepSeconds());
        QCOMPARE(static_cast<int64_t>(j["memory_per_device_bytes"].toDouble()), run->outcome.plan.memory.total());

        QVERIFY(searchAndWait(w));
        QVERIFY2(panel->estimateLabel()->text().contains(QStringLiteral("the plan:")), qPrintable(panel->estimateLabel()->text()));
        // The memory chart: five kinds stacked for the plan, each feasible baseline and the
        // configuration.
        int feasible = 0;
        for (const Baseline& b : w.explorer()->plan()->plan().baselines) feasible += b.feasible ? 1 : 0;
        QCOMPARE(w.memoryChart()->pointCount(), 5 * (1 + feasible + 1));

        // New cluster settings clear it (it was priced on the old ones).
        w.clusterPanel()->apply();
        QVERIFY(!w.explorer()->lastEstimate());
        QVERIFY(panel->estimateLabel()->text().isEmpty());
        QCOMPARE(w.memoryChart()->pointCount(), 5 * (1 + feasible));

        // No pipeline in that configuration: the pipeline chart says how to get one.
        QCOMPARE(w.pipelineChart()->actionCount(), 0);
        // Pipeline stages: the estimate text states them, the chart draws every action of the
        // replayed schedule (2 ranks × 2 chunks × 4 micro-batches × forward and backward).
        panel->configEdit()->setText(QStringLiteral("tp=2,pp=2,vp=2,mbs=1"));
        panel->estimateButton()->click();
        QVERIFY(waitIdle(w));
        const auto piped = w.explorer()->lastEstimate();
        QVERIFY(piped && piped->outcome.plan.pipeline);
        QVERIFY2(panel->estimateLabel()->text().contains(QStringLiteral("pipeline: 2 stages × 2 chunks per rank")),
                 qPrintable(panel->estimateLabel()->text()));
        QCOMPARE(w.pipelineChart()->actionCount(), 2 * 2 * 4 * 2);
        const QJsonObject pj = cliEstimate(QStringLiteral("tp=2,pp=2,vp=2,mbs=1"));
        QVERIFY(!pj.isEmpty());
        QCOMPARE(pj["step_seconds"].toDouble(), piped->outcome.plan.stepSeconds());
        QCOMPARE(pj["pipeline"].toObject()["bubble_seconds"].toDouble(), piped->outcome.plan.pipeline->bubbleSeconds);
        // Context parallelism: the ring by default (said in the priced configuration), all-gather
        // when asked, each priced as cfp estimate prices it.
        for (const QString& cp : {QStringLiteral("tp=2,cp=2,mbs=1"), QStringLiteral("tp=2,cp=2,cp_comm=all_gather,mbs=1")}) {
            const Plan priced = estimateFromPanel(w, cp);
            const bool ring = !cp.contains(QStringLiteral("all_gather"));
            QCOMPARE(priced.policy.contextRing, ring);
            const QString label = panel->estimateLabel()->text();
            QVERIFY2(label.contains(ring ? QStringLiteral("cp_comm=p2p") : QStringLiteral("cp_comm=all_gather")), qPrintable(label));
            const QJsonObject cj = cliEstimate(cp);
            QVERIFY(!cj.isEmpty());
            QCOMPARE(cj["step_seconds"].toDouble(), priced.stepSeconds());
        }

        QSignalSpy failed(w.explorer(), &Explorer::failed);
        panel->configEdit()->setText(QStringLiteral("tp=3"));
        panel->estimateButton()->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(failed.count(), 1);
        QVERIFY2(failed.at(0).at(1).toString().contains(QStringLiteral("config.devices")), qPrintable(failed.at(0).at(1).toString()));
        QVERIFY(w.lastErrorDialog());
        w.lastErrorDialog()->close();
    }

    // Under mesh auto the meshes where nothing fits are told from a 4-layer copy of the model
    // (PlannerOptions::shorter), and the others searched on it with a layer repeated; the search's
    // tooltip counts both per (ZeRO stage, rounds) search, as the CLI does.
    void meshesRuledOutByTheShorterCopy() {
        WindowOptions o = smallModel();
        o.build.batch = 16;
        o.build.seq = 0;
        o.cluster.mesh = MeshChoice::automatic();
        o.cluster.memoryLimitBytes = int64_t{2} << 30;
        MainWindow w(o);
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        const QString tip = w.searchPanel()->resultLabel()->toolTip();
        QVERIFY2(tip.contains(QStringLiteral("ruled out on memory by a %1-layer copy").arg(kShorterModelLayers)), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("searched on a %1-layer copy with a layer repeated").arg(kShorterModelLayers)), qPrintable(tip));
    }

    // A global batch that does not fit as one round: the cluster panel's accumulation (auto) lets
    // the search run it in more rounds; the plan, its summary and the views show the round's graph;
    // a fixed count is honoured; the usable memory (HBM less the reserve) is the default limit.
    void accumulationFromTheClusterPanel() {
        WindowOptions o = smallModel();
        o.build.batch = 64;
        o.cluster.memoryLimitBytes = int64_t{3} << 28;  // 768 MiB: one round of 64 does not fit
        MainWindow w(o);
        QVERIFY(waitAnalysis(w));
        QCOMPARE(w.clusterPanel()->accumulationBox()->text(), QStringLiteral("auto"));
        QVERIFY(searchAndWait(w));
        const auto plan = w.explorer()->plan();
        QVERIFY2(plan->plan().policy.accumulation > 1, std::to_string(plan->plan().policy.accumulation).c_str());
        QCOMPARE(plan->plan().build->batch * plan->plan().policy.accumulation, int64_t{64});
        QVERIFY(plan->plan().memory.total() <= (int64_t{3} << 28));
        QVERIFY2(w.searchPanel()->resultLabel()->text().contains(QStringLiteral("64 sequences per step")),
                 qPrintable(w.searchPanel()->resultLabel()->text()));
        // The (ZeRO stage, rounds) searches as the CLI lists them: the chosen one in bold, each
        // one's time, skipped meshes and why it has no plan in the tooltip.
        QVERIFY(plan->tried.size() > 1);
        const QString chosen = QStringLiteral("<b>ZeRO-%1 × %2: ").arg(zeroStageOf(plan->plan().policy)).arg(plan->plan().policy.accumulation);
        QVERIFY2(w.searchPanel()->resultLabel()->text().contains(QStringLiteral("ZeRO stage × rounds: ")) &&
                     w.searchPanel()->resultLabel()->text().contains(chosen),
                 qPrintable(w.searchPanel()->resultLabel()->text()));
        QVERIFY2(w.searchPanel()->resultLabel()->toolTip().contains(QStringLiteral("Searches:<br>ZeRO-1 × 1 (searched in ")) &&
                     w.searchPanel()->resultLabel()->toolTip().contains(QStringLiteral("no plan on")),
                 qPrintable(w.searchPanel()->resultLabel()->toolTip()));
        QVERIFY(planMatches(*plan, *w.explorer()->analysis()));
        // A fixed count through the panel, and the usable memory as the limit.
        w.clusterPanel()->accumulationBox()->setValue(8);
        w.clusterPanel()->memoryBox()->setValue(0);
        w.clusterPanel()->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().accumulation, std::optional<int64_t>(8));
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->plan().policy.accumulation, int64_t{8});
        QCOMPARE(w.explorer()->plan()->plan().memoryLimitBytes, int64_t{74} << 30);
        // A count that does not divide the batch is refused with a dialog, the request unchanged.
        w.clusterPanel()->accumulationBox()->setValue(5);
        QTimer::singleShot(0, [] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->accept();
        });
        w.clusterPanel()->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QCOMPARE(w.explorer()->request().accumulation, std::optional<int64_t>(8));
    }

    // The schedule from the cluster panel: the plan's simulated step and its split in the summary;
    // without overlap the step is the evaluator's sum when every weight has its own bucket.
    void scheduleFromTheClusterPanel() {
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        QCOMPARE(w.clusterPanel()->overlapBox()->currentData().toString(), QStringLiteral("on"));
        QCOMPARE(w.clusterPanel()->bucketBox()->value(), 80);
        QVERIFY(searchAndWait(w));
        const Plan overlapped = w.explorer()->plan()->plan();
        QVERIFY(overlapped.simulated.seconds > 0);
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("exposed communication")), qPrintable(summary));
        w.clusterPanel()->overlapBox()->setCurrentIndex(w.clusterPanel()->overlapBox()->findData(QStringLiteral("off")));
        w.clusterPanel()->bucketBox()->setValue(1);
        w.clusterPanel()->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QVERIFY(!w.explorer()->request().policy.overlapGradReduce && !w.explorer()->request().policy.overlapParamGather);
        QCOMPARE(w.explorer()->request().policy.bucketBytes, int64_t{1'000'000});
        QVERIFY(searchAndWait(w));
        const Plan serial = w.explorer()->plan()->plan();
        QVERIFY(!serial.policy.overlapGradReduce);
        QVERIFY(serial.simulated.seconds >= overlapped.simulated.seconds);
        QCOMPARE(serial.simulated.overlappedCommSeconds, 0.0);
        // "all": tensor-parallel communication beside its GEMMs too (--tp-comm-overlap).
        w.clusterPanel()->overlapBox()->setCurrentIndex(w.clusterPanel()->overlapBox()->findData(QStringLiteral("all")));
        w.clusterPanel()->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QVERIFY(w.explorer()->request().policy.overlapTensorParallel);
        QVERIFY(searchAndWait(w));
        QCOMPARE(QString::fromStdString(overlapWord(w.explorer()->plan()->plan().policy)), QStringLiteral("all"));
    }

    // The loss's kernel and the ZeRO stage from the cluster panel: fused and auto by default; eager
    // and a fixed stage reach the request and the plan, and eager the estimate, which keeps the f32 log-probabilities (more activations than the
    // fused loss's logits) and equals `cfp estimate --cross-entropy eager`.
    void crossEntropyAndZeroFromTheClusterPanel() {
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        SearchPanel* panel = w.searchPanel();
        QCOMPARE(c->crossEntropyBox()->currentText(), QStringLiteral("fused"));
        const QString config = QStringLiteral("tp=2,dp=4,zero=1,mbs=1,recompute=none");
        auto estimate = [&] { return estimateFromPanel(w, config); };
        const Plan fused = estimate();
        QCOMPARE(fused.policy.crossEntropy, CrossEntropyKernel::Fused);
        // The ZeRO stage: searched by default, fixed when chosen (the estimate keeps its zero=1).
        QCOMPARE(c->zeroBox()->currentText(), QStringLiteral("ZeRO auto"));
        QVERIFY(w.explorer()->request().searchZero);
        c->zeroBox()->setCurrentText(QStringLiteral("ZeRO 2"));
        c->crossEntropyBox()->setCurrentText(QStringLiteral("eager"));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().policy.crossEntropy, CrossEntropyKernel::Eager);
        QVERIFY(!w.explorer()->request().searchZero);
        QCOMPARE(zeroStageOf(w.explorer()->request().policy), 2);
        const Plan eager = estimate();
        QCOMPARE(eager.policy.crossEntropy, CrossEntropyKernel::Eager);
        QVERIFY(eager.memory.activations > fused.memory.activations);
        QVERIFY2(panel->estimateLabel()->text().contains(QStringLiteral("cross-entropy eager")), qPrintable(panel->estimateLabel()->text()));
        const QJsonObject j = cliEstimate(config, {QStringLiteral("--cross-entropy"), QStringLiteral("eager")});
        QVERIFY(!j.isEmpty());
        QCOMPARE(static_cast<int64_t>(j["memory_per_device_bytes"].toDouble()), eager.memory.total());
        QCOMPARE(j["memory_policy"].toObject()["cross_entropy"].toString(), QStringLiteral("eager"));
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->plan().policy.crossEntropy, CrossEntropyKernel::Eager);
        QCOMPARE(zeroStageOf(w.explorer()->plan()->plan().policy), 2);
        QCOMPARE(c->crossEntropyBox()->currentText(), QStringLiteral("eager"));  // refresh keeps the choices
        QCOMPARE(c->zeroBox()->currentText(), QStringLiteral("ZeRO 2"));
        // Recomputation per layer as frameworks run it: the request's policy, the plan's.
        QCOMPARE(c->recomputeBox()->count(), 5);
        c->recomputeBox()->setCurrentIndex(c->recomputeBox()->findData(QStringLiteral("layers")));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().policy.recompute, RecomputePolicy::Layers);
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->plan().policy.recompute, RecomputePolicy::Layers);
        QCOMPARE(c->recomputeBox()->currentData().toString(), QStringLiteral("layers"));
    }

    // The kernels from the cluster panel: compiled by default; eager reaches the request, the
    // estimate (slower, more activations: autograd keeps what each backward op reads) and its
    // text, and equals `cfp estimate --fusion eager`.
    void kernelFusionFromTheClusterPanel() {
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        SearchPanel* panel = w.searchPanel();
        QCOMPARE(c->fusionBox()->currentText(), QStringLiteral("compiled"));
        const QString config = QStringLiteral("tp=2,dp=4,zero=1,mbs=1,recompute=none");
        auto estimate = [&] { return estimateFromPanel(w, config); };
        const Plan compiled = estimate();
        QCOMPARE(compiled.policy.fusion, KernelFusion::Compiled);
        QVERIFY2(panel->estimateLabel()->text().contains(QStringLiteral("compiled kernels")), qPrintable(panel->estimateLabel()->text()));
        c->fusionBox()->setCurrentText(QStringLiteral("eager"));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().policy.fusion, KernelFusion::Eager);
        const Plan eager = estimate();
        QCOMPARE(eager.policy.fusion, KernelFusion::Eager);
        QVERIFY(eager.memory.activations > compiled.memory.activations);
        QVERIFY(eager.stepSeconds() > compiled.stepSeconds());
        QVERIFY2(panel->estimateLabel()->text().contains(QStringLiteral("eager kernels")), qPrintable(panel->estimateLabel()->text()));
        const QJsonObject j = cliEstimate(config, {QStringLiteral("--fusion"), QStringLiteral("eager")});
        QVERIFY(!j.isEmpty());
        QCOMPARE(static_cast<int64_t>(j["memory_per_device_bytes"].toDouble()), eager.memory.total());
        QCOMPARE(j["memory_policy"].toObject()["fusion"].toString(), QStringLiteral("eager"));
        QVERIFY(searchAndWait(w));
        QCOMPARE(w.explorer()->plan()->plan().policy.fusion, KernelFusion::Eager);
        QCOMPARE(c->fusionBox()->currentText(), QStringLiteral("eager"));  // refresh keeps the choice
    }

    // Sequence parallelism from the cluster panel: searched by default (the plan under a tight
    // limit uses it, the summary and the meshes line say so), off when the box is cleared.
    void sequenceParallelFromTheClusterPanel() {
        WindowOptions o = smallModel();
        o.cluster.memoryLimitBytes = int64_t{600} << 20;
        o.cluster.accumulation = 1;
        o.cluster.searchZero = false;  // ZeRO-1, where sequence parallelism is what fits
        MainWindow w(o);
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        QVERIFY(c->sequenceParallelBox()->isChecked());
        QCOMPARE(c->zeroBox()->currentText(), QStringLiteral("ZeRO 1"));
        QVERIFY(searchAndWait(w));
        const Plan with = w.explorer()->plan()->plan();
        QCOMPARE(QString::fromStdString(with.policy.sequenceParallelAxis), QStringLiteral("x"));
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("sequence parallel (x)")), qPrintable(summary));
        c->sequenceParallelBox()->setChecked(false);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QVERIFY(!w.explorer()->request().searchSequenceParallel);
        QVERIFY(searchAndWait(w));
        const Plan without = w.explorer()->plan()->plan();
        QVERIFY(without.policy.sequenceParallelAxis.empty());
        QVERIFY(without.stepSeconds() > with.stepSeconds());
        // The project keeps it.
        QVERIFY(!cfp::test::must(requestFromJson(requestToJson(w.explorer()->request()), "project"), "project").searchSequenceParallel);
    }

    // The schedule optimiser and a schedule CSV from the cluster panel: mip plans with its actions
    // shown in the Pipeline chart (F, I and W per rank and micro-batch); the same actions written
    // to a CSV and chosen as custom plan to the same step; a broken CSV is refused with a dialog
    // before any search, the request unchanged.
    void pipelineScheduleOptimisedAndFromCsv() {
        if (!pipeMipSolverAvailable()) QSKIP("no CBC in this build");
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        c->stagesBox()->setValue(2);
        c->meshBox()->setCurrentText(QStringLiteral("4"));
        QVERIFY(!c->optimiserSecondsBox()->isEnabled());
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("mip")));
        QVERIFY(c->optimiserSecondsBox()->isEnabled());
        QVERIFY(!c->scheduleCsvEdit()->isEnabled());
        c->optimiserSecondsBox()->setValue(3);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.schedule, PipeScheduleKind::Mip);
        QCOMPARE(w.explorer()->request().pipeline.optimiserSeconds, 3.0);
        QVERIFY(searchAndWait(w));
        const Plan mip = w.explorer()->plan()->plan();
        QVERIFY(mip.pipeline);
        QCOMPARE(mip.pipeline->schedule, PipeScheduleKind::Mip);
        QCOMPARE(w.pipelineChart()->actionCount(), 2 * 3 * mip.pipeline->microBatches);
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("schedule optimiser")), qPrintable(summary));
        // Its actions as a custom schedule.
        QTemporaryDir dir;
        const QString csv = dir.filePath("mip.csv");
        {
            QFile f(csv);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(cfp::test::must(pipelineSchedule(*mip.pipeline), "actions").toCsv()));
        }
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("custom")));
        QVERIFY(c->scheduleCsvEdit()->isEnabled());
        c->scheduleCsvEdit()->setText(csv);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.schedule, PipeScheduleKind::Custom);
        QCOMPARE(w.explorer()->request().pipeline.actions, mip.pipeline->actions);
        QVERIFY(searchAndWait(w));
        const Plan& custom = w.explorer()->plan()->plan();
        QCOMPARE(custom.pipeline->schedule, PipeScheduleKind::Custom);
        QVERIFY(std::abs(custom.stepSeconds() - mip.stepSeconds()) <= 1e-9 * mip.stepSeconds());
        // A broken file: a dialog, nothing applied.
        const QString broken = dir.filePath("broken.csv");
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("0F0,0Q1\n1F0\n");
        }
        c->scheduleCsvEdit()->setText(broken);
        QString said;
        QTimer::singleShot(0, [&said] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                said = box->text();
                box->accept();
            }
        });
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY2(said.contains(QStringLiteral("broken.csv")) && said.contains(QStringLiteral("line 1")), qPrintable(said));
        QCOMPARE(w.explorer()->request().pipeline.actions, mip.pipeline->actions);
        // mip in a V (two chunks per rank): the request's placement; refused with one chunk per rank.
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("mip-v")));
        QVERIFY(c->optimiserSecondsBox()->isEnabled());
        said.clear();
        QTimer::singleShot(0, [&said] {
            if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
                said = box->text();
                box->accept();
            }
        });
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY2(said.contains(QStringLiteral("vp to 2")), qPrintable(said));
        c->chunksBox()->setValue(2);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.schedule, PipeScheduleKind::Mip);
        QCOMPARE(w.explorer()->request().pipeline.placement, PipePlacement::VShape);
        QCOMPARE(c->scheduleBox()->currentData().toString(), QStringLiteral("mip-v"));  // refresh keeps it
    }

    // Pipeline stages from the cluster panel: the mesh choices are one stage's, the search plans it
    // and schedules it; the plan summary, the parallelism line and the Pipeline chart show it.
    void pipelineFromTheClusterPanel() {
        MainWindow w(smallModel());
        QVERIFY(waitAnalysis(w));
        ClusterPanel* c = w.clusterPanel();
        c->stagesBox()->setValue(2);
        QVERIFY(c->meshBox()->findText(QStringLiteral("4")) >= 0);  // one stage of 4 devices
        QVERIFY(c->meshBox()->findText(QStringLiteral("8")) < 0);
        c->meshBox()->setCurrentText(QStringLiteral("auto"));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.stages, 2);
        QVERIFY(searchAndWait(w));
        const Plan& p = w.explorer()->plan()->plan();
        QVERIFY(p.pipeline);
        QCOMPARE(p.mesh.deviceCount(), int64_t{4});
        const QString summary = w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text();
        QVERIFY2(summary.contains(QStringLiteral("pipeline parallel 2")) && summary.contains(QStringLiteral("pipeline: 2 stages")),
                 qPrintable(summary));
        const int forwardAndBackward = 2 * 2 * p.pipeline->microBatches;  // per rank and micro-batch: F and B
        QCOMPARE(w.pipelineChart()->actionCount(), forwardAndBackward);
        QCOMPARE(w.pipelineChart()->transferCount(), 2 * p.pipeline->microBatches);  // activations and gradients across the cut
        QCOMPARE(w.pipelineChart()->memoryRankCount(), 2);
        QCOMPARE(p.pipeline->schedule, PipeScheduleKind::OneFOneB);  // auto: Megatron-LM's 1F1B
        // A zero-bubble schedule from the panel: priced, shown, kept by the request.
        QVERIFY(c->scheduleBox()->isEnabled());
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("zb-h2")));
        QVERIFY(c->scheduleBox()->currentIndex() > 0);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.schedule, PipeScheduleKind::ZeroBubbleH2);
        QVERIFY(searchAndWait(w));
        const Plan& z = w.explorer()->plan()->plan();
        QVERIFY(z.pipeline);
        QCOMPARE(z.pipeline->schedule, PipeScheduleKind::ZeroBubbleH2);
        const int splitBackward = 2 * 3 * z.pipeline->microBatches;  // F, I and W per rank and micro-batch
        QCOMPARE(w.pipelineChart()->actionCount(), splitBackward);
        QCOMPARE(c->scheduleBox()->currentData().toString(), QStringLiteral("zb-h2"));  // refresh keeps the choice
        // A fixed split from the panel: the last stage with one layer; kept by the request and the plan.
        int32_t layers = 0;
        for (const PipelineChunk& ch : z.pipeline->chunks) layers += ch.layers;
        QVERIFY(layers >= 2);
        QVERIFY(c->splitEdit()->isEnabled());
        c->splitEdit()->setText(QStringLiteral("%1,1").arg(layers - 1));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.chunkLayers, (std::vector<int32_t>{layers - 1, 1}));
        QVERIFY(searchAndWait(w));
        const Plan& fixedSplit = w.explorer()->plan()->plan();
        QVERIFY(fixedSplit.pipeline);
        QCOMPARE(fixedSplit.pipeline->chunks.back().layers, 1);
        QVERIFY2(w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text().contains(QStringLiteral("layers per chunk %1, 1").arg(layers - 1)),
                 qPrintable(w.planPanel()->findChild<QLabel*>(QStringLiteral("planSummary"))->text()));
        QCOMPARE(c->splitEdit()->text(), QStringLiteral("%1,1").arg(layers - 1));  // refresh keeps it
        // The folded graph says which rank holds how many of a run's segments (layers).
        bool saysSplit = false;
        const auto analysed = w.explorer()->analysis();
        for (size_t run = 0; analysed && run < analysed->runs.size(); ++run)
            saysSplit |= w.graphView()->nodeText({GraphView::NodeKind::Run, static_cast<int>(run)}).contains(QStringLiteral("pipeline: rank 0 × "));
        QVERIFY(saysSplit);
        c->splitEdit()->clear();
        // zb-v from the picker with two chunks per rank: a V, the first and last chunk on rank 0,
        // which the chart's rank labels count.
        c->chunksBox()->setValue(2);
        c->scheduleBox()->setCurrentIndex(c->scheduleBox()->findData(QStringLiteral("zb-v")));
        QVERIFY(c->scheduleBox()->currentIndex() > 0);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QVERIFY(searchAndWait(w));
        const Plan& v = w.explorer()->plan()->plan();
        QVERIFY(v.pipeline);
        QCOMPARE(v.pipeline->schedule, PipeScheduleKind::ZeroBubbleV);
        QCOMPARE(v.pipeline->chunks.size(), size_t{4});
        const QStringList ranks = w.pipelineChart()->rankLabels();
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks[0], QStringLiteral("rank 0\n%1 layers").arg(v.pipeline->chunks[0].layers + v.pipeline->chunks[3].layers));
        QCOMPARE(ranks[1], QStringLiteral("rank 1\n%1 layers").arg(v.pipeline->chunks[1].layers + v.pipeline->chunks[2].layers));
        // vp auto: the search plans every count of chunks and says which it kept.
        c->chunksBox()->setValue(0);
        QCOMPARE(c->chunksBox()->text(), QStringLiteral("vp auto"));
        c->scheduleBox()->setCurrentIndex(0);
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.chunksPerRank, PipelineSettings::kSearchedChunks);
        QVERIFY(searchAndWait(w));
        QVERIFY(w.explorer()->plan()->outcome->stagesTried.size() >= 2);
        const QString chunksResult = w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult"))->text();
        QVERIFY2(chunksResult.contains(QStringLiteral("chunks per rank: ")) && chunksResult.contains(QStringLiteral("vp 1")), qPrintable(chunksResult));
        c->chunksBox()->setValue(1);
        // pp auto: the mesh is auto only, the search plans every count and the result lists them.
        c->scheduleBox()->setCurrentIndex(0);
        c->meshBox()->setCurrentText(QStringLiteral("4"));  // a stage mesh, which pp auto cannot keep
        c->stagesBox()->setValue(0);
        QCOMPARE(c->stagesBox()->text(), QStringLiteral("pp auto"));
        QCOMPARE(c->meshBox()->count(), 1);
        QCOMPARE(c->meshBox()->currentText(), QStringLiteral("auto"));
        c->findChild<QPushButton*>(QStringLiteral("applyButton"))->click();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->request().pipeline.stages, PipelineSettings::kSearchedStages);
        QVERIFY(searchAndWait(w));
        const PlanOutcome& searched = *w.explorer()->plan()->outcome;
        QVERIFY(searched.stagesTried.size() >= 2);
        const QString result = w.searchPanel()->findChild<QLabel*>(QStringLiteral("searchResult"))->text();
        QVERIFY2(result.contains(QStringLiteral("pipeline stages: ")) && result.contains(QStringLiteral("no stages")), qPrintable(result));
        for (const StagesTry& t : searched.stagesTried)
            if (t.planned) QVERIFY(t.stepSeconds >= searched.plan.stepSeconds());
    }

    void projectSaveAndReload() {
        const QString project = path("project.json");
        Pin pin;
        {
            MainWindow w(smallModel());
            QVERIFY(waitAnalysis(w));
            QVERIFY(searchAndWait(w));
            w.planPanel()->pin(QStringLiteral("T1"), [&] {
                const auto& c = w.explorer()->plan()->plan().segments[1].combination;
                QList<int> l(c.begin(), c.end());
                l[0] = (l[0] + 1) % static_cast<int>(w.explorer()->plan()->analysis->report->blocks.blocks[static_cast<size_t>(w.explorer()->plan()->plan().segments[1].firstBlock)].strategies.size());
                return l;
            }());
            QVERIFY(searchAndWait(w));  // the saved plan answers the project: reopening restores it
            pin = w.explorer()->pins().at(0);
            w.saveProject(project);
        }
        const auto saved = readRequestFile(project.toStdString());
        QVERIFY(saved);
        QVERIFY(saved->pins == std::vector<Pin>{pin});
        QCOMPARE(saved->model.source, std::string("builtin:gpt3-125m"));
        QCOMPARE(saved->model.build.seq, int64_t{128});
        QCOMPARE(saved->mesh.toString(), std::string("x=8"));
        // Reload in a fresh window: the model, settings and pins come back, the saved plan with them.
        WindowOptions o;
        o.discoverDevices = false;
        o.model = project.toStdString();
        MainWindow w(o);
        QElapsedTimer t;
        t.start();
        while (!w.explorer()->plan() && t.elapsed() < kWaitMs) QTest::qWait(10);
        QVERIFY(waitIdle(w));
        QVERIFY(w.explorer()->plan());
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{pin});
        QVERIFY(w.explorer()->plan()->plan().pins == std::vector<Pin>{pin});
        QCOMPARE(w.clusterPanel()->seqBox()->value(), 128);
        QCOMPARE(w.clusterPanel()->meshBox()->currentText(), QStringLiteral("x=8"));
        QVERIFY(w.recentFiles().contains(project));
        // Byte-stable: saving again gives the same file.
        const QString again = path("project2.json");
        w.saveProject(again);
        QCOMPARE(slurp(again), slurp(project));
    }

    void projectFileErrors_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("where");
        const QByteArray good = QByteArray::fromStdString(requestToJson(PlanRequest{}));
        QTest::newRow("not json") << QByteArray("{ \"format\": ") << "request.syntax" << "1:13";  // just past the end
        QTest::newRow("wrong format") << QByteArray(good).replace("cfp-plan-request", "cfp-plan") << "request.format" << "/format";
        QTest::newRow("version") << QByteArray(good).replace("\"version\": 2", "\"version\": 7") << "request.version" << "/version";
        QTest::newRow("bad accumulation") << QByteArray(good).replace("\"accumulation\": \"auto\"", "\"accumulation\": 0") << "request.format"
                                          << "/accumulation";
        QTest::newRow("bad reserve") << QByteArray(good).replace("\"memory_reserve_bytes\": \"hardware\"", "\"memory_reserve_bytes\": \"none\"")
                                     << "request.format" << "/memory_reserve_bytes";
        QTest::newRow("unknown key") << QByteArray(good).replace("\"nodes\"", "\"nodez\"") << "request.format" << "/nodez";
        QTest::newRow("zero nodes") << QByteArray(good).replace("\"nodes\": 1", "\"nodes\": 0") << "request.format" << "/nodes";
        QTest::newRow("bad mesh") << QByteArray(good).replace("\"mesh\": \"auto\"", "\"mesh\": \"3xq\"") << "request.format" << "/mesh";
        QTest::newRow("bad pin") << QByteArray(good).replace("\"pins\": []", "\"pins\": [\"nonsense\"]") << "request.format" << "/pins/0";
        QTest::newRow("bad dtype") << QByteArray(good).replace("\"bf16\"", "\"bf17\"") << "request.format" << "/model/dtype";
        QTest::newRow("duplicate") << QByteArray(good).replace("\"hardware\": \"h100-sxm\"", "\"hardware\": \"h100-sxm\", \"hardware\": \"h200\"")
                                   << "request.format" << "/hardware";
        QTest::newRow("fingerprint without DB") << QByteArray(good).replace("\"profile_fingerprint\": \"\"", "\"profile_fingerprint\": \"k\"")
                                                << "request.format" << "/profile_fingerprint";
        QTest::newRow("bad cross-entropy") << QByteArray(good).replace("\"cross_entropy\": \"fused\"", "\"cross_entropy\": \"chunked\"")
                                           << "request.format" << "/cross_entropy";
        QTest::newRow("bad zero stage") << QByteArray(good).replace("\"zero_stage\": \"auto\"", "\"zero_stage\": \"sometimes\"")
                                        << "request.format" << "/zero_stage";
        QTest::newRow("zero stage 4") << QByteArray(good).replace("\"zero_stage\": \"auto\"", "\"zero_stage\": 4") << "request.format"
                                      << "/zero_stage";
    }

    void projectFileErrors() {
        QFETCH(QByteArray, text);
        QFETCH(QString, code);
        QFETCH(QString, where);
        auto r = requestFromJson(std::string_view(text.constData(), static_cast<size_t>(text.size())), "p.json");
        QVERIFY(!r);
        QCOMPARE(QString::fromStdString(r.error().code), code);
        QCOMPARE(QString::fromStdString(r.error().where), where);
        QVERIFY(r.error().message.find("p.json") != std::string::npos);
        // And the good document reads back to what was written.
        const PlanRequest p = *requestFromJson(requestToJson(PlanRequest{}), "good");
        QCOMPARE(p.model.source, std::string(kDefaultModel));
        QVERIFY(p == PlanRequest{});
    }

    // Malformed files give an error dialog; the window keeps working afterwards.
    void malformedFilesShowErrorsAndTheAppStaysUsable() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        auto before = w.explorer()->analysis();
        // A pin and an undo step on the current model, which a failed open must keep.
        const std::vector<Pin> pins = cfp::test::pinsOf({"b0=0"});
        w.explorer()->setPins(pins);
        const std::string source = w.explorer()->request().model.source;
        const QStringList recentBefore = w.recentFiles();
        const QString bad = path("broken-graph.json");
        QVERIFY(spit(bad, "{\"format\": \"cfp-graph\", \"version\": 1, \"ops\": [ {\"name\": "));
        w.openPath(bad);
        QVERIFY(waitIdle(w));
        QVERIFY(w.lastErrorDialog());
        QVERIFY(w.lastErrorDialog()->isVisible());
        QVERIFY(w.lastErrorDialog()->text().contains(QStringLiteral("broken-graph.json")) ||
                w.lastErrorDialog()->text().contains(QStringLiteral("syntax")));
        QCOMPARE(w.explorer()->analysis(), before);  // the previous model stays on show
        // ... and stays the request's: Apply re-analyses it, a saved project names it, the pins
        // stay, and the broken file does not enter Open recent.
        QCOMPARE(w.explorer()->request().model.source, source);
        QVERIFY(w.explorer()->pins() == pins);
        QCOMPARE(w.recentFiles(), recentBefore);
        w.lastErrorDialog()->close();
        w.explorer()->analyse();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.explorer()->analysis()->model->loaded->spec, source);
        w.explorer()->setPins({});

        const QString badProject = path("broken.cfpx.json");
        QVERIFY(spit(badProject, "{\"format\": \"cfp-explorer-project\", \"version\": 1, \"nodes\": \"two\"}"));
        w.openPath(badProject);
        QVERIFY(w.lastErrorDialog());
        QVERIFY(w.lastErrorDialog()->text().contains(QStringLiteral("request.")));
        w.lastErrorDialog()->close();
        w.openPath(path("does-not-exist.json"));
        QVERIFY(w.lastErrorDialog()->text().contains(QStringLiteral("no such file")));
        w.lastErrorDialog()->close();

        // Still usable: open another model (File > Open built-in model) and search. A built-in
        // enters Open recent once loaded, and undo does not reach back into the previous model.
        w.planPanel()->undoStack()->push(new QUndoCommand(QStringLiteral("a step on the old model")));
        QMenu* builtins = w.findChild<QMenu*>(QStringLiteral("builtinMenu"));
        QVERIFY(builtins);
        QAction* gpt = nullptr;
        for (QAction* a : builtins->actions())
            if (a->text() == QStringLiteral("gpt3-125m")) gpt = a;
        QVERIFY(gpt);
        QCOMPARE(builtins->actions().size(), static_cast<qsizetype>(presetNames().size()));
        gpt->trigger();
        QVERIFY(waitIdle(w));
        QVERIFY(w.explorer()->analysis() != before);
        QCOMPARE(w.recentFiles().value(0), QStringLiteral("builtin:gpt3-125m"));
        QVERIFY(!w.planPanel()->undoStack()->canUndo());
        QVERIFY(searchAndWait(w));
    }

    // Imported models (HLO text, ONNX) open through the same loader: analysed, searchable, and a
    // malformed one is an error dialog with the importer's code.
    void opensImportedModels() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        const QString hlo = QStringLiteral(CFP_TEST_DATA_DIR "/hlo/gpt2_train.hlo");
        w.openPath(hlo);
        QVERIFY(waitIdle(w));
        QCOMPARE(QString::fromStdString(w.explorer()->analysis()->model->loaded->spec), hlo);
        QCOMPARE(w.explorer()->analysis()->model->loaded->kind, ModelSourceKind::HloText);
        QVERIFY(searchAndWait(w));
        const QString bad = path("broken.hlo");
        QVERIFY(spit(bad, "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n}\n"));
        w.openPath(bad);
        QVERIFY(waitIdle(w));
        QVERIFY(w.lastErrorDialog());
        QVERIFY(w.lastErrorDialog()->text().contains(QStringLiteral("hlo.shape_mismatch")));
        w.lastErrorDialog()->close();
    }

    void dragAndDropAndRecentFiles() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        const QString graphFile = path("dropped-graph.json");
        QProcess p;
        p.start(QStringLiteral(CFP_CLI_PATH), {"graph", "builtin:gpt3-125m", "--batch", "2", "--seq", "64", "-o", graphFile});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(graphFile)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &drop);
        QVERIFY(waitIdle(w));
        QCOMPARE(QString::fromStdString(w.explorer()->analysis()->model->loaded->spec), graphFile);
        QCOMPARE(w.recentFiles().value(0), graphFile);
    }

    // The folded graph expands on demand, follows the selection and searches ops.
    void graphViewFoldsExpandsAndFinds() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        GraphView* g = w.graphView();
        auto a = w.explorer()->analysis();
        const int runs = static_cast<int>(a->runs.size());
        QCOMPARE(g->visibleNodeCount(), runs);
        int layer = 0;
        for (int i = 0; i < runs; ++i)
            if (a->runs[static_cast<size_t>(i)].count > a->runs[static_cast<size_t>(layer)].count) layer = i;
        QVERIFY(a->runs[static_cast<size_t>(layer)].count > 1);
        const Segment& rep = a->report->cover.segments[static_cast<size_t>(a->runs[static_cast<size_t>(layer)].firstSegment)];
        g->setExpanded({GraphView::NodeKind::Run, layer}, true);
        QCOMPARE(g->visibleNodeCount(), runs + rep.blockCount);
        const auto& block = a->report->blocks.blocks[static_cast<size_t>(rep.firstBlock)];
        g->setExpanded({GraphView::NodeKind::Block, rep.firstBlock}, true);
        QCOMPARE(g->visibleNodeCount(), runs + rep.blockCount + std::min<int>(static_cast<int>(block.members.size()), 240));
        g->collapseAll();
        QCOMPARE(g->visibleNodeCount(), runs);
        // Find an op by scope in another layer: it is selected in the tree and shown in the
        // graph as itself, in its own repeat of the layer run (tst_graph_view.cpp).
        const int id = w.findNext(QStringLiteral("layers.5.attn"));
        QVERIFY(id >= 0);
        QCOMPARE(w.explorer()->selection().kind, Selection::Kind::Op);
        QVERIFY(QString::fromStdString(a->graph().op(id).scope).contains(QStringLiteral("layers.5.attn")));
        QCOMPARE(w.structureModel()->selectionAt(w.structureView()->currentIndex()), w.explorer()->selection());
        QCOMPARE(g->selectedNode(), (GraphView::NodeKey{GraphView::NodeKind::Op, id}));
        QVERIFY(w.properties()->toPlainText().contains(QString::fromStdString(a->graph().op(id).name)));
        // Enter again moves to the next match.
        const int next = w.findNext(QStringLiteral("layers.5.attn"));
        QVERIFY(next > id);
        // Selecting a segment in the graph selects it in the tree.
        emit g->nodeSelected({Selection::Kind::Segment, 2});
        QCOMPARE(w.structureModel()->selectionAt(w.structureView()->currentIndex()), (Selection{Selection::Kind::Segment, 2}));
        // Heat overlay needs a plan.
        QVERIFY(searchAndWait(w));
        g->setOverlay(GraphView::Overlay::Time);
        QVERIFY(g->overlayLegend().contains(QStringLiteral("time per step")));
        // Charts export as PNG and PDF.
        QVERIFY(w.segmentChart()->saveTo(path("segments.png")));
        QVERIFY(w.segmentChart()->saveTo(path("segments.pdf")));
        QVERIFY(slurp(path("segments.png")).startsWith("\x89PNG"));
        QVERIFY(slurp(path("segments.pdf")).startsWith("%PDF"));
    }

    // Profiling on the dedicated thread with the simulated backend: progress, measurements arriving
    // one by one, its own DB written and kept out of planning; cancel stops a session.
    void profilesOnItsThreadAndTheSearchUsesTheDb() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        ProfilerPanel* panel = w.profilerPanel();
        const QString db = path("profile.db");
        panel->dbEdit()->setText(db);
        panel->simulateBox()->setChecked(true);
        QSignalSpy rows(panel->measurements()->model(), &QAbstractItemModel::rowsInserted);
        QSignalSpy finished(panel, &ProfilerPanel::profilingFinished);
        panel->startButton()->click();
        QVERIFY(panel->isRunning());
        QVERIFY(panel->cancelButton()->isEnabled());
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(finished.at(0).at(0).toBool(), true);
        QVERIFY2(rows.count() >= 2, "measurements arrive one by one");
        QVERIFY(panel->measurements()->topLevelItemCount() >= 2);
        QCOMPARE(panel->progressBar()->value(), 1000);
        QVERIFY2(panel->statusText().contains(QStringLiteral("simulated")), qPrintable(panel->statusText()));
        // Simulated numbers go to their own DB beside the one named, and the search does not plan
        // with them (they are not measurements).
        QVERIFY(QFile::exists(path("profile.simulated.db")));
        QVERIFY(!QFile::exists(db));
        QVERIFY(!w.explorer()->request().profile);
        QVERIFY(searchAndWait(w));
        QVERIFY(!w.explorer()->plan()->profile);
        // Again: every combination is now in the DB (reused); then a fresh DB, cancelled at once.
        panel->dbEdit()->setText(path("profile2.db"));
        finished.clear();
        panel->startButton()->click();
        panel->cancelButton()->click();
        QVERIFY(finished.wait(kWaitMs));
        QVERIFY(!panel->isRunning());
        QVERIFY(panel->startButton()->isEnabled());
    }

    // Only the newest job of a kind delivers; cancel drops a job's result.
    void jobRunnerDropsStaleResults() {
        JobRunner jobs;
        QList<int> delivered;
        std::atomic<bool> release{false};
        jobs.start<int>(JobKind::Detail, "slow", [&](JobContext& ctx) -> Result<int> {
            while (!release.load() && !ctx.cancelled()) QThread::msleep(1);
            return 1;
        }, [&](Result<int> r) { delivered << *r; });
        jobs.start<int>(JobKind::Detail, "fast", [](JobContext&) -> Result<int> { return 2; }, [&](Result<int> r) { delivered << *r; });
        release = true;
        QVERIFY(jobs.waitForIdle(10000));
        QCOMPARE(delivered, QList<int>{2});
        // Cancel: the job sees the flag, its result is dropped, the finished signal says why.
        QSignalSpy finished(&jobs, &JobRunner::jobFinished);
        jobs.start<int>(JobKind::Search, "cancel me", [](JobContext& ctx) -> Result<int> {
            while (!ctx.cancelled()) QThread::msleep(1);
            return makeError("job.cancelled", "cancelled");
        }, [&](Result<int>) { delivered << 3; });
        jobs.cancel(JobKind::Search);
        QVERIFY(jobs.waitForIdle(10000));
        QTest::qWait(20);
        QCOMPARE(delivered, QList<int>{2});
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(3).toString(), QStringLiteral("job.cancelled"));
        // Errors cross as values.
        QString message;
        jobs.start<int>(JobKind::Export, "fails", [](JobContext&) -> Result<int> { return makeError("x.bad", "it broke"); },
                        [&](Result<int> r) { message = QString::fromStdString(r.error().message); });
        QVERIFY(jobs.waitForIdle(10000));
        QCOMPARE(message, QStringLiteral("it broke"));
    }
};

QTEST_MAIN(TestExplorer)
#include "tst_explorer.moc"
