// A client that pipelines memory commands over streamable HTTP as the
// TypeScript SDKs do when a caller does not await each call: every request is
// sent at once, a fraction of a millisecond after the one before it, each on
// a connection of its own. It prints one JSON line: the answers, in the order
// the calls were made, as [text, isError] pairs.
//
//   node pipeline.mjs v1|v2 legacy|modern URL COMMANDS_JSON
//
// v1 is @modelcontextprotocol/sdk (2025 revisions only), v2 is
// @modelcontextprotocol/client; modern pins v2 to 2026-07-28.
const [sdk, era, url, commandsJSON] = process.argv.slice(2);
const commands = JSON.parse(commandsJSON);

let Client, Transport;
if (sdk === 'v1') {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport: Transport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
} else {
  ({ Client, StreamableHTTPClientTransport: Transport } = await import('@modelcontextprotocol/client'));
}
const options = era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {};
const client = new Client({ name: `pipeline-${sdk}-${era}`, version: '1' }, options);
await client.connect(new Transport(new URL(url)));

// next lets the event loop send what was asked, then waits until gap
// milliseconds have passed since the last call: timers cannot wait less than
// one millisecond, and the requests go out a fraction of one apart.
const gap = 0.2;
let last = performance.now();
const next = async () => {
  await new Promise((resolve) => setImmediate(resolve));
  while (performance.now() < last + gap);
  last = performance.now();
};
const pending = [];
for (const args of commands) {
  pending.push(
    client.callTool({ name: 'memory', arguments: args }).then(
      (r) => [r.content[0].text, r.isError === true],
      (e) => [`thrown: ${e.message}`, true],
    ),
  );
  await next();
}
console.log(JSON.stringify(await Promise.all(pending)));
await client.close();
