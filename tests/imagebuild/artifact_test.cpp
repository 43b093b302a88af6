// The runner image's artifact and name: the same files give the same bytes whatever their
// timestamps or the order the file system lists them in; a changed file or runner version gives
// another name; names follow 001's <runnerSetId><index>-<8 hex>; bad sources are refused naming
// the path.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "base/files.h"
#include "imagebuild/artifact.h"

namespace mvr::imagebuild {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class ArtifactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TemporaryDirectory::Create("mvr-artifact-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_.emplace(std::move(*dir));
    root_ = dir_->path();
    Write(root_ / "image/Dockerfile", "FROM al2023\nARG RUNNER_VERSION=2.321.0\nCMD [\"x\"]\n");
    Write(root_ / "image/hooks.json", "{}\n");
    Write(root_ / "bundle/lib/mvr", "ELF...");
    ::chmod((root_ / "bundle/lib/mvr").c_str(), 0755);
    Write(root_ / "bundle/bin/mvr", "#!/bin/sh\n");
  }

  ArtifactSources Sources() const {
    return {root_.string(), (root_ / "image/Dockerfile").string(), {"image", "bundle"}};
  }

  Artifact Packed() const {
    auto files = CollectArtifactFiles(Sources());
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    auto a = PackArtifact(files.value_or(std::vector<ZipEntry>{}));
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.value_or(Artifact{});
  }

  std::optional<TemporaryDirectory> dir_;
  fs::path root_;
};

TEST_F(ArtifactTest, SameFilesGiveTheSameBytesWhateverTheirTimestamps) {
  Artifact first = Packed();
  EXPECT_EQ(first.files, 5u);  // Dockerfile, image/{Dockerfile,hooks.json}, bundle/{bin,lib}/mvr
  fs::last_write_time(root_ / "image/hooks.json",
                      fs::last_write_time(root_ / "image/hooks.json") - std::chrono::hours(48));
  // Rewriting a file with the same bytes (a new mtime) changes nothing either.
  Write(root_ / "bundle/bin/mvr", "#!/bin/sh\n");
  Artifact second = Packed();
  EXPECT_EQ(first.zip, second.zip);
  EXPECT_EQ(first.sha256, second.sha256);
  EXPECT_EQ(first.runner_version, "2.321.0");
}

TEST_F(ArtifactTest, ChangedContentOrRunnerVersionRenamesTheImage) {
  Artifact base = Packed();
  std::string name = ImageName("ci", 0, base).value();
  EXPECT_TRUE(std::regex_match(name, std::regex("ci_0-[0-9a-f]{8}"))) << name;
  EXPECT_EQ(ImageName("ci", 0, base).value(), name);  // stable
  EXPECT_EQ(ImageName("ci", 1, base).value().substr(0, 5), "ci_1-");
  // Issue 53 item 4: no set's image names start with another set's ("ci" + 10 vs "ci1" + 0).
  EXPECT_EQ(ImageName("ci", 10, base).value().substr(0, 6), "ci_10-");
  EXPECT_EQ(ImageName("ci1", 0, base).value().substr(0, 6), "ci1_0-");

  Write(root_ / "bundle/lib/mvr", "ELF v2");
  EXPECT_NE(ImageName("ci", 0, Packed()).value(), name);

  Artifact other_runner = base;
  other_runner.runner_version = "2.322.0";
  EXPECT_NE(ImageName("ci", 0, other_runner).value(), name);
}

TEST_F(ArtifactTest, ExecutableBitSurvivesAndChangesTheBytes) {
  Artifact before = Packed();
  ::chmod((root_ / "bundle/lib/mvr").c_str(), 0644);
  EXPECT_NE(Packed().sha256, before.sha256);
}

TEST_F(ArtifactTest, BadSourcesAreRefusedNamingThePath) {
  ArtifactSources s = Sources();
  s.include = {"build-arm64/supervisor-bundle"};
  auto missing = CollectArtifactFiles(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("build-arm64/supervisor-bundle"), std::string::npos);

  fs::create_directories(root_ / "empty");
  s.include = {"empty"};
  auto empty = CollectArtifactFiles(s);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("holds no files"), std::string::npos);

  s.include = {"../etc"};
  EXPECT_EQ(CollectArtifactFiles(s).status().code(), Code::kInvalidArgument);
  s.include = {"/etc"};
  EXPECT_EQ(CollectArtifactFiles(s).status().code(), Code::kInvalidArgument);

  EXPECT_FALSE(PackArtifact({{"image/x", "y", 0644}}).ok());  // no Dockerfile
}

// Issue 53, item 12: a symlink in an include is followed only while it stays inside the build
// context. One that leads out (to a directory or a file) is refused naming the link, rather than
// packing files from elsewhere on the machine (under '..' names, for a directory); a symlink that
// stays inside is packed under the path the user sees, as if it were a copy.
TEST_F(ArtifactTest, SymlinksOutOfTheContextAreRefusedNamingTheLink) {
  auto outside = TemporaryDirectory::Create("mvr-artifact-outside");
  ASSERT_TRUE(outside.ok());
  Write(fs::path(outside->path()) / "secret/key", "do not pack");
  fs::create_directory_symlink(fs::path(outside->path()) / "secret", root_ / "bundle/escape");
  auto dir_link = CollectArtifactFiles(Sources());
  ASSERT_FALSE(dir_link.ok());
  EXPECT_EQ(dir_link.status().code(), Code::kInvalidArgument);
  EXPECT_NE(dir_link.status().message().find("bundle/escape"), std::string::npos)
      << dir_link.status().message();
  EXPECT_NE(dir_link.status().message().find("outside the build context"), std::string::npos)
      << dir_link.status().message();
  fs::remove(root_ / "bundle/escape");

  fs::create_symlink(fs::path(outside->path()) / "secret/key", root_ / "image/key");
  auto file_link = CollectArtifactFiles(Sources());
  ASSERT_FALSE(file_link.ok());
  EXPECT_NE(file_link.status().message().find("image/key"), std::string::npos)
      << file_link.status().message();
  fs::remove(root_ / "image/key");

  fs::create_directory_symlink(fs::path(outside->path()) / "secret", root_ / "linked");
  ArtifactSources s = Sources();
  s.include = {"linked"};
  EXPECT_EQ(CollectArtifactFiles(s).status().code(), Code::kInvalidArgument);

  fs::create_directory_symlink(root_, root_ / "bundle/loop");  // inside, but never ending
  auto loop = CollectArtifactFiles(Sources());
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("bundle/loop"), std::string::npos)
      << loop.status().message();
  fs::remove(root_ / "bundle/loop");

  fs::create_directory_symlink(root_ / "image", root_ / "bundle/image-copy");
  auto inside = CollectArtifactFiles(Sources());
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  std::vector<std::string> names;
  for (const ZipEntry& e : *inside) names.push_back(e.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "bundle/image-copy/hooks.json"), names.end())
      << ::testing::PrintToString(names);
}

TEST(ImageNameTest, RefusesIdsAnImageNameCannotCarry) {
  Artifact a;
  a.sha256 = "00";
  EXPECT_FALSE(ImageName("", 0, a).ok());
  EXPECT_FALSE(ImageName("ci.prod", 0, a).ok());
  EXPECT_FALSE(ImageName("ci_prod", 0, a).ok());  // '_' ends the id
  EXPECT_FALSE(ImageName("CI", 0, a).ok());
  EXPECT_FALSE(ImageName(std::string(60, 'a'), 0, a).ok());
  EXPECT_TRUE(ImageName(std::string(53, 'a'), 0, a).ok());  // 53 + "_0-" + 8 = 64
  EXPECT_FALSE(ImageName(std::string(54, 'a'), 0, a).ok());
}

TEST(RunnerVersionTest, ReadsTheArgDefault) {
  EXPECT_EQ(RunnerVersionOf("FROM x\n  ARG RUNNER_VERSION=2.1.0  \nARG OTHER=1\n"), "2.1.0");
  EXPECT_EQ(RunnerVersionOf("FROM x\nARG RUNNER_SHA256=ab\n"), "");
  EXPECT_EQ(RunnerVersionOf("FROM x\nENV RUNNER_VERSION=9\n"), "");
}

}  // namespace
}  // namespace mvr::imagebuild
