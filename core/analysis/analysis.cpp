#include "analysis/analysis.h"

#include <chrono>
#include <cmath>
#include <map>

#include "rules/op_rules.h"

namespace cfp {

int64_t opStrategyCount(const Graph& graph, const Op& op, const Mesh& mesh) {
    auto rule = shardingRuleFor(graph, op);
    if (!rule) return 1;
    int64_t count = 1;
    for (const MeshAxis& axis : mesh.axes()) {
        int64_t choices = 1;  // axis unused
        if (axis.size > 1)
            for (const Factor& f : rule->factors)
                if (f.kind != FactorKind::Blocked && f.size % axis.size == 0) ++choices;
        count = count > INT64_MAX / choices ? INT64_MAX : count * choices;
    }
    return count;
}

Result<AnalysisReport> analyzeGraph(const Graph& graph, const Mesh& mesh, const AnalysisOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    auto lap = [&last] {
        const auto now = std::chrono::steady_clock::now();
        const double s = std::chrono::duration<double>(now - last).count();
        last = now;
        return s;
    };
    AnalysisReport report;
    auto blocks = findParallelBlocks(graph, mesh, options.threads, options.sequenceAxis);
    if (!blocks) return blocks.error();
    report.blocks = std::move(*blocks);
    report.blocksSeconds = lap();
    if (options.check) report.check = checkBlocks(graph, report.blocks, options.threads);
    report.checkSeconds = lap();

    std::vector<BlockView> views;
    views.reserve(report.blocks.blocks.size());
    for (const ParallelBlock& b : report.blocks.blocks)
        views.push_back(BlockView{b.members, static_cast<int64_t>(b.strategies.size())});
    auto signatures = blockSignatures(graph, views);
    if (!signatures) return signatures.error();
    auto cover = computeSegmentCover(*signatures, options.cover);
    if (!cover) return cover.error();
    report.cover = std::move(*cover);
    report.segmentsSeconds = lap();

    if (options.searchSpace) {
        report.opStrategyCounts.reserve(static_cast<size_t>(graph.size()));
        // A manual region's ops (and its boundaries) have the one strategy the source gave them.
        const std::vector<char> manual = manualRegionOps(graph);
        for (const Op& op : graph.ops())
            report.opStrategyCounts.push_back(manual[static_cast<size_t>(op.id)] || isSourcePinned(op, Partitioning::Auto)
                                                  ? 1 : opStrategyCount(graph, op, mesh));
        auto space = searchSpaceReport(report.opStrategyCounts, views, report.cover);
        if (!space) return space.error();
        report.space = std::move(*space);
    }
    report.coverage = report.blocks.coverage(graph);
    report.spaceSeconds = lap();
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

nlohmann::ordered_json analysisToJson(const Graph& graph, const AnalysisReport& r) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["model"] = graph.name();
    j["mesh"] = r.blocks.mesh.toString();
    j["devices"] = r.blocks.mesh.deviceCount();
    j["ops"] = graph.size();
    j["blocks"] = r.blocks.blocks.size();

    int64_t opsInBlocks = 0;
    for (const ParallelBlock& b : r.blocks.blocks) opsInBlocks += static_cast<int64_t>(b.members.size());
    j["ops_in_blocks"] = opsInBlocks;
    std::map<std::string, int64_t> reasons;
    for (const UnassignedOp& u : r.blocks.resolvedLater) ++reasons[std::string(unassignedReasonName(u.reason))];
    Json later = Json::object();
    for (const auto& [reason, n] : reasons) later[reason] = n;
    j["ops_resolved_later"] = later;
    j["ops_covered_fraction"] = r.coverage;
    j["comm_free_check"] = r.check.summary();
    j["comm_free_edges_checked"] = r.check.edgesChecked;

    j["segment_types"] = r.cover.types.size();
    Json perType = Json::array();
    for (const SegmentType& t : r.cover.types) {
        perType.push_back({{"type", t.id},
                           {"blocks", t.blockFingerprints.size()},
                           {"occurrences", t.occurrences},
                           {"strategies_per_block", t.strategyCounts},
                           {"combinations", t.combinations}});
    }
    j["blocks_per_segment_type"] = perType;
    Json segments = Json::array();
    for (const RepeatRun& run : repeatRuns(r.cover)) {
        const Segment& first = r.cover.segments[static_cast<size_t>(run.firstSegment)];
        segments.push_back({{"type", run.type},
                            {"count", run.count},
                            {"position", run.firstSegment},
                            {"first_block", run.firstBlock},
                            {"blocks", first.blockCount}});
    }
    j["segments"] = segments;
    j["segment_cover_quality"] = std::string(coverQualityName(r.cover.quality));

    Json strategies = Json::object();
    std::map<int64_t, int64_t> hist;
    for (int64_t s : r.space.strategiesPerBlock) ++hist[s];
    for (const auto& [s, n] : hist) strategies[std::to_string(s)] = n;
    j["strategies_per_block"] = strategies;
    j["search_space_log10"] = {{"op_level", r.space.opLevelLog10},
                               {"block_level", r.space.blockLevelLog10},
                               {"segment_level", r.space.segmentLevelLog10},
                               {"profiled_combinations", r.space.profiledCombinationsLog10},
                               {"dp_states", r.space.dpStatesLog10}};
    Json unsupported = Json::array();
    for (const UnsupportedOp& u : r.blocks.unsupported)
        unsupported.push_back({{"name", u.name}, {"kind", u.kind}, {"message", u.message}});
    j["unsupported_ops"] = unsupported;
    j["analysis_seconds"] = r.seconds;
    j["stage_seconds"] = {{"blocks", r.blocksSeconds},
                          {"check", r.checkSeconds},
                          {"segments", r.segmentsSeconds},
                          {"search_space", r.spaceSeconds}};
    return j;
}

}  // namespace cfp
