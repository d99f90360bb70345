// utf8.h: UTF-8 to Unicode code points and back, strictly: the character tokenizer reads text
// with it, and the safetensors reader decodes JSON's \u escapes with it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qkv::nn {

// Decodes UTF-8 into code points; a malformed byte sequence (a bad lead or continuation byte,
// a truncated sequence, an overlong form, a surrogate, a value past U+10FFFF) is a qkv::Error
// naming its offset.
std::vector<char32_t> decode_utf8(const std::string& text);
// The length (1 to 4) of the valid UTF-8 character that starts at text[i], its code point in
// *code_point (when not null); 0 where the bytes there are not one.
size_t utf8_char(const std::string& text, size_t i, char32_t* code_point = nullptr);
std::string encode_utf8(const std::vector<char32_t>& code_points);

}  // namespace qkv::nn
