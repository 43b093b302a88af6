// ServiceModel's input/output validation: walks a JSON value against a shape, checking the
// model's constraint traits, and names the first offending field.
#include <cstdint>
#include <limits>
#include <string>

#include "aws/service_model.h"
#include "aws/service_model_impl.h"
#include "base/encoding.h"
#include "base/numbers.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

// Unicode code points in UTF-8 text: Smithy's @length counts characters, not bytes.
int64_t CodePoints(const std::string& text) {
  int64_t count = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++count;
  }
  return count;
}

const char* JsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

std::string Field(const std::string& path) { return path.empty() ? "(input)" : path; }

Status Fail(const std::string& path, const std::string& what) {
  return InvalidArgument(Field(path) + ": " + what);
}

// Where a member's value came from: location members arrive as strings on the wire.
enum class Origin { kBody, kUri, kQuery, kHeader };

class Validator {
 public:
  explicit Validator(const ServiceModel::Impl& model) : model_(model) {}

  Status Check(std::string_view shape_name, const json& value, const std::string& path,
               Origin origin, const json& member_def) const {
    const json* shape = model_.Shape(shape_name);
    if (shape == nullptr) return Internal("service model has no shape " + std::string(shape_name));
    const std::string type = shape->value("type", "");
    if (type == "structure") return CheckStructure(*shape, value, path);
    if (type == "list") return CheckList(*shape, value, path, origin);
    if (type == "map") return CheckMap(*shape, value, path);
    if (type == "string") return CheckString(*shape, value, path);
    if (type == "integer" || type == "long") return CheckInteger(*shape, type, value, path, origin);
    if (type == "boolean") return CheckBoolean(value, path, origin);
    if (type == "timestamp") return CheckTimestamp(*shape, member_def, value, path, origin);
    if (type == "float" || type == "double") {
      if (value.is_number()) return Status::Ok();
      if (origin != Origin::kBody && value.is_string()) return Status::Ok();
      return Fail(path, std::string("expected a number, got ") + JsonTypeName(value));
    }
    if (type == "blob") {
      if (!value.is_string()) return Fail(path, "expected base64 text");
      if (origin == Origin::kBody && !Base64Decode(value.get<std::string>()).ok()) {
        return Fail(path, "is not valid base64");
      }
      return Status::Ok();
    }
    return Status::Ok();  // document and unknown types: anything goes
  }

  Status CheckStructure(const json& shape, const json& value, const std::string& path,
                        bool top_level = false) const {
    if (!value.is_object()) {
      return Fail(path, std::string("expected an object, got ") + JsonTypeName(value));
    }
    const json& members = shape.value("members", json::object());
    for (const json& required : shape.value("required", json::array())) {
      const std::string name = required.get<std::string>();
      auto it = value.find(name);
      if (it == value.end() || it->is_null()) {
        return Fail(Join(path, name), "required member is missing");
      }
    }
    int set_members = 0;
    std::string names;
    for (const auto& [name, def] : members.items()) {
      names += (names.empty() ? "" : ", ") + name;
      auto it = value.find(name);
      if (it == value.end() || it->is_null()) continue;
      ++set_members;
      Origin origin = Origin::kBody;
      if (top_level) {
        const std::string location = def.value("location", "");
        if (location == "uri") origin = Origin::kUri;
        if (location == "querystring") origin = Origin::kQuery;
        if (location == "header" || location == "headers") origin = Origin::kHeader;
      }
      MVR_RETURN_IF_ERROR(Check(def.value("shape", ""), *it, Join(path, name), origin, def));
    }
    if (shape.value("union", false) && set_members != 1) {
      return Fail(path, "exactly one of " + names + " must be set (got " +
                            std::to_string(set_members) + ")");
    }
    return Status::Ok();
  }

 private:
  static std::string Join(const std::string& path, const std::string& member) {
    return path.empty() ? member : path + "." + member;
  }

  Status CheckCount(const json& shape, size_t count, const std::string& path,
                    const char* unit) const {
    const std::string n = std::to_string(count) + " " + unit;
    if (shape.contains("min") && static_cast<int64_t>(count) < shape["min"].get<int64_t>()) {
      return Fail(path,
                  n + " is below the minimum of " + std::to_string(shape["min"].get<int64_t>()));
    }
    if (shape.contains("max") && static_cast<int64_t>(count) > shape["max"].get<int64_t>()) {
      return Fail(path,
                  n + " exceeds the maximum of " + std::to_string(shape["max"].get<int64_t>()));
    }
    return Status::Ok();
  }

  Status CheckList(const json& shape, const json& value, const std::string& path,
                   Origin origin) const {
    json items = value;
    // A single query parameter may carry a one-element list.
    if (origin != Origin::kBody && !value.is_array()) items = json::array({value});
    if (!items.is_array())
      return Fail(path, std::string("expected a list, got ") + JsonTypeName(value));
    MVR_RETURN_IF_ERROR(CheckCount(shape, items.size(), path, "items"));
    const json& member = shape.value("member", json::object());
    for (size_t i = 0; i < items.size(); ++i) {
      MVR_RETURN_IF_ERROR(Check(member.value("shape", ""), items[i],
                                path + "[" + std::to_string(i) + "]", origin, member));
    }
    return Status::Ok();
  }

  Status CheckMap(const json& shape, const json& value, const std::string& path) const {
    if (!value.is_object())
      return Fail(path, std::string("expected a map, got ") + JsonTypeName(value));
    MVR_RETURN_IF_ERROR(CheckCount(shape, value.size(), path, "entries"));
    const json& key = shape.value("key", json::object());
    const json& val = shape.value("value", json::object());
    for (const auto& [k, v] : value.items()) {
      const std::string entry = path + "[\"" + k + "\"]";
      MVR_RETURN_IF_ERROR(
          Check(key.value("shape", ""), json(k), entry + " (key)", Origin::kBody, key));
      MVR_RETURN_IF_ERROR(Check(val.value("shape", ""), v, entry, Origin::kBody, val));
    }
    return Status::Ok();
  }

  Status CheckString(const json& shape, const json& value, const std::string& path) const {
    if (!value.is_string())
      return Fail(path, std::string("expected a string, got ") + JsonTypeName(value));
    const std::string& text = value.get_ref<const std::string&>();
    const bool sensitive = shape.value("sensitive", false);
    if (shape.contains("enum")) {
      std::string allowed;
      for (const json& e : shape["enum"]) {
        if (e == value) return Status::Ok();
        allowed += (allowed.empty() ? "" : ", ") + e.get<std::string>();
      }
      return Fail(path, (sensitive ? std::string("value") : "\"" + text + "\"") +
                            " is not one of " + allowed);
    }
    const int64_t length = CodePoints(text);
    if (shape.contains("min") && length < shape["min"].get<int64_t>()) {
      return Fail(path, "length " + std::to_string(length) + " is below the minimum of " +
                            std::to_string(shape["min"].get<int64_t>()));
    }
    if (shape.contains("max") && length > shape["max"].get<int64_t>()) {
      return Fail(path, "length " + std::to_string(length) + " exceeds the maximum of " +
                            std::to_string(shape["max"].get<int64_t>()));
    }
    auto pattern = shape.find("pattern");
    if (pattern != shape.end() && pattern->is_string()) {
      auto compiled = model_.patterns.find(pattern->get<std::string>());
      // Bounded input keeps std::regex's recursive matcher cheap.
      if (compiled != model_.patterns.end() && compiled->second && text.size() <= 2048 &&
          !std::regex_search(text, *compiled->second)) {
        return Fail(path, "does not match the pattern " + pattern->get<std::string>());
      }
    }
    return Status::Ok();
  }

  Status CheckInteger(const json& shape, const std::string& type, const json& value,
                      const std::string& path, Origin origin) const {
    int64_t n = 0;
    if (value.is_number_integer()) {
      n = value.get<int64_t>();
    } else if (value.is_number_unsigned()) {
      return Fail(path, "is too large");
    } else if (origin != Origin::kBody && value.is_string()) {
      const std::string& text = value.get_ref<const std::string&>();
      std::optional<int64_t> parsed = ParseInt64(text);
      if (!parsed) return Fail(path, "\"" + text + "\" is not an integer");
      n = *parsed;
    } else {
      return Fail(path, std::string("expected an integer, got ") + JsonTypeName(value));
    }
    if (type == "integer" &&
        (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max())) {
      return Fail(path, std::to_string(n) + " does not fit a 32-bit integer");
    }
    if (shape.contains("min") && n < shape["min"].get<int64_t>()) {
      return Fail(path, std::to_string(n) + " is below the minimum of " +
                            std::to_string(shape["min"].get<int64_t>()));
    }
    if (shape.contains("max") && n > shape["max"].get<int64_t>()) {
      return Fail(path, std::to_string(n) + " exceeds the maximum of " +
                            std::to_string(shape["max"].get<int64_t>()));
    }
    return Status::Ok();
  }

  Status CheckBoolean(const json& value, const std::string& path, Origin origin) const {
    if (value.is_boolean()) return Status::Ok();
    if (origin != Origin::kBody && value.is_string() && (value == "true" || value == "false")) {
      return Status::Ok();
    }
    return Fail(path, std::string("expected a boolean, got ") + JsonTypeName(value));
  }

  Status CheckTimestamp(const json& shape, const json& member_def, const json& value,
                        const std::string& path, Origin origin) const {
    std::string format = member_def.value("timestampFormat", shape.value("timestampFormat", ""));
    if (format.empty()) {
      format = origin == Origin::kHeader ? "rfc822"
               : origin == Origin::kBody ? model_.body_timestamp_format
                                         : "iso8601";
    }
    if (format == "unixTimestamp") {
      if (value.is_number()) return Status::Ok();
      if (origin != Origin::kBody && value.is_string()) return Status::Ok();
      return Fail(path,
                  std::string("expected epoch seconds (a number), got ") + JsonTypeName(value));
    }
    if (!value.is_string())
      return Fail(path, std::string("expected a date string, got ") + JsonTypeName(value));
    if (format == "iso8601" && !ParseRfc3339(value.get<std::string>()).ok()) {
      return Fail(path, "is not an ISO 8601 timestamp");
    }
    return Status::Ok();
  }

  const ServiceModel::Impl& model_;
};

Status ValidateTop(const ServiceModel::Impl& impl, const ServiceModel::Operation* op,
                   std::string_view operation, const std::string& shape_name, const json& value,
                   bool input) {
  if (op == nullptr) return NotFound("the model has no operation " + std::string(operation));
  if (shape_name.empty()) {
    if (value.is_null() || (value.is_object() && value.empty())) return Status::Ok();
    return InvalidArgument(std::string(operation) + " takes no " + (input ? "input" : "output"));
  }
  const json* shape = impl.Shape(shape_name);
  if (shape == nullptr) return Internal("service model has no shape " + shape_name);
  return Validator(impl).CheckStructure(*shape, value, "", /*top_level=*/input);
}

}  // namespace

Status ServiceModel::ValidateInput(std::string_view operation, const nlohmann::json& input) const {
  const Operation* op = FindOperation(operation);
  return ValidateTop(*impl_, op, operation, op ? op->input_shape : "", input, true);
}

Status ServiceModel::ValidateOutput(std::string_view operation,
                                    const nlohmann::json& output) const {
  const Operation* op = FindOperation(operation);
  return ValidateTop(*impl_, op, operation, op ? op->output_shape : "", output, false);
}

Status ServiceModel::ValidateShape(std::string_view shape, const nlohmann::json& value) const {
  return Validator(*impl_).Check(shape, value, "", Origin::kBody, json::object());
}

}  // namespace mvr::aws
