#include "main_window.h"

#include "models/models.h"
#include "plan/plan_json.h"

#include <QAction>
#include <QApplication>
#include <QGuiApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QSpinBox>
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
#include <QScreen>
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
#include <QUrl>
#include <QVBoxLayout>

#include <cstdio>

#include "charts.h"
#include "compare_dialog.h"
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

    // A plot's own minimum is its legend and axes laid out in one row (500–560 px); the charts
    // must leave the graph and the docks room on a 1280-px screen, so they may be narrower (an
    // explicit minimum overrides the hint).
    m_chartTabs->setMinimumWidth(360);
    m_baselineChart->setMinimumWidth(360);
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
    m_treeDock = treeDock;
    m_propertiesDock = propDock;
    resizeDocks({treeDock, propDock}, {390, 330}, Qt::Horizontal);

    buildActions();
    m_defaultLayout = saveState();
    m_rememberLayout = options.rememberLayout;
    m_confirmClose = options.confirmClose;
    if (m_rememberLayout) {
        QSettings s;
        if (!restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray())) resize(1600, 1000);  // else as last time
        m_layoutRestored = restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    }
    // Never larger than the screen it opens on (a first run on a laptop, a layout saved on a
    // larger monitor).
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
        const QSize room = screen->availableSize();
        if (width() > room.width() || height() > room.height())
            resize(std::min(width(), room.width()), std::min(height(), room.height()));
    }

    // Wiring.
    connect(m_explorer, &Explorer::analysisChanged, this, &MainWindow::onAnalysis);
    connect(m_explorer, &Explorer::planChanged, this, &MainWindow::onPlan);
    connect(m_explorer, &Explorer::estimated, this, [this] {
        m_memoryChart->setPlan(m_explorer->plan(), m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
        m_pipelineChart->setPlans(m_explorer->plan(), m_explorer->lastEstimate(), m_explorer->lastEstimateConfig());
    });
    connect(m_explorer, &Explorer::planCleared, this, &MainWindow::onPlan);
    // A search's plan and the pins are work a person would not want to lose unasked.
    connect(m_explorer, &Explorer::planChanged, this, [this] { m_unsaved = true; });
    connect(m_explorer, &Explorer::pinsChanged, this, [this] { m_unsaved = true; });
    connect(m_explorer, &Explorer::selectionChanged, this, &MainWindow::onSelection);
    connect(m_explorer, &Explorer::failed, this, &MainWindow::showError);
    // Only a model that loaded enters Open recent (built-ins too); undo does not reach across models.
    connect(m_explorer, &Explorer::modelOpened, this, [this](const QString& source) { addRecent(source); });
    connect(m_explorer, &Explorer::modelChanged, this, [this] { m_planPanel->undoStack()->clear(); });
    // A project enters Open recent, and the panels show its settings, once it has opened.
    connect(m_explorer, &Explorer::projectOpened, this, [this](const QString& path) {
        addRecent(path);
        m_clusterPanel->refresh();
        m_profilerPanel->refresh();
        m_planPanel->undoStack()->clear();
        m_unsaved = false;  // the session is the file (opening it emitted planChanged and pinsChanged)
    });
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
    // A point of the combinations scatter pins its segment, undoably, as the table's editor does.
    connect(m_combinationChart, &CombinationChart::pinRequested, m_planPanel, &PlanPanel::pin);
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
        if (kind != JobKind::Analysis && kind != JobKind::Search) return;
        statusBar()->showMessage(title + QStringLiteral("…"));
        // An error about the last attempt does not stay over the next one.
        if (m_lastError) m_lastError->close();
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
    file->addAction(tr("Open b&uilt-in model…"), this, [this] { openBuiltinDialog(); });
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
    file->addAction(tr("&Compare with a saved plan…"), this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Compare with a saved plan"), {}, tr("Plan (*.json)"));
        if (!f.isEmpty()) compareWithPlan(f);
    });
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
    help->addAction(tr("&Documentation"), this, [this] { showDocumentation(); });

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

QDialog* MainWindow::compareWithPlan(const QString& path) {
    auto plan = m_explorer->plan();
    if (!plan) {
        showError(tr("Cannot compare"), tr("No plan yet: search first, then compare it with a saved one."));
        return nullptr;
    }
    auto saved = readPlanFile(path.toStdString());
    if (!saved) {
        showError(tr("Cannot read the plan"), qs(saved.error().toString()));
        return nullptr;
    }
    auto* d = new CompareDialog(plan->plan(), *saved, plan->model->graph(), QFileInfo(path).fileName(), this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    d->show();
    return d;
}

QDialog* MainWindow::openBuiltinDialog() {
    auto* d = new QDialog(this);
    d->setObjectName(QStringLiteral("builtinDialog"));
    d->setWindowTitle(tr("Open built-in model"));
    d->setAttribute(Qt::WA_DeleteOnClose);
    auto* form = new QFormLayout(d);
    auto* preset = new QComboBox(d);
    preset->setObjectName(QStringLiteral("presetCombo"));
    auto* about = new QLabel(d);
    about->setWordWrap(true);
    about->setStyleSheet(QStringLiteral("color: #555;"));
    for (const std::string& name : presetNames()) {
        auto c = presetConfig(name);
        if (!c) continue;
        QString text = tr("%1 layers, hidden %2, %3 heads (%4 KV), FFN %5, vocabulary %6, context %7")
                           .arg(c->numLayers).arg(c->hiddenSize).arg(c->numHeads).arg(c->numKvHeads).arg(c->ffnSize)
                           .arg(c->vocabSize).arg(c->maxPositions);
        if (c->numExperts > 0) text += tr(", %1 experts (top %2)").arg(c->numExperts).arg(c->topK);
        preset->addItem(qs(name), text);
    }
    const QString current = qs(m_explorer->request().model.source);
    if (const int at = preset->findText(current.mid(current.indexOf(QLatin1Char(':')) + 1)); current.startsWith(QLatin1String("builtin:")) && at >= 0)
        preset->setCurrentIndex(at);
    auto* batch = new QSpinBox(d);
    batch->setObjectName(QStringLiteral("batchSpin"));
    batch->setRange(1, 1 << 20);
    batch->setValue(static_cast<int>(m_explorer->request().model.build.batch));
    batch->setToolTip(tr("Sequences per optimizer step (the global batch)"));
    auto* seq = new QSpinBox(d);
    seq->setObjectName(QStringLiteral("seqSpin"));
    seq->setRange(0, 1 << 20);
    seq->setSpecialValueText(tr("the model's context, at most 2048"));
    seq->setValue(static_cast<int>(m_explorer->request().model.build.seq));
    auto* nodes = new QSpinBox(d);
    nodes->setObjectName(QStringLiteral("nodesSpin"));
    nodes->setRange(1, 4096);
    nodes->setValue(static_cast<int>(m_explorer->request().nodes));
    auto showAbout = [preset, about, seq] {
        about->setText(preset->currentData().toString());
        if (auto c = presetConfig(preset->currentText().toStdString())) seq->setMaximum(static_cast<int>(c->maxPositions));
    };
    connect(preset, &QComboBox::currentIndexChanged, d, showAbout);
    showAbout();
    form->addRow(tr("Model"), preset);
    form->addRow(QString(), about);
    form->addRow(tr("Global batch"), batch);
    form->addRow(tr("Sequence length"), seq);
    form->addRow(tr("Nodes"), nodes);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, d);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::reject);
    connect(buttons, &QDialogButtonBox::accepted, d, [this, d, preset, batch, seq, nodes] {
        BuildOptions build = m_explorer->request().model.build;
        build.batch = batch->value();
        build.seq = seq->value();
        m_explorer->setBuildOptions(build);
        ClusterSettings cluster = m_explorer->cluster();
        if (cluster.nodes != nodes->value() && !cluster.mesh.isAuto()) cluster.mesh = MeshChoice::automatic();  // a fixed mesh counts the old devices
        cluster.nodes = nodes->value();
        m_explorer->setCluster(cluster);
        m_clusterPanel->refresh();
        d->accept();
        openPath(QStringLiteral("builtin:") + preset->currentText());
    });
    d->open();
    return d;
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
    // The rest when it has opened (Explorer::projectOpened): its model may still fail to load.
}

void MainWindow::saveProject(const QString& path) {
    if (auto st = m_explorer->saveProject(path); !st) {
        showError(tr("Cannot save the project"), qs(st.error().toString()));
        return;
    }
    addRecent(path);
    m_unsaved = false;
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
    fitDocksToWidth();
}

void MainWindow::fitDocksToWidth() {
    // The side docks take a share of the window that leaves the graph and the charts room on a
    // 1280-px screen and no more than they need on a wide one.
    const int w = width();
    resizeDocks({m_treeDock, m_propertiesDock}, {std::clamp(w * 2 / 9, 280, 390), std::clamp(w / 6, 210, 330)}, Qt::Horizontal);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    // After the window's first layout at its size (the docks cannot be sized before it).
    if (!m_shownOnce && !m_layoutRestored) QTimer::singleShot(0, this, &MainWindow::fitDocksToWidth);
    m_shownOnce = true;
}

QString MainWindow::glossaryText() {
    // The strategy labels from the one glossary the tables' tooltips use (models.h).
    return strategyGlossaryHtml() +
           tr("<p><b>ZeRO</b> 1: optimizer state sharded over the data-parallel devices; 2: gradients too; 3: weights too "
              "(gathered per layer; FSDP). <b>Recomputation</b>: selective = the attention core (what flash attention "
              "does), full = each layer from its input. <b>Micro-batch × rounds</b>: sequences per data-parallel rank per "
              "forward/backward, and the gradient-accumulation steps. A mesh axis is <i>intra</i> (NVLink within a node) "
              "or <i>inter</i> (the network between nodes).</p>");
}

QWidget* MainWindow::showDocumentation() {
    // The documents, each a link that opens it (from the source tree this explorer was built from).
    const std::pair<const char*, QString> docs[] = {
        {"README.md", tr("set-up and commands")},
        {"docs/explorer.md", tr("this window, its panels and the project file")},
        {"docs/planning.md", tr("the cost model, the search and the step simulator")},
        {"docs/exporters.md", tr("every export format and how to run it")},
        {"docs/importers.md", tr("HLO, StableHLO and ONNX import")},
        {"docs/profiler.md", tr("profiling on GPUs, the profile DB")},
        {"docs/plan-format.md", tr("the plan file")},
        {"docs/hardware-format.md", tr("hardware specs")},
        {"docs/BENCHMARKS.md", tr("measured numbers")},
    };
    const QDir root(QStringLiteral(CFP_SOURCE_DIR));
    QString html = tr("<p>The documentation (Markdown, in the source tree):</p><ul>");
    for (const auto& [file, what] : docs) {
        const QString path = root.filePath(QString::fromLatin1(file));
        html += QFileInfo::exists(path) ? QStringLiteral("<li><a href=\"%1\">%2</a> — %3</li>")
                                              .arg(QUrl::fromLocalFile(path).toString(), QString::fromLatin1(file), what)
                                        : QStringLiteral("<li>%1 — %2</li>").arg(QString::fromLatin1(file), what);
    }
    html += QStringLiteral("</ul>");
    auto* box = new QMessageBox(QMessageBox::Information, tr("Documentation"), html, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("documentationDialog"));
    box->setTextFormat(Qt::RichText);
    box->setTextInteractionFlags(Qt::TextBrowserInteraction);  // links open in the desktop's viewer
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
    return box;
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
    if (m_confirmClose && m_unsaved) {
        QMessageBox ask(QMessageBox::Warning, tr("Unsaved plan"),
                        tr("The plan and pins of this session are not saved in a project. Save them before closing?"),
                        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
        ask.setObjectName(QStringLiteral("unsavedDialog"));
        ask.setDefaultButton(QMessageBox::Save);
        const int answer = ask.exec();
        if (answer == QMessageBox::Cancel) {
            event->ignore();
            return;
        }
        if (answer == QMessageBox::Save) {
            const QString f =
                QFileDialog::getSaveFileName(this, tr("Save project"), QStringLiteral("project.cfpx.json"), tr("CFP Explorer project (*.json)"));
            if (f.isEmpty() || (saveProject(f), m_unsaved)) {
                event->ignore();  // not saved (dialog cancelled or the write failed): stay open
                return;
            }
        }
    }
    if (m_rememberLayout) {
        QSettings s;
        s.setValue(QStringLiteral("window/geometry"), saveGeometry());
        s.setValue(QStringLiteral("window/state"), saveState());
    }
    m_explorer->jobs().cancelAll();
    QMainWindow::closeEvent(event);
}

int MainWindow::screenshot(const QString& path, const std::string& model, QSize size, const QString& estimate, int nodes) {
    WindowOptions options;
    options.model = model;
    options.searchOnOpen = true;
    options.cluster.nodes = nodes;
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
    // Analysis, then search, then the combinations of the layer segment; any error dialog (a
    // project that cannot be read, too) ends it.
    while (timer.elapsed() < timeoutMs && failure.isEmpty() && !(w.explorer()->plan() && w.explorer()->jobs().isIdle())) {
        if (w.m_lastError) failure = w.m_lastError->windowTitle() + QStringLiteral(": ") + w.m_lastError->text();
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
    w.fitDocksToWidth();
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
