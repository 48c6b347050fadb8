#pragma once
// The explorer's main window: the folded graph and the charts in the centre, the plan table
// below, the structure tree on the left with the cluster and search panels, the properties and the
// profiler on the right. It owns an Explorer (controller.h) and wires every view to it.

#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>

#include <memory>

#include "controller.h"

class QComboBox;
class QDockWidget;
class QLineEdit;

class QTabWidget;
class QTextBrowser;
class QTreeView;

namespace cfp::explorer {

class BaselineChart;
class ClusterPanel;
class CombinationChart;
class GraphView;
class MemoryChart;
class PipelineChart;
class PlanPanel;
class ProfilerPanel;
class SearchPanel;
class SegmentCostChart;
class StructureModel;

struct WindowOptions {
    std::string model = kDefaultModel;  // opened (and analysed) at once: builtin:NAME, a model or project file
    BuildOptions build;                 // for builtin: and config.json models
    ClusterSettings cluster;            // hardware, nodes, mesh, memory limit
    bool searchOnOpen = false;          // run the search after the first analysis
    bool discoverDevices = true;        // list GPUs on the profiler thread at start
    bool rememberLayout = false;        // restore the window's size and docks from the last session, save on close
    bool confirmClose = false;          // ask before closing over a plan or pins not saved in a project
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const WindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    Explorer* explorer() const { return m_explorer; }
    GraphView* graphView() const { return m_graph; }
    StructureModel* structureModel() const { return m_structure; }
    QTreeView* structureView() const { return m_tree; }
    PlanPanel* planPanel() const { return m_planPanel; }
    SearchPanel* searchPanel() const { return m_searchPanel; }
    ClusterPanel* clusterPanel() const { return m_clusterPanel; }
    ProfilerPanel* profilerPanel() const { return m_profilerPanel; }
    SegmentCostChart* segmentChart() const { return m_segmentChart; }
    CombinationChart* combinationChart() const { return m_combinationChart; }
    BaselineChart* baselineChart() const { return m_baselineChart; }
    MemoryChart* memoryChart() const { return m_memoryChart; }
    PipelineChart* pipelineChart() const { return m_pipelineChart; }
    QTextBrowser* properties() const { return m_properties; }
    QTabWidget* chartTabs() const { return m_chartTabs; }
    // The last error dialog (open until the user closes it), for tests.
    QMessageBox* lastErrorDialog() const { return m_lastError; }
    // A plan or pins made since the project was last saved or opened (closing asks first).
    bool hasUnsavedWork() const { return m_unsaved; }
    QStringList recentFiles() const;

    // Opens a model source, a project file or (by its "format") decides which it is.
    void openPath(const QString& path);
    // File > Open built-in model…: a preset with its shape, the global batch, sequence length and
    // nodes; Open loads it (returned for tests; deletes itself when closed).
    QDialog* openBuiltinDialog();
    // File > Compare with a saved plan…: the current plan and the plan file side by side (an error
    // dialog without a plan or for a file that is not one); returned for tests.
    QDialog* compareWithPlan(const QString& path);
    void openProject(const QString& path);
    void saveProject(const QString& path);
    // Finds ops by name or scope; selects the next match after the current one.
    int findNext(const QString& text);

    // Loads `model`, analyses, searches and renders, then writes the window as a PNG. Returns the
    // process exit code (0 on success).
    // `estimate`: a configuration to price in the search panel before the shot (empty: none);
    // `nodes`: the cluster's nodes. Fails (1) when the model, project or search fails.
    static int screenshot(const QString& path, const std::string& model, QSize size = QSize(1280, 800), const QString& estimate = {},
                          int nodes = 1);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
public:
    // View > Reset layout: the docks as the window first laid them out, all shown.
    void resetLayout();
    // The side docks' widths for the window's width (first show, layout reset, screenshots).
    void fitDocksToWidth();
    QWidget* showDocumentation();  // Help > Documentation: links to README.md and docs/
    // Help > Glossary: the strategy labels in the terms engineers use (non-modal; the last one shown).
    QWidget* showGlossary();
    static QString glossaryText();
    // A non-modal error dialog (the last one: lastErrorDialog()); closed when the next analysis or
    // search starts.
    void showError(const QString& title, const QString& message);

private:
    void buildActions();
    void onAnalysis();
    void onPlan();
    void onSelection(const Selection& selection);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void openModelDialog();
    void openSource(const QString& path, bool searchAfter);
    int segmentOf(const Selection& selection) const;

    Explorer* m_explorer = nullptr;
    GraphView* m_graph = nullptr;
    StructureModel* m_structure = nullptr;
    QTreeView* m_tree = nullptr;
    QTextBrowser* m_properties = nullptr;
    PlanPanel* m_planPanel = nullptr;
    SearchPanel* m_searchPanel = nullptr;
    ClusterPanel* m_clusterPanel = nullptr;
    ProfilerPanel* m_profilerPanel = nullptr;
    SegmentCostChart* m_segmentChart = nullptr;
    CombinationChart* m_combinationChart = nullptr;
    BaselineChart* m_baselineChart = nullptr;
    MemoryChart* m_memoryChart = nullptr;
    PipelineChart* m_pipelineChart = nullptr;
    QTabWidget* m_chartTabs = nullptr;
    QComboBox* m_overlay = nullptr;
    QLineEdit* m_find = nullptr;
    QByteArray m_defaultLayout;
    QDockWidget* m_treeDock = nullptr;
    QDockWidget* m_propertiesDock = nullptr;
    bool m_layoutRestored = false;  // the docks as the last session left them
    bool m_shownOnce = false;
    bool m_rememberLayout = false;
    QMenu* m_recentMenu = nullptr;
    QPointer<QMessageBox> m_lastError;
    bool m_unsaved = false;
    bool m_confirmClose = false;
    int m_alternativesSegment = -1;
};

}  // namespace cfp::explorer
