#include "util/result.h"

namespace cfp {

std::string Error::toString() const {
    std::string out;
    if (!where.empty()) out = where + ": ";
    out += message;
    if (!code.empty()) out += " [" + code + "]";
    return out;
}

Error Error::withContext(const std::string& prefix) const {
    Error out = *this;
    if (prefix.empty()) return out;
    if (out.where.empty()) {
        out.where = prefix;
    } else if (out.where.front() == '/') {
        out.where = prefix + out.where;  // JSON Pointer: "/nodes/3" + "/shape"
    } else {
        out.where = prefix + ": " + out.where;
    }
    return out;
}

Error makeError(std::string code, std::string message, std::string where) {
    return Error{std::move(code), std::move(message), std::move(where)};
}

}  // namespace cfp
