#include "plan/run_config.h"

#include "cost/step_policy.h"

#include <charconv>
#include <vector>

namespace cfp {

std::string_view recomputeModeName(RecomputeMode m) {
    switch (m) {
        case RecomputeMode::None: return "none";
        case RecomputeMode::Selective: return "selective";
        case RecomputeMode::Full: return "full";
        case RecomputeMode::Op: return "op";
    }
    return "none";
}

namespace {

Error syntax(const std::string& message) { return makeError("config.syntax", message, "--config"); }

Result<int64_t> positive(std::string_view key, std::string_view v, int64_t min) {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < min)
        return syntax(std::string(key) + "=" + std::string(v) + ": expected an integer of at least " + std::to_string(min));
    return n;
}

}  // namespace

Result<RunConfig> RunConfig::parse(std::string_view text) {
    RunConfig c;
    if (text.empty()) return syntax("empty configuration; expected keys such as tp=8,dp=16,zero=1,mbs=1");
    std::vector<std::string_view> seen;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = std::min(text.find(',', start), text.size());
        const std::string_view item = text.substr(start, end - start);
        start = end + 1;
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
            return syntax("'" + std::string(item) + "' is not KEY=VALUE");
        const std::string_view key = item.substr(0, eq), v = item.substr(eq + 1);
        for (std::string_view k : seen)
            if (k == key) return syntax(std::string(key) + " is given twice");
        seen.push_back(key);
        if (key == "tp" || key == "dp" || key == "pp" || key == "vp" || key == "cp" || key == "mbs") {
            auto n = positive(key, v, 1);
            if (!n) return n.error();
            (key == "tp" ? c.tp : key == "dp" ? c.dp : key == "pp" ? c.pp : key == "vp" ? c.vp : key == "cp" ? c.cp : c.microBatch) = *n;
        } else if (key == "pp_first" || key == "pp_last") {
            auto n = positive(key, v, 1);
            if (!n) return n.error();
            (key == "pp_first" ? c.ppFirst : c.ppLast) = *n;
        } else if (key == "schedule") {
            auto kind = parsePlannedScheduleKind(v);
            if (!kind && kind.error().code == "schedule.unsupported")
                return makeError(kind.error().code, "schedule=" + std::string(v) + ": " + kind.error().message, "--config");
            if (!kind) return syntax("schedule=" + std::string(v) + ": expected 1f1b, interleaved, gpipe, zb-h1, zb-h2, zb-v, dualpipe-v or dualpipe");
            // A configuration runs a schedule a framework generates; the optimiser's and a CSV's
            // are cfp plan's (--schedule mip, --schedule-csv).
            if (*kind == PipeScheduleKind::Mip || *kind == PipeScheduleKind::Custom)
                return makeError("schedule.unsupported",
                                 "schedule=" + std::string(v) + ": a configuration runs a generated schedule; cfp plan --pp P --schedule mip "
                                 "optimises one and --schedule-csv FILE reads one",
                                 "--config");
            c.schedule = *kind;
        } else if (key == "cp_comm") {
            if (v != "p2p" && v != "all_gather") return syntax("cp_comm=" + std::string(v) + ": expected p2p or all_gather");
            c.cpRing = v == "p2p";
        } else if (key == "zero") {
            auto n = positive(key, v, 0);
            if (!n) return n.error();
            if (*n > 3) return syntax("zero=" + std::string(v) + ": expected 0, 1, 2 or 3");
            c.zero = static_cast<int>(*n);
        } else if (key == "sp") {
            if (v != "on" && v != "off") return syntax("sp=" + std::string(v) + ": expected on or off");
            c.sequenceParallel = v == "on";
        } else if (key == "overlap") {
            MemoryPolicy check;
            if (!setOverlapWord(check, v)) return syntax("overlap=" + std::string(v) + ": expected all, on, grad, param or off");
            c.overlap = std::string(v);
        } else if (key == "bucket") {
            auto n = positive(key, v, 1);
            if (!n) return n.error();
            c.bucketMb = *n;
        } else if (key == "recompute") {
            if (v == "none") c.recompute = RecomputeMode::None;
            else if (v == "selective") c.recompute = RecomputeMode::Selective;
            else if (v == "full") c.recompute = RecomputeMode::Full;
            else if (v == "op") c.recompute = RecomputeMode::Op;
            else return syntax("recompute=" + std::string(v) + ": expected none, selective, full or op");
        } else {
            return syntax("unknown key '" + std::string(key) + "'; expected tp, dp, pp, vp, pp_first, pp_last, schedule, cp, cp_comm, zero, mbs, recompute, sp, overlap or bucket");
        }
        if (end == text.size()) break;
    }
    return c;
}

std::string RunConfig::toString() const {
    std::string out;
    auto add = [&](std::string_view key, const std::string& v) { out += (out.empty() ? "" : ",") + std::string(key) + "=" + v; };
    if (tp) add("tp", std::to_string(*tp));
    if (dp) add("dp", std::to_string(*dp));
    if (pp) add("pp", std::to_string(*pp));
    if (vp) add("vp", std::to_string(*vp));
    if (ppFirst) add("pp_first", std::to_string(*ppFirst));
    if (ppLast) add("pp_last", std::to_string(*ppLast));
    if (schedule) add("schedule", std::string(pipeScheduleName(*schedule)));
    if (cp) add("cp", std::to_string(*cp));
    if (cpRing) add("cp_comm", *cpRing ? "p2p" : "all_gather");
    if (zero) add("zero", std::to_string(*zero));
    if (microBatch) add("mbs", std::to_string(*microBatch));
    if (recompute) add("recompute", std::string(recomputeModeName(*recompute)));
    if (sequenceParallel) add("sp", *sequenceParallel ? "on" : "off");
    if (overlap) add("overlap", *overlap);
    if (bucketMb) add("bucket", std::to_string(*bucketMb));
    return out;
}

}  // namespace cfp
