// meta_stand_in.cc: See meta_stand_in.h.
#include "runtime/core/meta_stand_in.h"

namespace opspec {
namespace {
// tls_meta_stand_in: See Note [Meta kernels standing in for a device].
thread_local Device tls_meta_stand_in = kCPU;
}  // namespace

Device meta_stand_in_device() { return tls_meta_stand_in; }

MetaStandInGuard::MetaStandInGuard(Device device) : previous_(tls_meta_stand_in) { tls_meta_stand_in = device; }

MetaStandInGuard::~MetaStandInGuard() { tls_meta_stand_in = previous_; }

}  // namespace opspec
