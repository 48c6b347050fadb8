// Stand-in for memory_kernel.cu when nvcc is not available: a device-to-device copy of the bytes
// both read and written, and a memset of the remaining writes (extra reads are not replayed).
#include "memory_kernel.h"

namespace cfp::profiler {

cudaError_t launchMemoryKernel(const void* src, size_t readBytes, void* dst, size_t writeBytes, int, cudaStream_t stream) {
    const size_t both = readBytes < writeBytes ? readBytes : writeBytes;
    if (both > 0) {
        const cudaError_t e = cudaMemcpyAsync(dst, src, both, cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess) return e;
    }
    if (writeBytes > both) return cudaMemsetAsync(static_cast<char*>(dst) + both, 0, writeBytes - both, stream);
    return cudaSuccess;
}

cudaError_t fillBuffer(void* p, size_t bytes, unsigned, cudaStream_t stream) {
    return cudaMemsetAsync(p, 0x3E, bytes, stream);  // every bf16 0.186, fp32 0.186: non-zero at least
}

bool haveMemoryKernel() { return false; }

}  // namespace cfp::profiler
