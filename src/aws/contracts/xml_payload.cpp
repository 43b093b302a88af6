// The XML reader behind rest-xml payload validation. It reads what AWS clients write: no DTDs, no
// processing instructions other than the declaration, no CDATA beyond plain text.
#include "aws/contracts/xml_payload.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "base/numbers.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

class XmlReader {
 public:
  explicit XmlReader(std::string_view text) : text_(text) {}

  Result<XmlElement> Document() {
    SkipProlog();
    if (!At('<')) return Error("expected the root element");
    MVR_ASSIGN_OR_RETURN(XmlElement root, Element(0));
    SkipProlog();
    if (pos_ != text_.size()) return Error("text after the root element");
    return root;
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument("XML payload: " + what + " at offset " + std::to_string(pos_));
  }
  bool At(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool StartsWith(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }
  // Whitespace, the declaration and comments around the root element.
  void SkipProlog() {
    for (;;) {
      SkipSpace();
      if (StartsWith("<?") || StartsWith("<!--")) {
        const bool comment = StartsWith("<!--");
        size_t end = text_.find(comment ? "-->" : "?>", pos_);
        pos_ = end == std::string_view::npos ? text_.size() : end + (comment ? 3 : 2);
        continue;
      }
      return;
    }
  }

  std::string Name() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '>' && text_[pos_] != '/' && text_[pos_] != ' ' &&
           text_[pos_] != '\t' && text_[pos_] != '\n' && text_[pos_] != '\r') {
      ++pos_;
    }
    std::string_view name = text_.substr(start, pos_ - start);
    size_t colon = name.find(':');
    if (colon != std::string_view::npos) name.remove_prefix(colon + 1);
    return std::string(name);
  }

  Result<XmlElement> Element(int depth) {
    if (depth > 64) return Error("elements nested deeper than 64");
    ++pos_;  // '<'
    XmlElement element;
    element.name = Name();
    if (element.name.empty()) return Error("expected an element name");
    size_t close = text_.find('>', pos_);  // attributes are skipped
    if (close == std::string_view::npos) return Error("unterminated start tag");
    const bool empty = close > 0 && text_[close - 1] == '/';
    pos_ = close + 1;
    if (empty) return element;
    for (;;) {
      if (pos_ >= text_.size()) return Error("unterminated element <" + element.name + ">");
      if (StartsWith("</")) {
        pos_ += 2;
        std::string name = Name();
        SkipSpace();
        if (name != element.name || !At('>')) {
          return Error("</" + name + "> does not close <" + element.name + ">");
        }
        ++pos_;
        return element;
      }
      if (StartsWith("<!--")) {
        size_t end = text_.find("-->", pos_);
        if (end == std::string_view::npos) return Error("unterminated comment");
        pos_ = end + 3;
      } else if (At('<')) {
        MVR_ASSIGN_OR_RETURN(XmlElement child, Element(depth + 1));
        element.children.push_back(std::move(child));
      } else {
        MVR_RETURN_IF_ERROR(Text(element.text));
      }
    }
  }

  Status Text(std::string& out) {
    while (pos_ < text_.size() && text_[pos_] != '<') {
      if (text_[pos_] != '&') {
        out += text_[pos_++];
        continue;
      }
      size_t semi = text_.find(';', pos_);
      if (semi == std::string_view::npos) return Error("unterminated entity");
      std::string_view entity = text_.substr(pos_ + 1, semi - pos_ - 1);
      MVR_RETURN_IF_ERROR(Entity(entity, out));
      pos_ = semi + 1;
    }
    return Status::Ok();
  }

  Status Entity(std::string_view entity, std::string& out) const {
    if (entity == "amp")
      out += '&';
    else if (entity == "lt")
      out += '<';
    else if (entity == "gt")
      out += '>';
    else if (entity == "quot")
      out += '"';
    else if (entity == "apos")
      out += '\'';
    else if (!entity.empty() && entity.front() == '#') {
      const bool hex = entity.size() > 1 && entity[1] == 'x';
      std::optional<int64_t> code = hex ? std::nullopt : ParseInt64(std::string(entity.substr(1)));
      if (hex) {
        int64_t v = 0;
        for (char c : entity.substr(2)) {
          int d =
              std::isxdigit(static_cast<unsigned char>(c))
                  ? (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 32) - 'a' + 10)
                  : -1;
          if (d < 0 || v > 0x10FFFF) return Error("bad character reference");
          v = v * 16 + d;
        }
        code = v;
      }
      if (!code || *code <= 0 || *code > 0x10FFFF) return Error("bad character reference");
      AppendUtf8(static_cast<uint32_t>(*code), out);
    } else {
      return Error("unknown entity &" + std::string(entity) + ";");
    }
    return Status::Ok();
  }

  static void AppendUtf8(uint32_t c, std::string& out) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

const json& ShapeOf(const json& model, const std::string& name) {
  static const json kNone = json::object();
  auto shapes = model.find("shapes");
  if (shapes == model.end()) return kNone;
  auto it = shapes->find(name);
  return it == shapes->end() ? kNone : *it;
}

json Scalar(const std::string& type, const std::string& text) {
  if (type == "integer" || type == "long") {
    if (auto n = ParseInt64(text)) return *n;
  } else if (type == "boolean") {
    if (text == "true") return true;
    if (text == "false") return false;
  } else if (type == "float" || type == "double") {
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size()) return d;
  }
  return text;
}

// The elements of a list: a flattened list's are `elements` named `name`; a wrapped list's are
// the children of the one element named `name`.
json ListFrom(const json& model, const json& list_shape,
              const std::vector<const XmlElement*>& items) {
  json out = json::array();
  const std::string member = list_shape.value("member", json::object()).value("shape", "");
  for (const XmlElement* item : items) out.push_back(XmlToJson(model, member, *item));
  return out;
}

json StructureFrom(const json& model, const json& shape, const XmlElement& element) {
  json out = json::object();
  const json members = shape.value("members", json::object());
  for (const auto& [name, def] : members.items()) {
    const std::string member_shape = def.value("shape", "");
    const json& target = ShapeOf(model, member_shape);
    const bool flattened = target.value("type", "") == "list" && target.value("flattened", false);
    std::string element_name = def.value("locationName", "");
    if (element_name.empty() && flattened) {
      element_name = target.value("member", json::object()).value("locationName", "");
    }
    if (element_name.empty()) element_name = name;
    std::vector<const XmlElement*> found;
    for (const XmlElement& child : element.children) {
      if (child.name == element_name) found.push_back(&child);
    }
    if (found.empty()) continue;
    if (flattened) {
      out[name] = ListFrom(model, target, found);
    } else {
      out[name] = XmlToJson(model, member_shape, *found.front());
    }
  }
  return out;
}

}  // namespace

Result<XmlElement> ParseXml(std::string_view text) { return XmlReader(text).Document(); }

json XmlToJson(const json& model, const std::string& shape_name, const XmlElement& element) {
  const json& shape = ShapeOf(model, shape_name);
  const std::string type = shape.value("type", "");
  if (type == "structure") return StructureFrom(model, shape, element);
  if (type == "list") {
    std::vector<const XmlElement*> items;
    for (const XmlElement& child : element.children) items.push_back(&child);
    return ListFrom(model, shape, items);
  }
  if (type == "map") {
    json out = json::object();
    for (const XmlElement& entry : element.children) {
      std::string key;
      const XmlElement* value = nullptr;
      for (const XmlElement& part : entry.children) {
        if (part.name == "key") key = part.text;
        if (part.name == "value") value = &part;
      }
      if (value != nullptr) {
        out[key] = XmlToJson(model, shape["value"].value("shape", ""), *value);
      }
    }
    return out;
  }
  return Scalar(type, element.text);
}

}  // namespace mvr::aws
