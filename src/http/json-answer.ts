/**
 * A JSON answer as its text, for the node:http endpoint to write as it is: status, headers and
 * body in one write with a `Content-Length`. A web `Response` would carry the same text in a
 * `ReadableStream` (undici builds one for every body), read back chunk by chunk and sent
 * chunked: on Node 20 that stream, its controller and its reader outlive young-generation
 * collections (~2 KB per answer copied and then promoted; bench/README.md, "1 Dec 2026, night"),
 * which is most of what made those collections long. Hosts that take a web `Response` (the task
 * server's `fetch`) get one from `toResponse()`.
 */
export class JsonAnswer {
  constructor(
    readonly status: number,
    /** The JSON text of the body. */
    readonly text: string,
  ) {}

  static of(status: number, message: unknown): JsonAnswer {
    return new JsonAnswer(status, JSON.stringify(message));
  }

  /** The same answer as a web `Response` (what `Response.json` would have built). */
  toResponse(): Response {
    return new Response(this.text, { status: this.status, headers: { 'content-type': 'application/json' } });
  }
}

/** A route's answer: a web `Response`, or a JSON answer the node endpoint writes as it is. */
export type Answer = Response | JsonAnswer;

/** `answer` as a web `Response`. */
export function asResponse(answer: Answer): Response {
  return answer instanceof JsonAnswer ? answer.toResponse() : answer;
}
