/** A mistake in how the command was called: reported with a pointer to `bulwark --help`. */
export class UsageError extends Error {}
