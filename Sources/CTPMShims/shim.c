#include "CTPMShims.h"
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_sys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

struct CTPMShims_Context {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
};

/// Zeroes `n` bytes at `p` in a way the compiler keeps.
static void wipe(void *p, size_t n) {
    volatile uint8_t *b = p;
    while (n--) *b++ = 0;
}

uint32_t CTPMShims_open(const char *conf, CTPMShims_Context **out) {
    *out = NULL;
    CTPMShims_Context *c = calloc(1, sizeof *c);
    if (!c) return TSS2_ESYS_RC_MEMORY;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(conf, &c->tcti);
    if (rc != TSS2_RC_SUCCESS) { free(c); return rc; }
    rc = Esys_Initialize(&c->esys, c->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) { Tss2_TctiLdr_Finalize(&c->tcti); free(c); return rc; }
    *out = c;
    return TSS2_RC_SUCCESS;
}

void CTPMShims_close(CTPMShims_Context *c) {
    if (!c) return;
    if (c->esys) Esys_Finalize(&c->esys);
    if (c->tcti) Tss2_TctiLdr_Finalize(&c->tcti);
    free(c);
}

/// The primary's template: ECC NIST P-256, restricted decryption (a storage key), AES-128-CFB
/// for its children, noDA, empty auth, empty unique (so the TPM derives the same key from the
/// owner seed every time).
static TPM2B_PUBLIC primaryTemplate(void) {
    TPM2B_PUBLIC t;
    memset(&t, 0, sizeof t);
    t.publicArea.type = TPM2_ALG_ECC;
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
    t.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    t.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    t.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    t.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    t.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    t.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    return t;
}

static uint32_t createPrimary(CTPMShims_Context *c, ESYS_TR *primary) {
    TPM2B_SENSITIVE_CREATE sens;
    memset(&sens, 0, sizeof sens);
    TPM2B_PUBLIC tmpl = primaryTemplate();
    TPM2B_DATA outside = {.size = 0};
    TPML_PCR_SELECTION none = {.count = 0};
    TPM2B_PUBLIC *pub = NULL;
    TPM2B_CREATION_DATA *cd = NULL;
    TPM2B_DIGEST *ch = NULL;
    TPMT_TK_CREATION *tk = NULL;
    TSS2_RC rc = Esys_CreatePrimary(c->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                    &sens, &tmpl, &outside, &none, primary, &pub, &cd, &ch, &tk);
    Esys_Free(pub); Esys_Free(cd); Esys_Free(ch); Esys_Free(tk);
    return rc;
}

static TPML_PCR_SELECTION pcrSelection(uint32_t mask) {
    TPML_PCR_SELECTION s;
    memset(&s, 0, sizeof s);
    s.count = 1;
    s.pcrSelections[0].hash = TPM2_ALG_SHA256;
    s.pcrSelections[0].sizeofSelect = 3;
    s.pcrSelections[0].pcrSelect[0] = mask & 0xff;
    s.pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
    s.pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
    return s;
}

/// Starts a session of `type`; salted with `salt` (the primary) and with AES-128-CFB parameter
/// encryption when `salt` is not ESYS_TR_NONE.
static uint32_t startSession(CTPMShims_Context *c, TPM2_SE type, ESYS_TR salt, ESYS_TR *session) {
    TPMT_SYM_DEF sym;
    memset(&sym, 0, sizeof sym);
    if (salt == ESYS_TR_NONE) {
        sym.algorithm = TPM2_ALG_NULL;
    } else {
        sym.algorithm = TPM2_ALG_AES;
        sym.keyBits.aes = 128;
        sym.mode.aes = TPM2_ALG_CFB;
    }
    TSS2_RC rc = Esys_StartAuthSession(c->esys, salt, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       NULL, type, &sym, TPM2_ALG_SHA256, session);
    if (rc != TSS2_RC_SUCCESS || salt == ESYS_TR_NONE) return rc;
    TPMA_SESSION attrs = TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION;
    rc = Esys_TRSess_SetAttributes(c->esys, *session, attrs, 0xff);
    if (rc != TSS2_RC_SUCCESS) { Esys_FlushContext(c->esys, *session); *session = ESYS_TR_NONE; }
    return rc;
}

/// Runs the sealed object's policy on `session`: PolicyPCR (when `pcrMask`), then PolicyAuthValue.
static uint32_t applyPolicy(CTPMShims_Context *c, ESYS_TR session, uint32_t pcrMask) {
    TSS2_RC rc;
    if (pcrMask) {
        TPML_PCR_SELECTION sel = pcrSelection(pcrMask);
        TPM2B_DIGEST empty = {.size = 0};
        rc = Esys_PolicyPCR(c->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &empty, &sel);
        if (rc != TSS2_RC_SUCCESS) return rc;
    }
    return Esys_PolicyAuthValue(c->esys, session, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE);
}

static void flush(CTPMShims_Context *c, ESYS_TR *h) {
    if (*h != ESYS_TR_NONE) { Esys_FlushContext(c->esys, *h); *h = ESYS_TR_NONE; }
}

uint32_t CTPMShims_primaryName(CTPMShims_Context *c, uint8_t *name, size_t cap, size_t *len) {
    ESYS_TR primary = ESYS_TR_NONE;
    TSS2_RC rc = createPrimary(c, &primary);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_NAME *n = NULL;
    rc = Esys_TR_GetName(c->esys, primary, &n);
    if (rc == TSS2_RC_SUCCESS) {
        if (n->size > cap) rc = CTPMShims_RC_ARGUMENT;
        else { memcpy(name, n->name, n->size); *len = n->size; }
    }
    Esys_Free(n);
    flush(c, &primary);
    return rc;
}

uint32_t CTPMShims_seal(CTPMShims_Context *c, const uint8_t *secret, size_t secretLen,
                        const uint8_t *auth, size_t authLen, uint32_t pcrMask,
                        uint8_t *pubOut, size_t pubCap, size_t *pubLen,
                        uint8_t *privOut, size_t privCap, size_t *privLen) {
    if (secretLen == 0 || secretLen > CTPMShims_MaxSecret || authLen > CTPMShims_MaxAuth || pcrMask > 0xffffff)
        return CTPMShims_RC_ARGUMENT;
    ESYS_TR primary = ESYS_TR_NONE, trial = ESYS_TR_NONE, session = ESYS_TR_NONE;
    TPM2B_DIGEST *policy = NULL;
    TPM2B_PRIVATE *priv = NULL;
    TPM2B_PUBLIC *pub = NULL;
    TPM2B_CREATION_DATA *cd = NULL;
    TPM2B_DIGEST *ch = NULL;
    TPMT_TK_CREATION *tk = NULL;
    TPM2B_SENSITIVE_CREATE sens;
    memset(&sens, 0, sizeof sens);

    TSS2_RC rc = createPrimary(c, &primary);
    if (rc != TSS2_RC_SUCCESS) goto out;
    // The policy digest, computed by the TPM in a trial session (PolicyPCR takes the PCRs' values now).
    rc = startSession(c, TPM2_SE_TRIAL, ESYS_TR_NONE, &trial);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = applyPolicy(c, trial, pcrMask);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = Esys_PolicyGetDigest(c->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &policy);
    if (rc != TSS2_RC_SUCCESS) goto out;
    flush(c, &trial);

    TPM2B_PUBLIC tmpl;
    memset(&tmpl, 0, sizeof tmpl);
    tmpl.publicArea.type = TPM2_ALG_KEYEDHASH;
    tmpl.publicArea.nameAlg = TPM2_ALG_SHA256;
    tmpl.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | (authLen == 0 ? TPMA_OBJECT_NODA : 0);
    tmpl.publicArea.authPolicy = *policy;
    tmpl.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    sens.sensitive.userAuth.size = (UINT16)authLen;
    if (authLen) memcpy(sens.sensitive.userAuth.buffer, auth, authLen);
    sens.sensitive.data.size = (UINT16)secretLen;
    memcpy(sens.sensitive.data.buffer, secret, secretLen);
    TPM2B_DATA outside = {.size = 0};
    TPML_PCR_SELECTION none = {.count = 0};
    // The secret and the auth value travel encrypted: a session salted with the primary.
    rc = startSession(c, TPM2_SE_HMAC, primary, &session);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = Esys_Create(c->esys, primary, session, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl, &outside, &none,
                     &priv, &pub, &cd, &ch, &tk);
    if (rc != TSS2_RC_SUCCESS) goto out;
    size_t off = 0;
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, pubOut, pubCap, &off);
    if (rc != TSS2_RC_SUCCESS) goto out;
    *pubLen = off;
    off = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Marshal(priv, privOut, privCap, &off);
    if (rc != TSS2_RC_SUCCESS) goto out;
    *privLen = off;
out:
    wipe(&sens, sizeof sens);
    Esys_Free(policy); Esys_Free(priv); Esys_Free(pub); Esys_Free(cd); Esys_Free(ch); Esys_Free(tk);
    flush(c, &session); flush(c, &trial); flush(c, &primary);
    return rc;
}

uint32_t CTPMShims_unseal(CTPMShims_Context *c, const uint8_t *pubIn, size_t pubLen,
                          const uint8_t *privIn, size_t privLen, const uint8_t *auth, size_t authLen,
                          uint32_t pcrMask, uint8_t *secret, size_t cap, size_t *secretLen) {
    if (authLen > CTPMShims_MaxAuth || pcrMask > 0xffffff) return CTPMShims_RC_ARGUMENT;
    TPM2B_PUBLIC pub;
    TPM2B_PRIVATE priv;
    memset(&pub, 0, sizeof pub);
    memset(&priv, 0, sizeof priv);
    size_t off = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(pubIn, pubLen, &off, &pub);
    if (rc != TSS2_RC_SUCCESS || off != pubLen) return rc != TSS2_RC_SUCCESS ? rc : CTPMShims_RC_ARGUMENT;
    off = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(privIn, privLen, &off, &priv);
    if (rc != TSS2_RC_SUCCESS || off != privLen) return rc != TSS2_RC_SUCCESS ? rc : CTPMShims_RC_ARGUMENT;

    ESYS_TR primary = ESYS_TR_NONE, object = ESYS_TR_NONE, session = ESYS_TR_NONE;
    TPM2B_SENSITIVE_DATA *data = NULL;
    TPM2B_AUTH a;
    memset(&a, 0, sizeof a);
    rc = createPrimary(c, &primary);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = Esys_Load(c->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, &object);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = startSession(c, TPM2_SE_POLICY, primary, &session);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = applyPolicy(c, session, pcrMask);
    if (rc != TSS2_RC_SUCCESS) goto out;
    a.size = (UINT16)authLen;
    if (authLen) memcpy(a.buffer, auth, authLen);
    rc = Esys_TR_SetAuth(c->esys, object, &a);
    if (rc != TSS2_RC_SUCCESS) goto out;
    rc = Esys_Unseal(c->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    if (rc != TSS2_RC_SUCCESS) goto out;
    if (data->size > cap) { rc = CTPMShims_RC_ARGUMENT; goto out; }
    memcpy(secret, data->buffer, data->size);
    *secretLen = data->size;
out:
    wipe(&a, sizeof a);
    if (data) { wipe(data, sizeof *data); Esys_Free(data); }
    if (object != ESYS_TR_NONE) { TPM2B_AUTH empty = {.size = 0}; Esys_TR_SetAuth(c->esys, object, &empty); }
    flush(c, &session); flush(c, &object); flush(c, &primary);
    return rc;
}

uint32_t CTPMShims_lockout(CTPMShims_Context *c, uint32_t *counter, uint32_t *maxTries,
                           uint32_t *interval, uint32_t *recovery) {
    TPMI_YES_NO more = 0;
    TPMS_CAPABILITY_DATA *cap = NULL;
    TSS2_RC rc = Esys_GetCapability(c->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                    TPM2_PT_LOCKOUT_COUNTER, 4, &more, &cap);
    if (rc != TSS2_RC_SUCCESS) return rc;
    *counter = *maxTries = *interval = *recovery = 0;
    for (UINT32 i = 0; i < cap->data.tpmProperties.count; i++) {
        TPMS_TAGGED_PROPERTY p = cap->data.tpmProperties.tpmProperty[i];
        switch (p.property) {
        case TPM2_PT_LOCKOUT_COUNTER: *counter = p.value; break;
        case TPM2_PT_MAX_AUTH_FAIL: *maxTries = p.value; break;
        case TPM2_PT_LOCKOUT_INTERVAL: *interval = p.value; break;
        case TPM2_PT_LOCKOUT_RECOVERY: *recovery = p.value; break;
        default: break;
        }
    }
    Esys_Free(cap);
    return TSS2_RC_SUCCESS;
}

uint32_t CTPMShims_extendPCR(CTPMShims_Context *c, uint32_t index, const uint8_t *digest) {
    if (index > 23) return CTPMShims_RC_ARGUMENT;
    TPML_DIGEST_VALUES v;
    memset(&v, 0, sizeof v);
    v.count = 1;
    v.digests[0].hashAlg = TPM2_ALG_SHA256;
    memcpy(v.digests[0].digest.sha256, digest, 32);
    return Esys_PCR_Extend(c->esys, ESYS_TR_PCR0 + index, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &v);
}

uint32_t CTPMShims_flushStale(CTPMShims_Context *c) {
    TSS2_SYS_CONTEXT *sys = NULL;
    TSS2_RC rc = Esys_GetSysContext(c->esys, &sys);
    if (rc != TSS2_RC_SUCCESS) return rc;
    /* Transient objects (0x80…), then loaded HMAC (0x02…) and policy (0x03…) sessions. */
    static const TPM2_HANDLE firsts[] = {TPM2_TRANSIENT_FIRST, TPM2_LOADED_SESSION_FIRST, TPM2_POLICY_SESSION_FIRST};
    for (size_t k = 0; k < sizeof firsts / sizeof firsts[0]; k++) {
        TPMI_YES_NO more = 0;
        TPMS_CAPABILITY_DATA *cap = NULL;
        rc = Esys_GetCapability(c->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                                firsts[k], TPM2_MAX_CAP_HANDLES, &more, &cap);
        if (rc != TSS2_RC_SUCCESS) return rc;
        for (UINT32 i = 0; i < cap->data.handles.count; i++) {
            TPM2_HANDLE h = cap->data.handles.handle[i];
            if ((h >> 24) == (firsts[k] >> 24)) (void)Tss2_Sys_FlushContext(sys, h);
        }
        Esys_Free(cap);
    }
    return TSS2_RC_SUCCESS;
}

uint32_t CTPMShims_baseCode(uint32_t rc) {
    uint32_t layer = rc & TSS2_RC_LAYER_MASK;
    uint32_t code = rc & 0xffff;
    if (layer != TSS2_TPM_RC_LAYER && layer != TSS2_RESMGR_TPM_RC_LAYER) return rc;
    if (code & TPM2_RC_FMT1) return code & 0x0bf;
    return code & 0x97f;
}

const char *CTPMShims_describe(uint32_t rc) { return Tss2_RC_Decode(rc); }
