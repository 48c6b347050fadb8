#include "job_runner.h"

#include <QCoreApplication>
#include <QDeadlineTimer>

namespace cfp::explorer {

QString jobKindName(JobKind kind) {
    switch (kind) {
    case JobKind::Analysis: return QStringLiteral("analysis");
    case JobKind::Search: return QStringLiteral("search");
    case JobKind::Detail: return QStringLiteral("detail");
    case JobKind::Export: return QStringLiteral("export");
    case JobKind::Profile: return QStringLiteral("profile");
    case JobKind::Estimate: return QStringLiteral("estimate");
    }
    return {};
}

void JobContext::progress(double fraction, const QString& text, double bestSeconds) {
    // A new best always goes through (the search panel plots every one); other updates are
    // throttled so that a fast loop cannot flood the GUI thread's event queue.
    const bool newBest = bestSeconds > 0 && bestSeconds != m_lastBest;
    if (m_posted && !newBest && fraction < 1.0 && m_sincePost.elapsed() < kProgressIntervalMs) return;
    m_posted = true;
    m_sincePost.start();
    if (bestSeconds > 0) m_lastBest = bestSeconds;
    m_runner->postProgress(m_id, m_kind, fraction, text, bestSeconds);
}

void JobContext::post(std::function<void()> partial) { m_runner->postPartial(m_id, m_kind, std::move(partial)); }

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
    qRegisterMetaType<JobKind>();
    m_pool.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
    m_profilerPool.setMaxThreadCount(1);
    m_profilerPool.setExpiryTimeout(-1);  // the one profiler thread lives as long as the runner
}

JobRunner::~JobRunner() {
    cancelAll();
    m_pool.waitForDone();
    m_profilerPool.waitForDone();
}

quint64 JobRunner::startErased(JobKind kind, const QString& title, std::function<Delivery(JobContext&)> work) {
    cancel(kind);
    const quint64 id = m_nextId++;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_current[kind] = id;
    m_cancelFlags[id] = flag;
    emit jobStarted(kind, title);
    auto task = [this, id, kind, flag, work = std::move(work)]() {
        JobContext ctx;
        ctx.m_runner = this;
        ctx.m_id = id;
        ctx.m_kind = kind;
        ctx.m_cancel = flag;
        Delivery d;
        try {
            d = work(ctx);
        } catch (const std::bad_alloc&) {
            d.ok = false;
            d.code = QStringLiteral("job.out_of_memory");
            d.message = QStringLiteral("out of memory (try a smaller batch or sequence)");
            d.deliver = nullptr;
        } catch (const std::exception& e) {
            d.ok = false;
            d.code = QStringLiteral("job.failed");
            d.message = QString::fromUtf8(e.what());
            d.deliver = nullptr;
        }
        // The runner outlives its tasks (its destructor waits for them), so `this` is valid here;
        // the queued call is dropped if the runner is gone by the time the GUI thread gets to it.
        QMetaObject::invokeMethod(
            this,
            [this, id, kind, d = std::move(d)]() {
                m_cancelFlags.erase(id);
                auto it = m_current.find(kind);
                const bool newest = it != m_current.end() && it->second == id;
                if (!newest) return;  // superseded or cancelled: drop the result
                m_current.erase(it);
                if (d.deliver) d.deliver();
                emit jobFinished(kind, d.ok, d.message, d.code);
            },
            Qt::QueuedConnection);
    };
    (kind == JobKind::Profile ? m_profilerPool : m_pool).start(std::move(task));
    return id;
}

void JobRunner::postProgress(quint64 id, JobKind kind, double fraction, const QString& text, double best) {
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, fraction, text, best]() {
            auto it = m_current.find(kind);
            if (it == m_current.end() || it->second != id) return;
            emit jobProgress(kind, fraction, text, best);
        },
        Qt::QueuedConnection);
}

void JobRunner::postPartial(quint64 id, JobKind kind, std::function<void()> partial) {
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, partial = std::move(partial)]() {
            auto it = m_current.find(kind);
            if (it != m_current.end() && it->second == id) partial();
        },
        Qt::QueuedConnection);
}

void JobRunner::stop(JobKind kind) {
    auto it = m_current.find(kind);
    if (it == m_current.end()) return;
    if (auto f = m_cancelFlags.find(it->second); f != m_cancelFlags.end()) f->second->store(true);
}

void JobRunner::cancel(JobKind kind) {
    if (!m_current.count(kind)) return;
    stop(kind);  // the flag, and no delivery: the job is no longer current
    m_current.erase(kind);
    emit jobFinished(kind, false, QStringLiteral("cancelled"), QStringLiteral("job.cancelled"));
}

void JobRunner::cancelAll() {
    for (auto& [id, flag] : m_cancelFlags) flag->store(true);
    m_current.clear();
}

bool JobRunner::isRunning(JobKind kind) const { return m_current.count(kind) != 0; }

bool JobRunner::isIdle() const { return m_current.empty(); }

bool JobRunner::waitForIdle(int timeoutMs) {
    QDeadlineTimer deadline(timeoutMs);
    while (!isIdle()) {
        if (deadline.hasExpired()) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(2);
    }
    // Deliveries may have started follow-up jobs from within processEvents; the loop above covers
    // them. Flush what the last delivery posted.
    QCoreApplication::processEvents();
    return isIdle();
}

}  // namespace cfp::explorer
