#include "github/workflow_job_event.h"

#include <gtest/gtest.h>

#include "base/random.h"
#include "base/time_format.h"
#include "workflow_job_payloads.h"

namespace mvr::github {
namespace {

using testing::PayloadOptions;
using testing::WorkflowJobJson;
using testing::WorkflowJobPayload;

Result<WorkflowJobEvent> Parse(const std::string& body) {
  return ParseWorkflowJobEvent("workflow_job", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body);
}

TEST(WorkflowJobEventTest, ParsesAQueuedDelivery) {
  auto e = Parse(WorkflowJobPayload());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->delivery_id, "72d3162e-cc78-11e3-81ab-4c9367dc0958");
  EXPECT_EQ(e->action, WorkflowJobAction::kQueued);
  EXPECT_EQ(e->workflow_job.id, 29679449);
  EXPECT_EQ(e->workflow_job.run_id, 10843203637);
  EXPECT_EQ(e->workflow_job.run_attempt, 1);
  EXPECT_EQ(e->workflow_job.status, JobStatus::kQueued);
  EXPECT_EQ(e->workflow_job.conclusion, "");
  EXPECT_EQ(e->workflow_job.labels,
            (std::vector<std::string>{"self-hosted", "linux", "arm64", "lambda-mvm-small"}));
  EXPECT_FALSE(e->workflow_job.runner_id.has_value());
  EXPECT_EQ(e->workflow_job.runner_name, "");
  EXPECT_EQ(e->workflow_job.workflow_name, "CI");
  EXPECT_EQ(e->workflow_job.head_branch, "main");
  EXPECT_EQ(e->workflow_job.name, "build (arm64)");
  ASSERT_TRUE(e->workflow_job.started_at.has_value());
  EXPECT_EQ(FormatRfc3339(*e->workflow_job.started_at), "2026-11-30T04:00:00Z");
  EXPECT_FALSE(e->workflow_job.completed_at.has_value());
  EXPECT_EQ(e->repository.id, 186853002);
  EXPECT_EQ(e->repository.name, "widget-service");
  EXPECT_EQ(e->repository.full_name, "octo-org/widget-service");
  EXPECT_EQ(e->repository.owner_login, "octo-org");
  EXPECT_TRUE(e->repository.is_private);
  EXPECT_EQ(e->repository.ref().FullName(), "octo-org/widget-service");
  EXPECT_EQ(e->organization_login, "octo-org");
  EXPECT_EQ(e->installation_id, 2311213);
  EXPECT_EQ(e->sender_login, "monalisa");
}

TEST(WorkflowJobEventTest, ParsesACompletedDeliveryWithItsRunner) {
  PayloadOptions o;
  o.action = "completed";
  o.runner_name = "lambda-mvm-3f9a0c";
  o.runner_id = 77;
  o.steps = 6;
  o.run_attempt = 2;
  auto e = Parse(WorkflowJobPayload(o));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->action, WorkflowJobAction::kCompleted);
  EXPECT_EQ(e->workflow_job.status, JobStatus::kCompleted);
  EXPECT_EQ(e->workflow_job.conclusion, "success");
  EXPECT_EQ(e->workflow_job.runner_id, 77);
  EXPECT_EQ(e->workflow_job.runner_name, "lambda-mvm-3f9a0c");
  EXPECT_EQ(e->workflow_job.runner_group_id, 1);
  EXPECT_EQ(e->workflow_job.runner_group_name, "Default");
  EXPECT_EQ(e->workflow_job.run_attempt, 2);
  ASSERT_TRUE(e->workflow_job.completed_at.has_value());
}

TEST(WorkflowJobEventTest, EveryDocumentedActionParses) {
  for (const char* action : {"queued", "waiting", "in_progress", "completed"}) {
    PayloadOptions o;
    o.action = action;
    auto e = Parse(WorkflowJobPayload(o));
    ASSERT_TRUE(e.ok()) << action << ": " << e.status().ToString();
    EXPECT_STREQ(WorkflowJobActionName(e->action), action);
  }
}

TEST(WorkflowJobEventTest, AUserOwnedRepositoryHasNoOrganization) {
  PayloadOptions o;
  o.organization = false;
  auto e = Parse(WorkflowJobPayload(o));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->organization_login, "");
}

TEST(WorkflowJobEventTest, HeadersCarryEventAndDelivery) {
  http::Headers h{{"x-github-event", "workflow_job"}, {"X-GitHub-Delivery", "d-1"}};
  auto e = ParseWorkflowJobEvent(h, WorkflowJobPayload());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->delivery_id, "d-1");
}

TEST(WorkflowJobEventTest, OtherEventsAreRefusedByName) {
  auto ping = ParseWorkflowJobEvent("ping", "d-1", R"({"zen":"Keep it logically awesome."})");
  EXPECT_EQ(ping.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ping.status().error_type(), "UnsupportedEvent");
  EXPECT_NE(ping.status().message().find("'ping'"), std::string::npos);
  EXPECT_EQ(ParseWorkflowJobEvent("", "d-1", WorkflowJobPayload()).status().code(),
            Code::kInvalidArgument);
  auto no_delivery = ParseWorkflowJobEvent("workflow_job", "", WorkflowJobPayload());
  EXPECT_NE(no_delivery.status().message().find("X-GitHub-Delivery"), std::string::npos);
}

void ExpectRefusedNaming(const nlohmann::json& payload, const std::string& words) {
  auto e = Parse(payload.dump());
  ASSERT_FALSE(e.ok()) << payload.dump().substr(0, 80);
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find(words), std::string::npos) << e.status().message();
}

TEST(WorkflowJobEventTest, WrongTypesAndMissingFieldsAreNamed) {
  nlohmann::json base = WorkflowJobJson(PayloadOptions());
  auto with = [&](const nlohmann::json::json_pointer& ptr, nlohmann::json value) {
    nlohmann::json p = base;
    p[ptr] = std::move(value);
    return p;
  };
  auto without = [&](const std::string& parent, const std::string& key) {
    nlohmann::json p = base;
    (parent.empty() ? p : p[parent]).erase(key);
    return p;
  };
  ExpectRefusedNaming(with("/workflow_job/id"_json_pointer, "29679449"),
                      "workflow_job.id: expected an integer, got a string");
  ExpectRefusedNaming(with("/workflow_job/run_id"_json_pointer, 1.5), "workflow_job.run_id");
  ExpectRefusedNaming(with("/workflow_job/labels"_json_pointer, "linux"), "workflow_job.labels");
  ExpectRefusedNaming(with("/workflow_job/labels/1"_json_pointer, 7), "workflow_job.labels[1]");
  ExpectRefusedNaming(with("/workflow_job/started_at"_json_pointer, "yesterday"),
                      "workflow_job.started_at");
  ExpectRefusedNaming(with("/repository/owner"_json_pointer, "octo-org"), "repository.owner");
  ExpectRefusedNaming(with("/repository/private"_json_pointer, "yes"), "repository.private");
  ExpectRefusedNaming(with("/installation/id"_json_pointer, "x"), "installation.id");
  ExpectRefusedNaming(with("/repository/full_name"_json_pointer, "no-slash"),
                      "repository.full_name: 'no-slash' is not owner/name");
  ExpectRefusedNaming(with("/workflow_job/id"_json_pointer, 0), "workflow_job: id and run_id");
  ExpectRefusedNaming(without("", "workflow_job"), "workflow_job: missing");
  ExpectRefusedNaming(without("", "repository"), "repository: missing");
  ExpectRefusedNaming(without("", "action"), "action: missing");
  ExpectRefusedNaming(without("workflow_job", "status"), "workflow_job.status: missing");
  ExpectRefusedNaming(with("/action"_json_pointer, "requested"), "'requested' is not one of");
  ExpectRefusedNaming(nlohmann::json::array(), "expected an object, got an array");
}

// GitHub's own example payloads (octokit/webhooks) name a repository whose full_name is not
// owner.login/name; such a delivery used to be refused with a 400 and its job never ran.
TEST(WorkflowJobEventTest, FullNameDifferingFromOwnerAndNameIsAcceptedAndWins) {
  nlohmann::json p = WorkflowJobJson(PayloadOptions());
  p["repository"]["full_name"] = "Codertocat/Hello-World";
  p["repository"]["owner"]["login"] = "Octocoders";
  auto e = Parse(p.dump());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->repository.full_name, "Codertocat/Hello-World");
  EXPECT_EQ(e->repository.ref().FullName(), "Codertocat/Hello-World");
  EXPECT_EQ(e->repository.owner_login, "Octocoders");
}

TEST(WorkflowJobEventTest, OwnerAndNameStandInForAMissingFullName) {
  nlohmann::json p = WorkflowJobJson(PayloadOptions());
  p["repository"].erase("full_name");
  p["repository"].erase("id");
  auto e = Parse(p.dump());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->repository.full_name, "octo-org/widget-service");
  p["repository"].erase("owner");
  ExpectRefusedNaming(p, "repository: full_name, or owner.login and name, are required");
}

TEST(WorkflowJobEventTest, InvalidJsonIsRefused) {
  auto e = Parse("{\"action\": \"queued\",");
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_NE(e.status().message().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(Parse("").status().code(), Code::kInvalidArgument);
}

TEST(WorkflowJobEventTest, EveryTruncationIsRefusedWithoutACrash) {
  PayloadOptions o;
  o.full_repository = false;
  std::string body = WorkflowJobPayload(o);
  for (size_t n = 0; n < body.size(); ++n) {
    auto e = Parse(body.substr(0, n));
    ASSERT_FALSE(e.ok()) << n;
    ASSERT_EQ(e.status().code(), Code::kInvalidArgument) << n;
  }
}

TEST(WorkflowJobEventTest, RandomMutationsNeverCrash) {
  SeededRandom random(20261130);
  std::string body = WorkflowJobPayload();
  std::string alphabet = "{}[]\":,0123456789-.eE truefalsn\\u\xff";
  alphabet.push_back('\0');
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = body;
    int edits = 1 + static_cast<int>(random.Uniform(8));
    for (int k = 0; k < edits; ++k) {
      size_t pos = random.Uniform(mutated.size());
      switch (random.Uniform(3)) {
        case 0:
          mutated[pos] = alphabet[random.Uniform(alphabet.size())];
          break;
        case 1:
          mutated.erase(pos, 1 + random.Uniform(16));
          break;
        default:
          mutated.insert(pos, 1, alphabet[random.Uniform(alphabet.size())]);
          break;
      }
    }
    auto e = Parse(mutated);
    if (e.ok()) {
      ++accepted;
    } else {
      ASSERT_EQ(e.status().code(), Code::kInvalidArgument);
    }
  }
  EXPECT_LT(accepted, 3000);
}

TEST(WorkflowJobEventTest, DeepNestingIsRefusedWithoutACrash) {
  std::string deep(200000, '[');
  EXPECT_EQ(Parse(deep).status().code(), Code::kInvalidArgument);
  std::string nested =
      "{\"action\":\"queued\",\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(Parse(nested).status().code(), Code::kInvalidArgument);
}

TEST(WorkflowJobEventTest, UnknownJobStatusIsKeptAsUnknown) {
  nlohmann::json p = WorkflowJobJson(PayloadOptions());
  p["workflow_job"]["status"] = "brand_new_status";
  auto e = Parse(p.dump());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->workflow_job.status, JobStatus::kUnknown);
}

}  // namespace
}  // namespace mvr::github
