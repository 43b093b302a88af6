// The embedded Lambda MicroVMs model: parsing, routing, bindings and error statuses.
#include "aws/microvms/service_model.h"
#include "microvms_model.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace mvr::aws {
namespace {

using testing::Model;

TEST(ServiceModelTest, EmbeddedModelIsTheCommittedFile) {
  std::ifstream in(std::string(MVR_SOURCE_DIR) + "/models/lambda-microvms/service-2.json",
                   std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(EmbeddedLambdaMicrovmsModel(), text.str());
  EXPECT_EQ(Model().raw()["metadata"]["signingName"], "lambda");
}

TEST(ServiceModelTest, FindsOperationsWithHttpBindings) {
  const auto* run = Model().FindOperation("RunMicrovm");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->method, "POST");
  EXPECT_EQ(run->request_uri, "/2025-09-09/microvms");
  EXPECT_EQ(run->success_code, 200);
  EXPECT_EQ(run->input_shape, "RunMicrovmRequest");
  EXPECT_EQ(run->output_shape, "RunMicrovmResponse");
  EXPECT_NE(std::find(run->errors.begin(), run->errors.end(), "ServiceQuotaExceededException"),
            run->errors.end());
  const auto* create = Model().FindOperation("CreateMicrovmImage");
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->success_code, 201);
  EXPECT_EQ(Model().FindOperation("NoSuchOperation"), nullptr);
}

TEST(ServiceModelTest, RoutesMethodAndPathWithDecodedLabels) {
  std::map<std::string, std::string> labels;
  const auto* op = Model().Route("GET", "/2025-09-09/microvms/mvm-1%2Fx", &labels);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "GetMicrovm");
  EXPECT_EQ(labels["microvmIdentifier"], "mvm-1/x");

  op = Model().Route("DELETE", "/2025-09-09/microvms/mvm-1", &labels);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "TerminateMicrovm");

  op = Model().Route("POST", "/2025-09-09/microvms/mvm-1/auth-token", &labels);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "CreateMicrovmAuthToken");

  op = Model().Route("GET", "/2025-09-09/microvm-images/img/versions/3/builds/b-1", &labels);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "GetMicrovmImageBuild");
  EXPECT_EQ(labels["imageIdentifier"], "img");
  EXPECT_EQ(labels["imageVersion"], "3");
  EXPECT_EQ(labels["buildId"], "b-1");

  op = Model().Route("PATCH", "/2025-09-09/microvm-images/img/versions/3", nullptr);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "UpdateMicrovmImageVersion");

  op = Model().Route("GET", "/2025-09-09/microvms", nullptr);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name, "ListMicrovms");
}

TEST(ServiceModelTest, RouteRefusesUnknownPathsAndMethods) {
  EXPECT_EQ(Model().Route("PUT", "/2025-09-09/microvms/mvm-1", nullptr), nullptr);
  EXPECT_EQ(Model().Route("GET", "/2025-09-09/microvms/", nullptr), nullptr);
  EXPECT_EQ(Model().Route("GET", "/2025-09-09/microvms/a/b", nullptr), nullptr);
  EXPECT_EQ(Model().Route("GET", "/nothing", nullptr), nullptr);
}

TEST(ServiceModelTest, InputBindingsFollowLocations) {
  auto bindings = Model().InputBindings("ListMicrovms");
  std::map<std::string, ServiceModel::Binding> by_member;
  for (const auto& b : bindings) by_member[b.member] = b;
  EXPECT_EQ(by_member["maxResults"].location, "querystring");
  EXPECT_EQ(by_member["maxResults"].location_name, "maxResults");
  EXPECT_EQ(by_member["imageIdentifier"].location, "querystring");

  by_member.clear();
  for (const auto& b : Model().InputBindings("CreateMicrovmAuthToken")) by_member[b.member] = b;
  EXPECT_EQ(by_member["microvmIdentifier"].location, "uri");
  EXPECT_EQ(by_member["expirationInMinutes"].location, "body");
  EXPECT_EQ(by_member["allowedPorts"].location_name, "allowedPorts");
  EXPECT_TRUE(Model().InputBindings("NoSuchOperation").empty());
}

TEST(ServiceModelTest, ErrorStatusesComeFromTheModel) {
  EXPECT_EQ(Model().ErrorStatus("ServiceQuotaExceededException"), 402);
  EXPECT_EQ(Model().ErrorStatus("ThrottlingException"), 429);
  EXPECT_EQ(Model().ErrorStatus("ConflictException"), 409);
  EXPECT_EQ(Model().ErrorStatus("ResourceNotFoundException"), 404);
  EXPECT_EQ(Model().ErrorStatus("ValidationException"), 400);
  EXPECT_EQ(Model().ErrorStatus("AccessDeniedException"), 403);
  EXPECT_EQ(Model().ErrorStatus("InternalServerException"), 500);
  EXPECT_EQ(Model().ErrorStatus("RunMicrovmRequest"), 0);
  EXPECT_EQ(Model().ErrorStatus("Nope"), 0);
}

TEST(ServiceModelTest, IdempotencyTokensAreFound) {
  EXPECT_EQ(Model().IdempotencyTokenMembers("RunMicrovm"), std::vector<std::string>{"clientToken"});
  EXPECT_TRUE(Model().IdempotencyTokenMembers("GetMicrovm").empty());
}

TEST(ServiceModelTest, ParseRefusesBrokenModels) {
  EXPECT_EQ(ServiceModel::Parse("not json").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ServiceModel::Parse("{}").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ServiceModel::Parse(R"({"operations":{"X":{"http":{"method":"GET","requestUri":"/"},
      "input":{"shape":"Missing"}}},"shapes":{}})")
                .status()
                .code(),
            Code::kInvalidArgument);
  auto ok =
      ServiceModel::Parse(R"({"operations":{"X":{"http":{"method":"GET","requestUri":"/x/{id}"},
      "input":{"shape":"In"}}},"shapes":{"In":{"type":"structure","required":["id"],
      "members":{"id":{"shape":"S","location":"uri","locationName":"id"}}},"S":{"type":"string"}}})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  std::map<std::string, std::string> labels;
  ASSERT_NE(ok->Route("GET", "/x/abc", &labels), nullptr);
  EXPECT_EQ(labels["id"], "abc");
}

}  // namespace
}  // namespace mvr::aws
