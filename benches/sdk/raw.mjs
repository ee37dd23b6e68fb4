// A plain Node consumer doing ask-lsp's work the way ask-lsp does it, the
// baseline beside the SDK: node's own HTTP client (which takes the chunked
// framing apart), events split on blank lines, a streamed token told on its
// raw text (`{"id":"…","type":"message.part.delta"`, ask-lsp's prefilter)
// before any JSON.parse, the rest parsed and looked at as consume.mjs does.
// Stops at the sentinel question; prints one JSON line of figures (with
// BENCH_HOLD set it then waits for stdin to close, as consume.mjs does).
import http from 'node:http';

const [url, sentinel] = process.argv.slice(2);
const DELTA = ',"type":"message.part.delta"';
const start = process.hrtime.bigint();
let count = 0;
let questions = 0;
let toolParts = 0;
let rest = '';

function isTokenDelta(data) {
  if (!data.startsWith('{"id":"')) return false;
  const end = data.indexOf('"', 7);
  return end > 0 && data.startsWith(DELTA, end + 1);
}

function finish() {
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ events: count, questions, toolParts, wall_s: wall }));
  if (process.env.BENCH_HOLD) {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();
  } else {
    process.exit(0);
  }
}

http.get(`${url}/event`, { headers: { accept: 'text/event-stream' } }, (response) => {
  response.setEncoding('utf8');
  response.on('data', (text) => {
    const buffer = rest + text;
    let from = 0;
    let end;
    while ((end = buffer.indexOf('\n\n', from)) >= 0) {
      const block = buffer.slice(from, end);
      from = end + 2;
      count++;
      if (!block.startsWith('data: ')) continue;
      const data = block.slice(6);
      if (isTokenDelta(data)) continue;
      const event = JSON.parse(data);
      if (event.type === 'question.asked') {
        questions++;
        if (event.properties.id === sentinel) finish();
      } else if (event.type === 'message.part.updated') {
        const part = event.properties.part;
        if (part.type === 'tool' && part.tool === 'question') toolParts++;
      }
    }
    rest = buffer.slice(from);
  });
});
