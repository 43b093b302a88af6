// ImageBuilder against moto's S3 and the MicroVMs model in process (virtual time): a first build
// creates and activates the image, a re-run with the same inputs reuses it without uploading,
// a changed configuration adds a version, deactivates the old one and prunes beyond the kept
// ones, and a failing build reports the service's stateReason and removes what it made. Label
// "moto"; skips without moto_server.
#include <gtest/gtest.h>

#include <memory>

#include "aws/microvms/microvms_client.h"
#include "aws/services/s3.h"
#include "aws/signing/endpoints.h"
#include "base/encoding.h"
#include "emulate/microvms/front/inprocess_microvms.h"
#include "http/curl_client.h"
#include "imagebuild/image_build.h"
#include "support/manual_seam.h"
#include "support/moto.h"

namespace mvr::imagebuild {
namespace {

using emulate::microvms::Effect;
using emulate::microvms::EffectDriver;
using emulate::microvms::EffectOutcome;

// The software in the image: its /ready hook fails while `fail_ready` is set.
class Guest final : public emulate::microvms::InProcessGuest {
 public:
  EffectOutcome Execute(const Effect& effect) override {
    if (fail_ready && effect.kind == Effect::Kind::kCallHook &&
        effect.hook == emulate::microvms::Hook::kReady) {
      return EffectOutcome::Failure("/ready hook failed: answered HTTP 500");
    }
    return EffectDriver::Succeed(effect);
  }
  bool fail_ready = false;
};

class ImageBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_OR_SKIP(moto_);
    http::HttpRequest bucket;
    bucket.method = "PUT";
    bucket.url = moto_->url() + "/artifacts";
    ASSERT_TRUE(curl_.Send(bucket).ok());

    aws::S3ClientOptions so;
    so.endpoint = {moto_->url(), "us-east-1", "s3", "AWS_ENDPOINT_URL"};
    so.retry.max_attempts = 1;
    s3_ = std::make_unique<aws::S3Client>(so, curl_, creds_, seam_.seam);

    emulate::microvms::InProcessMicrovmsOptions mo;
    mo.images.clear();
    // One listing per second: a re-run lists twice at once and is throttled (429).
    mo.model.rate_limits["ListMicrovmImageVersions"].per_second = 1;
    mo.model.rate_limits["ListMicrovmImageVersions"].burst = 1;
    service_ = std::make_unique<emulate::microvms::InProcessMicrovms>(seam_.seam, mo, &guest_);
    aws::MicrovmsClientOptions co;
    co.endpoint = {service_->api_url(), "us-east-1", "lambda", "test"};
    microvms_ = std::make_unique<aws::MicrovmsClient>(
        co, aws::MicrovmsClientDeps{service_->api(), creds_, seam_.seam});

    artifact_.zip = "PK fake zip bytes";
    artifact_.sha256 = Sha256Hex(artifact_.zip);
    artifact_.runner_version = "2.321.0";
    artifact_.files = 3;
    request_.runner_set_id = "ci";
    request_.class_index = 0;
    request_.bucket = "artifacts";
    request_.key_prefix = "mvr";
    request_.base_image_arn = "arn:aws:lambda:us-east-1:aws:microvm-image:al2023";
    request_.build_role_arn = "arn:aws:iam::123456789012:role/build";
    request_.hooks.port = 9000;
    request_.hooks.ready.enabled = true;
    request_.poll_interval = Duration(1000);
  }

  Result<ImageBuildResult> Build() {
    ImageBuilder builder(ImageBuildDeps{seam_.seam, *s3_, *microvms_,
                                        [this](const std::string& l) { progress_ += l + "\n"; }});
    return builder.Build(request_, artifact_);
  }

  std::vector<aws::MicrovmImageVersion> Versions(const std::string& name) {
    seam_.clock.Advance(Duration(2000));  // past the listing rate limit
    aws::ListMicrovmImageVersionsRequest r;
    r.image_identifier = name;
    return aws::ListAllMicrovmImageVersions(*microvms_, r).value();
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  http::CurlHttpClient curl_;
  aws::StaticCredentialsProvider creds_{[] {
    aws::AwsCredentials c;
    c.access_key_id = "AKIDIMAGETEST";
    c.secret_access_key = Secret("image-test-secret-never-printed");
    return c;
  }()};
  mvr::testing::ManualSeam seam_;
  Guest guest_;
  std::unique_ptr<aws::S3Client> s3_;
  std::unique_ptr<emulate::microvms::InProcessMicrovms> service_;
  std::unique_ptr<aws::MicrovmsClient> microvms_;
  Artifact artifact_;
  ImageBuildRequest request_;
  std::string progress_;
};

TEST_F(ImageBuildTest, FirstBuildCreatesAndActivatesARerunReusesIt) {
  Result<ImageBuildResult> first = Build();
  ASSERT_TRUE(first.ok()) << first.status().ToString() << "\n" << progress_;
  EXPECT_EQ(first->name, ImageName("ci", 0, artifact_).value());
  EXPECT_EQ(first->outcome, ImageBuildResult::Outcome::kCreated);
  EXPECT_TRUE(first->uploaded);
  EXPECT_EQ(first->artifact_uri, "s3://artifacts/mvr/" + first->name + ".zip");
  auto head = s3_->HeadObject({"artifacts", "mvr/" + first->name + ".zip"});
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->metadata["sha256"], artifact_.sha256);
  auto versions = Versions(first->name);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].status, aws::ImageVersionStatus::kActive);
  EXPECT_EQ(versions[0].config.code_artifact_uri, first->artifact_uri);

  progress_.clear();
  Result<ImageBuildResult> again = Build();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->outcome, ImageBuildResult::Outcome::kReused);
  EXPECT_FALSE(again->uploaded);
  EXPECT_EQ(again->image_version, first->image_version);
  EXPECT_EQ(Versions(first->name).size(), 1u);
  EXPECT_EQ(progress_.find("image-test-secret"), std::string::npos);
  int throttled = 0;
  for (const auto& call : service_->calls()) throttled += call.status == 429 ? 1 : 0;
  EXPECT_GT(throttled, 0) << "the re-run met throttling and got through by retrying";
}

TEST_F(ImageBuildTest, NewConfigurationAddsAVersionAndRetiresOldOnes) {
  request_.keep_inactive_versions = 1;
  std::vector<std::string> built;
  for (int mib : {2048, 4096, 8192}) {
    request_.memory_mib = mib;
    Result<ImageBuildResult> r = Build();
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << progress_;
    built.push_back(r->image_version);
    seam_.clock.Advance(Duration(60'000));  // distinct createdAt
  }
  Result<ImageBuildResult> last = Build();  // the same inputs as the third: nothing new
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->outcome, ImageBuildResult::Outcome::kReused);
  std::map<std::string, aws::ImageVersionStatus> status;
  for (const auto& v : Versions(last->name)) status[v.image_version] = v.status;
  EXPECT_EQ(status.count(built[0]), 0u) << "beyond keep-inactive-versions: deleted";
  EXPECT_EQ(status[built[1]], aws::ImageVersionStatus::kInactive);
  EXPECT_EQ(status[built[2]], aws::ImageVersionStatus::kActive);
}

TEST_F(ImageBuildTest, FailedBuildReportsItsReasonAndLeavesNothingNew) {
  guest_.fail_ready = true;
  Result<ImageBuildResult> r = Build();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/ready hook failed"), std::string::npos)
      << r.status().ToString();
  const std::string name = ImageName("ci", 0, artifact_).value();
  EXPECT_TRUE(Versions(name).empty());
  EXPECT_EQ(s3_->HeadObject({"artifacts", "mvr/" + name + ".zip"}).status().code(),
            Code::kNotFound);

  guest_.fail_ready = false;  // fixed: the next run builds on the same image
  Result<ImageBuildResult> fixed = Build();
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ(fixed->outcome, ImageBuildResult::Outcome::kUpdated);
}

TEST_F(ImageBuildTest, BadRequestIsRefusedBeforeAnythingIsMade) {
  request_.bucket = "Bad_Bucket";
  EXPECT_EQ(Build().status().code(), Code::kInvalidArgument);
  request_.bucket = "artifacts";
  request_.runner_set_id = "has.dot";
  EXPECT_EQ(Build().status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(service_->calls().empty());
}

}  // namespace
}  // namespace mvr::imagebuild
