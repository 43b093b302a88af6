// Secret: a string that must never reach a log, an error, an argument list, a stored item or a
// handle (JIT configs, tokens, keys). It prints as "***"; only Reveal() gives the value, and the
// memory is wiped when the Secret goes away.
// Thread-safety: a plain value.
#pragma once

#include <fmt/format.h>

#include <ostream>
#include <string>

namespace mvr {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}
  Secret(const Secret&) = default;
  Secret& operator=(const Secret&) = default;
  Secret(Secret&& other) noexcept : value_(std::move(other.value_)) { other.Clear(); }
  Secret& operator=(Secret&& other) noexcept;
  ~Secret() { Clear(); }

  // The value itself. Call only where the value leaves for its one legitimate destination.
  const std::string& Reveal() const { return value_; }
  bool empty() const { return value_.empty(); }
  size_t size() const { return value_.size(); }
  // Overwrites and empties the value.
  void Clear();

  bool operator==(const Secret& other) const;

 private:
  std::string value_;
};

inline std::ostream& operator<<(std::ostream& os, const Secret&) { return os << "***"; }

}  // namespace mvr

template <>
struct fmt::formatter<mvr::Secret> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(const mvr::Secret&, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format("***", ctx);
  }
};
