#include "hardware/hardware.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "hardware/builtin_specs.h"
#include "io/atomic_file.h"
#include "io/strict_json.h"
#include "sharding/mesh.h"

namespace cfp {

namespace {

using Json = nlohmann::json;

// A spec is a page of numbers; anything much larger is not one.
constexpr int64_t kMaxSpecFileBytes = int64_t{1} << 20;

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
constexpr double kFlopsPerTflops = 1e12;
constexpr double kBytesPerTb = 1e12;
constexpr double kBytesPerGb = 1e9;
constexpr double kMicrosecondsPerSecond = 1e6;
// memory_gib above this would overflow int64 bytes; no GPU is within a factor 1000 of it.
constexpr double kMaxMemoryGib = 1024.0 * 1024.0;

constexpr std::string_view kVectorKey = "vector_f32";

std::string numberText(double v) {
    // Whole numbers without a trailing ".0" ("989", not "989.0"), as a person writes them.
    if (std::abs(v) < 1e15 && v == std::trunc(v)) return std::to_string(static_cast<int64_t>(v));
    return Json(v).dump();  // shortest text that reads back to the same double
}

// ---------------------------------------------------------------------------------------------
// Text to DOM (io/strict_json.h). Comments are allowed (the built-in specs cite their sources next
// to the numbers); a key repeated in one object is an error, since nlohmann's own DOM parser would
// silently keep the last one and hide the typo. Every error but a syntax error is hardware.format.

constexpr std::string_view kSyntaxCode = "hardware.syntax";
constexpr StrictJson kSpecJson = StrictJson::twoCodes(kSyntaxCode, "hardware.format", /*comments=*/true);

// Names the spec an error is in: a syntax error in `where` ("<origin>:<line>:<column>", or just
// the origin), any other error, whose `where` is a JSON Pointer, in the message.
Error located(Error e, const std::string& origin) {
    if (e.code == kSyntaxCode) e.where = e.where.empty() ? origin : origin + ":" + e.where;
    else e.message += " (in " + origin + ")";
    return e;
}

// ---------------------------------------------------------------------------------------------
// DOM to spec.

size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

#define CFP_HW_ASSIGN(lhs, expr)                            \
    do {                                                    \
        auto cfp_hw_result_ = (expr);                       \
        if (!cfp_hw_result_) return cfp_hw_result_.error(); \
        lhs = std::move(cfp_hw_result_.value());            \
    } while (0)

enum class Range {
    Positive,     // > 0
    NonNegative,  // ≥ 0
    Fraction,     // (0, 1]
};

// Reads one spec document. Every error is hardware.format with the JSON Pointer of the bad value
// as `where`; parseHardware names the origin in the message.
class SpecReader {
public:
    Result<HardwareSpec> read(const Json& doc) {
        HardwareSpec spec;
        if (!doc.is_object()) return kSpecJson.typeError("", "an object", doc);
        std::string format;
        CFP_HW_ASSIGN(format, requiredString(doc, "", "format"));
        if (format != kHardwareFormatName)
            return fail("/format", "format is '" + format + "', expected '" + std::string(kHardwareFormatName) + "'");
        int64_t version = 0;
        CFP_HW_ASSIGN(version, requiredInt(doc, "", "version"));
        if (version != kHardwareFormatVersion)
            return fail("/version", "version " + std::to_string(version) + " is not supported (this reader knows version " +
                                        std::to_string(kHardwareFormatVersion) + ")");
        // After format and version, so that another kind of document (a graph, a model config) is
        // named as such rather than reported by its first unknown field.
        static constexpr std::string_view kTopFields[] = {
            "format", "version", "name", "sources", "memory_gib", "memory_reserve_gib", "hbm_tb_per_s", "peak_tflops",
            "gemm_efficiency", "gemm_waves", "gemm_unaligned_efficiency", "flash_attention", "flash_attention_2", "hbm_efficiency", "kernel_launch_us", "overlap_compute_slowdown", "gpus_per_node", "intra_node",
            "inter_node"};
        CFP_TRY(checkKeys(doc, "", kTopFields));

        CFP_HW_ASSIGN(spec.name, requiredString(doc, "", "name"));
        if (spec.name.empty()) return fail("/name", "name is empty");
        if (auto it = doc.find("sources"); it != doc.end()) CFP_HW_ASSIGN(spec.sources, stringList(*it, "/sources"));

        double memoryGib = 0;
        CFP_HW_ASSIGN(memoryGib, requiredNumber(doc, "", "memory_gib", Range::Positive));
        if (memoryGib > kMaxMemoryGib)
            return fail("/memory_gib", "must be at most " + numberText(kMaxMemoryGib) + " GiB, got " + doc.at("memory_gib").dump());
        spec.memoryBytes = std::llround(memoryGib * kBytesPerGib);
        spec.memoryReserveBytes = defaultMemoryReserveBytes(spec.memoryBytes);
        if (doc.contains("memory_reserve_gib")) {
            double reserveGib = 0;
            CFP_HW_ASSIGN(reserveGib, requiredNumber(doc, "", "memory_reserve_gib", Range::NonNegative));
            if (reserveGib >= memoryGib)
                return fail("/memory_reserve_gib", "must be less than memory_gib (" + numberText(memoryGib) + "), got " +
                                                       doc.at("memory_reserve_gib").dump());
            spec.memoryReserveBytes = std::llround(reserveGib * kBytesPerGib);
        }

        double hbmTbPerSecond = 0;
        CFP_HW_ASSIGN(hbmTbPerSecond, requiredNumber(doc, "", "hbm_tb_per_s", Range::Positive));
        spec.hbmBytesPerSecond = hbmTbPerSecond * kBytesPerTb;

        CFP_TRY(readPeakFlops(doc, spec));

        if (doc.contains("gemm_efficiency"))
            CFP_HW_ASSIGN(spec.gemmEfficiency, requiredNumber(doc, "", "gemm_efficiency", Range::Fraction));
        if (doc.contains("gemm_waves")) CFP_TRY(readGemmWaves(doc.at("gemm_waves"), "/gemm_waves", spec));
        if (doc.contains("flash_attention")) CFP_HW_ASSIGN(spec.flashAttention, attentionCurves(doc.at("flash_attention"), "/flash_attention"));
        if (doc.contains("flash_attention_2"))
            CFP_HW_ASSIGN(spec.flashAttention2, attentionCurves(doc.at("flash_attention_2"), "/flash_attention_2"));
        if (doc.contains("gemm_unaligned_efficiency"))
            CFP_HW_ASSIGN(spec.gemmUnalignedEfficiency, requiredNumber(doc, "", "gemm_unaligned_efficiency", Range::Fraction));
        if (doc.contains("hbm_efficiency"))
            CFP_HW_ASSIGN(spec.hbmEfficiency, requiredNumber(doc, "", "hbm_efficiency", Range::Fraction));
        if (doc.contains("kernel_launch_us")) {
            double launchUs = 0;
            CFP_HW_ASSIGN(launchUs, requiredNumber(doc, "", "kernel_launch_us", Range::NonNegative));
            spec.kernelLaunchSeconds = launchUs / kMicrosecondsPerSecond;
        }

        if (doc.contains("overlap_compute_slowdown"))
            CFP_HW_ASSIGN(spec.overlapSlowdown, requiredNumber(doc, "", "overlap_compute_slowdown", Range::NonNegative));

        CFP_HW_ASSIGN(spec.gpusPerNode, requiredInt(doc, "", "gpus_per_node"));
        if (spec.gpusPerNode < 1 || spec.gpusPerNode > kMaxMeshDevices)
            return fail("/gpus_per_node", "must be between 1 and " + std::to_string(kMaxMeshDevices) + ", got " +
                                              std::to_string(spec.gpusPerNode));

        CFP_HW_ASSIGN(spec.intraNode, link(doc, "intra_node"));
        CFP_HW_ASSIGN(spec.interNode, link(doc, "inter_node"));
        return spec;
    }

private:
    Error fail(const std::string& ptr, const std::string& detail) const {
        return makeError("hardware.format", detail, ptr);
    }

    Status checkKeys(const Json& obj, const std::string& ptr, std::span<const std::string_view> allowed) const {
        const std::string* key = firstUnknownKey(obj, allowed);
        if (!key) return {};
        Error e = kSpecJson.unknownField(ptr, *key);
        // A near miss is most likely a typo or a unit mix-up ("memory_gb" for "memory_gib").
        std::string_view best;
        size_t bestDistance = 3;
        for (std::string_view candidate : allowed) {
            const size_t d = editDistance(*key, candidate);
            if (d < bestDistance) {
                bestDistance = d;
                best = candidate;
            }
        }
        if (!best.empty()) e.message += "; did you mean '" + std::string(best) + "'?";
        return e;
    }

    Result<std::string> requiredString(const Json& obj, const std::string& ptr, std::string_view key) const {
        const Json* j = nullptr;
        CFP_HW_ASSIGN(j, kSpecJson.member(obj, ptr, key));
        return kSpecJson.string(*j, childPointer(ptr, key));
    }

    Result<int64_t> requiredInt(const Json& obj, const std::string& ptr, std::string_view key) const {
        const Json* j = nullptr;
        CFP_HW_ASSIGN(j, kSpecJson.member(obj, ptr, key));
        return kSpecJson.int64(*j, childPointer(ptr, key));
    }

    Result<bool> requiredBool(const Json& obj, const std::string& ptr, std::string_view key) const {
        const Json* j = nullptr;
        CFP_HW_ASSIGN(j, kSpecJson.member(obj, ptr, key));
        if (!j->is_boolean()) return kSpecJson.typeError(childPointer(ptr, key), "true or false", *j);
        return j->get<bool>();
    }

    Result<double> number(const Json& j, const std::string& at, Range range) const {
        if (!j.is_number()) return kSpecJson.typeError(at, "a number", j);
        const double v = j.get<double>();
        // JSON has no infinity and the parser rejects literals that overflow (1e999); checked here
        // too, since an infinite rate would silently zero every time the cost model computes.
        if (!std::isfinite(v)) return fail(at, "must be finite, got " + j.dump());
        switch (range) {
            case Range::Positive:
                if (!(v > 0)) return fail(at, "must be > 0, got " + j.dump());
                break;
            case Range::NonNegative:
                if (!(v >= 0)) return fail(at, "must be >= 0, got " + j.dump());
                break;
            case Range::Fraction:
                if (!(v > 0 && v <= 1)) return fail(at, "must be in (0, 1], got " + j.dump());
                break;
        }
        return v;
    }

    Result<double> requiredNumber(const Json& obj, const std::string& ptr, std::string_view key, Range range) const {
        const Json* j = nullptr;
        CFP_HW_ASSIGN(j, kSpecJson.member(obj, ptr, key));
        return number(*j, childPointer(ptr, key), range);
    }

    Result<std::vector<std::string>> stringList(const Json& j, const std::string& ptr) const {
        if (!j.is_array()) return kSpecJson.typeError(ptr, "an array of strings", j);
        std::vector<std::string> out;
        for (size_t i = 0; i < j.size(); ++i) {
            if (!j[i].is_string()) return kSpecJson.typeError(childPointer(ptr, i), "a string", j[i]);
            out.push_back(j[i].get<std::string>());
        }
        return out;
    }

    Status readPeakFlops(const Json& doc, HardwareSpec& spec) const {
        const Json* peak = nullptr;
        CFP_HW_ASSIGN(peak, kSpecJson.member(doc, "", "peak_tflops"));
        const std::string ptr = "/peak_tflops";
        if (!peak->is_object()) return kSpecJson.typeError(ptr, "an object", *peak);
        for (auto it = peak->begin(); it != peak->end(); ++it) {
            const std::string& key = it.key();
            if (key == kVectorKey) continue;
            const auto dtype = parseDType(key);
            if (!dtype || !isFloating(*dtype))
                return fail(childPointer(ptr, key), "unknown dtype '" + key +
                                                        "' (expected bf16, f16, f32, f64 or vector_f32)");
            double tflops = 0;
            CFP_HW_ASSIGN(tflops, number(it.value(), childPointer(ptr, key), Range::Positive));
            spec.peakFlops[*dtype] = tflops * kFlopsPerTflops;
        }
        double vectorTflops = 0;
        CFP_HW_ASSIGN(vectorTflops, requiredNumber(*peak, ptr, kVectorKey, Range::Positive));
        spec.vectorFlops = vectorTflops * kFlopsPerTflops;
        return {};
    }

    Result<LinkSpec> link(const Json& doc, std::string_view key) const {
        const Json* obj = nullptr;
        CFP_HW_ASSIGN(obj, kSpecJson.member(doc, "", key));
        const std::string ptr = childPointer("", key);
        if (!obj->is_object()) return kSpecJson.typeError(ptr, "an object", *obj);
        static constexpr std::string_view kLinkFields[] = {"name", "bandwidth_gb_per_s", "latency_us", "supports_tree", "bus_bandwidth_curve"};
        CFP_TRY(checkKeys(*obj, ptr, kLinkFields));

        LinkSpec out;
        CFP_HW_ASSIGN(out.name, requiredString(*obj, ptr, "name"));
        if (out.name.empty()) return fail(ptr + "/name", "name is empty");
        double gbPerSecond = 0;
        CFP_HW_ASSIGN(gbPerSecond, requiredNumber(*obj, ptr, "bandwidth_gb_per_s", Range::Positive));
        out.bytesPerSecond = gbPerSecond * kBytesPerGb;
        double latencyUs = 0;
        CFP_HW_ASSIGN(latencyUs, requiredNumber(*obj, ptr, "latency_us", Range::NonNegative));
        out.latencySeconds = latencyUs / kMicrosecondsPerSecond;
        CFP_HW_ASSIGN(out.supportsTree, requiredBool(*obj, ptr, "supports_tree"));
        if (obj->contains("bus_bandwidth_curve")) CFP_HW_ASSIGN(out.busCurve, busCurve(obj->at("bus_bandwidth_curve"), ptr + "/bus_bandwidth_curve"));
        return out;
    }

    // {"sm_count": N, "tiles": [[rows, columns], …]}
    Status readGemmWaves(const Json& w, const std::string& ptr, HardwareSpec& spec) const {
        if (!w.is_object()) return kSpecJson.typeError(ptr, "an object", w);
        static constexpr std::string_view kWaveFields[] = {"sm_count", "tiles"};
        CFP_TRY(checkKeys(w, ptr, kWaveFields));
        int64_t sms = 0;
        CFP_HW_ASSIGN(sms, requiredInt(w, ptr, "sm_count"));
        if (sms < 1 || sms > 100000) return fail(ptr + "/sm_count", "must be between 1 and 100000, got " + std::to_string(sms));
        spec.smCount = static_cast<int>(sms);
        const Json* tiles = nullptr;
        CFP_HW_ASSIGN(tiles, kSpecJson.member(w, ptr, "tiles"));
        const std::string tilesPtr = ptr + "/tiles";
        if (!tiles->is_array() || tiles->empty()) return kSpecJson.typeError(tilesPtr, "a non-empty array of [rows, columns] pairs", *tiles);
        spec.gemmTiles.clear();
        for (size_t i = 0; i < tiles->size(); ++i) {
            const Json& t = (*tiles)[i];
            const std::string at = childPointer(tilesPtr, i);
            if (!t.is_array() || t.size() != 2) return kSpecJson.typeError(at, "a [rows, columns] pair", t);
            for (size_t k = 0; k < 2; ++k)
                if (!t[k].is_number_integer() || t[k].get<int64_t>() < 1 || t[k].get<int64_t>() > 4096)
                    return fail(at + "/" + std::to_string(k), "must be an integer between 1 and 4096, got " + t[k].dump());
            spec.gemmTiles.emplace_back(t[0].get<int>(), t[1].get<int>());
        }
        return {};
    }

    // A non-empty array of [x, y] pairs, x ascending and positive, y in `yRange` (the bus-bandwidth
    // and fused-attention curves). `pair` names the pair in errors ("[bytes, GB/s]"), `xs` its x
    // ("message sizes").
    Result<std::vector<std::pair<double, double>>> pairCurve(const Json& points, const std::string& ptr, const std::string& pair,
                                                             const std::string& xs, Range yRange) const {
        if (!points.is_array() || points.empty()) return kSpecJson.typeError(ptr, "a non-empty array of " + pair + " pairs", points);
        std::vector<std::pair<double, double>> out;
        for (size_t i = 0; i < points.size(); ++i) {
            const Json& p = points[i];
            const std::string at = childPointer(ptr, i);
            if (!p.is_array() || p.size() != 2) return kSpecJson.typeError(at, "a " + pair + " pair", p);
            double x = 0, y = 0;
            CFP_HW_ASSIGN(x, number(p[0], at + "/0", Range::Positive));
            CFP_HW_ASSIGN(y, number(p[1], at + "/1", yRange));
            if (!out.empty() && x <= out.back().first)
                return fail(at + "/0", xs + " must ascend, got " + p[0].dump() + " after " + numberText(out.back().first));
            out.emplace_back(x, y);
        }
        return out;
    }

    // {"forward": [[seq, efficiency], …], "backward": …, "causal_forward": …, "causal_backward": …}
    Result<AttentionCurves> attentionCurves(const Json& c, const std::string& ptr) const {
        if (!c.is_object()) return kSpecJson.typeError(ptr, "an object", c);
        static constexpr std::string_view kCurveFields[] = {"forward", "backward", "causal_forward", "causal_backward"};
        CFP_TRY(checkKeys(c, ptr, kCurveFields));
        AttentionCurves out;
        std::vector<std::pair<double, double>>* curves[] = {&out.forward, &out.backward, &out.causalForward, &out.causalBackward};
        for (size_t f = 0; f < 4; ++f) {
            const Json* points = nullptr;
            const std::string name(kCurveFields[f]);
            CFP_HW_ASSIGN(points, kSpecJson.member(c, ptr, name));
            CFP_HW_ASSIGN(*curves[f], pairCurve(*points, ptr + "/" + name, "[sequence, efficiency]", "sequence lengths", Range::Fraction));
        }
        return out;
    }

    // {"points": [[bytes, GB/s], …] (sizes ascending), "floor_us": …, "other_collectives_peak_gb_per_s": … (optional)}
    Result<BusCurve> busCurve(const Json& c, const std::string& ptr) const {
        if (!c.is_object()) return kSpecJson.typeError(ptr, "an object", c);
        static constexpr std::string_view kCurveFields[] = {"devices", "points", "floor_us", "other_collectives_peak_gb_per_s"};
        CFP_TRY(checkKeys(c, ptr, kCurveFields));
        BusCurve out;
        CFP_HW_ASSIGN(out.devices, requiredInt(c, ptr, "devices"));
        if (out.devices < 2) return fail(ptr + "/devices", "must be at least 2, got " + std::to_string(out.devices));
        const Json* points = nullptr;
        CFP_HW_ASSIGN(points, kSpecJson.member(c, ptr, "points"));
        CFP_HW_ASSIGN(out.points, pairCurve(*points, ptr + "/points", "[bytes, GB/s]", "message sizes", Range::Positive));
        for (auto& p : out.points) p.second *= kBytesPerGb;
        double floorUs = 0;
        CFP_HW_ASSIGN(floorUs, requiredNumber(c, ptr, "floor_us", Range::NonNegative));
        out.floorSeconds = floorUs / kMicrosecondsPerSecond;
        if (c.contains("other_collectives_peak_gb_per_s")) {
            double peak = 0;
            CFP_HW_ASSIGN(peak, requiredNumber(c, ptr, "other_collectives_peak_gb_per_s", Range::Positive));
            out.otherPeakBytesPerSecond = peak * kBytesPerGb;
        }
        return out;
    }
};

#undef CFP_HW_ASSIGN

// ---------------------------------------------------------------------------------------------
// Names and files.

constexpr std::string_view kBuiltinPrefix = "builtin:";

std::string idFromOrigin(std::string_view origin) {
    if (origin.substr(0, kBuiltinPrefix.size()) == kBuiltinPrefix) return std::string(origin.substr(kBuiltinPrefix.size()));
    std::string stem = std::filesystem::path(std::string(origin)).stem().string();
    return stem.empty() ? std::string(origin) : stem;
}

bool looksLikePath(std::string_view nameOrPath) {
    constexpr std::string_view kExtension = ".json";
    return nameOrPath.find('/') != std::string_view::npos ||
           (nameOrPath.size() >= kExtension.size() &&
            nameOrPath.substr(nameOrPath.size() - kExtension.size()) == kExtension);
}

std::string knownNamesText() {
    std::string out;
    for (const std::string& name : hardwareNames()) {
        if (!out.empty()) out += ", ";
        out += name;
    }
    return out;
}

}  // namespace

double HardwareSpec::peakFlopsFor(DType dtype) const {
    if (auto it = peakFlops.find(dtype); it != peakFlops.end()) return it->second;
    if (auto it = peakFlops.find(DType::F32); it != peakFlops.end()) return it->second;
    return vectorFlops;
}

std::vector<std::string> hardwareNames() {
    std::vector<std::string> names;
    for (const auto& spec : detail::embeddedHardwareSpecs()) names.emplace_back(spec.id);
    std::sort(names.begin(), names.end());
    return names;
}

std::optional<std::string_view> builtinHardwareJson(std::string_view id) {
    for (const auto& spec : detail::embeddedHardwareSpecs())
        if (spec.id == id) return spec.json;
    return std::nullopt;
}

Result<HardwareSpec> parseHardware(std::string_view jsonText, std::string_view origin) {
    const std::string originText(origin);
    try {
        auto doc = kSpecJson.parse(jsonText);
        if (!doc) return located(doc.error(), originText);
        auto spec = SpecReader().read(*doc);
        if (!spec) return located(spec.error(), originText);
        spec->id = idFromOrigin(origin);
        return spec;
    } catch (const std::bad_alloc&) {
        return makeError("hardware.io", "out of memory while reading the hardware spec", originText);
    } catch (const std::exception& ex) {
        // Only a bug can get here (every DOM access is type-checked first); report it, never crash.
        return makeError("hardware.format", std::string("internal error while reading the hardware spec: ") + ex.what(),
                         originText);
    }
}

Result<HardwareSpec> loadHardware(std::string_view nameOrPath) {
    const std::string name(nameOrPath);
    if (!looksLikePath(nameOrPath)) {
        if (auto text = builtinHardwareJson(nameOrPath)) return parseHardware(*text, std::string(kBuiltinPrefix) + name);
        return makeError("hardware.unknown",
                         "unknown hardware '" + name + "'; built-in specs are " + knownNamesText() +
                             ", or give the path of a JSON spec file (docs/hardware-format.md)");
    }
    std::error_code ec;
    const bool exists = std::filesystem::exists(std::filesystem::path(name), ec);
    if (!ec && !exists)
        return makeError("hardware.unknown",
                         "no hardware spec file '" + name + "'; built-in specs are " + knownNamesText(), name);
    auto text = readFileLimited(name, kMaxSpecFileBytes);
    // io.open / io.read / io.too_large: one code for "exists but cannot be read", the reason kept.
    if (!text) return makeError("hardware.io", text.error().message, name);
    return parseHardware(*text, name);
}

namespace {

std::string busCurveText(const BusCurve& c) {
    if (c.empty()) return {};
    std::string out = ",\n    \"bus_bandwidth_curve\": {\n      \"devices\": " + std::to_string(c.devices) + ",\n      \"points\": [";
    for (size_t i = 0; i < c.points.size(); ++i)
        out += (i ? ", [" : "[") + numberText(c.points[i].first) + ", " + numberText(c.points[i].second / kBytesPerGb) + "]";
    out += "],\n      \"floor_us\": " + numberText(c.floorSeconds * kMicrosecondsPerSecond);
    if (c.otherPeakBytesPerSecond > 0) out += ",\n      \"other_collectives_peak_gb_per_s\": " + numberText(c.otherPeakBytesPerSecond / kBytesPerGb);
    return out + "\n    }";
}

std::string attentionCurvesText(const char* key, const AttentionCurves& c) {
    if (c.empty()) return {};
    auto curve = [](const std::vector<std::pair<double, double>>& points) {
        std::string out = "[";
        for (size_t i = 0; i < points.size(); ++i) out += (i ? ", [" : "[") + numberText(points[i].first) + ", " + numberText(points[i].second) + "]";
        return out + "]";
    };
    return std::string("  \"") + key + "\": {\n    \"forward\": " + curve(c.forward) + ",\n    \"backward\": " + curve(c.backward) +
           ",\n    \"causal_forward\": " + curve(c.causalForward) + ",\n    \"causal_backward\": " + curve(c.causalBackward) + "\n  },\n";
}

}  // namespace

std::string writeHardwareJson(const HardwareSpec& spec) {
    auto str = [](std::string_view s) { return Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace); };
    auto linkText = [&](const LinkSpec& link) {
        return "{\n    \"name\": " + str(link.name) +
               ",\n    \"bandwidth_gb_per_s\": " + numberText(link.bytesPerSecond / kBytesPerGb) +
               ",\n    \"latency_us\": " + numberText(link.latencySeconds * kMicrosecondsPerSecond) +
               ",\n    \"supports_tree\": " + (link.supportsTree ? "true" : "false") + busCurveText(link.busCurve) + "\n  }";
    };

    std::string out = "{\n";
    out += "  \"format\": " + str(kHardwareFormatName) + ",\n";
    out += "  \"version\": " + std::to_string(kHardwareFormatVersion) + ",\n";
    out += "  \"name\": " + str(spec.name) + ",\n";
    out += "  \"sources\": [";
    for (size_t i = 0; i < spec.sources.size(); ++i) out += (i ? ",\n    " : "\n    ") + str(spec.sources[i]);
    out += spec.sources.empty() ? "],\n" : "\n  ],\n";
    out += "  \"memory_gib\": " + numberText(static_cast<double>(spec.memoryBytes) / kBytesPerGib) + ",\n";
    out += "  \"memory_reserve_gib\": " + numberText(static_cast<double>(spec.memoryReserveBytes) / kBytesPerGib) + ",\n";
    out += "  \"hbm_tb_per_s\": " + numberText(spec.hbmBytesPerSecond / kBytesPerTb) + ",\n";
    out += "  \"peak_tflops\": {";
    std::string sep = "\n    ";
    for (const auto& [dtype, flops] : spec.peakFlops) {
        out += sep + str(dtypeName(dtype)) + ": " + numberText(flops / kFlopsPerTflops);
        sep = ",\n    ";
    }
    out += sep + str(kVectorKey) + ": " + numberText(spec.vectorFlops / kFlopsPerTflops) + "\n  },\n";
    out += "  \"gemm_efficiency\": " + numberText(spec.gemmEfficiency) + ",\n";
    if (spec.smCount > 0 && !spec.gemmTiles.empty()) {
        out += "  \"gemm_waves\": {\"sm_count\": " + std::to_string(spec.smCount) + ", \"tiles\": [";
        for (size_t i = 0; i < spec.gemmTiles.size(); ++i)
            out += (i ? ", [" : "[") + std::to_string(spec.gemmTiles[i].first) + ", " + std::to_string(spec.gemmTiles[i].second) + "]";
        out += "]},\n";
    }
    if (spec.gemmUnalignedEfficiency > 0)
        out += "  \"gemm_unaligned_efficiency\": " + numberText(spec.gemmUnalignedEfficiency) + ",\n";
    out += attentionCurvesText("flash_attention", spec.flashAttention);
    out += attentionCurvesText("flash_attention_2", spec.flashAttention2);
    out += "  \"hbm_efficiency\": " + numberText(spec.hbmEfficiency) + ",\n";
    out += "  \"kernel_launch_us\": " + numberText(spec.kernelLaunchSeconds * kMicrosecondsPerSecond) + ",\n";
    out += "  \"gpus_per_node\": " + std::to_string(spec.gpusPerNode) + ",\n";
    out += "  \"intra_node\": " + linkText(spec.intraNode) + ",\n";
    out += "  \"inter_node\": " + linkText(spec.interNode) + "\n";
    out += "}\n";
    return out;
}

std::string Cluster::toString() const {
    return std::to_string(nodes) + " × " + std::to_string(hardware.gpusPerNode) + " " + hardware.name;
}

Result<Cluster> makeCluster(HardwareSpec hardware, int64_t nodes) {
    if (hardware.gpusPerNode < 1)
        return makeError("cluster.bad_nodes", "hardware '" + hardware.id + "' has " + std::to_string(hardware.gpusPerNode) +
                                                  " GPUs per node; it needs at least 1");
    if (nodes < 1) return makeError("cluster.bad_nodes", "the node count must be at least 1, got " + std::to_string(nodes));
    if (nodes > kMaxMeshDevices / hardware.gpusPerNode)
        return makeError("cluster.bad_nodes", std::to_string(nodes) + " nodes of " + std::to_string(hardware.gpusPerNode) +
                                                  " GPUs are more than the limit of " + std::to_string(kMaxMeshDevices) +
                                                  " devices");
    Cluster cluster;
    cluster.hardware = std::move(hardware);
    cluster.nodes = nodes;
    return cluster;
}

int64_t defaultMemoryReserveBytes(int64_t memoryBytes) {
    constexpr int64_t kFixed = int64_t{2} << 30;  // CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers
    return std::min(memoryBytes / 2, kFixed + memoryBytes / 20);
}

}  // namespace cfp
