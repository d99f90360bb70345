// Lesson 01: tensors, views and broadcasting, the numbers everything else is made of.
//
// What you will learn:
//   - a tensor is a block of numbers plus a shape and strides that say how to read it;
//   - a view (transpose, reshape, slice, expand) reads the same block differently: no copy;
//   - broadcasting stretches size-1 dims so (T, C) + (C,) just works;
//   - qkv draws the same random numbers as PyTorch for the same seed, and prints them the
//     same way, so this program's output can be put next to a Python session line by line.
// What comes before: nothing. Some Python and PyTorch, a little C++.
// Run it: ./build/release/tutorials/01_tensors
//
// Each step prints the PyTorch line it mirrors (">>> ..."), then what the C++ line under it
// prints: the same text a Python session shows for that line.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "tensor/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;

int main(int argc, char** argv) {
  lesson::Flags flags(
      "01_tensors",
      "Tensors: shapes, strides, views, broadcasting, PyTorch's random numbers and printing.");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. A tensor from numbers");
    lesson::pytorch("x = torch.tensor([[1., 2., 3.], [4., 5., 6.]]); x");
    Tensor x = tensor({{1., 2., 3.}, {4., 5., 6.}});
    std::cout << x << "\n";
    std::cout << "shape " << shape_str(x.shape()) << ", strides " << shape_str(x.strides())
              << ": step 3 floats to the next row, 1 to the next column\n";
    lesson::expect(x.strides() == Shape{3, 1}, "a (2, 3) tensor has strides (3, 1)");

    lesson::banner("2. Views share storage");
    lesson::pytorch("xt = x.t(); xt       # a view: the same six numbers, read column by column");
    Tensor xt = transpose(x, 0, 1);  // New: no data moves, only the strides swap
    std::cout << xt << "\n";
    std::cout << "shape " << shape_str(xt.shape()) << ", strides " << shape_str(xt.strides())
              << ", contiguous: " << (xt.is_contiguous() ? "yes" : "no") << "\n";
    lesson::pytorch("xt[2, 1] = 60; x      # writing through the view writes x itself");
    xt.at({2, 1}) = 60.0f;
    std::cout << x << "\n";
    lesson::expect(x.at({1, 2}) == 60.0f && xt.shares_storage(x),
                   "a write through a view changes the base");
    x.at({1, 2}) = 6.0f;

    // x.view(3, 2) works; x.t().view(6) does not: its strides cannot express a flat row.
    lesson::pytorch("xt.view(6)            # RuntimeError in PyTorch too");
    try {
      view(xt, {6});
      lesson::expect(false, "viewing a transpose as flat should fail");
    } catch (const Error& e) {
      std::cout << "qkv::Error: " << e.what() << "\n";
      lesson::expect(true, "view refuses what the strides cannot express");
    }
    lesson::pytorch("xt.reshape(6)         # reshape copies when it must");
    Tensor flat = reshape(xt, {6});
    std::cout << flat << "\n";
    lesson::expect(!flat.shares_storage(x), "reshape of a transpose is a copy");

    lesson::banner("3. Broadcasting");
    lesson::pytorch("x + torch.tensor([10., 20., 30.])     # (2, 3) + (3,) -> (2, 3)");
    Tensor row = tensor({10., 20., 30.});
    Tensor y = add(x, row);
    std::cout << y << "\n";
    lesson::pytorch("x * torch.tensor([[1.], [-1.]])       # (2, 3) * (2, 1): one sign per row");
    Tensor z = mul(x, view(tensor({1., -1.}), {2, 1}));
    std::cout << z << "\n";
    std::cout << "the (3,) row was read with stride 0 for every row: "
              << shape_str(expand(row, {2, 3}).strides()) << "\n";
    lesson::expect(y.at({1, 0}) == 14.0f && z.at({1, 2}) == -6.0f, "broadcast values");

    lesson::banner("4. The same random numbers as PyTorch");
    lesson::pytorch("torch.manual_seed(123); torch.rand(3, 2)");
    manual_seed(123);
    Tensor w = rand({3, 2});
    std::cout << w << "\n";
    lesson::expect(
        std::fabs(w.at({0, 0}) - 0.2961f) < 5e-5f && std::fabs(w.at({2, 1}) - 0.8665f) < 5e-5f,
        "seed 123 gives 0.2961 ... 0.8665, as in PyTorch");
    lesson::pytorch("torch.manual_seed(42); torch.randn(5)");
    manual_seed(42);
    Tensor n = randn({5});
    std::cout << n << "\n";
    lesson::expect(std::fabs(n.at({0}) - 0.3367f) < 5e-5f && std::fabs(n.at({4}) + 1.1229f) < 5e-5f,
                   "seed 42 gives 0.3367 ... -1.1229, as in PyTorch");

    lesson::banner("5. Softmax: numbers into weights");
    lesson::pytorch("torch.softmax(torch.tensor([2., 1., 0.1]), dim=0)");
    Tensor s = softmax(tensor({2.0f, 1.0f, 0.1f}), 0);
    std::cout << s << "\n";
    lesson::expect(std::fabs(sum(s).item() - 1.0f) < 1e-6f, "softmax weights sum to 1");

    lesson::exercises({"01.1 broadcast_add: a + b with broadcasting, by index arithmetic"});
    return lesson::finish();
  });
}
