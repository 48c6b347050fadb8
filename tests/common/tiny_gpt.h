#pragma once
// Test helper: a small GPT training step (GPT-3 125M's structure with few layers, narrow width,
// 4 heads, FFN 4 × hidden, vocabulary 128) that builds and analyses in milliseconds.

#include "models/models.h"
#include "must.h"

namespace cfp::test {

inline Graph tinyGpt(int64_t layers, int64_t hidden = 64, int64_t batch = 8, int64_t seq = 16) {
    ModelConfig c = must(presetConfig("gpt3-125m"), "preset");
    c.numLayers = layers;
    c.hiddenSize = hidden;
    c.numHeads = 4;
    c.numKvHeads = 4;
    c.ffnSize = 4 * hidden;
    c.vocabSize = 128;
    c.maxPositions = seq;
    BuildOptions o;
    o.batch = batch;
    o.seq = seq;
    return must(buildTrainingStep(c, o), "tiny gpt").graph;
}

}  // namespace cfp::test
