// The janitor's unit-test fixture: the runner set over the in-process platform
// (platform_fixture.h), with helpers for the janitor's world: VMs of a given age, runners
// registered, idle, busy or listed late, committed launches, jobs queued a while ago.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {

using mvr::testing::HookedStore;

class JanitorTest : public RunnerSetTest {
 protected:
  // Below the cap, where the janitor recovers stuck launches (at it, every launch waits anyway).
  JanitorTest() { config_.max_concurrent_vms = ServeConfig{}.max_concurrent_vms; }

  // A RUNNING VM ten minutes old (old enough to be suspect).
  std::string OldVm() { return VmAged(10 * kMinute); }
  // GitHub's runner listing shows a runner that just took a job as idle for a while; a fresh
  // read of that one runner shows it busy.
  void ListingLags() { platform_.github_model->SetRunnerListingLag(60 * kMinute); }
  // A job queued `age` ago asking for `labels`; its id.
  int64_t JobQueuedAgo(Duration age, std::vector<std::string> labels) {
    const int64_t id = QueueJob(std::move(labels));
    m_.clock.Advance(age);
    return id;
  }
};

}  // namespace mvr::runnerset::testing
