// finish: the terminal tool. It only says the run is over, in words the model
// and the person can both read; the host marks the result terminal and stops
// the session's later calls.
export default async function finish(args) {
  const outcome = args.outcome ?? 'succeeded';
  const summary = String(args.summary).trim();
  return `Run finished (${outcome}): ${summary}`;
}
