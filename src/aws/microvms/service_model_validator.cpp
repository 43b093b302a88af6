// ServiceModel's input/output validation: walks a JSON value against a shape, checking the
// model's constraint traits, and names the first offending field.
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "aws/microvms/service_model.h"
#include "aws/microvms/service_model_impl.h"
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

// The string at `shape[key]`, or "" (no copy: validation runs on every emulator answer).
const std::string& StringAt(const json& shape, const char* key) {
  static const std::string kEmpty;
  auto it = shape.find(key);
  return it != shape.end() && it->is_string() ? it->get_ref<const std::string&>() : kEmpty;
}

// The object or array at `shape[key]`, or an empty one.
const json& ChildAt(const json& shape, const char* key, json::value_t type) {
  static const json kEmptyObject = json::object();
  static const json kEmptyArray = json::array();
  auto it = shape.find(key);
  if (it != shape.end() && it->type() == type) return *it;
  return type == json::value_t::array ? kEmptyArray : kEmptyObject;
}

std::string Field(const std::string& path) { return path.empty() ? "(input)" : path; }

// A field's path, built as a chain on the stack and spelled out only for an error message
// ("allowedPorts[0].range", "tags[\"k\"] (key)"): a valid answer allocates no path text.
struct Path {
  enum class Step { kRoot, kMember, kIndex, kKey, kKeyItself };
  const Path* parent = nullptr;
  Step step = Step::kRoot;
  std::string_view name;  // the member's name or the map's key
  size_t index = 0;

  Path Member(std::string_view member) const { return {this, Step::kMember, member, 0}; }
  Path Index(size_t i) const { return {this, Step::kIndex, {}, i}; }
  Path Key(std::string_view key) const { return {this, Step::kKey, key, 0}; }
  Path KeyItself(std::string_view key) const { return {this, Step::kKeyItself, key, 0}; }

  std::string Text() const {
    if (step == Step::kRoot) return "";
    std::string text = parent->Text();
    switch (step) {
      case Step::kMember:
        return text.empty() ? std::string(name) : text + "." + std::string(name);
      case Step::kIndex:
        return text + "[" + std::to_string(index) + "]";
      case Step::kKey:
        return text + "[\"" + std::string(name) + "\"]";
      default:
        return text + "[\"" + std::string(name) + "\"] (key)";
    }
  }
};

Status Fail(const Path& path, const std::string& what) {
  return InvalidArgument(Field(path.Text()) + ": " + what);
}

std::optional<int64_t> BoundOf(const json& shape, const char* key) {
  auto it = shape.find(key);
  if (it == shape.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

// Where a member's value came from: location members arrive as strings on the wire.
enum class Origin { kBody, kUri, kQuery, kHeader };

// A shape with its traits read and its references resolved.
struct CompiledShape;

// A reference to a shape from a member, a list's member or a map's key or value.
struct ShapeRef {
  std::string name;                      // the shape's name
  const CompiledShape* shape = nullptr;  // nullptr: the model has no such shape
  std::string timestamp_format;          // the reference's own timestampFormat trait
  Origin origin = Origin::kBody;         // where a top-level input member travels
};

struct CompiledShape {
  enum class Kind {
    kStructure,
    kList,
    kMap,
    kString,
    kInteger,
    kBoolean,
    kTimestamp,
    kNumber,
    kBlob,
    kOther
  };
  Kind kind = Kind::kOther;
  std::string type;  // "integer" or "long" for kInteger
  std::optional<int64_t> min, max;
  // kStructure: the members in the model's order, the required names, and the union trait.
  std::vector<std::pair<std::string, ShapeRef>> members;
  std::vector<std::string> required;
  bool is_union = false;
  ShapeRef member, key, value;  // kList's member, kMap's key and value
  // kString
  std::optional<std::vector<std::string>> enums;
  bool sensitive = false;
  std::string pattern;                // the pattern's text
  const std::regex* regex = nullptr;  // nullptr: no pattern, or one std::regex cannot express
  std::string timestamp_format;       // kTimestamp's own trait
};

struct CompiledShapes {
  std::unordered_map<std::string, CompiledShape> by_name;
  std::string body_timestamp_format;
  const CompiledShape* Find(std::string_view name) const {
    auto it = by_name.find(std::string(name));
    return it == by_name.end() ? nullptr : &it->second;
  }
};

namespace {

ShapeRef RefOf(const json& def, const std::unordered_map<std::string, CompiledShape>& shapes) {
  ShapeRef ref;
  ref.name = StringAt(def, "shape");
  auto it = shapes.find(ref.name);
  ref.shape = it == shapes.end() ? nullptr : &it->second;
  ref.timestamp_format = StringAt(def, "timestampFormat");
  const std::string& location = StringAt(def, "location");
  if (location == "uri") ref.origin = Origin::kUri;
  if (location == "querystring") ref.origin = Origin::kQuery;
  if (location == "header" || location == "headers") ref.origin = Origin::kHeader;
  return ref;
}

CompiledShape::Kind KindOf(const std::string& type) {
  using Kind = CompiledShape::Kind;
  if (type == "structure") return Kind::kStructure;
  if (type == "list") return Kind::kList;
  if (type == "map") return Kind::kMap;
  if (type == "string") return Kind::kString;
  if (type == "integer" || type == "long") return Kind::kInteger;
  if (type == "boolean") return Kind::kBoolean;
  if (type == "timestamp") return Kind::kTimestamp;
  if (type == "float" || type == "double") return Kind::kNumber;
  if (type == "blob") return Kind::kBlob;
  return Kind::kOther;  // document and unknown types: anything goes
}

class Validator {
 public:
  explicit Validator(const CompiledShapes& shapes) : shapes_(shapes) {}

  Status Check(const ShapeRef& ref, const json& value, const Path& path, Origin origin) const {
    if (ref.shape == nullptr) return Internal("service model has no shape " + ref.name);
    const CompiledShape& shape = *ref.shape;
    using Kind = CompiledShape::Kind;
    switch (shape.kind) {
      case Kind::kStructure:
        return CheckStructure(shape, value, path, false);
      case Kind::kList:
        return CheckList(shape, value, path, origin);
      case Kind::kMap:
        return CheckMap(shape, value, path);
      case Kind::kString:
        return CheckString(shape, value, path);
      case Kind::kInteger:
        return CheckInteger(shape, value, path, origin);
      case Kind::kBoolean:
        return CheckBoolean(value, path, origin);
      case Kind::kTimestamp:
        return CheckTimestamp(shape, ref, value, path, origin);
      case Kind::kNumber:
        if (value.is_number()) return Status::Ok();
        if (origin != Origin::kBody && value.is_string()) return Status::Ok();
        return Fail(path, std::string("expected a number, got ") + JsonTypeName(value));
      case Kind::kBlob:
        if (!value.is_string()) return Fail(path, "expected base64 text");
        if (origin == Origin::kBody && !Base64Decode(value.get_ref<const std::string&>()).ok()) {
          return Fail(path, "is not valid base64");
        }
        return Status::Ok();
      case Kind::kOther:
        break;
    }
    return Status::Ok();
  }

  // `top_level`: the members are an operation's input, some of which travel outside the body.
  Status CheckStructure(const CompiledShape& shape, const json& value, const Path& path,
                        bool top_level) const {
    if (!value.is_object()) {
      return Fail(path, std::string("expected an object, got ") + JsonTypeName(value));
    }
    for (const std::string& name : shape.required) {
      auto it = value.find(name);
      if (it == value.end() || it->is_null()) {
        return Fail(path.Member(name), "required member is missing");
      }
    }
    int set_members = 0;
    for (const auto& [name, ref] : shape.members) {
      auto it = value.find(name);
      if (it == value.end() || it->is_null()) continue;
      ++set_members;
      MVR_RETURN_IF_ERROR(
          Check(ref, *it, path.Member(name), top_level ? ref.origin : Origin::kBody));
    }
    if (shape.is_union && set_members != 1) {
      std::string names;
      for (const auto& [name, ref] : shape.members) names += (names.empty() ? "" : ", ") + name;
      return Fail(path, "exactly one of " + names + " must be set (got " +
                            std::to_string(set_members) + ")");
    }
    return Status::Ok();
  }

 private:
  static Status CheckCount(const CompiledShape& shape, size_t count, const Path& path,
                           const char* unit) {
    const auto n = static_cast<int64_t>(count);
    if (shape.min && n < *shape.min) {
      return Fail(path, std::to_string(count) + " " + unit + " is below the minimum of " +
                            std::to_string(*shape.min));
    }
    if (shape.max && n > *shape.max) {
      return Fail(path, std::to_string(count) + " " + unit + " exceeds the maximum of " +
                            std::to_string(*shape.max));
    }
    return Status::Ok();
  }

  Status CheckList(const CompiledShape& shape, const json& value, const Path& path,
                   Origin origin) const {
    // A single query parameter may carry a one-element list.
    json wrapped;
    if (origin != Origin::kBody && !value.is_array()) wrapped = json::array({value});
    const json& items = wrapped.is_null() ? value : wrapped;
    if (!items.is_array())
      return Fail(path, std::string("expected a list, got ") + JsonTypeName(value));
    MVR_RETURN_IF_ERROR(CheckCount(shape, items.size(), path, "items"));
    for (size_t i = 0; i < items.size(); ++i) {
      MVR_RETURN_IF_ERROR(Check(shape.member, items[i], path.Index(i), origin));
    }
    return Status::Ok();
  }

  Status CheckMap(const CompiledShape& shape, const json& value, const Path& path) const {
    if (!value.is_object())
      return Fail(path, std::string("expected a map, got ") + JsonTypeName(value));
    MVR_RETURN_IF_ERROR(CheckCount(shape, value.size(), path, "entries"));
    for (const auto& [k, v] : value.items()) {
      MVR_RETURN_IF_ERROR(Check(shape.key, json(k), path.KeyItself(k), Origin::kBody));
      MVR_RETURN_IF_ERROR(Check(shape.value, v, path.Key(k), Origin::kBody));
    }
    return Status::Ok();
  }

  static Status CheckString(const CompiledShape& shape, const json& value, const Path& path) {
    if (!value.is_string())
      return Fail(path, std::string("expected a string, got ") + JsonTypeName(value));
    const std::string& text = value.get_ref<const std::string&>();
    if (shape.enums) {
      std::string allowed;
      for (const std::string& e : *shape.enums) {
        if (e == text) return Status::Ok();
        allowed += (allowed.empty() ? "" : ", ") + e;
      }
      return Fail(path, (shape.sensitive ? std::string("value") : "\"" + text + "\"") +
                            " is not one of " + allowed);
    }
    const int64_t length = CodePoints(text);
    if (shape.min && length < *shape.min) {
      return Fail(path, "length " + std::to_string(length) + " is below the minimum of " +
                            std::to_string(*shape.min));
    }
    if (shape.max && length > *shape.max) {
      return Fail(path, "length " + std::to_string(length) + " exceeds the maximum of " +
                            std::to_string(*shape.max));
    }
    // Bounded input keeps std::regex's recursive matcher cheap.
    if (shape.regex != nullptr && text.size() <= 2048 && !std::regex_search(text, *shape.regex)) {
      return Fail(path, "does not match the pattern " + shape.pattern);
    }
    return Status::Ok();
  }

  static Status CheckInteger(const CompiledShape& shape, const json& value, const Path& path,
                             Origin origin) {
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
    if (shape.type == "integer" &&
        (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max())) {
      return Fail(path, std::to_string(n) + " does not fit a 32-bit integer");
    }
    if (shape.min && n < *shape.min) {
      return Fail(path,
                  std::to_string(n) + " is below the minimum of " + std::to_string(*shape.min));
    }
    if (shape.max && n > *shape.max) {
      return Fail(path,
                  std::to_string(n) + " exceeds the maximum of " + std::to_string(*shape.max));
    }
    return Status::Ok();
  }

  static Status CheckBoolean(const json& value, const Path& path, Origin origin) {
    if (value.is_boolean()) return Status::Ok();
    if (origin != Origin::kBody && value.is_string() && (value == "true" || value == "false")) {
      return Status::Ok();
    }
    return Fail(path, std::string("expected a boolean, got ") + JsonTypeName(value));
  }

  Status CheckTimestamp(const CompiledShape& shape, const ShapeRef& ref, const json& value,
                        const Path& path, Origin origin) const {
    std::string_view format =
        !ref.timestamp_format.empty() ? ref.timestamp_format : shape.timestamp_format;
    if (format.empty()) {
      format = origin == Origin::kHeader ? "rfc822"
               : origin == Origin::kBody ? std::string_view(shapes_.body_timestamp_format)
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
    if (format == "iso8601" && !ParseRfc3339(value.get_ref<const std::string&>()).ok()) {
      return Fail(path, "is not an ISO 8601 timestamp");
    }
    return Status::Ok();
  }

  const CompiledShapes& shapes_;
};

Status ValidateTop(const ServiceModel::Impl& impl, const ServiceModel::Operation* op,
                   std::string_view operation, const std::string& shape_name, const json& value,
                   bool input) {
  if (op == nullptr) return NotFound("the model has no operation " + std::string(operation));
  if (shape_name.empty()) {
    if (value.is_null() || (value.is_object() && value.empty())) return Status::Ok();
    return InvalidArgument(std::string(operation) + " takes no " + (input ? "input" : "output"));
  }
  const CompiledShape* shape = impl.compiled->Find(shape_name);
  if (shape == nullptr) return Internal("service model has no shape " + shape_name);
  return Validator(*impl.compiled).CheckStructure(*shape, value, Path{}, /*top_level=*/input);
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
  const ShapeRef ref{std::string(shape), impl_->compiled->Find(shape), "", Origin::kBody};
  return Validator(*impl_->compiled).Check(ref, value, Path{}, Origin::kBody);
}

std::shared_ptr<const CompiledShapes> CompileShapes(const ServiceModel::Impl& impl) {
  auto out = std::make_shared<CompiledShapes>();
  out->body_timestamp_format = impl.body_timestamp_format;
  const json& shapes = impl.raw["shapes"];
  for (const auto& [name, def] : shapes.items()) {
    if (def.is_object()) out->by_name.emplace(name, CompiledShape{});
  }
  // The map's nodes stay put as it is filled in, so the references can point at them.
  for (auto& [name, shape] : out->by_name) {
    const json& def = shapes[name];
    shape.type = StringAt(def, "type");
    shape.kind = KindOf(shape.type);
    shape.min = BoundOf(def, "min");
    shape.max = BoundOf(def, "max");
    for (const auto& [member, member_def] :
         ChildAt(def, "members", json::value_t::object).items()) {
      shape.members.emplace_back(member, RefOf(member_def, out->by_name));
    }
    for (const json& required : ChildAt(def, "required", json::value_t::array)) {
      if (required.is_string()) shape.required.push_back(required.get<std::string>());
    }
    auto is_union = def.find("union");
    shape.is_union = is_union != def.end() && is_union->is_boolean() && is_union->get<bool>();
    shape.member = RefOf(ChildAt(def, "member", json::value_t::object), out->by_name);
    shape.key = RefOf(ChildAt(def, "key", json::value_t::object), out->by_name);
    shape.value = RefOf(ChildAt(def, "value", json::value_t::object), out->by_name);
    auto enums = def.find("enum");
    if (enums != def.end()) {
      shape.enums.emplace();
      for (const json& e : *enums) {
        if (e.is_string()) shape.enums->push_back(e.get<std::string>());
      }
    }
    auto sensitive = def.find("sensitive");
    shape.sensitive = sensitive != def.end() && sensitive->is_boolean() && sensitive->get<bool>();
    shape.pattern = StringAt(def, "pattern");
    auto regex = impl.patterns.find(shape.pattern);
    if (!shape.pattern.empty() && regex != impl.patterns.end()) shape.regex = regex->second.get();
    shape.timestamp_format = StringAt(def, "timestampFormat");
  }
  return out;
}

}  // namespace mvr::aws
