#pragma once
// libcurl wrappers: typed, fixed-argument forms of the variadic calls Swift cannot import
// (`curl_easy_setopt`, `curl_easy_getinfo`) and of macros it cannot see (`CURL_GLOBAL_ALL`,
// `CURL_READFUNC_ABORT`, `CURL_WRITEFUNC_ERROR`). Each setter checks nothing itself: libcurl
// returns CURLE_UNKNOWN_OPTION / CURLE_BAD_FUNCTION_ARGUMENT for a wrong option or value.
#include <curl/curl.h>

/// Read callback shape (`CURLOPT_READFUNCTION`): fill `buffer` with up to `size * nitems` bytes.
typedef size_t (*CCurlShims_read_cb)(char *buffer, size_t size, size_t nitems, void *userdata);
/// Write and header callback shape (`CURLOPT_WRITEFUNCTION`, `CURLOPT_HEADERFUNCTION`).
typedef size_t (*CCurlShims_write_cb)(char *data, size_t size, size_t nmemb, void *userdata);
/// Progress callback shape (`CURLOPT_XFERINFOFUNCTION`); non-zero aborts the transfer.
typedef int (*CCurlShims_xferinfo_cb)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                      curl_off_t ultotal, curl_off_t ulnow);

/// `curl_global_init(CURL_GLOBAL_ALL)`.
CURLcode CCurlShims_global_init(void);

/// `curl_easy_setopt` for options taking a `long`.
CURLcode CCurlShims_setopt_long(CURL *curl, CURLoption option, long value);
/// `curl_easy_setopt` for options taking a `curl_off_t` (the `*_LARGE` options).
CURLcode CCurlShims_setopt_off_t(CURL *curl, CURLoption option, curl_off_t value);
/// `curl_easy_setopt` for options taking a string; libcurl copies it (except
/// `CURLOPT_POSTFIELDS`, which this project never uses).
CURLcode CCurlShims_setopt_str(CURL *curl, CURLoption option, const char *value);
/// `curl_easy_setopt` for options taking an opaque pointer (`*DATA`, `CURLOPT_ERRORBUFFER`).
CURLcode CCurlShims_setopt_ptr(CURL *curl, CURLoption option, void *value);
/// `curl_easy_setopt` for options taking a `struct curl_slist *` (`CURLOPT_HTTPHEADER`); the list
/// must outlive the transfer.
CURLcode CCurlShims_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value);

/// Sets `CURLOPT_READFUNCTION` and `CURLOPT_READDATA`.
CURLcode CCurlShims_set_read_callback(CURL *curl, CCurlShims_read_cb cb, void *userdata);
/// Sets `CURLOPT_WRITEFUNCTION` and `CURLOPT_WRITEDATA`.
CURLcode CCurlShims_set_write_callback(CURL *curl, CCurlShims_write_cb cb, void *userdata);
/// Sets `CURLOPT_HEADERFUNCTION` and `CURLOPT_HEADERDATA`.
CURLcode CCurlShims_set_header_callback(CURL *curl, CCurlShims_write_cb cb, void *userdata);
/// Sets `CURLOPT_XFERINFOFUNCTION` and `CURLOPT_XFERINFODATA` and turns `CURLOPT_NOPROGRESS` off.
CURLcode CCurlShims_set_xferinfo_callback(CURL *curl, CCurlShims_xferinfo_cb cb, void *userdata);

/// `curl_easy_getinfo` for `long` results.
CURLcode CCurlShims_getinfo_long(CURL *curl, CURLINFO info, long *value);

/// `CURL_READFUNC_ABORT`: returned from a read callback, aborts with CURLE_ABORTED_BY_CALLBACK.
size_t CCurlShims_readfunc_abort(void);
/// `CURL_ERROR_SIZE`: the size an error buffer must have.
size_t CCurlShims_error_size(void);
