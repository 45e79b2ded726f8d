// The text of a thrown value: an Error's message, anything else as a string. The one place this is
// written (issue 15); a leaf module, so the CLI's lazily loaded subcommands and the sandbox helper
// can import it without the rest of the engine.
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
