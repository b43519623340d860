// A steady load through the gateway for the fault tests: a reader with a JWT, a reader with an API
// key, and a writer that creates clients one after another, each with an Idempotency-Key it sends
// again (after a short pause) until the create succeeds, as a careful client does after a 503000.
// With `everyService`, two more JWT readers: one of identity (API keys) and one of webhook-delivery (webhooks).
import { randomUUID } from "node:crypto";

export type AnswerKind = "jwt-read" | "key-read" | "create" | "identity-read" | "webhook-read";

export interface Answer {
  kind: AnswerKind;
  startedAt: number;
  /** When the answer (or the failure) came. */
  finishedAt: number;
  /** 0 when no answer came at all (connection refused or reset, time-out). */
  status: number;
  code?: number;
  retryAfter: string | null;
}

/** A client the writer created: its Idempotency-Key (also its firstName), its id and when, in creation order. */
export interface Created {
  key: string;
  id: string;
  at: number;
}

export interface SteadyLoad {
  readonly answers: Answer[];
  readonly created: Created[];
  /** Stops issuing new work; the writer still finishes the client it was creating. */
  stop(): Promise<void>;
}

const PAUSE_MS = 50;
const REQUEST_TIMEOUT_MS = 10_000;
/** How long the writer keeps retrying one create before it gives up (the test then fails on it). */
const CREATE_GIVE_UP_MS = 60_000;

export function startSteadyLoad(baseUrl: string, credentials: { accessToken: string; apiKey: string }, options: { everyService?: boolean } = {}): SteadyLoad {
  const answers: Answer[] = [];
  const created: Created[] = [];
  let running = true;
  const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  const jwt = { authorization: `Bearer ${credentials.accessToken}` };

  async function call(kind: AnswerKind, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body?: any }> {
    const startedAt = Date.now();
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      answers.push({ kind, startedAt, finishedAt: Date.now(), status: res.status, code: parsed?.error?.code, retryAfter: res.headers.get("retry-after") });
      return { status: res.status, body: parsed };
    } catch {
      answers.push({ kind, startedAt, finishedAt: Date.now(), status: 0, retryAfter: null });
      return { status: 0 };
    }
  }

  async function reader(kind: AnswerKind, headers: Record<string, string>, path = "/api/v1/client?perPage=1"): Promise<void> {
    while (running) {
      await call(kind, "GET", path, headers);
      await pause();
    }
  }

  async function writer(): Promise<void> {
    while (running) {
      const key = randomUUID();
      const giveUpAt = Date.now() + CREATE_GIVE_UP_MS;
      while (Date.now() < giveUpAt) {
        const res = await call("create", "POST", "/api/v1/client", { ...jwt, "idempotency-key": key }, { firstName: key, lastName: "Fault" });
        if (res.status === 201) {
          created.push({ key, id: res.body.data.id, at: Date.now() });
          break;
        }
        await pause();
      }
      await pause();
    }
  }

  const lanes = [reader("jwt-read", jwt), reader("key-read", { "x-api-key": credentials.apiKey }), writer()];
  if (options.everyService) lanes.push(reader("identity-read", jwt, "/api/v1/api-key?perPage=1"), reader("webhook-read", jwt, "/api/v1/webhook?perPage=1"));
  return {
    answers,
    created,
    stop: async () => {
      running = false;
      await Promise.all(lanes);
    },
  };
}
