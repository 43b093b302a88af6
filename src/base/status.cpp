#include "base/status.h"

namespace mvr {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kNotFound:
      return "not_found";
    case Code::kConflict:
      return "conflict";
    case Code::kThrottled:
      return "throttled";
    case Code::kTransient:
      return "transient";
    case Code::kUnauthorized:
      return "unauthorized";
    case Code::kInvalidArgument:
      return "invalid_argument";
    case Code::kQuotaExceeded:
      return "quota_exceeded";
    case Code::kInternal:
      return "internal";
  }
  return "unknown";
}

Status Status::Annotate(const std::string& context) const {
  if (ok()) return *this;
  Status copy = *this;
  copy.message_ = context + ": " + message_;
  return copy;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace mvr
