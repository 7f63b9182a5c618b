// The trivial tool of the bench: isolate and worker mode.
export default async function echo(args) {
  return { text: args.text };
}
