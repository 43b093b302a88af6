// `mvr`'s outgoing HTTP: libcurl (http_client_factory.h).
#include "cli/http_client_factory.h"
#include "http/curl_client.h"

namespace mvr::cli {

std::unique_ptr<http::HttpClient> NewHttpClient(const std::string& ca_file) {
  http::CurlHttpClient::Options options;
  options.ca_file = ca_file;
  return std::make_unique<http::CurlHttpClient>(options);
}

}  // namespace mvr::cli
