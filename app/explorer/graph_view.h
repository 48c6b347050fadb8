#pragma once
// The hierarchical graph view: repeated segments folded into one node per run ("Layer × 95"); a
// run expands to the blocks of its representative segment (every segment of a run has the same
// structure), a block to its member ops. Only what is expanded is laid out: each expanded node's
// children are placed by Graphviz's layered "dot" layout (or a simple longest-path layering when
// Graphviz is not available), inside the node's frame; the top level is a vertical chain. Layouts
// of expanded nodes are cached, so expanding one block does not lay out the others again.
//
// Colour by block (position in its segment, so every layer's QKV block has one colour) or a heat
// map of the current plan: time, communication (own collectives + resharding) or memory.

#include <QGraphicsView>
#include <QHash>
#include <QSet>

#include <memory>

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

    // Ops whose name or scope contains `text` (case-insensitive), in op order.
    std::vector<OpId> findOps(const QString& text) const;

    int visibleNodeCount() const { return static_cast<int>(m_items.size()); }
    double lastLayoutMs() const { return m_lastLayoutMs; }
    QString overlayLegend() const { return m_legend; }
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
    // The node on display for an op/block of any segment: its run's representative.
    std::optional<NodeKey> displayKey(const Selection& selection, std::vector<NodeKey>* path) const;
    double heatOf(const NodeKey& key) const;
    QColor fillOf(const NodeKey& key) const;

    std::shared_ptr<const AnalysisData> m_analysis;
    std::shared_ptr<const PlanData> m_plan;
    Overlay m_overlay = Overlay::Blocks;
    QSet<quint64> m_expanded;
    QHash<quint64, GraphNodeItem*> m_items;
    QHash<quint64, std::shared_ptr<CachedLayout>> m_layoutCache;
    NodeKey m_selected;
    bool m_hasSelected = false;
    double m_lastLayoutMs = 0;
    QString m_legend;
    // Heat values (plan): per run, block, op for the current overlay, and their maxima.
    std::vector<double> m_runHeat, m_blockHeat, m_opHeat;
    double m_runMax = 0, m_blockMax = 0, m_opMax = 0;
};

}  // namespace cfp::explorer
