// server.mjs: an MCP server on the TypeScript SDK v2 (@modelcontextprotocol/server
// 2.4.0) with the interop feature set (see servers/doc.go).
//
// usage: node server.mjs [--transport stdio|http] [--mode dual|modern|legacy]
//                        [--addr 127.0.0.1:0] [--tools N]
// Over HTTP it prints its endpoint URL as the first stdout line. Both eras are
// served by default (legacy over HTTP is the SDK's stateless fallback, so no
// server-to-client requests there); --mode modern rejects legacy traffic.
import http from 'node:http';
import { parseArgs } from 'node:util';
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const { values: opts } = parseArgs({
  options: {
    transport: { type: 'string', default: 'stdio' },
    mode: { type: 'string', default: 'dual' },
    addr: { type: 'string', default: '127.0.0.1:0' },
    tools: { type: 'string', default: '0' },
  },
});
if (!['dual', 'modern'].includes(opts.mode)) {
  console.error(`ts server: unsupported --mode ${opts.mode} (dual|modern)`);
  process.exit(2);
}
const fillers = Number.parseInt(opts.tools, 10) || 0;

const obj = (properties, required = []) => fromJsonSchema({ type: 'object', properties, required });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function build() {
  const s = new McpServer(
    { name: 'interop-ts-server', version: '1.0.0' },
    { instructions: 'interop test server (TypeScript SDK v2)' },
  );
  s.registerTool('echo', { description: 'Echoes text', inputSchema: obj({ text: { type: 'string' } }) },
    async ({ text: t }) => text(t ?? ''));
  s.registerTool('add', { description: 'Adds a and b', inputSchema: obj({ a: { type: 'number' }, b: { type: 'number' } }) },
    async ({ a, b }) => text(String((a ?? 0) + (b ?? 0))));
  s.registerTool('slow-with-progress', { description: 'Reports progress steps times', inputSchema: obj({ steps: { type: 'number' } }) },
    async ({ steps }, ctx) => {
      const n = steps > 0 ? steps : 3;
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        for (let i = 1; i <= n; i++) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: n, message: `step ${i} of ${n}` },
          });
        }
      }
      return text('done');
    });
  s.registerTool('ask-name', { description: "Elicits the user's name", inputSchema: obj({}) },
    async (_args, ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'name');
      if (r.kind === 'elicit') {
        if (r.action !== 'accept') return text(`no name (${r.action})`);
        return text(`Hello, ${r.content?.name ?? ''}!`);
      }
      return inputRequired({
        inputRequests: {
          name: inputRequired.elicit({
            message: 'What is your name?',
            requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          }),
        },
      });
    });
  s.registerTool('sample', { description: "Asks the client's LLM a question", inputSchema: obj({}) },
    async (_args, ctx) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'q');
      if (r.kind === 'sampling') {
        const c = Array.isArray(r.result.content) ? r.result.content[0] : r.result.content;
        return text(`Sampling response: ${c?.type === 'text' ? c.text : '(non-text)'}`);
      }
      return inputRequired({
        inputRequests: {
          q: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
            maxTokens: 100,
          }),
        },
      });
    });
  s.registerTool('big', { description: 'Returns size bytes of text', inputSchema: obj({ size: { type: 'number' } }) },
    async ({ size }) => {
      if (!(size >= 0 && size <= 64 << 20)) return { ...text('size out of range'), isError: true };
      return text('x'.repeat(size));
    });
  for (let i = 0; i < fillers; i++) {
    s.registerTool(`filler-${String(i).padStart(4, '0')}`,
      { description: 'Filler tool for list benchmarks', inputSchema: obj({ text: { type: 'string' } }) },
      async ({ text: t }) => text(t ?? ''));
  }
  s.registerPrompt('greet', { description: 'Greets someone', argsSchema: obj({ name: { type: 'string' } }, ['name']) },
    async ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}!` } }] }));
  s.registerResource('static', 'test://static', { mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'static resource' }] }));
  return s;
}

if (opts.transport === 'stdio') {
  serveStdio(() => build(), { legacy: opts.mode === 'modern' ? 'reject' : 'serve', onerror: (e) => console.error('ts server:', e.message) });
} else if (opts.transport === 'http') {
  const [host, portStr] = opts.addr.split(':');
  if (host !== '127.0.0.1') {
    console.error(`ts server: --addr must be 127.0.0.1:<port>, got ${opts.addr}`);
    process.exit(2);
  }
  const handler = createMcpHandler(() => build(), {
    legacy: opts.mode === 'modern' ? 'reject' : 'stateless',
    onerror: (e) => console.error('ts server:', e.message),
  });
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, `http://${req.headers.host ?? opts.addr}`);
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        for await (const c of req) chunks.push(c);
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const ac = new AbortController();
      res.on('close', () => ac.abort());
      const request = new Request(url, {
        method: req.method,
        headers,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
        signal: ac.signal,
      });
      const response = await handler.fetch(request);
      const out = {};
      response.headers.forEach((v, k) => { out[k] = v; });
      res.writeHead(response.status, out);
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      res.on('close', () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch (e) {
      console.error('ts server:', e?.message ?? e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(Number.parseInt(portStr, 10) || 0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(`http://127.0.0.1:${a.port}/mcp\n`);
  });
  const stop = () => { handler.close().finally(() => server.close(() => process.exit(0))); server.closeAllConnections?.(); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  console.error(`ts server: unknown --transport ${opts.transport}`);
  process.exit(2);
}
