// `mvr`'s outgoing HTTP: libcurl (http_client_factory.h).
#include "cli/http_client_factory.h"
#include "http/curl_client.h"

namespace mvr::cli {

std::unique_ptr<http::HttpClient> NewHttpClient(const std::string& ca_file,
                                                const std::string& ca_pem) {
  http::CurlHttpClient::Options options;
  options.ca_file = ca_file;
  options.ca_pem = ca_pem;
  return std::make_unique<http::CurlHttpClient>(options);
}

}  // namespace mvr::cli
