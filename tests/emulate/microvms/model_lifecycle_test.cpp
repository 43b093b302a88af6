// The MicroVM and image state machines in virtual time: hooks in order, failures, idle policy,
// maximum duration, tokens, retention, builds and versions.
#include <set>

#include "model_fixture.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;
using std::chrono::minutes;
using std::chrono::seconds;

class ModelLifecycleTest : public ModelFixture {
 protected:
  Secret Token(const std::string& id, json ports, int minutes_valid = 10) {
    auto out = Call("CreateMicrovmAuthToken", {{"microvmIdentifier", id},
                                               {"expirationInMinutes", minutes_valid},
                                               {"allowedPorts", ports}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return Secret((*out)["authToken"]["X-aws-proxy-auth"].get<std::string>());
  }
};

TEST_F(ModelLifecycleTest, RunStartsProgramWaitsForReadyThenCallsRunWithPayload) {
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}, {"runHookPayload", "hello"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)["state"], "PENDING");
  EXPECT_EQ((*out)["imageVersion"], "1");
  EXPECT_FALSE(out->dump().find("hello") != std::string::npos) << "payload echoed back";
  std::vector<Effect> ran = Drain();
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0].kind, Effect::Kind::kStartProgram);
  EXPECT_EQ(ran[0].program.argv, std::vector<std::string>{"/bin/guest"});
  EXPECT_EQ(ran[1].hook, Hook::kReady);
  EXPECT_EQ(ran[2].hook, Hook::kRun);
  EXPECT_EQ(ran[2].timeout, Duration(10'000));
  EXPECT_EQ(ran[2].body.Reveal(), "hello") << "by default the body is the payload itself";
  EXPECT_EQ(StateOf((*out)["microvmId"]), "RUNNING");
}

// --run-body: the payload raw, in an envelope, or in an envelope that also names the VM (the
// only form that tells a guest its id; the other hooks then name it too).
TEST_F(ModelLifecycleTest, HookBodiesTakeTheConfiguredForm) {
  for (RunBody form : {RunBody::kRaw, RunBody::kEnvelope, RunBody::kEnvelopeWithId}) {
    MicrovmModelOptions options;
    options.run_body = form;
    Rebuild(options);
    auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}, {"runHookPayload", "v5.payload"}});
    ASSERT_TRUE(out.ok());
    const std::string id = (*out)["microvmId"];
    std::vector<Effect> ran = Drain();
    ASSERT_EQ(ran.size(), 3u);
    ASSERT_EQ(ran[2].hook, Hook::kRun);
    const std::string run_body = ran[2].body.Reveal();
    if (form == RunBody::kRaw) {
      EXPECT_EQ(run_body, "v5.payload");
    } else if (form == RunBody::kEnvelope) {
      EXPECT_EQ(json::parse(run_body), (json{{"runHookPayload", "v5.payload"}}));
    } else {
      EXPECT_EQ(json::parse(run_body), (json{{"microvmId", id}, {"runHookPayload", "v5.payload"}}));
    }
    ASSERT_TRUE(Call("SuspendMicrovm", {{"microvmIdentifier", id}}).ok());
    ran = Drain();
    ASSERT_FALSE(ran.empty());
    const Effect& suspend = ran[0];
    ASSERT_EQ(suspend.hook, Hook::kSuspend);
    const json other = json::parse(suspend.body.Reveal());
    EXPECT_EQ(other.contains("microvmId"), form == RunBody::kEnvelopeWithId) << other.dump();
    if (form == RunBody::kEnvelopeWithId) {
      EXPECT_EQ(other["microvmId"], id);
    }
  }
  for (const auto& [text, form] :
       {std::pair{"raw", RunBody::kRaw}, std::pair{"envelope", RunBody::kEnvelope},
        std::pair{"envelope-with-id", RunBody::kEnvelopeWithId}}) {
    EXPECT_EQ(ParseRunBody(text).value(), form);
    EXPECT_STREQ(RunBodyName(form), text);
  }
  Result<RunBody> bad = ParseRunBody("json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("raw, envelope or envelope-with-id"), std::string::npos);
}

TEST_F(ModelLifecycleTest, GuestFailingRunIsTerminatedWithStateReason) {
  failing_hooks_.insert(Hook::kRun);
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  Drain();
  auto got = Call("GetMicrovm", {{"microvmIdentifier", (*out)["microvmId"]}});
  EXPECT_EQ((*got)["state"], "TERMINATED");
  EXPECT_NE((*got)["stateReason"].get<std::string>().find("/run hook failed"), std::string::npos);
  EXPECT_TRUE(got->contains("terminatedAt"));
  EXPECT_EQ(log_, (std::vector<std::string>{"start_program", "hook:ready", "hook:run",
                                            "hook:terminate", "stop"}));
}

TEST_F(ModelLifecycleTest, SuspendResumeTerminateCallHooksInOrder) {
  const std::string id = RunningVm();
  log_.clear();
  ASSERT_TRUE(Call("SuspendMicrovm", {{"microvmIdentifier", id}}).ok());
  EXPECT_EQ(StateOf(id), "SUSPENDING");
  Drain();
  EXPECT_EQ(StateOf(id), "SUSPENDED");
  ASSERT_TRUE(Call("ResumeMicrovm", {{"microvmIdentifier", id}}).ok());
  Drain();
  EXPECT_EQ(StateOf(id), "RUNNING");
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", id}}).ok());
  EXPECT_EQ(StateOf(id), "TERMINATING");
  Drain();
  EXPECT_EQ(StateOf(id), "TERMINATED");
  EXPECT_EQ(log_, (std::vector<std::string>{"hook:suspend", "freeze", "thaw", "hook:resume",
                                            "hook:terminate", "stop"}));
  // Terminate is idempotent.
  EXPECT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", id}}).ok());
}

// --image-hook-timeout: the runtime hooks of registered images get it; ready and validate keep
// theirs.
TEST_F(ModelLifecycleTest, RegisteredImagesTakeTheConfiguredRuntimeHookTimeout) {
  auto hooks = [&] {
    auto v = Call("GetMicrovmImageVersion", {{"imageIdentifier", "img"}, {"imageVersion", "1"}});
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? v->dump() : "";
  };
  EXPECT_NE(hooks().find("\"resumeTimeoutInSeconds\":10"), std::string::npos) << hooks();
  MicrovmModelOptions options;
  options.registered_hook_timeout_seconds = 60;
  Rebuild(options);
  const std::string text = hooks();
  for (const char* hook : {"run", "resume", "suspend", "terminate"}) {
    EXPECT_NE(text.find("\"" + std::string(hook) + "TimeoutInSeconds\":60"), std::string::npos)
        << hook << " in " << text;
  }
  EXPECT_NE(text.find("\"readyTimeoutInSeconds\":60"), std::string::npos) << text;
}

TEST_F(ModelLifecycleTest, WrongStateCommandsAreConflicts) {
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  const std::string id = (*out)["microvmId"];
  EXPECT_EQ(Call("SuspendMicrovm", {{"microvmIdentifier", id}}).status().code(), Code::kConflict);
  EXPECT_EQ(Call("ResumeMicrovm", {{"microvmIdentifier", id}}).status().code(), Code::kConflict);
  Drain();
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", id}}).ok());
  Drain();
  EXPECT_EQ(Call("ResumeMicrovm", {{"microvmIdentifier", id}}).status().code(), Code::kConflict);
  auto token = Call("CreateMicrovmAuthToken", {{"microvmIdentifier", id},
                                               {"expirationInMinutes", 5},
                                               {"allowedPorts", json::array({{{"port", 8080}}})}});
  EXPECT_EQ(token.status().code(), Code::kConflict);
}

// AWS keeps a TERMINATED VM in GetMicrovm and ListMicrovms for about a day (DESIGN.md §2), so a
// set that launches 2,000 jobs a day pages through ~2,000 VMs per listing; the model does too.
TEST_F(ModelLifecycleTest, TerminatedVmsStayListedForADayByDefault) {
  const std::string id = RunningVm();
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", id}}).ok());
  Drain();
  Advance(minutes(24 * 60 - 1));
  auto list = Call("ListMicrovms", json::object());
  ASSERT_EQ((*list)["items"].size(), 1u);
  EXPECT_EQ((*list)["items"][0]["state"], "TERMINATED");
  Advance(minutes(2));
  EXPECT_EQ(Call("GetMicrovm", {{"microvmIdentifier", id}}).status().code(), Code::kNotFound);
  EXPECT_TRUE(Call("ListMicrovms", json::object())->at("items").empty());
}

TEST_F(ModelLifecycleTest, MaximumDurationTerminates) {
  const std::string id = RunningVm({{"maximumDurationInSeconds", 120}});
  Advance(seconds(119));
  EXPECT_EQ(StateOf(id), "RUNNING");
  Advance(seconds(1));
  auto got = Call("GetMicrovm", {{"microvmIdentifier", id}});
  EXPECT_EQ((*got)["state"], "TERMINATED");
  EXPECT_NE((*got)["stateReason"].get<std::string>().find("maximumDurationInSeconds"),
            std::string::npos);
}

TEST_F(ModelLifecycleTest, IdlePolicySuspendsAfterNoTrafficAndTerminatesLater) {
  const std::string id = RunningVm({{"idlePolicy",
                                     {{"maxIdleDurationSeconds", 60},
                                      {"suspendedDurationSeconds", 300},
                                      {"autoResumeEnabled", false}}}});
  Secret token = Token(id, json::array({{{"port", 8080}}}));
  Advance(seconds(50));
  ASSERT_TRUE(model_->AuthorizeIngress(id, &token, 8080).ok());  // traffic resets the timer
  Advance(seconds(50));
  EXPECT_EQ(StateOf(id), "RUNNING");
  Advance(seconds(10));
  EXPECT_EQ(StateOf(id), "SUSPENDED");
  // Without auto-resume, ingress cannot wake it.
  EXPECT_EQ(model_->AuthorizeIngress(id, &token, 8080).status().code(), Code::kTransient);
  Advance(seconds(299));
  EXPECT_EQ(StateOf(id), "SUSPENDED");
  Advance(seconds(1));
  EXPECT_EQ(StateOf(id), "TERMINATED");
}

TEST_F(ModelLifecycleTest, SuspendedDurationZeroTerminatesOnSuspend) {
  const std::string id = RunningVm({{"idlePolicy",
                                     {{"maxIdleDurationSeconds", 60},
                                      {"suspendedDurationSeconds", 0},
                                      {"autoResumeEnabled", true}}}});
  Advance(seconds(60));
  EXPECT_EQ(StateOf(id), "TERMINATED");
}

TEST_F(ModelLifecycleTest, IngressAutoResumesASuspendedVm) {
  const std::string id = RunningVm({{"idlePolicy",
                                     {{"maxIdleDurationSeconds", 60},
                                      {"suspendedDurationSeconds", 3600},
                                      {"autoResumeEnabled", true}}}});
  Secret token = Token(id, json::array({{{"allPorts", json::object()}}}));
  Advance(seconds(61));
  ASSERT_EQ(StateOf(id), "SUSPENDED");
  log_.clear();
  auto grant = model_->AuthorizeIngress(id, &token, 8080);
  ASSERT_TRUE(grant.ok());
  EXPECT_TRUE(grant->wait_for_resume);
  Drain();
  EXPECT_EQ(StateOf(id), "RUNNING");
  EXPECT_EQ(log_, (std::vector<std::string>{"thaw", "hook:resume"}));
}

TEST_F(ModelLifecycleTest, TokensAreScopedToVmPortsAndExpiry) {
  const std::string a = RunningVm();
  const std::string b = RunningVm();
  Secret token = Token(
      a, json::array({{{"port", 8080}}, {{"range", {{"startPort", 9000}, {"endPort", 9010}}}}}), 5);
  EXPECT_TRUE(model_->AuthorizeIngress(a, &token, 8080).ok());
  EXPECT_TRUE(model_->AuthorizeIngress(a, &token, 9005).ok());
  EXPECT_EQ(model_->AuthorizeIngress(a, &token, 9011).status().code(), Code::kUnauthorized);
  EXPECT_EQ(model_->AuthorizeIngress(a, nullptr, 8080).status().code(), Code::kUnauthorized);
  Secret wrong("mvmtok_not-a-real-token");
  EXPECT_EQ(model_->AuthorizeIngress(a, &wrong, 8080).status().code(), Code::kUnauthorized);
  EXPECT_EQ(model_->AuthorizeIngress(b, &token, 8080).status().code(), Code::kUnauthorized);
  Advance(minutes(5));
  auto expired = model_->AuthorizeIngress(a, &token, 8080);
  EXPECT_EQ(expired.status().code(), Code::kUnauthorized);
  EXPECT_EQ(expired.status().message().find(token.Reveal()), std::string::npos);
}

TEST_F(ModelLifecycleTest, TerminateDuringRunOvertakesTheRunHook) {
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  const std::string id = (*out)["microvmId"];
  std::vector<Effect> first = model_->TakeDueEffects();  // start_program in flight
  ASSERT_EQ(first.size(), 1u);
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", id}}).ok());
  model_->Complete(first[0].id, EffectOutcome::Success());  // late outcome: ignored
  std::vector<Effect> ran = Drain();
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.back().kind, Effect::Kind::kStop);
  EXPECT_EQ(StateOf(id), "TERMINATED");
}

TEST_F(ModelLifecycleTest, ProgramExitTerminatesTheVm) {
  const std::string id = RunningVm();
  model_->ProgramExited(id, "exit status 3");
  Drain();
  auto got = Call("GetMicrovm", {{"microvmIdentifier", id}});
  EXPECT_EQ((*got)["state"], "TERMINATED");
  EXPECT_NE((*got)["stateReason"].get<std::string>().find("exit status 3"), std::string::npos);
}

// programExit keep (the stricter reading: AWS does not say what ends a VM whose application
// exited) leaves it RUNNING until its maximum duration, which durationTimeScale runs faster.
TEST_F(ModelLifecycleTest, WithProgramExitKeepTheVmRunsOnToItsScaledMaximumDuration) {
  MicrovmModelOptions options;
  ASSERT_TRUE(options.ApplyJson({{"programExit", "keep"}, {"durationTimeScale", 30}}).ok());
  EXPECT_FALSE(options.ApplyJson({{"programExit", "stop"}}).ok());
  EXPECT_FALSE(options.ApplyJson({{"durationTimeScale", 0}}).ok());
  Rebuild(options);
  const std::string id = RunningVm({{"maximumDurationInSeconds", 420}});
  model_->ProgramExited(id, "exit status 0");
  Drain();
  EXPECT_EQ(StateOf(id), "RUNNING");
  Advance(seconds(13));
  EXPECT_EQ(StateOf(id), "RUNNING");
  Advance(seconds(1));  // 420 s / 30
  auto got = Call("GetMicrovm", {{"microvmIdentifier", id}});
  EXPECT_EQ((*got)["state"], "TERMINATED");
  EXPECT_EQ((*got)["maximumDurationInSeconds"], 420) << "echoed as given";
  EXPECT_NE((*got)["stateReason"].get<std::string>().find("maximumDurationInSeconds (420)"),
            std::string::npos);
}

TEST_F(ModelLifecycleTest, LatencyDelaysEffectsUntilTheClockGetsThere) {
  MicrovmModelOptions options;
  options.latency.run.low = Duration(5000);
  Rebuild(options);
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  EXPECT_TRUE(model_->TakeDueEffects().empty());
  EXPECT_EQ(model_->NextDeadline(), clock_.Now() + Duration(5000));
  clock_.Advance(Duration(5000));
  EXPECT_EQ(Drain().size(), 3u);
  EXPECT_EQ(StateOf((*out)["microvmId"]), "RUNNING");
}

// runningBeforeHookMs: GetMicrovm says RUNNING while the /run (boot) or /resume hook is still to
// come, as the real service's eventually consistent state may.
TEST_F(ModelLifecycleTest, HungLaunchStaysPendingUntilTerminatedAndOnlyTheFirstNHang) {
  MicrovmModelOptions options;
  ASSERT_TRUE(options.ApplyJson({{"hangLaunches", 1}}).ok());
  Rebuild(options);
  const std::string hung = (*Call("RunMicrovm", {{"imageIdentifier", "img"}}))["microvmId"];
  const std::string next = (*Call("RunMicrovm", {{"imageIdentifier", "img"}}))["microvmId"];
  Drain();
  clock_.Advance(minutes(10));
  Drain();
  EXPECT_EQ(StateOf(hung), "PENDING");
  EXPECT_EQ(StateOf(next), "RUNNING");
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", hung}}).ok());
  Drain();
  EXPECT_EQ(StateOf(hung), "TERMINATED");
  EXPECT_FALSE(MicrovmModelOptions().ApplyJson({{"hangLaunches", -1}}).ok());
}

// bootFailuresByImage: the image's first N VMs fail while they boot (a class whose image keeps
// failing, then recovers: the runner set's circuit-breaker test); a wrong setting is refused.
TEST_F(ModelLifecycleTest, TheFirstNVmsOfAnImageFailToBootAndTheNextBoot) {
  MicrovmModelOptions options;
  ASSERT_TRUE(options.ApplyJson({{"bootFailuresByImage", {{"img", 2}}}}).ok());
  Rebuild(options);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back((*Call("RunMicrovm", {{"imageIdentifier", "img"}}))["microvmId"]);
  }
  Drain();
  clock_.Advance(minutes(1));
  Drain();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(StateOf(ids[i]), "TERMINATED") << i;
    auto vm = Call("GetMicrovm", {{"microvmIdentifier", ids[i]}});
    ASSERT_TRUE(vm.ok());
    EXPECT_NE(vm->value("stateReason", "").find("bootFailuresByImage"), std::string::npos)
        << vm->dump();
  }
  EXPECT_EQ(StateOf(ids[2]), "RUNNING");
  EXPECT_FALSE(MicrovmModelOptions().ApplyJson({{"bootFailuresByImage", {{"img", -1}}}}).ok());
  EXPECT_FALSE(MicrovmModelOptions().ApplyJson({{"bootFailuresByImage", 2}}).ok());
}

// ingressAnswerDelayMs: the answer to an ingress request of a named path is held (the runner
// set's dead-launch end-to-end test holds /v1/runner/start's); every other path answers at once,
// and a wrong setting is refused naming the knob.
TEST(ModelOptionsTest, IngressAnswerDelayHoldsOnlyTheNamedPathsAndRefusesWrongSettings) {
  MicrovmModelOptions options;
  EXPECT_EQ(options.IngressAnswerDelay("/v1/runner/start"), Duration(0)) << "off by default";
  ASSERT_TRUE(options.ApplyJson({{"ingressAnswerDelayMs", {{"/v1/runner/start", 8000}}}}).ok());
  EXPECT_EQ(options.IngressAnswerDelay("/v1/runner/start"), Duration(8000));
  EXPECT_EQ(options.IngressAnswerDelay("/v1/status"), Duration(0));
  EXPECT_EQ(options.IngressAnswerDelay("/v1/runner/start/"), Duration(0));
  for (const json& wrong : {json{{"v1/runner/start", 1}}, json{{"/v1/status?x=1", 1}},
                            json{{"/v1/status", -1}}, json{{"/v1/status", 3'600'001}},
                            json{{"/v1/status", "1000"}}, json{{"/v1/status", 1.5}}, json(8000)}) {
    Status s = MicrovmModelOptions().ApplyJson({{"ingressAnswerDelayMs", wrong}});
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << wrong.dump();
    EXPECT_NE(s.message().find("ingressAnswerDelayMs must map request paths"), std::string::npos)
        << s.message();
  }
}

TEST_F(ModelLifecycleTest, RunningBeforeHookReportsRunningBeforeRunAndResumeHooks) {
  MicrovmModelOptions options;
  options.running_before_hook = Duration(2000);
  Rebuild(options);
  auto out = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  const std::string id = (*out)["microvmId"];
  Drain();  // the program starts and /ready passes; /run waits 2 s
  EXPECT_EQ(StateOf(id), "RUNNING");
  EXPECT_EQ(log_, (std::vector<std::string>{"start_program", "hook:ready"}));
  clock_.Advance(Duration(2000));
  Drain();
  EXPECT_EQ(log_.back(), "hook:run");
  ASSERT_TRUE(Call("SuspendMicrovm", {{"microvmIdentifier", id}}).ok());
  Drain();
  ASSERT_EQ(StateOf(id), "SUSPENDED");
  log_.clear();
  ASSERT_TRUE(Call("ResumeMicrovm", {{"microvmIdentifier", id}}).ok());
  Drain();  // thawed; /resume waits 2 s
  EXPECT_EQ(StateOf(id), "RUNNING");
  EXPECT_EQ(log_, std::vector<std::string>{"thaw"});
  clock_.Advance(Duration(2000));
  Drain();
  EXPECT_EQ(log_, (std::vector<std::string>{"thaw", "hook:resume"}));
  EXPECT_EQ(StateOf(id), "RUNNING");
}

TEST_F(ModelLifecycleTest, ListPagesAndFilters) {
  MicrovmModelOptions options;
  options.rate_limits.clear();
  options.terminated_retention = minutes(60);  // the VM cut at is forgotten an hour after its end
  Rebuild(options);
  std::vector<std::string> launched;
  for (int i = 0; i < 7; ++i) launched.push_back(RunningVm());
  auto page1 = Call("ListMicrovms", {{"maxResults", 5}});
  ASSERT_EQ((*page1)["items"].size(), 5u);
  ASSERT_TRUE(page1->contains("nextToken"));
  auto page2 = Call("ListMicrovms", {{"maxResults", 5}, {"nextToken", (*page1)["nextToken"]}});
  ASSERT_EQ((*page2)["items"].size(), 2u);
  EXPECT_FALSE(page2->contains("nextToken"));
  // In the order they were launched, each once.
  std::vector<std::string> listed;
  for (const auto* page : {&*page1, &*page2}) {
    for (const auto& item : (*page)["items"]) listed.push_back(item["microvmId"]);
  }
  EXPECT_EQ(listed, launched);
  // A page that holds every match hands out no token.
  EXPECT_FALSE(Call("ListMicrovms", {{"maxResults", 7}})->contains("nextToken"));
  // A token stays good after the VM it was cut at is gone.
  ASSERT_TRUE(Call("TerminateMicrovm", {{"microvmIdentifier", launched[4]}}).ok());
  Drain();
  Advance(minutes(61));
  auto after = Call("ListMicrovms", {{"maxResults", 5}, {"nextToken", (*page1)["nextToken"]}});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ((*after)["items"].size(), 2u);
  EXPECT_EQ(Call("ListMicrovms", json::object())->at("items").size(), 6u);
  auto arn = (*page1)["items"][0]["imageArn"].get<std::string>();
  EXPECT_EQ(Call("ListMicrovms", {{"imageIdentifier", arn}})->at("items").size(), 6u);
  EXPECT_EQ(Call("ListMicrovms", {{"imageVersion", "2"}})->at("items").size(), 0u);
}

TEST_F(ModelLifecycleTest, BuildsMoveVersionsToActiveAndRunUsesTheLatestActive) {
  const json create = {{"name", "web"},
                       {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
                       {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
                       {"codeArtifact", {{"uri", "file:///tmp/app"}}},
                       {"hooks", {{"microvmImageHooks", {{"ready", "ENABLED"}}}}}};
  auto created = Call("CreateMicrovmImage", create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)["state"], "CREATING");
  EXPECT_EQ(Call("RunMicrovm", {{"imageIdentifier", "web"}}).status().code(), Code::kNotFound);
  Drain();
  EXPECT_EQ(log_,
            (std::vector<std::string>{"prepare_artifact", "start_program", "hook:ready", "stop"}));
  auto image = Call("GetMicrovmImage", {{"imageIdentifier", "web"}});
  EXPECT_EQ((*image)["state"], "CREATED");
  EXPECT_EQ((*image)["latestActiveImageVersion"], "1");
  auto builds = Call("ListMicrovmImageBuilds", {{"imageIdentifier", "web"}, {"imageVersion", "1"}});
  ASSERT_EQ((*builds)["items"].size(), 1u);
  EXPECT_EQ((*builds)["items"][0]["buildState"], "SUCCESSFUL");

  json update = create;
  update.erase("name");
  update["imageIdentifier"] = "web";
  ASSERT_TRUE(Call("UpdateMicrovmImage", update).ok());
  Drain();
  auto run = Call("RunMicrovm", {{"imageIdentifier", "web"}});
  EXPECT_EQ((*run)["imageVersion"], "2");
  ASSERT_TRUE(Call("UpdateMicrovmImageVersion",
                   {{"imageIdentifier", "web"}, {"imageVersion", "2"}, {"status", "INACTIVE"}})
                  .ok());
  run = Call("RunMicrovm", {{"imageIdentifier", "web"}});
  EXPECT_EQ((*run)["imageVersion"], "1");
  Drain();
  EXPECT_EQ(log_.back(), "hook:ready");  // only /ready is enabled on this image
}

TEST_F(ModelLifecycleTest, FailedReadyFailsTheBuildWithAReason) {
  failing_hooks_.insert(Hook::kReady);
  ASSERT_TRUE(Call("CreateMicrovmImage",
                   {{"name", "broken"},
                    {"baseImageArn", "arn:aws:lambda:us-east-1:aws:microvm-image:al2023"},
                    {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
                    {"codeArtifact", {{"uri", "file:///tmp/app"}}},
                    {"hooks", {{"microvmImageHooks", {{"ready", "ENABLED"}}}}}})
                  .ok());
  Drain();
  auto version =
      Call("GetMicrovmImageVersion", {{"imageIdentifier", "broken"}, {"imageVersion", "1"}});
  EXPECT_EQ((*version)["state"], "FAILED");
  EXPECT_NE((*version)["stateReason"].get<std::string>().find("/ready"), std::string::npos);
  EXPECT_EQ(log_.back(), "stop");
  auto image = Call("GetMicrovmImage", {{"imageIdentifier", "broken"}});
  EXPECT_EQ((*image)["state"], "CREATE_FAILED");
  EXPECT_EQ((*image)["latestFailedImageVersion"], "1");
}

}  // namespace
}  // namespace mvr::emulate::microvms
