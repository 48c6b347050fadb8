#pragma once
// Usage per time slot for a changing assignment: range add and range maximum in O(log slots).
//
// Starts from the model's baseline (fixed nodes and every variable's least usage per slot, see
// solver_model.h); setting variable v to value a adds the usage of a's segments.
//
//   MemoryProfile mem(model);                       // baseline only
//   for (v...) mem.apply(model, v, -1, x[v]);       // x's usage
//   if (mem.fits(model, v, x[v], b, limit)) { mem.apply(model, v, x[v], b); x[v] = b; }

#include <cstdint>
#include <vector>

#include "iopddl/solver_model.h"

namespace cfp::iopddl {

class MemoryProfile {
public:
    MemoryProfile() = default;
    explicit MemoryProfile(const SolverModel& model);

    int32_t slotCount() const { return m_slots; }
    void addRange(int32_t first, int32_t end, int64_t delta) {
        if (first < end) update(1, 0, m_size, first, end, delta);
    }
    // Largest usage over slots [first, end); INT64_MIN when empty.
    int64_t maxRange(int32_t first, int32_t end) const { return first < end ? query(1, 0, m_size, first, end) : INT64_MIN; }
    int64_t peak() const { return m_slots ? m_max[1] : 0; }
    std::vector<int64_t> values() const;
    // Back to the baseline.
    void reset();

    // Variable v changes from value `from` (-1: not counted yet) to `to` (-1: not counted).
    void apply(const SolverModel& model, int32_t v, int32_t from, int32_t to);
    // Whether that change keeps every slot where it adds usage at or below `limit`.
    bool fits(const SolverModel& model, int32_t v, int32_t from, int32_t to, int64_t limit) const;
    // The largest amount by which that change would exceed `limit` (0 if it fits), ignoring
    // slots that are over the limit already and that it does not make worse.
    int64_t excess(const SolverModel& model, int32_t v, int32_t from, int32_t to, int64_t limit) const;

private:
    void update(int node, int32_t lo, int32_t hi, int32_t first, int32_t end, int64_t delta);
    int64_t query(int node, int32_t lo, int32_t hi, int32_t first, int32_t end) const;

    int32_t m_slots = 0;
    int32_t m_size = 1;                  // leaves: a power of two >= slots
    std::vector<int64_t> m_baseline;
    std::vector<int64_t> m_max;          // subtree maximum, including this node's pending add
    std::vector<int64_t> m_add;          // add applying to the whole subtree
};

}  // namespace cfp::iopddl
