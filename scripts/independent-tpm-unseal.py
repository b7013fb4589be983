#!/usr/bin/python3
"""Unseals a vault TPM object from docs/tpm.md alone (tpm2-pytss, no vault code).

Reads one JSON object on standard input:
  {"tcti": "swtpm:path=S", "public": HEX, "private": HEX, "pcrs": [16], "auth": HEX}
(`public` and `private`: the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE; `auth`: the PIN's auth
value, "" without a PIN) and prints the unsealed secret in hex. Also prints, with --primary-name,
the name of the primary the template gives (hex), and nothing is unsealed.
Exit 0 on success; 1 with the TPM's error on standard error otherwise.
"""
import json
import sys

from tpm2_pytss import ESAPI
from tpm2_pytss.constants import ESYS_TR, TPM2_ALG, TPM2_ECC, TPM2_SE, TPMA_SESSION
from tpm2_pytss.types import (TPM2B_DIGEST, TPM2B_PRIVATE, TPM2B_PUBLIC, TPM2B_SENSITIVE_CREATE,
                              TPML_PCR_SELECTION, TPMS_ECC_PARMS, TPMT_ECC_SCHEME, TPMT_KDF_SCHEME,
                              TPMT_PUBLIC, TPMT_SYM_DEF, TPMT_SYM_DEF_OBJECT, TPMU_PUBLIC_PARMS,
                              TPMU_SYM_KEY_BITS, TPMU_SYM_MODE)

# docs/tpm.md "The primary key": fixedTPM | fixedParent | sensitiveDataOrigin | userWithAuth |
# noDA | restricted | decrypt.
PRIMARY_ATTRIBUTES = 0x00030472


def primary_template():
    aes128cfb = TPMT_SYM_DEF_OBJECT(algorithm=TPM2_ALG.AES, keyBits=TPMU_SYM_KEY_BITS(aes=128),
                                    mode=TPMU_SYM_MODE(aes=TPM2_ALG.CFB))
    ecc = TPMS_ECC_PARMS(symmetric=aes128cfb, scheme=TPMT_ECC_SCHEME(scheme=TPM2_ALG.NULL),
                         curveID=TPM2_ECC.NIST_P256, kdf=TPMT_KDF_SCHEME(scheme=TPM2_ALG.NULL))
    return TPM2B_PUBLIC(publicArea=TPMT_PUBLIC(type=TPM2_ALG.ECC, nameAlg=TPM2_ALG.SHA256,
                                               objectAttributes=PRIMARY_ATTRIBUTES,
                                               parameters=TPMU_PUBLIC_PARMS(eccDetail=ecc)))


def main():
    req = json.load(sys.stdin)
    esys = ESAPI(req["tcti"])
    loaded = []
    try:
        unseal(esys, req, loaded)
    finally:
        # Without a resource manager (swtpm's socket) the TPM keeps what is not flushed.
        for handle in reversed(loaded):
            esys.flush_context(handle)
        esys.close()


def unseal(esys, req, loaded):
    primary, _, _, _, _ = esys.create_primary(TPM2B_SENSITIVE_CREATE(), primary_template(), ESYS_TR.OWNER)
    loaded.append(primary)
    if "--primary-name" in sys.argv:
        print(bytes(esys.tr_get_name(primary)).hex())
        return
    pub, _ = TPM2B_PUBLIC.unmarshal(bytes.fromhex(req["public"]))
    priv, _ = TPM2B_PRIVATE.unmarshal(bytes.fromhex(req["private"]))
    obj = esys.load(primary, priv, pub)
    loaded.append(obj)
    # docs/tpm.md "Sessions": a policy session salted with the primary, AES-128-CFB both ways.
    sym = TPMT_SYM_DEF(algorithm=TPM2_ALG.AES, keyBits=TPMU_SYM_KEY_BITS(aes=128), mode=TPMU_SYM_MODE(aes=TPM2_ALG.CFB))
    session = esys.start_auth_session(primary, ESYS_TR.NONE, TPM2_SE.POLICY, sym, TPM2_ALG.SHA256)
    loaded.append(session)
    esys.trsess_set_attributes(session, TPMA_SESSION.DECRYPT | TPMA_SESSION.ENCRYPT | TPMA_SESSION.CONTINUESESSION)
    # docs/tpm.md "The sealed object": PolicyPCR over the listed PCRs (when any), then PolicyAuthValue.
    if req.get("pcrs"):
        esys.policy_pcr(session, TPM2B_DIGEST(), TPML_PCR_SELECTION.parse("sha256:" + ",".join(str(i) for i in req["pcrs"])))
    esys.policy_auth_value(session)
    esys.tr_set_auth(obj, bytes.fromhex(req.get("auth", "")))
    secret = esys.unseal(obj, session1=session)
    print(bytes(secret).hex())


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the TPM's refusal, said in one line
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
