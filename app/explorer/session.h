#pragma once
// The explorer's non-widget layer: immutable snapshots of core results, the one background-job
// mechanism, and the controller (Explorer) that turns user requests into core calls.
//
// Threads (STYLE.md "Threads"): every core call runs as a job of JobRunner, off the GUI thread,
// with a cancel flag and throttled progress. A job returns a Result (errors are values) and its
// continuation runs on the GUI thread. Only the newest job of each kind delivers: starting a job
// cancels the previous one of the same kind and drops its result (hotspot's job-number scheme).
// Profiling jobs run on one dedicated thread (a pool of one thread that never expires), the thread
// that owns the GPU contexts; everything else on a small shared pool.
//
// Snapshots: the GUI thread only ever sees `std::shared_ptr<const …>` results that no one mutates
// again; a newer result replaces the pointer.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "export/export.h"
#include "loader/model_loader.h"
#include "plan/alternatives.h"
#include "plan/planner.h"
#include "stats/graph_stats.h"

namespace cfp::explorer {

// ---------------------------------------------------------------------------------------------
// Background jobs

enum class JobKind { Analysis, Search, Detail, Export, Profile };
QString jobKindName(JobKind kind);

// Handed to a running job: its cancel flag and a throttled progress sink. Safe to call from the
// job's thread only.
class JobContext {
public:
    bool cancelled() const { return m_cancel->load(); }
    const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
    // Posts progress to the GUI thread at most every kProgressIntervalMs (and always the final 1.0).
    // `bestSeconds` > 0: the best cost found so far (the search panel plots it).
    void progress(double fraction, const QString& text, double bestSeconds = 0);
    // Runs `partial` on the GUI thread if this job is still the newest of its kind by then: partial
    // results (a profiled combination) that must not wait for the job's end.
    void post(std::function<void()> partial);

    static constexpr int kProgressIntervalMs = 50;

private:
    friend class JobRunner;
    class JobRunner* m_runner = nullptr;
    quint64 m_id = 0;
    JobKind m_kind = JobKind::Analysis;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QElapsedTimer m_sincePost;
    bool m_posted = false;
    double m_lastBest = 0;
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* parent = nullptr);
    ~JobRunner() override;  // cancels every job and waits for them

    // Runs `work` off the GUI thread; `done` receives its result on the GUI thread unless a newer
    // job of the same kind was started (or the job was cancelled) meanwhile.
    template <class T>
    quint64 start(JobKind kind, const QString& title, std::function<Result<T>(JobContext&)> work,
                  std::function<void(Result<T>)> done) {
        return startErased(kind, title, [work = std::move(work), done = std::move(done)](JobContext& ctx) -> Delivery {
            auto result = std::make_shared<Result<T>>(work(ctx));
            Delivery d;
            d.ok = result->ok();
            if (!d.ok) d.message = QString::fromStdString(result->error().message);
            if (!d.ok) d.code = QString::fromStdString(result->error().code);
            d.deliver = [result, done]() { done(std::move(*result)); };
            return d;
        });
    }

    void cancel(JobKind kind);
    void cancelAll();
    bool isRunning(JobKind kind) const;
    bool isIdle() const;
    // Processes events until no job runs (tests, --screenshot, benchmarks). False on timeout.
    bool waitForIdle(int timeoutMs);

signals:
    void jobStarted(cfp::explorer::JobKind kind, const QString& title);
    void jobProgress(cfp::explorer::JobKind kind, double fraction, const QString& text, double bestSeconds);
    // After the continuation ran. `ok` false: `message` says why (code: the error's stable code).
    void jobFinished(cfp::explorer::JobKind kind, bool ok, const QString& message, const QString& code);

private:
    friend class JobContext;
    struct Delivery {
        bool ok = true;
        QString message, code;
        std::function<void()> deliver;
    };
    quint64 startErased(JobKind kind, const QString& title, std::function<Delivery(JobContext&)> work);
    void postProgress(quint64 id, JobKind kind, double fraction, const QString& text, double best);
    void postPartial(quint64 id, JobKind kind, std::function<void()> partial);

    QThreadPool m_pool;          // analysis, search, detail, export
    QThreadPool m_profilerPool;  // one dedicated thread
    quint64 m_nextId = 1;
    std::map<JobKind, quint64> m_current;                              // newest job per kind
    std::map<quint64, std::shared_ptr<std::atomic<bool>>> m_cancelFlags; // running jobs
};

// ---------------------------------------------------------------------------------------------
// Snapshots

struct ModelSettings {
    std::string source = kDefaultModel;
    BuildOptions build;
    bool operator==(const ModelSettings& o) const;
};

struct ClusterSettings {
    std::string hardware = "h100-sxm";  // built-in id or a JSON file
    int64_t nodes = 1;
    std::string mesh = "auto";          // "auto" or a mesh ("8", "2x4", "dp=2,tp=4")
    int64_t memoryLimitBytes = 0;       // 0: the GPU's memory
    MemoryPolicy policy;                // optimizer-state sharding, activation recomputation
    bool operator==(const ClusterSettings& o) const {
        return hardware == o.hardware && nodes == o.nodes && mesh == o.mesh && memoryLimitBytes == o.memoryLimitBytes &&
               policy.optimizerSharding == o.policy.optimizerSharding && policy.recompute == o.policy.recompute;
    }
};

// What a project file stores (see projectToJson).
struct Project {
    ModelSettings model;
    ClusterSettings cluster;
    std::vector<std::string> pins;
    std::string profileDb;  // profile database path (empty: none)
};

struct ModelData {
    LoadedModel loaded;
    GraphStats stats;
    const Graph& graph() const { return loaded.graph; }
};

// An analysis of the model on one mesh, with lookups the views need.
struct AnalysisData {
    std::shared_ptr<const ModelData> model;
    std::shared_ptr<const AnalysisReport> report;  // may point into a PlanProblem
    std::vector<int32_t> segmentOfBlock;           // block → segment index
    std::vector<RepeatRun> runs;                   // consecutive segments of one type
    std::vector<int32_t> runOfSegment;             // segment → run index
    std::vector<std::string> typeNames;            // per segment type: "Layer", "embedding", …
    const Graph& graph() const { return model->graph(); }
    const Mesh& mesh() const { return report->blocks.mesh; }
    static std::shared_ptr<const AnalysisData> make(std::shared_ptr<const ModelData> model,
                                                    std::shared_ptr<const AnalysisReport> report);
};

struct PlanData;
// The plan was made for this analysis's model and mesh (so its block ids are the analysis's).
bool planMatches(const PlanData& plan, const AnalysisData& analysis);

struct PlanData {
    std::shared_ptr<const ModelData> model;
    std::shared_ptr<const PlanOutcome> outcome;
    std::shared_ptr<const AnalysisData> analysis;  // the plan's mesh
    std::vector<int32_t> strategy;                 // per block
    StrategyMask mask;                             // the pins' restriction
    Project request;                               // settings the search ran with
    std::string profileNote;                       // the profile DB's part in the costs, if any
    const Plan& plan() const { return outcome->plan; }
};

// One segment's alternatives (plan/alternatives.h) reduced for a chart in the worker: every
// Pareto-optimal row and the chosen one, and of the others at most one per category and cell of a
// grid over (memory, time), so that a 10^5-combination segment reaches the widget as a few thousand
// points. The counts are of all rows.
struct AlternativesView {
    int32_t segment = 0;
    int64_t combinations = 0;
    bool sampled = false;                   // a sample of the combinations (SegmentAlternatives::sampled)
    std::vector<CombinationCost> rows;      // reduced
    int64_t pareto = 0, dominated = 0, excluded = 0, noFit = 0;
    std::vector<std::string> labels;        // per row: "x:rows | x:cols +recompute | …"
};
AlternativesView reduceAlternatives(const SegmentAlternatives& all, const PlanProblem& problem, int gridCells = 200);

// ---------------------------------------------------------------------------------------------
// Formatting and plain helpers shared by the views

QString formatSeconds(double seconds);           // "129.4 ms", "1.62 s", "85 µs"
QString formatBytes(double bytes);               // "34.1 GiB", "512 MiB"
QString formatCount(int64_t n);                  // "8,503,056"
QString provenanceText(Provenance p);
// "x=2,y=4": a mesh in the text parseMesh reads, without link classes.
std::string meshSpec(const Mesh& mesh);
// Pins: "SEG=COMBO" for one segment, "T<k>=COMBO" for a type; strategy labels joined by ';'.
std::string pinText(const std::string& lhs, const AnalysisReport& report, int32_t firstBlock,
                    const std::vector<int32_t>& combination);
// The left-hand side of a pin ("3", "T1", "b17"), or empty when malformed.
std::string pinTarget(const std::string& pin);
// Bytes one device holds of op's result under the plan.
int64_t localResultBytes(const Graph& graph, const Plan& plan, OpId op);
// Loads a plan file's model again, as `cfp export` does.
Result<std::string> renderExport(const Graph& graph, const Plan& plan, ExportFormat format);

// Project files ("format": "cfp-explorer-project", version 1).
std::string projectToJson(const Project& project);
Result<Project> projectFromJson(std::string_view text, const std::string& origin);
Result<Project> readProjectFile(const std::string& path);
Status writeProjectFile(const std::string& path, const Project& project);

// ---------------------------------------------------------------------------------------------
// Selection shared by the tree, the graph and the properties panel.

struct Selection {
    enum class Kind { None, Segment, Block, Op };
    Kind kind = Kind::None;
    int32_t id = -1;  // segment index, block id or op id
    bool operator==(const Selection&) const = default;
};

// ---------------------------------------------------------------------------------------------
// The controller

class Explorer : public QObject {
    Q_OBJECT
public:
    explicit Explorer(QObject* parent = nullptr);
    ~Explorer() override;

    JobRunner& jobs() { return m_jobs; }
    const Project& project() const { return m_project; }
    std::shared_ptr<const ModelData> model() const { return m_model; }
    std::shared_ptr<const AnalysisData> analysis() const { return m_analysis; }
    std::shared_ptr<const PlanData> plan() const { return m_plan; }
    std::shared_ptr<const PlanData> previousPlan() const { return m_previousPlan; }
    const Selection& selection() const { return m_selection; }
    const std::vector<std::string>& pins() const { return m_project.pins; }
    std::vector<std::pair<double, double>> bestSoFar() const { return m_bestSoFar; }  // (elapsed s, best s)

    // Loads `source` (builtin:NAME, config.json, graph file, …) and analyses it; with
    // `searchAfter` the search follows as soon as the analysis is in.
    void openModel(const std::string& source, bool searchAfter = false);
    void setBuildOptions(const BuildOptions& options);
    void setCluster(const ClusterSettings& cluster);
    void setPins(const std::vector<std::string>& pins);
    void setProfileDb(const std::string& path) { m_project.profileDb = path; }
    // Re-analyses the current model (cluster changed).
    void analyse();
    void search();
    void cancelSearch();
    void requestAlternatives(int32_t segment);
    void exportPlan(ExportFormat format, const QString& path);
    void savePlan(const QString& path);
    Status saveProject(const QString& path);
    // Reads the project and opens its model (the analysis and search follow as jobs).
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
    void bestSoFarChanged();
    void exported(const QString& path);
    // A failed request (load, analysis, search, export): title for a dialog, text with the reason.
    void failed(const QString& title, const QString& message);
    void status(const QString& message);

private:
    void startAnalysis(bool searchAfter);
    // Renders the current plan off the GUI thread and writes it atomically to `path`.
    void writeFromPlan(const QString& path, const QString& title, const QString& failTitle,
                       std::function<Result<std::string>(const PlanData&)> render);
    Result<Cluster> makeClusterFromSettings() const;

    JobRunner m_jobs;
    Project m_project;
    std::shared_ptr<const ModelData> m_model;
    std::shared_ptr<const AnalysisData> m_analysis;
    std::shared_ptr<const PlanData> m_plan, m_previousPlan;
    Selection m_selection;
    std::vector<std::pair<double, double>> m_bestSoFar;
    QElapsedTimer m_searchClock;
    bool m_searchAfterAnalysis = false;  // Search was pressed while the model was loading
};

}  // namespace cfp::explorer

Q_DECLARE_METATYPE(cfp::explorer::JobKind)
Q_DECLARE_METATYPE(cfp::explorer::Selection)
Q_DECLARE_METATYPE(std::shared_ptr<const cfp::explorer::AlternativesView>)
