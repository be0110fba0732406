/** Questions asked in a terminal, behind an interface so tests can answer them. */
import { createInterface } from 'node:readline/promises';

export interface Prompter {
  /** Asks for a line of text; an empty answer takes `fallback`. */
  text(question: string, fallback: string): Promise<string>;
  /** Asks a yes/no question; anything but y/yes is no. */
  confirm(question: string): Promise<boolean>;
  /** Asks to pick one of `choices` by number or name; an empty answer takes the first. */
  choose(question: string, choices: readonly string[]): Promise<string>;
  close(): void;
}

/** The user ended the questions (Ctrl-C, or Ctrl-D / end of input). */
export class PromptCancelled extends Error {
  override readonly name = 'PromptCancelled';
}

export function terminalPrompter(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Prompter {
  const readline = createInterface({ input, output });
  const cancel = new AbortController();
  readline.on('SIGINT', () => cancel.abort());
  readline.on('close', () => cancel.abort());
  const ask = async (question: string) => {
    try {
      return (await readline.question(question, { signal: cancel.signal })).trim();
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw new PromptCancelled('cancelled', { cause: error });
      throw error;
    }
  };
  return {
    async text(question, fallback) {
      return (await ask(`${question} (${fallback}) `)) || fallback;
    },
    async confirm(question) {
      return /^y(es)?$/i.test(await ask(`${question} (y/N) `));
    },
    async choose(question, choices) {
      const listing = choices.map((choice, index) => `  ${index + 1}. ${choice}`).join('\n');
      for (;;) {
        const answer = await ask(`${question}\n${listing}\nChoose 1-${choices.length} (1) `);
        if (answer === '') return choices[0] as string;
        const picked = choices[Number(answer) - 1] ?? choices.find((choice) => choice === answer);
        if (picked !== undefined) return picked;
        output.write(`"${answer}" is not one of them.\n`);
      }
    },
    close() {
      readline.close();
    },
  };
}
