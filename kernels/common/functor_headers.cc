// functor_headers.cc: the functor headers' text, embedded with .incbin. See
// Note [Embedded functor headers].
#include "kernels/common/functor_headers.h"

#include "kernels/common/cache_files.h"

// The headers embedded below, included so the build rebuilds this file when they change.
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/opmath.h"
#include "kernels/common/vec_math.h"
#include "runtime/core/half.h"
#include "runtime/core/host_device.h"

// Note [Embedded functor headers]
// Generated kernels call the same functors as the CPU kernels (See Note
// [Shared elementwise functors]), so their compiler must see
// elementwise_ops.h, vec_math.h, opmath.h, half.h and host_device.h exactly
// as this build compiled them (a header they start to include must be added
// here; the code generators' tests fail naming it otherwise). Their text is
// linked into the library with the assembler's .incbin: the compiler hands
// its -I directories (the source root) to the assembler, which resolves the
// same relative paths the #includes above do, so no build step generates
// files and an installed library needs no source tree. NVRTC is handed the
// text directly (kernels/cuda/nvrtc.cc); the CPU's compiler reads it from a
// directory written once per text (kernels/cpu/cpu_jit.cc). The text is part
// of every cache key, so editing a functor invalidates compiled kernels.
#define OPSPEC_EMBED_FILE(sym, path)                                            \
  asm(".pushsection .rodata\n.globl " #sym "\n.hidden " #sym "\n" #sym ":\n" \
      ".incbin \"" path "\"\n.globl " #sym "_end\n.hidden " #sym "_end\n" #sym \
      "_end:\n.byte 0\n.popsection\n");                                         \
  extern "C" const char sym[], sym##_end[]

OPSPEC_EMBED_FILE(opspec_embedded_elementwise_ops_h, "kernels/common/elementwise_ops.h");
OPSPEC_EMBED_FILE(opspec_embedded_vec_math_h, "kernels/common/vec_math.h");
OPSPEC_EMBED_FILE(opspec_embedded_opmath_h, "kernels/common/opmath.h");
OPSPEC_EMBED_FILE(opspec_embedded_half_h, "runtime/core/half.h");
OPSPEC_EMBED_FILE(opspec_embedded_host_device_h, "runtime/core/host_device.h");

namespace opspec::internal {

const std::vector<std::pair<std::string, std::string>>& functor_headers() {
  static const auto* headers = [] {
    auto text = [](const char* begin, const char* end) { return std::string(begin, end); };
    return new std::vector<std::pair<std::string, std::string>>{
        {"kernels/common/elementwise_ops.h",
         text(opspec_embedded_elementwise_ops_h, opspec_embedded_elementwise_ops_h_end)},
        {"kernels/common/vec_math.h", text(opspec_embedded_vec_math_h, opspec_embedded_vec_math_h_end)},
        {"kernels/common/opmath.h", text(opspec_embedded_opmath_h, opspec_embedded_opmath_h_end)},
        {"runtime/core/half.h", text(opspec_embedded_half_h, opspec_embedded_half_h_end)},
        {"runtime/core/host_device.h", text(opspec_embedded_host_device_h, opspec_embedded_host_device_h_end)},
    };
  }();
  return *headers;
}

const std::string& functor_headers_digest() {
  static const std::string* digest = [] {
    std::string all;  // each path and text with its NUL, so they cannot run together
    for (const auto& [path, text] : functor_headers()) {
      all.append(path.c_str(), path.size() + 1);
      all.append(text.c_str(), text.size() + 1);
    }
    return new std::string(hex_digest128(all));
  }();
  return *digest;
}

}  // namespace opspec::internal
