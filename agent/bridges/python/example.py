"""The README's Python example: Claude with its memory in memvault.

    python3 example.py "Remember that I prefer tea."
"""

import sys

import anthropic

from memvault_memory import MemvaultMemoryTool

client = anthropic.Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
with MemvaultMemoryTool(agent="my-py-agent") as memory:
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-6",
        max_tokens=4096,
        betas=["context-management-2025-06-27"],
        tools=[memory],
        messages=[{"role": "user", "content": sys.argv[1] if len(sys.argv) > 1 else "What do you remember about me?"}],
    )
    final = runner.until_done()
    print("\n".join(block.text for block in final.content if block.type == "text"))
