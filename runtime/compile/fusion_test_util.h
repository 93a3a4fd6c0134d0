// fusion_test_util.h: what the fused backend's tests share: a bit-for-bit
// tensor comparison, the names of a graph's fusion groups and its fusion log.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/compile/fusion.h"
#include "runtime/compile/logging.h"
#include "runtime/core/tensor.h"
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

}  // namespace opspec::fusion_test
