// debug_log_io.h: DebugMode logs as JSON, so a run can be saved and diffed
// later against another (another build, machine or backend).
// See Note [Debug log JSON format].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/debug_mode.h"

namespace opspec {

// Note [Debug log JSON format]
// {"format": "opspec-debug-log", "version": 1, "entries": [entry, ...]}.
// Every entry has every field: kind ("op", "function", "module", "kernel"),
// depth, name, kernel_prefix, args, outputs, has_outputs, site (the
// site_summary() text), stack, input_hash and output_hash (null or a list of
// hash nodes), hash_tuple, hashed, log and record ([[key, value], ...]),
// pre_kernel_hashes and post_kernel_hashes ([[name, [hash, ...]], ...]).
// A value is {"kind": "tensor"|"tensor_list"|"other", "name", "tensors":
// [{"dtype": "f32", "sizes", "id", "fake"}], and for "other" "value":
// {"type": "none"|"int"|"float"|"bool"|"int_list"|"float_list"|"dtype"|
// "device"|"str"|"unsupported", "value": ...} plus "rendered", the text
// render() shows}. A hash node is {"kind": "none"|"hashes"|"list", "name"
// (keyword arguments only), "hashes" or "items"}; a hash is {"f": number}
// or {"u": "decimal"}, with "nan", "inf", "-inf" as strings since JSON has
// no NaN. Loading sets RecordedValue::rendered and DebugCall::site_text from
// the saved text (type and site stay null), so a loaded log renders exactly
// as the original did.

// save_log_json: the log as JSON text (format version 1). options is kept for
// symmetry with rendering; every field is saved whatever it says.
std::string save_log_json(absl::Span<const DebugCall> log, const DebugModeOptions& options = {});

// load_log_json: parses save_log_json's output. Malformed or truncated input
// gives an InvalidArgument status naming what is wrong and where (byte
// offset, entry index, field), never a crash.
absl::StatusOr<std::vector<DebugCall>> load_log_json(std::string_view text);

// save_log_file: save_log_json written to path; errors name the path.
absl::Status save_log_file(const std::string& path, absl::Span<const DebugCall> log,
                           const DebugModeOptions& options = {});

// load_log_file: load_log_json of the file's contents; errors name the path.
absl::StatusOr<std::vector<DebugCall>> load_log_file(const std::string& path);

}  // namespace opspec
