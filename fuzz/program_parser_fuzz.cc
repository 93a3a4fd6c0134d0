// program_parser_fuzz.cc: libFuzzer target for the inline program language's
// parser and checker. Any text must parse or give an error status: never a
// crash, a hang, an uncaught exception or undefined behaviour. Programs are
// not run (a valid program may ask for a huge tensor).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/program/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<opspec::Program> program =
      opspec::parse_program(text, {.file = "fuzz.yaml", .first_line = 3, .column_offset = 6});
  if (!program.ok()) return 0;
  size_t n = program->source().size();
  for (const auto& name : program->ops_called()) n += name.size();
  // Check against a partial set of input names, so both outcomes are reached.
  std::vector<std::string> inputs = program->names_used();
  if (!inputs.empty()) inputs.pop_back();
  n += check_program(*program, inputs).ok() ? 1 : 0;
  return n == SIZE_MAX ? 1 : 0;
}
