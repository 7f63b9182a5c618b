// The progress of a long call as it arrives, for a person at a terminal: a bar
// (cli-progress) when the tool reports a total, a spinner with the tool's
// message (yocto-spinner) otherwise. Nothing at all when the stream is not a
// terminal, so a script's stderr stays free of redraws.
import cliProgress from 'cli-progress';
import yoctoSpinner, { type Spinner } from 'yocto-spinner';

interface ProgressEvent {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface ProgressView {
  /** Shows one progress notification. */
  update(event: ProgressEvent): void;
  /** Removes the bar or spinner from the screen (before a prompt or the result); a later update shows it again. */
  clear(): void;
}

/** Longest message shown beside the bar: the tool's words, bounded so one line stays one line. */
const MAX_MESSAGE_CHARS = 60;

/** A view on `stream`; one that draws nothing when the stream is not a terminal. */
export function createProgressView(stream: NodeJS.WriteStream = process.stderr): ProgressView {
  if (stream.isTTY !== true) return { update: () => undefined, clear: () => undefined };
  let bar: cliProgress.SingleBar | undefined;
  let spinner: Spinner | undefined;
  const clear = (): void => {
    bar?.stop();
    bar = undefined;
    spinner?.stop();
    spinner = undefined;
  };
  return {
    update(event) {
      const message = shorten(event.message ?? '');
      if (event.total !== undefined && event.total > 0) {
        if (spinner) clear();
        if (!bar) {
          bar = new cliProgress.SingleBar(
            // The bar is cleared when the call ends, so the result is all that stays on the screen.
            { stream, format: '{bar} {value}/{total} {message}', hideCursor: true, clearOnComplete: true, linewrap: false, barsize: 30 },
            cliProgress.Presets.shades_classic,
          );
          bar.start(event.total, Math.min(event.progress, event.total), { message });
        } else {
          bar.setTotal(event.total);
          bar.update(Math.min(event.progress, event.total), { message });
        }
        return;
      }
      if (bar) clear();
      const text = message === '' ? `${event.progress}` : `${message} (${event.progress})`;
      if (!spinner) spinner = yoctoSpinner({ text, stream, handleSignals: false }).start();
      else spinner.text = text;
    },
    clear,
  };
}

// Control characters would drive the terminal: the message comes from the tool.
function shorten(message: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = message.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return clean.length > MAX_MESSAGE_CHARS ? `${clean.slice(0, MAX_MESSAGE_CHARS - 1)}…` : clean;
}
