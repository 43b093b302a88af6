#include "fleet/network_connectors.h"

#include <algorithm>

namespace mvr::fleet {
namespace {

constexpr size_t kMaxConnectors = 10;        // NetworkConnectorList: max 10
constexpr size_t kMaxConnectorBytes = 2048;  // NetworkConnector: 1-2048 characters

bool IsManagedName(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

// arn:PARTITION:lambda:REGION:ACCOUNT:network-connector:... (the account is "aws" for AWS's own).
bool IsConnectorArn(std::string_view s) {
  if (s.rfind("arn:", 0) != 0) return false;
  size_t at = 0;
  std::vector<std::string_view> fields;
  for (int i = 0; i < 6; ++i) {
    const size_t colon = s.find(':', at);
    if (colon == std::string_view::npos) return false;
    fields.push_back(s.substr(at, colon - at));
    at = colon + 1;
  }
  return fields[2] == "lambda" && fields[5] == "network-connector" && at < s.size();
}

}  // namespace

std::string PartitionOfRegion(std::string_view region) {
  if (region.rfind("cn-", 0) == 0) return "aws-cn";
  if (region.rfind("us-gov-", 0) == 0) return "aws-us-gov";
  return "aws";
}

std::string ManagedConnectorArn(std::string_view region, std::string_view name) {
  return "arn:" + PartitionOfRegion(region) + ":lambda:" + std::string(region) +
         ":aws:network-connector:aws-network-connector:" + std::string(name);
}

NetworkConnectors DefaultConnectors(std::string_view region) {
  return NetworkConnectors{{ManagedConnectorArn(region, kDefaultIngressConnector)},
                           {ManagedConnectorArn(region, kDefaultEgressConnector)}};
}

Status CheckConnectors(const std::vector<std::string>& given, const std::string& what) {
  if (given.size() > kMaxConnectors) {
    return InvalidArgument(what + ": " + std::to_string(given.size()) +
                           " connectors, RunMicrovm takes at most " +
                           std::to_string(kMaxConnectors));
  }
  for (const std::string& c : given) {
    if (IsManagedName(c) || (IsConnectorArn(c) && c.size() <= kMaxConnectorBytes)) continue;
    return InvalidArgument(
        what + ": \"" + c.substr(0, 120) +
        "\" is not a network connector: give a connector ARN "
        "(arn:aws:lambda:REGION:ACCOUNT:network-connector:...) or the name of one of AWS's "
        "managed connectors (ALL_INGRESS, INTERNET_EGRESS, ...)");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> ResolveConnectors(const std::vector<std::string>& given,
                                                   std::string_view region,
                                                   const std::string& what) {
  MVR_RETURN_IF_ERROR(CheckConnectors(given, what));
  std::vector<std::string> out;
  for (const std::string& c : given) {
    if (!IsManagedName(c)) {
      out.push_back(c);
    } else if (region.empty()) {
      return InvalidArgument(what + ": \"" + c +
                             "\" needs a region to become an ARN; set the region, or give the "
                             "connector's full ARN");
    } else {
      out.push_back(ManagedConnectorArn(region, c));
    }
  }
  return out;
}

bool AllowsIngress(const std::vector<std::string>& connectors) {
  for (const std::string& c : connectors) {
    const std::string_view tail = ":NO_INGRESS";
    const bool none = c.size() >= tail.size() &&
                      c.compare(c.size() - tail.size(), tail.size(), tail.data(), tail.size()) == 0;
    if (!none) return true;
  }
  return false;
}

void ApplyConnectors(const NetworkConnectors& connectors, aws::RunMicrovmRequest& request) {
  request.ingress_network_connectors = connectors.ingress;
  request.egress_network_connectors = connectors.egress;
}

bool IsImageArn(std::string_view identifier) {
  return identifier.rfind("arn:", 0) == 0 &&
         identifier.find(":microvm-image:") != std::string_view::npos;
}

}  // namespace mvr::fleet
