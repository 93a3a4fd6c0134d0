// debug_diff.cc: diff_logs and LogDiff::report. See Note [Log diff semantics].
#include "harness/debug_diff.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/scalar.h"
#include "runtime/dispatch/schema.h"

namespace opspec {
namespace {

using KernelHashes = std::vector<std::pair<std::string, std::vector<HashValue>>>;

constexpr std::string_view kStructuralPrefix = "logs stop aligning at ";

std::string_view kind_name(DebugCall::Kind k) {
  switch (k) {
    case DebugCall::Kind::kOp: return "op";
    case DebugCall::Kind::kFunction: return "function";
    case DebugCall::Kind::kModule: return "module";
    case DebugCall::Kind::kKernel: return "kernel";
  }
  return "?";
}

// The name an entry is known by: kernels carry their launcher prefix.
std::string display_name(const DebugCall& c) {
  if (c.kind == DebugCall::Kind::kKernel) return str_cat("[", c.kernel_prefix, "] ", c.name);
  if (c.kind == DebugCall::Kind::kModule) return "[nn.Mod] " + c.name;
  return c.name;
}

// The entry as debug_string shows it: indented by depth, every line of it.
std::string shown_line(const DebugCall& c, const DebugModeOptions& options) {
  const std::string indent(static_cast<size_t>(2 + 2 * std::max(c.depth, 0)), ' ');
  std::string text = c.render(options);
  std::string out = indent;
  for (char ch : text) {
    out += ch;
    if (ch == '\n') out += indent;
  }
  return out;
}

std::string both_lines(const DebugCall& a, const DebugCall& b, const DebugModeOptions& options) {
  return str_cat("\n  log 1: ", shown_line(a, options), "\n  log 2: ", shown_line(b, options));
}

double rel_diff_of(const HashValue& h1, const HashValue& h2) {
  if (!h1.is_int && !h2.is_int) {
    return std::fabs(h1.f - h2.f) / std::max({std::fabs(h1.f), std::fabs(h2.f), 1e-10});
  }
  // Integer hashes: the exact difference first, so 2^64-1 vs 2^64-2 is not 0.
  const double diff = static_cast<double>(h1.u > h2.u ? h1.u - h2.u : h2.u - h1.u);
  return diff / std::max({h1.as_double(), h2.as_double(), 1e-10});
}

// Kernel arguments as PyTorch compares them: their text without tensor ids.
bool same_kernel_arg(const RecordedValue& x, const RecordedValue& y) {
  if (x.kind != y.kind || x.name != y.name || x.tensors.size() != y.tensors.size()) return false;
  for (size_t i = 0; i < x.tensors.size(); ++i) {
    const RecordedTensor& s = x.tensors[i];
    const RecordedTensor& t = y.tensors[i];
    if (s.dtype != t.dtype || s.sizes != t.sizes || s.fake != t.fake) return false;
  }
  return x.kind != RecordedValue::Kind::kOther || other_value_text(x) == other_value_text(y);
}

std::string where(bool is_input, bool kernel, const std::string& path) {
  std::string what = kernel ? (is_input ? "pre-kernel hash" : "post-kernel hash") : (is_input ? "input hash" : "output hash");
  if (!path.empty()) str_append(&what, " ", path);
  return what;
}

// EntryComparer: compares the hashes of two aligned entries; the first
// shape difference ends the comparison as a structural divergence.
class EntryComparer {
 public:
  EntryComparer(const DebugCall& a, const DebugCall& b, size_t index, const DiffOptions& options)
      : a_(a), b_(b), index_(index), options_(options) {}

  // run: true when the entries are comparable; mismatches() then holds the differing leaves.
  bool run() {
    if (a_.kind == DebugCall::Kind::kModule) return true;
    if (a_.kind == DebugCall::Kind::kKernel) return kernel();
    if (options_.compare_inputs && !inputs()) return false;
    return outputs();
  }
  const std::string& why() const { return why_; }
  std::vector<HashMismatch>& mismatches() { return found_; }

 private:
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  bool kernel_entry() const { return a_.kind == DebugCall::Kind::kKernel; }

  bool leaf(const HashValue& h1, const HashValue& h2, const std::string& path, bool is_input) {
    if (h1.is_int != h2.is_int) {
      return fail(str_cat(where(is_input, kernel_entry(), path), " is ", h1.is_int ? "an integer" : "a float",
                          " in log 1 but ", h2.is_int ? "an integer" : "a float",
                          " in log 2 (different hash functions)"));
    }
    if (h1 == h2) return true;
    const double rel = rel_diff_of(h1, h2);
    if (!h1.is_int && (rel <= options_.rtol || std::abs(h1.f - h2.f) <= options_.atol)) return true;
    HashMismatch m;
    m.index = index_;
    m.call = a_.name;
    m.is_input = is_input;
    m.kernel = kernel_entry();
    m.path = path;
    m.hash1 = h1;
    m.hash2 = h2;
    m.rel_diff = rel;
    found_.push_back(std::move(m));
    return true;
  }

  bool hashes(const std::vector<HashValue>& h1, const std::vector<HashValue>& h2, const std::string& path,
              bool is_input) {
    if (h1.size() != h2.size()) {
      return fail(str_cat(where(is_input, kernel_entry(), path), " has ", h1.size(), " values in log 1 but ",
                          h2.size(), " in log 2"));
    }
    // A tuple hash (several hash functions) makes each component a leaf, as pytree does.
    if (!a_.hash_tuple && h1.size() == 1) return leaf(h1[0], h2[0], path, is_input);
    for (size_t k = 0; k < h1.size(); ++k) {
      if (!leaf(h1[k], h2[k], str_cat(path, "[", k, "]"), is_input)) return false;
    }
    return true;
  }

  static std::string_view node_kind(const HashNode& n) {
    switch (n.kind) {
      case HashNode::Kind::kNone: return "None";
      case HashNode::Kind::kHashes: return "a tensor hash";
      case HashNode::Kind::kList: return "a list";
    }
    return "?";
  }

  bool node(const HashNode& n1, const HashNode& n2, const std::string& path, bool is_input) {
    if (n1.kind != n2.kind) {
      return fail(str_cat(where(is_input, false, path), " is ", node_kind(n1), " in log 1 but ", node_kind(n2),
                          " in log 2"));
    }
    switch (n1.kind) {
      case HashNode::Kind::kNone: return true;
      case HashNode::Kind::kHashes: return hashes(n1.hashes, n2.hashes, path, is_input);
      case HashNode::Kind::kList:
        if (n1.items.size() != n2.items.size()) {
          return fail(str_cat(where(is_input, false, path), " is a list of ", n1.items.size(), " in log 1 but of ",
                              n2.items.size(), " in log 2"));
        }
        for (size_t i = 0; i < n1.items.size(); ++i) {
          if (!node(n1.items[i], n2.items[i], str_cat(path, "[", i, "]"), is_input)) return false;
        }
        return true;
    }
    return true;
  }

  bool tuple_flags_agree() {
    if (a_.hash_tuple == b_.hash_tuple) return true;
    return fail(str_cat("hashes are tuples in log ", a_.hash_tuple ? 1 : 2, " but bare values in log ",
                        a_.hash_tuple ? 2 : 1, " (a list of hash functions against a single one)"));
  }

  // Input hashes are PyTorch's tree (args, kwargs): "[0][j]" positional, "[1]['name']" keyword.
  bool inputs() {
    const bool p1 = a_.input_hash.has_value(), p2 = b_.input_hash.has_value();
    if (p1 != p2) {
      return fail(str_cat("input hash presence differs: log 1 has input_hash=", p1 ? "True" : "False",
                          ", log 2 has input_hash=", p2 ? "True" : "False"));
    }
    if (!p1) return true;
    if (!tuple_flags_agree()) return false;
    const std::vector<HashNode>& v1 = *a_.input_hash;
    const std::vector<HashNode>& v2 = *b_.input_hash;
    if (v1.size() != v2.size()) {
      return fail(str_cat("input hash covers ", v1.size(), " arguments in log 1 but ", v2.size(), " in log 2"));
    }
    size_t positional = 0;
    for (size_t i = 0; i < v1.size(); ++i) {
      if (v1[i].name != v2[i].name) {
        auto label = [](const HashNode& n) { return n.name.empty() ? std::string("positional") : "'" + n.name + "'"; };
        return fail(str_cat("input hash argument ", i, " is ", label(v1[i]), " in log 1 but ", label(v2[i]),
                            " in log 2"));
      }
      const std::string path =
          v1[i].name.empty() ? str_cat("[0][", positional++, "]") : str_cat("[1]['", v1[i].name, "']");
      if (!node(v1[i], v2[i], path, true)) return false;
    }
    return true;
  }

  // Output hashes: the result itself for one result, a tuple "[i]" for several.
  bool outputs() {
    const bool p1 = a_.hashed || a_.output_hash.has_value();
    const bool p2 = b_.hashed || b_.output_hash.has_value();
    if (p1 != p2) {
      return fail(str_cat("output hash presence differs: log 1 has hash=", p1 ? "True" : "False",
                          ", log 2 has hash=", p2 ? "True" : "False"));
    }
    if (!p1) return true;
    if (a_.output_hash.has_value() != b_.output_hash.has_value()) {
      return fail(str_cat("output hash is None in log ", a_.output_hash ? 2 : 1, " only"));
    }
    if (!a_.output_hash) return true;
    if (!tuple_flags_agree()) return false;
    const std::vector<HashNode>& v1 = *a_.output_hash;
    const std::vector<HashNode>& v2 = *b_.output_hash;
    if (v1.size() != v2.size()) {
      return fail(str_cat("output hash covers ", v1.size(), " results in log 1 but ", v2.size(), " in log 2"));
    }
    for (size_t i = 0; i < v1.size(); ++i) {
      if (!node(v1[i], v2[i], v1.size() == 1 ? std::string() : str_cat("[", i, "]"), false)) return false;
    }
    return true;
  }

  bool kernel_hashes(const KernelHashes& k1, const KernelHashes& k2, bool is_input) {
    const std::string_view what = is_input ? "pre-kernel hash" : "post-kernel hash";
    if (k1.empty() != k2.empty()) {
      return fail(str_cat(what, " presence differs: log 1 has ", what, "es=", k1.empty() ? "False" : "True",
                          ", log 2 has ", what, "es=", k2.empty() ? "False" : "True"));
    }
    if (k1.empty()) return true;
    if (!tuple_flags_agree()) return false;
    for (const auto& [name, h1] : k1) {
      auto it = std::find_if(k2.begin(), k2.end(), [&, &name = name](const auto& e) { return e.first == name; });
      if (it == k2.end()) return fail(str_cat(what, " of buffer '", name, "' in log 1 only"));
      if (!hashes(h1, it->second, name, is_input)) return false;
    }
    for (const auto& [name, h2] : k2) {
      auto it = std::find_if(k1.begin(), k1.end(), [&, &name = name](const auto& e) { return e.first == name; });
      if (it == k1.end()) return fail(str_cat(what, " of buffer '", name, "' in log 2 only"));
    }
    return true;
  }

  bool kernel() {
    bool args_equal = a_.args.size() == b_.args.size();
    for (size_t i = 0; args_equal && i < a_.args.size(); ++i) args_equal = same_kernel_arg(a_.args[i], b_.args[i]);
    if (!args_equal) return fail("kernel arguments differ");
    if (options_.compare_inputs && !kernel_hashes(a_.pre_kernel_hashes, b_.pre_kernel_hashes, true)) return false;
    return kernel_hashes(a_.post_kernel_hashes, b_.post_kernel_hashes, false);
  }

  const DebugCall& a_;
  const DebugCall& b_;
  size_t index_;
  const DiffOptions& options_;
  std::string why_;
  std::vector<HashMismatch> found_;
};

// Depths count from base1 in log 1 and base2 in log 2 (each log's shallowest entry).
bool entries_align(const DebugCall& a, const DebugCall& b, int base1, int base2) {
  return a.kind == b.kind && a.depth - base1 == b.depth - base2 && a.name == b.name &&
         (a.kind != DebugCall::Kind::kKernel || a.kernel_prefix == b.kernel_prefix);
}

std::string entry_label(const DebugCall& c, bool with_kind, int base) {
  return str_cat(display_name(c), " (", with_kind ? str_cat(kind_name(c.kind), ", ") : "", "depth ", c.depth - base,
                 ")");
}

// The least depth among the first n entries (those both logs have).
int shallowest(absl::Span<const DebugCall> log, size_t n) {
  int d = 0;
  for (size_t i = 0; i < n; ++i) d = i == 0 ? log[i].depth : std::min(d, log[i].depth);
  return d;
}

}  // namespace

LogDiff diff_logs(absl::Span<const DebugCall> a, absl::Span<const DebugCall> b, const DiffOptions& options) {
  LogDiff diff;
  diff.entries1 = a.size();
  diff.entries2 = b.size();
  auto set_break = [&](size_t i, std::string message) {
    diff.structurally_aligned = false;
    diff.first_structural_index = i;
    diff.structural_message = str_cat(kStructuralPrefix, "entry ", i, ": ", message);
  };
  // See Note [Depth offsets]: equal offsets compare depths as they are.
  const size_t n = std::min(a.size(), b.size());
  int base1 = shallowest(a, n), base2 = shallowest(b, n);
  if (base1 == base2) base1 = base2 = 0;
  const std::string_view relative = base1 == base2 ? "" : " (depths counted from each log's shallowest entry)";
  size_t i = 0;
  for (; i < n; ++i) {
    const DebugCall& x = a[i];
    const DebugCall& y = b[i];
    if (!entries_align(x, y, base1, base2)) {
      set_break(i, str_cat(entry_label(x, x.kind != y.kind, base1), " vs ", entry_label(y, x.kind != y.kind, base2),
                           relative, both_lines(x, y, options.render)));
      break;
    }
    EntryComparer cmp(x, y, i, options);
    if (!cmp.run()) {
      set_break(i, str_cat(display_name(x), ": ", cmp.why(), both_lines(x, y, options.render)));
      break;
    }
    if (cmp.mismatches().empty()) continue;
    const std::string line1 = shown_line(x, options.render);
    const std::string line2 = shown_line(y, options.render);
    for (HashMismatch& m : cmp.mismatches()) {
      m.line1 = line1;
      m.line2 = line2;
      diff.mismatches.push_back(std::move(m));
    }
  }
  if (i == n && a.size() != b.size()) {
    const bool first_longer = a.size() > b.size();
    const absl::Span<const DebugCall> longer = first_longer ? a : b;
    set_break(n, str_cat("log ", first_longer ? 2 : 1, " ends after ", n, " entries; log ", first_longer ? 1 : 2,
                         " continues with ", longer.size() - n, " more:\n  log ", first_longer ? 1 : 2, ": ",
                         shown_line(longer[n], options.render)));
  }
  return diff;
}

std::vector<std::string> rendered_entries(absl::Span<const DebugCall> log) {
  std::vector<std::string> lines;
  lines.reserve(log.size());
  for (const DebugCall& c : log) lines.push_back(std::string(static_cast<size_t>(2 * c.depth), ' ') + c.render({}));
  return lines;
}

std::string LogDiff::report() const {
  if (equivalent()) return str_cat("logs are equivalent (", entries1, " entries)");
  const HashMismatch* m = first_mismatch();
  if (m == nullptr) {
    // structural_message starts with kStructuralPrefix.
    return str_cat("first divergence at ", std::string_view(structural_message).substr(kStructuralPrefix.size()));
  }
  std::string s = str_cat("first divergence at entry ", m->index, ": ", m->call, " ", where(m->is_input, m->kernel, m->path),
                          " differs\n  log 1: ", m->line1, "\n  log 2: ", m->line2, "\n  hash 1: ", m->hash1.str(),
                          ", hash 2: ", m->hash2.str(), ", rel_diff: ", format_double(m->rel_diff));
  if (mismatches.size() > 1) {
    str_append(&s, "\n  ", mismatches.size() - 1, " further hash mismatch", mismatches.size() > 2 ? "es" : "",
               " (entries ", mismatches[1].index, "..", mismatches.back().index, ")");
  }
  if (!structurally_aligned) {
    const std::string_view msg = structural_message;
    str_append(&s, "\n  then ", msg.substr(0, msg.find('\n')));
  }
  return s;
}

}  // namespace opspec
