#include "plan/alternatives.h"

#include <algorithm>
#include <limits>
#include <random>
#include <set>

namespace cfp {

Result<Assignment> assignmentOf(const PlanProblem& problem, const Plan& plan) {
    if (static_cast<int>(plan.blocks.size()) != problem.blockCount())
        return makeError("plan.mismatch", "the plan has " + std::to_string(plan.blocks.size()) + " blocks, the problem " +
                                              std::to_string(problem.blockCount()));
    Assignment out;
    out.reserve(plan.blocks.size());
    for (const BlockChoice& c : plan.blocks) out.push_back({c.strategy, c.recompute});
    CFP_TRY(problem.checkAssignment(out));
    return out;
}

std::string assignmentLabel(const PlanProblem& problem, int block, const BlockAssignment& choice) {
    const auto& strategies = problem.analysis().blocks.blocks[static_cast<size_t>(block)].strategies;
    std::string label = strategies[static_cast<size_t>(choice.strategy)].label;
    // Only where the search chooses recomputation per block does a row say so.
    if (choice.recompute && problem.policy().recompute == RecomputePolicy::Auto) label += " +recompute";
    return label;
}

Result<SegmentAlternatives> segmentAlternatives(const PlanProblem& problem, const Assignment& assignment,
                                                int32_t segment, int64_t limitBytes, const StrategyMask& allowed,
                                                int64_t maxRows) {
    const auto& segments = problem.analysis().cover.segments;
    if (segment < 0 || static_cast<size_t>(segment) >= segments.size())
        return makeError("plan.bad_segment", "no segment " + std::to_string(segment) + " (the chain has " +
                                                 std::to_string(segments.size()) + ")");
    CFP_TRY(problem.checkAssignment(assignment));
    auto count = [&](int block) { return static_cast<int32_t>(problem.choices(block).size()); };
    // The assignment in choice indices (rows are enumerated over them).
    std::vector<int32_t> strategy(assignment.size());
    for (int b = 0; b < problem.blockCount(); ++b) {
        const auto& choices = problem.choices(b);
        strategy[static_cast<size_t>(b)] = static_cast<int32_t>(std::find(choices.begin(), choices.end(), assignment[static_cast<size_t>(b)]) - choices.begin());
    }
    const Segment& seg = segments[static_cast<size_t>(segment)];
    SegmentAlternatives out;
    out.segment = segment;
    int64_t total = 1;
    for (int k = 0; k < seg.blockCount; ++k) {
        const int64_t n = count(seg.firstBlock + k);
        total = total > std::numeric_limits<int64_t>::max() / std::max<int64_t>(n, 1) ? std::numeric_limits<int64_t>::max() : total * n;
    }
    out.combinations = total;
    const int64_t cap = std::max<int64_t>(maxRows, 1);
    out.sampled = total > cap;

    // The combinations to evaluate: all of them, or (beyond the cap) the chosen one, every change
    // of one block of it, and a uniform sample of the rest (fixed seed: the same rows every time).
    std::vector<int32_t> chosenCombo(static_cast<size_t>(seg.blockCount));
    for (int k = 0; k < seg.blockCount; ++k) chosenCombo[static_cast<size_t>(k)] = strategy[static_cast<size_t>(seg.firstBlock + k)];
    std::set<std::vector<int32_t>> picked;
    if (!out.sampled) {
        std::vector<int32_t> combo(static_cast<size_t>(seg.blockCount), 0);
        for (int64_t r = 0; r < total; ++r) {
            picked.insert(combo);
            for (int k = seg.blockCount - 1; k >= 0; --k) {
                if (++combo[static_cast<size_t>(k)] < count(seg.firstBlock + k)) break;
                combo[static_cast<size_t>(k)] = 0;
            }
        }
    } else {
        picked.insert(chosenCombo);
        for (int k = 0; k < seg.blockCount && static_cast<int64_t>(picked.size()) < cap; ++k)
            for (int32_t s = 0; s < count(seg.firstBlock + k) && static_cast<int64_t>(picked.size()) < cap; ++s) {
                std::vector<int32_t> c = chosenCombo;
                c[static_cast<size_t>(k)] = s;
                picked.insert(c);
            }
        std::mt19937_64 rng(0x9e3779b97f4a7c15ULL ^ static_cast<uint64_t>(segment));
        std::vector<int32_t> c(static_cast<size_t>(seg.blockCount));
        while (static_cast<int64_t>(picked.size()) < cap) {
            for (int k = 0; k < seg.blockCount; ++k)
                c[static_cast<size_t>(k)] = static_cast<int32_t>(rng() % static_cast<uint64_t>(count(seg.firstBlock + k)));
            picked.insert(c);
        }
    }

    auto isAllowed = [&](int block, const BlockAssignment& c) {
        if (allowed.empty() || allowed[static_cast<size_t>(block)].empty()) return true;
        return allowed[static_cast<size_t>(block)][static_cast<size_t>(c.strategy)] != 0;
    };
    Assignment full = assignment;
    out.rows.reserve(picked.size());
    for (const std::vector<int32_t>& combo : picked) {
        CombinationCost c;
        for (int k = 0; k < seg.blockCount; ++k) {
            const int b = seg.firstBlock + k;
            const BlockAssignment& choice = problem.choices(b)[static_cast<size_t>(combo[static_cast<size_t>(k)])];
            c.combination.push_back(choice);
            full[static_cast<size_t>(b)] = choice;
            if (!isAllowed(b, choice)) c.allowed = false;
        }
        c.chosen = combo == chosenCombo;
        c.stepSeconds = problem.objective(full);
        c.memoryBytes = problem.memory(full);
        c.fits = limitBytes <= 0 || c.memoryBytes <= limitBytes;
        out.rows.push_back(std::move(c));
    }

    // Pareto marking over allowed, fitting rows: sort by (time, memory); a group of equal rows is
    // dominated when an earlier group needs no more memory (it is then better in one of the two).
    std::vector<size_t> order;
    for (size_t i = 0; i < out.rows.size(); ++i)
        if (out.rows[i].allowed && out.rows[i].fits) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const auto& x = out.rows[a];
        const auto& y = out.rows[b];
        return x.stepSeconds != y.stepSeconds ? x.stepSeconds < y.stepSeconds : x.memoryBytes < y.memoryBytes;
    });
    int64_t bestMemory = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        const auto& head = out.rows[order[i]];
        while (j < order.size() && out.rows[order[j]].stepSeconds == head.stepSeconds &&
               out.rows[order[j]].memoryBytes == head.memoryBytes)
            ++j;
        const bool dominated = bestMemory <= head.memoryBytes;
        for (size_t k = i; k < j; ++k) out.rows[order[k]].dominated = dominated;
        bestMemory = std::min(bestMemory, head.memoryBytes);
        i = j;
    }
    return out;
}

}  // namespace cfp
