#!/usr/bin/python3
"""Opens a vault's fido2 keyslot from SECURITY.md "Keyslot file" alone (python3-fido2 as the
FIDO2 client, python3-cryptography, no vault code), and checks the keyslot file's MAC with the
master key.

    independent-fido2-slot.py VAULT_DIR --socket S [--pin-file F]

Reaches the authenticator as CTAPHID reports on the Unix socket S (scripts/soft-fido2.py, the
test authenticator; a real key would be python-fido2's CtapHidDevice.list_devices()). For each
fido2 slot in order: asks for an assertion of the slot's credential for its relying party with the
hmac-secret salt (with the PIN's token when the slot says pin), takes output1 as the slot
secret, derives KEK = HKDF(secret, vaultId, "vault/v1/fido2-kek"), opens the wrapped master key
under the slot AAD and requires line 3 = hmac-sha256 under the keyslot MAC key. Prints one line
naming the slot (never a key). Exit 0 on success; 1 with the reason on standard error.
"""
import argparse
import os
import socket
import sys
import unicodedata

from fido2.ctap import CtapError
from fido2.ctap2 import ClientPin, Ctap2
from fido2.ctap2.extensions import HmacSecretExtension
from fido2.hid import CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from independent_keyslots import Failure, open_slot, read_keyslots  # noqa: E402


class SocketConnection(CtapHidConnection):
    """One 64-byte CTAPHID report per write and read, as on a HID interrupt endpoint."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)

    def write_packet(self, data):
        packet = data[1:] if len(data) == 65 else data  # without a report id
        self.sock.sendall(packet.ljust(64, b"\0"))

    def read_packet(self):
        buf = b""
        while len(buf) < 64:
            chunk = self.sock.recv(64 - len(buf))
            if not chunk:
                raise Failure("the authenticator closed the connection")
            buf += chunk
        return buf

    def close(self):
        self.sock.close()


def canonical(slot):
    f = slot["fido2"]
    return f"fido2:rp={f['rp']}:pin={1 if f['pin'] else 0}:cred={f['credentialId']}:salt={f['salt']}"


def pin_text(path):
    with open(path, "rb") as fh:
        line = fh.read().split(b"\n", 1)[0].rstrip(b"\r")
    return unicodedata.normalize("NFC", line.decode("utf-8"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vault_dir")
    ap.add_argument("--socket", required=True)
    ap.add_argument("--pin-file")
    args = ap.parse_args()
    lines, doc, _ = read_keyslots(args.vault_dir)
    slots = [s for s in doc["slots"] if s["type"] == "fido2" and "fido2" in s and "kdf" not in s]
    if not slots:
        raise Failure("no fido2 slot")
    ctap = Ctap2(CtapHidDevice(HidDescriptor(args.socket, 0, 0, 64, 64), SocketConnection(args.socket)))
    for slot in slots:
        f = slot["fido2"]
        client_data_hash = os.urandom(32)
        pin_param, protocol = None, None
        client_pin = ClientPin(ctap)
        if f["pin"]:
            if not args.pin_file:
                raise Failure("the slot was enrolled with the key's PIN: pass --pin-file")
            token = client_pin.get_pin_token(pin_text(args.pin_file))
            pin_param = client_pin.protocol.authenticate(token, client_data_hash)
            protocol = client_pin.protocol.VERSION
        ext = HmacSecretExtension(ctap, client_pin.protocol)
        request = ext.process_get_input({"hmacGetSecret": {"salt1": bytes.fromhex(f["salt"])}})
        try:
            assertion = ctap.get_assertion(f["rp"], client_data_hash, [{"type": "public-key", "id": bytes.fromhex(f["credentialId"])}],
                                           {"hmac-secret": request}, None, pin_param, protocol)
        except CtapError as e:
            if e.code == CtapError.ERR.NO_CREDENTIALS:
                continue
            raise
        if not assertion.auth_data.flags & 0x01:
            raise Failure("the authenticator did not report user presence")
        secret = ext.process_get_output(assertion.auth_data)["hmacGetSecret"]["output1"]
        open_slot(lines, doc, slot, secret, canonical(slot))
        print(f"ok: fido2 slot {slot['id']} opens the master key, and the keyslot MAC verifies")
        return
    raise Failure("this authenticator holds the credential of no fido2 slot")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        print(f"independent-fido2-slot: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
