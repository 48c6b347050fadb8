#include "profiler/profiler.h"

namespace cfp::profiler {

#ifndef CFP_HAVE_CUDA
BackendInfo backendInfo() {
    return {false, "built without the CUDA/NCCL backend (CUDA toolkit or NCCL not found at configure time)"};
}

Result<std::vector<GpuInfo>> discoverDevices() {
    return makeError("profiler.no_backend", backendInfo().description);
}
#endif

}  // namespace cfp::profiler
