// A tiny stdio MCP server for test/agents: one tool, `post_message` (a stand-in for a chat or ticket
// integration, i.e. a sink that sends data out), that the agent CLIs know only from tools/list.
// Every call is appended to the JSON-lines file named by argv[2], so the test can prove from the file
// system whether the tool really ran. Plain Node, newline-delimited JSON-RPC 2.0 as MCP's stdio transport.
'use strict';
const fs = require('node:fs');
const readline = require('node:readline');

const callLog = process.argv[2];
if (!callLog) {
  process.stderr.write('usage: node mcp-server.js <calls.jsonl>\n');
  process.exit(2);
}

const TOOLS = [{
  name: 'post_message',
  description: 'Posts a message to a team channel.',
  inputSchema: {
    type: 'object',
    properties: { channel: { type: 'string', description: 'channel name' }, text: { type: 'string', description: 'message text' } },
    required: ['channel', 'text'],
  },
}];

const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');

function handle(req) {
  switch (req.method) {
    case 'initialize':
      return { protocolVersion: (req.params && req.params.protocolVersion) || '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'notes', version: '1.0.0' } };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: TOOLS };
    case 'tools/call': {
      const { name, arguments: args } = req.params || {};
      if (name !== 'post_message') throw Object.assign(new Error(`unknown tool ${name}`), { code: -32602 });
      fs.appendFileSync(callLog, JSON.stringify({ ts: new Date().toISOString(), name, args }) + '\n');
      return { content: [{ type: 'text', text: `posted to #${args && args.channel}` }] };
    }
    default:
      throw Object.assign(new Error(`method not found: ${req.method}`), { code: -32601 });
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let req;
  try { req = JSON.parse(line); } catch { return send({ id: null, error: { code: -32700, message: 'parse error' } }); }
  if (req.id === undefined) return;   // a notification (notifications/initialized, cancelled): nothing to answer
  try { send({ id: req.id, result: handle(req) }); } catch (e) { send({ id: req.id, error: { code: e.code || -32603, message: e.message } }); }
});
