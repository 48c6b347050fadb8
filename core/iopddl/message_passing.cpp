#include "iopddl/message_passing.h"

#include <algorithm>

namespace cfp::iopddl {

MessagePassing::MessagePassing(const SolverModel& model) : m(model) {
    m_rank.assign(static_cast<size_t>(m.n), -1);
    for (int32_t v = 0; v < m.n; ++v) {
        m_rank[v] = static_cast<int32_t>(m_order.size());
        m_order.push_back(v);
    }
    m_gamma.assign(static_cast<size_t>(m.n), 1.0);
    int32_t kmax = 1;
    for (int32_t v : m_order) {
        int32_t before = 0, after = 0;
        for (const Arc& a : m.arcsOf(v)) (m_rank[a.to] < m_rank[v] ? before : after) += 1;
        m_gamma[v] = 1.0 / std::max(1, std::max(before, after));
        kmax = std::max(kmax, m.k[v]);
    }
    m_msgBegin.resize(m.arcs.size() + 1);
    m_msgBegin[0] = 0;
    for (size_t a = 0; a < m.arcs.size(); ++a) m_msgBegin[a + 1] = m_msgBegin[a] + m.k[m.arcs[a].to];
    m_msg.assign(static_cast<size_t>(m_msgBegin.back()), 0.0);
    m_h.resize(static_cast<size_t>(kmax));
    m_g.resize(static_cast<size_t>(kmax));
    m_score.resize(static_cast<size_t>(kmax));
    m_decided.assign(static_cast<size_t>(m.n), 0);
    m_candidates.resize(static_cast<size_t>(kmax));
}

void MessagePassing::reset() { std::fill(m_msg.begin(), m_msg.end(), 0.0); }

void MessagePassing::belief(int32_t i, double* h) const {
    const int32_t k = m.k[i];
    const double* theta = m_theta + m.valueBegin[i];
    for (int32_t a = 0; a < k; ++a) h[a] = theta[a];
    const int64_t first = m.arcBegin[i], last = m.arcBegin[i + 1];
    for (int64_t ai = first; ai < last; ++ai) {
        const double* in = m_msg.data() + m_msgBegin[m.arcs[static_cast<size_t>(ai)].reverse];
        for (int32_t a = 0; a < k; ++a) h[a] += in[a];
    }
}

void MessagePassing::pass(bool forward) {
    const int32_t count = static_cast<int32_t>(m_order.size());
    double* h = m_h.data();
    double* g = m_g.data();
    for (int32_t step = 0; step < count; ++step) {
        const int32_t i = m_order[forward ? step : count - 1 - step];
        const int32_t ki = m.k[i];
        belief(i, h);
        const double gamma = m_gamma[i];
        for (int64_t ai = m.arcBegin[i]; ai < m.arcBegin[i + 1]; ++ai) {
            const Arc& arc = m.arcs[static_cast<size_t>(ai)];
            const bool later = m_rank[arc.to] > m_rank[i];
            if (later != forward) continue;
            const int32_t kj = m.k[arc.to];
            const double* back = m_msg.data() + m_msgBegin[arc.reverse];
            for (int32_t a = 0; a < ki; ++a) g[a] = gamma * h[a] - back[a];
            double* out = m_msg.data() + m_msgBegin[ai];
            const double* mat = m.mats.data() + arc.offset;
            for (int32_t b = 0; b < kj; ++b) out[b] = g[0] + mat[b];
            for (int32_t a = 1; a < ki; ++a) {
                const double ga = g[a];
                const double* row = mat + int64_t(a) * kj;
                for (int32_t b = 0; b < kj; ++b) out[b] = std::min(out[b], ga + row[b]);
            }
            double lowest = out[0];
            for (int32_t b = 1; b < kj; ++b) lowest = std::min(lowest, out[b]);
            for (int32_t b = 0; b < kj; ++b) out[b] -= lowest;
        }
    }
}

void MessagePassing::iterate() {
    pass(true);
    pass(false);
}

void MessagePassing::decode(std::vector<int32_t>& x, MemoryProfile* memory, int64_t limit) {
    decodeInOrder(x, m_order, memory, limit);
}

void MessagePassing::decodeInOrder(std::vector<int32_t>& x, std::span<const int32_t> order, MemoryProfile* memory, int64_t limit) {
    const int32_t stamp = ++m_stamp;
    double* score = m_score.data();
    for (const int32_t i : order) {
        const int32_t ki = m.k[i];
        const double* theta = m_theta + m.valueBegin[i];
        for (int32_t a = 0; a < ki; ++a) score[a] = theta[a];
        for (int64_t ai = m.arcBegin[i]; ai < m.arcBegin[i + 1]; ++ai) {
            const Arc& arc = m.arcs[static_cast<size_t>(ai)];
            if (m_decided[arc.to] == stamp) {
                const double* col = m.mats.data() + arc.revOffset + int64_t(x[arc.to]) * ki;
                for (int32_t a = 0; a < ki; ++a) score[a] += col[a];
            } else {
                const double* in = m_msg.data() + m_msgBegin[arc.reverse];
                for (int32_t a = 0; a < ki; ++a) score[a] += in[a];
            }
        }
        int32_t best = 0;
        for (int32_t a = 1; a < ki; ++a)
            if (score[a] < score[best]) best = a;
        if (memory && best != x[i] && !memory->fits(m, i, x[i], best, limit)) {
            // The best value that fits, trying values in order of score.
            int32_t* cand = m_candidates.data();
            for (int32_t a = 0; a < ki; ++a) cand[a] = a;
            std::sort(cand, cand + ki, [&](int32_t l, int32_t r) { return score[l] < score[r] || (score[l] == score[r] && l < r); });
            best = x[i];
            for (int32_t c = 0; c < ki; ++c) {
                const int32_t a = cand[c];
                if (a == x[i] || score[a] >= score[x[i]]) {
                    best = x[i];
                    break;
                }
                if (memory->fits(m, i, x[i], a, limit)) {
                    best = a;
                    break;
                }
            }
        }
        if (memory) memory->apply(m, i, x[i], best);
        x[i] = best;
        m_decided[i] = stamp;
    }
}

}  // namespace cfp::iopddl
