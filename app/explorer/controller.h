#pragma once
// The explorer's controller: turns what the user asks for into jobs (job_runner.h) over the
// planning workflow (core/workflow) and hands the results to the views as snapshots
// (snapshots.h). It holds the current request — what a project file saves — and the latest
// model, analysis and plan.

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "job_runner.h"
#include "snapshots.h"
#include "view_format.h"
#include "workflow/workflow.h"

namespace cfp::explorer {

// What the cluster panel sets.
struct ClusterSettings {
    std::string hardware = "h100-sxm";        // built-in id or a JSON file
    int64_t nodes = 1;
    MeshChoice mesh;                          // auto or one mesh
    std::optional<int64_t> memoryLimitBytes;  // nullopt: the GPU's usable memory
    std::optional<int64_t> memoryReserveBytes;  // nullopt: the hardware spec's reserve
    std::optional<int64_t> accumulation;      // gradient-accumulation rounds; nullopt: chosen by the search
    MemoryPolicy policy;                      // optimizer-state sharding, activation recomputation
    PipelineSettings pipeline;                // pipeline stages (stages > 1): the mesh is one stage's
    bool searchSequenceParallel = true;       // the search also tries sequence parallelism (PlanRequest)
    bool searchZero = true;                   // and ZeRO-2/3 where memory shapes the plan (PlanRequest)
};

class Explorer : public QObject {
    Q_OBJECT
public:
    explicit Explorer(QObject* parent = nullptr);
    ~Explorer() override;

    JobRunner& jobs() { return m_jobs; }
    // What a search runs with and a project file saves.
    const PlanRequest& request() const { return m_request; }
    ClusterSettings cluster() const;
    std::shared_ptr<const ModelData> model() const { return m_model; }
    std::shared_ptr<const AnalysisData> analysis() const { return m_analysis; }
    std::shared_ptr<const PlanData> plan() const { return m_plan; }
    std::shared_ptr<const PlanData> previousPlan() const { return m_previousPlan; }
    const Selection& selection() const { return m_selection; }
    const std::vector<Pin>& pins() const { return m_request.pins; }
    // (elapsed s, best s) at each improvement, and the last best again at the search's time so far
    // (the curve runs on to now, not to the last improvement).
    std::vector<std::pair<double, double>> bestSoFar() const {
        auto points = m_bestSoFar;
        if (!points.empty() && m_searchSeconds > points.back().first) points.emplace_back(m_searchSeconds, points.back().second);
        return points;
    }

    // Loads `source` (builtin:NAME, config.json, graph file, …) and analyses it; with
    // `searchAfter` the search follows as soon as the analysis is in.
    void openModel(const std::string& source, bool searchAfter = false);
    void setBuildOptions(const BuildOptions& options);
    void setCluster(const ClusterSettings& cluster);
    void setPins(const std::vector<Pin>& pins);
    void setProfileDb(const std::string& path);
    // Re-analyses the current model (cluster changed).
    void analyse();
    void search();
    void cancelSearch();
    void requestAlternatives(int32_t segment);
    // Prices a configuration the user runs (plan/run_config.h: "tp=8,dp=16,zero=1,mbs=1") on the
    // current model, cluster and memory settings, as `cfp estimate` does (runEstimate), off the
    // GUI thread; estimated() when done, failed() on a bad configuration.
    void estimate(const QString& configText);
    std::shared_ptr<const PlanRun> lastEstimate() const { return m_estimate; }
    QString lastEstimateConfig() const { return m_estimateConfig; }
    void exportPlan(ExportFormat format, const QString& path, const ExportOptions& options = {});
    // What the last export said about the file it wrote (cfp export's "note:" lines).
    const QStringList& lastExportNotes() const { return m_lastExportNotes; }
    void savePlan(const QString& path);
    // Writes the request and, when there is a plan, the plan with the request it answers (what its
    // search ran with), atomically (core/workflow/request.h, projectToJson).
    Status saveProject(const QString& path);
    // Reads the project at once (a malformed file is an error here and changes nothing), then opens
    // it as a job: its model loads (the current one is kept when the project names the same), and
    // its saved plan comes back without a search (restorePlan) when it answers the project's request
    // — or differs from it only in the pins, when the plan panel marks it out of date, as in the
    // session that saved it; otherwise the model is analysed and, with `searchAfter`, searched. The
    // project's request replaces the session's only once that job succeeded: a project whose model
    // fails to load leaves the model, request, pins and plan as they were (failed() says why).
    // projectOpened() then, and status() says whether the plan was restored.
    Status loadProject(const QString& path, bool searchAfter = true);
    void select(const Selection& selection);

signals:
    void modelChanged();
    void analysisChanged();
    void planChanged();
    void planCleared();
    void pinsChanged();
    void selectionChanged(const cfp::explorer::Selection& selection);
    void alternativesReady(std::shared_ptr<const cfp::explorer::AlternativesView> alternatives);
    void searchProgress(double fraction, const QString& text);
    void estimated();  // lastEstimate() changed (null: cleared)
    void bestSoFarChanged();
    void exported(const QString& path);
    // openModel's model loaded and analysed: the request now names it (a failed open changes nothing).
    void modelOpened(const QString& source);
    // loadProject's project opened: the request is the project's from now on (a failed open changes
    // nothing and says so with failed()).
    void projectOpened(const QString& path);
    // A failed request (load, analysis, search, export): title for a dialog, text with the reason.
    void failed(const QString& title, const QString& message);
    void status(const QString& message);

private:
    // Loads (when needed) and analyses the request's model, or `opening` (openModel), which the
    // request takes, with its pins cleared, only once it has loaded.
    void startAnalysis(bool searchAfter, std::optional<ModelRequest> opening = std::nullopt);
    // Renders the current plan off the GUI thread and writes it atomically to `path`, with the
    // files it refers to (ExportFile, written first) when `render` returns more than one.
    // `notes`, filled by `render` on the worker, are shown with the status once the file is written.
    void writeFromPlan(const QString& path, const QString& title, const QString& failTitle,
                       std::function<Result<std::vector<ExportFile>>(const PlanData&, const std::string& path)> render,
                       std::shared_ptr<const std::vector<std::string>> notes = {});
    QStringList m_lastExportNotes;

    JobRunner m_jobs;
    PlanRequest m_request;
    std::shared_ptr<const ModelData> m_model;
    std::shared_ptr<const AnalysisData> m_analysis;
    std::shared_ptr<const PlanData> m_plan, m_previousPlan;
    std::shared_ptr<const PlanRun> m_estimate;
    QString m_estimateConfig;
    Selection m_selection;
    std::vector<std::pair<double, double>> m_bestSoFar;
    double m_searchSeconds = 0;  // the current (or last) search's elapsed time
    double m_searchFraction = 0; // its progress so far (the bar never goes back)
    QElapsedTimer m_searchClock;
    bool m_searchAfterAnalysis = false;  // Search was pressed while the model was loading
};

}  // namespace cfp::explorer
