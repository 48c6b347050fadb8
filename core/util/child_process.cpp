#include "util/child_process.h"

#include <algorithm>
#include <chrono>

#if defined(__unix__) || defined(__APPLE__)
#define CFP_HAVE_FORK 1
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace cfp {

namespace {

ChildRun inProcess(const std::function<std::string()>& work) { return ChildRun{ChildOutcome::Finished, work()}; }

#ifdef CFP_HAVE_FORK
// Writes all of `bytes` to fd (a pipe); false on failure.
bool writeAll(int fd, const char* p, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}
#endif

}  // namespace

ChildRun runInChildProcess(const std::function<std::string()>& work, double seconds, const std::atomic<bool>* cancel) {
#ifndef CFP_HAVE_FORK
    (void)seconds;
    (void)cancel;
    return inProcess(work);
#else
    if (cancel && cancel->load()) return ChildRun{ChildOutcome::Cancelled, {}};
    int fds[2];
    if (::pipe(fds) != 0) return inProcess(work);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return inProcess(work);
    }
    if (pid == 0) {
        ::close(fds[0]);
        // Solvers may print despite their log level: keep the parent's output clean.
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) {
            ::dup2(null, 1);
            ::dup2(null, 2);
        }
        const std::string bytes = work();
        // A length prefix tells a complete answer from a child that died while writing.
        const uint64_t size = bytes.size();
        const bool ok = writeAll(fds[1], reinterpret_cast<const char*>(&size), sizeof size) && writeAll(fds[1], bytes.data(), bytes.size());
        ::_exit(ok ? 0 : 1);
    }
    ::close(fds[1]);
    std::string bytes;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    ChildOutcome outcome = ChildOutcome::Finished;
    for (;;) {
        if (cancel && cancel->load()) {
            outcome = ChildOutcome::Cancelled;
            break;
        }
        const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            outcome = ChildOutcome::TimedOut;
            break;
        }
        pollfd pfd{fds[0], POLLIN, 0};
        const int wait = static_cast<int>(std::min(left * 1000.0 + 1, cancel ? 50.0 : 1e6));
        const int ready = ::poll(&pfd, 1, wait);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue;
        char buffer[1 << 16];
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the child closed the pipe: done
        bytes.append(buffer, static_cast<size_t>(n));
    }
    if (outcome != ChildOutcome::Finished) ::kill(pid, SIGKILL);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (outcome != ChildOutcome::Finished) return ChildRun{outcome, {}};
    uint64_t size = 0;
    if (bytes.size() < sizeof size) return ChildRun{ChildOutcome::Failed, {}};
    std::copy(bytes.data(), bytes.data() + sizeof size, reinterpret_cast<char*>(&size));
    if (bytes.size() != sizeof size + size) return ChildRun{ChildOutcome::Failed, {}};
    return ChildRun{ChildOutcome::Finished, bytes.substr(sizeof size)};
#endif
}

}  // namespace cfp
