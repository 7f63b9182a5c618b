// Returns a string of args.bytes bytes, to measure artifact spill.
export default async function big(args) {
  return 'x'.repeat(args.bytes);
}
