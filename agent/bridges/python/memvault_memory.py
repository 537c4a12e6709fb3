"""memvault bridge for the Anthropic Python SDK.

MemvaultMemoryTool is a BetaAbstractMemoryTool whose every command runs in one
long-lived `memvault serve` process: the memory lives encrypted in a
git-versioned vault, and each change the model makes is one commit. An error
answer is raised as the SDK's ToolError, so the tool runner sends memvault's
text with is_error, byte for byte.

    with MemvaultMemoryTool(agent="my-agent") as memory:
        runner = client.beta.messages.tool_runner(..., tools=[memory])

`memvault` must be on PATH (or pass command=); it finds its vault and identity
as it always does: --vault/--identity in args, else MEMVAULT_DIR and
MEMVAULT_IDENTITY, else the defaults.
"""

from __future__ import annotations

import json
import threading
import subprocess
from typing import Any, Mapping, Optional, Sequence

from anthropic.lib.tools import BetaAbstractMemoryTool

try:
    from anthropic.lib.tools import ToolError
except ImportError:  # SDK versions that keep it private
    from anthropic.lib.tools._beta_functions import ToolError

__all__ = ["MemvaultMemoryTool"]


class MemvaultMemoryTool(BetaAbstractMemoryTool):
    """The memory tool, backed by a `memvault serve` process. Safe to share between threads."""

    def __init__(
        self,
        *,
        command: str = "memvault",
        args: Sequence[str] = (),
        agent: Optional[str] = None,
        session: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        argv = [command, *args, "serve"]
        if agent:
            argv += ["--agent", agent]
        if session:
            argv += ["--session", session]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._lock = threading.Lock()
        self._next_id = 0

    def run(self, input: object, tool_use_id: Optional[str] = None) -> str:
        """Runs one tool input; returns the answer or raises ToolError with it."""
        with self._lock:  # one request, then its answer: calls never interleave
            self._next_id += 1
            request = {"id": self._next_id, "input": input}
            if tool_use_id:
                request["tool_use_id"] = tool_use_id
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"memvault serve exited ({self._proc.poll()})")
        answer = json.loads(line)
        if answer["is_error"]:
            raise ToolError(answer["content"])
        return answer["content"]

    def call(self, input: object) -> str:
        # The runner's entry: forward the input as the model wrote it, so memvault
        # answers every input, unknown commands included, as the contract says.
        return self.run(input)

    def tool_result(self, tool_use: Any) -> dict:
        """The tool_result block for a memory tool_use, for a loop of your own.
        The commit it makes records the tool_use id."""
        try:
            content, is_error = self.run(tool_use.input, tool_use.id), False
        except ToolError as err:
            content, is_error = err.content, True
        return {"type": "tool_result", "tool_use_id": tool_use.id, "content": content, "is_error": is_error}

    def view(self, command: Any) -> str:
        return self.run(_plain(command))

    def create(self, command: Any) -> str:
        return self.run(_plain(command))

    def str_replace(self, command: Any) -> str:
        return self.run(_plain(command))

    def insert(self, command: Any) -> str:
        return self.run(_plain(command))

    def delete(self, command: Any) -> str:
        return self.run(_plain(command))

    def rename(self, command: Any) -> str:
        return self.run(_plain(command))

    def close(self) -> None:
        """Ends the memvault process."""
        if self._proc.stdin and not self._proc.stdin.closed:
            self._proc.stdin.close()
        self._proc.wait()

    def __enter__(self) -> "MemvaultMemoryTool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain(command: Any) -> Any:
    """The command object as JSON-ready data, with the fields the model set."""
    if hasattr(command, "to_dict"):
        return command.to_dict()
    if hasattr(command, "model_dump"):
        return command.model_dump(exclude_unset=True)
    return dict(command)
