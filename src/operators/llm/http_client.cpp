#include "operators/llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <mutex>

namespace kernelevolve::operators::llm {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

std::string Trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  std::string line(data, size * count);
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  if (line.rfind("HTTP/", 0) == 0) headers->clear();  // a new response (after a redirect or 100)
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = Trim(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    (*headers)[name] = Trim(line.substr(colon + 1));
  }
  return size * count;
}

TransportError Classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return TransportError::kNone;
    case CURLE_OPERATION_TIMEDOUT: return TransportError::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR: return TransportError::kConnect;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING: return TransportError::kTruncated;
    default: return TransportError::kOther;
  }
}

}  // namespace

const char* TransportErrorName(TransportError error) {
  switch (error) {
    case TransportError::kNone: return "none";
    case TransportError::kTimeout: return "timeout";
    case TransportError::kConnect: return "connect";
    case TransportError::kTruncated: return "truncated";
    case TransportError::kOther: return "other";
  }
  return "other";
}

HttpResponse HttpPost(const HttpRequest& request) {
  GlobalInitOnce();
  HttpResponse response;
  CURL* curl = curl_easy_init();
  if (!curl) {
    response.error = TransportError::kOther;
    response.error_message = "curl_easy_init failed";
    return response;
  }
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM (thread-safe)
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(std::llround(request.timeout_seconds * 1000)));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::llround(request.connect_timeout_seconds * 1000)));
  if (request.stall_seconds > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(std::ceil(request.stall_seconds))));
  }
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip/deflate when the server offers
  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(curl);
  response.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  response.error = Classify(code);
  if (code != CURLE_OK) {
    response.error_message = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return response;
}

}  // namespace kernelevolve::operators::llm
