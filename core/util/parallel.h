#pragma once

// Data-parallel loops for the planner's CPU work (block checking, cost tables, the DP's large
// steps, the evaluator). The calling thread and up to threads - 1 helper threads each take one
// contiguous range of indices. Callers write results per index, or per worker and merge them
// in worker order, so that results never depend on the thread count or on timing.

#include <cstdint>
#include <functional>

#include "util/result.h"

namespace cfp {

// The thread count an option of 0 means: CFP_THREADS when it is set to a positive number, else
// the hardware's count (at least 1).
int defaultThreadCount();

// `requested` resolved: 0 → defaultThreadCount(), otherwise at least 1.
int resolveThreads(int requested);

// Splits [0, n) into at most `threads` contiguous ranges of at least `grain` indices (fewer
// ranges when n is small) and runs fn(begin, end, worker) for each, worker 0 on the calling
// thread, workers numbered in index order. Returns when all are done; the first exception a
// range throws (lowest worker) is rethrown.
void parallelFor(int64_t n, int threads, int64_t grain, const std::function<void(int64_t, int64_t, int)>& fn);

// parallelFor with ranges that can fail: a range stops at its first error; the lowest range's
// error is returned (the first in index order).
Status parallelTry(int64_t n, int threads, int64_t grain, const std::function<Status(int64_t, int64_t, int)>& fn);

// How many ranges parallelFor(n, threads, grain, …) uses.
int parallelRanges(int64_t n, int threads, int64_t grain);

}  // namespace cfp
