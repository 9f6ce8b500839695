// A build failure with the one paragraph to print and the exit status to end with.

export class BuildError extends Error {
  /** `status` 2: the build could not start (usage, missing build tools); 1: it failed. */
  constructor(message, status = 1) {
    super(message);
    this.name = "BuildError";
    this.status = status;
  }
}

/** Folds a multi-line message into one paragraph. */
export function paragraph(text) {
  return String(text)
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .join(" ");
}
