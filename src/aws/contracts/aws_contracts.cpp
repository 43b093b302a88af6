// AwsContracts: routing a wire request to its service and operation, and binding its input (JSON
// body, or S3's labels, query, headers and XML payload) for ServiceModel's validator.
#include "aws/contracts/aws_contracts.h"

#include <unistd.h>
#include <zlib.h>

#include <utility>

#include "aws/contracts/xml_payload.h"
#include "base/encoding.h"
#include "base/files.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

Result<std::string> ReadGzipFile(const std::string& path) {
  gzFile file = ::gzopen(path.c_str(), "rb");
  if (file == nullptr) return InvalidArgument("cannot open " + path);
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = ::gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  const bool failed = n < 0;
  ::gzclose(file);
  if (failed) return InvalidArgument("cannot decompress " + path);
  return text;
}

// The service of a SigV4 credential scope "AKID/20260101/us-east-1/s3/aws4_request", from the
// Authorization header or a presigned URL's X-Amz-Credential; empty when unsigned.
std::string SigningService(const WireRequest& request) {
  std::string credential;
  std::string auth = request.headers.GetOr("Authorization", "");
  size_t at = auth.find("Credential=");
  if (at != std::string::npos) {
    credential = auth.substr(at + 11, auth.find_first_of(", ", at) - at - 11);
  } else {
    for (const auto& [k, v] : http::ParseQuery(request.query)) {
      if (k == "X-Amz-Credential") credential = v;
    }
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= credential.size()) {
    size_t slash = credential.find('/', start);
    if (slash == std::string::npos) slash = credential.size();
    parts.push_back(credential.substr(start, slash - start));
    start = slash + 1;
  }
  return parts.size() == 5 ? parts[3] : std::string();
}

ContractVerdict Breach(const ContractService& service, const std::string& operation,
                       const std::string& what) {
  ContractVerdict v;
  v.service = service.name;
  v.operation = operation;
  v.checked = true;
  v.status = InvalidArgument(service.name + " " +
                             (operation.empty() ? "(no operation)" : operation) + ": " + what);
  return v;
}

const json& MemberShape(const ServiceModel& model, const std::string& shape) {
  static const json kNone = json::object();
  const json& shapes = model.raw()["shapes"];
  auto it = shapes.find(shape);
  return it == shapes.end() ? kNone : *it;
}

// The input members S3 carries outside its payload: URI labels, query parameters and headers.
json BindLocations(const ServiceModel& model, const ServiceModel::Operation& op,
                   const std::map<std::string, std::string>& labels, const WireRequest& request) {
  json input = json::object();
  const auto params = http::ParseQuery(request.query);
  const json& members = MemberShape(model, op.input_shape).value("members", json::object());
  for (const ServiceModel::Binding& b : model.InputBindings(op.name)) {
    const std::string shape = members[b.member].value("shape", "");
    const bool list = MemberShape(model, shape).value("type", "") == "list";
    if (b.location == "uri") {
      auto it = labels.find(b.location_name);
      if (it != labels.end()) input[b.member] = it->second;
    } else if (b.location == "querystring") {
      json values = json::array();
      for (const auto& [k, v] : params) {
        if (k == b.location_name) values.push_back(v);
      }
      if (!values.empty()) input[b.member] = list ? values : values[0];
    } else if (b.location == "header") {
      if (auto v = request.headers.Get(b.location_name)) input[b.member] = *v;
    } else if (b.location == "headers") {  // a prefix map: x-amz-meta-*
      json map = json::object();
      const std::string prefix = AsciiLower(b.location_name);
      for (const auto& [k, v] : request.headers) {
        std::string name = AsciiLower(k);
        if (name.rfind(prefix, 0) == 0) map[name.substr(prefix.size())] = v;
      }
      if (!map.empty()) input[b.member] = map;
    }
  }
  return input;
}

// The XML payload (a structure payload member, or the body members) merged into `input`.
Status BindXmlPayload(const ServiceModel& model, const ServiceModel::Operation& op,
                      const std::string& body, json& input) {
  const json& shape = MemberShape(model, op.input_shape);
  const std::string payload = shape.value("payload", "");
  const json members = shape.value("members", json::object());
  if (body.empty()) return Status::Ok();
  if (!payload.empty()) {
    const json& def = members[payload];
    const std::string payload_shape = def.value("shape", "");
    if (MemberShape(model, payload_shape).value("type", "") != "structure") {
      return Status::Ok();  // a blob or string payload: the bytes themselves, unconstrained
    }
    MVR_ASSIGN_OR_RETURN(XmlElement root, ParseXml(body));
    const std::string root_name = def.value("locationName", payload_shape);
    if (root.name != root_name) {
      return InvalidArgument(payload + ": the XML root element is <" + root.name +
                             ">, the model's is <" + root_name + ">");
    }
    input[payload] = XmlToJson(model.raw(), payload_shape, root);
    return Status::Ok();
  }
  MVR_ASSIGN_OR_RETURN(XmlElement root, ParseXml(body));
  json fields = XmlToJson(model.raw(), op.input_shape, root);
  for (const auto& [name, value] : fields.items()) {
    if (members[name].value("location", "").empty()) input[name] = value;
  }
  return Status::Ok();
}

}  // namespace

const std::vector<ContractService>& CheckedServices() {
  static const std::vector<ContractService> kServices = {
      {"dynamodb", "2012-08-10", "DynamoDB_20120810", "1.0", "json"},
      {"sqs", "2012-11-05", "AmazonSQS", "1.0", "json"},
      {"ssm", "2014-11-06", "AmazonSSM", "1.1", "json"},
      {"s3", "2006-03-01", "", "", "rest-xml"},
  };
  return kServices;
}

namespace {

std::string ModelPath(const std::string& data_dir, const std::string& service,
                      const std::string& api_version) {
  return data_dir + "/" + service + "/" + api_version + "/service-2.json";
}

Status NoModel(const std::string& service, const std::string& api_version,
               const std::string& path) {
  return NotFound("no botocore model of " + service + " " + api_version + " at " + path +
                  "[.gz]; install awscli (apt-get install awscli) or point at a botocore data "
                  "directory");
}

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

}  // namespace

Result<ServiceModel> LoadBotocoreModel(const std::string& data_dir, const std::string& service,
                                       const std::string& api_version) {
  const std::string path = ModelPath(data_dir, service, api_version);
  Result<std::string> text = NotFound("");
  if (Readable(path)) {
    text = ReadFile(path, "botocore model");
  } else if (Readable(path + ".gz")) {
    text = ReadGzipFile(path + ".gz");
  } else {
    return NoModel(service, api_version, path);
  }
  if (!text.ok()) return text.status();
  auto model = ServiceModel::Parse(*text);
  if (!model.ok()) return InvalidArgument(path + ": " + model.status().message());
  return model;
}

AwsContracts::AwsContracts(std::string data_dir) : data_dir_(std::move(data_dir)) {}

Result<const ServiceModel*> AwsContracts::Model(const ContractService& service) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(service.name);
    if (it != models_.end()) return it->second.get();
  }
  // Read without the lock; two first requests at once may both read, and the first one kept wins.
  MVR_ASSIGN_OR_RETURN(ServiceModel model,
                       LoadBotocoreModel(data_dir_, service.name, service.api_version));
  const std::string& protocol = model.protocol();
  const bool sqs_query = service.name == "sqs" && protocol == "query";
  if (protocol != service.protocol && !sqs_query) {
    return InvalidArgument("the botocore model of " + service.name + " speaks " + protocol +
                           ", not " + service.protocol + " as mvr does");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.emplace(service.name, std::make_unique<ServiceModel>(std::move(model))).first;
  return it->second.get();
}

Status AwsContracts::LoadAll() const {
  for (const ContractService& service : CheckedServices()) {
    MVR_RETURN_IF_ERROR(Model(service).status());
  }
  return Status::Ok();
}

Status AwsContracts::ModelsPresent() const {
  for (const ContractService& service : CheckedServices()) {
    const std::string path = ModelPath(data_dir_, service.name, service.api_version);
    if (!Readable(path) && !Readable(path + ".gz")) {
      return NoModel(service.name, service.api_version, path);
    }
  }
  return Status::Ok();
}

ContractVerdict AwsContracts::Check(const WireRequest& request) const {
  if (auto target = request.headers.Get("X-Amz-Target")) {
    const size_t dot = target->rfind('.');
    const std::string prefix = target->substr(0, dot == std::string::npos ? 0 : dot);
    for (const ContractService& service : CheckedServices()) {
      if (!service.target_prefix.empty() && service.target_prefix == prefix) {
        return CheckJson(service, target->substr(dot + 1), request);
      }
    }
  }
  const std::string signing = SigningService(request);
  for (const ContractService& service : CheckedServices()) {
    if (service.name != signing) continue;
    if (service.protocol == "rest-xml") return CheckRestXml(service, request);
    return Breach(
        service, "",
        "a JSON-protocol request without X-Amz-Target " + service.target_prefix + ".<Operation>");
  }
  ContractVerdict unchecked;
  unchecked.service = signing.empty() ? "unsigned" : signing;
  return unchecked;
}

ContractVerdict AwsContracts::CheckJson(const ContractService& service,
                                        const std::string& operation,
                                        const WireRequest& request) const {
  auto model = Model(service);
  if (!model.ok()) return Breach(service, operation, model.status().message());
  if ((*model)->FindOperation(operation) == nullptr) {
    return Breach(service, operation, "the model has no such operation");
  }
  if (request.method != "POST" || request.raw_path != "/") {
    return Breach(service, operation,
                  "sent as " + request.method + " " + request.raw_path + ", not POST /");
  }
  const std::string want = "application/x-amz-json-" + service.json_version;
  std::string type = request.headers.GetOr("Content-Type", "");
  type = type.substr(0, type.find(';'));
  if (type != want) {
    return Breach(service, operation, "Content-Type is \"" + type + "\", not " + want);
  }
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return Breach(service, operation, "the body is not a JSON object");
  }
  ContractVerdict verdict;
  verdict.service = service.name;
  verdict.operation = operation;
  verdict.checked = true;
  Status status = (*model)->ValidateInput(operation, body);
  if (!status.ok()) return Breach(service, operation, status.message());
  return verdict;
}

ContractVerdict AwsContracts::CheckRestXml(const ContractService& service,
                                           const WireRequest& request) const {
  auto model = Model(service);
  if (!model.ok()) return Breach(service, "", model.status().message());
  std::map<std::string, std::string> labels;
  std::vector<std::string> header_names;
  for (const auto& [name, value] : request.headers) header_names.push_back(name);
  const ServiceModel::Operation* op = (*model)->RouteWithQuery(
      request.method, request.raw_path, http::ParseQuery(request.query), header_names, &labels);
  if (op == nullptr) {
    return Breach(service, "",
                  "no operation of the model is " + request.method + " " + request.raw_path +
                      (request.query.empty() ? "" : "?" + request.query));
  }
  json input = BindLocations(**model, *op, labels, request);
  Status status = BindXmlPayload(**model, *op, request.body, input);
  if (status.ok()) status = (*model)->ValidateInput(op->name, input);
  if (!status.ok()) return Breach(service, op->name, status.message());
  ContractVerdict verdict;
  verdict.service = service.name;
  verdict.operation = op->name;
  verdict.checked = true;
  return verdict;
}

}  // namespace mvr::aws
