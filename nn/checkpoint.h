// checkpoint.h: a whole training run in one safetensors file, so training resumes exactly
// where it stopped:
//   "model.<name>"   the model's parameters (PyTorch's state_dict names after the prefix)
//   "optim.<name>"   the optimizer's state ("exp_avg.3": parameter 3's first moment)
//   "extra.<name>"   tensors the program adds (a loss history, say)
//   __metadata__     format, optimizer, step (the optimizer's step count, which is also the
//                    position in a learning-rate schedule), lr, generator (its whole state),
//                    and "extra.<key>" strings the program adds (the model's config, the
//                    tokenizer's vocabulary, the run's settings)
// The file is written whole or not at all (safetensors.h). Reading checks the whole file
// before anything changes: read_checkpoint checks what the file can say about itself (keys,
// numbers, finite values, the generator's state), restore_checkpoint what must agree with the
// model and optimizer, and only then copies; a refused file leaves the run as it was.
#pragma once

#include <map>
#include <string>

#include "nn/module.h"
#include "nn/optim.h"
#include "nn/safetensors.h"

namespace qkv::nn {

// What a program keeps in a checkpoint beside the run itself.
struct CheckpointExtras {
  std::map<std::string, std::string> metadata;  // e.g. "config" -> the model's config as JSON
  NamedTensors tensors;                         // e.g. "history.train_loss"
};

// A checkpoint as read from its file, checked on its own terms, not yet put anywhere.
struct Checkpoint {
  std::string path;
  NamedTensors model, optimizer;  // names without their "model." / "optim." prefixes
  CheckpointExtras extras;        // names without their "extra." prefixes
  std::string optimizer_name;     // "AdamW", ...
  int64_t step = 0;               // the optimizer's step count
  double lr = 0;                  // the learning rate of the last step
  std::string generator;          // Generator::state()
  // The extra metadata `key`, or a qkv::Error naming the file and the key.
  const std::string& metadata(const std::string& key) const;
};

void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     const Generator& generator, const CheckpointExtras& extras = {});
Checkpoint read_checkpoint(const std::string& path);
// The same from the file's bytes; `path` names it in errors.
Checkpoint parse_checkpoint(const std::string& bytes, const std::string& path);
// Checks the checkpoint against model and optimizer (every key, shape and dtype), then puts
// the parameters, the optimizer's state, step count and learning rate, and the generator in
// place. Throws before changing anything when something does not fit.
void restore_checkpoint(const Checkpoint& checkpoint, Module& model, Optimizer& optimizer,
                        Generator& generator);
// read_checkpoint then restore_checkpoint; returns the step count.
int64_t load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                        Generator& generator);

}  // namespace qkv::nn
