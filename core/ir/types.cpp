#include "ir/types.h"

#include <charconv>

#include "util/checked_math.h"

namespace cfp {

std::string_view dtypeName(DType t) {
    switch (t) {
        case DType::Pred: return "pred";
        case DType::S32: return "s32";
        case DType::S64: return "s64";
        case DType::F16: return "f16";
        case DType::BF16: return "bf16";
        case DType::F32: return "f32";
        case DType::F64: return "f64";
        case DType::S8: return "s8";
        case DType::U8: return "u8";
        case DType::S16: return "s16";
        case DType::U16: return "u16";
        case DType::F8E4M3FN: return "f8e4m3fn";
        case DType::F8E5M2: return "f8e5m2";
    }
    return "?";
}

std::optional<DType> parseDType(std::string_view name) {
    for (DType t : kAllDTypes)
        if (dtypeName(t) == name) return t;
    return std::nullopt;
}

int64_t dtypeBytes(DType t) {
    switch (t) {
        case DType::Pred: return 1;
        case DType::S32: return 4;
        case DType::S64: return 8;
        case DType::F16: return 2;
        case DType::BF16: return 2;
        case DType::F32: return 4;
        case DType::F64: return 8;
        case DType::S8:
        case DType::U8:
        case DType::F8E4M3FN:
        case DType::F8E5M2: return 1;
        case DType::S16:
        case DType::U16: return 2;
    }
    return 0;
}

bool isFloating(DType t) {
    return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64 || t == DType::F8E4M3FN ||
           t == DType::F8E5M2;
}

bool isInteger(DType t) {
    return t == DType::S32 || t == DType::S64 || t == DType::S8 || t == DType::U8 || t == DType::S16 ||
           t == DType::U16;
}

double integerMin(DType t) {
    switch (t) {
        case DType::S8: return -128.0;
        case DType::S16: return -32768.0;
        case DType::S32: return -2147483648.0;
        case DType::S64: return -9.2233720368547758e18;
        default: return 0.0;
    }
}

double integerMax(DType t) {
    switch (t) {
        case DType::S8: return 127.0;
        case DType::U8: return 255.0;
        case DType::S16: return 32767.0;
        case DType::U16: return 65535.0;
        case DType::S32: return 2147483647.0;
        case DType::S64: return 9.2233720368547758e18;
        default: return 1.0;
    }
}

Result<int64_t> TensorType::elementCount() const {
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] < 0)
            return makeError("shape.negative_dim",
                             "dimension " + std::to_string(i) + " of " + toString() + " is negative");
    auto n = checkedProduct(dims);
    if (!n) return makeError("shape.too_large", "element count of " + toString() + " overflows 2^62");
    return *n;
}

Result<int64_t> TensorType::byteSize() const {
    auto n = elementCount();
    if (!n) return n.error();
    auto b = checkedMul(*n, dtypeBytes(dtype));
    if (!b) return makeError("shape.too_large", "byte size of " + toString() + " overflows 2^62");
    return *b;
}

int64_t TensorType::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

std::string TensorType::toString() const {
    std::string out(dtypeName(dtype));
    out += '[';
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(dims[i]);
    }
    out += ']';
    return out;
}

Status validateTensorType(const TensorType& t) {
    auto b = t.byteSize();
    if (!b) return b.error();
    return {};
}

Result<TensorType> parseTensorType(std::string_view text) {
    const auto bracket = text.find('[');
    if (bracket == std::string_view::npos || text.empty() || text.back() != ']')
        return makeError("shape.syntax", "expected a type like f32[8,1024], got '" + std::string(text) + "'");
    auto dtype = parseDType(text.substr(0, bracket));
    if (!dtype)
        return makeError("shape.unknown_dtype", "unknown element type '" +
                                                    std::string(text.substr(0, bracket)) + "'");
    TensorType out{*dtype, {}};
    std::string_view body = text.substr(bracket + 1, text.size() - bracket - 2);
    while (!body.empty()) {
        const auto comma = body.find(',');
        std::string_view item = body.substr(0, comma);
        int64_t dim = 0;
        auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), dim);
        if (ec != std::errc() || ptr != item.data() + item.size())
            return makeError("shape.syntax", "bad dimension '" + std::string(item) + "' in '" +
                                                 std::string(text) + "'");
        out.dims.push_back(dim);
        if (comma == std::string_view::npos) break;
        body.remove_prefix(comma + 1);
        if (body.empty())
            return makeError("shape.syntax", "trailing comma in '" + std::string(text) + "'");
    }
    CFP_TRY(validateTensorType(out));
    return out;
}

}  // namespace cfp
