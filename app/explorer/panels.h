#pragma once
// The explorer's side panels: cluster and model settings, search (progress, best so far, cancel),
// the plan table with overrides and undo/redo, the profiler, and the export dialog.

#include <QDialog>
#include <QUndoCommand>
#include <QWidget>

#include <memory>

#include "controller.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTreeView;
class QTreeWidget;

namespace cfp::profiler {
struct ProfileReport;
}
class QUndoStack;

namespace cfp::explorer {

class BestSoFarChart;
class PlanModel;

class ClusterPanel : public QWidget {
    Q_OBJECT
public:
    explicit ClusterPanel(Explorer* explorer, QWidget* parent = nullptr);
    // Shows the explorer's current settings (over any edits not applied yet).
    void refresh();
    // Settings edited in the panel and not applied yet (a model opened meanwhile keeps them).
    bool hasUnappliedEdits() const { return m_edited; }
    // Sends the panel's settings to the explorer and re-analyses.
    void apply();

    QComboBox* hardwareBox() const { return m_hardware; }
    QSpinBox* nodesBox() const { return m_nodes; }
    QComboBox* meshBox() const { return m_mesh; }
    QDoubleSpinBox* memoryBox() const { return m_memory; }
    QSpinBox* batchBox() const { return m_batch; }
    QSpinBox* accumulationBox() const { return m_accumulation; }
    QDoubleSpinBox* reserveBox() const { return m_reserve; }
    QSpinBox* seqBox() const { return m_seq; }
    QComboBox* recomputeBox() const { return m_recompute; }
    QComboBox* zeroBox() const { return m_zero; }
    QComboBox* overlapBox() const { return m_overlap; }
    QComboBox* crossEntropyBox() const { return m_crossEntropy; }
    QComboBox* fusionBox() const { return m_fusion; }
    QCheckBox* sequenceParallelBox() const { return m_sequenceParallel; }
    QSpinBox* bucketBox() const { return m_bucket; }
    QSpinBox* stagesBox() const { return m_stages; }
    QSpinBox* chunksBox() const { return m_chunks; }
    QLineEdit* splitEdit() const { return m_split; }
    QComboBox* scheduleBox() const { return m_schedule; }
    QLineEdit* scheduleCsvEdit() const { return m_scheduleCsv; }
    QDoubleSpinBox* optimiserSecondsBox() const { return m_optimiserSeconds; }

signals:
    void openModelRequested();

private:
    void updateMeshChoices();
    // A model opened or analysed: its source shown; the other settings too unless edited.
    void followModel();
    Explorer* m_explorer;
    bool m_edited = false;
    bool m_refreshing = false;
    QLabel* m_editedNote = nullptr;
    QLabel* m_model = nullptr;
    QComboBox* m_hardware = nullptr;
    QSpinBox* m_nodes = nullptr;
    QComboBox* m_mesh = nullptr;
    QDoubleSpinBox* m_memory = nullptr;
    QDoubleSpinBox* m_reserve = nullptr;
    QSpinBox* m_accumulation = nullptr;
    QSpinBox* m_batch = nullptr;
    QSpinBox* m_seq = nullptr;
    QComboBox* m_dtype = nullptr;
    QComboBox* m_qkv = nullptr;
    QComboBox* m_recompute = nullptr;
    QComboBox* m_attention = nullptr;
    QComboBox* m_crossEntropy = nullptr;
    QComboBox* m_fusion = nullptr;
    QComboBox* m_zero = nullptr;
    QComboBox* m_overlap = nullptr;
    QCheckBox* m_sequenceParallel = nullptr;
    QSpinBox* m_bucket = nullptr;
    QSpinBox* m_stages = nullptr;
    QSpinBox* m_chunks = nullptr;
    QLineEdit* m_split = nullptr;  // layers per chunk, "9,3" (empty: searched)
    QComboBox* m_schedule = nullptr;
    QLineEdit* m_scheduleCsv = nullptr;  // the custom schedule's CSV file (cfp plan --schedule-csv)
    QDoubleSpinBox* m_optimiserSeconds = nullptr;  // mip: the schedule optimiser's time limit
    QLabel* m_hardwareInfo = nullptr;
};

class SearchPanel : public QWidget {
    Q_OBJECT
public:
    explicit SearchPanel(Explorer* explorer, QWidget* parent = nullptr);
    QProgressBar* progressBar() const { return m_progress; }
    QLabel* resultLabel() const { return m_result; }
    QPushButton* searchButton() const { return m_search; }
    QPushButton* cancelButton() const { return m_cancel; }
    BestSoFarChart* chart() const { return m_chart; }
    QLineEdit* configEdit() const { return m_config; }
    QPushButton* estimateButton() const { return m_estimate; }
    QLabel* estimateLabel() const { return m_estimateResult; }

private:
    void showPlan();
    void showEstimate();
    Explorer* m_explorer;
    QPushButton* m_search = nullptr;
    QPushButton* m_cancel = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_stage = nullptr;
    QLabel* m_result = nullptr;
    BestSoFarChart* m_chart = nullptr;
    QLineEdit* m_config = nullptr;       // a configuration the user runs, to price
    QPushButton* m_estimate = nullptr;
    QLabel* m_estimateResult = nullptr;
};

// An undoable change of the pin list.
class PinsCommand : public QUndoCommand {
public:
    PinsCommand(Explorer* explorer, std::vector<Pin> before, std::vector<Pin> after, const QString& text);
    void undo() override;
    void redo() override;

private:
    Explorer* m_explorer;
    std::vector<Pin> m_before, m_after;
};

class PlanPanel : public QWidget {
    Q_OBJECT
public:
    explicit PlanPanel(Explorer* explorer, QWidget* parent = nullptr);
    PlanModel* model() const { return m_model; }
    QTreeView* view() const { return m_view; }
    QUndoStack* undoStack() const { return m_undo; }
    QPushButton* researchButton() const { return m_research; }

    // Pins `target` ("3" or "T1") to `combination` (undoable).
    void pin(const QString& target, const QList<int>& combination);
    void unpin(const QString& target);

signals:
    void exportRequested();
    void savePlanRequested();

private:
    void refresh();
    void updateSummary();  // the summary line: also when only the pins change (out of date)
    Explorer* m_explorer;
    PlanModel* m_model = nullptr;
    QTreeView* m_view = nullptr;
    QUndoStack* m_undo = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_pins = nullptr;
    QPushButton* m_research = nullptr;
};

// Devices, and profiling of the current model's segment types through the profiler's session
// (profiler/session.h) on the dedicated profiler thread: progress with time remaining, each
// combination's measurement as it arrives, cancel. Measurements go to the profile DB, which the
// search then reads (the project's profile DB). Simulated runs go to a DB of their own beside it
// (profiler::simulatedDbPath) and never switch the search to their numbers.
class ProfilerPanel : public QWidget {
    Q_OBJECT
public:
    explicit ProfilerPanel(Explorer* explorer, QWidget* parent = nullptr);
    ~ProfilerPanel() override;
    void discover();  // lists devices on the profiler thread
    void start();     // profiles every segment type of the current model
    // Measures each kernel of the current model's step on one GPU against the cost model
    // (profiler/kernel_suite.h, as `cfp profile --kernels`); nothing is stored.
    void startKernels();
    void cancel();
    bool isRunning() const;
    void refresh();   // the project's profile DB
    QTreeWidget* devices() const { return m_devices; }
    QTreeWidget* measurements() const { return m_measurements; }
    QLineEdit* dbEdit() const { return m_db; }
    QLineEdit* typesEdit() const { return m_types; }
    QCheckBox* simulateBox() const { return m_simulate; }
    QPushButton* startButton() const { return m_start; }
    QPushButton* kernelsButton() const { return m_kernels; }
    QPushButton* cancelButton() const { return m_cancel; }
    QProgressBar* progressBar() const { return m_progress; }
    QString statusText() const;
    QString progressText() const;
    // The DB the next run writes: the DB field's, or its simulated sibling when "simulate" is on.
    QString runDbPath() const;
    // The profile DB proposed at first: DATA/profile.db, DATA being the generic data location
    // followed by the application name (one level, whatever the organization name).
    static QString defaultDbPath();

signals:
    void profilingFinished(bool ok);

private:
    struct CancelBridge;
    Explorer* m_explorer;
    std::shared_ptr<CancelBridge> m_bridge;
    QLabel* m_backend = nullptr;
    QLabel* m_status = nullptr;
    QTreeWidget* m_devices = nullptr;
    QLineEdit* m_db = nullptr;
    QLineEdit* m_types = nullptr;
    QCheckBox* m_simulate = nullptr;
    QCheckBox* m_useInSearch = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_kernels = nullptr;
    QPushButton* m_cancel = nullptr;
    void run(bool kernels);
    void showKernels(const profiler::ProfileReport& report);
    QProgressBar* m_progress = nullptr;
    QLabel* m_progressText = nullptr;
    QTreeWidget* m_measurements = nullptr;
};

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(Explorer* explorer, QWidget* parent = nullptr);
    QComboBox* formatBox() const { return m_format; }
    QComboBox* namesBox() const { return m_names; }
    QCheckBox* everyDeviceBox() const { return m_everyDevice; }
    QLineEdit* pathEdit() const { return m_path; }
    // Starts the export with the dialog's choices (the dialog closes when it is written).
    void start();

private:
    Explorer* m_explorer;
    QComboBox* m_format = nullptr;
    QComboBox* m_names = nullptr;
    QCheckBox* m_everyDevice = nullptr;
    QLineEdit* m_path = nullptr;
    QLabel* m_info = nullptr;
};

}  // namespace cfp::explorer
