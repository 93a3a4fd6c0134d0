// debug_text_io.h: reading DebugMode's text form back into a log: opspec's
// debug_string() and PyTorch's DebugMode.debug_string(), so a PyTorch run can
// be diffed against an opspec run (`opspec diff`). See Note [Debug text format].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/debug_mode.h"

namespace opspec {

// Note [Debug text format]
// One entry per line, indented two spaces per call depth beyond two (depth
// 0; less when the first entry is indented less, as in a pasted log): `[nn.Mod] Bar.abc` (a module), `[triton] name(args)`
// (a kernel, followed by optional `# pre-kernel hashes: {in0: 1.5}` and
// `# post-kernel hashes: {...}` lines), or `aten::op(args)  ->  outputs  #
// {annotations}` (an op; the arrow part is absent without outputs, the `#`
// part without annotations; one space or two around `->` and `#`). A tensor
// reads `t: f32[8, 8]`, `t$3: f32[8, 8]` (record_ids) or `ft: ...` (fake);
// a list of them `['t: f32[2]', None]`; keyword arguments `name=value`; any
// other value is kept as its text. The annotations are a Python dict:
// 'input_hash' is ((positional hashes...), {keyword: hash}), 'hash' the
// output's hash (a tuple with one hash per output when there are several:
// Note [Tuple output hashes]), a
// tensor's hash a number, a tuple of numbers (several hash functions), or
// None, a list argument's hash a list; integers are hash_tensor / bitwise
// hashes, `nan` / `inf` floats. Other keys are dispatch-hook annotations
// (Python str reprs: \n, \t, \xNN and the quote escaped); literals nest at
// most 64 deep.
// `# File: ...` lines set the following entries' site; other `#` lines
// (stack traces) and blank lines are skipped. Text that opspec renders reads
// back to an equal rendering.

// parse_debug_string: the log written as text. Errors are InvalidArgument
// "NAME:LINE:COL: what" (name: the file or "<text>"), never a crash.
absl::StatusOr<std::vector<DebugCall>> parse_debug_string(std::string_view text, std::string_view name = "<text>");

// load_debug_log: a log file of either form: opspec's JSON (debug_log_io.h),
// recognised by its leading '{', or debug_string() text. Errors name the file
// and the line (and column) where it stops making sense.
absl::StatusOr<std::vector<DebugCall>> load_debug_log(const std::string& path);

}  // namespace opspec
