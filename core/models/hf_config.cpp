// Hugging Face config.json reader. Every nlohmann exception is caught here; errors carry the file
// name and the JSON Pointer of the offending field.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/strict_json.h"

#include "models/models.h"

namespace cfp {

namespace {

using nlohmann::json;

// Sizes above this are rejected while reading (before any validation or building): no published
// model has a dimension near 2^26, and keeping them small keeps every later product in range.
constexpr int64_t kMaxFieldValue = int64_t{1} << 26;

enum class Need { Required, Optional };

class Reader {
public:
    Reader(const json& root, std::string file) : m_root(root), m_file(std::move(file)) {}

    Error error(std::string code, std::string message, const std::string& key) const {
        return makeError(std::move(code), std::move(message), m_file + ":/" + key);
    }

    bool has(const std::string& key) const { return m_root.contains(key) && !m_root.at(key).is_null(); }

    // A positive integer field (integral JSON floats such as 4096.0 are accepted). `fallback` is
    // returned for an absent or null optional field.
    Result<int64_t> positiveInt(const std::string& key, Need need, int64_t fallback = 0) {
        if (!has(key)) {
            if (need == Need::Optional) return fallback;
            return error("config.missing_field", "missing required field", key);
        }
        const json& v = m_root.at(key);
        int64_t value = 0;
        if (v.is_number_integer()) {
            if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
                return error("config.too_large", "value is absurdly large", key);
            value = v.get<int64_t>();
        } else if (v.is_number_float()) {
            const double d = v.get<double>();
            if (!std::isfinite(d) || d != std::floor(d))
                return error("config.bad_field", "expected a positive integer", key);
            if (std::fabs(d) > static_cast<double>(kMaxFieldValue))
                return error("config.too_large", "value " + v.dump() + " is absurdly large", key);
            value = static_cast<int64_t>(d);
        } else {
            return error("config.bad_field", "expected a positive integer, got " + std::string(v.type_name()), key);
        }
        if (value <= 0) return error("config.bad_field", "expected a positive integer, got " + v.dump(), key);
        if (value > kMaxFieldValue)
            return error("config.too_large", "value " + v.dump() + " is absurdly large (limit " +
                                                 std::to_string(kMaxFieldValue) + ")", key);
        return value;
    }

    Result<double> positiveNumber(const std::string& key, double fallback) {
        if (!has(key)) return fallback;
        const json& v = m_root.at(key);
        if (!v.is_number()) return error("config.bad_field", "expected a number, got " + std::string(v.type_name()), key);
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0.0) return error("config.bad_field", "expected a non-negative number", key);
        return d;
    }

    Result<bool> boolean(const std::string& key, bool fallback) {
        if (!has(key)) return fallback;
        const json& v = m_root.at(key);
        if (!v.is_boolean()) return error("config.bad_field", "expected true or false, got " + std::string(v.type_name()), key);
        return v.get<bool>();
    }

    // Maps a ModelConfig field (validateConfig's error location) to the JSON key it came from.
    void source(const std::string& field, const std::string& key) { m_sources[field] = key; }
    std::string keyFor(const std::string& field) const {
        auto it = m_sources.find(field);
        return it == m_sources.end() ? std::string() : it->second;
    }
    const std::string& file() const { return m_file; }

private:
    const json& m_root;
    std::string m_file;
    std::map<std::string, std::string> m_sources;
};

#define CFP_ASSIGN(lhs, expr)                         \
    do {                                              \
        auto cfp_assign_result_ = (expr);             \
        if (!cfp_assign_result_) return cfp_assign_result_.error(); \
        lhs = *cfp_assign_result_;                    \
    } while (0)

enum class Kind { Gpt2, GptNeoX, Llama, Mixtral };

Result<Kind> detectKind(const json& root, const std::string& file) {
    static const std::map<std::string, Kind> kByType = {
        {"gpt2", Kind::Gpt2}, {"gpt_neox", Kind::GptNeoX}, {"llama", Kind::Llama},
        {"mistral", Kind::Llama}, {"mixtral", Kind::Mixtral},
    };
    static const std::map<std::string, Kind> kByArchitecture = {
        {"GPT2LMHeadModel", Kind::Gpt2}, {"GPTNeoXForCausalLM", Kind::GptNeoX},
        {"LlamaForCausalLM", Kind::Llama}, {"MistralForCausalLM", Kind::Llama},
        {"MixtralForCausalLM", Kind::Mixtral},
    };
    if (root.contains("model_type")) {
        const json& t = root.at("model_type");
        if (!t.is_string())
            return makeError("config.bad_field", "expected a string", file + ":/model_type");
        auto it = kByType.find(t.get<std::string>());
        if (it != kByType.end()) return it->second;
        return makeError("config.unknown_model_type",
                         "model_type '" + t.get<std::string>() + "' is not supported (gpt2, gpt_neox, llama, mistral, mixtral)",
                         file + ":/model_type");
    }
    if (root.contains("architectures")) {
        const json& a = root.at("architectures");
        if (!a.is_array()) return makeError("config.bad_field", "expected an array of strings", file + ":/architectures");
        for (size_t i = 0; i < a.size(); ++i) {
            if (!a[i].is_string())
                return makeError("config.bad_field", "expected a string", file + ":/architectures/" + std::to_string(i));
            auto it = kByArchitecture.find(a[i].get<std::string>());
            if (it != kByArchitecture.end()) return it->second;
        }
        return makeError("config.unknown_model_type", "no supported entry in architectures", file + ":/architectures");
    }
    return makeError("config.missing_field", "missing required field (neither model_type nor architectures)",
                     file + ":/model_type");
}

Result<ModelConfig> readGpt2(Reader& r, ModelConfig c) {
    c.family = ModelFamily::Gpt;
    c.positions = PositionEncoding::Learned;
    CFP_ASSIGN(c.hiddenSize, r.positiveInt("n_embd", Need::Required));
    CFP_ASSIGN(c.numLayers, r.positiveInt("n_layer", Need::Required));
    CFP_ASSIGN(c.numHeads, r.positiveInt("n_head", Need::Required));
    CFP_ASSIGN(c.maxPositions, r.positiveInt("n_positions", Need::Required));
    CFP_ASSIGN(c.vocabSize, r.positiveInt("vocab_size", Need::Required));
    CFP_ASSIGN(c.ffnSize, r.positiveInt("n_inner", Need::Optional, 4 * c.hiddenSize));  // null → 4·d
    CFP_ASSIGN(c.normEpsilon, r.positiveNumber("layer_norm_epsilon", 1e-5));
    CFP_ASSIGN(c.tiedEmbeddings, r.boolean("tie_word_embeddings", true));
    c.numKvHeads = c.numHeads;
    r.source("hiddenSize", "n_embd");
    r.source("numLayers", "n_layer");
    r.source("numHeads", "n_head");
    r.source("numKvHeads", "n_head");
    r.source("maxPositions", "n_positions");
    r.source("vocabSize", "vocab_size");
    r.source("ffnSize", "n_inner");
    r.source("normEpsilon", "layer_norm_epsilon");
    return c;
}

// GPT-NeoX: GPT-style layers (LayerNorm, biases, GeLU) with rotary positions. Partial rotary
// (rotary_pct < 1) and the parallel residual are not modelled; neither changes parameter counts.
Result<ModelConfig> readGptNeoX(Reader& r, ModelConfig c) {
    c.family = ModelFamily::Gpt;
    c.positions = PositionEncoding::Rotary;
    CFP_ASSIGN(c.hiddenSize, r.positiveInt("hidden_size", Need::Required));
    CFP_ASSIGN(c.numLayers, r.positiveInt("num_hidden_layers", Need::Required));
    CFP_ASSIGN(c.numHeads, r.positiveInt("num_attention_heads", Need::Required));
    CFP_ASSIGN(c.ffnSize, r.positiveInt("intermediate_size", Need::Optional, 4 * c.hiddenSize));
    CFP_ASSIGN(c.maxPositions, r.positiveInt("max_position_embeddings", Need::Required));
    CFP_ASSIGN(c.vocabSize, r.positiveInt("vocab_size", Need::Required));
    CFP_ASSIGN(c.tiedEmbeddings, r.boolean("tie_word_embeddings", false));
    CFP_ASSIGN(c.normEpsilon, r.positiveNumber("layer_norm_eps", 1e-5));
    CFP_ASSIGN(c.ropeTheta, r.positiveNumber("rotary_emb_base", 10000.0));
    c.numKvHeads = c.numHeads;
    r.source("hiddenSize", "hidden_size");
    r.source("numLayers", "num_hidden_layers");
    r.source("numHeads", "num_attention_heads");
    r.source("numKvHeads", "num_attention_heads");
    r.source("ffnSize", "intermediate_size");
    r.source("maxPositions", "max_position_embeddings");
    r.source("vocabSize", "vocab_size");
    r.source("normEpsilon", "layer_norm_eps");
    r.source("ropeTheta", "rotary_emb_base");
    return c;
}

Result<ModelConfig> readLlama(Reader& r, ModelConfig c, Kind kind) {
    c.family = kind == Kind::Mixtral ? ModelFamily::Moe : ModelFamily::Llama;
    c.positions = PositionEncoding::Rotary;
    CFP_ASSIGN(c.hiddenSize, r.positiveInt("hidden_size", Need::Required));
    CFP_ASSIGN(c.numLayers, r.positiveInt("num_hidden_layers", Need::Required));
    CFP_ASSIGN(c.numHeads, r.positiveInt("num_attention_heads", Need::Required));
    CFP_ASSIGN(c.numKvHeads, r.positiveInt("num_key_value_heads", Need::Optional, c.numHeads));
    CFP_ASSIGN(c.ffnSize, r.positiveInt("intermediate_size", Need::Required));
    CFP_ASSIGN(c.maxPositions, r.positiveInt("max_position_embeddings", Need::Required));
    CFP_ASSIGN(c.vocabSize, r.positiveInt("vocab_size", Need::Required));
    CFP_ASSIGN(c.tiedEmbeddings, r.boolean("tie_word_embeddings", false));
    CFP_ASSIGN(c.normEpsilon, r.positiveNumber("rms_norm_eps", 1e-6));
    CFP_ASSIGN(c.ropeTheta, r.positiveNumber("rope_theta", 10000.0));
    r.source("hiddenSize", "hidden_size");
    r.source("numLayers", "num_hidden_layers");
    r.source("numHeads", "num_attention_heads");
    r.source("numKvHeads", r.has("num_key_value_heads") ? "num_key_value_heads" : "num_attention_heads");
    r.source("ffnSize", "intermediate_size");
    r.source("maxPositions", "max_position_embeddings");
    r.source("vocabSize", "vocab_size");
    r.source("normEpsilon", "rms_norm_eps");
    r.source("ropeTheta", "rope_theta");
    if (kind == Kind::Mixtral) {
        CFP_ASSIGN(c.numExperts, r.positiveInt("num_local_experts", Need::Required));
        CFP_ASSIGN(c.topK, r.positiveInt("num_experts_per_tok", Need::Required));
        CFP_ASSIGN(c.routerAuxLossCoef, r.positiveNumber("router_aux_loss_coef", 0.001));
        // Not a Hugging Face field (Mixtral is dropless); accepted to set the dispatch capacity.
        CFP_ASSIGN(c.capacityFactor, r.positiveNumber("capacity_factor", 1.25));
        c.moeEvery = 1;
        r.source("numExperts", "num_local_experts");
        r.source("topK", "num_experts_per_tok");
        r.source("routerAuxLossCoef", "router_aux_loss_coef");
        r.source("capacityFactor", "capacity_factor");
    }
    return c;
}

}  // namespace

Result<ModelConfig> parseHfConfig(std::string_view jsonText, const std::string& fileName) {
    // The strict reader locates syntax errors as line:column and refuses repeated keys.
    static constexpr StrictJson kConfigJson{"config.parse", "config.duplicate_key", "config.bad_field",
                                            "config.missing_field", "config.bad_field", "config.bad_field"};
    auto parsed = kConfigJson.parse(jsonText);
    if (!parsed) {
        Error e = parsed.error();
        e.where = e.where.empty() ? fileName : fileName + ":" + e.where;
        return e;
    }
    json root = std::move(*parsed);
    if (!root.is_object()) return makeError("config.bad_field", "expected a JSON object", fileName + ":/");

    try {
        auto kind = detectKind(root, fileName);
        if (!kind) return kind.error();
        Reader reader(root, fileName);
        ModelConfig c;
        c.name = std::filesystem::path(fileName).stem().string();
        Result<ModelConfig> read = *kind == Kind::Gpt2      ? readGpt2(reader, c)
                                   : *kind == Kind::GptNeoX ? readGptNeoX(reader, c)
                                                            : readLlama(reader, c, *kind);
        if (!read) return read;
        auto valid = validateConfig(*read);
        if (!valid) {
            Error e = valid.error();
            const std::string key = reader.keyFor(e.where);
            e.where = key.empty() ? fileName + ": " + e.where : fileName + ":/" + key;
            return e;
        }
        return read;
    } catch (const std::exception& e) {  // nlohmann type errors and allocation failures
        return makeError("config.bad_field", std::string("unreadable config: ") + e.what(), fileName);
    }
}

Result<ModelConfig> readHfConfig(const std::string& path) {
    // Real config.json files are a few kilobytes; refuse to slurp anything huge.
    constexpr std::uintmax_t kMaxBytes = 16u << 20;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return makeError("config.io", "is a directory, not a file", path);
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxBytes)
        return makeError("config.too_large", "file is " + std::to_string(size) + " bytes; a config.json is at most " +
                                                 std::to_string(kMaxBytes), path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError("config.io", "cannot open file", path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return makeError("config.io", "cannot read file", path);
    return parseHfConfig(text.str(), path);
}

}  // namespace cfp
