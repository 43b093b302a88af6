// Parsing, routing and bindings of a service model. Validation lives in
// service_model_validator.cpp.
#include "aws/microvms/service_model.h"

#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "aws/microvms/service_model_impl.h"
#include "base/encoding.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  if (!path.empty() && path.front() == '/') start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::vector<ServiceModel::Impl::RouteSegment> ParseTemplate(std::string_view uri, int* literals) {
  std::vector<ServiceModel::Impl::RouteSegment> segments;
  *literals = 0;
  for (std::string_view part : SplitPath(uri.substr(0, uri.find('?')))) {
    ServiceModel::Impl::RouteSegment segment;
    if (part.size() >= 2 && part.front() == '{' && part.back() == '}') {
      std::string_view name = part.substr(1, part.size() - 2);
      segment.label = true;
      if (!name.empty() && name.back() == '+') {
        segment.greedy = true;
        name.remove_suffix(1);
      }
      segment.text = std::string(name);
    } else {
      segment.text = std::string(part);
      ++*literals;
    }
    segments.push_back(std::move(segment));
  }
  return segments;
}

// Matches `parts` against one route; fills `labels` (decoded) on success.
bool MatchRoute(const ServiceModel::Impl::RouteEntry& route,
                const std::vector<std::string_view>& parts,
                std::map<std::string, std::string>& labels) {
  size_t i = 0;
  for (size_t s = 0; s < route.segments.size(); ++s) {
    const auto& segment = route.segments[s];
    if (segment.greedy) {
      if (i >= parts.size()) return false;
      std::string rest;
      for (size_t j = i; j < parts.size(); ++j) {
        if (j > i) rest += '/';
        rest += parts[j];
      }
      if (rest.empty()) return false;
      auto decoded = UriDecode(rest);
      if (!decoded.ok()) return false;
      labels[segment.text] = *decoded;
      return s + 1 == route.segments.size();
    }
    if (i >= parts.size()) return false;
    if (segment.label) {
      if (parts[i].empty()) return false;
      auto decoded = UriDecode(parts[i]);
      if (!decoded.ok()) return false;
      labels[segment.text] = *decoded;
    } else if (parts[i] != segment.text) {
      return false;
    }
    ++i;
  }
  return i == parts.size();
}

void CompilePatterns(const json& shapes,
                     std::map<std::string, std::shared_ptr<const std::regex>, std::less<>>& out) {
  for (const auto& [name, shape] : shapes.items()) {
    auto it = shape.find("pattern");
    if (it == shape.end() || !it->is_string()) continue;
    const std::string pattern = it->get<std::string>();
    if (out.count(pattern)) continue;
    std::shared_ptr<const std::regex> compiled;
    // ECMAScript in std::regex has no Unicode property classes; those patterns go unchecked.
    if (pattern.find("\\p{") == std::string::npos) {
      try {
        compiled = std::make_shared<const std::regex>(pattern, std::regex::ECMAScript);
      } catch (const std::regex_error&) {
        compiled = nullptr;
      }
    }
    out.emplace(pattern, std::move(compiled));
  }
}

// "/{Bucket}?list-type=2&x" -> {"list-type", "2"}, {"x", nullopt}.
std::vector<std::pair<std::string, std::optional<std::string>>> QueryLiterals(
    std::string_view uri) {
  std::vector<std::pair<std::string, std::optional<std::string>>> literals;
  size_t question = uri.find('?');
  if (question == std::string_view::npos) return literals;
  std::string_view query = uri.substr(question + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    size_t eq = part.find('=');
    if (!part.empty()) {
      if (eq == std::string_view::npos) {
        literals.emplace_back(std::string(part), std::nullopt);
      } else {
        literals.emplace_back(std::string(part.substr(0, eq)), std::string(part.substr(eq + 1)));
      }
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return literals;
}

bool HasParam(const std::vector<std::pair<std::string, std::string>>& params,
              const std::string& name, const std::optional<std::string>& value) {
  for (const auto& [k, v] : params) {
    if (k == name && (!value || v == *value)) return true;
  }
  return false;
}

// Of the operation's required querystring and header members, how many `params`/`headers` carry
// (first) and how many they lack (second).
std::pair<int, int> RequiredLocationMembers(
    const json* input, const std::vector<std::pair<std::string, std::string>>& params,
    const std::vector<std::string>& header_names) {
  std::pair<int, int> counts{0, 0};
  if (input == nullptr) return counts;
  const json members = input->value("members", json::object());
  for (const json& required : input->value("required", json::array())) {
    auto it = members.find(required.get<std::string>());
    if (it == members.end()) continue;
    const std::string location = it->value("location", "");
    const std::string name = it->value("locationName", it.key());
    bool present = false;
    if (location == "querystring") {
      present = HasParam(params, name, std::nullopt);
    } else if (location == "header") {
      for (const std::string& h : header_names)
        present = present || AsciiLower(h) == AsciiLower(name);
    } else {
      continue;
    }
    ++(present ? counts.first : counts.second);
  }
  return counts;
}

}  // namespace

const json* ServiceModel::Impl::Shape(std::string_view name) const {
  const json& shapes = raw["shapes"];
  auto it = shapes.find(std::string(name));
  if (it == shapes.end() || !it->is_object()) return nullptr;
  return &*it;
}

ServiceModel::ServiceModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ServiceModel::ServiceModel(ServiceModel&&) noexcept = default;
ServiceModel& ServiceModel::operator=(ServiceModel&&) noexcept = default;
ServiceModel::~ServiceModel() = default;

const ServiceModel& ServiceModel::LambdaMicrovms() {
  // Parsed once; the embedded text is part of the build, so a failure is a programmer error.
  static const ServiceModel kModel = [] {
    auto parsed = Parse(EmbeddedLambdaMicrovmsModel());
    if (!parsed.ok())
      throw std::logic_error("embedded MicroVMs model: " + parsed.status().message());
    return std::move(parsed).value();
  }();
  return kModel;
}

Result<ServiceModel> ServiceModel::Parse(std::string_view text) {
  auto impl = std::make_unique<Impl>();
  impl->raw = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (impl->raw.is_discarded() || !impl->raw.is_object()) {
    return InvalidArgument("service model is not a JSON object");
  }
  const json& ops = impl->raw["operations"];
  const json& shapes = impl->raw["shapes"];
  if (!ops.is_object() || !shapes.is_object()) {
    return InvalidArgument("service model lacks \"operations\" or \"shapes\"");
  }
  for (const auto& [name, op] : ops.items()) {
    Operation operation;
    operation.name = name;
    const json& http = op.value("http", json::object());
    operation.method = http.value("method", "");
    std::string uri = http.value("requestUri", "");
    operation.request_uri = uri.substr(0, uri.find('?'));
    operation.query_literals = QueryLiterals(uri);
    operation.success_code = http.value("responseCode", 200);
    if (op.contains("input")) operation.input_shape = op["input"].value("shape", "");
    if (op.contains("output")) operation.output_shape = op["output"].value("shape", "");
    for (const json& error : op.value("errors", json::array())) {
      operation.errors.push_back(error.value("shape", ""));
    }
    for (const std::string* shape : {&operation.input_shape, &operation.output_shape}) {
      if (!shape->empty() && !shapes.contains(*shape)) {
        return InvalidArgument("service model: operation " + name + " names unknown shape " +
                               *shape);
      }
    }
    if (operation.method.empty() || uri.empty()) {
      return InvalidArgument("service model: operation " + name + " lacks http method or uri");
    }
    impl->operations.emplace(name, std::move(operation));
  }
  for (const auto& [name, operation] : impl->operations) {
    Impl::RouteEntry route;
    route.operation = &operation;
    route.segments = ParseTemplate(operation.request_uri, &route.literal_count);
    impl->routes.push_back(std::move(route));
  }
  CompilePatterns(shapes, impl->patterns);
  const json metadata = impl->raw.value("metadata", json::object());
  impl->protocol = metadata.is_object() ? metadata.value("protocol", "") : "";
  if (impl->protocol == "rest-xml" || impl->protocol == "query" || impl->protocol == "ec2") {
    impl->body_timestamp_format = "iso8601";
  }
  impl->compiled = CompileShapes(*impl);
  return ServiceModel(std::move(impl));
}

const ServiceModel::Operation* ServiceModel::FindOperation(std::string_view name) const {
  auto it = impl_->operations.find(name);
  return it == impl_->operations.end() ? nullptr : &it->second;
}

const ServiceModel::Operation* ServiceModel::Route(
    std::string_view method, std::string_view path,
    std::map<std::string, std::string>* labels) const {
  const auto parts = SplitPath(path.substr(0, path.find('?')));
  const Impl::RouteEntry* best = nullptr;
  std::map<std::string, std::string> best_labels;
  for (const auto& route : impl_->routes) {
    if (route.operation->method != method) continue;
    std::map<std::string, std::string> found;
    if (!MatchRoute(route, parts, found)) continue;
    if (best == nullptr || route.literal_count > best->literal_count) {
      best = &route;
      best_labels = std::move(found);
    }
  }
  if (best == nullptr) return nullptr;
  if (labels != nullptr) *labels = std::move(best_labels);
  return best->operation;
}

const ServiceModel::Operation* ServiceModel::RouteWithQuery(
    std::string_view method, std::string_view path,
    const std::vector<std::pair<std::string, std::string>>& params,
    const std::vector<std::string>& header_names,
    std::map<std::string, std::string>* labels) const {
  const auto parts = SplitPath(path.substr(0, path.find('?')));
  const Impl::RouteEntry* best = nullptr;
  std::tuple<size_t, int, int, int> best_score{0, 0, 0, 0};
  std::map<std::string, std::string> best_labels;
  for (const auto& route : impl_->routes) {
    const Operation& op = *route.operation;
    if (op.method != method) continue;
    bool literals_present = true;
    for (const auto& [name, value] : op.query_literals) {
      literals_present = literals_present && HasParam(params, name, value);
    }
    if (!literals_present) continue;
    std::map<std::string, std::string> found;
    if (!MatchRoute(route, parts, found)) continue;
    const auto [present, missing] =
        RequiredLocationMembers(impl_->Shape(op.input_shape), params, header_names);
    std::tuple<size_t, int, int, int> score{op.query_literals.size(), present, -missing,
                                            route.literal_count};
    if (best == nullptr || score > best_score) {
      best = &route;
      best_score = score;
      best_labels = std::move(found);
    }
  }
  if (best == nullptr) return nullptr;
  if (labels != nullptr) *labels = std::move(best_labels);
  return best->operation;
}

const std::string& ServiceModel::protocol() const { return impl_->protocol; }

std::vector<ServiceModel::Binding> ServiceModel::InputBindings(std::string_view operation) const {
  std::vector<Binding> bindings;
  const Operation* op = FindOperation(operation);
  if (op == nullptr || op->input_shape.empty()) return bindings;
  const json* shape = impl_->Shape(op->input_shape);
  if (shape == nullptr) return bindings;
  const json members = shape->value("members", json::object());
  for (const auto& [member, def] : members.items()) {
    Binding binding;
    binding.member = member;
    binding.location = def.value("location", "body");
    binding.location_name = def.value("locationName", member);
    bindings.push_back(std::move(binding));
  }
  return bindings;
}

int ServiceModel::ErrorStatus(std::string_view error_shape) const {
  const json* shape = impl_->Shape(error_shape);
  if (shape == nullptr || !shape->value("exception", false)) return 0;
  auto error = shape->find("error");
  if (error == shape->end() || !error->is_object()) return 0;
  return error->value("httpStatusCode", 0);
}

std::vector<std::string> ServiceModel::IdempotencyTokenMembers(std::string_view operation) const {
  std::vector<std::string> members;
  const Operation* op = FindOperation(operation);
  if (op == nullptr || op->input_shape.empty()) return members;
  const json* shape = impl_->Shape(op->input_shape);
  if (shape == nullptr) return members;
  const json defs = shape->value("members", json::object());
  for (const auto& [member, def] : defs.items()) {
    if (def.value("idempotencyToken", false)) members.push_back(member);
  }
  return members;
}

const nlohmann::json& ServiceModel::raw() const { return impl_->raw; }

}  // namespace mvr::aws
