// Hugging Face config.json reader (models/models.h parseHfConfig).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "models/models.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto r = cfp::parseHfConfig(std::string_view(reinterpret_cast<const char*>(data), size), "config.json");
    if (!r) cfp::fuzz::checkError(r.error(), {"config.", "model."});
    else if (!cfp::validateConfig(*r)) std::abort();  // accepted configs are valid
    return 0;
}
