// D3 in docs/performance.md, the early forward of reads; EARLY_FORWARD=false turns it off.
//
// A read (GET) whose caller is most likely the one its token was last authenticated as goes to the
// service at once, beside its authentication (the auth-state read and the rate-limit count) instead
// of after it. Nothing is decided by the guess: the guard authenticates the request as before, and
// the early answer is relayed only when the request ends authenticated as that very principal (the
// same object: the authenticator builds a new one when the caller's stored state changes, D9).
// Otherwise it is dropped unread, and a request allowed after all is forwarded again as whoever it
// was authenticated as. Only reads: a service does nothing for a GET but answer, so a dropped answer
// cost it that work and changed nothing. Never for writes, API keys, a token's first request here,
// a token refused since, or a permission the principal lacks.
//
// Bounded by the rate limit (docs/security.md §9): no early forward while the caller's bucket had
// EARLY_MIN_REMAINING requests or fewer left at its last count here, and at most EARLY_IN_FLIGHT_MAX
// of one bucket's requests forwarded early and not yet answered or refused at once; a burst beyond
// the budget reaches the service at most that many times more than the budget allows.
import type { RequestHandler, Response } from "express";
import type { Principal } from "@crm/contracts";
import type { Security } from "../security";
import type { UpstreamResponse } from "./forwarder";
import type { RouteMatch } from "./route-table";

/** Early forwards of one bucket in flight at once, at most. */
export const EARLY_IN_FLIGHT_MAX = 4;
/** No early forward while a bucket had this many requests left or fewer at its last count. */
export const EARLY_MIN_REMAINING = EARLY_IN_FLIGHT_MAX;

declare global {
  namespace Express {
    interface Locals {
      /** A read forwarded before its authentication ended, as `principal`. */
      early?: { principal: Principal; answer: Promise<UpstreamResponse> };
    }
  }
}

export type CallService = (service: Exclude<RouteMatch["service"], "gateway">, req: Parameters<RequestHandler>[0], principal: Principal | undefined) => Promise<UpstreamResponse>;

export interface EarlyForward {
  /** After routing, before the guard: forwards the read now when the guess and the bounds allow. */
  start: RequestHandler;
  /** The early answer, when this request went early as `principal`; undefined otherwise (forward it now). */
  answerFor(res: Response, principal: Principal | undefined): Promise<UpstreamResponse> | undefined;
}

export function earlyForward(security: Pick<Security, "likelyCaller">, call: CallService): EarlyForward {
  /** Early forwards per bucket whose request has not ended yet. */
  const inFlight = new Map<string, number>();
  const start: RequestHandler = (req, res, next) => {
    const route = res.locals.route;
    if (req.method !== "GET" || !route || route.service === "gateway") return next();
    const likely = security.likelyCaller(req);
    if (!likely || likely.remaining <= EARLY_MIN_REMAINING) return next();
    const { bucket, principal } = likely;
    const held = inFlight.get(bucket) ?? 0;
    if (held >= EARLY_IN_FLIGHT_MAX) return next();
    inFlight.set(bucket, held + 1);
    // Held until the request ends, relayed or not: an answer buffered for a refused request counts.
    res.once("close", () => {
      const left = (inFlight.get(bucket) ?? 1) - 1;
      if (left > 0) inFlight.set(bucket, left);
      else inFlight.delete(bucket);
    });
    const answer = call(route.service, req, principal);
    // Awaited only if the guess holds; a dropped answer's failure must not surface as unhandled.
    answer.catch(() => undefined);
    res.locals.early = { principal, answer };
    next();
  };
  return {
    start,
    answerFor: (res, principal) => {
      const early = res.locals.early;
      return early && early.principal === principal ? early.answer : undefined;
    },
  };
}
