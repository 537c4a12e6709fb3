// sdkserve.js answers the JSON lines of `memvault serve` with the Anthropic
// TypeScript SDK's local-filesystem memory tool, the plain-folder backend the
// SDK ships for memory_20250818, so both can be driven by the same harness.
//
//	node sdkserve.js BASE   (files live in BASE/memories)
//
// A request is {"id": ..., "input": {...}}; its answer is
// {"id": ..., "content": "...", "is_error": bool}, in order, one line each.
"use strict";
const readline = require("readline");
const { BetaLocalFilesystemMemoryTool } = require("@anthropic-ai/sdk/tools/memory/node");

async function main() {
  const tool = await BetaLocalFilesystemMemoryTool.init(process.argv[2]);
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const req = JSON.parse(line);
    let content;
    let isError = false;
    try {
      const run = tool[req.input.command];
      if (typeof run !== "function") throw new Error("Unknown command: " + req.input.command);
      content = await run.call(tool, req.input);
    } catch (err) {
      content = "Error: " + err.message;
      isError = true;
    }
    process.stdout.write(JSON.stringify({ id: req.id ?? null, content, is_error: isError }) + "\n");
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
