// InProcessMicrovms: the Lambda MicroVMs service in the caller's process, for tests and the
// simulation. It owns a MicrovmModel and an EffectDriver and offers two http::HttpClient seams:
// api() takes the requests aws::MicrovmsClient sends (SigV4 checked when keys are given) through
// the same rest-json front as `mvr emulate microvms`, and ingress() takes requests to a VM's
// endpoint (X-aws-proxy-auth/-port checked by the model) and hands them to the guest. No socket,
// no thread: before each request the driver applies what is due on the injected clock, after it
// the effects the request made due are executed, so polling clients see VMs boot as their
// (manual) clock moves.
// Thread-safety: every method is safe from many threads; one recursive mutex serialises the model,
// and the guest is called under it (a guest may call back into api() or ingress()).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/seam.h"
#include "emulate/microvms/front/rest_json_front.h"
#include "emulate/microvms/model/effect_driver.h"
#include "emulate/microvms/model/microvm_model.h"
#include "http/client.h"
#include "http/server.h"

namespace mvr::emulate::microvms {

// The software inside the VMs: what carrying out an effect does (a /run hook reads the
// runHookPayload in effect.body, a freeze pauses the guest...) and what its ports answer.
class InProcessGuest {
 public:
  virtual ~InProcessGuest() = default;
  // Every effect of every VM; a failed outcome fails the step (a failed /run hook terminates the
  // VM with the reason). The default succeeds (EffectDriver::Succeed).
  virtual EffectOutcome Execute(const Effect& effect) { return EffectDriver::Succeed(effect); }
  // A request through the endpoint of `microvm_id` to guest `port`, the x-aws-proxy-* headers
  // already removed. The default answers 502: nothing listens.
  virtual http::HttpResponse Serve(const std::string& microvm_id, int port,
                                   const http::ServerRequest& request);
};

struct InProcessMicrovmsOptions {
  MicrovmModelOptions model;
  RestJsonFrontOptions front;  // sigv4_keys: check the client's signatures
  // Images registered at construction: ACTIVE version "1", every hook enabled.
  std::vector<std::string> images = {"img-1"};
};

// One API request the service answered (the trace a simulation prints, calls per job).
struct ApiCall {
  std::string operation;  // empty when no operation matched
  std::string microvm_id;
  std::string client_token;  // RunMicrovm's idempotency token, when given (not a secret)
  int status = 0;
};

class InProcessMicrovms {
 public:
  // `guest` may be null (a guest that succeeds at everything and serves nothing); it must
  // outlive the service.
  InProcessMicrovms(Seam seam, InProcessMicrovmsOptions options, InProcessGuest* guest = nullptr);
  ~InProcessMicrovms();

  // The endpoint URL to give aws::MicrovmsClient ("https://lambda.<region>.amazonaws.com").
  std::string api_url() const;
  http::HttpClient& api() { return *api_; }
  http::HttpClient& ingress() { return *ingress_; }

  // Applies what is due at the clock's time (see EffectDriver::RunDue).
  void RunDue();
  std::optional<TimePoint> NextDeadline();
  // Runs `f(model)` under the lock, then executes the effects it made due (setting up state).
  template <typename F>
  auto WithModel(F f) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    auto result = f(*model_);
    driver_->ExecuteDue();
    return result;
  }
  // GetMicrovm's JSON for `microvm_id` (NotFound once it is gone).
  Result<nlohmann::json> Describe(const std::string& microvm_id);
  std::vector<ApiCall> calls();

 private:
  http::HttpResponse ServeApi(const http::ServerRequest& request);
  // The VM is the first label of the Host ("<id>.microvms.lambda.<region>.on.aws").
  http::HttpResponse ServeIngress(const http::ServerRequest& request);

  Seam seam_;
  InProcessMicrovmsOptions options_;
  InProcessGuest* guest_;
  std::recursive_mutex mu_;
  std::unique_ptr<MicrovmModel> model_;
  std::unique_ptr<EffectDriver> driver_;
  std::unique_ptr<http::HttpClient> api_;
  std::unique_ptr<http::HttpClient> ingress_;
  std::vector<ApiCall> calls_;
};

}  // namespace mvr::emulate::microvms
