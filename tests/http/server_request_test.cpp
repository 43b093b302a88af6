// What HttpServer hands its handler and writes back: bodyless requests, the request fields,
// HEAD, 100-continue, keep-alive, a throwing handler, and Stop with idle connections.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "http/curl_client.h"
#include "http/server.h"
#include "raw_connection.h"

namespace mvr::http {
namespace {

using testing::RawConnection;

class ServerRequestTest : public ::testing::Test {
 protected:
  void StartServer(HttpServer::Options options = {}) {
    server_ = std::make_unique<HttpServer>(
        [this](const ServerRequest& r) {
          if (r.path == "/throw") throw std::runtime_error("token ghp_leakme123 in " + r.body);
          if (r.path == "/throw-int") throw 42;
          {
            std::lock_guard<std::mutex> lock(mu_);
            seen_.push_back(r);
          }
          HttpResponse out = HttpResponse::Text(200, "body:" + r.body);
          out.headers.Set("X-Method", r.method);
          return out;
        },
        options);
    port_ = server_->Start("127.0.0.1", 0).value();
  }

  ServerRequest Last() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_.empty() ? ServerRequest() : seen_.back();
  }

  std::mutex mu_;
  std::vector<ServerRequest> seen_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

// A hook call may come as a POST with neither a body nor Content-Length; RFC 9112 says its body
// is empty.
TEST_F(ServerRequestTest, BodylessPostWithoutContentLengthIsServedWithAnEmptyBody) {
  StartServer();
  RawConnection c(port_);
  c.Send("POST /hooks/job-started HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string response = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(response), 200) << response;
  EXPECT_EQ(RawConnection::Body(response), "body:");
  EXPECT_EQ(Last().method, "POST");
  EXPECT_EQ(Last().path, "/hooks/job-started");
  EXPECT_EQ(Last().body, "");
}

TEST_F(ServerRequestTest, RequestCarriesDecodedPathRawPathQueryAndPeer) {
  StartServer();
  RawConnection c(port_);
  c.Send("GET /a%20b/c?x=1&y=two%20words&x=3 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Custom: v\r\n\r\n");
  ASSERT_EQ(RawConnection::Status(c.ReadResponse()), 200);
  ServerRequest r = Last();
  EXPECT_EQ(r.path, "/a b/c");
  EXPECT_EQ(r.raw_path, "/a%20b/c");
  EXPECT_EQ(r.query, "x=1&y=two%20words&x=3");
  EXPECT_EQ(r.Param("x"), "1");
  EXPECT_EQ(r.Param("y"), "two words");
  EXPECT_EQ(r.params.size(), 3u);
  EXPECT_EQ(r.headers.Get("x-custom"), "v");
  EXPECT_EQ(r.remote_addr, "127.0.0.1");
  EXPECT_EQ(r.local_port, port_);
}

TEST_F(ServerRequestTest, HandlerExceptionBecomesA500WithoutItsText) {
  StartServer();
  RawConnection c(port_);
  c.Send("POST /throw HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7\r\n\r\npayload");
  std::string response = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(response), 500) << response;
  // Neither the body nor any header field carries the exception's text.
  EXPECT_EQ(response.find("ghp_leakme123"), std::string::npos) << response;
  EXPECT_EQ(response.find("payload"), std::string::npos) << response;
  c.Send("POST /throw-int HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse()), 500);
  CurlHttpClient client;  // the server lives on
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port_) + "/after";
  auto after = client.Send(req);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServerRequestTest, HeadAnswersTheLengthWithoutTheBody) {
  StartServer();
  RawConnection c(port_);
  // Pipelined: if the HEAD answer carried a body, the GET answer would not parse.
  c.Send("HEAD /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string head = c.ReadResponse(/*head_only=*/true);
  EXPECT_EQ(RawConnection::Status(head), 200);
  EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos) << head;
  std::string get = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(get), 200) << get;
  EXPECT_NE(get.find("X-Method: GET"), std::string::npos) << get;
  EXPECT_EQ(RawConnection::Body(get), "body:");
}

TEST_F(ServerRequestTest, ExpectContinueGetsA100BeforeTheBody) {
  StartServer();
  RawConnection c(port_);
  c.Send("PUT /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse(/*head_only=*/true)), 100);
  c.Send("data");
  std::string response = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(response), 200);
  EXPECT_EQ(RawConnection::Body(response), "body:data");
}

TEST_F(ServerRequestTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  StartServer();
  RawConnection c(port_);
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
    c.Send(std::string(method) + " /k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\nhi");
    std::string response = c.ReadResponse();
    EXPECT_EQ(RawConnection::Status(response), 200) << method;
    EXPECT_NE(response.find(std::string("X-Method: ") + method), std::string::npos) << response;
    EXPECT_EQ(RawConnection::Body(response), "body:hi");
  }
}

TEST_F(ServerRequestTest, ConnectionCloseIsHonoured) {
  StartServer();
  RawConnection c(port_);
  c.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse()), 200);
  EXPECT_TRUE(c.ReadUntilClosed());
}

// Regression: Stop used to wait out the idle keep-alive connections.
TEST_F(ServerRequestTest, StopReturnsWithIdleKeepAliveConnectionsOpen) {
  HttpServer::Options o;
  o.keep_alive_timeout = Duration(600'000);
  StartServer(o);
  RawConnection idle(port_), half(port_);
  idle.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  ASSERT_EQ(RawConnection::Status(idle.ReadResponse()), 200);
  half.Send("GET / HTTP/1.1\r\n");
  server_->Stop();  // would hang for ten minutes if it waited for them
  EXPECT_TRUE(idle.ReadUntilClosed());
  EXPECT_TRUE(half.ReadUntilClosed());
  server_->Stop();  // idempotent
}

TEST_F(ServerRequestTest, ServesIpv6Loopback) {
  server_ = std::make_unique<HttpServer>(
      [](const ServerRequest& r) { return HttpResponse::Text(200, r.remote_addr); });
  auto port = server_->Start("::1", 0);
  if (!port.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << port.status().ToString();
  CurlHttpClient client;
  HttpRequest req;
  req.url = "http://[::1]:" + std::to_string(*port) + "/";
  auto res = client.Send(req);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "::1");
}

TEST(HttpServerBindTest, StartingTwiceIsRefused) {
  HttpServer a([](const ServerRequest&) { return HttpResponse::Text(200, ""); });
  ASSERT_TRUE(a.Start("127.0.0.1", 0).ok());
  EXPECT_FALSE(a.Start("127.0.0.1", 0).ok());
}

TEST(HttpServerBindTest, AnAddressNotOnThisMachineIsRefusedClearly) {
  HttpServer a([](const ServerRequest&) { return HttpResponse::Text(200, ""); });
  auto r = a.Start("192.0.2.1", 0);  // TEST-NET-1: never local; numeric, so no lookup
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace mvr::http
