#include "runtime/compile/controls.h"

#include <atomic>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "runtime/compile/internal/capture.h"
#include "runtime/core/call_site.h"
#include "runtime/dispatch/library.h"

namespace opspec {
namespace {

struct Disallowed {
  std::mutex mu;
  absl::flat_hash_set<const OperatorHandle*> ops;
};

Disallowed& disallowed() {
  static Disallowed* d = new Disallowed();
  return *d;
}

}  // namespace

namespace internal {

constinit std::atomic<size_t> disallowed_op_count{0};

bool op_disallowed_locked(const OperatorHandle& op) {
  Disallowed& d = disallowed();
  std::lock_guard<std::mutex> lock(d.mu);
  return d.ops.contains(&op);
}

void check_not_forbidden(std::string_view name) {
  CaptureSession* s = CaptureSession::current();
  if (s == nullptr || s->suspended()) return;
  throw GraphBreakError(str_cat("compile: function `", name, "` is marked forbid_in_graph and was called while being ",
                                "captured; call it outside the compiled function, or use disable() to run it "
                                "eagerly with a graph break"));
}

DisabledScope::DisabledScope(std::string_view name, bool recursive, const std::source_location& loc)
    : recursive_(recursive), suspended_(nullptr) {
  CaptureSession* s = CaptureSession::current();
  if (s != nullptr && !s->suspended()) {
    // An op's call site when a public op runs the function, else where disable() wrapped it.
    const std::source_location* site = current_call_site();
    s->break_graph(BreakKind::kDisabledFunction, name, format_site(site != nullptr ? site : &loc));
    s->suspend();
    suspended_ = s;
  }
  if (recursive_) ++disabled_depth();
}

DisabledScope::~DisabledScope() {
  if (recursive_) --disabled_depth();
  if (suspended_ != nullptr) static_cast<CaptureSession*>(suspended_)->resume();
}

AllowedFunction allow_in_graph_impl(std::string_view name, TracedFunction fn) {
  // The op's CompositeImplicit kernel runs fn: capture (above it) records the
  // op whole, eager execution and tracing below it run fn's ops.
  const std::string op_name = str_cat("opspec_allowed::", name);
  OPSPEC_CHECK(Dispatcher::singleton().find(op_name) == nullptr, "allow_in_graph: a function named '", name,
               "' was already allowed");
  Library lib("opspec_allowed");
  lib.def(str_cat(name, "(Tensor[] args) -> Tensor"), OpKind::kOther);
  lib.impl_boxed(name, DispatchKey::kCompositeImplicit, [fn, op_name](const OperatorHandle&, DispatchKeySet, Stack& s) {
    const std::vector<Tensor> args = s.at(0).to_tensor_list();
    std::vector<Tensor> out = fn(args);
    OPSPEC_CHECK(out.size() == 1, op_name, ": an allow_in_graph function must return one tensor, got ", out.size());
    s.clear();
    s.emplace_back(std::move(out[0]));
  });
  return AllowedFunction(op_name, std::move(fn));
}

}  // namespace internal

Tensor AllowedFunction::operator()(const std::vector<Tensor>& inputs) const {
  const OperatorHandle& op = Dispatcher::singleton().get(op_name_);
  Stack stack{inputs};
  Dispatcher::singleton().call_boxed(op, stack);
  return stack.at(0).to_tensor();
}

void graph_break(const std::source_location& loc) {
  internal::CaptureSession* s = internal::CaptureSession::current();
  if (s == nullptr || s->suspended()) return;
  s->break_graph(internal::BreakKind::kUser, "", internal::format_site(&loc));
}

bool is_compiling() {
  internal::CaptureSession* s = internal::CaptureSession::current();
  return s != nullptr && !s->suspended();
}

void disallow_in_graph(std::string_view op_name) {
  const OperatorHandle& op = Dispatcher::singleton().get(op_name);
  Disallowed& d = disallowed();
  std::lock_guard<std::mutex> lock(d.mu);
  d.ops.insert(&op);
  internal::disallowed_op_count.store(d.ops.size(), std::memory_order_release);
}

void allow_op_in_graph(std::string_view op_name) {
  const OperatorHandle& op = Dispatcher::singleton().get(op_name);
  Disallowed& d = disallowed();
  std::lock_guard<std::mutex> lock(d.mu);
  d.ops.erase(&op);
  internal::disallowed_op_count.store(d.ops.size(), std::memory_order_release);
}

}  // namespace opspec
