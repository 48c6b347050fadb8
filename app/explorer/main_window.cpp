#include "main_window.h"

#include "models/models.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

#include <cstdio>

#include "charts.h"
#include "graph_view.h"
#include "models.h"
#include "panels.h"

// Resources of a static library are registered by hand (outside any namespace).
static void initExplorerResources() { Q_INIT_RESOURCE(explorer); }

namespace cfp::explorer {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
constexpr int kMaxRecent = 8;
const char* kRecentKey = "recentFiles";

// A JSON file whose "format" is a plan request (a project), or an explorer project of the format
// before requests (read only the start of the file).
bool looksLikeProject(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return false;
    const QByteArray head = f.read(4096);
    return head.contains("\"cfp-plan-request\"") || head.contains("\"cfp-explorer-project\"");
}

}  // namespace

MainWindow::MainWindow(const WindowOptions& options, QWidget* parent) : QMainWindow(parent) {
    initExplorerResources();
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(tr("CFP Explorer"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/cfp-explorer.svg")));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    m_explorer = new Explorer(this);

    // Centre: graph | charts above, plan table below.
    auto* graphBox = new QWidget(this);
    auto* graphLayout = new QVBoxLayout(graphBox);
    graphLayout->setContentsMargins(0, 0, 0, 0);
    graphLayout->setSpacing(2);
    auto* graphBar = new QHBoxLayout;
    m_overlay = new QComboBox(graphBox);
    m_overlay->setObjectName(QStringLiteral("overlayBox"));
    m_overlay->addItems({tr("Colour by block"), tr("Heat: time"), tr("Heat: communication"), tr("Heat: memory")});
    auto* fit = new QToolButton(graphBox);
    fit->setText(tr("Fit"));
    auto* zoomIn = new QToolButton(graphBox);
    zoomIn->setText(QStringLiteral("+"));
    auto* zoomOut = new QToolButton(graphBox);
    zoomOut->setText(QStringLiteral("−"));
    auto* collapse = new QToolButton(graphBox);
    collapse->setText(tr("Fold all"));
    auto* legend = new QLabel(graphBox);
    legend->setStyleSheet(QStringLiteral("color: #555;"));
    legend->setWordWrap(true);
    graphBar->addWidget(m_overlay);
    graphBar->addWidget(fit);
    graphBar->addWidget(zoomIn);
    graphBar->addWidget(zoomOut);
    graphBar->addWidget(collapse);
    graphBar->addStretch(1);
    graphLayout->addLayout(graphBar);
    m_graph = new GraphView(graphBox);
    m_graph->setToolTip(tr("Double-click a segment or block to expand it; drag to pan, wheel to zoom"));
    graphLayout->addWidget(m_graph, 1);
    graphLayout->addWidget(legend);
    connect(m_overlay, &QComboBox::currentIndexChanged, this, [this](int i) { m_graph->setOverlay(static_cast<GraphView::Overlay>(i)); });
    connect(fit, &QToolButton::clicked, m_graph, &GraphView::fitAll);
    connect(zoomIn, &QToolButton::clicked, m_graph, &GraphView::zoomIn);
    connect(zoomOut, &QToolButton::clicked, m_graph, &GraphView::zoomOut);
    connect(collapse, &QToolButton::clicked, m_graph, &GraphView::collapseAll);
    connect(m_graph, &GraphView::legendChanged, legend, &QLabel::setText);

    // Charts: per-segment costs and one segment's combinations in tabs, the baselines below.
    m_chartTabs = new QTabWidget(this);
    m_chartTabs->setObjectName(QStringLiteral("chartTabs"));
    m_chartTabs->setUsesScrollButtons(true);  // the tab labels do not set the window's width
    m_segmentChart = new SegmentCostChart(m_chartTabs);
    m_combinationChart = new CombinationChart(m_chartTabs);
    m_chartTabs->addTab(m_segmentChart, tr("Cost per segment"));
    m_chartTabs->addTab(m_combinationChart, tr("Combinations of a segment"));
    m_memoryChart = new MemoryChart(m_chartTabs);
    m_chartTabs->addTab(m_memoryChart, tr("Memory per device"));
    m_pipelineChart = new PipelineChart(m_chartTabs);
    m_chartTabs->addTab(m_pipelineChart, tr("Pipeline"));
    m_baselineChart = new BaselineChart(this);
    auto* charts = new QSplitter(Qt::Vertical, this);
    charts->addWidget(m_chartTabs);
    charts->addWidget(m_baselineChart);
    charts->setStretchFactor(0, 5);
    charts->setStretchFactor(1, 2);

    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(graphBox);
    top->addWidget(charts);
    top->setStretchFactor(0, 4);
    top->setStretchFactor(1, 6);
    m_planPanel = new PlanPanel(m_explorer, this);
    auto* centre = new QSplitter(Qt::Vertical, this);
    centre->addWidget(top);
    centre->addWidget(m_planPanel);
    centre->setStretchFactor(0, 3);
    centre->setStretchFactor(1, 2);
    setCentralWidget(centre);

    // Docks.
    m_structure = new StructureModel(this);
    m_tree = new QTreeView(this);
    m_tree->setObjectName(QStringLiteral("structureTree"));
    m_tree->setModel(m_structure);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(QHeaderView::Interactive);
    m_tree->setColumnWidth(StructureModel::ColName, 170);
    m_tree->setColumnWidth(StructureModel::ColOps, 118);
    m_tree->setColumnWidth(StructureModel::ColStrategy, 100);
    // Form-like panels scroll inside their dock rather than setting the window's minimum width.
    auto dock = [this](QWidget* widget, const QString& title, const char* name, Qt::DockWidgetArea area, bool scroll = false) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(QString::fromLatin1(name));
        if (scroll) {
            auto* area = new QScrollArea(d);
            area->setWidgetResizable(true);
            area->setFrameShape(QFrame::NoFrame);
            area->setWidget(widget);
            d->setWidget(area);
        } else {
            d->setWidget(widget);
        }
        addDockWidget(area, d);
        return d;
    };
    QDockWidget* treeDock = dock(m_tree, tr("Segments, blocks and ops"), "structureDock", Qt::LeftDockWidgetArea);
    m_searchPanel = new SearchPanel(m_explorer, this);
    QDockWidget* searchDock = dock(m_searchPanel, tr("Search"), "searchDock", Qt::LeftDockWidgetArea, true);
    m_clusterPanel = new ClusterPanel(m_explorer, this);
    QDockWidget* clusterDock = dock(m_clusterPanel, tr("Mesh and hardware"), "clusterDock", Qt::LeftDockWidgetArea, true);
    tabifyDockWidget(clusterDock, searchDock);
    searchDock->raise();
    m_properties = new QTextBrowser(this);
    m_properties->setObjectName(QStringLiteral("properties"));
    m_properties->setOpenLinks(false);
    QDockWidget* propDock = dock(m_properties, tr("Properties"), "propertiesDock", Qt::RightDockWidgetArea);
    m_profilerPanel = new ProfilerPanel(m_explorer, this);
    QDockWidget* profDock = dock(m_profilerPanel, tr("Profiler"), "profilerDock", Qt::RightDockWidgetArea, true);
    tabifyDockWidget(propDock, profDock);
    propDock->raise();
    resizeDocks({treeDock, propDock}, {390, 330}, Qt::Horizontal);

    buildActions();
    m_defaultLayout = saveState();
    m_rememberLayout = options.rememberLayout;
    if (m_rememberLayout) {
        QSettings s;
        if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) resize(1600, 1000);  // else as last time
        restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    }

    // Wiring.
    connect(m_explorer, &Explorer::analysisChanged, this, &MainWindow::onAnalysis);
    connect(m_explorer, &Explorer::planChanged, this, &MainWindow::onPlan);
    connect(m_explorer, &Explorer::estimated, this, [this] {
        m_memoryChart->setPlan(m_explorer->plan(), m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
        m_pipelineChart->setPlans(m_explorer->plan(), m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
    });
    connect(m_explorer, &Explorer::planCleared, this, &MainWindow::onPlan);
    connect(m_explorer, &Explorer::selectionChanged, this, &MainWindow::onSelection);
    connect(m_explorer, &Explorer::failed, this, &MainWindow::showError);
    // Only a model that loaded enters Open recent (built-ins too); undo does not reach across models.
    connect(m_explorer, &Explorer::modelOpened, this, [this](const QString& source) { addRecent(source); });
    connect(m_explorer, &Explorer::modelChanged, this, [this] { m_planPanel->undoStack()->clear(); });
    connect(m_explorer, &Explorer::status, this, [this](const QString& s) { statusBar()->showMessage(s); });
    connect(m_explorer, &Explorer::alternativesReady, this, [this](std::shared_ptr<const AlternativesView> alt) {
        m_combinationChart->setAlternatives(m_explorer->plan(), std::move(alt));
    });
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& index) {
        m_explorer->select(m_structure->selectionAt(index));
    });
    connect(m_graph, &GraphView::nodeSelected, m_explorer, &Explorer::select);
    connect(m_segmentChart, &SegmentCostChart::segmentClicked, this, [this](int seg) {
        m_explorer->select({Selection::Kind::Segment, seg});
        m_chartTabs->setCurrentWidget(m_combinationChart);
    });
    connect(m_clusterPanel, &ClusterPanel::openModelRequested, this, &MainWindow::openModelDialog);
    connect(m_planPanel, &PlanPanel::exportRequested, this, [this] {
        auto* d = new ExportDialog(m_explorer, this);
        d->setAttribute(Qt::WA_DeleteOnClose);
        d->open();
    });
    connect(m_planPanel, &PlanPanel::savePlanRequested, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Save plan"), QStringLiteral("plan.json"), tr("Plan (*.json)"));
        if (!f.isEmpty()) m_explorer->savePlan(f);
    });
    connect(&m_explorer->jobs(), &JobRunner::jobStarted, this, [this](JobKind kind, const QString& title) {
        if (kind == JobKind::Analysis || kind == JobKind::Search) statusBar()->showMessage(title + QStringLiteral("…"));
    });

    m_explorer->setBuildOptions(options.build);
    m_explorer->setCluster(options.cluster);
    m_clusterPanel->refresh();
    statusBar()->showMessage(tr("Starting…"));
    const std::string model = options.model;
    const bool search = options.searchOnOpen;
    const bool discover = options.discoverDevices;
    // Start after the window is up: the first frame never waits for the model.
    QTimer::singleShot(0, this, [this, model, search, discover] {
        openSource(qs(model), search);
        if (discover) m_profilerPanel->discover();
    });
}

MainWindow::~MainWindow() { m_explorer->jobs().cancelAll(); }

void MainWindow::buildActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), this, &MainWindow::openModelDialog);
    open->setShortcut(QKeySequence::Open);
    // The built-in models (cfp presets), which no file dialog can reach.
    QMenu* builtins = file->addMenu(tr("Open &built-in model"));
    builtins->setObjectName(QStringLiteral("builtinMenu"));
    for (const std::string& name : presetNames()) {
        const QString source = QStringLiteral("builtin:") + qs(name);
        builtins->addAction(qs(name), this, [this, source] { openPath(source); });
    }
    m_recentMenu = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addAction(tr("Open &project…"), this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Open project"), {}, tr("CFP Explorer project (*.json)"));
        if (!f.isEmpty()) openProject(f);
    });
    QAction* save = file->addAction(tr("&Save project…"), this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Save project"), QStringLiteral("project.cfpx.json"), tr("CFP Explorer project (*.json)"));
        if (!f.isEmpty()) saveProject(f);
    });
    save->setShortcut(QKeySequence::Save);
    file->addSeparator();
    file->addAction(tr("Save &plan…"), m_planPanel, &PlanPanel::savePlanRequested);
    file->addAction(tr("&Export plan…"), m_planPanel, &PlanPanel::exportRequested);
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_planPanel->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_planPanel->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    QAction* find = edit->addAction(tr("&Find op…"), this, [this] {
        m_find->setFocus(Qt::ShortcutFocusReason);
        m_find->selectAll();
    });
    find->setShortcut(QKeySequence::Find);

    QMenu* plan = menuBar()->addMenu(tr("&Plan"));
    QAction* search = plan->addAction(tr("&Search"), m_explorer, &Explorer::search);
    search->setShortcut(Qt::Key_F5);
    plan->addAction(tr("&Cancel search"), m_explorer, &Explorer::cancelSearch);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Fit graph"), m_graph, &GraphView::fitAll);
    view->addAction(tr("Fold &all"), m_graph, &GraphView::collapseAll);
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
    view->addSeparator();
    view->addAction(tr("&Reset layout"), this, &MainWindow::resetLayout);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Glossary"), this, [this] { showGlossary(); });
    help->addAction(tr("&Documentation"), this, [this] {
        auto* box = new QMessageBox(QMessageBox::Information, tr("Documentation"),
                                    tr("The documentation is in the source tree's docs/ folder: README.md (set-up and commands), "
                                       "docs/planning.md (the cost model, the search and the step simulator), docs/exporters.md "
                                       "(every export format and how to run it), docs/importers.md (HLO, StableHLO, ONNX), "
                                       "docs/plan-format.md, docs/hardware-format.md, docs/BENCHMARKS.md (measured numbers)."),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->show();
    });

    QToolBar* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->addAction(open);
    bar->addAction(search);
    bar->addAction(tr("Cancel"), m_explorer, &Explorer::cancelSearch);
    bar->addAction(tr("Export…"), m_planPanel, &PlanPanel::exportRequested);
    bar->addSeparator();
    bar->addWidget(new QLabel(tr(" Find op: "), bar));
    m_find = new QLineEdit(bar);
    m_find->setObjectName(QStringLiteral("findEdit"));
    m_find->setPlaceholderText(tr("name or scope, Enter for next"));
    m_find->setMaximumWidth(280);
    bar->addWidget(m_find);
    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNext(m_find->text()); });
}

QStringList MainWindow::recentFiles() const { return QSettings().value(QLatin1String(kRecentKey)).toStringList(); }

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList list = s.value(QLatin1String(kRecentKey)).toStringList();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecent) list.removeLast();
    s.setValue(QLatin1String(kRecentKey), list);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList list = recentFiles();
    for (const QString& path : list) m_recentMenu->addAction(path, this, [this, path] { openPath(path); });
    m_recentMenu->setEnabled(!list.isEmpty());
}

void MainWindow::openModelDialog() {
    const QString f = QFileDialog::getOpenFileName(
        this, tr("Open model or project"), {},
        tr("Models and projects (*.json *.hlo *.txt *.mlir *.stablehlo *.onnx);;Native graph or config.json (*.json);;XLA HLO text (*.hlo *.txt);;StableHLO (*.mlir *.stablehlo);;ONNX (*.onnx);;All files (*)"));
    if (!f.isEmpty()) openPath(f);
}

void MainWindow::openPath(const QString& path) { openSource(path, false); }

void MainWindow::openSource(const QString& path, bool searchAfter) {
    if (path.startsWith(QLatin1String("builtin:"))) {
        m_explorer->openModel(path.toStdString(), searchAfter);
        return;
    }
    if (!QFileInfo::exists(path)) {
        showError(tr("Cannot open"), tr("%1: no such file").arg(path));
        return;
    }
    // A model enters Open recent once it has loaded (Explorer::modelOpened), a project once read.
    if (path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) && looksLikeProject(path)) {
        openProject(path);
        return;
    }
    m_explorer->openModel(path.toStdString(), searchAfter);
}

void MainWindow::openProject(const QString& path) {
    if (auto st = m_explorer->loadProject(path); !st) {
        showError(tr("Cannot open the project"), qs(st.error().toString()));
        return;
    }
    addRecent(path);
    m_clusterPanel->refresh();
    m_profilerPanel->refresh();
    m_planPanel->undoStack()->clear();
    statusBar()->showMessage(tr("Opened project %1").arg(path));
}

void MainWindow::saveProject(const QString& path) {
    if (auto st = m_explorer->saveProject(path); !st) {
        showError(tr("Cannot save the project"), qs(st.error().toString()));
        return;
    }
    addRecent(path);
    statusBar()->showMessage(tr("Saved project %1").arg(path));
}

int MainWindow::findNext(const QString& text) {
    const std::vector<OpId> matches = m_graph->findOps(text);
    if (matches.empty()) {
        statusBar()->showMessage(tr("No op matches “%1”").arg(text));
        return -1;
    }
    const Selection& cur = m_explorer->selection();
    size_t next = 0;
    if (cur.kind == Selection::Kind::Op) {
        auto it = std::upper_bound(matches.begin(), matches.end(), cur.id);
        next = it == matches.end() ? 0 : static_cast<size_t>(it - matches.begin());
    }
    m_explorer->select({Selection::Kind::Op, matches[next]});
    statusBar()->showMessage(tr("Match %1 of %2 for “%3”").arg(next + 1).arg(matches.size()).arg(text));
    return matches[next];
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Non-blocking: the window stays usable behind the dialog, and tests can find and close it.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::NonModal);
    box->show();
    m_lastError = box;
    statusBar()->showMessage(title + QStringLiteral(": ") + message);
}

int MainWindow::segmentOf(const Selection& sel) const {
    auto a = m_explorer->analysis();
    if (!a) return -1;
    const AnalysisReport& r = *a->report;
    switch (sel.kind) {
    case Selection::Kind::Segment: return sel.id;
    case Selection::Kind::Block:
        return sel.id >= 0 && static_cast<size_t>(sel.id) < a->segmentOfBlock.size() ? a->segmentOfBlock[static_cast<size_t>(sel.id)] : -1;
    case Selection::Kind::Op: {
        if (sel.id < 0 || static_cast<size_t>(sel.id) >= r.blocks.blockOf.size()) return -1;
        const int32_t b = r.blocks.blockOf[static_cast<size_t>(sel.id)];
        return b < 0 ? -1 : a->segmentOfBlock[static_cast<size_t>(b)];
    }
    case Selection::Kind::None: return -1;
    }
    return -1;
}

void MainWindow::onAnalysis() {
    auto a = m_explorer->analysis();
    m_structure->setAnalysis(a);
    m_graph->setAnalysis(a);
    auto plan = m_explorer->plan();
    if (plan) {
        m_structure->setPlan(plan);
        m_graph->setPlan(plan);
    }
    if (a) {
        setWindowTitle(tr("CFP Explorer — %1").arg(qs(a->graph().name())));
        m_properties->setHtml(describeSelection(*a, plan.get(), m_explorer->selection()));
    }
}

void MainWindow::onPlan() {
    auto plan = m_explorer->plan();
    m_structure->setPlan(plan);
    m_graph->setPlan(plan);
    m_segmentChart->setPlan(plan);
    m_baselineChart->setPlan(plan);
    m_memoryChart->setPlan(plan, m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
    m_pipelineChart->setPlans(plan, m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
    auto a = m_explorer->analysis();
    if (a) m_properties->setHtml(describeSelection(*a, plan.get(), m_explorer->selection()));
    if (!plan) {
        m_combinationChart->clear(tr("No plan yet."));
        m_alternativesSegment = -1;
        return;
    }
    int seg = segmentOf(m_explorer->selection());
    if (seg < 0 && !plan->analysis->runs.empty()) {
        // The most repeated segment (a transformer layer) is what a person looks at first.
        const RepeatRun* best = &plan->analysis->runs.front();
        for (const RepeatRun& r : plan->analysis->runs)
            if (r.count > best->count) best = &r;
        seg = best->firstSegment;
    }
    m_alternativesSegment = seg;
    if (seg >= 0) m_explorer->requestAlternatives(seg);
}

void MainWindow::onSelection(const Selection& sel) {
    const QModelIndex index = m_structure->indexFor(sel);
    if (index.isValid() && index != m_tree->currentIndex()) {
        m_tree->setCurrentIndex(index);
        m_tree->scrollTo(index);
    } else if (!index.isValid()) {
        m_tree->clearSelection();
    }
    m_graph->showSelection(sel);
    auto a = m_explorer->analysis();
    if (a) m_properties->setHtml(describeSelection(*a, m_explorer->plan().get(), sel));
    const int seg = segmentOf(sel);
    if (seg >= 0 && seg != m_alternativesSegment && m_explorer->plan()) {
        m_alternativesSegment = seg;
        m_explorer->requestAlternatives(seg);
    }
    if (seg >= 0) {
        const QModelIndex row = m_planPanel->model()->segmentIndex(seg);
        if (row.isValid()) {
            m_planPanel->view()->setCurrentIndex(row);
            m_planPanel->view()->scrollTo(row);
        }
    }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        for (const QUrl& url : event->mimeData()->urls())
            if (url.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
}

void MainWindow::dropEvent(QDropEvent* event) {
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) {
            openPath(url.toLocalFile());
            event->acceptProposedAction();
            return;
        }
}

void MainWindow::resetLayout() {
    restoreState(m_defaultLayout);
    for (QDockWidget* d : findChildren<QDockWidget*>()) d->show();
}

QString MainWindow::glossaryText() {
    return tr("<p><b>Strategy labels</b> name how a ParallelBlock splits over each mesh axis:</p>"
              "<ul>"
              "<li><b>x:rows</b> — the block's leading (batch or sequence) rows split over axis x: <i>data parallel</i> when "
              "they are the batch (each device its share of sequences), <i>sequence parallel</i> when they are the "
              "sequence.</li>"
              "<li><b>x:cols</b> — output columns split over x: <i>tensor parallel, column-parallel</i> (Megatron's "
              "ColumnParallelLinear; DTensor's ColwiseParallel).</li>"
              "<li><b>x:contract</b> — the contracted dimension split over x: <i>tensor parallel, row-parallel</i> (partial "
              "sums all-reduced or reduce-scattered; RowwiseParallel).</li>"
              "<li>Several axes (<b>x:rows;y:cols</b>) compose: e.g. data parallel over x and tensor parallel over y.</li>"
              "</ul>"
              "<p><b>ZeRO</b> 1: optimizer state sharded over the data-parallel devices; 2: gradients too; 3: weights too "
              "(gathered per layer; FSDP). <b>Recomputation</b>: selective = the attention core (what flash attention "
              "does), full = each layer from its input. <b>Micro-batch × rounds</b>: sequences per data-parallel rank per "
              "forward/backward, and the gradient-accumulation steps. A mesh axis is <i>intra</i> (NVLink within a node) "
              "or <i>inter</i> (the network between nodes).</p>");
}

QWidget* MainWindow::showGlossary() {
    auto* box = new QMessageBox(QMessageBox::Information, tr("Glossary"), glossaryText(), QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("glossaryDialog"));
    box->setTextFormat(Qt::RichText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
    return box;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_rememberLayout) {
        QSettings s;
        s.setValue(QStringLiteral("window/geometry"), saveGeometry());
        s.setValue(QStringLiteral("window/state"), saveState());
    }
    m_explorer->jobs().cancelAll();
    QMainWindow::closeEvent(event);
}

int MainWindow::screenshot(const QString& path, const std::string& model, QSize size, const QString& estimate) {
    WindowOptions options;
    options.model = model;
    options.searchOnOpen = true;
    MainWindow w(options);
    w.resize(size);
    w.show();
    QString failure;
    QObject::connect(w.explorer(), &Explorer::failed, &w, [&failure](const QString& title, const QString& message) {
        if (failure.isEmpty()) failure = title + QStringLiteral(": ") + message;
    });
    QElapsedTimer timer;
    timer.start();
    const int timeoutMs = 15 * 60 * 1000;
    // Analysis, then search, then the combinations of the layer segment.
    while (timer.elapsed() < timeoutMs && failure.isEmpty() && !(w.explorer()->plan() && w.explorer()->jobs().isIdle())) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(5);
    }
    if (!w.explorer()->plan()) {
        std::fprintf(stderr, "cfp-explorer: error: no plan for the screenshot: %s\n",
                     qPrintable(failure.isEmpty() ? QStringLiteral("timed out") : failure));
        return 1;
    }
    w.explorer()->jobs().waitForIdle(60000);
    // Show the layer run expanded to its blocks, the combinations chart and the layer selected.
    auto plan = w.explorer()->plan();
    const auto& runs = plan->analysis->runs;
    int layerRun = 0;
    for (size_t i = 0; i < runs.size(); ++i)
        if (runs[i].count > runs[static_cast<size_t>(layerRun)].count) layerRun = static_cast<int>(i);
    w.graphView()->setExpanded({GraphView::NodeKind::Run, layerRun}, true);
    w.explorer()->select({Selection::Kind::Segment, runs[static_cast<size_t>(layerRun)].firstSegment});
    w.explorer()->jobs().waitForIdle(60000);
    w.chartTabs()->setCurrentWidget(w.combinationChart());
    if (!estimate.isEmpty()) {
        w.searchPanel()->configEdit()->setText(estimate);
        w.explorer()->estimate(estimate);
        w.explorer()->jobs().waitForIdle(60000);
        // The configuration beside the plan; its pipeline where it has one.
        const auto priced = w.explorer()->lastEstimate();
        if (priced && priced->outcome.plan.pipeline) w.chartTabs()->setCurrentWidget(w.pipelineChart());
        else w.chartTabs()->setCurrentWidget(w.memoryChart());
        if (!failure.isEmpty()) {
            std::fprintf(stderr, "cfp-explorer: error: %s\n", qPrintable(failure));
            return 1;
        }
    }
    QApplication::processEvents();
    w.graphView()->fitAll();
    QApplication::processEvents();
    const QPixmap pixmap = w.grab();
    if (!pixmap.save(path)) {
        std::fprintf(stderr, "cfp-explorer: error: %s: cannot write the screenshot\n", qPrintable(path));
        return 1;
    }
    std::fprintf(stderr, "cfp-explorer: wrote %s (%dx%d)\n", qPrintable(path), pixmap.width(), pixmap.height());
    // The cluster panel too (it shares its dock area with the search panel): PATH-cluster.png.
    // (The panel sits in a scroll area inside its dock: the nearest dock above it.)
    QDockWidget* clusterDock = nullptr;
    for (QWidget* up = w.clusterPanel()->parentWidget(); up && !clusterDock; up = up->parentWidget()) clusterDock = qobject_cast<QDockWidget*>(up);
    if (auto* dock = clusterDock) {
        dock->raise();
        QApplication::processEvents();
        const QFileInfo info(path);
        const QString clusterPath = info.dir().filePath(info.completeBaseName() + QStringLiteral("-cluster.png"));
        const QPixmap panel = dock->grab();
        if (!panel.save(clusterPath)) {
            std::fprintf(stderr, "cfp-explorer: error: %s: cannot write the screenshot\n", qPrintable(clusterPath));
            return 1;
        }
        std::fprintf(stderr, "cfp-explorer: wrote %s (%dx%d)\n", qPrintable(clusterPath), panel.width(), panel.height());
    }
    return 0;
}

}  // namespace cfp::explorer
