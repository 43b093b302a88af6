// `mvr-lambda`'s outgoing HTTP: sockets and OpenSSL, no libcurl (http_client_factory.h).
#include "cli/http_client_factory.h"
#include "http/socket_client.h"

namespace mvr::cli {

std::unique_ptr<http::HttpClient> NewHttpClient(const std::string& ca_file) {
  http::SocketHttpClient::Options options;
  options.ca_file = ca_file;
  return std::make_unique<http::SocketHttpClient>(options);
}

}  // namespace mvr::cli
