// Decimal integers from text that came from outside (paths, headers, environment variables,
// configuration, stored items): the whole text must be the number, an optional '-' and digits, no
// spaces, no '+', no overflow. One helper, so every parser accepts and refuses the same forms.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mvr {

std::optional<int64_t> ParseInt64(std::string_view text);
// The same, and nullopt unless min <= value <= max.
std::optional<int64_t> ParseInt64InRange(std::string_view text, int64_t min, int64_t max);

}  // namespace mvr
