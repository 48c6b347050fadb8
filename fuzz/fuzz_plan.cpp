// Plan file reader (plan/plan_json.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "plan/plan_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> names;
    auto r = cfp::planFromJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.plan.json", &names);
    if (!r) cfp::fuzz::checkError(r.error(), {"plan."});
    return 0;
}
