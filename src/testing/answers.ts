/**
 * Scripted answers: what a test says its "user" answers, by question. A key names the question
 * (`approval`) and answers every time it is asked (`approval`, `approval-2`, ...), unless the
 * exact key (`approval-2`) is given too.
 */
import type { QuestionAnswer, TaskQuestion } from '../client/index.js';

/** The form's content (accepted), or a whole answer (`{ action: 'decline' }`). */
export type ScriptedAnswer = Record<string, unknown> | QuestionAnswer;

/**
 * What a test's "user" answers: a table by question name (or exact key, `approval-2`), or a
 * function that decides per question; `undefined` from either declines.
 */
export type ScriptedAnswers =
  | Readonly<Record<string, ScriptedAnswer>>
  | ((question: TaskQuestion) => ScriptedAnswer | undefined | Promise<ScriptedAnswer | undefined>);

/** The answer to `question`, or undefined when the script has none. */
export async function scriptedAnswer(
  script: ScriptedAnswers | undefined,
  question: TaskQuestion,
): Promise<QuestionAnswer | undefined> {
  if (!script) return undefined;
  const answer =
    typeof script === 'function'
      ? await script(question)
      : (script[question.key] ?? script[question.key.replace(/-\d+$/, '')]);
  return answer === undefined ? undefined : toAnswer(answer);
}

function toAnswer(answer: ScriptedAnswer): QuestionAnswer {
  const action = (answer as { action?: unknown }).action;
  if (action === 'decline' || action === 'cancel') return { action };
  if (action === 'accept' && typeof (answer as { content?: unknown }).content === 'object')
    return answer as QuestionAnswer;
  return { action: 'accept', content: answer as Record<string, unknown> };
}
