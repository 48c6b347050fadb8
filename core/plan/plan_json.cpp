#include "plan/plan_json.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>

#include "io/atomic_file.h"
#include "io/strict_json.h"

namespace cfp {

namespace {

using OJson = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------------------------------------
// Shared helpers.

// Sum of non-negative byte counts, saturating at INT64_MAX (writer and reader agree on it).
int64_t memoryTotal(const MemoryBreakdown& m) {
    int64_t total = 0;
    for (int64_t part : {m.weights, m.gradients, m.optimizer, m.activations, m.transient}) {
        if (__builtin_add_overflow(total, part, &total)) return part < 0 ? std::numeric_limits<int64_t>::min() : kInt64Max;
    }
    return total;
}

std::optional<Provenance> parseProvenance(std::string_view name) {
    for (Provenance p : {Provenance::Modelled, Provenance::Measured, Provenance::Mixed})
        if (provenanceName(p) == name) return p;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Writer: the document as ordered_json.

// The string itself when it is valid UTF-8, else a copy with the bad bytes replaced by U+FFFD.
std::string utf8Safe(const std::string& s) {
    if (std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) return s;
    // nlohmann's dump validates UTF-8; with the replace handler bad bytes become U+FFFD.
    const std::string quoted = OJson(s).dump(-1, ' ', false, OJson::error_handler_t::replace);
    return Json::parse(quoted).get<std::string>();
}

OJson text(const std::string& s) { return OJson(utf8Safe(s)); }

OJson number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

OJson costJson(const CostBreakdown& c) {
    OJson j = OJson::object();
    j["compute_seconds"] = number(c.computeSeconds);
    j["collective_seconds"] = number(c.collectiveSeconds);
    j["reshard_seconds"] = number(c.reshardSeconds);
    j["provenance"] = std::string(provenanceName(c.provenance));
    return j;
}

OJson memoryJson(const MemoryBreakdown& m) {
    OJson j = OJson::object();
    j["weights"] = m.weights;
    j["gradients"] = m.gradients;
    j["optimizer"] = m.optimizer;
    j["activations"] = m.activations;
    j["transient"] = m.transient;
    j["total"] = memoryTotal(m);
    return j;
}

OJson stringArray(const std::vector<std::string>& v) {
    OJson j = OJson::array();
    for (const std::string& s : v) j.push_back(text(s));
    return j;
}

// ---------------------------------------------------------------------------------------------
// Writer: printing. Objects and arrays that hold only scalars (or arrays of scalars) are printed on
// one line when they are array elements (tensors, blocks, mesh axes); scalar arrays always are.

bool isScalar(const OJson& j) { return !j.is_structured(); }

bool isScalarArray(const OJson& j) {
    return j.is_array() && std::all_of(j.begin(), j.end(), [](const OJson& e) { return isScalar(e); });
}

bool isFlatObject(const OJson& j) {
    if (!j.is_object()) return false;
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!isScalar(it.value()) && !isScalarArray(it.value())) return false;
    return true;
}

bool isAscii(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Appends `s` (valid UTF-8) as a JSON string: quotes, backslashes and control characters escaped,
// everything else as is (the same text nlohmann's dump gives without ensure_ascii).
void appendEscaped(std::string& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    out += "\\u00";
                    out += kHex[(c >> 4) & 0xf];
                    out += kHex[c & 0xf];
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

// Any string: invalid UTF-8 is replaced first.
void appendString(std::string& out, const std::string& s) {
    if (isAscii(s)) appendEscaped(out, s);
    else appendEscaped(out, utf8Safe(s));
}

void printScalar(std::string& out, const OJson& j) {
    switch (j.type()) {
        case OJson::value_t::string: appendString(out, j.get_ref<const std::string&>()); break;
        case OJson::value_t::number_integer: out += std::to_string(j.get<int64_t>()); break;
        case OJson::value_t::number_unsigned: out += std::to_string(j.get<uint64_t>()); break;
        default: out += j.dump(); break;  // null, booleans, doubles (shortest text that reads back exactly)
    }
}

void printValue(std::string& out, const OJson& j, size_t indent, bool oneLine);

void printInline(std::string& out, const OJson& j) {
    if (j.is_object()) {
        out += '{';
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!first) out += ", ";
            first = false;
            appendString(out, it.key());
            out += ": ";
            printInline(out, it.value());
        }
        out += '}';
    } else if (j.is_array()) {
        out += '[';
        for (size_t i = 0; i < j.size(); ++i) {
            if (i) out += ", ";
            printInline(out, j[i]);
        }
        out += ']';
    } else {
        printScalar(out, j);
    }
}

void printValue(std::string& out, const OJson& j, size_t indent, bool oneLine) {
    if (oneLine || isScalar(j) || j.empty() || isScalarArray(j)) {
        printInline(out, j);
        return;
    }
    const std::string pad(indent + 2, ' ');
    if (j.is_object()) {
        out += "{\n";
        size_t k = 0;
        for (auto it = j.begin(); it != j.end(); ++it, ++k) {
            out += pad;
            appendString(out, it.key());
            out += ": ";
            printValue(out, it.value(), indent + 2, false);
            out += k + 1 < j.size() ? ",\n" : "\n";
        }
        out += std::string(indent, ' ') + "}";
    } else {
        out += "[\n";
        for (size_t i = 0; i < j.size(); ++i) {
            out += pad;
            printValue(out, j[i], indent + 2, isFlatObject(j[i]));
            out += i + 1 < j.size() ? ",\n" : "\n";
        }
        out += std::string(indent, ' ') + "]";
    }
}

// ---------------------------------------------------------------------------------------------
// Reader: text to DOM (io/strict_json.h), rejecting repeated keys and locating syntax errors.
// Every error but a syntax error is plan.format.

constexpr StrictJson kPlanJson = StrictJson::twoCodes("plan.syntax", "plan.format");

// ---------------------------------------------------------------------------------------------
// Reader: typed access to the DOM. Pointers are only built when an error is reported.

#define CFP_PLAN_ASSIGN(lhs, expr)                               \
    do {                                                         \
        auto cfp_plan_result_ = (expr);                          \
        if (!cfp_plan_result_) return cfp_plan_result_.error();  \
        lhs = std::move(cfp_plan_result_.value());               \
    } while (0)

Error formatError(std::string message, std::string where) {
    return makeError("plan.format", std::move(message), std::move(where));
}

// An object at `ptr` whose members are exactly `keys` (all required).
Status expectObject(const Json& j, const std::string& ptr, std::initializer_list<std::string_view> keys) {
    if (!j.is_object()) return kPlanJson.typeError(ptr, "an object", j);
    for (std::string_view key : keys)
        if (!j.contains(key)) return kPlanJson.missingField(ptr, key);
    if (j.size() != keys.size())
        if (const std::string* key = firstUnknownKey(j, std::span(keys.begin(), keys.size())))
            return kPlanJson.unknownField(ptr, *key);
    return {};
}

// Members of an object already checked by expectObject.
const Json& at(const Json& obj, std::string_view key) { return *obj.find(key); }

Result<int64_t> asInt(const Json& j, const std::string& ptr, int64_t min, int64_t max) {
    int64_t v = 0;
    if (j.is_number_unsigned()) {
        const auto u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(kInt64Max))
            return formatError(std::to_string(u) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                               ptr);
        v = static_cast<int64_t>(u);
    } else if (j.is_number_integer()) {
        v = j.get<int64_t>();
    } else {
        return kPlanJson.typeError(ptr, "an integer", j);
    }
    if (v < min || v > max)
        return formatError(std::to_string(v) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                           ptr);
    return v;
}

Result<int64_t> intField(const Json& obj, const std::string& ptr, std::string_view key, int64_t min, int64_t max) {
    const Json& v = at(obj, key);
    if (v.is_number_integer() && !v.is_number_unsigned()) {  // fast path: no pointer string
        const int64_t x = v.get<int64_t>();
        if (x >= min && x <= max) return x;
    }
    return asInt(v, childPointer(ptr, key), min, max);
}

Result<int32_t> int32Field(const Json& obj, const std::string& ptr, std::string_view key, int64_t min) {
    int64_t v = 0;
    CFP_PLAN_ASSIGN(v, intField(obj, ptr, key, min, kInt32Max));
    return static_cast<int32_t>(v);
}

Result<double> asDouble(const Json& j, const std::string& ptr) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
        const auto& s = j.get_ref<const std::string&>();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        return formatError("the only strings allowed for a number are \"inf\", \"-inf\" and \"nan\", got '" + s + "'", ptr);
    }
    return kPlanJson.typeError(ptr, "a number", j);
}

Result<double> doubleField(const Json& obj, const std::string& ptr, std::string_view key) {
    const Json& v = at(obj, key);
    if (v.is_number()) return v.get<double>();
    return asDouble(v, childPointer(ptr, key));
}

Result<std::string> stringField(const Json& obj, const std::string& ptr, std::string_view key) {
    const Json& v = at(obj, key);
    if (!v.is_string()) return kPlanJson.typeError(childPointer(ptr, key), "a string", v);
    return v.get<std::string>();
}

Result<bool> boolField(const Json& obj, const std::string& ptr, std::string_view key) {
    const Json& v = at(obj, key);
    if (!v.is_boolean()) return kPlanJson.typeError(childPointer(ptr, key), "a boolean", v);
    return v.get<bool>();
}

Result<const Json*> arrayField(const Json& obj, const std::string& ptr, std::string_view key, std::string_view what) {
    const Json& v = at(obj, key);
    if (!v.is_array()) return kPlanJson.typeError(childPointer(ptr, key), what, v);
    return &v;
}

Result<std::vector<std::string>> stringArrayField(const Json& obj, const std::string& ptr, std::string_view key) {
    const Json* a = nullptr;
    CFP_PLAN_ASSIGN(a, arrayField(obj, ptr, key, "an array of strings"));
    std::vector<std::string> out;
    out.reserve(a->size());
    for (size_t i = 0; i < a->size(); ++i) {
        const Json& e = (*a)[i];
        if (!e.is_string()) return kPlanJson.typeError(childPointer(childPointer(ptr, key), i), "a string", e);
        out.push_back(e.get<std::string>());
    }
    return out;
}

Result<CostBreakdown> readCost(const Json& j, const std::string& ptr) {
    CFP_TRY(expectObject(j, ptr, {"compute_seconds", "collective_seconds", "reshard_seconds", "provenance"}));
    CostBreakdown c;
    CFP_PLAN_ASSIGN(c.computeSeconds, doubleField(j, ptr, "compute_seconds"));
    CFP_PLAN_ASSIGN(c.collectiveSeconds, doubleField(j, ptr, "collective_seconds"));
    CFP_PLAN_ASSIGN(c.reshardSeconds, doubleField(j, ptr, "reshard_seconds"));
    std::string provenance;
    CFP_PLAN_ASSIGN(provenance, stringField(j, ptr, "provenance"));
    auto p = parseProvenance(provenance);
    if (!p)
        return formatError("provenance is 'modelled', 'measured' or 'mixed', got '" + provenance + "'",
                           childPointer(ptr, "provenance"));
    c.provenance = *p;
    return c;
}

Result<MemoryBreakdown> readMemory(const Json& j, const std::string& ptr) {
    CFP_TRY(expectObject(j, ptr, {"weights", "gradients", "optimizer", "activations", "transient", "total"}));
    MemoryBreakdown m;
    CFP_PLAN_ASSIGN(m.weights, intField(j, ptr, "weights", 0, kInt64Max));
    CFP_PLAN_ASSIGN(m.gradients, intField(j, ptr, "gradients", 0, kInt64Max));
    CFP_PLAN_ASSIGN(m.optimizer, intField(j, ptr, "optimizer", 0, kInt64Max));
    CFP_PLAN_ASSIGN(m.activations, intField(j, ptr, "activations", 0, kInt64Max));
    CFP_PLAN_ASSIGN(m.transient, intField(j, ptr, "transient", 0, kInt64Max));
    int64_t total = 0;
    CFP_PLAN_ASSIGN(total, intField(j, ptr, "total", 0, kInt64Max));
    if (total != memoryTotal(m))
        return formatError("total " + std::to_string(total) + " is not the sum of the parts (" +
                               std::to_string(memoryTotal(m)) + ")",
                           childPointer(ptr, "total"));
    return m;
}

// Wraps a parser error (mesh.*, sharding.*) as `code` located at `ptr`, quoting the parser's code.
Error wrapped(std::string code, const std::string& what, const Error& inner, const std::string& ptr) {
    return makeError(std::move(code), what + ": " + inner.message + " (" + inner.code + ")", ptr);
}

class PlanReader {
public:
    PlanReader(Plan& plan, std::vector<std::string>* names) : m_plan(plan), m_names(names) {}

    Status read(const Json& doc);

private:
    Status readModel(const Json& j, int64_t& ops);
    Status readHardware(const Json& j);
    Status readMesh(const Json& j);
    Status readBlocks(const Json& j);
    Status readSegments(const Json& j);
    Status readTensors(const Json& j, int64_t ops);
    Status readBaselines(const Json& j);
    Status readPipeline(const Json& j);
    Result<TensorSharding> sharding(const Json& j, const std::string& ptr);

    Plan& m_plan;
    std::vector<std::string>* m_names;
    // Distinct sharding texts are few (a few hundred in a 10^5-op plan): parse each once.
    std::unordered_map<std::string, TensorSharding> m_shardings;
};

Status PlanReader::read(const Json& doc) {
    if (!doc.is_object()) return kPlanJson.typeError("", "an object", doc);
    auto format = doc.find("format");
    if (format == doc.end()) return formatError("missing required field 'format' (not a cfp-plan document)", "/format");
    if (!format->is_string() || format->get_ref<const std::string&>() != kPlanFormatName)
        return formatError("format is " + format->dump(-1, ' ', false, Json::error_handler_t::replace) + ", expected \"" +
                               std::string(kPlanFormatName) + "\"",
                           "/format");
    auto version = doc.find("version");
    if (version == doc.end()) return formatError("missing required field 'version'", "/version");
    int64_t v = 0;
    CFP_PLAN_ASSIGN(v, asInt(*version, "/version", std::numeric_limits<int64_t>::min(), kInt64Max));
    if (v != kPlanFormatVersion && v != 2)
        return makeError("plan.version",
                         "plan format version " + std::to_string(v) + " is not supported; this reader supports versions 2 and " +
                             std::to_string(kPlanFormatVersion),
                         "/version");

    // simulated_step: optional (files written before the step simulator have none).
    Json top = doc;
    if (top.is_object()) top.erase("simulated_step");
    if (top.is_object()) top.erase("pipeline");  // optional: plans with pipeline stages
    CFP_TRY(expectObject(top, "",
                         {"format", "version", "model", "hardware", "mesh", "memory_limit_bytes", "memory_policy", "pins",
                          "predicted_step_seconds", "evaluator_step_seconds", "step", "memory_per_device", "search",
                          "segments", "blocks", "baselines", "tensors"}));
    int64_t ops = 0;
    CFP_TRY(readModel(at(doc, "model"), ops));
    CFP_TRY(readHardware(at(doc, "hardware")));
    CFP_TRY(readMesh(at(doc, "mesh")));
    CFP_PLAN_ASSIGN(m_plan.memoryLimitBytes, intField(doc, "", "memory_limit_bytes", 0, kInt64Max));
    {
        const Json& p = at(doc, "memory_policy");
        // Version 3 added accumulation_steps and attention; a version-2 plan ran one round per
        // step with every attention op a kernel of its own.
        if (v == 2) {
            CFP_TRY(expectObject(p, "/memory_policy", {"optimizer_sharding", "recompute"}));
            m_plan.policy.attention = AttentionKernel::Eager;
        } else {
            // Optional keys: sequence_parallel (the mesh axis) only where sequence parallelism is
            // on; fusion only where the kernels are eager; overlap and bucket_bytes (the step's
            // schedule) and cross_entropy from files written since they were added (left out: both
            // overlapped, the default bucket, fused, compiled).
            Json base = p;
            if (base.is_object())
                for (const char* k : {"sequence_parallel", "overlap", "bucket_bytes", "cross_entropy", "fusion", "context_parallel_comm"}) base.erase(k);
            CFP_TRY(expectObject(base, "/memory_policy", {"optimizer_sharding", "recompute", "accumulation_steps", "attention", "zero_stage"}));
            if (p.contains("sequence_parallel")) {
                CFP_PLAN_ASSIGN(m_plan.policy.sequenceParallelAxis, stringField(p, "/memory_policy", "sequence_parallel"));
                if (!m_plan.mesh.axisIndex(m_plan.policy.sequenceParallelAxis))
                    return formatError("sequence_parallel names '" + m_plan.policy.sequenceParallelAxis + "', not an axis of the mesh",
                                       "/memory_policy/sequence_parallel");
            }
            if (p.contains("overlap")) {
                std::string word;
                CFP_PLAN_ASSIGN(word, stringField(p, "/memory_policy", "overlap"));
                if (!setOverlapWord(m_plan.policy, word))
                    return formatError("overlap is '" + word + "', expected all, on, grad, param or off", "/memory_policy/overlap");
            }
            if (p.contains("bucket_bytes")) CFP_PLAN_ASSIGN(m_plan.policy.bucketBytes, intField(p, "/memory_policy", "bucket_bytes", 0, kInt64Max));
            // Context parallelism's exchange (left out: all_gather, as files before the ring priced it).
            if (p.contains("context_parallel_comm")) {
                std::string word;
                CFP_PLAN_ASSIGN(word, stringField(p, "/memory_policy", "context_parallel_comm"));
                if (word != "p2p" && word != "all_gather")
                    return formatError("context_parallel_comm is '" + word + "', expected p2p or all_gather", "/memory_policy/context_parallel_comm");
                if (word == "p2p" && !m_plan.mesh.axisIndex(kContextParallelAxis))
                    return formatError("context_parallel_comm is p2p but the mesh has no axis " + std::string(kContextParallelAxis),
                                       "/memory_policy/context_parallel_comm");
                m_plan.policy.contextRing = word == "p2p";
            }
            int64_t stage = 1;
            CFP_PLAN_ASSIGN(stage, intField(p, "/memory_policy", "zero_stage", 0, 3));
            m_plan.policy.zeroStage = static_cast<int>(stage);
            CFP_PLAN_ASSIGN(m_plan.policy.accumulation, intField(p, "/memory_policy", "accumulation_steps", 1, kMaxAccumulation));
            std::string attention;
            CFP_PLAN_ASSIGN(attention, stringField(p, "/memory_policy", "attention"));
            auto kernel = parseAttentionKernel(attention);
            if (!kernel) return formatError("attention is '" + attention + "', expected flash, flash2 or eager", "/memory_policy/attention");
            m_plan.policy.attention = *kernel;
            if (p.contains("cross_entropy")) {
                std::string ce;
                CFP_PLAN_ASSIGN(ce, stringField(p, "/memory_policy", "cross_entropy"));
                auto c = parseCrossEntropyKernel(ce);
                if (!c) return formatError("cross_entropy is '" + ce + "', expected fused, inplace or eager", "/memory_policy/cross_entropy");
                m_plan.policy.crossEntropy = *c;
            }
            if (p.contains("fusion")) {
                std::string fusion;
                CFP_PLAN_ASSIGN(fusion, stringField(p, "/memory_policy", "fusion"));
                auto f = parseKernelFusion(fusion);
                if (!f) return formatError("fusion is '" + fusion + "', expected compiled or eager", "/memory_policy/fusion");
                m_plan.policy.fusion = *f;
            }
        }
        CFP_PLAN_ASSIGN(m_plan.policy.optimizerSharding, boolField(p, "/memory_policy", "optimizer_sharding"));
        if (v != 2 && m_plan.policy.optimizerSharding != (m_plan.policy.zeroStage >= 1))
            return formatError("zero_stage " + std::to_string(m_plan.policy.zeroStage) + " disagrees with optimizer_sharding " +
                                   (m_plan.policy.optimizerSharding ? "true" : "false"),
                               "/memory_policy/zero_stage");
        std::string recompute;
        CFP_PLAN_ASSIGN(recompute, stringField(p, "/memory_policy", "recompute"));
        auto policy = parseRecomputePolicy(recompute);
        if (!policy) return formatError("recompute is '" + recompute + "', expected none, auto or all", "/memory_policy/recompute");
        m_plan.policy.recompute = *policy;
    }
    {
        std::vector<std::string> pins;
        CFP_PLAN_ASSIGN(pins, stringArrayField(doc, "", "pins"));
        for (size_t i = 0; i < pins.size(); ++i) {
            auto pin = parsePin(pins[i]);
            if (!pin) return formatError(pin.error().message, "/pins/" + std::to_string(i));
            m_plan.pins.push_back(std::move(*pin));
        }
    }
    CFP_PLAN_ASSIGN(m_plan.predictedStepSeconds, doubleField(doc, "", "predicted_step_seconds"));
    CFP_PLAN_ASSIGN(m_plan.evaluatorStepSeconds, doubleField(doc, "", "evaluator_step_seconds"));
    CFP_PLAN_ASSIGN(m_plan.step, readCost(at(doc, "step"), "/step"));
    if (doc.contains("simulated_step")) {
        const Json& q = at(doc, "simulated_step");
        CFP_TRY(expectObject(q, "/simulated_step",
                             {"seconds", "compute_seconds", "exposed_communication_seconds", "overlapped_communication_seconds",
                              "contention_seconds", "gradient_buckets", "weight_gathers"}));
        StepSimulation& sim = m_plan.simulated;
        CFP_PLAN_ASSIGN(sim.seconds, doubleField(q, "/simulated_step", "seconds"));
        CFP_PLAN_ASSIGN(sim.computeSeconds, doubleField(q, "/simulated_step", "compute_seconds"));
        CFP_PLAN_ASSIGN(sim.exposedCommSeconds, doubleField(q, "/simulated_step", "exposed_communication_seconds"));
        CFP_PLAN_ASSIGN(sim.overlappedCommSeconds, doubleField(q, "/simulated_step", "overlapped_communication_seconds"));
        CFP_PLAN_ASSIGN(sim.contentionSeconds, doubleField(q, "/simulated_step", "contention_seconds"));
        CFP_PLAN_ASSIGN(sim.gradientBuckets, intField(q, "/simulated_step", "gradient_buckets", 0, kInt64Max));
        CFP_PLAN_ASSIGN(sim.gatherCollectives, intField(q, "/simulated_step", "weight_gathers", 0, kInt64Max));
    }
    if (doc.contains("pipeline")) CFP_TRY(readPipeline(at(doc, "pipeline")));
    CFP_PLAN_ASSIGN(m_plan.memory, readMemory(at(doc, "memory_per_device"), "/memory_per_device"));
    {
        const Json& s = at(doc, "search");
        const bool cut = s.is_object() && (s.contains("cut_pairs") || s.contains("gap_bound_seconds"));
        if (cut) CFP_TRY(expectObject(s, "/search", {"seconds", "exact", "cut_pairs", "gap_bound_seconds"}));
        else CFP_TRY(expectObject(s, "/search", {"seconds", "exact"}));
        CFP_PLAN_ASSIGN(m_plan.searchSeconds, doubleField(s, "/search", "seconds"));
        CFP_PLAN_ASSIGN(m_plan.searchExact, boolField(s, "/search", "exact"));
        if (cut) {
            CFP_PLAN_ASSIGN(m_plan.searchCutPairs, asInt(at(s, "cut_pairs"), "/search/cut_pairs", 0, kInt64Max));
            CFP_PLAN_ASSIGN(m_plan.searchGapSeconds, doubleField(s, "/search", "gap_bound_seconds"));
        }
    }
    CFP_TRY(readBlocks(at(doc, "blocks")));
    CFP_TRY(readSegments(at(doc, "segments")));
    CFP_TRY(readBaselines(at(doc, "baselines")));
    CFP_TRY(readTensors(at(doc, "tensors"), ops));
    return {};
}

Status PlanReader::readModel(const Json& j, int64_t& ops) {
    const std::string ptr = "/model";
    if (j.is_object() && j.contains("train")) {
        CFP_TRY(expectObject(j, ptr, {"name", "source", "batch", "seq", "dtype", "qkv", "ops", "train"}));
        CFP_PLAN_ASSIGN(m_plan.importTraining, boolField(j, ptr, "train"));
    } else {
        CFP_TRY(expectObject(j, ptr, {"name", "source", "batch", "seq", "dtype", "qkv", "ops"}));
    }
    CFP_PLAN_ASSIGN(m_plan.model, stringField(j, ptr, "name"));
    CFP_PLAN_ASSIGN(m_plan.modelSource, stringField(j, ptr, "source"));
    // Builder options: batch 0 (and empty dtype and qkv) for sources built without them.
    int64_t batch = 0, seq = 0;
    std::string dtype, qkv;
    CFP_PLAN_ASSIGN(batch, intField(j, ptr, "batch", 0, kInt64Max));
    CFP_PLAN_ASSIGN(seq, intField(j, ptr, "seq", 0, kInt64Max));
    CFP_PLAN_ASSIGN(dtype, stringField(j, ptr, "dtype"));
    CFP_PLAN_ASSIGN(qkv, stringField(j, ptr, "qkv"));
    if (batch > 0) {
        BuildOptions build;
        build.batch = batch;
        build.seq = seq;
        auto dt = parseDType(dtype);
        if (!dt) return formatError("unknown dtype '" + dtype + "'", ptr + "/dtype");
        build.dtype = *dt;
        if (qkv != "fused" && qkv != "separate") return formatError("qkv is '" + qkv + "', expected fused or separate", ptr + "/qkv");
        build.qkv = qkv == "separate" ? QkvLayout::Separate : QkvLayout::Fused;
        m_plan.build = build;
    }
    CFP_PLAN_ASSIGN(ops, intField(j, ptr, "ops", 0, kInt32Max));
    return {};
}

Status PlanReader::readHardware(const Json& j) {
    const std::string ptr = "/hardware";
    CFP_TRY(expectObject(j, ptr, {"id", "name", "nodes", "gpus_per_node"}));
    CFP_PLAN_ASSIGN(m_plan.hardware, stringField(j, ptr, "id"));
    CFP_PLAN_ASSIGN(m_plan.hardwareName, stringField(j, ptr, "name"));
    CFP_PLAN_ASSIGN(m_plan.nodes, intField(j, ptr, "nodes", 1, kMaxMeshDevices));
    CFP_PLAN_ASSIGN(m_plan.gpusPerNode, intField(j, ptr, "gpus_per_node", 1, kMaxMeshDevices));
    return {};
}

Status PlanReader::readPipeline(const Json& j) {
    const std::string ptr = "/pipeline";
    // placement, actions, schedule_origin: optional (plans before custom and mip schedules).
    Json required = j;
    if (required.is_object())
        for (const char* key : {"placement", "actions", "schedule_origin"}) required.erase(key);
    CFP_TRY(expectObject(required, ptr,
                         {"stages", "chunks_per_rank", "schedule", "micro_batches", "seconds", "bubble_seconds", "transfer_seconds",
                          "transfer_bytes", "slowest_rank", "fullest_rank", "chunks", "ranks"}));
    PipelinePlan pl;
    CFP_PLAN_ASSIGN(pl.stages, int32Field(j, ptr, "stages", 2));
    CFP_PLAN_ASSIGN(pl.chunksPerRank, int32Field(j, ptr, "chunks_per_rank", 1));
    std::string schedule;
    CFP_PLAN_ASSIGN(schedule, stringField(j, ptr, "schedule"));
    auto kind = parsePlannedScheduleKind(schedule);
    if (!kind) return formatError(kind.error().message, ptr + "/schedule");
    pl.schedule = *kind;
    CFP_PLAN_ASSIGN(pl.microBatches, int32Field(j, ptr, "micro_batches", 1));
    // Optional (plans before custom and mip schedules): the generated kind's placement, no actions.
    pl.placement = pipeSchedulePlacement(pl.schedule);
    if (j.contains("placement")) {
        std::string placement;
        CFP_PLAN_ASSIGN(placement, stringField(j, ptr, "placement"));
        auto parsed = parsePipePlacement(placement);
        if (!parsed) return formatError(parsed.error().message, ptr + "/placement");
        pl.placement = *parsed;
    }
    if (j.contains("schedule_origin")) CFP_PLAN_ASSIGN(pl.scheduleOrigin, stringField(j, ptr, "schedule_origin"));
    if (j.contains("actions")) {
        std::string csv;
        CFP_PLAN_ASSIGN(csv, stringField(j, ptr, "actions"));
        auto read = scheduleFromCsv(csv, pl.stages, pl.chunksPerRank, pl.placement);
        if (!read) return formatError(read.error().message + (read.error().where.empty() ? "" : " (" + read.error().where + ")"), ptr + "/actions");
        if (read->microBatches != pl.microBatches)
            return formatError("the actions run " + std::to_string(read->microBatches) + " micro-batches; micro_batches is " + std::to_string(pl.microBatches),
                               ptr + "/actions");
        pl.actions = std::move(read->actions);
    }
    if ((pl.schedule == PipeScheduleKind::Custom || pl.schedule == PipeScheduleKind::Mip) && pl.actions.empty())
        return formatError("a " + schedule + " schedule needs its actions", ptr + "/actions");
    CFP_PLAN_ASSIGN(pl.seconds, doubleField(j, ptr, "seconds"));
    CFP_PLAN_ASSIGN(pl.bubbleSeconds, doubleField(j, ptr, "bubble_seconds"));
    CFP_PLAN_ASSIGN(pl.transferSeconds, doubleField(j, ptr, "transfer_seconds"));
    CFP_PLAN_ASSIGN(pl.transferBytes, intField(j, ptr, "transfer_bytes", 0, kInt64Max));
    CFP_PLAN_ASSIGN(pl.slowestRank, int32Field(j, ptr, "slowest_rank", 0));
    CFP_PLAN_ASSIGN(pl.fullestRank, int32Field(j, ptr, "fullest_rank", 0));
    const Json* chunks = nullptr;
    CFP_PLAN_ASSIGN(chunks, arrayField(j, ptr, "chunks", "an array of chunks"));
    if (chunks->size() != static_cast<size_t>(pl.stages) * static_cast<size_t>(pl.chunksPerRank))
        return formatError(std::to_string(chunks->size()) + " chunks listed; stages × chunks_per_rank is " +
                               std::to_string(int64_t{pl.stages} * pl.chunksPerRank),
                           ptr + "/chunks");
    for (size_t k = 0; k < chunks->size(); ++k) {
        const std::string cp = childPointer(ptr + "/chunks", k);
        const Json& c = (*chunks)[k];
        CFP_TRY(expectObject(c, cp,
                             {"first_layer", "layers", "embedding", "head", "forward_seconds", "input_grad_seconds", "weight_grad_seconds",
                              "activation_bytes"}));
        PipelineChunk ch;
        CFP_PLAN_ASSIGN(ch.firstLayer, int32Field(c, cp, "first_layer", 0));
        CFP_PLAN_ASSIGN(ch.layers, int32Field(c, cp, "layers", 1));
        CFP_PLAN_ASSIGN(ch.embedding, boolField(c, cp, "embedding"));
        CFP_PLAN_ASSIGN(ch.head, boolField(c, cp, "head"));
        CFP_PLAN_ASSIGN(ch.forwardSeconds, doubleField(c, cp, "forward_seconds"));
        CFP_PLAN_ASSIGN(ch.inputGradSeconds, doubleField(c, cp, "input_grad_seconds"));
        CFP_PLAN_ASSIGN(ch.weightGradSeconds, doubleField(c, cp, "weight_grad_seconds"));
        CFP_PLAN_ASSIGN(ch.activationBytes, intField(c, cp, "activation_bytes", 0, kInt64Max));
        pl.chunks.push_back(ch);
    }
    const Json* ranks = nullptr;
    CFP_PLAN_ASSIGN(ranks, arrayField(j, ptr, "ranks", "an array of ranks"));
    if (ranks->size() != static_cast<size_t>(pl.stages))
        return formatError(std::to_string(ranks->size()) + " ranks listed; the pipeline has " + std::to_string(pl.stages) + " stages",
                           ptr + "/ranks");
    for (size_t k = 0; k < ranks->size(); ++k) {
        const std::string rp = childPointer(ptr + "/ranks", k);
        const Json& r = (*ranks)[k];
        CFP_TRY(expectObject(r, rp, {"busy_seconds", "end_seconds", "tail_seconds", "memory"}));
        PipelineRank rank;
        CFP_PLAN_ASSIGN(rank.busySeconds, doubleField(r, rp, "busy_seconds"));
        CFP_PLAN_ASSIGN(rank.endSeconds, doubleField(r, rp, "end_seconds"));
        CFP_PLAN_ASSIGN(rank.tailSeconds, doubleField(r, rp, "tail_seconds"));
        CFP_PLAN_ASSIGN(rank.memory, readMemory(at(r, "memory"), rp + "/memory"));
        pl.ranks.push_back(rank);
    }
    if (pl.slowestRank >= pl.stages) return formatError("slowest_rank is not a rank of the pipeline", ptr + "/slowest_rank");
    if (pl.fullestRank >= pl.stages) return formatError("fullest_rank is not a rank of the pipeline", ptr + "/fullest_rank");
    m_plan.policy.pipelineStages = pl.stages;  // the program was priced with a rank's share of parameters
    m_plan.pipeline = std::move(pl);
    return {};
}

Status PlanReader::readMesh(const Json& j) {
    const std::string ptr = "/mesh";
    CFP_TRY(expectObject(j, ptr, {"text", "axes"}));
    std::string meshText;
    CFP_PLAN_ASSIGN(meshText, stringField(j, ptr, "text"));
    auto mesh = parseMesh(meshText);
    if (!mesh) return wrapped("plan.mesh", "mesh '" + meshText + "'", mesh.error(), ptr + "/text");
    m_plan.mesh = std::move(*mesh);

    const Json* axes = nullptr;
    CFP_PLAN_ASSIGN(axes, arrayField(j, ptr, "axes", "an array of axes"));
    const auto& expected = m_plan.mesh.axes();
    if (axes->size() != expected.size())
        return makeError("plan.mesh",
                         std::to_string(axes->size()) + " axes listed but the mesh text " + m_plan.mesh.toString() + " has " +
                             std::to_string(expected.size()),
                         ptr + "/axes");
    for (size_t k = 0; k < axes->size(); ++k) {
        const std::string ap = childPointer(ptr + "/axes", k);
        const Json& a = (*axes)[k];
        CFP_TRY(expectObject(a, ap, {"name", "size", "link"}));
        std::string name;
        CFP_PLAN_ASSIGN(name, stringField(a, ap, "name"));
        int64_t size = 0;
        CFP_PLAN_ASSIGN(size, intField(a, ap, "size", 1, kMaxMeshDevices));
        const Json& link = at(a, "link");
        std::optional<std::string> linkName;
        if (link.is_string()) linkName = link.get<std::string>();
        else if (!link.is_null()) return kPlanJson.typeError(ap + "/link", "\"intra\", \"inter\" or null", link);
        const MeshAxis& axis = expected[k];
        if (name != axis.name)
            return makeError("plan.mesh", "axis " + std::to_string(k) + " is named '" + name + "' here but '" + axis.name +
                                              "' in the mesh text",
                             ap + "/name");
        if (size != axis.size)
            return makeError("plan.mesh", "axis '" + name + "' has size " + std::to_string(size) + " here but " +
                                              std::to_string(axis.size) + " in the mesh text",
                             ap + "/size");
        const std::optional<std::string> textLink =
            axis.link ? std::optional<std::string>(std::string(linkClassName(*axis.link))) : std::nullopt;
        if (linkName != textLink)
            return makeError("plan.mesh", "axis '" + name + "' has link " + linkName.value_or("null") + " here but " +
                                              textLink.value_or("null") + " in the mesh text",
                             ap + "/link");
    }
    return {};
}

Status PlanReader::readBlocks(const Json& j) {
    const std::string ptr = "/blocks";
    if (!j.is_array()) return kPlanJson.typeError(ptr, "an array of blocks", j);
    m_plan.blocks.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string bp = childPointer(ptr, i);
        const Json& b = j[i];
        CFP_TRY(expectObject(b, bp, {"block", "strategy", "label", "pinned", "recompute"}));
        BlockChoice c;
        CFP_PLAN_ASSIGN(c.block, int32Field(b, bp, "block", 0));
        if (static_cast<size_t>(c.block) != i)
            return formatError("blocks are listed in block order: entry " + std::to_string(i) + " is block " +
                                   std::to_string(c.block),
                               bp + "/block");
        CFP_PLAN_ASSIGN(c.strategy, int32Field(b, bp, "strategy", 0));
        CFP_PLAN_ASSIGN(c.label, stringField(b, bp, "label"));
        CFP_PLAN_ASSIGN(c.pinned, boolField(b, bp, "pinned"));
        CFP_PLAN_ASSIGN(c.recompute, boolField(b, bp, "recompute"));
        m_plan.blocks.push_back(std::move(c));
    }
    return {};
}

Status PlanReader::readSegments(const Json& j) {
    const std::string ptr = "/segments";
    if (!j.is_array()) return kPlanJson.typeError(ptr, "an array of segments", j);
    m_plan.segments.reserve(j.size());
    const int64_t blockCount = static_cast<int64_t>(m_plan.blocks.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string sp = childPointer(ptr, i);
        const Json& s = j[i];
        CFP_TRY(expectObject(s, sp, {"index", "type", "first_block", "blocks", "combination", "labels", "cost", "memory_bytes"}));
        SegmentPlan seg;
        CFP_PLAN_ASSIGN(seg.index, int32Field(s, sp, "index", 0));
        if (static_cast<size_t>(seg.index) != i)
            return formatError("segments are listed in chain order: entry " + std::to_string(i) + " has index " +
                                   std::to_string(seg.index),
                               sp + "/index");
        CFP_PLAN_ASSIGN(seg.type, int32Field(s, sp, "type", 0));
        CFP_PLAN_ASSIGN(seg.firstBlock, int32Field(s, sp, "first_block", 0));
        CFP_PLAN_ASSIGN(seg.blockCount, int32Field(s, sp, "blocks", 0));
        if (int64_t{seg.firstBlock} + seg.blockCount > blockCount)
            return formatError("blocks " + std::to_string(seg.firstBlock) + ".." +
                                   std::to_string(int64_t{seg.firstBlock} + seg.blockCount - 1) + " are not all in the " +
                                   std::to_string(blockCount) + " blocks of the plan",
                               sp + "/blocks");
        const Json* combination = nullptr;
        CFP_PLAN_ASSIGN(combination, arrayField(s, sp, "combination", "an array of strategy indices"));
        if (combination->size() != static_cast<size_t>(seg.blockCount))
            return formatError("combination has " + std::to_string(combination->size()) + " entries for " +
                                   std::to_string(seg.blockCount) + " blocks",
                               sp + "/combination");
        const Json* labels = nullptr;
        CFP_PLAN_ASSIGN(labels, arrayField(s, sp, "labels", "an array of strategy labels"));
        if (labels->size() != static_cast<size_t>(seg.blockCount))
            return formatError("labels has " + std::to_string(labels->size()) + " entries for " +
                                   std::to_string(seg.blockCount) + " blocks",
                               sp + "/labels");
        seg.combination.reserve(combination->size());
        for (size_t k = 0; k < combination->size(); ++k) {
            const BlockChoice& choice = m_plan.blocks[static_cast<size_t>(seg.firstBlock) + k];
            const std::string cp = childPointer(sp + "/combination", k);
            int64_t strategy = 0;
            CFP_PLAN_ASSIGN(strategy, asInt((*combination)[k], cp, 0, kInt32Max));
            if (strategy != choice.strategy)
                return formatError("strategy " + std::to_string(strategy) + " differs from block " +
                                       std::to_string(choice.block) + "'s strategy " + std::to_string(choice.strategy),
                                   cp);
            seg.combination.push_back(static_cast<int32_t>(strategy));
            const Json& label = (*labels)[k];
            const std::string lp = childPointer(sp + "/labels", k);
            if (!label.is_string()) return kPlanJson.typeError(lp, "a string", label);
            if (label.get_ref<const std::string&>() != choice.label)
                return formatError("label '" + label.get<std::string>() + "' differs from block " +
                                       std::to_string(choice.block) + "'s label '" + choice.label + "'",
                                   lp);
        }
        CFP_PLAN_ASSIGN(seg.cost, readCost(at(s, "cost"), sp + "/cost"));
        CFP_PLAN_ASSIGN(seg.memoryBytes, intField(s, sp, "memory_bytes", 0, kInt64Max));
        m_plan.segments.push_back(std::move(seg));
    }
    return {};
}

Result<TensorSharding> PlanReader::sharding(const Json& j, const std::string& ptr) {
    if (!j.is_string()) return kPlanJson.typeError(ptr, "a sharding text", j);
    const auto& textValue = j.get_ref<const std::string&>();
    if (auto it = m_shardings.find(textValue); it != m_shardings.end()) return it->second;
    auto parsed = parseSharding(textValue);
    if (!parsed) return wrapped("plan.sharding", "sharding '" + textValue + "'", parsed.error(), ptr);
    auto known = [&](const std::string& axis) -> Status {
        if (!m_plan.mesh.findAxis(axis))
            return makeError("plan.sharding",
                             "sharding '" + textValue + "' names axis '" + axis + "', which the mesh " +
                                 m_plan.mesh.toString() + " lacks",
                             ptr);
        return {};
    };
    for (const std::string& axis : parsed->splitAxes()) CFP_TRY(known(axis));
    for (const std::string& axis : parsed->partialAxes()) CFP_TRY(known(axis));
    m_shardings.emplace(textValue, *parsed);
    return std::move(*parsed);
}

Status PlanReader::readTensors(const Json& j, int64_t ops) {
    const std::string ptr = "/tensors";
    if (!j.is_array()) return kPlanJson.typeError(ptr, "an array of tensor entries", j);
    if (static_cast<int64_t>(j.size()) != ops)
        return formatError(std::to_string(j.size()) + " tensor entries but /model/ops says " + std::to_string(ops), ptr);
    const int64_t blockCount = static_cast<int64_t>(m_plan.blocks.size());
    m_plan.tensors.reserve(j.size());
    if (m_names) m_names->reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string tp = childPointer(ptr, i);
        const Json& t = j[i];
        TensorPlan tensor;
        // "recompute": true appears only on recomputed ops.
        if (t.is_object() && t.contains("recompute")) {
            CFP_TRY(expectObject(t, tp, {"op", "name", "scope", "block", "result", "operands", "own_collective_axes", "recompute"}));
            CFP_PLAN_ASSIGN(tensor.recompute, boolField(t, tp, "recompute"));
        } else {
            CFP_TRY(expectObject(t, tp, {"op", "name", "scope", "block", "result", "operands", "own_collective_axes"}));
        }
        CFP_PLAN_ASSIGN(tensor.op, int32Field(t, tp, "op", 0));
        if (static_cast<size_t>(tensor.op) != i)
            return formatError("tensor entries are listed in op order: entry " + std::to_string(i) + " has op " +
                                   std::to_string(tensor.op),
                               tp + "/op");
        std::string name;
        CFP_PLAN_ASSIGN(name, stringField(t, tp, "name"));
        if (!at(t, "scope").is_string()) return kPlanJson.typeError(tp + "/scope", "a string", at(t, "scope"));
        CFP_PLAN_ASSIGN(tensor.block, int32Field(t, tp, "block", -1));
        if (tensor.block >= blockCount)
            return formatError("block " + std::to_string(tensor.block) + " is not one of the " + std::to_string(blockCount) +
                                   " blocks of the plan",
                               tp + "/block");
        CFP_PLAN_ASSIGN(tensor.result, sharding(at(t, "result"), tp + "/result"));
        const Json* operands = nullptr;
        CFP_PLAN_ASSIGN(operands, arrayField(t, tp, "operands", "an array of sharding texts"));
        tensor.operands.reserve(operands->size());
        for (size_t k = 0; k < operands->size(); ++k) {
            TensorSharding s;
            CFP_PLAN_ASSIGN(s, sharding((*operands)[k], childPointer(tp + "/operands", k)));
            tensor.operands.push_back(std::move(s));
        }
        CFP_PLAN_ASSIGN(tensor.ownCollectiveAxes, stringArrayField(t, tp, "own_collective_axes"));
        for (size_t k = 0; k < tensor.ownCollectiveAxes.size(); ++k) {
            const std::string& axis = tensor.ownCollectiveAxes[k];
            if (!m_plan.mesh.findAxis(axis))
                return makeError("plan.sharding", "own collective axis '" + axis + "' is not an axis of the mesh " +
                                                      m_plan.mesh.toString(),
                                 childPointer(tp + "/own_collective_axes", k));
            if (std::find(tensor.ownCollectiveAxes.begin(), tensor.ownCollectiveAxes.begin() + static_cast<ptrdiff_t>(k),
                          axis) != tensor.ownCollectiveAxes.begin() + static_cast<ptrdiff_t>(k))
                return makeError("plan.sharding", "own collective axis '" + axis + "' is listed twice",
                                 childPointer(tp + "/own_collective_axes", k));
        }
        m_plan.tensors.push_back(std::move(tensor));
        if (m_names) m_names->push_back(std::move(name));
    }
    return {};
}

Status PlanReader::readBaselines(const Json& j) {
    const std::string ptr = "/baselines";
    if (!j.is_array()) return kPlanJson.typeError(ptr, "an array of baselines", j);
    m_plan.baselines.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string bp = childPointer(ptr, i);
        const Json& b = j[i];
        CFP_TRY(expectObject(b, bp, {"name", "description", "feasible", "fits", "step_seconds", "memory_per_device", "note"}));
        Baseline baseline;
        CFP_PLAN_ASSIGN(baseline.name, stringField(b, bp, "name"));
        CFP_PLAN_ASSIGN(baseline.description, stringField(b, bp, "description"));
        CFP_PLAN_ASSIGN(baseline.feasible, boolField(b, bp, "feasible"));
        CFP_PLAN_ASSIGN(baseline.fits, boolField(b, bp, "fits"));
        const Json& step = at(b, "step_seconds");
        if (baseline.feasible) {
            CFP_PLAN_ASSIGN(baseline.stepSeconds, asDouble(step, bp + "/step_seconds"));
        } else if (!step.is_null()) {
            return kPlanJson.typeError(bp + "/step_seconds", "null (the baseline is not feasible)", step);
        }
        CFP_PLAN_ASSIGN(baseline.memory, readMemory(at(b, "memory_per_device"), bp + "/memory_per_device"));
        CFP_PLAN_ASSIGN(baseline.note, stringField(b, bp, "note"));
        m_plan.baselines.push_back(std::move(baseline));
    }
    return {};
}

#undef CFP_PLAN_ASSIGN

Error located(Error e, std::string_view origin) {
    if (!origin.empty()) e.message += " (in " + std::string(origin) + ")";
    return e;
}

Error ioError(const Error& inner, const std::string& path) {
    return makeError("plan.io", inner.message + " (" + inner.code + ")", inner.where.empty() ? path : inner.where);
}

OJson headerJson(const Plan& plan, const Graph& graph) {
    OJson doc = OJson::object();
    doc["format"] = std::string(kPlanFormatName);
    doc["version"] = kPlanFormatVersion;

    OJson model = OJson::object();
    model["name"] = text(plan.model);
    model["source"] = text(plan.modelSource);
    model["batch"] = plan.build ? plan.build->batch : 0;
    model["seq"] = plan.build ? plan.build->seq : 0;
    model["dtype"] = plan.build ? std::string(dtypeName(plan.build->dtype)) : std::string();
    model["qkv"] = plan.build ? std::string(plan.build->qkv == QkvLayout::Separate ? "separate" : "fused") : std::string();
    model["ops"] = graph.size();
    if (plan.importTraining) model["train"] = true;
    doc["model"] = std::move(model);

    OJson hardware = OJson::object();
    hardware["id"] = text(plan.hardware);
    hardware["name"] = text(plan.hardwareName);
    hardware["nodes"] = plan.nodes;
    hardware["gpus_per_node"] = plan.gpusPerNode;
    doc["hardware"] = std::move(hardware);

    OJson mesh = OJson::object();
    mesh["text"] = text(plan.mesh.toString());
    OJson axes = OJson::array();
    for (const MeshAxis& a : plan.mesh.axes()) {
        OJson axis = OJson::object();
        axis["name"] = text(a.name);
        axis["size"] = a.size;
        axis["link"] = a.link ? OJson(std::string(linkClassName(*a.link))) : OJson(nullptr);
        axes.push_back(std::move(axis));
    }
    mesh["axes"] = std::move(axes);
    doc["mesh"] = std::move(mesh);

    doc["memory_limit_bytes"] = plan.memoryLimitBytes;
    OJson policy = OJson::object();
    policy["optimizer_sharding"] = plan.policy.optimizerSharding;
    policy["recompute"] = std::string(recomputePolicyName(plan.policy.recompute));
    policy["accumulation_steps"] = plan.policy.accumulation;
    policy["attention"] = std::string(attentionKernelName(plan.policy.attention));
    policy["cross_entropy"] = std::string(crossEntropyKernelName(plan.policy.crossEntropy));
    if (plan.policy.fusion != KernelFusion::Compiled) policy["fusion"] = std::string(kernelFusionName(plan.policy.fusion));
    policy["zero_stage"] = zeroStageOf(plan.policy);
    if (!plan.policy.sequenceParallelAxis.empty()) policy["sequence_parallel"] = plan.policy.sequenceParallelAxis;
    policy["overlap"] = overlapWord(plan.policy);
    policy["bucket_bytes"] = plan.policy.bucketBytes;
    if (plan.mesh.axisIndex(kContextParallelAxis)) policy["context_parallel_comm"] = plan.policy.contextRing ? "p2p" : "all_gather";
    doc["memory_policy"] = std::move(policy);
    doc["pins"] = stringArray(pinTexts(plan.pins));
    doc["predicted_step_seconds"] = number(plan.predictedStepSeconds);
    doc["evaluator_step_seconds"] = number(plan.evaluatorStepSeconds);
    doc["step"] = costJson(plan.step);
    if (plan.simulated.seconds > 0) {
        OJson sim = OJson::object();
        sim["seconds"] = number(plan.simulated.seconds);
        sim["compute_seconds"] = number(plan.simulated.computeSeconds);
        sim["exposed_communication_seconds"] = number(plan.simulated.exposedCommSeconds);
        sim["overlapped_communication_seconds"] = number(plan.simulated.overlappedCommSeconds);
        sim["contention_seconds"] = number(plan.simulated.contentionSeconds);
        sim["gradient_buckets"] = plan.simulated.gradientBuckets;
        sim["weight_gathers"] = plan.simulated.gatherCollectives;
        doc["simulated_step"] = std::move(sim);
    }
    if (plan.pipeline) {
        const PipelinePlan& pl = *plan.pipeline;
        OJson pj = OJson::object();
        pj["stages"] = pl.stages;
        pj["chunks_per_rank"] = pl.chunksPerRank;
        pj["schedule"] = std::string(pipeScheduleName(pl.schedule));
        pj["placement"] = std::string(pipePlacementName(pl.placement));
        if (!pl.actions.empty()) pj["actions"] = pipeActionsCsv(pl.actions);
        if (!pl.scheduleOrigin.empty()) pj["schedule_origin"] = pl.scheduleOrigin;
        pj["micro_batches"] = pl.microBatches;
        pj["seconds"] = number(pl.seconds);
        pj["bubble_seconds"] = number(pl.bubbleSeconds);
        pj["transfer_seconds"] = number(pl.transferSeconds);
        pj["transfer_bytes"] = pl.transferBytes;
        pj["slowest_rank"] = pl.slowestRank;
        pj["fullest_rank"] = pl.fullestRank;
        OJson chunks = OJson::array();
        for (const PipelineChunk& c : pl.chunks) {
            OJson cj = OJson::object();
            cj["first_layer"] = c.firstLayer;
            cj["layers"] = c.layers;
            cj["embedding"] = c.embedding;
            cj["head"] = c.head;
            cj["forward_seconds"] = number(c.forwardSeconds);
            cj["input_grad_seconds"] = number(c.inputGradSeconds);
            cj["weight_grad_seconds"] = number(c.weightGradSeconds);
            cj["activation_bytes"] = c.activationBytes;
            chunks.push_back(std::move(cj));
        }
        pj["chunks"] = std::move(chunks);
        OJson ranks = OJson::array();
        for (const PipelineRank& r : pl.ranks) {
            OJson rj = OJson::object();
            rj["busy_seconds"] = number(r.busySeconds);
            rj["end_seconds"] = number(r.endSeconds);
            rj["tail_seconds"] = number(r.tailSeconds);
            rj["memory"] = memoryJson(r.memory);
            ranks.push_back(std::move(rj));
        }
        pj["ranks"] = std::move(ranks);
        doc["pipeline"] = std::move(pj);
    }
    doc["memory_per_device"] = memoryJson(plan.memory);
    OJson search = OJson::object();
    search["seconds"] = number(plan.searchSeconds);
    search["exact"] = plan.searchExact;
    if (plan.searchCutPairs > 0) {
        search["cut_pairs"] = plan.searchCutPairs;
        search["gap_bound_seconds"] = number(plan.searchGapSeconds);
    }
    doc["search"] = std::move(search);

    OJson segments = OJson::array();
    for (const SegmentPlan& s : plan.segments) {
        OJson seg = OJson::object();
        seg["index"] = s.index;
        seg["type"] = s.type;
        seg["first_block"] = s.firstBlock;
        seg["blocks"] = s.blockCount;
        seg["combination"] = s.combination;
        OJson labels = OJson::array();
        for (int32_t k = 0; k < s.blockCount; ++k) {
            const int64_t b = int64_t{s.firstBlock} + k;
            labels.push_back(b >= 0 && b < static_cast<int64_t>(plan.blocks.size())
                                 ? text(plan.blocks[static_cast<size_t>(b)].label)
                                 : OJson(""));
        }
        seg["labels"] = std::move(labels);
        seg["cost"] = costJson(s.cost);
        seg["memory_bytes"] = s.memoryBytes;
        segments.push_back(std::move(seg));
    }
    doc["segments"] = std::move(segments);

    OJson blocks = OJson::array();
    for (const BlockChoice& b : plan.blocks) {
        OJson block = OJson::object();
        block["block"] = b.block;
        block["strategy"] = b.strategy;
        block["label"] = text(b.label);
        block["pinned"] = b.pinned;
        block["recompute"] = b.recompute;
        blocks.push_back(std::move(block));
    }
    doc["blocks"] = std::move(blocks);

    OJson baselines = OJson::array();
    for (const Baseline& b : plan.baselines) {
        OJson baseline = OJson::object();
        baseline["name"] = text(b.name);
        baseline["description"] = text(b.description);
        baseline["feasible"] = b.feasible;
        baseline["fits"] = b.fits;
        baseline["step_seconds"] = b.feasible ? number(b.stepSeconds) : OJson(nullptr);
        baseline["memory_per_device"] = memoryJson(b.memory);
        baseline["note"] = text(b.note);
        baselines.push_back(std::move(baseline));
    }
    doc["baselines"] = std::move(baselines);

    return doc;
}

}  // namespace

nlohmann::ordered_json planToJson(const Plan& plan, const Graph& graph) {
    OJson doc = headerJson(plan, graph);
    OJson tensors = OJson::array();
    for (const TensorPlan& t : plan.tensors) {
        const bool known = t.op >= 0 && t.op < graph.size();
        OJson tensor = OJson::object();
        tensor["op"] = t.op;
        tensor["name"] = known ? text(graph.op(t.op).name) : OJson("");
        tensor["scope"] = known ? text(graph.op(t.op).scope) : OJson("");
        tensor["block"] = t.block;
        tensor["result"] = t.result.toString();
        OJson operands = OJson::array();
        for (const TensorSharding& s : t.operands) operands.push_back(s.toString());
        tensor["operands"] = std::move(operands);
        tensor["own_collective_axes"] = stringArray(t.ownCollectiveAxes);
        tensors.push_back(std::move(tensor));
    }
    doc["tensors"] = std::move(tensors);
    return doc;
}

std::string planToText(const Plan& plan, const Graph& graph) {
    // The header through the generic printer; the tensor entries (nearly all of a large file)
    // written directly, in the layout printValue would give them.
    const OJson header = headerJson(plan, graph);
    std::string out;
    out.reserve(4096 + plan.tensors.size() * 200);
    out += "{\n";
    for (auto it = header.begin(); it != header.end(); ++it) {
        out += "  ";
        appendString(out, it.key());
        out += ": ";
        printValue(out, it.value(), 2, false);
        out += ",\n";
    }
    out += "  \"tensors\": [";
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& t = plan.tensors[i];
        const bool known = t.op >= 0 && t.op < graph.size();
        out += i ? ",\n    {\"op\": " : "\n    {\"op\": ";
        out += std::to_string(t.op);
        out += ", \"name\": ";
        appendString(out, known ? graph.op(t.op).name : std::string());
        out += ", \"scope\": ";
        appendString(out, known ? graph.op(t.op).scope : std::string());
        out += ", \"block\": ";
        out += std::to_string(t.block);
        out += ", \"result\": ";
        appendString(out, t.result.toString());
        out += ", \"operands\": [";
        for (size_t k = 0; k < t.operands.size(); ++k) {
            if (k) out += ", ";
            appendString(out, t.operands[k].toString());
        }
        out += "], \"own_collective_axes\": [";
        for (size_t k = 0; k < t.ownCollectiveAxes.size(); ++k) {
            if (k) out += ", ";
            appendString(out, t.ownCollectiveAxes[k]);
        }
        out += t.recompute ? "], \"recompute\": true}" : "]}";
    }
    out += plan.tensors.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return out;
}

Result<Plan> planFromJson(std::string_view text, std::string_view origin, std::vector<std::string>* tensorNames) {
    if (tensorNames) tensorNames->clear();
    try {
        auto doc = kPlanJson.parse(text);
        if (!doc) return located(doc.error(), origin);
        Plan plan;
        if (auto s = PlanReader(plan, tensorNames).read(*doc); !s) {
            if (tensorNames) tensorNames->clear();
            return located(s.error(), origin);
        }
        return plan;
    } catch (const std::bad_alloc&) {
        if (tensorNames) tensorNames->clear();
        return located(makeError("plan.format", "out of memory while reading the plan"), origin);
    } catch (const std::exception& ex) {
        // Only a bug can get here (every DOM access is type-checked first); report it, never crash.
        if (tensorNames) tensorNames->clear();
        return located(makeError("plan.format", std::string("internal error while reading the plan: ") + ex.what()), origin);
    }
}

Result<Plan> readPlanFile(const std::string& path, std::vector<std::string>* tensorNames) {
    if (tensorNames) tensorNames->clear();
    auto bytes = readFileLimited(path, kMaxPlanFileBytes);
    if (!bytes) return ioError(bytes.error(), path);
    return planFromJson(*bytes, path, tensorNames);
}

Status checkPlanAgainstGraph(const Plan& plan, const Graph& graph, const std::vector<std::string>* tensorNames) {
    auto mismatch = [](std::string message, std::string where) {
        return makeError("plan.mismatch", std::move(message), std::move(where));
    };
    if (plan.model != graph.name())
        return mismatch("the plan is for model '" + plan.model + "' but the graph is '" + graph.name() + "'", "/model/name");
    if (static_cast<int64_t>(plan.tensors.size()) != graph.size())
        return mismatch("the plan has " + std::to_string(plan.tensors.size()) + " tensor entries but the graph has " +
                            std::to_string(graph.size()) + " ops",
                        "/tensors");
    if (tensorNames && tensorNames->size() != plan.tensors.size())
        return mismatch(std::to_string(tensorNames->size()) + " tensor names for " + std::to_string(plan.tensors.size()) +
                            " tensor entries",
                        "/tensors");
    const int64_t blockCount = static_cast<int64_t>(plan.blocks.size());
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& t = plan.tensors[i];
        const std::string tp = childPointer("/tensors", i);
        const Op& op = graph.op(static_cast<OpId>(i));
        const std::string who = "op " + std::to_string(i) + " '" + op.name + "'";
        if (t.op != static_cast<OpId>(i))
            return mismatch("tensor entry " + std::to_string(i) + " is for op " + std::to_string(t.op) + ", expected " + who,
                            tp + "/op");
        if (tensorNames && (*tensorNames)[i] != op.name)
            return mismatch("tensor entry " + std::to_string(i) + " names '" + (*tensorNames)[i] + "' but the graph's " +
                                who + " differs",
                            tp + "/name");
        if (t.block < -1 || t.block >= blockCount)
            return mismatch(who + ": block " + std::to_string(t.block) + " is not one of the " + std::to_string(blockCount) +
                                " blocks of the plan",
                            tp + "/block");
        if (auto s = validateSharding(t.result, plan.mesh, op.type); !s)
            return mismatch(who + ": result sharding " + t.result.toString() + " does not fit " + op.type.toString() + ": " +
                                s.error().message + " (" + s.error().code + ")",
                            tp + "/result");
        if (t.operands.size() != op.operands.size())
            return mismatch(who + " has " + std::to_string(op.operands.size()) + " operands but the plan gives " +
                                std::to_string(t.operands.size()) + " operand shardings",
                            tp + "/operands");
        for (size_t k = 0; k < t.operands.size(); ++k) {
            const Op& operand = graph.op(op.operands[k]);
            if (auto s = validateSharding(t.operands[k], plan.mesh, operand.type); !s)
                return mismatch(who + ": operand " + std::to_string(k) + " ('" + operand.name + "') sharding " +
                                    t.operands[k].toString() + " does not fit " + operand.type.toString() + ": " +
                                    s.error().message + " (" + s.error().code + ")",
                                childPointer(tp + "/operands", k));
        }
        for (size_t k = 0; k < t.ownCollectiveAxes.size(); ++k)
            if (!plan.mesh.findAxis(t.ownCollectiveAxes[k]))
                return mismatch(who + ": own collective axis '" + t.ownCollectiveAxes[k] + "' is not an axis of the mesh " +
                                    plan.mesh.toString(),
                                childPointer(tp + "/own_collective_axes", k));
    }
    return {};
}

Status writePlanFile(const std::string& path, const Plan& plan, const Graph& graph) {
    try {
        CFP_TRY(checkPlanAgainstGraph(plan, graph));
        const std::string bytes = planToText(plan, graph);
        // Never write a file that would not read back.
        if (auto back = planFromJson(bytes, {}); !back)
            return makeError(back.error().code, "the plan would not read back: " + back.error().message, back.error().where);
        if (auto s = writeFileAtomically(path, bytes); !s) return ioError(s.error(), path);
        return {};
    } catch (const std::bad_alloc&) {
        return makeError("plan.io", "out of memory while writing the plan", path);
    }
}

}  // namespace cfp
