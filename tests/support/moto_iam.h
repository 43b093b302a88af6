// moto with IAM enforced, for tests that run a component with the credentials of its own policy
// (deploy/iam/*.json, filled by tests/support/iam_documents.h):
//
//   auto moto = MotoServer::Start(EnforcingMotoOptions(MVR_SOURCE_DIR));
//   MotoIam iam(moto->url());                         // set-up runs unauthenticated...
//   auto admin = iam.CreateUser("admin", AllowAll());  // ...create tables, queues, users
//   auto key = iam.CreateUser("action-pool", policy);
//   iam.Enforce();                                    // from here every request is checked
//
// EnforcingMotoOptions loads tests/support/moto_iam/sitecustomize.py into moto_server (through
// PYTHONPATH): moto 5.2.1 evaluates DynamoDB and SSM requests against the resource "*", so a
// policy naming its table or parameter would be refused everything; the shim gives them their
// real ARNs (and TransactWriteItems its per-item actions), see docs/iam.md.
// Header-only (tests/support is not a library). Thread-safety: one owner.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "aws/signing/credentials.h"
#include "aws/signing/sigv4.h"
#include "base/clock.h"
#include "base/json_text.h"
#include "http/curl_client.h"
#include "support/moto.h"

namespace mvr::testing {

inline MotoServer::Options EnforcingMotoOptions(const std::string& source_dir) {
  MotoServer::Options options;
  // Unauthenticated until Enforce() (moto's own default is "never enforce").
  options.env["INITIAL_NO_AUTH_ACTION_COUNT"] = "inf";
  options.env["PYTHONPATH"] = source_dir + "/tests/support/moto_iam";
  return options;
}

inline nlohmann::json AllowAll() {
  return {{"Version", "2012-10-17"},
          {"Statement", {{{"Effect", "Allow"}, {"Action", "*"}, {"Resource", "*"}}}}};
}

class MotoIam {
 public:
  explicit MotoIam(std::string url) : url_(std::move(url)) {}

  // An IAM user with `policy` inline (none when it has no statement left) and a fresh access key
  // (moto's answer). Before Enforce().
  Result<aws::AwsCredentials> CreateUser(const std::string& name, const nlohmann::json& policy) {
    MVR_RETURN_IF_ERROR(Iam({{"Action", "CreateUser"}, {"UserName", name}}).status());
    // A policy left with no statement cannot be created (IAM refuses it): the user holds none.
    if (!policy.value("Statement", nlohmann::json::array()).empty()) {
      MVR_RETURN_IF_ERROR(Iam({{"Action", "PutUserPolicy"},
                               {"UserName", name},
                               {"PolicyName", name},
                               {"PolicyDocument", JsonText(policy)}})
                              .status());
    }
    MVR_ASSIGN_OR_RETURN(std::string xml, Iam({{"Action", "CreateAccessKey"}, {"UserName", name}}));
    aws::AwsCredentials c;
    c.access_key_id = Between(xml, "AccessKeyId");
    c.secret_access_key = Secret(Between(xml, "SecretAccessKey"));
    c.source = "moto user " + name;
    if (c.access_key_id.empty()) return Internal("moto's CreateAccessKey gave no key: " + xml);
    return c;
  }

  // From now on moto checks every request's signature and policies (moto's reset-auth: the
  // INITIAL_NO_AUTH_ACTION_COUNT of the running server set to 0).
  Status Enforce() {
    http::HttpRequest req;
    req.method = "POST";
    req.url = url_ + "/moto-api/reset-auth";
    req.body = "0";
    MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, http_.Send(req));
    if (resp.status != 200) return Internal("moto reset-auth answered " + resp.body);
    return Status::Ok();
  }

 private:
  Result<std::string> Iam(std::vector<std::pair<std::string, std::string>> params) {
    params.emplace_back("Version", "2010-05-08");
    http::HttpRequest req;
    req.method = "POST";
    req.url = url_ + "/";
    req.headers.Set("Content-Type", "application/x-www-form-urlencoded");
    req.body = http::BuildQuery(params);
    aws::AwsCredentials setup{"AKIDIAMSETUP", Secret("iam-setup-secret"), Secret(), {}, "test"};
    MVR_RETURN_IF_ERROR(
        aws::SignRequest(req, setup, aws::SigningScope{"us-east-1", "iam"}, clock_.Now()));
    MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, http_.Send(req));
    if (resp.status != 200) return Internal("moto IAM " + params[0].second + ": " + resp.body);
    return resp.body;
  }
  static std::string Between(const std::string& xml, const std::string& tag) {
    const size_t start = xml.find("<" + tag + ">");
    if (start == std::string::npos) return "";
    const size_t from = start + tag.size() + 2;
    return xml.substr(from, xml.find("</" + tag + ">", from) - from);
  }

  std::string url_;
  SystemClock clock_;
  http::CurlHttpClient http_;
};

}  // namespace mvr::testing
