// Native graph JSON reader (io/graph_json.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "io/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cfp::GraphReadLimits limits;
    limits.maxNodes = 100'000;
    limits.maxLiteralValues = 1 << 16;
    auto r = cfp::readGraphJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", limits);
    if (!r) cfp::fuzz::checkError(r.error(), {"json.", "graph.", "shape."});
    else if (!r->validate()) std::abort();  // what the reader accepts satisfies the IR's invariants
    return 0;
}
