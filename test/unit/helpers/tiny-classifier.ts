// Writes a real, tiny Hugging Face-style sequence-classification model directory at test time
// (no binary fixtures in the repository): a hand-encoded ONNX graph, a WordPiece tokenizer.json,
// config.json and tokenizer_config.json. The ONNX protobuf is encoded by hand, as in
// ../shared/e2e-recipe/make-tiny-onnx.js, extended with attributes, int64 tensors and symbolic dims.
//
// Graph (opset 13), all shapes [batch, seq]:
//   tok  = Gather(embedding[vocab, n], input_ids)                    [b, s, n]
//   pos  = Gather(positions[maxPositions, n], Range(0, Shape(input_ids)[1], 1))   [s, n]
//          (an index past maxPositions fails in Gather: an untruncated input cannot run)
//   typ  = Gather(token_types[2, n], token_type_ids)    only in the `tokenTypeIds` variant
//   x    = tok + pos (+ typ)
//   m    = Unsqueeze(Cast<float>(attention_mask), [2])                [b, s, 1]
//   logits = ReduceMean(x * m, [1]) / ReduceMean(m, [1]) + bias      [b, n]   (masked mean)
// Words that push towards INJECTION get +8 on logit 1, benign words +3 on logit 0, the rest 0;
// the bias leans to SAFE (+1 on logit 0).
import fs from 'node:fs';
import path from 'node:path';

// ---- protobuf encoding -------------------------------------------------------------------------
function varint(n: number | bigint): Buffer {
  let v = BigInt(n);
  if (v < 0n) v = BigInt.asUintN(64, v); // two's complement, 10 bytes
  const out: number[] = [];
  while (v > 127n) {
    out.push(Number(v & 127n) | 128);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const vint = (field: number, n: number | bigint) => Buffer.concat([key(field, 0), varint(n)]);
const f32 = (field: number, x: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(x);
  return Buffer.concat([key(field, 5), b]);
};
const bytes = (field: number, data: Buffer | string) => {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return Buffer.concat([key(field, 2), varint(buf.length), buf]);
};
const cat = (...parts: Buffer[]) => Buffer.concat(parts);

const FLOAT = 1;
const INT64 = 7;

// TensorShapeProto.Dimension: dim_value = 1, dim_param = 2
const dim = (d: number | string) => bytes(1, typeof d === 'number' ? vint(1, d) : bytes(2, d));
// TypeProto.tensor_type = 1 → { elem_type = 1, shape = 2 { dim = 1 } }
const tensorType = (elemType: number, shape: (number | string)[]) => bytes(1, cat(vint(1, elemType), bytes(2, cat(...shape.map(dim)))));
// ValueInfoProto: name = 1, type = 2
const valueInfo = (name: string, elemType: number, shape: (number | string)[]) =>
  cat(bytes(1, name), bytes(2, tensorType(elemType, shape)));

// TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9 (little-endian)
function floatTensor(name: string, dims: number[], values: number[]): Buffer {
  const raw = Buffer.from(new Float32Array(values).buffer);
  return cat(...dims.map((d) => vint(1, d)), vint(2, FLOAT), bytes(8, name), bytes(9, raw));
}
function int64Tensor(name: string, dims: number[], values: number[]): Buffer {
  const raw = Buffer.from(new BigInt64Array(values.map((v) => BigInt(v))).buffer);
  return cat(...dims.map((d) => vint(1, d)), vint(2, INT64), bytes(8, name), bytes(9, raw));
}

// AttributeProto: name = 1, f = 2, i = 3, ints = 8, type = 20 (FLOAT 1, INT 2, INTS 7)
type Attr = { name: string; int?: number; ints?: number[]; float?: number };
function attribute(a: Attr): Buffer {
  if (a.ints) return cat(bytes(1, a.name), ...a.ints.map((v) => vint(8, v)), vint(20, 7));
  if (a.float !== undefined) return cat(bytes(1, a.name), f32(2, a.float), vint(20, 1));
  return cat(bytes(1, a.name), vint(3, a.int ?? 0), vint(20, 2));
}
// NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5
let nodeCounter = 0;
const node = (op: string, ins: string[], outs: string[], attrs: Attr[] = []) =>
  cat(
    ...ins.map((i) => bytes(1, i)),
    ...outs.map((o) => bytes(2, o)),
    bytes(3, `${op.toLowerCase()}_${nodeCounter++}`),
    bytes(4, op),
    ...attrs.map((a) => bytes(5, attribute(a))),
  );

// ---- the tiny vocabulary -----------------------------------------------------------------------
export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;
/** Words whose embedding pushes towards INJECTION. */
export const INJECTION_WORDS = [
  'ignore',
  'previous',
  'instructions',
  'instruction',
  'system',
  'prompt',
  'disregard',
  'override',
  'reveal',
  'jailbreak',
];
/** Words whose embedding pushes towards SAFE. */
export const BENIGN_WORDS = [
  'please',
  'summarise',
  'summarize',
  'report',
  'sales',
  'quarterly',
  'weather',
  'list',
  'files',
  'readme',
  'build',
  'test',
  'project',
  'hello',
  'world',
  'thanks',
  'code',
  'review',
];
/** Words with no pull either way. */
export const NEUTRAL_WORDS = [
  'all',
  'the',
  'and',
  'a',
  'an',
  'of',
  'to',
  'in',
  'you',
  'your',
  'is',
  'are',
  'for',
  'me',
  'now',
  'with',
  'what',
  'this',
  'that',
  '.',
  ',',
  '!',
  '?',
  ':',
  '##s',
  '##ing',
  '##ed',
];

export function tinyVocab(): Record<string, number> {
  const vocab: Record<string, number> = {};
  for (const t of [...SPECIAL_TOKENS, ...INJECTION_WORDS, ...BENIGN_WORDS, ...NEUTRAL_WORDS]) vocab[t] = Object.keys(vocab).length;
  return vocab;
}

export interface TinyModelOptions {
  /** Declare a third int64 input `token_type_ids` (BERT-style exports do; DeBERTa-v3 exports do not). */
  tokenTypeIds?: boolean;
  /** Number of logits (default 2). A value that does not match id2label tests the shape check. */
  numLogits?: number;
  /** Size of the position table: inputs longer than this fail inside the model. Default 64. */
  maxPositions?: number;
  /** Fill the embedding with NaN (the model then returns NaN logits). */
  nanLogits?: boolean;
  /** Name of the output (default `logits`). */
  outputName?: string;
  /** Declare one more input the loader does not know how to feed (e.g. `pixel_values`). */
  extraInput?: string;
}

/** The ONNX model bytes. */
export function buildTinyOnnx(o: TinyModelOptions = {}): Buffer {
  const n = o.numLogits ?? 2;
  const maxPos = o.maxPositions ?? 64;
  const vocab = tinyVocab();
  const vocabSize = Object.keys(vocab).length;
  const inj = new Set(INJECTION_WORDS);
  const benign = new Set(BENIGN_WORDS);
  const emb: number[] = [];
  for (const [word] of Object.entries(vocab).sort((a, b) => a[1] - b[1])) {
    const row = new Array<number>(n).fill(0);
    if (inj.has(word)) row[1 % n] = 8;
    else if (benign.has(word)) row[0] = 3;
    emb.push(...row.map((v) => (o.nanLogits ? Number.NaN : v)));
  }
  const positions = new Array<number>(maxPos * n).fill(0);
  const bias = new Array<number>(n).fill(0);
  bias[0] = 1;
  // Type 0 adds nothing; type 1 would push hard towards logit 1 (the single-sequence template gives 0).
  const types = [...new Array<number>(n).fill(0), ...new Array<number>(n).fill(0).map((_, i) => (i === 1 ? 50 : 0))];

  const nodes: Buffer[] = [
    node('Gather', ['embedding', 'input_ids'], ['tok']),
    node('Shape', ['input_ids'], ['ids_shape']),
    node('Gather', ['ids_shape', 'one'], ['seq_len'], [{ name: 'axis', int: 0 }]),
    node('Range', ['zero', 'seq_len', 'one'], ['pos_ids']),
    node('Gather', ['positions', 'pos_ids'], ['pos']),
    node('Add', ['tok', 'pos'], o.tokenTypeIds ? ['x0'] : ['x']),
  ];
  if (o.tokenTypeIds) {
    nodes.push(node('Gather', ['token_types', 'token_type_ids'], ['typ']));
    nodes.push(node('Add', ['x0', 'typ'], ['x']));
  }
  nodes.push(
    node('Cast', ['attention_mask'], ['mask_f'], [{ name: 'to', int: FLOAT }]),
    node('Unsqueeze', ['mask_f', 'axes_2'], ['mask3']),
    node('Mul', ['x', 'mask3'], ['xm']),
    node(
      'ReduceMean',
      ['xm'],
      ['sum_x'],
      [
        { name: 'axes', ints: [1] },
        { name: 'keepdims', int: 0 },
      ],
    ),
    node(
      'ReduceMean',
      ['mask3'],
      ['sum_m'],
      [
        { name: 'axes', ints: [1] },
        { name: 'keepdims', int: 0 },
      ],
    ),
    node('Div', ['sum_x', 'sum_m'], ['pooled']),
    node('Add', ['pooled', 'bias'], [o.outputName ?? 'logits']),
  );
  const inits = [
    floatTensor('embedding', [vocabSize, n], emb),
    floatTensor('positions', [maxPos, n], positions),
    floatTensor('bias', [n], bias),
    int64Tensor('zero', [], [0]),
    int64Tensor('one', [], [1]),
    int64Tensor('axes_2', [1], [2]),
  ];
  if (o.tokenTypeIds) inits.push(floatTensor('token_types', [2, n], types));
  const inputs = [valueInfo('input_ids', INT64, ['batch', 'sequence']), valueInfo('attention_mask', INT64, ['batch', 'sequence'])];
  if (o.tokenTypeIds) inputs.push(valueInfo('token_type_ids', INT64, ['batch', 'sequence']));
  if (o.extraInput) {
    inputs.push(valueInfo(o.extraInput, FLOAT, ['batch', 3]));
    // Use it, or ORT prunes nothing but still requires it; a harmless Identity keeps the graph valid.
    nodes.push(node('Identity', [o.extraInput], ['extra_out']));
  }
  // GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12
  const graph = cat(
    ...nodes.map((nd) => bytes(1, nd)),
    bytes(2, 'tiny_classifier'),
    ...inits.map((t) => bytes(5, t)),
    ...inputs.map((i) => bytes(11, i)),
    bytes(12, valueInfo(o.outputName ?? 'logits', FLOAT, ['batch', n])),
    ...(o.extraInput ? [bytes(12, valueInfo('extra_out', FLOAT, ['batch', 3]))] : []),
  );
  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 { domain = 1, version = 2 }
  return cat(vint(1, 8), bytes(2, 'bulwark-tests'), bytes(7, graph), bytes(8, cat(bytes(1, ''), vint(2, 13))));
}

/** A valid tokenizer.json: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] A [SEP] template. */
export function tinyTokenizerJson(): Record<string, unknown> {
  const vocab = tinyVocab();
  const special = (content: string) => ({
    id: vocab[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export interface TinyDirOptions extends TinyModelOptions {
  /** id2label written to config.json; `null` leaves it out. Default {0: SAFE, 1: INJECTION}. */
  id2label?: Record<string, string> | null;
  /** max_position_embeddings in config.json (default: maxPositions, 64). */
  maxPositionEmbeddings?: number;
  /** model_max_length in tokenizer_config.json; `null` writes no tokenizer_config.json. */
  modelMaxLength?: number | null;
}

/** Writes model.onnx, tokenizer.json, config.json (and tokenizer_config.json) into `dir`; returns `dir`. */
export function writeTinyClassifier(dir: string, o: TinyDirOptions = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'model.onnx'), buildTinyOnnx(o));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  const config: Record<string, unknown> = {
    architectures: ['TinyForSequenceClassification'],
    model_type: 'bert',
    max_position_embeddings: o.maxPositionEmbeddings ?? o.maxPositions ?? 64,
    type_vocab_size: o.tokenTypeIds ? 2 : 0,
  };
  const id2label = o.id2label === undefined ? { 0: 'SAFE', 1: 'INJECTION' } : o.id2label;
  if (id2label) {
    config.id2label = id2label;
    config.label2id = Object.fromEntries(Object.entries(id2label).map(([k, v]) => [v, Number(k)]));
  }
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  if (o.modelMaxLength !== null) {
    fs.writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify(
        {
          do_lower_case: true,
          cls_token: '[CLS]',
          sep_token: '[SEP]',
          unk_token: '[UNK]',
          pad_token: '[PAD]',
          model_max_length: o.modelMaxLength ?? 1e30,
          tokenizer_class: 'BertTokenizer',
        },
        null,
        2,
      ),
    );
  }
  return dir;
}
