// debug_log_io.cc: DebugMode logs to and from JSON. See Note [Debug log JSON format].
#include "harness/debug_log_io.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/dispatch/schema.h"

namespace opspec {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFormat = "opspec-debug-log";
constexpr int64_t kVersion = 1;
// Hash trees mirror argument structure (a tensor list at most); anything far
// deeper is corrupt, and refusing it bounds the loader's recursion.
constexpr int kMaxHashDepth = 64;
// kMaxLogDepth: the deepest entry a log may have (calls inside calls); real
// logs nest a few levels (a module's ops' kernels), so this is far past them.
constexpr int kMaxLogDepth = 256;

// ---- saving ----

std::string_view call_kind_name(DebugCall::Kind k) {
  switch (k) {
    case DebugCall::Kind::kOp: return "op";
    case DebugCall::Kind::kFunction: return "function";
    case DebugCall::Kind::kModule: return "module";
    case DebugCall::Kind::kKernel: return "kernel";
  }
  return "op";
}

std::string_view value_kind_name(RecordedValue::Kind k) {
  switch (k) {
    case RecordedValue::Kind::kTensor: return "tensor";
    case RecordedValue::Kind::kTensorList: return "tensor_list";
    case RecordedValue::Kind::kOther: return "other";
  }
  return "other";
}

std::string_view node_kind_name(HashNode::Kind k) {
  switch (k) {
    case HashNode::Kind::kNone: return "none";
    case HashNode::Kind::kHashes: return "hashes";
    case HashNode::Kind::kList: return "list";
  }
  return "none";
}

// JSON has no NaN or infinity: those are spelled as strings.
Json float_json(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}

Json hash_json(const HashValue& h) {
  Json j = Json::object();
  if (h.is_int) j["u"] = std::to_string(h.u);
  else j["f"] = float_json(h.f);
  return j;
}

Json hashes_json(const std::vector<HashValue>& hs) {
  Json j = Json::array();
  for (const HashValue& h : hs) j.push_back(hash_json(h));
  return j;
}

Json node_json(const HashNode& n) {
  Json j = Json::object();
  j["kind"] = node_kind_name(n.kind);
  if (!n.name.empty()) j["name"] = n.name;
  if (n.kind == HashNode::Kind::kHashes) j["hashes"] = hashes_json(n.hashes);
  if (n.kind == HashNode::Kind::kList) {
    Json items = Json::array();
    for (const HashNode& c : n.items) items.push_back(node_json(c));
    j["items"] = std::move(items);
  }
  return j;
}

Json nodes_json(const std::optional<std::vector<HashNode>>& nodes) {
  if (!nodes) return nullptr;
  Json j = Json::array();
  for (const HashNode& n : *nodes) j.push_back(node_json(n));
  return j;
}

Json boxed_json(const Value& v) {
  Json j = Json::object();
  auto set = [&](std::string_view type, Json value) {
    j["type"] = type;
    j["value"] = std::move(value);
  };
  if (v.is_none()) {
    j["type"] = "none";
  } else if (v.is_int()) {
    set("int", v.to_int());
  } else if (v.is_double()) {
    set("float", float_json(v.to_double()));
  } else if (v.is_bool()) {
    set("bool", v.to_bool());
  } else if (v.is_int_list()) {
    set("int_list", v.to_int_list());
  } else if (v.is_double_list()) {
    Json list = Json::array();
    for (double d : v.to_double_list()) list.push_back(float_json(d));
    set("float_list", std::move(list));
  } else if (v.is_dtype()) {
    set("dtype", dtype_short_name(v.to_dtype()));
  } else if (v.is_device()) {
    set("device", v.to_device().str());
  } else if (v.is_string()) {
    set("str", v.to_string());
  } else {
    // A tensor held as a plain value: only its rendered text survives.
    j["type"] = "unsupported";
  }
  return j;
}

Json value_json(const RecordedValue& v) {
  Json j = Json::object();
  j["kind"] = value_kind_name(v.kind);
  j["name"] = v.name;
  Json tensors = Json::array();
  for (const RecordedTensor& t : v.tensors) {
    Json tj = Json::object();
    tj["dtype"] = dtype_short_name(t.dtype);
    tj["sizes"] = std::vector<int64_t>(t.sizes.begin(), t.sizes.end());
    tj["id"] = t.id;
    tj["fake"] = t.fake;
    if (t.none) tj["none"] = true;  // a None entry of a Tensor?[] list
    tensors.push_back(std::move(tj));
  }
  j["tensors"] = std::move(tensors);
  if (v.kind == RecordedValue::Kind::kOther) {
    j["value"] = boxed_json(v.value);
    j["rendered"] = other_value_text(v);
  }
  return j;
}

Json values_json(const std::vector<RecordedValue>& vs) {
  Json j = Json::array();
  for (const RecordedValue& v : vs) j.push_back(value_json(v));
  return j;
}

Json pairs_json(const std::vector<std::pair<std::string, std::string>>& kv) {
  Json j = Json::array();
  for (const auto& [k, v] : kv) j.push_back(Json::array({k, v}));
  return j;
}

Json kernel_hashes_json(const std::vector<std::pair<std::string, std::vector<HashValue>>>& kh) {
  Json j = Json::array();
  for (const auto& [k, hs] : kh) j.push_back(Json::array({Json(k), hashes_json(hs)}));
  return j;
}

Json entry_json(const DebugCall& c) {
  Json j = Json::object();
  j["kind"] = call_kind_name(c.kind);
  j["depth"] = c.depth;
  j["name"] = c.name;
  j["kernel_prefix"] = c.kernel_prefix;
  j["args"] = values_json(c.args);
  j["outputs"] = values_json(c.outputs);
  j["has_outputs"] = c.has_outputs;
  j["site"] = c.site_summary();
  j["stack"] = c.stack;
  j["input_hash"] = nodes_json(c.input_hash);
  j["output_hash"] = nodes_json(c.output_hash);
  j["hash_tuple"] = c.hash_tuple;
  j["hashed"] = c.hashed;
  j["log"] = pairs_json(c.log);
  j["record"] = pairs_json(c.record);
  j["pre_kernel_hashes"] = kernel_hashes_json(c.pre_kernel_hashes);
  j["post_kernel_hashes"] = kernel_hashes_json(c.post_kernel_hashes);
  return j;
}

// Invalid UTF-8 (a stray byte in a hook's text) is replaced rather than thrown on.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// ---- loading ----

// LoadError: thrown inside the loader, turned into a Status at its boundary.
struct LoadError {
  std::string message;
};

[[noreturn]] void fail(const std::string& ctx, std::string_view what) {
  throw LoadError{ctx.empty() ? std::string(what) : str_cat(ctx, ": ", what)};
}

const Json& field(const Json& obj, std::string_view key, const std::string& ctx) {
  if (!obj.is_object()) fail(ctx, str_cat("must be an object, got ", obj.type_name()));
  auto it = obj.find(std::string(key));
  if (it == obj.end()) fail(ctx, str_cat("missing field '", key, "'"));
  return *it;
}

[[noreturn]] void wrong_type(std::string_view key, std::string_view expected, const Json& got, const std::string& ctx) {
  fail(ctx, str_cat("field '", key, "' must be ", expected, ", got ", got.type_name()));
}

int64_t as_int64(const Json& j, std::string_view key, const std::string& ctx) {
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail(ctx, str_cat("field '", key, "' is out of range: ", j.get<uint64_t>()));
  }
  if (!j.is_number_integer()) wrong_type(key, "an integer", j, ctx);
  return j.get<int64_t>();
}

int64_t get_int(const Json& obj, std::string_view key, const std::string& ctx) {
  return as_int64(field(obj, key, ctx), key, ctx);
}

bool get_bool(const Json& obj, std::string_view key, const std::string& ctx) {
  const Json& j = field(obj, key, ctx);
  if (!j.is_boolean()) wrong_type(key, "a boolean", j, ctx);
  return j.get<bool>();
}

const std::string& as_string(const Json& j, std::string_view key, const std::string& ctx) {
  if (!j.is_string()) wrong_type(key, "a string", j, ctx);
  return j.get_ref<const std::string&>();
}

const std::string& get_string(const Json& obj, std::string_view key, const std::string& ctx) {
  return as_string(field(obj, key, ctx), key, ctx);
}

const Json& get_array(const Json& obj, std::string_view key, const std::string& ctx) {
  const Json& j = field(obj, key, ctx);
  if (!j.is_array()) wrong_type(key, "an array", j, ctx);
  return j;
}

double as_float(const Json& j, std::string_view key, const std::string& ctx) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    fail(ctx, str_cat("field '", key, "' has the unknown float spelling '", s, "' (expected a number, \"nan\", \"inf\" or \"-inf\")"));
  }
  wrong_type(key, "a number", j, ctx);
}

HashValue load_hash(const Json& j, const std::string& ctx) {
  if (!j.is_object()) fail(ctx, str_cat("a hash must be an object {\"f\": ...} or {\"u\": ...}, got ", j.type_name()));
  if (auto it = j.find("f"); it != j.end()) return HashValue::of_float(as_float(*it, "f", ctx));
  if (auto it = j.find("u"); it != j.end()) {
    const std::string& s = as_string(*it, "u", ctx);
    uint64_t u = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      fail(ctx, str_cat("field 'u' must be an unsigned 64-bit decimal, got '", s, "'"));
    }
    return HashValue::of_int(u);
  }
  fail(ctx, "a hash needs field 'f' (float) or 'u' (integer)");
}

std::vector<HashValue> load_hashes(const Json& arr, const std::string& ctx) {
  std::vector<HashValue> out;
  out.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) out.push_back(load_hash(arr[i], str_cat(ctx, "[", i, "]")));
  return out;
}

HashNode load_node(const Json& j, const std::string& ctx, int depth) {
  if (depth > kMaxHashDepth) fail(ctx, str_cat("hash tree nested deeper than ", kMaxHashDepth, " levels"));
  HashNode n;
  const std::string& kind = get_string(j, "kind", ctx);
  if (auto it = j.find("name"); it != j.end()) n.name = as_string(*it, "name", ctx);
  if (kind == "none") {
    n.kind = HashNode::Kind::kNone;
  } else if (kind == "hashes") {
    n.kind = HashNode::Kind::kHashes;
    n.hashes = load_hashes(get_array(j, "hashes", ctx), ctx + ".hashes");
  } else if (kind == "list") {
    n.kind = HashNode::Kind::kList;
    const Json& items = get_array(j, "items", ctx);
    for (size_t i = 0; i < items.size(); ++i) n.items.push_back(load_node(items[i], str_cat(ctx, ".items[", i, "]"), depth + 1));
  } else {
    fail(ctx, str_cat("field 'kind' has the unknown hash node kind '", kind, "' (expected none, hashes or list)"));
  }
  return n;
}

std::optional<std::vector<HashNode>> load_nodes(const Json& obj, std::string_view key, const std::string& ctx) {
  const Json& j = field(obj, key, ctx);
  if (j.is_null()) return std::nullopt;
  if (!j.is_array()) wrong_type(key, "null or an array", j, ctx);
  std::vector<HashNode> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(load_node(j[i], str_cat(ctx, ": ", key, "[", i, "]"), 0));
  return out;
}

DType load_dtype(const std::string& name, const std::string& ctx) {
  std::optional<DType> d = parse_dtype(name);
  if (!d) fail(ctx, str_cat("unknown dtype '", name, "'"));
  return *d;
}

Value load_boxed(const Json& j, const std::string& ctx) {
  const std::string& type = get_string(j, "type", ctx);
  if (type == "none" || type == "unsupported") return Value();
  const Json& v = field(j, "value", ctx);
  if (type == "int") return Value(as_int64(v, "value", ctx));
  if (type == "float") return Value(as_float(v, "value", ctx));
  if (type == "bool") {
    if (!v.is_boolean()) wrong_type("value", "a boolean", v, ctx);
    return Value(v.get<bool>());
  }
  if (type == "int_list" || type == "float_list") {
    if (!v.is_array()) wrong_type("value", "an array", v, ctx);
    if (type == "int_list") {
      std::vector<int64_t> out;
      for (size_t i = 0; i < v.size(); ++i) out.push_back(as_int64(v[i], str_cat("value[", i, "]"), ctx));
      return Value(std::move(out));
    }
    std::vector<double> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(as_float(v[i], str_cat("value[", i, "]"), ctx));
    return Value(std::move(out));
  }
  if (type == "dtype") return Value(load_dtype(as_string(v, "value", ctx), ctx));
  if (type == "device") {
    const std::string& s = as_string(v, "value", ctx);
    try {
      return Value(Device::parse(s));
    } catch (const Error&) {
      fail(ctx, str_cat("unknown device '", s, "'"));
    }
  }
  if (type == "str") return Value(as_string(v, "value", ctx));
  fail(ctx, str_cat("field 'type' has the unknown value type '", type,
                    "' (expected none, int, float, bool, int_list, float_list, dtype, device, str or unsupported)"));
}

RecordedValue load_value(const Json& j, const std::string& ctx) {
  RecordedValue v;
  const std::string& kind = get_string(j, "kind", ctx);
  if (kind == "tensor") v.kind = RecordedValue::Kind::kTensor;
  else if (kind == "tensor_list") v.kind = RecordedValue::Kind::kTensorList;
  else if (kind == "other") v.kind = RecordedValue::Kind::kOther;
  else fail(ctx, str_cat("field 'kind' has the unknown value kind '", kind, "' (expected tensor, tensor_list or other)"));
  v.name = get_string(j, "name", ctx);
  const Json& tensors = get_array(j, "tensors", ctx);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string tctx = str_cat(ctx, ".tensors[", i, "]");
    const Json& t = tensors[i];
    RecordedTensor rt;
    rt.dtype = load_dtype(get_string(t, "dtype", tctx), tctx);
    const Json& sizes = get_array(t, "sizes", tctx);
    for (size_t k = 0; k < sizes.size(); ++k) rt.sizes.push_back(as_int64(sizes[k], str_cat("sizes[", k, "]"), tctx));
    rt.id = get_int(t, "id", tctx);
    rt.fake = get_bool(t, "fake", tctx);
    if (t.contains("none")) rt.none = get_bool(t, "none", tctx);  // optional: None of a Tensor?[]
    v.tensors.push_back(std::move(rt));
  }
  if (v.kind == RecordedValue::Kind::kTensor && v.tensors.size() != 1) {
    fail(ctx, str_cat("a tensor value needs exactly one entry in 'tensors', got ", v.tensors.size()));
  }
  if (v.kind == RecordedValue::Kind::kOther) {
    v.value = load_boxed(field(j, "value", ctx), ctx + ".value");
    v.rendered = get_string(j, "rendered", ctx);
  }
  return v;
}

std::vector<RecordedValue> load_values(const Json& obj, std::string_view key, const std::string& ctx) {
  const Json& arr = get_array(obj, key, ctx);
  std::vector<RecordedValue> out;
  out.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) out.push_back(load_value(arr[i], str_cat(ctx, ": ", key, "[", i, "]")));
  return out;
}

std::vector<std::pair<std::string, std::string>> load_pairs(const Json& obj, std::string_view key, const std::string& ctx) {
  const Json& arr = get_array(obj, key, ctx);
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    const Json& p = arr[i];
    const std::string pctx = str_cat(ctx, ": ", key, "[", i, "]");
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) {
      fail(pctx, "must be a [key, value] pair of strings");
    }
    out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<HashValue>>> load_kernel_hashes(const Json& obj, std::string_view key,
                                                                               const std::string& ctx) {
  const Json& arr = get_array(obj, key, ctx);
  std::vector<std::pair<std::string, std::vector<HashValue>>> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    const Json& p = arr[i];
    const std::string pctx = str_cat(ctx, ": ", key, "[", i, "]");
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_array()) {
      fail(pctx, "must be a [name, [hash, ...]] pair");
    }
    out.emplace_back(p[0].get<std::string>(), load_hashes(p[1], pctx));
  }
  return out;
}

DebugCall load_entry(const Json& j, size_t index) {
  const std::string ctx = str_cat("entry ", index);
  if (!j.is_object()) fail(ctx, str_cat("must be an object, got ", j.type_name()));
  DebugCall c;
  const std::string& kind = get_string(j, "kind", ctx);
  if (kind == "op") c.kind = DebugCall::Kind::kOp;
  else if (kind == "function") c.kind = DebugCall::Kind::kFunction;
  else if (kind == "module") c.kind = DebugCall::Kind::kModule;
  else if (kind == "kernel") c.kind = DebugCall::Kind::kKernel;
  else fail(ctx, str_cat("field 'kind' has the unknown entry kind '", kind, "' (expected op, function, module or kernel)"));
  const int64_t depth = get_int(j, "depth", ctx);
  // DebugMode nests an entry one level per call it runs inside; a renderer
  // indents two spaces a level, so a depth of 10^9 in a 500-byte file wrote
  // gigabytes. See kMaxLogDepth.
  if (depth < 0 || depth > kMaxLogDepth) {
    fail(ctx, str_cat("field 'depth' is out of range: ", depth, " (0 to ", kMaxLogDepth, ")"));
  }
  c.depth = static_cast<int>(depth);
  c.name = get_string(j, "name", ctx);
  c.kernel_prefix = get_string(j, "kernel_prefix", ctx);
  c.args = load_values(j, "args", ctx);
  c.outputs = load_values(j, "outputs", ctx);
  c.has_outputs = get_bool(j, "has_outputs", ctx);
  c.site_text = get_string(j, "site", ctx);
  c.stack = get_string(j, "stack", ctx);
  c.input_hash = load_nodes(j, "input_hash", ctx);
  c.output_hash = load_nodes(j, "output_hash", ctx);
  c.hash_tuple = get_bool(j, "hash_tuple", ctx);
  c.hashed = get_bool(j, "hashed", ctx);
  c.log = load_pairs(j, "log", ctx);
  c.record = load_pairs(j, "record", ctx);
  c.pre_kernel_hashes = load_kernel_hashes(j, "pre_kernel_hashes", ctx);
  c.post_kernel_hashes = load_kernel_hashes(j, "post_kernel_hashes", ctx);
  return c;
}

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string_view strip_exception_id(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    if (auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return what;
}

std::vector<DebugCall> load_document(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) fail("", "debug log JSON is empty");
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte is 1-based: the offending byte's position, or size + 1
    // when the text ended in the middle of a value.
    if (e.byte > text.size()) {
      fail("", str_cat("debug log JSON is truncated: unexpected end of input at byte ", text.size(), " (",
                       strip_exception_id(e.what()), ")"));
    }
    fail("", str_cat("debug log is not valid JSON at byte ", e.byte, ": ", strip_exception_id(e.what())));
  }
  if (!doc.is_object()) fail("", str_cat("not an opspec debug log: expected a JSON object, got ", doc.type_name()));
  auto format = doc.find("format");
  if (format == doc.end()) fail("", "not an opspec debug log: missing field 'format'");
  if (!format->is_string() || format->get_ref<const std::string&>() != kFormat) {
    fail("", str_cat("not an opspec debug log: field 'format' is ", format->dump(), ", expected \"", kFormat, "\""));
  }
  const int64_t version = get_int(doc, "version", "");
  if (version != kVersion) {
    fail("", str_cat("unsupported debug log version ", version, " (this build reads version ", kVersion, ")"));
  }
  const Json& entries = get_array(doc, "entries", "");
  std::vector<DebugCall> log;
  log.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) log.push_back(load_entry(entries[i], i));
  return log;
}

}  // namespace

std::string save_log_json(absl::Span<const DebugCall> log, const DebugModeOptions& options) {
  // One entry per line: readable, and line-oriented tools (diff, grep) work on it.
  std::string out = str_cat("{\"format\": \"", kFormat, "\", \"version\": ", kVersion, ", \"entries\": [");
  for (size_t i = 0; i < log.size(); ++i) str_append(&out, i ? ",\n" : "\n", dump(entry_json(log[i])));
  out += log.empty() ? "]}\n" : "\n]}\n";
  return out;
}

absl::StatusOr<std::vector<DebugCall>> load_log_json(std::string_view text) {
  try {
    return load_document(text);
  } catch (const LoadError& e) {
    return absl::InvalidArgumentError(e.message);
  } catch (const std::exception& e) {
    // Not expected (every access is checked first); still a status, never a crash.
    return absl::InvalidArgumentError(str_cat("cannot load debug log: ", e.what()));
  }
}

absl::Status save_log_file(const std::string& path, absl::Span<const DebugCall> log, const DebugModeOptions& options) {
  const std::string text = save_log_json(log, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::UnavailableError(str_cat("cannot write debug log to '", path, "': ", std::strerror(errno)));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::UnavailableError(str_cat("cannot write debug log to '", path, "': ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DebugCall>> load_log_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(str_cat("cannot read debug log '", path, "': it is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(str_cat("cannot read debug log '", path, "': ", std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(str_cat("cannot read debug log '", path, "': ", std::strerror(errno)));
  absl::StatusOr<std::vector<DebugCall>> log = load_log_json(buffer.str());
  if (!log.ok()) return absl::Status(log.status().code(), str_cat(path, ": ", log.status().message()));
  return log;
}

}  // namespace opspec
