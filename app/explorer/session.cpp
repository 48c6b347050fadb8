#include "session.h"

#include <QCoreApplication>
#include <QDeadlineTimer>

#include <algorithm>
#include <cmath>
#include <new>

#include "hardware/hardware.h"
#include "io/atomic_file.h"
#include "io/strict_json.h"
#include "plan/evaluator.h"
#include "plan/plan_json.h"
#include "profiler/profile_db.h"

namespace cfp::explorer {

// ---------------------------------------------------------------------------------------------
// Jobs

QString jobKindName(JobKind kind) {
    switch (kind) {
    case JobKind::Analysis: return QStringLiteral("analysis");
    case JobKind::Search: return QStringLiteral("search");
    case JobKind::Detail: return QStringLiteral("detail");
    case JobKind::Export: return QStringLiteral("export");
    case JobKind::Profile: return QStringLiteral("profile");
    }
    return {};
}

void JobContext::progress(double fraction, const QString& text, double bestSeconds) {
    // A new best always goes through (the search panel plots every one); other updates are
    // throttled so that a fast loop cannot flood the GUI thread's event queue.
    const bool newBest = bestSeconds > 0 && bestSeconds != m_lastBest;
    if (m_posted && !newBest && fraction < 1.0 && m_sincePost.elapsed() < kProgressIntervalMs) return;
    m_posted = true;
    m_sincePost.start();
    if (bestSeconds > 0) m_lastBest = bestSeconds;
    m_runner->postProgress(m_id, m_kind, fraction, text, bestSeconds);
}

void JobContext::post(std::function<void()> partial) { m_runner->postPartial(m_id, m_kind, std::move(partial)); }

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<JobKind>();
    m_pool.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
    m_profilerPool.setMaxThreadCount(1);
    m_profilerPool.setExpiryTimeout(-1);  // the one profiler thread lives as long as the runner
}

JobRunner::~JobRunner() {
    cancelAll();
    m_pool.waitForDone();
    m_profilerPool.waitForDone();
}

quint64 JobRunner::startErased(JobKind kind, const QString& title, std::function<Delivery(JobContext&)> work) {
    cancel(kind);
    const quint64 id = m_nextId++;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_current[kind] = id;
    m_cancelFlags[id] = flag;
    emit jobStarted(kind, title);
    auto task = [this, id, kind, flag, work = std::move(work)]() {
        JobContext ctx;
        ctx.m_runner = this;
        ctx.m_id = id;
        ctx.m_kind = kind;
        ctx.m_cancel = flag;
        Delivery d;
        try {
            d = work(ctx);
        } catch (const std::bad_alloc&) {
            d.ok = false;
            d.code = QStringLiteral("job.out_of_memory");
            d.message = QStringLiteral("out of memory (try a smaller batch or sequence)");
            d.deliver = nullptr;
        } catch (const std::exception& e) {
            d.ok = false;
            d.code = QStringLiteral("job.failed");
            d.message = QString::fromUtf8(e.what());
            d.deliver = nullptr;
        }
        // The runner outlives its tasks (its destructor waits for them), so `this` is valid here;
        // the queued call is dropped if the runner is gone by the time the GUI thread gets to it.
        QMetaObject::invokeMethod(
            this,
            [this, id, kind, d = std::move(d)]() {
                m_cancelFlags.erase(id);
                auto it = m_current.find(kind);
                const bool newest = it != m_current.end() && it->second == id;
                if (!newest) return;  // superseded or cancelled: drop the result
                m_current.erase(it);
                if (d.deliver) d.deliver();
                emit jobFinished(kind, d.ok, d.message, d.code);
            },
            Qt::QueuedConnection);
    };
    (kind == JobKind::Profile ? m_profilerPool : m_pool).start(std::move(task));
    return id;
}

void JobRunner::postProgress(quint64 id, JobKind kind, double fraction, const QString& text, double best) {
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, fraction, text, best]() {
            auto it = m_current.find(kind);
            if (it == m_current.end() || it->second != id) return;
            emit jobProgress(kind, fraction, text, best);
        },
        Qt::QueuedConnection);
}

void JobRunner::postPartial(quint64 id, JobKind kind, std::function<void()> partial) {
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, partial = std::move(partial)]() {
            auto it = m_current.find(kind);
            if (it != m_current.end() && it->second == id) partial();
        },
        Qt::QueuedConnection);
}

void JobRunner::cancel(JobKind kind) {
    auto it = m_current.find(kind);
    if (it == m_current.end()) return;
    if (auto f = m_cancelFlags.find(it->second); f != m_cancelFlags.end()) f->second->store(true);
    m_current.erase(it);
    emit jobFinished(kind, false, QStringLiteral("cancelled"), QStringLiteral("job.cancelled"));
}

void JobRunner::cancelAll() {
    for (auto& [id, flag] : m_cancelFlags) flag->store(true);
    m_current.clear();
}

bool JobRunner::isRunning(JobKind kind) const { return m_current.count(kind) != 0; }

bool JobRunner::isIdle() const { return m_current.empty(); }

bool JobRunner::waitForIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (!isIdle()) {
        if (deadline.hasExpired()) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    // Deliveries may have started follow-up jobs from within processEvents; the loop above covers
    // them. Flush what the last delivery posted.
    QCoreApplication::processEvents();
    return isIdle();
}

// ---------------------------------------------------------------------------------------------
// Snapshots

bool ModelSettings::operator==(const ModelSettings& o) const {
    return source == o.source && build.batch == o.build.batch && build.seq == o.build.seq && build.dtype == o.build.dtype &&
           build.qkv == o.build.qkv;
}

namespace {

// A display name for a segment type from its blocks' scopes: "Layer" for a stack of numbered
// layers ("layers.7.attn.qkv", …), else the scopes' common prefix ("embed"), else a list.
std::string typeName(const Graph& graph, const AnalysisReport& report, const Segment& seg, bool repeated) {
    std::vector<std::string> scopes;
    for (int k = 0; k < seg.blockCount; ++k) {
        const auto& block = report.blocks.blocks[static_cast<size_t>(seg.firstBlock + k)];
        scopes.push_back(graph.op(block.entry).scope);
    }
    auto parts = [](const std::string& s) {
        std::vector<std::string> out;
        size_t start = 0;
        while (start <= s.size()) {
            const auto dot = s.find('.', start);
            out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
        return out;
    };
    std::vector<std::string> common = parts(scopes.empty() ? std::string() : scopes[0]);
    for (const auto& s : scopes) {
        const auto p = parts(s);
        size_t n = 0;
        while (n < common.size() && n < p.size() && common[n] == p[n]) ++n;
        common.resize(n);
    }
    auto isNumber = [](const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit); };
    auto isStack = [](const std::string& w) { return w == "layers" || w == "layer" || w == "h" || w == "blocks" || w == "block"; };
    const bool numbered = !common.empty() && isNumber(common.back());
    if (numbered) common.pop_back();
    // A repeated window of a layer stack ("layers.N.mlp…" and "layers.N+1.attn…") is a layer,
    // wherever the window starts within it.
    if ((numbered || repeated) && !common.empty() && common.size() == 1 && isStack(common[0])) return "Layer";
    if (numbered && repeated) return "Layer";
    if (!common.empty() && !common[0].empty()) {
        std::string joined;
        for (const auto& c : common) joined += (joined.empty() ? "" : ".") + c;
        return joined;
    }
    // Mixed scopes (e.g. the embedding with the first layer): name the distinct top-level parts.
    std::vector<std::string> tops;
    for (const auto& s : scopes) {
        auto p = parts(s);
        std::string top = p.empty() ? std::string() : p[0];
        if (p.size() > 1 && isNumber(p[1])) top += "." + p[1];
        if (!top.empty() && std::find(tops.begin(), tops.end(), top) == tops.end()) tops.push_back(top);
    }
    std::string joined;
    for (const auto& t : tops) joined += (joined.empty() ? "" : " + ") + t;
    return joined.empty() ? "segment" : joined;
}

}  // namespace

std::shared_ptr<const AnalysisData> AnalysisData::make(std::shared_ptr<const ModelData> model,
                                                       std::shared_ptr<const AnalysisReport> report) {
    auto a = std::make_shared<AnalysisData>();
    a->model = std::move(model);
    a->report = std::move(report);
    const auto& cover = a->report->cover;
    a->segmentOfBlock.assign(a->report->blocks.blocks.size(), -1);
    for (size_t s = 0; s < cover.segments.size(); ++s)
        for (int b = 0; b < cover.segments[s].blockCount; ++b)
            a->segmentOfBlock[static_cast<size_t>(cover.segments[s].firstBlock + b)] = static_cast<int32_t>(s);
    a->runs = repeatRuns(cover);
    a->runOfSegment.assign(cover.segments.size(), -1);
    for (size_t r = 0; r < a->runs.size(); ++r)
        for (int k = 0; k < a->runs[r].count; ++k) a->runOfSegment[static_cast<size_t>(a->runs[r].firstSegment + k)] = static_cast<int32_t>(r);
    for (const SegmentType& t : cover.types)
        a->typeNames.push_back(typeName(a->graph(), *a->report, cover.segments[static_cast<size_t>(t.firstSegment)], t.occurrences > 1));
    return a;
}

bool planMatches(const PlanData& plan, const AnalysisData& analysis) {
    return plan.model == analysis.model && plan.plan().mesh == analysis.mesh() &&
           plan.plan().blocks.size() == analysis.report->blocks.blocks.size();
}

AlternativesView reduceAlternatives(const SegmentAlternatives& all, const PlanProblem& problem, int gridCells) {
    AlternativesView v;
    v.segment = all.segment;
    v.combinations = all.combinations;
    v.sampled = all.sampled;
    if (all.rows.empty()) return v;
    double t0 = all.rows[0].stepSeconds, t1 = t0;
    int64_t m0 = all.rows[0].memoryBytes, m1 = m0;
    for (const CombinationCost& r : all.rows) {
        t0 = std::min(t0, r.stepSeconds);
        t1 = std::max(t1, r.stepSeconds);
        m0 = std::min(m0, r.memoryBytes);
        m1 = std::max(m1, r.memoryBytes);
    }
    auto cell = [&](const CombinationCost& r) {
        const double x = m1 > m0 ? static_cast<double>(r.memoryBytes - m0) / static_cast<double>(m1 - m0) : 0.0;
        const double y = t1 > t0 ? (r.stepSeconds - t0) / (t1 - t0) : 0.0;
        const auto gx = static_cast<int64_t>(std::min(x * gridCells, gridCells - 1.0));
        const auto gy = static_cast<int64_t>(std::min(y * gridCells, gridCells - 1.0));
        return gx * gridCells + gy;
    };
    std::vector<std::vector<char>> taken(3, std::vector<char>(static_cast<size_t>(gridCells) * static_cast<size_t>(gridCells), 0));
    const Segment& seg = problem.analysis().cover.segments[static_cast<size_t>(all.segment)];
    for (const CombinationCost& r : all.rows) {
        int category = -1;  // 0 dominated, 1 excluded, 2 does not fit; Pareto and chosen are all kept
        if (!r.allowed) {
            ++v.excluded;
            category = 1;
        } else if (!r.fits) {
            ++v.noFit;
            category = 2;
        } else if (r.dominated) {
            ++v.dominated;
            category = 0;
        } else {
            ++v.pareto;
        }
        if (!r.chosen && category >= 0) {
            char& t = taken[static_cast<size_t>(category)][static_cast<size_t>(cell(r))];
            if (t) continue;
            t = 1;
        }
        v.rows.push_back(r);
        std::string label;
        for (size_t k = 0; k < r.combination.size(); ++k)
            label += (k ? " | " : "") + assignmentLabel(problem, seg.firstBlock + static_cast<int>(k), r.combination[k]);
        v.labels.push_back(std::move(label));
    }
    return v;
}

// ---------------------------------------------------------------------------------------------
// Helpers

QString formatSeconds(double s) {
    if (!std::isfinite(s)) return QStringLiteral("–");
    const double a = std::abs(s);
    if (a >= 10.0) return QString::number(s, 'f', 1) + QStringLiteral(" s");
    if (a >= 1.0) return QString::number(s, 'f', 2) + QStringLiteral(" s");
    if (a >= 1e-3) return QString::number(s * 1e3, 'f', a >= 0.1 ? 0 : 1) + QStringLiteral(" ms");
    if (a >= 1e-6 || a == 0) return QString::number(s * 1e6, 'f', 0) + QStringLiteral(" µs");
    return QString::number(s * 1e9, 'f', 0) + QStringLiteral(" ns");
}

QString formatBytes(double b) {
    const double a = std::abs(b);
    if (a >= 1024.0 * 1024 * 1024) return QString::number(b / (1024.0 * 1024 * 1024), 'f', a >= 100.0 * (1 << 30) ? 0 : 1) + QStringLiteral(" GiB");
    if (a >= 1024.0 * 1024) return QString::number(b / (1024.0 * 1024), 'f', 1) + QStringLiteral(" MiB");
    if (a >= 1024.0) return QString::number(b / 1024.0, 'f', 1) + QStringLiteral(" KiB");
    return QString::number(b, 'f', 0) + QStringLiteral(" B");
}

QString formatCount(int64_t n) {
    QString digits = QString::number(n < 0 ? -n : n);
    for (int i = digits.size() - 3; i > 0; i -= 3) digits.insert(i, QLatin1Char(','));
    return n < 0 ? QStringLiteral("-") + digits : digits;
}

QString provenanceText(Provenance p) { return QString::fromUtf8(provenanceName(p).data(), static_cast<int>(provenanceName(p).size())); }

std::string meshSpec(const Mesh& mesh) {
    std::string out;
    for (const MeshAxis& a : mesh.axes()) out += (out.empty() ? "" : ",") + a.name + "=" + std::to_string(a.size);
    return out;
}

std::string pinText(const std::string& lhs, const AnalysisReport& report, int32_t firstBlock, const std::vector<int32_t>& combination) {
    std::string rhs;
    for (size_t k = 0; k < combination.size(); ++k) {
        const auto& block = report.blocks.blocks[static_cast<size_t>(firstBlock) + k];
        std::string label = block.strategies[static_cast<size_t>(combination[k])].label;
        // A lone multi-axis label would be split on its commas: name the strategy by index instead.
        if (combination.size() == 1 && label.find(',') != std::string::npos) label = std::to_string(combination[k]);
        rhs += (k ? ";" : "") + label;
    }
    return lhs + "=" + rhs;
}

std::string pinTarget(const std::string& pin) {
    const auto eq = pin.find('=');
    return eq == std::string::npos || eq == 0 ? std::string() : pin.substr(0, eq);
}

int64_t localResultBytes(const Graph& graph, const Plan& plan, OpId op) {
    const Op& o = graph.op(op);
    if (static_cast<size_t>(op) >= plan.tensors.size()) return o.type.bytes();
    int64_t split = 1;
    for (const auto& axes : plan.tensors[static_cast<size_t>(op)].result.dims())
        for (const auto& a : axes) split *= plan.mesh.axisSize(a).value_or(1);
    return o.type.bytes() / std::max<int64_t>(split, 1);
}

Result<std::string> renderExport(const Graph& graph, const Plan& plan, ExportFormat format) {
    // The same steps as `cfp export`: the trace's timeline comes from evaluating the plan afresh
    // on the plan's hardware and mesh, so the bytes equal the command's.
    std::vector<TimelineEvent> timeline;
    if (format == ExportFormat::Trace) {
        auto hw = loadHardware(plan.hardware);
        if (!hw) return hw.error().withContext("plan hardware");
        auto cost = CostModel::create(*hw, plan.mesh);
        if (!cost) return cost.error();
        auto ev = evaluatePlan(graph, plan, *cost, true);
        if (!ev) return ev.error();
        timeline = std::move(ev->timeline);
    }
    return exportPlan(graph, plan, format, timeline);
}

// ---------------------------------------------------------------------------------------------
// Project files

namespace {

constexpr std::string_view kProjectFormat = "cfp-explorer-project";
constexpr int64_t kProjectVersion = 1;
constexpr int64_t kMaxProjectBytes = int64_t{16} << 20;
const StrictJson kProjectJson = StrictJson::twoCodes("project.syntax", "project.format");

}  // namespace

std::string projectToJson(const Project& p) {
    nlohmann::ordered_json j;
    j["format"] = kProjectFormat;
    j["version"] = kProjectVersion;
    j["model"] = {{"source", p.model.source},
                  {"batch", p.model.build.batch},
                  {"seq", p.model.build.seq},
                  {"dtype", std::string(dtypeName(p.model.build.dtype))},
                  {"qkv", p.model.build.qkv == QkvLayout::Separate ? "separate" : "fused"}};
    j["hardware"] = p.cluster.hardware;
    j["nodes"] = p.cluster.nodes;
    j["mesh"] = p.cluster.mesh;
    j["memory_limit_bytes"] = p.cluster.memoryLimitBytes;
    j["optimizer_sharding"] = p.cluster.policy.optimizerSharding;
    j["recompute"] = std::string(recomputePolicyName(p.cluster.policy.recompute));
    j["pins"] = p.pins;
    j["profile_db"] = p.profileDb;
    return j.dump(2) + "\n";
}

Result<Project> projectFromJson(std::string_view text, const std::string& origin) {
    auto located = [&](Error e) {
        e.message += " (in " + origin + ")";
        return e;
    };
    auto doc = kProjectJson.parse(text);
    if (!doc) return located(doc.error());
    const nlohmann::json& j = *doc;
    const StrictJson& S = kProjectJson;
    if (!j.is_object()) return located(S.typeError("", "an object", j));
    static constexpr std::string_view kKeys[] = {"format", "version", "model", "hardware", "nodes", "mesh",
                                                 "memory_limit_bytes", "optimizer_sharding", "recompute", "pins", "profile_db"};
    if (const std::string* k = firstUnknownKey(j, kKeys)) return located(S.unknownField("", *k));
    Project p;
    auto str = [&](const nlohmann::json& obj, const std::string& ptr, std::string_view key) -> Result<std::string> {
        auto m = S.member(obj, ptr, key);
        if (!m) return m.error();
        return S.string(**m, childPointer(ptr, key));
    };
    auto integer = [&](const nlohmann::json& obj, const std::string& ptr, std::string_view key, int64_t min) -> Result<int64_t> {
        auto m = S.member(obj, ptr, key);
        if (!m) return m.error();
        auto v = S.int64(**m, childPointer(ptr, key));
        if (!v) return v.error();
        if (*v < min) return makeError("project.format", "must be at least " + std::to_string(min), childPointer(ptr, key));
        return *v;
    };
    auto format = str(j, "", "format");
    if (!format) return located(format.error());
    if (*format != kProjectFormat)
        return located(makeError("project.format", "not a CFP Explorer project (format '" + *format + "')", "/format"));
    auto version = integer(j, "", "version", 0);
    if (!version) return located(version.error());
    if (*version != kProjectVersion)
        return located(makeError("project.version", "version " + std::to_string(*version) + " is not supported (supported: 1)", "/version"));
    auto model = S.member(j, "", "model");
    if (!model) return located(model.error());
    if (!(*model)->is_object()) return located(S.typeError("/model", "an object", **model));
    static constexpr std::string_view kModelKeys[] = {"source", "batch", "seq", "dtype", "qkv"};
    if (const std::string* k = firstUnknownKey(**model, kModelKeys)) return located(S.unknownField("/model", *k));
    auto source = str(**model, "/model", "source");
    if (!source) return located(source.error());
    if (source->empty()) return located(makeError("project.format", "the model source is empty", "/model/source"));
    p.model.source = *source;
    auto batch = integer(**model, "/model", "batch", 1);
    if (!batch) return located(batch.error());
    p.model.build.batch = *batch;
    auto seq = integer(**model, "/model", "seq", 0);
    if (!seq) return located(seq.error());
    p.model.build.seq = *seq;
    auto dtype = str(**model, "/model", "dtype");
    if (!dtype) return located(dtype.error());
    auto dt = parseDType(*dtype);
    if (!dt) return located(makeError("project.format", "unknown dtype '" + *dtype + "'", "/model/dtype"));
    p.model.build.dtype = *dt;
    auto qkv = str(**model, "/model", "qkv");
    if (!qkv) return located(qkv.error());
    if (*qkv != "fused" && *qkv != "separate")
        return located(makeError("project.format", "qkv must be fused or separate, got '" + *qkv + "'", "/model/qkv"));
    p.model.build.qkv = *qkv == "separate" ? QkvLayout::Separate : QkvLayout::Fused;
    auto hw = str(j, "", "hardware");
    if (!hw) return located(hw.error());
    p.cluster.hardware = *hw;
    auto nodes = integer(j, "", "nodes", 1);
    if (!nodes) return located(nodes.error());
    p.cluster.nodes = *nodes;
    auto mesh = str(j, "", "mesh");
    if (!mesh) return located(mesh.error());
    if (*mesh != "auto") {
        if (auto m = parseMesh(*mesh); !m) return located(makeError("project.format", m.error().message, "/mesh"));
    }
    p.cluster.mesh = *mesh;
    auto limit = integer(j, "", "memory_limit_bytes", 0);
    if (!limit) return located(limit.error());
    p.cluster.memoryLimitBytes = *limit;
    auto sharding = S.member(j, "", "optimizer_sharding");
    if (!sharding) return located(sharding.error());
    if (!(*sharding)->is_boolean()) return located(S.typeError("/optimizer_sharding", "true or false", **sharding));
    p.cluster.policy.optimizerSharding = (*sharding)->get<bool>();
    auto recompute = str(j, "", "recompute");
    if (!recompute) return located(recompute.error());
    auto rc = parseRecomputePolicy(*recompute);
    if (!rc) return located(makeError("project.format", "recompute must be auto, none or all, got '" + *recompute + "'", "/recompute"));
    p.cluster.policy.recompute = *rc;
    auto pins = S.member(j, "", "pins");
    if (!pins) return located(pins.error());
    if (!(*pins)->is_array()) return located(S.typeError("/pins", "an array", **pins));
    for (size_t i = 0; i < (*pins)->size(); ++i) {
        auto pin = S.string((**pins)[i], childPointer("/pins", i));
        if (!pin) return located(pin.error());
        if (pinTarget(*pin).empty())
            return located(makeError("project.format", "a pin is SEGMENT=COMBO or bN=STRATEGY, got '" + *pin + "'", childPointer("/pins", i)));
        p.pins.push_back(*pin);
    }
    auto db = str(j, "", "profile_db");
    if (!db) return located(db.error());
    p.profileDb = *db;
    return p;
}

Result<Project> readProjectFile(const std::string& path) {
    auto text = readFileLimited(path, kMaxProjectBytes);
    if (!text) return makeError("project.io", text.error().message, path);
    return projectFromJson(*text, path);
}

Status writeProjectFile(const std::string& path, const Project& project) {
    if (auto st = writeFileAtomically(path, projectToJson(project)); !st) return makeError("project.io", st.error().message, path);
    return {};
}

// ---------------------------------------------------------------------------------------------
// Explorer

Explorer::Explorer(QObject* parent) : QObject(parent) {
    qRegisterMetaType<Selection>();
    qRegisterMetaType<std::shared_ptr<const AlternativesView>>();
    connect(&m_jobs, &JobRunner::jobProgress, this, [this](JobKind kind, double fraction, const QString& text, double best) {
        if (kind != JobKind::Search) return;
        emit searchProgress(fraction, text);
        if (best > 0 && (m_bestSoFar.empty() || m_bestSoFar.back().second != best)) {
            m_bestSoFar.emplace_back(m_searchClock.elapsed() / 1000.0, best);
            emit bestSoFarChanged();
        }
    });
}

Explorer::~Explorer() = default;

Result<Cluster> Explorer::makeClusterFromSettings() const {
    auto hw = loadHardware(m_project.cluster.hardware);
    if (!hw) return hw.error().withContext("hardware");
    return makeCluster(*hw, m_project.cluster.nodes);
}

void Explorer::openModel(const std::string& source, bool searchAfter) {
    if (source != m_project.model.source) {
        m_project.model.source = source;
        m_project.pins.clear();
        emit pinsChanged();
    }
    m_model.reset();
    startAnalysis(searchAfter);
}

void Explorer::setBuildOptions(const BuildOptions& options) {
    ModelSettings next = m_project.model;
    next.build = options;
    if (next == m_project.model) return;
    m_project.model = next;
    m_model.reset();
}

void Explorer::setCluster(const ClusterSettings& cluster) { m_project.cluster = cluster; }

void Explorer::setPins(const std::vector<std::string>& pins) {
    if (pins == m_project.pins) return;
    m_project.pins = pins;
    emit pinsChanged();
}

void Explorer::analyse() { startAnalysis(false); }

void Explorer::startAnalysis(bool searchAfter) {
    m_jobs.cancel(JobKind::Search);
    auto cluster = makeClusterFromSettings();
    if (!cluster) {
        emit failed(tr("Cannot analyse"), QString::fromStdString(cluster.error().toString()));
        return;
    }
    const std::string meshText =
        m_project.cluster.mesh == "auto" ? std::to_string(cluster->devices()) : m_project.cluster.mesh;
    const int64_t gpusPerNode = cluster->hardware.gpusPerNode;
    const int64_t devices = cluster->devices();
    std::shared_ptr<const ModelData> existing = m_model;
    const ModelSettings model = m_project.model;
    emit status(tr("Loading and analysing %1…").arg(QString::fromStdString(model.source)));
    using Out = std::pair<std::shared_ptr<const ModelData>, std::shared_ptr<const AnalysisData>>;
    m_jobs.start<Out>(
        JobKind::Analysis, tr("Analysing"),
        [existing, model, meshText, gpusPerNode, devices](JobContext& ctx) -> Result<Out> {
            std::shared_ptr<const ModelData> data = existing;
            if (!data) {
                ctx.progress(0.0, QStringLiteral("loading %1").arg(QString::fromStdString(model.source)));
                auto loaded = loadModel(model.source, model.build);
                if (!loaded) return loaded.error();
                auto md = std::make_shared<ModelData>();
                md->loaded = std::move(*loaded);
                md->stats = computeStats(md->loaded.graph);
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
        [this, searchAfter](Result<Out> r) {
            const bool thenSearch = searchAfter || m_searchAfterAnalysis;
            m_searchAfterAnalysis = false;
            if (!r) {
                if (r.error().code != "job.cancelled")
                    emit failed(tr("Cannot open the model"), QString::fromStdString(r.error().toString()));
                return;
            }
            const bool newModel = r->first != m_model;
            m_model = r->first;
            m_analysis = r->second;
            if (newModel) {
                m_previousPlan.reset();
                m_plan.reset();
                emit planCleared();
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
    auto cluster = makeClusterFromSettings();
    if (!cluster) {
        emit failed(tr("Cannot search"), QString::fromStdString(cluster.error().toString()));
        return;
    }
    std::string meshText = m_project.cluster.mesh;
    if (meshText == "auto" && !m_project.pins.empty()) {
        // Pins name strategies by mesh axes, so they hold on one mesh: the current plan's.
        if (!m_plan) {
            emit failed(tr("Cannot search"), tr("Pins name strategies on one mesh: choose a mesh, or search once without pins."));
            return;
        }
        meshText = meshSpec(m_plan->plan().mesh);
    }
    Project request = m_project;
    std::shared_ptr<const ModelData> model = m_model;
    m_bestSoFar.clear();
    m_searchClock.start();
    emit bestSoFarChanged();
    emit status(tr("Searching on mesh %1…").arg(QString::fromStdString(meshText)));
    m_jobs.start<std::shared_ptr<const PlanData>>(
        JobKind::Search, tr("Searching"),
        [model, request, meshText, cluster = *cluster](JobContext& ctx) -> Result<std::shared_ptr<const PlanData>> {
            PlannerOptions options;
            options.pins = request.pins;
            options.memoryLimitBytes = request.cluster.memoryLimitBytes;
            options.checkBlocks = true;  // the overview shows the block check and the search space
            options.policy = request.cluster.policy;
            // Measurements from the profile DB replace the model where they exist; a DB without
            // this hardware's measurements leaves the analytic model in charge (and says so).
            std::string profileNote;
            if (!request.profileDb.empty()) {
                auto pm = profiler::planningMeasurements(request.profileDb, request.cluster.hardware);
                if (pm) {
                    options.measured = pm->measured;
                    options.calibration = pm->calibration;
                    profileNote = "profile DB " + request.profileDb + ": " + std::to_string(pm->measured.size()) + " measured ops" +
                                  (pm->calibration.empty() ? "" : ", calibrated") +
                                  (pm->hardware.fingerprint.interconnect == "simulated" ? " (simulated)" : "");
                } else {
                    profileNote = "profile DB not used: " + pm.error().message;
                }
            }
            options.cancel = ctx.cancelFlag();
            options.progress = [&ctx](const PlanProgress& p) {
                double f = 0;
                if (p.stage == "search") f = p.fraction;
                else if (p.stage == "baselines" || p.stage == "evaluate") f = 1.0;
                const double overall = p.stage == "baselines" ? 0.97 : std::min(0.95, (p.meshIndex + f) / std::max(1, p.meshCount));
                ctx.progress(overall,
                             QStringLiteral("%1 · mesh %2/%3 %4").arg(QString::fromStdString(p.stage)).arg(p.meshIndex + 1).arg(p.meshCount)
                                 .arg(QString::fromStdString(p.mesh)),
                             p.bestSeconds);
            };
            auto outcome = planGraph(model->graph(), cluster, meshText, options);
            if (!outcome) return outcome.error();
            Plan& plan = outcome->plan;
            const LoadedModel& m = model->loaded;
            plan.modelSource = m.spec;
            if (m.options) {
                plan.batch = m.options->batch;
                plan.seq = m.options->seq;
                plan.dtype = std::string(dtypeName(m.options->dtype));
                plan.qkv = m.options->qkv == QkvLayout::Separate ? "separate" : "fused";
            }
            plan.hardware = request.cluster.hardware;
            auto data = std::make_shared<PlanData>();
            data->model = model;
            auto shared = std::make_shared<const PlanOutcome>(std::move(*outcome));
            data->outcome = shared;
            data->analysis = AnalysisData::make(model, std::shared_ptr<const AnalysisReport>(shared, &shared->problem->analysis()));
            auto assignment = assignmentOf(*shared->problem, shared->plan);
            if (!assignment) return assignment.error();
            data->strategy = std::move(*assignment);
            auto mask = shared->problem->applyPins(request.pins);
            if (mask) data->mask = *mask;
            data->request = request;
            data->profileNote = profileNote;
            ctx.progress(1.0, QStringLiteral("done"), shared->plan.predictedStepSeconds);
            return std::shared_ptr<const PlanData>(data);
        },
        [this](Result<std::shared_ptr<const PlanData>> r) {
            if (!r) {
                if (r.error().code != "plan.cancelled" && r.error().code != "job.cancelled")
                    emit failed(tr("Search failed"), QString::fromStdString(r.error().toString()));
                return;
            }
            const double best = (*r)->plan().predictedStepSeconds;
            if (m_bestSoFar.empty() || m_bestSoFar.back().second != best) {
                m_bestSoFar.emplace_back(m_searchClock.elapsed() / 1000.0, best);
                emit bestSoFarChanged();
            }
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
            emit status(tr("Plan: %1 per step on mesh %2, %3 of %4 per device")
                            .arg(formatSeconds(p.evaluatorStepSeconds), QString::fromStdString(p.mesh.toString()),
                                 formatBytes(static_cast<double>(p.memory.total())), formatBytes(static_cast<double>(p.memoryLimitBytes))));
        });
}

void Explorer::cancelSearch() {
    if (!m_jobs.isRunning(JobKind::Search)) return;
    m_jobs.cancel(JobKind::Search);
    emit status(tr("Search cancelled"));
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
            auto alt = segmentAlternatives(*plan->outcome->problem, plan->strategy, segment, plan->plan().memoryLimitBytes, plan->mask,
                                           kMaxCombinationsShown);
            if (!alt) return alt.error();
            return std::make_shared<const AlternativesView>(reduceAlternatives(*alt, *plan->outcome->problem));
        },
        [this, plan](Result<std::shared_ptr<const AlternativesView>> r) {
            if (!r || plan != m_plan) return;
            emit alternativesReady(*r);
        });
}

void Explorer::writeFromPlan(const QString& path, const QString& title, const QString& failTitle,
                             std::function<Result<std::string>(const PlanData&)> render) {
    if (!m_plan) {
        emit failed(failTitle, tr("There is no plan yet: run the search first."));
        return;
    }
    std::shared_ptr<const PlanData> plan = m_plan;
    const std::string file = path.toStdString();
    m_jobs.start<std::string>(
        JobKind::Export, title,
        [plan, file, render = std::move(render)](JobContext&) -> Result<std::string> {
            auto text = render(*plan);
            if (!text) return text.error();
            if (auto st = writeFileAtomically(file, *text); !st) return st.error();
            return file;
        },
        [this, failTitle](Result<std::string> r) {
            if (!r) {
                emit failed(failTitle, QString::fromStdString(r.error().toString()));
                return;
            }
            emit status(tr("Wrote %1").arg(QString::fromStdString(*r)));
            emit exported(QString::fromStdString(*r));
        });
}

void Explorer::exportPlan(ExportFormat format, const QString& path) {
    writeFromPlan(path, tr("Exporting"), tr("Export failed"),
                  [format](const PlanData& plan) { return renderExport(plan.model->graph(), plan.plan(), format); });
}

void Explorer::savePlan(const QString& path) {
    // As writePlanFile does: the plan is checked against its graph before it is written.
    writeFromPlan(path, tr("Saving plan"), tr("Cannot save the plan"), [](const PlanData& plan) -> Result<std::string> {
        if (auto st = checkPlanAgainstGraph(plan.plan(), plan.model->graph()); !st) return st.error();
        return planToText(plan.plan(), plan.model->graph());
    });
}

Status Explorer::saveProject(const QString& path) {
    Project p = m_project;
    // Pins name one mesh's strategies: a project with pins records that mesh rather than "auto".
    if (!p.pins.empty() && p.cluster.mesh == "auto" && m_plan) p.cluster.mesh = meshSpec(m_plan->plan().mesh);
    return writeProjectFile(path.toStdString(), p);
}

Status Explorer::loadProject(const QString& path, bool searchAfter) {
    auto p = readProjectFile(path.toStdString());
    if (!p) return p.error();
    const bool sameModel = p->model == m_project.model;
    m_project = *p;
    emit pinsChanged();
    if (!sameModel) m_model.reset();
    m_plan.reset();
    m_previousPlan.reset();
    emit planCleared();
    startAnalysis(searchAfter);
    return {};
}

void Explorer::select(const Selection& selection) {
    if (selection == m_selection) return;
    m_selection = selection;
    emit selectionChanged(m_selection);
}

}  // namespace cfp::explorer
