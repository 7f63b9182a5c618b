// The fresh-context floor of the latency section, timed in a process of its own
// that runs with the isolate process's Node flags (ISOLATE_PROCESS_NODE_FLAGS):
// what a context costs depends on them (without WebAssembly, V8 builds less of
// each context), so a floor timed in the bench's own process would not be the
// floor the isolate process has. Each stdin line {count, warmup} is answered with
// one line: the milliseconds of `count` createContext()+release(), after `warmup`.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const ivm = createRequire(import.meta.url)('isolated-vm');
const isolate = new ivm.Isolate({ memoryLimit: 64 });
for await (const line of createInterface({ input: process.stdin })) {
  const { count, warmup } = JSON.parse(line);
  const times = [];
  for (let i = 0; i < count + warmup; i++) {
    const start = performance.now();
    (await isolate.createContext()).release();
    if (i >= warmup) times.push(performance.now() - start);
  }
  process.stdout.write(`${JSON.stringify(times)}\n`);
}
isolate.dispose();
