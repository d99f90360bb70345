// safetensors.cpp: safetensors files, and modules saved and loaded by name (safetensors.h).
//
// Reading untrusted bytes is the hard part, so the reader follows one rule: every length,
// offset and count read from the file is checked against what is actually there (and against
// overflow) before it is used, and every problem becomes a qkv::Error naming it. The JSON
// header is read by a small strict parser with a depth limit (json.h), not by searching for
// substrings.
#include "nn/safetensors.h"

#include <algorithm>
#include <set>

#include "nn/bytes.h"
#include "nn/json.h"

namespace qkv::nn {
namespace {

const char* safetensors_dtype(Dtype d) {
  switch (d) {
    case Dtype::float32:
      return "F32";
    case Dtype::int64:
      return "I64";
    case Dtype::boolean:
      return "BOOL";
  }
  return "?";
}

Dtype dtype_from_safetensors(const std::string& s, const std::string& name) {
  if (s == "F32") return Dtype::float32;
  if (s == "I64") return Dtype::int64;
  if (s == "BOOL") return Dtype::boolean;
  throw Error("load_safetensors: dtype F32, I64 or BOOL for \"" + name + "\", got " + s +
              " (convert it in PyTorch first, e.g. t.float())");
}

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the safetensors reference's own limit

std::string shape_json(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace

std::string safetensors_bytes(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata) {
  std::set<std::string> seen;
  std::string header = "{", data;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) header += ",";
      header += json_escape(k) + ":" + json_escape(v);
      first = false;
    }
    header += "}";
  }
  for (const auto& [name, t] : tensors) {
    check(t.defined(), "save_safetensors", "defined tensors, got an undefined \"", name, "\"");
    check(name != "__metadata__" && seen.insert(name).second, "save_safetensors",
          "unique tensor names other than __metadata__, got \"", name, "\"");
    const std::string bytes = tensor_bytes(t);
    if (header.size() > 1) header += ",";
    header += json_escape(name) + ":{\"dtype\":\"" + safetensors_dtype(t.dtype()) +
              "\",\"shape\":" + shape_json(t.shape()) + ",\"data_offsets\":[" +
              std::to_string(data.size()) + "," + std::to_string(data.size() + bytes.size()) + "]}";
    data += bytes;
  }
  header += "}";
  // Pad the header with spaces so the data starts 8-byte aligned, as the reference writer does.
  while (header.size() % 8 != 0) header.push_back(' ');
  std::string out;
  append_le(out, header.size(), 8);
  return out + header + data;
}

namespace {

// One tensor's entry of the header: its name, dtype, shape and where its bytes lie.
struct Entry {
  std::string name;
  Dtype dtype;
  Shape shape;
  uint64_t begin, end;
};

// The header's description of tensor `name`, checked against the data_len bytes of data.
Entry parse_entry(const std::string& name, const Json& v, uint64_t data_len, const char* op) {
  check(v.kind == Json::Kind::object, op, "an object describing tensor \"", name, "\"");
  const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (const auto& [field, fv] : v.members) {
    if (field == "dtype")
      dtype = &fv;
    else if (field == "shape")
      shape = &fv;
    else if (field == "data_offsets")
      offsets = &fv;
    else
      throw Error(std::string(op) + ": only dtype, shape and data_offsets for \"" + name +
                  "\", got \"" + field + "\"");
  }
  check(dtype && shape && offsets, op, "dtype, shape and data_offsets for \"", name,
        "\", some are missing");
  check(dtype->kind == Json::Kind::string, op, "a string dtype for \"", name, "\"");
  check(shape->kind == Json::Kind::array && shape->items.size() <= 64, op,
        "a shape of at most 64 dims for \"", name, "\"");
  check(offsets->kind == Json::Kind::array && offsets->items.size() == 2, op,
        "data_offsets [begin, end] for \"", name, "\"");
  Entry e{name, dtype_from_safetensors(dtype->text, name), {}, 0, 0};
  for (const Json& d : shape->items)
    e.shape.push_back(json_index(d, op, "a dim of \"" + name + "\""));
  e.begin =
      static_cast<uint64_t>(json_index(offsets->items[0], op, "the offsets of \"" + name + "\""));
  e.end =
      static_cast<uint64_t>(json_index(offsets->items[1], op, "the offsets of \"" + name + "\""));
  check(e.begin <= e.end && e.end <= data_len, op, "data_offsets within the ", data_len,
        " data bytes for \"", name, "\", got [", e.begin, ", ", e.end, "] (truncated file?)");
  const uint64_t nbytes = checked_nbytes(e.shape, e.dtype, op, "\"" + name + "\"");
  check(nbytes == e.end - e.begin, op, "\"", name, "\" of shape ", e.shape, " and dtype ",
        dtype->text, " to span ", nbytes, " bytes, got data_offsets spanning ", e.end - e.begin);
  return e;
}

// The tensors' bytes must tile the data exactly: no gaps, no overlaps, nothing left over
// (the reference reader's rule; it also means no byte is read twice or ignored).
void check_packed(std::vector<Entry> entries, uint64_t data_len, const char* op) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  uint64_t at = 0;
  for (const Entry& e : entries) {
    check(e.begin == at, op, "tensors packed back to back, got \"", e.name, "\" at byte ", e.begin,
          " where ", at, " was expected (overlap or gap)");
    at = e.end;
  }
  check(at == data_len, op, "the tensors to cover all ", data_len, " data bytes, got ", at,
        " (trailing bytes or truncated file)");
}

}  // namespace

SafetensorsFile parse_safetensors(const std::string& bytes) {
  const char* op = "load_safetensors";
  check(bytes.size() >= 8, op, "at least the 8-byte header length, got a file of ", bytes.size(),
        " bytes (truncated?)");
  const uint64_t header_len = read_le(bytes, 0, 8);
  check(header_len <= kMaxHeaderBytes && header_len <= bytes.size() - 8, op,
        "a header length within the file (", bytes.size() - 8, " bytes after the length) and ",
        "at most ", kMaxHeaderBytes, ", got bad header length ", header_len);
  const std::string header = bytes.substr(8, header_len);
  const size_t data_start = 8 + header_len;
  const uint64_t data_len = bytes.size() - data_start;

  const Json root = parse_json(header, op);
  check(root.kind == Json::Kind::object, op, "a JSON object as the header, got another value");
  std::vector<Entry> entries;
  SafetensorsFile file;
  for (const auto& [name, v] : root.members) {
    if (name == "__metadata__") {
      check(v.kind == Json::Kind::object, op, "__metadata__ as an object of strings");
      for (const auto& [k, s] : v.members) {
        check(s.kind == Json::Kind::string, op,
              "string values in __metadata__, got a non-string \"", k, "\"");
        file.metadata[k] = s.text;
      }
      continue;
    }
    entries.push_back(parse_entry(name, v, data_len, op));
  }
  check_packed(entries, data_len, op);
  for (const Entry& e : entries)
    file.tensors.emplace_back(
        e.name, tensor_from_bytes(bytes.substr(data_start + e.begin, e.end - e.begin), e.shape,
                                  e.dtype, op, "\"" + e.name + "\""));
  return file;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, safetensors_bytes(tensors, metadata));
}

SafetensorsFile load_safetensors(const std::string& path) {
  const std::string bytes = read_file(path, "load_safetensors");
  try {
    return parse_safetensors(bytes);
  } catch (const Error& e) {  // the message names the file: "<path>": load_safetensors: ...
    throw Error("\"" + path + "\": " + e.what());
  }
}

// ---- modules --------------------------------------------------------------------------------

NamedTensors state_dict(const Module& module) {
  return module.named_parameters();
}

std::vector<std::pair<Tensor, Tensor>> match_state_dict(const Module& module,
                                                        const NamedTensors& tensors,
                                                        const char* op) {
  std::map<std::string, Tensor> given;
  for (const auto& [name, t] : tensors) {
    check(given.emplace(name, t).second, op, "unique keys, got \"", name, "\" twice");
  }
  std::vector<std::pair<Tensor, Tensor>> pairs;
  std::string missing, unexpected;
  std::set<std::string> expected;
  for (const auto& [name, p] : module.named_parameters()) {
    expected.insert(name);
    const auto it = given.find(name);
    if (it == given.end()) {
      missing += (missing.empty() ? "\"" : ", \"") + name + "\"";
      continue;
    }
    pairs.emplace_back(p, it->second);
  }
  for (const auto& [name, _] : given)
    if (!expected.count(name)) unexpected += (unexpected.empty() ? "\"" : ", \"") + name + "\"";
  if (!missing.empty() || !unexpected.empty())
    throw Error(std::string(op) + ": the module's keys exactly, got " +
                (missing.empty() ? "" : "missing key(s) " + missing) +
                (!missing.empty() && !unexpected.empty() ? " and " : "") +
                (unexpected.empty() ? "" : "unexpected key(s) " + unexpected));
  for (const auto& [name, p] : module.named_parameters()) {
    const Tensor& t = given.at(name);
    check(t.dtype() == p.dtype(), op, "\"", name, "\" of the module's dtype ",
          dtype_name(p.dtype()), ", got dtype ", dtype_name(t.dtype()));
    check(t.shape() == p.shape(), op, "\"", name, "\" of the module's shape ", p.shape(),
          ", got shape ", t.shape());
    // A NaN or Inf weight makes every later output NaN: better to refuse the file here, naming
    // the key, than to let training report "loss nan" a thousand steps later.
    if (t.dtype() != Dtype::float32) continue;
    const std::vector<float> values = t.to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i)
      check(std::isfinite(values[i]), op, "finite values, got ",
            std::isnan(values[i]) ? "NaN" : "Inf", " in \"", name, "\" at flat index ", i);
  }
  return pairs;
}

void copy_into_parameters(const std::vector<std::pair<Tensor, Tensor>>& pairs) {
  NoGradGuard no_grad;  // writing a leaf's values is not part of any graph
  for (const auto& [param, value] : pairs) raw::copy_(param, value);
}

void load_state_dict(Module& module, const NamedTensors& tensors) {
  copy_into_parameters(match_state_dict(module, tensors, "load_state_dict"));
}

void save(const Module& module, const std::string& path) {
  save_safetensors(path, state_dict(module));
}

void load(Module& module, const std::string& path) {
  const NamedTensors tensors = load_safetensors(path).tensors;  // errors name the file already
  try {
    load_state_dict(module, tensors);
  } catch (const Error& e) {
    throw Error("\"" + path + "\": " + e.what());
  }
}

}  // namespace qkv::nn
