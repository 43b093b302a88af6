// The real clients a runner set runs on, built from its configuration: shared by `mvr serve`
// (everything at once) and `mvr lambda` (each function only what its handler needs, so the
// webhook function starts without a GitHub or MicroVMs client). A composition root's helper.
// Thread-safety: build from one thread; the clients are then safe to share.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials_chain.h"
#include "cli/context.h"
#include "github/github_client.h"
#include "github/multi_app.h"
#include "github/scaleset_client.h"
#include "http/client.h"
#include "queue/queue.h"
#include "runnerset/config/config.h"
#include "store/store.h"

namespace mvr::cli {

struct RunnerSetWiring {
  explicit RunnerSetWiring(std::unique_ptr<http::HttpClient> client)
      : owned_http(std::move(client)), http(*owned_http) {}

  std::unique_ptr<http::HttpClient> owned_http;
  http::HttpClient& http;
  std::unique_ptr<aws::DefaultCredentialsChain> credentials;
  std::optional<std::string> region;  // the configuration's, when it names one
  std::string microvms_region;        // the MicroVMs endpoint's region (WireMicrovms)
  std::unique_ptr<aws::MicrovmsClient> microvms;
  std::unique_ptr<http::HttpClient> github_http;  // with github.caBundle: GitHub's own client
  // One client per GitHub App (github.apps), or the one with a PAT; with several Apps the set
  // calls them through `github_router` (github/multi_app.h).
  std::vector<std::unique_ptr<github::GitHubClient>> github_clients;
  std::unique_ptr<github::MultiAppGitHub> github_router;
  github::GitHub* github = nullptr;  // what the set calls: the router, else the one client
  // The runner scale-set API, with github.source scaleset or both (WireGitHub); null otherwise.
  std::unique_ptr<github::ScaleSetClient> scale_sets;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<queue::Queue> queue;
};

// HTTP and AWS credentials only; the Wire* calls below add the rest.
std::unique_ptr<RunnerSetWiring> NewRunnerSetWiring(Context& ctx,
                                                    const runnerset::ServeConfig& config,
                                                    std::unique_ptr<http::HttpClient> http);
Status WireQueue(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w);
Status WireStore(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w);
Status WireMicrovms(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w);
// After WireMicrovms: each class's image ARN and network connectors
// (runnerset/classes/class_resolve.h), settled once before the set launches anything.
Status ResolveRunnerClasses(Context& ctx, runnerset::ServeConfig& config, RunnerSetWiring& w);
// Needs the PAT or the Apps' keys in `secrets`; `reload(i)` reads the PAT or App i's key again
// from its source while GitHub refuses it (github/auth.h).
Status WireGitHub(Context& ctx, const runnerset::ServeConfig& config,
                  const runnerset::ServeSecrets& secrets, RunnerSetWiring& w,
                  std::function<Result<Secret>(size_t app)> reload);

}  // namespace mvr::cli
