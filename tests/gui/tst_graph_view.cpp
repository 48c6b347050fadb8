// The graph view's folded runs (issue 24, defect 6) on the offscreen platform: a run says what it
// holds (uniform, or mixed with the range of its segments' costs), Find of an op in a folded run
// shows that op of its own repeat (not the representative's), a run's heat is its per-segment
// average and the legend says so, and a click on a bar of a run's strip shows that repeat.
//
// The mixed plan: GPT-3 125M at batch 8 × sequence 128 on a mesh of 8, searched once, then again
// with one block of three layer segments pinned to another strategy than the search chose.

#include <QLabel>
#include <QtTest>

#include <algorithm>
#include <set>

#include "controller.h"
#include "graph_view.h"
#include "main_window.h"
#include "plan_helpers.h"
#include "window_helpers.h"
#include "view_format.h"

using namespace cfp;
using namespace cfp::explorer;
using namespace cfp::test::gui;

namespace {

// The run with the most segments (the layers).
int layerRun(const AnalysisData& a) {
    int best = 0;
    for (size_t i = 0; i < a.runs.size(); ++i)
        if (a.runs[i].count > a.runs[static_cast<size_t>(best)].count) best = static_cast<int>(i);
    return best;
}

}  // namespace

class TestGraphView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::unique_ptr<MainWindow> w_;
    int run_ = 0;
    std::vector<int32_t> pinnedSegments_;

    // Under CFP_KEEP_TEST_FILES, the graph as it is now, for a look.
    void keep(const QString& name) {
        if (qEnvironmentVariableIsSet("CFP_KEEP_TEST_FILES")) w_->graphView()->grab().save(dir_.filePath(name));
    }

private slots:
    void initTestCase() {
        setUpTestFiles(dir_, "tst_graph_view");
        w_ = std::make_unique<MainWindow>(smallModel());
        w_->show();
        QVERIFY(waitAnalysis(*w_));
        QVERIFY(searchAndWait(*w_));
        auto a = w_->explorer()->analysis();
        run_ = layerRun(*a);
        const RepeatRun& run = a->runs[static_cast<size_t>(run_)];
        QVERIFY2(run.count >= 6, "the layer run has repeats");
        // Pin the first block of three segments of the run to another strategy than chosen.
        const Plan& first = w_->explorer()->plan()->plan();
        std::vector<Pin> pins;
        for (int k : {2, 3, 4}) {
            const int32_t seg = run.firstSegment + k;
            const int32_t block = a->report->cover.segments[static_cast<size_t>(seg)].firstBlock;
            const auto& strategies = a->report->blocks.blocks[static_cast<size_t>(block)].strategies;
            QVERIFY(strategies.size() >= 2);
            const int32_t chosen = first.blocks[static_cast<size_t>(block)].strategy;
            Pin pin;
            pin.scope = Pin::Scope::Block;
            pin.index = block;
            pin.strategies = {std::to_string(chosen == 0 ? 1 : 0)};
            pins.push_back(pin);
            pinnedSegments_.push_back(seg);
        }
        w_->explorer()->setPins(pins);
        QVERIFY(searchAndWait(*w_));
        QCOMPARE(w_->explorer()->plan()->plan().pins.size(), pins.size());
        // CFP_KEEP_TEST_FILES=1 keeps the mixed plan's project for a look (cfp-explorer --screenshot).
        if (qEnvironmentVariableIsSet("CFP_KEEP_TEST_FILES")) {
            dir_.setAutoRemove(false);
            QVERIFY(w_->explorer()->saveProject(dir_.filePath("mixed.json")));
            qInfo("mixed plan's project kept in %s", qPrintable(dir_.filePath("mixed.json")));
        }
    }

    // The folded run's label: mixed, with the range of its segments' own costs and the number of
    // combinations (the old label was the first segment's cost, "each").
    void mixedRunSaysItsRange() {
        GraphView* g = w_->graphView();
        g->collapseAll();
        auto a = w_->explorer()->analysis();
        const Plan& p = w_->explorer()->plan()->plan();
        const RepeatRun& run = a->runs[static_cast<size_t>(run_)];
        double lo = 1e300, hi = 0, total = 0;
        std::set<std::vector<int32_t>> combinations;
        for (int s = run.firstSegment; s < run.firstSegment + run.count; ++s) {
            const SegmentPlan& sp = p.segments[static_cast<size_t>(s)];
            lo = std::min(lo, sp.cost.total());
            hi = std::max(hi, sp.cost.total());
            total += sp.cost.total();
            std::vector<int32_t> c;
            for (int k = 0; k < sp.blockCount; ++k) {
                const BlockChoice& b = p.blocks[static_cast<size_t>(sp.firstBlock + k)];
                c.push_back(b.strategy * 2 + (b.recompute ? 1 : 0));
            }
            combinations.insert(c);
        }
        QVERIFY2(combinations.size() >= 2, "the pins made the run mixed");
        QVERIFY(hi > lo * 1.005);
        const QString text = g->nodeText({GraphView::NodeKind::Run, run_});
        const QString expected = QStringLiteral("× %1 · mixed: %2–%3 each").arg(run.count).arg(formatSeconds(lo), formatSeconds(hi));
        QVERIFY2(text.contains(expected), qPrintable(text + " / expected " + expected));
        QVERIFY2(text.contains(QStringLiteral("%1 combinations").arg(combinations.size())), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("%1 in all").arg(formatSeconds(total))), qPrintable(text));
        const auto sum = g->runSummary(run_);
        QVERIFY(sum && !sum->uniform());
        QCOMPARE(sum->segments, run.count);
        // A run of one segment, or a uniform one, is not called mixed.
        for (int r = 0; r < static_cast<int>(a->runs.size()); ++r) {
            const auto s = g->runSummary(r);
            QVERIFY(s);
            const QString t = g->nodeText({GraphView::NodeKind::Run, r});
            if (a->runs[static_cast<size_t>(r)].count > 1)
                QVERIFY2(t.contains(s->uniform() ? QStringLiteral("· uniform: ") : QStringLiteral("· mixed: ")), qPrintable(t));
            else
                QVERIFY2(!t.contains(QStringLiteral("mixed")) && !t.contains(QStringLiteral("uniform")), qPrintable(t));
        }
    }

    // Find of an op of repeat k (a pinned segment, not the first) highlights that op, in its own
    // segment's blocks; the expanded run names the repeat and states its own cost.
    void findShowsTheActualRepeat() {
        GraphView* g = w_->graphView();
        g->collapseAll();
        auto a = w_->explorer()->analysis();
        const Plan& p = w_->explorer()->plan()->plan();
        const RepeatRun& run = a->runs[static_cast<size_t>(run_)];
        const int32_t seg = pinnedSegments_[1];
        const Segment& segment = a->report->cover.segments[static_cast<size_t>(seg)];
        // An op of the segment's second block, found by its exact name.
        const int32_t block = segment.firstBlock + std::min(1, segment.blockCount - 1);
        const OpId op = a->report->blocks.blocks[static_cast<size_t>(block)].members.front();
        const QString name = QString::fromStdString(a->graph().op(op).name);
        int found = -1;
        for (int i = 0; i < 50 && found != op; ++i) found = w_->findNext(name);
        QCOMPARE(found, op);
        QCOMPARE(w_->explorer()->selection(), (Selection{Selection::Kind::Op, op}));
        QVERIFY(g->hasSelectedNode());
        QCOMPARE(g->selectedNode(), (GraphView::NodeKey{GraphView::NodeKind::Op, op}));
        QCOMPARE(g->shownSegment(run_), seg);
        QVERIFY(g->isExpanded({GraphView::NodeKind::Run, run_}));
        QVERIFY(g->isExpanded({GraphView::NodeKind::Block, block}));
        // The representative's blocks are not on display, segment k's are.
        QVERIFY(g->nodeText({GraphView::NodeKind::Block, run.firstBlock}).isEmpty());
        QVERIFY(!g->nodeText({GraphView::NodeKind::Op, op}).isEmpty());
        const QString header = g->nodeText({GraphView::NodeKind::Run, run_});
        const QString repeat = QStringLiteral("showing segment #%1, repeat %2 of %3: %4")
                                   .arg(seg)
                                   .arg(seg - run.firstSegment + 1)
                                   .arg(run.count)
                                   .arg(formatSeconds(p.segments[static_cast<size_t>(seg)].cost.total()));
        QVERIFY2(header.contains(repeat), qPrintable(header + " / expected " + repeat));
        keep(QStringLiteral("graph-find.png"));
        // The block shows segment k's own strategy (pinned), not the representative's.
        const QString label = QString::fromStdString(p.blocks[static_cast<size_t>(segment.firstBlock)].label);
        QVERIFY(g->nodeText({GraphView::NodeKind::Block, segment.firstBlock}).contains(label));
        // Selecting another segment of the run shows its blocks, keeping the expanded one's place.
        const int32_t other = run.firstSegment + run.count - 1;
        w_->explorer()->select({Selection::Kind::Segment, other});
        QCOMPARE(g->shownSegment(run_), other);
        const Segment& last = a->report->cover.segments[static_cast<size_t>(other)];
        QVERIFY(g->isExpanded({GraphView::NodeKind::Block, last.firstBlock + (block - segment.firstBlock)}));
        QVERIFY(!g->isExpanded({GraphView::NodeKind::Block, block}));
    }

    // A click on a bar of a folded run's strip shows that repeat and selects its segment.
    void stripBarPicksTheRepeat() {
        GraphView* g = w_->graphView();
        g->collapseAll();
        g->resetTransform();
        const QRectF bar = g->stripBarRect(run_, pinnedSegments_[0]);
        QVERIFY(!bar.isEmpty());
        g->centerOn(bar.center());
        QTest::mouseClick(g->viewport(), Qt::LeftButton, {}, g->mapFromScene(bar.center()));
        QCOMPARE(g->shownSegment(run_), pinnedSegments_[0]);
        QCOMPARE(w_->explorer()->selection(), (Selection{Selection::Kind::Segment, pinnedSegments_[0]}));
    }

    // The heat of a folded run is its per-segment average on the segments' scale, and the legend
    // says so (it was the first segment's).
    void runHeatIsThePerSegmentAverage() {
        GraphView* g = w_->graphView();
        g->collapseAll();
        auto a = w_->explorer()->analysis();
        const Plan& p = w_->explorer()->plan()->plan();
        const RepeatRun& run = a->runs[static_cast<size_t>(run_)];
        g->setOverlay(GraphView::Overlay::Time);
        double top = 0, sum = 0;
        for (const SegmentPlan& sp : p.segments) top = std::max(top, sp.cost.total());
        for (int s = run.firstSegment; s < run.firstSegment + run.count; ++s) sum += p.segments[static_cast<size_t>(s)].cost.total();
        const double average = sum / run.count;
        const double firstSeconds = p.segments[static_cast<size_t>(run.firstSegment)].cost.total();
        QVERIFY2(std::abs(average - firstSeconds) > 0.02 * top, "the test tells the average from the first segment");
        QCOMPARE(g->nodeFill({GraphView::NodeKind::Run, run_}), GraphView::heatColor(average / top));
        QVERIFY(g->nodeFill({GraphView::NodeKind::Run, run_}) != GraphView::heatColor(firstSeconds / top));
        QVERIFY2(g->overlayLegend().contains(QStringLiteral("per-segment average over the run")), qPrintable(g->overlayLegend()));
        QVERIFY2(g->overlayLegend().contains(QStringLiteral("segment %1").arg(formatSeconds(top))), qPrintable(g->overlayLegend()));
        // The legend label in the window says it too.
        bool shown = false;
        for (QLabel* l : w_->findChildren<QLabel*>()) shown = shown || l->text() == g->overlayLegend();
        QVERIFY(shown);
        g->fitAll();
        keep(QStringLiteral("graph-heat.png"));
        g->setOverlay(GraphView::Overlay::Blocks);
    }

    void cleanupTestCase() { w_.reset(); }
};

QTEST_MAIN(TestGraphView)
#include "tst_graph_view.moc"
