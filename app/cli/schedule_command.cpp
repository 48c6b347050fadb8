// `cfp schedule`: a pipeline schedule without a model (plan/pipeline.h): generate or read one, or
// search one with the schedule optimiser (plan/pipeline_mip.h), replay it with given per-stage
// times, print the step, the bubble and the activations in flight.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "format.h"
#include "io/atomic_file.h"
#include "plan/pipeline.h"
#include "plan/pipeline_mip.h"

namespace cfp::cli {

namespace {

const char* kHelp = R"(Usage: cfp schedule --ranks P --micro-batches M [options]

Replays a pipeline schedule on P ranks with uniform stages and prints the step time, the bubble
(the idlest rank's idle time) and the activations each rank holds at its peak, in micro-batches
of one rank's share of the model.

  --schedule S        gpipe | 1f1b | interleaved (Megatron-LM's, needs --chunks ≥ 2 and M a
                      multiple of P) | zb-h1 (zero bubble, B split into I and W) | zb-h2 (zero
                      bubble with up to 2P − 1 micro-batches in flight) | zb-v (2 chunks per rank
                      in a V) | dualpipe-v (DeepSeek's DualPipeV: a V, overlapped F&B pairs,
                      M ≥ 2P) | dualpipe (DeepSeek's DualPipe: P even, M even and ≥ 2P, half
                      the micro-batches from each end, 2 copies of the parameters) | mip
                      (searched: the schedule optimiser, a mixed-integer program after She et al.,
                      arXiv 2503.09357, solved by CBC from the best generated schedule; F, I and W
                      of every micro-batch and stage placed one at a time per rank within the
                      memory limit; --placement v, looped or bidirectional)         default 1f1b
  --chunks V          model chunks per rank (virtual stages)     default 2 for zb-v, dualpipe-v
                      and dualpipe (which need 2), else 1
  --f S --b S --w S   seconds of one micro-batch's forward, input-gradient backward and
                      weight-gradient backward on one rank's share of the model (a full backward
                      is b + w)                                                       default 1 each
                      (with --chunks V each chunk takes 1/V of them; dualpipe's two chunks are
                      copies of the same share and take all of them)
  --overlap O         serial (an F&B pair takes F + B) | full (max(F, B): each hides the
                      other, DeepSeek's ideal F&B)                                  default serial
  --comm S            seconds to send an activation or its gradient to the next rank   default 0
  --from FILE         read the schedule from CSV (one line per rank, actions such as 0F1,1B0,0W2
                      or (2F4;1B0)OVERLAP_F_B: PyTorch's torch.distributed.pipelining action
                      strings); --micro-batches is then taken from the file
  --placement L       the stages' ranks for --from and mip: looped (stage s on rank s mod P) | v
                      (odd chunks on ranks P − 1..0) | bidirectional (DualPipe's)
                                                      default looped (--from), v (mip)
  --memory-limit N    mip: stage activations a rank may hold at once (the replay's count: a
                      forward's until its W)     default DualPipeV's peak (v), DualPipe's
                      (bidirectional), else the fastest generated schedule's
  --time-limit S      mip: seconds for the solver (it stops with the best schedule found) default 60
  --memory-weight S   mip: minimise the step + S × the largest peak of stage activations  default 0
  -o FILE             write the schedule as CSV
  --json              machine-readable: step_seconds, bubble_seconds, bubble_fraction,
                      span_bubble_seconds (the idlest rank between its first and last action),
                      peak_activations (per rank, micro-batches), busy_seconds, start_seconds,
                      end_seconds; mip adds memory_limit, warm_start, bound_seconds, gap,
                      status, solve_seconds, model size and the bubbles it is compared with
)";

Result<double> nonNegative(const std::string& option, const std::string& text) {
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v) || v < 0)
        return makeError("cli.usage", option + " expects seconds (a number ≥ 0), got '" + text + "'");
    return v;
}


// A generated schedule of `kind` on P ranks replayed with a rank's F, I, W shared by its stages, or
// nothing where the generator refuses the shape.
std::optional<PipeReplay> replayGenerated(PipeScheduleKind kind, int32_t ranks, int32_t microBatches, double f, double b, double w, double comm) {
    auto s = makeSchedule(kind, ranks, pipeSchedulePlacement(kind) == PipePlacement::Looped ? 1 : 2, microBatches);
    if (!s) return std::nullopt;
    const double share = static_cast<double>(s->ranks) / static_cast<double>(s->pathStages());
    auto r = replaySchedule(*s, {StageTimes{f * share, b * share, w * share, share}}, comm);
    if (!r) return std::nullopt;
    return *r;
}

// `cfp schedule --schedule mip`: the schedule optimiser, its warm start and bound, and the bubble
// against DualPipe(V) and the zero-bubble schedules of the same ranks and micro-batches.
int runMip(const ParsedArgs& args, int32_t ranks, int32_t chunks, PipePlacement placement, PipeOverlap overlap, double f, double b, double w,
           double comm) {
    if (overlap == PipeOverlap::Full)
        return fail(makeError("cli.usage", "--overlap full is not modelled by the schedule optimiser: it runs one action at a time per rank"));
    auto mText = args.value("--micro-batches");
    if (!mText) return fail(makeError("cli.usage", "schedule needs --micro-batches M"));
    auto m = parsePositive("--micro-batches", *mText);
    if (!m) return fail(m.error());
    if (*m > 100000) return fail(makeError("cli.usage", "at most 100000 micro-batches"));
    PipeMipRequest request;
    request.placement = placement;
    request.ranks = ranks;
    request.chunks = chunks;
    request.microBatches = static_cast<int32_t>(*m);
    PipeSchedule shape;
    shape.placement = placement;
    shape.ranks = ranks;
    shape.chunks = chunks;
    const double share = static_cast<double>(ranks) / static_cast<double>(shape.pathStages());
    request.times = {StageTimes{f * share, b * share, w * share, share}};
    request.transferSeconds = comm;
    if (auto v = args.value("--memory-limit")) {
        auto limit = parsePositive("--memory-limit", *v);
        if (!limit) return fail(limit.error());
        request.memoryLimit = static_cast<int32_t>(std::min<int64_t>(*limit, 1 << 30));
    }
    if (auto v = args.value("--memory-weight")) {
        auto weight = nonNegative("--memory-weight", *v);
        if (!weight) return fail(weight.error());
        request.memoryWeightSeconds = *weight;
    }
    PipeMipOptions options;
    if (auto v = args.value("--time-limit")) {
        auto seconds = nonNegative("--time-limit", *v);
        if (!seconds) return fail(seconds.error());
        options.timeLimitSeconds = *seconds;
    }
    auto result = optimizePipeSchedule(request, options);
    if (!result) return fail(result.error().withContext("--schedule mip"));
    const PipeMipResult& r = *result;
    if (auto out = args.value("-o")) {
        if (auto st = writeFileAtomically(*out, r.schedule.toCsv()); !st) return fail(st.error());
        std::cerr << "cfp: wrote the schedule to " << *out << '\n';
    }
    struct Compared {
        std::string name;
        double bubble;
    };
    std::vector<Compared> compared;
    for (PipeScheduleKind k : {PipeScheduleKind::DualPipeV, PipeScheduleKind::DualPipe, PipeScheduleKind::ZeroBubbleV, PipeScheduleKind::ZeroBubbleH1})
        if (auto rep = replayGenerated(k, ranks, request.microBatches, f, b, w, comm)) compared.push_back({std::string(pipeScheduleName(k)), rep->bubbleSeconds()});
    const double bubble = r.replay.bubbleSeconds();
    auto ratio = [&](double other) { return other > 0 ? bubble / other : (bubble > 0 ? std::numeric_limits<double>::infinity() : 1.0); };
    if (args.has("--json")) {
        nlohmann::json j;
        j["schedule"] = "mip";
        j["ranks"] = ranks;
        j["chunks"] = chunks;
        j["placement"] = std::string(pipePlacementName(placement));
        j["micro_batches"] = request.microBatches;
        j["step_seconds"] = r.replay.seconds;
        j["bubble_seconds"] = bubble;
        j["bubble_fraction"] = r.replay.bubbleFraction();
        j["span_bubble_seconds"] = r.replay.spanBubbleSeconds();
        j["peak_activations"] = r.replay.peakInFlight;
        j["busy_seconds"] = r.replay.busySeconds;
        j["start_seconds"] = r.replay.startSeconds;
        j["end_seconds"] = r.replay.endSeconds;
        j["memory_limit"] = r.memoryLimit;
        j["memory_limit_from"] = r.memoryLimitFrom;
        j["warm_start"] = {{"schedule", r.warmStart}, {"step_seconds", r.warmStartSeconds}, {"peak_activations", r.warmStartPeak}};
        j["objective_seconds"] = r.objectiveSeconds;
        j["bound_seconds"] = r.boundSeconds;
        j["gap"] = r.gap();
        j["status"] = pipeMipStatusName(r.status);
        j["improved"] = r.improved;
        j["solver_ran"] = r.solverRan;
        j["solve_seconds"] = r.solveSeconds;
        j["unit_seconds"] = r.unitSeconds;
        j["exact_grid"] = r.exactGrid;
        j["model"] = {{"columns", r.columns}, {"integer_columns", r.integerColumns}, {"rows", r.rows}};
        nlohmann::json against = nlohmann::json::array();
        for (const Compared& c : compared) against.push_back({{"schedule", c.name}, {"bubble_seconds", c.bubble}, {"bubble_ratio", ratio(c.bubble)}});
        j["compared"] = against;
        std::cout << j.dump(2) << '\n';
        return kExitOk;
    }
    auto sec = [](double s) { return fixed(s, 3) + " s"; };
    const int32_t peak = r.replay.peakInFlight.empty() ? 0 : *std::max_element(r.replay.peakInFlight.begin(), r.replay.peakInFlight.end());
    std::cout << "schedule   mip: " << ranks << " ranks × " << chunks << (chunks == 1 ? " chunk, " : " chunks, ") << request.microBatches
              << " micro-batches, placement " << pipePlacementName(placement) << '\n'
              << "stage      F " << sec(f) << ", I " << sec(b) << ", W " << sec(w) << " per micro-batch and rank, transfer " << sec(comm) << '\n'
              << "memory     at most " << r.memoryLimit << " stage activations per rank ("
              << (r.memoryLimitFrom == "given" ? std::string("--memory-limit") : r.memoryLimitFrom + "'s peak") << "); peak " << peak << '\n'
              << "warm start " << r.warmStart << ": step " << sec(r.warmStartSeconds) << ", peak " << r.warmStartPeak << '\n'
              << "step       " << sec(r.replay.seconds) << " (" << (r.improved ? "better than the warm start" : "the warm start") << ")\n"
              << (request.memoryWeightSeconds > 0 ? "objective  " + sec(r.objectiveSeconds) + " (step + " + sec(request.memoryWeightSeconds) +
                                                        " × peak " + std::to_string(peak) + ")\n"
                                                  : std::string())
              << "bound      " << sec(r.boundSeconds) << (request.memoryWeightSeconds > 0 ? " on the objective" : "") << ", gap "
              << fixed(100 * r.gap(), 1) << "%, " << pipeMipStatusName(r.status) << ", "
              << fixed(r.solveSeconds, 1) << " s"
              << (r.solverRan ? ", CBC on " + std::to_string(r.integerColumns) + " integer columns (" + std::to_string(r.columns) + " in all), " +
                                    std::to_string(r.rows) + " rows, unit " + sec(r.unitSeconds) + (r.exactGrid ? "" : " (times rounded up)")
                              : std::string(r.status == PipeMipStatus::Cancelled ? ", cancelled" : ", the warm start meets the bound: CBC not run"))
              << '\n'
              << "bubble     " << sec(bubble) << " (" << fixed(100 * r.replay.bubbleFraction(), 1) << "% of the step, the idlest rank's idle time)\n"
              << "in span    " << sec(r.replay.spanBubbleSeconds()) << " (the idlest rank between its first and last action)\n";
    for (const Compared& c : compared)
        std::cout << "against    " << c.name << ": bubble " << sec(c.bubble) << ", mip " << fixed(ratio(c.bubble), 2) << "× of it\n";
    std::cout << "rank   busy        ends at     peak activations (stages)\n";
    for (size_t k = 0; k < r.replay.busySeconds.size(); ++k) {
        std::string busy = sec(r.replay.busySeconds[k]), end = sec(r.replay.endSeconds[k]);
        busy.resize(std::max<size_t>(busy.size(), 12), ' ');
        end.resize(std::max<size_t>(end.size(), 12), ' ');
        std::string rank = std::to_string(k);
        rank.resize(std::max<size_t>(rank.size(), 7), ' ');
        std::cout << rank << busy << end << r.replay.peakInFlight[k] << '\n';
    }
    return kExitOk;
}

}  // namespace

int cmdSchedule(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.valued = {"--ranks",   "--micro-batches", "--schedule",     "--chunks",       "--f",          "--b",          "--w",
                   "--comm",    "--from",          "-o",             "--placement",    "--overlap",    "--memory-limit", "--time-limit",
                   "--memory-weight"};
    spec.flags = {"--help", "-h", "--json"};
    auto args = parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << kHelp;
        return kExitOk;
    }
    if (!args->positionals.empty()) return fail(makeError("cli.usage", "schedule takes no positional arguments (see cfp schedule --help)"));
    auto ranksText = args->value("--ranks");
    if (!ranksText) return fail(makeError("cli.usage", "schedule needs --ranks P"));
    auto ranks = parsePositive("--ranks", *ranksText);
    if (!ranks) return fail(ranks.error());
    PipeScheduleKind kind = PipeScheduleKind::OneFOneB;
    if (!args->value("--from")) {
        auto k = parsePipeScheduleKind(args->value("--schedule").value_or("1f1b"));
        if (!k) return fail(k.error().withContext("--schedule"));
        kind = *k;
    }
    const bool mip = kind == PipeScheduleKind::Mip && !args->value("--from");
    for (const char* option : {"--memory-limit", "--time-limit", "--memory-weight"})
        if (!mip && args->value(option)) return fail(makeError("cli.usage", std::string(option) + " is for --schedule mip"));
    PipePlacement placement = mip ? PipePlacement::VShape : pipeSchedulePlacement(kind);
    if (auto v = args->value("--placement")) {
        if (!args->value("--from") && !mip)
            return fail(makeError("cli.usage", "--placement is for --from FILE and --schedule mip; a generated schedule has its own"));
        auto p = parsePipePlacement(*v);
        if (!p) return fail(p.error().withContext("--placement"));
        placement = *p;
    }
    PipeOverlap overlap = PipeOverlap::Serial;
    if (auto v = args->value("--overlap")) {
        if (*v != "serial" && *v != "full") return fail(makeError("cli.usage", "--overlap expects serial or full, got '" + *v + "'"));
        overlap = *v == "full" ? PipeOverlap::Full : PipeOverlap::Serial;
    }
    int64_t chunks = placement == PipePlacement::Looped ? 1 : 2;
    if (auto v = args->value("--chunks")) {
        auto c = parsePositive("--chunks", *v);
        if (!c) return fail(c.error());
        chunks = *c;
    }
    double f = 1, b = 1, w = 1, comm = 0;
    for (auto [name, slot] : {std::pair{"--f", &f}, std::pair{"--b", &b}, std::pair{"--w", &w}, std::pair{"--comm", &comm}})
        if (auto v = args->value(name)) {
            auto s = nonNegative(name, *v);
            if (!s) return fail(s.error());
            *slot = *s;
        }
    if (*ranks > 4096 || chunks > 64) return fail(makeError("cli.usage", "at most 4096 ranks and 64 chunks per rank"));
    if (mip) return runMip(*args, static_cast<int32_t>(*ranks), static_cast<int32_t>(chunks), placement, overlap, f, b, w, comm);
    Result<PipeSchedule> schedule = makeError("cli.usage", "");
    if (auto from = args->value("--from")) {
        auto text = readFileLimited(*from, 64 << 20);
        if (!text) return fail(text.error());
        schedule = scheduleFromCsv(*text, static_cast<int32_t>(*ranks), static_cast<int32_t>(chunks), placement);
        if (!schedule) return fail(schedule.error().withContext(*from));
    } else {
        auto mText = args->value("--micro-batches");
        if (!mText) return fail(makeError("cli.usage", "schedule needs --micro-batches M (or --from FILE)"));
        auto m = parsePositive("--micro-batches", *mText);
        if (!m) return fail(m.error());
        if (*m > 100000) return fail(makeError("cli.usage", "at most 100000 micro-batches"));
        schedule = makeSchedule(kind, static_cast<int32_t>(*ranks), static_cast<int32_t>(chunks), static_cast<int32_t>(*m));
        if (!schedule) return fail(schedule.error().withContext("--schedule"));
    }
    // A stage's share of a rank's part of the model: 1/V, but for DualPipe's two copies of it.
    const double share = static_cast<double>(schedule->ranks) / static_cast<double>(schedule->pathStages());
    StageTimes stage{f * share, b * share, w * share, share};
    auto replay = replaySchedule(*schedule, {stage}, comm, overlap);
    if (!replay) return fail(replay.error());
    if (auto out = args->value("-o")) {
        if (auto st = writeFileAtomically(*out, schedule->toCsv()); !st) return fail(st.error());
        std::cerr << "cfp: wrote the schedule to " << *out << '\n';
    }
    const std::string name(pipeScheduleName(schedule->kind));
    if (args->has("--json")) {
        nlohmann::json j;
        j["schedule"] = name;
        j["ranks"] = schedule->ranks;
        j["chunks"] = schedule->chunks;
        j["placement"] = std::string(pipePlacementName(schedule->placement));
        j["overlap"] = overlap == PipeOverlap::Full ? "full" : "serial";
        j["micro_batches"] = schedule->microBatches;
        j["step_seconds"] = replay->seconds;
        j["bubble_seconds"] = replay->bubbleSeconds();
        j["bubble_fraction"] = replay->bubbleFraction();
        j["span_bubble_seconds"] = replay->spanBubbleSeconds();
        j["peak_activations"] = replay->peakActivation;
        j["busy_seconds"] = replay->busySeconds;
        j["start_seconds"] = replay->startSeconds;
        j["end_seconds"] = replay->endSeconds;
        std::cout << j.dump(2) << '\n';
        return kExitOk;
    }
    auto sec = [](double s) { return fixed(s, 3) + " s"; };
    std::cout << "schedule   " << name << ": " << schedule->ranks << " ranks × " << schedule->chunks << (schedule->chunks == 1 ? " chunk, " : " chunks, ")
              << schedule->microBatches << " micro-batches"
              << (schedule->placement == PipePlacement::Looped ? std::string() : ", placement " + std::string(pipePlacementName(schedule->placement))) << '\n'
              << "stage      F " << sec(f) << ", I " << sec(b) << ", W " << sec(w) << " per micro-batch (B = I + W), transfer " << sec(comm) << '\n'
              << "step       " << sec(replay->seconds) << '\n'
              << "bubble     " << sec(replay->bubbleSeconds()) << " (" << fixed(100 * replay->bubbleFraction(), 1)
              << "% of the step, the idlest rank's idle time)\n"
              << "in span    " << sec(replay->spanBubbleSeconds()) << " (the idlest rank between its first and last action)\n"
              << "rank   busy        ends at     peak activations (micro-batches)\n";
    for (size_t r = 0; r < replay->busySeconds.size(); ++r) {
        std::string busy = sec(replay->busySeconds[r]), end = sec(replay->endSeconds[r]);
        busy.resize(std::max<size_t>(busy.size(), 12), ' ');
        end.resize(std::max<size_t>(end.size(), 12), ' ');
        std::string rank = std::to_string(r);
        rank.resize(std::max<size_t>(rank.size(), 7), ' ');
        std::cout << rank << busy << end << fixed(replay->peakActivation[r], share < 1 ? 2 : 0) << '\n';
    }
    return kExitOk;
}

}  // namespace cfp::cli
