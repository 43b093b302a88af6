// HttpServer bounds what a client can make it hold: body size (chunked too), header bytes and
// count, a deadline for the header fields and one for the body, and slow clients never take the
// handler workers. server_crowd_test.cpp: many connections at once.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "http/curl_client.h"
#include "http/server.h"
#include "raw_connection.h"

namespace mvr::http {
namespace {

using testing::RawConnection;

class ServerLimitsTest : public ::testing::Test {
 protected:
  void StartServer(HttpServer::Options options) {
    server_ = std::make_unique<HttpServer>(
        [this](const ServerRequest& r) {
          ++calls_;
          return HttpResponse::Text(200, r.body);
        },
        options);
    port_ = server_->Start("127.0.0.1", 0).value();
  }

  static HttpServer::Options Small() {
    HttpServer::Options o;
    o.max_body_bytes = 1024;
    o.max_header_bytes = 2048;
    o.max_header_count = 20;
    return o;
  }

  static std::string Chunk(const std::string& data) {
    char size[32];
    snprintf(size, sizeof(size), "%zx\r\n", data.size());
    return size + data + "\r\n";
  }

  std::atomic<int> calls_{0};
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

const std::string kChunkedHead =
    "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n";

TEST_F(ServerLimitsTest, OversizedChunkedBodyGets413WithoutCallingTheHandler) {
  StartServer(Small());
  RawConnection c(port_);
  c.Send(kChunkedHead + Chunk(std::string(600, 'a')) + Chunk(std::string(600, 'b')) + "0\r\n\r\n");
  std::string response = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(response), 413) << response;
  EXPECT_TRUE(c.ReadUntilClosed());
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerLimitsTest, ChunkedBodyUnderTheLimitArrivesExactly) {
  StartServer(Small());
  RawConnection c(port_);
  std::string part1("ab\0c\r\n", 6), part2(500, 'z');
  c.Send(kChunkedHead + Chunk(part1) + Chunk(part2) + "0\r\n\r\n");
  std::string response = c.ReadResponse();
  EXPECT_EQ(RawConnection::Status(response), 200) << response;
  EXPECT_EQ(RawConnection::Body(response), part1 + part2);
}

TEST_F(ServerLimitsTest, TooManyHeaderFieldsGet431AndTheConnectionCloses) {
  StartServer(Small());
  RawConnection c(port_);
  std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 30; ++i) request += "X-F" + std::to_string(i) + ": v\r\n";
  c.Send(request + "\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse()), 431);
  EXPECT_TRUE(c.ReadUntilClosed());
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerLimitsTest, OversizedHeaderGets431AndTheConnectionCloses) {
  StartServer(Small());
  RawConnection c(port_);
  c.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(4096, 'v') + "\r\n\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse()), 431);
  EXPECT_TRUE(c.ReadUntilClosed());
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerLimitsTest, MalformedRequestGets400) {
  StartServer(Small());
  RawConnection c(port_);
  c.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: nope\r\n\r\n");
  EXPECT_EQ(RawConnection::Status(c.ReadResponse()), 400);
  EXPECT_TRUE(c.ReadUntilClosed());
}

TEST_F(ServerLimitsTest, SlowHeadersAreCutAtTheHeaderDeadline) {
  HttpServer::Options o = Small();
  o.header_timeout = Duration(300);
  StartServer(o);
  RawConnection c(port_);
  ASSERT_TRUE(c.Send("POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  EXPECT_TRUE(c.ReadUntilClosed());  // the client never finishes; the server gives up
  EXPECT_EQ(c.received(), "");
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(ServerLimitsTest, SlowBodyIsCutAtTheRequestDeadline) {
  HttpServer::Options o = Small();
  o.read_timeout = Duration(300);
  StartServer(o);
  RawConnection c(port_);
  ASSERT_TRUE(c.Send("POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123"));
  EXPECT_TRUE(c.ReadUntilClosed());
  EXPECT_EQ(calls_.load(), 0);
}

// A client that keeps sending a byte now and then does not reset the deadline: it covers the
// whole request, not the gap between reads.
TEST_F(ServerLimitsTest, TricklingClientIsCutAtTheRequestDeadline) {
  HttpServer::Options o = Small();
  o.header_timeout = Duration(300);
  o.max_header_bytes = 64 << 10;
  StartServer(o);
  RawConnection c(port_);
  ASSERT_TRUE(c.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  bool cut = false;
  for (int i = 0; i < 400 && !cut; ++i) {  // 20 s of trickling at most
    cut = !c.Send("v") || c.ReadUntilClosed(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(cut);
  EXPECT_EQ(calls_.load(), 0);
}

// The supervisor's hooks must answer while clients that never finish their requests hang on.
TEST_F(ServerLimitsTest, HooksStillAnswerWhileEightSlowClientsHang) {
  HttpServer::Options o;
  o.threads = 2;  // fewer workers than slow clients
  StartServer(o);
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(slow.back()->connected());
    // Half stall in the headers, half in the body.
    ASSERT_TRUE(slow.back()->Send(
        i % 2 == 0 ? "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   : "POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\nab"));
  }
  CurlHttpClient client;
  for (int i = 0; i < 4; ++i) {
    HttpRequest req;
    req.method = "POST";
    req.url = "http://127.0.0.1:" + std::to_string(port_) + "/hook";
    req.body = "{\"event\":\"job-started\"}";
    req.timeout = Duration(15'000);  // generous: the answer must come, not come fast
    auto res = client.Send(req);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, req.body);
  }
  EXPECT_EQ(calls_.load(), 4);
}

}  // namespace
}  // namespace mvr::http
