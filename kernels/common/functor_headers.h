// functor_headers.h: the text of the headers that define the shared
// elementwise functors, linked into the library, for code generated and
// compiled at run time (NVRTC on CUDA, the system C++ compiler on the CPU).
// See Note [Embedded functor headers].
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace opspec::internal {

// functor_headers: (include path, text) of elementwise_ops.h and every
// opspec header it includes, as this build compiled them:
// "kernels/common/elementwise_ops.h", "kernels/common/vec_math.h",
// "kernels/common/opmath.h", "runtime/core/half.h", "runtime/core/host_device.h".
const std::vector<std::pair<std::string, std::string>>& functor_headers();

// functor_headers_digest: a 32-digit hex hash of every path and text above,
// part of the cache key of every kernel compiled against them.
const std::string& functor_headers_digest();

}  // namespace opspec::internal
