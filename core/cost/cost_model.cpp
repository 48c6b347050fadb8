#include "cost/cost_model.h"
#include "cost/step_policy.h"

#include <algorithm>
#include <cmath>

namespace cfp {

bool isFusibleKind(OpKind kind) {
    if (isElementwise(kind)) return true;
    switch (kind) {
        case OpKind::Broadcast:
        case OpKind::Reshape:
        case OpKind::Transpose:
        case OpKind::Slice:
        case OpKind::Concatenate:
        case OpKind::Iota:
            return true;
        default:
            return false;
    }
}

bool fusesInto(OpKind producer, OpKind consumer) {
    return isFusibleKind(producer) && producer != OpKind::Iota && (isFusibleKind(consumer) || consumer == OpKind::Reduce);
}

std::vector<int64_t> localDims(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh) {
    std::vector<int64_t> dims = type.dims;
    for (int a = 0; a < mesh.rank; ++a) {
        const int8_t d = sharding.dimOf[static_cast<size_t>(a)];
        if (d >= 0 && static_cast<size_t>(d) < dims.size()) dims[static_cast<size_t>(d)] /= mesh.size[static_cast<size_t>(a)];
    }
    return dims;
}

int64_t localBytes(int64_t bytes, const CompactSharding& sharding, const MeshSizes& mesh) {
    int64_t split = 1;
    for (int a = 0; a < mesh.rank; ++a)
        if (sharding.dimOf[static_cast<size_t>(a)] >= 0) split *= mesh.size[static_cast<size_t>(a)];
    return bytes / split;
}

int64_t localBytes(const TensorType& type, const CompactSharding& sharding, const MeshSizes& mesh) {
    return localBytes(type.bytes(), sharding, mesh);
}

int64_t shardBytes(const TensorType& type, const TensorSharding& s, const Mesh& mesh) {
    int64_t split = 1;
    for (const auto& axes : s.dims())
        for (const auto& a : axes) split *= mesh.axisSize(a).value_or(1);
    return type.bytes() / split;
}

std::vector<int64_t> shardDims(const TensorType& type, const TensorSharding& s, const Mesh& mesh) {
    std::vector<int64_t> dims = type.dims;
    for (size_t d = 0; d < dims.size() && d < s.dims().size(); ++d)
        for (const auto& a : s.dims()[d]) dims[d] /= mesh.axisSize(a).value_or(1);
    return dims;
}

namespace {

struct Hasher {
    uint64_t h = 1469598103934665603ull;
    void add(uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    void add(const std::vector<int64_t>& v) {
        add(v.size());
        for (int64_t x : v) add(static_cast<uint64_t>(x));
    }
};

}  // namespace

uint64_t opCostSignature(const Op& op, std::span<const std::vector<int64_t>> localOperandDims,
                         std::span<const TensorType> operandTypes, const std::vector<int64_t>& localResultDims) {
    Hasher h;
    h.add(static_cast<uint64_t>(op.kind));
    h.add(static_cast<uint64_t>(op.type.dtype));
    h.add(localResultDims);
    h.add(op.attrs.dimensions);
    h.add(op.attrs.dot.lhsBatch);
    h.add(op.attrs.dot.rhsBatch);
    h.add(op.attrs.dot.lhsContracting);
    h.add(op.attrs.dot.rhsContracting);
    h.add(static_cast<uint64_t>(op.attrs.comparison));
    h.add(static_cast<uint64_t>(op.attrs.reduceKind));
    for (char c : op.attrs.target) h.add(static_cast<uint64_t>(c));
    h.add(localOperandDims.size());
    for (size_t i = 0; i < localOperandDims.size(); ++i) {
        h.add(localOperandDims[i]);
        if (i < operandTypes.size()) h.add(static_cast<uint64_t>(operandTypes[i].dtype));
    }
    return h.h;
}

Result<CostModel> CostModel::create(const HardwareSpec& hardware, const Mesh& mesh) {
    if (!mesh.hasLinkClasses())
        return makeError("cost.bad_mesh", "mesh " + mesh.toString() + " has no link classes (bind it to the hardware first)");
    auto sizes = meshSizes(mesh);
    if (!sizes) return sizes.error();
    if (hardware.hbmBytesPerSecond <= 0 || hardware.hbmEfficiency <= 0 || hardware.gemmEfficiency <= 0)
        return makeError("cost.bad_hardware", "hardware " + hardware.id + " has no usable HBM bandwidth or efficiency");
    CostModel m;
    m.m_hw = hardware;
    m.m_mesh = mesh;
    m.m_sizes = *sizes;
    // Per axis: the bandwidth one of its groups gets per device (see the header: rails).
    const int64_t g = std::max<int64_t>(1, hardware.gpusPerNode);
    int64_t stride = 1;
    m.m_axisBytesPerSecond.assign(mesh.axes().size(), 0.0);
    for (size_t i = mesh.axes().size(); i-- > 0;) {
        const MeshAxis& a = mesh.axes()[i];
        double bw = hardware.intraNode.bytesPerSecond;
        if (a.link && *a.link == LinkClass::InterNode) {
            const int64_t members = stride < g ? g / stride : 1;  // of one group, per node
            bw = hardware.interNode.bytesPerSecond * static_cast<double>(members);
            if (members > 1) bw = std::min(bw, hardware.intraNode.bytesPerSecond);
        }
        m.m_axisBytesPerSecond[i] = bw;
        stride *= a.size;
        if (a.name == kContextParallelAxis) m.m_contextAxis = static_cast<int>(i);
    }
    return m;
}

double CostModel::hbmSeconds(double bytes) const {
    if (m_calibration.hbmBytesPerSecond > 0) return bytes / m_calibration.hbmBytesPerSecond;
    return bytes / (m_hw.hbmBytesPerSecond * m_hw.hbmEfficiency);
}

AlphaBetaFactors ringFactors(CollectiveKind kind, double n) {
    if (n <= 1) return {};
    switch (kind) {
        case CollectiveKind::AllGather:
        case CollectiveKind::ReduceScatter: return {n - 1, (n - 1) / n};
        case CollectiveKind::AllReduce: return {2 * (n - 1), 2 * (n - 1) / n};
        case CollectiveKind::AllToAll: return {n - 1, (n - 1) / (n * n)};
        case CollectiveKind::LocalSlice: return {};
    }
    return {};
}

std::optional<double> interpolateGemmEfficiency(const std::vector<GemmEfficiencyPoint>& table, DType dtype, double flops,
                                                double bytes) {
    if (flops <= 0 || bytes <= 0) return std::nullopt;
    const double x = std::log2(flops), y = std::log2(flops / bytes);
    // The 4 nearest points of the dtype; ties broken by table order, so the result is stable.
    struct Near {
        double d2;
        size_t index;
    };
    std::vector<Near> nearest;
    for (size_t i = 0; i < table.size(); ++i) {
        const GemmEfficiencyPoint& p = table[i];
        if (p.dtype != dtype || p.flops <= 0 || p.bytes <= 0 || !(p.efficiency > 0)) continue;
        const double dx = std::log2(p.flops) - x, dy = std::log2(p.flops / p.bytes) - y;
        nearest.push_back({dx * dx + dy * dy, i});
    }
    if (nearest.empty()) return std::nullopt;
    std::stable_sort(nearest.begin(), nearest.end(), [](const Near& a, const Near& b) { return a.d2 < b.d2; });
    if (nearest.size() > 4) nearest.resize(4);
    if (nearest.front().d2 < 1e-18) return std::min(1.0, table[nearest.front().index].efficiency);
    double wsum = 0, esum = 0;
    for (const Near& n : nearest) {
        const double w = 1.0 / n.d2;
        wsum += w;
        esum += w * table[n.index].efficiency;
    }
    return std::min(1.0, esum / wsum);
}

void CostModel::setCalibration(CostCalibration calibration) { m_calibration = std::move(calibration); }

const CollectiveFit* CostModel::findFit(CollectiveKind kind, size_t axis) const {
    if (m_calibration.collectives.empty()) return nullptr;
    const auto& a = m_mesh.axes().at(axis);
    const LinkClass link = a.link.value_or(LinkClass::IntraNode);
    for (const CollectiveFit& f : m_calibration.collectives)
        if (f.kind == kind && f.link == link && f.devices == a.size) return &f;
    return nullptr;
}

int64_t gemmAlignment(DType dtype) { return std::max<int64_t>(1, 16 / std::max<int64_t>(1, dtypeBytes(dtype))); }

std::vector<int64_t> gemmUnalignedDims(const GemmGrid& grid, double flops, DType dtype) {
    std::vector<int64_t> out;
    const double cells = grid.batch * grid.m * grid.n;
    if (!(cells > 0) || !(flops > 0)) return out;
    const int64_t vector = gemmAlignment(dtype);
    for (double d : {grid.m, grid.n, flops / (2.0 * cells)})
        if (std::llround(d) % vector != 0) out.push_back(std::llround(d));
    return out;
}

double gemmWaveFactor(const HardwareSpec& hw, const GemmGrid& grid) {
    if (hw.smCount < 1 || hw.gemmTiles.empty()) return 1.0;
    const double sms = hw.smCount;
    const double work = grid.batch * grid.m * grid.n;
    double best = 0;
    for (const auto& [tm, tn] : hw.gemmTiles) {
        const double tiles = grid.batch * std::ceil(grid.m / tm) * std::ceil(grid.n / tn);
        const double waves = std::ceil(tiles / sms);
        best = std::max(best, work / (waves * sms * tm * tn));
    }
    return best > 0 ? std::min(1.0, best) : 1.0;
}

double CostModel::kernelSeconds(OpKind kind, DType dtype, double localFlops, double localBytes, const GemmGrid* grid) const {
    const double memory = hbmSeconds(localBytes);
    if (isFusibleKind(kind)) return memory + launchSeconds();
    double efficiency = m_hw.gemmEfficiency;
    bool measured = false;
    if (kind == OpKind::Dot && !m_calibration.gemm.empty())
        if (auto e = interpolateGemmEfficiency(m_calibration.gemm, dtype, localFlops, localBytes)) {
            efficiency = *e;
            measured = true;
        }
    if (kind == OpKind::Dot && grid && !measured) {
        if (m_hw.gemmUnalignedEfficiency > 0 && gemmUnaligned(*grid, localFlops, dtype)) efficiency = m_hw.gemmUnalignedEfficiency;
        else efficiency *= gemmWaveFactor(m_hw, *grid);
    }
    const double peak = m_hw.peakFlopsFor(dtype) * efficiency;
    const double compute = peak > 0 ? localFlops / peak : 0.0;
    return std::max(compute, memory) + launchSeconds();
}

double CostModel::onChipSeconds(OpKind kind, DType dtype, double localFlops) const {
    if (kind != OpKind::Dot) return 0.0;
    double efficiency = m_hw.gemmEfficiency;
    if (!m_calibration.gemm.empty())
        if (auto e = interpolateGemmEfficiency(m_calibration.gemm, dtype, localFlops, 0.0)) efficiency = *e;
    const double peak = m_hw.peakFlopsFor(dtype) * efficiency;
    return peak > 0 ? localFlops / peak : 0.0;
}

std::optional<double> CostModel::flashMatmulSeconds(DType dtype, double localFlops, const FlashMatmul& flash, bool backward) const {
    const AttentionCurves& curves = flash.flash2 ? m_hw.flashAttention2 : m_hw.flashAttention;
    if (curves.empty() || flash.seq <= 0) return std::nullopt;
    const auto& curve = flash.causal ? (backward ? curves.causalBackward : curves.causalForward) : (backward ? curves.backward : curves.forward);
    const double s = static_cast<double>(flash.seq);
    double efficiency = curve.front().second;
    if (s >= curve.back().first) {
        efficiency = curve.back().second;
    } else if (s > curve.front().first) {
        for (size_t i = 1; i < curve.size(); ++i)
            if (s <= curve[i].first) {
                const double t = std::log(s / curve[i - 1].first) / std::log(curve[i].first / curve[i - 1].first);
                efficiency = curve[i - 1].second + t * (curve[i].second - curve[i - 1].second);
                break;
            }
    }
    if (flash.headDim > 0 && flash.headDim < 128) efficiency *= std::pow(static_cast<double>(flash.headDim) / 128.0, 0.3);
    const double peak = m_hw.peakFlopsFor(dtype) * efficiency;
    return peak > 0 ? localFlops * (flash.causal ? 0.5 : 1.0) / peak : 0.0;
}

double CostModel::fusedEdgeSavingSeconds(int64_t localTensorBytes) const {
    return hbmSeconds(2.0 * static_cast<double>(localTensorBytes)) + launchSeconds();
}

const LinkSpec& CostModel::link(size_t axis) const {
    const auto& a = m_mesh.axes().at(axis);
    return a.link && *a.link == LinkClass::InterNode ? m_hw.interNode : m_hw.intraNode;
}

double busCurveSeconds(const BusCurve& curve, CollectiveKind kind, double n, double bytes) {
    // nccl-tests' bus bandwidth: algbw (bytes / time) × 2(n−1)/n for all-reduce, × (n−1)/n for
    // all-gather and reduce-scatter (bytes: the whole buffer).
    const double factor = kind == CollectiveKind::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
    const auto& pts = curve.points;
    auto busAt = [&](double b) {
        double bus = pts.back().second;
        if (b <= pts.front().first) {
            bus = pts.front().second;
        } else {
            for (size_t i = 1; i < pts.size(); ++i)
                if (b <= pts[i].first) {
                    // Log-log between the two measured sizes around b.
                    const double u = std::log(b / pts[i - 1].first) / std::log(pts[i].first / pts[i - 1].first);
                    bus = std::exp(std::log(pts[i - 1].second) + u * std::log(pts[i].second / pts[i - 1].second));
                    break;
                }
        }
        if (kind != CollectiveKind::AllReduce && curve.otherPeakBytesPerSecond > 0) bus = std::min(bus, curve.otherPeakBytesPerSecond);
        return bus;
    };
    const double first = pts.front().first;
    if (bytes >= first) return bytes * factor / busAt(bytes);
    // Below the smallest size measured: from the latency floor at 0 bytes to that size's time. The
    // floor is an all-reduce's on the curve's group of m devices; n devices take (n−1)/(m−1) of it
    // and all-gather and reduce-scatter half of that, as the ring's steps count (so that one of
    // each costs an all-reduce, as on the α-β line).
    const double atFirst = first * factor / busAt(first);
    const double steps = (n - 1) / static_cast<double>(std::max<int64_t>(1, curve.devices - 1)) * (kind == CollectiveKind::AllReduce ? 1.0 : 0.5);
    const double floor = std::min(curve.floorSeconds * steps, atFirst);
    return floor + (atFirst - floor) * std::max(0.0, bytes) / first;
}

double CostModel::collectiveSeconds(CollectiveKind kind, size_t axis, int64_t messageBytes) const {
    const double n = static_cast<double>(m_sizes.size[axis]);
    if (n <= 1 || kind == CollectiveKind::LocalSlice) return 0.0;
    if (const CollectiveFit* fit = findFit(kind, axis)) {
        const AlphaBetaFactors f = ringFactors(kind, n);
        return f.steps * fit->alphaSeconds + f.bytesFactor * static_cast<double>(messageBytes) * fit->betaSecondsPerByte;
    }
    const LinkSpec& l = link(axis);
    if (!l.busCurve.empty() && kind != CollectiveKind::AllToAll) return busCurveSeconds(l.busCurve, kind, n, static_cast<double>(messageBytes));
    const double alpha = l.latencySeconds;
    const double beta = 1.0 / axisBytesPerSecond(axis);
    const double b = static_cast<double>(messageBytes);
    switch (kind) {
        case CollectiveKind::AllGather:
        case CollectiveKind::ReduceScatter:
            return (n - 1) * alpha + (n - 1) / n * b * beta;
        case CollectiveKind::AllReduce: {
            const double ring = 2 * (n - 1) * alpha + 2 * (n - 1) / n * b * beta;
            if (!l.supportsTree) return ring;
            const double tree = 2 * std::ceil(std::log2(n)) * alpha + 2 * b * beta;
            return std::min(ring, tree);
        }
        case CollectiveKind::AllToAll:
            return (n - 1) * alpha + (n - 1) / (n * n) * b * beta;
        case CollectiveKind::LocalSlice:
            return 0.0;
    }
    return 0.0;
}

double CostModel::reshardSeconds(const ReshardPlan& plan) const {
    double t = 0;
    for (const CollectiveStep& s : plan.steps) {
        auto axis = m_mesh.axisIndex(s.axis);
        if (!axis) continue;
        t += collectiveSeconds(s.kind, static_cast<size_t>(*axis), s.messageBytes);
    }
    return t;
}

void CostModel::setMeasured(uint64_t signature, double seconds) { m_measured[signature] = seconds; }

const double* CostModel::measured(uint64_t signature) const {
    auto it = m_measured.find(signature);
    return it == m_measured.end() ? nullptr : &it->second;
}

}  // namespace cfp
