// export_json.cc: ExportedProgram's saved form (docs/export-format.md,
// version 1): to_json, from_json, save, load.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "runtime/compile/export.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "opspec-exported-program";
constexpr int kVersion = 1;

// A float as JSON: a number, or "inf", "-inf", "nan", "-nan" (JSON has none
// of them). A NaN keeps its sign, not its payload, as Python's float repr.
json float_json(double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double float_of(const json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "-nan") return std::copysign(std::nan(""), -1.0);
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    OPSPEC_FAIL("expected a number, \"inf\", \"-inf\", \"nan\" or \"-nan\", got \"", s, "\"");
  }
  return j.get<double>();
}

json meta_json(const TensorMeta& m) {
  return {{"dtype", dtype_short_name(m.dtype)}, {"sizes", std::vector<int64_t>(m.sizes.begin(), m.sizes.end())},
          {"strides", std::vector<int64_t>(m.strides.begin(), m.strides.end())}, {"device", m.device.str()}};
}
DType dtype_of(const json& j) {
  const std::string name = j.get<std::string>();
  const std::optional<DType> d = parse_dtype(name);
  OPSPEC_CHECK(d.has_value(), "unknown dtype '", name, "'");
  return *d;
}
TensorMeta meta_of(const json& j) {
  TensorMeta m;
  m.dtype = dtype_of(j.at("dtype"));
  for (int64_t s : j.at("sizes").get<std::vector<int64_t>>()) m.sizes.push_back(s);
  for (int64_t s : j.at("strides").get<std::vector<int64_t>>()) m.strides.push_back(s);
  m.device = Device::parse(j.at("device").get<std::string>());
  return m;
}

// A constant tensor by value (contiguous, logical order). int64 stays exact.
json tensor_json(const Tensor& t) {
  OPSPEC_CHECK(t.device() == kCPU, "export: saving a constant on ", t.device().str(), " is not supported");
  json data = json::array();
  if (t.dtype() == DType::kInt64) {
    for (int64_t v : t.to_vector<int64_t>()) data.push_back(v);
  } else {
    for (double v : t.to_vector<double>()) data.push_back(is_floating(t.dtype()) ? float_json(v) : json(v));
  }
  return {{"dtype", dtype_short_name(t.dtype())},
          {"sizes", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())},
          {"wrapped_number", t.is_wrapped_number()},
          {"data", data}};
}
Tensor tensor_of(const json& j) {
  const DType dtype = dtype_of(j.at("dtype"));
  const std::vector<int64_t> sizes = j.at("sizes").get<std::vector<int64_t>>();
  const json& data = j.at("data");
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  OPSPEC_CHECK(data.is_array() && static_cast<int64_t>(data.size()) == numel, "a constant of shape [",
               absl::StrJoin(sizes, ", "), "] needs ", numel, " values, got ", data.size());
  Tensor t;
  if (dtype == DType::kInt64) {
    t = ops::zeros(sizes, {.dtype = DType::kInt64});
    int64_t* p = t.data_ptr<int64_t>();
    for (int64_t i = 0; i < numel; ++i) p[i] = data[static_cast<size_t>(i)].get<int64_t>();
  } else {
    std::vector<double> values;
    for (const json& v : data) values.push_back(float_of(v));
    t = ops::tensor(values, sizes, dtype);
  }
  if (j.value("wrapped_number", false)) t.impl()->set_wrapped_number(true);
  return t;
}

json value_json(const Value& v) {
  if (v.is_none()) return {{"none", nullptr}};
  if (v.is_tensor()) return {{"tensor", tensor_json(v.to_tensor())}};
  if (v.is_bool()) return {{"bool", v.to_bool()}};
  if (v.is_int()) return {{"int", v.to_int()}};
  if (v.is_double()) return {{"float", float_json(v.to_double())}};
  if (v.is_int_list()) return {{"ints", v.to_int_list()}};
  if (v.is_double_list()) {
    json l = json::array();
    for (double d : v.to_double_list()) l.push_back(float_json(d));
    return {{"floats", l}};
  }
  if (v.is_bool_list()) return {{"bools", v.to_bool_list()}};
  if (v.is_tensor_list()) {
    json l = json::array();
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? tensor_json(t) : json(nullptr));
    return {{"tensors", l}};
  }
  if (v.is_dtype()) return {{"dtype", dtype_short_name(v.to_dtype())}};
  if (v.is_device()) return {{"device", v.to_device().str()}};
  return {{"str", v.to_string()}};
}
Value value_of(const json& j) {
  OPSPEC_CHECK(j.is_object() && j.size() == 1, "a value must be an object with one key, got ", j.dump());
  // (Not `*j.items().begin()`: items() yields proxies that die with the expression.)
  const auto only = j.begin();
  const std::string kind = only.key();
  const json& x = only.value();
  if (kind == "none") return Value();
  if (kind == "tensor") return tensor_of(x);
  if (kind == "bool") return x.get<bool>();
  if (kind == "int") return x.get<int64_t>();
  if (kind == "float") return float_of(x);
  if (kind == "ints") return x.get<std::vector<int64_t>>();
  if (kind == "floats") {
    std::vector<double> l;
    for (const json& d : x) l.push_back(float_of(d));
    return l;
  }
  if (kind == "bools") return x.get<std::vector<bool>>();
  if (kind == "tensors") {
    std::vector<Tensor> l;
    for (const json& t : x) l.push_back(t.is_null() ? Tensor() : tensor_of(t));
    return l;
  }
  if (kind == "dtype") return dtype_of(x);
  if (kind == "device") return Device::parse(x.get<std::string>());
  if (kind == "str") return x.get<std::string>();
  OPSPEC_FAIL("unknown value kind '", kind, "'");
}

std::string_view op_name(NodeOp op) { return node_op_name(op); }

}  // namespace

std::string ExportedProgram::to_json() const {
  OPSPEC_CHECK(graph_ != nullptr, "ExportedProgram::to_json: the program is empty");
  json ops = json::object(), nodes = json::array(), inputs = json::array();
  for (const Node* n : graph_->nodes()) {
    json node = {{"op", op_name(n->op())}, {"name", n->name()}};
    json meta = json::array();
    for (const OutputMeta& m : n->meta()) meta.push_back(m ? meta_json(*m) : json(nullptr));
    node["meta"] = meta;
    if (n->op() == NodeOp::kCall) {
      node["target"] = n->target()->name();
      ops[n->target()->name()] = n->target()->schema().str();
    }
    if (n->op() == NodeOp::kGetItem) node["index"] = n->index();
    if (n->op() == NodeOp::kConstant) node["tensor"] = tensor_json(n->constant());
    json args = json::array();
    for (const NodeArg& a : n->args()) {
      if (a.is_node()) {
        args.push_back({{"node", a.as_node()->name()}});
      } else if (a.is_node_list()) {
        std::vector<std::string> names;
        for (const Node* m : a.as_node_list()) names.push_back(m->name());
        args.push_back({{"nodes", names}});
      } else {
        args.push_back({{"value", value_json(a.as_value())}});
      }
    }
    node["args"] = args;
    nodes.push_back(node);
  }
  for (const TensorGuard& g : guards_.tensors) {
    std::vector<int64_t> dynamic;
    for (int64_t d = 0; d < static_cast<int64_t>(g.sizes.size()); ++d) {
      if ((g.dynamic_dims >> d) & 1) dynamic.push_back(d);
    }
    inputs.push_back({{"name", g.name},
                      {"source", g.source},
                      {"meta", meta_json({g.sizes, g.strides, g.dtype, g.device})},
                      {"dynamic_dims", dynamic}});
  }
  auto specs = [](const std::vector<TensorSpec>& list) {
    json out = json::array();
    for (const TensorSpec& s : list) out.push_back({{"name", s.name}, {"kind", s.kind}, {"meta", s.meta}});
    return out;
  };
  const json doc = {{"format", kFormat},         {"version", kVersion},       {"name", name_},
                    {"ops", ops},                {"inputs", inputs},          {"nodes", nodes},
                    {"node_sizes", node_sizes_}, {"input_specs", specs(inputs_)}, {"output_specs", specs(outputs_)}};
  return doc.dump(1);
}

ExportedProgram ExportedProgram::from_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    OPSPEC_FAIL("ExportedProgram: not JSON: ", e.what());
  }
  try {
    OPSPEC_CHECK(doc.is_object() && doc.value("format", "") == kFormat,
                 "ExportedProgram: not an exported program (no \"format\": \"", kFormat, "\")");
    const int version = doc.at("version").get<int>();
    OPSPEC_CHECK(version == kVersion, "ExportedProgram: format version ", version, " is not supported (this build reads ",
                 kVersion, ")");
    // Every op must exist with the schema it was saved with.
    Dispatcher& dispatcher = Dispatcher::singleton();
    for (const auto& [name, schema] : doc.at("ops").items()) {
      const OperatorHandle* op = dispatcher.find(name);
      OPSPEC_CHECK(op != nullptr, "ExportedProgram: the graph calls '", name, "', which is not registered");
      OPSPEC_CHECK(op->schema().str() == schema.get<std::string>(), "ExportedProgram: the schema of '", name,
                   "' changed since the program was saved: saved '", schema.get<std::string>(), "', now '",
                   op->schema().str(), "'");
    }
    ExportedProgram ep;
    ep.name_ = doc.at("name").get<std::string>();
    auto graph = std::make_shared<Graph>();
    std::map<std::string, Node*> by_name;
    auto node_named = [&](const json& name) {
      auto it = by_name.find(name.get<std::string>());
      OPSPEC_CHECK(it != by_name.end(), "node '", name.get<std::string>(), "' is used before it is defined");
      return it->second;
    };
    for (const json& n : doc.at("nodes")) {
      const std::string op = n.at("op").get<std::string>(), name = n.at("name").get<std::string>();
      std::vector<OutputMeta> meta;
      for (const json& m : n.at("meta")) meta.push_back(m.is_null() ? OutputMeta() : OutputMeta(meta_of(m)));
      std::vector<NodeArg> args;
      for (const json& a : n.at("args")) {
        if (a.contains("node")) {
          args.push_back(NodeArg::node(node_named(a.at("node"))));
        } else if (a.contains("nodes")) {
          std::vector<Node*> list;
          for (const json& m : a.at("nodes")) list.push_back(node_named(m));
          args.push_back(NodeArg::nodes(std::move(list)));
        } else {
          args.push_back(NodeArg::value(value_of(a.at("value"))));
        }
      }
      Node* made = nullptr;
      if (op == "placeholder") {
        OPSPEC_CHECK(meta.size() == 1 && meta[0], "placeholder '", name, "' needs one tensor meta");
        made = graph->add_placeholder(name, *meta[0]);
      } else if (op == "constant") {
        made = graph->add_constant(tensor_of(n.at("tensor")), name);
      } else if (op == "call") {
        made = graph->add_call(dispatcher.get(n.at("target").get<std::string>()), std::move(args), std::move(meta));
      } else if (op == "getitem") {
        OPSPEC_CHECK(args.size() == 1 && args[0].is_node(), "getitem '", name, "' needs one node argument");
        made = graph->add_getitem(args[0].as_node(), n.at("index").get<int64_t>());
      } else if (op == "output") {
        std::vector<Node*> results;
        for (const NodeArg& a : args) results.push_back(a.as_node());
        made = graph->set_output(std::move(results));
      } else {
        OPSPEC_FAIL("unknown node op '", op, "'");
      }
      by_name[name] = made;
    }
    graph->lint();
    std::vector<Tensor> examples;
    std::vector<std::string> names, sources;
    std::vector<uint64_t> dynamic;
    std::vector<Device> devices;
    for (const json& in : doc.at("inputs")) {
      const TensorMeta m = meta_of(in.at("meta"));
      devices.push_back(m.device);  // the examples are meta tensors: the guards get the saved devices
      examples.push_back(ops::empty_strided(m.sizes, m.strides, {.dtype = m.dtype, .device = kMeta}));
      names.push_back(in.at("name").get<std::string>());
      sources.push_back(in.at("source").get<std::string>());
      uint64_t bits = 0;
      for (int64_t d : in.at("dynamic_dims").get<std::vector<int64_t>>()) {
        OPSPEC_CHECK(d >= 0 && d < static_cast<int64_t>(m.sizes.size()), "input '", names.back(), "': dynamic dim ",
                     d, " is out of range");
        bits |= uint64_t{1} << d;
      }
      dynamic.push_back(bits);
    }
    ep.guards_ = GuardSet::make(examples, names, sources, dynamic);
    for (size_t i = 0; i < devices.size(); ++i) ep.guards_.tensors[i].device = devices[i];
    ep.node_sizes_ = doc.at("node_sizes").get<std::vector<std::string>>();
    for (const json& s : doc.at("input_specs")) ep.inputs_.push_back({s.at("name"), s.at("kind"), s.at("meta")});
    for (const json& s : doc.at("output_specs")) ep.outputs_.push_back({s.at("name"), s.at("kind"), s.at("meta")});
    ep.graph_ = std::move(graph);
    return ep;
  } catch (const json::exception& e) {
    OPSPEC_FAIL("ExportedProgram: malformed program: ", e.what());
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with("ExportedProgram")) throw;
    OPSPEC_FAIL("ExportedProgram: malformed program: ", e.what());
  }
}

void ExportedProgram::save(const std::string& path) const {
  std::ofstream out(path);
  OPSPEC_CHECK(out.good(), "ExportedProgram::save: cannot write '", path, "'");
  out << to_json() << "\n";
  OPSPEC_CHECK(out.good(), "ExportedProgram::save: writing '", path, "' failed");
}

ExportedProgram ExportedProgram::load(const std::string& path) {
  std::ifstream in(path);
  OPSPEC_CHECK(in.good(), "ExportedProgram::load: cannot read '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return from_json(text.str());
  } catch (const Error& e) {
    OPSPEC_FAIL(path, ": ", e.what());
  }
}

}  // namespace opspec
