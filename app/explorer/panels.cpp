#include "panels.h"

#include <memory>
#include <set>
#include <QMessageBox>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QTreeView>
#include <QTreeWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include <cmath>
#include <mutex>

#include "charts.h"
#include "hardware/hardware.h"
#include "models.h"
#include "plan/unaligned.h"
#include "profiler/profile_db.h"
#include "profiler/profiler.h"
#include "profiler/session.h"

namespace cfp::explorer {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

// ---------------------------------------------------------------------------------------------
// ClusterPanel

ClusterPanel::ClusterPanel(Explorer* explorer, QWidget* parent) : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("clusterPanel"));
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto* modelRow = new QHBoxLayout;
    m_model = new QLabel(this);
    m_model->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_model->setWordWrap(true);
    auto* open = new QToolButton(this);
    open->setText(tr("Open…"));
    connect(open, &QToolButton::clicked, this, &ClusterPanel::openModelRequested);
    modelRow->addWidget(m_model, 1);
    modelRow->addWidget(open);
    form->addRow(tr("Model"), modelRow);

    m_batch = new QSpinBox(this);
    m_batch->setRange(1, 1 << 20);
    m_batch->setToolTip(tr("Global batch: sequences per optimizer step"));
    m_seq = new QSpinBox(this);
    m_seq->setRange(0, 1 << 20);
    m_seq->setSpecialValueText(tr("default"));
    m_seq->setToolTip(tr("Tokens per sequence (default: the model's context, at most 2048)"));
    m_dtype = new QComboBox(this);
    m_dtype->addItems({QStringLiteral("bf16"), QStringLiteral("f32")});
    m_qkv = new QComboBox(this);
    m_qkv->addItems({QStringLiteral("fused"), QStringLiteral("separate")});
    m_qkv->setToolTip(tr("One fused QKV projection or three"));
    m_accumulation = new QSpinBox(this);
    m_accumulation->setObjectName(QStringLiteral("accumulationBox"));
    m_accumulation->setRange(0, 1 << 20);
    m_accumulation->setSpecialValueText(tr("auto"));
    m_accumulation->setPrefix(tr("× "));
    m_accumulation->setToolTip(tr("Gradient-accumulation rounds per step (auto: the search chooses among the divisors of the global batch); "
                                  "each round is global batch / rounds sequences"));
    form->addRow(tr("Global batch"), m_batch);
    form->addRow(tr("Rounds"), m_accumulation);
    form->addRow(tr("Sequence"), m_seq);
    form->addRow(tr("Precision"), m_dtype);
    form->addRow(tr("QKV"), m_qkv);

    auto* hwRow = new QHBoxLayout;
    m_hardware = new QComboBox(this);
    m_hardware->setEditable(true);
    for (const std::string& id : hardwareNames()) m_hardware->addItem(qs(id));
    m_hardware->setToolTip(tr("A built-in hardware spec, or the path of a JSON spec (docs/hardware-format.md)"));
    auto* browse = new QToolButton(this);
    browse->setText(tr("File…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Hardware spec"), {}, tr("Hardware spec (*.json)"));
        if (!f.isEmpty()) m_hardware->setCurrentText(f);
    });
    hwRow->addWidget(m_hardware, 1);
    hwRow->addWidget(browse);
    form->addRow(tr("Hardware"), hwRow);
    m_hardwareInfo = new QLabel(this);
    m_hardwareInfo->setWordWrap(true);
    m_hardwareInfo->setStyleSheet(QStringLiteral("color: #555;"));
    form->addRow(QString(), m_hardwareInfo);

    m_nodes = new QSpinBox(this);
    m_nodes->setRange(1, 4096);
    m_nodes->setSuffix(tr(" node(s)"));
    form->addRow(tr("Nodes"), m_nodes);
    m_mesh = new QComboBox(this);
    m_mesh->setEditable(true);
    m_mesh->setToolTip(tr("auto: every 1–3-axis mesh aligned with nodes; or a shape such as 8, 2x4, dp=2,tp=4"));
    m_sequenceParallel = new QCheckBox(tr("+ SP"), this);
    m_sequenceParallel->setObjectName(QStringLiteral("sequenceParallelBox"));
    m_sequenceParallel->setToolTip(tr("Also plan every mesh with sequence parallelism over each intra-node axis its plan splits "
                                      "weights over (Megatron-LM --sequence-parallel: norms, dropout and residuals split along "
                                      "the sequence; reduce-scatter and all-gather instead of all-reduce) and keep the fastest"));
    auto* meshRow = new QHBoxLayout;
    meshRow->addWidget(m_mesh, 1);
    meshRow->addWidget(m_sequenceParallel);
    form->addRow(tr("Mesh"), meshRow);
    m_memory = new QDoubleSpinBox(this);
    m_memory->setRange(0, 1 << 20);
    m_memory->setDecimals(1);
    m_memory->setSuffix(tr(" GiB"));
    m_memory->setSpecialValueText(tr("usable"));
    m_memory->setToolTip(tr("Per-device memory a plan may use (usable: the GPU's HBM less the reserve)"));
    m_reserve = new QDoubleSpinBox(this);
    m_reserve->setObjectName(QStringLiteral("reserveBox"));
    m_reserve->setRange(-1, 1 << 20);
    m_reserve->setDecimals(1);
    m_reserve->setSuffix(tr(" GiB"));
    m_reserve->setSpecialValueText(tr("spec's reserve"));
    m_reserve->setToolTip(tr("Kept back from the HBM for the CUDA context, library workspaces, NCCL buffers and allocator "
                             "fragmentation (docs/hardware-format.md)"));
    form->addRow(tr("Memory limit"), m_memory);
    form->addRow(tr("Reserve"), m_reserve);
    m_recompute = new QComboBox(this);
    m_recompute->setObjectName(QStringLiteral("recomputeBox"));
    // Per ParallelBlock (auto, none, all), or per layer as frameworks run it (full, op).
    m_recompute->addItem(QStringLiteral("auto"), QStringLiteral("auto"));
    m_recompute->addItem(QStringLiteral("none"), QStringLiteral("none"));
    m_recompute->addItem(QStringLiteral("all"), QStringLiteral("all"));
    m_recompute->addItem(tr("full (per layer)"), QStringLiteral("layers"));
    m_recompute->addItem(tr("op (per layer, torchtitan)"), QStringLiteral("ops"));
    m_recompute->setToolTip(tr("Activation recomputation. Per ParallelBlock: auto lets the search choose per block where memory "
                               "needs it, none, all. Per layer as frameworks run it: full (every layer recomputed from its input, "
                               "Megatron-LM's --recompute-granularity full), op (torchtitan's per-op selective checkpointing: a "
                               "layer keeps its input, every other linear layer's output and the attention output)"));
    m_zero = new QComboBox(this);
    m_zero->setObjectName(QStringLiteral("zeroBox"));
    // Item data: the stage, -1 for auto.
    m_zero->addItem(tr("ZeRO auto"), -1);
    for (int z = 0; z <= 3; ++z) m_zero->addItem(tr("ZeRO %1").arg(z), z);
    m_zero->setToolTip(tr("Sharded over the axes each weight is replicated on: 0 nothing, 1 optimizer state (Megatron's distributed "
                          "optimizer), 2 and gradients, 3 and weights (FSDP full sharding); auto: 1, and 2 then 3 while the plan "
                          "is shaped by the memory limit or none fits, the fastest kept"));
    // A box of fixed words (the settings' own names), named for tests and scripts.
    auto listBox = [this](const char* name, const QStringList& words, const QString& tip) {
        auto* box = new QComboBox(this);
        box->setObjectName(QString::fromLatin1(name));
        box->addItems(words);
        box->setToolTip(tip);
        return box;
    };
    m_attention = listBox("attentionBox", {QStringLiteral("flash"), QStringLiteral("flash2"), QStringLiteral("eager")},
                         tr("Attention cores as one fused kernel (flash: scores on chip, recomputed in the backward, at the speed "
                            "of the kernel frameworks pick on this GPU, cuDNN's on Hopper; flash2: FlashAttention-2's, PyTorch's "
                            "flash backend) or one kernel per op (eager: scores written and saved)"));
    form->addRow(tr("Attention"), m_attention);
    m_crossEntropy = listBox("crossEntropyBox", {QStringLiteral("fused"), QStringLiteral("inplace"), QStringLiteral("eager")},
                         tr("How the loss runs. fused: one kernel, the logits kept (Megatron-LM --cross-entropy-loss-fusion, a "
                                  "compiled loss); inplace: Megatron-LM's default, the f32 softmax kept and the gradient computed in it; "
                                  "eager: PyTorch F.cross_entropy on f32 logits (torchtitan, Hugging Face), the f32 log-probabilities "
                                  "kept and two f32 gradients at the loss's backward"));
    form->addRow(tr("Cross-entropy"), m_crossEntropy);
    m_fusion = listBox("fusionBox", {QStringLiteral("compiled"), QStringLiteral("eager")},
                         tr("How the ops between the GEMMs run. compiled: chains of elementwise, norm and activation ops fused (XLA, "
                            "torch.compile, Megatron-LM's fused kernels); eager: PyTorch without torch.compile (torchtitan's default), "
                            "one kernel per op, autograd keeping what each backward op reads"));
    form->addRow(tr("Kernels"), m_fusion);
    form->addRow(tr("Recompute"), m_recompute);
    form->addRow(tr("Sharding"), m_zero);
    // The step's schedule (docs/planning.md, "The step as frameworks run it").
    m_overlap = new QComboBox(this);
    m_overlap->setObjectName(QStringLiteral("overlapBox"));
    m_overlap->addItem(tr("overlap gradients and gathers"), QStringLiteral("on"));
    m_overlap->addItem(tr("overlap all, tensor-parallel too"), QStringLiteral("all"));
    m_overlap->addItem(tr("overlap gradients only"), QStringLiteral("grad"));
    m_overlap->addItem(tr("overlap gathers only"), QStringLiteral("param"));
    m_overlap->addItem(tr("no overlap"), QStringLiteral("off"));
    m_overlap->setToolTip(tr("Data-parallel gradient reduction in buckets during the backward and ZeRO/FSDP weight all-gathers "
                             "under compute (DDP, FSDP, Megatron-LM --overlap-grad-reduce --overlap-param-gather), or "
                             "after the backward / the update, on the critical path; all: tensor-parallel communication beside its "
                             "GEMMs too (Megatron-LM --tp-comm-overlap)"));
    m_bucket = new QSpinBox(this);
    m_bucket->setObjectName(QStringLiteral("bucketBox"));
    m_bucket->setRange(1, 100000);
    m_bucket->setSuffix(tr(" MB buckets"));
    m_bucket->setToolTip(tr("Gradient bucket size (Megatron-LM's distributed optimizer: 40M parameters, 80 MB in bf16; PyTorch DDP: 25 MiB)"));
    form->addRow(tr("Schedule"), m_overlap);
    form->addRow(tr("Buckets"), m_bucket);
    // Pipeline stages (docs/planning.md, "Pipeline stages"): the search plans one stage's mesh.
    auto* pipeline = new QHBoxLayout;
    m_stages = new QSpinBox(this);
    m_stages->setObjectName(QStringLiteral("stagesBox"));
    m_stages->setRange(0, 4096);
    m_stages->setPrefix(tr("pp "));
    m_stages->setSpecialValueText(tr("pp auto"));
    m_stages->setToolTip(tr("Pipeline stages: the layers cut into this many stages of devices / pp GPUs each, scheduled 1F1B "
                            "(the mesh then counts one stage's devices; no baselines). pp auto: the search plans no stages "
                            "and every count the nodes and the layers allow, and keeps the fastest (cfp plan --pp auto; one "
                            "search per count)"));
    m_chunks = new QSpinBox(this);
    m_chunks->setObjectName(QStringLiteral("chunksBox"));
    m_chunks->setRange(0, 64);
    m_chunks->setPrefix(tr("vp "));
    m_chunks->setSpecialValueText(tr("vp auto"));
    m_chunks->setToolTip(tr("Model chunks per pipeline rank: more than 1 interleaves them (Megatron-LM's interleaved 1F1B). vp auto: "
                            "the search plans 1 and every count that divides the layers with pp, and keeps the fastest "
                            "(cfp plan --vp auto; one search per count)"));
    m_split = new QLineEdit(this);
    m_split->setObjectName(QStringLiteral("splitEdit"));
    m_split->setPlaceholderText(tr("searched (e.g. 9,3: layers per chunk)"));
    m_split->setToolTip(tr("Layers per chunk in model order, e.g. 9,3 (cfp plan --pp-split). Empty: the search tries the even cut "
                           "and first and last stages with other layer counts (Megatron-LM's --decoder-first/last-pipeline-num-layers) "
                           "and keeps the fastest that fits"));
    pipeline->addWidget(m_stages, 1);
    pipeline->addWidget(m_chunks, 1);
    form->addRow(tr("Pipeline"), pipeline);
    form->addRow(tr("Stage split"), m_split);
    // The schedules the planner prices (plannerPricesSchedule); auto = Megatron-LM's choice.
    m_schedule = new QComboBox(this);
    m_schedule->setObjectName(QStringLiteral("scheduleBox"));
    m_schedule->addItem(tr("auto (1f1b; interleaved with vp > 1)"), QStringLiteral("auto"));
    for (PipeScheduleKind k : {PipeScheduleKind::OneFOneB, PipeScheduleKind::Interleaved, PipeScheduleKind::GPipe,
                               PipeScheduleKind::ZeroBubbleH1, PipeScheduleKind::ZeroBubbleH2, PipeScheduleKind::ZeroBubbleV,
                               PipeScheduleKind::DualPipeV, PipeScheduleKind::DualPipe})
        if (plannerPricesSchedule(k)) m_schedule->addItem(qs(std::string(pipeScheduleName(k))), qs(std::string(pipeScheduleName(k))));
    m_schedule->addItem(tr("mip (schedule optimiser)"), QStringLiteral("mip"));
    m_schedule->addItem(tr("mip in a V (vp 2, from zb-v)"), QStringLiteral("mip-v"));
    m_schedule->addItem(tr("custom (schedule CSV)"), QStringLiteral("custom"));
    m_schedule->setToolTip(tr("The pipeline schedule the plan is priced with (cfp plan --schedule): 1F1B, interleaved 1F1B "
                              "(vp > 1), GPipe, the zero-bubble ZB-H1 and ZB-H2 (more micro-batches in flight, less bubble), "
                              "ZB-V and DualPipeV with vp 2 (the chunks in a V: the first and the last on rank 0), mip (the plan "
                              "searched with 1F1B, then its schedule optimised by CBC at its stages' times, holding no more "
                              "micro-batches than the fastest generated schedule that fits; up to its time limit more) or custom (the actions of a schedule CSV). "
                              "DualPipe runs two copies of the model from both ends (rank r holds chunks r and pp − 1 − r: twice the "
                              "parameters, their gradients summed between the two; pp even, micro-batches even and at least 2 pp; vp is 2)"));
    form->addRow(tr("Pipe schedule"), m_schedule);
    m_scheduleCsv = new QLineEdit(this);
    m_scheduleCsv->setObjectName(QStringLiteral("scheduleCsvEdit"));
    m_scheduleCsv->setPlaceholderText(tr("schedule.csv (custom)"));
    m_scheduleCsv->setToolTip(tr("A schedule CSV for the custom schedule (cfp plan --schedule-csv): one line per rank of PyTorch "
                                 "action strings such as 0F0,0I0,0W0; its micro-batches are the step's rounds. Chunks placed "
                                 "looped, or in a V where that is the only reading with vp 2"));
    auto* browseCsv = new QToolButton(this);
    browseCsv->setText(QStringLiteral("…"));
    browseCsv->setToolTip(tr("Choose a schedule CSV"));
    connect(browseCsv, &QToolButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Schedule CSV"), m_scheduleCsv->text(), tr("Schedule CSV (*.csv);;All files (*)"));
        if (file.isEmpty()) return;
        m_scheduleCsv->setText(file);
        m_schedule->setCurrentIndex(m_schedule->findData(QStringLiteral("custom")));
    });
    auto* csvRow = new QHBoxLayout;
    csvRow->addWidget(m_scheduleCsv, 1);
    csvRow->addWidget(browseCsv);
    form->addRow(tr("Schedule CSV"), csvRow);
    m_optimiserSeconds = new QDoubleSpinBox(this);
    m_optimiserSeconds->setObjectName(QStringLiteral("optimiserSecondsBox"));
    m_optimiserSeconds->setRange(1, 3600);
    m_optimiserSeconds->setDecimals(0);
    m_optimiserSeconds->setSuffix(tr(" s"));
    m_optimiserSeconds->setValue(PipelineSettings{}.optimiserSeconds);
    m_optimiserSeconds->setToolTip(tr("mip: seconds for the schedule optimiser (cfp plan --schedule-time-limit); it stops with the best "
                                      "schedule found, never slower than the generated ones"));
    form->addRow(tr("MIP time limit"), m_optimiserSeconds);
    const auto pipelined = [this, browseCsv] {
        m_schedule->setEnabled(m_stages->value() != 1);
        m_split->setEnabled(m_stages->value() > 1);
        const bool custom = m_stages->value() > 1 && m_schedule->currentData().toString() == QLatin1String("custom");
        m_scheduleCsv->setEnabled(custom);
        browseCsv->setEnabled(m_stages->value() > 1);
        m_optimiserSeconds->setEnabled(m_stages->value() > 1 && m_schedule->currentData().toString().startsWith(QLatin1String("mip")));
    };
    connect(m_stages, &QSpinBox::valueChanged, this, pipelined);
    connect(m_schedule, &QComboBox::currentIndexChanged, this, pipelined);
    pipelined();

    auto* apply = new QPushButton(tr("Apply and analyse"), this);
    apply->setObjectName(QStringLiteral("applyButton"));
    connect(apply, &QPushButton::clicked, this, &ClusterPanel::apply);
    form->addRow(QString(), apply);
    // A combo box is as wide as its dock allows, not as its longest item (the panel fits a
    // 280-px dock on a 1280-px screen).
    for (QComboBox* box : findChildren<QComboBox*>()) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(8);
    }
    m_editedNote = new QLabel(tr("Edited: <b>Apply and analyse</b> to use these settings"), this);
    m_editedNote->setObjectName(QStringLiteral("editedNote"));
    m_editedNote->setWordWrap(true);
    m_editedNote->setStyleSheet(QStringLiteral("color: #b06000;"));
    m_editedNote->hide();
    form->addRow(QString(), m_editedNote);
    // Any change a person makes (not refresh's) is an edit until applied.
    auto edited = [this] {
        if (m_refreshing) return;
        m_edited = true;
        m_editedNote->show();
    };
    for (QSpinBox* box : findChildren<QSpinBox*>()) connect(box, &QSpinBox::valueChanged, this, edited);
    for (QDoubleSpinBox* box : findChildren<QDoubleSpinBox*>()) connect(box, &QDoubleSpinBox::valueChanged, this, edited);
    for (QComboBox* box : findChildren<QComboBox*>()) connect(box, &QComboBox::currentTextChanged, this, edited);
    for (QCheckBox* box : findChildren<QCheckBox*>()) connect(box, &QCheckBox::toggled, this, edited);
    connect(m_split, &QLineEdit::textEdited, this, edited);
    connect(m_scheduleCsv, &QLineEdit::textChanged, this, edited);

    connect(m_hardware, &QComboBox::currentTextChanged, this, &ClusterPanel::updateMeshChoices);
    connect(m_nodes, &QSpinBox::valueChanged, this, &ClusterPanel::updateMeshChoices);
    connect(m_stages, &QSpinBox::valueChanged, this, &ClusterPanel::updateMeshChoices);
    connect(explorer, &Explorer::modelChanged, this, &ClusterPanel::followModel);
    connect(explorer, &Explorer::analysisChanged, this, &ClusterPanel::followModel);
    refresh();
}

void ClusterPanel::followModel() {
    if (!m_edited) {
        refresh();
        return;
    }
    // Edits not applied yet are the person's work: kept, and still marked.
    m_model->setText(qs(m_explorer->request().model.source));
}

void ClusterPanel::refresh() {
    m_refreshing = true;
    m_edited = false;
    m_editedNote->hide();
    const PlanRequest& p = m_explorer->request();
    m_model->setText(qs(p.model.source));
    m_batch->setValue(static_cast<int>(p.model.build.batch));
    m_seq->setValue(static_cast<int>(p.model.build.seq));
    m_dtype->setCurrentText(qs(std::string(dtypeName(p.model.build.dtype))));
    m_qkv->setCurrentIndex(p.model.build.qkv == QkvLayout::Separate ? 1 : 0);
    m_hardware->setCurrentText(qs(p.hardware));
    m_nodes->setValue(static_cast<int>(p.nodes));
    updateMeshChoices();
    m_mesh->setCurrentText(qs(p.mesh.isAuto() ? std::string("auto") : meshShapeText(p.mesh.mesh())));
    m_memory->setValue(static_cast<double>(p.memoryLimitBytes.value_or(0)) / kGiB);
    m_reserve->setValue(p.memoryReserveBytes ? static_cast<double>(*p.memoryReserveBytes) / kGiB : -1.0);
    m_accumulation->setValue(static_cast<int>(p.accumulation.value_or(0)));
    m_recompute->setCurrentIndex(std::max(0, m_recompute->findData(qs(std::string(recomputePolicyName(p.policy.recompute))))));
    m_attention->setCurrentText(qs(std::string(attentionKernelName(p.policy.attention))));
    m_crossEntropy->setCurrentText(qs(std::string(crossEntropyKernelName(p.policy.crossEntropy))));
    m_fusion->setCurrentText(qs(std::string(kernelFusionName(p.policy.fusion))));
    m_zero->setCurrentIndex(m_zero->findData(p.searchZero ? -1 : zeroStageOf(p.policy)));
    m_overlap->setCurrentIndex(std::max(0, m_overlap->findData(qs(overlapWord(p.policy)))));
    m_sequenceParallel->setChecked(p.searchSequenceParallel);
    m_bucket->setValue(static_cast<int>((p.policy.bucketBytes > 0 ? p.policy.bucketBytes : kDefaultBucketBytes) / 1'000'000));
    m_stages->setValue(std::max<int32_t>(0, p.pipeline.stages));
    m_chunks->setValue(std::max<int32_t>(0, p.pipeline.chunksPerRank));
    QStringList split;
    for (int32_t l : p.pipeline.chunkLayers) split << QString::number(l);
    m_split->setText(split.join(QLatin1Char(',')));
    const bool chosen = p.pipeline.stages != 1 && p.pipeline.schedule != defaultPipeSchedule(p.pipeline.chunksPerRank);
    const bool mipInV = p.pipeline.schedule == PipeScheduleKind::Mip && p.pipeline.placement == PipePlacement::VShape;
    m_schedule->setCurrentIndex(std::max(0, chosen ? m_schedule->findData(mipInV ? QStringLiteral("mip-v") : qs(std::string(pipeScheduleName(p.pipeline.schedule)))) : 0));
    m_optimiserSeconds->setValue(p.pipeline.optimiserSeconds);
    m_refreshing = false;
}

void ClusterPanel::updateMeshChoices() {
    const QString current = m_mesh->currentText();
    auto hw = loadHardware(m_hardware->currentText().toStdString());
    m_mesh->blockSignals(true);
    m_mesh->clear();
    m_mesh->addItem(QStringLiteral("auto"));
    const bool searchedStages = m_stages && m_stages->value() == PipelineSettings::kSearchedStages;
    if (hw) {
        const int64_t devices = hw->gpusPerNode * m_nodes->value();
        // With pipeline stages the mesh is one stage's.
        const int64_t stages = m_stages ? m_stages->value() : 1;
        if (stages > 0 && devices % stages == 0)
            for (const std::string& m : autoMeshes(devices / stages, std::min<int64_t>(hw->gpusPerNode, devices / stages))) m_mesh->addItem(qs(m));
        m_hardwareInfo->setText(tr("%1: %2 HBM (%3 usable), %4 TFLOP/s bf16, %5 GPUs per node; %6 devices")
                                    .arg(qs(hw->name), formatBytes(static_cast<double>(hw->memoryBytes)),
                                         formatBytes(static_cast<double>(hw->usableMemoryBytes())))
                                    .arg(hw->peakFlopsFor(DType::BF16) / 1e12, 0, 'f', 0)
                                    .arg(hw->gpusPerNode)
                                    .arg(devices));
    } else {
        m_hardwareInfo->setText(qs(hw.error().message));
    }
    // pp auto: every count plans its own meshes (mesh auto only).
    m_mesh->setCurrentText(current.isEmpty() || searchedStages ? QStringLiteral("auto") : current);
    m_mesh->blockSignals(false);
}

void ClusterPanel::apply() {
    BuildOptions b;
    b.batch = m_batch->value();
    b.seq = m_seq->value();
    b.dtype = m_dtype->currentIndex() == 0 ? DType::BF16 : DType::F32;
    b.qkv = m_qkv->currentIndex() == 1 ? QkvLayout::Separate : QkvLayout::Fused;
    m_explorer->setBuildOptions(b);
    ClusterSettings c;
    c.hardware = m_hardware->currentText().trimmed().toStdString();
    c.nodes = m_nodes->value();
    auto mesh = MeshChoice::parse(m_mesh->currentText().trimmed().toStdString());
    if (!mesh) {
        QMessageBox::warning(this, tr("Invalid mesh"), qs(mesh.error().toString()));
        return;
    }
    c.mesh = *mesh;
    const auto limit = static_cast<int64_t>(std::llround(m_memory->value() * kGiB));
    if (limit > 0) c.memoryLimitBytes = limit;
    if (m_reserve->value() >= 0) c.memoryReserveBytes = static_cast<int64_t>(std::llround(m_reserve->value() * kGiB));
    if (m_accumulation->value() > 0) {
        if (b.batch % m_accumulation->value() != 0) {
            QMessageBox::warning(this, tr("Invalid accumulation"),
                                 tr("%1 rounds do not divide the global batch of %2 sequences").arg(m_accumulation->value()).arg(b.batch));
            return;
        }
        c.accumulation = m_accumulation->value();
    }
    c.policy.recompute = parseRecomputePolicy(m_recompute->currentData().toString().toStdString()).value_or(RecomputePolicy::Auto);
    c.searchZero = m_zero->currentData().toInt() < 0;
    c.policy.zeroStage = c.searchZero ? 1 : m_zero->currentData().toInt();
    c.policy.optimizerSharding = c.policy.zeroStage >= 1;
    c.policy.attention = parseAttentionKernel(m_attention->currentText().toStdString()).value_or(AttentionKernel::Flash);
    c.policy.crossEntropy = parseCrossEntropyKernel(m_crossEntropy->currentText().toStdString()).value_or(CrossEntropyKernel::Fused);
    c.policy.fusion = parseKernelFusion(m_fusion->currentText().toStdString()).value_or(KernelFusion::Compiled);
    setOverlapWord(c.policy, m_overlap->currentData().toString().toStdString());
    c.searchSequenceParallel = m_sequenceParallel->isChecked();
    const int64_t bucket = int64_t{m_bucket->value()} * 1'000'000;
    c.policy.bucketBytes = bucket == kDefaultBucketBytes ? 0 : bucket;
    c.pipeline.stages = m_stages->value();
    c.pipeline.chunksPerRank = m_chunks->value();
    c.pipeline.schedule = defaultPipeSchedule(std::max<int32_t>(1, c.pipeline.chunksPerRank));
    if (c.pipeline.chunksPerRank == PipelineSettings::kSearchedChunks && c.pipeline.stages <= 1) {
        QMessageBox::warning(this, tr("Invalid pipeline"), tr("vp auto searches the chunks per rank of a fixed number of stages: set pp to 2 or more"));
        return;
    }
    // "mip-v": the schedule optimiser in a V (cfp plan --schedule mip --placement v).
    const QString chosenSchedule = m_schedule->currentData().toString();
    const bool mipInV = chosenSchedule == QLatin1String("mip-v");
    if (auto k = parsePlannedScheduleKind(mipInV ? std::string("mip") : chosenSchedule.toStdString()); k && c.pipeline.stages != 1)
        c.pipeline.schedule = *k;
    // vp 1 (or auto) with DualPipe: its two stages per rank (cfp plan --schedule dualpipe).
    if (c.pipeline.chunksPerRank <= 1 && defaultChunksPerRank(c.pipeline.schedule) > 1) c.pipeline.chunksPerRank = defaultChunksPerRank(c.pipeline.schedule);
    c.pipeline.optimiserSeconds = m_optimiserSeconds->value();
    c.pipeline.actions.clear();
    c.pipeline.scheduleOrigin.clear();
    c.pipeline.placement = PipePlacement::Looped;
    if (mipInV && c.pipeline.stages != 1) {
        if (c.pipeline.chunksPerRank != 2) {
            QMessageBox::warning(this, tr("Invalid pipeline"), tr("A V places 2 chunks on every rank: set vp to 2 for mip in a V"));
            return;
        }
        c.pipeline.placement = PipePlacement::VShape;
    }
    if (c.pipeline.schedule == PipeScheduleKind::Custom) {
        // The file's actions, checked now (a bad file is said here, not after a search).
        const QString file = m_scheduleCsv->text().trimmed();
        auto fail = [&](const QString& why) { QMessageBox::warning(this, tr("Invalid schedule CSV"), why); };
        if (c.pipeline.stages < 2 || c.pipeline.chunksPerRank < 1) return fail(tr("A custom schedule needs fixed pp > 1 and vp (not auto)"));
        if (file.isEmpty()) return fail(tr("Choose the schedule CSV of the custom schedule"));
        if (auto loaded = loadScheduleCsv(file.toStdString(), std::nullopt, c.pipeline); !loaded) return fail(qs(loaded.error().toString()));
    }
    if (c.pipeline.stages == 1 && c.pipeline.chunksPerRank > 1) {
        QMessageBox::warning(this, tr("Invalid pipeline"), tr("vp %1 needs pp > 1").arg(c.pipeline.chunksPerRank));
        return;
    }
    c.pipeline.chunkLayers.clear();
    if (const QString text = m_split->text().trimmed(); !text.isEmpty() && m_split->isEnabled()) {
        for (const QString& part : text.split(QLatin1Char(','))) {
            bool ok = false;
            const int n = part.trimmed().toInt(&ok);
            if (!ok || n < 1 || n > 1'000'000) {
                QMessageBox::warning(this, tr("Invalid pipeline split"),
                                     tr("The split '%1' is not a list of layer counts such as 9,3 (one per chunk, in model order)").arg(text));
                return;
            }
            c.pipeline.chunkLayers.push_back(n);
        }
        const int64_t chunks = int64_t{c.pipeline.stages} * c.pipeline.chunksPerRank;
        if (static_cast<int64_t>(c.pipeline.chunkLayers.size()) != chunks) {
            QMessageBox::warning(this, tr("Invalid pipeline split"),
                                 tr("The split names %1 chunks; pp %2 × vp %3 makes %4").arg(c.pipeline.chunkLayers.size()).arg(c.pipeline.stages).arg(c.pipeline.chunksPerRank).arg(chunks));
            return;
        }
    }
    m_explorer->setCluster(c);
    m_edited = false;
    m_editedNote->hide();
    m_explorer->analyse();
}

// ---------------------------------------------------------------------------------------------
// SearchPanel

SearchPanel::SearchPanel(Explorer* explorer, QWidget* parent) : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("searchPanel"));
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    m_search = new QPushButton(tr("Search"), this);
    m_search->setObjectName(QStringLiteral("searchButton"));
    m_search->setToolTip(tr("Run the segment DP on every mesh (or the chosen one), off the GUI thread"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    m_cancel->setEnabled(false);
    buttons->addWidget(m_search);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QStringLiteral("%p%"));
    layout->addWidget(m_progress);
    m_stage = new QLabel(tr("idle"), this);
    m_stage->setStyleSheet(QStringLiteral("color: #555;"));
    // Its text changes with every progress update: a fixed size keeps that from re-laying out the
    // window (measured: 8–26 ms per update otherwise).
    m_stage->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_stage->setFixedHeight(m_stage->sizeHint().height());
    layout->addWidget(m_stage);
    m_chart = new BestSoFarChart(this);
    m_chart->setMinimumHeight(150);
    layout->addWidget(m_chart, 1);
    m_result = new QLabel(this);
    m_result->setObjectName(QStringLiteral("searchResult"));
    m_result->setWordWrap(true);
    m_result->setTextFormat(Qt::RichText);
    layout->addWidget(m_result);
    // Price a configuration the user runs today (cfp estimate), beside the plan.
    auto* configRow = new QHBoxLayout;
    configRow->addWidget(new QLabel(tr("Your configuration"), this));
    m_config = new QLineEdit(this);
    m_config->setObjectName(QStringLiteral("configEdit"));
    m_config->setPlaceholderText(QStringLiteral("tp=8,dp=16,zero=1,mbs=1,recompute=full"));
    m_config->setToolTip(tr("A parallel configuration as you run it (Megatron-LM or torchtitan style): tp, dp, zero 0–3, mbs, "
                            "recompute none|selective|full|op (torchtitan's per-op checkpointing), sp on|off (sequence parallelism over tp), "
                            "pp, vp, schedule, cp (context parallelism) with cp_comm p2p|all_gather (keys and values in a ring beside the "
                            "attention, Megatron-LM's default, or gathered before it), overlap, bucket; "
                            "keys left out are chosen (the fastest completion that fits; the result says which). "
                            "Priced with the same cost model and evaluator as the plan (cfp estimate)"));
    configRow->addWidget(m_config, 1);
    m_estimate = new QPushButton(tr("Estimate"), this);
    m_estimate->setObjectName(QStringLiteral("estimateButton"));
    configRow->addWidget(m_estimate);
    layout->addLayout(configRow);
    m_estimateResult = new QLabel(this);
    m_estimateResult->setObjectName(QStringLiteral("estimateResult"));
    m_estimateResult->setWordWrap(true);
    m_estimateResult->setTextFormat(Qt::RichText);
    layout->addWidget(m_estimateResult);
    auto runEstimate = [this] {
        if (!m_config->text().trimmed().isEmpty()) m_explorer->estimate(m_config->text());
    };
    connect(m_estimate, &QPushButton::clicked, this, runEstimate);
    connect(m_config, &QLineEdit::returnPressed, this, runEstimate);
    connect(explorer, &Explorer::estimated, this, &SearchPanel::showEstimate);
    connect(explorer, &Explorer::planChanged, this, &SearchPanel::showEstimate);  // the comparison with the new plan
    connect(explorer, &Explorer::modelChanged, m_estimateResult, &QLabel::clear);

    connect(m_search, &QPushButton::clicked, explorer, &Explorer::search);
    connect(m_cancel, &QPushButton::clicked, explorer, &Explorer::cancelSearch);
    connect(&explorer->jobs(), &JobRunner::jobStarted, this, [this](JobKind kind, const QString&) {
        if (kind != JobKind::Search) return;
        m_search->setEnabled(false);
        m_cancel->setEnabled(true);
        m_progress->setValue(0);
        m_stage->setText(tr("starting…"));
    });
    connect(&explorer->jobs(), &JobRunner::jobFinished, this, [this](JobKind kind, bool ok, const QString& message) {
        if (kind != JobKind::Search) return;
        m_search->setEnabled(true);
        m_cancel->setEnabled(false);
        m_progress->setValue(ok ? 1000 : 0);
        m_stage->setText(ok ? tr("done") : message);
    });
    connect(explorer, &Explorer::searchProgress, this, [this](double fraction, const QString& text) {
        m_progress->setValue(static_cast<int>(fraction * 1000));
        m_stage->setText(text);
    });
    connect(explorer, &Explorer::bestSoFarChanged, this, [this] { m_chart->setPoints(m_explorer->bestSoFar()); });
    connect(explorer, &Explorer::planChanged, this, &SearchPanel::showPlan);
    connect(explorer, &Explorer::planCleared, this, [this] { m_result->clear(); });
}

void SearchPanel::showEstimate() {
    auto run = m_explorer->lastEstimate();
    if (!run) {
        m_estimateResult->clear();
        return;
    }
    auto plan = m_explorer->plan();
    m_estimateResult->setText(estimateText(m_explorer->lastEstimateConfig(), run->outcome.plan, run->model->graph,
                                           plan ? plan->plan().stepSeconds() : 0.0));
}

void SearchPanel::showPlan() {
    auto plan = m_explorer->plan();
    if (!plan) return;
    const PlanOutcome& o = *plan->outcome;
    QStringList reasons;
    QString html = tr("<b>%1</b> per step on <b>%2</b>, %3 of %4 usable per device")
                       .arg(formatSeconds(o.plan.stepSeconds()), qs(meshShapeText(o.plan.mesh)),
                            formatBytes(static_cast<double>(o.plan.memory.total())), formatBytes(static_cast<double>(o.plan.memoryLimitBytes)));
    if (const auto b = planBatch(o.plan, plan->model->graph()))
        html += QStringLiteral("<br>") + batchText(*b).toHtmlEscaped();
    if (!o.plan.searchExact && o.plan.searchCutPairs > 0)
        html += tr(" (search frontier too wide: %1 long-range pair terms approximated; within %2 of the optimum)")
                    .arg(o.plan.searchCutPairs)
                    .arg(formatSeconds(o.plan.searchGapSeconds));
    else if (!o.plan.searchExact)
        html += tr(" (not proven optimal under the memory limit)");
    if (o.stopped) {
        std::set<std::string> searched;
        for (const MeshCandidate& c : o.candidates)
            if (c.note != "search cancelled") searched.insert(c.mesh);
        html += tr("<br><b>Partial result</b>: the search was stopped; the best plan of the %n mesh(es) searched before Cancel, no "
                   "baselines. Search again for the whole result.",
                   nullptr, static_cast<int>(searched.size()));
    }
    if (plan->profile) html += QStringLiteral("<br><small>") + qs(plan->profile->note()).toHtmlEscaped() + QStringLiteral("</small>");
    if (o.candidates.size() > 1) {
        html += QStringLiteral("<br><small>");
        QStringList parts;
        for (const MeshCandidate& c : o.candidates) {
            // A sequence-parallel variant that was not planned: only in the tooltip.
            const bool quietVariant = !c.planned && (!c.sequenceParallelAxis.empty() || c.contextRing);
            auto m = parseMesh(c.mesh);
            const QString name = (m ? qs(meshShapeText(*m)) : qs(c.mesh)) +
                                 (c.sequenceParallelAxis.empty() ? QString() : tr(" +SP %1").arg(qs(c.sequenceParallelAxis))) +
                                 (c.contextRing ? tr(" +ring") : QString());
            if (!quietVariant)
                parts << (c.planned ? QStringLiteral("%1: %2%3")
                                      .arg(name, formatSeconds(c.stepSeconds),
                                           c.simulatedSeconds > 0 ? tr(" (simulated %1)").arg(formatSeconds(c.simulatedSeconds)) : QString())
                                : QStringLiteral("%1: skipped").arg(name));
            // Why a mesh was skipped, as the CLI says it: in the result's tooltip.
            if (!c.planned && !c.note.empty()) reasons << QStringLiteral("%1: %2").arg(name, qs(c.note).toHtmlEscaped());
        }
        html += tr("meshes: ") + parts.join(QStringLiteral(" · ")) + QStringLiteral("</small>");
    }
    QStringList searches;  // the (round count, ZeRO stage) searches: time, meshes skipped, why no plan
    if (plan->tried.size() > 1) {
        QStringList parts;
        for (const AccumulationTry& t : plan->tried) {
            const QString name = tr("ZeRO-%1 × %2").arg(t.zeroStage).arg(t.steps);
            QString part = t.planned ? QStringLiteral("%1: %2").arg(name, formatSeconds(t.stepSeconds)) : tr("%1: no plan").arg(name);
            if (t.steps == o.plan.policy.accumulation && t.zeroStage == zeroStageOf(o.plan.policy)) part = QStringLiteral("<b>%1</b>").arg(part);
            parts << part;
            QString line = tr("%1 (searched in %2").arg(name, formatSeconds(t.searchSeconds));
            if (t.boundSkips > 0)
                line += (t.boundSkips == 1 ? tr("; 1 mesh skipped on an earlier bound") : tr("; %1 meshes skipped on earlier bounds").arg(t.boundSkips));
            if (t.shorterSkips > 0)
                line += tr("; %1 ruled out on memory by a %2-layer copy").arg(t.shorterSkips).arg(kShorterModelLayers);
            if (t.deeperSearches > 0)
                line += tr("; %1 searched on a %2-layer copy with a layer repeated").arg(t.deeperSearches).arg(kShorterModelLayers);
            line += QStringLiteral(")");
            if (!t.planned && !t.note.empty()) line += QStringLiteral(": ") + qs(t.note).toHtmlEscaped();
            searches << line;
        }
        html += QStringLiteral("<br><small>") + tr("ZeRO stage × rounds: ") + parts.join(QStringLiteral(" · ")) + QStringLiteral("</small>");
    }
    QStringList unplanned;  // pipeline-stage counts without a plan, and why
    if (!o.stagesTried.empty()) {
        // pp auto: every count of stages planned, the chosen one in bold.
        const int32_t chosen = o.plan.pipeline ? o.plan.pipeline->stages : 1, chosenChunks = o.plan.pipeline ? o.plan.pipeline->chunksPerRank : 1;
        // vp auto: every try has the same stages, and differs in its chunks per rank.
        const bool chunks = std::all_of(o.stagesTried.begin(), o.stagesTried.end(), [&](const StagesTry& t) { return t.stages == o.stagesTried.front().stages; });
        QStringList parts;
        for (const StagesTry& t : o.stagesTried) {
            const QString name = chunks ? tr("vp %1").arg(t.chunks) : t.stages == 1 ? tr("no stages") : tr("pp %1").arg(t.stages);
            QString part = t.planned ? QStringLiteral("%1: %2").arg(name, formatSeconds(t.stepSeconds)) : tr("%1: no plan").arg(name);
            if (t.stages == chosen && (!chunks || t.chunks == chosenChunks)) part = QStringLiteral("<b>%1</b>").arg(part);
            parts << part;
            if (!t.planned && !t.note.empty()) unplanned << QStringLiteral("%1: %2").arg(name, qs(t.note).toHtmlEscaped());
        }
        html += QStringLiteral("<br><small>") + (chunks ? tr("chunks per rank: ") : tr("pipeline stages: ")) + parts.join(QStringLiteral(" · ")) +
                QStringLiteral("</small>");
    }
    m_result->setText(html);
    QString tip = reasons.isEmpty() ? QString() : tr("Skipped meshes:<br>") + reasons.join(QStringLiteral("<br>"));
    if (!unplanned.isEmpty())
        tip += (tip.isEmpty() ? QString() : QStringLiteral("<br>")) + tr("Pipeline stages without a plan:<br>") + unplanned.join(QStringLiteral("<br>"));
    if (!searches.isEmpty())
        tip += (tip.isEmpty() ? QString() : QStringLiteral("<br>")) + tr("Searches:<br>") + searches.join(QStringLiteral("<br>"));
    m_result->setToolTip(tip);
}

// ---------------------------------------------------------------------------------------------
// Plan panel

PinsCommand::PinsCommand(Explorer* explorer, std::vector<Pin> before, std::vector<Pin> after, const QString& text)
    : m_explorer(explorer), m_before(std::move(before)), m_after(std::move(after)) {
    setText(text);
}

void PinsCommand::undo() { m_explorer->setPins(m_before); }
void PinsCommand::redo() { m_explorer->setPins(m_after); }

PlanPanel::PlanPanel(Explorer* explorer, QWidget* parent) : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("planPanel"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    m_summary = new QLabel(tr("No plan yet."), this);
    m_summary->setObjectName(QStringLiteral("planSummary"));
    m_summary->setTextFormat(Qt::RichText);
    // A long summary wraps instead of widening the window.
    m_summary->setWordWrap(true);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_undo = new QUndoStack(this);
    // The buttons say Undo and Redo; what they undo is their tooltip (a pin's text would widen
    // the window by its length).
    auto shortLabel = [this](QAction* action, const QString& label) {
        auto update = [action, label](const QString& what) {
            action->setText(label);
            action->setToolTip(what.isEmpty() ? label : label + QStringLiteral(": ") + what);
        };
        update({});
        connect(m_undo, label == tr("Undo") ? &QUndoStack::undoTextChanged : &QUndoStack::redoTextChanged, action, update);
        return action;
    };
    auto* undo = new QToolButton(this);
    undo->setDefaultAction(shortLabel(m_undo->createUndoAction(this, tr("Undo")), tr("Undo")));
    auto* redo = new QToolButton(this);
    redo->setDefaultAction(shortLabel(m_undo->createRedoAction(this, tr("Redo")), tr("Redo")));
    auto* clear = new QPushButton(tr("Clear pins"), this);
    connect(clear, &QPushButton::clicked, this, [this] {
        if (!m_explorer->pins().empty())
            m_undo->push(new PinsCommand(m_explorer, m_explorer->pins(), {}, tr("Clear pins")));
    });
    m_research = new QPushButton(tr("Re-search with pins"), this);
    m_research->setObjectName(QStringLiteral("researchButton"));
    connect(m_research, &QPushButton::clicked, explorer, &Explorer::search);
    auto* exportButton = new QPushButton(tr("Export…"), this);
    connect(exportButton, &QPushButton::clicked, this, &PlanPanel::exportRequested);
    auto* save = new QPushButton(tr("Save plan…"), this);
    connect(save, &QPushButton::clicked, this, &PlanPanel::savePlanRequested);
    // The summary over the whole width, the buttons on the row below it (beside it, a narrow
    // window left the summary a column of a few words).
    layout->addWidget(m_summary);
    for (QWidget* w : std::initializer_list<QWidget*>{undo, redo, clear, m_research, exportButton, save}) bar->addWidget(w);
    bar->addStretch(1);
    layout->addLayout(bar);
    m_model = new PlanModel(this);
    m_view = new QTreeView(this);
    m_view->setObjectName(QStringLiteral("planTable"));
    m_view->setModel(m_model);
    m_view->setItemDelegateForColumn(PlanModel::ColCombination, new CombinationDelegate(m_view));
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed | QAbstractItemView::SelectedClicked);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->header()->setStretchLastSection(false);
    m_view->header()->setSectionResizeMode(PlanModel::ColCombination, QHeaderView::Stretch);
    layout->addWidget(m_view, 1);
    m_pins = new QLabel(this);
    m_pins->setWordWrap(true);
    m_pins->setStyleSheet(QStringLiteral("color: #555;"));
    layout->addWidget(m_pins);

    connect(m_model, &PlanModel::pinRequested, this, &PlanPanel::pin);
    connect(m_model, &PlanModel::unpinRequested, this, &PlanPanel::unpin);
    connect(explorer, &Explorer::planChanged, this, &PlanPanel::refresh);
    connect(explorer, &Explorer::planCleared, this, &PlanPanel::refresh);
    connect(explorer, &Explorer::pinsChanged, this, [this] {
        m_model->setPins(m_explorer->pins());
        updateSummary();
        QStringList list;
        for (const Pin& p : m_explorer->pins()) list << qs(p.toString());
        m_pins->setText(list.isEmpty() ? tr("No pins: the search chooses every segment.") : tr("Pins: %1").arg(list.join(QStringLiteral("  "))));
    });
    connect(m_view, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        const QString target = index.data(PlanModel::PinTargetRole).toString();
        if (!target.startsWith(QLatin1Char('T'))) m_explorer->select({Selection::Kind::Segment, target.toInt()});
    });
    m_pins->setText(tr("No pins: the search chooses every segment."));
}

void PlanPanel::pin(const QString& target, const QList<int>& combination) {
    auto plan = m_explorer->plan();
    if (!plan) return;
    const auto& report = *plan->analysis->report;
    int firstBlock = 0;
    if (target.startsWith(QLatin1Char('T'))) {
        const int type = target.mid(1).toInt();
        firstBlock = report.cover.segments[static_cast<size_t>(report.cover.types[static_cast<size_t>(type)].firstSegment)].firstBlock;
    } else {
        firstBlock = report.cover.segments[static_cast<size_t>(target.toInt())].firstBlock;
    }
    const Pin pin = segmentPin(target.toStdString(), report, firstBlock, std::vector<int32_t>(combination.begin(), combination.end()));
    std::vector<Pin> after;
    for (const Pin& p : m_explorer->pins())
        if (p.target() != target.toStdString()) after.push_back(p);
    after.push_back(pin);
    m_undo->push(new PinsCommand(m_explorer, m_explorer->pins(), after, tr("Pin %1").arg(qs(pin.toString()))));
}

void PlanPanel::unpin(const QString& target) {
    std::vector<Pin> after;
    for (const Pin& p : m_explorer->pins())
        if (p.target() != target.toStdString()) after.push_back(p);
    if (after.size() == m_explorer->pins().size()) return;
    m_undo->push(new PinsCommand(m_explorer, m_explorer->pins(), after, tr("Unpin %1").arg(target)));
}

void PlanPanel::refresh() {
    auto plan = m_explorer->plan();
    auto previous = m_explorer->previousPlan();
    m_model->setData(plan, previous, m_explorer->pins());
    m_view->expandToDepth(0);
    for (int c = 0; c < PlanModel::ColCount; ++c)
        if (c != PlanModel::ColCombination) m_view->resizeColumnToContents(c);
    updateSummary();
}

void PlanPanel::updateSummary() {
    auto plan = m_explorer->plan();
    auto previous = m_explorer->previousPlan();
    if (!plan) {
        m_summary->setText(tr("No plan yet."));
        return;
    }
    const Plan& p = plan->plan();
    QString text;
    // What a person must know before reading the numbers: the plan is partial, or out of date.
    if (plan->outcome->stopped)
        text += tr("<b style='color:#b06000'>Partial</b>: the search was stopped before every mesh was searched · ");
    if (p.pins != m_explorer->pins())
        text += tr("<b style='color:#b06000'>Out of date</b>: the pins changed since this plan; re-search for a plan that honours them · ");
    const double headroom = static_cast<double>(p.memoryLimitBytes - p.memory.total());
    text += tr("<b>%1</b> per step · %2 of %3 per device (%4 headroom) · mesh %5 · %6")
                .arg(formatSeconds(p.stepSeconds()), formatBytes(static_cast<double>(p.memory.total())),
                     formatBytes(static_cast<double>(p.memoryLimitBytes)), formatBytes(headroom), qs(meshShapeText(p.mesh)),
                     provenanceText(p.step.provenance));
    if (previous) {
        const double d = p.stepSeconds() - previous->plan().stepSeconds();
        const double rel = previous->plan().stepSeconds() > 0 ? d / previous->plan().stepSeconds() * 100 : 0;
        const QString delta = formatDelta(d);
        text += tr(" · <span style='color:%1'>%2 (%3%) vs previous plan</span>")
                    .arg(delta == QStringLiteral("±0") ? QStringLiteral("#555") : d > 0 ? QStringLiteral("#c03030") : QStringLiteral("#208030"))
                    .arg(delta)
                    .arg(delta == QStringLiteral("±0") ? QStringLiteral("±0.0") : (rel >= 0 ? QStringLiteral("+") : QStringLiteral("−")) + QString::number(std::abs(rel), 'f', 1));
    }
    auto line = [&text](const QString& t) {
        if (!t.isEmpty()) text += QStringLiteral("<br><small>") + t.toHtmlEscaped() + QStringLiteral("</small>");
    };
    // Throughput as the training log reports it, the plan in DP/TP/ZeRO terms, the step's split,
    // and the plan against the baselines (the wrapping summary's next lines).
    if (const auto t = planThroughput(p, plan->model->graph(), plan->outcome->problem->model().hardware())) line(qs(throughputText(*t)));
    line(qs(parallelismSummary(p, plan->model->graph())));
    line(stepSplitText(p));
    line(pipelineText(p));
    if (const QString vs = baselineComparisonText(p); !vs.isEmpty()) line(tr("against the baselines: %1").arg(vs));
    // GEMMs a padded dimension would speed up (plan/unaligned.h), in short; the tooltip says it all.
    if (const auto u = planUnalignedGemms(p, plan->model->graph(), plan->outcome->problem->model().hardware())) {
        line(tr("unaligned GEMMs (dimension %1): %2 of the step, about %3 padded")
                 .arg(u->dims.empty() ? QString() : QString::number(u->dims.front()))
                 .arg(formatSeconds(u->seconds))
                 .arg(formatSeconds(u->alignedSeconds)));
        m_summary->setToolTip(qs(unalignedGemmsText(*u)));
    } else {
        m_summary->setToolTip(QString());
    }
    m_summary->setText(text);
}

// ---------------------------------------------------------------------------------------------
// Profiler panel

// Lets the GUI thread cancel the session that runs on the profiler thread (ProfilerSession::cancel
// may be called from any thread; the session lives on the worker's stack while it runs).
struct ProfilerPanel::CancelBridge {
    std::mutex mutex;
    profiler::ProfilerSession* session = nullptr;
    bool cancelled = false;
    void attach(profiler::ProfilerSession* s) {
        std::lock_guard lock(mutex);
        session = s;
        if (cancelled) s->cancel();
    }
    void detach() {
        std::lock_guard lock(mutex);
        session = nullptr;
    }
    void cancel() {
        std::lock_guard lock(mutex);
        cancelled = true;
        if (session) session->cancel();
    }
    bool cancelRequested() {
        std::lock_guard lock(mutex);
        return cancelled;
    }
};

QString ProfilerPanel::defaultDbPath() {
    // Not AppDataLocation itself: that is GENERIC/organization/application, and the app's
    // organization and application names are both "cfp-explorer" (cfp-explorer/cfp-explorer). Its
    // last component is the application's directory; it goes directly under the generic location.
    const QString appDir = QFileInfo(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).fileName();
    const QString dataDir = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    return QDir(dataDir).filePath(appDir + QStringLiteral("/profile.db"));
}

QString ProfilerPanel::runDbPath() const {
    const QString db = m_db->text().trimmed();
    if (db.isEmpty() || !m_simulate->isChecked()) return db;
    return qs(profiler::simulatedDbPath(db.toStdString()));
}

QString ProfilerPanel::progressText() const { return m_progressText->text(); }

ProfilerPanel::ProfilerPanel(Explorer* explorer, QWidget* parent) : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("profilerPanel"));
    auto* layout = new QVBoxLayout(this);
    m_backend = new QLabel(this);
    m_backend->setWordWrap(true);
    layout->addWidget(m_backend);
    m_devices = new QTreeWidget(this);
    m_devices->setHeaderLabels({tr("GPU"), tr("name"), tr("memory"), tr("SMs"), tr("arch")});
    m_devices->setRootIsDecorated(false);
    m_devices->setMaximumHeight(90);
    layout->addWidget(m_devices);
    auto* form = new QFormLayout;
    auto* dbRow = new QHBoxLayout;
    m_db = new QLineEdit(this);
    m_db->setObjectName(QStringLiteral("profileDbEdit"));
    m_db->setToolTip(tr("SQLite profile DB: measurements are stored here and not taken twice"));
    m_db->setText(!explorer->request().profile ? defaultDbPath() : qs(explorer->request().profile->database));
    auto* browse = new QToolButton(this);
    browse->setText(tr("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Profile DB"), m_db->text(), tr("Profile DB (*.db)"), nullptr,
                                                       QFileDialog::DontConfirmOverwrite);
        if (!f.isEmpty()) m_db->setText(f);
    });
    dbRow->addWidget(m_db, 1);
    dbRow->addWidget(browse);
    form->addRow(tr("Profile DB"), dbRow);
    m_types = new QLineEdit(this);
    m_types->setObjectName(QStringLiteral("profileTypesEdit"));
    m_types->setPlaceholderText(tr("all segment types (or e.g. T1 or T0,T2)"));
    form->addRow(tr("Types"), m_types);
    m_simulate = new QCheckBox(tr("simulate (no GPU: times from the analytic model, kept in a DB of their own)"), this);
    m_simulate->setToolTip(tr("Simulated numbers are the cost model's own: they go to NAME.simulated.db beside the profile DB "
                              "and are never used for planning in place of measurements"));
    connect(m_simulate, &QCheckBox::toggled, this, [this](bool on) {
        if (on && !m_bridge) m_status->setText(tr("Simulated runs are stored in %1, not in the profile DB.").arg(runDbPath()));
    });
    form->addRow(QString(), m_simulate);
    m_useInSearch = new QCheckBox(tr("plan with this DB's measurements"), this);
    m_useInSearch->setChecked(explorer->request().profile.has_value());
    connect(m_useInSearch, &QCheckBox::toggled, this, [this](bool on) {
        m_explorer->setProfileDb(on ? m_db->text().toStdString() : std::string());
    });
    connect(m_db, &QLineEdit::editingFinished, this, [this] {
        if (m_useInSearch->isChecked()) m_explorer->setProfileDb(m_db->text().toStdString());
    });
    form->addRow(QString(), m_useInSearch);
    layout->addLayout(form);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    auto* buttons = new QHBoxLayout;
    auto* refresh = new QPushButton(tr("Find GPUs"), this);
    m_start = new QPushButton(tr("Profile segment types"), this);
    m_start->setObjectName(QStringLiteral("profileButton"));
    m_start->setToolTip(tr("Measure every segment type of the model under every combination of its blocks' strategies"));
    m_kernels = new QPushButton(tr("Kernels vs model"), this);
    m_kernels->setObjectName(QStringLiteral("kernelsButton"));
    m_kernels->setToolTip(tr("Measure each kernel of the model's step on one GPU — its GEMMs forward and backward, streaming copies — "
                             "against the cost model's price with the hardware spec's numbers (as cfp profile --kernels); "
                             "nothing is stored"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setEnabled(false);
    buttons->addWidget(refresh);
    buttons->addWidget(m_start);
    buttons->addWidget(m_kernels);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    layout->addWidget(m_progress);
    m_progressText = new QLabel(this);
    m_progressText->setStyleSheet(QStringLiteral("color: #555;"));
    m_progressText->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_progressText->setFixedHeight(m_progressText->sizeHint().height());
    layout->addWidget(m_progressText);
    m_measurements = new QTreeWidget(this);
    m_measurements->setObjectName(QStringLiteral("measurements"));
    m_measurements->setHeaderLabels({tr("type"), tr("combination"), tr("status"), tr("measured"), tr("model"), tr("error"), tr("memory")});
    m_measurements->setRootIsDecorated(false);
    m_measurements->setUniformRowHeights(true);
    layout->addWidget(m_measurements, 1);
    connect(refresh, &QPushButton::clicked, this, &ProfilerPanel::discover);
    connect(m_start, &QPushButton::clicked, this, &ProfilerPanel::start);
    connect(m_kernels, &QPushButton::clicked, this, &ProfilerPanel::startKernels);
    connect(m_cancel, &QPushButton::clicked, this, &ProfilerPanel::cancel);
    connect(&explorer->jobs(), &JobRunner::jobProgress, this, [this](JobKind kind, double fraction, const QString& text) {
        // After Cancel the session's last estimate is no longer true: progress is not shown again.
        if (kind != JobKind::Profile || !m_bridge || m_bridge->cancelRequested()) return;
        m_progress->setValue(static_cast<int>(fraction * 1000));
        m_progressText->setText(text);
    });
    m_backend->setText(tr("Profiler backend: checking…"));
    if (!profiler::profileDbAvailable()) m_status->setText(tr("This build has no SQLite: measurements cannot be stored."));
}

ProfilerPanel::~ProfilerPanel() {
    if (m_bridge) m_bridge->cancel();
}

QString ProfilerPanel::statusText() const { return m_status->text(); }

void ProfilerPanel::refresh() {
    const std::string db = m_explorer->request().profile ? m_explorer->request().profile->database : std::string();
    m_useInSearch->blockSignals(true);
    m_useInSearch->setChecked(!db.empty());
    m_useInSearch->blockSignals(false);
    if (!db.empty()) m_db->setText(qs(db));
}

bool ProfilerPanel::isRunning() const { return m_bridge != nullptr; }

void ProfilerPanel::discover() {
    struct Found {
        profiler::BackendInfo backend;
        std::vector<profiler::GpuInfo> devices;
        QString why;
    };
    if (m_bridge) return;  // the profiler thread is busy profiling
    m_status->setText(tr("Looking for GPUs on the profiler thread…"));
    m_explorer->jobs().start<Found>(
        JobKind::Profile, tr("Finding GPUs"),
        [](JobContext&) -> Result<Found> {
            Found f;
            f.backend = profiler::backendInfo();
            auto d = profiler::discoverDevices();
            if (d) f.devices = *d;
            else f.why = QString::fromStdString(d.error().message);
            return f;
        },
        [this](Result<Found> r) {
            if (!r) return;
            m_backend->setText(tr("Profiler backend: %1").arg(qs(r->backend.description)));
            m_devices->clear();
            for (const auto& d : r->devices)
                new QTreeWidgetItem(m_devices, {QString::number(d.index), qs(d.name), formatBytes(static_cast<double>(d.memoryBytes)),
                                                QString::number(d.smCount), QStringLiteral("sm_%1%2").arg(d.computeMajor).arg(d.computeMinor)});
            m_simulate->setChecked(r->devices.empty());
            if (r->devices.empty())
                m_status->setText(tr("No GPU can be profiled: %1. The analytic cost model serves (costs marked “modelled”); "
                                     "“simulate” runs the profiling pipeline on the model's own numbers.")
                                      .arg(r->why));
            else
                m_status->setText(tr("%1 GPU(s) found.").arg(r->devices.size()));
        });
}

void ProfilerPanel::start() { run(false); }

void ProfilerPanel::startKernels() { run(true); }

void ProfilerPanel::run(bool kernels) {
    auto model = m_explorer->model();
    if (!model) {
        m_status->setText(tr("Open a model first."));
        return;
    }
    if (m_bridge) return;
    const PlanRequest& request = m_explorer->request();
    auto cluster = requestedCluster(request);
    if (!cluster) {
        m_status->setText(qs(cluster.error().toString()));
        return;
    }
    profiler::SessionConfig config;
    config.graph = std::shared_ptr<const Graph>(model, &model->graph());
    config.modelName = model->graph().name();
    config.cluster = *cluster;
    config.hardwareSpec = request.hardware;
    // The plan's mesh when there is a plan (its segment types are the ones on show), else the chosen one.
    if (auto plan = m_explorer->plan(); plan && plan->model == model) config.mesh = meshShapeText(plan->plan().mesh);
    else if (!request.mesh.isAuto()) config.mesh = request.mesh.toString();
    config.policy = request.policy;
    config.kernels = kernels;  // one GPU, nothing read from or stored in the DB (the session's kernel mode)
    for (QString part : (kernels ? QString() : m_types->text()).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        part = part.trimmed();
        if (part.startsWith(QLatin1Char('T'), Qt::CaseInsensitive)) part = part.mid(1);
        bool ok = false;
        const int t = part.toInt(&ok);
        if (!ok || t < 0) {
            m_status->setText(tr("Types: '%1' is not a segment type such as T1").arg(m_types->text()));
            return;
        }
        config.segmentTypes.push_back(t);
    }
    const bool simulate = m_simulate->isChecked();
    const QString db = kernels ? QString() : runDbPath();
    if (!db.isEmpty() && profiler::profileDbAvailable()) {
        QDir().mkpath(QFileInfo(db).absolutePath());
        config.dbPath = db.toStdString();
    }
    auto bridge = std::make_shared<CancelBridge>();
    m_bridge = bridge;
    m_measurements->clear();
    if (kernels)
        m_measurements->setHeaderLabels({tr("group"), tr("kernel"), tr("shape"), tr("measured"), tr("model"), tr("error"), tr("status")});
    else
        m_measurements->setHeaderLabels({tr("type"), tr("combination"), tr("status"), tr("measured"), tr("model"), tr("error"), tr("memory")});
    m_progress->setValue(0);
    m_progressText->clear();
    m_start->setEnabled(false);
    m_kernels->setEnabled(false);
    m_cancel->setEnabled(true);
    m_status->setText(simulate ? tr("Profiling (simulated) on the profiler thread…") : tr("Profiling on the profiler thread…"));
    m_explorer->jobs().start<profiler::ProfileReport>(
        JobKind::Profile, tr("Profiling"),
        [this, config, simulate, bridge](JobContext& ctx) -> Result<profiler::ProfileReport> {
            std::unique_ptr<profiler::MeasureBackend> backend;
            if (simulate) {
                backend = std::make_unique<profiler::SimulatedBackend>();
            } else {
                auto b = profiler::makeCudaBackend();
                if (!b) return b.error();
                backend = std::move(*b);
            }
            profiler::ProfilerSession::Callbacks callbacks;
            callbacks.progress = [&ctx, bridge](const profiler::SessionProgress& p) {
                if (ctx.cancelled()) bridge->cancel();  // the window is closing or a newer job replaced this one
                const double fraction = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 0.0;
                QString text;
                if (p.stage == "candidates") {
                    text = QString::fromStdString(p.message);
                } else {
                    text = QStringLiteral("%1 %2/%3").arg(QString::fromStdString(p.stage)).arg(p.done).arg(p.total);
                    if (p.segmentType >= 0)
                        text += QStringLiteral(" · T%1 (%2 of %3 types)").arg(p.segmentType).arg(p.typeIndex + 1).arg(p.typeCount);
                }
                // The session's estimate: wall time per combination measured so far × combinations left.
                if (p.remainingSeconds >= 1) text += QStringLiteral(" · about %1 left").arg(formatDuration(p.remainingSeconds));
                else if (p.remainingSeconds >= 0 && p.done < p.total) text += QStringLiteral(" · under a second left");
                ctx.progress(std::min(fraction, 0.999), text);
            };
            callbacks.result = [&ctx, this](const profiler::CombinationResult& r) {
                ctx.post([this, r] {
                    const double err = r.predictedSeconds > 0 && r.seconds > 0 ? (r.predictedSeconds - r.seconds) / r.seconds * 100 : 0;
                    const QStringList columns{
                        QStringLiteral("T%1").arg(r.segmentType), qs(r.label),
                        qs(std::string(profiler::combinationStatusName(r.status))) + (r.reused ? tr(" (DB)") : QString()),
                        r.seconds > 0 ? formatSeconds(r.seconds) : QString(), formatSeconds(r.predictedSeconds),
                        r.seconds > 0 ? QStringLiteral("%1%2%").arg(err >= 0 ? QStringLiteral("+") : QString()).arg(err, 0, 'f', 1) : QString(),
                        formatBytes(static_cast<double>(r.memoryBytes))};
                    // A combination measured again in full (an abandoned least-memory one) replaces its row.
                    const QString id = QStringLiteral("T%1:%2").arg(r.segmentType).arg(qs(r.key));
                    QTreeWidgetItem* item = nullptr;
                    for (int i = m_measurements->topLevelItemCount() - 1; i >= 0 && !item; --i)
                        if (m_measurements->topLevelItem(i)->data(0, Qt::UserRole).toString() == id) item = m_measurements->topLevelItem(i);
                    if (item) {
                        for (int c = 0; c < columns.size(); ++c) item->setText(c, columns[c]);
                    } else {
                        item = new QTreeWidgetItem(m_measurements, columns);
                        item->setData(0, Qt::UserRole, id);
                    }
                    item->setToolTip(1, qs(r.note));
                    // "abandoned": stopped early, slower than the protocol's factor × the best so far of its type.
                    item->setToolTip(2, r.status == profiler::CombinationStatus::Abandoned
                                            ? tr("Stopped early: slower than the protocol's factor times the best of its type so far; "
                                                 "the time shown is a lower bound. %1").arg(qs(r.note))
                                            : qs(r.note));
                    m_measurements->scrollToItem(item);
                });
            };
            profiler::ProfilerSession session(config, std::move(backend), callbacks);
            bridge->attach(&session);
            auto report = session.run();
            bridge->detach();
            return report;
        },
        [this, db, simulate, kernels](Result<profiler::ProfileReport> r) {
            m_bridge.reset();
            m_start->setEnabled(true);
            m_kernels->setEnabled(true);
            m_cancel->setEnabled(false);
            if (!r) {
                m_progress->setValue(0);
                m_progressText->clear();
                m_status->setText(tr("Profiling failed: %1").arg(qs(r.error().toString())));
                emit profilingFinished(false);
                return;
            }
            if (kernels) {
                showKernels(*r);
                emit profilingFinished(!r->cancelled);
                return;
            }
            int measured = 0, reused = 0, abandoned = 0, other = 0;
            QStringList selections;
            for (const auto& t : r->types) {
                measured += t.measured;
                reused += t.reused;
                abandoned += t.abandoned;
                other += t.infeasible + t.failed;
                if (!t.selection.empty()) selections << tr("T%1: %2").arg(t.type).arg(qs(t.selection));
            }
            m_progress->setValue(r->cancelled ? m_progress->value() : 1000);
            // No estimate survives the run.
            m_progressText->setText(r->cancelled ? tr("Cancelled after %n combination(s).", nullptr, static_cast<int>(r->results.size()))
                                                 : tr("Done: %n combination(s).", nullptr, static_cast<int>(r->results.size())));
            QString text = tr("%1 %2: %3 combinations measured, %4 from the DB, %5 abandoned, %6 infeasible or failed, in %7")
                               .arg(r->cancelled ? tr("Cancelled;") : tr("Done"), qs(r->backend))
                               .arg(measured)
                               .arg(reused)
                               .arg(abandoned)
                               .arg(other)
                               .arg(formatSeconds(r->seconds));
            if (!selections.isEmpty()) text += tr(". Large types on the cost model's candidates: %1").arg(selections.join(QStringLiteral("; ")));
            if (!r->dbPath.empty()) {
                text += tr(". Stored in %1").arg(qs(r->dbPath));
                if (simulate) {
                    // Simulated numbers are the model's own: the search keeps planning as it did.
                    text += tr(" (simulated: not used for planning)");
                } else if (m_useInSearch->isChecked() || !r->cancelled) {
                    m_useInSearch->setChecked(true);
                    m_explorer->setProfileDb(db.toStdString());
                    text += tr("; the next search plans with it");
                }
            }
            m_status->setText(text + QLatin1Char('.'));
            emit profilingFinished(!r->cancelled);
        });
}

void ProfilerPanel::showKernels(const profiler::ProfileReport& r) {
    int unmeasured = 0;
    for (const profiler::KernelResult& k : r.kernels) {
        const profiler::KernelCase& c = k.kernel;
        const bool ok = k.measured && k.status == profiler::CombinationStatus::Measured && k.seconds > 0;
        const double err = ok ? (c.predictedSeconds - k.seconds) / k.seconds * 100 : 0;
        unmeasured += !k.measured;
        auto* item = new QTreeWidgetItem(
            m_measurements,
            {qs(std::string(profiler::kernelGroupName(c.group))), qs(c.name), qs(c.shape), ok ? formatSeconds(k.seconds) : QString(),
             formatSeconds(c.predictedSeconds),
             ok ? QStringLiteral("%1%2%").arg(err >= 0 ? QStringLiteral("+") : QString()).arg(err, 0, 'f', 1) : QString(),
             k.measured ? qs(std::string(profiler::combinationStatusName(k.status))) : tr("not run")});
        if (!k.measured)
            item->setToolTip(6, tr("The profiler has no fused attention kernel: bench/reference/kernels.py times it with PyTorch's "
                                   "scaled_dot_product_attention from `cfp profile --kernels --json`"));
        item->setToolTip(1, qs(c.name));
    }
    m_progress->setValue(r.cancelled ? m_progress->value() : 1000);
    m_progressText->setText(r.cancelled ? tr("Cancelled.") : tr("Done: %n kernel(s).", nullptr, static_cast<int>(r.kernels.size())));
    QString text = tr("%1 %2: %3 kernels on one GPU against the '%4' spec's numbers")
                       .arg(r.cancelled ? tr("Cancelled;") : tr("Done"), qs(r.backend))
                       .arg(r.kernels.size())
                       .arg(qs(m_explorer->request().hardware));
    if (r.kernelAccuracy.segments > 0)
        text += tr("; model vs measured over %1: mean %2%, worst %3% (%4)")
                    .arg(r.kernelAccuracy.segments)
                    .arg(100.0 * r.kernelAccuracy.meanRelativeError, 0, 'f', 1)
                    .arg(100.0 * r.kernelAccuracy.worstRelativeError, 0, 'f', 1)
                    .arg(qs(r.kernelAccuracy.worst));
    if (unmeasured > 0) text += tr("; %n attention row(s) priced only (no fused attention kernel in the profiler)", nullptr, unmeasured);
    m_status->setText(text + QLatin1Char('.'));
}

void ProfilerPanel::cancel() {
    if (!m_bridge) return;
    m_bridge->cancel();
    m_status->setText(tr("Cancelling (the measurement in flight finishes first)…"));
    // The estimate was for the whole run: it no longer holds.
    m_progressText->setText(tr("Cancelling…"));
}

// ---------------------------------------------------------------------------------------------
// Export dialog

ExportDialog::ExportDialog(Explorer* explorer, QWidget* parent) : QDialog(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export plan"));
    auto* form = new QFormLayout(this);
    m_format = new QComboBox(this);
    for (const std::string& f : exportFormatNames()) m_format->addItem(qs(f));
    form->addRow(tr("Format"), m_format);
    m_names = new QComboBox(this);
    for (const std::string& n : nameConventionNames()) m_names->addItem(qs(n));
    m_names->setToolTip(tr("Parameter and module names of the jax, dtensor and hlo-sharding files: cfp (the graph's), "
                           "hf (Hugging Face transformers: Llama, Mistral, Mixtral, GPT-2), torchtitan (Llama); auto: hf for a model "
                           "read from a Hugging Face config.json, else cfp"));
    form->addRow(tr("Names"), m_names);
    m_everyDevice = new QCheckBox(tr("A timeline per device"), this);
    m_everyDevice->setObjectName(QStringLiteral("traceEveryDevice"));
    m_everyDevice->setToolTip(tr("Trace: a process per device, each communication track naming the devices of its group "
                                 "(cfp export --trace-devices all); otherwise one timeline per distinct role"));
    form->addRow(tr("Trace"), m_everyDevice);
    auto namesMatter = [this] {
        const QString f = m_format->currentText();
        m_names->setEnabled(f == QLatin1String("jax") || f == QLatin1String("dtensor") || f == QLatin1String("hlo-sharding"));
        m_everyDevice->setEnabled(f == QLatin1String("trace"));
    };
    connect(m_format, &QComboBox::currentTextChanged, this, namesMatter);
    namesMatter();
    auto* row = new QHBoxLayout;
    m_path = new QLineEdit(this);
    auto* browse = new QToolButton(this);
    browse->setText(tr("…"));
    row->addWidget(m_path, 1);
    row->addWidget(browse);
    form->addRow(tr("File"), row);
    m_info = new QLabel(tr("The file is byte for byte what `cfp export PLAN --format F --names N [--trace-devices all]` writes for this plan."), this);
    m_info->setWordWrap(true);
    form->addRow(m_info);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    box->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    form->addRow(box);
    // A name of the dialog's own (plan_<format>.<ext>) follows the format; one the user typed keeps
    // its stem and takes the format's extension.
    auto suggest = [this, suggested = std::make_shared<QString>()] {
        auto f = parseExportFormat(m_format->currentText().toStdString());
        if (!f) return;
        const QString ext = qs(std::string(exportFormatExtension(*f)));
        QString path = m_path->text();
        const int dot = path.lastIndexOf(QLatin1Char('.'));
        // In the folder of the last export, else the model file's, else the home folder: an
        // absolute path, never the explorer's working directory.
        if (path.isEmpty() || path == *suggested) {
            QString folder = QSettings().value(QStringLiteral("export/folder")).toString();
            const QFileInfo model(qs(m_explorer->request().model.source));
            if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = model.isFile() ? model.absolutePath() : QDir::homePath();
            path = QDir(folder).filePath(QStringLiteral("plan_%1%2").arg(m_format->currentText().replace(QLatin1Char('-'), QLatin1Char('_')), ext));
        }
        else if (dot > path.lastIndexOf(QLatin1Char('/')))
            path = path.left(dot) + ext;
        *suggested = path;
        m_path->setText(path);
    };
    connect(m_format, &QComboBox::currentTextChanged, this, suggest);
    suggest();
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Export plan"), m_path->text());
        if (!f.isEmpty()) m_path->setText(f);
    });
    connect(box, &QDialogButtonBox::accepted, this, &ExportDialog::start);
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

void ExportDialog::start() {
    auto f = parseExportFormat(m_format->currentText().toStdString());
    if (!f || m_path->text().trimmed().isEmpty()) return;
    ExportOptions options;
    if (auto n = parseNameConvention(m_names->currentText().toStdString())) options.names = *n;
    options.traceEveryDevice = m_everyDevice->isEnabled() && m_everyDevice->isChecked();
    // A relative name is taken in the home folder (the working directory is wherever the explorer
    // was started from); the folder is proposed next time.
    const QString path = QDir(QDir::homePath()).absoluteFilePath(m_path->text().trimmed());
    QSettings().setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
    m_explorer->exportPlan(*f, path, options);
    accept();
}

}  // namespace cfp::explorer
