#!/usr/bin/env python3
"""A multi-device fuzzer over the real binaries: N devices of one vault (each its own VAULT_HOME)
and one real `vault-server`, driven by random commands as users type them, with syncs killed at
random moments and devices syncing at the same time; then every device syncs until nothing
changes and the run checks, from outside only:

  1. every device shows the same tree (paths, types, sizes, SHA-256);
  2. every file's content is a version some device wrote (nothing invented, nothing torn);
  3. every version a device wrote is still somewhere (a file's head or one of its revisions)
     unless some device removed something after it was written;
  4. `vault doctor --verify` is clean on every device;
  5. no command died of a signal or said "internal error".

Usage (inside a D-Bus session with a Secret Service: scripts/with-keyring.sh):
  dbus-run-session -- scripts/with-keyring.sh scripts/fuzz-devices.py [--seeds N] [--seed S]
      [--devices 3] [--steps 120]
VAULT_BIN / VAULT_SERVER_BIN name the binaries (default: the release build's). Each seed prints
its line; a failing seed prints what failed and how to replay it (--seed S --seeds 1)."""

import argparse, hashlib, json, os, random, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bin_dir():
    out = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT,
                         capture_output=True, text=True)
    return out.stdout.strip()


class Run:
    def __init__(self, seed, devices, steps, vault, server):
        self.rng = random.Random(seed)
        self.seed, self.ndev, self.steps = seed, devices, steps
        self.vault, self.server = vault, server
        self.dir = tempfile.mkdtemp(prefix="vault-fuzz.")
        os.chmod(self.dir, 0o700)
        self.pw = os.path.join(self.dir, "pw")
        self.spw = os.path.join(self.dir, "spw")
        for p, t in ((self.pw, "fuzz vault password\n"), (self.spw, "fuzz server password\n")):
            with open(p, "w") as f: f.write(t)
            os.chmod(p, 0o600)
        self.homes = [os.path.join(self.dir, f"dev{i}") for i in range(devices)]
        self.written = {}          # sha -> (step, device) of its write
        self.removed_after = []    # steps at which some device removed something
        self.superseded = set()    # versions a device replaced before any sync of it finished
        self.unsynced = [dict() for _ in range(devices)]   # per device: path -> version not yet synced
        self.log = open(os.path.join(self.dir, "ops.log"), "w")
        self.stepno = -1
        self.problems = []
        self.codes = {}
        self.srv = None

    # -- processes ---------------------------------------------------------------------------
    def cmd(self, dev, *args, check=False, timeout=120):
        env = dict(os.environ, VAULT_HOME=self.homes[dev])
        p = subprocess.run([self.vault, *args], env=env, capture_output=True, text=True, timeout=timeout)
        self.note(args, p.returncode, p.stdout + p.stderr)
        if args[0] != "tree":
            self.log.write(f"{self.stepno} dev{dev} {' '.join(args)} -> {p.returncode}\n")
        if args[0] == "sync" and p.returncode == 0: self.unsynced[dev].clear()
        if check and p.returncode != 0:
            raise RuntimeError(f"dev{dev} vault {' '.join(args)} exited {p.returncode}: {p.stderr.strip()[:400]}")
        return p

    def note(self, args, rc, text):
        key = f"{args[0]}:{rc}"
        self.codes[key] = self.codes.get(key, 0) + 1
        if rc < 0 or rc > 128:
            self.problems.append(f"vault {' '.join(args)} died (exit {rc}): {text.strip()[:300]}")
        if "internal error" in text.lower() or "fatal error" in text.lower():
            self.problems.append(f"vault {' '.join(args)} (exit {rc}) said: {text.strip()[:300]}")

    def start_server(self):
        data = os.path.join(self.dir, "server")
        subprocess.run([self.server, "user", "add", "fuzz", "--data", data, "--password-file", self.spw],
                       check=True, capture_output=True)
        out = open(os.path.join(self.dir, "server.out"), "w")
        self.srv = subprocess.Popen([self.server, "serve", "--data", data, "--listen", "127.0.0.1:0", "--quiet"],
                                    stdout=out, stderr=open(os.path.join(self.dir, "server.log"), "w"))
        for _ in range(300):
            txt = open(os.path.join(self.dir, "server.out")).read()
            if "listening on " in txt:
                return "http://" + txt.split("listening on ", 1)[1].split()[0]
            time.sleep(0.05)
        raise RuntimeError("vault-server did not start")

    # -- the devices -------------------------------------------------------------------------
    def setup(self):
        url = self.start_server()
        self.cmd(0, "init", "--password-file", self.pw, "--kdf-ops", "1", "--kdf-mem", "8M", check=True)
        self.cmd(0, "unlock", "--password-file", self.pw, check=True)
        self.cmd(0, "login", "--server", url, "--user", "fuzz", "--server-password-file", self.spw, check=True)
        self.cmd(0, "sync", check=True)
        for d in range(1, self.ndev):
            self.cmd(d, "join", "--server", url, "--user", "fuzz", "--server-password-file", self.spw,
                     "--password-file", self.pw, check=True)
            self.cmd(d, "unlock", "--password-file", self.pw, check=True)
            self.cmd(d, "sync", check=True)

    def tree(self, dev):
        p = self.cmd(dev, "tree", "--json", check=True)
        out = {}
        def walk(n):
            out[n["path"]] = (n["type"], n["size"] if n["type"] != "folder" else 0, n.get("sha256"))
            for c in n.get("children") or []: walk(c)
        walk(json.loads(p.stdout))
        return out

    def content(self, dev, size):
        kind = self.rng.random()
        if kind < 0.15: data = b""
        elif kind < 0.85: data = self.rng.randbytes(self.rng.randint(1, 3000))
        else: data = self.rng.randbytes(self.rng.randint(100_000, 3_000_000))
        path = os.path.join(self.dir, f"in{dev}")
        with open(path, "wb") as f: f.write(data)
        return path, hashlib.sha256(data).hexdigest()

    def pick(self, tree, kind):
        names = sorted(p for p, v in tree.items() if (kind is None or v[0] == kind) and p != "/")
        return self.rng.choice(names) if names else None

    def step(self, i):
        dev = self.rng.randrange(self.ndev)
        t = self.tree(dev)
        folders = ["/"] + sorted(p for p, v in t.items() if v[0] == "folder" and p != "/")
        r = self.rng.random()
        name = self.rng.choice(["a", "b", "c", "notes.txt", "Ü ber", "x.bin", "photo.jpg", "d"])
        if r < 0.25:                                    # a new file
            local, sha = self.content(dev, 0)
            dest = os.path.join(self.rng.choice(folders), name)
            if self.cmd(dev, "put", local, dest).returncode == 0: self.wrote(dev, dest, sha, i)
        elif r < 0.42:                                  # a new version of a file
            f = self.pick(t, "file")
            if f:
                local, sha = self.content(dev, 0)
                if self.cmd(dev, "put", local, f, "--replace").returncode == 0: self.wrote(dev, f, sha, i)
        elif r < 0.50:
            self.cmd(dev, "mkdir", "-p", os.path.join(self.rng.choice(folders), name))
        elif r < 0.60:                                  # rename or move
            src = self.pick(t, None)
            if src:
                dst = os.path.join(self.rng.choice(folders), self.rng.choice([name, name + "2"]))
                self.cmd(dev, "mv", src, dst)
        elif r < 0.66:                                  # remove
            src = self.pick(t, None)
            if src and self.cmd(dev, "rm", "-r", src).returncode == 0: self.removed_after.append(i)
        elif r < 0.72:                                  # a pull that may cross an edit
            f = self.pick(t, "file")
            if f: self.cmd(dev, "evict", f)
        elif r < 0.82:                                  # two devices sync at the same moment
            a, b = self.rng.sample(range(self.ndev), 2) if self.ndev > 1 else (dev, dev)
            ps = [(x, *self.popen(x, "sync", "--force")) for x in {a, b}]
            for x, p, args in ps: self.finish(x, p, args)
        elif r < 0.90:                                  # a sync killed at a random moment
            p, args = self.popen(dev, "sync", "--force")
            time.sleep(self.rng.uniform(0.0, 0.4))
            if p.poll() is None: p.send_signal(signal.SIGKILL)
            p.wait()
            self.log.write(f"{i} dev{dev} sync killed -> {p.returncode}\n")
            if p.returncode == 0: self.unsynced[dev].clear()
            if p.returncode not in (-9,): self.note(args, p.returncode, p.stdout.read() + p.stderr.read())
        else:
            self.cmd(dev, "sync", "--force")

    def wrote(self, dev, path, sha, i):
        self.log.write(f"{i} dev{dev} wrote {sha[:12]} at {path}\n")
        self.written[sha] = (i, dev)
        old = self.unsynced[dev].get(path)
        if old: self.superseded.add(old)   # replaced here before it could reach the server
        self.unsynced[dev][path] = sha

    def popen(self, dev, *args):
        env = dict(os.environ, VAULT_HOME=self.homes[dev])
        return subprocess.Popen([self.vault, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True), args

    def finish(self, dev, p, args):
        out, err = p.communicate(timeout=300)
        self.note(args, p.returncode, out + err)
        self.log.write(f"{self.stepno} dev{dev} {' '.join(args)} (beside another) -> {p.returncode}\n")
        if p.returncode == 0: self.unsynced[dev].clear()

    # -- the end -----------------------------------------------------------------------------
    def settle(self):
        last = None
        for _round in range(6):
            for d in range(self.ndev):
                self.cmd(d, "sync", "--force")
            trees = [self.tree(d) for d in range(self.ndev)]
            if all(t == trees[0] for t in trees) and trees[0] == last:
                return trees[0]
            last = trees[0]
        diff = []
        for d in range(1, self.ndev):
            a, b = trees[0], trees[d]
            for p in sorted(set(a) | set(b)):
                if a.get(p) != b.get(p): diff.append(f"{p}: dev0 {a.get(p)} dev{d} {b.get(p)}")
        self.problems.append("devices do not converge after 6 rounds of sync: " + "; ".join(diff[:8]))
        return trees[0]

    def check(self, final):
        shas = {v[2] for v in final.values() if v[0] == "file"}
        for p, v in final.items():
            if v[0] == "file" and v[2] not in self.written:
                self.problems.append(f"{p} holds content no device wrote (sha {v[2]}, size {v[1]})")
        # Every written version is a head or a revision of some file, unless something was removed later.
        revs = set()
        for p, v in final.items():
            if v[0] != "file": continue
            r = self.cmd(0, "revisions", p, "--json")
            if r.returncode == 0:
                for rev in json.loads(r.stdout).get("revisions", []):
                    if rev.get("sha256"): revs.add(rev["sha256"])
        for sha, (i, dev) in self.written.items():
            if sha in shas or sha in revs: continue
            if any(s > i for s in self.removed_after) or sha in self.superseded: continue
            self.problems.append(f"version {sha[:12]} written by dev{dev} at step {i} is gone (no head, no revision, nothing removed after it)")
        for d in range(self.ndev):
            p = self.cmd(d, "doctor", "--verify")
            if p.returncode != 0:
                self.problems.append(f"dev{d}: vault doctor --verify exited {p.returncode}: {(p.stdout + p.stderr).strip()[:300]}")

    def run(self):
        try:
            self.setup()
            for i in range(self.steps):
                self.stepno = i
                self.step(i)
            self.stepno = "end"
            self.check(self.settle())
        except Exception as e:   # a harness failure is a failing seed too, with its reason
            self.problems.append(f"harness: {e}")
        finally:
            for d in range(self.ndev):
                try: self.cmd(d, "lock")
                except Exception: pass
            if self.srv:
                self.srv.kill(); self.srv.wait()
        return self.problems

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--devices", type=int, default=3)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--keep", action="store_true", help="keep a failing seed's folders")
    a = ap.parse_args()
    bd = None
    vault = os.environ.get("VAULT_BIN") or os.path.join(bd := bd or bin_dir(), "vault")
    server = os.environ.get("VAULT_SERVER_BIN") or os.path.join(bd or bin_dir(), "vault-server")
    first = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    failing = 0
    for k in range(a.seeds):
        seed = first + k
        t0 = time.time()
        r = Run(seed, a.devices, a.steps, vault, server)
        problems = r.run()
        codes = " ".join(f"{c}×{n}" for c, n in sorted(r.codes.items()))
        if problems:
            failing += 1
            print(f"seed {seed}: FAIL ({len(problems)} problems, {time.time() - t0:.0f} s); replay: --seed {seed} --seeds 1"
                  + (f"; kept in {r.dir}" if a.keep else ""))
            for p in problems[:20]: print("   ", p)
            print("    exit codes:", codes)
            if not a.keep: r.cleanup()
        else:
            print(f"seed {seed}: ok ({len(r.written)} versions written, {time.time() - t0:.0f} s)")
            r.cleanup()
    print(f"fuzz-devices: {a.seeds} seeds from {first}, {failing} failing")
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
