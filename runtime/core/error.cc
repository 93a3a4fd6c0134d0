#include "runtime/core/error.h"

namespace opspec {

std::string shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return str_cat(s.substr(0, cut), "... (", s.size(), " bytes)");
}

}  // namespace opspec

namespace opspec::internal {

void throw_error(const std::string& message) { throw Error(message); }
void throw_not_implemented(const std::string& message) { throw NotImplementedError(message); }

}  // namespace opspec::internal
