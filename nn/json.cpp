// json.cpp: the JSON reader of json.h, a recursive-descent parser with a depth limit.
#include "nn/json.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "nn/utf8.h"
#include "tensor/error.h"

namespace qkv::nn {
namespace {

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
      std::unordered_set<std::string> keys;  // seen so far: a duplicate is found in O(1)
      do {
        skip_space();
        std::string key = string_literal();
        if (!keys.insert(key).second) fail("unique keys, got \"" + key + "\" twice");
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
      v.text = number();
    } else {
      fail("a value");
    }
    return v;
  }

  // A number as JSON's grammar writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  // ("1-5", "01", "1." and "+1" are not numbers). Its text is kept as written.
  std::string number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("a digit in a number");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) fail("a digit after the decimal point");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("a digit in the exponent");
    }
    return s_.substr(start, pos_ - start);
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
      if (static_cast<unsigned char>(c) >= 0x80) {  // a character of several bytes: whole, valid
        const size_t n = utf8_char(s_, pos_ - 1);
        if (n == 0) {
          --pos_;
          fail("valid UTF-8 in a string");
        }
        out.append(s_, pos_ - 1, n);
        pos_ += n - 1;
        continue;
      }
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

}  // namespace

Json parse_json(const std::string& text, const char* op) {
  return JsonParser(text, op).parse_document();
}

const Json* json_member(const Json& object, const std::string& key) {
  for (const JsonMember& m : object.members)
    if (m.key == key) return &m.value;
  return nullptr;
}

int64_t json_index(const Json& v, const char* op, const std::string& what) {
  const bool digits =
      v.kind == Json::Kind::number && !v.text.empty() && v.text.size() <= 19 &&
      std::all_of(v.text.begin(), v.text.end(), [](char c) { return c >= '0' && c <= '9'; });
  // Up to 19 digits, then compared with INT64_MAX as unsigned: no conversion that can overflow.
  const unsigned long long n = digits ? std::strtoull(v.text.c_str(), nullptr, 10) : 0;
  check(digits && n <= static_cast<unsigned long long>(INT64_MAX), op,
        "a non-negative integer up to 2^63 - 1 for ", what, ", got ",
        v.kind == Json::Kind::number ? v.text : "a non-number");
  return static_cast<int64_t>(n);
}

double json_number(const Json& v, const char* op, const std::string& what, double min,
                   double max) {
  check(v.kind == Json::Kind::number, op, "a number for ", what, ", got ",
        v.kind == Json::Kind::string ? "a string" : "another kind of value");
  // The text already follows JSON's grammar (the parser checked it), which strtod reads whole.
  const double x = std::strtod(v.text.c_str(), nullptr);
  check(std::isfinite(x) && x >= min && x <= max, op, "a number in [", min, ", ", max, "] for ",
        what, ", got ", v.text);
  return x;
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

}  // namespace qkv::nn
