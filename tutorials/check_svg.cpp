// check_svg: reads an SVG figure a lesson wrote as XML, strictly, and checks that it says what
// it shows (run by ctest through tutorials/svg_check.cmake, after the lesson writes its figures).
//
//   check_svg FILE [--max_width W] [--text T]... [--at_least ELEMENT=N]...
//     the file must be well-formed XML (one root element <svg>, every tag closed in order,
//     attributes quoted, entities known), with a numeric width of at most W; some <text>
//     element must contain each T; and there must be at least N elements named ELEMENT
//     (polyline=6: six curves).
// It prints one line, "FILE: ok (...)", or "check_svg: error: ..." and exits 1.
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tutorials/common/program.h"

namespace {

struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // the character data directly inside it, entities decoded
};

// A strict reader of the XML the lessons write: elements, attributes, text, comments and a
// leading <?xml ...?>; no DTD. Every element, in document order.
class XmlReader {
 public:
  explicit XmlReader(std::string s) : s_(std::move(s)) {}

  std::vector<Element> read() {
    skip_space();
    if (s_.compare(pos_, 5, "<?xml") == 0) {
      const size_t end = s_.find("?>", pos_);
      if (end == std::string::npos) fail("the end of the <?xml ...?> declaration");
      pos_ = end + 2;
    }
    skip_misc();
    if (pos_ >= s_.size() || s_[pos_] != '<') fail("the root element");
    element();
    skip_misc();
    if (pos_ != s_.size()) fail("nothing after the root element");
    return elements_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    // Line and column of pos_, for a message a person can act on.
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      column = s_[i] == '\n' ? 1 : column + 1;
      line += s_[i] == '\n';
    }
    throw std::runtime_error("not well-formed XML: expected " + what + " at line " +
                             std::to_string(line) + ", column " + std::to_string(column));
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_misc() {  // spaces and comments
    for (;;) {
      skip_space();
      if (s_.compare(pos_, 4, "<!--") != 0) return;
      const size_t end = s_.find("-->", pos_ + 4);
      if (end == std::string::npos) fail("the end of a comment");
      pos_ = end + 3;
    }
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
           c == '.' || static_cast<unsigned char>(c) >= 0x80;
  }
  std::string name() {
    const size_t start = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) ++pos_;
    if (pos_ == start || std::isdigit(static_cast<unsigned char>(s_[start])) || s_[start] == '-')
      fail("a name");
    return s_.substr(start, pos_ - start);
  }
  // Character data up to `stop`, with &lt; &gt; &amp; &quot; &apos; &#N; &#xN; decoded.
  std::string chars(char stop) {
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != stop) {
      const char c = s_[pos_];
      if (c == '<' && stop != '<') fail("no '<' inside an attribute value");
      if (c != '&') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      const size_t end = s_.find(';', pos_);
      if (end == std::string::npos || end - pos_ > 10) fail("an entity ending in ';'");
      const std::string entity = s_.substr(pos_ + 1, end - pos_ - 1);
      static const std::map<std::string, std::string> named = {
          {"lt", "<"}, {"gt", ">"}, {"amp", "&"}, {"quot", "\""}, {"apos", "'"}};
      if (named.count(entity)) {
        out += named.at(entity);
      } else if (entity.size() > 1 && entity[0] == '#') {
        const bool hex = entity[1] == 'x';
        char* parsed = nullptr;
        const long code = std::strtol(entity.c_str() + (hex ? 2 : 1), &parsed, hex ? 16 : 10);
        if (*parsed != '\0' || code <= 0 || code > 0x10FFFF) fail("a valid character reference");
        out += code < 0x80 ? std::string(1, static_cast<char>(code)) : "?";
      } else {
        fail("a known entity, not &" + entity + ";");
      }
      pos_ = end + 1;
    }
    return out;
  }
  void element() {
    ++pos_;  // '<'
    const size_t index = elements_.size();
    elements_.push_back({name(), {}, ""});
    for (;;) {
      const size_t before = pos_;
      skip_space();
      if (pos_ >= s_.size()) fail("'>' to end the tag");
      if (s_[pos_] == '/' || s_[pos_] == '>') break;
      if (pos_ == before) fail("a space before an attribute");
      const std::string key = name();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '=') fail("'=' after attribute " + key);
      ++pos_;
      skip_space();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) fail("a quoted value");
      const char quote = s_[pos_++];
      const std::string value = chars(quote);
      if (pos_ >= s_.size()) fail("the closing quote of attribute " + key);
      ++pos_;
      if (!elements_[index].attributes.emplace(key, value).second)
        fail("attribute " + key + " once, not twice");
    }
    if (s_[pos_] == '/') {
      if (s_.compare(pos_, 2, "/>") != 0) fail("'/>'");
      pos_ += 2;
      return;
    }
    ++pos_;  // '>'
    for (;;) {
      const std::string text = chars('<');
      elements_[index].text += text;
      if (pos_ >= s_.size()) fail("</" + elements_[index].name + ">");
      if (s_.compare(pos_, 4, "<!--") == 0) {
        skip_misc();
        continue;
      }
      if (s_.compare(pos_, 2, "</") == 0) {
        pos_ += 2;
        const std::string closing = name();
        if (closing != elements_[index].name)
          fail("</" + elements_[index].name + ">, not </" + closing + ">");
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '>') fail("'>'");
        ++pos_;
        return;
      }
      element();
    }
  }

  std::string s_;
  size_t pos_ = 0;
  std::vector<Element> elements_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files, texts, at_least;
  int64_t max_width = 1'000'000;
  lesson::Flags flags("check_svg", "Checks that a lesson's SVG figure is well-formed XML and "
                                   "carries its labels.");
  flags.rest("FILE", &files, "the SVG file to check (one)");
  flags.number("--max_width", &max_width, "the widest the figure may be, in px", 1);
  flags.list("--text", &texts, "a text some <text> element must contain");
  flags.list("--at_least", &at_least, "ELEMENT=N: at least N such elements");
  return lesson::run(flags, argc, argv, [&] {
    if (files.size() != 1) flags.fail("one FILE, got " + std::to_string(files.size()));
    std::ifstream in(files[0], std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + files[0]);
    std::ostringstream content;
    content << in.rdbuf();
    std::vector<Element> elements;
    try {
      elements = XmlReader(content.str()).read();
    } catch (const std::exception& e) {
      throw std::runtime_error(files[0] + ": " + e.what());
    }
    const Element& root = elements.front();
    if (root.name != "svg") throw std::runtime_error(files[0] + ": the root is <" + root.name + ">");
    const auto width = root.attributes.find("width");
    const double w = width == root.attributes.end() ? -1 : std::atof(width->second.c_str());
    if (!(w > 0 && w <= static_cast<double>(max_width)))
      throw std::runtime_error(files[0] + ": a width of at most " + std::to_string(max_width) +
                               " px, got " +
                               (width == root.attributes.end() ? "none" : width->second));
    std::map<std::string, int64_t> counts;
    for (const Element& e : elements) ++counts[e.name];
    for (const std::string& want : texts) {
      bool found = false;
      for (const Element& e : elements)
        found = found || (e.name == "text" && e.text.find(want) != std::string::npos);
      if (!found) throw std::runtime_error(files[0] + ": no <text> contains \"" + want + "\"");
    }
    for (const std::string& spec : at_least) {
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) flags.fail("--at_least ELEMENT=N, got " + spec);
      const std::string element = spec.substr(0, eq);
      const long n = std::atol(spec.c_str() + eq + 1);
      if (counts[element] < n)
        throw std::runtime_error(files[0] + ": at least " + std::to_string(n) + " <" + element +
                                 "> elements, got " + std::to_string(counts[element]));
    }
    std::cout << files[0] << ": ok (" << elements.size() << " elements, " << counts["text"]
              << " texts, width " << width->second << " px)\n";
    return 0;
  });
}
