// Image builds that enable /validate, and idle policy timers under idleTimeScale, in virtual
// time: /validate goes to a fresh test instance started after the build's own instance stopped,
// its failure fails the version with a reason naming the hook, and both instances are stopped
// whatever the outcome.
#include "model_fixture.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ModelBuildValidateTest : public ModelFixture {
 protected:
  // Creates image `name` with /ready and /validate enabled; returns the build's target.
  std::string CreateValidatedImage(const std::string& name, bool ready = true) {
    json image_hooks = {{"validate", "ENABLED"}, {"validateTimeoutInSeconds", 7}};
    if (ready) {
      image_hooks["ready"] = "ENABLED";
      image_hooks["readyTimeoutInSeconds"] = 30;
    }
    auto created = Call("CreateMicrovmImage",
                        {{"name", name},
                         {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
                         {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
                         {"codeArtifact", {{"uri", "file:///tmp/app"}}},
                         {"hooks", {{"port", 9100}, {"microvmImageHooks", image_hooks}}}});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    auto builds =
        Call("ListMicrovmImageBuilds", {{"imageIdentifier", name}, {"imageVersion", "1"}});
    EXPECT_TRUE(builds.ok()) << builds.status().ToString();
    return "build-" + (*builds)["items"][0]["buildId"].get<std::string>();
  }

  json Version(const std::string& name) {
    auto v = Call("GetMicrovmImageVersion", {{"imageIdentifier", name}, {"imageVersion", "1"}});
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.value_or(json());
  }

  // "kind@instance" where instance is "build" or "test".
  static std::vector<std::string> Trace(const std::vector<Effect>& ran, const std::string& build) {
    std::vector<std::string> out;
    for (const Effect& e : ran) {
      std::string where = e.target == build                         ? "build"
                          : e.target == ValidationInstanceOf(build) ? "test"
                                                                    : e.target;
      out.push_back(Describe(e) + "@" + where);
    }
    return out;
  }
};

TEST_F(ModelBuildValidateTest, ValidateRunsOnAFreshTestInstanceAfterTheBuildInstanceStops) {
  const std::string build = CreateValidatedImage("checked");
  std::vector<Effect> ran = Drain();
  EXPECT_EQ(Trace(ran, build),
            (std::vector<std::string>{"prepare_artifact@build", "start_program@build",
                                      "hook:ready@build", "stop@build", "start_program@test",
                                      "hook:ready@test", "hook:validate@test", "stop@test"}));
  for (const Effect& e : ran) {
    EXPECT_EQ(e.hook_port, 9100) << Describe(e);
    if (e.kind == Effect::Kind::kStartProgram) {
      EXPECT_EQ(e.program.argv, std::vector<std::string>{"/bin/built"});
    }
    if (e.kind == Effect::Kind::kCallHook && e.hook == Hook::kValidate) {
      EXPECT_EQ(e.timeout, Duration(7'000));
    }
    if (e.kind == Effect::Kind::kCallHook && e.hook == Hook::kReady) {
      EXPECT_EQ(e.timeout, Duration(30'000));
    }
  }
  json v = Version("checked");
  EXPECT_EQ(v["state"], "SUCCESSFUL");
  EXPECT_EQ(v["status"], "ACTIVE");
}

TEST_F(ModelBuildValidateTest, WithoutReadyTheTestInstanceIsPolledByValidateAlone) {
  const std::string build = CreateValidatedImage("noready", /*ready=*/false);
  EXPECT_EQ(Trace(Drain(), build),
            (std::vector<std::string>{"prepare_artifact@build", "start_program@build", "stop@build",
                                      "start_program@test", "hook:validate@test", "stop@test"}));
  EXPECT_EQ(Version("noready")["state"], "SUCCESSFUL");
}

TEST_F(ModelBuildValidateTest, FailingValidateFailsTheVersionAndStopsBothInstances) {
  failing_hooks_.insert(Hook::kValidate);
  const std::string build = CreateValidatedImage("refused");
  std::vector<std::string> trace = Trace(Drain(), build);
  ASSERT_GE(trace.size(), 7u);
  EXPECT_EQ(trace[6], "hook:validate@test");
  // After the failure, a stop for each instance (the build's own is already gone: a no-op).
  std::vector<std::string> after(trace.begin() + 7, trace.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, (std::vector<std::string>{"stop@build", "stop@test"}));
  json v = Version("refused");
  EXPECT_EQ(v["state"], "FAILED");
  EXPECT_EQ(v["status"], "INACTIVE");
  const std::string reason = v.value("stateReason", "");
  EXPECT_NE(reason.find("/validate hook failed on the test MicroVM"), std::string::npos) << reason;
  EXPECT_EQ(Call("GetMicrovmImage", {{"imageIdentifier", "refused"}})->at("state"),
            "CREATE_FAILED");
  EXPECT_EQ(Call("RunMicrovm", {{"imageIdentifier", "refused"}}).status().code(), Code::kNotFound);
}

TEST_F(ModelBuildValidateTest, FailingReadyOnTheTestInstanceFailsTheBuildNamingIt) {
  const std::string build = CreateValidatedImage("flaky");
  // The build's own /ready passes; the test instance's does not.
  std::vector<Effect> due = model_->TakeDueEffects();
  int ready_calls = 0;
  for (int round = 0; round < 20 && !due.empty(); ++round) {
    for (Effect& e : due) {
      EffectOutcome outcome;
      if (e.kind == Effect::Kind::kPrepareArtifact)
        outcome.program = ProgramSpec{{"/bin/x"}, "", {}};
      if (e.kind == Effect::Kind::kCallHook && e.hook == Hook::kReady && ++ready_calls == 2) {
        EXPECT_EQ(e.target, ValidationInstanceOf(build));
        outcome = EffectOutcome::Failure("no 200 within 30s (answered 503)");
      }
      model_->Complete(e.id, outcome);
    }
    due = model_->TakeDueEffects();
  }
  const std::string reason = Version("flaky").value("stateReason", "");
  EXPECT_NE(reason.find("/ready hook failed on the test MicroVM: no 200 within 30s"),
            std::string::npos)
      << reason;
}

TEST_F(ModelBuildValidateTest, ShutdownDuringValidateStopsTheTestInstance) {
  const std::string build = CreateValidatedImage("cut");
  // Run everything up to (not including) the /validate call.
  Effect validate;
  for (int round = 0; round < 20; ++round) {
    std::vector<Effect> due = model_->TakeDueEffects();
    bool found = false;
    for (Effect& e : due) {
      if (e.kind == Effect::Kind::kCallHook && e.hook == Hook::kValidate) {
        validate = e;
        found = true;
        continue;
      }
      EffectOutcome outcome;
      if (e.kind == Effect::Kind::kPrepareArtifact)
        outcome.program = ProgramSpec{{"/bin/x"}, "", {}};
      model_->Complete(e.id, outcome);
    }
    if (found) break;
  }
  ASSERT_EQ(validate.target, ValidationInstanceOf(build));
  model_->TerminateAll("the emulator is shutting down");
  std::vector<std::string> trace = Trace(Drain(), build);
  std::sort(trace.begin(), trace.end());
  EXPECT_EQ(trace, (std::vector<std::string>{"stop@build", "stop@test"}));
  model_->Complete(validate.id, EffectOutcome::Success());  // overtaken: ignored
  EXPECT_EQ(Version("cut")["state"], "FAILED");
  EXPECT_TRUE(model_->Settled());
}

TEST_F(ModelBuildValidateTest, IdleTimeScaleShortensIdleTimersButNotTheApiRules) {
  MicrovmModelOptions options;
  options.idle_time_scale = 60;
  Rebuild(options);
  EXPECT_EQ(Call("RunMicrovm", {{"imageIdentifier", "img"},
                                {"idlePolicy",
                                 {{"maxIdleDurationSeconds", 59},
                                  {"suspendedDurationSeconds", 0},
                                  {"autoResumeEnabled", true}}}})
                .status()
                .code(),
            Code::kInvalidArgument);
  const std::string id = RunningVm({{"idlePolicy",
                                     {{"maxIdleDurationSeconds", 60},
                                      {"suspendedDurationSeconds", 120},
                                      {"autoResumeEnabled", false}}}});
  Advance(milliseconds(999));
  EXPECT_EQ(StateOf(id), "RUNNING");
  Advance(milliseconds(1));
  EXPECT_EQ(StateOf(id), "SUSPENDED");
  Advance(milliseconds(1'999));
  EXPECT_EQ(StateOf(id), "SUSPENDED");
  Advance(milliseconds(1));
  auto got = Call("GetMicrovm", {{"microvmIdentifier", id}});
  EXPECT_EQ((*got)["state"], "TERMINATED");
  EXPECT_EQ((*got)["idlePolicy"]["maxIdleDurationSeconds"], 60);
  EXPECT_NE((*got)["stateReason"].get<std::string>().find("suspendedDurationSeconds (120)"),
            std::string::npos);
}

TEST(ModelOptionsTest, IdleTimeScaleMustBePositive) {
  MicrovmModelOptions options;
  EXPECT_TRUE(options.ApplyJson({{"idleTimeScale", 30}}).ok());
  EXPECT_EQ(options.idle_time_scale, 30);
  Status bad = options.ApplyJson({{"idleTimeScale", 0}});
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("idleTimeScale"), std::string::npos);
}

TEST(ModelOptionsTest, RunningBeforeHookIsMillisecondsAtLeastZero) {
  MicrovmModelOptions options;
  EXPECT_TRUE(options.ApplyJson({{"runningBeforeHookMs", 1500}}).ok());
  EXPECT_EQ(options.running_before_hook, Duration(1500));
  EXPECT_FALSE(options.ApplyJson({{"runningBeforeHookMs", -1}}).ok());
  EXPECT_FALSE(options.ApplyJson({{"runningBeforeHookMs", "soon"}}).ok());
}

}  // namespace
}  // namespace mvr::emulate::microvms
