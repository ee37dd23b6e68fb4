#!/usr/bin/env python3
"""A mock OpenAI-compatible LLM for running the real OpenCode server offline.

It streams a `question` tool call when the last user message contains
`ASK:<scenario>`, a `bash` tool call for `BASH:<command>` (`BASH:x2 <command>`
calls it again after the first result, for `always`), a `write` tool call for
`WRITE:<file name>`, COUNT text tokens at RATE per second, each in a write
of its own as a model's arrive, for `STREAM:<COUNT>@<RATE>` (scripts/bench's
real-OpenCode set), and records the tool result OpenCode sends back (what the
agent "received") so tests can assert on it: `GET /_mock/records`.

Usage: mock_llm.py PORT_FILE   (listens on a free 127.0.0.1 port, writes it to PORT_FILE)
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCENARIOS = {
    "single": [
        {"question": "Which database?", "header": "Database",
         "options": [{"label": "Postgres", "description": "Relational"},
                     {"label": "SQLite", "description": "Embedded"}]},
    ],
    "multi": [
        {"question": "Which checks should run?", "header": "Checks", "multiple": True,
         "options": [{"label": "Unit", "description": "fast"},
                     {"label": "Lint", "description": "style"},
                     {"label": "E2E", "description": "slow"}]},
    ],
    "two": [
        {"question": "Which database?", "header": "Database",
         "options": [{"label": "Postgres", "description": "Relational"},
                     {"label": "SQLite", "description": "Embedded"}]},
        {"question": "Which region?", "header": "Region",
         "options": [{"label": "eu-west", "description": ""},
                     {"label": "us-east", "description": ""}]},
    ],
    "custom": [
        {"question": "What should the release be called?", "header": "Release",
         "options": [{"label": "v1", "description": "the obvious one"}]},
    ],
}

LOCK = threading.Lock()
RECORDS = []  # tool results received: {"tool_call_id", "content"}
REQUESTS = []  # every chat request's last message role, for debugging
CALLS = [0]


def text_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time()),
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/_mock/records"):
            with LOCK:
                self.send_json(200, {"records": RECORDS, "requests": REQUESTS})
        elif self.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
        else:
            self.send_json(404, {"error": "not found"})

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self.send_json(400, {"error": "bad json"})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": "not found"})
            return
        messages = request.get("messages") or []
        last = messages[-1] if messages else {}
        tools = [t.get("function", {}).get("name") for t in request.get("tools") or []]
        with LOCK:
            REQUESTS.append({"last_role": last.get("role"), "tools": tools})
        user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        said = text_of(user)
        # A tool result not seen before. OpenCode 1.18.34's new engine may
        # send a user message (a skills reminder) after it, so it is not
        # always the last message.
        with LOCK:
            seen = {r["tool_call_id"] for r in RECORDS}
            fresh = [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") not in seen]
            for m in fresh:
                RECORDS.append({"tool_call_id": m.get("tool_call_id"), "content": text_of(m)})
        if fresh:
            results = sum(1 for m in messages if m.get("role") == "tool")
            if "BASH:x2 " in said and results < 2:
                command = said.split("BASH:x2 ", 1)[1].strip()
                self.reply(request, tool_call=(self.call_id(), json.dumps(
                    {"command": command, "description": "Run a command"}), "bash"))
                return
            self.reply(request, text="Thanks, noted.")
            return
        if "BASH:" in said and "bash" in tools:
            command = said.split("BASH:", 1)[1].strip()
            if command.startswith("x2 "):
                command = command[3:]
            self.reply(request, tool_call=(self.call_id(), json.dumps(
                {"command": command, "description": "Run a command"}), "bash"))
            return
        if "WRITE:" in said and "write" in tools:
            name = said.split("WRITE:", 1)[1].split()[0]
            self.reply(request, tool_call=(self.call_id(), json.dumps(
                {"filePath": name, "content": "hello\nworld\n"}), "write"))
            return
        if "STREAM:" in said and "question" in tools:
            count, rate = said.split("STREAM:", 1)[1].split()[0].split("@")
            self.reply(request, text="", pace=(int(count), float(rate)))
            return
        scenario = None
        if "ASK:" in said and "question" in tools:
            scenario = said.split("ASK:", 1)[1].split()[0].strip(" .,")
        if scenario in SCENARIOS:
            arguments = json.dumps({"questions": SCENARIOS[scenario]})
            self.reply(request, tool_call=(self.call_id(), arguments, "question"))
        else:
            self.reply(request, text="Mock title" if "question" not in tools else "OK.")

    def call_id(self):
        with LOCK:
            CALLS[0] += 1
            return "call_mock_%d" % CALLS[0]

    def reply(self, request, text=None, tool_call=None, pace=None):
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not request.get("stream"):
            message = {"role": "assistant", "content": text or ""}
            finish = "stop"
            if tool_call:
                message["tool_calls"] = [{"id": tool_call[0], "type": "function",
                                          "function": {"name": tool_call[2], "arguments": tool_call[1]}}]
                finish = "tool_calls"
            self.send_json(200, {"id": "chatcmpl-mock", "object": "chat.completion", "created": 0,
                                 "model": "mock-model", "usage": usage,
                                 "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        frames = [chunk({"role": "assistant", "content": ""})]
        if tool_call:
            call_id, arguments, name = tool_call
            frames.append(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]}))
            frames.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}))
            frames.append(chunk({}, "tool_calls"))
        elif not pace:
            frames.append(chunk({"content": text}))
        if not tool_call:
            frames.append(chunk({}, "stop"))
        final = chunk({})
        final["choices"] = []
        final["usage"] = usage
        frames.append(final)
        if pace:
            count, rate = pace
            started = time.perf_counter()
            self.wfile.write(b"data: " + json.dumps(frames[0]).encode() + b"\n\n")
            for n in range(count):
                delay = started + n / rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                token = b"data: " + json.dumps(chunk({"content": "word%d " % n})).encode() + b"\n\n"
                self.wfile.write(token)
                self.wfile.flush()
            frames = frames[1:]
        for frame in frames:
            self.wfile.write(b"data: " + json.dumps(frame).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
