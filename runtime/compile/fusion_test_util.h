// fusion_test_util.h: what the fused backend's tests share: a bit-for-bit
// tensor comparison, the names of a graph's fusion groups, its fusion log
// and a recorder of the kernels it launches.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/compile/fusion.h"
#include "runtime/compile/logging.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/ops/untraced.h"

namespace opspec::fusion_test {

// bits_equal: same dtype, sizes and element bits (NaNs included; any layout).
inline ::testing::AssertionResult bits_equal(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || format_sizes(got.sizes()) != format_sizes(want.sizes())) {
    return ::testing::AssertionFailure() << "got " << got.meta_str() << ", want " << want.meta_str();
  }
  auto dense = [](const Tensor& t) {
    Tensor c = internal::make_tensor(t.sizes(), t.dtype(), kCPU);
    copy_untraced(c, t);
    return c;
  };
  const Tensor a = dense(got), b = dense(want);
  if (std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) != 0) {
    return ::testing::AssertionFailure() << "got " << got.str() << "\nwant " << want.str();
  }
  return ::testing::AssertionSuccess();
}

// names: the groups' kernel names, in order.
inline std::vector<std::string> names(const std::vector<FusionGroup>& groups) {
  std::vector<std::string> out;
  for (const FusionGroup& g : groups) out.push_back(g.name);
  return out;
}

// fusion_log: what the fused backend logs (OPSPEC_LOGS=fusion) while run() runs.
template <class F>
std::string fusion_log(F&& run) {
  set_log_topics("fusion");
  ::testing::internal::CaptureStderr();
  run();
  std::string log = ::testing::internal::GetCapturedStderr();
  set_log_topics("");
  return log;
}

// KernelRecorder: the kernels launched while it is installed, one line each,
// "[prefix] name(key=value ... )" (tensors by their meta_str), followed by a
// "done" line when the kernel finishes if done_lines is set.
struct KernelRecorder : KernelObserver {
  explicit KernelRecorder(bool done_lines) : done_lines_(done_lines) {}
  std::function<void()> on_launch(std::string_view prefix, std::string_view name, const KernelArgs& kwargs) override {
    std::string line = str_cat("[", prefix, "] ", name, "(");
    for (const auto& [k, v] : kwargs) str_append(&line, k, "=", v.is_tensor() ? v.to_tensor().meta_str() : v.repr(), " ");
    lines.push_back(line + ")");
    if (!done_lines_) return {};
    return [this] { lines.push_back("done"); };
  }
  std::vector<std::string> lines;

 private:
  bool done_lines_;
};

}  // namespace opspec::fusion_test
