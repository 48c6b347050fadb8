// Benchmark: builds the training-step graph of each built-in preset and prints ops, build time and
// peak resident memory. Each preset is built in a forked child so that its peak memory is its own
// (wait4's ru_maxrss of the child). Not a test: it prints numbers for docs/BENCHMARKS.md.
//
//   bench_build [--batch N] [--seq N] [--repeat R] [PRESET...]     (default: every preset)

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "models/models.h"
#include "stats/graph_stats.h"

using namespace cfp;

namespace {

int runOne(const std::string& name, const BuildOptions& options, int repeat) {
    auto config = presetConfig(name);
    if (!config) {
        std::fprintf(stderr, "%s\n", config.error().toString().c_str());
        return 1;
    }
    double best = 1e30;
    int64_t ops = 0, params = 0;
    for (int r = 0; r < repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        auto model = buildTrainingStep(*config, options);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!model) {
            std::fprintf(stderr, "%s: %s\n", name.c_str(), model.error().toString().c_str());
            return 1;
        }
        best = std::min(best, seconds);
        ops = model->graph.size();
        params = computeStats(model->graph).trainableParams;
    }
    std::printf("%-14s %9lld %12.3f %10.1f", name.c_str(), static_cast<long long>(ops), params / 1e9, best * 1000.0);
    std::fflush(stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    BuildOptions options;
    int repeat = 3;
    std::vector<std::string> names;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--batch" || a == "--seq" || a == "--repeat") && i + 1 < argc) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (v <= 0) {
                std::fprintf(stderr, "bench_build: %s expects a positive integer\n", a.c_str());
                return 2;
            }
            if (a == "--batch") options.batch = v;
            else if (a == "--seq") options.seq = v;
            else repeat = static_cast<int>(v);
        } else if (a == "--help" || a == "-h") {
            std::printf("Usage: bench_build [--batch N] [--seq N] [--repeat R] [PRESET...]\n");
            return 0;
        } else {
            names.push_back(a);
        }
    }
    if (names.empty()) names = presetNames();
    std::printf("# batch %lld, seq %s, best of %d builds, one thread\n", static_cast<long long>(options.batch),
                options.seq ? std::to_string(options.seq).c_str() : "model default", repeat);
    std::printf("%-14s %9s %12s %10s %12s\n", "preset", "ops", "params (B)", "build ms", "peak RSS MB");
    int status = 0;
    for (const std::string& name : names) {
        std::fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) _exit(runOne(name, options, repeat));
        int childStatus = 0;
        struct rusage usage {};
        if (pid < 0 || wait4(pid, &childStatus, 0, &usage) < 0) {
            std::perror("bench_build: fork/wait");
            return 1;
        }
        if (!WIFEXITED(childStatus) || WEXITSTATUS(childStatus) != 0) {
            std::printf("%-14s failed\n", name.c_str());
            status = 1;
            continue;
        }
        std::printf(" %12.1f\n", usage.ru_maxrss / 1024.0);
    }
    return status;
}
