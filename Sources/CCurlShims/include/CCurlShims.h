#ifndef PUSHGATE_CCURL_SHIMS_H
#define PUSHGATE_CCURL_SHIMS_H
#include <curl/curl.h>

// curl_easy_setopt / curl_multi_setopt are variadic; Swift cannot call them.
// One typed wrapper per argument type.
CURLcode pg_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode pg_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode pg_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode pg_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode pg_curl_easy_setopt_write_function(CURL *handle, size_t (*fn)(char *, size_t, size_t, void *));
CURLcode pg_curl_easy_setopt_header_function(CURL *handle, size_t (*fn)(char *, size_t, size_t, void *));
CURLcode pg_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode pg_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode pg_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);
CURLMcode pg_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
// CURLOPT_PREREQFUNCTION (libcurl >= 7.80): called before every send of a request,
// libcurl's own re-sends on a fresh connection included.
CURLcode pg_curl_easy_setopt_prereq_function(CURL *handle, int (*fn)(void *, char *, char *, int, int));
// CURLOPT_SOCKOPTFUNCTION: called once per new socket (one per connection opened).
CURLcode pg_curl_easy_setopt_sockopt_function(CURL *handle, int (*fn)(void *, curl_socket_t, curlsocktype));

// CURLOPT_CLOSESOCKETFUNCTION: called when libcurl closes a socket; must close it.
CURLcode pg_curl_easy_setopt_closesocket_function(CURL *handle, int (*fn)(void *, curl_socket_t));

#endif
