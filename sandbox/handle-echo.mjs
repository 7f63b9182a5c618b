// Sends every handle it is given straight back over its IPC channel. Node has
// no dup(), but a handle sent over IPC arrives as a new descriptor (SCM_RIGHTS):
// `toolhost serve` uses this once, at start, to get a private duplicate of a
// stdout that is a socket, so the protocol no longer depends on fd 1.
// Plain ESM with no imports: it only echoes.
process.on('message', (message, handle) => {
  process.send(message, handle, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
