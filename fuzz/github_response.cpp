// GitHub REST answers through the HttpClient seam: JIT configs, runners, jobs, paginated lists
// (Link headers), registration tokens, rate-limit headers and error bodies. Input: "OP STATUS",
// response header lines, blank line, body; OP picks the client call. Every page gets the same
// answer, so a Link rel="next" is followed until max_pages.
#include <cstdint>

#include "base/clock.h"
#include "fuzz_support.h"
#include "github/github_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  using namespace mvr::github;
  fuzz::FuzzedExchange x = fuzz::ParseExchange(data, size, 6);
  fuzz::FuzzedHttpClient http(x.response);
  ManualClock clock;
  GitHubClientOptions options;
  options.max_pages = 3;
  auto client = GitHubClient::Create(http, clock, GitHubAuth::Token(Secret("ghp_fuzz")), options);
  if (!client.ok()) __builtin_trap();
  const RunnerScope repo = RunnerScope::Repository("octo", "hello");
  const RunnerScope org = RunnerScope::Organization("octo");
  switch (x.op) {
    case 0: {
      JitConfigRequest r;
      r.name = "mvr-1";
      r.labels = {"mvr"};
      (void)(*client)->GenerateJitConfig(repo, r);
      break;
    }
    case 1:
      (void)(*client)->ListRunners(org, ListRunnersOptions{"mvr-1"});
      break;
    case 2:
      (void)(*client)->GetRunner(repo, 42);
      break;
    case 3:
      (void)(*client)->DeleteRunner(repo, 42);
      break;
    case 4:
      (void)(*client)->GetJob(RepositoryRef{"octo", "hello"}, 7);
      break;
    case 5:
      (void)(*client)->ListQueuedJobs(RepositoryRef{"octo", "hello"}, QueuedRunsFilter{});
      break;
    default:
      (void)(*client)->CreateRegistrationToken(org);
      break;
  }
  (void)(*client)->last_rate_limit();
  return 0;
}
