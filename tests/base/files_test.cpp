#include "base/files.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/host_port.h"
#include "base/stop_signals.h"

namespace mvr {
namespace {

TEST(FilesTest, ReadFileReturnsTheBytesAndTrimmedReadDropsTrailingWhitespace) {
  auto dir = TemporaryDirectory::Create("mvr-files-test");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  std::string path = dir->path() + "/token";
  std::ofstream(path, std::ios::binary) << "line one\r\n \t\n";
  EXPECT_EQ(ReadFile(path, "token").value(), "line one\r\n \t\n");
  EXPECT_EQ(ReadTrimmedFile(path, "token").value(), "line one");
}

TEST(FilesTest, AMissingFileIsAnErrorNamingWhatItWasForAndWhy) {
  auto missing = ReadFile("/nonexistent/mvr/secret", "--webhook-secret-file");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("--webhook-secret-file file /nonexistent/mvr/secret"),
            std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("No such file"), std::string::npos);
}

TEST(FilesTest, TemporaryDirectoryIsRemovedUnlessKept) {
  std::string removed, kept;
  {
    auto a = TemporaryDirectory::Create("mvr-files-test");
    auto b = TemporaryDirectory::Create("mvr-files-test");
    ASSERT_TRUE(a.ok() && b.ok());
    removed = a->path();
    kept = b->path();
    EXPECT_NE(removed, kept);
    std::ofstream(removed + "/inside") << "x";
    TemporaryDirectory moved = std::move(*a);  // the moved-from one removes nothing
    EXPECT_EQ(moved.path(), removed);
    b->Keep();
  }
  EXPECT_FALSE(std::filesystem::exists(removed));
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove_all(kept);
}

TEST(HostPortTest, AcceptsNamesAddressesAndBracketedIpv6) {
  auto v4 = ParseHostPort("127.0.0.1:8080", "--listen");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  auto v6 = ParseHostPort("[::1]:0", "--listen");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(ParseHostPort("localhost:65535", "listen")->port, 65535);
}

TEST(HostPortTest, RefusesWhatIsNotHostColonPortNamingTheSetting) {
  for (const char* bad : {"8080", ":8080", "host:", "host:-1", "host:65536", "host:80x", "::1:80",
                          "[]:80", "host: 80"}) {
    auto parsed = ParseHostPort(bad, "listen");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message().rfind("listen must be HOST:PORT", 0), 0u)
        << parsed.status().message();
    EXPECT_NE(parsed.status().message().find(bad), std::string::npos);
  }
}

TEST(StopSignalsTest, InterruptEndsAWaitWithZeroAndARealSignalIsReported) {
  StopSignals signals;
  signals.Interrupt();  // before Wait: the pending signal is taken as the interrupt
  EXPECT_EQ(signals.Wait(), 0);
  StopSignals second;
  ::kill(::getpid(), SIGINT);
  EXPECT_EQ(second.Wait(), SIGINT);
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &both, nullptr);  // leave the test process as it was
}

}  // namespace
}  // namespace mvr
