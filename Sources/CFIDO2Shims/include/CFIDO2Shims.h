#ifndef CFIDO2SHIMS_H
#define CFIDO2SHIMS_H
#include <stddef.h>
#include <stdint.h>

/// The FIDO2 operations vault needs, on libfido2, behind a narrow surface: libfido2's opaque
/// objects (fido_dev_t, fido_cred_t, fido_assert_t) and its I/O callbacks stay in C. Every
/// function returns a libfido2 status (FIDO_OK = 0; the FIDO_ERR_* values, CTAP2 codes above
/// 0, libfido2's own below 0), which Swift classifies.
///
/// What vault asks of an authenticator (SECURITY.md "Keyslot file", the fido2 slot):
/// - a non-discoverable ES256 credential for relying party `rpId` with the hmac-secret
///   extension (user presence; the PIN when given);
/// - an assertion over that credential with one 32-byte salt, user presence required, returning
///   the 32-byte hmac-secret output (HMAC-SHA-256(CredRandom, salt), decrypted by libfido2).

typedef struct CFIDO2Shims_Device CFIDO2Shims_Device;

enum {
    /// The most bytes of a credential id vault keeps (CTAP allows up to 1023; real keys use < 256).
    CFIDO2Shims_MaxCredentialId = 1024,
    /// The salt and the hmac-secret output vault uses.
    CFIDO2Shims_SecretLength = 32,
    /// The most bytes of a device path.
    CFIDO2Shims_MaxPath = 4096,
};

/// Initialises libfido2 once (idempotent; its debug log off).
void CFIDO2Shims_init(void);

/// The path of the first FIDO2 device the system lists (hidraw), into `path` (NUL-terminated).
/// FIDO_ERR_NOTFOUND (-10) when there is none.
int CFIDO2Shims_firstDevice(char *path, size_t cap);

/// Opens the authenticator at `path`. With `socketPath` (tests only: the caller decides),
/// `path` is ignored and the authenticator is reached over that Unix stream socket, one 64-byte
/// CTAPHID report per read and write, through fido_dev_set_io_functions. `timeoutMs` bounds each
/// operation (-1: none).
int CFIDO2Shims_open(const char *path, const char *socketPath, int timeoutMs, CFIDO2Shims_Device **out);
void CFIDO2Shims_close(CFIDO2Shims_Device *dev);

/// Whether the authenticator speaks CTAP2 (1) or U2F only (0), has a PIN set (1), supports
/// one but has none (0), or cannot have one (-1), and lists the hmac-secret extension (1/0).
int CFIDO2Shims_info(CFIDO2Shims_Device *dev, int *ctap2, int *pinState, int *hmacSecret);

/// The PIN tries left before the authenticator blocks its PIN.
int CFIDO2Shims_retries(CFIDO2Shims_Device *dev, int *retries);

/// Makes a non-discoverable ES256 credential with hmac-secret for `rpId`, user id `userId`;
/// `clientDataHash` is 32 bytes; `pin` is NUL-terminated or NULL. The credential id into `credId`.
int CFIDO2Shims_makeCredential(CFIDO2Shims_Device *dev, const char *rpId, const uint8_t *userId, size_t userIdLen,
                               const uint8_t *clientDataHash, const char *pin,
                               uint8_t *credId, size_t cap, size_t *credIdLen);

/// An assertion of credential `credId` for `rpId` with one or two 32-byte salts (`saltLen` 32 or
/// 64; user presence required; `pin` NUL-terminated or NULL): the hmac-secret output, as many
/// bytes as the salts, into `secret`. FIDO_ERR_INVALID_PARAM when the authenticator returned no
/// output, one of another length, or no user presence.
int CFIDO2Shims_hmacSecret(CFIDO2Shims_Device *dev, const char *rpId, const uint8_t *credId, size_t credIdLen,
                           const uint8_t *salt, size_t saltLen, const uint8_t *clientDataHash, const char *pin,
                           uint8_t *secret);

/// libfido2's description of a status (static storage).
const char *CFIDO2Shims_describe(int rc);

/// The statuses Swift names (the FIDO_ERR_* macros of <fido/err.h>, which Swift also imports).
enum {
    CFIDO2Shims_OK = 0,
    CFIDO2Shims_ERR_OPERATION_DENIED = 0x27,
    CFIDO2Shims_ERR_UNSUPPORTED_EXTENSION = 0x2c,
    CFIDO2Shims_ERR_NO_CREDENTIALS = 0x2e,
    CFIDO2Shims_ERR_USER_ACTION_TIMEOUT = 0x2f,
    CFIDO2Shims_ERR_PIN_INVALID = 0x31,
    CFIDO2Shims_ERR_PIN_BLOCKED = 0x32,
    CFIDO2Shims_ERR_PIN_AUTH_INVALID = 0x33,
    CFIDO2Shims_ERR_PIN_AUTH_BLOCKED = 0x34,
    CFIDO2Shims_ERR_PIN_NOT_SET = 0x35,
    CFIDO2Shims_ERR_PIN_REQUIRED = 0x36,
    CFIDO2Shims_ERR_PIN_POLICY_VIOLATION = 0x37,
    CFIDO2Shims_ERR_ACTION_TIMEOUT = 0x3a,
    CFIDO2Shims_ERR_UP_REQUIRED = 0x3b,
    CFIDO2Shims_ERR_TX = -1,
    CFIDO2Shims_ERR_RX = -2,
    CFIDO2Shims_ERR_RX_NOT_CBOR = -3,
    CFIDO2Shims_ERR_RX_INVALID_CBOR = -4,
    CFIDO2Shims_ERR_INVALID_PARAM = -5,
    CFIDO2Shims_ERR_INVALID_ARGUMENT = -7,
    CFIDO2Shims_ERR_USER_PRESENCE_REQUIRED = -8,
    CFIDO2Shims_ERR_INTERNAL = -9,
    CFIDO2Shims_ERR_NOTFOUND = -10,
};

#endif
