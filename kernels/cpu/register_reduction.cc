#include "kernels/registration.h"

namespace opspec::internal {

void register_reduction_kernels(Dispatcher& d) { (void)d; }

void register_linalg_kernels(Dispatcher& d) { (void)d; }

}  // namespace opspec::internal
