#pragma once
// Whole-file reads with a size cap, and atomic whole-file writes.
//
// writeFileAtomically() never leaves a half-written target: it writes a temporary file next to the
// target (same directory, so the final rename stays on one file system), fsyncs it, renames it over
// the target and fsyncs the directory. On any failure the temporary file is removed and the target
// is untouched — an existing file keeps its old content, a missing one stays missing.
//
//   if (auto s = writeFileAtomically("plan.json", text); !s)
//       std::cerr << s.error().toString() << '\n';   // "plan.json: cannot write ...: No space left on device [io.write]"
//
// Error codes (Error::where is the path):
//   io.open     the file (or the temporary file beside the target) cannot be opened or created
//   io.read     reading failed (e.g. the path is a directory)
//   io.too_large the file is larger than the caller's limit
//   io.write    writing or syncing the temporary file failed (full disk, file size limit, I/O error)
//   io.rename   the finished temporary file could not replace the target

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace cfp {

// Reads the whole file at `path`; fails with io.too_large once more than `maxBytes` bytes are seen
// (so a huge or endless file is never read into memory).
Result<std::string> readFileLimited(const std::string& path, int64_t maxBytes);

// Replaces (or creates) `path` with exactly `bytes`, atomically as described above. A new file gets
// mode 0644; a replaced file keeps its mode.
Status writeFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace cfp
