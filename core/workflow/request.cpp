#include "workflow/request.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/strict_json.h"
#include "plan/plan_json.h"

namespace cfp {

namespace {

constexpr std::string_view kRequestFormat = "cfp-plan-request";
constexpr std::string_view kLegacyProjectFormat = "cfp-explorer-project";  // the explorer's projects before requests
constexpr int64_t kRequestVersion = 2;  // 2 added accumulation and memory_reserve_bytes
// A request alone is small; a project's last plan is a plan document (plan_json.h's limit).
constexpr int64_t kMaxRequestBytes = (int64_t{16} << 20) + kMaxPlanFileBytes;
const StrictJson kRequestJson = StrictJson::twoCodes("request.syntax", "request.format");

}  // namespace

bool ModelRequest::operator==(const ModelRequest& o) const {
    return source == o.source && build.batch == o.build.batch && build.seq == o.build.seq && build.dtype == o.build.dtype &&
           build.qkv == o.build.qkv && training == o.training;
}

bool PlanRequest::operator==(const PlanRequest& o) const {
    return model == o.model && hardware == o.hardware && nodes == o.nodes && mesh == o.mesh && memoryLimitBytes == o.memoryLimitBytes &&
           memoryReserveBytes == o.memoryReserveBytes && accumulation == o.accumulation && policy.attention == o.policy.attention && policy.crossEntropy == o.policy.crossEntropy && policy.fusion == o.policy.fusion && zeroStageOf(policy) == zeroStageOf(o.policy) &&
           policy.optimizerSharding == o.policy.optimizerSharding && policy.recompute == o.policy.recompute && pins == o.pins &&
           policy.overlapGradReduce == o.policy.overlapGradReduce && policy.overlapParamGather == o.policy.overlapParamGather &&
           policy.overlapTensorParallel == o.policy.overlapTensorParallel &&
           policy.bucketBytes == o.policy.bucketBytes && pipeline == o.pipeline && searchSequenceParallel == o.searchSequenceParallel && searchZero == o.searchZero &&
           profile == o.profile && baselines == o.baselines && blockCheck == o.blockCheck;
}

std::string requestToJson(const PlanRequest& r) {
    nlohmann::ordered_json j;
    j["format"] = kRequestFormat;
    j["version"] = kRequestVersion;
    j["model"] = {{"source", r.model.source},
                  {"batch", r.model.build.batch},
                  {"seq", r.model.build.seq},
                  {"dtype", std::string(dtypeName(r.model.build.dtype))},
                  {"qkv", r.model.build.qkv == QkvLayout::Separate ? "separate" : "fused"},
                  {"train", r.model.training == TrainingMode::AppendTraining}};
    j["hardware"] = r.hardware;
    j["nodes"] = r.nodes;
    j["mesh"] = r.mesh.toString();
    j["memory_limit_bytes"] = r.memoryLimitBytes.value_or(0);
    if (r.memoryReserveBytes) j["memory_reserve_bytes"] = *r.memoryReserveBytes;
    else j["memory_reserve_bytes"] = "hardware";
    if (r.accumulation) j["accumulation"] = *r.accumulation;
    else j["accumulation"] = "auto";
    j["optimizer_sharding"] = r.policy.optimizerSharding;
    j["recompute"] = std::string(recomputePolicyName(r.policy.recompute));
    j["attention"] = std::string(attentionKernelName(r.policy.attention));
    j["cross_entropy"] = std::string(crossEntropyKernelName(r.policy.crossEntropy));
    if (r.policy.fusion != KernelFusion::Compiled) j["fusion"] = std::string(kernelFusionName(r.policy.fusion));
    if (r.searchZero) j["zero_stage"] = "auto";
    else j["zero_stage"] = zeroStageOf(r.policy);
    j["overlap"] = overlapWord(r.policy);
    j["bucket_bytes"] = r.policy.bucketBytes;
    j["sequence_parallel"] = r.searchSequenceParallel ? "auto" : "off";
    if (r.pipeline.stages != 1)
        j["pipeline"] = {{"stages", r.pipeline.stages == PipelineSettings::kSearchedStages ? nlohmann::ordered_json("auto") : nlohmann::ordered_json(r.pipeline.stages)},
                         {"chunks_per_rank", r.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks ? nlohmann::ordered_json("auto")
                                                                                                            : nlohmann::ordered_json(r.pipeline.chunksPerRank)},
                         {"schedule", std::string(pipeScheduleName(r.pipeline.schedule))}};
    if (r.pipeline.stages != 1 && !r.pipeline.chunkLayers.empty()) j["pipeline"]["split"] = r.pipeline.chunkLayers;
    if (r.pipeline.stages != 1 && !r.pipeline.actions.empty()) {
        j["pipeline"]["actions"] = pipeActionsCsv(r.pipeline.actions);
        j["pipeline"]["placement"] = std::string(pipePlacementName(r.pipeline.placement));
        j["pipeline"]["schedule_origin"] = r.pipeline.scheduleOrigin;
    }
    if (r.pipeline.stages != 1) j["pipeline"]["optimiser_seconds"] = r.pipeline.optimiserSeconds;
    if (r.pipeline.stages != 1 && r.pipeline.actions.empty() && r.pipeline.placement != PipePlacement::Looped)
        j["pipeline"]["placement"] = std::string(pipePlacementName(r.pipeline.placement));
    j["pins"] = pinTexts(r.pins);
    j["profile_db"] = r.profile ? r.profile->database : std::string();
    j["profile_fingerprint"] = r.profile ? r.profile->fingerprint : std::string();
    j["baselines"] = r.baselines == Baselines::Include;
    j["check_blocks"] = r.blockCheck == BlockCheck::Run;
    return j.dump(2) + "\n";
}

namespace {

Error locatedIn(Error e, const std::string& origin) {
    e.message += " (in " + origin + ")";
    return e;
}

// The request of a parsed document (requestFromJson); a project's "last_plan" is left to
// projectFromJson.
Result<PlanRequest> requestFromDoc(const nlohmann::json& j, const std::string& origin) {
    auto located = [&](Error e) { return locatedIn(std::move(e), origin); };
    const StrictJson& S = kRequestJson;
    if (!j.is_object()) return located(S.typeError("", "an object", j));
    auto str = [&](const nlohmann::json& obj, const std::string& ptr, std::string_view key) -> Result<std::string> {
        auto m = S.member(obj, ptr, key);
        if (!m) return m.error();
        return S.string(**m, childPointer(ptr, key));
    };
    auto integer = [&](const nlohmann::json& obj, const std::string& ptr, std::string_view key, int64_t min) -> Result<int64_t> {
        auto m = S.member(obj, ptr, key);
        if (!m) return m.error();
        auto v = S.int64(**m, childPointer(ptr, key));
        if (!v) return v.error();
        if (*v < min) return makeError("request.format", "must be at least " + std::to_string(min), childPointer(ptr, key));
        return *v;
    };
    auto boolean = [&](const nlohmann::json& obj, const std::string& ptr, std::string_view key) -> Result<bool> {
        auto m = S.member(obj, ptr, key);
        if (!m) return m.error();
        if (!(*m)->is_boolean()) return S.typeError(childPointer(ptr, key), "true or false", **m);
        return (*m)->get<bool>();
    };
    auto format = str(j, "", "format");
    if (!format) return located(format.error());
    const bool legacy = *format == kLegacyProjectFormat;
    if (*format != kRequestFormat && !legacy)
        return located(makeError("request.format", "not a CFP plan request or explorer project (format '" + *format + "')", "/format"));
    static constexpr std::string_view kKeys[] = {"format", "version", "model", "hardware", "nodes", "mesh", "memory_limit_bytes",
                                                 "optimizer_sharding", "recompute", "pins", "profile_db", "profile_fingerprint",
                                                 "baselines", "check_blocks", "memory_reserve_bytes", "accumulation", "attention", "cross_entropy", "fusion",
                                                 "zero_stage", "overlap", "bucket_bytes", "pipeline", "sequence_parallel", "last_plan"};
    static constexpr std::string_view kLegacyKeys[] = {"format", "version", "model", "hardware", "nodes", "mesh", "memory_limit_bytes",
                                                       "optimizer_sharding", "recompute", "pins", "profile_db"};
    if (const std::string* k = legacy ? firstUnknownKey(j, kLegacyKeys) : firstUnknownKey(j, kKeys)) return located(S.unknownField("", *k));
    auto version = integer(j, "", "version", 0);
    if (!version) return located(version.error());
    if (*version != kRequestVersion && *version != 1)
        return located(makeError("request.version", "version " + std::to_string(*version) + " is not supported (supported: 1, 2)", "/version"));
    // Version 1 planned the batch as one round and knew no reserve key: one round, the hardware's reserve.
    const bool v1 = *version == 1;
    PlanRequest r;
    auto model = S.member(j, "", "model");
    if (!model) return located(model.error());
    if (!(*model)->is_object()) return located(S.typeError("/model", "an object", **model));
    static constexpr std::string_view kModelKeys[] = {"source", "batch", "seq", "dtype", "qkv", "train"};
    static constexpr std::string_view kLegacyModelKeys[] = {"source", "batch", "seq", "dtype", "qkv"};
    if (const std::string* k = legacy ? firstUnknownKey(**model, kLegacyModelKeys) : firstUnknownKey(**model, kModelKeys))
        return located(S.unknownField("/model", *k));
    auto source = str(**model, "/model", "source");
    if (!source) return located(source.error());
    if (source->empty()) return located(makeError("request.format", "the model source is empty", "/model/source"));
    r.model.source = *source;
    auto batch = integer(**model, "/model", "batch", 1);
    if (!batch) return located(batch.error());
    r.model.build.batch = *batch;
    auto seq = integer(**model, "/model", "seq", 0);
    if (!seq) return located(seq.error());
    r.model.build.seq = *seq;
    auto dtype = str(**model, "/model", "dtype");
    if (!dtype) return located(dtype.error());
    auto dt = parseDType(*dtype);
    if (!dt) return located(makeError("request.format", "unknown dtype '" + *dtype + "'", "/model/dtype"));
    r.model.build.dtype = *dt;
    auto qkv = str(**model, "/model", "qkv");
    if (!qkv) return located(qkv.error());
    if (*qkv != "fused" && *qkv != "separate")
        return located(makeError("request.format", "qkv must be fused or separate, got '" + *qkv + "'", "/model/qkv"));
    r.model.build.qkv = *qkv == "separate" ? QkvLayout::Separate : QkvLayout::Fused;
    if (!legacy) {
        auto train = boolean(**model, "/model", "train");
        if (!train) return located(train.error());
        r.model.training = *train ? TrainingMode::AppendTraining : TrainingMode::AsIs;
    }
    auto hw = str(j, "", "hardware");
    if (!hw) return located(hw.error());
    if (hw->empty()) return located(makeError("request.format", "the hardware is empty", "/hardware"));
    r.hardware = *hw;
    auto nodes = integer(j, "", "nodes", 1);
    if (!nodes) return located(nodes.error());
    r.nodes = *nodes;
    auto mesh = str(j, "", "mesh");
    if (!mesh) return located(mesh.error());
    auto choice = MeshChoice::parse(*mesh);
    if (!choice) return located(makeError("request.format", choice.error().message, "/mesh"));
    r.mesh = *choice;
    auto limit = integer(j, "", "memory_limit_bytes", 0);
    if (!limit) return located(limit.error());
    if (*limit > 0) r.memoryLimitBytes = *limit;
    // "auto"/"hardware" or a number.
    auto autoOrInt = [&](std::string_view key, std::string_view word, int64_t min) -> Result<std::optional<int64_t>> {
        auto m = S.member(j, "", key);
        if (!m) return m.error();
        if ((*m)->is_string() && (*m)->get<std::string>() == word) return std::optional<int64_t>{};
        auto v = integer(j, "", key, min);
        if (!v) return makeError("request.format", "expected \"" + std::string(word) + "\" or an integer of at least " + std::to_string(min),
                                 childPointer("", key));
        return std::optional<int64_t>{*v};
    };
    if (v1 || legacy) {
        r.searchZero = false;
        r.accumulation = 1;
        r.policy.attention = AttentionKernel::Eager;
    } else {
        auto attention = str(j, "", "attention");
        if (!attention) return located(attention.error());
        auto kernel = parseAttentionKernel(*attention);
        if (!kernel) return located(makeError("request.format", "attention must be flash, flash2 or eager, got '" + *attention + "'", "/attention"));
        r.policy.attention = *kernel;
        if (j.contains("cross_entropy")) {  // absent in requests written before it was a setting: fused
            auto ce = str(j, "", "cross_entropy");
            if (!ce) return located(ce.error());
            auto c = parseCrossEntropyKernel(*ce);
            if (!c) return located(makeError("request.format", "cross_entropy must be fused, inplace or eager, got '" + *ce + "'", "/cross_entropy"));
            r.policy.crossEntropy = *c;
        }
        if (j.contains("fusion")) {  // written only where the kernels are eager
            auto fusion = str(j, "", "fusion");
            if (!fusion) return located(fusion.error());
            auto f = parseKernelFusion(*fusion);
            if (!f) return located(makeError("request.format", "fusion must be compiled or eager, got '" + *fusion + "'", "/fusion"));
            r.policy.fusion = *f;
        }
        // "auto" (searched from stage 1, PlanRequest::searchZero) or a stage; requests written
        // before the search have a stage.
        auto stage = autoOrInt("zero_stage", "auto", 0);
        if (!stage) return located(stage.error());
        if (*stage && **stage > 3) return located(makeError("request.format", "zero_stage must be auto, 0, 1, 2 or 3", "/zero_stage"));
        r.searchZero = !*stage;
        r.policy.zeroStage = *stage ? static_cast<int>(**stage) : 1;
        auto reserve = autoOrInt("memory_reserve_bytes", "hardware", 0);
        if (!reserve) return located(reserve.error());
        r.memoryReserveBytes = *reserve;
        auto steps = autoOrInt("accumulation", "auto", 1);
        if (!steps) return located(steps.error());
        r.accumulation = *steps;
    }
    auto sharding = boolean(j, "", "optimizer_sharding");
    if (!sharding) return located(sharding.error());
    r.policy.optimizerSharding = *sharding;
    if (!v1 && !legacy && r.policy.optimizerSharding != (r.policy.zeroStage >= 1))
        return located(makeError("request.format", "zero_stage disagrees with optimizer_sharding", "/zero_stage"));
    auto recompute = str(j, "", "recompute");
    if (!recompute) return located(recompute.error());
    auto rc = parseRecomputePolicy(*recompute);
    if (!rc) return located(makeError("request.format", "recompute must be auto, none, all, layers or ops, got '" + *recompute + "'", "/recompute"));
    r.policy.recompute = *rc;
    auto pins = S.member(j, "", "pins");
    if (!pins) return located(pins.error());
    if (!(*pins)->is_array()) return located(S.typeError("/pins", "an array", **pins));
    for (size_t i = 0; i < (*pins)->size(); ++i) {
        auto text = S.string((**pins)[i], childPointer("/pins", i));
        if (!text) return located(text.error());
        auto pin = parsePin(*text);
        if (!pin) return located(makeError("request.format", pin.error().message, childPointer("/pins", i)));
        r.pins.push_back(std::move(*pin));
    }
    auto db = str(j, "", "profile_db");
    if (!db) return located(db.error());
    std::string fingerprint;
    if (!legacy) {
        auto fp = str(j, "", "profile_fingerprint");
        if (!fp) return located(fp.error());
        fingerprint = *fp;
        auto baselines = boolean(j, "", "baselines");
        if (!baselines) return located(baselines.error());
        r.baselines = *baselines ? Baselines::Include : Baselines::Skip;
        auto check = boolean(j, "", "check_blocks");
        if (!check) return located(check.error());
        r.blockCheck = *check ? BlockCheck::Run : BlockCheck::Skip;
        // Optional (added later): the step's schedule; left out, the default (both overlapped).
        if (j.contains("overlap")) {
            auto o = str(j, "", "overlap");
            if (!o) return located(o.error());
            if (!setOverlapWord(r.policy, *o))
                return located(makeError("request.format", "overlap must be all, on, grad, param or off, got '" + *o + "'", "/overlap"));
        }
        if (j.contains("bucket_bytes")) {
            auto b = integer(j, "", "bucket_bytes", 0);
            if (!b) return located(b.error());
            r.policy.bucketBytes = *b;
        }
        // Optional (added later): whether the search tries sequence parallelism; left out, auto.
        if (j.contains("sequence_parallel")) {
            auto sp = str(j, "", "sequence_parallel");
            if (!sp) return located(sp.error());
            if (*sp != "auto" && *sp != "off")
                return located(makeError("request.format", "sequence_parallel must be auto or off, got '" + *sp + "'", "/sequence_parallel"));
            r.searchSequenceParallel = *sp == "auto";
        }
        // Optional: pipeline stages.
        if (j.contains("pipeline")) {
            const auto& p = j.at("pipeline");
            const bool searched = p.is_object() && p.contains("stages") && p.at("stages") == "auto";
            const bool chunksSearched = p.is_object() && p.contains("chunks_per_rank") && p.at("chunks_per_rank") == "auto";
            if (!p.is_object() || !p.contains("stages") || !p.contains("chunks_per_rank") || !p.contains("schedule") ||
                !(searched || p.at("stages").is_number_integer()) || !(chunksSearched || p.at("chunks_per_rank").is_number_integer()) ||
                !p.at("schedule").is_string() || (!searched && (p.at("stages").get<int64_t>() < 1 || p.at("stages").get<int64_t>() > 4096)) ||
                (!chunksSearched && (p.at("chunks_per_rank").get<int64_t>() < 1 || p.at("chunks_per_rank").get<int64_t>() > 64)))
                return located(makeError("request.format",
                                         "pipeline must be {\"stages\": P ≥ 1 or \"auto\", \"chunks_per_rank\": V ≥ 1 or \"auto\", \"schedule\": NAME}",
                                         "/pipeline"));
            auto kind = parsePlannedScheduleKind(p.at("schedule").get<std::string>());
            if (!kind) return located(makeError("request.format", kind.error().message, "/pipeline/schedule"));
            r.pipeline.stages = searched ? PipelineSettings::kSearchedStages : static_cast<int32_t>(p.at("stages").get<int64_t>());
            r.pipeline.chunksPerRank = chunksSearched ? PipelineSettings::kSearchedChunks : static_cast<int32_t>(p.at("chunks_per_rank").get<int64_t>());
            r.pipeline.schedule = *kind;
            // Optional: the layers of each chunk (the split fixed; absent: searched).
            if (p.contains("split")) {
                const auto& split = p.at("split");
                bool ok = split.is_array() && !split.empty() && split.size() <= 4096 * 64;
                for (size_t i = 0; ok && i < split.size(); ++i) ok = split[i].is_number_integer() && split[i].get<int64_t>() >= 1 && split[i].get<int64_t>() <= 1'000'000;
                if (!ok) return located(makeError("request.format", "pipeline split must be a list of layer counts ≥ 1, one per chunk", "/pipeline/split"));
                if (!searched && p.at("stages").get<int64_t>() < 2)
                    return located(makeError("request.format", "a pipeline split needs stages ≥ 2", "/pipeline/split"));
                for (const auto& n : split) r.pipeline.chunkLayers.push_back(static_cast<int32_t>(n.get<int64_t>()));
            }
            // Optional: a custom schedule's actions (a CSV), their placement and where they came from.
            if (p.contains("actions")) {
                if (searched || chunksSearched || !p.at("actions").is_string())
                    return located(makeError("request.format", "pipeline actions must be a schedule CSV for fixed stages and chunks", "/pipeline/actions"));
                auto placement = parsePipePlacement(p.contains("placement") && p.at("placement").is_string() ? p.at("placement").get<std::string>() : "looped");
                if (!placement) return located(makeError("request.format", placement.error().message, "/pipeline/placement"));
                auto read = scheduleFromCsv(p.at("actions").get<std::string>(), r.pipeline.stages, r.pipeline.chunksPerRank, *placement);
                if (!read) return located(makeError("request.format", read.error().message, "/pipeline/actions"));
                r.pipeline.actions = std::move(read->actions);
                r.pipeline.placement = *placement;
                if (p.contains("schedule_origin") && p.at("schedule_origin").is_string()) r.pipeline.scheduleOrigin = p.at("schedule_origin").get<std::string>();
            } else if (p.contains("placement")) {
                // mip in a V (the placement the optimiser searches).
                auto placement = parsePipePlacement(p.at("placement").is_string() ? p.at("placement").get<std::string>() : "");
                if (!placement) return located(makeError("request.format", placement.error().message, "/pipeline/placement"));
                r.pipeline.placement = *placement;
            }
            if (p.contains("optimiser_seconds")) {
                if (!p.at("optimiser_seconds").is_number() || !(p.at("optimiser_seconds").get<double>() > 0))
                    return located(makeError("request.format", "optimiser_seconds must be a number of seconds > 0", "/pipeline/optimiser_seconds"));
                r.pipeline.optimiserSeconds = p.at("optimiser_seconds").get<double>();
            }
        }
    }
    if (!db->empty()) r.profile = ProfileSource{*db, fingerprint};
    else if (!fingerprint.empty())
        return located(makeError("request.format", "a profile fingerprint needs a profile DB", "/profile_fingerprint"));
    return r;
}

}  // namespace

Result<PlanRequest> requestFromJson(std::string_view text, const std::string& origin) {
    auto doc = kRequestJson.parse(text);
    if (!doc) return locatedIn(doc.error(), origin);
    return requestFromDoc(*doc, origin);
}

Result<PlanRequest> readRequestFile(const std::string& path) {
    auto text = readFileLimited(path, kMaxRequestBytes);
    if (!text) return makeError("request.io", text.error().message, path);
    return requestFromJson(*text, path);
}

Status writeRequestFile(const std::string& path, const PlanRequest& request) {
    if (auto st = writeFileAtomically(path, requestToJson(request)); !st) return makeError("request.io", st.error().message, path);
    return {};
}

namespace {

// `text` with every line after the first indented by `spaces` (JSON strings hold no raw newline).
std::string indented(std::string_view text, size_t spaces) {
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    for (char c : text) {
        out += c;
        if (c == '\n') out.append(spaces, ' ');
    }
    return out;
}

std::string_view withoutFinalNewline(std::string_view text) {
    while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    return text;
}

}  // namespace

std::string projectToJson(const PlanRequest& request, const ProjectPlan* lastPlan) {
    std::string text = requestToJson(request);
    if (!lastPlan) return text;
    // The request's document without its closing brace, then the last plan: its request as
    // requestToJson writes it and the plan as planToText does, both indented into place.
    std::string_view head = withoutFinalNewline(text);
    head.remove_suffix(1);  // '}'
    head = withoutFinalNewline(head);
    std::string out(head);
    out += ",\n  \"last_plan\": {\n    \"partial\": ";
    out += lastPlan->partial ? "true" : "false";
    out += ",\n    \"request\": " + indented(withoutFinalNewline(requestToJson(lastPlan->request)), 4);
    out += ",\n    \"plan\": " + indented(withoutFinalNewline(lastPlan->planText), 4);
    out += "\n  }\n}\n";
    return out;
}

Result<Project> projectFromJson(std::string_view text, const std::string& origin) {
    const StrictJson& S = kRequestJson;
    auto doc = S.parse(text);
    if (!doc) return locatedIn(doc.error(), origin);
    auto request = requestFromDoc(*doc, origin);
    if (!request) return request.error();
    Project project;
    project.request = std::move(*request);
    if (!doc->is_object() || !doc->contains("last_plan")) return project;
    auto located = [&](Error e) { return locatedIn(std::move(e), origin); };
    const nlohmann::json& last = doc->at("last_plan");
    if (!last.is_object()) return located(S.typeError("/last_plan", "an object", last));
    static constexpr std::string_view kLastPlanKeys[] = {"partial", "request", "plan"};
    if (const std::string* k = firstUnknownKey(last, kLastPlanKeys)) return located(S.unknownField("/last_plan", *k));
    for (std::string_view key : kLastPlanKeys)
        if (!last.contains(key))
            return located(makeError("request.format", "missing field '" + std::string(key) + "'", "/last_plan"));
    if (!last.at("partial").is_boolean()) return located(S.typeError("/last_plan/partial", "true or false", last.at("partial")));
    if (!last.at("request").is_object()) return located(S.typeError("/last_plan/request", "an object", last.at("request")));
    if (!last.at("plan").is_object()) return located(S.typeError("/last_plan/plan", "an object", last.at("plan")));
    ProjectPlan plan;
    plan.partial = last.at("partial").get<bool>();
    auto planRequest = requestFromDoc(last.at("request"), origin);
    if (!planRequest) {
        Error e = planRequest.error();
        e.where = "/last_plan/request" + e.where;
        return e;
    }
    plan.request = std::move(*planRequest);
    // Read with planFromJson when the plan is used (its errors do not make the project unreadable).
    plan.planText = last.at("plan").dump();
    project.lastPlan = std::move(plan);
    return project;
}

Result<Project> readProjectFile(const std::string& path) {
    auto text = readFileLimited(path, kMaxRequestBytes);
    if (!text) return makeError("request.io", text.error().message, path);
    return projectFromJson(*text, path);
}

Status writeProjectFile(const std::string& path, const PlanRequest& request, const ProjectPlan* lastPlan) {
    if (auto st = writeFileAtomically(path, projectToJson(request, lastPlan)); !st) return makeError("request.io", st.error().message, path);
    return {};
}

std::vector<std::string> requestDifferences(const PlanRequest& planned, const PlanRequest& request, const Mesh* planMesh) {
    std::vector<std::string> out;
    auto differ = [&out](bool same, const char* key) {
        if (!same) out.emplace_back(key);
    };
    const MemoryPolicy &p = planned.policy, &q = request.policy;
    differ(planned.model == request.model, "model");
    differ(planned.hardware == request.hardware, "hardware");
    differ(planned.nodes == request.nodes, "nodes");
    // A plan made under mesh auto answers the request fixed to its mesh too.
    differ(planned.mesh == request.mesh || (planned.mesh.isAuto() && !request.mesh.isAuto() && planMesh &&
                                            meshShapeText(request.mesh.mesh()) == meshShapeText(*planMesh)),
           "mesh");
    differ(planned.memoryLimitBytes == request.memoryLimitBytes, "memory_limit_bytes");
    differ(planned.memoryReserveBytes == request.memoryReserveBytes, "memory_reserve_bytes");
    differ(planned.accumulation == request.accumulation, "accumulation");
    differ(p.optimizerSharding == q.optimizerSharding, "optimizer_sharding");
    differ(p.recompute == q.recompute, "recompute");
    differ(p.attention == q.attention, "attention");
    differ(p.crossEntropy == q.crossEntropy, "cross_entropy");
    differ(p.fusion == q.fusion, "fusion");
    differ(zeroStageOf(p) == zeroStageOf(q) && planned.searchZero == request.searchZero, "zero_stage");
    differ(p.overlapGradReduce == q.overlapGradReduce && p.overlapParamGather == q.overlapParamGather &&
               p.overlapTensorParallel == q.overlapTensorParallel,
           "overlap");
    differ(p.bucketBytes == q.bucketBytes, "bucket_bytes");
    differ(planned.searchSequenceParallel == request.searchSequenceParallel, "sequence_parallel");
    differ(planned.pipeline == request.pipeline, "pipeline");
    differ(planned.pins == request.pins, "pins");
    differ(planned.profile == request.profile, "profile_db");
    differ(planned.baselines == request.baselines, "baselines");
    return out;
}

}  // namespace cfp
