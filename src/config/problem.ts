// A problem found in a manifest or policy file, reported as `file:line:col: reason`.

export interface Problem {
  /** Path as given or relative to the working directory, for people. */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly col: number;
  readonly reason: string;
}

export function formatProblem(problem: Problem): string {
  return `${problem.file}:${problem.line}:${problem.col}: ${problem.reason}`;
}

/** Thrown by loaders when a file set cannot be loaded; carries every problem found. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'ConfigError';
  }
}
