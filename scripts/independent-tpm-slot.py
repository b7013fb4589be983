#!/usr/bin/python3
"""Opens a vault's tpm2 keyslot from SECURITY.md "Keyslot file" and docs/tpm.md alone (tpm2-pytss
and python3-cryptography, no vault code), and checks the keyslot file's MAC with the master key.

    independent-tpm-slot.py VAULT_DIR --tcti TCTI [--pin-file F]

Picks the tpm2 slot whose primaryName is this TPM's, unseals its secret (the PIN's auth value
HKDF(NFC(PIN), vaultId, "vault/v1/tpm2-pin") when the slot has a PIN), derives the KEK
HKDF(secret, vaultId, "vault/v1/tpm2-kek"), opens the wrapped master key under the slot AAD and
requires line 3 = hmac-sha256 under the keyslot MAC key. Prints one line naming the slot (never a
key). Exit 0 on success; 1 with the reason on standard error.
"""
import argparse
import hashlib
import hmac
import importlib.util
import io
import json
import os
import sys
import unicodedata

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from tpm2_pytss import ESAPI

# The TPM half (the primary's template, the policy session) is the object unsealer's, which
# follows docs/tpm.md alone.
_spec = importlib.util.spec_from_file_location("unseal", os.path.join(os.path.dirname(__file__), "independent-tpm-unseal.py"))
unseal_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(unseal_mod)


class Failure(Exception):
    pass


def hkdf32(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info.encode()).derive(ikm)


def first_line(path):
    with open(path, "rb") as f:
        line = f.read().split(b"\n", 1)[0]
    return line[:-1] if line.endswith(b"\r") else line


def nfc(line):
    try:
        return unicodedata.normalize("NFC", line.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return line


def slot_aad(vault_id_hex, slot):
    t = slot["tpm2"]
    obj = hashlib.sha256(bytes.fromhex(t["publicArea"]) + bytes.fromhex(t["privateArea"])).hexdigest()
    canon = f"tpm2:pcrs={','.join(str(i) for i in t['pcrs'])}:pin={1 if t['pin'] else 0}:primary={t['primaryName']}:object={obj}"
    return f"vault-keyslot-v1|{vault_id_hex}|{slot['id']}|{slot['type']}|{canon}".encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vault_dir")
    ap.add_argument("--tcti", required=True)
    ap.add_argument("--pin-file")
    args = ap.parse_args()
    data = open(os.path.join(args.vault_dir, "keyslots"), "rb").read()
    lines = data[:-1].split(b"\n") if data.endswith(b"\n") else []
    if len(lines) != 3 or lines[1] != b"sha256:" + hashlib.sha256(lines[0]).hexdigest().encode():
        raise Failure("the keyslot file is damaged")
    doc = json.loads(lines[0])
    vid = bytes.fromhex(doc["vaultId"])
    esys = ESAPI(args.tcti)
    try:
        primary, _, _, _, _ = esys.create_primary(unseal_mod.TPM2B_SENSITIVE_CREATE(), unseal_mod.primary_template(), unseal_mod.ESYS_TR.OWNER)
        name = bytes(esys.tr_get_name(primary)).hex()
        esys.flush_context(primary)
    finally:
        esys.close()
    slots = [s for s in doc["slots"] if s["type"] == "tpm2" and s.get("tpm2", {}).get("primaryName") == name and "kdf" not in s]
    if not slots:
        raise Failure("no tpm2 slot of this TPM")
    slot = slots[0]
    t = slot["tpm2"]
    auth = b""
    if t["pin"]:
        if not args.pin_file:
            raise Failure("the slot has a PIN: pass --pin-file")
        auth = hkdf32(nfc(first_line(args.pin_file)), vid, "vault/v1/tpm2-pin")
    req = {"tcti": args.tcti, "public": t["publicArea"], "private": t["privateArea"], "pcrs": t["pcrs"], "auth": auth.hex()}
    esys = ESAPI(args.tcti)
    loaded = []
    secret = None
    try:
        out, saved = io.StringIO(), sys.stdout
        sys.stdout = out
        try:
            unseal_mod.unseal(esys, req, loaded)
        finally:
            sys.stdout = saved
        secret = bytes.fromhex(out.getvalue().strip())
    finally:
        for handle in reversed(loaded):
            esys.flush_context(handle)
        esys.close()
    kek = hkdf32(secret, vid, "vault/v1/tpm2-kek")
    master = AESGCM(kek).decrypt(bytes.fromhex(slot["nonce"]), bytes.fromhex(slot["wrappedKey"]), slot_aad(doc["vaultId"], slot))
    mac_key = hkdf32(master, vid, "vault/v1/keyslot-mac")
    expected = b"hmac-sha256:" + hmac.new(mac_key, lines[0], hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(expected, lines[2]):
        raise Failure("the keyslot file's MAC does not verify under the master key the slot opens")
    print(f"ok: tpm2 slot {slot['id']} opens the master key, and the keyslot MAC verifies")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        print(f"independent-tpm-slot: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
