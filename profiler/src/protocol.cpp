#include "profiler/protocol.h"

#include <cmath>
#include <cstdio>

namespace cfp::profiler {

std::string ProtocolSettings::describe() const {
    char buf[160];
    if (abandonFactor > 0)
        std::snprintf(buf, sizeof buf, "%d warm-ups, %dx%d timed, abandon at %.2gx, keep %d+%d", warmupRuns, timedRounds, runsPerRound,
                      abandonFactor, keepBestByTime, keepBestByMemory);
    else
        std::snprintf(buf, sizeof buf, "%d warm-ups, %dx%d timed, no abandonment, keep %d+%d", warmupRuns, timedRounds, runsPerRound,
                      keepBestByTime, keepBestByMemory);
    return buf;
}

Status validateProtocol(const ProtocolSettings& s) {
    auto bad = [](const std::string& what) { return makeError("profiler.bad_protocol", what); };
    if (s.warmupRuns < 0 || s.warmupRuns > 1000) return bad("warm-up runs must be 0..1000, got " + std::to_string(s.warmupRuns));
    if (s.timedRounds < 1 || s.timedRounds > 1000) return bad("timed rounds must be 1..1000, got " + std::to_string(s.timedRounds));
    if (s.runsPerRound < 1 || s.runsPerRound > 100000)
        return bad("runs per round must be 1..100000, got " + std::to_string(s.runsPerRound));
    if (!(s.abandonFactor == 0 || (s.abandonFactor >= 1 && std::isfinite(s.abandonFactor))))
        return bad("the abandonment factor must be 0 (off) or at least 1");
    if (s.keepBestByTime < 0 || s.keepBestByMemory < 0) return bad("the numbers of combinations to keep must not be negative");
    if (!(s.watchdogSeconds > 0) || !(s.watchdogFactor > 0)) return bad("the watchdog limits must be positive");
    if (!(s.pollSeconds > 0 && s.pollSeconds <= 0.1)) return bad("the poll interval must be in (0, 0.1] seconds");
    if (!(s.cancelGraceSeconds >= 0 && s.cancelGraceSeconds <= 0.9)) return bad("the cancel grace time must be in [0, 0.9] seconds");
    return {};
}

}  // namespace cfp::profiler
