// test_print.cpp: qkv prints every tensor in these cases exactly as PyTorch 1.13 printed it
// (tools/gen_torch_reference.py), character for character.
#include "tests/testing.h"

namespace qkv {
namespace {
#include "tests/tensor/torch_reference.inc"

Tensor make(const PrintCase& c) {
  Tensor t = Tensor::empty(c.shape, c.dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = c.values[static_cast<size_t>(i)];
    switch (c.dtype) {
      case Dtype::float32:
        t.data_ptr<float>()[i] = static_cast<float>(v);
        break;
      case Dtype::int64:
        t.data_ptr<int64_t>()[i] = static_cast<int64_t>(v);
        break;
      case Dtype::boolean:
        t.data_ptr<bool>()[i] = v != 0.0;
        break;
    }
  }
  return t;
}

class TorchPrint : public ::testing::TestWithParam<PrintCase> {};

TEST_P(TorchPrint, MatchesPyTorchCharacterForCharacter) {
  const PrintCase& c = GetParam();
  EXPECT_EQ(to_string(make(c)), std::string(c.expected)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, TorchPrint, ::testing::ValuesIn(kTorchPrintCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Print, ViewsPrintTheirOwnElements) {
  // A transposed, strided view prints in its logical order, not storage order.
  Tensor t = tensor({{1.5f, 2.5f, 3.5f}, {4.5f, 5.5f, 6.5f}});
  EXPECT_EQ(to_string(raw::transpose(t, 0, 1)),
            "tensor([[1.5000, 4.5000],\n        [2.5000, 5.5000],\n        [3.5000, 6.5000]])");
  EXPECT_EQ(to_string(raw::select(t, 1, 2)), "tensor([3.5000, 6.5000])");
}

TEST(Print, SuffixesWrapPastTheLineWidth) {
  Tensor t = tensor({1.0f, 2.0f});
  EXPECT_EQ(format_tensor(t, {"requires_grad=True"}), "tensor([1., 2.], requires_grad=True)");
  EXPECT_EQ(format_tensor(t, {std::string(80, 'x')}),
            "tensor([1., 2.],\n       " + std::string(80, 'x') + ")");
}

TEST(Print, OptionsChangePrecisionAndRestore) {
  print_options().precision = 2;
  EXPECT_EQ(to_string(tensor({1.12345f})), "tensor([1.12])");
  print_options() = PrintOptions{};
  EXPECT_EQ(to_string(tensor({1.12345f})), "tensor([1.1235])");
}

TEST(Print, ShapesPrintAsPythonTuples) {
  EXPECT_EQ(shape_str({6, 3}), "(6, 3)");
  EXPECT_EQ(shape_str({6}), "(6,)");
  EXPECT_EQ(shape_str({}), "()");
}

}  // namespace
}  // namespace qkv
