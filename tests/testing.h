// testing.h: helpers shared by every test folder: comparing tensors with messages that name
// the first mismatching index, both values and the largest difference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/all.h"

namespace qkv::testing {

// Passes when |a - e| <= atol + rtol * |e| everywhere (NaN matches NaN, inf matches inf).
inline ::testing::AssertionResult values_near(const std::vector<double>& actual,
                                              const std::vector<double>& expected, double atol,
                                              double rtol = 0.0) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure()
           << "sizes differ: actual " << actual.size() << ", expected " << expected.size();
  double max_diff = 0;
  int64_t first_bad = -1;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) && a == e) continue;
    const double diff = std::fabs(a - e);
    if (!(diff <= atol + rtol * std::fabs(e))) {
      if (first_bad < 0) first_bad = static_cast<int64_t>(i);
    }
    if (!std::isnan(diff))
      max_diff = std::max(max_diff, diff);
    else
      max_diff = NAN;
  }
  if (first_bad < 0) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(9);
  os << "first mismatch at flat index " << first_bad << ": actual " << actual[first_bad]
     << ", expected " << expected[first_bad] << "; max abs diff " << max_diff << " (atol " << atol
     << ", rtol " << rtol << ")";
  return ::testing::AssertionFailure() << os.str();
}

inline ::testing::AssertionResult tensor_near(const Tensor& actual, const Shape& shape,
                                              const std::vector<double>& expected, double atol,
                                              double rtol = 0.0) {
  if (actual.shape() != shape)
    return ::testing::AssertionFailure()
           << "shape " << shape_str(actual.shape()) << ", expected " << shape_str(shape);
  return values_near(actual.to_vector<double>(), expected, atol, rtol);
}

inline ::testing::AssertionResult tensor_near(const Tensor& actual, const Tensor& expected,
                                              double atol, double rtol = 0.0) {
  return tensor_near(actual, expected.shape(), expected.to_vector<double>(), atol, rtol);
}

// Bit-for-bit equality of two float tensors (shape too).
inline ::testing::AssertionResult tensor_equal(const Tensor& actual, const Tensor& expected) {
  return tensor_near(actual, expected, 0.0, 0.0);
}

// Expects `fn` to throw qkv::Error whose message contains every one of `parts`.
template <class Fn>
::testing::AssertionResult throws_error(Fn&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const qkv::Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-qkv exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

// A fresh, empty folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("qkv_") + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace qkv::testing
