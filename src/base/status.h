// Status and Result<T>: the one error channel of mvr. Errors are values with a small set of codes;
// HTTP status codes and service error names are mapped to these at the edges only.
// Thread-safety: plain values; copy freely.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace mvr {

enum class Code {
  kOk,
  kNotFound,
  kConflict,
  kThrottled,
  kTransient,
  kUnauthorized,
  kInvalidArgument,
  kQuotaExceeded,
  kInternal,
};

// Stable lower-case name of a code, as logs and errors print it ("not_found").
const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // The service's own error name, when one was given (e.g. "ResourceNotFoundException").
  const std::string& error_type() const { return error_type_; }
  Status& WithErrorType(std::string type) {
    error_type_ = std::move(type);
    return *this;
  }

  // How long the service asked us to wait before retrying (Retry-After, rate-limit reset).
  std::optional<std::chrono::milliseconds> retry_after() const { return retry_after_; }
  Status& WithRetryAfter(std::chrono::milliseconds delay) {
    retry_after_ = delay;
    return *this;
  }

  // Returns a copy whose message is "<context>: <message>", keeping code and details.
  Status Annotate(const std::string& context) const;

  // "not_found: <message>".
  std::string ToString() const;

  void IgnoreError() const {}

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string error_type_;
  std::optional<std::chrono::milliseconds> retry_after_;
};

inline Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status Conflict(std::string m) { return Status(Code::kConflict, std::move(m)); }
inline Status Throttled(std::string m) { return Status(Code::kThrottled, std::move(m)); }
inline Status Transient(std::string m) { return Status(Code::kTransient, std::move(m)); }
inline Status Unauthorized(std::string m) { return Status(Code::kUnauthorized, std::move(m)); }
inline Status InvalidArgument(std::string m) {
  return Status(Code::kInvalidArgument, std::move(m));
}
inline Status QuotaExceeded(std::string m) { return Status(Code::kQuotaExceeded, std::move(m)); }
inline Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT(runtime/explicit)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(runtime/explicit)
    if (std::get<Status>(data_).ok())
      data_ = Status(Code::kInternal, "Result built from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace mvr

// Propagates a non-OK Status from an expression returning Status.
#define MVR_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::mvr::Status mvr_status_ = (expr);        \
    if (!mvr_status_.ok()) return mvr_status_; \
  } while (0)

#define MVR_CONCAT_INNER(a, b) a##b
#define MVR_CONCAT(a, b) MVR_CONCAT_INNER(a, b)

// MVR_ASSIGN_OR_RETURN(auto x, Foo()); propagates Foo's error, else binds its value.
#define MVR_ASSIGN_OR_RETURN(lhs, expr) \
  MVR_ASSIGN_OR_RETURN_IMPL(MVR_CONCAT(mvr_result_, __LINE__), lhs, expr)
#define MVR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
