#include "controller.h"

#include <algorithm>

#include "io/atomic_file.h"
#include "plan/plan_json.h"

namespace cfp::explorer {

namespace {

// A planning run as the views hold it: with gradient accumulation the plan is of one round's
// graph (built at batch / rounds), which the plan's problem points into, and the views show that
// graph with the plan.
std::shared_ptr<const PlanData> planDataOf(const std::shared_ptr<const ModelData>& model, PlanRun run, const PlanRequest& request) {
    auto data = std::make_shared<PlanData>();
    data->model = model;
    if (run.model != model->loaded) {
        auto round = std::make_shared<ModelData>();
        round->loaded = run.model;
        round->stats = computeStats(round->loaded->graph);
        data->model = round;
    }
    auto shared = std::make_shared<const PlanOutcome>(std::move(run.outcome));
    data->outcome = shared;
    data->analysis = AnalysisData::make(data->model, std::shared_ptr<const AnalysisReport>(shared, &shared->problem->analysis()));
    data->request = request;
    data->profile = std::move(run.profile);
    data->tried = std::move(run.accumulationTried);
    return data;
}

// What opening a project's model gives: the model, and its saved plan restored or else the
// overview's analysis; `note` says why a saved plan was not restored.
struct OpenedProject {
    std::shared_ptr<const ModelData> model;
    std::shared_ptr<const AnalysisData> analysis;
    std::shared_ptr<const PlanData> plan;
    std::string note;
};

}  // namespace

Explorer::Explorer(QObject* parent) : QObject(parent) {
    qRegisterMetaType<Selection>();
    qRegisterMetaType<JobKind>();
    qRegisterMetaType<std::shared_ptr<const AlternativesView>>();
    connect(&m_jobs, &JobRunner::jobProgress, this, [this](JobKind kind, double fraction, const QString& text, double best) {
        if (kind != JobKind::Search) return;
        // Elapsed time with the stage, and the time left at the pace so far once there is a pace;
        // the bar never goes back; the best-so-far curve runs on to now.
        m_searchSeconds = m_searchClock.elapsed() / 1000.0;
        m_searchFraction = std::max(m_searchFraction, std::clamp(fraction, 0.0, 1.0));
        QString clock = tr(" · %1 s").arg(m_searchSeconds, 0, 'f', 0);
        if (m_searchFraction >= 0.05 && m_searchFraction < 1.0 && m_searchSeconds >= 3)
            clock += tr(", about %1 left at this pace").arg(formatDuration(m_searchSeconds * (1 - m_searchFraction) / m_searchFraction));
        emit searchProgress(m_searchFraction, text + clock);
        if (best > 0 && (m_bestSoFar.empty() || m_bestSoFar.back().second != best)) m_bestSoFar.emplace_back(m_searchSeconds, best);
        if (!m_bestSoFar.empty()) emit bestSoFarChanged();
    });
}

Explorer::~Explorer() = default;

ClusterSettings Explorer::cluster() const {
    return {m_request.hardware,           m_request.nodes,        m_request.mesh,   m_request.memoryLimitBytes,
            m_request.memoryReserveBytes, m_request.accumulation, m_request.policy, m_request.pipeline,
            m_request.searchSequenceParallel, m_request.searchZero};
}

void Explorer::openModel(const std::string& source, bool searchAfter) {
    // The request, its pins and the model shown stay as they are until the new model has loaded:
    // a file that fails to open leaves the session as it was.
    ModelRequest opening = m_request.model;
    opening.source = source;
    startAnalysis(searchAfter, opening);
}

void Explorer::setBuildOptions(const BuildOptions& options) {
    ModelRequest next = m_request.model;
    next.build = options;
    if (next == m_request.model) return;
    m_request.model = next;
    m_model.reset();
}

void Explorer::setCluster(const ClusterSettings& cluster) {
    m_request.hardware = cluster.hardware;
    m_request.nodes = cluster.nodes;
    m_request.mesh = cluster.mesh;
    m_request.memoryLimitBytes = cluster.memoryLimitBytes;
    m_request.memoryReserveBytes = cluster.memoryReserveBytes;
    m_request.accumulation = cluster.accumulation;
    m_request.policy = cluster.policy;
    m_request.pipeline = cluster.pipeline;
    m_request.searchSequenceParallel = cluster.searchSequenceParallel;
    m_request.searchZero = cluster.searchZero;
    // A configuration priced on other cluster settings is not shown beside the next plan.
    if (m_estimate) {
        m_estimate.reset();
        emit estimated();
    }
}

void Explorer::setPins(const std::vector<Pin>& pins) {
    if (pins == m_request.pins) return;
    m_request.pins = pins;
    emit pinsChanged();
}

void Explorer::setProfileDb(const std::string& path) {
    if (path.empty()) m_request.profile.reset();
    else m_request.profile = ProfileSource{path, {}};
}

void Explorer::analyse() { startAnalysis(false); }

void Explorer::startAnalysis(bool searchAfter, std::optional<ModelRequest> opening) {
    m_jobs.cancel(JobKind::Search);
    auto cluster = requestedCluster(m_request);
    if (!cluster) {
        emit failed(tr("Cannot analyse"), QString::fromStdString(cluster.error().toString()));
        return;
    }
    // Under mesh auto the overview shows the one-axis mesh over every device (with pipeline
    // stages: over one stage's devices, the mesh the search plans).
    const int64_t stages = std::max<int32_t>(1, m_request.pipeline.stages);
    if (cluster->devices() % stages != 0) {
        emit failed(tr("Cannot analyse"), tr("%1 pipeline stages do not divide the %2 devices").arg(stages).arg(cluster->devices()));
        return;
    }
    const int64_t devices = cluster->devices() / stages;
    const std::string meshText = m_request.mesh.isAuto() ? std::to_string(devices) : m_request.mesh.toString();
    const int64_t gpusPerNode = std::min(cluster->hardware.gpusPerNode, devices);
    std::shared_ptr<const ModelData> existing = opening ? nullptr : m_model;
    const ModelRequest model = opening ? *opening : m_request.model;
    emit status(tr("Loading and analysing %1…").arg(QString::fromStdString(model.source)));
    using Out = std::pair<std::shared_ptr<const ModelData>, std::shared_ptr<const AnalysisData>>;
    m_jobs.start<Out>(
        JobKind::Analysis, tr("Analysing"),
        [existing, model, meshText, gpusPerNode, devices](JobContext& ctx) -> Result<Out> {
            std::shared_ptr<const ModelData> data = existing;
            if (!data) {
                ctx.progress(0.0, QStringLiteral("loading %1").arg(QString::fromStdString(model.source)));
                auto loaded = loadRequestedModel(model);
                if (!loaded) return loaded.error();
                auto md = std::make_shared<ModelData>();
                md->loaded = std::make_shared<const LoadedModel>(std::move(*loaded));
                md->stats = computeStats(md->loaded->graph);
                data = md;
            }
            if (ctx.cancelled()) return makeError("job.cancelled", "cancelled");
            ctx.progress(0.5, QStringLiteral("analysing on mesh %1").arg(QString::fromStdString(meshText)));
            auto parsed = parseMesh(meshText, devices);
            if (!parsed) return parsed.error().withContext("mesh");
            auto mesh = assignLinkClasses(*parsed, gpusPerNode);
            if (!mesh) return mesh.error().withContext("mesh");
            auto report = analyzeGraph(data->graph(), *mesh);
            if (!report) return report.error();
            auto shared = std::make_shared<const AnalysisReport>(std::move(*report));
            return Out{data, AnalysisData::make(data, shared)};
        },
        [this, searchAfter, opening](Result<Out> r) {
            const bool thenSearch = searchAfter || m_searchAfterAnalysis;
            m_searchAfterAnalysis = false;
            if (!r) {
                if (r.error().code != "job.cancelled") {
                    // Titled by what went wrong: the mesh, the analysis, or (opening) the model itself.
                    const std::string& code = r.error().code;
                    const QString title = code.rfind("mesh.", 0) == 0 ? tr("Cannot use this mesh")
                                          : opening                   ? tr("Cannot open the model")
                                                                      : tr("Cannot analyse the model");
                    emit failed(title, QString::fromStdString(r.error().toString()));
                }
                return;
            }
            if (opening) {
                // The opened model is the request's from now on; pins name the old model's blocks.
                const bool otherSource = opening->source != m_request.model.source;
                m_request.model = *opening;
                if (otherSource && !m_request.pins.empty()) {
                    m_request.pins.clear();
                    emit pinsChanged();
                }
                emit modelOpened(QString::fromStdString(opening->source));
            }
            const bool newModel = r->first != m_model;
            m_model = r->first;
            m_analysis = r->second;
            if (newModel) {
                m_previousPlan.reset();
                m_plan.reset();
                emit planCleared();
                m_estimate.reset();
                emit modelChanged();
            }
            m_selection = {};
            emit analysisChanged();
            emit selectionChanged(m_selection);
            emit status(tr("%1: %2 ops, %3 blocks, %4 segments (%5 types) on mesh %6")
                            .arg(QString::fromStdString(m_model->graph().name()))
                            .arg(m_model->graph().size())
                            .arg(m_analysis->report->blocks.blocks.size())
                            .arg(m_analysis->report->cover.segments.size())
                            .arg(m_analysis->report->cover.types.size())
                            .arg(QString::fromStdString(m_analysis->mesh().toString())));
            if (thenSearch) search();
        });
}

void Explorer::estimate(const QString& configText) {
    auto config = RunConfig::parse(configText.trimmed().toStdString());
    if (!config) {
        emit failed(tr("Cannot estimate"), QString::fromStdString(config.error().toString()));
        return;
    }
    const PlanRequest request = m_request;
    const QString text = QString::fromStdString(config->toString());
    emit status(tr("Estimating %1…").arg(text));
    m_jobs.start<std::shared_ptr<const PlanRun>>(
        JobKind::Estimate, tr("Estimating"),
        [request, c = *config](JobContext& ctx) -> Result<std::shared_ptr<const PlanRun>> {
            PlanHooks hooks;
            hooks.cancel = ctx.cancelFlag();
            auto run = runEstimate(request, c, hooks);
            if (!run) return run.error();
            return std::make_shared<const PlanRun>(std::move(*run));
        },
        [this, text, c = *config](Result<std::shared_ptr<const PlanRun>> r) {
            if (!r) {
                if (r.error().code != "plan.cancelled" && r.error().code != "job.cancelled")
                    emit failed(tr("Cannot estimate %1").arg(text), QString::fromStdString(r.error().toString()));
                return;
            }
            m_estimate = *r;
            // The configuration as priced: keys left out are chosen by the estimate's search.
            const QString priced = QString::fromStdString((*r)->estimatedConfig.value_or(c).toString());
            m_estimateConfig = priced == text ? text : tr("%1 (%2, the rest chosen)").arg(priced, text);
            emit status(tr("Estimated %1").arg(priced));
            emit estimated();
        });
}

void Explorer::search() {
    if (!m_model) {
        // The model is still loading (or its options changed): search once it is analysed.
        if (m_jobs.isRunning(JobKind::Analysis)) {
            m_searchAfterAnalysis = true;
            emit status(tr("The search starts when the analysis is done"));
        } else {
            startAnalysis(true);
        }
        return;
    }
    PlanRequest request = m_request;
    if (!request.pins.empty() && request.pipeline.stages == PipelineSettings::kSearchedStages) {
        // Every count of stages plans its own meshes; pins hold on one.
        emit failed(tr("Cannot search"), tr("Pins name strategies on one stage mesh: set pp to a number to search with pins, or clear the pins."));
        return;
    }
    if (request.mesh.isAuto() && !request.pins.empty()) {
        // Pins name strategies by mesh axes, so they hold on one mesh: the current plan's.
        if (!m_plan) {
            emit failed(tr("Cannot search"), tr("Pins name strategies on one mesh: choose a mesh, or search once without pins."));
            return;
        }
        request.mesh = MeshChoice::fixed(m_plan->plan().mesh);
    }
    request.blockCheck = BlockCheck::Run;  // the overview shows the block check and the search space
    // On a fixed mesh the analysis the overview already shows is the search's (not run again).
    std::optional<AnalysisReport> analysis;
    if (!request.mesh.isAuto() && m_analysis && m_analysis->model == m_model && m_analysis->report->check.checked &&
        meshShapeText(m_analysis->mesh()) == meshShapeText(request.mesh.mesh()))
        analysis = *m_analysis->report;
    std::shared_ptr<const ModelData> model = m_model;
    m_bestSoFar.clear();
    m_searchSeconds = 0;
    m_searchFraction = 0;
    m_searchClock.start();
    emit bestSoFarChanged();
    emit status(tr("Searching on mesh %1…").arg(QString::fromStdString(request.mesh.toString())));
    m_jobs.start<std::shared_ptr<const PlanData>>(
        JobKind::Search, tr("Searching"),
        [model, request, analysis = std::move(analysis)](JobContext& ctx) mutable -> Result<std::shared_ptr<const PlanData>> {
            PlanHooks hooks;
            hooks.cancel = ctx.cancelFlag();
            hooks.progress = [&ctx](const PlanProgress& p) { ctx.progress(p.overall, progressText(p), p.bestSeconds); };
            auto run = runPlan(request, model->loaded, hooks, std::move(analysis));
            if (!run) return run.error();
            auto data = planDataOf(model, std::move(*run), request);
            ctx.progress(1.0, QStringLiteral("done"), data->plan().predictedStepSeconds);
            return data;
        },
        [this](Result<std::shared_ptr<const PlanData>> r) {
            if (!r) {
                if (r.error().code != "plan.cancelled" && r.error().code != "job.cancelled")
                    emit failed(tr("Search failed"), QString::fromStdString(r.error().toString()));
                else
                    emit status(tr("Search cancelled before any mesh had a plan"));
                return;
            }
            const double best = (*r)->plan().predictedStepSeconds;
            m_searchSeconds = m_searchClock.elapsed() / 1000.0;
            if (m_bestSoFar.empty() || m_bestSoFar.back().second != best) m_bestSoFar.emplace_back(m_searchSeconds, best);
            emit bestSoFarChanged();
            m_previousPlan = m_plan;
            m_plan = *r;
            const bool sameMesh = m_analysis && m_analysis->mesh() == m_plan->plan().mesh;
            if (!sameMesh || m_analysis->model != m_plan->model) {
                m_analysis = m_plan->analysis;
                m_selection = {};
                emit analysisChanged();
                emit selectionChanged(m_selection);
            } else {
                m_analysis = m_plan->analysis;
            }
            emit planChanged();
            const Plan& p = m_plan->plan();
            const QString text = tr("%1 per step on mesh %2, %3 of %4 per device")
                                     .arg(formatSeconds(p.stepSeconds()), QString::fromStdString(p.mesh.toString()),
                                          formatBytes(static_cast<double>(p.memory.total())), formatBytes(static_cast<double>(p.memoryLimitBytes)));
            if (m_plan->outcome->stopped)
                emit status(tr("Search stopped; the best plan of the %1 meshes searched: %2").arg(m_plan->outcome->candidates.size()).arg(text));
            else
                emit status(tr("Plan: %1").arg(text));
        });
}

void Explorer::cancelSearch() {
    if (!m_jobs.isRunning(JobKind::Search)) return;
    // The search stops at once and still delivers the best plan of the meshes it finished (none:
    // nothing is shown, as before the search).
    m_jobs.stop(JobKind::Search);
    emit status(tr("Stopping the search…"));
}

// Beyond this many combinations of one segment the chart shows a sample (a 2-D mesh gives 9
// strategies per block, 18 with recomputation: 18^4 = 104,976 for a GPT layer, and a 3-D mesh
// 54^4 = 8.5 million); each row costs one pass over the problem's terms, a few microseconds.
constexpr int64_t kMaxCombinationsShown = 100000;

void Explorer::requestAlternatives(int32_t segment) {
    if (!m_plan) return;
    std::shared_ptr<const PlanData> plan = m_plan;
    m_jobs.start<std::shared_ptr<const AlternativesView>>(
        JobKind::Detail, tr("Combinations"),
        [plan, segment](JobContext&) -> Result<std::shared_ptr<const AlternativesView>> {
            auto alt = segmentAlternatives(*plan->outcome->problem, plan->assignment(), segment, plan->plan().memoryLimitBytes,
                                           plan->pinned(), kMaxCombinationsShown);
            if (!alt) return alt.error();
            return std::make_shared<const AlternativesView>(reduceAlternatives(*alt, *plan->outcome->problem));
        },
        [this, plan](Result<std::shared_ptr<const AlternativesView>> r) {
            if (!r || plan != m_plan) return;
            emit alternativesReady(*r);
        });
}

void Explorer::writeFromPlan(const QString& path, const QString& title, const QString& failTitle,
                             std::function<Result<std::vector<ExportFile>>(const PlanData&, const std::string& path)> render,
                             std::shared_ptr<const std::vector<std::string>> notes) {
    if (!m_plan) {
        emit failed(failTitle, tr("There is no plan yet: run the search first."));
        return;
    }
    std::shared_ptr<const PlanData> plan = m_plan;
    const std::string file = path.toStdString();
    m_jobs.start<std::string>(
        JobKind::Export, title,
        [plan, file, render = std::move(render)](JobContext&) -> Result<std::string> {
            auto files = render(*plan, file);
            if (!files) return files.error();
            // The files it refers to first, so that it never names a file not yet there.
            for (auto it = files->rbegin(); it != files->rend(); ++it)
                if (auto st = writeFileAtomically(it->path, it->text); !st) return st.error();
            std::string said = file;
            for (size_t i = 1; i < files->size(); ++i) said += (i == 1 ? " and its schedule to " : ", ") + (*files)[i].path;
            return said;
        },
        [this, path, failTitle, notes](Result<std::string> r) {
            if (!r) {
                emit failed(failTitle, QString::fromStdString(r.error().toString()));
                return;
            }
            QString said = tr("Wrote %1").arg(QString::fromStdString(*r));
            if (notes)
                for (const std::string& n : *notes) said += QStringLiteral(" — ") + tr("note: %1").arg(QString::fromStdString(n));
            m_lastExportNotes.clear();
            if (notes)
                for (const std::string& n : *notes) m_lastExportNotes << QString::fromStdString(n);
            emit status(said);
            emit exported(path);
        });
}

void Explorer::exportPlan(ExportFormat format, const QString& path, const ExportOptions& options) {
    auto notes = std::make_shared<std::vector<std::string>>();
    writeFromPlan(
        path, tr("Exporting"), tr("Export failed"),
        [format, options, notes](const PlanData& plan, const std::string& file) {
            const auto& config = plan.model->loaded->config;
            return renderExportFiles(plan.model->graph(), plan.plan(), format, file, config ? &*config : nullptr, options, notes.get());
        },
        notes);
}

void Explorer::savePlan(const QString& path) {
    // As writePlanFile does: the plan is checked against its graph before it is written.
    writeFromPlan(path, tr("Saving plan"), tr("Cannot save the plan"), [](const PlanData& plan, const std::string& file) -> Result<std::vector<ExportFile>> {
        if (auto st = checkPlanAgainstGraph(plan.plan(), plan.model->graph()); !st) return st.error();
        return std::vector<ExportFile>{{file, planToText(plan.plan(), plan.model->graph())}};
    });
}

Status Explorer::saveProject(const QString& path) {
    PlanRequest r = m_request;
    // Pins name one mesh's strategies: a project with pins records that mesh rather than "auto".
    if (!r.pins.empty() && r.mesh.isAuto() && m_plan) r.mesh = MeshChoice::fixed(m_plan->plan().mesh);
    if (!m_plan) return writeProjectFile(path.toStdString(), r, nullptr);
    // The plan with the request its search ran with, which loadProject compares with the
    // project's (the plan may be older than the latest pins or settings).
    ProjectPlan last;
    last.request = m_plan->request;
    last.partial = m_plan->outcome->stopped;
    if (auto st = checkPlanAgainstGraph(m_plan->plan(), m_plan->model->graph()); !st) return st.error();
    last.planText = planToText(m_plan->plan(), m_plan->model->graph());
    return writeProjectFile(path.toStdString(), r, &last);
}

Status Explorer::loadProject(const QString& path, bool searchAfter) {
    auto project = readProjectFile(path.toStdString());
    if (!project) return project.error();
    PlanRequest next = std::move(project->request);
    next.search = m_request.search;
    std::optional<ProjectPlan> saved = std::move(project->lastPlan);
    // Without a saved plan to restore, the overview analyses the model as startAnalysis does:
    // under mesh auto on the one-axis mesh over every device (with stages: over one stage's).
    auto cluster = requestedCluster(next);
    if (!cluster) return cluster.error().withContext("project");
    const int64_t stages = std::max<int32_t>(1, next.pipeline.stages);
    if (cluster->devices() % stages != 0)
        return makeError("pipeline.devices", std::to_string(stages) + " pipeline stages do not divide the " + std::to_string(cluster->devices()) +
                                                 " devices", "/pipeline");
    const int64_t devices = cluster->devices() / stages;
    const std::string meshText = next.mesh.isAuto() ? std::to_string(devices) : next.mesh.toString();
    const int64_t gpusPerNode = std::min(cluster->hardware.gpusPerNode, devices);
    // The model shown is kept when the project names the same (m_model is always the request's).
    std::shared_ptr<const ModelData> existing = next.model == m_request.model ? m_model : nullptr;
    const std::string origin = path.toStdString();
    emit status(tr("Opening project %1…").arg(path));
    m_jobs.start<OpenedProject>(
        JobKind::Analysis, tr("Opening project"),
        [existing, next, saved = std::move(saved), meshText, gpusPerNode, devices, origin](JobContext& ctx) -> Result<OpenedProject> {
            OpenedProject out;
            out.model = existing;
            if (!out.model) {
                ctx.progress(0.0, QStringLiteral("loading %1").arg(QString::fromStdString(next.model.source)));
                auto loaded = loadRequestedModel(next.model);
                if (!loaded) return loaded.error().withContext("project model");
                auto md = std::make_shared<ModelData>();
                md->loaded = std::make_shared<const LoadedModel>(std::move(*loaded));
                md->stats = computeStats(md->loaded->graph);
                out.model = md;
            }
            if (ctx.cancelled()) return makeError("job.cancelled", "cancelled");
            if (saved) {
                // The saved plan comes back when it answers the project's request (or only the pins
                // changed since it was made); a plan that no longer reads or prices the same costs a
                // search, not the project.
                ctx.progress(0.4, QStringLiteral("restoring the saved plan"));
                std::vector<std::string> names;
                auto plan = planFromJson(saved->planText, origin + " /last_plan/plan", &names);
                if (!plan) {
                    out.note = "the saved plan does not read: " + plan.error().toString();
                } else {
                    std::vector<std::string> differ = requestDifferences(saved->request, next, &plan->mesh);
                    std::erase(differ, std::string("pins"));
                    if (!differ.empty()) {
                        std::string keys;
                        for (const std::string& k : differ) keys += (keys.empty() ? "" : ", ") + k;
                        out.note = "the saved plan was made for other settings: " + keys;
                    } else {
                        PlanHooks hooks;
                        hooks.cancel = ctx.cancelFlag();
                        PlanRequest answered = saved->request;
                        answered.search = next.search;
                        auto run = restorePlan(answered, out.model->loaded, std::move(*plan), &names, hooks);
                        if (!run && run.error().code == "plan.cancelled") return makeError("job.cancelled", "cancelled");
                        if (!run) {
                            out.note = "the saved plan could not be restored: " + run.error().toString();
                        } else {
                            run->outcome.stopped = saved->partial;
                            out.plan = planDataOf(out.model, std::move(*run), saved->request);
                            return out;
                        }
                    }
                }
            }
            ctx.progress(0.5, QStringLiteral("analysing on mesh %1").arg(QString::fromStdString(meshText)));
            auto parsed = parseMesh(meshText, devices);
            if (!parsed) return parsed.error().withContext("mesh");
            auto mesh = assignLinkClasses(*parsed, gpusPerNode);
            if (!mesh) return mesh.error().withContext("mesh");
            auto report = analyzeGraph(out.model->graph(), *mesh);
            if (!report) return report.error();
            out.analysis = AnalysisData::make(out.model, std::make_shared<const AnalysisReport>(std::move(*report)));
            return out;
        },
        [this, next, path, searchAfter](Result<OpenedProject> r) {
            const bool thenSearch = m_searchAfterAnalysis;
            m_searchAfterAnalysis = false;
            if (!r) {
                // Nothing of the session changed: the model, request, pins and plan stay.
                if (r.error().code != "job.cancelled")
                    emit failed(tr("Cannot open the project"), tr("%1: %2").arg(path, QString::fromStdString(r.error().toString())));
                return;
            }
            // The project is the session's from now on.
            m_jobs.cancel(JobKind::Search);
            PlanRequest request = next;
            request.search = m_request.search;
            m_request = request;
            emit pinsChanged();
            const bool newModel = r->model != m_model;
            m_model = r->model;
            m_previousPlan.reset();
            m_plan = r->plan;
            m_analysis = m_plan ? m_plan->analysis : r->analysis;
            m_estimate.reset();
            m_bestSoFar.clear();
            m_selection = {};
            if (newModel) emit modelChanged();
            emit estimated();
            emit bestSoFarChanged();
            emit analysisChanged();
            emit selectionChanged(m_selection);
            if (m_plan) emit planChanged();
            else emit planCleared();
            emit projectOpened(path);
            if (m_plan) {
                const Plan& p = m_plan->plan();
                const QString text = tr("%1 per step on mesh %2").arg(formatSeconds(p.stepSeconds()), QString::fromStdString(p.mesh.toString()));
                if (p.pins != m_request.pins)
                    emit status(tr("Opened project %1: restored the saved plan (%2), made before the pins changed: re-search to honour them")
                                    .arg(path, text));
                else
                    emit status(tr("Opened project %1: restored the saved plan (%2) without a search").arg(path, text));
                if (thenSearch) search();
                return;
            }
            const QString why = r->note.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(r->note));
            if (searchAfter || thenSearch) {
                search();
                emit status(tr("Opened project %1: searching%2").arg(path, why));
            } else {
                emit status(tr("Opened project %1: no plan restored%2").arg(path, why));
            }
        });
    return {};
}

void Explorer::select(const Selection& selection) {
    if (selection == m_selection) return;
    m_selection = selection;
    emit selectionChanged(m_selection);
}

}  // namespace cfp::explorer
