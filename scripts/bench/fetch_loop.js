// Bench tool: ctx.fetch of {url}, {count} times in a row; answers the mean milliseconds per
// fetch, timed in the tool (so the call's own overhead is left out). Isolate and worker alike.
export default async function fetchLoop(args, ctx) {
  const startedMs = Date.now();
  for (let i = 0; i < args.count; i++) await (await ctx.fetch(args.url)).text();
  return { perFetchMs: (Date.now() - startedMs) / args.count };
}
