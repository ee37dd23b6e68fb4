#!/usr/bin/env python3
"""The mock LLM of tests/opencode/mock_llm.py, unchanged, for scripts/bench's
time to a visible prompt: each time it has written a whole `question` tool
call (the reply's last byte sent), the realtime clock in ns is appended to
$BENCH_LLM_OUT, the first hop of the breakdown (benches/bench.py,
time_to_visible).

Usage: timed_llm.py PORT_FILE   (as mock_llm.py)
"""

import importlib.util
import os
import time

spec = importlib.util.spec_from_file_location(
    "mock_llm", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "opencode", "mock_llm.py"))
mock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mock)
OUT = os.environ["BENCH_LLM_OUT"]


class Timed(mock.Handler):
    def reply(self, request, text=None, tool_call=None, pace=None):
        super().reply(request, text, tool_call, pace)
        if tool_call and tool_call[2] == "question":
            with open(OUT, "a") as f:
                f.write(f"{time.time_ns()}\n")


# mock.main() looks its handler up by name when it starts the server.
mock.Handler = Timed

if __name__ == "__main__":
    mock.main()
