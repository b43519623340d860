// A minimal HTTP client for the end-to-end tests: JSON in and out, cookies kept like a browser's jar,
// and every response checked against the product's own OpenAPI document when a validator is given.
import type { OpenApiResponseValidator } from "./openapi-validator";
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export class ApiClient {
  private cookies = new Map<string, string>();
  accessToken: string | undefined;
  apiKey: string | undefined;

  /** Responses that the OpenAPI document does not describe; tests assert this stays empty. */
  readonly undocumented: string[] = [];

  constructor(
    readonly baseUrl: string,
    private readonly validator?: OpenApiResponseValidator,
  ) {}

  async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const all: Record<string, string> = { accept: "application/json", ...headers };
    if (body !== undefined) all["content-type"] = "application/json";
    if (this.apiKey && !("x-api-key" in all)) all["x-api-key"] = this.apiKey;
    else if (this.accessToken && !("authorization" in all)) all.authorization = `Bearer ${this.accessToken}`;
    if (this.cookies.size > 0) all.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (this.validator && path.startsWith("/api/v1/")) {
      this.undocumented.push(
        ...this.validator.check(method, path.slice(0, path.indexOf("?") === -1 ? undefined : path.indexOf("?")), res.status, parsed, res.headers.get("content-type")),
      );
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Sign up a fresh business and keep its access token. */
  async signUp(suffix: string, password = "correct-horse-battery"): Promise<{ email: string; password: string; businessId: string }> {
    const email = `owner-${suffix}@example.test`;
    const res = await this.call("POST", "/api/v1/auth/sign-up", { businessName: `Business ${suffix}`, email, password, firstName: "Ada", lastName: "Owner" });
    if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
    this.accessToken = res.body.data.accessToken;
    return { email, password, businessId: res.body.data.business.id };
  }
}
