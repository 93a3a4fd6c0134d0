#include "runtime/compile/capture.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "runtime/compile/logging.h"
#include "runtime/core/call_site.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/passes.h"
#include "runtime/trace/proxy_tensor.h"

namespace opspec::internal {
namespace {

thread_local CaptureSession* tls_session = nullptr;
thread_local int tls_disabled_depth = 0;

// PyTorch-style text for each kind of break: what happened, why it breaks, what to do.
struct BreakText {
  std::string title, explanation, hint;
};

BreakText break_text(BreakKind kind, std::string_view subject) {
  switch (kind) {
    case BreakKind::kUser:
      return {"Call to `opspec::graph_break()`", "User-inserted graph break.",
              "Remove the `opspec::graph_break()` call."};
    case BreakKind::kDisallowedOp:
      return {str_cat("Call to op `", subject, "`, which is marked disallow_in_graph"),
              "Ops marked with disallow_in_graph run eagerly between two graphs.",
              str_cat("Call allow_op_in_graph(\"", subject, "\") to capture it.")};
    case BreakKind::kDataDependent:
      return {str_cat("Data-dependent read: ", subject),
              "The value of a captured tensor is needed to go on, so the graph so far must run first.",
              "Avoid reading tensor values (item(), to_vector, data_ptr) inside the compiled function, or move the "
              "read out of it."};
    case BreakKind::kDisabledFunction:
      return {str_cat("Call to function `", subject, "`, which is wrapped with disable()"),
              "Functions wrapped with disable() run eagerly and are never captured.",
              "Remove the disable() wrapper to capture its ops."};
    case BreakKind::kNoMetaKernel:
      return {str_cat("Op `", subject, "` has no meta kernel"),
              "Without a meta kernel the op's output metadata cannot be known without running it.",
              str_cat("Register a Meta kernel for ", subject, " with Library::impl(..., DispatchKey::kMeta, ...).")};
  }
  return {};
}

// The fake mode of a capture session; it declines while the session is suspended.
class CaptureFakeMode : public FakeTensorMode {
 public:
  explicit CaptureFakeMode(const CaptureSession& session) : session_(session) {}
  bool dispatch(OpCall& call) override { return session_.suspended() ? false : FakeTensorMode::dispatch(call); }

 private:
  const CaptureSession& session_;
};

void on_data_access(const TensorImpl*, const char* what) {
  CaptureSession* s = tls_session;
  if (s == nullptr || s->suspended() || !s->has_pending_ops()) return;
  s->break_graph(BreakKind::kDataDependent, str_cat("Tensor::", what), format_site(current_call_site()));
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

// ---- The capture mode and the pending graph ----

class CaptureSession::Impl : public ProxyTensorMode {
 public:
  Impl(CaptureSession& session, const std::vector<Tensor>& fn_inputs, const std::vector<std::string>& input_names)
      : ProxyTensorMode(graph_, DispatchKey::kPreDispatch), session_(session), fake_(session) {
    set_error_prefix("compile");
    for (size_t i = 0; i < fn_inputs.size(); ++i) {
      input_names_[fn_inputs[i].impl()] = i < input_names.size() ? input_names[i] : str_cat("x", i);
    }
  }

  bool dispatch(OpCall& call) override {
    if (session_.suspended()) return false;
    const OperatorHandle& op = call.op();
    if (op_disallowed(op)) return break_and_run_eagerly(call, BreakKind::kDisallowedOp, op.name());
    if (op.schema().name() == "_local_scalar_dense") {
      return break_and_run_eagerly(call, BreakKind::kDataDependent, str_cat(op.name(), " (Tensor.item())"));
    }
    const Stack saved = call.stack();
    try {
      ProxyTensorMode::dispatch(call);
    } catch (const NoMetaKernelError&) {
      call.stack() = saved;
      return break_and_run_eagerly(call, BreakKind::kNoMetaKernel, op.name());
    }
    for (size_t i = 0; i < call.stack().size(); ++i) {
      const Value& v = call.stack()[i];
      if (v.is_tensor() && is_fake(v.to_tensor())) remember(v.to_tensor());
    }
    return true;
  }

  // remember: a tensor this graph produced, filled in at flush if still held.
  void remember(const Tensor& t) {
    auto [it, inserted] = captured_index_.try_emplace(t.impl(), captured_.size());
    if (inserted) captured_.push_back(t);
  }

  bool has_pending_ops() const {
    for (Node* n : graph_.nodes()) {
      if (n->op() == NodeOp::kCall) return true;
    }
    return false;
  }

  void flush() {
    fake_.clear_memo();  // its references must not make fakes look held
    std::vector<Node*> outputs;
    std::vector<Tensor> held;
    for (Tensor& t : captured_) {
      // One reference is captured_'s own: any other means the program holds it.
      if (t.impl()->use_count() > 1 && is_fake(t)) {
        outputs.push_back(node_of(t));
        held.push_back(t);
      }
    }
    graph_.set_output(outputs);
    eliminate_dead_code(graph_);
    std::vector<Tensor> inputs;
    std::vector<std::string> names;
    for (Node* p : graph_.placeholders()) {
      if (p->users().empty()) {
        graph_.erase(p);
        continue;
      }
      inputs.push_back(bound_.at(p));
      names.push_back(p->name());
    }
    if (has_pending_ops()) {
      CompiledGraph compiled = session_.state_.compiled_for(graph_, inputs, names, position_++);
      std::vector<Tensor> results;
      {
        SuspendCapture eager(&session_);
        results = compiled(inputs);
      }
      OPSPEC_CHECK(results.size() == held.size(), "compile: the backend returned ", results.size(),
                   " outputs for a graph with ", held.size());
      for (size_t i = 0; i < held.size(); ++i) {
        held[i].impl()->materialize_from(*results[i].impl());
        materialized_.insert(held[i].impl());
      }
      std::lock_guard<std::mutex> lock(session_.state_.mu);
      ++session_.state_.stats.graphs_run;
    }
    graph_ = Graph();
    bound_.clear();
    captured_.clear();
    captured_index_.clear();
    forget();
  }

  CaptureFakeMode& fake() { return fake_; }

 protected:
  // A real tensor the graph has not produced is a graph input.
  Node* on_untracked(const Tensor& t) override {
    std::string name;
    if (auto it = input_names_.find(t.impl()); it != input_names_.end()) {
      name = it->second;
    } else if (materialized_.contains(t.impl())) {
      name = str_cat("tmp", next_tmp_++);
    } else {
      name = str_cat("captured", next_captured_++);
    }
    Node* p = graph().add_placeholder(name, TensorMeta::of(t));
    bound_[p] = t;
    return p;
  }

 private:
  bool break_and_run_eagerly(OpCall& call, BreakKind kind, std::string_view subject) {
    session_.break_graph(kind, subject, format_site(current_call_site()));
    SuspendCapture eager(&session_);
    Dispatcher::singleton().call_boxed(call.op(), call.stack());
    for (const Value& v : call.stack()) {
      if (v.is_tensor() && v.to_tensor().defined()) materialized_.insert(v.to_tensor().impl());
    }
    return true;
  }

  Graph graph_;  // constructed before the base class uses it: see the constructor
  CaptureSession& session_;
  CaptureFakeMode fake_;
  absl::flat_hash_map<const TensorImpl*, std::string> input_names_;
  absl::flat_hash_map<const Node*, Tensor> bound_;  // placeholder -> real tensor
  std::vector<Tensor> captured_;
  absl::flat_hash_map<const TensorImpl*, size_t> captured_index_;
  absl::flat_hash_set<const TensorImpl*> materialized_;
  size_t position_ = 0;
  int next_tmp_ = 0;
  int next_captured_ = 0;
};

// ---- CaptureSession ----

CaptureSession::CaptureSession(CompiledState& state, const std::vector<Tensor>& inputs)
    : state_(state), inputs_(inputs), previous_(tls_session) {
  impl_ = std::make_unique<Impl>(*this, inputs_, state_.options.input_names);
  tls_session = this;
}

CaptureSession::~CaptureSession() { tls_session = previous_; }

CaptureSession* CaptureSession::current() { return tls_session; }

// While suspended, ops run as in eager code: the fake mode leaves its slot,
// so modes such as DebugMode see real ops, not fake ones.
void CaptureSession::suspend() {
  if (suspended_++ == 0) parked_fake_ = exchange_infra_mode(ModeKind::kFake, nullptr);
}

void CaptureSession::resume() {
  if (--suspended_ == 0) exchange_infra_mode(ModeKind::kFake, std::move(parked_fake_));
}

bool CaptureSession::has_pending_ops() const { return impl_->has_pending_ops(); }

void CaptureSession::flush() {
  SuspendCapture no_hooks(this);  // the graph's kernels read data; that is not a break
  impl_->flush();
}

void CaptureSession::break_graph(BreakKind kind, std::string_view subject, std::string user_site) {
  const BreakText text = break_text(kind, subject);
  if (state_.options.fullgraph) {
    std::string message = str_cat("compile(", state_.options.name, ", fullgraph=true): graph break: ", text.title,
                                  "\n  Explanation: ", text.explanation, "\n  Hint: ", text.hint,
                                  " Or compile with fullgraph = false to let the graph split here.");
    if (!user_site.empty()) str_append(&message, "\n  User site: ", user_site);
    throw GraphBreakError(message);
  }
  const GraphBreak b{text.title, user_site};
  state_.record_break(b);
  log_message("graph_breaks", str_cat("Graph break in ", state_.options.name, ": ", text.title,
                                      user_site.empty() ? "" : str_cat(" (", user_site, ")")));
  flush();
}

std::vector<Tensor> CaptureSession::run() {
  // Restored in reverse on any exception: a throwing fn leaves no mode, guard
  // or hook behind, and nothing of the unfinished graph is cached.
  EnablePreDispatchGuard pre_dispatch;
  ModeGuard fake(impl_->fake());
  ModeGuard capture(*impl_);
  struct HookGuard {
    DataAccessHook saved = tls_data_access_hook;
    HookGuard() { tls_data_access_hook = &on_data_access; }
    ~HookGuard() { tls_data_access_hook = saved; }
  } hook;
  std::vector<Tensor> outputs = state_.fn(inputs_);
  flush();
  return outputs;
}

}  // namespace opspec::internal
