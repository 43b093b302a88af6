#include "support/inprocess_platform.h"

#include <gtest/gtest.h>

#include "emulate/github/jit_config.h"

namespace mvr::testing {

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
  if (trace != nullptr) {
    const size_t host = path.find("://");
    const size_t slash = host == std::string::npos ? 0 : path.find('/', host + 3);
    trace->push_back(request.method + " " + path.substr(slash == std::string::npos ? 0 : slash));
  }
  Result<http::HttpResponse> answer = inner->Send(request);
  if (answer.ok()) {
    for (const auto& [name, value] : answer_headers) answer->headers.Set(name, value);
  }
  return answer;
}

EffectOutcome StandInSupervisor::Execute(const Effect& effect) {
  if (effect.kind == Effect::Kind::kCallHook && effect.hook == Hook::kResume) {
    if (on_resume_hook) on_resume_hook(effect.target);
    if (!fail_resume_hook.empty()) return EffectOutcome::Failure(fail_resume_hook);
    if (reconnect_on_resume) {
      for (const std::string& jit : jit_configs_of[effect.target]) Connect(Secret(jit));
    }
  }
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
  payload_of[effect.target] = *payload;
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
    return http::HttpResponse::Json(200, json{{"state", answer.first},
                                              {"currentRequestId", answer.second},
                                              {"jobStarted", status_job_started}}
                                             .dump());
  }
  if (request.method == "POST" && request.path == "/v1/runner/start") {
    const json body = json::parse(request.body, nullptr, false);
    control_nonces.push_back(body.is_object() ? body.value("nonce", "") : "");
    if (trace != nullptr) trace->push_back(request.method + " " + request.path);
    auto launched = payload_of.find(microvm_id);
    if (check_nonce && launched != payload_of.end() &&
        launched->second.control_nonce.Reveal() != control_nonces.back()) {
      return http::HttpResponse::Json(
          403, R"({"error":"wrong_nonce","message":"not this launch's nonce","state":"IDLE"})");
    }
    if (start_status / 100 == 2) {
      started_on.push_back(microvm_id);
      jit_configs.push_back(body.value("jit", ""));
      jit_configs_of[microvm_id].push_back(body.value("jit", ""));
      Connect(Secret(body.value("jit", "")));
    }
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

InProcessPlatform::InProcessPlatform() {
  m.logger.redactor().Add(kPlatformGithubToken);
  vms_api.trace = &trace;
  github_api.trace = &trace;
  guest.trace = &trace;
  Rebuild(DefaultOptions());
}

emulate::microvms::InProcessMicrovmsOptions InProcessPlatform::DefaultOptions() {
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
  o.front.sigv4_keys = {{kPlatformAccessKeyId, kPlatformSecretKey}};
  o.images = {kPlatformImage};
  return o;
}

void InProcessPlatform::Rebuild(emulate::microvms::InProcessMicrovmsOptions options) {
  github_client.reset();
  vms_client.reset();
  microvms =
      std::make_unique<emulate::microvms::InProcessMicrovms>(m.seam, std::move(options), &guest);
  emulate::github::InProcessGithubOptions github_options;
  github_options.model = github_model_options;
  github_options.model.repositories = {kPlatformRepository};
  github_options.auth.pats = {Secret(kPlatformGithubToken)};
  github_service = emulate::github::InProcessGithub::Create(github_options, m.seam).value();
  github_model = &github_service->model();

  aws::MicrovmsClientOptions vms_options;
  vms_options.endpoint = {microvms->api_url(), "us-east-1", "lambda", "test"};
  vms_api.inner = &microvms->api();
  github_api.inner = &github_service->api();
  vms_client = std::make_unique<aws::MicrovmsClient>(
      vms_options, aws::MicrovmsClientDeps{vms_api, credentials, m.seam});
  github::GitHubClientOptions github_client_options;
  github_client_options.rest.base_url = emulate::github::InProcessGithub::kApiUrl;
  github_client = github::GitHubClient::Create(
                      github_api, m.clock, github::GitHubAuth::Token(Secret(kPlatformGithubToken)),
                      github_client_options, &m.logger)
                      .value();
}

std::string InProcessPlatform::VmState(const std::string& microvm_id) {
  Result<json> vm = microvms->Describe(microvm_id);
  return vm.ok() ? vm->value("state", "") : vm.status().ToString();
}

std::string InProcessPlatform::VmReason(const std::string& microvm_id) {
  Result<json> vm = microvms->Describe(microvm_id);
  return vm.ok() ? vm->value("stateReason", "") : "";
}

std::vector<std::string> InProcessPlatform::VmIds() { return VmIdsIn(""); }

std::vector<std::string> InProcessPlatform::VmIdsIn(const std::string& state) {
  std::vector<std::string> ids;
  microvms->WithModel([&](emulate::microvms::MicrovmModel& model) {
    std::string next;
    do {
      json in = json::object();
      if (!next.empty()) in["nextToken"] = next;
      Result<json> list = model.Invoke("ListMicrovms", in);
      if (!list.ok()) break;
      for (const json& vm : (*list)["items"]) {
        if (state.empty() || vm.value("state", "") == state)
          ids.push_back(vm.value("microvmId", ""));
      }
      next = list->value("nextToken", "");
    } while (!next.empty());
    return 0;
  });
  return ids;
}

Result<supervisor::RunPayload> InProcessPlatform::PayloadOf(const std::string& microvm_id) {
  auto it = guest.payload_of.find(microvm_id);
  if (it == guest.payload_of.end()) return NotFound("no /run hook reached " + microvm_id);
  return it->second;
}

std::string InProcessPlatform::ClientTokenOf(const std::string& microvm_id) {
  for (const auto& call : microvms->calls()) {
    if (call.operation == "RunMicrovm" && call.microvm_id == microvm_id) return call.client_token;
  }
  return "";
}

std::vector<emulate::github::Runner> InProcessPlatform::Runners() {
  return github_model->ListAllRunners();
}

bool InProcessPlatform::RunnerExists(int64_t runner_id) {
  for (const auto& r : Runners()) {
    if (r.id == runner_id) return true;
  }
  return false;
}

Result<emulate::github::Runner> InProcessPlatform::RunnerNamed(const std::string& name) {
  for (const auto& r : Runners()) {
    if (r.name == name) return r;
  }
  return NotFound("GitHub has no runner named " + name);
}

int InProcessPlatform::Calls(const std::string& operation, const std::string& microvm_id) {
  int n = 0;
  for (const auto& call : microvms->calls()) {
    n += call.operation == operation && (microvm_id.empty() || call.microvm_id == microvm_id);
  }
  return n;
}

std::string InProcessPlatform::PendingVm(const json& extra) {
  json in = {
      {"imageIdentifier", kPlatformImage},
      {"runHookPayload", supervisor::EncodeRunPayload(supervisor::RunPayload::Warm()).value()}};
  in.update(extra);
  Result<json> out = microvms->WithModel(
      [&](emulate::microvms::MicrovmModel& model) { return model.Invoke("RunMicrovm", in); });
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)["microvmId"].get<std::string>() : "";
}

std::string InProcessPlatform::RunningVm(const json& extra) {
  const std::string id = PendingVm(extra);
  if (id.empty()) return "";
  m.clock.Advance(std::chrono::seconds(10));
  microvms->RunDue();
  EXPECT_EQ(VmState(id), "RUNNING");
  return id;
}

std::string InProcessPlatform::SuspendedVm() {
  const std::string id = RunningVm();
  SuspendVm(id);
  return id;
}

void InProcessPlatform::SuspendVm(const std::string& id) {
  Result<json> suspended = microvms->WithModel([&](emulate::microvms::MicrovmModel& model) {
    return model.Invoke("SuspendMicrovm", {{"microvmIdentifier", id}});
  });
  EXPECT_TRUE(suspended.ok()) << suspended.status().ToString();
  m.clock.Advance(std::chrono::seconds(3));
  microvms->RunDue();
  EXPECT_EQ(VmState(id), "SUSPENDED");
}

void InProcessPlatform::TerminateVm(const std::string& id) {
  Result<json> terminated = microvms->WithModel([&](emulate::microvms::MicrovmModel& model) {
    return model.Invoke("TerminateMicrovm", {{"microvmIdentifier", id}});
  });
  EXPECT_TRUE(terminated.ok()) << terminated.status().ToString();
  m.clock.Advance(std::chrono::seconds(1));
  microvms->RunDue();
  EXPECT_EQ(VmState(id), "TERMINATED");
}

std::string InProcessPlatform::NewImageVersion() {
  Result<json> added = microvms->WithModel([&](emulate::microvms::MicrovmModel& model) {
    Result<json> first = model.Invoke("GetMicrovmImageVersion",
                                      {{"imageIdentifier", kPlatformImage}, {"imageVersion", "1"}});
    if (!first.ok()) return first;
    json in = {
        {"imageIdentifier", kPlatformImage},
        {"codeArtifact", {{"uri", std::string("s3://mvr-platform/") + kPlatformImage + ".zip"}}}};
    for (const char* key : {"baseImageArn", "buildRoleArn"}) {
      if (first->contains(key)) in[key] = (*first)[key];
    }
    return model.Invoke("UpdateMicrovmImage", in);
  });
  EXPECT_TRUE(added.ok()) << added.status().ToString();
  if (!added.ok()) return "";
  m.clock.Advance(std::chrono::seconds(1));
  microvms->RunDue();
  return added->value("imageVersion", "");
}

emulate::github::Runner InProcessPlatform::OnlineRunner(const std::string& name, bool busy,
                                                        std::vector<std::string> labels) {
  using emulate::github::Scope;
  emulate::github::JitRequest request;
  request.name = name;
  request.runner_group_id = 1;
  request.labels = labels;
  auto registered = github_model->GenerateJitConfig(Scope::Repo("octo", "app"), request).value();
  auto contents = emulate::github::DecodeJitConfig(registered.encoded_jit_config).value();
  EXPECT_TRUE(github_model->RunnerConnect(contents.credential).ok());
  if (busy) {
    QueueJob(labels);
    github_model->Tick();
  }
  return github_model->GetRunner(Scope::Repo("octo", "app"), registered.runner.id).value();
}

void InProcessPlatform::ConnectRunnersOf(const std::string& microvm_id, bool refusal_expected) {
  for (const std::string& jit : guest.jit_configs_of[microvm_id]) {
    Result<emulate::github::JitConfigContents> contents =
        emulate::github::DecodeJitConfig(Secret(jit));
    EXPECT_TRUE(contents.ok());
    if (contents.ok()) {
      EXPECT_EQ(github_model->RunnerConnect(contents->credential).ok(), !refusal_expected);
    }
  }
}

emulate::github::Runner InProcessPlatform::RegisteredRunner(const std::string& name,
                                                            std::vector<std::string> labels) {
  emulate::github::JitRequest request;
  request.name = name;
  request.runner_group_id = 1;
  request.labels = std::move(labels);
  return github_model->GenerateJitConfig(emulate::github::Scope::Repo("octo", "app"), request)
      .value()
      .runner;
}

emulate::github::Job InProcessPlatform::QueueJob(std::vector<std::string> labels) {
  emulate::github::JobSpec job;
  job.repository = kPlatformRepository;
  job.labels = std::move(labels);
  job.steps = {"true"};
  Result<emulate::github::Job> queued = github_model->QueueJob(job);
  EXPECT_TRUE(queued.ok()) << queued.status().ToString();
  return queued.ok() ? *queued : emulate::github::Job{};
}

}  // namespace mvr::testing
