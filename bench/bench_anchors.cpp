// Published training runs (../shared/anchors/published-runs.json) against the tool: for every run,
// the estimate of the authors' own configuration (cfp estimate, pipeline stages included) —
// step time and memory per device against what they measured, whether it fits — and the
// planner's best plan for the same model, global batch and cluster (cfp plan --mesh auto; not for
// runs with pipeline stages, which the search does not choose yet).
// Constants are not fitted to these runs: the hardware specs are the built-in ones.
//
//   bench_anchors [--anchors FILE] [--run ID]... [--no-plan] [--plan-pipelines] [--threads N]
//
// Runs with pipeline stages are planned (cfp plan --pp, the authors' stages) only with
// --plan-pipelines: that search takes minutes per run.
//
// Prints one Markdown table row per run. Where the tool does not model part of a configuration
// yet, the estimate uses the nearest it models and the notes say what changed. torchtitan runs are built as torchtitan's Llama is (separate Q, K, V projections).

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/step_policy.h"
#include "hardware/hardware.h"
#include "io/atomic_file.h"
#include "plan/run_config.h"
#include "workflow/workflow.h"

using namespace cfp;
using Json = nlohmann::json;

namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

double gib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(int64_t{1} << 30); }

// The run's model as a Hugging-Face-style config.json (what a user would write).
Json hfConfig(const Json& m) {
    Json c;
    const std::string arch = m.at("arch").get<std::string>();
    const int64_t seq = m.at("seq").get<int64_t>();
    if (arch == "llama") {
        c = {{"model_type", "llama"},
             {"hidden_size", m.at("hidden")},
             {"num_hidden_layers", m.at("layers")},
             {"num_attention_heads", m.at("heads")},
             {"num_key_value_heads", m.value("kv_heads", m.at("heads").get<int64_t>())},
             {"intermediate_size", m.at("ffn")},
             {"max_position_embeddings", seq},
             {"vocab_size", m.at("vocab")},
             {"tie_word_embeddings", m.value("tied_embeddings", false)},
             {"rope_theta", 500000.0}};
    } else {
        c = {{"model_type", "gpt2"},
             {"n_embd", m.at("hidden")},
             {"n_layer", m.at("layers")},
             {"n_head", m.at("heads")},
             {"n_inner", m.at("ffn")},
             {"n_positions", seq},
             {"vocab_size", m.at("vocab")},
             {"tie_word_embeddings", m.value("tied_embeddings", true)}};
    }
    return c;
}

// The built-in spec of the run's GPU; a GPU without one is written as a file derived from the
// closest built-in with its own HBM capacity (said in the notes).
std::string hardwareFor(const Json& run, const std::filesystem::path& dir, std::vector<std::string>& notes) {
    const std::string gpu = run.at("hardware").at("gpu").get<std::string>();
    if (gpu.find("A100") != std::string::npos) return "a100-sxm-80gb";
    if (gpu.find("H100 96") != std::string::npos) {
        std::string text(*builtinHardwareJson("h100-sxm"));
        const size_t at = text.find("\"memory_gib\": 80,");
        text.replace(at, 17, "\"memory_gib\": 96,");
        const size_t r = text.find("\"memory_reserve_gib\": 6,");
        if (r != std::string::npos) text.replace(r, 24, "\"memory_reserve_gib\": 6.8,");
        const std::string path = (dir / "h100-96gb.json").string();
        std::ofstream(path) << text;
        notes.push_back("H100 96 GB: h100-sxm with 96 GiB (the power cap is not modelled)");
        return path;
    }
    return "h100-sxm";
}

// The overlap a run states, or the one another run of the same source states (a table's text
// that speaks for all its rows); empty where none does.
std::string statedOverlap(const Json& doc, const Json& run) {
    const Json& cfg = run.at("config");
    if (cfg.contains("overlap")) return cfg.at("overlap").get<std::string>();
    const auto& source = run.at("source");
    for (const Json& other : doc.at("runs"))
        if (other.at("source") == source && other.at("config").contains("overlap")) return other.at("config").at("overlap").get<std::string>();
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    std::string anchors = std::string(CFP_SOURCE_DIR) + "/../shared/anchors/published-runs.json";
    std::set<std::string> only;
    bool plan = true, planPipelines = false;
    int threads = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--anchors" && i + 1 < argc) anchors = argv[++i];
        else if (a == "--run" && i + 1 < argc) only.insert(argv[++i]);
        else if (a == "--no-plan") plan = false;
        else if (a == "--plan-pipelines") planPipelines = true;
        else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
        else {
            std::cerr << "usage: bench_anchors [--anchors FILE] [--run ID]... [--no-plan] [--plan-pipelines] [--threads N]\n";
            return 2;
        }
    }
    std::ifstream in(anchors);
    if (!in) {
        std::cerr << "bench_anchors: cannot read " << anchors << "\n";
        return 1;
    }
    Json doc;
    try {
        doc = Json::parse(in);
    } catch (const std::exception& e) {
        std::cerr << "bench_anchors: " << anchors << ": " << e.what() << "\n";
        return 1;
    }
    const auto dir = std::filesystem::temp_directory_path() / ("bench_anchors_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::cout << "| run | model | GPUs | global batch | as run | estimated as | estimate s | measured s | est./meas. | memory GiB (est.) | "
                 "memory GiB (meas.) | usable GiB | fits | plan s | plan | plan vs est. | planning s |\n";
    std::cout << "|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|\n";
    int failures = 0;
    std::vector<std::pair<double, std::string>> errors;  // |estimate / measured - 1| per run
    std::vector<std::pair<double, std::string>> memoryErrors;  // estimate / measured - 1 where memory was published
    for (const Json& run : doc.at("runs")) {
        const std::string id = run.at("id").get<std::string>();
        if (!only.empty() && !only.count(id)) continue;
        const Json& cfg = run.at("config");
        const Json& m = run.at("model");
        std::vector<std::string> notes;
        const std::string configPath = (dir / (id + ".json")).string();
        std::ofstream(configPath) << hfConfig(m).dump(2);
        PlanRequest r;
        r.model.source = configPath;
        r.model.build.batch = run.at("global_batch").get<int64_t>();
        r.model.build.seq = m.at("seq").get<int64_t>();
        r.model.build.dtype = DType::BF16;
        const bool torchtitan = run.at("source").get<std::string>().find("torchtitan") != std::string::npos;
        if (torchtitan) r.model.build.qkv = QkvLayout::Separate;
        // The loss as each framework runs it by default: torchtitan calls F.cross_entropy on f32
        // logits (eager); Megatron-LM without --cross-entropy-loss-fusion keeps the f32 softmax
        // and computes the gradient in it (inplace).
        r.policy.crossEntropy = torchtitan ? CrossEntropyKernel::Eager : CrossEntropyKernel::InPlace;
        // The ops between the GEMMs: torchtitan runs eager PyTorch unless compile is switched on
        // (its default, and the source's rows say "without torch.compile"); Megatron-LM runs its
        // fused kernels (layer norm, bias-GeLU, masked softmax, bias-dropout-add).
        r.policy.fusion = torchtitan ? KernelFusion::Eager : KernelFusion::Compiled;
        if (torchtitan) notes.push_back("kernels eager (torchtitan without torch.compile)");
        // The attention kernel the source names: scaled_dot_product_attention's flash backend is
        // FlashAttention-2 (flash2); otherwise the fused kernel frameworks pick on the GPU (flash:
        // cuDNN's on Hopper, as Megatron-LM's Transformer Engine runs it).
        const std::string attention = run.at("config").value("attention", std::string());
        if (attention.find("(flash)") != std::string::npos) {
            r.policy.attention = AttentionKernel::Flash2;
            notes.push_back("attention flash2 (SDPA's flash backend: FlashAttention-2)");
        }
        r.hardware = hardwareFor(run, dir, notes);
        const int64_t gpus = run.at("hardware").at("gpus").get<int64_t>(), perNode = run.at("hardware").at("gpus_per_node").get<int64_t>();
        r.nodes = std::max<int64_t>(1, gpus / perNode);
        r.search.threads = threads;
        // The authors' configuration, in the terms the tool models.
        RunConfig c;
        c.tp = cfg.value("tp", 1);
        c.dp = cfg.value("dp", 1);
        std::string asRun = "tp=" + std::to_string(*c.tp) + ",dp=" + std::to_string(*c.dp);
        const int64_t pp = cfg.value("pp", 1);
        if (pp > 1) {
            c.pp = pp;
            asRun += ",pp=" + std::to_string(pp);
            // Megatron-LM's --num-layers-per-virtual-pipeline-stage: layers / (pp × that) chunks per rank.
            if (cfg.contains("layers_per_virtual_stage")) {
                c.vp = m.at("layers").get<int64_t>() / (pp * cfg.at("layers_per_virtual_stage").get<int64_t>());
                asRun += ",vp=" + std::to_string(*c.vp);
            }
        }
        const int zero = cfg.value("zero", 0);
        asRun += ",zero=" + std::to_string(zero);
        c.zero = zero;
        if (cfg.contains("sequence_parallel")) {
            c.sequenceParallel = cfg.at("sequence_parallel").get<bool>();
            asRun += *c.sequenceParallel ? ",sp=on" : ",sp=off";
        }
        // The schedule: overlapped where the source says so and under FSDP (torchtitan prefetches
        // and reduce-scatters asynchronously by default); Megatron-LM's default otherwise (no
        // --overlap-grad-reduce / --overlap-param-gather: the reduction after the backward). A
        // source's statement covers every row of its table: a row that leaves the overlap out
        // takes it from another row of the same source that states it (Megatron-LM's README
        // states one overlap setting for all its weak-scaling runs).
        const std::string stated = statedOverlap(doc, run);
        if (!cfg.contains("overlap") && !stated.empty()) notes.push_back("overlap from the same source's other rows");
        const bool overlapped = !stated.empty() || torchtitan;
        // Tensor-parallel communication overlapped where the source says so (--tp-comm-overlap).
        const bool tpOverlap = stated.find("tp-comm-overlap") != std::string::npos && cfg.value("tp", 1) > 1;
        c.overlap = tpOverlap ? "all" : overlapped ? "on" : "off";
        // The plan runs on the same schedule as the authors' framework (a like-for-like comparison).
        setOverlapWord(r.policy, *c.overlap);
        asRun += ",overlap=" + *c.overlap;
        if (stated.empty() && !torchtitan) notes.push_back("overlap not stated: off (Megatron-LM's default)");
        const std::string rc = cfg.value("recompute", std::string("not stated"));
        asRun += ",recompute=" + rc;
        // "selective (per op)" is torchtitan's selective_ac_option="op" (recompute=op); Megatron-LM's
        // selective recomputation is the attention core's (recompute=selective).
        // Not stated: chosen by the estimate's search (the "estimated as" column says what).
        if (rc == "full") c.recompute = RecomputeMode::Full;
        else if (rc == "selective (per op)") c.recompute = RecomputeMode::Op;
        else if (rc.rfind("selective", 0) == 0) c.recompute = RecomputeMode::Selective;
        else if (rc == "none") c.recompute = RecomputeMode::None;
        else notes.push_back("recompute '" + rc + "': chosen");
        if (!run.at("micro_batch").is_null()) {
            c.microBatch = run.at("micro_batch").get<int64_t>();
            asRun += ",mbs=" + std::to_string(*c.microBatch);
        } else {
            notes.push_back("mbs not stated: chosen");
        }
        const auto t0 = std::chrono::steady_clock::now();
        auto est = runEstimate(r, c);
        const double estSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const Json& meas = run.at("measured");
        const double measured = meas.value("step_seconds", 0.0);
        const std::string measuredMemory = meas.contains("memory_gib") ? fixed(meas.at("memory_gib").get<double>(), 1) : "–";
        std::ostringstream row;
        const std::string modelText = m.at("arch").get<std::string>() + " " + std::to_string(m.at("layers").get<int>()) + "L h" +
                                      std::to_string(m.at("hidden").get<int>()) + " s" + std::to_string(m.at("seq").get<int>());
        row << "| " << id << " | " << modelText << " | " << gpus << " | " << r.model.build.batch << " | " << asRun << " | ";
        if (!est) {
            row << "error: " << est.error().toString() << " | | | | | | | | | | | |";
            std::cout << row.str() << "\n";
            ++failures;
            continue;
        }
        const Plan& ep = est->outcome.plan;
        if (measured > 0) errors.emplace_back(std::abs(ep.stepSeconds() / measured - 1.0), id);
        if (meas.contains("memory_gib"))
            memoryErrors.emplace_back(gib(ep.memory.total()) / meas.at("memory_gib").get<double>() - 1.0, id);
        const bool fits = ep.memory.total() <= ep.memoryLimitBytes;
        row << (est->estimatedConfig ? est->estimatedConfig->toString() : c.toString()) << ",rounds=" << ep.policy.accumulation << " | " << fixed(ep.stepSeconds(), 2) << " | " << fixed(measured, 2)
            << " | " << (measured > 0 ? fixed(ep.stepSeconds() / measured, 2) : "–") << " | " << fixed(gib(ep.memory.total()), 1) << " | "
            << measuredMemory << " | " << fixed(gib(ep.memoryLimitBytes), 1) << " | " << (fits ? "yes" : "**no**") << " | ";
        if (plan && pp > 1 && !planPipelines) {
            row << "– | not run (--plan-pipelines) | – | – |";
        } else if (plan) {
            PlanRequest pr = r;
            // With the authors' pipeline stages (and chunks), the search plans a stage.
            if (pp > 1) {
                pr.pipeline.stages = static_cast<int32_t>(pp);
                pr.pipeline.chunksPerRank = static_cast<int32_t>(c.vp.value_or(1));
                pr.pipeline.schedule = defaultPipeSchedule(pr.pipeline.chunksPerRank);
            }
            const auto t1 = std::chrono::steady_clock::now();
            auto best = runPlan(pr);
            const double planSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
            if (best) {
                const Plan& bp = best->outcome.plan;
                row << fixed(bp.stepSeconds(), 2) << " | " << bp.mesh.toString() << (bp.pipeline ? " × pp " + std::to_string(bp.pipeline->stages) : std::string())
                    << (bp.policy.sequenceParallelAxis.empty() ? std::string() : " SP " + bp.policy.sequenceParallelAxis)
                    << " ×" << bp.policy.accumulation << " rounds | "
                    << fixed(ep.stepSeconds() / bp.stepSeconds(), 2) << "× | " << fixed(planSeconds, 1) << " |";
            } else {
                row << "– | " << best.error().code << " | – | " << fixed(planSeconds, 1) << " |";
            }
        } else {
            row << "– | – | – | – |";
        }
        std::cout << row.str() << "\n";
        if (!notes.empty()) {
            std::cerr << id << ": ";
            for (size_t i = 0; i < notes.size(); ++i) std::cerr << (i ? "; " : "") << notes[i];
            std::cerr << " (estimate " << fixed(estSeconds, 1) << " s)\n";
        }
        std::cout.flush();
    }
    // The summary: median and largest error of the estimates, and how many are within 25%.
    if (!errors.empty()) {
        std::sort(errors.begin(), errors.end());
        const size_t n = errors.size();
        const double median = n % 2 ? errors[n / 2].first : (errors[n / 2 - 1].first + errors[n / 2].first) / 2;
        const auto within = std::count_if(errors.begin(), errors.end(), [](const auto& e) { return e.first <= 0.25; });
        std::cout << "\nstep time of the runs' own configurations: median error " << fixed(100 * median, 0) << "%, largest "
                  << fixed(100 * errors.back().first, 0) << "% (" << errors.back().second << "); " << within << " of " << n
                  << " within 25%\n";
    }
    if (!memoryErrors.empty()) {
        std::cout << "memory where published (the estimate's peak against the allocator's maximum reserved):";
        int within = 0;
        for (const auto& [e, id] : memoryErrors) {
            std::cout << " " << id << " " << (e >= 0 ? "+" : "") << fixed(100 * e, 1) << "%";
            within += std::abs(e) <= 0.15;
        }
        std::cout << "; " << within << " of " << memoryErrors.size() << " within 15%\n";
    }
    std::filesystem::remove_all(dir);
    return failures ? 1 : 0;
}
