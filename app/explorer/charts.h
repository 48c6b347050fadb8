#pragma once
// Charts (QCustomPlot; only charts.cpp includes it):
//   SegmentCostChart   per segment: stacked compute / collectives / resharding time, and memory
//                      (parameters + state per segment, running total against the device limit)
//   CombinationChart   one segment's every combination: step time against memory, the chosen one
//                      highlighted, Pareto-pruned, pin-excluded and non-fitting ones marked
//   BaselineChart      the plan against the data-parallel and Megatron baselines
//   BestSoFarChart     the search's best step time over wall time
//   MemoryChart        per-device memory of the plan, the baselines and a priced configuration,
//                      stacked by kind, against the usable memory and the GPU's capacity
// Each has axes with units, a legend, tooltips, and PNG/PDF export.

#include <QWidget>

#include <memory>

#include "controller.h"

class QCustomPlot;
class QLabel;
class QMouseEvent;

namespace cfp::explorer {

class ChartPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartPanel(const QString& title, QWidget* parent = nullptr);
    QCustomPlot* plot() const { return m_plot; }
    QWidget* plotWidget() const;  // the plot as a widget (mouse events in tests: QCustomPlot is charts.cpp's only)
    QString title() const { return m_title; }
    // Writes the chart; the format follows the extension (.png or .pdf).
    bool saveTo(const QString& path, int width = 1200, int height = 700);
    // Number of data points (bars or markers) drawn, for tests.
    int pointCount() const;

public slots:
    void exportWithDialog();

protected:
    void setNote(const QString& text);
    void resetPlot();
    // A chart of a plan: cleared; "No plan yet." and false without one, else titled and true.
    bool startPlanChart(const PlanData* plan, const QString& title);
    QCustomPlot* m_plot = nullptr;
    QLabel* m_note = nullptr;
    QString m_title;
};

class SegmentCostChart : public ChartPanel {
    Q_OBJECT
public:
    explicit SegmentCostChart(QWidget* parent = nullptr);
    void setPlan(std::shared_ptr<const PlanData> plan);
signals:
    void segmentClicked(int segment);

private:
    void hover(QMouseEvent* event);
    std::shared_ptr<const PlanData> m_plan;
};

class CombinationChart : public ChartPanel {
    Q_OBJECT
public:
    explicit CombinationChart(QWidget* parent = nullptr);
    void setAlternatives(std::shared_ptr<const PlanData> plan, std::shared_ptr<const AlternativesView> alternatives);
    void clear(const QString& why);
    std::shared_ptr<const AlternativesView> alternatives() const { return m_alt; }
    // The row of alternatives()->rows drawn nearest to `pixel` (plot widget coordinates) within a
    // few pixels, or -1; and where a row is drawn (for clicks and tests).
    int rowAt(const QPointF& pixel) const;
    QPointF pixelOf(int row) const;

signals:
    // A click on a point: pin the segment ("3") to that combination, as the plan table's editor does
    // (PlanPanel::pin). `combination`: the strategy index per block of the segment; a pin fixes
    // strategies only, so the search still chooses recomputation where the policy is auto.
    void pinRequested(const QString& target, const QList<int>& combination);

private:
    void hover(QMouseEvent* event);
    void release(QMouseEvent* event);
    // Pins other than the segment's own that restricted it in the search ("T1", "b17"): a pin of
    // the segment to a combination they exclude leaves the search nothing.
    QStringList otherPinsOn(int32_t segment) const;
    std::shared_ptr<const PlanData> m_plan;
    std::shared_ptr<const AlternativesView> m_alt;
    QPointF m_pressAt;  // where the mouse went down: a release there is a click, elsewhere a drag
};

class BaselineChart : public ChartPanel {
    Q_OBJECT
public:
    explicit BaselineChart(QWidget* parent = nullptr);
    void setPlan(std::shared_ptr<const PlanData> plan);
};

class MemoryChart : public ChartPanel {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);
    // `estimate`: a configuration the user priced (may be null), shown under the plan's rows.
    void setPlan(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanRun> estimate = nullptr, const QString& estimateName = {});
};

// The pipeline of a priced configuration with pp > 1 (Plan::pipeline): its schedule replayed from
// the chunks' times (plan/pipeline.h), one row per rank, forward / backward / weight-gradient
// actions as bars, idle time (the bubble) shaded, the point-to-point transfers on a lane under
// each rank, and below each rank's memory over the step against the limit (plan/pipeline_plan.h).
class PipelineChart : public ChartPanel {
    Q_OBJECT
public:
    explicit PipelineChart(QWidget* parent = nullptr);
    // The plan's pipeline where it has one, else the priced configuration's (either may be null).
    void setPlans(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanRun> estimate, const QString& estimateName = {});
    int actionCount() const { return m_actions; }  // bars drawn, for tests
    int transferCount() const { return m_transfers; }  // point-to-point transfers drawn
    int memoryRankCount() const { return m_memoryRanks; }  // memory lines drawn (one per rank)
    QStringList rankLabels() const { return m_rankLabels; }  // the rank axis's labels

private:
    int m_actions = 0, m_transfers = 0, m_memoryRanks = 0;
    QStringList m_rankLabels;
};

class BestSoFarChart : public ChartPanel {
    Q_OBJECT
public:
    explicit BestSoFarChart(QWidget* parent = nullptr);
    void setPoints(const std::vector<std::pair<double, double>>& points);  // (elapsed s, best s)
};

}  // namespace cfp::explorer
