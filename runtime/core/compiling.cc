// compiling.cc: the query Note [Is compiling] describes.
#include "runtime/core/compiling.h"

#include <atomic>

namespace opspec::internal {
namespace {
std::atomic<CompilingQuery> compiling_query{nullptr};
}  // namespace

void set_compiling_query(CompilingQuery query) { compiling_query.store(query, std::memory_order_release); }

bool is_compiling_now() {
  const CompilingQuery q = compiling_query.load(std::memory_order_acquire);
  return q != nullptr && q();
}

}  // namespace opspec::internal
