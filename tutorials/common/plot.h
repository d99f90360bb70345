// plot.h: the figures of the lessons: SVG line charts and heatmaps (open them in a browser),
// and heatmaps drawn with characters in the terminal.
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tensor/all.h"

namespace lesson {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// One chart, several series (drawn in different colours, with a legend).
inline std::string svg_line_chart(const std::vector<Series>& series, const std::string& title,
                                  const std::string& x_label, const std::string& y_label) {
  const double W = 640, H = 400, L = 60, R = 20, T = 40, Bm = 50;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const Series& s : series)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  y0 = std::min(y0, 0.0);
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - Bm - (y - y0) / (y1 - y0) * (H - T - Bm); };
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << title
     << "</text>\n"
     << "<line x1=\"" << L << "\" y1=\"" << H - Bm << "\" x2=\"" << W - R << "\" y2=\"" << H - Bm
     << "\" stroke=\"black\"/>\n<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L
     << "\" y2=\"" << H - Bm << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 4; ++i) {  // y ticks
    const double y = y0 + (y1 - y0) * i / 4;
    os << "<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">"
       << std::round(y * 100) / 100 << "</text>\n";
  }
  os << "<text x=\"" << W / 2 << "\" y=\"" << H - 12 << "\" text-anchor=\"middle\">" << x_label
     << " (" << x0 << " to " << x1 << ")</text>\n<text x=\"14\" y=\"" << H / 2
     << "\" transform=\"rotate(-90 14 " << H / 2 << ")\" text-anchor=\"middle\">" << y_label
     << "</text>\n";
  for (size_t k = 0; k < series.size(); ++k) {
    os << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << colours[k % 4]
       << "\" points=\"";
    for (auto [x, y] : series[k].points) os << px(x) << "," << py(y) << " ";
    os << "\"/>\n<text x=\"" << W - R - 150 << "\" y=\"" << T + 16 * (k + 1) << "\" fill=\""
       << colours[k % 4] << "\">" << series[k].name << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

// Maps side by side, white = 0 to dark blue = the largest value (and to dark
// red = the most negative, for maps that have negative entries, like differential attention's),
// with the characters of the sequence along both axes.
inline std::string svg_heatmaps(const std::vector<qkv::Tensor>& maps,
                                const std::vector<std::string>& titles,
                                const std::vector<std::string>& labels,
                                const std::vector<std::string>& column_labels = {}) {
  // Maps are (rows, cols): rows labelled by `labels`, columns by `column_labels` (default: the
  // same labels, for square self-attention maps).
  const std::vector<std::string>& col_labels = column_labels.empty() ? labels : column_labels;
  const double cell = 14, pad = 30, gap = 30;
  const int64_t R = maps.empty() ? 0 : maps[0].size(0), K = maps.empty() ? 0 : maps[0].size(1);
  const double width = cell * static_cast<double>(K), height = cell * static_cast<double>(R);
  auto escape = [](std::string c) {
    if (c == "<") c = "&lt;";
    if (c == "&") c = "&amp;";
    if (c == ">") c = "&gt;";
    return c;
  };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << pad + static_cast<double>(maps.size()) * (width + gap) << "\" height=\""
     << height + 2 * pad + 20
     << "\" font-family=\"monospace\" font-size=\"10\">\n<rect width=\"100%\" height=\"100%\" "
        "fill=\"white\"/>\n";
  for (size_t m = 0; m < maps.size(); ++m) {
    const double ox = pad + static_cast<double>(m) * (width + gap), oy = pad + 20;
    os << "<text x=\"" << ox << "\" y=\"16\" font-family=\"sans-serif\" font-size=\"12\">"
       << titles[m] << "</text>\n";
    const auto v = qkv::raw::contiguous(maps[m]).to_vector<float>();
    float top = 1e-9f;
    for (float x : v) top = std::max(top, std::fabs(x));
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < K; ++j) {
        const double a = v[static_cast<size_t>(i * K + j)] / top;  // in [-1, 1]
        const int shade = static_cast<int>(255 - 200 * std::fabs(a));
        os << "<rect x=\"" << ox + cell * static_cast<double>(j) << "\" y=\""
           << oy + cell * static_cast<double>(i) << "\" width=\"" << cell << "\" height=\"" << cell
           << "\" fill=\"rgb("
           << (a >= 0 ? std::to_string(shade) + "," + std::to_string(shade) + ",255"
                      : "255," + std::to_string(shade) + "," + std::to_string(shade))
           << ")\"/>\n";
      }
    for (int64_t i = 0; i < R && i < static_cast<int64_t>(labels.size()); ++i)
      os << "<text x=\"" << ox - 10 << "\" y=\"" << oy + cell * (static_cast<double>(i) + 0.75)
         << "\">" << escape(labels[static_cast<size_t>(i)]) << "</text>\n";
    for (int64_t j = 0; j < K && j < static_cast<int64_t>(col_labels.size()); ++j)
      os << "<text x=\"" << ox + cell * (static_cast<double>(j) + 0.3) << "\" y=\"" << oy - 4
         << "\">" << escape(col_labels[static_cast<size_t>(j)]) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

// A (T, T) map in the terminal: one character per weight, darker = larger (negative: blank).
inline std::string terminal_heatmap(const qkv::Tensor& map, const std::vector<std::string>& labels,
                                    const std::vector<std::string>& column_labels = {}) {
  static const char* shades = " .:-=+*#%@";
  const std::vector<std::string>& cols = column_labels.empty() ? labels : column_labels;
  const int64_t R = map.size(0), K = map.size(1);
  const auto v = qkv::raw::contiguous(map).to_vector<float>();
  const float top = std::max(1e-9f, *std::max_element(v.begin(), v.end()));
  std::ostringstream os;
  os << "    ";
  for (int64_t j = 0; j < K; ++j) os << cols[static_cast<size_t>(j)];
  os << "   (columns: keys, rows: queries)\n";
  for (int64_t i = 0; i < R; ++i) {
    os << "  " << labels[static_cast<size_t>(i)] << " ";
    for (int64_t j = 0; j < K; ++j)
      os << shades[std::clamp(
          static_cast<int>(9.0f * v[static_cast<size_t>(i * K + j)] / top + 0.5f), 0, 9)];
    os << "\n";
  }
  return os.str();
}

}  // namespace lesson
