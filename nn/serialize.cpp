// serialize.cpp: safetensors, training checkpoints and .npy (see serialize.h).
//
// Reading untrusted bytes is the hard part, so the readers follow one rule: every length,
// offset and count read from the file is checked against what is actually there (and against
// overflow) before it is used, and every problem becomes a qkv::Error naming it. The JSON
// header is read by a small strict parser with a depth limit, not by searching for substrings.
#include "nn/serialize.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "nn/utf8.h"

namespace qkv::nn {
namespace {

// ---- bytes ----------------------------------------------------------------------------------

// Tensors are stored little-endian in both formats; on a big-endian host each element is
// byte-swapped on the way in and out.
void to_or_from_little_endian(std::string& bytes, size_t element_size) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i + element_size <= bytes.size(); i += element_size)
      std::reverse(bytes.begin() + i, bytes.begin() + i + element_size);
  } else {
    (void)bytes, (void)element_size;
  }
}

uint64_t read_le(const std::string& bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

void append_le(std::string& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// The tensor's elements, row-major, as little-endian bytes.
std::string tensor_bytes(const Tensor& t) {
  const Tensor c = raw::contiguous(t);
  const size_t n = static_cast<size_t>(c.numel()) * element_size(c.dtype());
  std::string out(n, '\0');
  if (n > 0)
    std::memcpy(out.data(), c.impl().storage->data() + c.storage_offset() * element_size(c.dtype()),
                n);
  to_or_from_little_endian(out, element_size(c.dtype()));
  return out;
}

// A new tensor of `shape` and `dtype` filled from little-endian bytes (their count checked by
// the caller). Booleans must be 0 or 1: any other byte would be an invalid C++ bool.
Tensor tensor_from_bytes(std::string bytes, const Shape& shape, Dtype dtype, const char* op,
                         const std::string& what) {
  Tensor t = Tensor::empty(shape, dtype);
  if (dtype == Dtype::boolean)
    for (char c : bytes)
      check(c == 0 || c == 1, op, "bool bytes of 0 or 1 in ", what, ", got ",
            static_cast<int>(static_cast<unsigned char>(c)));
  to_or_from_little_endian(bytes, element_size(dtype));
  if (!bytes.empty()) std::memcpy(t.impl().storage->data(), bytes.data(), bytes.size());
  return t;
}

// numel * element size, or an error if the shape is negative or the product overflows.
uint64_t checked_nbytes(const Shape& shape, Dtype dtype, const char* op, const std::string& what) {
  uint64_t n = element_size(dtype);
  for (int64_t d : shape) {
    check(d >= 0, op, "non-negative sizes in ", what, ", got shape ", shape_str(shape));
    const auto ud = static_cast<uint64_t>(d);
    check(ud == 0 || n <= std::numeric_limits<uint64_t>::max() / ud, op,
          "a shape whose size fits in ", "64 bits in ", what, ", got ", shape_str(shape));
    n *= ud;
  }
  return n;
}

// ---- a small strict JSON reader -------------------------------------------------------------

struct JsonMember;  // a "key": value pair of an object, defined once Json is complete

struct Json {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool boolean = false;
  std::string text;  // a string's value, or a number's digits as written
  std::vector<Json> items;
  std::vector<JsonMember> members;  // (a vector may hold a type that is still incomplete here;
                                    // a std::pair<std::string, Json> may not)
};

struct JsonMember {
  std::string key;
  Json value;
};

class JsonParser {
 public:
  JsonParser(const std::string& s, const char* op) : s_(s), op_(op) {}

  Json parse_document() {
    Json v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("the end of the JSON, got more characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;  // deeper nesting is refused, not recursed into

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string(op_) + ": bad JSON header: expected " + what + " at byte " +
                std::to_string(pos_));
  }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect_word(const char* word) {
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) fail(std::string("'") + word + "'");
    pos_ += n;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) fail("nesting at most 64 deep");
    skip_space();
    if (pos_ >= s_.size()) fail("a value, got the end");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Kind::object;
      if (eat('}')) return v;
      do {
        skip_space();
        std::string key = string_literal();
        for (const auto& [k, _] : v.members)
          if (k == key) fail("unique keys, got \"" + key + "\" twice");
        if (!eat(':')) fail("':'");
        v.members.push_back({std::move(key), value(depth + 1)});
      } while (eat(','));
      if (!eat('}')) fail("',' or '}'");
    } else if (c == '[') {
      ++pos_;
      v.kind = Json::Kind::array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      if (!eat(']')) fail("',' or ']'");
    } else if (c == '"') {
      v.kind = Json::Kind::string;
      v.text = string_literal();
    } else if (c == 't' || c == 'f') {
      v.kind = Json::Kind::boolean;
      v.boolean = c == 't';
      expect_word(v.boolean ? "true" : "false");
    } else if (c == 'n') {
      expect_word("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Json::Kind::number;
      const size_t start = pos_;
      while (pos_ < s_.size() && std::strchr("+-.eE0123456789", s_[pos_]) != nullptr) ++pos_;
      v.text = s_.substr(start, pos_ - start);
    } else {
      fail("a value");
    }
    return v;
  }

  std::string string_literal() {
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("a string");
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("a closing '\"'");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("no control characters in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) fail("an escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u':
          out += encode_utf8({static_cast<char32_t>(code_point())});
          break;
        default:
          fail("a valid escape");
      }
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("four hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<uint32_t>(h - 'A' + 10);
      else
        fail("a hex digit");
    }
    return v;
  }
  // \uXXXX, joining a UTF-16 surrogate pair into one code point.
  uint32_t code_point() {
    const uint32_t hi = hex4();
    if (hi < 0xD800 || hi > 0xDFFF) return hi;
    if (hi > 0xDBFF || s_.compare(pos_, 2, "\\u") != 0) fail("a valid surrogate pair");
    pos_ += 2;
    const uint32_t lo = hex4();
    if (lo < 0xDC00 || lo > 0xDFFF) fail("a low surrogate");
    return 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
  }
  const std::string& s_;
  const char* op_;
  size_t pos_ = 0;
};

// A JSON number that must be a non-negative integer that fits in int64.
int64_t json_index(const Json& v, const char* op, const std::string& what) {
  check(v.kind == Json::Kind::number && !v.text.empty() && v.text.size() <= 18 &&
            std::all_of(v.text.begin(), v.text.end(), [](char c) { return c >= '0' && c <= '9'; }),
        op, "a non-negative integer below 10^18 for ", what, ", got ",
        v.kind == Json::Kind::number ? v.text : "a non-number");
  return std::stoll(v.text);
}

std::string json_escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out.push_back(hex[(c >> 4) & 0xF]);
      out.push_back(hex[c & 0xF]);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

// ---- safetensors dtypes ---------------------------------------------------------------------

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

// ---- files ----------------------------------------------------------------------------------

void write_file_atomic(const std::string& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  // A temporary name no other writer in this process uses, in the target's folder (a rename
  // is only atomic within one filesystem).
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." +
                          std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) +
                          "." + std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    check(out.is_open(), "save", "a writable path, could not create \"", tmp, "\"");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw Error("save: writing \"" + tmp + "\" failed (disk full?); \"" + path +
                  "\" is unchanged");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error("save: could not rename \"" + tmp + "\" to \"" + path + "\": " + ec.message());
  }
}

std::string read_file(const std::string& path, const char* op) {
  std::ifstream in(path, std::ios::binary);
  check(in.is_open(), op, "a readable file, could not open \"", path, "\"");
  std::ostringstream os;
  os << in.rdbuf();
  check(!in.bad(), op, "a readable file, reading \"", path, "\" failed");
  return os.str();
}

// ---- safetensors ----------------------------------------------------------------------------

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

  const Json root = JsonParser(header, op).parse_document();
  check(root.kind == Json::Kind::object, op, "a JSON object as the header, got another value");

  struct Entry {
    std::string name;
    Dtype dtype;
    Shape shape;
    uint64_t begin, end;
  };
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
    check(nbytes == e.end - e.begin, op, "\"", name, "\" of shape ", shape_str(e.shape),
          " and dtype ", dtype->text, " to span ", nbytes, " bytes, got data_offsets spanning ",
          e.end - e.begin);
    entries.push_back(std::move(e));
  }
  // The tensors' bytes must tile the data exactly: no gaps, no overlaps, nothing left over
  // (the reference reader's rule; it also means no byte is read twice or ignored).
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
  return parse_safetensors(read_file(path, "load_safetensors"));
}

// ---- modules --------------------------------------------------------------------------------

NamedTensors state_dict(const Module& module) {
  return module.named_parameters();
}

namespace {

// Pairs every parameter with its tensor from `tensors`, or throws naming every missing and
// unexpected key, or the first shape/dtype mismatch. Changes nothing.
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
    check(t.dtype() == p.dtype(), op, "\"", name, "\" of dtype ", dtype_name(p.dtype()),
          ", got dtype mismatch: ", dtype_name(t.dtype()));
    check(t.shape() == p.shape(), op, "\"", name, "\" of shape ", shape_str(p.shape()),
          ", got shape mismatch: ", shape_str(t.shape()));
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

}  // namespace

void load_state_dict(Module& module, const NamedTensors& tensors) {
  copy_into_parameters(match_state_dict(module, tensors, "load_state_dict"));
}

void save(const Module& module, const std::string& path) {
  save_safetensors(path, state_dict(module));
}

void load(Module& module, const std::string& path) {
  load_state_dict(module, load_safetensors(path).tensors);
}

// ---- training checkpoints -------------------------------------------------------------------

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

// ---- .npy -----------------------------------------------------------------------------------
//
// "\x93NUMPY", version (1, 0), a uint16 little-endian header length, then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so the data starts 64-byte aligned, then the data.

namespace {

const char* npy_descr(Dtype d) {
  switch (d) {
    case Dtype::float32:
      return "<f4";
    case Dtype::int64:
      return "<i8";
    case Dtype::boolean:
      return "|b1";
  }
  return "?";
}

// A tiny reader for the header dict: single-quoted keys and strings, True/False, and tuples of
// integers, which is all numpy writes there.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

NpyHeader parse_npy_header(const std::string& h) {
  const char* op = "load_npy";
  size_t pos = 0;
  auto skip = [&] {
    while (pos < h.size() && (h[pos] == ' ' || h[pos] == '\n' || h[pos] == '\t')) ++pos;
  };
  auto fail = [&](const std::string& what) -> void {
    throw Error(std::string(op) + ": bad header: expected " + what + " at byte " +
                std::to_string(pos) + " of \"" + h.substr(0, 200) + "\"");
  };
  auto expect = [&](char c) {
    skip();
    if (pos >= h.size() || h[pos] != c) fail(std::string("'") + c + "'");
    ++pos;
  };
  auto quoted = [&] {
    skip();
    if (pos >= h.size() || (h[pos] != '\'' && h[pos] != '"')) fail("a quoted string");
    const char q = h[pos++];
    const size_t end = h.find(q, pos);
    if (end == std::string::npos) fail("a closing quote");
    std::string s = h.substr(pos, end - pos);
    pos = end + 1;
    return s;
  };
  NpyHeader out;
  bool has_descr = false, has_order = false, has_shape = false;
  expect('{');
  while (true) {
    skip();
    if (pos < h.size() && h[pos] == '}') break;
    const std::string key = quoted();
    expect(':');
    skip();
    if (key == "descr") {
      out.descr = quoted();
      has_descr = true;
    } else if (key == "fortran_order") {
      if (h.compare(pos, 4, "True") == 0)
        out.fortran_order = true, pos += 4;
      else if (h.compare(pos, 5, "False") == 0)
        pos += 5;
      else
        fail("True or False");
      has_order = true;
    } else if (key == "shape") {
      expect('(');
      while (true) {
        skip();
        if (pos < h.size() && h[pos] == ')') break;
        const size_t start = pos;
        while (pos < h.size() && h[pos] >= '0' && h[pos] <= '9') ++pos;
        if (pos == start || pos - start > 18) fail("a dimension below 10^18");
        out.shape.push_back(std::stoll(h.substr(start, pos - start)));
        if (out.shape.size() > 64) fail("at most 64 dims");
        skip();
        if (pos < h.size() && h[pos] == ',')
          ++pos;
        else if (pos >= h.size() || h[pos] != ')')
          fail("',' or ')' after a dimension of the shape");
      }
      ++pos;
      has_shape = true;
    } else {
      fail("only the keys descr, fortran_order and shape, got '" + key + "'");
    }
    skip();
    if (pos < h.size() && h[pos] == ',') ++pos;
  }
  if (!(has_descr && has_order && has_shape)) fail("descr, fortran_order and shape");
  return out;
}

}  // namespace

std::string npy_bytes(const Tensor& t) {
  check(t.defined(), "save_npy", "a defined tensor, got an undefined one");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(t.shape()[i]);
  }
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + npy_descr(t.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  append_le(out, header.size(), 2);
  return out + header + tensor_bytes(t);
}

Tensor parse_npy(const std::string& bytes) {
  const char* op = "load_npy";
  check(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, op,
        "the magic string \\x93NUMPY at the start, got a file of ", bytes.size(),
        " bytes without it (not a .npy file?)");
  const int major = static_cast<unsigned char>(bytes[6]);
  check(major >= 1 && major <= 3, op, "format version 1, 2 or 3, got ", major);
  const size_t len_width = major == 1 ? 2 : 4;
  check(bytes.size() >= 8 + len_width, op, "a header length, got a truncated file");
  const uint64_t header_len = read_le(bytes, 8, len_width);
  const size_t data_start = 8 + len_width + header_len;
  check(header_len <= bytes.size() - 8 - len_width, op, "a header length within the file, got bad ",
        "header length ", header_len, " in a file of ", bytes.size(), " bytes");
  const NpyHeader h = parse_npy_header(bytes.substr(8 + len_width, header_len));
  Dtype dtype;
  if (h.descr == "<f4")
    dtype = Dtype::float32;
  else if (h.descr == "<i8")
    dtype = Dtype::int64;
  else if (h.descr == "|b1")
    dtype = Dtype::boolean;
  else
    throw Error(std::string(op) + ": dtype <f4, <i8 or |b1, got '" + h.descr +
                "' (save it with .astype(numpy.float32) first)");
  // Fortran order stores the reversed shape row-major; read it that way, then transpose back.
  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  const uint64_t nbytes = checked_nbytes(stored, dtype, op, "the header's shape");
  check(nbytes == bytes.size() - data_start, op, "shape ", shape_str(h.shape), " to hold ", nbytes,
        " data bytes, got ", bytes.size() - data_start, " (truncated file?)");
  Tensor t = tensor_from_bytes(bytes.substr(data_start), stored, dtype, op, "the data");
  if (!h.fortran_order || t.dim() < 2) return t;
  std::vector<int64_t> reversed(static_cast<size_t>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) reversed[static_cast<size_t>(i)] = t.dim() - 1 - i;
  return raw::contiguous(raw::permute(t, reversed));
}

void save_npy(const std::string& path, const Tensor& t) {
  write_file_atomic(path, npy_bytes(t));
}

Tensor load_npy(const std::string& path) {
  return parse_npy(read_file(path, "load_npy"));
}

}  // namespace qkv::nn
