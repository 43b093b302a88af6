#include "base/environment.h"

#include <cstdlib>

namespace mvr {

std::optional<std::string> ProcessEnvironment::Get(std::string_view name) const {
  const char* v = std::getenv(std::string(name).c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace mvr
