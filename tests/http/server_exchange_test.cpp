// The socket-free parts of serving: target splitting, the handler guard, and what a handler's
// response becomes on the wire.
#include "http/server_exchange.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace mvr::http {
namespace {

std::optional<std::string> Field(const WireResponse& wire, std::string_view name) {
  for (const auto& [k, v] : wire.fields) {
    if (HeaderNameEquals(k, name)) return v;
  }
  return std::nullopt;
}

TEST(SetRequestTargetTest, BrokenPercentEncodingKeepsThePathAsSent) {
  ServerRequest r;
  SetRequestTarget("/a%zz?q", r);
  EXPECT_EQ(r.path, "/a%zz");
  EXPECT_EQ(r.raw_path, "/a%zz");
  EXPECT_EQ(r.query, "q");
}

TEST(SetRequestTargetTest, NoQueryLeavesQueryAndParamsEmpty) {
  ServerRequest r;
  SetRequestTarget("/hooks/job-started", r);
  EXPECT_EQ(r.path, "/hooks/job-started");
  EXPECT_EQ(r.query, "");
  EXPECT_TRUE(r.params.empty());
}

TEST(CallHandlerTest, AnyExceptionBecomesAGeneric500) {
  ServerRequest r;
  HttpResponse a = CallHandler(
      [](const ServerRequest&) -> HttpResponse { throw std::runtime_error("secret-value"); }, r);
  EXPECT_EQ(a.status, 500);
  EXPECT_EQ(a.body.find("secret-value"), std::string::npos);
  HttpResponse b = CallHandler([](const ServerRequest&) -> HttpResponse { throw 7; }, r);
  EXPECT_EQ(b.status, 500);
}

TEST(ToWireTest, FramingFieldsAreTheServersOwn) {
  HttpResponse out = HttpResponse::Text(200, "hello");
  out.headers.Set("Content-Length", "999");
  out.headers.Set("Transfer-Encoding", "chunked");
  out.headers.Set("X-Kept", "yes");
  WireResponse wire = ToWire(out, /*head_request=*/false);
  EXPECT_EQ(wire.content_length, 5u);
  EXPECT_EQ(Field(wire, "Content-Length"), std::nullopt);
  EXPECT_EQ(Field(wire, "Transfer-Encoding"), std::nullopt);
  EXPECT_EQ(Field(wire, "X-Kept"), "yes");
  EXPECT_EQ(wire.body, "hello");
}

TEST(ToWireTest, BodyWithoutContentTypeIsOctetStream) {
  HttpResponse out;
  out.status = 200;
  out.body = "x";
  EXPECT_EQ(Field(ToWire(out, false), "Content-Type"), "application/octet-stream");
  out.body.clear();
  EXPECT_EQ(Field(ToWire(out, false), "Content-Type"), std::nullopt);
}

TEST(ToWireTest, NoContentStatusesCarryNoLength) {
  HttpResponse out;
  out.status = 204;
  out.body = "ignored";
  WireResponse wire = ToWire(out, false);
  EXPECT_EQ(wire.status, 204u);
  EXPECT_EQ(wire.content_length, std::nullopt);
  EXPECT_EQ(wire.body, "");
}

TEST(ToWireTest, HeadKeepsTheLengthAndDropsTheBody) {
  WireResponse wire = ToWire(HttpResponse::Json(200, "{\"a\":1}"), /*head_request=*/true);
  EXPECT_EQ(wire.content_length, 7u);
  EXPECT_EQ(wire.body, "");
}

TEST(ToWireTest, AnImpossibleStatusBecomes500) {
  HttpResponse out;  // status 0: a handler that forgot to set one
  EXPECT_EQ(ToWire(out, false).status, 500u);
  out.status = 1000;
  EXPECT_EQ(ToWire(out, false).status, 500u);
}

TEST(ToWireTest, HandlerAskingToCloseIsHeard) {
  HttpResponse out = HttpResponse::Text(200, "bye");
  out.headers.Set("Connection", "keep-alive, Close");
  WireResponse wire = ToWire(out, false);
  EXPECT_TRUE(wire.close);
  EXPECT_EQ(Field(wire, "Connection"), std::nullopt);
}

}  // namespace
}  // namespace mvr::http
