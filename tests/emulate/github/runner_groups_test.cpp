// Runner groups in the GitHub model (GithubModelOptions::runner_groups): an organisation's runner
// in a group of "selected" visibility is handed only its repositories' jobs, even when another
// repository's older job waits; and a JIT config naming a group the organisation does not have,
// or any custom group for a repository's own runner, is answered 404 as GitHub does.
#include <gtest/gtest.h>

#include "emulate/github/model_fixture.h"

namespace mvr::emulate::github {
namespace {

class RunnerGroupsTest : public GithubModelFixture {
 protected:
  RunnerGroupsTest() : GithubModelFixture(Options()) {}
  static GithubModelOptions Options() {
    GithubModelOptions o;
    o.repositories = {"acme/big", "acme/small", "other/app"};
    o.organizations = {"acme", "other"};
    o.base_url = "http://127.0.0.1:9";
    o.runner_groups = {{2, "acme", "small-only", {"acme/Small"}}};
    return o;
  }
  JitRequest Jit(const std::string& name, int64_t group) {
    JitRequest r;
    r.name = name;
    r.runner_group_id = group;
    r.labels = {"mvr-small"};
    return r;
  }
  // Registers and connects an organisation's runner of acme in `group`; returns its id.
  int64_t Online(const std::string& name, int64_t group) {
    auto reg = model_.GenerateJitConfig(Scope::Org("acme"), Jit(name, group));
    EXPECT_TRUE(reg.ok()) << reg.status().ToString();
    if (!reg.ok()) return 0;
    auto contents = DecodeJitConfig(reg->encoded_jit_config);
    EXPECT_TRUE(contents.ok());
    EXPECT_TRUE(model_.RunnerConnect(contents->credential).ok());
    return reg->runner.id;
  }
  Job QueueIn(const std::string& repository) {
    JobSpec spec;
    spec.repository = repository;
    spec.labels = {"self-hosted", "mvr-small"};
    spec.steps = {"true"};
    auto job = model_.QueueJob(spec);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : Job();
  }
};

// The fair share's subject (issue 56, item 4): GitHub hands an idle runner the oldest job it may
// serve, so a runner in the Default group launched for acme/small's job takes acme/big's older
// one; in a group limited to acme/small it takes acme/small's.
TEST_F(RunnerGroupsTest, ARunnerOfALimitedGroupTakesOnlyItsRepositorysJob) {
  const Job big = QueueIn("acme/big");
  clock_.Advance(std::chrono::seconds(1));
  const Job small = QueueIn("acme/small");
  const int64_t limited = Online("small-runner", 2);
  EXPECT_EQ(model_.GetJobById(big.id)->status, "queued");
  EXPECT_EQ(model_.GetJobById(small.id)->runner_id, limited);
  EXPECT_EQ(model_.GetJobById(small.id)->runner_group_name, "small-only");
  EXPECT_EQ(model_.GetJobById(small.id)->runner_group_id, 2);
  // A Default-group runner takes the oldest job of any repository of the organisation.
  const int64_t any = Online("any-runner", 1);
  EXPECT_EQ(model_.GetJobById(big.id)->runner_id, any);
  EXPECT_EQ(model_.GetJobById(big.id)->runner_group_name, "Default");
}

TEST_F(RunnerGroupsTest, ALimitedGroupsIdleRunnerLeavesOtherRepositoriesJobsQueued) {
  Online("small-runner", 2);
  const Job big = QueueIn("acme/big");
  model_.Tick();
  EXPECT_EQ(model_.GetJobById(big.id)->status, "queued");
}

TEST_F(RunnerGroupsTest, AGroupTheScopeDoesNotHaveIsNotFound) {
  auto code = [&](const Scope& scope, int64_t group) {
    return model_.GenerateJitConfig(scope, Jit("r-" + std::to_string(group), group))
        .status()
        .code();
  };
  EXPECT_EQ(code(Scope::Org("acme"), 3), Code::kNotFound);   // no such group
  EXPECT_EQ(code(Scope::Org("other"), 2), Code::kNotFound);  // acme's group, not other's
  // A repository's own runners have no custom groups.
  EXPECT_EQ(code(Scope::Repo("acme", "small"), 2), Code::kNotFound);
  EXPECT_EQ(code(Scope::Org("acme"), 2), Code::kOk);
}

}  // namespace
}  // namespace mvr::emulate::github
