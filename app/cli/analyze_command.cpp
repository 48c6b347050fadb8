// `cfp analyze`: ParallelBlocks, the block check, segments and the search space on a mesh.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "analysis/analysis.h"
#include "plan/op_owners.h"
#include "segments/segments.h"

namespace cfp::cli {

namespace {

void printAnalysis(const LoadedModel& m, const AnalysisReport& r) {
    using namespace cfp::cli;
    const Graph& g = m.graph;
    std::cout << g.name() << " on mesh " << r.blocks.mesh.toString() << ": " << withCommas(g.size())
              << " ops, analysed in " << fixed(r.seconds * 1000.0, 1) << " ms\n\n";
    auto row = [](const std::string& label, const std::string& value) {
        std::printf("  %-22s %s\n", label.c_str(), value.c_str());
    };
    int64_t inBlocks = 0;
    for (const ParallelBlock& b : r.blocks.blocks) inBlocks += static_cast<int64_t>(b.members.size());
    std::map<int64_t, int64_t> hist;
    for (int64_t s : r.space.strategiesPerBlock) ++hist[s];
    std::string strategies;
    for (const auto& [s, n] : hist) strategies += (strategies.empty() ? "" : ", ") + std::to_string(n) + " with " + std::to_string(s);
    row("ParallelBlocks", withCommas(static_cast<int64_t>(r.blocks.blocks.size())) + "  (strategies: " + strategies + ")");
    row("block check", r.check.pass ? "pass (" + withCommas(r.check.edgesChecked) + " intra-block edges, no resharding)"
                                    : "FAIL: " + r.check.firstViolation);
    const OpDecisionCounts d = countOpDecisions(g, r.blocks);
    row("ops", withCommas(d.inBlocks) + " in blocks, " + withCommas(d.follow) + " follow a block, " + withCommas(d.pulled) +
                   " pulled by a consumer, " + withCommas(d.constantFolded) + " constant-folded, " +
                   withCommas(d.fixedFollowing + d.replicated) + " fixed (" + withCommas(d.replicated) + " replicated)");
    std::map<std::string, int64_t> reasons;
    for (const UnassignedOp& u : r.blocks.resolvedLater) ++reasons[std::string(unassignedReasonName(u.reason))];
    std::string later;
    for (const auto& [reason, n] : reasons) later += (later.empty() ? "" : ", ") + reason + " " + withCommas(n);
    row("outside blocks, why", later.empty() ? "none" : later);
    std::string opaque;
    for (const auto& [target, n] : d.opaqueByTarget) opaque += (opaque.empty() ? "" : ", ") + target + " " + withCommas(n);
    row("opaque ops", opaque.empty() ? "none" : opaque + "  (no sharding rule: block boundaries, kept replicated)");
    std::cout << "\n  segments: " << r.cover.types.size() << " types, " << r.cover.segments.size() << " segments ("
              << coverQualityName(r.cover.quality) << " cover)\n";
    for (const RepeatRun& run : repeatRuns(r.cover)) {
        const SegmentType& t = r.cover.types[static_cast<size_t>(run.type)];
        std::printf("    T%-3d %2zu block%s x %-4d from block %-5d %s combinations\n", run.type, t.blockFingerprints.size(),
                    t.blockFingerprints.size() == 1 ? " " : "s", run.count, run.firstBlock,
                    t.combinations == INT64_MAX ? ("1e" + fixed(t.combinationsLog10, 1)).c_str()
                                                : withCommas(t.combinations).c_str());
    }
    std::cout << "\n  search space (log10):  op level " << fixed(r.space.opLevelLog10, 1) << ", block level "
              << fixed(r.space.blockLevelLog10, 1) << ", segment level " << fixed(r.space.segmentLevelLog10, 2) << "\n";
}

}  // namespace

int cmdAnalyze(const std::vector<std::string>& argv) {
    OptionSpec spec = modelOptionSpec();
    spec.valued.insert({"--mesh", "--devices", "--gpus-per-node"});
    spec.flags.insert("--json");
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp analyze [MODEL] [--mesh M] [options]\n\n"
                     "Finds ParallelBlocks (operator groups where one partition choice propagates with no\n"
                     "communication), checks them independently, folds repeated segments and reports the\n"
                     "search space.\n\n"
                     "  --mesh M           device mesh: 8, 2x4, or dp=2,tp=4 (default 8)\n"
                     "  --devices N        check the mesh uses exactly N devices\n"
                     "  --gpus-per-node G  for intra/inter-node link classes of mesh axes (default 8)\n"
                  << kModelOptionsHelp << "  --json             machine-readable output\n";
        return kExitOk;
    }
    const std::string meshText = args->value("--mesh").value_or("8");
    auto mesh = parseMesh(meshText);
    if (!mesh) return fail(mesh.error().withContext("--mesh"));
    if (auto v = args->value("--devices")) {
        auto n = cli::parsePositive("--devices", *v);
        if (!n) return fail(n.error());
        if (auto st = checkDeviceCount(*mesh, *n); !st) return fail(st.error().withContext("--mesh"));
    }
    int64_t gpusPerNode = 8;
    if (auto v = args->value("--gpus-per-node")) {
        auto n = cli::parsePositive("--gpus-per-node", *v);
        if (!n) return fail(n.error());
        gpusPerNode = *n;
    }
    auto linked = assignLinkClasses(*mesh, gpusPerNode);
    if (!linked) return fail(linked.error().withContext("--mesh"));
    auto model = loadFromArgs(*args);
    if (!model) return fail(model.error());
    auto report = analyzeGraph(model->graph, *linked);
    if (!report) return fail(report.error());
    if (args->has("--json")) {
        auto j = analysisToJson(model->graph, *report);
        const OpDecisionCounts d = countOpDecisions(model->graph, report->blocks);
        j["ops_by_decision"] = {{"in_blocks", d.inBlocks},          {"follow_block", d.follow},
                                {"pulled", d.pulled},               {"constant_folded", d.constantFolded},
                                {"fixed_following", d.fixedFollowing}, {"replicated", d.replicated}};
        j["opaque_ops_by_target"] = nlohmann::ordered_json(d.opaqueByTarget);
        std::cout << j.dump(2) << '\n';
        return kExitOk;
    }
    printAnalysis(*model, *report);
    return kExitOk;
}

}  // namespace cfp::cli
