// capture.cc: CaptureSession: one call of a compiled function under capture
// (See Note [The warm path] in internal/capture.h).
#include "runtime/compile/internal/capture.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "runtime/autograd/engine.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/internal/capture_mode.h"
#include "runtime/compile/logging.h"
#include "runtime/core/call_site.h"
#include "runtime/core/compiling.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/op_table.h"
#include "runtime/trace/proxy_tensor.h"

namespace opspec::internal {
namespace {

thread_local CaptureSession* tls_session = nullptr;
thread_local int tls_disabled_depth = 0;

void on_data_access(const TensorImpl*, const char* what) {
  CaptureSession* s = tls_session;
  if (s == nullptr || s->suspended()) return;
  s->note_data_read();  // even of a real tensor: fn's next ops may depend on it (Note [Trace once])
  if (!s->has_pending_ops()) return;
  s->break_graph(BreakKind::kDataDependent, str_cat("Tensor::", what), format_site(current_call_site()));
}

// on_backward: backward() inside fn ends the graph and runs outside capture
// (See Note [AOT autograd]); balanced, as suspend() and resume() count.
void on_backward(bool entering) {
  CaptureSession* s = tls_session;
  if (s == nullptr) return;
  if (!entering) {
    s->resume();
    return;
  }
  if (!s->suspended() && s->has_pending_ops()) {
    s->break_graph(BreakKind::kBackward, "Tensor.backward()", format_site(current_call_site()));
  }
  s->suspend();
}

}  // namespace

std::string format_site(const std::source_location* loc) {
  if (const std::string* label = current_site_label()) return *label;  // a spec program's line
  if (loc == nullptr) return "";
  std::string_view file = loc->file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  // The compiler's pretty function name ("T ns::Class::f(args) const", or
  // "ns::Test::TestBody()::<lambda(...)>") shortened to its unqualified name.
  std::string_view fn = loc->function_name();
  if (auto lambda = fn.find("::<lambda"); lambda != std::string_view::npos) fn = fn.substr(0, lambda);
  if (auto paren = fn.find('('); paren != std::string_view::npos) fn = fn.substr(0, paren);
  if (auto space = fn.rfind(' '); space != std::string_view::npos) fn.remove_prefix(space + 1);
  if (auto colons = fn.rfind("::"); colons != std::string_view::npos) fn.remove_prefix(colons + 2);
  return str_cat(file, ":", loc->line(), " in ", fn);
}

int& disabled_depth() { return tls_disabled_depth; }

// ---- CaptureSession ----

CaptureSession::CaptureSession(CompiledState& state, const std::vector<Tensor>& inputs, bool cache_only)
    : state_(state), inputs_(inputs), cache_only_(cache_only), previous_(tls_session) {
  impl_ = std::make_unique<CaptureMode>(*this, inputs_, state_.options.input_names);
  tls_session = this;
  set_compiling_query(&opspec::is_compiling);  // for the layers below compile (See Note [Is compiling])
}

CaptureSession::~CaptureSession() { tls_session = previous_; }

CaptureSession* CaptureSession::current() { return tls_session; }

// Note [Modes around a compiled call]
// A user's modes around a compiled call see the ops that run, as PyTorch's
// do: each graph's ops when it runs (on the eager and aot_eager backends,
// whose graphs dispatch their ops; the fused backend's kernels are not ops),
// and the ops that run eagerly after a break, all on real tensors. They never
// see capture: while fn runs under capture the Python and FunctionMode stacks
// are emptied (by a HideUserModesGuard), and every suspend() (a graph or an
// eager op running) puts them back. Counting modes used to count each op
// twice, once on fake tensors. Pre-dispatch user modes stay where they are
// (the capture mode shares their stack) and still see fn's calls; infra modes
// (fake, proxy) are slots, not stacks, and are handled by suspend().
void CaptureSession::hide_user_modes() {
  OPSPEC_INTERNAL_ASSERT(!hidden_modes_.has_value());
  hidden_modes_.emplace(DispatchKeySet{DispatchKey::kPython, DispatchKey::kFunctionMode});
}

void CaptureSession::show_user_modes() { hidden_modes_.reset(); }

// While suspended, ops run as in eager code: the fake mode leaves its slot,
// so modes such as DebugMode see real ops, not fake ones, and the capture
// mode leaves the PreDispatch stack when it is on top (not while its own
// handler runs), so a graph's ops do not pass through it on their way. The
// PreDispatch key run() enabled is lifted too: left on, every op of a graph
// went through the boxed PreDispatch fallback to find no mode there.
void CaptureSession::suspend() {
  if (suspended_++ != 0) return;
  parked_fake_ = exchange_infra_mode(ModeKind::kFake, nullptr);
  if (innermost_mode(DispatchKey::kPreDispatch) == impl_.get()) parked_capture_ = pop_mode(DispatchKey::kPreDispatch);
  LocalDispatchKeySet& tls = local_dispatch_key_set();
  pre_dispatch_lifted_ = enabled_pre_dispatch_ && tls.included.has(DispatchKey::kPreDispatch);
  if (pre_dispatch_lifted_) tls.included = tls.included.remove(DispatchKey::kPreDispatch);
  if (excluded_autograd_) tls.excluded = tls.excluded.remove(DispatchKey::kAutograd);
  show_user_modes();
}

void CaptureSession::resume() {
  if (--suspended_ != 0) return;
  hide_user_modes();
  if (excluded_autograd_) {
    LocalDispatchKeySet& tls = local_dispatch_key_set();
    tls.excluded = tls.excluded.add(DispatchKey::kAutograd);
  }
  if (pre_dispatch_lifted_) {
    LocalDispatchKeySet& tls = local_dispatch_key_set();
    tls.included = tls.included.add(DispatchKey::kPreDispatch);
    pre_dispatch_lifted_ = false;
  }
  if (parked_capture_ != nullptr) push_mode(std::move(parked_capture_));
  parked_capture_ = nullptr;
  exchange_infra_mode(ModeKind::kFake, std::move(parked_fake_));
}

bool CaptureSession::has_pending_ops() const { return impl_->has_pending_ops(); }

bool CaptureSession::flush() {
  SuspendCapture no_hooks(this);  // the graph's kernels read data; that is not a break
  return impl_->flush();
}

void CaptureSession::break_graph(BreakKind kind, std::string_view subject, std::string user_site) {
  broke_ = true;
  refuse_under_fullgraph(state_, kind, subject, user_site);
  const size_t position = impl_->graphs_run();  // the graph this break ends, if it has ops
  const bool traced = flush();  // this call's own lookup: another thread's compiles do not count
  note_break(state_, kind, subject, user_site, position, traced);
}

std::vector<Tensor> CaptureSession::run() {
  std::vector<Tensor> outputs;
  {
    // Restored in reverse on any exception: a throwing fn leaves no mode, guard
    // or hook behind, and nothing of the unfinished graph is cached.
    enabled_pre_dispatch_ = !local_dispatch_key_set().included.has(DispatchKey::kPreDispatch);
    EnablePreDispatchGuard pre_dispatch;
    // Capture records no autograd history: a compiled graph's results get
    // their grad_fn when it runs (See Note [AOT autograd]); ops that run
    // while suspended (eagerly, or backward) record as usual.
    excluded_autograd_ = !local_dispatch_key_set().excluded.has(DispatchKey::kAutograd);
    std::optional<ExcludeDispatchKeyGuard> no_autograd;
    if (excluded_autograd_) no_autograd.emplace(DispatchKey::kAutograd);
    struct HiddenModes {  // See Note [Modes around a compiled call].
      CaptureSession& s;
      explicit HiddenModes(CaptureSession& s) : s(s) { s.hide_user_modes(); }
      ~HiddenModes() { s.show_user_modes(); }
    } hidden(*this);
    ModeGuard fake(impl_->fake());
    ModeGuard capture(*impl_);
    struct HookGuard {
      DataAccessHook saved = tls_data_access_hook;
      BackwardHook saved_backward = tls_backward_hook();
      HookGuard() {
        tls_data_access_hook = &on_data_access;
        tls_backward_hook() = &on_backward;
      }
      ~HookGuard() {
        tls_data_access_hook = saved;
        tls_backward_hook() = saved_backward;
      }
    } hook;
    outputs = state_.fn(inputs_);
    flush();
  }
  // One graph, no break, no data read: later calls may skip fn (Note [Trace once]).
  if (state_.options.trace_once && !broke_ && !data_read_ && impl_->graphs_run() <= 1) {
    keep_plan(state_, inputs_, outputs, impl_->graphs_run() == 1 ? &impl_->last_graph() : nullptr);
  }
  return outputs;
}

}  // namespace opspec::internal
