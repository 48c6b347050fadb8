// `cfp devices`: the GPUs the profiler can use.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "profiler/profiler.h"

namespace cfp::cli {

int cmdDevices(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp devices [--json]\n\nLists the GPUs the profiler can use. Exits 1 when there are none.\n";
        return kExitOk;
    }
    const auto backend = profiler::backendInfo();
    auto devices = profiler::discoverDevices();
    if (args->has("--json")) {
        Json j;
        j["backend_compiled"] = backend.compiled;
        j["backend"] = backend.description;
        j["devices"] = Json::array();
        if (devices) {
            for (const auto& d : *devices)
                j["devices"].push_back({{"index", d.index},
                                        {"name", d.name},
                                        {"memory_bytes", d.memoryBytes},
                                        {"sm_count", d.smCount},
                                        {"compute_capability", std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor)}});
        } else {
            j["error"] = devices.error().toString();
        }
        std::cout << j.dump(2) << '\n';
        return devices ? kExitOk : kExitFailure;
    }
    std::cout << "profiler backend: " << backend.description << '\n';
    if (!devices) return fail(devices.error());
    for (const auto& d : *devices)
        std::printf("  GPU %d  %-28s %s  %d SMs  sm_%d%d\n", d.index, d.name.c_str(),
                    cli::humanBytes(static_cast<double>(d.memoryBytes)).c_str(), d.smCount, d.computeMajor,
                    d.computeMinor);
    return kExitOk;
}

// Memory sizes: plain bytes or with a unit (GiB, GB, MiB, MB, KiB, KB).

}  // namespace cfp::cli
