// StableHLO text translator and importer (import/stablehlo_import.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "import/stablehlo_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cfp::ImportOptions options;
    options.maxOps = 2000;  // unrolled loops and inlined calls stop early: more executions per second
    options.maxLiteralValues = 1 << 16;
    auto r = cfp::importStableHloText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.mlir", options);
    if (!r) cfp::fuzz::checkError(r.error(), {"stablehlo.", "hlo.", "import."});
    else if (!r->graph.validate()) std::abort();
    return 0;
}
