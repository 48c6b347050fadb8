#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace cfp {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

// Closes the descriptor on scope exit unless released.
class FdGuard {
public:
    explicit FdGuard(int fd) : m_fd(fd) {}
    ~FdGuard() {
        if (m_fd >= 0) ::close(m_fd);
    }
    FdGuard(const FdGuard&) = delete;
    FdGuard& operator=(const FdGuard&) = delete;
    int get() const { return m_fd; }
    int release() {
        const int fd = m_fd;
        m_fd = -1;
        return fd;
    }

private:
    int m_fd;
};

Status writeAll(int fd, std::string_view bytes, const std::string& path) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return makeError("io.write", "cannot write: " + errnoText(errno), path);
        }
        if (n == 0) return makeError("io.write", "cannot write: no progress", path);
        done += static_cast<size_t>(n);
    }
    return {};
}

}  // namespace

Result<std::string> readFileLimited(const std::string& path, int64_t maxBytes) {
    int fd = -1;
    do {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return makeError("io.open", "cannot open for reading: " + errnoText(errno), path);
    FdGuard guard(fd);

    std::string out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= maxBytes)
        out.reserve(static_cast<size_t>(st.st_size));
    std::vector<char> buffer(size_t{1} << 16);
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return makeError("io.read", "cannot read: " + errnoText(errno), path);
        }
        if (n == 0) break;
        if (static_cast<int64_t>(out.size()) + n > maxBytes)
            return makeError("io.too_large", "file is larger than the limit of " + std::to_string(maxBytes) + " bytes",
                             path);
        out.append(buffer.data(), static_cast<size_t>(n));
    }
    return out;
}

Status writeFileAtomically(const std::string& path, std::string_view bytes) {
    namespace fs = std::filesystem;
    if (path.empty()) return makeError("io.open", "empty output path");
    const fs::path target(path);
    if (!target.has_filename()) return makeError("io.open", "output path names a directory", path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

    // mkstemp needs a mutable template; the dot prefix keeps the temporary out of casual listings.
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
    std::vector<char> tmpName(tmpl.begin(), tmpl.end());
    tmpName.push_back('\0');
    const int fd = ::mkstemp(tmpName.data());
    if (fd < 0)
        return makeError("io.open", "cannot create a temporary file in '" + dir.string() + "': " + errnoText(errno),
                         path);
    FdGuard guard(fd);
    const std::string tmpPath(tmpName.data());
    auto fail = [&](Error e) -> Status {
        ::close(guard.release());
        ::unlink(tmpPath.c_str());
        return e;
    };

    // Keep the mode of a file we replace; new files get the usual 0644 rather than mkstemp's 0600.
    struct stat st {};
    const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
    if (::fchmod(fd, mode) != 0) return fail(makeError("io.write", "cannot set file mode: " + errnoText(errno), path));

    if (auto s = writeAll(fd, bytes, path); !s) return fail(s.error());
    if (::fsync(fd) != 0) return fail(makeError("io.write", "cannot sync to disk: " + errnoText(errno), path));
    // close() can report deferred write errors (e.g. on network file systems).
    if (::close(guard.release()) != 0) {
        const int err = errno;
        ::unlink(tmpPath.c_str());
        return makeError("io.write", "cannot close: " + errnoText(err), path);
    }
    if (::rename(tmpPath.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmpPath.c_str());
        return makeError("io.rename", "cannot replace the file: " + errnoText(err), path);
    }
    // Make the rename itself durable. Some file systems cannot fsync directories; the data is
    // already complete and in place, so that is not reported as a failure.
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        (void)::fsync(dirFd);
        ::close(dirFd);
    }
    return {};
}

}  // namespace cfp
