#include "aws/services/sqs.h"
#include "base/numbers.h"

#include <algorithm>
#include <charconv>

namespace mvr::aws {
namespace {

Status RequireUrl(const std::string& queue_url, const char* op) {
  if (queue_url.rfind("http://", 0) != 0 && queue_url.rfind("https://", 0) != 0) {
    return InvalidArgument(std::string(op) + ": queue URL must be an http(s) URL, got '" +
                           queue_url + "' (use GetQueueUrl to find it from a name)");
  }
  return Status::Ok();
}

Status RequireRange(int value, int lo, int hi, const char* what, const char* op) {
  if (value < lo || value > hi) {
    return InvalidArgument(std::string(op) + ": " + what + " must be " + std::to_string(lo) + "-" +
                           std::to_string(hi) + ", got " + std::to_string(value));
  }
  return Status::Ok();
}

Status RequireBatch(size_t n, const char* op) {
  if (n == 0 || n > 10) {
    return InvalidArgument(std::string(op) + ": needs 1-10 entries, got " + std::to_string(n));
  }
  return Status::Ok();
}

std::string StringOr(const nlohmann::json& obj, const char* key, std::string fallback = "") {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

Result<BatchResult> ParseBatch(const nlohmann::json& body, const char* op, bool with_ids) {
  BatchResult out;
  if (auto ok = body.find("Successful"); ok != body.end()) {
    if (!ok->is_array()) return Internal(std::string(op) + ": Successful is not an array");
    for (const auto& e : *ok) {
      std::string id = StringOr(e, "Id");
      if (id.empty()) return Internal(std::string(op) + ": a Successful entry has no Id");
      out.succeeded[id] = with_ids ? StringOr(e, "MessageId") : "";
    }
  }
  if (auto bad = body.find("Failed"); bad != body.end()) {
    if (!bad->is_array()) return Internal(std::string(op) + ": Failed is not an array");
    for (const auto& e : *bad) {
      BatchFailure f;
      f.id = StringOr(e, "Id");
      f.code = StringOr(e, "Code");
      f.message = StringOr(e, "Message");
      if (e.is_object()) {
        auto sf = e.find("SenderFault");
        f.sender_fault = sf != e.end() && sf->is_boolean() && sf->get<bool>();
      }
      out.failed.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

SqsClient::SqsClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                     CredentialsProvider& credentials, Seam seam)
    : SqsClient(endpoint, http, credentials, seam, Options()) {}

SqsClient::SqsClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
                     CredentialsProvider& credentials, Seam seam, Options options)
    : rpc_(JsonService(endpoint, "AmazonSQS", options.timeout, options.retry), http, credentials,
           seam) {}

Result<std::string> SqsClient::SendMessage(const SendMessageRequest& request) {
  MVR_RETURN_IF_ERROR(RequireUrl(request.queue_url, "SendMessage"));
  MVR_RETURN_IF_ERROR(RequireRange(request.delay_seconds, 0, 900, "delay", "SendMessage"));
  if (request.body.empty()) return InvalidArgument("SendMessage: message body is empty");
  nlohmann::json req = {{"QueueUrl", request.queue_url}, {"MessageBody", request.body}};
  if (request.delay_seconds > 0) req["DelaySeconds"] = request.delay_seconds;
  MVR_ASSIGN_OR_RETURN(nlohmann::json body, BodyOrStatus(rpc_.Call("SendMessage", req)));
  std::string id = StringOr(body, "MessageId");
  if (id.empty()) return Internal("SendMessage: answer has no MessageId");
  return id;
}

Result<BatchResult> SqsClient::SendMessageBatch(const std::string& queue_url,
                                                const std::vector<SendBatchEntry>& entries) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "SendMessageBatch"));
  MVR_RETURN_IF_ERROR(RequireBatch(entries.size(), "SendMessageBatch"));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) {
    MVR_RETURN_IF_ERROR(RequireRange(e.delay_seconds, 0, 900, "delay", "SendMessageBatch"));
    nlohmann::json entry = {{"Id", e.id}, {"MessageBody", e.body}};
    if (e.delay_seconds > 0) entry["DelaySeconds"] = e.delay_seconds;
    list.push_back(entry);
  }
  MVR_ASSIGN_OR_RETURN(
      nlohmann::json body,
      BodyOrStatus(rpc_.Call("SendMessageBatch", {{"QueueUrl", queue_url}, {"Entries", list}})));
  return ParseBatch(body, "SendMessageBatch", true);
}

Result<std::vector<SqsMessage>> SqsClient::ReceiveMessage(const ReceiveMessageRequest& request) {
  MVR_RETURN_IF_ERROR(RequireUrl(request.queue_url, "ReceiveMessage"));
  MVR_RETURN_IF_ERROR(RequireRange(request.max_messages, 1, 10, "max messages", "ReceiveMessage"));
  MVR_RETURN_IF_ERROR(
      RequireRange(request.wait_time_seconds, 0, 20, "wait time", "ReceiveMessage"));
  nlohmann::json req = {{"QueueUrl", request.queue_url},
                        {"MaxNumberOfMessages", request.max_messages},
                        {"WaitTimeSeconds", request.wait_time_seconds}};
  if (request.visibility_timeout) {
    MVR_RETURN_IF_ERROR(RequireRange(*request.visibility_timeout, 0, 43'200, "visibility timeout",
                                     "ReceiveMessage"));
    req["VisibilityTimeout"] = *request.visibility_timeout;
  }
  std::vector<std::string> names = request.attribute_names;
  if (std::find(names.begin(), names.end(), "ApproximateReceiveCount") == names.end() &&
      std::find(names.begin(), names.end(), "All") == names.end()) {
    names.push_back("ApproximateReceiveCount");
  }
  // Only here: botocore's model types the deprecated AttributeNames as queue attribute names
  // (Policy, QueueArn, ...), which ApproximateReceiveCount is not.
  req["MessageSystemAttributeNames"] = names;
  Duration timeout = rpc_.config().timeout + Duration(request.wait_time_seconds * 1000);
  MVR_ASSIGN_OR_RETURN(nlohmann::json body,
                       BodyOrStatus(rpc_.Call("ReceiveMessage", req, std::nullopt, timeout)));
  std::vector<SqsMessage> out;
  auto messages = body.find("Messages");
  if (messages == body.end() || messages->is_null()) return out;
  if (!messages->is_array()) return Internal("ReceiveMessage: Messages is not an array");
  for (const auto& m : *messages) {
    if (!m.is_object()) return Internal("ReceiveMessage: a message is not an object");
    SqsMessage msg;
    msg.message_id = StringOr(m, "MessageId");
    msg.receipt_handle = StringOr(m, "ReceiptHandle");
    msg.body = StringOr(m, "Body");
    if (msg.message_id.empty() || msg.receipt_handle.empty()) {
      return Internal("ReceiveMessage: a message lacks MessageId or ReceiptHandle");
    }
    if (auto attrs = m.find("Attributes"); attrs != m.end() && attrs->is_object()) {
      for (const auto& [k, v] : attrs->items()) {
        if (v.is_string()) msg.attributes[k] = v.get<std::string>();
      }
    }
    if (auto rc = msg.attributes.find("ApproximateReceiveCount"); rc != msg.attributes.end()) {
      std::optional<int64_t> n = ParseInt64InRange(rc->second, 0, INT32_MAX);
      if (!n) return Internal("ReceiveMessage: ApproximateReceiveCount is not a number");
      msg.receive_count = static_cast<int>(*n);
    }
    out.push_back(std::move(msg));
  }
  return out;
}

Status SqsClient::DeleteMessage(const std::string& queue_url, const std::string& receipt_handle) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "DeleteMessage"));
  if (receipt_handle.empty()) return InvalidArgument("DeleteMessage: receipt handle is empty");
  return rpc_.Call("DeleteMessage", {{"QueueUrl", queue_url}, {"ReceiptHandle", receipt_handle}})
      .status;
}

Result<BatchResult> SqsClient::DeleteMessageBatch(const std::string& queue_url,
                                                  const std::vector<DeleteBatchEntry>& entries) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "DeleteMessageBatch"));
  MVR_RETURN_IF_ERROR(RequireBatch(entries.size(), "DeleteMessageBatch"));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) list.push_back({{"Id", e.id}, {"ReceiptHandle", e.receipt_handle}});
  MVR_ASSIGN_OR_RETURN(
      nlohmann::json body,
      BodyOrStatus(rpc_.Call("DeleteMessageBatch", {{"QueueUrl", queue_url}, {"Entries", list}})));
  return ParseBatch(body, "DeleteMessageBatch", false);
}

Status SqsClient::ChangeMessageVisibility(const std::string& queue_url,
                                          const std::string& receipt_handle,
                                          int visibility_timeout_seconds) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "ChangeMessageVisibility"));
  MVR_RETURN_IF_ERROR(RequireRange(visibility_timeout_seconds, 0, 43'200, "visibility timeout",
                                   "ChangeMessageVisibility"));
  return rpc_
      .Call("ChangeMessageVisibility", {{"QueueUrl", queue_url},
                                        {"ReceiptHandle", receipt_handle},
                                        {"VisibilityTimeout", visibility_timeout_seconds}})
      .status;
}

Result<std::map<std::string, std::string>> SqsClient::GetQueueAttributes(
    const std::string& queue_url, const std::vector<std::string>& names) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "GetQueueAttributes"));
  MVR_ASSIGN_OR_RETURN(nlohmann::json body,
                       BodyOrStatus(rpc_.Call("GetQueueAttributes", {{"QueueUrl", queue_url},
                                                                     {"AttributeNames", names}})));
  std::map<std::string, std::string> out;
  auto attrs = body.find("Attributes");
  if (attrs == body.end()) return out;
  if (!attrs->is_object()) return Internal("GetQueueAttributes: Attributes is not an object");
  for (const auto& [k, v] : attrs->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

Result<std::string> SqsClient::GetQueueUrl(const std::string& queue_name) {
  if (queue_name.empty() || queue_name.size() > 80) {
    return InvalidArgument("GetQueueUrl: queue name must be 1-80 characters");
  }
  MVR_ASSIGN_OR_RETURN(nlohmann::json body,
                       BodyOrStatus(rpc_.Call("GetQueueUrl", {{"QueueName", queue_name}})));
  std::string url = StringOr(body, "QueueUrl");
  if (url.empty()) return Internal("GetQueueUrl: answer has no QueueUrl");
  return url;
}

Result<std::string> SqsClient::CreateQueue(const std::string& queue_name,
                                           const std::map<std::string, std::string>& attributes) {
  if (queue_name.empty() || queue_name.size() > 80) {
    return InvalidArgument("CreateQueue: queue name must be 1-80 characters");
  }
  nlohmann::json req = {{"QueueName", queue_name}};
  if (!attributes.empty()) req["Attributes"] = attributes;
  MVR_ASSIGN_OR_RETURN(nlohmann::json body, BodyOrStatus(rpc_.Call("CreateQueue", req)));
  std::string url = StringOr(body, "QueueUrl");
  if (url.empty()) return Internal("CreateQueue: answer has no QueueUrl");
  return url;
}

Status SqsClient::DeleteQueue(const std::string& queue_url) {
  MVR_RETURN_IF_ERROR(RequireUrl(queue_url, "DeleteQueue"));
  return rpc_.Call("DeleteQueue", {{"QueueUrl", queue_url}}).status;
}

}  // namespace mvr::aws
