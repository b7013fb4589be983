#!/usr/bin/python3
"""A software FIDO2 authenticator for tests only: CTAP 2.0 over CTAPHID frames (64-byte reports)
on a Unix stream socket, so that libfido2 (through fido_dev_set_io_functions, see
Sources/CFIDO2Shims) and python-fido2 (scripts/independent-fido2-slot.py) reach it as they reach a
USB security key. There is no HID device on the test machines; this is what stands in for one.

    soft-fido2.py --socket PATH --state FILE [--pin PIN] [--presence ok|timeout|deny|unplug]

What it implements (CTAP 2.0, https://fidoalliance.org/specs/fido-v2.0-ps-20190130/):
- CTAPHID: INIT (channel allocation), CBOR, PING, WINK, CANCEL, ERROR; no U2F (NMSG);
- authenticatorGetInfo: versions FIDO_2_0, extensions hmac-secret, options rk=false up=true
  clientPin, pinProtocols [1];
- authenticatorMakeCredential: ES256 only, non-resident credentials (rk=true is refused), the
  hmac-secret extension, packed self attestation; a PIN is required when one is set;
- authenticatorGetAssertion: the allow list, user presence, pinAuth (UV), the hmac-secret
  extension (one or two salts) with, as CTAP 2.1 authenticators do, one CredRandom for
  assertions with UV and another without;
- authenticatorClientPIN protocol 1: getRetries, getKeyAgreement, setPIN, getPINToken (8 retries,
  blocked at 0; 3 wrong PINs in a row block PIN use until the authenticator restarts).

Credentials are not stored: the credential id is AES-256-GCM(state secret, nonce, private key ‖
CredRandom seed, aad = rpIdHash), so only the authenticator with the same state file (the same
"device") recognises it; another answers CTAP2_ERR_NO_CREDENTIALS, as a real key does.
`--presence timeout` answers CTAP2_ERR_USER_ACTION_TIMEOUT (no touch); `deny` answers
CTAP2_ERR_OPERATION_DENIED; `unplug` exits while the touch is awaited (the key pulled out
mid-call). The state file (0600) keeps the secret, the PIN hash and the retries.
"""
import argparse
import hashlib
import hmac
import json
import os
import signal
import socket
import struct
import threading
import sys
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from fido2 import cbor

AAGUID = b"vault-soft-fido2"  # 16 bytes
MAX_RETRIES = 8

# CTAP2 status codes.
OK = 0x00
ERR_INVALID_COMMAND = 0x01
ERR_INVALID_PARAMETER = 0x02
ERR_INVALID_LENGTH = 0x03
ERR_INVALID_CBOR = 0x12
ERR_MISSING_PARAMETER = 0x14
ERR_UNSUPPORTED_ALGORITHM = 0x26
ERR_OPERATION_DENIED = 0x27
ERR_UNSUPPORTED_OPTION = 0x2B
ERR_NO_CREDENTIALS = 0x2E
ERR_USER_ACTION_TIMEOUT = 0x2F
ERR_PIN_INVALID = 0x31
ERR_PIN_BLOCKED = 0x32
ERR_PIN_AUTH_INVALID = 0x33
ERR_PIN_AUTH_BLOCKED = 0x34
ERR_PIN_NOT_SET = 0x35
ERR_PIN_REQUIRED = 0x36
ERR_PIN_POLICY_VIOLATION = 0x37

FLAG_UP, FLAG_UV, FLAG_AT, FLAG_ED = 0x01, 0x04, 0x40, 0x80


class CtapError(Exception):
    def __init__(self, code):
        self.code = code


def aes_cbc(key, data, decrypt=False):
    c = Cipher(algorithms.AES(key), modes.CBC(b"\0" * 16))
    op = c.decryptor() if decrypt else c.encryptor()
    return op.update(data) + op.finalize()


def left16_hmac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()[:16]


def cose_public(pub, alg):
    n = pub.public_numbers()
    return {1: 2, 3: alg, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")}


def public_from_cose(key):
    try:
        x, y = key[-2], key[-3]
        return ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1()).public_key()
    except Exception:
        raise CtapError(ERR_INVALID_PARAMETER)


class Authenticator:
    def __init__(self, state_path, presence, pin):
        self.state_path = state_path
        self.presence = presence
        if os.path.exists(state_path):
            with open(state_path) as f:
                self.state = json.load(f)
        else:
            self.state = {"secret": os.urandom(32).hex(), "pinHash": None, "retries": MAX_RETRIES, "counter": 0}
        if pin is not None:
            self.state["pinHash"] = hashlib.sha256(pin.encode()).digest()[:16].hex()
            self.state["retries"] = MAX_RETRIES
        self.save()
        self.new_key_agreement()
        self.pin_token = os.urandom(32)
        self.consecutive_failures = 0

    def save(self):
        tmp = self.state_path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)

    def new_key_agreement(self):
        self.ka = ec.generate_private_key(ec.SECP256R1())

    def shared_secret(self, platform_cose):
        z = self.ka.exchange(ec.ECDH(), public_from_cose(platform_cose))
        return hashlib.sha256(z).digest()

    # -- credentials ---------------------------------------------------------------------------
    def wrap_credential(self, rp_hash, priv, seed):
        nonce = os.urandom(12)
        scalar = priv.private_numbers().private_value.to_bytes(32, "big")
        return nonce + AESGCM(bytes.fromhex(self.state["secret"])).encrypt(nonce, scalar + seed, rp_hash)

    def unwrap_credential(self, rp_hash, cred_id):
        if len(cred_id) != 12 + 64 + 16:
            return None
        try:
            plain = AESGCM(bytes.fromhex(self.state["secret"])).decrypt(cred_id[:12], cred_id[12:], rp_hash)
        except Exception:
            return None
        return ec.derive_private_key(int.from_bytes(plain[:32], "big"), ec.SECP256R1()), plain[32:]

    def user_presence(self):
        if self.presence == "timeout":
            time.sleep(0.2)
            raise CtapError(ERR_USER_ACTION_TIMEOUT)
        if self.presence == "deny":
            raise CtapError(ERR_OPERATION_DENIED)
        if self.presence == "unplug":
            os._exit(0)  # the key pulled out while it waits for the touch

    def check_pin_auth(self, pin_auth, protocol, client_data_hash):
        """Returns whether the user was verified (a valid pinAuth); raises when it is wrong."""
        if pin_auth is None:
            return False
        if protocol != 1:
            raise CtapError(ERR_PIN_AUTH_INVALID)
        if self.state["pinHash"] is None:
            raise CtapError(ERR_PIN_NOT_SET)
        if not hmac.compare_digest(left16_hmac(self.pin_token, client_data_hash), pin_auth):
            raise CtapError(ERR_PIN_AUTH_INVALID)
        return True

    def next_counter(self):
        self.state["counter"] += 1
        self.save()
        return self.state["counter"]

    # -- commands ------------------------------------------------------------------------------
    def get_info(self, _):
        return {1: ["FIDO_2_0"], 2: ["hmac-secret"], 3: AAGUID,
                4: {"rk": False, "up": True, "plat": False, "clientPin": self.state["pinHash"] is not None},
                5: 1200, 6: [1]}

    def make_credential(self, p):
        cdh, rp, user, params = p.get(1), p.get(2), p.get(3), p.get(4)
        if not isinstance(cdh, bytes) or not isinstance(rp, dict) or not isinstance(user, dict) or not isinstance(params, list):
            raise CtapError(ERR_MISSING_PARAMETER)
        if not any(isinstance(x, dict) and x.get("alg") == -7 and x.get("type") == "public-key" for x in params):
            raise CtapError(ERR_UNSUPPORTED_ALGORITHM)
        options = p.get(7) or {}
        if options.get("rk"):
            raise CtapError(ERR_UNSUPPORTED_OPTION)
        uv = self.check_pin_auth(p.get(8), p.get(9), cdh)
        if not uv and self.state["pinHash"] is not None:
            raise CtapError(ERR_PIN_REQUIRED)
        self.user_presence()
        rp_hash = hashlib.sha256(rp["id"].encode()).digest()
        priv = ec.generate_private_key(ec.SECP256R1())
        cred_id = self.wrap_credential(rp_hash, priv, os.urandom(32))
        ext = p.get(6) or {}
        flags = FLAG_UP | FLAG_AT | (FLAG_UV if uv else 0)
        ext_out = b""
        if ext.get("hmac-secret") is True:
            flags |= FLAG_ED
            ext_out = cbor.encode({"hmac-secret": True})
        auth_data = (rp_hash + bytes([flags]) + struct.pack(">I", self.next_counter()) + AAGUID
                     + struct.pack(">H", len(cred_id)) + cred_id + cbor.encode(cose_public(priv.public_key(), -7)) + ext_out)
        sig = priv.sign(auth_data + cdh, ec.ECDSA(hashes.SHA256()))
        return {1: "packed", 2: auth_data, 3: {"alg": -7, "sig": sig}}

    def get_assertion(self, p):
        rp_id, cdh, allow = p.get(1), p.get(2), p.get(3)
        if not isinstance(rp_id, str) or not isinstance(cdh, bytes):
            raise CtapError(ERR_MISSING_PARAMETER)
        uv = self.check_pin_auth(p.get(6), p.get(7), cdh)
        rp_hash = hashlib.sha256(rp_id.encode()).digest()
        found = None
        for d in allow or []:
            if isinstance(d, dict) and isinstance(d.get("id"), bytes):
                k = self.unwrap_credential(rp_hash, d["id"])
                if k is not None:
                    found = (d["id"], k)
                    break
        if found is None:
            raise CtapError(ERR_NO_CREDENTIALS)
        cred_id, (priv, seed) = found
        options = p.get(5) or {}
        up = options.get("up", True)
        if up:
            self.user_presence()
        flags = (FLAG_UP if up else 0) | (FLAG_UV if uv else 0)
        ext_out = b""
        hs = (p.get(4) or {}).get("hmac-secret")
        if hs is not None:
            if not isinstance(hs, dict) or 1 not in hs or 2 not in hs or 3 not in hs:
                raise CtapError(ERR_MISSING_PARAMETER)
            shared = self.shared_secret(hs[1])
            salt_enc, salt_auth = hs[2], hs[3]
            if not hmac.compare_digest(left16_hmac(shared, salt_enc), salt_auth):
                raise CtapError(ERR_PIN_AUTH_INVALID)
            if len(salt_enc) not in (32, 64):
                raise CtapError(ERR_INVALID_LENGTH)
            salts = aes_cbc(shared, salt_enc, decrypt=True)
            cred_random = hmac.new(seed, b"uv" if uv else b"no-uv", hashlib.sha256).digest()
            out = b"".join(hmac.new(cred_random, salts[i:i + 32], hashlib.sha256).digest() for i in range(0, len(salts), 32))
            flags |= FLAG_ED
            ext_out = cbor.encode({"hmac-secret": aes_cbc(shared, out)})
        auth_data = rp_hash + bytes([flags]) + struct.pack(">I", self.next_counter()) + ext_out
        sig = priv.sign(auth_data + cdh, ec.ECDSA(hashes.SHA256()))
        return {1: {"id": cred_id, "type": "public-key"}, 2: auth_data, 3: sig}

    def client_pin(self, p):
        if p.get(1) != 1:
            raise CtapError(ERR_INVALID_PARAMETER)
        sub = p.get(2)
        if sub == 0x01:
            return {3: self.state["retries"]}
        if sub == 0x02:
            return {1: cose_public(self.ka.public_key(), -25)}
        if sub == 0x03:
            if self.state["pinHash"] is not None:
                raise CtapError(ERR_PIN_AUTH_INVALID)
            shared = self.shared_secret(p.get(3) or {})
            new_enc, auth = p.get(5), p.get(4)
            if not isinstance(new_enc, bytes) or len(new_enc) < 64 or len(new_enc) % 16:
                raise CtapError(ERR_PIN_POLICY_VIOLATION)
            if not isinstance(auth, bytes) or not hmac.compare_digest(left16_hmac(shared, new_enc), auth):
                raise CtapError(ERR_PIN_AUTH_INVALID)
            pin = aes_cbc(shared, new_enc, decrypt=True).rstrip(b"\0")
            if len(pin) < 4:
                raise CtapError(ERR_PIN_POLICY_VIOLATION)
            self.state["pinHash"] = hashlib.sha256(pin).digest()[:16].hex()
            self.state["retries"] = MAX_RETRIES
            self.save()
            return None
        if sub == 0x05:
            if self.state["pinHash"] is None:
                raise CtapError(ERR_PIN_NOT_SET)
            if self.state["retries"] == 0:
                raise CtapError(ERR_PIN_BLOCKED)
            if self.consecutive_failures >= 3:
                raise CtapError(ERR_PIN_AUTH_BLOCKED)
            shared = self.shared_secret(p.get(3) or {})
            enc = p.get(6)
            if not isinstance(enc, bytes) or len(enc) != 16:
                raise CtapError(ERR_INVALID_PARAMETER)
            self.state["retries"] -= 1
            self.save()
            if not hmac.compare_digest(aes_cbc(shared, enc, decrypt=True), bytes.fromhex(self.state["pinHash"])):
                self.new_key_agreement()
                self.consecutive_failures += 1
                if self.state["retries"] == 0:
                    raise CtapError(ERR_PIN_BLOCKED)
                raise CtapError(ERR_PIN_AUTH_BLOCKED if self.consecutive_failures >= 3 else ERR_PIN_INVALID)
            self.state["retries"] = MAX_RETRIES
            self.consecutive_failures = 0
            self.save()
            return {2: aes_cbc(shared, self.pin_token)}
        raise CtapError(ERR_INVALID_PARAMETER)

    def cbor_command(self, data):
        if not data:
            return bytes([ERR_INVALID_LENGTH])
        handlers = {0x01: self.make_credential, 0x02: self.get_assertion, 0x04: self.get_info, 0x06: self.client_pin}
        handler = handlers.get(data[0])
        if handler is None:
            return bytes([ERR_INVALID_COMMAND])
        try:
            params = cbor.decode(data[1:]) if len(data) > 1 else {}
            if not isinstance(params, dict):
                raise CtapError(ERR_INVALID_CBOR)
        except CtapError as e:
            return bytes([e.code])
        except Exception:
            return bytes([ERR_INVALID_CBOR])
        try:
            result = handler(params)
        except CtapError as e:
            return bytes([e.code])
        return bytes([OK]) + (cbor.encode(result) if result is not None else b"")


# -- CTAPHID over a stream of 64-byte reports ---------------------------------------------------
REPORT = 64
CMD_PING, CMD_MSG, CMD_INIT, CMD_WINK, CMD_CBOR, CMD_CANCEL, CMD_KEEPALIVE, CMD_ERROR = 0x01, 0x03, 0x06, 0x08, 0x10, 0x11, 0x3B, 0x3F
BROADCAST = 0xFFFFFFFF


def read_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def send_message(conn, cid, cmd, payload):
    head = struct.pack(">IBH", cid, 0x80 | cmd, len(payload))
    first, rest = payload[:REPORT - 7], payload[REPORT - 7:]
    conn.sendall((head + first).ljust(REPORT, b"\0"))
    seq = 0
    while rest:
        conn.sendall((struct.pack(">IB", cid, seq) + rest[:REPORT - 5]).ljust(REPORT, b"\0"))
        rest = rest[REPORT - 5:]
        seq += 1


def serve_connection(conn, auth, channels):
    while True:
        pkt = read_exact(conn, REPORT)
        if pkt is None:
            return
        cid, cmd = struct.unpack_from(">IB", pkt)
        if not cmd & 0x80:
            continue  # a continuation frame with no message started: ignored
        cmd &= 0x7F
        (length,) = struct.unpack_from(">H", pkt, 5)
        data = pkt[7:7 + length]
        seq = 0
        while len(data) < length:
            cont = read_exact(conn, REPORT)
            if cont is None:
                return
            ccid, cseq = struct.unpack_from(">IB", cont)
            if ccid != cid or cseq != seq:
                send_message(conn, cid, CMD_ERROR, bytes([0x04]))  # ERR_INVALID_SEQ
                data = None
                break
            data += cont[5:5 + length - len(data)]
            seq += 1
        if data is None:
            continue
        if cmd == CMD_INIT:
            if len(data) != 8:
                send_message(conn, cid, CMD_ERROR, bytes([0x03]))
                continue
            new = cid
            if cid == BROADCAST:
                new = struct.unpack(">I", os.urandom(4))[0] & 0x7FFFFFFF or 1
                channels.add(new)
            # nonce, channel, CTAPHID version 2, device version 1.0.0, capabilities WINK|CBOR|NMSG
            send_message(conn, cid, CMD_INIT, data + struct.pack(">IBBBBB", new, 2, 1, 0, 0, 0x01 | 0x04 | 0x08))
        elif cid not in channels:
            send_message(conn, cid, CMD_ERROR, bytes([0x0B]))  # ERR_INVALID_CHANNEL
        elif cmd == CMD_PING:
            send_message(conn, cid, CMD_PING, data)
        elif cmd == CMD_WINK:
            send_message(conn, cid, CMD_WINK, b"")
        elif cmd == CMD_CANCEL:
            pass
        elif cmd == CMD_CBOR:
            send_message(conn, cid, CMD_CBOR, auth.cbor_command(data))
        else:
            send_message(conn, cid, CMD_ERROR, bytes([0x01]))  # ERR_INVALID_CMD


def main():
    ap = argparse.ArgumentParser(description="a software FIDO2 authenticator for tests (CTAPHID over a Unix socket)")
    ap.add_argument("--socket", required=True)
    ap.add_argument("--state", required=True, help="state file (created when missing): the device's secret, PIN, retries")
    ap.add_argument("--pin", help="set this PIN at start (as authenticatorClientPIN setPIN would)")
    ap.add_argument("--presence", choices=["ok", "timeout", "deny", "unplug"], default="ok")
    args = ap.parse_args()
    auth = Authenticator(args.state, args.presence, args.pin)
    if os.path.exists(args.socket):
        os.unlink(args.socket)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    srv.bind(args.socket)
    os.umask(old)
    srv.listen(4)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    channels = set()
    lock = threading.Lock()

    class Serialized:
        """The authenticator's state, one command at a time across connections."""
        def cbor_command(self, data):
            with lock:
                return auth.cbor_command(data)

    def serve(conn):
        try:
            serve_connection(conn, Serialized(), channels)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            conn.close()

    # Each connection on a thread of its own: a connection a client left open (or one whose far
    # end a spawned process inherited, so it never reads as closed) must not hold up the next.
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
