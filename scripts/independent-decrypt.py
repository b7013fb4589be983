#!/usr/bin/env python3
"""Independent decryptor for a `vault` folder, written only from SECURITY.md.

It shares no code with vault (no Swift, no `vault` binary). Given the vault folder and the
password it:

  1. parses the keyslot file and checks its SHA-256 line,
  2. checks each slot's KDF parameters against the bounds before any work, derives each password
     slot's KEK from the password's Unicode NFC form (Argon2id via argon2-cffi, or
     PBKDF2-HMAC-SHA512) -- or, with a recovery key, decodes it (base32, checksum, padding bits
     ignored) and derives the recovery KEK with HKDF -- and unwraps the master key (AES-256-GCM,
     AAD "vault-keyslot-v1|…", a recovery slot's ending in "|"),
  3. derives the subkeys with HKDF-SHA256 (salt = vault id, info "vault/v1/…") and verifies the
     keyslot file's HMAC line; with a rotation pending, also unwraps the new master key,
  4. opens metadata.db with the `sqlcipher` command-line tool and the raw key x'<database key>'
     (and, with --check-db-pages, also decrypts every SQLCipher page itself and compares),
  5. reads the nodes (schema 7 and 8: TEXT ids; 9 and 10: compact keys) and the sync's bases
     (`remote_base`) of schema 7 (JSON), 8 and 9 (compact records) or 10 (compact records, fields
     a base shares with its node read from the node), then
     walks the `nodes` table from the root, prints every path, and decrypts every local blob
     (header checks, data-key unwrap under the key of the header's epoch, every segment tag, the
     last-segment flag, size and SHA-256) into the output folder.

This is a test tool: writing plaintext into the folder the caller names is its purpose.
Needs: Python >= 3.9, `pip install cryptography argon2-cffi`, Debian package `sqlcipher`.
Exit status: 0 all good, 1 any verification failure, 2 usage.
"""

import argparse
import fcntl
import hashlib
import hmac
import json
import os
import sqlite3
import subprocess
import sys
import time
import unicodedata

try:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    from argon2.low_level import Type, hash_secret_raw
except ImportError as e:  # pragma: no cover
    sys.exit(f"independent-decrypt: missing Python package ({e}); run: pip install cryptography argon2-cffi")


class Failure(Exception):
    """A verification failure: the vault is damaged, tampered with, or SECURITY.md is wrong."""


# ---------------------------------------------------------------- constants from SECURITY.md

KEYSLOT_AAD_PREFIX = "vault-keyslot-v1"
ROTATION_AAD_PREFIX = "vault-rotation-v1"
PASSWORD_MAX_BYTES = 65536          # the longest password line (without its line ending)
HKDF_INFO_DATABASE = b"vault/v1/database"
HKDF_INFO_BLOB_WRAP = b"vault/v1/blob-wrap"
HKDF_INFO_KEYSLOT_MAC = b"vault/v1/keyslot-mac"
HKDF_INFO_ROTATION = b"vault/v1/rotation"
HKDF_INFO_RECOVERY_KEK = b"vault/v1/recovery-kek"

# KDF bounds: parameters outside them are refused before any work.
ARGON2_OPS = (1, 64)
ARGON2_MEM = (8192, 4 << 30)
PBKDF2_ITERATIONS = (1000, 100_000_000)

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
JOURNAL_RECORD = 16 + 112           # rotation.journal: blobId || header as it was

BLOB_MAGIC = b"VAULTBLB"
BLOB_HEADER_SIZE = 112
BLOB_WRAP_AAD_SIZE = 52        # header[0:52] authenticates the wrapped data key
BLOB_SEGMENT_AAD_PREFIX = 48   # header[0:48] starts every segment's AAD
TAG = 16
SEGMENT_SIZE_MIN, SEGMENT_SIZE_MAX = 4096, 16 << 20

SQLCIPHER_PAGE_SIZE = 1024
SQLCIPHER_RESERVE = 48         # IV 16 + HMAC-SHA1 20, rounded up to the AES block size
SQLCIPHER_HMAC_SALT_MASK = 0x3A


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- keyslot file

def parse_keyslot_file(data):
    """Returns (body_line_bytes, body_json, mac_hex)."""
    if not data.endswith(b"\n"):
        raise Failure("keyslot file does not end with a newline")
    lines = data[:-1].split(b"\n")
    if len(lines) != 3:
        raise Failure(f"keyslot file has {len(lines)} lines, expected 3 (body, sha256, hmac-sha256)")
    body, sum_line, mac_line = lines
    if sum_line != b"sha256:" + hashlib.sha256(body).hexdigest().encode():   # unkeyed: damage, not tampering
        raise Failure("keyslot file: the sha256 line does not match the body (damaged)")
    if not mac_line.startswith(b"hmac-sha256:") or len(mac_line) != 12 + 64:
        raise Failure("keyslot file: malformed hmac-sha256 line")
    doc = json.loads(body.decode("utf-8"))
    if doc.get("format") != 1:
        raise Failure(f"keyslot file: unsupported format {doc.get('format')!r}")
    vid = bytes.fromhex(doc["vaultId"])
    if len(vid) != 16:
        raise Failure("keyslot file: vaultId is not 16 bytes")
    return body, doc, mac_line[12:].decode()


def kdf_canonical(kdf):
    if kdf["alg"] == "argon2id":
        return f"argon2id:ops={kdf['opsLimit']}:mem={kdf['memLimitBytes']}:salt={kdf['salt']}"
    return f"{kdf['alg']}:iter={kdf['iterations']}:salt={kdf['salt']}"


def slot_aad(vault_id_hex, slot):
    kdf = slot.get("kdf")
    canon = kdf_canonical(kdf) if kdf else ""
    return f"{KEYSLOT_AAD_PREFIX}|{vault_id_hex}|{slot['id']}|{slot['type']}|{canon}".encode("utf-8")


def check_kdf_bounds(kdf):
    """The KDF bounds, checked before any KDF work (a tampered file must not exhaust memory)."""
    salt = bytes.fromhex(kdf["salt"])
    if kdf["alg"] == "argon2id":
        ops, mem = int(kdf["opsLimit"]), int(kdf["memLimitBytes"])
        if not (ARGON2_OPS[0] <= ops <= ARGON2_OPS[1] and ARGON2_MEM[0] <= mem <= ARGON2_MEM[1]) or len(salt) != 16:
            raise Failure(f"keyslot Argon2id parameters out of bounds (ops {ops}, memory {mem}, salt {len(salt)} bytes)")
    elif kdf["alg"] == "pbkdf2-sha512":
        it = int(kdf["iterations"])
        if not PBKDF2_ITERATIONS[0] <= it <= PBKDF2_ITERATIONS[1] or len(salt) < 16:
            raise Failure(f"keyslot PBKDF2 parameters out of bounds ({it} iterations, salt {len(salt)} bytes)")
    else:
        raise Failure(f"unknown KDF {kdf['alg']!r}")


def derive_kek(password, kdf):
    check_kdf_bounds(kdf)
    salt = bytes.fromhex(kdf["salt"])
    if kdf["alg"] == "argon2id":
        ops, mem = int(kdf["opsLimit"]), int(kdf["memLimitBytes"])
        # libsodium crypto_pwhash(ALG_ARGON2ID13): t = opslimit, m = memlimit / 1024 KiB, p = 1, v1.3
        return hash_secret_raw(secret=password, salt=salt, time_cost=ops, memory_cost=mem // 1024,
                               parallelism=1, hash_len=32, type=Type.ID, version=19)
    if kdf["alg"] == "pbkdf2-sha512":
        return PBKDF2HMAC(algorithm=hashes.SHA512(), length=32, salt=salt,
                          iterations=int(kdf["iterations"])).derive(password)
    raise Failure(f"unknown KDF {kdf['alg']!r}")


def hkdf32(master, vault_id, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=vault_id, info=info).derive(master)


def password_candidates(line):
    """The password bytes to try, in order (SECURITY.md "Key hierarchy"): the UTF-8 of the line's
    Unicode NFC form; then, when that differs, the bytes as given (a slot written before vault
    normalised). A line that is not UTF-8 is used as given."""
    try:
        nfc = unicodedata.normalize("NFC", line.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return [line]
    return [nfc] if nfc == line else [nfc, line]


def parse_recovery_key(text):
    """A typed recovery key (SECURITY.md "Recovery key encoding") -> its 32 bytes."""
    chars = [c for c in text.upper() if c not in "- \r\n"]
    if any(c not in BASE32 for c in chars):
        raise Failure("a recovery key has only the letters A-Z and the digits 2-7")
    if len(chars) != 55:
        raise Failure(f"a recovery key has 55 characters, this one has {len(chars)}")
    bits = "".join(format(BASE32.index(c), "05b") for c in chars)[:272]   # the last 3 bits: padding, ignored
    data = int(bits, 2).to_bytes(34, "big")
    key, check = data[:32], data[32:]
    if not hmac.compare_digest(hashlib.sha256(key).digest()[:2], check):
        raise Failure("the recovery key's checksum does not match: a character is mistyped")
    return key


def keys_of(master, vault_id):
    return {
        "master": master,
        "database": hkdf32(master, vault_id, HKDF_INFO_DATABASE),
        "blob-wrap": hkdf32(master, vault_id, HKDF_INFO_BLOB_WRAP),
        "keyslot-mac": hkdf32(master, vault_id, HKDF_INFO_KEYSLOT_MAC),
    }


def unlock_recovery(doc, vid_hex, recovery_key):
    kek = hkdf32(recovery_key, bytes.fromhex(vid_hex), HKDF_INFO_RECOVERY_KEK)
    for slot in doc["slots"]:
        if slot["type"] != "recovery":
            continue
        nonce, wrapped = bytes.fromhex(slot["nonce"]), bytes.fromhex(slot["wrappedKey"])
        try:
            master = AESGCM(kek).decrypt(nonce, wrapped, slot_aad(vid_hex, slot))
        except InvalidTag:
            log(f"slot {slot['id']}: recovery key -> does not open")
            continue
        log(f"slot {slot['id']}: recovery KEK (HKDF, AAD ending in '|') -> master key unwrapped")
        return master
    raise Failure("no recovery slot opens with this recovery key")


def unlock(vault_dir, password=None, recovery_key=None):
    """Returns (vault_id, epoch, keys by epoch): the keys of `epoch`, and of epoch + 1 while a
    rotation is pending (SECURITY.md "Reading a vault with a rotation pending")."""
    data = open(os.path.join(vault_dir, "keyslots"), "rb").read()
    body, doc, mac_hex = parse_keyslot_file(data)
    vid_hex = doc["vaultId"]
    vault_id = bytes.fromhex(vid_hex)
    epoch = int(doc["epoch"])
    log(f"keyslots: format 1, vault {vid_hex}, epoch {epoch}, generation {doc.get('generation', 0)}, "
        f"{len(doc['slots'])} slot(s), {len(doc.get('history', []))} history entr(y/ies), sha256 line ok")
    master = unlock_recovery(doc, vid_hex, recovery_key) if recovery_key is not None else None
    for slot in ([] if recovery_key is not None else doc["slots"]):
        if slot["type"] != "password" or not slot.get("kdf"):
            continue
        kdf = slot["kdf"]
        nonce, wrapped = bytes.fromhex(slot["nonce"]), bytes.fromhex(slot["wrappedKey"])
        if len(nonce) != 12 or len(wrapped) != 48:
            raise Failure(f"slot {slot['id']}: nonce/wrappedKey have the wrong size")
        for i, candidate in enumerate(password_candidates(password)):
            t0 = time.monotonic()
            kek = derive_kek(candidate, kdf)
            try:
                master = AESGCM(kek).decrypt(nonce, wrapped, slot_aad(vid_hex, slot))
            except InvalidTag:
                continue
            log(f"slot {slot['id']}: {kdf_canonical(kdf).split(':salt=')[0]} "
                f"({time.monotonic() - t0:.2f} s) -> master key unwrapped"
                + (" (with the bytes as given: a slot written before NFC normalisation)" if i else ""))
            break
        if master is not None:
            break
        log(f"slot {slot['id']}: {kdf_canonical(kdf).split(':salt=')[0]} -> does not open (wrong password?)")
    if master is None:
        raise Failure("no password slot opens with this password")
    keys = keys_of(master, vault_id)
    mac = hmac.new(keys["keyslot-mac"], body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, mac_hex):
        raise Failure("keyslot file: HMAC-SHA256 line does not verify (tampered)")
    log("keyslots: hmac-sha256 line verified with the keyslot MAC key")
    by_epoch = {epoch: keys}
    pending = doc.get("pendingRotation")
    if pending is not None:
        new_epoch = int(pending["epoch"])
        if new_epoch != epoch + 1:
            raise Failure(f"keyslot file: pending rotation to epoch {new_epoch} from epoch {epoch}")
        rotation_key = hkdf32(master, vault_id, HKDF_INFO_ROTATION)
        try:
            new_master = AESGCM(rotation_key).decrypt(bytes.fromhex(pending["nonce"]), bytes.fromhex(pending["wrappedNewMaster"]),
                                                      f"{ROTATION_AAD_PREFIX}|{vid_hex}|{new_epoch}".encode())
        except InvalidTag:
            raise Failure("keyslot file: the pending rotation's new master key does not authenticate")
        by_epoch[new_epoch] = keys_of(new_master, vault_id)
        log(f"keyslots: a rotation to epoch {new_epoch} is pending: new master key unwrapped with the rotation key")
    return vault_id, epoch, by_epoch


def read_journal(vault_dir):
    """rotation.journal: 128-byte records blobId || header; the first record of an id wins, a
    trailing partial record is ignored."""
    path = os.path.join(vault_dir, "rotation.journal")
    records = {}
    if os.path.exists(path):
        data = open(path, "rb").read()
        for i in range(0, len(data) - len(data) % JOURNAL_RECORD, JOURNAL_RECORD):
            records.setdefault(data[i:i + 16].hex(), data[i + 16:i + JOURNAL_RECORD])
    return records


# ---------------------------------------------------------------- metadata database

# nodes: schemas 7 and 8 keep ids, states and the SHA-256 as TEXT; schema 9 keeps ids as keys (16
# bytes, TEXT for an id of another shape), a pulled node's server id as an empty BLOB, a folder
# flag, the content state as 0-3 and the SHA-256 as its 32 bytes.
NODE_QUERY_TEXT = ("SELECT 'N', 'text', hex(id), CASE WHEN parent_id IS NULL THEN 'null' ELSE 'text' END, hex(parent_id), hex(name), type,"
                   " size, content_state, CASE WHEN local_path IS NULL THEN '-' ELSE local_path END,"
                   " CASE WHEN sha256 IS NULL THEN 'null' ELSE 'text' END, hex(sha256) FROM nodes;")
NODE_QUERY = {
    7: NODE_QUERY_TEXT,
    8: NODE_QUERY_TEXT,
    9: ("SELECT 'N', typeof(id), hex(id), typeof(parent_id), hex(parent_id), hex(name),"
        " CASE folder WHEN 1 THEN 'folder' ELSE 'file' END, size, content_state,"
        " CASE WHEN local_path IS NULL THEN '-' ELSE local_path END, typeof(sha256), hex(sha256) FROM nodes;"),
}
NODE_QUERY[10] = NODE_QUERY[9]
NODE_QUERY[11] = NODE_QUERY[10]   # schema 11 changed only the outbox, which this decoder does not read
# Schema 12: local_path names the blob by its key (16 bytes for 32 lowercase hex digits, TEXT
# otherwise); a vault upgraded by a release of schema 12 may hold keys there at 9 to 11 already
# (a kill between migrations), so 9 and up read either form.
LOCAL_PATH_KEY = "CASE WHEN local_path IS NULL THEN '-' WHEN typeof(local_path) = 'blob' THEN lower(hex(local_path)) ELSE local_path END"
for _v in (9, 10, 11, 12):
    NODE_QUERY[_v] = NODE_QUERY[9].replace("CASE WHEN local_path IS NULL THEN '-' ELSE local_path END", LOCAL_PATH_KEY)
CONTENT_STATES = {"0": "NOT_DOWNLOADED", "1": "DOWNLOADING", "2": "LOCAL", "3": "STALE"}
# blobs: up to schema 11 the id, area and SHA-256 as TEXT; schema 12 the id as its key, the area
# as 0 (cache) or 1 (staging), the SHA-256 as its 32 bytes (TEXT when it was not lowercase hex).
BLOB_QUERY = {v: "SELECT 'B', id, area, size, sealed_size, sha256, key_epoch FROM blobs;" for v in range(7, 12)}
BLOB_QUERY[12] = ("SELECT 'B', CASE typeof(id) WHEN 'blob' THEN lower(hex(id)) ELSE id END,"
                  " CASE area WHEN 0 THEN 'cache' WHEN 1 THEN 'staging' ELSE 'area ' || area END, size, sealed_size,"
                  " CASE typeof(sha256) WHEN 'blob' THEN lower(hex(sha256)) ELSE sha256 END, key_epoch FROM blobs;")
# remote_base, the sync's bases: schema 7 keeps ids as TEXT and the content record as JSON; schema 8
# keys it by the server id's 16 bytes (TEXT for an id of another shape) and keeps a compact record.
# Schema 10: a base with from_node = 1 takes its parent, name and (a file's) mime, mtime, size and
# SHA-256 from the node of the same id (a pulled node: remote_id = X''); the record holds the rest.
SCHEMA_MAX = 15
BASE_QUERY = {
    7: ("SELECT 'R', 'text', hex(remote_id), CASE WHEN parent_id IS NULL THEN 'null' ELSE 'text' END, hex(parent_id), hex(name),"
        " type = 'folder', version, CASE WHEN content IS NULL THEN '-' ELSE hex(content) END FROM remote_base;"),
    8: ("SELECT 'R', typeof(remote_id), hex(remote_id), typeof(parent_id), hex(parent_id), hex(name),"
        " folder, version, CASE WHEN content IS NULL THEN '-' ELSE hex(content) END FROM remote_base;"),
}
BASE_QUERY[9] = BASE_QUERY[8]
BASE_QUERY[10] = (
    "SELECT 'R', typeof(b.remote_id), hex(b.remote_id), typeof(p), hex(p), hex(nm), b.folder, b.version,"
    " CASE WHEN b.content IS NULL THEN '-' ELSE hex(b.content) END, typeof(mi), hex(mi), mt, sz, typeof(sh), hex(sh), b.from_node, has_node"
    " FROM (SELECT b.*, CASE b.from_node WHEN 1 THEN n.parent_id ELSE b.parent_id END AS p,"
    "  CASE b.from_node WHEN 1 THEN n.name ELSE b.name END AS nm, CASE b.from_node WHEN 1 THEN n.mime_type ELSE b.mime END AS mi,"
    "  CASE b.from_node WHEN 1 THEN n.modified_at ELSE b.mtime END AS mt, CASE b.from_node WHEN 1 THEN n.size ELSE b.size END AS sz,"
    "  CASE b.from_node WHEN 1 THEN n.sha256 ELSE b.sha256 END AS sh, n.id IS NOT NULL AS has_node"
    "  FROM remote_base b LEFT JOIN nodes n ON b.from_node = 1 AND n.id = b.remote_id AND n.remote_id = X'') b;")
BASE_QUERY[11] = BASE_QUERY[10]
BASE_QUERY[12] = BASE_QUERY[10]
BASE_QUERY[13] = BASE_QUERY[10]   # schema 13 only added an index
BLOB_QUERY[13] = BLOB_QUERY[12]
NODE_QUERY[13] = NODE_QUERY[12]
# schema 14 changed only the outbox (entries take fields from their nodes) and the request ids of
# the outbox and the transfers, which this decoder does not read
BASE_QUERY[14] = BASE_QUERY[13]
BLOB_QUERY[14] = BLOB_QUERY[13]
NODE_QUERY[14] = NODE_QUERY[13]
# Schema 15: a blob's NULL sha256 is the SHA-256 of its node (blobs.node_id), which holds it alike.
BASE_QUERY[15] = BASE_QUERY[14]
NODE_QUERY[15] = NODE_QUERY[14]
BLOB_QUERY[15] = BLOB_QUERY[12].replace(
    "CASE typeof(sha256) WHEN 'blob' THEN lower(hex(sha256)) ELSE sha256 END",
    "CASE typeof(sh) WHEN 'blob' THEN lower(hex(sh)) ELSE sh END").replace(
    "FROM blobs;", "FROM (SELECT b.*, coalesce(b.sha256, (SELECT n.sha256 FROM nodes n WHERE n.id = b.node_id)) AS sh FROM blobs b);")


def stored_sha256(kind, hexed, schema):
    """nodes.sha256: schema 9 keeps 64 lowercase hex digits as their 32 bytes; TEXT as it is."""
    if kind == "null":
        return None
    raw = bytes.fromhex(hexed)
    if kind == "blob" and schema >= 9:
        if len(raw) != 32:
            raise Failure(f"nodes: a SHA-256 of {len(raw)} bytes (32 expected)")
        return raw.hex()
    if kind == "text":
        return raw.decode()
    raise Failure(f"nodes: a SHA-256 stored as {kind}")


def parse_node(f, schema):
    state = f[8]
    if schema >= 9:
        if state not in CONTENT_STATES:
            raise Failure(f"nodes: content state {state!r} (0-3 expected)")
        state = CONTENT_STATES[state]
    return {"id": stored_id(f[1], f[2], "nodes"), "parent": stored_id(f[3], f[4], "nodes"),
            "name": bytes.fromhex(f[5]).decode("utf-8"), "type": f[6], "size": int(f[7]),
            "state": state, "blob": None if f[9] == "-" else f[9], "sha256": stored_sha256(f[10], f[11], schema)}


def stored_id(kind, hexed, table="remote_base"):
    """A schema-8 key (or a schema-7 id): BLOB of 16 bytes -> 32 lowercase hex digits; TEXT as it is."""
    if kind == "null":
        return None
    raw = bytes.fromhex(hexed)
    if kind == "blob":
        if len(raw) != 16:
            raise Failure(f"{table}: a key of {len(raw)} bytes (16 expected)")
        return raw.hex()
    if kind == "text":
        return raw.decode("utf-8")
    raise Failure(f"{table}: a key stored as {kind}")


def compact_content(raw, columns=None):
    """A compact content record (SECURITY.md "Metadata database") -> dict, as JSON has it: format 1
    (schemas 8, 9) holds every field; format 2 (schema 10) all but mime, mtime, size and SHA-256,
    which `columns` gives."""
    at = 0

    def byte():
        nonlocal at
        if at >= len(raw):
            raise Failure("remote_base: a compact content record is truncated")
        at += 1
        return raw[at - 1]

    def take(n):
        nonlocal at
        if len(raw) - at < n:
            raise Failure("remote_base: a compact content record is truncated")
        at += n
        return raw[at - n:at]

    def varint():
        v, shift = 0, 0
        while True:
            b = byte()
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v
            shift += 7
            if shift >= 64:
                raise Failure("remote_base: a varint longer than 64 bits")

    def integer():
        z = varint()
        return (z >> 1) ^ -(z & 1)

    def string(optional=False):
        tag = byte()
        if tag == 0:
            return take(varint()).decode("utf-8")
        if tag == 1:
            return take(16).hex()
        if tag == 2:
            return take(32).hex()
        if tag == 3:
            h = take(16).hex()
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        if tag == 4 and optional:
            return None
        raise Failure(f"remote_base: unknown string tag {tag} in a compact content record")

    fmt = byte()
    if fmt != (1 if columns is None else 2):
        raise Failure("remote_base: a compact content record of an unknown format")
    rec = {"blob": string(), "device": string()}
    name = string(optional=True)
    if name is not None:
        rec["deviceName"] = name
    if fmt == 1:
        rec["mime"] = string()
        rec["mtime"], rec["sealedSize"], rec["seq"] = integer(), integer(), integer()
        rec["sha256"] = string()
        rec["size"], rec["v"] = integer(), integer()
    else:
        rec["sealedSize"], rec["seq"], rec["v"] = integer(), integer(), integer()
        rec.update(columns)
    if at != len(raw):
        raise Failure("remote_base: bytes after a compact content record")
    return rec


def parse_base(f, schema):
    content = None
    if f[8] != "-":
        raw = bytes.fromhex(f[8])
        content = json.loads(raw.decode("utf-8")) if schema == 7 else compact_content(raw)
        for k in ("blob", "device", "mime", "mtime", "sealedSize", "seq", "sha256", "size", "v"):
            if k not in content:
                raise Failure(f"remote_base: a content record without {k!r}")
    return {"id": stored_id(f[1], f[2]), "parent": stored_id(f[3], f[4]), "name": bytes.fromhex(f[5]).decode("utf-8"),
            "folder": f[6] == "1", "version": int(f[7]), "content": content}


def parse_base10(f):
    """A schema-10 base row (BASE_QUERY[10]): the node's fields already taken for from_node = 1."""
    if f[15] == "1" and f[16] != "1":
        raise Failure("remote_base: a base takes its fields from a node that is not there")
    content = None
    if f[8] != "-":
        if f[9] != "text" or f[11] == "" or f[12] == "" or f[13] == "null":
            raise Failure("remote_base: a content record without its mime, mtime, size or SHA-256")
        columns = {"mime": bytes.fromhex(f[10]).decode("utf-8"), "mtime": int(f[11]), "size": int(f[12]),
                   "sha256": stored_sha256(f[13], f[14], 10)}
        content = compact_content(bytes.fromhex(f[8]), columns)
    return {"id": stored_id(f[1], f[2]), "parent": stored_id(f[3], f[4]), "name": bytes.fromhex(f[5]).decode("utf-8"),
            "folder": f[6] == "1", "version": int(f[7]), "content": content}


def parse_rows(lines, schema):
    nodes, blobs, bases = [], {}, []
    for line in lines:
        f = line.split("|")
        if f[0] == "N" and len(f) == 12:
            nodes.append(parse_node(f, schema))
        elif f[0] == "B" and len(f) == 7:
            if f[2] not in ("cache", "staging"):
                raise Failure(f"blobs: blob {f[1]} has {f[2]!r}, no area")
            blobs[f[1]] = {"area": f[2], "size": int(f[3]), "sealed": int(f[4]), "sha256": f[5], "epoch": int(f[6])}
        elif f[0] == "R" and len(f) == 9 and schema < 10:
            bases.append(parse_base(f, schema))
        elif f[0] == "R" and len(f) == 17 and schema >= 10:
            bases.append(parse_base10(f))
        elif line.strip():
            raise Failure(f"unexpected sqlcipher output: {line[:80]!r}")
    return nodes, blobs, bases


def check_schema(version):
    if version > SCHEMA_MAX:
        raise Failure(f"metadata.db has schema {version}; this decoder knows up to {SCHEMA_MAX}")
    if version < 7:
        raise Failure(f"metadata.db has schema {version}; open it once with vault to upgrade it (this decoder reads 7 to 15)")
    return version


def run_sqlcipher(db_path, db_key, statements):
    # The key goes through stdin, never the command line (other users can read argv).
    script = (f"PRAGMA key = \"x'{db_key.hex()}'\";\n"
              "PRAGMA query_only = ON;\n"
              ".mode list\n.separator |\n.headers off\n"
              f"{statements}\n")
    p = subprocess.run(["sqlcipher", "-batch", "-bail", "-init", "/dev/null", db_path],
                       input=script.encode(), capture_output=True)
    if p.returncode != 0:
        raise Failure(f"sqlcipher cannot read metadata.db with the database key: {p.stderr.decode().strip()}")
    return p.stdout.decode().splitlines()


def read_db_with_sqlcipher(db_path, db_key):
    """(nodes, blobs, bases), schema version."""
    schema = check_schema(int(run_sqlcipher(db_path, db_key, "PRAGMA user_version;")[-1]))
    lines = run_sqlcipher(db_path, db_key, f"{NODE_QUERY[schema]}\n{BLOB_QUERY[schema]}\n{BASE_QUERY[schema]}")
    return parse_rows(lines, schema), schema


def decrypt_sqlcipher_pages(db_path, db_key):
    """SQLCipher 3.x page format, decrypted here without SQLCipher: returns plain SQLite bytes."""
    raw = open(db_path, "rb").read()
    if len(raw) == 0 or len(raw) % SQLCIPHER_PAGE_SIZE:
        raise Failure(f"metadata.db is {len(raw)} bytes, not a multiple of {SQLCIPHER_PAGE_SIZE}")
    salt = raw[:16]
    hmac_key = hashlib.pbkdf2_hmac("sha1", db_key, bytes(b ^ SQLCIPHER_HMAC_SALT_MASK for b in salt), 2, 32)
    out = bytearray()
    usable = SQLCIPHER_PAGE_SIZE - SQLCIPHER_RESERVE
    for i in range(len(raw) // SQLCIPHER_PAGE_SIZE):
        pgno = i + 1
        page = raw[i * SQLCIPHER_PAGE_SIZE:(i + 1) * SQLCIPHER_PAGE_SIZE]
        off = 16 if pgno == 1 else 0
        ct, iv, tag = page[off:usable], page[usable:usable + 16], page[usable + 16:usable + 36]
        want = hmac.new(hmac_key, ct + iv + pgno.to_bytes(4, "little"), hashlib.sha1).digest()
        if not hmac.compare_digest(want, tag):
            raise Failure(f"metadata.db page {pgno}: HMAC-SHA1 does not verify")
        dec = Cipher(algorithms.AES(db_key), modes.CBC(iv)).decryptor()
        pt = dec.update(ct) + dec.finalize()
        out += (b"SQLite format 3\x00" if pgno == 1 else b"") + pt + bytes(SQLCIPHER_RESERVE)
    if out[16:18] != SQLCIPHER_PAGE_SIZE.to_bytes(2, "big") or out[20] != SQLCIPHER_RESERVE:
        raise Failure("decrypted page 1 does not carry page size 1024 / reserve 48")
    return bytes(out)


def read_db_pure_python(db_path, db_key):
    plain = decrypt_sqlcipher_pages(db_path, db_key)
    con = sqlite3.connect(":memory:")
    con.deserialize(plain)          # in memory only: the plaintext database never touches the disk
    schema = check_schema(con.execute("PRAGMA user_version").fetchone()[0])
    rows = []
    for sql in (NODE_QUERY[schema], BLOB_QUERY[schema], BASE_QUERY[schema]):
        for r in con.execute(sql.rstrip(";")):
            rows.append("|".join("" if v is None else str(v) for v in r))
    con.close()
    return parse_rows(rows, schema), len(plain) // SQLCIPHER_PAGE_SIZE


# ---------------------------------------------------------------- sealed blobs

def decrypt_blob(path, blob_id_hex, vault_id, wrap_key, out_path, expected_size, expected_sha256, length=None,
                 journal_header=None):
    """Verifies and decrypts one sealed blob into out_path; returns (size, sha256 hex, epoch, segments).

    Every segment is opened, the final one included even when it is empty (its tag authenticates
    the last flag), and the plaintext must be exactly expected_size bytes (nodes.size) with SHA-256
    expected_sha256 (nodes.sha256, when recorded) before out_path is published.
    `length`: the blob is the first `length` bytes of the file (a server copy followed by padding).
    `wrap_key` may be a function of the header's key epoch (raising Failure for an epoch it does
    not know). `journal_header`: the blob's record in rotation.journal, used when the header
    unwraps under no key (a header torn by a crash mid-rotation)."""
    file_size = os.path.getsize(path) if length is None else length
    if length is not None and os.path.getsize(path) < length:
        raise Failure(f"blob {blob_id_hex}: the file is shorter than the sealed size {length}")
    with open(path, "rb") as f:
        h = f.read(BLOB_HEADER_SIZE)
        if len(h) < BLOB_HEADER_SIZE or file_size < BLOB_HEADER_SIZE + TAG:
            raise Failure(f"blob {blob_id_hex}: shorter than a header and one tag")
        if h[0:8] != BLOB_MAGIC or h[8] != 1 or h[9] != 1 or h[10:12] != b"\0\0":
            raise Failure(f"blob {blob_id_hex}: bad magic/version/algorithm/reserved")
        seg = int.from_bytes(h[12:16], "big")
        if not SEGMENT_SIZE_MIN <= seg <= SEGMENT_SIZE_MAX:
            raise Failure(f"blob {blob_id_hex}: segment size {seg} out of range")
        if h[16:32] != vault_id:
            raise Failure(f"blob {blob_id_hex}: header names vault {h[16:32].hex()} (copied from another vault)")
        if h[32:48] != bytes.fromhex(blob_id_hex):
            raise Failure(f"blob {blob_id_hex}: header names blob {h[32:48].hex()} (swapped file)")
        epoch = int.from_bytes(h[48:52], "big")

        def unwrap(header):
            e = int.from_bytes(header[48:52], "big")
            key = wrap_key(e) if callable(wrap_key) else wrap_key
            return AESGCM(key).decrypt(header[52:64], header[64:112], header[0:BLOB_WRAP_AAD_SIZE])
        try:
            data_key = unwrap(h)
        except (InvalidTag, Failure) as first:
            try:
                if journal_header is None or journal_header[0:48] != h[0:48]:
                    raise first
                data_key = unwrap(journal_header)
                epoch = int.from_bytes(journal_header[48:52], "big")
                log(f"  blob {blob_id_hex}: header does not unwrap; its rotation.journal record does (a torn header)")
            except InvalidTag:
                raise Failure(f"blob {blob_id_hex}: data key does not unwrap (wrong key or modified header)")
            except Failure as e:
                raise Failure(f"blob {blob_id_hex}: {e}")
        stride = seg + TAG
        body = file_size - BLOB_HEADER_SIZE
        count = (body + stride - 1) // stride
        final = body - (count - 1) * stride
        if final < TAG or (final == TAG and count > 1):
            raise Failure(f"blob {blob_id_hex}: impossible size (truncated inside a tag or empty non-first final segment)")
        aead = AESGCM(data_key)
        sha = hashlib.sha256()
        total = 0
        tmp = out_path + ".partial" if out_path else None
        try:
            with (open(tmp, "wb") if tmp else open(os.devnull, "wb")) as out:
                for i in range(count):
                    last = i == count - 1
                    c = f.read(final if last else stride)
                    nonce = b"\0\0\0\0" + i.to_bytes(8, "big")
                    aad = h[0:BLOB_SEGMENT_AAD_PREFIX] + i.to_bytes(8, "big") + (b"\x01" if last else b"\x00")
                    try:
                        p = aead.decrypt(nonce, c, aad)
                    except InvalidTag:
                        raise Failure(f"blob {blob_id_hex}: segment {i} of {count} does not authenticate"
                                      + diagnose_segment(aead, nonce, c, h, i, last))
                    sha.update(p)
                    total += len(p)
                    out.write(p)
            if total != body - TAG * count:
                raise Failure(f"blob {blob_id_hex}: plaintext size mismatch")
            if total != expected_size:
                raise Failure(f"blob {blob_id_hex}: decrypted {total} bytes, the metadata says {expected_size}")
            if expected_sha256 and not hmac.compare_digest(sha.hexdigest(), expected_sha256.lower()):
                raise Failure(f"blob {blob_id_hex}: SHA-256 of the plaintext differs from the metadata's")
            if tmp:
                os.replace(tmp, out_path)
        finally:
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
    return total, sha.hexdigest(), epoch, count


def diagnose_segment(aead, nonce, c, h, i, last):
    """After a failure only: say what the segment does authenticate as, if anything recognisable."""
    flag = b"\x01" if last else b"\x00"
    try:
        aead.decrypt(nonce, c, h[0:48] + i.to_bytes(8, "big") + (b"\x00" if last else b"\x01"))
        return (" (it is a non-final segment where the file ends: truncated at a segment boundary)" if last
                else " (it is a final segment followed by more data: extended)")
    except InvalidTag:
        pass
    try:
        aead.decrypt(nonce, c, h[0:52] + i.to_bytes(8, "big") + flag)
        return " (it authenticates with AAD prefix header[0:52]: SECURITY.md and the code disagree)"
    except InvalidTag:
        return ""


# ---------------------------------------------------------------- tree walk

def build_paths(nodes):
    by_id = {n["id"]: n for n in nodes}
    roots = [n for n in nodes if n["parent"] is None]
    if len(roots) != 1 or roots[0]["id"] != "root":
        raise Failure(f"nodes: expected exactly one root node with id 'root', found {[r['id'] for r in roots]}")
    children = {}
    for n in nodes:
        if n["parent"] is not None:
            if n["parent"] not in by_id:
                raise Failure(f"nodes: {n['id']} has a missing parent")
            children.setdefault(n["parent"], []).append(n)
    out, stack, seen = [], [(roots[0], "")], set()
    while stack:
        n, path = stack.pop()
        if n["id"] in seen:
            raise Failure("nodes: cycle in the tree")
        seen.add(n["id"])
        for c in sorted(children.get(n["id"], []), key=lambda x: x["name"], reverse=True):
            name = c["name"]
            if name in ("", ".", "..") or "/" in name or "\0" in name:
                raise Failure(f"nodes: refusing unsafe name {name!r}")
            stack.append((c, path + "/" + name))
        if n["id"] != "root":
            out.append((path, n))
    if len(seen) != len(nodes):
        raise Failure("nodes: some rows are not reachable from the root")
    return out


def main():
    ap = argparse.ArgumentParser(description="Decrypt a vault folder from its password, independently of vault.")
    ap.add_argument("vault_dir", help="the vault folder (VAULT_HOME, or $XDG_DATA_HOME/vault)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--password-file", help="file whose first line is the password")
    g.add_argument("--password-stdin", action="store_true", help="read the password's first line from stdin")
    g.add_argument("--recovery-key-file", help="file whose first line is the vault's recovery key")
    ap.add_argument("--out", help="folder to write the decrypted files into (created; must be empty)")
    ap.add_argument("--check-db-pages", action="store_true",
                    help="also decrypt metadata.db page by page here (no SQLCipher) and compare")
    ap.add_argument("--dump-bases", action="store_true",
                    help="print every remote_base row, decoded: a line 'base <JSON>' each, sorted by id")
    ap.add_argument("--print-db-key", action="store_true",
                    help="print the SQLCipher raw key (a test aid: it is a secret)")
    a = ap.parse_args()

    source = a.recovery_key_file or a.password_file
    raw = open(source, "rb").read() if source else sys.stdin.buffer.read()
    password = raw.split(b"\n", 1)[0]
    if password.endswith(b"\r"):
        password = password[:-1]
    if not password:
        print("independent-decrypt: the password is empty", file=sys.stderr)
        return 2
    if len(password) > PASSWORD_MAX_BYTES:
        print(f"independent-decrypt: the password is longer than {PASSWORD_MAX_BYTES} bytes", file=sys.stderr)
        return 2
    if a.out and os.path.exists(a.out) and os.listdir(a.out):
        print(f"independent-decrypt: {a.out} is not empty", file=sys.stderr)
        return 2

    vault_dir = a.vault_dir
    lock_fd = None
    try:
        lock_path = os.path.join(vault_dir, "lock")
        if os.path.exists(lock_path):            # the same flock vault commands take, so nothing changes under us
            lock_fd = os.open(lock_path, os.O_RDONLY)
            deadline = time.monotonic() + 10
            while True:
                try:
                    fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise Failure("the vault is busy (another command holds its lock)")
                    time.sleep(0.05)

        if a.recovery_key_file:
            vault_id, epoch, by_epoch = unlock(vault_dir, recovery_key=parse_recovery_key(password.decode("ascii", "replace")))
        else:
            vault_id, epoch, by_epoch = unlock(vault_dir, password=password)
        db_path = os.path.join(vault_dir, "metadata.db")
        # During a rotation the database is under the new epoch's key once renamed, else the old one.
        db_key, failure = None, None
        for e in sorted(by_epoch, reverse=True):
            try:
                (nodes, blobs, bases), schema = read_db_with_sqlcipher(db_path, by_epoch[e]["database"])
                db_key = by_epoch[e]["database"]
                break
            except Failure as f:
                failure = f
        if db_key is None:
            raise failure
        if a.print_db_key:
            log(f"database key: {db_key.hex()}")
        log(f"metadata.db: opened with sqlcipher and PRAGMA key = \"x'<database key>'\""
            f"{' (epoch ' + str(e) + ')' if len(by_epoch) > 1 else ''}: schema {schema}, {len(nodes)} nodes, {len(blobs)} blobs, "
            f"{len(bases)} bases ({sum(b['content'] is not None for b in bases)} with a content record)")
        if a.check_db_pages:
            (pn, pb, pr), pages = read_db_pure_python(db_path, db_key)
            key = lambda n: n["id"]
            if sorted(pn, key=key) != sorted(nodes, key=key) or pb != blobs or sorted(pr, key=key) != sorted(bases, key=key):
                raise Failure("metadata.db: page-by-page decryption disagrees with sqlcipher")
            log(f"metadata.db: {pages} pages decrypted here (AES-256-CBC, HMAC-SHA1 verified), same rows")

        if a.dump_bases:
            for b in sorted(bases, key=lambda b: b["id"]):
                print("base " + json.dumps(b, sort_keys=True, ensure_ascii=False))

        def wrap_key(e):
            if e not in by_epoch:
                raise Failure(f"its header names key epoch {e}; this vault's blobs are at epoch "
                              + " or ".join(str(k) for k in sorted(by_epoch)))
            return by_epoch[e]["blob-wrap"]
        journal = read_journal(vault_dir) if len(by_epoch) > 1 else {}
        entries = build_paths(nodes)
        if a.out:
            os.makedirs(a.out, mode=0o700, exist_ok=True)
        files = decrypted = 0
        for path, n in entries:
            if n["type"] == "folder":
                log(f"  {path}/")
                if a.out:
                    os.makedirs(a.out + path, mode=0o700, exist_ok=True)
                continue
            files += 1
            if n["state"] not in ("LOCAL", "STALE") or not n["blob"]:
                log(f"  {path}  ({n['size']} bytes, {n['state']}: no local content)")
                continue
            bid = n["blob"]
            rec = blobs.get(bid)
            # The recorded area first; the other too (a publish killed between commit and move).
            areas = sorted(["staging", "cache"], key=lambda ar: not rec or ar != rec["area"])
            blob_path = next((os.path.join(vault_dir, ar, bid + ".blob") for ar in areas
                              if os.path.exists(os.path.join(vault_dir, ar, bid + ".blob"))), None)
            if blob_path is None:
                raise Failure(f"{path}: blob {bid} is missing from {'/'.join(areas)}")
            # A STALE file's local blob is the older version (the node already says the newer one's
            # size and SHA-256): its own blobs row says what it holds.
            want_size, want_sha = (rec["size"], rec["sha256"]) if n["state"] == "STALE" and rec else (n["size"], n["sha256"])
            try:
                size, digest, blob_epoch, segs = decrypt_blob(blob_path, bid, vault_id, wrap_key,
                                                              (a.out + path) if a.out else None, want_size, want_sha,
                                                              journal_header=journal.get(bid))
            except Failure as e:
                raise Failure(f"{path}: {e}")
            if rec and (rec["size"] != size or rec["sealed"] != os.path.getsize(blob_path)):
                raise Failure(f"{path}: blobs row sizes disagree with the file")
            decrypted += 1
            log(f"  {path}  ({size} bytes, {segs} segment(s), epoch {blob_epoch}, "
                f"{os.path.basename(os.path.dirname(blob_path))}/{bid}.blob) ok")
        log(f"{files} file(s), {decrypted} decrypted and verified" + (f" into {a.out}" if a.out else ""))
        return 0
    except Failure as e:
        print(f"independent-decrypt: FAILED: {e}", file=sys.stderr)
        return 1
    except (ValueError, KeyError, TypeError, OSError) as e:   # malformed JSON, hex, fields; unreadable files
        print(f"independent-decrypt: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        if lock_fd is not None:
            os.close(lock_fd)


if __name__ == "__main__":
    sys.exit(main())
