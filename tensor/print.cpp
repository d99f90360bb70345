// print.cpp: a line-by-line port of torch/_tensor_str.py's _Formatter and _tensor_str.
#include "tensor/print.h"

#include <cmath>
#include <cstdio>

#include "tensor/view.h"

namespace qkv {
namespace {

PrintSuffixHook& suffix_hook() {
  static PrintSuffixHook hook;
  return hook;
}

std::string printf_str(const char* fmt, int precision, double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, precision, v);
  return buf;
}

// Python's "{:.{p}f}" / "{:.{p}e}" for a float; Python writes NaN as "nan" whatever its sign.
std::string fixed_str(double v, int precision) {
  if (std::isnan(v)) return "nan";
  return printf_str("%.*f", precision, v);
}
std::string sci_str(double v, int precision) {
  if (std::isnan(v)) return "nan";
  return printf_str("%.*e", precision, v);
}

// One formatter for the whole tensor, so every element gets the same form and width.
class Formatter {
 public:
  Formatter(const std::vector<double>& values, Dtype dtype, const PrintOptions& opt)
      : floating_(dtype == Dtype::float32), precision_(opt.precision), dtype_(dtype) {
    if (!floating_) {
      for (double v : values) max_width_ = std::max(max_width_, plain_str(v).size());
      return;
    }
    std::vector<double> nonzero_finite;
    for (double v : values)
      if (std::isfinite(v) && v != 0.0) nonzero_finite.push_back(v);
    if (nonzero_finite.empty()) {
      if (opt.sci_mode) sci_mode_ = *opt.sci_mode;
      return;
    }
    double lo = INFINITY, hi = 0;
    for (double v : nonzero_finite) {
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    // Magnitudes that span more than a factor of 1000 (or are huge, or tiny) switch to scientific.
    if (hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4)) {
      sci_mode_ = true;
      for (double v : nonzero_finite)
        max_width_ = std::max(max_width_, sci_str(v, precision_).size());
    } else if (int_mode_) {
      for (double v : nonzero_finite)
        max_width_ = std::max(max_width_, fixed_str(v, 0).size() + 1);  // room for the "."
    } else {
      for (double v : nonzero_finite)
        max_width_ = std::max(max_width_, fixed_str(v, precision_).size());
    }
    if (opt.sci_mode) sci_mode_ = *opt.sci_mode;
  }

  size_t width() const { return max_width_; }

  std::string format(double v) const {
    std::string s;
    if (!floating_) {
      s = plain_str(v);
    } else if (sci_mode_) {
      s = sci_str(v, precision_);
    } else if (int_mode_) {
      s = fixed_str(v, 0);
      if (std::isfinite(v)) s += ".";
    } else {
      s = fixed_str(v, precision_);
    }
    if (s.size() < max_width_) s.insert(0, max_width_ - s.size(), ' ');
    return s;
  }

 private:
  std::string plain_str(double v) const {
    if (dtype_ == Dtype::boolean) return v != 0.0 ? "True" : "False";
    return std::to_string(static_cast<int64_t>(v));
  }
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
  int precision_;
  Dtype dtype_;
};

// The values the formatter sees: all of them, or only the edges when summarising.
void collect(const Tensor& t, bool summarize, const PrintOptions& opt, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(load_as_double(t, t.storage_offset()));
    return;
  }
  const int64_t n = t.size(0), e = opt.edgeitems;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * e && i == e) i = n - e;
    collect(raw::select(t, 0, i), summarize, opt, out);
  }
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string bracket(const std::string& inside) {
  return std::string("[").append(inside).append("]");
}

std::string vector_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& f,
                       const PrintOptions& opt) {
  const int64_t element_length = static_cast<int64_t>(f.width()) + 2;
  const int64_t per_line = std::max<int64_t>(1, (opt.linewidth - indent) / element_length);
  const int64_t n = t.size(0), e = opt.edgeitems;
  std::vector<std::string> data;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * e && i == e) {
      data.push_back(" ...");
      i = n - e;
    }
    data.push_back(f.format(load_as_double(t, t.storage_offset() + i * t.stride(0))));
  }
  std::vector<std::string> lines;
  const size_t step = static_cast<size_t>(per_line);  // size_t: 32 bits on a 32-bit target
  for (size_t i = 0; i < data.size(); i += step) {
    std::vector<std::string> line(
        data.begin() + static_cast<std::ptrdiff_t>(i),
        data.begin() + static_cast<std::ptrdiff_t>(std::min(data.size(), i + step)));
    lines.push_back(join(line, ", "));
  }
  return bracket(join(lines, std::string(",\n").append(indent + 1, ' ')));
}

std::string tensor_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& f,
                       const PrintOptions& opt) {
  if (t.dim() == 0) return f.format(load_as_double(t, t.storage_offset()));
  if (t.dim() == 1) return vector_str(t, indent, summarize, f, opt);
  const int64_t n = t.size(0), e = opt.edgeitems;
  std::vector<std::string> slices;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * e && i == e) {
      slices.push_back("...");
      i = n - e;
    }
    slices.push_back(tensor_str(raw::select(t, 0, i), indent + 1, summarize, f, opt));
  }
  // Between sub-tensors: a comma, then one newline per remaining dim, then the indent.
  const std::string sep = std::string(",").append(t.dim() - 1, '\n').append(indent + 1, ' ');
  return bracket(join(slices, sep));
}

// torch's _add_suffixes: ", suffix" on the last line if it fits in linewidth, else a new line.
std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, int64_t indent,
                         const PrintOptions& opt) {
  const size_t nl = s.rfind('\n');
  int64_t last_line_len =
      static_cast<int64_t>(nl == std::string::npos ? s.size() + 2 : s.size() - nl + 1);
  for (const std::string& suffix : suffixes) {
    const int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > opt.linewidth) {
      s.append(",\n").append(indent, ' ').append(suffix);
      last_line_len = indent + len;
    } else {
      s.append(", ").append(suffix);
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

}  // namespace

PrintOptions& print_options() {
  static PrintOptions options;
  return options;
}

void set_print_suffix_hook(PrintSuffixHook hook) {
  suffix_hook() = std::move(hook);
}

std::string format_tensor(const Tensor& t, std::vector<std::string> suffixes,
                          const std::string& prefix) {
  if (!t.defined()) return "tensor(undefined)";
  const PrintOptions& opt = print_options();
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::string body;
  std::vector<std::string> front;
  if (t.numel() == 0) {
    // Empty tensors name their shape (unless 1-d) and any dtype other than float32.
    body = "[]";
    if (t.dim() != 1) front.push_back("size=" + shape_str(t.shape()));
    if (t.dtype() != Dtype::float32) front.push_back("dtype=" + dtype_name(t.dtype()));
  } else {
    const bool summarize = t.numel() > opt.threshold;
    std::vector<double> values;
    collect(t, summarize, opt, values);
    const Formatter f(values, t.dtype(), opt);
    body = tensor_str(t, indent, summarize, f, opt);
  }
  suffixes.insert(suffixes.begin(), front.begin(), front.end());
  return add_suffixes(prefix + body, suffixes, indent, opt);
}

std::string to_string(const Tensor& t) {
  std::vector<std::string> suffixes;
  if (t.defined() && suffix_hook()) suffixes = suffix_hook()(t);
  return format_tensor(t, suffixes);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << to_string(t);
}

}  // namespace qkv
