#ifndef CTPMSHIMS_H
#define CTPMSHIMS_H
#include <stddef.h>
#include <stdint.h>

/// The TPM 2.0 operations vault needs, on tpm2-tss's ESAPI, behind a narrow typed surface: the
/// TPM's structures (templates with unions, marshalled blobs) and its macros with casts, which
/// Swift cannot import, stay in C. Every function returns a TSS2_RC (0 = success); Swift
/// classifies it with CTPMShims_baseCode.
///
/// The objects (SECURITY.md "TPM2 keyslot"):
/// - the primary: an ECC NIST P-256 storage key under the owner hierarchy, created afresh from
///   the TCG SRK-style template on every call (never stored, never made persistent);
/// - the sealed object: a KEYEDHASH data object with fixedTPM | fixedParent, no userWithAuth
///   (only its policy authorizes it), noDA when it has no PIN; its policy is
///   [PolicyPCR(sha256 bank, mask, values at sealing time)] then PolicyAuthValue;
/// - every command carrying a secret runs in a session salted with the primary and AES-128-CFB
///   parameter encryption, so neither the secret nor the PIN crosses the bus in plaintext.

typedef struct CTPMShims_Context CTPMShims_Context;

enum {
    /// Upper bounds of the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE, and of a name.
    CTPMShims_MaxPublic = 1024,
    CTPMShims_MaxPrivate = 1024,
    CTPMShims_MaxName = 68,
    /// The most bytes an auth value (the PIN's derived form) or a sealed secret may have.
    CTPMShims_MaxAuth = 32,
    CTPMShims_MaxSecret = 128,
};

/// Opens the TPM through the TCTI `conf` (tpm2-tss syntax, e.g. "device:/dev/tpmrm0",
/// "swtpm:path=/run/x/s"); NULL means the loader's default.
uint32_t CTPMShims_open(const char *conf, CTPMShims_Context **out);
void CTPMShims_close(CTPMShims_Context *ctx);

/// The name (nameAlg || digest of the public area) of this TPM's primary: the same for as long
/// as the owner hierarchy's seed is (a TPM2_Clear changes it; another TPM has another).
uint32_t CTPMShims_primaryName(CTPMShims_Context *ctx, uint8_t *name, size_t cap, size_t *len);

/// Seals `secret` under the primary, with the auth value `auth` (may be empty) and, when
/// `pcrMask` is not 0, bound to the current values of those PCRs of the sha256 bank.
uint32_t CTPMShims_seal(CTPMShims_Context *ctx, const uint8_t *secret, size_t secretLen,
                        const uint8_t *auth, size_t authLen, uint32_t pcrMask,
                        uint8_t *pub, size_t pubCap, size_t *pubLen,
                        uint8_t *priv, size_t privCap, size_t *privLen);

/// Loads a sealed object under the primary and unseals it with `auth` (the same `pcrMask` as
/// when sealed). The secret is written to `secret` (zeroed by the caller after use).
uint32_t CTPMShims_unseal(CTPMShims_Context *ctx, const uint8_t *pub, size_t pubLen,
                          const uint8_t *priv, size_t privLen, const uint8_t *auth, size_t authLen,
                          uint32_t pcrMask, uint8_t *secret, size_t cap, size_t *secretLen);

/// The dictionary-attack state: failures counted now, the most before lockout, the seconds
/// after which one failure is forgotten, and the seconds a lockout lasts.
uint32_t CTPMShims_lockout(CTPMShims_Context *ctx, uint32_t *counter, uint32_t *maxTries,
                           uint32_t *interval, uint32_t *recovery);

/// Extends PCR `index` of the sha256 bank with `digest` (32 bytes): for tests of PCR binding.
uint32_t CTPMShims_extendPCR(CTPMShims_Context *ctx, uint32_t index, const uint8_t *digest);

/// Flushes every transient object and loaded session the TPM lists. Through the kernel's
/// resource manager (`/dev/tpmrm0`) the list holds this connection's only; without one (swtpm's
/// socket, `/dev/tpm0`) it holds what a client cut off mid-call left loaded, which fills the TPM
/// until it refuses every load (`CTPMShims_RC_OBJECT_MEMORY`, `CTPMShims_RC_SESSION_MEMORY`).
uint32_t CTPMShims_flushStale(CTPMShims_Context *ctx);

/// The code of a TPM response with its parameter, handle and session numbers removed (format-1
/// codes keep 0x080 and their six bits; format-0 codes their version and warning bits), and the
/// layer of tpm2-tss that produced `rc` (0 for the TPM itself) in the upper bits.
uint32_t CTPMShims_baseCode(uint32_t rc);
/// tpm2-tss's description of `rc` (a static string).
const char *CTPMShims_describe(uint32_t rc);

/// The values Swift matches against (CTPMShims_baseCode's results).
enum {
    CTPMShims_RC_AUTH_FAIL = 0x08E,
    CTPMShims_RC_BAD_AUTH = 0x0A2,
    CTPMShims_RC_POLICY_FAIL = 0x09D,
    CTPMShims_RC_INTEGRITY = 0x09F,
    CTPMShims_RC_VALUE = 0x084,
    CTPMShims_RC_SIZE = 0x095,
    CTPMShims_RC_PCR_CHANGED = 0x128,
    CTPMShims_RC_LOCKOUT = 0x921,
    CTPMShims_RC_RETRY = 0x922,
    CTPMShims_RC_NV_UNAVAILABLE = 0x923,
    CTPMShims_RC_OBJECT_MEMORY = 0x902,
    CTPMShims_RC_SESSION_MEMORY = 0x903,
    /// A bad or oversized argument from the caller (no TPM involved).
    CTPMShims_RC_ARGUMENT = 0x7FFF0001,
    /// The layer bits of a response from the TCTI (the transport: device or socket) and of
    /// ESAPI itself (marshalling, memory, its own checks).
    CTPMShims_LayerTCTI = 0x000A0000,
    CTPMShims_LayerESAPI = 0x00070000,
};
#endif
