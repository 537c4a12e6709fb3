// The other end of TestTypeScriptBridgeNullID: a request memvault serve cannot
// read an id from (nested deeper than its JSON reader allows), then an
// ordinary one. Prints both answers as JSON. Run with node --stack-size large
// enough for JSON.stringify to write the deep request.
const { MemvaultServe } = require(process.argv[2]);

function within(p, what) {
  return Promise.race([
    p,
    // unref: a timer still pending must not keep node running once the answers are in.
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer to ${what} within 30s`)), 30000).unref()),
  ]);
}

(async () => {
  const serve = new MemvaultServe({ agent: 'ts-null-id' });
  let deep = [];
  for (let i = 0; i < 10500; i++) deep = [deep];
  const first = await within(serve.call(deep), 'the unreadable request');
  const second = await within(serve.call({ command: 'view', path: '/memories' }), 'the request after it');
  console.log(JSON.stringify([first, second]));
  await serve.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
