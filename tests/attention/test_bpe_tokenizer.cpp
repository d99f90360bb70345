// test_bpe_tokenizer.cpp: GPT-2's byte-level BPE tokenizer against GPT-2's own encoding
// algorithm (OpenAI's encoder.py, run by tools/gen_bpe_reference.py on a small vocabulary
// learned from tests/attention/data/bpe/corpus.txt, committed beside it): the pieces, the ids,
// the merges training learns, decoding back to the exact text, and every bad file or input a
// clear qkv::Error.
#include <filesystem>
#include <fstream>

#include "attention/all.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {
#include "tests/attention/bpe_reference.inc"

using testing::TempDir;
using testing::throws_error;
namespace fs = std::filesystem;

const std::string kData = QKV_TEST_DATA_DIR "/bpe";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(BpeTokenizer, ByteSymbolsAreGpt2s) {
  // The article's pieces of "It’s": ’ is E2 80 99, shown as "âĢĻ" and split "âĢ" + "Ļ".
  EXPECT_EQ(byte_symbol(' '), "Ġ");
  EXPECT_EQ(byte_symbol('\n'), "Ċ");
  EXPECT_EQ(byte_symbol('!'), "!");
  EXPECT_EQ(bytes_to_symbols("\xe2\x80\x99"), "âĢĻ");
  EXPECT_EQ(byte_symbol(0xAD), "Ń");  // the soft hyphen is not printable: it gets U+0143
  EXPECT_EQ(byte_symbol(0xFF), "ÿ");
}

TEST(BpeTokenizer, PiecesAndIdsAreGpt2sEncoder) {
  const BpeTokenizer tok = BpeTokenizer::from_folder(kData);
  ASSERT_EQ(tok.vocab_size(), kBpeVocab);
  ASSERT_EQ(static_cast<int64_t>(tok.merges().size()), kBpeMerges);
  for (const BpeCase& c : kBpeCases) {
    EXPECT_EQ(gpt2_pretokenize(c.text), c.pieces) << "'" << c.text << "'";
    const std::vector<int64_t> ids = tok.encode(c.text);
    EXPECT_EQ(ids, c.ids) << "'" << c.text << "'";
    EXPECT_EQ(tok.decode(ids), c.text);
  }
}

TEST(BpeTokenizer, OpenAisFileNamesLoadTheSame) {
  TempDir dir;
  write(dir.file("encoder.json"), read(kData + "/vocab.json"));
  write(dir.file("vocab.bpe"), read(kData + "/merges.txt"));
  const BpeTokenizer openai = BpeTokenizer::from_folder(dir.path());
  for (const BpeCase& c : kBpeCases) EXPECT_EQ(openai.encode(c.text), c.ids) << c.text;
}

// A folder with both pairs of files: which one belongs to the model cannot be told, so neither
// is picked silently.
TEST(BpeTokenizer, AFolderWithBothPairsOfFilesIsRefused) {
  TempDir dir;
  for (const auto& [from, to] : {std::pair{"vocab.json", "encoder.json"},
                                 std::pair{"merges.txt", "vocab.bpe"},
                                 std::pair{"vocab.json", "vocab.json"},
                                 std::pair{"merges.txt", "merges.txt"}})
    write(dir.file(to), read(kData + "/" + from));
  EXPECT_TRUE(testing::throws_error([&] { BpeTokenizer::from_folder(dir.path()); },
                                    {"from_folder", "both vocab.json + merges.txt and encoder.json"}));
}

TEST(BpeTokenizer, TrainingLearnsTheReferenceMerges) {
  const BpeTokenizer learned = BpeTokenizer::train(read(kData + "/corpus.txt"), kBpeMerges);
  const BpeTokenizer files = BpeTokenizer::from_folder(kData);
  EXPECT_EQ(learned.merges(), files.merges());
  ASSERT_EQ(learned.vocab_size(), files.vocab_size());
  for (int64_t id = 0; id < files.vocab_size(); ++id)
    EXPECT_EQ(learned.symbol(id), files.symbol(id)) << "id " << id;
  EXPECT_EQ(learned.symbol(learned.vocab_size() - 1), "<|endoftext|>");
}

TEST(BpeTokenizer, SavedFilesLoadBackTheSameTokenizer) {
  TempDir dir;
  const BpeTokenizer tok = BpeTokenizer::from_folder(kData);
  tok.save(dir.path());
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"merges.txt", "vocab.json"}));
  const BpeTokenizer back = BpeTokenizer::from_folder(dir.path());
  EXPECT_EQ(back.merges(), tok.merges());
  for (const BpeCase& c : kBpeCases) EXPECT_EQ(back.encode(c.text), c.ids);
}

TEST(BpeTokenizer, AnyValidUtf8DecodesBackExactly) {
  const BpeTokenizer tok = BpeTokenizer::from_folder(kData);
  Generator gen(5);
  const std::vector<char32_t> common = {U' ', U' ', U'\n', U'\'',     U's',     U'a',
                                        U'1', U'.', U'\t', U'\u00a0', U'\u2019'};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<char32_t> cps;
    const int64_t n = gen.random() % 24;
    for (int64_t i = 0; i < n; ++i) {
      char32_t c = static_cast<char32_t>(gen.random() % 0x110000);
      if (c >= 0xD800 && c <= 0xDFFF) c = U'x';  // surrogates are not characters
      if (gen.random() % 2 == 0) c = common[gen.random() % common.size()];
      cps.push_back(c);
    }
    const std::string text = nn::encode_utf8(cps);
    EXPECT_EQ(tok.decode(tok.encode(text)), text) << "trial " << trial;
    std::string joined;
    for (const std::string& p : gpt2_pretokenize(text)) joined += p;
    EXPECT_EQ(joined, text);
  }
}

TEST(BpeTokenizer, InvalidUtf8IsAClearError) {
  const BpeTokenizer tok = BpeTokenizer::from_folder(kData);
  EXPECT_TRUE(
      throws_error([&] { tok.encode("ok \xff"); }, {"BpeTokenizer::encode", "UTF-8", "offset 3"}));
  EXPECT_TRUE(
      throws_error([&] { tok.encode("cut \xe2\x80"); }, {"BpeTokenizer::encode", "offset 4"}));
  EXPECT_TRUE(throws_error([&] { tok.decode({tok.vocab_size()}); }, {"BpeTokenizer", "got 557"}));
  EXPECT_TRUE(throws_error([&] { tok.decode({-1}); }, {"BpeTokenizer", "got -1"}));
}

TEST(BpeTokenizer, BadFilesAreClearErrors) {
  TempDir dir;
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.file("nope")); },
                           {"from_folder", "a folder", "nope"}));
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); },
                           {"vocab.json and merges.txt", "got neither"}));
  const std::string vocab = read(kData + "/vocab.json"), merges = read(kData + "/merges.txt");
  write(dir.file("vocab.json"), vocab);
  write(dir.file("merges.txt"), merges + "a b c\n");
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); },
                           {"merges.txt", "line 302", "two symbols and one space", "a b c"}));
  write(dir.file("merges.txt"), merges + "Ġ zzz\n");
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); },
                           {"merge 301", "Ġzzz", "vocab.json"}));
  write(dir.file("merges.txt"), merges);
  write(dir.file("vocab.json"), vocab.substr(0, vocab.size() / 2));
  EXPECT_TRUE(
      throws_error([&] { BpeTokenizer::from_folder(dir.path()); }, {"vocab.json", "bad JSON"}));
  write(dir.file("vocab.json"), "{\"a\": 0}");
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); },
                           {"every byte", "byte 0", "vocab.json"}));
  write(dir.file("vocab.json"), "{\"a\": 0, \"b\": 0}");
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); }, {"unique ids"}));
  write(dir.file("vocab.json"), "{\"a\": -3}");
  EXPECT_TRUE(throws_error([&] { BpeTokenizer::from_folder(dir.path()); }, {"vocab.json", "a"}));
}

}  // namespace
}  // namespace qkv::attention
