#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

void register_unary_cpu_kernels(Library& lib);       // kernels/cpu/unary.cc
void register_binary_cpu_kernels(Library& lib);      // kernels/cpu/binary.cc
void register_binary_math_cpu_kernels(Library& lib);  // kernels/cpu/binary_math.cc
void register_compare_cpu_kernels(Library& lib);     // kernels/cpu/compare.cc
void register_conversion_cpu_kernels(Library& lib);  // kernels/cpu/conversion.cc
void register_pointwise_cpu_kernels(Library& lib);   // kernels/cpu/pointwise.cc
void register_pointwise_meta_kernels(Library& lib);  // kernels/meta/pointwise_meta.cc
void register_ternary_cpu_kernels(Library& lib);     // kernels/cpu/ternary.cc
void register_ternary_meta_kernels(Library& lib);    // kernels/meta/ternary_meta.cc

void register_elementwise_kernels(Dispatcher& d) {
  Library lib("aten", d);
  register_unary_cpu_kernels(lib);
  register_binary_cpu_kernels(lib);
  register_binary_math_cpu_kernels(lib);
  register_compare_cpu_kernels(lib);
  register_conversion_cpu_kernels(lib);
  register_pointwise_cpu_kernels(lib);
  register_pointwise_meta_kernels(lib);
  register_ternary_cpu_kernels(lib);
  register_ternary_meta_kernels(lib);
}

}  // namespace opspec::internal
