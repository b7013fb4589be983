#!/usr/bin/env python3
"""Phases of scripts/bench-scale-out.sh that need a client of their own (issue 22).

  scale_out.py kill-upload TMP LB_PORT TOKEN SIZE_MB
      A resumable upload of SIZE_MB random MiB through the balancer; in the middle of one chunk
      (half its body sent), the instance receiving it (haproxy's `show sess`) is killed with -9
      and started again; the upload resumes from the server's status. Prints the bytes the
      server received beyond the file's size (bytesReceivedTotal - size) in chunks, and whether
      the file read back through the balancer has the SHA-256 sent.

  scale_out.py loss TMP LB_PORT TOKEN CHANGES RESTART_S
      CHANGES folder creations through the balancer by 4 writers while an instance is killed
      (-9) and started again every RESTART_S seconds (in turn); meanwhile one client keeps an
      event stream open through the balancer (reconnecting with Last-Event-ID) and reads the
      change feed up to each event's cursor. Prints the changes lost (a creation the server
      confirmed that the client never read) and repeated (a cursor read twice).

Instances are the bench's `vault1..3`: TMP/vaultN.pid names each one's process, whose command
line starts it again on the same port; a restart rewrites the pid file.
"""
import hashlib
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid

INSTANCES = ["vault1", "vault2", "vault3"]


# MARK: instances


def instance_pid(tmp, name):
    with open(f"{tmp}/{name}.pid") as f:
        return int(f.read().strip())


def restart(tmp, name):
    """kill -9 of instance `name`, then the same command line again; waits for `listening`."""
    pid = instance_pid(tmp, name)
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = [a.decode() for a in f.read().split(b"\0") if a]
    os.kill(pid, 9)
    for _ in range(500):   # gone, or a zombie of the bench's shell
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"):
                    break
        except FileNotFoundError:
            break
        time.sleep(0.01)
    out = f"{tmp}/{name}.out"
    with open(out, "wb") as o, open(f"{tmp}/{name}.err", "ab") as e:
        p = subprocess.Popen(argv, stdout=o, stderr=e, stdin=subprocess.DEVNULL, start_new_session=True)
    for _ in range(600):
        with open(out, "rb") as f:
            if b"listening" in f.read():
                break
        if p.poll() is not None:
            raise SystemExit(f"{name} did not start again: see {tmp}/{name}.err")
        time.sleep(0.05)
    with open(f"{tmp}/{name}.pid", "w") as f:
        f.write(str(p.pid))


def serving_instance(tmp):
    """The instance haproxy sends the one open client request to (`show sess` on its socket)."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(f"{tmp}/haproxy.sock")
    s.sendall(b"show sess\n")
    text = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        text += b
    s.close()
    names = {w[4:] for line in text.decode().splitlines() for w in line.split() if w.startswith("srv=vault")}
    return sorted(names)


# MARK: HTTP through the balancer


class API:
    def __init__(self, port, token):
        self.port, self.token, self.conn = port, token, None

    def request(self, method, path, body=None, headers=None, timeout=30):
        """One request on a kept-alive connection (a new one after any failure): (status, bytes)."""
        h = {"Authorization": "Bearer " + self.token}
        h.update(headers or {})
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            self.conn.request(method, path, body, h)
            r = self.conn.getresponse()
            data = r.read()
            if r.getheader("Connection", "").lower() == "close":
                self.conn.close(); self.conn = None
            return r.status, data
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return 0, b""

    def json(self, method, path, obj=None, retry=True):
        """A JSON request, retried (0.2 s apart, 2 minutes at most) while the answer is 0 or 5xx."""
        body = None if obj is None else json.dumps(obj)
        for _ in range(600):
            status, data = self.request(method, path, body, {"Content-Type": "application/json"} if body else None)
            if status and status < 500 or not retry:
                return status, (json.loads(data) if data[:1] in (b"{", b"[") else {})
            time.sleep(0.2)
        raise SystemExit(f"{method} {path}: no answer for 2 minutes")


# MARK: kill -9 mid-upload


def kill_upload(tmp, lb_port, token, size_mb):
    size = size_mb << 20
    path = f"{tmp}/kill-payload"
    digest = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(size_mb):
            block = os.urandom(1 << 20)
            digest.update(block)
            f.write(block)
    sha = digest.hexdigest()
    api = API(lb_port, token)
    status, s = api.json("POST", "/v1/upload?uploadType=resumable", {
        "name": "kill-%s.bin" % uuid.uuid4().hex[:8], "parentId": "root", "size": size, "sha256": sha,
        "requestId": str(uuid.uuid4()), "mimeType": "application/octet-stream"})
    if status != 201:
        raise SystemExit(f"session: {status} {s}")
    uid, chunk, total = s["uploadId"], s["chunkSize"], s["totalChunks"]
    kill_at = total // 2
    killed = None
    payload = open(path, "rb")
    file_id = None

    def missing():
        """What the server lacks: (start, end) per chunk, from its received ranges."""
        st, body = api.json("GET", f"/v1/upload/{uid}")
        ranges = [(r["start"], r["end"] + 1) for r in body.get("receivedRanges", [])]
        todo = []
        for i in range(total):
            cs, ce = i * chunk, min(size, (i + 1) * chunk)
            have = cs
            for a, b in ranges:
                if a <= have < b:
                    have = min(ce, b)
            if have < ce:
                todo.append((have, ce))
        return todo, body

    todo = [(i * chunk, min(size, (i + 1) * chunk)) for i in range(total)]
    while todo:
        for start, end in todo:
            payload.seek(start)
            data = payload.read(end - start)
            hdr = {"Content-Range": f"bytes {start}-{end - 1}/{size}", "Content-Type": "application/octet-stream"}
            if killed is None and start // chunk == kill_at:
                # Half the chunk's body, then the kill of the instance holding the request.
                sock = socket.create_connection(("127.0.0.1", lb_port))
                head = (f"PUT /v1/upload/{uid}/chunk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                        f"Content-Range: bytes {start}-{end - 1}/{size}\r\nContent-Length: {len(data)}\r\n\r\n")
                sock.sendall(head.encode() + data[:len(data) // 2])
                time.sleep(0.5)
                holders = serving_instance(tmp)
                if len(holders) != 1:
                    raise SystemExit(f"expected one instance to hold the chunk, haproxy says {holders}")
                killed = holders[0]
                restart(tmp, killed)
                try:
                    sock.sendall(data[len(data) // 2:])
                    sock.settimeout(10)
                    sock.recv(4096)
                except OSError:
                    pass
                sock.close()
                break   # resume from the server's status
            st, body = api.request("PUT", f"/v1/upload/{uid}/chunk", data, hdr, timeout=120)
            if st in (200, 201):
                file_id = json.loads(body)["id"]
            elif st != 308:
                break   # resume from the server's status
        todo, body = missing()
        if body.get("state") == "complete":
            file_id = body["file"]["id"]
            todo = []
    st, body = api.json("GET", f"/v1/upload/{uid}")
    resent = body["bytesReceivedTotal"] - size
    # Read it back through the balancer.
    back = hashlib.sha256()
    c = http.client.HTTPConnection("127.0.0.1", lb_port, timeout=120)
    c.request("GET", f"/v1/files/{file_id}/content", headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    while True:
        b = r.read(1 << 20)
        if not b:
            break
        back.update(b)
    print(f"kill -9 of {killed} while it received chunk {kill_at} of {total} ({chunk / 1048576:.0f} MiB chunks) of a "
          f"{size_mb} MiB upload through the balancer: re-sent {resent / 1048576:.1f} MiB = {resent / chunk:.2f} chunk "
          f"(target <= 1); SHA-256 read back {'matches' if back.hexdigest() == sha else 'DIFFERS'}")
    os.remove(path)


# MARK: changes lost or repeated across instance restarts


def loss(tmp, lb_port, token, changes, restart_s):
    api = API(lb_port, token)
    st, start = api.json("GET", "/v1/changes/start")
    cursor0 = start["cursor"]
    done = threading.Event()
    lock = threading.Lock()
    confirmed, seen_names, cursor_counts = set(), set(), {}
    state = {"event": cursor0, "pulled": cursor0, "reconnects": -1, "restarts": 0, "events": 0}

    def stream():
        last = cursor0
        while not done.is_set():
            state["reconnects"] += 1   # from -1: the first connection is not a reconnection
            try:
                s = socket.create_connection(("127.0.0.1", lb_port), timeout=5)
                s.sendall((f"GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                           f"Last-Event-ID: {last}\r\n\r\n").encode())
                buf = b""
                while not done.is_set():
                    try:
                        b = s.recv(65536)
                    except socket.timeout:
                        continue
                    if not b:
                        break
                    buf += b
                    while b"\n\n" in buf:
                        event, buf = buf.split(b"\n\n", 1)
                        for line in event.split(b"\n"):
                            if line.startswith(b"id: "):
                                last = int(line[4:])
                                with lock:
                                    state["event"] = max(state["event"], last)
                                    state["events"] += 1
                s.close()
            except OSError:
                pass
            time.sleep(0.1)

    def pull():
        reader = API(lb_port, token)
        while True:
            with lock:
                target, at = state["event"], state["pulled"]
            if at >= target:
                if done.is_set():
                    return
                time.sleep(0.02)
                continue
            st, page = reader.json("GET", f"/v1/changes?cursor={at}&limit=10000")
            if st != 200:
                raise SystemExit(f"changes: {st} {page}")
            with lock:
                for c in page["changes"]:
                    cursor_counts[c["cursor"]] = cursor_counts.get(c["cursor"], 0) + 1
                    if c["kind"] == "created":
                        seen_names.add((c.get("file") or {}).get("name"))
                state["pulled"] = page["nextCursor"]

    def write(w, n):
        me = API(lb_port, token)
        for i in range(n):
            name = f"loss-{w}-{i}"
            status, _ = me.json("POST", "/v1/files", {"name": name, "parentId": "root", "type": "folder"})
            if status in (200, 201, 409):   # 409: an earlier try whose answer was lost made it
                with lock:
                    confirmed.add(name)
            else:
                raise SystemExit(f"create {name}: {status}")

    def restarter():
        k = 0
        while not done.is_set():
            time.sleep(restart_s)
            if writers_done.is_set():
                return
            restart(tmp, INSTANCES[k % len(INSTANCES)])
            state["restarts"] += 1
            k += 1

    writers_done = threading.Event()
    threads = [threading.Thread(target=stream, daemon=True), threading.Thread(target=pull, daemon=True),
               threading.Thread(target=restarter, daemon=True)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    writers = [threading.Thread(target=write, args=(w, changes // 4 + (1 if w < changes % 4 else 0))) for w in range(4)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    writers_done.set()
    elapsed = time.monotonic() - t0
    st, end = api.json("GET", "/v1/changes/start")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with lock:
            if state["pulled"] >= end["cursor"]:
                break
        time.sleep(0.1)
    done.set()
    threads[1].join(timeout=30)
    with lock:
        lost = len(confirmed - seen_names)
        repeated = sum(n - 1 for n in cursor_counts.values() if n > 1)
        reached = state["pulled"] >= end["cursor"]
        print(f"{len(confirmed)} changes through the balancer in {elapsed:.0f} s ({len(confirmed) / elapsed:.0f}/s) across "
              f"{state['restarts']} instance restarts (kill -9): {lost} lost, {repeated} repeated (target 0 and 0); "
              f"the stream reconnected {state['reconnects']} times, {state['events']} events"
              + ("" if reached else f"; the client did NOT reach the last cursor {end['cursor']} (at {state['pulled']})"))


if __name__ == "__main__":
    cmd, tmp, port, token = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if cmd == "kill-upload":
        kill_upload(tmp, port, token, int(sys.argv[5]))
    elif cmd == "loss":
        loss(tmp, port, token, int(sys.argv[5]), float(sys.argv[6]))
    else:
        raise SystemExit(__doc__)
