#!/usr/bin/env python3
"""Independent decryptor for what a `vault-server` stores for one account, written only from
SECURITY.md ("End to end") and docs/server.md ("Data folder").

It shares no code with vault's Swift sources. Given the server's data folder, the account name and
the vault password it:

  1. reads the account's key envelope (table `envelopes`), checks it like a keyslot file, unwraps
     the master key with the password and verifies the MAC line;
  2. walks the key history down to every older epoch;
  3. walks the account's live nodes (table `files`) from `root`: opens every node record (AAD
     binds it to the node id), checks that it names the parent the node is stored under and the
     same type, opens the name token (AES-SIV, AD bound to the parent) and checks it equals the
     record's name;
  4. for each file, opens the head's content record, reads the sealed blob (the first sealedSize
     bytes of content/<head revision id>), checks the header ids, every segment, the plaintext
     size and SHA-256, and writes the plaintext under --out at the decrypted path;
  5. with --revisions, does the same for every stored revision (written as PATH@<revision id>).

Needs: Python >= 3.9, `pip install cryptography argon2-cffi`. Exit status: 0 all good, 1 any
verification failure, 2 usage.
"""

import argparse
import base64
import hashlib
import hmac
import importlib.util
import json
import os
import sqlite3
import sys
import unicodedata

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_spec = importlib.util.spec_from_file_location("vault_indep", os.path.join(os.path.dirname(__file__), "independent-decrypt.py"))
V = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(V)
Failure, log = V.Failure, V.log


def hkdf(master, vault_id, info, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=vault_id, info=info).derive(master)


def b64url(text):
    if any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in text):
        raise Failure(f"not base64url: {text[:20]}…")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def split_epoch(text, what):
    epoch, dot, rest = text.partition(".")
    if not dot or not epoch.isdigit() or int(epoch) < 1:
        raise Failure(f"{what} is not '<epoch>.<base64url>'")
    return int(epoch), b64url(rest)


class Keys:
    """The master key of every epoch, from the envelope's password slot and key history."""

    def __init__(self, envelope_text, password):
        data = envelope_text.encode("ascii")
        body, doc, mac_hex = V.parse_keyslot_file(data)
        self.vid_hex = doc["vaultId"]
        self.vault_id = bytes.fromhex(self.vid_hex)
        self.epoch = int(doc["epoch"])
        if "pendingRotation" in doc:
            raise Failure("the envelope carries a pendingRotation (must not be uploaded)")
        if len(data) > 64 << 10:
            raise Failure("the envelope is longer than 64 KiB")
        master = None
        for slot in doc["slots"]:
            if slot["type"] != "password" or not slot.get("kdf"):
                continue
            kek = V.derive_kek(password, slot["kdf"])
            try:
                master = AESGCM(kek).decrypt(bytes.fromhex(slot["nonce"]), bytes.fromhex(slot["wrappedKey"]),
                                             V.slot_aad(self.vid_hex, slot))
                break
            except InvalidTag:
                continue
        if master is None:
            raise Failure("no password slot of the envelope opens with this password")
        mac = hmac.new(hkdf(master, self.vault_id, b"vault/v1/keyslot-mac", 32), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(mac, mac_hex):
            raise Failure("envelope: the hmac-sha256 line does not verify")
        self.masters = {self.epoch: master}
        e = self.epoch
        history = {h["epoch"]: h for h in doc.get("history", [])}
        while e > 1 and (e - 1) in history:
            h = history[e - 1]
            hk = hkdf(self.masters[e], self.vault_id, b"vault/v1/key-history", 32)
            aad = f"vault-history-v1|{self.vid_hex}|{e - 1}".encode()
            try:
                self.masters[e - 1] = AESGCM(hk).decrypt(bytes.fromhex(h["nonce"]), bytes.fromhex(h["wrappedKey"]), aad)
            except InvalidTag:
                raise Failure(f"envelope: the key history entry of epoch {e - 1} does not authenticate")
            e -= 1
        log(f"envelope: vault {self.vid_hex}, epoch {self.epoch}, generation {doc.get('generation')}, "
            f"epochs readable: {sorted(self.masters)}; MAC verified")

    def master(self, epoch):
        if epoch not in self.masters:
            raise Failure(f"no key for epoch {epoch}")
        return self.masters[epoch]

    def name_key(self, epoch):
        return hkdf(self.master(epoch), self.vault_id, b"vault/v1/remote-name", 64)

    def meta_key(self, epoch):
        return hkdf(self.master(epoch), self.vault_id, b"vault/v1/remote-meta", 32)

    def wrap_key(self, epoch):
        return hkdf(self.master(epoch), self.vault_id, b"vault/v1/blob-wrap", 32)


def open_record(keys, text, kind, node_id):
    epoch, raw = split_epoch(text, f"{kind} record of {node_id}")
    if len(raw) < 12 + 16:
        raise Failure(f"{kind} record of {node_id} is too short")
    aad = f"vault-{kind}-v1|{keys.vid_hex}|{node_id}".encode()
    try:
        record = json.loads(AESGCM(keys.meta_key(epoch)).decrypt(raw[:12], raw[12:], aad))
    except InvalidTag:
        raise Failure(f"the {kind} record of {node_id} does not authenticate for that id")
    if record.get("v") != 1:
        raise Failure(f"the {kind} record of {node_id} has version {record.get('v')!r}, not 1")
    return record


def padme(length):
    """Padmé (SECURITY.md "Size padding"): the low E - S bits of L rounded up to zero."""
    if length < 2:
        return length
    e = length.bit_length() - 1
    s = e.bit_length()          # floor(log2 E) + 1
    mask = (1 << (e - s)) - 1
    return (length + mask) & ~mask


def open_name(keys, token, parent_id):
    epoch, raw = split_epoch(token, "a name token")
    ad = f"vault-name-v1|{keys.vid_hex}|{parent_id}".encode()
    try:
        name = AESSIV(keys.name_key(epoch)).decrypt(raw, [ad]).decode("utf-8")
    except InvalidTag:
        raise Failure(f"a name token does not open in folder {parent_id}")
    return name


def decrypt_content(keys, data_dir, node_id, rev_id, record, stored_size, out_path):
    path = os.path.join(data_dir, "content", rev_id)
    z, p = int(record["sealedSize"]), int(record["size"])
    if z != 112 + p + 16 * max(1, -(-p // 65536)):
        raise Failure(f"{node_id}: the record's sealed size {z} does not fit its plaintext size {p}")
    if stored_size not in (z, padme(z)):
        raise Failure(f"{node_id}: the server lists {stored_size} bytes; the sealed blob has {z} ({padme(z)} padded)")
    if os.path.getsize(path) != stored_size:
        raise Failure(f"{node_id}: the server lists {stored_size} bytes but stores {os.path.getsize(path)}")
    size, digest, epoch, segs = V.decrypt_blob(path, record["blob"], keys.vault_id, keys.wrap_key, out_path,
                                               int(record["size"]), record["sha256"], length=z)
    return size, segs, epoch


def main():
    ap = argparse.ArgumentParser(description="Decrypt one account of a vault-server data folder, independently of vault.")
    ap.add_argument("data_dir")
    ap.add_argument("--user", required=True)
    ap.add_argument("--password-file", required=True)
    ap.add_argument("--out", help="folder to write the decrypted tree into (created; must be empty)")
    ap.add_argument("--revisions", action="store_true", help="also decrypt every stored revision")
    a = ap.parse_args()
    raw = open(a.password_file, "rb").read().split(b"\n", 1)[0]
    password = unicodedata.normalize("NFC", raw.rstrip(b"\r").decode("utf-8")).encode("utf-8")
    if a.out and os.path.exists(a.out) and os.listdir(a.out):
        print(f"independent-decrypt-server: {a.out} is not empty", file=sys.stderr)
        return 2
    try:
        db = sqlite3.connect(f"file:{os.path.join(a.data_dir, 'meta.db')}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        user = db.execute("SELECT id FROM users WHERE name = ?", (a.user,)).fetchone()
        if user is None:
            raise Failure(f"no user {a.user!r}")
        owner = user["id"]
        env = db.execute("SELECT body FROM envelopes WHERE owner = ?", (owner,)).fetchone()
        if env is None:
            raise Failure("the account has no key envelope")
        keys = Keys(env["body"], password)
        rows = db.execute("SELECT * FROM files WHERE owner = ? AND trashed = 0", (owner,)).fetchall()
        children = {}
        for r in rows:
            children.setdefault(r["parent_id"], []).append(r)
        files = folders = 0
        if a.out:
            os.makedirs(a.out, mode=0o700, exist_ok=True)

        def walk(parent_id, path):
            nonlocal files, folders
            seen = set()
            for r in children.get(parent_id, []):
                rec = open_record(keys, r["meta"], "meta", r["id"])
                if rec.get("parent") != parent_id:
                    raise Failure(f"{r['id']}: stored under {parent_id}, its record says {rec.get('parent')}")
                if rec.get("type") != r["type"]:
                    raise Failure(f"{r['id']}: stored as {r['type']}, its record says {rec.get('type')}")
                name = open_name(keys, r["name"], parent_id)
                if name.encode("utf-8") != rec["name"].encode("utf-8"):
                    raise Failure(f"{r['id']}: the name token and the record disagree")
                if name in seen:
                    raise Failure(f"{path}/{name}: two nodes with one name")
                seen.add(name)
                p = f"{path}/{name}"
                if r["type"] == "folder":
                    folders += 1
                    log(f"  {p}/")
                    if a.out:
                        os.makedirs(a.out + p, mode=0o700, exist_ok=True)
                    walk(r["id"], p)
                    continue
                files += 1
                crec = open_record(keys, r["content_meta"], "content", r["id"])
                size, segs, epoch = decrypt_content(keys, a.data_dir, r["id"], r["head_revision_id"], crec, r["size"],
                                                    (a.out + p) if a.out else None)
                log(f"  {p}  ({size} bytes, {segs} segment(s), key epoch {epoch}) ok")
                if a.revisions:
                    for rev in db.execute("SELECT * FROM revisions WHERE owner = ? AND file_id = ?", (owner, r["id"])):
                        rrec = open_record(keys, rev["content_meta"], "content", r["id"])
                        decrypt_content(keys, a.data_dir, r["id"], rev["id"], rrec, rev["size"],
                                        (a.out + p + "@" + rev["id"]) if a.out else None)
                        log(f"    revision {rev['id']}: {rrec['size']} bytes ok")

        walk("root", "")
        log(f"{folders} folder(s), {files} file(s) decrypted and verified")
        return 0
    except Failure as e:
        print(f"independent-decrypt-server: FAILED: {e}", file=sys.stderr)
        return 1
    except (ValueError, KeyError, TypeError, OSError, sqlite3.Error) as e:
        print(f"independent-decrypt-server: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
