// The trace export: the simulated step's timeline (plan/step_sim.h) as Chrome/Perfetto trace events
// (docs/exporters.md).

#include "export/export_internal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

namespace cfp::exporting {

namespace {

// A kernel's name with its scope in front ("layers.0.attn.qkv: dot.34"), so the module shows in
// the viewer's slices and search; names that already hold the scope stay as they are.
std::string eventName(const TimelineEvent& e) {
    if (e.scope.empty() || e.name.find(e.scope) != std::string::npos) return e.name;
    return e.scope + ": " + e.name;
}

// Times in whole nanoseconds: an event's start and end are each rounded once, and its duration is
// their difference, so events that follow each other on a track stay back to back (rounding start
// and duration separately let them overlap by 1 ns, and Perfetto drops overlapping slices).
int64_t nanos(double seconds) { return std::llround(seconds * 1e9); }
double micros(int64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

Result<std::string> exportTrace(const Graph& graph, const Plan& plan, std::span<const TimelineEvent> timeline, bool everyDevice) {
    using Json = nlohmann::ordered_json;

    for (size_t i = 0; i < timeline.size(); ++i) {
        const auto& e = timeline[i];
        const std::string where = "/timeline/" + std::to_string(i);
        if (!std::isfinite(e.startSeconds) || !std::isfinite(e.durationSeconds))
            return makeError("export.bad_timeline", "event " + e.name + " has a non-finite time", where);
        if (e.durationSeconds < 0)
            return makeError("export.bad_timeline", "event " + e.name + " has a negative duration", where);
    }

    // Tracks: compute first, then comm:<axis> in mesh order, then any other track by name.
    std::set<std::string> present;
    for (const auto& e : timeline) present.insert(e.track.empty() ? std::string("compute") : e.track);
    std::vector<std::string> tracks;
    auto take = [&](const std::string& t) {
        if (present.erase(t)) tracks.push_back(t);
    };
    take("compute");
    for (const auto& a : plan.mesh.axes()) take("comm:" + a.name);
    // The rest by name, the first number in order ("rank 2" before "rank 2 comm" before "rank 10").
    std::vector<std::string> rest(present.begin(), present.end());
    auto numberAt = [](const std::string& t) -> std::tuple<std::string, int64_t, std::string> {
        size_t k = 0;
        while (k < t.size() && !(t[k] >= '0' && t[k] <= '9')) ++k;
        size_t e = k;
        while (e < t.size() && t[e] >= '0' && t[e] <= '9') ++e;
        int64_t n = -1;
        if (e > k && e - k < 18) std::from_chars(t.data() + k, t.data() + e, n);
        return {t.substr(0, k), n, t.substr(e)};
    };
    std::stable_sort(rest.begin(), rest.end(), [&](const std::string& a, const std::string& b) { return numberAt(a) < numberAt(b); });
    tracks.insert(tracks.end(), rest.begin(), rest.end());
    std::map<std::string, int> tid;
    for (size_t i = 0; i < tracks.size(); ++i) tid[tracks[i]] = static_cast<int>(i) + 1;

    std::vector<size_t> order(timeline.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto trackOf = [&](const TimelineEvent& e) { return tid.at(e.track.empty() ? std::string("compute") : e.track); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const int64_t ta = nanos(timeline[a].startSeconds), tb = nanos(timeline[b].startSeconds);
        if (ta != tb) return ta < tb;
        return trackOf(timeline[a]) < trackOf(timeline[b]);
    });

    // Processes: by default one timeline per distinct role — without pipeline stages every device
    // runs the same program (SPMD), with them each stage rank's devices do. On request a process per
    // device, its communication tracks named with the devices of its group on that axis.
    struct Process {
        std::string name;
        std::map<std::string, std::string> tracks;  // track → its name in this process
    };
    const int64_t stageDevices = plan.mesh.deviceCount();
    const int64_t stages = plan.pipeline ? plan.pipeline->stages : 1;
    const int64_t devices = stageDevices * stages;
    std::string title = "CFP predicted step: " + plan.model + " on " + plainMeshText(plan.mesh);
    if (plan.pipeline) title += " per stage, " + std::to_string(stages) + " pipeline stages";
    std::vector<Process> processes;
    if (!everyDevice) {
        Process p{title, {}};
        if (!plan.pipeline && devices > 1) p.name += " (devices 0-" + std::to_string(devices - 1) + " each run this timeline)";
        for (const auto& t : tracks) p.tracks[t] = t;
        processes.push_back(std::move(p));
    } else {
        const int64_t limit = 4'000'000;
        if (devices * static_cast<int64_t>(timeline.size()) > limit)
            return makeError("export.too_large", std::to_string(devices) + " devices × " + std::to_string(timeline.size()) +
                                                     " events is over " + std::to_string(limit) +
                                                     " trace events; export one timeline per role (the default) instead");
        const auto& axes = plan.mesh.axes();
        for (int64_t d = 0; d < devices; ++d) {
            const int64_t local = d % stageDevices, rank = d / stageDevices;
            // Mesh coordinates, row-major with the first axis outermost (sharding/mesh.h).
            std::vector<int64_t> coord(axes.size());
            std::vector<int64_t> stride(axes.size(), 1);
            for (size_t i = axes.size(); i-- > 1;) stride[i - 1] = stride[i] * axes[i].size;
            std::string where;
            for (size_t i = 0; i < axes.size(); ++i) {
                coord[i] = local / stride[i] % axes[i].size;
                where += (where.empty() ? "" : ", ") + axes[i].name + "=" + std::to_string(coord[i]);
            }
            Process p;
            p.name = "device " + std::to_string(d);
            if (plan.gpusPerNode > 0) p.name += " (node " + std::to_string(d / plan.gpusPerNode) + ", GPU " + std::to_string(d % plan.gpusPerNode) + ")";
            p.name += ": " + (plan.pipeline ? "stage rank " + std::to_string(rank) + ", " : std::string()) + where;
            for (const auto& t : tracks) {
                if (plan.pipeline) {
                    // A stage rank's track and its own sub-tracks ("rank 2", "rank 2 …").
                    const std::string mine = "rank " + std::to_string(rank);
                    if (t == mine || t.rfind(mine + " ", 0) == 0) p.tracks[t] = t;
                    continue;
                }
                std::string name = t;
                if (t.rfind("comm:", 0) == 0) {
                    const std::string axis = t.substr(5, t.find(' ') == std::string::npos ? std::string::npos : t.find(' ') - 5);
                    if (auto i = plan.mesh.axisIndex(axis)) {
                        std::string group;
                        for (int64_t k = 0; k < axes[*i].size; ++k)
                            group += (group.empty() ? "" : ",") +
                                     std::to_string(rank * stageDevices + local + (k - coord[*i]) * stride[*i]);
                        const size_t suffix = t.find(' ');  // " (overlapped)"
                        name = t.substr(0, suffix) + " with devices " + group + (suffix == std::string::npos ? "" : t.substr(suffix));
                    }
                }
                p.tracks[t] = name;
            }
            processes.push_back(std::move(p));
        }
    }

    std::vector<Json> events;
    for (size_t pi = 0; pi < processes.size(); ++pi) {
        const int pid = static_cast<int>(pi) + 1;
        events.push_back(Json{{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_name"},
                              {"args", Json{{"name", processes[pi].name}}}});
        events.push_back(Json{{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "process_sort_index"},
                              {"args", Json{{"sort_index", pid}}}});
        for (const auto& t : tracks) {
            auto it = processes[pi].tracks.find(t);
            if (it == processes[pi].tracks.end()) continue;
            events.push_back(Json{{"ph", "M"}, {"pid", pid}, {"tid", tid[t]}, {"name", "thread_name"},
                                  {"args", Json{{"name", it->second}}}});
            events.push_back(Json{{"ph", "M"}, {"pid", pid}, {"tid", tid[t]}, {"name", "thread_sort_index"},
                                  {"args", Json{{"sort_index", tid[t]}}}});
        }
    }
    double end = 0;
    int64_t empty = 0;  // events shorter than a nanosecond: kernels fused into their consumer
    for (size_t pi = 0; pi < processes.size(); ++pi) {
        const int pid = static_cast<int>(pi) + 1;
        for (size_t i : order) {
            const auto& e = timeline[i];
            const std::string& track = e.track.empty() ? std::string("compute") : e.track;
            if (!processes[pi].tracks.count(track)) continue;
            end = std::max(end, e.startSeconds + e.durationSeconds);
            const int64_t startNs = nanos(e.startSeconds), durNs = nanos(e.startSeconds + e.durationSeconds) - startNs;
            if (durNs <= 0) {
                if (pi == 0 || plan.pipeline) ++empty;
                continue;
            }
            Json args = Json::object();
            if (e.op >= 0 && e.op < graph.size()) {
                args["op"] = graph.op(e.op).name;
                args["opId"] = e.op;
            }
            if (!e.scope.empty()) args["scope"] = e.scope;
            if (!e.detail.empty()) args["detail"] = e.detail;
            events.push_back(Json{{"ph", "X"},
                                  {"pid", pid},
                                  {"tid", trackOf(e)},
                                  {"name", eventName(e)},
                                  {"cat", e.category.empty() ? std::string("other") : e.category},
                                  {"ts", micros(startNs)},
                                  {"dur", micros(durNs)},
                                  {"args", std::move(args)}});
        }
    }

    Json other = {
        {"generator", "CFP Explorer"},
        {"model", plan.model},
        {"modelSource", plan.modelSource},
        {"batch", plan.build ? plan.build->batch : 0},
        {"seq", plan.build ? plan.build->seq : 0},
        {"hardware", plan.hardware},
        {"hardwareName", plan.hardwareName},
        {"nodes", plan.nodes},
        {"gpusPerNode", plan.gpusPerNode},
        {"mesh", plan.mesh.toString()},
        {"devices", plan.mesh.deviceCount()},
        {"predictedStepSeconds", plan.predictedStepSeconds},
        {"evaluatorStepSeconds", plan.evaluatorStepSeconds},
        {"stepSeconds", plan.stepSeconds()},
        {"simulatedComputeSeconds", plan.simulated.computeSeconds},
        {"simulatedExposedCommunicationSeconds", plan.simulated.exposedCommSeconds},
        {"simulatedOverlappedCommunicationSeconds", plan.simulated.overlappedCommSeconds},
        {"simulatedContentionSeconds", plan.simulated.contentionSeconds},
        {"computeSeconds", plan.step.computeSeconds},
        {"collectiveSeconds", plan.step.collectiveSeconds},
        {"reshardSeconds", plan.step.reshardSeconds},
        {"provenance", std::string(provenanceName(plan.step.provenance))},
        {"memoryBytesPerDevice", plan.memory.total()},
        {"memoryLimitBytes", plan.memoryLimitBytes},
        {"segments", plan.segments.size()},
        {"blocks", plan.blocks.size()},
        {"searchExact", plan.searchExact},
        {"pipelineStages", plan.pipeline ? plan.pipeline->stages : 1},
        {"processes", everyDevice ? "one per device" : "one per role"},
        {"timelineEvents", timeline.size()},
        {"eventsWithoutDuration", empty},
        {"timelineSeconds", end},
    };

    // One event per line: readable, diffable, and still one JSON document. Invalid UTF-8 in names
    // becomes U+FFFD instead of failing.
    const auto dump = [](const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); };
    std::string out = "{\"traceEvents\":[\n";
    for (size_t i = 0; i < events.size(); ++i) {
        out += dump(events[i]);
        out += i + 1 < events.size() ? ",\n" : "\n";
    }
    out += "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":" + dump(other) + "\n}\n";
    return out;
}

}  // namespace cfp::exporting
