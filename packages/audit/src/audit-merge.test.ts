import type { AuditEntryView } from "@crm/contracts";
import { mergePages } from "./audit-merge";

const entry = (occurredAt: string, id: string) => ({ id, occurredAt }) as AuditEntryView;

describe("mergePages", () => {
  it("takes the newest perPage of the sources by (occurredAt desc, id desc), and says whether more follow", () => {
    const records = [entry("2026-01-03T00:00:00.000Z", "c"), entry("2026-01-01T00:00:00.000Z", "a")];
    const identity = [entry("2026-01-03T00:00:00.000Z", "d"), entry("2026-01-02T00:00:00.000Z", "b")];
    const webhooks: AuditEntryView[] = [];
    const { page, more } = mergePages([records, identity, webhooks], 3);
    expect(page.map((e) => e.id)).toEqual(["d", "c", "b"]);
    expect(more).toBe(true);
    expect(mergePages([records, identity, webhooks], 4)).toMatchObject({ more: false });
    expect(mergePages([[], [], []], 3)).toEqual({ page: [], more: false });
  });
});
