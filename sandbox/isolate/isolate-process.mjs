// The isolate process: a Node process of the host's, started inside the
// namespace sandbox (only the tool's roots, its manifest folder and the code
// that runs here are visible; no network), that holds isolated-vm, the prelude
// and the prepared contexts of one isolate tool. A V8 or isolated-vm failure, a
// catastrophic out-of-memory or an abort ends this process and fails its calls;
// the host lives on. This file is its entry and only wires the pipes: the main
// loop (main-loop.mjs) dispatches the host's frames, the slot pool
// (slot-pool.mjs, isolate-slot.mjs) holds the isolates and their prepared
// contexts, ctx-operations.mjs serves ctx.fs, ctx.fetch, progress and log, and
// isolate-prelude.mjs is the code each context runs first.
//
// Channel: frames (sandbox/shared/frames.mjs) on stdin (host → here) and stdout
// (here → host); stderr carries diagnostics only. Message shapes: sandbox/shared/messages.d.mts.
import { writeSync } from 'node:fs';
import { encodeFrame, FrameReader } from '../shared/frames.mjs';
import { createMainLoop } from './main-loop.mjs';

/** The host is trusted: its frames (arguments, fetch bodies) may be large, never unbounded. */
const MAX_INBOUND_FRAME_BYTES = 64 * 1024 * 1024;

/** @param {string} why @param {number} code */
function die(why, code) {
  try {
    process.stderr.write(`isolate process: ${why}\n`);
  } finally {
    process.exit(code);
  }
}

const loop = createMainLoop({
  send: (message, body) => process.stdout.write(encodeFrame(message, body)),
  sendNow: (message) => writeSync(1, encodeFrame(message)),
  die,
  exit: (code) => process.exit(code),
});
const reader = new FrameReader({
  maxFrameBytes: MAX_INBOUND_FRAME_BYTES,
  maxHeaderBytes: MAX_INBOUND_FRAME_BYTES,
  onFrame: (header) => loop.onFrame(header),
  onError: (reason) => die(`unreadable frame from the host: ${reason}`, 65),
});
process.stdin.on('data', (chunk) => reader.push(chunk));
// The host is gone (or closed us): nothing here may outlive it.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdout.on('error', () => process.exit(0));
// SIGUSR1 would open Node's inspector in this process, past isolated-vm's boundary: it stays closed.
process.on('SIGUSR1', () => undefined);
