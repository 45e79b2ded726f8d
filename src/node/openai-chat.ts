// Tier 2 back end for any OpenAI-compatible chat-completions endpoint (OpenAI, Azure-style proxies,
// Ollama, vLLM, llama.cpp, LM Studio…) through the `openai` package. One request per evaluation:
// no retries (a retry would spend budget and time the evaluator does not have), the SDK's own
// timeout plus the caller's AbortSignal, and nothing taken from OPENAI_* environment variables (the
// base URL, key and model come from Bulwark's settings and SecretStorage only).
import OpenAI from 'openai';
import type { ChatBackend } from '../engine/shield/tier2';

export interface OpenAIChatOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Bearer key (from SecretStorage). Keyless local servers: any non-empty placeholder. */
  apiKey: string;
  model: string;
  /** Per-request timeout of the SDK (default 30 000 ms); the evaluator's own timeout also applies. */
  timeoutMs?: number;
  /** Answer length cap (default 500 tokens). */
  maxTokens?: number;
  /**
   * Which request field carries `maxTokens`: `max_tokens` (default; what most compatible servers
   * read) or `max_completion_tokens` (required by OpenAI's reasoning models), or `none`.
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens' | 'none';
  /** Sent only when set (some models accept only their default temperature). */
  temperature?: number;
  /**
   * Plain `http:` is refused for anything but loopback, since the key would travel in clear text.
   * Set to allow it (e.g. a model server elsewhere on a trusted LAN).
   */
  allowInsecureHttp?: boolean;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof fetch;
}

/** Loopback host names and literals for which plain http is acceptable. */
function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(h) || h === '::1';
}

export class OpenAIChatBackend implements ChatBackend {
  readonly id: string;
  private readonly client: OpenAI;

  /** Throws on an unusable configuration (bad URL, insecure http, empty key or model). */
  constructor(private readonly o: OpenAIChatOptions) {
    let url: URL;
    try {
      url = new URL(o.baseURL);
    } catch {
      throw new Error(`Tier 2 evaluator base URL is not a URL: ${JSON.stringify(o.baseURL)}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error(`Tier 2 evaluator base URL must be http(s), got ${url.protocol}`);
    if (url.protocol === 'http:' && !o.allowInsecureHttp && !isLoopbackHost(url.hostname)) {
      throw new Error(
        `Tier 2 evaluator base URL ${url.origin} uses plain http to a non-loopback host; the API key would be sent in clear text (use https)`,
      );
    }
    if (url.username || url.password) throw new Error('Tier 2 evaluator base URL must not contain credentials; use the API key');
    if (!o.apiKey) throw new Error('Tier 2 evaluator API key is empty (for a keyless local server use any placeholder)');
    if (!o.model) throw new Error('Tier 2 evaluator model is not set');
    this.id = `openai-compatible:${o.model}@${url.host}`;
    this.client = new OpenAI({
      baseURL: o.baseURL,
      apiKey: o.apiKey,
      // Explicit nulls: do not pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY from the environment.
      organization: null,
      project: null,
      adminAPIKey: null,
      webhookSecret: null,
      timeout: o.timeoutMs ?? 30_000,
      maxRetries: 0,
      // The SDK must not log requests (the system prompt carries the canary) whatever OPENAI_LOG says.
      logLevel: 'off',
      ...(o.fetch ? { fetch: o.fetch } : {}),
    });
  }

  async complete(system: string, user: string, signal: AbortSignal): Promise<string> {
    const maxTokens = this.o.maxTokens ?? 500;
    const field = this.o.maxTokensField ?? 'max_tokens';
    const completion = await this.client.chat.completions.create(
      {
        model: this.o.model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ],
        n: 1,
        stream: false,
        ...(field === 'none' ? {} : { [field]: maxTokens }),
        ...(this.o.temperature !== undefined ? { temperature: this.o.temperature } : {}),
      },
      { signal, maxRetries: 0 },
    );
    const choice = completion?.choices?.[0];
    const content = choice?.message?.content;
    if (typeof content !== 'string') {
      const refusal = choice?.message?.refusal;
      throw new Error(
        refusal ? `the model refused: ${refusal}` : `the response has no message content (finish_reason ${String(choice?.finish_reason)})`,
      );
    }
    return content;
  }
}
