#include "runtime/dispatch/library.h"

#include <map>
#include <mutex>
#include <utility>

#include "runtime/core/error.h"

namespace opspec {

Library& Library::def(std::string_view schema, OpKind kind) {
  dispatcher_.def(schema, kind, /*composite=*/false, ns_);
  return *this;
}

Library& Library::def(std::string_view schema, OpKind kind, std::initializer_list<OpTag> tags) {
  const OperatorHandle& op = dispatcher_.def(schema, kind, /*composite=*/false, ns_);
  for (OpTag tag : tags) dispatcher_.add_tag(op, tag);
  return *this;
}

const OperatorHandle& Library::lookup(std::string_view op_name) const {
  std::string name(op_name);
  if (name.find("::") == std::string::npos) name = ns_ + "::" + name;
  const OperatorHandle* op = dispatcher_.find(name);
  OPSPEC_CHECK(op != nullptr, "Library(", ns_, "): cannot register a kernel for unknown op '", shorten(name),
               "'; declare it with def() first");
  return *op;
}

Library& Library::impl_boxed(std::string_view op_name, DispatchKey key, BoxedKernel fn) {
  const OperatorHandle& op = lookup(op_name);
  dispatcher_.register_kernel(op, key, KernelFunction::from_boxed(std::move(fn)));
  return *this;
}

Library& Library::fallback(DispatchKey key, BoxedKernel fn) {
  dispatcher_.register_fallback(key, KernelFunction::from_boxed(std::move(fn), str_cat(ns_, "_fallback")));
  return *this;
}

namespace {
// The live ScopedOverrides of each (op, key): the innermost of each chain, under g_overrides_mu.
std::mutex g_overrides_mu;
std::map<std::pair<const OperatorHandle*, DispatchKey>, internal::LiveLink<ScopedOverride>*> g_innermost_overrides;
}  // namespace

ScopedOverride::ScopedOverride(const OperatorHandle& op, DispatchKey key, KernelFunction kernel) : op_(op), key_(key) {
  std::lock_guard<std::mutex> lock(g_overrides_mu);
  previous_ = op.override_kernel(key);
  Dispatcher::singleton().register_override(op, key, std::move(kernel));  // may throw: link only once registered
  link_.emplace(this, g_innermost_overrides[{&op, key}]);
}

ScopedOverride::~ScopedOverride() {
  std::lock_guard<std::mutex> lock(g_overrides_mu);
  if (ScopedOverride* inner = link_->inner(); inner != nullptr) {
    inner->previous_ = std::move(previous_);  // the later override stays; it will put back what this one replaced
  } else if (previous_.valid()) {
    Dispatcher::singleton().register_override(op_, key_, std::move(previous_));
  } else {
    Dispatcher::singleton().remove_override(op_, key_);
  }
  link_.reset();
}

}  // namespace opspec
