#include "import/imported_model.h"
#include "import/row_stacks.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "autodiff/autodiff.h"

namespace cfp {

std::string ImportNote::toString() const {
    return makeError(code, message, where).toString();
}

Result<std::string> readImportFile(const std::string& path, int64_t maxBytes, std::string_view format) {
    const std::string f(format);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return makeError(f + ".io", "cannot read the file: " + ec.message(), path);
    if (static_cast<int64_t>(size) > maxBytes)
        return makeError(f + ".too_large", "the file is " + std::to_string(size) + " bytes, more than the limit of " +
                                               std::to_string(maxBytes), path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(f + ".io", "cannot open the file", path);
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<size_t>(in.gcount()));
    return bytes;
}

namespace {

bool isSourceKind(OpKind k) { return k == OpKind::Parameter || k == OpKind::Constant || k == OpKind::Iota; }

struct Inferred {
    std::vector<Phase> phase;
    std::vector<ParamRole> role;
    OpId loss = kNoOp;
    bool hadBackward = false;
};

Inferred infer(const Graph& g, const PhaseHints& hints) {
    const auto n = static_cast<size_t>(g.size());
    Inferred r;
    r.phase.assign(n, Phase::Forward);
    r.role.assign(n, ParamRole::None);
    for (OpId o : g.outputs()) {
        const TensorType& t = g.op(o).type;
        if (t.rank() == 0 && isFloating(t.dtype)) {
            r.loss = o;
            break;
        }
    }
    // Forward pass: what the loss depends on (everything when there is no loss).
    std::vector<char> fwd(n, r.loss == kNoOp ? 1 : 0);
    if (r.loss != kNoOp) {
        fwd[static_cast<size_t>(r.loss)] = 1;
        for (size_t i = static_cast<size_t>(r.loss) + 1; i-- > 0;) {
            if (!fwd[i]) continue;
            for (OpId in : g.op(static_cast<OpId>(i)).operands) fwd[static_cast<size_t>(in)] = 1;
        }
    }
    std::vector<char> used(n, 0);
    for (const Op& op : g.ops())
        for (OpId in : op.operands) used[static_cast<size_t>(in)] = 1;
    for (OpId o : g.outputs()) used[static_cast<size_t>(o)] = 1;

    bool training = false;
    for (size_t i = 0; i < n; ++i)
        if (!fwd[i] && used[i] && g.op(static_cast<OpId>(i)).kind != OpKind::Parameter) training = true;

    bool jaxMarkers = false;
    for (size_t i = 0; i < hints.size() && i < n; ++i)
        if (hints[i] >= 0 && !fwd[i]) jaxMarkers = true;

    // Phases outside the forward pass. -1: undecided (takes its first user's phase).
    std::vector<int> phase(n, static_cast<int>(Phase::Forward));
    std::vector<char> dependsOnState(n, 0), dependsOnActivation(n, 0);
    for (size_t i = 0; i < n; ++i) {
        if (fwd[i]) continue;
        const Op& op = g.op(static_cast<OpId>(i));
        if (op.kind == OpKind::Parameter) {
            dependsOnState[i] = 1;
            phase[i] = static_cast<int>(Phase::Optimizer);
            continue;
        }
        for (OpId in : op.operands) {
            const auto j = static_cast<size_t>(in);
            if (dependsOnState[j]) dependsOnState[i] = 1;
            if (dependsOnActivation[j] || (fwd[j] && !isSourceKind(g.op(in).kind))) dependsOnActivation[i] = 1;
        }
        if (jaxMarkers && i < hints.size() && hints[i] >= 0) phase[i] = hints[i];
        else if (dependsOnState[i]) phase[i] = static_cast<int>(Phase::Optimizer);
        else if (dependsOnActivation[i]) phase[i] = static_cast<int>(Phase::Backward);
        else phase[i] = -1;
    }
    const auto users = g.users();
    if (training) {
        // Ops outside the forward pass that reach no output are dead forward code (values computed
        // and never used), not backward.
        std::vector<char> live(n, 0);
        for (OpId o : g.outputs()) live[static_cast<size_t>(o)] = 1;
        for (size_t i = n; i-- > 0;)
            if (live[i])
                for (OpId in : g.op(static_cast<OpId>(i)).operands) live[static_cast<size_t>(in)] = 1;
        for (size_t i = 0; i < n; ++i)
            if (!fwd[i] && !live[i]) phase[i] = static_cast<int>(Phase::Forward);
        // The optimizer's first steps read only the gradient (Adam's (1-β1)·g, g², a convert to
        // fp32): elementwise ops that read no forward activation, combine the gradient with at
        // most constants, and feed only optimizer ops belong to the optimizer.
        if (!jaxMarkers) {
            std::vector<char> constantLike(n, 0);
            for (size_t i = 0; i < n; ++i) {
                const Op& op = g.op(static_cast<OpId>(i));
                constantLike[i] = op.kind == OpKind::Constant || op.kind == OpKind::Iota;
                if (op.kind == OpKind::Broadcast || op.kind == OpKind::Convert || op.kind == OpKind::Reshape)
                    constantLike[i] = constantLike[static_cast<size_t>(op.operands[0])];
            }
            for (size_t i = n; i-- > 0;) {
                if (fwd[i] || phase[i] != static_cast<int>(Phase::Backward)) continue;
                const Op& op = g.op(static_cast<OpId>(i));
                if (!isElementwise(op.kind) && op.kind != OpKind::Broadcast) continue;
                if (users[i].empty()) continue;
                bool onlyOptimizer = true;
                for (OpId u : users[i])
                    if (phase[static_cast<size_t>(u)] != static_cast<int>(Phase::Optimizer)) onlyOptimizer = false;
                if (!onlyOptimizer) continue;
                std::set<OpId> nonConstant;
                bool readsActivation = false;
                for (OpId in : op.operands) {
                    const auto j = static_cast<size_t>(in);
                    if (fwd[j] && !isSourceKind(g.op(in).kind)) readsActivation = true;
                    if (!constantLike[j]) nonConstant.insert(in);
                }
                if (!readsActivation && nonConstant.size() <= 1) phase[i] = static_cast<int>(Phase::Optimizer);
            }
        }
        for (size_t i = n; i-- > 0;) {
            if (phase[i] >= 0) continue;
            int p = static_cast<int>(Phase::Optimizer);
            for (OpId u : users[i])
                if (phase[static_cast<size_t>(u)] >= 0) {
                    p = phase[static_cast<size_t>(u)];
                    break;
                }
            phase[i] = p;
        }
    }
    for (size_t i = 0; i < n; ++i) {
        // Without training ops, values off the loss path are unused results (an RNG's last state,
        // a norm's statistics): forward.
        r.phase[i] = !training || phase[i] < 0 ? Phase::Forward : static_cast<Phase>(phase[i]);
        if (r.phase[i] == Phase::Backward) r.hadBackward = true;
    }

    // Roles.
    std::vector<char> trainable(n, 0);
    if (training) {
        std::vector<int32_t> seen(n, -1);
        std::vector<OpId> stack;
        int32_t epoch = 0;
        for (OpId o : g.outputs()) {
            if (o == r.loss) continue;
            const TensorType& t = g.op(o).type;
            if (!isFloating(t.dtype)) continue;
            bool open = false;
            for (const Op& p : g.ops())
                if (p.kind == OpKind::Parameter && fwd[static_cast<size_t>(p.id)] && !trainable[static_cast<size_t>(p.id)] &&
                    p.type == t)
                    open = true;
            if (!open) continue;
            ++epoch;
            stack.assign(1, o);
            seen[static_cast<size_t>(o)] = epoch;
            while (!stack.empty()) {
                const Op& op = g.op(stack.back());
                stack.pop_back();
                if (op.kind == OpKind::Parameter && fwd[static_cast<size_t>(op.id)] && op.type == t)
                    trainable[static_cast<size_t>(op.id)] = 1;
                for (OpId in : op.operands)
                    if (seen[static_cast<size_t>(in)] != epoch) {
                        seen[static_cast<size_t>(in)] = epoch;
                        stack.push_back(in);
                    }
            }
        }
    }
    for (const Op& op : g.ops()) {
        if (op.kind != OpKind::Parameter) continue;
        const auto i = static_cast<size_t>(op.id);
        ParamRole role = ParamRole::Input;
        if (!isFloating(op.type.dtype) && fwd[i]) role = ParamRole::Input;
        else if (!training) role = isFloating(op.type.dtype) && op.type.rank() >= 1 ? ParamRole::Trainable : ParamRole::Input;
        else if (!fwd[i]) role = used[i] ? ParamRole::OptimizerState : ParamRole::Input;
        else role = trainable[i] ? ParamRole::Trainable : ParamRole::Input;
        r.role[i] = role;
        r.phase[i] = role == ParamRole::OptimizerState ? Phase::Optimizer : Phase::Forward;
    }
    return r;
}

}  // namespace

Status finishImport(Graph staged, const PhaseHints& hints, const ImportOptions& options, ImportedModel& out,
                    RoleSource roles) {
    const Inferred inf = infer(staged, hints);
    Graph g(staged.name());
    for (const Op& src : staged.ops()) {
        Op op = src;
        op.phase = inf.phase[static_cast<size_t>(src.id)];
        if (op.kind == OpKind::Parameter && roles == RoleSource::Infer) op.role = inf.role[static_cast<size_t>(src.id)];
        auto id = g.add(std::move(op));
        if (!id) return id.error();
    }
    for (OpId o : staged.outputs()) CFP_TRY(g.addOutput(o));
    out.loss = inf.loss;
    // Stacked layer weights read one layer at a time (an unrolled scan): one parameter per layer.
    // The loss keeps its op; ids after the first split parameter move.
    auto split = splitStackedParameters(g);
    if (!split) return split.error();
    if (!split->empty()) {
        if (inf.loss != kNoOp) out.loss = g.find(staged.op(inf.loss).name);
        out.notes.push_back({"hlo.stacked_parameters_split",
                             std::to_string(split->size()) + " stacked parameter(s) read one layer at a time (an unrolled scan) split "
                             "into one parameter per layer, so that the layers plan as repeated segments",
                             g.name()});
    }
    out.hadBackward = inf.hadBackward;
    if (options.training == TrainingMode::AppendTraining) {
        if (inf.hadBackward) {
            out.notes.push_back({"import.already_training",
                                 "the model already contains a backward pass; --train adds nothing", g.name()});
        } else {
            if (inf.loss == kNoOp)
                return makeError("import.no_loss",
                                 "--train needs a loss: no graph output is a floating-point scalar", g.name());
            if (g.parameters(ParamRole::Trainable).empty())
                return makeError("import.no_trainable",
                                 "--train found no trainable weights (floating-point parameters of rank 1 or more)",
                                 g.name());
            CFP_TRY(appendTrainingStep(g, out.loss));
            out.trainingAppended = true;
        }
    }
    out.graph = std::move(g);
    return {};
}

}  // namespace cfp
