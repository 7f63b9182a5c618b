// The error a command throws for bad usage; main.ts turns it into exit code 2.
// Its own module so main.ts can catch it without loading args.ts, which pulls in
// the YAML and JSON Schema parsers that `--version` and `--help` never need.
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
