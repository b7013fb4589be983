"""What the independent slot openers (scripts/independent-tpm-slot.py, independent-fido2-slot.py)
share, from SECURITY.md "Keyslot file" alone: reading the three lines, the slot AAD, HKDF, and
the MAC line checked with the master key a slot opened."""
import hashlib
import hmac
import json
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


class Failure(Exception):
    pass


def hkdf32(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=info.encode()).derive(ikm)


def read_keyslots(vault_dir):
    """The file's three lines (checksum checked), its body and the vault id's bytes."""
    data = open(os.path.join(vault_dir, "keyslots"), "rb").read()
    lines = data[:-1].split(b"\n") if data.endswith(b"\n") else []
    if len(lines) != 3 or lines[1] != b"sha256:" + hashlib.sha256(lines[0]).hexdigest().encode():
        raise Failure("the keyslot file is damaged")
    doc = json.loads(lines[0])
    return lines, doc, bytes.fromhex(doc["vaultId"])


def open_slot(lines, doc, slot, secret, canonical):
    """The master key from `slot` with the hardware's `secret` (KEK = HKDF(secret, vaultId,
    "vault/v1/<type>-kek")), the wrap's AAD ending in `canonical`; then line 3 must be the MAC
    under the keyslot MAC key."""
    vid = bytes.fromhex(doc["vaultId"])
    kek = hkdf32(secret, vid, f"vault/v1/{slot['type']}-kek")
    aad = f"vault-keyslot-v1|{doc['vaultId']}|{slot['id']}|{slot['type']}|{canonical}".encode()
    master = AESGCM(kek).decrypt(bytes.fromhex(slot["nonce"]), bytes.fromhex(slot["wrappedKey"]), aad)
    mac_key = hkdf32(master, vid, "vault/v1/keyslot-mac")
    expected = b"hmac-sha256:" + hmac.new(mac_key, lines[0], hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(expected, lines[2]):
        raise Failure("the keyslot file's MAC does not verify under the master key the slot opens")
    return master
