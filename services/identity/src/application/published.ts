import { errors } from "@crm/errors";

/**
 * A write to the shared store that did not land leaves the gateways on the old state (a revoked key
 * or an ended session still accepted), so the request must not answer as if it had worked: 503000
 * tells the client to retry, and every such write path repeats its write on a retry.
 */
export async function published(write: Promise<void>): Promise<void> {
  try {
    await write;
  } catch (cause) {
    throw errors.unavailable(undefined, { cause });
  }
}
