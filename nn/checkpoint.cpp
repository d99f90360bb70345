// checkpoint.cpp: training checkpoints (checkpoint.h), a safetensors file with the model, the
// optimizer's state and, in its metadata, the step, learning rate and generator.
#include "nn/checkpoint.h"

#include <sstream>

#include "nn/safetensors.h"

namespace qkv::nn {

namespace {
constexpr const char* kCheckpointFormat = "qkv-checkpoint-1";
}

void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     const Generator& generator) {
  NamedTensors all;
  for (const auto& [name, t] : model.named_parameters()) all.emplace_back("model." + name, t);
  for (const auto& [name, t] : optimizer.state()) all.emplace_back("optim." + name, t);
  std::ostringstream lr;
  lr.precision(17);
  lr << optimizer.lr();
  save_safetensors(path, all,
                   {{"format", kCheckpointFormat},
                    {"optimizer", optimizer.name()},
                    {"step", std::to_string(optimizer.steps())},
                    {"lr", lr.str()},
                    {"generator", generator.state()}});
}

int64_t load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                        Generator& generator) {
  const char* op = "load_checkpoint";
  const SafetensorsFile file = load_safetensors(path);
  auto meta = [&](const std::string& key) -> const std::string& {
    const auto it = file.metadata.find(key);
    check(it != file.metadata.end(), op, "metadata \"", key, "\" in \"", path,
          "\", got none (not a qkv checkpoint?)");
    return it->second;
  };
  check(meta("format") == kCheckpointFormat, op, "format ", kCheckpointFormat, ", got ",
        meta("format"));
  check(meta("optimizer") == optimizer.name(), op, "a checkpoint of a ", optimizer.name(),
        " optimizer, got one of ", meta("optimizer"));
  const std::string& step_text = meta("step");
  check(!step_text.empty() && step_text.size() <= 18 &&
            std::all_of(step_text.begin(), step_text.end(),
                        [](char c) { return c >= '0' && c <= '9'; }),
        op, "a step count, got \"", step_text, "\"");
  const int64_t step = std::stoll(step_text);
  double lr = 0;
  std::istringstream(meta("lr")) >> lr;

  NamedTensors model_part, optim_part;
  for (const auto& [name, t] : file.tensors) {
    if (name.rfind("model.", 0) == 0)
      model_part.emplace_back(name.substr(6), t);
    else if (name.rfind("optim.", 0) == 0)
      optim_part.emplace_back(name.substr(6), t);
    else
      throw Error(std::string(op) + ": keys starting model. or optim., got unexpected key \"" +
                  name + "\"");
  }
  // Validate everything before changing anything, so a bad file leaves the run as it was.
  const auto pairs = match_state_dict(model, model_part, op);
  Generator restored;
  restored.set_state(meta("generator"));
  optimizer.load_state(optim_part, step);  // validates fully before it assigns
  optimizer.set_lr(lr);
  copy_into_parameters(pairs);
  generator = restored;
  return step;
}

}  // namespace qkv::nn
