// AwsContracts: botocore's own models of the AWS services mvr calls (DynamoDB, SQS, SSM, S3), read
// at run time from an installed awscli/botocore, and the check of one HTTP request, as sent on the
// wire, against its service's model: which service (X-Amz-Target, or the SigV4 credential scope),
// which operation (the target, or S3's method + path + query), and whether the input fits.
// Used in front of moto by the tests (tests/support/moto.h) so that every request the project
// sends is held to AWS's contract, not to moto's leniency.
// Thread-safety: Check is const and safe from many threads; models load lazily under a mutex.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "aws/microvms/service_model.h"
#include "base/status.h"
#include "http/types.h"

namespace mvr::aws {

// Where Debian's awscli package keeps botocore's models.
inline constexpr std::string_view kAwscliBotocoreData =
    "/usr/lib/python3/dist-packages/awscli/botocore/data";

// A service whose requests are checked: its botocore directory, API version and, for the JSON
// protocol, the X-Amz-Target prefix and the Content-Type version mvr's client sends.
struct ContractService {
  std::string name;           // "dynamodb": the botocore directory and the SigV4 signing name
  std::string api_version;    // "2012-08-10"
  std::string target_prefix;  // "DynamoDB_20120810"; empty for rest-xml
  std::string json_version;   // "1.0"; empty for rest-xml
  std::string protocol;       // what mvr speaks to it: "json" or "rest-xml"
};
// DynamoDB, SQS (its JSON form), SSM and S3.
const std::vector<ContractService>& CheckedServices();

// <data_dir>/<service>/<api_version>/service-2.json, or the same with .gz. NotFound when neither
// exists; InvalidArgument when it does not parse.
Result<ServiceModel> LoadBotocoreModel(const std::string& data_dir, const std::string& service,
                                       const std::string& api_version);

// One request as it arrived: the raw (still percent-encoded) path and the raw query.
struct WireRequest {
  std::string method;
  std::string raw_path;
  std::string query;
  http::Headers headers;
  std::string body;
};

struct ContractVerdict {
  std::string service;    // "dynamodb", "s3", ...; the signing name of an unchecked service
  std::string operation;  // empty when the request names none
  bool checked = false;   // false: a service with no model here (IAM, STS, moto's own API)
  Status status;          // InvalidArgument "<service> <Operation>: <field>: <what>" on a breach
};

class AwsContracts {
 public:
  // Models are read from `data_dir` on first use of each service.
  explicit AwsContracts(std::string data_dir);
  // Errors: NotFound/InvalidArgument when a model cannot be read; InvalidArgument also when a
  // model's metadata.protocol is not the one mvr speaks to the service (SQS's query model is
  // accepted for its JSON form: the two models share every shape and member name).
  Status LoadAll() const;
  // Only that every model file exists (cheap; the models load on first use). NotFound naming the
  // first one missing.
  Status ModelsPresent() const;
  ContractVerdict Check(const WireRequest& request) const;

 private:
  Result<const ServiceModel*> Model(const ContractService& service) const;
  ContractVerdict CheckJson(const ContractService& service, const std::string& operation,
                            const WireRequest& request) const;
  ContractVerdict CheckRestXml(const ContractService& service, const WireRequest& request) const;

  std::string data_dir_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::unique_ptr<ServiceModel>> models_;  // by service name
};

}  // namespace mvr::aws
