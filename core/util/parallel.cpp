#include "util/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

namespace cfp {

int defaultThreadCount() {
    if (const char* env = std::getenv("CFP_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v > 0) return static_cast<int>(std::min<long>(v, 1024));
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

int resolveThreads(int requested) { return requested == 0 ? defaultThreadCount() : std::max(1, requested); }

int parallelRanges(int64_t n, int threads, int64_t grain) {
    if (n <= 0) return 0;
    const int64_t byGrain = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
    return static_cast<int>(std::clamp<int64_t>(byGrain, 1, std::max(1, threads)));
}

void parallelFor(int64_t n, int threads, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn) {
    const int ranges = parallelRanges(n, threads, grain);
    if (ranges == 0) return;
    if (ranges == 1) {
        fn(0, n, 0);
        return;
    }
    auto begin = [&](int w) { return n * w / ranges; };
    std::vector<std::exception_ptr> errors(static_cast<size_t>(ranges));
    auto run = [&](int w) {
        try {
            fn(begin(w), begin(w + 1), w);
        } catch (...) {
            errors[static_cast<size_t>(w)] = std::current_exception();
        }
    };
    std::vector<std::thread> helpers;
    helpers.reserve(static_cast<size_t>(ranges) - 1);
    for (int w = 1; w < ranges; ++w) helpers.emplace_back(run, w);
    run(0);
    for (std::thread& t : helpers) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
}

Status parallelTry(int64_t n, int threads, int64_t grain, const std::function<Status(int64_t, int64_t, int)>& fn) {
    std::vector<Status> failed(static_cast<size_t>(std::max(1, parallelRanges(n, threads, grain))));
    parallelFor(n, threads, grain, [&](int64_t b, int64_t e, int w) { failed[static_cast<size_t>(w)] = fn(b, e, w); });
    for (Status& st : failed)
        if (!st) return st;
    return {};
}

}  // namespace cfp
