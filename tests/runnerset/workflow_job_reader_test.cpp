// WorkflowJobReader: the members the runner set needs are read from real-shaped payloads, members
// it does not need never cause a refusal, and every malformed body is an InvalidArgument that
// names what is wrong.
#include "runnerset/intake/workflow_job_reader.h"

#include <gtest/gtest.h>

#include "github/workflow_job_payloads.h"  // tests/github: realistic payload builder

namespace mvr::runnerset {
namespace {

using github::testing::PayloadOptions;
using github::testing::WorkflowJobJson;
using nlohmann::json;

Result<WorkflowJobFields> Read(const std::string& body) {
  WorkflowJobReader reader;
  return reader.Read(body);
}

// The job completed on runner mvr-demo-5 after `steps` steps.
json CompletedOnRunnerFive(int steps) {
  PayloadOptions o;
  o.action = "completed";
  o.runner_name = "mvr-demo-5";
  o.runner_id = 5;
  o.steps = steps;
  return WorkflowJobJson(o);
}

TEST(WorkflowJobReaderTest, ReadsTheMembersOfAQueuedJob) {
  auto f = Read(github::testing::WorkflowJobPayload());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->action, "queued");
  EXPECT_EQ(f->job_id, 29679449);
  EXPECT_EQ(f->run_id, 10843203637);
  EXPECT_EQ(f->run_attempt, 1);
  EXPECT_EQ(f->job_name, "build (arm64)");
  EXPECT_EQ(f->labels,
            (std::vector<std::string>{"self-hosted", "linux", "arm64", "lambda-mvm-small"}));
  EXPECT_EQ(f->runner_name, "");
  EXPECT_EQ(f->status, "queued");
  EXPECT_EQ(f->repository, "octo-org/widget-service");
}

TEST(WorkflowJobReaderTest, ReadsTheRunnerOfACompletedJobPastItsSteps) {
  PayloadOptions o;
  o.action = "completed";
  o.runner_name = "mvr-demo-17";
  o.runner_id = 17;
  o.run_attempt = 3;
  o.steps = 40;
  auto f = Read(github::testing::WorkflowJobPayload(o));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->action, "completed");
  EXPECT_EQ(f->runner_name, "mvr-demo-17");
  EXPECT_EQ(f->run_attempt, 3);
  EXPECT_EQ(f->status, "completed");
}

TEST(WorkflowJobReaderTest, MembersInAnyOrderAndPrettyPrinted) {
  json p = WorkflowJobJson(PayloadOptions());
  json reordered = json::object();  // nlohmann sorts keys: repository before workflow_job
  for (auto& [k, v] : p.items()) reordered[k] = v;
  auto f = Read(reordered.dump(2));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->job_id, 29679449);
  EXPECT_EQ(f->repository, "octo-org/widget-service");
}

TEST(WorkflowJobReaderTest, FullNameWinsOverADisagreeingOwnerAndName) {
  json p = WorkflowJobJson(PayloadOptions());
  p["repository"]["full_name"] = "Codertocat/Hello-World";
  p["repository"]["owner"]["login"] = "Octocoders";
  auto f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->repository, "Codertocat/Hello-World");
}

TEST(WorkflowJobReaderTest, OwnerAndNameStandInForAMissingOrNullFullName) {
  json p = WorkflowJobJson(PayloadOptions());
  p["repository"].erase("full_name");
  auto f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->repository, "octo-org/widget-service");
  p["repository"]["full_name"] = nullptr;
  f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->repository, "octo-org/widget-service");
}

TEST(WorkflowJobReaderTest, AbsentOrNullOptionalMembersTakeTheirDefaults) {
  json p = WorkflowJobJson(PayloadOptions());
  p["workflow_job"].erase("run_attempt");
  p["workflow_job"].erase("name");
  p["workflow_job"]["labels"] = nullptr;
  p["workflow_job"]["status"] = nullptr;
  auto f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->run_attempt, 1);
  EXPECT_EQ(f->job_name, "");
  EXPECT_TRUE(f->labels.empty());
  EXPECT_EQ(f->status, "");
  p["workflow_job"]["run_attempt"] = nullptr;
  p["workflow_job"].erase("labels");
  f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->run_attempt, 1);
}

// The reader must not refuse a delivery over a member it does not read, whatever its shape.
TEST(WorkflowJobReaderTest, OddShapesOfUnneededMembersAreNoReasonToRefuse) {
  json p = WorkflowJobJson(PayloadOptions());
  p["workflow_job"]["steps"] = "not an array";
  p["workflow_job"]["started_at"] = "yesterday";
  p["workflow_job"]["runner_id"] = "seventeen";
  p["workflow_job"]["new_member_github_adds"] = {{"nested", {1, 2, {{"deep", nullptr}}}}};
  p["repository"]["private"] = "yes";
  p["repository"]["id"] = "186853002";
  p["repository"]["owner"] = nullptr;
  p["installation"] = "none";
  p["sender"] = json::array();
  p["enterprise"] = {{"slug", "acme"}};
  auto f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->job_id, 29679449);
}

TEST(WorkflowJobReaderTest, EscapedAndUnicodeStringsAreUnescaped) {
  json p = WorkflowJobJson(PayloadOptions());
  p["workflow_job"]["name"] = "build \"quoted\" \\ caf\u00e9 \u2713";
  p["workflow_job"]["labels"] = {"self-hosted", "mvr-\u00e9t\u00e9"};
  auto f = Read(p.dump());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->job_name, "build \"quoted\" \\ caf\u00e9 \u2713");
  EXPECT_EQ(f->labels[1], "mvr-\u00e9t\u00e9");
  auto escaped = Read(R"({"action":"\u0071ueued","workflow_job":{"id":1,"run_id":2,)"
                      R"("runner_name":"a\/b\u0021"},"repository":{"full_name":"o/r"}})");
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  EXPECT_EQ(escaped->action, "queued");
  EXPECT_EQ(escaped->runner_name, "a/b!");
}

TEST(WorkflowJobReaderTest, OneReaderReadsManyBodiesOfAnySize) {
  WorkflowJobReader reader;
  for (int steps : {200, 0, 50, 0}) {
    PayloadOptions o;
    o.action = steps ? "completed" : "queued";
    o.runner_name = steps ? "mvr-x-1" : "";
    o.steps = steps;
    o.job_id = 1000 + steps;
    auto f = reader.Read(github::testing::WorkflowJobPayload(o));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->job_id, 1000 + steps);
    EXPECT_EQ(f->runner_name, o.runner_name);
  }
  EXPECT_FALSE(reader.Read("{").ok());
  EXPECT_TRUE(reader.Read(github::testing::WorkflowJobPayload()).ok());
}

void ExpectMalformed(const std::string& body, const std::string& words) {
  auto f = Read(body);
  ASSERT_FALSE(f.ok()) << body.substr(0, 120);
  EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(f.status().error_type(), "MalformedPayload");
  EXPECT_EQ(f.status().message().rfind("workflow_job payload: ", 0), 0u) << f.status().message();
  EXPECT_NE(f.status().message().find(words), std::string::npos)
      << body.substr(0, 40) << " -> " << f.status().message();
}

TEST(WorkflowJobReaderTest, MissingOrMistypedNeededMembersAreNamed) {
  json base = WorkflowJobJson(PayloadOptions());
  auto with = [&](const json::json_pointer& ptr, json value) {
    json p = base;
    p[ptr] = std::move(value);
    return p.dump();
  };
  auto without = [&](const std::string& parent, const std::string& key) {
    json p = base;
    (parent.empty() ? p : p[parent]).erase(key);
    return p.dump();
  };
  ExpectMalformed(without("", "action"), "action is missing");
  ExpectMalformed(with("/action"_json_pointer, 7), "action: expected a string");
  ExpectMalformed(without("", "workflow_job"), "workflow_job is missing");
  ExpectMalformed(with("/workflow_job"_json_pointer, "job"), "workflow_job: expected an object");
  ExpectMalformed(without("workflow_job", "id"), "workflow_job.id is missing");
  ExpectMalformed(without("workflow_job", "run_id"), "workflow_job.run_id is missing");
  ExpectMalformed(with("/workflow_job/id"_json_pointer, "29679449"),
                  "workflow_job.id: expected a positive integer");
  ExpectMalformed(with("/workflow_job/id"_json_pointer, 0), "workflow_job.id");
  ExpectMalformed(with("/workflow_job/id"_json_pointer, -4), "workflow_job.id");
  ExpectMalformed(with("/workflow_job/run_id"_json_pointer, 1.5), "workflow_job.run_id");
  ExpectMalformed(with("/workflow_job/run_attempt"_json_pointer, "2"), "workflow_job.run_attempt");
  ExpectMalformed(with("/workflow_job/labels"_json_pointer, "linux"),
                  "workflow_job.labels: expected an array of strings");
  ExpectMalformed(with("/workflow_job/labels/1"_json_pointer, 7), "workflow_job.labels");
  ExpectMalformed(with("/workflow_job/runner_name"_json_pointer, 17), "workflow_job.runner_name");
  ExpectMalformed(with("/workflow_job/name"_json_pointer, json::array()), "workflow_job.name");
  ExpectMalformed(with("/workflow_job/status"_json_pointer, true), "workflow_job.status");
  ExpectMalformed(without("", "repository"), "repository is missing");
  ExpectMalformed(with("/repository"_json_pointer, 1), "repository: expected an object");
  ExpectMalformed(with("/repository/full_name"_json_pointer, "no-slash"),
                  "repository.full_name: 'no-slash' is not owner/name");
  ExpectMalformed(with("/repository/full_name"_json_pointer, "a/b/c"), "is not owner/name");
  ExpectMalformed(with("/repository/full_name"_json_pointer, "a/b#1"), "is not owner/name");
  json no_names = base;
  no_names["repository"].erase("full_name");
  no_names["repository"]["owner"].erase("login");
  ExpectMalformed(no_names.dump(), "repository: neither full_name nor owner.login and name");
}

TEST(WorkflowJobReaderTest, BodiesThatAreNotOneJsonObjectAreRefused) {
  ExpectMalformed("", "not valid JSON");
  ExpectMalformed("   ", "not valid JSON");
  ExpectMalformed("[]", "not a JSON object");
  ExpectMalformed("\"queued\"", "not a JSON object");
  ExpectMalformed("{\"action\": \"queued\",", "does not end with '}'");
  ExpectMalformed("{\"action\": \"queued\"", "does not end with '}'");
  ExpectMalformed(github::testing::WorkflowJobPayload() + " x", "does not end with '}'");
  ExpectMalformed("{\"action\": \"queu\xff\"}", "not valid JSON");  // not UTF-8
  ExpectMalformed("{\"action\": \"queued}", "not valid JSON");      // unclosed string
  ExpectMalformed(R"({"action":"queued","workflow_job":{"id":1,"run_id":2,"name":"\ud800"},)"
                  R"("repository":{"full_name":"o/r"}})",
                  "workflow_job.name");  // a lone surrogate is no string
}

// The reader stops after the members it needs, so a body cut short after them may be read; it
// must then read exactly what the whole body says. Any cut before them is refused.
TEST(WorkflowJobReaderTest, ATruncatedBodyIsRefusedOrReadAsTheWholeOne) {
  PayloadOptions o;
  o.full_repository = false;
  std::string body = github::testing::WorkflowJobPayload(o);
  WorkflowJobReader reader;
  auto whole = reader.Read(body);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  size_t needed_end = body.find("\"organization\"");
  ASSERT_NE(needed_end, std::string::npos);
  size_t read_anyway = 0;
  for (size_t n = 0; n < body.size(); ++n) {
    auto f = reader.Read(std::string_view(body).substr(0, n));
    if (!f.ok()) {
      EXPECT_EQ(f.status().code(), Code::kInvalidArgument) << n;
      continue;
    }
    ASSERT_GT(n, needed_end) << "accepted a body cut before the members it needs";
    EXPECT_EQ(*f, *whole) << n;
    ++read_anyway;
  }
  EXPECT_LT(read_anyway, 20u);  // only cuts right after a '}'
}

// In GitHub's order everything the reader needs ends at repository.full_name, and the reader
// reads only the body up to there when it can. These bodies defeat that shortcut in each way it
// can be defeated; every one must still be read as its whole says.
TEST(WorkflowJobReaderTest, TheShortcutToFullNameNeverChangesTheReading) {
  json base = CompletedOnRunnerFive(8);
  auto expect_read = [](const std::string& body, const std::string& repository) {
    WorkflowJobReader reader;
    auto f = reader.Read(body);
    ASSERT_TRUE(f.ok()) << f.status().ToString() << "\n" << body.substr(0, 200);
    EXPECT_EQ(f->job_id, 29679449);
    EXPECT_EQ(f->labels,
              (std::vector<std::string>{"self-hosted", "linux", "arm64", "lambda-mvm-small"}));
    EXPECT_EQ(f->runner_name, "mvr-demo-5");
    EXPECT_EQ(f->repository, repository);
  };
  // GitHub's order: the shortcut applies.
  expect_read(github::testing::InGitHubOrder(base), "octo-org/widget-service");
  // Sorted order: repository before workflow_job.
  expect_read(base.dump(), "octo-org/widget-service");
  // A step named full_name: the first "full_name" lies inside the job, before its labels.
  json step_named = base;
  step_named["workflow_job"]["steps"][2]["name"] = "full_name";
  expect_read(github::testing::InGitHubOrder(step_named), "octo-org/widget-service");
  expect_read(step_named.dump(), "octo-org/widget-service");
  // The repository first, naming itself by owner and name, and a step named full_name.
  json no_full_name = step_named;
  no_full_name["repository"].erase("full_name");
  std::string body = github::testing::InGitHubOrder(no_full_name);
  std::string repo = github::testing::DumpInOrder(no_full_name["repository"], {"id", "name"});
  std::string job = github::testing::DumpInOrder(no_full_name["workflow_job"], {"id"});
  expect_read(R"({"action":"completed","repository":)" + repo + R"(,"workflow_job":)" + job + "}",
              "octo-org/widget-service");
  // The same with full_name spelled with an escape, which the byte search does not see.
  std::string escaped = repo;
  escaped.insert(1, R"("full\u005fname":"octo-org/widget-service",)");
  expect_read(
      R"({"action":"completed","repository":)" + escaped + R"(,"workflow_job":)" + job + "}",
      "octo-org/widget-service");
  // A comma inside the full_name value cuts the start inside a string.
  json comma = base;
  comma["repository"]["full_name"] = "octo-org/widget,service";
  ExpectMalformed(github::testing::InGitHubOrder(comma), "is not owner/name");
}

// The shortcut also leaves out a completed job's steps, which it finds by their shape; steps of
// every shape, and text that looks like their end, must still be read as the whole body says.
TEST(WorkflowJobReaderTest, SkippingTheStepsNeverChangesTheReading) {
  json base = CompletedOnRunnerFive(30);
  auto expect_read = [](const json& event, const std::string& job_name) {
    const std::string body = github::testing::InGitHubOrder(event);
    WorkflowJobReader reader;
    auto f = reader.Read(body);
    ASSERT_TRUE(f.ok()) << f.status().ToString() << "\n" << body.substr(0, 300);
    EXPECT_EQ(f->job_id, 29679449);
    EXPECT_EQ(f->job_name, job_name);
    EXPECT_EQ(f->labels,
              (std::vector<std::string>{"self-hosted", "linux", "arm64", "lambda-mvm-small"}));
    EXPECT_EQ(f->runner_name, "mvr-demo-5");
    EXPECT_EQ(f->status, "completed");
    EXPECT_EQ(f->repository, "octo-org/widget-service");
  };
  expect_read(base, "build (arm64)");
  json empty = base;
  empty["workflow_job"]["steps"] = json::array();
  expect_read(empty, "build (arm64)");
  // Step names that spell the end of the array, brackets and a "steps" key inside strings.
  json lookalike = base;
  lookalike["workflow_job"]["steps"][0]["name"] = R"(x}],"labels":["evil"],"runner_name":"y)";
  lookalike["workflow_job"]["steps"][1]["name"] = R"(,"steps":[)";
  lookalike["workflow_job"]["steps"][2]["name"] = "[a] ]b[ {}]";
  expect_read(lookalike, "build (arm64)");
  // A job named "steps": the first "steps" is a value, the member comes after it.
  json named = base;
  named["workflow_job"]["name"] = "steps";
  expect_read(named, "steps");
  // A step holding an array followed by a member (GitHub's steps have none today): its ']' is
  // the first that looks like the array's end, and the reading must not change.
  json nested = base;
  nested["workflow_job"]["steps"][3] = json::object();  // keeps nlohmann's sorted key order
  nested["workflow_job"]["steps"][3]["annotations"] = json::array({json::object({{"a", 1}})});
  nested["workflow_job"]["steps"][3]["name"] = "annotated";
  nested["workflow_job"]["steps"][3]["status"] = "queued";
  expect_read(nested, "build (arm64)");
  nested["workflow_job"]["steps"] = json::array({nested["workflow_job"]["steps"][3]});
  expect_read(nested, "build (arm64)");
}

TEST(WorkflowJobReaderTest, AGitHubOrderedBodyCutShortIsRefusedOrReadAsTheWholeOne) {
  PayloadOptions o;
  o.full_repository = false;
  std::string body = github::testing::InGitHubOrder(WorkflowJobJson(o));
  WorkflowJobReader reader;
  auto whole = reader.Read(body);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  for (size_t n = 0; n < body.size(); ++n) {
    auto f = reader.Read(std::string_view(body).substr(0, n));
    if (f.ok()) {
      EXPECT_EQ(*f, *whole) << n;
    } else {
      EXPECT_EQ(f.status().code(), Code::kInvalidArgument) << n;
    }
  }
}

// Found by fuzz/webhook_route: a repository object that stops being JSON before any full_name
// left simdjson's iterator spent, and the fallback lookup of name/owner used it (undefined
// behaviour, a null dereference under UBSan).
TEST(WorkflowJobReaderTest, ARepositoryThatIsNotJsonBeforeFullNameIsRefusedAsNotJson) {
  ExpectMalformed(R"({"repository":{"":,})", "not valid JSON");
  ExpectMalformed(R"({"action":"queued","repository":{"id":1,"node_id":]}})", "payload: ");
  auto f = Read(R"({"action":"queued","workflow_job":{"id":1,"run_id":2},)"
                R"("repository":{"id":7,"name":"r","owner":{"login":"o"}}})");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->repository, "o/r");
}

// Found by fuzz_webhook_route: a body beginning with the key "steps" sent the shortcut's look
// behind the key to position -1 (std::out_of_range, which ended the process).
TEST(WorkflowJobReaderTest, ABodyThatBeginsWithTheStepsKeyIsRefusedNotThrown) {
  ExpectMalformed(std::string("\"steps\"-256: si_name\"te\x1f\0\0kfssta\0s", 34), "");
  ExpectMalformed(R"("steps":[{}],"full_name":"o/r",)", "");
}

TEST(WorkflowJobReaderTest, RepositoryNames) {
  EXPECT_TRUE(IsRepositoryName("octo-org/widget-service"));
  EXPECT_TRUE(IsRepositoryName("a/b.c_d-e"));
  for (std::string bad :
       std::vector<std::string>{"", "/", "a/", "/b", "ab", "a/b/c", "a b/c", "a/b\n", "a/b#1",
                                "a/\xc3\xa9", std::string(300, 'a') + "/b"}) {
    EXPECT_FALSE(IsRepositoryName(bad)) << bad;
  }
}

}  // namespace
}  // namespace mvr::runnerset
