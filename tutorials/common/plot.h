// plot.h: the figures of the lessons: SVG line charts and grids of heatmaps (open them in a
// browser), and heatmaps drawn with characters in the terminal.
//
//   svg_line_chart(series, {.title = ..., .x_label = "step", .y_label = "cross-entropy",
//                           .caption = {"what to see in it", ...}})
//   svg_heatmap_grid({.title = "tiny GPT (causal), step 1500: ...", .maps = {{l0h0, l0h1},
//                     {l1h0, l1h1}}, .row_titles = {"layer 0", "layer 1"}, ...})
//
// Every figure says in itself what it shows: a title, named axes, a legend or a colour scale
// with its values, and a caption with what to look for. Text is escaped for XML, so a label
// "<" or "&" cannot break the file (a test parses every figure the lessons write).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tensor/all.h"

namespace lesson {

// Text as XML character data: &, <, > and quotes spelled as entities.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out.push_back(c);
  }
  return out;
}

// A number as a tick label: up to 3 significant digits, no trailing zeros ("0.5", "1500").
inline std::string tick_text(double v) {
  char buf[32];
  if (std::fabs(v) >= 1 && std::fabs(v) < 1e15 && v == std::round(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);  // 1500, not 1.5e+03
  else
    std::snprintf(buf, sizeof buf, "%.3g", std::fabs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// A round step for about `ticks` intervals over `range`: 1, 2 or 5 times a power of ten.
inline double nice_step(double range, int ticks = 5) {
  const double raw = range / ticks, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

// Words into lines of at most `width` characters (a caption that fits the figure).
inline std::vector<std::string> wrapped(const std::vector<std::string>& lines, size_t width) {
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    std::istringstream words(line);
    std::string word, current;
    while (words >> word) {
      if (!current.empty() && current.size() + 1 + word.size() > width) {
        out.push_back(current);
        current.clear();
      }
      current += (current.empty() ? "" : " ") + word;
    }
    out.push_back(current);
  }
  return out;
}

// A character as a label: in a figure a space is \u2423 and a newline \u21b5 (so that a text's own
// '_' or '/' cannot be taken for them); in the terminal (ascii), '_' and '/'.
inline std::string char_label(const std::string& c, bool ascii) {
  if (c == " ") return ascii ? "_" : "\u2423";
  if (c == "\n") return ascii ? "/" : "\u21b5";
  if (c == "\t") return ascii ? ">" : "\u21e5";
  return c;
}
// What char_label's figure labels mean, for a caption.
inline const char* kCharLabelKey = "\u2423 is a space, \u21b5 a newline.";

struct Series {
  std::string name = "";                               // in the legend
  std::vector<std::pair<double, double>> points = {};  // (x, y)
  std::string colour = "";                             // empty: the palette's, by position
  std::string dash = "";  // empty: solid; "6 4": dashed; "2 3": dotted
  double width = 1.5;
  bool markers = false;  // a dot at each point (for a few evaluations between long gaps)
};

struct ChartText {
  std::string title = "", x_label = "", y_label = "";
  std::vector<std::string> caption = {};  // lines under the chart: what to see in it
  double y_max = 0;           // > 0: the y axis ends here and higher points are cut off (a
                              // diverging run would otherwise flatten every other curve)
  bool integer_x = false;     // x ticks at whole numbers only (steps, blocks)
};

// One chart, several series, with a legend that shows each line's colour and dash.
inline std::string svg_line_chart(const std::vector<Series>& series, const ChartText& text) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                  "#8c564b"};
  const double W = 760, L = 70, R = 250, T = 44, plot_h = 320;  // the legend sits at the right
  const std::vector<std::string> caption = wrapped(text.caption, 100);
  const double H = T + plot_h + 58 + 18.0 * static_cast<double>(caption.size());
  double x0 = 1e300, x1 = -1e300, y0 = 0, y1 = -1e300;  // y from 0: losses read against 0
  for (const Series& s : series)
    for (auto [x, y] : s.points) {
      if (!std::isfinite(y)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  if (!(x1 > x0)) x0 = 0, x1 = 1;
  if (text.y_max > 0 && y1 > text.y_max) y1 = text.y_max;
  if (!(y1 > y0)) y1 = y0 + 1;
  // Round ends and round ticks: the axes reach the next multiple of their tick step.
  const double x_step = text.integer_x ? std::max(1.0, nice_step(x1 - x0)) : nice_step(x1 - x0);
  const double y_step = nice_step(y1 - y0);
  x0 = std::floor(x0 / x_step) * x_step, x1 = std::ceil(x1 / x_step) * x_step;
  y0 = std::floor(y0 / y_step) * y_step, y1 = std::ceil(y1 / y_step) * y_step;
  const double bottom = T + plot_h, right = W - R;
  auto px = [&](double x) { return L + (x - x0) / (x1 - x0) * (right - L); };
  auto py = [&](double y) {  // held within 10 heights of the plot: a renderer mishandles 1e38
    y = std::clamp(y, y0 - 10 * (y1 - y0), y1 + 10 * (y1 - y0));
    return bottom - (y - y0) / (y1 - y0) * plot_h;
  };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<clipPath id=\"plot\"><rect x=\"" << L << "\" y=\"" << T - 2 << "\" width=\"" << right - L
     << "\" height=\"" << plot_h + 4 << "\"/></clipPath>\n"
     << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">"
     << xml_escape(text.title) << "</text>\n"
     << "<line x1=\"" << L << "\" y1=\"" << bottom << "\" x2=\"" << right << "\" y2=\"" << bottom
     << "\" stroke=\"black\"/>\n<line x1=\"" << L << "\" y1=\"" << T << "\" x2=\"" << L
     << "\" y2=\"" << bottom << "\" stroke=\"black\"/>\n";
  for (double y = y0; y <= y1 + y_step / 2; y += y_step)  // ticks and light grid lines
    os << "<line x1=\"" << L << "\" y1=\"" << py(y) << "\" x2=\"" << right << "\" y2=\"" << py(y)
       << "\" stroke=\"#e0e0e0\"/>\n<text x=\"" << L - 6 << "\" y=\"" << py(y) + 4
       << "\" text-anchor=\"end\">" << tick_text(y) << "</text>\n";
  for (double x = x0; x <= x1 + x_step / 2; x += x_step)
    os << "<text x=\"" << px(x) << "\" y=\"" << bottom + 16 << "\" text-anchor=\"middle\">"
       << tick_text(x) << "</text>\n";
  os << "<text x=\"" << (L + right) / 2 << "\" y=\"" << bottom + 36
     << "\" text-anchor=\"middle\">" << xml_escape(text.x_label) << "</text>\n<text x=\"18\" y=\""
     << T + plot_h / 2 << "\" transform=\"rotate(-90 18 " << T + plot_h / 2
     << ")\" text-anchor=\"middle\">" << xml_escape(text.y_label) << "</text>\n";
  for (size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    const std::string colour = s.colour.empty() ? palette[k % 6] : s.colour;
    const std::string dash =
        s.dash.empty() ? "" : " stroke-dasharray=\"" + s.dash + "\"";
    os << "<polyline clip-path=\"url(#plot)\" fill=\"none\" stroke-width=\"" << s.width << "\" stroke=\"" << colour << "\""
       << dash << " points=\"";
    for (auto [x, y] : s.points)
      if (std::isfinite(y)) os << px(x) << "," << py(y) << " ";
    os << "\"/>\n";
    if (s.markers)
      for (auto [x, y] : s.points)
        if (std::isfinite(y))
          os << "<circle clip-path=\"url(#plot)\" cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"2.5\" fill=\"" << colour
             << "\"/>\n";
    const double ly = T + 8 + 20.0 * static_cast<double>(k);  // the legend: a sample, the name
    os << "<line x1=\"" << right + 14 << "\" y1=\"" << ly << "\" x2=\"" << right + 44
       << "\" y2=\"" << ly << "\" stroke=\"" << colour << "\" stroke-width=\"" << s.width << "\""
       << dash << "/>\n<text x=\"" << right + 50 << "\" y=\"" << ly + 4 << "\">"
       << xml_escape(s.name) << "</text>\n";
  }
  for (size_t i = 0; i < caption.size(); ++i)
    os << "<text x=\"" << L << "\" y=\"" << bottom + 58 + 18.0 * static_cast<double>(i)
       << "\" font-size=\"13\">" << xml_escape(caption[i]) << "</text>\n";
  os << "</svg>\n";
  return os.str();
}

// A grid of heatmaps, one per panel: rows of panels (say layers) by columns (heads). Every
// panel's rows are queries and its columns keys (or any two axes: the names are yours), with
// the sequence's characters along both sides, one colour scale for all panels (white = 0 to
// dark blue = `top`; red for negative values, as differential attention has), and the scale's
// values drawn beside it.
struct HeatmapGrid {
  std::string title = "";  // name the run and the moment: "tiny GPT, causal, after 1500 steps"
  std::vector<std::vector<qkv::Tensor>> maps = {};  // maps[row][column], each (rows, cols)
  std::vector<std::string> row_titles = {}, column_titles = {};  // "layer 0"; "head 0"
  std::vector<std::string> row_labels = {}, column_labels = {};  // text along each panel's sides
  std::string row_axis = "query position", column_axis = "key position";
  std::string value_name = "attention weight";
  std::vector<std::string> caption = {};
  double max_width = 1600;  // px: cells shrink, then panels wrap, to keep the figure within it
  double scale_max = 0;     // the colour scale's top; 0: the largest magnitude of any panel
};

inline std::string svg_heatmap_grid(const HeatmapGrid& g) {
  const size_t grid_rows = g.maps.size(), grid_cols = grid_rows ? g.maps[0].size() : 0;
  const size_t panels = grid_rows * grid_cols;
  const int64_t R = panels ? g.maps[0][0].size(0) : 0, K = panels ? g.maps[0][0].size(1) : 0;
  // One scale for every panel: 0 to scale_max, or to the largest magnitude of any panel.
  double top = g.scale_max > 0 ? g.scale_max : 1e-9;
  bool negative = false;
  for (const auto& row : g.maps)
    for (const qkv::Tensor& m : row)
      for (const float v : qkv::raw::contiguous(m).to_vector<float>()) {
        if (g.scale_max <= 0) top = std::max(top, std::fabs(static_cast<double>(v)));
        negative = negative || v < 0;
      }
  // Margins (px): the axis name and row titles at the left, each panel's row labels, the gap
  // between panels, the colour scale at the right, the title and axis line at the top.
  const double left = 96, label = 14, gap = 22, scale_w = 120, head = 64, min_cell = 4;
  // Panels per line: the grid's columns if they fit at the smallest cell, else as many as fit
  // (the grid then wraps, and each panel is titled with its row and column).
  const double room = g.max_width - left - scale_w;
  const size_t fit = static_cast<size_t>(std::max(
      1.0, std::floor(room / (label + gap + min_cell * static_cast<double>(std::max<int64_t>(K, 1))))));
  const bool wrap = grid_cols > fit;
  const size_t per_line = wrap ? fit : std::max<size_t>(grid_cols, 1);
  const size_t lines = wrap ? (panels + per_line - 1) / per_line : grid_rows;
  const double cell = std::clamp(
      (room - static_cast<double>(per_line) * (label + gap)) /
          static_cast<double>(per_line * static_cast<size_t>(std::max<int64_t>(1, K))),
      min_cell, 18.0);
  const double pw = cell * static_cast<double>(K), ph = cell * static_cast<double>(R);
  const double line_h = ph + label + 30;
  // The axes named in words above the panels: a rotated name beside a short grid would not fit.
  const std::string axes = "rows \u2193 " + g.row_axis + ", columns \u2192 " + g.column_axis;
  const double W = std::max(
      left + static_cast<double>(per_line) * (label + pw + gap) + scale_w,
      std::min(g.max_width, 20 + std::max(8.0 * static_cast<double>(g.title.size()),
                                          7.0 * static_cast<double>(axes.size()))));
  const std::vector<std::string> title = wrapped({g.title}, static_cast<size_t>((W - 20) / 8));
  const std::vector<std::string> axis_lines = wrapped({axes}, static_cast<size_t>((W - 20) / 7));
  const double top_h =
      head + 18.0 * static_cast<double>(title.size() - 1 + axis_lines.size() - 1);
  const std::vector<std::string> caption =
      wrapped(g.caption, static_cast<size_t>((W - left - 10) / 7));
  const double sh = std::max(ph, 120.0);  // the colour bar's height
  const double body = std::max(static_cast<double>(lines) * line_h, label + 14 + sh + 10);
  const double H = top_h + body + 20 + 18.0 * static_cast<double>(caption.size());
  const double font = std::clamp(cell - 3, 6.0, 12.0);
  auto colour = [&](double v) {  // white -> dark blue (positive) or dark red (negative)
    const double a = std::clamp(v / top, -1.0, 1.0);
    const int shade = static_cast<int>(std::lround(255 - 200 * std::fabs(a)));
    const std::string s = std::to_string(shade);
    return a >= 0 ? "rgb(" + s + "," + s + ",255)" : "rgb(255," + s + "," + s + ")";
  };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (size_t i = 0; i < title.size(); ++i)
    os << "<text x=\"10\" y=\"" << 22 + 18.0 * static_cast<double>(i) << "\" font-size=\"15\">"
       << xml_escape(title[i]) << "</text>\n";
  for (size_t i = 0; i < axis_lines.size(); ++i)
    os << "<text x=\"10\" y=\""
       << 22 + 18.0 * static_cast<double>(title.size() + i) << "\" fill=\"#444\">"
       << xml_escape(axis_lines[i]) << "</text>\n";
  for (size_t p = 0; p < panels; ++p) {
    const size_t r = p / grid_cols, c = p % grid_cols;
    const size_t line = wrap ? p / per_line : r, slot = wrap ? p % per_line : c;
    const double ox = left + static_cast<double>(slot) * (label + pw + gap) + label;
    const double oy = top_h + static_cast<double>(line) * line_h + label + 14;
    const std::string row_title = r < g.row_titles.size() ? g.row_titles[r] : "";
    const std::string col_title = c < g.column_titles.size() ? g.column_titles[c] : "";
    if (wrap)  // each panel says which it is
      os << "<text x=\"" << ox << "\" y=\"" << oy - label - 6 << "\" font-weight=\"bold\">"
         << xml_escape(row_title + (row_title.empty() || col_title.empty() ? "" : ", ") +
                       col_title)
         << "</text>\n";
    else if (line == 0)
      os << "<text x=\"" << ox << "\" y=\"" << oy - label - 6 << "\" font-weight=\"bold\">"
         << xml_escape(col_title) << "</text>\n";
    if (!wrap && slot == 0 && !row_title.empty())
      os << "<text x=\"10\" y=\"" << oy + ph / 2 << "\" font-weight=\"bold\">"
         << xml_escape(row_title) << "</text>\n";
    const auto v = qkv::raw::contiguous(g.maps[r][c]).to_vector<float>();
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < K; ++j)
        os << "<rect x=\"" << ox + cell * static_cast<double>(j) << "\" y=\""
           << oy + cell * static_cast<double>(i) << "\" width=\"" << cell << "\" height=\"" << cell
           << "\" fill=\"" << colour(v[static_cast<size_t>(i * K + j)]) << "\"/>\n";
    os << "<rect x=\"" << ox << "\" y=\"" << oy << "\" width=\"" << pw << "\" height=\"" << ph
       << "\" fill=\"none\" stroke=\"#888\"/>\n";
    os << "<g font-family=\"monospace\" font-size=\"" << font << "\">\n";
    for (int64_t i = 0; i < R && i < static_cast<int64_t>(g.row_labels.size()); ++i)
      os << "<text x=\"" << ox - 3 << "\" y=\"" << oy + cell * (static_cast<double>(i) + 0.75)
         << "\" text-anchor=\"end\">" << xml_escape(g.row_labels[static_cast<size_t>(i)])
         << "</text>\n";
    for (int64_t j = 0; j < K && j < static_cast<int64_t>(g.column_labels.size()); ++j)
      os << "<text x=\"" << ox + cell * (static_cast<double>(j) + 0.5) << "\" y=\"" << oy - 3
         << "\" text-anchor=\"middle\">" << xml_escape(g.column_labels[static_cast<size_t>(j)])
         << "</text>\n";
    os << "</g>\n";
  }
  // The colour scale: a bar from the lowest to the highest value, with five values beside it.
  const double sx = left + static_cast<double>(per_line) * (label + pw + gap) + 10;
  const double sy = top_h + label + 14;
  const double low = negative ? -top : 0;
  for (int i = 0; i < 50; ++i) {
    const double v = top - (top - low) * (i + 0.5) / 50;
    os << "<rect x=\"" << sx << "\" y=\"" << sy + sh * i / 50 << "\" width=\"14\" height=\""
       << sh / 50 + 0.5 << "\" fill=\"" << colour(v) << "\"/>\n";
  }
  os << "<rect x=\"" << sx << "\" y=\"" << sy << "\" width=\"14\" height=\"" << sh
     << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (int i = 0; i <= 4; ++i)
    os << "<text x=\"" << sx + 18 << "\" y=\"" << sy + sh * i / 4 + 4 << "\">"
       << tick_text(top - (top - low) * i / 4) << "</text>\n";
  os << "<text x=\"" << sx << "\" y=\"" << sy - 8 << "\">" << xml_escape(g.value_name)
     << "</text>\n";
  for (size_t i = 0; i < caption.size(); ++i)
    os << "<text x=\"" << left << "\" y=\""
       << H - 8 - 18.0 * static_cast<double>(caption.size() - 1 - i) << "\">"
       << xml_escape(caption[i]) << "</text>\n";
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
