#include <gtest/gtest.h>

#include "base/encoding.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "test_support.h"

namespace mvr::github {
namespace {

using testing::JsonAnswer;
using testing::StubServer;

nlohmann::json RunnerJson(int id) {
  return {
      {"id", id},        {"name", "runner-" + std::to_string(id)},
      {"os", "linux"},   {"status", id % 2 ? "online" : "offline"},
      {"busy", id == 3}, {"labels", {{{"id", 1}, {"name", "self-hosted"}, {"type", "read-only"}}}}};
}

TEST(NextPageLinkTest, FindsRelNextAmongOthers) {
  EXPECT_EQ(
      NextPageLink(
          R"(<https://api.github.com/r?page=2>; rel="next", <https://api.github.com/r?page=5>; rel="last")"),
      "https://api.github.com/r?page=2");
  EXPECT_EQ(NextPageLink(R"(<https://a/x?page=1>; rel="prev", <https://a/x?page=3>; rel="next")"),
            "https://a/x?page=3");
  EXPECT_EQ(NextPageLink(R"(<https://a/x?page=1>; rel="first", <https://a/x?page=1>; rel="prev")"),
            std::nullopt);
  EXPECT_EQ(NextPageLink(""), std::nullopt);
  EXPECT_EQ(NextPageLink("<https://a/x?page=2"), std::nullopt);
}

class PaginationTest : public ::testing::Test {
 protected:
  std::unique_ptr<GitHubClient> Client(int max_pages = 100) {
    GitHubClientOptions o;
    o.rest.base_url = stub_.url();
    o.per_page = 2;
    o.max_pages = max_pages;
    return GitHubClient::Create(curl_, clock_, GitHubAuth::Token(Secret("ghp_pagination_token")), o)
        .value();
  }
  // Serves runners 1..5 two per page, with Link headers as GitHub writes them.
  void ServeRunnerPages() {
    std::string base = stub_.url();
    stub_.SetScript([base](const http::ServerRequest& r) {
      int page = std::stoi(r.Param("page").value_or("1"));
      nlohmann::json runners = nlohmann::json::array();
      for (int id = page * 2 - 1; id <= std::min(page * 2, 5); ++id)
        runners.push_back(RunnerJson(id));
      http::HttpResponse out =
          JsonAnswer(200, nlohmann::json({{"total_count", 5}, {"runners", runners}}).dump());
      auto link = [&](int p, const char* rel) {
        return "<" + base + r.path + "?name=" + UriEncode(r.Param("name").value_or("")) +
               "&per_page=2&page=" + std::to_string(p) + ">; rel=\"" + rel + "\"";
      };
      std::string header = page < 3 ? link(page + 1, "next") + ", " + link(3, "last")
                                    : link(1, "first") + ", " + link(2, "prev");
      out.headers.Set("Link", header);
      return out;
    });
  }

  StubServer stub_;
  http::CurlHttpClient curl_;
  ManualClock clock_;
  const RunnerScope scope_ = RunnerScope::Repository("octo-org", "widget-service");
};

TEST_F(PaginationTest, ListRunnersFollowsLinkHeadersAcrossThreePages) {
  ServeRunnerPages();
  ListRunnersOptions options;
  options.name = "runner x";
  auto runners = Client()->ListRunners(scope_, options);
  ASSERT_TRUE(runners.ok()) << runners.status().ToString();
  ASSERT_EQ(runners->size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*runners)[i].id, i + 1);
  EXPECT_TRUE((*runners)[2].busy);
  EXPECT_FALSE((*runners)[1].online());
  auto requests = stub_.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].path, "/repos/octo-org/widget-service/actions/runners");
  EXPECT_EQ(requests[0].Param("name"), "runner x");
  EXPECT_EQ(requests[0].Param("per_page"), "2");
  EXPECT_EQ(requests[2].Param("page"), "3");
  for (const auto& r : requests) {
    EXPECT_EQ(r.headers.Get("Authorization"), "Bearer ghp_pagination_token");
  }
}

TEST_F(PaginationTest, StopsAtThePageLimit) {
  ServeRunnerPages();
  auto runners = Client(/*max_pages=*/2)->ListRunners(scope_, {});
  EXPECT_EQ(runners.status().code(), Code::kInternal);
  EXPECT_NE(runners.status().message().find("more than 2 pages"), std::string::npos);
}

TEST_F(PaginationTest, RefusesALinkToAnotherHost) {
  stub_.SetScript([](const http::ServerRequest&) {
    http::HttpResponse out = JsonAnswer(200, R"({"total_count": 9, "runners": []})");
    out.headers.Set("Link", R"(<https://evil.example.com/steal?page=2>; rel="next")");
    return out;
  });
  auto runners = Client()->ListRunners(scope_, {});
  EXPECT_EQ(runners.status().code(), Code::kInternal);
  EXPECT_NE(runners.status().message().find("refusing to send credentials"), std::string::npos);
  EXPECT_EQ(stub_.request_count(), 1u);
}

TEST_F(PaginationTest, AMalformedPageFailsTheListing) {
  stub_.SetScript([](const http::ServerRequest&) {
    return JsonAnswer(200, R"({"total_count": 1, "runners": [{"id": 1}]})");
  });
  auto runners = Client()->ListRunners(scope_, {});
  EXPECT_EQ(runners.status().code(), Code::kInternal);
  EXPECT_NE(runners.status().message().find("runners[0].name"), std::string::npos);
}

TEST_F(PaginationTest, ListQueuedJobsWalksQueuedRunsAndKeepsQueuedJobs) {
  std::string base = stub_.url();
  stub_.SetScript([base](const http::ServerRequest& r) {
    const std::string repo = "/repos/octo-org/widget-service/actions";
    if (r.path == repo + "/runs") {
      EXPECT_EQ(r.Param("status"), "queued");
      return JsonAnswer(200, R"({"total_count": 3, "workflow_runs": [
          {"id": 100, "status": "queued"}, {"id": 200, "status": "queued"},
          {"id": 300, "status": "queued"}]})");
    }
    auto job = [](int id, int run, const char* status) {
      return nlohmann::json({{"id", id},
                             {"run_id", run},
                             {"status", status},
                             {"labels", {"self-hosted", "lambda-mvm-small"}}});
    };
    if (r.path == repo + "/runs/100/jobs") {
      if (r.Param("page").value_or("1") == "1") {
        http::HttpResponse out = JsonAnswer(
            200, nlohmann::json({{"total_count", 3},
                                 {"jobs", {job(1, 100, "queued"), job(2, 100, "completed")}}})
                     .dump());
        out.headers.Set("Link",
                        "<" + base + repo + "/runs/100/jobs?per_page=2&page=2>; rel=\"next\"");
        return out;
      }
      return JsonAnswer(
          200, nlohmann::json({{"total_count", 3}, {"jobs", {job(3, 100, "queued")}}}).dump());
    }
    if (r.path == repo + "/runs/200/jobs") return JsonAnswer(404, R"({"message": "Not Found"})");
    if (r.path == repo + "/runs/300/jobs") {
      return JsonAnswer(
          200, nlohmann::json({{"total_count", 1}, {"jobs", {job(4, 300, "in_progress")}}}).dump());
    }
    return JsonAnswer(500, R"({"message": "unexpected"})");
  });
  auto jobs =
      Client()->ListQueuedJobs(RepositoryRef{"octo-org", "widget-service"}, QueuedRunsFilter{});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, 1);
  EXPECT_EQ((*jobs)[1].id, 3);
  EXPECT_EQ((*jobs)[1].run_id, 100);
  EXPECT_EQ(stub_.request_count(), 5u);
}

TEST_F(PaginationTest, ListInProgressJobsWalksInProgressRunsAndKeepsTheirRunners) {
  stub_.SetScript([](const http::ServerRequest& r) {
    const std::string repo = "/repos/octo-org/widget-service/actions";
    if (r.path == repo + "/runs") {
      EXPECT_EQ(r.Param("status"), "in_progress");
      return JsonAnswer(200, R"({"total_count": 1, "workflow_runs": [{"id": 100}]})");
    }
    if (r.path == repo + "/runs/100/jobs") {
      return JsonAnswer(200, R"({"total_count": 2, "jobs": [
          {"id": 1, "run_id": 100, "status": "in_progress", "runner_name": "lambda-mvm-a"},
          {"id": 2, "run_id": 100, "status": "queued", "runner_name": null}]})");
    }
    return JsonAnswer(500, R"({"message": "unexpected"})");
  });
  auto jobs = Client()->ListInProgressJobs(RepositoryRef{"octo-org", "widget-service"});
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id, 1);
  EXPECT_EQ((*jobs)[0].runner_name, "lambda-mvm-a");
}

// A queue of 1,000 runs cost the janitor a GET per run every sweep: a bounded read takes the runs
// that have waited longest (GitHub lists the newest first) and says how many it left.
TEST_F(PaginationTest, ListQueuedJobsReadsTheLongestWaitingRunsFirstAndCountsTheRest) {
  std::vector<std::string> read;
  stub_.SetScript([&read](const http::ServerRequest& r) {
    const std::string repo = "/repos/octo-org/widget-service/actions";
    if (r.path == repo + "/runs") {
      return JsonAnswer(200, R"({"total_count": 4, "workflow_runs": [
          {"id": 4, "run_started_at": "2026-12-04T10:03:00Z", "created_at": "2026-12-04T10:03:00Z"},
          {"id": 3, "created_at": "2026-12-04T10:02:00Z"},
          {"id": 1, "run_started_at": "2026-12-04T10:09:00Z", "created_at": "2026-12-04T09:00:00Z"},
          {"id": 2, "run_started_at": "2026-12-04T10:01:00Z", "created_at": "2026-12-04T10:01:00Z"}]})");
    }
    read.push_back(r.path);
    const std::string run = r.path.substr(repo.size() + 6, 1);
    return JsonAnswer(200, R"({"total_count": 1, "jobs": [{"id": 1)" + run + R"(, "run_id": )" +
                               run + R"(, "status": "queued"}]})");
  });
  int unread = -1;
  QueuedRunsFilter filter;
  filter.max_runs = 2;
  filter.runs_unread = &unread;
  auto jobs = Client()->ListQueuedJobs(RepositoryRef{"octo-org", "widget-service"}, filter);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  // Run 1 was created first, but its latest attempt began last (a re-run).
  ASSERT_EQ(read.size(), 2u);
  EXPECT_NE(read[0].find("/runs/2/jobs"), std::string::npos) << read[0];
  EXPECT_NE(read[1].find("/runs/3/jobs"), std::string::npos) << read[1];
  EXPECT_EQ(unread, 2);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, 12);

  read.clear();
  filter.max_runs = 0;
  jobs = Client()->ListQueuedJobs(RepositoryRef{"octo-org", "widget-service"}, filter);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(read.size(), 4u);
  EXPECT_EQ(unread, 0);
}

TEST_F(PaginationTest, ListQueuedJobsPassesOnOtherErrors) {
  stub_.SetScript([](const http::ServerRequest& r) {
    if (r.path.find("/jobs") == std::string::npos) {
      return JsonAnswer(200, R"({"total_count": 1, "workflow_runs": [{"id": 7}]})");
    }
    return JsonAnswer(502, R"({"message": "Server Error"})");
  });
  auto jobs =
      Client()->ListQueuedJobs(RepositoryRef{"octo-org", "widget-service"}, QueuedRunsFilter{});
  EXPECT_EQ(jobs.status().code(), Code::kTransient);
}

}  // namespace
}  // namespace mvr::github
