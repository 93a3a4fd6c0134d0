// copy.cu: conversion copies (launch_copy) and fills (launch_fill), the
// primitives behind copy_, clone, _to_copy, contiguous inputs, cat and the
// constant factories.
#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {
namespace {

// FillBits<U>: the constant an output is filled with, as raw bits.
template <class U>
struct FillBits {
  U bits;
  __device__ __forceinline__ U operator()() const { return bits; }
};

template <class U>
void fill(const ElementwiseArgs& a, uint64_t bits) {
  launch_elementwise<U, U, 0>(a, FillBits<U>{static_cast<U>(bits)}, "fill");
}

}  // namespace

void launch_copy(const ElementwiseArgs& a) {
  if (a.numel == 0) return;
  with_code(a.code[0], [&]<class Out>() {
    copy_kernel<Out><<<grid_for(a.numel), kThreads>>>(a);
    check_launch("copy");
  });
}

void launch_fill(const ElementwiseArgs& a, int element_size, uint64_t bits) {
  switch (element_size) {
    case 1: return fill<uint8_t>(a, bits);
    case 2: return fill<uint16_t>(a, bits);
    case 4: return fill<uint32_t>(a, bits);
    case 8: return fill<uint64_t>(a, bits);
    default: fail_launch("launch_fill: element size must be 1, 2, 4 or 8");
  }
}

}  // namespace opspec::internal::cuda
