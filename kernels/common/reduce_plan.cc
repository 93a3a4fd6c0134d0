#include "kernels/common/reduce_plan.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace opspec::internal {
namespace {

// coalesce: merges neighbours the outer of which steps exactly over the inner one.
void coalesce(SizeVec& sizes, SizeVec& strides) {
  SizeVec s2, st2;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!s2.empty() && st2.back() == strides[i] * sizes[i]) {
      s2.back() *= sizes[i];
      st2.back() = strides[i];
    } else {
      s2.push_back(sizes[i]);
      st2.push_back(strides[i]);
    }
  }
  sizes = std::move(s2);
  strides = std::move(st2);
}

}  // namespace

ReducePlan make_reduce_plan(const Tensor& in, absl::Span<const bool> mask) {
  ReducePlan p;
  struct D {
    int64_t size, stride;
  };
  absl::InlinedVector<D, 6> red;
  for (int64_t d = 0; d < in.dim(); ++d) {
    const int64_t size = in.sizes()[d];
    if (size == 1) continue;
    if (mask[d]) {
      red.push_back({size, in.strides()[d]});
    } else {
      p.kept_sizes.push_back(size);
      p.kept_strides.push_back(in.strides()[d]);
    }
  }
  std::stable_sort(red.begin(), red.end(), [](const D& a, const D& b) { return std::abs(a.stride) > std::abs(b.stride); });
  for (const D& d : red) {
    p.red_sizes.push_back(d.size);
    p.red_strides.push_back(d.stride);
  }
  if (p.red_sizes.empty()) {
    p.red_sizes.push_back(1);
    p.red_strides.push_back(1);
  }
  coalesce(p.kept_sizes, p.kept_strides);
  coalesce(p.red_sizes, p.red_strides);
  p.n_out = compute_numel(p.kept_sizes);
  p.n_red = compute_numel(p.red_sizes);
  return p;
}

}  // namespace opspec::internal
