/**
 * The audit trail: one structured line per create, answer, cancel, delete and result handed
 * out, naming who (the principal, `null` when anonymous), which task and which tool, at info
 * level. Never arguments, answers or results. The engine states the facts; this is the one
 * place that turns them into log lines.
 */
import type { AuditSink } from '../engine/engine.js';
import type { Logger } from '../tools/logger.js';

export function auditLog(logger: Logger): AuditSink {
  return ({ event, principal, taskId, tool }) => logger.info('audit', { event, principal, taskId, tool });
}
