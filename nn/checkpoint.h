// checkpoint.h: a whole training run in one safetensors file: the model ("model.<name>"), its
// optimizer's state ("optim.<name>"), and in __metadata__ the step, learning rate and
// generator state, so training resumes exactly where it stopped.
#pragma once

#include <string>

#include "nn/module.h"
#include "nn/optim.h"

namespace qkv::nn {

void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     const Generator& generator);
// Restores model, optimizer (state, step count and learning rate) and generator; returns the
// step count.
int64_t load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                        Generator& generator);

}  // namespace qkv::nn
