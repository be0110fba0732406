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

/**
 * Ordinary tools the general server scenarios of the conformance suite call (`tools-call-*`,
 * `server-stateless`): content of every kind, a tool error, progress, an elicitation on the call,
 * logging on the server, and a question on a 2026-07-28 request stream.
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
   * Logs at every level, then answers. The lines go to the server's log only: a client hears
   * of them on no stream (2026-07-28 sends `notifications/message` only to a request that set a
   * log level, and this server offers no MCP logging at all).
   */
  @Tool()
  async testLoggingTool(ctx: TaskContext): Promise<string> {
    ctx.log.debug('test_logging_tool: debug');
    ctx.log.info('test_logging_tool: info');
    ctx.log.warn('test_logging_tool: warn');
    ctx.log.error('test_logging_tool: error');
    return 'Logged four lines on the server';
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
}
