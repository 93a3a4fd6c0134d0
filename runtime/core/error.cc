#include "runtime/core/error.h"

namespace opspec::internal {

void throw_error(const std::string& message) { throw Error(message); }
void throw_not_implemented(const std::string& message) { throw NotImplementedError(message); }

}  // namespace opspec::internal
