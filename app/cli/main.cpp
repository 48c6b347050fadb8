// `cfp`: the headless command-line tool over the CFP Explorer core; one file per command
// (commands.h).
//
// Exit codes: 0 success, 1 the input or the work failed (a one-line error on stderr),
// 2 usage error (unknown command or option).

#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "loader/model_loader.h"

namespace {

const char* kMainHelp = R"(cfp — plan intra-operator parallelism for large-model training (CFP)

Usage: cfp <command> [options]

Commands:
  describe MODEL   size of the model's training step: ops, parameters, FLOPs, activations
  analyze MODEL    ParallelBlocks, repeated segments and search space on a device mesh
  graph MODEL      write the model's training-step graph as native JSON (docs/graph-format.md)
  plan MODEL       the fastest plan that fits: segment DP on a cluster, with baselines
  estimate MODEL   price a configuration you run (--config tp=8,dp=16,zero=1,mbs=1): step time, memory, fits
  export PLAN      write a plan for a training job (jax, dtensor, megatron, hlo-sharding, trace, hlo, torchtitan)
  schedule         replay a pipeline schedule (1f1b, zb-h2, zb-v, dualpipe, …): step, bubble, memory
  profile MODEL    measure every segment type on the GPUs into a profile DB (cfp plan --db uses it)
  hardware         list the built-in hardware specs
  presets          list the built-in models
  devices          list the GPUs the profiler can use, or say why there are none
  iopddl           solve / evaluate problems in the IOPDDL contest format, export op-level ones

MODEL is builtin:NAME (see `cfp presets`), a Hugging-Face-style config.json, a native graph
file, XLA HLO text (.hlo) or an ONNX model (.onnx). The default model is )" "builtin:gpt3-1.3b" R"(.

Run `cfp <command> --help` for a command's options. `cfp --version` prints the version.
)";

}  // namespace

using namespace cfp::cli;

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kMainHelp;
        return args.empty() ? kExitUsage : kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "cfp " CFP_VERSION "\n";
        return kExitOk;
    }
    const std::string command = args[0];
    args.erase(args.begin());
    try {
        if (command == "describe") return cmdDescribe(args);
        if (command == "analyze") return cmdAnalyze(args);
        if (command == "graph") return cmdGraph(args);
        if (command == "presets") return cmdPresets(args);
        if (command == "plan") return cmdPlan(args);
        if (command == "estimate") return cmdEstimate(args);
        if (command == "export") return cmdExport(args);
        if (command == "hardware") return cmdHardware(args);
        if (command == "devices") return cmdDevices(args);
        if (command == "profile") return cmdProfile(args);
        if (command == "schedule") return cmdSchedule(args);
        if (command == "iopddl") return runIopddlCommand(args);
    } catch (const std::bad_alloc&) {
        std::cerr << "cfp: error: out of memory while running '" << command << "' (try a smaller --batch/--seq)\n";
        return kExitFailure;
    }
    std::cerr << "cfp: error: unknown command '" << command << "' (see cfp --help) [cli.usage]\n";
    return kExitUsage;
}
