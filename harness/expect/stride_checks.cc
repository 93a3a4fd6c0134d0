// stride_checks.cc: strides checks (EXPECT_STRIDES, expect.strides).
#include "harness/expect/stride_checks.h"

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/core/memory_format.h"

namespace opspec {
namespace {

std::string count_of(size_t n, std::string_view what) { return str_cat(n, " ", what, n == 1 ? "" : "s"); }

// sizes_note: "(sizes [3, 2]; got a contiguous layout, expected channels_last)":
// the named layouts say at a glance which format each side is.
std::string sizes_note(IntArrayRef sizes, IntArrayRef actual, IntArrayRef expected) {
  std::string note = str_cat("(sizes ", format_sizes(sizes));
  const std::string got = layout_name(sizes, actual);
  const std::string want = expected.size() == sizes.size() ? layout_name(sizes, expected) : "";
  if (!got.empty() && got != want) str_append(&note, "; got a ", got, " layout");
  if (!want.empty() && got != want) str_append(&note, got.empty() ? "; " : ", ", "expected ", want);
  return note + ")";
}

}  // namespace

TensorLayout layout_of(const Tensor& t) {
  return {SizeVec(t.sizes().begin(), t.sizes().end()), SizeVec(t.strides().begin(), t.strides().end())};
}

std::vector<TensorLayout> layouts_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorLayout> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(layout_of(t));
  return out;
}

std::string layout_name(IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() != strides.size()) return "";
  // Exact strides, not c10's is_contiguous (which ignores size-1 dims): the
  // name must describe the values printed beside it.
  for (MemoryFormat f : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast, MemoryFormat::kChannelsLast3d}) {
    if (f != MemoryFormat::kContiguous && sizes.size() != (f == MemoryFormat::kChannelsLast ? 4u : 5u)) continue;
    const SizeVec want = strides_for(sizes, f, "layout_name");
    if (std::equal(want.begin(), want.end(), strides.begin(), strides.end())) {
      return f == MemoryFormat::kContiguous ? "contiguous" : f == MemoryFormat::kChannelsLast ? "channels_last"
                                                                                              : "channels_last_3d";
    }
  }
  return "";
}

CheckResult check_strides(const TensorLayout& actual, IntArrayRef expected) {
  const IntArrayRef got(actual.strides);
  if (std::equal(got.begin(), got.end(), expected.begin(), expected.end())) return CheckResult::pass();
  std::string msg = str_cat("expected strides ", format_sizes(expected), ", got ", format_sizes(got));
  if (got.size() != expected.size()) {
    str_append(&msg, ": ", count_of(got.size(), "dim"), ", not ", expected.size(), " (sizes ",
               format_sizes(actual.sizes), ")");
  } else {
    str_append(&msg, " ", sizes_note(actual.sizes, got, expected));
  }
  return CheckResult::fail(std::move(msg));
}

CheckResult check_strides(const Tensor& t, IntArrayRef expected) { return check_strides(layout_of(t), expected); }

CheckResult check_output_strides(const std::vector<Tensor>& outputs, const std::vector<SizeVec>& expected) {
  if (outputs.size() != expected.size()) {
    return CheckResult::fail(str_cat("expected the strides of ", count_of(expected.size(), "output"), ", got ",
                                     count_of(outputs.size(), "output")));
  }
  std::string msg;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const CheckResult r = check_strides(outputs[i], expected[i]);
    if (!r.ok) str_append(&msg, msg.empty() ? "" : "\n", outputs.size() == 1 ? "" : str_cat("output ", i, ": "), r.message);
  }
  return msg.empty() ? CheckResult::pass() : CheckResult::fail(std::move(msg));
}

CheckResult check_compiled_strides(const std::vector<std::vector<TensorLayout>>& compiled,
                                   const std::vector<std::vector<TensorLayout>>& expected) {
  std::string lines;
  for (size_t call = 0; call < compiled.size() && call < expected.size(); ++call) {
    const std::vector<TensorLayout>& got = compiled[call];
    const std::vector<TensorLayout>& want = expected[call];
    if (got.size() != want.size()) {
      str_append(&lines, "\n  call ", call + 1, ": ", count_of(got.size(), "compiled output"), ", eager returned ",
                 want.size());
      continue;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const IntArrayRef gs(got[i].strides), ws(want[i].strides);
      const bool same_sizes = got[i].sizes == want[i].sizes;
      if (same_sizes && std::equal(gs.begin(), gs.end(), ws.begin(), ws.end())) continue;
      str_append(&lines, "\n  call ", call + 1, ", output ", i, ": compiled strides ", format_sizes(gs), ", eager ",
                 format_sizes(ws), " ",
                 same_sizes ? sizes_note(got[i].sizes, gs, ws)
                            : str_cat("(compiled sizes ", format_sizes(got[i].sizes), ", eager ",
                                      format_sizes(want[i].sizes), ")"));
    }
  }
  if (compiled.size() != expected.size()) {
    str_append(&lines, "\n  ", count_of(compiled.size(), "compiled call"), " observed, ", expected.size(), " expected");
  }
  if (lines.empty()) return CheckResult::pass();
  return CheckResult::fail(
      str_cat("compiled outputs' strides differ from eager's (as inductor's assert_size_stride checks):", lines));
}

}  // namespace opspec
