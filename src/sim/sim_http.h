// SimHttpClient: an external call as a simulated actor makes it. Each request is a scheduling
// point (another actor may run before it reaches the service) and may fail as a network and a
// service fail, with the rates and the seeded source of sim::Faults:
//   throttle      the service's throttling answer (by default a 429 with ThrottlingException,
//                 as the MicroVMs REST API gives; a caller may give GitHub's or DynamoDB's)
//   fail_before   the connection fails before the request is sent: nothing happened
//   fail_after    the request reached the service and took effect, and the response was lost
//                 (a timeout): the caller cannot tell this from fail_before
// The real clients then retry, back off and parse exactly as they do in production.
// Thread-safety: as the wrapped client; calls are serialized by the scheduler's baton anyway.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "http/client.h"
#include "sim/scheduler.h"
#include "sim/sim_services.h"

namespace mvr::sim {

class SimHttpClient final : public http::HttpClient {
 public:
  // `name` labels this service in the trace and the fault counts ("microvms", "github").
  SimHttpClient(Scheduler& scheduler, http::HttpClient& inner, Faults& faults, std::string name);

  // The answer a throttled request gets.
  void SetThrottleResponse(std::function<http::HttpResponse()> make) {
    throttle_ = std::move(make);
  }

  Result<http::HttpResponse> Send(const http::HttpRequest& request) override;
  // Requests sent through this client (every one, faulted or not).
  size_t requests() const { return requests_; }
  // Requests that may change something (every method but GET and HEAD).
  size_t mutations() const { return mutations_; }
  // Requests by operation (OperationOf: "GET /repos/{}/{}/actions/jobs/{}"): what the scale
  // report breaks a service's calls per job down by.
  const std::map<std::string, size_t>& by_operation() const { return by_operation_; }

 private:
  Scheduler& scheduler_;
  http::HttpClient& inner_;
  Faults& faults_;
  std::string name_;
  std::function<http::HttpResponse()> throttle_;
  size_t requests_ = 0;  // written by the actor holding the baton only
  size_t mutations_ = 0;
  std::map<std::string, size_t> by_operation_;
};

// The request's method and path without its query ("POST /2025-09-09/microvms"): the trace's
// and the fault counts' name for it.
std::string RequestName(const http::HttpRequest& request);
// RequestName with every path segment that holds a digit (ids, ARNs, repository names alike) as
// "{}": one name for every call of one operation.
std::string OperationOf(const http::HttpRequest& request);

}  // namespace mvr::sim
