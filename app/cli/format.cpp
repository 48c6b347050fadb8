#include "format.h"

#include <cmath>
#include <cstdio>

namespace cfp::cli {

std::string withCommas(int64_t n) {
    std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string speedup(double other, double ours) {
    if (other >= ours) return fixed(ours > 0 ? other / ours : 0.0, 2) + "x faster";
    return fixed(other > 0 ? ours / other : 0.0, 2) + "x slower";
}

namespace {
std::string scaled(double v, double base, const char* const* units, int count, const char* suffix) {
    int i = 0;
    while (i + 1 < count && std::fabs(v) >= base) {
        v /= base;
        ++i;
    }
    return fixed(v, i == 0 ? 0 : (std::fabs(v) < 10 ? 2 : 1)) + " " + units[i] + suffix;
}
}  // namespace

std::string humanCount(double n) {
    static const char* const units[] = {"", "K", "M", "B", "T"};
    std::string s = scaled(n, 1000.0, units, 5, "");
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

std::string humanBytes(double b) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    return scaled(b, 1024.0, units, 6, "");
}

std::string humanFlops(double f) {
    static const char* const units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
    return scaled(f, 1000.0, units, 8, "FLOP");
}

}  // namespace cfp::cli
