// test_serialize.cpp: safetensors and .npy round trips and byte layouts (numpy's own bytes from
// tools/gen_nn_reference.py), module state_dicts, training checkpoints that resume to exactly
// the uninterrupted run, atomic writes, and a named qkv::Error for every kind of bad file.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/stat.h>  // mkfifo
#endif

#include "nn/all.h"
#include "nn/json.h"
#include "tests/testing.h"

namespace qkv::nn {
namespace {
#include "tests/nn/torch_nn_reference.inc"

namespace fs = std::filesystem;

using testing::TempDir;

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// ---- safetensors ----------------------------------------------------------------------------

TEST(Safetensors, RoundTripsEveryDtypeAndShape) {
  TempDir dir;
  const Tensor a = randn({3, 4});
  const NamedTensors tensors = {
      {"blocks.0.q.weight", a},
      {"transposed", raw::transpose(a, 0, 1)},  // a view: saved as its row-major values
      {"ids", from_vector(std::vector<int64_t>{5, -2, 1LL << 40}, {3})},
      {"mask", from_vector(std::vector<bool>{true, false, true, true}, {2, 2})},
      {"scalar", scalar_tensor(3.5f)},
      {"empty", zeros({0, 3})},
  };
  save_safetensors(dir.file("m.safetensors"), tensors, {{"note", "hi \"there\"\n"}});
  const SafetensorsFile f = load_safetensors(dir.file("m.safetensors"));
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(f.tensors[i].first, tensors[i].first);
    EXPECT_EQ(f.tensors[i].second.dtype(), tensors[i].second.dtype());
    EXPECT_TRUE(testing::tensor_equal(f.tensors[i].second, tensors[i].second)) << tensors[i].first;
  }
  EXPECT_EQ(f.metadata.at("note"), "hi \"there\"\n");
}

TEST(Safetensors, TheBytesFollowTheSpec) {
  const std::string bytes = safetensors_bytes(
      {{"w", tensor({1.0f, -2.0f})}, {"i", from_vector(std::vector<int64_t>{7}, {1})}});
  // 8-byte little-endian header length; the header is JSON padded with spaces to 8 bytes.
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"i\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[8,16]}}");
  // Then the raw little-endian data: 1.0f is 00 00 80 3f.
  EXPECT_EQ(bytes.size(), 8 + n + 16);
  EXPECT_EQ(bytes.substr(8 + n, 4), std::string("\x00\x00\x80\x3f", 4));
}

// A safetensors file by hand: the header's length (8 bytes, little-endian, written from 64 bits:
// size_t may have 32), the header, the data.
std::string header_file(const std::string& header, const std::string& data) {
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>((uint64_t{header.size()} >> (8 * i)) & 0xFF));
  return bytes + header + data;
}

TEST(Safetensors, ReadsAFileWrittenByAnotherWriter) {
  // As the reference Python writer lays it out: sorted keys, spaces in the JSON, metadata first,
  // and an escaped name. Header: 152 bytes.
  std::string header =
      R"({"__metadata__": {"format": "pt"}, "a\u00e9": {"dtype": "F32", "shape": [1, 2], )"
      R"("data_offsets": [0, 8]}, "b": {"dtype": "BOOL", "shape": [], "data_offsets": [8, 9]}})";
  while (header.size() % 8) header += ' ';
  const SafetensorsFile f = parse_safetensors(
      header_file(header, std::string("\x00\x00\x00\x40\x00\x00\x40\x40\x01", 9)));
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[0].first, "a\xc3\xa9");
  EXPECT_TRUE(testing::tensor_near(f.tensors[0].second, {1, 2}, {2.0, 3.0}, 0.0));
  EXPECT_EQ(f.tensors[1].second.dtype(), Dtype::boolean);
  EXPECT_EQ(f.tensors[1].second.item<bool>(), true);
  EXPECT_EQ(f.metadata.at("format"), "pt");
}

TEST(Safetensors, EveryKindOfBadFileIsANamedError) {
  const std::string eight(8, '\0');
  const std::string w8 = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  struct Case {
    const char* what;
    std::string bytes;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"empty file", "", "header length"},
      {"7 bytes", std::string(7, '\0'), "header length"},
      {"length beyond the file", std::string("\xff\x00\x00\x00\x00\x00\x00\x00", 8) + "{}",
       "bad header length"},
      {"absurd length", std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "bad header length"},
      {"not JSON", header_file("hello", ""), "bad JSON"},
      {"unterminated object", header_file(R"({"w":{"dtype":"F32")", ""), "bad JSON"},
      {"trailing garbage", header_file("{} x", ""), "bad JSON"},
      {"bad escape", header_file(R"({"\q":1})", ""), "bad JSON"},
      {"array at top", header_file("[]", ""), "JSON object"},
      {"too deep", header_file(std::string(100, '[') + std::string(100, ']'), ""), "nesting"},
      {"duplicate key", header_file(R"({"a":{},"a":{}})", ""), "twice"},
      {"missing offsets", header_file(R"({"w":{"dtype":"F32","shape":[2]}})", eight), "missing"},
      {"extra field",
       header_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", eight),
       "\"x\""},
      {"unknown dtype",
       header_file(R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,8]}})", eight), "F16"},
      {"negative dim",
       header_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "non-negative integer"},
      {"fractional dim",
       header_file(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", eight),
       "non-negative integer"},
      {"shape vs offsets",
       header_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", eight), "span"},
      {"offsets beyond data", header_file(w8, std::string(4, '\0')), "truncated"},
      {"reversed offsets",
       header_file(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", eight),
       "data_offsets"},
      {"trailing data", header_file(w8, std::string(12, '\0')), "trailing"},
      {"gap", header_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", eight),
       "gap"},
      {"overlap",
       header_file(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           eight),
       "overlap"},
      {"huge shape",
       header_file(
           R"({"w":{"dtype":"F32","shape":[999999999999999999,999999999999999999],"data_offsets":[0,8]}})",
           eight),
       "64 bits"},
      {"bool not 0/1",
       header_file(R"({"b":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", "\x02"), "0 or 1"},
      {"metadata not strings", header_file(R"({"__metadata__":{"a":1}})", ""), "non-string"},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(testing::throws_error([&] { parse_safetensors(c.bytes); }, {c.needle})) << c.what;
  TempDir dir;
  EXPECT_TRUE(testing::throws_error([&] { load_safetensors(dir.file("nope.safetensors")); },
                                    {"nope.safetensors", "no such file"}));
  // A folder, and a file larger than the reader takes, are named as such.
  EXPECT_TRUE(testing::throws_error([&] { load_safetensors(dir.path()); }, {"a folder"}));
  write_raw(dir.file("big.bin"), std::string(100, 'x'));
  EXPECT_TRUE(testing::throws_error([&] { read_file(dir.file("big.bin"), "test", 99); },
                                    {"test", "at most 99 bytes", "big.bin", "of 100 bytes"}));
  EXPECT_EQ(read_file(dir.file("big.bin"), "test", 100).size(), 100u);
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
  // A FIFO would block a reader forever, waiting for a writer: it is named and refused.
  // (Emscripten's mkfifo, under Node.js, makes an empty file, not a FIFO.)
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_TRUE(testing::throws_error([&] { load_safetensors(dir.file("fifo")); }, {"a FIFO"}));
#endif
}

// check_writable finds an unwritable path before a run, and touches no file that exists: not
// the path itself, not a file the user has beside it with the name a probe might take.
TEST(WriteFile, CheckWritableCreatesNothingAndTouchesNothing) {
  TempDir dir;
  write_raw(dir.file("m.safetensors"), "mine");
  write_raw(dir.file("m.safetensors.probe"), "also mine");
  check_writable(dir.file("m.safetensors"), "--save");
  check_writable(dir.file("new.safetensors"), "--save");
  EXPECT_EQ(read_file(dir.file("m.safetensors"), "test"), "mine");
  EXPECT_EQ(read_file(dir.file("m.safetensors.probe"), "test"), "also mine");
  EXPECT_FALSE(std::filesystem::exists(dir.file("new.safetensors")));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2u);  // no probe left behind
  EXPECT_TRUE(testing::throws_error([&] { check_writable(dir.path(), "--save"); },
                                    {"--save", "a folder"}));
  EXPECT_TRUE(testing::throws_error(
      [&] { check_writable(dir.file("no_such_folder/m.safetensors"), "--save"); },
      {"--save", "no_such_folder/m.safetensors", "cannot create"}));
}

// Every truncation and thousands of random byte changes of a valid file either load or throw a
// qkv::Error: never a crash or an out-of-bounds read (the asan preset checks the latter).
TEST(Safetensors, MangledFilesNeverCrash) {
  const std::string good = safetensors_bytes(
      {{"a", randn({3, 2})}, {"b", from_vector(std::vector<bool>{true, false}, {2})}},
      {{"k", "v"}});
  auto try_parse = [](const std::string& bytes) {
    try {
      parse_safetensors(bytes);
    } catch (const Error&) {
    }
  };
  for (size_t n = 0; n < good.size(); ++n) try_parse(good.substr(0, n));
  Generator g(1);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(g.random() % 4);
    for (int e = 0; e < edits; ++e)
      bytes[g.random() % bytes.size()] = static_cast<char>(g.random() & 0xFF);
    try_parse(bytes);
  }
  SUCCEED();
}

// ---- modules --------------------------------------------------------------------------------

std::shared_ptr<Sequential> small_model(uint64_t seed) {
  Generator g(seed);
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<UnaryModule>>{
      std::make_shared<Linear>(3, 4, true, &g), std::make_shared<LayerNorm>(4),
      std::make_shared<Linear>(4, 2, false, &g)});
}

TEST(StateDict, SaveAndLoadAModule) {
  TempDir dir;
  auto a = small_model(1), b = small_model(2);
  save(*a, dir.file("a.safetensors"));
  load(*b, dir.file("a.safetensors"));
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(testing::tensor_equal(pb[i].second, pa[i].second)) << pa[i].first;
    EXPECT_FALSE(pb[i].second.shares_storage(pa[i].second));
  }
  std::vector<std::string> keys;
  for (const auto& [name, _] : load_safetensors(dir.file("a.safetensors")).tensors)
    keys.push_back(name);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight"}));
}

TEST(StateDict, MismatchesAreNamedAndLeaveTheModuleUnchanged) {
  auto m = small_model(1);
  const Tensor before = raw::clone(m->named_parameters()[0].second);
  NamedTensors good = state_dict(*small_model(2));
  auto broken = [&](const std::function<void(NamedTensors&)>& edit) {
    NamedTensors t = good;
    edit(t);
    return t;
  };
  EXPECT_TRUE(testing::throws_error(
      [&] { load_state_dict(*m, broken([](NamedTensors& t) { t.pop_back(); })); },
      {"missing key(s) \"2.weight\""}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        load_state_dict(*m, broken([](NamedTensors& t) { t.emplace_back("3.bias", zeros({1})); }));
      },
      {"unexpected key(s) \"3.bias\""}));
  EXPECT_TRUE(testing::throws_error(
      [&] { load_state_dict(*m, broken([](NamedTensors& t) { t[1].second = zeros({5}); })); },
      {"got shape (5,)"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        load_state_dict(*m, broken([](NamedTensors& t) {
          t[1].second = from_vector(std::vector<int64_t>{1, 2, 3, 4}, {4});
        }));
      },
      {"got dtype torch.int64"}));
  EXPECT_TRUE(testing::tensor_equal(m->named_parameters()[0].second, before));
}

TEST(AtomicWrite, ReplacesTheOldFileAndLeavesNoTemporaries) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  write_raw(path, "old");
  save_safetensors(path, {{"x", ones({2})}});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"w.safetensors"});
  EXPECT_TRUE(testing::tensor_equal(load_safetensors(path).tensors[0].second, ones({2})));
  // A folder that does not exist: an error, and nothing written anywhere.
  EXPECT_TRUE(testing::throws_error(
      [&] { save_safetensors(dir.file("no/such/dir/x.safetensors"), {}); }, {"could not create"}));
  // A target that is a folder: the rename fails, the temporary is removed.
  fs::create_directories(dir.file("taken"));
  EXPECT_THROW(save_npy(dir.file("taken"), ones({1})), Error);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"taken", "w.safetensors"}));
}

// ---- JSON -----------------------------------------------------------------------------------

TEST(Json, NumbersFollowTheGrammar) {
  for (const char* good : {"0", "-0", "12", "-3.25", "1e5", "1E-5", "2.5e+3", "0.0"}) {
    const Json v = parse_json(good, "test");
    EXPECT_EQ(v.kind, Json::Kind::number) << good;
    EXPECT_EQ(v.text, good);
  }
  // Text that strtod would read, in part or whole, but that is not a JSON number.
  for (const char* bad : {"1-5", "01", "1.", ".5", "+1", "-", "1e", "1e+", "--1", "0x10", "1.2.3",
                          "NaN", "Infinity", "[1-5]", "{\"a\": 1e}"})
    EXPECT_TRUE(testing::throws_error([&] { parse_json(bad, "test"); }, {"test", "bad JSON"}))
        << bad;
}

// A vocabulary's worth of keys: the duplicate check must not compare every pair (200,000 keys
// are 2 * 10^10 pairs, minutes of work; a hash set takes a fraction of a second, under a
// sanitizer or an emulator too).
TEST(Json, DuplicateKeysAreFoundAmongManyWithoutComparingEveryPair) {
  std::string text = "{";
  for (int i = 0; i < 200'000; ++i)
    text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  const auto t0 = std::chrono::steady_clock::now();
  const Json v = parse_json(text + "}", "test");
  EXPECT_EQ(v.members.size(), 200'000u);
  EXPECT_TRUE(testing::throws_error([&] { parse_json(text + ", \"k123\": 0}", "test"); },
                                    {"unique keys", "\"k123\" twice"}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0) << "parsing 200,000 keys twice took " << seconds << " s";
}

TEST(Json, NumbersAreReadInRangeOrRefused) {
  const auto number = [](const std::string& text, double min, double max) {
    return json_number(parse_json(text, "test"), "test", "x", min, max);
  };
  EXPECT_EQ(number("1e-5", 0, 1), 1e-5);
  EXPECT_EQ(number("-2.5", -3, 0), -2.5);
  EXPECT_TRUE(testing::throws_error([&] { number("1e999", 0, 1e300); }, {"x", "1e999"}));
  EXPECT_TRUE(testing::throws_error([&] { number("2", 0, 1); }, {"x", "[0, 1]", "got 2"}));
  EXPECT_TRUE(testing::throws_error([&] { number("\"1\"", 0, 1); }, {"a number", "a string"}));
  const Json obj = parse_json("{\"a\": 1, \"b\": [true]}", "test");
  ASSERT_NE(json_member(obj, "b"), nullptr);
  EXPECT_EQ(json_member(obj, "b")->items.size(), 1u);
  EXPECT_EQ(json_member(obj, "c"), nullptr);
}

// ---- checkpoints ----------------------------------------------------------------------------

// A model with dropout (so the generator matters) trained on batches drawn from the generator.
struct TrainingRun {
  explicit TrainingRun(uint64_t seed) : gen(seed) {
    model = std::make_shared<Sequential>(std::vector<std::shared_ptr<UnaryModule>>{
        std::make_shared<Linear>(4, 16, true, &gen), std::make_shared<GELU>(),
        std::make_shared<Dropout>(0.2, &gen), std::make_shared<Linear>(16, 3, true, &gen)});
    optimizer = std::make_unique<AdamW>(model->parameters(), 1e-2);
  }
  float step() {
    optimizer->set_lr(schedule.lr(optimizer->steps()));
    const Tensor x = randn({8, 4}, &gen);
    const Tensor y = randint(3, {8}, &gen);
    optimizer->zero_grad();
    const Tensor loss = cross_entropy((*model)(x), y);
    backward(loss);
    clip_grad_norm_(model->parameters(), 1.0);
    optimizer->step();
    return loss.item<float>();
  }
  Generator gen;
  std::shared_ptr<Sequential> model;
  std::unique_ptr<Optimizer> optimizer;
  WarmupCosine schedule{1e-2, 1e-3, 3, 12};
};

TEST(Checkpoint, ResumingGivesExactlyTheUninterruptedLossCurve) {
  TempDir dir;
  TrainingRun straight(42);
  std::vector<float> expected;
  for (int i = 0; i < 12; ++i) expected.push_back(straight.step());

  TrainingRun first(42);
  std::vector<float> losses;
  for (int i = 0; i < 5; ++i) losses.push_back(first.step());
  save_checkpoint(dir.file("ckpt.safetensors"), *first.model, *first.optimizer, first.gen);

  TrainingRun resumed(999);  // different weights and generator: all must come from the file
  EXPECT_EQ(load_checkpoint(dir.file("ckpt.safetensors"), *resumed.model, *resumed.optimizer,
                            resumed.gen),
            5);
  for (int i = 5; i < 12; ++i) losses.push_back(resumed.step());
  EXPECT_EQ(losses, expected);  // bit for bit
  const auto a = straight.model->parameters(), b = resumed.model->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(testing::tensor_equal(b[i], a[i]));
}

TEST(Checkpoint, SgdMomentumResumesToo) {
  TempDir dir;
  auto make = [](uint64_t seed) {
    auto m = small_model(seed);
    return std::make_pair(m, std::make_unique<SGD>(m->parameters(), 0.1, 0.9));
  };
  const Tensor x = randn({5, 3});
  auto train = [&](Sequential& m, Optimizer& opt, int steps) {
    for (int i = 0; i < steps; ++i) {
      opt.zero_grad();
      backward(sum(pow(m(x), 2.0f)));
      opt.step();
    }
  };
  auto [m1, o1] = make(1);
  train(*m1, *o1, 6);
  auto [m2, o2] = make(1);
  train(*m2, *o2, 3);
  Generator g;
  save_checkpoint(dir.file("c"), *m2, *o2, g);
  auto [m3, o3] = make(7);
  load_checkpoint(dir.file("c"), *m3, *o3, g);
  train(*m3, *o3, 3);
  for (size_t i = 0; i < m1->parameters().size(); ++i)
    EXPECT_TRUE(testing::tensor_equal(m3->parameters()[i], m1->parameters()[i]));
}

TEST(Checkpoint, WrongOptimizerOrModelIsNamedAndChangesNothing) {
  TempDir dir;
  TrainingRun run(1);
  run.step();
  save_checkpoint(dir.file("c"), *run.model, *run.optimizer, run.gen);
  auto m = small_model(3);
  SGD sgd(m->parameters(), 0.1);
  Generator g(5);
  EXPECT_TRUE(
      testing::throws_error([&] { load_checkpoint(dir.file("c"), *m, sgd, g); }, {"AdamW"}));
  AdamW adamw(m->parameters());
  const Tensor before = raw::clone(m->parameters()[0]);
  EXPECT_TRUE(testing::throws_error([&] { load_checkpoint(dir.file("c"), *m, adamw, g); },
                                    {"missing key(s)"}));
  EXPECT_TRUE(testing::tensor_equal(m->parameters()[0], before));
  EXPECT_EQ(adamw.steps(), 0);
  // A plain safetensors file is not a checkpoint.
  save(*m, dir.file("plain"));
  EXPECT_TRUE(testing::throws_error([&] { load_checkpoint(dir.file("plain"), *m, adamw, g); },
                                    {"not a qkv checkpoint"}));
}

// Everything a run holds that a load could change: every parameter, the optimizer's state,
// step and lr, and the generator's state, as one text.
std::string run_state(const Module& model, const Optimizer& opt, const Generator& gen) {
  std::ostringstream os;
  os.precision(9);
  for (const auto& [name, t] : model.named_parameters())
    for (const float v : t.to_vector<float>()) os << name << v << " ";
  for (const auto& [name, t] : opt.state())
    for (const float v : t.to_vector<float>()) os << name << v << " ";
  os << opt.steps() << " " << opt.lr() << " " << gen.state();
  return os.str();
}

TEST(Checkpoint, ExtrasRoundTripAndReadingChangesNothing) {
  TempDir dir;
  TrainingRun run(1);
  run.step();
  CheckpointExtras extras;
  extras.metadata = {{"config", "{\"n\": 3}"}, {"vocabulary", "abc\n"}};
  extras.tensors = {{"history.loss", tensor({1.5f, 1.25f})}};
  save_checkpoint(dir.file("c"), *run.model, *run.optimizer, run.gen, extras);
  const Checkpoint c = read_checkpoint(dir.file("c"));
  EXPECT_EQ(c.step, 1);
  EXPECT_EQ(c.optimizer_name, "AdamW");
  EXPECT_EQ(c.metadata("config"), "{\"n\": 3}");
  EXPECT_EQ(c.metadata("vocabulary"), "abc\n");
  ASSERT_EQ(c.extras.tensors.size(), 1u);
  EXPECT_EQ(c.extras.tensors[0].first, "history.loss");
  EXPECT_TRUE(testing::tensor_equal(c.extras.tensors[0].second, tensor({1.5f, 1.25f})));
  EXPECT_TRUE(testing::throws_error([&] { c.metadata("tokenizer"); },
                                    {"metadata \"extra.tokenizer\"", "got none"}));
  // The extras do not stop the plain loader from restoring the run.
  TrainingRun other(2);
  EXPECT_EQ(load_checkpoint(dir.file("c"), *other.model, *other.optimizer, other.gen), 1);
  EXPECT_EQ(run_state(*other.model, *other.optimizer, other.gen),
            run_state(*run.model, *run.optimizer, run.gen));
}

// A checkpoint whose metadata or state is bad in one way: refused, naming the file and what is
// wrong, with the run it was to be loaded into exactly as it was.
TEST(Checkpoint, ABadFileIsRefusedBeforeAnythingChanges) {
  TempDir dir;
  TrainingRun saved(1);
  for (int i = 0; i < 2; ++i) saved.step();
  NamedTensors tensors;
  for (const auto& [name, t] : saved.model->named_parameters()) tensors.emplace_back("model." + name, t);
  for (const auto& [name, t] : saved.optimizer->state()) tensors.emplace_back("optim." + name, t);
  const std::map<std::string, std::string> good = {{"format", "qkv-checkpoint-1"},
                                                     {"optimizer", "AdamW"},
                                                     {"step", "2"},
                                                     {"lr", "0.01"},
                                                     {"generator", saved.gen.state()}};
  struct Case {
    std::string key, value;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"lr", "abc", {"learning rate", "\"abc\""}},
      {"lr", "nan", {"learning rate", "\"nan\""}},
      {"lr", "1e999", {"learning rate", "\"1e999\""}},
      {"lr", "-1", {"learning rate", "\"-1\""}},
      {"lr", "0.01x", {"learning rate", "\"0.01x\""}},
      {"lr", "0x1p-10", {"learning rate", "\"0x1p-10\""}},
      {"lr", " 0.01", {"learning rate", "\" 0.01\""}},
      {"step", "-3", {"step count", "\"-3\""}},
      {"step", "99999999999999999999", {"step count"}},
      {"generator", "not a generator", {"Generator::set_state"}},
      {"format", "qkv-checkpoint-0", {"format"}},
  };
  TrainingRun target(7);
  target.step();
  const std::string before = run_state(*target.model, *target.optimizer, target.gen);
  for (const Case& c : cases) {
    std::map<std::string, std::string> metadata = good;
    metadata[c.key] = c.value;
    save_safetensors(dir.file("bad"), tensors, metadata);
    std::vector<std::string> expected = c.expected;
    expected.push_back("bad");  // the file's name
    EXPECT_TRUE(testing::throws_error(
        [&] { load_checkpoint(dir.file("bad"), *target.model, *target.optimizer, target.gen); },
        expected))
        << c.key << " = " << c.value;
    EXPECT_EQ(run_state(*target.model, *target.optimizer, target.gen), before)
        << c.key << " = " << c.value;
  }
  // A NaN in AdamW's moments, or in a weight.
  for (const std::string prefix : {"optim.", "model."}) {
    NamedTensors poisoned = tensors;
    for (auto& [name, t] : poisoned)
      if (name.rfind(prefix, 0) == 0) {
        t = raw::clone(t);
        t.data_ptr<float>()[0] = NAN;
        break;
      }
    save_safetensors(dir.file("nan"), poisoned, good);
    EXPECT_TRUE(testing::throws_error(
        [&] { load_checkpoint(dir.file("nan"), *target.model, *target.optimizer, target.gen); },
        {"finite values", "NaN", prefix}));
    EXPECT_EQ(run_state(*target.model, *target.optimizer, target.gen), before) << prefix;
  }
  // A negative second moment (sqrt of it is NaN on the next step), and a first moment without
  // its second.
  {
    NamedTensors negative = tensors;
    for (auto& [name, t] : negative)
      if (name.rfind("optim.exp_avg_sq.", 0) == 0) {
        t = raw::clone(t);
        t.data_ptr<float>()[0] = -1.0f;
        break;
      }
    save_safetensors(dir.file("negative"), negative, good);
    EXPECT_TRUE(testing::throws_error(
        [&] { load_checkpoint(dir.file("negative"), *target.model, *target.optimizer, target.gen); },
        {"exp_avg_sq", ">= 0", "got -1"}));
    NamedTensors unpaired;
    bool dropped = false;
    for (const auto& [name, t] : tensors) {
      if (!dropped && name.rfind("optim.exp_avg.", 0) == 0) {
        dropped = true;
        continue;
      }
      unpaired.emplace_back(name, t);
    }
    save_safetensors(dir.file("unpaired"), unpaired, good);
    EXPECT_TRUE(testing::throws_error(
        [&] { load_checkpoint(dir.file("unpaired"), *target.model, *target.optimizer, target.gen); },
        {"together", "alone"}));
    EXPECT_EQ(run_state(*target.model, *target.optimizer, target.gen), before);
  }
  // The good file loads (so the cases above failed for their one fault).
  save_safetensors(dir.file("good"), tensors, good);
  EXPECT_EQ(load_checkpoint(dir.file("good"), *target.model, *target.optimizer, target.gen), 2);
}

TEST(OptimizerState, BadStateIsRejected) {
  const Tensor p = Parameter(zeros({2}));
  AdamW opt({p});
  EXPECT_TRUE(testing::throws_error(
      [&] {
        opt.load_state({{"exp_avg.1", zeros({2})}}, 1);
      },
      {"index below 1"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        opt.load_state({{"exp_avg.0", zeros({3})}}, 1);
      },
      {"shape"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        opt.load_state({{"momentum_buffer.0", zeros({2})}}, 1);
      },
      {"unexpected key"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        opt.load_state({{"exp_avg.x", zeros({2})}}, 1);
      },
      {"names like"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        opt.load_state({{"exp_avg.0", zeros({2})}, {"exp_avg.0", zeros({2})}}, 1);
      },
      {"twice"}));
}

// ---- .npy -----------------------------------------------------------------------------------

const std::string& numpy_file(const std::string& name) {
  for (const NpyCase& c : kNumpyFiles)
    if (c.name == name) return c.bytes;
  throw std::runtime_error("no such case " + name);
}

TEST(Npy, WritesNumpysExactBytes) {
  const Tensor t = raw::div(raw::view(arange_float(0, 6, 1), {2, 3}), 4.0f);
  EXPECT_EQ(npy_bytes(t), numpy_file("f32_2x3"));
  EXPECT_EQ(npy_bytes(from_vector(std::vector<int64_t>{3, -1, 7, 1LL << 40}, {4})),
            numpy_file("i64_4"));
  EXPECT_EQ(npy_bytes(from_vector(std::vector<bool>{true, false, false, true}, {2, 2})),
            numpy_file("bool_2x2"));
  EXPECT_EQ(npy_bytes(scalar_tensor(2.5f)), numpy_file("f32_scalar"));
}

TEST(Npy, ReadsNumpysFilesIncludingFortranOrder) {
  const std::vector<double> expected = {0, 0.25, 0.5, 0.75, 1.0, 1.25};
  EXPECT_TRUE(testing::tensor_near(parse_npy(numpy_file("f32_2x3")), {2, 3}, expected, 0.0));
  EXPECT_TRUE(
      testing::tensor_near(parse_npy(numpy_file("f32_2x3_fortran")), {2, 3}, expected, 0.0));
  EXPECT_EQ(parse_npy(numpy_file("i64_4")).to_vector<int64_t>(),
            (std::vector<int64_t>{3, -1, 7, 1LL << 40}));
  EXPECT_EQ(parse_npy(numpy_file("bool_2x2")).dtype(), Dtype::boolean);
  EXPECT_EQ(parse_npy(numpy_file("f32_scalar")).dim(), 0);
  TempDir dir;
  const Tensor r = randn({4, 5, 6});
  save_npy(dir.file("r.npy"), raw::transpose(r, 0, 2));
  EXPECT_TRUE(testing::tensor_equal(load_npy(dir.file("r.npy")), raw::transpose(r, 0, 2)));
}

TEST(Npy, BadFilesAreNamedErrors) {
  const std::string good = numpy_file("f32_2x3");
  std::string f8 = good;
  f8.replace(f8.find("<f4"), 3, "<f8");
  std::string bad_key = good;
  bad_key.replace(bad_key.find("'descr'"), 7, "'dtype'");
  struct Case {
    const char* what;
    std::string bytes;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"empty", "", "magic"},
      {"not npy", "PK\x03\x04 zip file", "magic"},
      {"truncated data", good.substr(0, good.size() - 1), "truncated"},
      {"extra data", good + "x", "data bytes"},
      {"truncated header", good.substr(0, 40), "header length"},
      {"float64", f8, "<f8"},
      {"unknown key", bad_key, "only the keys"},
      {"version 9", std::string("\x93NUMPY\x09\x00", 8) + good.substr(8), "version"},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(testing::throws_error([&] { parse_npy(c.bytes); }, {c.needle})) << c.what;
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      parse_npy(good.substr(0, n));
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace qkv::nn
