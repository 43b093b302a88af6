#include "tests/action/inprocess_world.h"

#include "emulate/github/jit_config.h"

namespace mvr::action::testing {

using emulate::microvms::Effect;
using emulate::microvms::EffectOutcome;
using emulate::microvms::Hook;
using nlohmann::json;

Result<http::HttpResponse> RefusingApi::Send(const http::HttpRequest& request) {
  const std::string path = request.url.substr(0, request.url.find('?'));
  for (Refusal& r : refusals) {
    const bool suffix =
        path.size() >= r.path_suffix.size() &&
        path.compare(path.size() - r.path_suffix.size(), std::string::npos, r.path_suffix) == 0;
    if (request.method != r.method || !suffix || r.times == 0) continue;
    if (r.carried_out) {
      // Only the answer of a request the service carried out is lost; a refusal comes through.
      Result<http::HttpResponse> answer = inner->Send(request);
      if (!answer.ok() || answer->status / 100 != 2) return answer;
    }
    if (r.times > 0) --r.times;
    http::HttpResponse refused =
        http::HttpResponse::Json(r.status, json{{"message", r.message}}.dump());
    if (!r.error_type.empty()) refused.headers.Set("x-amzn-ErrorType", r.error_type);
    return refused;
  }
  return inner->Send(request);
}

EffectOutcome StandInSupervisor::Execute(const Effect& effect) {
  if (effect.kind != Effect::Kind::kCallHook || effect.hook != Hook::kRun) {
    return emulate::microvms::EffectDriver::Succeed(effect);
  }
  if (!fail_run_hook.empty()) return EffectOutcome::Failure(fail_run_hook);
  // The emulator's default /run body is the payload itself; an envelope holds it in a member.
  const json body = json::parse(effect.body.Reveal(), nullptr, false);
  Result<supervisor::RunPayload> payload = supervisor::DecodeRunPayload(
      body.is_object() ? body.value("runHookPayload", "") : effect.body.Reveal());
  if (!payload.ok()) return EffectOutcome::Failure(payload.status().message());
  if (payload->mode == supervisor::LaunchMode::kEphemeral) Connect(payload->jit_config);
  payloads.push_back(*std::move(payload));
  return EffectOutcome::Success();
}

http::HttpResponse StandInSupervisor::Serve(const std::string& microvm_id, int port,
                                            const http::ServerRequest& request) {
  control_paths.push_back(request.method + " " + request.path + " @" + microvm_id + ":" +
                          std::to_string(port));
  for (const auto& [name, value] : request.headers) {
    if (name.size() >= 12 &&
        (name.rfind("x-aws-proxy-", 0) == 0 || name.rfind("X-aws-proxy-", 0) == 0)) {
      saw_proxy_header = true;
    }
  }
  if (request.method == "GET" && request.path == "/v1/status") {
    std::pair<std::string, std::string> answer{status_state, status_request_id};
    if (!status_script.empty()) {
      answer = status_script.front();
      status_script.pop_front();
    }
    return http::HttpResponse::Json(
        200, json{{"state", answer.first}, {"currentRequestId", answer.second}}.dump());
  }
  if (request.method == "POST" && request.path == "/v1/runner/start") {
    const json body = json::parse(request.body, nullptr, false);
    control_nonces.push_back(body.is_object() ? body.value("nonce", "") : "");
    if (start_status / 100 == 2) Connect(Secret(body.value("jit", "")));
    return http::HttpResponse::Json(start_status, start_body);
  }
  return http::HttpResponse::Json(404, R"({"error":"not_found"})");
}

void StandInSupervisor::Connect(const Secret& jit_config) {
  if (!runners_connect || github_ == nullptr) return;
  Result<emulate::github::JitConfigContents> contents =
      emulate::github::DecodeJitConfig(jit_config);
  if (contents.ok()) (void)github_->RunnerConnect(contents->credential);
}

emulate::microvms::InProcessMicrovmsOptions InProcessActionTest::Options() {
  emulate::microvms::InProcessMicrovmsOptions o;
  using emulate::microvms::LatencyDistribution;
  auto fixed = [](int64_t ms) {
    LatencyDistribution d;
    d.low = Duration(ms);
    return d;
  };
  o.model.latency.run = fixed(9'900);
  o.model.latency.suspend = fixed(2'070);
  o.model.latency.resume = fixed(4'550);
  o.front.sigv4_keys = {{kAccessKeyId, kSecretKey}};
  return o;
}

void InProcessActionTest::Rebuild(emulate::microvms::InProcessMicrovmsOptions options) {
  github_.reset();
  vms_.reset();
  microvms_ =
      std::make_unique<emulate::microvms::InProcessMicrovms>(seam_, std::move(options), &guest_);
  emulate::github::InProcessGithubOptions github_options;
  github_options.model.repositories = {"octo/app"};
  github_options.auth.pats = {Secret(kGithubToken)};
  github_service_ = emulate::github::InProcessGithub::Create(github_options, seam_).value();
  github_model_ = &github_service_->model();

  aws::MicrovmsClientOptions vms_options;
  vms_options.endpoint = {microvms_->api_url(), "us-east-1", "lambda", "test"};
  vms_api_.inner = &microvms_->api();
  github_api_.inner = &github_service_->api();
  vms_ = std::make_unique<aws::MicrovmsClient>(
      vms_options, aws::MicrovmsClientDeps{vms_api_, credentials_, seam_});
  github::GitHubClientOptions github_client_options;
  github_client_options.rest.base_url = emulate::github::InProcessGithub::kApiUrl;
  github_ = github::GitHubClient::Create(github_api_, clock_,
                                         github::GitHubAuth::Token(Secret(kGithubToken)),
                                         github_client_options, &logger_)
                .value();
}

std::string InProcessActionTest::VmState(const std::string& microvm_id) {
  Result<json> vm = microvms_->Describe(microvm_id);
  return vm.ok() ? vm->value("state", "") : vm.status().ToString();
}

std::string InProcessActionTest::VmReason(const std::string& microvm_id) {
  Result<json> vm = microvms_->Describe(microvm_id);
  return vm.ok() ? vm->value("stateReason", "") : "";
}

std::vector<std::string> InProcessActionTest::VmIds() {
  std::vector<std::string> ids;
  microvms_->WithModel([&](emulate::microvms::MicrovmModel& model) {
    Result<json> list = model.Invoke("ListMicrovms", json::object());
    if (list.ok()) {
      for (const json& vm : (*list)["items"]) ids.push_back(vm.value("microvmId", ""));
    }
    return 0;
  });
  return ids;
}

std::vector<emulate::github::Runner> InProcessActionTest::Runners() {
  return github_model_->ListAllRunners();
}

bool InProcessActionTest::RunnerExists(int64_t runner_id) {
  for (const auto& r : Runners()) {
    if (r.id == runner_id) return true;
  }
  return false;
}

int InProcessActionTest::Calls(const std::string& operation) {
  int n = 0;
  for (const auto& call : microvms_->calls()) n += call.operation == operation ? 1 : 0;
  return n;
}

std::string InProcessActionTest::RunningVm(const json& extra) {
  json in = {
      {"imageIdentifier", "img-1"},
      {"runHookPayload", supervisor::EncodeRunPayload(supervisor::RunPayload::Warm()).value()}};
  in.update(extra);
  Result<json> out = microvms_->WithModel(
      [&](emulate::microvms::MicrovmModel& model) { return model.Invoke("RunMicrovm", in); });
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return "";
  const std::string id = (*out)["microvmId"];
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(VmState(id), "RUNNING");
  return id;
}

std::string InProcessActionTest::SuspendedVm() {
  const std::string id = RunningVm();
  Result<json> suspended = microvms_->WithModel([&](emulate::microvms::MicrovmModel& model) {
    return model.Invoke("SuspendMicrovm", {{"microvmIdentifier", id}});
  });
  EXPECT_TRUE(suspended.ok()) << suspended.status().ToString();
  clock_.Advance(std::chrono::seconds(3));
  EXPECT_EQ(VmState(id), "SUSPENDED");
  return id;
}

ServerHandle InProcessActionTest::Handle(const std::string& microvm_id, TimePoint reuse_deadline) {
  ServerHandle h;
  h.microvm_id = microvm_id;
  h.region = "us-east-1";
  h.repository_id = "123";
  h.server_name = "proof";
  h.started_at = reuse_deadline - std::chrono::seconds(5'400);
  h.max_lifetime_seconds = 7'200;
  h.reuse_deadline = reuse_deadline;
  h.runner_id = 11;
  h.runner_name = "lambda-mvm-old";
  return h;
}

emulate::github::Runner InProcessActionTest::OnlineRunner(const std::string& name, bool busy) {
  using emulate::github::Scope;
  emulate::github::JitRequest request;
  request.name = name;
  request.runner_group_id = 1;
  request.labels = {"self-hosted", "lambda-mvm"};
  auto registered = github_model_->GenerateJitConfig(Scope::Repo("octo", "app"), request).value();
  auto contents = emulate::github::DecodeJitConfig(registered.encoded_jit_config).value();
  EXPECT_TRUE(github_model_->RunnerConnect(contents.credential).ok());
  if (busy) {
    emulate::github::JobSpec job;
    job.repository = "octo/app";
    job.labels = {"self-hosted", "lambda-mvm"};
    job.steps = {"true"};
    Result<emulate::github::Job> queued = github_model_->QueueJob(job);
    EXPECT_TRUE(queued.ok()) << queued.status().ToString();
    github_model_->Tick();
  }
  return github_model_->GetRunner(Scope::Repo("octo", "app"), registered.runner.id).value();
}

void InProcessActionTest::ExpectNoSecrets(const Status& s) {
  std::vector<std::string> secrets = secrets_;
  secrets.push_back(kGithubToken);
  secrets.push_back(kSecretKey);
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    EXPECT_EQ(s.message().find(secret), std::string::npos) << s.message();
    EXPECT_EQ(sink_.Joined().find(secret), std::string::npos);
  }
}

}  // namespace mvr::action::testing
