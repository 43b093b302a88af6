// MicrovmsClient: MicrovmService over the real API (or the emulator): rest-json as the embedded
// service model binds it (URI labels percent-encoded, querystring members by locationName, the
// rest as a JSON body), SigV4 signed with signing name "lambda". Each request is validated
// against the model before it is sent, so bad input is an InvalidArgument naming the field and
// never reaches the service. No retries here: callers wrap calls with base/retry.h and
// IsRetryableMicrovmsError.
// Thread-safety: safe to share between threads when the injected HttpClient, CredentialsProvider,
// Clock and Random are.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "aws/microvms/service_model.h"
#include "aws/signing/credentials.h"
#include "aws/signing/endpoints.h"
#include "base/clock.h"
#include "base/random.h"
#include "base/seam.h"
#include "http/client.h"

namespace mvr::aws {

struct MicrovmsClientOptions {
  // url: "https://lambda.us-east-1.amazonaws.com" or the emulator's URL; region: signing region.
  // ResolveEndpoint(AwsService::kLambdaMicrovms, ...) gives one.
  ServiceEndpoint endpoint;
  Duration timeout{30'000};  // per HTTP exchange
};

// The outside world the client calls through. References must outlive the client.
struct MicrovmsClientDeps {
  http::HttpClient& http;
  CredentialsProvider& credentials;
  Seam seam;  // seam.secure_random draws the clientTokens when the caller gives none
};

class MicrovmsClient final : public MicrovmService {
 public:
  MicrovmsClient(MicrovmsClientOptions options, MicrovmsClientDeps deps);

  Result<Microvm> RunMicrovm(const RunMicrovmRequest& request) override;
  Result<Microvm> GetMicrovm(const std::string& microvm_identifier) override;
  Result<ListMicrovmsResponse> ListMicrovms(const ListMicrovmsRequest& request) override;
  Status SuspendMicrovm(const std::string& microvm_identifier) override;
  Status ResumeMicrovm(const std::string& microvm_identifier) override;
  Status TerminateMicrovm(const std::string& microvm_identifier) override;
  Result<MicrovmAuthToken> CreateMicrovmAuthToken(
      const CreateMicrovmAuthTokenRequest& request) override;

  Result<MicrovmImageChange> CreateMicrovmImage(const CreateMicrovmImageRequest& request) override;
  Result<MicrovmImage> GetMicrovmImage(const std::string& image_identifier) override;
  Result<MicrovmImageChange> UpdateMicrovmImage(const UpdateMicrovmImageRequest& request) override;
  Result<ListMicrovmImagesResponse> ListMicrovmImages(
      const ListMicrovmImagesRequest& request) override;
  Result<ListMicrovmImageVersionsResponse> ListMicrovmImageVersions(
      const ListMicrovmImageVersionsRequest& request) override;
  Result<MicrovmImageVersion> GetMicrovmImageVersion(const std::string& image_identifier,
                                                     const std::string& image_version) override;
  Result<MicrovmImageVersion> UpdateMicrovmImageVersion(
      const UpdateMicrovmImageVersionRequest& request) override;
  Result<DeleteMicrovmImageVersionResponse> DeleteMicrovmImageVersion(
      const std::string& image_identifier, const std::string& image_version) override;
  Result<ListMicrovmImageBuildsResponse> ListMicrovmImageBuilds(
      const ListMicrovmImageBuildsRequest& request) override;
  Result<MicrovmImageBuild> GetMicrovmImageBuild(const std::string& image_identifier,
                                                 const std::string& image_version,
                                                 const std::string& build_id) override;

  // One call: `input` is the operation's full input under the model's member names. Validates,
  // binds, signs, sends, maps errors. The output body on success ({} when empty). `secrets` are
  // scrubbed from any error message. Public for tests and for operations without a typed method.
  Result<nlohmann::json> Call(const std::string& operation, const nlohmann::json& input,
                              const std::vector<const Secret*>& secrets = {});

 private:
  // A fresh idempotency token (UUID v4 form, as the SDKs generate).
  std::string NewClientToken();

  MicrovmsClientOptions options_;
  MicrovmsClientDeps deps_;
  const ServiceModel& model_;
};

// Builds the HTTP request for one call from the model's bindings, without signing it.
// InvalidArgument when a URI label is missing. Exposed for tests.
Result<http::HttpRequest> BindMicrovmsRequest(const ServiceModel& model,
                                              const std::string& endpoint_url,
                                              const std::string& operation,
                                              const nlohmann::json& input);

}  // namespace mvr::aws
