#pragma once
// The explorer's one background-job mechanism (STYLE.md "Threads"): every core call runs as a job
// of JobRunner, off the GUI thread, with a cancel flag and throttled progress. A job returns a
// Result (errors are values) and its continuation runs on the GUI thread. Only the newest job of
// each kind delivers: starting a job cancels the previous one of the same kind and drops its
// result (hotspot's job-number scheme). Profiling jobs run on one dedicated thread (a pool of one
// thread that never expires), the thread that owns the GPU contexts; everything else on a small
// shared pool.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <map>
#include <memory>

#include "util/result.h"

namespace cfp::explorer {

enum class JobKind { Analysis, Search, Detail, Export, Profile, Estimate };
QString jobKindName(JobKind kind);

// Handed to a running job: its cancel flag and a throttled progress sink. Safe to call from the
// job's thread only.
class JobContext {
public:
    bool cancelled() const { return m_cancel->load(); }
    const std::atomic<bool>* cancelFlag() const { return m_cancel.get(); }
    // Posts progress to the GUI thread at most every kProgressIntervalMs (and always the final 1.0).
    // `bestSeconds` > 0: the best cost found so far (the search panel plots it).
    void progress(double fraction, const QString& text, double bestSeconds = 0);
    // Runs `partial` on the GUI thread if this job is still the newest of its kind by then: partial
    // results (a profiled combination) that must not wait for the job's end.
    void post(std::function<void()> partial);

    static constexpr int kProgressIntervalMs = 50;

private:
    friend class JobRunner;
    class JobRunner* m_runner = nullptr;
    quint64 m_id = 0;
    JobKind m_kind = JobKind::Analysis;
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QElapsedTimer m_sincePost;
    bool m_posted = false;
    double m_lastBest = 0;
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* parent = nullptr);
    ~JobRunner() override;  // cancels every job and waits for them

    // Runs `work` off the GUI thread; `done` receives its result on the GUI thread unless a newer
    // job of the same kind was started (or the job was cancelled) meanwhile.
    template <class T>
    quint64 start(JobKind kind, const QString& title, std::function<Result<T>(JobContext&)> work,
                  std::function<void(Result<T>)> done) {
        return startErased(kind, title, [work = std::move(work), done = std::move(done)](JobContext& ctx) -> Delivery {
            auto result = std::make_shared<Result<T>>(work(ctx));
            Delivery d;
            d.ok = result->ok();
            if (!d.ok) d.message = QString::fromStdString(result->error().message);
            if (!d.ok) d.code = QString::fromStdString(result->error().code);
            d.deliver = [result, done]() { done(std::move(*result)); };
            return d;
        });
    }

    void cancel(JobKind kind);
    // Asks the running job of `kind` to stop early and still delivers what it returns (a search
    // returns the best plan found so far).
    void stop(JobKind kind);
    void cancelAll();
    bool isRunning(JobKind kind) const;
    bool isIdle() const;
    // Processes events until no job runs (tests, --screenshot, benchmarks). False on timeout.
    bool waitForIdle(int timeoutMs);

signals:
    void jobStarted(cfp::explorer::JobKind kind, const QString& title);
    void jobProgress(cfp::explorer::JobKind kind, double fraction, const QString& text, double bestSeconds);
    // After the continuation ran. `ok` false: `message` says why (code: the error's stable code).
    void jobFinished(cfp::explorer::JobKind kind, bool ok, const QString& message, const QString& code);

private:
    friend class JobContext;
    struct Delivery {
        bool ok = true;
        QString message, code;
        std::function<void()> deliver;
    };
    quint64 startErased(JobKind kind, const QString& title, std::function<Delivery(JobContext&)> work);
    void postProgress(quint64 id, JobKind kind, double fraction, const QString& text, double best);
    void postPartial(quint64 id, JobKind kind, std::function<void()> partial);

    QThreadPool m_pool;          // analysis, search, detail, export
    QThreadPool m_profilerPool;  // one dedicated thread
    quint64 m_nextId = 1;
    std::map<JobKind, quint64> m_current;                              // newest job per kind
    std::map<quint64, std::shared_ptr<std::atomic<bool>>> m_cancelFlags; // running jobs
};

}  // namespace cfp::explorer

Q_DECLARE_METATYPE(cfp::explorer::JobKind)
