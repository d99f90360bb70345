// Lesson 03: a multilayer perceptron learns to separate two moons, and we draw what it learned.
//
// What you will learn:
//   - a classifier from nn pieces: Linear(2, 16) -> Tanh -> Linear(16, 16) -> Tanh ->
//     Linear(16, 2), trained with cross-entropy and Adam on the whole data set at once;
//   - the data: two interleaving half circles with noise (scikit-learn's make_moons), which no
//     straight line separates; the hidden layers bend the plane until one does;
//   - the decision boundary drawn as an SVG, as micrograd's demo draws it: the model's class
//     for every point of a grid, with the training points on top (the demo's model and training
//     differ: 100 points, ReLU, a hinge loss and SGD);
//   - training accuracy reaching 100%.
// What comes before: lessons 01 (tensors) and 02 (autograd).
// Run it: ./build/release/tutorials/03_mlp_two_moons [--svg_dir DIR]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;

namespace {

constexpr double kPi = 3.14159265358979323846;

// n points per moon: the upper half circle around (0, 0) is class 0, the lower one around
// (1, 0.5) class 1; each point moved by N(0, noise^2) in x and y.
void make_moons(int64_t n, double noise, Generator& g, Tensor& x, Tensor& y) {
  std::vector<float> xs;
  std::vector<int64_t> ys;
  const Tensor jitter = randn({2 * n, 2}, &g);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < n; ++i) {
      const double t = kPi * static_cast<double>(i) / static_cast<double>(n - 1);
      const double px = c == 0 ? std::cos(t) : 1 - std::cos(t);
      const double py = c == 0 ? std::sin(t) : 0.5 - std::sin(t);
      const int64_t r = c * n + i;
      xs.push_back(static_cast<float>(px + noise * jitter.at({r, 0})));
      xs.push_back(static_cast<float>(py + noise * jitter.at({r, 1})));
      ys.push_back(c);
    }
  x = from_vector(xs, {2 * n, 2});
  y = from_vector(ys, {2 * n});
}

double accuracy(nn::Sequential& mlp, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  const Tensor predicted = max(mlp(x), 1).indices;
  const std::vector<int64_t> p = predicted.to_vector<int64_t>(), t = y.to_vector<int64_t>();
  int64_t right = 0;
  for (size_t i = 0; i < p.size(); ++i) right += p[i] == t[i];
  return static_cast<double>(right) / static_cast<double>(p.size());
}

// The plane coloured by the model's class (light red / light blue), the points on top.
std::string decision_svg(nn::Sequential& mlp, const Tensor& x, const Tensor& y,
                         const std::string& title) {
  const double x0 = -1.6, x1 = 2.6, y0 = -1.2, y1 = 1.7, size = 480;
  const int64_t cells = 70;
  std::vector<float> grid;
  for (int64_t i = 0; i < cells; ++i)
    for (int64_t j = 0; j < cells; ++j) {
      grid.push_back(static_cast<float>(x0 + (x1 - x0) * (static_cast<double>(j) + 0.5) / cells));
      grid.push_back(static_cast<float>(y1 - (y1 - y0) * (static_cast<double>(i) + 0.5) / cells));
    }
  NoGradGuard no_grad;
  const std::vector<int64_t> cls =
      max(mlp(from_vector(grid, {cells * cells, 2})), 1).indices.to_vector<int64_t>();
  std::ostringstream os;
  const double cw = size * (x1 - x0) / (y1 - y0) / cells, ch = size / cells, top = 30;
  // A title above the plane and what the colours mean below it; the plane sits at y = top.
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << cw * cells << "\" height=\""
     << size + top + 30 << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"8\" y=\"20\" font-size=\"15\">" << title << "</text>\n"
     << "<text x=\"8\" y=\"" << size + top + 20
     << "\">shaded: the class the MLP predicts there (red 0, blue 1); dots: the training points"
     << "</text>\n<g transform=\"translate(0 " << top << ")\">\n";
  for (int64_t i = 0; i < cells; ++i)
    for (int64_t j = 0; j < cells; ++j)
      os << "<rect x=\"" << cw * static_cast<double>(j) << "\" y=\"" << ch * static_cast<double>(i)
         << "\" width=\"" << cw + 0.5 << "\" height=\"" << ch + 0.5 << "\" fill=\""
         << (cls[static_cast<size_t>(i * cells + j)] == 0 ? "#f6c6c6" : "#c6d6f6") << "\"/>\n";
  for (int64_t r = 0; r < x.size(0); ++r) {
    const double px = (x.at({r, 0}) - x0) / (x1 - x0) * cw * cells;
    const double py = (y1 - x.at({r, 1})) / (y1 - y0) * size;
    os << "<circle cx=\"" << px << "\" cy=\"" << py << "\" r=\"4\" stroke=\"black\" fill=\""
       << (y.at<int64_t>({r}) == 0 ? "#d62728" : "#1f77b4") << "\"/>\n";
  }
  os << "</g>\n</svg>\n";
  return os.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string svg_dir = ".";
  lesson::Flags flags("03_mlp_two_moons",
                      "A first model: an MLP learns two moons with cross-entropy and Adam.");
  flags.output_folder("--svg_dir", &svg_dir, "folder for mlp_two_moons.svg, the decision boundary");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. Two moons");
    Generator g(16);
    Tensor x, y;
    make_moons(100, 0.1, g, x, y);
    std::cout << "200 points in the plane, 100 per class; the first three:\n"
              << narrow(x, 0, 0, 3) << "\nlabels " << narrow(y, 0, 0, 3) << " ... "
              << narrow(y, 0, 197, 3) << "\n";

    lesson::banner("2. The MLP");
    // >>> nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16,
    // 2))
    manual_seed(16);
    nn::Sequential mlp({std::make_shared<nn::Linear>(2, 16), std::make_shared<nn::Tanh>(),
                        std::make_shared<nn::Linear>(16, 16), std::make_shared<nn::Tanh>(),
                        std::make_shared<nn::Linear>(16, 2)});
    std::printf("%lld parameters; untrained accuracy %.2f\n",
                static_cast<long long>(mlp.num_parameters()), accuracy(mlp, x, y));

    lesson::banner("3. Training: full batch, cross-entropy, Adam");
    nn::Adam opt(mlp.parameters(), 0.02);
    const auto t0 = std::chrono::steady_clock::now();
    int64_t step = 0;
    for (; step < 1000; ++step) {
      const Tensor loss = cross_entropy(mlp(x), y);
      if (step % 100 == 0)  // the loss and the accuracy of the same weights, before the update
        std::printf("  step %4lld  loss %.4f  accuracy %.3f\n", static_cast<long long>(step),
                    loss.item<float>(), accuracy(mlp, x, y));
      opt.zero_grad();
      backward(loss);
      opt.step();
    }
    const double acc = accuracy(mlp, x, y);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("after %lld steps (%.2f s): training accuracy %.3f\n", static_cast<long long>(step),
                seconds, acc);
    lesson::expect(acc == 1.0, "every training point on the right side of the boundary");

    lesson::banner("4. The decision boundary");
    const std::string path = svg_dir + "/mlp_two_moons.svg";
    nn::write_file_atomic(
        path, decision_svg(mlp, x, y,
                           "An MLP (2, 16, 16, 2; Tanh) after " + std::to_string(step) +
                               " Adam steps: its decision boundary on two moons"));
    std::cout << "wrote " << path
              << ": red region = class 0, blue = class 1. A straight line\n"
                 "cannot separate the moons; two tanh layers bend the boundary around them.\n";
    return lesson::finish();
  });
}
