// One signed internal token per caller and second (docs/performance.md D9). A token's claims carry
// whole seconds (`iat`, `exp`), so every token signed for one principal within one second is the same
// bytes: this hands out the one already signed that second instead of signing it again (the
// principal's JSON, base64 and an HMAC per request). Keyed by the principal object, which the
// authenticator keeps while the caller's stored state is unchanged and replaces when it changes.
import type { Principal } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";

interface Signed {
  second: number;
  token: string;
}

export class InternalTokens {
  private readonly byPrincipal = new WeakMap<Principal, Signed>();
  /** Calls that act for nobody (a public route's forward). */
  private anonymous: Signed | undefined;

  /** `reuse` false (INTERNAL_TOKEN_REUSE=false): a signature per call, the same bytes. */
  constructor(
    private readonly secret: string,
    private readonly reuse = true,
    private readonly now: () => number = Date.now,
  ) {}

  /** The internal token naming `principal` (none: anonymous), issued this second. */
  for(principal: Principal | undefined): string {
    const second = Math.floor(this.now() / 1000);
    if (!this.reuse) return this.sign(principal, second);
    const known = principal ? this.byPrincipal.get(principal) : this.anonymous;
    if (known?.second === second) return known.token;
    const signed = { second, token: this.sign(principal, second) };
    if (principal) this.byPrincipal.set(principal, signed);
    else this.anonymous = signed;
    return signed.token;
  }

  private sign(principal: Principal | undefined, second: number): string {
    return signInternalToken(principal ? { principal } : {}, this.secret, undefined, second);
  }
}
