#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "http/curl_client.h"
#include "http/router.h"
#include "http/server.h"

namespace mvr::http {
namespace {

class ServerClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("POST", "/echo", [](const ServerRequest& r, const PathParams&) {
      HttpResponse out = HttpResponse::Text(201, r.body);
      out.headers.Set("X-Seen-Header", r.headers.GetOr("X-Custom", "none"));
      out.headers.Set("X-Seen-Query", r.Param("q").value_or("none"));
      return out;
    });
    router_.Add("GET", "/slow", [](const ServerRequest&, const PathParams&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return HttpResponse::Text(200, "late");
    });
    server_ = std::make_unique<HttpServer>(router_.AsHandler(), SmallBodies());
    port_ = server_->Start("127.0.0.1", 0).value();
  }

  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  static HttpServer::Options SmallBodies() {
    HttpServer::Options o;
    o.max_body_bytes = 1024;
    return o;
  }

  HttpRequest Request(std::string method, const std::string& path, std::string body = "") {
    HttpRequest r;
    r.method = std::move(method);
    r.url = Url(path);
    r.body = std::move(body);
    return r;
  }

  Router router_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  CurlHttpClient client_;
};

TEST_F(ServerClientTest, RoundTripsBodyHeadersAndQuery) {
  HttpRequest req = Request("POST", "/echo?q=a%20b", std::string("pay\0load", 8));
  req.headers.Set("X-Custom", "v");
  auto res = client_.Send(req);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->body, std::string("pay\0load", 8));
  EXPECT_EQ(res->headers.Get("x-seen-header"), "v");
  EXPECT_EQ(res->headers.Get("X-Seen-Query"), "a b");
}

TEST_F(ServerClientTest, OversizedBodyGets413) {
  HttpRequest req = Request("POST", "/echo", std::string(4096, 'x'));
  auto res = client_.Send(req);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 413);
}

TEST_F(ServerClientTest, TimeoutIsTransient) {
  HttpRequest req = Request("GET", "/slow");
  req.timeout = Duration(200);
  auto res = client_.Send(req);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kTransient);
  EXPECT_NE(res.status().message().find("timed out"), std::string::npos);
}

TEST_F(ServerClientTest, ConnectionRefusedIsTransient) {
  server_->Stop();
  auto res = client_.Send(Request("POST", "/echo"));
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kTransient);
}

TEST_F(ServerClientTest, ManyConcurrentRequests) {
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto res = client_.Send(Request("POST", "/echo", "x"));
        if (res.ok() && res->status == 201) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 200);
}

TEST(HttpServerTest, BindingATakenPortFailsClearly) {
  HttpServer a([](const ServerRequest&) { return HttpResponse::Text(200, ""); });
  int port = a.Start("127.0.0.1", 0).value();
  HttpServer b([](const ServerRequest&) { return HttpResponse::Text(200, ""); });
  auto r = b.Start("127.0.0.1", port);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace mvr::http
