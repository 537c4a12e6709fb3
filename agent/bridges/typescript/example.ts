// The README's TypeScript example: Claude with its memory in memvault.
//
//   npx tsc && node out/example.js "Remember that I prefer tea."
import Anthropic from '@anthropic-ai/sdk';
import { memvaultMemoryTool } from './memvault';

async function main() {
  const client = new Anthropic(); // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
  const memory = memvaultMemoryTool({ agent: 'my-ts-agent' });
  try {
    const final = await client.beta.messages.toolRunner({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      betas: ['context-management-2025-06-27'],
      tools: [memory],
      messages: [{ role: 'user', content: process.argv[2] ?? 'What do you remember about me?' }],
    });
    for (const block of final.content) {
      if (block.type === 'text') console.log(block.text);
    }
  } finally {
    await memory.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
