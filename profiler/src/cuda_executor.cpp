// The CUDA/NCCL segment executor (backend.h): compiled only with the CUDA toolkit and NCCL.
//
// One process drives either every local GPU of the mesh (rank r = device r, NCCL communicators
// from ncclCommInitAll) or, under MPI, one GPU per rank (ncclUniqueId broadcast from rank 0,
// ncclCommInitRank). Axis communicators come from ncclCommSplit of the world communicator: for
// axis a, the devices that agree on every other mesh coordinate share a color, ordered by their
// coordinate on a — exactly the groups of Mesh::axisGroup.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#ifdef CFP_HAVE_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda_common.h"
#include "profiler/backend.h"

namespace cfp::profiler {

namespace {

constexpr size_t kAlign = 256;
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

size_t alignUp(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::string ncclText(ncclResult_t r) { return std::string("NCCL: ") + ncclGetErrorString(r); }

std::string cublasText(cublasStatus_t s) { return "cuBLASLt status " + std::to_string(static_cast<int>(s)); }

Error cudaFailure(const std::string& what, cudaError_t e) {
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // clear the sticky-free allocation error
        return makeError("profiler.oom", "out of device memory while " + what);
    }
    return makeError("profiler.cuda", what + ": " + cudaErrorText(e));
}

cudaDataType_t cudaType(DType t) {
    switch (t) {
        case DType::BF16: return CUDA_R_16BF;
        case DType::F16: return CUDA_R_16F;
        default: return CUDA_R_32F;
    }
}

size_t elementBytes(DType t) { return t == DType::BF16 || t == DType::F16 ? 2 : 4; }

ncclDataType_t ncclType(DType t) {
    switch (t) {
        case DType::BF16: return ncclBfloat16;
        case DType::F16: return ncclFloat16;
        default: return ncclFloat32;
    }
}

// One GEMM prepared for cuBLASLt on one device (row-major C = A·B computed as column-major
// Cᵀ = Bᵀ·Aᵀ).
struct LtGemm {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    size_t aOffset = 0, bOffset = 0, cOffset = 0;
    void destroy() {
        if (desc) cublasLtMatmulDescDestroy(desc);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (c) cublasLtMatrixLayoutDestroy(c);
        desc = nullptr;
        a = b = c = nullptr;
    }
};

struct Device {
    int index = 0;        // CUDA device
    int rank = 0;         // rank in the mesh
    int smCount = 0;
    cudaStream_t stream = nullptr;
    cublasLtHandle_t lt = nullptr;
    void* workspace = nullptr;          // cuBLASLt workspace
    void* arena = nullptr;              // item buffers, reused by every item
    size_t arenaBytes = 0;
    void* persistent = nullptr;         // the segment's weights, gradients, optimizer state, activations
    size_t persistentBytes = 0;
    std::vector<LtGemm> gemms;          // per item (empty entries for non-GEMM items)
    std::vector<cudaEvent_t> events;    // [0] start, [1] end, then per-item events
    ncclComm_t world = nullptr;
    std::vector<ncclComm_t> axisComms;  // per mesh axis (null for axes of size 1)
    cudaGraphExec_t graph = nullptr;
};

class CudaBackend final : public MeasureBackend {
public:
    explicit CudaBackend(CudaBackendOptions options) : m_options(options) {}
    ~CudaBackend() override { release(); }

    std::string name() const override { return "cuda"; }
    Result<DeviceSetup> open(const Mesh& mesh) override;
    Status prepare(const SegmentWorkPlan& work) override;
    Status launch(int iterations, Timing timing) override;
    Result<PollState> poll(LaunchResult& out) override;
    void abort() override;
    double agree(double value) override;
    bool anyRank(bool local) override;

private:
    Status setDevice(const Device& d) const {
        const cudaError_t e = cudaSetDevice(d.index);
        return e == cudaSuccess ? Status{} : cudaFailure("selecting GPU " + std::to_string(d.index), e);
    }
    Status createCommunicators(const Mesh& mesh);
    Status enqueue(Device& d, int item);
    Status enqueueIteration(bool perItemEvents, int iteration);
    void freeBuffers(Device& d);
    void release();

    CudaBackendOptions m_options;
    Mesh m_mesh;
    std::vector<Device> m_devices;
    CommMode m_comm = CommMode::Measured;
    bool m_mpi = false;
    bool m_mpiInitialisedHere = false;
    int m_rank = 0, m_ranks = 1;
    bool m_aborted = false;
    bool m_inFlight = false;
    int m_iterations = 0;
    Timing m_timing = Timing::Total;
    std::optional<SegmentWorkPlan> m_work;
    std::string m_nvtxName;
};

Result<DeviceSetup> CudaBackend::open(const Mesh& mesh) {
    m_mesh = mesh;
    auto devices = discoverDevices();
    if (!devices) return devices.error();
    const auto meshDevices = static_cast<int>(mesh.deviceCount());
    m_mpi = m_options.processes == CudaBackendOptions::Processes::Mpi ||
            (m_options.processes == CudaBackendOptions::Processes::Auto && launchedByMpi());
    DeviceSetup setup;
    int nodes = 1;
    if (m_mpi) {
#ifdef CFP_HAVE_MPI
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (!initialised) {
            int provided = 0;
            if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
                return makeError("profiler.mpi", "MPI_Init failed");
            m_mpiInitialisedHere = true;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m_ranks);
        MPI_Comm local;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local);
        int localRank = 0;
        MPI_Comm_rank(local, &localRank);
        MPI_Comm_free(&local);
        int leader = localRank == 0 ? 1 : 0;
        MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (m_ranks != meshDevices && m_ranks != 1)
            return makeError("profiler.mpi", "the launcher started " + std::to_string(m_ranks) + " ranks for a mesh of " +
                                                 std::to_string(meshDevices) + " devices; start one rank per device");
        Device d;
        d.index = localRank % static_cast<int>(devices->size());
        d.rank = m_rank;
        d.smCount = (*devices)[static_cast<size_t>(d.index)].smCount;
        m_devices.push_back(d);
        m_comm = m_ranks == meshDevices ? CommMode::Measured : CommMode::Modelled;
#else
        return makeError("profiler.no_mpi", "this cfp was built without MPI (install Open MPI's development files and rebuild)");
#endif
    } else {
        const int use = static_cast<int>(devices->size()) >= meshDevices ? meshDevices : 1;
        m_comm = use == meshDevices ? CommMode::Measured : CommMode::Modelled;
        for (int i = 0; i < use; ++i) {
            Device d;
            d.index = (*devices)[static_cast<size_t>(i)].index;
            d.rank = i;
            d.smCount = (*devices)[static_cast<size_t>(i)].smCount;
            m_devices.push_back(d);
        }
    }
    for (Device& d : m_devices) {
        CFP_TRY(setDevice(d));
        if (auto e = cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking); e != cudaSuccess)
            return cudaFailure("creating a stream", e);
        if (auto s = cublasLtCreate(&d.lt); s != CUBLAS_STATUS_SUCCESS)
            return makeError("profiler.cublas", "cublasLtCreate: " + cublasText(s));
        if (auto e = cudaMalloc(&d.workspace, kCublasWorkspaceBytes); e != cudaSuccess) return cudaFailure("allocating the cuBLASLt workspace", e);
    }
    if (m_comm == CommMode::Measured && meshDevices > 1) CFP_TRY(createCommunicators(mesh));

    std::vector<GpuInfo> used;
    for (const Device& d : m_devices) used.push_back((*devices)[static_cast<size_t>(d.index)]);
    setup.devices = used;
    setup.fingerprint = fingerprintOf(m_mpi ? *devices : used, m_mpi ? m_ranks : static_cast<int>(used.size()), nodes);
    setup.comm = m_comm;
    setup.rank = m_rank;
    setup.ranks = m_ranks;
    setup.root = m_rank == 0;
    setup.description = std::to_string(m_mpi ? m_ranks : static_cast<int>(used.size())) + " x " + used.front().name +
                        (m_mpi ? " (MPI, " + std::to_string(nodes) + " node" + (nodes == 1 ? ")" : "s)") : " (one process)") +
                        (m_comm == CommMode::Modelled ? "; one rank's compute measured, communication modelled" : "") +
                        (haveMemoryKernel() ? "" : "; memory-bound groups replayed as copies");
    return setup;
}

Status CudaBackend::createCommunicators(const Mesh& mesh) {
    const auto n = static_cast<int>(mesh.deviceCount());
    if (m_mpi) {
#ifdef CFP_HAVE_MPI
        ncclUniqueId id;
        if (m_rank == 0)
            if (auto r = ncclGetUniqueId(&id); r != ncclSuccess) return makeError("profiler.nccl", "ncclGetUniqueId: " + ncclText(r));
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        CFP_TRY(setDevice(m_devices.front()));
        if (auto r = ncclCommInitRank(&m_devices.front().world, n, id, m_rank); r != ncclSuccess)
            return makeError("profiler.nccl", "ncclCommInitRank: " + ncclText(r));
#endif
    } else {
        std::vector<ncclComm_t> comms(static_cast<size_t>(n));
        std::vector<int> list;
        for (const Device& d : m_devices) list.push_back(d.index);
        if (auto r = ncclCommInitAll(comms.data(), n, list.data()); r != ncclSuccess)
            return makeError("profiler.nccl", "ncclCommInitAll: " + ncclText(r));
        for (size_t i = 0; i < m_devices.size(); ++i) m_devices[i].world = comms[i];
    }
    const auto& axes = mesh.axes();
    for (Device& d : m_devices) d.axisComms.assign(axes.size(), nullptr);
    for (size_t a = 0; a < axes.size(); ++a) {
        if (axes[a].size <= 1) continue;
        ncclGroupStart();
        for (Device& d : m_devices) {
            auto coords = mesh.coordinates(d.rank);
            if (!coords) return coords.error();
            int color = 0;
            for (size_t b = 0; b < axes.size(); ++b)
                if (b != a) color = color * static_cast<int>(axes[b].size) + static_cast<int>((*coords)[b]);
            const int key = static_cast<int>((*coords)[a]);
            CFP_TRY(setDevice(d));
            if (auto r = ncclCommSplit(d.world, color, key, &d.axisComms[a], nullptr); r != ncclSuccess) {
                ncclGroupEnd();
                return makeError("profiler.nccl", "ncclCommSplit for axis " + axes[a].name + ": " + ncclText(r));
            }
        }
        if (auto r = ncclGroupEnd(); r != ncclSuccess) return makeError("profiler.nccl", "ncclCommSplit: " + ncclText(r));
    }
    return {};
}

void CudaBackend::freeBuffers(Device& d) {
    static_cast<void>(setDevice(d));
    if (d.graph) cudaGraphExecDestroy(d.graph);
    d.graph = nullptr;
    for (LtGemm& g : d.gemms) g.destroy();
    d.gemms.clear();
    if (d.arena) cudaFree(d.arena);
    if (d.persistent) cudaFree(d.persistent);
    d.arena = d.persistent = nullptr;
    d.arenaBytes = d.persistentBytes = 0;
}

Status CudaBackend::prepare(const SegmentWorkPlan& work) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    m_work.reset();
    // Buffers: every item's operands and results at the start of one arena (items run one after
    // another, so they share it), sized for the largest item, plus the segment's persistent bytes.
    size_t arena = kAlign;
    for (const WorkItem& item : work.items) {
        size_t need = 0;
        switch (item.kind) {
            case WorkKind::Gemm: {
                const auto e = elementBytes(item.gemm.dtype);
                const auto bt = static_cast<size_t>(item.gemm.batch);
                need = alignUp(bt * static_cast<size_t>(item.gemm.m * item.gemm.k) * e) +
                       alignUp(bt * static_cast<size_t>(item.gemm.k * item.gemm.n) * e) +
                       alignUp(bt * static_cast<size_t>(item.gemm.m * item.gemm.n) * e);
                break;
            }
            case WorkKind::Memory: need = alignUp(static_cast<size_t>(item.readBytes)) + alignUp(static_cast<size_t>(item.writeBytes)); break;
            case WorkKind::Collective: need = 2 * alignUp(static_cast<size_t>(item.messageBytes)); break;
        }
        arena = std::max(arena, need);
    }
    for (Device& d : m_devices) {
        CFP_TRY(setDevice(d));
        if (d.graph) {
            cudaGraphExecDestroy(d.graph);
            d.graph = nullptr;
        }
        for (LtGemm& g : d.gemms) g.destroy();
        d.gemms.assign(work.items.size(), LtGemm{});
        if (d.arenaBytes < arena) {
            if (d.arena) cudaFree(d.arena);
            d.arena = nullptr;
            d.arenaBytes = 0;
            if (auto e = cudaMalloc(&d.arena, arena); e != cudaSuccess) return cudaFailure("allocating " + std::to_string(arena) + " bytes of buffers", e);
            d.arenaBytes = arena;
            if (auto e = fillBuffer(d.arena, arena, 0x9E3779B9u, d.stream); e != cudaSuccess) return cudaFailure("filling buffers", e);
        }
        const auto persistent = static_cast<size_t>(std::max<int64_t>(0, work.persistentBytes));
        if (d.persistentBytes != persistent) {
            if (d.persistent) cudaFree(d.persistent);
            d.persistent = nullptr;
            d.persistentBytes = 0;
            if (persistent > 0) {
                if (auto e = cudaMalloc(&d.persistent, persistent); e != cudaSuccess)
                    return cudaFailure("allocating the segment's " + std::to_string(persistent) + " persistent bytes", e);
                d.persistentBytes = persistent;
            }
        }
        // cuBLASLt descriptors and the heuristic's algorithm, once per GEMM.
        for (size_t i = 0; i < work.items.size(); ++i) {
            const WorkItem& item = work.items[i];
            if (item.kind != WorkKind::Gemm) continue;
            LtGemm& g = d.gemms[i];
            const GemmShape& s = item.gemm;
            const cudaDataType_t t = cudaType(s.dtype);
            const cublasComputeType_t compute =
                s.dtype == DType::BF16 || s.dtype == DType::F16 || !m_options.allowTf32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
            const auto e = elementBytes(s.dtype);
            g.aOffset = 0;
            g.bOffset = alignUp(static_cast<size_t>(s.batch * s.m * s.k) * e);
            g.cOffset = g.bOffset + alignUp(static_cast<size_t>(s.batch * s.k * s.n) * e);
            cublasStatus_t st = cublasLtMatmulDescCreate(&g.desc, compute, CUDA_R_32F);
            // Column-major view: A' = B (n×k, ld n), B' = A (k×m, ld k), C' (n×m, ld n).
            if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&g.a, t, static_cast<uint64_t>(s.n), static_cast<uint64_t>(s.k), s.n);
            if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&g.b, t, static_cast<uint64_t>(s.k), static_cast<uint64_t>(s.m), s.k);
            if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatrixLayoutCreate(&g.c, t, static_cast<uint64_t>(s.n), static_cast<uint64_t>(s.m), s.n);
            if (st == CUBLAS_STATUS_SUCCESS && s.batch > 1) {
                const auto batch = static_cast<int32_t>(s.batch);
                const int64_t strides[3] = {s.n * s.k, s.k * s.m, s.n * s.m};
                cublasLtMatrixLayout_t layouts[3] = {g.a, g.b, g.c};
                for (int j = 0; j < 3 && st == CUBLAS_STATUS_SUCCESS; ++j) {
                    st = cublasLtMatrixLayoutSetAttribute(layouts[j], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
                    if (st == CUBLAS_STATUS_SUCCESS)
                        st = cublasLtMatrixLayoutSetAttribute(layouts[j], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[j],
                                                              sizeof strides[j]);
                }
            }
            if (st != CUBLAS_STATUS_SUCCESS) return makeError("profiler.cublas", "describing " + item.name + ": " + cublasText(st));
            cublasLtMatmulPreference_t pref = nullptr;
            cublasLtMatmulPreferenceCreate(&pref);
            const uint64_t ws = kCublasWorkspaceBytes;
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
            cublasLtMatmulHeuristicResult_t result{};
            int found = 0;
            st = cublasLtMatmulAlgoGetHeuristic(d.lt, g.desc, g.a, g.b, g.c, g.c, pref, 1, &result, &found);
            cublasLtMatmulPreferenceDestroy(pref);
            if (st != CUBLAS_STATUS_SUCCESS || found == 0)
                return makeError("profiler.cublas", "no cuBLASLt algorithm for " + item.name + " (" + cublasText(st) + ")");
            g.algo = result.algo;
        }
        // Events: start, end, and one after each item of each iteration for per-item timing
        // (created on demand in launch()).
        if (d.events.size() < 2) {
            for (size_t k = d.events.size(); k < 2; ++k) {
                cudaEvent_t ev;
                if (auto e = cudaEventCreate(&ev); e != cudaSuccess) return cudaFailure("creating events", e);
                d.events.push_back(ev);
            }
        }
    }
    m_work = work;
    m_nvtxName = work.label.empty() ? work.combinationKey : "T" + std::to_string(work.segmentType) + " " + work.label;
    // One GPU per process: capture one iteration in a CUDA graph (launch overhead once per iteration).
    if (m_options.cudaGraphs && m_devices.size() == 1) {
        Device& d = m_devices.front();
        cudaGraph_t graph = nullptr;
        if (cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
            Status st;
            for (size_t i = 0; i < work.items.size() && st; ++i) st = enqueue(d, static_cast<int>(i));
            const cudaError_t end = cudaStreamEndCapture(d.stream, &graph);
            if (st && end == cudaSuccess && graph && cudaGraphInstantiate(&d.graph, graph, 0) != cudaSuccess) d.graph = nullptr;
            if (graph) cudaGraphDestroy(graph);
        }
        cudaGetLastError();  // a failed capture falls back to direct launches
    }
    return {};
}

Status CudaBackend::enqueue(Device& d, int index) {
    const WorkItem& item = m_work->items[static_cast<size_t>(index)];
    if (m_options.nvtx) nvtxRangePushA(item.name.c_str());
    Status result;
    switch (item.kind) {
        case WorkKind::Gemm: {
            const LtGemm& g = d.gemms[static_cast<size_t>(index)];
            char* base = static_cast<char*>(d.arena);
            const float alpha = 1.f, beta = 0.f;
            // Column-major Cᵀ = Bᵀ·Aᵀ: the first operand is B's buffer, the second A's.
            const cublasStatus_t st = cublasLtMatmul(d.lt, g.desc, &alpha, base + g.bOffset, g.a, base + g.aOffset, g.b, &beta, base + g.cOffset,
                                                     g.c, base + g.cOffset, g.c, &g.algo, d.workspace, kCublasWorkspaceBytes, d.stream);
            if (st != CUBLAS_STATUS_SUCCESS) result = makeError("profiler.cublas", item.name + ": " + cublasText(st));
            break;
        }
        case WorkKind::Memory: {
            char* base = static_cast<char*>(d.arena);
            const cudaError_t e = launchMemoryKernel(base, static_cast<size_t>(item.readBytes), base + alignUp(static_cast<size_t>(item.readBytes)),
                                                     static_cast<size_t>(item.writeBytes), d.smCount, d.stream);
            if (e != cudaSuccess) result = cudaFailure(item.name, e);
            break;
        }
        case WorkKind::Collective: {
            if (m_comm == CommMode::Modelled || item.axis < 0 || static_cast<size_t>(item.axis) >= d.axisComms.size()) break;
            ncclComm_t comm = d.axisComms[static_cast<size_t>(item.axis)];
            if (!comm) break;
            const size_t e = elementBytes(item.dtype);
            const ncclDataType_t t = ncclType(item.dtype);
            const auto n = static_cast<size_t>(std::max<int64_t>(1, item.axisSize));
            const size_t count = std::max<size_t>(1, static_cast<size_t>(item.messageBytes) / e);
            char* send = static_cast<char*>(d.arena);
            char* recv = send + alignUp(static_cast<size_t>(item.messageBytes));
            ncclResult_t r = ncclSuccess;
            switch (item.collective) {
                case CollectiveKind::AllReduce: r = ncclAllReduce(send, send, count, t, ncclSum, comm, d.stream); break;
                case CollectiveKind::AllGather: r = ncclAllGather(send, recv, std::max<size_t>(1, count / n), t, comm, d.stream); break;
                case CollectiveKind::ReduceScatter: r = ncclReduceScatter(send, recv, std::max<size_t>(1, count / n), t, ncclSum, comm, d.stream); break;
                case CollectiveKind::AllToAll: r = ncclAlltoAll(send, recv, std::max<size_t>(1, count / (n * n)), t, comm, d.stream); break;
                case CollectiveKind::LocalSlice: break;
            }
            if (r != ncclSuccess) result = makeError("profiler.nccl", item.name + ": " + ncclText(r));
            break;
        }
    }
    if (m_options.nvtx) nvtxRangePop();
    return result;
}

Status CudaBackend::enqueueIteration(bool perItemEvents, int iteration) {
    const auto& items = m_work->items;
    for (size_t i = 0; i < items.size(); ++i) {
        const bool collective = items[i].kind == WorkKind::Collective && m_devices.size() > 1;
        // One thread drives several GPUs: their parts of a collective form one NCCL group.
        if (collective) ncclGroupStart();
        for (Device& d : m_devices) {
            CFP_TRY(setDevice(d));
            Status st = enqueue(d, static_cast<int>(i));
            if (!st) {
                if (collective) ncclGroupEnd();
                return st;
            }
        }
        if (collective)
            if (auto r = ncclGroupEnd(); r != ncclSuccess) return makeError("profiler.nccl", items[i].name + ": " + ncclText(r));
        if (perItemEvents)
            for (Device& d : m_devices) {
                const size_t k = 2 + static_cast<size_t>(iteration) * items.size() + i;
                if (auto e = cudaEventRecord(d.events[k], d.stream); e != cudaSuccess) return cudaFailure("recording an event", e);
            }
    }
    return {};
}

Status CudaBackend::launch(int iterations, Timing timing) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    if (!m_work) return makeError("profiler.internal", "launch without a prepared work plan");
    if (m_inFlight) return makeError("profiler.internal", "launch while another is in flight");
    m_iterations = std::max(1, iterations);
    m_timing = timing;
    const bool perItem = timing == Timing::PerItem;
    const size_t need = 2 + (perItem ? static_cast<size_t>(m_iterations) * m_work->items.size() : 0);
    for (Device& d : m_devices) {
        CFP_TRY(setDevice(d));
        while (d.events.size() < need) {
            cudaEvent_t ev;
            if (auto e = cudaEventCreate(&ev); e != cudaSuccess) return cudaFailure("creating events", e);
            d.events.push_back(ev);
        }
        // The first event of an iteration's items is the previous item's end: the start event.
        if (auto e = cudaEventRecord(d.events[0], d.stream); e != cudaSuccess) return cudaFailure("recording an event", e);
    }
    if (m_options.nvtx) nvtxRangePushA(m_nvtxName.c_str());
    for (int it = 0; it < m_iterations; ++it) {
        if (!perItem && m_devices.size() == 1 && m_devices.front().graph) {
            Device& d = m_devices.front();
            if (auto e = cudaGraphLaunch(d.graph, d.stream); e != cudaSuccess) {
                if (m_options.nvtx) nvtxRangePop();
                return cudaFailure("launching the CUDA graph", e);
            }
            continue;
        }
        Status st = enqueueIteration(perItem, it);
        if (!st) {
            if (m_options.nvtx) nvtxRangePop();
            return st;
        }
    }
    if (m_options.nvtx) nvtxRangePop();
    for (Device& d : m_devices) {
        CFP_TRY(setDevice(d));
        if (auto e = cudaEventRecord(d.events[1], d.stream); e != cudaSuccess) return cudaFailure("recording an event", e);
    }
    m_inFlight = true;
    return {};
}

Result<PollState> CudaBackend::poll(LaunchResult& out) {
    if (m_aborted) return makeError("profiler.aborted", "the backend was aborted");
    if (!m_inFlight) return makeError("profiler.internal", "poll without a launch");
    for (Device& d : m_devices) {
        CFP_TRY(setDevice(d));
        const cudaError_t q = cudaEventQuery(d.events[1]);
        if (q == cudaErrorNotReady) {
            if (d.world) {
                ncclResult_t async = ncclSuccess;
                ncclCommGetAsyncError(d.world, &async);
                if (async != ncclSuccess && async != ncclInProgress) return makeError("profiler.nccl", "asynchronous NCCL error: " + ncclText(async));
            }
            return PollState::Pending;
        }
        if (q != cudaSuccess) return cudaFailure("running the segment", q);
    }
    m_inFlight = false;
    out = LaunchResult{};
    const size_t items = m_work->items.size();
    if (m_timing == Timing::PerItem) out.itemSeconds.assign(items, 0.0);
    for (Device& d : m_devices) {
        float ms = 0.f;
        if (auto e = cudaEventElapsedTime(&ms, d.events[0], d.events[1]); e != cudaSuccess) return cudaFailure("reading events", e);
        out.secondsPerIteration = std::max(out.secondsPerIteration, static_cast<double>(ms) * 1e-3 / m_iterations);
        if (m_timing != Timing::PerItem) continue;
        // Item i of iteration `it` ends at event 2 + it·items + i and starts at the event before
        // it (the start event for the very first item). Mean over iterations, slowest device.
        for (size_t i = 0; i < items; ++i) {
            double sum = 0;
            for (int it = 0; it < m_iterations; ++it) {
                const size_t k = 2 + static_cast<size_t>(it) * items + i;
                float t = 0.f;
                if (cudaEventElapsedTime(&t, k == 2 ? d.events[0] : d.events[k - 1], d.events[k]) == cudaSuccess)
                    sum += static_cast<double>(t) * 1e-3;
            }
            out.itemSeconds[i] = std::max(out.itemSeconds[i], sum / m_iterations);
        }
    }
    return PollState::Done;
}

void CudaBackend::abort() {
    m_aborted = true;
    m_inFlight = false;
    for (Device& d : m_devices) {
        for (ncclComm_t& c : d.axisComms)
            if (c) {
                ncclCommAbort(c);
                c = nullptr;
            }
        if (d.world) {
            ncclCommAbort(d.world);
            d.world = nullptr;
        }
    }
}

double CudaBackend::agree(double value) {
#ifdef CFP_HAVE_MPI
    if (m_mpi && m_ranks > 1) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    return value;
}

bool CudaBackend::anyRank(bool local) {
#ifdef CFP_HAVE_MPI
    if (m_mpi && m_ranks > 1) {
        int v = local ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        return v != 0;
    }
#endif
    return local;
}

void CudaBackend::release() {
    for (Device& d : m_devices) {
        if (cudaSetDevice(d.index) != cudaSuccess) continue;
        if (!m_aborted && d.stream) cudaStreamSynchronize(d.stream);
        freeBuffers(d);
        for (cudaEvent_t e : d.events) cudaEventDestroy(e);
        d.events.clear();
        for (ncclComm_t c : d.axisComms)
            if (c) ncclCommDestroy(c);
        d.axisComms.clear();
        if (d.world) ncclCommDestroy(d.world);
        d.world = nullptr;
        if (d.workspace) cudaFree(d.workspace);
        if (d.lt) cublasLtDestroy(d.lt);
        if (d.stream) cudaStreamDestroy(d.stream);
        d = Device{};
    }
    m_devices.clear();
#ifdef CFP_HAVE_MPI
    if (m_mpiInitialisedHere) {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
    }
#endif
}

}  // namespace

Result<std::unique_ptr<MeasureBackend>> makeCudaBackend(const CudaBackendOptions& options) {
    // Fails fast (no driver, no GPU) before anything is set up.
    auto devices = discoverDevices();
    if (!devices) return devices.error();
#ifndef CFP_HAVE_MPI
    if (options.processes == CudaBackendOptions::Processes::Mpi)
        return makeError("profiler.no_mpi", "this cfp was built without MPI (install Open MPI's development files and rebuild)");
#endif
    return std::unique_ptr<MeasureBackend>(std::make_unique<CudaBackend>(options));
}

}  // namespace cfp::profiler
