#!/usr/bin/env python3
"""ask-lsp benchmarks against the official SDK and the scan limit.

A local server replays OpenCode 1.18.33's event stream as the real server
sends it: HTTP/1.1 `Transfer-Encoding: chunked` with one chunk per event, and
the real mix (97.5 % `message.part.delta` events of 251-254 bytes,
`message.part.updated` at a part's start and end, a question now and then).
ask-lsp (release build) is driven over stdio as an editor would, answering
every askQuestions/ask with "deferred" at once. Run through scripts/bench;
not part of the test suites. Environment: BENCH_RUNS (5), BENCH_EVENTS
(1,000,000), BENCH_ONLY (comma-separated parts: throughput, rates, latency,
pending, idle, footprint).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIN = os.environ.get("ASK_LSP_BIN", "target/release/ask-lsp")
SCAN = os.environ.get("SCAN_BIN", "target/release/examples/scan_limit")
READ = os.environ.get("READ_BIN", "target/release/examples/stream_read")
REPLAY = os.environ.get("REPLAY_BIN", "target/release/examples/replay_stream")
SDK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk", "consume.mjs")
# Node and Python consumers doing ask-lsp's work with ask-lsp's prefilter.
RAW_NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk", "raw.mjs")
RAW_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw_consumer.py")
EVENTS = int(os.environ.get("BENCH_EVENTS", "1000000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
ONLY = set(filter(None, os.environ.get("BENCH_ONLY", "").split(",")))
TICK = os.sysconf("SC_CLK_TCK")
# A part streams this many tokens between its two `message.part.updated`
# events: 78 / 80 = 97.5 % deltas, as 1.18.33 sends.
TOKENS_PER_PART = 78
QUESTION_EVERY = 10_000


def load():
    return os.getloadavg()[0]


def oc_id(prefix, n):
    """OpenCode's ids: a prefix and 26 characters."""
    return f"{prefix}_{n:026x}"


def delta(n):
    part = n // TOKENS_PER_PART
    token = "abcdefgh"[: 4 + n % 4]  # 251-254 bytes with the framing
    return json.dumps({
        "id": oc_id("evt", n), "type": "message.part.delta",
        "properties": {"sessionID": oc_id("ses", part % 100), "messageID": oc_id("msg", part),
                       "partID": oc_id("prt", part), "field": "text", "delta": token}},
        separators=(",", ":"))


def part_updated(n, text):
    part = n // TOKENS_PER_PART
    session = oc_id("ses", part % 100)
    return json.dumps({
        "id": oc_id("evt", n), "type": "message.part.updated",
        "properties": {"sessionID": session, "part": {
            "type": "text", "text": text, "messageID": oc_id("msg", part), "sessionID": session,
            "id": oc_id("prt", part)}, "time": 1795353889930 + n}}, separators=(",", ":"))


def question_properties(qid, session):
    return {"id": qid, "sessionID": session, "questions": [{
        "question": "Which color should the button be?", "header": "Button color",
        "options": [{"label": "Red", "description": "Warm and loud"},
                    {"label": "Blue", "description": "Calm and default"}]}],
        "tool": {"messageID": "msg_bench", "callID": f"call_{qid}"}}


def question(qid, session):
    return json.dumps({"id": f"evt_{qid}", "type": "question.asked",
                       "properties": question_properties(qid, session)}, separators=(",", ":"))


def chunk(data):
    """One SSE event as one HTTP chunk, as OpenCode writes it."""
    event = b"data: " + data.encode() + b"\n\n"
    return b"%x\r\n" % len(event) + event + b"\r\n"


def real_mix(count):
    """`count` events in the real mix, as chunks."""
    out = bytearray()
    for n in range(count):
        position = n % (TOKENS_PER_PART + 2)
        if n % QUESTION_EVERY == QUESTION_EVERY - 1:
            out += chunk(question(f"que_bench{n:09d}", oc_id("ses", n % 100)))
        elif position == 0:
            out += chunk(part_updated(n, ""))
        elif position == TOKENS_PER_PART + 1:
            out += chunk(part_updated(n, "word " * TOKENS_PER_PART))
        else:
            out += chunk(delta(n))
    return bytes(out)


def noise(count, start=0):
    return b"".join(chunk(delta(start + n)) for n in range(count))


class Replay(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.stream = b""          # sent in full to each /event subscriber
        self.listing = b"[]"       # GET /question
        self.busy = b"{}"          # GET /session/status
        self.live = None           # callable(handler) after the stream
        self.started = {}          # subscriber -> time its stream started
        self.listed = []           # times GET /question was received
        self.generation = 0        # bumped to close the open streams
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def address(self):
        return f"127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are separate writes: with Nagle's algorithm the body
    # would wait for the client's delayed ACK (40 ms), which OpenCode's
    # server does not do.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def json(self, body):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        server = self.server
        if self.path.startswith("/question"):
            server.listed.append(time.perf_counter())
            return self.json(server.listing)
        if self.path.startswith("/session/status"):
            return self.json(server.busy)
        if self.path.startswith("/permission"):
            return self.json(b"[]")
        if not self.path.startswith("/event"):
            return self.send_error(404)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            self.wfile.write(chunk('{"id":"evt_c","type":"server.connected","properties":{}}'))
            self.wfile.flush()
            server.started[threading.get_ident()] = time.perf_counter()
            view = memoryview(server.stream)
            for i in range(0, len(view), 1 << 16):
                self.wfile.write(view[i:i + (1 << 16)])
            self.wfile.flush()
            if server.live:
                server.live(self.wfile)
            last_beat = time.perf_counter()
            generation = server.generation
            while generation == server.generation:
                time.sleep(0.05)
                if time.perf_counter() - last_beat < 1:
                    continue
                last_beat = time.perf_counter()
                self.wfile.write(chunk('{"id":"evt_h","type":"server.heartbeat","properties":{}}'))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        self.json(b"true")


class Lsp:
    """ask-lsp over stdio; answers every askQuestions/ask with "deferred"."""

    def __init__(self, servers, surface="extension", env=None, pin=None):
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=pin,
                                     env={**os.environ, "ASK_LSP_LOG": "error", **(env or {})})
        self.asked = {}            # requestID -> perf_counter when read
        self.pending = 0
        self.pending_seen = {}     # pending count -> first time seen
        self.responses = {}
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()
        caps = {"experimental": {"askQuestions": {"version": 2}}}
        self.request(1, "initialize", {"capabilities": caps, "initializationOptions": {
            "servers": [{"url": url, "directory": "/bench"} for url in servers], "surface": surface}})
        self.initialized_at = self.wait_response(1)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, id, method, params):
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})

    def read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            now = time.perf_counter()
            method = message.get("method")
            if method == "askQuestions/ask":
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": "deferred"}})
                with self.lock:
                    self.asked[message["params"]["requestID"]] = now
                    self.lock.notify_all()
            elif method == "askQuestions/status":
                with self.lock:
                    self.pending = message["params"]["pending"]
                    self.pending_seen.setdefault(self.pending, now)
                    self.lock.notify_all()
            elif "id" in message and method is None:
                with self.lock:
                    self.responses[message["id"]] = now
                    self.lock.notify_all()

    def wait_response(self, id, timeout=30):
        with self.lock:
            assert self.lock.wait_for(lambda: id in self.responses, timeout), f"no response {id}"
            return self.responses[id]

    def wait_asked(self, qid, timeout=300):
        with self.lock:
            assert self.lock.wait_for(lambda: qid in self.asked, timeout), f"{qid} never asked"
            return self.asked[qid]

    def wait_pending(self, n, timeout=120):
        with self.lock:
            assert self.lock.wait_for(lambda: n in self.pending_seen, timeout), \
                f"pending {self.pending}, never {n}"
            return self.pending_seen[n]

    def cpu_s(self):
        """utime + stime of every thread, exited ones included (10 ms ticks)."""
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def rss_mib(self):
        return self.rss_parts_mib()["VmRSS"]

    def rss_parts_mib(self):
        """VmRSS and its parts: RssAnon (allocated), RssFile (the binary's and
        libraries' pages), RssShmem."""
        parts = {}
        for line in open(f"/proc/{self.proc.pid}/status"):
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                parts[name] = int(rest.split()[0]) / 1024
        return parts

    def close(self):
        self.proc.kill()
        self.proc.wait()


CORES = sorted(os.sched_getaffinity(0))


def pinned(index):
    """With two cores or more, the throughput part runs the stream's writer
    on the first and each consumer on the second: left to the scheduler
    (the same core for both, or not), a consumer's events/s moved threefold
    from run to run, the scan's and ask-lsp's alike."""
    if len(CORES) < 2:
        return None
    core = CORES[index]
    return lambda: os.sched_setaffinity(0, {core})


def run_timed(argv, pin=None):
    """Runs a consumer to its end: its JSON line, and its CPU from wait4."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, preexec_fn=pin)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0, f"{argv[0]} failed ({status}): {out}"
    proc.returncode = 0
    figures = json.loads(out.strip().splitlines()[-1])
    figures["cpu_s"] = usage.ru_utime + usage.ru_stime
    return figures


STREAM = None


def stream():
    global STREAM
    if STREAM is None:
        STREAM = real_mix(EVENTS) + chunk(question("que_sentinel", oc_id("ses", 0)))
    return STREAM


class StreamProcess:
    """The stream's writer for the throughput part: `examples/replay_stream`
    serving `stream()` from a file, a process of its own. The first writer
    was Python, this bench's own replay server: every consumer read at its
    pace, not at its own (ask-lsp's read path 5.0-5.7 M events/s from it,
    9.5-9.9 M from this one; docs/performance.md)."""

    file = None   # `stream()`, written once for every run

    def __init__(self):
        if StreamProcess.file is None:
            StreamProcess.file = tempfile.NamedTemporaryFile(prefix="ask-lsp-bench-", suffix=".stream")
            StreamProcess.file.write(stream())
            StreamProcess.file.flush()
        self.proc = subprocess.Popen([REPLAY, StreamProcess.file.name], stdout=subprocess.PIPE, text=True,
                                     preexec_fn=pinned(0))
        self.address = self.proc.stdout.readline().strip()
        self.url = f"http://{self.address}"
        self.bytes = int(self.proc.stdout.readline())
        self.started = []   # perf_counter of each stream's start
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            # The writer prints the wall clock; the bench times on perf_counter.
            started = float(line) - (time.time() - time.perf_counter())
            with self.lock:
                self.started.append(started)
                self.lock.notify_all()

    def first_start(self):
        with self.lock:
            assert self.lock.wait_for(lambda: self.started, 30), "no stream started"
            return self.started[0]

    def shutdown(self):
        self.proc.kill()
        self.proc.wait()


def throughput():
    """One stream, every consumer one after the other in the same run."""
    sentinel = "que_sentinel"
    server = StreamProcess()
    total = EVENTS + 1
    load0 = load()
    lsp = Lsp([server.url], pin=pinned(1))
    cpu0 = lsp.cpu_s()
    done = lsp.wait_asked(sentinel)
    cpu = lsp.cpu_s() - cpu0
    wall = done - server.first_start()
    lsp.close()
    sdk = run_timed(["node", SDK, server.url, sentinel], pinned(1))
    assert sdk["events"] == total + 1, sdk  # + server.connected
    node = run_timed(["node", RAW_NODE, server.url, sentinel], pinned(1))
    assert node["events"] == total + 1, node
    python = run_timed([sys.executable, RAW_PYTHON, server.address, sentinel], pinned(1))
    assert python["events"] == total + 1, python
    scan = run_timed([SCAN, server.address, sentinel], pinned(1))
    assert scan["events"] >= total, scan
    # The read path alone (decoder and prefilter, no LSP): ask-lsp's own
    # reader (http://), reqwest (https://), and hyper's connection directly.
    paths = {mode: run_timed([READ, mode, server.address, sentinel], pinned(1)) for mode in ("own", "reqwest", "hyper")}
    server.shutdown()

    def figures(wall_s, cpu_s):
        return {"events_s": total / wall_s, "cpu_per_m": cpu_s / total * 1e6}

    return {
        "load": load0,
        "mb": server.bytes / 1e6,
        "ask": figures(wall, cpu),
        "sdk": figures(sdk["wall_s"], sdk["cpu_s"]),
        "node": figures(node["wall_s"], node["cpu_s"]),
        "python": figures(python["wall_s"], python["cpu_s"]),
        "scan": figures(scan["wall_s"], scan["cpu_s"]),
        **{f"read_{mode}": {**figures(p["wall_s"], p["cpu_s"]), "rss_mib": p["rss_kib"] / 1024}
           for mode, p in paths.items()},
    }


def paced(wfile, rate, seconds):
    """`rate` deltas/s for `seconds`, written every 10 ms."""
    interval = 0.01
    blob = noise(max(1, round(rate * interval)))
    next_tick = time.perf_counter()
    for _ in range(int(seconds / interval)):
        wfile.write(blob)
        wfile.flush()
        next_tick += interval
        time.sleep(max(0, next_tick - time.perf_counter()))


def rates():
    """CPU per event at offered rates: ask-lsp and the SDK on the same stream."""
    results = {}
    for rate in (100, 1_000, 10_000, 100_000):
        seconds = 10 if rate <= 1000 else 4
        server = Replay()
        server.live = lambda w, rate=rate, seconds=seconds: (
            paced(w, rate, seconds), w.write(chunk(question("que_sentinel", oc_id("ses", 0)))),
            w.flush())
        lsp = Lsp([server.url])
        sdk = subprocess.Popen(["node", SDK, server.url, "que_sentinel"], stdout=subprocess.PIPE,
                               text=True)
        cpu0 = lsp.cpu_s()
        lsp.wait_asked("que_sentinel", timeout=seconds * 10 + 60)
        cpu = lsp.cpu_s() - cpu0
        out = sdk.stdout.read()
        sdk.wait()
        sdk_figures = json.loads(out.strip().splitlines()[-1])
        events = sdk_figures["events"]
        lsp.close()
        server.shutdown()
        results[rate] = {"events": events, "ask_cpu_per_m": cpu / events * 1e6,
                         "sdk_cpu_per_m": sdk_figures["cpu_s"] / events * 1e6}
    return results


def latency(background_rate):
    """A question every 20 ms, `background_rate` deltas/s around them
    (written every millisecond, the question right after a millisecond's
    deltas): from the server writing the question's chunk to the client
    reading the askQuestions/ask (one process, one clock)."""
    server = Replay()
    written = {}
    count = 200
    tick = 0.001
    ticks_per_question = 20
    per_tick = int(background_rate * tick)
    blob = noise(per_tick) if per_tick else b""

    def live(wfile):
        next_tick = time.perf_counter()
        for i in range(count * ticks_per_question):
            if blob:
                wfile.write(blob)
                wfile.flush()
            if i % ticks_per_question == ticks_per_question // 2:
                qid = f"que_lat{i // ticks_per_question:05d}"
                data = chunk(question(qid, oc_id("ses", i % 100)))
                written[qid] = time.perf_counter()
                wfile.write(data)
                wfile.flush()
            next_tick += tick
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)

    server.live = live
    load0 = load()
    lsp = Lsp([server.url])
    latencies = []
    for i in range(count):
        qid = f"que_lat{i:05d}"
        seen = lsp.wait_asked(qid)
        latencies.append((seen - written[qid]) * 1000)
    lsp.close()
    server.shutdown()
    latencies.sort()
    return {"load": load0, "p50": statistics.median(latencies),
            "p99": latencies[int(len(latencies) * 0.99) - 1], "max": latencies[-1]}


def pending(count=10_000, surface="none"):
    """`count` pending questions taken in from GET /question (ingest CPU and
    time, RSS), then the stream closed: the resync after the reconnect finds
    one question gone (resync time: the listing received to the status
    saying so)."""
    server = Replay()
    items = [question_properties(f"que_p{i:06d}", oc_id("ses", i % 100)) for i in range(count)]
    server.listing = json.dumps(items).encode()
    server.busy = json.dumps({oc_id("ses", i): {"type": "busy"} for i in range(100)}).encode()
    load0 = load()
    lsp = Lsp([server.url], surface=surface)
    cpu0 = lsp.cpu_s()
    seen = lsp.wait_pending(count)
    if surface == "extension":
        # Each shown in turn and deferred by the client: the presenter's share.
        with lsp.lock:
            assert lsp.lock.wait_for(lambda: len(lsp.asked) >= count, 300), \
                f"{len(lsp.asked)} of {count} shown"
            seen = max(lsp.asked.values())
    ingest_s = seen - server.listed[0]
    time.sleep(0.5)
    ingest_cpu = lsp.cpu_s() - cpu0
    rss = lsp.rss_mib()
    server.listing = json.dumps(items[1:]).encode()
    with lsp.lock:
        lsp.pending_seen.clear()
    cpu0 = lsp.cpu_s()
    listings = len(server.listed)
    server.generation += 1
    resynced = lsp.wait_pending(count - 1)
    resync_s = resynced - server.listed[listings]
    time.sleep(0.5)
    resync_cpu = lsp.cpu_s() - cpu0
    lsp.close()
    server.shutdown()
    return {"load": load0, "ingest_cpu_s": ingest_cpu, "ingest_s": ingest_s, "rss_mib": rss,
            "resync_ms": resync_s * 1000, "resync_cpu_s": resync_cpu}


def idle_servers(count=50, burst_events=40_000):
    """RSS of ask-lsp following `count` servers that each sent a burst (10 MB
    of deltas) and then went quiet, against the same servers without one."""
    out = {}
    for burst in (False, True):
        servers = [Replay() for _ in range(count)]
        for server in servers:
            server.stream = noise(burst_events) if burst else b""
        lsp = Lsp([s.url for s in servers], surface="none")
        deadline = time.time() + 120
        while len([s for s in servers if s.started]) < count and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(3)  # the bursts read, then quiet
        out["burst" if burst else "quiet"] = lsp.rss_mib()
        lsp.close()
        for server in servers:
            server.shutdown()
            server.server_close()
    out["load"] = load()
    return out


def footprint():
    server = Replay()
    lsp = Lsp([server.url], surface="none")
    colds = [(lsp.initialized_at - lsp.spawned) * 1000]
    time.sleep(1.0)
    parts = lsp.rss_parts_mib()
    lsp.close()
    for _ in range(10):
        probe = Lsp([server.url], surface="none")
        colds.append((probe.initialized_at - probe.spawned) * 1000)
        probe.close()
    server.shutdown()
    return {"idle_mib": parts["VmRSS"], "idle_anon_mib": parts["RssAnon"], "idle_file_mib": parts["RssFile"],
            "cold_ms": statistics.median(colds), "cold_ms_all": colds, "load": load()}


def spread(values, fmt):
    values = sorted(values)
    return f"{fmt(statistics.median(values))} ({fmt(values[0])}-{fmt(values[-1])})"


def wanted(part):
    return not ONLY or part in ONLY


def main():
    runs = {"throughput": [], "latency_quiet": [], "latency_loaded": [], "pending": [], "pending_shown": []}
    for run in range(RUNS):
        print(f"run {run + 1}/{RUNS} (load {load():.2f})", file=sys.stderr)
        if wanted("throughput"):
            t = throughput()
            runs["throughput"].append(t)
            print(f"  throughput: ask-lsp {t['ask']['events_s']:,.0f}/s {t['ask']['cpu_per_m']:.2f} CPU-s/M;"
                  f" sdk {t['sdk']['events_s']:,.0f}/s {t['sdk']['cpu_per_m']:.2f};"
                  f" node {t['node']['events_s']:,.0f}/s {t['node']['cpu_per_m']:.2f};"
                  f" python {t['python']['events_s']:,.0f}/s {t['python']['cpu_per_m']:.2f};"
                  f" scan {t['scan']['events_s']:,.0f}/s {t['scan']['cpu_per_m']:.3f};"
                  f" read path own {t['read_own']['cpu_per_m']:.3f} {t['read_own']['rss_mib']:.1f} MiB,"
                  f" reqwest {t['read_reqwest']['cpu_per_m']:.3f} {t['read_reqwest']['rss_mib']:.1f} MiB,"
                  f" hyper {t['read_hyper']['cpu_per_m']:.3f} {t['read_hyper']['rss_mib']:.1f} MiB (load {t['load']:.2f})",
                  file=sys.stderr)
        if wanted("latency"):
            runs["latency_quiet"].append(latency(0))
            runs["latency_loaded"].append(latency(100_000))
            print(f"  latency: quiet {runs['latency_quiet'][-1]}, 100k/s {runs['latency_loaded'][-1]}",
                  file=sys.stderr)
        if wanted("pending"):
            runs["pending"].append(pending())
            runs["pending_shown"].append(pending(surface="extension"))
            print(f"  pending: {runs['pending'][-1]}; each shown: {runs['pending_shown'][-1]}",
                  file=sys.stderr)
    extra = {}
    if wanted("rates"):
        extra["rates"] = rates()
    if wanted("idle"):
        extra["idle"] = idle_servers()
    if wanted("footprint"):
        extra["footprint"] = footprint()

    rows = []
    if runs["throughput"]:
        ts = runs["throughput"]
        rows += [
            ("load average (1 min) at each run", spread([t["load"] for t in ts], lambda v: f"{v:.2f}"), ""),
            ("events/s: ask-lsp", spread([t["ask"]["events_s"] for t in ts], lambda v: f"{v:,.0f}"), ""),
            ("events/s: @opencode-ai/sdk", spread([t["sdk"]["events_s"] for t in ts], lambda v: f"{v:,.0f}"), ""),
            ("events/s: Node consumer, ask-lsp's prefilter", spread([t["node"]["events_s"] for t in ts], lambda v: f"{v:,.0f}"), ""),
            ("events/s: Python consumer, ask-lsp's prefilter", spread([t["python"]["events_s"] for t in ts], lambda v: f"{v:,.0f}"), ""),
            ("events/s: scan limit", spread([t["scan"]["events_s"] for t in ts], lambda v: f"{v:,.0f}"), ""),
            ("CPU-s per M events: ask-lsp", spread([t["ask"]["cpu_per_m"] for t in ts], lambda v: f"{v:.2f}"), ""),
            ("CPU-s per M events: SDK", spread([t["sdk"]["cpu_per_m"] for t in ts], lambda v: f"{v:.2f}"), ""),
            ("CPU-s per M events: Node consumer, ask-lsp's prefilter", spread([t["node"]["cpu_per_m"] for t in ts], lambda v: f"{v:.2f}"), ""),
            ("CPU-s per M events: Python consumer, ask-lsp's prefilter", spread([t["python"]["cpu_per_m"] for t in ts], lambda v: f"{v:.2f}"), ""),
            ("CPU-s per M events: scan", spread([t["scan"]["cpu_per_m"] for t in ts], lambda v: f"{v:.3f}"), ""),
            ("events/s ratio to the SDK (same run)",
             spread([t["ask"]["events_s"] / t["sdk"]["events_s"] for t in ts], lambda v: f"{v:.2f}x"), "target >= 5x"),
            ("CPU per event ratio to the SDK (same run)",
             spread([t["sdk"]["cpu_per_m"] / t["ask"]["cpu_per_m"] for t in ts], lambda v: f"{v:.2f}x"), "target >= 5x"),
            ("read path alone, CPU-s per M events: own / reqwest / hyper",
             spread([t["read_own"]["cpu_per_m"] for t in ts], lambda v: f"{v:.3f}") + " / "
             + spread([t["read_reqwest"]["cpu_per_m"] for t in ts], lambda v: f"{v:.3f}") + " / "
             + spread([t["read_hyper"]["cpu_per_m"] for t in ts], lambda v: f"{v:.3f}"), ""),
            ("read path alone, RSS with the stream open: own / reqwest / hyper (64 KiB)",
             spread([t["read_own"]["rss_mib"] for t in ts], lambda v: f"{v:.1f}") + " / "
             + spread([t["read_reqwest"]["rss_mib"] for t in ts], lambda v: f"{v:.1f}") + " / "
             + spread([t["read_hyper"]["rss_mib"] for t in ts], lambda v: f"{v:.1f} MiB"), ""),
            ("share of the scan limit's events/s (same run)",
             spread([t["ask"]["events_s"] / t["scan"]["events_s"] * 100 for t in ts], lambda v: f"{v:.0f} %"), "target >= 50 %"),
        ]
    for name, label in (("latency_quiet", "quiet stream"), ("latency_loaded", "100,000 events/s around")):
        if runs[name]:
            ls = runs[name]
            rows.append((f"latency p50, {label}", spread([x["p50"] for x in ls], lambda v: f"{v:.2f} ms"), ""))
            rows.append((f"latency p99, {label}", spread([x["p99"] for x in ls], lambda v: f"{v:.2f} ms"),
                         "target < 1 ms" if name == "latency_loaded" else ""))
    if runs["pending"]:
        ps = runs["pending"]
        rows += [
            ("10,000 pending: ingest CPU", spread([p["ingest_cpu_s"] for p in ps], lambda v: f"{v:.2f} s"), "target < 0.5 s"),
            ("10,000 pending: ingest wall", spread([p["ingest_s"] for p in ps], lambda v: f"{v:.2f} s"), ""),
            ("10,000 pending: resync", spread([p["resync_ms"] for p in ps], lambda v: f"{v:.0f} ms"), "target < 50 ms"),
            ("10,000 pending: resync CPU", spread([p["resync_cpu_s"] for p in ps], lambda v: f"{v:.2f} s"), ""),
            ("10,000 pending: RSS", spread([p["rss_mib"] for p in ps], lambda v: f"{v:.1f} MiB"), "target < 40 MiB"),
        ]
        ps = runs["pending_shown"]
        rows += [
            ("10,000 pending, each shown and deferred: CPU", spread([p["ingest_cpu_s"] for p in ps], lambda v: f"{v:.2f} s"), ""),
            ("10,000 pending, each shown and deferred: wall", spread([p["ingest_s"] for p in ps], lambda v: f"{v:.2f} s"), ""),
            ("10,000 pending, shown: resync", spread([p["resync_ms"] for p in ps], lambda v: f"{v:.0f} ms"), ""),
            ("10,000 pending, shown: RSS", spread([p["rss_mib"] for p in ps], lambda v: f"{v:.1f} MiB"), ""),
        ]
    if "rates" in extra:
        for rate, r in extra["rates"].items():
            rows.append((f"CPU-s per M events at {rate:,}/s", f"ask-lsp {r['ask_cpu_per_m']:.2f}",
                         f"SDK {r['sdk_cpu_per_m']:.2f} ({r['events']:,} events)"))
    if "idle" in extra:
        i = extra["idle"]
        rows.append(("RSS, 50 servers, quiet", f"{i['quiet']:.1f} MiB", ""))
        rows.append(("RSS, 50 servers idle after a 10 MB burst each", f"{i['burst']:.1f} MiB", "target < 15 MiB"))
    if "footprint" in extra:
        f = extra["footprint"]
        rows.append(("RSS idle, one server", f"{f['idle_mib']:.1f} MiB", "target <= 9 MiB"))
        rows.append(("RSS idle, one server: RssFile / RssAnon",
                     f"{f['idle_file_mib']:.1f} / {f['idle_anon_mib']:.1f} MiB", ""))
        rows.append(("cold start to initialize response", f"{f['cold_ms']:.1f} ms", "median of 11, target < 5 ms"))
    print(f"\nask-lsp benchmark: {RUNS} runs, median (min-max); {EVENTS + 1:,} events per consumer;"
          f" {os.cpu_count()} cores\n")
    print("| measure | median (min-max) | |\n| --- | --- | --- |")
    for name, a, b in rows:
        print(f"| {name} | {a} | {b} |")
    print()
    print(json.dumps({**runs, **{k: v for k, v in extra.items()}}))


if __name__ == "__main__":
    main()
