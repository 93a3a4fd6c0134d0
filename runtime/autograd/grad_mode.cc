// grad_mode.cc: the thread-local grad mode.
#include "runtime/autograd/grad_mode.h"

namespace opspec::autograd {
namespace {
thread_local bool tls_grad_enabled = true;
}  // namespace

bool is_grad_enabled() { return tls_grad_enabled; }
void set_grad_enabled(bool enabled) { tls_grad_enabled = enabled; }

}  // namespace opspec::autograd
