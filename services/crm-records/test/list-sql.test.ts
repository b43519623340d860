// The list's SQL (list-sql.ts) against its specification: the Prisma arguments the query language
// compiles to (toPrismaWhere, toPrismaOrderBy, where-guard.ts), run by Prisma on the same rows.
// Every where and orderBy below must select the same records in the same order, with the same total,
// or fail with the same error code.
import { uuidv7, type RecordEntity } from "@crm/contracts";
import { AppError } from "@crm/errors";
import { parseOrderBy, parseWhere, toPrismaOrderBy, toPrismaWhere } from "@crm/query-language";
import { describePostgres } from "@crm/testing";
import type { DeletedMode } from "../src/domain/deleted-mode";
import { entityDefinitions, querySpecOf } from "../src/entities";
import { guardUuidFilters } from "../src/domain/where-guard";
import { delegateOf } from "../src/persistence/prisma";
import { countSeeded, sharedHarness, type Caller, type Mode } from "./harness";

const CLIENT_WHERES = [
  "isActive:true",
  "isActive:bool(false)",
  "NOT:isActive:true",
  "firstName:Ann",
  "firstName:ann",
  "firstName:contains:an",
  "firstName:startsWith:A",
  "lastName:endsWith:_x",
  "lastName:contains:%",
  "notes:contains:\\",
  "email:contains:example",
  "NOT:email:contains:example",
  "NOT:notes:contains:a",
  "email:gt:c",
  "NOT:email:lte:m",
  "lastName:gte:M,lastName:lt:T",
  "OR:[firstName:Ann,NOT:OR:[isActive:true,email:contains:x]]",
  "NOT:OR:[firstName:Ann,lastName:Smith]",
  "NOT:NOT:notes:contains:e",
  "OR:[NOT:email:a@example.com,isActive:false],lastName:startsWith:S",
  "createdAt:gte:date(2025-01-01T00:00:10Z)",
  "NOT:createdAt:lt:2025-01-01T00:00:20Z",
  "updatedAt:lte:date(2025-01-01)",
  "id:not-a-uuid",
  "NOT:id:not-a-uuid",
  "OR:[id:not-a-uuid,isActive:false]",
  `businessId:${uuidv7()}`,
  "NOT:businessId:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b",
];
const CLIENT_ORDERS = [undefined, "lastName:asc", "lastName:desc,firstName:asc", "email:asc", "email:desc", "notes:asc,email:desc", "isActive:asc,createdAt:asc", "id:asc"];
const INVOICE_WHERES = [
  "status:PAID",
  "NOT:status:DRAFT",
  "totalAmount:gt:100.5",
  "totalAmount:lte:int(50)",
  "totalAmount:gte:float(10.25)",
  "dueDate:lt:2025-03-01",
  "NOT:dueDate:lt:2025-03-01",
  "OR:[status:VOID,NOT:dueDate:gte:date(2025-02-01)]",
  "currency:EUR,notes:contains:a",
  "number:startsWith:INV-00001",
  "clientId:not-a-uuid",
  "NOT:clientId:not-a-uuid",
];
const INVOICE_ORDERS = [undefined, "status:asc", "totalAmount:desc", "dueDate:asc", "dueDate:desc,totalAmount:asc", "number:asc"];
const ERRORS: Array<[RecordEntity, string, number]> = [
  ["client", "id:contains:abc", 400019],
  ["client", "id:gt:not-a-uuid", 400019],
  ["client", "NOT:businessId:startsWith:0", 400019],
  ["invoice", "clientId:lt:abc", 400019],
];

function suite(mode: Mode) {
  const h = sharedHarness(mode);
  let caller: Caller;

  beforeAll(async () => {
    caller = h.caller();
    const businessId = caller.businessId;
    const base = Date.UTC(2025, 0, 1);
    const firstNames = ["Ann", "ann", "Anna", "Bob", "Zoë", "Émile", "Ann"];
    const lastNames = ["Smith", "smith", "Müller", "a_x", "100%", "Young", "Smith", "Taylor"];
    await h.prisma.client.createMany({
      data: Array.from({ length: 40 }, (_, i) => ({
        id: uuidv7(base + i * 1000),
        businessId,
        firstName: firstNames[i % firstNames.length]!,
        lastName: lastNames[i % lastNames.length]!,
        email: i % 3 === 0 ? null : `${String.fromCharCode(97 + (i % 26))}@example.com`,
        notes: i % 4 === 0 ? null : ["a note", "back\\slash", "", "Eve"][i % 4]!,
        isActive: i % 5 !== 0,
        // Every seventh pair shares a timestamp, so the id tie-breaker matters.
        createdAt: new Date(base + (i - (i % 7 === 1 ? 1 : 0)) * 1000),
        updatedAt: new Date(base - 86_400_000 + i * 60_000),
        // Every sixth in the trash (extensions §E5): no list but deleted=include|only sees it.
        deletedAt: i % 6 === 5 ? new Date(base + 86_400_000 + i * 1000) : null,
      })),
    });
    await countSeeded(h, businessId, "client", 40 - 6);
    const clients = await h.prisma.client.findMany({ where: { businessId }, select: { id: true } });
    const statuses = ["DRAFT", "SENT", "PAID", "OVERDUE", "VOID"] as const;
    await h.prisma.invoice.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({
        id: uuidv7(base + i * 1000),
        businessId,
        clientId: clients[i % clients.length]!.id,
        number: `INV-${String(i + 1).padStart(6, "0")}`,
        status: statuses[i % statuses.length]!,
        currency: i % 4 === 0 ? "EUR" : "USD",
        dueDate: i % 3 === 0 ? null : new Date(Date.UTC(2025, 0, 1 + i * 3)),
        notes: i % 2 === 0 ? null : "paid later",
        totalAmount: ((i * 37.25) % 200).toFixed(2),
        createdAt: new Date(base + i * 1000),
      })),
    });
    await countSeeded(h, businessId, "invoice", 30);
    // Another business's rows, which no filter may reach.
    await h.prisma.client.create({ data: { id: uuidv7(), businessId: uuidv7(), firstName: "Ann", lastName: "Smith" } });
  });

  async function expected(
    entity: RecordEntity,
    where: string | undefined,
    orderBy: string | undefined,
    deleted: DeletedMode = "exclude",
  ): Promise<{ ids: string[]; total: number }> {
    const definition = entityDefinitions[entity];
    const spec = querySpecOf(definition);
    const uuidColumns = new Set(
      Object.entries(definition.columns)
        .filter(([, c]) => c.uuid)
        .map(([name]) => name),
    );
    const filter = guardUuidFilters(toPrismaWhere(where === undefined ? undefined : parseWhere(where, spec), spec), uuidColumns);
    const trash = { exclude: { deletedAt: null }, only: { NOT: { deletedAt: null } }, include: {} }[deleted];
    const args = { where: { AND: [{ businessId: caller.businessId }, trash, filter] } };
    const delegate = delegateOf(h.prisma, definition.delegate);
    const rows = await delegate.findMany({ ...args, orderBy: toPrismaOrderBy(parseOrderBy(orderBy, spec)), select: { id: true } });
    return { ids: rows.map((row) => row["id"] as string), total: await delegate.count(args) };
  }

  async function actual(entity: RecordEntity, where: string | undefined, orderBy: string | undefined, deleted?: DeletedMode) {
    const query = new URLSearchParams({
      perPage: "100",
      ...(where ? { where } : {}),
      ...(orderBy ? { orderBy } : {}),
      ...(deleted ? { deleted } : {}),
      include: entity === "client" ? "-contacts" : "client",
    });
    const res = await caller.get(`/${entity}?${query}`);
    expect([where, orderBy, res.status]).toEqual([where, orderBy, 200]);
    return { ids: res.body.data.map((row: { id: string }) => row.id), total: res.body.meta.total };
  }

  const cases = (entity: RecordEntity, wheres: string[], orders: Array<string | undefined>) =>
    [undefined, ...wheres].flatMap((where) => orders.map((orderBy) => [entity, where, orderBy] as const));

  it.each([...cases("client", CLIENT_WHERES, [undefined, "lastName:asc"]), ...cases("client", [], CLIENT_ORDERS)])(
    "%s where=%s orderBy=%s: the same records, order and total as Prisma",
    async (entity, where, orderBy) => {
      expect(await actual(entity, where, orderBy)).toEqual(await expected(entity, where, orderBy));
    },
  );

  it.each([...cases("invoice", INVOICE_WHERES, [undefined, "totalAmount:desc"]), ...cases("invoice", ["NOT:status:VOID"], INVOICE_ORDERS)])(
    "%s where=%s orderBy=%s: the same records, order and total as Prisma",
    async (entity, where, orderBy) => {
      expect(await actual(entity, where, orderBy)).toEqual(await expected(entity, where, orderBy));
    },
  );

  it.each(
    (["exclude", "include", "only"] as const).flatMap((deleted) =>
      [undefined, "isActive:true", "NOT:email:endsWith:.com", "deletedAt:gte:date(2025-01-02)"].flatMap((where) =>
        [undefined, "lastName:asc", "deletedAt:desc"].map((orderBy) => [deleted, where, orderBy] as const),
      ),
    ),
  )("client deleted=%s where=%s orderBy=%s: the same records, order and total as Prisma (extensions §E5)", async (deleted, where, orderBy) => {
    const want = await expected("client", where, orderBy, deleted);
    if (deleted !== "include" && where === undefined) expect(want.total).toBe(deleted === "only" ? 6 : 34);
    expect(await actual("client", where, orderBy, deleted)).toEqual(want);
  });

  it.each(ERRORS)("%s where=%s is %d, as it is for the Prisma arguments", async (entity, where, code) => {
    await expect(expected(entity, where, undefined)).rejects.toBeInstanceOf(AppError);
    const res = await caller.get(`/${entity}?where=${encodeURIComponent(where)}`);
    expect([res.status, res.body.error?.code]).toEqual([400, code]);
  });

  it("pages by offset the same way: page 3 of 7 is rows 15-21 of the whole order", async () => {
    const all = await expected("client", "isActive:true", "lastName:asc,email:desc");
    const res = await caller.get(`/client?where=isActive:true&orderBy=lastName:asc,email:desc&perPage=7&page=3&include=-contacts`).expect(200);
    expect(res.body.data.map((row: { id: string }) => row.id)).toEqual(all.ids.slice(14, 21));
    expect(res.body.meta).toMatchObject({ total: all.total, currentPage: 3 });
  });
}

describe("list SQL vs the Prisma arguments, on PGlite", () => suite("pglite"));
describePostgres("list SQL vs the Prisma arguments, on PostgreSQL", () => suite("postgres"));
