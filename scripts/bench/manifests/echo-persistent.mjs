// Persistent process echo: NDJSON {"id","args"} in, {"id","result"} out.
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const { id, args } = JSON.parse(line);
  process.stdout.write(`${JSON.stringify({ id, result: { text: args.text } })}\n`);
});
