#pragma once
// Strict JSON reading for cfp's own file formats (graph, hardware spec, plan): text to DOM, and the
// typed access that reports errors with a JSON Pointer.
//
// parseStrictJson differs from nlohmann's DOM parser in two ways that matter to a file a person
// edits:
//   * an object that repeats a key is an error, located at the repeated key's JSON Pointer
//     (nlohmann keeps the last value silently, hiding typos and merge accidents);
//   * a syntax error is located as "<line>:<column>" (1-based) of the byte where the parser
//     stopped: the last byte of the offending token, or just past the end of the input. The message
//     is nlohmann's, without its "[json.exception…] parse error at …: " prefix.
//
// Each format keeps its own error codes (a StrictJson names them) and its own way of naming the
// file an error is in: the errors here carry no file name, only the "<line>:<column>" or pointer.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cfp {

// One format's codes for what the shared reader finds, and the JSON it accepts.
struct StrictJson {
    std::string_view syntaxCode;        // the text is not JSON
    std::string_view duplicateKeyCode;  // an object repeats a key
    std::string_view typeCode;          // a value has the wrong JSON type
    std::string_view missingFieldCode;  // a required member is absent
    std::string_view unknownFieldCode;  // a member the format does not define
    std::string_view outOfRangeCode;    // an integer does not fit int64
    bool allowComments = false;         // `//` and `/* */` comments

    // A format with one code for syntax errors and one for everything else.
    static constexpr StrictJson twoCodes(std::string_view syntax, std::string_view other, bool comments = false) {
        return {syntax, other, other, other, other, other, comments};
    }

    // The DOM of `text`. Errors: syntaxCode with `where` "<line>:<column>" (or empty when the
    // parser gave no position); duplicateKeyCode "key 'k' appears twice in one object" at the
    // second key's pointer.
    Result<nlohmann::json> parse(std::string_view text) const;

    // "expected <expected>, got <JSON type name>" at `ptr`.
    Error typeError(const std::string& ptr, std::string_view expected, const nlohmann::json& j) const;
    // "missing required field 'key'" at childPointer(ptr, key).
    Error missingField(const std::string& ptr, std::string_view key) const;
    // "unknown field 'key'" at childPointer(ptr, key).
    Error unknownField(const std::string& ptr, const std::string& key) const;

    // The member `key` of the object `obj` (at `ptr`); missingField when absent.
    Result<const nlohmann::json*> member(const nlohmann::json& obj, const std::string& ptr, std::string_view key) const;
    // `j` (at `ptr`) as a string; typeError "a string" otherwise.
    Result<std::string> string(const nlohmann::json& j, const std::string& ptr) const;
    // `j` (at `ptr`) as an int64: typeError "an integer" for a non-integer, outOfRangeCode
    // "<n> does not fit a 64-bit signed integer" for an integer above INT64_MAX.
    Result<int64_t> int64(const nlohmann::json& j, const std::string& ptr) const;
};

// JSON Pointer (RFC 6901) of a member or element of the value at `parent`: "~" and "/" in keys
// are escaped as "~0" and "~1".
std::string escapePointerToken(std::string_view token);
std::string childPointer(const std::string& parent, std::string_view key);
std::string childPointer(const std::string& parent, size_t index);

// The first key of the object `obj`, in its order, that is not in `allowed`; nullptr if none.
const std::string* firstUnknownKey(const nlohmann::json& obj, std::span<const std::string_view> allowed);

}  // namespace cfp
