#include "iopddl_command.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "args.h"
#include "format.h"
#include "hardware/hardware.h"
#include "iopddl/evaluate.h"
#include "iopddl/ilp.h"
#include "iopddl/json_io.h"
#include "iopddl/solver.h"
#include "loader/model_loader.h"
#include "oplevel/oplevel.h"
#include "sharding/mesh.h"

namespace cfp::cli {

namespace {

using namespace cfp::iopddl;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

const char* kHelp = R"(Usage: cfp iopddl <solve|eval> ...

Problems in the format of the ASPLOS/EuroSys 2025 IOPDDL contest (docs/iopddl.md): nodes with
strategies (cost, memory usage over a time interval), edges with a cost per strategy pair, a
memory limit. Files may be gzip-compressed.

  cfp iopddl solve FILE --time-limit S [--threads T] [--seed N] [-o SOLUTION] [--json] [--verbose]
      finds a solution within S seconds of wall clock; prints score, valid and seconds, and writes
      the solution (a JSON array of strategy indices) to SOLUTION (default: NAME.solution.json
      in the current directory, NAME being FILE's name without .json/.gz)
  cfp iopddl eval FILE SOLUTION [--json]
      the contest's score and validity of SOLUTION: the sum of the chosen node and edge costs, and
      whether memory stays within the limit at every time step
  cfp iopddl export [MODEL] -o FILE [--mesh M] [--hardware H] [--memory-limit SIZE] [--follow-trivial]
                    [--batch N] [--seq N] [--dtype bf16|fp32]
      writes MODEL's training step as an op-level problem on cfp's cost model (one node per op,
      one strategy per way of splitting it; costs in picoseconds; memory over liveness intervals
      against SIZE, default the GPU's memory); FILE ending in .gz is compressed

Solve options: --method search (default) or ilp (CBC on the whole problem; small problems only).
)";

int fail(const Error& e) {
    std::cerr << "cfp: error: " << e.toString() << '\n';
    return e.code == "cli.usage" ? kExitUsage : kExitFailure;
}

// "A.json.gz" -> "A".
std::string stem(const std::string& path) {
    std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    for (const char* ext : {".gz", ".json"})
        if (name.size() > std::strlen(ext) && name.compare(name.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
            name.resize(name.size() - std::strlen(ext));
    return name;
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out.push_back('\\');
        if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
            continue;
        }
        out.push_back(c);
    }
    return out + "\"";
}

// JSON objects written by hand: scores are 128-bit and must be printed exactly.
class JsonObject {
public:
    void raw(const std::string& key, const std::string& text) {
        m_text += (m_text.empty() ? "{\n  " : ",\n  ") + jsonString(key) + ": " + text;
    }
    void str(const std::string& key, const std::string& value) { raw(key, jsonString(value)); }
    void num(const std::string& key, Int128 value) { raw(key, toString(value)); }
    void real(const std::string& key, double value) {
        char text[64];
        std::snprintf(text, sizeof text, "%.3f", value);
        raw(key, text);
    }
    void boolean(const std::string& key, bool value) { raw(key, value ? "true" : "false"); }
    std::string text() const { return m_text.empty() ? "{}" : m_text + "\n}"; }

private:
    std::string m_text;
};

void addEvaluation(JsonObject& j, const Problem& p, const Evaluation& ev) {
    j.num("score", ev.score);
    j.boolean("valid", ev.valid);
    j.num("node_cost", ev.nodeCost);
    j.num("edge_cost", ev.edgeCost);
    j.num("peak_usage", ev.peakUsage);
    j.num("peak_time", ev.peakTime);
    if (p.usageLimit) j.num("usage_limit", *p.usageLimit);
    else j.raw("usage_limit", "null");
    j.num("first_over_time", ev.firstOverTime);
    j.num("over_time_steps", ev.overTimeSteps);
}

std::string scoreText(Int128 score) {
    if (score >= INT64_MIN && score <= INT64_MAX) return withCommas(static_cast<int64_t>(score));
    return toString(score);
}

void printEvaluation(const Problem& p, const Evaluation& ev) {
    std::cout << "  score    " << scoreText(ev.score) << "  (nodes " << scoreText(ev.nodeCost) << ", edges " << scoreText(ev.edgeCost)
              << ")\n";
    std::cout << "  valid    " << (ev.valid ? "yes" : "no") << "  (peak usage " << scoreText(ev.peakUsage) << " at t=" << ev.peakTime;
    if (p.usageLimit) std::cout << ", limit " << withCommas(*p.usageLimit);
    else std::cout << ", no limit";
    if (!ev.valid) std::cout << "; over the limit at " << withCommas(ev.overTimeSteps) << " time steps from t=" << ev.firstOverTime;
    std::cout << ")\n";
}

Result<Problem> loadProblem(const std::string& path) { return readProblemFile(path); }

int cmdEval(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.flags = {"--json", "--help", "-h"};
    auto args = parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << kHelp;
        return kExitOk;
    }
    if (args->positionals.size() != 2) return fail(makeError("cli.usage", "iopddl eval needs FILE and SOLUTION"));
    auto problem = loadProblem(args->positionals[0]);
    if (!problem) return fail(problem.error());
    auto solution = readSolutionFile(args->positionals[1]);
    if (!solution) return fail(solution.error());
    auto ev = evaluate(*problem, *solution);
    if (!ev) return fail(ev.error().withContext(args->positionals[1]));
    if (args->has("--json")) {
        JsonObject j;
        j.str("instance", problem->name);
        addEvaluation(j, *problem, *ev);
        std::cout << j.text() << '\n';
    } else {
        std::cout << problem->name << ": " << withCommas(problem->nodeCount()) << " nodes, " << withCommas(problem->edgeCount())
                  << " edges\n";
        printEvaluation(*problem, *ev);
    }
    return kExitOk;
}

Result<double> parseSeconds(const std::string& option, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!end || *end != '\0' || !(v > 0) || v > 1e7)
        return makeError("cli.usage", option + " expects a positive number of seconds, got '" + text + "'");
    return v;
}

int cmdSolve(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.valued = {"--time-limit", "--threads", "--seed", "-o", "--output", "--epochs", "--method"};
    spec.flags = {"--json", "--verbose", "--help", "-h"};
    auto args = parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << kHelp;
        return kExitOk;
    }
    if (args->positionals.size() != 1) return fail(makeError("cli.usage", "iopddl solve needs one FILE"));
    auto limitText = args->value("--time-limit");
    if (!limitText) return fail(makeError("cli.usage", "iopddl solve needs --time-limit S"));
    auto seconds = parseSeconds("--time-limit", *limitText);
    if (!seconds) return fail(seconds.error());
    SolverOptions options;
    options.timeLimitSeconds = *seconds;
    options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (auto v = args->value("--threads")) {
        auto t = parsePositive("--threads", *v);
        if (!t) return fail(t.error());
        options.threads = static_cast<int>(std::min<int64_t>(*t, 256));
    }
    if (auto v = args->value("--seed")) {
        auto s = parsePositive("--seed", *v);
        if (!s) return fail(s.error());
        options.seed = static_cast<uint64_t>(*s);
    }
    if (auto v = args->value("--epochs")) {
        auto e = parsePositive("--epochs", *v);
        if (!e) return fail(e.error());
        options.maxEpochs = *e;
    }
    const auto start = std::chrono::steady_clock::now();
    if (args->has("--verbose"))
        options.log = [start](const std::string& line) {
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::fprintf(stderr, "[%7.2f] %s\n", t, line.c_str());
        };
    const std::string path = args->positionals[0];
    auto problem = loadProblem(path);
    if (!problem) return fail(problem.error());
    const double readSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.log) options.log("read " + path + " in " + fixed(readSeconds, 2) + " s");
    // The contest's limit covers the whole run: reading counts against it, and a margin is kept
    // for the solver's last step, the final evaluation and writing the solution.
    const double margin = std::min(3.0, 0.02 * *seconds + 0.1);
    options.timeLimitSeconds = std::max(0.05, *seconds - readSeconds - margin);
    const std::string method = args->value("--method").value_or("search");
    if (method != "search" && method != "ilp") return fail(makeError("cli.usage", "--method expects search or ilp, got '" + method + "'"));
    std::optional<IlpResult> ilp;
    Result<SolverResult> result = SolverResult{};
    if (method == "ilp") {
        IlpOptions io;
        io.timeLimitSeconds = options.timeLimitSeconds;
        io.threads = options.threads;
        auto r = solveIlp(*problem, io);
        if (!r) return fail(r.error().withContext(path));
        ilp = *r;
        if (r->solution.empty()) return fail(makeError("iopddl.no_solution", std::string("the ILP solver found no solution: ") + ilpStatusName(r->status), path));
        result->solution = r->solution;
        auto ev = evaluate(*problem, r->solution);
        if (!ev) return fail(ev.error());
        result->score = ev->score;
        result->valid = ev->valid;
        result->seconds = r->seconds;
    } else {
        result = solve(*problem, options);
    }
    if (!result) return fail(result.error().withContext(path));
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string out = args->value("-o").value_or(args->value("--output").value_or(stem(path) + ".solution.json"));
    if (auto st = writeSolutionFile(out, result->solution); !st) return fail(st.error());
    if (args->has("--json")) {
        JsonObject j;
        j.str("instance", problem->name);
        j.num("score", result->score);
        j.boolean("valid", result->valid);
        j.real("seconds", total);
        j.real("solver_seconds", result->seconds);
        j.real("read_seconds", readSeconds);
        j.num("threads", options.threads);
        j.num("seed", static_cast<int64_t>(options.seed));
        j.num("epochs", result->epochs);
        j.str("solution", out);
        j.str("method", method);
        if (ilp) {
            j.str("ilp_status", ilpStatusName(ilp->status));
            j.real("ilp_bound", ilp->bound);
        }
        std::cout << j.text() << '\n';
    } else {
        std::cout << "score    " << scoreText(result->score) << "\nvalid    " << (result->valid ? "yes" : "no") << "\nseconds  "
                  << fixed(total, 2) << "  (reading " << fixed(readSeconds, 2) << ", " << options.threads << " thread"
                  << (options.threads == 1 ? "" : "s") << ")\nsolution " << out << '\n';
        if (ilp) std::cout << "ilp      " << ilpStatusName(ilp->status) << ", lower bound " << fixed(ilp->bound, 1) << '\n';
    }
    return kExitOk;
}

Result<int64_t> parseSize(const std::string& option, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!end || end == text.c_str() || !(v > 0)) return makeError("cli.usage", option + " expects a size such as 80GiB, got '" + text + "'");
    const std::string unit(end);
    double mult = 1;
    if (unit == "KiB") mult = 1024.0;
    else if (unit == "MiB") mult = 1024.0 * 1024.0;
    else if (unit == "GiB") mult = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "GB") mult = 1e9;
    else if (!unit.empty() && unit != "B") return makeError("cli.usage", option + ": unknown unit '" + unit + "' (use B, KiB, MiB, GiB, GB)");
    if (v * mult > 9e18) return makeError("cli.usage", option + " is too large");
    return static_cast<int64_t>(v * mult);
}

int cmdExport(const std::vector<std::string>& argv) {
    OptionSpec spec;
    spec.valued = {"-o", "--output", "--mesh", "--hardware", "--memory-limit", "--batch", "--seq", "--dtype"};
    spec.flags = {"--follow-trivial", "--help", "-h"};
    auto args = parseArgs(argv, spec);
    if (!args) return fail(args.error());
    if (args->has("--help") || args->has("-h")) {
        std::cout << kHelp;
        return kExitOk;
    }
    if (args->positionals.size() > 1) return fail(makeError("cli.usage", "iopddl export takes one MODEL"));
    auto out = args->value("-o");
    if (!out) out = args->value("--output");
    if (!out) return fail(makeError("cli.usage", "iopddl export needs -o FILE"));
    BuildOptions build;
    if (auto v = args->value("--batch")) {
        auto b = parsePositive("--batch", *v);
        if (!b) return fail(b.error());
        build.batch = *b;
    }
    if (auto v = args->value("--seq")) {
        auto b = parsePositive("--seq", *v);
        if (!b) return fail(b.error());
        build.seq = *b;
    }
    if (auto v = args->value("--dtype")) {
        if (*v == "bf16") build.dtype = DType::BF16;
        else if (*v == "fp32" || *v == "f32") build.dtype = DType::F32;
        else return fail(makeError("cli.usage", "--dtype expects bf16 or fp32, got '" + *v + "'"));
    }
    auto hw = loadHardware(args->value("--hardware").value_or("h100-sxm"));
    if (!hw) return fail(hw.error().withContext("--hardware"));
    auto mesh = parseMesh(args->value("--mesh").value_or("8"));
    if (!mesh) return fail(mesh.error().withContext("--mesh"));
    auto linked = assignLinkClasses(*mesh, hw->gpusPerNode);
    if (!linked) return fail(linked.error().withContext("--mesh"));
    auto cost = CostModel::create(*hw, *linked);
    if (!cost) return fail(cost.error());
    OpLevelOptions options;
    options.memoryLimitBytes = hw->memoryBytes;
    options.followTrivial = args->has("--follow-trivial");
    if (auto v = args->value("--memory-limit")) {
        auto b = parseSize("--memory-limit", *v);
        if (!b) return fail(b.error());
        options.memoryLimitBytes = *b;
    }
    auto model = loadModel(args->positionals.empty() ? std::string("builtin:gpt3-125m") : args->positionals[0], build);
    if (!model) return fail(model.error());
    auto f = buildOpLevel(model->graph, *cost, options);
    if (!f) return fail(f.error());
    f->problem.name = model->graph.name() + " on " + linked->toString();
    if (auto st = writeProblemFile(*out, f->problem); !st) return fail(st.error());
    int64_t strategies = 0;
    for (const auto& list : f->strategies) strategies += static_cast<int64_t>(list.size());
    std::cerr << "cfp: wrote " << withCommas(f->problem.nodeCount()) << " nodes (" << withCommas(strategies) << " strategies, "
              << withCommas(f->followers) << " following their operand), " << withCommas(f->problem.edgeCount()) << " edges to " << *out
              << '\n';
    return kExitOk;
}

}  // namespace

int runIopddlCommand(const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
        std::cout << kHelp;
        return argv.empty() ? kExitUsage : kExitOk;
    }
    const std::string sub = argv[0];
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (sub == "solve") return cmdSolve(rest);
    if (sub == "eval") return cmdEval(rest);
    if (sub == "export") return cmdExport(rest);
    return fail(makeError("cli.usage", "unknown iopddl command '" + sub + "' (solve, eval, export)"));
}

}  // namespace cfp::cli
