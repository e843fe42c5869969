#!/usr/bin/env python3
# Standalone reproducer of harp finding {{.Finding.ID}}: {{.Finding.Signature}}
#   {{oneline .Finding.Example}}
# Made by harp from the evidence of {{oneline .From}}.
#
# usage: ./reproduce /path/to/haproxy
#   REPRODUCED and exit 1: the finding shows; PASS and exit 0: it does not;
#   INCONCLUSIVE and exit 2: a precondition was not met, or the script itself
#   failed (not an haproxy, no temporary directory, an error of its own):
#   it says which; exit 3: usage. Exit 1 means the finding showed, nothing else.
# Needs Python 3's standard library only, and of it only what Debian's
# python3-minimal holds (no shutil, no tempfile); no harp, Go or Docker.
# It runs haproxy in master-worker mode (-W) in a temporary directory and
# kills every haproxy it started when it exits.
#
# The script plays the remote peer `{{.Remote}}` of peers section `{{.Section}}`
# itself, speaking the peers protocol (doc/peers-v2.0.txt): the text
# handshake, then binary messages. It sends a timed update whose expiry is
# 2^31-1 ms for a key of table `{{.Table}}` (expire {{.ExpireMS}} ms): the entry HAProxy
# stores must expire within the receiving table's own expire.
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import time

SECTION, LOCAL, REMOTE, TABLE = {{pyq .Section}}, {{pyq .Local}}, {{pyq .Remote}}, {{pyq .Table}}
EXPIRE_MS = {{.ExpireMS}}         # the receiving table's expire
HUGE = 2**31 - 1              # the expiry the crafted update carries, ms
PEER_PORT = {{pyq .PeerPort}}        # the recorded port of the local peer
PORTS = {{.PyPorts}}
BOUND = 5                     # s: for HAProxy to apply an update (observed: under 100 ms)


class Verdict(Exception):
    def __init__(self, code, text):
        super().__init__(text)
        self.code, self.text = code, text


def inconclusive(text):
    raise Verdict(2, "INCONCLUSIVE: " + text)


class Failure(Exception):
    """The script could not do its part (a bad binary, no temporary
    directory): INCONCLUSIVE, said on stderr."""


def bug(e):
    """An unexpected exception, with the line that raised it (for whoever
    fixes the script; python3-minimal may lack traceback)."""
    tb, where = e.__traceback__, ""
    while tb is not None:
        where = " (line %d, in %s)" % (tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return "%s: %s%s" % (type(e).__name__, e, where)


def failed(text):
    """Says on stderr what failed, with an INCONCLUSIVE line: a failure of
    the script's own must never read as a verdict on HAProxy."""
    print("INCONCLUSIVE: the reproducer could not run: " + text, file=sys.stderr, flush=True)
    return 2


def note(text):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), text), flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ask(path, command, timeout=5.0):
    """One command on a UNIX CLI socket; the answer (None: no answer)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(command.encode() + b"\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return data.decode(errors="replace")
                data += chunk
    except OSError:
        return None


def poll(what, seconds, step=0.1):
    """Calls what() until it returns something truthy or seconds pass."""
    end = time.monotonic() + seconds
    while True:
        got = what()
        if got or time.monotonic() >= end:
            return got
        time.sleep(step)


# ---- the peers protocol ----

def varint(v):
    """HAProxy's variable-length integer: below 240 one byte; above, 4 bits
    in the first byte (ORed with 0xf0), then 7 bits a byte, bit 7 on all but
    the last."""
    if v < 240:
        return bytes([v])
    out = [(v | 0xF0) & 0xFF]
    v = (v - 240) >> 4
    while v >= 128:
        out.append((v | 0x80) & 0xFF)
        v = (v - 128) >> 7
    out.append(v)
    return bytes(out)


def read_varint(b, i):
    v = b[i]
    i += 1
    if v < 240:
        return v, i
    shift = 4
    while True:
        c = b[i]
        i += 1
        v += c << shift
        shift += 7
        if c < 128:
            return v, i


def message(cls, typ, body=b""):
    if typ >= 128:
        return bytes([cls, typ]) + varint(len(body)) + body
    return bytes([cls, typ])


class Peer:
    """A peers session as the remote peer, answering as a quiet, up-to-date
    peer does: resync requests with resync-finished, resync-finished with a
    confirm, updates with acks, and a heartbeat every 1.5 s."""

    def __init__(self, addr):
        self.s = socket.create_connection(addr, timeout=5)
        self.s.sendall(("HAProxyS 2.1\n%s\n%s %d 1\n" % (LOCAL, REMOTE, os.getpid())).encode())
        line = b""
        while not line.endswith(b"\n"):
            c = self.s.recv(1)
            if not c:
                break
            line += c
        self.status = line.strip().decode(errors="replace")
        self.buf = b""
        self.tables = {}   # HAProxy's table id -> its definition
        self.current = None
        self.last_id = {}
        self.beat = time.monotonic()
        self.closed = False

    def send(self, data):
        self.s.sendall(data)

    def pump(self, seconds):
        """Reads for up to seconds; yields each message (class, type, body)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.closed:
            if time.monotonic() - self.beat >= 1.5:
                self.send(message(0, 4))
                self.beat = time.monotonic()
            r, _, _ = select.select([self.s], [], [], 0.1)
            if r:
                chunk = self.s.recv(65536)
                if not chunk:
                    self.closed = True
                    return
                self.buf += chunk
            while True:
                m = self.next()
                if m is None:
                    break
                self.answer(m)
                yield m

    def next(self):
        b = self.buf
        if len(b) < 2:
            return None
        cls, typ = b[0], b[1]
        if typ < 128:
            self.buf = b[2:]
            return cls, typ, b""
        try:
            n, i = read_varint(b, 2)
        except IndexError:
            return None
        if len(b) < i + n:
            return None
        self.buf = b[i + n:]
        return cls, typ, b[i:i + n]

    def answer(self, m):
        cls, typ, body = m
        if cls == 0 and typ == 0:
            self.send(message(0, 1))
        elif cls == 0 and typ in (1, 2):
            self.send(message(0, 3))
        elif cls == 10 and typ == 0x82:
            d = definition(body)
            self.tables[d["id"]] = d
            self.current = d
        elif cls == 10 and typ == 0x83:
            tid, _ = read_varint(body, 0)
            self.current = self.tables.get(tid)
        elif cls == 10 and 0x80 <= typ <= 0x86 and typ not in (0x82, 0x83, 0x84) and self.current:
            tid = self.current["id"]
            uid = self.last_id.get(tid, 0) + 1
            if typ in (0x80, 0x85):
                uid = struct.unpack(">I", body[:4])[0]
            self.last_id[tid] = uid
            self.send(message(10, 0x84, varint(tid) + struct.pack(">I", uid)))


def definition(body):
    """A table definition: id, name, key type and length, stored data types
    (a bit mask), expire, then the parameters of some types (kept raw)."""
    d = {}
    d["id"], i = read_varint(body, 0)
    n, i = read_varint(body, i)
    d["name"] = body[i:i + n]
    i += n
    d["key_type"], i = read_varint(body, i)
    d["key_len"], i = read_varint(body, i)
    d["types"], i = read_varint(body, i)
    d["expire"], i = read_varint(body, i)
    d["params"] = body[i:]
    return d


def encode_definition(d, table_id):
    return message(10, 0x82, varint(table_id) + varint(len(d["name"])) + d["name"] + varint(d["key_type"]) +
                   varint(d["key_len"]) + varint(d["types"]) + varint(d["expire"]) + d["params"])


GPC0 = 2     # the data type id of gpc0
STRING = 6   # the string key type


def timed_update(key, gpc0, expire_ms):
    """A timed update with its id: update id, expiry (ms), the key (a
    length and its bytes, for a string key), then gpc0's value."""
    return message(10, 0x85, struct.pack(">II", 1, expire_ms) + varint(len(key)) + key + varint(gpc0))


# ---- the reproducer ----

def show_peers_section(admin):
    out = ask(admin, "show peers " + SECTION)
    if out is None or ("id=" + SECTION) not in out:
        return None
    return out


def resync_finished(admin):
    out = show_peers_section(admin)
    if out is None:
        return False
    m = re.search(r"id=%s\b.*?flags=(0x[0-9a-fA-F]+)" % re.escape(SECTION), out)
    return bool(m) and int(m.group(1), 16) & 3 == 3


def remote_established(admin):
    out = show_peers_section(admin)
    if out is None:
        return False
    m = re.search(r"^\s*0x[0-9a-f]+: id=%s\b(.*?)(?=^\s*0x[0-9a-f]+: id=|\Z)" % re.escape(REMOTE), out, re.S | re.M)
    return bool(m) and "last_status=ESTA" in m.group(1) and "appctx:0x" in m.group(1)


def entry(admin, key):
    out = ask(admin, "show table %s/%s key %s" % (SECTION, TABLE, key))
    if out is None or "# table:" not in out:
        return None
    m = re.search(r"key=%s\s.*?exp=(\d+).*?gpc0=(\d+)" % re.escape(key), out)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2))


def run(haproxy, tmp, procs):
    env = dict(os.environ, REPRO_DIR=tmp)
    cfg = os.path.join(tmp, "haproxy.cfg")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "haproxy.cfg"), "rb") as src, open(cfg, "wb") as dst:
        dst.write(src.read())
    admin = os.path.join(tmp, "admin.sock")
    log = os.path.join(tmp, "haproxy.log")
    for attempt in range(5):
        for p in PORTS:
            env["PORT_" + p] = str(free_port())
        chk = subprocess.run([haproxy, "-c", "-f", cfg], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if chk.returncode != 0:
            said = chk.stdout.decode(errors="replace").strip().splitlines()
            inconclusive("haproxy -c refuses the config (exit %d): %s" % (chk.returncode, said[-1] if said else "it said nothing"))
        with open(log, "wb") as lf:
            master = subprocess.Popen([haproxy, "-W", "-db", "-f", cfg, "-S", os.path.join(tmp, "master.sock")],
                                      env=env, stdout=lf, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(master)
        if poll(lambda: master.poll() is not None or ask(admin, "show info") is not None, 20):
            if master.poll() is None:
                break
        text = open(log, errors="replace").read()
        if master.poll() is not None and re.search(r"cannot bind|Address already in use", text, re.I):
            note("a port was taken (try %d): trying others" % (attempt + 1))
            continue
        inconclusive("haproxy did not start (its stats socket never answered): " + " | ".join(text.strip().splitlines()[-5:]))
    else:
        inconclusive("haproxy could not bind its ports in 5 tries")
    note("haproxy started: master %d" % master.pid)
    if not poll(lambda: resync_finished(admin), 25):
        inconclusive("the initial resync of section %s never finished (show peers flags 0x1|0x2): HAProxy may ask the script's peer to teach it" % SECTION)

    addr = ("127.0.0.1", int(env["PORT_" + PEER_PORT]))
    peer = None

    def dial():
        nonlocal peer
        try:
            p = Peer(addr)
        except OSError:
            return False
        if p.status == "200":
            peer = p
            return True
        p.s.close()
        return False
    if not poll(dial, 10, 0.2):
        inconclusive("HAProxy never accepted the script's peers handshake as %s (status 200) within 10 s" % REMOTE)
    note("handshake as peer %s: status 200" % REMOTE)
    if not poll(lambda: remote_established(admin), 5, 0.05):
        inconclusive("show peers never showed the script's session established")

    # HAProxy's own definition of the table, as it sends it (its name, key
    # type and data types on the wire differ between versions): an entry
    # written on the CLI is pushed to the script's peer.
    if ask(admin, "set table %s/%s key harp-def data.gpc0 1" % (SECTION, TABLE)) not in ("", "\n"):
        inconclusive("set table on the admin socket was refused")
    d = None
    for cls, typ, body in peer.pump(BOUND):
        if cls == 10 and 0x80 <= typ <= 0x86 and typ not in (0x82, 0x83, 0x84) and peer.current:
            d = peer.current
            break
    if d is None:
        inconclusive("HAProxy never sent the script's peer an update of %s/%s within %d s: its table definition is unknown" % (SECTION, TABLE, BOUND))
    note("HAProxy defines the table on the wire as name %r, key type %d, key length %d, data types 0x%x, expire %d ms" %
         (d["name"].decode(errors="replace"), d["key_type"], d["key_len"], d["types"], d["expire"]))
    if d["key_type"] != STRING or d["types"] != 1 << GPC0:
        inconclusive("the table is not defined as a string key storing gpc0 alone: the crafted update would not fit it")

    key = "ce-repro"
    peer.send(encode_definition(d, 1) + timed_update(key.encode(), 4, HUGE))
    note("sent a timed update of %s (gpc0=4) with expire %d ms" % (key, HUGE))
    got = None
    end = time.monotonic() + BOUND
    while got is None and time.monotonic() < end:
        for _ in peer.pump(0.1):
            pass
        got = entry(admin, key)
    if got is None:
        inconclusive("the crafted timed update (%s, expire %d ms) was never applied within %d s: its expiry cannot be judged" % (key, HUGE, BOUND))
    exp, gpc0 = got
    note("show table: %s exp=%d gpc0=%d" % (key, exp, gpc0))
    if exp > EXPIRE_MS:
        raise Verdict(1, "REPRODUCED: a timed update with expire %d ms made %s expire in %d ms, beyond the table's %d ms" % (HUGE, key, exp, EXPIRE_MS))
    raise Verdict(0, "PASS: a timed update with expire %d ms made %s expire in %d ms, within the table's %d ms" % (HUGE, key, exp, EXPIRE_MS))


def stop(procs, tmp):
    """Every haproxy started: the master's process group (its workers with
    it), TERM first, KILL after 5 s."""
    for p in procs:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except OSError:
                pass
            try:
                p.wait(5)
                break
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(p.pid, signal.SIGKILL)  # workers left in the group
        except OSError:
            pass
    if tmp:
        remove(tmp)


def remove(top):
    """rm -rf (python3-minimal has no shutil)."""
    for d, dirs, files in os.walk(top, topdown=False):
        for name in files + dirs:
            p = os.path.join(d, name)
            try:
                os.rmdir(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
            except OSError:
                pass
    try:
        os.rmdir(top)
    except OSError:
        pass


def mkdtemp():
    """A new private directory (python3-minimal's tempfile needs shutil)."""
    base = os.environ.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(base, "harp-repro.%d.%s" % (os.getpid(), os.urandom(4).hex()))
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
        except OSError as e:
            raise Failure("cannot make a temporary directory in %s (TMPDIR): %s" % (base, e.strerror or e))


def interrupted(*_):
    raise Verdict(2, "INCONCLUSIVE: interrupted")


def which(name):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


def main():
    if len(sys.argv) < 2:
        print("usage: %s /path/to/haproxy" % sys.argv[0], file=sys.stderr)
        return 3
    haproxy = sys.argv[1]
    if os.sep not in haproxy:
        haproxy = which(haproxy) or haproxy
    tmp = None
    procs = []
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    try:
        if not os.access(haproxy, os.X_OK):
            raise Failure(haproxy + " is not an executable file")
        v = subprocess.run([haproxy, "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        said = v.stdout.decode(errors="replace").strip().splitlines()
        # haproxy -v: "HAProxy version 2.6.12-1 ..." ("HA-Proxy" before 2.0).
        if not said or not re.match(r"HA-?Proxy version ", said[0]):
            raise Failure("%s is not haproxy: its -v exited %d and printed %s" % (haproxy, v.returncode, repr(said[0]) if said else "nothing"))
        note(said[0])
        tmp = mkdtemp()
        run(haproxy, tmp, procs)
    except Verdict as v:
        print(v.text, flush=True)
        return v.code
    except KeyboardInterrupt:
        print("INCONCLUSIVE: interrupted", flush=True)
        return 2
    except Failure as e:
        return failed(str(e))
    except OSError as e:
        print("INCONCLUSIVE: %s" % e, flush=True)
        return 2
    except Exception as e:
        return failed(bug(e))
    finally:
        stop(procs, tmp)
    print("INCONCLUSIVE: the script ended without a verdict", flush=True)
    return 2


if __name__ == "__main__":
    # Whatever escapes main (an error while cleaning up, a signal then) is
    # the script's failure: never exit 1, which says the finding showed.
    try:
        code = main()
    except SystemExit:
        raise
    except Verdict as v:  # a signal while cleaning up
        print(v.text, flush=True)
        code = v.code
    except BaseException as e:
        code = failed(bug(e))
    sys.exit(code)
