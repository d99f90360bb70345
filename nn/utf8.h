// utf8.h: UTF-8 to Unicode code points and back, strictly: the character tokenizer reads text
// with it, and the safetensors reader decodes JSON's \u escapes with it.
#pragma once

#include <string>
#include <vector>

namespace qkv::nn {

// Decodes UTF-8 into code points; a malformed byte sequence (a bad lead or continuation byte,
// a truncated sequence, an overlong form, a surrogate, a value past U+10FFFF) is a qkv::Error
// naming its offset.
std::vector<char32_t> decode_utf8(const std::string& text);
std::string encode_utf8(const std::vector<char32_t>& code_points);

}  // namespace qkv::nn
