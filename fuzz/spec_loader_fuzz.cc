// spec_loader_fuzz.cc: libFuzzer target for the YAML spec loader. Any bytes
// must give a suite or an error status: never a crash, a hang, an uncaught
// exception or undefined behaviour (ASan/UBSan watch the last two).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/spec/spec_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<opspec::spec::SuiteSpec> suite = opspec::spec::load_suite_string(text, "fuzz.yaml");
  if (!suite.ok()) return 0;
  // Read what the runner would read, so a half-built case shows up here.
  size_t n = suite->name.size();
  for (const opspec::spec::CaseSpec& c : suite->cases) {
    n += c.name.size() + c.inputs.size() + c.fixture.size();
    if (c.program) n += c.program->names_used().size() + c.program->ops_called().size();
    if (c.load_error) n += c.load_error->size();
  }
  return n == SIZE_MAX ? 1 : 0;  // keeps the reads observable
}
