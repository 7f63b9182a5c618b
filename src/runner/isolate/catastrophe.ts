// isolated-vm's onCatastrophicError means V8 lost control of an isolate and
// nothing in the process can be trusted to be sound. Its README's advice: log,
// stop serving requests, finish outstanding work and end the process. The
// isolate runner reports it here; `serve` listens and shuts down with exit 1.
import { EventEmitter } from 'node:events';

const events = new EventEmitter();

/** Called by a runner whose engine reported an unrecoverable state. */
export function reportCatastrophe(message: string): void {
  events.emit('catastrophe', message);
}

/** Subscribes to catastrophes; returns the unsubscribe function. */
export function onCatastrophe(listener: (message: string) => void): () => void {
  events.on('catastrophe', listener);
  return () => events.off('catastrophe', listener);
}
