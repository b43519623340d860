/** What stands for a credential in a webhook URL shown to readers. */
export const REDACTED = "****";

/**
 * The webhook URL as readers see it: a password in it becomes `****` (`https://user:****@host/...`);
 * a user part without a password (a token used as user name, `https://tok@host`) becomes `****`
 * itself. Everyone with webhooks.read (MEMBER included) sees webhook URLs, while the credential is
 * the receiver's; deliveries still use the stored URL. The result stays a valid absolute URL.
 */
export function redactUrlCredentials(stored: string): string {
  let url: URL;
  try {
    url = new URL(stored);
  } catch {
    return stored;
  }
  if (url.username === "" && url.password === "") return stored;
  if (url.password !== "") url.password = REDACTED;
  else url.username = REDACTED;
  return url.href;
}

/**
 * A URL sent back on update exactly as it was shown (a client that read, edited something else and
 * PUT the whole object) keeps the stored credentials instead of saving the `****` placeholder.
 */
export function isRedactedFormOf(candidate: string, stored: string): boolean {
  return candidate !== stored && redactUrlCredentials(stored) === candidate;
}
