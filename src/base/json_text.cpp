#include "base/json_text.h"

namespace mvr {

std::string JsonText(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mvr
