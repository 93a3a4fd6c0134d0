// code_dispatch.cuh: with_floating_code, the launchers' switch from a Code
// (launch.h) to the element type of the four floating dtypes.
#pragma once

#include "kernels/cuda/launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {

// with_floating_code: f.template operator()<T>() with T the storage type of a
// floating code; fail_launch(what) for any other.
template <class F>
void with_floating_code(Code code, const char* what, F&& f) {
  switch (code) {
    case kF32: return f.template operator()<float>();
    case kF64: return f.template operator()<double>();
    case kF16: return f.template operator()<Half>();
    case kBF16: return f.template operator()<BFloat16>();
    default: fail_launch(what);
  }
}

}  // namespace opspec::internal::cuda
