// Tier 1 prompt-injection classifier: any Hugging Face sequence-classification ONNX export in a
// directory, run in-process with onnxruntime-node and tokenised with @huggingface/tokenizers.
//
// The directory holds:
//   model.onnx             the export (inputs input_ids / attention_mask / token_type_ids, output logits)
//   tokenizer.json         the fast-tokenizer file (normaliser, pre-tokeniser, model, post-processor)
//   config.json            with id2label (and max_position_embeddings)
//   tokenizer_config.json  optional: model_max_length, pad_token, …
//
// Label choice: the label named INJECTION (case-insensitive) is the positive class. If no label is
// injection-like (no name contains "inject") and there are exactly two labels named LABEL_0 and
// LABEL_1 (an export that lost its label names), LABEL_1 is taken as INJECTION, matching the
// original (index 0 = SAFE, 1 = INJECTION). `opts.injectionLabel` names another label explicitly.
// Anything else is an error: guessing the positive class of an unknown model would silently invert
// Tier 1.
//
// Every failure throws an Error that names the file; the Shield pipeline turns a throw into a block.
// Nothing is loaded at import time: onnxruntime-node and the tokenizer library are imported by
// loadOnnxClassifier, so the extension can load the model off its activation path.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type * as OrtTypes from 'onnxruntime-node';
import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import type * as TokenizersTypes from '@huggingface/tokenizers';
import type { InjectionClassifier } from '../../engine/shield/pipeline';
import { errorMessage } from '../../engine/error-message';

/** DeBERTa's 512 positions (the sequence length these classifiers were trained with), and our cap unless the caller overrides it. */
export const DEFAULT_MAX_LENGTH = 512;
/** Long text is tokenised in pieces of this many characters and more, until enough tokens are collected. */
const MIN_PIECE_CHARS = 2_048;
const MAX_PIECE_CHARS = 65_536;

export interface OnnxClassifierOptions {
  /** Tokens per inference, special tokens included. Default: min(512, max_position_embeddings, model_max_length). */
  maxLength?: number;
  /** onnxruntime intra-op threads (default 1: the editor's cores belong to the user). */
  intraOpThreads?: number;
  /** Name of the positive label when it is not INJECTION (case-insensitive). */
  injectionLabel?: string;
}

/** What the model is fed for one text (exposed for tests and diagnostics). */
export interface ClassifierEncoding {
  readonly tokens: readonly string[];
  readonly ids: readonly number[];
  readonly typeIds: readonly number[];
  /** Length after padding (only models with a fixed sequence length are padded). */
  readonly paddedLength: number;
  /** True when the text produced more tokens than fit and was cut. */
  readonly truncated: boolean;
}

type Ort = typeof OrtTypes;
type TokenizersModule = typeof TokenizersTypes;

let ortPromise: Promise<Ort> | undefined;
let tokenizersPromise: Promise<TokenizersModule> | undefined;
const loadOrt = () => (ortPromise ??= import('onnxruntime-node').then((m) => ((m as { default?: Ort }).default ?? m) as Ort));
const loadTokenizers = () => (tokenizersPromise ??= import('@huggingface/tokenizers'));

const SUPPORTED_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

export class OnnxInjectionClassifier implements InjectionClassifier {
  private queue: Promise<unknown> = Promise.resolve();
  private released = false;

  /** @internal use loadOnnxClassifier */
  constructor(
    readonly id: string,
    readonly modelDir: string,
    /** SHA-256 of model.onnx (hex). */
    readonly modelSha256: string,
    /** id2label in index order. */
    readonly labels: readonly string[],
    readonly injectionIndex: number,
    readonly maxLength: number,
    /** The inputs the model declares, in its order. */
    readonly inputNames: readonly string[],
    readonly outputName: string,
    private readonly ort: Ort,
    private readonly session: OrtTypes.InferenceSession,
    private readonly tokenizer: HfTokenizer,
    private readonly specialTokenCount: number,
    private readonly addedTokenIds: ReadonlyMap<string, number>,
    private readonly unkId: number | undefined,
    private readonly fixedLength: number | undefined,
    private readonly padId: number,
    private readonly inputTypes: ReadonlyMap<string, 'int64' | 'int32'>,
  ) {}

  /** Tokenise as the model will see it: special tokens added, cut to maxLength (head kept). */
  encode(text: string): ClassifierEncoding {
    if (typeof text !== 'string') throw new Error(`classifier ${this.id}: the text to classify must be a string`);
    const budget = Math.max(0, this.maxLength - this.specialTokenCount);
    const { tokens: content, truncated } = this.contentTokens(text, budget);
    const post = this.tokenizer.post_processor;
    const processed = post ? post(content, null, true) : { tokens: content, token_type_ids: undefined };
    const tokens = [...processed.tokens];
    const types =
      processed.token_type_ids && processed.token_type_ids.length === tokens.length
        ? [...processed.token_type_ids]
        : new Array<number>(tokens.length).fill(0);
    if (tokens.length > this.maxLength) {
      // A post-processor that adds more than it did for an empty input: cut, keeping the last token.
      tokens.splice(this.maxLength - 1, tokens.length - this.maxLength);
      types.splice(this.maxLength - 1, types.length - this.maxLength);
    }
    const typeIds = types;
    const ids = tokens.map((t) => {
      const id = this.tokenizer.token_to_id(t) ?? this.addedTokenIds.get(t) ?? this.unkId;
      if (id === undefined)
        throw new Error(
          `classifier ${this.id}: token ${JSON.stringify(t)} has no id in tokenizer.json, and the tokenizer has no unknown token`,
        );
      return id;
    });
    return { tokens, ids, typeIds, paddedLength: this.fixedLength ?? ids.length, truncated };
  }

  /** Probability (0..1) that `text` is a prompt injection. Calls are serialised on one session. */
  injectionScore(text: string): Promise<number> {
    const run = () => this.score(text);
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Softmax over all labels for `text`, in id2label order. */
  async probabilities(text: string): Promise<number[]> {
    const run = () => this.infer(text);
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Frees the native session; later calls throw. */
  async dispose(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.queue;
    await this.session.release();
  }

  private async score(text: string): Promise<number> {
    const probs = await this.infer(text);
    return probs[this.injectionIndex]!;
  }

  private async infer(text: string): Promise<number[]> {
    if (this.released) throw new Error(`classifier ${this.id} has been disposed`);
    const enc = this.encode(text);
    const len = enc.paddedLength;
    const column = (name: string): number[] => {
      const real = name === 'input_ids' ? enc.ids : name === 'attention_mask' ? enc.ids.map(() => 1) : enc.typeIds;
      const pad = name === 'input_ids' ? this.padId : 0;
      return real.length >= len ? real.slice(0, len) : [...real, ...new Array<number>(len - real.length).fill(pad)];
    };
    const feeds: Record<string, OrtTypes.Tensor> = {};
    for (const name of this.inputNames) {
      const values = column(name);
      feeds[name] =
        this.inputTypes.get(name) === 'int32'
          ? new this.ort.Tensor('int32', Int32Array.from(values), [1, len])
          : new this.ort.Tensor(
              'int64',
              BigInt64Array.from(values, (v) => BigInt(v)),
              [1, len],
            );
    }
    let out: OrtTypes.InferenceSession.ReturnType;
    try {
      out = await this.session.run(feeds, [this.outputName]);
    } catch (e) {
      throw new Error(`classifier ${this.id}: inference failed in ${path.join(this.modelDir, 'model.onnx')}: ${errorMessage(e)}`);
    }
    const t = out[this.outputName] as OrtTypes.Tensor | undefined;
    if (!t) throw new Error(`classifier ${this.id}: model.onnx returned no output ${this.outputName}`);
    const n = this.labels.length;
    const dims = [...t.dims];
    const shapeOk = (dims.length === 2 && dims[0] === 1 && dims[1] === n) || (dims.length === 1 && dims[0] === n);
    if (!shapeOk)
      throw new Error(
        `classifier ${this.id}: output ${this.outputName} of model.onnx has shape [${dims.join(', ')}], expected [1, ${n}] for the ${n} labels in config.json`,
      );
    const logits = tensorNumbers(t);
    if (logits.length !== n) throw new Error(`classifier ${this.id}: output ${this.outputName} has ${logits.length} values, expected ${n}`);
    if (logits.some((x) => !Number.isFinite(x)))
      throw new Error(`classifier ${this.id}: model.onnx produced non-finite logits (${logits.join(', ')})`);
    const probs = softmax(logits);
    if (probs.some((p) => !Number.isFinite(p) || p < 0 || p > 1))
      throw new Error(`classifier ${this.id}: softmax produced an invalid probability (${probs.join(', ')})`);
    return probs;
  }

  /**
   * The content tokens (no special tokens) of `text`, at most `budget` of them (plus one, to tell
   * whether anything was cut). A text up to about 8 characters per budget token is tokenised whole.
   * A longer one is tokenised in pieces (growing from that size to 64 K characters), each cut just
   * before a whitespace run, stopping as soon as the budget is full: a megabyte of text costs one
   * piece, not a megabyte of tokenising. Pre-tokenisers split at whitespace, so the tokens before a
   * seam are those of the whole text; a seam falls inside the budget only when a piece yields fewer
   * tokens than the budget (e.g. long whitespace runs), and the next piece then starts with the
   * whitespace, as it would inside one text.
   */
  private contentTokens(text: string, budget: number): { tokens: string[]; truncated: boolean } {
    const tokenize = (s: string) => this.tokenizer.tokenize(s, { add_special_tokens: false });
    let size = Math.max(MIN_PIECE_CHARS, budget * 8);
    if (text.length <= size) {
      const all = tokenize(text);
      return { tokens: all.slice(0, budget), truncated: all.length > budget };
    }
    const out: string[] = [];
    let pos = 0;
    while (pos < text.length && out.length <= budget) {
      let end = Math.min(text.length, pos + size);
      if (end < text.length) end = seam(text, pos, end);
      const piece = tokenize(text.slice(pos, end));
      for (const t of piece) out.push(t);
      pos = end;
      size = Math.min(size * 2, MAX_PIECE_CHARS);
    }
    return { tokens: out.slice(0, budget), truncated: out.length > budget || pos < text.length };
  }
}

/** Where to cut [pos, end): before the last whitespace run in the second half, else not inside a surrogate pair. */
function seam(text: string, pos: number, end: number): number {
  const floor = pos + Math.floor((end - pos) / 2);
  for (let i = end - 1; i > floor; i--) {
    if (/\s/.test(text[i]!)) {
      let j = i;
      while (j > floor && /\s/.test(text[j - 1]!)) j--;
      return j;
    }
  }
  const c = text.charCodeAt(end);
  return c >= 0xdc00 && c <= 0xdfff ? end - 1 : end;
}

function softmax(xs: number[]): number[] {
  const m = Math.max(...xs);
  const e = xs.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

function tensorNumbers(t: OrtTypes.Tensor): number[] {
  if (t.type === 'float32' || t.type === 'float64') return Array.from(t.data as Float32Array | Float64Array);
  if (t.type === 'float16') {
    const d = t.data as unknown as ArrayLike<number>;
    return d instanceof Uint16Array ? Array.from(d, halfToFloat) : Array.from(d, Number);
  }
  throw new Error(`the logits are of type ${t.type}, expected a floating-point tensor`);
}

// ---- loading ------------------------------------------------------------------------------------

function readJsonFile(file: string, required: true): Record<string, unknown>;
function readJsonFile(file: string, required: false): Record<string, unknown> | undefined;
function readJsonFile(file: string, required: boolean): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (!required && (e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(
      `classifier: cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file is missing' : errorMessage(e)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (e) {
    throw new Error(`classifier: ${file} is not valid JSON: ${errorMessage(e)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error(`classifier: ${file} must hold a JSON object`);
  return value as Record<string, unknown>;
}

/** id2label as an array in index order; the index of the positive (injection) label. */
export function resolveLabels(
  config: Record<string, unknown>,
  configFile: string,
  injectionLabel?: string,
): { labels: string[]; injectionIndex: number } {
  const raw = config.id2label;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`classifier: ${configFile} has no id2label object, so the injection label cannot be identified`);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length < 2) throw new Error(`classifier: id2label in ${configFile} must have at least two labels`);
  const labels: string[] = new Array(entries.length);
  for (const [k, v] of entries) {
    const i = Number(k);
    if (!/^\d+$/.test(k) || i >= entries.length || typeof v !== 'string' || !v)
      throw new Error(
        `classifier: id2label in ${configFile} must map the indices 0..${entries.length - 1} to label names (bad entry ${JSON.stringify(k)}: ${JSON.stringify(v)})`,
      );
    labels[i] = v;
  }
  if (labels.some((l) => l === undefined))
    throw new Error(`classifier: id2label in ${configFile} must cover the indices 0..${entries.length - 1}`);
  const find = (name: string) => labels.flatMap((l, i) => (l.toLowerCase() === name.toLowerCase() ? [i] : []));
  const want = injectionLabel ?? 'INJECTION';
  const hits = find(want);
  if (hits.length > 1) throw new Error(`classifier: id2label in ${configFile} names ${want} more than once`);
  if (hits.length === 1) return { labels, injectionIndex: hits[0]! };
  if (
    injectionLabel === undefined &&
    labels.length === 2 &&
    !labels.some((l) => /inject/i.test(l)) &&
    labels[0]!.toUpperCase() === 'LABEL_0' &&
    labels[1]!.toUpperCase() === 'LABEL_1'
  ) {
    return { labels, injectionIndex: 1 };
  }
  throw new Error(`classifier: id2label in ${configFile} has no ${want} label (labels: ${labels.join(', ')})`);
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  await new Promise<void>((resolve, reject) => {
    fs.createReadStream(file)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve());
  });
  return h.digest('hex');
}

/**
 * Loads the classifier in `modelDir`. Throws an Error naming the file for a missing or unreadable
 * file, JSON that does not parse, a config without a usable id2label, a tokenizer.json the library
 * cannot build, a model onnxruntime cannot load, or a model whose inputs/outputs do not fit.
 */
export async function loadOnnxClassifier(modelDir: string, opts: OnnxClassifierOptions = {}): Promise<OnnxInjectionClassifier> {
  const dir = path.resolve(modelDir);
  const modelPath = path.join(dir, 'model.onnx');
  const tokenizerPath = path.join(dir, 'tokenizer.json');
  const configPath = path.join(dir, 'config.json');
  const tokenizerConfigPath = path.join(dir, 'tokenizer_config.json');

  if (opts.maxLength !== undefined && !positiveInt(opts.maxLength))
    throw new Error(`classifier: maxLength must be a positive integer (got ${opts.maxLength})`);
  if (opts.intraOpThreads !== undefined && !positiveInt(opts.intraOpThreads))
    throw new Error(`classifier: intraOpThreads must be a positive integer (got ${opts.intraOpThreads})`);

  let stat: fs.Stats;
  try {
    stat = fs.statSync(modelPath);
  } catch (e) {
    throw new Error(
      `classifier: cannot read ${modelPath}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file is missing' : errorMessage(e)}`,
    );
  }
  if (!stat.isFile() || stat.size === 0) throw new Error(`classifier: ${modelPath} is not a non-empty file`);

  const config = readJsonFile(configPath, true);
  const { labels, injectionIndex } = resolveLabels(config, configPath, opts.injectionLabel);
  const tokenizerJson = readJsonFile(tokenizerPath, true);
  const tokenizerConfig = readJsonFile(tokenizerConfigPath, false) ?? {};

  // Tokenizer.
  const { Tokenizer } = await loadTokenizers();
  let tokenizer: HfTokenizer;
  let specialTokenCount: number;
  const addedTokenIds = new Map<string, number>();
  try {
    if (!Array.isArray(tokenizerJson.added_tokens)) tokenizerJson.added_tokens = [];
    tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    specialTokenCount = tokenizer.post_processor ? tokenizer.post_processor([], null, true).tokens.length : 0;
    for (const [id, t] of tokenizer.get_added_tokens_decoder()) {
      addedTokenIds.set(t.content, id);
      if (t.normalized && tokenizer.normalizer) addedTokenIds.set(tokenizer.normalizer(t.content), id);
    }
    tokenizer.tokenize('Tokenizer self-check: 123 ÄÖ 漢字 😀', { add_special_tokens: false });
  } catch (e) {
    throw new Error(`classifier: cannot build a tokenizer from ${tokenizerPath}: ${errorMessage(e)}`);
  }
  const unkId = tokenizer.model?.unk_token_id;

  // Sequence length: the smallest limit the files declare (config.json max_position_embeddings,
  // tokenizer_config.json model_max_length, tokenizer.json truncation.max_length), capped at 512,
  // unless the caller overrides it.
  const truncation = tokenizerJson.truncation as { max_length?: unknown } | null | undefined;
  const limits = [
    DEFAULT_MAX_LENGTH,
    positiveInt(config.max_position_embeddings),
    positiveInt(tokenizerConfig.model_max_length),
    positiveInt(truncation?.max_length),
  ].filter((x): x is number => x !== undefined);
  let maxLength = opts.maxLength ?? Math.min(...limits);
  if (maxLength <= specialTokenCount)
    throw new Error(
      `classifier: a maximum length of ${maxLength} leaves no room for text after the ${specialTokenCount} special tokens of ${tokenizerPath}`,
    );

  // Session.
  const ort = await loadOrt();
  let session: OrtTypes.InferenceSession;
  try {
    session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'],
      intraOpNumThreads: opts.intraOpThreads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 4, // failures are thrown (and reported by the caller), not printed to stderr
    });
  } catch (e) {
    throw new Error(`classifier: onnxruntime cannot load ${modelPath}: ${errorMessage(e)}`);
  }
  try {
    const inputNames = [...session.inputNames];
    const unknown = inputNames.filter((n) => !SUPPORTED_INPUTS.has(n));
    if (unknown.length)
      throw new Error(
        `${modelPath} declares the input(s) ${unknown.join(', ')}; a text classifier can feed only ${[...SUPPORTED_INPUTS].join(', ')}`,
      );
    if (!inputNames.includes('input_ids'))
      throw new Error(`${modelPath} declares no input_ids input (inputs: ${inputNames.join(', ') || 'none'})`);
    const inputTypes = new Map<string, 'int64' | 'int32'>();
    let fixedLength: number | undefined;
    for (const meta of session.inputMetadata ?? []) {
      if (!meta.isTensor) throw new Error(`${modelPath}: input ${meta.name} is not a tensor`);
      if (meta.type !== 'int64' && meta.type !== 'int32')
        throw new Error(`${modelPath}: input ${meta.name} is of type ${meta.type}, expected int64`);
      inputTypes.set(meta.name, meta.type);
      if (meta.shape.length && meta.shape.length !== 2)
        throw new Error(`${modelPath}: input ${meta.name} has rank ${meta.shape.length}, expected [batch, sequence]`);
      const seq = meta.shape[1];
      if (typeof seq === 'number' && seq > 0) {
        if (fixedLength !== undefined && fixedLength !== seq)
          throw new Error(`${modelPath}: inputs declare different fixed sequence lengths`);
        fixedLength = seq;
      }
    }
    if (fixedLength !== undefined) {
      if (fixedLength <= specialTokenCount) throw new Error(`${modelPath}: fixed sequence length ${fixedLength} leaves no room for text`);
      maxLength = Math.min(maxLength, fixedLength);
    }
    const outputNames = [...session.outputNames];
    const outputName = outputNames.includes('logits') ? 'logits' : outputNames[0];
    if (!outputName) throw new Error(`${modelPath} declares no outputs`);
    const outMeta = (session.outputMetadata ?? []).find((m) => m.name === outputName);
    if (outMeta?.isTensor) {
      const last = outMeta.shape[outMeta.shape.length - 1];
      if (outMeta.shape.length && typeof last === 'number' && last !== labels.length)
        throw new Error(`${modelPath}: output ${outputName} has ${last} logits but ${configPath} has ${labels.length} labels`);
    }

    const padToken =
      typeof tokenizerConfig.pad_token === 'string'
        ? tokenizerConfig.pad_token
        : (tokenizerConfig.pad_token as { content?: unknown } | undefined)?.content;
    const padding = tokenizerJson.padding as { pad_id?: unknown } | null | undefined;
    const padId =
      (typeof padding?.pad_id === 'number' ? padding.pad_id : undefined) ??
      (typeof padToken === 'string' ? tokenizer.token_to_id(padToken) : undefined) ??
      0;

    const hash = await sha256File(modelPath);
    const id = `${path.basename(dir)}@${hash.slice(0, 12)}`;
    return new OnnxInjectionClassifier(
      id,
      dir,
      hash,
      labels,
      injectionIndex,
      maxLength,
      inputNames,
      outputName,
      ort,
      session,
      tokenizer,
      specialTokenCount,
      addedTokenIds,
      unkId,
      fixedLength,
      padId,
      inputTypes,
    );
  } catch (e) {
    await session.release().catch(() => undefined);
    throw e instanceof Error && e.message.startsWith('classifier') ? e : new Error(`classifier: ${errorMessage(e)}`);
  }
}
