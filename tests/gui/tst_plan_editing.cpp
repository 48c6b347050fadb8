// Editing a plan from the explorer's views (issue 24): a click on a point of the combinations
// chart pins the segment to that combination through the plan panel's undoable path; the
// combination editor's strategy boxes carry each strategy's cost (equal to the alternatives of
// plan/alternatives.h), the current and the fastest marked; strategy labels in the plan table and
// the structure tree have a glossary tooltip in the terms people use.
//
// GPT-3 125M at batch 8 × sequence 128 on a fixed mesh of 8 (as tst_explorer's flows), offscreen.
// CFP_KEEP_TEST_FILES=1 keeps images of the chart and of an open strategy box for a look.

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeView>
#include <QUndoStack>
#include <QtTest>

#include "charts.h"
#include "controller.h"
#include "main_window.h"
#include "models.h"
#include "panels.h"
#include "plan_helpers.h"
#include "window_helpers.h"
#include "plan/alternatives.h"
#include "view_format.h"

using namespace cfp;
using namespace cfp::explorer;
using namespace cfp::test::gui;

namespace {

// The row of `alt` that differs from the chosen one only in block k, which takes `strategy` with
// the chosen row's recomputation where that exists (the rule of strategyCosts); null if none.
const CombinationCost* singleChange(const SegmentAlternatives& alt, int k, int32_t strategy) {
    const CombinationCost* chosen = nullptr;
    for (const CombinationCost& r : alt.rows)
        if (r.chosen) chosen = &r;
    if (!chosen) return nullptr;
    const CombinationCost* other = nullptr;
    for (const CombinationCost& r : alt.rows) {
        bool same = true;
        for (size_t j = 0; j < r.combination.size(); ++j)
            if (static_cast<int>(j) != k && r.combination[j] != chosen->combination[j]) same = false;
        if (!same || r.combination[static_cast<size_t>(k)].strategy != strategy) continue;
        if (r.combination[static_cast<size_t>(k)].recompute == chosen->combination[static_cast<size_t>(k)].recompute) return &r;
        other = &r;
    }
    return other;
}

}  // namespace

class TestPlanEditing : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        setUpTestFiles(dir_, "tst_plan_editing");
    }

    // The glossary: each axis assignment in the terms people use; each term once; axis sizes.
    void glossary_data() {
        QTest::addColumn<QString>("label");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("rows") << "x:rows" << QStringList{"x:rows — ", "data parallel", "sequence parallel"};
        QTest::newRow("cols") << "x:cols" << QStringList{"x:cols — ", "tensor parallel", "column-parallel"};
        QTest::newRow("contract") << "x:contract" << QStringList{"x:contract — ", "tensor parallel", "row-parallel", "all-reduced"};
        QTest::newRow("batch0") << "x:batch0" << QStringList{"x:batch0 — ", "batch dimension 0", "data parallel"};
        QTest::newRow("unused") << "y:-" << QStringList{"y:- — ", "replicated"};
        QTest::newRow("two axes") << "dp:rows,tp:cols" << QStringList{"dp:rows — ", "tp:cols — ", "compose"};
        QTest::newRow("recompute") << "x:cols +recompute" << QStringList{"column-parallel", "recomputed in the backward pass"};
        QTest::newRow("combination") << "x:rows | x:cols | x:rows" << QStringList{"x:rows — ", "x:cols — "};
    }
    void glossary() {
        QFETCH(QString, label);
        QFETCH(QStringList, expected);
        const QString text = strategyGlossary(label);
        for (const QString& e : expected) QVERIFY2(text.contains(e), qPrintable(text));
        QCOMPARE(text.count(QStringLiteral("x:rows — ")), label.contains(QStringLiteral("x:rows")) ? 1 : 0);
        QVERIFY(strategyGlossary(QStringLiteral("no strategy here")).isEmpty());
        // The axis's size where a mesh is given.
        const Mesh mesh = cfp::test::meshOf("8").mesh();
        const QString axis = QString::fromStdString(mesh.axes().front().name);
        QVERIFY2(strategyGlossary(axis + QStringLiteral(":rows"), &mesh).contains(QStringLiteral("8 devices")),
                 qPrintable(strategyGlossary(axis + QStringLiteral(":rows"), &mesh)));
        const QString html = strategyGlossaryHtml();
        for (const char* term : {"x:rows", "x:cols", "x:contract", "x:batch0", "+recompute"}) QVERIFY(html.contains(QLatin1String(term)));
    }

    // A click on a point of the combinations chart asks to pin the segment to that point's
    // combination (strategies per block), and through PlanPanel::pin becomes one undoable pin.
    void clickPointPins() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        auto plan = w.explorer()->plan();
        auto alt = w.combinationChart()->alternatives();
        QVERIFY(alt);  // the most repeated segment's combinations were requested with the plan
        QVERIFY(alt->rows.size() > 2);

        // A chart of its own at a known size (the window's may sit in a hidden tab).
        CombinationChart chart;
        chart.resize(900, 620);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setAlternatives(plan, alt);
        QWidget* plot = chart.plotWidget();
        QTRY_VERIFY(plot->width() > 800 && plot->height() > 400);  // laid out (QCustomPlot lays out on resize)
        QTest::qWait(20);
        // The connection MainWindow makes (the same undoable path as the table's editor).
        connect(&chart, &CombinationChart::pinRequested, w.planPanel(), &PlanPanel::pin);
        QSignalSpy spy(&chart, &CombinationChart::pinRequested);

        // A point that is not the chosen one and is the nearest to its own pixel.
        int row = -1;
        for (size_t i = 0; i < alt->rows.size() && row < 0; ++i) {
            const QPointF px = chart.pixelOf(static_cast<int>(i));
            if (!alt->rows[i].chosen && plot->rect().contains(px.toPoint()) && chart.rowAt(QPointF(px.toPoint())) == static_cast<int>(i))
                row = static_cast<int>(i);
        }
        QVERIFY(row >= 0);
        const CombinationCost& r = alt->rows[static_cast<size_t>(row)];
        QList<int> expected;
        for (const BlockAssignment& b : r.combination) expected << b.strategy;

        // Hovering makes the point a button.
        const QPoint at = chart.pixelOf(row).toPoint();
        QVERIFY(plot->hasMouseTracking());
        auto move = [plot](QPoint p) {
            QMouseEvent e(QEvent::MouseMove, QPointF(p), QPointF(plot->mapToGlobal(p)), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
            QApplication::sendEvent(plot, &e);
        };
        move(at);
        QCOMPARE(plot->cursor().shape(), Qt::PointingHandCursor);
        move(QPoint(3, 3));
        QCOMPARE(plot->cursor().shape(), Qt::ArrowCursor);

        // A click off the points does nothing; a drag (press here, release elsewhere) only pans.
        QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(3, 3));
        QCOMPARE(spy.count(), 0);
        QTest::mousePress(plot, Qt::LeftButton, {}, at + QPoint(40, 0));
        QTest::mouseRelease(plot, Qt::LeftButton, {}, at);
        QCOMPARE(spy.count(), 0);
        chart.setAlternatives(plan, alt);  // undo the pan
        plot = chart.plotWidget();
        QTRY_VERIFY(plot->width() > 800 && plot->height() > 400);
        QTest::qWait(20);

        QTest::mouseClick(plot, Qt::LeftButton, {}, chart.pixelOf(row).toPoint());
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy[0][0].toString(), QString::number(alt->segment));
        QCOMPARE(spy[0][1].value<QList<int>>(), expected);

        // The pin: the segment's blocks fixed to those strategies, undoable.
        QCOMPARE(w.explorer()->pins().size(), size_t{1});
        const Pin pin = w.explorer()->pins()[0];
        QCOMPARE(pin.target(), std::to_string(alt->segment));
        const auto& report = *plan->analysis->report;
        const Segment& seg = report.cover.segments[static_cast<size_t>(alt->segment)];
        QCOMPARE(pin.strategies.size(), static_cast<size_t>(seg.blockCount));
        for (int k = 0; k < seg.blockCount; ++k)
            QCOMPARE(*pin.strategies[static_cast<size_t>(k)],
                     report.blocks.blocks[static_cast<size_t>(seg.firstBlock + k)].strategies[static_cast<size_t>(expected[k])].label);
        w.planPanel()->undoStack()->undo();
        QVERIFY(w.explorer()->pins().empty());
        w.planPanel()->undoStack()->redo();
        QVERIFY(w.explorer()->pins() == std::vector<Pin>{pin});

        if (qEnvironmentVariableIsSet("CFP_KEEP_TEST_FILES")) QVERIFY(chart.saveTo(dir_.filePath("combinations.png")));
    }

    // The strategy boxes of the combination editor: each item carries the step time and memory of
    // the plan with that strategy in the block (the alternatives' row that changes only that block),
    // the current one and the fastest marked; the tooltips explain the label.
    void comboBoxCostHints() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        auto plan = w.explorer()->plan();
        PlanModel* model = w.planPanel()->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const int segment = static_cast<int>(plan->plan().segments.size()) / 2;  // a layer
        const SegmentPlan& sp = plan->plan().segments[static_cast<size_t>(segment)];
        const QModelIndex cell = model->segmentIndex(segment, PlanModel::ColCombination);
        QVERIFY(cell.isValid());

        CombinationDelegate delegate;
        QWidget* editor = delegate.createEditor(w.planPanel()->view()->viewport(), QStyleOptionViewItem(), cell);
        QVERIFY(editor);
        delegate.setEditorData(editor, cell);
        const auto boxes = editor->findChildren<QComboBox*>();
        QCOMPARE(boxes.size(), sp.blockCount);

        auto alt = segmentAlternatives(*plan->outcome->problem, plan->assignment(), segment, plan->plan().memoryLimitBytes, plan->pinned());
        QVERIFY(alt);  // all combinations, or (sampled) the chosen one with every change of one block among them
        for (int k = 0; k < sp.blockCount; ++k) {
            QComboBox* box = boxes[k];
            const ParallelBlock& b = plan->analysis->report->blocks.blocks[static_cast<size_t>(sp.firstBlock + k)];
            QCOMPARE(box->count(), static_cast<int>(b.strategies.size()));
            QCOMPARE(box->currentIndex(), sp.combination[static_cast<size_t>(k)]);
            int marked = 0, fastest = 0, fastestIndex = -1;
            double best = 1e300;
            for (int i = 0; i < box->count(); ++i) {
                QCOMPARE(box->itemText(i), QString::fromStdString(b.strategies[static_cast<size_t>(i)].label));
                const CombinationCost* row = singleChange(*alt, k, i);
                QVERIFY(row);
                // Equal to the alternatives: the same terms of the same problem.
                QCOMPARE(box->itemData(i, CombinationDelegate::StepSecondsRole).toDouble(), row->stepSeconds);
                QCOMPARE(box->itemData(i, CombinationDelegate::MemoryBytesRole).toLongLong(), row->memoryBytes);
                const QString hint = box->itemData(i, CombinationDelegate::CostHintRole).toString();
                const QString tip = box->itemData(i, Qt::ToolTipRole).toString();
                QVERIFY2(hint.contains(formatSeconds(row->stepSeconds)), qPrintable(hint));
                QVERIFY2(hint.contains(formatBytes(static_cast<double>(row->memoryBytes))), qPrintable(hint));
                QVERIFY2(tip.contains(hint), qPrintable(tip));
                QVERIFY2(tip.contains(box->itemText(i) + QStringLiteral(" — ")), qPrintable(tip));  // the glossary
                const bool current = i == sp.combination[static_cast<size_t>(k)];
                QCOMPARE(hint.contains(QStringLiteral("current")), current);
                QCOMPARE(box->itemData(i, Qt::FontRole).value<QFont>().bold(), current);
                marked += hint.contains(QStringLiteral("current"));
                if (hint.contains(QStringLiteral("fastest"))) {
                    ++fastest;
                    fastestIndex = i;
                }
                if (row->fits && row->stepSeconds < best) best = row->stepSeconds;
            }
            QCOMPARE(marked, 1);
            QCOMPARE(fastest, 1);
            QCOMPARE(box->itemData(fastestIndex, CombinationDelegate::StepSecondsRole).toDouble(), best);
        }
        // The current choice of every block is the plan itself: the search's objective.
        QCOMPARE(boxes[0]->itemData(boxes[0]->currentIndex(), CombinationDelegate::StepSecondsRole).toDouble(),
                 plan->outcome->problem->objective(plan->assignment()));

        // The popup lists the hints: its items are wider than the labels alone.
        QComboBox* box = boxes[0];
        box->view()->resize(box->view()->minimumWidth(), 200);
        QVERIFY(box->view()->minimumWidth() > box->fontMetrics().horizontalAdvance(box->itemText(0) + QStringLiteral("   —   step")));
        if (qEnvironmentVariableIsSet("CFP_KEEP_TEST_FILES")) {
            editor->resize(editor->sizeHint());
            editor->grab().save(dir_.filePath("editor.png"));
            box->showPopup();
            QTest::qWait(50);
            box->view()->window()->grab().save(dir_.filePath("popup.png"));
            box->hidePopup();
        }
        delete editor;

        // A type row: the hints change the block in every segment of the type.
        const int type = plan->analysis->report->cover.segments[static_cast<size_t>(segment)].type;
        const QModelIndex typeCell = model->typeIndex(type, PlanModel::ColCombination);
        std::vector<int32_t> ofType;
        for (size_t s = 0; s < plan->plan().segments.size(); ++s)
            if (plan->analysis->report->cover.segments[s].type == type) ofType.push_back(static_cast<int32_t>(s));
        QVERIFY(ofType.size() > 1);
        const auto costs = strategyCosts(*plan, ofType);
        editor = delegate.createEditor(w.planPanel()->view()->viewport(), QStyleOptionViewItem(), typeCell);
        QVERIFY(editor);
        const auto typeBoxes = editor->findChildren<QComboBox*>();
        QCOMPARE(static_cast<size_t>(typeBoxes.size()), costs.size());
        for (int i = 0; i < typeBoxes[0]->count(); ++i)
            QCOMPARE(typeBoxes[0]->itemData(i, CombinationDelegate::StepSecondsRole).toDouble(), costs[0][static_cast<size_t>(i)].stepSeconds);
        QVERIFY(typeBoxes[0]->toolTip().contains(QStringLiteral("in all %1 segments").arg(ofType.size())));
        delete editor;
    }

    // The strategy cells of the plan table and the structure tree explain their labels.
    void strategyTooltips() {
        MainWindow w(smallModel());
        w.show();
        QVERIFY(waitAnalysis(w));
        QVERIFY(searchAndWait(w));
        auto plan = w.explorer()->plan();
        const int segment = static_cast<int>(plan->plan().segments.size()) / 2;
        const SegmentPlan& sp = plan->plan().segments[static_cast<size_t>(segment)];

        const QModelIndex cell = w.planPanel()->model()->segmentIndex(segment, PlanModel::ColCombination);
        const QString tip = cell.data(Qt::ToolTipRole).toString();
        QVERIFY(!tip.isEmpty());
        for (int k = 0; k < sp.blockCount; ++k) {
            const BlockChoice& bc = plan->plan().blocks[static_cast<size_t>(sp.firstBlock + k)];
            QVERIFY2(tip.contains(QString::fromStdString(bc.label) + QStringLiteral(" — ")), qPrintable(tip));
        }
        QVERIFY2(tip.contains(QStringLiteral("parallel")), qPrintable(tip));

        StructureModel* tree = w.structureModel();
        const QModelIndex segRow = tree->indexFor({Selection::Kind::Segment, segment});
        QVERIFY(segRow.isValid());
        QCOMPARE(segRow.siblingAtColumn(StructureModel::ColStrategy).data(Qt::ToolTipRole).toString(), tip);
        // The segment's name column keeps its own tooltip.
        QVERIFY(segRow.data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Segment")));
        const QModelIndex blockRow = tree->indexFor({Selection::Kind::Block, sp.firstBlock});
        const QString blockTip = blockRow.siblingAtColumn(StructureModel::ColStrategy).data(Qt::ToolTipRole).toString();
        const BlockChoice& first = plan->plan().blocks[static_cast<size_t>(sp.firstBlock)];
        QVERIFY2(blockTip.startsWith(QString::fromStdString(first.label.substr(0, first.label.find(','))) ), qPrintable(blockTip));
        QVERIFY2(blockTip.contains(QStringLiteral("8 devices")), qPrintable(blockTip));
    }
};

QTEST_MAIN(TestPlanEditing)
#include "tst_plan_editing.moc"
