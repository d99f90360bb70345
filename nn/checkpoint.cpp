// checkpoint.cpp: training checkpoints (checkpoint.h), a safetensors file with the model, the
// optimizer's state, the program's extras and, in its metadata, the step, learning rate and
// generator.
#include "nn/checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "nn/bytes.h"

namespace qkv::nn {

namespace {

constexpr const char* kCheckpointFormat = "qkv-checkpoint-1";

// "model.", "optim.", "extra.": a checkpoint's three kinds of tensors.
bool take_prefix(const std::string& name, const std::string& prefix, std::string* rest) {
  if (name.rfind(prefix, 0) != 0) return false;
  *rest = name.substr(prefix.size());
  return true;
}

// A learning rate written by save_checkpoint: the whole text a finite number >= 0.
double parse_lr(const std::string& text, const std::string& path) {
  // Decimal digits only (strtod alone would also read "0x1p-10", "inf" and " 1").
  char* end = nullptr;
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const double lr = decimal ? std::strtod(text.c_str(), &end) : NAN;
  check(decimal && end == text.c_str() + text.size() && std::isfinite(lr) && lr >= 0,
        "read_checkpoint", "\"", path, "\": a learning rate that is a finite number >= 0, got \"",
        text, "\"");
  return lr;
}

void check_finite(const NamedTensors& tensors, const std::string& prefix, const std::string& path) {
  for (const auto& [name, t] : tensors) {
    if (t.dtype() != Dtype::float32) continue;
    const std::vector<float> values = t.to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i)
      check(std::isfinite(values[i]), "read_checkpoint", "\"", path, "\": finite values, got ",
            std::isnan(values[i]) ? "NaN" : "Inf", " in \"", prefix, name, "\" at flat index ", i);
  }
}

}  // namespace

const std::string& Checkpoint::metadata(const std::string& key) const {
  const auto it = extras.metadata.find(key);
  check(it != extras.metadata.end(), "read_checkpoint", "\"", path, "\": metadata \"extra.", key,
        "\", got none (a checkpoint of another program?)");
  return it->second;
}

void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     const Generator& generator, const CheckpointExtras& extras) {
  NamedTensors all;
  for (const auto& [name, t] : model.named_parameters()) all.emplace_back("model." + name, t);
  for (const auto& [name, t] : optimizer.state()) all.emplace_back("optim." + name, t);
  for (const auto& [name, t] : extras.tensors) all.emplace_back("extra." + name, t);
  std::ostringstream lr;
  lr.precision(17);
  lr << optimizer.lr();
  std::map<std::string, std::string> metadata = {{"format", kCheckpointFormat},
                                                  {"optimizer", optimizer.name()},
                                                  {"step", std::to_string(optimizer.steps())},
                                                  {"lr", lr.str()},
                                                  {"generator", generator.state()}};
  for (const auto& [key, value] : extras.metadata) metadata["extra." + key] = value;
  save_safetensors(path, all, metadata);
}

Checkpoint read_checkpoint(const std::string& path) {
  return parse_checkpoint(read_file(path, "read_checkpoint"), path);
}

Checkpoint parse_checkpoint(const std::string& bytes, const std::string& path) {
  const char* op = "read_checkpoint";
  SafetensorsFile file;
  try {
    file = parse_safetensors(bytes);
  } catch (const Error& e) {  // the message names the file: "<path>": load_safetensors: ...
    throw Error("\"" + path + "\": " + e.what());
  }
  Checkpoint c;
  c.path = path;
  auto meta = [&](const std::string& key) -> const std::string& {
    const auto it = file.metadata.find(key);
    check(it != file.metadata.end(), op, "\"", path, "\": metadata \"", key,
          "\", got none (not a qkv checkpoint?)");
    return it->second;
  };
  check(meta("format") == kCheckpointFormat, op, "\"", path, "\": format ", kCheckpointFormat,
        ", got ", meta("format"));
  c.optimizer_name = meta("optimizer");
  const std::string& step = meta("step");
  check(!step.empty() && step.size() <= 18 &&
            step.find_first_not_of("0123456789") == std::string::npos,
        op, "\"", path, "\": a step count, got \"", step, "\"");
  c.step = std::stoll(step);
  c.lr = parse_lr(meta("lr"), path);
  c.generator = meta("generator");
  Generator probe;
  try {
    probe.set_state(c.generator);  // a bad state is refused here, before anything uses it
  } catch (const Error& e) {
    throw Error(std::string(op) + ": \"" + path + "\": " + e.what());
  }
  for (const auto& [key, value] : file.metadata) {
    std::string rest;
    if (take_prefix(key, "extra.", &rest)) c.extras.metadata[rest] = value;
  }
  for (const auto& [name, t] : file.tensors) {
    std::string rest;
    if (take_prefix(name, "model.", &rest))
      c.model.emplace_back(rest, t);
    else if (take_prefix(name, "optim.", &rest))
      c.optimizer.emplace_back(rest, t);
    else if (take_prefix(name, "extra.", &rest))
      c.extras.tensors.emplace_back(rest, t);
    else
      throw Error(std::string(op) + ": \"" + path +
                  "\": keys starting model., optim. or extra., got unexpected key \"" + name +
                  "\"");
  }
  check_finite(c.model, "model.", path);
  check_finite(c.optimizer, "optim.", path);
  return c;
}

void restore_checkpoint(const Checkpoint& c, Module& model, Optimizer& optimizer,
                        Generator& generator) {
  const char* op = "load_checkpoint";
  check(c.optimizer_name == optimizer.name(), op, "\"", c.path, "\": a checkpoint of a ",
        optimizer.name(), " optimizer, got one of ", c.optimizer_name);
  // Everything is checked before anything changes, so a refused file leaves the run as it was.
  std::vector<std::pair<Tensor, Tensor>> pairs;
  try {
    pairs = match_state_dict(model, c.model, op);
  } catch (const Error& e) {
    throw Error("\"" + c.path + "\": " + e.what());
  }
  Generator restored;
  restored.set_state(c.generator);
  try {
    optimizer.load_state(c.optimizer, c.step);  // checks every key and shape before it assigns
  } catch (const Error& e) {
    throw Error("\"" + c.path + "\": " + e.what());
  }
  optimizer.set_lr(c.lr);
  copy_into_parameters(pairs);
  generator = restored;
}

int64_t load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                        Generator& generator) {
  const Checkpoint c = read_checkpoint(path);
  restore_checkpoint(c, model, optimizer, generator);
  return c.step;
}

}  // namespace qkv::nn
