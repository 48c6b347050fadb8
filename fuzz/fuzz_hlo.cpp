// HLO text parser and importer (import/hlo_import.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "import/hlo_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cfp::ImportOptions options;
    options.maxOps = 2000;  // unrolled loops and inlined calls stop early: more executions per second
    options.maxLiteralValues = 1 << 16;
    auto r = cfp::importHloText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.hlo", options);
    if (!r) cfp::fuzz::checkError(r.error(), {"hlo.", "import."});
    else if (!r->graph.validate()) std::abort();
    return 0;
}
