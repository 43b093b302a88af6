// ServiceModel::ValidateInput/ValidateOutput: every constraint kind of the model is enforced and
// the error names the offending field.
#include <gtest/gtest.h>

#include <string>

#include "aws/microvms/service_model.h"
#include "microvms_model.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

using testing::Model;

json ValidRun() {
  return json{{"imageIdentifier", "img-1"},
              {"imageVersion", "3"},
              {"runHookPayload", std::string(4096, 'a')},
              {"maximumDurationInSeconds", 7200},
              {"idlePolicy",
               {{"maxIdleDurationSeconds", 60},
                {"suspendedDurationSeconds", 0},
                {"autoResumeEnabled", false}}},
              {"clientToken", "tok"},
              {"logging", {{"cloudWatch", {{"logGroup", "/mvr/runners"}}}}},
              {"egressNetworkConnectors", json::array({"c1"})}};
}

void ExpectRefused(const std::string& op, const json& input, const std::string& message) {
  Status status = Model().ValidateInput(op, input);
  EXPECT_EQ(status.code(), Code::kInvalidArgument) << status.ToString();
  EXPECT_EQ(status.message(), message);
}

TEST(ServiceModelValidatorTest, AcceptsAValidRunMicrovm) {
  Status status = Model().ValidateInput("RunMicrovm", ValidRun());
  EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST(ServiceModelValidatorTest, RefusesMissingRequiredMember) {
  json input = ValidRun();
  input.erase("imageIdentifier");
  ExpectRefused("RunMicrovm", input, "imageIdentifier: required member is missing");
  input = ValidRun();
  input["imageIdentifier"] = nullptr;
  ExpectRefused("RunMicrovm", input, "imageIdentifier: required member is missing");
}

TEST(ServiceModelValidatorTest, RefusesRunHookPayloadOverMaximumWithoutEchoingIt) {
  json input = ValidRun();
  input["runHookPayload"] = std::string(5000, 'z');
  Status status = Model().ValidateInput("RunMicrovm", input);
  EXPECT_EQ(status.message(), "runHookPayload: length 5000 exceeds the maximum of 4096");
  EXPECT_EQ(status.message().find("zzz"), std::string::npos);
}

TEST(ServiceModelValidatorTest, StringLengthCountsCharactersNotBytes) {
  json input = ValidRun();
  std::string payload;
  for (int i = 0; i < 4096; ++i) payload += "\xC3\xA9";  // é: 2 bytes, 1 character
  input["runHookPayload"] = payload;
  EXPECT_TRUE(Model().ValidateInput("RunMicrovm", input).ok());
}

TEST(ServiceModelValidatorTest, RefusesStringBelowMinimumLength) {
  json input = ValidRun();
  input["clientToken"] = "";
  ExpectRefused("RunMicrovm", input, "clientToken: length 0 is below the minimum of 1");
}

TEST(ServiceModelValidatorTest, EnforcesMaximumDurationRange) {
  json input = ValidRun();
  input["maximumDurationInSeconds"] = 0;
  ExpectRefused("RunMicrovm", input, "maximumDurationInSeconds: 0 is below the minimum of 1");
  input["maximumDurationInSeconds"] = 28801;
  ExpectRefused("RunMicrovm", input,
                "maximumDurationInSeconds: 28801 exceeds the maximum of 28800");
  input["maximumDurationInSeconds"] = 28800;
  EXPECT_TRUE(Model().ValidateInput("RunMicrovm", input).ok());
  input["maximumDurationInSeconds"] = 1;
  EXPECT_TRUE(Model().ValidateInput("RunMicrovm", input).ok());
}

TEST(ServiceModelValidatorTest, IdlePolicyMustBeCompleteAndAtLeastSixtySeconds) {
  json input = ValidRun();
  input["idlePolicy"].erase("autoResumeEnabled");
  ExpectRefused("RunMicrovm", input, "idlePolicy.autoResumeEnabled: required member is missing");
  input = ValidRun();
  input["idlePolicy"].erase("suspendedDurationSeconds");
  ExpectRefused("RunMicrovm", input,
                "idlePolicy.suspendedDurationSeconds: required member is missing");
  input = ValidRun();
  input["idlePolicy"]["maxIdleDurationSeconds"] = 30;
  ExpectRefused("RunMicrovm", input,
                "idlePolicy.maxIdleDurationSeconds: 30 is below the minimum of 60");
}

TEST(ServiceModelValidatorTest, RefusesWrongTypes) {
  json input = ValidRun();
  input["maximumDurationInSeconds"] = "7200";  // a body member must be a JSON number
  ExpectRefused("RunMicrovm", input, "maximumDurationInSeconds: expected an integer, got string");
  input = ValidRun();
  input["maximumDurationInSeconds"] = 1.5;
  ExpectRefused("RunMicrovm", input, "maximumDurationInSeconds: expected an integer, got number");
  input = ValidRun();
  input["idlePolicy"]["autoResumeEnabled"] = "yes";
  ExpectRefused("RunMicrovm", input,
                "idlePolicy.autoResumeEnabled: expected a boolean, got string");
  input = ValidRun();
  input["idlePolicy"] = "later";
  ExpectRefused("RunMicrovm", input, "idlePolicy: expected an object, got string");
  input = ValidRun();
  input["egressNetworkConnectors"] = "c1";
  ExpectRefused("RunMicrovm", input, "egressNetworkConnectors: expected a list, got string");
  EXPECT_EQ(Model().ValidateInput("RunMicrovm", json::array()).code(), Code::kInvalidArgument);
}

TEST(ServiceModelValidatorTest, RefusesValuesOutsideAnEnum) {
  json input = {{"imageIdentifier", "img"}, {"imageVersion", "1"}, {"status", "ON"}};
  ExpectRefused("UpdateMicrovmImageVersion", input,
                "status: \"ON\" is not one of ACTIVE, INACTIVE");
  input["status"] = "INACTIVE";
  EXPECT_TRUE(Model().ValidateInput("UpdateMicrovmImageVersion", input).ok());
}

TEST(ServiceModelValidatorTest, EnforcesListLengthsAndNestedListItems) {
  json input = {
      {"microvmIdentifier", "mvm-1"}, {"expirationInMinutes", 15}, {"allowedPorts", json::array()}};
  ExpectRefused("CreateMicrovmAuthToken", input, "allowedPorts: 0 items is below the minimum of 1");
  input["allowedPorts"] = json::array({{{"port", 8080}}, {{"port", 70000}}});
  ExpectRefused("CreateMicrovmAuthToken", input,
                "allowedPorts[1].port: 70000 exceeds the maximum of 65535");
  input["allowedPorts"] = json::array({{{"range", {{"startPort", 8000}}}}});
  ExpectRefused("CreateMicrovmAuthToken", input,
                "allowedPorts[0].range.endPort: required member is missing");
  input["allowedPorts"] = json::array({{{"allPorts", json::object()}}});
  EXPECT_TRUE(Model().ValidateInput("CreateMicrovmAuthToken", input).ok());

  json run = ValidRun();
  run["egressNetworkConnectors"] = json::array();
  for (int i = 0; i < 11; ++i) run["egressNetworkConnectors"].push_back("c");
  ExpectRefused("RunMicrovm", run, "egressNetworkConnectors: 11 items exceeds the maximum of 10");
}

TEST(ServiceModelValidatorTest, UnionsTakeExactlyOneMember) {
  json input = {{"microvmIdentifier", "mvm-1"},
                {"expirationInMinutes", 15},
                {"allowedPorts", json::array({{{"port", 8080}, {"allPorts", json::object()}}})}};
  ExpectRefused("CreateMicrovmAuthToken", input,
                "allowedPorts[0]: exactly one of allPorts, port, range must be set (got 2)");
  json run = ValidRun();
  run["logging"] = json::object();
  ExpectRefused("RunMicrovm", run,
                "logging: exactly one of cloudWatch, disabled must be set (got 0)");
}

TEST(ServiceModelValidatorTest, ChecksMapsKeysValuesAndSizes) {
  json input = {{"baseImageArn", "arn:aws:lambda:us-east-1::microvm-image:al2023"},
                {"buildRoleArn", "arn:aws:iam::123456789012:role/build"},
                {"codeArtifact", {{"uri", "s3://bucket/code.zip"}}},
                {"name", "runner"},
                {"environmentVariables", {{"GOOD", "v"}}}};
  Status ok = Model().ValidateInput("CreateMicrovmImage", input);
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  input["environmentVariables"]["BAD"] = std::string(4097, 's');
  Status status = Model().ValidateInput("CreateMicrovmImage", input);
  EXPECT_EQ(status.message(),
            "environmentVariables[\"BAD\"]: length 4097 exceeds the maximum of 4096");
  input["environmentVariables"] = json::object();
  for (int i = 0; i < 51; ++i) input["environmentVariables"]["K" + std::to_string(i)] = "v";
  ExpectRefused("CreateMicrovmImage", input,
                "environmentVariables: 51 entries exceeds the maximum of 50");
}

TEST(ServiceModelValidatorTest, ChecksCheapPatterns) {
  json input = {{"baseImageArn", "arn:aws:lambda:us-east-1::microvm-image:al2023"},
                {"buildRoleArn", "not-a-role-arn-but-long-enough"},
                {"codeArtifact", {{"uri", "s3://bucket/code.zip"}}},
                {"name", "runner"}};
  Status status = Model().ValidateInput("CreateMicrovmImage", input);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message().rfind("buildRoleArn: does not match the pattern", 0), 0u)
      << status.message();
  input["buildRoleArn"] = "arn:aws:iam::123456789012:role/build";
  input["name"] = "bad name!";
  status = Model().ValidateInput("CreateMicrovmImage", input);
  EXPECT_TRUE(status.ok()) << "unanchored, as Smithy patterns are: " << status.ToString();
  input["name"] = "!!!";
  status = Model().ValidateInput("CreateMicrovmImage", input);
  EXPECT_EQ(status.message().rfind("name: does not match the pattern", 0), 0u) << status.message();
}

TEST(ServiceModelValidatorTest, LocationMembersMayArriveAsStrings) {
  json input = {{"maxResults", "50"}, {"imageIdentifier", "img"}};
  EXPECT_TRUE(Model().ValidateInput("ListMicrovms", input).ok());
  input["maxResults"] = "51";
  ExpectRefused("ListMicrovms", input, "maxResults: 51 exceeds the maximum of 50");
  input["maxResults"] = "many";
  ExpectRefused("ListMicrovms", input, "maxResults: \"many\" is not an integer");
  input["maxResults"] = 0;
  ExpectRefused("ListMicrovms", input, "maxResults: 0 is below the minimum of 1");
}

TEST(ServiceModelValidatorTest, UnknownMembersAreIgnoredAndUnknownOperationsAreNotFound) {
  json input = ValidRun();
  input["somethingNew"] = 1;
  EXPECT_TRUE(Model().ValidateInput("RunMicrovm", input).ok());
  EXPECT_EQ(Model().ValidateInput("Nope", input).code(), Code::kNotFound);
}

TEST(ServiceModelValidatorTest, ValidatesOutputsIncludingTimestampsAsEpochSeconds) {
  json out = {{"microvmId", "mvm-1"},
              {"state", "RUNNING"},
              {"endpoint", "mvm-1.lambda-microvms.us-east-1.on.aws"},
              {"imageArn", "arn:aws:lambda:us-east-1:123456789012:microvm-image:runner"},
              {"imageVersion", "1"},
              {"maximumDurationInSeconds", 7200},
              {"startedAt", 1767225600.25}};
  Status status = Model().ValidateOutput("GetMicrovm", out);
  EXPECT_TRUE(status.ok()) << status.ToString();
  out["startedAt"] = "2026-01-01T00:00:00Z";
  EXPECT_EQ(Model().ValidateOutput("GetMicrovm", out).message(),
            "startedAt: expected epoch seconds (a number), got string");
  out["startedAt"] = 1767225600;
  out["state"] = "EXPLODED";
  EXPECT_EQ(Model().ValidateOutput("GetMicrovm", out).message(),
            "state: \"EXPLODED\" is not one of PENDING, RUNNING, SUSPENDING, SUSPENDED, "
            "TERMINATING, TERMINATED");
  EXPECT_TRUE(Model().ValidateOutput("SuspendMicrovm", json::object()).ok());
}

TEST(ServiceModelValidatorTest, SensitiveValuesNeverAppearInMessages) {
  json out = {{"authToken", {{"X-aws-proxy-auth", std::string(8001, 'T')}}}};
  Status status = Model().ValidateOutput("CreateMicrovmAuthToken", out);
  EXPECT_EQ(status.message(),
            "authToken[\"X-aws-proxy-auth\"]: length 8001 exceeds the maximum of 8000");
}

}  // namespace
}  // namespace mvr::aws
