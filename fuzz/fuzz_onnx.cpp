// ONNX reader (import/onnx_import.h); without the ONNX library it only checks onnx.unavailable.
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "import/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cfp::ImportOptions options;
    options.maxOps = 50'000;
    options.maxLiteralValues = 1 << 16;
    auto r = cfp::importOnnxBytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx", options);
    if (!r) cfp::fuzz::checkError(r.error(), {"onnx.", "import."});
    else if (!r->graph.validate()) std::abort();
    return 0;
}
