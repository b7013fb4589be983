#include "CFIDO2Shims.h"
#include <fido.h>
#include <fido/err.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct CFIDO2Shims_Device {
    fido_dev_t *dev;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void do_init(void) { fido_init(0); }
void CFIDO2Shims_init(void) { pthread_once(&init_once, do_init); }

// --- the test transport: CTAPHID reports over a Unix stream socket ---------------------------

static void *sock_open(const char *path) {
    struct sockaddr_un addr;
    if (path == NULL || strlen(path) >= sizeof(addr.sun_path)) return NULL;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return NULL;
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, path);
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) { close(fd); return NULL; }
    int *h = malloc(sizeof(int));
    if (h == NULL) { close(fd); return NULL; }
    *h = fd;
    return h;
}

static void sock_close(void *handle) {
    if (handle == NULL) return;
    close(*(int *)handle);
    free(handle);
}

/// Reads one whole report of `len` bytes, waiting at most `ms` (-1: forever) for its start.
static int sock_read(void *handle, unsigned char *buf, size_t len, int ms) {
    int fd = *(int *)handle;
    size_t got = 0;
    while (got < len) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, got == 0 ? ms : 5000);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return (int)got;
}

/// libfido2 hands over the report with its report id first (one byte, 0): the socket carries
/// the 64 bytes after it, as a HID device's interrupt endpoint does.
static int sock_write(void *handle, const unsigned char *buf, size_t len) {
    if (len < 2) return -1;
    int fd = *(int *)handle;
    size_t sent = 0;
    while (sent < len - 1) {
        ssize_t n = send(fd, buf + 1 + sent, len - 1 - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        sent += (size_t)n;
    }
    return (int)len;
}

// --- devices -----------------------------------------------------------------------------------

int CFIDO2Shims_firstDevice(char *path, size_t cap) {
    CFIDO2Shims_init();
    const size_t max = 16;
    fido_dev_info_t *list = fido_dev_info_new(max);
    if (list == NULL) return FIDO_ERR_INTERNAL;
    size_t found = 0;
    int rc = fido_dev_info_manifest(list, max, &found);
    if (rc == FIDO_OK && found == 0) rc = FIDO_ERR_NOTFOUND;
    if (rc == FIDO_OK) {
        const char *p = fido_dev_info_path(fido_dev_info_ptr(list, 0));
        if (p == NULL || strlen(p) + 1 > cap) rc = FIDO_ERR_INTERNAL;
        else strcpy(path, p);
    }
    fido_dev_info_free(&list, max);
    return rc;
}

int CFIDO2Shims_open(const char *path, const char *socketPath, int timeoutMs, CFIDO2Shims_Device **out) {
    CFIDO2Shims_init();
    *out = NULL;
    fido_dev_t *dev = fido_dev_new();
    if (dev == NULL) return FIDO_ERR_INTERNAL;
    int rc = FIDO_OK;
    if (socketPath != NULL) {
        const fido_dev_io_t io = { sock_open, sock_close, sock_read, sock_write };
        rc = fido_dev_set_io_functions(dev, &io);
        path = socketPath;
    }
    if (rc == FIDO_OK) rc = fido_dev_set_timeout(dev, timeoutMs);
    if (rc == FIDO_OK) rc = fido_dev_open(dev, path);
    if (rc != FIDO_OK) { fido_dev_free(&dev); return rc; }
    CFIDO2Shims_Device *d = malloc(sizeof(*d));
    if (d == NULL) { fido_dev_close(dev); fido_dev_free(&dev); return FIDO_ERR_INTERNAL; }
    d->dev = dev;
    *out = d;
    return FIDO_OK;
}

void CFIDO2Shims_close(CFIDO2Shims_Device *d) {
    if (d == NULL) return;
    fido_dev_close(d->dev);
    fido_dev_free(&d->dev);
    free(d);
}

int CFIDO2Shims_info(CFIDO2Shims_Device *d, int *ctap2, int *pinState, int *hmacSecret) {
    *ctap2 = fido_dev_is_fido2(d->dev) ? 1 : 0;
    *pinState = fido_dev_has_pin(d->dev) ? 1 : (fido_dev_supports_pin(d->dev) ? 0 : -1);
    *hmacSecret = 0;
    if (!*ctap2) return FIDO_OK;
    fido_cbor_info_t *info = fido_cbor_info_new();
    if (info == NULL) return FIDO_ERR_INTERNAL;
    int rc = fido_dev_get_cbor_info(d->dev, info);
    if (rc == FIDO_OK) {
        char **ext = fido_cbor_info_extensions_ptr(info);
        for (size_t i = 0; i < fido_cbor_info_extensions_len(info); i++)
            if (strcmp(ext[i], "hmac-secret") == 0) *hmacSecret = 1;
    }
    fido_cbor_info_free(&info);
    return rc;
}

int CFIDO2Shims_retries(CFIDO2Shims_Device *d, int *retries) {
    return fido_dev_get_retry_count(d->dev, retries);
}

int CFIDO2Shims_makeCredential(CFIDO2Shims_Device *d, const char *rpId, const uint8_t *userId, size_t userIdLen,
                               const uint8_t *clientDataHash, const char *pin,
                               uint8_t *credId, size_t cap, size_t *credIdLen) {
    *credIdLen = 0;
    fido_cred_t *cred = fido_cred_new();
    if (cred == NULL) return FIDO_ERR_INTERNAL;
    int rc = fido_cred_set_type(cred, COSE_ES256);
    if (rc == FIDO_OK) rc = fido_cred_set_clientdata_hash(cred, clientDataHash, CFIDO2Shims_SecretLength);
    if (rc == FIDO_OK) rc = fido_cred_set_rp(cred, rpId, "vault");
    if (rc == FIDO_OK) rc = fido_cred_set_user(cred, userId, userIdLen, "vault", NULL, NULL);
    if (rc == FIDO_OK) rc = fido_cred_set_extensions(cred, FIDO_EXT_HMAC_SECRET);
    if (rc == FIDO_OK) rc = fido_cred_set_rk(cred, FIDO_OPT_FALSE);
    if (rc == FIDO_OK) rc = fido_dev_make_cred(d->dev, cred, pin);
    if (rc == FIDO_OK) {
        // The authenticator must have enabled hmac-secret: its extension outputs say so.
        if (!(fido_cred_flags(cred) & 0x80)) rc = FIDO_ERR_UNSUPPORTED_EXTENSION;
        else if (fido_cred_id_len(cred) == 0 || fido_cred_id_len(cred) > cap) rc = FIDO_ERR_INVALID_PARAM;
        else {
            memcpy(credId, fido_cred_id_ptr(cred), fido_cred_id_len(cred));
            *credIdLen = fido_cred_id_len(cred);
        }
    }
    fido_cred_free(&cred);
    return rc;
}

int CFIDO2Shims_hmacSecret(CFIDO2Shims_Device *d, const char *rpId, const uint8_t *credId, size_t credIdLen,
                           const uint8_t *salt, size_t saltLen, const uint8_t *clientDataHash, const char *pin,
                           uint8_t *secret) {
    if (saltLen != CFIDO2Shims_SecretLength && saltLen != 2 * CFIDO2Shims_SecretLength) return FIDO_ERR_INVALID_ARGUMENT;
    fido_assert_t *a = fido_assert_new();
    if (a == NULL) return FIDO_ERR_INTERNAL;
    int rc = fido_assert_set_rp(a, rpId);
    if (rc == FIDO_OK) rc = fido_assert_set_clientdata_hash(a, clientDataHash, CFIDO2Shims_SecretLength);
    if (rc == FIDO_OK) rc = fido_assert_allow_cred(a, credId, credIdLen);
    if (rc == FIDO_OK) rc = fido_assert_set_extensions(a, FIDO_EXT_HMAC_SECRET);
    if (rc == FIDO_OK) rc = fido_assert_set_hmac_salt(a, salt, saltLen);
    if (rc == FIDO_OK) rc = fido_assert_set_up(a, FIDO_OPT_TRUE);
    if (rc == FIDO_OK) rc = fido_dev_get_assert(d->dev, a, pin);
    if (rc == FIDO_OK) {
        if (fido_assert_count(a) != 1 || fido_assert_hmac_secret_len(a, 0) != saltLen ||
            !(fido_assert_flags(a, 0) & 0x01)) {
            rc = FIDO_ERR_INVALID_PARAM;
        } else {
            memcpy(secret, fido_assert_hmac_secret_ptr(a, 0), saltLen);
        }
    }
    // libfido2 frees its copy of the output with freezero (blob.c): nothing of it is left behind.
    fido_assert_free(&a);
    return rc;
}

const char *CFIDO2Shims_describe(int rc) { return fido_strerr(rc); }
