/**
 * How a running task shows on stderr: a progress bar when the task reports a total, a spinner
 * with its status message otherwise (cli-progress, in a terminal), or plain lines when output
 * is not a terminal. stdout is left to the result.
 */
import { SingleBar } from 'cli-progress';
import { sleepingUntil, type TaskQuestion, type TaskSnapshot } from '../../src/client/index.js';

export interface Display {
  status(task: TaskSnapshot): void;
  progress(progress: number, total?: number, message?: string): void;
  question(question: TaskQuestion): void;
  /** Clears the animation before a prompt or the final output. */
  pause(): void;
  resume(): void;
  stop(): void;
}

/** `animated` draws on the process's stderr terminal; plain lines go to `writeLine`. */
export function createDisplay(animated: boolean, writeLine: (text: string) => void): Display {
  return animated ? new AnimatedDisplay() : new PlainDisplay(writeLine);
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

class AnimatedDisplay implements Display {
  private bar: SingleBar | undefined;
  private mode: 'bar' | 'spinner' | undefined;
  private message = 'working';
  private total = 0;
  private value = 0;
  private paused = false;

  status(task: TaskSnapshot): void {
    this.message = task.statusMessage ?? task.status;
    if (task.status === 'input_required') return;
    this.draw();
  }

  progress(progress: number, total?: number, message?: string): void {
    if (message) this.message = message;
    this.value = progress;
    if (total !== undefined && total > 0) this.total = total;
    this.draw();
  }

  question(): void {
    this.pause();
  }

  pause(): void {
    this.paused = true;
    this.bar?.stop();
    this.bar = undefined;
    this.mode = undefined;
  }

  resume(): void {
    this.paused = false;
    this.draw();
  }

  stop(): void {
    this.pause();
  }

  private draw(): void {
    if (this.paused) return;
    const mode = this.total > 0 ? 'bar' : 'spinner';
    if (this.bar && this.mode !== mode) {
      // The task started reporting a total: swap the spinner for a bar.
      this.bar.stop();
      this.bar = undefined;
    }
    if (!this.bar) {
      this.mode = mode;
      this.bar = new SingleBar({
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: true,
        fps: 10,
        format:
          mode === 'bar'
            ? '{bar} {value}/{total} {message}'
            : (_options, _params, payload: { message: string }) =>
                `${FRAMES[Math.floor(Date.now() / 100) % FRAMES.length]} ${payload.message}`,
      });
      this.bar.start(mode === 'bar' ? this.total : 1, mode === 'bar' ? this.value : 0, { message: this.message });
    }
    if (mode === 'bar') this.bar.setTotal(this.total);
    this.bar.update(mode === 'bar' ? this.value : 0, { message: this.message });
  }
}

class PlainDisplay implements Display {
  private last = '';
  /** The status message last shown. */
  private message: string | undefined;

  constructor(private readonly write: (text: string) => void) {}

  status(task: TaskSnapshot): void {
    // The end of a sleep is news of its own: the note gives way to whatever comes next.
    const slept = sleepingUntil(this.message);
    if (slept && task.statusMessage !== this.message && task.status !== 'cancelled') {
      this.line(`woke: slept until ${slept.toISOString()}`);
    }
    this.message = task.statusMessage;
    this.line(`status: ${task.status}${task.statusMessage ? ` - ${task.statusMessage}` : ''}`);
  }

  progress(progress: number, total?: number, message?: string): void {
    this.line(`progress: ${progress}${total !== undefined ? `/${total}` : ''}${message ? ` - ${message}` : ''}`);
  }

  question(question: TaskQuestion): void {
    this.line(`question ${question.key}: ${question.message}`);
  }

  pause(): void {}
  resume(): void {}
  stop(): void {}

  private line(text: string): void {
    if (text === this.last) return;
    this.last = text;
    this.write(`${text}\n`);
  }
}
