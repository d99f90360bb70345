// json.h: a small strict JSON reader, for the headers of safetensors files (and a Hugging
// Face config.json): the whole grammar, UTF-8 checked, nesting limited to 64 levels (deeper is
// refused, not recursed into), and every problem a qkv::Error that names the byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qkv::nn {

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

// The document in `text`, or a qkv::Error "<op>: bad JSON header: expected ... at byte N".
Json parse_json(const std::string& text, const char* op);

// The value of `key` in an object, or null when the object has no such key.
const Json* json_member(const Json& object, const std::string& key);
// A JSON number that must be a whole number in [0, 2^63 - 1], written without a point or an
// exponent.
int64_t json_index(const Json& v, const char* op, const std::string& what);
// A JSON number in [min, max] (finite: "1e999" is refused, not read as infinity).
double json_number(const Json& v, const char* op, const std::string& what, double min,
                   double max);
// A string as a JSON string literal, quotes included.
std::string json_escape(const std::string& s);

}  // namespace qkv::nn
