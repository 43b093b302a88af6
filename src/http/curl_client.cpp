#include "http/curl_client.h"

#include <curl/curl.h>

#include <cstring>

namespace mvr::http {
namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void EnsureGlobalInit() {
  static CurlGlobal once;  // curl_global_init must run once before any handle; not state we own.
  (void)once;
}

struct Exchange {
  HttpResponse response;
  size_t limit;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t bytes = size * n;
  if (ex->response.body.size() + bytes > ex->limit) {
    ex->too_large = true;
    return 0;
  }
  ex->response.body.append(data, bytes);
  return bytes;
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, e - b + 1);
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  size_t bytes = size * n;
  std::string line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {
    ex->response.headers = Headers();  // a new status line (100 Continue) starts over
    return bytes;
  }
  size_t colon = line.find(':');
  if (colon != std::string::npos) {
    ex->response.headers.Add(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  return bytes;
}

}  // namespace

CurlHttpClient::CurlHttpClient() : CurlHttpClient(Options()) {}

CurlHttpClient::CurlHttpClient(Options options) : options_(std::move(options)) {
  EnsureGlobalInit();
}

CurlHttpClient::~CurlHttpClient() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlHttpClient::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void CurlHttpClient::Release(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < 16) {
    idle_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

Result<HttpResponse> CurlHttpClient::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(Acquire());
  if (curl == nullptr) return Internal("libcurl could not create a handle");
  curl_easy_reset(curl);

  Exchange ex;
  ex.limit = options_.max_response_bytes;
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.ca_pem.empty()) {
    // Added to the system's CAs (Debian's libcurl keeps its CA path), as the socket client does.
    curl_blob blob{options_.ca_pem.data(), options_.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!options_.ca_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(options_.connect_timeout, request.timeout).count()));
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // accept what libcurl can decode

  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (!request.body.empty() || (request.method != "GET" && request.method != "HEAD")) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }

  curl_slist* headers = nullptr;
  bool has_content_type = false;
  for (const auto& [k, v] : request.headers) {
    if (HeaderNameEquals(k, "Content-Type")) has_content_type = true;
    headers = curl_slist_append(headers, (k + ": " + v).c_str());
  }
  headers = curl_slist_append(headers, "Expect:");
  if (!has_content_type) headers = curl_slist_append(headers, "Content-Type:");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  // libcurl's own account of a failure ("SSL certificate problem: unable to get local issuer
  // certificate"), more telling than its error code's text.
  char reason[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, reason);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  Release(curl);

  if (ex.too_large) {
    return Transient("response from " + request.method + " " + request.url + " exceeded " +
                     std::to_string(ex.limit) + " bytes");
  }
  if (rc != CURLE_OK) {
    std::string what = rc == CURLE_OPERATION_TIMEDOUT
                           ? "timed out after " + std::to_string(request.timeout.count()) + " ms"
                           : std::string(reason[0] ? reason : curl_easy_strerror(rc));
    // Strip the query: presigned parameters are credentials.
    std::string where = request.url.substr(0, request.url.find('?'));
    return Transient(request.method + " " + where + ": " + what);
  }
  ex.response.status = static_cast<int>(status);
  return std::move(ex.response);
}

}  // namespace mvr::http
