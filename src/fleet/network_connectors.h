// The network connectors every RunMicrovm carries (ingressNetworkConnectors and
// egressNetworkConnectors of service-2.json: lists of at most 10 strings of 1-2048 characters).
// AWS documents ingress connectors as what "enables inbound connectivity" to a MicroVM's endpoint,
// which the control delivery of every warm, pooled and runner-set start goes through, so mvr never
// relies on a default: it names AWS's managed connectors unless configured otherwise.
// Thread-safety: pure functions over plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "aws/microvms/microvms.h"
#include "base/status.h"

namespace mvr::fleet {

// The managed connectors AWS's run-microvm example names (docs: "Running and using MicroVMs").
inline constexpr char kDefaultIngressConnector[] = "ALL_INGRESS";
inline constexpr char kDefaultEgressConnector[] = "INTERNET_EGRESS";

// "aws", "aws-cn" (cn-*) or "aws-us-gov" (us-gov-*).
std::string PartitionOfRegion(std::string_view region);

// arn:PARTITION:lambda:REGION:aws:network-connector:aws-network-connector:NAME.
std::string ManagedConnectorArn(std::string_view region, std::string_view name);

struct NetworkConnectors {
  std::vector<std::string> ingress;
  std::vector<std::string> egress;
};

// AWS's managed ingress (ALL_INGRESS) and internet egress (INTERNET_EGRESS) connectors of `region`.
NetworkConnectors DefaultConnectors(std::string_view region);

// Ok when each entry is a connector ARN or a managed connector's bare name (below) and there are
// at most 10; InvalidArgument naming `what` and the entry otherwise. Needs no region.
Status CheckConnectors(const std::vector<std::string>& given, const std::string& what);

// The connectors as RunMicrovm must get them: each entry an ARN of a network connector
// (arn:...:lambda:...:network-connector:...), or the bare name of one of AWS's managed connectors
// (ALL_INGRESS, INTERNET_EGRESS: upper-case letters and underscores), which becomes its ARN in
// `region` (RunMicrovm refuses bare names). InvalidArgument naming `what` for anything else, or
// more than 10 entries.
Result<std::vector<std::string>> ResolveConnectors(const std::vector<std::string>& given,
                                                   std::string_view region,
                                                   const std::string& what);

// Whether `connectors` lets traffic in: not empty, and not only AWS's NO_INGRESS connector.
bool AllowsIngress(const std::vector<std::string>& connectors);

// Sets the request's ingressNetworkConnectors and egressNetworkConnectors.
void ApplyConnectors(const NetworkConnectors& connectors, aws::RunMicrovmRequest& request);

// Whether `identifier` is an image ARN (arn:...:microvm-image:...), as RunMicrovm takes it.
bool IsImageArn(std::string_view identifier);

}  // namespace mvr::fleet
