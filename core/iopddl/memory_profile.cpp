#include "iopddl/memory_profile.h"

#include <algorithm>

namespace cfp::iopddl {

namespace {
// Leaves past the last slot hold this, so that they never win a maximum.
constexpr int64_t kUnused = INT64_MIN / 4;
}  // namespace

MemoryProfile::MemoryProfile(const SolverModel& model) : m_slots(model.slotCount()), m_baseline(model.fixedUsage) {
    while (m_size < std::max(m_slots, 1)) m_size *= 2;
    reset();
}

void MemoryProfile::reset() {
    m_max.assign(static_cast<size_t>(2 * m_size), kUnused);
    m_add.assign(static_cast<size_t>(2 * m_size), 0);
    for (int32_t j = 0; j < m_slots; ++j) m_max[static_cast<size_t>(m_size + j)] = m_baseline[static_cast<size_t>(j)];
    for (int32_t node = m_size - 1; node >= 1; --node)
        m_max[static_cast<size_t>(node)] = std::max(m_max[static_cast<size_t>(2 * node)], m_max[static_cast<size_t>(2 * node + 1)]);
}

void MemoryProfile::update(int node, int32_t lo, int32_t hi, int32_t first, int32_t end, int64_t delta) {
    if (end <= lo || hi <= first) return;
    const size_t i = static_cast<size_t>(node);
    if (first <= lo && hi <= end) {
        m_max[i] += delta;
        m_add[i] += delta;
        return;
    }
    const int32_t mid = (lo + hi) / 2;
    update(2 * node, lo, mid, first, end, delta);
    update(2 * node + 1, mid, hi, first, end, delta);
    m_max[i] = std::max(m_max[2 * i], m_max[2 * i + 1]) + m_add[i];
}

int64_t MemoryProfile::query(int node, int32_t lo, int32_t hi, int32_t first, int32_t end) const {
    if (end <= lo || hi <= first) return INT64_MIN;
    const size_t i = static_cast<size_t>(node);
    if (first <= lo && hi <= end) return m_max[i];
    const int32_t mid = (lo + hi) / 2;
    const int64_t best = std::max(query(2 * node, lo, mid, first, end), query(2 * node + 1, mid, hi, first, end));
    return best == INT64_MIN ? best : best + m_add[i];
}

std::vector<int64_t> MemoryProfile::values() const {
    std::vector<int64_t> out(static_cast<size_t>(m_slots));
    std::vector<int64_t> acc(static_cast<size_t>(2 * m_size), 0);
    for (int32_t node = 1; node < 2 * m_size; ++node)
        acc[static_cast<size_t>(node)] = (node > 1 ? acc[static_cast<size_t>(node / 2)] : 0) + m_add[static_cast<size_t>(node)];
    for (int32_t j = 0; j < m_slots; ++j) {
        const size_t leaf = static_cast<size_t>(m_size + j);
        // A leaf's m_max is its baseline plus its own adds; acc has those adds and the ancestors'.
        out[static_cast<size_t>(j)] = m_baseline[static_cast<size_t>(j)] + acc[leaf];
    }
    return out;
}

void MemoryProfile::apply(const SolverModel& model, int32_t v, int32_t from, int32_t to) {
    if (from == to) return;
    for (const Segment& s : model.segmentsOf(v)) {
        const int64_t* u = model.usageOf(s);
        const int64_t delta = (to >= 0 ? u[to] : 0) - (from >= 0 ? u[from] : 0);
        if (delta != 0) addRange(s.firstSlot, s.endSlot, delta);
    }
}

bool MemoryProfile::fits(const SolverModel& model, int32_t v, int32_t from, int32_t to, int64_t limit) const {
    if (from == to) return true;
    for (const Segment& s : model.segmentsOf(v)) {
        const int64_t* u = model.usageOf(s);
        const int64_t delta = (to >= 0 ? u[to] : 0) - (from >= 0 ? u[from] : 0);
        if (delta > 0 && maxRange(s.firstSlot, s.endSlot) + delta > limit) return false;
    }
    return true;
}

int64_t MemoryProfile::excess(const SolverModel& model, int32_t v, int32_t from, int32_t to, int64_t limit) const {
    int64_t worst = 0;
    if (from == to) return 0;
    for (const Segment& s : model.segmentsOf(v)) {
        const int64_t* u = model.usageOf(s);
        const int64_t delta = (to >= 0 ? u[to] : 0) - (from >= 0 ? u[from] : 0);
        if (delta > 0) worst = std::max(worst, maxRange(s.firstSlot, s.endSlot) + delta - limit);
    }
    return worst;
}

}  // namespace cfp::iopddl
