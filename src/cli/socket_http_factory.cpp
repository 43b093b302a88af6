// `mvr-lambda`'s outgoing HTTP: sockets and OpenSSL, no libcurl (http_client_factory.h).
#include "cli/http_client_factory.h"
#include "http/socket_client.h"

namespace mvr::cli {

std::unique_ptr<http::HttpClient> NewHttpClient(const std::string& ca_file,
                                                const std::string& ca_pem) {
  http::SocketHttpClient::Options options;
  options.ca_file = ca_file;
  options.ca_pem = ca_pem;
  return std::make_unique<http::SocketHttpClient>(options);
}

}  // namespace mvr::cli
