// GMock stand-ins for the MicroVMs, GitHub and HTTP seams the fleet floor is built on, so its
// lifecycle and delivery, and the runner set's launcher, janitor and pools over them, can be driven
// through every failure point with a manual clock.
#pragma once

#include <gmock/gmock.h>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "github/github.h"
#include "http/client.h"
#include "support/manual_seam.h"

namespace mvr::fleet::testing {

class MockMicrovms : public aws::MicrovmService {
 public:
  MOCK_METHOD(Result<aws::Microvm>, RunMicrovm, (const aws::RunMicrovmRequest&), (override));
  MOCK_METHOD(Result<aws::Microvm>, GetMicrovm, (const std::string&), (override));
  MOCK_METHOD(Result<aws::ListMicrovmsResponse>, ListMicrovms, (const aws::ListMicrovmsRequest&),
              (override));
  MOCK_METHOD(Status, SuspendMicrovm, (const std::string&), (override));
  MOCK_METHOD(Status, ResumeMicrovm, (const std::string&), (override));
  MOCK_METHOD(Status, TerminateMicrovm, (const std::string&), (override));
  MOCK_METHOD(Result<aws::MicrovmAuthToken>, CreateMicrovmAuthToken,
              (const aws::CreateMicrovmAuthTokenRequest&), (override));
  MOCK_METHOD(Result<aws::MicrovmImageChange>, CreateMicrovmImage,
              (const aws::CreateMicrovmImageRequest&), (override));
  MOCK_METHOD(Result<aws::MicrovmImage>, GetMicrovmImage, (const std::string&), (override));
  MOCK_METHOD(Result<aws::MicrovmImageChange>, UpdateMicrovmImage,
              (const aws::UpdateMicrovmImageRequest&), (override));
  MOCK_METHOD(Result<aws::ListMicrovmImagesResponse>, ListMicrovmImages,
              (const aws::ListMicrovmImagesRequest&), (override));
  MOCK_METHOD(Result<aws::ListMicrovmImageVersionsResponse>, ListMicrovmImageVersions,
              (const aws::ListMicrovmImageVersionsRequest&), (override));
  MOCK_METHOD(Result<aws::MicrovmImageVersion>, GetMicrovmImageVersion,
              (const std::string&, const std::string&), (override));
  MOCK_METHOD(Result<aws::MicrovmImageVersion>, UpdateMicrovmImageVersion,
              (const aws::UpdateMicrovmImageVersionRequest&), (override));
  MOCK_METHOD(Result<aws::DeleteMicrovmImageVersionResponse>, DeleteMicrovmImageVersion,
              (const std::string&, const std::string&), (override));
  MOCK_METHOD(Result<aws::ListMicrovmImageBuildsResponse>, ListMicrovmImageBuilds,
              (const aws::ListMicrovmImageBuildsRequest&), (override));
  MOCK_METHOD(Result<aws::MicrovmImageBuild>, GetMicrovmImageBuild,
              (const std::string&, const std::string&, const std::string&), (override));
};

class MockGitHub : public github::GitHub {
 public:
  MOCK_METHOD(Result<github::JitConfig>, GenerateJitConfig,
              (const github::RunnerScope&, const github::JitConfigRequest&), (override));
  MOCK_METHOD(Result<std::vector<github::Runner>>, ListRunners,
              (const github::RunnerScope&, const github::ListRunnersOptions&), (override));
  MOCK_METHOD(Result<github::Runner>, GetRunner, (const github::RunnerScope&, int64_t), (override));
  MOCK_METHOD(Status, DeleteRunner, (const github::RunnerScope&, int64_t), (override));
  MOCK_METHOD(Result<github::Job>, GetJob, (const github::RepositoryRef&, int64_t), (override));
  MOCK_METHOD(Result<std::vector<github::Job>>, ListQueuedJobs,
              (const github::RepositoryRef&, const github::QueuedRunsFilter&), (override));
  MOCK_METHOD(Result<std::vector<github::Job>>, ListInProgressJobs, (const github::RepositoryRef&),
              (override));
  MOCK_METHOD(Result<std::vector<github::HookDelivery>>, ListHookDeliveries,
              (const github::HookRef&, TimePoint, int), (override));
  MOCK_METHOD(Result<std::vector<std::string>>, ListVisibleRepositories,
              (const github::RunnerScope&), (override));
  MOCK_METHOD(Result<github::RegistrationToken>, CreateRegistrationToken,
              (const github::RunnerScope&), (override));
};

using mvr::testing::ManualSeam;

class MockHttp : public http::HttpClient {
 public:
  MOCK_METHOD(Result<http::HttpResponse>, Send, (const http::HttpRequest&), (override));
};

}  // namespace mvr::fleet::testing
