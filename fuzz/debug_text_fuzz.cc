// debug_text_fuzz.cc: libFuzzer target for parse_debug_string, which reads
// DebugMode text logs that `opspec diff` is given (PyTorch's or opspec's). Any
// text must parse or give an error status: never a crash, a hang, an uncaught
// exception or undefined behaviour. A parsed log must render.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/debug_text_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<opspec::DebugCall>> log = opspec::parse_debug_string(text, "fuzz.txt");
  if (!log.ok()) return 0;
  size_t n = 0;
  for (const opspec::DebugCall& c : *log) n += c.render({}).size();
  return n == SIZE_MAX ? 1 : 0;
}
