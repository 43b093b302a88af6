// Every request the MicroVMs client sends fits the service model (method, path, input shape),
// and responses built from the model's output members parse, every member read.
#include <gtest/gtest.h>

#include <functional>
#include <regex>

#include "aws/microvms/microvms_json.h"
#include "aws/microvms_test_fixture.h"

namespace mvr::aws::testing {
namespace {

using nlohmann::json;

// A value for `shape_name` with every member filled in, valid for the model's constraints.
json Sample(const std::string& shape_name, const std::string& member) {
  const json& shape = Model().raw()["shapes"][shape_name];
  const std::string type = shape["type"];
  if (type == "structure") {
    json out = json::object();
    for (const auto& [name, def] : shape["members"].items()) {
      if (def.contains("location")) continue;
      out[name] = Sample(def["shape"], name);
      if (shape.value("union", false)) break;  // one member only
    }
    return out;
  }
  if (type == "list") return json::array({Sample(shape["member"]["shape"], member)});
  if (type == "map") {
    const std::string key = shape["key"]["shape"] == "AuthTokenKey" ? "X-aws-proxy-auth" : "key1";
    return json{{key, Sample(shape["value"]["shape"], member)}};
  }
  if (type == "string") {
    if (shape.contains("enum")) return shape["enum"][0];
    if (shape_name == "RoleArn") return "arn:aws:iam::123456789012:role/mvr-build";
    if (shape_name == "MicrovmImageArn") {
      return "arn:aws:lambda:us-east-1:123456789012:microvm-image:runner";
    }
    std::string text = "v-" + member;
    if (shape.contains("max") && text.size() > shape["max"].get<size_t>()) {
      text.resize(shape["max"].get<size_t>());
    }
    return text;
  }
  if (type == "integer") return shape.contains("min") ? shape["min"].get<int>() + 1 : 7;
  if (type == "long") return 123456789012LL;
  if (type == "boolean") return true;
  if (type == "timestamp") return 1767225600.5;
  ADD_FAILURE() << "no sample for type " << type;
  return nullptr;
}

json SampleOutput(const std::string& operation) {
  return Sample(Model().FindOperation(operation)->output_shape, "");
}

// Parses `body` in strict mode with the parser the client uses for `operation`.
Status StrictParse(const std::string& operation, const json& body) {
  static const std::map<std::string, std::function<Status(const json&)>> kParsers = {
      {"RunMicrovm", [](const json& b) { return ParseMicrovm(b, true).status(); }},
      {"GetMicrovm", [](const json& b) { return ParseMicrovm(b, true).status(); }},
      {"ListMicrovms", [](const json& b) { return ParseListMicrovms(b, true).status(); }},
      {"CreateMicrovmAuthToken",
       [](const json& b) { return ParseMicrovmAuthToken(b, true).status(); }},
      {"CreateMicrovmImage",
       [](const json& b) { return ParseMicrovmImageChange(b, true).status(); }},
      {"UpdateMicrovmImage",
       [](const json& b) { return ParseMicrovmImageChange(b, true).status(); }},
      {"GetMicrovmImage", [](const json& b) { return ParseMicrovmImage(b, true).status(); }},
      {"ListMicrovmImages", [](const json& b) { return ParseListMicrovmImages(b, true).status(); }},
      {"ListMicrovmImageVersions",
       [](const json& b) { return ParseListMicrovmImageVersions(b, true).status(); }},
      {"GetMicrovmImageVersion",
       [](const json& b) { return ParseMicrovmImageVersion(b, true).status(); }},
      {"UpdateMicrovmImageVersion",
       [](const json& b) { return ParseMicrovmImageVersion(b, true).status(); }},
      {"DeleteMicrovmImageVersion",
       [](const json& b) { return ParseDeleteMicrovmImageVersion(b, true).status(); }},
      {"ListMicrovmImageBuilds",
       [](const json& b) { return ParseListMicrovmImageBuilds(b, true).status(); }},
      {"GetMicrovmImageBuild",
       [](const json& b) { return ParseMicrovmImageBuild(b, true).status(); }},
  };
  auto it = kParsers.find(operation);
  if (it == kParsers.end()) return NotFound("no parser for " + operation);
  return it->second(body);
}

ImageConfiguration FullConfig() {
  ImageConfiguration c;
  c.base_image_arn = "arn:aws:lambda:us-east-1::microvm-image:al2023";
  c.base_image_version = "1";
  c.build_role_arn = "arn:aws:iam::123456789012:role/mvr-build";
  c.description = "runner image";
  c.code_artifact_uri = "s3://bucket/runner.zip";
  c.logging = MicrovmLogging{false, "/mvr/images", "build"};
  c.egress_network_connectors = {"egress-1"};
  c.cpu_architectures = {"ARM_64"};
  c.minimum_memory_in_mib = 4096;
  c.additional_os_capabilities = {"ALL"};
  Hooks hooks;
  hooks.port = 9000;
  hooks.run = HookSetting{true, 30};
  hooks.resume = HookSetting{true, 10};
  hooks.suspend = HookSetting{true, 20};
  hooks.terminate = HookSetting{false, std::nullopt};
  hooks.ready = HookSetting{true, 600};
  hooks.validate = HookSetting{true, 300};
  c.hooks = hooks;
  c.environment_variables.emplace("MVR_MODE", Secret("warm"));
  return c;
}

// Calls each operation of MicrovmService once, with every optional member set.
std::vector<std::pair<std::string, std::function<Status(MicrovmService&)>>> AllCalls() {
  return {
      {"RunMicrovm",
       [](MicrovmService& s) {
         RunMicrovmRequest r;
         r.image_identifier = "runner-image";
         r.image_version = "3";
         r.execution_role_arn = "arn:aws:iam::123456789012:role/mvr-runner";
         r.idle_policy = IdlePolicy{300, 600, true};
         r.log_group = "/mvr/runners";
         r.run_hook_payload = Secret("v1.payload-fixture");
         r.maximum_duration_in_seconds = 7200;
         r.ingress_network_connectors = {"in-1"};
         r.egress_network_connectors = {"out-1"};
         return s.RunMicrovm(r).status();
       }},
      {"GetMicrovm", [](MicrovmService& s) { return s.GetMicrovm("mvm-1").status(); }},
      {"ListMicrovms",
       [](MicrovmService& s) {
         ListMicrovmsRequest r;
         r.image_identifier = "runner-image";
         r.image_version = "3";
         r.max_results = 50;
         r.next_token = "page/2+more";
         return s.ListMicrovms(r).status();
       }},
      {"SuspendMicrovm", [](MicrovmService& s) { return s.SuspendMicrovm("mvm-1"); }},
      {"ResumeMicrovm", [](MicrovmService& s) { return s.ResumeMicrovm("mvm-1"); }},
      {"TerminateMicrovm", [](MicrovmService& s) { return s.TerminateMicrovm("mvm-1"); }},
      {"CreateMicrovmAuthToken",
       [](MicrovmService& s) {
         CreateMicrovmAuthTokenRequest r;
         r.microvm_identifier = "mvm-1";
         r.expiration_in_minutes = 15;
         r.allowed_ports = {PortSpecification::Port(8080), PortSpecification::Range(9000, 9010),
                            PortSpecification::AllPorts()};
         return s.CreateMicrovmAuthToken(r).status();
       }},
      {"CreateMicrovmImage",
       [](MicrovmService& s) {
         CreateMicrovmImageRequest r;
         r.name = "runner";
         r.config = FullConfig();
         r.tags = {{"team", "ci"}};
         return s.CreateMicrovmImage(r).status();
       }},
      {"GetMicrovmImage", [](MicrovmService& s) { return s.GetMicrovmImage("runner").status(); }},
      {"UpdateMicrovmImage",
       [](MicrovmService& s) {
         UpdateMicrovmImageRequest r;
         r.image_identifier = "runner";
         r.config = FullConfig();
         r.client_token = "update-1";
         return s.UpdateMicrovmImage(r).status();
       }},
      {"ListMicrovmImages",
       [](MicrovmService& s) {
         ListMicrovmImagesRequest r;
         r.name_filter = "run";
         r.max_results = 10;
         r.next_token = "t";
         return s.ListMicrovmImages(r).status();
       }},
      {"ListMicrovmImageVersions",
       [](MicrovmService& s) {
         ListMicrovmImageVersionsRequest r;
         r.image_identifier = "runner";
         r.max_results = 5;
         return s.ListMicrovmImageVersions(r).status();
       }},
      {"GetMicrovmImageVersion",
       [](MicrovmService& s) { return s.GetMicrovmImageVersion("runner", "3").status(); }},
      {"UpdateMicrovmImageVersion",
       [](MicrovmService& s) {
         UpdateMicrovmImageVersionRequest r;
         r.image_identifier = "runner";
         r.image_version = "3";
         r.status = ImageVersionStatus::kInactive;
         return s.UpdateMicrovmImageVersion(r).status();
       }},
      {"DeleteMicrovmImageVersion",
       [](MicrovmService& s) { return s.DeleteMicrovmImageVersion("runner", "2").status(); }},
      {"ListMicrovmImageBuilds",
       [](MicrovmService& s) {
         ListMicrovmImageBuildsRequest r;
         r.image_identifier = "runner";
         r.image_version = "3";
         r.architecture = "ARM_64";
         r.chipset = "GRAVITON";
         r.chipset_generation = "4";
         r.max_results = 50;
         return s.ListMicrovmImageBuilds(r).status();
       }},
      {"GetMicrovmImageBuild",
       [](MicrovmService& s) { return s.GetMicrovmImageBuild("runner", "3", "b-1").status(); }},
  };
}

TEST_F(MicrovmsClientTest, EveryRequestFitsTheModel) {
  http_.SetHandler([](const http::HttpRequest& request) -> Result<http::HttpResponse> {
    SeenRequest seen = ReadBack(request);
    const auto* op = Model().FindOperation(seen.operation);
    if (op == nullptr) return http::HttpResponse::Json(404, "{}");
    return http::HttpResponse::Json(op->success_code, SampleOutput(seen.operation).dump());
  });
  for (const auto& [operation, call] : AllCalls()) {
    SCOPED_TRACE(operation);
    const size_t before = http_.requests().size();
    Status status = call(client_);
    EXPECT_TRUE(status.ok()) << status.ToString();
    ASSERT_EQ(http_.requests().size(), before + 1);
    const http::HttpRequest& request = LastRequest();
    SeenRequest seen = ReadBack(request);
    EXPECT_EQ(seen.error, "");
    EXPECT_EQ(seen.operation, operation);
    EXPECT_EQ(request.method, Model().FindOperation(operation)->method);
    Status valid = Model().ValidateInput(operation, seen.input);
    EXPECT_TRUE(valid.ok()) << valid.ToString() << "\n" << seen.input.dump();
    auto auth = request.headers.Get("Authorization");
    ASSERT_TRUE(auth.has_value());
    EXPECT_NE(auth->find("/us-east-1/lambda/aws4_request"), std::string::npos) << *auth;
  }
  EXPECT_EQ(AllCalls().size(), 17u);
}

TEST_F(MicrovmsClientTest, UriLabelsAndQueryValuesArePercentEncoded) {
  AnswerAll(200, SampleOutput("GetMicrovm"));
  ASSERT_TRUE(client_.GetMicrovm("mvm/1 x").ok());
  EXPECT_EQ(LastRequest().url,
            "https://lambda.us-east-1.amazonaws.com/2025-09-09/microvms/mvm%2F1%20x");
  EXPECT_EQ(ReadBack(LastRequest()).input["microvmIdentifier"], "mvm/1 x");

  AnswerAll(200, SampleOutput("ListMicrovms"));
  ListMicrovmsRequest list;
  list.next_token = "a+b/c=";
  list.max_results = 25;
  ASSERT_TRUE(client_.ListMicrovms(list).ok());
  EXPECT_EQ(ReadBack(LastRequest()).input["nextToken"], "a+b/c=");
  EXPECT_EQ(ReadBack(LastRequest()).input["maxResults"], "25");
  EXPECT_TRUE(LastRequest().body.empty());
}

TEST_F(MicrovmsClientTest, RunMicrovmSendsTheModelsMemberNames) {
  AnswerAll(200, SampleOutput("RunMicrovm"));
  RunMicrovmRequest r;
  r.image_identifier = "img";
  r.log_group = "/mvr/runners";
  r.idle_policy = IdlePolicy{120, 30, false};
  r.run_hook_payload = Secret("payload");
  r.maximum_duration_in_seconds = 28800;
  r.client_token = "fixed-token";
  ASSERT_TRUE(client_.RunMicrovm(r).ok());
  json body = json::parse(LastRequest().body);
  EXPECT_EQ(body["imageIdentifier"], "img");
  EXPECT_EQ(body["logging"], json::parse(R"({"cloudWatch":{"logGroup":"/mvr/runners"}})"));
  EXPECT_EQ(body["idlePolicy"]["maxIdleDurationSeconds"], 120);
  EXPECT_EQ(body["idlePolicy"]["autoResumeEnabled"], false);
  EXPECT_EQ(body["runHookPayload"], "payload");
  EXPECT_EQ(body["maximumDurationInSeconds"], 28800);
  EXPECT_EQ(body["clientToken"], "fixed-token");
  EXPECT_EQ(LastRequest().headers.GetOr("Content-Type", ""), "application/json");
}

TEST_F(MicrovmsClientTest, GeneratesAClientTokenWhenNoneIsGiven) {
  AnswerAll(200, SampleOutput("RunMicrovm"));
  RunMicrovmRequest r;
  r.image_identifier = "img";
  ASSERT_TRUE(client_.RunMicrovm(r).ok());
  const std::string token = json::parse(LastRequest().body)["clientToken"];
  EXPECT_TRUE(std::regex_match(
      token, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << token;
  ASSERT_TRUE(client_.RunMicrovm(r).ok());
  EXPECT_NE(json::parse(LastRequest().body)["clientToken"], token);
}

TEST(MicrovmsResponseTest, EveryOutputBuiltFromTheModelParsesWithEveryMemberRead) {
  for (const auto& [operation, unused] : AllCalls()) {
    const auto* op = Model().FindOperation(operation);
    ASSERT_NE(op, nullptr);
    json sample = SampleOutput(operation);
    SCOPED_TRACE(operation + " " + sample.dump());
    Status fits = Model().ValidateOutput(operation, sample);
    EXPECT_TRUE(fits.ok()) << fits.ToString();
    if (sample.empty()) continue;  // Suspend/Resume/Terminate return {}
    Status parsed = StrictParse(operation, sample);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString();
  }
}

TEST_F(MicrovmsClientTest, ParsesAMicrovmByTheModelsNames) {
  json body = {{"microvmId", "mvm-9"},
               {"state", "SUSPENDED"},
               {"endpoint", "mvm-9.example.on.aws"},
               {"imageArn", "arn:aws:lambda:us-east-1:123456789012:microvm-image:runner"},
               {"imageVersion", "4"},
               {"maximumDurationInSeconds", 7200},
               {"startedAt", 1767225600.25},
               {"terminatedAt", 1767229200},
               {"stateReason", "idle"},
               {"idlePolicy",
                {{"maxIdleDurationSeconds", 60},
                 {"suspendedDurationSeconds", 5},
                 {"autoResumeEnabled", true}}},
               {"futureMember", {{"ignored", true}}}};
  ASSERT_TRUE(Model().ValidateOutput("GetMicrovm", body).ok());
  AnswerAll(200, body);
  auto vm = client_.GetMicrovm("mvm-9");
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(vm->microvm_id, "mvm-9");
  EXPECT_EQ(vm->state, MicrovmState::kSuspended);
  EXPECT_EQ(vm->endpoint, "mvm-9.example.on.aws");
  EXPECT_EQ(vm->image_version, "4");
  EXPECT_EQ(vm->maximum_duration_in_seconds, 7200);
  ASSERT_TRUE(vm->started_at.has_value());
  EXPECT_EQ(vm->started_at->time_since_epoch().count(), 1767225600250);
  EXPECT_EQ(ToUnixSeconds(*vm->terminated_at), 1767229200);
  EXPECT_EQ(vm->state_reason, "idle");
  ASSERT_TRUE(vm->idle_policy.has_value());
  EXPECT_EQ(vm->idle_policy->suspended_duration_seconds, 5);
  EXPECT_TRUE(vm->idle_policy->auto_resume_enabled);
}

TEST_F(MicrovmsClientTest, UnknownStatesAreKeptAsUnknown) {
  json body = SampleOutput("GetMicrovm");
  body["state"] = "HIBERNATING";
  AnswerAll(200, body);
  auto vm = client_.GetMicrovm("mvm-1");
  ASSERT_TRUE(vm.ok());
  EXPECT_EQ(vm->state, MicrovmState::kUnknown);
  EXPECT_STREQ(MicrovmStateName(MicrovmState::kTerminated), "TERMINATED");
  EXPECT_EQ(ParseMicrovmState("SUSPENDING"), MicrovmState::kSuspending);
}

TEST_F(MicrovmsClientTest, ListAllMicrovmsFollowsNextToken) {
  int page = 0;
  http_.SetHandler([&page](const http::HttpRequest&) -> Result<http::HttpResponse> {
    json body = SampleOutput("ListMicrovms");
    body["items"][0]["microvmId"] = "mvm-" + std::to_string(page);
    if (page < 2)
      body["nextToken"] = "next-" + std::to_string(page);
    else
      body.erase("nextToken");
    ++page;
    return http::HttpResponse::Json(200, body.dump());
  });
  ListMicrovmsRequest r;
  r.image_identifier = "runner";
  auto all = ListAllMicrovms(client_, r);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].microvm_id, "mvm-2");
  ASSERT_EQ(http_.requests().size(), 3u);
  EXPECT_FALSE(ReadBack(http_.requests()[0]).input.contains("nextToken"));
  EXPECT_EQ(ReadBack(http_.requests()[2]).input["nextToken"], "next-1");
  EXPECT_EQ(ReadBack(http_.requests()[2]).input["imageIdentifier"], "runner");
}

TEST_F(MicrovmsClientTest, PagingStopsOnARepeatedToken) {
  json body = SampleOutput("ListMicrovms");
  body["nextToken"] = "same";
  AnswerAll(200, body);
  auto all = ListAllMicrovms(client_, ListMicrovmsRequest{});
  EXPECT_EQ(all.status().code(), Code::kInternal);
  EXPECT_EQ(http_.requests().size(), 2u);
}

TEST_F(MicrovmsClientTest, ImageVersionsPageAndParse) {
  json body = SampleOutput("ListMicrovmImageVersions");
  body.erase("nextToken");
  AnswerAll(200, body);
  ListMicrovmImageVersionsRequest r;
  r.image_identifier = "runner";
  auto all = ListAllMicrovmImageVersions(client_, r);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].status, ImageVersionStatus::kActive);
  EXPECT_EQ((*all)[0].state, ImageVersionState::kPending);
  ASSERT_TRUE((*all)[0].config.hooks.has_value());
  EXPECT_EQ((*all)[0].config.environment_variables.size(), 1u);
}

}  // namespace
}  // namespace mvr::aws::testing
