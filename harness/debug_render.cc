// debug_render.cc: DebugMode's text form. See Note [DebugMode log format].
#include <fstream>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/debug_mode.h"

namespace opspec {

std::string other_value_text(const RecordedValue& v) {
  if (!v.rendered.empty()) return v.rendered;
  if (v.type != nullptr) return FunctionSchema::format_value(*v.type, v.value);
  return v.value.is_string() ? v.value.to_string() : v.value.repr();
}

namespace {

std::string tensor_text(const RecordedTensor& t) {
  std::string s = t.fake ? "ft" : "t";
  if (t.id >= 0) str_append(&s, "$", t.id);
  str_append(&s, ": ", dtype_short_name(t.dtype), format_sizes(t.sizes));
  return s;
}

// Python's str() of a list of tensor strings quotes each element.
std::string quoted_tensor_list(absl::Span<const RecordedTensor> ts, char open, char close) {
  std::string s(1, open);
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].none) {  // Python prints None in the list bare
      str_append(&s, i ? ", " : "", "None");
    } else {
      str_append(&s, i ? ", " : "", "'", tensor_text(ts[i]), "'");
    }
  }
  if (open == '(' && ts.size() == 1) s += ",";
  return s + close;
}

std::string value_text(const RecordedValue& v) {
  switch (v.kind) {
    case RecordedValue::Kind::kTensor: return tensor_text(v.tensors.at(0));
    case RecordedValue::Kind::kTensorList: return quoted_tensor_list(v.tensors, '[', ']');
    case RecordedValue::Kind::kOther: break;
  }
  if (!v.rendered.empty()) return v.rendered;
  // Python's str(): strings print bare at top level (approximate=tanh).
  if (v.value.is_string()) return v.value.to_string();
  if (v.type != nullptr) return FunctionSchema::format_value(*v.type, v.value);
  return v.value.repr();
}

std::string args_text(const std::vector<RecordedValue>& args) {
  std::string s;
  for (const RecordedValue& a : args) {
    if (!s.empty()) s += ", ";
    if (!a.name.empty()) str_append(&s, a.name, "=");
    s += value_text(a);
  }
  return s;
}

std::string outputs_text(const std::vector<RecordedValue>& outputs) {
  if (outputs.size() == 1) return value_text(outputs[0]);
  // A tuple of results: Python's str() of a tuple quotes the tensor strings.
  std::string s = "(";
  for (size_t i = 0; i < outputs.size(); ++i) {
    const RecordedValue& o = outputs[i];
    const std::string text = value_text(o);
    str_append(&s, i ? ", " : "", o.kind == RecordedValue::Kind::kOther ? text : "'" + text + "'");
  }
  if (outputs.size() == 1) s += ",";
  return s + ")";
}

bool outputs_all_none(const std::vector<RecordedValue>& outputs) {
  for (const RecordedValue& o : outputs) {
    if (o.kind != RecordedValue::Kind::kOther || !o.value.is_none()) return false;
  }
  return true;
}

std::string hashes_text(const std::vector<HashValue>& hashes, bool as_tuple) {
  if (!as_tuple && hashes.size() == 1) return hashes[0].str();
  std::string s = "(";
  for (size_t i = 0; i < hashes.size(); ++i) str_append(&s, i ? ", " : "", hashes[i].str());
  if (hashes.size() == 1) s += ",";
  return s + ")";
}

std::string node_text(const HashNode& n, bool as_tuple) {
  switch (n.kind) {
    case HashNode::Kind::kNone: return "None";
    case HashNode::Kind::kHashes: return hashes_text(n.hashes, as_tuple);
    case HashNode::Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < n.items.size(); ++i) str_append(&s, i ? ", " : "", node_text(n.items[i], as_tuple));
      return s + "]";
    }
  }
  return "None";
}

// (args_tuple, kwargs_dict), as PyTorch's tree hash of (args, kwargs).
std::string input_hash_text(const std::vector<HashNode>& nodes, bool as_tuple) {
  std::vector<std::string> positional, keyword;
  for (const HashNode& n : nodes) {
    if (n.name.empty()) positional.push_back(node_text(n, as_tuple));
    else keyword.push_back(str_cat("'", n.name, "': ", node_text(n, as_tuple)));
  }
  // str_cat, not "(" + std::string&&: GCC 12 -O3 warns (-Wrestrict) on the latter.
  const std::string args = str_cat("(", absl::StrJoin(positional, ", "), positional.size() == 1 ? ",)" : ")");
  return str_cat("(", args, ", {", absl::StrJoin(keyword, ", "), "})");
}

std::string output_hash_text(const std::vector<HashNode>& nodes, bool as_tuple) {
  if (nodes.size() == 1) return node_text(nodes[0], as_tuple);
  std::string s = "(";
  for (size_t i = 0; i < nodes.size(); ++i) str_append(&s, i ? ", " : "", node_text(nodes[i], as_tuple));
  if (nodes.size() == 1) s += ",";
  return s + ")";
}

// Python's repr of a str: single quotes unless the text has a ' and no ",
// backslash escapes for the quote, \\, \n, \r, \t and other control bytes
// (\xNN), so a hook's value never breaks the line. Bytes >= 0x80 pass through.
std::string python_str_repr(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += absl::StrFormat("\\x%02x", u);
    } else {
      out += c;
    }
  }
  return out + quote;
}

std::string annotation_text(const DebugCall& c) {
  std::vector<std::string> items;
  // pre-log hook keys come first, then input_hash (itself a pre-log hook in PyTorch), then hash and log hooks.
  if (c.input_hash) items.push_back("'input_hash': " + input_hash_text(*c.input_hash, c.hash_tuple));
  if (c.hashed) {
    items.push_back("'hash': " + (c.output_hash ? output_hash_text(*c.output_hash, c.hash_tuple) : "None"));
  }
  for (const auto& [k, v] : c.log) items.push_back(python_str_repr(k) + ": " + python_str_repr(v));
  if (items.empty()) return "";
  return "{" + absl::StrJoin(items, ", ") + "}";
}

std::string kernel_hashes_text(const std::vector<std::pair<std::string, std::vector<HashValue>>>& hashes,
                               bool as_tuple) {
  std::vector<std::string> items;
  for (const auto& [k, v] : hashes) items.push_back(k + ": " + hashes_text(v, as_tuple));
  return "{" + absl::StrJoin(items, ", ") + "}";
}

// The text of a source line, read once per file when a debug string asks for it.
std::string source_line(const char* file, uint32_t line) {
  static std::mutex mu;
  static absl::flat_hash_map<std::string, std::vector<std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache.try_emplace(file);
  if (inserted) {
    std::ifstream in(file);
    for (std::string l; std::getline(in, l);) it->second.push_back(l);
  }
  if (line == 0 || line > it->second.size()) return "";
  std::string text = it->second[line - 1];
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? "" : text.substr(first);
}

// "opspec::Tensor run_once(int)" -> "run_once".
std::string short_function_name(std::string_view full) {
  std::string_view name = full.substr(0, full.find('('));
  if (auto space = name.rfind(' '); space != std::string_view::npos) name.remove_prefix(space + 1);
  if (auto colons = name.rfind("::"); colons != std::string_view::npos) name.remove_prefix(colons + 2);
  return std::string(name);
}

}  // namespace

std::string DebugCall::site_summary() const {
  if (!site) return site_text;
  std::string_view file = site->file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  std::string s = str_cat(file, ":", site->line(), " in ", short_function_name(site->function_name()));
  const std::string code = source_line(site->file_name(), site->line());
  if (!code.empty()) str_append(&s, ", code: ", code);
  return s;
}

std::string DebugCall::render(const DebugModeOptions& options) const {
  switch (kind) {
    case Kind::kModule: return "[nn.Mod] " + name;
    case Kind::kKernel: return str_cat("[", kernel_prefix, "] ", name, "(", args_text(args), ")");
    case Kind::kOp:
    case Kind::kFunction: break;
  }
  std::string line = str_cat(name, "(", args_text(args), ")");
  if (has_outputs && !outputs.empty() && !outputs_all_none(outputs)) str_append(&line, "  ->  ", outputs_text(outputs));
  const std::string annotations = annotation_text(*this);
  if (!annotations.empty()) str_append(&line, "  # ", annotations);
  return line;
}

std::string DebugMode::debug_string(std::optional<bool> show_stack_trace) const {
  const bool show = show_stack_trace.value_or(options_.record_stack_trace);
  std::vector<std::string> lines;
  std::string previous_site;
  for (const DebugCall& c : logs()) {
    const std::string indent(static_cast<size_t>(2 + 2 * c.depth), ' ');
    if (show) {
      const std::string site = c.site_summary();
      if (!site.empty() && site != previous_site) {
        if (!lines.empty()) lines.emplace_back();
        lines.push_back(indent + "# File: " + site);
        previous_site = site;
      }
    }
    lines.push_back(indent + c.render(options_));
    if (c.kind == DebugCall::Kind::kKernel) {
      if (!c.pre_kernel_hashes.empty()) {
        lines.push_back(indent + "# pre-kernel hashes: " + kernel_hashes_text(c.pre_kernel_hashes, c.hash_tuple));
      }
      if (!c.post_kernel_hashes.empty()) {
        lines.push_back(indent + "# post-kernel hashes: " + kernel_hashes_text(c.post_kernel_hashes, c.hash_tuple));
      }
      lines.emplace_back();  // PyTorch leaves a blank line after each kernel entry
    }
  }
  return absl::StrJoin(lines, "\n");
}

}  // namespace opspec
