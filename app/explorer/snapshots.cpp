#include "snapshots.h"

#include <algorithm>
#include <cctype>

namespace cfp::explorer {

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
    // One layer on its own (layer 0, which also computes what every layer reads): its own name.
    if (numbered && !repeated && common.size() == 2 && isStack(common[0])) return common[0] + "." + common[1];
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
    a->decisions = countOpDecisions(a->graph(), a->report->blocks);
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

}  // namespace cfp::explorer
