#pragma once

// A GitHub emulator on loopback that speaks the scale-set API beside its REST API, for the tests
// of the scale-set client, listener and source: the caller's options (its tick and long poll)
// with the repository octo/app, the fixture's PAT and the scale-set routes, started on a free port.

#include <memory>
#include <string>
#include <utility>

#include "base/logger.h"
#include "base/seam.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "http/client.h"

namespace mvr::testing_support {

struct ScaleSetEmulator {
  std::unique_ptr<emulate::github::GithubEmulator> emulator;
  std::string url;  // the REST API's base URL
};

inline Result<ScaleSetEmulator> StartScaleSetEmulator(emulate::github::EmulatorOptions o,
                                                      std::string pat, Seam seam,
                                                      http::HttpClient& client, Logger& logger) {
  namespace emu = emulate::github;
  o.model.repositories = {"octo/app"};
  o.auth.pats.emplace_back(std::move(pat));
  o.extra_routes = [&logger](http::Router& r, emu::GithubModel& m, emu::Authenticator& a) {
    return emu::AddScaleSetRoutes(r, m, a, logger);
  };
  Result<std::unique_ptr<emu::GithubEmulator>> e =
      emu::GithubEmulator::Create(std::move(o), seam, client);
  if (!e.ok()) return e.status();
  ScaleSetEmulator s{std::move(*e), ""};
  Result<std::string> url = s.emulator->Start("127.0.0.1", 0);
  if (!url.ok()) return url.status();
  s.url = *url;
  return s;
}

}  // namespace mvr::testing_support
