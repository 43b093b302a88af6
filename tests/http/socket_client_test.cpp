// The socket HttpClient of the Lambda bootstrap: plain HTTP against the project's HttpServer
// (bodies both ways, headers, kept-alive connections, a refused connection), and HTTPS against
// `openssl s_server` on loopback with a throw-away certificate for localhost: verified with that
// certificate as the CA bundle, refused without it.
#include "http/socket_client.h"

#include "base/host_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>

#include "base/files.h"
#include "http/server.h"
#include "process/process_runner.h"

namespace mvr::http {
namespace {

// A loopback port that was free a moment ago (-1 if none could be had).
int FreePort() { return PickFreeLoopbackPort().value_or(-1); }

class SocketHttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<http::HttpServer>([this](const http::ServerRequest& r) {
      ++requests_;
      http::HttpResponse res = http::HttpResponse::Text(r.path == "/missing" ? 404 : 200,
                                                        r.method + " " + r.path + " " + r.body);
      res.headers.Set("X-Seen-Header", r.headers.GetOr("X-Test", ""));
      return res;
    });
    auto port = server_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    base_ = "http://127.0.0.1:" + std::to_string(*port);
  }

  std::unique_ptr<http::HttpServer> server_;
  std::atomic<int> requests_{0};
  std::string base_;
};

TEST_F(SocketHttpClientTest, PostsABodyAndReadsTheAnswerWithItsHeaders) {
  SocketHttpClient client({});
  http::HttpRequest req;
  req.method = "POST";
  req.url = base_ + "/echo?x=1";
  req.body = std::string(100'000, 'b');
  req.headers.Set("X-Test", "seen");
  auto res = client.Send(req);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "POST /echo " + req.body);
  EXPECT_EQ(res->headers.Get("x-seen-header"), "seen");
}

TEST_F(SocketHttpClientTest, SequentialRequestsAndErrorStatusesAreAnswers) {
  SocketHttpClient client({});
  for (int i = 0; i < 5; ++i) {
    http::HttpRequest req;
    req.url = base_ + (i % 2 ? "/missing" : "/ok");
    auto res = client.Send(req);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, i % 2 ? 404 : 200);
    EXPECT_EQ(res->body, std::string("GET ") + (i % 2 ? "/missing" : "/ok") + " ");
  }
  EXPECT_EQ(requests_.load(), 5);
}

TEST_F(SocketHttpClientTest, RefusedConnectionIsTransient) {
  const int port = FreePort();
  ASSERT_GT(port, 0);
  SocketHttpClient client({});
  http::HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  auto res = client.Send(req);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kTransient);
}

SocketHttpClient::Options Trusting(const std::string& ca_file, const std::string& ca_pem) {
  SocketHttpClient::Options options;
  options.ca_file = ca_file;
  options.ca_pem = ca_pem;
  return options;
}

TEST(SocketHttpClientTlsTest, VerifiesTheServerAgainstTheGivenCaBundleOnly) {
  process::PosixProcessRunner processes;
  auto dir = TemporaryDirectory::Create("mvr-tls-test");
  ASSERT_TRUE(dir.ok());
  const std::string cert = dir->path() + "/cert.pem", key = dir->path() + "/key.pem";
  process::ProcessSpec gen;
  gen.argv = {"openssl", "req",   "-x509",         "-newkey", "rsa:2048",
              "-nodes",  "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
              "-days",   "1",     "-keyout",       key,       "-out",
              cert};
  gen.env = {{"PATH", "/usr/bin:/bin"}};
  auto made = processes.Run(gen, Duration(60'000));
  if (!made.ok() || !made->exit.ok()) GTEST_SKIP() << "the openssl command is not available";
  const int port = FreePort();
  ASSERT_GT(port, 0);
  process::ProcessSpec serve;
  serve.argv = {"openssl", "s_server", "-accept", "127.0.0.1:" + std::to_string(port),
                "-cert",   cert,       "-key",    key,
                "-www",    "-quiet"};
  serve.env = {{"PATH", "/usr/bin:/bin"}};
  auto pid = processes.Spawn(serve);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  SocketHttpClient trusted(Trusting(cert, ""));
  http::HttpRequest req;
  req.url = "https://localhost:" + std::to_string(port) + "/";
  req.timeout = Duration(10'000);
  Result<http::HttpResponse> res = Transient("not tried");
  RealSleeper sleeper;
  for (int i = 0; i < 50 && !res.ok(); ++i) {
    res = trusted.Send(req);
    if (!res.ok()) sleeper.Sleep(Duration(100));
  }
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("s_server"), std::string::npos) << res->body.substr(0, 200);
  // The same CA given as PEM text (github.caBundle in mvr-lambda), beside the default paths.
  Result<std::string> pem = ReadFile(cert, "certificate");
  ASSERT_TRUE(pem.ok()) << pem.status().ToString();
  SocketHttpClient by_pem(Trusting("", *pem));
  Result<http::HttpResponse> via_pem = by_pem.Send(req);
  ASSERT_TRUE(via_pem.ok()) << via_pem.status().ToString();
  EXPECT_EQ(via_pem->status, 200);
  SocketHttpClient untrusted({});
  auto refused = untrusted.Send(req);
  EXPECT_FALSE(refused.ok()) << "a certificate no CA vouches for must be refused";
  SocketHttpClient wrong_pem(
      Trusting("", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"));
  EXPECT_FALSE(wrong_pem.Send(req).ok()) << "PEM text with no certificate loads nothing";
  processes.Signal(*pid, SIGTERM).IgnoreError();
  (void)processes.Wait(*pid);
}

}  // namespace
}  // namespace mvr::http
