// bpe_tokenizer.h: GPT-2's tokenizer, byte-level byte-pair encoding (BPE), read from GPT-2's
// own vocabulary files, as OpenAI's encoder.py and Hugging Face's GPT2Tokenizer run it.
//
//   encode: text (UTF-8)
//     -> pieces, split by GPT-2's pattern (gpt2_pretokenize below):
//          's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//        "It’s hot" -> "It", "’", "s", " hot"   (a space travels with the word after it)
//     -> each piece's UTF-8 bytes, one printable character per byte (bytes_to_symbols):
//        ' ' (0x20) -> "Ġ", '’' (E2 80 99) -> "âĢĻ"; "!" .. "~" stand for themselves
//     -> merges: the adjacent pair with the lowest rank (its line in merges.txt) is joined
//        wherever it occurs, again and again, until no adjacent pair has a rank
//        (" hot": "Ġ" "h" "o" "t" -> "Ġh" "o" "t" -> "Ġh" "ot" -> "Ġhot")
//     -> each remaining symbol's id in the vocabulary                      ("Ġhot" -> 3024)
//   decode: ids -> symbols -> characters -> the bytes they stand for.
// Every byte has a symbol of its own, so any valid UTF-8 text encodes, and decoding gives it
// back exactly. Text that looks like "<|endoftext|>" is encoded as ordinary text, as
// encoder.py does; the id of the real marker is a vocabulary entry like any other.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qkv::attention {

// GPT-2's pre-tokenizer: the text (valid UTF-8, else a qkv::Error naming the bad byte) cut
// into the pieces the pattern above matches, left to right. Joined, they are the text.
std::vector<std::string> gpt2_pretokenize(const std::string& text);

// The printable character (as UTF-8) that stands for each byte in GPT-2's vocabulary files:
// bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves (as Latin-1 characters); the
// other 68 bytes (controls, space, ...) map, in byte order, to U+0100, U+0101, ...
std::string byte_symbol(uint8_t byte);
std::string bytes_to_symbols(const std::string& bytes);  // one symbol per byte, concatenated

using MergeList = std::vector<std::pair<std::string, std::string>>;  // in rank order

class BpeTokenizer {
 public:
  // vocabulary: symbol -> id, as in vocab.json / encoder.json. Every byte's symbol must be in
  // it, and so must every merge's two halves and their join; ids unique, 0 to n - 1 for n
  // entries (and below 2^32).
  BpeTokenizer(const std::unordered_map<std::string, int64_t>& vocabulary, MergeList merges);
  // The files of a folder: vocab.json + merges.txt (Hugging Face's names) or encoder.json +
  // vocab.bpe (OpenAI's). A missing file or a bad line is a qkv::Error naming the file.
  static BpeTokenizer from_folder(const std::string& dir);
  static BpeTokenizer from_files(const std::string& vocab_json, const std::string& merges_txt);
  // The same from the two files' texts; the names are for the errors.
  static BpeTokenizer from_texts(const std::string& vocab_text, const std::string& merges_text,
                                 const std::string& vocab_name, const std::string& merges_name);
  // Learns n_merges merges from text, as GPT-2's were learned from WebText: start from the 256
  // byte symbols, split the text into pieces as encode does, then again and again join the
  // adjacent pair that occurs most often (ties: the smaller pair in byte order). Ids: the
  // bytes in GPT-2's order (0..255), the merges (256..), then "<|endoftext|>".
  static BpeTokenizer train(const std::string& text, int64_t n_merges);
  // Writes vocab.json and merges.txt into dir (each written whole or not at all).
  void save(const std::string& dir) const;

  std::vector<int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<int64_t>& ids) const;  // bytes; may end mid-character
  const std::string& symbol(int64_t id) const;  // the vocabulary's spelling: "It", "âĢ", "Ġis"
  int64_t id(const std::string& symbol) const;  // -1 if the vocabulary has no such symbol
  int64_t vocab_size() const { return static_cast<int64_t>(symbols_.size()); }  // entries
  const MergeList& merges() const { return merges_; }

 private:
  std::vector<int64_t> bpe(const std::string& piece) const;  // one piece's ids
  static uint64_t pair_key(int64_t a, int64_t b) {
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
  }

  std::vector<std::string> symbols_;  // by id, 0 to n - 1
  std::unordered_map<std::string, int64_t> ids_;
  MergeList merges_;
  // (id of a, id of b) -> (the merge's rank, its line; the id of a + b)
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> merge_rank_;
  std::array<int64_t, 256> byte_ids_{};  // each byte's symbol's id
};

}  // namespace qkv::attention
