// The gateway's cache-miss path: identity loads the state from its database, fills the shared
// cache and answers it. Any failure is 503000 (authentication fails closed).
import { internalAuthPaths, parseApiKeyAuthState, parseUserAuthState, type ApiKeyAuthState, type UserAuthState } from "@crm/auth-cache";
import { INTERNAL_TOKEN_HEADER } from "@crm/contracts";
import { errors } from "@crm/errors";
import { signInternalToken } from "@crm/service-kit";

const TIMEOUT_MS = 5000;
/** An internal token is valid 60 s; one is reused for 30 s so misses do not each pay a signature. */
const TOKEN_REUSE_MS = 30_000;

export class IdentityClient {
  private token: { value: string; madeAt: number } | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly internalTokenSecret: string,
  ) {}

  async user(userId: string): Promise<UserAuthState> {
    const state = parseUserAuthState(await this.call("GET", internalAuthPaths.user(userId)));
    if (!state) throw errors.unavailable();
    return state;
  }

  async apiKey(digest: string): Promise<ApiKeyAuthState> {
    const state = parseApiKeyAuthState(await this.call("POST", internalAuthPaths.apiKey, { digest }));
    if (!state) throw errors.unavailable();
    return state;
  }

  /** Batched `lastUsedAt` reports (see api-key-usage.ts). */
  async reportApiKeyUse(uses: ReadonlyArray<{ id: string; at: string }>): Promise<void> {
    await this.call("POST", internalAuthPaths.apiKeyUse, { uses });
  }

  private internalToken(): string {
    const now = Date.now();
    if (!this.token || now - this.token.madeAt > TOKEN_REUSE_MS) {
      this.token = { value: signInternalToken({}, this.internalTokenSecret), madeAt: now };
    }
    return this.token.value;
  }

  private async call(method: "GET" | "POST", path: string, body?: unknown): Promise<string> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { [INTERNAL_TOKEN_HEADER]: this.internalToken(), ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (cause) {
      throw errors.unavailable(undefined, { cause });
    }
    const text = await response.text();
    if (!response.ok) throw errors.unavailable(undefined, { cause: new Error(`identity answered ${response.status}`) });
    return text;
  }
}
