#include "aws/signing/endpoints.h"

#include <cctype>

#include "http/types.h"

namespace mvr::aws {
namespace {

bool IsTrue(const std::string& v) { return v == "true" || v == "TRUE" || v == "True" || v == "1"; }

bool ValidRegion(const std::string& region) {
  if (region.empty() || region.size() > 63) return false;
  for (char c : region) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return region.front() != '-' && region.back() != '-';
}

std::string StripSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

const ServiceInfo& InfoFor(AwsService service) {
  static const ServiceInfo kDynamo{"DYNAMODB", "dynamodb", "dynamodb", "dynamodb"};
  static const ServiceInfo kSqs{"SQS", "sqs", "sqs", "sqs"};
  static const ServiceInfo kMicrovms{"LAMBDA_MICROVMS", "lambda_microvms", "lambda", "lambda"};
  static const ServiceInfo kSsm{"SSM", "ssm", "ssm", "ssm"};
  static const ServiceInfo kS3{"S3", "s3", "s3", "s3"};
  static const ServiceInfo kSts{"STS", "sts", "sts", "sts"};
  static const ServiceInfo kIam{"IAM", "iam", "iam", "iam"};
  switch (service) {
    case AwsService::kDynamoDb:
      return kDynamo;
    case AwsService::kSqs:
      return kSqs;
    case AwsService::kLambdaMicrovms:
      return kMicrovms;
    case AwsService::kSsm:
      return kSsm;
    case AwsService::kS3:
      return kS3;
    case AwsService::kSts:
      return kSts;
    case AwsService::kIam:
      return kIam;
  }
  return kDynamo;
}

Result<std::string> ResolveRegion(const Environment& env, const SharedConfig& config) {
  std::string region = env.GetOr("AWS_REGION", "");
  std::string from = "AWS_REGION";
  if (region.empty()) {
    region = env.GetOr("AWS_DEFAULT_REGION", "");
    from = "AWS_DEFAULT_REGION";
  }
  if (region.empty()) {
    region = config.Get("region").value_or("");
    from = "region in profile " + config.profile_name;
  }
  if (region.empty()) {
    return InvalidArgument(
        "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or region in "
        "profile " +
        config.profile_name + " of " + config.config_path + ")");
  }
  if (!ValidRegion(region)) {
    return InvalidArgument("AWS region '" + region + "' (from " + from +
                           ") is not a region name like us-east-1");
  }
  return region;
}

std::string DefaultEndpointUrl(AwsService service, const std::string& region) {
  std::string suffix = region.rfind("cn-", 0) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
  if (service == AwsService::kIam) return "https://iam." + suffix;
  return "https://" + InfoFor(service).host_prefix + "." + region + "." + suffix;
}

Result<ServiceEndpoint> ResolveEndpoint(AwsService service, const Environment& env,
                                        const SharedConfig& config,
                                        const std::optional<std::string>& region_override) {
  const ServiceInfo& info = InfoFor(service);
  ServiceEndpoint out;
  out.signing_name = info.signing_name;
  if (region_override && !region_override->empty()) {
    if (!ValidRegion(*region_override)) {
      return InvalidArgument("AWS region '" + *region_override +
                             "' is not a region name like us-east-1");
    }
    out.region = *region_override;
  } else {
    MVR_ASSIGN_OR_RETURN(out.region, ResolveRegion(env, config));
  }

  bool ignore = IsTrue(env.GetOr("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "")) ||
                IsTrue(config.Get("ignore_configured_endpoint_urls").value_or(""));
  std::string url, source;
  if (!ignore) {
    std::string specific = "AWS_ENDPOINT_URL_" + info.service_id;
    if (!(url = env.GetOr(specific, "")).empty()) {
      source = specific;
    } else if (!(url = env.GetOr("AWS_ENDPOINT_URL", "")).empty()) {
      source = "AWS_ENDPOINT_URL";
    } else {
      if (auto services = config.Get("services")) {
        auto section = config.services.find(*services);
        if (section != config.services.end()) {
          auto it = section->second.find(info.config_key + ".endpoint_url");
          if (it != section->second.end()) {
            url = it->second;
            source = "services " + *services + " in the config file";
          }
        }
      }
      if (url.empty()) {
        if (auto profile_url = config.Get("endpoint_url")) {
          url = *profile_url;
          source = "endpoint_url in profile " + config.profile_name;
        }
      }
    }
  }
  if (url.empty()) {
    out.url = DefaultEndpointUrl(service, out.region);
    out.source = "regional default";
    // IAM's one endpoint signs for the partition's first region.
    if (service == AwsService::kIam) {
      out.region = out.region.rfind("cn-", 0) == 0 ? "cn-north-1" : "us-east-1";
    }
    return out;
  }
  auto parsed = http::ParseUrl(url);
  if (!parsed.ok() || url.find("://") == std::string::npos) {
    return InvalidArgument(source + " is not an http(s) URL: '" + url + "'");
  }
  out.url = StripSlash(url);
  out.source = source;
  return out;
}

}  // namespace mvr::aws
