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
import importlib.util
import io
import os
import sys
import unicodedata

from tpm2_pytss import ESAPI

# The TPM half (the primary's template, the policy session) is the object unsealer's, which
# follows docs/tpm.md alone.
_spec = importlib.util.spec_from_file_location("unseal", os.path.join(os.path.dirname(__file__), "independent-tpm-unseal.py"))
unseal_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(unseal_mod)


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from independent_keyslots import Failure, hkdf32, open_slot, read_keyslots  # noqa: E402


def first_line(path):
    with open(path, "rb") as f:
        line = f.read().split(b"\n", 1)[0]
    return line[:-1] if line.endswith(b"\r") else line


def nfc(line):
    try:
        return unicodedata.normalize("NFC", line.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return line


def canonical(slot):
    t = slot["tpm2"]
    obj = hashlib.sha256(bytes.fromhex(t["publicArea"]) + bytes.fromhex(t["privateArea"])).hexdigest()
    return f"tpm2:pcrs={','.join(str(i) for i in t['pcrs'])}:pin={1 if t['pin'] else 0}:primary={t['primaryName']}:object={obj}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vault_dir")
    ap.add_argument("--tcti", required=True)
    ap.add_argument("--pin-file")
    args = ap.parse_args()
    lines, doc, vid = read_keyslots(args.vault_dir)
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
    open_slot(lines, doc, slot, secret, canonical(slot))
    print(f"ok: tpm2 slot {slot['id']} opens the master key, and the keyslot MAC verifies")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        print(f"independent-tpm-slot: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
