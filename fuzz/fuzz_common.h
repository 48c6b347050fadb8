#pragma once
// Shared by the fuzz targets: an error must carry a code from the reader's families and a message;
// anything else (a crash, a sanitizer report, an escaped exception, a hang, a huge allocation) is a
// finding.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "util/result.h"

namespace cfp::fuzz {

inline void checkError(const Error& e, std::initializer_list<std::string_view> prefixes) {
    bool ok = false;
    for (std::string_view p : prefixes) ok = ok || std::string_view(e.code).substr(0, p.size()) == p;
    if (!ok || e.message.empty()) {
        std::fprintf(stderr, "unexpected error: %s\n", e.toString().c_str());
        std::abort();
    }
}

}  // namespace cfp::fuzz
