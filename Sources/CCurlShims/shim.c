// libcurl wrappers: see include/CCurlShims.h.
#include "CCurlShims.h"

CURLcode CCurlShims_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

CURLcode CCurlShims_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}

CURLcode CCurlShims_setopt_off_t(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}

CURLcode CCurlShims_setopt_str(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}

CURLcode CCurlShims_setopt_ptr(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}

CURLcode CCurlShims_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}

CURLcode CCurlShims_set_read_callback(CURL *curl, CCurlShims_read_cb cb, void *userdata) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_READFUNCTION, cb);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(curl, CURLOPT_READDATA, userdata);
}

CURLcode CCurlShims_set_write_callback(CURL *curl, CCurlShims_write_cb cb, void *userdata) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, cb);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(curl, CURLOPT_WRITEDATA, userdata);
}

CURLcode CCurlShims_set_header_callback(CURL *curl, CCurlShims_write_cb cb, void *userdata) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, cb);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(curl, CURLOPT_HEADERDATA, userdata);
}

CURLcode CCurlShims_set_xferinfo_callback(CURL *curl, CCurlShims_xferinfo_cb cb, void *userdata) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, cb);
    if (rc != CURLE_OK) return rc;
    rc = curl_easy_setopt(curl, CURLOPT_XFERINFODATA, userdata);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
}

CURLcode CCurlShims_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

size_t CCurlShims_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

size_t CCurlShims_error_size(void) { return CURL_ERROR_SIZE; }
