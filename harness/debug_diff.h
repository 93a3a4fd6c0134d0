// debug_diff.h: comparing two DebugMode logs (an eager run against a compiled
// or fused one, two builds, two machines): where their structure stops
// aligning and which tensor hashes differ before that. PyTorch's
// DebugMode.check_hash_mismatches, reporting instead of raising.
// See Note [Log diff semantics].
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/debug_mode.h"
#include "harness/tensor_hash.h"

namespace opspec {

// Note [Log diff semantics]
// Entries align while kind, name and depth agree (PyTorch's "Call types /
// Operators / Call depths don't match"; depths as Note [Depth offsets] counts
// them); the first entry where they do not, or where one log ends, is the
// structural break. Aligned entries are also
// structurally divergent when their hashes cannot be compared leaf by leaf:
// 'hash' present in one log only (input hashes too when compare_inputs),
// different hash-tree shapes, a tuple hash against a bare one, a float hash
// against an integer one, different kernel buffers, or different kernel
// arguments (PyTorch compares a kernel's kwargs text). Module entries compare
// by name and depth only; op and function entries never compare arguments.
// Before the break, each differing hash leaf is a HashMismatch. Leaves are
// labelled with PyTorch's keystr paths: an op's input hashes are the tree
// (args, kwargs), so "[0][1]" is the second positional argument and
// "[1]['out']" the out= keyword; output hashes are the result tree: "" for a
// single result, "[i]" for the i-th of several; every component of a tuple
// hash (several hash functions) is its own leaf, "[k]" appended. Kernel
// leaves are labelled by buffer name ("in0", "in0[1]" for a component).
// Two leaves match when their HashValues are equal (NaN equals NaN) or both are
// floats with rel_diff = |h1-h2| / max(|h1|, |h2|, 1e-10) <= rtol or
// |h1-h2| <= atol; integer hashes (hash_tensor, bitwise) are exact whatever
// rtol and atol say.

// Note [Depth offsets]
// A text log's depth is read from its indentation, and a log pasted with one
// space (or cut from inside a module) starts deeper or shallower than its
// JSON twin. Depths therefore compare counted from each log's shallowest
// entry (of those both logs have): a whole log shifted by a constant aligns,
// an entry nested differently from its neighbours still breaks alignment.

// DiffOptions: how two logs are compared.
struct DiffOptions {
  double rtol = 0.0;            // relative tolerance for float (norm) hashes
  double atol = 0.0;            // absolute tolerance for float hashes
  bool compare_inputs = true;   // also compare input hashes and pre-kernel hashes
  DebugModeOptions render{};    // how entries render in messages
};

// HashMismatch: one hash leaf that differs between the two logs.
struct HashMismatch {
  size_t index = 0;        // entry index (the same in both logs)
  std::string call;        // the entry's name, "aten::cos"
  bool is_input = false;   // input hash / pre-kernel hash rather than output / post-kernel hash
  bool kernel = false;     // a kernel entry: path is a buffer name
  std::string path;        // keystr path, see Note [Log diff semantics]
  HashValue hash1, hash2;
  double rel_diff = 0.0;   // as PyTorch defines it (integer hashes converted to double)
  std::string line1, line2;  // the entry as debug_string shows it (indented)
};

// LogDiff: the result: where structure stops aligning (if it does) and the
// hash mismatches before that point.
struct LogDiff {
  bool structurally_aligned = true;
  size_t first_structural_index = 0;  // the break's entry index when !structurally_aligned
  std::string structural_message;     // where and why, with both entries' lines
  std::vector<HashMismatch> mismatches;  // in log order, all before the break
  size_t entries1 = 0, entries2 = 0;     // the logs' lengths

  // equivalent: aligned and no mismatch.
  bool equivalent() const { return structurally_aligned && mismatches.empty(); }
  // first_mismatch: the earliest hash mismatch, or null.
  const HashMismatch* first_mismatch() const { return mismatches.empty() ? nullptr : &mismatches.front(); }
  // divergence_index: the entry where the logs first diverge (the first hash
  // mismatch, else the structural break), or nullopt when they are equivalent.
  std::optional<size_t> divergence_index() const {
    if (equivalent()) return std::nullopt;
    return first_mismatch() != nullptr ? first_mismatch()->index : first_structural_index;
  }
  // report: "logs are equivalent (N entries)", or the first divergence with
  // both entries' lines and the count of what follows.
  std::string report() const;
};

// rendered_entries: each entry of log as one line, indented two spaces per
// call depth (kernels' buffer hashes left out), for side-by-side views.
std::vector<std::string> rendered_entries(absl::Span<const DebugCall> log);

// diff_logs: compares log a ("log 1") with log b ("log 2").
LogDiff diff_logs(absl::Span<const DebugCall> a, absl::Span<const DebugCall> b, const DiffOptions& options = {});

}  // namespace opspec
