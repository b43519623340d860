// End to end through the public entry point, the way a list endpoint uses the package.
import { paginationMeta, parseListQuery, toPrismaInclude, toPrismaOrderBy, toPrismaWhere, type QuerySpec } from "./index";

const clientSpec: QuerySpec = {
  fields: {
    id: { type: "uuid", nullable: false },
    businessId: { type: "uuid", nullable: false },
    firstName: { type: "string", nullable: false },
    email: { type: "string", nullable: true },
    isActive: { type: "boolean", nullable: false },
    createdAt: { type: "datetime", nullable: false },
    updatedAt: { type: "datetime", nullable: false },
  },
  relations: { contacts: { default: true }, invoices: { default: false }, quotes: { default: false } },
};

describe("@crm/query-language", () => {
  it("turns req.query into Prisma findMany arguments and meta", () => {
    const q = parseListQuery({ page: "2", perPage: "10", where: "isActive:true,NOT:email:endsWith:@spam.test", orderBy: "firstName:asc", include: "invoices" }, clientSpec);
    const args = {
      where: { AND: [{ businessId: "b1" }, toPrismaWhere(q.where, clientSpec)] },
      orderBy: toPrismaOrderBy(q.orderBy),
      include: toPrismaInclude(q.include),
      skip: q.skip,
      take: q.take,
    };
    expect(args).toEqual({
      where: {
        AND: [
          { businessId: "b1" },
          {
            AND: [{ isActive: { equals: true } }, { OR: [{ email: null }, { NOT: { email: { endsWith: "@spam.test", mode: "insensitive" } } }] }],
          },
        ],
      },
      orderBy: [{ firstName: "asc" }, { id: "asc" }],
      include: { contacts: true, invoices: true },
      skip: 10,
      take: 10,
    });
    expect(paginationMeta(23, q.page, q.perPage)).toEqual({ total: 23, lastPage: 3, currentPage: 2, perPage: 10, prev: 1, next: 3 });
  });
});
