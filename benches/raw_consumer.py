#!/usr/bin/env python3
"""A plain Python consumer doing ask-lsp's work the way ask-lsp does it, a
baseline for benches/bench.py: http.client (which takes the chunked framing
apart), events split on blank lines, a streamed token told on its raw bytes
(`{"id":"…","type":"message.part.delta"`, ask-lsp's prefilter) before any
json.loads, the rest parsed and looked at as benches/sdk/consume.mjs does.
Stops at the sentinel question; prints `{"events": N, "wall_s": S}`.

Usage: raw_consumer.py HOST:PORT SENTINEL
"""

import http.client
import json
import sys
import time

DELTA = b',"type":"message.part.delta"'


def is_token_delta(data):
    if not data.startswith(b'{"id":"'):
        return False
    end = data.find(b'"', 7)
    return end > 0 and data.startswith(DELTA, end + 1)


def main():
    address, sentinel = sys.argv[1:]
    started = time.perf_counter()
    connection = http.client.HTTPConnection(address)
    connection.request("GET", "/event", headers={"accept": "text/event-stream"})
    response = connection.getresponse()
    count = questions = tool_parts = 0
    rest = b""
    while True:
        received = response.read1(1 << 16)
        if not received:
            sys.exit("the stream ended before the sentinel")
        buffer = rest + received
        start = 0
        while (end := buffer.find(b"\n\n", start)) >= 0:
            block = buffer[start:end]
            start = end + 2
            count += 1
            if not block.startswith(b"data: "):
                continue
            data = block[6:]
            if is_token_delta(data):
                continue
            event = json.loads(data)
            if event["type"] == "question.asked":
                questions += 1
                if event["properties"]["id"] == sentinel:
                    print(json.dumps({"events": count, "questions": questions, "toolParts": tool_parts,
                                      "wall_s": time.perf_counter() - started}))
                    return
            elif event["type"] == "message.part.updated":
                part = event["properties"]["part"]
                if part.get("type") == "tool" and part.get("tool") == "question":
                    tool_parts += 1
        rest = buffer[start:]


if __name__ == "__main__":
    main()
