// Requests to a MicroVM's ingress endpoint: the endpoint from RunMicrovm/GetMicrovm (a bare host
// means https://host; the emulator gives a URL with scheme), with the auth token from
// CreateMicrovmAuthToken in X-aws-proxy-auth and the target port in X-aws-proxy-port.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "aws/microvms/microvms.h"
#include "base/secret.h"
#include "base/status.h"
#include "http/types.h"

namespace mvr::aws {

constexpr int kDefaultIngressPort = 8080;

struct IngressRequest {
  std::string endpoint;            // Microvm::endpoint
  int port = kDefaultIngressPort;  // the MicroVM port to reach (1-65535)
  std::string method = "GET";
  std::string path = "/";  // path and query on the MicroVM, e.g. "/v1/runner/start"
  std::string body;
  std::string content_type;  // set as Content-Type when non-empty
  Duration timeout{30'000};
};

// InvalidArgument when the endpoint is not a URL or host, the port is out of range, the path
// does not start with '/', or the token is empty (the message never contains the token).
Result<http::HttpRequest> BuildIngressRequest(const IngressRequest& request, const Secret& token);

// Same, sending every part of a CreateMicrovmAuthToken answer as its own header.
Result<http::HttpRequest> BuildIngressRequest(const IngressRequest& request,
                                              const MicrovmAuthToken& token);

}  // namespace mvr::aws
