// Public entry points: assemble embedding, layers, head and loss; then autodiff and AdamW.
#include <algorithm>

#include "autodiff/autodiff.h"
#include "ir/graph_builder.h"
#include "models/layers.h"
#include "models/models.h"

namespace cfp {

namespace {

Result<BuiltModel> buildForwardUnchecked(const ModelConfig& config, const BuildOptions& options) {
    BuiltModel model;
    model.config = config;
    model.options = options;
    if (model.options.seq == 0) model.options.seq = std::min<int64_t>(config.maxPositions, 2048);
    model.graph.setName(config.name.empty() ? std::string(modelFamilyName(config.family)) : config.name);

    return catchBuildErrors<BuiltModel>([&]() -> Result<BuiltModel> {
        GraphBuilder b(model.graph);
        b.setPhase(Phase::Forward);
        models_detail::LayerEmitter emit(b, model.config, model.options);
        const TensorType tokens{DType::S32, {model.options.batch, model.options.seq}};
        OpId ids, labels;
        {
            auto s = b.scope("inputs");
            ids = b.parameter("input_ids", tokens, ParamRole::Input);
            labels = b.parameter("labels", tokens, ParamRole::Input);
        }

        OpId tokenTable = kNoOp;
        OpId x = emit.embed(ids, tokenTable);
        const models_detail::SharedTensors shared = emit.sharedTensors(model.options.seq);
        std::vector<OpId> auxLosses;
        for (int64_t i = 0; i < config.numLayers; ++i) {
            OpId aux = kNoOp;
            x = emit.layer(x, i, shared, aux);
            if (aux != kNoOp) auxLosses.push_back(aux);
        }
        model.loss = emit.head(x, tokenTable, labels, auxLosses);
        b.output(model.loss);
        return std::move(model);
    });
}

}  // namespace

Result<BuiltModel> buildForward(const ModelConfig& config, const BuildOptions& options) {
    CFP_TRY(validateConfig(config));
    CFP_TRY(validateOptions(config, options));
    return buildForwardUnchecked(config, options);
}

Result<BuiltModel> buildTrainingStep(const ModelConfig& config, const BuildOptions& options) {
    auto model = buildForward(config, options);
    if (!model) return model;
    CFP_TRY(appendTrainingStep(model->graph, model->loss));
    return model;
}

}  // namespace cfp
