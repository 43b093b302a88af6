// XML request payloads (rest-xml) read into the JSON form ServiceModel validates: a small parser of
// the XML AWS clients send (elements, text, entities; attributes, comments and the declaration
// skipped) and a walk of the parsed tree along a shape of the model, so that a structure's members,
// flattened and wrapped lists and typed scalars come out as ValidateInput expects them.
// Thread-safety: free functions, no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mvr::aws {

struct XmlElement {
  std::string name;  // without a namespace prefix
  std::string text;  // the element's own character data, entities decoded
  std::vector<XmlElement> children;
};

// The document's root element. InvalidArgument naming the offset when it is not well formed.
Result<XmlElement> ParseXml(std::string_view text);

// `element` read as a value of shape `shape` of `model` (a service-2.json document): structures
// become objects keyed by member name (found by locationName, or the member name), lists arrays,
// integers and longs numbers, booleans true/false; text that does not parse as its type stays a
// string, so that validation names it.
nlohmann::json XmlToJson(const nlohmann::json& model, const std::string& shape,
                         const XmlElement& element);

}  // namespace mvr::aws
