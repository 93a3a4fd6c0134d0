// spec_loader.h: reads YAML spec suites (schema v1) into the model of
// spec.h, with file:line:col errors. See docs/spec-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/spec/spec.h"

namespace opspec::spec {

// Note [Two kinds of load errors]
// A problem with the file's structure outside any case (bad YAML, an unknown
// top-level key, bad `defaults`, a duplicate case name, ...) rejects the
// whole file: the loader returns InvalidArgumentError listing every such
// problem, one "file:line:col: error: ..." line each, sorted by position. A
// problem inside one case goes with that case, so a typo does not hide the
// file's good cases: its YAML (an unknown key, a wrong type, a bad shape)
// into CaseSpec::spec_error, which fails the case whatever it expects; its
// program (a syntax error, an unknown op, an undefined name) or an unknown
// fixture into CaseSpec::load_error ("file:line:col: ..." with the real
// position in the YAML file), which fails it unless its `expect.error` regex
// matches the message, so negative spec cases can test the program
// language's errors. A case without a usable name is called case_N (N its
// position in the list; case_N_ ... where another case has that name).

// kSchemaVersion: the only `schema:` value this loader reads.
inline constexpr int kSchemaVersion = 1;

// kMaxReportedErrors: file-level errors listed before "N more errors".
inline constexpr int kMaxReportedErrors = 20;

// kMaxSpecNumel: the largest input a spec may ask for (elements); larger
// shapes are errors, so a typo cannot make the runner allocate terabytes.
inline constexpr int64_t kMaxSpecNumel = int64_t{1} << 28;
// kMaxSpecFileBytes: the largest spec file load_suite_file reads (16 MiB).
inline constexpr std::uintmax_t kMaxSpecFileBytes = std::uintmax_t{16} << 20;
// kMaxSpecYamlNodes, kMaxSpecYamlBytes: the most YAML nodes and scalar bytes a
// spec file may hold once its aliases (*name) are expanded, so a small file
// cannot make the loader build gigabytes (Note [Hostile input]).
inline constexpr int64_t kMaxSpecYamlNodes = int64_t{1} << 20;
inline constexpr int64_t kMaxSpecYamlBytes = int64_t{64} << 20;

// kSkipConditions: the values `skip_if` accepts. no_cuda / no_gpu: skip
// where no CUDA device is available; cuda: skip where one is; always: skip.
inline constexpr std::string_view kSkipConditions[] = {"always", "cuda", "no_cuda", "no_gpu"};

// kInitKinds: the values of an input's `init`.
inline constexpr std::string_view kInitKinds[] = {"randn", "rand", "zeros", "ones", "arange", "full", "values"};

// load_suite_string: parses one suite from yaml_text; file_name is used in
// messages and locations, and its stem is the default suite name.
absl::StatusOr<SuiteSpec> load_suite_string(std::string_view yaml_text, std::string_view file_name);

// load_suite_file: reads and parses the file at path (NotFoundError when it
// cannot be read).
absl::StatusOr<SuiteSpec> load_suite_file(const std::string& path);

// find_spec_files: expands paths into spec files: a file is taken as is, a
// directory is searched recursively for *.yaml / *.yml (hidden entries
// skipped, links to directories not followed), the files sorted by path.
// Duplicates are dropped; a missing path is a NotFoundError. A directory that
// cannot be listed is an error (See Note [Unreadable directories]): appended
// to *unreadable ("DIR: error: cannot read the directory: ...") and the rest
// still searched, or without unreadable a PermissionDeniedError.
absl::StatusOr<std::vector<std::string>> find_spec_files(const std::vector<std::string>& paths,
                                                         std::vector<std::string>* unreadable = nullptr);

// DuplicateSuite: a suite whose name an earlier one already has.
struct DuplicateSuite {
  size_t index = 0;     // into the suites given
  std::string message;  // "b.yaml:1: error: suite name 'x' is also the name of a.yaml:1 ..."
};

// duplicate_suites: every suite (after the first) whose name an earlier suite
// has; case ids (suite::case) would clash in reports, so each is an error.
std::vector<DuplicateSuite> duplicate_suites(const std::vector<SuiteSpec>& suites);

// load_suites: loads every file find_spec_files finds. Errors of all files
// are reported together; two suites with the same name are an error (their
// cases would get the same test names).
absl::StatusOr<std::vector<SuiteSpec>> load_suites(const std::vector<std::string>& paths);

}  // namespace opspec::spec
