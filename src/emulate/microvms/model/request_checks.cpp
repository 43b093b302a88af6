#include "emulate/microvms/model/request_checks.h"

#include "base/encoding.h"
#include "base/json_fields.h"
#include "base/numbers.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

Status Invalid(std::string message) {
  return InvalidArgument(std::move(message)).WithErrorType("ValidationException");
}

// A type error from JsonFields ("name: expected a string, got an integer") as the service's
// ValidationException.
Status AsValidation(const Status& status) { return Invalid(status.message()); }

Result<std::optional<std::string>> OptionalString(const json& in, const char* field, size_t min,
                                                  size_t max) {
  const JsonFields fields(in, "");
  if (!fields.Has(field)) return std::optional<std::string>();
  Result<std::string> v = fields.String(field);
  if (!v.ok()) return AsValidation(v.status());
  if (v->size() < min || v->size() > max) {
    return Invalid(fields.MemberPath(field) + ": expected " + std::to_string(min) + " to " +
                   std::to_string(max) + " bytes, got " + std::to_string(v->size()));
  }
  return std::optional<std::string>(*std::move(v));
}

Result<std::string> RequiredString(const json& in, const char* field, size_t min, size_t max) {
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(in, field, min, max));
  if (!v) return Invalid(std::string(field) + ": missing (expected a string)");
  return std::move(*v);
}

Result<std::optional<int64_t>> OptionalInt(const json& in, const char* field, int64_t min,
                                           int64_t max) {
  const JsonFields fields(in, "");
  if (!fields.Has(field)) return std::optional<int64_t>();
  const json& j = in[field];
  if (j.is_string()) {  // a query parameter arrives as text
    std::optional<int64_t> parsed = ParseInt64InRange(j.get_ref<const std::string&>(), min, max);
    if (!parsed) {
      return Invalid(fields.MemberPath(field) + ": expected a whole number from " +
                     std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                     j.get<std::string>() + "'");
    }
    return std::optional<int64_t>(*parsed);
  }
  Result<int64_t> v = fields.IntInRange(field, min, max);
  if (!v.ok()) return AsValidation(v.status());
  return std::optional<int64_t>(*v);
}

Result<int64_t> RequiredInt(const json& in, const char* field, int64_t min, int64_t max) {
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(in, field, min, max));
  if (!v) return Invalid(std::string(field) + ": missing (expected an integer)");
  return *v;
}

Result<Page> ReadPage(const json& in) {
  Page page;
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> max, OptionalInt(in, "maxResults", 1, 50));
  if (max) page.max_results = static_cast<size_t>(*max);
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> token, OptionalString(in, "nextToken", 1, 512));
  if (token) {
    Result<std::string> raw = Base64UrlDecode(*token);
    std::optional<int64_t> after;
    if (raw.ok() && raw->rfind("after:", 0) == 0) {
      after = ParseInt64InRange(std::string_view(*raw).substr(6), 0, INT64_MAX);
    }
    const bool good = after.has_value();
    if (!good) return Invalid("nextToken is not a token this service returned");
    page.after = static_cast<uint64_t>(*after);
  }
  return page;
}

std::string NextToken(uint64_t last_sequence) {
  return Base64UrlEncode("after:" + std::to_string(last_sequence));
}

}  // namespace mvr::emulate::microvms
