#include "charts.h"

#include <QFileDialog>
#include <QLabel>
#include <QMenu>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace cfp::explorer {

namespace {

constexpr double kMs = 1e3;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const QColor kCompute(0x4e, 0x79, 0xa7), kCollective(0xf2, 0x8e, 0x2b), kReshard(0xe1, 0x57, 0x59);
const QColor kMemory(0x76, 0xb7, 0xb2), kLimit(0xc0, 0x1f, 0x1f), kChosen(0xff, 0x6a, 0x00), kPareto(0x2f, 0x6f, 0xb0);

QCPBars* bars(QCPAxis* key, QCPAxis* value, const QString& name, const QColor& colour) {
    auto* b = new QCPBars(key, value);
    b->setName(name);
    b->setPen(QPen(colour.darker(130), 0.5));
    b->setBrush(colour);
    b->setWidth(0.8);
    return b;
}

void styleAxes(QCPAxisRect* rect) {
    for (QCPAxis* a : rect->axes()) {
        a->setLabelFont(QFont(a->labelFont().family(), 9));
        a->setTickLabelFont(QFont(a->tickLabelFont().family(), 8));
        a->grid()->setPen(QPen(QColor(0xdd, 0xdd, 0xdd), 0, Qt::DotLine));
    }
}

// Whole numbers only (segment indices).
QSharedPointer<QCPAxisTicker> integerTicker() {
    auto t = QSharedPointer<QCPAxisTickerFixed>::create();
    t->setTickStep(1.0);
    t->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    return t;
}

// The legend in its own row under the title, laid out horizontally, so it never hides data.
void legendBelowTitle(QCustomPlot* plot) {
    plot->legend->setVisible(true);
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->insertRow(1);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(4, 0, 4, 0));
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
}

void addTitle(QCustomPlot* plot, const QString& title) {
    plot->plotLayout()->insertRow(0);
    QFont f = plot->font();
    f.setPointSize(10);
    f.setBold(true);
    auto* element = new QCPTextElement(plot, title, f);
    // A title never sets the chart's width: in a narrow window it is elided at the end (…), whole
    // again when there is room.
    const QFontMetrics metrics(f);
    element->setMinimumSize(80, metrics.height() + 4);
    QObject::connect(plot, &QCustomPlot::beforeReplot, element, [plot, element, title, metrics] {
        const QString fitted = metrics.elidedText(title, Qt::ElideRight, std::max(80, plot->width() - 12));
        if (element->text() != fitted) element->setText(fitted);
    });
    plot->plotLayout()->addElement(0, 0, element);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

ChartPanel::ChartPanel(const QString& title, QWidget* parent) : QWidget(parent), m_title(title) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* bar = new QHBoxLayout;
    m_note = new QLabel(this);
    m_note->setWordWrap(true);
    m_note->setStyleSheet(QStringLiteral("color: #555;"));
    bar->addWidget(m_note, 1);
    auto* save = new QToolButton(this);
    save->setText(tr("Save…"));
    save->setToolTip(tr("Save this chart as PNG or PDF"));
    connect(save, &QToolButton::clicked, this, &ChartPanel::exportWithDialog);
    bar->addWidget(save);
    layout->addLayout(bar);
    resetPlot();
}

void ChartPanel::resetPlot() {
    auto* layout = static_cast<QVBoxLayout*>(this->layout());
    if (m_plot) {
        layout->removeWidget(m_plot);
        m_plot->deleteLater();
    }
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(objectName() + QStringLiteral("Plot"));
    m_plot->setMinimumHeight(160);
    m_plot->setAntialiasedElements(QCP::aeAll);
    m_plot->legend->setFont(QFont(font().family(), 8));
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    styleAxes(m_plot->axisRect());
    layout->insertWidget(0, m_plot, 1);
}

bool ChartPanel::startPlanChart(const PlanData* plan, const QString& title) {
    resetPlot();
    if (!plan) {
        setNote(tr("No plan yet."));
        m_plot->replot();
        return false;
    }
    addTitle(m_plot, title);
    return true;
}

QWidget* ChartPanel::plotWidget() const { return m_plot; }

void ChartPanel::setNote(const QString& text) {
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
}

bool ChartPanel::saveTo(const QString& path, int width, int height) {
    if (path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) return m_plot->savePdf(path, width, height);
    return m_plot->savePng(path, width, height);
}

int ChartPanel::pointCount() const {
    int n = 0;
    for (int i = 0; i < m_plot->plottableCount(); ++i)
        if (auto* p = m_plot->plottable(i)) n += p->interface1D() ? p->interface1D()->dataCount() : 0;
    return n;
}

void ChartPanel::exportWithDialog() {
    QString selected;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save chart"), m_title + QStringLiteral(".png"),
                                                      tr("PNG image (*.png);;PDF document (*.pdf)"), &selected);
    if (path.isEmpty()) return;
    saveTo(path);
}

// ---------------------------------------------------------------------------------------------

SegmentCostChart::SegmentCostChart(QWidget* parent) : ChartPanel(tr("Cost per segment"), parent) {
    setObjectName(QStringLiteral("segmentCostChart"));
    setPlan(nullptr);
}

void SegmentCostChart::setPlan(std::shared_ptr<const PlanData> plan) {
    m_plan = std::move(plan);
    resetPlot();
    QCustomPlot* p = m_plot;
    if (!m_plan) {
        setNote(tr("No plan yet: the charts fill in when the search finishes."));
        p->replot();
        return;
    }
    const Plan& plan_ = m_plan->plan();
    const size_t n = plan_.segments.size();
    QVector<double> keys, compute, collective, reshard, memory, running;
    double total = 0;
    for (size_t i = 0; i < n; ++i) {
        const SegmentPlan& s = plan_.segments[i];
        keys << static_cast<double>(i);
        compute << s.cost.computeSeconds * kMs;
        collective << s.cost.collectiveSeconds * kMs;
        reshard << s.cost.reshardSeconds * kMs;
        memory << static_cast<double>(s.memoryBytes) / kGiB;
        total += static_cast<double>(s.memoryBytes) / kGiB;
        running << total;
    }
    addTitle(p, tr("Per segment: time per step and memory per device — %1 segments on mesh %2")
                    .arg(n)
                    .arg(QString::fromStdString(meshShapeText(plan_.mesh))));
    // Top: stacked time.
    QCPAxisRect* top = p->axisRect();
    auto* c = bars(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft), tr("compute"), kCompute);
    auto* o = bars(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft), tr("own collectives"), kCollective);
    auto* r = bars(top->axis(QCPAxis::atBottom), top->axis(QCPAxis::atLeft), tr("resharding"), kReshard);
    c->setData(keys, compute, true);
    o->setData(keys, collective, true);
    r->setData(keys, reshard, true);
    o->moveAbove(c);
    r->moveAbove(o);
    top->axis(QCPAxis::atLeft)->setLabel(tr("time per step (ms)"));
    top->axis(QCPAxis::atBottom)->setLabel(tr("segment"));
    top->axis(QCPAxis::atBottom)->setRange(-0.7, static_cast<double>(n) - 0.3);
    double maxTime = 0;
    for (size_t i = 0; i < n; ++i) maxTime = std::max(maxTime, compute[static_cast<int>(i)] + collective[static_cast<int>(i)] + reshard[static_cast<int>(i)]);
    top->axis(QCPAxis::atLeft)->setRange(0, std::max(1e-6, maxTime * 1.1));
    top->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    legendBelowTitle(p);

    // Bottom: memory per segment (bars, left) and its running total against the limit (right).
    auto* bottom = new QCPAxisRect(p);
    styleAxes(bottom);
    p->plotLayout()->addElement(3, 0, bottom);
    bottom->axis(QCPAxis::atBottom)->setTicker(integerTicker());
    auto* group = new QCPMarginGroup(p);
    top->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    bottom->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    auto* mem = bars(bottom->axis(QCPAxis::atBottom), bottom->axis(QCPAxis::atLeft), tr("params + state per segment"), kMemory);
    mem->setData(keys, memory, true);
    mem->removeFromLegend();
    bottom->axis(QCPAxis::atLeft)->setLabel(tr("per segment (GiB)"));
    bottom->axis(QCPAxis::atBottom)->setLabel(tr("segment"));
    bottom->axis(QCPAxis::atBottom)->setRange(-0.7, static_cast<double>(n) - 0.3);
    double maxMem = 0;
    for (double m : memory) maxMem = std::max(maxMem, m);
    bottom->axis(QCPAxis::atLeft)->setRange(0, std::max(1e-6, maxMem * 1.15));
    QCPAxis* right = bottom->axis(QCPAxis::atRight);
    right->setVisible(true);
    right->setTickLabels(true);
    right->setLabel(tr("running total, device (GiB)"));
    auto* cumulative = new QCPGraph(bottom->axis(QCPAxis::atBottom), right);
    cumulative->setName(tr("running total"));
    cumulative->setPen(QPen(QColor(0x33, 0x33, 0x33), 1.6));
    cumulative->setData(keys, running, true);
    cumulative->removeFromLegend();
    const double limit = static_cast<double>(plan_.memoryLimitBytes) / kGiB;
    const double device = static_cast<double>(plan_.memory.total()) / kGiB;
    // The limit is drawn when it is on the scale of the plan's own memory; far above it would
    // flatten everything else, so it is then only named.
    const bool limitOnScale = limit <= 3.0 * std::max(device, total);
    right->setRange(0, std::max({limitOnScale ? limit : 0.0, device, total}) * 1.12);
    auto* limitLine = new QCPItemStraightLine(p);
    limitLine->setClipAxisRect(bottom);
    limitLine->point1->setAxisRect(bottom);
    limitLine->point2->setAxisRect(bottom);
    limitLine->point1->setAxes(bottom->axis(QCPAxis::atBottom), right);
    limitLine->point2->setAxes(bottom->axis(QCPAxis::atBottom), right);
    limitLine->point1->setCoords(0, limit);
    limitLine->point2->setCoords(1, limit);
    limitLine->setPen(QPen(kLimit, 1.5, Qt::DashLine));
    auto* deviceLine = new QCPItemStraightLine(p);
    deviceLine->setClipAxisRect(bottom);
    for (auto* pt : {deviceLine->point1, deviceLine->point2}) {
        pt->setAxisRect(bottom);
        pt->setAxes(bottom->axis(QCPAxis::atBottom), right);
    }
    deviceLine->point1->setCoords(0, device);
    deviceLine->point2->setCoords(1, device);
    deviceLine->setPen(QPen(QColor(0x33, 0x33, 0x33), 1.0, Qt::DotLine));
    auto* label = new QCPItemText(p);
    label->setClipAxisRect(bottom);
    label->position->setAxisRect(bottom);
    label->position->setAxes(bottom->axis(QCPAxis::atBottom), right);
    limitLine->setVisible(limitOnScale);
    label->position->setCoords(-0.5, right->range().upper);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setFont(QFont(font().family(), 8));
    label->setColor(kLimit);
    label->setText(tr("device limit %1 GiB (%2) · device total %3 GiB with activations (dotted) · running total of the segments (line)")
                       .arg(limit, 0, 'f', 1)
                       .arg(limitOnScale ? tr("dashed") : tr("far above this scale"))
                       .arg(device, 0, 'f', 1));
    setNote(tr("Click a bar to see that segment's combinations. Time: evaluator, %1.").arg(provenanceText(plan_.step.provenance)));
    connect(p, &QCustomPlot::mouseMove, this, &SegmentCostChart::hover);
    connect(p, &QCustomPlot::mousePress, this, [this, top](QMouseEvent* e) {
        const double x = top->axis(QCPAxis::atBottom)->pixelToCoord(e->position().x());
        const int seg = static_cast<int>(std::lround(x));
        if (m_plan && seg >= 0 && static_cast<size_t>(seg) < m_plan->plan().segments.size()) emit segmentClicked(seg);
    });
    p->replot();
}

void SegmentCostChart::hover(QMouseEvent* e) {
    if (!m_plan) return;
    const double x = m_plot->axisRect()->axis(QCPAxis::atBottom)->pixelToCoord(e->position().x());
    const int seg = static_cast<int>(std::lround(x));
    const auto& segments = m_plan->plan().segments;
    if (seg < 0 || static_cast<size_t>(seg) >= segments.size()) {
        QToolTip::hideText();
        return;
    }
    const SegmentPlan& s = segments[static_cast<size_t>(seg)];
    const auto& names = m_plan->analysis->typeNames;
    QToolTip::showText(e->globalPosition().toPoint(),
                       tr("#%1 %2 (T%3)\ncompute %4\nown collectives %5\nresharding %6\ntotal %7 (%8)\nparams + state %9 per device")
                           .arg(seg)
                           .arg(QString::fromStdString(names[static_cast<size_t>(s.type)]))
                           .arg(s.type)
                           .arg(formatSeconds(s.cost.computeSeconds), formatSeconds(s.cost.collectiveSeconds), formatSeconds(s.cost.reshardSeconds),
                                formatSeconds(s.cost.total()), provenanceText(s.cost.provenance), formatBytes(static_cast<double>(s.memoryBytes))),
                       m_plot);
}

// ---------------------------------------------------------------------------------------------

CombinationChart::CombinationChart(QWidget* parent) : ChartPanel(tr("Combinations of a segment"), parent) {
    setObjectName(QStringLiteral("combinationChart"));
    clear(tr("Select a segment (tree, plan table or the cost chart) to see every combination of its blocks."));
}

void CombinationChart::clear(const QString& why) {
    m_alt.reset();
    resetPlot();
    setNote(why);
    m_plot->replot();
}

void CombinationChart::setAlternatives(std::shared_ptr<const PlanData> plan, std::shared_ptr<const AlternativesView> alt) {
    m_plan = std::move(plan);
    m_alt = std::move(alt);
    resetPlot();
    if (!m_plan || !m_alt) {
        clear(tr("No combinations."));
        return;
    }
    QCustomPlot* p = m_plot;
    const Plan& plan_ = m_plan->plan();
    const Segment& seg = m_plan->analysis->report->cover.segments[static_cast<size_t>(m_alt->segment)];
    addTitle(p, tr("Segment #%1 %2 (T%3): step time per combination, rest of the plan fixed")
                    .arg(m_alt->segment)
                    .arg(QString::fromStdString(m_plan->analysis->typeNames[static_cast<size_t>(seg.type)]))
                    .arg(seg.type));
    struct Series {
        QString name;
        QCPScatterStyle style;
        QVector<double> x, y;
    };
    Series pareto{tr("Pareto-optimal (kept by the DP)"), QCPScatterStyle(QCPScatterStyle::ssDisc, kPareto, kPareto, 6), {}, {}};
    Series dominated{tr("dominated (pruned)"), QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(0x9a, 0x9a, 0x9a), QColor(0xc8, 0xc8, 0xc8), 5), {}, {}};
    Series excluded{tr("excluded by pins"), QCPScatterStyle(QCPScatterStyle::ssSquare, QColor(0x88, 0x88, 0x88), 6), {}, {}};
    Series noFit{tr("does not fit in memory"), QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kLimit, 1.5), QBrush(), 7), {}, {}};
    Series chosen{tr("chosen"), QCPScatterStyle(QCPScatterStyle::ssStar, QPen(kChosen, 2.5), QBrush(kChosen), 16), {}, {}};
    double minX = 1e300, maxX = 0, minY = 1e300, maxY = 0;
    for (const CombinationCost& r : m_alt->rows) {
        const double x = static_cast<double>(r.memoryBytes) / kGiB;
        const double y = r.stepSeconds * kMs;
        Series& s = r.chosen ? chosen : !r.allowed ? excluded : !r.fits ? noFit : r.dominated ? dominated : pareto;
        s.x << x;
        s.y << y;
        minX = std::min(minX, x);
        maxX = std::max(maxX, x);
        minY = std::min(minY, y);
        maxY = std::max(maxY, y);
    }
    const std::pair<Series*, int64_t> counted[] = {{&dominated, m_alt->dominated}, {&excluded, m_alt->excluded}, {&noFit, m_alt->noFit},
                                                    {&pareto, m_alt->pareto - 1}, {&chosen, 1}};
    for (const auto& [s, count] : counted) {
        if (s->x.isEmpty()) continue;
        QCPGraph* g = p->addGraph();
        g->setName(s->name + QStringLiteral(" (%1)").arg(formatCount(count)));
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(s->style);
        g->setData(s->x, s->y);
    }
    const double limit = static_cast<double>(plan_.memoryLimitBytes) / kGiB;
    auto* limitLine = new QCPItemStraightLine(p);
    limitLine->point1->setCoords(limit, 0);
    limitLine->point2->setCoords(limit, 1);
    limitLine->setPen(QPen(kLimit, 1.5, Qt::DashLine));
    auto* label = new QCPItemText(p);
    label->position->setCoords(limit, maxY);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setText(tr("memory limit %1 GiB ").arg(limit, 0, 'f', 1));
    label->setColor(kLimit);
    label->setFont(QFont(font().family(), 8));
    const double spanX = std::max(1e-3, maxX - minX), spanY = std::max(1e-3, maxY - minY);
    p->xAxis->setRange(std::max(0.0, minX - 0.08 * spanX), std::max(maxX, std::min(limit, maxX + spanX)) + 0.08 * spanX);
    p->yAxis->setRange(std::max(0.0, minY - 0.08 * spanY), maxY + 0.12 * spanY);
    p->xAxis->setLabel(tr("memory per device (GiB)"));
    p->yAxis->setLabel(tr("step time (ms)"));
    legendBelowTitle(p);
    p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    const int64_t evaluated = m_alt->pareto + m_alt->dominated + m_alt->excluded + m_alt->noFit;
    QString note = m_alt->sampled ? tr("A sample of %1 of the %2 combinations (strategies and recomputation per block): the chosen one, "
                                       "every change of one of its blocks, and uniformly drawn others. ")
                                        .arg(formatCount(evaluated), formatCount(m_alt->combinations))
                                  : tr("All %1 combinations (strategies and recomputation per block). ").arg(formatCount(m_alt->combinations));
    if (static_cast<int64_t>(m_alt->rows.size()) < evaluated)
        note += tr("Drawn: every Pareto-optimal one and one per grid cell of the others (%1 points). ").arg(formatCount(static_cast<int64_t>(m_alt->rows.size())));
    setNote(note + tr("Hover a point for its strategies, click it to pin segment #%1 to them; drag and wheel to pan and zoom.")
                       .arg(m_alt->segment));
    connect(p, &QCustomPlot::mouseMove, this, &CombinationChart::hover);
    connect(p, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { m_pressAt = e->position(); });
    connect(p, &QCustomPlot::mouseRelease, this, &CombinationChart::release);
    p->replot();
}

QPointF CombinationChart::pixelOf(int row) const {
    if (!m_alt || row < 0 || static_cast<size_t>(row) >= m_alt->rows.size()) return {};
    const CombinationCost& r = m_alt->rows[static_cast<size_t>(row)];
    return {m_plot->xAxis->coordToPixel(static_cast<double>(r.memoryBytes) / kGiB), m_plot->yAxis->coordToPixel(r.stepSeconds * kMs)};
}

int CombinationChart::rowAt(const QPointF& pos) const {
    if (!m_alt || !m_plan) return -1;
    constexpr double kReachPixels = 12;
    double best = kReachPixels;
    int index = -1;
    for (size_t i = 0; i < m_alt->rows.size(); ++i) {
        const QPointF p = pixelOf(static_cast<int>(i));
        // Ties: the chosen point wins (drawn on top), then the first row.
        const double d = std::hypot(p.x() - pos.x(), p.y() - pos.y());
        if (d < best || (d == best && index >= 0 && m_alt->rows[i].chosen)) {
            best = d;
            index = static_cast<int>(i);
        }
    }
    return index;
}

QStringList CombinationChart::otherPinsOn(int32_t segment) const {
    QStringList out;
    if (!m_plan) return out;
    const Segment& seg = m_plan->analysis->report->cover.segments[static_cast<size_t>(segment)];
    for (const Pin& pin : m_plan->request.pins) {
        const bool covers = (pin.scope == Pin::Scope::SegmentType && pin.index == seg.type) ||
                            (pin.scope == Pin::Scope::Block && pin.index >= seg.firstBlock && pin.index < seg.firstBlock + seg.blockCount);
        if (covers) out << QString::fromStdString(pin.target());
    }
    return out;
}

void CombinationChart::hover(QMouseEvent* e) {
    const int index = rowAt(e->position());
    if (index < 0) {
        m_plot->unsetCursor();
        QToolTip::hideText();
        return;
    }
    // A point is a button: it pins the segment to its combination.
    m_plot->setCursor(Qt::PointingHandCursor);
    const CombinationCost* hit = &m_alt->rows[static_cast<size_t>(index)];
    const QString label = QString::fromStdString(m_alt->labels[static_cast<size_t>(index)]);
    const QString status = hit->chosen ? tr("chosen") : !hit->allowed ? tr("excluded by pins") : !hit->fits ? tr("does not fit") : hit->dominated ? tr("dominated") : tr("Pareto-optimal");
    QString click = hit->chosen ? tr("Click to pin segment #%1 to this combination (the search then keeps it).").arg(m_alt->segment)
                                : tr("Click to pin segment #%1 to this combination.").arg(m_alt->segment);
    if (m_plan->plan().policy.recompute == RecomputePolicy::Auto)
        click += tr("\nThe pin fixes the strategies; the search still chooses recomputation.");
    const QStringList others = otherPinsOn(m_alt->segment);
    if (!hit->allowed && !others.isEmpty())
        click += tr("\nPins %1 also restrict this segment: remove them, or the search finds no plan.").arg(others.join(QStringLiteral(", ")));
    QToolTip::showText(e->globalPosition().toPoint(),
                       tr("%1\nstep %2 (%3 vs plan)\nmemory %4 per device\n%5\n\n%6")
                           .arg(label, formatSeconds(hit->stepSeconds), formatDelta(hit->stepSeconds - m_plan->plan().predictedStepSeconds),
                                formatBytes(static_cast<double>(hit->memoryBytes)), status, click),
                       m_plot);
}

void CombinationChart::release(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || (e->position() - m_pressAt).manhattanLength() > 3) return;  // a drag pans
    const int index = rowAt(e->position());
    if (index < 0) return;
    QList<int> combination;
    for (const BlockAssignment& b : m_alt->rows[static_cast<size_t>(index)].combination) combination << b.strategy;
    emit pinRequested(QString::number(m_alt->segment), combination);
}

// ---------------------------------------------------------------------------------------------

BaselineChart::BaselineChart(QWidget* parent) : ChartPanel(tr("Plan vs baselines"), parent) {
    setObjectName(QStringLiteral("baselineChart"));
    setPlan(nullptr);
}

void BaselineChart::setPlan(std::shared_ptr<const PlanData> plan) {
    if (!startPlanChart(plan.get(), tr("Step time: CFP plan against baselines (same cluster, simulated step)"))) return;
    QCustomPlot* p = m_plot;
    const Plan& pl = plan->plan();
    struct Row {
        QString name;
        double ms = 0;
        double gib = 0;
        bool feasible = true, fits = true;
        QString note;
    };
    std::vector<Row> rows;
    rows.push_back({tr("CFP plan (%1)").arg(QString::fromStdString(meshShapeText(pl.mesh))), pl.stepSeconds() * kMs,
                    static_cast<double>(pl.memory.total()) / kGiB, true, true, {}});
    for (const Baseline& b : pl.baselines) {
        rows.push_back({baselineName(b), b.stepSeconds * kMs, static_cast<double>(b.memory.total()) / kGiB, b.feasible, b.fits, QString::fromStdString(b.note)});
    }
    QVector<double> okKeys, okVals, badKeys, badVals, planKeys, planVals;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    double maxMs = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
        const double key = static_cast<double>(rows.size() - 1 - i);  // plan on top
        ticker->addTick(key, rows[i].name);
        if (!rows[i].feasible) continue;
        maxMs = std::max(maxMs, rows[i].ms);
        if (i == 0) {
            planKeys << key;
            planVals << rows[i].ms;
        } else if (rows[i].fits) {
            okKeys << key;
            okVals << rows[i].ms;
        } else {
            badKeys << key;
            badVals << rows[i].ms;
        }
    }
    QCPAxis* key = p->yAxis;
    QCPAxis* value = p->xAxis;
    auto* planBars = bars(key, value, tr("plan"), QColor(0x59, 0xa1, 0x4f));
    planBars->setData(planKeys, planVals, true);
    auto* okBars = bars(key, value, tr("baseline, fits"), kCompute);
    okBars->setData(okKeys, okVals, true);
    auto* badBars = bars(key, value, tr("baseline, does not fit"), kLimit.lighter(140));
    badBars->setBrush(QBrush(kLimit.lighter(140), Qt::BDiagPattern));
    badBars->setData(badKeys, badVals, true);
    for (auto* b : {planBars, okBars, badBars}) b->setWidth(0.6);
    key->setTicker(ticker);
    key->setRange(-0.6, static_cast<double>(rows.size()) - 0.4);
    key->grid()->setVisible(false);
    value->setLabel(tr("step time (ms)"));
    value->setRange(0, std::max(1e-6, maxMs) * 1.75);
    const double planMs = rows[0].ms;
    for (size_t i = 0; i < rows.size(); ++i) {
        auto* t = new QCPItemText(p);
        const double k = static_cast<double>(rows.size() - 1 - i);
        t->position->setCoords(rows[i].feasible ? rows[i].ms : 0, k);
        t->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        t->setPadding(QMargins(6, 0, 0, 0));
        t->setFont(QFont(font().family(), 8));
        QString text;
        if (!rows[i].feasible) text = tr("not possible: %1").arg(rows[i].note);
        else if (i == 0) text = tr("%1 ms · %2 GiB/device").arg(rows[i].ms, 0, 'f', 1).arg(rows[i].gib, 0, 'f', 1);
        else
            text = tr("%1 ms · %2× the plan · %3 GiB%4")
                       .arg(rows[i].ms, 0, 'f', 1)
                       .arg(planMs > 0 ? rows[i].ms / planMs : 0, 0, 'f', 2)
                       .arg(rows[i].gib, 0, 'f', 1)
                       .arg(rows[i].fits ? QString() : tr(" — does not fit"));
        t->setText(text);
        t->setColor(rows[i].fits && rows[i].feasible ? QColor(0x22, 0x22, 0x22) : kLimit);
    }
    // No legend: each bar says what it is; green is the plan, hatched red does not fit.
    setNote(tr("Memory limit %1 per device; hatched: does not fit.").arg(formatBytes(static_cast<double>(pl.memoryLimitBytes))));
    p->replot();
}

// ---------------------------------------------------------------------------------------------

MemoryChart::MemoryChart(QWidget* parent) : ChartPanel(tr("Memory per device"), parent) {
    setObjectName(QStringLiteral("memoryChart"));
    setPlan(nullptr);
}

void MemoryChart::setPlan(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanRun> estimate, const QString& estimateName) {
    if (!startPlanChart(plan.get(), tr("Memory per device: plan, baselines and your configuration (evaluator)"))) return;
    QCustomPlot* p = m_plot;
    const Plan& pl = plan->plan();
    struct Row {
        QString name;
        MemoryBreakdown memory;
        bool fits = true;
    };
    std::vector<Row> rows;
    rows.push_back({tr("CFP plan (%1)").arg(QString::fromStdString(meshShapeText(pl.mesh))), pl.memory, pl.memory.total() <= pl.memoryLimitBytes});
    for (const Baseline& b : pl.baselines) {
        if (!b.feasible) continue;
        rows.push_back({baselineName(b), b.memory, b.fits});
    }
    // A configuration's text is too long for the axis (it would squeeze the bars away): the axis
    // says "your configuration" and the note below names it.
    const bool longName = estimateName.size() > 24;
    if (estimate) {
        const Plan& e = estimate->outcome.plan;
        rows.push_back({estimateName.isEmpty() || longName ? tr("your configuration") : estimateName, e.memory, e.memory.total() <= e.memoryLimitBytes});
    }
    struct Kind {
        QString name;
        QColor colour;
        int64_t MemoryBreakdown::*field;
    };
    const Kind kinds[] = {{tr("weights"), kCompute, &MemoryBreakdown::weights},
                          {tr("gradients"), kPareto.lighter(140), &MemoryBreakdown::gradients},
                          {tr("optimizer state"), kCollective, &MemoryBreakdown::optimizer},
                          {tr("activations"), kMemory, &MemoryBreakdown::activations},
                          {tr("largest op"), QColor(0xb0, 0x7a, 0xa1), &MemoryBreakdown::transient}};
    QCPAxis* key = p->yAxis;
    QCPAxis* value = p->xAxis;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QCPBars* below = nullptr;
    double maxGiB = 0;
    for (const Kind& k : kinds) {
        auto* b = bars(key, value, k.name, k.colour);
        b->setWidth(0.6);
        QVector<double> keys, values;
        for (size_t i = 0; i < rows.size(); ++i) {
            keys << static_cast<double>(rows.size() - 1 - i);  // plan on top
            values << static_cast<double>(rows[i].memory.*k.field) / kGiB;
        }
        b->setData(keys, values, true);
        if (below) b->moveAbove(below);
        below = b;
    }
    for (size_t i = 0; i < rows.size(); ++i) {
        const double k = static_cast<double>(rows.size() - 1 - i);
        ticker->addTick(k, rows[i].name);
        const double total = static_cast<double>(rows[i].memory.total()) / kGiB;
        maxGiB = std::max(maxGiB, total);
        auto* t = new QCPItemText(p);
        t->position->setCoords(total, k);
        t->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        t->setPadding(QMargins(6, 0, 0, 0));
        t->setFont(QFont(font().family(), 8));
        t->setText(tr("%1%2").arg(formatBytes(static_cast<double>(rows[i].memory.total())), rows[i].fits ? QString() : tr(" — does not fit")));
        t->setColor(rows[i].fits ? QColor(0x22, 0x22, 0x22) : kLimit);
    }
    // The usable memory (the limit) and, where the spec loads, the GPU's capacity: the difference
    // is the reserve (CUDA context, NCCL buffers, fragmentation).
    const double usable = static_cast<double>(pl.memoryLimitBytes) / kGiB;
    double capacity = 0;
    if (auto hw = loadHardware(pl.hardware)) capacity = static_cast<double>(hw->memoryBytes) / kGiB;
    auto vline = [&](double x, const QPen& pen) {
        auto* l = new QCPItemStraightLine(p);
        l->point1->setCoords(x, 0);
        l->point2->setCoords(x, 1);
        l->setPen(pen);
    };
    vline(usable, QPen(kLimit, 1.5, Qt::DashLine));
    if (capacity > usable) vline(capacity, QPen(QColor(0x33, 0x33, 0x33), 1.0, Qt::SolidLine));
    key->setTicker(ticker);
    key->setRange(-0.6, static_cast<double>(rows.size()) - 0.4);
    key->grid()->setVisible(false);
    value->setLabel(tr("GiB per device"));
    value->setRange(0, std::max({maxGiB, usable, capacity}) * 1.25);
    legendBelowTitle(p);
    QString note = capacity > usable ? tr("Dashed: usable memory %1; solid: the GPU's %2 (the difference is the reserve for the CUDA context, "
                                          "NCCL buffers and fragmentation).")
                                           .arg(formatBytes(usable * kGiB), formatBytes(capacity * kGiB))
                                     : tr("Dashed: the memory limit %1.").arg(formatBytes(usable * kGiB));
    if (estimate && longName) note += tr(" Your configuration: %1.").arg(estimateName);
    setNote(note);
    p->replot();
}

// ---------------------------------------------------------------------------------------------

PipelineChart::PipelineChart(QWidget* parent) : ChartPanel(tr("Pipeline"), parent) {
    setObjectName(QStringLiteral("pipelineChart"));
    setPlans(nullptr, nullptr);
}

void PipelineChart::setPlans(std::shared_ptr<const PlanData> plan, std::shared_ptr<const PlanRun> estimate, const QString& estimateName) {
    resetPlot();
    m_actions = 0;
    m_transfers = 0;
    m_memoryRanks = 0;
    const Plan* e = estimate ? &estimate->outcome.plan : nullptr;
    QString name = estimateName;
    if (plan && plan->plan().pipeline) {
        e = &plan->plan();
        name = tr("the plan");
    }
    if (!e || !e->pipeline) {
        setNote(tr("No pipeline: set pipeline stages in the cluster panel and search, or price a configuration with pipeline "
                   "stages in the search panel (for example tp=8,pp=4,mbs=1)."));
        m_plot->replot();
        return;
    }
    const PipelinePlan& pl = *e->pipeline;
    auto replay = replayPipeline(pl);
    if (!replay) {
        setNote(QString::fromStdString(replay.error().toString()));
        m_plot->replot();
        return;
    }
    QCustomPlot* p = m_plot;
    p->setMinimumHeight(320);
    addTitle(p, tr("Pipeline: %1, %2 micro-batches on %3 ranks%4")
                    .arg(QString::fromUtf8(pipeScheduleName(pl.schedule).data(), static_cast<qsizetype>(pipeScheduleName(pl.schedule).size())))
                    .arg(pl.microBatches)
                    .arg(pl.stages)
                    .arg(QString::fromStdString(pipelineChunksText(pl))));
    // At most this many bars (a chart of 10^5 items is not readable and slow to draw): the
    // earliest actions, said in the note.
    constexpr size_t kMaxBars = 4000;
    std::vector<PipeEvent> events = replay->events;
    std::sort(events.begin(), events.end(), [](const PipeEvent& a, const PipeEvent& b) { return a.start < b.start; });
    const size_t shown = std::min(events.size(), kMaxBars);
    const bool whole = shown == events.size();
    const double unit = replay->seconds >= 1 ? 1.0 : 1e-3;
    const QColor forward = kCompute, backward = kCollective, weight = QColor(0x59, 0xa1, 0x4f), transfer = QColor(0x8e, 0x5e, 0xa2);
    const QColor idle(0xe1, 0x57, 0x59, 60);
    auto rect = [p](double x0, double x1, double y0, double y1, const QColor& fill, const QPen& pen) {
        auto* r = new QCPItemRect(p);
        r->topLeft->setCoords(x0, y0);
        r->bottomRight->setCoords(x1, y1);
        r->setBrush(QBrush(fill));
        r->setPen(pen);
        return r;
    };
    // The bubble, shaded: each rank's idle time before and between its actions.
    if (whole) {
        std::vector<double> busyUntil(static_cast<size_t>(pl.stages), 0.0);
        for (const PipeEvent& ev : events) {
            double& until = busyUntil[static_cast<size_t>(ev.rank)];
            if (ev.start > until + 1e-12)
                rect(until / unit, ev.start / unit, ev.rank - 0.38, ev.rank + 0.38, idle, Qt::NoPen);
            until = std::max(until, ev.end);
        }
        // After a rank's last action and its tail, until the step ends (the last ranks' wait).
        for (size_t k = 0; k < pl.ranks.size() && k < busyUntil.size(); ++k) {
            const double done = std::max(busyUntil[k], pl.ranks[k].endSeconds + pl.ranks[k].tailSeconds);
            if (pl.seconds > done + 1e-12) rect(done / unit, pl.seconds / unit, k - 0.38, k + 0.38, idle, Qt::NoPen);
        }
    }
    double xEnd = 0;
    for (size_t i = 0; i < shown; ++i) {
        const PipeEvent& ev = events[i];
        const double y = static_cast<double>(ev.rank);
        const QColor c = ev.action.kind == PipeActionKind::Forward ? forward : ev.action.kind == PipeActionKind::WeightGrad ? weight : backward;
        // Later chunks of a rank (interleaved) a shade darker.
        rect(ev.start / unit, ev.end / unit, y - 0.38, y + 0.30, pl.chunksPerRank > 1 ? c.darker(100 + 25 * (ev.action.stage / pl.stages)) : c,
             QPen(Qt::white, 0.5));
        xEnd = std::max(xEnd, ev.end / unit);
        ++m_actions;
    }
    // Communication on its own lane under each rank's actions: the point-to-point sends.
    if (whole)
        for (const PipeTransfer& t : pipelineTransfers(pl, *replay)) {
            rect(t.start / unit, t.end / unit, t.fromRank + 0.32, t.fromRank + 0.42, transfer, Qt::NoPen);
            ++m_transfers;
        }
    // A rank's tail (gradient reduction, optimizer) after its last action.
    for (size_t k = 0; k < pl.ranks.size(); ++k) {
        const PipelineRank& rank = pl.ranks[k];
        if (rank.tailSeconds <= 0 || !whole) continue;
        rect(rank.endSeconds / unit, (rank.endSeconds + rank.tailSeconds) / unit, static_cast<double>(k) - 0.25, static_cast<double>(k) + 0.25,
             QColor(0x99, 0x99, 0x99), Qt::NoPen);
        xEnd = std::max(xEnd, (rank.endSeconds + rank.tailSeconds) / unit);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    // Each rank's layers under its name (the stage split), where the ranks are few enough to read.
    std::vector<int32_t> rankLayers(static_cast<size_t>(pl.stages), 0);
    for (size_t c = 0; c < pl.chunks.size(); ++c)
        rankLayers[static_cast<size_t>(chunkRank(pl, static_cast<int32_t>(c)))] += pl.chunks[c].layers;
    m_rankLabels.clear();
    for (int32_t k = 0; k < pl.stages; ++k) {
        m_rankLabels << (pl.stages <= 16 ? tr("rank %1\n%2 layers").arg(k).arg(rankLayers[static_cast<size_t>(k)]) : tr("rank %1").arg(k));
        ticker->addTick(k, m_rankLabels.back());
    }
    p->yAxis->setTicker(ticker);
    p->yAxis->setRangeReversed(true);
    p->yAxis->setRange(-0.7, static_cast<double>(pl.stages) - 0.3);
    p->yAxis->grid()->setVisible(false);
    p->xAxis->setLabel(unit == 1.0 ? tr("seconds") : tr("milliseconds"));
    p->xAxis->setRange(0, std::max(xEnd, 1e-9) * 1.02);

    // Below: each rank's memory over the step against the limit, on the same time axis.
    auto* bottom = new QCPAxisRect(p);
    styleAxes(bottom);
    const int row = p->plotLayout()->rowCount();
    p->plotLayout()->addElement(row, 0, bottom);
    p->plotLayout()->setRowStretchFactor(row, 0.6);
    auto* group = new QCPMarginGroup(p);
    p->axisRect()->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    bottom->setMarginGroup(QCP::msLeft | QCP::msRight, group);
    QCPAxis* bx = bottom->axis(QCPAxis::atBottom);
    QCPAxis* by = bottom->axis(QCPAxis::atLeft);
    const auto memory = pipelineMemoryOverTime(pl, *replay);
    double top = static_cast<double>(e->memoryLimitBytes) / kGiB;
    double peak = 0;
    for (size_t k = 0; k < memory.size(); ++k) {
        QVector<double> x, y;
        for (const MemoryStep& s : memory[k]) {
            x << s.seconds / unit;
            y << static_cast<double>(s.bytes) / kGiB;
            peak = std::max(peak, y.back());
        }
        auto* g = p->addGraph(bx, by);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(QColor::fromHsv(static_cast<int>(210 + 300 * k / std::max<size_t>(1, memory.size())) % 360, 160, 190), 1.4));
        g->setName(tr("rank %1").arg(k));
        g->setData(x, y, true);
        ++m_memoryRanks;
    }
    // Which line is which rank (up to 8 ranks; more would hide the lines).
    if (memory.size() <= 8) {
        auto* legend = new QCPLegend;
        bottom->insetLayout()->addElement(legend, Qt::AlignRight | Qt::AlignBottom);
        legend->setLayer(QStringLiteral("legend"));
        legend->setFont(QFont(font().family(), 7));
        legend->setBrush(QColor(255, 255, 255, 220));
        legend->setFillOrder(QCPLegend::foColumnsFirst);
        for (int k = 0; k < p->graphCount(); ++k) p->graph(k)->addToLegend(legend);
    }
    // The limit where it is on the scale of the ranks' memory (far above, it is only named).
    const bool limitOnScale = top > 0 && top <= 3.0 * std::max(peak, 1e-9);
    by->setRange(0, std::max(limitOnScale ? top : 0.0, peak) * 1.12);
    by->setLabel(tr("memory (GiB)"));
    bx->setLabel(p->xAxis->label());
    bx->setRange(p->xAxis->range());
    // One time axis: panning or zooming either pane moves both (setRange to the same range emits nothing).
    connect(p->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), bx, qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(bx, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), p->xAxis, qOverload<const QCPRange&>(&QCPAxis::setRange));
    bottom->setRangeDrag(Qt::Horizontal);
    bottom->setRangeZoom(Qt::Horizontal);
    p->xAxis->setLabel(QString());
    if (limitOnScale) {
        auto* limitLine = new QCPItemStraightLine(p);
        limitLine->setClipAxisRect(bottom);
        for (auto* pt : {limitLine->point1, limitLine->point2}) {
            pt->setAxisRect(bottom);
            pt->setAxes(bx, by);
        }
        limitLine->point1->setCoords(0, top);
        limitLine->point2->setCoords(1, top);
        limitLine->setPen(QPen(kLimit, 1.5, Qt::DashLine));
    }
    p->axisRect()->setRangeDrag(Qt::Horizontal);
    p->axisRect()->setRangeZoom(Qt::Horizontal);
    p->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

    QString note = tr("%1. ").arg(name.isEmpty() ? tr("Your configuration") : name) +
                   tr("Blue: forward · orange: backward · green: weight gradient · purple lane: point-to-point transfers · grey: gradient "
                      "reduction and optimizer after the last backward · shaded: idle, the bubble (%1 on rank %2). Below: memory per "
                      "rank over the step (weights, gradients, optimizer state and working set, plus the micro-batches in flight; peak "
                      "%3 on rank %4; the limit, %5, dashed where it is on the scale). Step %6; transfer between stages %7. Drag and wheel to pan and zoom in time.")
                       .arg(formatSeconds(pl.bubbleSeconds))
                       .arg(pl.slowestRank)
                       .arg(formatBytes(static_cast<double>(pl.ranks[static_cast<size_t>(pl.fullestRank)].memory.total())))
                       .arg(pl.fullestRank)
                       .arg(formatBytes(static_cast<double>(e->memoryLimitBytes)))
                       .arg(formatSeconds(pl.seconds), formatSeconds(pl.transferSeconds));
    if (!whole) note += tr(" The first %1 of %2 actions are drawn (no bubble shading, transfers or tails).").arg(shown).arg(events.size());
    setNote(note);
    p->replot();
}

// ---------------------------------------------------------------------------------------------

BestSoFarChart::BestSoFarChart(QWidget* parent) : ChartPanel(tr("Best plan so far"), parent) {
    setObjectName(QStringLiteral("bestSoFarChart"));
    m_plot->setMinimumHeight(120);
    setPoints({});
}

void BestSoFarChart::setPoints(const std::vector<std::pair<double, double>>& points) {
    QCustomPlot* p = m_plot;
    p->clearGraphs();
    QCPGraph* g = p->addGraph();
    g->setName(tr("best step time"));
    g->setLineStyle(QCPGraph::lsStepLeft);
    g->setPen(QPen(kPareto, 1.8));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    QVector<double> x, y;
    for (const auto& [t, s] : points) {
        x << t;
        y << s * kMs;
    }
    g->setData(x, y, true);
    p->xAxis->setLabel(tr("search time (s)"));
    p->yAxis->setLabel(tr("best step (ms)"));
    if (!points.empty()) {
        g->rescaleAxes();
        const QCPRange yr = p->yAxis->range();
        const double pad = std::max(0.05 * yr.size(), 0.02 * std::abs(yr.upper));
        p->yAxis->setRange(std::max(0.0, yr.lower - pad), yr.upper + pad);
        p->xAxis->setRange(0, std::max(0.5, p->xAxis->range().upper * 1.1));
    }
    setNote(points.empty() ? tr("The best step time found appears here as each mesh finishes.") : QString());
    p->replot();
}

}  // namespace cfp::explorer
