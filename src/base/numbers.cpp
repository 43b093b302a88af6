#include "base/numbers.h"

#include <charconv>

namespace mvr {

std::optional<int64_t> ParseInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt64InRange(std::string_view text, int64_t min, int64_t max) {
  std::optional<int64_t> value = ParseInt64(text);
  if (!value || *value < min || *value > max) return std::nullopt;
  return value;
}

}  // namespace mvr
