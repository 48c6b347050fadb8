// Built when the ONNX development files are absent: the importer reports that at run time.
#include "import/onnx_import.h"

namespace cfp {

namespace {
Error unavailable(const std::string& where) {
    return makeError("onnx.unavailable",
                     "this build of cfp cannot read ONNX files: it was compiled without the ONNX development files "
                     "(Debian package libonnx-dev)",
                     where);
}
}  // namespace

bool onnxImportAvailable() { return false; }

Result<ImportedModel> importOnnxBytes(std::string_view, const std::string& sourceName, const ImportOptions&) {
    return unavailable(sourceName);
}

Result<ImportedModel> importOnnxFile(const std::string& path, const ImportOptions&) { return unavailable(path); }

}  // namespace cfp
