#include "runtime/compile/backend.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_join.h"
#include "runtime/compile/aot_eager.h"
#include "runtime/core/error.h"
#include "runtime/graph/interpreter.h"

namespace opspec {
namespace {

struct Registered {
  Backend backend;
  std::vector<std::string> tags;
};

struct BackendRegistry {
  std::mutex mu;
  std::map<std::string, Registered, std::less<>> backends;
};

BackendRegistry& backend_registry() {
  static BackendRegistry* r = [] {
    auto* reg = new BackendRegistry();
    // PyTorch tags its eager and aot_eager backends "debug" (list_backends() hides them).
    reg->backends["eager"] = {&eager_backend, {"debug"}};
    reg->backends["aot_eager"] = {make_aot_eager_backend(), {"debug"}};
    reg->backends["fused"] = {&fused_backend, {}};
    return reg;
  }();
  return *r;
}

}  // namespace

bool has_dynamic_dims(const std::vector<Tensor>& example_inputs) {
  return std::any_of(example_inputs.begin(), example_inputs.end(),
                     [](const Tensor& t) { return t.impl()->dynamic_dims() != 0; });
}

CompiledGraph eager_backend(const Graph& graph, const std::vector<Tensor>& example_inputs) {
  auto g = std::make_shared<const Graph>(graph.clone());
  const RunGraphOptions options{.check_sizes = !has_dynamic_dims(example_inputs)};
  const GraphRunner runner(*g, options);  // See Note [Graph runner plan]
  return [g, runner](const std::vector<Tensor>& inputs) { return runner(inputs); };
}

void register_backend(std::string name, Backend backend, std::vector<std::string> tags) {
  OPSPEC_CHECK(static_cast<bool>(backend), "register_backend: backend '", name, "' is empty");
  BackendRegistry& r = backend_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.backends[std::move(name)] = {std::move(backend), std::move(tags)};
}

Backend lookup_backend(std::string_view name) {
  BackendRegistry& r = backend_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.backends.find(name);
  if (it != r.backends.end()) return it->second.backend;
  std::vector<std::string> names;
  for (const auto& [n, b] : r.backends) names.push_back(n);
  OPSPEC_FAIL("unknown backend '", name, "'; registered backends: ", absl::StrJoin(names, ", "));
}

std::vector<std::string> list_backends(const ListBackendsOptions& options) {
  BackendRegistry& r = backend_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [n, b] : r.backends) {
    const bool excluded = std::any_of(b.tags.begin(), b.tags.end(), [&](const std::string& tag) {
      return std::find(options.exclude_tags.begin(), options.exclude_tags.end(), tag) != options.exclude_tags.end();
    });
    if (!excluded) names.push_back(n);
  }
  return names;
}

std::vector<std::string> backend_tags(std::string_view name) {
  BackendRegistry& r = backend_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.backends.find(name);
  OPSPEC_CHECK(it != r.backends.end(), "backend_tags: unknown backend '", name, "'");
  return it->second.tags;
}

}  // namespace opspec
