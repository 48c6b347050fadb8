// bench_explorer: responsiveness of cfp-explorer on a large model. Prints
//   * time until the main window is on screen, and until the model is shown (loaded, analysed,
//     tree and folded graph filled);
//   * the longest event-loop stall (and the 99th percentile gap) while loading/analysing, while
//     searching, and while the plan's views and the combinations chart are filled;
//   * the time to expand the layer run and one block in the graph view.
// A stall is the gap between two ticks of a 5 ms timer on the GUI thread, minus 5 ms. On a busy
// machine the gap also holds time the OS gave other processes, so the GUI thread's own CPU time
// within the gap ("busy") is printed too: that is the stall an idle machine would see.
//
//   bench_explorer [--model builtin:gpt3-175b] [--nodes 16] [--mesh 16x8] [--memory-limit-gib 0]
//
// Runs on the offscreen platform unless QT_QPA_PLATFORM says otherwise.

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "graph_view.h"
#include "main_window.h"
#include "panels.h"

#include <QLineEdit>
#include <QCheckBox>
#include <QTreeWidget>

using namespace cfp;
using namespace cfp::explorer;

namespace {

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct StallMeter {
    QElapsedTimer clock;
    qint64 last = 0;
    double lastCpu = 0;
    std::vector<double> gapsMs;
    double maxBusyMs = 0;  // GUI-thread CPU time between two ticks
    void start() {
        clock.start();
        last = 0;
        gapsMs.clear();
        maxBusyMs = 0;
    }
    void tick() {
        const qint64 now = clock.nsecsElapsed();
        const double cpu = threadCpuMs();
        if (last) {
            gapsMs.push_back((now - last) / 1e6);
            maxBusyMs = std::max(maxBusyMs, cpu - lastCpu);
        }
        last = now;
        lastCpu = cpu;
    }
    double maxStallMs(double periodMs) const {
        double m = 0;
        for (double g : gapsMs) m = std::max(m, g - periodMs);
        return m;
    }
    double p99StallMs(double periodMs) const {
        if (gapsMs.empty()) return 0;
        std::vector<double> s = gapsMs;
        std::sort(s.begin(), s.end());
        return std::max(0.0, s[static_cast<size_t>(0.99 * static_cast<double>(s.size() - 1))] - periodMs);
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    std::string model = "builtin:gpt3-175b", mesh = "16x8";
    int nodes = 16;
    double limitGiB = 0;
    for (int i = 1; i < argc; ++i) {
        auto next = [&](const char* name) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_explorer: %s needs a value\n", name);
                std::exit(2);
            }
            return argv[++i];
        };
        if (!std::strcmp(argv[i], "--model")) model = next("--model");
        else if (!std::strcmp(argv[i], "--mesh")) mesh = next("--mesh");
        else if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(next("--nodes"));
        else if (!std::strcmp(argv[i], "--memory-limit-gib")) limitGiB = std::atof(next("--memory-limit-gib"));
        else {
            std::fprintf(stderr, "usage: bench_explorer [--model M] [--nodes N] [--mesh M] [--memory-limit-gib G]\n");
            return 2;
        }
    }
    QElapsedTimer total;
    total.start();
    QApplication app(argc, argv);
    const double period = 5.0;
    StallMeter meter;
    QTimer ticker;
    ticker.setInterval(static_cast<int>(period));
    ticker.setTimerType(Qt::PreciseTimer);
    QObject::connect(&ticker, &QTimer::timeout, [&] { meter.tick(); });

    WindowOptions o;
    o.model = model;
    o.cluster.nodes = nodes;
    auto meshChoice = MeshChoice::parse(mesh);
    if (!meshChoice) return std::fprintf(stderr, "%s\n", meshChoice.error().toString().c_str()), 1;
    o.cluster.mesh = *meshChoice;
    if (limitGiB > 0) o.cluster.memoryLimitBytes = static_cast<int64_t>(limitGiB * 1024.0 * 1024.0 * 1024.0);
    o.discoverDevices = true;
    MainWindow w(o);
    w.resize(1600, 1000);
    w.show();
    QApplication::processEvents();
    const double shownMs = total.nsecsElapsed() / 1e6;

    // Phase 1: load and analyse (the job starts from the event loop).
    meter.start();
    ticker.start();
    double analysedMs = 0;
    QObject::connect(w.explorer(), &Explorer::analysisChanged, [&] {
        if (!analysedMs) analysedMs = total.nsecsElapsed() / 1e6;
    });
    QString failure;
    QObject::connect(w.explorer(), &Explorer::failed, [&](const QString& t, const QString& m) { failure = t + ": " + m; });
    while (!w.explorer()->analysis() && failure.isEmpty()) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    w.explorer()->jobs().waitForIdle(600000);
    QApplication::processEvents();
    const double analysisStall = meter.maxStallMs(period), analysisP99 = meter.p99StallMs(period), analysisBusy = meter.maxBusyMs;
    if (!w.explorer()->analysis()) {
        std::fprintf(stderr, "bench_explorer: %s\n", qPrintable(failure));
        return 1;
    }
    const auto a = w.explorer()->analysis();

    // Phase 2: search; phase 3: the views of the plan and the combinations chart.
    meter.start();
    QElapsedTimer searchClock;
    searchClock.start();
    double searchMs = 0;
    bool planned = false;
    QObject::connect(w.explorer(), &Explorer::planChanged, [&] {
        searchMs = searchClock.nsecsElapsed() / 1e6;
        planned = true;
    });
    failure.clear();
    w.explorer()->search();
    while (w.explorer()->jobs().isRunning(JobKind::Search)) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    const double searchStall = meter.maxStallMs(period), searchP99 = meter.p99StallMs(period), searchBusy = meter.maxBusyMs;
    if (!planned) searchMs = searchClock.nsecsElapsed() / 1e6;
    meter.start();
    w.explorer()->jobs().waitForIdle(600000);
    for (int i = 0; i < 20; ++i) {
        QApplication::processEvents();
        QThread::msleep(5);
    }
    const double viewsStall = meter.maxStallMs(period), viewsBusy = meter.maxBusyMs;

    // Phase 4: profiling one segment type on the profiler thread (simulated backend without a GPU),
    // measurements arriving in the panel one by one.
    meter.start();
    ProfilerPanel* profilerPanel = w.profilerPanel();
    profilerPanel->dbEdit()->clear();  // no DB: nothing reused, nothing stored
    // The most repeated type (the layer), unless it has more combinations than the profiler takes
    // on (a 2-D mesh gives a GPT-3 175B layer millions): then the type with the fewest.
    int layerType = 0;
    {
        auto an = w.explorer()->analysis();
        const auto& types = an->report->cover.types;
        int bestCount = 0;
        for (const RepeatRun& r : an->runs)
            if (r.count > bestCount) {
                bestCount = r.count;
                layerType = r.type;
            }
        if (types[static_cast<size_t>(layerType)].combinationsLog10 > 4.5)
            for (const SegmentType& t : types)
                if (t.combinationsLog10 < types[static_cast<size_t>(layerType)].combinationsLog10) layerType = t.id;
    }
    profilerPanel->typesEdit()->setText(QStringLiteral("T%1").arg(layerType));
    const bool simulated = profilerPanel->devices()->topLevelItemCount() == 0;
    profilerPanel->simulateBox()->setChecked(simulated);
    QElapsedTimer profileClock;
    profileClock.start();
    profilerPanel->start();
    // At most a minute: the stall is what is measured here, not the profile.
    bool profileCancelled = false;
    while (profilerPanel->isRunning()) {
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
        if (!profileCancelled && profileClock.elapsed() > 60000) {
            profilerPanel->cancel();
            profileCancelled = true;
        }
    }
    const double profileMs = profileClock.nsecsElapsed() / 1e6;
    const double profileStall = meter.maxStallMs(period), profileP99 = meter.p99StallMs(period), profileBusy = meter.maxBusyMs;
    const int profileRows = profilerPanel->measurements()->topLevelItemCount();

    // Phase 5: expanding in the graph view (on the GUI thread).
    int layerRun = 0;
    for (size_t i = 0; i < a->runs.size(); ++i)
        if (a->runs[i].count > a->runs[static_cast<size_t>(layerRun)].count) layerRun = static_cast<int>(i);
    auto analysis = w.explorer()->analysis();
    const Segment& rep = analysis->report->cover.segments[static_cast<size_t>(analysis->runs[static_cast<size_t>(layerRun)].firstSegment)];
    QElapsedTimer expand;
    expand.start();
    w.graphView()->setExpanded({GraphView::NodeKind::Run, layerRun}, true);
    const double expandRunMs = expand.nsecsElapsed() / 1e6;
    expand.restart();
    w.graphView()->setExpanded({GraphView::NodeKind::Block, rep.firstBlock}, true);
    const double expandBlockMs = expand.nsecsElapsed() / 1e6;
    const size_t members = analysis->report->blocks.blocks[static_cast<size_t>(rep.firstBlock)].members.size();
    // The largest block of any run's first segment (the graph view lays out at most 240 of its ops).
    int32_t largest = -1;
    size_t largestMembers = 0;
    for (const RepeatRun& run : analysis->runs) {
        const Segment& s = analysis->report->cover.segments[static_cast<size_t>(run.firstSegment)];
        for (int k = 0; k < s.blockCount; ++k) {
            const size_t m = analysis->report->blocks.blocks[static_cast<size_t>(s.firstBlock + k)].members.size();
            if (m > largestMembers) {
                largestMembers = m;
                largest = s.firstBlock + k;
            }
        }
    }
    w.graphView()->collapseAll();
    for (size_t r = 0; r < analysis->runs.size(); ++r) w.graphView()->setExpanded({GraphView::NodeKind::Run, static_cast<int32_t>(r)}, true);
    expand.restart();
    w.graphView()->setExpanded({GraphView::NodeKind::Block, largest}, true);
    const double expandLargestMs = expand.nsecsElapsed() / 1e6;
    ticker.stop();

    std::printf("model                 %s (%lld ops, %zu blocks, %zu segments)\n", model.c_str(),
                static_cast<long long>(a->graph().size()), a->report->blocks.blocks.size(), a->report->cover.segments.size());
    std::printf("cluster               %d node(s), mesh %s, graphviz %s\n", nodes, mesh.c_str(), GraphView::haveGraphviz() ? "yes" : "no");
    std::printf("window shown          %8.1f ms after start\n", shownMs);
    std::printf("model shown           %8.1f ms after start (loaded, analysed, tree and folded graph filled)\n", analysedMs);
    std::printf("  of which in the job  %7.1f ms building the graph, %.1f ms analysing (blocks %.1f, check %.1f, segments %.1f)\n",
                a->model->loaded->loadSeconds * 1e3, a->report->seconds * 1e3, a->report->blocksSeconds * 1e3,
                a->report->checkSeconds * 1e3, a->report->segmentsSeconds * 1e3);
    std::printf("search                %8.1f ms, %s\n", searchMs,
                planned ? qPrintable(QStringLiteral("plan %1 per step").arg(formatSeconds(w.explorer()->plan()->plan().evaluatorStepSeconds)))
                        : qPrintable(QStringLiteral("no plan: ") + failure));
    std::printf("longest stall         %8.1f ms while loading and analysing (p99 %.1f ms; GUI thread busy at most %.1f ms)\n",
                analysisStall, analysisP99, analysisBusy);
    std::printf("longest stall         %8.1f ms while searching (p99 %.1f ms; busy at most %.1f ms)\n", searchStall, searchP99, searchBusy);
    std::printf("longest stall         %8.1f ms while the plan's views and charts fill (busy at most %.1f ms)\n", viewsStall, viewsBusy);
    std::printf("profile type T%d       %8.1f ms, %s backend, %d combinations shown%s (%s)\n", layerType, profileMs,
                simulated ? "simulated" : "cuda", profileRows, profileCancelled ? ", cancelled after 60 s" : "",
                qPrintable(profilerPanel->statusText().left(110)));
    std::printf("longest stall         %8.1f ms while profiling (p99 %.1f ms; busy at most %.1f ms)\n", profileStall, profileP99, profileBusy);
    std::printf("expand layer run      %8.1f ms (GUI thread)\n", expandRunMs);
    std::printf("expand one block      %8.1f ms (%zu ops, GUI thread)\n", expandBlockMs, members);
    std::printf("expand largest block  %8.1f ms (%zu ops, %zu laid out, GUI thread)\n", expandLargestMs, largestMembers,
                std::min<size_t>(largestMembers, 240));
    return 0;
}
