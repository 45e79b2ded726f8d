// A scripted model server for the real agent CLIs (test/agents): plain Node, no dependencies, 127.0.0.1 only.
//
// It speaks the four wire protocols the clients use and proposes a fixed sequence of tool calls:
//   Anthropic Messages   POST /v1/messages (SSE or JSON), /v1/messages/count_tokens          (Claude Code)
//   Gemini               POST …/models/<m>:generateContent | :streamGenerateContent[?alt=sse] | :countTokens (Gemini CLI)
//   OpenAI Responses     POST …/responses (SSE)                                               (Codex)
//   OpenAI Chat          POST …/chat/completions (SSE or JSON), GET …/models                  (Copilot CLI, BYOK)
//
// A scenario is { steps: [{ tool, input, custom? }], final?, sideText? }. Step i is proposed when the
// request already carries i tool results, so a client's retries and side calls never advance it; after
// the last step the model answers `final`. Requests without tools are the clients' side calls (titles,
// routing, next-speaker checks) and get `sideText`: Gemini parses it as JSON, hence the JSON default.
// Responses only: `custom: true` sends a freeform custom_tool_call with a string input (Codex's apply_patch),
// `namespace` a function call inside a tool namespace (Codex's MCP tools, `mcp__<server>`), and `item` any
// other output item as given (Codex's client-side tool_search_call).
//
// Every request is appended to a JSON-lines log with what the model was told: the tool names offered and
// each tool result as text, beside the raw body (credentials in headers are not logged). A proxy request
// (CONNECT or an absolute URI) is refused and logged, so a client that tries another host shows up.
'use strict';
const http = require('node:http');
const fs = require('node:fs');

const GEMINI_SIDE_TEXT = JSON.stringify({ reasoning: 'scripted', next_speaker: 'user', complexity_reasoning: 'scripted', complexity_score: 1, model_choice: 'flash' });
const SECRET_HEADERS = /^(authorization|x-api-key|x-goog-api-key|api-key|cookie|proxy-authorization)$/i;

/** Text of a tool result in any of the protocols' shapes (string, content parts, {output|error}). */
function textOf(v) {
  if (v == null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('\n');
  if (typeof v === 'object') {
    if (typeof v.text === 'string') return v.text;
    if ('output' in v || 'error' in v || 'content' in v) return [v.output, v.error, v.content].filter((x) => x != null).map(textOf).join('\n');
    return JSON.stringify(v);
  }
  return String(v);
}

/** The protocol adapters: how a request counts tool results, names its tools, and how a reply is shaped. */
const PROTOCOLS = {
  anthropic: {
    tools: (b) => (Array.isArray(b.tools) ? b.tools.map((t) => t.name) : []),
    results: (b) => (b.messages || []).flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((c) => c && c.type === 'tool_result')
      .map((c) => ({ callId: c.tool_use_id, isError: c.is_error === true, text: textOf(c.content) })),
  },
  gemini: {
    tools: (b) => (b.tools || []).flatMap((t) => (t.functionDeclarations || []).map((f) => f.name)),
    results: (b) => (b.contents || []).flatMap((c) => c.parts || []).filter((p) => p.functionResponse)
      .map((p) => ({ callId: p.functionResponse.id, name: p.functionResponse.name, text: textOf(p.functionResponse.response) })),
  },
  responses: {
    tools: (b) => (b.tools || []).map((t) => t.name || t.type),
    results: (b) => (Array.isArray(b.input) ? b.input : [])
      .filter((i) => i && /^(function_call_output|custom_tool_call_output|local_shell_call_output|tool_search_output)$/.test(i.type))
      .map((i) => ({ callId: i.call_id, text: textOf(i.output ?? i.tools) })),
  },
  chat: {
    tools: (b) => (b.tools || []).map((t) => (t.function ? t.function.name : t.name)),
    results: (b) => (b.messages || []).filter((m) => m.role === 'tool').map((m) => ({ callId: m.tool_call_id, text: textOf(m.content) })),
  },
};

function protocolOf(method, url) {
  if (method !== 'POST') return undefined;
  if (/^\/v1\/messages(\/count_tokens)?(\?|$)/.test(url)) return 'anthropic';
  if (/\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)(\?|$)/.test(url)) return 'gemini';
  if (/\/responses(\?|$)/.test(url)) return 'responses';
  if (/\/chat\/completions(\?|$)/.test(url)) return 'chat';
  return undefined;
}

function sendJson(res, status, obj) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}
/** Server-sent events; `named` adds the `event:` line (Anthropic and Responses use it, Chat and Gemini do not). */
function sendSse(res, events, named) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const [event, data] of events) {
    if (named) res.write(`event: ${event}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

/**
 * Starts the server. `scenario` is the object described above; `logFile` receives one JSON line per request
 * and per reply. Resolves to { port, url, close() }.
 */
function startModelServer({ scenario, logFile, host = '127.0.0.1', port = 0 }) {
  const steps = scenario.steps || [];
  const finalText = scenario.final || 'done';
  let seq = 0;
  const log = (entry) => fs.appendFileSync(logFile, JSON.stringify({ ts: new Date().toISOString(), ...entry }) + '\n');

  /** What to answer: the next scripted step when the request offers tools, else text. */
  function nextTurn(body, proto, nResults) {
    const offersTools = PROTOCOLS[proto].tools(body).length > 0;
    if (offersTools && nResults < steps.length) return { step: steps[nResults], index: nResults };
    const text = offersTools ? finalText : (scenario.sideText ?? (proto === 'gemini' ? GEMINI_SIDE_TEXT : 'ok'));
    return { text };
  }

  function anthropic(req, res, body, turn) {
    if (req.url.startsWith('/v1/messages/count_tokens')) return sendJson(res, 200, { input_tokens: 100 });
    const id = `msg_scripted_${++seq}`;
    const block = turn.step
      ? { type: 'tool_use', id: `toolu_scripted_${turn.index}_${seq}`, name: turn.step.tool, input: turn.step.input }
      : { type: 'text', text: turn.text };
    const stop = turn.step ? 'tool_use' : 'end_turn';
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!body.stream) return sendJson(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content: [block], stop_reason: stop, stop_sequence: null, usage });
    // The tool input goes out as one input_json_delta after an empty input, as the real API streams it.
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
    sendSse(res, [
      ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
      ['message_stop', { type: 'message_stop' }],
    ], true);
  }

  function gemini(req, res, body, turn) {
    if (/:countTokens/.test(req.url)) return sendJson(res, 200, { totalTokens: 100 });
    const part = turn.step ? { functionCall: { name: turn.step.tool, args: turn.step.input, id: `call_scripted_${turn.index}` } } : { text: turn.text };
    const reply = {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: 'gemini-scripted',
    };
    if (!/:streamGenerateContent/.test(req.url)) return sendJson(res, 200, reply);
    if (/alt=sse/.test(req.url)) return sendSse(res, [['', reply]], false);
    return sendJson(res, 200, [reply]);   // streaming without SSE is a JSON array of chunks
  }

  function responses(req, res, body, turn) {
    ++seq;
    let item;
    if (turn.step && turn.step.item) {
      item = { id: `item_scripted_${seq}`, call_id: `call_scripted_${turn.index}`, status: 'completed', ...turn.step.item };
    } else if (turn.step && turn.step.custom) {
      item = { type: 'custom_tool_call', id: `ctc_scripted_${seq}`, call_id: `call_scripted_${turn.index}`, name: turn.step.tool, input: turn.step.input, status: 'completed' };
    } else if (turn.step) {
      item = { type: 'function_call', id: `fc_scripted_${seq}`, call_id: `call_scripted_${turn.index}`, name: turn.step.tool, arguments: JSON.stringify(turn.step.input), status: 'completed',
        ...(turn.step.namespace ? { namespace: turn.step.namespace } : {}) };
    } else {
      item = { type: 'message', id: `msg_scripted_${seq}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
    }
    const base = { id: `resp_scripted_${seq}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model, status: 'in_progress', output: [] };
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    const done = { ...base, status: 'completed', output: [item], usage };
    if (!body.stream) return sendJson(res, 200, done);
    let n = 0;
    sendSse(res, [
      ['response.created', { type: 'response.created', sequence_number: n++, response: base }],
      ['response.output_item.added', { type: 'response.output_item.added', sequence_number: n++, output_index: 0, item: { ...item, status: 'in_progress' } }],
      ['response.output_item.done', { type: 'response.output_item.done', sequence_number: n++, output_index: 0, item }],
      ['response.completed', { type: 'response.completed', sequence_number: n++, response: done }],
    ], true);
  }

  function chat(req, res, body, turn) {
    const id = `chatcmpl-scripted-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const message = turn.step
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_scripted_${turn.index}`, type: 'function', function: { name: turn.step.tool, arguments: JSON.stringify(turn.step.input) } }] }
      : { role: 'assistant', content: turn.text };
    const finish = turn.step ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!body.stream) return sendJson(res, 200, { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
    const delta = message.tool_calls ? { role: 'assistant', tool_calls: message.tool_calls.map((t, i) => ({ index: i, ...t })) } : message;
    const chunk = (d, f, extra) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta: d, finish_reason: f }], ...extra });
    sendSse(res, [['', chunk(delta, null)], ['', chunk({}, finish, { usage })], ['', '[DONE]']], false);
  }

  const handlers = { anthropic, gemini, responses, chat };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = raw ? JSON.parse(raw) : null; } catch { body = raw; }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, SECRET_HEADERS.test(k) ? '[not logged]' : v]));
      if (/^[a-z]+:\/\//i.test(req.url)) {
        log({ kind: 'proxy-refused', method: req.method, url: req.url });
        res.writeHead(502);
        return res.end('model-server: not a proxy');
      }
      const proto = protocolOf(req.method, req.url);
      try {
        if (!proto) {
          log({ kind: 'request', method: req.method, url: req.url, headers, body });
          if (req.method === 'GET' && /\/models(\?|$)/.test(req.url)) return sendJson(res, 200, { object: 'list', data: [{ id: 'scripted-model', object: 'model' }], models: [] });
          return sendJson(res, 404, { error: { type: 'not_found_error', message: `model-server: no route for ${req.method} ${req.url}` } });
        }
        const b = body && typeof body === 'object' ? body : {};
        const tools = PROTOCOLS[proto].tools(b);
        const toolResults = PROTOCOLS[proto].results(b);
        log({ kind: 'request', proto, method: req.method, url: req.url, headers, tools, toolResults, body });
        const turn = nextTurn(b, proto, toolResults.length);
        log({ kind: 'reply', proto, offersTools: tools.length > 0, nResults: toolResults.length, step: turn.step ? turn.index : null, text: turn.text ?? null });
        handlers[proto](req, res, b, turn);
      } catch (e) {
        log({ kind: 'error', error: String(e && e.stack) });
        sendJson(res, 500, { error: { message: String(e) } });
      }
    });
  });
  server.on('connect', (req, socket) => {
    log({ kind: 'proxy-refused', method: 'CONNECT', url: req.url });
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      resolve({
        port: p,
        url: `http://${host}:${p}`,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      });
    });
  });
}

/** Reads a model-server log back: one object per line (a torn last line is skipped). */
function readModelLog(logFile) {
  if (!fs.existsSync(logFile)) return [];
  return fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).flatMap((l) => { try { return [JSON.parse(l)]; } catch { return []; } });
}

module.exports = { startModelServer, readModelLog, textOf };

// CLI: node model-server.js <scenario.json> <log.jsonl> [portfile]  (runs until killed)
if (require.main === module) {
  const [scenarioFile, logFile, portFile] = process.argv.slice(2);
  if (!scenarioFile || !logFile) {
    process.stderr.write('usage: node model-server.js <scenario.json> <log.jsonl> [portfile]\n');
    process.exit(2);
  }
  startModelServer({ scenario: JSON.parse(fs.readFileSync(scenarioFile, 'utf8')), logFile }).then(({ port, url }) => {
    if (portFile) fs.writeFileSync(portFile, String(port));
    process.stdout.write(`model-server listening on ${url}\n`);
  }, (e) => { process.stderr.write(`model-server: ${e.message}\n`); process.exit(1); });
}
