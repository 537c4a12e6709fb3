// A client of the 2026-07-28 revision, pinned to it, built on the TypeScript
// SDK's v2 client: it lists the tools, runs memory commands, listens for
// updates of one file and prints what it sees, one line a step. The Go test
// changes the file from another process once it prints "listening".
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import * as readline from 'node:readline';

const url = process.argv[2];
const uri = 'memory:///memories/todo.md';
const say = (...a) => console.log(JSON.stringify(a));

const client = new Client({ name: 'ts-v2', version: '2.4.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
say('protocol', client.getNegotiatedProtocolVersion?.() ?? client.transport?.protocolVersion ?? '');

const tools = await client.listTools();
say('tools', tools.tools.map((t) => t.name).sort());

const memory = async (args) => {
  const r = await client.callTool({ name: 'memory', arguments: args });
  return [r.content[0].text, r.isError === true];
};
say('create', ...(await memory({ command: 'create', path: '/memories/todo.md', file_text: '- one' })));
say('view', ...(await memory({ command: 'view', path: '/memories/todo.md' })));

const updated = new Promise((resolve) => {
  client.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri));
});
const sub = await client.listen({ resourceSubscriptions: [uri] });
say('listening', sub.honoredFilter.resourceSubscriptions ?? []);

say('updated', await updated);
const read = await client.readResource({ uri });
say('read', read.contents[0].text, read.cacheScope ?? '');
await sub.close();
await client.close();
