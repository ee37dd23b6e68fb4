// The official SDK's event consumer doing ask-lsp's filtering: find
// question.asked events and question tool parts in /event, stop at the
// sentinel question. Prints one JSON line of figures. With BENCH_HOLD set
// it then waits for stdin to close (the bench reads its CPU while it lives).
import { createOpencodeClient } from '@opencode-ai/sdk';

const [url, sentinel] = process.argv.slice(2);
const client = createOpencodeClient({ baseUrl: url });
const cpu0 = process.cpuUsage();
const start = process.hrtime.bigint();
const events = await client.event.subscribe();
let count = 0;
let questions = 0;
let toolParts = 0;
for await (const event of events.stream) {
  count++;
  if (event.type === 'question.asked') {
    questions++;
    if (event.properties.id === sentinel) break;
  } else if (event.type === 'message.part.updated') {
    const part = event.properties.part;
    if (part.type === 'tool' && part.tool === 'question') toolParts++;
  }
}
const wall = Number(process.hrtime.bigint() - start) / 1e9;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ events: count, questions, toolParts, wall_s: wall, cpu_s: (cpu.user + cpu.system) / 1e6 }));
if (process.env.BENCH_HOLD) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
} else {
  process.exit(0);
}
