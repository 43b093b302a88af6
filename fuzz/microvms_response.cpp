// Lambda MicroVMs answers (rest-json) through the HttpClient seam: typed outputs (MicroVMs, images,
// versions, builds, pages, auth tokens), modelled error shapes (x-amzn-ErrorType, message,
// Retry-After) and empty or odd bodies. Input: "OP STATUS", response header lines, blank line,
// body; OP picks the client call.
#include <cstdint>

#include "aws/microvms/microvms_client.h"
#include "base/clock.h"
#include "base/random.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  using namespace mvr::aws;
  fuzz::FuzzedExchange x = fuzz::ParseExchange(data, size, 12);
  fuzz::FuzzedHttpClient http(x.response);
  AwsCredentials creds;
  creds.access_key_id = "AKIDEXAMPLE";
  creds.secret_access_key = Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
  StaticCredentialsProvider credentials(creds);
  ManualClock clock;
  SeededRandom random(7);
  ManualSleeper sleeper(clock);
  fuzz::DiscardSink sink;
  Logger logger(sink, clock);
  MicrovmsClientOptions options;
  options.endpoint.url = "https://lambda.us-east-1.amazonaws.com";
  options.endpoint.region = "us-east-1";
  options.endpoint.signing_name = "lambda";
  MicrovmsClient client(
      options, MicrovmsClientDeps{http, credentials, Seam{clock, sleeper, random, random, logger}});
  const std::string vm = "mvm-0123456789abcdef";
  switch (x.op) {
    case 0: {
      RunMicrovmRequest r;
      r.image_identifier = "runner-image";
      r.execution_role_arn = "arn:aws:iam::123456789012:role/mvr-runner";
      r.run_hook_payload = Secret("v2.payload");
      r.client_token = "fixed-token";
      (void)client.RunMicrovm(r);
      break;
    }
    case 1:
      (void)client.GetMicrovm(vm);
      break;
    case 2:
      (void)client.ListMicrovms(ListMicrovmsRequest{"runner-image", "", 10, ""});
      break;
    case 3:
      (void)client.SuspendMicrovm(vm);
      break;
    case 4:
      (void)client.ResumeMicrovm(vm);
      break;
    case 5:
      (void)client.TerminateMicrovm(vm);
      break;
    case 6:
      (void)client.CreateMicrovmAuthToken(CreateMicrovmAuthTokenRequest{vm, 30, {}});
      break;
    case 7:
      (void)client.GetMicrovmImage("runner-image");
      break;
    case 8:
      (void)client.ListMicrovmImages(ListMicrovmImagesRequest{"", 10, ""});
      break;
    case 9:
      (void)client.ListMicrovmImageVersions(
          ListMicrovmImageVersionsRequest{"runner-image", 10, ""});
      break;
    case 10:
      (void)client.GetMicrovmImageVersion("runner-image", "3");
      break;
    case 11:
      (void)client.DeleteMicrovmImageVersion("runner-image", "3");
      break;
    default: {
      ListMicrovmImageBuildsRequest r;
      r.image_identifier = "runner-image";
      r.image_version = "3";
      (void)client.ListMicrovmImageBuilds(r);
      (void)client.GetMicrovmImageBuild("runner-image", "3", "build-1");
      break;
    }
  }
  return 0;
}
