// `cfp hardware`: the built-in hardware specs.

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
#include "hardware/hardware.h"

namespace cfp::cli {

int cmdHardware(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = cli::parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << "Usage: cfp hardware [--json]\n\nLists the built-in hardware specs (docs/hardware-format.md): HBM and the usable memory\n"
                     "plans fit in (HBM less the spec's reserve for the CUDA context, library workspaces, NCCL\n"
                     "buffers and allocator fragmentation).\n";
        return kExitOk;
    }
    Json list = Json::array();
    for (const std::string& name : hardwareNames()) {
        auto h = loadHardware(name);
        if (!h) return fail(h.error());
        list.push_back({{"id", h->id},
                        {"name", h->name},
                        {"memory_bytes", h->memoryBytes},
                        {"memory_reserve_bytes", h->memoryReserveBytes},
                        {"usable_memory_bytes", h->usableMemoryBytes()},
                        {"hbm_bytes_per_second", h->hbmBytesPerSecond},
                        {"bf16_flops", h->peakFlopsFor(DType::BF16)},
                        {"gpus_per_node", h->gpusPerNode},
                        {"intra_node", h->intraNode.name},
                        {"inter_node", h->interNode.name}});
    }
    if (args->has("--json")) {
        std::cout << list.dump(2) << '\n';
        return kExitOk;
    }
    for (const auto& h : list)
        std::printf("  %-16s %-28s %9s (%s usable)  %6.0f TFLOP/s bf16  %s per node\n", h["id"].get<std::string>().c_str(),
                    h["name"].get<std::string>().c_str(), cli::humanBytes(h["memory_bytes"].get<double>()).c_str(),
                    cli::humanBytes(h["usable_memory_bytes"].get<double>()).c_str(), h["bf16_flops"].get<double>() / 1e12,
                    std::to_string(h["gpus_per_node"].get<int64_t>()).c_str());
    return kExitOk;
}

}  // namespace cfp::cli
