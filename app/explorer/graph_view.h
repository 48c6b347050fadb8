#pragma once
// The hierarchical graph view: repeated segments folded into one node per run ("Layer × 95"); a
// run expands to the blocks of one of its segments (every segment of a run has the same
// structure): the first, or the one the selection is in, so that finding an op of layer 40 shows
// layer 40's op, not layer 0's. A block expands to its member ops. Only what is expanded is laid
// out: each expanded node's children are placed by Graphviz's layered "dot" layout (or a simple
// longest-path layering when Graphviz is not available), inside the node's frame; the top level is
// a vertical chain. Layouts of expanded nodes are cached, so expanding one block does not lay out
// the others again.
//
// With a plan, a folded run says what it holds: "Layer × 79 · uniform: 24.6 ms each" (one strategy
// combination, costs within 0.5%) or "Layer × 79 · mixed: 24.6–95.0 ms each" with the number of
// combinations and the run's total, and a strip of bars, one per segment (its own cost; the tooltip
// names it, a click shows its blocks).
//
// Colour by block (position in its segment, so every layer's QKV block has one colour) or a heat
// map of the current plan: time, communication (own collectives + resharding) or memory. A run's
// heat is the per-segment average over the run, on the same scale as single segments (the legend
// says so); its bars are coloured by each segment's own value.

#include <QGraphicsView>
#include <QHash>
#include <QSet>

#include <memory>
#include <optional>
#include <vector>

#include "controller.h"

namespace cfp::explorer {

class GraphNodeItem;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    enum class Overlay { Blocks, Time, Communication, Memory };
    enum class NodeKind : quint8 { Run, Block, Op };
    struct NodeKey {
        NodeKind kind = NodeKind::Run;
        int32_t id = 0;  // run index, block id, op id
        quint64 packed() const { return (quint64(kind) << 32) | quint32(id); }
        bool operator==(const NodeKey&) const = default;
    };
    // What a run's segments cost under the plan (SegmentPlan::cost), for its label.
    struct RunSummary {
        int segments = 0;
        int combinations = 0;  // distinct strategy combinations (recomputation included)
        double minSeconds = 0, maxSeconds = 0, totalSeconds = 0;
        // One combination and every segment within 0.5% of the cheapest.
        bool uniform() const { return combinations <= 1 && maxSeconds <= minSeconds * 1.005; }
    };

    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    void setAnalysis(std::shared_ptr<const AnalysisData> analysis);
    void setPlan(std::shared_ptr<const PlanData> plan);
    void setOverlay(Overlay overlay);
    Overlay overlay() const { return m_overlay; }

    void setExpanded(const NodeKey& key, bool expanded);
    bool isExpanded(const NodeKey& key) const { return m_expanded.contains(key.packed()); }
    void collapseAll();
    // Shows `selection` (expanding the runs and blocks on its way), highlights and centres it.
    void showSelection(const Selection& selection);
    NodeKey selectedNode() const { return m_selected; }
    bool hasSelectedNode() const { return m_hasSelected; }

    // The segment whose blocks run `run` shows when expanded (its first until the selection or a
    // click on its strip picks another); setting it carries the expanded blocks over by position.
    int32_t shownSegment(int run) const;
    void setShownSegment(int run, int32_t segment);
    // nullopt without a plan.
    std::optional<RunSummary> runSummary(int run) const;

    // Ops whose name or scope contains `text` (case-insensitive), in op order.
    std::vector<OpId> findOps(const QString& text) const;

    int visibleNodeCount() const { return static_cast<int>(m_items.size()); }
    double lastLayoutMs() const { return m_lastLayoutMs; }
    QString overlayLegend() const { return m_legend; }
    // A visible node's "title\nsubtitle" and fill (empty and invalid when it is not on display).
    QString nodeText(const NodeKey& key) const;
    QColor nodeFill(const NodeKey& key) const;
    // Where the bar of `segment` lies in its run's strip, in scene coordinates (empty when the run
    // is not on display or has no strip).
    QRectF stripBarRect(int run, int32_t segment) const;
    // The heat ramp: 0 lightest, 1 darkest (the overlay's maximum).
    static QColor heatColor(double fraction);
    static bool haveGraphviz();

public slots:
    void fitAll();
    void zoomIn();
    void zoomOut();

signals:
    void nodeSelected(const cfp::explorer::Selection& selection);
    void legendChanged(const QString& legend);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;

private:
    struct Node;
    struct CachedLayout;
    void rebuild();
    std::unique_ptr<Node> buildNode(const NodeKey& key);
    void placeChildren(Node& node);
    void emitItems(const Node& node, QPointF origin, int depth);
    void refreshColours();
    void computeHeat();
    Selection selectionFor(const NodeKey& key) const;
    // The node on display for a selection, the nodes to expand on the way and the segment its run
    // must show (-1: any).
    std::optional<NodeKey> displayKey(const Selection& selection, std::vector<NodeKey>* path, int32_t* segment) const;
    void refreshStrips();
    double heatOf(const NodeKey& key) const;
    QColor fillOf(const NodeKey& key) const;

    std::shared_ptr<const AnalysisData> m_analysis;
    std::shared_ptr<const PlanData> m_plan;
    Overlay m_overlay = Overlay::Blocks;
    QSet<quint64> m_expanded;
    QHash<quint64, GraphNodeItem*> m_items;
    QHash<quint64, std::shared_ptr<CachedLayout>> m_layoutCache;
    std::vector<int32_t> m_shownSegment;  // per run
    NodeKey m_selected;
    bool m_hasSelected = false;
    double m_lastLayoutMs = 0;
    QString m_legend;
    // Heat values (plan) for the current overlay: per segment, run (per-segment average), block,
    // op, and the maxima (runs share the segments' scale).
    std::vector<double> m_segmentHeat, m_runHeat, m_blockHeat, m_opHeat;
    double m_segmentMax = 0, m_blockMax = 0, m_opMax = 0;
};

}  // namespace cfp::explorer
