// The GitHub model's unit-test fixture: the model on virtual time (a ManualClock, seeded
// randomness, a logger kept in memory, no webhook sender), and what its suites do most: register a
// runner of the class label `mvr-small` (not connected) and queue a job asking for it, in the one
// repository `octo/app`. A suite gives the options it tests (OneRepository() and its changes).
// Thread-safety: one test's thread.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"
#include "emulate/github/github_model.h"
#include "emulate/github/jit_config.h"

namespace mvr::emulate::github {

class GithubModelFixture : public ::testing::Test {
 protected:
  explicit GithubModelFixture(GithubModelOptions options)
      : model_(std::move(options), seam_, nullptr) {}

  // The repository `octo/app` alone, and a base URL nothing listens on.
  static GithubModelOptions OneRepository() {
    GithubModelOptions o;
    o.repositories = {"octo/app"};
    o.base_url = "http://127.0.0.1:9";
    return o;
  }
  // Registers a runner of `octo/app` with the label mvr-small; returns its id and credential (not
  // connected).
  std::pair<int64_t, Secret> Register(const std::string& name) {
    JitRequest r;
    r.name = name;
    r.runner_group_id = 1;
    r.labels = {"mvr-small"};
    auto reg = model_.GenerateJitConfig(Scope::Repo("octo", "app"), r);
    EXPECT_TRUE(reg.ok()) << reg.status().ToString();
    if (!reg.ok()) return {0, Secret()};
    auto contents = DecodeJitConfig(reg->encoded_jit_config);
    EXPECT_TRUE(contents.ok()) << contents.status().ToString();
    if (!contents.ok()) return {reg->runner.id, Secret()};
    return {reg->runner.id, contents->credential};
  }
  // Queues a job of `octo/app` asking for self-hosted and mvr-small.
  Job Queue() {
    JobSpec spec;
    spec.repository = "octo/app";
    spec.labels = {"self-hosted", "mvr-small"};
    spec.steps = {"true"};
    auto job = model_.QueueJob(spec);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : Job();
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  SeededRandom secure_random_{2};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, secure_random_, logger_};
  GithubModel model_;
};

}  // namespace mvr::emulate::github
