// memvault bridge for the Anthropic TypeScript SDK (@anthropic-ai/sdk).
//
// memvaultMemoryTool() is a betaMemoryTool handler set whose every command runs
// in one long-lived `memvault serve` process: the memory lives encrypted in a
// git-versioned vault, and each change the model makes is one commit naming its
// tool_use id. An error answer is thrown as the SDK's ToolError, so the tool
// runner sends memvault's text with is_error: true, byte for byte.
//
//   const memory = memvaultMemoryTool({ agent: 'my-agent' });
//   const final = await client.beta.messages.toolRunner({ ..., tools: [memory] });
//   await memory.close();
//
// `memvault` must be on PATH (or pass command); it finds its vault and
// identity as it always does: --vault/--identity in args, else MEMVAULT_DIR
// and MEMVAULT_IDENTITY, else the defaults.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';

export interface MemvaultOptions {
  /** The memvault executable; default "memvault". */
  command?: string;
  /** Arguments before "serve", such as ["--vault", dir]. */
  args?: string[];
  /** Who makes the changes, for the commits' Agent and Session trailers. */
  agent?: string;
  session?: string;
  /** The environment of the process; default this one's. */
  env?: NodeJS.ProcessEnv;
}

/** One answer of memvault serve: the tool_result text and its is_error flag. */
export interface Answer {
  content: string;
  is_error: boolean;
}

/** A `memvault serve` process: one JSON request a line in, one answer a line out, in order. */
export class MemvaultServe {
  #proc: ChildProcessWithoutNullStreams;
  #pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  #next = 1;
  #failed: Error | undefined;
  #exited: Promise<void>;

  constructor(opts: MemvaultOptions = {}) {
    const args = [...(opts.args ?? []), 'serve'];
    if (opts.agent) args.push('--agent', opts.agent);
    if (opts.session) args.push('--session', opts.session);
    this.#proc = spawn(opts.command ?? 'memvault', args, { env: opts.env ?? process.env });
    this.#proc.stderr.pipe(process.stderr);
    createInterface({ input: this.#proc.stdout }).on('line', (line) => {
      const answer = JSON.parse(line) as Answer & { id: number | null };
      // Answers come in order, so one whose id is null (memvault could not read
      // the request's) answers the oldest call waiting. A Map keeps insertion order.
      const id = answer.id !== null && this.#pending.has(answer.id) ? answer.id : this.#pending.keys().next().value;
      if (id === undefined) return;
      const waiter = this.#pending.get(id);
      this.#pending.delete(id);
      waiter?.resolve({ content: answer.content, is_error: answer.is_error });
    });
    this.#exited = new Promise((resolve) => {
      this.#proc.on('close', (code, signal) => {
        this.#fail(new Error(`memvault serve exited (${signal ?? code})`));
        resolve();
      });
    });
    this.#proc.on('error', (err) => this.#fail(err));
  }

  /** Runs one tool input; toolUseId goes into the commit it makes. */
  call(input: unknown, toolUseId?: string): Promise<Answer> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Written at once, so calls reach memvault in the order they are made.
      this.#proc.stdin.write(JSON.stringify({ id, input, tool_use_id: toolUseId }) + '\n');
    });
  }

  /** Ends the process after the calls in flight. */
  async close(): Promise<void> {
    this.#proc.stdin.end();
    await this.#exited;
  }

  #fail(err: Error) {
    this.#failed ??= err;
    for (const waiter of this.#pending.values()) waiter.reject(this.#failed);
    this.#pending.clear();
  }
}

/** The memory tool for the SDK's tool runner, backed by memvault. */
export function memvaultMemoryTool(opts: MemvaultOptions = {}) {
  const serve = new MemvaultServe(opts);
  const forward = async (input: unknown, toolUseId?: string): Promise<string> => {
    const answer = await serve.call(input, toolUseId);
    if (answer.is_error) throw new ToolError(answer.content);
    return answer.content;
  };
  const tool = betaMemoryTool({
    view: (command) => forward(command),
    create: (command) => forward(command),
    str_replace: (command) => forward(command),
    insert: (command) => forward(command),
    delete: (command) => forward(command),
    rename: (command) => forward(command),
  });
  return {
    ...tool,
    // The runner hands over the tool_use block: forward its input as the model
    // wrote it, with its id for the commit. memvault answers every input,
    // unknown commands included, as the contract says.
    run: (input: unknown, context?: { toolUse?: { id: string } }) => forward(input, context?.toolUse?.id),
    close: () => serve.close(),
  };
}
