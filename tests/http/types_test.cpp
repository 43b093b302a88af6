#include "http/types.h"

#include <gtest/gtest.h>

#include "http/router.h"

namespace mvr::http {
namespace {

TEST(UrlTest, ParsesSchemesPortsAndBareHosts) {
  Url u = ParseUrl("http://127.0.0.1:8080/a/b?x=1").value();
  EXPECT_EQ(u.scheme, "http");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 8080);
  EXPECT_EQ(u.path, "/a/b");
  EXPECT_EQ(u.query, "x=1");
  EXPECT_EQ(u.Authority(), "127.0.0.1:8080");

  Url bare = ParseUrl("abc.lambda-url.aws").value();
  EXPECT_EQ(bare.scheme, "https");
  EXPECT_EQ(bare.port, 443);
  EXPECT_EQ(bare.path, "/");
  EXPECT_EQ(bare.Origin(), "https://abc.lambda-url.aws");

  Url v6 = ParseUrl("http://[::1]:9000").value();
  EXPECT_EQ(v6.host, "[::1]");
  EXPECT_EQ(v6.port, 9000);

  EXPECT_EQ(ParseUrl("https://h:443/").value().Authority(), "h");
}

TEST(UrlTest, RejectsBadUrls) {
  for (const char* bad :
       {"ftp://x/", "http://", "http://h:0/", "http://h:99999/", "http://h:x/", "http://[::1/"}) {
    EXPECT_FALSE(ParseUrl(bad).ok()) << bad;
  }
}

TEST(QueryTest, ParsesAndBuilds) {
  auto q = ParseQuery("a=1&b=x%20y&c&d=p+q");
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[1].second, "x y");
  EXPECT_EQ(q[2].first, "c");
  EXPECT_EQ(q[3].second, "p q");
  EXPECT_EQ(BuildQuery({{"name", "a b"}, {"page", "2"}}), "name=a%20b&page=2");
}

TEST(HeadersTest, CaseInsensitive) {
  Headers h;
  h.Add("Content-Type", "a");
  EXPECT_EQ(h.Get("content-type"), "a");
  h.Set("CONTENT-TYPE", "b");
  EXPECT_EQ(h.items().size(), 1u);
  EXPECT_EQ(h.Get("Content-Type"), "b");
  h.Remove("content-TYPE");
  EXPECT_FALSE(h.Has("Content-Type"));
}

TEST(RouterTest, MatchesParamsMethodsAndFallbacks) {
  Router r;
  r.Add("GET", "/repos/{owner}/{repo}/runners/{id}", [](const ServerRequest&, const PathParams& p) {
    return HttpResponse::Text(200, p.at("owner") + "|" + p.at("repo") + "|" + p.at("id"));
  });
  r.Add("GET", "/files/{rest+}", [](const ServerRequest&, const PathParams& p) {
    return HttpResponse::Text(200, p.at("rest"));
  });
  ServerRequest req;
  req.method = "GET";
  req.path = "/repos/o/r%2Fx/runners/42";
  EXPECT_EQ(r.Dispatch(req).body, "o|r/x|42");
  req.path = "/files/a/b/c";
  EXPECT_EQ(r.Dispatch(req).body, "a/b/c");
  req.method = "DELETE";
  EXPECT_EQ(r.Dispatch(req).status, 405);
  req.method = "GET";
  req.path = "/nope";
  EXPECT_EQ(r.Dispatch(req).status, 404);
}

}  // namespace
}  // namespace mvr::http
