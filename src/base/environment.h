// Environment: the process environment as a seam. Only edges (main, CLI, Lambda entry) read it;
// they pass a MapEnvironment in tests.
// Thread-safety: both implementations are read-only after construction.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mvr {

class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::optional<std::string> Get(std::string_view name) const = 0;
  // The value, or `fallback` when unset or empty.
  std::string GetOr(std::string_view name, std::string fallback) const {
    auto v = Get(name);
    return v && !v->empty() ? *v : fallback;
  }
};

class ProcessEnvironment final : public Environment {
 public:
  std::optional<std::string> Get(std::string_view name) const override;
};

class MapEnvironment final : public Environment {
 public:
  MapEnvironment() = default;
  explicit MapEnvironment(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  void Set(std::string name, std::string value) { values_[std::move(name)] = std::move(value); }
  std::optional<std::string> Get(std::string_view name) const override {
    auto it = values_.find(std::string(name));
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace mvr
