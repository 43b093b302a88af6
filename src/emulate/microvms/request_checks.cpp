#include "emulate/microvms/request_checks.h"

#include <charconv>

#include "base/encoding.h"
#include "base/numbers.h"

namespace mvr::emulate::microvms {

using nlohmann::json;

Status Invalid(std::string message) {
  return InvalidArgument(std::move(message)).WithErrorType("ValidationException");
}

Result<std::optional<std::string>> OptionalString(const json& in, const char* field, size_t min,
                                                  size_t max) {
  if (!in.contains(field) || in[field].is_null()) return std::optional<std::string>();
  if (!in[field].is_string()) return Invalid(std::string(field) + " must be a string");
  std::string v = in[field].get<std::string>();
  if (v.size() < min || v.size() > max) {
    return Invalid(std::string(field) + " must be " + std::to_string(min) + " to " +
                   std::to_string(max) + " bytes long (got " + std::to_string(v.size()) + ")");
  }
  return std::optional<std::string>(std::move(v));
}

Result<std::string> RequiredString(const json& in, const char* field, size_t min, size_t max) {
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> v, OptionalString(in, field, min, max));
  if (!v) return Invalid(std::string(field) + " is required");
  return std::move(*v);
}

Result<std::optional<int64_t>> OptionalInt(const json& in, const char* field, int64_t min,
                                           int64_t max) {
  if (!in.contains(field) || in[field].is_null()) return std::optional<int64_t>();
  const json& j = in[field];
  int64_t v = 0;
  if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else if (j.is_string()) {
    std::optional<int64_t> parsed = ParseInt64(j.get_ref<const std::string&>());
    if (!parsed) return Invalid(std::string(field) + " must be an integer");
    v = *parsed;
  } else {
    return Invalid(std::string(field) + " must be an integer");
  }
  if (v < min || v > max) {
    return Invalid(std::string(field) + " must be from " + std::to_string(min) + " to " +
                   std::to_string(max) + " (got " + std::to_string(v) + ")");
  }
  return std::optional<int64_t>(v);
}

Result<int64_t> RequiredInt(const json& in, const char* field, int64_t min, int64_t max) {
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(in, field, min, max));
  if (!v) return Invalid(std::string(field) + " is required");
  return *v;
}

Result<Page> ReadPage(const json& in) {
  Page page;
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> max, OptionalInt(in, "maxResults", 1, 50));
  if (max) page.max_results = static_cast<size_t>(*max);
  MVR_ASSIGN_OR_RETURN(std::optional<std::string> token, OptionalString(in, "nextToken", 1, 512));
  if (token) {
    Result<std::string> raw = Base64UrlDecode(*token);
    uint64_t after = 0;
    bool good = raw.ok() && raw->rfind("after:", 0) == 0;
    if (good) {
      const std::string digits = raw->substr(6);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), after);
      good = ec == std::errc() && end == digits.data() + digits.size();
    }
    if (!good) return Invalid("nextToken is not a token this service returned");
    page.after = after;
  }
  return page;
}

std::string NextToken(uint64_t last_sequence) {
  return Base64UrlEncode("after:" + std::to_string(last_sequence));
}

}  // namespace mvr::emulate::microvms
