#include "graph_view.h"

#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSceneHoverEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <set>
#include <unordered_set>

#include "models.h"
#include "segments/fingerprint.h"

#ifdef CFP_HAVE_GRAPHVIZ
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#endif

namespace cfp::explorer {

namespace {

constexpr double kHeader = 36;     // title band of an expanded node
constexpr double kPad = 12;        // inside an expanded node's frame
constexpr double kLeafHeight = 40;  // two lines of node text
constexpr double kStrip = 20;      // a run's per-segment bars, below its text
constexpr double kRunGap = 36;     // between top-level runs
constexpr int kMaxOpsShown = 240;  // ops of one expanded block that are laid out

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Node text in pixels, so that sizes do not depend on the screen's DPI.
QFont titleFont() {
    QFont f;
    f.setPixelSize(13);
    f.setBold(true);
    return f;
}
QFont subtitleFont() {
    QFont f;
    f.setPixelSize(11);
    return f;
}

// ---- Layered layout of one expanded node's children ---------------------------------------

struct LayeredLayout {
    std::vector<QPointF> topLeft;       // per child
    std::vector<QPainterPath> edges;    // per edge, in the same coordinates
    QSizeF size;                        // bounding box of children and edges
    bool graphviz = false;
};

// Longest-path layering in index order (children come in topological order), nodes of one layer
// side by side. Used when Graphviz is missing or fails.
LayeredLayout simpleLayers(const std::vector<QSizeF>& sizes, const std::vector<std::pair<int, int>>& edges) {
    const size_t n = sizes.size();
    std::vector<int> layer(n, 0);
    for (const auto& [a, b] : edges)
        if (a < b) layer[static_cast<size_t>(b)] = std::max(layer[static_cast<size_t>(b)], layer[static_cast<size_t>(a)] + 1);
    const int layers = n ? *std::max_element(layer.begin(), layer.end()) + 1 : 0;
    std::vector<double> rowWidth(static_cast<size_t>(layers), 0), rowHeight(static_cast<size_t>(layers), 0);
    LayeredLayout out;
    out.topLeft.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const auto l = static_cast<size_t>(layer[i]);
        out.topLeft[i].setX(rowWidth[l]);
        rowWidth[l] += sizes[i].width() + 18;
        rowHeight[l] = std::max(rowHeight[l], sizes[i].height());
    }
    double y = 0, width = 0;
    std::vector<double> rowY(static_cast<size_t>(layers));
    for (int l = 0; l < layers; ++l) {
        rowY[static_cast<size_t>(l)] = y;
        y += rowHeight[static_cast<size_t>(l)] + 30;
        width = std::max(width, rowWidth[static_cast<size_t>(l)] - 18);
    }
    for (size_t i = 0; i < n; ++i) {
        const auto l = static_cast<size_t>(layer[i]);
        out.topLeft[i].setY(rowY[l]);
        out.topLeft[i].rx() += (width - (rowWidth[l] - 18)) / 2;  // centre each row
    }
    for (const auto& [a, b] : edges) {
        const QPointF p(out.topLeft[static_cast<size_t>(a)].x() + sizes[static_cast<size_t>(a)].width() / 2,
                        out.topLeft[static_cast<size_t>(a)].y() + sizes[static_cast<size_t>(a)].height());
        const QPointF q(out.topLeft[static_cast<size_t>(b)].x() + sizes[static_cast<size_t>(b)].width() / 2, out.topLeft[static_cast<size_t>(b)].y());
        QPainterPath path(p);
        path.lineTo(q);
        out.edges.push_back(path);
    }
    out.size = QSizeF(std::max(0.0, width), std::max(0.0, y - 30));
    return out;
}

#ifdef CFP_HAVE_GRAPHVIZ
std::mutex& graphvizMutex() {
    static std::mutex m;
    return m;
}

GVC_t* graphvizContext() {
    static GVC_t* gvc = gvContext();
    return gvc;
}

std::optional<LayeredLayout> graphvizLayers(const std::vector<QSizeF>& sizes, const std::vector<std::pair<int, int>>& edges) {
    std::lock_guard lock(graphvizMutex());
    GVC_t* gvc = graphvizContext();
    if (!gvc) return std::nullopt;
    char name[] = "g";
    Agraph_t* g = agopen(name, Agdirected, nullptr);
    if (!g) return std::nullopt;
    auto set = [](void* obj, const char* key, const std::string& value) {
        agsafeset(obj, const_cast<char*>(key), const_cast<char*>(value.c_str()), const_cast<char*>(""));
    };
    set(g, "rankdir", "TB");
    set(g, "nodesep", "0.25");
    set(g, "ranksep", "0.35");
    set(g, "splines", "spline");
    std::vector<Agnode_t*> nodes;
    for (size_t i = 0; i < sizes.size(); ++i) {
        std::string id = "n" + std::to_string(i);
        Agnode_t* n = agnode(g, id.data(), 1);
        set(n, "shape", "box");
        set(n, "fixedsize", "true");
        set(n, "width", std::to_string(sizes[i].width() / 72.0));
        set(n, "height", std::to_string(sizes[i].height() / 72.0));
        set(n, "label", "");
        nodes.push_back(n);
    }
    std::vector<Agedge_t*> gedges;
    for (const auto& [a, b] : edges) gedges.push_back(agedge(g, nodes[static_cast<size_t>(a)], nodes[static_cast<size_t>(b)], nullptr, 1));
    if (gvLayout(gvc, g, "dot") != 0) {
        agclose(g);
        return std::nullopt;
    }
    const boxf bb = GD_bb(g);
    LayeredLayout out;
    out.graphviz = true;
    out.size = QSizeF(bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
    auto map = [&](pointf p) { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); };  // y down
    for (size_t i = 0; i < nodes.size(); ++i) {
        const QPointF c = map(ND_coord(nodes[i]));
        out.topLeft.emplace_back(c.x() - sizes[i].width() / 2, c.y() - sizes[i].height() / 2);
    }
    for (Agedge_t* e : gedges) {
        QPainterPath path;
        const splines* spl = ED_spl(e);
        if (spl && spl->size > 0 && spl->list[0].size >= 4) {
            const bezier& bz = spl->list[0];
            path.moveTo(map(bz.list[0]));
            for (size_t k = 1; k + 2 < static_cast<size_t>(bz.size); k += 3) path.cubicTo(map(bz.list[k]), map(bz.list[k + 1]), map(bz.list[k + 2]));
            if (bz.eflag) path.lineTo(map(bz.ep));
        }
        out.edges.push_back(path);
    }
    gvFreeLayout(gvc, g);
    agclose(g);
    return out;
}
#endif

LayeredLayout layoutLayers(const std::vector<QSizeF>& sizes, const std::vector<std::pair<int, int>>& edges) {
#ifdef CFP_HAVE_GRAPHVIZ
    if (sizes.size() > 1)
        if (auto l = graphvizLayers(sizes, edges)) return *l;
#endif
    return simpleLayers(sizes, edges);
}

}  // namespace

QColor GraphView::heatColor(double t) {
    // Sequential ramp (light yellow → orange → dark red), readable under black text up to ~0.8.
    t = std::clamp(t, 0.0, 1.0);
    static const QColor stops[] = {QColor(0xff, 0xf7, 0xd6), QColor(0xfe, 0xc4, 0x4f), QColor(0xf0, 0x6a, 0x2a), QColor(0xc0, 0x1f, 0x1f)};
    const double x = t * 3;
    const int i = std::min(2, static_cast<int>(x));
    const double f = x - i;
    const QColor& a = stops[i];
    const QColor& b = stops[i + 1];
    return QColor::fromRgbF(a.redF() + (b.redF() - a.redF()) * f, a.greenF() + (b.greenF() - a.greenF()) * f,
                            a.blueF() + (b.blueF() - a.blueF()) * f);
}

// ---- Items -------------------------------------------------------------------------------------

// One bar of a run's strip: one segment.
struct RunStripBar {
    double height = 0;  // 0..1 of the strip
    QColor colour;
    QString tip;
};

class GraphNodeItem : public QGraphicsItem {
public:
    GraphNodeItem(GraphView::NodeKey key, QSizeF size, QString title, QString subtitle, bool container, double header, bool strip)
        : m_key(key), m_size(size), m_title(std::move(title)), m_subtitle(std::move(subtitle)), m_container(container), m_header(header),
          m_hasStrip(strip) {
        setFlag(ItemIsSelectable, false);
        setAcceptHoverEvents(strip);
        setToolTip(baseTip());
    }
    QRectF boundingRect() const override { return QRectF(QPointF(-3, -3), m_size + QSizeF(6, 6)); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override {
        const QRectF r(QPointF(0, 0), m_size);
        const double lod = option->levelOfDetailFromTransform(p->worldTransform());
        QPen pen(m_highlight ? QColor(0xff, 0x6a, 0x00) : QColor(0x55, 0x5b, 0x66), m_highlight ? 3.0 : 1.0);
        pen.setCosmetic(!m_highlight);
        p->setPen(pen);
        if (m_container) {
            p->setBrush(m_fill.lighter(165));
            p->drawRoundedRect(r, 8, 8);
            p->setBrush(m_fill);
            p->setPen(Qt::NoPen);
            QPainterPath band;
            band.addRoundedRect(QRectF(0, 0, m_size.width(), m_header - 6), 8, 8);
            p->drawPath(band);
            p->setPen(pen);
        } else {
            p->setBrush(m_fill);
            p->drawRoundedRect(r, 6, 6);
        }
        paintStrip(p);
        if (lod < 0.35) return;  // text would be unreadable: skip it when far out
        p->setPen(m_fill.lightnessF() < 0.45 ? Qt::white : QColor(0x1d, 0x1f, 0x23));
        const QFont tf = titleFont(), sf = subtitleFont();
        p->setFont(tf);
        const QRectF titleRect(8, 3, m_size.width() - 16, 18);
        p->drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter, QFontMetricsF(tf).elidedText(m_title, Qt::ElideMiddle, titleRect.width()));
        p->setFont(sf);
        const QRectF subRect(8, 20, m_size.width() - 16, 15);
        p->drawText(subRect, Qt::AlignLeft | Qt::AlignVCenter, QFontMetricsF(sf).elidedText(m_subtitle, Qt::ElideRight, subRect.width()));
    }
    void setFill(const QColor& c) {
        m_fill = c;
        update();
    }
    // The bars, one per segment of the run, and the one marked (the segment shown or selected).
    void setStrip(std::vector<RunStripBar> bars, int marked) {
        m_bars = std::move(bars);
        m_marked = marked;
        update();
    }
    // Bar `i` in item coordinates (empty when there is none).
    QRectF barRect(int i) const {
        if (i < 0 || static_cast<size_t>(i) >= m_bars.size()) return {};
        const QRectF s = stripRect();
        const double w = s.width() / static_cast<double>(m_bars.size());
        return QRectF(s.left() + i * w, s.top(), w, s.height());
    }
    // The bar under `pos` (item coordinates), or -1.
    int barAt(QPointF pos) const {
        const QRectF s = stripRect();
        if (m_bars.empty() || !s.contains(pos)) return -1;
        return std::clamp(static_cast<int>((pos.x() - s.left()) / s.width() * static_cast<double>(m_bars.size())), 0,
                          static_cast<int>(m_bars.size()) - 1);
    }
    void setHighlight(bool on) {
        m_highlight = on;
        // A highlighted leaf comes to the front; an expanded node must stay behind its children.
        if (!m_container) setZValue(on ? zValue() + 1000 : std::fmod(zValue(), 1000.0));
        update();
    }
    const GraphView::NodeKey& key() const { return m_key; }
    bool isContainer() const { return m_container; }
    QString text() const { return m_title + QLatin1Char('\n') + m_subtitle; }
    QColor fill() const { return m_fill; }

protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent* event) override {
        const int bar = barAt(event->pos());
        setToolTip(bar >= 0 ? m_bars[static_cast<size_t>(bar)].tip : baseTip());
    }

private:
    QString baseTip() const {
        return m_title + (m_subtitle.isEmpty() ? QString() : QStringLiteral("\n") + m_subtitle) +
               (m_hasStrip ? QStringLiteral("\nBars: each segment's own cost (hover for it, click to show its blocks)") : QString());
    }
    QRectF stripRect() const { return QRectF(8, 37, m_size.width() - 16, kStrip - 5); }
    void paintStrip(QPainter* p) const {
        if (m_bars.empty()) return;
        const QRectF s = stripRect();
        p->save();
        p->setPen(Qt::NoPen);
        p->setBrush(QColor(255, 255, 255, 200));
        p->drawRect(s);
        const double w = s.width() / static_cast<double>(m_bars.size());
        const double gap = w >= 4 ? 1 : 0;
        QPen edge;
        edge.setCosmetic(true);
        for (size_t i = 0; i < m_bars.size(); ++i) {
            const double h = std::max(2.0, std::clamp(m_bars[i].height, 0.0, 1.0) * s.height());
            // An edge when there is room, so that bars of a heat colour stand out from the node's.
            edge.setColor(m_bars[i].colour.darker(160));
            if (w >= 4) p->setPen(edge);
            p->setBrush(m_bars[i].colour);
            p->drawRect(QRectF(s.left() + static_cast<double>(i) * w, s.bottom() - h, std::max(w - gap, 0.8), h));
        }
        if (m_marked >= 0 && static_cast<size_t>(m_marked) < m_bars.size()) {
            QPen mark(QColor(0xff, 0x6a, 0x00), 2.0);
            mark.setCosmetic(true);
            p->setPen(mark);
            p->setBrush(Qt::NoBrush);
            p->drawRect(QRectF(s.left() + m_marked * w - 1, s.top() - 1, std::max(w - gap, 0.8) + 2, s.height() + 2));
        }
        p->restore();
    }

    GraphView::NodeKey m_key;
    QSizeF m_size;
    QString m_title, m_subtitle;
    bool m_container = false;
    double m_header = kHeader;
    bool m_hasStrip = false;
    bool m_highlight = false;
    QColor m_fill = QColor(0xdd, 0xe3, 0xea);
    std::vector<RunStripBar> m_bars;
    int m_marked = -1;
};

// ---- Layout tree -------------------------------------------------------------------------------

struct GraphView::Node {
    NodeKey key;
    QString title, subtitle;
    QSizeF size;
    bool expanded = false;
    bool strip = false;       // a run of several segments under a plan: its bars
    double header = kHeader;  // title band (with the strip) of an expanded node
    std::vector<std::unique_ptr<Node>> children;
    std::vector<QPointF> childPos;     // top-left, relative to this node's top-left
    std::vector<QPainterPath> edges;   // relative to this node's top-left
};

struct GraphView::CachedLayout {
    QString signature;  // child sizes it was computed for
    LayeredLayout layout;
};

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
    setScene(new QGraphicsScene(this));
    setDragMode(ScrollHandDrag);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setTransformationAnchor(AnchorUnderMouse);
    setViewportUpdateMode(SmartViewportUpdate);
    setBackgroundBrush(QColor(0xfa, 0xfb, 0xfc));
    setObjectName(QStringLiteral("graphView"));
}

GraphView::~GraphView() = default;

bool GraphView::haveGraphviz() {
#ifdef CFP_HAVE_GRAPHVIZ
    return true;
#else
    return false;
#endif
}

void GraphView::setAnalysis(std::shared_ptr<const AnalysisData> analysis) {
    m_analysis = std::move(analysis);
    m_expanded.clear();
    m_layoutCache.clear();
    m_hasSelected = false;
    m_shownSegment.clear();
    if (m_analysis)
        for (const RepeatRun& run : m_analysis->runs) m_shownSegment.push_back(run.firstSegment);
    if (m_plan && (!m_analysis || !planMatches(*m_plan, *m_analysis))) m_plan.reset();
    computeHeat();
    rebuild();
    fitAll();
}

void GraphView::setPlan(std::shared_ptr<const PlanData> plan) {
    m_plan = std::move(plan);
    if (m_plan && (!m_analysis || !planMatches(*m_plan, *m_analysis))) m_plan.reset();
    computeHeat();
    // Subtitles show the plan's strategies and times: rebuild (layouts are cached).
    rebuild();
}

void GraphView::setOverlay(Overlay overlay) {
    m_overlay = overlay;
    computeHeat();
    refreshColours();
}

void GraphView::setExpanded(const NodeKey& key, bool expanded) {
    if (expanded == isExpanded(key)) return;
    // A block of another repeat than the one its run shows: show that one.
    if (expanded && key.kind == NodeKind::Block && m_analysis && key.id >= 0 &&
        static_cast<size_t>(key.id) < m_analysis->segmentOfBlock.size()) {
        const int32_t seg = m_analysis->segmentOfBlock[static_cast<size_t>(key.id)];
        if (seg >= 0) setShownSegment(m_analysis->runOfSegment[static_cast<size_t>(seg)], seg);
    }
    if (expanded) m_expanded.insert(key.packed());
    else m_expanded.remove(key.packed());
    rebuild();
}

void GraphView::collapseAll() {
    m_expanded.clear();
    rebuild();
    fitAll();
}

int32_t GraphView::shownSegment(int run) const {
    if (run < 0 || static_cast<size_t>(run) >= m_shownSegment.size()) return 0;
    return m_shownSegment[static_cast<size_t>(run)];
}

void GraphView::setShownSegment(int run, int32_t segment) {
    if (!m_analysis || run < 0 || static_cast<size_t>(run) >= m_shownSegment.size()) return;
    const RepeatRun& r = m_analysis->runs[static_cast<size_t>(run)];
    if (segment < r.firstSegment || segment >= r.firstSegment + r.count) return;
    const int32_t old = m_shownSegment[static_cast<size_t>(run)];
    if (old == segment) return;
    // The blocks expanded in the old repeat stay expanded in the new one (same structure).
    const auto& segments = m_analysis->report->cover.segments;
    const Segment& from = segments[static_cast<size_t>(old)];
    const Segment& to = segments[static_cast<size_t>(segment)];
    for (int k = 0; k < from.blockCount && k < to.blockCount; ++k)
        if (m_expanded.remove(NodeKey{NodeKind::Block, from.firstBlock + k}.packed())) m_expanded.insert(NodeKey{NodeKind::Block, to.firstBlock + k}.packed());
    m_shownSegment[static_cast<size_t>(run)] = segment;
}

std::optional<GraphView::RunSummary> GraphView::runSummary(int run) const {
    if (!m_plan || !m_analysis || run < 0 || static_cast<size_t>(run) >= m_analysis->runs.size()) return std::nullopt;
    const Plan& p = m_plan->plan();
    const RepeatRun& r = m_analysis->runs[static_cast<size_t>(run)];
    RunSummary sum;
    std::set<std::vector<int32_t>> combinations;
    for (int s = r.firstSegment; s < r.firstSegment + r.count && static_cast<size_t>(s) < p.segments.size(); ++s) {
        const SegmentPlan& sp = p.segments[static_cast<size_t>(s)];
        const double seconds = sp.cost.total();
        sum.minSeconds = sum.segments ? std::min(sum.minSeconds, seconds) : seconds;
        sum.maxSeconds = sum.segments ? std::max(sum.maxSeconds, seconds) : seconds;
        sum.totalSeconds += seconds;
        ++sum.segments;
        std::vector<int32_t> combination;
        for (int k = 0; k < sp.blockCount; ++k) {
            const BlockChoice& c = p.blocks[static_cast<size_t>(sp.firstBlock + k)];
            combination.push_back(c.strategy * 2 + (c.recompute ? 1 : 0));
        }
        combinations.insert(std::move(combination));
    }
    if (!sum.segments) return std::nullopt;
    sum.combinations = static_cast<int>(combinations.size());
    return sum;
}

QString GraphView::nodeText(const NodeKey& key) const {
    const GraphNodeItem* it = m_items.value(key.packed());
    return it ? it->text() : QString();
}

QColor GraphView::nodeFill(const NodeKey& key) const {
    const GraphNodeItem* it = m_items.value(key.packed());
    return it ? it->fill() : QColor();
}

QRectF GraphView::stripBarRect(int run, int32_t segment) const {
    const GraphNodeItem* it = m_items.value(NodeKey{NodeKind::Run, run}.packed());
    if (!it || !m_analysis) return {};
    return it->mapRectToScene(it->barRect(segment - m_analysis->runs[static_cast<size_t>(run)].firstSegment));
}

std::unique_ptr<GraphView::Node> GraphView::buildNode(const NodeKey& key) {
    const AnalysisReport& r = *m_analysis->report;
    const Graph& g = m_analysis->graph();
    const Plan* plan = m_plan ? &m_plan->plan() : nullptr;
    auto node = std::make_unique<Node>();
    node->key = key;
    node->expanded = key.kind != NodeKind::Op && isExpanded(key);
    switch (key.kind) {
    case NodeKind::Run: {
        const RepeatRun& run = m_analysis->runs[static_cast<size_t>(key.id)];
        const int32_t shown = shownSegment(key.id);
        const Segment& seg = r.cover.segments[static_cast<size_t>(shown)];
        const SegmentType& type = r.cover.types[static_cast<size_t>(run.type)];
        const QString name = qs(m_analysis->typeNames[static_cast<size_t>(run.type)]);
        node->title = run.count > 1 ? QStringLiteral("%1 × %2").arg(name).arg(run.count) : name;
        int64_t ops = 0;
        for (int k = 0; k < seg.blockCount; ++k) ops += static_cast<int64_t>(r.blocks.blocks[static_cast<size_t>(seg.firstBlock + k)].members.size());
        const QString structure = QStringLiteral("T%1 · %2 blocks · %3 ops · %4 combos")
                                      .arg(run.type)
                                      .arg(seg.blockCount)
                                      .arg(ops)
                                      .arg(type.combinations == INT64_MAX ? QStringLiteral("1e%1").arg(type.combinationsLog10, 0, 'f', 0)
                                                                          : formatCount(type.combinations));
        node->subtitle = structure;
        if (auto sum = runSummary(key.id)) {
            // What the run holds, not what its first segment costs.
            if (run.count > 1) {
                node->strip = true;
                node->title += sum->uniform() ? QStringLiteral(" · uniform: %1 each").arg(formatSeconds(sum->minSeconds))
                                              : QStringLiteral(" · mixed: %1–%2 each").arg(formatSeconds(sum->minSeconds), formatSeconds(sum->maxSeconds));
                node->subtitle = QStringLiteral("%1 · %2 in all · %3")
                                     .arg(sum->combinations == 1 ? QStringLiteral("1 combination") : QStringLiteral("%1 combinations").arg(sum->combinations),
                                          formatSeconds(sum->totalSeconds), structure);
            } else {
                node->title += QStringLiteral(" · %1").arg(formatSeconds(sum->totalSeconds));
            }
        }
        // A pipelined plan: how many of the run's segments each rank holds (the stage split), by
        // the layer of each segment's first block.
        if (plan && plan->pipeline && !plan->pipeline->chunks.empty()) {
            const PipelinePlan& pl = *plan->pipeline;
            std::map<int32_t, int> perRank;
            for (int32_t s = run.firstSegment; s < run.firstSegment + run.count; ++s) {
                const Segment& sg = r.cover.segments[static_cast<size_t>(s)];
                const std::string_view layer = layerScope(g.op(r.blocks.blocks[static_cast<size_t>(sg.firstBlock)].entry).scope);
                const size_t dot = layer.rfind('.');
                if (layer.empty() || dot == std::string_view::npos) continue;
                const int32_t l = QString::fromUtf8(layer.substr(dot + 1).data(), static_cast<qsizetype>(layer.size() - dot - 1)).toInt();
                for (size_t c = 0; c < pl.chunks.size(); ++c)
                    if (l >= pl.chunks[c].firstLayer && l < pl.chunks[c].firstLayer + pl.chunks[c].layers) {
                        ++perRank[chunkRank(pl, static_cast<int32_t>(c))];
                        break;
                    }
            }
            if (!perRank.empty()) {
                QStringList parts;
                for (const auto& [rank, n] : perRank) parts << QStringLiteral("rank %1 × %2").arg(rank).arg(n);
                node->subtitle += QStringLiteral(" · pipeline: ") + parts.join(QStringLiteral(", "));
            }
        }
        if (node->expanded && run.count > 1) {
            // Which repeat the blocks below are, and its own cost.
            QString own;
            if (plan && static_cast<size_t>(shown) < plan->segments.size())
                own = QStringLiteral(": %1").arg(formatSeconds(plan->segments[static_cast<size_t>(shown)].cost.total()));
            node->subtitle = QStringLiteral("showing segment #%1, repeat %2 of %3%4 · %5")
                                 .arg(shown)
                                 .arg(shown - run.firstSegment + 1)
                                 .arg(run.count)
                                 .arg(own, node->subtitle);
        }
        if (node->strip) node->header = kHeader + kStrip;
        if (node->expanded)
            for (int k = 0; k < seg.blockCount; ++k) node->children.push_back(buildNode({NodeKind::Block, seg.firstBlock + k}));
        break;
    }
    case NodeKind::Block: {
        const ParallelBlock& b = r.blocks.blocks[static_cast<size_t>(key.id)];
        const std::string& scope = g.op(b.entry).scope;
        // Drop the layer prefix ("layers.7.") that every block of a layer shares.
        QString shortScope = qs(scope);
        const auto parts = shortScope.split(QLatin1Char('.'));
        if (parts.size() > 2 && parts[1].toInt() > 0) shortScope = parts.mid(2).join(QLatin1Char('.'));
        else if (parts.size() > 2 && parts[1] == QLatin1String("0")) shortScope = parts.mid(2).join(QLatin1Char('.'));
        node->title = QStringLiteral("b%1 %2").arg(key.id).arg(shortScope);
        node->subtitle = QStringLiteral("%1 ops · %2 strategies").arg(b.members.size()).arg(b.strategies.size());
        if (plan) {
            const BlockChoice& c = plan->blocks[static_cast<size_t>(key.id)];
            node->subtitle = QStringLiteral("%1 ops · %2%3").arg(b.members.size()).arg(qs(c.label), c.recompute ? QStringLiteral(" +rc") : QString());
        }
        if (node->expanded) {
            const size_t shown = std::min(b.members.size(), static_cast<size_t>(kMaxOpsShown));
            for (size_t m = 0; m < shown; ++m) node->children.push_back(buildNode({NodeKind::Op, b.members[m]}));
            if (shown < b.members.size()) node->subtitle += QStringLiteral(" · first %1 shown").arg(shown);
        }
        break;
    }
    case NodeKind::Op: {
        const Op& op = g.op(key.id);
        node->title = qs(op.name);
        node->subtitle = qs(std::string(opKindName(op.kind))) + QLatin1Char(' ') + qs(op.type.toString());
        break;
    }
    }
    if (node->expanded && !node->children.empty()) {
        placeChildren(*node);
    } else {
        const QFontMetricsF fm(subtitleFont()), fmb(titleFont());
        const double w = std::max(fmb.horizontalAdvance(node->title), fm.horizontalAdvance(node->subtitle)) + 20;
        const double maxW = key.kind == NodeKind::Op ? 230 : 360;
        node->size = QSizeF(std::clamp(w, 110.0, maxW), kLeafHeight + (node->strip ? kStrip : 0.0));
        node->expanded = false;
    }
    return node;
}

void GraphView::placeChildren(Node& node) {
    const AnalysisReport& r = *m_analysis->report;
    const Graph& g = m_analysis->graph();
    std::vector<QSizeF> sizes;
    QString signature;
    for (const auto& c : node.children) {
        sizes.push_back(c->size);
        signature += QStringLiteral("%1x%2;").arg(c->size.width()).arg(c->size.height());
    }
    std::shared_ptr<CachedLayout>& cached = m_layoutCache[node.key.packed()];
    if (!cached || cached->signature != signature) {
        // Edges among the children.
        std::vector<std::pair<int, int>> edges;
        if (node.key.kind == NodeKind::Block) {
            const ParallelBlock& b = r.blocks.blocks[static_cast<size_t>(node.key.id)];
            const size_t shown = node.children.size();
            for (size_t m = 0; m < shown; ++m) {
                std::unordered_set<int64_t> seen;
                for (OpId operand : g.op(b.members[m]).operands) {
                    const int64_t k = b.memberIndex(operand);
                    if (k >= 0 && static_cast<size_t>(k) < shown && seen.insert(k).second) edges.emplace_back(static_cast<int>(k), static_cast<int>(m));
                }
            }
        } else {
            // Blocks of a segment: an edge when an op of one reads (directly or through a few ops
            // outside blocks, such as residual adds) an op of another.
            const int first = node.children.front()->key.id;
            const int count = static_cast<int>(node.children.size());
            std::set<std::pair<int, int>> pairs;
            for (int j = 0; j < count; ++j) {
                for (OpId member : r.blocks.blocks[static_cast<size_t>(first + j)].members) {
                    std::vector<std::pair<OpId, int>> stack;
                    for (OpId o : g.op(member).operands) stack.emplace_back(o, 0);
                    std::unordered_set<OpId> visited;
                    while (!stack.empty()) {
                        auto [o, depth] = stack.back();
                        stack.pop_back();
                        if (!visited.insert(o).second) continue;
                        const int32_t ob = r.blocks.blockOf[static_cast<size_t>(o)];
                        if (ob >= 0) {
                            const int i = ob - first;
                            if (i >= 0 && i < count && i != j && i < j) pairs.emplace(i, j);
                            continue;
                        }
                        if (depth < 3)
                            for (OpId p : g.op(o).operands) stack.emplace_back(p, depth + 1);
                    }
                }
            }
            edges.assign(pairs.begin(), pairs.end());
            if (edges.empty())
                for (int j = 1; j < count; ++j) edges.emplace_back(j - 1, j);
        }
        auto fresh = std::make_shared<CachedLayout>();
        fresh->signature = signature;
        fresh->layout = layoutLayers(sizes, edges);
        cached = fresh;
    }
    const LayeredLayout& l = cached->layout;
    const QPointF offset(kPad, node.header + kPad / 2);
    for (const QPointF& p : l.topLeft) node.childPos.push_back(p + offset);
    for (const QPainterPath& e : l.edges) node.edges.push_back(e.translated(offset));
    const double titleWidth = std::max(QFontMetricsF(titleFont()).horizontalAdvance(node.title),
                                       QFontMetricsF(subtitleFont()).horizontalAdvance(node.subtitle)) + 2 * kPad + 8;
    node.size = QSizeF(std::max(l.size.width() + 2 * kPad, titleWidth), l.size.height() + node.header + 1.5 * kPad);
    // Centre narrow content under a wide title.
    const double extra = node.size.width() - (l.size.width() + 2 * kPad);
    if (extra > 0) {
        for (QPointF& p : node.childPos) p.rx() += extra / 2;
        for (QPainterPath& e : node.edges) e.translate(extra / 2, 0);
    }
}

void GraphView::rebuild() {
    QElapsedTimer timer;
    timer.start();
    scene()->clear();
    m_items.clear();
    if (!m_analysis) {
        m_lastLayoutMs = 0;
        return;
    }
    std::vector<std::unique_ptr<Node>> top;
    double width = 0;
    for (size_t run = 0; run < m_analysis->runs.size(); ++run) {
        top.push_back(buildNode({NodeKind::Run, static_cast<int32_t>(run)}));
        width = std::max(width, top.back()->size.width());
    }
    double y = 0;
    QPointF previousBottom;
    QPen edgePen(QColor(0x7a, 0x80, 0x8a), 1.4);
    for (size_t i = 0; i < top.size(); ++i) {
        const Node& n = *top[i];
        const QPointF origin((width - n.size.width()) / 2, y);
        if (i > 0) {
            auto* e = scene()->addLine(QLineF(previousBottom, QPointF(width / 2, y)), edgePen);
            e->setZValue(-1);
        }
        emitItems(n, origin, 0);
        y += n.size.height() + kRunGap;
        previousBottom = QPointF(width / 2, y - kRunGap);
    }
    scene()->setSceneRect(scene()->itemsBoundingRect().adjusted(-16, -16, 16, 16));
    refreshColours();
    if (m_hasSelected)
        if (auto* it = m_items.value(m_selected.packed())) it->setHighlight(true);
    m_lastLayoutMs = timer.nsecsElapsed() / 1e6;
}

void GraphView::emitItems(const Node& node, QPointF origin, int depth) {
    auto* item = new GraphNodeItem(node.key, node.size, node.title, node.subtitle, node.expanded, node.header, node.strip);
    item->setPos(origin);
    item->setZValue(depth * 2);
    scene()->addItem(item);
    m_items.insert(node.key.packed(), item);
    if (!node.expanded) return;
    QPen pen(QColor(0x6b, 0x72, 0x80), 1.1);
    pen.setCosmetic(true);
    for (const QPainterPath& e : node.edges) {
        auto* path = scene()->addPath(e.translated(origin), pen);
        path->setZValue(depth * 2 + 1);
        // Arrowhead at the end of the edge.
        if (e.elementCount() > 0) {
            const QPointF end = e.pointAtPercent(1.0) + origin;
            // angleAtPercent is counter-clockwise with y up; the scene's y points down.
            const double rad = e.angleAtPercent(1.0) * std::numbers::pi / 180.0;
            const double angle = std::atan2(-std::sin(rad), std::cos(rad));
            QPolygonF head;
            head << end << end - QPointF(std::cos(angle - 0.4) * 7, std::sin(angle - 0.4) * 7)
                 << end - QPointF(std::cos(angle + 0.4) * 7, std::sin(angle + 0.4) * 7);
            auto* h = scene()->addPolygon(head, pen, QBrush(pen.color()));
            h->setZValue(depth * 2 + 1);
        }
    }
    for (size_t i = 0; i < node.children.size(); ++i) emitItems(*node.children[i], origin + node.childPos[i], depth + 1);
}

void GraphView::computeHeat() {
    m_segmentHeat.clear();
    m_runHeat.clear();
    m_blockHeat.clear();
    m_opHeat.clear();
    m_segmentMax = m_blockMax = m_opMax = 0;
    m_legend.clear();
    if (!m_analysis) return;
    if (m_overlay == Overlay::Blocks || !m_plan) {
        m_legend = m_overlay == Overlay::Blocks ? tr("Colour: block position within its segment")
                                                : tr("Heat map needs a plan: run the search");
        emit legendChanged(m_legend);
        return;
    }
    const Plan& p = m_plan->plan();
    const Graph& g = m_analysis->graph();
    const auto& opCost = m_plan->outcome->evaluation.opCost;
    m_opHeat.assign(static_cast<size_t>(g.size()), 0.0);
    m_blockHeat.assign(p.blocks.size(), 0.0);
    for (const TensorPlan& t : p.tensors) {
        const auto k = static_cast<size_t>(t.op);
        double v = 0;
        double blockV = 0;
        switch (m_overlay) {
        case Overlay::Time: v = blockV = opCost[k].total(); break;
        case Overlay::Communication: v = blockV = opCost[k].collectiveSeconds + opCost[k].reshardSeconds; break;
        case Overlay::Memory: {
            const Op& op = g.op(t.op);
            v = static_cast<double>(localResultBytes(g, p, t.op));
            blockV = op.kind == OpKind::Parameter ? (op.role == ParamRole::Trainable ? 2 * v : v) : 0.0;
            break;
        }
        case Overlay::Blocks: break;
        }
        m_opHeat[k] = v;
        if (t.block >= 0) m_blockHeat[static_cast<size_t>(t.block)] += blockV;
    }
    for (const SegmentPlan& sp : p.segments) {
        double v = 0;
        switch (m_overlay) {
        case Overlay::Time: v = sp.cost.total(); break;
        case Overlay::Communication: v = sp.cost.collectiveSeconds + sp.cost.reshardSeconds; break;
        case Overlay::Memory: v = static_cast<double>(sp.memoryBytes); break;
        case Overlay::Blocks: break;
        }
        m_segmentHeat.push_back(v);
    }
    // A folded run stands for each of its segments: its heat is their average, on the segments'
    // scale (its total would make every long run the darkest node whatever its segments cost).
    for (const RepeatRun& run : m_analysis->runs) {
        double sum = 0;
        int n = 0;
        for (int s = run.firstSegment; s < run.firstSegment + run.count && static_cast<size_t>(s) < m_segmentHeat.size(); ++s, ++n)
            sum += m_segmentHeat[static_cast<size_t>(s)];
        m_runHeat.push_back(n ? sum / n : 0.0);
    }
    auto maxOf = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
    m_segmentMax = maxOf(m_segmentHeat);
    m_blockMax = maxOf(m_blockHeat);
    m_opMax = maxOf(m_opHeat);
    auto fmt = [&](double v) { return m_overlay == Overlay::Memory ? formatBytes(v) : formatSeconds(v); };
    const QString what = m_overlay == Overlay::Time ? tr("time per step")
                         : m_overlay == Overlay::Communication ? tr("communication (own collectives + resharding) per step")
                                                               : tr("memory per device (segments, blocks: parameters + state; ops: result)");
    m_legend = tr("Heat: %1 (a folded run: per-segment average over the run; its bars: each segment) — darkest = max: segment %2, block %3, op %4")
                   .arg(what, fmt(m_segmentMax), fmt(m_blockMax), fmt(m_opMax));
    emit legendChanged(m_legend);
}

double GraphView::heatOf(const NodeKey& key) const {
    auto norm = [](const std::vector<double>& v, size_t i, double mx) { return i < v.size() && mx > 0 ? v[i] / mx : 0.0; };
    switch (key.kind) {
    case NodeKind::Run: return norm(m_runHeat, static_cast<size_t>(key.id), m_segmentMax);
    case NodeKind::Block: return norm(m_blockHeat, static_cast<size_t>(key.id), m_blockMax);
    case NodeKind::Op: return norm(m_opHeat, static_cast<size_t>(key.id), m_opMax);
    }
    return 0;
}

QColor GraphView::fillOf(const NodeKey& key) const {
    if (m_overlay != Overlay::Blocks && m_plan) return heatColor(heatOf(key));
    const AnalysisReport& r = *m_analysis->report;
    switch (key.kind) {
    case NodeKind::Run: return QColor(0xd5, 0xdd, 0xe8);
    case NodeKind::Block: {
        const int seg = m_analysis->segmentOfBlock[static_cast<size_t>(key.id)];
        return blockColor(key.id - r.cover.segments[static_cast<size_t>(seg)].firstBlock).lighter(115);
    }
    case NodeKind::Op: {
        const int32_t b = r.blocks.blockOf[static_cast<size_t>(key.id)];
        if (b < 0) return QColor(0xee, 0xee, 0xee);
        const int seg = m_analysis->segmentOfBlock[static_cast<size_t>(b)];
        return blockColor(b - r.cover.segments[static_cast<size_t>(seg)].firstBlock).lighter(150);
    }
    }
    return Qt::white;
}

void GraphView::refreshColours() {
    if (!m_analysis) return;
    for (GraphNodeItem* item : std::as_const(m_items)) item->setFill(fillOf(item->key()));
    refreshStrips();
}

void GraphView::refreshStrips() {
    if (!m_plan) return;
    const Plan& p = m_plan->plan();
    const bool heat = m_overlay != Overlay::Blocks;
    for (size_t run = 0; run < m_analysis->runs.size(); ++run) {
        const RepeatRun& r = m_analysis->runs[run];
        GraphNodeItem* item = m_items.value(NodeKey{NodeKind::Run, static_cast<int32_t>(run)}.packed());
        if (!item || r.count < 2) continue;
        // Bar heights on the run's own scale (the spread is what they show), colours on the
        // overlay's scale; without a heat map, the step time.
        std::vector<double> values;
        for (int s = r.firstSegment; s < r.firstSegment + r.count && static_cast<size_t>(s) < p.segments.size(); ++s)
            values.push_back(heat && static_cast<size_t>(s) < m_segmentHeat.size() ? m_segmentHeat[static_cast<size_t>(s)]
                                                                                   : p.segments[static_cast<size_t>(s)].cost.total());
        const double top = values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
        std::vector<RunStripBar> bars;
        for (size_t i = 0; i < values.size(); ++i) {
            const int s = r.firstSegment + static_cast<int>(i);
            const SegmentPlan& sp = p.segments[static_cast<size_t>(s)];
            QString combination;
            for (int k = 0; k < sp.blockCount; ++k) {
                const BlockChoice& c = p.blocks[static_cast<size_t>(sp.firstBlock + k)];
                combination += (k ? QStringLiteral(" | ") : QString()) + qs(c.label) + (c.recompute ? QStringLiteral(" +rc") : QString());
            }
            RunStripBar bar;
            bar.height = top > 0 ? values[i] / top : 1.0;
            bar.colour = heat ? heatColor(m_segmentMax > 0 ? values[i] / m_segmentMax : 0.0) : QColor(0x5b, 0x7d, 0xb1);
            bar.tip = tr("Segment #%1, repeat %2 of %3: %4 per step, %5\n%6")
                          .arg(s)
                          .arg(i + 1)
                          .arg(r.count)
                          .arg(formatSeconds(sp.cost.total()), formatBytes(static_cast<double>(sp.memoryBytes)), combination);
            bars.push_back(std::move(bar));
        }
        // The repeat on display is marked: the expanded one, or one the selection picked.
        const NodeKey key{NodeKind::Run, static_cast<int32_t>(run)};
        const int32_t shown = shownSegment(static_cast<int>(run));
        const bool mark = isExpanded(key) || shown != r.firstSegment || (m_hasSelected && m_selected == key);
        item->setStrip(std::move(bars), mark ? shown - r.firstSegment : -1);
    }
}

std::optional<GraphView::NodeKey> GraphView::displayKey(const Selection& sel, std::vector<NodeKey>* path, int32_t* segment) const {
    if (!m_analysis) return std::nullopt;
    const AnalysisReport& r = *m_analysis->report;
    auto runOf = [&](int32_t seg) { return m_analysis->runOfSegment[static_cast<size_t>(seg)]; };
    // Blocks and ops are shown as themselves: their run shows their own repeat.
    switch (sel.kind) {
    case Selection::Kind::None: return std::nullopt;
    case Selection::Kind::Segment:
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.cover.segments.size()) return std::nullopt;
        if (segment) *segment = sel.id;
        return NodeKey{NodeKind::Run, runOf(sel.id)};
    case Selection::Kind::Block: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blocks.size()) return std::nullopt;
        const int32_t seg = m_analysis->segmentOfBlock[static_cast<size_t>(sel.id)];
        if (seg < 0) return std::nullopt;
        if (segment) *segment = seg;
        if (path) path->push_back({NodeKind::Run, runOf(seg)});
        return NodeKey{NodeKind::Block, sel.id};
    }
    case Selection::Kind::Op: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blockOf.size()) return std::nullopt;
        const int32_t block = r.blocks.blockOf[static_cast<size_t>(sel.id)];
        if (block < 0) return std::nullopt;  // ops outside blocks are not drawn
        const int32_t seg = m_analysis->segmentOfBlock[static_cast<size_t>(block)];
        if (seg < 0) return std::nullopt;
        if (segment) *segment = seg;
        if (path) path->push_back({NodeKind::Run, runOf(seg)});
        const int64_t member = r.blocks.blocks[static_cast<size_t>(block)].memberIndex(sel.id);
        if (member < 0 || member >= kMaxOpsShown) return NodeKey{NodeKind::Block, block};
        if (path) path->push_back({NodeKind::Block, block});
        return NodeKey{NodeKind::Op, sel.id};
    }
    }
    return std::nullopt;
}

void GraphView::showSelection(const Selection& selection) {
    if (m_hasSelected)
        if (auto* it = m_items.value(m_selected.packed())) it->setHighlight(false);
    std::vector<NodeKey> path;
    int32_t segment = -1;
    auto key = displayKey(selection, &path, &segment);
    m_hasSelected = key.has_value();
    if (!key) return;
    m_selected = *key;
    bool changed = false;
    if (segment >= 0) {
        const int run = m_analysis->runOfSegment[static_cast<size_t>(segment)];
        if (shownSegment(run) != segment) {
            setShownSegment(run, segment);
            changed = true;
        }
    }
    for (const NodeKey& k : path)
        if (!isExpanded(k)) {
            m_expanded.insert(k.packed());
            changed = true;
        }
    if (changed) rebuild();
    else refreshStrips();  // the selected run's repeat is marked
    if (auto* it = m_items.value(m_selected.packed())) {
        it->setHighlight(true);
        centerOn(it);
    }
}

Selection GraphView::selectionFor(const NodeKey& key) const {
    switch (key.kind) {
    case NodeKind::Run: return {Selection::Kind::Segment, shownSegment(key.id)};
    case NodeKind::Block: return {Selection::Kind::Block, key.id};
    case NodeKind::Op: return {Selection::Kind::Op, key.id};
    }
    return {};
}

std::vector<OpId> GraphView::findOps(const QString& text) const {
    std::vector<OpId> out;
    if (!m_analysis || text.trimmed().isEmpty()) return out;
    const std::string needle = text.trimmed().toLower().toStdString();
    auto contains = [&](const std::string& hay) {
        return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                           [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != hay.end();
    };
    for (const Op& op : m_analysis->graph().ops())
        if (contains(op.name) || contains(op.scope)) out.push_back(op.id);
    return out;
}

void GraphView::fitAll() {
    if (!scene() || scene()->items().isEmpty()) return;
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    // Never blow a small graph up beyond its natural size.
    if (transform().m11() > 1.0) setTransform(QTransform());
}

void GraphView::zoomIn() { scale(1.25, 1.25); }
void GraphView::zoomOut() { scale(0.8, 0.8); }

void GraphView::wheelEvent(QWheelEvent* event) {
    const double factor = std::pow(1.0015, event->angleDelta().y());
    const double current = transform().m11();
    if ((current < 0.02 && factor < 1) || (current > 8 && factor > 1)) return;
    scale(factor, factor);
    event->accept();
}

void GraphView::mousePressEvent(QMouseEvent* event) {
    for (QGraphicsItem* it : items(event->position().toPoint())) {
        if (auto* node = dynamic_cast<GraphNodeItem*>(it)) {
            const NodeKey key = node->key();
            // A bar of a run's strip picks that repeat.
            const int bar = key.kind == NodeKind::Run ? node->barAt(node->mapFromScene(mapToScene(event->position().toPoint()))) : -1;
            if (bar >= 0) {
                const int32_t segment = m_analysis->runs[static_cast<size_t>(key.id)].firstSegment + bar;
                if (segment != shownSegment(key.id)) {
                    setShownSegment(key.id, segment);
                    rebuild();
                }
            }
            if (m_hasSelected)
                if (auto* old = m_items.value(m_selected.packed())) old->setHighlight(false);
            m_selected = key;
            m_hasSelected = true;
            if (auto* now = m_items.value(key.packed())) now->setHighlight(true);
            refreshStrips();
            // The receiver may rebuild the scene: no item is used after this.
            emit nodeSelected(selectionFor(key));
            break;
        }
    }
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
    for (QGraphicsItem* it : items(event->position().toPoint())) {
        if (auto* node = dynamic_cast<GraphNodeItem*>(it)) {
            if (node->key().kind != NodeKind::Op) {
                const NodeKey key = node->key();
                setExpanded(key, !isExpanded(key));
                if (auto* again = m_items.value(key.packed())) centerOn(again);
            }
            event->accept();
            return;
        }
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

}  // namespace cfp::explorer
