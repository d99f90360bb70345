// bpe_tokenizer.cpp: the byte-level BPE tokenizer of bpe_tokenizer.h.
#include "attention/bpe_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <queue>

#include "nn/bytes.h"
#include "nn/json.h"
#include "nn/utf8.h"
#include "tensor/error.h"

namespace qkv::attention {
namespace {

struct CodePointRange {
  char32_t first, last;
};
#include "attention/unicode_classes.inc"

template <size_t N>
bool in_ranges(const CodePointRange (&ranges)[N], char32_t c) {
  const auto* it =
      std::upper_bound(std::begin(ranges), std::end(ranges), c,
                       [](char32_t x, const CodePointRange& r) { return x < r.first; });
  return it != std::begin(ranges) && c <= (it - 1)->last;
}

// The four kinds of character the pattern tells apart.
enum class Kind { letter, number, space, other };
Kind kind_of(char32_t c) {
  if (in_ranges(kLetterRanges, c)) return Kind::letter;
  if (in_ranges(kNumberRanges, c)) return Kind::number;
  if (in_ranges(kSpaceRanges, c)) return Kind::space;
  return Kind::other;
}

// Where the piece that starts at i ends: the pattern's alternatives in order, the first that
// matches wins, each as long as it can be (the regex engine's leftmost-first rule).
size_t piece_end(const std::vector<char32_t>& s, size_t i) {
  const size_t n = s.size();
  if (s[i] == U'\'') {  // 's|'t|'re|'ve|'m|'ll|'d
    for (const std::u32string ending : {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"})
      if (i + 1 + ending.size() <= n && std::equal(ending.begin(), ending.end(), s.begin() + i + 1))
        return i + 1 + ending.size();
  }
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional space, then a run of one kind.
  const size_t j = (s[i] == U' ' && i + 1 < n) ? i + 1 : i;
  const Kind k = kind_of(s[j]);
  size_t end = j;
  if (k != Kind::space) {
    while (end < n && kind_of(s[end]) == k) ++end;
    return end;
  }
  // '\s+(?!\S)|\s+': a run of whitespace; when a non-space follows, its last character is
  // left to go with that word (" hot" stays one piece), unless the run is one character.
  end = i;
  while (end < n && kind_of(s[end]) == Kind::space) ++end;
  return (end < n && end - i >= 2) ? end - 1 : end;
}

// bytes_to_unicode of GPT-2's encoder.py: the byte that each printable stand-in replaces.
const std::vector<char32_t>& byte_to_code_point() {
  static const std::vector<char32_t> table = [] {
    std::vector<char32_t> t(256);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[static_cast<size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

// The byte a stand-in character replaces, or -1 if it stands for none.
int symbol_byte(char32_t c) {
  static const std::map<char32_t, int> inverse = [] {
    std::map<char32_t, int> m;
    for (int b = 0; b < 256; ++b) m[byte_to_code_point()[static_cast<size_t>(b)]] = b;
    return m;
  }();
  const auto it = inverse.find(c);
  return it == inverse.end() ? -1 : it->second;
}

// GPT-2's id order for the 256 byte symbols: the printable bytes in byte order, then the rest.
std::vector<uint8_t> bytes_in_gpt2_order() {
  std::vector<uint8_t> order(256);
  for (int b = 0; b < 256; ++b) order[static_cast<size_t>(b)] = static_cast<uint8_t>(b);
  std::stable_sort(order.begin(), order.end(), [](uint8_t a, uint8_t b) {
    return byte_to_code_point()[a] < byte_to_code_point()[b];
  });
  return order;
}

}  // namespace

std::vector<std::string> gpt2_pretokenize(const std::string& text) {
  const std::vector<char32_t> s = nn::decode_utf8(text);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < s.size();) {
    const size_t end = piece_end(s, i);
    pieces.push_back(nn::encode_utf8(std::vector<char32_t>(s.begin() + i, s.begin() + end)));
    i = end;
  }
  return pieces;
}

std::string byte_symbol(uint8_t byte) {
  return nn::encode_utf8({byte_to_code_point()[byte]});
}

std::string bytes_to_symbols(const std::string& bytes) {
  std::string out;
  for (const char c : bytes) out += byte_symbol(static_cast<uint8_t>(c));
  return out;
}

namespace {

// A piece before any merge: one symbol per byte (what both encoding and training start from).
std::vector<std::string> byte_symbols(const std::string& piece) {
  std::vector<std::string> word;
  for (const char c : piece) word.push_back(byte_symbol(static_cast<uint8_t>(c)));
  return word;
}

}  // namespace

BpeTokenizer::BpeTokenizer(const std::unordered_map<std::string, int64_t>& vocabulary,
                           MergeList merges)
    : merges_(std::move(merges)) {
  // Ids count the entries: 0 to n - 1 for n entries (an id beyond that would make the table of
  // symbols as long as the id says, not as the file is).
  const auto n = static_cast<int64_t>(vocabulary.size());
  check(n < (int64_t{1} << 32), "BpeTokenizer", "fewer than 2^32 entries, got ", n);
  int64_t max_id = -1;
  for (const auto& [symbol, id] : vocabulary) {
    check(id >= 0 && id < n && !symbol.empty(), "BpeTokenizer",
          "non-empty symbols with ids in [0, ", n, ") for ", n, " entries, got '", symbol, "' -> ",
          id);
    max_id = std::max(max_id, id);
  }
  symbols_.assign(static_cast<size_t>(max_id + 1), "");
  for (const auto& [symbol, id] : vocabulary) {
    check(symbols_[static_cast<size_t>(id)].empty(), "BpeTokenizer", "unique ids, got ", id,
          " for both '", symbols_[static_cast<size_t>(id)], "' and '", symbol, "'");
    symbols_[static_cast<size_t>(id)] = symbol;
    ids_[symbol] = id;
  }
  for (int b = 0; b < 256; ++b)
    check(ids_.count(byte_symbol(static_cast<uint8_t>(b))) > 0, "BpeTokenizer",
          "a vocabulary entry for every byte, got none for byte ", b, " ('",
          byte_symbol(static_cast<uint8_t>(b)), "')");
  for (size_t r = 0; r < merges_.size(); ++r) {
    const auto& [a, b] = merges_[r];
    check(ids_.count(a) && ids_.count(b) && ids_.count(a + b), "BpeTokenizer", "merge ", r + 1,
          " ('", a, "' '", b, "'): both halves and their join '", a + b,
          "' in the vocabulary, got one missing");
    // A repeated merge keeps its first rank.
    merge_rank_.emplace(pair_key(ids_.at(a), ids_.at(b)),
                        std::pair<int64_t, int64_t>{static_cast<int64_t>(r), ids_.at(a + b)});
  }
  for (int b = 0; b < 256; ++b) byte_ids_[static_cast<size_t>(b)] = ids_.at(byte_symbol(static_cast<uint8_t>(b)));
}

BpeTokenizer BpeTokenizer::from_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  check(fs::is_directory(dir), "BpeTokenizer::from_folder", "a folder, got '", dir, "'");
  const auto has = [&](const char* a, const char* b) {
    return fs::exists(fs::path(dir) / a) && fs::exists(fs::path(dir) / b);
  };
  // One pair: with both, which one the model was trained with cannot be told.
  check(!(has("vocab.json", "merges.txt") && has("encoder.json", "vocab.bpe")),
        "BpeTokenizer::from_folder", "one pair of files in '", dir,
        "', got both vocab.json + merges.txt and encoder.json + vocab.bpe: keep the model's own");
  for (const auto& [vocab, merges] :
       {std::pair{"vocab.json", "merges.txt"}, std::pair{"encoder.json", "vocab.bpe"}}) {
    const fs::path v = fs::path(dir) / vocab, m = fs::path(dir) / merges;
    if (fs::exists(v) && fs::exists(m)) return from_files(v.string(), m.string());
  }
  throw Error(
      "BpeTokenizer::from_folder: vocab.json and merges.txt (or encoder.json and "
      "vocab.bpe) in '" +
      dir + "', got neither pair");
}

BpeTokenizer BpeTokenizer::from_files(const std::string& vocab_json,
                                      const std::string& merges_txt) {
  const std::string vocab = nn::read_file(vocab_json, ("BpeTokenizer: " + vocab_json).c_str());
  return from_texts(vocab, nn::read_file(merges_txt, ("BpeTokenizer: " + merges_txt).c_str()),
                    vocab_json, merges_txt);
}

BpeTokenizer BpeTokenizer::from_texts(const std::string& vocab_text, const std::string& merges_text,
                                      const std::string& vocab_name,
                                      const std::string& merges_name) {
  const std::string op = "BpeTokenizer: " + vocab_name;
  const nn::Json doc = nn::parse_json(vocab_text, op.c_str());
  check(doc.kind == nn::Json::Kind::object, op, "a JSON object of symbol -> id");
  std::unordered_map<std::string, int64_t> vocabulary;
  for (const nn::JsonMember& m : doc.members)
    vocabulary[m.key] = nn::json_index(m.value, op.c_str(), "the id of '" + m.key + "'");
  MergeList merges;
  const std::string& text = merges_text;
  size_t line_no = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    start = end + 1;
    ++line_no;
    if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
    const size_t space = line.find(' ');
    check(space != std::string::npos && space > 0 && space + 1 < line.size() &&
              line.find(' ', space + 1) == std::string::npos,
          "BpeTokenizer: " + merges_name, "line ", line_no, ": two symbols and one space, got '",
          line, "'");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  try {
    return BpeTokenizer(vocabulary, std::move(merges));
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (files " + vocab_name + ", " + merges_name + ")");
  }
}

// One piece: its bytes as symbols, then the best-ranked adjacent pair joined everywhere, until
// no adjacent pair is a merge. Written as GPT-2's encoder writes it, this rescans the whole piece
// for each merge: quadratic in its length, and a piece can be a megabyte of letters. Here the
// symbols are a linked list and the candidate pairs wait in a priority queue by (rank,
// position): the lowest rank first, and of equal ranks the leftmost, which joins every
// occurrence of a pair left to right as GPT-2 does. A candidate whose symbols have changed since
// it was queued is stale and skipped. O(n log n) for n bytes.
std::vector<int64_t> BpeTokenizer::bpe(const std::string& piece) const {
  struct Symbol {
    int64_t id;
    int64_t prev, next;  // neighbours in the list, -1 at the ends
  };
  std::vector<Symbol> word;
  for (const char c : piece) {
    const auto n = static_cast<int64_t>(word.size());
    word.push_back({byte_ids_[static_cast<uint8_t>(c)], n - 1, -1});
    if (n > 0) word[static_cast<size_t>(n - 1)].next = n;
  }
  struct Candidate {
    int64_t rank, left, left_id, right_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto consider = [&](int64_t left) {  // the pair that starts at `left`, if it is a merge
    const int64_t right = word[static_cast<size_t>(left)].next;
    if (right < 0) return;
    const int64_t a = word[static_cast<size_t>(left)].id, b = word[static_cast<size_t>(right)].id;
    const auto it = merge_rank_.find(pair_key(a, b));
    if (it != merge_rank_.end()) queue.push({it->second.first, left, a, b});
  };
  for (int64_t i = 0; i + 1 < static_cast<int64_t>(word.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = word[static_cast<size_t>(c.left)];
    if (left.id != c.left_id || left.next < 0) continue;  // stale: the left symbol changed
    Symbol& right = word[static_cast<size_t>(left.next)];
    if (right.id != c.right_id) continue;  // stale: the right symbol changed
    // Join: the left symbol becomes the merge, the right one leaves the list.
    left.id = merge_rank_.at(pair_key(c.left_id, c.right_id)).second;
    right.id = -1;
    left.next = right.next;
    if (right.next >= 0) word[static_cast<size_t>(right.next)].prev = c.left;
    if (left.prev >= 0) consider(left.prev);
    consider(c.left);
  }
  std::vector<int64_t> ids;
  for (int64_t i = word.empty() ? -1 : 0; i >= 0; i = word[static_cast<size_t>(i)].next)
    ids.push_back(word[static_cast<size_t>(i)].id);
  return ids;
}

std::vector<int64_t> BpeTokenizer::encode(const std::string& text) const {
  std::vector<std::string> pieces;
  try {
    pieces = gpt2_pretokenize(text);
  } catch (const Error& e) {
    throw Error(std::string("BpeTokenizer::encode: ") + e.what());
  }
  std::vector<int64_t> ids;
  for (const std::string& piece : pieces)
    for (const int64_t id : bpe(piece)) ids.push_back(id);
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string bytes;
  for (const int64_t id : ids)
    for (const char32_t c : nn::decode_utf8(symbol(id))) {
      const int b = symbol_byte(c);
      check(b >= 0, "BpeTokenizer::decode", "symbols made of byte stand-ins, got '", symbol(id),
            "' (id ", id, ")");
      bytes += static_cast<char>(b);
    }
  return bytes;
}

const std::string& BpeTokenizer::symbol(int64_t id) const {
  check(id >= 0 && id < vocab_size() && !symbols_[static_cast<size_t>(id)].empty(), "BpeTokenizer",
        "an id in the vocabulary (0..", vocab_size() - 1, "), got ", id);
  return symbols_[static_cast<size_t>(id)];
}

int64_t BpeTokenizer::id(const std::string& symbol) const {
  const auto it = ids_.find(symbol);
  return it == ids_.end() ? -1 : it->second;
}

BpeTokenizer BpeTokenizer::train(const std::string& text, int64_t n_merges) {
  check(n_merges >= 0, "BpeTokenizer::train", "n_merges >= 0, got ", n_merges);
  std::map<std::vector<std::string>, int64_t> words;  // each distinct piece, as symbols: count
  for (const std::string& piece : gpt2_pretokenize(text)) ++words[byte_symbols(piece)];
  std::unordered_map<std::string, int64_t> vocabulary;
  for (const uint8_t b : bytes_in_gpt2_order())
    vocabulary.emplace(byte_symbol(b), static_cast<int64_t>(vocabulary.size()));
  MergeList merges;
  for (int64_t m = 0; m < n_merges; ++m) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;  // ordered: ties to the smaller
    for (const auto& [word, count] : words)
      for (size_t i = 0; i + 1 < word.size(); ++i) pairs[{word[i], word[i + 1]}] += count;
    if (pairs.empty()) break;  // every piece is one symbol: nothing left to join
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;
    const auto [a, b] = best->first;
    merges.emplace_back(a, b);
    vocabulary.emplace(a + b, static_cast<int64_t>(vocabulary.size()));
    std::map<std::vector<std::string>, int64_t> joined;
    for (const auto& [word, count] : words) {
      std::vector<std::string> w;
      for (size_t i = 0; i < word.size(); ++i) {
        const bool pair = i + 1 < word.size() && word[i] == a && word[i + 1] == b;
        w.push_back(pair ? a + b : word[i]);
        i += pair ? 1 : 0;
      }
      joined[w] += count;
    }
    words = std::move(joined);
  }
  vocabulary.emplace("<|endoftext|>", static_cast<int64_t>(vocabulary.size()));
  return BpeTokenizer(vocabulary, std::move(merges));
}

void BpeTokenizer::save(const std::string& dir) const {
  std::string vocab = "{";
  for (int64_t id = 0; id < vocab_size(); ++id) {
    if (symbols_[static_cast<size_t>(id)].empty()) continue;
    vocab += (vocab.size() > 1 ? ", " : "") + nn::json_escape(symbols_[static_cast<size_t>(id)]) +
             ": " + std::to_string(id);
  }
  std::string merges = "#version: 0.2\n";
  for (const auto& [a, b] : merges_) merges += a + " " + b + "\n";
  nn::write_file_atomic((std::filesystem::path(dir) / "vocab.json").string(), vocab + "}");
  nn::write_file_atomic((std::filesystem::path(dir) / "merges.txt").string(), merges);
}

}  // namespace qkv::attention
