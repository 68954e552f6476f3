// Drives `mecha mcp serve` with the official TypeScript SDK client, as another agent would,
// and prints what came back as one JSON object on stdout (src/cli/mcp_serve_e2e_test.cc
// checks it, and what happened on the host).
//
//   node serve_client.mjs MECHA_BINARY WORK_TREE OUTSIDE_FILE
import { Client } from '../node/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../node/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';

const [mecha, tree, outside] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: mecha,
  args: ['mcp', 'serve', '-C', tree],
  stderr: 'inherit',
});
const client = new Client({ name: 'mecha-test', version: '1.0.0' });
await client.connect(transport);

const out = {
  server: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
};
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name);
out.readOnly = Object.fromEntries(listed.tools.map((t) => [t.name, t.annotations?.readOnlyHint]));

const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError === true, text: r.content.map((c) => c.text).join('') };
};
out.read = await call('Read', { file_path: 'notes.txt' });
out.bash = await call('Bash', { command: 'echo made > inside.txt && cat inside.txt' });
out.refusedSecret = await call('Bash', { command: 'cat ~/.ssh/id_rsa > stolen.txt' });
out.refusedDelete = await call('Bash', { command: 'rm -rf /' });
out.refusedWrite = await call('Write', { file_path: outside, content: 'escaped' });
out.badInput = await call('Read', { path: 'notes.txt' });

// A long command cancelled by the client: the call is abandoned, and the next one is not held
// up behind it.
const abort = new AbortController();
const started = Date.now();
const long = client.callTool({ name: 'Bash', arguments: { command: 'sleep 30; echo late > late.txt' } },
  undefined, { signal: abort.signal });
setTimeout(() => abort.abort('changed my mind'), 300);
try {
  await long;
  out.cancelled = 'completed';
} catch (e) {
  out.cancelled = 'aborted';
}
out.afterCancel = await call('Read', { file_path: 'notes.txt' });
out.afterCancelSeconds = (Date.now() - started) / 1000;

await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
