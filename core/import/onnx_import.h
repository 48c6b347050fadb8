#pragma once
// ONNX model → graph IR (docs/importers.md), through the ONNX library's protobuf classes and its
// shape inference. Compiled when CMake finds the ONNX development files (Debian: libonnx-dev);
// otherwise every call fails with onnx.unavailable, which says so.

#include <string>
#include <string_view>

#include "import/imported_model.h"

namespace cfp {

// Whether this build can read ONNX files.
bool onnxImportAvailable();

// `bytes` is a serialized ModelProto; `sourceName` names it in errors.
Result<ImportedModel> importOnnxBytes(std::string_view bytes, const std::string& sourceName,
                                      const ImportOptions& options = {});
Result<ImportedModel> importOnnxFile(const std::string& path, const ImportOptions& options = {});

}  // namespace cfp
