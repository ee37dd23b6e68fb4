#!/usr/bin/env python3
"""ask-lsp benchmarks: throughput against the official SDK, latency, footprint.

A local SSE server replays OpenCode event shapes (from the 1.18.33 captures);
ask-lsp (release build) is driven over stdio as an editor would, answering
every askQuestions/ask with "deferred" at once. Prints a table; run through
scripts/bench. Not part of the test suites.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BIN = os.environ.get("ASK_LSP_BIN", "target/release/ask-lsp")
SDK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdk", "consume.mjs")
EVENTS = int(os.environ.get("BENCH_EVENTS", "1000000"))
TICK = os.sysconf("SC_CLK_TCK")


def delta(n):
    session = f"ses_bench{n % 100:03d}"
    return json.dumps({
        "id": f"evt_{n:012d}", "type": "message.part.delta",
        "properties": {"sessionID": session, "messageID": f"msg_{n // 50:010d}",
                       "partID": f"prt_{n // 50:010d}", "field": "text",
                       "delta": "the quick brown fox jumps over the lazy dog "[: 8 + n % 30]}})


def part_updated(n):
    session = f"ses_bench{n % 100:03d}"
    return json.dumps({
        "id": f"evt_{n:012d}", "type": "message.part.updated",
        "properties": {"sessionID": session, "part": {
            "type": "text", "text": "Streaming answer text so far, growing token by token. " * (1 + n % 4),
            "messageID": f"msg_{n // 50:010d}", "sessionID": session, "id": f"prt_{n // 50:010d}"},
            "time": 1795353889930 + n}})


def question(qid, session):
    return json.dumps({
        "id": f"evt_{qid}", "type": "question.asked",
        "properties": {"id": qid, "sessionID": session, "questions": [{
            "question": "Which color should the button be?", "header": "Button color",
            "options": [{"label": "Red", "description": "Warm and loud"},
                        {"label": "Blue", "description": "Calm and default"}]}],
            "tool": {"messageID": "msg_bench", "callID": f"call_{qid}"}}})


def frame(data):
    return b"data: " + data.encode() + b"\n\n"


def mixed_stream(count, sentinel):
    """99.9% deltas and text part updates, 0.1% questions, then the sentinel."""
    out = bytearray()
    for n in range(count):
        if n % 1000 == 999:
            out += frame(question(f"que_bench{n:09d}", f"ses_bench{n % 100:03d}"))
        elif n % 5 == 0:
            out += frame(part_updated(n))
        else:
            out += frame(delta(n))
    out += frame(question(sentinel, "ses_bench000"))
    return bytes(out)


class Replay(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.stream = b""          # sent in full to each /event subscriber
        self.listing = b"[]"       # GET /question
        self.live = None           # callable(wfile) for the latency run
        self.started = {}          # subscriber start times
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        if self.path.startswith("/question"):
            body = server.listing
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if not self.path.startswith("/event"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            self.wfile.write(frame('{"id":"evt_c","type":"server.connected","properties":{}}'))
            self.wfile.flush()
            server.started[threading.get_ident()] = time.perf_counter()
            view = memoryview(server.stream)
            for i in range(0, len(view), 1 << 16):
                self.wfile.write(view[i:i + (1 << 16)])
            if server.live:
                server.live(self.wfile)
            while True:
                time.sleep(1)
                self.wfile.write(frame('{"id":"evt_h","type":"server.heartbeat","properties":{}}'))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "4")
        self.end_headers()
        self.wfile.write(b"true")


class Lsp:
    """ask-lsp over stdio; answers every askQuestions/ask with "deferred"."""

    def __init__(self, url, surface="extension"):
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([BIN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env={**os.environ, "ASK_LSP_LOG": "error"})
        self.asked = {}            # requestID -> perf_counter when read
        self.pending = 0
        self.responses = {}
        self.lock = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()
        caps = {"experimental": {"askQuestions": {"version": 1}}}
        self.request(1, "initialize", {"capabilities": caps, "initializationOptions": {
            "servers": [{"url": url, "directory": "/bench"}], "surface": surface}})
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
                    self.lock.notify_all()
            elif "id" in message and method is None:
                with self.lock:
                    self.responses[message["id"]] = now
                    self.lock.notify_all()

    def wait_response(self, id, timeout=30):
        with self.lock:
            assert self.lock.wait_for(lambda: id in self.responses, timeout), f"no response {id}"
            return self.responses[id]

    def wait_asked(self, qid, timeout=120):
        with self.lock:
            assert self.lock.wait_for(lambda: qid in self.asked, timeout), f"{qid} never asked"
            return self.asked[qid]

    def wait_pending(self, n, timeout=60):
        with self.lock:
            assert self.lock.wait_for(lambda: self.pending >= n, timeout), f"pending {self.pending} < {n}"

    def cpu_s(self):
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def rss_mib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    def close(self):
        self.proc.kill()
        self.proc.wait()


def throughput():
    sentinel = "que_sentinel"
    server = Replay()
    server.stream = mixed_stream(EVENTS, sentinel)
    total = EVENTS + 1
    lsp = Lsp(server.url)
    cpu0 = lsp.cpu_s()
    done = lsp.wait_asked(sentinel)
    cpu = lsp.cpu_s() - cpu0
    wall = done - min(server.started.values())
    lsp.close()
    sdk_out = subprocess.run(["node", SDK, server.url, sentinel], capture_output=True, text=True, timeout=600)
    sdk = json.loads(sdk_out.stdout.strip().splitlines()[-1])
    assert sdk["events"] == total + 1, sdk  # + server.connected
    server.shutdown()
    return {
        "mb": len(server.stream) / 1e6,
        "ask": {"events_s": total / wall, "cpu_per_m": cpu / total * 1e6, "wall_s": wall},
        "sdk": {"events_s": total / sdk["wall_s"], "cpu_per_m": sdk["cpu_s"] / total * 1e6, "wall_s": sdk["wall_s"]},
    }


def latency(background_rate):
    """Questions every 20 ms; `background_rate` deltas/s around them."""
    server = Replay()
    written = {}
    count = 200

    def live(wfile):
        interval = 0.02
        per_tick = int(background_rate * interval)
        noise = b"".join(frame(delta(n)) for n in range(per_tick)) if per_tick else b""
        next_tick = time.perf_counter()
        for i in range(count):
            qid = f"que_lat{i:05d}"
            if noise:
                wfile.write(noise)
            data = frame(question(qid, f"ses_bench{i % 100:03d}"))
            written[qid] = time.perf_counter()
            wfile.write(data)
            wfile.flush()
            next_tick += interval
            time.sleep(max(0, next_tick - time.perf_counter()))

    server.live = live
    lsp = Lsp(server.url)
    latencies = []
    for i in range(count):
        qid = f"que_lat{i:05d}"
        seen = lsp.wait_asked(qid)
        latencies.append((seen - written[qid]) * 1000)
    lsp.close()
    server.shutdown()
    latencies.sort()
    return {"p50": statistics.median(latencies), "p99": latencies[int(len(latencies) * 0.99) - 1],
            "max": latencies[-1]}


def footprint():
    server = Replay()
    lsp = Lsp(server.url, surface="none")
    cold = (lsp.initialized_at - lsp.spawned) * 1000
    time.sleep(1.0)
    idle = lsp.rss_mib()
    lsp.close()
    listing = [json.loads(question(f"que_fp{i:05d}", f"ses_fp{i % 100:03d}"))["properties"] for i in range(1000)]
    server.listing = json.dumps(listing).encode()
    lsp = Lsp(server.url, surface="none")
    lsp.wait_pending(1000)
    time.sleep(0.5)
    loaded = lsp.rss_mib()
    lsp.close()
    colds = []
    for _ in range(10):
        probe = Lsp(server.url, surface="none")
        colds.append((probe.initialized_at - probe.spawned) * 1000)
        probe.close()
    server.shutdown()
    return {"idle_mib": idle, "loaded_mib": loaded, "cold_ms": statistics.median(colds + [cold])}


def main():
    t = throughput()
    quiet = latency(0)
    loaded = latency(50_000)
    f = footprint()
    ratio = t["ask"]["events_s"] / t["sdk"]["events_s"]
    rows = [
        ("throughput, ask-lsp", f"{t['ask']['events_s']:,.0f} events/s", f"{t['ask']['cpu_per_m']:.2f} CPU-s per million events"),
        ("throughput, @opencode-ai/sdk 1.18.33", f"{t['sdk']['events_s']:,.0f} events/s", f"{t['sdk']['cpu_per_m']:.2f} CPU-s per million events"),
        ("throughput ratio (target >= 5x)", f"{ratio:.1f}x", "PASS" if ratio >= 5 else "MISS"),
        ("latency, quiet stream", f"p50 {quiet['p50']:.3f} ms", f"p99 {quiet['p99']:.3f} ms (max {quiet['max']:.3f})"),
        ("latency, 50,000 events/s background", f"p50 {loaded['p50']:.3f} ms", f"p99 {loaded['p99']:.3f} ms (max {loaded['max']:.3f}) " + ("PASS" if loaded["p99"] < 2 else "MISS") + " (target p99 < 2 ms)"),
        ("RSS idle (target < 20 MiB)", f"{f['idle_mib']:.1f} MiB", "PASS" if f["idle_mib"] < 20 else "MISS"),
        ("RSS, 1,000 pending in 100 sessions", f"{f['loaded_mib']:.1f} MiB", ""),
        ("cold start to initialize response", f"{f['cold_ms']:.1f} ms", "median of 11"),
    ]
    print(f"\nask-lsp benchmark: {EVENTS + 1:,} events ({t['mb']:.0f} MB) per consumer; {os.cpu_count()} cores\n")
    width = max(len(r[0]) for r in rows)
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:>22}  {b}")
    print()
    print(json.dumps({"throughput": t, "latency_quiet": quiet, "latency_loaded": loaded, "footprint": f}))


if __name__ == "__main__":
    main()
