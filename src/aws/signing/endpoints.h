// Where each AWS service mvr calls lives, and how its requests are signed. Resolution follows the
// SDKs' "service-specific endpoints" rules: AWS_ENDPOINT_URL_<SERVICE_ID>, then AWS_ENDPOINT_URL,
// then the profile's `services` section and `endpoint_url`, then the regional default; region from
// AWS_REGION, AWS_DEFAULT_REGION, then the profile's `region`.
// Thread-safety: pure functions over their inputs.
#pragma once

#include <optional>
#include <string>

#include "aws/signing/credentials_profile.h"
#include "base/environment.h"
#include "base/status.h"

namespace mvr::aws {

// kSts and kIam: `mvr doctor`'s identity and permission checks (aws_identity.h). IAM is global:
// its default endpoint is iam.amazonaws.com, signed for us-east-1.
enum class AwsService { kDynamoDb, kSqs, kLambdaMicrovms, kSsm, kS3, kSts, kIam };

// Static facts about a service.
struct ServiceInfo {
  std::string service_id;    // "DYNAMODB": the suffix of AWS_ENDPOINT_URL_<SERVICE_ID>
  std::string config_key;    // "dynamodb": the key inside a `[services x]` config section
  std::string signing_name;  // "dynamodb", "sqs", "lambda"
  std::string host_prefix;   // "dynamodb" → dynamodb.<region>.amazonaws.com
};
const ServiceInfo& InfoFor(AwsService service);

// What a client needs to reach a service: the small struct every AWS client takes.
struct ServiceEndpoint {
  std::string url;           // "https://dynamodb.us-east-1.amazonaws.com" (no trailing slash)
  std::string region;        // signing region
  std::string signing_name;  // SigV4 service name
  std::string source;        // where the URL came from, for logs ("AWS_ENDPOINT_URL_SQS", ...)
};

// The region: AWS_REGION, AWS_DEFAULT_REGION, then `region` of the selected profile.
// InvalidArgument naming all three when none is set.
Result<std::string> ResolveRegion(const Environment& env, const SharedConfig& config);

// The regional default URL ("https://sqs.eu-west-1.amazonaws.com"; amazonaws.com.cn in China).
std::string DefaultEndpointUrl(AwsService service, const std::string& region);

// Full resolution. `region_override`, when set, wins over the environment and profile (an Action
// input, a CLI flag). AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (env or profile
// `ignore_configured_endpoint_urls`) skips every configured URL, as in the SDKs.
Result<ServiceEndpoint> ResolveEndpoint(
    AwsService service, const Environment& env, const SharedConfig& config,
    const std::optional<std::string>& region_override = std::nullopt);

}  // namespace mvr::aws
