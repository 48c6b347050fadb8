#pragma once
// Hardware specifications: one GPU model and the links between GPUs, loaded from JSON
// (resources/hardware/*.json, embedded in the binary at build time, or a user's own file).
// The format is documented in docs/hardware-format.md.
//
// Numbers are per GPU: peak dense FLOP/s per dtype (tensor cores where the dtype uses them), HBM
// bandwidth and capacity, and per link class the bandwidth one GPU can send per direction and the
// latency of one hop. The cost model (core/cost) turns them into op and collective times.
//
// Stable error codes: hardware.unknown (no built-in spec of that name and no such file),
// hardware.io (cannot read the file), hardware.syntax (not JSON, with line:column),
// hardware.format (a field missing, of the wrong type, or out of range; `where` is the JSON path),
// cluster.bad_nodes.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/types.h"
#include "util/result.h"

namespace cfp {

// Measured NCCL bus bandwidth against message size on a link (nccl-tests' busbw of all-reduce:
// algbw × 2(n−1)/n, so it carries over to other group sizes), replacing the α-β model for the
// collectives it covers (cost/cost_model.h, CostModel::collectiveSeconds).
struct BusCurve {
    std::vector<std::pair<double, double>> points;  // (message bytes, bus bytes/s), sizes ascending
    int64_t devices = 8;            // the group the curve was measured on
    double floorSeconds = 0;        // the smallest all-reduce's time on that group (nccl-tests' latency floor)
    double otherPeakBytesPerSecond = 0;  // all-gather and reduce-scatter: the curve capped here (0: not capped)
    bool empty() const { return points.empty(); }
};

// A fused attention kernel's achieved / peak (cost_model.h "Fused attention"), each a curve over
// the key sequence length (ascending; log-linear between points, the end values beyond), at head
// dimension 128, for the forward kernel (Q·Kᵀ and P·V) and the backward (the scores again, dP,
// dV, dQ, dK), without and with a causal mask (the causal efficiency is of half the s × s work,
// which is what such kernels compute). Empty: not measured (attention matmuls at gemm_efficiency).
struct AttentionCurves {
    std::vector<std::pair<double, double>> forward, backward, causalForward, causalBackward;
    bool empty() const { return forward.empty(); }
};

struct LinkSpec {
    std::string name;                     // "NVLink 4 (NVSwitch)", "InfiniBand NDR 400 Gb/s"
    double bytesPerSecond = 0;            // per GPU, per direction (the β⁻¹ of the α-β model)
    double latencySeconds = 0;            // α: one hop of a ring step
    bool supportsTree = false;            // all-reduce may use a (double binary) tree
    BusCurve busCurve;                    // empty: the α-β model for every collective
};

struct HardwareSpec {
    std::string id;                       // "h100-sxm" (file stem of the built-in spec)
    std::string name;                     // "NVIDIA H100 SXM5 80GB"
    int64_t memoryBytes = 0;              // HBM capacity per GPU
    // What a training process cannot use for tensors: the CUDA context and library workspaces
    // (cuBLAS/cuBLASLt, cuDNN), NCCL's communication buffers, and the caching allocator's
    // fragmentation. Plans fit in memoryBytes − memoryReserveBytes (usableMemoryBytes()).
    int64_t memoryReserveBytes = 0;
    double hbmBytesPerSecond = 0;         // peak HBM bandwidth
    std::map<DType, double> peakFlops;    // peak dense FLOP/s per dtype
    double vectorFlops = 0;               // non-tensor-core FP32 FLOP/s (elementwise work)
    double gemmEfficiency = 0.7;          // achieved / peak for large matmuls (0, 1]
    // Tile and wave quantisation of GEMMs (cost_model.h, "GEMM waves"): the SMs a GEMM's output
    // tiles are spread over and the tile shapes the library chooses among (rows × columns of the
    // output). smCount 0: not modelled (every GEMM at gemmEfficiency).
    int smCount = 0;
    std::vector<std::pair<int, int>> gemmTiles;
    // Achieved / peak for a GEMM with a dimension (m, n or k) that is not a whole number of 16-byte
    // vectors of its type — a vocabulary of 50257, say: the library cannot use its tensor-core
    // kernels that need aligned rows (cost_model.h "Unaligned GEMMs"). 0: not modelled.
    double gemmUnalignedEfficiency = 0;
    // Fused attention kernels: the one frameworks run by default on this GPU (`flash_attention`:
    // cuDNN's on Hopper, as Transformer Engine and PyTorch's scaled_dot_product_attention pick it)
    // and FlashAttention-2 (`flash_attention_2`: PyTorch's flash backend); AttentionKernel::Flash
    // and ::Flash2.
    AttentionCurves flashAttention, flashAttention2;
    double hbmEfficiency = 0.8;           // achieved / peak HBM bandwidth (0, 1]
    double kernelLaunchSeconds = 3e-6;    // fixed cost of one kernel
    // Compute slowed by communication in flight beside it, as a fraction of the overlapped time
    // (NCCL's kernels occupy SMs and HBM bandwidth): plan/step_sim.h.
    double overlapSlowdown = 0.1;
    int64_t gpusPerNode = 8;
    LinkSpec intraNode;
    LinkSpec interNode;
    std::vector<std::string> sources;     // datasheets and references for the numbers

    int64_t usableMemoryBytes() const { return memoryBytes - memoryReserveBytes; }
    // Peak dense FLOP/s for `dtype`; falls back to fp32's entry, then to vectorFlops.
    double peakFlopsFor(DType dtype) const;
};

// The reserve of a spec that states none (`memory_reserve_gib` left out): 2 GiB for the CUDA
// context, library workspaces and NCCL buffers, plus 5% of the capacity for allocator
// fragmentation (docs/hardware-format.md, "Usable memory").
int64_t defaultMemoryReserveBytes(int64_t memoryBytes);

// The JSON format's name and version ("format": "cfp-hardware", "version": 1).
inline constexpr std::string_view kHardwareFormatName = "cfp-hardware";
inline constexpr int64_t kHardwareFormatVersion = 1;

// Built-in spec ids, sorted ("a100-pcie-40gb", …, "v100-sxm-32gb").
std::vector<std::string> hardwareNames();

// A built-in id ("h100-sxm") or a path to a JSON file (anything containing '/' or ending ".json").
Result<HardwareSpec> loadHardware(std::string_view nameOrPath);
// Parses spec JSON text; `origin` names it in errors (a file path or "builtin:h100-sxm").
// The spec's `id` is the stem of `origin`: "builtin:h100-sxm" → "h100-sxm", "./my-gpu.json" → "my-gpu".
Result<HardwareSpec> parseHardware(std::string_view jsonText, std::string_view origin);

// The embedded text of a built-in spec, comments and sources included (a starting point for a
// user's own file), or nullopt when `id` is not a built-in.
std::optional<std::string_view> builtinHardwareJson(std::string_view id);

// `spec` as JSON in the format above (no comments, `id` not included: it comes from the file name).
// parseHardware reads it back to the same spec, up to the last bit of the unit conversions.
std::string writeHardwareJson(const HardwareSpec& spec);

struct Cluster {
    HardwareSpec hardware;
    int64_t nodes = 1;
    int64_t devices() const { return nodes * hardware.gpusPerNode; }
    // "16 × 8 NVIDIA H100 SXM5 80GB"
    std::string toString() const;
};

// nodes ≥ 1 and devices within kMaxMeshDevices; error cluster.bad_nodes otherwise.
Result<Cluster> makeCluster(HardwareSpec hardware, int64_t nodes);

}  // namespace cfp
