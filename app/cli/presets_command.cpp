// `cfp presets`: the built-in models.

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
#include "models/models.h"

namespace cfp::cli {

int cmdPresets(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp presets [--json]\n\nLists the built-in models (use them as builtin:NAME).\n";
        return kExitOk;
    }
    Json list = Json::array();
    for (const std::string& name : presetNames()) {
        auto c = presetConfig(name);
        if (!c) return fail(c.error());
        list.push_back({{"name", "builtin:" + name},
                        {"family", std::string(modelFamilyName(c->family))},
                        {"params", analyticParameterCount(*c)},
                        {"layers", c->numLayers},
                        {"hidden", c->hiddenSize}});
    }
    if (args->has("--json")) {
        std::cout << list.dump(2) << '\n';
        return kExitOk;
    }
    std::printf("  %-24s %-7s %7s %7s %12s\n", "model", "family", "layers", "hidden", "parameters");
    for (const auto& p : list)
        std::printf("  %-24s %-7s %7lld %7lld %12s\n", p["name"].get<std::string>().c_str(),
                    p["family"].get<std::string>().c_str(), static_cast<long long>(p["layers"].get<int64_t>()),
                    static_cast<long long>(p["hidden"].get<int64_t>()),
                    cli::humanCount(static_cast<double>(p["params"].get<int64_t>())).c_str());
    return kExitOk;
}

}  // namespace cfp::cli
