// Sends every handle it is given straight back over its IPC channel. Node has
// no dup(), but a handle sent over IPC arrives as a new descriptor (SCM_RIGHTS):
// `toolhost serve` uses this once, at start, to get a private duplicate of a
// stdout that is a socket, so the protocol no longer depends on fd 1.
// Plain ESM with no imports: it only echoes.
// Always forked with an IPC channel; without one there is nothing to echo to.
if (process.send === undefined) process.exit(1);
const send = process.send.bind(process);
process.on('message', (message, /** @type {import('node:net').Socket | undefined} */ handle) => {
  send(message, handle, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
