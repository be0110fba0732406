import { type Integer, NeedsInput, type TaskContext, Tool, type ToolContent } from 'mcp-task-server';

/** A 1×1 transparent PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=';
/** Eight samples of silence, 8-bit mono WAV. */
const WAV = 'UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==';

export interface UserInfo {
  /** Your user name. */
  username: string;
  /** Your e-mail address. */
  email: string;
}

/** A form whose every field has a default (SEP-1034). */
export interface Profile {
  /** @default "John Doe" */
  name?: string;
  /** @default 30 */
  age?: Integer;
  /** @default 95.5 */
  score?: number;
  /** @default "active" */
  status?: 'active' | 'inactive' | 'pending';
  /** @default true */
  verified?: boolean;
}

/** What `test_streaming_elicitation` asks. */
export interface Confirmation {
  /** Go on? */
  confirmed: boolean;
}

/** A name, as the multi-round-trip scenarios ask for one. */
export interface NameGiven {
  name: string;
}

/** A favourite colour. */
export interface ColorGiven {
  color: string;
}

/** A yes or no. */
export interface Ok {
  ok: boolean;
}

/**
 * Ordinary tools the general server scenarios of the conformance suite call (`tools-call-*`,
 * `server-stateless`): content of every kind, a tool error, progress, an elicitation on the call,
 * log lines for the client, a question on a 2026-07-28 request stream, and the questions of the
 * multi-round-trip scenarios (`input-required-result-*`), which 2026-07-28 asks as
 * `input_required` results of the call itself.
 */
export class GeneralTools {
  /** Answers with a simple text. */
  @Tool()
  async testSimpleText(): Promise<string> {
    return 'This is a simple text response for testing.';
  }

  /** Answers with an image. */
  @Tool()
  async testImageContent(): Promise<ToolContent> {
    return [{ type: 'image', data: PNG, mimeType: 'image/png' }];
  }

  /** Answers with audio. */
  @Tool()
  async testAudioContent(): Promise<ToolContent> {
    return [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }];
  }

  /** Answers with an embedded resource. */
  @Tool()
  async testEmbeddedResource(): Promise<ToolContent> {
    return [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ];
  }

  /** Answers with text, an image and a resource together. */
  @Tool()
  async testMultipleContentTypes(): Promise<ToolContent> {
    return [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ];
  }

  /** Fails with a tool error. */
  @Tool()
  async testErrorHandling(): Promise<string> {
    throw new Error('This tool intentionally returns an error for testing');
  }

  /** Reports progress three times, then answers. */
  @Tool()
  async testToolWithProgress(ctx: TaskContext): Promise<string> {
    for (const progress of [0, 50, 100]) {
      ctx.progress({ progress, total: 100, message: `${progress}% done` });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return 'Progress reported';
  }

  /** Asks for a profile whose fields all have defaults. */
  @Tool()
  @NeedsInput<Profile>('profile', { message: 'Please confirm your profile' })
  async testElicitationSep1034Defaults(ctx: TaskContext<{ profile: Profile }>): Promise<string> {
    const answer = await ctx.input('profile');
    const content = answer.action === 'accept' ? answer.content : {};
    return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(content)}`;
  }

  /**
   * Asks the caller for their details on the call itself.
   * @param message What to ask.
   */
  @Tool()
  @NeedsInput<UserInfo>('info', { message: 'Please provide your information' })
  async testElicitation(message: string, ctx: TaskContext<{ info: UserInfo }>): Promise<string> {
    const answer = await ctx.input('info', { message });
    return answer.action === 'accept'
      ? `Thanks, ${answer.content.username} <${answer.content.email}>`
      : `You chose to ${answer.action}`;
  }

  /**
   * Logs at every level, then answers. The lines reach the client as `notifications/message`
   * only when it asked: on 2026-07-28 a request without a log level in its `_meta` hears none.
   */
  @Tool()
  async testLoggingTool(ctx: TaskContext): Promise<string> {
    ctx.log.debug('test_logging_tool: debug');
    ctx.log.info('test_logging_tool: info');
    ctx.log.warn('test_logging_tool: warn');
    ctx.log.error('test_logging_tool: error');
    return 'Logged four lines on the server';
  }

  /** Logs three lines, 50 ms apart, while it works. */
  @Tool()
  async testToolWithLogging(ctx: TaskContext): Promise<string> {
    ctx.log.info('Tool execution started');
    await new Promise((resolve) => setTimeout(resolve, 50));
    ctx.log.info('Tool processing data');
    await new Promise((resolve) => setTimeout(resolve, 50));
    ctx.log.info('Tool execution completed');
    return 'Logging completed';
  }

  /**
   * Asks the caller to confirm, on the call itself. On 2026-07-28 the question comes back as
   * the call's `input_required` result, never as a request of its own on the request's stream.
   */
  @Tool()
  @NeedsInput<Confirmation>('confirmation', { message: 'Go on?' })
  async testStreamingElicitation(ctx: TaskContext<{ confirmation: Confirmation }>): Promise<string> {
    const answer = await ctx.input('confirmation');
    return answer.action === 'accept' && answer.content.confirmed ? 'Confirmed' : `Not confirmed (${answer.action})`;
  }

  /** Asks for your name, then greets you. */
  @Tool()
  @NeedsInput<NameGiven>('user_name', { message: 'What is your name?' })
  async testInputRequiredResultElicitation(ctx: TaskContext<{ user_name: NameGiven }>): Promise<string> {
    const answer = await ctx.input('user_name');
    return answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `You chose to ${answer.action}`;
  }

  /**
   * Runs a step, asks for a confirmation, then says whether the step came back through the
   * request state: a step the retried call replays from the state does not run again, so a
   * lost or ignored state shows as a step that ran twice.
   */
  @Tool()
  @NeedsInput<Ok>('confirm', { message: 'Please confirm' })
  async testInputRequiredResultRequestState(ctx: TaskContext<{ confirm: Ok }>): Promise<string> {
    let ranInThisRound = false;
    const token = await ctx.step('token', () => {
      ranInThisRound = true;
      return Math.random().toString(36).slice(2);
    });
    const answer = await ctx.input('confirm');
    if (ranInThisRound) return `state lost: the step ran again (${answer.action})`;
    return `state-ok: step ${token} replayed from the request state (${answer.action})`;
  }

  /** Asks for your name, then, in a second round, your favourite colour. */
  @Tool()
  @NeedsInput<NameGiven>('step1', { message: 'Step 1: What is your name?' })
  @NeedsInput<ColorGiven>('step2', { message: 'Step 2: What is your favorite color?' })
  async testInputRequiredResultMultiRound(ctx: TaskContext<{ step1: NameGiven; step2: ColorGiven }>): Promise<string> {
    const name = await ctx.input('step1');
    const color = await ctx.input('step2');
    if (name.action !== 'accept' || color.action !== 'accept') return 'Not answered';
    return `${name.content.name} likes ${color.content.color}`;
  }

  /** Asks for a confirmation; the round's request state is sealed, so a changed one is refused. */
  @Tool()
  @NeedsInput<Ok>('confirm', { message: 'Please confirm' })
  async testInputRequiredResultTamperedState(ctx: TaskContext<{ confirm: Ok }>): Promise<string> {
    const answer = await ctx.input('confirm');
    return answer.action === 'accept' && answer.content.ok ? 'Confirmed' : 'Not confirmed';
  }
}
